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
//!
//!
//! # The path of an Active Message
//!
//! 1. `Conduit::am_send` (one dynamic call) locks the process-local producer
//!    of the ring "this rank -> target, requests", reserves a record, writes
//!    the 16-byte header (8 of the ring; 8 of the AM: category, destination
//!    endpoint, handler, argument count, payload length and source
//!    endpoint), the arguments and the Medium payload, or copies a Long
//!    payload straight into the target's mapped segment, and publishes the
//!    record with a release store of the ring's tail. A full ring is
//!    backpressure: with `IMMEDIATE` nothing is written and `Injected::NoOp`
//!    comes back; otherwise the sender polls (all queues for a request,
//!    reply queues only for a reply) and retries
//!    (`gex_conduit::send_or_progress`, which every conduit uses). A
//!    negotiated-payload Prepare with `IMMEDIATE` asks `Conduit::am_can_send`
//!    first (a hint, not a reservation).
//! 2. The target polls (`Runtime::progress`, called by every wait): for each
//!    inbound ring it compares the shared tail with the head it last
//!    consumed (kept in process memory, so an empty ring costs one read of
//!    one line), try-locks the consumer, and hands each record to the sink
//!    in place: the Medium payload is read straight out of the ring.
//! 3. A reply goes back through the "target -> sender, replies" ring, so a
//!    reply never waits behind requests, and a sender blocked on a full
//!    reply ring polls replies only, so request handlers never nest.
//! 4. The consumer hands consumed space back in batches (at the end of a
//!    drain, or every quarter ring), since storing the shared head per record
//!    would move its cache line once per message.
//!
//! # Memory
//!
//! Each rank creates one shared-memory object holding 2N rings of 256 KiB
//! (requests and replies from each sender; the counters of a ring sit 128
//! bytes apart, since x86 prefetches lines in pairs). The object is a memfd
//! (`gex_bootstrap::os::shm`; its name `gex-<job>-q<rank>` shows only in
//! `/proc/<pid>/fd`); the rank publishes its pid and descriptor number over
//! the control plane, peers open `/proc/<pid>/fd/<n>` (allowed to the same
//! user), check that the link names the memfd they were told about and that
//! its size matches, and map it. All ranks agree that they did, then the
//! creator closes its descriptor: a crash at any moment, of a rank or of the
//! launcher, leaks nothing. This works however the ranks were started, as
//! long as the ranks of a host share a pid namespace and `/proc`; otherwise
//! the agreement fails on every rank with a message naming the path.
//! Segments follow the same create / exchange / map / agree / close
//! sequence at attach. The last cache line of the queue object holds one
//! word per member for the shared-core look (`gex_core::runtime`).

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
