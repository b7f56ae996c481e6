//! Numbers as text and back (`gasnett_format_number`, `gasnett_parse_int`)
//! and the formatting helpers for GASNet-EX values (`gasnett_format_ti`,
//! `_dt`, `_op`, `_putsgets`, `_memveclist`, `_addrlist`).

use std::ffi::{c_char, c_int};

use crate::backtrace::fatal;

/// Memory-size units, largest first: suffix and power of two.
const UNITS: [(&str, u32); 7] = [
    ("EB", 60),
    ("PB", 50),
    ("TB", 40),
    ("GB", 30),
    ("MB", 20),
    ("KB", 10),
    ("B", 0),
];

/// `val` as text: decimal, or for a memory size a number and the largest
/// unit not above it (`"4 KB"`, `"1.50 KB"`, `"1000 B"`): exact when the
/// value is a whole number of that unit, otherwise rounded to two decimals.
pub(crate) fn format_number(val: i64, is_mem_size: bool) -> String {
    if !is_mem_size {
        return val.to_string();
    }
    let sign = if val < 0 { "-" } else { "" };
    let a = val.unsigned_abs();
    let &(unit, shift) = UNITS
        .iter()
        .find(|&&(_, s)| a >= 1u64 << s)
        .unwrap_or(&("B", 0));
    if a & ((1u64 << shift) - 1) == 0 {
        format!("{sign}{} {unit}", a >> shift)
    } else {
        format!("{sign}{:.2} {unit}", a as f64 / (1u64 << shift) as f64)
    }
}

/// The multiplier of a memory-size suffix (case-insensitive: `B`, `K`/`KB`,
/// `M`/`MB`, `G`/`GB`, `T`/`TB`, `P`/`PB`, `E`/`EB`, with `KiB`-style
/// spellings too).
fn suffix_multiplier(suffix: &str) -> Option<u64> {
    let u = suffix.to_ascii_uppercase();
    let u = u.strip_suffix("IB").map_or(u.clone(), |s| format!("{s}B"));
    if u == "B" {
        return Some(1);
    }
    let letter = u.strip_suffix('B').unwrap_or(&u);
    let shift = match letter {
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        "P" => 50,
        "E" => 60,
        _ => return None,
    };
    Some(1u64 << shift)
}

/// Reads an integer: with `mem_size_multiplier` 0 a decimal or `0x`
/// hexadecimal integer, optionally signed; otherwise a memory size, a
/// (possibly fractional) number with an optional unit suffix, a bare number
/// counting units of `mem_size_multiplier` bytes.
pub(crate) fn parse_int_str(s: &str, mem_size_multiplier: u64) -> Result<i64, String> {
    let t = s.trim();
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, t[1..].trim_start()),
        Some(b'+') => (false, t[1..].trim_start()),
        _ => (false, t),
    };
    if body.is_empty() {
        return Err("no digits".into());
    }
    let signed = |mag: u128| -> Result<i64, String> {
        let v = if neg { -(mag as i128) } else { mag as i128 };
        i64::try_from(v).map_err(|_| "out of the 64-bit range".to_string())
    };
    if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        let mag =
            u64::from_str_radix(hex, 16).map_err(|_| format!("bad hexadecimal number {hex:?}"))?;
        let m = if mem_size_multiplier == 0 {
            1
        } else {
            mem_size_multiplier
        };
        return signed(mag as u128 * m as u128);
    }
    let (num, mult) = if mem_size_multiplier == 0 {
        (body, 1u64)
    } else {
        let split = body
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_alphabetic())
            .last()
            .map_or(body.len(), |(i, _)| i);
        let (num, suffix) = (body[..split].trim_end(), &body[split..]);
        let mult = if suffix.is_empty() {
            mem_size_multiplier
        } else {
            suffix_multiplier(suffix).ok_or_else(|| format!("unknown unit {suffix:?}"))?
        };
        (num, mult)
    };
    if num.is_empty() {
        return Err("no digits".into());
    }
    if num.bytes().all(|b| b.is_ascii_digit()) {
        let mag: u128 = num
            .parse()
            .map_err(|_| "out of the 64-bit range".to_string())?;
        return mag
            .checked_mul(mult as u128)
            .ok_or_else(|| "out of the 64-bit range".to_string())
            .and_then(signed);
    }
    if mem_size_multiplier == 0 {
        return Err(format!("{num:?} is not an integer"));
    }
    let x: f64 = num
        .parse()
        .map_err(|_| format!("{num:?} is not a number"))?;
    let v = (x * mult as f64).round();
    if !v.is_finite() || v < 0.0 || v >= 9.223_372_036_854_775_807e18 {
        return Err("out of the 64-bit range".into());
    }
    signed(v as u128)
}

/// Copies `s` into the C buffer `buf` of `bufsz` bytes, truncated and
/// NUL-terminated; returns the bytes `s` needs with its NUL.
///
/// # Safety
/// `buf` is null or has `bufsz` writable bytes.
unsafe fn copy_out(s: &str, buf: *mut c_char, bufsz: usize) -> usize {
    if !buf.is_null() && bufsz > 0 {
        let n = s.len().min(bufsz - 1);
        // SAFETY: n + 1 <= bufsz writable bytes at buf (caller's contract).
        unsafe {
            std::ptr::copy_nonoverlapping(s.as_ptr(), buf.cast::<u8>(), n);
            *buf.add(n) = 0;
        }
    }
    s.len() + 1
}

/// `gasnett_format_number`: writes `val` as [`format_number`] text into
/// `buf` (`bufsz` bytes, truncated, NUL-terminated) and returns `buf`.
#[no_mangle]
pub unsafe extern "C" fn gasnett_format_number(
    val: i64,
    buf: *mut c_char,
    bufsz: usize,
    is_mem_size: c_int,
) -> *mut c_char {
    // SAFETY: `bufsz` writable bytes at `buf` (caller's contract).
    unsafe { copy_out(&format_number(val, is_mem_size != 0), buf, bufsz) };
    buf
}

/// `gasnett_parse_int`: the integer `str` holds (see [`parse_int_str`]); a
/// string that is not one is a fatal error naming the call.
#[no_mangle]
pub unsafe extern "C" fn gasnett_parse_int(s: *const c_char, mem_size_multiplier: u64) -> i64 {
    // SAFETY: null or a C string (caller's contract).
    let Some(text) = (unsafe { crate::cstr(s) }) else {
        fatal("gasnett_parse_int: null string");
    };
    let text = text.to_string_lossy();
    parse_int_str(&text, mem_size_multiplier).unwrap_or_else(|e| {
        fatal(&format!(
            "gasnett_parse_int({text:?}, {mem_size_multiplier}): not {}: {e}",
            if mem_size_multiplier != 0 {
                "a memory size"
            } else {
                "an integer"
            }
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip() {
        for i in 0..63 {
            let x = 1i64 << i;
            assert_eq!(parse_int_str(&format_number(x, true), 1), Ok(x), "{x}");
            assert_eq!(parse_int_str(&format_number(x, false), 0), Ok(x), "{x}");
            assert_eq!(parse_int_str(&format_number(-x, false), 0), Ok(-x), "{x}");
        }
        assert_eq!(format_number(0, true), "0 B");
        assert_eq!(format_number(4096, true), "4 KB");
        assert_eq!(format_number(1536, true), "1.50 KB");
        assert_eq!(format_number(-2048, true), "-2 KB");
        assert_eq!(format_number(1000, true), "1000 B");
    }

    #[test]
    fn memory_sizes() {
        assert_eq!(parse_int_str("4k", 1), Ok(4096));
        assert_eq!(parse_int_str("4 KB", 1), Ok(4096));
        assert_eq!(parse_int_str("1.5M", 1), Ok(3 << 19));
        assert_eq!(parse_int_str("2g", 1), Ok(2 << 30));
        assert_eq!(parse_int_str("1T", 1), Ok(1 << 40));
        assert_eq!(parse_int_str("3", 1024), Ok(3072));
        assert_eq!(parse_int_str("3B", 1024), Ok(3));
        assert_eq!(parse_int_str("2 MiB", 1), Ok(2 << 20));
        assert_eq!(parse_int_str("0x10", 0), Ok(16));
        assert_eq!(parse_int_str("-12", 0), Ok(-12));
        assert!(parse_int_str("12k", 0).is_err());
        assert!(parse_int_str("abc", 0).is_err());
        assert!(parse_int_str("4 XB", 1).is_err());
        assert!(parse_int_str("", 1).is_err());
        assert!(parse_int_str("16E", 1).is_err());
        assert_eq!(parse_int_str("7E", 1), Ok(7 << 60));
    }
}
