//! Teams: the registry of the teams gex-coll knows (`TeamInfo`, hung on
//! the `gex_core::Tm`), with each team's shared-memory channel view and
//! its grouping by neighbourhood ([`groups`]). The constructors and the
//! destructor are `crate::teams`'.
//!
//! Layer: bottom (with the engine and the shared area, which it uses).
//!
//! Every team has a 64-bit id, equal on all members and distinct between
//! teams: 0 for the primordial team; for a derived team, a hash of the
//! parent's id, the sequence number of the constructing call on the parent
//! (the same on every member, as collective calls are made in the same
//! order) and what tells the teams of that call apart (the colour of a
//! split, the first member of a created team). Collective operations are
//! keyed by (team id, per-team sequence number).
//!
//! gex-coll's view of a team (`TeamInfo`) hangs on the `gex_core::Tm`
//! itself, in its layer-state slot, which every clone shares: finding it
//! takes no lock and no lookup, and it lives as long as the team object.
//! `tm_destroy` marks it destroyed, so that a clone used afterwards gets
//! an error. The primordial team's lives in a static.
//!
//! A team whose members all share this process's neighbourhood also gets
//! a channel of the shared-memory area for its barriers (`crate::shmbar`),
//! agreed at construction: members report their free channels in the
//! construction records, then claim the lowest one free everywhere and
//! exchange their counters in it over the new team.

mod groups;

pub(crate) use groups::Hier;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use gex_core::internals::*;
use gex_core::Tm;
use gex_types::{Error, Rank, Result};

use crate::area::{self, ShmTeam};
use crate::engine::Key;

/// A team as gex-coll knows it.
pub(crate) struct TeamInfo {
    pub(crate) id: u64,
    /// Jobrank of each member, in team-rank order.
    pub(crate) members: Arc<[Rank]>,
    /// This process's team rank.
    pub(crate) me: u32,
    seq: AtomicU32,
    /// Client-provided scratch: (offset in the bound segment, length).
    scratch: Option<(usize, usize)>,
    /// The shared-memory barrier channel, when every member shares this
    /// neighbourhood and one was free on all of them.
    shm: OnceLock<Arc<ShmTeam>>,
    /// The hierarchy of a team spanning several neighbourhoods
    /// (`crate::hier`), set at construction.
    hier: OnceLock<Arc<Hier>>,
    /// Set by `tm_destroy`.
    destroyed: AtomicBool,
}

impl TeamInfo {
    /// The key of the next collective call over this team.
    pub(crate) fn next_key(&self) -> Key {
        (self.id, self.seq.fetch_add(1, Ordering::Relaxed))
    }

    pub(crate) fn size(&self) -> u32 {
        self.members.len() as u32
    }

    /// The team's shared-memory barrier channel, if it has one.
    pub(crate) fn shm_channel(&self) -> Option<usize> {
        self.shm.get().map(|s| s.channel)
    }

    /// The team's shared-memory channel, if it has one.
    pub(crate) fn shm_team(&self) -> Option<&Arc<ShmTeam>> {
        self.shm.get()
    }

    /// Whether the team's barriers use its shared-memory channel.
    pub(crate) fn uses_shared_memory(&self) -> bool {
        self.shm.get().is_some()
    }

    /// The team's hierarchy, if it spans several neighbourhoods.
    #[inline]
    pub(crate) fn hier(&self) -> Option<&Arc<Hier>> {
        self.hier.get()
    }

    /// Gives the team its shared-memory channel (at construction; a
    /// second call is ignored).
    pub(crate) fn set_shm(&self, s: ShmTeam) {
        let _ = self.shm.set(Arc::new(s));
    }

    /// Gives the team its hierarchy (at construction; a second call is
    /// ignored).
    pub(crate) fn set_hier(&self, h: Hier) {
        let _ = self.hier.set(Arc::new(h));
    }

    /// Marks the team destroyed (`tm_destroy`): its `Tm` no longer finds
    /// it.
    pub(crate) fn mark_destroyed(&self) {
        self.destroyed.store(true, Ordering::Relaxed);
    }

    /// The client-provided scratch: (offset in the bound segment, length).
    pub(crate) fn scratch(&self) -> Option<(usize, usize)> {
        self.scratch
    }

    /// A team of gex-coll's own, with no `Tm` (a neighbourhood's part of a
    /// team, or the representatives of one hierarchical operation,
    /// `crate::hier`): `id` must be distinct from every other team's, and
    /// the same on every member.
    pub(crate) fn internal(id: u64, members: Arc<[Rank]>, me: u32) -> TeamInfo {
        TeamInfo {
            id,
            members,
            me,
            seq: AtomicU32::new(0),
            scratch: None,
            shm: OnceLock::new(),
            hier: OnceLock::new(),
            destroyed: AtomicBool::new(false),
        }
    }
}

static PRIMORDIAL: OnceLock<Arc<TeamInfo>> = OnceLock::new();

/// The primordial team's shared-memory channel, if it has one (the job
/// is one neighbourhood).
pub(crate) fn primordial_shm() -> Option<&'static Arc<ShmTeam>> {
    PRIMORDIAL.get().and_then(|t| t.shm.get())
}

/// What gex-coll hangs on a `Tm` (its layer state).
struct TeamSlot(Arc<TeamInfo>);

/// The team behind `tm`, or an error naming `call`.
pub(crate) fn team_of(tm: &Tm, call: &str) -> Result<Arc<TeamInfo>> {
    team_ref(tm, call).cloned()
}

/// [`team_of`] without taking a reference count (for the barrier's fast
/// path).
#[inline]
pub(crate) fn team_ref<'a>(tm: &'a Tm, call: &str) -> Result<&'a Arc<TeamInfo>> {
    if tm.is_primordial() {
        return Ok(PRIMORDIAL.get_or_init(|| primordial(tm)));
    }
    match tm.existing_layer_state::<TeamSlot>() {
        Some(TeamSlot(t)) if !t.destroyed.load(Ordering::Relaxed) => Ok(t),
        _ => Err(no_team(call)),
    }
}

#[cold]
fn no_team(call: &str) -> Error {
    Error::bad_arg(format!(
        "{call}: the team was destroyed, or was not created by gex_coll::tm_split / tm_create"
    ))
}

/// The primordial team: channel 0 of the area, every counter starting at
/// 0, when the whole job shares one neighbourhood.
fn primordial(tm: &Tm) -> Arc<TeamInfo> {
    let members: Arc<[Rank]> = (0..tm.size()).collect();
    let t = TeamInfo {
        id: 0,
        me: tm.rank(),
        seq: AtomicU32::new(0),
        scratch: None,
        shm: OnceLock::new(),
        hier: OnceLock::new(),
        destroyed: AtomicBool::new(false),
        members,
    };
    if t.size() > 1 && area::area().is_some_and(|a| a.whole_job()) {
        let base = vec![0; t.members.len()];
        let _ = t
            .shm
            .set(Arc::new(ShmTeam::new(&t.members, t.me as usize, 0, base)));
    } else if let Some(h) = Hier::plan(&t) {
        // Spanning neighbourhoods: each neighbourhood's part (all of its
        // ranks) takes channel 0, which the primordial team does not use
        // when it is not one neighbourhood and no other team may claim;
        // the counters are as created (zero). Set up without an exchange:
        // every rank decides the same.
        let local = h.local_members().map(|(members, me)| {
            let lt = TeamInfo::internal(h.local_id(0), members, me);
            let base = vec![0; lt.members.len()];
            let _ = lt
                .shm
                .set(Arc::new(ShmTeam::new(&lt.members, me as usize, 0, base)));
            Arc::new(lt)
        });
        let _ = t.hier.set(Arc::new(h.with_local(local)));
    }
    Arc::new(t)
}

pub(crate) fn register(
    tm: &Tm,
    id: u64,
    members: Arc<[Rank]>,
    scratch: Option<(usize, usize)>,
) -> Result<Arc<TeamInfo>> {
    let info = Arc::new(TeamInfo {
        id,
        members,
        me: tm.rank(),
        seq: AtomicU32::new(0),
        scratch,
        shm: OnceLock::new(),
        hier: OnceLock::new(),
        destroyed: AtomicBool::new(false),
    });
    let slot = tm.layer_state(|| Arc::new(TeamSlot(info.clone())));
    match slot {
        Some(TeamSlot(t)) if Arc::ptr_eq(t, &info) => Ok(info),
        _ => Err(Error::bad_arg(
            "gex-coll: the new team object already carries another layer's state",
        )),
    }
}
