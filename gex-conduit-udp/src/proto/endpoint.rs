//! The per-rank protocol state machine.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::wire::{
    decode_datagram, encode_chunk_head, has_preamble, Kind, Lane, FIRST_CHUNK_HEADER_LEN,
    MAX_DATAGRAM, MAX_MESSAGE, MAX_OVERHEAD, MAX_SACK_WORDS, MIN_DATAGRAM,
};
use super::{Auth, Backpressure, Config, PeerStats, Stats};

mod recv;
mod send;

use recv::RecvState;
pub use recv::{KeepAll, Placer};
use send::{Body, Pending, SendState};

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
}

#[cfg(test)]
mod tests;
