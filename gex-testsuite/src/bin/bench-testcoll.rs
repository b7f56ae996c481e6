//! Collective latency by size, in the layout of GASNet-EX's `testcollperf`
//! / `testreduce`: `gex-run -n N bench-testcoll [iters]`.
//!
//! For 8 B, 1 KiB, 64 KiB and 1 MiB: broadcast (root 0, the root taking
//! turns is not measured), reduce-to-all of `u64` sums and exchange
//! (all-to-all, the size per member pair). Back-to-back operations, each
//! waited for before the next, after an untimed warm-up; the time per
//! operation of the slowest rank, in microseconds. The first iteration's
//! results are checked, so a figure never comes from a broken collective.
//! `BENCH_SIZES=8,1024` restricts the sizes, `BENCH_ONLY=broadcast` (or
//! `reduce`, `exchange`, a comma-separated list) the operations (the
//! others print as 0). `BENCH_REDUCE_OP=user` makes the reduction's
//! operator a user-defined one (`ReduceOp::User`, the same wrapping sum).

use std::time::Instant;

use gex::coll::{barrier, broadcast, exchange, reduce_to_all_typed, reduce_to_one_typed, ReduceOp};
use gex::{Flags, Op, Tm};

/// The largest `secs` over the ranks, on rank 0.
fn slowest(tm: &Tm, secs: f64) -> f64 {
    let mut out = [0f64];
    let d = (tm.rank() == 0).then_some(&mut out[..]);
    reduce_to_one_typed(tm, 0, d, Some(&[secs][..]), &Op::Max.into(), Flags::empty())
        .expect("reduce");
    out[0]
}

/// Seconds per operation of the slowest rank, after `iters / 10` untimed
/// iterations.
fn time(tm: &Tm, iters: u32, mut f: impl FnMut()) -> f64 {
    for _ in 0..(iters / 10).max(1) {
        f();
    }
    barrier(tm, Flags::empty()).expect("barrier");
    let t0 = Instant::now();
    for _ in 0..iters {
        f();
    }
    let t = t0.elapsed().as_secs_f64();
    barrier(tm, Flags::empty()).expect("barrier");
    slowest(tm, t) / f64::from(iters)
}

fn main() {
    let (_client, _ep, tm) = gex::init("TESTCOLL").expect("gex::init");
    let (me, n) = (tm.rank(), tm.size() as usize);
    let iters: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    let sizes: Vec<usize> = std::env::var("BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![8, 1 << 10, 64 << 10, 1 << 20]);
    if me == 0 {
        println!("=====> bench-testcoll nodes={n} pid={}", std::process::id());
        println!(
            "{:>8}  {:>12}  {:>14}  {:>12}   (us per operation, slowest rank)",
            "size", "Broadcast", "ReduceToAll", "Exchange"
        );
    }
    let only = std::env::var("BENCH_ONLY").ok();
    let runs = |op: &str| {
        only.as_deref()
            .is_none_or(|o| o.split(',').any(|x| x.trim() == op))
    };
    let sum: ReduceOp = if std::env::var("BENCH_REDUCE_OP").is_ok_and(|v| v == "user") {
        ReduceOp::user(|x, y, _count| {
            for (a, b) in x.chunks_exact(8).zip(y.chunks_exact_mut(8)) {
                let s = u64::from_ne_bytes(a.try_into().expect("8 bytes"))
                    .wrapping_add(u64::from_ne_bytes((&*b).try_into().expect("8 bytes")));
                b.copy_from_slice(&s.to_ne_bytes());
            }
        })
    } else {
        Op::Add.into()
    };
    for &size in &sizes {
        let size = size.max(8);
        let it = ((u64::from(iters) * 1024 / size.max(1024) as u64).max(20)) as u32;
        // Broadcast.
        let data: Vec<u8> = (0..size).map(|i| (i * 7 + 3) as u8).collect();
        let mut bytes = vec![0u8; size];
        let src = (me == 0).then_some(&data[..]);
        broadcast(&tm, 0, &mut bytes, src, Flags::empty()).expect("broadcast");
        assert_eq!(bytes, data, "broadcast delivered wrong bytes");
        let bcast = if runs("broadcast") {
            time(&tm, it, || {
                broadcast(&tm, 0, &mut bytes, src, Flags::empty()).expect("broadcast")
            })
        } else {
            0.0
        };
        // Reduce-to-all, u64 sum.
        let words = size / 8;
        let v: Vec<u64> = (0..words as u64).map(|i| i + u64::from(me)).collect();
        let mut out = vec![0u64; words];
        reduce_to_all_typed(&tm, &mut out, Some(&v), &sum, Flags::empty()).expect("reduce");
        let base = (n * (n - 1) / 2) as u64;
        assert!(
            out.iter()
                .enumerate()
                .all(|(i, &x)| x == i as u64 * n as u64 + base),
            "reduce-to-all gave a wrong sum"
        );
        let all = if runs("reduce") {
            time(&tm, it, || {
                reduce_to_all_typed(&tm, &mut out, Some(&v), &sum, Flags::empty()).expect("reduce")
            })
        } else {
            0.0
        };
        // Exchange: `size` bytes per pair.
        let xsrc: Vec<u8> = (0..n * size)
            .map(|i| (i / size + me as usize) as u8)
            .collect();
        let mut xdst = vec![0u8; n * size];
        exchange(&tm, &mut xdst, &xsrc, Flags::empty()).expect("exchange");
        assert!(
            xdst.iter()
                .enumerate()
                .all(|(i, &b)| b == (me as usize + i / size) as u8),
            "exchange delivered wrong bytes"
        );
        let xch = if runs("exchange") {
            time(&tm, (it / n as u32).max(10), || {
                exchange(&tm, &mut xdst, &xsrc, Flags::empty()).expect("exchange")
            })
        } else {
            0.0
        };
        if me == 0 {
            println!(
                "{size:>8}  {:>12.3}  {:>14.3}  {:>12.3}",
                bcast * 1e6,
                all * 1e6,
                xch * 1e6
            );
        }
    }
    barrier(&tm, Flags::empty()).expect("barrier");
    if me == 0 {
        println!("done.");
    }
}
