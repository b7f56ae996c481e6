//! The data-movement collectives of `gasnet_coll.h` in both spellings:
//! the collectives design notes' `gasnet_all_*` over the primordial team
//! (with their "i" forms and the generalised `all_put` / `all_get`), and
//! the GASNet-1 `gasnet_coll_*` over any team (with their M forms; the
//! team barrier and `gasnet_coll_init` are in [`team`]). Each
//! `gasnet_all_X_nb` and `gasnet_coll_X_nb` / `gasnet_coll_XM_nb` checks
//! its arguments in one function here ([`broadcast`], [`scatter`],
//! [`gather`], [`gather_all`], [`exchange`]) over `gex::coll`; the sync
//! calls are `gasnetex.h`'s event calls, inline in the header.
//!
//! Images: one per process, image `i` of a team being its rank `i`; an M
//! form reads this process's entry of its address lists (entry 0 under
//! `LOCAL`, entry `rank` under `SINGLE`).
//!
//! `GASNET_COLL_SINGLE` says every node passes the same, correct addresses;
//! segments are not aligned here (`GASNET_ALIGNED_SEGMENTS` 0), so each
//! node's addresses are its own and the call proceeds as `LOCAL` would.

pub mod team;

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
/// The operation is part of an aggregate: here, completed at initiation.
pub const GASNET_COLL_AGGREGATE: c_int = 1 << 10;

/// The flags as `gex::Flags`; unknown bits, or both address modes, end
/// the job naming `call`. `GASNET_COLL_AGGREGATE` is accepted here and
/// acted on by [`ev`].
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
    let known = table.iter().fold(
        GASNET_COLL_SINGLE | GASNET_COLL_LOCAL | GASNET_COLL_AGGREGATE,
        |a, (b, _)| a | b,
    );
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

/// The primordial team (the notes' calls, `GASNET_TEAM_ALL`).
fn team_all(call: &str) -> &'static Tm {
    match crate::core::primordial_tm() {
        // SAFETY: the primordial team's handle, made by gex_Client_Init.
        Some(t) => unsafe { crate::types::team(t, call) },
        None => gex::fatal(&format!("{call}: called before initialisation")),
    }
}

/// The C handle of a started collective; under `GASNET_COLL_AGGREGATE`
/// (in the call's `flags`) the operation is completed here and the handle
/// is the invalid one.
fn ev(r: gex::Result<CollHandle<'static>>, flags: c_int) -> gasnet_all_handle_t {
    let h = or_fatal(r);
    if flags & GASNET_COLL_AGGREGATE != 0 {
        or_fatal(h.wait());
        return std::ptr::null_mut();
    }
    c_coll_event(h)
}

fn n_of(t: &Tm) -> usize {
    t.size() as usize
}

/// The team of a `gasnet_coll_*` call: `GASNET_TEAM_ALL` or any team
/// handle of this library.
fn coll_team(team: gex_TM_t, call: &str) -> &'static Tm {
    if team.is_null() {
        gex::fatal(&format!(
            "{call}: the team is NULL (GASNET_TEAM_ALL before initialisation?)"
        ));
    }
    // SAFETY: a non-NULL team handle of this library (caller's contract).
    unsafe { crate::types::team(team, call) }
}

/// `img` as a rank of `t` (one image per process), or the end of the job.
fn image(t: &Tm, img: u32, what: &str, call: &str) -> u32 {
    if img >= t.size() {
        gex::fatal(&format!(
            "{call}: {what} {img} is not an image of the team ({} images, one per process)",
            t.size()
        ));
    }
    img
}

/// Ends the job if `p` is NULL while `nbytes` are to go through it.
fn need(p: *const c_void, nbytes: usize, what: &str, call: &str) {
    if p.is_null() && nbytes > 0 {
        gex::fatal(&format!("{call}: {what} is NULL"));
    }
}

/// Ends the job if the `a` and `b` ranges overlap (the collectives move
/// data between distinct buffers; the broadcast root's `src == dst` is
/// handled before).
fn disjoint(a: *const c_void, alen: usize, b: *const c_void, blen: usize, call: &str) {
    let (a, b) = (a as usize, b as usize);
    if alen > 0 && blen > 0 && a < b.saturating_add(blen) && b < a.saturating_add(alen) {
        gex::fatal(&format!(
            "{call}: src and dst overlap ({alen} bytes at {a:#x}, {blen} bytes at {b:#x})"
        ));
    }
}

/// This process's entry of an M form's address list: entry 0 under LOCAL
/// (the one image of this process), entry `rank` under SINGLE (one entry
/// per image of the team).
///
/// # Safety
/// A non-NULL `list` has the entries the address mode says.
unsafe fn my_entry(
    t: &Tm,
    list: *const *mut c_void,
    flags: c_int,
    what: &str,
    call: &str,
) -> *mut c_void {
    if list.is_null() {
        gex::fatal(&format!("{call}: {what} is NULL"));
    }
    let i = if flags & GASNET_COLL_SINGLE != 0 {
        t.rank() as usize
    } else {
        0
    };
    // SAFETY: caller's contract.
    unsafe { *list.add(i) }
}

/// The broadcast behind `gasnet_all_broadcast_nb`, `gasnet_coll_broadcast_nb`
/// and `gasnet_coll_broadcastM_nb`: `nbytes` from `src` on `root` to `dst`
/// on every member of `t`.
///
/// # Safety
/// The buffers are valid for `nbytes` until the handle is synced (`src` on
/// the root only).
unsafe fn broadcast(
    t: &Tm,
    dst: *mut c_void,
    root: u32,
    src: *mut c_void,
    nbytes: usize,
    flags: c_int,
    call: &str,
) -> gasnet_all_handle_t {
    let f = flags_of(flags, call);
    let root = image(t, root, "srcimage", call);
    need(dst, nbytes, "dst", call);
    let s = if t.rank() == root && src != dst {
        need(src, nbytes, "src", call);
        disjoint(src, nbytes, dst, nbytes, call);
        // SAFETY: caller's contract (read on the root only).
        Some(unsafe { bytes(src, nbytes) })
    } else {
        None
    };
    // SAFETY: caller's contract.
    let d = unsafe { bytes_mut(dst, nbytes) };
    ev(gex::coll::broadcast_nb(t, root, d, s, f), flags)
}

/// The scatter behind the `gasnet_all_` / `gasnet_coll_` scatters: block
/// `i` of `src` on `root` (`nbytes` each) to `dst` on member `i`.
///
/// # Safety
/// As for [`broadcast`]; `src` holds one block per member.
unsafe fn scatter(
    t: &Tm,
    dst: *mut c_void,
    root: u32,
    src: *mut c_void,
    nbytes: usize,
    flags: c_int,
    call: &str,
) -> gasnet_all_handle_t {
    let f = flags_of(flags, call);
    let root = image(t, root, "srcimage", call);
    let all = nbytes.saturating_mul(n_of(t));
    need(dst, nbytes, "dst", call);
    let s = (t.rank() == root).then(|| {
        need(src, all, "src", call);
        disjoint(src, all, dst, nbytes, call);
        // SAFETY: caller's contract (read on the root only).
        unsafe { bytes(src, all) }
    });
    // SAFETY: caller's contract.
    let d = unsafe { bytes_mut(dst, nbytes) };
    ev(gex::coll::scatter_nb(t, root, d, s, f), flags)
}

/// The gather behind the `gasnet_all_` / `gasnet_coll_` gathers: `src`
/// (`nbytes`) of member `i` to block `i` of `dst` on `root`.
///
/// # Safety
/// As for [`broadcast`]; `dst` (on the root only) holds one block per
/// member.
unsafe fn gather(
    t: &Tm,
    root: u32,
    dst: *mut c_void,
    src: *mut c_void,
    nbytes: usize,
    flags: c_int,
    call: &str,
) -> gasnet_all_handle_t {
    let f = flags_of(flags, call);
    let root = image(t, root, "dstimage", call);
    let all = nbytes.saturating_mul(n_of(t));
    need(src, nbytes, "src", call);
    let d = (t.rank() == root).then(|| {
        need(dst, all, "dst", call);
        disjoint(src, nbytes, dst, all, call);
        // SAFETY: caller's contract (written on the root only).
        unsafe { bytes_mut(dst, all) }
    });
    // SAFETY: caller's contract.
    let s = unsafe { bytes(src, nbytes) };
    ev(gex::coll::gather_nb(t, root, d, s, f), flags)
}

/// The gather-all behind the `gasnet_all_` / `gasnet_coll_` calls: `src`
/// of member `i` to block `i` of `dst` on every member.
///
/// # Safety
/// As for [`broadcast`]; `dst` holds one block per member.
unsafe fn gather_all(
    t: &Tm,
    dst: *mut c_void,
    src: *mut c_void,
    nbytes: usize,
    flags: c_int,
    call: &str,
) -> gasnet_all_handle_t {
    let f = flags_of(flags, call);
    let all = nbytes.saturating_mul(n_of(t));
    need(dst, all, "dst", call);
    need(src, nbytes, "src", call);
    disjoint(src, nbytes, dst, all, call);
    // SAFETY: caller's contract.
    let (d, s) = unsafe { (bytes_mut(dst, all), bytes(src, nbytes)) };
    ev(gex::coll::gather_all_nb(t, d, s, f), flags)
}

/// The exchange behind the `gasnet_all_` / `gasnet_coll_` calls: block `j`
/// of `src` on member `i` to block `i` of `dst` on member `j`.
///
/// # Safety
/// As for [`broadcast`]; `src` and `dst` hold one block per member.
unsafe fn exchange(
    t: &Tm,
    dst: *mut c_void,
    src: *mut c_void,
    nbytes: usize,
    flags: c_int,
    call: &str,
) -> gasnet_all_handle_t {
    let f = flags_of(flags, call);
    let all = nbytes.saturating_mul(n_of(t));
    need(dst, all, "dst", call);
    need(src, all, "src", call);
    disjoint(src, all, dst, all, call);
    // SAFETY: caller's contract.
    let (d, s) = unsafe { (bytes_mut(dst, all), bytes(src, all)) };
    ev(gex::coll::exchange_nb(t, d, s, f), flags)
}

/// The two entry points of one data collective: `$all`, the design notes'
/// call over the primordial team (`GASNET_TEAM_ALL`), and `$coll`, the
/// GASNet-1 call over `team`. Both run `$inner` with the arguments after
/// the team, then `flags` and the call's name.
macro_rules! nb_calls {
    ($(#[$doc:meta])* $inner:ident($($p:ident: $t:ty),*), $all:ident, $coll:ident) => {
        #[doc = concat!("`", stringify!($all), "`:")]
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "C" fn $all($($p: $t,)* flags: c_int) -> gasnet_all_handle_t {
            const CALL: &str = stringify!($all);
            // SAFETY: the notes' contract (buffers valid until the handle is
            // synced).
            unsafe { $inner(team_all(CALL), $($p,)* flags, CALL) }
        }

        #[doc = concat!("`", stringify!($coll), "`: [`", stringify!($all), "`] over `team`.")]
        #[no_mangle]
        pub unsafe extern "C" fn $coll(
            team: gex_TM_t,
            $($p: $t,)*
            flags: c_int,
        ) -> gasnet_all_handle_t {
            const CALL: &str = stringify!($coll);
            // SAFETY: GASNet-1's contract (buffers valid until the handle is
            // synced).
            unsafe { $inner(coll_team(team, CALL), $($p,)* flags, CALL) }
        }
    };
}

nb_calls!(
    /// `nbytes` from `src` on image `root` to `dst` everywhere.
    broadcast(dst: *mut c_void, root: u32, src: *mut c_void, nbytes: usize),
    gasnet_all_broadcast_nb,
    gasnet_coll_broadcast_nb
);
nb_calls!(
    /// block `i` of `src` on image `root` (`nbytes` each) to `dst` on
    /// image `i`.
    scatter(dst: *mut c_void, root: u32, src: *mut c_void, nbytes: usize),
    gasnet_all_scatter_nb,
    gasnet_coll_scatter_nb
);
nb_calls!(
    /// `src` (`nbytes`) of image `i` to block `i` of `dst` on image `root`.
    gather(root: u32, dst: *mut c_void, src: *mut c_void, nbytes: usize),
    gasnet_all_gather_nb,
    gasnet_coll_gather_nb
);
nb_calls!(
    /// `src` (`nbytes`) of image `i` to block `i` of `dst` everywhere.
    gather_all(dst: *mut c_void, src: *mut c_void, nbytes: usize),
    gasnet_all_gather_all_nb,
    gasnet_coll_gather_all_nb
);
nb_calls!(
    /// block `j` of `src` on image `i` to block `i` of `dst` on image `j`.
    exchange(dst: *mut c_void, src: *mut c_void, nbytes: usize),
    gasnet_all_exchange_nb,
    gasnet_coll_exchange_nb
);

/// `gasnet_coll_broadcastM_nb`: the broadcast into this process's image
/// (its entry of `dstlist`).
#[no_mangle]
pub unsafe extern "C" fn gasnet_coll_broadcastM_nb(
    team: gex_TM_t,
    dstlist: *const *mut c_void,
    srcimage: u32,
    src: *mut c_void,
    nbytes: usize,
    flags: c_int,
) -> gasnet_all_handle_t {
    const CALL: &str = "gasnet_coll_broadcastM_nb";
    let t = coll_team(team, CALL);
    // SAFETY: the list has the entries the address mode says; buffers as
    // for the broadcast.
    unsafe {
        let dst = my_entry(t, dstlist, flags, "dstlist", CALL);
        broadcast(t, dst, srcimage, src, nbytes, flags, CALL)
    }
}

/// `gasnet_coll_scatterM_nb`: the scatter into this process's image.
#[no_mangle]
pub unsafe extern "C" fn gasnet_coll_scatterM_nb(
    team: gex_TM_t,
    dstlist: *const *mut c_void,
    srcimage: u32,
    src: *mut c_void,
    nbytes: usize,
    flags: c_int,
) -> gasnet_all_handle_t {
    const CALL: &str = "gasnet_coll_scatterM_nb";
    let t = coll_team(team, CALL);
    // SAFETY: as for the broadcast.
    unsafe {
        let dst = my_entry(t, dstlist, flags, "dstlist", CALL);
        scatter(t, dst, srcimage, src, nbytes, flags, CALL)
    }
}

/// `gasnet_coll_gatherM_nb`: the gather from this process's image.
#[no_mangle]
pub unsafe extern "C" fn gasnet_coll_gatherM_nb(
    team: gex_TM_t,
    dstimage: u32,
    dst: *mut c_void,
    srclist: *const *mut c_void,
    nbytes: usize,
    flags: c_int,
) -> gasnet_all_handle_t {
    const CALL: &str = "gasnet_coll_gatherM_nb";
    let t = coll_team(team, CALL);
    // SAFETY: as for the broadcast.
    unsafe {
        let src = my_entry(t, srclist, flags, "srclist", CALL);
        gather(t, dstimage, dst, src, nbytes, flags, CALL)
    }
}

/// `gasnet_coll_gather_allM_nb`: the gather-all of this process's image.
#[no_mangle]
pub unsafe extern "C" fn gasnet_coll_gather_allM_nb(
    team: gex_TM_t,
    dstlist: *const *mut c_void,
    srclist: *const *mut c_void,
    nbytes: usize,
    flags: c_int,
) -> gasnet_all_handle_t {
    const CALL: &str = "gasnet_coll_gather_allM_nb";
    let t = coll_team(team, CALL);
    // SAFETY: as for the broadcast.
    unsafe {
        let dst = my_entry(t, dstlist, flags, "dstlist", CALL);
        let src = my_entry(t, srclist, flags, "srclist", CALL);
        gather_all(t, dst, src, nbytes, flags, CALL)
    }
}

/// `gasnet_coll_exchangeM_nb`: the exchange of this process's image.
#[no_mangle]
pub unsafe extern "C" fn gasnet_coll_exchangeM_nb(
    team: gex_TM_t,
    dstlist: *const *mut c_void,
    srclist: *const *mut c_void,
    nbytes: usize,
    flags: c_int,
) -> gasnet_all_handle_t {
    const CALL: &str = "gasnet_coll_exchangeM_nb";
    let t = coll_team(team, CALL);
    // SAFETY: as for the broadcast.
    unsafe {
        let dst = my_entry(t, dstlist, flags, "dstlist", CALL);
        let src = my_entry(t, srclist, flags, "srclist", CALL);
        exchange(t, dst, src, nbytes, flags, CALL)
    }
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
    let t = team_all(CALL);
    let f = flags_of(flags, CALL);
    // SAFETY: the lists have `listlen` entries; every buffer stays valid
    // until the handle is synced.
    let (im, mine, _) = unsafe { images(t, flags, nodelist, dstlist, listlen, rank, nblocks) };
    // SAFETY: as above.
    let dsts = mine.into_iter().map(|p| unsafe { bytes_mut(p, nbytes) });
    // SAFETY: as above (read on the root only).
    let s = (t.rank() == srcnode).then(|| unsafe { bytes(src, nbytes) });
    ev(
        gex::coll::broadcasti_nb(t, im, srcnode, dsts, s, nbytes, f),
        flags,
    )
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
    let t = team_all(CALL);
    let f = flags_of(flags, CALL);
    // SAFETY: as for the broadcast.
    let (im, mine, total) = unsafe { images(t, flags, nodelist, dstlist, listlen, rank, nblocks) };
    // SAFETY: as for the broadcast.
    let dsts = mine.into_iter().map(|p| unsafe { bytes_mut(p, nbytes) });
    // SAFETY: as for the broadcast.
    let s = (t.rank() == srcnode).then(|| unsafe { bytes(src, total.saturating_mul(nbytes)) });
    ev(
        gex::coll::scatteri_nb(t, im, srcnode, dsts, s, nbytes, f),
        flags,
    )
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
    let t = team_all(CALL);
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
    ev(
        gex::coll::gatheri_nb(t, im, dstnode, d, &srcs, nbytes, f),
        flags,
    )
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
    let t = team_all(CALL);
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
    ev(
        gex::coll::gather_alli_nb(t, im, dsts, &srcs, nbytes, f),
        flags,
    )
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
    let t = team_all(CALL);
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
    ev(
        gex::coll::exchangei_nb(t, im, dsts, &srcs, nbytes, f),
        flags,
    )
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
    let t = team_all(CALL);
    let f = flags_local(flags, CALL);
    // SAFETY: the source stays valid until the handle is synced and the
    // partner list has `partnercount` entries (the notes' contract).
    let (s, p) = unsafe { (bytes(src, nbytes), partners(partnerlist, partnercount)) };
    ev(
        gex::coll::all_put_nb(t, dstnode, dst as usize, s, p, f),
        flags,
    )
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
    let t = team_all(CALL);
    let f = flags_local(flags, CALL);
    // SAFETY: the destination stays valid and untouched until the handle
    // is synced; the partner list as for the put.
    let (d, p) = unsafe { (bytes_mut(dst, nbytes), partners(partnerlist, partnercount)) };
    ev(
        gex::coll::all_get_nb(t, d, srcnode, src as usize, p, f),
        flags,
    )
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
    let t = team_all(CALL);
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
    ev(
        gex::coll::all_puti_nb(t, nodes, &dsts, &srcs, p, nbytes, f),
        flags,
    )
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
    let t = team_all(CALL);
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
    ev(
        gex::coll::all_geti_nb(t, dsts, nodes, &srcs, p, nbytes, f),
        flags,
    )
}
