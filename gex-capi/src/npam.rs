//! Negotiated-payload Active Messages: `gex_AM_Prepare*`, the source
//! descriptor queries, `gex_AM_Commit*` (the headers' `[M]` forms pass
//! their arguments as an array to `_gex_AM_CommitMedium` and
//! `_gex_AM_CommitLong`, the `_v2` forms to `_gex_AM_Commit_v2`) and
//! `gex_AM_Cancel*`.

use std::ffi::{c_int, c_uint, c_void};

use gex::am::{AmRequest, PrepareBuf, SrcDesc};
use gex::{Event, Lc};

use crate::am::{args, gex_Token_t, take_req, untake_req, CToken};
use crate::types::*;

/// What a `gex_AM_SrcDesc_t` points to: the Rust descriptor and, for a
/// client buffer with an event `lc_opt`, the leaf it completes (written to
/// the client's event at commit).
pub struct CSrcDesc {
    sd: Option<SrcDesc<'static>>,
    leaf: *mut Event<'static>,
    user_lc: *mut gex_Event_t,
    /// What the Prepare was: [`KIND_REQUEST`] or [`KIND_REPLY`], with
    /// [`KIND_MEDIUM`] or [`KIND_LONG`] (the header's `_GEX_AM_KIND_*`).
    kind: u32,
    /// A reply's token record (on the handler's stack, alive while the
    /// descriptor may be used: a reply Prepare is consumed in its
    /// handler), which a Cancel makes usable again; NULL for a request.
    token: *mut CToken,
}

/// The kinds of a descriptor (`_GEX_AM_KIND_*` of `gasnetex.h`).
pub const KIND_REQUEST: u32 = 1;
pub const KIND_REPLY: u32 = 2;
pub const KIND_MEDIUM: u32 = 4;
pub const KIND_LONG: u32 = 8;

fn kind_name(kind: u32) -> String {
    format!(
        "{}{}",
        if kind & KIND_REQUEST != 0 {
            "Request"
        } else {
            "Reply"
        },
        if kind & KIND_LONG != 0 {
            "Long"
        } else {
            "Medium"
        }
    )
}

pub type gex_AM_SrcDesc_t = *mut CSrcDesc;

/// The buffer argument of a Prepare; `leaf` receives the leaf event an
/// event `lc_opt` needs (it must outlive the descriptor).
///
/// # Safety
/// `client_buf` (if not NULL) is readable for `most` bytes until local
/// completion; `lc_opt` is a constant or NULL or writable.
unsafe fn buf(
    client_buf: *const c_void,
    most: usize,
    lc_opt: *mut gex_Event_t,
    leaf: &mut *mut Event<'static>,
    call: &str,
) -> PrepareBuf<'static> {
    if client_buf.is_null() {
        return PrepareBuf::Alloc;
    }
    // SAFETY: caller's contract.
    let b = unsafe { bytes(client_buf, most) };
    let lc = match lc_opt as usize {
        EVENT_NOW => Lc::Now,
        EVENT_DEFER => Lc::Defer,
        EVENT_GROUP => Lc::Group,
        0 => gex::fatal(&format!("{call}: lc_opt is NULL")),
        _ => {
            *leaf = Box::into_raw(Box::new(Event::INVALID));
            // SAFETY: a fresh box, freed after the descriptor (at commit).
            Lc::Event(unsafe { &mut **leaf })
        }
    };
    PrepareBuf::Client(b, lc)
}

fn finish(
    r: gex::Result<Option<SrcDesc<'static>>>,
    leaf: *mut Event<'static>,
    lc_opt: *mut gex_Event_t,
    kind: u32,
    token: *mut CToken,
) -> gex_AM_SrcDesc_t {
    match or_fatal(r) {
        Some(sd) => Box::into_raw(Box::new(CSrcDesc {
            sd: Some(sd),
            leaf,
            user_lc: if leaf.is_null() {
                std::ptr::null_mut()
            } else {
                lc_opt
            },
            kind,
            token,
        })),
        None => {
            if !leaf.is_null() {
                // SAFETY: the box made by `buf`; the descriptor that
                // borrowed it was never made.
                drop(unsafe { Box::from_raw(leaf) });
            }
            if !token.is_null() {
                // SAFETY: a reply Prepare that sent nothing (an IMMEDIATE
                // no-op): the token it took was dropped unused; the
                // record is the running handler's.
                unsafe { untake_req(&mut *token) };
            }
            std::ptr::null_mut()
        }
    }
}

/// `gex_AM_PrepareRequestMedium`.
#[no_mangle]
pub unsafe extern "C" fn gex_AM_PrepareRequestMedium(
    tm: gex_TM_t,
    rank: gex_Rank_t,
    client_buf: *const c_void,
    least_payload: usize,
    most_payload: usize,
    lc_opt: *mut gex_Event_t,
    flags: gex_Flags_t,
    numargs: c_uint,
) -> gex_AM_SrcDesc_t {
    const CALL: &str = "gex_AM_PrepareRequestMedium";
    let f = crate::types::flags(flags, CALL);
    let mut leaf = std::ptr::null_mut();
    // SAFETY: the buffer and lc_opt per the spec.
    let b = unsafe { buf(client_buf, most_payload, lc_opt, &mut leaf, CALL) };
    let r = with_tm!(tm, CALL, |t| t.prepare_request_medium(
        rank,
        b,
        least_payload,
        most_payload,
        f,
        numargs
    ));
    finish(
        r,
        leaf,
        lc_opt,
        KIND_REQUEST | KIND_MEDIUM,
        std::ptr::null_mut(),
    )
}

/// `gex_AM_PrepareRequestLong`.
#[no_mangle]
pub unsafe extern "C" fn gex_AM_PrepareRequestLong(
    tm: gex_TM_t,
    rank: gex_Rank_t,
    client_buf: *const c_void,
    least_payload: usize,
    most_payload: usize,
    dest_addr: *mut c_void,
    lc_opt: *mut gex_Event_t,
    flags: gex_Flags_t,
    numargs: c_uint,
) -> gex_AM_SrcDesc_t {
    const CALL: &str = "gex_AM_PrepareRequestLong";
    let f = crate::types::flags(flags, CALL);
    let mut leaf = std::ptr::null_mut();
    // SAFETY: the buffer and lc_opt per the spec.
    let b = unsafe { buf(client_buf, most_payload, lc_opt, &mut leaf, CALL) };
    let d = (!dest_addr.is_null()).then_some(dest_addr as usize);
    let r = with_tm!(tm, CALL, |t| t.prepare_request_long(
        rank,
        b,
        least_payload,
        most_payload,
        d,
        f,
        numargs
    ));
    finish(
        r,
        leaf,
        lc_opt,
        KIND_REQUEST | KIND_LONG,
        std::ptr::null_mut(),
    )
}

/// `gex_AM_PrepareReplyMedium`: the token's one reply (an `IMMEDIATE`
/// no-op uses it up too).
#[no_mangle]
pub unsafe extern "C" fn gex_AM_PrepareReplyMedium(
    token: gex_Token_t,
    client_buf: *const c_void,
    least_payload: usize,
    most_payload: usize,
    lc_opt: *mut gex_Event_t,
    flags: gex_Flags_t,
    numargs: c_uint,
) -> gex_AM_SrcDesc_t {
    const CALL: &str = "gex_AM_PrepareReplyMedium";
    let f = crate::types::flags(flags, CALL);
    let mut leaf = std::ptr::null_mut();
    // SAFETY: a running request handler's token; the buffer and lc_opt per
    // the spec.
    let ((ct, tok), b) = unsafe {
        (
            take_req(token, CALL),
            buf(client_buf, most_payload, lc_opt, &mut leaf, CALL),
        )
    };
    let ct: *mut CToken = ct;
    let r = tok.prepare_reply_medium(b, least_payload, most_payload, f, numargs);
    finish(r, leaf, lc_opt, KIND_REPLY | KIND_MEDIUM, ct)
}

/// `gex_AM_PrepareReplyLong`.
#[no_mangle]
pub unsafe extern "C" fn gex_AM_PrepareReplyLong(
    token: gex_Token_t,
    client_buf: *const c_void,
    least_payload: usize,
    most_payload: usize,
    dest_addr: *mut c_void,
    lc_opt: *mut gex_Event_t,
    flags: gex_Flags_t,
    numargs: c_uint,
) -> gex_AM_SrcDesc_t {
    const CALL: &str = "gex_AM_PrepareReplyLong";
    let f = crate::types::flags(flags, CALL);
    let mut leaf = std::ptr::null_mut();
    // SAFETY: as for the Medium reply.
    let ((ct, tok), b) = unsafe {
        (
            take_req(token, CALL),
            buf(client_buf, most_payload, lc_opt, &mut leaf, CALL),
        )
    };
    let ct: *mut CToken = ct;
    let d = (!dest_addr.is_null()).then_some(dest_addr as usize);
    let r = tok.prepare_reply_long(b, least_payload, most_payload, d, f, numargs);
    finish(r, leaf, lc_opt, KIND_REPLY | KIND_LONG, ct)
}

/// The descriptor behind `sd`.
///
/// # Safety
/// `sd` is a prepared, uncommitted descriptor of this library.
unsafe fn desc<'a>(sd: gex_AM_SrcDesc_t, call: &str) -> &'a mut CSrcDesc {
    if sd.is_null() {
        gex::fatal(&format!("{call}: GEX_AM_SRCDESC_NO_OP"));
    }
    // SAFETY: caller's contract.
    unsafe { &mut *sd }
}

/// `gex_AM_SrcDescAddr`: the client buffer, or the library's.
#[no_mangle]
pub unsafe extern "C" fn gex_AM_SrcDescAddr(sd: gex_AM_SrcDesc_t) -> *mut c_void {
    const CALL: &str = "gex_AM_SrcDescAddr";
    // SAFETY: a prepared descriptor.
    let d = unsafe { desc(sd, CALL) };
    let s =
        d.sd.as_mut()
            .unwrap_or_else(|| gex::fatal(&format!("{CALL}: a committed descriptor")));
    let a = s.addr() as *mut c_void;
    s.buf_mut().map_or(a, |b| b.as_mut_ptr().cast())
}

/// `gex_AM_SrcDescSize`.
#[no_mangle]
pub unsafe extern "C" fn gex_AM_SrcDescSize(sd: gex_AM_SrcDesc_t) -> usize {
    const CALL: &str = "gex_AM_SrcDescSize";
    // SAFETY: a prepared descriptor.
    let d = unsafe { desc(sd, CALL) };
    d.sd.as_ref()
        .unwrap_or_else(|| gex::fatal(&format!("{CALL}: a committed descriptor")))
        .size()
}

/// Commits `sd` with `f` and frees it, writing the leaf event if any.
///
/// # Safety
/// `sd` is a prepared, uncommitted descriptor of this library.
unsafe fn commit(
    sd: gex_AM_SrcDesc_t,
    call: &str,
    f: impl FnOnce(SrcDesc<'static>) -> gex::Result<()>,
) {
    // SAFETY: a prepared descriptor; freed here.
    let mut d = unsafe { Box::from_raw(desc(sd, call)) };
    let s =
        d.sd.take()
            .unwrap_or_else(|| gex::fatal(&format!("{call}: a committed descriptor")));
    or_fatal(f(s));
    if !d.leaf.is_null() {
        // SAFETY: the leaf box of `buf`; the descriptor that borrowed it is
        // gone (committed).
        let leaf = unsafe { Box::from_raw(d.leaf) };
        // SAFETY: the client's event (checked non-constant at Prepare).
        unsafe { *d.user_lc = c_event(*leaf) };
    }
}

/// `gex_AM_CommitRequestMedium[M]`, `gex_AM_CommitReplyMedium[M]`.
#[no_mangle]
pub unsafe extern "C" fn _gex_AM_CommitMedium(
    sd: gex_AM_SrcDesc_t,
    handler: gex_AM_Index_t,
    nbytes: usize,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) {
    const CALL: &str = "gex_AM_CommitMedium";
    // SAFETY: the header passes `nargs` arguments; a prepared descriptor.
    unsafe {
        let a = args(nargs, argv, CALL);
        commit(sd, CALL, |s| s.commit_medium(handler, nbytes, a))
    }
}

/// `gex_AM_CommitRequestLong[M]`, `gex_AM_CommitReplyLong[M]`.
#[no_mangle]
pub unsafe extern "C" fn _gex_AM_CommitLong(
    sd: gex_AM_SrcDesc_t,
    handler: gex_AM_Index_t,
    nbytes: usize,
    dest_addr: *mut c_void,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) {
    const CALL: &str = "gex_AM_CommitLong";
    // SAFETY: the header passes `nargs` arguments; a prepared descriptor.
    unsafe {
        let a = args(nargs, argv, CALL);
        commit(sd, CALL, |s| {
            s.commit_long(handler, nbytes, dest_addr as usize, a)
        })
    }
}

/// The descriptor behind `sd`, checked to be of `kind` (the call's).
///
/// # Safety
/// As [`desc`].
unsafe fn desc_of<'a>(sd: gex_AM_SrcDesc_t, kind: u32, call: &str) -> &'a mut CSrcDesc {
    // SAFETY: caller's contract.
    let d = unsafe { desc(sd, call) };
    if d.kind != kind {
        gex::fatal(&format!(
            "{call}: the descriptor comes from gex_AM_Prepare{}",
            kind_name(d.kind)
        ));
    }
    d
}

/// `gex_AM_Commit{Request,Reply}{Medium,Long}[M]_v2`: `kind` is the
/// call's (checked against the Prepare's); `commit_flags` may hold
/// `GEX_FLAG_IMMEDIATE`, which changes nothing here: a Commit never waits
/// for resources in gex, so it always sends and returns 0.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn _gex_AM_Commit_v2(
    sd: gex_AM_SrcDesc_t,
    kind: c_uint,
    handler: gex_AM_Index_t,
    nbytes: usize,
    dest_addr: *mut c_void,
    commit_flags: gex_Flags_t,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) -> c_int {
    let call = format!("gex_AM_Commit{}_v2", kind_name(kind));
    if commit_flags & !gex::Flags::IMMEDIATE.bits() != 0 {
        gex::fatal(&format!(
            "{call}: commit_flags {commit_flags:#x}: only GEX_FLAG_IMMEDIATE is accepted"
        ));
    }
    // SAFETY: a prepared descriptor (checked for its kind); the header
    // passes `nargs` arguments.
    unsafe {
        desc_of(sd, kind, &call);
        let a = args(nargs, argv, &call);
        if kind & KIND_LONG != 0 {
            commit(sd, &call, |s| {
                s.commit_long(handler, nbytes, dest_addr as usize, a)
            })
        } else {
            commit(sd, &call, |s| s.commit_medium(handler, nbytes, a))
        }
    }
    0
}

/// Cancels `sd` (of `kind`): frees it without sending; the Prepare's
/// restriction on the thread ends. `flags` must be 0.
///
/// # Safety
/// `sd` is a prepared, uncommitted descriptor of this library.
unsafe fn cancel(sd: gex_AM_SrcDesc_t, kind: u32, flags: gex_Flags_t) -> c_int {
    let call = format!("gex_AM_Cancel{}", kind_name(kind));
    if flags != 0 {
        gex::fatal(&format!("{call}: flags {flags:#x} must be 0"));
    }
    // SAFETY: caller's contract; checked for its kind, then freed here.
    let mut d = unsafe {
        desc_of(sd, kind, &call);
        Box::from_raw(sd)
    };
    if d.sd.take().is_none() {
        gex::fatal(&format!("{call}: a committed descriptor"));
    }
    if !d.token.is_null() {
        // SAFETY: a reply's descriptor, dropped unsent just above: the
        // token it took is usable again (the handler may reply); the
        // record is the running handler's (a reply descriptor is consumed
        // in its handler).
        unsafe { untake_req(&mut *d.token) };
    }
    // The Rust descriptor is dropped above without a commit: nothing was
    // sent. The leaf box it borrowed goes after it; the client's event
    // stays undefined, as the spec says.
    if !d.leaf.is_null() {
        // SAFETY: the leaf box of `buf`; its borrower is gone.
        drop(unsafe { Box::from_raw(d.leaf) });
    }
    0
}

/// `gex_AM_CancelRequestMedium`.
#[no_mangle]
pub unsafe extern "C" fn gex_AM_CancelRequestMedium(
    sd: gex_AM_SrcDesc_t,
    flags: gex_Flags_t,
) -> c_int {
    // SAFETY: a prepared descriptor (caller's contract).
    unsafe { cancel(sd, KIND_REQUEST | KIND_MEDIUM, flags) }
}

/// `gex_AM_CancelReplyMedium`.
#[no_mangle]
pub unsafe extern "C" fn gex_AM_CancelReplyMedium(
    sd: gex_AM_SrcDesc_t,
    flags: gex_Flags_t,
) -> c_int {
    // SAFETY: a prepared descriptor (caller's contract).
    unsafe { cancel(sd, KIND_REPLY | KIND_MEDIUM, flags) }
}

/// `gex_AM_CancelRequestLong`.
#[no_mangle]
pub unsafe extern "C" fn gex_AM_CancelRequestLong(
    sd: gex_AM_SrcDesc_t,
    flags: gex_Flags_t,
) -> c_int {
    // SAFETY: a prepared descriptor (caller's contract).
    unsafe { cancel(sd, KIND_REQUEST | KIND_LONG, flags) }
}

/// `gex_AM_CancelReplyLong`.
#[no_mangle]
pub unsafe extern "C" fn gex_AM_CancelReplyLong(sd: gex_AM_SrcDesc_t, flags: gex_Flags_t) -> c_int {
    // SAFETY: a prepared descriptor (caller's contract).
    unsafe { cancel(sd, KIND_REPLY | KIND_LONG, flags) }
}
