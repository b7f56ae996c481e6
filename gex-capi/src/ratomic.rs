//! Remote atomics (`gasnet_ratomic.h`): atomic domains and the six typed
//! operation calls.

use std::ffi::{c_int, c_void};
use std::mem::ManuallyDrop;
use std::sync::atomic::AtomicPtr;

use gex::ratomic::{AtomicDomain, Injected};
use gex::{Dt, Event, Op, Ops};

use crate::types::*;

/// What a `gex_AD_t` points to.
pub struct CAd {
    ad: ManuallyDrop<AtomicDomain>,
    tm: gex_TM_t,
    /// The flags as the client passed them (`gex_AD_QueryFlags`).
    flags: gex_Flags_t,
    cdata: AtomicPtr<c_void>,
}

pub type gex_AD_t = *mut CAd;

fn dt_of(v: gex_DT_t, call: &str) -> Dt {
    Dt::BUILTIN
        .into_iter()
        .chain([Dt::User])
        .find(|d| *d as u32 == v)
        .unwrap_or_else(|| gex::fatal(&format!("{call}: unknown data type {v:#x}")))
}

fn op_of(v: gex_OP_t, call: &str) -> Op {
    Op::ALL
        .into_iter()
        .find(|o| *o as u64 == v)
        .unwrap_or_else(|| gex::fatal(&format!("{call}: unknown operation {v:#x}")))
}

/// `gex_AD_Create`: collective over `tm`.
#[no_mangle]
pub unsafe extern "C" fn gex_AD_Create(
    ad_p: *mut gex_AD_t,
    tm: gex_TM_t,
    dt: gex_DT_t,
    ops: gex_OP_t,
    flags: gex_Flags_t,
) {
    const CALL: &str = "gex_AD_Create";
    // SAFETY: a handle of this library.
    let t = unsafe { team(tm, CALL) };
    let ops = Ops::from_bits(ops)
        .unwrap_or_else(|| gex::fatal(&format!("{CALL}: unknown operations {ops:#x}")));
    // The spec gives gex_AD_Create the AD_FAVOR_* hints only; the
    // reference keeps any other (known) flag it is given and reports it
    // back from gex_AD_QueryFlags, without effect (its testgasnet creates a
    // domain with PEER_SEG_OFFSET, which its document marks unimplemented),
    // and so does gex (API.md, Leniencies).
    const FAVOR: gex_Flags_t = 0x80 | 0x100 | 0x200;
    let known = crate::types::flags(flags, CALL).bits();
    let ad = or_fatal(AtomicDomain::create(
        t,
        dt_of(dt, CALL),
        ops,
        crate::types::flags(known & FAVOR, CALL),
    ));
    let h = Box::into_raw(Box::new(CAd {
        ad: ManuallyDrop::new(ad),
        tm,
        flags: known,
        cdata: AtomicPtr::new(std::ptr::null_mut()),
    }));
    if ad_p.is_null() {
        gex::fatal(&format!("{CALL}: NULL ad_p"));
    }
    // SAFETY: writable (caller's contract).
    unsafe { *ad_p = h };
}

/// `gex_AD_Destroy`: collective; every operation on the domain is complete
/// (the spec's precondition), so nothing uses the handle any more.
#[no_mangle]
pub unsafe extern "C" fn gex_AD_Destroy(ad: gex_AD_t) {
    const CALL: &str = "gex_AD_Destroy";
    if ad.is_null() {
        gex::fatal(&format!("{CALL}: NULL domain"));
    }
    // SAFETY: a live domain of this library, used by no one else from now
    // on (the spec's precondition); freed here.
    let mut b = unsafe { Box::from_raw(ad) };
    // SAFETY: taken once, and the box is dropped without touching it again.
    let d = unsafe { ManuallyDrop::take(&mut b.ad) };
    if let Err((e, _)) = d.destroy() {
        gex::fatal(&e.to_string());
    }
}

/// The domain behind `ad`.
unsafe fn dom<'a>(ad: gex_AD_t, call: &str) -> &'a CAd {
    // SAFETY: a live domain of this library (caller's contract).
    unsafe { obj(ad as *const CAd, call) }
}

/// `gex_AD_QueryFlags`.
#[no_mangle]
pub unsafe extern "C" fn gex_AD_QueryFlags(ad: gex_AD_t) -> gex_Flags_t {
    // SAFETY: a live domain.
    unsafe { dom(ad, "gex_AD_QueryFlags") }.flags
}

/// `gex_AD_QueryTM`.
#[no_mangle]
pub unsafe extern "C" fn gex_AD_QueryTM(ad: gex_AD_t) -> gex_TM_t {
    // SAFETY: a live domain.
    unsafe { dom(ad, "gex_AD_QueryTM") }.tm
}

/// `gex_AD_QueryDT`.
#[no_mangle]
pub unsafe extern "C" fn gex_AD_QueryDT(ad: gex_AD_t) -> gex_DT_t {
    // SAFETY: a live domain.
    unsafe { dom(ad, "gex_AD_QueryDT") }.ad.dt() as u32
}

/// `gex_AD_QueryOps`.
#[no_mangle]
pub unsafe extern "C" fn gex_AD_QueryOps(ad: gex_AD_t) -> gex_OP_t {
    // SAFETY: a live domain.
    unsafe { dom(ad, "gex_AD_QueryOps") }.ad.ops().bits()
}

/// `gex_AD_SetCData`.
#[no_mangle]
pub unsafe extern "C" fn gex_AD_SetCData(ad: gex_AD_t, val: *const c_void) {
    // SAFETY: a live domain.
    set_cdata(&unsafe { dom(ad, "gex_AD_SetCData") }.cdata, val)
}

/// `gex_AD_QueryCData`.
#[no_mangle]
pub unsafe extern "C" fn gex_AD_QueryCData(ad: gex_AD_t) -> *mut c_void {
    // SAFETY: a live domain.
    get_cdata(&unsafe { dom(ad, "gex_AD_QueryCData") }.cdata)
}

macro_rules! typed_ops {
    ($($t:ty => $nb:ident, $nbi:ident;)*) => {$(
        #[doc = concat!("`", stringify!($nb), "`.")]
        #[no_mangle]
        pub unsafe extern "C" fn $nb(
            ad: gex_AD_t,
            result_p: *mut $t,
            tgt_rank: gex_Rank_t,
            tgt_addr: *mut c_void,
            opcode: gex_OP_t,
            operand1: $t,
            operand2: $t,
            flags: gex_Flags_t,
        ) -> gex_Event_t {
            const CALL: &str = stringify!($nb);
            // SAFETY: a live domain; `result_p` is NULL or writable until
            // the event is synced (caller's contract), so the event may
            // borrow it for its whole life.
            let (d, r) = unsafe { (dom(ad, CALL), result_p.as_mut()) };
            let e = or_fatal(d.ad.op_nb::<$t>(
                r,
                tgt_rank,
                tgt_addr as usize,
                op_of(opcode, CALL),
                operand1,
                operand2,
                crate::types::flags(flags, CALL),
            ));
            // SAFETY: only the lifetime changes (see above).
            c_event(unsafe { std::mem::transmute::<Event<'_>, Event<'static>>(e) })
        }

        #[doc = concat!("`", stringify!($nbi), "`.")]
        #[no_mangle]
        pub unsafe extern "C" fn $nbi(
            ad: gex_AD_t,
            result_p: *mut $t,
            tgt_rank: gex_Rank_t,
            tgt_addr: *mut c_void,
            opcode: gex_OP_t,
            operand1: $t,
            operand2: $t,
            flags: gex_Flags_t,
        ) -> c_int {
            const CALL: &str = stringify!($nbi);
            // SAFETY: a live domain; `result_p` NULL or writable.
            let (d, r) = unsafe { (dom(ad, CALL), result_p.as_mut()) };
            match or_fatal(d.ad.op_nbi::<$t>(
                r,
                tgt_rank,
                tgt_addr as usize,
                op_of(opcode, CALL),
                operand1,
                operand2,
                crate::types::flags(flags, CALL),
            )) {
                Injected::Sent => GASNET_OK,
                Injected::NoOp => 1,
            }
        }
    )*};
}

typed_ops! {
    i32 => gex_AD_OpNB_I32, gex_AD_OpNBI_I32;
    u32 => gex_AD_OpNB_U32, gex_AD_OpNBI_U32;
    i64 => gex_AD_OpNB_I64, gex_AD_OpNBI_I64;
    u64 => gex_AD_OpNB_U64, gex_AD_OpNBI_U64;
    f32 => gex_AD_OpNB_FLT, gex_AD_OpNBI_FLT;
    f64 => gex_AD_OpNB_DBL, gex_AD_OpNBI_DBL;
}
