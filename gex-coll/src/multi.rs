//! The multi-address ("i") forms of broadcast, scatter, gather, gather-all
//! and exchange (collectives design notes, "Two-flavors interface
//! proposal"): one member serves several images (threads of a UPC or
//! Titanium program sharing its address space), each with its own
//! buffers. Block `i` of a call is image `i`'s; `nblocks` images in all.
//!
//! Where the images are ([`Images`]):
//!
//! - `Images::Single { nodes }`: image `i` lives on member `nodes[i]`
//!   (the notes' `nodelist`, `listlen = nodes.len()`); every member passes
//!   the same list (it is hashed into the call's signature, so members
//!   whose lists differ end the job with the mismatch message), and its
//!   own images' buffers in list order. A member's images need not be
//!   consecutive. The notes' `rank` and `nblocks` are implied.
//! - `Images::Local { first, nblocks }`: this member's images are blocks
//!   `first .. first + k`, `k` being the number of buffers it passes (its
//!   `listlen`, 0 allowed: its `first` is then ignored). The members first
//!   exchange `(first, k, nblocks)` (an all-gather of 24 bytes each) and
//!   check that they agree on `nblocks` and that their ranges partition
//!   `0 .. nblocks`; otherwise every member returns the same error.
//!   Broadcast ignores `first` and `nblocks` (the notes: broadcast has
//!   no rank argument), and exchanges nothing.
//!
//! Rust shape: the remote images' addresses of the notes' SINGLE lists
//! are not passed, since the data is staged through the member that owns
//! an image; each member passes slices for its own images only.
//!
//! Data moves flat over Active Messages, one message per pair of members
//! that have images (a member's images' blocks concatenated), into a
//! staging buffer copied into every local image's buffer at the handle's
//! completion. The sync modes are those of the plain calls
//! (`IN_ALLSYNC` a barrier at initiation, unless the `Local` exchange
//! already made everyone enter; `OUT_ALLSYNC` the closing barrier).
//! Segment hints are checked (every member's verdict is exchanged, so a
//! false one is the same error everywhere, nothing moved); the data is
//! staged all the same.
//!
//! Layer: public forms. Uses the AM and one-sided mechanisms, the team
//! barrier, the handles, the registry and the base modules.

use std::collections::HashMap;
use std::sync::Arc;

use gex_core::{context, Staging, Tm, TmRef};
use gex_types::{Error, Flags, Rank, Result};

use crate::am::algos::write_staging;
use crate::am::allgather_v;
use crate::am::{fin, out_key};
use crate::args::{check_root, check_size};
use crate::barrier::enter_all;
use crate::engine::{hash_id, signature, Cx, Logic, Op, Out, WithSends};
use crate::handle::CollHandle;
use crate::onesided::{rank_map, HINTS};
use crate::sync;
use crate::team::{team_of, TeamInfo};

/// Where the images of a multi-address call live (see the module
/// documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Images<'a> {
    /// The notes' `*_LOCAL`: this member's images are blocks
    /// `first .. first + k` of `nblocks` (`k`: the number of buffers it
    /// passes).
    Local {
        /// The notes' `rank`: the index of this member's first image.
        first: usize,
        /// The notes' `nblocks`: images over all members.
        nblocks: usize,
    },
    /// The notes' `*_SINGLE`: image `i` lives on member `nodes[i]`; the
    /// same list on every member.
    Single {
        /// The notes' `nodelist` (team ranks).
        nodes: &'a [Rank],
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Broadcast,
    Scatter,
    Gather,
    GatherAll,
    Exchange,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Broadcast => "broadcasti",
            Kind::Scatter => "scatteri",
            Kind::Gather => "gatheri",
            Kind::GatherAll => "gather_alli",
            Kind::Exchange => "exchangei",
        }
    }
}

/// Which member owns each image.
#[derive(Debug)]
struct Layout {
    nblocks: usize,
    /// Image indices of each member, increasing.
    imgs: Vec<Vec<usize>>,
    /// A hash of the owners, for the signature.
    hash: u64,
}

/// Whether `[addr, addr + len)` lies in this member's bound segment.
fn own_in_segment(tm: &Tm, s: &[u8]) -> bool {
    if s.is_empty() {
        return true;
    }
    let Ok(Some(seg)) = tm.query_bound_segment(tm.rank(), Flags::IMMEDIATE) else {
        return false;
    };
    let a = s.as_ptr() as usize;
    a >= seg.owner_addr && a + s.len() <= seg.owner_addr + seg.size
}

/// The layout of a call, agreed on every member (or the same error on
/// every member). `k`: how many images this member passes; `hints_ok`:
/// whether its hinted buffers lie in its segment (`None`: no hint given).
fn layout(
    call: &str,
    t: &TeamInfo,
    images: Images<'_>,
    k: usize,
    hints_ok: Option<bool>,
) -> Result<(Layout, bool)> {
    let n = t.size() as usize;
    let me = t.me as usize;
    match images {
        Images::Single { nodes } => {
            let mut imgs = vec![Vec::new(); n];
            for (i, &r) in nodes.iter().enumerate() {
                let Some(v) = imgs.get_mut(r as usize) else {
                    return Err(Error::bad_arg(format!(
                        "{call}: nodes[{i}] is {r}, not a rank of the team (size {n})"
                    )));
                };
                v.push(i);
            }
            if imgs[me].len() != k {
                return Err(Error::bad_arg(format!(
                    "{call}: the node list gives this member (rank {me}) {} images, but it \
                     passes {k} buffers",
                    imgs[me].len()
                )));
            }
            let words: Vec<u64> = nodes.iter().map(|&r| u64::from(r)).collect();
            let lay = Layout {
                nblocks: nodes.len(),
                imgs,
                hash: hash_id(&words),
            };
            let mut gathered = false;
            if let Some(ok) = hints_ok {
                // The verdicts, so that a false hint fails every member.
                let (all, _) = allgather_v(t, "images_hints", vec![u8::from(ok)]);
                gathered = true;
                if let Some(r) = all.iter().position(|b| b.first() != Some(&1)) {
                    return Err(false_hint(call, r));
                }
            }
            Ok((lay, gathered))
        }
        Images::Local { first, nblocks } => {
            let mut mine = Vec::with_capacity(25);
            for w in [first as u64, k as u64, nblocks as u64] {
                mine.extend_from_slice(&w.to_le_bytes());
            }
            mine.push(u8::from(hints_ok.unwrap_or(true)));
            let (all, _) = allgather_v(t, "images_layout", mine);
            Ok((partition(call, me, n, nblocks, &all)?, true))
        }
    }
}

/// The layout the members' `(first, listlen, nblocks, hints ok)` records
/// give (one per member, in rank order), or the error every member
/// reports alike: a false hint, disagreeing `nblocks`, ranges that do not
/// partition `0..nblocks`.
fn partition(call: &str, me: usize, n: usize, nblocks: usize, all: &[Vec<u8>]) -> Result<Layout> {
    let mut owner: Vec<Option<Rank>> = vec![None; nblocks];
    let mut imgs = vec![Vec::new(); n];
    for (r, rec) in all.iter().enumerate() {
        if rec.len() != 25 {
            gex_core::fatal(&format!(
                "gex-coll: {call}: rank {r} sent a layout record of {} bytes, 25 expected",
                rec.len()
            ));
        }
        let w = |i: usize| {
            u64::from_le_bytes(rec[i * 8..i * 8 + 8].try_into().expect("8 bytes")) as usize
        };
        let (f, cnt, nbl) = (w(0), w(1), w(2));
        if rec[24] != 1 {
            return Err(false_hint(call, r));
        }
        if nbl != nblocks {
            return Err(Error::bad_arg(format!(
                "{call}: members disagree on nblocks: rank {r} passes {nbl}, rank {me} \
                 {nblocks}"
            )));
        }
        if cnt == 0 {
            continue;
        }
        if f.checked_add(cnt).is_none_or(|e| e > nblocks) {
            return Err(Error::bad_arg(format!(
                "{call}: rank {r}'s images {f} .. {f} + {cnt} exceed nblocks {nblocks}"
            )));
        }
        for (i, o) in owner.iter_mut().enumerate().skip(f).take(cnt) {
            if let Some(other) = o {
                return Err(Error::bad_arg(format!(
                    "{call}: image {i} is claimed by ranks {other} and {r} (the ranges \
                     must partition 0 .. nblocks)"
                )));
            }
            *o = Some(r as Rank);
            imgs[r].push(i);
        }
    }
    if let Some(i) = owner.iter().position(Option::is_none) {
        return Err(Error::bad_arg(format!(
            "{call}: no member has image {i} of {nblocks} (the ranges must partition \
             0 .. nblocks)"
        )));
    }
    let words: Vec<u64> = owner
        .iter()
        .map(|o| u64::from(o.expect("every image owned")))
        .collect();
    Ok(Layout {
        nblocks,
        imgs,
        hash: hash_id(&words),
    })
}

fn false_hint(call: &str, r: usize) -> Error {
    Error::bad_arg(format!(
        "{call}: a segment hint is false: rank {r}'s buffers are not all inside its bound \
         segment; nothing was moved"
    ))
}

/// Receives one message from each expected member and places its blocks
/// in the staging buffer: from member `r` (tag `r`), block `b` of the
/// message goes to `places[r][b]`.
struct Place {
    call: &'static str,
    rank_of: Arc<HashMap<Rank, Rank>>,
    nb: usize,
    places: HashMap<Rank, Vec<usize>>,
    staging: Arc<Staging>,
    got: usize,
}

impl Logic for Place {
    fn start(&mut self, cx: &mut Cx<'_>) {
        if self.places.is_empty() {
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
        let r = self.rank_of.get(&src).copied();
        let Some(places) = r.filter(|&r| r == tag).and_then(|r| self.places.get(&r)) else {
            gex_core::fatal(&format!(
                "gex-coll: {}: unexpected message {tag} from jobrank {src}",
                self.call
            ));
        };
        if total != places.len() * self.nb {
            gex_core::fatal(&format!(
                "gex-coll: {}: message from rank {tag} has {total} bytes, {} expected",
                self.call,
                places.len() * self.nb
            ));
        }
        let Some(msg) = cx.assemble(tag, offset, total, data) else {
            return;
        };
        let places = self.places.remove(&tag).expect("checked above");
        for (b, &at) in places.iter().enumerate() {
            write_staging(&self.staging, at, &msg[b * self.nb..(b + 1) * self.nb]);
        }
        self.got += 1;
        if self.places.is_empty() {
            cx.finish();
        }
    }
}

/// The common part of every multi-address call.
struct Call {
    name: &'static str,
    t: Arc<TeamInfo>,
    mode: sync::SyncMode,
    lay: Layout,
}

#[allow(clippy::too_many_arguments)]
fn begin(
    call: &'static str,
    kind: Kind,
    tm: &Tm,
    images: Images<'_>,
    root: Option<Rank>,
    k: usize,
    bufs_in_seg: impl FnOnce() -> bool,
    nb: usize,
    flags: Flags,
) -> Result<Call> {
    context::check_may_communicate(call)?;
    let t = team_of(tm, call)?;
    let mode = sync::parse(call, flags - HINTS)?;
    if let Some(r) = root {
        check_root(call, r, &t)?;
    }
    let hints_ok = (!(flags & HINTS).is_empty()).then(bufs_in_seg);
    let (lay, gathered) = if kind == Kind::Broadcast {
        // No layout: every member's images get the whole payload.
        let mut imgs = vec![Vec::new(); t.size() as usize];
        imgs[t.me as usize] = (0..k).collect();
        // nblocks 0: the signature must not depend on the local count.
        let lay = Layout {
            nblocks: 0,
            imgs,
            hash: 0,
        };
        match hints_ok {
            Some(ok) => {
                let (all, _) = allgather_v(&t, "images_hints", vec![u8::from(ok)]);
                if let Some(r) = all.iter().position(|b| b.first() != Some(&1)) {
                    return Err(false_hint(call, r));
                }
                (lay, true)
            }
            None => (lay, false),
        }
    } else {
        layout(call, &t, images, k, hints_ok)?
    };
    check_size(call, nb.saturating_mul(lay.nblocks.max(1)))?;
    if mode.in_all && !gathered {
        enter_all(&t, None, call);
    }
    Ok(Call {
        name: call,
        t,
        mode,
        lay,
    })
}

impl Call {
    fn me(&self) -> usize {
        self.t.me as usize
    }

    /// Starts the receiving operation (messages from the members in
    /// `places`) and makes this member's sends; returns the handle, which
    /// copies `parts` of the staging buffer out.
    fn finish<'a>(
        self,
        kind: Kind,
        nb: usize,
        staging: Arc<Staging>,
        places: HashMap<Rank, Vec<usize>>,
        sends: Vec<(Rank, Vec<u8>)>,
        parts: Vec<(usize, &'a mut [u8])>,
    ) -> CollHandle<'a> {
        let key = self.t.next_key();
        let out = out_key(&self.t, self.mode);
        let sig = signature(
            kind.name(),
            &[
                nb as u64,
                self.mode.word,
                self.lay.nblocks as u64,
                self.lay.hash,
            ],
        );
        let me = self.t.me;
        let initial: Vec<Out> = sends
            .into_iter()
            .map(|(to, bytes)| Out::owned(self.t.members[to as usize], me, bytes.into()))
            .collect();
        let waiting = !places.is_empty();
        let op = Op::start(
            key,
            sig,
            self.name,
            Box::new(WithSends {
                initial,
                inner: Place {
                    call: self.name,
                    rank_of: rank_map(&self.t),
                    nb,
                    places,
                    staging: staging.clone(),
                    got: 0,
                },
            }),
        );
        let h = if waiting || !parts.is_empty() {
            CollHandle::pending_into_parts(op.c.clone(), staging, parts)
        } else {
            CollHandle::INVALID
        };
        fin(h, out)
    }
}

fn check_each(
    call: &str,
    what: &str,
    lens: impl Iterator<Item = usize>,
    want: usize,
) -> Result<()> {
    for (i, l) in lens.enumerate() {
        if l != want {
            return Err(Error::bad_arg(format!(
                "{call}: {what}[{i}] is {l} bytes, {want} expected"
            )));
        }
    }
    Ok(())
}

fn in_seg_all<'x>(tm: &Tm, bufs: impl IntoIterator<Item = &'x [u8]>) -> bool {
    bufs.into_iter().all(|b| own_in_segment(tm, b))
}

/// Whether the segment hints in `flags` hold for this member's buffers:
/// every destination in its segment under `COLL_DST_IN_SEGMENT`, every
/// source under `COLL_SRC_IN_SEGMENT`.
fn hints_hold<'x>(
    tm: &Tm,
    flags: Flags,
    dsts: impl IntoIterator<Item = &'x [u8]>,
    srcs: impl IntoIterator<Item = &'x [u8]>,
) -> bool {
    (!flags.contains(Flags::COLL_DST_IN_SEGMENT) || in_seg_all(tm, dsts))
        && (!flags.contains(Flags::COLL_SRC_IN_SEGMENT) || in_seg_all(tm, srcs))
}

/// Broadcast to images (the notes' `gasnet_all_broadcasti_nb`): the
/// root's `src` (`nbytes`) lands in every image's buffer of every member.
/// `images` says nothing here beyond the address mode (the notes'
/// broadcast has no rank argument); `dsts` are this member's images'
/// buffers (any number, 0 included). `src` is `Some` on the root.
pub fn broadcasti_nb<'a>(
    tm: &Tm,
    images: Images<'_>,
    root: Rank,
    dsts: impl IntoIterator<Item = &'a mut [u8]>,
    src: Option<&[u8]>,
    nbytes: usize,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gasnet_all_broadcasti_nb";
    let dsts: Vec<&'a mut [u8]> = dsts.into_iter().collect();
    check_each(CALL, "dsts", dsts.iter().map(|d| d.len()), nbytes)?;
    let is_root = tm.rank() == root;
    let src = match (is_root, src) {
        (true, Some(s)) => {
            check_each(CALL, "src", std::iter::once(s.len()), nbytes)?;
            Some(s)
        }
        (true, None) => return Err(Error::bad_arg(format!("{CALL}: the root needs a src"))),
        (false, _) => None,
    };
    let c = begin(
        CALL,
        Kind::Broadcast,
        tm,
        images,
        Some(root),
        dsts.len(),
        || hints_hold(tm, flags, dsts.iter().map(|d| &**d), src),
        nbytes,
        flags,
    )?;
    let n = c.t.size();
    let staging = Staging::new(nbytes);
    let (mut places, mut sends) = (HashMap::new(), Vec::new());
    if let Some(s) = src {
        write_staging(&staging, 0, s);
        if nbytes > 0 {
            sends = (1..n).map(|i| ((root + i) % n, s.to_vec())).collect();
        }
    } else if nbytes > 0 {
        places.insert(root, vec![0]);
    }
    let parts = dsts.into_iter().map(|d| (0, d)).collect();
    Ok(c.finish(Kind::Broadcast, nbytes, staging, places, sends, parts))
}

/// Scatter to images (`gasnet_all_scatteri_nb`): the root's `src` holds
/// `nblocks` blocks of `nbytes`; image `i` receives block `i`. `dsts`:
/// this member's images' buffers (in `images` order); `src` is `Some` on
/// the root.
pub fn scatteri_nb<'a>(
    tm: &Tm,
    images: Images<'_>,
    root: Rank,
    dsts: impl IntoIterator<Item = &'a mut [u8]>,
    src: Option<&[u8]>,
    nbytes: usize,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gasnet_all_scatteri_nb";
    let dsts: Vec<&'a mut [u8]> = dsts.into_iter().collect();
    check_each(CALL, "dsts", dsts.iter().map(|d| d.len()), nbytes)?;
    let is_root = tm.rank() == root;
    if is_root && src.is_none() {
        return Err(Error::bad_arg(format!("{CALL}: the root needs a src")));
    }
    let src = src.filter(|_| is_root);
    let c = begin(
        CALL,
        Kind::Scatter,
        tm,
        images,
        Some(root),
        dsts.len(),
        || hints_hold(tm, flags, dsts.iter().map(|d| &**d), src),
        nbytes,
        flags,
    )?;
    if let Some(s) = src {
        check_each(
            CALL,
            "src",
            std::iter::once(s.len()),
            c.lay.nblocks * nbytes,
        )?;
    }
    let me = c.me();
    let mine = c.lay.imgs[me].clone();
    let staging = Staging::new(mine.len() * nbytes);
    let (mut places, mut sends) = (HashMap::new(), Vec::new());
    if nbytes > 0 {
        if let Some(s) = src {
            let blk = |i: usize| &s[i * nbytes..(i + 1) * nbytes];
            for (k, &i) in mine.iter().enumerate() {
                write_staging(&staging, k * nbytes, blk(i));
            }
            for (r, imgs) in c.lay.imgs.iter().enumerate() {
                if r != me && !imgs.is_empty() {
                    let msg: Vec<u8> = imgs.iter().flat_map(|&i| blk(i).to_vec()).collect();
                    sends.push((r as Rank, msg));
                }
            }
        } else if !mine.is_empty() {
            places.insert(root, (0..mine.len()).map(|k| k * nbytes).collect());
        }
    }
    let parts = dsts
        .into_iter()
        .enumerate()
        .map(|(k, d)| (k * nbytes, d))
        .collect();
    Ok(c.finish(Kind::Scatter, nbytes, staging, places, sends, parts))
}

/// Gather from images (`gasnet_all_gatheri_nb`): image `i`'s buffer
/// (`nbytes`) lands as block `i` of the root's `dst` (`nblocks * nbytes`).
/// `srcs`: this member's images' buffers (in `images` order); `dst` is
/// `Some` on the root.
pub fn gatheri_nb<'a>(
    tm: &Tm,
    images: Images<'_>,
    root: Rank,
    dst: Option<&'a mut [u8]>,
    srcs: &[&[u8]],
    nbytes: usize,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gasnet_all_gatheri_nb";
    check_each(CALL, "srcs", srcs.iter().map(|s| s.len()), nbytes)?;
    let is_root = tm.rank() == root;
    if is_root && dst.is_none() {
        return Err(Error::bad_arg(format!("{CALL}: the root needs a dst")));
    }
    let dst = dst.filter(|_| is_root);
    let c = begin(
        CALL,
        Kind::Gather,
        tm,
        images,
        Some(root),
        srcs.len(),
        || hints_hold(tm, flags, dst.as_deref(), srcs.iter().copied()),
        nbytes,
        flags,
    )?;
    let nblocks = c.lay.nblocks;
    if let Some(d) = dst.as_deref() {
        check_each(CALL, "dst", std::iter::once(d.len()), nblocks * nbytes)?;
    }
    let me = c.me();
    let (mut places, mut sends) = (HashMap::new(), Vec::new());
    let staging = Staging::new(if is_root { nblocks * nbytes } else { 0 });
    if nbytes > 0 {
        if is_root {
            for (k, &i) in c.lay.imgs[me].iter().enumerate() {
                write_staging(&staging, i * nbytes, srcs[k]);
            }
            for (r, imgs) in c.lay.imgs.iter().enumerate() {
                if r != me && !imgs.is_empty() {
                    places.insert(r as Rank, imgs.iter().map(|&i| i * nbytes).collect());
                }
            }
        } else if !srcs.is_empty() {
            sends.push((root, srcs.concat()));
        }
    }
    let parts = dst.map(|d| vec![(0, d)]).unwrap_or_default();
    Ok(c.finish(Kind::Gather, nbytes, staging, places, sends, parts))
}

/// Gather-all over images (`gasnet_all_gather_alli_nb`): image `i`'s
/// source (`nbytes`) lands as block `i` of every image's destination
/// (`nblocks * nbytes`). `dsts` and `srcs`: this member's images', in
/// `images` order (as many of each).
pub fn gather_alli_nb<'a>(
    tm: &Tm,
    images: Images<'_>,
    dsts: impl IntoIterator<Item = &'a mut [u8]>,
    srcs: &[&[u8]],
    nbytes: usize,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gasnet_all_gather_alli_nb";
    let dsts: Vec<&'a mut [u8]> = dsts.into_iter().collect();
    all_to_all(CALL, Kind::GatherAll, tm, images, dsts, srcs, nbytes, flags)
}

/// Exchange over images (`gasnet_all_exchangei_nb`): block `j` of image
/// `i`'s source lands as block `i` of image `j`'s destination (both
/// `nblocks * nbytes`). `dsts` and `srcs`: this member's images', in
/// `images` order.
pub fn exchangei_nb<'a>(
    tm: &Tm,
    images: Images<'_>,
    dsts: impl IntoIterator<Item = &'a mut [u8]>,
    srcs: &[&[u8]],
    nbytes: usize,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gasnet_all_exchangei_nb";
    let dsts: Vec<&'a mut [u8]> = dsts.into_iter().collect();
    all_to_all(CALL, Kind::Exchange, tm, images, dsts, srcs, nbytes, flags)
}

#[allow(clippy::too_many_arguments)]
fn all_to_all<'a>(
    call: &'static str,
    kind: Kind,
    tm: &Tm,
    images: Images<'_>,
    dsts: Vec<&'a mut [u8]>,
    srcs: &[&[u8]],
    nbytes: usize,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    if dsts.len() != srcs.len() {
        return Err(Error::bad_arg(format!(
            "{call}: {} dsts and {} srcs (one of each per image)",
            dsts.len(),
            srcs.len()
        )));
    }
    let c = begin(
        call,
        kind,
        tm,
        images,
        None,
        dsts.len(),
        || hints_hold(tm, flags, dsts.iter().map(|d| &**d), srcs.iter().copied()),
        nbytes,
        flags,
    )?;
    let nblocks = c.lay.nblocks;
    let whole = nblocks * nbytes;
    check_each(call, "dsts", dsts.iter().map(|d| d.len()), whole)?;
    let src_len = if kind == Kind::Exchange {
        whole
    } else {
        nbytes
    };
    check_each(call, "srcs", srcs.iter().map(|s| s.len()), src_len)?;
    let me = c.me();
    let mine = c.lay.imgs[me].clone();
    let (mut places, mut sends) = (HashMap::new(), Vec::new());
    // Staging: gather-all, one copy of the result for every local image;
    // exchange, each local image's destination in turn.
    let staging = Staging::new(match kind {
        Kind::Exchange => mine.len() * whole,
        _ => whole,
    });
    // Where block `b` of member `r`'s message goes: gather-all, block `b`
    // is `r`'s `b`-th image; exchange, the blocks are (my image jj, r's
    // image ii) pairs, jj major.
    let place_of = |r: usize| -> Vec<usize> {
        let theirs = &c.lay.imgs[r];
        match kind {
            Kind::Exchange => (0..mine.len())
                .flat_map(|jj| theirs.iter().map(move |&i| jj * whole + i * nbytes))
                .collect(),
            _ => theirs.iter().map(|&i| i * nbytes).collect(),
        }
    };
    // What member `q` receives from this one.
    let msg_for = |q: usize| -> Vec<u8> {
        match kind {
            Kind::Exchange => c.lay.imgs[q]
                .iter()
                .flat_map(|&j| {
                    srcs.iter()
                        .flat_map(move |s| s[j * nbytes..(j + 1) * nbytes].to_vec())
                })
                .collect(),
            _ => srcs.concat(),
        }
    };
    if nbytes > 0 && !mine.is_empty() {
        let local = msg_for(me);
        for (b, at) in place_of(me).into_iter().enumerate() {
            write_staging(&staging, at, &local[b * nbytes..(b + 1) * nbytes]);
        }
        for (r, imgs) in c.lay.imgs.iter().enumerate() {
            if r != me && !imgs.is_empty() {
                places.insert(r as Rank, place_of(r));
                sends.push((r as Rank, msg_for(r)));
            }
        }
    }
    let parts = dsts
        .into_iter()
        .enumerate()
        .map(|(k, d)| (if kind == Kind::Exchange { k * whole } else { 0 }, d))
        .collect();
    Ok(c.finish(kind, nbytes, staging, places, sends, parts))
}

/// Blocking [`broadcasti_nb`].
pub fn broadcasti<'a>(
    tm: &Tm,
    images: Images<'_>,
    root: Rank,
    dsts: impl IntoIterator<Item = &'a mut [u8]>,
    src: Option<&[u8]>,
    nbytes: usize,
    flags: Flags,
) -> Result<()> {
    broadcasti_nb(tm, images, root, dsts, src, nbytes, flags)?.wait()
}

/// Blocking [`scatteri_nb`].
pub fn scatteri<'a>(
    tm: &Tm,
    images: Images<'_>,
    root: Rank,
    dsts: impl IntoIterator<Item = &'a mut [u8]>,
    src: Option<&[u8]>,
    nbytes: usize,
    flags: Flags,
) -> Result<()> {
    scatteri_nb(tm, images, root, dsts, src, nbytes, flags)?.wait()
}

/// Blocking [`gatheri_nb`].
pub fn gatheri(
    tm: &Tm,
    images: Images<'_>,
    root: Rank,
    dst: Option<&mut [u8]>,
    srcs: &[&[u8]],
    nbytes: usize,
    flags: Flags,
) -> Result<()> {
    gatheri_nb(tm, images, root, dst, srcs, nbytes, flags)?.wait()
}

/// Blocking [`gather_alli_nb`].
pub fn gather_alli<'a>(
    tm: &Tm,
    images: Images<'_>,
    dsts: impl IntoIterator<Item = &'a mut [u8]>,
    srcs: &[&[u8]],
    nbytes: usize,
    flags: Flags,
) -> Result<()> {
    gather_alli_nb(tm, images, dsts, srcs, nbytes, flags)?.wait()
}

/// Blocking [`exchangei_nb`].
pub fn exchangei<'a>(
    tm: &Tm,
    images: Images<'_>,
    dsts: impl IntoIterator<Item = &'a mut [u8]>,
    srcs: &[&[u8]],
    nbytes: usize,
    flags: Flags,
) -> Result<()> {
    exchangei_nb(tm, images, dsts, srcs, nbytes, flags)?.wait()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Inbox;

    #[test]
    fn place_puts_blocks_where_the_layout_says() {
        // Member 1 (jobrank 21) sends blocks for staging offsets 8 and 0,
        // in two chunks arriving in reverse order; member 2 one block.
        let staging = Staging::new(12);
        let rank_of = Arc::new([(20, 0), (21, 1), (22, 2)].into_iter().collect());
        let mut p = Place {
            call: "t",
            rank_of,
            nb: 4,
            places: [(1, vec![8, 0]), (2, vec![4])].into_iter().collect(),
            staging: staging.clone(),
            got: 0,
        };
        let mut inbox = Inbox::default();
        let mut cx = Cx::new(&mut inbox);
        p.start(&mut cx);
        assert!(!cx.finished);
        p.chunk(&mut cx, 21, 1, 4, 8, &[5, 6, 7, 8]);
        p.chunk(&mut cx, 21, 1, 0, 8, &[1, 2, 3, 4]);
        assert!(!cx.finished);
        p.chunk(&mut cx, 22, 2, 0, 4, &[9, 9, 9, 9]);
        assert!(cx.finished);
        let mut got = [0u8; 12];
        // SAFETY: the staging buffer has 12 bytes and no writer remains.
        unsafe { std::ptr::copy_nonoverlapping(staging.ptr(), got.as_mut_ptr(), 12) };
        assert_eq!(got, [5, 6, 7, 8, 9, 9, 9, 9, 1, 2, 3, 4]);
    }

    #[test]
    fn local_layouts_must_partition() {
        let rec = |f: u64, k: u64, n: u64, ok: bool| {
            let mut v = Vec::new();
            for w in [f, k, n] {
                v.extend_from_slice(&w.to_le_bytes());
            }
            v.push(u8::from(ok));
            v
        };
        let p = |recs: &[Vec<u8>], nblocks| partition("t", 0, recs.len(), nblocks, recs);
        // Member 1 has none (its first is ignored), 0 has 0..2, 2 has 2..5.
        let l = p(
            &[rec(0, 2, 5, true), rec(99, 0, 5, true), rec(2, 3, 5, true)],
            5,
        )
        .unwrap();
        assert_eq!(l.imgs, vec![vec![0, 1], vec![], vec![2, 3, 4]]);
        let other = p(
            &[rec(0, 3, 5, true), rec(99, 0, 5, true), rec(3, 2, 5, true)],
            5,
        )
        .unwrap();
        assert_ne!(l.hash, other.hash);
        let e = p(&[rec(0, 2, 4, true), rec(1, 3, 4, true)], 4).unwrap_err();
        assert!(e.message().contains("claimed by ranks 0 and 1"), "{e}");
        let e = p(&[rec(0, 2, 4, true), rec(3, 1, 4, true)], 4).unwrap_err();
        assert!(e.message().contains("no member has image 2"), "{e}");
        let e = p(&[rec(0, 2, 4, true), rec(2, 3, 4, true)], 4).unwrap_err();
        assert!(e.message().contains("exceed nblocks 4"), "{e}");
        let e = p(&[rec(0, 2, 4, true), rec(2, 2, 5, true)], 4).unwrap_err();
        assert!(e.message().contains("disagree on nblocks"), "{e}");
        let e = p(&[rec(0, 2, 4, true), rec(2, 2, 4, false)], 4).unwrap_err();
        assert!(e.message().contains("rank 1's buffers"), "{e}");
        // A count that overflows is refused, not wrapped.
        let e = p(&[rec(u64::MAX, 2, 4, true)], 4).unwrap_err();
        assert!(e.message().contains("exceed nblocks"), "{e}");
    }
}
