//! The Active Message reference path: RMA for peers whose segment is not
//! mapped into this process (and for every peer when forced, to test it).
//!
//! - A put is a train of Long requests landing in the target's segment
//!   (at most `MaxRequestLong` bytes each); each is acknowledged by a Short
//!   reply, and the put is complete when every chunk is.
//! - A get is a train of Short requests; each is answered by a Medium reply
//!   carrying at most `MaxReplyMedium` bytes, which the reply handler copies
//!   to the destination (the caller's buffer, a staging buffer owned by the
//!   event, or the local segment).
//!
//! In-flight operations live in a table (`OPS`, a `gex_core::slots::Slots`) indexed by a slot
//! number with a generation; the requests carry (slot, generation, chunk)
//! and the reply names them back. A reply is untrusted input like any
//! message: one naming a slot not in flight (unknown, stale, or answered
//! already), a chunk out of range or answered twice, a rank the operation
//! was not sent to, or a payload of the wrong length is a fatal error with
//! a message naming the handler, never a memory access. No AM argument is
//! ever turned into a pointer.
//!
//!
//! Details:
//!
//! - A chunk is claimed (an atomic bit) before its data is written, so two
//!   replies for one chunk never both write, and completion is counted only
//!   after the write. The completion starts at the number of chunks; the
//!   last to finish frees the slot.
//! - `IMMEDIATE` is passed on the first chunk only: if refused, nothing has
//!   moved and the call reports a no-op (undoing its NBI tracking); once
//!   accepted, the remaining chunks are sent blocking. An error midway marks
//!   the unsent chunks done, so nothing waits for them.
//! - Where a get's data goes depends on how long the destination lives.
//!   Blocking gets and NBI gets into a slice wait before returning, NBI gets
//!   into the segment are written in place and return at once, NB gets into
//!   a slice are staged: the replies write a `Staging` buffer owned by the
//!   operation, and the event copies it into the slice when a test or wait
//!   sees completion. So no reply ever holds a pointer into memory whose
//!   borrow may have ended, even if the event is leaked.
//! - A blocking put waits for every acknowledgement; an NBI put reports to
//!   the thread's counter; an NB put returns an event pending on its
//!   completion.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use gex_am::{register_internal_handlers, HandlerEntry, Injected, LayerAm};
use gex_conduit::ZeroLen;
use gex_core::internals::*;
use gex_core::slots::Slots;
use gex_core::{Completion, Ep, Lc, Runtime, Staging};
use gex_types::{AmArg, AmIndex, EpIndex, Error, Flags, Rank, Result};

const H_PUT: AmIndex = 1;
const H_PUT_ACK: AmIndex = 2;
const H_GET: AmIndex = 3;
const H_GET_DATA: AmIndex = 4;
const H_MEMSET: AmIndex = 6;
/// Put, get and memset to the segment bound to a created endpoint (an
/// endpoint index other than 0 in the AM arguments): Medium puts whose
/// handler copies into that segment after checking the range against it,
/// as conduits place a Long into the primordial one.
const H_PUT_EP: AmIndex = 40;
const H_GET_EP: AmIndex = 41;
const H_MEMSET_EP: AmIndex = 42;

fn split(v: usize) -> (AmArg, AmArg) {
    let v = v as u64;
    (v as u32 as AmArg, (v >> 32) as u32 as AmArg)
}

fn join(lo: AmArg, hi: AmArg) -> usize {
    (u64::from(lo as u32) | (u64::from(hi as u32) << 32)) as usize
}

/// Where a get's chunks are written.
struct GetDstPtr {
    /// The destination's first byte.
    ptr: *mut u8,
    /// Keeps a staging destination alive as long as the operation.
    _staging: Option<Arc<Staging>>,
}

/// An operation in flight on the reference path: a put or memset (chunks
/// acknowledged) or a get (chunks of data to place).
struct Op {
    /// The rank every chunk went to; only it may answer.
    peer: Rank,
    c: Arc<Completion>,
    /// Number of chunks, and the length of each but the last.
    chunks: usize,
    chunk_len: usize,
    /// Total bytes (a get's chunk lengths are checked against it).
    len: usize,
    /// A get's destination; `None` for puts and memsets.
    dst: Option<GetDstPtr>,
    /// Bit per chunk: answered (or abandoned). A chunk is claimed before
    /// its data is written, so two replies for one chunk never both write.
    claimed: Box<[AtomicU64]>,
    /// Chunks not yet finished; the last to finish frees the slot.
    remaining: AtomicUsize,
}

// SAFETY: `dst.ptr` is written only by reply handlers, each for its own
// claimed chunk (a disjoint range inside `[0, len)`), and only before that
// chunk's `done()`; it stays valid until the completion is observed: it
// points into the staging buffer this op keeps alive, into the local
// segment (mapped for the whole process), or into a caller's buffer whose
// caller blocks until the completion is observed.
unsafe impl Send for Op {}
// SAFETY: as above; every other field is thread-safe.
unsafe impl Sync for Op {}

impl Op {
    fn new(
        peer: Rank,
        c: Arc<Completion>,
        len: usize,
        chunk_len: usize,
        dst: Option<GetDstPtr>,
    ) -> Op {
        let chunks = chunks(len, chunk_len);
        Op {
            peer,
            c,
            chunks,
            chunk_len,
            len,
            dst,
            claimed: (0..chunks.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect(),
            remaining: AtomicUsize::new(chunks),
        }
    }

    /// Bytes of chunk `i`.
    fn chunk_bytes(&self, i: usize) -> usize {
        self.chunk_len.min(self.len - i * self.chunk_len)
    }

    /// Claims chunk `i`; false if it was claimed before.
    fn claim(&self, i: usize) -> bool {
        let bit = 1u64 << (i % 64);
        self.claimed[i / 64].fetch_or(bit, Ordering::AcqRel) & bit == 0
    }
}

/// The operations in flight, by slot (see [`gex_core::slots`]).
static OPS: Slots<Arc<Op>> = Slots::new();

/// A slot in the operation table, as the AM arguments carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot {
    index: u32,
    generation: u32,
}

impl Slot {
    fn args(self, chunk: usize) -> [AmArg; 3] {
        [
            self.index as AmArg,
            self.generation as AmArg,
            chunk as u32 as AmArg,
        ]
    }
}

/// Puts `op` in the table.
fn insert(op: Arc<Op>) -> Slot {
    let (index, generation) = OPS.insert(op);
    Slot { index, generation }
}

/// The operation in `slot`, if that generation is in flight.
fn lookup(slot: Slot) -> Option<Arc<Op>> {
    OPS.get(slot.index, slot.generation)
}

/// Frees `slot` (its operation has no chunk left to finish).
fn remove(slot: Slot) {
    OPS.take(slot.index, slot.generation);
}

/// Finishes chunk `i` of the operation in `slot`: counts it done and frees
/// the slot after the last chunk.
fn finish_chunk(slot: Slot, op: &Op) {
    op.c.done();
    if op.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
        remove(slot);
    }
}

/// Checks a reply against the table: the operation in flight in the slot
/// it names, sent to the replying rank, with the chunk in range and not
/// answered before (claimed now). Anything else is fatal: a reply comes
/// from another process (over a network, possibly a forger), and acting on
/// a wrong one would write where no operation expects data.
fn claim_reply(what: &str, src: Rank, args: &[AmArg]) -> (Slot, Arc<Op>, usize) {
    let slot = Slot {
        index: args[0] as u32,
        generation: args[1] as u32,
    };
    let chunk = args[2] as u32 as usize;
    let Some(op) = lookup(slot) else {
        gex_core::fatal(&format!(
            "{what}: a reply from rank {src} names operation {}.{}, which is not in flight (a forged, stale or duplicated reply)",
            slot.index, slot.generation
        ));
    };
    if op.peer != src {
        gex_core::fatal(&format!(
            "{what}: a reply from rank {src} names operation {}.{}, which was sent to rank {}",
            slot.index, slot.generation, op.peer
        ));
    }
    if chunk >= op.chunks || !op.claim(chunk) {
        gex_core::fatal(&format!(
            "{what}: a reply from rank {src} answers chunk {chunk} of operation {}.{}, which has {} chunks{}",
            slot.index,
            slot.generation,
            op.chunks,
            if chunk < op.chunks { " and was answered already" } else { "" }
        ));
    }
    (slot, op, chunk)
}

/// The layer's right to send to its handlers (set by [`register`]).
static LAYER: OnceLock<LayerAm> = OnceLock::new();

fn layer() -> Result<&'static LayerAm> {
    LAYER.get().ok_or_else(|| {
        Error::not_init(
            "gex-rma: the reference path's handlers are not registered (gex_rma::register)",
        )
    })
}

/// Where `[off, +len)` of this rank's segment is in this process, for a
/// request from `src`: the range comes from the network, so one outside
/// the segment is a fatal error naming the sender, `what` and the range.
fn local_range(what: &str, src: Rank, off: usize, len: usize) -> usize {
    let rt = Runtime::get().expect("an AM arrived, so the client exists");
    let me = rt.jobrank();
    let d = rt
        .segments()
        .expect("RMA AMs only target attached segments")[me as usize];
    let base = d.local_base.expect("the local segment is mapped");
    match d.offset_of(me, off, len, true, ZeroLen::InSegment) {
        Ok(off) => base + off,
        Err(e) => gex_core::fatal(&format!("{what} from rank {src}: {}", e.local())),
    }
}

/// As [`local_range`], in the segment bound to this rank's endpoint
/// `index` (the index comes from the network too: one out of range, not
/// created or without a bound segment is fatal, naming it).
fn local_range_ep(what: &str, src: Rank, index: AmArg, off: usize, len: usize) -> usize {
    let rt = Runtime::get().expect("an AM arrived, so the client exists");
    let me = rt.jobrank();
    let index = index as u32;
    if index == 0 || index as usize >= gex_types::MAX_EPS {
        gex_core::fatal(&format!(
            "{what} from rank {src}: endpoint index {index} is not the index of a created endpoint"
        ));
    }
    let Some(d) = gex_core::epseg::ep_segment(index, me) else {
        gex_core::fatal(&format!(
            "{what} from rank {src}: endpoint {index} of rank {me} has no bound segment (never bound, or destroyed)"
        ));
    };
    let base = d
        .local_base
        .expect("a bound segment is mapped by its owner");
    match d.offset_of(me, off, len, true, ZeroLen::InSegment) {
        Ok(off) => base + off,
        Err(e) => gex_core::fatal(&format!(
            "{what} from rank {src} (endpoint {index}): {}",
            e.local()
        )),
    }
}

/// Registers the reference path's handlers on `ep`. Runs on every rank at
/// client init (the facade passes it to `Client::init_with_layers`); a
/// runtime using gex-rma without the facade must call it on every rank
/// before any rank's RMA can take this path.
pub fn register(ep: &Ep) -> Result<()> {
    let mut table = [
        HandlerEntry::request(H_PUT, Flags::AM_LONG, 3, |tok, msg| {
            // The payload already landed in this segment (the conduit
            // checked its range): acknowledge, naming the chunk back.
            tok.reply_short(H_PUT_ACK, Flags::empty(), msg.args())
                .expect("RMA put acknowledgement");
        })
        .with_name("gex-rma put"),
        HandlerEntry::reply(H_PUT_ACK, Flags::AM_SHORT, 3, |tok, msg| {
            let (slot, op, _) = claim_reply("gex-rma put ack", tok.src_rank(), msg.args());
            if op.dst.is_some() {
                gex_core::fatal(&format!(
                    "gex-rma put ack: a reply from rank {} acknowledges get {}.{}",
                    tok.src_rank(),
                    slot.index,
                    slot.generation
                ));
            }
            finish_chunk(slot, &op);
        })
        .with_name("gex-rma put ack"),
        HandlerEntry::request(H_GET, Flags::AM_SHORT, 6, |tok, msg| {
            let a = msg.args();
            let (off, len) = (join(a[0], a[1]), a[2] as u32 as usize);
            let at = local_range("RMA get", tok.src_rank(), off, len);
            // SAFETY: the range is inside the local segment (`local_range`); the
            // bytes are only copied into the reply. A peer writing them at
            // the same time races with this get in the client's program, as
            // with any RMA.
            let data = unsafe { std::slice::from_raw_parts(at as *const u8, len) };
            tok.reply_medium(H_GET_DATA, data, Lc::Now, Flags::empty(), &a[3..6])
                .expect("RMA get reply");
        })
        .with_name("gex-rma get"),
        HandlerEntry::reply(H_GET_DATA, Flags::AM_MEDIUM, 3, |tok, msg| {
            let what = "gex-rma get data";
            let (slot, op, chunk) = claim_reply(what, tok.src_rank(), msg.args());
            let data = msg.payload();
            let Some(dst) = &op.dst else {
                gex_core::fatal(&format!(
                    "{what}: a reply from rank {} carries data for put {}.{}",
                    tok.src_rank(),
                    slot.index,
                    slot.generation
                ));
            };
            if data.len() != op.chunk_bytes(chunk) {
                gex_core::fatal(&format!(
                    "{what}: a reply from rank {} carries {} bytes for chunk {chunk} of get {}.{}, which expects {}",
                    tok.src_rank(),
                    data.len(),
                    slot.index,
                    slot.generation,
                    op.chunk_bytes(chunk)
                ));
            }
            // SAFETY: chunk `chunk` is in range and claimed by this handler
            // alone (`claim_reply`), so `[chunk * chunk_len, + data.len())`
            // is inside the destination's `len` bytes and written by no one
            // else; the destination is valid until the completion, which
            // this chunk has not yet counted (see `Op`).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    data.as_ptr(),
                    dst.ptr.add(chunk * op.chunk_len),
                    data.len(),
                )
            };
            finish_chunk(slot, &op);
        })
        .with_name("gex-rma get data"),
        HandlerEntry::request(H_MEMSET, Flags::AM_SHORT, 7, |tok, msg| {
            let a = msg.args();
            let (off, len, val) = (join(a[0], a[1]), join(a[2], a[3]), a[4] as u8);
            let at = local_range("RMA memset", tok.src_rank(), off, len);
            // SAFETY: the range is inside the local segment (`local_range`). A
            // peer accessing it at the same time races with this memset in
            // the client's program, as with any RMA.
            unsafe { std::ptr::write_bytes(at as *mut u8, val, len) };
            tok.reply_short(H_PUT_ACK, Flags::empty(), &[a[5], a[6], 0])
                .expect("RMA memset acknowledgement");
        })
        .with_name("gex-rma memset"),
        HandlerEntry::request(H_PUT_EP, Flags::AM_MEDIUM, 6, |tok, msg| {
            let a = msg.args();
            let data = msg.payload();
            let off = join(a[0], a[1]);
            let at = local_range_ep("RMA put", tok.src_rank(), a[2], off, data.len());
            // SAFETY: the range is inside the segment bound to the named
            // local endpoint (`local_range_ep`), which stays mapped (a
            // destroyed segment's memory is replaced, never unmapped); the
            // payload is a distinct buffer. A concurrent access races in the
            // client's program, as with any RMA.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), at as *mut u8, data.len()) };
            tok.reply_short(H_PUT_ACK, Flags::empty(), &a[3..6])
                .expect("RMA put acknowledgement");
        })
        .with_name("gex-rma put (created endpoint)"),
        HandlerEntry::request(H_GET_EP, Flags::AM_SHORT, 7, |tok, msg| {
            let a = msg.args();
            let (off, len) = (join(a[0], a[1]), a[2] as u32 as usize);
            let at = local_range_ep("RMA get", tok.src_rank(), a[3], off, len);
            // SAFETY: as for H_GET, in the segment bound to the named local
            // endpoint (`local_range_ep`).
            let data = unsafe { std::slice::from_raw_parts(at as *const u8, len) };
            tok.reply_medium(H_GET_DATA, data, Lc::Now, Flags::empty(), &a[4..7])
                .expect("RMA get reply");
        })
        .with_name("gex-rma get (created endpoint)"),
        HandlerEntry::request(H_MEMSET_EP, Flags::AM_SHORT, 8, |tok, msg| {
            let a = msg.args();
            let (off, len, val) = (join(a[0], a[1]), join(a[2], a[3]), a[4] as u8);
            let at = local_range_ep("RMA memset", tok.src_rank(), a[5], off, len);
            // SAFETY: as for H_MEMSET, in the segment bound to the named
            // local endpoint (`local_range_ep`).
            unsafe { std::ptr::write_bytes(at as *mut u8, val, len) };
            tok.reply_short(H_PUT_ACK, Flags::empty(), &[a[6], a[7], 0])
                .expect("RMA memset acknowledgement");
        })
        .with_name("gex-rma memset (created endpoint)"),
    ];
    let layer = register_internal_handlers(ep, &mut table)?;
    let _ = LAYER.set(layer);
    Ok(())
}

fn chunks(len: usize, chunk: usize) -> usize {
    len.div_ceil(chunk).max(1)
}

/// How the first chunk of an operation went.
enum Started {
    /// Every chunk was sent.
    Sent,
    /// `IMMEDIATE` and the first chunk was refused: nothing moved.
    NoOp,
}

/// Sends the chunks of the operation in `slot` with `send(chunk, flags)`,
/// `IMMEDIATE` on the first only (once one is accepted the rest are sent
/// blocking, so a no-op never leaves a transfer half done). On a no-op the
/// slot is freed at once; on an error the unsent chunks are finished here,
/// so nothing waits for them.
fn send_chunks(
    slot: Slot,
    op: &Arc<Op>,
    immediate: bool,
    mut send: impl FnMut(usize, Flags) -> Result<Injected>,
) -> Result<Started> {
    for i in 0..op.chunks {
        let flags = if immediate && i == 0 {
            Flags::IMMEDIATE
        } else {
            Flags::empty()
        };
        match send(i, flags) {
            Ok(Injected::Sent) => {}
            Ok(Injected::NoOp) => {
                remove(slot);
                return Ok(Started::NoOp);
            }
            Err(e) => {
                for j in i..op.chunks {
                    // Unclaimed (never sent), so a reply naming it is fatal.
                    op.claim(j);
                    finish_chunk(slot, op);
                }
                return Err(e);
            }
        }
    }
    Ok(Started::Sent)
}

/// Starts a put of `len` bytes from `src` to offset `off` of `jobrank`'s
/// segment. Returns `None` for an `IMMEDIATE` no-op, else the completion
/// (reporting to `parent`). The source is copied out before this returns.
#[allow(clippy::too_many_arguments)]
pub(crate) fn put(
    ep: &Ep,
    jobrank: Rank,
    index: EpIndex,
    off: usize,
    src: *const u8,
    len: usize,
    immediate: bool,
    parent: Option<Arc<Completion>>,
) -> Result<Option<Arc<Completion>>> {
    let am = layer()?;
    let limits = ep.runtime().conduit().am_limits(jobrank);
    let limit = if index == 0 {
        limits.max_request_long
    } else {
        limits.max_request_medium
    };
    let c = Completion::new(chunks(len, limit), parent.clone());
    let op = Arc::new(Op::new(jobrank, c.clone(), len, limit, None));
    let slot = insert(op.clone());
    let started = send_chunks(slot, &op, immediate, |i, flags| {
        let at = i * limit;
        // SAFETY: `src` is valid for `len` bytes for the duration of the
        // call (a borrowed slice or the local segment), and chunk `i` lies
        // within it.
        let chunk = unsafe { std::slice::from_raw_parts(src.add(at), op.chunk_bytes(i)) };
        if index != 0 {
            let (olo, ohi) = split(off + at);
            let [s0, s1, s2] = slot.args(i);
            let args = [olo, ohi, index as AmArg, s0, s1, s2];
            return am.request_medium(jobrank, H_PUT_EP, chunk, Lc::Now, flags, &args);
        }
        am.request_long(
            jobrank,
            H_PUT,
            chunk,
            off + at,
            Lc::Now,
            flags | Flags::PEER_SEG_OFFSET,
            &slot.args(i),
        )
    })?;
    match started {
        Started::Sent => Ok(Some(c)),
        Started::NoOp => {
            if let Some(p) = &parent {
                p.done(); // undo the caller's tracking
            }
            Ok(None)
        }
    }
}

/// Starts a memset of `len` bytes to `val` at offset `off` of `jobrank`'s
/// segment: one Short request, whatever the length, acknowledged once
/// done. Returns `None` for an `IMMEDIATE` no-op, else the completion.
#[allow(clippy::too_many_arguments)]
pub(crate) fn memset(
    _ep: &Ep,
    jobrank: Rank,
    index: EpIndex,
    off: usize,
    len: usize,
    val: u8,
    immediate: bool,
) -> Result<Option<Arc<Completion>>> {
    let am = layer()?;
    let c = Completion::new(1, None);
    // One chunk whatever the length.
    let op = Arc::new(Op::new(jobrank, c.clone(), 0, 1, None));
    let slot = insert(op.clone());
    let ((olo, ohi), (llo, lhi)) = (split(off), split(len));
    let [s0, s1, _] = slot.args(0);
    let started = send_chunks(slot, &op, immediate, |_, flags| {
        if index != 0 {
            let args = [olo, ohi, llo, lhi, AmArg::from(val), index as AmArg, s0, s1];
            return am.request_short(jobrank, H_MEMSET_EP, flags, &args);
        }
        let args = [olo, ohi, llo, lhi, AmArg::from(val), s0, s1];
        am.request_short(jobrank, H_MEMSET, flags, &args)
    })?;
    match started {
        Started::Sent => Ok(Some(c)),
        Started::NoOp => Ok(None),
    }
}

/// Where a get's data goes.
pub(crate) enum GetDst {
    /// The caller's memory, valid until the caller observes completion.
    Raw(*mut u8),
    /// A staging buffer the event copies out from.
    Staged(Arc<Staging>),
}

/// Starts a get of `len` bytes at offset `off` of `jobrank`'s segment.
/// Returns `None` for an `IMMEDIATE` no-op, else the completion.
#[allow(clippy::too_many_arguments)]
pub(crate) fn get(
    ep: &Ep,
    jobrank: Rank,
    index: EpIndex,
    off: usize,
    len: usize,
    dst: GetDst,
    immediate: bool,
    parent: Option<Arc<Completion>>,
) -> Result<Option<Arc<Completion>>> {
    let am = layer()?;
    let limit = ep.runtime().conduit().am_limits(jobrank).max_reply_medium;
    let c = Completion::new(chunks(len, limit), parent.clone());
    let (ptr, staging) = match dst {
        GetDst::Raw(p) => (p, None),
        GetDst::Staged(s) => (s.ptr(), Some(s)),
    };
    let dst = GetDstPtr {
        ptr,
        _staging: staging,
    };
    let op = Arc::new(Op::new(jobrank, c.clone(), len, limit, Some(dst)));
    let slot = insert(op.clone());
    let started = send_chunks(slot, &op, immediate, |i, flags| {
        let (olo, ohi) = split(off + i * limit);
        let [s0, s1, s2] = slot.args(i);
        if index != 0 {
            let args = [
                olo,
                ohi,
                op.chunk_bytes(i) as AmArg,
                index as AmArg,
                s0,
                s1,
                s2,
            ];
            return am.request_short(jobrank, H_GET_EP, flags, &args);
        }
        let args = [olo, ohi, op.chunk_bytes(i) as AmArg, s0, s1, s2];
        am.request_short(jobrank, H_GET, flags, &args)
    })?;
    match started {
        Started::Sent => Ok(Some(c)),
        Started::NoOp => {
            if let Some(p) = &parent {
                p.done();
            }
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_survive_the_argument_split() {
        for v in [0usize, 1, 0xdead_beef, 0x7fff_ffff_f000, usize::MAX >> 8] {
            let (lo, hi) = split(v);
            assert_eq!(join(lo, hi), v);
        }
        assert_eq!(chunks(0, 10), 1);
        assert_eq!(chunks(10, 10), 1);
        assert_eq!(chunks(11, 10), 2);
    }
}
