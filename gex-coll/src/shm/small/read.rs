//! The reads of the small-data collectives: one member's read of one
//! operation's piece from every writer's slot (`Read`), and the queue of
//! the non-blocking ones, advanced by [`progress`] (the progress hook, and
//! tests of their handles). Part of the shared-memory data mechanism
//! (`crate::shm::small` documents the protocol).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use gex_core::{Completion, Staging};

use crate::area::SMALL_MAX;
use crate::area::{ShmTeam, SmallTeam};
use crate::engine::lock;
use crate::handle::CollHandle;
use crate::reduce::{combine, ReduceOp};

use super::{prefetch, wait, Hdr, Pat, DEPTH, PREFETCH};

/// One member's read of operation `s`.
pub(super) struct Read {
    pub(super) s: u64,
    /// On the primordial team with the chunked path: the chunked
    /// operations this member had started when it started this one.
    pub(super) data_at: Option<u64>,
    pub(super) sig: u64,
    /// The piece: bytes `[off, off + len)` of each writer's input.
    pub(super) off: usize,
    pub(super) len: usize,
    pub(super) pat: Pat,
}

impl Read {
    fn j(&self) -> usize {
        (self.s % DEPTH) as usize
    }

    /// Whether every writer has posted operation `s`.
    fn ready(&self, st: &SmallTeam) -> bool {
        let j = self.j();
        let posted = |m: usize| {
            let ok = st.hdr(m, j).seq.load(Ordering::Acquire) == self.s;
            if !ok {
                self.check_skipped(st, m);
            }
            ok
        };
        match self.pat.sole_writer() {
            Some(w) => posted(w),
            None => (0..st.n()).all(posted),
        }
    }

    /// Reads the piece in place into `out` (the whole output) if it is
    /// posted, or, `blocking`, once it is; then acknowledges it, and
    /// fetches a sole writer's next lines ahead (a root in a loop runs
    /// ahead: their transfers then overlap instead of costing one each).
    /// `false`, having done nothing, if it is not posted and not
    /// `blocking`.
    #[inline(always)]
    pub(super) fn now(&self, st: &SmallTeam, out: &mut [u8], blocking: bool) -> bool {
        if !self.ready(st) {
            if !blocking {
                return false;
            }
            wait(|| self.ready(st));
        }
        self.consume(st, out);
        // Release: the reads before the acknowledgement.
        st.ack(st.me, self.j()).store(self.s, Ordering::Release);
        if let Some(w) = self.pat.sole_writer() {
            for k in 1..=PREFETCH {
                prefetch(st.hdr(w, ((self.s + k) % DEPTH) as usize) as *const Hdr as *const u8);
            }
        }
        true
    }

    /// Size disagreement across the inline line: writer `m`, which has
    /// not written this operation, has posted a chunked operation this
    /// member has not started. In a consistent program it writes this
    /// one in its initiation call before it starts any later one; so it
    /// took the chunked path for this call, and this read would wait
    /// forever.
    #[cold]
    fn check_skipped(&self, st: &SmallTeam, m: usize) {
        let Some(d) = self.data_at else { return };
        // The slot is looked at again after the count (which the writer
        // stores after it): a writer that wrote this operation and went
        // on between the two loads is no mismatch.
        if crate::shm::order::posted_op(st.locals[m]) > d
            && st.hdr(m, self.j()).seq.load(Ordering::Acquire) != self.s
        {
            gex_core::fatal(&format!(
                "gex-coll: collective mismatch in small shared-memory operation {}: team rank {m} \
                 took the chunked path (more than 1 KiB per writer) where this rank took the \
                 small one: the members passed different sizes (or a different collective)",
                self.s
            ));
        }
    }

    fn check_sig(&self, st: &SmallTeam, m: usize) {
        let got = st.hdr(m, self.j()).sig.load(Ordering::Relaxed);
        if got != self.sig {
            gex_core::fatal(&format!(
                "gex-coll: collective mismatch in small shared-memory operation {} of a team: \
                 team rank {m} called a different collective or passed different \
                 single-valued arguments (signature {got:#x}, this rank {:#x})",
                self.s, self.sig
            ));
        }
    }

    /// Consumes the posted piece ([`Read::ready`]) into `out`, the whole
    /// output (whose length the pattern gives: the caller's `dst`).
    fn consume(&self, st: &SmallTeam, out: &mut [u8]) {
        let (j, me, n, off, len) = (self.j(), st.me, st.n(), self.off, self.len);
        // Writer `m`'s bytes `[lo, hi)` of its input (within this piece).
        // SAFETY: the piece is posted (`ready`), and this member
        // acknowledges it only after this.
        let w = |m: usize, lo: usize, hi: usize| unsafe { st.data(m, j, len, lo - off, hi - lo) };
        // The part `[lo, hi)` of block `me` (of `nb` bytes) in this piece.
        let mine = |nb: usize| ((me * nb).max(off), ((me + 1) * nb).min(off + len));
        match &self.pat {
            Pat::Bcast { root } => {
                self.check_sig(st, *root);
                out[off..off + len].copy_from_slice(w(*root, off, off + len));
            }
            Pat::Scatter { root, nb } => {
                self.check_sig(st, *root);
                let (lo, hi) = mine(*nb);
                if lo < hi {
                    out[lo - me * nb..hi - me * nb].copy_from_slice(w(*root, lo, hi));
                }
            }
            Pat::Gather { nb, .. } | Pat::GatherAll { nb } => {
                for m in 0..n {
                    self.check_sig(st, m);
                    let at = m * nb + off;
                    out[at..at + len].copy_from_slice(w(m, off, off + len));
                }
            }
            Pat::Exchange { nb } => {
                let (lo, hi) = mine(*nb);
                for m in 0..n {
                    self.check_sig(st, m);
                    if lo < hi {
                        let at = m * nb + lo - me * nb;
                        out[at..at + hi - lo].copy_from_slice(w(m, lo, hi));
                    }
                }
            }
            Pat::Reduce { dt, dt_sz, op, .. } => {
                for m in 0..n {
                    self.check_sig(st, m);
                }
                let acc = &mut out[off..off + len];
                acc.copy_from_slice(w(0, off, off + len));
                match op {
                    // Built-in operators commute (IEEE addition and
                    // multiplication included, bit for bit): combining
                    // each contribution into the accumulator gives the
                    // rank-order result.
                    ReduceOp::Builtin(_) => {
                        for m in 1..n {
                            combine(*dt, *dt_sz, op, w(m, off, off + len), acc);
                        }
                    }
                    // User operators may not: `acc = acc (+) c_m`, in rank
                    // order, through a copy of `c_m`.
                    ReduceOp::User(_) | ReduceOp::UserNc(_) => {
                        let mut tmp = [0u8; SMALL_MAX];
                        let tmp = &mut tmp[..len];
                        for m in 1..n {
                            tmp.copy_from_slice(w(m, off, off + len));
                            combine(*dt, *dt_sz, op, acc, tmp);
                            acc.copy_from_slice(tmp);
                        }
                    }
                }
            }
        }
    }

    /// The rare path: data not there at a non-blocking initiation. The
    /// read is queued for the progress hook (and the handle), into a
    /// staging buffer the handle copies to `dst`.
    pub(super) fn register<'a>(self, team: Arc<ShmTeam>, dst: &'a mut [u8]) -> CollHandle<'a> {
        let c = Completion::new(1, None);
        let staging = Staging::new(dst.len());
        push(Pending {
            team,
            read: self,
            staging: staging.clone(),
            c: c.clone(),
        });
        CollHandle::pending_into(c, staging, dst).shm_poke()
    }
}

pub(super) struct Pending {
    pub(super) team: Arc<ShmTeam>,
    pub(super) read: Read,
    pub(super) staging: Arc<Staging>,
    pub(super) c: Arc<Completion>,
}

pub(super) static PENDING: Mutex<Vec<Pending>> = Mutex::new(Vec::new());

pub(super) fn push(p: Pending) {
    let mut q = lock(&PENDING);
    q.push(p);
    COUNT.store(q.len(), Ordering::Relaxed);
}

/// `PENDING.len()`, read without the lock.
pub(super) static COUNT: AtomicUsize = AtomicUsize::new(0);

/// The hook's part: finishes the registered reads whose data is there;
/// returns how many.
pub(crate) fn progress() -> usize {
    if COUNT.load(Ordering::Relaxed) == 0 {
        return 0;
    }
    let Ok(mut q) = PENDING.try_lock() else {
        return 0;
    };
    let mut done = 0;
    q.retain(|p| {
        let st = &p.team.small;
        if !p.read.ready(st) {
            return true;
        }
        // SAFETY: the staging buffer has the output's length (`register`,
        // `run`); its only writers are the entries of one operation (one
        // per piece, writing disjoint ranges), all here under the queue's
        // lock, one at a time, and nothing reads it before the last of
        // them signals the completion.
        let out = unsafe { std::slice::from_raw_parts_mut(p.staging.ptr(), p.staging.len()) };
        p.read.consume(st, out);
        // Release: the reads before the acknowledgement.
        st.ack(st.me, p.read.j()).store(p.read.s, Ordering::Release);
        p.c.done();
        done += 1;
        false
    });
    COUNT.store(q.len(), Ordering::Relaxed);
    done
}
