//! Vector, indexed and strided transfers (`gasnet_vis.h`): the 18
//! `gex_VIS_*` calls and `gex_VIS_SetPeerCompletionHandler`.
//!
//! The C lists become Rust lists per call (`Memvec`s, slices); an NB get's
//! list of destination slices lives as long as its event (`CEvent::Kept`).

use std::ffi::{c_int, c_void};

use gex::vis::{Injected, StridedLocal, Vis};
use gex::{Event, Memvec};

use crate::types::*;

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Nb,
    Nbi,
    Blocking,
}

fn injected(r: gex::Result<Injected>) -> c_int {
    match or_fatal(r) {
        Injected::Sent => GASNET_OK,
        Injected::NoOp => 1,
    }
}

/// A C array as a slice (empty for a zero count).
///
/// # Safety
/// `p` points to `n` elements (caller's contract).
unsafe fn arr<'a, T>(p: *const T, n: usize) -> &'a [T] {
    if n == 0 || p.is_null() {
        &[]
    } else {
        // SAFETY: caller's contract.
        unsafe { std::slice::from_raw_parts(p, n) }
    }
}

fn remote(list: &[gex_Memvec_t]) -> Vec<Memvec> {
    list.iter()
        .map(|m| Memvec::new(m.gex_addr as usize, m.gex_len))
        .collect()
}

/// Local source pieces.
///
/// # Safety
/// Every piece is readable for its length.
unsafe fn srcs<'a>(list: &[gex_Memvec_t]) -> Vec<&'a [u8]> {
    // SAFETY: caller's contract.
    list.iter()
        .map(|m| unsafe { bytes(m.gex_addr, m.gex_len) })
        .collect()
}

/// Local destination pieces, leaked for an event's life.
///
/// # Safety
/// Every piece is writable for its length and left alone until the
/// operation completes.
unsafe fn dsts(pieces: impl Iterator<Item = (*mut c_void, usize)>) -> *mut [&'static mut [u8]] {
    // SAFETY: caller's contract.
    let v: Vec<&'static mut [u8]> = pieces.map(|(p, n)| unsafe { bytes_mut(p, n) }).collect();
    Box::into_raw(v.into_boxed_slice())
}

/// Runs a get on a leaked destination list and shapes its result.
fn get_out(
    list: *mut [&'static mut [u8]],
    mode: Mode,
    f: impl FnOnce(&'static mut [&'static mut [u8]], Mode) -> gex::Result<Out>,
) -> Ret {
    // SAFETY: just leaked by `dsts`; freed by `Keep` after the event.
    let l = unsafe { &mut *list };
    let keep = Keep(list);
    match or_fatal(f(l, mode)) {
        Out::Event(e) => {
            if e.is_invalid() || e.is_no_op() {
                let c = c_event(e);
                drop(keep);
                Ret::Event(c)
            } else {
                Ret::Event(Box::into_raw(Box::new(CEvent::Kept(e, keep))))
            }
        }
        Out::Injected(i) => {
            drop(keep);
            Ret::Int(injected(Ok(i)))
        }
    }
}

enum Out {
    Event(Event<'static>),
    Injected(Injected),
}

enum Ret {
    Event(gex_Event_t),
    Int(c_int),
}

fn put_out(r: gex::Result<Out>) -> Ret {
    match or_fatal(r) {
        Out::Event(e) => Ret::Event(c_event(e)),
        Out::Injected(i) => Ret::Int(injected(Ok(i))),
    }
}

macro_rules! three {
    ($mode:expr, $t:ident, $nb:ident, $nbi:ident, $bl:ident, ($($a:expr),*)) => {
        match $mode {
            Mode::Nb => $t.$nb($($a),*).map(Out::Event),
            Mode::Nbi => $t.$nbi($($a),*).map(Out::Injected),
            Mode::Blocking => $t.$bl($($a),*).map(Out::Injected),
        }
    };
}

#[allow(clippy::too_many_arguments)]
unsafe fn vector_put(
    call: &str,
    mode: Mode,
    tm: gex_TM_t,
    dstrank: gex_Rank_t,
    dstcount: usize,
    dstlist: *const gex_Memvec_t,
    srccount: usize,
    srclist: *const gex_Memvec_t,
    flags: gex_Flags_t,
) -> Ret {
    let f = crate::types::flags(flags, call);
    // SAFETY: the lists have their counts; the sources are readable.
    let (d, s) = unsafe { (remote(arr(dstlist, dstcount)), srcs(arr(srclist, srccount))) };
    put_out(with_tm!(tm, call, |t| three!(
        mode,
        t,
        vector_put_nb,
        vector_put_nbi,
        vector_put_blocking,
        (dstrank, &d, &s, f)
    )))
}

#[allow(clippy::too_many_arguments)]
unsafe fn vector_get(
    call: &str,
    mode: Mode,
    tm: gex_TM_t,
    dstcount: usize,
    dstlist: *const gex_Memvec_t,
    srcrank: gex_Rank_t,
    srccount: usize,
    srclist: *const gex_Memvec_t,
    flags: gex_Flags_t,
) -> Ret {
    let f = crate::types::flags(flags, call);
    // SAFETY: the lists have their counts; the destinations are writable
    // until the operation completes.
    let (l, s) = unsafe {
        (
            dsts(
                arr(dstlist, dstcount)
                    .iter()
                    .map(|m| (m.gex_addr, m.gex_len)),
            ),
            remote(arr(srclist, srccount)),
        )
    };
    get_out(l, mode, |l, mode| {
        with_tm!(tm, call, |t| three!(
            mode,
            t,
            vector_get_nb,
            vector_get_nbi,
            vector_get_blocking,
            (&mut *l, srcrank, &s, f)
        ))
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn indexed_put(
    call: &str,
    mode: Mode,
    tm: gex_TM_t,
    dstrank: gex_Rank_t,
    dstcount: usize,
    dstlist: *const *mut c_void,
    dstlen: usize,
    srccount: usize,
    srclist: *const *mut c_void,
    srclen: usize,
    flags: gex_Flags_t,
) -> Ret {
    let f = crate::types::flags(flags, call);
    // SAFETY: the lists have their counts; each source has `srclen` bytes.
    let (d, s): (Vec<usize>, Vec<&[u8]>) = unsafe {
        (
            arr(dstlist, dstcount).iter().map(|&p| p as usize).collect(),
            arr(srclist, srccount)
                .iter()
                .map(|&p| bytes(p, srclen))
                .collect(),
        )
    };
    put_out(with_tm!(tm, call, |t| three!(
        mode,
        t,
        indexed_put_nb,
        indexed_put_nbi,
        indexed_put_blocking,
        (dstrank, &d, dstlen, &s, srclen, f)
    )))
}

#[allow(clippy::too_many_arguments)]
unsafe fn indexed_get(
    call: &str,
    mode: Mode,
    tm: gex_TM_t,
    dstcount: usize,
    dstlist: *const *mut c_void,
    dstlen: usize,
    srcrank: gex_Rank_t,
    srccount: usize,
    srclist: *const *mut c_void,
    srclen: usize,
    flags: gex_Flags_t,
) -> Ret {
    let f = crate::types::flags(flags, call);
    // SAFETY: the lists have their counts; each destination is writable
    // for `dstlen` bytes until the operation completes.
    let (l, s): (_, Vec<usize>) = unsafe {
        (
            dsts(arr(dstlist, dstcount).iter().map(|&p| (p, dstlen))),
            arr(srclist, srccount).iter().map(|&p| p as usize).collect(),
        )
    };
    get_out(l, mode, |l, mode| {
        with_tm!(tm, call, |t| three!(
            mode,
            t,
            indexed_get_nb,
            indexed_get_nbi,
            indexed_get_blocking,
            (&mut *l, dstlen, srcrank, &s, srclen, f)
        ))
    })
}

/// The local extent of a strided shape: (lowest byte offset, length); the
/// shape is empty (no bytes) for `elemsz == 0` or a zero count.
fn extent(strides: &[isize], elemsz: usize, count: &[usize]) -> (isize, usize) {
    if elemsz == 0 || count.contains(&0) {
        return (0, 0);
    }
    let (mut lo, mut hi) = (0isize, 0isize);
    for (s, c) in strides.iter().zip(count) {
        let span = s.saturating_mul(*c as isize - 1);
        if span < 0 {
            lo = lo.saturating_add(span);
        } else {
            hi = hi.saturating_add(span);
        }
    }
    (lo, (hi - lo) as usize + elemsz)
}

#[allow(clippy::too_many_arguments)]
unsafe fn strided_put(
    call: &str,
    mode: Mode,
    tm: gex_TM_t,
    dstrank: gex_Rank_t,
    dstaddr: *mut c_void,
    dststrides: *const isize,
    srcaddr: *mut c_void,
    srcstrides: *const isize,
    elemsz: usize,
    count: *const usize,
    stridelevels: usize,
    flags: gex_Flags_t,
) -> Ret {
    let f = crate::types::flags(flags, call);
    // SAFETY: the arrays have `stridelevels` entries.
    let (ds, ss, c) = unsafe {
        (
            arr(dststrides, stridelevels),
            arr(srcstrides, stridelevels),
            arr(count, stridelevels),
        )
    };
    let (lo, len) = extent(ss, elemsz, c);
    // SAFETY: every source element lies in [srcaddr + lo, + len), readable
    // (caller's contract).
    let buf = unsafe { bytes((srcaddr as *const u8).wrapping_offset(lo).cast(), len) };
    let src = StridedLocal::new(buf, (-lo) as usize);
    let d = dstaddr as usize;
    put_out(with_tm!(tm, call, |t| three!(
        mode,
        t,
        strided_put_nb,
        strided_put_nbi,
        strided_put_blocking,
        (dstrank, d, ds, src, ss, elemsz, c, f)
    )))
}

#[allow(clippy::too_many_arguments)]
unsafe fn strided_get(
    call: &str,
    mode: Mode,
    tm: gex_TM_t,
    dstaddr: *mut c_void,
    dststrides: *const isize,
    srcrank: gex_Rank_t,
    srcaddr: *mut c_void,
    srcstrides: *const isize,
    elemsz: usize,
    count: *const usize,
    stridelevels: usize,
    flags: gex_Flags_t,
) -> Ret {
    let f = crate::types::flags(flags, call);
    // SAFETY: the arrays have `stridelevels` entries.
    let (ds, ss, c) = unsafe {
        (
            arr(dststrides, stridelevels),
            arr(srcstrides, stridelevels),
            arr(count, stridelevels),
        )
    };
    let (lo, len) = extent(ds, elemsz, c);
    let base = (dstaddr as *mut u8).wrapping_offset(lo).cast::<c_void>();
    // SAFETY: every destination element lies in [dstaddr + lo, + len),
    // writable until the operation completes (caller's contract).
    let l = unsafe { dsts(std::iter::once((base, len))) };
    let s = srcaddr as usize;
    get_out(l, mode, |l, mode| {
        let dst = StridedLocal::new(&mut *l[0], (-lo) as usize);
        with_tm!(tm, call, |t| three!(
            mode,
            t,
            strided_get_nb,
            strided_get_nbi,
            strided_get_blocking,
            (dst, ds, srcrank, s, ss, elemsz, c, f)
        ))
    })
}

fn ev(r: Ret) -> gex_Event_t {
    match r {
        Ret::Event(e) => e,
        Ret::Int(_) => unreachable!("an NB call returns an event"),
    }
}

fn int(r: Ret) -> c_int {
    match r {
        Ret::Int(i) => i,
        Ret::Event(_) => unreachable!("an NBI or blocking call returns an int"),
    }
}

macro_rules! exports {
    ($inner:ident, ($($p:ident: $t:ty),*), $nb:ident, $nbi:ident, $bl:ident) => {
        #[doc = concat!("`", stringify!($nb), "`.")]
        #[no_mangle]
        pub unsafe extern "C" fn $nb(tm: gex_TM_t, $($p: $t),*, flags: gex_Flags_t) -> gex_Event_t {
            // SAFETY: the C caller's contract on every list and buffer.
            ev(unsafe { $inner(stringify!($nb), Mode::Nb, tm, $($p),*, flags) })
        }
        #[doc = concat!("`", stringify!($nbi), "`.")]
        #[no_mangle]
        pub unsafe extern "C" fn $nbi(tm: gex_TM_t, $($p: $t),*, flags: gex_Flags_t) -> c_int {
            // SAFETY: the C caller's contract on every list and buffer.
            int(unsafe { $inner(stringify!($nbi), Mode::Nbi, tm, $($p),*, flags) })
        }
        #[doc = concat!("`", stringify!($bl), "`.")]
        #[no_mangle]
        pub unsafe extern "C" fn $bl(tm: gex_TM_t, $($p: $t),*, flags: gex_Flags_t) -> c_int {
            // SAFETY: the C caller's contract on every list and buffer.
            int(unsafe { $inner(stringify!($bl), Mode::Blocking, tm, $($p),*, flags) })
        }
    };
}

exports!(
    vector_put,
    (dstrank: gex_Rank_t, dstcount: usize, dstlist: *const gex_Memvec_t, srccount: usize, srclist: *const gex_Memvec_t),
    gex_VIS_VectorPutNB,
    gex_VIS_VectorPutNBI,
    gex_VIS_VectorPutBlocking
);
exports!(
    vector_get,
    (dstcount: usize, dstlist: *const gex_Memvec_t, srcrank: gex_Rank_t, srccount: usize, srclist: *const gex_Memvec_t),
    gex_VIS_VectorGetNB,
    gex_VIS_VectorGetNBI,
    gex_VIS_VectorGetBlocking
);
exports!(
    indexed_put,
    (dstrank: gex_Rank_t, dstcount: usize, dstlist: *const *mut c_void, dstlen: usize, srccount: usize, srclist: *const *mut c_void, srclen: usize),
    gex_VIS_IndexedPutNB,
    gex_VIS_IndexedPutNBI,
    gex_VIS_IndexedPutBlocking
);
exports!(
    indexed_get,
    (dstcount: usize, dstlist: *const *mut c_void, dstlen: usize, srcrank: gex_Rank_t, srccount: usize, srclist: *const *mut c_void, srclen: usize),
    gex_VIS_IndexedGetNB,
    gex_VIS_IndexedGetNBI,
    gex_VIS_IndexedGetBlocking
);
exports!(
    strided_put,
    (dstrank: gex_Rank_t, dstaddr: *mut c_void, dststrides: *const isize, srcaddr: *mut c_void, srcstrides: *const isize, elemsz: usize, count: *const usize, stridelevels: usize),
    gex_VIS_StridedPutNB,
    gex_VIS_StridedPutNBI,
    gex_VIS_StridedPutBlocking
);
exports!(
    strided_get,
    (dstaddr: *mut c_void, dststrides: *const isize, srcrank: gex_Rank_t, srcaddr: *mut c_void, srcstrides: *const isize, elemsz: usize, count: *const usize, stridelevels: usize),
    gex_VIS_StridedGetNB,
    gex_VIS_StridedGetNBI,
    gex_VIS_StridedGetBlocking
);

/// `gex_VIS_SetPeerCompletionHandler`.
#[no_mangle]
pub unsafe extern "C" fn gex_VIS_SetPeerCompletionHandler(
    handler: gex_AM_Index_t,
    source_addr: *const c_void,
    nbytes: usize,
    flags: gex_Flags_t,
) {
    const CALL: &str = "gex_VIS_SetPeerCompletionHandler";
    // SAFETY: the payload is readable (caller's contract; it is copied).
    let p = unsafe { bytes(source_addr, nbytes) };
    or_fatal(gex::vis::set_peer_completion_handler(
        handler,
        p,
        crate::types::flags(flags, CALL),
    ))
}
