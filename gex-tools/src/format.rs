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
    // 2^63 and above, NaN and infinities are out.
    if !(0.0..i64::MAX as f64).contains(&v) {
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

/// The names of the bits of `gex_TI_t`, `gex_DT_t` and `gex_OP_t`, lowest
/// first (gasnetex.h's values).
const TI_NAMES: [&str; 5] = [
    "GEX_TI_SRCRANK",
    "GEX_TI_EP",
    "GEX_TI_ENTRY",
    "GEX_TI_IS_REQ",
    "GEX_TI_IS_LONG",
];
const DT_NAMES: [&str; 7] = [
    "GEX_DT_I32",
    "GEX_DT_U32",
    "GEX_DT_I64",
    "GEX_DT_U64",
    "GEX_DT_FLT",
    "GEX_DT_DBL",
    "GEX_DT_USER",
];
const OP_NAMES: [&str; 27] = [
    "GEX_OP_ADD",
    "GEX_OP_MULT",
    "GEX_OP_MIN",
    "GEX_OP_MAX",
    "GEX_OP_SUB",
    "GEX_OP_INC",
    "GEX_OP_DEC",
    "GEX_OP_AND",
    "GEX_OP_OR",
    "GEX_OP_XOR",
    "GEX_OP_FADD",
    "GEX_OP_FMULT",
    "GEX_OP_FMIN",
    "GEX_OP_FMAX",
    "GEX_OP_FSUB",
    "GEX_OP_FINC",
    "GEX_OP_FDEC",
    "GEX_OP_FAND",
    "GEX_OP_FOR",
    "GEX_OP_FXOR",
    "GEX_OP_SET",
    "GEX_OP_CAS",
    "GEX_OP_GET",
    "GEX_OP_SWAP",
    "GEX_OP_FCAS",
    "GEX_OP_USER",
    "GEX_OP_USER_NC",
];

/// A bit set as its names joined by `|`, bits without a name as one hex
/// remainder; `0` for the empty set.
pub(crate) fn format_bits(val: u64, names: &[&str]) -> String {
    let mut parts: Vec<String> = names
        .iter()
        .enumerate()
        .filter(|&(i, _)| val >> i & 1 == 1)
        .map(|(_, n)| (*n).to_owned())
        .collect();
    let rest = if names.len() >= 64 {
        0
    } else {
        val & !((1u64 << names.len()) - 1)
    };
    if rest != 0 {
        parts.push(format!("{rest:#x}"));
    }
    if parts.is_empty() {
        "0".into()
    } else {
        parts.join("|")
    }
}

/// Copies `s` into `buf` when non-null (the caller sized it by a first call
/// with a null `buf`) and returns the size `s` needs with its NUL.
///
/// # Safety
/// `buf` is null or has room for `s` and its NUL.
unsafe fn sized_out(s: &str, buf: *mut c_char) -> usize {
    // SAFETY: room for s.len() + 1 bytes (caller's contract).
    unsafe { copy_out(s, buf, if buf.is_null() { 0 } else { s.len() + 1 }) }
}

/// `gasnett_format_ti`: a `gex_TI_t` as the names of its bits; with a null
/// `buf` only the size needed (with the NUL), which is also the result.
#[no_mangle]
pub unsafe extern "C" fn gasnett_format_ti(buf: *mut c_char, ti: u32) -> usize {
    // SAFETY: caller's contract (a buffer of the size a null call gave).
    unsafe { sized_out(&format_bits(ti.into(), &TI_NAMES), buf) }
}

/// `gasnett_format_dt`: a `gex_DT_t` (or a set of them), as
/// [`gasnett_format_ti`].
#[no_mangle]
pub unsafe extern "C" fn gasnett_format_dt(buf: *mut c_char, dt: u32) -> usize {
    // SAFETY: caller's contract.
    unsafe { sized_out(&format_bits(dt.into(), &DT_NAMES), buf) }
}

/// `gasnett_format_op`: a `gex_OP_t` (or a set of them), as
/// [`gasnett_format_ti`].
#[no_mangle]
pub unsafe extern "C" fn gasnett_format_op(buf: *mut c_char, op: u64) -> usize {
    // SAFETY: caller's contract.
    unsafe { sized_out(&format_bits(op, &OP_NAMES), buf) }
}

/// The widest text of one number (a 64-bit value in hex or decimal, a
/// separator).
const NUM: usize = 24;

/// `gex_Memvec_t`.
#[repr(C)]
struct Memvec {
    addr: *mut std::ffi::c_void,
    len: usize,
}

/// Reads `n` items at `p` (none for a null `p`).
///
/// # Safety
/// `p` is null or has `n` readable `T`s.
unsafe fn items<'a, T>(p: *const T, n: usize) -> &'a [T] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        // SAFETY: n readable items (caller's contract).
        unsafe { std::slice::from_raw_parts(p, n) }
    }
}

/// Bytes [`gasnett_format_memveclist`] may write for `count` entries.
#[no_mangle]
pub extern "C" fn gasnett_format_memveclist_bufsz(count: usize) -> usize {
    16 + count.saturating_mul(2 * NUM + 6)
}

/// `gasnett_format_memveclist`: a `gex_Memvec_t` list as
/// `count: [{addr,len} ...]` into `buf` (of
/// `gasnett_format_memveclist_bufsz(count)` bytes); returns `buf`.
#[no_mangle]
pub unsafe extern "C" fn gasnett_format_memveclist(
    buf: *mut c_char,
    count: usize,
    list: *const std::ffi::c_void,
) -> *mut c_char {
    // SAFETY: `count` entries at `list` (caller's contract).
    let l = unsafe { items(list.cast::<Memvec>(), count) };
    let body: Vec<String> = l
        .iter()
        .map(|m| format!("{{{:p},{}}}", m.addr, m.len))
        .collect();
    let s = format!("{count}: [{}]", body.join(" "));
    // SAFETY: the buffer has the documented size (caller's contract).
    unsafe { copy_out(&s, buf, gasnett_format_memveclist_bufsz(count)) };
    buf
}

/// Bytes [`gasnett_format_addrlist`] may write for `count` addresses.
#[no_mangle]
pub extern "C" fn gasnett_format_addrlist_bufsz(count: usize) -> usize {
    32 + count.saturating_mul(NUM)
}

/// `gasnett_format_addrlist`: an address list of `count` chunks of `len`
/// bytes as `count x len: [addr ...]` into `buf` (of
/// `gasnett_format_addrlist_bufsz(count)` bytes); returns `buf`.
#[no_mangle]
pub unsafe extern "C" fn gasnett_format_addrlist(
    buf: *mut c_char,
    count: usize,
    list: *const *mut std::ffi::c_void,
    len: usize,
) -> *mut c_char {
    // SAFETY: `count` addresses at `list` (caller's contract).
    let l = unsafe { items(list, count) };
    let body: Vec<String> = l.iter().map(|&a| format!("{a:p}")).collect();
    let s = format!("{count} x {len}: [{}]", body.join(" "));
    // SAFETY: the buffer has the documented size (caller's contract).
    unsafe { copy_out(&s, buf, gasnett_format_addrlist_bufsz(count)) };
    buf
}

/// Bytes [`gasnett_format_putsgets`] may write for `stridelevels` levels.
#[no_mangle]
pub extern "C" fn gasnett_format_putsgets_bufsz(stridelevels: usize) -> usize {
    160 + 3 * NUM + stridelevels.saturating_add(1).saturating_mul(3 * NUM)
}

/// `gasnett_format_putsgets`: a strided transfer (team, rank, the two
/// addresses and stride lists, element size, counts) as text into `buf`
/// (of `gasnett_format_putsgets_bufsz(stridelevels)` bytes); returns
/// `buf`. `pathdesc` is not read.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn gasnett_format_putsgets(
    buf: *mut c_char,
    _pathdesc: *const std::ffi::c_void,
    tm: *const std::ffi::c_void,
    rank: u32,
    dstaddr: *const std::ffi::c_void,
    dststrides: *const isize,
    srcaddr: *const std::ffi::c_void,
    srcstrides: *const isize,
    elemsz: usize,
    count: *const usize,
    stridelevels: usize,
) -> *mut c_char {
    // Levels beyond what the buffer size formula covers are not read.
    let levels = stridelevels.min(1 << 16);
    let list = |v: &[String]| format!("[{}]", v.join(","));
    // SAFETY: `stridelevels` strides each and `stridelevels` counts
    // (caller's contract, as for the strided VIS calls).
    let (ds, ss, cn) = unsafe {
        (
            items(dststrides, levels),
            items(srcstrides, levels),
            items(count, levels),
        )
    };
    let s = format!(
        "tm={tm:p} rank={rank} dst={dstaddr:p} dststrides={} src={srcaddr:p} srcstrides={} elemsz={elemsz} count={} stridelevels={stridelevels}",
        list(&ds.iter().map(|x| x.to_string()).collect::<Vec<_>>()),
        list(&ss.iter().map(|x| x.to_string()).collect::<Vec<_>>()),
        list(&cn.iter().map(|x| x.to_string()).collect::<Vec<_>>()),
    );
    // SAFETY: the buffer has the documented size (caller's contract).
    unsafe { copy_out(&s, buf, gasnett_format_putsgets_bufsz(stridelevels)) };
    buf
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

    #[test]
    fn bit_sets() {
        assert_eq!(format_bits(0, &TI_NAMES), "0");
        assert_eq!(format_bits(0b101, &TI_NAMES), "GEX_TI_SRCRANK|GEX_TI_ENTRY");
        assert_eq!(
            format_bits(1 << 26 | 1 << 40, &OP_NAMES),
            "GEX_OP_USER_NC|0x10000000000"
        );
        assert_eq!(format_bits(1 << 5, &DT_NAMES), "GEX_DT_DBL");
    }
}
