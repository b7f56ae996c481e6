//! Small-transfer RMA benchmark in the layout of GASNet-EX's testsmall:
//! `gex-run -n 2 bench-testsmall [ITERS]` (`GEX_RMA_FORCE_AM=1` for the AM
//! reference path). Latency and throughput of PutBlocking, GetBlocking,
//! PutNBI, GetNBI, PutNB and GetNB from 1 byte to 1 KiB.

use gex_testsuite::rmabench::{run, Metric};

fn main() {
    let iters: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let am = std::env::var("GEX_RMA_FORCE_AM").is_ok_and(|v| v == "1");
    let default = if am { 20_000 } else { 2_000_000 };
    let iters = if iters == 0 { default } else { iters };
    let sizes: Vec<usize> = (0..=10).map(|p| 1 << p).collect();
    run(
        "bench-testsmall",
        &[Metric::Latency, Metric::Throughput],
        &sizes,
        |_| iters,
        1 << 20,
    );
}
