//! RMA tests, run as one rank of a job of any size: `gex-run -n N test-rma`
//! (and again with `GEX_RMA_FORCE_AM=1` for the AM reference path).
//!
//! Every rank owns one region of every rank's segment (its own included) and
//! keeps a model of what it wrote there. A random plan of batches of puts
//! and gets of every size from 0 bytes to several MiB, at random offsets,
//! through every initiation call (blocking, NBI, NB, value, access regions),
//! is executed and every get is checked against the model. At the end every
//! rank replays every other rank's plan to rebuild the expected contents of
//! its own segment and compares byte for byte. Then: lc options, leaf
//! events, event arrays, futures, segment-offset addressing on both sides,
//! and errors (out-of-segment ranges, bad ranks, bad flags) that must leave
//! the target unchanged; GASNet-1 memset, blocking and NB, against a model;
//! zero-byte transfers at any address, which complete at once; puts whose
//! source the conduit keeps reading after the call (zero-copy), with local
//! completion reported as each lc option says.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use gex::am::{register_handlers, AmRequest, HandlerEntry, Injected};
use gex::nbi;
use gex::rma::{Dst, Rma, Src};
use gex::{Ec, ErrorKind, Event, Flags, Lc, Rank, TmRef};
use gex_core::internals::*;
use gex_testsuite::{Job, Rng};

const SEG: usize = 16 << 20;
/// The last MiB of every segment is the owner's scratch space.
const SCRATCH: usize = 1 << 20;
const BATCHES: usize = 120;
const H_FLOOD: u8 = 200;

fn region_len(n: u32) -> usize {
    (SEG - SCRATCH) / n as usize / 4096 * 4096
}

/// Byte `i` of the put tagged `seed`.
fn byte(seed: u64, i: usize) -> u8 {
    let x = seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (x ^ (x >> 29) ^ (x >> 47)) as u8
}

fn fill(seed: u64, len: usize) -> Vec<u8> {
    (0..len).map(|i| byte(seed, i)).collect()
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Blocking,
    Nb,
    Nbi,
    Region,
    Value,
}

#[derive(Clone, Debug)]
struct Batch {
    kind: Kind,
    target: Rank,
    /// (offset in the writer's region, length, data seed)
    puts: Vec<(usize, usize, u64)>,
}

fn size(rng: &mut Rng, max: usize) -> usize {
    let s = match rng.below(10) {
        0 => 0,
        1..=3 => rng.below(17) as usize,
        4..=6 => {
            let p = 1usize << rng.below(13);
            p + rng.below(3) as usize - 1
        }
        7 | 8 => rng.below(256 << 10) as usize,
        _ => (1 << 20) + rng.below(2 << 20) as usize,
    };
    s.min(max)
}

/// The plan of rank `me` (a pure function of `me` and `n`, so that every
/// rank can replay it).
fn plan(me: Rank, n: u32) -> Vec<Batch> {
    let mut rng = Rng::new(0xC0FFEE ^ (u64::from(me) * 977));
    let reg = region_len(n);
    (0..BATCHES)
        .map(|b| {
            let kind = match b % 5 {
                0 => Kind::Blocking,
                1 => Kind::Nb,
                2 => Kind::Nbi,
                3 => Kind::Region,
                _ => Kind::Value,
            };
            let target = rng.below(u64::from(n)) as Rank;
            let pieces = match kind {
                Kind::Blocking => 1,
                Kind::Value => 1 + rng.below(4) as usize,
                _ => 1 + rng.below(6) as usize,
            };
            // Disjoint pieces: split the region into `pieces` slots.
            let slot = reg / pieces;
            let puts = (0..pieces)
                .map(|p| {
                    let len = if matches!(kind, Kind::Value) {
                        1 + rng.below(8) as usize
                    } else {
                        size(&mut rng, slot)
                    };
                    let off = p * slot + rng.below((slot - len) as u64 + 1) as usize;
                    (off, len, rng.next_u64())
                })
                .collect();
            Batch { kind, target, puts }
        })
        .collect()
}

fn apply(model: &mut [u8], b: &Batch) {
    for &(off, len, seed) in &b.puts {
        if matches!(b.kind, Kind::Value) {
            let v = seed & (u64::MAX >> (64 - 8 * len as u32));
            model[off..off + len].copy_from_slice(&v.to_ne_bytes()[..len]);
        } else {
            for i in 0..len {
                model[off + i] = byte(seed, i);
            }
        }
    }
}

/// Drives a future to completion on this thread (events are futures).
fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

fn main() {
    let job = Job::start("TEST_RMA", SEG);
    let (me, n) = (job.rank(), job.size());
    gex::system::set_verbose_errors(false);
    // The routes to the other ranks: direct copies to the ranks whose
    // segment is mapped here, the conduit's one-sided operations to the
    // others (udp reaches every rank off this host, or every rank with its
    // bypass off); the AM reference path only when forced. Ranks on two
    // hosts see both of the first two.
    let routes: Vec<_> = (0..n)
        .filter(|&r| r != me)
        .map(|r| gex::rma::route(&job.ep, r))
        .collect();
    let path = if gex::rma::force_am() {
        assert!(
            routes.iter().all(|&r| r == gex::rma::Route::ActiveMessages),
            "forced, yet routes {routes:?}"
        );
        "am"
    } else if routes.contains(&gex::rma::Route::Conduit) {
        assert!(
            !routes.contains(&gex::rma::Route::ActiveMessages),
            "routes {routes:?}: the conduit offers one-sided operations"
        );
        "conduit"
    } else {
        "direct"
    };
    let floods = Arc::new(AtomicU64::new(0));
    let f = floods.clone();
    let mut table = [HandlerEntry::request(
        H_FLOOD,
        Flags::AM_SHORT,
        0,
        move |_t, _m| {
            f.fetch_add(1, SeqCst);
        },
    )];
    register_handlers(&job.ep, &mut table).unwrap();
    job.barrier();

    let reg = region_len(n);
    let segs: Vec<usize> = (0..n)
        .map(|r| {
            job.tm
                .query_bound_segment(r, Flags::empty())
                .unwrap()
                .unwrap()
                .owner_addr
        })
        .collect();
    let my_region = |t: Rank| segs[t as usize] + me as usize * reg;
    let mut models: Vec<Vec<u8>> = (0..n).map(|_| vec![0u8; reg]).collect();

    for b in plan(me, n) {
        run_batch(
            &job,
            &b,
            my_region(b.target),
            &mut models[b.target as usize],
        );
    }
    job.barrier();

    // Every rank's final view of its own segment, rebuilt from every plan.
    let mut expect = vec![0u8; reg * n as usize];
    for w in 0..n {
        let mut m = vec![0u8; reg];
        for b in plan(w, n).iter().filter(|b| b.target == me) {
            apply(&mut m, b);
        }
        expect[w as usize * reg..(w as usize + 1) * reg].copy_from_slice(&m);
    }
    let mut got = vec![0u8; reg * n as usize];
    job.seg.read(0, &mut got).unwrap();
    if let Some(i) = (0..got.len()).find(|&i| got[i] != expect[i]) {
        panic!(
            "rank {me}: byte {i:#x} of my segment (writer {}) is {:#x}, expected {:#x}",
            i / reg,
            got[i],
            expect[i]
        );
    }
    job.barrier();

    completion_options(&job, my_region((me + 1) % n));
    job.barrier();
    offsets_and_errors(&job, &segs, reg);
    job.barrier();
    memsets(&job, &segs, reg);
    job.barrier();
    zero_bytes(&job, &segs);
    job.barrier();
    held_sources(&job, reg);
    job.barrier();
    if gex::rma::force_am() {
        immediate_noop(&job, &floods, my_region((me + 1) % n));
    }
    job.barrier();
    println!("test-rma: rank {me} of {n}: all checks passed ({path} path)");
}

fn verify(what: &str, got: &[u8], model: &[u8]) {
    if let Some(i) = (0..got.len()).find(|&i| got[i] != model[i]) {
        panic!(
            "{what}: byte {i} of {} is {:#x}, model says {:#x}",
            got.len(),
            got[i],
            model[i]
        );
    }
}

fn run_batch(job: &Job, b: &Batch, base: usize, model: &mut [u8]) {
    let tm = &job.tm;
    let t = b.target;
    apply(model, b);
    let data: Vec<Vec<u8>> = b
        .puts
        .iter()
        .map(|&(_, len, seed)| fill(seed, len))
        .collect();
    match b.kind {
        Kind::Blocking => {
            let (off, len, _) = b.puts[0];
            assert_eq!(
                tm.put_blocking(t, base + off, &data[0], Flags::empty())
                    .unwrap(),
                Injected::Sent
            );
            let mut got = vec![0u8; len];
            tm.get_blocking(&mut got, t, base + off, Flags::empty())
                .unwrap();
            verify("blocking put/get", &got, &model[off..off + len]);
        }
        Kind::Nb => {
            let mut leaves: Vec<Event<'static>> =
                (0..b.puts.len()).map(|_| Event::default()).collect();
            let mut evs: Vec<Event<'_>> = Vec::new();
            for (i, (&(off, _, _), d)) in b.puts.iter().zip(&data).enumerate() {
                let lc = match i % 3 {
                    0 => Lc::Now,
                    1 => Lc::Defer,
                    _ => Lc::Event(&mut leaves[i]),
                };
                let ev = tm.put_nb(t, base + off, d, lc, Flags::empty()).unwrap();
                assert!(!ev.is_no_op());
                evs.push(ev);
            }
            // Sources are reusable as soon as the leaf says so.
            for l in leaves.iter_mut() {
                assert!(l.test().unwrap());
            }
            Event::wait_all(&mut evs, Flags::empty()).unwrap();
            assert!(evs.iter().all(Event::is_invalid));
            let mut bufs: Vec<Vec<u8>> = b.puts.iter().map(|&(_, len, _)| vec![0u8; len]).collect();
            {
                let mut gets: Vec<Event<'_>> = Vec::new();
                for (buf, &(off, _, _)) in bufs.iter_mut().zip(&b.puts) {
                    gets.push(tm.get_nb(buf, t, base + off, Flags::empty()).unwrap());
                }
                // Drain with wait_some until all are done.
                let mut rounds = 0;
                while !Event::test_all(&mut gets, Flags::empty()).unwrap() {
                    Event::wait_some(&mut gets, Flags::empty()).unwrap();
                    rounds += 1;
                    assert!(rounds <= gets.len() + 1, "wait_some made no progress");
                }
                assert!(
                    Event::test_some(&mut gets, Flags::empty()).unwrap(),
                    "all-INVALID arrays succeed"
                );
            }
            for (buf, &(off, len, _)) in bufs.iter().zip(&b.puts) {
                verify("NB put/get", buf, &model[off..off + len]);
            }
        }
        Kind::Nbi => {
            for (i, (&(off, _, _), d)) in b.puts.iter().zip(&data).enumerate() {
                let lc = match i % 3 {
                    0 => Lc::Now,
                    1 => Lc::Defer,
                    _ => Lc::Group,
                };
                assert_eq!(
                    tm.put_nbi(t, base + off, d, lc, Flags::empty()).unwrap(),
                    Injected::Sent
                );
            }
            nbi::wait(Ec::PUT | Ec::LC, Flags::empty()).unwrap();
            assert!(nbi::test(Ec::ALL, Flags::empty()).unwrap());
            let mut bufs: Vec<Vec<u8>> = b.puts.iter().map(|&(_, len, _)| vec![0u8; len]).collect();
            for (buf, &(off, _, _)) in bufs.iter_mut().zip(&b.puts) {
                tm.get_nbi(buf, t, base + off, Flags::empty()).unwrap();
            }
            nbi::wait(Ec::GET, Flags::empty()).unwrap();
            for (buf, &(off, len, _)) in bufs.iter().zip(&b.puts) {
                verify("NBI put/get", buf, &model[off..off + len]);
            }
        }
        Kind::Region => {
            nbi::begin_access_region(Flags::empty()).unwrap();
            for (&(off, _, _), d) in b.puts.iter().zip(&data) {
                tm.put_nbi(t, base + off, d, Lc::Group, Flags::empty())
                    .unwrap();
            }
            assert!(
                nbi::wait(Ec::PUT, Flags::empty()).is_err(),
                "no implicit sync in a region"
            );
            let ev = nbi::end_access_region(Flags::empty()).unwrap();
            ev.wait().unwrap();
            for &(off, len, _) in &b.puts {
                let mut got = vec![0u8; len];
                let ev = tm.get_nb(&mut got, t, base + off, Flags::empty()).unwrap();
                assert!(block_on(ev).is_ok());
                verify("region put, future get", &got, &model[off..off + len]);
            }
        }
        Kind::Value => {
            for (i, &(off, len, seed)) in b.puts.iter().enumerate() {
                let v = seed & (u64::MAX >> (64 - 8 * len as u32));
                match i % 3 {
                    0 => {
                        tm.put_blocking_val(t, base + off, seed, len, Flags::empty())
                            .unwrap();
                    }
                    1 => tm
                        .put_nb_val(t, base + off, seed, len, Flags::empty())
                        .unwrap()
                        .wait()
                        .unwrap(),
                    _ => {
                        tm.put_nbi_val(t, base + off, seed, len, Flags::empty())
                            .unwrap();
                        nbi::wait(Ec::PUT, Flags::empty()).unwrap();
                    }
                }
                let got = tm
                    .get_blocking_val(t, base + off, len, Flags::empty())
                    .unwrap();
                assert_eq!(got, v, "value of {len} bytes");
                // IMMEDIATE is allowed on every initiation call; this one
                // has no no-op result, so it performs the get.
                let got = tm
                    .get_blocking_val(t, base + off, len, Flags::IMMEDIATE)
                    .unwrap();
                assert_eq!(got, v, "value of {len} bytes (IMMEDIATE)");
            }
        }
    }
}

fn completion_options(job: &Job, base: usize) {
    let tm = &job.tm;
    let peer = (job.rank() + 1) % job.size();
    let d = [7u8; 64];
    // lc options that do not fit the call.
    let e = tm
        .put_nb(peer, base, &d, Lc::Group, Flags::empty())
        .unwrap_err();
    assert!(e.message().contains("GROUP"), "{e}");
    let mut leaf = Event::default();
    let e = tm
        .put_nbi(peer, base, &d, Lc::Event(&mut leaf), Flags::empty())
        .unwrap_err();
    assert!(e.message().contains("NBI"), "{e}");
    // QueryLeaf: one category only.
    let ev = tm
        .put_nb(peer, base, &d, Lc::Defer, Flags::empty())
        .unwrap();
    let mut leaf = ev.query_leaf(Ec::LC).unwrap();
    assert!(leaf.test().unwrap());
    assert!(ev.query_leaf(Ec::ALL).is_err());
    assert!(ev.query_leaf(Ec::empty()).is_err());
    ev.wait().unwrap();
    // The GET leaf of a pending get may not claim a completion the root has
    // not reached (on the AM path the root stays pending until this rank
    // polls for the reply).
    let mut buf = vec![0u8; 100_000];
    let mut ev = tm.get_nb(&mut buf, peer, base, Flags::empty()).unwrap();
    let mut leaf = ev.query_leaf(Ec::GET).unwrap();
    if leaf.test().unwrap() {
        assert!(ev.test().unwrap(), "the GET leaf completed before its root");
    }
    leaf.wait().unwrap();
    assert!(
        ev.test().unwrap(),
        "the GET leaf completed, its root did not"
    );
    let mut ev = tm.put_nb(peer, base, &d, Lc::Now, Flags::empty()).unwrap();
    let mut leaf = ev.query_leaf(Ec::PUT).unwrap();
    if leaf.test().unwrap() {
        assert!(ev.test().unwrap(), "the PUT leaf completed before its root");
    }
    leaf.wait().unwrap();
    ev.wait().unwrap();
    // NO_OP may not be synchronised.
    let mut evs = [Event::NO_OP];
    assert!(Event::wait_all(&mut evs, Flags::empty()).is_err());
    assert!(Event::test_some(&mut [], Flags::empty()).unwrap());
    assert!(nbi::test(Ec::empty(), Flags::empty()).is_err());
    assert!(nbi::end_access_region(Flags::empty()).is_err());
    // A dropped pending event waits for its operation.
    let mut buf = vec![0u8; 100_000];
    drop(tm.get_nb(&mut buf, peer, base, Flags::empty()).unwrap());
    // Futures of the blocking kind of result.
    let ev = tm
        .put_nb(peer, base + 64, &d, Lc::Now, Flags::empty())
        .unwrap();
    block_on(ev).unwrap();
    let mut one = [0u8; 64];
    tm.get_blocking(&mut one, peer, base + 64, Flags::empty())
        .unwrap();
    assert_eq!(one, d);
}

fn offsets_and_errors(job: &Job, segs: &[usize], reg: usize) {
    let tm = &job.tm;
    let (me, n) = (job.rank(), job.size());
    let peer = (me + 1) % n;
    let mine = me as usize * reg;
    // Local segment offsets (scratch space) to peer offsets, both ways.
    let scratch = SEG - SCRATCH;
    let pat = fill(u64::from(me) + 99, 5000);
    job.seg.write(scratch, &pat).unwrap();
    let flags = Flags::SELF_SEG_OFFSET | Flags::PEER_SEG_OFFSET;
    tm.put_blocking(
        peer,
        mine + 100,
        Src::SegOffset {
            offset: scratch,
            len: 5000,
        },
        flags,
    )
    .unwrap();
    tm.get_blocking(
        Dst::SegOffset {
            offset: scratch + 8192,
            len: 5000,
        },
        peer,
        mine + 100,
        flags,
    )
    .unwrap();
    let mut back = vec![0u8; 5000];
    job.seg.read(scratch + 8192, &mut back).unwrap();
    assert_eq!(back, pat);
    let ev = tm
        .get_nb(
            Dst::SegOffset {
                offset: scratch + 16384,
                len: 5000,
            },
            peer,
            mine + 100,
            flags,
        )
        .unwrap();
    ev.wait().unwrap();
    tm.get_nbi(
        Dst::SegOffset {
            offset: scratch + 32768,
            len: 5000,
        },
        peer,
        mine + 100,
        flags,
    )
    .unwrap();
    nbi::wait(Ec::GET, Flags::empty()).unwrap();
    for at in [16384, 32768] {
        job.seg.read(scratch + at, &mut back).unwrap();
        assert_eq!(back, pat, "segment-offset get at scratch+{at}");
    }
    // The peer's region as it is now, to prove the errors below change nothing.
    let mut before = vec![0u8; reg];
    tm.get_blocking(
        &mut before,
        peer,
        segs[peer as usize] + mine,
        Flags::empty(),
    )
    .unwrap();
    let d = [0xEEu8; 16];
    let end = segs[peer as usize] + SEG;
    let must_fail = |r: gex::Result<Injected>, needle: &str| {
        let e = r.expect_err(needle);
        assert_eq!(e.kind(), ErrorKind::BadArg);
        assert!(e.message().contains(needle), "{needle:?} not in {e}");
    };
    must_fail(
        tm.put_blocking(peer, end - 8, &d, Flags::empty()),
        &format!("rank {peer}'s segment"),
    );
    must_fail(
        tm.put_blocking(peer, segs[peer as usize] - 8, &d, Flags::empty()),
        "outside",
    );
    must_fail(
        tm.put_blocking(peer, usize::MAX - 4, &d, Flags::empty()),
        "outside",
    );
    must_fail(
        tm.put_blocking(peer, SEG - 4, &d, Flags::PEER_SEG_OFFSET),
        "offset range",
    );
    must_fail(
        tm.put_nbi(peer, end, &d, Lc::Now, Flags::empty()),
        "outside",
    );
    must_fail(
        tm.put_blocking(n, segs[0], &d, Flags::empty()),
        "not in the team",
    );
    must_fail(
        tm.put_blocking(peer, mine, &d, Flags::AD_ACQ),
        "not valid for RMA",
    );
    must_fail(
        tm.put_blocking(
            peer,
            mine,
            &d,
            Flags::SELF_SEG_OFFSET | Flags::PEER_SEG_OFFSET,
        ),
        "slice source",
    );
    must_fail(
        tm.put_blocking(
            peer,
            mine,
            Src::SegOffset {
                offset: SEG - 4,
                len: 16,
            },
            flags,
        ),
        "outside the local segment",
    );
    must_fail(
        tm.put_blocking(
            peer,
            mine,
            Src::SegOffset { offset: 0, len: 16 },
            Flags::PEER_SEG_OFFSET,
        ),
        "SELF_SEG_OFFSET",
    );
    let peer_mapped = job
        .tm
        .query_bound_segment(peer, Flags::empty())
        .unwrap()
        .unwrap()
        .local_addr
        .is_some();
    if !gex::rma::force_am() && peer_mapped {
        must_fail(
            tm.put_blocking(
                peer,
                mine,
                &d,
                Flags::PEER_NEVER_NBRHD | Flags::PEER_SEG_OFFSET,
            ),
            "neighbourhood",
        );
    }
    must_fail(
        tm.put_blocking(
            me,
            mine,
            &d,
            Flags::PEER_NEVER_SELF | Flags::PEER_SEG_OFFSET,
        ),
        "this process",
    );
    let mut big = vec![0u8; 32];
    assert!(tm
        .get_blocking(&mut big, peer, end - 16, Flags::empty())
        .is_err());
    assert!(tm.get_nb(&mut big, peer, end - 16, Flags::empty()).is_err());
    assert!(tm
        .get_blocking_val(peer, end - 4, 8, Flags::empty())
        .is_err());
    assert!(tm
        .get_blocking_val(peer, mine, 9, Flags::PEER_SEG_OFFSET)
        .is_err());
    assert!(tm
        .put_blocking_val(peer, mine, 1, 0, Flags::PEER_SEG_OFFSET)
        .is_err());
    // A TM-pair names jobranks.
    let pair = job.ep.pair(0);
    let mut viapair = vec![0u8; 5000];
    pair.get_blocking(
        &mut viapair,
        peer,
        segs[peer as usize] + mine + 100,
        Flags::empty(),
    )
    .unwrap();
    assert_eq!(viapair, pat);
    let mut after = vec![0u8; reg];
    tm.get_blocking(&mut after, peer, segs[peer as usize] + mine, Flags::empty())
        .unwrap();
    assert!(after == before, "a failed call changed the target segment");
}

/// On the reference path, IMMEDIATE against a full queue sends nothing and
/// changes nothing.
fn immediate_noop(job: &Job, floods: &AtomicU64, base: usize) {
    let (me, n) = (job.rank(), job.size());
    let peer = (me + 1) % n;
    let boot = job.ep.runtime().conduit().bootstrap();
    let mut before = [0u8; 256];
    job.tm
        .get_blocking(&mut before, peer, base + 4096, Flags::empty())
        .unwrap();
    job.barrier();
    let mut sent = 0u64;
    while job
        .tm
        .request_short(peer, H_FLOOD, Flags::IMMEDIATE, &[])
        .unwrap()
        == Injected::Sent
    {
        sent += 1;
        assert!(sent < 10_000_000, "IMMEDIATE never met backpressure");
    }
    let d = [0xABu8; 256];
    assert_eq!(
        job.tm
            .put_blocking(peer, base + 4096, &d, Flags::IMMEDIATE)
            .unwrap(),
        Injected::NoOp
    );
    assert_eq!(
        job.tm
            .put_nbi(peer, base + 4096, &d, Lc::Now, Flags::IMMEDIATE)
            .unwrap(),
        Injected::NoOp
    );
    let ev = job
        .tm
        .put_nb(peer, base + 4096, &d, Lc::Now, Flags::IMMEDIATE)
        .unwrap();
    assert!(ev.is_no_op());
    assert!(ev.wait().is_err(), "waiting on NO_OP is an error");
    assert!(
        nbi::test(Ec::PUT, Flags::empty()).unwrap(),
        "a no-op leaves nothing to sync"
    );
    // Nobody polls until every rank has seen its no-ops.
    boot.barrier(&mut || {}).unwrap();
    let all = job
        .ep
        .runtime()
        .bootstrap_exchange(&sent.to_le_bytes())
        .unwrap();
    let from = (me + n - 1) % n;
    let expect = u64::from_le_bytes(all[from as usize][..8].try_into().unwrap());
    job.wait_for("the flood to drain", || floods.load(SeqCst) == expect);
    job.barrier();
    let mut got = [0u8; 256];
    job.tm
        .get_blocking(&mut got, peer, base + 4096, Flags::empty())
        .unwrap();
    assert_eq!(got, before, "an IMMEDIATE no-op wrote the target");
}

/// Zero-byte puts, gets and memsets name no memory: they complete at once
/// (Sent, or an `INVALID` event) whatever the remote and local addresses
/// (inside, past or far from the segments, by address or by offset), and
/// leave every segment unchanged. A bad rank is still an error.
fn zero_bytes(job: &Job, segs: &[usize]) {
    let (me, n) = (job.rank(), job.size());
    let tm = &job.tm;
    let mut mine_before = vec![0u8; SEG];
    job.seg.read(0, &mut mine_before).unwrap();
    job.barrier();
    let off = Flags::PEER_SEG_OFFSET;
    let self_off = Flags::SELF_SEG_OFFSET;
    for peer in 0..n {
        let base = segs[peer as usize];
        let cases = [
            (base, Flags::empty()),
            (base + SEG, Flags::empty()),
            (base + 3 * SEG, Flags::empty()),
            (base.wrapping_sub(1), Flags::empty()),
            (0, Flags::empty()),
            (usize::MAX, Flags::empty()),
            (SEG + 1, off),
            (usize::MAX, off),
        ];
        for (addr, flags) in cases {
            let what = format!("zero bytes at {addr:#x} of rank {peer} ({flags:?})");
            let empty: &[u8] = &[];
            let mut none: [u8; 0] = [];
            let sent = Injected::Sent;
            assert_eq!(
                tm.put_blocking(peer, addr, empty, flags).expect(&what),
                sent
            );
            assert_eq!(
                tm.put_nbi(peer, addr, empty, Lc::Now, flags).expect(&what),
                sent
            );
            assert!(tm
                .put_nb(peer, addr, empty, Lc::Now, flags)
                .expect(&what)
                .is_invalid());
            let far = Src::SegOffset {
                offset: usize::MAX,
                len: 0,
            };
            assert_eq!(
                tm.put_blocking(peer, addr, far, flags | self_off)
                    .expect(&what),
                sent
            );
            assert_eq!(
                tm.get_blocking(&mut none[..], peer, addr, flags)
                    .expect(&what),
                sent
            );
            assert_eq!(
                tm.get_nbi(&mut none[..], peer, addr, flags).expect(&what),
                sent
            );
            assert!(tm
                .get_nb(&mut none[..], peer, addr, flags)
                .expect(&what)
                .is_invalid());
            let far = Dst::SegOffset {
                offset: usize::MAX,
                len: 0,
            };
            assert!(tm
                .get_nb(far, peer, addr, flags | self_off)
                .expect(&what)
                .is_invalid());
            assert_eq!(
                tm.memset_blocking(peer, addr, 0xEE, 0, flags).expect(&what),
                sent
            );
            assert!(tm
                .memset_nb(peer, addr, 0xEE, 0, flags)
                .expect(&what)
                .is_invalid());
            // IMMEDIATE changes nothing: there is nothing to wait for.
            let imm = flags | Flags::IMMEDIATE;
            assert_eq!(tm.put_blocking(peer, addr, empty, imm).expect(&what), sent);
            assert!(tm
                .get_nb(&mut none[..], peer, addr, imm)
                .expect(&what)
                .is_invalid());
        }
    }
    nbi::wait(Ec::ALL, Flags::empty()).unwrap();
    let empty: &[u8] = &[];
    assert!(
        tm.put_blocking(n, 0, empty, Flags::empty()).is_err(),
        "rank {n}"
    );
    job.barrier();
    let mut mine_after = vec![0u8; SEG];
    job.seg.read(0, &mut mine_after).unwrap();
    assert!(
        mine_after == mine_before,
        "rank {me}: a zero-byte operation changed my segment"
    );
}

/// `gasnet_memset` and `gasnet_memset_nb` into this rank's region of its
/// successor's segment (by address and by offset), checked against a model
/// of the whole region; a range past the segment's end and a flag about a
/// local side are errors that set nothing.
fn memsets(job: &Job, segs: &[usize], reg: usize) {
    let (me, n) = (job.rank(), job.size());
    let t = (me + 1) % n;
    let base = segs[t as usize] + me as usize * reg;
    let off = me as usize * reg;
    let mut model = vec![0u8; reg];
    job.tm
        .get_blocking(&mut model, t, base, Flags::empty())
        .unwrap();
    let big = (reg / 4).min(3 << 20);
    let ops: [(usize, usize, u8); 6] = [
        (0, 0, 0x11),
        (0, 1, 0x22),
        (9, 7, 0x33),
        (100, 4096, 0x44),
        (reg / 2, big, 0x55),
        (reg - 3, 3, 0x66),
    ];
    for (i, &(at, len, val)) in ops.iter().enumerate() {
        match i % 3 {
            0 => {
                job.tm
                    .memset_blocking(t, base + at, val, len, Flags::empty())
                    .unwrap();
            }
            1 => job
                .tm
                .memset_nb(t, base + at, val, len, Flags::empty())
                .unwrap()
                .wait()
                .unwrap(),
            _ => {
                job.tm
                    .memset_blocking(t, off + at, val, len, Flags::PEER_SEG_OFFSET)
                    .unwrap();
            }
        }
        model[at..at + len].fill(val);
    }
    // Errors: nothing set.
    let end = segs[t as usize] + SEG;
    let e = job
        .tm
        .memset_blocking(t, end - 2, 0x77, 4, Flags::empty())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadArg, "{e}");
    assert!(e.message().contains("outside"), "{e}");
    let e = job
        .tm
        .memset_blocking(t, base, 0x77, 4, Flags::SELF_SEG_OFFSET)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadArg, "{e}");
    let mut got = vec![0u8; reg];
    job.tm
        .get_blocking(&mut got, t, base, Flags::empty())
        .unwrap();
    verify("memset", &got, &model);
    let mut tail = [0u8; 2];
    job.tm
        .get_blocking(&mut tail, t, end - 2, Flags::empty())
        .unwrap();
    assert_ne!(tail, [0x77; 2], "a refused memset set bytes");
}

/// Puts whose source the conduit may keep reading after the call returns:
/// from the local segment under a leaf event, `Lc::Defer` (NB and NBI),
/// `Lc::Group` (with and without an access region), and blocking puts
/// from a slice. Each source is rewritten as soon as local completion is
/// reported and put again: both versions must arrive intact. On the
/// conduit's route on one host without a progress thread, a large segment
/// source is still held when the call returns (zero-copy: a copy would
/// have completed locally at once).
fn held_sources(job: &Job, reg: usize) {
    const LEN: usize = 200_000;
    let tm = &job.tm;
    let (me, n) = (job.rank(), job.size());
    let peer = (me + 1) % n;
    let mine = me as usize * reg;
    let src_at = SEG - SCRATCH + (256 << 10);
    let flags = Flags::SELF_SEG_OFFSET | Flags::PEER_SEG_OFFSET;
    let src = Src::SegOffset {
        offset: src_at,
        len: LEN,
    };
    // Held at return: on one host (64 KiB datagrams, which reference the
    // source; small datagrams copy it in as the window opens, which may
    // finish at once) and with no progress thread acknowledging meanwhile.
    let unset_or = |var: &str, v: &str| std::env::var(var).map_or(true, |x| x == v);
    let held = gex::rma::route(&job.ep, peer) == gex::rma::Route::Conduit
        && unset_or("GEX_UDP_PROGRESS_THREAD", "0")
        && gex::stats().unwrap().get("max_datagram") == Some(65507);
    let check = |at: usize, want: &[u8], what: &str| {
        let mut got = vec![0u8; want.len()];
        tm.get_blocking(&mut got, peer, mine + at, Flags::PEER_SEG_OFFSET)
            .unwrap();
        verify(what, &got, want);
    };
    let mut seed = u64::from(me) * 1000 + 500;
    let mut next = || {
        seed += 1;
        let pat = fill(seed, LEN);
        job.seg.write(src_at, &pat).unwrap();
        pat
    };

    // NB, local completion through a leaf event.
    for round in 0..2 {
        let pat = next();
        let mut leaf = Event::default();
        let ev = tm
            .put_nb(peer, mine, src, Lc::Event(&mut leaf), flags)
            .unwrap();
        if held {
            assert!(
                !leaf.is_invalid(),
                "the conduit copied a {LEN}-byte segment source (leaf event)"
            );
        }
        leaf.wait().unwrap();
        // The source is free: overwrite it before the put completes.
        if round == 0 {
            job.seg.write(src_at, &vec![0xee; LEN]).unwrap();
        }
        ev.wait().unwrap();
        check(0, &pat, "held NB put (leaf event)");
    }

    // NB with DEFER: the root's LC leaf, and the root includes it.
    let pat = next();
    let ev = tm.put_nb(peer, mine, src, Lc::Defer, flags).unwrap();
    let mut lc = ev.query_leaf(Ec::LC).unwrap();
    if held {
        assert!(!lc.is_invalid(), "the LC leaf of a held put is pending");
    }
    ev.wait().unwrap();
    assert!(lc.test().unwrap(), "root complete, its LC leaf is not");
    check(0, &pat, "held NB put (DEFER)");

    // NBI with GROUP: local completion under Ec::LC, then the put.
    let pat = next();
    tm.put_nbi(peer, mine + LEN, src, Lc::Group, flags).unwrap();
    if held {
        assert!(
            !nbi::test(Ec::LC, Flags::empty()).unwrap(),
            "the LC category of a held NBI put is pending"
        );
    }
    nbi::wait(Ec::LC, Flags::empty()).unwrap();
    job.seg.write(src_at, &vec![0xdd; LEN]).unwrap();
    nbi::wait(Ec::PUT, Flags::empty()).unwrap();
    check(LEN, &pat, "held NBI put (GROUP)");

    // NBI with DEFER: PUT completion includes local completion.
    let pat = next();
    tm.put_nbi(peer, mine, src, Lc::Defer, flags).unwrap();
    nbi::wait(Ec::PUT, Flags::empty()).unwrap();
    assert!(nbi::test(Ec::ALL, Flags::empty()).unwrap());
    check(0, &pat, "held NBI put (DEFER)");

    // GROUP inside an access region: the region's event covers both.
    let pat = next();
    nbi::begin_access_region(Flags::empty()).unwrap();
    tm.put_nbi(peer, mine, src, Lc::Group, flags).unwrap();
    nbi::end_access_region(Flags::empty())
        .unwrap()
        .wait()
        .unwrap();
    assert!(nbi::test(Ec::ALL, Flags::empty()).unwrap());
    check(0, &pat, "held NBI put in an access region");

    // Blocking from a slice: sent from the slice, returns after both
    // completions.
    let big = fill(seed + 77, 3 * LEN);
    tm.put_blocking(peer, mine, &big, Flags::PEER_SEG_OFFSET)
        .unwrap();
    check(0, &big, "blocking put from a slice");
}
