//! gex's GASNet tools library: the out-of-line part of `gasnet_tools.h`
//! (the GASNet tools interface, specification 1.20, as the GASNet-EX
//! 2025.8.0 release documents it in README-tools).
//!
//! Built as `libgex_tools.a` for tools-only programs (installed as
//! `libgasnet_tools-{seq,par}.a`); gex-capi links it in, so libgex exports
//! the same `gasnett_*` functions. Atomics, fences, locks and thread keys
//! are inline in the header (compiler builtins and pthreads); here are
//! timers and the system ([`sys`]), the environment ([`env`]), formatting
//! and parsing of numbers and of the GASNet-EX enumerations ([`format`]),
//! backtraces, debugger freezes and fatal errors ([`backtrace`]).
//!
//! Every argument from C is checked before use: strings may be null (read
//! as absent) and are read with `CStr`; a value the documented contract
//! rejects (an unparsable environment setting, an integer string that is
//! not one) ends the process with a message naming the call, as the
//! reference does.

#![allow(non_camel_case_types, clippy::missing_safety_doc)]

pub mod backtrace;
pub mod env;
pub mod format;
pub mod sys;

pub use sys::gasnett_tick_t;

use std::ffi::{c_char, CStr};

/// The C string at `p`, or `None` for a null pointer.
///
/// # Safety
/// `p` is null or points to a NUL-terminated string that outlives `'a`.
pub(crate) unsafe fn cstr<'a>(p: *const c_char) -> Option<&'a CStr> {
    // SAFETY: non-null and NUL-terminated (caller's contract).
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) })
}

/// Writes `s` to file descriptor `fd`, whole (retrying short writes and
/// interruptions); errors are ignored, as for any diagnostic output.
pub(crate) fn write_fd(fd: i32, s: &[u8]) {
    let mut rest = s;
    while !rest.is_empty() {
        // SAFETY: writes from a live slice of `rest.len()` bytes.
        let n = unsafe { libc::write(fd, rest.as_ptr().cast(), rest.len()) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        if n == 0 {
            return;
        }
        rest = &rest[n as usize..];
    }
}
