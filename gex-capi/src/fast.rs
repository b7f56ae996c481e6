//! What `gasnetex.h`'s inline blocking puts and gets read: the primordial
//! team's handle, gex-core's fast segment table in use (a mirror of the
//! word gex-rma reads, kept current by gex-core) and its length in bytes
//! (`_gex_rma_fast`), and each thread's restriction flag
//! (`_gex_thread_restricted`).
//!
//! `gex_RMA_PutBlocking`, `gex_RMA_GetBlocking` and their value forms are
//! header macros over static inline functions that do what gex-rma's
//! inlined direct route does for a Rust caller: on the primordial team,
//! with only the flags that route accepts, from a thread that may
//! communicate, to a rank below the job size whose segment is mapped here
//! and contains the whole range, they copy directly; anything else calls
//! the library function of the same name, which checks and reports
//! everything. The table entries are gex-core's [`gex_core::FastSeg`]s
//! (an entry not directly accessible has size 0, so the one bounds check
//! also sends it to the library), never written after publication; the
//! table pointer is replaced when direct access is switched (both tables
//! stay valid). The length is in bytes so that the header's bounds check
//! and its index into the table are one value (`rank * 24`), which keeps
//! the compiled loop's invariants in registers.

use std::ffi::c_uchar;
use std::sync::atomic::{AtomicPtr, Ordering};

pub use gex_core::{FastMirror, FastSeg};

use crate::types::{gex_TM_t, CTm};

/// `_gex_rma_fast_t`: the header's view (`tm`, `g1_tm`, `table`,
/// `table_bytes`, the last two being `fast`'s fields).
#[repr(C)]
pub struct RmaFast {
    /// The primordial team's handle (null before `gex_Client_Init`),
    /// stored last with release ordering: a reader that sees it sees the
    /// other fields.
    pub tm: AtomicPtr<CTm>,
    /// The same handle once `gasnet_init` made it (`gasnet.h`'s puts and
    /// gets use it; null before, and the library call reports the error).
    pub g1_tm: AtomicPtr<CTm>,
    /// The fast table in use (one [`FastSeg`] per jobrank) and its length
    /// in bytes (0 before attach), which gex-core keeps current
    /// ([`gex_core::mirror_fast_segments`]).
    pub fast: FastMirror,
}

/// The table the header's inline RMA calls read.
#[no_mangle]
pub static _gex_rma_fast: RmaFast = RmaFast {
    tm: AtomicPtr::new(std::ptr::null_mut()),
    g1_tm: AtomicPtr::new(std::ptr::null_mut()),
    fast: FastMirror::new(),
};

/// Publishes the primordial team `tm` (`gex_Client_Init`); the table
/// follows at attach.
pub(crate) fn publish(tm: gex_TM_t) {
    gex_core::mirror_fast_segments(&_gex_rma_fast.fast);
    _gex_rma_fast.tm.store(tm as *mut CTm, Ordering::Release);
}

/// Publishes the GASNet-1 team (`gasnet_init`, after [`publish`]).
pub(crate) fn publish_g1(tm: gex_TM_t) {
    _gex_rma_fast.g1_tm.store(tm as *mut CTm, Ordering::Release);
}

/// The address of the calling thread's restriction flag (one byte, 0 when
/// the thread may communicate), valid for the thread's life; the header
/// caches it per thread.
#[no_mangle]
pub extern "C" fn _gex_thread_restricted() -> *const c_uchar {
    gex_core::context::restricted_flag() as *const c_uchar
}

#[cfg(test)]
mod tests {
    /// The header's `_GEX_RMA_FAST_FLAGS` is the flags gex-rma's direct
    /// route accepts (`gex::rma::FAST_FLAGS`): every RMA flag but the
    /// PEER_NEVER assertions and SELF_SEG_OFFSET (those take the library
    /// call, which checks them).
    #[test]
    fn fast_flags_are_the_direct_routes() {
        use gex::Flags;
        let header = include_str!("../include/gasnetex.h");
        let start = header
            .find("#define _GEX_RMA_FAST_FLAGS")
            .expect("the macro");
        let def = &header[start..];
        let def = &def[..def.find("\n\n").expect("a blank line after it")];
        let mut bits = Flags::empty();
        for name in def.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if let Some(f) = name.strip_prefix("GEX_FLAG_") {
                bits |= Flags::from_name(f).unwrap_or_else(|| panic!("flag {f}"));
            }
        }
        assert_eq!(bits, gex::rma::FAST_FLAGS);
    }
}
