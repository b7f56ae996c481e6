//! VIS benchmark in the layout of GASNet-EX's testvisperf:
//! `gex-run -n 2 bench-testvis [ITERS]` (`GEX_VIS_FORCE_AM=1` for the
//! Active Message route on smp; `--conduit udp` with `GEX_UDP_BYPASS=0`
//! over udp). Rank 0 measures against rank 1 (itself with one rank) while
//! the other ranks serve.
//!
//! - A 2-D block: 64 x 64 doubles out of a 1024 x 1024 array of doubles,
//!   to the same place of the peer's array (rows of 512 bytes, 8192 apart):
//!   strided put and get (blocking and NB), against one blocking RMA call
//!   per row, one NBI RMA call per row synchronised once, and a local
//!   `memcpy` loop of the same rows (the smp target: the strided put within
//!   1.2x of it).
//! - Lists of 8, 64 and 1024 pieces of 8 to 256 bytes, each piece followed
//!   by a gap of its size on both sides: vector and indexed puts and gets
//!   against one blocking RMA call per piece and one NBI call per piece.
//!
//! Each line is the time per call and the payload bandwidth.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use gex::am::{register_handlers, AmRequest, HandlerEntry};
use gex::nbi;
use gex::rma::Rma;
use gex::vis::{StridedLocal, Vis};
use gex::{Ec, Flags, Lc, Memvec};
use gex_core::internals::*;
use gex_testsuite::Job;

const H_DONE: u8 = 250;
const N: usize = 1024;
const B: usize = 64;
const ROW: usize = N * 8;
const SEG: usize = 16 << 20;

fn report(what: &str, bytes: usize, iters: u64, secs: f64) {
    let us = secs * 1e6 / iters as f64;
    println!(
        "P0: {what:<40} {us:>10.3} us/call  {:>9.1} MB/s",
        bytes as f64 / us
    );
}

fn time(iters: u64, mut f: impl FnMut()) -> f64 {
    f(); // warm up the path and the pages
    let t = Instant::now();
    for _ in 0..iters {
        f();
    }
    t.elapsed().as_secs_f64()
}

fn main() {
    let iters: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let job = Job::start("BENCH_TESTVIS", SEG);
    let (me, n) = (job.rank(), job.size());
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    let mut table = [HandlerEntry::request(
        H_DONE,
        Flags::AM_SHORT,
        0,
        move |_, _| {
            d.store(true, Ordering::SeqCst);
        },
    )];
    register_handlers(&job.ep, &mut table).unwrap();
    job.barrier();
    let peer = if n > 1 { 1 } else { 0 };
    if me == 0 {
        let tm = &job.tm;
        let route = gex::vis::route(peer);
        println!(
            "bench-testvis: {n} ranks, rank 0 -> rank {peer}, conduit {}, route {route:?}, {iters} iterations",
            job.ep.runtime().conduit().name()
        );
        let f = Flags::PEER_SEG_OFFSET;
        // The local 1024 x 1024 array of doubles, and the block's corner.
        let src: Vec<u8> = (0..N * ROW).map(|i| i as u8).collect();
        let mut local = vec![0u8; N * ROW];
        let corner = 100 * ROW + 200 * 8;
        let bytes = B * B * 8;
        let rows = |at: usize| (0..B).map(move |r| at + r * ROW);
        // The 2-D block.
        let secs = time(iters, || {
            tm.strided_put_blocking(
                peer,
                corner,
                &[8, ROW as isize],
                StridedLocal::new(&src[..], corner),
                &[8, ROW as isize],
                8,
                &[B, B],
                f,
            )
            .unwrap();
        });
        report("2-D 64x64 dbl StridedPutBlocking", bytes, iters, secs);
        let secs = time(iters, || {
            tm.strided_put_nb(
                peer,
                corner,
                &[8, ROW as isize],
                StridedLocal::new(&src[..], corner),
                &[8, ROW as isize],
                8,
                &[B, B],
                f,
            )
            .unwrap()
            .wait()
            .unwrap();
        });
        report("2-D 64x64 dbl StridedPutNB", bytes, iters, secs);
        let secs = time(iters, || {
            tm.strided_get_blocking(
                StridedLocal::new(&mut local[..], corner),
                &[8, ROW as isize],
                peer,
                corner,
                &[8, ROW as isize],
                8,
                &[B, B],
                f,
            )
            .unwrap();
        });
        report("2-D 64x64 dbl StridedGetBlocking", bytes, iters, secs);
        let secs = time(iters, || {
            for at in rows(corner) {
                tm.put_blocking(peer, at, &src[at..at + B * 8], f).unwrap();
            }
        });
        report("2-D 64x64 dbl PutBlocking per row", bytes, iters, secs);
        let secs = time(iters, || {
            for at in rows(corner) {
                tm.put_nbi(peer, at, &src[at..at + B * 8], Lc::Defer, f)
                    .unwrap();
            }
            nbi::wait(Ec::PUT, Flags::empty()).unwrap();
        });
        report("2-D 64x64 dbl PutNBI per row", bytes, iters, secs);
        let secs = time(iters, || {
            for at in rows(corner) {
                tm.get_blocking(&mut local[at..at + B * 8], peer, at, f)
                    .unwrap();
            }
        });
        report("2-D 64x64 dbl GetBlocking per row", bytes, iters, secs);
        let secs = time(iters, || {
            for at in rows(corner) {
                local[at..at + B * 8].copy_from_slice(&src[at..at + B * 8]);
            }
            std::hint::black_box(&mut local);
        });
        report("2-D 64x64 dbl local memcpy per row", bytes, iters, secs);
        // Lists of pieces.
        for count in [8usize, 64, 1024] {
            for size in [8usize, 64, 256] {
                let dst: Vec<Memvec> = (0..count)
                    .map(|i| Memvec::new(i * 2 * size, size))
                    .collect();
                let idx: Vec<usize> = dst.iter().map(|m| m.addr).collect();
                let pieces: Vec<&[u8]> = (0..count)
                    .map(|i| &src[i * 2 * size..i * 2 * size + size])
                    .collect();
                let bytes = count * size;
                let tag = |op: &str| format!("{count:>4} x {size:>3} B {op}");
                let secs = time(iters, || {
                    tm.vector_put_blocking(peer, &dst, &pieces, f).unwrap();
                });
                report(&tag("VectorPutBlocking"), bytes, iters, secs);
                let secs = time(iters, || {
                    tm.indexed_put_blocking(peer, &idx, size, &pieces, size, f)
                        .unwrap();
                });
                report(&tag("IndexedPutBlocking"), bytes, iters, secs);
                let secs = time(iters, || {
                    let mut outs: Vec<&mut [u8]> = local
                        .chunks_mut(2 * size)
                        .take(count)
                        .map(|c| &mut c[..size])
                        .collect();
                    tm.vector_get_blocking(&mut outs, peer, &dst, f).unwrap();
                });
                report(&tag("VectorGetBlocking"), bytes, iters, secs);
                let secs = time(iters, || {
                    for (m, p) in dst.iter().zip(&pieces) {
                        tm.put_blocking(peer, m.addr, *p, f).unwrap();
                    }
                });
                report(&tag("PutBlocking per piece"), bytes, iters, secs);
                let secs = time(iters, || {
                    for (m, p) in dst.iter().zip(&pieces) {
                        tm.put_nbi(peer, m.addr, *p, Lc::Defer, f).unwrap();
                    }
                    nbi::wait(Ec::PUT, Flags::empty()).unwrap();
                });
                report(&tag("PutNBI per piece"), bytes, iters, secs);
                let secs = time(iters, || {
                    for (m, c) in dst.iter().zip(local.chunks_mut(2 * size)) {
                        tm.get_blocking(&mut c[..size], peer, m.addr, f).unwrap();
                    }
                });
                report(&tag("GetBlocking per piece"), bytes, iters, secs);
            }
        }
        for r in 0..n {
            tm.request_short(r, H_DONE, Flags::empty(), &[]).unwrap();
        }
    }
    job.wait_for_unbounded(|| done.load(Ordering::SeqCst));
    job.barrier();
}
