//! Small data collectives through shared memory, on any team that owns a
//! channel of the neighbourhood's area (every member shares this
//! process's neighbourhood): broadcast, scatter, gather, gather-all,
//! exchange, reduce-to-one and reduce-to-all (every operator, user-defined
//! ones included) whose writers' input fits an inline slot
//! ([`SMALL_MAX`] bytes), in any sync mode (`OUT_ALLSYNC` adds the
//! closing barrier every path has); and larger ones, in
//! pieces of a slot, on the teams where the chunked path
//! (`crate::shm::data`: the primordial team of a one-neighbourhood job) is
//! not available (sub-teams; for reductions, elements of at most a slot).
//!
//! # Pieces
//!
//! An operation of `p` pieces takes `p` consecutive operation numbers;
//! piece `i` carries bytes `[i * unit, (i + 1) * unit)` of each writer's
//! input (`unit` a slot, or the most whole elements of a reduction a slot
//! holds), and each reader takes what it needs of it. A writer writes its
//! pieces in the initiation call, waiting as above between them (so it
//! runs 32 pieces ahead of its slowest reader); a blocking reader reads
//! each in place; a non-blocking reader of several pieces queues them
//! all, into one staging buffer, as the rare path below does.
//!
//! # Reserved operations
//!
//! The stages of the hierarchical collectives (`crate::hier`) reserve
//! their operation numbers at initiation, in call order ([`reserve`]),
//! and start later, from the progress hook, when their input is there
//! ([`Reserved::try_start`]): each piece as soon as it can without
//! waiting (a writer's once its slot is free everywhere), else on a
//! later call. Reserved operations may start out of number order: the
//! slot protocol below orders the operations that share a slot.
//!
//! # Slots and acknowledgements
//!
//! In the team's channel every member has a region (`crate::area`): a line
//! of [`SMALL_DEPTH`] acknowledgement counters `ack[j]`, then
//! [`SMALL_DEPTH`] slots, each a sequence number, a signature and up to
//! [`SMALL_MAX`] bytes of data in the same cache lines. The team's small
//! operations are numbered `s = 1, 2, ...` in call order (the same on every
//! member); operation `s` uses slot `j = s % SMALL_DEPTH` of each writer.
//!
//! - A writer (the root of a broadcast or scatter; every member of the
//!   others) first waits until every member's `ack[j] >= s - DEPTH` (the
//!   slot's previous operation consumed everywhere), then copies its input
//!   and signature into slot `j` and stores `seq = s` with release. It
//!   then asks for slot `j + 1`'s line for writing (`prefetchw`): taking
//!   the line back from the readers' caches then overlaps with the rest of
//!   the call, where otherwise the first locked instruction or failed
//!   store-to-load forward after the next write would wait for it (in a
//!   loop of 8-byte broadcasts on 2 ranks that wait was most of the
//!   root's time; PERFORMANCE.md, "Collectives").
//! - A reader waits until each writer's slot `j` has `seq == s` (acquire),
//!   checks the writer's signature against its own (a mismatch ends the
//!   job with a message), copies or combines the data straight into its
//!   output, then stores `ack[j] = s` with release. A member that reads
//!   nothing in operation `s` stores it at initiation.
//! - Before any of that, a member waits until its own `ack[j] >= s -
//!   DEPTH` (its previous operation in slot `j`, possibly a handle not yet
//!   synced, is consumed), so `ack[j]` only grows and says what it means.
//!
//! So a writer runs up to [`SMALL_DEPTH`] operations ahead of the slowest
//! member (a broadcast root in a loop does not wait for its readers at
//! all until then), and acknowledgements are per slot, so handles may be
//! synced in any order. A writer keeps a private copy of the last
//! acknowledgements it read and looks at a member's line again only when
//! that copy is too old; when it then has to wait for another member, it
//! waits until that member also acknowledged the next [`BATCH`] - 1
//! operations (all posted before this one), so that a root whose ring is
//! full takes the member's acknowledgement line once per batch instead
//! of once per operation. Every acknowledgement and sequence is stored by
//! its owner only (no read-modify-write on shared lines).
//!
//! # No lock, no allocation
//!
//! A blocking call (`broadcast`, `reduce_to_all`, ..., which mark the
//! thread while they initiate) reads in place: the member waits for its
//! writers, polling (and yielding the core after every look when the host
//! runs more ranks than it has cores: the writer may be waiting for it),
//! then writes the result straight into the caller's buffer. A
//! non-blocking call whose data is there at initiation does the same and
//! returns `INVALID`; otherwise (the rare path) it registers the read in a
//! queue that the layer's progress hook and the handle advance, with a
//! staging buffer the handle copies from, as the chunked path does.
//!
//! # Progress and deadlock
//!
//! Writes happen at initiation; reads at initiation, in a wait, or in the
//! progress hook. A reader never waits at initiation unless it is a
//! blocking call: its operation cannot be posted before it acknowledged
//! the slot's previous one, so only members that acknowledge without
//! reading wait for their own previous operation first. Every wait polls,
//! and every wait at operation `s` is for writes or acknowledgements of
//! operations numbered below `s` (the batch included); so the member
//! that waits for the lowest-numbered operation waits for operations
//! every member has passed, and the team's small operations cannot
//! deadlock among themselves.
//!
//! # Reuse of a channel
//!
//! A derived team zeroes its member's region when it claims the channel,
//! before the exchange that sets the team up (`crate::teams`), so no member
//! sees a previous owner's sequence numbers. The previous owner's members
//! are through with the channel: `tm_destroy` requires every collective
//! synced and starts with a barrier.
//!
//! # Untrusted memory
//!
//! Nothing read from another rank's region becomes an address or a length:
//! every length and offset is the reader's own (single-valued arguments),
//! checked against the slot size; a rank writing garbage corrupts data,
//! not memory.
//!
//! Part of the shared-memory data mechanism (`crate::shm`); uses the
//! shared area (its slots and the teams' views), the AM mechanism
//! (`OUT_ALLSYNC`), the engine, the handles, the operators, the modes, the
//! registry, and `crate::shm::order` (what the two paths share); not
//! `crate::shm::data`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use gex_core::{Completion, Runtime, Staging};
use gex_types::Dt;

use crate::area::{
    self, SMALL_BLOCKS_AT, SMALL_DEPTH, SMALL_LINE, SMALL_LINES_AT, SMALL_MAX, SMALL_TINY,
};
use crate::area::{ShmTeam, SmallTeam};
use crate::handle::CollHandle;
use crate::reduce::ReduceOp;
use crate::sync::SyncMode;
use crate::team::TeamInfo;

mod read;

use super::order::is_blocking;
pub(crate) use read::progress;
use read::{push, Pending, Read};

pub(super) const DEPTH: u64 = SMALL_DEPTH as u64;

/// A slot's header: written by its owner (data and `sig` before `seq`).
#[repr(C)]
pub(super) struct Hdr {
    seq: AtomicU64,
    sig: AtomicU64,
}

impl SmallTeam {
    fn n(&self) -> usize {
        self.locals.len()
    }

    #[inline]
    fn region(&self, m: usize) -> *mut u8 {
        self.regions[m] as *mut u8
    }

    /// Waits until every member acknowledged operation `prev` (or later)
    /// of slot `j`, so this member may write the slot again. Looks at a
    /// member's line only when the private copy is too old.
    fn wait_free(&self, j: usize, prev: u64) {
        let d = SMALL_DEPTH;
        for m in 0..self.n() {
            if self.seen[m * d + j].load(Ordering::Relaxed) >= prev {
                continue;
            }
            // Acquire: their reads happen before this write.
            wait(|| self.ack(m, j).load(Ordering::Acquire) >= prev);
            if m != self.me && prev > 0 {
                // Another member that is behind: let it also finish the
                // next operations already posted before this one (a
                // batch), so that this member does not look at its line
                // again (and take the line from it) at every operation.
                let (jb, b) = ((j + BATCH - 1) % d, prev + BATCH as u64 - 1);
                wait(|| self.ack(m, jb).load(Ordering::Acquire) >= b);
            }
            // Refresh the private copy of the batch's slots only (each
            // line looked at is taken from the member, whose next
            // acknowledgement in it then misses).
            for i in (j..j + BATCH).map(|i| i % d) {
                self.seen[m * d + i]
                    .store(self.ack(m, i).load(Ordering::Acquire), Ordering::Relaxed);
            }
        }
    }

    /// Whether every member acknowledged operation `prev` (or later) of
    /// slot `j` ([`SmallTeam::wait_free`] without the wait).
    fn try_free(&self, j: usize, prev: u64) -> bool {
        let d = SMALL_DEPTH;
        for m in 0..self.n() {
            if self.seen[m * d + j].load(Ordering::Relaxed) >= prev {
                continue;
            }
            // Acquire: their reads happen before this write. Refresh the
            // private copy of the whole line (acknowledgements only grow,
            // so a copy is never ahead of its counter).
            for (i, c) in self.seen[m * d..(m + 1) * d].iter().enumerate() {
                c.store(self.ack(m, i).load(Ordering::Acquire), Ordering::Relaxed);
            }
            if self.seen[m * d + j].load(Ordering::Relaxed) < prev {
                return false;
            }
        }
        true
    }

    /// Posts this member's `src` (at most a slot) as operation `s` in its
    /// slot `j = s % DEPTH`, with signature `sig`, once the caller knows
    /// every member acknowledged the slot's previous operation
    /// ([`SmallTeam::wait_free`], [`SmallTeam::try_free`]). Then asks for
    /// the next slot's line for writing (`prefetchw`): taking it back
    /// from the readers' caches overlaps with what this member does
    /// until its next operation, instead of stalling the first locked
    /// instruction or store-forwarding miss after that operation's write
    /// (a hint: no effect on results).
    ///
    /// # Safety
    ///
    /// Every member acknowledged operation `s - DEPTH` of slot `j` (so
    /// nobody reads the slot), and no other thread posts to this member's
    /// slots meanwhile (one thread at a time initiates over a team, or
    /// advances a reserved stage).
    #[inline(always)]
    unsafe fn post(&self, s: u64, src: &[u8], sig: u64) {
        let (me, j) = (self.me, (s % DEPTH) as usize);
        let hdr = self.hdr(me, j);
        // SAFETY: this member's own slot `j`, which holds `src.len() <=
        // SMALL_MAX` bytes (`data_ptr` asserts it); nobody reads it and
        // nobody else writes it (the caller's promise).
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), self.data_ptr(me, j, src.len()), src.len())
        };
        hdr.sig.store(sig, Ordering::Relaxed);
        // Release: the data and signature before the sequence.
        hdr.seq.store(s, Ordering::Release);
        prefetch_write(self.hdr(me, ((s + 1) % DEPTH) as usize) as *const Hdr as *const u8);
    }

    /// Acknowledges operation `s` without reading (a member that reads
    /// nothing in it), once its own previous operation in the slot is
    /// consumed (it may be a registered read, which the progress hook
    /// finishes), waiting for that if `wait_for_it`; `false`, having
    /// acknowledged nothing, if it is not consumed and `!wait_for_it`.
    #[inline(always)]
    fn pass(&self, s: u64, wait_for_it: bool) -> bool {
        let prev = s.saturating_sub(DEPTH);
        let mine = self.ack(self.me, (s % DEPTH) as usize);
        if mine.load(Ordering::Acquire) < prev {
            if !wait_for_it {
                return false;
            }
            wait(|| mine.load(Ordering::Acquire) >= prev);
        }
        // Release: nothing to read; writers may reuse the slot.
        mine.store(s, Ordering::Release);
        true
    }

    /// The next operation number of this member (one thread at a time
    /// initiates over a team: not a read-modify-write).
    #[inline(always)]
    fn next_op(&self) -> u64 {
        let s = self.started.load(Ordering::Relaxed) + 1;
        self.started.store(s, Ordering::Relaxed);
        s
    }

    /// Member `m`'s acknowledgement of slot `j`.
    #[inline]
    fn ack(&self, m: usize, j: usize) -> &'static AtomicU64 {
        assert!(j < SMALL_DEPTH, "slot index");
        // SAFETY: the region starts 128-byte aligned inside the live,
        // never unmapped area (`Area::small_region`) and begins with
        // `SMALL_DEPTH` u64 counters (`SMALL_DEPTH * 8 <= SMALL_LINES_AT`),
        // zero-initialised (a valid AtomicU64) and accessed only through
        // atomics.
        unsafe { &*(self.region(m) as *const AtomicU64).add(j) }
    }

    /// The header of member `m`'s slot `j`, at the start of its line.
    #[inline]
    fn hdr(&self, m: usize, j: usize) -> &'static Hdr {
        assert!(j < SMALL_DEPTH, "slot index");
        // SAFETY: line `j` lies inside the region (`SMALL_LINES_AT +
        // SMALL_DEPTH * SMALL_LINE <= SMALL_REGION`), 64-byte aligned; its
        // header is two AtomicU64s accessed only through atomics.
        unsafe { &*(self.region(m).add(SMALL_LINES_AT + j * SMALL_LINE) as *const Hdr) }
    }

    /// Where member `m`'s slot `j` keeps `len` bytes of data: in its line
    /// after the header up to [`SMALL_TINY`] bytes, else in its block.
    #[inline]
    fn data_ptr(&self, m: usize, j: usize, len: usize) -> *mut u8 {
        assert!(j < SMALL_DEPTH && len <= SMALL_MAX, "slot range");
        let at = if len <= SMALL_TINY {
            SMALL_LINES_AT + j * SMALL_LINE + 16
        } else {
            SMALL_BLOCKS_AT + j * SMALL_MAX
        };
        // SAFETY: `at + len` stays inside the region (either the line's
        // 48 data bytes or the slot's block of `SMALL_MAX`).
        unsafe { self.region(m).add(at) }
    }

    /// `len` bytes, from `off`, of the data member `m` posted in slot
    /// `j` (a piece of `wlen` bytes).
    ///
    /// # Safety
    ///
    /// The slot holds the posted data of the operation the caller reads
    /// (its `seq` seen with acquire) and the caller has not acknowledged
    /// it yet, so its owner does not write it meanwhile.
    unsafe fn data(
        &self,
        m: usize,
        j: usize,
        wlen: usize,
        off: usize,
        len: usize,
    ) -> &'static [u8] {
        assert!(off + len <= wlen, "inline slot range");
        // SAFETY: in range (asserted, and `data_ptr` holds `wlen` bytes);
        // not written while read (the caller's promise).
        unsafe { std::slice::from_raw_parts(self.data_ptr(m, j, wlen).add(off), len) }
    }
}

/// Zeroes this process's region of channel `ch` (a derived team claiming
/// it, before its members exchange their set-up records).
pub(crate) fn reset(ch: usize, local: usize) {
    if let Some(a) = area::area() {
        let p = a.small_region(ch, local);
        // SAFETY: the acknowledgements and lines of this process's own
        // region (`SMALL_BLOCKS_AT <= SMALL_REGION` bytes of the live
        // area; the blocks need no reset: only a posted sequence makes
        // them read); no member of the channel's previous team uses it
        // any more (tm_destroy), and the new team's members do not look at
        // it before the exchange that follows.
        unsafe { std::ptr::write_bytes(p, 0, SMALL_BLOCKS_AT) };
    }
}

/// What one small operation does.
#[derive(Clone)]
pub(crate) enum Pat {
    /// `root` writes the data; every other member reads all of it.
    Bcast { root: usize },
    /// `root` writes `n` blocks of `nb`; member `i` reads block `i`.
    Scatter { root: usize, nb: usize },
    /// Every member writes a block of `nb`; `root` reads them all.
    Gather { root: usize, nb: usize },
    /// Every member writes its vector; `root` (`Some`) or every member
    /// (`None`) combines them in rank order.
    Reduce {
        root: Option<usize>,
        dt: Dt,
        dt_sz: usize,
        op: ReduceOp,
    },
    /// Every member writes a block of `nb`; every member reads them all.
    GatherAll { nb: usize },
    /// Every member writes `n` blocks of `nb`; member `i` reads block `i`
    /// of each.
    Exchange { nb: usize },
}

impl Pat {
    /// The writer, if one member writes alone.
    fn sole_writer(&self) -> Option<usize> {
        match self {
            Pat::Bcast { root } | Pat::Scatter { root, .. } => Some(*root),
            _ => None,
        }
    }

    fn writes(&self, me: usize) -> bool {
        self.sole_writer().is_none_or(|w| w == me)
    }

    fn reads(&self, me: usize) -> bool {
        match self {
            Pat::Bcast { root } | Pat::Scatter { root, .. } => *root != me,
            Pat::Gather { root, .. } => *root == me,
            Pat::Reduce { root, .. } => root.is_none_or(|r| r == me),
            Pat::GatherAll { .. } | Pat::Exchange { .. } => true,
        }
    }

    /// Bytes per piece: a slot, or for a reduction the most whole
    /// elements a slot holds (an element never straddles two pieces).
    fn piece(&self) -> usize {
        match self {
            Pat::Reduce { dt_sz, .. } => SMALL_MAX / dt_sz * dt_sz,
            _ => SMALL_MAX,
        }
    }

    /// The signature of the operation: its kind and single-valued
    /// arguments, packed: kind (3 bits), sync mode (4), the root (20, all
    /// ones for none), for reductions the type and the opcode (the
    /// position of their bit, 3 and 5) and the element size (11, at most
    /// `SMALL_MAX`), and the writers' data length `wlen` (18: exact below
    /// 256 KiB, folded above). Scatter, gather and exchange block sizes
    /// follow from `wlen` and the team size.
    fn sig(&self, wlen: usize, mode: &SyncMode) -> u64 {
        const ROOT: u64 = (1 << 20) - 1;
        let (kind, root, red) = match self {
            Pat::Bcast { root } => (1, *root as u64, 0),
            Pat::Scatter { root, .. } => (2, *root as u64, 0),
            Pat::Gather { root, .. } => (3, *root as u64, 0),
            Pat::Reduce {
                root,
                dt,
                dt_sz,
                op,
                ..
            } => (
                4,
                root.map_or(ROOT, |r| r as u64),
                u64::from((*dt as u64).trailing_zeros() & 7)
                    | u64::from((op.op() as u64).trailing_zeros() & 31) << 3
                    | (*dt_sz as u64 & 0x7ff) << 8,
            ),
            Pat::GatherAll { .. } => (5, ROOT, 0),
            Pat::Exchange { .. } => (6, ROOT, 0),
        };
        let w = wlen as u64;
        let packed = kind
            | (mode.word & 15) << 3
            | (root & ROOT) << 7
            | red << 27
            | ((w ^ w >> 18) & 0x3ffff) << 46;
        // A SINGLE call's address lists, which must agree on every member
        // too (engine::with_sig_extra), folded in when there are some.
        match crate::engine::sig_extra() {
            0 => packed,
            extra => packed ^ crate::engine::hash_id(&[extra]),
        }
    }
}

/// Polls until `cond` holds (the shared-memory collectives' one wait,
/// [`crate::area::wait_until`]).
pub(super) fn wait(mut cond: impl FnMut() -> bool) {
    if cond() {
        return;
    }
    let rt = Runtime::get().expect("collectives run after client init");
    crate::area::wait_until(rt, cond);
}

/// Whether an operation over `t` goes through the inline slots: a
/// channel, more than one member, and a writer's input
/// of `wlen <= SMALL_MAX` bytes, or more (in pieces of a slot) where the
/// chunked path (`crate::shm::data`) is not available and an element of
/// `unit` bytes (a reduction's; 1 otherwise) fits a slot. The same answer
/// on every member: the arguments are single-valued.
pub(crate) fn qualifies(t: &TeamInfo, _mode: &SyncMode, wlen: usize, unit: usize) -> bool {
    if t.size() < 2 || t.shm_team().is_none() {
        return false;
    }
    wlen <= SMALL_MAX || (unit <= SMALL_MAX && !super::order::eligible(t))
}

/// Runs a small operation over `t` ([`qualifies`]). A writer's input is
/// `input`, or if `None` its `dst` (in place); a reader's output is `dst`
/// (of the length the pattern gives).
///
/// `OUT_ALLSYNC`: the key of the closing barrier is reserved first, and
/// the member enters it once its own part is done (as on every path).
pub(crate) fn start<'a>(
    t: &Arc<TeamInfo>,
    mode: &SyncMode,
    pat: Pat,
    wlen: usize,
    input: Option<&[u8]>,
    dst: Option<&'a mut [u8]>,
) -> CollHandle<'a> {
    let team = t.shm_team().expect("qualifies");
    let out = crate::am::out_key(t, *mode);
    if wlen <= pat.piece() {
        return crate::am::fin(one(team, mode, pat, wlen, input, dst), out);
    }
    crate::am::fin(run(team, mode, pat, wlen, input, dst), out)
}

/// An operation of one piece over `team` (every writer's input at most a
/// slot; a writer's input is `input`, or if `None` its `dst`; a reader's
/// output is `dst`; `OUT_ALLSYNC`'s closing barrier is the caller's to
/// add, as [`start`] does): [`start`]'s most frequent case, without
/// [`run`]'s loop and staging. Inlined where the pattern is
/// known (the small broadcast), whose dispatch then folds away: each
/// instruction counts at these operations' rate (PERFORMANCE.md,
/// "Collectives").
#[inline(always)]
pub(crate) fn one<'a>(
    team: &Arc<ShmTeam>,
    mode: &SyncMode,
    pat: Pat,
    wlen: usize,
    input: Option<&[u8]>,
    dst: Option<&'a mut [u8]>,
) -> CollHandle<'a> {
    let st = &team.small;
    let me = st.me;
    let (reads, writes) = (pat.reads(me), pat.writes(me));
    let sig = pat.sig(wlen, mode);
    let s = st.next_op();
    if !reads {
        // A reader needs no such wait (see `run`).
        st.pass(s, true);
    }
    if writes {
        let data = input.or(dst.as_deref()).expect("a writer has an input");
        assert_eq!(data.len(), wlen, "writer input length");
        st.wait_free((s % DEPTH) as usize, s.saturating_sub(DEPTH));
        // SAFETY: every member acknowledged the slot's previous operation
        // (`wait_free`); this thread initiates over the team.
        unsafe { st.post(s, data, sig) };
    }
    if !reads {
        return CollHandle::INVALID;
    }
    let dst = dst.expect("a reader has an output");
    let r = Read {
        s,
        data_at: primordial(st).then(super::order::started),
        sig,
        off: 0,
        len: wlen,
        pat,
    };
    if r.now(st, dst, is_blocking()) {
        return CollHandle::INVALID;
    }
    r.register(team.clone(), dst)
}

fn run<'a>(
    team: &Arc<ShmTeam>,
    mode: &SyncMode,
    pat: Pat,
    wlen: usize,
    input: Option<&[u8]>,
    mut dst: Option<&'a mut [u8]>,
) -> CollHandle<'a> {
    let st = &team.small;
    let me = st.me;
    let (reads, writes) = (pat.reads(me), pat.writes(me));
    let unit = pat.piece();
    let pieces = wlen.div_ceil(unit).max(1);
    let sig = pat.sig(wlen, mode);
    let blocking = is_blocking();
    // On the team that also has the chunked path: how many of its
    // operations this member has started, for the size check in `ready`.
    let data_at = primordial(st).then(super::order::started);
    // Several pieces, not waited for in place: each is read into one
    // staging buffer under the queue's lock (now if there, else by the
    // hook), and the handle completes with the last.
    let staged = (reads && pieces > 1 && !blocking).then(|| {
        let len = dst.as_ref().expect("a reader has an output").len();
        (Completion::new(pieces, None), Staging::new(len))
    });
    for i in 0..pieces {
        let s = st.next_op();
        let (off, len) = (i * unit, unit.min(wlen - i * unit));
        if !reads {
            // A reader needs no such wait: its operation cannot be posted
            // before it acknowledged the previous one.
            st.pass(s, true);
        }
        if writes {
            let data = input.or(dst.as_deref()).expect("a writer has an input");
            assert_eq!(data.len(), wlen, "writer input length");
            st.wait_free((s % DEPTH) as usize, s.saturating_sub(DEPTH));
            // SAFETY: every member acknowledged the slot's previous
            // operation (`wait_free`); this thread initiates over the team.
            unsafe { st.post(s, &data[off..off + len], sig) };
        }
        if !reads {
            continue;
        }
        let r = Read {
            s,
            data_at,
            sig,
            off,
            len,
            pat: pat.clone(),
        };
        if let Some((c, staging)) = &staged {
            push(Pending {
                team: team.clone(),
                read: r,
                staging: staging.clone(),
                c: c.clone(),
            });
            progress();
            continue;
        }
        if !r.now(
            st,
            dst.as_deref_mut().expect("a reader has an output"),
            blocking,
        ) {
            // One piece, not there at a non-blocking initiation: the rare
            // path.
            let dst = dst.take().expect("a reader has an output");
            return r.register(team.clone(), dst);
        }
    }
    match (staged, dst) {
        (Some((c, staging)), Some(d)) => CollHandle::pending_into(c, staging, d).shm_poke(),
        _ => CollHandle::INVALID,
    }
}

/// A small operation whose numbers were reserved at initiation and whose
/// pieces start later, each when it can without waiting (the stages of
/// the hierarchical collectives, `crate::hier`, started by the progress
/// hook). Its signature is computed at reservation, in the initiating
/// call's context.
pub(crate) struct Reserved {
    team: Arc<ShmTeam>,
    pat: Pat,
    wlen: usize,
    sig: u64,
    /// The first of its `pieces` consecutive operation numbers.
    first: u64,
    pieces: usize,
    /// Pieces started so far.
    next: usize,
    data_at: Option<u64>,
}

/// Reserves the operation numbers of a small operation over `t`
/// ([`qualifies`]), in call order as [`start`] takes them, for
/// [`Reserved::try_start`] to use later. No `OUT_ALLSYNC` (a stage).
pub(crate) fn reserve(t: &TeamInfo, mode: &SyncMode, pat: Pat, wlen: usize) -> Reserved {
    let team = t.shm_team().expect("qualifies").clone();
    let st = &team.small;
    let pieces = wlen.div_ceil(pat.piece()).max(1);
    // One thread at a time initiates over a team: not a read-modify-write.
    let first = st.started.load(Ordering::Relaxed) + 1;
    st.started
        .store(first + pieces as u64 - 1, Ordering::Relaxed);
    let sig = pat.sig(wlen, mode);
    let data_at = primordial(st).then(super::order::started);
    Reserved {
        team,
        pat,
        wlen,
        sig,
        first,
        pieces,
        next: 0,
        data_at,
    }
}

impl Reserved {
    /// How many pieces (and reads, for a reader) the operation has.
    pub(crate) fn pieces(&self) -> usize {
        self.pieces
    }

    /// Whether this member reads in the operation.
    pub(crate) fn reads(&self) -> bool {
        self.pat.reads(self.team.small.me)
    }

    /// Starts the pieces not started yet, in order, as far as each can
    /// start without waiting: a writer's once every member consumed its
    /// slot's previous operation, a non-reader's once its own previous
    /// operation in the slot is consumed. A reader's piece is registered
    /// (the progress hook reads it into `out`'s staging buffer, of the
    /// output's length, and marks `out`'s completion, which counts one
    /// part per piece). `input` is a writer's data (`wlen` bytes). Whether
    /// every piece has started; never waits (it runs in the progress hook).
    pub(crate) fn try_start(
        &mut self,
        input: Option<&[u8]>,
        out: Option<(&Arc<Completion>, &Arc<Staging>)>,
    ) -> bool {
        let st = &self.team.small;
        let me = st.me;
        let (reads, writes) = (self.pat.reads(me), self.pat.writes(me));
        let unit = self.pat.piece();
        let mut registered = false;
        while self.next < self.pieces {
            let i = self.next;
            let s = self.first + i as u64;
            let j = (s % DEPTH) as usize;
            let prev = s.saturating_sub(DEPTH);
            let (off, len) = (i * unit, unit.min(self.wlen - i * unit));
            // As in `run`, without the waits: a non-reader's previous
            // operation in the slot consumed, and a writer's slot free
            // everywhere; else the piece starts on a later call.
            if writes && !st.try_free(j, prev) {
                break;
            }
            if !reads && !st.pass(s, false) {
                break;
            }
            if writes {
                let data = input.expect("a writer has an input");
                assert_eq!(data.len(), self.wlen, "writer input length");
                // SAFETY: every member acknowledged the slot's previous
                // operation (`try_free`); one piece at a time: the stage
                // is advanced under the hierarchy's queue lock or by its
                // initiating call, never both.
                unsafe { st.post(s, &data[off..off + len], self.sig) };
            }
            if reads {
                let (c, staging) = out.expect("a reader has an output");
                push(Pending {
                    team: self.team.clone(),
                    read: Read {
                        s,
                        data_at: self.data_at,
                        sig: self.sig,
                        off,
                        len,
                        pat: self.pat.clone(),
                    },
                    staging: staging.clone(),
                    c: c.clone(),
                });
                registered = true;
            }
            self.next += 1;
        }
        if registered {
            progress();
        }
        self.next == self.pieces
    }
}

/// Operations a writer whose slot is still in use waits for at once.
const BATCH: usize = 8;

/// Lines of a sole writer fetched ahead by a reader.
pub(super) const PREFETCH: u64 = 2;

/// Asks the cache for the line at `p` (a hint: no effect on results).
#[inline]
pub(super) fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults nor changes memory; `p` points into
    // the mapped area anyway.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Asks the cache for the line at `p` in a state this core may write
/// (a hint: no effect on results).
#[inline]
fn prefetch_write(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHW never faults nor changes memory (on processors
    // without it, it is a no-op); `p` points into the mapped area anyway.
    unsafe {
        std::arch::asm!("prefetchw [{0}]", in(reg) p, options(nostack, preserves_flags, readonly));
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Whether `st` is the primordial team's view on a job that is one
/// neighbourhood (the team that also has the chunked path).
fn primordial(st: &SmallTeam) -> bool {
    st.primordial
}

/// The primordial team's small operations, when it has the chunked path
/// too.
fn primordial_team() -> Option<&'static SmallTeam> {
    crate::team::primordial_shm()
        .map(|s| &s.small)
        .filter(|st| primordial(st))
}

/// Small operations this rank has started over the primordial team (0
/// where it has no chunked path).
pub(crate) fn primordial_started() -> u64 {
    primordial_team().map_or(0, |st| st.started.load(Ordering::Relaxed))
}

/// Whether member `m` of the primordial team has written its slot for
/// small operation `s` (or a later one).
pub(crate) fn primordial_wrote(m: usize, s: u64) -> bool {
    primordial_team().is_some_and(|st| {
        m < st.n() && st.hdr(m, (s % DEPTH) as usize).seq.load(Ordering::Acquire) >= s
    })
}
