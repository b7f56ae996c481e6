//! test-primseg: created segments bound to the primordial endpoints with
//! `gex_EP_BindSegment` and published with `gex_EP_PublishBoundSegment`,
//! instead of `gex_Segment_Attach` (the spec reserves that use; the
//! reference allows it and its `testsegment` relies on it: API.md,
//! "Leniencies").
//!
//! Even ranks bind library memory, odd ranks client memory at an address
//! and length that are not page-aligned. Before binding, RMA to a peer is
//! an error and publishing nothing succeeds. Each rank binds its segment
//! to its primordial endpoint and to a created endpoint too (one segment,
//! two endpoints), and publishes the primordial one over a split team of
//! every rank in reversed order, in two calls (even ranks name it in the
//! first, odd ranks in the second), and the created one over the
//! primordial team. Then, over the primordial team and with segment
//! addresses from the queries: puts into a slot per source rank of every
//! rank's segment (half over the team, half over a TM-pair naming the
//! created endpoint that shares the segment), gets back, Long requests
//! whose handlers check the payload where it landed and answer with Long
//! replies into the requester's segment, and fetch-adds of an atomic
//! domain over the team; every byte is checked at its owner. The errors:
//! binding with flags, binding a second segment to the primordial
//! endpoint, attaching after binding (on every rank), a put and a Long out
//! of the segment's range (nothing moved), and RMA to the segment once it
//! is destroyed.

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Instant;

use gex::am::{register_handlers, AmRequest, HandlerEntry};
use gex::coll::{tm_destroy, tm_split};
use gex::mk::{
    ep_bind_segment, ep_publish_bound_segment, segment_create, segment_create_at, segment_destroy,
    Mk,
};
use gex::ratomic::AtomicDomain;
use gex::rma::Rma;
use gex::{Dt, Ep, EpCapabilities, ErrorKind, Flags, Lc, Op, Ops, Segment, Tm, TmRef};
use gex_testsuite::{check_payload, payload, wait_bound};

/// Bytes of library memory; client memory is this less 32, 16 bytes into
/// its allocation (an address and a length that are not page-aligned).
const SEG: usize = 8192;
/// Each source rank's slot of puts in every segment.
const SLOT: usize = 256;
/// Long requests from rank `s` land at `long_slot(s)` of the target; the
/// target's reply lands after them in the same slot of the requester's.
const LONG_AT: usize = 2048;
const LONG_REQ: usize = 160;
const LONG_REP: usize = 96;
/// The word every rank fetch-adds to.
const ATOM_AT: usize = 4096;
/// The last bytes of every segment: never written (out-of-range attempts
/// straddle them).
const GUARD: usize = 8;
const H_REQ: u8 = 200;
const H_REP: u8 = 201;

fn long_slot(rank: u32) -> usize {
    LONG_AT + rank as usize * SLOT
}

fn tag(src: u32, what: u32, dst: u32) -> u64 {
    (u64::from(src) << 32) | (u64::from(what) << 16) | u64::from(dst)
}

/// Polls until `cond` holds; panics naming `what` after [`wait_bound`].
fn wait_for(me: u32, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + wait_bound();
    while !cond() {
        gex::poll().expect("poll");
        if Instant::now() > deadline {
            panic!(
                "rank {me}: timed out after {:?} waiting for {what}",
                wait_bound()
            );
        }
        std::thread::yield_now();
    }
}

fn barrier(tm: &Tm) {
    gex::barrier(tm).expect("barrier");
}

fn main() {
    let (client, ep, tm) = gex::init("TESTPRIMSEG").expect("gex::init");
    let (me, n) = (tm.rank(), tm.size());
    assert!(n <= 8, "test-primseg's slots hold up to 8 ranks");
    let size_of = |r: u32| if r.is_multiple_of(2) { SEG } else { SEG - 32 };
    let next = (me + 1) % n;

    // Before any segment: none to query, RMA is an error, and publishing
    // an endpoint without a segment succeeds and publishes nothing.
    assert!(ep.segment().is_none());
    assert_eq!(tm.query_bound_segment(next, Flags::empty()).unwrap(), None);
    let e = tm
        .put_blocking(next, 0, &[1u8; 8][..], Flags::PEER_SEG_OFFSET)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadArg, "{e}");
    ep_publish_bound_segment(&tm, &[&ep], Flags::empty()).expect("publish before binding");
    assert_eq!(tm.query_bound_segment(next, Flags::empty()).unwrap(), None);

    // This rank's segment.
    let host = Mk::host();
    let seg = if me.is_multiple_of(2) {
        segment_create(&client, &host, SEG, Flags::empty()).expect("create (library memory)")
    } else {
        // u64 elements: the atomic word stays 8-byte aligned 16 bytes in.
        let mem: &'static mut [u64] = Box::leak(vec![0u64; SEG / 8].into_boxed_slice());
        let addr = mem.as_mut_ptr() as usize + 16;
        // SAFETY: the leaked buffer lives for the rest of the process and
        // is not touched through `mem` again; [addr, +SEG - 32) lies in it.
        unsafe { segment_create_at(&client, addr, SEG - 32, &host, Flags::empty()) }
            .expect("create (client memory)")
    };
    assert_eq!(seg.size(), size_of(me));

    // Binding: flags are refused; then the primordial endpoint takes it,
    // and no second segment.
    let e = ep_bind_segment(&ep, &seg, Flags::IMMEDIATE).unwrap_err();
    assert!(e.message().contains("flags must be 0"), "{e}");
    ep_bind_segment(&ep, &seg, Flags::empty()).expect("bind to the primordial endpoint");
    assert_eq!(ep.segment().map(|s| s.addr()), Some(seg.addr()));
    let mine = tm.query_bound_segment(me, Flags::empty()).unwrap().unwrap();
    assert_eq!(
        (mine.owner_addr, mine.local_addr, mine.size),
        (seg.addr(), Some(seg.addr()), seg.size())
    );
    let spare = segment_create(&client, &host, 4096, Flags::empty()).unwrap();
    let e = ep_bind_segment(&ep, &spare, Flags::empty()).unwrap_err();
    assert!(
        e.message().contains("endpoint 0") && e.message().contains("already has a bound segment"),
        "{e}"
    );
    segment_destroy(&spare, Flags::empty()).unwrap();

    // Attaching after binding: an error on every rank, nothing changed.
    let e = Segment::attach(&tm, 4096).unwrap_err();
    assert!(e.message().contains("gex_EP_BindSegment"), "{e}");
    assert_eq!(ep.segment().map(|s| s.addr()), Some(seg.addr()));

    // The same segment bound to a created endpoint too.
    let ep1 = Ep::create(&client, EpCapabilities::RMA, Flags::empty()).expect("create ep1");
    ep_bind_segment(&ep1, &seg, Flags::empty()).expect("bind to a second endpoint");
    assert_eq!(seg.bound_ep_indices(), vec![0, ep1.index()]);

    // Handlers, registered on every rank before any rank sends.
    let requests = Arc::new(AtomicU64::new(0));
    let replies = Arc::new(AtomicU64::new(0));
    {
        let (base, reqs, reps) = (seg.addr(), requests.clone(), replies.clone());
        let mut table = [
            HandlerEntry::request(H_REQ, Flags::AM_LONG, 1, move |tok, msg| {
                let src = msg.arg(0) as u32;
                assert_eq!(tok.info().srcrank, src);
                assert_eq!(
                    msg.payload().as_ptr() as usize,
                    base + long_slot(src),
                    "rank {me}: a Long landed outside its slot"
                );
                check_payload("long request", tag(src, 2, me), msg.payload());
                let back = payload(tag(me, 3, src), LONG_REP);
                assert!(tok
                    .reply_long(
                        H_REP,
                        &back,
                        long_slot(me) + LONG_REQ,
                        Lc::Now,
                        Flags::PEER_SEG_OFFSET,
                        &[me as i32],
                    )
                    .expect("long reply")
                    .is_sent());
                reqs.fetch_add(1, SeqCst);
            }),
            HandlerEntry::reply(H_REP, Flags::AM_LONG, 1, move |_tok, msg| {
                let src = msg.arg(0) as u32;
                assert_eq!(
                    msg.payload().as_ptr() as usize,
                    base + long_slot(src) + LONG_REQ
                );
                check_payload("long reply", tag(src, 3, me), msg.payload());
                reps.fetch_add(1, SeqCst);
            }),
        ];
        register_handlers(&ep, &mut table).expect("handlers");
    }

    // Publication over a split team of every rank, reversed, in two calls
    // with the members split between them; the created endpoint over the
    // primordial team.
    let all = tm_split(&tm, Some(0), -(me as i32), None, Flags::TM_NO_SCRATCH)
        .expect("split")
        .expect("a member");
    assert_eq!(all.rank(), n - 1 - me);
    let (first, second): (Vec<&Ep>, Vec<&Ep>) = if me.is_multiple_of(2) {
        (vec![&ep], vec![])
    } else {
        (vec![], vec![&ep])
    };
    ep_publish_bound_segment(&all, &first, Flags::empty()).expect("publish (first call)");
    ep_publish_bound_segment(&all, &second, Flags::empty()).expect("publish (second call)");
    tm_destroy(all, Flags::empty()).unwrap();
    ep_publish_bound_segment(&tm, &[&ep1], Flags::empty()).expect("publish ep1");

    // Every rank's segment, as the queries report it.
    let mut owner = Vec::new();
    for r in 0..n {
        let b = tm
            .query_bound_segment(r, Flags::empty())
            .unwrap()
            .unwrap_or_else(|| panic!("rank {me}: no segment of rank {r}"));
        assert_eq!(b.size, size_of(r));
        let c = ep
            .pair(ep1.index())
            .query_bound_segment(r, Flags::empty())
            .unwrap()
            .unwrap_or_else(|| panic!("rank {me}: no segment of rank {r}'s ep1"));
        // One segment (a neighbour may map it once per publication).
        assert_eq!(
            (c.owner_addr, c.size),
            (b.owner_addr, b.size),
            "the two endpoints of rank {r} share one segment"
        );
        if r == me {
            assert_eq!(b.local_addr, Some(seg.addr()));
        } else if r % 2 == 1 {
            assert_eq!(
                b.local_addr, None,
                "client memory is private to its process"
            );
        }
        owner.push(b.owner_addr);
    }
    barrier(&tm);

    // Puts: the first half of this rank's slot over the team (addresses),
    // the second over a TM-pair naming the created endpoint (offsets).
    let half = SLOT / 2;
    for r in 0..n {
        let v = payload(tag(me, 1, r), SLOT);
        tm.put_blocking(
            r,
            owner[r as usize] + me as usize * SLOT,
            &v[..half],
            Flags::empty(),
        )
        .expect("put over the team");
        ep1.pair(ep1.index())
            .put_blocking(
                r,
                me as usize * SLOT + half,
                &v[half..],
                Flags::PEER_SEG_OFFSET,
            )
            .expect("put over a pair to the created endpoint");
    }
    // Out of range: an error, nothing moved.
    let last = size_of(next) - GUARD / 2;
    let e = tm
        .put_blocking(
            next,
            owner[next as usize] + last,
            &[0xee; GUARD][..],
            Flags::empty(),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadArg, "{e}");
    barrier(&tm);
    for r in 0..n {
        let mut got = vec![0u8; SLOT];
        seg.read(r as usize * SLOT, &mut got).unwrap();
        check_payload("put (owner)", tag(r, 1, me), &got);
        let mut back = vec![0u8; SLOT];
        tm.get_nb(
            &mut back[..],
            r,
            owner[r as usize] + me as usize * SLOT,
            Flags::empty(),
        )
        .expect("get")
        .wait()
        .unwrap();
        check_payload("get", tag(me, 1, r), &back);
    }
    let mut guard = [1u8; GUARD];
    seg.read(seg.size() - GUARD, &mut guard).unwrap();
    assert_eq!(
        guard, [0u8; GUARD],
        "rank {me}: an out-of-range put moved bytes"
    );

    // Long requests to every rank (this one included), Long replies back.
    for r in 0..n {
        let v = payload(tag(me, 2, r), LONG_REQ);
        tm.request_long(
            r,
            H_REQ,
            &v,
            owner[r as usize] + long_slot(me),
            Lc::Now,
            Flags::empty(),
            &[me as i32],
        )
        .expect("long request");
    }
    let e = tm
        .request_long(
            next,
            H_REQ,
            &[0xee; GUARD],
            owner[next as usize] + last,
            Lc::Now,
            Flags::empty(),
            &[me as i32],
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadArg, "{e}");
    let want = u64::from(n);
    wait_for(me, "long requests and replies", || {
        requests.load(SeqCst) == want && replies.load(SeqCst) == want
    });
    barrier(&tm);
    for r in 0..n {
        let mut got = vec![0u8; LONG_REQ + LONG_REP];
        seg.read(long_slot(r), &mut got).unwrap();
        check_payload("long request (owner)", tag(r, 2, me), &got[..LONG_REQ]);
        check_payload("long reply (owner)", tag(r, 3, me), &got[LONG_REQ..]);
    }
    seg.read(seg.size() - GUARD, &mut guard).unwrap();
    assert_eq!(
        guard, [0u8; GUARD],
        "rank {me}: an out-of-range Long moved bytes"
    );

    // Atomics over the team: every rank adds me + 1 to every rank's word.
    let ad = AtomicDomain::create(&tm, Dt::U64, Ops::ADD | Ops::GET, Flags::empty())
        .expect("atomic domain");
    for r in 0..n {
        ad.op_blocking::<u64>(
            r,
            owner[r as usize] + ATOM_AT,
            Op::Add,
            u64::from(me + 1),
            0,
            Flags::empty(),
        )
        .expect("atomic add");
    }
    barrier(&tm);
    let sum = u64::from(n * (n + 1) / 2);
    for r in 0..n {
        let v = ad
            .op_blocking::<u64>(
                r,
                owner[r as usize] + ATOM_AT,
                Op::Get,
                0,
                0,
                Flags::empty(),
            )
            .expect("atomic get");
        assert_eq!(v, sum, "rank {me}: rank {r}'s word");
    }
    let mut word = [0u8; 8];
    seg.read(ATOM_AT, &mut word).unwrap();
    assert_eq!(u64::from_ne_bytes(word), sum);
    barrier(&tm);
    ad.destroy()
        .map_err(|(e, _)| e)
        .expect("destroy the domain");

    // Publishing again is a no-op; then the segment is destroyed, which
    // unbinds it from both endpoints.
    ep_publish_bound_segment(&tm, &[&ep], Flags::empty()).expect("publish again");
    barrier(&tm);
    segment_destroy(&seg, Flags::empty()).expect("destroy");
    assert!(ep.segment().is_none() && ep1.segment().is_none());
    assert!(seg.bound_ep_indices().is_empty());
    assert_eq!(tm.query_bound_segment(me, Flags::empty()).unwrap(), None);
    let e = tm
        .put_blocking(me, 0, &[1u8; 8][..], Flags::PEER_SEG_OFFSET)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadArg, "{e}");
    // Still no attach after that.
    let e = Segment::attach(&tm, 4096).unwrap_err();
    assert!(e.message().contains("gex_EP_BindSegment"), "{e}");
    barrier(&tm);
    println!("test-primseg: rank {me} of {n}: all checks passed");
}
