//! RMA (`gex_RMA_*`), events (`gex_Event_*`) and NBI (`gex_NBI_*`).
//!
//! Local buffers are C memory the caller keeps valid until the operation
//! completes, as the spec requires: the Rust calls see them as slices
//! whose borrow lasts until the event (a boxed Rust event) is synced.

use std::ffi::{c_int, c_void};

use gex::rma::{Dst, Injected, Rma, Src};
use gex::{Ec, Error, ErrorKind, Flags};

use crate::am::with_lc;
use crate::types::*;

fn injected(r: gex::Result<Injected>) -> c_int {
    match or_fatal(r) {
        Injected::Sent => GASNET_OK,
        Injected::NoOp => 1,
    }
}

/// The source of a put: C memory, or an offset into the local segment with
/// `GEX_FLAG_SELF_SEG_OFFSET`.
///
/// # Safety
/// Without the flag, `src` is readable for `nbytes` until the operation's
/// local completion (the caller's contract).
unsafe fn src<'a>(src: *const c_void, nbytes: usize, f: Flags) -> Src<'a> {
    if f.contains(Flags::SELF_SEG_OFFSET) {
        Src::SegOffset {
            offset: src as usize,
            len: nbytes,
        }
    } else {
        // SAFETY: caller's contract.
        Src::Slice(unsafe { bytes(src, nbytes) })
    }
}

/// The destination of a get.
///
/// # Safety
/// Without `SELF_SEG_OFFSET`, `dst` is writable for `nbytes` and left alone
/// by the program until the operation completes.
unsafe fn dst<'a>(dst: *mut c_void, nbytes: usize, f: Flags) -> Dst<'a> {
    if f.contains(Flags::SELF_SEG_OFFSET) {
        Dst::SegOffset {
            offset: dst as usize,
            len: nbytes,
        }
    } else {
        // SAFETY: caller's contract.
        Dst::Slice(unsafe { bytes_mut(dst, nbytes) })
    }
}

/// Defines an exported RMA initiation call `$name(tm, ..., flags)`: the
/// flags converted (unknown bits end the job naming the call), then `$body`
/// with `$t` the team or TM-pair behind `tm`, `$f` the flags and `$call`
/// the call's name; `$ret` turns the Rust result into the C one.
macro_rules! rma_call {
    ($(#[$m:meta])* $name:ident($($p:ident: $ty:ty),*) -> $cret:ty = $ret:path,
     |$t:ident, $f:ident, $call:ident| $body:expr) => {
        $(#[$m])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(tm: gex_TM_t, $($p: $ty,)* flags: gex_Flags_t) -> $cret {
            const $call: &str = stringify!($name);
            let $f = crate::types::flags(flags, $call);
            $ret(with_tm!(tm, $call, |$t| $body))
        }
    };
}

fn event(r: gex::Result<gex::Event<'static>>) -> gex_Event_t {
    c_event(or_fatal(r))
}

rma_call! {
    /// `gex_RMA_PutBlocking`.
    gex_RMA_PutBlocking(rank: gex_Rank_t, dest: *mut c_void, source: *const c_void, nbytes: usize)
        -> c_int = injected,
    |t, f, CALL| {
        // SAFETY: the source is readable (caller's contract).
        let s = unsafe { src(source, nbytes, f) };
        t.put_blocking(rank, dest as usize, s, f)
    }
}

rma_call! {
    /// `gex_RMA_PutNBI`.
    gex_RMA_PutNBI(
        rank: gex_Rank_t, dest: *mut c_void, source: *const c_void, nbytes: usize,
        lc_opt: *mut gex_Event_t
    ) -> c_int = injected,
    |t, f, CALL| {
        // SAFETY: the source stays readable until local completion and
        // lc_opt is one the spec allows (caller's contract).
        unsafe {
            let s = src(source, nbytes, f);
            with_lc(lc_opt, CALL, |lc| t.put_nbi(rank, dest as usize, s, lc, f))
        }
    }
}

rma_call! {
    /// `gex_RMA_PutNB`.
    gex_RMA_PutNB(
        rank: gex_Rank_t, dest: *mut c_void, source: *const c_void, nbytes: usize,
        lc_opt: *mut gex_Event_t
    ) -> gex_Event_t = event,
    |t, f, CALL| {
        // SAFETY: as for gex_RMA_PutNBI.
        unsafe {
            let s = src(source, nbytes, f);
            with_lc(lc_opt, CALL, |lc| t.put_nb(rank, dest as usize, s, lc, f))
        }
    }
}

rma_call! {
    /// `gex_RMA_GetBlocking`.
    gex_RMA_GetBlocking(dest: *mut c_void, rank: gex_Rank_t, source: *mut c_void, nbytes: usize)
        -> c_int = injected,
    |t, f, _CALL| {
        // SAFETY: the destination is writable (caller's contract).
        let d = unsafe { dst(dest, nbytes, f) };
        t.get_blocking(d, rank, source as usize, f)
    }
}

rma_call! {
    /// `gex_RMA_GetNBI`.
    gex_RMA_GetNBI(dest: *mut c_void, rank: gex_Rank_t, source: *mut c_void, nbytes: usize)
        -> c_int = injected,
    |t, f, _CALL| {
        // SAFETY: the destination is writable until the NBI sync (caller's
        // contract).
        let d = unsafe { dst(dest, nbytes, f) };
        t.get_nbi(d, rank, source as usize, f)
    }
}

rma_call! {
    /// `gex_RMA_GetNB`.
    gex_RMA_GetNB(dest: *mut c_void, rank: gex_Rank_t, source: *mut c_void, nbytes: usize)
        -> gex_Event_t = event,
    |t, f, _CALL| {
        // SAFETY: the destination is writable and left alone until the
        // event is synced (caller's contract), so the event may borrow it
        // for as long as it lives.
        let d: Dst<'static> = unsafe { dst(dest, nbytes, f) };
        t.get_nb(d, rank, source as usize, f)
    }
}

rma_call! {
    /// `gex_RMA_GetBlockingVal`.
    gex_RMA_GetBlockingVal(rank: gex_Rank_t, source: *mut c_void, nbytes: usize)
        -> gex_RMA_Value_t = or_fatal,
    |t, f, _CALL| t.get_blocking_val(rank, source as usize, nbytes, f)
}

rma_call! {
    /// `gex_RMA_PutBlockingVal`.
    gex_RMA_PutBlockingVal(rank: gex_Rank_t, dest: *mut c_void, value: gex_RMA_Value_t, nbytes: usize)
        -> c_int = injected,
    |t, f, _CALL| t.put_blocking_val(rank, dest as usize, value, nbytes, f)
}

rma_call! {
    /// `gex_RMA_PutNBIVal`.
    gex_RMA_PutNBIVal(rank: gex_Rank_t, dest: *mut c_void, value: gex_RMA_Value_t, nbytes: usize)
        -> c_int = injected,
    |t, f, _CALL| t.put_nbi_val(rank, dest as usize, value, nbytes, f)
}

rma_call! {
    /// `gex_RMA_PutNBVal`.
    gex_RMA_PutNBVal(rank: gex_Rank_t, dest: *mut c_void, value: gex_RMA_Value_t, nbytes: usize)
        -> gex_Event_t = event,
    |t, f, _CALL| t.put_nb_val(rank, dest as usize, value, nbytes, f)
}

/// Takes the boxed event behind `e` (NULL and `GEX_EVENT_NO_OP` have none).
///
/// # Safety
/// `e` is a live event of this library.
unsafe fn take(e: gex_Event_t) -> Box<CEvent> {
    // SAFETY: a live boxed event (caller's contract); it is not used again.
    unsafe { Box::from_raw(e) }
}

/// Tests one event; completes and frees it on success. `Ok(true)` for
/// `GEX_EVENT_INVALID`.
///
/// # Safety
/// `*e` is `GEX_EVENT_INVALID`, `GEX_EVENT_NO_OP` or a live event.
unsafe fn test_one(e: &mut gex_Event_t, call: &str) -> gex::Result<bool> {
    if e.is_null() {
        return Ok(true);
    }
    if *e == EVENT_NO_OP {
        return Err(Error::bad_arg(format!("{call}: GEX_EVENT_NO_OP")));
    }
    // SAFETY: a live boxed event (caller's contract).
    let done = match unsafe { &mut **e } {
        CEvent::Op(ev) | CEvent::Kept(ev, _) => ev.test()?,
        CEvent::Coll(h) => h.test()?,
    };
    if done {
        // SAFETY: complete: freed here, and the slot is cleared.
        drop(unsafe { take(*e) });
        *e = std::ptr::null_mut();
    }
    Ok(done)
}

/// `gex_Event_Test`: `GASNET_OK` if complete (the event is then synced),
/// `GASNET_ERR_NOT_READY` otherwise.
#[no_mangle]
pub unsafe extern "C" fn gex_Event_Test(event: gex_Event_t) -> c_int {
    let mut e = event;
    // SAFETY: an event of this library (caller's contract).
    match or_fatal(unsafe { test_one(&mut e, "gex_Event_Test") }) {
        true => GASNET_OK,
        false => ErrorKind::NotReady.code(),
    }
}

/// `gex_Event_Wait`.
#[no_mangle]
pub unsafe extern "C" fn gex_Event_Wait(event: gex_Event_t) {
    const CALL: &str = "gex_Event_Wait";
    if event.is_null() {
        return;
    }
    if event == EVENT_NO_OP {
        gex::fatal(&format!("{CALL}: GEX_EVENT_NO_OP"));
    }
    // SAFETY: a live event of this library (caller's contract); synced here.
    match *unsafe { take(event) } {
        CEvent::Op(ev) => or_fatal(ev.wait()),
        CEvent::Kept(ev, keep) => {
            or_fatal(ev.wait());
            drop(keep);
        }
        CEvent::Coll(h) => or_fatal(h.wait()),
    }
}

/// The events of an array call.
///
/// # Safety
/// `pevent` points to `n` events of this library.
unsafe fn events<'a>(pevent: *mut gex_Event_t, n: usize, call: &str) -> &'a mut [gex_Event_t] {
    if n == 0 {
        return &mut [];
    }
    if pevent.is_null() {
        gex::fatal(&format!("{call}: NULL array"));
    }
    // SAFETY: caller's contract.
    unsafe { std::slice::from_raw_parts_mut(pevent, n) }
}

/// One pass over an array: (completed now, still pending).
///
/// # Safety
/// The entries are events of this library.
unsafe fn sweep(evs: &mut [gex_Event_t], call: &str) -> (usize, usize) {
    let (mut done, mut pending) = (0, 0);
    for e in evs.iter_mut() {
        if e.is_null() {
            continue;
        }
        // SAFETY: caller's contract.
        if or_fatal(unsafe { test_one(e, call) }) {
            done += 1;
        } else {
            pending += 1;
        }
    }
    (done, pending)
}

fn check_array(evs: &[gex_Event_t], flags: gex_Flags_t, call: &str) {
    if flags != 0 {
        gex::fatal(&format!("{call}: flags are reserved and must be 0"));
    }
    if let Some(i) = evs.iter().position(|&e| e == EVENT_NO_OP) {
        gex::fatal(&format!("{call}: entry {i} is GEX_EVENT_NO_OP"));
    }
}

/// `gex_Event_TestSome`.
#[no_mangle]
pub unsafe extern "C" fn gex_Event_TestSome(
    pevent: *mut gex_Event_t,
    numevents: usize,
    flags: gex_Flags_t,
) -> c_int {
    const CALL: &str = "gex_Event_TestSome";
    // SAFETY: caller's contract.
    let evs = unsafe { events(pevent, numevents, CALL) };
    check_array(evs, flags, CALL);
    // SAFETY: events of this library.
    let (done, pending) = unsafe { sweep(evs, CALL) };
    if done > 0 || pending == 0 {
        GASNET_OK
    } else {
        ErrorKind::NotReady.code()
    }
}

/// `gex_Event_WaitSome`.
#[no_mangle]
pub unsafe extern "C" fn gex_Event_WaitSome(
    pevent: *mut gex_Event_t,
    numevents: usize,
    flags: gex_Flags_t,
) {
    const CALL: &str = "gex_Event_WaitSome";
    // SAFETY: caller's contract.
    let evs = unsafe { events(pevent, numevents, CALL) };
    check_array(evs, flags, CALL);
    or_fatal(gex::block_until(|| {
        // SAFETY: events of this library.
        let (d, p) = unsafe { sweep(evs, CALL) };
        d > 0 || p == 0
    }))
}

/// `gex_Event_TestAll`.
#[no_mangle]
pub unsafe extern "C" fn gex_Event_TestAll(
    pevent: *mut gex_Event_t,
    numevents: usize,
    flags: gex_Flags_t,
) -> c_int {
    const CALL: &str = "gex_Event_TestAll";
    // SAFETY: caller's contract.
    let evs = unsafe { events(pevent, numevents, CALL) };
    check_array(evs, flags, CALL);
    // SAFETY: events of this library.
    if unsafe { sweep(evs, CALL) }.1 == 0 {
        GASNET_OK
    } else {
        ErrorKind::NotReady.code()
    }
}

/// `gex_Event_WaitAll`.
#[no_mangle]
pub unsafe extern "C" fn gex_Event_WaitAll(
    pevent: *mut gex_Event_t,
    numevents: usize,
    flags: gex_Flags_t,
) {
    const CALL: &str = "gex_Event_WaitAll";
    // SAFETY: caller's contract.
    let evs = unsafe { events(pevent, numevents, CALL) };
    check_array(evs, flags, CALL);
    // SAFETY: events of this library.
    or_fatal(gex::block_until(|| unsafe { sweep(evs, CALL) }.1 == 0))
}

/// `gex_Event_QueryLeaf`.
#[no_mangle]
pub unsafe extern "C" fn gex_Event_QueryLeaf(
    root: gex_Event_t,
    event_category: gex_EC_t,
) -> gex_Event_t {
    const CALL: &str = "gex_Event_QueryLeaf";
    let ec = Ec::from_bits(event_category)
        .unwrap_or_else(|| gex::fatal(&format!("{CALL}: unknown category {event_category:#x}")));
    if root.is_null() {
        return std::ptr::null_mut();
    }
    if root == EVENT_NO_OP {
        gex::fatal(&format!("{CALL}: GEX_EVENT_NO_OP"));
    }
    // SAFETY: a live event of this library (caller's contract).
    match unsafe { &*root } {
        CEvent::Op(ev) | CEvent::Kept(ev, _) => c_event(or_fatal(ev.query_leaf(ec))),
        CEvent::Coll(_) => std::ptr::null_mut(),
    }
}

fn ec(mask: gex_EC_t, call: &str) -> Ec {
    Ec::from_bits(mask)
        .unwrap_or_else(|| gex::fatal(&format!("{call}: unknown category {mask:#x}")))
}

/// `gex_NBI_Test`.
#[no_mangle]
pub extern "C" fn gex_NBI_Test(event_mask: gex_EC_t, flags: gex_Flags_t) -> c_int {
    const CALL: &str = "gex_NBI_Test";
    match or_fatal(gex::nbi::test(
        ec(event_mask, CALL),
        crate::types::flags(flags, CALL),
    )) {
        true => GASNET_OK,
        false => ErrorKind::NotReady.code(),
    }
}

/// `gex_NBI_Wait`.
#[no_mangle]
pub extern "C" fn gex_NBI_Wait(event_mask: gex_EC_t, flags: gex_Flags_t) {
    const CALL: &str = "gex_NBI_Wait";
    or_fatal(gex::nbi::wait(
        ec(event_mask, CALL),
        crate::types::flags(flags, CALL),
    ))
}

/// `gex_NBI_BeginAccessRegion`.
#[no_mangle]
pub extern "C" fn gex_NBI_BeginAccessRegion(flags: gex_Flags_t) {
    const CALL: &str = "gex_NBI_BeginAccessRegion";
    or_fatal(gex::nbi::begin_access_region(crate::types::flags(
        flags, CALL,
    )))
}

/// `gex_NBI_EndAccessRegion`.
#[no_mangle]
pub extern "C" fn gex_NBI_EndAccessRegion(flags: gex_Flags_t) -> gex_Event_t {
    const CALL: &str = "gex_NBI_EndAccessRegion";
    c_event(or_fatal(gex::nbi::end_access_region(crate::types::flags(
        flags, CALL,
    ))))
}
