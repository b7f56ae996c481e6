//! What the reductions share, whichever mechanism moves them: their
//! checked arguments and signature ([`ReduceArgs`]), the local combine of
//! gathered inputs in rank order, the size below which reduce-to-all goes
//! by recursive doubling, and the count of reductions over Active
//! Messages ([`reductions_over_am`]). Part of the AM mechanism
//! ([`crate::am`]); uses the engine, the operators, the sync modes and the
//! team registry.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use gex_types::{Dt, Rank};

use crate::engine::{signature, Key};
use crate::reduce::{combine, ReduceOp};
use crate::sync::SyncMode;
use crate::team::TeamInfo;

/// A reduction's checked arguments: its team, mode, key, signature and
/// size per member.
pub(crate) struct ReduceArgs {
    pub(crate) t: Arc<TeamInfo>,
    pub(crate) mode: SyncMode,
    pub(crate) key: Key,
    pub(crate) sig: u32,
    pub(crate) nbytes: usize,
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

/// Vectors up to this size are all-reduced by recursive doubling (fewer
/// steps); larger ones by reduce and broadcast (less data moved).
pub(crate) const RECURSIVE_DOUBLING_MAX: usize = 16 << 10;

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
