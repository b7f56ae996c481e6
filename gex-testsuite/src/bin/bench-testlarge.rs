//! Large-transfer RMA benchmark in the layout of GASNet-EX's testlarge:
//! `gex-run -n 2 bench-testlarge [MAX_ITERS]` (`GEX_RMA_FORCE_AM=1` for the
//! AM reference path). Bandwidth of puts and gets from 4 KiB to 4 MiB.

use gex_testsuite::rmabench::{run, Metric};

fn main() {
    let max_iters: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let sizes: Vec<usize> = (12..=22).map(|p| 1 << p).collect();
    // About 2 GiB moved per measurement, within the iteration cap.
    let iters = move |size: usize, _direct: bool| ((2u64 << 30) / size as u64).clamp(20, max_iters);
    run(
        "bench-testlarge",
        &[Metric::Throughput],
        &sizes,
        iters,
        8 << 20,
    );
}
