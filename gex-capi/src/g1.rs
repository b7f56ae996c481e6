//! The GASNet-1 interface of `gasnet.h` (spec v0.5, and the `gasnet_init` +
//! `gasnet_attach` pair of later GASNet-1 releases): job control over the
//! primordial team, Active Messages through a handler table of their own,
//! and the named split-phase barrier. (Puts, gets and their
//! synchronisation are inline in `gasnet.h` over the EX calls.)
//!
//! GASNet-1 handlers are registered without a category or an argument
//! count, which the EX tables require; so GASNet-1 messages travel as EX
//! messages to "trampoline" handlers, one per (category, argument count),
//! whose first argument is the GASNet-1 handler index: a Short with 3
//! arguments is an EX Short with 4 to the Short-4 trampoline, which calls
//! the registered C function with the last 3. Messages with 16 arguments
//! (no room for the index) travel as EX Mediums with 16 arguments to an
//! escape trampoline, the index and what kind of message it stands for
//! appended to the payload. A Long request with 16 arguments is a blocking
//! put of its payload followed by that Medium; a Long reply with 16
//! arguments (a handler may not put) carries its payload in the Medium,
//! and the escape copies it to the destination after checking that the
//! range lies in this rank's segment. So `gasnet_AMMaxLongReply` is at
//! most `gasnet_AMMaxMedium` (at least 512 bytes either way, as the spec
//! requires), and any Long reply it allows fits.

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
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

/// The GASNet-1 handler table: C function addresses by index.
static G1_FNS: [AtomicUsize; 256] = [const { AtomicUsize::new(0) }; 256];

/// The trampolines' EX indices: `[category][EX argument count]`, and the
/// escape for 16 arguments.
struct Tramps {
    idx: [[u8; AM_MAX_ARGS + 1]; 3],
    esc: u8,
}
static TRAMPS: OnceLock<Tramps> = OnceLock::new();

/// The escape's trailer: destination and length (for a Long), kind, index.
const TAIL: usize = 18;
const ESC_SHORT: u8 = 0;
const ESC_MEDIUM: u8 = 1;
const ESC_LONG: u8 = 2;
/// A Long whose payload travels in the escape Medium (a reply).
const ESC_LONG_COPY: u8 = 3;

/// Whether `[dest, dest + len)` lies in this rank's bound segment (where a
/// Long's payload must land): checked before the escape trusts a wire
/// address.
fn own_segment_has(dest: usize, len: usize) -> bool {
    let t = team("a GASNet-1 Long");
    match t.query_bound_segment(t.rank(), Flags::IMMEDIATE) {
        Ok(Some(b)) => dest
            .checked_sub(b.owner_addr)
            .is_some_and(|off| off <= b.size && len <= b.size - off),
        _ => false,
    }
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

fn g1_fn(idx: u8, src: u32) -> unsafe extern "C" fn() {
    let f = G1_FNS[idx as usize].load(Ordering::Acquire);
    if f == 0 {
        gex::fatal(&format!(
            "a GASNet-1 Active Message for handler {idx} arrived from rank {src}, but no handler is registered there"
        ));
    }
    // SAFETY: a non-zero entry is a C function address stored by
    // registration.
    unsafe { std::mem::transmute::<usize, unsafe extern "C" fn()>(f) }
}

/// A trampoline: the GASNet-1 index in argument 0.
fn trampoline(ep_h: usize) -> impl Fn(gex::am::Token<'_>, &AmMsg<'_>) + Send + Sync + 'static {
    let reg = CReg::leak(ep_h as gex_EP_t);
    move |tok, msg| {
        let a = msg.args();
        let long = msg.category() == AmCategory::Long;
        CToken::with(tok, long, reg, |ct, t| {
            let f = g1_fn(a[0] as u8, ct.srcrank);
            let p = msg.payload();
            // SAFETY: the client registered `f` for this index, with the
            // argument list of the GASNet-1 message it sends to it.
            unsafe {
                match msg.category() {
                    AmCategory::Short => call::call_short(f, t, &a[1..]),
                    AmCategory::Medium => {
                        call::call_medlong(f, t, p.as_ptr() as *mut c_void, p.len(), &a[1..])
                    }
                    AmCategory::Long => {
                        let buf = if p.is_empty() {
                            msg.dest_addr()
                        } else {
                            p.as_ptr() as usize
                        };
                        call::call_medlong(f, t, buf as *mut c_void, p.len(), &a[1..])
                    }
                }
            }
        })
    }
}

/// The escape trampoline: 16 arguments, the rest in the payload's trailer.
fn escape(ep_h: usize) -> impl Fn(gex::am::Token<'_>, &AmMsg<'_>) + Send + Sync + 'static {
    let reg = CReg::leak(ep_h as gex_EP_t);
    move |tok, msg| {
        let p = msg.payload();
        if p.len() < TAIL {
            gex::fatal("a GASNet-1 16-argument message without its trailer");
        }
        let (data, tail) = p.split_at(p.len() - TAIL);
        let dest = u64::from_ne_bytes(tail[0..8].try_into().unwrap_or_default()) as usize;
        let len = u64::from_ne_bytes(tail[8..16].try_into().unwrap_or_default()) as usize;
        let (kind, idx) = (tail[16], tail[17]);
        let long = kind == ESC_LONG || kind == ESC_LONG_COPY;
        if kind > ESC_LONG_COPY
            || (long && !own_segment_has(dest, len))
            || (kind == ESC_LONG_COPY && len != data.len())
        {
            gex::fatal(&format!(
                "a GASNet-1 16-argument message of kind {kind} for {len} bytes at {dest:#x} ({} in the payload) does not fit this rank's segment",
                data.len()
            ));
        }
        if kind == ESC_LONG_COPY {
            // SAFETY: `[dest, dest + len)` lies in this rank's segment
            // (checked above), which the payload cannot overlap.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dest as *mut u8, len) };
        }
        CToken::with(tok, long, reg, |ct, t| {
            let f = g1_fn(idx, ct.srcrank);
            let a = msg.args();
            // SAFETY: as for the trampolines; a Long's payload is in this
            // rank's segment at `dest` (put or copied there, range checked).
            unsafe {
                match kind {
                    ESC_SHORT => call::call_short(f, t, a),
                    ESC_MEDIUM => {
                        call::call_medlong(f, t, data.as_ptr() as *mut c_void, data.len(), a)
                    }
                    _ => call::call_medlong(f, t, dest as *mut c_void, len, a),
                }
            }
        })
    }
}

/// Registers the trampolines on the primordial endpoint (once).
fn register_trampolines(cep: &CEp, ep_h: usize) -> gex::Result<()> {
    if TRAMPS.get().is_some() {
        return Ok(());
    }
    let cats = [Flags::AM_SHORT, Flags::AM_MEDIUM, Flags::AM_LONG];
    let mut table = Vec::new();
    for cat in cats {
        for n in 1..=AM_MAX_ARGS as u32 {
            table.push(
                HandlerEntry::req_rep(0, cat, n, trampoline(ep_h)).with_name("GASNet-1 trampoline"),
            );
        }
    }
    table.push(
        HandlerEntry::req_rep(0, Flags::AM_MEDIUM, AM_MAX_ARGS as u32, escape(ep_h))
            .with_name("GASNet-1 16-argument escape"),
    );
    gex::am::register_handlers(&cep.ep, &mut table)?;
    let mut idx = [[0u8; AM_MAX_ARGS + 1]; 3];
    for (c, row) in idx.iter_mut().enumerate() {
        for n in 1..=AM_MAX_ARGS {
            row[n] = table[c * AM_MAX_ARGS + n - 1].index;
        }
    }
    let esc = table[3 * AM_MAX_ARGS].index;
    let _ = TRAMPS.set(Tramps { idx, esc });
    Ok(())
}

fn tramps() -> &'static Tramps {
    TRAMPS
        .get()
        .unwrap_or_else(|| gex::fatal("GASNet-1 Active Messages before gasnet_attach"))
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
    if let Err(e) = register_trampolines(cep, ep) {
        return code(e);
    }
    if numentries > 0 && !table.is_null() {
        // SAFETY: `numentries` entries (caller's contract).
        let t = unsafe { std::slice::from_raw_parts_mut(table, numentries as usize) };
        if let Err(e) = register_g1(t) {
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

/// Registers GASNet-1 handlers: fixed indices first (128 to 255, unused),
/// then index 0 entries get the highest free index, in table order.
fn register_g1(t: &mut [gasnet_handlerentry_t]) -> gex::Result<()> {
    const CALL: &str = "gasnet_attach";
    let mut used = [false; 256];
    for (i, u) in used.iter_mut().enumerate() {
        *u = G1_FNS[i].load(Ordering::Acquire) != 0;
    }
    for (i, e) in t.iter().enumerate() {
        if e.fnptr.is_none() {
            return Err(Error::bad_arg(format!("{CALL}: table[{i}].fnptr is NULL")));
        }
        if e.index != 0 {
            if e.index < gex::AM_INDEX_BASE || used[e.index as usize] {
                return Err(Error::bad_arg(format!(
                    "{CALL}: table[{i}].index {} is below {} or already taken",
                    e.index,
                    gex::AM_INDEX_BASE
                )));
            }
            used[e.index as usize] = true;
        }
    }
    for e in t.iter_mut().filter(|e| e.index == 0) {
        let Some(free) = (gex::AM_INDEX_BASE as usize..256).rev().find(|&i| !used[i]) else {
            return Err(Error::resource(format!("{CALL}: no free handler index")));
        };
        used[free] = true;
        e.index = free as u8;
    }
    for e in t.iter() {
        G1_FNS[e.index as usize].store(e.fnptr.map_or(0, |f| f as usize), Ordering::Release);
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

/// `gasnet_AMMaxMedium`: the smaller of the request and reply limits, less
/// the 16-argument escape's trailer.
#[no_mangle]
pub extern "C" fn gasnet_AMMaxMedium() -> usize {
    or_fatal(gex::am::lub_request_medium()).min(or_fatal(gex::am::lub_reply_medium())) - TAIL
}

/// `gasnet_AMMaxLongRequest`.
#[no_mangle]
pub extern "C" fn gasnet_AMMaxLongRequest() -> usize {
    or_fatal(gex::am::lub_request_long())
}

/// `gasnet_AMMaxLongReply`: at most `gasnet_AMMaxMedium`, since a Long
/// reply with 16 arguments carries its payload in the escape Medium.
#[no_mangle]
pub extern "C" fn gasnet_AMMaxLongReply() -> usize {
    or_fatal(gex::am::lub_reply_long()).min(gasnet_AMMaxMedium())
}

/// The escape Medium's payload: what it carries (a Medium's or a Long
/// reply's payload), then the trailer: a Long's destination and length,
/// the kind of message, the GASNet-1 index.
fn escaped(kind: u8, idx: u8, carried: &[u8], dest: usize, len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(carried.len() + TAIL);
    v.extend_from_slice(carried);
    v.extend_from_slice(&(dest as u64).to_ne_bytes());
    v.extend_from_slice(&(len as u64).to_ne_bytes());
    v.extend_from_slice(&[kind, idx]);
    v
}

/// The EX arguments of a trampoline: the index, then the client's.
fn with_index(handler: u8, a: &[gex_AM_Arg_t]) -> ([gex_AM_Arg_t; AM_MAX_ARGS], usize) {
    let mut v = [0; AM_MAX_ARGS];
    v[0] = handler as gex_AM_Arg_t;
    v[1..=a.len()].copy_from_slice(a);
    (v, a.len() + 1)
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
    let (t, tr) = (team(CALL), tramps());
    if a.len() < AM_MAX_ARGS {
        let (v, n) = with_index(handler, a);
        sent(t.request_short(dest, tr.idx[0][n], Flags::empty(), &v[..n]))
    } else {
        let p = escaped(ESC_SHORT, handler, &[], 0, 0);
        sent(t.request_medium(dest, tr.esc, &p, Lc::Now, Flags::empty(), a))
    }
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
    let (t, tr) = (team(CALL), tramps());
    if a.len() < AM_MAX_ARGS {
        let (v, n) = with_index(handler, a);
        sent(t.request_medium(dest, tr.idx[1][n], p, Lc::Now, Flags::empty(), &v[..n]))
    } else {
        let buf = escaped(ESC_MEDIUM, handler, p, 0, 0);
        sent(t.request_medium(dest, tr.esc, &buf, Lc::Now, Flags::empty(), a))
    }
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
    let (t, tr) = (team(CALL), tramps());
    let d = dest_addr as usize;
    if a.len() < AM_MAX_ARGS {
        let (v, n) = with_index(handler, a);
        sent(t.request_long(dest, tr.idx[2][n], p, d, Lc::Now, Flags::empty(), &v[..n]))
    } else {
        or_fatal(t.put_blocking(dest, d, p, Flags::empty()));
        let tl = escaped(ESC_LONG, handler, &[], d, p.len());
        sent(t.request_medium(dest, tr.esc, &tl, Lc::Now, Flags::empty(), a))
    }
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
    let tr = tramps();
    let r = if a.len() < AM_MAX_ARGS {
        let (v, n) = with_index(handler, a);
        tok.reply_short(tr.idx[0][n], Flags::empty(), &v[..n])
    } else {
        let p = escaped(ESC_SHORT, handler, &[], 0, 0);
        tok.reply_medium(tr.esc, &p, Lc::Now, Flags::empty(), a)
    };
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
    let tr = tramps();
    let r = if a.len() < AM_MAX_ARGS {
        let (v, n) = with_index(handler, a);
        tok.reply_medium(tr.idx[1][n], p, Lc::Now, Flags::empty(), &v[..n])
    } else {
        let buf = escaped(ESC_MEDIUM, handler, p, 0, 0);
        tok.reply_medium(tr.esc, &buf, Lc::Now, Flags::empty(), a)
    };
    replied(ct, r)
}

/// `gasnet_AMReplyLongM` (with 16 arguments through the escape, the
/// payload in the Medium: see the module docs).
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
    let tr = tramps();
    let r = if a.len() < AM_MAX_ARGS {
        let (v, n) = with_index(handler, a);
        tok.reply_long(
            tr.idx[2][n],
            p,
            dest_addr as usize,
            Lc::Now,
            Flags::empty(),
            &v[..n],
        )
    } else {
        if p.len() > gasnet_AMMaxLongReply() {
            gex::fatal(&format!(
                "{CALL}: {} bytes is more than gasnet_AMMaxLongReply() ({})",
                p.len(),
                gasnet_AMMaxLongReply()
            ));
        }
        let buf = escaped(ESC_LONG_COPY, handler, p, dest_addr as usize, p.len());
        tok.reply_medium(tr.esc, &buf, Lc::Now, Flags::empty(), a)
    };
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
