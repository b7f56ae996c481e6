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
//! counter at `base + k` or beyond, and the event's completion (released
//! by the thread that saw it, acquired by the thread that syncs the event)
//! carries that on. So writes before the barrier on any member are visible
//! after it on every member, as the spec requires. Several barriers may be
//! in flight over one team (they complete in order) and over any number of
//! teams.
//!
//! # Progress
//!
//! A barrier that is not complete at initiation waits in the initiating
//! thread's pending list, which the layer's progress hook (run by every
//! gex-core wait, poll and test) scans in that thread; nothing happens in
//! AM handlers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use gex_core::Completion;

use crate::engine::lock;
use crate::shm::{self, CHANNELS};

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
}

impl ShmTeam {
    /// The team over `members` (jobranks in rank order, all in this
    /// neighbourhood), whose member `me` is this process, on channel `ch`
    /// with the counters `base` had at creation.
    pub(crate) fn new(members: &[gex_types::Rank], me: usize, ch: usize, base: Vec<u64>) -> Self {
        let area = shm::area().expect("a shared-memory team needs the area");
        let counters = members
            .iter()
            .map(|&j| {
                let local = area
                    .local_index(j)
                    .expect("every member shares the neighbourhood");
                area.counter(ch, local)
            })
            .collect();
        ShmTeam {
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
    fn arrived(&self, k: u64, from: &mut usize) -> bool {
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
    /// else the completion the progress hook will mark done.
    ///
    /// The counter is stored, not incremented atomically: a
    /// read-modify-write would wait for the line, which a peer just read,
    /// to be owned again. Collective calls over a team are made in one
    /// order by the member, so two threads never enter one team's
    /// barriers at once.
    pub(crate) fn enter(self: &Arc<Self>) -> Option<Arc<Completion>> {
        // Not a read-modify-write: one thread at a time enters (above).
        let k = self.entered.load(Ordering::Relaxed) + 1;
        self.entered.store(k, Ordering::Relaxed);
        // Release: the writes before the barrier go with the counter.
        self.counters[self.me].store(self.base[self.me] + k, Ordering::Release);
        let mut from = 0;
        if self.arrived(k, &mut from) {
            return None;
        }
        let c = completion();
        PENDING.with(|p| {
            let mut p = p.borrow_mut();
            p.push(Pending {
                team: self.clone(),
                k,
                from,
                c: c.clone(),
            });
            PENDING_N.set(p.len());
        });
        Some(c)
    }
}

thread_local! {
    /// The completion of this thread's last pending barrier, for reuse.
    static SPARE: std::cell::RefCell<Option<Arc<Completion>>> = const { std::cell::RefCell::new(None) };
}

/// A completion of one part: this thread's spare one if nothing else
/// refers to it any more (its event and pending entry are gone, so it is
/// complete and nobody can observe it being reset), else a new one. Saves
/// an allocation and a free per barrier.
fn completion() -> Arc<Completion> {
    SPARE.with(|s| {
        let mut s = s.borrow_mut();
        match s.as_ref() {
            Some(c) if Arc::strong_count(c) == 1 && c.is_complete() => {
                c.add(1);
                c.clone()
            }
            _ => {
                let c = Completion::new(1, None);
                *s = Some(c.clone());
                c
            }
        }
    })
}

/// A barrier not complete at initiation.
struct Pending {
    team: Arc<ShmTeam>,
    k: u64,
    from: usize,
    c: Arc<Completion>,
}

thread_local! {
    /// The barriers this thread entered that were not complete at once.
    /// Per thread, because an event is not `Send`: only the thread that
    /// initiated a barrier can test or wait on it, and so only its hook
    /// runs need to look (other members depend on this member's entry,
    /// made at initiation, never on its completion).
    static PENDING: std::cell::RefCell<Vec<Pending>> = const { std::cell::RefCell::new(Vec::new()) };
    /// `PENDING.len()`, read without borrowing.
    static PENDING_N: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The progress hook's part: completes this thread's pending barriers
/// that every member has entered; returns how many.
pub(crate) fn progress() -> usize {
    if PENDING_N.get() == 0 {
        return 0;
    }
    PENDING.with(|p| {
        let Ok(mut p) = p.try_borrow_mut() else {
            return 0;
        };
        let before = p.len();
        p.retain_mut(|b| {
            if b.team.arrived(b.k, &mut b.from) {
                b.c.done();
                false
            } else {
                true
            }
        });
        if p.len() == before && !*OVERSUBSCRIBED {
            // Nothing yet: look at the oldest barrier a few more times
            // before going back to poll, since a poll costs more than a
            // look and the last arrival is seen sooner (with a core per
            // rank; when ranks share cores the waiter yields instead).
            let b = &mut p[0];
            for _ in 0..RELOOKS {
                std::hint::spin_loop();
                if b.team.arrived(b.k, &mut b.from) {
                    b.c.done();
                    p.remove(0);
                    break;
                }
            }
        }
        PENDING_N.set(p.len());
        before - p.len()
    })
}

/// Extra looks at the oldest pending barrier per hook run.
const RELOOKS: u32 = 16;

/// Whether this host runs more ranks than it has cores.
static OVERSUBSCRIBED: LazyLock<bool> = LazyLock::new(|| {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    gex_core::Runtime::get().is_some_and(|rt| rt.conduit().layout().host.len() > cores)
});

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
