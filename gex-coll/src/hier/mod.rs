//! Hierarchical collectives over teams whose members span several
//! neighbourhoods (hosts): inside each neighbourhood through shared memory,
//! between neighbourhoods over Active Messages among one representative
//! of each, then inside again. On by default (`GEX_COLL_HIER=0` on any
//! rank turns it off, `CollSettings::no_hier`).
//!
//! # Structure
//!
//! At construction (`crate::teams`) a team over more than one
//! neighbourhood, at least one of which holds two or more of its members,
//! gets a [`Hier`] when the collectives' areas are in use: its members
//! grouped by neighbourhood (groups numbered in the order of their lowest
//! team rank, members of a group in team-rank order), and for this
//! member's group, when it has others, a team of gex-coll's own over it
//! (the *local* team) with a shared-memory channel where one is free on
//! every member of the group (derived teams agree on it with an exchange
//! over the local team; the primordial team's groups are whole
//! neighbourhoods and take channel 0, which nothing else uses then). The
//! local teams run the ordinary algorithms: the small collectives' inline
//! slots and pieces (`crate::shm::small`) and the shared-memory barrier, or
//! Active Messages where no channel was free.
//!
//! Each hierarchical operation takes one number of the team's sequence;
//! from it every member derives the same id for a team of the operation's
//! *representatives*: one member per group (the root in the root's group,
//! the group's lowest team rank elsewhere), in group order. The stages run
//! over the local teams and that team, whose sequences each member of
//! them advances identically, since what a member does depends only on
//! single-valued arguments and the team's layout.
//!
//! - Broadcast: the root sends to the other representatives (a binomial
//!   tree over Active Messages) and then broadcasts in its group; every
//!   other representative receives, then broadcasts in its group as the
//!   local root; the others read from their representative.
//! - Reduce to one: every group reduces to its representative; the
//!   representatives reduce to the root (which is one). A group's
//!   reduction of elements larger than an inline slot is a gather of the
//!   operands to the representative through the slots, which combines
//!   them in rank order ([`LStage::finish`]), as on a flat team.
//! - Reduce to all: every group reduces to its lowest member, those
//!   reduce-to-all among themselves, then broadcast in their groups.
//!   Operands are combined by groups (in rank order within a group, then
//!   the groups' results in group order), so commutative operators go
//!   this way, and `GEX_OP_USER_NC` where every group is a contiguous
//!   range of team ranks (the groups' order is then the ranks' order);
//!   otherwise it keeps the flat rank-order tree. Every member gets the
//!   same bits.
//! - Barrier: members other than the lowest of their group enter the
//!   local team's shared-memory barrier and complete with it; the lowest
//!   reserves its episode, and the progress hook waits for the others'
//!   arrival, starts a barrier among the groups' lowest members, and once
//!   that completes enters the episode, releasing its group (in
//!   initiation order). Without a channel, two dissemination barriers of
//!   the local team stand for arrival and release. Nobody waits at
//!   initiation: 2^16-1 barriers may be in flight.
//!
//! # Staged operations
//!
//! Every hierarchical data collective is staged: nobody waits in the
//! initiation call (a NOSYNC broadcast does not wait for anyone).
//! Initiation takes the team's number, reserves the local team's
//! numbers its stages will use (a reduce-to-all two: the reduction in,
//! the broadcast out), in call order, so every member of a group uses the
//! same number for the same stage whenever it starts it: the inline
//! slots' operation numbers (`crate::shm::small::reserve`, with the
//! signature computed there, where a SINGLE call's extra word applies),
//! or without a channel the key of its Active Messages. It copies the
//! inputs, and then runs the operation's steps in order as far as each
//! can go without waiting:
//!
//! - a reader's stage registers its reads (every piece) and is done when
//!   they are; a representative's receive over the representatives'
//!   team is registered at once (messages that arrive earlier wait in
//!   the engine, as for any operation);
//! - a writer's stage writes each piece whose slot every member has
//!   consumed (`small::Reserved::try_start`; never the wait for slot
//!   space the plain path has);
//! - a representative's stage over the representatives' team starts once
//!   the stage before it (its group's reduction, or its receive) is
//!   complete, from the buffer that stage filled.
//!
//! What is left goes into one queue, in initiation order, which the
//! progress hook advances from the front only (so 2^16-1 in flight cost
//! no more per poll than one); the user's handle completes with the last
//! step, its output (a library-owned buffer) copied into `dst` by the
//! thread that syncs it, so a dropped or forgotten handle never has
//! freed memory written. The local slots do not need stages to start in
//! number order: each slot's protocol orders the operations that share
//! it (a writer waits for the acknowledgements of the slot's previous
//! operation, a non-reader for its own). Every member advances the same
//! operations in the same order, and the spec orders calls over distinct
//! teams so that blocking barriers in their place could not deadlock, so
//! neither can a step at the front that waits for other members' part.
//!
//! Scatter, gather, gather-all and exchange (`crate::hier::blocks`) are staged
//! the same way, with gather and scatter stages over the local team.
//!
//! An operation at the front of the queue that waits for other members
//! holds back the remaining steps of the operations behind it (what
//! could run at their initiation did). The registered reads of the
//! inline slots are looked at all on every poll (`small::progress`),
//! as the flat non-blocking reads are.
//!
//! The sync modes apply to the whole operation as on any team
//! (`IN_ALLSYNC` before it, `OUT_ALLSYNC`'s barrier over the whole team
//! after it); the stages run in MYSYNC mode. `IN_ALLSYNC` is the one wait
//! left at initiation, which that mode asks for.
//!
//! Layer: a mechanism, composing the others: uses the AM, shared-memory
//! barrier and shared-memory data mechanisms, the handles, the registry
//! (with the grouping, `crate::team::Hier`) and the base modules.

mod barrier;
pub(crate) mod blocks;
mod stage;

pub(crate) use barrier::barrier;
use stage::{am_reduce, bcast_sig, Red, STAGE};
pub(crate) use stage::{launch, member_in_out, staged, start_then_wait, wait_for, LStage, Step};

/// The hierarchy's staged operations, as a handle advances them.
pub(crate) struct Hierarchy;

impl crate::handle::Mechanism for Hierarchy {
    fn progress(&self) -> usize {
        progress()
    }
}

use std::sync::Arc;

use gex_core::{Completion, Staging};
use gex_types::{Dt, Rank, Result};

use crate::am::algos::{am_bcast, ReduceKind};
use crate::am::reduction::ReduceArgs;
use crate::am::{fin, out_key};
use crate::engine::Key;
use crate::handle::CollHandle;
use crate::reduce::ReduceOp;
use crate::sync::SyncMode;
use crate::team::{Hier, TeamInfo};

const MY: SyncMode = SyncMode::MY;

/// Hierarchical broadcast of `dst` (on the root: the data already
/// copied in). Staged: nothing waits here (see "Staged operations").
pub(crate) fn broadcast<'a>(
    t: &Arc<TeamInfo>,
    h: &Hier,
    mode: SyncMode,
    root: Rank,
    dst: &'a mut [u8],
) -> Result<CollHandle<'a>> {
    let key = t.next_key();
    let out = out_key(t, mode);
    let nbytes = dst.len();
    if nbytes == 0 {
        return Ok(fin(CollHandle::INVALID, out));
    }
    let g_root = h.group[root as usize];
    let lroot = h.local_rank[h.rep(h.mine, Some(root)) as usize];
    // The local team's number, reserved now, in call order.
    let mut local = h.local.as_ref().map(|l| LStage::bcast(l, lroot, nbytes));
    let mut steps: Vec<Step> = Vec::new();
    let output = match h.reps(t, key, Some(root)) {
        Some(x) if t.me == root => {
            // The root sends to the other representatives now, then
            // writes for its group from its own copy of the data.
            let data: Arc<[u8]> = Arc::from(&*dst);
            let xsig = bcast_sig(g_root, nbytes);
            am_bcast(&x, x.next_key(), xsig, g_root, Some(&data), None, STAGE);
            if let Some(mut l) = local {
                steps.push(start_then_wait(move || l.start(Some(&data), None)));
            }
            None
        }
        Some(x) => {
            // Another representative receives (registered now), then
            // writes for its group.
            let s = Staging::new(nbytes);
            let xsig = bcast_sig(g_root, nbytes);
            let xc = am_bcast(&x, x.next_key(), xsig, g_root, None, Some(&s), STAGE);
            steps.push(wait_for(xc));
            if let Some(mut l) = local {
                let s = s.clone();
                // SAFETY: the representatives' broadcast into `s` is
                // complete (the step before): nothing writes it any more.
                steps.push(start_then_wait(move || {
                    l.start(Some(unsafe { staged(&s) }), None)
                }));
            }
            Some(s)
        }
        None => {
            // A member that reads from its representative.
            let s = Staging::new(nbytes);
            let mut l = local.take().expect("a non-representative has a group");
            let s2 = s.clone();
            steps.push(start_then_wait(move || l.start(None, Some(&s2))));
            Some(s)
        }
    };
    Ok(fin(launch(steps, output, dst), out))
}

/// Whether a reduction with `op` over a team grouped as `h` may combine
/// by groups: it commutes, or every group is a contiguous range of team
/// ranks (groups are numbered by their lowest member, so the groups'
/// results combined in group order are then the operands in rank order:
/// what `GEX_OP_USER_NC` needs). The same answer on every member.
pub(crate) fn reduces(op: &ReduceOp, h: &Hier) -> bool {
    op.is_commutative() || h.contiguous
}

/// Hierarchical reduce-to-one (`a`: the checked arguments over the
/// whole team). Staged: nothing waits here.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce_to_one<'a>(
    a: &ReduceArgs,
    h: Arc<Hier>,
    root: Rank,
    dst: Option<&'a mut [u8]>,
    src: Option<&'a [u8]>,
    dt: Dt,
    dt_sz: usize,
    op: &ReduceOp,
) -> Result<CollHandle<'a>> {
    let t = &a.t;
    let key = t.next_key();
    let out = out_key(t, a.mode);
    let nbytes = a.nbytes;
    let g_root = h.group[root as usize];
    let lroot = h.local_rank[h.rep(h.mine, Some(root)) as usize];
    let red = Red {
        dt,
        dt_sz,
        op: op.clone(),
    };
    let mut local = h
        .local
        .as_ref()
        .map(|l| LStage::reduce(l, lroot, nbytes, &red));
    // The operand, copied now (the root's may be in its dst).
    let input: Arc<[u8]> = match (src, &dst) {
        (Some(s), _) => Arc::from(s),
        (None, Some(d)) => Arc::from(&**d),
        (None, None) => unreachable!("checked: members other than the root pass src"),
    };
    let mut steps: Vec<Step> = Vec::new();
    let Some(x) = h.reps(t, key, Some(root)) else {
        // A member of a group that sends its operand to the
        // representative.
        let mut l = local.take().expect("a non-representative has a group");
        steps.push(start_then_wait(move || l.start(Some(&input), None)));
        return Ok(fin(launch(steps, None, &mut []), out));
    };
    // The group's result, then the groups' over the representatives.
    let group = group_result(&mut steps, local, input, nbytes);
    let xsig = red.sig(&x, "reduce_to_one", g_root, nbytes);
    let xkey = x.next_key();
    let result = (t.me == root).then(|| Staging::new(nbytes));
    steps.push(between_reps(
        group,
        x,
        xkey,
        xsig,
        ReduceKind::ToOne { root: g_root },
        result.clone(),
        red,
    ));
    Ok(fin(
        match dst {
            Some(d) => launch(steps, result, d),
            None => launch(steps, None, &mut []),
        },
        out,
    ))
}

/// The representatives' step of a hierarchical reduction: once the
/// group's result is in `group` (the step before), its reduction over the
/// representatives' team `x` under `xkey`/`xsig`, into `result` where
/// this member receives one.
fn between_reps(
    group: Arc<Staging>,
    x: Arc<TeamInfo>,
    xkey: Key,
    xsig: u32,
    kind: ReduceKind,
    result: Option<Arc<Staging>>,
    red: Red,
) -> Step {
    start_then_wait(move || {
        // SAFETY: the group's reduction into `group` is complete (the
        // step before): nothing writes it any more.
        let acc = unsafe { staged(&group) }.to_vec();
        Some(am_reduce(&x, xkey, xsig, kind, acc, result.clone(), &red))
    })
}

/// Hierarchical reduce-to-all. Staged: nothing waits here.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce_to_all<'a>(
    a: &ReduceArgs,
    h: Arc<Hier>,
    dst: &'a mut [u8],
    src: Option<&'a [u8]>,
    dt: Dt,
    dt_sz: usize,
    op: &ReduceOp,
) -> Result<CollHandle<'a>> {
    let t = &a.t;
    let key = t.next_key();
    let out = out_key(t, a.mode);
    let nbytes = a.nbytes;
    let red = Red {
        dt,
        dt_sz,
        op: op.clone(),
    };
    // Both of the local team's numbers, reserved now: the reduction in,
    // then the broadcast out.
    let stages = h.local.as_ref().map(|l| {
        (
            LStage::reduce(l, 0, nbytes, &red),
            LStage::bcast(l, 0, nbytes),
        )
    });
    let input: Arc<[u8]> = Arc::from(src.unwrap_or(&*dst));
    let result = Staging::new(nbytes);
    let mut steps: Vec<Step> = Vec::new();
    let Some(x) = h.reps(t, key, None) else {
        return Ok(member_in_out(stages, input, result, dst, out));
    };
    let (lin, lout) = stages.unzip();
    let group = group_result(&mut steps, lin, input, nbytes);
    let xsig = red.sig(&x, "reduce_to_all", 0, nbytes);
    let xkey = x.next_key();
    steps.push(between_reps(
        group,
        x,
        xkey,
        xsig,
        ReduceKind::ToAll,
        Some(result.clone()),
        red,
    ));
    if let Some(mut l) = lout {
        let r = result.clone();
        // SAFETY: the representatives' reduction into `result` is
        // complete (the step before): nothing writes it any more (the
        // handle only reads it).
        steps.push(start_then_wait(move || {
            l.start(Some(unsafe { staged(&r) }), None)
        }));
    }
    Ok(fin(launch(steps, Some(result), dst), out))
}

/// The step of a representative's first stage (a reduction or a gather
/// over its group, as the local root) into a new buffer of `nbytes`,
/// which it returns: with a local team, that stage; alone, its operand.
pub(crate) fn group_result(
    steps: &mut Vec<Step>,
    local: Option<LStage>,
    input: Arc<[u8]>,
    nbytes: usize,
) -> Arc<Staging> {
    let group = Staging::new(nbytes);
    assert!(local.is_some() || input.len() == nbytes, "a lone operand");
    match local {
        Some(mut l) => {
            let g = group.clone();
            let mut c: Option<Arc<Completion>> = None;
            steps.push(Box::new(move || {
                if c.is_none() {
                    c = l.start(Some(&input), Some(&g));
                }
                if !c.as_ref().is_some_and(|c| c.is_complete()) {
                    return false;
                }
                l.finish(Some(&g));
                true
            }));
        }
        None => {
            // SAFETY: a new buffer of `nbytes`, not shared yet; `input`
            // has `nbytes` (checked by the caller).
            unsafe { std::ptr::copy_nonoverlapping(input.as_ptr(), group.ptr(), nbytes) };
        }
    }
    group
}

/// Advances the lowest members' barriers (the layer's progress hook, and
/// a test of their handles); how many were released. Looks at each
/// barrier once to start it and then only at the front: 2^16 barriers in
/// flight cost no more per poll than one.
pub(crate) fn progress() -> usize {
    stage::staged_progress() + barrier::barrier_progress()
}
