//! The EX barrier (`gex_Coll_BarrierNB`) over shared memory, for teams
//! whose members all share this process's neighbourhood.
//!
//! # Channels
//!
//! Each team of that kind owns one channel of the neighbourhood's area
//! (`crate::area`) while it lives: channel 0 is the primordial team's, and a
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
//!
//! Layer: a mechanism. Uses the shared area (the channel views, whose
//! state this module's protocol drives), the AM mechanism (the barrier of
//! a team without a channel, `flat_barrier`), the handles and the
//! registry.

use std::sync::atomic::Ordering;

use crate::am::am_barrier;
use crate::area::{ShmTeam, OVERSUBSCRIBED};
use crate::handle::{CollHandle, Mechanism};
use crate::team::TeamInfo;

/// A barrier's handle looks at the members' counters itself.
impl Mechanism for ShmTeam {
    #[inline]
    fn arrived(&self, k: u64, from: &mut usize) -> bool {
        self.arrived_spin(k, from)
    }
}

/// The barrier protocol over a team's channel (its state is the shared
/// area's, `crate::area::ShmTeam`).
impl ShmTeam {
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

/// Enters a barrier over `t`, a team without a hierarchy: over its
/// shared-memory channel if it has one, else dissemination over Active
/// Messages ([`crate::am::am_barrier`]). `INVALID` if complete at once.
pub(crate) fn flat_barrier(t: &TeamInfo, call: &'static str) -> CollHandle<'static> {
    // Every member of a team takes the same path, so the shared-memory one
    // need not number its barriers in the team's sequence of AM operations.
    if let Some(s) = t.shm_team() {
        return match s.enter() {
            None => CollHandle::INVALID,
            Some((k, from)) => CollHandle::shm_barrier(s.clone(), k, from),
        };
    }
    am_barrier(t, t.next_key(), call)
}
