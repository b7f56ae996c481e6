//! The C types of `gasnetex.h`: plain structs with the header's layout
//! (asserted in this crate's tests), the objects behind the opaque handles,
//! and the conversions every call shares.

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

use gex::coll::CollHandle;
use gex::{Client, Ep, Error, ErrorKind, Event, Flags, Segment, Tm, TmPair, MAX_EPS};

/// `gex_Rank_t`.
pub type gex_Rank_t = u32;
/// `gex_Flags_t` (every `GEX_FLAG_*` is one bit of the Rust `gex::Flags`).
pub type gex_Flags_t = u64;
/// `gex_AM_Index_t`.
pub type gex_AM_Index_t = u8;
/// `gex_AM_Arg_t`.
pub type gex_AM_Arg_t = i32;
/// `gex_RMA_Value_t`.
pub type gex_RMA_Value_t = u64;
/// `gex_EP_Index_t`.
pub type gex_EP_Index_t = u32;
/// `gex_EC_t`.
pub type gex_EC_t = u32;
/// `gex_TI_t`.
pub type gex_TI_t = u32;
/// `gex_DT_t`.
pub type gex_DT_t = u32;
/// `gex_OP_t`.
pub type gex_OP_t = u64;
/// `gex_EP_Capabilities_t`.
pub type gex_EP_Capabilities_t = u32;

/// `GASNET_OK`.
pub const GASNET_OK: c_int = 0;

/// `gex_AM_Fn_t`: a C handler, called with the argument list its
/// registration names (token, then payload address and length for Medium
/// and Long, then the arguments).
pub type gex_AM_Fn_t = Option<unsafe extern "C" fn()>;

/// `gex_AM_Entry_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct gex_AM_Entry_t {
    pub gex_index: gex_AM_Index_t,
    pub gex_fnptr: gex_AM_Fn_t,
    pub gex_flags: gex_Flags_t,
    pub gex_nargs: c_uint,
    pub gex_cdata: *const c_void,
    pub gex_name: *const c_char,
}

/// `gex_Token_Info_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct gex_Token_Info_t {
    pub gex_srcrank: gex_Rank_t,
    pub gex_ep: gex_EP_t,
    pub gex_entry: *const gex_AM_Entry_t,
    pub gex_is_req: c_int,
    pub gex_is_long: c_int,
}

/// `gex_Memvec_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct gex_Memvec_t {
    pub gex_addr: *mut c_void,
    pub gex_len: usize,
}

/// `gex_EP_Location_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct gex_EP_Location_t {
    pub gex_rank: gex_Rank_t,
    pub gex_ep_index: gex_EP_Index_t,
}

/// `gex_RankInfo_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct gex_RankInfo_t {
    pub gex_jobrank: gex_Rank_t,
}

/// What a `gex_Client_t` points to.
pub struct CClient {
    pub client: Client,
    pub ep: gex_EP_t,
    pub cdata: AtomicPtr<c_void>,
}

/// What a `gex_EP_t` points to.
pub struct CEp {
    pub ep: Ep,
    pub client: gex_Client_t,
    pub cdata: AtomicPtr<c_void>,
    /// `gex_TM_Pair(ep, i)`, made once per index.
    pub pairs: [OnceLock<usize>; MAX_EPS],
}

/// A team or a TM-pair.
pub enum TmObj {
    Team(Tm),
    Pair(TmPair),
}

/// What a `gex_TM_t` points to.
pub struct CTm {
    pub tm: TmObj,
    pub ep: gex_EP_t,
    pub cdata: AtomicPtr<c_void>,
}

/// What a `gex_Segment_t` points to.
pub struct CSegment {
    pub seg: Segment,
    pub client: gex_Client_t,
    pub cdata: AtomicPtr<c_void>,
}

/// What a `gex_Event_t` other than `GEX_EVENT_INVALID` (NULL) and
/// `GEX_EVENT_NO_OP` (1) points to.
pub enum CEvent {
    Op(Event<'static>),
    Coll(CollHandle<'static>),
    /// An event that borrows a list the library made (the destination
    /// slices of a VIS get), freed after the event (fields drop in order).
    Kept(Event<'static>, Keep),
}

/// A list of destination slices leaked for an event's life, freed on drop.
pub struct Keep(pub *mut [&'static mut [u8]]);

impl Drop for Keep {
    fn drop(&mut self) {
        // SAFETY: a leaked box of this library; the event that borrowed it
        // was dropped or consumed first.
        drop(unsafe { Box::from_raw(self.0) });
    }
}

pub type gex_Client_t = *const CClient;
pub type gex_EP_t = *const CEp;
pub type gex_TM_t = *const CTm;
pub type gex_Segment_t = *const CSegment;
pub type gex_Event_t = *mut CEvent;

/// `GEX_EVENT_NO_OP`.
pub const EVENT_NO_OP: gex_Event_t = 1 as gex_Event_t;
/// `GEX_EVENT_NOW`, `GEX_EVENT_DEFER`, `GEX_EVENT_GROUP` (`gex_Event_t *`).
pub const EVENT_NOW: usize = 1;
pub const EVENT_DEFER: usize = 2;
pub const EVENT_GROUP: usize = 3;

impl CEp {
    pub fn new(ep: Ep, client: gex_Client_t) -> Self {
        CEp {
            ep,
            client,
            cdata: AtomicPtr::new(std::ptr::null_mut()),
            pairs: std::array::from_fn(|_| OnceLock::new()),
        }
    }
}

/// Leaks `v` as a handle that lives as long as the process.
pub fn leak<T>(v: T) -> *const T {
    Box::into_raw(Box::new(v))
}

/// The object behind a handle; a NULL handle ends the job naming `call`.
///
/// # Safety
/// `h` is NULL or a handle this library returned (they are never freed).
#[inline]
pub unsafe fn obj<'a, T>(h: *const T, call: &str) -> &'a T {
    if h.is_null() {
        null_handle(call);
    }
    // SAFETY: non-NULL handles are leaked boxes this library made (caller's
    // contract), alive for the rest of the process.
    unsafe { &*h }
}

/// The end of the job for a NULL handle (out of line: the fast paths keep
/// `call` in registers).
#[cold]
#[inline(never)]
fn null_handle(call: &str) -> ! {
    gex::fatal(&format!("{call}: NULL handle"))
}

/// Runs `f` with the team or pair behind `tm` as a `TmRef`.
macro_rules! with_tm {
    ($tm:expr, $call:expr, |$t:ident| $body:expr) => {{
        // SAFETY: the caller passes a handle this library made.
        let ctm = unsafe { $crate::types::obj($tm, $call) };
        match &ctm.tm {
            $crate::types::TmObj::Team($t) => $body,
            $crate::types::TmObj::Pair($t) => $body,
        }
    }};
}
pub(crate) use with_tm;

/// The team behind `tm`; a TM-pair ends the job (the call takes a team).
///
/// # Safety
/// As [`obj`].
pub unsafe fn team<'a>(tm: gex_TM_t, call: &str) -> &'a Tm {
    // SAFETY: caller's contract.
    match unsafe { &obj(tm, call).tm } {
        TmObj::Team(t) => t,
        TmObj::Pair(_) => gex::fatal(&format!("{call}: a TM-pair is not a team")),
    }
}

/// `gex_Flags_t` to `Flags`; unknown bits end the job naming the call.
#[inline]
pub fn flags(f: gex_Flags_t, call: &str) -> Flags {
    match Flags::from_bits(f) {
        Some(f) => f,
        None => unknown_flags(f, call),
    }
}

/// The end of the job for unknown flag bits (out of line, as
/// [`null_handle`]).
#[cold]
#[inline(never)]
fn unknown_flags(f: gex_Flags_t, call: &str) -> ! {
    gex::fatal(&format!(
        "{call}: unknown flag bits {:#x}",
        f & !Flags::all().bits()
    ))
}

/// `flags` for a call with an `int` result: unknown bits are a BAD_ARG.
pub fn flags_checked(f: gex_Flags_t, call: &str) -> Result<Flags, Error> {
    Flags::from_bits(f).ok_or_else(|| {
        Error::bad_arg(format!(
            "{call}: unknown flag bits {:#x}",
            f & !Flags::all().bits()
        ))
    })
}

/// The error code of `e`, printed first if verbose errors are on.
pub fn code(e: Error) -> c_int {
    let k = e.kind();
    report(&e);
    k.code()
}

/// The error code of `e` from a Rust call that printed it already
/// (`gex::init*`, `gex::Segment::attach`).
pub fn code_reported(e: Error) -> c_int {
    e.kind().code()
}

/// Prints `e` to stderr if verbose errors are on (as the Rust calls' own
/// reports do).
pub fn report(e: &Error) {
    if gex::system::get_verbose_errors() && e.kind() != ErrorKind::NotReady {
        eprintln!("gex: {e}");
    }
}

/// `Ok` to `GASNET_OK`, an error to its code.
pub fn rc(r: Result<(), Error>) -> c_int {
    match r {
        Ok(()) => GASNET_OK,
        Err(e) => code(e),
    }
}

/// The value of `r`, or the end of the job with its message.
#[inline]
pub fn or_fatal<T>(r: Result<T, Error>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => fatal_error(e),
    }
}

/// The end of the job with `e`'s message (out of line).
#[cold]
#[inline(never)]
fn fatal_error(e: Error) -> ! {
    gex::fatal(&e.to_string())
}

/// A Rust event as a C event: NULL when complete, `GEX_EVENT_NO_OP`, or a
/// box.
pub fn c_event(e: Event<'static>) -> gex_Event_t {
    if e.is_invalid() {
        std::ptr::null_mut()
    } else if e.is_no_op() {
        EVENT_NO_OP
    } else {
        Box::into_raw(Box::new(CEvent::Op(e)))
    }
}

/// A collective handle as a C event.
pub fn c_coll_event(h: CollHandle<'static>) -> gex_Event_t {
    if h.is_invalid() {
        std::ptr::null_mut()
    } else {
        Box::into_raw(Box::new(CEvent::Coll(h)))
    }
}

/// Reads client data.
pub fn get_cdata(c: &AtomicPtr<c_void>) -> *mut c_void {
    c.load(Ordering::Acquire)
}

/// Sets client data.
pub fn set_cdata(c: &AtomicPtr<c_void>, v: *const c_void) {
    c.store(v as *mut c_void, Ordering::Release)
}

/// A byte slice over C memory; empty for `nbytes == 0` whatever the
/// address.
///
/// # Safety
/// For `nbytes > 0`, `p` points to `nbytes` readable bytes that stay valid
/// (and unwritten by others, as the C call's contract says) for `'a`.
pub unsafe fn bytes<'a>(p: *const c_void, nbytes: usize) -> &'a [u8] {
    if nbytes == 0 || p.is_null() {
        &[]
    } else {
        // SAFETY: caller's contract.
        unsafe { std::slice::from_raw_parts(p.cast(), nbytes) }
    }
}

/// A mutable byte slice over C memory.
///
/// # Safety
/// As [`bytes`], writable, and not otherwise accessed while the slice is
/// used (the C call's contract for a destination buffer).
pub unsafe fn bytes_mut<'a>(p: *mut c_void, nbytes: usize) -> &'a mut [u8] {
    if nbytes == 0 || p.is_null() {
        &mut []
    } else {
        // SAFETY: caller's contract.
        unsafe { std::slice::from_raw_parts_mut(p.cast(), nbytes) }
    }
}
