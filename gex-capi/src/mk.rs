//! Memory kinds, created segments and endpoints (`gasnet_mk.h`, and
//! `gex_EP_Create` of `gasnetex.h`).

use std::ffi::{c_int, c_void};
use std::sync::atomic::AtomicPtr;

use gex::mk::{Mk, MkArgs};
use gex::{Ep, EpCapabilities, Error};

use crate::types::*;

/// What a `gex_MK_t` other than `GEX_MK_HOST` (1) points to.
pub struct CMk {
    mk: Mk,
}

pub type gex_MK_t = *const CMk;

/// `GEX_MK_HOST`.
pub const MK_HOST: usize = 1;

/// `gex_MK_Class_t`.
pub type gex_MK_Class_t = c_int;
pub const GEX_MK_CLASS_HOST: gex_MK_Class_t = 0;
pub const GEX_MK_CLASS_CUDA_UVA: gex_MK_Class_t = 1;
pub const GEX_MK_CLASS_HIP: gex_MK_Class_t = 2;
pub const GEX_MK_CLASS_ZE: gex_MK_Class_t = 3;

/// `gex_class_cuda_uva` (and, with another field name, `gex_class_hip`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct gex_MK_device_t {
    pub device: c_int,
}

/// `gex_class_ze`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct gex_MK_ze_t {
    pub gex_zeDevice: *mut c_void,
    pub gex_zeContext: *mut c_void,
    pub gex_zeMemoryOrdinal: u32,
}

/// `gex_args`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union gex_MK_args_u {
    pub gex_class_cuda_uva: gex_MK_device_t,
    pub gex_class_hip: gex_MK_device_t,
    pub gex_class_ze: gex_MK_ze_t,
}

/// `gex_MK_Create_args_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct gex_MK_Create_args_t {
    pub gex_flags: u64,
    pub gex_class: gex_MK_Class_t,
    pub gex_args: gex_MK_args_u,
}

/// The kind behind a `gex_MK_t`.
///
/// # Safety
/// `mk` is `GEX_MK_HOST` or a kind of this library.
unsafe fn kind(mk: gex_MK_t, call: &str) -> Mk {
    if mk as usize == MK_HOST {
        Mk::host()
    } else {
        // SAFETY: a kind of this library (caller's contract).
        unsafe { obj(mk, call) }.mk.clone()
    }
}

/// `gex_MK_Create`: host memory, or a device class (refused, naming the
/// runtime this build lacks).
#[no_mangle]
pub unsafe extern "C" fn gex_MK_Create(
    memkind_p: *mut gex_MK_t,
    client: gex_Client_t,
    args: *const gex_MK_Create_args_t,
    flags: gex_Flags_t,
) -> c_int {
    const CALL: &str = "gex_MK_Create";
    if memkind_p.is_null() || args.is_null() {
        return code(Error::bad_arg(format!("{CALL}: NULL argument")));
    }
    // SAFETY: a handle of this library; `args` readable.
    let (c, a) = unsafe { (obj(client, CALL), *args) };
    if a.gex_flags != 0 {
        return code(Error::bad_arg(format!("{CALL}: args->gex_flags must be 0")));
    }
    // SAFETY: the member the class names is the one the client filled.
    let margs = unsafe {
        match a.gex_class {
            GEX_MK_CLASS_HOST => MkArgs::Host,
            GEX_MK_CLASS_CUDA_UVA => MkArgs::CudaUva {
                device: a.gex_args.gex_class_cuda_uva.device,
            },
            GEX_MK_CLASS_HIP => MkArgs::Hip {
                device: a.gex_args.gex_class_hip.device,
            },
            GEX_MK_CLASS_ZE => MkArgs::Ze {
                device: a.gex_args.gex_class_ze.gex_zeDevice as usize,
                context: a.gex_args.gex_class_ze.gex_zeContext as usize,
                memory_ordinal: a.gex_args.gex_class_ze.gex_zeMemoryOrdinal,
            },
            k => return code(Error::bad_arg(format!("{CALL}: unknown class {k}"))),
        }
    };
    let f = match flags_checked(flags, CALL) {
        Ok(f) => f,
        Err(e) => return code(e),
    };
    match gex::mk::mk_create(&c.client, &margs, f) {
        Ok(mk) => {
            // SAFETY: checked non-NULL; writable (caller's contract).
            unsafe { *memkind_p = leak(CMk { mk }) };
            GASNET_OK
        }
        Err(e) => code(e),
    }
}

/// `gex_MK_Destroy`.
#[no_mangle]
pub unsafe extern "C" fn gex_MK_Destroy(memkind: gex_MK_t, flags: gex_Flags_t) {
    const CALL: &str = "gex_MK_Destroy";
    // SAFETY: GEX_MK_HOST or a kind of this library.
    let k = unsafe { kind(memkind, CALL) };
    or_fatal(k.destroy(crate::types::flags(flags, CALL)))
}

/// `gex_Segment_Create`: library memory for a NULL `address`, else the
/// client's memory at `address`.
#[no_mangle]
pub unsafe extern "C" fn gex_Segment_Create(
    segment_p: *mut gex_Segment_t,
    client: gex_Client_t,
    address: *mut c_void,
    length: usize,
    kind_: gex_MK_t,
    flags: gex_Flags_t,
) -> c_int {
    const CALL: &str = "gex_Segment_Create";
    if segment_p.is_null() {
        return code(Error::bad_arg(format!("{CALL}: NULL segment_p")));
    }
    // SAFETY: handles of this library.
    let (c, k) = unsafe { (obj(client, CALL), kind(kind_, CALL)) };
    let f = match flags_checked(flags, CALL) {
        Ok(f) => f,
        Err(e) => return code(e),
    };
    let r = if address.is_null() {
        gex::mk::segment_create(&c.client, &k, length, f)
    } else {
        // SAFETY: the client grants `length` bytes at `address` for the
        // segment's life (the call's contract).
        unsafe { gex::mk::segment_create_at(&c.client, address as usize, length, &k, f) }
    };
    match r {
        Ok(seg) => {
            let addr = seg.addr();
            let h = leak(CSegment {
                seg,
                client,
                cdata: AtomicPtr::new(std::ptr::null_mut()),
            });
            crate::core::remember_segment(addr, h);
            // SAFETY: checked non-NULL; writable.
            unsafe { *segment_p = h };
            GASNET_OK
        }
        Err(e) => code(e),
    }
}

/// `gex_Segment_Destroy`.
#[no_mangle]
pub unsafe extern "C" fn gex_Segment_Destroy(segment: gex_Segment_t, flags: gex_Flags_t) {
    const CALL: &str = "gex_Segment_Destroy";
    // SAFETY: a handle of this library.
    let s = unsafe { obj(segment, CALL) };
    or_fatal(gex::mk::segment_destroy(
        &s.seg,
        crate::types::flags(flags, CALL),
    ))
}

/// `gex_EP_BindSegment`.
#[no_mangle]
pub unsafe extern "C" fn gex_EP_BindSegment(
    ep: gex_EP_t,
    segment: gex_Segment_t,
    flags: gex_Flags_t,
) -> c_int {
    const CALL: &str = "gex_EP_BindSegment";
    // GEX_EP_INVALID or GEX_SEGMENT_INVALID: GASNET_ERR_BAD_ARG, as the
    // reference answers (its testsegment checks), rather than the fatal
    // error other calls make of an invalid handle.
    if ep.is_null() || segment.is_null() {
        return code(Error::bad_arg(format!(
            "{CALL}: GEX_EP_INVALID or GEX_SEGMENT_INVALID"
        )));
    }
    // SAFETY: handles of this library (checked non-NULL).
    let (e, s) = unsafe { (obj(ep, CALL), obj(segment, CALL)) };
    let f = match flags_checked(flags, CALL) {
        Ok(f) => f,
        Err(err) => return code(err),
    };
    rc(gex::mk::ep_bind_segment(&e.ep, &s.seg, f))
}

/// `gex_EP_PublishBoundSegment`: collective over `tm`.
#[no_mangle]
pub unsafe extern "C" fn gex_EP_PublishBoundSegment(
    tm: gex_TM_t,
    eps: *mut gex_EP_t,
    num_eps: usize,
    flags: gex_Flags_t,
) -> c_int {
    const CALL: &str = "gex_EP_PublishBoundSegment";
    // SAFETY: a handle of this library.
    let t = unsafe { team(tm, CALL) };
    let list: Vec<&Ep> = if num_eps == 0 || eps.is_null() {
        Vec::new()
    } else {
        // SAFETY: `num_eps` handles of this library.
        unsafe { std::slice::from_raw_parts(eps, num_eps) }
            .iter()
            // SAFETY: handles of this library.
            .map(|&e| &unsafe { obj(e, CALL) }.ep)
            .collect()
    };
    let f = match flags_checked(flags, CALL) {
        Ok(f) => f,
        Err(e) => return code(e),
    };
    rc(gex::mk::ep_publish_bound_segment(t, &list, f))
}

/// `gex_EP_Create`: the next endpoint of this process.
#[no_mangle]
pub unsafe extern "C" fn gex_EP_Create(
    ep_p: *mut gex_EP_t,
    client: gex_Client_t,
    capabilities: gex_EP_Capabilities_t,
    flags: gex_Flags_t,
) -> c_int {
    const CALL: &str = "gex_EP_Create";
    if ep_p.is_null() {
        return code(Error::bad_arg(format!("{CALL}: NULL ep_p")));
    }
    // SAFETY: a handle of this library.
    let c = unsafe { obj(client, CALL) };
    let Some(caps) = EpCapabilities::from_bits(capabilities) else {
        return code(Error::bad_arg(format!(
            "{CALL}: unknown capabilities {capabilities:#x}"
        )));
    };
    let f = match flags_checked(flags, CALL) {
        Ok(f) => f,
        Err(e) => return code(e),
    };
    match Ep::create(&c.client, caps, f) {
        Ok(ep) => {
            // SAFETY: checked non-NULL; writable.
            unsafe { *ep_p = leak(CEp::new(ep, client)) };
            GASNET_OK
        }
        Err(e) => code(e),
    }
}
