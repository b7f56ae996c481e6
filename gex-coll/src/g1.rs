//! The GASNet-1 split-phase barrier over the whole job
//! (`gasnet_barrier_notify`, `gasnet_barrier_wait`, `gasnet_barrier_try`;
//! GASNet-1 spec, "Barriers").
//!
//! Each rank notifies with a value: anonymous, named (an `id`), or
//! "mismatch" (the `MISMATCH` flag). The values of all ranks are merged:
//! anonymous ones match anything, two named ones match if their ids are
//! equal, and anything else is a mismatch. The wait (or a successful try)
//! then reports `GASNET_ERR_BARRIER_MISMATCH` when some rank passed
//! `MISMATCH`, when two ranks passed different named ids, or when the wait
//! is named and its id differs from the merged name. As in the reference
//! (since GASNet 1.20), the wait's flags may differ from the notify's: an
//! anonymous notify may be followed by a named wait and the other way
//! round. [`barrier_result`] reports the merged value of the last completed
//! barrier.
//!
//! Two implementations, chosen once at init for the whole job:
//!
//! - Shared memory, when every rank shares one neighbourhood: a rank
//!   stores its value, then its episode number (release), in its own slot
//!   of the shared area; the barrier is complete when every slot shows the
//!   episode (acquire), and the merged value is read from the slots.
//!   Values alternate between two cells by episode parity: no rank can be
//!   two episodes ahead of another, so a cell is never overwritten while it
//!   may still be read.
//! - Otherwise a dissemination all-reduce of the value over Active
//!   Messages (see `crate::am::algos::Dissem`).
//!
//! The wait spins on the barrier while polling, yielding the core when the
//! host is oversubscribed (`Runtime::spin_until`).
//!
//! Layer: public forms. Uses the engine, the AM mechanism (its
//! dissemination barrier) and the shared area.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use gex_core::{context, Runtime};
use gex_types::{Error, ErrorKind, Rank, Result};

use crate::am::algos::Dissem;
use crate::area;
use crate::engine::{lock, signature, Op};

/// `GASNET_BARRIERFLAGS_ANONYMOUS`: the barrier has no name; `id` is
/// ignored.
pub const BARRIERFLAG_ANONYMOUS: i32 = 1;
/// `GASNET_BARRIERFLAGS_MISMATCH`: force `GASNET_ERR_BARRIER_MISMATCH` on
/// every rank's wait (a mismatch detected locally).
pub const BARRIERFLAG_MISMATCH: i32 = 2;
/// `GASNET_BARRIERFLAG_UNNAMED`: anonymous, with the promise that no rank
/// names this barrier (the reference's value, `ANONYMOUS` plus bit 8; gex
/// runs it as an anonymous one).
pub const BARRIERFLAG_UNNAMED: i32 = BARRIERFLAG_ANONYMOUS | 8;

const KIND_ANON: u64 = 0;
const KIND_NAMED: u64 = 1;
const KIND_MISMATCH: u64 = 2;

/// The id of the pseudo-team the AM implementation keys its operations by.
const G1_TEAM: u64 = u64::MAX;

fn value(id: i32, flags: i32) -> u64 {
    if flags & BARRIERFLAG_MISMATCH != 0 {
        KIND_MISMATCH << 32
    } else if flags & BARRIERFLAG_ANONYMOUS != 0 {
        KIND_ANON << 32
    } else {
        (KIND_NAMED << 32) | u64::from(id as u32)
    }
}

/// Merges two barrier values (commutative, associative, idempotent).
pub(crate) fn merge(a: u64, b: u64) -> u64 {
    match (a >> 32, b >> 32) {
        (KIND_MISMATCH, _) | (_, KIND_MISMATCH) => KIND_MISMATCH << 32,
        (KIND_ANON, _) => b,
        (_, KIND_ANON) => a,
        _ if a == b => a,
        _ => KIND_MISMATCH << 32,
    }
}

/// How this job runs the barrier (the same on every rank).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A single-rank job: complete at notify.
    Single,
    /// Shared memory.
    Shm,
    /// Active Messages.
    Am,
}

fn kind_of(rt: &Runtime) -> Kind {
    if rt.jobsize() == 1 {
        Kind::Single
    } else if area::area().is_some_and(|a| a.whole_job()) {
        Kind::Shm
    } else {
        Kind::Am
    }
}

/// The phase of this rank's barrier, in atomics: the shared-memory path
/// takes no lock, because an atomic read-modify-write after the notify's
/// store would wait for that store's cache line to be owned again, a
/// cache-line transfer added to every barrier. The spec allows one thread
/// at a time in these calls; with atomics, misuse gives wrong answers, not
/// undefined behaviour.
struct Phase {
    notified: AtomicBool,
    /// The last episode notified on the shared-memory path.
    shm_seq: AtomicU64,
}

static PHASE: Phase = Phase {
    notified: AtomicBool::new(false),
    shm_seq: AtomicU64::new(0),
};

/// The single-rank value or the AM operation of the notified barrier.
#[derive(Default)]
struct Slow {
    value: u64,
    op: Option<(Arc<Op>, Arc<AtomicU64>)>,
    /// Operations started on the AM path.
    am_seq: u32,
}

static SLOW: LazyLock<Mutex<Slow>> = LazyLock::new(Default::default);
static EVERYONE: LazyLock<Arc<[Rank]>> = LazyLock::new(|| {
    let n = Runtime::get().map_or(1, |rt| rt.jobsize());
    (0..n).collect()
});

fn check_flags(call: &str, flags: i32) -> Result<()> {
    if flags & !(BARRIERFLAG_UNNAMED | BARRIERFLAG_MISMATCH) != 0
        || (flags & (BARRIERFLAG_UNNAMED & !BARRIERFLAG_ANONYMOUS) != 0
            && flags & BARRIERFLAG_ANONYMOUS == 0)
    {
        return Err(Error::bad_arg(format!(
            "{call}: flags {flags:#x} are not a combination of GASNET_BARRIERFLAG_ANONYMOUS (or _UNNAMED) and _MISMATCH"
        )));
    }
    Ok(())
}

/// The merged value of the last completed barrier (a wait, or a try that
/// succeeded), for [`barrier_result`]; anonymous before the first.
static LAST: AtomicU64 = AtomicU64::new(KIND_ANON << 32);

/// Notifies the barrier (`gasnet_barrier_notify`): non-blocking. `flags`:
/// 0 (named `id`), [`BARRIERFLAG_ANONYMOUS`] or [`BARRIERFLAG_UNNAMED`], or
/// [`BARRIERFLAG_MISMATCH`].
/// A second notify before the wait is a fatal error, as the spec says: the
/// job ends (`gex::fatal`) with a message naming the call.
/// Collective over the job; one thread at a time, per the spec.
pub fn barrier_notify(id: i32, flags: i32) -> Result<()> {
    const CALL: &str = "gasnet_barrier_notify";
    context::check_may_communicate(CALL)?;
    check_flags(CALL, flags)?;
    let rt = Runtime::require(CALL)?;
    if PHASE.notified.load(Ordering::Relaxed) {
        gex_core::fatal(&format!(
            "{CALL}: called twice without a gasnet_barrier_wait (or successful try) in between"
        ));
    }
    let v = value(id, flags);
    match kind_of(rt) {
        Kind::Single => lock(&SLOW).value = v,
        Kind::Shm => {
            let s = PHASE.shm_seq.load(Ordering::Relaxed) + 1;
            PHASE.shm_seq.store(s, Ordering::Relaxed);
            PHASE.notified.store(true, Ordering::Relaxed);
            let area = area::area().expect("Kind::Shm");
            let slot = &area.slots()[rt.jobrank() as usize];
            slot.val[(s & 1) as usize].store(v, Ordering::Relaxed);
            // Release: the value, and every write of this thread before the
            // notify, are visible to whoever sees the episode number.
            slot.seq.store(s, Ordering::Release);
            return Ok(());
        }
        Kind::Am => {
            let key = {
                let mut sl = lock(&SLOW);
                let k = (G1_TEAM, sl.am_seq);
                sl.am_seq = sl.am_seq.wrapping_add(1);
                k
            };
            let result = Arc::new(AtomicU64::new(0));
            let op = Op::start(
                key,
                signature("gasnet_barrier", &[]),
                CALL,
                Box::new(Dissem::new(
                    EVERYONE.clone(),
                    rt.jobrank(),
                    v,
                    merge,
                    result.clone(),
                )),
            );
            lock(&SLOW).op = Some((op, result));
        }
    }
    PHASE.notified.store(true, Ordering::Relaxed);
    Ok(())
}

/// Whether every rank has notified episode `s`; the merged value if so.
fn shm_result(s: u64, from: &mut usize) -> Option<u64> {
    let slots = area::area()
        .expect("the shared-memory path was chosen")
        .slots();
    while *from < slots.len() {
        // Acquire: pairs with the release store of the episode number.
        if slots[*from].seq.load(Ordering::Acquire) < s {
            return None;
        }
        *from += 1;
    }
    let p = (s & 1) as usize;
    Some(slots.iter().fold(KIND_ANON << 32, |acc, sl| {
        merge(acc, sl.val[p].load(Ordering::Relaxed))
    }))
}

/// Waits for a shared-memory episode (the shared-memory collectives' one
/// wait, [`crate::area::wait_until`]).
fn shm_wait(rt: &Runtime, from: &mut usize) -> u64 {
    let mut v = None;
    crate::area::wait_until(rt, || {
        v = complete(Kind::Shm, from);
        v.is_some()
    });
    v.expect("complete")
}

/// The merged value if every rank has notified the current barrier.
fn complete(kind: Kind, from: &mut usize) -> Option<u64> {
    match kind {
        Kind::Single => Some(lock(&SLOW).value),
        Kind::Shm => shm_result(PHASE.shm_seq.load(Ordering::Relaxed), from),
        Kind::Am => {
            let sl = lock(&SLOW);
            let (op, r) = sl.op.as_ref().expect("notified on the AM path");
            op.is_complete().then(|| r.load(Ordering::Acquire))
        }
    }
}

fn mismatch(msg: String) -> Error {
    Error::new(ErrorKind::BarrierMismatch, msg)
}

/// The wait's verdict on the merged value (the notify's own value is part
/// of it): the wait's flags may differ from the notify's.
fn outcome(call: &str, id: i32, flags: i32, merged: u64) -> Result<()> {
    LAST.store(merged, Ordering::Relaxed);
    if merged >> 32 == KIND_MISMATCH || flags & BARRIERFLAG_MISMATCH != 0 {
        return Err(mismatch(format!(
            "{call}: ranks notified with different ids, or some rank passed GASNET_BARRIERFLAG_MISMATCH"
        )));
    }
    if flags & BARRIERFLAG_ANONYMOUS == 0
        && merged >> 32 == KIND_NAMED
        && merged as u32 != id as u32
    {
        return Err(mismatch(format!(
            "{call}: id {id} differs from the barrier's name {}",
            merged as u32 as i32
        )));
    }
    Ok(())
}

/// The last completed barrier's name (`gasnet_barrier_result`): `Some(id)`
/// if some rank named it (every named rank with `id`), `None` if every rank
/// was anonymous (or the barrier mismatched). Local.
pub fn barrier_result() -> Option<i32> {
    let v = LAST.load(Ordering::Relaxed);
    (v >> 32 == KIND_NAMED).then_some(v as u32 as i32)
}

/// A blocking barrier (`gasnet_barrier`): [`barrier_notify`] then
/// [`barrier_wait`] with the same id and flags.
pub fn barrier_blocking(id: i32, flags: i32) -> Result<()> {
    barrier_notify(id, flags)?;
    barrier_wait(id, flags)
}

/// Checks that a notify is pending: a wait or try with none (none since
/// the program began, or the last one already ended by a wait or a
/// successful try) is a fatal error in the spec: the job ends.
fn notified(call: &str) {
    if !PHASE.notified.load(Ordering::Relaxed) {
        gex_core::fatal(&format!(
            "{call}: no gasnet_barrier_notify precedes it (since the start or the last wait or successful try)"
        ));
    }
}

/// Ends the barrier phase (after a wait or a successful try).
fn reset() {
    lock(&SLOW).op = None;
    PHASE.notified.store(false, Ordering::Relaxed);
}

/// Waits for the barrier (`gasnet_barrier_wait`): returns once every rank
/// has notified; `Err` of kind `BarrierMismatch` as the spec says (see the
/// module docs). Calling it without a notify is a fatal error.
pub fn barrier_wait(id: i32, flags: i32) -> Result<()> {
    const CALL: &str = "gasnet_barrier_wait";
    context::check_may_communicate(CALL)?;
    check_flags(CALL, flags)?;
    let rt = Runtime::require(CALL)?;
    notified(CALL);
    let kind = kind_of(rt);
    let mut from = 0;
    let merged = match complete(kind, &mut from) {
        Some(v) => v,
        None if kind == Kind::Shm => shm_wait(rt, &mut from),
        None => {
            let mut got = None;
            rt.spin_until(|| {
                got = complete(kind, &mut from);
                got.is_some()
            });
            got.expect("spin_until returned")
        }
    };
    if kind == Kind::Shm {
        PHASE.notified.store(false, Ordering::Relaxed);
    } else {
        reset();
    }
    outcome(CALL, id, flags, merged)
}

/// Tries the barrier (`gasnet_barrier_try`): polls once; if every rank has
/// notified, behaves as [`barrier_wait`]; otherwise returns `Err` of kind
/// `NotReady` and the barrier stays notified.
pub fn barrier_try(id: i32, flags: i32) -> Result<()> {
    const CALL: &str = "gasnet_barrier_try";
    context::check_may_communicate(CALL)?;
    check_flags(CALL, flags)?;
    let rt = Runtime::require(CALL)?;
    notified(CALL);
    let kind = kind_of(rt);
    rt.progress();
    let Some(merged) = complete(kind, &mut 0) else {
        return Err(Error::not_ready(format!(
            "{CALL}: not every rank has notified yet"
        )));
    };
    reset();
    outcome(CALL, id, flags, merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_follows_the_spec() {
        let a = value(7, BARRIERFLAG_ANONYMOUS);
        let n5 = value(5, 0);
        let n6 = value(6, 0);
        let m = value(5, BARRIERFLAG_MISMATCH);
        let mm = KIND_MISMATCH << 32;
        assert_eq!(merge(a, a), a);
        assert_eq!(merge(a, n5), n5);
        assert_eq!(merge(n5, a), n5);
        assert_eq!(merge(n5, n5), n5);
        assert_eq!(merge(n5, n6), mm);
        assert_eq!(merge(m, a) >> 32, KIND_MISMATCH);
        assert_eq!(merge(n5, m) >> 32, KIND_MISMATCH);
        assert_eq!(value(-1, 0) & 0xffff_ffff, 0xffff_ffff);
        // Associative and commutative over every triple of these values.
        let vals = [a, n5, n6, m, value(-1, 0)];
        for &x in &vals {
            for &y in &vals {
                assert_eq!(merge(x, y), merge(y, x));
                for &z in &vals {
                    assert_eq!(merge(merge(x, y), z), merge(x, merge(y, z)));
                }
            }
        }
    }

    #[test]
    fn outcomes() {
        let k = |r: Result<()>| r.unwrap_err().kind();
        // A named wait matches the merged name, whatever the notify was.
        assert!(outcome("w", 3, 0, value(3, 0)).is_ok());
        assert_eq!(barrier_result(), Some(3));
        assert_eq!(
            k(outcome("w", 4, 0, value(3, 0))),
            ErrorKind::BarrierMismatch
        );
        // An anonymous wait ignores the id, and may follow a named notify.
        assert!(outcome("w", 99, BARRIERFLAG_ANONYMOUS, value(3, 0)).is_ok());
        assert!(outcome("w", 99, BARRIERFLAG_UNNAMED, value(3, 0)).is_ok());
        // A named wait after anonymous notifies everywhere: nothing to
        // differ from.
        assert!(outcome("w", 5, 0, value(0, BARRIERFLAG_ANONYMOUS)).is_ok());
        assert_eq!(barrier_result(), None);
        assert_eq!(
            k(outcome("w", 3, 0, KIND_MISMATCH << 32)),
            ErrorKind::BarrierMismatch
        );
        assert_eq!(barrier_result(), None);
        assert_eq!(
            k(outcome("w", 3, BARRIERFLAG_MISMATCH, value(3, 0))),
            ErrorKind::BarrierMismatch
        );
        // Negative ids round-trip.
        assert!(outcome("w", -7, 0, value(-7, 0)).is_ok());
        assert_eq!(barrier_result(), Some(-7));
    }

    #[test]
    fn flags_accepted() {
        for f in [
            0,
            BARRIERFLAG_ANONYMOUS,
            BARRIERFLAG_UNNAMED,
            BARRIERFLAG_MISMATCH,
            BARRIERFLAG_ANONYMOUS | BARRIERFLAG_MISMATCH,
        ] {
            assert!(check_flags("n", f).is_ok(), "{f:#x}");
        }
        for f in [4, 8, 0x10, BARRIERFLAG_UNNAMED | 4, -1] {
            assert!(check_flags("n", f).is_err(), "{f:#x}");
        }
        assert_eq!(
            value(1, BARRIERFLAG_UNNAMED),
            value(2, BARRIERFLAG_ANONYMOUS)
        );
    }
}
