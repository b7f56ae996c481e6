//! Barrier, broadcast and reduction latency, in the layout of GASNet's
//! `testbarrier`: `gex-run -n N bench-testbarrier [iters]`.
//!
//! - Named and anonymous GASNet-1 barriers (`gasnet_barrier_notify` +
//!   `gasnet_barrier_wait`), as testbarrier measures them, and
//!   `gex_Coll_BarrierNB` + wait.
//! - Broadcast (root 0), reduce-to-one (root 0) and reduce-to-all of
//!   `u64` sums, by size from 8 B to 64 KiB: back-to-back operations, each
//!   waited for before the next; the time per operation of the slowest
//!   rank.
//!
//! Times are per operation, measured by rank 0 for the barriers (as
//! testbarrier does) and the slowest rank for the data collectives.
//! `BENCH_ONLY=g1`, `nb` or `data` runs one of the three parts (for
//! profiling).

use std::time::Instant;

use gex::coll::{
    barrier_nb, barrier_notify, barrier_wait, broadcast_nb, reduce_to_all_nb_typed,
    reduce_to_one_nb_typed, ReduceOp, BARRIERFLAG_ANONYMOUS,
};
use gex::{Flags, Op, Tm};

fn sync() {
    barrier_notify(0, BARRIERFLAG_ANONYMOUS).expect("notify");
    barrier_wait(0, BARRIERFLAG_ANONYMOUS).expect("wait");
}

/// The largest `secs` over the ranks, on rank 0.
fn slowest(tm: &Tm, secs: f64) -> f64 {
    let mut out = [0f64];
    reduce_to_one_nb_typed(
        tm,
        0,
        Some(&mut out[..]),
        Some(&[secs][..]),
        &Op::Max.into(),
        Flags::empty(),
    )
    .expect("reduce")
    .wait()
    .expect("wait");
    out[0]
}

fn time(iters: u32, mut f: impl FnMut(u32)) -> f64 {
    for i in 0..iters.min(100) {
        f(i);
    }
    sync();
    let t0 = Instant::now();
    for i in 0..iters {
        f(i);
    }
    t0.elapsed().as_secs_f64()
}

fn main() {
    let (_client, _ep, tm) = gex::init("TESTBARRIER").expect("gex::init");
    let me = tm.rank();
    let iters: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    if me == 0 {
        println!(
            "=====> bench-testbarrier nodes={} pid={}",
            tm.size(),
            std::process::id()
        );
        println!("Running barrier test with {iters} iterations...");
    }
    let report = |what: &str, total: f64, n: u32| {
        if me == 0 {
            println!(
                "Total time: {total:8.3} sec  Avg {what} latency: {:8.3} us",
                total * 1e6 / f64::from(n)
            );
        }
    };

    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    let part = |p: &str| only.is_empty() || only == p;

    sync();
    if part("g1") {
        let t = time(iters, |i| {
            barrier_notify(i as i32, 0).expect("notify");
            barrier_wait(i as i32, 0).expect("named barrier");
        });
        sync();
        report("Named Barrier", t, iters);

        let t = time(iters, |_| {
            barrier_notify(0, BARRIERFLAG_ANONYMOUS).expect("notify");
            barrier_wait(0, BARRIERFLAG_ANONYMOUS).expect("anonymous barrier");
        });
        sync();
        report("Anon. Barrier", t, iters);
    }

    if part("nb") {
        let ex_iters = (iters / 4).max(1);
        let t = time(ex_iters, |_| {
            barrier_nb(&tm, Flags::empty())
                .expect("barrier_nb")
                .wait()
                .expect("wait");
        });
        sync();
        report("gex_Coll_BarrierNB", t, ex_iters);
    }
    if !part("data") {
        sync();
        return;
    }

    if me == 0 {
        println!();
        println!(
            "{:>8}  {:>12}  {:>14}  {:>14}   (us per operation, slowest rank)",
            "size", "Broadcast", "ReduceToOne", "ReduceToAll"
        );
    }
    let sum: ReduceOp = Op::Add.into();
    let mut size = 8usize;
    while size <= 64 << 10 {
        let n_iters = ((iters / 10) as usize * 64 / size.max(64)).clamp(200, 20_000) as u32;
        let words = size / 8;
        let src: Vec<u64> = (0..words as u64).map(|i| i + u64::from(me)).collect();
        let mut dst = vec![0u64; words];
        let mut bytes = vec![0u8; size];
        let data = vec![0xabu8; size];

        let t = time(n_iters, |_| {
            let src = (me == 0).then_some(&data[..]);
            broadcast_nb(&tm, 0, &mut bytes, src, Flags::empty())
                .expect("broadcast")
                .wait()
                .expect("wait");
        });
        let bcast = slowest(&tm, t) * 1e6 / f64::from(n_iters);
        sync();
        let t = time(n_iters, |_| {
            let d = (me == 0).then_some(&mut dst[..]);
            reduce_to_one_nb_typed(&tm, 0, d, Some(&src), &sum, Flags::empty())
                .expect("reduce_to_one")
                .wait()
                .expect("wait");
        });
        let one = slowest(&tm, t) * 1e6 / f64::from(n_iters);
        sync();
        let t = time(n_iters, |_| {
            reduce_to_all_nb_typed(&tm, &mut dst, Some(&src), &sum, Flags::empty())
                .expect("reduce_to_all")
                .wait()
                .expect("wait");
        });
        let all = slowest(&tm, t) * 1e6 / f64::from(n_iters);
        sync();
        if me == 0 {
            println!("{size:>8}  {bcast:>12.3}  {one:>14.3}  {all:>14.3}");
        }
        size *= 8;
        if size > 64 << 10 && size < 512 << 10 {
            size = 64 << 10;
        }
    }
    sync();
    if me == 0 {
        println!("done.");
    }
}
