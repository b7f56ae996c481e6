//! The Active Message route of VIS: for peers whose segment is not mapped
//! into this process (and for every peer when forced); on the conduit
//! route, for the short runs, the long ones going through the conduit's
//! one-sided operations (`RmaCapability`).
//!
//! # Packing format
//!
//! A *record* is a 12-byte header, the run's offset in the target's
//! segment (`u64`) and its length (`u32`), both little-endian.
//!
//! - Put, `H_PUT` (Medium request, 3 arguments: slot, generation,
//!   message): records each followed by their data, as many as fit in
//!   `MaxRequestMedium`; a run that does not fit is cut. A run longer than
//!   half the Medium limit goes as `H_PUT_LONG` Long requests (same
//!   arguments) straight into the segment, or on the conduit route as
//!   one-sided puts of at most the capability's `max_transfer`. The target checks every record
//!   of a message (whole header, whole data, the range through the one
//!   range check) before it writes any, then acknowledges with `H_ACK`
//!   (Short reply, the same 3 arguments).
//! - Get, `H_GET` (Medium request, same arguments): records without data,
//!   as many as fit in `MaxRequestMedium` and whose lengths add up to at
//!   most `MaxReplyMedium`. The target checks them all and answers with
//!   `H_GET_DATA` (Medium reply, same arguments), the runs' bytes in
//!   record order, which the initiator scatters to the destinations it
//!   kept for that message. On the conduit route a run longer than half
//!   the Medium reply limit is a one-sided get straight into its
//!   destination instead.
//! - To the segment bound to a created endpoint (over a TM-pair):
//!   `H_PUT_EP` and `H_GET_EP`, as `H_PUT` and `H_GET` with a fourth
//!   argument, the endpoint index, whose bound segment the target checks
//!   the records against (an index without one is fatal). No run of such a
//!   put goes as a Long request (it would run in that endpoint's handler
//!   table, where this layer has none): long runs are packed too, or on
//!   the conduit route go through its one-sided puts, which name the
//!   endpoint. The answers are `H_ACK` and `H_GET_DATA` with the first
//!   three arguments.
//! - Peer completion, `H_PC` (Medium request, 1 argument: the client's
//!   handler index): sent once every message of the put is acknowledged
//!   (by the sender, or by this layer's progress hook for NB/NBI puts); the
//!   target runs the client's handler as a 0-argument Medium reply from the
//!   sender. On the direct route it is sent right after the copies.
//!
//! Every message of an operation is sent before any acknowledgement is
//! awaited (the conduit's queues are the only limit), `IMMEDIATE` on the
//! first only, so a no-op moves nothing.
//!
//! Operations in flight live in a `gex_core::slots::Slots` table; a reply
//! naming a slot not in flight, a message index out of range or answered
//! already, a rank the operation was not sent to, or a payload of the
//! wrong length is a fatal error naming the handler. A request with a
//! truncated record, a range outside the segment, more data than a reply
//! can carry, or a reserved handler index is likewise fatal, before any
//! byte is written. No argument or record is ever turned into a pointer
//! other than through the range check.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use gex_am::{register_internal_handlers, HandlerEntry, Injected, LayerAm};
use gex_conduit::{GetDest, IncomingAm, PutSource, RmaCapability, ZeroLen};
use gex_core::internals::*;
use gex_core::slots::Slots;
use gex_core::{Completion, Ep, Lc, Runtime, Staging};
use gex_types::{AmArg, AmCategory, AmIndex, EpIndex, Error, Flags, Rank, Result, AM_INDEX_BASE};

use crate::shape::Pieces;
use crate::PeerCompletion;

const H_PUT: AmIndex = 11;
const H_PUT_LONG: AmIndex = 12;
const H_ACK: AmIndex = 13;
const H_GET: AmIndex = 14;
const H_GET_DATA: AmIndex = 15;
const H_PC: AmIndex = 16;
const H_PUT_EP: AmIndex = 17;
const H_GET_EP: AmIndex = 18;

/// Bytes of a record header.
pub const RECORD: usize = 12;

fn header(off: usize, len: usize) -> [u8; RECORD] {
    let mut h = [0u8; RECORD];
    h[..8].copy_from_slice(&(off as u64).to_le_bytes());
    h[8..].copy_from_slice(&(len as u32).to_le_bytes());
    h
}

fn read_header(b: &[u8]) -> (u64, u32) {
    let off = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
    let len = u32::from_le_bytes(b[8..RECORD].try_into().expect("4 bytes"));
    (off, len)
}

/// What a get message's reply is scattered to: (local address, length).
struct GetMsg {
    runs: Vec<(usize, usize)>,
    bytes: usize,
}

enum Kind {
    Put,
    Get(Vec<GetMsg>),
}

/// An operation in flight.
struct Op {
    peer: Rank,
    /// Done once per message.
    c: Arc<Completion>,
    msgs: usize,
    claimed: Box<[AtomicU64]>,
    remaining: AtomicUsize,
    kind: Kind,
    /// A get's staging buffer, kept as long as a reply may write it.
    _keep: Option<Arc<Staging>>,
}

// SAFETY: the local addresses of a get are written only by the reply
// handler that claimed their message (disjoint ranges), before the
// message's completion, and the caller keeps them valid until it has
// observed completion (gets wait before returning). Every other field is
// thread-safe.
unsafe impl Send for Op {}
// SAFETY: as above.
unsafe impl Sync for Op {}

impl Op {
    fn claim(&self, i: usize) -> bool {
        let bit = 1u64 << (i % 64);
        self.claimed[i / 64].fetch_or(bit, Ordering::AcqRel) & bit == 0
    }
}

static OPS: Slots<Arc<Op>> = Slots::new();

fn args(slot: (u32, u32), msg: usize) -> [AmArg; 3] {
    [slot.0 as AmArg, slot.1 as AmArg, msg as u32 as AmArg]
}

/// The arguments of a message to endpoint `ep`: those of [`args`], and
/// the endpoint index for a created one.
fn args_to(slot: (u32, u32), msg: usize, ep: EpIndex) -> ([AmArg; 4], usize) {
    let a = args(slot, msg);
    ([a[0], a[1], a[2], ep as AmArg], if ep == 0 { 3 } else { 4 })
}

fn finish(slot: (u32, u32), op: &Op) {
    op.c.done();
    if op.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
        OPS.take(slot.0, slot.1);
    }
}

/// Checks a reply against the table (see the module docs).
fn claim_reply(what: &str, src: Rank, a: &[AmArg]) -> ((u32, u32), Arc<Op>, usize) {
    let slot = (a[0] as u32, a[1] as u32);
    let msg = a[2] as u32 as usize;
    let Some(op) = OPS.get(slot.0, slot.1) else {
        gex_core::fatal(&format!(
            "{what}: a reply from rank {src} names operation {}.{}, which is not in flight (a forged, stale or duplicated reply)",
            slot.0, slot.1
        ));
    };
    if op.peer != src {
        gex_core::fatal(&format!(
            "{what}: a reply from rank {src} names operation {}.{}, which was sent to rank {}",
            slot.0, slot.1, op.peer
        ));
    }
    if msg >= op.msgs || !op.claim(msg) {
        gex_core::fatal(&format!(
            "{what}: a reply from rank {src} answers message {msg} of operation {}.{}, which has {} messages{}",
            slot.0,
            slot.1,
            op.msgs,
            if msg < op.msgs { " and was answered already" } else { "" }
        ));
    }
    (slot, op, msg)
}

static LAYER: OnceLock<LayerAm> = OnceLock::new();

fn layer() -> Result<&'static LayerAm> {
    LAYER.get().ok_or_else(|| {
        Error::not_init("gex-vis: the layer's handlers are not registered (gex_vis::register)")
    })
}

/// This rank's segment bound to endpoint `ep` (0: the attached one; the
/// index came from the sender, so an index without one is fatal): (local
/// base, descriptor).
fn my_segment(what: &str, src: Rank, ep: EpIndex) -> (usize, gex_conduit::SegmentDesc, Rank) {
    let rt = Runtime::get().expect("an AM arrived, so the client exists");
    let me = rt.jobrank();
    let d = if ep == 0 {
        rt.segments().map(|t| t[me as usize]).unwrap_or_default()
    } else {
        gex_core::epseg::ep_segment(ep, me).unwrap_or_else(|| {
            gex_core::fatal(&format!(
                "{what} from rank {src}: endpoint {ep} of this rank has no bound segment"
            ))
        })
    };
    match d.local_base {
        Some(b) => (b, d, me),
        None => gex_core::fatal(&format!(
            "{what} from rank {src}: this rank has no segment mapped"
        )),
    }
}

/// Parses and checks the records of a put (`with_data`) or get message:
/// returns (address in this process, data offset in the payload, length)
/// per record. Anything malformed is fatal, before anything is written.
fn parse(
    what: &str,
    src: Rank,
    ep: EpIndex,
    payload: &[u8],
    with_data: bool,
) -> Vec<(usize, usize, usize)> {
    let (base, d, me) = my_segment(what, src, ep);
    let mut out = Vec::new();
    let mut at = 0;
    while at < payload.len() {
        if payload.len() - at < RECORD {
            gex_core::fatal(&format!(
                "{what} from rank {src}: a truncated record header at byte {at} of a {}-byte payload",
                payload.len()
            ));
        }
        let (off, len) = read_header(&payload[at..]);
        let len = len as usize;
        at += RECORD;
        if with_data && payload.len() - at < len {
            gex_core::fatal(&format!(
                "{what} from rank {src}: record {} announces {len} bytes but only {} follow",
                out.len(),
                payload.len() - at
            ));
        }
        let off = usize::try_from(off).unwrap_or(usize::MAX);
        let o = match d.offset_of(me, off, len, true, ZeroLen::InSegment) {
            Ok(o) => o,
            Err(e) => gex_core::fatal(&format!(
                "{what} from rank {src}: record {}{}: {}",
                out.len(),
                if ep == 0 {
                    String::new()
                } else {
                    format!(" (endpoint {ep})")
                },
                e.local()
            )),
        };
        out.push((base + o, at, len));
        if with_data {
            at += len;
        }
    }
    out
}

/// Runs the client's peer completion handler `handler` as a 0-argument
/// Medium reply from `src` (the AM layer checks its registration).
fn run_peer_completion(src: Rank, handler: AmIndex, payload: &[u8]) {
    if handler < AM_INDEX_BASE {
        gex_core::fatal(&format!(
            "gex-vis peer completion from rank {src}: handler index {handler} is reserved to the library"
        ));
    }
    let rt = Runtime::get().expect("an AM arrived, so the client exists");
    rt.sink().deliver(&IncomingAm::new(
        src,
        AmCategory::Medium,
        false,
        handler,
        &[],
        payload,
        0,
    ));
}

/// A packed put to this rank's segment of endpoint `ep`: every record
/// checked, then written, then acknowledged (with the first three
/// arguments, which name the operation).
fn serve_put(what: &str, tok: gex_am::RequestToken<'_>, msg: &gex_am::AmMsg<'_>, ep: EpIndex) {
    let src = tok.src_rank();
    let payload = msg.payload();
    for (to, from, len) in parse(what, src, ep, payload, true) {
        // SAFETY: `to..to+len` is inside this rank's mapped segment
        // (checked by `parse` through the one range check) and
        // `from..from+len` inside the payload. A peer accessing the
        // same bytes races in the client's program, as with any RMA.
        unsafe { std::ptr::copy_nonoverlapping(payload.as_ptr().add(from), to as *mut u8, len) };
    }
    tok.reply_short(H_ACK, Flags::empty(), &msg.args()[..3])
        .expect("gex-vis put acknowledgement");
}

/// A packed get from this rank's segment of endpoint `ep`: every record
/// checked, the bytes answered in record order.
fn serve_get(what: &str, tok: gex_am::RequestToken<'_>, msg: &gex_am::AmMsg<'_>, ep: EpIndex) {
    let src = tok.src_rank();
    let recs = parse(what, src, ep, msg.payload(), false);
    let total: usize = recs.iter().map(|r| r.2).sum();
    let rt = Runtime::get().expect("an AM arrived, so the client exists");
    let limit = rt.conduit().am_limits(src).max_reply_medium;
    if total > limit {
        gex_core::fatal(&format!(
            "{what} from rank {src}: asks for {total} bytes, more than a Medium reply carries ({limit})"
        ));
    }
    let mut data = Vec::with_capacity(total);
    for (at, _, len) in recs {
        // SAFETY: `at..at+len` is inside this rank's mapped segment
        // (checked by `parse`); the bytes are only copied out.
        data.extend_from_slice(unsafe { std::slice::from_raw_parts(at as *const u8, len) });
    }
    tok.reply_medium(H_GET_DATA, &data, Lc::Now, Flags::empty(), &msg.args()[..3])
        .expect("gex-vis get reply");
}

/// Registers the handlers and the progress hook. Runs on every rank at
/// client init.
pub fn register(ep: &Ep) -> Result<()> {
    let mut table = [
        HandlerEntry::request(H_PUT, Flags::AM_MEDIUM, 3, |tok, msg| {
            serve_put("gex-vis put", tok, msg, 0)
        })
        .with_name("gex-vis put"),
        HandlerEntry::request(H_PUT_EP, Flags::AM_MEDIUM, 4, |tok, msg| {
            serve_put("gex-vis put", tok, msg, msg.arg(3) as u32)
        })
        .with_name("gex-vis put to a created endpoint"),
        HandlerEntry::request(H_PUT_LONG, Flags::AM_LONG, 3, |tok, msg| {
            // The payload landed already (the conduit checked its range).
            tok.reply_short(H_ACK, Flags::empty(), msg.args())
                .expect("gex-vis put acknowledgement");
        })
        .with_name("gex-vis put long"),
        HandlerEntry::reply(H_ACK, Flags::AM_SHORT, 3, |tok, msg| {
            let what = "gex-vis put ack";
            let (slot, op, _) = claim_reply(what, tok.src_rank(), msg.args());
            if !matches!(op.kind, Kind::Put) {
                gex_core::fatal(&format!(
                    "{what}: a reply from rank {} acknowledges get {}.{}",
                    tok.src_rank(),
                    slot.0,
                    slot.1
                ));
            }
            finish(slot, &op);
        })
        .with_name("gex-vis put ack"),
        HandlerEntry::request(H_GET, Flags::AM_MEDIUM, 3, |tok, msg| {
            serve_get("gex-vis get", tok, msg, 0)
        })
        .with_name("gex-vis get"),
        HandlerEntry::request(H_GET_EP, Flags::AM_MEDIUM, 4, |tok, msg| {
            serve_get("gex-vis get", tok, msg, msg.arg(3) as u32)
        })
        .with_name("gex-vis get from a created endpoint"),
        HandlerEntry::reply(H_GET_DATA, Flags::AM_MEDIUM, 3, |tok, msg| {
            let what = "gex-vis get data";
            let src = tok.src_rank();
            let (slot, op, i) = claim_reply(what, src, msg.args());
            let Kind::Get(msgs) = &op.kind else {
                gex_core::fatal(&format!(
                    "{what}: a reply from rank {src} carries data for put {}.{}",
                    slot.0, slot.1
                ));
            };
            let m = &msgs[i];
            let data = msg.payload();
            if data.len() != m.bytes {
                gex_core::fatal(&format!(
                    "{what}: a reply from rank {src} carries {} bytes for message {i} of get {}.{}, which expects {}",
                    data.len(),
                    slot.0,
                    slot.1,
                    m.bytes
                ));
            }
            let mut at = 0;
            for &(to, len) in &m.runs {
                // SAFETY: message `i` is claimed by this handler alone, its
                // runs are the caller's destination ranges (disjoint from
                // every other message's), valid until the completion this
                // message has not yet counted (see `Op`); `at..at+len` is
                // inside `data` (its length is the runs' sum).
                unsafe {
                    std::ptr::copy_nonoverlapping(data.as_ptr().add(at), to as *mut u8, len)
                };
                at += len;
            }
            finish(slot, &op);
        })
        .with_name("gex-vis get data"),
        HandlerEntry::request(H_PC, Flags::AM_MEDIUM, 1, |tok, msg| {
            let src = tok.src_rank();
            let handler = msg.arg(0) as u32;
            if handler > 255 {
                gex_core::fatal(&format!(
                    "gex-vis peer completion from rank {src}: {handler} is not a handler index"
                ));
            }
            run_peer_completion(src, handler as AmIndex, msg.payload());
        })
        .with_name("gex-vis peer completion"),
    ];
    let layer = register_internal_handlers(ep, &mut table)?;
    let _ = LAYER.set(layer);
    static HOOKED: OnceLock<()> = OnceLock::new();
    if HOOKED.set(()).is_ok() {
        ep.runtime().add_progress_hook(pc_hook)?;
    }
    Ok(())
}

/// Peer completions waiting for their put's data: sent by [`pc_hook`].
struct PendingPc {
    jobrank: Rank,
    data: Arc<Completion>,
    root: Arc<Completion>,
    pc: PeerCompletion,
}

static PENDING: Mutex<Vec<PendingPc>> = Mutex::new(Vec::new());
/// Entries of [`PENDING`]: the hook runs after every poll of every
/// program, and with nothing pending costs this one relaxed load.
static PENDING_N: AtomicUsize = AtomicUsize::new(0);

fn pend(p: PendingPc) {
    let mut g = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    g.push(p);
    PENDING_N.fetch_add(1, Ordering::Release);
}

/// Sends the peer completions whose data is acknowledged (`IMMEDIATE`; a
/// refused one waits for the next run).
fn pc_hook() -> usize {
    if PENDING_N.load(Ordering::Relaxed) == 0 {
        return 0;
    }
    let ready: Vec<PendingPc> = {
        let mut g = match PENDING.try_lock() {
            Ok(g) => g,
            Err(_) => return 0,
        };
        if g.is_empty() {
            return 0;
        }
        let (ready, wait): (Vec<_>, Vec<_>) = g.drain(..).partition(|p| p.data.is_complete());
        *g = wait;
        PENDING_N.fetch_sub(ready.len(), Ordering::AcqRel);
        ready
    };
    let mut n = 0;
    for p in ready {
        match send_pc(p.jobrank, &p.pc, Flags::IMMEDIATE) {
            Ok(Injected::Sent) => {
                p.root.done();
                n += 1;
            }
            Ok(Injected::NoOp) => pend(p),
            Err(e) => gex_core::fatal(&format!(
                "gex-vis peer completion to rank {}: {e}",
                p.jobrank
            )),
        }
    }
    n
}

fn send_pc(jobrank: Rank, pc: &PeerCompletion, flags: Flags) -> Result<Injected> {
    layer()?.request_medium(
        jobrank,
        H_PC,
        &pc.payload,
        Lc::Now,
        flags,
        &[pc.handler as AmArg],
    )
}

/// Sends a peer completion now (the data is visible at the peer already).
pub(crate) fn send_peer_completion(jobrank: Rank, pc: &PeerCompletion) -> Result<()> {
    send_pc(jobrank, pc, Flags::empty()).map(|_| ())
}

/// One message of a put.
enum PutMsg<'p> {
    Packed(Vec<u8>),
    Long {
        off: usize,
        data: &'p [u8],
    },
    /// A part of a long run through the conduit's one-sided capability.
    Native {
        off: usize,
        data: &'p [u8],
    },
}

/// Cuts the runs of a put into messages (see the module docs). Runs
/// longer than half the Medium limit go as Long requests of at most
/// `long` bytes, or, with `native` (the capability's `max_transfer`), as
/// one-sided puts of at most that.
fn plan_put(
    pieces: &Pieces,
    medium: usize,
    long: usize,
    native: Option<usize>,
) -> Vec<PutMsg<'static>> {
    let mut out = Vec::new();
    let mut buf: Vec<u8> = Vec::new();
    let flush = |buf: &mut Vec<u8>, out: &mut Vec<PutMsg<'static>>| {
        if !buf.is_empty() {
            out.push(PutMsg::Packed(std::mem::take(buf)));
        }
    };
    for r in &pieces.v {
        // SAFETY: each run's local range is the caller's source, readable
        // for the call; the messages built here do not outlive it (the
        // `'static` is local to this module: `put` drops them before it
        // returns).
        let data: &'static [u8] =
            unsafe { std::slice::from_raw_parts(r.local as *const u8, r.len) };
        if r.len > medium / 2 && (long > 0 || native.is_some()) {
            flush(&mut buf, &mut out);
            let mut at = 0;
            while at < r.len {
                let (off, n) = (r.roff + at, native.unwrap_or(long).min(r.len - at));
                let data = &data[at..at + n];
                out.push(match native {
                    Some(_) => PutMsg::Native { off, data },
                    None => PutMsg::Long { off, data },
                });
                at += n;
            }
            continue;
        }
        let mut at = 0;
        while at < r.len {
            if medium - buf.len() < RECORD + 1 {
                flush(&mut buf, &mut out);
            }
            if buf.capacity() == 0 {
                // One allocation per message, never regrown.
                buf.reserve_exact(medium.min(pieces.bytes + RECORD * pieces.v.len()));
            }
            let n = (medium - buf.len() - RECORD).min(r.len - at);
            buf.extend_from_slice(&header(r.roff + at, n));
            buf.extend_from_slice(&data[at..at + n]);
            at += n;
        }
    }
    flush(&mut buf, &mut out);
    out
}

/// The conduit's one-sided capability, if transfers to `jobrank` use it
/// for long runs (decided once per peer, after segment attach).
pub(crate) fn native(jobrank: Rank) -> Option<&'static dyn RmaCapability> {
    static ROUTES: OnceLock<Box<[bool]>> = OnceLock::new();
    let rt = Runtime::get()?;
    gex_core::segment_table()?;
    let cap = rt.conduit().rma()?;
    let routes = ROUTES.get_or_init(|| (0..rt.jobsize()).map(|p| cap.reaches(p)).collect());
    routes
        .get(jobrank as usize)
        .copied()
        .unwrap_or(false)
        .then_some(cap)
}

/// Starts a put of `pieces` to `jobrank`: `None` for an `IMMEDIATE` no-op
/// (nothing sent), else the operation's completion, which reports to
/// `parent` and, with `pc`, includes sending the peer completion. Long
/// runs go through `cap` when given.
pub(crate) fn put(
    (jobrank, ep): (Rank, EpIndex),
    pieces: &Pieces,
    immediate: bool,
    parent: Option<Arc<Completion>>,
    pc: Option<PeerCompletion>,
    cap: Option<&dyn RmaCapability>,
) -> Result<Option<Arc<Completion>>> {
    let am = layer()?;
    let rt = Runtime::require("gex_VIS put")?;
    let limits = rt.conduit().am_limits(jobrank);
    // No Long requests to a created endpoint (see the module docs).
    let long = if ep == 0 { limits.max_request_long } else { 0 };
    let all = plan_put(
        pieces,
        limits.max_request_medium,
        long,
        cap.map(|c| c.max_transfer()),
    );
    let (natives, msgs): (Vec<_>, Vec<_>) = all
        .into_iter()
        .partition(|m| matches!(m, PutMsg::Native { .. }));
    let root = Completion::new(1 + usize::from(pc.is_some()), parent);
    if msgs.is_empty() && natives.is_empty() {
        // Nothing to move: only the peer completion, if any.
        if let Some(pc) = pc {
            send_pc(jobrank, &pc, Flags::empty())?;
            root.done();
        }
        root.done();
        return Ok(Some(root));
    }
    let data = Completion::new(msgs.len() + natives.len(), Some(root.clone()));
    let fail = |unfinished: usize| {
        for _ in 0..unfinished {
            data.done();
        }
        if pc.is_some() {
            root.done();
        }
    };
    if !msgs.is_empty() {
        let op = Arc::new(Op {
            peer: jobrank,
            c: data.clone(),
            msgs: msgs.len(),
            claimed: (0..msgs.len().div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect(),
            remaining: AtomicUsize::new(msgs.len()),
            kind: Kind::Put,
            _keep: None,
        });
        let slot = OPS.insert(op.clone());
        for (i, m) in msgs.iter().enumerate() {
            let flags = if immediate && i == 0 {
                Flags::IMMEDIATE
            } else {
                Flags::empty()
            };
            let a = args(slot, i);
            let (ea, en) = args_to(slot, i, ep);
            let h = if ep == 0 { H_PUT } else { H_PUT_EP };
            let sent = match m {
                PutMsg::Packed(b) => am.request_medium(jobrank, h, b, Lc::Now, flags, &ea[..en]),
                PutMsg::Long { off, data } | PutMsg::Native { off, data } => am.request_long(
                    jobrank,
                    H_PUT_LONG,
                    data,
                    *off,
                    Lc::Now,
                    flags | Flags::PEER_SEG_OFFSET,
                    &a,
                ),
            };
            match sent {
                Ok(Injected::Sent) => {}
                Ok(Injected::NoOp) => {
                    // Only the first message carries IMMEDIATE: nothing moved.
                    OPS.take(slot.0, slot.1);
                    return Ok(None);
                }
                Err(e) => {
                    for j in i..msgs.len() {
                        op.claim(j);
                        finish(slot, &op);
                    }
                    fail(natives.len());
                    return Err(e);
                }
            }
        }
    }
    if let Some(cap) = cap {
        let sink = rt.sink();
        for (k, m) in natives.iter().enumerate() {
            let PutMsg::Native { off, data: bytes } = m else {
                unreachable!("partitioned above")
            };
            let imm = immediate && msgs.is_empty() && k == 0;
            let done: Arc<dyn gex_conduit::OpCompletion> = data.clone();
            match cap.put(
                jobrank,
                ep,
                *off,
                PutSource::copy_of(bytes),
                done,
                imm,
                sink,
            ) {
                Ok(Injected::Sent) => {}
                Ok(Injected::NoOp) => return Ok(None),
                Err(e) => {
                    fail(natives.len() - k);
                    return Err(e);
                }
            }
        }
    }
    if let Some(pc) = pc {
        pend(PendingPc {
            jobrank,
            data,
            root: root.clone(),
            pc,
        });
    }
    Ok(Some(root))
}

/// Cuts the runs of a get into messages: (requests, what each reply
/// scatters to, long runs for the capability as (offset, address, length)
/// when `native` gives its `max_transfer`).
#[allow(clippy::type_complexity)]
fn plan_get(
    pieces: &Pieces,
    medium: usize,
    reply: usize,
    native: Option<usize>,
) -> (Vec<Vec<u8>>, Vec<GetMsg>, Vec<(usize, usize, usize)>) {
    let per_msg = (medium / RECORD).max(1);
    let (mut reqs, mut msgs, mut natives) = (Vec::new(), Vec::new(), Vec::new());
    let mut req = Vec::new();
    let mut cur = GetMsg {
        runs: Vec::new(),
        bytes: 0,
    };
    for r in &pieces.v {
        if let Some(max) = native.filter(|_| r.len > reply / 2) {
            let mut at = 0;
            while at < r.len {
                let n = max.min(r.len - at);
                natives.push((r.roff + at, r.local + at, n));
                at += n;
            }
            continue;
        }
        let mut at = 0;
        while at < r.len {
            if cur.runs.len() == per_msg || cur.bytes == reply {
                reqs.push(std::mem::take(&mut req));
                msgs.push(std::mem::replace(
                    &mut cur,
                    GetMsg {
                        runs: Vec::new(),
                        bytes: 0,
                    },
                ));
            }
            let n = (reply - cur.bytes).min(r.len - at);
            req.extend_from_slice(&header(r.roff + at, n));
            cur.runs.push((r.local + at, n));
            cur.bytes += n;
            at += n;
        }
    }
    if !cur.runs.is_empty() {
        reqs.push(req);
        msgs.push(cur);
    }
    (reqs, msgs, natives)
}

/// Starts a get of `pieces` from `jobrank`: `None` for an `IMMEDIATE`
/// no-op, else the completion; the caller keeps the destinations valid
/// (and untouched) until it has observed it, or they lie in `keep`, which
/// the operation keeps alive as long as anything may write it. Long runs
/// go through `cap` when given.
pub(crate) fn get(
    (jobrank, ep): (Rank, EpIndex),
    pieces: &Pieces,
    immediate: bool,
    cap: Option<&dyn RmaCapability>,
    keep: Option<Arc<Staging>>,
) -> Result<Option<Arc<Completion>>> {
    let am = layer()?;
    let rt = Runtime::require("gex_VIS get")?;
    let limits = rt.conduit().am_limits(jobrank);
    let (reqs, msgs, natives) = plan_get(
        pieces,
        limits.max_request_medium,
        limits.max_reply_medium,
        cap.map(|c| c.max_transfer()),
    );
    let n = reqs.len();
    let c = Completion::new(n + natives.len(), None);
    // On an error, the parts never started are finished here and the call
    // waits for those in flight: they write into the caller's memory,
    // whose borrow ends when this returns.
    let fail = |unstarted: usize, e: Error| {
        for _ in 0..unstarted {
            c.done();
        }
        rt.spin_until(|| c.is_complete());
        Err(e)
    };
    if n > 0 {
        let op = Arc::new(Op {
            peer: jobrank,
            c: c.clone(),
            msgs: n,
            claimed: (0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
            remaining: AtomicUsize::new(n),
            kind: Kind::Get(msgs),
            _keep: keep.clone(),
        });
        let slot = OPS.insert(op.clone());
        for (i, req) in reqs.iter().enumerate() {
            let flags = if immediate && i == 0 {
                Flags::IMMEDIATE
            } else {
                Flags::empty()
            };
            let (a, an) = args_to(slot, i, ep);
            let h = if ep == 0 { H_GET } else { H_GET_EP };
            match am.request_medium(jobrank, h, req, Lc::Now, flags, &a[..an]) {
                Ok(Injected::Sent) => {}
                Ok(Injected::NoOp) => {
                    OPS.take(slot.0, slot.1);
                    return Ok(None);
                }
                Err(e) => {
                    for j in i..n {
                        op.claim(j);
                        finish(slot, &op);
                    }
                    return fail(natives.len(), e);
                }
            }
        }
    }
    if let Some(cap) = cap {
        let sink = rt.sink();
        for (k, &(off, at, len)) in natives.iter().enumerate() {
            let imm = immediate && n == 0 && k == 0;
            // SAFETY: `at..at+len` is a part of the caller's destination,
            // exclusively borrowed until the caller has observed the
            // completion (blocking and NBI gets wait before returning, also
            // on an error below), or of the staging buffer `keep`, which the
            // conduit keeps alive until it is done; the parts are disjoint.
            let hold = keep
                .clone()
                .map(|s| Box::new(s) as Box<dyn std::any::Any + Send>);
            let dst = unsafe { GetDest::new(at as *mut u8, len, hold) };
            let done: Arc<dyn gex_conduit::OpCompletion> = c.clone();
            match cap.get(jobrank, ep, off, dst, done, imm, sink) {
                Ok(Injected::Sent) => {}
                Ok(Injected::NoOp) => return Ok(None),
                Err(e) => return fail(natives.len() - k, e),
            }
        }
    }
    Ok(Some(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::Pieces;

    #[test]
    fn put_messages_respect_the_limits_and_carry_every_byte() {
        let src: Vec<u8> = (0..5000u32).map(|i| i as u8).collect();
        let mut p = Pieces::default();
        // Small runs with gaps, then one long run.
        for k in 0..100 {
            p.push(k * 40, src.as_ptr() as usize + k * 20, 20);
        }
        p.push(100_000, src.as_ptr() as usize + 2000, 3000);
        let msgs = plan_put(&p, 256, 1024, None);
        let mut model = vec![0u8; 200_000];
        let mut longs = 0;
        for m in &msgs {
            match m {
                PutMsg::Packed(b) => {
                    assert!(b.len() <= 256);
                    let mut at = 0;
                    while at < b.len() {
                        let (off, len) = read_header(&b[at..]);
                        let (off, len) = (off as usize, len as usize);
                        at += RECORD;
                        model[off..off + len].copy_from_slice(&b[at..at + len]);
                        at += len;
                    }
                }
                PutMsg::Long { off, data } | PutMsg::Native { off, data } => {
                    assert!(data.len() <= 1024);
                    longs += 1;
                    model[*off..*off + data.len()].copy_from_slice(data);
                }
            }
        }
        assert_eq!(longs, 3);
        for k in 0..100 {
            assert_eq!(&model[k * 40..k * 40 + 20], &src[k * 20..k * 20 + 20]);
        }
        assert_eq!(&model[100_000..103_000], &src[2000..5000]);
    }

    #[test]
    fn get_messages_respect_the_limits() {
        let mut p = Pieces::default();
        for k in 0..50 {
            p.push(k * 100, 1_000_000 + k * 64, 64);
        }
        let (reqs, msgs, natives) = plan_get(&p, 5 * RECORD, 200, None);
        assert!(natives.is_empty());
        assert_eq!(reqs.len(), msgs.len());
        let mut total = 0;
        for (r, m) in reqs.iter().zip(&msgs) {
            assert!(r.len() <= 5 * RECORD && m.bytes <= 200);
            assert_eq!(r.len(), m.runs.len() * RECORD);
            assert_eq!(m.bytes, m.runs.iter().map(|x| x.1).sum::<usize>());
            total += m.bytes;
        }
        assert_eq!(total, 50 * 64);
    }
}
