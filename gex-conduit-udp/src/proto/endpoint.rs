//! The per-rank protocol state machine.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::wire::{
    chunks, decode_datagram, encode_chunk_head, encode_data_head, encode_datagram, expand_seq,
    has_preamble, AckInfo, DataInfo, Datagram, Kind, Lane, CHUNK_HEADER_LEN,
    FIRST_CHUNK_HEADER_LEN, MAX_DATAGRAM, MAX_MESSAGE, MAX_OVERHEAD, MAX_SACK_WORDS, MIN_DATAGRAM,
};
use super::{Auth, Backpressure, Config, PeerStats, Stats};

/// The granularity of the zero-copy send path: a long chunk's whole
/// pieces of this length are sent by reference (scatter-gather) and the
/// rest is copied into the datagram's head. The MAC does not depend on the
/// split.
pub const GATHER_PIECE: usize = 16 << 10;

/// Largest window accepted (far below 2^31, so 32-bit sequence numbers on
/// the wire expand exactly).
const MAX_WINDOW: usize = 1 << 20;
/// A datagram is deemed lost once one transmitted this many transmissions
/// later has been acknowledged.
const PACKET_THRESHOLD: u64 = 3;
/// Most in-order datagrams received before an immediate ACK.
const MAX_ACK_EVERY: u32 = 8;
/// Sequence numbers after `cum` covered by a SACK bitmap.
const SACK_SPAN: usize = 64 * MAX_SACK_WORDS;

/// Emptied body buffers kept for reuse (small ones only: the bodies of
/// short messages, which are sent and acknowledged at the highest rates).
const SPARE_BODIES: usize = 64;
/// See [`SPARE_BODIES`].
const SPARE_MAX: usize = 4096;

/// A DATA body: `head`, then `tail` (a slice of one message, not copied;
/// empty when the whole body was copied into `head`).
#[derive(Debug, Default)]
struct Body {
    head: Vec<u8>,
    tail: Bytes,
}

impl Body {
    fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }
}

/// A DATA datagram in flight (sent, not yet cumulatively acknowledged).
#[derive(Debug)]
struct Sent {
    body: Body,
    /// Time of the latest transmission.
    last_sent: Instant,
    /// Transmission serial of the latest transmission (per peer, increasing).
    serial: u64,
    /// Serial of the first transmission (`u64::MAX` until it is sent). An
    /// acknowledgement of a datagram sent more than once may be for any of
    /// its transmissions: loss detection credits it with the first, so
    /// that the acknowledgement of an original does not pass for that of
    /// a later retransmission and declare everything sent in between lost.
    first_serial: u64,
    /// Transmissions so far (RTT samples only from datagrams sent once).
    tx_count: u32,
    /// Selectively acknowledged (still held until the cumulative point passes).
    acked: bool,
    /// Deemed lost and queued for retransmission.
    lost: bool,
}

/// A message waiting to be packed: `head` then `body` (two parts, so that
/// a header can go before a payload the sender keeps by reference, as a
/// one-sided put's; most messages are all `body`).
#[derive(Debug)]
struct Pending {
    head: Bytes,
    body: Bytes,
    /// Bytes already packed into DATA bodies.
    off: usize,
}

impl Pending {
    fn len(&self) -> usize {
        self.head.len() + self.body.len()
    }

    /// Appends the message bytes `range` to `out`.
    fn copy_range(&self, range: std::ops::Range<usize>, out: &mut Vec<u8>) {
        let h = self.head.len();
        if range.start < h {
            out.extend_from_slice(&self.head[range.start..range.end.min(h)]);
        }
        if range.end > h {
            out.extend_from_slice(&self.body[range.start.max(h) - h..range.end - h]);
        }
    }

    /// The message bytes `range` by reference; they must lie in one part.
    fn slice(&self, range: std::ops::Range<usize>) -> Bytes {
        let h = self.head.len();
        if range.end <= h {
            self.head.slice(range)
        } else {
            assert!(range.start >= h, "a referenced range spans both parts");
            self.body.slice(range.start - h..range.end - h)
        }
    }
}

/// Toward one peer.
#[derive(Debug)]
struct SendState {
    /// Lowest sequence number not cumulatively acknowledged.
    una: u64,
    /// Sequence numbers `una..una + inflight.len()`.
    inflight: VecDeque<Sent>,
    /// Entries of `inflight` not selectively acknowledged.
    unacked: usize,
    /// Body bytes held in `inflight`.
    inflight_bytes: usize,
    queue: VecDeque<Pending>,
    /// A body built whole by `send_with` while nothing was queued, sent
    /// before the queue.
    packed: Option<Body>,
    /// Sum of `len + FIRST_CHUNK_HEADER_LEN` over `queue`.
    queue_charge: usize,
    /// Sequence numbers to retransmit (may hold stale ones; checked on use).
    retx: VecDeque<u64>,
    next_serial: u64,
    largest_acked_serial: Option<u64>,
    srtt: Option<Duration>,
    rttvar: Duration,
    rto: Duration,
    rto_deadline: Option<Instant>,
    /// RTT of the latest sample.
    latest_rtt: Duration,
    /// When a datagram that passed the packet threshold also passes the time
    /// threshold (the loss-detection timer).
    loss_time: Option<Instant>,
    /// A timeout resent only the oldest datagram out: the next
    /// acknowledgement with news tells whether the timeout was spurious
    /// (it acknowledges datagrams sent once: the peer was only slow) or
    /// not (only the resent one: the others are lost too and go again).
    rto_probe: bool,
    /// Since when data toward the peer has been outstanding (None when idle).
    outstanding_since: Option<Instant>,
}

impl SendState {
    fn new(cfg: &Config) -> SendState {
        SendState {
            una: 0,
            inflight: VecDeque::new(),
            unacked: 0,
            inflight_bytes: 0,
            queue: VecDeque::new(),
            packed: None,
            queue_charge: 0,
            retx: VecDeque::new(),
            next_serial: 0,
            largest_acked_serial: None,
            srtt: None,
            rttvar: Duration::ZERO,
            rto: cfg.initial_rto,
            rto_deadline: None,
            latest_rtt: Duration::ZERO,
            loss_time: None,
            rto_probe: false,
            outstanding_since: None,
        }
    }

    fn nxt(&self) -> u64 {
        self.una + self.inflight.len() as u64
    }

    fn idle(&self) -> bool {
        self.inflight.is_empty() && self.queue.is_empty() && self.packed.is_none()
    }

    fn on_rtt_sample(&mut self, r: Duration, cfg: &Config) {
        self.latest_rtt = r;
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(s) => {
                let d = s.abs_diff(r);
                self.rttvar = (self.rttvar * 3 + d) / 4;
                self.srtt = Some((s * 7 + r) / 8);
            }
        }
        let s = self.srtt.unwrap_or(r);
        self.rto = (s + self.rttvar * 4).clamp(cfg.min_rto, cfg.max_rto);
    }

    /// Marks lost every unacknowledged datagram that is both
    /// [`PACKET_THRESHOLD`] transmissions older than the newest acknowledged
    /// one and older than 9/8 of the RTT; arms the loss timer for those that
    /// pass the first test only. Returns how many were marked.
    fn detect_losses(&mut self, now: Instant) -> u64 {
        self.loss_time = None;
        let Some(largest) = self.largest_acked_serial else {
            return 0;
        };
        let rtt = self.srtt.unwrap_or(self.rto).max(self.latest_rtt);
        let threshold = rtt * 9 / 8;
        let mut marked = 0;
        let una = self.una;
        for (i, e) in self.inflight.iter_mut().enumerate() {
            if e.acked || e.lost || e.serial + PACKET_THRESHOLD > largest {
                continue;
            }
            let lost_at = e.last_sent + threshold;
            if lost_at <= now {
                e.lost = true;
                self.retx.push_back(una + i as u64);
                marked += 1;
            } else {
                self.loss_time = Some(self.loss_time.map_or(lost_at, |t| t.min(lost_at)));
            }
        }
        marked
    }

    /// Packs queued messages into one body of at most `max_body` bytes.
    /// Small chunks are copied (several messages may share a datagram);
    /// whole [`GATHER_PIECE`]s of a long chunk are kept by reference and end
    /// the body (also after small chunks: in a flood, the end of one large
    /// message and most of the next share a datagram, and the large part is
    /// not copied). The socket shell passes the referenced part to the
    /// kernel as a second buffer.
    fn pack(&mut self, max_body: usize, spare: &mut Vec<Vec<u8>>) -> Body {
        let want = max_body.min(self.queue_charge + CHUNK_HEADER_LEN);
        let mut head = match spare.pop() {
            Some(mut v) => {
                v.reserve(want);
                v
            }
            None => Vec::with_capacity(want),
        };
        loop {
            let alone = self.queue.len() == 1;
            let Some(front) = self.queue.front_mut() else {
                break;
            };
            let first = front.off == 0;
            let hdr = if first {
                FIRST_CHUNK_HEADER_LEN
            } else {
                CHUNK_HEADER_LEN
            };
            let remaining = front.len() - front.off;
            let room = max_body - head.len();
            if room < hdr + remaining.min(1) {
                break;
            }
            // Do not split a message that would fit whole in the next datagram.
            if !head.is_empty() && hdr + remaining > room && hdr + remaining <= max_body {
                break;
            }
            let mut take = remaining.min(room - hdr);
            // A chunk of at least one gather piece is referenced, not
            // copied, and ends the body; the referenced part is whole pieces
            // (see [`GATHER_PIECE`]), so the first `take % GATHER_PIECE` bytes
            // are copied into the head, or, for a message alone in the
            // queue that goes on in the next datagram anyway, left for it.
            let mut lead = take % GATHER_PIECE;
            if take < remaining && alone && take - lead >= GATHER_PIECE {
                take -= lead;
                lead = 0;
            }
            // The referenced part lies in one of the message's parts: a
            // lead that would end inside the head part grows by whole
            // pieces.
            let (start, split) = (front.off, front.head.len());
            if start + lead < split && start + take > split {
                lead += (split - start - lead).div_ceil(GATHER_PIECE) * GATHER_PIECE;
            }
            let gather = take >= lead + GATHER_PIECE;
            let last = take == remaining;
            let total = first.then_some(front.len() as u32);
            let range = start..start + take;
            front.off += take;
            encode_chunk_head(&mut head, first, last, total, take);
            let tail = if gather {
                front.copy_range(range.start..range.start + lead, &mut head);
                front.slice(range.start + lead..range.end)
            } else {
                front.copy_range(range, &mut head);
                Bytes::new()
            };
            if last {
                self.queue_charge -= front.len() + FIRST_CHUNK_HEADER_LEN;
                self.queue.pop_front();
            }
            if gather {
                return Body { head, tail };
            }
        }
        debug_assert!(!head.is_empty() && head.len() <= max_body);
        Body {
            head,
            tail: Bytes::new(),
        }
    }
}

/// Lets the receiver of a message that spans several datagrams put most
/// of its bytes where they finally belong while it is reassembled, instead
/// of into a message buffer to be copied again later.
pub trait Placer {
    /// Called once per multi-datagram message, with its first chunk's
    /// bytes and its total length. `Some((split, token))` sends message
    /// bytes from offset `split` (at most `first.len()`) on to
    /// [`Placer::write`] with `token`; only the bytes before `split` are
    /// kept, and [`Endpoint::poll_placed_message`] reports the message as
    /// placed. `None` keeps the whole message.
    fn split(&mut self, peer: u32, first: &[u8], total: usize) -> Option<(usize, u64)>;

    /// Message bytes at `at` bytes past `split`, of a message `split`
    /// accepted. Called in order, each byte exactly once.
    fn write(&mut self, token: u64, at: usize, bytes: &[u8]);
}

/// The [`Placer`] that places nothing.
pub struct KeepAll;

impl Placer for KeepAll {
    fn split(&mut self, _peer: u32, _first: &[u8], _total: usize) -> Option<(usize, u64)> {
        None
    }

    fn write(&mut self, _token: u64, _at: usize, _bytes: &[u8]) {}
}

/// A message being reassembled.
#[derive(Debug)]
struct Partial {
    /// Total length.
    total: usize,
    /// The bytes kept (all of them, or those before the split).
    kept: Vec<u8>,
    /// Where the rest goes, if placed: (split, token).
    placed: Option<(usize, u64)>,
    /// Bytes handed to the placer.
    written: usize,
}

/// From one peer.
#[derive(Debug)]
struct RecvState {
    /// Next sequence number expected (everything below was processed).
    next: u64,
    /// Out-of-order bodies: index `i` holds sequence number `next + i`
    /// (index 0 is always empty; the last element, if any, is full).
    ooo: VecDeque<Option<Box<[u8]>>>,
    ooo_bytes: usize,
    /// The message being reassembled.
    partial: Option<Partial>,
    received_any: bool,
    /// Something received that no ACK sent since covers.
    ack_pending: bool,
    /// ACK at the next transmit opportunity.
    ack_now: bool,
    /// In-order datagrams since the last ACK.
    since_ack: u32,
    ack_deadline: Option<Instant>,
}

impl RecvState {
    fn new() -> RecvState {
        RecvState {
            next: 0,
            ooo: VecDeque::new(),
            ooo_bytes: 0,
            partial: None,
            received_any: false,
            ack_pending: false,
            ack_now: false,
            since_ack: 0,
            ack_deadline: None,
        }
    }

    fn ack_due(&self, now: Instant) -> bool {
        self.ack_pending && (self.ack_now || self.ack_deadline.is_some_and(|d| d <= now))
    }

    /// The current ACK block; clears the pending ACK.
    fn take_ack(&mut self) -> AckInfo {
        let mut ack = AckInfo {
            cum: self.next as u32,
            ..AckInfo::default()
        };
        for (i, slot) in self.ooo.iter().enumerate().skip(1).take(SACK_SPAN) {
            if slot.is_some() {
                let bit = i - 1;
                ack.sack[bit / 64] |= 1 << (bit % 64);
                ack.nsack = (bit / 64 + 1) as u8;
            }
        }
        self.ack_pending = false;
        self.ack_now = false;
        self.since_ack = 0;
        self.ack_deadline = None;
        ack
    }

    fn partial_bytes(&self) -> usize {
        self.partial.as_ref().map_or(0, |p| p.kept.len())
    }
}

/// Toward and from one peer: two independent lanes (index
/// [`Lane::index`]), requests and replies.
#[derive(Debug)]
struct Peer {
    snd: [SendState; 2],
    rcv: [RecvState; 2],
    /// In `Endpoint::ready`.
    in_ready: bool,
    /// When the last datagram from the peer arrived (any kind, any lane).
    last_heard: Option<Instant>,
    /// When the last datagram to the peer was emitted.
    last_tx: Option<Instant>,
    /// BYE datagrams still to send (see [`Endpoint::send_bye`]).
    bye_to_send: u8,
    /// The peer said BYE: its silence is expected from now on.
    departed: bool,
    /// What was counted toward and from this peer.
    counts: PeerStats,
}

impl Peer {
    fn idle(&self) -> bool {
        self.snd.iter().all(SendState::idle)
    }
}

/// Complete messages waiting for `poll_message`.
#[derive(Debug, Default)]
struct Inbox {
    /// (sender, bytes kept, placed).
    messages: VecDeque<(u32, Vec<u8>, bool)>,
    bytes: usize,
}

/// The protocol state of one rank toward all its peers. See the module
/// documentation.
#[derive(Debug)]
pub struct Endpoint {
    me: u32,
    cfg: Config,
    /// Job tag and MAC key, derived from `cfg.key`.
    auth: Auth,
    max_body: usize,
    ack_every: u32,
    peers: Vec<Peer>,
    /// Peers that may have something to transmit (round robin).
    ready: VecDeque<u32>,
    inbox: Inbox,
    /// Emptied body buffers of acknowledged datagrams, reused by `pack`.
    spare: Vec<Vec<u8>>,
    stats: Stats,
    /// Since when idle peers are watched too (see [`Endpoint::start_keepalive`]).
    keepalive_since: Option<Instant>,
}

impl Endpoint {
    /// An endpoint for rank `me` among ranks `0..npeers`; `cfg` is clamped
    /// into range (see [`Config`]).
    pub fn new(me: u32, npeers: u32, cfg: Config) -> Endpoint {
        let mut cfg = cfg;
        cfg.max_datagram = cfg.max_datagram.clamp(MIN_DATAGRAM, MAX_DATAGRAM);
        cfg.window = cfg.window.clamp(1, MAX_WINDOW);
        cfg.min_rto = cfg.min_rto.min(cfg.max_rto);
        cfg.initial_rto = cfg.initial_rto.clamp(cfg.min_rto, cfg.max_rto);
        let peers = (0..npeers)
            .map(|_| Peer {
                snd: [SendState::new(&cfg), SendState::new(&cfg)],
                rcv: [RecvState::new(), RecvState::new()],
                in_ready: false,
                last_heard: None,
                last_tx: None,
                bye_to_send: 0,
                departed: false,
                counts: PeerStats::default(),
            })
            .collect();
        Endpoint {
            me,
            auth: Auth::new(&cfg),
            max_body: cfg.max_datagram - MAX_OVERHEAD,
            ack_every: ((cfg.window / 2) as u32).clamp(1, MAX_ACK_EVERY),
            cfg,
            peers,
            ready: VecDeque::new(),
            inbox: Inbox::default(),
            spare: Vec::new(),
            stats: Stats::default(),
            keepalive_since: None,
        }
    }

    /// From `now` on, watches every peer, not only those with data
    /// outstanding: a peer not sent to for `peer_timeout / 4` gets a
    /// heartbeat (a standalone ACK of the request lane, which changes
    /// nothing at the receiver but proves this rank alive), and
    /// [`Endpoint::dead_peer`] reports any peer silent for `peer_timeout`
    /// (counted from `now` at the earliest), except one that said BYE. The
    /// caller must then call [`Endpoint::handle_timeout`] at
    /// [`Endpoint::next_timeout`] even while the application computes (the
    /// udp shell does from a thread).
    pub fn start_keepalive(&mut self, now: Instant) {
        self.keepalive_since = Some(now);
    }

    /// Sends every peer a BYE (twice, against loss; never acknowledged) at
    /// the next transmit opportunities: this endpoint has finished, and
    /// peers watching it with [`Endpoint::start_keepalive`] must not take
    /// its silence for death. Call it last, after everything sent was
    /// acknowledged.
    pub fn send_bye(&mut self) {
        for peer in 0..self.peers.len() as u32 {
            if peer != self.me {
                self.peers[peer as usize].bye_to_send = 2;
                self.mark_ready(peer);
            }
        }
    }

    /// Whether `peer` said BYE.
    pub fn has_departed(&self, peer: u32) -> bool {
        self.peers.get(peer as usize).is_some_and(|p| p.departed)
    }

    /// This endpoint's rank.
    pub fn me(&self) -> u32 {
        self.me
    }

    /// Number of ranks.
    pub fn npeers(&self) -> u32 {
        self.peers.len() as u32
    }

    /// The configuration in force (after clamping).
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Largest DATA body: `max_datagram - MAX_OVERHEAD`.
    pub fn max_body(&self) -> usize {
        self.max_body
    }

    /// Queues one message (any length up to 64 MiB) for `peer` on the
    /// request lane, fragmenting it. `Err(Backpressure)` if it does not fit
    /// the queue budget toward that peer now (see [`Endpoint::can_send`]);
    /// then nothing is queued.
    ///
    /// # Panics
    /// If `peer >= npeers` or `msg` is longer than [`MAX_MESSAGE`].
    pub fn send(&mut self, peer: u32, msg: &[u8], now: Instant) -> Result<(), Backpressure> {
        self.send_on(peer, Lane::Request, msg, now)
    }

    /// [`Endpoint::send`] on `lane`.
    ///
    /// # Panics
    /// As [`Endpoint::send`].
    pub fn send_on(
        &mut self,
        peer: u32,
        lane: Lane,
        msg: &[u8],
        now: Instant,
    ) -> Result<(), Backpressure> {
        if !self.can_send_on(peer, lane, msg.len()) {
            self.check_send(peer, msg.len());
            return Err(Backpressure);
        }
        self.send_owned(peer, lane, &mut msg.to_vec(), now)
    }

    /// [`Endpoint::send`] taking the message's buffer instead of copying
    /// it: on success `msg` is left empty; on `Err(Backpressure)` it is
    /// untouched.
    ///
    /// # Panics
    /// As [`Endpoint::send`].
    pub fn send_owned(
        &mut self,
        peer: u32,
        lane: Lane,
        msg: &mut Vec<u8>,
        now: Instant,
    ) -> Result<(), Backpressure> {
        self.check_send(peer, msg.len());
        if !self.can_send_on(peer, lane, msg.len()) {
            return Err(Backpressure);
        }
        self.enqueue(
            peer,
            lane,
            Bytes::new(),
            Bytes::from(std::mem::take(msg)),
            now,
        );
        Ok(())
    }

    /// [`Endpoint::send_owned`] of the message `head` followed by `body`,
    /// both kept by reference (not copied) until the datagrams that carry
    /// them are acknowledged: a payload the caller wants sent zero-copy.
    ///
    /// # Panics
    /// As [`Endpoint::send`].
    pub fn send_parts(
        &mut self,
        peer: u32,
        lane: Lane,
        head: Bytes,
        body: Bytes,
        now: Instant,
    ) -> Result<(), Backpressure> {
        let len = head.len() + body.len();
        self.check_send(peer, len);
        if !self.can_send_on(peer, lane, len) {
            return Err(Backpressure);
        }
        self.enqueue(peer, lane, head, body, now);
        Ok(())
    }

    fn enqueue(&mut self, peer: u32, lane: Lane, head: Bytes, body: Bytes, now: Instant) {
        let snd = &mut self.peers[peer as usize].snd[lane.index()];
        if snd.idle() {
            snd.outstanding_since = Some(now);
        }
        let msg = Pending { head, body, off: 0 };
        snd.queue_charge += msg.len() + FIRST_CHUNK_HEADER_LEN;
        snd.queue.push_back(msg);
        self.stats.messages_sent += 1;
        self.peers[peer as usize].counts.messages_sent += 1;
        self.mark_ready(peer);
    }

    /// Sends a message of exactly `len` bytes that `fill` appends to the
    /// buffer it is given. When nothing waits toward `peer` and the window
    /// is open, a message that fits one datagram is written straight into
    /// its DATA body (no message buffer, no second copy), the common case of
    /// a small request or reply; otherwise as [`Endpoint::send_owned`].
    ///
    /// # Panics
    /// As [`Endpoint::send`], or if `fill` appends other than `len` bytes.
    pub fn send_with(
        &mut self,
        peer: u32,
        lane: Lane,
        len: usize,
        now: Instant,
        fill: impl FnOnce(&mut Vec<u8>),
    ) -> Result<(), Backpressure> {
        self.check_send(peer, len);
        let window = self.cfg.window;
        let fits = len + FIRST_CHUNK_HEADER_LEN <= self.max_body;
        let snd = &mut self.peers[peer as usize].snd[lane.index()];
        if !(fits && snd.queue.is_empty() && snd.packed.is_none() && snd.inflight.len() < window) {
            // Checked before encoding, so that backpressure costs no copy.
            if !self.can_send_on(peer, lane, len) {
                return Err(Backpressure);
            }
            let mut msg = Vec::with_capacity(len);
            fill(&mut msg);
            assert_eq!(msg.len(), len, "send_with: fill wrote the wrong length");
            return self.send_owned(peer, lane, &mut msg, now);
        }
        let mut head = self.spare.pop().unwrap_or_default();
        head.reserve(len + FIRST_CHUNK_HEADER_LEN);
        encode_chunk_head(&mut head, true, true, Some(len as u32), len);
        fill(&mut head);
        assert_eq!(
            head.len(),
            len + FIRST_CHUNK_HEADER_LEN,
            "send_with: fill wrote the wrong length"
        );
        if snd.idle() {
            snd.outstanding_since = Some(now);
        }
        snd.packed = Some(Body {
            head,
            tail: Bytes::new(),
        });
        self.stats.messages_sent += 1;
        self.peers[peer as usize].counts.messages_sent += 1;
        self.mark_ready(peer);
        Ok(())
    }

    /// The preconditions of a send, as panics.
    fn check_send(&self, peer: u32, len: usize) {
        assert!(
            (peer as usize) < self.peers.len(),
            "send to rank {peer} of {}",
            self.peers.len()
        );
        assert!(
            len <= MAX_MESSAGE,
            "message of {len} bytes over the {MAX_MESSAGE}-byte limit"
        );
    }

    /// Whether a message of `len` bytes would be accepted by `send` now on
    /// the request lane: the queue toward `peer` is empty (then any message
    /// up to 64 MiB goes), or its charge (`len + 7` per queued message)
    /// stays within `window * max_body` bytes with this one.
    pub fn can_send(&self, peer: u32, len: usize) -> bool {
        self.can_send_on(peer, Lane::Request, len)
    }

    /// [`Endpoint::can_send`] for `lane` (each lane has its own budget).
    pub fn can_send_on(&self, peer: u32, lane: Lane, len: usize) -> bool {
        let Some(p) = self.peers.get(peer as usize) else {
            return false;
        };
        let snd = &p.snd[lane.index()];
        len <= MAX_MESSAGE
            && (snd.queue.is_empty()
                || snd.queue_charge + len + FIRST_CHUNK_HEADER_LEN
                    <= self.cfg.window.saturating_mul(self.max_body))
    }

    /// Processes one received datagram. Malformed or foreign ones are
    /// dropped and counted (see [`Stats`]); never panics.
    pub fn handle_datagram(&mut self, data: &[u8], now: Instant) {
        self.handle_datagram_gated(data, now, true);
    }

    /// [`Endpoint::handle_datagram`] for a receiver that may be unable to
    /// take more requests: with `accept_data` false the datagram's
    /// acknowledgements are still processed (so this endpoint's own sends
    /// keep moving) but DATA of the request lane is dropped unacknowledged
    /// and counted in `Stats::refused_data`; the sender retransmits it
    /// later. DATA of the reply lane is always taken: a reply must always
    /// make progress (a peer's handler may be waiting to send it), and the
    /// reply lane's window bounds what it can add. A receiver that stopped
    /// reading its socket instead would deadlock against a peer waiting for
    /// window space, and would take the peer for dead.
    pub fn handle_datagram_gated(&mut self, data: &[u8], now: Instant, accept_data: bool) {
        self.handle_datagram_placed(data, now, accept_data, &mut KeepAll);
    }

    /// [`Endpoint::handle_datagram_gated`] with `placer` deciding where the
    /// bytes of messages spanning several datagrams go.
    pub fn handle_datagram_placed(
        &mut self,
        data: &[u8],
        now: Instant,
        accept_data: bool,
        placer: &mut dyn Placer,
    ) {
        self.stats.datagrams_received += 1;
        // Authentication first: nothing of a datagram is looked at (beyond
        // the magic, version and tag) and nothing but a drop counter
        // changes until its MAC is known to be right.
        if !has_preamble(data) {
            self.stats.dropped_malformed += 1;
            return;
        }
        if !self.auth.tag_matches(data) {
            self.stats.dropped_bad_key += 1;
            return;
        }
        if !self.auth.verify(data) {
            self.stats.dropped_bad_mac += 1;
            return;
        }
        let Some(d) = decode_datagram(data) else {
            self.stats.dropped_malformed += 1;
            return;
        };
        if d.dst != self.me {
            self.stats.dropped_misaddressed += 1;
            return;
        }
        if d.src as usize >= self.peers.len() || d.src == self.me {
            self.stats.dropped_bad_source += 1;
            return;
        }
        let peer = d.src;
        for lane in Lane::ALL {
            if let Some(ack) = d.ack_of(lane) {
                if !self.ack_is_valid(peer, lane, ack) {
                    self.stats.dropped_malformed += 1;
                    return;
                }
            }
        }
        self.peers[peer as usize].last_heard = Some(now);
        self.peers[peer as usize].counts.datagrams_received += 1;
        if d.kind() == Kind::Bye {
            self.peers[peer as usize].departed = true;
            self.stats.byes_received += 1;
            return;
        }
        for lane in Lane::ALL {
            if let Some(ack) = d.ack_of(lane) {
                self.on_ack(peer, lane, ack, now);
            }
        }
        if let Some(data) = d.data {
            if accept_data || data.lane == Lane::Reply {
                self.on_data(peer, data, now, placer);
            } else {
                self.stats.refused_data += 1;
                self.peers[peer as usize].counts.refused_data += 1;
            }
        }
    }

    /// Writes the next datagram to transmit into `buf` (cleared first) and
    /// returns its destination. Peers take turns, one datagram each.
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<u32> {
        let (peer, tail) = self.poll_transmit_gather(now, buf)?;
        buf.extend_from_slice(&tail);
        Some(peer)
    }

    /// [`Endpoint::poll_transmit`] without copying large message bytes:
    /// the datagram is `buf` followed by the returned bytes (often empty),
    /// for a scatter-gather send.
    pub fn poll_transmit_gather(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
    ) -> Option<(u32, Bytes)> {
        buf.clear();
        let mut tail = Bytes::new();
        while let Some(peer) = self.ready.pop_front() {
            self.peers[peer as usize].in_ready = false;
            if self.transmit_for(peer, now, buf, &mut tail) {
                self.peers[peer as usize].last_tx = Some(now);
                // The datagram is complete: authenticate it.
                self.auth.seal(buf, &tail);
                if self.has_work(peer, now) {
                    self.mark_ready(peer);
                }
                return Some((peer, tail));
            }
        }
        None
    }

    /// Whether [`Endpoint::poll_transmit`] has a datagram to give now.
    pub fn has_transmit(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Whether [`Endpoint::poll_message`] has a message to give.
    pub fn has_message(&self) -> bool {
        !self.inbox.messages.is_empty()
    }

    /// The next complete message, in order per sender: (sender, bytes).
    /// A message a [`Placer`] placed yields only the bytes it kept; use
    /// [`Endpoint::poll_placed_message`] when placing.
    pub fn poll_message(&mut self) -> Option<(u32, Vec<u8>)> {
        self.poll_placed_message().map(|(p, m, _)| (p, m))
    }

    /// The next complete message: (sender, bytes kept, whether the rest
    /// went to a [`Placer`]).
    pub fn poll_placed_message(&mut self) -> Option<(u32, Vec<u8>, bool)> {
        let m = self.inbox.messages.pop_front()?;
        self.inbox.bytes -= m.1.len();
        Some(m)
    }

    /// When `handle_timeout` should next be called (retransmission,
    /// delayed ACK, or with [`Endpoint::start_keepalive`] a heartbeat), if
    /// ever. Peer death is not a timer here: check [`Endpoint::dead_peer`]
    /// after `handle_timeout` (while data is outstanding the retransmission
    /// timer fires at least every `max_rto`).
    pub fn next_timeout(&self) -> Option<Instant> {
        let lanes = self
            .peers
            .iter()
            .flat_map(|p| Lane::ALL.map(|l| (&p.snd[l.index()], &p.rcv[l.index()])))
            .flat_map(|(snd, rcv)| {
                let ack = if rcv.ack_pending && !rcv.ack_now {
                    rcv.ack_deadline
                } else {
                    None
                };
                [snd.rto_deadline, snd.loss_time, ack]
            })
            .flatten()
            .min();
        let beat = (0..self.peers.len() as u32)
            .filter_map(|i| self.heartbeat_at(i))
            .min();
        lanes.into_iter().chain(beat).min()
    }

    /// When a heartbeat to `peer` is due, when keepalive is on.
    fn heartbeat_at(&self, peer: u32) -> Option<Instant> {
        let since = self.keepalive_since?;
        let p = &self.peers[peer as usize];
        if peer == self.me || p.departed {
            return None;
        }
        Some(p.last_tx.map_or(since, |t| t.max(since)) + self.cfg.peer_timeout / 4)
    }

    /// Fires the timers due at `now`: delayed ACKs become due, expired
    /// retransmission timers mark every unacknowledged datagram in flight
    /// for retransmission and back off, due heartbeats are queued.
    pub fn handle_timeout(&mut self, now: Instant) {
        for peer in 0..self.peers.len() as u32 {
            let beat = self.heartbeat_at(peer).is_some_and(|t| t <= now);
            let p = &mut self.peers[peer as usize];
            let mut ready = false;
            if beat && !p.rcv[0].ack_now {
                p.rcv[0].ack_pending = true;
                p.rcv[0].ack_now = true;
                self.stats.heartbeats_sent += 1;
                ready = true;
            }
            for lane in Lane::ALL {
                ready |= Self::lane_timeout(
                    &mut p.snd[lane.index()],
                    &mut p.rcv[lane.index()],
                    now,
                    &self.cfg,
                    &mut self.stats,
                );
            }
            if ready {
                self.mark_ready(peer);
            }
        }
    }

    /// [`Endpoint::handle_timeout`] for one lane toward one peer: whether
    /// it has something to transmit now.
    fn lane_timeout(
        snd: &mut SendState,
        rcv: &mut RecvState,
        now: Instant,
        cfg: &Config,
        stats: &mut Stats,
    ) -> bool {
        let mut ready = false;
        if rcv.ack_pending && !rcv.ack_now && rcv.ack_deadline.is_some_and(|d| d <= now) {
            rcv.ack_now = true;
            ready = true;
        }
        if snd.loss_time.is_some_and(|d| d <= now) {
            let marked = snd.detect_losses(now);
            stats.fast_retransmits += marked;
            ready |= marked > 0;
        }
        if snd.rto_deadline.is_some_and(|d| d <= now) {
            if snd.unacked == 0 {
                snd.rto_deadline = None;
            } else {
                stats.rto_expirations += 1;
                // Only the oldest datagram still out goes again (as TCP's
                // F-RTO does): if the next acknowledgement covers datagrams
                // sent once, the peer was merely slow (descheduled: ranks
                // outnumber cores) and the timeout cost one datagram, not
                // a window of them; if it covers only resent ones, the
                // rest go again then (see `on_ack`).
                let una = snd.una;
                if let Some(i) = snd.inflight.iter().position(|e| !e.acked && !e.lost) {
                    snd.inflight[i].lost = true;
                    snd.retx.push_back(una + i as u64);
                    snd.rto_probe = true;
                }
                snd.loss_time = None;
                snd.rto = (snd.rto * 2).min(cfg.max_rto);
                snd.rto_deadline = Some(now + snd.rto);
                ready = true;
            }
        }
        ready
    }

    /// A dead peer: (peer, silent for), the longest silent if several.
    /// Without keepalive, a peer counts only while data to it is
    /// outstanding (queued or unacknowledged, on either lane), silent past
    /// `peer_timeout` from the later of its last datagram and the moment
    /// that data became outstanding. With [`Endpoint::start_keepalive`],
    /// every peer that has not said BYE counts, silent from the later of its
    /// last datagram and the start of keepalive (a peer that said BYE still
    /// counts while data to it is outstanding).
    pub fn dead_peer(&self, now: Instant) -> Option<(u32, Duration)> {
        self.peers
            .iter()
            .enumerate()
            .filter(|&(i, _)| i as u32 != self.me)
            .filter_map(|(i, p)| {
                let watched = self.keepalive_since.filter(|_| !p.departed);
                let reference = match watched {
                    Some(t) => Some(t),
                    None if !p.idle() => p.snd.iter().filter_map(|s| s.outstanding_since).min(),
                    None => return None,
                };
                let since = match (p.last_heard, reference) {
                    (Some(a), Some(b)) => a.max(b),
                    (a, b) => a.or(b)?,
                };
                let silent = now.saturating_duration_since(since);
                (silent >= self.cfg.peer_timeout).then_some((i as u32, silent))
            })
            .max_by_key(|&(_, s)| s)
    }

    /// Unacknowledged DATA datagrams in flight toward `peer`, both lanes
    /// (at most `window` each).
    pub fn in_flight(&self, peer: u32) -> usize {
        self.peers
            .get(peer as usize)
            .map_or(0, |p| p.snd.iter().map(|s| s.unacked).sum())
    }

    /// [`Endpoint::in_flight`] of one lane.
    pub fn in_flight_on(&self, peer: u32, lane: Lane) -> usize {
        self.peers
            .get(peer as usize)
            .map_or(0, |p| p.snd[lane.index()].unacked)
    }

    /// Bytes held on the send side toward `peer`, both lanes: queued
    /// messages (charged `len + 7` each) and in-flight bodies (see the bound
    /// in the module documentation).
    pub fn send_buffered_bytes(&self, peer: u32) -> usize {
        self.peers.get(peer as usize).map_or(0, |p| {
            p.snd
                .iter()
                .map(|s| s.queue_charge + s.inflight_bytes)
                .sum()
        })
    }

    /// Whether nothing toward `peer` is queued or unacknowledged (either lane).
    pub fn is_idle(&self, peer: u32) -> bool {
        self.peers.get(peer as usize).is_none_or(|p| p.idle())
    }

    /// Bytes held on the receive side: out-of-order bodies, partially
    /// reassembled messages, and complete messages not yet polled.
    pub fn buffered_bytes(&self) -> usize {
        self.inbox.bytes
            + self
                .peers
                .iter()
                .flat_map(|p| p.rcv.iter())
                .map(|r| r.ooo_bytes + r.partial_bytes())
                .sum::<usize>()
    }

    /// The counters.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Counters toward and from `peer` (panics if out of range).
    pub fn peer_stats(&self, peer: u32) -> PeerStats {
        self.peers[peer as usize].counts
    }

    fn mark_ready(&mut self, peer: u32) {
        let p = &mut self.peers[peer as usize];
        if !p.in_ready {
            p.in_ready = true;
            self.ready.push_back(peer);
        }
    }

    fn has_work(&self, peer: u32, now: Instant) -> bool {
        let p = &self.peers[peer as usize];
        let window = self.cfg.window;
        p.snd.iter().any(|s| {
            !s.retx.is_empty()
                || ((!s.queue.is_empty() || s.packed.is_some()) && s.inflight.len() < window)
        }) || p.rcv.iter().any(|r| r.ack_due(now))
            || p.bye_to_send > 0
    }

    /// Emits one datagram toward `peer` if it has anything: a
    /// retransmission, else new data within the window (the reply lane
    /// before the request lane in both cases), else a due ACK (blocks of
    /// both lanes), else a BYE.
    fn transmit_for(
        &mut self,
        peer: u32,
        now: Instant,
        buf: &mut Vec<u8>,
        tail: &mut Bytes,
    ) -> bool {
        let (tag, me, window) = (self.auth.tag(), self.me, self.cfg.window);
        let p = &mut self.peers[peer as usize];
        // Retransmission.
        let mut target = None;
        'lanes: for lane in [Lane::Reply, Lane::Request] {
            let snd = &mut p.snd[lane.index()];
            while let Some(seq) = snd.retx.pop_front() {
                if seq < snd.una {
                    continue;
                }
                let e = &mut snd.inflight[(seq - snd.una) as usize];
                if e.acked || !e.lost {
                    continue;
                }
                e.lost = false;
                e.tx_count += 1;
                self.stats.retransmits += 1;
                p.counts.retransmits += 1;
                target = Some((lane, seq));
                break 'lanes;
            }
        }
        // New data.
        if target.is_none() {
            for lane in [Lane::Reply, Lane::Request] {
                let snd = &mut p.snd[lane.index()];
                if (snd.packed.is_some() || !snd.queue.is_empty()) && snd.inflight.len() < window {
                    let body = match snd.packed.take() {
                        Some(b) => b,
                        None => snd.pack(self.max_body, &mut self.spare),
                    };
                    snd.inflight_bytes += body.len();
                    snd.unacked += 1;
                    snd.inflight.push_back(Sent {
                        body,
                        last_sent: now,
                        serial: 0,
                        first_serial: u64::MAX,
                        tx_count: 1,
                        acked: false,
                        lost: false,
                    });
                    target = Some((lane, snd.nxt() - 1));
                    break;
                }
            }
        }
        if let Some((lane, seq)) = target {
            // Piggyback the ACK block of every lane something arrived on.
            let acks = [0, 1].map(|l| {
                let rcv = &mut p.rcv[l];
                rcv.received_any.then(|| rcv.take_ack())
            });
            self.stats.acks_piggybacked += acks.iter().flatten().count() as u64;
            let snd = &mut p.snd[lane.index()];
            let serial = snd.next_serial;
            snd.next_serial += 1;
            let e = &mut snd.inflight[(seq - snd.una) as usize];
            e.serial = serial;
            e.first_serial = e.first_serial.min(serial);
            e.last_sent = now;
            encode_data_head(
                tag,
                me,
                peer,
                [acks[0].as_ref(), acks[1].as_ref()],
                lane,
                seq as u32,
                e.body.len(),
                buf,
            );
            buf.extend_from_slice(&e.body.head);
            *tail = e.body.tail.clone();
            if snd.rto_deadline.is_none() {
                snd.rto_deadline = Some(now + snd.rto);
            }
            self.stats.datagrams_sent += 1;
            self.stats.data_sent += 1;
            p.counts.data_sent += 1;
            return true;
        }
        if p.rcv.iter().any(|r| r.ack_due(now)) {
            let [ack, reply_ack] = [0, 1].map(|l| {
                let rcv = &mut p.rcv[l];
                (rcv.received_any || rcv.ack_pending).then(|| rcv.take_ack())
            });
            encode_datagram(
                &Datagram {
                    tag,
                    src: me,
                    dst: peer,
                    ack,
                    reply_ack,
                    data: None,
                },
                buf,
            );
            self.stats.datagrams_sent += 1;
            self.stats.acks_sent += 1;
            return true;
        }
        if p.bye_to_send > 0 {
            p.bye_to_send -= 1;
            encode_datagram(
                &Datagram {
                    tag,
                    src: me,
                    dst: peer,
                    ack: None,
                    reply_ack: None,
                    data: None,
                },
                buf,
            );
            self.stats.datagrams_sent += 1;
            return true;
        }
        false
    }

    /// Whether an ACK from `peer` acknowledges only datagrams that were sent.
    fn ack_is_valid(&self, peer: u32, lane: Lane, ack: &AckInfo) -> bool {
        let snd = &self.peers[peer as usize].snd[lane.index()];
        let cum = expand_seq(ack.cum, snd.una);
        let nxt = snd.nxt();
        if cum > nxt {
            return false;
        }
        // Highest SACKed sequence number must be below nxt.
        match ack.sack.iter().rposition(|&w| w != 0) {
            None => true,
            Some(w) => {
                let bit = 63 - ack.sack[w].leading_zeros() as u64;
                cum + 1 + 64 * w as u64 + bit < nxt
            }
        }
    }

    fn on_ack(&mut self, peer: u32, lane: Lane, ack: &AckInfo, now: Instant) {
        let snd = &mut self.peers[peer as usize].snd[lane.index()];
        let cum = expand_seq(ack.cum, snd.una);
        let mut newly = false;
        let mut largest = snd.largest_acked_serial;
        // (last_sent, serial) of the most recent once-sent datagram newly acked.
        let mut sample: Option<(Instant, u64)> = None;
        let mut sent_once_acked = false;
        let mut note = |e: &Sent| {
            sent_once_acked |= e.tx_count == 1;
            largest = largest.max(Some(if e.tx_count == 1 {
                e.serial
            } else {
                e.first_serial
            }));
            if e.tx_count == 1 && sample.is_none_or(|(_, s)| s < e.serial) {
                sample = Some((e.last_sent, e.serial));
            }
        };
        while snd.una < cum {
            let Some(e) = snd.inflight.pop_front() else {
                break;
            };
            snd.una += 1;
            snd.inflight_bytes -= e.body.len();
            if !e.acked {
                snd.unacked -= 1;
                newly = true;
                note(&e);
            }
            if self.spare.len() < SPARE_BODIES && e.body.head.capacity() <= SPARE_MAX {
                let mut v = e.body.head;
                v.clear();
                self.spare.push(v);
            }
        }
        for (w, &word) in ack.sack.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let b = bits.trailing_zeros() as u64;
                bits &= bits - 1;
                let seq = cum + 1 + 64 * w as u64 + b;
                if seq < snd.una {
                    continue;
                }
                let Some(e) = snd.inflight.get_mut((seq - snd.una) as usize) else {
                    continue;
                };
                if !e.acked {
                    e.acked = true;
                    snd.unacked -= 1;
                    newly = true;
                    note(e);
                }
            }
        }
        if !newly {
            return;
        }
        snd.largest_acked_serial = largest;
        if std::mem::take(&mut snd.rto_probe) && !sent_once_acked {
            // Only resent datagrams were acknowledged after a timeout: the
            // peer is there, and what else is out was lost.
            let una = snd.una;
            for (i, e) in snd.inflight.iter_mut().enumerate() {
                if !e.acked && !e.lost {
                    e.lost = true;
                    snd.retx.push_back(una + i as u64);
                }
            }
        }
        if let Some((t, _)) = sample {
            snd.on_rtt_sample(now.saturating_duration_since(t), &self.cfg);
        }
        self.stats.fast_retransmits += snd.detect_losses(now);
        snd.rto_deadline = (snd.unacked > 0).then(|| now + snd.rto);
        if snd.unacked == 0 {
            snd.loss_time = None;
        }
        if snd.idle() {
            snd.outstanding_since = None;
        }
        if !snd.retx.is_empty() || !snd.queue.is_empty() || snd.packed.is_some() {
            self.mark_ready(peer);
        }
    }

    fn on_data(&mut self, peer: u32, data: DataInfo<'_>, now: Instant, placer: &mut dyn Placer) {
        let window = self.cfg.window as u64;
        let p = &mut self.peers[peer as usize];
        let rcv = &mut p.rcv[data.lane.index()];
        rcv.received_any = true;
        let seq = expand_seq(data.seq, rcv.next);
        if seq < rcv.next {
            self.stats.duplicates_dropped += 1;
            p.counts.duplicates_dropped += 1;
            rcv.ack_pending = true;
            rcv.ack_now = true;
            self.mark_ready(peer);
            return;
        }
        let off = seq - rcv.next;
        if off >= window {
            self.stats.out_of_window_dropped += 1;
            return;
        }
        if off > 0 {
            let off = off as usize;
            if rcv.ooo.len() <= off {
                rcv.ooo.resize_with(off + 1, || None);
            }
            if rcv.ooo[off].is_some() {
                self.stats.duplicates_dropped += 1;
            } else {
                rcv.ooo_bytes += data.body.len();
                rcv.ooo[off] = Some(data.body.into());
            }
            rcv.ack_pending = true;
            rcv.ack_now = true;
            self.mark_ready(peer);
            return;
        }
        let filled_gap = rcv.ooo.len() > 1;
        rcv.ooo.pop_front();
        deliver_body(
            rcv,
            peer,
            data.body,
            &mut self.inbox,
            &mut self.stats,
            placer,
        );
        rcv.next += 1;
        while let Some(Some(_)) = rcv.ooo.front() {
            let body = rcv.ooo.pop_front().flatten().unwrap_or_default();
            rcv.ooo_bytes -= body.len();
            deliver_body(rcv, peer, &body, &mut self.inbox, &mut self.stats, placer);
            rcv.next += 1;
        }
        rcv.ack_pending = true;
        rcv.since_ack += 1;
        if filled_gap || rcv.since_ack >= self.ack_every {
            rcv.ack_now = true;
            self.mark_ready(peer);
        } else if rcv.ack_deadline.is_none() {
            rcv.ack_deadline = Some(now + self.cfg.ack_delay);
        }
    }
}

/// Reassembles the chunks of one in-order body into messages.
fn deliver_body(
    rcv: &mut RecvState,
    peer: u32,
    body: &[u8],
    inbox: &mut Inbox,
    stats: &mut Stats,
    placer: &mut dyn Placer,
) {
    let mut push = |msg: Vec<u8>, placed: bool, stats: &mut Stats| {
        inbox.bytes += msg.len();
        inbox.messages.push_back((peer, msg, placed));
        stats.messages_delivered += 1;
    };
    for c in chunks(body) {
        if c.first {
            if rcv.partial.take().is_some() {
                // The previous message never got its LAST chunk.
                stats.dropped_malformed += 1;
            }
            let total = c.total.unwrap_or(0) as usize;
            if c.last {
                push(c.bytes.to_vec(), false, stats);
                continue;
            }
            let placed = placer
                .split(peer, c.bytes, total)
                .filter(|&(split, _)| split <= c.bytes.len() && split <= total);
            let mut p = Partial {
                total,
                kept: Vec::new(),
                placed,
                written: 0,
            };
            match placed {
                Some((split, token)) => {
                    p.kept.extend_from_slice(&c.bytes[..split]);
                    placer.write(token, 0, &c.bytes[split..]);
                    p.written = c.bytes.len() - split;
                }
                None => {
                    p.kept = Vec::with_capacity(total);
                    p.kept.extend_from_slice(c.bytes);
                }
            }
            rcv.partial = Some(p);
            continue;
        }
        let Some(p) = rcv.partial.as_mut() else {
            stats.dropped_malformed += 1;
            continue;
        };
        if p.kept.len() + p.written + c.bytes.len() > p.total {
            stats.dropped_malformed += 1;
            rcv.partial = None;
            continue;
        }
        match p.placed {
            Some((_, token)) => {
                placer.write(token, p.written, c.bytes);
                p.written += c.bytes.len();
            }
            None => p.kept.extend_from_slice(c.bytes),
        }
        if c.last {
            let Some(p) = rcv.partial.take() else {
                continue;
            };
            if p.kept.len() + p.written == p.total {
                push(p.kept, p.placed.is_some(), stats);
            } else {
                stats.dropped_malformed += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests;
