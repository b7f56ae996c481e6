//! The collectives of the collectives design notes (`gasnet_coll.h`):
//! `gasnet_all_{broadcast,scatter,gather,gather_all,exchange}[_nb]` over
//! the primordial team, their sync modes, address modes and segment hints,
//! and the `gasnet_all_{wait,try}_sync*` calls.
//!
//! `GASNET_COLL_SINGLE` says every node passes the same, correct addresses;
//! segments are not aligned here (`GASNET_ALIGNED_SEGMENTS` 0), so each
//! node's addresses are its own and the call proceeds as `LOCAL` would.

use std::ffi::{c_int, c_void};

use gex::coll::CollHandle;
use gex::{Flags, Tm};

use crate::types::*;

/// `gasnet_all_handle_t`: a collective event (`GASNET_COLL_INVALID_HANDLE`
/// is NULL).
pub type gasnet_all_handle_t = gex_Event_t;

pub const GASNET_COLL_IN_NOSYNC: c_int = 1 << 0;
pub const GASNET_COLL_IN_MYSYNC: c_int = 1 << 1;
pub const GASNET_COLL_IN_ALLSYNC: c_int = 1 << 2;
pub const GASNET_COLL_OUT_NOSYNC: c_int = 1 << 3;
pub const GASNET_COLL_OUT_MYSYNC: c_int = 1 << 4;
pub const GASNET_COLL_OUT_ALLSYNC: c_int = 1 << 5;
pub const GASNET_COLL_SINGLE: c_int = 1 << 6;
pub const GASNET_COLL_LOCAL: c_int = 1 << 7;
pub const GASNET_COLL_DST_IN_SEGMENT: c_int = 1 << 8;
pub const GASNET_COLL_SRC_IN_SEGMENT: c_int = 1 << 9;

/// The design notes' flags as `gex::Flags`; unknown bits, or both address
/// modes, end the job naming `call`.
fn flags_of(f: c_int, call: &str) -> Flags {
    let table = [
        (GASNET_COLL_IN_NOSYNC, Flags::COLL_IN_NOSYNC),
        (GASNET_COLL_IN_MYSYNC, Flags::COLL_IN_MYSYNC),
        (GASNET_COLL_IN_ALLSYNC, Flags::COLL_IN_ALLSYNC),
        (GASNET_COLL_OUT_NOSYNC, Flags::COLL_OUT_NOSYNC),
        (GASNET_COLL_OUT_MYSYNC, Flags::COLL_OUT_MYSYNC),
        (GASNET_COLL_OUT_ALLSYNC, Flags::COLL_OUT_ALLSYNC),
        (GASNET_COLL_DST_IN_SEGMENT, Flags::COLL_DST_IN_SEGMENT),
        (GASNET_COLL_SRC_IN_SEGMENT, Flags::COLL_SRC_IN_SEGMENT),
    ];
    let known = table
        .iter()
        .fold(GASNET_COLL_SINGLE | GASNET_COLL_LOCAL, |a, (b, _)| a | b);
    if f & !known != 0 {
        gex::fatal(&format!("{call}: unknown flags {:#x}", f & !known));
    }
    if f & GASNET_COLL_SINGLE != 0 && f & GASNET_COLL_LOCAL != 0 {
        gex::fatal(&format!(
            "{call}: GASNET_COLL_SINGLE and GASNET_COLL_LOCAL together"
        ));
    }
    table
        .iter()
        .filter(|(b, _)| f & b != 0)
        .fold(Flags::empty(), |a, (_, r)| a | *r)
}

fn team(call: &str) -> &'static Tm {
    match crate::core::primordial_tm() {
        // SAFETY: the primordial team's handle, made by gex_Client_Init.
        Some(t) => unsafe { crate::types::team(t, call) },
        None => gex::fatal(&format!("{call}: called before initialisation")),
    }
}

fn ev(r: gex::Result<CollHandle<'static>>) -> gasnet_all_handle_t {
    c_coll_event(or_fatal(r))
}

fn n_of(t: &Tm) -> usize {
    t.size() as usize
}

/// `gasnet_all_broadcast_nb`: `nbytes` from `src` on `srcnode` to `dst`
/// everywhere.
#[no_mangle]
pub unsafe extern "C" fn gasnet_all_broadcast_nb(
    dst: *mut c_void,
    srcnode: u32,
    src: *mut c_void,
    nbytes: usize,
    flags: c_int,
) -> gasnet_all_handle_t {
    const CALL: &str = "gasnet_all_broadcast_nb";
    let t = team(CALL);
    let f = flags_of(flags, CALL);
    // SAFETY: the buffers stay valid until the handle is synced (the
    // notes' contract); the source is read on the root only.
    let (d, s) = unsafe {
        (
            bytes_mut(dst, nbytes),
            (t.rank() == srcnode && src != dst).then(|| bytes(src, nbytes)),
        )
    };
    ev(gex::coll::broadcast_nb(t, srcnode, d, s, f))
}

/// `gasnet_all_scatter_nb`: block `i` of `src` on `srcnode` (`nbytes`
/// each) to `dst` on node `i`.
#[no_mangle]
pub unsafe extern "C" fn gasnet_all_scatter_nb(
    dst: *mut c_void,
    srcnode: u32,
    src: *mut c_void,
    nbytes: usize,
    flags: c_int,
) -> gasnet_all_handle_t {
    const CALL: &str = "gasnet_all_scatter_nb";
    let t = team(CALL);
    let f = flags_of(flags, CALL);
    let all = nbytes.saturating_mul(n_of(t));
    // SAFETY: as for the broadcast.
    let (d, s) = unsafe {
        (
            bytes_mut(dst, nbytes),
            (t.rank() == srcnode).then(|| bytes(src, all)),
        )
    };
    ev(gex::coll::scatter_nb(t, srcnode, d, s, f))
}

/// `gasnet_all_gather_nb`: `src` (`nbytes`) of node `i` to block `i` of
/// `dst` on `dstnode`.
#[no_mangle]
pub unsafe extern "C" fn gasnet_all_gather_nb(
    dstnode: u32,
    dst: *mut c_void,
    src: *mut c_void,
    nbytes: usize,
    flags: c_int,
) -> gasnet_all_handle_t {
    const CALL: &str = "gasnet_all_gather_nb";
    let t = team(CALL);
    let f = flags_of(flags, CALL);
    let all = nbytes.saturating_mul(n_of(t));
    // SAFETY: as for the broadcast; the destination is written on the root
    // only.
    let (d, s) = unsafe {
        (
            (t.rank() == dstnode).then(|| bytes_mut(dst, all)),
            bytes(src, nbytes),
        )
    };
    ev(gex::coll::gather_nb(t, dstnode, d, s, f))
}

/// `gasnet_all_gather_all_nb`.
#[no_mangle]
pub unsafe extern "C" fn gasnet_all_gather_all_nb(
    dst: *mut c_void,
    src: *mut c_void,
    nbytes: usize,
    flags: c_int,
) -> gasnet_all_handle_t {
    const CALL: &str = "gasnet_all_gather_all_nb";
    let t = team(CALL);
    let f = flags_of(flags, CALL);
    let all = nbytes.saturating_mul(n_of(t));
    // SAFETY: as for the broadcast.
    let (d, s) = unsafe { (bytes_mut(dst, all), bytes(src, nbytes)) };
    ev(gex::coll::gather_all_nb(t, d, s, f))
}

/// `gasnet_all_exchange_nb`: block `j` of `src` on node `i` to block `i`
/// of `dst` on node `j`.
#[no_mangle]
pub unsafe extern "C" fn gasnet_all_exchange_nb(
    dst: *mut c_void,
    src: *mut c_void,
    nbytes: usize,
    flags: c_int,
) -> gasnet_all_handle_t {
    const CALL: &str = "gasnet_all_exchange_nb";
    let t = team(CALL);
    let f = flags_of(flags, CALL);
    let all = nbytes.saturating_mul(n_of(t));
    // SAFETY: as for the broadcast.
    let (d, s) = unsafe { (bytes_mut(dst, all), bytes(src, all)) };
    ev(gex::coll::exchange_nb(t, d, s, f))
}

/// The images of an "i" call: `Single` (the node list, and this node's
/// entries of the address list) or `Local` (`rank`, `nblocks`, every entry
/// this node's), and the image count over all nodes.
///
/// # Safety
/// `nodelist` (under SINGLE) and `list` have `listlen` entries.
unsafe fn images<'a>(
    t: &Tm,
    flags: c_int,
    nodelist: *const u32,
    list: *const *mut c_void,
    listlen: usize,
    rank: usize,
    nblocks: usize,
) -> (gex::coll::Images<'a>, Vec<*mut c_void>, usize) {
    // SAFETY: caller's contract.
    let l: &[*mut c_void] = if listlen == 0 || list.is_null() {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(list, listlen) }
    };
    if flags & GASNET_COLL_SINGLE != 0 {
        // SAFETY: caller's contract.
        let nodes: &[u32] = if listlen == 0 || nodelist.is_null() {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(nodelist, listlen) }
        };
        let me = t.rank();
        let mine = nodes
            .iter()
            .zip(l)
            .filter(|(&n, _)| n == me)
            .map(|(_, &p)| p)
            .collect();
        (gex::coll::Images::Single { nodes }, mine, listlen)
    } else {
        (
            gex::coll::Images::Local {
                first: rank,
                nblocks,
            },
            l.to_vec(),
            nblocks,
        )
    }
}

/// `gasnet_all_broadcasti_nb`.
#[no_mangle]
pub unsafe extern "C" fn gasnet_all_broadcasti_nb(
    nodelist: *const u32,
    dstlist: *const *mut c_void,
    srcnode: u32,
    src: *mut c_void,
    listlen: usize,
    nbytes: usize,
    rank: usize,
    nblocks: usize,
    flags: c_int,
) -> gasnet_all_handle_t {
    const CALL: &str = "gasnet_all_broadcasti_nb";
    let t = team(CALL);
    let f = flags_of(flags, CALL);
    // SAFETY: the lists have `listlen` entries; every buffer stays valid
    // until the handle is synced.
    let (im, mine, _) = unsafe { images(t, flags, nodelist, dstlist, listlen, rank, nblocks) };
    // SAFETY: as above.
    let dsts = mine.into_iter().map(|p| unsafe { bytes_mut(p, nbytes) });
    // SAFETY: as above (read on the root only).
    let s = (t.rank() == srcnode).then(|| unsafe { bytes(src, nbytes) });
    ev(gex::coll::broadcasti_nb(t, im, srcnode, dsts, s, nbytes, f))
}

/// `gasnet_all_scatteri_nb`.
#[no_mangle]
pub unsafe extern "C" fn gasnet_all_scatteri_nb(
    nodelist: *const u32,
    dstlist: *const *mut c_void,
    srcnode: u32,
    src: *mut c_void,
    listlen: usize,
    nbytes: usize,
    rank: usize,
    nblocks: usize,
    flags: c_int,
) -> gasnet_all_handle_t {
    const CALL: &str = "gasnet_all_scatteri_nb";
    let t = team(CALL);
    let f = flags_of(flags, CALL);
    // SAFETY: as for the broadcast.
    let (im, mine, total) = unsafe { images(t, flags, nodelist, dstlist, listlen, rank, nblocks) };
    // SAFETY: as for the broadcast.
    let dsts = mine.into_iter().map(|p| unsafe { bytes_mut(p, nbytes) });
    // SAFETY: as for the broadcast.
    let s = (t.rank() == srcnode).then(|| unsafe { bytes(src, total.saturating_mul(nbytes)) });
    ev(gex::coll::scatteri_nb(t, im, srcnode, dsts, s, nbytes, f))
}

/// `gasnet_all_gatheri_nb`.
#[no_mangle]
pub unsafe extern "C" fn gasnet_all_gatheri_nb(
    dstnode: u32,
    dst: *mut c_void,
    nodelist: *const u32,
    srclist: *const *mut c_void,
    listlen: usize,
    nbytes: usize,
    rank: usize,
    nblocks: usize,
    flags: c_int,
) -> gasnet_all_handle_t {
    const CALL: &str = "gasnet_all_gatheri_nb";
    let t = team(CALL);
    let f = flags_of(flags, CALL);
    // SAFETY: as for the broadcast.
    let (im, mine, total) = unsafe { images(t, flags, nodelist, srclist, listlen, rank, nblocks) };
    // SAFETY: as for the broadcast.
    let srcs: Vec<&[u8]> = mine
        .into_iter()
        .map(|p| unsafe { bytes(p, nbytes) })
        .collect();
    // SAFETY: as for the broadcast (written on the root only).
    let d = (t.rank() == dstnode).then(|| unsafe { bytes_mut(dst, total.saturating_mul(nbytes)) });
    ev(gex::coll::gatheri_nb(t, im, dstnode, d, &srcs, nbytes, f))
}

/// `gasnet_all_gather_alli_nb`.
#[no_mangle]
pub unsafe extern "C" fn gasnet_all_gather_alli_nb(
    nodelist: *const u32,
    dstlist: *const *mut c_void,
    srclist: *const *mut c_void,
    listlen: usize,
    nbytes: usize,
    rank: usize,
    nblocks: usize,
    flags: c_int,
) -> gasnet_all_handle_t {
    const CALL: &str = "gasnet_all_gather_alli_nb";
    let t = team(CALL);
    let f = flags_of(flags, CALL);
    // SAFETY: as for the broadcast.
    let (im, dm, total) = unsafe { images(t, flags, nodelist, dstlist, listlen, rank, nblocks) };
    // SAFETY: as for the broadcast.
    let (_, sm, _) = unsafe { images(t, flags, nodelist, srclist, listlen, rank, nblocks) };
    let all = total.saturating_mul(nbytes);
    // SAFETY: as for the broadcast.
    let srcs: Vec<&[u8]> = sm
        .into_iter()
        .map(|p| unsafe { bytes(p, nbytes) })
        .collect();
    // SAFETY: as for the broadcast.
    let dsts = dm.into_iter().map(|p| unsafe { bytes_mut(p, all) });
    ev(gex::coll::gather_alli_nb(t, im, dsts, &srcs, nbytes, f))
}

/// `gasnet_all_exchangei_nb`.
#[no_mangle]
pub unsafe extern "C" fn gasnet_all_exchangei_nb(
    nodelist: *const u32,
    dstlist: *const *mut c_void,
    srclist: *const *mut c_void,
    listlen: usize,
    nbytes: usize,
    rank: usize,
    nblocks: usize,
    flags: c_int,
) -> gasnet_all_handle_t {
    const CALL: &str = "gasnet_all_exchangei_nb";
    let t = team(CALL);
    let f = flags_of(flags, CALL);
    // SAFETY: as for the broadcast.
    let (im, dm, total) = unsafe { images(t, flags, nodelist, dstlist, listlen, rank, nblocks) };
    // SAFETY: as for the broadcast.
    let (_, sm, _) = unsafe { images(t, flags, nodelist, srclist, listlen, rank, nblocks) };
    let all = total.saturating_mul(nbytes);
    // SAFETY: as for the broadcast.
    let srcs: Vec<&[u8]> = sm.into_iter().map(|p| unsafe { bytes(p, all) }).collect();
    // SAFETY: as for the broadcast.
    let dsts = dm.into_iter().map(|p| unsafe { bytes_mut(p, all) });
    ev(gex::coll::exchangei_nb(t, im, dsts, &srcs, nbytes, f))
}

/// The notes' `partnerlist` / `partnercount`: a list of `partnercount`
/// ranks, or (a NULL list) only their number.
///
/// # Safety
/// A non-NULL `list` has `count` readable entries.
unsafe fn partners<'a>(list: *const u32, count: usize) -> gex::coll::Partners<'a> {
    if list.is_null() {
        gex::coll::Partners::Count(count)
    } else {
        // SAFETY: caller's contract.
        gex::coll::Partners::List(unsafe { std::slice::from_raw_parts(list, count) })
    }
}

/// The flags of `all_put` / `all_get`, which are always LOCAL: SINGLE ends
/// the job, as the notes make it an error.
fn flags_local(f: c_int, call: &str) -> Flags {
    if f & GASNET_COLL_SINGLE != 0 {
        gex::fatal(&format!(
            "{call}: GASNET_COLL_SINGLE is an error here (all_put and all_get are always LOCAL)"
        ));
    }
    flags_of(f, call)
}

/// A list of `len` pointers (none when `len` is 0).
///
/// # Safety
/// A non-empty list has `len` readable entries.
unsafe fn ptrs<'a>(list: *const *mut c_void, len: usize, call: &str) -> &'a [*mut c_void] {
    if len == 0 {
        return &[];
    }
    if list.is_null() {
        gex::fatal(&format!("{call}: a NULL list of {len} entries"));
    }
    // SAFETY: caller's contract.
    unsafe { std::slice::from_raw_parts(list, len) }
}

/// `gasnet_all_put_nb`: `nbytes` from `src` to `dst` (an address in node
/// `dstnode`'s segment); `partnerlist`/`partnercount` name the nodes that
/// put into this node's memory (a NULL list: only how many).
#[no_mangle]
pub unsafe extern "C" fn gasnet_all_put_nb(
    dstnode: u32,
    dst: *mut c_void,
    src: *mut c_void,
    partnerlist: *const u32,
    partnercount: usize,
    nbytes: usize,
    flags: c_int,
) -> gasnet_all_handle_t {
    const CALL: &str = "gasnet_all_put_nb";
    let t = team(CALL);
    let f = flags_local(flags, CALL);
    // SAFETY: the source stays valid until the handle is synced and the
    // partner list has `partnercount` entries (the notes' contract).
    let (s, p) = unsafe { (bytes(src, nbytes), partners(partnerlist, partnercount)) };
    ev(gex::coll::all_put_nb(t, dstnode, dst as usize, s, p, f))
}

/// `gasnet_all_get_nb`: `nbytes` from `src` (an address in node `srcnode`'s
/// segment) into `dst`; the partners are the nodes that get from this
/// node's memory.
#[no_mangle]
pub unsafe extern "C" fn gasnet_all_get_nb(
    dst: *mut c_void,
    srcnode: u32,
    src: *mut c_void,
    partnerlist: *const u32,
    partnercount: usize,
    nbytes: usize,
    flags: c_int,
) -> gasnet_all_handle_t {
    const CALL: &str = "gasnet_all_get_nb";
    let t = team(CALL);
    let f = flags_local(flags, CALL);
    // SAFETY: the destination stays valid and untouched until the handle
    // is synced; the partner list as for the put.
    let (d, p) = unsafe { (bytes_mut(dst, nbytes), partners(partnerlist, partnercount)) };
    ev(gex::coll::all_get_nb(t, d, srcnode, src as usize, p, f))
}

/// A list of `len` node numbers (none when `len` is 0).
///
/// # Safety
/// A non-empty list has `len` readable entries.
unsafe fn u32s<'a>(list: *const u32, len: usize, call: &str) -> &'a [u32] {
    if len == 0 {
        return &[];
    }
    if list.is_null() {
        gex::fatal(&format!("{call}: a NULL node list of {len} entries"));
    }
    // SAFETY: caller's contract.
    unsafe { std::slice::from_raw_parts(list, len) }
}

/// The lists of `gasnet_all_puti_nb` / `gasnet_all_geti_nb`: the nodes,
/// the addresses on them (as integers: in their segments), the local
/// buffers, and the partners.
///
/// # Safety
/// The three lists have `listlen` entries (or `listlen` is 0); the
/// partner list as for [`partners`].
unsafe fn i_lists<'a>(
    nodelist: *const u32,
    remote: *const *mut c_void,
    local: *const *mut c_void,
    listlen: usize,
    partnerlist: *const u32,
    partnercount: usize,
    call: &str,
) -> (
    &'a [u32],
    Vec<usize>,
    &'a [*mut c_void],
    gex::coll::Partners<'a>,
) {
    // SAFETY: caller's contract.
    unsafe {
        (
            u32s(nodelist, listlen, call),
            ptrs(remote, listlen, call)
                .iter()
                .map(|&a| a as usize)
                .collect(),
            ptrs(local, listlen, call),
            partners(partnerlist, partnercount),
        )
    }
}

/// `gasnet_all_puti_nb`: `nbytes` from `srclist[i]` to `dstlist[i]` on
/// node `nodelist[i]`, for `i` below `listlen` (0 allowed).
#[no_mangle]
pub unsafe extern "C" fn gasnet_all_puti_nb(
    nodelist: *const u32,
    dstlist: *const *mut c_void,
    srclist: *const *mut c_void,
    listlen: usize,
    partnerlist: *const u32,
    partnercount: usize,
    nbytes: usize,
    flags: c_int,
) -> gasnet_all_handle_t {
    const CALL: &str = "gasnet_all_puti_nb";
    let t = team(CALL);
    let f = flags_local(flags, CALL);
    // SAFETY: the lists have `listlen` entries, the sources stay valid
    // until the handle is synced (the notes' contract).
    let (nodes, dsts, srcs, p) = unsafe {
        i_lists(
            nodelist,
            dstlist,
            srclist,
            listlen,
            partnerlist,
            partnercount,
            CALL,
        )
    };
    // SAFETY: as above.
    let srcs: Vec<&[u8]> = srcs.iter().map(|&s| unsafe { bytes(s, nbytes) }).collect();
    ev(gex::coll::all_puti_nb(t, nodes, &dsts, &srcs, p, nbytes, f))
}

/// `gasnet_all_geti_nb`: `nbytes` from `srclist[i]` on node `nodelist[i]`
/// into `dstlist[i]`, for `i` below `listlen` (0 allowed).
#[no_mangle]
pub unsafe extern "C" fn gasnet_all_geti_nb(
    dstlist: *const *mut c_void,
    nodelist: *const u32,
    srclist: *const *mut c_void,
    listlen: usize,
    partnerlist: *const u32,
    partnercount: usize,
    nbytes: usize,
    flags: c_int,
) -> gasnet_all_handle_t {
    const CALL: &str = "gasnet_all_geti_nb";
    let t = team(CALL);
    let f = flags_local(flags, CALL);
    // SAFETY: as for the puti (the destinations stay valid and untouched
    // until the handle is synced).
    let (nodes, srcs, dsts, p) = unsafe {
        i_lists(
            nodelist,
            srclist,
            dstlist,
            listlen,
            partnerlist,
            partnercount,
            CALL,
        )
    };
    // SAFETY: as above.
    let dsts = dsts.iter().map(|&d| unsafe { bytes_mut(d, nbytes) });
    ev(gex::coll::all_geti_nb(t, dsts, nodes, &srcs, p, nbytes, f))
}
