//! The non-blocking collectives (`gex_Coll_*NB`) and the extra data
//! movement collectives of the design notes, in the EX style: one team,
//! non-blocking, a [`CollHandle`]; and a blocking form of each.
//!
//! Common rules (spec "Collectives (Coll)"):
//!
//! - Every call is collective over the team: every member makes the same
//!   sequence of collective calls over it. Calls over different teams are
//!   independent, and any number may be in flight at once; each progresses
//!   while the caller waits on any of them (or on anything else).
//! - Single-valued arguments (documented per call) must agree on every
//!   member; a disagreement that shows in the messages (a different
//!   collective, root, size, type or operator) ends the job with a message
//!   naming the call, rather than corrupting data.
//! - `flags`: the barrier takes none. The data-movement collectives take
//!   at most one `Flags::COLL_IN_{NO,MY,ALL}SYNC` and one
//!   `Flags::COLL_OUT_{NO,MY,ALL}SYNC` (the design notes' sync modes;
//!   none means MYSYNC), single-valued; what each costs is in the `sync`
//!   module's notes (ARCHITECTURE.md, "Collectives"). They also take the
//!   segment hints `Flags::COLL_DST_IN_SEGMENT` / `COLL_SRC_IN_SEGMENT`
//!   (LOCAL mode; see [`crate::Addrs`] and the `*_with` calls).
//! - Buffers are borrowed until the handle completes. Output goes to a
//!   buffer owned by the library and is copied into `dst` by the thread
//!   that observes completion (test or wait), so a leaked handle never
//!   leaves the library writing into freed memory. Inputs are copied (into
//!   messages, or the library's accumulator) during initiation.
//! - Completion of the handle means: inputs are no longer needed, outputs
//!   are in place and readable by the thread that synced it, and this
//!   member's part of the data movement is done. Nothing is implied about
//!   other members (except for the barrier).
//! - Calls from handler context or holding an HSL return an error.
//! - The handle is `Send`: any thread may sync it (one at a time), not
//!   only the initiator; any number may be outstanding.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use gex_core::{context, Staging, Tm};
use gex_types::{Dt, Error, Flags, Rank, Result};

use crate::algos::{am_bcast, AllReduceRd, Collect, CollectSink, Reduce, ReduceKind};
use crate::engine::{hash_id, send_now, sig_extra, signature, with_sig_extra, Key, Logic, Op, Out};
use crate::handle::{CollHandle, Finish};
use crate::hier;
use crate::hierx;
use crate::reduce::{as_bytes, as_bytes_mut, combine, validate, Elem, ReduceOp};
use crate::seg::{self, Addrs};
use crate::shmdata::{self, Readers};
use crate::shmsmall::{self, Pat};
use crate::sync::{self, SyncMode};
use crate::team::{barrier_event, team_ref, TeamInfo};

fn check_flags(call: &str, flags: Flags) -> Result<()> {
    if flags.is_empty() {
        Ok(())
    } else {
        Err(Error::bad_arg(format!(
            "{call}: the barrier takes no flags; got {flags:?}"
        )))
    }
}

pub(crate) fn check_root(call: &str, root: Rank, t: &TeamInfo) -> Result<()> {
    if root < t.size() {
        Ok(())
    } else {
        Err(Error::bad_arg(format!(
            "{call}: root {root} is not a rank of the team (size {})",
            t.size()
        )))
    }
}

pub(crate) fn check_len(call: &str, what: &str, got: usize, want: usize) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(Error::bad_arg(format!(
            "{call}: {what} is {got} bytes, {want} expected"
        )))
    }
}

/// Messages carry 32-bit offsets and lengths.
pub(crate) fn check_size(call: &str, nbytes: usize) -> Result<()> {
    if nbytes <= u32::MAX as usize {
        Ok(())
    } else {
        Err(Error::bad_arg(format!(
            "{call}: {nbytes} bytes exceed the 4 GiB a collective moves in one call"
        )))
    }
}

/// The checks every data-movement collective starts with; its team
/// (borrowed from `tm`: no reference count is taken, since a locked
/// increment and decrement per call would wait for the call's stores to
/// shared memory to drain) and sync mode.
pub(crate) fn begin<'t>(
    call: &str,
    tm: &'t Tm,
    flags: Flags,
) -> Result<(&'t Arc<TeamInfo>, SyncMode)> {
    context::check_may_communicate(call)?;
    let mode = sync::parse(call, flags)?;
    Ok((team_ref(tm, call)?, mode))
}

/// `OUT_ALLSYNC`: the key of the closing barrier, reserved right after the
/// operation's own.
pub(crate) fn out_key(t: &Arc<TeamInfo>, mode: SyncMode) -> Option<(Arc<TeamInfo>, Key)> {
    (mode.out_all && t.size() > 1).then(|| (t.clone(), t.next_key()))
}

/// The handle, with the closing barrier of `OUT_ALLSYNC` if reserved.
pub(crate) fn fin<'a>(h: CollHandle<'a>, out: Option<(Arc<TeamInfo>, Key)>) -> CollHandle<'a> {
    match out {
        Some((t, key)) => h.then_out_barrier(t, key),
        None => h,
    }
}

/// Non-blocking barrier over `tm` (`gex_Coll_BarrierNB`): the handle
/// completes only after every member has initiated the barrier.
///
/// Initiation is a release and synchronization an acquire: memory writes
/// of the calling thread (and GASNet operations it synchronized) before the
/// call are visible to every member's thread after it syncs its handle.
/// When every member shares this process's neighbourhood, each member
/// stores a counter in shared memory and the barrier completes (in the
/// progress hook of whichever thread waits or tests) once every member's
/// counter has moved; otherwise dissemination over Active Messages:
/// `ceil(log2 n)` rounds of one message per member. `INVALID` if complete
/// at initiation. `flags` must be empty.
pub fn barrier_nb(tm: &Tm, flags: Flags) -> Result<CollHandle<'static>> {
    const CALL: &str = "gex_Coll_BarrierNB";
    context::check_may_communicate(CALL)?;
    check_flags(CALL, flags)?;
    Ok(barrier_event(team_ref(tm, CALL)?, CALL))
}

/// Whether barriers over `tm` use shared memory (every member shares this
/// process's neighbourhood, the areas are in use, and the team got a
/// channel) rather than Active Messages. The same answer on every member.
/// A query: allowed anywhere.
pub fn barrier_uses_shared_memory(tm: &Tm) -> Result<bool> {
    Ok(team_ref(tm, "barrier_uses_shared_memory")?.uses_shared_memory())
}

/// Blocking barrier over `tm`: [`barrier_nb`] and a wait.
pub fn barrier(tm: &Tm, flags: Flags) -> Result<()> {
    barrier_nb(tm, flags)?.wait()
}

/// Broadcast (`gex_Coll_BroadcastNB`): `dst.len()` bytes from the root's
/// source to `dst` on every member, down a binomial tree; chunks are
/// forwarded as they arrive.
///
/// - `root` and `dst.len()` (the spec's `nbytes`) are single-valued.
/// - On the root, `src` is `Some(data)` of `dst.len()` bytes, copied to
///   `dst`, or `None` when the data is already in `dst` (the spec's
///   `src == dst`). Elsewhere `src` is ignored.
pub fn broadcast_nb<'a>(
    tm: &Tm,
    root: Rank,
    dst: &'a mut [u8],
    src: Option<&'a [u8]>,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    bcast_entry(tm, root, dst, src, flags)
}

/// [`broadcast_nb`]'s body, inlined into it and into the blocking
/// [`broadcast`]: there the handle (complete, on the common path) never
/// travels through memory, whose reload right after the root's write to
/// its slot line could not be forwarded and so waited for that line to
/// come back from the reader (PERFORMANCE.md, "Collectives").
#[inline(always)]
fn bcast_entry<'a>(
    tm: &Tm,
    root: Rank,
    dst: &'a mut [u8],
    src: Option<&'a [u8]>,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_BroadcastNB";
    if flags.intersects(seg::HINTS) {
        // Segment hints: the one-sided algorithms (`crate::seg`).
        return seg::broadcast_nb_with(tm, root, dst, src, Addrs::Local, flags);
    }
    let (t, mode) = begin(CALL, tm, flags)?;
    check_root(CALL, root, t)?;
    let nbytes = dst.len();
    check_size(CALL, nbytes)?;
    let me = t.me;
    if me == root {
        if let Some(s) = src {
            check_len(CALL, "src", s.len(), nbytes)?;
        }
    }
    if mode.in_all {
        sync::enter_all(t, Some(root), CALL);
    }
    if let Some(h) = t.hier() {
        if me == root {
            if let Some(s) = src {
                dst.copy_from_slice(s);
            }
        }
        return hier::broadcast(t, h, mode, root, dst);
    }
    Ok(bcast_on(t, mode, root, dst, src, CALL))
}

/// [`broadcast_nb`] over `t` once the arguments are checked and
/// `IN_ALLSYNC` is done (also the stages of the hierarchical broadcast,
/// `crate::hier`).
pub(crate) fn bcast_on<'a>(
    t: &Arc<TeamInfo>,
    mode: SyncMode,
    root: Rank,
    dst: &'a mut [u8],
    src: Option<&'a [u8]>,
    call: &'static str,
) -> CollHandle<'a> {
    let nbytes = dst.len();
    let (me, n) = (t.me, t.size());
    if nbytes > 0 && shmsmall::qualifies(t, &mode, nbytes, 1) {
        let pat = Pat::Bcast {
            root: root as usize,
        };
        if me == root {
            if let Some(s) = src {
                dst.copy_from_slice(s);
            }
        }
        // The root's input is in `dst` now (written in place).
        if nbytes <= crate::shm::SMALL_MAX && !mode.out_all {
            let team = t.shm_team().expect("qualifies");
            return shmsmall::one(team, &mode, pat, nbytes, None, Some(dst));
        }
        return shmsmall::start(t, &mode, pat, nbytes, None, Some(dst));
    }
    let key = t.next_key();
    let out = out_key(t, mode);
    let sig = signature("broadcast", &[u64::from(root), nbytes as u64, mode.word]);
    if me == root && n > 1 && shmdata::eligible(t) && shmdata::single_copy(nbytes) {
        // The readers copy straight from the root's input while it copies
        // its own.
        match src {
            Some(s) => shmdata::offer(u64::from(sig), s, n as usize, || dst.copy_from_slice(s)),
            None => shmdata::offer(u64::from(sig), dst, n as usize, || {}),
        }
        return fin(CollHandle::INVALID, out);
    }
    if me == root {
        if let Some(s) = src {
            dst.copy_from_slice(s);
        }
    }
    if nbytes == 0 || n == 1 {
        return fin(CollHandle::INVALID, out);
    }
    if shmdata::eligible(t) {
        if me == root {
            shmdata::write_only(u64::from(sig), dst, n as usize, Readers::Others);
            return fin(CollHandle::INVALID, out);
        }
        return fin(
            shmdata::read_one(u64::from(sig), root, nbytes, None, dst),
            out,
        );
    }
    if me == root {
        am_bcast(t, key, sig, root, Some(dst), None, call);
        return fin(CollHandle::INVALID, out);
    }
    let staging = Staging::new(nbytes);
    let c = am_bcast(t, key, sig, root, None, Some(&staging), call);
    fin(CollHandle::pending_into(c, staging, dst), out)
}

pub(crate) struct ReduceArgs {
    pub(crate) t: Arc<TeamInfo>,
    pub(crate) mode: SyncMode,
    key: crate::engine::Key,
    pub(crate) sig: u32,
    pub(crate) nbytes: usize,
}

#[allow(clippy::too_many_arguments)]
fn reduce_begin(
    call: &str,
    tm: &Tm,
    kind: &str,
    root: Rank,
    dt: Dt,
    dt_sz: usize,
    dt_cnt: usize,
    op: &ReduceOp,
    flags: Flags,
) -> Result<ReduceArgs> {
    let (t, mode) = begin(call, tm, flags)?;
    check_root(call, root, t)?;
    validate(call, dt, dt_sz, op)?;
    if dt_cnt == 0 {
        return Err(Error::bad_arg(format!("{call}: dt_cnt must be non-zero")));
    }
    let nbytes = dt_sz
        .checked_mul(dt_cnt)
        .ok_or_else(|| Error::bad_arg(format!("{call}: dt_sz * dt_cnt overflows")))?;
    check_size(call, nbytes)?;
    Ok(reduce_args(
        t.clone(),
        mode,
        kind,
        root,
        dt,
        dt_sz,
        dt_cnt,
        op,
    ))
}

/// A reduction's arguments over `t` (also the stages of the hierarchical
/// reductions, `crate::hier`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce_args(
    t: Arc<TeamInfo>,
    mode: SyncMode,
    kind: &str,
    root: Rank,
    dt: Dt,
    dt_sz: usize,
    dt_cnt: usize,
    op: &ReduceOp,
) -> ReduceArgs {
    ReduceArgs {
        key: (0, 0),
        sig: signature(
            kind,
            &[
                u64::from(root),
                dt as u64,
                dt_sz as u64,
                dt_cnt as u64,
                op.op() as u64,
                mode.word,
            ],
        ),
        t,
        mode,
        nbytes: dt_sz * dt_cnt,
    }
}

/// Reduction to one (`gex_Coll_ReduceToOneNB`): on `root`, `dst[i]` =
/// `src_i[0] (+) src_i[1] (+) ... (+) src_i[n-1]` element-wise over the
/// members' `src` vectors of `dt_cnt` elements of `dt_sz` bytes.
///
/// - Single-valued: `root`, `dt`, `dt_sz`, `dt_cnt` (non-zero), the opcode.
///   Not single-valued: the user function (each member passes its own).
/// - `dst`: the root's output of `dt_sz * dt_cnt` bytes (ignored elsewhere).
/// - `src`: `Some(input)` of the same length; `None` on the root means the
///   input is in `dst` (the spec's `src == dst`).
/// - The operands are combined over a binomial tree in rank order, so
///   `GEX_OP_USER_NC` gets `src[0] (+) ... (+) src[n-1]` in that order, and
///   every call with the same arguments associates the same way.
#[allow(clippy::too_many_arguments)]
pub fn reduce_to_one_nb<'a>(
    tm: &Tm,
    root: Rank,
    dst: Option<&'a mut [u8]>,
    src: Option<&'a [u8]>,
    dt: Dt,
    dt_sz: usize,
    dt_cnt: usize,
    op: &ReduceOp,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_ReduceToOneNB";
    let a = reduce_begin(
        CALL,
        tm,
        "reduce_to_one",
        root,
        dt,
        dt_sz,
        dt_cnt,
        op,
        flags,
    )?;
    let me = a.t.me;
    let dst = if me == root {
        let d = dst.ok_or_else(|| Error::bad_arg(format!("{CALL}: the root needs a dst")))?;
        check_len(CALL, "dst", d.len(), a.nbytes)?;
        Some(d)
    } else {
        None
    };
    match (src, &dst) {
        (Some(s), _) => check_len(CALL, "src", s.len(), a.nbytes)?,
        (None, Some(_)) => {}
        (None, None) => {
            return Err(Error::bad_arg(format!(
                "{CALL}: src is required on ranks other than the root"
            )))
        }
    }
    if a.mode.in_all {
        sync::enter_all(&a.t, None, CALL);
    }
    if let Some(h) = a.t.hier().filter(|h| hier::reduces(op, h)) {
        return hier::reduce_to_one(&a, h.clone(), root, dst, src, dt, dt_sz, op);
    }
    Ok(reduce_one_on(a, root, dst, src, dt, dt_sz, op, CALL))
}

/// [`reduce_to_one_nb`] once the arguments are checked (`dst` is `Some`
/// on the root only) and `IN_ALLSYNC` is done (also the stages of the
/// hierarchical reductions, `crate::hier`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce_one_on<'a>(
    mut a: ReduceArgs,
    root: Rank,
    dst: Option<&'a mut [u8]>,
    src: Option<&'a [u8]>,
    dt: Dt,
    dt_sz: usize,
    op: &ReduceOp,
    call: &'static str,
) -> CollHandle<'a> {
    let (me, n) = (a.t.me, a.t.size());
    if shmsmall::qualifies(&a.t, &a.mode, a.nbytes, dt_sz) {
        let pat = Pat::Reduce {
            root: Some(root as usize),
            dt,
            dt_sz,
            op: op.clone(),
        };
        return shmsmall::start(&a.t, &a.mode, pat, a.nbytes, src, dst);
    }
    if gathers(&a.t, a.nbytes, dt_sz, op) {
        return gather_reduce(&a, Some(root), dst, src, dt, dt_sz, op, call);
    }
    a.key = a.t.next_key();
    let out = out_key(&a.t, a.mode);
    if n > 1 && shmdata::reduce_eligible(&a.t, op) {
        let sig = u64::from(a.sig);
        let Some(d) = dst else {
            let s = src.expect("checked above");
            let h = shmdata::reduce_member(sig, s, n as usize, root, dt, dt_sz, op);
            return fin(h, out);
        };
        // The input is read in this call, straight from the caller's
        // buffer.
        let how = shmdata::How::Reduce {
            dt,
            dt_sz,
            op: op.clone(),
        };
        let h = match src {
            Some(input) => shmdata::all(sig, input, n as usize, how, Readers::One(root), d),
            None => shmdata::all_in_place(sig, n as usize, how, Readers::One(root), d),
        };
        return fin(h, out);
    }
    let acc = match (src, &dst) {
        (Some(s), _) => s.to_vec(),
        (None, Some(d)) => d.to_vec(),
        (None, None) => unreachable!("checked above"),
    };
    if n == 1 {
        if let Some(d) = dst {
            d.copy_from_slice(&acc);
        }
        return CollHandle::INVALID;
    }
    count_am_reduction();
    let staging = dst.as_ref().map(|_| Staging::new(a.nbytes));
    let opr = Op::start(
        a.key,
        a.sig,
        call,
        Box::new(Reduce::new(
            dt,
            dt_sz,
            op.clone(),
            a.t.members.clone(),
            me,
            ReduceKind::ToOne { root },
            acc,
            staging.clone(),
        )),
    );
    fin(
        match (dst, staging) {
            (Some(d), Some(s)) => CollHandle::pending_into(opr.c.clone(), s, d),
            _ => CollHandle::pending(opr.c.clone()),
        },
        out,
    )
}

/// Vectors up to this size are all-reduced by recursive doubling (fewer
/// steps); larger ones by reduce and broadcast (less data moved).
pub(crate) const RECURSIVE_DOUBLING_MAX: usize = 16 << 10;

/// Reduction to all (`gex_Coll_ReduceToAllNB`): as [`reduce_to_one_nb`],
/// with the result in `dst` on every member. Up to 16 KiB, by recursive
/// doubling in rank order; above, reduced to rank 0 over the binomial tree
/// and broadcast down it. Either way every member gets the same bits, and
/// `GEX_OP_USER_NC` is combined in rank order.
/// `src == None` on every member means in place (the spec allows equal
/// `src` and `dst` on all members or none).
#[allow(clippy::too_many_arguments)]
pub fn reduce_to_all_nb<'a>(
    tm: &Tm,
    dst: &'a mut [u8],
    src: Option<&'a [u8]>,
    dt: Dt,
    dt_sz: usize,
    dt_cnt: usize,
    op: &ReduceOp,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_ReduceToAllNB";
    let a = reduce_begin(CALL, tm, "reduce_to_all", 0, dt, dt_sz, dt_cnt, op, flags)?;
    check_len(CALL, "dst", dst.len(), a.nbytes)?;
    if let Some(s) = src {
        check_len(CALL, "src", s.len(), a.nbytes)?;
    }
    if a.mode.in_all {
        sync::enter_all(&a.t, None, CALL);
    }
    if let Some(h) = a.t.hier().filter(|h| hier::reduces(op, h)) {
        return hier::reduce_to_all(&a, h.clone(), dst, src, dt, dt_sz, op);
    }
    Ok(reduce_all_on(a, dst, src, dt, dt_sz, op, CALL))
}

/// [`reduce_to_all_nb`] once the arguments are checked and `IN_ALLSYNC`
/// is done (also the stages of the hierarchical reductions,
/// `crate::hier`).
pub(crate) fn reduce_all_on<'a>(
    mut a: ReduceArgs,
    dst: &'a mut [u8],
    src: Option<&'a [u8]>,
    dt: Dt,
    dt_sz: usize,
    op: &ReduceOp,
    call: &'static str,
) -> CollHandle<'a> {
    if shmsmall::qualifies(&a.t, &a.mode, a.nbytes, dt_sz) {
        let pat = Pat::Reduce {
            root: None,
            dt,
            dt_sz,
            op: op.clone(),
        };
        return shmsmall::start(&a.t, &a.mode, pat, a.nbytes, src, Some(dst));
    }
    if gathers(&a.t, a.nbytes, dt_sz, op) {
        return gather_reduce(&a, None, Some(dst), src, dt, dt_sz, op, call);
    }
    a.key = a.t.next_key();
    let out = out_key(&a.t, a.mode);
    if a.t.size() > 1 && shmdata::reduce_eligible(&a.t, op) {
        // The input is read in this call, straight from the caller's
        // buffer.
        let how = shmdata::How::Reduce {
            dt,
            dt_sz,
            op: op.clone(),
        };
        let (sig, n) = (u64::from(a.sig), a.t.size() as usize);
        let h = match src {
            Some(input) => shmdata::all(sig, input, n, how, Readers::Everyone, dst),
            None => shmdata::all_in_place(sig, n, how, Readers::Everyone, dst),
        };
        return fin(h, out);
    }
    let acc = match src {
        Some(s) => s.to_vec(),
        None => dst.to_vec(),
    };
    if a.t.size() == 1 {
        dst.copy_from_slice(&acc);
        return CollHandle::INVALID;
    }
    count_am_reduction();
    let staging = Staging::new(a.nbytes);
    let logic: Box<dyn Logic> = if a.nbytes <= RECURSIVE_DOUBLING_MAX {
        Box::new(AllReduceRd::new(
            dt,
            dt_sz,
            op.clone(),
            a.t.members.clone(),
            a.t.me,
            acc,
            staging.clone(),
        ))
    } else {
        Box::new(Reduce::new(
            dt,
            dt_sz,
            op.clone(),
            a.t.members.clone(),
            a.t.me,
            ReduceKind::ToAll,
            acc,
            Some(staging.clone()),
        ))
    };
    let opr = Op::start(a.key, a.sig, call, logic);
    fin(CollHandle::pending_into(opr.c.clone(), staging, dst), out)
}

/// Reductions (and stages of hierarchical ones) this process started
/// over Active Messages ([`reductions_over_am`]).
static AM_REDUCTIONS: AtomicU64 = AtomicU64::new(0);

/// Counts a reduction started over Active Messages (one uncontended
/// increment, next to the messages such a reduction sends).
pub(crate) fn count_am_reduction() {
    AM_REDUCTIONS.fetch_add(1, Ordering::Relaxed);
}

/// How many reductions (to one or to all, of more than one member; a
/// hierarchical reduction's stages each count) this process has started
/// over Active Messages since it began: a diagnostic, by which a test can
/// tell that reductions over a team whose members share the
/// neighbourhood moved their data through shared memory (the count does
/// not move; with `GEX_COLL_FORCE_AM=1` it does). A query: allowed
/// anywhere.
pub fn reductions_over_am() -> u64 {
    AM_REDUCTIONS.load(Ordering::Relaxed)
}

/// Whether a reduction over `t` of `nbytes` per member, elements of
/// `dt_sz` bytes, with `op`, that the inline slots do not take
/// ([`shmsmall::qualifies`]), goes by [`gather_reduce`]: on a team with
/// a shared-memory channel (whose gathers move through shared memory),
/// elements larger than a slot (user types, which no shared-memory
/// reduction takes), or on the primordial team of a one-neighbourhood
/// job a user-defined operator (which its chunked reduction does not
/// take; gathered through the chunks, it ran 1.7 to 2.7 times as fast
/// as in 1 KiB pieces of the slots, 4 KiB to 1 MiB on 2 and 4 ranks:
/// PERFORMANCE.md, "Collectives").
fn gathers(t: &TeamInfo, nbytes: usize, dt_sz: usize, op: &ReduceOp) -> bool {
    t.size() > 1
        && t.shm_team().is_some()
        && (dt_sz > crate::shm::SMALL_MAX
            || (nbytes > crate::shm::SMALL_MAX
                && !matches!(op, ReduceOp::Builtin(_))
                && shmdata::eligible(t)))
}

/// A reduction over `t` (to `root`, or to all for `None`) as a gather
/// (gather-all) of the members' raw inputs through shared memory
/// ([`gather_on`], [`gather_all_on`]: 1 KiB pieces on sub-teams, the
/// 16 KiB chunks on the primordial team of a one-neighbourhood job) into a
/// library-owned buffer of `n * nbytes`, combined there in rank order
/// (`acc = acc (+) c_m`, so `GEX_OP_USER_NC` gets the rank-order result)
/// by the thread that observes the gather's completion, which then
/// writes `dst`. The gather carries the reduction's signature (folded
/// into its own), so members that disagree on the reduction's
/// single-valued arguments end the job as on the other paths; its stages
/// run without `OUT_ALLSYNC`'s barrier, which this handle adds.
#[allow(clippy::too_many_arguments)]
fn gather_reduce<'a>(
    a: &ReduceArgs,
    root: Option<Rank>,
    dst: Option<&'a mut [u8]>,
    src: Option<&'a [u8]>,
    dt: Dt,
    dt_sz: usize,
    op: &ReduceOp,
    call: &'static str,
) -> CollHandle<'a> {
    let t = &a.t;
    let (n, nb) = (t.size() as usize, a.nbytes);
    let inner_mode = SyncMode {
        out_all: false,
        ..a.mode
    };
    let gathered = dst.as_ref().map(|_| Staging::new(n * nb));
    let extra = hash_id(&[sig_extra(), u64::from(a.sig)]);
    let inner = with_sig_extra(extra, || {
        // The input is read in this call (also in place: `dst` is
        // written only once the gather completed).
        let input: &[u8] = match (src, &dst) {
            (Some(s), _) => s,
            (None, Some(d)) => d,
            (None, None) => unreachable!("checked by the callers"),
        };
        // SAFETY: a fresh library-owned buffer of `n * nb` bytes, which
        // nothing else accesses until the gather completes; it lives as
        // long as the gather's handle: below, either that handle is
        // complete at once, or both go into the `combine` handle, which
        // drops the gather's handle first.
        let g: Option<&'static mut [u8]> = gathered
            .as_ref()
            .map(|b| unsafe { std::slice::from_raw_parts_mut(b.ptr(), b.len()) });
        match root {
            Some(r) => gather_on(t, inner_mode, r, g, input, call),
            None => gather_all_on(t, inner_mode, g.expect("every member reads"), input, call),
        }
    });
    let out = out_key(t, a.mode);
    let (Some(d), Some(buf)) = (dst, gathered) else {
        // A member that only writes (to one, not the root).
        return fin(inner, out);
    };
    let op = op.clone();
    let finish: Finish = Box::new(move |g, d| combine_gathered(dt, dt_sz, &op, g, d));
    if inner.is_invalid() {
        // SAFETY: the gather is complete (its handle is INVALID), so its
        // writers are done with `buf`, and nothing else holds it.
        let g = unsafe { std::slice::from_raw_parts_mut(buf.ptr(), buf.len()) };
        finish(g, d);
        return fin(CollHandle::INVALID, out);
    }
    fin(CollHandle::combine(inner, buf, d, finish), out)
}

/// Combines the `n` gathered inputs in `g` (blocks of `dst.len()` bytes,
/// in rank order) in rank order, `acc = acc (+) c_m`, in place (block
/// `m` becomes the result of blocks `0..=m`), and copies the result into
/// `dst`.
pub(crate) fn combine_gathered(dt: Dt, dt_sz: usize, op: &ReduceOp, g: &mut [u8], dst: &mut [u8]) {
    let nb = dst.len();
    let n = g.len() / nb;
    for m in 1..n {
        let (done, rest) = g.split_at_mut(m * nb);
        combine(dt, dt_sz, op, &done[(m - 1) * nb..], &mut rest[..nb]);
    }
    dst.copy_from_slice(&g[(n - 1) * nb..]);
}

/// [`reduce_to_one_nb`] over typed slices (`dt`, `dt_sz` and `dt_cnt` from
/// `T` and the slice lengths).
pub fn reduce_to_one_nb_typed<'a, T: Elem>(
    tm: &Tm,
    root: Rank,
    dst: Option<&'a mut [T]>,
    src: Option<&'a [T]>,
    op: &ReduceOp,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    let cnt = src
        .map(<[T]>::len)
        .or(dst.as_ref().map(|d| d.len()))
        .unwrap_or(0);
    reduce_to_one_nb(
        tm,
        root,
        dst.map(as_bytes_mut),
        src.map(as_bytes),
        T::DT,
        std::mem::size_of::<T>(),
        cnt,
        op,
        flags,
    )
}

/// [`reduce_to_all_nb`] over typed slices.
pub fn reduce_to_all_nb_typed<'a, T: Elem>(
    tm: &Tm,
    dst: &'a mut [T],
    src: Option<&'a [T]>,
    op: &ReduceOp,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    let cnt = dst.len();
    reduce_to_all_nb(
        tm,
        as_bytes_mut(dst),
        src.map(as_bytes),
        T::DT,
        std::mem::size_of::<T>(),
        cnt,
        op,
        flags,
    )
}

/// A flat collection of `expect_blocks` blocks of `block` bytes into a
/// fresh result buffer, with `own` (this rank's slot and block) already in
/// place, after the `initial` sends.
#[allow(clippy::too_many_arguments)]
fn collect<'a>(
    call: &'static str,
    key: crate::engine::Key,
    sig: u32,
    dst: &'a mut [u8],
    block: usize,
    own: Option<(usize, &[u8])>,
    expect_blocks: usize,
    initial: Vec<Out>,
) -> CollHandle<'a> {
    let staging = Staging::new(dst.len());
    if let Some((slot, bytes)) = own {
        // SAFETY: the slot lies inside the fresh staging buffer (the callers
        // size it as blocks * block), and no other writer exists yet: the
        // operation that will receive into it has not started.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                staging.ptr().add(slot * block),
                bytes.len(),
            )
        };
    }
    let op = Op::start(
        key,
        sig,
        call,
        Box::new(Collect {
            initial,
            expect_msgs: expect_blocks,
            got_msgs: 0,
            sink: CollectSink::Staging {
                staging: staging.clone(),
                block,
                got: 0,
                expect: expect_blocks * block,
            },
        }),
    );
    CollHandle::pending_into(op.c.clone(), staging, dst)
}

/// Scatter (design notes `gasnet_all_scatter_nb`): the root's `src` holds
/// `n` blocks of `dst.len()` bytes; member `i` receives block `i` in `dst`.
/// Flat: the root sends each block directly; across neighbourhoods
/// (unless `GEX_COLL_HIER=0`), hierarchical (`crate::hierx`). `root` and
/// `dst.len()` are single-valued; `src` is `Some` on the root (ignored
/// elsewhere).
pub fn scatter_nb<'a>(
    tm: &Tm,
    root: Rank,
    dst: &'a mut [u8],
    src: Option<&'a [u8]>,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_ScatterNB";
    if flags.intersects(seg::HINTS) {
        // Segment hints: the one-sided algorithms (`crate::seg`).
        return seg::scatter_nb_with(tm, root, dst, src, Addrs::Local, flags);
    }
    let (t, mode) = begin(CALL, tm, flags)?;
    check_root(CALL, root, t)?;
    let (me, n, nb) = (t.me, t.size(), dst.len());
    check_size(CALL, nb)?;
    let src = if me == root {
        let s = src.ok_or_else(|| Error::bad_arg(format!("{CALL}: the root needs a src")))?;
        check_len(CALL, "src", s.len(), nb * n as usize)?;
        Some(s)
    } else {
        None
    };
    if mode.in_all {
        sync::enter_all(t, Some(root), CALL);
    }
    if let Some(h) = t.hier() {
        return hierx::scatter(t, h, mode, root, dst, src);
    }
    Ok(scatter_on(t, mode, root, dst, src, CALL))
}

/// [`scatter_nb`] over `t` once the arguments are checked (`src` is
/// `Some` on the root only) and `IN_ALLSYNC` is done (also the stages of
/// the hierarchical scatter, `crate::hierx`). `src` is read during the
/// call.
pub(crate) fn scatter_on<'a>(
    t: &Arc<TeamInfo>,
    mode: SyncMode,
    root: Rank,
    dst: &'a mut [u8],
    src: Option<&[u8]>,
    call: &'static str,
) -> CollHandle<'a> {
    let (me, n, nb) = (t.me, t.size(), dst.len());
    if nb > 0 && shmsmall::qualifies(t, &mode, nb * n as usize, 1) {
        let pat = Pat::Scatter {
            root: root as usize,
            nb,
        };
        let wlen = nb * n as usize;
        if let Some(s) = src {
            dst.copy_from_slice(&s[me as usize * nb..(me as usize + 1) * nb]);
            return shmsmall::start(t, &mode, pat, wlen, Some(s), None);
        }
        return shmsmall::start(t, &mode, pat, wlen, None, Some(dst));
    }
    let key = t.next_key();
    let out = out_key(t, mode);
    let sig = signature("scatter", &[u64::from(root), nb as u64, mode.word]);
    if nb > 0 && shmdata::eligible(t) {
        if let Some(s) = src {
            let own = &s[me as usize * nb..(me as usize + 1) * nb];
            if shmdata::single_copy(nb) {
                shmdata::offer(u64::from(sig), s, n as usize, || dst.copy_from_slice(own));
            } else {
                dst.copy_from_slice(own);
                shmdata::write_only(u64::from(sig), s, n as usize, Readers::Others);
            }
            return fin(CollHandle::INVALID, out);
        }
        return fin(
            shmdata::read_one(u64::from(sig), root, nb * n as usize, Some(nb), dst),
            out,
        );
    }
    if let Some(s) = src {
        dst.copy_from_slice(&s[me as usize * nb..(me as usize + 1) * nb]);
        if nb > 0 {
            for i in 1..n {
                let to = (me + i) % n;
                let blk = &s[to as usize * nb..(to as usize + 1) * nb];
                send_now(key, sig, t.members[to as usize], 0, blk);
            }
        }
        return fin(CollHandle::INVALID, out);
    }
    if nb == 0 {
        return fin(CollHandle::INVALID, out);
    }
    fin(collect(call, key, sig, dst, nb, None, 1, Vec::new()), out)
}

/// Gather (design notes `gasnet_all_gather_nb`): every member's `src` of
/// `nbytes` lands as block `i` of the root's `dst` (`n * nbytes` bytes).
/// Flat: each member sends to the root; across neighbourhoods
/// (unless `GEX_COLL_HIER=0`), hierarchical (`crate::hierx`). `root` and
/// `src.len()` are single-valued; `dst` is `Some` on the root (ignored
/// elsewhere).
pub fn gather_nb<'a>(
    tm: &Tm,
    root: Rank,
    dst: Option<&'a mut [u8]>,
    src: &'a [u8],
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_GatherNB";
    if flags.intersects(seg::HINTS) {
        // Segment hints: the one-sided algorithms (`crate::seg`).
        return seg::gather_nb_with(tm, root, dst, src, Addrs::Local, flags);
    }
    let (t, mode) = begin(CALL, tm, flags)?;
    check_root(CALL, root, t)?;
    let (me, n, nb) = (t.me, t.size(), src.len());
    check_size(CALL, nb * n as usize)?;
    let dst = if me == root {
        let d = dst.ok_or_else(|| Error::bad_arg(format!("{CALL}: the root needs a dst")))?;
        check_len(CALL, "dst", d.len(), nb * n as usize)?;
        Some(d)
    } else {
        None
    };
    if mode.in_all {
        sync::enter_all(t, None, CALL);
    }
    if let Some(h) = t.hier() {
        return hierx::gather(t, h, mode, root, dst, src);
    }
    Ok(gather_on(t, mode, root, dst, src, CALL))
}

/// [`gather_nb`] over `t` once the arguments are checked (`dst` is
/// `Some` on the root only) and `IN_ALLSYNC` is done (also the stages of
/// the hierarchical collectives, `crate::hierx`). `src` is read during
/// the call.
pub(crate) fn gather_on<'a>(
    t: &Arc<TeamInfo>,
    mode: SyncMode,
    root: Rank,
    dst: Option<&'a mut [u8]>,
    src: &[u8],
    call: &'static str,
) -> CollHandle<'a> {
    let (me, n, nb) = (t.me, t.size(), src.len());
    if nb > 0 && shmsmall::qualifies(t, &mode, nb, 1) {
        let pat = Pat::Gather {
            root: root as usize,
            nb,
        };
        return shmsmall::start(t, &mode, pat, nb, Some(src), dst);
    }
    let key = t.next_key();
    let out = out_key(t, mode);
    let sig = signature("gather", &[u64::from(root), nb as u64, mode.word]);
    if nb > 0 && shmdata::eligible(t) {
        let Some(d) = dst else {
            shmdata::write_only(u64::from(sig), src, n as usize, Readers::One(root));
            return fin(CollHandle::INVALID, out);
        };
        return fin(
            shmdata::all(
                u64::from(sig),
                src,
                n as usize,
                shmdata::How::GatherAll,
                Readers::One(root),
                d,
            ),
            out,
        );
    }
    let Some(dst) = dst else {
        if nb > 0 {
            send_now(key, sig, t.members[root as usize], me, src);
        }
        return fin(CollHandle::INVALID, out);
    };
    if nb == 0 || n == 1 {
        dst[me as usize * nb..(me as usize + 1) * nb].copy_from_slice(src);
        return fin(CollHandle::INVALID, out);
    }
    fin(
        collect(
            call,
            key,
            sig,
            dst,
            nb,
            Some((me as usize, src)),
            n as usize - 1,
            Vec::new(),
        ),
        out,
    )
}

/// Gather-all (design notes `gasnet_all_gather_all_nb`): every member's
/// `src` of `nbytes` lands as block `i` of every member's `dst`
/// (`n * nbytes`). Flat: each member sends its block to every other, in the
/// order `me + 1, me + 2, ...`; across neighbourhoods
/// (unless `GEX_COLL_HIER=0`), hierarchical (`crate::hierx`). `src.len()` is
/// single-valued.
pub fn gather_all_nb<'a>(
    tm: &Tm,
    dst: &'a mut [u8],
    src: &'a [u8],
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_GatherAllNB";
    if flags.intersects(seg::HINTS) {
        // Segment hints: the one-sided algorithms (`crate::seg`).
        return seg::gather_all_nb_with(tm, dst, src, Addrs::Local, flags);
    }
    let (t, mode) = begin(CALL, tm, flags)?;
    let (n, nb) = (t.size(), src.len());
    check_size(CALL, nb * n as usize)?;
    check_len(CALL, "dst", dst.len(), nb * n as usize)?;
    if mode.in_all {
        sync::enter_all(t, None, CALL);
    }
    if let Some(h) = t.hier() {
        return hierx::gather_all(t, h, mode, dst, src);
    }
    Ok(gather_all_on(t, mode, dst, src, CALL))
}

/// [`gather_all_nb`] over `t` once the arguments are checked and
/// `IN_ALLSYNC` is done. `src` is read during the call.
pub(crate) fn gather_all_on<'a>(
    t: &Arc<TeamInfo>,
    mode: SyncMode,
    dst: &'a mut [u8],
    src: &[u8],
    call: &'static str,
) -> CollHandle<'a> {
    let (me, n, nb) = (t.me, t.size(), src.len());
    if nb > 0 && shmsmall::qualifies(t, &mode, nb, 1) {
        let pat = Pat::GatherAll { nb };
        return shmsmall::start(t, &mode, pat, nb, Some(src), Some(dst));
    }
    let key = t.next_key();
    let out = out_key(t, mode);
    let sig = signature("gather_all", &[nb as u64, mode.word]);
    if nb == 0 || n == 1 {
        dst[me as usize * nb..(me as usize + 1) * nb].copy_from_slice(src);
        return fin(CollHandle::INVALID, out);
    }
    if shmdata::eligible(t) {
        return fin(
            shmdata::all(
                u64::from(sig),
                src,
                n as usize,
                shmdata::How::GatherAll,
                Readers::Everyone,
                dst,
            ),
            out,
        );
    }
    let mine: Arc<[u8]> = src.into();
    let initial = (1..n)
        .map(|i| Out::owned(t.members[((me + i) % n) as usize], me, mine.clone()))
        .collect();
    fin(
        collect(
            call,
            key,
            sig,
            dst,
            nb,
            Some((me as usize, src)),
            n as usize - 1,
            initial,
        ),
        out,
    )
}

/// Exchange, all-to-all (design notes `gasnet_all_exchange_nb`): block `j`
/// of member `i`'s `src` lands as block `i` of member `j`'s `dst` (both
/// `n * nbytes`). Flat, in the order `me + 1, me + 2, ...` (each member
/// receives from one peer per step); across neighbourhoods
/// (unless `GEX_COLL_HIER=0`), hierarchical (`crate::hierx`). The block size is
/// single-valued.
pub fn exchange_nb<'a>(
    tm: &Tm,
    dst: &'a mut [u8],
    src: &'a [u8],
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_ExchangeNB";
    if flags.intersects(seg::HINTS) {
        // Segment hints: the one-sided algorithms (`crate::seg`).
        return seg::exchange_nb_with(tm, dst, src, Addrs::Local, flags);
    }
    let (t, mode) = begin(CALL, tm, flags)?;
    let n = t.size() as usize;
    check_len(CALL, "dst", dst.len(), src.len())?;
    if !src.len().is_multiple_of(n) {
        return Err(Error::bad_arg(format!(
            "{CALL}: src of {} bytes is not {n} equal blocks",
            src.len()
        )));
    }
    check_size(CALL, src.len())?;
    if mode.in_all {
        sync::enter_all(t, None, CALL);
    }
    if let Some(h) = t.hier().filter(|h| hierx::exchange_fits(h, src.len())) {
        return hierx::exchange(t, h, mode, dst, src);
    }
    Ok(exchange_on(t, mode, dst, src, CALL))
}

/// [`exchange_nb`] over `t` once the arguments are checked and
/// `IN_ALLSYNC` is done. `src` is read during the call.
pub(crate) fn exchange_on<'a>(
    t: &Arc<TeamInfo>,
    mode: SyncMode,
    dst: &'a mut [u8],
    src: &[u8],
    call: &'static str,
) -> CollHandle<'a> {
    let (me, n) = (t.me, t.size() as usize);
    let nb = src.len() / n;
    if nb > 0 && shmsmall::qualifies(t, &mode, src.len(), 1) {
        let pat = Pat::Exchange { nb };
        return shmsmall::start(t, &mode, pat, src.len(), Some(src), Some(dst));
    }
    let key = t.next_key();
    let out = out_key(t, mode);
    let sig = signature("exchange", &[nb as u64, mode.word]);
    let own = &src[me as usize * nb..(me as usize + 1) * nb];
    if nb == 0 || n == 1 {
        dst[me as usize * nb..(me as usize + 1) * nb].copy_from_slice(own);
        return fin(CollHandle::INVALID, out);
    }
    if shmdata::eligible(t) {
        return fin(
            shmdata::all(
                u64::from(sig),
                src,
                n,
                shmdata::How::Exchange { nb },
                Readers::Everyone,
                dst,
            ),
            out,
        );
    }
    let initial = (1..n as u32)
        .map(|i| {
            let to = (me + i) % n as u32;
            let blk: Arc<[u8]> = src[to as usize * nb..(to as usize + 1) * nb].into();
            Out::owned(t.members[to as usize], me, blk)
        })
        .collect();
    fin(
        collect(
            call,
            key,
            sig,
            dst,
            nb,
            Some((me as usize, own)),
            n - 1,
            initial,
        ),
        out,
    )
}

// ------------------------------------------------------- blocking forms
//
// The notes give every collective a blocking form; each is its
// non-blocking call and a wait, with the same arguments and rules.

/// Blocking [`broadcast_nb`].
pub fn broadcast(
    tm: &Tm,
    root: Rank,
    dst: &mut [u8],
    src: Option<&[u8]>,
    flags: Flags,
) -> Result<()> {
    let h = shmsmall::blocking(|| bcast_entry(tm, root, dst, src, flags))?;
    if h.is_invalid() {
        // Nothing to drop (the drop glue would still run).
        std::mem::forget(h);
        return Ok(());
    }
    h.wait()
}

/// Blocking [`reduce_to_one_nb`].
#[allow(clippy::too_many_arguments)]
pub fn reduce_to_one(
    tm: &Tm,
    root: Rank,
    dst: Option<&mut [u8]>,
    src: Option<&[u8]>,
    dt: Dt,
    dt_sz: usize,
    dt_cnt: usize,
    op: &ReduceOp,
    flags: Flags,
) -> Result<()> {
    shmsmall::blocking(|| reduce_to_one_nb(tm, root, dst, src, dt, dt_sz, dt_cnt, op, flags))?
        .wait()
}

/// Blocking [`reduce_to_all_nb`].
#[allow(clippy::too_many_arguments)]
pub fn reduce_to_all(
    tm: &Tm,
    dst: &mut [u8],
    src: Option<&[u8]>,
    dt: Dt,
    dt_sz: usize,
    dt_cnt: usize,
    op: &ReduceOp,
    flags: Flags,
) -> Result<()> {
    shmsmall::blocking(|| reduce_to_all_nb(tm, dst, src, dt, dt_sz, dt_cnt, op, flags))?.wait()
}

/// Blocking [`reduce_to_one_nb_typed`].
pub fn reduce_to_one_typed<T: Elem>(
    tm: &Tm,
    root: Rank,
    dst: Option<&mut [T]>,
    src: Option<&[T]>,
    op: &ReduceOp,
    flags: Flags,
) -> Result<()> {
    shmsmall::blocking(|| reduce_to_one_nb_typed(tm, root, dst, src, op, flags))?.wait()
}

/// Blocking [`reduce_to_all_nb_typed`].
pub fn reduce_to_all_typed<T: Elem>(
    tm: &Tm,
    dst: &mut [T],
    src: Option<&[T]>,
    op: &ReduceOp,
    flags: Flags,
) -> Result<()> {
    shmsmall::blocking(|| reduce_to_all_nb_typed(tm, dst, src, op, flags))?.wait()
}

/// Blocking [`scatter_nb`].
pub fn scatter(
    tm: &Tm,
    root: Rank,
    dst: &mut [u8],
    src: Option<&[u8]>,
    flags: Flags,
) -> Result<()> {
    shmsmall::blocking(|| scatter_nb(tm, root, dst, src, flags))?.wait()
}

/// Blocking [`gather_nb`].
pub fn gather(tm: &Tm, root: Rank, dst: Option<&mut [u8]>, src: &[u8], flags: Flags) -> Result<()> {
    shmsmall::blocking(|| gather_nb(tm, root, dst, src, flags))?.wait()
}

/// Blocking [`gather_all_nb`].
pub fn gather_all(tm: &Tm, dst: &mut [u8], src: &[u8], flags: Flags) -> Result<()> {
    shmsmall::blocking(|| gather_all_nb(tm, dst, src, flags))?.wait()
}

/// Blocking [`exchange_nb`].
pub fn exchange(tm: &Tm, dst: &mut [u8], src: &[u8], flags: Flags) -> Result<()> {
    shmsmall::blocking(|| exchange_nb(tm, dst, src, flags))?.wait()
}
