//! Statistics: the conduit's counters.

use std::sync::atomic::{AtomicU64, Ordering};

use gex_conduit::stats::{ConduitStats, Counter};

use crate::IbvConduit;

#[derive(Default)]
pub(crate) struct Counts {
    pub(crate) sends: AtomicU64,
    pub(crate) received: AtomicU64,
    pub(crate) rdma_writes: AtomicU64,
    pub(crate) rdma_reads: AtomicU64,
    pub(crate) atomics: AtomicU64,
    pub(crate) credit_writes: AtomicU64,
    pub(crate) credit_waits: AtomicU64,
    pub(crate) rma_puts: AtomicU64,
    pub(crate) rma_gets: AtomicU64,
    pub(crate) rma_served: AtomicU64,
    pub(crate) long_pieces: AtomicU64,
    pub(crate) grants: AtomicU64,
}

impl IbvConduit {
    /// `Conduit::stats`: the counters and the settings in effect.
    pub(crate) fn conduit_stats(&self) -> ConduitStats {
        let c = &self.counts;
        let mut st = ConduitStats::new("ibv");
        st.counters = [
            ("sends", c.sends.load(Ordering::Relaxed)),
            ("received", c.received.load(Ordering::Relaxed)),
            ("rdma_writes", c.rdma_writes.load(Ordering::Relaxed)),
            ("rdma_reads", c.rdma_reads.load(Ordering::Relaxed)),
            ("atomics", c.atomics.load(Ordering::Relaxed)),
            ("credit_writes", c.credit_writes.load(Ordering::Relaxed)),
            ("credit_waits", c.credit_waits.load(Ordering::Relaxed)),
            ("rma_puts", c.rma_puts.load(Ordering::Relaxed)),
            ("rma_gets", c.rma_gets.load(Ordering::Relaxed)),
            ("rma_served", c.rma_served.load(Ordering::Relaxed)),
            ("long_pieces", c.long_pieces.load(Ordering::Relaxed)),
            ("credit_grants", c.grants.load(Ordering::Relaxed)),
            ("credits", self.credits as u64),
            ("buf", self.buf as u64),
            ("srq", u64::from(self.srq.is_some())),
            ("recv_bufs", self.budget.bufs as u64),
            ("window0", self.budget.window0),
        ]
        .into_iter()
        .chain(self.sim.as_ref().map(|d| ("sim_rnr_waits", d.rnr_waits())))
        .map(|(n, v)| Counter::new(n, v))
        .collect();
        st
    }
}
