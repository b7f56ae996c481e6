//! The sending side of a lane: the queue, packing bodies, the datagrams
//! in flight, RTT and loss detection; the endpoint's transmitting of one
//! datagram and its handling of an ACK.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::{Endpoint, GATHER_PIECE, PACKET_THRESHOLD, SPARE_BODIES, SPARE_MAX};
use crate::proto::wire::{
    encode_chunk_head, encode_data_head, encode_datagram, expand_seq, AckInfo, Datagram, Lane,
    CHUNK_HEADER_LEN, FIRST_CHUNK_HEADER_LEN,
};
use crate::proto::Config;

/// A DATA body: `head`, then `tail` (a slice of one message, not copied;
/// empty when the whole body was copied into `head`).
#[derive(Debug, Default)]
pub(super) struct Body {
    pub(super) head: Vec<u8>,
    pub(super) tail: Bytes,
}

impl Body {
    pub(super) fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }
}

/// A DATA datagram in flight (sent, not yet cumulatively acknowledged).
#[derive(Debug)]
pub(super) struct Sent {
    pub(super) body: Body,
    /// Time of the latest transmission.
    pub(super) last_sent: Instant,
    /// Transmission serial of the latest transmission (per peer, increasing).
    pub(super) serial: u64,
    /// Serial of the first transmission (`u64::MAX` until it is sent). An
    /// acknowledgement of a datagram sent more than once may be for any of
    /// its transmissions: loss detection credits it with the first, so
    /// that the acknowledgement of an original does not pass for that of
    /// a later retransmission and declare everything sent in between lost.
    pub(super) first_serial: u64,
    /// Transmissions so far (RTT samples only from datagrams sent once).
    pub(super) tx_count: u32,
    /// Selectively acknowledged (still held until the cumulative point passes).
    pub(super) acked: bool,
    /// Deemed lost and queued for retransmission.
    pub(super) lost: bool,
}

/// A message waiting to be packed: `head` then `body` (two parts, so that
/// a header can go before a payload the sender keeps by reference, as a
/// one-sided put's; most messages are all `body`).
#[derive(Debug)]
pub(super) struct Pending {
    pub(super) head: Bytes,
    pub(super) body: Bytes,
    /// Bytes already packed into DATA bodies.
    pub(super) off: usize,
}

impl Pending {
    pub(super) fn len(&self) -> usize {
        self.head.len() + self.body.len()
    }

    /// Appends the message bytes `range` to `out`.
    pub(super) fn copy_range(&self, range: std::ops::Range<usize>, out: &mut Vec<u8>) {
        let h = self.head.len();
        if range.start < h {
            out.extend_from_slice(&self.head[range.start..range.end.min(h)]);
        }
        if range.end > h {
            out.extend_from_slice(&self.body[range.start.max(h) - h..range.end - h]);
        }
    }

    /// The message bytes `range` by reference; they must lie in one part.
    pub(super) fn slice(&self, range: std::ops::Range<usize>) -> Bytes {
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
pub(super) struct SendState {
    /// Lowest sequence number not cumulatively acknowledged.
    pub(super) una: u64,
    /// Sequence numbers `una..una + inflight.len()`.
    pub(super) inflight: VecDeque<Sent>,
    /// Entries of `inflight` not selectively acknowledged.
    pub(super) unacked: usize,
    /// Body bytes held in `inflight`.
    pub(super) inflight_bytes: usize,
    pub(super) queue: VecDeque<Pending>,
    /// A body built whole by `send_with` while nothing was queued, sent
    /// before the queue.
    pub(super) packed: Option<Body>,
    /// Sum of `len + FIRST_CHUNK_HEADER_LEN` over `queue`.
    pub(super) queue_charge: usize,
    /// Sequence numbers to retransmit (may hold stale ones; checked on use).
    pub(super) retx: VecDeque<u64>,
    pub(super) next_serial: u64,
    pub(super) largest_acked_serial: Option<u64>,
    pub(super) srtt: Option<Duration>,
    pub(super) rttvar: Duration,
    pub(super) rto: Duration,
    pub(super) rto_deadline: Option<Instant>,
    /// RTT of the latest sample.
    pub(super) latest_rtt: Duration,
    /// When a datagram that passed the packet threshold also passes the time
    /// threshold (the loss-detection timer).
    pub(super) loss_time: Option<Instant>,
    /// A timeout resent only the oldest datagram out: the next
    /// acknowledgement with news tells whether the timeout was spurious
    /// (it acknowledges datagrams sent once: the peer was only slow) or
    /// not (only the resent one: the others are lost too and go again).
    pub(super) rto_probe: bool,
    /// Since when data toward the peer has been outstanding (None when idle).
    pub(super) outstanding_since: Option<Instant>,
}

impl SendState {
    pub(super) fn new(cfg: &Config) -> SendState {
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

    pub(super) fn nxt(&self) -> u64 {
        self.una + self.inflight.len() as u64
    }

    pub(super) fn idle(&self) -> bool {
        self.inflight.is_empty() && self.queue.is_empty() && self.packed.is_none()
    }

    pub(super) fn on_rtt_sample(&mut self, r: Duration, cfg: &Config) {
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
    pub(super) fn detect_losses(&mut self, now: Instant) -> u64 {
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
    pub(super) fn pack(&mut self, max_body: usize, spare: &mut Vec<Vec<u8>>) -> Body {
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

impl Endpoint {
    /// Emits one datagram toward `peer` if it has anything: a
    /// retransmission, else new data within the window (the reply lane
    /// before the request lane in both cases), else a due ACK (blocks of
    /// both lanes), else a BYE.
    pub(super) fn transmit_for(
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
    pub(super) fn ack_is_valid(&self, peer: u32, lane: Lane, ack: &AckInfo) -> bool {
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

    pub(super) fn on_ack(&mut self, peer: u32, lane: Lane, ack: &AckInfo, now: Instant) {
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
}
