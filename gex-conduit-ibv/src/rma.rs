//! The one-sided path: puts and gets as RDMA WRITE and READ (in place,
//! in pieces or through bounce buffers), or as messages to a created
//! endpoint's segment; the table of operations in flight.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use gex_conduit::{AmSink, GetDest, Injected, OpCompletion, PollScope, PutSource, RmaCapability};
use gex_types::{EpIndex, Error, Rank, Result};

use crate::verbs::{SendOp, Sge};
use crate::{fatal, wire, wr, IbvConduit, CHUNK, MAX_OPS, MAX_RMA, REQ, W_OP};

/// A one-sided operation in flight.
pub(crate) enum What {
    /// RDMA WRITEs, from bounce buffers (`chunks`: piece i from chunk i;
    /// the source was released when copied) or from the source in place
    /// (no chunks; kept until every write completes).
    Write {
        _src: Option<PutSource>,
        chunks: Vec<u32>,
    },
    /// RDMA READs, into bounce buffers (`chunks`, copied out at the end)
    /// or into the destination in place (no chunks).
    Read { dst: GetDest, chunks: Vec<u32> },
    /// A NIC atomic; the old value lands in the scratch word of its slot.
    Atomic { result: Option<GetDest> },
    /// A put to a created endpoint's segment, as messages of `piece` bytes
    /// to offsets from `base`, each acknowledged once (`got`).
    MsgPut {
        base: u64,
        piece: usize,
        len: usize,
        got: Vec<bool>,
    },
    /// A get from a created endpoint's segment, as messages asking for
    /// `piece` bytes at offsets from `base`, each answered once.
    MsgGet {
        dst: GetDest,
        base: u64,
        piece: usize,
        got: Vec<bool>,
    },
}

pub(crate) struct OpEntry {
    pub(crate) peer: Rank,
    pub(crate) what: What,
    pub(crate) done: Arc<dyn OpCompletion>,
    /// Work requests (or answers) still to come.
    pub(crate) left: usize,
}

/// The work requests of one operation: operation and local buffer each.
pub(crate) type WorkRequests = Vec<(SendOp, Sge)>;

/// The pieces `[at, at + n)` of `len` bytes split at `max` (one empty
/// piece for an empty transfer).
pub(crate) fn pieces(len: usize, max: usize) -> impl Iterator<Item = (usize, usize)> {
    let max = max.max(1);
    (0..len.div_ceil(max).max(1)).map(move |i| (i * max, max.min(len - i * max)))
}

pub(crate) struct OpSlot {
    pub(crate) gen: u32,
    pub(crate) op: Option<OpEntry>,
}

#[derive(Default)]
pub(crate) struct Ops {
    pub(crate) slots: Vec<OpSlot>,
    pub(crate) free: Vec<u32>,
}

impl Ops {
    pub(crate) fn insert(&mut self, op: OpEntry) -> Option<u64> {
        let slot = match self.free.pop() {
            Some(s) => s,
            None if self.slots.len() < MAX_OPS => {
                self.slots.push(OpSlot { gen: 0, op: None });
                (self.slots.len() - 1) as u32
            }
            None => return None,
        };
        let s = &mut self.slots[slot as usize];
        s.gen = s.gen.wrapping_add(1);
        s.op = Some(op);
        Some((u64::from(s.gen) << 32) | u64::from(slot))
    }

    pub(crate) fn take(&mut self, id: u64) -> Option<OpEntry> {
        let slot = id as u32;
        let s = self.slots.get_mut(slot as usize)?;
        if u64::from(s.gen) != id >> 32 {
            return None;
        }
        let op = s.op.take()?;
        self.free.push(slot);
        Some(op)
    }

    /// Undoes an insert whose work request was never posted.
    pub(crate) fn cancel(&mut self, id: u64) -> Option<OpEntry> {
        self.take(id)
    }
}

impl IbvConduit {
    pub(crate) fn check_peer(&self, peer: Rank) -> Result<()> {
        if peer >= self.boot.size() {
            return Err(Error::bad_arg(format!(
                "ibv conduit: rank {peer} is not in the job of {} ranks",
                self.boot.size()
            )));
        }
        Ok(())
    }

    /// The segment of `peer` as the device addresses it: (base, size, rkey).
    pub(crate) fn seg_of(&self, peer: Rank) -> Result<(u64, usize, u32)> {
        self.seg_keys
            .get()
            .and_then(|k| k.get(peer as usize).copied())
            .filter(|k| k.1 > 0)
            .ok_or_else(|| {
                Error::bad_arg(format!(
                    "ibv conduit: rank {peer} has no registered segment"
                ))
            })
    }

    /// Posts the `need` work requests of one one-sided operation that
    /// `make` builds for an operation slot, taking queue slots (and the
    /// operation slot); `NoOp` when either is short or `make` gives nothing
    /// (no bounce buffers free).
    pub(crate) fn try_post_op(
        &self,
        peer: Rank,
        need: usize,
        make: &mut dyn FnMut(u32) -> Option<(OpEntry, WorkRequests)>,
    ) -> Result<Injected> {
        let p = &self.peers[peer as usize];
        let mut tx = p.tx.lock().unwrap_or_else(|e| e.into_inner());
        if tx.sq_used + need > self.sq_depth {
            return Ok(Injected::NoOp);
        }
        let mut ops = self.ops.lock().unwrap_or_else(|e| e.into_inner());
        let slot = match ops.free.last() {
            Some(&s) => s,
            None if ops.slots.len() < MAX_OPS => ops.slots.len() as u32,
            None => return Ok(Injected::NoOp),
        };
        let Some((mut entry, wrs)) = make(slot) else {
            return Ok(Injected::NoOp);
        };
        debug_assert!(!wrs.is_empty() && wrs.len() <= need);
        entry.left = wrs.len();
        let id = ops.insert(entry).expect("a slot is free");
        debug_assert_eq!(id as u32, slot);
        drop(ops);
        for (i, (op, sge)) in wrs.into_iter().enumerate() {
            // SAFETY: `make` built the local buffer in a registered region
            // (bounce buffer, scratch word, or this rank's segment where
            // the client's source or destination lies), kept by the
            // operation entry until its last completion.
            if let Err(e) = unsafe { self.dev.post_send(p.qp, wr(W_OP, peer, slot), op, sge) } {
                if i > 0 {
                    // Pieces are in flight: their completions name the
                    // operation, which cannot be undone.
                    fatal(&format!(
                        "ibv conduit: rank {}: posting a piece of a one-sided operation to rank {peer}: {e}",
                        self.me
                    ));
                }
                let undone = self
                    .ops
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .cancel(id);
                if let Some(OpEntry {
                    what: What::Write { chunks, .. } | What::Read { chunks, .. },
                    ..
                }) = undone
                {
                    self.free_chunks(&chunks);
                }
                return Err(e);
            }
            tx.sq_used += 1;
        }
        Ok(Injected::Sent)
    }

    /// `n` bounce buffers, all or none.
    pub(crate) fn take_chunks(&self, n: usize) -> Option<Vec<u32>> {
        let mut free = self.chunks_free.lock().unwrap_or_else(|e| e.into_inner());
        let at = free.len().checked_sub(n)?;
        Some(free.split_off(at))
    }

    /// The work requests of a one-sided transfer of `len` bytes in pieces
    /// of at most `piece`: each piece's operation (`op` of its offset) and
    /// its local side, in place at `local` when `in_place` gives the
    /// registered segment's key, else in the bounce buffer `chunks[i]`.
    pub(crate) fn piece_wrs(
        &self,
        len: usize,
        piece: usize,
        (local, in_place): (usize, Option<u32>),
        chunks: &[u32],
        op: impl Fn(usize) -> SendOp,
    ) -> Vec<(SendOp, Sge)> {
        pieces(len, piece)
            .enumerate()
            .map(|(i, (at, n))| {
                let sge = match in_place {
                    Some(lkey) => Sge {
                        addr: local + at,
                        len: n as u32,
                        lkey,
                    },
                    None => Sge {
                        addr: self.chunk_mem + chunks[i] as usize * CHUNK,
                        len: n as u32,
                        lkey: self.chunk_mr.lkey,
                    },
                };
                (op(at), sge)
            })
            .collect()
    }

    /// The local key of this rank's registered segment if `[addr, addr +
    /// len)` lies in it (a non-empty range: the device reads or writes it
    /// in place).
    pub(crate) fn in_segment(&self, addr: usize, len: usize) -> Option<u32> {
        let s = self.segment.get()?;
        (len > 0 && addr >= s.base && gex_conduit::fits(addr - s.base, len, s.size))
            .then_some(s.mr.lkey)
    }
}

impl RmaCapability for IbvConduit {
    /// Ranks outside this rank's neighbourhood, once segments are attached.
    fn reaches(&self, peer: Rank) -> bool {
        peer < self.boot.size() && !self.smp.contains(peer) && self.seg_keys.get().is_some()
    }

    /// Split here into work requests (or messages to a created endpoint's
    /// segment).
    fn max_transfer(&self) -> usize {
        MAX_RMA
    }

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
        gex_conduit::check_one_sided(self, "ibv conduit", self.me, peer, ep, src.len())?;
        self.counts.rma_puts.fetch_add(1, Ordering::Relaxed);
        let len = src.len();
        if ep != 0 {
            // A created endpoint's segment is not registered: messages.
            return self.msg_put(peer, ep, offset, src, done, immediate, sink);
        }
        let (base, size, rkey) = self.seg_of(peer)?;
        if !gex_conduit::fits(offset, len, size) {
            return Err(Error::bad_arg(format!(
                "ibv conduit: a put to rank {peer} at [{offset:#x}, +{len}) is outside its segment"
            )));
        }
        let raddr = base + offset as u64;
        // Zero-copy when the source lies in this rank's registered
        // segment: written in place, in pieces of the device's largest
        // message; else copied into bounce buffers, a piece each.
        let from = src.as_slice().as_ptr() as usize;
        let in_place = self.in_segment(from, len);
        let piece = if in_place.is_some() {
            self.max_msg
        } else {
            CHUNK
        };
        let need = pieces(len, piece).count();
        let mut src = Some(src);
        let mut done = Some(done);
        let r = self.send_loop(peer, immediate, PollScope::All, sink, || {
            self.try_post_op(peer, need, &mut |_slot| {
                let chunks = match in_place {
                    Some(_) => Vec::new(),
                    None => {
                        let chunks = self.take_chunks(need)?;
                        let s = src.as_ref().expect("until posted").as_slice();
                        for ((at, n), &c) in pieces(len, CHUNK).zip(&chunks) {
                            // SAFETY: bounce buffer `c` is ours (taken from
                            // the free list) and CHUNK bytes long; the piece
                            // is at most that, and lies in the source.
                            unsafe {
                                std::ptr::copy_nonoverlapping(
                                    s.as_ptr().add(at),
                                    (self.chunk_mem + c as usize * CHUNK) as *mut u8,
                                    n,
                                )
                            };
                        }
                        chunks
                    }
                };
                let wrs =
                    self.piece_wrs(len, piece, (from, in_place), &chunks, |at| SendOp::Write {
                        raddr: raddr + at as u64,
                        rkey,
                    });
                // A copied source is released now (local completion); one
                // written in place is kept until the writes complete.
                let keep = src.take().filter(|_| in_place.is_some());
                Some((
                    OpEntry {
                        peer,
                        what: What::Write { _src: keep, chunks },
                        done: done.take().expect("until posted"),
                        left: 0,
                    },
                    wrs,
                ))
            })
        });
        if matches!(r, Ok(Injected::Sent)) {
            self.counts
                .rdma_writes
                .fetch_add(need as u64, Ordering::Relaxed);
        }
        r
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
        let len = dst.len();
        gex_conduit::check_one_sided(self, "ibv conduit", self.me, peer, ep, len)?;
        self.counts.rma_gets.fetch_add(1, Ordering::Relaxed);
        if ep != 0 {
            return self.msg_get(peer, ep, offset, dst, done, immediate, sink);
        }
        let (base, size, rkey) = self.seg_of(peer)?;
        if !gex_conduit::fits(offset, len, size) {
            return Err(Error::bad_arg(format!(
                "ibv conduit: a get from rank {peer} at [{offset:#x}, +{len}) is outside its segment"
            )));
        }
        let raddr = base + offset as u64;
        // Zero-copy when the destination lies in this rank's registered
        // segment: read in place, in pieces of the device's largest
        // message; else into bounce buffers, a piece each, copied out when
        // every read has completed.
        let mut dst = dst;
        let to = dst.as_mut_ptr() as usize;
        let in_place = self.in_segment(to, len);
        let piece = if in_place.is_some() {
            self.max_msg
        } else {
            CHUNK
        };
        let need = pieces(len, piece).count();
        let mut dst = Some(dst);
        let mut done = Some(done);
        let r = self.send_loop(peer, immediate, PollScope::All, sink, || {
            self.try_post_op(peer, need, &mut |_slot| {
                let chunks = match in_place {
                    Some(_) => Vec::new(),
                    None => self.take_chunks(need)?,
                };
                // In place: the destination (GetDest's contract: ours
                // until completion) in the registered segment.
                let wrs = self.piece_wrs(len, piece, (to, in_place), &chunks, |at| SendOp::Read {
                    raddr: raddr + at as u64,
                    rkey,
                });
                Some((
                    OpEntry {
                        peer,
                        what: What::Read {
                            dst: dst.take().expect("until posted"),
                            chunks,
                        },
                        done: done.take().expect("until posted"),
                        left: 0,
                    },
                    wrs,
                ))
            })
        });
        if matches!(r, Ok(Injected::Sent)) {
            self.counts
                .rdma_reads
                .fetch_add(need as u64, Ordering::Relaxed);
        }
        r
    }
}

impl IbvConduit {
    /// A put to a created endpoint's segment (not registered): messages of
    /// at most a buffer's payload, each acknowledged; the source is copied
    /// into them, so it is released on return.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn msg_put(
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
        let piece = self.inline_max();
        let n = pieces(len, piece).count();
        let id = self
            .ops
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(OpEntry {
                peer,
                what: What::MsgPut {
                    base: offset as u64,
                    piece,
                    len,
                    got: vec![false; n],
                },
                done,
                left: n,
            })
            .ok_or_else(|| Error::resource("ibv conduit: too many operations in flight"))?;
        let data = src.as_slice();
        for (i, (at, k)) in pieces(len, piece).enumerate() {
            let fill = |out: &mut [u8]| {
                wire::encode_rma(wire::K_RMA_PUT, ep, (offset + at) as u64, id, k, out);
                out[wire::FIXED..wire::FIXED + k].copy_from_slice(&data[at..at + k]);
                wire::FIXED + k
            };
            let r = self.send_loop(peer, immediate && i == 0, PollScope::All, sink, || {
                self.try_send_msg(peer, REQ, &fill, None)
            });
            if let Some(r) = self.msg_piece_sent(peer, id, i, r) {
                return r;
            }
        }
        Ok(Injected::Sent)
    }

    /// A get from a created endpoint's segment: messages asking for at
    /// most a buffer's payload each, answered with the bytes.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn msg_get(
        &self,
        peer: Rank,
        ep: EpIndex,
        offset: usize,
        dst: GetDest,
        done: Arc<dyn OpCompletion>,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected> {
        let len = dst.len();
        let piece = self.inline_max();
        let n = pieces(len, piece).count();
        let id = self
            .ops
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(OpEntry {
                peer,
                what: What::MsgGet {
                    dst,
                    base: offset as u64,
                    piece,
                    got: vec![false; n],
                },
                done,
                left: n,
            })
            .ok_or_else(|| Error::resource("ibv conduit: too many operations in flight"))?;
        for (i, (at, k)) in pieces(len, piece).enumerate() {
            let fill = |out: &mut [u8]| {
                wire::encode_rma(wire::K_RMA_GET, ep, (offset + at) as u64, id, k, out);
                wire::FIXED
            };
            let r = self.send_loop(peer, immediate && i == 0, PollScope::All, sink, || {
                self.try_send_msg(peer, REQ, &fill, None)
            });
            if let Some(r) = self.msg_piece_sent(peer, id, i, r) {
                return r;
            }
        }
        Ok(Injected::Sent)
    }

    /// What sending piece `i` of message operation `id` came to: `None`
    /// to go on; the first piece may not go (the operation is undone and
    /// the call returns that), a later one must, answers to the earlier
    /// being on their way.
    pub(crate) fn msg_piece_sent(
        &self,
        peer: Rank,
        id: u64,
        i: usize,
        r: Result<Injected>,
    ) -> Option<Result<Injected>> {
        match r {
            Ok(Injected::Sent) => None,
            _ if i == 0 => {
                self.ops
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .cancel(id);
                Some(r)
            }
            Err(e) => fatal(&format!(
                "ibv conduit: rank {}: sending a piece of a one-sided operation to rank {peer}: {e}",
                self.me
            )),
            Ok(_) => fatal("ibv conduit: a blocking send returned without sending"),
        }
    }
}
