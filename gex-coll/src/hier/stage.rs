//! The hierarchy's staged operations (see "Staged operations" in
//! `crate::hier`): the local stages over a neighbourhood's team
//! (`LStage`: the inline slots, a gather through them, or Active
//! Messages), the steps queued behind them, and their progress. Part of
//! the hierarchy mechanism; uses the engine, the AM and shared-memory
//! data mechanisms, the handles and the team registry.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use gex_core::{Completion, Staging};
use gex_types::Dt;

use crate::am::algos::{
    am_bcast, write_staging, AllReduceRd, Collect, CollectSink, Reduce, ReduceKind,
};
use crate::am::fin;
use crate::am::reduction::{reduce_args, RECURSIVE_DOUBLING_MAX};
use crate::area;
use crate::engine::{
    hash_id, lock, send_now, sig_extra, signature, with_sig_extra, Key, Logic, Op,
};
use crate::handle::CollHandle;
use crate::reduce::ReduceOp;
use crate::shm::small::{self, Pat};
use crate::team::TeamInfo;

use super::MY;

/// A reduction's element type and operator.
#[derive(Clone)]
pub(super) struct Red {
    pub(super) dt: Dt,
    pub(super) dt_sz: usize,
    pub(super) op: ReduceOp,
}

impl Red {
    /// The signature of a stage reducing `nbytes` over `t` (computed at
    /// initiation, where a SINGLE call's extra word applies).
    pub(super) fn sig(&self, t: &Arc<TeamInfo>, kind: &str, root: u32, nbytes: usize) -> u32 {
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
pub(super) fn bcast_sig(root: u32, nbytes: usize) -> u32 {
    signature("broadcast", &[u64::from(root), nbytes as u64, MY.word])
}

pub(super) const STAGE: &str = "a hierarchical collective's stage";

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
pub(super) fn am_gather(
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
pub(super) fn am_scatter(
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
pub(super) fn am_reduce(
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
pub(super) enum How {
    /// The inline slots, under the numbers reserved at initiation.
    Small(small::Reserved),
    /// Active Messages (no channel), under the key reserved at
    /// initiation, with the signature computed there.
    Am(Key, u32),
}

/// What a stage over the local team does.
pub(super) enum Kind {
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
    pub(super) fn reduce(l: &Arc<TeamInfo>, root: u32, nbytes: usize, red: &Red) -> LStage {
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
pub(super) struct Staged {
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
pub(super) static STAGED: Mutex<VecDeque<Staged>> = Mutex::new(VecDeque::new());

/// `STAGED.len()`, read without the lock (written under it).
pub(super) static STAGED_LEN: AtomicUsize = AtomicUsize::new(0);

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
pub(super) fn staged_progress() -> usize {
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
