//! The GASNet-1 interface of `gasnet.h` (spec v0.5, and the `gasnet_init` +
//! `gasnet_attach` pair of later GASNet-1 releases): job control over the
//! primordial team, Active Messages through a handler table of their own,
//! and the named split-phase barrier. (Puts, gets and their
//! synchronisation are inline in `gasnet.h` over the EX calls.)
//!
//! GASNet-1 handlers are registered without a category or an argument
//! count, which EX entries carry: `gasnet_attach` registers each one on
//! the primordial endpoint at its own index as a GASNet-1 entry
//! (`gex::am::HandlerEntry::gasnet1`: any category, request or reply, any
//! argument count), so a GASNet-1 message is an EX message to that index
//! with the client's arguments and payload, and the limits are the EX
//! ones (`gasnet_AMMaxMedium` is the smaller of the Medium LUBs,
//! `gasnet_AMMaxLongReply` the Long reply LUB).

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

use gex::am::{AmMsg, AmRequest, HandlerEntry, Injected, Replied, RequestToken};
use gex::rma::Rma;
use gex::{AmCategory, Error, Flags, Lc, Tm, TmRef, AM_MAX_ARGS};

use crate::am::{args, call, take_req, CReg, CToken};
use crate::types::*;

/// `gasnet_node_t`.
pub type gasnet_node_t = u32;
/// `gasnet_handler_t`.
pub type gasnet_handler_t = u8;

/// `gasnet_handlerentry_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct gasnet_handlerentry_t {
    pub index: gasnet_handler_t,
    pub fnptr: gex_AM_Fn_t,
}

/// `gasnet_seginfo_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct gasnet_seginfo_t {
    pub addr: *mut c_void,
    pub size: usize,
}

/// The client, endpoint and primordial team once GASNet-1 is initialised.
static G1: OnceLock<(usize, usize, usize)> = OnceLock::new();

/// The primordial team of `gasnet_init`, or of `gex_Client_Init` (the
/// GASNet-1 names of `gasnetex.h` serve EX clients too).
fn tm_handle(call: &str) -> gex_TM_t {
    match G1.get() {
        Some(&(_, _, tm)) => tm as gex_TM_t,
        None => crate::core::primordial_tm().unwrap_or_else(|| {
            gex::fatal(&format!(
                "{call}: called before gasnet_init or gex_Client_Init"
            ))
        }),
    }
}

fn team(call: &str) -> &'static Tm {
    // SAFETY: a handle made by gasnet_init.
    unsafe { crate::types::team(tm_handle(call), call) }
}

/// The primordial team (`gasnet.h`'s puts and gets go through it).
#[no_mangle]
pub extern "C" fn _gasnet_tm() -> gex_TM_t {
    tm_handle("gasnet.h")
}

/// The EX handler of a GASNet-1 entry: calls `f` as the message's
/// category requires, with its arguments.
fn g1_handler(
    ep_h: usize,
    f: unsafe extern "C" fn(),
) -> impl Fn(gex::am::Token<'_>, &AmMsg<'_>) + Send + Sync + 'static {
    let reg = CReg::leak(ep_h as gex_EP_t);
    move |tok, msg| {
        let a = msg.args();
        let long = msg.category() == AmCategory::Long;
        CToken::with(tok, long, reg, |_, t| {
            let p = msg.payload();
            // SAFETY: the client registered `f` for this index, with the
            // argument list of the GASNet-1 messages it sends to it (the
            // GASNet-1 contract: a handler's category and count are the
            // client's to keep).
            unsafe {
                match msg.category() {
                    AmCategory::Short => call::call_short(f, t, a),
                    AmCategory::Medium => {
                        call::call_medlong(f, t, p.as_ptr() as *mut c_void, p.len(), a)
                    }
                    AmCategory::Long => {
                        let buf = if p.is_empty() {
                            msg.dest_addr()
                        } else {
                            p.as_ptr() as usize
                        };
                        call::call_medlong(f, t, buf as *mut c_void, p.len(), a)
                    }
                }
            }
        })
    }
}

/// `gasnet_init(&argc, &argv)` (GASNet-1 releases): joins the job.
#[no_mangle]
pub unsafe extern "C" fn _gasnet_init2(argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int {
    if G1.get().is_some() {
        return code(Error::bad_arg("gasnet_init: called twice"));
    }
    let (mut c, mut e, mut t) = (std::ptr::null(), std::ptr::null(), std::ptr::null());
    // SAFETY: out-pointers to locals; a static name.
    let r = unsafe {
        crate::core::gex_Client_Init(
            &mut c,
            &mut e,
            &mut t,
            c"GASNET".as_ptr(),
            argc,
            argv,
            Flags::USES_GASNET1.bits(),
        )
    };
    if r == GASNET_OK {
        let _ = G1.set((c as usize, e as usize, t as usize));
        crate::fast::publish_g1(t);
    }
    r
}

/// `gasnet_attach(table, numentries, segsize, minheapoffset)`: registers
/// the handler table and attaches the segment (collective, ends with a
/// barrier). A `segsize` that is not a page multiple is rounded up.
#[no_mangle]
pub unsafe extern "C" fn gasnet_attach(
    table: *mut gasnet_handlerentry_t,
    numentries: c_int,
    segsize: usize,
    _minheapoffset: usize,
) -> c_int {
    const CALL: &str = "gasnet_attach";
    let Some(&(_, ep, tm)) = G1.get() else {
        return code(Error::not_init(format!(
            "{CALL}: called before gasnet_init"
        )));
    };
    // SAFETY: a handle made by gasnet_init.
    let cep = unsafe { obj(ep as gex_EP_t, CALL) };
    if numentries > 0 && !table.is_null() {
        // SAFETY: `numentries` entries (caller's contract).
        let t = unsafe { std::slice::from_raw_parts_mut(table, numentries as usize) };
        if let Err(e) = register_g1(cep, ep, t) {
            return code(e);
        }
    }
    let page = gex::system::page_size();
    let size = if segsize == usize::MAX {
        gex::system::max_local_segment_size()
            .unwrap_or(64 << 20)
            .min(256 << 20)
    } else {
        segsize.max(page).div_ceil(page) * page
    };
    let mut seg = std::ptr::null();
    // SAFETY: the primordial team's handle.
    unsafe { crate::core::gex_Segment_Attach(&mut seg, tm as gex_TM_t, size) }
}

/// Registers GASNet-1 handlers on the primordial endpoint as GASNet-1
/// entries of the EX table (the AM layer's rules: fixed indices in 128 to
/// 255 not taken yet; index 0 entries get the highest free index, in table
/// order, written back to the client's table). Nothing is registered if an
/// entry is refused.
fn register_g1(cep: &CEp, ep_h: usize, t: &mut [gasnet_handlerentry_t]) -> gex::Result<()> {
    const CALL: &str = "gasnet_attach";
    let mut table = Vec::with_capacity(t.len());
    for (i, e) in t.iter().enumerate() {
        let Some(f) = e.fnptr else {
            return Err(Error::bad_arg(format!("{CALL}: table[{i}].fnptr is NULL")));
        };
        table.push(
            HandlerEntry::gasnet1(e.index, g1_handler(ep_h, f))
                .with_name(format!("GASNet-1 handler table[{i}]")),
        );
    }
    gex::am::register_handlers(&cep.ep, &mut table)
        .map_err(|err| Error::new(err.kind(), format!("{CALL}: {}", err.message())))?;
    for (e, r) in t.iter_mut().zip(&table) {
        e.index = r.index;
    }
    Ok(())
}

/// `gasnet_init(&argc, &argv, table, numentries, segbase, segsize,
/// allowFaults)` (spec v0.5): `gasnet_init` and `gasnet_attach` in one.
/// `segbase` is a hint gex ignores; `allowFaults` has no meaning here.
#[no_mangle]
pub unsafe extern "C" fn _gasnet_init7(
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
    table: *mut gasnet_handlerentry_t,
    numentries: c_int,
    _segbase: *mut c_void,
    segsize: usize,
    _allow_faults: c_int,
) -> c_int {
    // SAFETY: caller's contract, passed through.
    let r = unsafe { _gasnet_init2(argc, argv) };
    if r != GASNET_OK {
        return r;
    }
    // SAFETY: caller's contract, passed through.
    unsafe { gasnet_attach(table, numentries, segsize, 0) }
}

/// `gasnet_mynode`.
#[no_mangle]
pub extern "C" fn gasnet_mynode() -> gasnet_node_t {
    team("gasnet_mynode").rank()
}

/// `gasnet_nodes`.
#[no_mangle]
pub extern "C" fn gasnet_nodes() -> gasnet_node_t {
    team("gasnet_nodes").size()
}

/// `gasnet_getSegmentInfo`: each rank's segment, by rank.
#[no_mangle]
pub unsafe extern "C" fn gasnet_getSegmentInfo(
    table: *mut gasnet_seginfo_t,
    numentries: c_int,
) -> c_int {
    const CALL: &str = "gasnet_getSegmentInfo";
    let t = team(CALL);
    if table.is_null() && numentries > 0 {
        return code(Error::bad_arg(format!("{CALL}: NULL table")));
    }
    for r in 0..(numentries.max(0) as u32).min(t.size()) {
        // IMMEDIATE: the answer is local, and the query is then legal in a
        // handler too (a handler may run before gasnet_attach returns).
        let got = match t.query_bound_segment(r, Flags::IMMEDIATE) {
            Ok(g) => g,
            Err(e) => return code(e),
        };
        let (addr, size) = got.map_or((0, 0), |b| (b.owner_addr, b.size));
        // SAFETY: `numentries` writable entries (caller's contract).
        unsafe {
            *table.add(r as usize) = gasnet_seginfo_t {
                addr: addr as *mut c_void,
                size,
            }
        };
    }
    GASNET_OK
}

/// `gasnet_getMaxLocalSegmentSize` (and `gasnet_getMaxNativeSegmentSize`).
#[no_mangle]
pub extern "C" fn gasnet_getMaxLocalSegmentSize() -> usize {
    gex::system::max_local_segment_size().unwrap_or(usize::MAX)
}

/// `gasnet_getMaxNativeSegmentSize` (spec v0.5).
#[no_mangle]
pub extern "C" fn gasnet_getMaxNativeSegmentSize() -> usize {
    gasnet_getMaxLocalSegmentSize()
}

/// `gasnet_AMMaxArgs`.
#[no_mangle]
pub extern "C" fn gasnet_AMMaxArgs() -> usize {
    AM_MAX_ARGS
}

/// `gasnet_AMMaxMedium`: the smaller of the request and reply limits.
#[no_mangle]
pub extern "C" fn gasnet_AMMaxMedium() -> usize {
    or_fatal(gex::am::lub_request_medium()).min(or_fatal(gex::am::lub_reply_medium()))
}

/// `gasnet_AMMaxLongRequest`.
#[no_mangle]
pub extern "C" fn gasnet_AMMaxLongRequest() -> usize {
    or_fatal(gex::am::lub_request_long())
}

/// `gasnet_AMMaxLongReply`.
#[no_mangle]
pub extern "C" fn gasnet_AMMaxLongReply() -> usize {
    or_fatal(gex::am::lub_reply_long())
}

fn sent(r: gex::Result<Injected>) -> c_int {
    or_fatal(r);
    GASNET_OK
}

/// `gasnet_AMRequestShortM`.
#[no_mangle]
pub unsafe extern "C" fn _gasnet_AMRequestShort(
    dest: gasnet_node_t,
    handler: gasnet_handler_t,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) -> c_int {
    const CALL: &str = "gasnet_AMRequestShort";
    // SAFETY: the header passes `nargs` arguments.
    let a = unsafe { args(nargs, argv, CALL) };
    sent(team(CALL).request_short(dest, handler, Flags::empty(), a))
}

/// `gasnet_AMRequestMediumM`.
#[no_mangle]
pub unsafe extern "C" fn _gasnet_AMRequestMedium(
    dest: gasnet_node_t,
    handler: gasnet_handler_t,
    source_addr: *const c_void,
    nbytes: usize,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) -> c_int {
    const CALL: &str = "gasnet_AMRequestMedium";
    // SAFETY: the header passes `nargs` arguments; the payload is readable.
    let (a, p) = unsafe { (args(nargs, argv, CALL), bytes(source_addr, nbytes)) };
    sent(team(CALL).request_medium(dest, handler, p, Lc::Now, Flags::empty(), a))
}

/// `gasnet_AMRequestLongM` (and `gasnet_AMRequestLongAsyncM`: the payload is
/// copied or sent before the call returns either way).
#[no_mangle]
pub unsafe extern "C" fn _gasnet_AMRequestLong(
    dest: gasnet_node_t,
    handler: gasnet_handler_t,
    source_addr: *const c_void,
    nbytes: usize,
    dest_addr: *mut c_void,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) -> c_int {
    const CALL: &str = "gasnet_AMRequestLong";
    // SAFETY: the header passes `nargs` arguments; the payload is readable.
    let (a, p) = unsafe { (args(nargs, argv, CALL), bytes(source_addr, nbytes)) };
    let d = dest_addr as usize;
    sent(team(CALL).request_long(dest, handler, p, d, Lc::Now, Flags::empty(), a))
}

fn replied(ct: &mut CToken, r: gex::Result<Replied<'static>>) -> c_int {
    crate::am::replied(ct, r)
}

/// The request token for a GASNet-1 reply.
unsafe fn req<'a>(token: gex_Token_t, call: &str) -> (&'a mut CToken, RequestToken<'static>) {
    // SAFETY: a running handler's token (caller's contract).
    unsafe { take_req(token, call) }
}

pub type gex_Token_t = crate::am::gex_Token_t;

/// `gasnet_AMReplyShortM`.
#[no_mangle]
pub unsafe extern "C" fn _gasnet_AMReplyShort(
    token: gex_Token_t,
    handler: gasnet_handler_t,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) -> c_int {
    const CALL: &str = "gasnet_AMReplyShort";
    // SAFETY: the header passes `nargs` arguments; a running handler's token.
    let (a, (ct, tok)) = unsafe { (args(nargs, argv, CALL), req(token, CALL)) };
    let r = tok.reply_short(handler, Flags::empty(), a);
    replied(ct, r)
}

/// `gasnet_AMReplyMediumM`.
#[no_mangle]
pub unsafe extern "C" fn _gasnet_AMReplyMedium(
    token: gex_Token_t,
    handler: gasnet_handler_t,
    source_addr: *const c_void,
    nbytes: usize,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) -> c_int {
    const CALL: &str = "gasnet_AMReplyMedium";
    // SAFETY: as for the Short reply; the payload is readable.
    let (a, p, (ct, tok)) = unsafe {
        (
            args(nargs, argv, CALL),
            bytes(source_addr, nbytes),
            req(token, CALL),
        )
    };
    let r = tok.reply_medium(handler, p, Lc::Now, Flags::empty(), a);
    replied(ct, r)
}

/// `gasnet_AMReplyLongM`.
#[no_mangle]
pub unsafe extern "C" fn _gasnet_AMReplyLong(
    token: gex_Token_t,
    handler: gasnet_handler_t,
    source_addr: *const c_void,
    nbytes: usize,
    dest_addr: *mut c_void,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) -> c_int {
    const CALL: &str = "gasnet_AMReplyLong";
    // SAFETY: as for the Medium reply.
    let (a, p, (ct, tok)) = unsafe {
        (
            args(nargs, argv, CALL),
            bytes(source_addr, nbytes),
            req(token, CALL),
        )
    };
    let r = tok.reply_long(handler, p, dest_addr as usize, Lc::Now, Flags::empty(), a);
    replied(ct, r)
}

/// `gasnet_barrier_notify`.
#[no_mangle]
pub extern "C" fn gasnet_barrier_notify(id: c_int, flags: c_int) {
    or_fatal(gex::coll::barrier_notify(id, flags))
}

/// `gasnet_barrier_wait`: `GASNET_OK` or `GASNET_ERR_BARRIER_MISMATCH`.
#[no_mangle]
pub extern "C" fn gasnet_barrier_wait(id: c_int, flags: c_int) -> c_int {
    rc(gex::coll::barrier_wait(id, flags))
}

/// `gasnet_barrier_try`: `GASNET_OK`, `GASNET_ERR_NOT_READY` or
/// `GASNET_ERR_BARRIER_MISMATCH`.
#[no_mangle]
pub extern "C" fn gasnet_barrier_try(id: c_int, flags: c_int) -> c_int {
    rc(gex::coll::barrier_try(id, flags))
}

/// `gasnet_barrier`: a notify and a wait; `GASNET_OK` or
/// `GASNET_ERR_BARRIER_MISMATCH`.
#[no_mangle]
pub extern "C" fn gasnet_barrier(id: c_int, flags: c_int) -> c_int {
    rc(gex::coll::barrier_blocking(id, flags))
}

/// `gasnet_barrier_result`: 0 with the last completed barrier's name in
/// `*id` if some rank named it, non-zero (and `*id` untouched) if every
/// rank was anonymous.
#[no_mangle]
pub unsafe extern "C" fn gasnet_barrier_result(id: *mut c_int) -> c_int {
    match gex::coll::barrier_result() {
        Some(v) => {
            if id.is_null() {
                gex::fatal("gasnet_barrier_result: id is NULL");
            }
            // SAFETY: checked non-NULL; writable (caller's contract).
            unsafe { *id = v };
            0
        }
        None => 1,
    }
}

/// `gasnet_memset`.
#[no_mangle]
pub extern "C" fn gasnet_memset(node: gasnet_node_t, dest: *mut c_void, val: c_int, nbytes: usize) {
    const CALL: &str = "gasnet_memset";
    or_fatal(team(CALL).memset_blocking(node, dest as usize, val as u8, nbytes, Flags::empty()));
}

/// `gasnet_memset_nbi`: complete before it returns (an NBI operation
/// may be), so the NBI syncs have nothing of it to wait for.
#[no_mangle]
pub extern "C" fn gasnet_memset_nbi(
    node: gasnet_node_t,
    dest: *mut c_void,
    val: c_int,
    nbytes: usize,
) {
    const CALL: &str = "gasnet_memset_nbi";
    or_fatal(team(CALL).memset_blocking(node, dest as usize, val as u8, nbytes, Flags::empty()));
}

/// `gasnet_memset_nb`.
#[no_mangle]
pub extern "C" fn gasnet_memset_nb(
    node: gasnet_node_t,
    dest: *mut c_void,
    val: c_int,
    nbytes: usize,
) -> gex_Event_t {
    const CALL: &str = "gasnet_memset_nb";
    c_event(or_fatal(team(CALL).memset_nb(
        node,
        dest as usize,
        val as u8,
        nbytes,
        Flags::empty(),
    )))
}
