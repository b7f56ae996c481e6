//! The receiving side of a lane: reassembly, the placer that puts
//! payloads where they belong, ACK state; the endpoint's handling of DATA
//! and delivery of complete messages.

use std::collections::VecDeque;
use std::time::Instant;

use super::{Endpoint, Inbox, SACK_SPAN};
use crate::proto::wire::{chunks, expand_seq, AckInfo, DataInfo};
use crate::proto::Stats;

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
pub(super) struct Partial {
    /// Total length.
    pub(super) total: usize,
    /// The bytes kept (all of them, or those before the split).
    pub(super) kept: Vec<u8>,
    /// Where the rest goes, if placed: (split, token).
    pub(super) placed: Option<(usize, u64)>,
    /// Bytes handed to the placer.
    pub(super) written: usize,
}

/// From one peer.
#[derive(Debug)]
pub(super) struct RecvState {
    /// Next sequence number expected (everything below was processed).
    pub(super) next: u64,
    /// Out-of-order bodies: index `i` holds sequence number `next + i`
    /// (index 0 is always empty; the last element, if any, is full).
    pub(super) ooo: VecDeque<Option<Box<[u8]>>>,
    pub(super) ooo_bytes: usize,
    /// The message being reassembled.
    pub(super) partial: Option<Partial>,
    pub(super) received_any: bool,
    /// Something received that no ACK sent since covers.
    pub(super) ack_pending: bool,
    /// ACK at the next transmit opportunity.
    pub(super) ack_now: bool,
    /// In-order datagrams since the last ACK.
    pub(super) since_ack: u32,
    pub(super) ack_deadline: Option<Instant>,
}

impl RecvState {
    pub(super) fn new() -> RecvState {
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

    pub(super) fn ack_due(&self, now: Instant) -> bool {
        self.ack_pending && (self.ack_now || self.ack_deadline.is_some_and(|d| d <= now))
    }

    /// The current ACK block; clears the pending ACK.
    pub(super) fn take_ack(&mut self) -> AckInfo {
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

    pub(super) fn partial_bytes(&self) -> usize {
        self.partial.as_ref().map_or(0, |p| p.kept.len())
    }
}

impl Endpoint {
    pub(super) fn on_data(
        &mut self,
        peer: u32,
        data: DataInfo<'_>,
        now: Instant,
        placer: &mut dyn Placer,
    ) {
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
pub(super) fn deliver_body(
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
