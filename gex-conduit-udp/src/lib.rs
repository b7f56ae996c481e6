//! gex-conduit-udp: Active Messages over UDP between hosts.
//!
//! The reliability protocol — sequence numbers, acknowledgements,
//! retransmission, flow control, fragmentation — is a pure state machine
//! ([`proto`]) with no sockets in it. This crate's shell drives it with one
//! non-blocking UDP socket per rank from the progress engine: every poll
//! receives what has arrived, runs due timers, transmits what the protocol
//! asks for, and runs the handlers of complete messages.
//!
//! Ranks on the same host talk through the shared-memory transport of the
//! smp conduit (the "bypass"); `GEX_UDP_BYPASS=0` turns it off so that
//! every peer, even on this host, is reached over UDP (to test and measure
//! UDP on one machine). RMA to peers without a mapped segment goes through
//! the AM reference path of gex-rma.
//!
//! Every datagram is authenticated: it carries a public tag of its job and
//! a MAC keyed by a key derived from the job's secret, which the launcher
//! hands each rank (never in an environment or on a command line; see
//! [`proto`] for what is checked in what order). Datagrams of other jobs,
//! forged or corrupted ones, and ones claiming the receiver or a rank
//! outside the job as source are dropped and counted before they change
//! anything. `GEX_UDP_AUTH=0` turns the MAC off on trusted networks; every
//! rank must have the same setting (checked at start-up).
//!
//! Requests and replies travel on separate lanes of the protocol
//! ([`proto::Lane`]), so that a reply never waits for capacity requests
//! hold and is never refused for a full inbox. A peer silent past
//! `GEX_UDP_PEER_TIMEOUT` seconds (default 30, finite, more than 0, at most
//! a day) ends the job with a message naming it, whether or not data to it
//! is outstanding: a heartbeat thread in every rank keeps idle peers
//! exchanging datagrams, and a rank that ends cleanly says BYE.
//!
//! Settings: [`UdpSettings`], one field per variable — `GEX_UDP_ADDR` (the
//! address peers reach this rank at; default 127.0.0.1, or the first
//! non-loopback IPv4 address when the job spans several hosts,
//! [`Bootstrap::hosts`] > 1), `GEX_HOST` (the host identity for grouping
//! ranks into neighbourhoods; default the hostname), `GEX_UDP_MTU` (largest
//! datagram; default 65507 when every rank is on this host, where
//! datagrams cross loopback, else 1472), `GEX_UDP_BYPASS`,
//! `GEX_UDP_PEER_TIMEOUT`, `GEX_UDP_AUTH`, `GEX_UDP_INBOX_LIMIT` (complete
//! messages waiting for handlers beyond which request DATA is refused;
//! default 65536), `GEX_UDP_PROGRESS_THREAD=1` (a thread that keeps the
//! protocol going — ACKs, retransmissions, receiving — while the
//! application does not poll; handlers still run only in polls),
//! `GEX_UDP_SPIN_US`, `GEX_UDP_WINDOW`. [`UdpFactory::from_env`] (what
//! `gex::init` uses) reads them from the environment when the conduit is
//! created; [`UdpFactory::new`] takes them from code.
//!
//!
//! # Sources
//!
//! `lib.rs` (the conduit and its `Conduit` impl, which delegates),
//! `setup.rs` (settings, factory, joining the job), `socket.rs`, `am.rs`,
//! `rma.rs` (the operations table, the one-sided capability, placing and
//! serving), `atomics.rs`, `progress.rs` (the link, the poll, the progress
//! thread), `liveness.rs` (linger, heartbeat), `stats.rs`. The checks that
//! start every one-sided operation (endpoint index, peer reached, length)
//! are `gex_conduit::check_one_sided`, shared with ibv.
//!
//! # What keeps it fast
//!
//! - *Latency.* Each peer gets a sending socket of its own, connected to it
//!   (up to 256 peers; the rest share the receiving socket), so the kernel
//!   keeps the route. A small message sent when nothing waits toward its
//!   peer is encoded straight into its DATA body (`Endpoint::send_with`). A
//!   poll takes the right to run handlers before it receives and runs a
//!   completed message at once when the inbox is empty. The clock is read
//!   only when a datagram arrives, data is sent, or every 32 empty polls
//!   (at most every 100 us); the inbox length is an atomic, so an empty poll
//!   takes no lock. An idle rank spins on non-blocking receives for
//!   `GEX_UDP_SPIN_US` (200 us), yielding every 64 empty polls, then waits
//!   in the kernel (at most 1 ms per wait); with shared-memory neighbours it
//!   never sleeps.
//! - *Bandwidth.* Sending copies a message once, into the buffer the
//!   protocol keeps until it is acknowledged; whole 16 KiB pieces of a long
//!   chunk are then referenced, not copied, and the datagram goes to the
//!   kernel as two buffers (`sendmsg`). A Long AM (and a one-sided PUT)
//!   spanning several datagrams is placed into the segment as they arrive
//!   (the protocol's `Placer`, after the range check), never reassembled.
//! - *A window the socket buffer holds.* Each rank publishes the receive
//!   buffer the kernel granted it, and every rank sizes the window
//!   (datagrams in flight per peer and lane) so that all of a receiver's
//!   peers sending on both lanes fill at most five eighths of the smallest
//!   such buffer, between 4 and 256. `GEX_UDP_WINDOW` overrides it.
//! - *Backpressure without deadlock.* A poll about to run handlers receives
//!   nothing while 256 messages wait for them. Past the inbox limit (64K
//!   messages or 64 MiB) datagrams are still read, their ACKs processed and
//!   the peer heard from, but request DATA is refused unacknowledged and
//!   retransmitted later; reply DATA is always taken.
//!
//! The progress thread (`GEX_UDP_PROGRESS_THREAD=1`) steps in only when the
//! application made no poll during its last wait (at most 1 ms), since
//! polling side by side with the application cost more than it saved.
//!
//! Counters: the protocol's (`proto::Stats`, per peer `proto::PeerStats`)
//! are reported through `Conduit::stats`, which `gex::stats()` returns and
//! `GEX_STATS=1` prints at exit (after the linger, which it counts);
//! `rma_puts`, `rma_gets`, `rma_served`, `atomics` and `atomics_served`
//! show the one-sided routes at work.
//!
//! *Exit.* A rank lingers (an `atexit` hook) until everything it sent is
//! acknowledged, then says BYE and keeps acknowledging until every peer has
//! said BYE too; a peer that does not is waited for until it has been quiet
//! for 200 ms, at most 5 s in all.

pub mod proto;
pub mod rma;
pub mod wire;

mod am;
mod atomics;
mod liveness;
mod progress;
mod setup;
mod socket;
mod stats;

pub use setup::{UdpFactory, UdpSettings};

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gex_bootstrap::Bootstrap;
use gex_conduit::stats::ConduitStats;
use gex_conduit::{
    AmLimits, AmSink, AtomicCapability, Conduit, Injected, Layout, OutgoingAm, PollScope,
    RmaCapability, SegmentDesc,
};
use gex_conduit_smp::SmpTransport;
use gex_types::{AmCategory, Rank, Result};

use progress::Link;

/// Largest Medium payload over UDP (fragmented by the protocol).
pub const MAX_MEDIUM: usize = 64 << 10;
/// Largest Long payload over UDP (fragmented by the protocol).
pub const MAX_LONG: usize = 1 << 20;
/// Puts of this many bytes or more are sent from the client's source
/// ([`gex_conduit::PutSource`]) instead of a copy: one gather piece, the
/// least the protocol sends by reference (shorter chunks are copied into
/// the datagram anyway).
const ZERO_COPY_MIN: usize = proto::GATHER_PIECE;
/// Datagrams received per poll before handlers run.
const RECV_BATCH: usize = 64;
/// Messages delivered per poll.
const DELIVER_BATCH: usize = 64;
/// Complete messages, and bytes, waiting for their handlers beyond which
/// new DATA is refused (acknowledgements are still processed): senders
/// then meet backpressure and retransmit later, instead of this process
/// buffering without bound (the progress thread receives while the
/// application may not be running handlers, and a handler may wait for
/// window space while its peers keep sending). High enough that ordinary
/// floods never reach it, since a refused datagram waits for a
/// retransmission timeout. `GEX_UDP_INBOX_LIMIT` overrides the message
/// count (tests make refusals happen with small floods).
const INBOX_LIMIT: usize = 1 << 16;
/// Inbox messages from which a poll that is about to run handlers receives
/// nothing more (see `Link::progress_checked`).
const BACKLOG: usize = 4 * DELIVER_BATCH;
/// See [`INBOX_LIMIT`].
const INBOX_LIMIT_BYTES: usize = 64 << 20;
/// How long polls keep finding nothing, by default, before a poll waits in
/// the kernel for a datagram (when no neighbour shares memory with this
/// rank, and so could be waiting on it instead). Spinning on non-blocking
/// receives answers fastest when a core is free for every rank (4.5 us per
/// loopback round trip on a 2-core machine, against 18 to 70 us when every
/// poll slept); waiting in the kernel frees the core for others once the
/// peer is clearly not about to answer. `GEX_UDP_SPIN_US` overrides it (0:
/// sleep at the first empty poll).
const DEFAULT_SPIN: Duration = Duration::from_micros(200);
/// While spinning, every this many empty polls yields the core, so that
/// ranks sharing a core still take turns (a multiple of SPIN_CHECK_POLLS).
const YIELD_EVERY: u32 = 64;
/// Empty polls between two readings of the clock against the spin time.
const SPIN_CHECK_POLLS: u32 = 16;
/// How often polls look at the protocol's timers (at most this late).
const TIMER_CHECK: Duration = Duration::from_micros(100);
/// Polls between two readings of the clock for the timers when nothing
/// arrives.
const TIMER_CHECK_POLLS: u32 = 32;
/// The longest a poll waits (the socket's read timeout). Protocol timers
/// (delayed ACKs, retransmissions) may fire this much late.
const MAX_SLEEP: Duration = Duration::from_millis(1);

/// The udp conduit (see the crate docs).
pub struct UdpConduit {
    boot: Bootstrap,
    layout: Layout,
    me: Rank,
    smp: SmpTransport,
    /// The socket side, shared with the optional progress thread.
    link: Arc<Link>,
    /// Set while a thread runs network handlers: one at a time, so that
    /// each sender's messages run in order.
    delivering: AtomicBool,
    /// This rank's segment (base, size), for landing Long payloads.
    /// Polls in a row that found nothing.
    idle_polls: AtomicU32,
    /// When the current run of empty polls began (nanoseconds since
    /// `epoch`).
    idle_since: AtomicU64,
    /// The reference point of `idle_since`.
    epoch: Instant,
    /// How long to spin before a poll may wait in the kernel.
    spin: Duration,
}

impl std::fmt::Debug for UdpConduit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UdpConduit")
            .field("rank", &self.me)
            .field("nbrhd", &self.layout.nbrhd)
            .finish()
    }
}

/// Environment variable: `0` turns datagram authentication off (trusted
/// networks only); `1`, the default, keeps it on. Every rank must agree.
pub const ENV_UDP_AUTH: &str = "GEX_UDP_AUTH";

impl UdpConduit {
    /// The address peers send to.
    pub fn local_addr(&self) -> SocketAddr {
        let net = self.link.net.lock().unwrap_or_else(|p| p.into_inner());
        net.sock
            .local_addr()
            .expect("a bound socket has an address")
    }
}

impl Drop for UdpConduit {
    fn drop(&mut self) {
        self.link.stop.store(true, Ordering::Relaxed);
    }
}

impl Conduit for UdpConduit {
    fn name(&self) -> &'static str {
        "udp"
    }

    fn bootstrap(&self) -> &Bootstrap {
        &self.boot
    }

    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn am_limits(&self, peer: Rank) -> AmLimits {
        if self.smp.contains(peer) {
            Self::smp_limits()
        } else {
            Self::net_limits()
        }
    }

    fn am_lub_limits(&self) -> AmLimits {
        // This rank is always reached through smp, so the least over all
        // peers is smp's within UDP's.
        Self::smp_limits()
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
        Some(self)
    }

    fn core_shared_with_spinner(&self) -> bool {
        self.smp.core_shared_with_spinner()
    }

    fn stats(&self) -> ConduitStats {
        self.conduit_stats()
    }
}
