//! The Active Message path: sending over the device with credits (and
//! Longs by RDMA WRITE or in pieces), receive buffers, delivery to the
//! handlers, credit returns, and the conduit's own messages (one-sided
//! operations served for a created endpoint's segment).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use gex_conduit::{
    AmLimits, AmSink, IncomingAm, Injected, OutgoingAm, PollScope, SegmentDesc, ZeroLen,
};
use gex_conduit_smp::SmpTransport;
use gex_types::{AmCategory, Error, Rank, Result};

use crate::rma::{pieces, What};
use crate::verbs::{QpNum, SendOp, Sge};
use crate::{
    fatal, sim, wire, wr, IbvConduit, CHUNK, CREDIT_RING, CTRL_WORDS, DELIVER_BATCH, MAX_LONG, REP,
    REQ, W_CHUNK, W_CREDIT, W_RECV, W_SLOT,
};

/// Sending state toward one peer.
pub(crate) struct PeerTx {
    /// Messages sent per lane (cumulative).
    pub(crate) sent: [u64; 2],
    /// Work requests outstanding on the queue pair.
    pub(crate) sq_used: usize,
    /// Credit returns to this peer in flight.
    pub(crate) credit_inflight: usize,
    /// Credit returns posted to this peer (the next one's source slot).
    pub(crate) credit_next: usize,
    /// Credits last returned to this peer, per lane.
    pub(crate) reported: [u64; 2],
}

pub(crate) struct Peer {
    pub(crate) qp: QpNum,
    /// This peer's index among the peers Active Messages go to over the
    /// device (their buffers), if it is one.
    pub(crate) am: Option<usize>,
    pub(crate) tx: Mutex<PeerTx>,
    /// Messages of this peer's that arrived here, per lane (cumulative).
    pub(crate) arrived: [AtomicU64; 2],
    /// Messages of this peer's finished here (their buffers posted
    /// again), per lane (cumulative).
    pub(crate) done: [AtomicU64; 2],
    /// Messages this peer may have sent here, per lane (cumulative): what
    /// it has finished plus its window; returned to it as its credits.
    pub(crate) granted: [AtomicU64; 2],
    /// Where our credit returns go in the peer (address, key).
    pub(crate) ctrl_remote: (u64, u32),
}

/// A message waiting for its handler.
pub(crate) enum InMsg {
    /// A request, in its receive buffer (returned after the handler).
    InBuf { src: Rank, buf: u32, len: usize },
    /// A reply, copied out (its buffer returned at once).
    Copied { src: Rank, bytes: Vec<u8> },
}

impl IbvConduit {
    /// Limits to a peer reached over the device: a Long to a created
    /// endpoint's segment (not registered) travels in pieces, so it is
    /// carried up to [`MAX_LONG`] like any Long.
    pub(crate) fn net_limits(&self) -> AmLimits {
        let inline = self.buf - wire::MAX_HEADER;
        let s = SmpTransport::limits();
        AmLimits::new(
            inline.min(s.max_request_medium),
            inline.min(s.max_reply_medium),
            MAX_LONG.min(s.max_request_long),
            MAX_LONG.min(s.max_reply_long),
        )
    }

    /// Limits to a neighbour reached through shared memory (this rank
    /// included): a Long to its client memory is carried in a ring record.
    pub(crate) fn smp_limits(&self) -> AmLimits {
        self.net_limits().min(SmpTransport::limits())
    }

    /// The largest payload a message carries.
    pub(crate) fn inline_max(&self) -> usize {
        self.buf - wire::MAX_HEADER
    }

    /// Address of buffer `b` in the region at `base`.
    pub(crate) fn buf_addr(&self, base: usize, b: u32) -> usize {
        base + b as usize * self.buf
    }

    /// The rank whose queue pair receive buffer `b` is posted on, without
    /// a shared receive queue.
    pub(crate) fn buf_owner(&self, b: u32) -> Rank {
        self.am_ranks[b as usize / (2 * self.credits)]
    }

    /// Posts receive buffer `b` (to the shared receive queue, or to its
    /// owner's queue pair).
    pub(crate) fn post_recv(&self, b: u32) -> Result<()> {
        let addr = self.buf_addr(self.recv_mem, b);
        let sge = Sge {
            addr,
            len: self.buf as u32,
            lkey: self.recv_mr.lkey,
        };
        // SAFETY: the buffer lies in the registered receive region, which
        // lives for the process; nothing reads or writes it until its
        // completion is polled (the buffer is ours again only then).
        unsafe {
            match self.srq {
                Some(q) => self.dev.post_srq_recv(q, wr(W_RECV, 0, b), sge),
                None => {
                    let owner = self.buf_owner(b);
                    self.dev
                        .post_recv(self.peers[owner as usize].qp, wr(W_RECV, owner, b), sge)
                }
            }
        }
    }

    /// A message of `src`'s on `lane` is finished and its buffer posted
    /// again: the window it used goes back to `src`, grown (toward
    /// `credits`) from the reserve while that lasts.
    pub(crate) fn finish_msg(&self, src: Rank, lane: usize) {
        let p = &self.peers[src as usize];
        let done = p.done[lane].fetch_add(1, Ordering::AcqRel) + 1;
        let granted = p.granted[lane].load(Ordering::Acquire);
        // The window left open after this message: granted - done.
        let open = granted.saturating_sub(done);
        let want = (self.credits as u64).saturating_sub(open + 1);
        let extra = if want == 0 {
            0
        } else {
            self.reserve
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |r| {
                    (r > 0).then(|| r - (want as usize).min(r))
                })
                .map_or(0, |r| (want as usize).min(r) as u64)
        };
        if extra > 0 {
            self.counts.grants.fetch_add(extra, Ordering::Relaxed);
        }
        p.granted[lane].fetch_add(1 + extra, Ordering::AcqRel);
        self.credits_dirty.store(true, Ordering::Release);
    }
    /// A message arrived from `src` in receive buffer `b`.
    pub(crate) fn arrived(&self, src: Rank, b: u32, len: usize) {
        let p = &self.peers[src as usize];
        if p.am.is_none() {
            fatal(&format!(
                "ibv conduit: a message from rank {src}, which sends through shared memory"
            ));
        }
        if b as usize >= self.budget.bufs || (self.srq.is_none() && self.buf_owner(b) != src) {
            fatal(&format!(
                "ibv conduit: a receive completion from rank {src} names buffer {b}, not one posted for it"
            ));
        }
        if len > self.buf {
            fatal(&format!(
                "ibv conduit: an oversized message from rank {src}"
            ));
        }
        let addr = self.buf_addr(self.recv_mem, b);
        // SAFETY: the receive completed, so the buffer is ours; `len` is
        // within it (checked).
        let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, len) };
        let is_request = bytes.get(1).is_some_and(|f| f & 1 != 0);
        let lane = if is_request { REQ } else { REP };
        let n = p.arrived[lane].fetch_add(1, Ordering::AcqRel) + 1;
        if n > p.granted[lane].load(Ordering::Acquire) {
            fatal(&format!(
                "ibv conduit: rank {}: rank {src} sent more {} than the credits it was given",
                self.me,
                if is_request { "requests" } else { "replies" }
            ));
        }
        let m = if is_request {
            InMsg::InBuf { src, buf: b, len }
        } else {
            // Replies are copied out and their buffer (and credit) goes
            // back at once: a reply never waits for handlers.
            let copy = bytes.to_vec();
            if let Err(e) = self.post_recv(b) {
                fatal(&format!("ibv conduit: reposting a receive: {e}"));
            }
            self.finish_msg(src, REP);
            InMsg::Copied { src, bytes: copy }
        };
        let mut inbox = self.inbox.lock().unwrap_or_else(|e| e.into_inner());
        inbox.push_back(m);
        self.inbox_len.store(inbox.len(), Ordering::Release);
    }

    /// Runs handlers of queued messages (replies only for `RepliesOnly`);
    /// one thread at a time, so each sender's messages run in order.
    pub(crate) fn deliver(&self, sink: &dyn AmSink, scope: PollScope) -> usize {
        if self.inbox_len.load(Ordering::Acquire) == 0 {
            return 0;
        }
        if self.delivering.swap(true, Ordering::Acquire) {
            return 0;
        }
        let mut ran = 0;
        while ran < DELIVER_BATCH {
            let next = {
                let mut inbox = self.inbox.lock().unwrap_or_else(|e| e.into_inner());
                let m = match scope {
                    PollScope::All => inbox.pop_front(),
                    PollScope::RepliesOnly => inbox
                        .iter()
                        .position(|m| matches!(m, InMsg::Copied { .. }))
                        .and_then(|i| inbox.remove(i)),
                };
                self.inbox_len.store(inbox.len(), Ordering::Release);
                m
            };
            let Some(m) = next else { break };
            match m {
                InMsg::Copied { src, bytes } => self.run(src, &bytes, sink),
                InMsg::InBuf { src, buf, len } => {
                    let addr = self.buf_addr(self.recv_mem, buf);
                    // SAFETY: the buffer is ours until it is posted again
                    // below; `len` was checked at arrival.
                    let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, len) };
                    self.run(src, bytes, sink);
                    if let Err(e) = self.post_recv(buf) {
                        fatal(&format!("ibv conduit: reposting a receive: {e}"));
                    }
                    self.finish_msg(src, REQ);
                }
            }
            ran += 1;
        }
        self.delivering.store(false, Ordering::Release);
        ran
    }

    /// Returns credits: for every peer whose finished counts changed, one
    /// RDMA WRITE of both counts into the peer's credit words.
    pub(crate) fn flush_credits(&self) {
        if !self.credits_dirty.swap(false, Ordering::AcqRel) {
            return;
        }
        let mut again = false;
        for (r, p) in self.peers.iter().enumerate() {
            if p.am.is_none() {
                continue;
            }
            let mut tx = p.tx.lock().unwrap_or_else(|e| e.into_inner());
            again |= !self.return_credits(r as Rank, p, &mut tx);
        }
        if again {
            self.credits_dirty.store(true, Ordering::Release);
        }
    }

    /// Writes what this rank grants `p` (its finished messages plus its
    /// windows, per lane) into `p`'s credit words if it changed since the
    /// last write; `false` if that
    /// must wait (every credit source slot or queue slot in use). Writes
    /// to one peer land in order (one queue pair), so a later, larger count
    /// never lands before an earlier one; each has its own source slot of
    /// [`CREDIT_RING`], so none is overwritten while the device reads it.
    pub(crate) fn return_credits(&self, r: Rank, p: &Peer, tx: &mut PeerTx) -> bool {
        let f = [
            p.granted[REQ].load(Ordering::Acquire),
            p.granted[REP].load(Ordering::Acquire),
        ];
        if tx.reported == f {
            return true;
        }
        if tx.credit_inflight >= CREDIT_RING || tx.sq_used >= self.sq_depth {
            return false;
        }
        let slot = tx.credit_next % CREDIT_RING;
        let src = self.ctrl_out + 16 * (r as usize * CREDIT_RING + slot);
        // SAFETY: slot `slot` of peer r's ring in our registered credit
        // source; the write that last used it has completed (completions
        // of one queue pair come in order and fewer than CREDIT_RING are
        // in flight), so the device is not reading it.
        unsafe {
            *(src as *mut u64) = f[REQ];
            *((src + 8) as *mut u64) = f[REP];
        }
        let sge = Sge {
            addr: src,
            len: 16,
            lkey: self.ctrl_out_mr.lkey,
        };
        let op = SendOp::Write {
            raddr: p.ctrl_remote.0,
            rkey: p.ctrl_remote.1,
        };
        // SAFETY: the source lies in its registered region and is not
        // written again until this write completes (see above).
        match unsafe { self.dev.post_send(p.qp, wr(W_CREDIT, r, 0), op, sge) } {
            Ok(()) => {
                tx.reported = f;
                tx.credit_inflight += 1;
                tx.credit_next += 1;
                tx.sq_used += 1;
                self.counts.credit_writes.fetch_add(1, Ordering::Relaxed);
                true
            }
            Err(_) => false,
        }
    }
    /// Credits available toward `p` on `lane`: what the peer granted (its
    /// credit words here, which it writes) less what was sent.
    pub(crate) fn credits_left(&self, peer: Rank, tx: &PeerTx, lane: usize) -> u64 {
        let granted = self.ctrl[CTRL_WORDS * peer as usize + lane].load(Ordering::Acquire);
        granted.saturating_sub(tx.sent[lane])
    }

    /// The injection loop: `try_send` until it sends; `NoOp` if
    /// `immediate`; else progress, and end the job naming `dest` if it
    /// answers nothing for the peer timeout.
    pub(crate) fn send_loop(
        &self,
        dest: Rank,
        immediate: bool,
        scope: PollScope,
        sink: &dyn AmSink,
        mut try_send: impl FnMut() -> Result<Injected>,
    ) -> Result<Injected> {
        let mut since: Option<Instant> = None;
        let mut tries = 0u32;
        gex_conduit::send_or_progress(immediate, &mut try_send, || {
            if since.is_none() {
                since = Some(Instant::now());
                self.counts.credit_waits.fetch_add(1, Ordering::Relaxed);
            }
            self.progress(sink, scope);
            tries = tries.wrapping_add(1);
            if tries.is_multiple_of(256) {
                let waited = since.map_or(Duration::ZERO, |s| s.elapsed());
                if waited > self.peer_timeout {
                    fatal(&format!(
                        "ibv conduit: rank {}: rank {dest} has returned no credits and completed nothing for {:.1} s (GEX_IBV_PEER_TIMEOUT); it is presumed dead",
                        self.me,
                        waited.as_secs_f64()
                    ));
                }
            }
        })
    }

    /// Counts a send and injects the configured fault when its time comes.
    pub(crate) fn count_send(&self) {
        let n = self.counts.sends.fetch_add(1, Ordering::Relaxed) + 1;
        if let (Some((f, after)), Some(sim)) = (self.fault, &self.sim) {
            if n == after {
                let f = match f {
                    sim::Fault::QpError(_) => {
                        // The queue pair of the first peer reached over the
                        // device.
                        let Some(q) = self.peers.iter().find(|p| p.am.is_some()) else {
                            return;
                        };
                        sim::Fault::QpError(q.qp)
                    }
                    f => f,
                };
                sim.inject(f);
            }
        }
    }

    /// One attempt to SEND a message of `hdr` + `payload` (`placed`:
    /// plus RDMA WRITEs of `long` into the target's segment at
    /// `long_raddr` first) to `dest` on `lane`.
    pub(crate) fn try_send_msg(
        &self,
        dest: Rank,
        lane: usize,
        fill: &dyn Fn(&mut [u8]) -> usize,
        long: Option<(&[u8], u64, u32)>,
    ) -> Result<Injected> {
        let p = &self.peers[dest as usize];
        let pieces = long.map_or(0, |(b, _, _)| b.len().div_ceil(CHUNK));
        let mut tx = p.tx.lock().unwrap_or_else(|e| e.into_inner());
        if self.credits_left(dest, &tx, lane) == 0 || tx.sq_used + pieces + 2 > self.sq_depth {
            return Ok(Injected::NoOp);
        }
        // A send buffer: they are freed by SEND completions, which never
        // wait on the peer's handlers (a SEND always finds a receive).
        let Some(slot) = self
            .send_free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
        else {
            return Ok(Injected::NoOp);
        };
        let chunks: Vec<u32> = if pieces > 0 {
            let mut free = self.chunks_free.lock().unwrap_or_else(|e| e.into_inner());
            if free.len() < pieces {
                drop(free);
                self.send_free
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(slot);
                return Ok(Injected::NoOp);
            }
            let at = free.len() - pieces;
            free.split_off(at)
        } else {
            Vec::new()
        };
        // Credits owed to this peer go first, on the same queue pair: they
        // land before this message does.
        if !self.return_credits(dest, p, &mut tx) {
            self.credits_dirty.store(true, Ordering::Release);
        }
        tx.sent[lane] += 1;
        if let Some((bytes, raddr, rkey)) = long {
            for (i, (piece, &c)) in bytes.chunks(CHUNK).zip(&chunks).enumerate() {
                let addr = self.chunk_mem + c as usize * CHUNK;
                // SAFETY: bounce buffer `c` is ours (taken from the free
                // list) and holds CHUNK bytes; the piece is at most that.
                unsafe {
                    std::ptr::copy_nonoverlapping(piece.as_ptr(), addr as *mut u8, piece.len())
                };
                let sge = Sge {
                    addr,
                    len: piece.len() as u32,
                    lkey: self.chunk_mr.lkey,
                };
                let op = SendOp::Write {
                    raddr: raddr + (i * CHUNK) as u64,
                    rkey,
                };
                // SAFETY: the bounce buffer stays ours until this write's
                // completion returns it to the free list.
                unsafe { self.dev.post_send(p.qp, wr(W_CHUNK, dest, c), op, sge)? };
                tx.sq_used += 1;
                self.counts.rdma_writes.fetch_add(1, Ordering::Relaxed);
            }
        }
        let addr = self.buf_addr(self.send_mem, slot);
        // SAFETY: send buffer `slot` is ours (taken from the free list)
        // and `buf` bytes long.
        let out = unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, self.buf) };
        let len = fill(out);
        let sge = Sge {
            addr,
            len: len as u32,
            lkey: self.send_mr.lkey,
        };
        // SAFETY: the send buffer stays ours until the SEND's completion
        // returns it.
        unsafe {
            self.dev
                .post_send(p.qp, wr(W_SLOT, dest, slot), SendOp::Send, sge)?
        };
        tx.sq_used += 1;
        drop(tx);
        self.count_send();
        Ok(Injected::Sent)
    }

    /// Handles a message from `src` (already checked to be from a peer
    /// reached over the device).
    pub(crate) fn run(&self, src: Rank, bytes: &[u8], sink: &dyn AmSink) {
        let bad = |what: &str| -> ! {
            fatal(&format!(
                "ibv conduit: rank {}: a message from rank {src} {what}",
                self.me
            ))
        };
        let Some(m) = wire::decode(bytes) else {
            bad("is malformed")
        };
        let body = &bytes[m.payload_at..];
        match m.kind {
            wire::K_AM => {
                let mut payload: &[u8] = body;
                let len = m.len;
                if m.category == AmCategory::Long && len > 0 {
                    let off = usize::try_from(m.offset).unwrap_or(usize::MAX);
                    // Index 0 without an attached segment: a created
                    // segment bound to the primordial endpoint.
                    let at = if m.dest_ep != 0 || self.segment.get().is_none() {
                        gex_conduit::epseg::arrived_at_ep(m.dest_ep, self.me, off, len)
                            .unwrap_or_else(|e| bad(&format!("(a Long AM): {e}")))
                    } else {
                        let Some(seg) = self.segment.get() else {
                            bad("(a Long AM) arrived before this rank attached a segment")
                        };
                        let d = SegmentDesc::new(seg.base, Some(seg.base), seg.size);
                        let o = d
                            .offset_of(self.me, off, len, true, ZeroLen::InSegment)
                            .unwrap_or_else(|e| bad(&format!("(a Long AM): {}", e.local())));
                        seg.base + o
                    };
                    if !m.placed {
                        // SAFETY: [at, at + len) lies in this rank's
                        // segment (checked above), mapped for the process;
                        // the message is separate memory.
                        unsafe { std::ptr::copy_nonoverlapping(body.as_ptr(), at as *mut u8, len) };
                    }
                    // SAFETY: as above; the handler reads the payload where
                    // it landed.
                    payload = unsafe { std::slice::from_raw_parts(at as *const u8, len) };
                } else if m.category == AmCategory::Long {
                    payload = &[];
                }
                sink.deliver(
                    &IncomingAm::new(
                        src,
                        m.category,
                        m.is_request,
                        m.handler,
                        &m.args[..m.nargs],
                        payload,
                        m.addr as usize,
                    )
                    .between(m.src_ep, m.dest_ep),
                );
            }
            wire::K_LONG_PIECE => {
                // Checked against this rank's segment of that endpoint
                // before it is written; no answer (the Long follows).
                let off = usize::try_from(m.offset).unwrap_or(usize::MAX);
                if m.len > self.buf - wire::FIXED {
                    bad("carries more than a message holds");
                }
                let at = gex_conduit::epseg::arrived_at_ep(m.dest_ep, self.me, off, m.len)
                    .unwrap_or_else(|e| bad(&format!("(a piece of a Long): {e}")));
                // SAFETY: [at, at + len) lies in this rank's segment of the
                // endpoint (checked above), mapped for the process; the
                // message is separate memory.
                unsafe { std::ptr::copy_nonoverlapping(body.as_ptr(), at as *mut u8, m.len) };
            }
            wire::K_RMA_PUT | wire::K_RMA_GET => {
                let off = usize::try_from(m.offset).unwrap_or(usize::MAX);
                if m.len > self.inline_max() {
                    bad("asks for more than a message carries");
                }
                let at = if m.len == 0 {
                    0
                } else {
                    gex_conduit::epseg::arrived_at_ep(m.dest_ep, self.me, off, m.len)
                        .unwrap_or_else(|e| bad(&format!("(a one-sided message): {e}")))
                };
                let op = m.addr;
                self.counts.rma_served.fetch_add(1, Ordering::Relaxed);
                if m.kind == wire::K_RMA_PUT {
                    if m.len > 0 {
                        // SAFETY: the range lies in this rank's segment of
                        // that endpoint (checked above); the message is
                        // separate memory.
                        unsafe {
                            std::ptr::copy_nonoverlapping(body.as_ptr(), at as *mut u8, m.len)
                        };
                    }
                    // The answers name the piece by its offset.
                    let _ = self.send_internal(src, REP, sink, &|out| {
                        wire::encode_rma(wire::K_RMA_PUT_ACK, 0, m.offset, op, 0, out);
                        wire::FIXED
                    });
                } else {
                    let data: &[u8] = if m.len == 0 {
                        &[]
                    } else {
                        // SAFETY: as above; only read.
                        unsafe { std::slice::from_raw_parts(at as *const u8, m.len) }
                    };
                    let _ = self.send_internal(src, REP, sink, &|out| {
                        wire::encode_rma(wire::K_RMA_GET_DATA, 0, m.offset, op, data.len(), out);
                        out[wire::FIXED..wire::FIXED + data.len()].copy_from_slice(data);
                        wire::FIXED + data.len()
                    });
                }
            }
            _ => {
                let op = {
                    let mut ops = self.ops.lock().unwrap_or_else(|e| e.into_inner());
                    let slot = m.addr as u32 as usize;
                    let entry = ops
                        .slots
                        .get_mut(slot)
                        .filter(|s| u64::from(s.gen) == m.addr >> 32)
                        .and_then(|s| s.op.as_mut())
                        .filter(|o| o.peer == src);
                    // The piece answered: its offset from the operation's
                    // first, which must start a piece not yet answered, of
                    // the length asked for.
                    let answered = entry.and_then(|e| {
                        let (base, piece, total, got) = match (&mut e.what, m.kind) {
                            (
                                What::MsgPut {
                                    base,
                                    piece,
                                    len,
                                    got,
                                },
                                wire::K_RMA_PUT_ACK,
                            ) => (*base, *piece, *len, got),
                            (
                                What::MsgGet {
                                    dst,
                                    base,
                                    piece,
                                    got,
                                },
                                wire::K_RMA_GET_DATA,
                            ) => (*base, *piece, dst.len(), got),
                            _ => return None,
                        };
                        let at = usize::try_from(m.offset.checked_sub(base)?).ok()?;
                        let i = at / piece;
                        if at % piece != 0 || got.get(i) != Some(&false) {
                            return None;
                        }
                        if m.kind == wire::K_RMA_GET_DATA && m.len != piece.min(total - at) {
                            return None;
                        }
                        got[i] = true;
                        if let What::MsgGet { dst, .. } = &mut e.what {
                            dst.fill_at(at, body);
                        }
                        e.left -= 1;
                        Some(e.left == 0)
                    });
                    match answered {
                        None => None,
                        Some(false) => Some(None),
                        Some(true) => Some(ops.take(m.addr)),
                    }
                };
                let Some(op) = op else {
                    bad("answers no operation in flight to it (unknown, stale, another kind, piece or length)")
                };
                if let Some(op) = op {
                    drop(op.what);
                    op.done.complete();
                }
            }
        }
    }

    /// Sends a conduit-internal message (blocking), lanes as AMs.
    pub(crate) fn send_internal(
        &self,
        dest: Rank,
        lane: usize,
        sink: &dyn AmSink,
        fill: &dyn Fn(&mut [u8]) -> usize,
    ) -> Result<Injected> {
        let scope = PollScope::for_sender(lane == REQ);
        self.send_loop(dest, false, scope, sink, || {
            self.try_send_msg(dest, lane, fill, None)
        })
    }
    /// A Long larger than a message to a created endpoint's segment, which
    /// is not registered with the device (no RDMA WRITE): its payload goes
    /// first in [`wire::K_LONG_PIECE`] messages of at most a buffer each,
    /// on the Long's queue pair and lane, so they are written before the
    /// Long, which follows marked placed. `IMMEDIATE` gives up only before
    /// the first piece.
    pub(crate) fn long_in_pieces(
        &self,
        dest: Rank,
        lane: usize,
        msg: &OutgoingAm<'_>,
        immediate: bool,
        scope: PollScope,
        sink: &dyn AmSink,
    ) -> Result<Injected> {
        let len = msg.payload.len();
        if len > MAX_LONG {
            return Err(Error::bad_arg(format!(
                "ibv conduit: a Long payload of {len} bytes is over the {MAX_LONG}-byte limit"
            )));
        }
        let piece = self.buf - wire::FIXED;
        for (i, (at, k)) in pieces(len, piece).enumerate() {
            let fill = |out: &mut [u8]| {
                let off = (msg.dest_offset + at) as u64;
                wire::encode_piece(msg.dest_ep, off, msg.is_request, k, out);
                out[wire::FIXED..wire::FIXED + k].copy_from_slice(&msg.payload[at..at + k]);
                wire::FIXED + k
            };
            let r = self.send_loop(dest, immediate && i == 0, scope, sink, || {
                self.try_send_msg(dest, lane, &fill, None)
            })?;
            if r == Injected::NoOp {
                return Ok(r);
            }
            self.counts.long_pieces.fetch_add(1, Ordering::Relaxed);
        }
        let fill = |out: &mut [u8]| wire::encode_am(msg, true, out);
        self.send_loop(dest, false, scope, sink, || {
            self.try_send_msg(dest, lane, &fill, None)
        })
    }

    /// `Conduit::am_send`: through shared memory inside the neighbourhood,
    /// else a SEND (a Long over a buffer: RDMA WRITE first, or pieces to a
    /// created endpoint's segment).
    pub(crate) fn send_am(
        &self,
        dest: Rank,
        msg: &OutgoingAm<'_>,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected> {
        let scope = PollScope::for_sender(msg.is_request);
        if self.smp.contains(dest) {
            return gex_conduit::send_or_progress(
                immediate,
                || self.smp.try_send(dest, msg),
                || {
                    self.progress(sink, scope);
                },
            );
        }
        self.check_peer(dest)?;
        let lane = if msg.is_request { REQ } else { REP };
        // RDMA into the attached segments only: a created segment (bound to
        // a created endpoint, or to the primordial one in a job that did
        // not attach) is not registered, and a payload over a buffer goes
        // in pieces.
        let over = msg.category == AmCategory::Long && msg.payload.len() > self.inline_max();
        if over && (msg.dest_ep != 0 || self.seg_keys.get().is_none()) {
            return self.long_in_pieces(dest, lane, msg, immediate, scope, sink);
        }
        let by_rdma = over;
        let long = if by_rdma {
            let (base, size, rkey) = self.seg_of(dest)?;
            if !gex_conduit::fits(msg.dest_offset, msg.payload.len(), size) {
                return Err(Error::bad_arg(format!(
                    "ibv conduit: a Long to rank {dest} at [{:#x}, +{}) is outside its segment",
                    msg.dest_offset,
                    msg.payload.len()
                )));
            }
            Some((msg.payload, base + msg.dest_offset as u64, rkey))
        } else {
            if msg.payload.len() > self.inline_max() {
                return Err(Error::bad_arg(format!(
                    "ibv conduit: a payload of {} bytes is over the {}-byte limit",
                    msg.payload.len(),
                    self.inline_max()
                )));
            }
            None
        };
        let fill = |out: &mut [u8]| {
            let h = wire::encode_am(msg, by_rdma, out);
            if by_rdma {
                h
            } else {
                out[h..h + msg.payload.len()].copy_from_slice(msg.payload);
                h + msg.payload.len()
            }
        };
        self.send_loop(dest, immediate, scope, sink, || {
            self.try_send_msg(dest, lane, &fill, long)
        })
    }

    /// `Conduit::am_can_send`: room in the smp ring, or a credit, a send
    /// queue slot and a send buffer toward `dest`.
    pub(crate) fn can_send_am(
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
        let Some(p) = self.peers.get(dest as usize) else {
            return false;
        };
        let lane = if is_request { REQ } else { REP };
        let tx = p.tx.lock().unwrap_or_else(|e| e.into_inner());
        self.credits_left(dest, &tx, lane) > 0
            && tx.sq_used < self.sq_depth
            && !self
                .send_free
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_empty()
    }
}
