//! GASNet-1 calls of `gasnet.h` that have no EX spelling: the named
//! split-phase barrier.

use std::ffi::c_int;

use crate::types::*;

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
