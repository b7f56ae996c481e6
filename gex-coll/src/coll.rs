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
//!   module's docs. They also take the
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
//!
//! Layer: public forms. Each call documents its rules here and hands
//! its arguments to the planner (`crate::plan`); uses the planner, the
//! handles, the operators and the AM mechanism's reduction counter.

use gex_core::Tm;
use gex_types::{Dt, Flags, Rank, Result};

use crate::handle::CollHandle;
use crate::plan;
use crate::reduce::{as_bytes, as_bytes_mut, Elem, ReduceOp};

pub use crate::am::reduction::reductions_over_am;

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
#[inline]
pub fn barrier_nb(tm: &Tm, flags: Flags) -> Result<CollHandle<'static>> {
    plan::barrier_nb(tm, flags)
}

/// Whether barriers over `tm` use shared memory (every member shares this
/// process's neighbourhood, the areas are in use, and the team got a
/// channel) rather than Active Messages. The same answer on every member.
/// A query: allowed anywhere.
#[inline]
pub fn barrier_uses_shared_memory(tm: &Tm) -> Result<bool> {
    plan::barrier_uses_shared_memory(tm)
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
#[inline]
pub fn broadcast_nb<'a>(
    tm: &Tm,
    root: Rank,
    dst: &'a mut [u8],
    src: Option<&'a [u8]>,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    plan::broadcast_nb(tm, root, dst, src, flags)
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
#[inline]
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
    plan::reduce_to_one_nb(tm, root, dst, src, dt, dt_sz, dt_cnt, op, flags)
}

/// Reduction to all (`gex_Coll_ReduceToAllNB`): as [`reduce_to_one_nb`],
/// with the result in `dst` on every member. Up to 16 KiB, by recursive
/// doubling in rank order; above, reduced to rank 0 over the binomial tree
/// and broadcast down it. Either way every member gets the same bits, and
/// `GEX_OP_USER_NC` is combined in rank order.
/// `src == None` on every member means in place (the spec allows equal
/// `src` and `dst` on all members or none).
#[allow(clippy::too_many_arguments)]
#[inline]
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
    plan::reduce_to_all_nb(tm, dst, src, dt, dt_sz, dt_cnt, op, flags)
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

/// Scatter (design notes `gasnet_all_scatter_nb`): the root's `src` holds
/// `n` blocks of `dst.len()` bytes; member `i` receives block `i` in `dst`.
/// Flat: the root sends each block directly; across neighbourhoods
/// (unless `GEX_COLL_HIER=0`), hierarchical (`crate::hier::blocks`). `root` and
/// `dst.len()` are single-valued; `src` is `Some` on the root (ignored
/// elsewhere).
#[inline]
pub fn scatter_nb<'a>(
    tm: &Tm,
    root: Rank,
    dst: &'a mut [u8],
    src: Option<&'a [u8]>,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    plan::scatter_nb(tm, root, dst, src, flags)
}

/// Gather (design notes `gasnet_all_gather_nb`): every member's `src` of
/// `nbytes` lands as block `i` of the root's `dst` (`n * nbytes` bytes).
/// Flat: each member sends to the root; across neighbourhoods
/// (unless `GEX_COLL_HIER=0`), hierarchical (`crate::hier::blocks`). `root` and
/// `src.len()` are single-valued; `dst` is `Some` on the root (ignored
/// elsewhere).
#[inline]
pub fn gather_nb<'a>(
    tm: &Tm,
    root: Rank,
    dst: Option<&'a mut [u8]>,
    src: &'a [u8],
    flags: Flags,
) -> Result<CollHandle<'a>> {
    plan::gather_nb(tm, root, dst, src, flags)
}

/// Gather-all (design notes `gasnet_all_gather_all_nb`): every member's
/// `src` of `nbytes` lands as block `i` of every member's `dst`
/// (`n * nbytes`). Flat: each member sends its block to every other, in the
/// order `me + 1, me + 2, ...`; across neighbourhoods
/// (unless `GEX_COLL_HIER=0`), hierarchical (`crate::hier::blocks`). `src.len()` is
/// single-valued.
#[inline]
pub fn gather_all_nb<'a>(
    tm: &Tm,
    dst: &'a mut [u8],
    src: &'a [u8],
    flags: Flags,
) -> Result<CollHandle<'a>> {
    plan::gather_all_nb(tm, dst, src, flags)
}

/// Exchange, all-to-all (design notes `gasnet_all_exchange_nb`): block `j`
/// of member `i`'s `src` lands as block `i` of member `j`'s `dst` (both
/// `n * nbytes`). Flat, in the order `me + 1, me + 2, ...` (each member
/// receives from one peer per step); across neighbourhoods
/// (unless `GEX_COLL_HIER=0`), hierarchical (`crate::hier::blocks`). The block size is
/// single-valued.
#[inline]
pub fn exchange_nb<'a>(
    tm: &Tm,
    dst: &'a mut [u8],
    src: &'a [u8],
    flags: Flags,
) -> Result<CollHandle<'a>> {
    plan::exchange_nb(tm, dst, src, flags)
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
    let h = plan::blocking(|| plan::broadcast_nb(tm, root, dst, src, flags))?;
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
    plan::blocking(|| reduce_to_one_nb(tm, root, dst, src, dt, dt_sz, dt_cnt, op, flags))?.wait()
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
    plan::blocking(|| reduce_to_all_nb(tm, dst, src, dt, dt_sz, dt_cnt, op, flags))?.wait()
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
    plan::blocking(|| reduce_to_one_nb_typed(tm, root, dst, src, op, flags))?.wait()
}

/// Blocking [`reduce_to_all_nb_typed`].
pub fn reduce_to_all_typed<T: Elem>(
    tm: &Tm,
    dst: &mut [T],
    src: Option<&[T]>,
    op: &ReduceOp,
    flags: Flags,
) -> Result<()> {
    plan::blocking(|| reduce_to_all_nb_typed(tm, dst, src, op, flags))?.wait()
}

/// Blocking [`scatter_nb`].
pub fn scatter(
    tm: &Tm,
    root: Rank,
    dst: &mut [u8],
    src: Option<&[u8]>,
    flags: Flags,
) -> Result<()> {
    plan::blocking(|| scatter_nb(tm, root, dst, src, flags))?.wait()
}

/// Blocking [`gather_nb`].
pub fn gather(tm: &Tm, root: Rank, dst: Option<&mut [u8]>, src: &[u8], flags: Flags) -> Result<()> {
    plan::blocking(|| gather_nb(tm, root, dst, src, flags))?.wait()
}

/// Blocking [`gather_all_nb`].
pub fn gather_all(tm: &Tm, dst: &mut [u8], src: &[u8], flags: Flags) -> Result<()> {
    plan::blocking(|| gather_all_nb(tm, dst, src, flags))?.wait()
}

/// Blocking [`exchange_nb`].
pub fn exchange(tm: &Tm, dst: &mut [u8], src: &[u8], flags: Flags) -> Result<()> {
    plan::blocking(|| exchange_nb(tm, dst, src, flags))?.wait()
}
