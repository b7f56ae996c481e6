//! Counters a conduit keeps, for users to read (`gex::stats()`, through
//! [`crate::Conduit::stats`]) and, with `GEX_STATS=1`, printed to standard
//! error when the process exits.
//!
//! Counters are plain named `u64`s, so a conduit can add one without
//! breaking anyone: a program reads the ones it knows with
//! [`ConduitStats::get`]. Some conduits count per peer as well
//! ([`ConduitStats::peers`]); a counter a conduit does not keep is absent,
//! never a made-up 0.

use gex_types::Rank;

/// One named counter.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Counter {
    /// A stable, snake_case name (e.g. `retransmits`).
    pub name: &'static str,
    /// Its value since the conduit was created.
    pub value: u64,
}

impl Counter {
    /// A counter.
    pub fn new(name: &'static str, value: u64) -> Counter {
        Counter { name, value }
    }
}

/// The counters a conduit keeps toward one peer.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PeerCounters {
    /// The peer's jobrank.
    pub rank: Rank,
    /// Its counters.
    pub counters: Vec<Counter>,
}

impl PeerCounters {
    /// The counters toward `rank`.
    pub fn new(rank: Rank, counters: Vec<Counter>) -> PeerCounters {
        PeerCounters { rank, counters }
    }

    /// The value of counter `name`, if kept.
    pub fn get(&self, name: &str) -> Option<u64> {
        find(&self.counters, name)
    }
}

/// A conduit's counters on this rank: totals, and per peer where the
/// conduit counts per peer.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConduitStats {
    /// The conduit's name.
    pub conduit: &'static str,
    /// Totals over every peer.
    pub counters: Vec<Counter>,
    /// Per-peer counters, for the peers the conduit counts separately
    /// (empty if it keeps none).
    pub peers: Vec<PeerCounters>,
}

fn find(counters: &[Counter], name: &str) -> Option<u64> {
    counters.iter().find(|c| c.name == name).map(|c| c.value)
}

impl ConduitStats {
    /// No counters yet, for conduit `conduit`.
    pub fn new(conduit: &'static str) -> ConduitStats {
        ConduitStats {
            conduit,
            counters: Vec::new(),
            peers: Vec::new(),
        }
    }

    /// The total of counter `name`, if the conduit keeps it.
    pub fn get(&self, name: &str) -> Option<u64> {
        find(&self.counters, name)
    }

    /// The counters toward peer `rank`, if kept.
    pub fn peer(&self, rank: Rank) -> Option<&PeerCounters> {
        self.peers.iter().find(|p| p.rank == rank)
    }

    /// A few lines for a person: the totals, then each peer's non-zero
    /// counters.
    pub fn summary(&self, rank: Rank) -> String {
        use std::fmt::Write;
        let mut s = format!("gex stats, rank {rank}, conduit {}:", self.conduit);
        if self.counters.is_empty() && self.peers.is_empty() {
            s.push_str(" (this conduit keeps no counters)");
        }
        for c in &self.counters {
            let _ = write!(s, " {}={}", c.name, c.value);
        }
        for p in &self.peers {
            let nonzero: Vec<_> = p.counters.iter().filter(|c| c.value != 0).collect();
            if nonzero.is_empty() {
                continue;
            }
            let _ = write!(s, "\n  peer {}:", p.rank);
            for c in nonzero {
                let _ = write!(s, " {}={}", c.name, c.value);
            }
        }
        s
    }
}
