//! The reductions' plans: to one and to all, over the hierarchy, the
//! inline slots, the chunks, a gather through shared memory combined
//! locally, or Active Messages (part of the planner, `crate::plan`).
//!
//! Uses what the planner does (`crate::plan`).

use gex_core::{Staging, Tm};
use gex_types::{Dt, Error, Flags, Rank, Result};

use super::{begin, gather_all_on, gather_on};
use crate::am::algos::{AllReduceRd, Reduce, ReduceKind};
use crate::am::reduction::*;
use crate::am::{fin, out_key};
use crate::args::{check_len, check_root, check_size};
use crate::barrier::enter_all;
use crate::engine::{hash_id, sig_extra, with_sig_extra, Logic, Op};
use crate::handle::{CollHandle, Finish};
use crate::hier;
use crate::reduce::{validate, ReduceOp};
use crate::shm::data::{self, Readers};
use crate::shm::small::{self, Pat};
use crate::sync::SyncMode;
use crate::team::TeamInfo;

#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce_begin(
    call: &str,
    tm: &Tm,
    kind: &str,
    root: Rank,
    dt: Dt,
    dt_sz: usize,
    dt_cnt: usize,
    op: &ReduceOp,
    flags: Flags,
) -> Result<ReduceArgs> {
    let (t, mode) = begin(call, tm, flags)?;
    check_root(call, root, t)?;
    validate(call, dt, dt_sz, op)?;
    if dt_cnt == 0 {
        return Err(Error::bad_arg(format!("{call}: dt_cnt must be non-zero")));
    }
    let nbytes = dt_sz
        .checked_mul(dt_cnt)
        .ok_or_else(|| Error::bad_arg(format!("{call}: dt_sz * dt_cnt overflows")))?;
    check_size(call, nbytes)?;
    Ok(reduce_args(
        t.clone(),
        mode,
        kind,
        root,
        dt,
        dt_sz,
        dt_cnt,
        op,
    ))
}

#[allow(clippy::too_many_arguments)]
/// [`crate::coll::reduce_to_one_nb`]: the checks, then the mechanism.
pub(crate) fn reduce_to_one_nb<'a>(
    tm: &Tm,
    root: Rank,
    dst: Option<&'a mut [u8]>,
    src: Option<&'a [u8]>,
    dt: Dt,
    dt_sz: usize,
    dt_cnt: usize,
    op: &ReduceOp,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_ReduceToOneNB";
    let a = reduce_begin(
        CALL,
        tm,
        "reduce_to_one",
        root,
        dt,
        dt_sz,
        dt_cnt,
        op,
        flags,
    )?;
    let me = a.t.me;
    let dst = if me == root {
        let d = dst.ok_or_else(|| Error::bad_arg(format!("{CALL}: the root needs a dst")))?;
        check_len(CALL, "dst", d.len(), a.nbytes)?;
        Some(d)
    } else {
        None
    };
    match (src, &dst) {
        (Some(s), _) => check_len(CALL, "src", s.len(), a.nbytes)?,
        (None, Some(_)) => {}
        (None, None) => {
            return Err(Error::bad_arg(format!(
                "{CALL}: src is required on ranks other than the root"
            )))
        }
    }
    if a.mode.in_all {
        enter_all(&a.t, None, CALL);
    }
    if let Some(h) = a.t.hier().filter(|h| hier::reduces(op, h)) {
        return hier::reduce_to_one(&a, h.clone(), root, dst, src, dt, dt_sz, op);
    }
    Ok(reduce_one_on(a, root, dst, src, dt, dt_sz, op, CALL))
}

/// [`reduce_to_one_nb`] once the arguments are checked (`dst` is `Some`
/// on the root only) and `IN_ALLSYNC` is done (also the stages of the
/// hierarchical reductions, `crate::hier`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce_one_on<'a>(
    mut a: ReduceArgs,
    root: Rank,
    dst: Option<&'a mut [u8]>,
    src: Option<&'a [u8]>,
    dt: Dt,
    dt_sz: usize,
    op: &ReduceOp,
    call: &'static str,
) -> CollHandle<'a> {
    let (me, n) = (a.t.me, a.t.size());
    if small::qualifies(&a.t, &a.mode, a.nbytes, dt_sz) {
        let pat = Pat::Reduce {
            root: Some(root as usize),
            dt,
            dt_sz,
            op: op.clone(),
        };
        return small::start(&a.t, &a.mode, pat, a.nbytes, src, dst);
    }
    if gathers(&a.t, a.nbytes, dt_sz, op) {
        return gather_reduce(&a, Some(root), dst, src, dt, dt_sz, op, call);
    }
    a.key = a.t.next_key();
    let out = out_key(&a.t, a.mode);
    if n > 1 && data::reduce_eligible(&a.t, op) {
        let sig = u64::from(a.sig);
        let Some(d) = dst else {
            let s = src.expect("checked above");
            let h = data::reduce_member(sig, s, n as usize, root, dt, dt_sz, op);
            return fin(h, out);
        };
        // The input is read in this call, straight from the caller's
        // buffer.
        let how = data::How::Reduce {
            dt,
            dt_sz,
            op: op.clone(),
        };
        let h = match src {
            Some(input) => data::all(sig, input, n as usize, how, Readers::One(root), d),
            None => data::all_in_place(sig, n as usize, how, Readers::One(root), d),
        };
        return fin(h, out);
    }
    let acc = match (src, &dst) {
        (Some(s), _) => s.to_vec(),
        (None, Some(d)) => d.to_vec(),
        (None, None) => unreachable!("checked above"),
    };
    if n == 1 {
        if let Some(d) = dst {
            d.copy_from_slice(&acc);
        }
        return CollHandle::INVALID;
    }
    count_am_reduction();
    let staging = dst.as_ref().map(|_| Staging::new(a.nbytes));
    let opr = Op::start(
        a.key,
        a.sig,
        call,
        Box::new(Reduce::new(
            dt,
            dt_sz,
            op.clone(),
            a.t.members.clone(),
            me,
            ReduceKind::ToOne { root },
            acc,
            staging.clone(),
        )),
    );
    fin(
        match (dst, staging) {
            (Some(d), Some(s)) => CollHandle::pending_into(opr.c.clone(), s, d),
            _ => CollHandle::pending(opr.c.clone()),
        },
        out,
    )
}

#[allow(clippy::too_many_arguments)]
/// [`crate::coll::reduce_to_all_nb`]: the checks, then the mechanism.
pub(crate) fn reduce_to_all_nb<'a>(
    tm: &Tm,
    dst: &'a mut [u8],
    src: Option<&'a [u8]>,
    dt: Dt,
    dt_sz: usize,
    dt_cnt: usize,
    op: &ReduceOp,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_ReduceToAllNB";
    let a = reduce_begin(CALL, tm, "reduce_to_all", 0, dt, dt_sz, dt_cnt, op, flags)?;
    check_len(CALL, "dst", dst.len(), a.nbytes)?;
    if let Some(s) = src {
        check_len(CALL, "src", s.len(), a.nbytes)?;
    }
    if a.mode.in_all {
        enter_all(&a.t, None, CALL);
    }
    if let Some(h) = a.t.hier().filter(|h| hier::reduces(op, h)) {
        return hier::reduce_to_all(&a, h.clone(), dst, src, dt, dt_sz, op);
    }
    Ok(reduce_all_on(a, dst, src, dt, dt_sz, op, CALL))
}

/// [`reduce_to_all_nb`] once the arguments are checked and `IN_ALLSYNC`
/// is done (also the stages of the hierarchical reductions,
/// `crate::hier`).
pub(crate) fn reduce_all_on<'a>(
    mut a: ReduceArgs,
    dst: &'a mut [u8],
    src: Option<&'a [u8]>,
    dt: Dt,
    dt_sz: usize,
    op: &ReduceOp,
    call: &'static str,
) -> CollHandle<'a> {
    if small::qualifies(&a.t, &a.mode, a.nbytes, dt_sz) {
        let pat = Pat::Reduce {
            root: None,
            dt,
            dt_sz,
            op: op.clone(),
        };
        return small::start(&a.t, &a.mode, pat, a.nbytes, src, Some(dst));
    }
    if gathers(&a.t, a.nbytes, dt_sz, op) {
        return gather_reduce(&a, None, Some(dst), src, dt, dt_sz, op, call);
    }
    a.key = a.t.next_key();
    let out = out_key(&a.t, a.mode);
    if a.t.size() > 1 && data::reduce_eligible(&a.t, op) {
        // The input is read in this call, straight from the caller's
        // buffer.
        let how = data::How::Reduce {
            dt,
            dt_sz,
            op: op.clone(),
        };
        let (sig, n) = (u64::from(a.sig), a.t.size() as usize);
        let h = match src {
            Some(input) => data::all(sig, input, n, how, Readers::Everyone, dst),
            None => data::all_in_place(sig, n, how, Readers::Everyone, dst),
        };
        return fin(h, out);
    }
    let acc = match src {
        Some(s) => s.to_vec(),
        None => dst.to_vec(),
    };
    if a.t.size() == 1 {
        dst.copy_from_slice(&acc);
        return CollHandle::INVALID;
    }
    count_am_reduction();
    let staging = Staging::new(a.nbytes);
    let logic: Box<dyn Logic> = if a.nbytes <= RECURSIVE_DOUBLING_MAX {
        Box::new(AllReduceRd::new(
            dt,
            dt_sz,
            op.clone(),
            a.t.members.clone(),
            a.t.me,
            acc,
            staging.clone(),
        ))
    } else {
        Box::new(Reduce::new(
            dt,
            dt_sz,
            op.clone(),
            a.t.members.clone(),
            a.t.me,
            ReduceKind::ToAll,
            acc,
            Some(staging.clone()),
        ))
    };
    let opr = Op::start(a.key, a.sig, call, logic);
    fin(CollHandle::pending_into(opr.c.clone(), staging, dst), out)
}

/// Whether a reduction over `t` of `nbytes` per member, elements of
/// `dt_sz` bytes, with `op`, that the inline slots do not take
/// ([`small::qualifies`]), goes by [`gather_reduce`]: on a team with
/// a shared-memory channel (whose gathers move through shared memory),
/// elements larger than a slot (user types, which no shared-memory
/// reduction takes), or on the primordial team of a one-neighbourhood
/// job a user-defined operator (which its chunked reduction does not
/// take; gathered through the chunks, it ran 1.7 to 2.7 times as fast
/// as in 1 KiB pieces of the slots, 4 KiB to 1 MiB on 2 and 4 ranks:
/// PERFORMANCE.md, "Collectives").
pub(crate) fn gathers(t: &TeamInfo, nbytes: usize, dt_sz: usize, op: &ReduceOp) -> bool {
    t.size() > 1
        && t.shm_team().is_some()
        && (dt_sz > crate::area::SMALL_MAX
            || (nbytes > crate::area::SMALL_MAX
                && !matches!(op, ReduceOp::Builtin(_))
                && data::eligible(t)))
}

/// A reduction over `t` (to `root`, or to all for `None`) as a gather
/// (gather-all) of the members' raw inputs through shared memory
/// ([`gather_on`], [`gather_all_on`]: 1 KiB pieces on sub-teams, the
/// 16 KiB chunks on the primordial team of a one-neighbourhood job) into a
/// library-owned buffer of `n * nbytes`, combined there in rank order
/// (`acc = acc (+) c_m`, so `GEX_OP_USER_NC` gets the rank-order result)
/// by the thread that observes the gather's completion, which then
/// writes `dst`. The gather carries the reduction's signature (folded
/// into its own), so members that disagree on the reduction's
/// single-valued arguments end the job as on the other paths; its stages
/// run without `OUT_ALLSYNC`'s barrier, which this handle adds.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather_reduce<'a>(
    a: &ReduceArgs,
    root: Option<Rank>,
    dst: Option<&'a mut [u8]>,
    src: Option<&'a [u8]>,
    dt: Dt,
    dt_sz: usize,
    op: &ReduceOp,
    call: &'static str,
) -> CollHandle<'a> {
    let t = &a.t;
    let (n, nb) = (t.size() as usize, a.nbytes);
    let inner_mode = SyncMode {
        out_all: false,
        ..a.mode
    };
    let gathered = dst.as_ref().map(|_| Staging::new(n * nb));
    let extra = hash_id(&[sig_extra(), u64::from(a.sig)]);
    let inner = with_sig_extra(extra, || {
        // The input is read in this call (also in place: `dst` is
        // written only once the gather completed).
        let input: &[u8] = match (src, &dst) {
            (Some(s), _) => s,
            (None, Some(d)) => d,
            (None, None) => unreachable!("checked by the callers"),
        };
        // SAFETY: a fresh library-owned buffer of `n * nb` bytes, which
        // nothing else accesses until the gather completes; it lives as
        // long as the gather's handle: below, either that handle is
        // complete at once, or both go into the `combine` handle, which
        // drops the gather's handle first.
        let g: Option<&'static mut [u8]> = gathered
            .as_ref()
            .map(|b| unsafe { std::slice::from_raw_parts_mut(b.ptr(), b.len()) });
        match root {
            Some(r) => gather_on(t, inner_mode, r, g, input, call),
            None => gather_all_on(t, inner_mode, g.expect("every member reads"), input, call),
        }
    });
    let out = out_key(t, a.mode);
    let (Some(d), Some(buf)) = (dst, gathered) else {
        // A member that only writes (to one, not the root).
        return fin(inner, out);
    };
    let op = op.clone();
    let finish: Finish = Box::new(move |g, d| combine_gathered(dt, dt_sz, &op, g, d));
    if inner.is_invalid() {
        // SAFETY: the gather is complete (its handle is INVALID), so its
        // writers are done with `buf`, and nothing else holds it.
        let g = unsafe { std::slice::from_raw_parts_mut(buf.ptr(), buf.len()) };
        finish(g, d);
        return fin(CollHandle::INVALID, out);
    }
    fin(CollHandle::combine(inner, buf, d, finish), out)
}
