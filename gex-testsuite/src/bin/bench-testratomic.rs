//! Remote atomics benchmark in the layout of GASNet-EX's testratomic and
//! testfaddperf: `gex-run -n 2 bench-testratomic [ITERS]`. Rank 0 measures,
//! for every type, the latency of blocking FADD and FCAS and the
//! throughput of an NBI stream of ADDs, to itself and to rank 1 (a
//! neighbourhood peer on smp: CPU atomics through the mapping; over udp
//! without the bypass, or with `GEX_RMA_FORCE_AM=1`, Active Messages the
//! target executes). The other ranks serve in the collectives' barrier. Without ITERS,
//! 2,000,000 operations per figure on the direct route, 20,000 through
//! Active Messages.

use std::time::Instant;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use gex::am::{register_handlers, AmRequest, HandlerEntry};
use gex::nbi;
use gex::ratomic::{AdType, AtomicDomain, Route};
use gex::{Ec, Flags, Op, Ops, Rank};
use gex_testsuite::Job;

/// The handler rank 0 tells the serving ranks it is done with.
const H_DONE: u8 = 200;
/// Set by [`H_DONE`].
static DONE: AtomicBool = AtomicBool::new(false);
/// An AMShort ping (no argument) that the target answers with [`H_PONG`].
const H_PING: u8 = 201;
/// Counts pongs in [`PONGS`].
const H_PONG: u8 = 202;
static PONGS: AtomicU64 = AtomicU64::new(0);

/// Where the operations to rank 1 are not direct (Active Messages, or
/// the udp conduit's ATOMIC messages), U64 FADD against an AMShort round
/// trip (no argument) in the same job: 60 rounds of `ITERS` each (default
/// 2,500), each kind first in turn, then the median
/// and the spread of the per-round ratios. The target is an atomic
/// no slower than the round trip; figures of separate udp jobs spread by
/// more than that, and so do rounds within a job (the median of many
/// short alternating rounds is what compares the two).
fn fadd_against_amshort(job: &Job, iters: u64) {
    const ROUNDS: usize = 60;
    let ad = AtomicDomain::create(&job.tm, u64::DT, Ops::FADD, Flags::empty()).expect("create");
    let am = ad.route(1).expect("route") != Route::Direct;
    if job.rank() == 0 && am {
        let n = if iters == 0 { 2_500 } else { iters };
        let ping = |n: u64| {
            let start = Instant::now();
            for _ in 0..n {
                let want = PONGS.load(Ordering::Relaxed) + 1;
                job.tm
                    .request_short(1, H_PING, Flags::empty(), &[])
                    .expect("ping");
                job.wait_for_unbounded(|| PONGS.load(Ordering::Acquire) == want);
            }
            start.elapsed().as_secs_f64() * 1e6 / n as f64
        };
        let fadd = |n: u64| {
            let start = Instant::now();
            for _ in 0..n {
                std::hint::black_box(
                    ad.op_blocking::<u64>(1, 0, Op::Fadd, 1, 1, Flags::PEER_SEG_OFFSET)
                        .unwrap(),
                );
            }
            start.elapsed().as_secs_f64() * 1e6 / n as f64
        };
        ping(1000);
        fadd(1000);
        let mut ratios = Vec::new();
        for round in 1..=ROUNDS {
            // Alternate which goes first, so that neither always follows
            // the other.
            let (a, f) = if round % 2 == 1 {
                let a = ping(n);
                (a, fadd(n))
            } else {
                let f = fadd(n);
                (ping(n), f)
            };
            println!(
                "P0: round {round}: AMShort round trip {a:>8.3} us, U64 FADD {f:>8.3} us, FADD/AMShort {:.3}",
                f / a
            );
            ratios.push(f / a);
        }
        ratios.sort_by(f64::total_cmp);
        println!(
            "P0: FADD/AMShort over {ROUNDS} rounds: median {:.3} (quartiles {:.3}-{:.3}, range {:.3}-{:.3})",
            ratios[ROUNDS / 2],
            ratios[ROUNDS / 4],
            ratios[3 * ROUNDS / 4],
            ratios[0],
            ratios[ROUNDS - 1]
        );
    }
    finish(job, ad, am);
}

fn bench<T: AdType>(job: &Job, iters: u64, name: &str, one: T, targets: &[Rank]) {
    let ops = Ops::FADD | Ops::FCAS | Ops::ADD;
    let ad = AtomicDomain::create(&job.tm, T::DT, ops, Flags::empty()).expect("create");
    if job.rank() == 0 {
        let f = Flags::PEER_SEG_OFFSET;
        for &t in targets {
            let route = ad.route(t).expect("route");
            let n = match (iters, route) {
                (0, Route::Direct) => 2_000_000,
                (0, _) => 20_000,
                (n, _) => n,
            };
            let to = if t == 0 { "self" } else { "rank 1" };
            // Warm up, as bench-testam does (over udp the first thousand
            // round trips of a job are slower while the protocol's timers
            // settle).
            for _ in 0..n.min(1000) {
                ad.op_blocking::<T>(t, 0, Op::Fadd, one, one, f).unwrap();
            }
            let start = Instant::now();
            for _ in 0..n {
                std::hint::black_box(ad.op_blocking::<T>(t, 0, Op::Fadd, one, one, f).unwrap());
            }
            let fadd = start.elapsed().as_secs_f64();
            let start = Instant::now();
            let mut cur = T::default();
            for _ in 0..n {
                cur = ad.op_blocking::<T>(t, 0, Op::Fcas, cur, cur, f).unwrap();
            }
            let cas = start.elapsed().as_secs_f64();
            let start = Instant::now();
            for _ in 0..n {
                ad.op_nbi::<T>(None, t, 8, Op::Add, one, one, f).unwrap();
            }
            nbi::wait(Ec::RMW, Flags::empty()).unwrap();
            let nbi_secs = start.elapsed().as_secs_f64();
            println!(
                "P0: {name:<3} FADD blocking {to:<6} {route:?}: {:>10.4} us",
                fadd * 1e6 / n as f64
            );
            println!(
                "P0: {name:<3} FCAS blocking {to:<6} {route:?}: {:>10.4} us",
                cas * 1e6 / n as f64
            );
            println!(
                "P0: {name:<3} ADD  NBI      {to:<6} {route:?}: {:>10.3} Mops/s",
                n as f64 / nbi_secs / 1e6
            );
        }
    }
    // Where rank 0's operations need this rank to run their handlers, it
    // polls until rank 0 says it is done, as bench-testam's target does
    // (from the control plane's barrier, which polls between socket reads
    // and yields, it served 10-20% slower over udp, and from the
    // collectives' barrier 5-10%). Where they do not, it stays out of the
    // way in the control plane's barrier, so that its polling does not slow
    // the direct route being measured. (The same answer on every rank:
    // neighbourhoods partition the job.)
    let handlers_run = (0..job.size()).any(|r| ad.route(r).ok() != Some(Route::Direct));
    finish(job, ad, handlers_run);
}

/// Ends a measurement: where rank 0's operations needed the others to run
/// handlers (`serving`), rank 0 tells them it is done and they stop
/// polling; then every rank destroys the domain.
fn finish(job: &Job, ad: AtomicDomain, serving: bool) {
    if serving {
        if job.rank() == 0 {
            for r in 1..job.size() {
                job.tm
                    .request_short(r, H_DONE, Flags::empty(), &[])
                    .expect("done");
            }
        } else {
            job.wait_for_unbounded(|| DONE.swap(false, Ordering::AcqRel));
        }
    }
    job.barrier();
    ad.destroy().map_err(|(e, _)| e).unwrap();
}

fn main() {
    let iters: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let job = Job::start("RATOMIC_BENCH", 1 << 16);
    let mut handlers = [
        HandlerEntry::request(H_DONE, Flags::AM_SHORT, 0, |_t, _m| {
            DONE.store(true, Ordering::Release)
        }),
        HandlerEntry::request(H_PING, Flags::AM_SHORT, 0, |t, _m| {
            t.reply_short(H_PONG, Flags::empty(), &[]).expect("pong");
        }),
        HandlerEntry::reply(H_PONG, Flags::AM_SHORT, 0, |_t, _m| {
            PONGS.fetch_add(1, Ordering::Release);
        }),
    ];
    register_handlers(&job.ep, &mut handlers).expect("register");
    job.barrier();
    let n = job.size();
    let targets: Vec<Rank> = if n > 1 { vec![0, 1] } else { vec![0] };
    if job.rank() == 0 {
        println!(
            "bench-testratomic: {n} ranks, conduit {}, rank 0 -> {}",
            std::env::var("GEX_CONDUIT").unwrap_or_else(|_| gex::conduits()[0].into()),
            if n > 1 { "itself and rank 1" } else { "itself" }
        );
    }
    if n > 1 {
        fadd_against_amshort(&job, iters);
    }
    bench::<u64>(&job, iters, "U64", 1, &targets);
    bench::<i64>(&job, iters, "I64", 1, &targets);
    bench::<u32>(&job, iters, "U32", 1, &targets);
    bench::<i32>(&job, iters, "I32", 1, &targets);
    bench::<f64>(&job, iters, "DBL", 1.0, &targets);
    bench::<f32>(&job, iters, "FLT", 1.0, &targets);
}
