//! The planner: for each call, after the checks, picks the mechanism that
//! moves it, from the team (its hierarchy, its shared-memory channel),
//! the sizes, the sync modes, the segment hints and address modes, and the
//! settings (`crate::CollSettings`, through what each mechanism says it
//! can take). The choices, in order:
//!
//! - segment hints or an address mode: the one-sided mechanism
//!   (`crate::onesided`), which may hand back to the plain planner;
//! - a team spanning neighbourhoods: the hierarchy (`crate::hier`);
//! - a team with a shared-memory channel: small data through the inline
//!   slots, large data on a one-neighbourhood job's primordial team
//!   through the chunks (`crate::shm`), barriers over the channel
//!   (`crate::shmbar`);
//! - elsewhere: the Active Message algorithms (`crate::am`).
//!
//! The `*_on` functions are the flat choice over one team once the
//! arguments are checked and `IN_ALLSYNC` is done.
//!
//! Layer: the planner, under the public forms (`crate::coll`,
//! `crate::addr`, ...) and over every mechanism, which it may all use.

mod blocks;
mod reduce;
mod with;

pub(crate) use self::blocks::*;
pub(crate) use self::reduce::*;
pub(crate) use self::with::*;

/// Marks a blocking call's initiation (the shared-memory collectives
/// write in place for it): the public blocking forms wrap their
/// non-blocking call in it.
pub(crate) use crate::shm::blocking;

use std::sync::Arc;

use gex_core::{context, Staging, Tm};
use gex_types::{Error, Flags, Rank, Result};

use crate::am::algos::am_bcast;
use crate::am::{fin, out_key};
use crate::args::{check_len, check_root, check_size};
use crate::barrier::{barrier_event, enter_all};
use crate::engine::signature;
use crate::handle::CollHandle;
use crate::hier;
use crate::onesided::{Addrs, HINTS};
use crate::shm::data::{self, Readers};
use crate::shm::small::{self, Pat};
use crate::sync::{self, SyncMode};
use crate::team::{team_ref, TeamInfo};

/// The barrier takes no flags.
fn check_flags(call: &str, flags: Flags) -> Result<()> {
    if flags.is_empty() {
        Ok(())
    } else {
        Err(Error::bad_arg(format!(
            "{call}: the barrier takes no flags; got {flags:?}"
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

/// [`crate::coll::barrier_nb`]: the checks, then the mechanism.
pub(crate) fn barrier_nb(tm: &Tm, flags: Flags) -> Result<CollHandle<'static>> {
    const CALL: &str = "gex_Coll_BarrierNB";
    context::check_may_communicate(CALL)?;
    check_flags(CALL, flags)?;
    Ok(barrier_event(team_ref(tm, CALL)?, CALL))
}

/// [`crate::coll::barrier_uses_shared_memory`]: whether the team has a channel.
pub(crate) fn barrier_uses_shared_memory(tm: &Tm) -> Result<bool> {
    Ok(team_ref(tm, "barrier_uses_shared_memory")?.uses_shared_memory())
}

/// [`broadcast_nb`]'s body, inlined into it and into the blocking
/// [`crate::coll::broadcast`]: there the handle (complete, on the common path) never
/// travels through memory, whose reload right after the root's write to
/// its slot line could not be forwarded and so waited for that line to
/// come back from the reader (PERFORMANCE.md, "Collectives").
#[inline(always)]
pub(crate) fn broadcast_nb<'a>(
    tm: &Tm,
    root: Rank,
    dst: &'a mut [u8],
    src: Option<&'a [u8]>,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_BroadcastNB";
    if flags.intersects(HINTS) {
        // Segment hints: the one-sided algorithms (`crate::onesided`).
        return broadcast_nb_with(tm, root, dst, src, Addrs::Local, flags);
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
        enter_all(t, Some(root), CALL);
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
    if nbytes > 0 && small::qualifies(t, &mode, nbytes, 1) {
        let pat = Pat::Bcast {
            root: root as usize,
        };
        if me == root {
            if let Some(s) = src {
                dst.copy_from_slice(s);
            }
        }
        // The root's input is in `dst` now (written in place).
        if nbytes <= crate::area::SMALL_MAX && !mode.out_all {
            let team = t.shm_team().expect("qualifies");
            return small::one(team, &mode, pat, nbytes, None, Some(dst));
        }
        return small::start(t, &mode, pat, nbytes, None, Some(dst));
    }
    let key = t.next_key();
    let out = out_key(t, mode);
    let sig = signature("broadcast", &[u64::from(root), nbytes as u64, mode.word]);
    if me == root && n > 1 && data::eligible(t) && data::single_copy(nbytes) {
        // The readers copy straight from the root's input while it copies
        // its own.
        match src {
            Some(s) => data::offer(u64::from(sig), s, n as usize, || dst.copy_from_slice(s)),
            None => data::offer(u64::from(sig), dst, n as usize, || {}),
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
    if data::eligible(t) {
        if me == root {
            data::write_only(u64::from(sig), dst, n as usize, Readers::Others);
            return fin(CollHandle::INVALID, out);
        }
        return fin(data::read_one(u64::from(sig), root, nbytes, None, dst), out);
    }
    if me == root {
        am_bcast(t, key, sig, root, Some(dst), None, call);
        return fin(CollHandle::INVALID, out);
    }
    let staging = Staging::new(nbytes);
    let c = am_bcast(t, key, sig, root, None, Some(&staging), call);
    fin(CollHandle::pending_into(c, staging, dst), out)
}
