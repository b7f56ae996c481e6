//! Data collectives through shared memory: broadcast, scatter, gather,
//! gather-all, exchange, reduce-to-one and reduce-to-all (built-in
//! operators) over the primordial team when every rank shares one neighbourhood (the
//! whole job on smp), instead of Active Messages.
//!
//! # Buffers and counters
//!
//! Each rank has [`SLOTS`] chunk slots of [`CHUNK`] bytes in the
//! neighbourhood's area and a control slot with its counters
//! (`crate::area::DataCtl`). Data operations are numbered `1, 2, ...` in
//! the order the rank calls them (every member makes the same calls in the
//! same order, so the numbers agree); a payload travels in chunks of at
//! most `CHUNK` bytes, chunk `i` in slot `i % SLOTS`, so a writer fills
//! one slot while the readers empty the ones before (pipelining large
//! payloads: a reader copies chunk `i` out while the writer copies chunk
//! `i + 1` in).
//!
//! - A writer (the root of a broadcast or scatter; every member of a
//!   gather, reduction, gather-all or exchange; each writes its whole
//!   input) copies
//!   chunk `i` of operation `k` into its buffer, then stores `posted =
//!   (k << 20) | (i + 1)` with release.
//! - A reader waits for `posted >= (k << 20) | (i + 1)` (acquire), copies
//!   or combines the chunk out, then stores its own `done = (k << 20) |
//!   (i + 1)` (release); `(k + 1) << 20` once it is through with `k`.
//! - Before writing chunk `i >= SLOTS` a writer waits until every member
//!   that reads its buffers in this operation ([`Readers`]: the others for
//!   a broadcast or scatter root, the root for the other members of a
//!   gather or reduce-to-one, everyone, itself included, for the rest)
//!   has `done >= (k << 20) | (i + 1 - SLOTS)` (chunk `i - SLOTS`, the
//!   previous content of that slot, consumed); before chunks `0..SLOTS`,
//!   until every member is through with the last operation that wrote its
//!   buffers.
//!   Waiting for a member that does not read would deadlock: it may be
//!   writing, waiting for this rank, and its `done` does not move
//!   meanwhile.
//!
//! Counters only grow (at most 2^20 chunks of 16 KiB: the 4 GiB limit of a
//! collective is 2^18), and a rank finishes its operations in order: its
//! pending operations form one queue, which the layer's progress hook (and
//! every test or wait of a handle of this kind) advances from the front.
//! A rank blocked anywhere polls, and so runs the hook, so a writer
//! waiting for readers never waits for a rank that is itself waiting for
//! it. Writers wait in the initiation call (the broadcast root for every
//! chunk but the last `SLOTS`; a reduction's members likewise); readers
//! never block at initiation, except in a blocking call.
//!
//! # Reduce-scatter
//!
//! Flat, a reduce-to-all has every member read and combine every
//! member's whole vector (`n` vectors read per member, `n^2` per
//! operation) and a reduce-to-one's root reads all `n`: the cost grows
//! with the rank count, and on a many-core node it is bound by memory
//! bandwidth. From [`RS_MIN_RANKS`](reduce_scatter::RS_MIN_RANKS) members and [`RS_MIN_BYTES`](reduce_scatter::RS_MIN_BYTES) bytes
//! ([`reduce_scatter()`]: single-valued arguments only, so every member
//! chooses the same; `GEX_COLL_REDUCE_SCATTER` forces either way, and
//! the choice is folded into the signature) a reduce-to-all goes by
//! reduce-scatter instead, through the same chunks and counters (a
//! reduce-to-one only when forced, see below):
//!
//! - every member writes its whole input, chunk by chunk, as above;
//! - each chunk is split into `n` shares ([`share`](reduce_scatter::share): runs of whole
//!   elements filling 64 bytes, dealt out as evenly as possible in member
//!   order; an element never straddles two shares or two chunks; a short
//!   last chunk leaves some members an empty share); once every member
//!   has posted chunk `i`, member `m` combines share `m` of chunk `i` of
//!   every member's input, in rank order with the flat path's own call
//!   (so the same bits), into its output, copies the result over its own
//!   input's share `m` in its slot (only `m` reads that share of the
//!   inputs) and stores its `red = (k << 20) | (i + 1)` (release);
//! - a member that gathers (every member of a reduce-to-all, the root of
//!   a reduce-to-one) copies share `p` of chunk `i` out of member `p`'s
//!   slot once every member's `red` covers chunk `i`, then stores its
//!   `done` for chunk `i`; a member that does not gather (the other
//!   members of a reduce-to-one, which reduce into a chunk-sized scratch
//!   buffer) stores `done` once its share is reduced.
//!
//! A member reduces ahead of its gathering (up to [`SLOTS`] chunks), so
//! every member works on every chunk at once: about `2 x nbytes` read per
//! member instead of `n x nbytes`. The slot protocol is unchanged: every
//! member reads every member's slots ([`Readers::Everyone`]), and
//! `done` for chunk `i` everywhere means every input share of it was
//! reduced and every reduced share copied, so the writer's wait before
//! reusing the slot is the flat path's. Reductions and gathers of an
//! entry depend only on `posted` and `red` of the same operation, which
//! the members store in their initiation calls and hooks; so the
//! argument above (every waiting rank polls, and its queue advances)
//! still holds. Below the cut-over (16 KiB, one full chunk, any rank
//! count) the flat path stays: where it was measured (2 cores, 2 to 8
//! ranks, the cores otherwise quiet) reduce-scatter was 1.13 to 2.2 times
//! as fast from 16 KiB to 1 MiB, the gain growing with rank count and
//! size, 0.99 to 1.35 at 8 KiB and up to 1.75 times slower at 2 KiB:
//! small vectors are in cache, and its second step (every member waits
//! for every member's share) costs more than the reads it saves. Where
//! ranks wait for cores, that second step is a second hand-off between
//! processes, and reduce-scatter loses more often (PERFORMANCE.md,
//! "Collectives", has the figures).
//!
//! A reduce-to-one stays flat unless forced: reduce-scatter spreads the
//! root's `n x nbytes` of reading over the members (about `nbytes`
//! each, plus the root's gather), which shortens the critical path only
//! where members have cores of their own; on the 2 cores measured it
//! added work and synchronisation, and was 0.65 to 0.98 times as fast
//! from 16 KiB to 1 MiB over 2 to 8 ranks. A node with a core per rank
//! may well favour it; it is implemented and tested (forced) for that.
//!
//! # Without the queue
//!
//! When every earlier operation is finished here (the queue is empty;
//! one thread at a time initiates over the team and only initiations
//! queue, so the operation stays at the front), a blocking broadcast or
//! scatter reader consumes every chunk in its initiation call, waiting
//! in place, and a writer that reads nothing (the root of a broadcast or
//! scatter, a non-root of a gather or of a flat reduce-to-one) stores
//! its `done` itself once written: no queue entry, completion or handle,
//! and no lock but the one that numbers the operation. Waits look at the
//! counters several times between polls and yield after 20 us in vain
//! (the member waited for has probably lost its core; on a loaded
//! machine, spinning for 2000 polls made each operation cost as long).
//!
//! # Output
//!
//! A reader of a non-blocking call consumes into a staging buffer, which
//! the handle copies into the caller's buffer at completion: the hook may
//! consume while nobody holds the handle, and a handle may be forgotten.
//! A blocking call (`crate::shm::small::blocking`) waits before its borrow
//! of the output ends, so its reader consumes straight into the caller's
//! buffer: one copy out of shared memory, no staging buffer to allocate,
//! zero and copy again.
//!
//! # Single copy
//!
//! A broadcast or scatter root whose call is blocking, with at least
//! [`SINGLE_COPY_MIN`] bytes per reader, does not copy through its
//! buffers: it publishes the operation's number and the address of its
//! input in its control slot ([`offer`]), posts every chunk at once, makes
//! its own copy, and waits until every other member has read. Each reader
//! sees the offer (the operation number, written before `posted`) and
//! copies its part straight out of the root's memory with
//! `process_vm_readv`. The address is only ever handed to the kernel,
//! which checks it against the root's mappings: a forged one reads other
//! bytes of the root's process or fails (fatal, naming the root), and the
//! length is the reader's own. Set-up probes the call between every pair
//! of neighbours (each reads its successor's probe word) and every rank
//! agrees: where a seccomp filter or a ptrace policy refuses it, the
//! two-copy path is the only one.
//!
//! # Checks
//!
//! Every writer publishes the signature of its operation (kind, root,
//! size, type, operator, sync mode) before its first chunk; each reader
//! compares it with its own and ends the job with a message if they
//! differ. Members that disagree on the root wait for a rank that never
//! writes: that is not detected.
//!
//! Nothing arriving from another rank is used as an address in this
//! process or as a length: every length is the reader's own (the single
//! copy's address is the other process's, and only the kernel uses it).
//!
//! Part of the shared-memory data mechanism (`crate::shm`); uses the
//! shared area, the engine, the handles, the operators and the registry,
//! `crate::shm::order` (what the two paths share) and `crate::shm::small`
//! (how far the small operations on the primordial team have got).
//!
//!
//! # Members either side of the small collectives' line
//!
//! Members whose sizes lie either side of the small collectives' line (some
//! take the inline slots, others the chunks) would wait on different paths.
//! A reader that waits also looks at the writer's other path and ends the
//! job with a message if the writer went ahead on it (a chunked reader: the
//! writer has written the small operation that follows; a small reader: the
//! writer has posted a chunked operation this rank has not started). In a
//! consistent program a writer finishes an operation's writes in its
//! initiation call before it starts the next, so neither happens; the first
//! path is looked at again after the second, since a writer that just
//! finished there and went on is no mismatch (faults `coll-size-line`,
//! `coll-size-line-rev`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use gex_core::{Completion, Runtime, Staging};
use gex_types::{Dt, Rank};

use crate::area::{self, Area, CHUNK, SLOTS};
use crate::engine::lock;
use crate::handle::CollHandle;
use crate::reduce::{combine, ReduceOp};

mod reduce_scatter;

pub(crate) use super::order::eligible;
use super::order::{is_blocking, set_started, CHUNK_BITS};

use reduce_scatter::{advance_rs, RS_SIG};
pub(crate) use reduce_scatter::{reduce_scatter, set_reduce_scatter};

/// Whether a reduction goes through shared memory: [`eligible`] and a
/// built-in operator (whose elements, of 4 or 8 bytes, never straddle
/// two chunks).
pub(crate) fn reduce_eligible(t: &crate::team::TeamInfo, op: &ReduceOp) -> bool {
    matches!(op, ReduceOp::Builtin(_)) && eligible(t)
}

fn area() -> &'static Area {
    area::area().expect("shared-memory data collectives need the area")
}

pub(super) fn chunks(nbytes: usize) -> u64 {
    nbytes.div_ceil(CHUNK).max(1) as u64
}

pub(super) fn mark(k: u64, chunks: u64) -> u64 {
    (k << CHUNK_BITS) | chunks
}

pub(super) enum Kind {
    /// Data this rank receives from `root` alone: all of it (broadcast),
    /// or block `me` of `nb` bytes (`block: Some(nb)`, scatter).
    Read { root: Rank, block: Option<usize> },
    /// An operation where each of the `n` members writes its input and
    /// reads everyone's.
    All { n: usize, how: How },
    /// An operation this rank only wrote (a broadcast root): done once
    /// every operation before it is.
    Wrote,
    /// A reduction by reduce-scatter (see "Reduce-scatter" above): every
    /// member writes its input, reduces its share of each chunk (`red`:
    /// chunks reduced so far) and, if it `gathers` (every member of a
    /// reduce-to-all, the root of a reduce-to-one), copies the others'
    /// reduced shares.
    Rs {
        n: usize,
        dt: Dt,
        dt_sz: usize,
        op: ReduceOp,
        red: u64,
        gathers: bool,
    },
}

/// Where a reader's output goes (see "Output" above).
enum Output {
    /// A staging buffer the handle copies out of at completion.
    Staged(Arc<Staging>),
    /// The caller's buffer (start, length), borrowed by a blocking call
    /// that waits for the entry's completion before the borrow ends.
    InPlace(*mut u8, usize),
}

impl Output {
    /// For a reader whose caller's buffer is `dst`, of `len` bytes of
    /// output: in place when the call is blocking.
    fn for_call(dst: &mut [u8], len: usize) -> Output {
        if is_blocking() {
            assert_eq!(dst.len(), len, "output length");
            Output::InPlace(dst.as_mut_ptr(), len)
        } else {
            Output::Staged(Staging::new(len))
        }
    }

    /// Another reference to the same output (the queue entry's).
    fn dup(&self) -> Output {
        match self {
            Output::Staged(s) => Output::Staged(s.clone()),
            Output::InPlace(p, n) => Output::InPlace(*p, *n),
        }
    }

    fn ptr(&self) -> *mut u8 {
        match self {
            Output::Staged(s) => s.ptr(),
            Output::InPlace(p, _) => *p,
        }
    }

    fn len(&self) -> usize {
        match self {
            Output::Staged(s) => s.len(),
            Output::InPlace(_, n) => *n,
        }
    }

    /// The handle: pending on `c`, with `dst` receiving the output.
    fn handle<'a>(self, c: Arc<Completion>, dst: &'a mut [u8]) -> CollHandle<'a> {
        match self {
            Output::Staged(s) => CollHandle::pending_into(c, s, dst),
            Output::InPlace(..) => CollHandle::pending_in_place(c, dst),
        }
        .shm_poke()
    }
}

pub(super) struct Entry {
    k: u64,
    nbytes: usize,
    got: u64,
    /// Small operations this rank had started over the team when this
    /// one started (`crate::shm::small::primordial_started`).
    small_at: u64,
    sig: u64,
    kind: Kind,
    out: Option<Output>,
    c: Option<Arc<Completion>>,
}

// SAFETY: the one field that is not `Send` is `Output::InPlace`'s pointer
// to a caller's buffer, which a blocking call lends until the entry's
// completion (the handle waits for it, even when dropped); only the
// thread that consumes the entry, under `LOCAL`'s lock, writes it.
unsafe impl Send for Entry {}

struct Local {
    /// Data operations started.
    k: u64,
    /// The last operation that wrote this rank's buffers (0: none).
    last_write: u64,
    /// Operations not finished here, oldest first.
    queue: VecDeque<Entry>,
}

static LOCAL: Mutex<Local> = Mutex::new(Local {
    k: 0,
    last_write: 0,
    queue: VecDeque::new(),
});

/// `LOCAL.queue.len()`, read without the lock.
static QUEUED: AtomicUsize = AtomicUsize::new(0);

pub(super) fn check_sig(a: &Area, k: u64, sig: u64, writer: usize) {
    let got = a.data_ctl(writer).sig.load(Ordering::Relaxed);
    if got != sig {
        gex_core::fatal(&format!(
            "gex-coll: collective mismatch in shared-memory data operation {}: rank {writer} \
             called a different collective or passed different single-valued arguments \
             (signature {got:#x}, this rank {sig:#x})",
            k
        ));
    }
}

pub(super) fn me() -> usize {
    Runtime::get()
        .expect("collectives run after client init")
        .jobrank() as usize
}

/// The hook's part: advances this rank's queue from the front; returns
/// how many chunks it consumed.
pub(crate) fn progress() -> usize {
    if QUEUED.load(Ordering::Relaxed) == 0 {
        return 0;
    }
    let Ok(mut st) = LOCAL.try_lock() else {
        return 0;
    };
    let a = area();
    let me = me();
    let mine = a.data_ctl(me);
    let mut moved = 0;
    while let Some(e) = st.queue.front_mut() {
        let total = chunks(e.nbytes);
        if matches!(e.kind, Kind::Rs { .. }) {
            moved += advance_rs(a, e) as usize;
        }
        while e.got < total && !matches!(e.kind, Kind::Rs { .. }) {
            if !ready(a, e) {
                break;
            }
            let n = consume(a, e);
            e.got += n;
            moved += n as usize;
            // Release: the reads of the chunk happen before the writer may
            // overwrite it.
            mine.done.store(mark(e.k, e.got), Ordering::Release);
        }
        if e.got < total && !matches!(e.kind, Kind::Wrote) {
            break;
        }
        let e = st.queue.pop_front().expect("front exists");
        mine.done.store(mark(e.k + 1, 0), Ordering::Release);
        if let Some(c) = e.c {
            c.done();
        }
    }
    QUEUED.store(st.queue.len(), Ordering::Relaxed);
    moved
}

/// What an [`Kind::All`] operation makes of everyone's input.
pub(crate) enum How {
    /// Reduction to all (a built-in operator): the result has the
    /// input's length.
    Reduce { dt: Dt, dt_sz: usize, op: ReduceOp },
    /// Gather-all: member `m`'s input lands at `m * len`.
    GatherAll,
    /// Exchange of blocks of `nb` bytes: block `me` of member `m`'s input
    /// lands as block `m`.
    Exchange { nb: usize },
}

/// Whether chunk `e.got` of `e` can be consumed: posted by its writer (a
/// broadcast's root, every member of a reduction).
fn ready(a: &Area, e: &Entry) -> bool {
    let want = mark(e.k, e.got + 1);
    let posted = |m: usize| {
        let ok = a.data_ctl(m).posted.load(Ordering::Acquire) >= want;
        if !ok {
            check_skipped(a, e.small_at, e.k, m, want);
        }
        ok
    };
    match &e.kind {
        Kind::Read { root, .. } => posted(*root as usize),
        Kind::All { n, .. } => (0..*n).all(posted),
        Kind::Wrote | Kind::Rs { .. } => false,
    }
}

/// Size disagreement across the inline line: writer `m`, which has not
/// posted this operation, has written the small operation that follows
/// it here (`small_at + 1`). In a consistent program it writes all of
/// this operation, in its initiation call, before it starts any later
/// one; so it took the small path (a writer's input up to 1 KiB) for
/// this call, which would otherwise wait for it forever.
pub(super) fn check_skipped(a: &Area, small_at: u64, k: u64, m: usize, want: u64) {
    // The count is looked at again after the slot (which the writer
    // stores after it): a writer that posted this operation and went on
    // between the two loads is no mismatch.
    if crate::shm::small::primordial_wrote(m, small_at + 1)
        && a.data_ctl(m).posted.load(Ordering::Acquire) < want
    {
        gex_core::fatal(&format!(
            "gex-coll: collective mismatch in shared-memory data operation {}: rank {m} took the \
             small-collective path (at most 1 KiB per writer) where this rank took the chunked \
             one: the members passed different sizes (or a different collective)",
            k
        ));
    }
}

/// Consumes chunk `e.got` (posted: [`ready`]), or the whole operation
/// when its writer offers it in its own memory ([`offer`]); returns how
/// many chunks that was.
fn consume(a: &Area, e: &mut Entry) -> u64 {
    if let Kind::Read { root, block } = e.kind {
        let r = root as usize;
        let ctl = a.data_ctl(r);
        // Written before `posted`, which `ready` loaded with acquire.
        if ctl.cma_op.load(Ordering::Relaxed) == e.k {
            check_sig(a, e.k, e.sig, r);
            let output = e.out.as_ref().expect("a reader has an output");
            let (from, len) = match block {
                None => (0, e.nbytes),
                Some(nb) => (me() * nb, nb),
            };
            assert_eq!(len, output.len(), "output length");
            let pid = a
                .cma_pid(r)
                .expect("offered only where single-copy reads work");
            let at = ctl
                .cma_addr
                .load(Ordering::Relaxed)
                .wrapping_add(from as u64);
            // SAFETY: the output holds `len` bytes (asserted), written by
            // this queue entry alone until its completion (see `Output`).
            // The address is only used by the kernel, in the root's
            // process: a wrong one reads other bytes of that process or
            // fails, and the length is this rank's own.
            if let Err(err) = unsafe { area::read_process(pid, at, output.ptr(), len) } {
                gex_core::fatal(&format!(
                    "gex-coll: single-copy read of {len} bytes from rank {r} (data operation {}) failed: {err}",
                    e.k
                ));
            }
            return chunks(e.nbytes) - e.got;
        }
    }
    let i = e.got as usize;
    let off = i * CHUNK;
    let len = (e.nbytes - off).min(CHUNK);
    let slot = i % SLOTS;
    let output = e.out.as_ref().expect("a reader has an output");
    // The output's bytes `[at, at + len)`; `at + len` is within its
    // length by each caller's arithmetic (noted there).
    let out = |at: usize, len: usize| {
        assert!(at + len <= output.len(), "output range");
        // SAFETY: in range (asserted); the output is a staging buffer or
        // a blocking caller's buffer (see `Output`), and this queue entry
        // is its only writer until its completion is signalled; the
        // ranges written by one call do not overlap.
        unsafe { std::slice::from_raw_parts_mut(output.ptr().add(at), len) }
    };
    // SAFETY (each buffer read): member `m`'s slot holds `CHUNK >= len`
    // bytes of the mapped area, posted (acquire in `ready`) and not
    // overwritten before this rank's `done` says it was read; nothing
    // else writes it meanwhile.
    let buf = |m: usize| unsafe { std::slice::from_raw_parts(a.data_slot(m, slot), len) };
    match &e.kind {
        Kind::Read { root, block } => {
            let r = *root as usize;
            if i == 0 {
                check_sig(a, e.k, e.sig, r);
            }
            match *block {
                // `off + len <= nbytes`, the staging length.
                None => out(off, len).copy_from_slice(buf(r)),
                Some(nb) => {
                    let me = me();
                    // Block `me` of the root's input, where it meets this
                    // chunk.
                    let lo = (me * nb).max(off);
                    let hi = ((me + 1) * nb).min(off + len);
                    if lo < hi {
                        // `hi - me * nb <= nb`, the staging length.
                        out(lo - me * nb, hi - lo).copy_from_slice(&buf(r)[lo - off..hi - off]);
                    }
                }
            }
        }
        Kind::All { n, how } => {
            let n = *n;
            if i == 0 {
                for m in 0..n {
                    check_sig(a, e.k, e.sig, m);
                }
            }
            match how {
                How::Reduce { dt, dt_sz, op } => {
                    // `off + len <= nbytes`, the staging length.
                    let acc = out(off, len);
                    acc.copy_from_slice(buf(0));
                    // Built-in operators only (`reduce_eligible`), which
                    // commute: `c_m (+) acc` is `acc (+) c_m` bit for bit
                    // (IEEE addition and multiplication commute), so
                    // combining into the accumulator gives the rank-order
                    // result `((c_0 (+) c_1) (+) c_2) ...`.
                    for m in 1..n {
                        combine(*dt, *dt_sz, op, buf(m), acc);
                    }
                }
                How::GatherAll => {
                    for m in 0..n {
                        // `m * nbytes + off + len <= n * nbytes`.
                        out(m * e.nbytes + off, len).copy_from_slice(buf(m));
                    }
                }
                How::Exchange { nb } => {
                    let nb = *nb;
                    let me = me();
                    // Block `me` of each input, where it meets this chunk.
                    let lo = (me * nb).max(off);
                    let hi = ((me + 1) * nb).min(off + len);
                    if lo < hi {
                        for m in 0..n {
                            // `m * nb + (hi - me * nb) <= (m + 1) * nb
                            // <= n * nb`, the staging length.
                            out(m * nb + (lo - me * nb), hi - lo)
                                .copy_from_slice(&buf(m)[lo - off..hi - off]);
                        }
                    }
                }
            }
        }
        Kind::Wrote | Kind::Rs { .. } => unreachable!("consumed by `advance_rs`"),
    }
    1
}

/// Who reads a writer's buffers in one operation.
#[derive(Clone, Copy)]
pub(crate) enum Readers {
    /// Every other member (broadcast and scatter roots).
    Others,
    /// One member (the root of a gather or reduce-to-one, which reads its
    /// own buffers too).
    One(Rank),
    /// Every member, the writer included (gather-all, exchange,
    /// reduce-to-all).
    Everyone,
}

impl Readers {
    fn reads(self, m: usize, me: usize) -> bool {
        match self {
            Readers::Others => m != me,
            Readers::One(r) => m == r as usize,
            Readers::Everyone => true,
        }
    }
}

/// Polls until every member `who` names (of `members`, this rank `me`)
/// has `done >= need` (acquire).
fn wait_done(a: &Area, rt: &Runtime, members: usize, me: usize, who: Readers, need: u64) {
    let done = || {
        (0..members)
            .filter(|&m| who.reads(m, me))
            .all(|m| a.data_ctl(m).done.load(Ordering::Acquire) >= need)
    };
    crate::area::wait_until(rt, done);
}

/// Writes `data` as this rank's part of operation `k`, chunk by chunk,
/// polling while it waits: chunks `0..SLOTS` once every member is through
/// with the last operation that wrote these buffers (whoever read them
/// then), chunk `i >= SLOTS` once this operation's `readers` have consumed
/// chunk `i - SLOTS`. Only the readers: a member that does not read this
/// operation's buffers may itself be writing, and its `done` does not
/// move until it is through.
fn write_all(k: u64, last_write: u64, sig: u64, data: &[u8], members: usize, readers: Readers) {
    let a = area();
    let me = me();
    let mine = a.data_ctl(me);
    let rt = Runtime::get().expect("collectives run after client init");
    let total = chunks(data.len());
    for i in 0..total {
        let (need, who) = if i < SLOTS as u64 {
            if last_write == 0 {
                (0, Readers::Everyone)
            } else {
                (mark(last_write + 1, 0), Readers::Everyone)
            }
        } else {
            (mark(k, i + 1 - SLOTS as u64), readers)
        };
        wait_done(a, rt, members, me, who, need);
        if i == 0 {
            // Every reader is through with the previous operation's
            // signature too.
            mine.sig.store(sig, Ordering::Relaxed);
        }
        let off = i as usize * CHUNK;
        let len = (data.len() - off).min(CHUNK);
        // SAFETY: this rank's slot `i % SLOTS` holds `CHUNK >= len` bytes
        // of the mapped area; every reader is through with its previous
        // content (the acquire loads above), and only this rank writes it.
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.as_ptr().add(off),
                a.data_slot(me, i as usize % SLOTS),
                len,
            )
        };
        // Release: the data (and the signature) before the count.
        mine.posted.store(mark(k, i + 1), Ordering::Release);
    }
}

/// Starts an operation: its number, the last one that wrote this rank's
/// buffers (which becomes this one if `writes`), and whether every
/// earlier operation is finished here (the queue is empty: this one is
/// at the front, and stays there, since one thread at a time initiates
/// over the team and only initiations queue).
fn begin(writes: bool) -> (u64, u64, bool) {
    let mut st = lock(&LOCAL);
    st.k += 1;
    let k = st.k;
    set_started(k);
    let last = st.last_write;
    if writes {
        st.last_write = k;
    }
    (k, last, st.queue.is_empty())
}

/// Finishes operation `k` here without the queue: every earlier one is
/// finished ([`begin`]'s third answer) and this rank's part of `k` is
/// done, so it says so as the queue would.
fn finish_direct(k: u64) {
    // Release: this rank's reads of `k` before the count.
    area()
        .data_ctl(me())
        .done
        .store(mark(k + 1, 0), Ordering::Release);
}

/// Consumes every chunk of `e` in place, waiting for each (polling):
/// a blocking reader whose operation is at the front ([`begin`]), so it
/// needs no queue entry, no completion and no handle.
fn read_direct(e: &mut Entry) {
    let a = area();
    let mine = a.data_ctl(me());
    let rt = Runtime::get().expect("collectives run after client init");
    let total = chunks(e.nbytes);
    while e.got < total {
        crate::area::wait_until(rt, || ready(a, e));
        let n = consume(a, e);
        e.got += n;
        // Release: the reads of the chunk happen before the writer may
        // overwrite it.
        mine.done.store(mark(e.k, e.got), Ordering::Release);
    }
    finish_direct(e.k);
}

fn enqueue(e: Entry) {
    let mut st = lock(&LOCAL);
    st.queue.push_back(e);
    QUEUED.store(st.queue.len(), Ordering::Relaxed);
}

/// A member that only writes: the root of a broadcast or scatter (its
/// whole input), a member other than the root of a gather or
/// reduce-to-one. Returns once the last chunk is written.
pub(crate) fn write_only(sig: u64, data: &[u8], members: usize, readers: Readers) {
    let (k, last, front) = begin(true);
    write_all(k, last, sig, data, members, readers);
    if front {
        finish_direct(k);
        return;
    }
    enqueue(Entry {
        k,
        nbytes: data.len(),
        got: 0,
        small_at: crate::shm::small::primordial_started(),
        sig,
        kind: Kind::Wrote,
        out: None,
        c: None,
    });
    progress();
}

/// Bytes a reader takes from a broadcast or scatter root at which the
/// root offers its data in place (single copy) rather than through its
/// buffers (two copies), when the call is blocking on the root and
/// single-copy reads work between the neighbourhood's processes.
pub(crate) const SINGLE_COPY_MIN: usize = 32 << 10;

/// Whether a root's `per_reader` bytes go by [`offer`].
pub(crate) fn single_copy(per_reader: usize) -> bool {
    per_reader >= SINGLE_COPY_MIN && is_blocking() && area().cma_pid(0).is_some()
}

/// A broadcast or scatter root whose call is blocking: offers `data` in
/// its own memory (the readers copy their part straight out of it with
/// `process_vm_readv`), runs `then` (the root's own copy) while they
/// read, and returns once every other member has read it: the borrow of
/// `data` ends with the call. One copy per reader instead of two, and
/// the root's copy in parallel with theirs.
pub(crate) fn offer(sig: u64, data: &[u8], members: usize, then: impl FnOnce()) {
    let a = area();
    let me = me();
    let mine = a.data_ctl(me);
    let rt = Runtime::get().expect("collectives run after client init");
    // Its buffers are not written: `last_write` stays.
    let (k, last, front) = begin(false);
    // Every member is through with the last operation that wrote this
    // rank's signature through its buffers (an offer's readers are
    // through with it when `offer` returns).
    if last != 0 {
        wait_done(a, rt, members, me, Readers::Everyone, mark(last + 1, 0));
    }
    let total = chunks(data.len());
    mine.sig.store(sig, Ordering::Relaxed);
    mine.cma_addr.store(data.as_ptr() as u64, Ordering::Relaxed);
    mine.cma_op.store(k, Ordering::Relaxed);
    // Release: the signature, address and operation before the count.
    mine.posted.store(mark(k, total), Ordering::Release);
    then();
    wait_done(a, rt, members, me, Readers::Others, mark(k, total));
    if front {
        finish_direct(k);
        return;
    }
    enqueue(Entry {
        k,
        nbytes: data.len(),
        got: 0,
        small_at: crate::shm::small::primordial_started(),
        sig,
        kind: Kind::Wrote,
        out: None,
        c: None,
    });
    progress();
}

/// A member that reads what `root` writes (`nbytes`): all of it
/// (broadcast), or block `me` of `nb` bytes (`block: Some(nb)`, scatter),
/// into `dst` (see "Output" above).
pub(crate) fn read_one<'a>(
    sig: u64,
    root: Rank,
    nbytes: usize,
    block: Option<usize>,
    dst: &'a mut [u8],
) -> CollHandle<'a> {
    let (k, _, front) = begin(false);
    let out = Output::for_call(dst, block.unwrap_or(nbytes));
    if front && matches!(out, Output::InPlace(..)) {
        // A blocking call at the front: read in place, now.
        read_direct(&mut Entry {
            k,
            nbytes,
            got: 0,
            small_at: crate::shm::small::primordial_started(),
            sig,
            kind: Kind::Read { root, block },
            out: Some(out),
            c: None,
        });
        return CollHandle::INVALID;
    }
    let c = Completion::new(1, None);
    enqueue(Entry {
        k,
        nbytes,
        got: 0,
        small_at: crate::shm::small::primordial_started(),
        sig,
        kind: Kind::Read { root, block },
        out: Some(out.dup()),
        c: Some(c.clone()),
    });
    progress();
    out.handle(c, dst)
}

/// A member that writes `data` (its input) and reads everyone's ([`How`]):
/// every member of a gather-all, exchange or reduce-to-all, the root of a
/// gather or reduce-to-one. The result (the input's length; `members`
/// times it for a gather-all) goes to `dst` (see "Output" above).
pub(crate) fn all<'a>(
    sig: u64,
    data: &[u8],
    members: usize,
    how: How,
    readers: Readers,
    dst: &'a mut [u8],
) -> CollHandle<'a> {
    let len = out_len(data.len(), members, &how);
    let out = Output::for_call(dst, len);
    let c = all_into(sig, data, members, how, readers, out.dup());
    out.handle(c, dst)
}

/// [`all`] for an input that is the output buffer itself (a reduction in
/// place): always staged, since the input is read while chunks of the
/// result arrive.
pub(crate) fn all_in_place<'a>(
    sig: u64,
    members: usize,
    how: How,
    readers: Readers,
    dst: &'a mut [u8],
) -> CollHandle<'a> {
    let out = Output::Staged(Staging::new(out_len(dst.len(), members, &how)));
    let c = all_into(sig, dst, members, how, readers, out.dup());
    out.handle(c, dst)
}

fn out_len(input: usize, members: usize, how: &How) -> usize {
    match how {
        How::GatherAll => input * members,
        How::Reduce { .. } | How::Exchange { .. } => input,
    }
}

fn all_into(
    sig: u64,
    data: &[u8],
    members: usize,
    how: How,
    readers: Readers,
    out: Output,
) -> Arc<Completion> {
    let (kind, sig, readers) = match how {
        How::Reduce { dt, dt_sz, op }
            if reduce_scatter(members, data.len(), matches!(readers, Readers::Everyone)) =>
        {
            (
                Kind::Rs {
                    n: members,
                    dt,
                    dt_sz,
                    op,
                    red: 0,
                    gathers: true,
                },
                sig ^ RS_SIG,
                // Every member reads a share of every member's buffers.
                Readers::Everyone,
            )
        }
        how => (Kind::All { n: members, how }, sig, readers),
    };
    queue_and_write(sig, data, members, kind, readers, out)
}

/// Queues this rank's entry of an operation that writes `data` and reads
/// into `out`, then writes.
fn queue_and_write(
    sig: u64,
    data: &[u8],
    members: usize,
    kind: Kind,
    readers: Readers,
    out: Output,
) -> Arc<Completion> {
    let (k, last, _) = begin(true);
    let c = Completion::new(1, None);
    // Queued before writing: while this rank waits to write a chunk, its
    // hook must be able to consume the chunks the others wrote.
    enqueue(Entry {
        k,
        nbytes: data.len(),
        got: 0,
        small_at: crate::shm::small::primordial_started(),
        sig,
        kind,
        out: Some(out),
        c: Some(c.clone()),
    });
    write_all(k, last, sig, data, members, readers);
    progress();
    c
}

/// A member other than the root of a reduce-to-one of `data` (a
/// built-in operator) over `members` ranks: by reduce-scatter when
/// [`reduce_scatter()`] chooses it (this member reduces its share of each
/// chunk, the root gathers the shares; the handle completes once this
/// member has reduced its last share), otherwise it only writes (the
/// root reads every member's input) and the handle is `INVALID`.
pub(crate) fn reduce_member(
    sig: u64,
    data: &[u8],
    members: usize,
    root: Rank,
    dt: Dt,
    dt_sz: usize,
    op: &ReduceOp,
) -> CollHandle<'static> {
    if !reduce_scatter(members, data.len(), false) {
        write_only(sig, data, members, Readers::One(root));
        return CollHandle::INVALID;
    }
    let kind = Kind::Rs {
        n: members,
        dt,
        dt_sz,
        op: op.clone(),
        red: 0,
        gathers: false,
    };
    // The reduced share of one chunk at a time (then published).
    let out = Output::Staged(Staging::new(data.len().min(CHUNK)));
    let c = queue_and_write(sig ^ RS_SIG, data, members, kind, Readers::Everyone, out);
    CollHandle::pending(c).shm_poke()
}
