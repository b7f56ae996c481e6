//! Small-transfer RMA benchmark in the layout of GASNet-EX's testsmall:
//! `gex-run -n 2 bench-testsmall [ITERS]` (`GEX_RMA_FORCE_AM=1` for the AM
//! reference path). Latency and throughput of PutBlocking, GetBlocking,
//! PutNBI, GetNBI, PutNB and GetNB from 1 byte to 1 KiB. Without ITERS,
//! 2,000,000 operations per figure for direct copies, 20,000 through
//! Active Messages (the AM reference path, or udp without the bypass).
//! `BENCH_SIZES=8,1024` restricts the sizes (as the C port,
//! gex-capi's `bench_testsmall.c`, measures them).

use gex_testsuite::rmabench::{run, Metric};

fn main() {
    let iters: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let sizes: Vec<usize> = std::env::var("BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .filter(|v: &Vec<usize>| !v.is_empty())
        .unwrap_or_else(|| (0..=10).map(|p| 1 << p).collect());
    run(
        "bench-testsmall",
        &[Metric::Latency, Metric::Throughput],
        &sizes,
        // Direct copies take nanoseconds, Active Messages microseconds.
        |_, direct| match (iters, direct) {
            (0, true) => 2_000_000,
            (0, false) => 20_000,
            (n, _) => n,
        },
        1 << 20,
    );
}
