//! test-mk: memory kinds, created segments bound to created endpoints,
//! their publication, and RMA between every pair of (rank, endpoint).
//!
//! Every rank creates two endpoints (indices 1 and 2), a segment in library
//! memory of `GEX_MK_HOST` bound to endpoint 1 and one over client memory
//! bound to endpoint 2, and publishes both over the primordial team. Then
//! one thread per endpoint (the primordial one and the two created) puts a
//! tagged pattern into its own slot of every (rank, created endpoint)
//! segment through TM-pairs (blocking, NBI and NB, and a memset), and every
//! rank reads every segment back with gets and compares byte for byte;
//! each rank also puts a transfer larger than one Active Message into its
//! neighbour's client-memory segment. Queries (blocking and NB) report
//! every published segment. Then the segment of endpoint 1 is destroyed,
//! re-created with another size, bound and published again, and used.
//! Long Active Messages to created endpoints' segments: every rank's two
//! created endpoints send a Long request to every (rank, created
//! endpoint), whose handler checks the payload where it landed and answers
//! with a Long reply into the requester's segment; the memory is then
//! checked at the owners. A Long to a neighbour's client memory travels in
//! the message (within `gex_AM_MaxRequestLong` of that pair, which is
//! checked); to an endpoint without a segment, or out of its range, it is
//! an error at the sender, nothing moved. A Long of the LUB size
//! (`gex_AM_LUBRequestLong`, and a reply of `gex_AM_LUBReplyLong`) to a
//! created endpoint's library-memory segment arrives whole, and the pair's
//! and the token's limits are at least the LUBs.
//! VIS (vector, indexed, strided; blocking, NB and NBI) between every
//! (rank, created endpoint), with the region's guard bytes checked at the
//! owner and the data read back with VIS gets, and a run longer than any
//! Medium message; to an endpoint without a segment an error.
//! Publication over sub-teams (`gex_TM_Split` by parity, keys reversed, so
//! odd job sizes give teams of unequal sizes and one of a single member,
//! and over a split team of every rank): members reach each other's
//! segments, non-members get an error; one member's bad arguments fail the
//! call on every member of its team.
//! The errors: memory kinds (device classes without their runtime, a
//! destroyed kind, destroying GEX_MK_HOST or twice), bad create, bind and
//! destroy arguments, binding twice, RMA to an unbound or unpublished
//! endpoint segment and out of its range (nothing moved), publishing with
//! a duplicated endpoint (every rank fails).

use gex::am::{register_handlers, AmRequest, HandlerEntry, LcOpt};
use gex::coll::{tm_destroy, tm_split};
use gex::mk::{
    ep_bind_segment, ep_publish_bound_segment, mk_create, segment_create, segment_create_at,
    segment_destroy, segment_kind, Mk, MkArgs, MkClass,
};
use gex::rma::Rma;
use gex::vis::{StridedLocal, Vis};
use gex::{Ec, Ep, EpCapabilities, ErrorKind, Flags, Lc, Memvec, TmRef};
use gex_testsuite::{check_payload, payload, Job};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

/// Bytes of each created segment (the re-created one is twice that).
const SEG: usize = 64 * 1024;
/// Each (source rank, source endpoint) owns a slot of this many bytes in
/// every created segment.
const SLOT: usize = 512;
/// Endpoints per rank that send: the primordial one and two created.
const SENDERS: u32 = 3;
/// Where the large put goes in the client-memory segment, and its length
/// (more than one Active Message of any conduit).
const BIG_AT: usize = 16 * 1024;
const BIG: usize = 40_000;

fn slot(src: u32, src_ep: u32) -> usize {
    (src * SENDERS + src_ep) as usize * SLOT
}

fn tag(src: u32, src_ep: u32, dst: u32, dst_ep: u32) -> u64 {
    (u64::from(src) << 32) | (u64::from(src_ep) << 24) | (u64::from(dst) << 8) | u64::from(dst_ep)
}

/// The bytes (src, src_ep) put into (dst, dst_ep)'s segment: a pattern in
/// the first half of its slot, then a memset of 64 bytes of `0xa5 ^ src`.
fn expected(src: u32, src_ep: u32, dst: u32, dst_ep: u32) -> Vec<u8> {
    let mut v = payload(tag(src, src_ep, dst, dst_ep), SLOT - 64);
    v.extend(std::iter::repeat_n(0xa5 ^ src as u8, 64));
    v
}

fn main() {
    let job = Job::start("TESTMK", 1 << 16);
    let (me, n) = (job.rank(), job.size());
    assert!(n <= 8, "test-mk's slots hold up to 8 ranks");
    assert!(slot(8, 0) <= BIG_AT && BIG_AT + BIG <= SEG);

    kinds(&job);

    let ep1 = Ep::create(&job.client, EpCapabilities::ALL, Flags::empty()).expect("create ep1");
    let ep2 = Ep::create(&job.client, EpCapabilities::ALL, Flags::empty()).expect("create ep2");
    assert_eq!((ep1.index(), ep2.index()), (1, 2));

    // Segments: library memory, and client memory (freed at the end).
    let host = Mk::host();
    let seg1 = segment_create(&job.client, &host, SEG, Flags::empty()).expect("create seg1");
    let client_mem: &'static mut [u8] = Box::leak(vec![0u8; SEG].into_boxed_slice());
    let client_addr = client_mem.as_mut_ptr() as usize;
    // SAFETY: the leaked buffer lives for the rest of the process and is
    // not touched through `client_mem` again.
    let seg2 = unsafe { segment_create_at(&job.client, client_addr, SEG, &host, Flags::empty()) }
        .expect("create seg2");
    assert!(seg1.is_created() && seg2.is_created() && !job.seg.is_created());
    assert_eq!(seg2.addr(), client_addr);
    assert_eq!((seg1.size(), seg2.size()), (SEG, SEG));
    assert_eq!(segment_kind(&seg1), Some(host.clone()));
    assert_eq!(segment_kind(&job.seg), None);
    let mut z = vec![1u8; 64];
    seg1.read(0, &mut z).unwrap();
    assert!(z.iter().all(|&b| b == 0), "library memory starts zeroed");

    bad_create(&job);

    // Before binding: RMA to the endpoint's segment is an error naming it.
    let e = ep1
        .pair(1)
        .put_blocking(me, 0, &[1u8; 8][..], Flags::PEER_SEG_OFFSET)
        .unwrap_err();
    assert!(
        e.message().contains("endpoint 1 of rank") && e.message().contains("no segment known"),
        "{e}"
    );
    assert_eq!(
        job.ep
            .pair(1)
            .query_bound_segment(me, Flags::empty())
            .unwrap(),
        None
    );

    ep_bind_segment(&ep1, &seg1, Flags::empty()).expect("bind seg1");
    ep_bind_segment(&ep2, &seg2, Flags::empty()).expect("bind seg2");
    bad_bind(&job, &ep1, &ep2, &seg1);
    assert_eq!(ep1.segment().unwrap().addr(), seg1.addr());
    assert_eq!(seg2.bound_ep_index(), Some(2));

    // Bound but not published: this process reaches its own at once, a
    // peer's not yet.
    ep1.pair(1)
        .put_blocking(me, 8, &[9u8; 8][..], Flags::PEER_SEG_OFFSET)
        .expect("put to own bound segment");
    seg1.read(8, &mut z[..8]).unwrap();
    assert_eq!(&z[..8], &[9u8; 8]);
    ep1.pair(1)
        .memset_blocking(me, 8, 0, 8, Flags::PEER_SEG_OFFSET)
        .unwrap();
    if n > 1 {
        let peer = (me + 1) % n;
        let e = ep1
            .pair(2)
            .put_blocking(peer, 0, &[1u8; 8][..], Flags::PEER_SEG_OFFSET)
            .unwrap_err();
        assert!(e.message().contains("no segment known"), "{e}");
    }

    // Publication: a duplicated endpoint on every rank fails everywhere.
    let e = ep_publish_bound_segment(&job.tm, &[&ep1, &ep1], Flags::empty()).unwrap_err();
    assert!(e.message().contains("named twice"), "{e}");
    ep_publish_bound_segment(&job.tm, &[&job.ep, &ep1, &ep2], Flags::empty()).expect("publish");

    queries(&job, &[(1, seg1.size()), (2, SEG)], &[&seg1, &seg2]);
    longs(&job, &[&ep1, &ep2], &[&seg1, &seg2]);
    vis(&job, &[&ep1, &ep2], &[&seg1, &seg2]);

    routes(&job);
    let one_sided = || {
        gex::stats()
            .ok()
            .and_then(|s| Some(s.get("rma_puts")? + s.get("rma_gets")?))
            .unwrap_or(0)
    };
    let before = one_sided();
    // RMA between every pair of (rank, endpoint): one thread per sender.
    let senders = [job.ep.clone(), ep1.clone(), ep2.clone()];
    std::thread::scope(|sc| {
        for (i, ep) in senders.iter().enumerate() {
            sc.spawn(move || send_all(me, n, i as u32, ep));
        }
    });
    // The large put to the neighbour's client-memory segment.
    let next = (me + 1) % n;
    let big = payload(tag(me, 9, next, 2), BIG);
    ep1.pair(2)
        .put_blocking(next, BIG_AT, &big[..], Flags::PEER_SEG_OFFSET)
        .expect("large put");
    job.barrier();
    check_all(&job, &ep2, &[1, 2]);
    if gex::rma::route_to(&job.ep, 2, (me + 1) % n) == gex::rma::Route::Conduit {
        assert!(
            one_sided() > before,
            "rank {me}: the conduit's one-sided route moved nothing"
        );
    }
    let prev = (me + n - 1) % n;
    let mut got = vec![0u8; BIG];
    seg2.read(BIG_AT, &mut got).unwrap();
    check_payload("large put (local read)", tag(prev, 9, me, 2), &got);
    let mut got = vec![0u8; BIG];
    job.ep
        .pair(2)
        .get_blocking(&mut got[..], next, BIG_AT, Flags::PEER_SEG_OFFSET)
        .unwrap();
    check_payload("large put (get)", tag(me, 9, next, 2), &got);

    // Out of range: an error naming the range, nothing moved.
    for r in 0..n {
        let e = ep2
            .pair(1)
            .put_blocking(r, SEG - 4, &[0xeeu8; 8][..], Flags::PEER_SEG_OFFSET)
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BadArg);
        assert!(e.message().contains("range"), "{e}");
        let mut back = [0u8; 4];
        ep2.pair(1)
            .get_blocking(&mut back[..], r, SEG - 4, Flags::PEER_SEG_OFFSET)
            .unwrap();
        assert_eq!(back, [0u8; 4], "nothing moved");
    }
    job.barrier();

    // Destroy and re-create the segment of endpoint 1.
    segment_destroy(&seg1, Flags::empty()).expect("destroy seg1");
    assert!(seg1.is_destroyed() && ep1.segment().is_none());
    let e = segment_destroy(&seg1, Flags::empty()).unwrap_err();
    assert!(e.message().contains("destroyed already"), "{e}");
    assert!(
        seg1.read(0, &mut z).is_err(),
        "a destroyed segment is not read"
    );
    let e = ep1
        .pair(1)
        .put_blocking(me, 0, &[1u8; 8][..], Flags::PEER_SEG_OFFSET)
        .unwrap_err();
    assert!(e.message().contains("no segment known"), "{e}");
    let e = ep_bind_segment(&ep2, &seg1, Flags::empty()).unwrap_err();
    assert!(e.message().contains("destroyed"), "{e}");
    let seg3 = segment_create(&job.client, &host, 2 * SEG, Flags::empty()).expect("re-create");
    ep_bind_segment(&ep1, &seg3, Flags::empty()).expect("bind the re-created segment");
    ep_publish_bound_segment(&job.tm, &[&ep1], Flags::empty()).expect("publish again");
    queries(&job, &[(1, 2 * SEG), (2, SEG)], &[&seg3, &seg2]);
    let v = payload(tag(me, 7, next, 1), 1000);
    job.ep
        .pair(1)
        .put_blocking(next, 2 * SEG - 1000, &v[..], Flags::PEER_SEG_OFFSET)
        .expect("put to the re-created segment");
    job.barrier();
    let mut got = vec![0u8; 1000];
    seg3.read(2 * SEG - 1000, &mut got).unwrap();
    check_payload("put to the re-created segment", tag(prev, 7, me, 1), &got);
    job.barrier();

    subteams(&job);
    dropped_without_destroy(&job);
    lub_longs(&job);

    segment_destroy(&seg3, Flags::empty()).unwrap();
    segment_destroy(&seg2, Flags::empty()).unwrap();
    job.barrier();
    println!("test-mk: rank {me} of {n}: all checks passed");
}

/// Memory kinds: the host kind, device classes without their runtime,
/// destruction.
fn kinds(job: &Job) {
    let host = Mk::host();
    assert_eq!(host.class(), MkClass::Host);
    assert_eq!(host, Mk::host());
    let e = host.destroy(Flags::empty()).unwrap_err();
    assert!(e.message().contains("GEX_MK_HOST"), "{e}");
    for (args, runtime) in [
        (MkArgs::CudaUva { device: 0 }, "CUDA"),
        (MkArgs::Hip { device: 0 }, "HIP"),
        (
            MkArgs::Ze {
                device: 1,
                context: 2,
                memory_ordinal: 0,
            },
            "Level Zero",
        ),
    ] {
        // Unsupported here: BadArg (GASNET_ERR_BAD_ARG), naming the runtime.
        let e = mk_create(&job.client, &args, Flags::empty()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BadArg, "{e}");
        assert!(
            e.message().contains(runtime) && e.message().contains(args.class().spec_name()),
            "{e}"
        );
    }
    let e = mk_create(&job.client, &MkArgs::Host, Flags::IMMEDIATE).unwrap_err();
    assert!(e.message().contains("flags must be 0"), "{e}");
    let mk = mk_create(&job.client, &MkArgs::Host, Flags::empty()).expect("host kind");
    assert_eq!(mk.class(), MkClass::Host);
    assert_ne!(mk, host);
    let seg = segment_create(&job.client, &mk, 4096, Flags::empty()).expect("segment of mk");
    assert_eq!(segment_kind(&seg), Some(mk.clone()));
    mk.destroy(Flags::empty()).expect("destroy mk");
    let e = mk.destroy(Flags::empty()).unwrap_err();
    assert!(e.message().contains("destroyed already"), "{e}");
    let e = segment_create(&job.client, &mk, 4096, Flags::empty()).unwrap_err();
    assert!(e.message().contains("was destroyed"), "{e}");
    // A segment of the destroyed kind keeps its memory until destroyed.
    seg.write(0, &[3u8; 16]).unwrap();
    segment_destroy(&seg, Flags::empty()).unwrap();
}

/// Bad arguments to create and destroy.
fn bad_create(job: &Job) {
    let host = Mk::host();
    let e = segment_create(&job.client, &host, 0, Flags::empty()).unwrap_err();
    assert!(e.message().contains("length 0"), "{e}");
    let e = segment_create(&job.client, &host, 4096, Flags::IMMEDIATE).unwrap_err();
    assert!(e.message().contains("flags must be 0"), "{e}");
    // SAFETY: these calls fail before they could use the memory.
    let e = unsafe { segment_create_at(&job.client, 0, 4096, &host, Flags::empty()) }.unwrap_err();
    assert!(e.message().contains("null"), "{e}");
    // SAFETY: as above.
    let e = unsafe { segment_create_at(&job.client, usize::MAX - 10, 4096, &host, Flags::empty()) }
        .unwrap_err();
    assert!(e.message().contains("wraps"), "{e}");
    let e = segment_destroy(&job.seg, Flags::empty()).unwrap_err();
    assert!(e.message().contains("attached segment"), "{e}");
}

/// Binding errors, with `ep1` and `ep2` bound already and `seg1` bound to
/// `ep1`.
fn bad_bind(job: &Job, ep1: &Ep, ep2: &Ep, seg1: &gex::Segment) {
    let host = Mk::host();
    let spare = segment_create(&job.client, &host, 4096, Flags::empty()).unwrap();
    let e = ep_bind_segment(ep1, &spare, Flags::empty()).unwrap_err();
    assert!(
        e.message().contains("endpoint 1") && e.message().contains("already has a bound segment"),
        "{e}"
    );
    let ep3 = Ep::create(&job.client, EpCapabilities::RMA, Flags::empty()).unwrap();
    // One segment bound to two endpoints, as the reference allows (its
    // testsegment does); the second endpoint cannot take it twice.
    ep_bind_segment(&ep3, seg1, Flags::empty()).expect("bind seg1 to a second endpoint");
    assert_eq!(seg1.bound_ep_indices(), vec![1, ep3.index()]);
    assert_eq!(ep3.segment().map(|s| s.addr()), Some(seg1.addr()));
    let e = ep_bind_segment(&ep3, seg1, Flags::empty()).unwrap_err();
    assert!(e.message().contains("already has a bound segment"), "{e}");
    // The primordial endpoint of a rank that attached keeps that segment.
    let e = ep_bind_segment(&job.ep, &spare, Flags::empty()).unwrap_err();
    assert!(
        e.message().contains("primordial") && e.message().contains("gex_Segment_Attach"),
        "{e}"
    );
    let e = ep_bind_segment(&ep3, &job.seg, Flags::empty()).unwrap_err();
    assert!(e.message().contains("attached segment"), "{e}");
    let e = ep_bind_segment(&ep3, &spare, Flags::IMMEDIATE).unwrap_err();
    assert!(e.message().contains("flags must be 0"), "{e}");
    assert!(ep2.segment().is_some() && ep3.segment().is_some());
    segment_destroy(&spare, Flags::empty()).unwrap();
}

/// Every rank's published segments of `sizes` (index, size) are reported
/// by both query forms, over pairs from any local endpoint; the local ones
/// (`mine`, by index) at their addresses.
fn queries(job: &Job, sizes: &[(u32, usize)], mine: &[&gex::Segment]) {
    let me = job.rank();
    // The launcher names the conduit (the library reads it at init).
    let smp = std::env::var("GEX_CONDUIT").is_ok_and(|c| c == "smp");
    for r in 0..job.size() {
        for (&(index, size), seg) in sizes.iter().zip(mine) {
            let b = job
                .ep
                .pair(index)
                .query_bound_segment(r, Flags::empty())
                .unwrap()
                .unwrap_or_else(|| panic!("rank {r} endpoint {index}: no segment"));
            assert_eq!(b.size, size);
            let mut out = None;
            let ev = job
                .ep
                .pair(index)
                .query_bound_segment_nb(r, &mut out, Flags::IMMEDIATE)
                .unwrap();
            ev.wait().unwrap();
            assert_eq!(out, Some(b));
            if r == me {
                assert_eq!((b.owner_addr, b.local_addr), (seg.addr(), Some(seg.addr())));
            } else if index == 2 {
                assert_eq!(
                    b.local_addr, None,
                    "client memory is private to its process"
                );
            } else if smp {
                assert!(
                    b.local_addr.is_some(),
                    "rank {me}: library memory of rank {r} is mapped here on smp"
                );
            }
        }
        // An index nobody published.
        assert_eq!(
            job.ep
                .pair(5)
                .query_bound_segment(r, Flags::empty())
                .unwrap(),
            None
        );
    }
}

/// Sender `src_ep` of rank `me` writes its slot of every (rank, created
/// endpoint) segment: a blocking, an NBI and an NB put of three parts of
/// the pattern, then a memset.
fn send_all(me: u32, n: u32, src_ep: u32, ep: &Ep) {
    let at = slot(me, src_ep);
    for dst in 0..n {
        for dst_ep in [1u32, 2] {
            let pair = ep.pair(dst_ep);
            let v = expected(me, src_ep, dst, dst_ep);
            let (a, rest) = v[..SLOT - 64].split_at(100);
            let (b, c) = rest.split_at(200);
            let f = Flags::PEER_SEG_OFFSET;
            pair.put_blocking(dst, at, a, f).expect("blocking put");
            pair.put_nbi(dst, at + 100, b, Lc::Now, f).expect("NBI put");
            gex::nbi::wait(Ec::PUT, Flags::empty()).expect("NBI wait");
            pair.put_nb(dst, at + 300, c, Lc::Now, f)
                .expect("NB put")
                .wait()
                .expect("NB put wait");
            pair.memset_blocking(dst, at + SLOT - 64, 0xa5 ^ me as u8, 64, f)
                .expect("memset");
        }
    }
}

/// Every slot of every (rank, endpoint in `indices`) segment, read with
/// gets (blocking and NB), is what its sender wrote.
fn check_all(job: &Job, from: &Ep, indices: &[u32]) {
    let n = job.size();
    for dst in 0..n {
        for &dst_ep in indices {
            let pair = from.pair(dst_ep);
            let mut got = vec![0u8; SLOT * (n * SENDERS) as usize];
            let half = got.len() / 2;
            let (a, b) = got.split_at_mut(half);
            pair.get_blocking(a, dst, 0, Flags::PEER_SEG_OFFSET)
                .expect("get");
            pair.get_nb(b, dst, half, Flags::PEER_SEG_OFFSET)
                .expect("NB get")
                .wait()
                .expect("NB get wait");
            for src in 0..n {
                for src_ep in 0..SENDERS {
                    let s = slot(src, src_ep);
                    assert!(
                        got[s..s + SLOT] == expected(src, src_ep, dst, dst_ep)[..],
                        "rank {}: slot of (rank {src}, endpoint {src_ep}) in (rank {dst}, endpoint {dst_ep}) differs",
                        job.rank()
                    );
                }
            }
        }
    }
}

/// A bound segment whose every handle (and its endpoint's) the program
/// dropped without destroying it stays reachable: the table still names
/// it, so its memory must stay mapped.
fn dropped_without_destroy(job: &Job) {
    let me = job.rank();
    let index = {
        let ep = Ep::create(&job.client, EpCapabilities::ALL, Flags::empty()).unwrap();
        let seg = segment_create(&job.client, &Mk::host(), 8192, Flags::empty()).unwrap();
        ep_bind_segment(&ep, &seg, Flags::empty()).unwrap();
        ep.index()
    };
    let pair = job.ep.pair(index);
    let v = payload(tag(me, 11, me, index), 8192);
    pair.put_blocking(me, 0, &v[..], Flags::PEER_SEG_OFFSET)
        .expect("put to a dropped, undestroyed segment");
    let mut back = vec![0u8; 8192];
    pair.get_blocking(&mut back[..], me, 0, Flags::PEER_SEG_OFFSET)
        .unwrap();
    check_payload("dropped segment", tag(me, 11, me, index), &back);
}

/// Publication over teams other than the primordial one: a split by
/// parity (keys reversed, so team ranks run against jobranks), then a
/// split of every rank into one team. Members reach each other's published
/// segments (data checked at the owner and read back with gets); the
/// other ranks know nothing of them (an error, nothing moved).
fn subteams(job: &Job) {
    let (me, n) = (job.rank(), job.size());
    let sub = tm_split(
        &job.tm,
        Some((me % 2) as i32),
        -(me as i32),
        None,
        Flags::TM_NO_SCRATCH,
    )
    .expect("split by parity")
    .expect("a member");
    let members: Vec<u32> = (0..n).rev().filter(|r| r % 2 == me % 2).collect();
    assert_eq!(sub.size() as usize, members.len());
    for (t, &j) in members.iter().enumerate() {
        assert_eq!(sub.rank_to_jobrank(t as u32).unwrap(), j);
    }
    const LEN: usize = 256;
    let ep = Ep::create(&job.client, EpCapabilities::ALL, Flags::empty()).unwrap();
    let k = ep.index();
    let seg = segment_create(&job.client, &Mk::host(), 8 * LEN, Flags::empty()).unwrap();
    ep_bind_segment(&ep, &seg, Flags::empty()).unwrap();

    // The team's rank 0 names its endpoint twice: every member fails, with
    // its message naming that rank.
    let eps: Vec<&Ep> = if sub.rank() == 0 {
        vec![&ep, &ep]
    } else {
        vec![&ep]
    };
    let e = ep_publish_bound_segment(&sub, &eps, Flags::empty()).unwrap_err();
    assert!(
        e.message().contains("named twice")
            && e.message().contains(&format!("rank {}", members[0])),
        "{e}"
    );
    ep_publish_bound_segment(&sub, &[&ep], Flags::empty()).expect("publish over the sub-team");

    let f = Flags::PEER_SEG_OFFSET;
    for r in 0..n {
        let v = payload(tag(me, 12, r, k), LEN);
        let put = job.ep.pair(k).put_blocking(r, me as usize * LEN, &v[..], f);
        if members.contains(&r) {
            put.expect("put to a member's segment");
        } else {
            let e = put.unwrap_err();
            assert!(e.message().contains("no segment known"), "{e}");
            assert_eq!(
                job.ep
                    .pair(k)
                    .query_bound_segment(r, Flags::empty())
                    .unwrap(),
                None
            );
        }
    }
    job.barrier();
    for r in 0..n {
        let mut got = vec![0u8; LEN];
        seg.read(r as usize * LEN, &mut got).unwrap();
        if members.contains(&r) {
            check_payload("put over a sub-team", tag(r, 12, me, k), &got);
            let mut back = vec![0u8; LEN];
            ep.pair(k)
                .get_blocking(&mut back[..], r, me as usize * LEN, f)
                .unwrap();
            check_payload("get over a sub-team", tag(me, 12, r, k), &back);
        } else {
            assert!(
                got.iter().all(|&b| b == 0),
                "a non-member's put moved nothing"
            );
        }
    }

    // One team of every rank (not the primordial one): now everyone
    // reaches everyone's segment.
    let all = tm_split(&job.tm, Some(0), -(me as i32), None, Flags::TM_NO_SCRATCH)
        .unwrap()
        .unwrap();
    assert_eq!(all.size(), n);
    ep_publish_bound_segment(&all, &[&ep], Flags::empty()).expect("publish over a split team");
    for r in 0..n {
        let v = payload(tag(me, 13, r, k), LEN);
        job.ep
            .pair(k)
            .put_blocking(r, me as usize * LEN, &v[..], f)
            .expect("put after publication to every rank");
    }
    job.barrier();
    for r in 0..n {
        let mut got = vec![0u8; LEN];
        seg.read(r as usize * LEN, &mut got).unwrap();
        check_payload("put over a split team", tag(r, 13, me, k), &got);
    }
    tm_destroy(all, Flags::empty()).unwrap();
    tm_destroy(sub, Flags::empty()).unwrap();
    segment_destroy(&seg, Flags::empty()).unwrap();
    job.barrier();
}

/// Long requests land in the destination endpoint's segment here, in a
/// slot per (source rank, source endpoint); the Long reply to each lands
/// in the same slot of the requester's segment, after the request's bytes.
const LONG_AT: usize = 56 * 1024;
const LONG_SLOT: usize = 512;
const LONG_REQ: usize = 300;
const LONG_REP: usize = 200;
const H_LONG: u8 = 200;
const H_LONG_REP: u8 = 201;

fn long_slot(rank: u32, ep: u32) -> usize {
    LONG_AT + (rank * 2 + ep - 1) as usize * LONG_SLOT
}

/// Long Active Messages between every (rank, created endpoint): requests
/// and replies land in the bound segments, checked by the handlers where
/// they landed and by the owners afterwards; the carried limit to client
/// memory; the errors at the sender.
fn longs(job: &Job, eps: &[&Ep; 2], segs: &[&gex::Segment; 2]) {
    let (me, n) = (job.rank(), job.size());
    let replies = Arc::new(AtomicU64::new(0));
    for (ep, seg) in eps.iter().zip(segs) {
        let (e, base) = (ep.index(), seg.addr());
        let got = replies.clone();
        let mut table = [
            HandlerEntry::request(H_LONG, Flags::AM_LONG, 2, move |tok, msg| {
                let info = tok.info();
                let (sr, se) = (msg.arg(0) as u32, msg.arg(1) as u32);
                assert_eq!(
                    (info.srcrank, info.src_ep_index, info.ep.index()),
                    (sr, se, e)
                );
                assert_eq!(msg.dest_addr(), long_slot(sr, se));
                assert_eq!(
                    msg.payload().as_ptr() as usize,
                    base + long_slot(sr, se),
                    "rank {me}: a Long for endpoint {e} landed outside its slot"
                );
                check_payload("long request", tag(sr, se + 20, me, e), msg.payload());
                let back = payload(tag(me, e + 20, sr, se), LONG_REP);
                let at = long_slot(me, e) + LONG_REQ;
                let a = [me as i32, e as i32];
                assert!(tok
                    .reply_long(H_LONG_REP, &back, at, Lc::Now, Flags::PEER_SEG_OFFSET, &a)
                    .expect("long reply to a created endpoint")
                    .is_sent());
            }),
            HandlerEntry::reply(H_LONG_REP, Flags::AM_LONG, 2, move |tok, msg| {
                let (rr, re) = (msg.arg(0) as u32, msg.arg(1) as u32);
                let info = tok.info();
                assert_eq!(
                    (info.srcrank, info.src_ep_index, info.ep.index()),
                    (rr, re, e)
                );
                assert_eq!(
                    msg.payload().as_ptr() as usize,
                    base + long_slot(rr, re) + LONG_REQ
                );
                check_payload("long reply", tag(rr, re + 20, me, e), msg.payload());
                got.fetch_add(1, SeqCst);
            }),
        ];
        register_handlers(ep, &mut table).expect("handlers on a created endpoint");
    }
    job.barrier();
    for ep in eps {
        let s = ep.index();
        for r in 0..n {
            for k in [1u32, 2] {
                let v = payload(tag(me, s + 20, r, k), LONG_REQ);
                ep.pair(k)
                    .request_long(
                        r,
                        H_LONG,
                        &v,
                        long_slot(me, s),
                        Lc::Now,
                        Flags::PEER_SEG_OFFSET,
                        &[me as i32, s as i32],
                    )
                    .expect("long request to a created endpoint");
            }
        }
    }
    let want = u64::from(4 * n);
    job.wait_for(&format!("{want} long replies"), || {
        replies.load(SeqCst) == want
    });
    job.barrier();
    // At the owner: every request and reply where it should be.
    for (seg, k) in segs.iter().zip([1u32, 2]) {
        for r in 0..n {
            for s in [1u32, 2] {
                let mut got = vec![0u8; LONG_REQ + LONG_REP];
                seg.read(long_slot(r, s), &mut got).unwrap();
                check_payload(
                    "long request (owner)",
                    tag(r, s + 20, me, k),
                    &got[..LONG_REQ],
                );
                check_payload(
                    "long reply (owner)",
                    tag(r, s + 20, me, k),
                    &got[LONG_REQ..],
                );
            }
        }
    }

    // Errors at the sender, nothing moved: an endpoint with no segment, a
    // range outside the segment.
    let e = eps[0]
        .pair(5)
        .request_long(
            me,
            H_LONG,
            &[1; 8],
            0,
            Lc::Now,
            Flags::PEER_SEG_OFFSET,
            &[0, 0],
        )
        .unwrap_err();
    assert!(e.message().contains("no segment known"), "{e}");
    for r in 0..n {
        let e = eps[0]
            .pair(1)
            .request_long(
                r,
                H_LONG,
                &[0xee; 8],
                SEG - 4,
                Lc::Now,
                Flags::PEER_SEG_OFFSET,
                &[0, 0],
            )
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BadArg, "{e}");
    }
    let mut tail = [0u8; 4];
    segs[0].read(SEG - 4, &mut tail).unwrap();
    assert_eq!(tail, [0; 4], "an out-of-range Long moved nothing");

    // A Long to the neighbour's client memory (not mapped here): its limit,
    // one byte over it refused, a large one delivered.
    let next = (me + 1) % n;
    let max = eps[0]
        .pair(2)
        .max_request_long(next, LcOpt::Now, Flags::empty(), 2)
        .unwrap();
    let mapped_max = eps[0]
        .pair(1)
        .max_request_long(next, LcOpt::Now, Flags::empty(), 2)
        .unwrap();
    assert!(max <= mapped_max && max >= 40_000, "{max} {mapped_max}");
    if next != me {
        let over = vec![0u8; max + 1];
        let e = eps[0]
            .pair(2)
            .request_long(
                next,
                H_LONG,
                &over,
                0,
                Lc::Now,
                Flags::PEER_SEG_OFFSET,
                &[0, 0],
            )
            .unwrap_err();
        assert!(e.message().contains("exceeds"), "{e}");
    }
    // Into the area of the large put (checked already): a Long to a
    // client-memory segment, handled by a handler that only counts.
    job.barrier();
    let big = payload(tag(me, 10, next, 2), 40_000);
    let landed = Arc::new(AtomicU64::new(0));
    let l2 = landed.clone();
    let mut h = [HandlerEntry::request(
        H_LONG + 2,
        Flags::AM_LONG,
        0,
        move |_, msg| {
            assert_eq!(msg.payload().len(), 40_000);
            l2.fetch_add(1, SeqCst);
        },
    )];
    register_handlers(eps[1], &mut h).unwrap();
    job.barrier();
    eps[0]
        .pair(2)
        .request_long(
            next,
            H_LONG + 2,
            &big,
            BIG_AT,
            Lc::Now,
            Flags::PEER_SEG_OFFSET,
            &[],
        )
        .expect("a large Long to client memory");
    job.wait_for("the large Long", || landed.load(SeqCst) == 1);
    let prev = (me + n - 1) % n;
    let mut got = vec![0u8; 40_000];
    segs[1].read(BIG_AT, &mut got).unwrap();
    check_payload("large Long to client memory", tag(prev, 10, me, 2), &got);
    job.barrier();
}

/// Long Active Messages of the LUB sizes over a TM-pair to a created
/// endpoint whose segment is library memory (the reference's testtmpair
/// asks this of every pair): `gex_AM_Max{Request,Reply}Long` of the pair,
/// and of the token, are at least `gex_AM_LUB{Request,Reply}Long`, and a
/// request of exactly the LUB size lands in the neighbour's segment, whose
/// handler answers with a reply of the reply LUB into the requester's;
/// both checked byte for byte at the owners. Over udp without the bypass
/// no peer maps the segment, so the Long travels in the message.
fn lub_longs(job: &Job) {
    const H_REQ: u8 = 210;
    const H_REP: u8 = 211;
    let (me, n) = (job.rank(), job.size());
    let (req, rep) = (
        gex::am::lub_request_long().unwrap(),
        gex::am::lub_reply_long().unwrap(),
    );
    let ep = Ep::create(&job.client, EpCapabilities::ALL, Flags::empty()).expect("create ep");
    let k = ep.index();
    let seg = segment_create(&job.client, &Mk::host(), req + rep, Flags::empty())
        .expect("a segment of both LUBs");
    ep_bind_segment(&ep, &seg, Flags::empty()).expect("bind");
    let replied = Arc::new(AtomicU64::new(0));
    let got = replied.clone();
    let mut table = [
        HandlerEntry::request(H_REQ, Flags::AM_LONG, 1, move |tok, msg| {
            let src = msg.arg(0) as u32;
            assert_eq!(msg.payload().len(), req);
            check_payload("LUB-sized Long request", tag(src, k, me, k), msg.payload());
            let max = tok.max_reply_long(LcOpt::Now, Flags::empty(), 1).unwrap();
            assert!(max >= rep, "token's max reply Long {max} < LUB {rep}");
            let back = payload(tag(me, k + 40, src, k), rep);
            assert!(tok
                .reply_long(
                    H_REP,
                    &back,
                    req,
                    Lc::Now,
                    Flags::PEER_SEG_OFFSET,
                    &[me as i32]
                )
                .expect("LUB-sized Long reply")
                .is_sent());
        }),
        HandlerEntry::reply(H_REP, Flags::AM_LONG, 1, move |_tok, msg| {
            assert_eq!(msg.payload().len(), rep);
            got.fetch_add(1, SeqCst);
        }),
    ];
    register_handlers(&ep, &mut table).expect("handlers on the LUB endpoint");
    ep_publish_bound_segment(&job.tm, &[&ep], Flags::empty()).expect("publish");
    let next = (me + 1) % n;
    let pair = ep.pair(k);
    for (lc, flags) in [
        (LcOpt::Now, Flags::empty()),
        (LcOpt::Event, Flags::IMMEDIATE),
    ] {
        let mreq = pair.max_request_long(next, lc, flags, 1).unwrap();
        let mrep = pair.max_reply_long(next, lc, flags, 1).unwrap();
        assert!(
            mreq >= req && mrep >= rep,
            "rank {me}: the pair to endpoint {k} of rank {next}: max Long request {mreq}, reply \
             {mrep}, below the LUBs {req}, {rep}"
        );
    }
    let v = payload(tag(me, k, next, k), req);
    pair.request_long(
        next,
        H_REQ,
        &v,
        0,
        Lc::Now,
        Flags::PEER_SEG_OFFSET,
        &[me as i32],
    )
    .expect("LUB-sized Long request to a created endpoint");
    job.wait_for("the LUB-sized Long reply", || replied.load(SeqCst) == 1);
    job.barrier();
    let prev = (me + n - 1) % n;
    let mut area = vec![0u8; req];
    seg.read(0, &mut area).unwrap();
    check_payload("LUB-sized Long request (owner)", tag(prev, k, me, k), &area);
    let mut area = vec![0u8; rep];
    seg.read(req, &mut area).unwrap();
    check_payload(
        "LUB-sized Long reply (owner)",
        tag(next, k + 40, me, k),
        &area,
    );
    job.barrier();
    segment_destroy(&seg, Flags::empty()).unwrap();
    job.barrier();
}

/// VIS regions: each source rank has `VIS_REGION` bytes of every created
/// segment at `VIS_AT`, in which it writes the ranges of [`vis_ranges`]
/// and nothing else; the long run goes at `VIS_LONG_AT`.
const VIS_AT: usize = 16 * 1024;
const VIS_REGION: usize = 1024;
const VIS_LONG_AT: usize = 24 * 1024;
const VIS_LONG: usize = 40_000;

/// The ranges of a source's region that its vector, indexed and strided
/// puts write: (offset in the region, length).
fn vis_ranges() -> Vec<(usize, usize)> {
    let mut v = vec![(8, 60), (100, 77)];
    v.extend((0..4).map(|i| (300 + 40 * i, 16)));
    v.extend((0..8).map(|j| (600 + 32 * j, 12)));
    v
}

/// What source `s`'s region of (rank `r`, endpoint `k`) holds after its
/// puts: its data in [`vis_ranges`], zero (guard bytes) elsewhere.
fn vis_image(s: u32, r: u32, k: u32) -> Vec<u8> {
    let data = payload(tag(s, 30 + k, r, k), VIS_REGION);
    let mut img = vec![0u8; VIS_REGION];
    for (o, l) in vis_ranges() {
        img[o..o + l].copy_from_slice(&data[o..o + l]);
    }
    img
}

/// VIS to every (rank, created endpoint), from the created endpoint of the
/// same index (reads back from the primordial one): vector (lists cut
/// differently on each side), indexed and strided puts, then the owners
/// check their regions byte for byte (guards included) and every source
/// reads its regions back with vector, indexed and strided gets.
fn vis(job: &Job, eps: &[&Ep; 2], segs: &[&gex::Segment; 2]) {
    let (me, n) = (job.rank(), job.size());
    let f = Flags::PEER_SEG_OFFSET;
    let region = |s: u32| VIS_AT + s as usize * VIS_REGION;
    // The area held earlier transfers: zero it (the guard bytes).
    for seg in segs {
        seg.write(VIS_AT, &vec![0u8; VIS_LONG_AT + VIS_LONG - VIS_AT])
            .unwrap();
    }
    job.barrier();
    for r in 0..n {
        for k in [1u32, 2] {
            let pair = eps[(k - 1) as usize].pair(k);
            let base = region(me);
            let data = payload(tag(me, 30 + k, r, k), VIS_REGION);
            // Vector: 60 + 77 bytes, sources cut at 100 and 37.
            let joined: Vec<u8> = [&data[8..68], &data[100..177]].concat();
            let (a, b) = joined.split_at(100);
            pair.vector_put_blocking(
                r,
                &[Memvec::new(base + 8, 60), Memvec::new(base + 100, 77)],
                &[a, b],
                f,
            )
            .expect("vector put to a created endpoint");
            // Indexed: four elements of 16 bytes, NBI.
            let srcs: Vec<&[u8]> = (0..4).map(|i| &data[300 + 40 * i..316 + 40 * i]).collect();
            let dsts: Vec<usize> = (0..4).map(|i| base + 300 + 40 * i).collect();
            pair.indexed_put_nbi(r, &dsts, 16, &srcs, 16, f)
                .expect("indexed put to a created endpoint");
            gex::nbi::wait(Ec::PUT, Flags::empty()).unwrap();
            // Strided: 8 rows of 3 elements of 4 bytes, 32 bytes apart, NB.
            let src = &data[600..600 + 8 * 32];
            pair.strided_put_nb(
                r,
                base + 600,
                &[4, 32],
                StridedLocal::new(src, 0),
                &[4, 32],
                4,
                &[3, 8],
                f,
            )
            .expect("strided put to a created endpoint")
            .wait()
            .unwrap();
        }
    }
    // A run longer than any Medium message, to the next rank.
    let next = (me + 1) % n;
    for k in [1u32, 2] {
        let v = payload(tag(me, 40, next, k), VIS_LONG);
        job.ep
            .pair(k)
            .vector_put_blocking(next, &[Memvec::new(VIS_LONG_AT, VIS_LONG)], &[&v[..]], f)
            .expect("a long vector run to a created endpoint");
    }
    job.barrier();

    // At the owner: every source's region, guards included.
    let prev = (me + n - 1) % n;
    for (seg, k) in segs.iter().zip([1u32, 2]) {
        for src in 0..n {
            let mut got = vec![0u8; VIS_REGION];
            seg.read(region(src), &mut got).unwrap();
            assert!(
                got == vis_image(src, me, k),
                "rank {me}: VIS region of rank {src} in endpoint {k}'s segment differs"
            );
        }
        let mut got = vec![0u8; VIS_LONG];
        seg.read(VIS_LONG_AT, &mut got).unwrap();
        check_payload("long VIS run (owner)", tag(prev, 40, me, k), &got);
    }

    // Read back with VIS gets from every (rank, endpoint).
    for r in 0..n {
        for k in [1u32, 2] {
            let pair = job.ep.pair(k);
            let base = region(me);
            let img = vis_image(me, r, k);
            let (mut x, mut y) = (vec![0u8; 37], vec![0u8; 100]);
            pair.vector_get_blocking(
                &mut [&mut x[..], &mut y[..]],
                r,
                &[Memvec::new(base + 8, 60), Memvec::new(base + 100, 77)],
                f,
            )
            .unwrap();
            let joined: Vec<u8> = [&img[8..68], &img[100..177]].concat();
            assert_eq!(
                [x, y].concat(),
                joined,
                "vector get of rank {r} endpoint {k}"
            );
            let mut els = vec![vec![0u8; 16]; 4];
            let mut refs: Vec<&mut [u8]> = els.iter_mut().map(|e| &mut e[..]).collect();
            let srcs: Vec<usize> = (0..4).map(|i| base + 300 + 40 * i).collect();
            pair.indexed_get_nb(&mut refs, 16, r, &srcs, 16, f)
                .unwrap()
                .wait()
                .unwrap();
            for (i, e) in els.iter().enumerate() {
                assert_eq!(&e[..], &img[300 + 40 * i..316 + 40 * i], "indexed get");
            }
            let mut rows = vec![0u8; 8 * 32];
            pair.strided_get_nbi(
                StridedLocal::new(&mut rows[..], 0),
                &[4, 32],
                r,
                base + 600,
                &[4, 32],
                4,
                &[3, 8],
                f,
            )
            .unwrap();
            for j in 0..8 {
                assert_eq!(
                    &rows[32 * j..32 * j + 12],
                    &img[600 + 32 * j..612 + 32 * j],
                    "strided get row {j}"
                );
                assert!(rows[32 * j + 12..32 * j + 32].iter().all(|&b| b == 0));
            }
        }
        // The long run, back with an NB get (staged off the direct route).
        if r == next {
            for k in [1u32, 2] {
                let mut back = vec![0u8; VIS_LONG];
                eps[0]
                    .pair(k)
                    .vector_get_nb(
                        &mut [&mut back[..]],
                        r,
                        &[Memvec::new(VIS_LONG_AT, VIS_LONG)],
                        f,
                    )
                    .unwrap()
                    .wait()
                    .unwrap();
                check_payload("long VIS run (get)", tag(me, 40, r, k), &back);
            }
        }
    }

    // An endpoint with no segment: an error naming it.
    let e = job
        .ep
        .pair(5)
        .vector_put_blocking(me, &[Memvec::new(0, 8)], &[&[1u8; 8][..]], f)
        .unwrap_err();
    assert!(
        e.message().contains("endpoint 5") && e.message().contains("no segment known"),
        "{e}"
    );
    job.barrier();
}

/// The route RMA to each (rank, created endpoint) takes: direct to this
/// rank and to library memory a neighbour maps, the conduit's one-sided
/// operations to every peer the primordial segment reaches that way (udp
/// across hosts, or without the bypass), else Active Messages (client
/// memory of a neighbour, which it does not map; and everything when
/// forced).
fn routes(job: &Job) {
    use gex::rma::{route, route_to, Route};
    let me = job.rank();
    let conduit = std::env::var("GEX_CONDUIT").unwrap_or_default();
    let forced = gex::rma::force_am();
    for r in 0..job.size() {
        let primordial = route(&job.ep, r);
        for k in [1u32, 2] {
            let want = if forced {
                Route::ActiveMessages
            } else if r == me || (k == 1 && primordial == Route::Direct) {
                Route::Direct
            } else if primordial == Route::Conduit {
                Route::Conduit
            } else {
                Route::ActiveMessages
            };
            assert_eq!(
                route_to(&job.ep, k, r),
                want,
                "rank {me}: route to endpoint {k} of rank {r} ({conduit})"
            );
        }
    }
}
