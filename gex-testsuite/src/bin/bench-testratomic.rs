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

use gex::coll::{barrier_notify, barrier_wait, BARRIERFLAG_ANONYMOUS};
use gex::nbi;
use gex::ratomic::{AdType, AtomicDomain, Route};
use gex::{Ec, Flags, Op, Ops, Rank};
use gex_testsuite::Job;

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
    // waits in the collectives' barrier, which polls as a rank waiting for
    // a reply does (the control plane's barrier polls between socket reads
    // and yields: over udp it served 10-20% slower). Where they do not, it
    // stays out of the way in the control plane's barrier, so that its
    // polling does not slow the direct route being measured.
    // (The same answer on every rank: neighbourhoods partition the job.)
    let handlers_run = (0..job.size()).any(|r| ad.route(r).ok() != Some(Route::Direct));
    if handlers_run {
        barrier_notify(0, BARRIERFLAG_ANONYMOUS).expect("notify");
        barrier_wait(0, BARRIERFLAG_ANONYMOUS).expect("wait");
    } else {
        job.barrier();
    }
    ad.destroy().map_err(|(e, _)| e).unwrap();
}

fn main() {
    let iters: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let job = Job::start("RATOMIC_BENCH", 1 << 16);
    let n = job.size();
    let targets: Vec<Rank> = if n > 1 { vec![0, 1] } else { vec![0] };
    if job.rank() == 0 {
        println!(
            "bench-testratomic: {n} ranks, conduit {}, rank 0 -> {}",
            std::env::var("GEX_CONDUIT").unwrap_or_else(|_| gex::conduits()[0].into()),
            if n > 1 { "itself and rank 1" } else { "itself" }
        );
    }
    bench::<u64>(&job, iters, "U64", 1, &targets);
    bench::<i64>(&job, iters, "I64", 1, &targets);
    bench::<u32>(&job, iters, "U32", 1, &targets);
    bench::<i32>(&job, iters, "I32", 1, &targets);
    bench::<f64>(&job, iters, "DBL", 1.0, &targets);
    bench::<f32>(&job, iters, "FLT", 1.0, &targets);
}
