//! The environment: `gasnett_getenv*`, verbose reporting of the settings a
//! program reads (`GASNET_VERBOSEENV`), `gasnett_setenv`.
//!
//! A process reads its own environment (ranks started by gex-run inherit
//! the launcher's). Verbose reporting is on when `GASNET_VERBOSEENV` is a
//! yes value, in the job's rank 0 (`GEX_RANK` unset or 0); each key is
//! reported once, to stderr, as `ENV parameter: KEY = VALUE`, followed by
//! `(default)` when the value is the caller's default.

use std::collections::HashSet;
use std::ffi::{c_char, c_int, CString};
use std::sync::Mutex;

use crate::backtrace::fatal;
use crate::format::{format_number, parse_int_str};

/// The value of `key`, trimmed, when set.
pub(crate) fn var(key: &str) -> Option<String> {
    let k = CString::new(key).ok()?;
    // SAFETY: a C string; getenv's result stays valid until the variable
    // changes, and is copied at once.
    let v = unsafe { libc::getenv(k.as_ptr()) };
    // SAFETY: getenv returned null or a C string.
    unsafe { crate::cstr(v) }.map(|s| s.to_string_lossy().trim().to_owned())
}

/// Reads a yes/no value: `Y`, `YES`, `1` (any case) are yes, `N`, `NO`, `0`
/// no; `None` for anything else.
pub(crate) fn parse_yesno(s: &str) -> Option<bool> {
    match s.to_ascii_uppercase().as_str() {
        "Y" | "YES" | "1" | "TRUE" | "ON" => Some(true),
        "N" | "NO" | "0" | "FALSE" | "OFF" => Some(false),
        _ => None,
    }
}

/// A yes/no setting, `dflt` when unset or empty; a fatal error for a value
/// that is neither.
pub(crate) fn yesno(key: &str, dflt: bool) -> bool {
    match var(key).filter(|v| !v.is_empty()) {
        None => dflt,
        Some(v) => parse_yesno(&v).unwrap_or_else(|| {
            fatal(&format!(
                "environment variable {key}={v:?} is not a yes/no value (Y, YES, 1, N, NO or 0)"
            ))
        }),
    }
}

/// `gasnett_verboseenv`: whether settings read through the
/// `gasnett_getenv_*_withdefault` calls are reported on this process.
#[no_mangle]
pub extern "C" fn gasnett_verboseenv() -> c_int {
    let on = var("GASNET_VERBOSEENV")
        .and_then(|v| parse_yesno(&v))
        .unwrap_or(false);
    let rank0 = var("GEX_RANK").is_none_or(|r| r.is_empty() || r == "0");
    (on && rank0) as c_int
}

/// Reports `key = shown` once per key when verbose.
fn display(key: &str, shown: &str, is_dflt: bool) {
    static SEEN: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    if gasnett_verboseenv() == 0 {
        return;
    }
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if !seen.get_or_insert_with(HashSet::new).insert(key.to_owned()) {
        return;
    }
    let line = format!(
        "ENV parameter: {key} = {shown}{}\n",
        if is_dflt { "   (default)" } else { "" }
    );
    crate::write_fd(2, line.as_bytes());
}

/// The key as text, or a fatal error naming `call` for a null key.
unsafe fn key_of(call: &str, key: *const c_char) -> String {
    // SAFETY: null or a C string (caller's contract).
    match unsafe { crate::cstr(key) } {
        Some(k) => k.to_string_lossy().into_owned(),
        None => fatal(&format!("{call}: null key")),
    }
}

/// `gasnett_envint_display`.
#[no_mangle]
pub unsafe extern "C" fn gasnett_envint_display(
    key: *const c_char,
    val: i64,
    is_dflt: c_int,
    is_mem_size: c_int,
) {
    // SAFETY: caller's contract.
    let k = unsafe { key_of("gasnett_envint_display", key) };
    display(&k, &format_number(val, is_mem_size != 0), is_dflt != 0);
}

/// `gasnett_envstr_display`.
#[no_mangle]
pub unsafe extern "C" fn gasnett_envstr_display(
    key: *const c_char,
    val: *const c_char,
    is_dflt: c_int,
) {
    // SAFETY: caller's contract.
    let k = unsafe { key_of("gasnett_envstr_display", key) };
    // SAFETY: null or a C string (caller's contract).
    let v = unsafe { crate::cstr(val) }
        .map_or("*not set*".into(), |v| format!("'{}'", v.to_string_lossy()));
    display(&k, &v, is_dflt != 0);
}

/// `gasnett_envdbl_display`.
#[no_mangle]
pub unsafe extern "C" fn gasnett_envdbl_display(key: *const c_char, val: f64, is_dflt: c_int) {
    // SAFETY: caller's contract.
    let k = unsafe { key_of("gasnett_envdbl_display", key) };
    display(&k, &format!("{val}"), is_dflt != 0);
}

/// `gasnett_getenv` (also `gasnet_getenv`): the raw value, unreported; null
/// when unset or for a null key.
#[no_mangle]
pub unsafe extern "C" fn gasnett_getenv(name: *const c_char) -> *mut c_char {
    if name.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: a C string (caller's contract); getenv's result stays valid
    // until the variable is changed.
    unsafe { libc::getenv(name) }
}

/// `gasnet_getenv` (GASNet-1): as [`gasnett_getenv`].
#[no_mangle]
pub unsafe extern "C" fn gasnet_getenv(name: *const c_char) -> *mut c_char {
    // SAFETY: caller's contract.
    unsafe { gasnett_getenv(name) }
}

/// `gasnett_getenv_withdefault`: the value, or `dflt` when unset; reported
/// when verbose.
#[no_mangle]
pub unsafe extern "C" fn gasnett_getenv_withdefault(
    name: *const c_char,
    dflt: *const c_char,
) -> *mut c_char {
    // SAFETY: caller's contract.
    let k = unsafe { key_of("gasnett_getenv_withdefault", name) };
    // SAFETY: caller's contract.
    let v = unsafe { gasnett_getenv(name) };
    let (r, is_dflt) = if v.is_null() {
        (dflt.cast_mut(), true)
    } else {
        (v, false)
    };
    // SAFETY: r is null or a C string (getenv's, or the caller's default).
    let shown = unsafe { crate::cstr(r) }
        .map_or("*not set*".into(), |s| format!("'{}'", s.to_string_lossy()));
    display(&k, &shown, is_dflt);
    r
}

/// `gasnett_getenv_yesno_withdefault`: `Y`, `YES`, `1` (any case; also
/// `TRUE`, `ON`) are 1, `N`, `NO`, `0` (also `FALSE`, `OFF`) 0, unset or
/// empty the default; any other value is a fatal error.
#[no_mangle]
pub unsafe extern "C" fn gasnett_getenv_yesno_withdefault(
    name: *const c_char,
    dflt: c_int,
) -> c_int {
    // SAFETY: caller's contract.
    let k = unsafe { key_of("gasnett_getenv_yesno_withdefault", name) };
    let set = var(&k).is_some_and(|v| !v.is_empty());
    let r = yesno(&k, dflt != 0);
    display(&k, if r { "YES" } else { "NO" }, !set);
    r as c_int
}

/// `gasnett_getenv_int_withdefault`: an integer as `gasnett_parse_int`
/// reads it (a memory size when `mem_size_multiplier` is non-zero); unset or
/// empty gives the default, an unparsable value is a fatal error.
#[no_mangle]
pub unsafe extern "C" fn gasnett_getenv_int_withdefault(
    name: *const c_char,
    dflt: i64,
    mem_size_multiplier: u64,
) -> i64 {
    // SAFETY: caller's contract.
    let k = unsafe { key_of("gasnett_getenv_int_withdefault", name) };
    let (r, is_dflt) = match var(&k).filter(|v| !v.is_empty()) {
        None => (dflt, true),
        Some(v) => match parse_int_str(&v, mem_size_multiplier) {
            Ok(x) => (x, false),
            Err(e) => fatal(&format!(
                "environment variable {k}={v:?} is not {}: {e}",
                if mem_size_multiplier != 0 {
                    "a memory size"
                } else {
                    "an integer"
                }
            )),
        },
    };
    display(&k, &format_number(r, mem_size_multiplier != 0), is_dflt);
    r
}

/// Reads a floating-point value or a fraction (`"1.5"`, `"-1e4"`, `"3/8"`).
pub(crate) fn parse_dbl(s: &str) -> Option<f64> {
    let s = s.trim();
    match s.split_once('/') {
        Some((n, d)) => {
            let (n, d) = (n.trim().parse::<f64>().ok()?, d.trim().parse::<f64>().ok()?);
            (d != 0.0).then_some(n / d)
        }
        None => s
            .parse::<f64>()
            .ok()
            .filter(|x| !x.is_nan() || s.eq_ignore_ascii_case("nan")),
    }
}

/// `gasnett_getenv_dbl_withdefault`: a floating-point value or a fraction;
/// unset or empty gives the default, an unparsable value is a fatal error.
#[no_mangle]
pub unsafe extern "C" fn gasnett_getenv_dbl_withdefault(name: *const c_char, dflt: f64) -> f64 {
    // SAFETY: caller's contract.
    let k = unsafe { key_of("gasnett_getenv_dbl_withdefault", name) };
    let (r, is_dflt) = match var(&k).filter(|v| !v.is_empty()) {
        None => (dflt, true),
        Some(v) => match parse_dbl(&v) {
            Some(x) => (x, false),
            None => fatal(&format!(
                "environment variable {k}={v:?} is not a floating-point value or fraction"
            )),
        },
    };
    display(&k, &format!("{r}"), is_dflt);
    r
}

/// `gasnett_setenv`: sets `key` for this process only (null arguments are
/// ignored).
#[no_mangle]
pub unsafe extern "C" fn gasnett_setenv(name: *const c_char, value: *const c_char) {
    if name.is_null() || value.is_null() {
        return;
    }
    // SAFETY: C strings (caller's contract); setenv copies them.
    unsafe { libc::setenv(name, value, 1) };
}

/// `gasnett_unsetenv`: unsets `key` for this process only.
#[no_mangle]
pub unsafe extern "C" fn gasnett_unsetenv(name: *const c_char) {
    if name.is_null() {
        return;
    }
    // SAFETY: a C string (caller's contract).
    unsafe { libc::unsetenv(name) };
}
