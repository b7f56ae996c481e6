//! Job-wide queries (`gex_System_*`): job rank and size, neighbourhood and
//! host, verbose errors, threads, page and segment sizes.

use gex_types::{Rank, RankInfo, Result};

use crate::runtime::{self, Runtime};

/// This process's rank in the job (`gex_System_QueryJobRank`).
pub fn query_job_rank() -> Result<Rank> {
    Ok(Runtime::require("gex_System_QueryJobRank")?.jobrank())
}

/// The number of processes in the job (`gex_System_QueryJobSize`).
pub fn query_job_size() -> Result<Rank> {
    Ok(Runtime::require("gex_System_QueryJobSize")?.jobsize())
}

/// A neighbourhood or host table and the caller's index in it.
#[derive(Clone, Copy, Debug)]
pub struct RankSet {
    /// Members sorted by increasing jobrank; owned by the library.
    pub members: &'static [RankInfo],
    /// Index of the calling process in `members`.
    pub my_index: Rank,
}

fn rank_set(members: &'static [RankInfo], me: Rank) -> RankSet {
    let my_index = members
        .iter()
        .position(|m| m.jobrank == me)
        .expect("the caller is in its own neighbourhood and host") as Rank;
    RankSet { members, my_index }
}

/// The processes that share memory with this one
/// (`gex_System_QueryNbrhdInfo`).
pub fn query_nbrhd_info() -> Result<RankSet> {
    let rt = Runtime::require("gex_System_QueryNbrhdInfo")?;
    Ok(rank_set(&rt.nbrhd_info, rt.jobrank()))
}

/// The processes on this host (`gex_System_QueryHostInfo`).
pub fn query_host_info() -> Result<RankSet> {
    let rt = Runtime::require("gex_System_QueryHostInfo")?;
    Ok(rank_set(&rt.host_info, rt.jobrank()))
}

/// Sizes of the sets of neighbourhoods and hosts and the caller's places in
/// them (`gex_System_QueryMyPosition`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    /// Number of neighbourhoods in the job.
    pub nbrhd_set_size: Rank,
    /// Rank of the caller's neighbourhood.
    pub nbrhd_set_rank: Rank,
    /// Number of hosts in the job.
    pub host_set_size: Rank,
    /// Rank of the caller's host.
    pub host_set_rank: Rank,
}

/// See [`Position`].
pub fn query_my_position() -> Result<Position> {
    let rt = Runtime::require("gex_System_QueryMyPosition")?;
    let l = rt.conduit().layout();
    Ok(Position {
        nbrhd_set_size: l.nbrhd_set.0,
        nbrhd_set_rank: l.nbrhd_set.1,
        host_set_size: l.host_set.0,
        host_set_rank: l.host_set.1,
    })
}

/// Whether non-fatal errors are printed (`gex_System_GetVerboseErrors`).
pub fn get_verbose_errors() -> bool {
    runtime::verbose()
}

/// Turns printing of non-fatal errors on or off
/// (`gex_System_SetVerboseErrors`).
pub fn set_verbose_errors(enable: bool) {
    runtime::set_verbose(enable)
}

/// The most client threads that may use the library at once
/// (`gex_System_QueryMaxThreads`). Per-thread state is created lazily and
/// has no fixed table, so the limit is only a sanity bound.
pub fn query_max_threads() -> u64 {
    u64::from(u16::MAX)
}

/// Whether handlers may run on threads the client does not own
/// (`gex_System_QueryHiddenAMConcurrencyLevel`): never, handlers run only in
/// the thread that polls.
pub fn query_hidden_am_concurrency_level() -> i32 {
    0
}

pub use gex_conduit::page_size;

/// How waits spend idle polls (`gasnet_set_waitmode`, `GASNET_WAIT_*`):
/// [`set_wait_mode`], [`wait_mode`], and the count of yields
/// [`wait_yields`].
pub use crate::runtime::{core_shared_yields, set_wait_mode, wait_mode, wait_yields, WaitMode};

/// The largest segment this process may attach
/// (`gasnet_getMaxLocalSegmentSize`).
pub fn max_local_segment_size() -> Result<usize> {
    Ok(Runtime::require("gasnet_getMaxLocalSegmentSize")?
        .conduit()
        .max_segment_size())
}
