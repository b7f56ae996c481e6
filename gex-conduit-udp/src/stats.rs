//! Statistics: the protocol's counters and the conduit's.

use gex_conduit::stats::{ConduitStats, Counter, PeerCounters};

use crate::{proto, UdpConduit};

impl UdpConduit {
    /// Protocol counters, for tests and diagnostics.
    pub fn stats(&self) -> proto::Stats {
        self.link
            .net
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .ep
            .stats()
    }

    /// `Conduit::stats`: the protocol's counters, the one-sided ones and
    /// the settings in effect, and per peer reached over UDP.
    pub(crate) fn conduit_stats(&self) -> ConduitStats {
        let p = UdpConduit::stats(self);
        let (max_datagram, window) = {
            let net = self.link.net.lock().unwrap_or_else(|p| p.into_inner());
            let cfg = net.ep.config();
            (cfg.max_datagram as u64, cfg.window as u64)
        };
        let (rma_puts, rma_gets, rma_served) = self.link.ops.counts();
        let (atomics, atomics_served) = self.link.ops.atomic_counts();
        let mut st = ConduitStats::new("udp");
        st.counters = [
            ("datagrams_sent", p.datagrams_sent),
            ("data_sent", p.data_sent),
            ("retransmits", p.retransmits),
            ("fast_retransmits", p.fast_retransmits),
            ("rto_expirations", p.rto_expirations),
            ("acks_sent", p.acks_sent),
            ("acks_piggybacked", p.acks_piggybacked),
            ("datagrams_received", p.datagrams_received),
            ("duplicates_dropped", p.duplicates_dropped),
            ("dropped_bad_key", p.dropped_bad_key),
            ("dropped_bad_mac", p.dropped_bad_mac),
            ("dropped_bad_source", p.dropped_bad_source),
            ("dropped_malformed", p.dropped_malformed),
            ("dropped_misaddressed", p.dropped_misaddressed),
            ("out_of_window_dropped", p.out_of_window_dropped),
            ("refused_data", p.refused_data),
            ("messages_sent", p.messages_sent),
            ("messages_delivered", p.messages_delivered),
            ("heartbeats_sent", p.heartbeats_sent),
            ("byes_received", p.byes_received),
            ("rma_puts", rma_puts),
            ("rma_gets", rma_gets),
            ("rma_served", rma_served),
            ("atomics", atomics),
            ("atomics_served", atomics_served),
            // Settings in effect, not counts: the largest datagram and the
            // window (datagrams in flight per peer and lane).
            ("max_datagram", max_datagram),
            ("window", window),
        ]
        .into_iter()
        .map(|(name, value)| Counter::new(name, value))
        .collect();
        // Per peer, for the peers reached over UDP.
        let net = self.link.net.lock().unwrap_or_else(|p| p.into_inner());
        st.peers = (0..net.ep.npeers())
            .filter(|&r| r != self.me && !self.smp.contains(r))
            .map(|r| {
                let c = net.ep.peer_stats(r);
                let counters = [
                    ("messages_sent", c.messages_sent),
                    ("data_sent", c.data_sent),
                    ("retransmits", c.retransmits),
                    ("datagrams_received", c.datagrams_received),
                    ("duplicates_dropped", c.duplicates_dropped),
                    ("refused_data", c.refused_data),
                ]
                .into_iter()
                .map(|(name, value)| Counter::new(name, value))
                .collect();
                PeerCounters::new(r, counters)
            })
            .collect();
        st
    }
}
