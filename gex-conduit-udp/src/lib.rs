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

pub mod proto;
pub mod rma;
pub mod wire;

use std::collections::VecDeque;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use gex_bootstrap::vars::Lookup;
use gex_bootstrap::Bootstrap;
use gex_conduit::stats::{ConduitStats, Counter, PeerCounters};
use gex_conduit::{
    atomic_ops, send_or_progress, AmLimits, AmSink, AtomicCapability, Conduit, ConduitFactory,
    GetDest, IncomingAm, Injected, Layout, OpCompletion, OutgoingAm, PollScope, PutSource,
    RmaCapability, SegmentDesc, ZeroLen,
};
use gex_conduit_smp::{hostname, SmpTransport};
use gex_types::{AmCategory, Dt, EpIndex, Error, Flags, Op, Rank, Result};

/// Largest Medium payload over UDP (fragmented by the protocol).
pub const MAX_MEDIUM: usize = 64 << 10;
/// Largest Long payload over UDP (fragmented by the protocol).
pub const MAX_LONG: usize = 1 << 20;
/// Datagrams received per poll before handlers run.
/// Puts of this many bytes or more are sent from the client's source
/// ([`gex_conduit::PutSource`]) instead of a copy: one gather piece, the
/// least the protocol sends by reference (shorter chunks are copied into
/// the datagram anyway).
const ZERO_COPY_MIN: usize = proto::GATHER_PIECE;
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

/// The longest `GEX_UDP_PEER_TIMEOUT` accepted (one day).
const MAX_PEER_TIMEOUT_SECS: f64 = 86_400.0;

/// Parses `GEX_UDP_PEER_TIMEOUT`: seconds, finite, above zero and at most
/// one day (so that a quarter of it is a sane heartbeat period); anything
/// else is an error naming the variable.
fn parse_peer_timeout(v: &str) -> Result<Duration> {
    let secs = v
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= MAX_PEER_TIMEOUT_SECS)
        .ok_or_else(|| {
            Error::bad_arg(format!(
                "GEX_UDP_PEER_TIMEOUT={v:?}: expected seconds, more than 0 and at most {MAX_PEER_TIMEOUT_SECS}"
            ))
        })?;
    // At least a millisecond: the protocol's timers are that coarse.
    Ok(Duration::from_secs_f64(secs).max(Duration::from_millis(1)))
}

/// The udp conduit's settings. `Default` is what an empty environment
/// gives; [`UdpSettings::from_env`] reads the variables named on each field
/// (what `gex::init` does), and an embedding runtime may build the struct
/// in code and pass it to [`UdpFactory::new`] instead:
///
/// ```
/// use gex_conduit_udp::{UdpFactory, UdpSettings};
///
/// let mut settings = UdpSettings::default();
/// settings.mtu = Some(1472);
/// settings.bypass = false;
/// let factory = UdpFactory::new(settings);
/// assert_eq!(factory.settings().unwrap().mtu, Some(1472));
/// ```
///
/// Values set in code are checked when the conduit is created, with the
/// same bounds as the variables.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct UdpSettings {
    /// `GEX_UDP_BYPASS` (default on): ranks on the same host talk through
    /// shared memory; off (`0`), every peer is reached over UDP.
    pub bypass: bool,
    /// `GEX_UDP_AUTH` (default on): every datagram carries a MAC; off
    /// (`0`) only on a trusted network. Every rank must agree (checked at
    /// start-up).
    pub auth: bool,
    /// `GEX_UDP_MTU` (default `None`: 65507 when the job is on one host,
    /// else 1472): the largest datagram in bytes, 512 to 65507.
    pub mtu: Option<usize>,
    /// `GEX_UDP_WINDOW` (default `None`: sized to the receive buffers):
    /// datagrams in flight per peer and lane, 1 to 2^20.
    pub window: Option<usize>,
    /// `GEX_UDP_ADDR` (default `None`: 127.0.0.1 when the job is on one
    /// host, else the first non-loopback IPv4 address): the address this
    /// rank binds and publishes.
    pub addr: Option<String>,
    /// `GEX_HOST` (default `None`: the host name): the host this rank
    /// counts as being on; ranks of one host share memory (the bypass).
    pub host: Option<String>,
    /// `GEX_UDP_PEER_TIMEOUT` (default 30 s; more than 0, at most a day): a
    /// peer silent this long ends the job.
    pub peer_timeout: Duration,
    /// `GEX_UDP_PROGRESS_THREAD` (default off): a thread receives and
    /// acknowledges datagrams while the program computes (handlers still
    /// run only in polls).
    pub progress_thread: bool,
    /// `GEX_UDP_SPIN_US` (default 200 us): how long an idle poll spins
    /// before it may wait in the kernel (0: wait at the first empty poll).
    pub spin: Duration,
    /// `GEX_UDP_INBOX_LIMIT` (default 65536, 1 to 2^24): complete messages
    /// waiting for handlers beyond which request DATA is refused.
    pub inbox_limit: usize,
}

/// Bounds of [`UdpSettings::mtu`].
const MTU_RANGE: std::ops::RangeInclusive<usize> = 512..=65507;
/// Bounds of [`UdpSettings::window`].
const WINDOW_RANGE: std::ops::RangeInclusive<usize> = 1..=1 << 20;
/// Bounds of [`UdpSettings::inbox_limit`].
const INBOX_RANGE: std::ops::RangeInclusive<usize> = 1..=1 << 24;

impl Default for UdpSettings {
    fn default() -> UdpSettings {
        UdpSettings {
            bypass: true,
            auth: true,
            mtu: None,
            window: None,
            addr: None,
            host: None,
            peer_timeout: proto::Config::default().peer_timeout,
            progress_thread: false,
            spin: DEFAULT_SPIN,
            inbox_limit: INBOX_LIMIT,
        }
    }
}

impl UdpSettings {
    /// The settings this process's environment gives. A value that does
    /// not parse or is out of bounds is an error naming the variable and
    /// the value (`GEX_UDP_MTU="abc": expected 512 to 65507`).
    pub fn from_env() -> Result<UdpSettings> {
        Self::from_lookup(Lookup::env())
    }

    /// The settings `vars` gives (see [`UdpSettings::from_env`]).
    pub fn from_lookup(vars: Lookup<'_>) -> Result<UdpSettings> {
        let d = UdpSettings::default();
        Ok(UdpSettings {
            bypass: vars.flag("GEX_UDP_BYPASS", d.bypass)?,
            auth: match vars.value(ENV_UDP_AUTH).as_deref() {
                None | Some("1") => true,
                Some("0") => false,
                Some(v) => {
                    return Err(Error::bad_arg(format!(
                        "{ENV_UDP_AUTH}={v:?}: expected 0 (off, trusted networks only) or 1 (on, the default)"
                    )))
                }
            },
            mtu: vars.parse("GEX_UDP_MTU", "512 to 65507", |m| MTU_RANGE.contains(m))?,
            window: vars.parse(
                "GEX_UDP_WINDOW",
                &format!(
                    "datagrams in flight per peer and lane, 1 to {}",
                    WINDOW_RANGE.end()
                ),
                |w| WINDOW_RANGE.contains(w),
            )?,
            addr: vars.value("GEX_UDP_ADDR"),
            host: vars.value("GEX_HOST"),
            peer_timeout: match vars.value("GEX_UDP_PEER_TIMEOUT") {
                None => d.peer_timeout,
                Some(t) => parse_peer_timeout(&t)?,
            },
            progress_thread: vars.flag("GEX_UDP_PROGRESS_THREAD", d.progress_thread)?,
            spin: vars
                .parse::<u64>("GEX_UDP_SPIN_US", "microseconds", |_| true)?
                .map_or(d.spin, Duration::from_micros),
            inbox_limit: vars
                .parse(
                    "GEX_UDP_INBOX_LIMIT",
                    &format!("a message count from 1 to {}", INBOX_RANGE.end()),
                    |m| INBOX_RANGE.contains(m),
                )?
                .unwrap_or(d.inbox_limit),
        })
    }

    /// Checks values set in code against the bounds the variables have;
    /// the error names the field and its variable.
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &str, var: &str, what: String| {
            Err(Error::bad_arg(format!(
                "udp conduit: UdpSettings::{field} ({var}) {what}"
            )))
        };
        if let Some(m) = self.mtu.filter(|m| !MTU_RANGE.contains(m)) {
            return bad(
                "mtu",
                "GEX_UDP_MTU",
                format!("= {m}: expected 512 to 65507"),
            );
        }
        if let Some(w) = self.window.filter(|w| !WINDOW_RANGE.contains(w)) {
            return bad(
                "window",
                "GEX_UDP_WINDOW",
                format!("= {w}: expected 1 to {}", WINDOW_RANGE.end()),
            );
        }
        if !INBOX_RANGE.contains(&self.inbox_limit) {
            return bad(
                "inbox_limit",
                "GEX_UDP_INBOX_LIMIT",
                format!(
                    "= {}: expected 1 to {}",
                    self.inbox_limit,
                    INBOX_RANGE.end()
                ),
            );
        }
        let t = self.peer_timeout.as_secs_f64();
        if !(t > 0.0 && t <= MAX_PEER_TIMEOUT_SECS) {
            return bad(
                "peer_timeout",
                "GEX_UDP_PEER_TIMEOUT",
                format!(
                    "= {:?}: expected more than 0 and at most {MAX_PEER_TIMEOUT_SECS} s",
                    self.peer_timeout
                ),
            );
        }
        Ok(())
    }
}

/// Creates the udp conduit, with the settings it was given or, by default
/// ([`UdpFactory::from_env`]), the environment's, read when the conduit is
/// created.
#[derive(Clone, Debug, Default)]
pub struct UdpFactory {
    settings: Option<UdpSettings>,
}

impl UdpFactory {
    /// A factory whose conduit reads its settings from the environment
    /// ([`UdpSettings::from_env`]) when it is created (client init).
    pub fn from_env() -> UdpFactory {
        UdpFactory { settings: None }
    }

    /// A factory whose conduit uses `settings` (nothing is read from the
    /// environment but the launcher's description of the job).
    pub fn new(settings: UdpSettings) -> UdpFactory {
        UdpFactory {
            settings: Some(settings),
        }
    }

    /// The settings given, `None` when they come from the environment.
    pub fn settings(&self) -> Option<&UdpSettings> {
        self.settings.as_ref()
    }
}

impl ConduitFactory for UdpFactory {
    fn name(&self) -> &'static str {
        "udp"
    }

    fn create(&self, boot: Bootstrap) -> Result<Box<dyn Conduit>> {
        let conduit = match &self.settings {
            Some(s) => UdpConduit::with_settings(boot, s)?,
            None => UdpConduit::new(boot)?,
        };
        Ok(Box::new(conduit))
    }
}

/// How this rank sends to one peer.
enum Sender {
    /// Not decided yet (nothing sent so far).
    Untried,
    /// Through a socket of its own, connected to the peer: the kernel then
    /// keeps the route instead of looking it up for every datagram (on
    /// loopback a round trip takes 3.4 us this way against 3.9 us with
    /// addressed sends from one socket).
    Connected(UdpSocket),
    /// Through the receiving socket, with the peer's address (past
    /// [`MAX_CONNECTED`] peers, or if a connected socket could not be made).
    Shared,
}

/// Peers that get a connected sending socket, at most (one descriptor
/// each); datagrams to the others go out through the receiving socket.
const MAX_CONNECTED: usize = 256;

/// The socket side: the protocol state machine and what it needs to talk.
struct Net {
    ep: proto::Endpoint,
    /// The socket every peer sends to (and, for some peers, sends from).
    sock: UdpSocket,
    addrs: Vec<RawAddr>,
    /// Every peer's address, for connecting sending sockets.
    peer_addrs: Vec<SocketAddr>,
    /// How this rank sends to each peer.
    senders: Vec<Sender>,
    /// Peers with a connected sending socket.
    connected: usize,
    tx: Vec<u8>,
    rx: Vec<u8>,
    /// When a poll next looks at the protocol's timers.
    next_timer_check: Instant,
    /// Polls since the last look at the timers.
    polls_since_timers: u32,
}

impl Net {
    /// Sends every datagram the protocol has ready. A datagram the kernel
    /// refuses (a full socket buffer) counts as lost: the protocol
    /// retransmits it.
    fn flush(&mut self, now: Instant) {
        use std::os::fd::AsRawFd;
        while let Some((peer, tail)) = self.ep.poll_transmit_gather(now, &mut self.tx) {
            let p = peer as usize;
            if matches!(self.senders[p], Sender::Untried) {
                self.senders[p] = self.connect(p);
            }
            match &self.senders[p] {
                Sender::Connected(s) => send_nowait(s.as_raw_fd(), &self.tx, &tail, None),
                _ => send_nowait(self.sock.as_raw_fd(), &self.tx, &tail, Some(&self.addrs[p])),
            }
        }
    }

    /// A sending socket connected to peer `p`, from this rank's address,
    /// while fewer than [`MAX_CONNECTED`] exist; else (or on failure) the
    /// shared socket.
    fn connect(&mut self, p: usize) -> Sender {
        if self.connected >= MAX_CONNECTED {
            return Sender::Shared;
        }
        let Ok(ip) = self.sock.local_addr().map(|a| a.ip()) else {
            return Sender::Shared;
        };
        let made = UdpSocket::bind((ip, 0)).and_then(|s| {
            s.connect(self.peer_addrs[p])?;
            Ok(s)
        });
        match made {
            Ok(s) => {
                set_buffer(&s, libc::SO_SNDBUF, 8 << 20);
                self.connected += 1;
                Sender::Connected(s)
            }
            Err(_) => Sender::Shared,
        }
    }

    /// One received datagram into `rx`, waiting up to the socket's read
    /// timeout when `wait`; its length, or `None`.
    fn recv(&mut self, wait: bool) -> Option<usize> {
        use std::os::fd::AsRawFd;
        let flags = if wait { 0 } else { libc::MSG_DONTWAIT };
        // SAFETY: rx is a writable buffer of rx.len() bytes; no address is
        // requested back.
        let n = unsafe {
            libc::recvfrom(
                self.sock.as_raw_fd(),
                self.rx.as_mut_ptr() as *mut libc::c_void,
                self.rx.len(),
                flags,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        (n >= 0).then_some(n as usize)
    }
}

/// A peer's socket address in the form `sendmsg` takes.
struct RawAddr {
    storage: libc::sockaddr_storage,
    len: libc::socklen_t,
}

impl RawAddr {
    fn new(to: &SocketAddr) -> RawAddr {
        // SAFETY: all-zero is a valid sockaddr_storage; each arm writes the
        // structure of its family, which fits in sockaddr_storage.
        unsafe {
            let mut storage: libc::sockaddr_storage = std::mem::zeroed();
            let len = match to {
                SocketAddr::V4(a) => {
                    let sin = &mut *(&mut storage as *mut _ as *mut libc::sockaddr_in);
                    sin.sin_family = libc::AF_INET as libc::sa_family_t;
                    sin.sin_port = a.port().to_be();
                    sin.sin_addr = libc::in_addr {
                        s_addr: u32::from_ne_bytes(a.ip().octets()),
                    };
                    std::mem::size_of::<libc::sockaddr_in>()
                }
                SocketAddr::V6(a) => {
                    let sin6 = &mut *(&mut storage as *mut _ as *mut libc::sockaddr_in6);
                    sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
                    sin6.sin6_port = a.port().to_be();
                    sin6.sin6_addr = libc::in6_addr {
                        s6_addr: a.ip().octets(),
                    };
                    sin6.sin6_flowinfo = a.flowinfo();
                    sin6.sin6_scope_id = a.scope_id();
                    std::mem::size_of::<libc::sockaddr_in6>()
                }
            };
            RawAddr {
                storage,
                len: len as libc::socklen_t,
            }
        }
    }
}

/// Sends the datagram `head` + `tail` on `fd` without blocking, to `to`
/// (`None` for a connected socket), handing the two parts to the kernel as
/// they are (no copy into one buffer); a full socket buffer drops it (the
/// protocol retransmits), as does an error (a peer gone).
fn send_nowait(fd: std::os::fd::RawFd, head: &[u8], tail: &[u8], to: Option<&RawAddr>) {
    let (name, namelen) = match to {
        Some(a) => (&a.storage as *const libc::sockaddr_storage, a.len),
        None => (std::ptr::null(), 0),
    };
    if tail.is_empty() {
        // One buffer: sendto, which spares the kernel reading a msghdr and
        // an iovec array.
        // SAFETY: the address, if any, is valid for its exact size (a
        // connected socket takes none) and `head` is readable for its
        // length; the kernel only reads both.
        unsafe {
            libc::sendto(
                fd,
                head.as_ptr() as *const libc::c_void,
                head.len(),
                libc::MSG_DONTWAIT,
                name as *const libc::sockaddr,
                namelen,
            )
        };
        return;
    }
    let iov = [
        libc::iovec {
            iov_base: head.as_ptr() as *mut libc::c_void,
            iov_len: head.len(),
        },
        libc::iovec {
            iov_base: tail.as_ptr() as *mut libc::c_void,
            iov_len: tail.len(),
        },
    ];
    // SAFETY: all-zero is a valid msghdr (no control data, no flags).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_name = name as *mut libc::c_void;
    msg.msg_namelen = namelen;
    msg.msg_iov = iov.as_ptr() as *mut libc::iovec;
    msg.msg_iovlen = 2;
    // SAFETY: the message names a valid address of its exact size, or none
    // for a connected socket, and two iovecs over readable buffers (the
    // kernel only reads them), all alive for the call.
    unsafe { libc::sendmsg(fd, &msg, libc::MSG_DONTWAIT) };
}

/// Puts the payload of a Long AM or a one-sided PUT that spans several
/// datagrams straight into this rank's segment as its datagrams arrive,
/// and that of a GET_DATA into its get's destination, instead of into the
/// message buffer (from which delivery would copy it again). Holds this
/// rank's segment (base, size), if attached, and the operations in
/// flight. A message whose range is outside the segment, or a GET_DATA
/// that matches no get in flight from its sender, is kept whole, so that
/// delivery reports it.
struct SegmentPlacer<'a>(Option<(usize, usize)>, &'a rma::Ops);

impl proto::Placer for SegmentPlacer<'_> {
    fn split(&mut self, peer: u32, first: &[u8], total: usize) -> Option<(usize, u64)> {
        if first.first() == Some(&wire::RMA_GET_DATA) {
            let r = wire::decode_rma(first.get(..wire::RMA_HEADER)?, true)?;
            return (r.len.checked_add(wire::RMA_HEADER) == Some(total)
                && r.op < rma::GET_TOKEN
                && self.1.begin_placing(r.op, peer, r.len))
            .then_some((wire::RMA_HEADER, rma::GET_TOKEN | r.op));
        }
        let (base, size) = self.0?;
        let (start, len, off) = wire::long_payload(first)?;
        let in_segment = gex_conduit::fits(off, len, size);
        (start.checked_add(len) == Some(total) && in_segment)
            .then_some((start, (base + off) as u64))
    }

    fn write(&mut self, token: u64, at: usize, bytes: &[u8]) {
        if token & rma::GET_TOKEN != 0 {
            // Checked against the get's destination again there; a get no
            // longer in flight takes nothing (its message is then reported
            // as not matching at delivery).
            self.1.place(token & !rma::GET_TOKEN, at, bytes);
            return;
        }
        // SAFETY: `split` accepted the message only if its payload range
        // [off, off + len) lies in the segment, `token` is base + off, and
        // the protocol writes at most `total - split = len` bytes in all,
        // at increasing `at`; the segment is mapped for the process's life
        // and `bytes` is the protocol's receive buffer, separate memory.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                (token as usize + at) as *mut u8,
                bytes.len(),
            )
        };
    }
}

/// A complete message: (sender, bytes, whether its Long payload was
/// already placed in the segment; see [`SegmentPlacer`]).
type InboxMsg = (Rank, Vec<u8>, bool);

/// The protocol, its socket, and the messages it completed.
struct Link {
    net: Mutex<Net>,
    /// Complete messages not yet delivered, in arrival order.
    /// (sender, message, whether its Long payload was already placed in
    /// the segment; see [`SegmentPlacer`]).
    inbox: Mutex<VecDeque<InboxMsg>>,
    /// This rank's segment (base, size) once attached: where Long payloads
    /// land.
    segment: OnceLock<(usize, usize)>,
    /// The one-sided operations this rank started and not yet saw
    /// answered (gets are placed from here as their data arrives).
    ops: rma::Ops,
    /// The inbox's length as of its last change, readable without the
    /// lock (a poll with nothing to deliver then takes no lock).
    inbox_len: AtomicUsize,
    /// Bytes of the messages in the inbox.
    inbox_bytes: AtomicUsize,
    /// Tells the progress thread, if any, to end.
    stop: AtomicBool,
    /// Polls by the application's threads (any count; only changes are
    /// read): the progress thread stays out of the way while it moves.
    app_polls: AtomicU64,
    /// Complete messages waiting for handlers beyond which request DATA
    /// is refused ([`INBOX_LIMIT`] unless `GEX_UDP_INBOX_LIMIT`).
    inbox_limit: usize,
    fd: std::os::fd::RawFd,
}

impl Link {
    /// Receives (waiting first, bounded by the socket's read timeout, when
    /// `wait`), runs timers, transmits, and moves complete messages to the
    /// inbox; returns how many datagrams arrived. Skipped when another
    /// thread is doing it.
    fn progress(&self, wait: bool) -> usize {
        self.progress_checked(wait, true, false, false).0
    }

    /// [`Link::progress`]; a dead peer ends the job only when `check_dead`.
    /// `deliverer`: the caller holds the right to run handlers and will run
    /// them next. Then, with a backlog of [`BACKLOG`] messages, nothing is
    /// received (the handlers catch up first, so the inbox stays short);
    /// and with the inbox empty, the first message completed is returned
    /// instead of queued, for the caller to run at once (the oldest
    /// undelivered message, since only a holder of the net lock adds to the
    /// inbox): a round trip then takes no inbox lock.
    fn progress_checked(
        &self,
        mut wait: bool,
        check_dead: bool,
        deliverer: bool,
        timers_now: bool,
    ) -> (usize, Option<InboxMsg>) {
        let Ok(mut guard) = self.net.try_lock() else {
            return (0, None);
        };
        let net = &mut *guard;
        let mut received = 0;
        // The clock is read only when something needs it: a datagram to
        // handle, the periodic look at the timers, or data to transmit.
        let mut clock: Option<Instant> = None;
        // With the inbox full, datagrams are still read (their ACKs keep
        // this rank's own sends moving, and the peer is heard from) but
        // their DATA is refused unacknowledged: the senders retransmit it
        // once the handlers have caught up.
        let full = self.inbox_len.load(Ordering::Relaxed) >= self.inbox_limit
            || self.inbox_bytes.load(Ordering::Relaxed) >= INBOX_LIMIT_BYTES;
        let defer = deliverer && self.inbox_len.load(Ordering::Relaxed) >= BACKLOG;
        wait &= !full && !defer;
        for _ in 0..if defer { 0 } else { RECV_BATCH } {
            let Some(len) = net.recv(wait) else { break };
            wait = false;
            let now = *clock.get_or_insert_with(Instant::now);
            let (ep, rx) = (&mut net.ep, &net.rx);
            let mut placer = SegmentPlacer(self.segment.get().copied(), &self.ops);
            ep.handle_datagram_placed(&rx[..len], now, !full, &mut placer);
            received += 1;
            // Complete messages go to their handlers before the next
            // receive call, which would most often find nothing and only
            // delay a handler (and its reply) by a system call.
            if ep.has_message() {
                break;
            }
        }
        // Timers are milliseconds apart (delayed ACKs, retransmissions,
        // peer death), so a poll looks at them only every
        // TIMER_CHECK_POLLS polls and at most every TIMER_CHECK: a spinning
        // poll then costs little more than its receive call.
        let mut dead = None;
        net.polls_since_timers += 1;
        if wait || timers_now || net.polls_since_timers >= TIMER_CHECK_POLLS {
            net.polls_since_timers = 0;
            let now = *clock.get_or_insert_with(Instant::now);
            if now >= net.next_timer_check || timers_now {
                net.next_timer_check = now + TIMER_CHECK;
                if net.ep.next_timeout().is_some_and(|t| t <= now) {
                    net.ep.handle_timeout(now);
                }
                dead = net.ep.dead_peer(now).filter(|_| check_dead);
            }
        }
        if net.ep.has_transmit() {
            let now = *clock.get_or_insert_with(Instant::now);
            net.flush(now);
        }
        if let Some((peer, silent)) = dead {
            drop(guard);
            gex_bootstrap::fatal(&format!(
                "udp conduit: rank {peer} has not answered for {:.1} s (GEX_UDP_PEER_TIMEOUT); it is presumed dead",
                silent.as_secs_f64()
            ));
        }
        let mut first = None;
        if deliverer && self.inbox_len.load(Ordering::Relaxed) == 0 {
            first = net.ep.poll_placed_message();
        }
        if net.ep.has_message() {
            // Lock order: net, then inbox (nothing takes net under inbox).
            let mut inbox = self.inbox.lock().unwrap_or_else(|p| p.into_inner());
            while let Some(m) = net.ep.poll_placed_message() {
                self.inbox_bytes.fetch_add(m.1.len(), Ordering::Relaxed);
                inbox.push_back(m);
            }
            self.inbox_len.store(inbox.len(), Ordering::Relaxed);
        }
        drop(guard);
        (received, first)
    }

    /// Waits until the socket is readable, for at most `max`, without
    /// holding any lock.
    fn wait_readable(&self, max: Duration) {
        let mut pfd = libc::pollfd {
            fd: self.fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = max.as_millis().clamp(1, i32::MAX as u128) as libc::c_int;
        // SAFETY: one valid pollfd for a socket the link owns; poll only
        // reads and writes that struct.
        unsafe { libc::poll(&mut pfd, 1, ms) };
    }
}

impl Link {
    /// Whether everything this rank sent has been acknowledged.
    fn all_acked(&self) -> bool {
        let net = self.net.lock().unwrap_or_else(|p| p.into_inner());
        (0..net.ep.npeers()).all(|p| net.ep.is_idle(p))
    }

    /// Whether every peer said BYE.
    fn all_departed(&self) -> bool {
        let net = self.net.lock().unwrap_or_else(|p| p.into_inner());
        let me = net.ep.me();
        (0..net.ep.npeers()).all(|p| p == me || net.ep.has_departed(p))
    }

    /// At process exit: keeps the protocol going until everything this rank
    /// sent is acknowledged, then says BYE to every peer (this rank sends no
    /// more data; peers still running, watching for silence, see
    /// [`heartbeat_thread`], expect its silence from now on) and keeps
    /// acknowledging until it has heard BYE from every peer. A peer says BYE
    /// only once its own data is acknowledged, so after every BYE nothing
    /// can still need this rank, and it leaves at once: a job whose ranks
    /// all exit together ends within a few round trips. A peer that does
    /// not say BYE (it is still running, or its BYE was lost) may still be
    /// retransmitting data whose acknowledgement was lost; the rank then
    /// leaves once that peer has been quiet for [`LINGER_QUIET`], and after
    /// `max` in every case.
    fn linger(&self, max: Duration) {
        // The progress and heartbeat threads end: from here on this
        // thread drives the protocol, and no peer is declared dead.
        self.stop.store(true, Ordering::Relaxed);
        let start = Instant::now();
        let mut quiet_since = start;
        let mut said_bye = false;
        loop {
            if self.progress_checked(false, false, false, false).0 > 0 {
                quiet_since = Instant::now();
            }
            if !said_bye && self.all_acked() {
                let mut net = self.net.lock().unwrap_or_else(|p| p.into_inner());
                net.ep.send_bye();
                net.flush(Instant::now());
                said_bye = true;
            }
            let now = Instant::now();
            if now >= start + max
                || (said_bye && (self.all_departed() || now >= quiet_since + LINGER_QUIET))
            {
                break;
            }
            self.wait_readable(Duration::from_millis(2));
        }
        if !said_bye {
            let mut net = self.net.lock().unwrap_or_else(|p| p.into_inner());
            net.ep.send_bye();
            net.flush(Instant::now());
        }
    }
}

/// How long peers must be quiet before an exiting rank leaves.
const LINGER_QUIET: Duration = Duration::from_millis(200);
/// The longest an exiting rank lingers.
const LINGER_MAX: Duration = Duration::from_secs(5);

/// The links of this process, for the exit hook.
static LINKS: Mutex<Vec<std::sync::Weak<Link>>> = Mutex::new(Vec::new());

extern "C" fn linger_at_exit() {
    if gex_bootstrap::job_ending() {
        return;
    }
    let links: Vec<Arc<Link>> = match LINKS.try_lock() {
        Ok(l) => l.iter().filter_map(|w| w.upgrade()).collect(),
        Err(_) => return,
    };
    for l in links {
        l.linger(LINGER_MAX);
    }
}

/// Registers `link` with the exit hook (installed once per process).
fn linger_on_exit(link: &Arc<Link>) {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        // SAFETY: registering a plain extern "C" function with no arguments;
        // it only takes locks with try_lock and never calls exit.
        unsafe { libc::atexit(linger_at_exit) };
    });
    LINKS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(Arc::downgrade(link));
}

/// The progress thread (`GEX_UDP_PROGRESS_THREAD=1`): keeps the protocol
/// going — ACKs, retransmissions, receiving into the inbox — while the
/// application computes without polling. It runs no handlers: those still
/// run in the application's polls, so handler concurrency is unchanged.
///
/// While the application polls, its polls do all of that, and a second
/// thread taking datagrams (and the net lock) from under them only costs:
/// 4 ranks on 2 cores flooding each other took twice as long with the
/// thread as without it. So the thread steps in only when no application
/// poll happened during its last wait: it then sleeps for the longest wait
/// (a periodic timer, not a synchronisation) rather than watching the
/// socket the polls are reading.
fn progress_thread(link: Arc<Link>) {
    let mut seen = link.app_polls.load(Ordering::Relaxed);
    while !link.stop.load(Ordering::Relaxed) {
        let now = link.app_polls.load(Ordering::Relaxed);
        if now != seen {
            seen = now;
            std::thread::sleep(MAX_SLEEP);
            continue;
        }
        link.wait_readable(MAX_SLEEP);
        if link.app_polls.load(Ordering::Relaxed) != seen {
            continue;
        }
        link.progress(false);
    }
}

/// How often the heartbeat thread runs the protocol's timers: an eighth of
/// the peer timeout, within these bounds.
const HEARTBEAT_TICK_MIN: Duration = Duration::from_millis(10);
/// See [`HEARTBEAT_TICK_MIN`].
const HEARTBEAT_TICK_MAX: Duration = Duration::from_secs(1);

/// The heartbeat thread, in every udp rank: every `tick` it receives what
/// has arrived (any datagram from a peer proves it alive), runs the
/// protocol's timers (which queue a heartbeat to every peer not sent to for
/// a quarter of the peer timeout), transmits, and ends the job if a peer
/// has been silent past the peer timeout, even with nothing outstanding.
/// Being a thread, it proves this rank alive while the application
/// computes without polling; a stopped process's threads all stop, so its
/// peers notice. It runs no handlers. It ends at exit (see
/// [`Link::linger`]) or when the conduit is dropped.
fn heartbeat_thread(link: Arc<Link>, tick: Duration) {
    loop {
        // A periodic timer, not a synchronisation.
        std::thread::sleep(tick);
        if link.stop.load(Ordering::Relaxed) {
            return;
        }
        link.progress_checked(false, true, false, true);
    }
}

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

/// The window (DATA datagrams in flight per peer and lane) that keeps every
/// receiver's socket buffer from overflowing when all its UDP peers send
/// on both lanes at once, as in an all-to-all flood: the smallest
/// per-sender, per-lane share of five eighths of a receive buffer (the
/// kernel charges a datagram more than its payload: an 8 MiB buffer holds
/// about 120 datagrams of 64 KiB), in datagrams of `max_datagram` bytes,
/// from 4 to `most`. `rcvbuf[r]` is rank r's receive buffer as the kernel
/// granted it and `remote[r]` how many ranks reach r over UDP. A window
/// past what the buffer holds only turns into drops and retransmissions:
/// 256 in flight from each of 3 peers lost a quarter of them, and with 2
/// ranks a flood of 64 KiB messages lost a quarter of its datagrams too.
fn window_for(rcvbuf: &[usize], remote: &[usize], max_datagram: usize, most: usize) -> usize {
    let share = rcvbuf
        .iter()
        .zip(remote)
        .filter(|(_, &peers)| peers > 0)
        .map(|(&buf, &peers)| buf / 8 * 5 / (2 * peers))
        .min();
    match share {
        None => most,
        Some(bytes) => (bytes / max_datagram.max(1)).clamp(4, most.max(4)),
    }
}

/// The size the kernel gave a socket buffer (`opt`), in bytes.
fn get_buffer(sock: &UdpSocket, opt: libc::c_int) -> usize {
    use std::os::fd::AsRawFd;
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt on a socket we own, into a c_int whose size we
    // pass; on failure v stays 0.
    unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            opt,
            &mut v as *mut libc::c_int as *mut libc::c_void,
            &mut len,
        );
    }
    v.max(0) as usize
}

fn set_buffer(sock: &UdpSocket, opt: libc::c_int, bytes: libc::c_int) {
    use std::os::fd::AsRawFd;
    // SAFETY: setsockopt on a socket we own, with a pointer to a c_int of
    // the size we pass; failure only leaves the default buffer size.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            opt,
            &bytes as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

impl UdpConduit {
    /// Joins the job with the environment's settings
    /// ([`UdpSettings::from_env`]); see [`UdpConduit::with_settings`].
    pub fn new(boot: Bootstrap) -> Result<UdpConduit> {
        Self::with_settings(boot, &UdpSettings::from_env()?)
    }

    /// Joins the job: opens the socket, learns every rank's address and
    /// host, builds the shared-memory transport for this rank's
    /// neighbourhood. Collective over the job. `settings` are checked
    /// first ([`UdpSettings::validate`]); the number of hosts (which picks
    /// the default address and datagram size) is the bootstrap's
    /// ([`Bootstrap::hosts`]).
    pub fn with_settings(boot: Bootstrap, settings: &UdpSettings) -> Result<UdpConduit> {
        settings.validate()?;
        let me = boot.rank();
        let n = boot.size();
        let bypass = settings.bypass;
        // The job's secret: from the launcher (or the rendezvous), never
        // from this process's environment; a job of one rank makes one up.
        let key = match boot.job_key() {
            Some(k) => proto::key_from_text(k.as_bytes()),
            None if boot.has_launcher() => {
                return Err(Error::not_init(
                    "the udp conduit needs the job key, but the launcher gave none",
                ))
            }
            None => gex_bootstrap::os::random::random_bytes::<32>(),
        };
        let auth = settings.auth;
        let mut cfg = proto::Config {
            key,
            auth,
            peer_timeout: settings.peer_timeout.max(Duration::from_millis(1)),
            ..proto::Config::default()
        };
        let multi_host = boot.hosts().is_some_and(|h| h > 1);
        // On one host every datagram crosses loopback, where the largest
        // datagrams cost the fewest system calls; between hosts, stay
        // within an Ethernet MTU.
        if !multi_host {
            cfg.max_datagram = 65507;
        }
        if let Some(m) = settings.mtu {
            cfg.max_datagram = m;
        }

        let cfg_timeout = cfg.peer_timeout;
        let inbox_limit = settings.inbox_limit;
        let host_ip = match &settings.addr {
            Some(a) => a.clone(),
            None if multi_host => gex_bootstrap::os::net::first_ipv4()
                .map(|ip| ip.to_string())
                .ok_or_else(|| {
                    Error::resource("udp conduit: no IPv4 address to publish; set GEX_UDP_ADDR")
                })?,
            None => "127.0.0.1".to_string(),
        };
        let sock = UdpSocket::bind((host_ip.as_str(), 0))
            .map_err(|e| Error::resource(format!("udp conduit: cannot bind {host_ip}: {e}")))?;
        // Blocking, with a read timeout: ordinary receives pass
        // MSG_DONTWAIT, an idle poll waits in the kernel for at most this.
        sock.set_read_timeout(Some(MAX_SLEEP))
            .map_err(|e| Error::resource(format!("udp conduit: {e}")))?;
        set_buffer(&sock, libc::SO_RCVBUF, 8 << 20);
        set_buffer(&sock, libc::SO_SNDBUF, 8 << 20);
        // What the kernel granted (capped by net.core.rmem_max): the
        // window is sized so that the job's senders cannot overflow it.
        let rcvbuf = get_buffer(&sock, libc::SO_RCVBUF);
        let window_override = settings.window;
        let addr = sock
            .local_addr()
            .map_err(|e| Error::resource(format!("udp conduit: {e}")))?;

        // The host identity: the launcher's name for the host when it
        // placed ranks on several (network namespaces on one machine share a
        // hostname, yet must not be grouped into one neighbourhood), else
        // the hostname.
        let host_name = settings.host.clone().unwrap_or_else(hostname);
        // Every rank's setting of GEX_UDP_AUTH travels with its address:
        // ranks that disagree could not talk, so they fail together here.
        // Its receive buffer too, for sizing the window (see below).
        let mine = format!("{host_name}\n{addr}\n{}\n{rcvbuf}", u8::from(auth));
        let all = boot.exchange(mine.as_bytes(), &mut || {})?;
        let mut hosts: Vec<String> = Vec::with_capacity(all.len());
        let mut addrs = Vec::with_capacity(all.len());
        let mut rcvbufs = Vec::with_capacity(all.len());
        for (r, a) in all.iter().enumerate() {
            let s = String::from_utf8_lossy(a);
            let mut fields = s.splitn(4, '\n');
            let (Some(h), Some(ad), Some(their_auth), Some(Ok(their_rcvbuf))) = (
                fields.next(),
                fields.next(),
                fields.next(),
                fields.next().map(str::parse::<usize>),
            ) else {
                return Err(Error::resource(format!(
                    "udp conduit: rank {r} sent a malformed address"
                )));
            };
            rcvbufs.push(their_rcvbuf);
            if their_auth != u8::from(auth).to_string() {
                return Err(Error::bad_arg(format!(
                    "udp conduit: datagram authentication is {} on rank {me} but {} on rank {r}: \
                     set {ENV_UDP_AUTH} the same for every rank (0 off, 1 on, the default)",
                    if auth { "on" } else { "off" },
                    if auth { "off" } else { "on" },
                )));
            }
            hosts.push(h.to_string());
            addrs.push(ad.parse::<SocketAddr>().map_err(|_| {
                Error::resource(format!("udp conduit: rank {r} has a bad address {ad:?}"))
            })?);
        }
        let my_host = &hosts[me as usize];
        let host: Vec<Rank> = (0..n).filter(|&r| &hosts[r as usize] == my_host).collect();
        let mut distinct: Vec<&String> = Vec::new();
        for h in &hosts {
            if !distinct.contains(&h) {
                distinct.push(h);
            }
        }
        let host_set = (
            distinct.len() as Rank,
            distinct.iter().position(|h| *h == my_host).unwrap_or(0) as Rank,
        );
        let (nbrhd, nbrhd_set) = if bypass {
            (host.clone(), host_set)
        } else {
            (vec![me], (n, me))
        };
        cfg.window = window_override.unwrap_or_else(|| {
            let remote: Vec<usize> = (0..n as usize)
                .map(|r| {
                    if bypass {
                        hosts.iter().filter(|h| **h != hosts[r]).count()
                    } else {
                        n as usize - 1
                    }
                })
                .collect();
            window_for(&rcvbufs, &remote, cfg.max_datagram, cfg.window)
        });
        let smp = SmpTransport::new(&boot, &nbrhd)?;
        let spin = settings.spin;
        let conduit = UdpConduit {
            idle_polls: AtomicU32::new(0),
            idle_since: AtomicU64::new(0),
            epoch: Instant::now(),
            spin,
            layout: Layout::new(nbrhd, host, nbrhd_set, host_set),
            me,
            smp,
            link: Arc::new(Link {
                fd: std::os::fd::AsRawFd::as_raw_fd(&sock),
                net: Mutex::new(Net {
                    ep: proto::Endpoint::new(me, n, cfg),
                    sock,
                    addrs: addrs.iter().map(RawAddr::new).collect(),
                    senders: (0..n).map(|_| Sender::Untried).collect(),
                    connected: 0,
                    peer_addrs: addrs,
                    tx: Vec::with_capacity(65536),
                    rx: vec![0u8; 65536],
                    next_timer_check: Instant::now(),
                    polls_since_timers: 0,
                }),
                inbox: Mutex::new(VecDeque::new()),
                segment: OnceLock::new(),
                ops: rma::Ops::default(),
                inbox_len: AtomicUsize::new(0),
                inbox_bytes: AtomicUsize::new(0),
                stop: AtomicBool::new(false),
                app_polls: AtomicU64::new(0),
                inbox_limit,
            }),
            delivering: AtomicBool::new(false),
            boot,
        };
        // A rank that ends stays long enough to acknowledge its peers' last
        // datagrams and get its own acknowledged (see `Link::linger`).
        linger_on_exit(&conduit.link);
        let tick = (cfg_timeout / 8).clamp(HEARTBEAT_TICK_MIN, HEARTBEAT_TICK_MAX);
        {
            let mut net = conduit.link.net.lock().unwrap_or_else(|p| p.into_inner());
            net.ep.start_keepalive(Instant::now());
        }
        let link = conduit.link.clone();
        std::thread::Builder::new()
            .name("gex-udp-heartbeat".into())
            .spawn(move || heartbeat_thread(link, tick))
            .map_err(|e| Error::resource(format!("udp conduit: heartbeat thread: {e}")))?;
        if settings.progress_thread {
            let link = conduit.link.clone();
            std::thread::Builder::new()
                .name("gex-udp-progress".into())
                .spawn(move || progress_thread(link))
                .map_err(|e| Error::resource(format!("udp conduit: progress thread: {e}")))?;
        }
        Ok(conduit)
    }

    /// Limits to a peer reached over UDP. Every payload travels in
    /// datagrams, so a Long to a created endpoint's segment (not mapped
    /// here) is carried whole, up to [`MAX_LONG`] like any Long: the pair's
    /// `gex_AM_Max*Long` is never below the LUB.
    fn net_limits() -> AmLimits {
        AmLimits::new(MAX_MEDIUM, MAX_MEDIUM, MAX_LONG, MAX_LONG)
    }

    /// Limits to a neighbour reached through the shared-memory bypass
    /// (this rank itself included): the smp transport's within the UDP
    /// ones; a Long to a neighbour's client memory is carried in a ring
    /// record, within smp's `max_long_carried`.
    fn smp_limits() -> AmLimits {
        Self::net_limits().min(SmpTransport::limits())
    }

    /// Network progress for a poll: waits for a datagram first when polls
    /// have found nothing for longer than the spin time and no neighbour
    /// could be waiting on shared memory.
    fn progress_net(&self, deliverer: bool) -> (usize, Option<InboxMsg>) {
        let idle = self.idle_polls.load(Ordering::Relaxed);
        let mut wait = false;
        // The clock is read every SPIN_CHECK_POLLS empty polls only.
        if idle > 0 && idle.is_multiple_of(SPIN_CHECK_POLLS) && self.smp.members().len() == 1 {
            let since = Duration::from_nanos(self.idle_since.load(Ordering::Relaxed));
            wait = self.epoch.elapsed().saturating_sub(since) >= self.spin;
            if !wait && idle.is_multiple_of(YIELD_EVERY) {
                std::thread::yield_now();
            }
        }
        self.link.progress_checked(wait, true, deliverer, false)
    }

    /// Runs handlers of inbox messages (replies only for `RepliesOnly`).
    fn deliver(&self, sink: &dyn AmSink, scope: PollScope) -> usize {
        if self.delivering.swap(true, Ordering::Acquire) {
            return 0;
        }
        let ran = self.deliver_held(sink, scope);
        self.delivering.store(false, Ordering::Release);
        ran
    }

    /// [`UdpConduit::deliver`] for a caller that holds `delivering`.
    fn deliver_held(&self, sink: &dyn AmSink, scope: PollScope) -> usize {
        let mut ran = 0;
        while ran < DELIVER_BATCH && self.link.inbox_len.load(Ordering::Relaxed) > 0 {
            let next = {
                let mut inbox = self.link.inbox.lock().unwrap_or_else(|p| p.into_inner());
                let next = match scope {
                    PollScope::All => inbox.pop_front(),
                    PollScope::RepliesOnly => inbox
                        .iter()
                        .position(|(_, m, _)| m.get(1) == Some(&0))
                        .and_then(|i| inbox.remove(i)),
                };
                self.link.inbox_len.store(inbox.len(), Ordering::Relaxed);
                if let Some((_, m, _)) = &next {
                    self.link.inbox_bytes.fetch_sub(m.len(), Ordering::Relaxed);
                }
                next
            };
            let Some((src, m, placed)) = next else { break };
            self.run(src, &m, placed, sink);
            ran += 1;
        }
        ran
    }

    fn run(&self, src: Rank, m: &[u8], placed: bool, sink: &dyn AmSink) {
        if wire::is_rma(m) {
            return self.run_rma(src, m, placed, sink);
        }
        let decoded = if placed {
            wire::decode_placed(m)
        } else {
            wire::decode(m).map(|am| {
                let len = am.payload.len();
                (am, len)
            })
        };
        let Some((am, len)) = decoded else {
            gex_bootstrap::fatal(&format!("udp conduit: malformed AM from rank {src}"));
        };
        let mut payload = am.payload;
        // A zero-byte Long names no memory (its dest_addr goes to the
        // handler as sent, any value): nothing to check or place.
        let attached = am.dest_ep == 0 && self.link.segment.get().is_some();
        if am.category == AmCategory::Long && len > 0 && !attached {
            // For a created endpoint, or the primordial one of a rank that
            // bound a created segment to it instead of attaching: its bound
            // segment, checked here (the placer, which places into the
            // attached segment only, leaves such payloads in the message).
            let at = gex_conduit::epseg::arrived_at_ep(am.dest_ep, self.me, am.dest_offset, len)
                .unwrap_or_else(|e| {
                    gex_bootstrap::fatal(&format!(
                        "udp conduit: a Long AM from rank {src} (endpoint {}): {e}",
                        am.src_ep
                    ))
                });
            if placed || am.payload.len() != len {
                gex_bootstrap::fatal(&format!(
                    "udp conduit: a Long AM from rank {src} for endpoint {} arrived without its payload",
                    am.dest_ep
                ));
            }
            // SAFETY: `arrived_at_ep` checked the range against this rank's
            // bound segment of that endpoint (mapped for the rest of the
            // process); the message buffer is separate memory.
            unsafe {
                std::ptr::copy_nonoverlapping(am.payload.as_ptr(), at as *mut u8, len);
                payload = std::slice::from_raw_parts(at as *const u8, len);
            }
        } else if am.category == AmCategory::Long && len > 0 {
            let Some(&(base, size)) = self.link.segment.get() else {
                gex_bootstrap::fatal(&format!(
                    "udp conduit: a Long AM from rank {src} arrived before this rank attached a segment"
                ));
            };
            let seg = SegmentDesc::new(base, Some(base), size);
            let off = seg
                .offset_of(self.me, am.dest_offset, len, true, ZeroLen::InSegment)
                .unwrap_or_else(|e| {
                    gex_bootstrap::fatal(&format!(
                        "udp conduit: a Long AM from rank {src}: {}",
                        e.local()
                    ))
                });
            let dst = (base + off) as *mut u8;
            // SAFETY: the range is inside this rank's mapped segment
            // (checked above); the message buffer is separate memory, and a
            // placed payload is already there.
            unsafe {
                if !placed {
                    std::ptr::copy_nonoverlapping(am.payload.as_ptr(), dst, len);
                }
                payload = std::slice::from_raw_parts(dst, len);
            }
        }
        sink.deliver(
            &IncomingAm::new(
                src,
                am.category,
                am.is_request,
                am.handler,
                &am.args[..am.nargs],
                payload,
                am.dest_addr,
            )
            .between(am.src_ep, am.dest_ep),
        );
    }

    /// Sends a message of `len` bytes that `fill` encodes to `dest` over
    /// UDP: requests on the request lane, replies (and one-sided answers)
    /// on the reply lane, which never waits for capacity requests hold.
    /// When the window or queue is full: `NoOp` if `immediate`, else
    /// progress (replies only, for a reply) until it can send.
    fn send_net(
        &self,
        dest: Rank,
        is_request: bool,
        len: usize,
        immediate: bool,
        sink: &dyn AmSink,
        fill: impl Fn(&mut Vec<u8>),
    ) -> Result<Injected> {
        // Encoded straight into the protocol's buffer.
        self.send_net_by(is_request, immediate, sink, |ep, lane, now| {
            ep.send_with(dest, lane, len, now, &fill)
        })
    }

    /// A message of `head` followed by `body` to `dest` over UDP, both
    /// kept by reference until acknowledged; lanes and backpressure as
    /// [`UdpConduit::send_net`].
    fn send_net_parts(
        &self,
        dest: Rank,
        is_request: bool,
        head: Bytes,
        body: Bytes,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected> {
        self.send_net_by(is_request, immediate, sink, |ep, lane, now| {
            ep.send_parts(dest, lane, head.clone(), body.clone(), now)
        })
    }

    /// The injection loop of [`UdpConduit::send_net`] around one attempt
    /// to queue the message (`send`), under the protocol lock.
    fn send_net_by(
        &self,
        is_request: bool,
        immediate: bool,
        sink: &dyn AmSink,
        send: impl Fn(
            &mut proto::Endpoint,
            proto::Lane,
            Instant,
        ) -> std::result::Result<(), proto::Backpressure>,
    ) -> Result<Injected> {
        let lane = if is_request {
            proto::Lane::Request
        } else {
            proto::Lane::Reply
        };
        send_or_progress(
            immediate,
            || {
                let mut net = self.link.net.lock().unwrap_or_else(|p| p.into_inner());
                let now = Instant::now();
                if send(&mut net.ep, lane, now).is_err() {
                    return Ok(Injected::NoOp);
                }
                net.flush(now);
                Ok(Injected::Sent)
            },
            || {
                self.poll(sink, PollScope::for_sender(is_request));
            },
        )
    }

    /// Serves an ATOMIC from `src`: checks it (a malformed message, a
    /// range outside this rank's segment or a misaligned target ends the
    /// job naming the sender), performs it with CPU atomics and answers
    /// ATOMIC_RESULT.
    fn serve_atomic(&self, src: Rank, m: &[u8], sink: &dyn AmSink) {
        let bad = |what: &str| -> ! {
            gex_bootstrap::fatal(&format!(
                "udp conduit: a one-sided message from rank {src} {what}"
            ))
        };
        let a = wire::decode_atomic(m).unwrap_or_else(|e| bad(&e));
        let size = a.dt.size().expect("a built-in type");
        let Some(&(base, seg)) = self.link.segment.get() else {
            bad("arrived before this rank attached a segment")
        };
        if !gex_conduit::fits(a.offset, size, seg) {
            bad(&format!(
                "is an atomic on [{:#x}, +{size}), outside this rank's segment of {seg:#x} bytes",
                a.offset
            ));
        }
        if !a.offset.is_multiple_of(size) {
            bad(&format!(
                "is an atomic at offset {:#x}, misaligned for {}",
                a.offset,
                a.dt.name()
            ));
        }
        self.link.ops.count_atomic_served();
        // SAFETY: the value lies inside this rank's mapped segment and is
        // aligned to its size (both checked above; the base is
        // page-aligned); every access to it through remote atomics is
        // atomic (the same instructions as the direct route and the
        // Active Message route). Both fences: the initiator's ordering
        // flags do not travel.
        let v = unsafe {
            atomic_ops::perform_dyn(
                (base + a.offset) as *mut u8,
                a.dt,
                a.op,
                a.operands[0],
                a.operands[1],
                Flags::AD_ACQ | Flags::AD_REL,
            )
        };
        let len = if a.op.is_fetching() { size } else { 0 };
        let _ = self.send_net(
            src,
            false,
            wire::ATOMIC_RESULT_HEADER + len,
            false,
            sink,
            |out| wire::encode_atomic_result(a.id, v, len, out),
        );
    }

    /// Handles a one-sided message from `src` (see [`rma`]): places or
    /// answers a PUT, GET or ATOMIC aimed at this rank's segment, or
    /// completes an operation of this rank's that a PUT_ACK, GET_DATA or
    /// ATOMIC_RESULT answers.
    /// Anything malformed, out of the segment or not matching an operation
    /// in flight ends the job with a message.
    fn run_rma(&self, src: Rank, m: &[u8], placed: bool, sink: &dyn AmSink) {
        let bad = |what: &str| -> ! {
            gex_bootstrap::fatal(&format!(
                "udp conduit: a one-sided message from rank {src} {what}"
            ))
        };
        match m.first() {
            Some(&wire::RMA_ATOMIC) if !placed => return self.serve_atomic(src, m, sink),
            Some(&wire::RMA_ATOMIC_RESULT) if !placed => {
                let Some((id, value)) = wire::decode_atomic_result(m) else {
                    bad("is a malformed atomic result")
                };
                match self.link.ops.take_atomic(id, src, value.len()) {
                    Ok((dst, done)) => {
                        // A fetching operation's value (`start` checked
                        // that its destination takes the type's size,
                        // which `take_atomic` checked the value has).
                        if let Some(mut dst) = dst.filter(|_| !value.is_empty()) {
                            // The value's bytes in this machine's byte
                            // order (the wire's is little-endian).
                            let n = value.len();
                            let mut b = [0u8; 8];
                            b[..n].copy_from_slice(value);
                            let bits = u64::from_le_bytes(b).to_ne_bytes();
                            if cfg!(target_endian = "little") {
                                dst.fill(&bits[..n]);
                            } else {
                                dst.fill(&bits[8 - n..]);
                            }
                        }
                        done.complete();
                    }
                    Err(e) => bad(&format!("is an atomic result that {e}")),
                }
                return;
            }
            _ => {}
        }
        let Some(r) = wire::decode_rma(m, placed) else {
            bad("is malformed")
        };
        match r.kind {
            wire::RMA_PUT | wire::RMA_GET => {
                let len = if r.kind == wire::RMA_PUT {
                    r.len
                } else {
                    r.want
                };
                // Index 0 without an attached segment: a created segment
                // bound to the primordial endpoint, as a created
                // endpoint's.
                let attached = r.ep == 0 && self.link.segment.get().is_some();
                let at = if attached {
                    let Some(&(base, size)) = self.link.segment.get() else {
                        bad("arrived before this rank attached a segment")
                    };
                    if !gex_conduit::fits(r.offset, len, size) {
                        bad(&format!(
                            "targets [{:#x}, +{len}) outside this rank's segment of {size:#x} bytes",
                            r.offset
                        ));
                    }
                    (base + r.offset) as *mut u8
                } else {
                    // A created endpoint's segment: the range checked
                    // against this rank's own segment of that endpoint.
                    match gex_conduit::epseg::arrived_at_ep(r.ep, self.me, r.offset, len) {
                        Ok(a) => a as *mut u8,
                        Err(e) => bad(&format!("(endpoint {}): {e}", r.ep)),
                    }
                };
                // A PUT for a created endpoint is never placed (see
                // `wire::long_payload`): its payload is in the message.
                if placed && !attached {
                    bad("for a created endpoint arrived without its payload");
                }
                self.link.ops.count_served();
                if r.kind == wire::RMA_PUT {
                    if !placed {
                        // SAFETY: [offset, offset + len) lies inside this
                        // rank's mapped segment (checked above); the
                        // message is separate memory. Concurrent access to
                        // the segment is the client's to order, as for any
                        // put.
                        unsafe { std::ptr::copy_nonoverlapping(r.payload.as_ptr(), at, len) };
                    }
                    let _ = self.send_net(src, false, wire::RMA_HEADER, false, sink, |out| {
                        wire::encode_rma_append(wire::RMA_PUT_ACK, 0, 0, r.op, 0, &[], out)
                    });
                } else if len >= ZERO_COPY_MIN && attached {
                    // Sent from the segment, not copied into the message
                    // (the attached segment lives as long as the process;
                    // a created one may be client memory, freed after its
                    // destruction while the protocol still held it).
                    let mut head = Vec::with_capacity(wire::RMA_HEADER);
                    wire::encode_rma_header(wire::RMA_GET_DATA, 0, 0, r.op, 0, len, &mut head);
                    // SAFETY: the range lies inside this rank's segment
                    // (checked above), which stays mapped for the life of
                    // the process; it is only read. A get of memory that is
                    // written meanwhile returns whichever bytes were read,
                    // as for any get.
                    let body = unsafe { PutSource::borrowed(at, len) };
                    let _ = self.send_net_parts(
                        src,
                        false,
                        head.into(),
                        Bytes::from_owner(body),
                        false,
                        sink,
                    );
                } else {
                    // SAFETY: as above, the range lies inside the mapped
                    // segment; it is only read, into the message.
                    let bytes = unsafe { std::slice::from_raw_parts(at as *const u8, len) };
                    let _ = self.send_net(src, false, wire::RMA_HEADER + len, false, sink, |out| {
                        wire::encode_rma_append(wire::RMA_GET_DATA, 0, 0, r.op, 0, bytes, out)
                    });
                }
            }
            _ => match self.link.ops.take(r.op, src, r.kind, r.len, placed) {
                Ok(rma::Answered::Put(done)) => done.complete(),
                Ok(rma::Answered::Get(mut dst, done)) => {
                    if !placed {
                        dst.fill(r.payload);
                    }
                    drop(dst);
                    done.complete();
                }
                Err(why) => bad(&why),
            },
        }
    }

    /// The address peers send to.
    pub fn local_addr(&self) -> SocketAddr {
        let net = self.link.net.lock().unwrap_or_else(|p| p.into_inner());
        net.sock
            .local_addr()
            .expect("a bound socket has an address")
    }

    /// Protocol counters, for tests and diagnostics.
    pub fn stats(&self) -> proto::Stats {
        self.link
            .net
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .ep
            .stats()
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
        let scope = PollScope::for_sender(msg.is_request);
        let via_smp = self.smp.contains(dest);
        if !via_smp && dest >= self.boot.size() {
            return Err(Error::bad_arg(format!(
                "rank {dest} is not in the job of {} ranks",
                self.boot.size()
            )));
        }
        if via_smp {
            return send_or_progress(
                immediate,
                || self.smp.try_send(dest, msg),
                || {
                    self.poll(sink, scope);
                },
            );
        }
        let len = wire::encoded_len(msg);
        self.send_net(dest, msg.is_request, len, immediate, sink, |out| {
            wire::encode_append(msg, out)
        })
    }

    fn am_can_send(
        &self,
        dest: Rank,
        is_request: bool,
        category: AmCategory,
        nargs: usize,
        len: usize,
    ) -> bool {
        if self.smp.contains(dest) {
            return self.smp.can_send(dest, is_request, category, nargs, len);
        }
        if dest >= self.boot.size() {
            return false;
        }
        let lane = if is_request {
            proto::Lane::Request
        } else {
            proto::Lane::Reply
        };
        let net = self.link.net.lock().unwrap_or_else(|p| p.into_inner());
        net.ep
            .can_send_on(dest, lane, wire::encoded_len_of(category, nargs, len))
    }

    fn poll(&self, sink: &dyn AmSink, scope: PollScope) -> usize {
        // A load and a store, not a locked add: only a change is read, and
        // two polls racing still change it.
        let polls = self.link.app_polls.load(Ordering::Relaxed);
        self.link
            .app_polls
            .store(polls.wrapping_add(1), Ordering::Relaxed);
        let mut ran = self.smp.poll(sink, scope);
        // Take the right to run handlers before receiving, so that a
        // message completed now can run at once (see `progress_checked`).
        let held = scope == PollScope::All && !self.delivering.swap(true, Ordering::Acquire);
        let (received, first) = self.progress_net(held);
        if held {
            if let Some((src, m, placed)) = first {
                self.run(src, &m, placed, sink);
                ran += 1;
            }
            ran += self.deliver_held(sink, scope);
            self.delivering.store(false, Ordering::Release);
        } else {
            ran += self.deliver(sink, scope);
        }
        if ran + received == 0 {
            if self.idle_polls.fetch_add(1, Ordering::Relaxed) == 0 {
                let now = self.epoch.elapsed().as_nanos() as u64;
                self.idle_since.store(now, Ordering::Relaxed);
            }
        } else {
            self.idle_polls.store(0, Ordering::Relaxed);
        }
        ran
    }

    fn max_segment_size(&self) -> usize {
        self.smp.max_segment_size()
    }

    fn attach_segment(&self, size: usize, sink: &dyn AmSink) -> Result<Vec<SegmentDesc>> {
        let table = self.smp.attach_segment(&self.boot, size, &mut || {
            self.poll(sink, PollScope::All);
        })?;
        let mine = table[self.me as usize];
        let base = mine
            .local_base
            .ok_or_else(|| Error::resource("udp conduit: the local segment is not mapped"))?;
        let _ = self.link.segment.set((base, mine.size));
        Ok(table)
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

impl RmaCapability for UdpConduit {
    /// Ranks outside this rank's neighbourhood (inside it, segments are
    /// mapped and the RMA layer copies directly), once this rank has a
    /// segment.
    fn reaches(&self, peer: Rank) -> bool {
        peer < self.boot.size() && !self.smp.contains(peer) && self.link.segment.get().is_some()
    }

    fn max_transfer(&self) -> usize {
        rma::MAX_TRANSFER
    }

    /// A source of [`ZERO_COPY_MIN`] bytes or more is sent from where it
    /// is: the protocol keeps it by reference until the datagrams that
    /// carry it are acknowledged, and then drops it (local completion).
    /// Shorter ones are copied into the message (local completion at
    /// return).
    fn put(
        &self,
        peer: Rank,
        ep: EpIndex,
        offset: usize,
        src: PutSource,
        done: Arc<dyn OpCompletion>,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected> {
        let len = src.len();
        self.check_rma(peer, ep, len)?;
        let op = self.link.ops.insert_put(peer, done);
        let sent = if len >= ZERO_COPY_MIN {
            let mut head = Vec::with_capacity(wire::RMA_HEADER);
            wire::encode_rma_header(wire::RMA_PUT, ep, offset, op, 0, len, &mut head);
            self.send_net_parts(
                peer,
                true,
                head.into(),
                Bytes::from_owner(src),
                immediate,
                sink,
            )
        } else {
            self.send_net(peer, true, wire::RMA_HEADER + len, immediate, sink, |out| {
                wire::encode_rma_append(wire::RMA_PUT, ep, offset, op, 0, src.as_slice(), out)
            })
        };
        if !matches!(sent, Ok(Injected::Sent)) {
            self.link.ops.cancel(op);
        }
        sent
    }

    fn get(
        &self,
        peer: Rank,
        ep: EpIndex,
        offset: usize,
        dst: GetDest,
        done: Arc<dyn OpCompletion>,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected> {
        let want = dst.len();
        self.check_rma(peer, ep, want)?;
        let op = self.link.ops.insert_get(peer, dst, done);
        let sent = self.send_net(peer, true, wire::RMA_HEADER, immediate, sink, |out| {
            wire::encode_rma_append(wire::RMA_GET, ep, offset, op, want, &[], out)
        });
        if !matches!(sent, Ok(Injected::Sent)) {
            self.link.ops.cancel(op);
        }
        sent
    }
}

/// Remote atomics that the target's protocol shell performs with CPU
/// atomics on its own segment (ATOMIC / ATOMIC_RESULT, see [`wire`]): one
/// message each way and no AM handler at either end. Coherent with CPU
/// atomics on the same word, so gex-ratomic uses them for the targets its
/// CPU domains cannot reach directly.
impl AtomicCapability for UdpConduit {
    fn reaches(&self, peer: Rank) -> bool {
        RmaCapability::reaches(self, peer)
    }

    fn supports(&self, dt: Dt, op: Op) -> bool {
        dt.size().is_some() && op.valid_for_atomic(dt)
    }

    fn cpu_coherent(&self) -> bool {
        true
    }

    fn start(
        &self,
        peer: Rank,
        offset: usize,
        dt: Dt,
        op: Op,
        operands: [u64; 2],
        result: Option<GetDest>,
        done: Arc<dyn OpCompletion>,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected> {
        let size = match dt.size() {
            Some(n) if op.valid_for_atomic(dt) => n,
            _ => {
                return Err(Error::bad_arg(format!(
                    "udp conduit: {} is not an atomic operation on {}",
                    op.name(),
                    dt.name()
                )))
            }
        };
        if result.as_ref().is_some_and(|d| d.len() != size) {
            return Err(Error::bad_arg(format!(
                "udp conduit: an atomic's result must take the {size} bytes of {}",
                dt.name()
            )));
        }
        self.check_rma(peer, 0, size)?;
        let value_len = if op.is_fetching() { size } else { 0 };
        let id = self.link.ops.insert_atomic(peer, value_len, result, done);
        let Some(wire_id) = wire::compact_id(id) else {
            self.link.ops.cancel(id);
            return Err(Error::resource(
                "udp conduit: 2^24 one-sided operations in flight; an atomic's id has no room",
            ));
        };
        let sent = self.send_net(
            peer,
            true,
            wire::atomic_len(dt, op),
            immediate,
            sink,
            |out| wire::encode_atomic(dt, op, wire_id, offset, operands, out),
        );
        if !matches!(sent, Ok(Injected::Sent)) {
            self.link.ops.cancel(id);
        }
        sent
    }
}

impl UdpConduit {
    /// The preconditions of a one-sided start, as errors.
    fn check_rma(&self, peer: Rank, ep: EpIndex, len: usize) -> Result<()> {
        if ep as usize >= gex_types::MAX_EPS {
            return Err(Error::bad_arg(format!(
                "udp conduit: endpoint index {ep} is not below MAX_EPS"
            )));
        }
        if !RmaCapability::reaches(self, peer) {
            return Err(Error::bad_arg(format!(
                "udp conduit: rank {peer} is not reached by one-sided operations from rank {}",
                self.me
            )));
        }
        if len > rma::MAX_TRANSFER {
            return Err(Error::bad_arg(format!(
                "udp conduit: a one-sided transfer of {len} bytes is over the {}-byte limit",
                rma::MAX_TRANSFER
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn window_keeps_every_receive_buffer_from_overflowing() {
        let b = 8 << 20;
        // 2 ranks: 2.5 MiB per lane, 40 datagrams of 64 KiB.
        assert_eq!(super::window_for(&[b, b], &[1, 1], 65507, 256), 40);
        // 3 ranks: 1.25 MiB per sender and lane.
        assert_eq!(super::window_for(&[b; 3], &[2; 3], 65507, 256), 20);
        // 4 ranks: the receivers' 3 peers share it.
        assert_eq!(super::window_for(&[b; 4], &[3; 4], 65507, 256), 13);
        // The smallest receiver decides; a rank nobody reaches over UDP
        // (everyone on its host, with the bypass) does not.
        assert_eq!(
            super::window_for(&[b, 208 << 10, b], &[2, 2, 0], 65507, 256),
            4
        );
        assert_eq!(
            super::window_for(&[b, 1 << 30, b], &[2, 0, 2], 1472, 256),
            256
        );
        // Nobody over UDP: the configured window.
        assert_eq!(super::window_for(&[b], &[0], 65507, 256), 256);
    }

    use super::*;

    #[test]
    fn peer_timeout_is_parsed_strictly() {
        assert_eq!(parse_peer_timeout("2").unwrap(), Duration::from_secs(2));
        assert_eq!(
            parse_peer_timeout(" 0.5 ").unwrap(),
            Duration::from_millis(500)
        );
        assert_eq!(
            parse_peer_timeout("86400").unwrap(),
            Duration::from_secs(86400)
        );
        for bad in [
            "inf", "-inf", "NaN", "infinity", "0", "-1", "", "abc", "1e300", "86401", "2s",
        ] {
            let e = parse_peer_timeout(bad).expect_err(bad);
            assert!(e.message().contains("GEX_UDP_PEER_TIMEOUT"), "{bad:?}: {e}");
        }
    }

    fn settings(pairs: &[(&str, &str)]) -> gex_types::Result<UdpSettings> {
        UdpSettings::from_lookup(Lookup::pairs(pairs))
    }

    /// Every variable lands in its field; unset (or empty) ones keep the
    /// default.
    #[test]
    fn settings_are_read_from_the_variables() {
        assert_eq!(settings(&[]).unwrap(), UdpSettings::default());
        assert_eq!(
            settings(&[("GEX_UDP_MTU", ""), ("GEX_UDP_BYPASS", "")]).unwrap(),
            UdpSettings::default()
        );
        let s = settings(&[
            ("GEX_UDP_BYPASS", "0"),
            ("GEX_UDP_AUTH", "0"),
            ("GEX_UDP_MTU", "1472"),
            ("GEX_UDP_WINDOW", "16"),
            ("GEX_UDP_ADDR", "10.0.0.7"),
            ("GEX_HOST", "node3"),
            ("GEX_UDP_PEER_TIMEOUT", "2.5"),
            ("GEX_UDP_PROGRESS_THREAD", "1"),
            ("GEX_UDP_SPIN_US", "0"),
            ("GEX_UDP_INBOX_LIMIT", "8"),
        ])
        .unwrap();
        let want = UdpSettings {
            bypass: false,
            auth: false,
            mtu: Some(1472),
            window: Some(16),
            addr: Some("10.0.0.7".into()),
            host: Some("node3".into()),
            peer_timeout: Duration::from_millis(2500),
            progress_thread: true,
            spin: Duration::ZERO,
            inbox_limit: 8,
        };
        assert_eq!(s, want);
        assert!(want.validate().is_ok());
    }

    /// A value that does not parse, or is out of bounds, is an error naming
    /// the variable and the value.
    #[test]
    fn bad_values_are_errors_naming_the_variable_and_value() {
        for (var, bad) in [
            ("GEX_UDP_MTU", "abc"),
            ("GEX_UDP_MTU", "511"),
            ("GEX_UDP_MTU", "65508"),
            ("GEX_UDP_WINDOW", "0"),
            ("GEX_UDP_WINDOW", "many"),
            ("GEX_UDP_PEER_TIMEOUT", "inf"),
            ("GEX_UDP_PEER_TIMEOUT", "0"),
            ("GEX_UDP_SPIN_US", "-1"),
            ("GEX_UDP_INBOX_LIMIT", "0"),
            ("GEX_UDP_INBOX_LIMIT", "16777217"),
            ("GEX_UDP_BYPASS", "no"),
            ("GEX_UDP_AUTH", "off"),
            ("GEX_UDP_PROGRESS_THREAD", "yes"),
        ] {
            let e = settings(&[(var, bad)]).expect_err(bad);
            let want = format!("{var}={bad:?}");
            assert!(e.message().contains(&want), "{var}={bad}: {e}");
        }
    }

    /// Values set in code meet the variables' bounds when the conduit is
    /// created; the error names the field and its variable.
    #[test]
    fn settings_made_in_code_are_checked() {
        let d = UdpSettings::default;
        let cases = [
            (
                UdpSettings {
                    mtu: Some(100),
                    ..d()
                },
                "mtu (GEX_UDP_MTU) = 100",
            ),
            (
                UdpSettings {
                    window: Some(0),
                    ..d()
                },
                "window (GEX_UDP_WINDOW) = 0",
            ),
            (
                UdpSettings {
                    inbox_limit: 0,
                    ..d()
                },
                "inbox_limit (GEX_UDP_INBOX_LIMIT) = 0",
            ),
            (
                UdpSettings {
                    peer_timeout: Duration::ZERO,
                    ..d()
                },
                "peer_timeout (GEX_UDP_PEER_TIMEOUT) = 0ns",
            ),
        ];
        for (s, want) in cases {
            let e = s.validate().unwrap_err();
            assert!(e.message().contains(want), "{want}: {e}");
        }
        // A factory built from settings keeps them; one from the
        // environment has none until it creates its conduit.
        let s = UdpSettings {
            mtu: Some(600),
            ..d()
        };
        assert_eq!(UdpFactory::new(s.clone()).settings(), Some(&s));
        assert_eq!(UdpFactory::from_env().settings(), None);
    }

    /// The defaults are the ones the table of variables (and so the README)
    /// gives.
    #[test]
    fn defaults_match_the_table_of_variables() {
        let d = UdpSettings::default();
        let table = |name: &str| gex_bootstrap::vars::var(name).unwrap().default;
        let on_off = |b: bool| if b { "on" } else { "off" };
        assert_eq!(table("GEX_UDP_BYPASS"), on_off(d.bypass));
        assert_eq!(table("GEX_UDP_AUTH"), on_off(d.auth));
        assert_eq!(table("GEX_UDP_PROGRESS_THREAD"), on_off(d.progress_thread));
        assert_eq!(
            table("GEX_UDP_PEER_TIMEOUT"),
            format!("{} (seconds)", d.peer_timeout.as_secs())
        );
        assert_eq!(table("GEX_UDP_SPIN_US"), d.spin.as_micros().to_string());
        assert_eq!(table("GEX_UDP_INBOX_LIMIT"), d.inbox_limit.to_string());
        assert_eq!(d.mtu, None);
        assert_eq!(table("GEX_UDP_MTU"), "65507 on one host, else 1472");
        assert_eq!(d.window, None);
        assert_eq!(d.addr, None);
        assert_eq!(d.host, None);
    }
}
