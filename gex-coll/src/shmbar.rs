//! The EX barrier (`gex_Coll_BarrierNB`) over shared memory, for teams
//! whose members all share this process's neighbourhood.
//!
//! # Channels
//!
//! Each team of that kind owns one channel of the neighbourhood's area
//! (`crate::shm`) while it lives: channel 0 is the primordial team's, and a
//! derived team takes the lowest channel that is free on every member
//! (members report their free channels in the records that team
//! construction gathers anyway, then claim the channel and exchange the
//! current value of their counter in it; if any member could not claim it,
//! every member releases it and the team uses Active Messages). Each
//! member's slot in a channel holds a counter that only that member writes
//! and that never decreases, even across the teams that own the channel in
//! turn: so a team records, at creation, every member's counter (`base`),
//! and its `k`-th barrier is complete on a member once every member's
//! counter has reached `base + k`.
//!
//! # Ordering
//!
//! A member enters barrier `k` by storing `base + k` in its slot with
//! release ordering, after every write the calling thread made before the
//! call; the barrier completes when an acquire load has seen every member's
//! counter at `base + k` or beyond, made by the thread that syncs the
//! handle. So writes before the barrier on any member are visible
//! after it on every member, as the spec requires. Several barriers may be
//! in flight over one team (they complete in order) and over any number of
//! teams.
//!
//! # Progress
//!
//! A barrier that is not complete at initiation is a `CollHandle` holding
//! the team and the episode; whichever thread tests or waits on it looks
//! at the counters itself (nothing is kept per thread, so the handle may
//! move between threads). Nothing happens in AM handlers or the progress
//! hook.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};

use crate::engine::lock;
use crate::shm::{self, CHANNELS};
use crate::shmsmall::SmallTeam;

/// One team's view of its channel.
pub(crate) struct ShmTeam {
    /// Every member's counter, in team-rank order.
    counters: Box<[&'static AtomicU64]>,
    /// Every member's counter when the team was created.
    base: Box<[u64]>,
    /// This process's team rank.
    me: usize,
    /// The channel, released when the team is destroyed.
    pub(crate) channel: usize,
    /// Barriers initiated over the team by this member.
    entered: AtomicU64,
    /// The small data collectives' view of the channel.
    pub(crate) small: SmallTeam,
}

impl ShmTeam {
    /// The team over `members` (jobranks in rank order, all in this
    /// neighbourhood), whose member `me` is this process, on channel `ch`
    /// with the counters `base` had at creation.
    pub(crate) fn new(members: &[gex_types::Rank], me: usize, ch: usize, base: Vec<u64>) -> Self {
        let area = shm::area().expect("a shared-memory team needs the area");
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

    /// Whether every member from `*from` on has entered barrier `k`;
    /// advances `*from` past those that have.
    #[inline]
    pub(crate) fn arrived(&self, k: u64, from: &mut usize) -> bool {
        while *from < self.counters.len() {
            // Acquire: pairs with the member's release store at entry.
            if self.counters[*from].load(Ordering::Acquire) < self.base[*from] + k {
                return false;
            }
            *from += 1;
        }
        true
    }

    /// Enters the next barrier. Returns `None` if it is already complete,
    /// else the episode to wait for and how many members (in rank order)
    /// had arrived; the handle looks again until they all have.
    ///
    /// The counter is stored, not incremented atomically: a
    /// read-modify-write would wait for the line, which a peer just read,
    /// to be owned again. Collective calls over a team are made in one
    /// order by the member, so two threads never enter one team's
    /// barriers at once.
    pub(crate) fn enter(&self) -> Option<(u64, usize)> {
        // Not a read-modify-write: one thread at a time enters (above).
        let k = self.entered.load(Ordering::Relaxed) + 1;
        self.entered.store(k, Ordering::Relaxed);
        // Release: the writes before the barrier go with the counter.
        self.counters[self.me].store(self.base[self.me] + k, Ordering::Release);
        let mut from = 0;
        if self.arrived(k, &mut from) {
            return None;
        }
        Some((k, from))
    }

    /// Reserves this member's next barrier without entering it: the
    /// lowest member of a group in a hierarchical barrier (`crate::hier`)
    /// waits for the others ([`ShmTeam::others_arrived`]) and enters it
    /// later ([`ShmTeam::publish`]), in order.
    pub(crate) fn reserve(&self) -> u64 {
        // Not a read-modify-write: one thread at a time enters (above).
        let k = self.entered.load(Ordering::Relaxed) + 1;
        self.entered.store(k, Ordering::Relaxed);
        k
    }

    /// [`ShmTeam::arrived`] for every member but this one.
    pub(crate) fn others_arrived(&self, k: u64, from: &mut usize) -> bool {
        while *from < self.counters.len() {
            // Acquire: pairs with the member's release store at entry.
            if *from != self.me
                && self.counters[*from].load(Ordering::Acquire) < self.base[*from] + k
            {
                return false;
            }
            *from += 1;
        }
        true
    }

    /// Enters barrier `k`, reserved earlier (every barrier before it is
    /// entered already).
    pub(crate) fn publish(&self, k: u64) {
        // Release: the writes before the barrier go with the counter.
        self.counters[self.me].store(self.base[self.me] + k, Ordering::Release);
    }

    /// [`ShmTeam::arrived`], looking a few more times before giving up
    /// when every rank of the host has a core: a look costs less than the
    /// poll the caller makes next, and the last arrival is seen sooner
    /// (when ranks share cores the waiter yields instead).
    #[inline]
    pub(crate) fn arrived_spin(&self, k: u64, from: &mut usize) -> bool {
        if self.arrived(k, from) {
            return true;
        }
        if !*OVERSUBSCRIBED {
            for _ in 0..RELOOKS {
                std::hint::spin_loop();
                if self.arrived(k, from) {
                    return true;
                }
            }
        }
        false
    }
}

/// Extra looks at a pending barrier per test.
const RELOOKS: u32 = 16;

/// Whether this host runs more ranks than it has cores.
pub(crate) static OVERSUBSCRIBED: LazyLock<bool> = LazyLock::new(|| {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    gex_core::Runtime::get().is_some_and(|rt| rt.conduit().layout().host.len() > cores)
});

/// How long a waiter spins, with a core per rank, before it starts
/// yielding its core: several times what a 64 KiB operation takes when
/// both sides run, far less than a scheduler's time slice (when the
/// member waited for shares this core with it, for instance because
/// other processes took the rest, each wait costs this long: spinning
/// for 2000 polls, about 600 us, made a 64 KiB broadcast take that per
/// operation on a loaded machine).
const SPIN_FOR: std::time::Duration = std::time::Duration::from_micros(20);

/// Looks at the condition between two polls, with a core per rank.
const LOOKS: u32 = 32;

/// The shared-memory collectives' one wait (`crate::shmsmall`'s inline
/// slots, `crate::shmdata`'s chunks): polls until `cond` holds. With a
/// core per rank it looks [`LOOKS`] times between polls (a poll runs
/// every layer's progress, far longer than a look at one line, so a
/// change is seen sooner) and, once it has waited [`SPIN_FOR`], yields
/// after every idle poll (the member waited for has probably lost its
/// core); when ranks share cores it looks once and yields after every
/// idle poll (the member waited for may need this core). Those yields are
/// the `SpinBlock` wait mode's; `Spin` never yields, `Block` after every
/// idle poll (`gex_core::Runtime::idle_pause`).
pub(crate) fn wait_until(rt: &gex_core::Runtime, mut cond: impl FnMut() -> bool) {
    if cond() {
        return;
    }
    let over = *OVERSUBSCRIBED;
    let looks = if over { 1 } else { LOOKS };
    let t0 = std::time::Instant::now();
    let mut patient = !over;
    loop {
        for _ in 0..looks {
            if cond() {
                return;
            }
            std::hint::spin_loop();
        }
        if rt.progress() > 0 {
            continue;
        }
        if patient && t0.elapsed() >= SPIN_FOR {
            patient = false;
        }
        // The wait mode decides (`gasnet_set_waitmode`): by default a
        // yield once the spin time is over.
        gex_core::Runtime::idle_pause(!patient);
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
