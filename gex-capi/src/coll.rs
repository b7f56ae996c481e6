//! Teams and the EX collectives (`gasnet_coll.h` in the spec, declared in
//! `gasnetex.h` here): `gex_TM_Split`, `gex_TM_Destroy`,
//! `gex_Coll_BarrierNB`, `gex_Coll_BroadcastNB`,
//! `gex_Coll_ReduceToOneNB`, `gex_Coll_ReduceToAllNB`.

use std::ffi::{c_int, c_void};
use std::sync::atomic::AtomicPtr;
use std::sync::Arc;

use gex::coll::ReduceOp;
use gex::{Dt, Flags, Memvec, Op};

use crate::types::*;

/// `gex_Coll_ReduceFn_t`.
pub type gex_Coll_ReduceFn_t = Option<
    unsafe extern "C" fn(
        arg1: *const c_void,
        arg2_and_out: *mut c_void,
        count: usize,
        cdata: *const c_void,
    ),
>;

/// `gex_Coll_BarrierNB`.
#[no_mangle]
pub unsafe extern "C" fn gex_Coll_BarrierNB(tm: gex_TM_t, flags: gex_Flags_t) -> gex_Event_t {
    const CALL: &str = "gex_Coll_BarrierNB";
    // SAFETY: a handle of this library.
    let t = unsafe { team(tm, CALL) };
    c_coll_event(or_fatal(gex::coll::barrier_nb(
        t,
        crate::types::flags(flags, CALL),
    )))
}

/// `gex_Coll_BroadcastNB`: `src` is read on the root only (`src == dst`
/// there: the data is in place).
#[no_mangle]
pub unsafe extern "C" fn gex_Coll_BroadcastNB(
    tm: gex_TM_t,
    root: gex_Rank_t,
    dst: *mut c_void,
    src: *const c_void,
    nbytes: usize,
    flags: gex_Flags_t,
) -> gex_Event_t {
    const CALL: &str = "gex_Coll_BroadcastNB";
    // SAFETY: a handle of this library.
    let t = unsafe { team(tm, CALL) };
    let f = crate::types::flags(flags, CALL);
    let s = (t.rank() == root && !std::ptr::eq(src, dst))
        // SAFETY: the root's source is readable until completion.
        .then(|| unsafe { bytes(src, nbytes) });
    // SAFETY: `dst` is writable and left alone until the event is synced.
    let d: &'static mut [u8] = unsafe { bytes_mut(dst, nbytes) };
    c_coll_event(or_fatal(gex::coll::broadcast_nb(t, root, d, s, f)))
}

fn dt(v: gex_DT_t, call: &str) -> Dt {
    [
        Dt::I32,
        Dt::U32,
        Dt::I64,
        Dt::U64,
        Dt::Flt,
        Dt::Dbl,
        Dt::User,
    ]
    .into_iter()
    .find(|d| *d as u32 == v)
    .unwrap_or_else(|| gex::fatal(&format!("{call}: unknown data type {v:#x}")))
}

fn op(v: gex_OP_t, user: gex_Coll_ReduceFn_t, cdata: *mut c_void, call: &str) -> ReduceOp {
    let o = Op::ALL
        .into_iter()
        .find(|o| *o as u64 == v)
        .unwrap_or_else(|| gex::fatal(&format!("{call}: unknown operation {v:#x}")));
    if !matches!(o, Op::User | Op::UserNc) {
        return ReduceOp::Builtin(o);
    }
    let Some(fp) = user else {
        gex::fatal(&format!("{call}: GEX_OP_USER needs a user_op"));
    };
    let cd = cdata as usize;
    let f: gex::coll::UserReduceFn = Arc::new(move |a: &[u8], b: &mut [u8], count: usize| {
        // SAFETY: the client's reduction function over its own element
        // vectors (`count` elements in each buffer), with its client data.
        unsafe {
            fp(
                a.as_ptr().cast(),
                b.as_mut_ptr().cast(),
                count,
                cd as *const c_void,
            )
        }
    });
    if o == Op::User {
        ReduceOp::User(f)
    } else {
        ReduceOp::UserNc(f)
    }
}

/// `gex_Coll_ReduceToOneNB`.
#[no_mangle]
pub unsafe extern "C" fn gex_Coll_ReduceToOneNB(
    tm: gex_TM_t,
    root: gex_Rank_t,
    dst: *mut c_void,
    src: *const c_void,
    dt_: gex_DT_t,
    dt_sz: usize,
    dt_cnt: usize,
    op_: gex_OP_t,
    user_op: gex_Coll_ReduceFn_t,
    user_cdata: *mut c_void,
    flags: gex_Flags_t,
) -> gex_Event_t {
    const CALL: &str = "gex_Coll_ReduceToOneNB";
    // SAFETY: a handle of this library.
    let t = unsafe { team(tm, CALL) };
    let f = crate::types::flags(flags, CALL);
    let n = dt_sz.saturating_mul(dt_cnt);
    let o = op(op_, user_op, user_cdata, CALL);
    let d: Option<&'static mut [u8]> = (t.rank() == root)
        // SAFETY: the root's destination is writable until completion.
        .then(|| unsafe { bytes_mut(dst, n) });
    let s = if t.rank() == root && std::ptr::eq(src, dst) {
        None
    } else {
        // SAFETY: the source is readable until completion.
        Some(unsafe { bytes(src, n) })
    };
    c_coll_event(or_fatal(gex::coll::reduce_to_one_nb(
        t,
        root,
        d,
        s,
        dt(dt_, CALL),
        dt_sz,
        dt_cnt,
        &o,
        f,
    )))
}

/// `gex_Coll_ReduceToAllNB`.
#[no_mangle]
pub unsafe extern "C" fn gex_Coll_ReduceToAllNB(
    tm: gex_TM_t,
    dst: *mut c_void,
    src: *const c_void,
    dt_: gex_DT_t,
    dt_sz: usize,
    dt_cnt: usize,
    op_: gex_OP_t,
    user_op: gex_Coll_ReduceFn_t,
    user_cdata: *mut c_void,
    flags: gex_Flags_t,
) -> gex_Event_t {
    const CALL: &str = "gex_Coll_ReduceToAllNB";
    // SAFETY: a handle of this library.
    let t = unsafe { team(tm, CALL) };
    let f = crate::types::flags(flags, CALL);
    let n = dt_sz.saturating_mul(dt_cnt);
    let o = op(op_, user_op, user_cdata, CALL);
    // SAFETY: the destination is writable until completion.
    let d: &'static mut [u8] = unsafe { bytes_mut(dst, n) };
    let s = (!std::ptr::eq(src, dst))
        // SAFETY: the source is readable until completion.
        .then(|| unsafe { bytes(src, n) });
    c_coll_event(or_fatal(gex::coll::reduce_to_all_nb(
        t,
        d,
        s,
        dt(dt_, CALL),
        dt_sz,
        dt_cnt,
        &o,
        f,
    )))
}

/// `gex_TM_Split`: with a `GEX_FLAG_TM_SCRATCH_SIZE_*` flag, the scratch
/// size query; otherwise the split, returning 0 (`new_tm_p` NULL: this
/// rank joins no team).
#[no_mangle]
pub unsafe extern "C" fn gex_TM_Split(
    new_tm_p: *mut gex_TM_t,
    parent_tm: gex_TM_t,
    color: c_int,
    key: c_int,
    scratch_addr: *mut c_void,
    scratch_size: usize,
    flags: gex_Flags_t,
) -> usize {
    const CALL: &str = "gex_TM_Split";
    // SAFETY: a handle of this library.
    let p = unsafe { team(parent_tm, CALL) };
    let f = crate::types::flags(flags, CALL);
    let col = (!new_tm_p.is_null()).then_some(color);
    if f.intersects(Flags::TM_SCRATCH_SIZE_RECOMMENDED | Flags::TM_SCRATCH_SIZE_MIN) {
        return or_fatal(gex::coll::tm_split_scratch_size(p, col, key, f));
    }
    let scratch = (!f.contains(Flags::TM_NO_SCRATCH) && scratch_size > 0)
        .then(|| Memvec::new(scratch_addr as usize, scratch_size));
    let new = or_fatal(gex::coll::tm_split(p, col, key, scratch, f));
    // SAFETY: a handle of this library.
    let ep = unsafe { obj(parent_tm, CALL) }.ep;
    if let (Some(t), false) = (new, new_tm_p.is_null()) {
        let h = leak(CTm {
            tm: TmObj::Team(t),
            ep,
            cdata: AtomicPtr::new(std::ptr::null_mut()),
        });
        // SAFETY: writable (caller's contract).
        unsafe { *new_tm_p = h };
    }
    0
}

/// `gex_TM_Destroy`: non-zero if client scratch was written to
/// `*scratch_p`. The team's handle stays allocated (handles are never
/// freed) but names a destroyed team.
#[no_mangle]
pub unsafe extern "C" fn gex_TM_Destroy(
    tm: gex_TM_t,
    scratch_p: *mut gex_Memvec_t,
    flags: gex_Flags_t,
) -> c_int {
    const CALL: &str = "gex_TM_Destroy";
    // SAFETY: a handle of this library.
    let t = unsafe { team(tm, CALL) }.clone();
    let f = crate::types::flags(flags, CALL);
    match or_fatal(gex::coll::tm_destroy(t, f)) {
        Some(m) if !scratch_p.is_null() => {
            // SAFETY: writable (caller's contract).
            unsafe {
                *scratch_p = gex_Memvec_t {
                    gex_addr: m.addr as *mut c_void,
                    gex_len: m.len,
                }
            };
            1
        }
        _ => 0,
    }
}

/// `gex_TM_Create`: with a `GEX_FLAG_TM_SCRATCH_SIZE_*` flag, the scratch
/// size query (from `numargs` alone when `args` is NULL, as clients that
/// ask before building the list call it; the size is one `gex_TM_Create`
/// accepts); otherwise the new teams (one per local endpoint named in
/// `args`: at most one, as every team is over primordial endpoints) go to
/// `new_tms`, and the call returns 0. `scratch_addrs` holds one address
/// (SYMMETRIC), one per local member (LOCAL: `num_new_tms`) or one per
/// member (GLOBAL: `numargs`).
#[no_mangle]
pub unsafe extern "C" fn gex_TM_Create(
    new_tms: *mut gex_TM_t,
    num_new_tms: usize,
    parent_tm: gex_TM_t,
    args: *const gex_EP_Location_t,
    numargs: usize,
    scratch_addrs: *const *mut c_void,
    scratch_size: usize,
    flags: gex_Flags_t,
) -> usize {
    const CALL: &str = "gex_TM_Create";
    // SAFETY: a handle of this library.
    let p = unsafe { team(parent_tm, CALL) };
    let f = crate::types::flags(flags, CALL);
    let query = f.intersects(Flags::TM_SCRATCH_SIZE_RECOMMENDED | Flags::TM_SCRATCH_SIZE_MIN);
    if query && args.is_null() {
        return or_fatal(gex::coll::tm_create_scratch_size_for(p, numargs, f));
    }
    if args.is_null() && numargs != 0 {
        gex::fatal(&format!(
            "{CALL}: args is NULL but numargs is {numargs} (NULL is allowed only with numargs 0, or in a scratch size query)"
        ));
    }
    let list: Vec<gex::EpLocation> = if numargs == 0 {
        Vec::new()
    } else {
        // SAFETY: `numargs` entries (caller's contract).
        unsafe { std::slice::from_raw_parts(args, numargs) }
            .iter()
            .map(|a| gex::EpLocation {
                rank: a.gex_rank,
                ep_index: a.gex_ep_index,
            })
            .collect()
    };
    if query {
        return or_fatal(gex::coll::tm_create_scratch_size(p, &list, f));
    }
    let naddrs = if f.contains(Flags::TM_NO_SCRATCH) || scratch_addrs.is_null() {
        0
    } else if f.contains(Flags::TM_GLOBAL_SCRATCH) {
        numargs
    } else if f.contains(Flags::TM_SYMMETRIC_SCRATCH) {
        1
    } else {
        num_new_tms
    };
    let addrs: Vec<usize> = if naddrs == 0 {
        Vec::new()
    } else {
        // SAFETY: as many entries as the scratch mode names (caller's
        // contract).
        unsafe { std::slice::from_raw_parts(scratch_addrs, naddrs) }
            .iter()
            .map(|&a| a as usize)
            .collect()
    };
    let made = or_fatal(gex::coll::tm_create(p, &list, scratch_size, &addrs, f));
    if made.len() > num_new_tms || (!made.is_empty() && new_tms.is_null()) {
        gex::fatal(&format!(
            "{CALL}: {} new team(s) for room for {num_new_tms}",
            made.len()
        ));
    }
    // SAFETY: a handle of this library.
    let ep = unsafe { obj(parent_tm, CALL) }.ep;
    for (i, t) in made.into_iter().enumerate() {
        let h = leak(CTm {
            tm: TmObj::Team(t),
            ep,
            cdata: AtomicPtr::new(std::ptr::null_mut()),
        });
        // SAFETY: `num_new_tms` writable entries (caller's contract).
        unsafe { *new_tms.add(i) = h };
    }
    0
}
