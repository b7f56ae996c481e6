//! The hierarchical barrier: over shared memory (or AMs) inside each
//! neighbourhood, then over Active Messages between one representative
//! of each, then released inside each neighbourhood, advanced by the
//! progress hook. Part of the hierarchy mechanism; uses the shared-memory
//! barrier (`crate::shmbar`), the AM one, the handles and the registry.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use gex_core::Completion;

use crate::am::am_barrier;
use crate::area::ShmTeam;
use crate::engine::{lock, Key};
use crate::handle::CollHandle;
use crate::shmbar::flat_barrier;
use crate::team::{Hier, TeamInfo};

/// How the lowest member of a group learns that the others arrived, and
/// how it releases them.
pub(super) enum Local {
    /// The local team's shared-memory barrier: the others entered episode
    /// `k` (looked at from member `from` on); release by entering it.
    Shm {
        team: Arc<ShmTeam>,
        k: u64,
        from: usize,
    },
    /// Without a channel: the first of the local team's two dissemination
    /// barriers, then the second, under the key reserved at initiation.
    Am {
        first: CollHandle<'static>,
        team: Arc<TeamInfo>,
        release: Key,
    },
    /// Alone in the group.
    Alone,
}

/// A lowest member's part of a hierarchical barrier, advanced by the
/// progress hook.
pub(super) struct Pending {
    local: Local,
    /// The barrier among the groups' lowest members, once the group
    /// arrived.
    reps: Arc<TeamInfo>,
    between: Option<CollHandle<'static>>,
    c: Arc<Completion>,
}

impl Pending {
    /// Whether this member's group has arrived.
    fn arrived(&mut self) -> bool {
        match &mut self.local {
            Local::Shm { team, k, from } => team.others_arrived(*k, from),
            Local::Am { first, .. } => first.finished(),
            Local::Alone => true,
        }
    }

    /// Starts the barrier between groups once the group arrived; whether
    /// it is started.
    fn between_started(&mut self) -> bool {
        if self.between.is_none() {
            if !self.arrived() {
                return false;
            }
            self.between = Some(flat_barrier(&self.reps, BARRIER));
        }
        true
    }

    /// Whether the barrier between groups (started) is complete.
    fn between_done(&mut self) -> bool {
        self.between.as_mut().is_some_and(CollHandle::finished)
    }

    /// Releases the group.
    fn release(&self) {
        match &self.local {
            Local::Shm { team, k, .. } => team.publish(*k),
            // Completes in the handlers: the others wait for it.
            Local::Am { team, release, .. } => drop(am_barrier(team, *release, BARRIER)),
            Local::Alone => {}
        }
        self.c.done();
    }
}

/// The lowest members' barriers in flight, in initiation order: each
/// group is released in order (a shared-memory release enters every
/// episode before it), while the barriers between groups start as soon
/// as each group arrived.
pub(super) struct Queue {
    q: VecDeque<Pending>,
    /// How many from the front have their barrier between groups
    /// started.
    started: usize,
}

pub(super) static PENDING: Mutex<Queue> = Mutex::new(Queue {
    q: VecDeque::new(),
    started: 0,
});

/// Barriers in [`PENDING`], readable without its lock: the progress hook
/// runs in every poll of every wait, hierarchy or not, and an idle one
/// takes no lock (the lock was 6-22% of a waiting rank's samples).
pub(super) static PENDING_LEN: AtomicUsize = AtomicUsize::new(0);

pub(super) const BARRIER: &str = "gex_Coll_BarrierNB (between neighbourhoods)";

/// The barriers' part of [`super::progress`].
pub(super) fn barrier_progress() -> usize {
    if PENDING_LEN.load(Ordering::Acquire) == 0 {
        return 0;
    }
    let Ok(mut guard) = PENDING.try_lock() else {
        // Another thread is at it.
        return 0;
    };
    let Queue { q, started } = &mut *guard;
    if q.is_empty() {
        return 0;
    }
    while *started < q.len() && q[*started].between_started() {
        *started += 1;
    }
    let mut released = 0;
    while *started > 0 && q[0].between_done() {
        q.pop_front().expect("non-empty").release();
        *started -= 1;
        released += 1;
    }
    PENDING_LEN.store(q.len(), Ordering::Release);
    released
}

/// Hierarchical barrier: members other than the lowest of their group
/// arrive and wait for the release; the lowest waits (in the progress
/// hook) for its group, then for the other groups' lowest members, then
/// releases its group.
pub(crate) fn barrier(t: &TeamInfo, h: &Hier) -> CollHandle<'static> {
    let key = t.next_key();
    let Some(reps) = h.reps(t, key, None) else {
        let l = h.local.as_ref().expect("a non-representative has a group");
        return match l.shm_team() {
            Some(s) => match s.enter() {
                None => CollHandle::INVALID,
                Some((k, from)) => CollHandle::shm_barrier(s.clone(), k, from),
            },
            None => {
                // Arrive, and wait for the release.
                drop(flat_barrier(l, BARRIER));
                flat_barrier(l, BARRIER)
            }
        };
    };
    let local = match &h.local {
        None => Local::Alone,
        Some(l) => match l.shm_team() {
            Some(s) => Local::Shm {
                team: s.clone(),
                k: s.reserve(),
                from: 0,
            },
            None => Local::Am {
                first: flat_barrier(l, BARRIER),
                team: l.clone(),
                release: l.next_key(),
            },
        },
    };
    let c = Completion::new(1, None);
    {
        let mut p = lock(&PENDING);
        p.q.push_back(Pending {
            local,
            reps,
            between: None,
            c: c.clone(),
        });
        PENDING_LEN.store(p.q.len(), Ordering::Release);
    }
    super::progress();
    let mut h = CollHandle::pending(c).shm_poke();
    if h.finished() {
        return CollHandle::INVALID;
    }
    h
}
