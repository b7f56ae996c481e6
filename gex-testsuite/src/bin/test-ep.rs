//! test-ep: endpoints made with `gex_EP_Create` and Active Messages
//! between every pair of (rank, endpoint) through TM-pairs.
//!
//! Every rank creates two AM-capable endpoints (indices 1 and 2, after the
//! primordial 0) and one without the AM capability (index 3), registers
//! the same handler indices on each AM-capable endpoint (each endpoint's
//! handlers know which endpoint they belong to), and then runs one thread
//! per AM-capable endpoint. Each thread sends Short and Medium requests
//! from its endpoint to every endpoint of every rank, and Long requests to
//! every rank's primordial endpoint (the only one with a bound segment),
//! and waits for the replies. Handlers check that the message ran in the
//! table of the endpoint it was sent to, the token's source rank and
//! endpoint, the arguments and the payload; reply handlers check that the
//! reply came back to the endpoint that sent the request. At the end every
//! endpoint must have received exactly what every (rank, endpoint) sent.
//! Then the errors: no AM capability (registration, sends, payload
//! queries), an index of `MAX_EPS` or more, a Long to an endpoint without a
//! segment, RMA over a pair to a created endpoint or from one without the
//! RMA capability, VIS from one without the VIS capability, bad create
//! arguments,
//! and creating more than `MAX_EPS` endpoints.

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

use gex::am::{register_handlers, AmRequest, HandlerEntry, LcOpt};
use gex::rma::Rma;
use gex::vis::Vis;
use gex::{Ep, EpCapabilities, EpIndex, ErrorKind, Flags, Lc, TmRef, MAX_EPS};
use gex_testsuite::{check_payload, payload, Job};

/// AM-capable endpoints per rank: the primordial one and two created.
const EPS: u32 = 3;
/// Rounds of messages from each endpoint to each (rank, endpoint).
const ROUNDS: u32 = 20;
/// Bytes of the segment each Long of each (rank, endpoint) goes into (a
/// slot per round, so that no Long overwrites one whose handler has not
/// run yet).
const SLOT: usize = 1024;

/// Where the Long of round `seq` from (`src`, `src_ep`) lands.
fn long_at(src: u32, src_ep: u32, seq: u32) -> usize {
    ((src * EPS + src_ep) * ROUNDS + seq) as usize * SLOT
}

const H_SHORT: u8 = 200;
const H_MEDIUM: u8 = 201;
const H_LONG: u8 = 202;
const H_REP_SHORT: u8 = 210;
const H_REP_MEDIUM: u8 = 211;

/// The payload tag of a request: who sent it, to whom, which one.
fn tag(src: u32, src_ep: u32, dst: u32, dst_ep: u32, seq: u32) -> u64 {
    (u64::from(src) << 48)
        | (u64::from(src_ep) << 40)
        | (u64::from(dst) << 24)
        | (u64::from(dst_ep) << 16)
        | u64::from(seq)
}

/// The length of a request's payload (0 to a few hundred bytes).
fn len_of(seq: u32, src_ep: u32) -> usize {
    ((seq * 37 + src_ep * 11) % 700) as usize
}

/// What one endpoint has seen.
struct Seen {
    /// Requests by kind (short, medium, long) from each (rank, endpoint).
    requests: Vec<[AtomicU64; 3]>,
    /// Replies from each (rank, endpoint).
    replies: Vec<AtomicU64>,
}

impl Seen {
    fn new(n: u32) -> Seen {
        Seen {
            requests: (0..n * EPS).map(|_| Default::default()).collect(),
            replies: (0..n * EPS).map(|_| AtomicU64::new(0)).collect(),
        }
    }
    fn total_replies(&self) -> u64 {
        self.replies.iter().map(|c| c.load(SeqCst)).sum()
    }
}

fn register(ep: &Ep, me: u32, seen: Arc<Seen>) {
    let e = ep.index();
    // A request's arguments: sender rank, sender endpoint, the endpoint
    // it was sent to, sequence number.
    let check_request = move |info: gex::am::TokenInfo<'_>, args: &[i32], kind: usize| {
        let (sr, se, de) = (args[0] as u32, args[1] as u32, args[2] as u32);
        assert_eq!(
            de, e,
            "rank {me}: a request for endpoint {de} ran in endpoint {e}'s handler table"
        );
        assert_eq!(info.ep.index(), e, "token names the receiving endpoint");
        assert_eq!(info.srcrank, sr, "token's source rank");
        assert_eq!(info.src_ep_index, se, "token's source endpoint");
        assert!(info.is_req);
        (sr, se, kind)
    };
    let reply_args = |me: u32, e: u32, args: &[i32]| [me as i32, e as i32, args[1], args[3]];
    let s1 = seen.clone();
    let s2 = seen.clone();
    let s3 = seen.clone();
    let s4 = seen.clone();
    let s5 = seen;
    let mut table = vec![
        HandlerEntry::request(H_SHORT, Flags::AM_SHORT, 4, move |tok, msg| {
            let (sr, se, k) = check_request(tok.info(), msg.args(), 0);
            s1.requests[(sr * EPS + se) as usize][k].fetch_add(1, SeqCst);
            let a = reply_args(me, e, msg.args());
            assert!(tok
                .reply_short(H_REP_SHORT, Flags::empty(), &a)
                .unwrap()
                .is_sent());
        }),
        HandlerEntry::request(H_MEDIUM, Flags::AM_MEDIUM, 4, move |tok, msg| {
            let (sr, se, k) = check_request(tok.info(), msg.args(), 1);
            let seq = msg.arg(3) as u32;
            assert_eq!(msg.payload().len(), len_of(seq, se));
            check_payload("medium request", tag(sr, se, me, e, seq), msg.payload());
            s2.requests[(sr * EPS + se) as usize][k].fetch_add(1, SeqCst);
            let a = reply_args(me, e, msg.args());
            let back = payload(tag(me, e, sr, se, seq), len_of(seq + 1, e));
            assert!(tok
                .reply_medium(H_REP_MEDIUM, &back, Lc::Now, Flags::empty(), &a)
                .unwrap()
                .is_sent());
        }),
        HandlerEntry::request(H_LONG, Flags::AM_LONG, 4, move |tok, msg| {
            let (sr, se, k) = check_request(tok.info(), msg.args(), 2);
            let seq = msg.arg(3) as u32;
            assert!(tok.info().is_long);
            assert_eq!(msg.dest_addr(), long_at(sr, se, seq));
            assert_eq!(msg.payload().len(), len_of(seq, se) + 1);
            check_payload("long request", tag(sr, se, me, e, seq), msg.payload());
            s3.requests[(sr * EPS + se) as usize][k].fetch_add(1, SeqCst);
            let a = reply_args(me, e, msg.args());
            assert!(tok
                .reply_short(H_REP_SHORT, Flags::empty(), &a)
                .unwrap()
                .is_sent());
        }),
        HandlerEntry::reply(H_REP_SHORT, Flags::AM_SHORT, 4, move |tok, msg| {
            let (rr, re, back_to) = (msg.arg(0) as u32, msg.arg(1) as u32, msg.arg(2) as u32);
            assert_eq!(
                back_to, e,
                "rank {me}: a reply for endpoint {back_to} came back to endpoint {e}"
            );
            let info = tok.info();
            assert_eq!(
                (info.ep.index(), info.srcrank, info.src_ep_index),
                (e, rr, re)
            );
            assert!(!info.is_req);
            s4.replies[(rr * EPS + re) as usize].fetch_add(1, SeqCst);
        }),
        HandlerEntry::reply(H_REP_MEDIUM, Flags::AM_MEDIUM, 4, move |tok, msg| {
            let (rr, re, back_to) = (msg.arg(0) as u32, msg.arg(1) as u32, msg.arg(2) as u32);
            let seq = msg.arg(3) as u32;
            assert_eq!(
                back_to, e,
                "rank {me}: a reply for endpoint {back_to} came back to endpoint {e}"
            );
            let info = tok.info();
            assert_eq!(
                (info.ep.index(), info.srcrank, info.src_ep_index),
                (e, rr, re)
            );
            assert_eq!(msg.payload().len(), len_of(seq + 1, re));
            check_payload("medium reply", tag(rr, re, me, e, seq), msg.payload());
            s5.replies[(rr * EPS + re) as usize].fetch_add(1, SeqCst);
        }),
    ];
    register_handlers(ep, &mut table).expect("register handlers on an AM-capable endpoint");
}

/// Everything one endpoint sends, then waits for every reply.
fn traffic(job: &Job, ep: &Ep, seen: &Seen) {
    let (me, n) = (job.rank(), job.size());
    let s = ep.index();
    for seq in 0..ROUNDS {
        for r in 0..n {
            for d in 0..EPS {
                let pair = ep.pair(d);
                let args = [me as i32, s as i32, d as i32, seq as i32];
                pair.request_short(r, H_SHORT, Flags::empty(), &args)
                    .expect("short request over a pair");
                let p = payload(tag(me, s, r, d, seq), len_of(seq, s));
                pair.request_medium(r, H_MEDIUM, &p, Lc::Now, Flags::empty(), &args)
                    .expect("medium request over a pair");
                if d == 0 {
                    let p = payload(tag(me, s, r, 0, seq), len_of(seq, s) + 1);
                    let at = long_at(me, s, seq);
                    pair.request_long(r, H_LONG, &p, at, Lc::Now, Flags::PEER_SEG_OFFSET, &args)
                        .expect("long request to a primordial endpoint");
                }
            }
        }
    }
    let want = u64::from(ROUNDS * n * (2 * EPS + 1));
    job.wait_for(&format!("endpoint {s}'s {want} replies"), || {
        seen.total_replies() == want
    });
    for r in 0..n {
        for d in 0..EPS {
            let per = u64::from(ROUNDS) * if d == 0 { 3 } else { 2 };
            let got = seen.replies[(r * EPS + d) as usize].load(SeqCst);
            assert_eq!(got, per, "endpoint {s}: replies from rank {r} endpoint {d}");
        }
    }
}

fn main() {
    let job = Job::start("TESTEP", 1 << 20);
    let (me, n) = (job.rank(), job.size());
    assert!(
        long_at(8, 0, 0) + 64 <= job.seg.size(),
        "test-ep's segment holds the Longs of up to 8 ranks"
    );
    assert!(n <= 8, "test-ep's segment holds the Longs of up to 8 ranks");
    assert!(MAX_EPS > EPS as usize + 1);

    // Endpoints: indices in order of creation, the same on every rank.
    let ep1 = Ep::create(&job.client, EpCapabilities::AM, Flags::empty()).expect("create ep1");
    let ep2 = Ep::create(&job.client, EpCapabilities::ALL, Flags::empty()).expect("create ep2");
    let ep3 = Ep::create(&job.client, EpCapabilities::RMA, Flags::empty()).expect("create ep3");
    assert_eq!((ep1.index(), ep2.index(), ep3.index()), (1, 2, 3));
    assert_eq!(job.ep.capabilities(), EpCapabilities::ALL);
    assert!(job.ep.is_primordial() && !ep1.is_primordial());
    assert_eq!(ep1.capabilities(), EpCapabilities::AM);
    assert_eq!(ep3.capabilities(), EpCapabilities::RMA);
    assert_eq!(ep2.client().name(), "TESTEP");
    assert!(
        ep1.segment().is_none(),
        "a created endpoint has no bound segment"
    );
    assert!(ep1.flags().is_empty());
    ep1.set_cdata(Some(Arc::new(11u32)));
    assert_eq!(ep1.cdata().unwrap().downcast_ref::<u32>(), Some(&11));
    assert!(ep2.cdata().is_none() && job.ep.cdata().is_none());
    assert_ne!(ep1.pair(1), ep2.pair(1));
    assert_eq!(ep1.pair(2), ep1.pair(2));

    let eps = [job.ep.clone(), ep1.clone(), ep2.clone()];
    let seen: Vec<Arc<Seen>> = (0..EPS).map(|_| Arc::new(Seen::new(n))).collect();
    for (ep, s) in eps.iter().zip(&seen) {
        register(ep, me, s.clone());
    }
    // Each endpoint's table is its own: the same index again on one is an
    // error, and nothing was registered on the others by it.
    let again = register_handlers(
        &ep1,
        &mut [HandlerEntry::request(
            H_SHORT,
            Flags::AM_SHORT,
            0,
            |_, _| {},
        )],
    )
    .unwrap_err();
    assert!(again.message().contains("already registered"), "{again}");
    // Every rank has registered before anyone sends.
    job.barrier();

    // Payload limits over a pair between created endpoints are those of
    // the primordial ones (the conduit's, per peer).
    for r in 0..n {
        let q = |pair: &gex::TmPair| {
            pair.max_request_medium(r, LcOpt::Now, Flags::empty(), 4)
                .unwrap()
        };
        assert_eq!(q(&ep1.pair(2)), q(&job.ep.pair(0)));
    }

    // One thread per endpoint, each sending from its own.
    std::thread::scope(|sc| {
        for (ep, s) in eps.iter().zip(&seen) {
            let job = &job;
            sc.spawn(move || traffic(job, ep, s));
        }
    });
    // Every rank has all its replies: every request to this rank has run.
    job.barrier();
    for (e, s) in seen.iter().enumerate() {
        for r in 0..n {
            for se in 0..EPS {
                let got: Vec<u64> = s.requests[(r * EPS + se) as usize]
                    .iter()
                    .map(|c| c.load(SeqCst))
                    .collect();
                let long = if e == 0 { ROUNDS } else { 0 };
                assert_eq!(
                    got,
                    [ROUNDS, ROUNDS, long].map(u64::from),
                    "endpoint {e}: requests (short, medium, long) from rank {r} endpoint {se}"
                );
            }
        }
    }

    errors(&job, &ep1, &ep3);
    job.barrier();
    println!("test-ep: rank {me} of {n}: all checks passed");
}

fn errors(job: &Job, ep1: &Ep, ep3: &Ep) {
    let me = job.rank();
    // No AM capability: registration, sends and payload queries name it.
    let named = |e: &gex::Error| {
        assert_eq!(e.kind(), ErrorKind::BadArg, "{e}");
        assert!(
            e.message().contains("endpoint 3") && e.message().contains("GEX_EP_CAPABILITY_AM"),
            "{e}"
        );
    };
    named(
        &register_handlers(
            ep3,
            &mut [HandlerEntry::request(0, Flags::AM_SHORT, 0, |_, _| {})],
        )
        .unwrap_err(),
    );
    named(
        &ep3.pair(0)
            .request_short(me, H_SHORT, Flags::empty(), &[0, 0, 0, 0])
            .unwrap_err(),
    );
    named(
        &ep3.pair(1)
            .request_medium(me, H_MEDIUM, &[1, 2], Lc::Now, Flags::empty(), &[0; 4])
            .unwrap_err(),
    );
    named(
        &ep3.pair(0)
            .max_request_medium(gex::RANK_INVALID, LcOpt::Now, Flags::empty(), 0)
            .unwrap_err(),
    );

    // An index no process can have.
    let max = MAX_EPS as EpIndex;
    let e = ep1
        .pair(max)
        .request_short(me, H_SHORT, Flags::empty(), &[0; 4])
        .unwrap_err();
    assert!(
        e.message().contains(&format!("endpoint index {max}")),
        "{e}"
    );
    assert!(e.message().contains("GASNET_MAXEPS"), "{e}");

    // A Long with a payload to an endpoint without a bound segment.
    let e = ep1
        .pair(1)
        .request_long(
            me,
            H_LONG,
            &[7; 8],
            0,
            Lc::Now,
            Flags::PEER_SEG_OFFSET,
            &[0; 4],
        )
        .unwrap_err();
    assert!(e.message().contains("no segment known"), "{e}");

    // RMA over a pair to a created endpoint: its segment is not known.
    let e = ep3
        .pair(2)
        .put_blocking(me, 0, &[1u8; 8][..], Flags::PEER_SEG_OFFSET)
        .unwrap_err();
    assert!(e.message().contains("no segment known"), "{e}");
    assert_eq!(
        ep1.pair(2).query_bound_segment(me, Flags::empty()).unwrap(),
        None
    );
    // ... and to a primordial one from a created endpoint with the RMA
    // capability, it works; without the capability, it is an error naming
    // the endpoint, and nothing moves.
    let mut back = [0u8; 8];
    let at = long_at(8, 0, 0) + 8 * me as usize;
    ep3.pair(0)
        .put_blocking(me, at, &[5u8; 8][..], Flags::PEER_SEG_OFFSET)
        .expect("put from a created RMA endpoint to a primordial one");
    ep3.pair(0)
        .get_blocking(&mut back[..], me, at, Flags::PEER_SEG_OFFSET)
        .expect("get");
    assert_eq!(back, [5u8; 8]);
    for e in [
        ep1.pair(0)
            .put_blocking(me, at, &[6u8; 8][..], Flags::PEER_SEG_OFFSET)
            .unwrap_err(),
        ep1.pair(0)
            .put_nbi(me, at, &[6u8; 8][..], Lc::Now, Flags::PEER_SEG_OFFSET)
            .unwrap_err(),
        ep1.pair(0)
            .get_blocking(&mut back[..], me, at, Flags::PEER_SEG_OFFSET)
            .unwrap_err(),
    ] {
        assert!(
            e.message().contains("endpoint 1") && e.message().contains("GEX_EP_CAPABILITY_RMA"),
            "{e}"
        );
    }
    job.seg.read(at, &mut back).unwrap();
    assert_eq!(back, [5u8; 8], "a refused put wrote nothing");
    // VIS likewise: ep3 has RMA but not VIS.
    let dst = [gex::Memvec::new(at, 8)];
    let e = ep3
        .pair(0)
        .vector_put_blocking(me, &dst, &[&[7u8; 8][..]], Flags::PEER_SEG_OFFSET)
        .unwrap_err();
    assert!(
        e.message().contains("GEX_EP_CAPABILITY_VIS"),
        "a VIS put from an endpoint without VIS: {e}"
    );
    job.seg.read(at, &mut back).unwrap();
    assert_eq!(back, [5u8; 8], "a refused VIS put wrote nothing");

    // Bad create arguments.
    let e = Ep::create(&job.client, EpCapabilities::empty(), Flags::empty()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadArg, "{e}");
    let e = Ep::create(&job.client, EpCapabilities::AM, Flags::IMMEDIATE).unwrap_err();
    assert!(e.message().contains("flags must be 0"), "{e}");
    let e = Ep::create(
        &job.client,
        EpCapabilities::AM,
        Flags::HINT_ACCEL_AD | Flags::IMMEDIATE,
    )
    .unwrap_err();
    assert!(e.message().contains("GEX_FLAG_HINT_ACCEL"), "{e}");

    // At most MAX_EPS endpoints, the primordial one included; the
    // acceleration hints are accepted (and recorded) on the way.
    let hints = [
        Flags::HINT_ACCEL_AD,
        Flags::HINT_ACCEL_COLL,
        Flags::HINT_ACCEL_ALL,
    ];
    let mut made = Vec::new();
    let e = loop {
        let hint = hints.get(made.len()).copied().unwrap_or(Flags::empty());
        match Ep::create(&job.client, EpCapabilities::RMA, hint) {
            Ok(ep) => made.push(ep),
            Err(e) => break e,
        }
    };
    assert_eq!(made.len(), MAX_EPS - 4, "{e}");
    for (ep, hint) in made.iter().zip(hints) {
        assert_eq!(ep.flags(), hint, "the hints are recorded");
    }
    assert_eq!(made.last().unwrap().index() as usize, MAX_EPS - 1);
    assert_eq!(e.kind(), ErrorKind::Resource, "{e}");
    assert!(
        e.message().contains(&format!("GASNET_MAXEPS = {MAX_EPS}")),
        "{e}"
    );
}
