//! gex-conduit-ibv: Active Messages, RDMA puts and gets and NIC atomics
//! over InfiniBand verbs.
//!
//! The conduit talks to the hardware through one small interface
//! ([`verbs::Device`]) with two providers, chosen by `GEX_IBV_PROVIDER`:
//! `rdma-sys` (libibverbs, cargo feature `rdma-sys`; the default when
//! compiled in) and `sim` ([`sim`], a simulated device between the
//! processes of one host, for machines without RDMA hardware and for
//! tests; the default otherwise).
//!
//! * Every rank gets one reliable-connected queue pair to every rank (to
//!   itself too), connected at start-up through the control plane's
//!   exchange. Active Messages use the queue pairs to ranks outside this
//!   rank's neighbourhood; inside it they go through shared memory (the
//!   smp bypass, `GEX_IBV_BYPASS=0` turns it off), and the others carry
//!   only RDMA and atomics.
//! * Active Messages are SENDs into receive buffers posted in advance
//!   (`GEX_IBV_BUF` bytes each): by default one bounded pool in a shared
//!   receive queue (`GEX_IBV_SRQ_POOL`, at least one buffer per peer and
//!   lane), else `2 * GEX_IBV_CREDITS` per peer (`GEX_IBV_SRQ=0`). Flow
//!   control is by credits on two lanes, requests and replies: every peer
//!   has a window per lane (at most `GEX_IBV_CREDITS`; with the shared
//!   pool an even share, grown from a reserve for the peers that use it),
//!   and the windows never add up to more than the buffers posted, so that
//!   nothing ever arrives without a receive posted for it. A receiver
//!   returns credits by writing what it grants (per lane, cumulative:
//!   messages finished plus the window) into the sender's memory with an
//!   RDMA WRITE, which needs no receive at the sender. Reply buffers are copied out and returned
//!   as soon as they arrive, request buffers once their handler has run:
//!   so a reply always makes progress, whatever the peer's handlers do.
//! * A Long payload too large for a buffer is copied into a registered
//!   bounce buffer and RDMA-written into the target's segment; the SEND
//!   that follows on the same queue pair is the notification (RC order
//!   puts it after the data).
//! * Segments are registered at attach; their remote keys travel in the
//!   segment descriptors ([`gex_conduit::SegmentDesc::remote_key`]). Puts
//!   and gets to ranks outside the neighbourhood are RDMA WRITE and READ
//!   ([`gex_conduit::RmaCapability`]), up to [`MAX_RMA`] per call split
//!   into work requests: in place (zero-copy) where the local side lies in
//!   this rank's registered segment, in pieces of the device's largest
//!   message, else through bounce buffers; to a created endpoint's
//!   segment, which is not registered, they are messages the target's
//!   conduit serves.
//! * 64-bit fetch-add and compare-swap (and the operations built on them)
//!   are NIC atomics ([`gex_conduit::AtomicCapability`]) to every rank,
//!   this one included, so that a domain using them uses them for every
//!   word (the coherence rule of the remote-atomics layer).
//! * A completion with an error status (a queue pair in the error state,
//!   RNR retries exceeded, a remote access error, a peer that does not
//!   answer within the transport timeout) ends the job with a message
//!   naming the peer, and so does a peer that returns no credits for
//!   `GEX_IBV_PEER_TIMEOUT` seconds while this rank waits for them. A
//!   heartbeat thread reads every peer's memory every quarter of that
//!   timeout, so a dead peer is noticed with nothing outstanding toward
//!   it; a rank that ends cleanly says BYE first.
//!
//! Everything that arrives is untrusted: message headers are decoded with
//! every field checked against the buffer, every range against this
//! rank's segment before memory is touched, and operation ids against the
//! table of operations in flight; a violation ends the job naming the
//! sender.
//!
//!
//! # Details
//!
//! *Start-up.* Every rank creates its SRQ (unless `GEX_IBV_SRQ=0` or the
//! device has none) and one queue pair per rank, and exchanges through the
//! control plane its settings (ranks that differ fail together), its host,
//! the address and key of its credit words and its queue pairs' addresses;
//! then, once the neighbourhoods are known, each peer's starting window.
//! Receive buffers are posted before the queue pairs connect and a barrier
//! follows, so nothing is ever sent before a receive is posted for it.
//!
//! *Active Messages.* One SEND of a 32-byte header (`wire`) with the
//! arguments and payload, from a registered send buffer (a pool shared by
//! every peer, returned with the SEND's completion). Buffers are
//! `GEX_IBV_BUF` bytes (64 KiB + 96: the Medium limit is the buffer less
//! the largest header). The pool of `GEX_IBV_SRQ_POOL` (256) receive buffers
//! is raised to one per peer and lane and cut to what full windows would
//! use; windows start as an even share and grow from the reserve one
//! finished message at a time, never shrinking (1000 peers post 2000
//! buffers, 128 MiB, where per-peer buffers would post 32000). Credit counts
//! are cumulative, each written from its own slot of a small ring of
//! registered words, and credits owed to a peer are written before the next
//! message to it on the same queue pair. A sender without a credit, send
//! buffer or queue slot polls (replies only, for a reply) or returns the
//! no-op under `IMMEDIATE`. A peer sending past its window is caught at
//! arrival and ends the job.
//!
//! *Long to a created endpoint.* Its segment is not registered: a Long that
//! fits a buffer travels in the message; a larger one (up to 1 MiB) goes
//! first in `LONG_PIECE` messages on the Long's lane, which the target
//! range-checks and writes unanswered, then the Long marked placed.
//!
//! *RMA.* Operations in flight live in a slot/generation table (at most
//! 4096) whose slot is every piece's work request id. Client memory outside
//! the segment is not registered on the fly: a registration cache would
//! have to learn when the client frees or remaps memory (pinned pages
//! outlive `munmap`), which needs allocator hooks or on-demand paging this
//! conduit does not have. `GEX_IBV_SIM_MAX_MSG` lowers the simulated
//! device's largest message so tests see the splitting.
//!
//! *Failures.* A flushed receive is not reported by itself, nor is a credit
//! return to a rank that has ended. The heartbeat is an 8-byte RDMA READ of
//! a peer's control words; on hardware the NIC answers for a stopped
//! process, so it catches dead nodes and adapters, not SIGSTOP. A rank that
//! ends cleanly writes BYE into every peer's control words and waits (at
//! most 1 s) for the writes; failures toward a rank that said BYE are not
//! errors. Every wait is a poll loop bounded by a timeout; nothing sleeps to
//! synchronise.
//!
//! *Tests.* The simulated device has unit tests of delivery order, RDMA,
//! atomics and every fault (`SimDevice::inject`, or
//! `GEX_IBV_SIM_FAULT=KIND@RANK:AFTER` in a job); the wire format a
//! proptest; `tests/mix.rs` a proptest over message mixes on 2-3 ranks with
//! 1-3 credits and the smallest buffers. `cargo xtask test-cluster` runs
//! every test program over ibv in two rows, `ibv-nobypass` and `ibv-hosts`.

pub mod sim;
pub mod verbs;
pub mod wire;

#[cfg(feature = "rdma-sys")]
pub mod rdma;

mod am;
mod atomics;
mod liveness;
mod progress;
mod rma;
mod setup;
mod stats;

pub use setup::{IbvFactory, IbvSettings};

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use gex_bootstrap::Bootstrap;
use gex_conduit::stats::ConduitStats;
use gex_conduit::{
    AmLimits, AmSink, AtomicCapability, Conduit, Injected, Layout, OutgoingAm, PollScope,
    RmaCapability, SegmentDesc,
};
use gex_conduit_smp::SmpTransport;
use gex_types::{AmCategory, Rank, Result};

use verbs::{Device, Mr, QpNum, Wc};

use am::{InMsg, Peer};
use liveness::Liveness;
use rma::Ops;
use setup::Budget;
use stats::Counts;

/// The largest Long payload (written by RDMA in bounce-buffer pieces).
pub const MAX_LONG: usize = 1 << 20;
/// Bytes of one bounce buffer (RDMA WRITE and READ staging).
pub const CHUNK: usize = 64 << 10;
/// The longest one-sided transfer of one call (the RMA layer splits longer
/// ones; this conduit splits each into work requests of at most the
/// device's largest message, or a bounce buffer, or into messages).
pub const MAX_RMA: usize = 1 << 20;
/// Bounce buffers per process.
const CHUNKS: usize = 64;
/// One-sided operations in flight per process, at most.
const MAX_OPS: usize = 4096;
/// Work requests outstanding per queue pair, at most (less if the device's
/// send queues are shorter).
const SQ_DEPTH: usize = 1024;
/// Completions taken per poll.
const CQ_BATCH: usize = 64;
/// Words per rank in the control region peers write: requests finished,
/// replies finished (credit returns), and BYE (non-zero once the rank
/// has ended cleanly).
const CTRL_WORDS: usize = 3;
/// The BYE word's index in a rank's control words.
const BYE: usize = 2;
/// Credit returns in flight per peer, at most (each with its own source).
const CREDIT_RING: usize = 8;
/// Messages delivered per poll.
const DELIVER_BATCH: usize = 64;

/// The request lane and the reply lane.
const REQ: usize = 0;
const REP: usize = 1;

// Work request ids: kind (8 bits), peer (24 bits), index (32 bits).
const W_RECV: u64 = 1;
const W_SLOT: u64 = 2;
const W_CHUNK: u64 = 3;
const W_CREDIT: u64 = 4;
const W_OP: u64 = 5;
const W_HB: u64 = 6;
const W_BYE: u64 = 7;

fn wr(kind: u64, peer: Rank, idx: u32) -> u64 {
    (kind << 56) | ((u64::from(peer) & 0xff_ffff) << 32) | u64::from(idx)
}

fn wr_parts(id: u64) -> (u64, Rank, u32) {
    (id >> 56, ((id >> 32) & 0xff_ffff) as Rank, id as u32)
}

/// This rank's segment once attached: (base, size, region).
#[derive(Clone, Copy)]
struct MySeg {
    base: usize,
    size: usize,
    mr: Mr,
}

/// The ibv conduit (see the crate docs).
pub struct IbvConduit {
    boot: Bootstrap,
    layout: Layout,
    me: Rank,
    smp: SmpTransport,
    dev: Arc<dyn Device>,
    sim: Option<sim::SimDevice>,
    peers: Vec<Peer>,
    credits: usize,
    buf: usize,
    /// Receive buffers: `budget.bufs` of `buf` bytes (per-peer: AM peer
    /// a's are `2 * credits` from `a * 2 * credits`).
    recv_mem: usize,
    recv_mr: Mr,
    budget: Budget,
    /// The shared receive queue, with one.
    srq: Option<verbs::SrqNum>,
    /// Buffers not yet granted to any peer's window.
    reserve: AtomicUsize,
    /// The AM peers, by their index.
    am_ranks: Vec<Rank>,
    /// Queue pair -> rank (a receive of the shared queue names its queue
    /// pair only).
    qp_rank: std::collections::HashMap<QpNum, Rank>,
    /// Send buffers (`budget.bufs` of `buf` bytes), shared by every peer.
    send_mem: usize,
    send_mr: Mr,
    send_free: Mutex<Vec<u32>>,
    /// Control words peers write: per rank, [requests finished, replies
    /// finished, BYE].
    ctrl: &'static [AtomicU64],
    /// The source of our credit writes: per rank, two words.
    ctrl_out: usize,
    ctrl_out_mr: Mr,
    /// Bounce buffers.
    chunk_mem: usize,
    chunk_mr: Mr,
    chunks_free: Mutex<Vec<u32>>,
    /// Atomics' result words, one per operation slot.
    scratch_mem: usize,
    scratch_mr: Mr,
    ops: Mutex<Ops>,
    cq: Mutex<Vec<Wc>>,
    inbox: Mutex<VecDeque<InMsg>>,
    inbox_len: AtomicUsize,
    delivering: AtomicBool,
    credits_dirty: AtomicBool,
    segment: OnceLock<MySeg>,
    /// Every rank's segment: (owner base, size, rkey).
    seg_keys: OnceLock<Vec<(u64, usize, u32)>>,
    peer_timeout: Duration,
    /// Work requests outstanding per queue pair, at most.
    sq_depth: usize,
    /// The device's longest message (zero-copy pieces).
    max_msg: usize,
    /// Heartbeats and BYE.
    live: Arc<Liveness>,
    /// A fault to inject after this many sends (`GEX_IBV_SIM_FAULT`).
    fault: Option<(sim::Fault, u64)>,
    counts: Counts,
}

impl std::fmt::Debug for IbvConduit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IbvConduit")
            .field("rank", &self.me)
            .field("provider", &self.dev.provider())
            .finish()
    }
}

fn fatal(msg: &str) -> ! {
    gex_bootstrap::fatal(msg)
}

impl IbvConduit {
    /// The simulated device, when that is the provider (tests inject
    /// faults through it).
    pub fn sim_device(&self) -> Option<&sim::SimDevice> {
        self.sim.as_ref()
    }

    /// The queue pair this rank uses toward `peer`.
    pub fn qp_of(&self, peer: Rank) -> Option<QpNum> {
        self.peers.get(peer as usize).map(|p| p.qp)
    }
}

impl Conduit for IbvConduit {
    fn name(&self) -> &'static str {
        "ibv"
    }

    fn bootstrap(&self) -> &Bootstrap {
        &self.boot
    }

    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn am_limits(&self, peer: Rank) -> AmLimits {
        if self.smp.contains(peer) {
            self.smp_limits()
        } else {
            self.net_limits()
        }
    }

    fn am_lub_limits(&self) -> AmLimits {
        // This rank is always reached through shared memory.
        self.smp_limits()
    }

    fn am_send(
        &self,
        dest: Rank,
        msg: &OutgoingAm<'_>,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected> {
        self.send_am(dest, msg, immediate, sink)
    }

    fn am_can_send(
        &self,
        dest: Rank,
        is_request: bool,
        category: AmCategory,
        nargs: usize,
        len: usize,
    ) -> bool {
        self.can_send_am(dest, is_request, category, nargs, len)
    }

    fn poll(&self, sink: &dyn AmSink, scope: PollScope) -> usize {
        self.progress(sink, scope)
    }

    fn max_segment_size(&self) -> usize {
        self.smp.max_segment_size()
    }

    fn attach_segment(&self, size: usize, sink: &dyn AmSink) -> Result<Vec<SegmentDesc>> {
        self.attach(size, sink)
    }

    fn rma(&self) -> Option<&dyn RmaCapability> {
        Some(self)
    }

    fn atomics(&self) -> Option<&dyn AtomicCapability> {
        self.dev
            .limits()
            .atomics
            .then_some(self as &dyn AtomicCapability)
    }

    fn core_shared_with_spinner(&self) -> bool {
        self.smp.core_shared_with_spinner()
    }

    fn stats(&self) -> ConduitStats {
        self.conduit_stats()
    }
}

impl Drop for IbvConduit {
    fn drop(&mut self) {
        self.live.stop.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests;
