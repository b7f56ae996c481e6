//! The channels of the shared area ([`crate::area`]): which are free in
//! this process, and a team's view of the one it owns (`ShmTeam`, with the
//! small-data collectives' view, `SmallTeam`). The protocols over them are
//! the mechanisms' (`crate::shmbar`, `crate::shm`); this module holds only
//! their state. Uses `crate::engine` (its lock) and the area.

use std::sync::atomic::AtomicU64;
use std::sync::Mutex;

use super::{CHANNELS, SMALL_DEPTH};
use crate::engine::lock;

/// One team's view of its channel.
pub(crate) struct ShmTeam {
    /// Every member's counter, in team-rank order.
    pub(crate) counters: Box<[&'static AtomicU64]>,
    /// Every member's counter when the team was created.
    pub(crate) base: Box<[u64]>,
    /// This process's team rank.
    pub(crate) me: usize,
    /// The channel, released when the team is destroyed.
    pub(crate) channel: usize,
    /// Barriers initiated over the team by this member.
    pub(crate) entered: AtomicU64,
    /// The small data collectives' view of the channel.
    pub(crate) small: SmallTeam,
}

impl ShmTeam {
    /// The team over `members` (jobranks in rank order, all in this
    /// neighbourhood), whose member `me` is this process, on channel `ch`
    /// with the counters `base` had at creation.
    pub(crate) fn new(members: &[gex_types::Rank], me: usize, ch: usize, base: Vec<u64>) -> Self {
        let area = super::area().expect("a shared-memory team needs the area");
        let locals: Box<[usize]> = members
            .iter()
            .map(|&j| {
                area.local_index(j)
                    .expect("every member shares the neighbourhood")
            })
            .collect();
        let counters = locals.iter().map(|&l| area.counter(ch, l)).collect();
        ShmTeam {
            small: SmallTeam::new(ch, locals, me),
            counters,
            base: base.into(),
            me,
            channel: ch,
            entered: AtomicU64::new(0),
        }
    }
}

/// One team's view of its small-message regions.
pub(crate) struct SmallTeam {
    /// Local index (in the neighbourhood) of each member, by team rank.
    pub(crate) locals: Box<[usize]>,
    /// This process's team rank.
    pub(crate) me: usize,
    /// Small operations started over the team by this member.
    pub(crate) started: AtomicU64,
    /// Start of each member's region, by team rank (addresses inside the
    /// area, which stays mapped for the life of the process): computed
    /// once, as every operation looks them up several times.
    pub(crate) regions: Box<[usize]>,
    /// Whether this is the primordial team's view on a job that is one
    /// neighbourhood (the team that also has the chunked path).
    pub(crate) primordial: bool,
    /// The last acknowledgements this member read, `n * DEPTH` (member
    /// `m`, slot `j` at `m * DEPTH + j`). Written by the initiating thread
    /// and, for the reserved operations of a hierarchy's local team
    /// (`crate::shm::small::Reserved`), by whichever thread advances them: a copy only
    /// ever holds a value its counter had, so a stale one costs a look,
    /// never a wrong answer.
    pub(crate) seen: Box<[AtomicU64]>,
}

impl SmallTeam {
    /// The view of the team whose members have local indexes `locals`, of
    /// which this process is `me`, on channel `ch`.
    pub(crate) fn new(ch: usize, locals: Box<[usize]>, me: usize) -> Self {
        let n = locals.len();
        let area = super::area().expect("a team with a channel has the area");
        SmallTeam {
            regions: locals
                .iter()
                .map(|&l| area.small_region(ch, l) as usize)
                .collect(),
            primordial: ch == 0 && area.whole_job(),
            locals,
            me,
            started: AtomicU64::new(0),
            seen: (0..n * SMALL_DEPTH).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

/// This process's free channels (bit `c` set: channel `c` is free).
static FREE: Mutex<u64> = Mutex::new(!1u64);

const _: () = assert!(CHANNELS == 64);

/// The channels free here now, for a team-construction record.
pub(crate) fn free_channels() -> u64 {
    *lock(&FREE)
}

/// Claims channel `ch`; false if it is taken (by a team built meanwhile
/// by another thread).
pub(crate) fn claim(ch: usize) -> bool {
    let mut f = lock(&FREE);
    let bit = 1u64 << ch;
    let free = *f & bit != 0;
    *f &= !bit;
    free
}

/// Releases channel `ch` (its team is destroyed or did not get it).
pub(crate) fn release(ch: usize) {
    if ch != 0 {
        *lock(&FREE) |= 1u64 << ch;
    }
}
