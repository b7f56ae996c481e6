//! test-coll's checks of the address modes (`Addrs::Local` /
//! `Addrs::Single`), the segment hints (`COLL_DST_IN_SEGMENT`,
//! `COLL_SRC_IN_SEGMENT`: one-sided algorithms), the multi-address ("i")
//! forms and all_put / all_get. A module of the `test-coll` binary
//! (included with `#[path]`), so that the binary's own file stays as it
//! was for the most part.
//!
//! Buffers that a hint says are in the segment live in this module's part
//! of the segment, `[REGION, REGION + 4 MiB)`, at the same offsets on every
//! rank: a rank computes a peer's owner addresses from the peer's bound
//! segment. Every collective's output is checked byte by byte against a
//! model every rank computes from the same seeds; between two calls the
//! ranks meet in a barrier, so that a call's early puts (IN_NOSYNC) never
//! land in a buffer a rank is still checking or preparing.

use gex::coll::{
    broadcast_nb_with, exchange_nb_with, gather_all_nb_with, gather_nb_with, scatter_nb_with,
    Addrs, CollHandle,
};
use gex::{ErrorKind, Flags, Rank, Tm, TmRef};
use gex_testsuite::payload;

use super::{sync_mode_list, T};

/// This module's part of the segment (the binary's `SEG` is 8 MiB).
pub(crate) const REGION: usize = 4 << 20;
const DST_OFF: usize = REGION;
const SRC_OFF: usize = REGION + (2 << 20);
const HALF: usize = 2 << 20;

/// A view of `len` bytes at `off` in this rank's segment.
///
/// # Safety
/// The caller uses the range for one collective at a time (between
/// barriers) and holds no other view of it meanwhile: peers write it only
/// as a part of the collective the view is passed to.
pub(crate) unsafe fn seg_bytes<'s>(t: &T, off: usize, len: usize) -> &'s mut [u8] {
    assert!(off + len <= super::SEG, "test region exceeds the segment");
    // SAFETY: the range lies in this rank's attached segment (checked
    // above), which stays mapped until the process exits; exclusivity is
    // the caller's promise.
    unsafe { std::slice::from_raw_parts_mut((t.job.seg.addr() + off) as *mut u8, len) }
}

/// The owner address of `off` in team member `r`'s segment.
pub(crate) fn peer_addr(tm: &Tm, r: Rank, off: usize) -> usize {
    tm.query_bound_segment(r, Flags::empty())
        .expect("query_bound_segment")
        .expect("every rank has a segment")
        .owner_addr
        + off
}

/// The sync modes a run covers: all of them on the primordial team
/// (`full`), three on the split teams (the default, every NOSYNC, every
/// ALLSYNC), which only add the team mapping.
fn modes(full: bool) -> Vec<Flags> {
    if full {
        sync_mode_list()
    } else {
        vec![
            Flags::empty(),
            Flags::COLL_IN_NOSYNC | Flags::COLL_OUT_NOSYNC,
            Flags::COLL_IN_ALLSYNC | Flags::COLL_OUT_ALLSYNC,
        ]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Broadcast,
    Scatter,
    Gather,
    GatherAll,
    Exchange,
}

const KINDS: [Kind; 5] = [
    Kind::Broadcast,
    Kind::Scatter,
    Kind::Gather,
    Kind::GatherAll,
    Kind::Exchange,
];

/// The payload tag of member `r`'s source in call `call`.
fn tag(call: u64, r: Rank) -> u64 {
    call.wrapping_mul(1_000_003).wrapping_add(u64::from(r))
}

/// (dst length, src length) of member `r`.
fn lens(kind: Kind, r: Rank, root: Rank, n: usize, nb: usize) -> (usize, usize) {
    let is_root = r == root;
    match kind {
        Kind::Broadcast => (nb, if is_root { nb } else { 0 }),
        Kind::Scatter => (nb, if is_root { nb * n } else { 0 }),
        Kind::Gather => (if is_root { nb * n } else { 0 }, nb),
        Kind::GatherAll => (nb * n, nb),
        Kind::Exchange => (nb * n, nb * n),
    }
}

/// What member `me`'s dst must hold after call `call`.
fn model(kind: Kind, call: u64, me: Rank, root: Rank, n: usize, nb: usize) -> Vec<u8> {
    let src = |r: Rank| {
        let (_, l) = lens(kind, r, root, n, nb);
        payload(tag(call, r), l)
    };
    match kind {
        Kind::Broadcast => src(root),
        Kind::Scatter => src(root)[me as usize * nb..(me as usize + 1) * nb].to_vec(),
        Kind::Gather if me != root => Vec::new(),
        Kind::Gather | Kind::GatherAll => (0..n as Rank).flat_map(src).collect(),
        Kind::Exchange => (0..n as Rank)
            .flat_map(|r| src(r)[me as usize * nb..(me as usize + 1) * nb].to_vec())
            .collect(),
    }
}

/// Initiates one call of `kind` with this member's buffers.
#[allow(clippy::too_many_arguments)]
fn start<'a>(
    kind: Kind,
    tm: &Tm,
    root: Rank,
    dst: &'a mut [u8],
    src: &'a [u8],
    in_place: bool,
    addrs: Addrs<'_>,
    flags: Flags,
) -> gex::Result<CollHandle<'a>> {
    let is_root = tm.rank() == root;
    match kind {
        Kind::Broadcast => {
            let s = (is_root && !in_place).then_some(src);
            broadcast_nb_with(tm, root, dst, s, addrs, flags)
        }
        Kind::Scatter => scatter_nb_with(tm, root, dst, is_root.then_some(src), addrs, flags),
        Kind::Gather => gather_nb_with(tm, root, is_root.then_some(dst), src, addrs, flags),
        Kind::GatherAll => gather_all_nb_with(tm, dst, src, addrs, flags),
        Kind::Exchange => exchange_nb_with(tm, dst, src, addrs, flags),
    }
}

/// The `Addrs::Single` lists of a call whose buffers sit at `DST_OFF` and
/// `SRC_OFF` (`src_at_dst`: an in-place broadcast root's source is its
/// dst).
fn single_lists(kind: Kind, tm: &Tm, root: Rank, src_at_dst: bool) -> (Vec<usize>, Vec<usize>) {
    let n = tm.size();
    let every = |off| (0..n).map(|r| peer_addr(tm, r, off)).collect::<Vec<_>>();
    let rootonly = |off| vec![peer_addr(tm, root, off)];
    match kind {
        Kind::Broadcast if src_at_dst => (every(DST_OFF), rootonly(DST_OFF)),
        Kind::Broadcast | Kind::Scatter => (every(DST_OFF), rootonly(SRC_OFF)),
        Kind::Gather => (rootonly(DST_OFF), every(SRC_OFF)),
        Kind::GatherAll | Kind::Exchange => (every(DST_OFF), every(SRC_OFF)),
    }
}

/// Over `tm` (any team: a member's buffers sit at the same offsets of its
/// segment whatever the team): every data collective × address mode ×
/// segment hints × sync mode,
/// roots rotating, sizes from 1 byte to past the AM Medium limit, the
/// broadcast root sometimes in place; every byte of every member's output
/// checked, and the sources left as they were.
pub(crate) fn address_modes(t: &T, tm: &Tm, label: u64, full: bool) {
    let (me, n) = (tm.rank(), tm.size() as usize);
    let hints = [
        Flags::empty(),
        Flags::COLL_DST_IN_SEGMENT,
        Flags::COLL_SRC_IN_SEGMENT,
        Flags::COLL_DST_IN_SEGMENT | Flags::COLL_SRC_IN_SEGMENT,
    ];
    // 70 KB (past the AM Medium limit) once per combination of the other
    // parameters; smaller sizes otherwise (a debug build checks every
    // byte of 8 members' outputs slowly).
    let sizes = [1usize, 37, 4099];
    let modes = modes(full);
    let mut call = label << 32;
    for kind in KINDS {
        for single in [false, true] {
            for &hint in &hints {
                for (mi, &mode) in modes.iter().enumerate() {
                    call += 1;
                    let nb = if mi == 1 {
                        70_001
                    } else {
                        sizes[(call as usize + mi) % sizes.len()]
                    };
                    let root = (call % n as u64) as Rank;
                    let in_place = kind == Kind::Broadcast && call.is_multiple_of(3);
                    let (dl, sl) = lens(kind, me, root, n, nb);
                    // SAFETY: one call at a time between barriers; the two
                    // ranges do not overlap (HALF apart, each below HALF).
                    let (dst, src) = unsafe {
                        (
                            seg_bytes(t, DST_OFF, dl.min(HALF)),
                            seg_bytes(t, SRC_OFF, sl.min(HALF)),
                        )
                    };
                    dst.fill(0xEE);
                    src.copy_from_slice(&payload(tag(call, me), sl));
                    if in_place && me == root {
                        dst.copy_from_slice(src);
                    }
                    let lists = single_lists(kind, tm, root, in_place);
                    let addrs = if single {
                        Addrs::Single {
                            dst: &lists.0,
                            src: &lists.1,
                        }
                    } else {
                        Addrs::Local
                    };
                    let what = format!(
                        "{kind:?} {} hints {hint:?} mode {mode:?} {nb} B root {root}{}",
                        if single { "SINGLE" } else { "LOCAL" },
                        if in_place { " in place" } else { "" }
                    );
                    t.barrier(tm);
                    let h = start(kind, tm, root, dst, src, in_place, addrs, mode | hint)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    t.wait(h, &what);
                    // SAFETY: the call is complete on this rank; its
                    // output is read here before the next barrier.
                    let got = unsafe { seg_bytes(t, DST_OFF, dl) };
                    let want = model(kind, call, me, root, n, nb);
                    if let Some(i) = (0..dl).find(|&i| got[i] != want[i]) {
                        panic!(
                            "rank {me}: {what}: dst byte {i} of {dl} is {:#04x}, expected {:#04x}",
                            got[i], want[i]
                        );
                    }
                    // SAFETY: as above.
                    let s = unsafe { seg_bytes(t, SRC_OFF, sl) };
                    assert!(
                        s == &payload(tag(call, me), sl)[..],
                        "rank {me}: {what}: the source changed"
                    );
                    t.barrier(tm);
                }
            }
        }
    }
}

/// The address modes' argument errors: a false segment hint on one member
/// (every member fails, naming it; nothing moved), a false one in a
/// SINGLE list, a SINGLE list of the wrong length or not naming the
/// member's own buffer.
pub(crate) fn address_mode_errors(t: &T) {
    let tm = &t.job.tm;
    let (me, n) = (tm.rank(), tm.size() as usize);
    let nb = 24;
    let liar = (n - 1) as Rank;
    for kind in KINDS {
        let root = 0;
        let (dl, sl) = lens(kind, me, root, n, nb);
        // SAFETY: one call at a time between barriers, disjoint ranges.
        let (dst, src) = unsafe { (seg_bytes(t, DST_OFF, dl), seg_bytes(t, SRC_OFF, sl)) };
        dst.fill(0xEE);
        src.fill(0x11);
        let mut outside = vec![0xEEu8; dl];
        // Member `liar` passes a dst outside its segment, under LOCAL:
        // every member fails, naming it, and nothing moved.
        let lying = me == liar && dl > 0;
        let liar_has_dst = lens(kind, liar, root, n, nb).0 > 0;
        t.barrier(tm);
        let d: &mut [u8] = if lying { &mut outside } else { dst };
        let r = start(
            kind,
            tm,
            root,
            d,
            src,
            false,
            Addrs::Local,
            Flags::COLL_DST_IN_SEGMENT,
        );
        if liar_has_dst {
            let e = r.expect_err("a false COLL_DST_IN_SEGMENT");
            assert_eq!(e.kind(), ErrorKind::BadArg, "{kind:?}: {e}");
            let m = e.message();
            assert!(
                m.contains("COLL_DST_IN_SEGMENT is false")
                    && m.contains(&format!("rank {liar}'s dst")),
                "{kind:?}: {m}"
            );
        } else {
            t.wait(r.expect("a true hint"), "hinted call");
        }
        if liar_has_dst {
            // SAFETY: the call failed on every member; nothing writes the
            // range.
            let d = unsafe { seg_bytes(t, DST_OFF, dl) };
            assert!(d.iter().all(|&b| b == 0xEE), "{kind:?}: something moved");
            assert!(outside.iter().all(|&b| b == 0xEE), "{kind:?}: moved");
        }
        t.barrier(tm);
        // A SINGLE list naming an address past rank `liar`'s segment: the
        // same error on every member.
        let (mut dl_list, sl_list) = single_lists(kind, tm, root, false);
        let li = if dl_list.len() == 1 { 0 } else { liar as usize };
        let liar_dst = if dl_list.len() == 1 { root } else { liar };
        dl_list[li] = peer_addr(tm, liar_dst, super::SEG - 8);
        // SAFETY: as above.
        let (dst, src) = unsafe { (seg_bytes(t, DST_OFF, dl), seg_bytes(t, SRC_OFF, sl)) };
        let own_wrong = me == liar_dst && dl > 0;
        let r = start(
            kind,
            tm,
            root,
            dst,
            src,
            false,
            Addrs::Single {
                dst: &dl_list,
                src: &sl_list,
            },
            Flags::COLL_DST_IN_SEGMENT,
        );
        let e = r.expect_err("a false hint in a SINGLE list");
        assert_eq!(e.kind(), ErrorKind::BadArg, "{kind:?}: {e}");
        if own_wrong {
            // This member's own entry is not its buffer: caught first.
            assert!(e.message().contains("Addrs::Single names"), "{e}");
        } else {
            assert!(
                e.message().contains(&format!("rank {liar_dst}'s dst")),
                "{kind:?}: {e}"
            );
        }
        // Wrong lengths.
        let r = start(
            kind,
            tm,
            root,
            dst,
            src,
            false,
            Addrs::Single {
                dst: &[],
                src: &sl_list,
            },
            Flags::empty(),
        );
        let e = r.expect_err("an empty SINGLE list");
        assert!(e.message().contains("Addrs::Single needs"), "{e}");
        t.barrier(tm);
    }
}

// ------------------------------------------------------ multi-address forms

/// How many images member `r` has in variant `v` (1 to 3; in variant 2,
/// member 0 has none when there are others).
fn images_of(r: Rank, n: usize, v: u64) -> usize {
    if v == 2 && r == 0 && n > 1 {
        0
    } else {
        1 + ((u64::from(r) + v) % 3) as usize
    }
}

/// The owner of every image: consecutive ranges (`local`) or dealt round
/// the members while they have images left (`!local`, the SINGLE lists,
/// so that a member's images are not consecutive).
fn owners(n: usize, v: u64, local: bool) -> Vec<Rank> {
    let mut left: Vec<usize> = (0..n as Rank).map(|r| images_of(r, n, v)).collect();
    let total: usize = left.iter().sum();
    let mut out = Vec::with_capacity(total);
    if local {
        for (r, &k) in left.iter().enumerate() {
            out.extend(std::iter::repeat_n(r as Rank, k));
        }
        return out;
    }
    let mut r = 0;
    while out.len() < total {
        if left[r] > 0 {
            left[r] -= 1;
            out.push(r as Rank);
        }
        r = (r + 1) % n;
    }
    out
}

/// Every multi-address form × address mode × sync mode, the three image
/// layouts in turn (1 to 3 images per member, one layout with a member
/// that has none), roots rotating; every byte of every image's output
/// checked.
pub(crate) fn multi_address(t: &T, tm: &Tm, label: u64, full: bool) {
    use gex::coll::{broadcasti_nb, exchangei_nb, gather_alli_nb, gatheri_nb, scatteri_nb, Images};
    let (me, n) = (tm.rank(), tm.size() as usize);
    let sizes = [1usize, 100, 5000];
    let mut call = label << 32;
    for kind in KINDS {
        for local in [true, false] {
            for (mi, &mode) in modes(full).iter().enumerate() {
                // The three layouts in turn.
                let v = mi as u64 % 3;
                call += 1;
                let nb = if mi == 0 {
                    66_000
                } else {
                    sizes[(call as usize) % sizes.len()]
                };
                let root = (call % n as u64) as Rank;
                let owner = owners(n, v, local);
                let nblocks = owner.len();
                let mine: Vec<usize> = (0..nblocks).filter(|&i| owner[i] == me).collect();
                let first = mine.first().copied().unwrap_or(0);
                let images = if local {
                    Images::Local { first, nblocks }
                } else {
                    Images::Single { nodes: &owner }
                };
                let root_tag = tag(call, 1 << 20);
                let src_of = |i: usize, len: usize| payload(tag(call, i as Rank), len);
                let (dl, sl) = match kind {
                    Kind::Broadcast | Kind::Scatter => (nb, 0),
                    Kind::Gather => (0, nb),
                    Kind::GatherAll => (nblocks * nb, nb),
                    Kind::Exchange => (nblocks * nb, nblocks * nb),
                };
                let mut dsts: Vec<Vec<u8>> = mine.iter().map(|_| vec![0xEE; dl]).collect();
                let srcs: Vec<Vec<u8>> = mine.iter().map(|&i| src_of(i, sl)).collect();
                let src_refs: Vec<&[u8]> = srcs.iter().map(|s| &s[..]).collect();
                let root_len = match kind {
                    Kind::Broadcast => nb,
                    _ => nblocks * nb,
                };
                let root_src = payload(root_tag, root_len);
                let mut root_dst = vec![0xEEu8; nblocks * nb];
                let is_root = me == root;
                let what = format!(
                    "{kind:?}i {} layout {v} mode {mode:?} {nb} B root {root}",
                    if local { "LOCAL" } else { "SINGLE" }
                );
                let d_iter = dsts.iter_mut().map(|d| &mut d[..]);
                let h = match kind {
                    Kind::Broadcast => broadcasti_nb(
                        tm,
                        images,
                        root,
                        d_iter,
                        is_root.then_some(&root_src[..]),
                        nb,
                        mode,
                    ),
                    Kind::Scatter => scatteri_nb(
                        tm,
                        images,
                        root,
                        d_iter,
                        is_root.then_some(&root_src[..]),
                        nb,
                        mode,
                    ),
                    Kind::Gather => gatheri_nb(
                        tm,
                        images,
                        root,
                        is_root.then_some(&mut root_dst[..]),
                        &src_refs,
                        nb,
                        mode,
                    ),
                    Kind::GatherAll => gather_alli_nb(tm, images, d_iter, &src_refs, nb, mode),
                    Kind::Exchange => exchangei_nb(tm, images, d_iter, &src_refs, nb, mode),
                }
                .unwrap_or_else(|e| panic!("rank {me}: {what}: {e}"));
                t.wait(h, &what);
                let check = |w: &str, got: &[u8], want: &[u8]| {
                    assert_eq!(got.len(), want.len(), "rank {me}: {what}: {w} length");
                    if let Some(b) = (0..got.len()).find(|&b| got[b] != want[b]) {
                        panic!(
                            "rank {me}: {what}: {w} byte {b} of {} is {:#04x}, expected {:#04x}",
                            got.len(),
                            got[b],
                            want[b]
                        );
                    }
                };
                // Every image's source, computed once.
                let all_srcs: Vec<Vec<u8>> = match kind {
                    Kind::GatherAll | Kind::Exchange | Kind::Gather => {
                        (0..nblocks).map(|i| src_of(i, sl)).collect()
                    }
                    _ => Vec::new(),
                };
                let gathered: Vec<u8> = match kind {
                    Kind::GatherAll | Kind::Gather => all_srcs.concat(),
                    _ => Vec::new(),
                };
                for (k, &j) in mine.iter().enumerate() {
                    let want: Vec<u8> = match kind {
                        Kind::Broadcast => root_src.clone(),
                        Kind::Scatter => root_src[j * nb..(j + 1) * nb].to_vec(),
                        Kind::Gather => continue,
                        Kind::GatherAll => gathered.clone(),
                        Kind::Exchange => all_srcs
                            .iter()
                            .flat_map(|s| s[j * nb..(j + 1) * nb].iter().copied())
                            .collect(),
                    };
                    check(&format!("image {j}'s dst"), &dsts[k], &want);
                }
                if kind == Kind::Gather && is_root {
                    check("root's dst", &root_dst, &gathered);
                }
            }
        }
    }
}

/// The multi-address forms' argument errors that every member reports
/// alike: LOCAL ranges that overlap or leave a gap, members that disagree
/// on nblocks, a false segment hint on one member; and the local ones.
pub(crate) fn multi_address_errors(t: &T) {
    use gex::coll::{gather_alli_nb, scatteri_nb, Images};
    let tm = &t.job.tm;
    let (me, n) = (tm.rank(), tm.size() as usize);
    let nb = 8;
    let try_gather_all = |images: Images<'_>, k: usize, flags: Flags| {
        let mut dsts = vec![vec![0u8; n * nb]; k];
        let srcs = vec![vec![1u8; nb]; k];
        let refs: Vec<&[u8]> = srcs.iter().map(|s| &s[..]).collect();
        let r = gather_alli_nb(
            tm,
            images,
            dsts.iter_mut().map(|d| &mut d[..]),
            &refs,
            nb,
            flags,
        );
        match r {
            Ok(h) => {
                t.wait(h, "gather_alli");
                None
            }
            Err(e) => Some(e),
        }
    };
    // Every member claims block 0.
    if n > 1 {
        let e = try_gather_all(
            Images::Local {
                first: 0,
                nblocks: n,
            },
            1,
            Flags::empty(),
        )
        .expect("overlapping ranges");
        assert!(e.message().contains("claimed by ranks 0 and 1"), "{e}");
    }
    // One block too many: a gap.
    let e = try_gather_all(
        Images::Local {
            first: me as usize,
            nblocks: n + 1,
        },
        1,
        Flags::empty(),
    )
    .expect("a gap");
    assert!(
        e.message().contains(&format!("no member has image {n}")),
        "{e}"
    );
    // Disagreeing nblocks.
    if n > 1 {
        let nbl = if me == 1 { n + 5 } else { n };
        let e = try_gather_all(
            Images::Local {
                first: me as usize,
                nblocks: nbl,
            },
            1,
            Flags::empty(),
        )
        .expect("disagreeing nblocks");
        assert!(e.message().contains("disagree on nblocks"), "{e}");
    }
    // A false hint on the last member (its buffers are not in the segment;
    // everyone else's are): every member fails, naming it.
    let liar = (n - 1) as Rank;
    let mut dst_seg_ok = vec![0u8; n * nb];
    // SAFETY: one call at a time between barriers.
    let seg_dst = unsafe { seg_bytes(t, DST_OFF, n * nb) };
    let src_seg = unsafe { seg_bytes(t, SRC_OFF, nb) };
    seg_dst.fill(0xEE);
    let d: &mut [u8] = if me == liar { &mut dst_seg_ok } else { seg_dst };
    let r = gather_alli_nb(
        tm,
        Images::Local {
            first: me as usize,
            nblocks: n,
        },
        std::iter::once(d),
        &[&*src_seg],
        nb,
        Flags::COLL_DST_IN_SEGMENT,
    );
    let e = r.expect_err("a false hint");
    assert!(
        e.message()
            .contains(&format!("rank {liar}'s buffers are not all inside")),
        "{e}"
    );
    // Local errors: a SINGLE list naming a rank outside the team, a
    // member passing a buffer count the list does not give it, a root
    // without its source.
    let bad = [n as Rank];
    let e = try_gather_all(Images::Single { nodes: &bad }, 0, Flags::empty()).expect("bad node");
    assert!(e.message().contains("not a rank of the team"), "{e}");
    let nodes: Vec<Rank> = (0..n as Rank).collect();
    let e =
        try_gather_all(Images::Single { nodes: &nodes }, 2, Flags::empty()).expect("wrong count");
    assert!(e.message().contains("passes 2 buffers"), "{e}");
    let mut d = [0u8; 8];
    let e = scatteri_nb(
        tm,
        Images::Single { nodes: &nodes },
        me,
        std::iter::once(&mut d[..]),
        None,
        8,
        Flags::empty(),
    )
    .expect_err("root without src");
    assert!(e.message().contains("the root needs a src"), "{e}");
    t.barrier(tm);
}

// ------------------------------------------------------------ all_put / all_get

/// all_put, all_puti, all_get and all_geti in the notes' patterns, every
/// sync mode, partners as a list and as a count: a permutation (one
/// partner each), a flat broadcast (the root has no partner, the others
/// one), a gather-all by puts (n - 1 partners) and an exchange by gets;
/// every byte checked, sources unchanged.
pub(crate) fn generalised(t: &T, tm: &Tm, label: u64, full: bool) {
    use gex::coll::{all_get_nb, all_geti_nb, all_put_nb, all_puti_nb, Partners};
    let (me, n) = (tm.rank(), tm.size() as usize);
    let nu = n as Rank;
    let sizes = [1usize, 64, 3000];
    let mut call = label << 32;
    for pattern in 0..4u32 {
        for listed in [true, false] {
            for (mi, &mode) in modes(full).iter().enumerate() {
                call += 1;
                let nb = if mi == 1 {
                    70_001
                } else {
                    sizes[(call as usize + mi) % sizes.len()]
                };
                let shift = 1 + (call % nu.max(2) as u64) as Rank;
                let root = (call % n as u64) as Rank;
                let src_len = if pattern == 3 { n * nb } else { nb };
                let dst_len = if pattern == 2 || pattern == 3 {
                    n * nb
                } else {
                    nb
                };
                // SAFETY: one call at a time between barriers, disjoint.
                let (dst, src) = unsafe {
                    (
                        seg_bytes(t, DST_OFF, dst_len),
                        seg_bytes(t, SRC_OFF, src_len),
                    )
                };
                dst.fill(0xEE);
                src.copy_from_slice(&payload(tag(call, me), src_len));
                let what = format!(
                    "pattern {pattern} {} mode {mode:?} {nb} B",
                    if listed { "list" } else { "count" }
                );
                t.barrier(tm);
                let h = match pattern {
                    0 => {
                        // Permutation: me -> me + shift.
                        let to = (me + shift) % nu;
                        let from = (me + nu - shift % nu) % nu;
                        let plist = if from == me { vec![] } else { vec![from] };
                        let p = if listed {
                            Partners::List(&plist)
                        } else {
                            Partners::Count(plist.len())
                        };
                        all_put_nb(tm, to, peer_addr(tm, to, DST_OFF), src, p, mode)
                    }
                    1 => {
                        // Flat broadcast by puts from the root.
                        let (nodes, dsts, srcs): (Vec<Rank>, Vec<usize>, Vec<&[u8]>) = if me == root
                        {
                            (0..nu)
                                .filter(|&r| r != root)
                                .map(|r| (r, peer_addr(tm, r, DST_OFF), &src[..]))
                                .fold((vec![], vec![], vec![]), |mut a, (r, d, s)| {
                                    a.0.push(r);
                                    a.1.push(d);
                                    a.2.push(s);
                                    a
                                })
                        } else {
                            (vec![], vec![], vec![])
                        };
                        let plist = if me == root { vec![] } else { vec![root] };
                        let p = if listed {
                            Partners::List(&plist)
                        } else {
                            Partners::Count(plist.len())
                        };
                        all_puti_nb(tm, &nodes, &dsts, &srcs, p, nb, mode)
                    }
                    2 => {
                        // Gather-all by puts: my block to slot `me` of
                        // everyone's dst, mine included.
                        let nodes: Vec<Rank> = (0..nu).collect();
                        let dsts: Vec<usize> = (0..nu)
                            .map(|r| peer_addr(tm, r, DST_OFF + me as usize * nb))
                            .collect();
                        let srcs: Vec<&[u8]> = vec![&src[..]; n];
                        let plist: Vec<Rank> = (0..nu).filter(|&r| r != me).collect();
                        let p = if listed {
                            Partners::List(&plist)
                        } else {
                            Partners::Count(plist.len())
                        };
                        all_puti_nb(tm, &nodes, &dsts, &srcs, p, nb, mode)
                    }
                    _ => {
                        // Exchange by gets: block `me` of r's src into
                        // block r of my dst.
                        let nodes: Vec<Rank> = (0..nu).collect();
                        let srcs: Vec<usize> = (0..nu)
                            .map(|r| peer_addr(tm, r, SRC_OFF + me as usize * nb))
                            .collect();
                        let plist: Vec<Rank> = (0..nu).filter(|&r| r != me).collect();
                        let p = if listed {
                            Partners::List(&plist)
                        } else {
                            Partners::Count(plist.len())
                        };
                        all_geti_nb(tm, dst.chunks_mut(nb), &nodes, &srcs, p, nb, mode)
                    }
                }
                .unwrap_or_else(|e| panic!("rank {me}: {what}: {e}"));
                t.wait(h, &what);
                // SAFETY: complete on this rank; read before the barrier.
                let got = unsafe { seg_bytes(t, DST_OFF, dst_len) };
                let want: Vec<u8> = match pattern {
                    0 => {
                        let from = (me + nu - shift % nu) % nu;
                        payload(tag(call, from), nb)
                    }
                    1 if me == root => vec![0xEE; nb],
                    1 => payload(tag(call, root), nb),
                    2 => (0..nu).flat_map(|r| payload(tag(call, r), nb)).collect(),
                    _ => (0..nu)
                        .flat_map(|r| {
                            payload(tag(call, r), n * nb)[me as usize * nb..(me as usize + 1) * nb]
                                .to_vec()
                        })
                        .collect(),
                };
                if let Some(i) = (0..dst_len).find(|&i| got[i] != want[i]) {
                    panic!(
                        "rank {me}: {what}: byte {i} of {dst_len} is {:#04x}, expected {:#04x}",
                        got[i], want[i]
                    );
                }
                // SAFETY: as above.
                let s = unsafe { seg_bytes(t, SRC_OFF, src_len) };
                assert!(
                    s == &payload(tag(call, me), src_len)[..],
                    "rank {me}: {what}: source changed"
                );
                t.barrier(tm);
            }
        }
    }
    // all_get of one block from the next member, which lists the member
    // before it as its partner.
    for (mi, &mode) in modes(full).iter().enumerate() {
        call += 1;
        let nb = sizes[mi % sizes.len()];
        // SAFETY: one call at a time between barriers, disjoint ranges.
        let (dst, src) = unsafe { (seg_bytes(t, DST_OFF, nb), seg_bytes(t, SRC_OFF, nb)) };
        dst.fill(0xEE);
        src.copy_from_slice(&payload(tag(call, me), nb));
        let next = (me + 1) % nu;
        let prev = (me + nu - 1) % nu;
        let plist = if prev == me { vec![] } else { vec![prev] };
        t.barrier(tm);
        let h = all_get_nb(
            tm,
            dst,
            next,
            peer_addr(tm, next, SRC_OFF),
            Partners::List(&plist),
            mode,
        )
        .unwrap_or_else(|e| panic!("rank {me}: all_get {mode:?}: {e}"));
        t.wait(h, "all_get");
        // SAFETY: complete on this rank.
        let got = unsafe { seg_bytes(t, DST_OFF, nb) };
        assert!(
            got == &payload(tag(call, next), nb)[..],
            "rank {me}: all_get {mode:?} {nb} B: wrong data"
        );
        t.barrier(tm);
    }
}

/// all_put's errors: a member whose put names a range outside its
/// target's segment fails, and its target's sync fails naming it (the
/// others complete); partner lists naming this member, a rank outside
/// the team or one twice, and a count too large, fail on every member.
pub(crate) fn generalised_errors(t: &T) {
    use gex::coll::{all_put_nb, Partners};
    let tm = &t.job.tm;
    let (me, n) = (tm.rank(), tm.size() as usize);
    let nu = n as Rank;
    let nb = 16;
    let src = vec![7u8; nb];
    if n > 1 {
        for mode in [
            Flags::empty(),
            Flags::COLL_IN_NOSYNC,
            Flags::COLL_OUT_ALLSYNC,
        ] {
            // A ring; member 0 puts past the end of member 1's segment.
            let to = (me + 1) % nu;
            let from = (me + nu - 1) % nu;
            let addr = if me == 0 {
                peer_addr(tm, to, super::SEG - 4)
            } else {
                peer_addr(tm, to, DST_OFF)
            };
            t.barrier(tm);
            let r = all_put_nb(tm, to, addr, &src, Partners::List(&[from]), mode);
            if me == 0 {
                let e = r.expect_err("a put outside the segment");
                assert_eq!(e.kind(), ErrorKind::BadArg);
                assert!(e.message().contains("rank 1's dst"), "{e}");
            } else {
                let h = r.expect("a good put");
                let mut hs = [h];
                let res = CollHandle::wait_all(&mut hs);
                if me == 1 {
                    let e = res.expect_err("the target of a failed put");
                    assert!(e.message().contains("rank 0 failed its part"), "{e}");
                } else {
                    res.expect("the other puts");
                }
            }
            t.barrier(tm);
        }
    }
    let bad_lists: Vec<Vec<Rank>> = vec![vec![me], vec![nu], vec![(me + 1) % nu; 2]];
    for l in &bad_lists {
        let e = all_put_nb(
            tm,
            me,
            peer_addr(tm, me, DST_OFF),
            &src,
            Partners::List(l),
            Flags::empty(),
        )
        .expect_err("a bad partner list");
        assert!(
            e.message().contains("is not another rank of the team"),
            "{e}"
        );
    }
    let e = all_put_nb(
        tm,
        me,
        peer_addr(tm, me, DST_OFF),
        &src,
        Partners::Count(n),
        Flags::empty(),
    )
    .expect_err("too many partners");
    assert!(e.message().contains("partners, but the team has"), "{e}");
    t.barrier(tm);
}

/// The address modes, the multi-address forms and all_put / all_get again
/// over teams from a split: the members in two halves (odd and even
/// jobranks), keys reversed, so team ranks differ from jobranks and two
/// teams run at once.
pub(crate) fn over_split_teams(t: &T, label: u64) {
    use gex::coll::{tm_destroy, tm_split};
    let me = t.me;
    let half = tm_split(
        &t.job.tm,
        Some((me % 2) as i32),
        -(me as i32),
        None,
        Flags::TM_NO_SCRATCH,
    )
    .expect("tm_split")
    .expect("every rank joins a half");
    address_modes(t, &half, label, false);
    multi_address(t, &half, label + 1, false);
    generalised(t, &half, label + 2, false);
    t.barrier(&t.job.tm);
    tm_destroy(half, Flags::empty()).expect("tm_destroy");
}
