//! Created against primordial endpoints: `gex-run -n 2 bench-testmk
//! [ITERS]`. Every rank creates an endpoint, a 1 MiB segment of
//! `GEX_MK_HOST` bound to it, and publishes it; rank 0 then times 8-byte
//! blocking puts and gets to rank 1 (itself with one rank) through the
//! primordial team (primordial segment) and through a TM-pair from the
//! created endpoint to the created one (created segment), alternating the
//! two three times, and prints each figure and their ratio.
//! `GEX_RMA_FORCE_AM=1` measures the AM route. (The AMShort round trip
//! between created endpoints is bench-testam's `pingpong-ep`.) Without
//! ITERS, 2,000,000 operations per figure for direct copies, 20,000
//! through Active Messages.

use std::time::Instant;

use gex::mk::{ep_bind_segment, ep_publish_bound_segment, segment_create, Mk};
use gex::rma::Rma;
use gex::{Ep, EpCapabilities, Flags, TmRef};
use gex_core::internals::*;
use gex_testsuite::Job;

/// Seconds for `it` blocking 8-byte puts and gets over `tm` at `dest`.
#[inline(never)]
fn time<T: TmRef>(tm: &T, peer: u32, dest: usize, flags: Flags, it: u64) -> (f64, f64) {
    let v = [7u8; 8];
    let mut w = [0u8; 8];
    let t = Instant::now();
    for _ in 0..it {
        tm.put_blocking(peer, dest, &v[..], flags).unwrap();
    }
    let put = t.elapsed().as_secs_f64();
    let t = Instant::now();
    for _ in 0..it {
        tm.get_blocking(&mut w[..], peer, dest, flags).unwrap();
    }
    (put, t.elapsed().as_secs_f64())
}

fn main() {
    let iters: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let job = Job::start("MK_BENCH", 1 << 20);
    let (me, n) = (job.rank(), job.size());
    let ep1 = Ep::create(&job.client, EpCapabilities::ALL, Flags::empty()).unwrap();
    let seg = segment_create(&job.client, &Mk::host(), 1 << 20, Flags::empty()).unwrap();
    ep_bind_segment(&ep1, &seg, Flags::empty()).unwrap();
    ep_publish_bound_segment(&job.tm, &[&ep1], Flags::empty()).unwrap();
    job.barrier();
    if me == 0 {
        let peer = if n > 1 { 1 } else { 0 };
        let pair = ep1.pair(1);
        let prim = job
            .tm
            .query_bound_segment(peer, Flags::empty())
            .unwrap()
            .unwrap();
        let created = pair
            .query_bound_segment(peer, Flags::empty())
            .unwrap()
            .unwrap();
        let direct = created.local_addr.is_some() && !gex::rma::force_am();
        let it = match (iters, direct) {
            (0, true) => 2_000_000,
            (0, false) => 20_000,
            (n, _) => n,
        };
        println!(
            "bench-testmk: {n} ranks, rank 0 -> rank {peer}, conduit {}, routes {:?} (primordial) and {:?} (created), {it} ops per figure",
            job.ep.runtime().conduit().name(),
            gex::rma::route(&job.ep, peer),
            gex::rma::route_to(&job.ep, 1, peer),
        );
        // Warm up both paths.
        time(&job.tm, peer, prim.owner_addr, Flags::empty(), it / 10 + 1);
        time(&pair, peer, created.owner_addr, Flags::empty(), it / 10 + 1);
        for round in 0..3 {
            let (pp, pg) = time(&job.tm, peer, prim.owner_addr, Flags::empty(), it);
            let (cp, cg) = time(&pair, peer, created.owner_addr, Flags::empty(), it);
            let us = |s: f64| s * 1e6 / it as f64;
            println!(
                "round {round}: put 8 B  primordial {:.4} us  created {:.4} us  ratio {:.3}",
                us(pp),
                us(cp),
                cp / pp
            );
            println!(
                "round {round}: get 8 B  primordial {:.4} us  created {:.4} us  ratio {:.3}",
                us(pg),
                us(cg),
                cg / pg
            );
        }
    }
    job.barrier();
}
