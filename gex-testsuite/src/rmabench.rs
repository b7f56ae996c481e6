//! The driver behind `bench-testsmall` and `bench-testlarge`: rank 0
//! measures puts and gets against rank 1 (itself with one rank) while the
//! other ranks serve; `GEX_RMA_FORCE_AM=1` measures the AM reference path.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use gex::am::{register_handlers, AmRequest, HandlerEntry};
use gex::nbi;
use gex::rma::Rma;
use gex::{Ec, Event, Flags, Lc, TmRef};

use crate::Job;
use gex_core::internals::*;

const H_DONE: u8 = 250;

/// What to measure for one size.
#[derive(Clone, Copy, Debug)]
pub enum Metric {
    /// Time per operation, each completed before the next starts.
    Latency,
    /// Bytes per second with many operations in flight, synchronised once.
    Throughput,
}

/// Runs the benchmark over `sizes`, `iters(size, direct)` operations each,
/// where `direct` tells whether transfers to the peer are direct copies
/// (its segment is mapped here and the reference path is not forced) or
/// go through Active Messages, a thousand times slower.
pub fn run(
    name: &str,
    metric_set: &[Metric],
    sizes: &[usize],
    iters: impl Fn(usize, bool) -> u64,
    seg: usize,
) {
    let job = Job::start("RMA_BENCH", seg);
    let (me, n) = (job.rank(), job.size());
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    let mut table = [HandlerEntry::request(
        H_DONE,
        Flags::AM_SHORT,
        0,
        move |_t, _m| {
            d.store(true, Ordering::SeqCst);
        },
    )];
    register_handlers(&job.ep, &mut table).unwrap();
    job.barrier();
    let peer = if n > 1 { 1 } else { 0 };
    if me == 0 {
        let tm = &job.tm;
        let mapped = job.ep.runtime().segments().unwrap()[peer as usize]
            .local_base
            .is_some();
        let direct = mapped && !gex::rma::force_am();
        let path = if direct {
            "direct"
        } else {
            "AM reference path"
        };
        println!(
            "{name}: {n} ranks, rank 0 -> rank {peer}, conduit {}, {path}",
            job.ep.runtime().conduit().name()
        );
        let dest = tm
            .query_bound_segment(peer, Flags::empty())
            .unwrap()
            .unwrap()
            .owner_addr;
        let max = *sizes.iter().max().unwrap();
        let src = vec![0x5a_u8; max];
        let mut dst = vec![0u8; max];
        let report = |op: &str, metric: Metric, size: usize, iters: u64, secs: f64| match metric {
            Metric::Latency => println!(
                "P0: {op:<12} latency    {size:>8} B  {:>10.4} us",
                secs * 1e6 / iters as f64
            ),
            Metric::Throughput => println!(
                "P0: {op:<12} throughput {size:>8} B  {:>10.1} MB/s  ({:.4} us/op)",
                (size as u64 * iters) as f64 / secs / 1e6,
                secs * 1e6 / iters as f64
            ),
        };
        for &metric in metric_set {
            for &size in sizes {
                let it = iters(size, direct);
                let s = &src[..size];
                // Warm up the path and the pages.
                tm.put_blocking(peer, dest, s, Flags::empty()).unwrap();
                tm.get_blocking(&mut dst[..size], peer, dest, Flags::empty())
                    .unwrap();
                report(
                    "PutBlocking",
                    metric,
                    size,
                    it,
                    time_put_blocking(tm, peer, dest, s, it),
                );
                if size == 8 && std::env::var("BENCH_FIXED").is_ok() {
                    let v = [7u8; 8];
                    let mut w = [0u8; 8];
                    let t = Instant::now();
                    for _ in 0..it {
                        tm.put_blocking(peer, dest, &v, Flags::empty()).unwrap();
                    }
                    report("Put8fixed", metric, size, it, t.elapsed().as_secs_f64());
                    let t = Instant::now();
                    for _ in 0..it {
                        tm.get_blocking(&mut w, peer, dest, Flags::empty()).unwrap();
                    }
                    report("Get8fixed", metric, size, it, t.elapsed().as_secs_f64());
                }
                let secs = time_get_blocking(tm, peer, dest, &mut dst[..size], it);
                report("GetBlocking", metric, size, it, secs);
                let t = Instant::now();
                for _ in 0..it {
                    tm.put_nbi(peer, dest, s, Lc::Defer, Flags::empty())
                        .unwrap();
                    if matches!(metric, Metric::Latency) {
                        nbi::wait(Ec::PUT, Flags::empty()).unwrap();
                    }
                }
                nbi::wait(Ec::PUT, Flags::empty()).unwrap();
                report("PutNBI", metric, size, it, t.elapsed().as_secs_f64());
                let t = Instant::now();
                for _ in 0..it {
                    tm.get_nbi(&mut dst[..size], peer, dest, Flags::empty())
                        .unwrap();
                    if matches!(metric, Metric::Latency) {
                        nbi::wait(Ec::GET, Flags::empty()).unwrap();
                    }
                }
                nbi::wait(Ec::GET, Flags::empty()).unwrap();
                report("GetNBI", metric, size, it, t.elapsed().as_secs_f64());
                let t = Instant::now();
                match metric {
                    Metric::Latency => {
                        for _ in 0..it {
                            tm.put_nb(peer, dest, s, Lc::Defer, Flags::empty())
                                .unwrap()
                                .wait()
                                .unwrap();
                        }
                    }
                    Metric::Throughput => {
                        let mut evs: Vec<Event<'_>> = Vec::with_capacity(it as usize);
                        for _ in 0..it {
                            evs.push(tm.put_nb(peer, dest, s, Lc::Defer, Flags::empty()).unwrap());
                        }
                        Event::wait_all(&mut evs, Flags::empty()).unwrap();
                    }
                }
                report("PutNB", metric, size, it, t.elapsed().as_secs_f64());
                // Many gets in flight, each into its own buffer (allocated
                // and touched before the clock starts).
                let batch = 64.min(it as usize).min((64 << 20) / size.max(1)).max(1);
                let mut bufs = vec![vec![1u8; size]; batch];
                let t = Instant::now();
                match metric {
                    Metric::Latency => {
                        for _ in 0..it {
                            tm.get_nb(&mut dst[..size], peer, dest, Flags::empty())
                                .unwrap()
                                .wait()
                                .unwrap();
                        }
                    }
                    Metric::Throughput => {
                        let mut left = it;
                        while left > 0 {
                            let k = batch.min(left as usize);
                            let mut evs: Vec<Event<'_>> = Vec::with_capacity(k);
                            for b in bufs.iter_mut().take(k) {
                                evs.push(tm.get_nb(b, peer, dest, Flags::empty()).unwrap());
                            }
                            Event::wait_all(&mut evs, Flags::empty()).unwrap();
                            left -= k as u64;
                        }
                    }
                }
                report("GetNB", metric, size, it, t.elapsed().as_secs_f64());
            }
        }
        for r in 0..n {
            tm.request_short(r, H_DONE, Flags::empty(), &[]).unwrap();
        }
    }
    job.wait_for_unbounded(|| done.load(Ordering::SeqCst));
    job.barrier();
}

// Each timed loop of the blocking calls is a function of its own, as in
// GASNet's testsmall, so that the loop's invariants live in registers
// rather than in the stack frame of the whole driver.

/// Seconds for `it` blocking puts of `s` to `dest` at `peer`.
#[inline(never)]
fn time_put_blocking(tm: &gex::Tm, peer: gex::Rank, dest: usize, s: &[u8], it: u64) -> f64 {
    let t = Instant::now();
    for _ in 0..it {
        tm.put_blocking(peer, dest, s, Flags::empty()).unwrap();
    }
    t.elapsed().as_secs_f64()
}

/// Seconds for `it` blocking gets from `src` at `peer` into `d`.
#[inline(never)]
fn time_get_blocking(tm: &gex::Tm, peer: gex::Rank, src: usize, d: &mut [u8], it: u64) -> f64 {
    let t = Instant::now();
    for _ in 0..it {
        tm.get_blocking(&mut *d, peer, src, Flags::empty()).unwrap();
    }
    t.elapsed().as_secs_f64()
}
