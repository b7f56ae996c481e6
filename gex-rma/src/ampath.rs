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
//! The operation's state travels in the AM arguments as a pointer split in
//! two 32-bit halves: every request carries one strong count of an `Arc`,
//! and the reply that answers it takes that count back. Replies only ever
//! come back to the process that made the request, so the pointer is always
//! one of ours.

use std::sync::Arc;

use gex_am::{register_internal_handlers, AmRequest, HandlerEntry, Injected};
use gex_core::{Completion, Ep, Lc, Runtime, Staging};
use gex_types::{AmArg, AmIndex, Error, Flags, Rank, Result};

const H_PUT: AmIndex = 1;
const H_PUT_ACK: AmIndex = 2;
const H_GET: AmIndex = 3;
const H_GET_DATA: AmIndex = 4;
const H_MEMSET: AmIndex = 6;

fn split(v: usize) -> (AmArg, AmArg) {
    let v = v as u64;
    (v as u32 as AmArg, (v >> 32) as u32 as AmArg)
}

fn join(lo: AmArg, hi: AmArg) -> usize {
    (u64::from(lo as u32) | (u64::from(hi as u32) << 32)) as usize
}

/// A get in flight: where the data goes and its completion.
struct GetOp {
    c: Arc<Completion>,
    dst: *mut u8,
    _staging: Option<Arc<Staging>>,
}

// SAFETY: `dst` is written only by reply handlers, each for a disjoint range,
// and it stays valid until the completion is observed: it points into the
// staging buffer this op keeps alive, into the local segment (mapped for the
// whole process), or into a caller's buffer whose caller blocks until the
// completion is observed.
unsafe impl Send for GetOp {}
// SAFETY: as above.
unsafe impl Sync for GetOp {}

/// The local segment as (base, size), for the target side of the handlers.
fn local_segment() -> (usize, usize) {
    let rt = Runtime::get().expect("an AM arrived, so the client exists");
    let d = rt
        .segments()
        .expect("RMA AMs only target attached segments")[rt.jobrank() as usize];
    (d.local_base.expect("the local segment is mapped"), d.size)
}

/// Registers the reference path's handlers on `ep`. Runs on every rank at
/// client init (the facade passes it to `Client::init_with_layers`); a
/// runtime using gex-rma without the facade must call it on every rank
/// before any rank's RMA can take this path.
pub fn register(ep: &Ep) -> Result<()> {
    let mut table = [
        HandlerEntry::request(H_PUT, Flags::AM_LONG, 2, |tok, msg| {
            // The payload already landed in this segment: acknowledge.
            tok.reply_short(H_PUT_ACK, Flags::empty(), msg.args())
                .expect("RMA put acknowledgement");
        })
        .with_name("gex-rma put"),
        HandlerEntry::reply(H_PUT_ACK, Flags::AM_SHORT, 2, |_tok, msg| {
            let p = join(msg.arg(0), msg.arg(1)) as *const Completion;
            // SAFETY: the request carried one strong count of this Arc
            // (Arc::into_raw in `put`); this reply takes it back exactly once.
            let c = unsafe { Arc::from_raw(p) };
            c.done();
        })
        .with_name("gex-rma put ack"),
        HandlerEntry::request(H_GET, Flags::AM_SHORT, 6, |tok, msg| {
            let a = msg.args();
            let (off, len) = (join(a[0], a[1]), a[2] as u32 as usize);
            let (base, size) = local_segment();
            if off.checked_add(len).is_none_or(|e| e > size) {
                gex_core::fatal(&format!(
                    "RMA get from rank {} for [{off:#x}, +{len}) outside this rank's segment of {size:#x} bytes",
                    tok.src_rank()
                ));
            }
            // SAFETY: the range is inside the local segment (checked); the
            // bytes are only copied into the reply. A peer writing them at
            // the same time races with this get in the client's program, as
            // with any RMA.
            let data = unsafe { std::slice::from_raw_parts((base + off) as *const u8, len) };
            tok.reply_medium(H_GET_DATA, data, Lc::Now, Flags::empty(), &a[3..6])
                .expect("RMA get reply");
        })
        .with_name("gex-rma get"),
        HandlerEntry::reply(H_GET_DATA, Flags::AM_MEDIUM, 3, |_tok, msg| {
            let p = join(msg.arg(0), msg.arg(1)) as *const GetOp;
            let at = msg.arg(2) as u32 as usize;
            // SAFETY: one strong count per request, taken back here once.
            let op = unsafe { Arc::from_raw(p) };
            let data = msg.payload();
            // SAFETY: `dst + at .. + len` is this chunk's own part of the
            // destination, valid while the op is incomplete (see GetOp).
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), op.dst.add(at), data.len()) };
            op.c.done();
        })
        .with_name("gex-rma get data"),
        HandlerEntry::request(H_MEMSET, Flags::AM_SHORT, 7, |tok, msg| {
            let a = msg.args();
            let (off, len, val) = (join(a[0], a[1]), join(a[2], a[3]), a[4] as u8);
            let (base, size) = local_segment();
            if off.checked_add(len).is_none_or(|e| e > size) {
                gex_core::fatal(&format!(
                    "RMA memset from rank {} for [{off:#x}, +{len}) outside this rank's segment of {size:#x} bytes",
                    tok.src_rank()
                ));
            }
            // SAFETY: the range is inside the local segment (checked). A
            // peer accessing it at the same time races with this memset in
            // the client's program, as with any RMA.
            unsafe { std::ptr::write_bytes((base + off) as *mut u8, val, len) };
            tok.reply_short(H_PUT_ACK, Flags::empty(), &a[5..7])
                .expect("RMA memset acknowledgement");
        })
        .with_name("gex-rma memset"),
    ];
    register_internal_handlers(ep, &mut table)
}

fn chunks(len: usize, chunk: usize) -> usize {
    len.div_ceil(chunk).max(1)
}

/// Starts a put of `len` bytes from `src` to offset `off` of `jobrank`'s
/// segment. Returns `None` for an `IMMEDIATE` no-op, else the completion
/// (reporting to `parent`). The source is copied out before this returns.
pub(crate) fn put(
    ep: &Ep,
    jobrank: Rank,
    off: usize,
    src: *const u8,
    len: usize,
    immediate: bool,
    parent: Option<Arc<Completion>>,
) -> Result<Option<Arc<Completion>>> {
    let limit = ep.runtime().conduit().am_limits(jobrank).max_request_long;
    let n = chunks(len, limit);
    let c = Completion::new(n, parent.clone());
    let pair = ep.pair(0);
    for i in 0..n {
        let at = i * limit;
        let clen = limit.min(len - at);
        // SAFETY: `src` is valid for `len` bytes for the duration of the
        // call (a borrowed slice or the local segment).
        let chunk = unsafe { std::slice::from_raw_parts(src.add(at), clen) };
        let id = Arc::into_raw(c.clone()) as usize;
        let (lo, hi) = split(id);
        let mut flags = Flags::PEER_SEG_OFFSET;
        if immediate && i == 0 {
            flags |= Flags::IMMEDIATE;
        }
        let r = pair.request_long(jobrank, H_PUT, chunk, off + at, Lc::Now, flags, &[lo, hi]);
        if !matches!(r, Ok(Injected::Sent)) {
            // SAFETY: the count given to the request that was not sent.
            drop(unsafe { Arc::from_raw(id as *const Completion) });
        }
        match r {
            Ok(Injected::Sent) => {}
            Ok(Injected::NoOp) => {
                if let Some(p) = &parent {
                    p.done(); // undo the caller's tracking
                }
                return Ok(None);
            }
            Err(e) => return Err(abandon(&c, n - i, e)),
        }
    }
    Ok(Some(c))
}

/// Starts a memset of `len` bytes to `val` at offset `off` of `jobrank`'s
/// segment: one Short request, whatever the length, acknowledged once
/// done. Returns `None` for an `IMMEDIATE` no-op, else the completion.
pub(crate) fn memset(
    ep: &Ep,
    jobrank: Rank,
    off: usize,
    len: usize,
    val: u8,
    immediate: bool,
) -> Result<Option<Arc<Completion>>> {
    let c = Completion::new(1, None);
    let id = Arc::into_raw(c.clone()) as usize;
    let ((olo, ohi), (llo, lhi), (lo, hi)) = (split(off), split(len), split(id));
    let flags = if immediate {
        Flags::IMMEDIATE
    } else {
        Flags::empty()
    };
    let args = [olo, ohi, llo, lhi, AmArg::from(val), lo, hi];
    let r = ep.pair(0).request_short(jobrank, H_MEMSET, flags, &args);
    if !matches!(r, Ok(Injected::Sent)) {
        // SAFETY: the count given to the request that was not sent.
        drop(unsafe { Arc::from_raw(id as *const Completion) });
    }
    match r? {
        Injected::Sent => Ok(Some(c)),
        Injected::NoOp => Ok(None),
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
pub(crate) fn get(
    ep: &Ep,
    jobrank: Rank,
    off: usize,
    len: usize,
    dst: GetDst,
    immediate: bool,
    parent: Option<Arc<Completion>>,
) -> Result<Option<Arc<Completion>>> {
    let limit = ep.runtime().conduit().am_limits(jobrank).max_reply_medium;
    let n = chunks(len, limit);
    let c = Completion::new(n, parent.clone());
    let (ptr, staging) = match dst {
        GetDst::Raw(p) => (p, None),
        GetDst::Staged(s) => (s.ptr(), Some(s)),
    };
    let op = Arc::new(GetOp {
        c: c.clone(),
        dst: ptr,
        _staging: staging,
    });
    let pair = ep.pair(0);
    for i in 0..n {
        let at = i * limit;
        let clen = limit.min(len - at);
        let (olo, ohi) = split(off + at);
        let id = Arc::into_raw(op.clone()) as usize;
        let (lo, hi) = split(id);
        let flags = if immediate && i == 0 {
            Flags::IMMEDIATE
        } else {
            Flags::empty()
        };
        let args = [olo, ohi, clen as AmArg, lo, hi, at as AmArg];
        let r = pair.request_short(jobrank, H_GET, flags, &args);
        if !matches!(r, Ok(Injected::Sent)) {
            // SAFETY: the count given to the request that was not sent.
            drop(unsafe { Arc::from_raw(id as *const GetOp) });
        }
        match r {
            Ok(Injected::Sent) => {}
            Ok(Injected::NoOp) => {
                if let Some(p) = &parent {
                    p.done();
                }
                return Ok(None);
            }
            Err(e) => return Err(abandon(&c, n - i, e)),
        }
    }
    Ok(Some(c))
}

/// Marks the chunks that will never be sent as done, so nobody waits for
/// them, and returns the error.
fn abandon(c: &Completion, unsent: usize, e: Error) -> Error {
    for _ in 0..unsent {
        c.done();
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_survive_the_argument_split() {
        for v in [0usize, 1, 0xdead_beef, 0x7fff_ffff_f000, usize::MAX >> 8] {
            let (lo, hi) = split(v);
            assert_eq!(join(lo, hi), v);
        }
        assert_eq!(chunks(0, 10), 1);
        assert_eq!(chunks(10, 10), 1);
        assert_eq!(chunks(11, 10), 2);
    }
}
