//! gex-conduit-smp: the shared-memory conduit.
//!
//! Every rank of the job runs on one host. Each rank owns one
//! shared-memory object of AM queues: for every sender, a request ring and a
//! reply ring ([`ring`], single producer, single consumer). Senders write
//! records straight into the receiver's ring; the receiver runs handlers on
//! the record in place. Long payloads are copied by the sender straight into
//! the target's segment, which every rank maps, before the record is
//! published. A full ring is backpressure: an `IMMEDIATE` injection returns
//! `NoOp`, any other polls until there is room (replies poll replies only,
//! so request handlers never nest).
//!
//! Shared-memory objects have no names ([`gex_conduit::shm`]: memfds that
//! peers open through `/proc/<pid>/fd`), so a crash at any moment leaks
//! nothing.
//!
//! The rings and mappings are the [`SmpTransport`], which network conduits
//! embed for the ranks of their neighbourhood (the "bypass").

mod lock;
pub mod ring;
mod transport;

pub use transport::{hostname, SmpTransport, MAX_LONG, MAX_MEDIUM, RING_CAPACITY};

use gex_bootstrap::Bootstrap;
use gex_conduit::{
    send_or_progress, AmLimits, AmSink, Conduit, ConduitFactory, Injected, Layout, OutgoingAm,
    PollScope, SegmentDesc,
};
use gex_types::{AmCategory, Error, Rank, Result};

/// Creates the smp conduit.
#[derive(Clone, Copy, Debug, Default)]
pub struct SmpFactory;

impl ConduitFactory for SmpFactory {
    fn name(&self) -> &'static str {
        "smp"
    }

    fn create(&self, boot: Bootstrap) -> Result<Box<dyn Conduit>> {
        Ok(Box::new(SmpConduit::new(boot)?))
    }
}

/// The smp conduit: the shared-memory transport over the whole job.
#[derive(Debug)]
pub struct SmpConduit {
    boot: Bootstrap,
    layout: Layout,
    t: SmpTransport,
}

impl SmpConduit {
    /// Joins the job: checks that every rank runs on this host, then builds
    /// the transport over all of them. Collective over the job.
    pub fn new(boot: Bootstrap) -> Result<SmpConduit> {
        let hosts = boot.exchange(hostname().as_bytes(), &mut || {})?;
        if let Some((r, h)) = hosts.iter().enumerate().find(|(_, h)| **h != hosts[0]) {
            return Err(Error::resource(format!(
                "the smp conduit needs every rank on one host: rank 0 runs on {}, rank {r} on {} (use the udp conduit)",
                String::from_utf8_lossy(&hosts[0]),
                String::from_utf8_lossy(h)
            )));
        }
        let all: Vec<Rank> = (0..boot.size()).collect();
        let t = SmpTransport::new(&boot, &all)?;
        Ok(SmpConduit {
            boot,
            layout: Layout::new(all.clone(), all, (1, 0), (1, 0)),
            t,
        })
    }
}

impl Conduit for SmpConduit {
    fn name(&self) -> &'static str {
        "smp"
    }

    fn bootstrap(&self) -> &Bootstrap {
        &self.boot
    }

    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn am_limits(&self, _peer: Rank) -> AmLimits {
        SmpTransport::limits()
    }

    fn am_lub_limits(&self) -> AmLimits {
        SmpTransport::limits()
    }

    #[inline]
    fn am_send(
        &self,
        dest: Rank,
        msg: &OutgoingAm<'_>,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected> {
        let scope = PollScope::for_sender(msg.is_request);
        send_or_progress(
            immediate,
            || self.t.try_send(dest, msg),
            || {
                self.t.poll(sink, scope);
            },
        )
    }

    fn am_can_send(
        &self,
        dest: Rank,
        is_request: bool,
        category: AmCategory,
        nargs: usize,
        len: usize,
    ) -> bool {
        self.t.can_send(dest, is_request, category, nargs, len)
    }

    #[inline]
    fn poll(&self, sink: &dyn AmSink, scope: PollScope) -> usize {
        self.t.poll(sink, scope)
    }

    fn core_shared_with_spinner(&self) -> bool {
        self.t.core_shared_with_spinner()
    }

    fn max_segment_size(&self) -> usize {
        self.t.max_segment_size()
    }

    fn attach_segment(&self, size: usize, sink: &dyn AmSink) -> Result<Vec<SegmentDesc>> {
        self.t.attach_segment(&self.boot, size, &mut || {
            self.t.poll(sink, PollScope::All);
        })
    }
}
