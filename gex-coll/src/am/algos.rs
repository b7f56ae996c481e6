//! The operations' state machines (see [`crate::engine::Logic`]): what a
//! member sends at initiation and on each message, and when its part is
//! done. Member lists hold jobranks in team-rank order.
//!
//! Part of the AM mechanism (`crate::am`); uses the engine, the tree
//! shapes, the operators and the team registry.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use gex_core::{Completion, Staging};
use gex_types::{Dt, Rank};

use crate::engine::{check_range, lock, send_now, Cx, Key, Logic, Op, Out};
use crate::reduce::{combine, ReduceOp};
use crate::team::TeamInfo;
use crate::tree::{
    binomial_children, binomial_parent, dissemination_from, dissemination_rounds, dissemination_to,
    from_virtual, to_virtual,
};

/// Copies `data` to `offset` of `staging`, which must contain the range.
pub(crate) fn write_staging(staging: &Staging, offset: usize, data: &[u8]) {
    if !gex_conduit::fits(offset, data.len(), staging.len()) {
        gex_core::fatal(&format!(
            "gex-coll: [{offset}, +{}) is outside a result buffer of {} bytes",
            data.len(),
            staging.len()
        ));
    }
    // SAFETY: the range is inside the staging buffer (checked above). Every
    // write to an operation's staging happens under the operation's lock,
    // each byte once, and the buffer is read (copied out to the client)
    // only after the operation's completion, which is counted down after
    // the last write.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), staging.ptr().add(offset), data.len()) };
}

/// A dissemination all-reduce of a small idempotent value: the barrier
/// (the value is unit) and the GASNet-1 barrier (the value carries the
/// barrier name, see `crate::g1`). Round `k`'s message carries everything
/// heard so far; with an idempotent, commutative merge, duplicates from
/// non-power-of-two sizes do no harm.
pub(crate) struct Dissem {
    pub(crate) members: Arc<[Rank]>,
    pub(crate) me: u32,
    pub(crate) value: u64,
    pub(crate) merge: fn(u64, u64) -> u64,
    /// The merged value of every member, set when done.
    pub(crate) result: Arc<AtomicU64>,
    rounds: u32,
    sent: u32,
    got: u64,
}

impl Dissem {
    pub(crate) fn new(
        members: Arc<[Rank]>,
        me: u32,
        value: u64,
        merge: fn(u64, u64) -> u64,
        result: Arc<AtomicU64>,
    ) -> Self {
        let rounds = dissemination_rounds(members.len() as u32);
        Dissem {
            members,
            me,
            value,
            merge,
            result,
            rounds,
            sent: 0,
            got: 0,
        }
    }

    fn advance(&mut self, cx: &mut Cx<'_>) {
        let n = self.members.len() as u32;
        while self.sent < self.rounds && (self.sent == 0 || self.got & (1 << (self.sent - 1)) != 0)
        {
            let to = dissemination_to(self.me, self.sent, n);
            let bytes: Arc<[u8]> = Arc::from(&self.value.to_le_bytes()[..]);
            cx.send(Out::owned(self.members[to as usize], self.sent, bytes));
            self.sent += 1;
        }
        let all = (1u64 << self.rounds) - 1;
        if self.sent == self.rounds && self.got == all {
            self.result.store(self.value, Ordering::Release);
            cx.finish();
        }
    }
}

impl Logic for Dissem {
    fn start(&mut self, cx: &mut Cx<'_>) {
        self.advance(cx);
    }

    fn chunk(
        &mut self,
        cx: &mut Cx<'_>,
        src: Rank,
        tag: u32,
        offset: usize,
        total: usize,
        data: &[u8],
    ) {
        let n = self.members.len() as u32;
        let expected_src =
            (tag < self.rounds).then(|| self.members[dissemination_from(self.me, tag, n) as usize]);
        if expected_src != Some(src) || self.got & (1 << tag) != 0 || total != 8 {
            gex_core::fatal(&format!(
                "gex-coll: unexpected barrier message (round {tag}, {total} bytes) from rank {src}"
            ));
        }
        let Some(v) = cx.assemble(tag, offset, total, data) else {
            return;
        };
        let v = u64::from_le_bytes(v[..].try_into().expect("8 bytes"));
        self.value = (self.merge)(self.value, v);
        self.got |= 1 << tag;
        self.advance(cx);
    }
}

/// A broadcast on a member other than the root: each chunk lands in the
/// result buffer and is forwarded to the children at once, so large
/// broadcasts pipeline down the tree.
pub(crate) struct BcastRecv {
    /// Jobranks of the children, largest subtree first.
    pub(crate) children: Vec<Rank>,
    pub(crate) staging: Arc<Staging>,
    pub(crate) tag: u32,
    pub(crate) got: usize,
}

impl BcastRecv {
    /// One chunk of the broadcast message; returns whether all arrived.
    fn take(
        &mut self,
        cx: &mut Cx<'_>,
        tag: u32,
        offset: usize,
        total: usize,
        data: &[u8],
    ) -> bool {
        if tag != self.tag || total != self.staging.len() {
            gex_core::fatal(&format!(
                "gex-coll: broadcast chunk (tag {tag}, {total} bytes) does not match the {} bytes expected",
                self.staging.len()
            ));
        }
        check_range(tag, offset, total, data.len());
        write_staging(&self.staging, offset, data);
        for &c in &self.children {
            cx.send(Out::forward(c, tag, offset, total));
        }
        self.got += data.len();
        self.got == total
    }
}

impl Logic for BcastRecv {
    fn start(&mut self, _cx: &mut Cx<'_>) {}

    fn chunk(
        &mut self,
        cx: &mut Cx<'_>,
        _src: Rank,
        tag: u32,
        offset: usize,
        total: usize,
        data: &[u8],
    ) {
        if self.take(cx, tag, offset, total, data) {
            cx.finish();
        }
    }
}

/// Tag of the result sent from rank 0 to the root of a reduce-to-one.
pub(crate) const TAG_RESULT: u32 = u32::MAX;
/// Tag of the broadcast phase of a reduce-to-all.
pub(crate) const TAG_BCAST: u32 = u32::MAX - 1;

/// Where a reduction's result goes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReduceKind {
    ToOne { root: u32 },
    ToAll,
}

/// A reduction over the binomial tree rooted at team rank 0, each node
/// combining its own contribution with its children's in increasing
/// order: that is rank order, so `GEX_OP_USER_NC` is respected, and the
/// same association every time, so results are reproducible within a run
/// (and identical on every rank for reduce-to-all). Rank 0 then sends the
/// result to the root (reduce-to-one) or broadcasts it down the same tree
/// (reduce-to-all).
pub(crate) struct Reduce {
    pub(crate) dt: Dt,
    pub(crate) dt_sz: usize,
    pub(crate) op: ReduceOp,
    pub(crate) members: Arc<[Rank]>,
    pub(crate) me: u32,
    pub(crate) kind: ReduceKind,
    /// This rank's contribution, then the combination of its subtree so far.
    pub(crate) acc: Vec<u8>,
    /// Where this rank's result goes (root, or every rank for ToAll).
    pub(crate) staging: Option<Arc<Staging>>,
    children: Vec<u32>,
    partials: Vec<Option<Vec<u8>>>,
    next: usize,
    reduced: bool,
    bcast: Option<BcastRecv>,
}

impl Reduce {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        dt: Dt,
        dt_sz: usize,
        op: ReduceOp,
        members: Arc<[Rank]>,
        me: u32,
        kind: ReduceKind,
        acc: Vec<u8>,
        staging: Option<Arc<Staging>>,
    ) -> Self {
        let n = members.len() as u32;
        let children = binomial_children(me, n);
        let bcast = (kind == ReduceKind::ToAll && me != 0).then(|| BcastRecv {
            children: children
                .iter()
                .rev()
                .map(|&c| members[c as usize])
                .collect(),
            staging: staging.clone().expect("reduce-to-all has a result buffer"),
            tag: TAG_BCAST,
            got: 0,
        });
        Reduce {
            dt,
            dt_sz,
            op,
            partials: children.iter().map(|_| None).collect(),
            children,
            members,
            me,
            kind,
            acc,
            staging,
            next: 0,
            reduced: false,
            bcast,
        }
    }

    fn try_reduce(&mut self, cx: &mut Cx<'_>) {
        while let Some(Some(mut p)) = self.partials.get_mut(self.next).map(Option::take) {
            combine(self.dt, self.dt_sz, &self.op, &self.acc, &mut p);
            self.acc = p;
            self.next += 1;
        }
        if self.next < self.children.len() || self.reduced {
            return;
        }
        self.reduced = true;
        let acc = std::mem::take(&mut self.acc);
        if self.me == 0 {
            match self.kind {
                ReduceKind::ToOne { root: 0 } => {
                    write_staging(self.staging.as_ref().expect("root result buffer"), 0, &acc);
                }
                ReduceKind::ToOne { root } => {
                    cx.send(Out::owned(
                        self.members[root as usize],
                        TAG_RESULT,
                        acc.into(),
                    ));
                }
                ReduceKind::ToAll => {
                    write_staging(self.staging.as_ref().expect("result buffer"), 0, &acc);
                    let all: Arc<[u8]> = acc.into();
                    for &c in self.children.iter().rev() {
                        cx.send(Out::owned(self.members[c as usize], TAG_BCAST, all.clone()));
                    }
                }
            }
            cx.finish();
            return;
        }
        let parent = binomial_parent(self.me).expect("non-zero ranks have a parent");
        cx.send(Out::owned(
            self.members[parent as usize],
            self.me,
            acc.into(),
        ));
        match self.kind {
            ReduceKind::ToOne { root } if root == self.me => {} // the result comes from rank 0
            ReduceKind::ToOne { .. } => cx.finish(),
            ReduceKind::ToAll => {} // the result comes down the tree
        }
    }
}

impl Logic for Reduce {
    fn start(&mut self, cx: &mut Cx<'_>) {
        self.try_reduce(cx);
    }

    fn chunk(
        &mut self,
        cx: &mut Cx<'_>,
        src: Rank,
        tag: u32,
        offset: usize,
        total: usize,
        data: &[u8],
    ) {
        let nbytes = self.staging.as_ref().map_or(usize::MAX, |s| s.len());
        match tag {
            TAG_RESULT
                if self.kind == (ReduceKind::ToOne { root: self.me })
                    && self.me != 0
                    && self.reduced =>
            {
                if let Some(v) = cx.assemble(tag, offset, total, data) {
                    if v.len() != nbytes {
                        gex_core::fatal("gex-coll: reduction result of the wrong length");
                    }
                    write_staging(self.staging.as_ref().expect("root result buffer"), 0, &v);
                    cx.finish();
                }
            }
            TAG_BCAST if self.bcast.is_some() && self.reduced => {
                let b = self.bcast.as_mut().expect("checked");
                if b.take(cx, tag, offset, total, data) {
                    cx.finish();
                }
            }
            _ => {
                let Some(idx) = self
                    .children
                    .iter()
                    .position(|&c| c == tag && self.members[c as usize] == src)
                else {
                    gex_core::fatal(&format!(
                        "gex-coll: unexpected reduction message {tag} from rank {src} at team rank {}",
                        self.me
                    ));
                };
                if let Some(v) = cx.assemble(tag, offset, total, data) {
                    if self.partials[idx].is_some() || idx < self.next || v.len() != self.acc.len()
                    {
                        gex_core::fatal(&format!(
                            "gex-coll: reduction partial from rank {src} is a duplicate or has the wrong length ({} bytes, {} expected)",
                            v.len(),
                            self.acc.len()
                        ));
                    }
                    self.partials[idx] = Some(v);
                    self.try_reduce(cx);
                }
            }
        }
    }
}

/// Where collected blocks go.
pub(crate) enum CollectSink {
    /// Fixed-size blocks: message `tag` lands at `tag * block` of the
    /// result buffer, chunk by chunk.
    Staging {
        staging: Arc<Staging>,
        block: usize,
        got: usize,
        expect: usize,
    },
    /// Whole messages of any size, by tag (internal all-gathers).
    Blocks(Arc<Mutex<Vec<Option<Vec<u8>>>>>),
}

/// Flat patterns (design notes: the LogP optimum when latency dominates):
/// gather at the root, scatter's receiving side, gather-all and exchange.
/// The initial sends go out in the order `me + 1, me + 2, ...` so that in
/// an all-to-all each rank receives from one peer per step.
pub(crate) struct Collect {
    pub(crate) initial: Vec<Out>,
    pub(crate) expect_msgs: usize,
    pub(crate) got_msgs: usize,
    pub(crate) sink: CollectSink,
}

impl Logic for Collect {
    fn start(&mut self, cx: &mut Cx<'_>) {
        for o in self.initial.drain(..) {
            cx.send(o);
        }
        let done = match &self.sink {
            CollectSink::Staging { got, expect, .. } => got == expect,
            CollectSink::Blocks(_) => self.got_msgs == self.expect_msgs,
        };
        if done {
            cx.finish();
        }
    }

    fn chunk(
        &mut self,
        cx: &mut Cx<'_>,
        src: Rank,
        tag: u32,
        offset: usize,
        total: usize,
        data: &[u8],
    ) {
        match &mut self.sink {
            CollectSink::Staging {
                staging,
                block,
                got,
                expect,
            } => {
                if total != *block {
                    gex_core::fatal(&format!(
                        "gex-coll: block of {total} bytes from rank {src}, {block} expected"
                    ));
                }
                check_range(tag, offset, total, data.len());
                write_staging(staging, tag as usize * *block + offset, data);
                *got += data.len();
                if *got == *expect {
                    cx.finish();
                }
            }
            CollectSink::Blocks(blocks) => {
                let Some(v) = cx.assemble(tag, offset, total, data) else {
                    return;
                };
                let mut b = lock(blocks);
                match b.get_mut(tag as usize) {
                    Some(slot @ None) => *slot = Some(v),
                    _ => gex_core::fatal(&format!(
                        "gex-coll: unexpected block {tag} from rank {src}"
                    )),
                }
                self.got_msgs += 1;
                if self.got_msgs == self.expect_msgs {
                    cx.finish();
                }
            }
        }
    }
}

/// Tag of the pre-step of [`AllReduceRd`] (an excess rank's input).
pub(crate) const TAG_PRE: u32 = u32::MAX - 2;
/// Tag of the post-step of [`AllReduceRd`] (the result for an excess rank).
pub(crate) const TAG_POST: u32 = u32::MAX - 3;

/// Reduce-to-all by recursive doubling, for small vectors: `log2 p`
/// exchange rounds (plus one before and one after when the size `n` is not
/// a power of two `p`) instead of the `2 log2 n` steps of reduce and
/// broadcast.
///
/// Order is kept for non-commutative operators: the first `2 * (n - p)`
/// ranks pair up (`2i` gives its input to `2i + 1`), leaving `p` virtual
/// ranks that each hold a contiguous, increasing range of ranks; in round
/// `k` virtual ranks `v` and `v ^ 2^k` hold adjacent ranges and both
/// compute `lower (+) higher` on the same operands, so every rank ends with
/// the same bits, associated the same way in every call.
pub(crate) struct AllReduceRd {
    dt: Dt,
    dt_sz: usize,
    op: ReduceOp,
    members: Arc<[Rank]>,
    me: u32,
    staging: Arc<Staging>,
    acc: Vec<u8>,
    /// n minus the largest power of two not above n.
    extra: u32,
    /// This rank's virtual rank, if it takes part in the rounds.
    v: Option<u32>,
    rounds: u32,
    /// Next round to combine (round `k` is sent once round `k - 1` was
    /// combined, so each send carries exactly the ranks below it).
    round: u32,
    /// Whether this rank's own range is complete (its pair's input, if it
    /// has a pair, has been combined): rounds may start.
    ready: bool,
    early: Vec<Option<Vec<u8>>>,
}

impl AllReduceRd {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        dt: Dt,
        dt_sz: usize,
        op: ReduceOp,
        members: Arc<[Rank]>,
        me: u32,
        acc: Vec<u8>,
        staging: Arc<Staging>,
    ) -> Self {
        let n = members.len() as u32;
        let p = 1u32 << (31 - n.leading_zeros());
        let extra = n - p;
        let v = if me < 2 * extra {
            (me % 2 == 1).then_some(me / 2)
        } else {
            Some(me - extra)
        };
        let rounds = p.trailing_zeros();
        AllReduceRd {
            dt,
            dt_sz,
            op,
            members,
            me,
            staging,
            acc,
            extra,
            v,
            rounds,
            round: 0,
            ready: !(me < 2 * extra && v.is_some()),
            early: (0..rounds).map(|_| None).collect(),
        }
    }

    /// The real rank of virtual rank `w`.
    fn real(&self, w: u32) -> u32 {
        if w < self.extra {
            2 * w + 1
        } else {
            w + self.extra
        }
    }

    fn send_acc(&self, cx: &mut Cx<'_>, to: u32, tag: u32) {
        let bytes: Arc<[u8]> = Arc::from(&self.acc[..]);
        cx.send(Out::owned(self.members[to as usize], tag, bytes));
    }

    /// Sends the current round and combines whatever partner data is here,
    /// round by round; finishes after the last.
    fn advance(&mut self, cx: &mut Cx<'_>) {
        let Some(v) = self.v.filter(|_| self.ready) else {
            return;
        };
        loop {
            if self.round == self.rounds {
                write_staging(&self.staging, 0, &self.acc);
                if self.me < 2 * self.extra {
                    self.send_acc(cx, self.me - 1, TAG_POST);
                }
                cx.finish();
                return;
            }
            let k = self.round;
            let Some(mut theirs) = self.early[k as usize].take() else {
                return;
            };
            let w = v ^ (1 << k);
            if w < v {
                combine(self.dt, self.dt_sz, &self.op, &theirs, &mut self.acc);
            } else {
                combine(self.dt, self.dt_sz, &self.op, &self.acc, &mut theirs);
                self.acc = theirs;
            }
            self.round += 1;
            if self.round < self.rounds {
                let w = v ^ (1 << self.round);
                self.send_acc(cx, self.real(w), self.round);
            }
        }
    }
}

impl Logic for AllReduceRd {
    fn start(&mut self, cx: &mut Cx<'_>) {
        match self.v {
            None => self.send_acc(cx, self.me + 1, TAG_PRE),
            Some(_) if self.me < 2 * self.extra => {} // waits for its pair's input
            Some(v) => {
                if self.rounds > 0 {
                    self.send_acc(cx, self.real(v ^ 1), 0);
                }
                self.advance(cx);
            }
        }
    }

    fn chunk(
        &mut self,
        cx: &mut Cx<'_>,
        src: Rank,
        tag: u32,
        offset: usize,
        total: usize,
        data: &[u8],
    ) {
        let Some(m) = cx.assemble(tag, offset, total, data) else {
            return;
        };
        if m.len() != self.staging.len() {
            gex_core::fatal(&format!(
                "gex-coll: all-reduce message {tag} from rank {src} has {} bytes, {} expected",
                m.len(),
                self.staging.len()
            ));
        }
        match (tag, self.v) {
            (TAG_POST, None) => {
                write_staging(&self.staging, 0, &m);
                cx.finish();
            }
            (TAG_PRE, Some(v)) if !self.ready => {
                let mut mine = std::mem::replace(&mut self.acc, m);
                combine(self.dt, self.dt_sz, &self.op, &self.acc, &mut mine);
                self.acc = mine;
                self.ready = true;
                if self.rounds > 0 {
                    self.send_acc(cx, self.real(v ^ 1), 0);
                }
                self.advance(cx);
            }
            (k, Some(v))
                if k < self.rounds && self.early[k as usize].is_none() && k >= self.round =>
            {
                if self.members[self.real(v ^ (1 << k)) as usize] != src {
                    gex_core::fatal(&format!(
                        "gex-coll: all-reduce round {k} message from rank {src}"
                    ));
                }
                self.early[k as usize] = Some(m);
                self.advance(cx);
            }
            _ => gex_core::fatal(&format!(
                "gex-coll: unexpected all-reduce message {tag} from rank {src} at team rank {}",
                self.me
            )),
        }
    }
}

/// Broadcast from `root` over `t` by Active Messages under `key`, down a
/// binomial tree (the flat `bcast_on` and the hierarchy's stages): the
/// root sends `data` to its children and is done; another member
/// receives into `out` (and forwards) and completes with the returned
/// completion. `call` names the operation in errors.
pub(crate) fn am_bcast(
    t: &TeamInfo,
    key: Key,
    sig: u32,
    root: u32,
    data: Option<&[u8]>,
    out: Option<&Arc<Staging>>,
    call: &'static str,
) -> Arc<Completion> {
    let (me, n) = (t.me, t.size());
    let v = to_virtual(me, root, n);
    let children: Vec<Rank> = binomial_children(v, n)
        .iter()
        .rev()
        .map(|&c| t.members[from_virtual(c, root, n) as usize])
        .collect();
    if me == root {
        let d = data.expect("the root has the data");
        for &c in &children {
            send_now(key, sig, c, 0, d);
        }
        return Completion::new(0, None);
    }
    let staging = out.expect("a reader has an output").clone();
    let op = Op::start(
        key,
        sig,
        call,
        Box::new(BcastRecv {
            children,
            staging,
            tag: 0,
            got: 0,
        }),
    );
    op.c.clone()
}

#[cfg(test)]
mod tests {
    //! The state machines run against each other in one process, with
    //! messages cut into small chunks and delivered in random order.

    use super::*;
    use crate::engine::{Inbox, OutData};
    use crate::reduce::reduce_sequential;

    struct Msg {
        src: u32,
        dest: u32,
        tag: u32,
        offset: usize,
        total: usize,
        data: Vec<u8>,
    }

    /// Runs `logics` (member i = jobrank i) to the end; returns which
    /// finished. `seed` orders deliveries; Owned messages are cut into
    /// `chunk`-byte pieces.
    fn run(
        mut logics: Vec<Box<dyn Logic>>,
        initial: Vec<Msg>,
        seed: u64,
        chunk: usize,
    ) -> Vec<bool> {
        let n = logics.len();
        let mut inboxes: Vec<Inbox> = (0..n).map(|_| Inbox::default()).collect();
        let mut finished = vec![false; n];
        let mut queue = initial;
        let mut rng = seed | 1;
        let emit = |queue: &mut Vec<Msg>, src: u32, outs: Vec<Out>, input: &[u8]| {
            for o in outs {
                let bytes = match &o.data {
                    OutData::Input => input.to_vec(),
                    OutData::Owned(a) => a.to_vec(),
                };
                let pieces: Vec<&[u8]> = if bytes.is_empty() {
                    vec![&[][..]]
                } else {
                    bytes.chunks(chunk).collect()
                };
                for (i, p) in pieces.iter().enumerate() {
                    queue.push(Msg {
                        src,
                        dest: o.dest,
                        tag: o.tag,
                        offset: o.offset + i * chunk,
                        total: o.total,
                        data: p.to_vec(),
                    });
                }
            }
        };
        for (i, l) in logics.iter_mut().enumerate() {
            let mut cx = Cx::new(&mut inboxes[i]);
            l.start(&mut cx);
            let (outs, fin) = (std::mem::take(&mut cx.outs), cx.finished);
            finished[i] |= fin;
            emit(&mut queue, i as u32, outs, &[]);
        }
        while !queue.is_empty() {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let m = queue.swap_remove((rng % queue.len() as u64) as usize);
            let d = m.dest as usize;
            assert!(!finished[d], "message {} to {d} after it finished", m.tag);
            let mut cx = Cx::new(&mut inboxes[d]);
            logics[d].chunk(&mut cx, m.src, m.tag, m.offset, m.total, &m.data);
            let (outs, fin) = (std::mem::take(&mut cx.outs), cx.finished);
            finished[d] |= fin;
            emit(&mut queue, m.dest, outs, &m.data);
        }
        finished
    }

    fn read(st: &Staging) -> Vec<u8> {
        let mut v = vec![0u8; st.len()];
        // SAFETY: single-threaded test; every write to the staging buffer
        // happened before (in `run`).
        unsafe { std::ptr::copy_nonoverlapping(st.ptr(), v.as_mut_ptr(), st.len()) };
        v
    }

    /// x -> a*x + b on u32 pairs, "left then right": not commutative.
    fn affine() -> ReduceOp {
        ReduceOp::user_nc(|x, y, count| {
            assert_eq!(x.len(), 8 * count);
            for i in 0..count {
                let rd = |s: &[u8], j: usize| u32::from_ne_bytes(s[j..j + 4].try_into().unwrap());
                let (al, bl, ar, br) = (
                    rd(x, 8 * i),
                    rd(x, 8 * i + 4),
                    rd(y, 8 * i),
                    rd(y, 8 * i + 4),
                );
                y[8 * i..8 * i + 4].copy_from_slice(&ar.wrapping_mul(al).to_ne_bytes());
                y[8 * i + 4..8 * i + 8]
                    .copy_from_slice(&ar.wrapping_mul(bl).wrapping_add(br).to_ne_bytes());
            }
        })
    }

    fn input(r: u32, elems: usize) -> Vec<u8> {
        (0..8 * elems)
            .map(|i| (r as usize * 131 + i * 7 + 3) as u8 | 1)
            .collect()
    }

    fn model(n: u32, elems: usize) -> Vec<u8> {
        let ins: Vec<Vec<u8>> = (0..n).map(|r| input(r, elems)).collect();
        let refs: Vec<&[u8]> = ins.iter().map(|v| &v[..]).collect();
        reduce_sequential(Dt::User, 8, &affine(), &refs)
    }

    #[test]
    fn reductions_follow_rank_order_in_any_delivery_order() {
        for n in 1..=11u32 {
            let members: Arc<[Rank]> = (0..n).collect();
            for elems in [1usize, 5] {
                let want = model(n, elems);
                for seed in 0..3u64 {
                    // Reduce-to-one, every root.
                    for root in 0..n {
                        let stagings: Vec<Option<Arc<Staging>>> = (0..n)
                            .map(|r| (r == root).then(|| Staging::new(8 * elems)))
                            .collect();
                        let logics: Vec<Box<dyn Logic>> = (0..n)
                            .map(|r| {
                                Box::new(Reduce::new(
                                    Dt::User,
                                    8,
                                    affine(),
                                    members.clone(),
                                    r,
                                    ReduceKind::ToOne { root },
                                    input(r, elems),
                                    stagings[r as usize].clone(),
                                )) as Box<dyn Logic>
                            })
                            .collect();
                        let fin = run(logics, Vec::new(), seed * 77 + u64::from(root), 3);
                        assert!(fin.iter().all(|&f| f), "n {n} root {root}: {fin:?}");
                        assert_eq!(
                            read(stagings[root as usize].as_ref().unwrap()),
                            want,
                            "n {n} root {root}"
                        );
                    }
                    // Reduce-to-all, over the tree and by recursive doubling.
                    for rd in [false, true] {
                        let stagings: Vec<Arc<Staging>> =
                            (0..n).map(|_| Staging::new(8 * elems)).collect();
                        let logics: Vec<Box<dyn Logic>> = (0..n)
                            .map(|r| {
                                let st = stagings[r as usize].clone();
                                if rd {
                                    Box::new(AllReduceRd::new(
                                        Dt::User,
                                        8,
                                        affine(),
                                        members.clone(),
                                        r,
                                        input(r, elems),
                                        st,
                                    )) as Box<dyn Logic>
                                } else {
                                    Box::new(Reduce::new(
                                        Dt::User,
                                        8,
                                        affine(),
                                        members.clone(),
                                        r,
                                        ReduceKind::ToAll,
                                        input(r, elems),
                                        Some(st),
                                    ))
                                }
                            })
                            .collect();
                        let fin = run(logics, Vec::new(), seed, 5);
                        assert!(fin.iter().all(|&f| f), "n {n} rd {rd}: {fin:?}");
                        for (r, st) in stagings.iter().enumerate() {
                            assert_eq!(read(st), want, "n {n} rank {r} rd {rd}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn dissemination_hears_from_everyone() {
        for n in 1..=33u32 {
            let members: Arc<[Rank]> = (0..n).collect();
            let results: Vec<Arc<AtomicU64>> = (0..n).map(|_| Arc::default()).collect();
            let logics: Vec<Box<dyn Logic>> = (0..n)
                .map(|r| {
                    Box::new(Dissem::new(
                        members.clone(),
                        r,
                        1 << (r % 64),
                        |a, b| a | b,
                        results[r as usize].clone(),
                    )) as Box<dyn Logic>
                })
                .collect();
            let fin = run(logics, Vec::new(), u64::from(n), 3);
            assert!(fin.iter().all(|&f| f), "n {n}");
            let all = (0..n).fold(0u64, |a, r| a | 1 << (r % 64));
            for r in results {
                assert_eq!(r.load(Ordering::Relaxed), all, "n {n}");
            }
        }
    }

    #[test]
    fn broadcast_pipelines_down_the_tree() {
        use crate::tree::{from_virtual, to_virtual};
        for n in 2..=13u32 {
            for root in [0, n / 2, n - 1] {
                let members: Arc<[Rank]> = (0..n).collect();
                let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + root) as u8).collect();
                let children = |r: u32| -> Vec<Rank> {
                    binomial_children(to_virtual(r, root, n), n)
                        .iter()
                        .rev()
                        .map(|&c| members[from_virtual(c, root, n) as usize])
                        .collect()
                };
                let stagings: Vec<Arc<Staging>> =
                    (0..n).map(|_| Staging::new(data.len())).collect();
                // The root is not an operation: its sends are the initial messages.
                struct Idle;
                impl Logic for Idle {
                    fn start(&mut self, cx: &mut Cx<'_>) {
                        cx.finish();
                    }
                    fn chunk(
                        &mut self,
                        _: &mut Cx<'_>,
                        _: Rank,
                        _: u32,
                        _: usize,
                        _: usize,
                        _: &[u8],
                    ) {
                        panic!("the root receives nothing");
                    }
                }
                let logics: Vec<Box<dyn Logic>> = (0..n)
                    .map(|r| {
                        if r == root {
                            Box::new(Idle) as Box<dyn Logic>
                        } else {
                            Box::new(BcastRecv {
                                children: children(r),
                                staging: stagings[r as usize].clone(),
                                tag: 0,
                                got: 0,
                            })
                        }
                    })
                    .collect();
                let initial = children(root)
                    .into_iter()
                    .flat_map(|c| {
                        data.chunks(64).enumerate().map(move |(i, p)| Msg {
                            src: root,
                            dest: c,
                            tag: 0,
                            offset: 64 * i,
                            total: 1000,
                            data: p.to_vec(),
                        })
                    })
                    .collect();
                let fin = run(logics, initial, u64::from(n * 31 + root), 64);
                assert!(fin.iter().all(|&f| f));
                for r in (0..n).filter(|&r| r != root) {
                    assert_eq!(
                        read(&stagings[r as usize]),
                        data,
                        "n {n} root {root} rank {r}"
                    );
                }
            }
        }
    }
}
