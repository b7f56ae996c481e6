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

/// What a `gex_Token_t` points to: a record on the stack of the thread
/// running the handler, valid until the handler returns.
pub struct CToken {
    pub(crate) srcrank: gex_Rank_t,
    pub(crate) is_req: bool,
    pub(crate) is_long: bool,
    pub(crate) entry: *const gex_AM_Entry_t,
    pub(crate) ep: gex_EP_t,
    /// The request token, until a reply consumes it.
    pub(crate) req: Option<RequestToken<'static>>,
}

impl CToken {
    /// The record for a handler called as a request or a reply.
    pub(crate) fn new(
        tok: gex::am::Token<'_>,
        is_long: bool,
        entry: *const gex_AM_Entry_t,
        ep: gex_EP_t,
    ) -> CToken {
        match tok {
            gex::am::Token::Request(r) => CToken::of(r.src_rank(), Some(r), is_long, entry, ep),
            gex::am::Token::Reply(r) => CToken::of(r.src_rank(), None, is_long, entry, ep),
        }
    }

    /// The record for a message from `src`, with the request token `req`
    /// of a request.
    pub(crate) fn of(
        src: gex_Rank_t,
        req: Option<RequestToken<'_>>,
        is_long: bool,
        entry: *const gex_AM_Entry_t,
        ep: gex_EP_t,
    ) -> CToken {
        CToken {
            srcrank: src,
            is_req: req.is_some(),
            is_long,
            entry,
            ep,
            // SAFETY: only the lifetime changes; the record (and with it
            // the token) ends with the handler that made it, and C may use
            // the token only inside the handler.
            req: req.map(|r| unsafe {
                std::mem::transmute::<RequestToken<'_>, RequestToken<'static>>(r)
            }),
        }
    }
}

pub type gex_Token_t = *mut CToken;

/// Runs the C handler `f` for `msg` with the token record `ct`.
fn invoke(f: unsafe extern "C" fn(), ct: &mut CToken, msg: &AmMsg<'_>) {
    let t = (ct as *mut CToken).cast::<c_void>();
    let args = msg.args();
    match msg.category() {
        // SAFETY: the AM layer checked `args.len()` against the registered
        // count and the category against the registered one; the C
        // function's type is the one its registration promised.
        AmCategory::Short => unsafe { call::call_short(f, t, args) },
        cat => {
            let p = msg.payload();
            let buf = if p.is_empty() && cat == AmCategory::Long {
                msg.dest_addr() as *mut c_void
            } else {
                p.as_ptr() as *mut c_void
            };
            // SAFETY: as above.
            unsafe { call::call_medlong(f, t, buf, p.len(), args) }
        }
    }
}

fn entry_ptr(cell: &'static OnceLock<SyncEntry>) -> *const gex_AM_Entry_t {
    cell.get().map_or(std::ptr::null(), |e| &e.0 as *const _)
}

/// A registered C handler's closure body: the token record (source rank
/// `src`, the request token `req` of a request, the library's copy of the
/// entry in `cell`, the endpoint `ep_h`), then the C function `f`.
fn dispatch(
    f: unsafe extern "C" fn(),
    cell: &'static OnceLock<SyncEntry>,
    ep_h: usize,
    src: gex::Rank,
    req: Option<RequestToken<'_>>,
    msg: &AmMsg<'_>,
) {
    let long = msg.category() == AmCategory::Long;
    let mut ct = CToken::of(src, req, long, entry_ptr(cell), ep_h as gex_EP_t);
    invoke(f, &mut ct, msg);
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
    let ep_h = ep as usize;
    let mut cells = Vec::with_capacity(numentries);
    let mut rust = Vec::with_capacity(numentries);
    for (i, e) in entries.iter().enumerate() {
        let Some(f) = e.gex_fnptr else {
            return code(Error::bad_arg(format!(
                "{CALL}: table[{i}].gex_fnptr is NULL"
            )));
        };
        let cell: &'static OnceLock<SyncEntry> = Box::leak(Box::new(OnceLock::new()));
        cells.push(cell);
        let fl = match flags_checked(e.gex_flags, CALL) {
            Ok(f) => f,
            Err(err) => return code(err),
        };
        let category = fl - Flags::AM_REQREP;
        let mut h = match (fl.contains(Flags::AM_REQUEST), fl.contains(Flags::AM_REPLY)) {
            (true, false) => HandlerEntry::request(
                e.gex_index,
                category,
                e.gex_nargs,
                move |tok: RequestToken<'_>, msg: &AmMsg<'_>| {
                    dispatch(f, cell, ep_h, tok.src_rank(), Some(tok), msg)
                },
            ),
            (false, true) => {
                HandlerEntry::reply(e.gex_index, category, e.gex_nargs, move |tok, msg| {
                    dispatch(f, cell, ep_h, tok.src_rank(), None, msg)
                })
            }
            (true, true) => HandlerEntry::req_rep(
                e.gex_index,
                category,
                e.gex_nargs,
                move |tok, msg| match tok {
                    gex::am::Token::Request(r) => {
                        dispatch(f, cell, ep_h, r.src_rank(), Some(r), msg)
                    }
                    gex::am::Token::Reply(r) => dispatch(f, cell, ep_h, r.src_rank(), None, msg),
                },
            ),
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
    for ((e, h), cell) in entries.iter_mut().zip(&rust).zip(cells) {
        e.gex_index = h.index;
        let _ = cell.set(SyncEntry(*e));
    }
    GASNET_OK
}

/// The arguments of an `[M]` form.
///
/// # Safety
/// `args` points to `nargs` arguments (the header's wrappers pass an array).
pub(crate) unsafe fn args<'a>(
    nargs: c_uint,
    args: *const gex_AM_Arg_t,
    call: &str,
) -> &'a [gex_AM_Arg_t] {
    if nargs as usize > AM_MAX_ARGS {
        gex::fatal(&format!(
            "{call}: {nargs} arguments, more than {AM_MAX_ARGS}"
        ));
    }
    if nargs == 0 {
        return &[];
    }
    // SAFETY: caller's contract.
    unsafe { std::slice::from_raw_parts(args, nargs as usize) }
}

/// Runs `f` with the `Lc` an `lc_opt` pointer names; a real event pointer
/// gets the leaf event written back.
///
/// # Safety
/// `lc_opt` is one of the `GEX_EVENT_NOW/DEFER/GROUP` constants, NULL, or
/// writable.
pub(crate) unsafe fn with_lc<R>(
    lc_opt: *mut gex_Event_t,
    call: &str,
    f: impl FnOnce(Lc<'_>) -> R,
) -> R {
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
pub(crate) unsafe fn take_req<'a>(
    token: gex_Token_t,
    call: &str,
) -> (&'a mut CToken, RequestToken<'static>) {
    if token.is_null() {
        gex::fatal(&format!("{call}: NULL token"));
    }
    // SAFETY: the token of a running handler (caller's contract): the
    // record is alive on this thread's stack.
    let ct = unsafe { &mut *token };
    match ct.req.take() {
        Some(r) => (ct, r),
        None if ct.is_req => gex::fatal(&format!(
            "{call}: this request handler has already replied (one reply per request)"
        )),
        None => gex::fatal(&format!("{call}: called from a reply handler")),
    }
}

pub(crate) fn replied(ct: &mut CToken, r: gex::Result<Replied<'static>>) -> c_int {
    match or_fatal(r) {
        Replied::Sent => GASNET_OK,
        Replied::NoOp(tok) => {
            ct.req = Some(tok);
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
            gex_ep: ct.ep,
            gex_entry: ct.entry,
            gex_is_req: ct.is_req as c_int,
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

/// The request token of a running request handler, for a query.
unsafe fn req_ref<'a>(token: gex_Token_t, call: &str) -> &'a RequestToken<'static> {
    if token.is_null() {
        gex::fatal(&format!("{call}: NULL token"));
    }
    // SAFETY: the token of a running handler (caller's contract).
    match unsafe { &(*token).req } {
        Some(r) => r,
        None => gex::fatal(&format!(
            "{call}: only in a request handler that has not replied yet"
        )),
    }
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
