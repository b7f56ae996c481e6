//! Hierarchical scatter, gather, gather-all and exchange over teams whose
//! members span several neighbourhoods: inside each neighbourhood over
//! the *local* team (its shared-memory paths), between neighbourhoods
//! over Active Messages among one representative of each, then inside
//! again. The grouping, the local teams and the per-operation team of
//! representatives are `crate::hier`'s (see its documentation);
//! on by default with the
//! rest of the hierarchy (`GEX_COLL_HIER=0` turns it off).
//!
//! # Blocks between representatives
//!
//! Groups are not contiguous in team-rank order and differ in size. No
//! block is padded: a message between representatives carries exactly
//! the blocks of the members concerned, in group order (members of a
//! group in team-rank order), and the receiver places each block where
//! the team-rank order puts it ([`Place`], which checks the sender, the
//! tag and the length of every message against the layout before a byte
//! is written). Each member of group `g` is `groups[g][i]` (team rank)
//! at local rank `i`.
//!
//! - Gather to `root`: each group gathers its members' blocks to its
//!   representative over the local team (the root's group to the root);
//!   each other representative sends its group's blocks (one message) to
//!   the root, which places block `i` of group `g`'s message at team rank
//!   `groups[g][i]`.
//! - Scatter from `root`: the root sends each other representative one
//!   message with its group's blocks in group order, and scatters its
//!   own group's; each representative scatters what it received in its
//!   group.
//! - Gather-all: each group gathers to its lowest member; those send
//!   their group's blocks to each other (all-to-all among
//!   representatives), place them in team-rank order, and broadcast the
//!   whole result in their groups.
//! - Exchange: each group gathers its members' whole send buffers
//!   (`n` blocks each) to its lowest member; representative `g` sends
//!   representative `h` the blocks from `g`'s members to `h`'s members
//!   (`|g| * |h|` blocks, [`exchange_pairs`]); each representative
//!   assembles its members' whole receive buffers and scatters them in
//!   its group. An exchange whose largest group times its `src` would
//!   exceed the 4 GiB a message may carry stays flat.
//!
//! # Staged
//!
//! All four are staged as `crate::hier`'s broadcast and reductions are
//! (see "Staged operations" there): nobody waits in the initiation call.
//! Initiation reserves the local team's numbers (a gather-all's gather
//! and broadcast, an exchange's gather and scatter: two), copies the
//! input, registers what this member receives from the other
//! representatives where that needs nothing first (a gather's root, a
//! scatter's other representatives; the root of a scatter sends its
//! messages at once), and the rest runs as steps: a representative's
//! message (gather) or its exchange with the others (gather-all,
//! exchange: sends and receives in one operation) once its group's
//! gather is complete, its group's scatter or broadcast once what it
//! serves has arrived. Every message between representatives is still
//! checked by [`Place`] before a byte is written.
//!
//! The sync modes apply to the whole operation (`IN_ALLSYNC` before it,
//! `OUT_ALLSYNC`'s barrier over the whole team after it); the stages run
//! in MYSYNC mode. The segment-hint (`crate::onesided`) and multi-address
//! (`crate::multi`) forms stay flat.
//!
//! Part of the hierarchy mechanism (`crate::hier`); uses its stages, the
//! AM mechanism, the engine, the handles, the modes and the registry.

use std::sync::Arc;

use gex_core::Staging;
use gex_types::{Rank, Result};

use crate::am::algos::write_staging;
use crate::am::{fin, out_key};
use crate::engine::{send_now, signature, Cx, Key, Logic, Op, Out, WithSends};
use crate::handle::CollHandle;
use crate::hier::{
    group_result, launch, member_in_out, staged, start_then_wait, wait_for, LStage, Step,
};
use crate::sync::SyncMode;
use crate::team::{Hier, TeamInfo};

/// The blocks of `buf` (of `nb` bytes each) at `idx`, concatenated.
fn pack(buf: &[u8], nb: usize, idx: impl IntoIterator<Item = usize>) -> Vec<u8> {
    idx.into_iter()
        .flat_map(|b| &buf[b * nb..(b + 1) * nb])
        .copied()
        .collect()
}

/// The blocks an exchange moves from group `from` to group `to` (team
/// ranks in group order) in a team of `n`: for each member `i` of `from`
/// (outer) and `j` of `to` (inner), the block's index in `from`'s
/// representative's gathered send buffers (member `i`'s buffer, block
/// `to[j]`) and in `to`'s representative's assembled receive buffers
/// (member `j`'s buffer, block `from[i]`).
pub(crate) fn exchange_pairs(from: &[u32], to: &[u32], n: usize) -> Vec<(usize, usize)> {
    from.iter()
        .enumerate()
        .flat_map(|(i, &fi)| {
            to.iter()
                .enumerate()
                .map(move |(j, &tj)| (i * n + tj as usize, j * n + fi as usize))
        })
        .collect()
}

/// One expected message between representatives.
struct From {
    /// The sender's jobrank.
    who: Rank,
    /// Where each block of the message goes (block index in the result).
    blocks: Vec<usize>,
    /// Bytes received of it.
    got: usize,
}

/// A between-representatives stage's receiving side: message `tag` (the
/// sender's rank among the representatives) carries blocks of `nb`
/// bytes, each placed at its own index of a result buffer of whole
/// blocks. Sender, length and range are checked before anything is
/// written; a message that does not fit the layout ends the job.
pub(crate) struct Place {
    staging: Arc<Staging>,
    nb: usize,
    from: Vec<Option<From>>,
    got: usize,
    expect: usize,
}

impl Place {
    /// Expects from each `Some((jobrank, blocks))` of `from` (by tag) one
    /// message of `blocks.len()` blocks, into `staging`.
    fn new(staging: Arc<Staging>, nb: usize, from: Vec<Option<(Rank, Vec<usize>)>>) -> Place {
        let from: Vec<Option<From>> = from
            .into_iter()
            .map(|f| {
                f.map(|(who, blocks)| From {
                    who,
                    blocks,
                    got: 0,
                })
            })
            .collect();
        let expect = from.iter().flatten().map(|f| f.blocks.len() * nb).sum();
        for b in from.iter().flatten().flat_map(|f| &f.blocks) {
            assert!((b + 1) * nb <= staging.len(), "a block outside the result");
        }
        Place {
            staging,
            nb,
            from,
            got: 0,
            expect,
        }
    }
}

impl Place {
    /// The expected message a chunk belongs to, once its sender, tag,
    /// length and range are checked against the layout (before anything
    /// is written).
    fn accept(
        &mut self,
        src: Rank,
        tag: u32,
        offset: usize,
        total: usize,
        len: usize,
    ) -> std::result::Result<usize, String> {
        let nb = self.nb;
        let Some(Some(f)) = self.from.get_mut(tag as usize) else {
            return Err(format!(
                "unexpected message {tag} from rank {src} between neighbourhoods"
            ));
        };
        if src != f.who || total != f.blocks.len() * nb {
            return Err(format!(
                "message {tag} between neighbourhoods from rank {src} of {total} bytes; \
                 rank {} and {} bytes expected",
                f.who,
                f.blocks.len() * nb
            ));
        }
        if !gex_conduit::fits(offset, len, total) || f.got + len > total {
            return Err(format!(
                "message {tag} between neighbourhoods from rank {src}: chunk [{offset}, \
                 +{len}) of {total} bytes, {} received before",
                f.got
            ));
        }
        Ok(tag as usize)
    }
}

impl Logic for Place {
    fn start(&mut self, cx: &mut Cx<'_>) {
        if self.got == self.expect {
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
        let nb = self.nb;
        let f = match self.accept(src, tag, offset, total, data.len()) {
            Ok(i) => self.from[i].as_mut().expect("accepted"),
            Err(e) => gex_core::fatal(&format!("gex-coll: {e}")),
        };
        f.got += data.len();
        let (mut pos, mut rest) = (offset, data);
        while !rest.is_empty() {
            let (b, within) = (pos / nb, pos % nb);
            let take = (nb - within).min(rest.len());
            write_staging(&self.staging, f.blocks[b] * nb + within, &rest[..take]);
            pos += take;
            rest = &rest[take..];
        }
        self.got += data.len();
        if self.got == self.expect {
            cx.finish();
        }
    }
}

/// Whether an exchange of `src_len` bytes per member may be hierarchical:
/// its largest message (the largest group's share) fits the 32-bit
/// lengths messages carry. The same answer on every member.
pub(crate) fn exchange_fits(h: &Hier, src_len: usize) -> bool {
    let most = h.groups.iter().map(|g| g.len()).max().unwrap_or(1);
    most.checked_mul(src_len)
        .is_some_and(|x| x <= u32::MAX as usize)
}

/// Hierarchical gather (arguments checked, `IN_ALLSYNC` done; `dst` on
/// the root only). Staged (`crate::hier`, "Staged operations").
pub(crate) fn gather<'a>(
    t: &Arc<TeamInfo>,
    h: &Hier,
    mode: SyncMode,
    root: Rank,
    dst: Option<&'a mut [u8]>,
    src: &[u8],
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_GatherNB (between neighbourhoods)";
    let key = t.next_key();
    let out = out_key(t, mode);
    let nb = src.len();
    if nb == 0 {
        return Ok(fin(CollHandle::INVALID, out));
    }
    let g_root = h.group[root as usize];
    let my_rep = h.rep(h.mine, Some(root));
    let lroot = h.local_rank[my_rep as usize];
    let mut local = h.local().map(|l| LStage::gather(l, lroot, nb));
    let input: Arc<[u8]> = Arc::from(src);
    let mut steps: Vec<Step> = Vec::new();
    let Some(x) = h.reps(t, key, Some(root)) else {
        let mut l = local.take().expect("a non-representative has a group");
        steps.push(start_then_wait(move || l.start(Some(&input), None)));
        return Ok(fin(launch(steps, None, &mut []), out));
    };
    let sig = signature("hier_gather", &[u64::from(root), nb as u64]);
    let xkey = x.next_key();
    let members: Vec<usize> = h.groups[h.mine as usize]
        .iter()
        .map(|&r| r as usize)
        .collect();
    let group = group_result(&mut steps, local, input, nb * members.len());
    if t.me != root {
        // This group's blocks, in one message, to the root.
        let (to, tag) = (x.members[g_root as usize], h.mine);
        steps.push(Box::new(move || {
            // SAFETY: the group's gather into `group` is complete (the
            // step before): nothing writes it any more.
            send_now(xkey, sig, to, tag, unsafe { staged(&group) });
            true
        }));
        return Ok(fin(launch(steps, None, &mut []), out));
    }
    let d = dst.expect("the root has a dst");
    let staging = Staging::new(d.len());
    let from = (0..h.groups.len())
        .map(|g| {
            (g as u32 != g_root).then(|| {
                let blocks = h.groups[g].iter().map(|&r| r as usize).collect();
                (x.members[g], blocks)
            })
        })
        .collect();
    // The other groups' messages, received from now on.
    let op = Op::start(
        xkey,
        sig,
        CALL,
        Box::new(Place::new(staging.clone(), nb, from)),
    );
    let s = staging.clone();
    steps.push(Box::new(move || {
        // SAFETY: as above.
        let g = unsafe { staged(&group) };
        for (i, &r) in members.iter().enumerate() {
            write_staging(&s, r * nb, &g[i * nb..(i + 1) * nb]);
        }
        true
    }));
    steps.push(wait_for(op.c.clone()));
    Ok(fin(launch(steps, Some(staging), d), out))
}

/// Hierarchical scatter (arguments checked, `IN_ALLSYNC` done; `src` on
/// the root only). Staged.
pub(crate) fn scatter<'a>(
    t: &Arc<TeamInfo>,
    h: &Hier,
    mode: SyncMode,
    root: Rank,
    dst: &'a mut [u8],
    src: Option<&[u8]>,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_ScatterNB (between neighbourhoods)";
    let key = t.next_key();
    let out = out_key(t, mode);
    let nb = dst.len();
    if nb == 0 {
        return Ok(fin(CollHandle::INVALID, out));
    }
    let g_root = h.group[root as usize];
    let my_rep = h.rep(h.mine, Some(root));
    let lroot = h.local_rank[my_rep as usize];
    let mut local = h.local().map(|l| LStage::scatter(l, lroot, nb));
    let mut steps: Vec<Step> = Vec::new();
    let Some(x) = h.reps(t, key, Some(root)) else {
        let mut l = local.take().expect("a non-representative has a group");
        let s = Staging::new(nb);
        let s2 = s.clone();
        steps.push(start_then_wait(move || l.start(None, Some(&s2))));
        return Ok(fin(launch(steps, Some(s), dst), out));
    };
    let sig = signature("hier_scatter", &[u64::from(root), nb as u64]);
    let xkey = x.next_key();
    let group_blocks = |g: usize| h.groups[g].iter().map(|&r| r as usize);
    if t.me == root {
        let s = src.expect("the root has a src");
        let k = h.groups.len() as u32;
        for i in 1..k {
            let g = (g_root + i) % k;
            let msg = pack(s, nb, group_blocks(g as usize));
            send_now(xkey, sig, x.members[g as usize], g_root, &msg);
        }
        let me = t.me as usize;
        dst.copy_from_slice(&s[me * nb..(me + 1) * nb]);
        if let Some(mut l) = local {
            let mine: Arc<[u8]> = pack(s, nb, group_blocks(g_root as usize)).into();
            steps.push(start_then_wait(move || l.start(Some(&mine), None)));
        }
        return Ok(fin(launch(steps, None, &mut []), out));
    }
    // This group's blocks from the root (received from now on), before
    // they go on.
    let len = nb * h.groups[h.mine as usize].len();
    let group = Staging::new(len);
    let mut from: Vec<_> = (0..h.groups.len()).map(|_| None).collect();
    from[g_root as usize] = Some((x.members[g_root as usize], (0..len / nb).collect()));
    let op = Op::start(
        xkey,
        sig,
        CALL,
        Box::new(Place::new(group.clone(), nb, from)),
    );
    steps.push(wait_for(op.c.clone()));
    let Some(mut l) = local else {
        // Alone: the one block is this member's.
        return Ok(fin(launch(steps, Some(group), dst), out));
    };
    let lr = h.local_rank[t.me as usize] as usize;
    let own = Staging::new(nb);
    let (o, g) = (own.clone(), group.clone());
    steps.push(Box::new(move || {
        // SAFETY: the root's message into `g` is complete (the step
        // before): nothing writes it any more.
        write_staging(&o, 0, &unsafe { staged(&g) }[lr * nb..(lr + 1) * nb]);
        true
    }));
    // SAFETY: as above.
    steps.push(start_then_wait(move || {
        l.start(Some(unsafe { staged(&group) }), None)
    }));
    Ok(fin(launch(steps, Some(own), dst), out))
}

/// Hierarchical gather-all (arguments checked, `IN_ALLSYNC` done).
/// Staged.
pub(crate) fn gather_all<'a>(
    t: &Arc<TeamInfo>,
    h: &Hier,
    mode: SyncMode,
    dst: &'a mut [u8],
    src: &[u8],
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_GatherAllNB (between neighbourhoods)";
    let key = t.next_key();
    let out = out_key(t, mode);
    let nb = src.len();
    if nb == 0 {
        return Ok(fin(CollHandle::INVALID, out));
    }
    // Both of the local team's numbers, reserved now: the gather in, the
    // broadcast of the whole result out.
    let stages = h
        .local()
        .map(|l| (LStage::gather(l, 0, nb), LStage::bcast(l, 0, dst.len())));
    let input: Arc<[u8]> = Arc::from(src);
    let result = Staging::new(dst.len());
    let mut steps: Vec<Step> = Vec::new();
    let Some(x) = h.reps(t, key, None) else {
        return Ok(member_in_out(stages, input, result, dst, out));
    };
    let (lin, lout) = stages.unzip();
    let sig = signature("hier_gather_all", &[nb as u64, u64::from(t.size())]);
    let xkey = x.next_key();
    let me = h.mine as usize;
    let members: Vec<usize> = h.groups[me].iter().map(|&r| r as usize).collect();
    let group = group_result(&mut steps, lin, input, nb * members.len());
    let k = h.groups.len();
    let mut from = Some(
        (0..k)
            .map(|g| {
                (g != me).then(|| {
                    let blocks = h.groups[g].iter().map(|&r| r as usize).collect();
                    (x.members[g], blocks)
                })
            })
            .collect(),
    );
    let r = result.clone();
    steps.push(start_then_wait(move || {
        // SAFETY: the group's gather into `group` is complete (the step
        // before): nothing writes it any more.
        let g = unsafe { staged(&group) };
        for (i, &m) in members.iter().enumerate() {
            write_staging(&r, m * nb, &g[i * nb..(i + 1) * nb]);
        }
        let shared: Arc<[u8]> = g.into();
        let initial = (1..k)
            .map(|i| Out::owned(x.members[(me + i) % k], me as u32, shared.clone()))
            .collect();
        let from = from.take().expect("started once");
        Some(between(xkey, sig, CALL, initial, &r, nb, from).c.clone())
    }));
    if let Some(mut l) = lout {
        let r = result.clone();
        // SAFETY: the exchange among the representatives into `r` is
        // complete (the step before): nothing writes it any more (the
        // handle only reads it).
        steps.push(start_then_wait(move || {
            l.start(Some(unsafe { staged(&r) }), None)
        }));
    }
    Ok(fin(launch(steps, Some(result), dst), out))
}

/// Starts the exchange among the representatives under `key`: this
/// member's `initial` sends, and the messages `from` expects (by tag)
/// placed in `staging`, blocks of `nb` bytes.
#[allow(clippy::too_many_arguments)]
fn between(
    key: Key,
    sig: u32,
    call: &'static str,
    initial: Vec<Out>,
    staging: &Arc<Staging>,
    nb: usize,
    from: Vec<Option<(Rank, Vec<usize>)>>,
) -> Arc<Op> {
    Op::start(
        key,
        sig,
        call,
        Box::new(WithSends {
            initial,
            inner: Place::new(staging.clone(), nb, from),
        }),
    )
}

/// Hierarchical exchange (arguments checked, `IN_ALLSYNC` done,
/// [`exchange_fits`]). Staged.
pub(crate) fn exchange<'a>(
    t: &Arc<TeamInfo>,
    h: &Hier,
    mode: SyncMode,
    dst: &'a mut [u8],
    src: &[u8],
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_ExchangeNB (between neighbourhoods)";
    let key = t.next_key();
    let out = out_key(t, mode);
    let n = t.size() as usize;
    let nb = src.len() / n;
    if nb == 0 {
        return Ok(fin(CollHandle::INVALID, out));
    }
    // Both of the local team's numbers, reserved now: the gather of the
    // whole send buffers in, the scatter of the whole receive buffers out.
    let stages = h.local().map(|l| {
        (
            LStage::gather(l, 0, src.len()),
            LStage::scatter(l, 0, src.len()),
        )
    });
    let input: Arc<[u8]> = Arc::from(src);
    let mut steps: Vec<Step> = Vec::new();
    let Some(x) = h.reps(t, key, None) else {
        let result = Staging::new(dst.len());
        return Ok(member_in_out(stages, input, result, dst, out));
    };
    let (lin, lout) = stages.unzip();
    let sig = signature("hier_exchange", &[nb as u64, n as u64]);
    let xkey = x.next_key();
    let me = h.mine as usize;
    let gs = &h.groups[me];
    let sent = group_result(&mut steps, lin, input, src.len() * gs.len());
    let received = Staging::new(src.len() * gs.len());
    let own_pairs = exchange_pairs(gs, gs, n);
    let k = h.groups.len();
    let mut from = Some(
        (0..k)
            .map(|g| {
                (g != me).then(|| {
                    let blocks = exchange_pairs(&h.groups[g], gs, n)
                        .into_iter()
                        .map(|(_, to)| to)
                        .collect();
                    (x.members[g], blocks)
                })
            })
            .collect(),
    );
    // What each other representative gets of the gathered send buffers.
    let packs: Vec<(Rank, Vec<usize>)> = (1..k)
        .map(|i| {
            let g = (me + i) % k;
            let idx = exchange_pairs(gs, &h.groups[g], n)
                .into_iter()
                .map(|(f, _)| f)
                .collect();
            (x.members[g], idx)
        })
        .collect();
    let r = received.clone();
    steps.push(start_then_wait(move || {
        // SAFETY: the group's gather into `sent` is complete (the step
        // before): nothing writes it any more.
        let sent = unsafe { staged(&sent) };
        for &(f, to) in &own_pairs {
            write_staging(&r, to * nb, &sent[f * nb..(f + 1) * nb]);
        }
        let initial = packs
            .iter()
            .map(|(to, idx)| Out::owned(*to, me as u32, pack(sent, nb, idx.iter().copied()).into()))
            .collect();
        let from = from.take().expect("started once");
        Some(between(xkey, sig, CALL, initial, &r, nb, from).c.clone())
    }));
    let Some(mut l) = lout else {
        // Alone: the receive buffer is this member's.
        return Ok(fin(launch(steps, Some(received), dst), out));
    };
    let own = Staging::new(dst.len());
    let (o, rv) = (own.clone(), received.clone());
    let len = dst.len();
    steps.push(Box::new(move || {
        // SAFETY: the exchange among the representatives into `rv` is
        // complete (the step before): nothing writes it any more. This
        // member is local rank 0, the scatter's root.
        write_staging(&o, 0, &unsafe { staged(&rv) }[..len]);
        true
    }));
    // SAFETY: as above.
    steps.push(start_then_wait(move || {
        l.start(Some(unsafe { staged(&received) }), None)
    }));
    Ok(fin(launch(steps, Some(own), dst), out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Inbox;

    fn read(st: &Staging) -> Vec<u8> {
        let mut v = vec![0u8; st.len()];
        // SAFETY: single-threaded test; every write to the staging buffer
        // happened before.
        unsafe { std::ptr::copy_nonoverlapping(st.ptr(), v.as_mut_ptr(), st.len()) };
        v
    }

    /// Block `b` of member `r`'s buffer in the model: distinct bytes.
    fn block(r: usize, b: usize, nb: usize) -> Vec<u8> {
        (0..nb)
            .map(|i| (r * 37 + b * 11 + i * 3 + 1) as u8)
            .collect()
    }

    /// Feeds `msg` to `p` as message `tag` from `who` in chunks of
    /// `chunk` bytes (so chunks straddle blocks); whether it finished.
    fn feed(p: &mut Place, who: Rank, tag: u32, msg: &[u8], chunk: usize) -> bool {
        let mut inbox = Inbox::default();
        let mut done = false;
        for (c, part) in msg.chunks(chunk).enumerate() {
            let mut cx = Cx::new(&mut inbox);
            p.chunk(&mut cx, who, tag, c * chunk, msg.len(), part);
            assert!(!done, "finished before the last chunk");
            done = cx.finished;
        }
        done
    }

    /// Uneven groups, not contiguous in team-rank order (a team of 7).
    fn layouts() -> Vec<Vec<Vec<u32>>> {
        vec![
            vec![vec![0, 3, 4], vec![1], vec![2, 5, 6]],
            vec![vec![0, 2, 4, 6], vec![1, 3, 5]],
            vec![vec![0], vec![1, 2, 3, 4, 5, 6]],
        ]
    }

    /// Gather (and gather-all's placement): every group's blocks, in
    /// group order, land at their members' team ranks.
    #[test]
    fn gather_places_blocks_by_team_rank() {
        for groups in layouts() {
            let n: usize = groups.iter().map(Vec::len).sum();
            for nb in [1, 3, 8] {
                for root_g in 0..groups.len() {
                    let st = Staging::new(n * nb);
                    for &r in &groups[root_g] {
                        write_staging(&st, r as usize * nb, &block(r as usize, 0, nb));
                    }
                    let from = (0..groups.len())
                        .map(|g| {
                            (g != root_g).then(|| {
                                (
                                    10 + g as Rank,
                                    groups[g].iter().map(|&r| r as usize).collect(),
                                )
                            })
                        })
                        .collect();
                    let mut p = Place::new(st.clone(), nb, from);
                    let mut done = false;
                    for (g, gs) in groups.iter().enumerate().filter(|(g, _)| *g != root_g) {
                        assert!(!done);
                        let msg: Vec<u8> =
                            gs.iter().flat_map(|&r| block(r as usize, 0, nb)).collect();
                        done = feed(&mut p, 10 + g as Rank, g as u32, &msg, 5);
                    }
                    assert!(done);
                    let want: Vec<u8> = (0..n).flat_map(|r| block(r, 0, nb)).collect();
                    assert_eq!(read(&st), want, "{groups:?} nb {nb} root group {root_g}");
                }
            }
        }
    }

    /// Scatter: the root's message to group `g` holds block `groups[g][i]`
    /// at position `i` (the local scatter's block for local rank `i`).
    #[test]
    fn scatter_packs_by_group_order() {
        for groups in layouts() {
            let n: usize = groups.iter().map(Vec::len).sum();
            let nb = 3;
            let src: Vec<u8> = (0..n).flat_map(|r| block(r, 9, nb)).collect();
            for gs in &groups {
                let msg = pack(&src, nb, gs.iter().map(|&r| r as usize));
                for (i, &r) in gs.iter().enumerate() {
                    assert_eq!(msg[i * nb..(i + 1) * nb], block(r as usize, 9, nb)[..]);
                }
            }
        }
    }

    /// Exchange: every member's receive buffer, assembled from the
    /// gathered send buffers by [`exchange_pairs`] (own group) and the
    /// messages between representatives, holds block `i` from team rank
    /// `i`'s block for it.
    #[test]
    fn exchange_assembles_every_receive_buffer() {
        for groups in layouts() {
            let n: usize = groups.iter().map(Vec::len).sum();
            for nb in [1, 4] {
                // Each group's gathered send buffers (member i's `n`
                // blocks at i * n).
                let sent: Vec<Vec<u8>> = groups
                    .iter()
                    .map(|gs| {
                        gs.iter()
                            .flat_map(|&r| (0..n).flat_map(move |b| block(r as usize, b, nb)))
                            .collect()
                    })
                    .collect();
                for (h, hs) in groups.iter().enumerate() {
                    let st = Staging::new(hs.len() * n * nb);
                    for (f, to) in exchange_pairs(hs, hs, n) {
                        write_staging(&st, to * nb, &sent[h][f * nb..(f + 1) * nb]);
                    }
                    let from = (0..groups.len())
                        .map(|g| {
                            (g != h).then(|| {
                                let b = exchange_pairs(&groups[g], hs, n)
                                    .into_iter()
                                    .map(|(_, to)| to)
                                    .collect();
                                (20 + g as Rank, b)
                            })
                        })
                        .collect();
                    let mut p = Place::new(st.clone(), nb, from);
                    let mut done = false;
                    for (g, gs) in groups.iter().enumerate().filter(|(g, _)| *g != h) {
                        assert!(!done);
                        let idx = exchange_pairs(gs, hs, n).into_iter().map(|(f, _)| f);
                        let msg = pack(&sent[g], nb, idx);
                        assert_eq!(msg.len(), gs.len() * hs.len() * nb);
                        done = feed(&mut p, 20 + g as Rank, g as u32, &msg, 7);
                    }
                    assert!(done);
                    let got = read(&st);
                    for (j, &r) in hs.iter().enumerate() {
                        for i in 0..n {
                            let at = (j * n + i) * nb;
                            assert_eq!(
                                got[at..at + nb],
                                block(i, r as usize, nb)[..],
                                "{groups:?} nb {nb}: rank {r}'s block from {i}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// A message from the wrong rank, with the wrong tag or length, or
    /// more bytes than its length is refused before it is written.
    #[test]
    fn place_checks_sender_tag_and_length() {
        let st = Staging::new(8);
        let mut p = Place::new(st, 2, vec![None, Some((5, vec![1, 3]))]);
        assert!(p.accept(5, 1, 0, 4, 4).is_ok());
        assert!(p.accept(4, 1, 0, 4, 4).is_err(), "sender");
        assert!(p.accept(5, 0, 0, 4, 4).is_err(), "tag without a message");
        assert!(p.accept(5, 2, 0, 4, 4).is_err(), "tag out of range");
        assert!(p.accept(5, 1, 0, 6, 4).is_err(), "length");
        assert!(p.accept(5, 1, 2, 4, 4).is_err(), "range");
        p.from[1].as_mut().unwrap().got = 2;
        assert!(p.accept(5, 1, 0, 4, 4).is_err(), "more than the length");
    }
}
