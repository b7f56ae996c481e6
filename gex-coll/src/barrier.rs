//! The barrier of any team, as the other collectives use it: hierarchical
//! over a team spanning neighbourhoods, else over shared memory or Active
//! Messages; the blocking form; and the `IN_ALLSYNC` entry barrier of the
//! data collectives (see [`crate::sync`] for the modes).
//!
//! Layer: above the mechanisms it composes (hier, shmbar, am), below the
//! one-sided mechanism and the planner, which use it.

use std::sync::{Arc, Mutex};

use gex_types::Rank;

use crate::am::algos::{Collect, CollectSink};
use crate::engine::{self, send_now, signature, Op};
use crate::handle::CollHandle;
use crate::shmbar::flat_barrier;
use crate::team::TeamInfo;

/// Enters a barrier over `t`: hierarchical if the team spans
/// neighbourhoods (`crate::hier`), else [`crate::shmbar::flat_barrier`]
/// (shared memory if the team has a channel, else Active Messages). The
/// event is `INVALID` if the barrier is complete at once.
pub(crate) fn barrier_event(t: &TeamInfo, call: &'static str) -> CollHandle<'static> {
    if let Some(h) = t.hier() {
        return crate::hier::barrier(t, h);
    }
    flat_barrier(t, call)
}

/// A blocking barrier over `t`, from a thread that may communicate.
pub(crate) fn barrier_blocking(t: &TeamInfo) {
    if let Err(e) = barrier_event(t, "gex_Coll_BarrierNB").wait() {
        gex_core::fatal(&format!("gex-coll: internal barrier: {e}"));
    }
}

/// `IN_ALLSYNC` at initiation, before any input is read: returns once
/// this member may read its input (see the module documentation).
/// `root`: the member whose input is the only one, for broadcast and
/// scatter.
pub(crate) fn enter_all(t: &TeamInfo, root: Option<Rank>, call: &'static str) {
    if t.size() == 1 {
        return;
    }
    let Some(root) = root.filter(|_| !t.uses_shared_memory()) else {
        barrier_blocking(t);
        return;
    };
    let key = t.next_key();
    let sig = signature("in_allsync", &[u64::from(root)]);
    if t.me != root {
        send_now(key, sig, t.members[root as usize], t.me, &[]);
        return;
    }
    let n = t.size() as usize;
    let op = Op::start(
        key,
        sig,
        call,
        Box::new(Collect {
            initial: Vec::new(),
            expect_msgs: n - 1,
            got_msgs: 0,
            sink: CollectSink::Blocks(Arc::new(Mutex::new(vec![None; n]))),
        }),
    );
    engine::wait(&op);
}
