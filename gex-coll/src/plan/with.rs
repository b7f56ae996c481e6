//! The address-mode forms' plans (`*_nb_with`, and the plain calls with a
//! segment hint): the one-sided mechanism, which hands a call without
//! hints back to the plain planner with the addresses in its signature
//! (part of the planner, `crate::plan`).
//!
//! Uses the one-sided mechanism, the checks and the handles.

use gex_core::Tm;
use gex_types::{Error, Flags, Rank, Result};

use super::{broadcast_nb, exchange_nb, gather_all_nb, gather_nb, scatter_nb};
use crate::args::check_len;
use crate::handle::CollHandle;
use crate::onesided::{run, Addrs, Bufs, Kind, HINTS};

/// [`crate::broadcast_nb_with`]: the checks, then the one-sided mechanism or the staged
/// collective with the addresses in its signature.
pub(crate) fn broadcast_nb_with<'a>(
    tm: &Tm,
    root: Rank,
    dst: &'a mut [u8],
    src: Option<&'a [u8]>,
    addrs: Addrs<'_>,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_BroadcastNB";
    let nb = dst.len();
    let is_root = tm.rank() == root;
    if let (true, Some(s)) = (is_root, src) {
        check_len(CALL, "src", s.len(), nb)?;
    }
    // In place on the root: its source is its destination.
    let in_place = is_root && src.is_none();
    let bufs = Bufs {
        src: if is_root { src } else { None },
        dst: Some(dst),
        src_is_dst: in_place,
    };
    run(
        CALL,
        Kind::Broadcast,
        tm,
        root,
        nb,
        bufs,
        addrs,
        flags,
        |b, f| broadcast_nb(tm, root, b.dst.expect("dst"), b.src, f - HINTS),
    )
}

/// [`crate::scatter_nb_with`]: the checks, then the one-sided mechanism or the staged
/// collective with the addresses in its signature.
pub(crate) fn scatter_nb_with<'a>(
    tm: &Tm,
    root: Rank,
    dst: &'a mut [u8],
    src: Option<&'a [u8]>,
    addrs: Addrs<'_>,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_ScatterNB";
    let nb = dst.len();
    let n = tm.size() as usize;
    let src = if tm.rank() == root {
        let s = src.ok_or_else(|| Error::bad_arg(format!("{CALL}: the root needs a src")))?;
        check_len(CALL, "src", s.len(), nb * n)?;
        Some(s)
    } else {
        None
    };
    run(
        CALL,
        Kind::Scatter,
        tm,
        root,
        nb,
        Bufs {
            dst: Some(dst),
            src,
            src_is_dst: false,
        },
        addrs,
        flags,
        |b, f| scatter_nb(tm, root, b.dst.expect("dst"), b.src, f - HINTS),
    )
}

/// [`crate::gather_nb_with`]: the checks, then the one-sided mechanism or the staged
/// collective with the addresses in its signature.
pub(crate) fn gather_nb_with<'a>(
    tm: &Tm,
    root: Rank,
    dst: Option<&'a mut [u8]>,
    src: &'a [u8],
    addrs: Addrs<'_>,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_GatherNB";
    let nb = src.len();
    let n = tm.size() as usize;
    let dst = if tm.rank() == root {
        let d = dst.ok_or_else(|| Error::bad_arg(format!("{CALL}: the root needs a dst")))?;
        check_len(CALL, "dst", d.len(), nb * n)?;
        Some(d)
    } else {
        None
    };
    run(
        CALL,
        Kind::Gather,
        tm,
        root,
        nb,
        Bufs {
            dst,
            src: Some(src),
            src_is_dst: false,
        },
        addrs,
        flags,
        |b, f| gather_nb(tm, root, b.dst, b.src.expect("src"), f - HINTS),
    )
}

/// [`crate::gather_all_nb_with`]: the checks, then the one-sided mechanism or the staged
/// collective with the addresses in its signature.
pub(crate) fn gather_all_nb_with<'a>(
    tm: &Tm,
    dst: &'a mut [u8],
    src: &'a [u8],
    addrs: Addrs<'_>,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_GatherAllNB";
    let nb = src.len();
    check_len(CALL, "dst", dst.len(), nb * tm.size() as usize)?;
    run(
        CALL,
        Kind::GatherAll,
        tm,
        0,
        nb,
        Bufs {
            dst: Some(dst),
            src: Some(src),
            src_is_dst: false,
        },
        addrs,
        flags,
        |b, f| gather_all_nb(tm, b.dst.expect("dst"), b.src.expect("src"), f - HINTS),
    )
}

/// [`crate::exchange_nb_with`]: the checks, then the one-sided mechanism or the staged
/// collective with the addresses in its signature.
pub(crate) fn exchange_nb_with<'a>(
    tm: &Tm,
    dst: &'a mut [u8],
    src: &'a [u8],
    addrs: Addrs<'_>,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_ExchangeNB";
    let n = tm.size() as usize;
    check_len(CALL, "dst", dst.len(), src.len())?;
    if !src.len().is_multiple_of(n) {
        return Err(Error::bad_arg(format!(
            "{CALL}: src of {} bytes is not {n} equal blocks",
            src.len()
        )));
    }
    let nb = src.len() / n;
    run(
        CALL,
        Kind::Exchange,
        tm,
        0,
        nb,
        Bufs {
            dst: Some(dst),
            src: Some(src),
            src_is_dst: false,
        },
        addrs,
        flags,
        |b, f| exchange_nb(tm, b.dst.expect("dst"), b.src.expect("src"), f - HINTS),
    )
}
