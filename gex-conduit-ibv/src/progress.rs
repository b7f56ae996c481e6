//! Progress: polling the completion queue, acting on completions
//! (finishing one-sided operations, freeing buffers) and ending the job
//! on a failed one.

use std::sync::atomic::Ordering;

use gex_conduit::{AmSink, PollScope};
use gex_types::Rank;

use crate::rma::{pieces, OpEntry, What};
use crate::verbs::{Wc, WcStatus};
use crate::{
    fatal, wr_parts, IbvConduit, CHUNK, CQ_BATCH, W_BYE, W_CHUNK, W_CREDIT, W_HB, W_OP, W_RECV,
    W_SLOT,
};

impl IbvConduit {
    /// Ends the job for a completion that failed toward `peer`.
    pub(crate) fn failed(&self, peer: Rank, what: &str, status: WcStatus) -> ! {
        let why = match status {
            WcStatus::RetryExceeded => format!("; rank {peer} may have died or stopped"),
            WcStatus::RnrRetryExceeded => format!("; rank {peer} posted no receive"),
            _ => String::new(),
        };
        fatal(&format!(
            "ibv conduit: rank {}: {what} with rank {peer} failed: {status} (the queue pair to rank {peer} is in the error state{why})",
            self.me
        ))
    }

    /// Takes completions and acts on them: frees send buffers, bounce
    /// buffers and queue slots, completes operations, queues arrived
    /// messages. One thread at a time.
    pub(crate) fn drain_cq(&self) -> usize {
        let Ok(mut wcs) = self.cq.try_lock() else {
            return 0;
        };
        wcs.clear();
        let n = self.dev.poll_cq(&mut wcs, CQ_BATCH);
        for wc in wcs.iter() {
            self.completed(wc);
        }
        n
    }

    pub(crate) fn completed(&self, wc: &Wc) {
        let (kind, peer, idx) = wr_parts(wc.wr_id);
        // By the id: an error completion's opcode is undefined in verbs.
        if kind == W_RECV {
            // A receive of the shared queue is known by its queue pair.
            let peer = match self.srq {
                Some(_) => *self.qp_rank.get(&wc.qp).unwrap_or_else(|| {
                    fatal(&format!(
                        "ibv conduit: a receive completed on queue pair {}, which is no peer's",
                        wc.qp
                    ))
                }),
                None => peer,
            };
            match wc.status {
                WcStatus::Success => {}
                // The queue pair went to the error state: its cause is
                // reported by the send side when this rank needs the peer
                // (a peer that ended after its last message leaves exactly
                // this behind, and nothing is wrong).
                WcStatus::Flushed => return,
                s => self.failed(peer, "receiving", s),
            }
            self.counts.received.fetch_add(1, Ordering::Relaxed);
            self.arrived(peer, idx, wc.byte_len as usize);
            return;
        }
        let Some(p) = self.peers.get(peer as usize) else {
            fatal(&format!(
                "ibv conduit: a completion names rank {peer}, not in the job"
            ));
        };
        match kind {
            W_HB => {
                if wc.status == WcStatus::Success {
                    self.live.inflight[peer as usize].store(false, Ordering::Release);
                } else if !self.live.departed(peer) {
                    self.failed(peer, "a heartbeat", wc.status);
                }
                return;
            }
            W_BYE => return,
            _ => {}
        }
        {
            let mut tx = p.tx.lock().unwrap_or_else(|e| e.into_inner());
            tx.sq_used = tx.sq_used.saturating_sub(1);
            match kind {
                W_SLOT => self
                    .send_free
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(idx),
                W_CREDIT => tx.credit_inflight = tx.credit_inflight.saturating_sub(1),
                _ => {}
            }
        }
        if wc.status != WcStatus::Success {
            match kind {
                // A credit return to a rank that has ended: nothing needs it.
                W_CREDIT if matches!(wc.status, WcStatus::RetryExceeded | WcStatus::Flushed) => {
                    return
                }
                W_CREDIT => self.failed(peer, "returning credits", wc.status),
                W_SLOT => self.failed(peer, "a SEND", wc.status),
                W_CHUNK => self.failed(peer, "an RDMA WRITE of a Long payload", wc.status),
                _ => self.failed(peer, "a one-sided operation", wc.status),
            }
        }
        match kind {
            W_CHUNK => self.free_chunk(idx),
            W_OP => {
                let op = {
                    let mut ops = self.ops.lock().unwrap_or_else(|e| e.into_inner());
                    let Some(s) = ops.slots.get_mut(idx as usize) else {
                        fatal("ibv conduit: a completion names no operation in flight");
                    };
                    let gen = s.gen;
                    let Some(e) = s.op.as_mut() else {
                        fatal("ibv conduit: a completion names no operation in flight");
                    };
                    e.left = e.left.saturating_sub(1);
                    if e.left == 0 {
                        ops.take((u64::from(gen) << 32) | u64::from(idx))
                    } else {
                        None
                    }
                };
                if let Some(op) = op {
                    self.finish(op, idx);
                }
            }
            _ => {}
        }
    }

    /// Finishes a one-sided operation whose work request completed.
    pub(crate) fn finish(&self, op: OpEntry, slot: u32) {
        match op.what {
            What::Write { _src, chunks } => {
                drop(_src);
                self.free_chunks(&chunks);
            }
            What::Read { mut dst, chunks } => {
                let len = dst.len();
                for ((at, n), &c) in pieces(len, CHUNK).zip(&chunks) {
                    // SAFETY: the bounce buffer is ours again (its READ
                    // completed) and holds the piece's `n` bytes.
                    let bytes = unsafe {
                        std::slice::from_raw_parts(
                            (self.chunk_mem + c as usize * CHUNK) as *const u8,
                            n,
                        )
                    };
                    dst.fill_at(at, bytes);
                }
                drop(dst);
                self.free_chunks(&chunks);
            }
            What::Atomic { result } => {
                if let Some(mut r) = result {
                    // SAFETY: the scratch word of this slot was written by
                    // the completed atomic and is not in use by another op
                    // until the slot is reused (after this).
                    let v = unsafe { *((self.scratch_mem + 8 * slot as usize) as *const u64) };
                    let b = v.to_ne_bytes();
                    let n = r.len().min(8);
                    r.fill(&b[..n]);
                }
            }
            What::MsgPut { .. } | What::MsgGet { .. } => {}
        }
        op.done.complete();
    }

    pub(crate) fn free_chunk(&self, c: u32) {
        self.free_chunks(&[c]);
    }

    pub(crate) fn free_chunks(&self, cs: &[u32]) {
        self.chunks_free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(cs);
    }

    /// Device progress: completions, handlers, credit returns.
    pub(crate) fn progress(&self, sink: &dyn AmSink, scope: PollScope) -> usize {
        let mut ran = self.smp.poll(sink, scope);
        self.drain_cq();
        ran += self.deliver(sink, scope);
        self.flush_credits();
        ran
    }
}
