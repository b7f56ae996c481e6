//! Active Messages: registration of C handlers in the endpoint's table,
//! requests and replies of every category (the headers' `[M]` forms pass
//! their arguments as an array to the `_gex_AM_*` entry points), token
//! info and payload limits.

use std::ffi::{c_int, c_uint, c_void, CStr};
use std::sync::OnceLock;

use gex::am::{AmMsg, AmRequest, HandlerEntry, Injected, LcOpt, Replied, RequestToken};
use gex::{AmCategory, Error, Flags, Lc, Ti, AM_MAX_ARGS};

#[path = "am_call.rs"]
pub(crate) mod call;

use crate::types::*;

/// The C entry as the library keeps it (`gex_Token_Info`'s `gex_entry`):
/// written once, after registration assigned the index.
struct SyncEntry(gex_AM_Entry_t);
// SAFETY: the raw pointers inside (client data, name) are the client's
// opaque values, only handed back to C, never dereferenced here.
unsafe impl Send for SyncEntry {}
// SAFETY: as for Send; the entry is immutable once set.
unsafe impl Sync for SyncEntry {}

/// What a registered C handler's tokens share, made once at registration
/// (and leaked: handlers stay registered for the process's life): the
/// library's copy of the entry, the endpoint.
pub(crate) struct CReg {
    entry: OnceLock<SyncEntry>,
    ep: gex_EP_t,
}
// SAFETY: `ep` is a handle of this library (a leaked box, never freed),
// only handed back to C; the entry as for `SyncEntry`.
unsafe impl Send for CReg {}
// SAFETY: as for Send; `ep` is never written after construction.
unsafe impl Sync for CReg {}

impl CReg {
    /// A leaked record for endpoint `ep`, its entry unset.
    pub(crate) fn leak(ep: gex_EP_t) -> &'static CReg {
        Box::leak(Box::new(CReg {
            entry: OnceLock::new(),
            ep,
        }))
    }

    fn entry_ptr(&self) -> *const gex_AM_Entry_t {
        self.entry
            .get()
            .map_or(std::ptr::null(), |e| &e.0 as *const _)
    }
}

/// What a `gex_Token_t` points to: a record on the stack of the thread
/// running the handler, valid until the handler returns. A request's token
/// stays where the AM layer passed it to the handler's closure (`slot`);
/// the record points to it, so building the record copies no token, and
/// the one reply moves it out (`live` then false).
pub struct CToken {
    /// The request token of a request (NULL for a reply).
    slot: *mut RequestToken<'static>,
    reg: &'static CReg,
    pub(crate) srcrank: gex_Rank_t,
    /// Whether `slot` holds an unused request token.
    live: bool,
    is_long: bool,
}

impl CToken {
    /// The record for a message from `src` (a Long if `is_long`) to a
    /// handler of `reg`, with the request token in `slot` (NULL: a reply).
    ///
    /// # Safety
    /// A non-NULL `slot` holds a request token that nothing else uses
    /// while the record lives, and outlives the record.
    #[inline(always)]
    pub(crate) unsafe fn new(
        slot: *mut RequestToken<'_>,
        src: gex_Rank_t,
        is_long: bool,
        reg: &'static CReg,
    ) -> CToken {
        CToken {
            // Only the lifetime changes: the record ends with the handler
            // that made it, and C may use the token only inside it.
            slot: slot.cast::<RequestToken<'static>>(),
            reg,
            srcrank: src,
            live: !slot.is_null(),
            is_long,
        }
    }

    /// Runs `f` with the record for the token `tok` (a Long if `is_long`)
    /// of a handler of `reg`, and `f`'s handle for it.
    #[inline(always)]
    pub(crate) fn with<R>(
        tok: gex::am::Token<'_>,
        is_long: bool,
        reg: &'static CReg,
        f: impl FnOnce(&mut CToken, *mut c_void) -> R,
    ) -> R {
        let mut tok = tok;
        let (slot, src) = match &mut tok {
            gex::am::Token::Request(r) => (r as *mut RequestToken<'_>, r.src_rank()),
            gex::am::Token::Reply(r) => (std::ptr::null_mut(), r.src_rank()),
        };
        // SAFETY: `tok` lives in this frame until `f` returns, and only the
        // record uses it.
        let mut ct = unsafe { CToken::new(slot, src, is_long, reg) };
        let t = (&mut ct as *mut CToken).cast::<c_void>();
        f(&mut ct, t)
    }

    fn is_req(&self) -> bool {
        !self.slot.is_null()
    }
}

// A reply moves the request token out of its slot bitwise (`take_req`)
// and the slot's owner (the handler's closure) still drops it when the
// handler returns: sound only while tokens need no drop.
const _: () = assert!(!std::mem::needs_drop::<gex::am::Token<'static>>());
const _: () = assert!(!std::mem::needs_drop::<RequestToken<'static>>());

pub type gex_Token_t = *mut CToken;

/// A registered C handler's closure body: the token record (source rank
/// `src`, the request token in `slot` of a request, `reg`), then the C
/// function `f` through `call`, the caller its registration chose for its
/// category and count.
///
/// # Safety
/// As [`CToken::new`].
#[inline(always)]
unsafe fn dispatch(
    f: unsafe extern "C" fn(),
    call: call::Caller,
    reg: &'static CReg,
    src: gex::Rank,
    slot: *mut RequestToken<'_>,
    msg: &AmMsg<'_>,
) {
    let long = msg.category() == AmCategory::Long;
    // SAFETY: caller's contract.
    let mut ct = unsafe { CToken::new(slot, src, long, reg) };
    // SAFETY: `call` was chosen for the registered category and count,
    // which the AM layer checked this message against; the C function's
    // type is the one its registration promised.
    unsafe { call(f, (&mut ct as *mut CToken).cast::<c_void>(), msg) }
}

/// `gex_EP_RegisterHandlers`: each C entry becomes a Rust handler entry
/// whose closure calls the C function; the table is validated and
/// registered as a whole, and the assigned indices written back.
#[no_mangle]
pub unsafe extern "C" fn gex_EP_RegisterHandlers(
    ep: gex_EP_t,
    table: *mut gex_AM_Entry_t,
    numentries: usize,
) -> c_int {
    const CALL: &str = "gex_EP_RegisterHandlers";
    // SAFETY: a handle of this library.
    let cep = unsafe { obj(ep, CALL) };
    if numentries == 0 {
        return GASNET_OK;
    }
    if table.is_null() {
        return code(Error::bad_arg(format!("{CALL}: NULL table")));
    }
    // SAFETY: `numentries` entries (caller's contract).
    let entries = unsafe { std::slice::from_raw_parts_mut(table, numentries) };
    let mut regs = Vec::with_capacity(numentries);
    let mut rust = Vec::with_capacity(numentries);
    for (i, e) in entries.iter().enumerate() {
        let Some(f) = e.gex_fnptr else {
            return code(Error::bad_arg(format!(
                "{CALL}: table[{i}].gex_fnptr is NULL"
            )));
        };
        let reg = CReg::leak(ep);
        regs.push(reg);
        let fl = match flags_checked(e.gex_flags, CALL) {
            Ok(f) => f,
            Err(err) => return code(err),
        };
        let category = fl - Flags::AM_REQREP;
        // The caller for the category and count, chosen once here (the
        // AM layer rejects other categories and counts).
        let call = if category == Flags::AM_SHORT {
            call::short(e.gex_nargs)
        } else {
            call::medlong(e.gex_nargs)
        }
        .unwrap_or(call::never);
        // SAFETY (each `dispatch`): the request token is the closure's
        // argument, alive and otherwise unused until the closure returns.
        let mut h = match (fl.contains(Flags::AM_REQUEST), fl.contains(Flags::AM_REPLY)) {
            (true, false) => HandlerEntry::request(
                e.gex_index,
                category,
                e.gex_nargs,
                move |mut tok: RequestToken<'_>, msg: &AmMsg<'_>| unsafe {
                    let src = tok.src_rank();
                    dispatch(f, call, reg, src, &mut tok, msg)
                },
            ),
            (false, true) => {
                HandlerEntry::reply(e.gex_index, category, e.gex_nargs, move |tok, msg| unsafe {
                    dispatch(f, call, reg, tok.src_rank(), std::ptr::null_mut(), msg)
                })
            }
            (true, true) => {
                HandlerEntry::req_rep(e.gex_index, category, e.gex_nargs, move |mut tok, msg| {
                    match &mut tok {
                        gex::am::Token::Request(r) => unsafe {
                            let src = r.src_rank();
                            dispatch(f, call, reg, src, r, msg)
                        },
                        gex::am::Token::Reply(r) => unsafe {
                            dispatch(f, call, reg, r.src_rank(), std::ptr::null_mut(), msg)
                        },
                    }
                })
            }
            (false, false) => {
                return code(Error::bad_arg(format!(
                "{CALL}: table[{i}].gex_flags has none of GEX_FLAG_AM_REQUEST, GEX_FLAG_AM_REPLY"
            )))
            }
        };
        if !e.gex_name.is_null() {
            // SAFETY: a C string (the entry's contract).
            let n = unsafe { CStr::from_ptr(e.gex_name) };
            h = h.with_name(n.to_string_lossy().into_owned());
        }
        rust.push(h);
    }
    if let Err(err) = gex::am::register_handlers(&cep.ep, &mut rust) {
        return code(err);
    }
    for ((e, h), reg) in entries.iter_mut().zip(&rust).zip(regs) {
        e.gex_index = h.index;
        let _ = reg.entry.set(SyncEntry(*e));
    }
    GASNET_OK
}

/// The arguments of an `[M]` form.
///
/// # Safety
/// `args` points to `nargs` arguments (the header's wrappers pass an array).
#[inline]
pub(crate) unsafe fn args<'a>(
    nargs: c_uint,
    args: *const gex_AM_Arg_t,
    call: &str,
) -> &'a [gex_AM_Arg_t] {
    if nargs as usize > AM_MAX_ARGS {
        too_many_args(nargs, call);
    }
    if nargs == 0 {
        return &[];
    }
    // SAFETY: caller's contract.
    unsafe { std::slice::from_raw_parts(args, nargs as usize) }
}

/// The end of the job for more than 16 arguments (out of line, so that
/// the fast paths keep `call` in registers).
#[cold]
#[inline(never)]
fn too_many_args(nargs: c_uint, call: &str) -> ! {
    gex::fatal(&format!(
        "{call}: {nargs} arguments, more than {AM_MAX_ARGS}"
    ))
}

/// Runs `f` with the `Lc` an `lc_opt` pointer names; a real event pointer
/// gets the leaf event written back. `GEX_EVENT_NOW`, the common case,
/// runs `f` here (inlined into the exported call); the others go through
/// [`with_lc_other`], out of line.
///
/// # Safety
/// `lc_opt` is one of the `GEX_EVENT_NOW/DEFER/GROUP` constants, NULL, or
/// writable.
#[inline(always)]
pub(crate) unsafe fn with_lc<R>(
    lc_opt: *mut gex_Event_t,
    call: &str,
    f: impl FnOnce(Lc<'_>) -> R,
) -> R {
    if lc_opt as usize == EVENT_NOW {
        return f(Lc::Now);
    }
    // SAFETY: caller's contract.
    unsafe { with_lc_other(lc_opt, call, f) }
}

/// [`with_lc`] for every `lc_opt` but `GEX_EVENT_NOW`.
///
/// # Safety
/// As [`with_lc`].
#[inline(never)]
unsafe fn with_lc_other<R>(lc_opt: *mut gex_Event_t, call: &str, f: impl FnOnce(Lc<'_>) -> R) -> R {
    match lc_opt as usize {
        EVENT_NOW => f(Lc::Now),
        EVENT_DEFER => f(Lc::Defer),
        EVENT_GROUP => f(Lc::Group),
        0 => gex::fatal(&format!("{call}: lc_opt is NULL")),
        _ => {
            let mut leaf = gex::Event::INVALID;
            let r = f(Lc::Event(&mut leaf));
            // SAFETY: a writable event (caller's contract).
            unsafe { *lc_opt = c_event(leaf) };
            r
        }
    }
}

fn injected(r: gex::Result<Injected>) -> c_int {
    match or_fatal(r) {
        Injected::Sent => GASNET_OK,
        Injected::NoOp => 1,
    }
}

/// `gex_AM_RequestShort[M]`.
#[no_mangle]
pub unsafe extern "C" fn _gex_AM_RequestShort(
    tm: gex_TM_t,
    rank: gex_Rank_t,
    handler: gex_AM_Index_t,
    flags: gex_Flags_t,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) -> c_int {
    const CALL: &str = "gex_AM_RequestShort";
    // SAFETY: the header passes `nargs` arguments.
    let a = unsafe { args(nargs, argv, CALL) };
    let f = crate::types::flags(flags, CALL);
    injected(with_tm!(tm, CALL, |t| t.request_short(rank, handler, f, a)))
}

/// `gex_AM_RequestMedium[M]`.
#[no_mangle]
pub unsafe extern "C" fn _gex_AM_RequestMedium(
    tm: gex_TM_t,
    rank: gex_Rank_t,
    handler: gex_AM_Index_t,
    source_addr: *const c_void,
    nbytes: usize,
    lc_opt: *mut gex_Event_t,
    flags: gex_Flags_t,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) -> c_int {
    const CALL: &str = "gex_AM_RequestMedium";
    // SAFETY: the header passes `nargs` arguments; the payload is readable.
    let (a, p) = unsafe { (args(nargs, argv, CALL), bytes(source_addr, nbytes)) };
    let f = crate::types::flags(flags, CALL);
    injected(with_tm!(tm, CALL, |t| {
        // SAFETY: lc_opt per the spec.
        unsafe {
            with_lc(lc_opt, CALL, |lc| {
                t.request_medium(rank, handler, p, lc, f, a)
            })
        }
    }))
}

/// `gex_AM_RequestLong[M]`.
#[no_mangle]
pub unsafe extern "C" fn _gex_AM_RequestLong(
    tm: gex_TM_t,
    rank: gex_Rank_t,
    handler: gex_AM_Index_t,
    source_addr: *const c_void,
    nbytes: usize,
    dest_addr: *mut c_void,
    lc_opt: *mut gex_Event_t,
    flags: gex_Flags_t,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) -> c_int {
    const CALL: &str = "gex_AM_RequestLong";
    // SAFETY: the header passes `nargs` arguments; the payload is readable.
    let (a, p) = unsafe { (args(nargs, argv, CALL), bytes(source_addr, nbytes)) };
    let f = crate::types::flags(flags, CALL);
    let d = dest_addr as usize;
    injected(with_tm!(tm, CALL, |t| {
        // SAFETY: lc_opt per the spec.
        unsafe {
            with_lc(lc_opt, CALL, |lc| {
                t.request_long(rank, handler, p, d, lc, f, a)
            })
        }
    }))
}

/// The request token of `token`, taken for a reply; a reply token or a
/// second reply ends the job.
///
/// # Safety
/// `token` is the token of a running handler.
#[inline]
pub(crate) unsafe fn take_req<'a>(
    token: gex_Token_t,
    call: &str,
) -> (&'a mut CToken, RequestToken<'static>) {
    if token.is_null() {
        no_request_token(None, call);
    }
    // SAFETY: the token of a running handler (caller's contract): the
    // record is alive on this thread's stack.
    let ct = unsafe { &mut *token };
    if !ct.live {
        no_request_token(Some(ct.is_req()), call);
    }
    ct.live = false;
    // SAFETY: a live slot holds an unused request token (`CToken::new`);
    // it is moved out once (`live` is now false) and never read again
    // unless `replied` moves a token back in.
    let tok = unsafe { std::ptr::read(ct.slot) };
    (ct, tok)
}

/// A request token has no drop glue (gex-am's `RequestToken` holds
/// borrowed and plain data only), so dropping a copy taken by [`take_req`]
/// leaves the slot's value an equivalent token; [`untake_req`] relies on it.
const _: () = assert!(!std::mem::needs_drop::<RequestToken<'static>>());

/// Makes the token of `ct` usable again after a negotiated-payload reply
/// that sent nothing: a Prepare that was an `IMMEDIATE` no-op, or a
/// Cancel (the reference lets the handler reply after either).
///
/// # Safety
/// `ct`'s token was taken by [`take_req`], and the value taken has been
/// dropped without a reply being sent.
pub(crate) unsafe fn untake_req(ct: &mut CToken) {
    // `take_req` only read the slot, and the copy it handed out is gone
    // without effect (no drop glue): the slot still holds the token.
    ct.live = true;
}

/// The end of the job for a reply without a request token: a NULL token
/// (`is_req` None), a second reply (`Some(true)`), or a reply handler's
/// (`Some(false)`).
#[cold]
#[inline(never)]
fn no_request_token(is_req: Option<bool>, call: &str) -> ! {
    gex::fatal(&match is_req {
        None => format!("{call}: NULL token"),
        Some(true) => {
            format!("{call}: this request handler has already replied (one reply per request)")
        }
        Some(false) => format!("{call}: called from a reply handler"),
    })
}

#[inline]
pub(crate) fn replied(ct: &mut CToken, r: gex::Result<Replied<'static>>) -> c_int {
    match or_fatal(r) {
        Replied::Sent => GASNET_OK,
        Replied::NoOp(tok) => {
            // SAFETY: the slot the token came from (a request's: `take_req`
            // read it), whose content was moved out: the token goes back.
            unsafe { std::ptr::write(ct.slot, tok) };
            ct.live = true;
            1
        }
    }
}

/// `gex_AM_ReplyShort[M]`.
#[no_mangle]
pub unsafe extern "C" fn _gex_AM_ReplyShort(
    token: gex_Token_t,
    handler: gex_AM_Index_t,
    flags: gex_Flags_t,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) -> c_int {
    const CALL: &str = "gex_AM_ReplyShort";
    // SAFETY: the header passes `nargs` arguments; a running handler's token.
    let (a, (ct, tok)) = unsafe { (args(nargs, argv, CALL), take_req(token, CALL)) };
    let f = crate::types::flags(flags, CALL);
    let r = tok.reply_short(handler, f, a);
    replied(ct, r)
}

/// `gex_AM_ReplyMedium[M]`.
#[no_mangle]
pub unsafe extern "C" fn _gex_AM_ReplyMedium(
    token: gex_Token_t,
    handler: gex_AM_Index_t,
    source_addr: *const c_void,
    nbytes: usize,
    lc_opt: *mut gex_Event_t,
    flags: gex_Flags_t,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) -> c_int {
    const CALL: &str = "gex_AM_ReplyMedium";
    // SAFETY: as for the Short reply; the payload is readable.
    let (a, p, (ct, tok)) = unsafe {
        (
            args(nargs, argv, CALL),
            bytes(source_addr, nbytes),
            take_req(token, CALL),
        )
    };
    let f = crate::types::flags(flags, CALL);
    // SAFETY: lc_opt per the spec.
    let r = unsafe { with_lc(lc_opt, CALL, |lc| tok.reply_medium(handler, p, lc, f, a)) };
    replied(ct, r)
}

/// `gex_AM_ReplyLong[M]`.
#[no_mangle]
pub unsafe extern "C" fn _gex_AM_ReplyLong(
    token: gex_Token_t,
    handler: gex_AM_Index_t,
    source_addr: *const c_void,
    nbytes: usize,
    dest_addr: *mut c_void,
    lc_opt: *mut gex_Event_t,
    flags: gex_Flags_t,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) -> c_int {
    const CALL: &str = "gex_AM_ReplyLong";
    // SAFETY: as for the Medium reply.
    let (a, p, (ct, tok)) = unsafe {
        (
            args(nargs, argv, CALL),
            bytes(source_addr, nbytes),
            take_req(token, CALL),
        )
    };
    let f = crate::types::flags(flags, CALL);
    let d = dest_addr as usize;
    // SAFETY: lc_opt per the spec.
    let r = unsafe { with_lc(lc_opt, CALL, |lc| tok.reply_long(handler, p, d, lc, f, a)) };
    replied(ct, r)
}

/// `gex_Token_Info`: every field is always supported.
#[no_mangle]
pub unsafe extern "C" fn gex_Token_Info(
    token: gex_Token_t,
    info: *mut gex_Token_Info_t,
    _mask: gex_TI_t,
) -> gex_TI_t {
    const CALL: &str = "gex_Token_Info";
    if token.is_null() || info.is_null() {
        gex::fatal(&format!("{CALL}: NULL token or info"));
    }
    // SAFETY: the token of a running handler; `info` writable.
    unsafe {
        let ct = &*token;
        *info = gex_Token_Info_t {
            gex_srcrank: ct.srcrank,
            gex_ep: ct.reg.ep,
            gex_entry: ct.reg.entry_ptr(),
            gex_is_req: ct.is_req() as c_int,
            gex_is_long: ct.is_long as c_int,
        };
    }
    Ti::ALL.bits()
}

/// `gex_AM_MaxArgs`.
#[no_mangle]
pub extern "C" fn gex_AM_MaxArgs() -> c_uint {
    AM_MAX_ARGS as c_uint
}

fn lc_opt(p: *const gex_Event_t) -> LcOpt {
    match p as usize {
        EVENT_NOW | EVENT_DEFER => LcOpt::Now,
        EVENT_GROUP => LcOpt::Group,
        _ => LcOpt::Event,
    }
}

macro_rules! max_calls {
    ($($name:ident => $method:ident),*) => {$(
        #[doc = concat!("`", stringify!($name), "`.")]
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            tm: gex_TM_t,
            other_rank: gex_Rank_t,
            lc_opt_p: *const gex_Event_t,
            flags: gex_Flags_t,
            numargs: c_uint,
        ) -> usize {
            const CALL: &str = stringify!($name);
            let f = crate::types::flags(flags, CALL);
            let lc = lc_opt(lc_opt_p);
            or_fatal(with_tm!(tm, CALL, |t| t.$method(other_rank, lc, f, numargs)))
        }
    )*};
}
max_calls!(
    gex_AM_MaxRequestMedium => max_request_medium,
    gex_AM_MaxRequestLong => max_request_long,
    gex_AM_MaxReplyMedium => max_reply_medium,
    gex_AM_MaxReplyLong => max_reply_long
);

/// The request token of a running request handler, for a query: before
/// or after its reply (the reference answers either way, and its
/// testgasnet asks after replying; see API.md, "Leniencies").
unsafe fn req_ref<'a>(token: gex_Token_t, call: &str) -> &'a RequestToken<'static> {
    if token.is_null() {
        gex::fatal(&format!("{call}: NULL token"));
    }
    // SAFETY: the token of a running handler (caller's contract).
    let ct = unsafe { &*token };
    if !ct.is_req() {
        gex::fatal(&format!("{call}: only in a request handler"));
    }
    // SAFETY: a request's slot holds its token for the whole handler: a
    // reply only read it (`take_req`), and the copy it consumed is gone
    // without effect (no drop glue, asserted above); the query borrows it
    // shared, with no reply in progress on this thread.
    unsafe { &*ct.slot }
}

/// `gex_Token_MaxReplyMedium`.
#[no_mangle]
pub unsafe extern "C" fn gex_Token_MaxReplyMedium(
    token: gex_Token_t,
    lc_opt_p: *const gex_Event_t,
    flags: gex_Flags_t,
    numargs: c_uint,
) -> usize {
    const CALL: &str = "gex_Token_MaxReplyMedium";
    // SAFETY: a running handler's token.
    let r = unsafe { req_ref(token, CALL) };
    or_fatal(r.max_reply_medium(lc_opt(lc_opt_p), crate::types::flags(flags, CALL), numargs))
}

/// `gex_Token_MaxReplyLong`.
#[no_mangle]
pub unsafe extern "C" fn gex_Token_MaxReplyLong(
    token: gex_Token_t,
    lc_opt_p: *const gex_Event_t,
    flags: gex_Flags_t,
    numargs: c_uint,
) -> usize {
    const CALL: &str = "gex_Token_MaxReplyLong";
    // SAFETY: a running handler's token.
    let r = unsafe { req_ref(token, CALL) };
    or_fatal(r.max_reply_long(lc_opt(lc_opt_p), crate::types::flags(flags, CALL), numargs))
}

/// `gex_AM_LUBRequestMedium`.
#[no_mangle]
pub extern "C" fn gex_AM_LUBRequestMedium() -> usize {
    or_fatal(gex::am::lub_request_medium())
}

/// `gex_AM_LUBRequestLong`.
#[no_mangle]
pub extern "C" fn gex_AM_LUBRequestLong() -> usize {
    or_fatal(gex::am::lub_request_long())
}

/// `gex_AM_LUBReplyMedium`.
#[no_mangle]
pub extern "C" fn gex_AM_LUBReplyMedium() -> usize {
    or_fatal(gex::am::lub_reply_medium())
}

/// `gex_AM_LUBReplyLong`.
#[no_mangle]
pub extern "C" fn gex_AM_LUBReplyLong() -> usize {
    or_fatal(gex::am::lub_reply_long())
}

/// `gasnet_AMGetMsgSource` of a token (GASNet-1).
#[no_mangle]
pub unsafe extern "C" fn gasnet_AMGetMsgSource(token: gex_Token_t, srcindex: *mut u32) -> c_int {
    if token.is_null() || srcindex.is_null() {
        return code(Error::bad_arg("gasnet_AMGetMsgSource: NULL argument"));
    }
    // SAFETY: a running handler's token; `srcindex` writable.
    unsafe { *srcindex = (*token).srcrank };
    GASNET_OK
}
