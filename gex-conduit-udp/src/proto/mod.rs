//! The udp conduit's reliability protocol as a pure state machine
//! ("sans-IO", in the style of quinn-proto).
//!
//! There are no sockets, threads or clocks in here: the socket shell feeds
//! received datagrams to [`Endpoint::handle_datagram`], drains
//! [`Endpoint::poll_transmit`] into its socket, delivers
//! [`Endpoint::poll_message`] to the AM layer, and calls
//! [`Endpoint::handle_timeout`] at [`Endpoint::next_timeout`]. Time comes in as
//! `Instant` arguments, so the whole protocol can be driven by a simulated
//! network on a virtual clock (tests/proto_sim.rs) and fuzzed (fuzz/).
//!
//! # Model
//!
//! One [`Endpoint`] per rank talks to ranks `0..npeers`. Toward each peer
//! there are two *lanes* ([`Lane`]), requests and replies: two independent,
//! reliable, ordered streams of *messages* (byte strings of 0..=64 MiB),
//! each with its own sequence numbers, window, queue budget, retransmission
//! state and reassembly. Everything below holds per lane. Messages are
//! packed into *DATA datagrams*, each with its own per-(peer, lane) sequence
//! number (u64 inside, low 32 bits on the wire); small messages queued
//! together share a datagram, large ones are split into chunks over several.
//! The sequence number is per datagram, so a retransmission re-sends exactly
//! the bytes of the original body.
//!
//! Why two lanes: a receiver that cannot take more messages (its inbox is
//! full, `handle_datagram_gated`) refuses request DATA only; reply DATA is
//! always taken. A request handler's reply therefore waits only for window
//! space its peer's protocol opens by acknowledging, never for the peer's
//! handlers, which may themselves be waiting to send replies: with one lane
//! an all-to-all flood of requests whose handlers reply deadlocked (issue
//! #9). When both lanes have data, the reply lane transmits first.
//!
//! * Liveness ([`Endpoint::start_keepalive`], used by the udp shell): a
//!   peer not sent to for `peer_timeout / 4` gets a heartbeat (a standalone
//!   ACK), any datagram from a peer counts as hearing from it, and a peer
//!   silent for `peer_timeout` is reported by [`Endpoint::dead_peer`] even
//!   with nothing outstanding, unless it said BYE ([`Endpoint::send_bye`],
//!   sent twice at a clean exit and never acknowledged).
//!
//! * ACKs are cumulative (`cum` = next expected sequence number) plus a
//!   selective bitmap of up to 256 sequence numbers after `cum`. They travel
//!   in standalone ACK datagrams or piggybacked on every DATA datagram to the
//!   same peer.
//! * A receiver ACKs at once on an out-of-order, duplicate or gap-filling
//!   arrival and after `min(8, window/2)` in-order datagrams, otherwise
//!   within `ack_delay` (unless a DATA datagram carries the ACK earlier).
//! * Retransmission timeout per peer, RFC 6298: SRTT/RTTVAR from samples of
//!   datagrams transmitted once only (Karn), RTO = SRTT + 4 RTTVAR clamped to
//!   `[min_rto, max_rto]`, doubled on every expiry. On expiry every
//!   unacknowledged datagram in flight is retransmitted.
//! * Fast retransmit (QUIC-style loss detection, RFC 9002 §6.1, but with
//!   both thresholds required so that heavy reordering is tolerated): a
//!   datagram still unacknowledged when one transmitted three or more
//!   transmissions later has been acknowledged, and sent more than
//!   9/8 max(SRTT, latest RTT) ago, is deemed lost and retransmitted; a
//!   loss timer fires when one passing the first test comes to pass the
//!   second.
//!
//! # Wire format (all integers little-endian)
//!
//! ```text
//! common header, 36 bytes, on every datagram:
//!   0  2  magic "GX"
//!   2  1  version = 3
//!   3  1  kind: bits 0-1 = 1 DATA | 2 ACK | 3 BYE;
//!           bit 2 = HAS_ACK (a request-lane ACK block follows),
//!           bit 3 = HAS_REPLY_ACK (a reply-lane ACK block follows),
//!           bit 4 = REPLY (DATA only: the DATA is on the reply lane);
//!           other bits 0; an ACK has bit 2 or 3 or both; a BYE has none
//!           and nothing after the common header
//!   4  8  job tag (public; derived from the job key, see Authentication)
//!  12  4  source rank
//!  16  4  destination rank (a datagram for another rank is dropped)
//!  20 16  MAC: AEGIS-MAC (128-bit tag; AEGIS-128L below 768 bytes,
//!         AEGIS-128X4 from there) over the length, bytes 0..20 and
//!         36..end (see Auth); zero when auth is off
//! ACK blocks, request lane's first (if HAS_ACK) then the reply lane's (if
//! HAS_REPLY_ACK), each 5 + 8*n bytes:
//!   +0 4  cum: low 32 bits of the lane's next sequence number expected (all below received)
//!   +4 1  n: number of SACK words, 0..=4
//!   +5 8n SACK words: bit i of word w set = sequence number cum+1+64w+i received
//! DATA header, after the ACK blocks if any, 6 bytes:
//!   +0 4  low 32 bits of the sequence number
//!   +4 2  body length (must equal the rest of the datagram)
//! body = one or more chunks:
//!   +0 1  flags: bit 0 FIRST, bit 1 LAST (of its message); other bits 0
//!   +1 2  chunk length L
//!   +3 4  (FIRST only) total message length T <= 64 MiB, L <= T, L == T if also LAST
//!   +3 or +7  L bytes of the message
//! ```
//!
//! A small message costs 36 (+5 per piggybacked ACK block, one per lane
//! that has received something) + 6 + 7 bytes of headers, 16 of them the
//! MAC. A DATA body is at most `max_datagram - 116` bytes
//! ([`wire::MAX_OVERHEAD`] = 36 + 2 * 37 + 6), so a retransmission fits
//! whatever ACK blocks it carries. A standalone ACK is 41..=110 bytes, a
//! BYE 36.
//!
//! # Authentication
//!
//! The job's secret is a 256-bit key ([`Config::key`]) that never goes on
//! the wire. Two keys are derived from it with BLAKE3's key derivation
//! ([`Auth`]): an 8-byte public *job tag*, carried in every datagram, and
//! the *MAC keys*. The MAC is AEGIS-MAC with a 128-bit tag over the whole
//! datagram except its MAC field (its length, the header before the field,
//! then the ACK blocks, DATA header and body); the sender computes it when a datagram is
//! complete (`poll_transmit`, over the header buffer and the scatter-gather
//! tail alike). [`Endpoint::handle_datagram`] checks, in this order, and
//! drops at the first failure, counting it (see [`Stats`]):
//!
//! 1. length and magic and version (`dropped_malformed`): no more is read;
//! 2. the job tag (`dropped_bad_key`): another job's datagrams, a stale job
//!    on a reused port, or a replay captured from another job, are dropped
//!    without computing a MAC;
//! 3. the MAC (`dropped_bad_mac`), in time independent of where it differs;
//! 4. the structure ([`decode_datagram`]; `dropped_malformed`);
//! 5. the destination (`dropped_misaddressed`) and the source, which must
//!    be a rank of the job other than the receiver (`dropped_bad_source`);
//! 6. an ACK block may only acknowledge what was sent (`dropped_malformed`).
//!
//! Only then does anything change: the peer's last-heard time, its ACK
//! state, the receive window. So a forger who sees every datagram but lacks
//! the key can neither inject messages nor make a receiver acknowledge
//! sequence numbers that its peer never sent. A replay of one of the job's
//! own datagrams authenticates, and is dropped as a duplicate (or out of
//! window) by the sequence numbers as any retransmission is; since those
//! are 32 bits on the wire, a datagram recorded and replayed after its
//! sender has sent about 2^32 more could be taken as new. Not protected:
//! confidentiality (payloads travel in clear), and the availability of the
//! network (a flood of bogus datagrams costs the receiver a MAC each).
//!
//! With [`Config::auth`] off (trusted networks), the MAC field is zero and
//! not checked; every other check stays. Every endpoint of a job must use
//! the same setting (the udp shell checks it at start-up).
//!
//! 32-bit sequence numbers are expanded to the u64 nearest the receiver's
//! expectation; since the window is at most 2^20, far below 2^31, this is
//! exact for everything a correct peer sends.
//!
//! # Invariants
//!
//! * Per lane, `snd.una <= seq < snd.una + window` for every DATA datagram
//!   ever sent; so `in_flight_on(peer, lane) <= window` (the entries between
//!   the cumulative ACK point and the next new sequence number).
//! * The receiver accepts a DATA sequence number `s` only if
//!   `rcv.next <= s < rcv.next + window`; below is a duplicate (dropped,
//!   counted, ACKed at once), above is out of window (dropped, counted). Since
//!   the sender's `una <= rcv.next`, a correct sender never exceeds it.
//! * Bodies are processed strictly in sequence order, exactly once, so
//!   messages are delivered exactly once and in order per (sender, lane).
//! * Request-lane DATA may be refused (dropped unacknowledged, retransmitted
//!   later) when the receiver cannot take more; reply-lane DATA never is.
//!   So a reply's progress depends only on the peer running its protocol
//!   (receiving and acknowledging), never on the peer's handlers.
//! * A datagram is either dropped before changing any state (bad magic,
//!   version, tag, MAC, structure, destination, source, or an ACK
//!   acknowledging something never sent) or fully processed. Nothing
//!   panics on input.
//! * Send-side memory per (peer, lane): the queue takes a message only if it is
//!   empty or the message fits `window * max_body` bytes of queue budget
//!   (each message charged `len + 7`); the in-flight buffer holds at most
//!   `window` bodies of `max_body` bytes. So at most
//!   `window * max_body + max(window * max_body, len of one message + 7)`.
//! * Receive-side memory ([`Endpoint::buffered_bytes`]) per (peer, lane):
//!   at most `window - 1` out-of-order bodies of at most `max_body` bytes,
//!   plus the bytes so far of the one message being reassembled (less than
//!   its length), plus complete messages not yet taken by `poll_message`.
//!   A receiver that stops taking requests when its unpolled messages reach
//!   a limit (as the udp shell does) holds at most that limit plus what the
//!   reply lanes deliver meanwhile, and a peer's reply lane delivers at most
//!   `window * max_body` bytes per round trip of its acknowledgements: since
//!   the shell keeps acknowledging while its handlers are blocked, the reply
//!   inflow is bounded by what the application's own requests asked for
//!   (each reply answers one request this rank sent).
//!
//! Where `max_body = max_datagram - 116`.

mod auth;
mod endpoint;
pub mod wire;

use std::time::Duration;

pub use auth::{job_tag, key_from_text, Auth};
pub use endpoint::{Endpoint, KeepAll, Placer, GATHER_PIECE};
pub use wire::{
    chunks, decode_datagram, encode_chunk, encode_datagram, expand_seq, AckInfo, Chunk, Chunks,
    DataInfo, Datagram, Kind, Lane, MAC_LEN, MAX_DATAGRAM, MAX_MESSAGE, MAX_OVERHEAD, MIN_DATAGRAM,
};

/// Protocol parameters. [`Endpoint::new`] clamps them into range
/// (`max_datagram` to 512..=65507, `window` to 1..=2^20, `min_rto` to at
/// most `max_rto`, `initial_rto` into `[min_rto, max_rto]`).
#[derive(Clone, PartialEq, Eq)]
pub struct Config {
    /// The job's 256-bit secret. It never goes on the wire: datagrams carry
    /// a public tag derived from it (others are dropped and counted) and,
    /// with `auth`, a MAC keyed by another key derived from it (see
    /// [`Auth`]). Not shown by `Debug`.
    pub key: [u8; 32],
    /// Authenticate datagrams (on by default): every datagram carries a
    /// MAC, and one whose MAC is wrong is dropped before it changes
    /// anything. Off, the MAC field is zero and unchecked (trusted
    /// networks only). Every endpoint of a job must have the same setting.
    pub auth: bool,
    /// Largest datagram emitted (header included).
    pub max_datagram: usize,
    /// Most unacknowledged DATA datagrams in flight per peer and lane.
    pub window: usize,
    /// Retransmission timeout before any RTT sample.
    pub initial_rto: Duration,
    /// Lower clamp of the retransmission timeout.
    pub min_rto: Duration,
    /// Upper clamp of the retransmission timeout (and of its backoff).
    pub max_rto: Duration,
    /// Longest delay before a standalone ACK.
    pub ack_delay: Duration,
    /// A peer with unacknowledged data (or, with keepalive, any peer that has not
    /// said BYE) and no datagram from it for this long is dead.
    pub peer_timeout: Duration,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("key", &"<secret>")
            .field("auth", &self.auth)
            .field("max_datagram", &self.max_datagram)
            .field("window", &self.window)
            .field("initial_rto", &self.initial_rto)
            .field("min_rto", &self.min_rto)
            .field("max_rto", &self.max_rto)
            .field("ack_delay", &self.ack_delay)
            .field("peer_timeout", &self.peer_timeout)
            .finish()
    }
}

impl Default for Config {
    fn default() -> Config {
        Config {
            key: [0; 32],
            auth: true,
            max_datagram: 1472,
            window: 256,
            initial_rto: Duration::from_millis(50),
            min_rto: Duration::from_millis(5),
            max_rto: Duration::from_secs(2),
            ack_delay: Duration::from_millis(1),
            peer_timeout: Duration::from_secs(30),
        }
    }
}

/// `send` refused a message: it does not fit the queue budget toward that
/// peer now. Nothing was queued; try again after progress (ACKs arriving).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backpressure;

impl std::fmt::Display for Backpressure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("send window toward the peer is full")
    }
}

impl std::error::Error for Backpressure {}

/// Counters of an [`Endpoint`] toward and from one peer
/// ([`Endpoint::peer_stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PeerStats {
    /// Messages accepted for the peer.
    pub messages_sent: u64,
    /// DATA datagrams sent to it (first transmissions and retransmissions).
    pub data_sent: u64,
    /// DATA datagrams retransmitted to it.
    pub retransmits: u64,
    /// Authentic datagrams from it (any kind).
    pub datagrams_received: u64,
    /// DATA datagrams from it received before.
    pub duplicates_dropped: u64,
    /// Its request DATA refused for a full inbox.
    pub refused_data: u64,
}

/// Counters of an [`Endpoint`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Datagrams returned by `poll_transmit` (DATA and ACK).
    pub datagrams_sent: u64,
    /// DATA datagrams among them (first transmissions and retransmissions).
    pub data_sent: u64,
    /// Retransmitted DATA datagrams.
    pub retransmits: u64,
    /// Datagrams declared lost by the fast-retransmit rule.
    pub fast_retransmits: u64,
    /// Retransmission timer expiries with data outstanding.
    pub rto_expirations: u64,
    /// Standalone ACK datagrams sent.
    pub acks_sent: u64,
    /// ACK blocks piggybacked on DATA datagrams.
    pub acks_piggybacked: u64,
    /// Datagrams passed to `handle_datagram`, whatever became of them.
    pub datagrams_received: u64,
    /// DATA datagrams already received (below the cumulative point or already buffered).
    pub duplicates_dropped: u64,
    /// Datagrams with the magic and version but another job's tag (checked
    /// before the MAC, without computing it).
    pub dropped_bad_key: u64,
    /// Datagrams with this job's tag and a wrong MAC (forged, corrupted, or
    /// from an endpoint with another key); nothing else of them was looked at.
    pub dropped_bad_mac: u64,
    /// Authentic datagrams claiming this endpoint itself or a rank outside
    /// the job as their source.
    pub dropped_bad_source: u64,
    /// Datagrams that do not decode, acknowledge data never sent, or
    /// (counted per event) break message framing.
    pub dropped_malformed: u64,
    /// Datagrams addressed to another rank.
    pub dropped_misaddressed: u64,
    /// DATA datagrams beyond the receive window.
    pub out_of_window_dropped: u64,
    /// DATA datagrams dropped unacknowledged because the receiver could
    /// take no more messages (`handle_datagram_gated` with `accept_data`
    /// false); their senders retransmit them.
    pub refused_data: u64,
    /// Messages accepted by `send`.
    pub messages_sent: u64,
    /// Messages handed out by `poll_message` (or ready for it).
    pub messages_delivered: u64,
    /// Heartbeats queued (standalone ACKs to peers not sent to for
    /// `peer_timeout / 4`; see `Endpoint::start_keepalive`).
    pub heartbeats_sent: u64,
    /// BYE datagrams received.
    pub byes_received: u64,
}
