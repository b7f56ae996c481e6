//! The udp conduit's one-sided capability ([`gex_conduit::RmaCapability`]):
//! puts and gets to peers reached over UDP, answered by the target's
//! protocol shell with no AM handler.
//!
//! A put travels as one message (kind PUT, see [`crate::wire`]) whose
//! payload the receiving shell places into its segment as the datagrams
//! arrive, as it does for a Long AM; once the message is complete the
//! shell answers PUT_ACK on the reply lane. A get is a GET message naming
//! the range; the target's shell answers GET_DATA on the reply lane with
//! the bytes, which the initiator's shell writes into the destination.
//!
//! The initiator keeps every operation in flight in a table indexed by a
//! slot number with a generation ([`Ops`]); the answers name the
//! operation by both, and an answer naming an unknown or stale operation,
//! from the wrong rank, of the wrong kind or with the wrong length is a
//! fatal error with a message, never a memory access. The target checks
//! every range against its own segment before it touches it.
//!
//! This file holds both sides: the table of operations in flight, the
//! capability's puts and gets, the placing of arriving payloads
//! (`SegmentPlacer`) and the serving of one-sided messages that arrive.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use gex_conduit::{AmSink, GetDest, Injected, OpCompletion, PutSource, RmaCapability};
use gex_types::{EpIndex, Rank};

use crate::{proto, wire, UdpConduit, ZERO_COPY_MIN};

/// The longest transfer of one operation (longer ones are split by the
/// caller): a GET_DATA of this size is one protocol message, reassembled
/// in the inbox, which holds at most 64 MiB.
pub const MAX_TRANSFER: usize = 1 << 20;

/// Marks a placing token as a get's operation id (ids stay below 2^63);
/// without it the token is a segment address (see the shell's placer).
pub const GET_TOKEN: u64 = 1 << 63;

/// What an operation in flight waits for.
enum Pending {
    /// A put: its PUT_ACK.
    Put {
        peer: Rank,
        done: Arc<dyn OpCompletion>,
    },
    /// A get: its GET_DATA, written into `dst`, by the receiving shell as
    /// the datagrams arrive once `placing` (see [`Ops::begin_placing`]),
    /// else from the whole message.
    Get {
        peer: Rank,
        dst: GetDest,
        done: Arc<dyn OpCompletion>,
        placing: bool,
    },
    /// A remote atomic: its ATOMIC_RESULT, which carries `len` bytes of
    /// value (the type's size for a fetching operation, else 0), the
    /// bytes for `dst`.
    Atomic {
        peer: Rank,
        len: usize,
        dst: Option<GetDest>,
        done: Arc<dyn OpCompletion>,
    },
}

/// One slot of the table.
struct Slot {
    generation: u32,
    op: Option<Pending>,
}

/// The operations this rank started and not yet saw answered.
#[derive(Default)]
pub struct Ops {
    inner: Mutex<Table>,
    /// Puts and gets started here, and PUTs and GETs served for peers.
    puts: AtomicU64,
    gets: AtomicU64,
    served: AtomicU64,
    /// Atomics started here, and ATOMICs served for peers.
    atomics: AtomicU64,
    atomics_served: AtomicU64,
}

#[derive(Default)]
struct Table {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

/// The operation an answer named, taken out of the table.
pub enum Answered {
    /// A put's completion.
    Put(Arc<dyn OpCompletion>),
    /// A get's destination and completion.
    Get(GetDest, Arc<dyn OpCompletion>),
}

impl Ops {
    fn insert(&self, op: Pending) -> u64 {
        let mut t = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let slot = match t.free.pop() {
            Some(s) => s,
            None => {
                t.slots.push(Slot {
                    generation: 0,
                    op: None,
                });
                (t.slots.len() - 1) as u32
            }
        };
        let s = &mut t.slots[slot as usize];
        // 31 bits of generation: ids stay below 2^63 (see [`GET_TOKEN`]).
        s.generation = s.generation.wrapping_add(1) & 0x7fff_ffff;
        s.op = Some(op);
        (u64::from(s.generation) << 32) | u64::from(slot)
    }

    /// Starts tracking a put to `peer`; its id.
    pub fn insert_put(&self, peer: Rank, done: Arc<dyn OpCompletion>) -> u64 {
        self.puts.fetch_add(1, Ordering::Relaxed);
        self.insert(Pending::Put { peer, done })
    }

    /// Starts tracking a get from `peer` into `dst`; its id.
    pub fn insert_get(&self, peer: Rank, dst: GetDest, done: Arc<dyn OpCompletion>) -> u64 {
        self.gets.fetch_add(1, Ordering::Relaxed);
        self.insert(Pending::Get {
            peer,
            dst,
            done,
            placing: false,
        })
    }

    /// Starts tracking an atomic at `peer` whose answer carries `len`
    /// bytes of value (0 for an operation that does not fetch), for
    /// `dst`; its id (see [`crate::wire::compact_id`] for the one it
    /// travels under).
    pub fn insert_atomic(
        &self,
        peer: Rank,
        len: usize,
        dst: Option<GetDest>,
        done: Arc<dyn OpCompletion>,
    ) -> u64 {
        self.atomics.fetch_add(1, Ordering::Relaxed);
        self.insert(Pending::Atomic {
            peer,
            len,
            dst,
            done,
        })
    }

    /// Counts an ATOMIC served for a peer.
    pub fn count_atomic_served(&self) {
        self.atomics_served.fetch_add(1, Ordering::Relaxed);
    }

    /// (atomics started, ATOMICs served).
    pub fn atomic_counts(&self) -> (u64, u64) {
        (
            self.atomics.load(Ordering::Relaxed),
            self.atomics_served.load(Ordering::Relaxed),
        )
    }

    /// Counts a PUT or GET served for a peer.
    pub fn count_served(&self) {
        self.served.fetch_add(1, Ordering::Relaxed);
    }

    /// (puts started, gets started, PUTs and GETs served), cancelled
    /// starts included.
    pub fn counts(&self) -> (u64, u64, u64) {
        (
            self.puts.load(Ordering::Relaxed),
            self.gets.load(Ordering::Relaxed),
            self.served.load(Ordering::Relaxed),
        )
    }

    /// The get `id` in flight from `from` for `len` bytes, if there is one
    /// not being placed already: from now on the shell writes its GET_DATA
    /// payload into the destination as it arrives ([`Ops::place`]).
    pub fn begin_placing(&self, id: u64, from: Rank, len: usize) -> bool {
        let mut t = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        match Self::slot_of(&mut t, id) {
            Some(Pending::Get {
                peer, dst, placing, ..
            }) if *peer == from && dst.len() == len && !*placing => {
                *placing = true;
                true
            }
            _ => false,
        }
    }

    /// Writes `bytes` at `at` into the destination of the get `id` being
    /// placed; false (nothing written) if it is no longer in flight or
    /// the range is outside it.
    pub fn place(&self, id: u64, at: usize, bytes: &[u8]) -> bool {
        let mut t = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        match Self::slot_of(&mut t, id) {
            Some(Pending::Get {
                dst, placing: true, ..
            }) if gex_conduit::fits(at, bytes.len(), dst.len()) => {
                dst.fill_at(at, bytes);
                true
            }
            _ => false,
        }
    }

    fn slot_of(t: &mut Table, id: u64) -> Option<&mut Pending> {
        let s = t.slots.get_mut(id as u32 as usize)?;
        if s.generation != (id >> 32) as u32 {
            return None;
        }
        s.op.as_mut()
    }

    /// Forgets an operation that was not started after all (an
    /// `IMMEDIATE` start that found no room).
    pub fn cancel(&self, id: u64) {
        let mut t = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let slot = id as u32;
        if let Some(s) = t.slots.get_mut(slot as usize) {
            if s.generation == (id >> 32) as u32 && s.op.take().is_some() {
                t.free.push(slot);
            }
        }
    }

    /// Takes the operation `id` that `from` answered with a message of
    /// `kind` ([`crate::wire::RMA_PUT_ACK`] or [`crate::wire::RMA_GET_DATA`])
    /// carrying `len` bytes; a description
    /// of what is wrong if the answer does not match an operation in
    /// flight (unknown or stale id, another peer, another kind, another
    /// length, or a GET_DATA `placed` in the destination for a get that
    /// was not being placed, or the reverse).
    pub fn take(
        &self,
        id: u64,
        from: Rank,
        kind: u8,
        len: usize,
        placed: bool,
    ) -> Result<Answered, String> {
        let mut t = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let slot = id as u32;
        let generation = (id >> 32) as u32;
        let Some(s) = t.slots.get_mut(slot as usize) else {
            return Err(format!("names operation slot {slot}, which never existed"));
        };
        let matches = match &s.op {
            _ if s.generation != generation => {
                return Err(format!(
                    "names operation {slot}/{generation}, which is stale (now {})",
                    s.generation
                ))
            }
            None => {
                return Err(format!(
                    "names operation {slot}/{generation}, which is not in flight"
                ))
            }
            Some(Pending::Put { peer, .. }) => {
                *peer == from && kind == crate::wire::RMA_PUT_ACK && len == 0 && !placed
            }
            Some(Pending::Get {
                peer, dst, placing, ..
            }) => {
                *peer == from
                    && kind == crate::wire::RMA_GET_DATA
                    && len == dst.len()
                    && *placing == placed
            }
            Some(Pending::Atomic { .. }) => false,
        };
        if !matches {
            return Err(format!(
                "does not match operation {slot}/{generation} (another rank, kind or length)"
            ));
        }
        let op = s.op.take().expect("checked above");
        t.free.push(slot);
        Ok(match op {
            Pending::Put { done, .. } => Answered::Put(done),
            Pending::Get { dst, done, .. } => Answered::Get(dst, done),
            Pending::Atomic { .. } => unreachable!("refused above"),
        })
    }

    /// Takes the atomic whose compact id ([`crate::wire::compact_id`]) is
    /// `id`, which `from` answered with `len` bytes of value: its
    /// destination and completion, or a description of what is wrong
    /// (unknown slot, a generation whose low byte differs, not an atomic,
    /// another peer or another length).
    pub fn take_atomic(
        &self,
        id: u32,
        from: Rank,
        len: usize,
    ) -> Result<(Option<GetDest>, Arc<dyn OpCompletion>), String> {
        let mut t = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let slot = id & 0x00ff_ffff;
        let generation = id >> 24;
        let Some(s) = t.slots.get_mut(slot as usize) else {
            return Err(format!("names operation slot {slot}, which never existed"));
        };
        let ok = s.generation & 0xff == generation
            && matches!(&s.op, Some(Pending::Atomic { peer, len: l, .. }) if *peer == from && *l == len);
        if !ok {
            return Err(format!(
                "does not match an atomic in flight in slot {slot} (stale, not an atomic, another rank or another length)"
            ));
        }
        let Some(Pending::Atomic { dst, done, .. }) = s.op.take() else {
            unreachable!("checked above")
        };
        t.free.push(slot);
        Ok((dst, done))
    }
}

/// Puts the payload of a Long AM or a one-sided PUT that spans several
/// datagrams straight into this rank's segment as its datagrams arrive,
/// and that of a GET_DATA into its get's destination, instead of into the
/// message buffer (from which delivery would copy it again). Holds this
/// rank's segment (base, size), if attached, and the operations in
/// flight. A message whose range is outside the segment, or a GET_DATA
/// that matches no get in flight from its sender, is kept whole, so that
/// delivery reports it.
pub(crate) struct SegmentPlacer<'a>(pub(crate) Option<(usize, usize)>, pub(crate) &'a Ops);

impl proto::Placer for SegmentPlacer<'_> {
    fn split(&mut self, peer: u32, first: &[u8], total: usize) -> Option<(usize, u64)> {
        if first.first() == Some(&wire::RMA_GET_DATA) {
            let r = wire::decode_rma(first.get(..wire::RMA_HEADER)?, true)?;
            return (r.len.checked_add(wire::RMA_HEADER) == Some(total)
                && r.op < GET_TOKEN
                && self.1.begin_placing(r.op, peer, r.len))
            .then_some((wire::RMA_HEADER, GET_TOKEN | r.op));
        }
        let (base, size) = self.0?;
        let (start, len, off) = wire::long_payload(first)?;
        let in_segment = gex_conduit::fits(off, len, size);
        (start.checked_add(len) == Some(total) && in_segment)
            .then_some((start, (base + off) as u64))
    }

    fn write(&mut self, token: u64, at: usize, bytes: &[u8]) {
        if token & GET_TOKEN != 0 {
            // Checked against the get's destination again there; a get no
            // longer in flight takes nothing (its message is then reported
            // as not matching at delivery).
            self.1.place(token & !GET_TOKEN, at, bytes);
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

impl UdpConduit {
    /// Handles a one-sided message from `src` (see the module docs): places or
    /// answers a PUT, GET or ATOMIC aimed at this rank's segment, or
    /// completes an operation of this rank's that a PUT_ACK, GET_DATA or
    /// ATOMIC_RESULT answers.
    /// Anything malformed, out of the segment or not matching an operation
    /// in flight ends the job with a message.
    pub(crate) fn run_rma(&self, src: Rank, m: &[u8], placed: bool, sink: &dyn AmSink) {
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
                Ok(Answered::Put(done)) => done.complete(),
                Ok(Answered::Get(mut dst, done)) => {
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
}

impl RmaCapability for UdpConduit {
    /// Ranks outside this rank's neighbourhood (inside it, segments are
    /// mapped and the RMA layer copies directly), once this rank has a
    /// segment.
    fn reaches(&self, peer: Rank) -> bool {
        peer < self.boot.size() && !self.smp.contains(peer) && self.link.segment.get().is_some()
    }

    fn max_transfer(&self) -> usize {
        MAX_TRANSFER
    }

    /// A source of `ZERO_COPY_MIN` bytes or more is sent from where it
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
    ) -> gex_types::Result<Injected> {
        let len = src.len();
        gex_conduit::check_one_sided(self, "udp conduit", self.me, peer, ep, len)?;
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
    ) -> gex_types::Result<Injected> {
        let want = dst.len();
        gex_conduit::check_one_sided(self, "udp conduit", self.me, peer, ep, want)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{compact_id, RMA_GET_DATA, RMA_PUT_ACK};
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Count(AtomicUsize);
    impl OpCompletion for Count {
        fn complete(&self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn answers_must_match_an_operation_in_flight() {
        let ops = Ops::default();
        let done = Arc::new(Count(AtomicUsize::new(0)));
        let put = ops.insert_put(2, done.clone());
        let mut buf = [0u8; 4];
        // SAFETY: `buf` outlives the table's use of it in this test.
        let dst = unsafe { GetDest::new(buf.as_mut_ptr(), 4, None) };
        let get = ops.insert_get(3, dst, done.clone());
        // Wrong peer, kind, length; unknown slot; then the right answers.
        assert!(ops.take(put, 3, RMA_PUT_ACK, 0, false).is_err());
        assert!(ops.take(put, 2, RMA_GET_DATA, 0, false).is_err());
        assert!(ops.take(get, 3, RMA_GET_DATA, 5, false).is_err());
        assert!(ops.take(99, 2, RMA_PUT_ACK, 0, false).is_err());
        assert!(matches!(
            ops.take(put, 2, RMA_PUT_ACK, 0, false),
            Ok(Answered::Put(_))
        ));
        // Replayed: the slot is free now.
        assert!(ops.take(put, 2, RMA_PUT_ACK, 0, false).is_err());
        let Ok(Answered::Get(mut d, _)) = ops.take(get, 3, RMA_GET_DATA, 4, false) else {
            panic!("the get's answer must match");
        };
        d.fill(&[1, 2, 3, 4]);
        assert_eq!(buf, [1, 2, 3, 4]);
        // A reused slot has a new generation: the old id is stale.
        let again = ops.insert_put(3, done.clone());
        assert_eq!(again as u32, get as u32);
        assert_ne!(again, get);
        assert!(ops.take(get, 3, RMA_GET_DATA, 4, false).is_err());
        ops.cancel(again);
        assert!(ops.take(again, 3, RMA_PUT_ACK, 0, false).is_err());
        // An atomic's answer: only its own value's length, from its peer,
        // under its compact id, and never a put's or get's answer.
        let at = ops.insert_atomic(1, 4, None, done.clone());
        let id = compact_id(at).unwrap();
        assert!(ops.take(at, 1, RMA_GET_DATA, 4, false).is_err());
        assert!(ops.take_atomic(id, 2, 4).is_err());
        assert!(ops.take_atomic(id, 1, 8).is_err());
        assert!(
            ops.take_atomic(id ^ (1 << 24), 1, 4).is_err(),
            "another generation"
        );
        assert!(
            ops.take_atomic(id ^ (1 << 20), 1, 4).is_err(),
            "no such slot"
        );
        assert!(ops.take_atomic(id, 1, 4).is_ok());
        assert!(ops.take_atomic(id, 1, 4).is_err(), "replayed");
        let put = ops.insert_put(1, done);
        assert!(
            ops.take_atomic(compact_id(put).unwrap(), 1, 0).is_err(),
            "a put"
        );
        assert_eq!(ops.atomic_counts(), (1, 0));
    }
}
