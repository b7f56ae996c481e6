//! Address modes and in-segment data movement (collectives design notes,
//! "Data segment" and "Single-valued arguments").
//!
//! # Address modes
//!
//! [`Addrs::Local`] (the notes' `*_LOCAL`) is what the plain calls
//! (`broadcast_nb`, ...) have always done: each member passes its own
//! buffers. [`Addrs::Single`] (`*_SINGLE`) adds every member's addresses,
//! as owner addresses (the address in the owning process, as gex-rma
//! names remote memory), indexed by team rank: the lists must be the same
//! on every member and name this member's own buffers where they name it
//! (checked locally: a list whose entry for this member is not the slice
//! it passes is `BadArg`). They are hashed into the call's signature, so
//! members passing different lists end the job with the collectives'
//! mismatch message once they exchange a message (every call does, except
//! a call that moves nothing).
//!
//! # Segment hints
//!
//! `Flags::COLL_DST_IN_SEGMENT` and `Flags::COLL_SRC_IN_SEGMENT` assert
//! that every destination (source) buffer of the call lies in its owner's
//! bound segment. With either, the data moves one-sided instead of
//! through the library's staging buffers:
//!
//! - with `DST_IN_SEGMENT`, each block's source member puts it straight
//!   into its destination (gex-rma: a copy through the mapping where the
//!   peer's segment is mapped, the conduit's one-sided route or Active
//!   Messages otherwise), then sends the destination one empty message
//!   (`DONE`); a destination's handle completes once every block for it
//!   is done;
//! - with `SRC_IN_SEGMENT` alone, each destination gets its blocks
//!   straight from the sources' segments and tells each source `DONE`;
//!   a source's handle completes once every reader is done with it.
//!
//! The member that moves data (the put's source, the get's destination)
//! does it in the initiation call, so nothing of the caller's buffers is
//! kept past it. Before anything moves, every hinted address of every
//! member is checked against that member's bound segment, on every member
//! from the same lists: a false hint is an error on every member, naming
//! the member, the buffer and its range, and nothing has moved.
//!
//! Where the addresses come from: `Single` lists them; with `Local`, the
//! members first exchange theirs (an all-gather of 16 bytes per member,
//! during which each member waits for every other to enter).
//!
//! Sync modes: `IN_NOSYNC` moves at once (with `Single`: nobody waits;
//! with `Local` the address exchange has made everyone enter anyway);
//! `IN_MYSYNC` with `Single`: each passive member (the put's destination,
//! the get's source) sends its active partners one empty `READY` message
//! at entry and a block moves once its active member has it; `IN_ALLSYNC`:
//! a barrier first. `OUT_*` as for every data collective (`crate::sync`).
//!
//! Layer: a mechanism (the highest). Uses the AM mechanism, the team
//! barrier (`IN_ALLSYNC`), the argument checks, the handles, the registry
//! and the base modules; a call without hints goes back to the planner
//! through the closure it is given, not by name.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use gex_core::{context, Lc, Tm, TmRef};
use gex_rma::Rma;
use gex_types::{Error, Flags, Rank, Result};

use crate::am::allgather_v;
use crate::am::{fin, out_key};
use crate::args::{check_root, check_size};
use crate::barrier::enter_all;
use crate::engine::{hash_id, lock, send_now, signature, with_sig_extra, Cx, Logic, Op};
use crate::handle::CollHandle;
use crate::sync::{self, SyncMode};
use crate::team::{team_of, TeamInfo};

/// The two segment hints.
pub(crate) const HINTS: Flags = Flags::COLL_DST_IN_SEGMENT.union(Flags::COLL_SRC_IN_SEGMENT);

/// The design notes' address modes: which members' buffers a call names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Addrs<'a> {
    /// `*_LOCAL`: each member names only its own buffers (the slices it
    /// passes). What the plain calls do.
    #[default]
    Local,
    /// `*_SINGLE`: every member names every member's buffers by owner
    /// address, indexed by team rank. A side that only the root has (the
    /// source of a broadcast or scatter, the destination of a gather) is
    /// a list of one address, the root's; the other sides have one per
    /// member. The lists must be the same on every member.
    Single {
        /// The destination buffers.
        dst: &'a [usize],
        /// The source buffers.
        src: &'a [usize],
    },
}

/// The data collectives the address modes apply to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Broadcast,
    Scatter,
    Gather,
    GatherAll,
    Exchange,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Broadcast => "broadcast",
            Kind::Scatter => "scatter",
            Kind::Gather => "gather",
            Kind::GatherAll => "gather_all",
            Kind::Exchange => "exchange",
        }
    }

    /// Whether only the root has a source (broadcast, scatter) or a
    /// destination (gather).
    fn rooted_src(self) -> bool {
        matches!(self, Kind::Broadcast | Kind::Scatter)
    }
    fn rooted_dst(self) -> bool {
        self == Kind::Gather
    }

    /// The length of member `r`'s destination (`None`: it has none).
    fn dst_len(self, r: Rank, root: Rank, n: usize, nb: usize) -> Option<usize> {
        match self {
            Kind::Broadcast | Kind::Scatter => Some(nb),
            Kind::Gather => (r == root).then_some(nb * n),
            Kind::GatherAll | Kind::Exchange => Some(nb * n),
        }
    }

    /// The length of member `r`'s source.
    fn src_len(self, r: Rank, root: Rank, n: usize, nb: usize) -> Option<usize> {
        match self {
            Kind::Broadcast => (r == root).then_some(nb),
            Kind::Scatter => (r == root).then_some(nb * n),
            Kind::Gather | Kind::GatherAll => Some(nb),
            Kind::Exchange => Some(nb * n),
        }
    }

    /// Every block the call moves: (source member, offset in its source,
    /// destination member, offset in its destination); each `nb` bytes.
    fn blocks(self, root: Rank, n: u32, nb: usize) -> Vec<(Rank, usize, Rank, usize)> {
        let all = 0..n;
        match self {
            Kind::Broadcast => all.map(|r| (root, 0, r, 0)).collect(),
            Kind::Scatter => all.map(|r| (root, r as usize * nb, r, 0)).collect(),
            Kind::Gather => all.map(|r| (r, 0, root, r as usize * nb)).collect(),
            Kind::GatherAll => all
                .flat_map(|r| (0..n).map(move |q| (r, 0, q, r as usize * nb)))
                .collect(),
            Kind::Exchange => all
                .flat_map(|r| (0..n).map(move |q| (r, q as usize * nb, q, r as usize * nb)))
                .collect(),
        }
    }
}

/// This member's buffers for one call.
pub(crate) struct Bufs<'a, 'b> {
    pub(crate) dst: Option<&'b mut [u8]>,
    pub(crate) src: Option<&'a [u8]>,
    /// The root of an in-place broadcast: its source is `dst`.
    pub(crate) src_is_dst: bool,
}

impl Bufs<'_, '_> {
    /// The source, which may be the destination itself.
    fn source(&self) -> Option<&[u8]> {
        if self.src_is_dst {
            self.dst.as_deref()
        } else {
            self.src
        }
    }
}

/// The owner address of a slice (a local buffer's address in its owner,
/// this process).
fn addr_of(s: &[u8]) -> usize {
    s.as_ptr() as usize
}

/// Checks a `Single` list's shape and its entries for this member;
/// returns the lists as one word for the signature.
#[allow(clippy::too_many_arguments)]
fn check_single(
    call: &str,
    kind: Kind,
    t: &TeamInfo,
    root: Rank,
    nb: usize,
    dst: &[usize],
    src: &[usize],
    mine: &Bufs<'_, '_>,
) -> Result<u64> {
    let n = t.size() as usize;
    let (want_dst, want_src) = (
        if kind.rooted_dst() { 1 } else { n },
        if kind.rooted_src() { 1 } else { n },
    );
    if dst.len() != want_dst || src.len() != want_src {
        return Err(Error::bad_arg(format!(
            "{call}: Addrs::Single needs {want_dst} dst and {want_src} src addresses \
             (one per member, or the root's alone); got {} and {}",
            dst.len(),
            src.len()
        )));
    }
    let me = t.me;
    let idx = |rooted: bool| if rooted { 0 } else { me as usize };
    if nb > 0 {
        let check = |what: &str, listed: usize, slice: &[u8]| -> Result<()> {
            if listed == addr_of(slice) {
                Ok(())
            } else {
                Err(Error::bad_arg(format!(
                    "{call}: Addrs::Single names {listed:#x} as this member's (rank {me}) {what}, \
                     but it passes {:#x}",
                    addr_of(slice)
                )))
            }
        };
        if let Some(d) = mine.dst.as_deref() {
            if !kind.rooted_dst() || me == root {
                check("dst", dst[idx(kind.rooted_dst())], d)?;
            }
        }
        if let Some(s) = mine.source() {
            if !kind.rooted_src() || me == root {
                check("src", src[idx(kind.rooted_src())], s)?;
            }
        }
    }
    let words: Vec<u64> = dst.iter().chain(src).map(|&a| a as u64).collect();
    Ok(hash_id(&words) | 1)
}

/// The entry point of every data collective given an address mode or a
/// segment hint (the plain calls send hinted calls here): checks, then
/// the existing staged algorithm (`stage`, run with the address lists in
/// its signature) or the one-sided one.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run<'a>(
    call: &'static str,
    kind: Kind,
    tm: &Tm,
    root: Rank,
    nb: usize,
    bufs: Bufs<'a, 'a>,
    addrs: Addrs<'_>,
    flags: Flags,
    stage: impl FnOnce(Bufs<'a, 'a>, Flags) -> Result<CollHandle<'a>>,
) -> Result<CollHandle<'a>> {
    context::check_may_communicate(call)?;
    let hints = flags & HINTS;
    let t = team_of(tm, call)?;
    let mode = sync::parse(call, flags - HINTS)?;
    if kind != Kind::GatherAll && kind != Kind::Exchange {
        check_root(call, root, &t)?;
    }
    check_size(call, nb.saturating_mul(t.size() as usize))?;
    let extra = match addrs {
        Addrs::Local => 0,
        Addrs::Single { dst, src } => check_single(call, kind, &t, root, nb, dst, src, &bufs)?,
    };
    if hints.is_empty() {
        return with_sig_extra(extra, || stage(bufs, flags));
    }
    with_sig_extra(extra, || {
        one_sided(call, kind, tm, &t, root, nb, bufs, addrs, hints, mode)
    })
}

/// Message tags of the one-sided algorithm.
pub(crate) const READY: u32 = 0;
pub(crate) const DONE: u32 = 1;

/// `[addr, addr + len)` must lie in `rank`'s bound segment.
pub(crate) fn in_segment(
    tm: &Tm,
    rank: Rank,
    addr: usize,
    len: usize,
) -> std::result::Result<(), String> {
    if len == 0 {
        return Ok(());
    }
    let seg = tm
        .query_bound_segment(rank, Flags::IMMEDIATE)
        .map_err(|e| e.to_string())?;
    let Some(seg) = seg else {
        return Err("it has no bound segment".into());
    };
    let inside = addr >= seg.owner_addr
        && addr
            .checked_add(len)
            .is_some_and(|end| end <= seg.owner_addr + seg.size);
    if inside {
        Ok(())
    } else {
        Err(format!(
            "its bound segment is [{:#x}, +{})",
            seg.owner_addr, seg.size
        ))
    }
}

/// The one-sided algorithm (see the module documentation).
#[allow(clippy::too_many_arguments)]
fn one_sided<'a>(
    call: &'static str,
    kind: Kind,
    tm: &Tm,
    t: &Arc<TeamInfo>,
    root: Rank,
    nb: usize,
    bufs: Bufs<'a, 'a>,
    addrs: Addrs<'_>,
    hints: Flags,
    mode: SyncMode,
) -> Result<CollHandle<'a>> {
    let (me, n) = (t.me, t.size());
    let nn = n as usize;
    let trivial = |mode: SyncMode| {
        if mode.in_all {
            enter_all(t, None, call);
        }
        let _ = t.next_key();
        fin(CollHandle::INVALID, out_key(t, mode))
    };
    if nb == 0 {
        return Ok(trivial(mode));
    }
    // Every member's addresses, by team rank (0: none).
    let own = (
        bufs.dst.as_deref().map_or(0, addr_of),
        bufs.source().map_or(0, addr_of),
    );
    let (dsts, srcs): (Vec<usize>, Vec<usize>) = match addrs {
        Addrs::Single { dst: d, src: s } => {
            let spread = |list: &[usize], rooted: bool| -> Vec<usize> {
                if rooted {
                    (0..n)
                        .map(|r| if r == root { list[0] } else { 0 })
                        .collect()
                } else {
                    list.to_vec()
                }
            };
            (spread(d, kind.rooted_dst()), spread(s, kind.rooted_src()))
        }
        Addrs::Local if n == 1 => (vec![own.0], vec![own.1]),
        Addrs::Local => {
            let mut mine = Vec::with_capacity(16);
            mine.extend_from_slice(&(own.0 as u64).to_le_bytes());
            mine.extend_from_slice(&(own.1 as u64).to_le_bytes());
            let (all, _) = allgather_v(t, "coll_addrs", mine);
            let word = |b: &[u8], i: usize| -> usize {
                match b.get(i * 8..i * 8 + 8) {
                    Some(w) => u64::from_le_bytes(w.try_into().expect("8 bytes")) as usize,
                    None => gex_core::fatal(&format!(
                        "gex-coll: {call}: a member sent an address record of {} bytes, 16 expected",
                        b.len()
                    )),
                }
            };
            all.iter().map(|b| (word(b, 0), word(b, 1))).unzip()
        }
    };
    // Every hinted buffer of every member, checked before anything moves
    // (the same lists, so the same verdict, on every member).
    for r in 0..n {
        let sides = [
            (
                Flags::COLL_DST_IN_SEGMENT,
                "COLL_DST_IN_SEGMENT",
                "dst",
                dsts[r as usize],
                kind.dst_len(r, root, nn, nb),
            ),
            (
                Flags::COLL_SRC_IN_SEGMENT,
                "COLL_SRC_IN_SEGMENT",
                "src",
                srcs[r as usize],
                kind.src_len(r, root, nn, nb),
            ),
        ];
        for (flag, fname, what, addr, len) in sides {
            let Some(len) = len.filter(|_| hints.contains(flag)) else {
                continue;
            };
            if let Err(why) = in_segment(tm, r, addr, len) {
                return Err(Error::bad_arg(format!(
                    "{call}: {fname} is false: rank {r}'s {what} [{addr:#x}, +{len}) is not \
                     inside its bound segment ({why}); nothing was moved"
                )));
            }
        }
    }
    let Bufs {
        mut dst,
        src,
        src_is_dst,
    } = bufs;
    // The local block.
    if !src_is_dst {
        if let (Some(d), Some(s)) = (dst.as_deref_mut(), src) {
            for (sr, so, dr, dof) in kind.blocks(root, n, nb) {
                if sr == me && dr == me {
                    d[dof..dof + nb].copy_from_slice(&s[so..so + nb]);
                }
            }
        }
    }
    if n == 1 {
        return Ok(trivial(mode));
    }
    let put = hints.contains(Flags::COLL_DST_IN_SEGMENT);
    if mode.in_all {
        enter_all(t, None, call);
    }
    let key = t.next_key();
    let out = out_key(t, mode);
    let in_no = mode.word / 3 == 0;
    // READY messages are needed only where nothing else made the
    // destinations enter: Single, IN_MYSYNC.
    let ready_needed = matches!(addrs, Addrs::Single { .. }) && !in_no && !mode.in_all;
    let sig = signature(
        kind.name(),
        &[
            u64::from(u32::MAX),
            u64::from(root),
            nb as u64,
            mode.word,
            hints.bits(),
        ],
    );
    let blocks: Vec<_> = kind
        .blocks(root, n, nb)
        .into_iter()
        .filter(|&(s, _, d, _)| s != d)
        .collect();
    // Active: the member that moves the block; passive: its partner.
    let active = |&(s, _, d, _): &(Rank, usize, Rank, usize)| if put { s } else { d };
    let passive = |&(s, _, d, _): &(Rank, usize, Rank, usize)| if put { d } else { s };
    let mine_active: Vec<_> = blocks.iter().filter(|b| active(b) == me).copied().collect();
    let mine_passive: Vec<Rank> = blocks
        .iter()
        .filter(|b| passive(b) == me)
        .map(active)
        .collect();
    let state = Arc::new(Mutex::new(Partners::default()));
    let rank_of = rank_map(t);
    let ready_from: Vec<Rank> = if ready_needed {
        mine_active.iter().map(passive).collect()
    } else {
        Vec::new()
    };
    let logic = PairLogic {
        call,
        rank_of,
        ready_from: counts(&ready_from),
        done_from: counts(&mine_passive),
        done_any: None,
        state: state.clone(),
    };
    let op = Op::start(key, sig, call, Box::new(logic));
    if ready_needed {
        for &a in &mine_passive {
            send_now(key, sig, t.members[a as usize], READY, &[]);
        }
    }
    let rt = gex_core::Runtime::get().expect("collectives run after client init");
    // The blocks this member moves, starting after itself so that members
    // do not all hit one peer first. Puts are all started, then synced
    // (their round trips overlap on a conduit's one-sided route), each
    // block's DONE sent once its put is complete; gets write the borrowed
    // destination, so each completes before the next starts.
    let mut order = mine_active;
    order.sort_by_key(|b| (passive(b) + n - me) % n);
    let broken = |e: Error| -> ! {
        // Every range was checked above: this is a broken runtime.
        gex_core::fatal(&format!("gex-coll: {call}: one-sided transfer failed: {e}"))
    };
    let mut started = Vec::new();
    for b in order {
        let (sr, so, dr, dof) = b;
        let peer = passive(&b);
        if ready_needed {
            rt.spin_until(|| lock(&state).is_ready(peer));
        }
        if put {
            let s = if src_is_dst { dst.as_deref() } else { src };
            let s = s.expect("a put's source member has a src");
            let ev = tm
                .put_nb(
                    dr,
                    dsts[dr as usize] + dof,
                    &s[so..so + nb],
                    Lc::Now,
                    Flags::empty(),
                )
                .unwrap_or_else(|e| broken(e));
            started.push((peer, ev));
        } else {
            let d = dst.as_deref_mut().expect("a get's destination has a dst");
            tm.get_blocking(
                &mut d[dof..dof + nb],
                sr,
                srcs[sr as usize] + so,
                Flags::empty(),
            )
            .unwrap_or_else(|e| broken(e));
            send_now(key, sig, t.members[peer as usize], DONE, &[]);
        }
    }
    for (peer, ev) in started {
        ev.wait().unwrap_or_else(|e| broken(e));
        send_now(key, sig, t.members[peer as usize], DONE, &[]);
    }
    let h = if op.is_complete() {
        CollHandle::INVALID
    } else {
        CollHandle::pending(op.c.clone())
    };
    Ok(fin(h, out))
}

/// Jobrank -> team rank of `t`'s members.
pub(crate) fn rank_map(t: &TeamInfo) -> Arc<HashMap<Rank, Rank>> {
    Arc::new(
        t.members
            .iter()
            .enumerate()
            .map(|(i, &j)| (j, i as Rank))
            .collect(),
    )
}

/// What the partners of a one-sided call have said so far.
#[derive(Default)]
pub(crate) struct Partners {
    /// Team ranks that sent `READY`, with how many times.
    pub(crate) ready: HashMap<Rank, usize>,
    /// Team ranks that sent `DONE`, with how many times.
    pub(crate) done: HashMap<Rank, usize>,
    /// `DONE` messages that reported a failure (all_put / all_get).
    pub(crate) failed: Vec<Rank>,
}

impl Partners {
    pub(crate) fn is_ready(&self, r: Rank) -> bool {
        self.ready.get(&r).is_some_and(|&k| k > 0)
    }
}

/// How many times each rank appears in `list`.
pub(crate) fn counts(list: &[Rank]) -> HashMap<Rank, usize> {
    let mut m = HashMap::new();
    for &r in list {
        *m.entry(r).or_insert(0) += 1;
    }
    m
}

/// The messages of a one-sided call: `READY` from each passive partner
/// (when needed), `DONE` for each block (or each partner, for all_put /
/// all_get) moved into or out of this member's buffers; a `DONE` whose
/// tag is [`DONE_FAILED`] says the partner failed its part. Any other
/// message from a peer (another tag, a payload, a rank not expected, once
/// too many) is a broken protocol and ends the job.
pub(crate) struct PairLogic {
    pub(crate) call: &'static str,
    pub(crate) rank_of: Arc<HashMap<Rank, Rank>>,
    /// Team rank -> how many `READY` this member waits for from it.
    pub(crate) ready_from: HashMap<Rank, usize>,
    /// Team rank -> how many `DONE` this member waits for from it; with
    /// `done_any`, any ranks up to that many in all (a partner count).
    pub(crate) done_from: HashMap<Rank, usize>,
    pub(crate) done_any: Option<usize>,
    pub(crate) state: Arc<Mutex<Partners>>,
}

/// A `DONE` that reports a failed part (all_put / all_get).
pub(crate) const DONE_FAILED: u32 = 2;

impl PairLogic {
    fn check_done(&self, cx: &mut Cx<'_>) {
        let st = lock(&self.state);
        let ready: usize = st.ready.values().sum();
        let done: usize = st.done.values().sum();
        let want_ready: usize = self.ready_from.values().sum();
        let want_done: usize = self
            .done_any
            .unwrap_or_else(|| self.done_from.values().sum());
        if ready == want_ready && done == want_done {
            cx.finish();
        }
    }
}

impl Logic for PairLogic {
    fn start(&mut self, cx: &mut Cx<'_>) {
        self.check_done(cx);
    }

    fn chunk(
        &mut self,
        cx: &mut Cx<'_>,
        src: Rank,
        tag: u32,
        _offset: usize,
        total: usize,
        _data: &[u8],
    ) {
        let Some(&r) = self.rank_of.get(&src) else {
            gex_core::fatal(&format!(
                "gex-coll: {}: message from jobrank {src}, not a member",
                self.call
            ));
        };
        {
            let mut st = lock(&self.state);
            let st = &mut *st;
            let (got, expected) = match tag {
                READY => (
                    st.ready.entry(r).or_insert(0),
                    self.ready_from.get(&r).copied().unwrap_or(0),
                ),
                DONE | DONE_FAILED => {
                    if tag == DONE_FAILED {
                        st.failed.push(r);
                    }
                    let any = self
                        .done_any
                        .map(|k| k.saturating_sub(st.done.values().sum::<usize>()).min(1));
                    let e = st.done.entry(r).or_insert(0);
                    let expected = match any {
                        // A partner count: each rank once, up to the count.
                        Some(left) if *e == 0 => left,
                        Some(_) => 0,
                        None => self.done_from.get(&r).copied().unwrap_or(0),
                    };
                    (e, expected)
                }
                _ => gex_core::fatal(&format!(
                    "gex-coll: {}: message with tag {tag} from rank {r}",
                    self.call
                )),
            };
            if total != 0 || *got >= expected {
                gex_core::fatal(&format!(
                    "gex-coll: {}: unexpected message {tag} ({total} bytes) from rank {r}",
                    self.call
                ));
            }
            *got += 1;
        }
        self.check_done(cx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Cx, Inbox};

    /// Jobranks 10, 11, 12 are team ranks 0, 1, 2.
    fn ranks() -> Arc<HashMap<Rank, Rank>> {
        Arc::new([(10, 0), (11, 1), (12, 2)].into_iter().collect())
    }

    #[test]
    fn pair_logic_finishes_with_its_messages() {
        let state = Arc::new(Mutex::new(Partners::default()));
        let mut l = PairLogic {
            call: "t",
            rank_of: ranks(),
            ready_from: counts(&[1]),
            done_from: counts(&[1, 2]),
            done_any: None,
            state: state.clone(),
        };
        let mut inbox = Inbox::default();
        let mut step = |l: &mut PairLogic, src: Rank, tag: u32| {
            let mut cx = Cx::new(&mut inbox);
            l.chunk(&mut cx, src, tag, 0, 0, &[]);
            cx.finished
        };
        assert!(!step(&mut l, 12, DONE));
        assert!(!step(&mut l, 11, READY));
        assert!(lock(&state).is_ready(1) && !lock(&state).is_ready(2));
        assert!(step(&mut l, 11, DONE));
        // A partner count: any two distinct ranks, failures recorded.
        let state = Arc::new(Mutex::new(Partners::default()));
        let mut l = PairLogic {
            call: "t",
            rank_of: ranks(),
            ready_from: HashMap::new(),
            done_from: HashMap::new(),
            done_any: Some(2),
            state: state.clone(),
        };
        let mut inbox = Inbox::default();
        let mut cx = Cx::new(&mut inbox);
        l.start(&mut cx);
        assert!(!cx.finished);
        l.chunk(&mut cx, 10, DONE_FAILED, 0, 0, &[]);
        assert!(!cx.finished);
        l.chunk(&mut cx, 12, DONE, 0, 0, &[]);
        assert!(cx.finished);
        assert_eq!(lock(&state).failed, vec![0]);
        // Nothing expected: done at start.
        let mut l = PairLogic {
            call: "t",
            rank_of: ranks(),
            ready_from: HashMap::new(),
            done_from: HashMap::new(),
            done_any: None,
            state: Arc::new(Mutex::new(Partners::default())),
        };
        let mut inbox = Inbox::default();
        let mut cx = Cx::new(&mut inbox);
        l.start(&mut cx);
        assert!(cx.finished);
    }

    #[test]
    fn blocks_cover_every_pair_once() {
        let (n, nb) = (3u32, 4usize);
        let b = Kind::Exchange.blocks(0, n, nb);
        assert_eq!(b.len(), 9);
        assert!(b.contains(&(2, 4, 1, 8)));
        let g = Kind::Gather.blocks(1, n, nb);
        assert_eq!(g, vec![(0, 0, 1, 0), (1, 0, 1, 4), (2, 0, 1, 8)]);
        let s = Kind::Scatter.blocks(2, n, nb);
        assert_eq!(s, vec![(2, 0, 0, 0), (2, 4, 1, 0), (2, 8, 2, 0)]);
        assert_eq!(Kind::GatherAll.blocks(0, n, nb).len(), 9);
        assert_eq!(Kind::Gather.dst_len(0, 1, 3, 4), None);
        assert_eq!(Kind::Scatter.src_len(2, 2, 3, 4), Some(12));
    }
}
