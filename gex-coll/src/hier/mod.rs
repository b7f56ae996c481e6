//! Hierarchical collectives over teams whose members span several
//! neighbourhoods (hosts): inside each neighbourhood through shared memory,
//! between neighbourhoods over Active Messages among one representative
//! of each, then inside again. On by default (`GEX_COLL_HIER=0` on any
//! rank turns it off, `CollSettings::no_hier`). Earlier reports of hangs
//! on two pretend hosts did not reproduce in 69 runs of 8 ranks
//! (ARCHITECTURE.md, "Hierarchical collectives").
//!
//! # Structure
//!
//! At construction (`crate::team`) a team over more than one
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

pub(crate) mod blocks;

/// The hierarchy's staged operations, as a handle advances them.
pub(crate) struct Hierarchy;

impl crate::handle::Mechanism for Hierarchy {
    fn progress(&self) -> usize {
        progress()
    }
}

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use gex_core::{Completion, Staging};
use gex_types::{Dt, Rank, Result};

use crate::am::algos::{
    am_bcast, write_staging, AllReduceRd, Collect, CollectSink, Reduce, ReduceKind,
};
use crate::am::am_barrier;
use crate::am::reduction::{reduce_args, ReduceArgs, RECURSIVE_DOUBLING_MAX};
use crate::am::{fin, out_key};
use crate::area;
use crate::area::ShmTeam;
use crate::engine::{
    hash_id, lock, send_now, sig_extra, signature, with_sig_extra, Key, Logic, Op,
};
use crate::handle::CollHandle;
use crate::reduce::ReduceOp;
use crate::shm::small::{self, Pat};
use crate::shmbar::flat_barrier;
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

// ------------------------------------------------------ staged operations

/// A reduction's element type and operator.
#[derive(Clone)]
struct Red {
    dt: Dt,
    dt_sz: usize,
    op: ReduceOp,
}

impl Red {
    /// The signature of a stage reducing `nbytes` over `t` (computed at
    /// initiation, where a SINGLE call's extra word applies).
    fn sig(&self, t: &Arc<TeamInfo>, kind: &str, root: u32, nbytes: usize) -> u32 {
        let cnt = nbytes / self.dt_sz;
        reduce_args(
            t.clone(),
            MY,
            kind,
            root,
            self.dt,
            self.dt_sz,
            cnt,
            &self.op,
        )
        .sig
    }
}

/// The signature of a broadcast stage of `nbytes` from `root` (as
/// `bcast_on` computes it).
fn bcast_sig(root: u32, nbytes: usize) -> u32 {
    signature("broadcast", &[u64::from(root), nbytes as u64, MY.word])
}

const STAGE: &str = "a hierarchical collective's stage";

/// The bytes of a staging buffer.
///
/// # Safety
///
/// Whatever wrote it is complete (observed with acquire), and nothing
/// writes it while the slice lives.
pub(crate) unsafe fn staged(s: &Staging) -> &[u8] {
    // SAFETY: `s` owns `len` bytes; no writer (the caller's promise).
    unsafe { std::slice::from_raw_parts(s.ptr(), s.len()) }
}

/// Gather of `nb`-byte blocks to `root` over `t` by Active Messages
/// under `key` (as `gather_on`): another member sends its block and is
/// done; the root places its own and collects the others into `out`.
fn am_gather(
    t: &TeamInfo,
    key: Key,
    sig: u32,
    root: u32,
    nb: usize,
    input: Option<&[u8]>,
    out: Option<&Arc<Staging>>,
) -> Arc<Completion> {
    let me = t.me;
    let input = input.expect("every member of a gather has a block");
    if me != root {
        send_now(key, sig, t.members[root as usize], me, input);
        return Completion::new(0, None);
    }
    let staging = out.expect("the root has an output").clone();
    write_staging(&staging, me as usize * nb, input);
    let others = t.size() as usize - 1;
    let op = Op::start(
        key,
        sig,
        STAGE,
        Box::new(Collect {
            initial: Vec::new(),
            expect_msgs: others,
            got_msgs: 0,
            sink: CollectSink::Staging {
                staging,
                block: nb,
                got: 0,
                expect: others * nb,
            },
        }),
    );
    op.c.clone()
}

/// Scatter of `nb`-byte blocks from `root` over `t` by Active Messages
/// under `key` (as `scatter_on`): the root sends each other member its
/// block of `input` and is done (its own is the caller's); another member
/// receives its block into `out`.
fn am_scatter(
    t: &TeamInfo,
    key: Key,
    sig: u32,
    root: u32,
    nb: usize,
    input: Option<&[u8]>,
    out: Option<&Arc<Staging>>,
) -> Arc<Completion> {
    let (me, n) = (t.me, t.size());
    if me == root {
        let s = input.expect("the root has the blocks");
        for i in 1..n {
            let to = (me + i) % n;
            let blk = &s[to as usize * nb..(to as usize + 1) * nb];
            send_now(key, sig, t.members[to as usize], 0, blk);
        }
        return Completion::new(0, None);
    }
    let staging = out.expect("a reader has an output").clone();
    let op = Op::start(
        key,
        sig,
        STAGE,
        Box::new(Collect {
            initial: Vec::new(),
            expect_msgs: 1,
            got_msgs: 0,
            sink: CollectSink::Staging {
                staging,
                block: nb,
                got: 0,
                expect: nb,
            },
        }),
    );
    op.c.clone()
}

/// A reduction over `t` by Active Messages under `key` (as
/// `reduce_one_on` / `reduce_all_on`), of this member's operand `acc`;
/// the result in `out` where this member gets one.
fn am_reduce(
    t: &TeamInfo,
    key: Key,
    sig: u32,
    kind: ReduceKind,
    acc: Vec<u8>,
    out: Option<Arc<Staging>>,
    red: &Red,
) -> Arc<Completion> {
    let Red { dt, dt_sz, op } = red.clone();
    crate::am::reduction::count_am_reduction();
    let logic: Box<dyn Logic> = match (kind, out) {
        (ReduceKind::ToAll, Some(s)) if acc.len() <= RECURSIVE_DOUBLING_MAX => Box::new(
            AllReduceRd::new(dt, dt_sz, op, t.members.clone(), t.me, acc, s),
        ),
        (kind, out) => Box::new(Reduce::new(
            dt,
            dt_sz,
            op,
            t.members.clone(),
            t.me,
            kind,
            acc,
            out,
        )),
    };
    Op::start(key, sig, STAGE, logic).c.clone()
}

/// How a stage over the local team moves its data.
enum How {
    /// The inline slots, under the numbers reserved at initiation.
    Small(small::Reserved),
    /// Active Messages (no channel), under the key reserved at
    /// initiation, with the signature computed there.
    Am(Key, u32),
}

/// What a stage over the local team does.
enum Kind {
    Bcast,
    Reduce(Red),
    /// Blocks of `nb` bytes from every member to the root.
    Gather {
        nb: usize,
    },
    /// Blocks of `nb` bytes from the root to every member.
    Scatter {
        nb: usize,
    },
    /// A reduction of elements larger than an inline slot: the members'
    /// operands (`nb` bytes) gathered to the root through the slots, and
    /// combined there in rank order ([`LStage::finish`]).
    GatherReduce {
        red: Red,
        nb: usize,
    },
}

/// One stage over the local team, its number(s) reserved at initiation
/// (in call order, so every member of the group uses the same for the
/// same stage) and started later.
pub(crate) struct LStage {
    t: Arc<TeamInfo>,
    root: u32,
    how: How,
    kind: Kind,
    /// A reader's completion over the inline slots, one part per piece
    /// (kept across partial starts).
    c: Option<Arc<Completion>>,
    /// `Kind::GatherReduce`'s root: the gathered operands (`n * nb`).
    gathered: Option<Arc<Staging>>,
}

impl LStage {
    /// A stage of `kind` rooted at local rank `root` whose writers post
    /// `wlen` bytes (elements of `unit`): its numbers reserved now, on
    /// the inline slots where they qualify (pattern `pat`), else its
    /// Active Message key, with the signature `sig` gives.
    fn new(
        l: &Arc<TeamInfo>,
        root: u32,
        kind: Kind,
        wlen: usize,
        unit: usize,
        pat: impl FnOnce() -> Pat,
        sig: impl FnOnce() -> u32,
    ) -> LStage {
        let how = if small::qualifies(l, &MY, wlen, unit) {
            How::Small(small::reserve(l, &MY, pat(), wlen))
        } else {
            How::Am(l.next_key(), sig())
        };
        LStage {
            t: l.clone(),
            root,
            how,
            kind,
            c: None,
            gathered: None,
        }
    }

    /// A broadcast of `nbytes` from local rank `root`.
    pub(crate) fn bcast(l: &Arc<TeamInfo>, root: u32, nbytes: usize) -> LStage {
        let r = root as usize;
        LStage::new(
            l,
            root,
            Kind::Bcast,
            nbytes,
            1,
            || Pat::Bcast { root: r },
            || bcast_sig(root, nbytes),
        )
    }

    /// A gather of `nb`-byte blocks to local rank `root`.
    pub(crate) fn gather(l: &Arc<TeamInfo>, root: u32, nb: usize) -> LStage {
        let r = root as usize;
        LStage::new(
            l,
            root,
            Kind::Gather { nb },
            nb,
            1,
            || Pat::Gather { root: r, nb },
            || signature("gather", &[u64::from(root), nb as u64, MY.word]),
        )
    }

    /// A scatter of `nb`-byte blocks from local rank `root` (whose own
    /// block the caller takes).
    pub(crate) fn scatter(l: &Arc<TeamInfo>, root: u32, nb: usize) -> LStage {
        let r = root as usize;
        let wlen = nb * l.size() as usize;
        LStage::new(
            l,
            root,
            Kind::Scatter { nb },
            wlen,
            1,
            || Pat::Scatter { root: r, nb },
            || signature("scatter", &[u64::from(root), nb as u64, MY.word]),
        )
    }

    /// A reduction of `nbytes` to local rank `root`.
    fn reduce(l: &Arc<TeamInfo>, root: u32, nbytes: usize, red: &Red) -> LStage {
        if red.dt_sz > area::SMALL_MAX && small::qualifies(l, &MY, nbytes, 1) {
            // Elements larger than a slot: gathered through the slots
            // (as `crate::coll::gather_reduce` does), the reduction's
            // signature folded into the gather's.
            let r = root as usize;
            let extra = hash_id(&[
                sig_extra(),
                u64::from(red.sig(l, "reduce_to_one", root, nbytes)),
            ]);
            let res = with_sig_extra(extra, || {
                small::reserve(
                    l,
                    &MY,
                    Pat::Gather {
                        root: r,
                        nb: nbytes,
                    },
                    nbytes,
                )
            });
            let kind = Kind::GatherReduce {
                red: red.clone(),
                nb: nbytes,
            };
            return LStage {
                t: l.clone(),
                root,
                how: How::Small(res),
                kind,
                c: None,
                gathered: None,
            };
        }
        let pat = || Pat::Reduce {
            root: Some(root as usize),
            dt: red.dt,
            dt_sz: red.dt_sz,
            op: red.op.clone(),
        };
        let sig = || red.sig(l, "reduce_to_one", root, nbytes);
        LStage::new(
            l,
            root,
            Kind::Reduce(red.clone()),
            nbytes,
            red.dt_sz,
            pat,
            sig,
        )
    }

    /// Starts this member's part as far as it can without waiting
    /// (`input`: a writer's data; `out`: a reader's output); once all of
    /// it started, the completion of this member's part. Called again
    /// until then; not after.
    pub(crate) fn start(
        &mut self,
        input: Option<&[u8]>,
        out: Option<&Arc<Staging>>,
    ) -> Option<Arc<Completion>> {
        match &mut self.how {
            How::Small(r) => {
                let reads = r.reads();
                let n = if reads { r.pieces() } else { 0 };
                let c = self
                    .c
                    .get_or_insert_with(|| Completion::new(n, None))
                    .clone();
                let out = match &self.kind {
                    // The root reads everyone's operand, to combine later.
                    Kind::GatherReduce { nb, .. } if reads => Some(
                        &*self
                            .gathered
                            .get_or_insert_with(|| Staging::new(nb * self.t.size() as usize)),
                    ),
                    _ => out,
                };
                let o = reads.then(|| (&c, out.expect("a reader has an output")));
                r.try_start(input, o).then_some(c)
            }
            How::Am(key, sig) => Some(match &self.kind {
                Kind::Bcast => am_bcast(&self.t, *key, *sig, self.root, input, out, STAGE),
                Kind::Gather { nb } => am_gather(&self.t, *key, *sig, self.root, *nb, input, out),
                Kind::Scatter { nb } => am_scatter(&self.t, *key, *sig, self.root, *nb, input, out),
                Kind::Reduce(red) => am_reduce(
                    &self.t,
                    *key,
                    *sig,
                    ReduceKind::ToOne { root: self.root },
                    input
                        .expect("every member of a reduction has an operand")
                        .to_vec(),
                    out.cloned(),
                    red,
                ),
                Kind::GatherReduce { .. } => unreachable!("a gathered reduction takes the slots"),
            }),
        }
    }

    /// Once this member's part is complete (the completion [`start`]
    /// returned), finishes it: the root of a `Kind::GatherReduce`
    /// combines the gathered operands in rank order into `out` (its
    /// output); nothing otherwise. Called once.
    ///
    /// [`start`]: LStage::start
    pub(crate) fn finish(&mut self, out: Option<&Arc<Staging>>) {
        let (Kind::GatherReduce { red, .. }, Some(g)) = (&self.kind, self.gathered.take()) else {
            return;
        };
        let out = out.expect("a reader has an output");
        // SAFETY: the gather into `g` is complete (the caller's promise:
        // every piece consumed), and `g` is this stage's own; `out` is
        // the stage's output, which nothing else accesses before the
        // step after this one; the two are distinct buffers.
        let (g, o) = unsafe {
            (
                std::slice::from_raw_parts_mut(g.ptr(), g.len()),
                std::slice::from_raw_parts_mut(out.ptr(), out.len()),
            )
        };
        crate::am::reduction::combine_gathered(red.dt, red.dt_sz, &red.op, g, o);
    }
}

/// A step of a staged operation: advances without waiting; whether it
/// is done. Not called again once done.
pub(crate) type Step = Box<dyn FnMut() -> bool + Send>;

/// A step that starts something (`start` returns its completion once
/// started; called again until then) and is done when that completes.
pub(crate) fn start_then_wait(
    mut start: impl FnMut() -> Option<Arc<Completion>> + Send + 'static,
) -> Step {
    let mut c: Option<Arc<Completion>> = None;
    Box::new(move || {
        if c.is_none() {
            c = start();
        }
        c.as_ref().is_some_and(|c| c.is_complete())
    })
}

/// A step done when `c` is complete.
pub(crate) fn wait_for(c: Arc<Completion>) -> Step {
    Box::new(move || c.is_complete())
}

/// A staged operation in flight: its steps in order, then the user's
/// completion.
struct Staged {
    steps: VecDeque<Step>,
    c: Arc<Completion>,
}

impl Staged {
    /// Runs the steps that can run now, in order; whether all are done
    /// (the user's completion then marked; not called again).
    fn advance(&mut self) -> bool {
        while let Some(s) = self.steps.front_mut() {
            if !s() {
                return false;
            }
            self.steps.pop_front();
        }
        self.c.done();
        true
    }
}

/// The staged operations not done at initiation, in initiation order.
static STAGED: Mutex<VecDeque<Staged>> = Mutex::new(VecDeque::new());

/// `STAGED.len()`, read without the lock (written under it).
static STAGED_LEN: AtomicUsize = AtomicUsize::new(0);

/// A member other than its group's representative in an operation with
/// a local stage in (its operand `input`) and one out (into `result`,
/// copied into `dst` at completion): reduce-to-all, gather-all, exchange.
pub(crate) fn member_in_out<'a>(
    stages: Option<(LStage, LStage)>,
    input: Arc<[u8]>,
    result: Arc<Staging>,
    dst: &'a mut [u8],
    out: Option<(Arc<TeamInfo>, Key)>,
) -> CollHandle<'a> {
    let (mut lin, mut lout) = stages.expect("a non-representative has a group");
    let r = result.clone();
    let steps: Vec<Step> = vec![
        start_then_wait(move || lin.start(Some(&input), None)),
        start_then_wait(move || lout.start(None, Some(&r))),
    ];
    fin(launch(steps, Some(result), dst), out)
}

/// Runs what can run of an operation's `steps` now and queues the rest
/// for the progress hook; the user's handle, with `output` (the buffer
/// the last stage fills) copied into `dst` at completion.
pub(crate) fn launch<'a>(
    steps: Vec<Step>,
    output: Option<Arc<Staging>>,
    dst: &'a mut [u8],
) -> CollHandle<'a> {
    let c = Completion::new(1, None);
    let mut op = Staged {
        steps: steps.into(),
        c: c.clone(),
    };
    if op.advance() {
        if let Some(s) = output {
            // SAFETY: every stage is complete: nothing writes `s`.
            dst.copy_from_slice(unsafe { staged(&s) });
        }
        return CollHandle::INVALID;
    }
    {
        let mut q = lock(&STAGED);
        q.push_back(op);
        STAGED_LEN.store(q.len(), Ordering::Release);
    }
    match output {
        Some(s) => CollHandle::pending_into(c, s, dst).shm_poke(),
        None => CollHandle::pending(c).shm_poke(),
    }
}

/// The hook's part for the staged operations: advances the front of the
/// queue only (2^16 in flight cost no more per poll than one; every
/// stage that could start without waiting started at initiation); how
/// many completed.
fn staged_progress() -> usize {
    if STAGED_LEN.load(Ordering::Acquire) == 0 {
        return 0;
    }
    let Ok(mut q) = STAGED.try_lock() else {
        // Another thread is at it (or this one, further up).
        return 0;
    };
    let mut done = 0;
    while let Some(op) = q.front_mut() {
        if !op.advance() {
            break;
        }
        q.pop_front();
        done += 1;
    }
    STAGED_LEN.store(q.len(), Ordering::Release);
    done
}

/// How the lowest member of a group learns that the others arrived, and
/// how it releases them.
enum Local {
    /// The local team's shared-memory barrier: the others entered episode
    /// `k` (looked at from member `from` on); release by entering it.
    Shm {
        team: Arc<ShmTeam>,
        k: u64,
        from: usize,
    },
    /// Without a channel: the first of the local team's two dissemination
    /// barriers, then the second, under the key reserved at initiation.
    Am {
        first: CollHandle<'static>,
        team: Arc<TeamInfo>,
        release: Key,
    },
    /// Alone in the group.
    Alone,
}

/// A lowest member's part of a hierarchical barrier, advanced by the
/// progress hook.
struct Pending {
    local: Local,
    /// The barrier among the groups' lowest members, once the group
    /// arrived.
    reps: Arc<TeamInfo>,
    between: Option<CollHandle<'static>>,
    c: Arc<Completion>,
}

impl Pending {
    /// Whether this member's group has arrived.
    fn arrived(&mut self) -> bool {
        match &mut self.local {
            Local::Shm { team, k, from } => team.others_arrived(*k, from),
            Local::Am { first, .. } => first.finished(),
            Local::Alone => true,
        }
    }

    /// Starts the barrier between groups once the group arrived; whether
    /// it is started.
    fn between_started(&mut self) -> bool {
        if self.between.is_none() {
            if !self.arrived() {
                return false;
            }
            self.between = Some(flat_barrier(&self.reps, BARRIER));
        }
        true
    }

    /// Whether the barrier between groups (started) is complete.
    fn between_done(&mut self) -> bool {
        self.between.as_mut().is_some_and(CollHandle::finished)
    }

    /// Releases the group.
    fn release(&self) {
        match &self.local {
            Local::Shm { team, k, .. } => team.publish(*k),
            // Completes in the handlers: the others wait for it.
            Local::Am { team, release, .. } => drop(am_barrier(team, *release, BARRIER)),
            Local::Alone => {}
        }
        self.c.done();
    }
}

/// The lowest members' barriers in flight, in initiation order: each
/// group is released in order (a shared-memory release enters every
/// episode before it), while the barriers between groups start as soon
/// as each group arrived.
struct Queue {
    q: VecDeque<Pending>,
    /// How many from the front have their barrier between groups
    /// started.
    started: usize,
}

static PENDING: Mutex<Queue> = Mutex::new(Queue {
    q: VecDeque::new(),
    started: 0,
});

/// Barriers in [`PENDING`], readable without its lock: the progress hook
/// runs in every poll of every wait, hierarchy or not, and an idle one
/// takes no lock (the lock was 6-22% of a waiting rank's samples).
static PENDING_LEN: AtomicUsize = AtomicUsize::new(0);

const BARRIER: &str = "gex_Coll_BarrierNB (between neighbourhoods)";

/// Advances the lowest members' barriers (the layer's progress hook, and
/// a test of their handles); how many were released. Looks at each
/// barrier once to start it and then only at the front: 2^16 barriers in
/// flight cost no more per poll than one.
pub(crate) fn progress() -> usize {
    staged_progress() + barrier_progress()
}

/// The barriers' part of [`progress`].
fn barrier_progress() -> usize {
    if PENDING_LEN.load(Ordering::Acquire) == 0 {
        return 0;
    }
    let Ok(mut guard) = PENDING.try_lock() else {
        // Another thread is at it.
        return 0;
    };
    let Queue { q, started } = &mut *guard;
    if q.is_empty() {
        return 0;
    }
    while *started < q.len() && q[*started].between_started() {
        *started += 1;
    }
    let mut released = 0;
    while *started > 0 && q[0].between_done() {
        q.pop_front().expect("non-empty").release();
        *started -= 1;
        released += 1;
    }
    PENDING_LEN.store(q.len(), Ordering::Release);
    released
}

/// Hierarchical barrier: members other than the lowest of their group
/// arrive and wait for the release; the lowest waits (in the progress
/// hook) for its group, then for the other groups' lowest members, then
/// releases its group.
pub(crate) fn barrier(t: &TeamInfo, h: &Hier) -> CollHandle<'static> {
    let key = t.next_key();
    let Some(reps) = h.reps(t, key, None) else {
        let l = h.local.as_ref().expect("a non-representative has a group");
        return match l.shm_team() {
            Some(s) => match s.enter() {
                None => CollHandle::INVALID,
                Some((k, from)) => CollHandle::shm_barrier(s.clone(), k, from),
            },
            None => {
                // Arrive, and wait for the release.
                drop(flat_barrier(l, BARRIER));
                flat_barrier(l, BARRIER)
            }
        };
    };
    let local = match &h.local {
        None => Local::Alone,
        Some(l) => match l.shm_team() {
            Some(s) => Local::Shm {
                team: s.clone(),
                k: s.reserve(),
                from: 0,
            },
            None => Local::Am {
                first: flat_barrier(l, BARRIER),
                team: l.clone(),
                release: l.next_key(),
            },
        },
    };
    let c = Completion::new(1, None);
    {
        let mut p = lock(&PENDING);
        p.q.push_back(Pending {
            local,
            reps,
            between: None,
            c: c.clone(),
        });
        PENDING_LEN.store(p.q.len(), Ordering::Release);
    }
    progress();
    let mut h = CollHandle::pending(c).shm_poke();
    if h.finished() {
        return CollHandle::INVALID;
    }
    h
}
