//! The generalised collectives of the design notes ("Generalized
//! collectives proposal"): `all_put` / `all_puti` and `all_get` /
//! `all_geti`. Each member names the transfers it makes itself (puts into
//! other members' segments, or gets from them), always LOCAL (the Rust
//! calls take no address mode), and who its partners are: the members
//! whose transfers target this member's memory, as a list of ranks
//! ([`Partners::List`]) or only their number ([`Partners::Count`]).
//!
//! Algorithm (the one-sided protocol of the segment hints, `crate::onesided`):
//!
//! - the member that moves data (the putter, the getter) does it in the
//!   initiation call, through gex-rma (a copy through the mapping where the
//!   peer's segment is mapped, else the conduit's one-sided route or
//!   Active Messages), then sends each member it targeted one empty `DONE`
//!   message; a member's handle completes once every partner's `DONE` has
//!   arrived (its memory is then written, or no longer read) and its own
//!   transfers are done;
//! - `IN_NOSYNC`: transfers start at once. `IN_MYSYNC` with a partner
//!   list: each member sends its partners one empty `READY` message at
//!   entry, and a transfer to a member starts once its `READY` is in (one-
//!   way messages only, as the notes propose); with a partner count (who
//!   is unknown), a barrier instead. `IN_ALLSYNC`: a barrier. `OUT_*` as
//!   for every data collective (`OUT_ALLSYNC`: the closing barrier).
//! - Checks before anything moves: target ranks, lengths, and every
//!   remote range inside its target's bound segment (and the local
//!   buffers inside this member's, under a segment hint). A member whose
//!   arguments fail still plays its part in the protocol (its `READY`,
//!   a `DONE` that says it failed, to every target it named) and returns
//!   the error; its targets' syncs then return an error naming it. So a
//!   bad transfer is reported, never silent, and nobody hangs on it. A
//!   partner list or count that is itself invalid (this member, a
//!   non-member or a rank twice; more than `n - 1`) is an error before
//!   the protocol starts, on that member only: it cannot know whom to
//!   tell, so members targeting it under `IN_MYSYNC` wait for its `READY`
//!   (every member passing such a list fails alike).
//! - Single-valued: `nbytes`, the sync mode and whether partners are a
//!   list or a count (in the signature of every message).
//!
//! Layer: public forms. Uses the AM and one-sided mechanisms, the team
//! barrier, the handles, the registry and the base modules.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use gex_core::{context, Event, Lc, Tm};
use gex_rma::Rma;
use gex_types::{Error, Flags, Rank, Result};

use crate::am::{fin, out_key};
use crate::barrier::enter_all;
use crate::engine::{lock, send_now, signature};
use crate::engine::{Key, Op};
use crate::handle::{CollHandle, Verdict};
use crate::onesided::{
    counts, in_segment, rank_map, PairLogic, Partners as Heard, DONE, DONE_FAILED, HINTS,
};
use crate::sync;
use crate::team::{team_of, TeamInfo};

/// The members whose transfers target this member's memory (the notes'
/// `partnerlist` / `partnercount`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Partners<'a> {
    /// Their team ranks (each once, not this member): `IN_MYSYNC` then
    /// costs one empty message per partner.
    List(&'a [Rank]),
    /// Only how many: `IN_MYSYNC` then costs a barrier.
    Count(usize),
}

/// The local side of the transfers.
enum Local<'l, 'a> {
    Put(&'l [&'l [u8]]),
    Get(Vec<&'a mut [u8]>),
}

impl Local<'_, '_> {
    fn len(&self) -> usize {
        match self {
            Local::Put(s) => s.len(),
            Local::Get(d) => d.len(),
        }
    }
    fn lens(&self) -> Vec<usize> {
        match self {
            Local::Put(s) => s.iter().map(|b| b.len()).collect(),
            Local::Get(d) => d.iter().map(|b| b.len()).collect(),
        }
    }
}

/// Checks the transfers' arguments; `Err` names the first bad one.
#[allow(clippy::too_many_arguments)]
fn check_args(
    call: &str,
    tm: &Tm,
    t: &TeamInfo,
    put: bool,
    nodes: &[Rank],
    remotes: &[usize],
    local: &Local<'_, '_>,
    nbytes: usize,
    flags: Flags,
) -> Result<()> {
    let n = t.size();
    if nodes.len() != remotes.len() || nodes.len() != local.len() {
        return Err(Error::bad_arg(format!(
            "{call}: {} nodes, {} remote addresses and {} local buffers (one of each per transfer)",
            nodes.len(),
            remotes.len(),
            local.len()
        )));
    }
    for (i, l) in local.lens().into_iter().enumerate() {
        if l != nbytes {
            return Err(Error::bad_arg(format!(
                "{call}: local buffer {i} is {l} bytes, nbytes is {nbytes}"
            )));
        }
    }
    let (remote_what, local_flag) = if put {
        ("dst", Flags::COLL_SRC_IN_SEGMENT)
    } else {
        ("src", Flags::COLL_DST_IN_SEGMENT)
    };
    for (i, (&r, &a)) in nodes.iter().zip(remotes).enumerate() {
        if r >= n {
            return Err(Error::bad_arg(format!(
                "{call}: transfer {i} names rank {r}, not a rank of the team (size {n})"
            )));
        }
        if let Err(why) = in_segment(tm, r, a, nbytes) {
            return Err(Error::bad_arg(format!(
                "{call}: transfer {i}: rank {r}'s {remote_what} [{a:#x}, +{nbytes}) is not inside \
                 its bound segment ({why}); nothing was moved"
            )));
        }
    }
    if flags.contains(local_flag) {
        let mine: Vec<usize> = match local {
            Local::Put(s) => s.iter().map(|b| b.as_ptr() as usize).collect(),
            Local::Get(d) => d.iter().map(|b| b.as_ptr() as usize).collect(),
        };
        for (i, a) in mine.into_iter().enumerate() {
            if let Err(why) = in_segment(tm, t.me, a, nbytes) {
                return Err(Error::bad_arg(format!(
                    "{call}: a segment hint is false: local buffer {i} [{a:#x}, +{nbytes}) is \
                     not inside this member's bound segment ({why}); nothing was moved"
                )));
            }
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn general<'a>(
    call: &'static str,
    tm: &Tm,
    put: bool,
    nodes: &[Rank],
    remotes: &[usize],
    mut local: Local<'_, 'a>,
    partners: Partners<'_>,
    nbytes: usize,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    context::check_may_communicate(call)?;
    let t = team_of(tm, call)?;
    let mode = sync::parse(call, flags - HINTS)?;
    let (me, n) = (t.me, t.size());
    // The partner list must be usable before anything else: the protocol
    // (READY, the DONE count) depends on it.
    if let Partners::List(list) = partners {
        let mut seen = vec![false; n as usize];
        for &p in list {
            if p >= n || p == me || std::mem::replace(&mut seen[p as usize], true) {
                return Err(Error::bad_arg(format!(
                    "{call}: partner {p} is not another rank of the team (size {n}), or listed \
                     twice"
                )));
            }
        }
    }
    if let Partners::Count(k) = partners {
        if k >= n as usize {
            return Err(Error::bad_arg(format!(
                "{call}: {k} partners, but the team has {} other members",
                n - 1
            )));
        }
    }
    let in_no = mode.word / 3 == 0;
    let listed = matches!(partners, Partners::List(_));
    let ready_needed = !in_no && !mode.in_all && listed;
    if mode.in_all || (!in_no && !listed) {
        enter_all(&t, None, call);
    }
    let key = t.next_key();
    let out: Option<(Arc<TeamInfo>, Key)> = out_key(&t, mode);
    let sig = signature(
        if put { "all_put" } else { "all_get" },
        &[nbytes as u64, mode.word, u64::from(listed)],
    );
    // The distinct members this one targets (not itself), in turn after it.
    let mut targets: Vec<Rank> = nodes
        .iter()
        .copied()
        .filter(|&r| r != me && r < n)
        .collect();
    targets.sort_by_key(|&r| (r + n - me) % n);
    targets.dedup();
    let state = Arc::new(Mutex::new(Heard::default()));
    let (done_from, done_any) = match partners {
        Partners::List(l) => (counts(l), None),
        Partners::Count(k) => (HashMap::new(), Some(k)),
    };
    let logic = PairLogic {
        call,
        rank_of: rank_map(&t),
        ready_from: if ready_needed {
            counts(&targets)
        } else {
            HashMap::new()
        },
        done_from,
        done_any,
        state: state.clone(),
    };
    let op = Op::start(key, sig, call, Box::new(logic));
    if let (true, Partners::List(list)) = (ready_needed, partners) {
        for &p in list {
            send_now(key, sig, t.members[p as usize], crate::onesided::READY, &[]);
        }
    }
    let checked = check_args(call, tm, &t, put, nodes, remotes, &local, nbytes, flags);
    if let Err(e) = checked {
        // Play the part: every valid target hears that this member failed
        // (after its READY, which it may need to wait for no longer: the
        // target's handle just reports the failure).
        for &r in &targets {
            send_now(key, sig, t.members[r as usize], DONE_FAILED, &[]);
        }
        if let Some((tt, k)) = out {
            let _ = crate::am::start_out_barrier(&tt, k);
        }
        return Err(e);
    }
    let rt = gex_core::Runtime::get().expect("collectives run after client init");
    // Self-targeted transfers first (local copies through gex-rma), then
    // each target in turn: its transfers, then its DONE.
    let mut order: Vec<Rank> = vec![me];
    order.extend(targets.iter().copied());
    let broken = |i: usize, e: Error| -> ! {
        // Every range was checked above: a broken runtime.
        gex_core::fatal(&format!("gex-coll: {call}: transfer {i} failed: {e}"))
    };
    // Puts are all started, then synced (their round trips overlap), and
    // a target's DONE follows its last put's completion; gets complete one
    // by one (they write the borrowed destinations).
    let mut started: Vec<(Rank, Vec<Event<'static>>)> = Vec::new();
    for r in order {
        if r != me && ready_needed {
            rt.spin_until(|| lock(&state).is_ready(r));
        }
        let mut evs = Vec::new();
        for (i, (&node, &addr)) in nodes.iter().zip(remotes).enumerate() {
            if node != r || nbytes == 0 {
                continue;
            }
            match &mut local {
                Local::Put(s) => evs.push(
                    tm.put_nb(node, addr, s[i], Lc::Now, Flags::empty())
                        .unwrap_or_else(|e| broken(i, e)),
                ),
                Local::Get(d) => {
                    tm.get_blocking(&mut d[i][..], node, addr, Flags::empty())
                        .unwrap_or_else(|e| broken(i, e));
                }
            }
        }
        started.push((r, evs));
    }
    for (r, evs) in started {
        for ev in evs {
            ev.wait().unwrap_or_else(|e| broken(usize::MAX, e));
        }
        if r != me {
            send_now(key, sig, t.members[r as usize], DONE, &[]);
        }
    }
    let verdict: Verdict = {
        let state = state.clone();
        Arc::new(move || {
            let st = lock(&state);
            st.failed.first().map(|r| {
                Error::bad_arg(format!(
                    "{call}: rank {r} failed its part (its own call returned the error); what it \
                     was to move into or out of this member's memory did not move"
                ))
            })
        })
    };
    let h = CollHandle::pending(op.c.clone()).with_verdict(verdict);
    Ok(fin(h, out))
}

/// `gasnet_all_put_nb`: puts `src` into `dst` (an owner address in
/// member `node`'s bound segment); collective over `tm`. `partners`: the
/// members that put into this member's memory. The handle completes once
/// this member's put is done and every partner's has arrived. See the
/// module documentation for the sync modes and errors.
pub fn all_put_nb(
    tm: &Tm,
    node: Rank,
    dst: usize,
    src: &[u8],
    partners: Partners<'_>,
    flags: Flags,
) -> Result<CollHandle<'static>> {
    general(
        "gasnet_all_put_nb",
        tm,
        true,
        &[node],
        &[dst],
        Local::Put(&[src]),
        partners,
        src.len(),
        flags,
    )
}

/// `gasnet_all_puti_nb`: puts `srcs[i]` (each `nbytes`) into `dsts[i]`
/// (owner addresses) on member `nodes[i]`, for every `i` (none at all is
/// allowed); `nbytes` is single-valued.
pub fn all_puti_nb(
    tm: &Tm,
    nodes: &[Rank],
    dsts: &[usize],
    srcs: &[&[u8]],
    partners: Partners<'_>,
    nbytes: usize,
    flags: Flags,
) -> Result<CollHandle<'static>> {
    general(
        "gasnet_all_puti_nb",
        tm,
        true,
        nodes,
        dsts,
        Local::Put(srcs),
        partners,
        nbytes,
        flags,
    )
}

/// `gasnet_all_get_nb`: gets `dst.len()` bytes from `src` (an owner
/// address in member `node`'s bound segment) into `dst`. `partners`: the
/// members that get from this member's memory. The handle completes once
/// this member's get is done and every partner's is.
pub fn all_get_nb<'a>(
    tm: &Tm,
    dst: &'a mut [u8],
    node: Rank,
    src: usize,
    partners: Partners<'_>,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    let nbytes = dst.len();
    general(
        "gasnet_all_get_nb",
        tm,
        false,
        &[node],
        &[src],
        Local::Get(vec![dst]),
        partners,
        nbytes,
        flags,
    )
}

/// `gasnet_all_geti_nb`: gets `nbytes` from `srcs[i]` on member
/// `nodes[i]` into the `i`-th of `dsts`, for every `i`.
pub fn all_geti_nb<'a>(
    tm: &Tm,
    dsts: impl IntoIterator<Item = &'a mut [u8]>,
    nodes: &[Rank],
    srcs: &[usize],
    partners: Partners<'_>,
    nbytes: usize,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    general(
        "gasnet_all_geti_nb",
        tm,
        false,
        nodes,
        srcs,
        Local::Get(dsts.into_iter().collect()),
        partners,
        nbytes,
        flags,
    )
}

/// Blocking [`all_put_nb`].
pub fn all_put(
    tm: &Tm,
    node: Rank,
    dst: usize,
    src: &[u8],
    partners: Partners<'_>,
    flags: Flags,
) -> Result<()> {
    all_put_nb(tm, node, dst, src, partners, flags)?.wait()
}

/// Blocking [`all_puti_nb`].
pub fn all_puti(
    tm: &Tm,
    nodes: &[Rank],
    dsts: &[usize],
    srcs: &[&[u8]],
    partners: Partners<'_>,
    nbytes: usize,
    flags: Flags,
) -> Result<()> {
    all_puti_nb(tm, nodes, dsts, srcs, partners, nbytes, flags)?.wait()
}

/// Blocking [`all_get_nb`].
pub fn all_get(
    tm: &Tm,
    dst: &mut [u8],
    node: Rank,
    src: usize,
    partners: Partners<'_>,
    flags: Flags,
) -> Result<()> {
    all_get_nb(tm, dst, node, src, partners, flags)?.wait()
}

/// Blocking [`all_geti_nb`].
pub fn all_geti<'a>(
    tm: &Tm,
    dsts: impl IntoIterator<Item = &'a mut [u8]>,
    nodes: &[Rank],
    srcs: &[usize],
    partners: Partners<'_>,
    nbytes: usize,
    flags: Flags,
) -> Result<()> {
    all_geti_nb(tm, dsts, nodes, srcs, partners, nbytes, flags)?.wait()
}
