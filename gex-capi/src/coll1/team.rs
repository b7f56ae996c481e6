//! The team side of the GASNet-1 collectives (`gasnet_coll.h`):
//! `GASNET_TEAM_ALL`, the team barrier `gasnet_coll_barrier_{notify,wait,try}`
//! and `gasnet_coll_init`.
//!
//! Over the primordial team the barrier is the GASNet-1 barrier: the calls
//! are `gasnet_barrier_{notify,wait,try}` ([`crate::g1`]). Over any other
//! team it is an all-reduce (bit-wise OR of one `u64` per member,
//! `gex::coll::reduce_to_all_nb`) started by the notify: a named member
//! contributes its id in the low half and the id's complement in the high
//! half, an anonymous one 0, and one passing `GASNET_BARRIERFLAG_MISMATCH`
//! all ones. In the result, the named ids all agree exactly when no bit is
//! set in both halves; some member named the barrier exactly when the
//! halves together are all ones, and the low half is then the name. The
//! wait or a successful try decides as the GASNet-1 barrier does (the
//! reference's rules, module `gex_coll::g1`): a mismatch when the ids
//! disagree, some member passed `MISMATCH` (or the wait does), or the wait
//! is named and the barrier has another name; the wait's flags may differ
//! from the notify's. `gasnet_coll_barrier_result` reports the name of a
//! team's last completed barrier, as `gasnet_barrier_result` does for the
//! primordial team.

use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::{LazyLock, Mutex, MutexGuard, PoisonError};

use gex::coll::{CollHandle, ReduceOp};
use gex::{Error, ErrorKind, Op};

use crate::types::*;

/// `GASNET_BARRIERFLAG_ANONYMOUS` and `GASNET_BARRIERFLAG_MISMATCH`.
const ANONYMOUS: c_int = gex::coll::BARRIERFLAG_ANONYMOUS;
const MISMATCH: c_int = gex::coll::BARRIERFLAG_MISMATCH;
/// `GASNET_BARRIERFLAG_UNNAMED`: anonymous, with the promise that no member
/// names the barrier; run as an anonymous one.
const UNNAMED: c_int = gex::coll::BARRIERFLAG_UNNAMED;

/// `GASNET_TEAM_ALL`: the primordial team, NULL before initialisation.
#[no_mangle]
pub extern "C" fn _gex_coll_team_all() -> gex_TM_t {
    crate::core::primordial_tm().unwrap_or(std::ptr::null_mut())
}

/// Whether `team` is the primordial team (whose barrier is GASNet-1's).
fn is_all(team: gex_TM_t, call: &str) -> bool {
    if team.is_null() {
        gex::fatal(&format!(
            "{call}: the team is NULL (GASNET_TEAM_ALL before initialisation?)"
        ));
    }
    crate::core::primordial_tm() == Some(team)
}

fn check_flags(flags: c_int, call: &str) -> Result<(), Error> {
    if flags & !(UNNAMED | MISMATCH) != 0
        || (flags & (UNNAMED & !ANONYMOUS) != 0 && flags & ANONYMOUS == 0)
    {
        return Err(Error::bad_arg(format!(
            "{call}: flags {flags:#x} are not a combination of GASNET_BARRIERFLAG_ANONYMOUS (or _UNNAMED) and _MISMATCH"
        )));
    }
    Ok(())
}

/// A notified barrier over a team other than the primordial one.
struct Pending {
    /// The all-reduce; taken (completed or dropped) before `buf` is freed.
    h: Option<CollHandle<'static>>,
    /// `[contribution, result]`, from `Box::into_raw`, borrowed by `h`.
    buf: *mut [u64; 2],
}

// SAFETY: `buf` is owned by this record alone (the handle's borrow of it
// ends with the handle, which the record owns), and `CollHandle` is `Send`.
unsafe impl Send for Pending {}

impl Pending {
    /// The merged value (once `h` completed).
    fn merged(&self) -> u64 {
        // SAFETY: `buf` is live until drop; the handle no longer writes it.
        unsafe { (*self.buf)[1] }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        // The handle first: it borrows `buf`.
        drop(self.h.take());
        // SAFETY: from `Box::into_raw` in `notify`, freed once, here.
        drop(unsafe { Box::from_raw(self.buf) });
    }
}

/// Notified barriers, by team handle.
static PENDING: LazyLock<Mutex<HashMap<usize, Pending>>> = LazyLock::new(Default::default);

fn pending() -> MutexGuard<'static, HashMap<usize, Pending>> {
    PENDING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The merged value of each team's last completed barrier.
static LAST: LazyLock<Mutex<HashMap<usize, u64>>> = LazyLock::new(Default::default);

/// The name in a merged value: `Some` if some member named the barrier
/// and the names agreed.
fn name_of(v: u64) -> Option<c_int> {
    let (low, high) = (v & 0xffff_ffff, v >> 32);
    (low & high == 0 && low | high != 0).then_some(low as u32 as c_int)
}

fn contribution(id: c_int, flags: c_int) -> u64 {
    if flags & MISMATCH != 0 {
        u64::MAX
    } else if flags & ANONYMOUS != 0 {
        0
    } else {
        let id = u64::from(id as u32);
        id | ((!id & 0xffff_ffff) << 32)
    }
}

/// The verdict of a completed barrier on `team` for a wait with `id` and
/// `flags`; records its value for `gasnet_coll_barrier_result`.
fn outcome(team: gex_TM_t, p: &Pending, id: c_int, flags: c_int, call: &str) -> Result<(), Error> {
    let mismatch = |m: String| Err(Error::new(ErrorKind::BarrierMismatch, m));
    let v = p.merged();
    LAST.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(team as usize, v);
    if v & (v >> 32) & 0xffff_ffff != 0 || flags & MISMATCH != 0 {
        return mismatch(format!(
            "{call}: members notified with different ids, or one passed GASNET_BARRIERFLAG_MISMATCH"
        ));
    }
    match name_of(v) {
        Some(name) if flags & ANONYMOUS == 0 && name != id => mismatch(format!(
            "{call}: id {id} differs from the barrier's name {name}"
        )),
        _ => Ok(()),
    }
}

/// The record of `team`'s notified barrier, or the end of the job.
fn take(team: gex_TM_t, call: &str) -> Pending {
    pending().remove(&(team as usize)).unwrap_or_else(|| {
        gex::fatal(&format!(
            "{call}: no gasnet_coll_barrier_notify on this team precedes it"
        ))
    })
}

/// `gasnet_coll_barrier_notify`.
#[no_mangle]
pub unsafe extern "C" fn gasnet_coll_barrier_notify(team: gex_TM_t, id: c_int, flags: c_int) {
    const CALL: &str = "gasnet_coll_barrier_notify";
    if is_all(team, CALL) {
        return crate::g1::gasnet_barrier_notify(id, flags);
    }
    or_fatal(check_flags(flags, CALL));
    // SAFETY: a non-NULL team handle of this library (caller's contract).
    let t = unsafe { crate::types::team(team, CALL) };
    let mut map = pending();
    if map.contains_key(&(team as usize)) {
        gex::fatal(&format!(
            "{CALL}: called twice on a team without a gasnet_coll_barrier_wait (or successful try) in between"
        ));
    }
    let buf = Box::into_raw(Box::new([contribution(id, flags), 0u64]));
    let mut p = Pending { h: None, buf };
    // SAFETY: `buf` stays allocated until the record's drop, after the
    // handle that borrows it; nothing else touches it meanwhile.
    let (src, dst) = unsafe { (*buf).split_at_mut(1) };
    let or = ReduceOp::Builtin(Op::Or);
    match gex::coll::reduce_to_all_nb_typed::<u64>(t, dst, Some(src), &or, gex::Flags::empty()) {
        Ok(h) => p.h = Some(h),
        Err(e) => {
            drop(p);
            gex::fatal(&e.to_string())
        }
    }
    map.insert(team as usize, p);
}

/// `gasnet_coll_barrier_wait`: `GASNET_OK` or `GASNET_ERR_BARRIER_MISMATCH`.
#[no_mangle]
pub unsafe extern "C" fn gasnet_coll_barrier_wait(
    team: gex_TM_t,
    id: c_int,
    flags: c_int,
) -> c_int {
    const CALL: &str = "gasnet_coll_barrier_wait";
    if is_all(team, CALL) {
        return crate::g1::gasnet_barrier_wait(id, flags);
    }
    if let Err(e) = check_flags(flags, CALL) {
        return rc(Err(e));
    }
    let mut p = take(team, CALL);
    if let Some(h) = p.h.take() {
        or_fatal(h.wait());
    }
    rc(outcome(team, &p, id, flags, CALL))
}

/// `gasnet_coll_barrier_try`: as the wait once every member has notified,
/// otherwise `GASNET_ERR_NOT_READY` (the barrier stays notified).
#[no_mangle]
pub unsafe extern "C" fn gasnet_coll_barrier_try(team: gex_TM_t, id: c_int, flags: c_int) -> c_int {
    const CALL: &str = "gasnet_coll_barrier_try";
    if is_all(team, CALL) {
        return crate::g1::gasnet_barrier_try(id, flags);
    }
    if let Err(e) = check_flags(flags, CALL) {
        return rc(Err(e));
    }
    let mut p = take(team, CALL);
    let done = match p.h.as_mut() {
        Some(h) => or_fatal(h.test()),
        None => true,
    };
    if !done {
        pending().insert(team as usize, p);
        return rc(Err(Error::not_ready(format!(
            "{CALL}: not every member has notified yet"
        ))));
    }
    p.h = None;
    rc(outcome(team, &p, id, flags, CALL))
}

/// `gasnet_coll_barrier_result`: 0 with the name of `team`'s last
/// completed barrier in `*id` if some member named it, non-zero (and `*id`
/// untouched) if every member was anonymous, it mismatched, or none
/// completed yet.
#[no_mangle]
pub unsafe extern "C" fn gasnet_coll_barrier_result(team: gex_TM_t, id: *mut c_int) -> c_int {
    const CALL: &str = "gasnet_coll_barrier_result";
    if is_all(team, CALL) {
        // SAFETY: caller's contract (a writable `id`).
        return unsafe { crate::g1::gasnet_barrier_result(id) };
    }
    let last = LAST
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&(team as usize))
        .copied();
    match last.and_then(name_of) {
        Some(name) => {
            if id.is_null() {
                gex::fatal(&format!("{CALL}: id is NULL"));
            }
            // SAFETY: checked non-NULL; writable (caller's contract).
            unsafe { *id = name };
            0
        }
        None => 1,
    }
}

/// `gasnet_coll_init`: nothing to set up; checks that the arguments ask
/// for what gex provides (one image per process, no GASNet-1 reduction
/// functions).
///
/// # Safety
/// A non-NULL `images` has one entry per job rank.
#[no_mangle]
pub unsafe extern "C" fn gasnet_coll_init(
    images: *const u32,
    my_image: u32,
    _fn_tbl: *mut std::ffi::c_void,
    fn_count: usize,
    init_flags: c_int,
) {
    const CALL: &str = "gasnet_coll_init";
    let Some(tm) = crate::core::primordial_tm() else {
        gex::fatal(&format!("{CALL}: called before initialisation"));
    };
    if init_flags != 0 {
        gex::fatal(&format!(
            "{CALL}: init_flags must be 0, not {init_flags:#x}"
        ));
    }
    if fn_count != 0 {
        gex::fatal(&format!(
            "{CALL}: gex has no GASNet-1 reduce or scan, so no reduction functions ({fn_count} given); use gex_Coll_ReduceToOneNB / gex_Coll_ReduceToAllNB"
        ));
    }
    if images.is_null() {
        return;
    }
    // SAFETY: the primordial team's handle.
    let t = unsafe { crate::types::team(tm, CALL) };
    // SAFETY: one entry per job rank (caller's contract).
    let imgs = unsafe { std::slice::from_raw_parts(images, t.size() as usize) };
    if let Some(r) = imgs.iter().position(|&k| k != 1) {
        gex::fatal(&format!(
            "{CALL}: rank {r} has {} images; gex runs one image per process",
            imgs[r]
        ));
    }
    if my_image != t.rank() {
        gex::fatal(&format!(
            "{CALL}: my_image {my_image} is not this process's image {} (one image per process)",
            t.rank()
        ));
    }
}
