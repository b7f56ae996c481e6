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

/// Every data collective × address mode × segment hints × sync mode,
/// roots rotating, sizes from 1 byte to past the AM Medium limit, the
/// broadcast root sometimes in place; every byte of every member's output
/// checked, and the sources left as they were.
pub(crate) fn address_modes(t: &T, label: u64) {
    let tm = &t.job.tm;
    let (me, n) = (tm.rank(), tm.size() as usize);
    let hints = [
        Flags::empty(),
        Flags::COLL_DST_IN_SEGMENT,
        Flags::COLL_SRC_IN_SEGMENT,
        Flags::COLL_DST_IN_SEGMENT | Flags::COLL_SRC_IN_SEGMENT,
    ];
    let sizes = [1usize, 37, 4099, 70_001];
    let modes = sync_mode_list();
    let mut call = label << 32;
    for kind in KINDS {
        for single in [false, true] {
            for &hint in &hints {
                for (mi, &mode) in modes.iter().enumerate() {
                    call += 1;
                    let nb = sizes[(call as usize + mi) % sizes.len()];
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
