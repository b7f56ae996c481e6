//! Mechanism: the Active Message algorithms over the engine
//! ([`crate::engine`]): the operations' state machines ([`algos`]), the
//! dissemination barrier, the blocking all-gather the team constructors
//! use, the closing barrier of `OUT_ALLSYNC`, and the reductions' common
//! arguments ([`reduction`]).
//!
//! Layer: a mechanism, the lowest. Uses the engine, the tree shapes
//! ([`crate::tree`]), the operators ([`crate::reduce`]), the sync modes,
//! the team registry and the handles; no other mechanism.

pub(crate) mod algos;
pub(crate) mod reduction;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use crate::engine::{self, lock, signature, Key, Op, Out};
use crate::handle::{CollHandle, Mechanism};
use crate::sync::SyncMode;
use crate::team::TeamInfo;
use algos::{Collect, CollectSink, Dissem};

/// The closing barrier of `OUT_ALLSYNC` as a handle sees it
/// ([`Mechanism::enter_barrier`]): dissemination over Active Messages.
pub(crate) struct OutAllSync;

impl Mechanism for OutAllSync {
    fn enter_barrier(&self, t: &TeamInfo, key: Key) -> Arc<Op> {
        start_out_barrier(t, key)
    }
}

/// The barrier of `OUT_ALLSYNC`, under the key reserved at initiation:
/// started by this member once its output is in place.
pub(crate) fn start_out_barrier(t: &TeamInfo, key: Key) -> Arc<Op> {
    // Computed without a SINGLE call's address word: a member may enter
    // this barrier inside the initiation call or later, in a sync.
    Op::start(
        key,
        engine::with_sig_extra(0, || signature("out_allsync", &[])),
        "OUT_ALLSYNC barrier",
        Box::new(Dissem::new(
            t.members.clone(),
            t.me,
            0,
            |_, _| 0,
            Default::default(),
        )),
    )
}

/// `OUT_ALLSYNC`: the key of the closing barrier, reserved right after the
/// operation's own.
pub(crate) fn out_key(t: &Arc<TeamInfo>, mode: SyncMode) -> Option<(Arc<TeamInfo>, Key)> {
    (mode.out_all && t.size() > 1).then(|| (t.clone(), t.next_key()))
}

/// The handle, with the closing barrier of `OUT_ALLSYNC` if reserved.
pub(crate) fn fin<'a>(h: CollHandle<'a>, out: Option<(Arc<TeamInfo>, Key)>) -> CollHandle<'a> {
    match out {
        Some((t, key)) => h.then_out_barrier((t, key, &OutAllSync)),
        None => h,
    }
}

/// A dissemination barrier over `t` (Active Messages) under `key`, taken
/// from the team's sequence.
pub(crate) fn am_barrier(t: &TeamInfo, key: Key, call: &'static str) -> CollHandle<'static> {
    if t.size() == 1 {
        std::sync::atomic::fence(Ordering::SeqCst);
        return CollHandle::INVALID;
    }
    let op = Op::start(
        key,
        signature("barrier", &[]),
        call,
        Box::new(Dissem::new(
            t.members.clone(),
            t.me,
            0,
            |_, _| 0,
            Default::default(),
        )),
    );
    CollHandle::pending(op.c.clone())
}

/// A blocking all-gather of variable-size blocks over `t`: returns every
/// member's `mine`, in rank order, and the key the call used.
pub(crate) fn allgather_v(t: &TeamInfo, kind: &'static str, mine: Vec<u8>) -> (Vec<Vec<u8>>, Key) {
    let key = t.next_key();
    let n = t.size();
    let me = t.me;
    let shared: Arc<[u8]> = mine.clone().into();
    let initial = (1..n)
        .map(|i| {
            let to = (me + i) % n;
            Out::owned(t.members[to as usize], me, shared.clone())
        })
        .collect();
    let mut v: Vec<Option<Vec<u8>>> = vec![None; n as usize];
    v[me as usize] = Some(mine);
    let blocks = Arc::new(Mutex::new(v));
    let op = Op::start(
        key,
        signature(kind, &[]),
        kind,
        Box::new(Collect {
            initial,
            expect_msgs: n as usize - 1,
            got_msgs: 0,
            sink: CollectSink::Blocks(blocks.clone()),
        }),
    );
    engine::wait(&op);
    let out = lock(&blocks)
        .iter_mut()
        .map(|b| b.take().expect("every block arrived"))
        .collect();
    (out, key)
}
