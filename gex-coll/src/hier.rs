//! Hierarchical collectives over teams whose members span several
//! neighbourhoods (hosts): inside each neighbourhood through shared memory,
//! between neighbourhoods over Active Messages among one representative
//! of each, then inside again. On by default (`GEX_COLL_HIER=0` on any
//! rank turns it off, `CollSettings::no_hier`). Earlier reports of hangs
//! on two pretend hosts did not reproduce in 69 runs of 8 ranks
//! (ARCHITECTURE.md, "Hierarchical collectives").
//!
//! # Structure
//!
//! At construction (`crate::team`) a team over more than one
//! neighbourhood, at least one of which holds two or more of its members,
//! gets a [`Hier`] when the collectives' areas are in use: its members
//! grouped by neighbourhood (groups numbered in the order of their lowest
//! team rank, members of a group in team-rank order), and for this
//! member's group, when it has others, a team of gex-coll's own over it
//! (the *local* team) with a shared-memory channel where one is free on
//! every member of the group (derived teams agree on it with an exchange
//! over the local team; the primordial team's groups are whole
//! neighbourhoods and take channel 0, which nothing else uses then). The
//! local teams run the ordinary algorithms: the small collectives' inline
//! slots and pieces (`crate::shmsmall`) and the shared-memory barrier, or
//! Active Messages where no channel was free.
//!
//! Each hierarchical operation takes one number of the team's sequence;
//! from it every member derives the same id for a team of the operation's
//! *representatives*: one member per group (the root in the root's group,
//! the group's lowest team rank elsewhere), in group order. The stages run
//! over the local teams and that team, whose sequences each member of
//! them advances identically, since what a member does depends only on
//! single-valued arguments and the team's layout.
//!
//! - Broadcast: the root sends to the other representatives (a binomial
//!   tree over Active Messages) and then broadcasts in its group; every
//!   other representative receives, then broadcasts in its group as the
//!   local root; the others read from their representative.
//! - Reduce to one: every group reduces to its representative; the
//!   representatives reduce to the root (which is one).
//! - Reduce to all: every group reduces to its lowest member, those
//!   reduce-to-all among themselves, then broadcast in their groups.
//!   Operands are combined by groups (in rank order within a group, then
//!   the groups' results in group order), so only commutative operators
//!   go this way (`GEX_OP_USER_NC` keeps the flat rank-order tree); every
//!   member still gets the same bits.
//! - Barrier: members other than the lowest of their group enter the
//!   local team's shared-memory barrier and complete with it; the lowest
//!   reserves its episode, and the progress hook waits for the others'
//!   arrival, starts a barrier among the groups' lowest members, and once
//!   that completes enters the episode, releasing its group (in
//!   initiation order). Without a channel, two dissemination barriers of
//!   the local team stand for arrival and release. Nobody waits at
//!   initiation: 2^16-1 barriers may be in flight.
//!
//! # Waiting at initiation
//!
//! A representative of a broadcast or reduction that must receive before
//! it can send on (every one but a broadcast's root) waits in the
//! initiation call, polling, until the members it depends on have entered
//! the same operation: no longer than a barrier would. The spec orders
//! collective calls over distinct teams so that replacing each with a
//! blocking barrier could not deadlock, so this cannot either. The other
//! members wait only where the local algorithms do (a writer for slot
//! space); a reader's handle is pending as usual. A representative alone
//! in its group returns the pending handle of its last stage.
//!
//! The sync modes apply to the whole operation as on any team
//! (`IN_ALLSYNC` before it, `OUT_ALLSYNC`'s barrier over the whole team
//! after it); the stages run in MYSYNC mode.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use gex_core::Completion;
use gex_types::{Dt, Rank, Result};

use crate::coll::{bcast_on, fin, out_key, reduce_all_on, reduce_args, reduce_one_on, ReduceArgs};
use crate::engine::{hash_id, lock, Key};
use crate::handle::CollHandle;
use crate::reduce::ReduceOp;
use crate::shm;
use crate::shmbar::ShmTeam;
use crate::shmsmall;
use crate::sync::SyncMode;
use crate::team::{am_barrier, barrier_event, TeamInfo};

/// A team's grouping by neighbourhood (see the module documentation).
pub(crate) struct Hier {
    /// The group of each member, by team rank.
    pub(crate) group: Box<[u32]>,
    /// Each group's members (team ranks, ascending).
    pub(crate) groups: Box<[Box<[u32]>]>,
    /// Each member's index in its group, by team rank.
    pub(crate) local_rank: Box<[u32]>,
    /// This member's group.
    pub(crate) mine: u32,
    /// Jobranks of this member's group (in team-rank order).
    local_jobranks: Arc<[Rank]>,
    /// This member's index in its group.
    me_local: u32,
    /// This member's neighbourhood (its lowest jobrank).
    nbrhd: Rank,
    /// The local team, when the group has other members.
    local: Option<Arc<TeamInfo>>,
}

impl Hier {
    /// The grouping of `t`'s members, if `t` gets a hierarchy: the areas
    /// are in use, the members span two or more neighbourhoods, and one
    /// holds two or more of them. The same answer on every member.
    pub(crate) fn plan(t: &TeamInfo) -> Option<Hier> {
        let nb = shm::nbrhds()?;
        let n = t.members.len();
        if n < 3 {
            return None;
        }
        let mut ids: Vec<Rank> = Vec::new();
        let mut group = Vec::with_capacity(n);
        let mut local_rank = Vec::with_capacity(n);
        let mut groups: Vec<Vec<u32>> = Vec::new();
        for (r, &j) in t.members.iter().enumerate() {
            let id = *nb.get(j as usize)?;
            let g = match ids.iter().position(|&x| x == id) {
                Some(g) => g,
                None => {
                    ids.push(id);
                    groups.push(Vec::new());
                    ids.len() - 1
                }
            };
            group.push(g as u32);
            local_rank.push(groups[g].len() as u32);
            groups[g].push(r as u32);
        }
        if groups.len() < 2 || groups.iter().all(|g| g.len() < 2) {
            return None;
        }
        let mine = group[t.me as usize];
        let local_jobranks = groups[mine as usize]
            .iter()
            .map(|&r| t.members[r as usize])
            .collect();
        Some(Hier {
            group: group.into(),
            groups: groups.into_iter().map(Vec::into_boxed_slice).collect(),
            me_local: local_rank[t.me as usize],
            local_rank: local_rank.into(),
            mine,
            local_jobranks,
            nbrhd: ids[mine as usize],
            local: None,
        })
    }

    /// The members of this member's local team (jobranks) and its rank
    /// there, if the group has others.
    pub(crate) fn local_members(&self) -> Option<(Arc<[Rank]>, u32)> {
        (self.local_jobranks.len() > 1).then(|| (self.local_jobranks.clone(), self.me_local))
    }

    /// The id of this member's local team, for a team of id `team_id`:
    /// the tag (3) in the second word, where a representatives' team has
    /// 4 and a split or created team the parent's sequence number with
    /// two more words after it, so that no two of them can be hashed from
    /// the same words (with the tag last, the local team of neighbourhood
    /// 4 had the id of the representatives of operation 3).
    pub(crate) fn local_id(&self, team_id: u64) -> u64 {
        local_team_id(team_id, self.nbrhd)
    }

    /// With the local team built for it.
    pub(crate) fn with_local(mut self, local: Option<Arc<TeamInfo>>) -> Hier {
        self.local = local;
        self
    }

    /// The local team, if the group has other members.
    pub(crate) fn local(&self) -> Option<&Arc<TeamInfo>> {
        self.local.as_ref()
    }

    /// The representative (team rank) of group `g`: `root` in its own
    /// group, else the group's lowest member.
    pub(crate) fn rep(&self, g: u32, root: Option<Rank>) -> u32 {
        match root {
            Some(r) if self.group[r as usize] == g => r,
            _ => self.groups[g as usize][0],
        }
    }

    /// The team of the representatives of operation `key` over `t`, if
    /// this member is one.
    pub(crate) fn reps(&self, t: &TeamInfo, key: Key, root: Option<Rank>) -> Option<Arc<TeamInfo>> {
        if self.rep(self.mine, root) != t.me {
            return None;
        }
        let members: Arc<[Rank]> = (0..self.groups.len() as u32)
            .map(|g| t.members[self.rep(g, root) as usize])
            .collect();
        let id = reps_team_id(t.id, key.1);
        Some(Arc::new(TeamInfo::internal(id, members, self.mine)))
    }
}

const MY: SyncMode = SyncMode::MY;

/// The second word hashed into a local team's id ([`Hier::local_id`]).
const LOCAL_TAG: u64 = 3;
/// The second word hashed into a representatives' team's id.
const REPS_TAG: u64 = 4;

/// The id of the local team of neighbourhood `nbrhd` in team `team_id`.
fn local_team_id(team_id: u64, nbrhd: Rank) -> u64 {
    hash_id(&[team_id, LOCAL_TAG, u64::from(nbrhd)])
}

/// The id of the representatives' team of operation `seq` of team
/// `team_id`.
fn reps_team_id(team_id: u64, seq: u32) -> u64 {
    hash_id(&[team_id, REPS_TAG, u64::from(seq)])
}

/// Waits for an internal stage (polling).
pub(crate) fn finish(h: CollHandle<'_>) -> Result<()> {
    h.wait()
}

/// Hierarchical broadcast of `dst` (on the root: the data already
/// copied in).
pub(crate) fn broadcast<'a>(
    t: &Arc<TeamInfo>,
    h: &Hier,
    mode: SyncMode,
    root: Rank,
    dst: &'a mut [u8],
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_BroadcastNB (between neighbourhoods)";
    let key = t.next_key();
    let out = out_key(t, mode);
    if dst.is_empty() {
        return Ok(fin(CollHandle::INVALID, out));
    }
    let g_root = h.group[root as usize];
    let my_rep = h.rep(h.mine, Some(root));
    let lroot = h.local_rank[my_rep as usize];
    let stage = match (h.reps(t, key, Some(root)), &h.local) {
        (None, Some(l)) => bcast_on(l, MY, lroot, dst, None, CALL),
        (Some(x), None) => bcast_on(&x, MY, g_root, dst, None, CALL),
        (Some(x), Some(l)) => {
            // The root sends at once; another representative receives
            // before it writes for its group.
            finish(shmsmall::blocking(|| {
                bcast_on(&x, MY, g_root, &mut *dst, None, CALL)
            }))?;
            bcast_on(l, MY, lroot, dst, None, CALL)
        }
        (None, None) => unreachable!("a member alone in its group represents it"),
    };
    Ok(fin(stage, out))
}

/// Whether a reduction with `op` may combine by groups: it commutes.
pub(crate) fn reduces(op: &ReduceOp) -> bool {
    op.is_commutative()
}

/// Hierarchical reduce-to-one (`a`: the checked arguments over the
/// whole team).
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce_to_one<'a>(
    a: &ReduceArgs,
    h: Arc<Hier>,
    root: Rank,
    dst: Option<&'a mut [u8]>,
    src: Option<&'a [u8]>,
    dt: Dt,
    dt_sz: usize,
    op: &ReduceOp,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_ReduceToOneNB (between neighbourhoods)";
    let t = &a.t;
    let key = t.next_key();
    let out = out_key(t, a.mode);
    let cnt = a.nbytes / dt_sz;
    let g_root = h.group[root as usize];
    let lroot = h.local_rank[h.rep(h.mine, Some(root)) as usize];
    let args = |team: &Arc<TeamInfo>, r: u32| {
        reduce_args(team.clone(), MY, "reduce_to_one", r, dt, dt_sz, cnt, op)
    };
    let Some(x) = h.reps(t, key, Some(root)) else {
        // A member of a group that sends its operand to the
        // representative.
        let l = h.local.as_ref().expect("a non-representative has a group");
        let s = reduce_one_on(args(l, lroot), lroot, None, src, dt, dt_sz, op, CALL);
        return Ok(fin(s, out));
    };
    if t.me == root {
        let d = dst.expect("the root has a dst");
        match (&h.local, src) {
            (Some(l), _) => finish(shmsmall::blocking(|| {
                reduce_one_on(
                    args(l, lroot),
                    lroot,
                    Some(&mut *d),
                    src,
                    dt,
                    dt_sz,
                    op,
                    CALL,
                )
            }))?,
            (None, Some(s)) => d.copy_from_slice(s),
            (None, None) => {}
        }
        // The group's result, in place, reduced with the other groups'.
        let s = reduce_one_on(args(&x, g_root), g_root, Some(d), None, dt, dt_sz, op, CALL);
        return Ok(fin(s, out));
    }
    let src = src.expect("checked: members other than the root pass src");
    let mut acc = vec![0u8; a.nbytes];
    match &h.local {
        Some(l) => finish(shmsmall::blocking(|| {
            reduce_one_on(
                args(l, lroot),
                lroot,
                Some(&mut acc),
                Some(src),
                dt,
                dt_sz,
                op,
                CALL,
            )
        }))?,
        None => acc.copy_from_slice(src),
    }
    finish(reduce_one_on(
        args(&x, g_root),
        g_root,
        None,
        Some(&acc),
        dt,
        dt_sz,
        op,
        CALL,
    ))?;
    Ok(fin(CollHandle::INVALID, out))
}

/// Hierarchical reduce-to-all.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce_to_all<'a>(
    a: &ReduceArgs,
    h: Arc<Hier>,
    dst: &'a mut [u8],
    src: Option<&'a [u8]>,
    dt: Dt,
    dt_sz: usize,
    op: &ReduceOp,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_ReduceToAllNB (between neighbourhoods)";
    let t = &a.t;
    let key = t.next_key();
    let out = out_key(t, a.mode);
    let cnt = a.nbytes / dt_sz;
    let local_args =
        |l: &Arc<TeamInfo>| reduce_args(l.clone(), MY, "reduce_to_one", 0, dt, dt_sz, cnt, op);
    let Some(x) = h.reps(t, key, None) else {
        let l = h.local.as_ref().expect("a non-representative has a group");
        {
            let input: &[u8] = src.unwrap_or(&*dst);
            finish(reduce_one_on(
                local_args(l),
                0,
                None,
                Some(input),
                dt,
                dt_sz,
                op,
                CALL,
            ))?;
        }
        return Ok(fin(bcast_on(l, MY, 0, dst, None, CALL), out));
    };
    let xargs = reduce_args(x.clone(), MY, "reduce_to_all", 0, dt, dt_sz, cnt, op);
    match (&h.local, src) {
        (Some(l), _) => finish(shmsmall::blocking(|| {
            reduce_one_on(local_args(l), 0, Some(&mut *dst), src, dt, dt_sz, op, CALL)
        }))?,
        (None, Some(s)) => dst.copy_from_slice(s),
        (None, None) => {}
    }
    let Some(l) = &h.local else {
        return Ok(fin(
            reduce_all_on(xargs, dst, None, dt, dt_sz, op, CALL),
            out,
        ));
    };
    finish(reduce_all_on(xargs, &mut *dst, None, dt, dt_sz, op, CALL))?;
    Ok(fin(bcast_on(l, MY, 0, dst, None, CALL), out))
}

/// How the lowest member of a group learns that the others arrived, and
/// how it releases them.
enum Local {
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
struct Pending {
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
            self.between = Some(barrier_event(&self.reps, BARRIER));
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
struct Queue {
    q: VecDeque<Pending>,
    /// How many from the front have their barrier between groups
    /// started.
    started: usize,
}

static PENDING: Mutex<Queue> = Mutex::new(Queue {
    q: VecDeque::new(),
    started: 0,
});

/// Barriers in [`PENDING`], readable without its lock: the progress hook
/// runs in every poll of every wait, hierarchy or not, and an idle one
/// takes no lock (the lock was 6-22% of a waiting rank's samples).
static PENDING_LEN: AtomicUsize = AtomicUsize::new(0);

const BARRIER: &str = "gex_Coll_BarrierNB (between neighbourhoods)";

/// Advances the lowest members' barriers (the layer's progress hook, and
/// a test of their handles); how many were released. Looks at each
/// barrier once to start it and then only at the front: 2^16 barriers in
/// flight cost no more per poll than one.
pub(crate) fn progress() -> usize {
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
                drop(barrier_event(l, BARRIER));
                barrier_event(l, BARRIER)
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
                first: barrier_event(l, BARRIER),
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
    progress();
    let mut h = CollHandle::pending(c).shm_poke();
    if h.finished() {
        return CollHandle::INVALID;
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No local team's id is a representatives' team's (of the same team
    /// or another): with the tag last, neighbourhood 4's local team had
    /// the id of operation 3's representatives, whose messages then met
    /// the local team's own.
    #[test]
    fn local_and_representatives_ids_differ() {
        let mut seen = std::collections::HashSet::new();
        for team in [0u64, 1, 3, 4, 0x9E37_79B9_7F4A_7C15] {
            for x in 0..256u32 {
                assert!(seen.insert(local_team_id(team, x)), "local {team} {x}");
                assert!(seen.insert(reps_team_id(team, x)), "reps {team} {x}");
            }
        }
    }
}
