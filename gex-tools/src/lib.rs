//! gex's GASNet tools library. The out-of-line part of `gasnet_tools.h`: timers, processor and host
//! queries, sleeping, the environment and a checksum. (Atomics, fences,
//! mutexes, condition variables and thread keys are inline in the header,
//! over compiler builtins and pthreads.)

#![allow(non_camel_case_types, clippy::missing_safety_doc)]

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

/// `gasnett_tick_t`: nanoseconds of `CLOCK_MONOTONIC`.
pub type gasnett_tick_t = u64;

/// `gasnett_ticks_now`.
#[no_mangle]
pub extern "C" fn gasnett_ticks_now() -> gasnett_tick_t {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// `gasnett_ticks_to_ns`.
#[no_mangle]
pub extern "C" fn gasnett_ticks_to_ns(t: gasnett_tick_t) -> u64 {
    t
}

/// `gasnett_ticks_to_us`.
#[no_mangle]
pub extern "C" fn gasnett_ticks_to_us(t: gasnett_tick_t) -> u64 {
    t / 1000
}

/// `gasnett_tick_granularityus`: the clock's resolution in microseconds.
#[no_mangle]
pub extern "C" fn gasnett_tick_granularityus() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_getres writes the timespec it is given.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as f64) * 1e6 + (ts.tv_nsec as f64) / 1e3
}

/// `gasnett_tick_overheadus`: the cost of one `gasnett_ticks_now`, measured
/// once.
#[no_mangle]
pub extern "C" fn gasnett_tick_overheadus() -> f64 {
    static O: OnceLock<f64> = OnceLock::new();
    *O.get_or_init(|| {
        const N: u64 = 1000;
        let t0 = gasnett_ticks_now();
        for _ in 0..N {
            std::hint::black_box(gasnett_ticks_now());
        }
        (gasnett_ticks_now() - t0) as f64 / N as f64 / 1e3
    })
}

/// `gasnett_cpu_count`: processors online.
#[no_mangle]
pub extern "C" fn gasnett_cpu_count() -> c_int {
    std::thread::available_parallelism().map_or(1, |n| n.get() as c_int)
}

/// `gasnett_sched_yield`.
#[no_mangle]
pub extern "C" fn gasnett_sched_yield() -> c_int {
    std::thread::yield_now();
    0
}

/// `gasnett_nsleep`: sleeps at least `ns` nanoseconds.
#[no_mangle]
pub extern "C" fn gasnett_nsleep(ns: u64) {
    std::thread::sleep(std::time::Duration::from_nanos(ns))
}

/// `gasnett_gethostname`: this host's name, owned by the library.
#[no_mangle]
pub extern "C" fn gasnett_gethostname() -> *const c_char {
    static H: OnceLock<CString> = OnceLock::new();
    H.get_or_init(|| {
        let mut buf = [0u8; 256];
        // SAFETY: gethostname writes at most `len` bytes into the buffer.
        let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len() - 1) };
        let end = buf.iter().position(|&b| b == 0).unwrap_or(0);
        CString::new(if r == 0 { &buf[..end] } else { b"localhost" }).unwrap_or_default()
    })
    .as_ptr()
}

/// `gasnett_getenv` (also `gasnet_getenv`): the process's environment
/// (ranks started by gex-run inherit the launcher's).
#[no_mangle]
pub unsafe extern "C" fn gasnett_getenv(name: *const c_char) -> *const c_char {
    if name.is_null() {
        return std::ptr::null();
    }
    // SAFETY: a C string (caller's contract); getenv's result stays valid
    // until the variable is changed.
    unsafe { libc::getenv(name) }
}

/// `gasnet_getenv` (GASNet-1): as [`gasnett_getenv`].
#[no_mangle]
pub unsafe extern "C" fn gasnet_getenv(name: *const c_char) -> *const c_char {
    // SAFETY: caller's contract.
    unsafe { gasnett_getenv(name) }
}

/// `gasnett_getenv_withdefault`.
#[no_mangle]
pub unsafe extern "C" fn gasnett_getenv_withdefault(
    name: *const c_char,
    dflt: *const c_char,
) -> *const c_char {
    // SAFETY: caller's contract.
    let v = unsafe { gasnett_getenv(name) };
    if v.is_null() {
        dflt
    } else {
        v
    }
}

fn env_str(name: *const c_char) -> Option<String> {
    // SAFETY: a C string (caller's contract, passed through).
    let v = unsafe { gasnett_getenv(name) };
    // SAFETY: getenv returned a C string.
    (!v.is_null()).then(|| {
        unsafe { CStr::from_ptr(v) }
            .to_string_lossy()
            .trim()
            .to_owned()
    })
}

/// `gasnett_getenv_yesno_withdefault`: `1`/`y`/`yes`/`true`/`on` (any
/// case) are yes, `0`/`n`/`no`/`false`/`off` no, anything else the default.
#[no_mangle]
pub unsafe extern "C" fn gasnett_getenv_yesno_withdefault(
    name: *const c_char,
    dflt: c_int,
) -> c_int {
    match env_str(name).map(|s| s.to_ascii_lowercase()).as_deref() {
        Some("1" | "y" | "yes" | "true" | "on") => 1,
        Some("0" | "n" | "no" | "false" | "off") => 0,
        _ => (dflt != 0) as c_int,
    }
}

/// `gasnett_getenv_int_withdefault`: an integer, with an optional size
/// suffix (`K`, `M`, `G`, `T`: powers of 1024) when `mem_size_multiplier`
/// is non-zero, in which case a bare number is multiplied by it.
#[no_mangle]
pub unsafe extern "C" fn gasnett_getenv_int_withdefault(
    name: *const c_char,
    dflt: i64,
    mem_size_multiplier: u64,
) -> i64 {
    let Some(s) = env_str(name) else {
        return dflt;
    };
    let (num, mult) = match s.char_indices().last() {
        Some((i, c)) if mem_size_multiplier != 0 && c.is_ascii_alphabetic() => {
            let m: i64 = match c.to_ascii_uppercase() {
                'K' => 1 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                'T' => 1 << 40,
                _ => return dflt,
            };
            (&s[..i], m)
        }
        _ if mem_size_multiplier != 0 => (&s[..], mem_size_multiplier as i64),
        _ => (&s[..], 1),
    };
    num.trim()
        .parse::<i64>()
        .ok()
        .and_then(|v| v.checked_mul(mult))
        .unwrap_or(dflt)
}

/// `gasnett_setenv`.
#[no_mangle]
pub unsafe extern "C" fn gasnett_setenv(name: *const c_char, value: *const c_char) {
    // SAFETY: C strings (caller's contract); setenv copies them.
    unsafe { libc::setenv(name, value, 1) };
}

/// `gasnett_unsetenv`.
#[no_mangle]
pub unsafe extern "C" fn gasnett_unsetenv(name: *const c_char) {
    // SAFETY: a C string (caller's contract).
    unsafe { libc::unsetenv(name) };
}

/// `gasnett_checksum`: a 64-bit FNV-1a hash of `nbytes` bytes.
#[no_mangle]
pub unsafe extern "C" fn gasnett_checksum(p: *const c_void, nbytes: usize) -> u64 {
    let b: &[u8] = if nbytes == 0 || p.is_null() {
        &[]
    } else {
        // SAFETY: `nbytes` readable bytes at `p` (caller's contract).
        unsafe { std::slice::from_raw_parts(p.cast(), nbytes) }
    };
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
        (h ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
