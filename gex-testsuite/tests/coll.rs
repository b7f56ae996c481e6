//! Multi-process tests of the collectives: `test-coll` as jobs of 1 to 8
//! ranks on the smp conduit (odd sizes included), again with the GASNet-1
//! barrier forced onto Active Messages and every forwarded message sent
//! through the progress thread, and over the udp conduit with the
//! shared-memory bypass off.
//!
//! As in `cluster.rs`: every job has a 240 s timeout as a guard against
//! hangs, captures its output (its tail is shown when a check fails), must
//! leave no rank process and no `/dev/shm` object behind, and holds an
//! exclusive `flock` on the same lock file as `cluster.rs`, so that jobs
//! of both test binaries never run at once on the 2-core machines.

use gex_run::JobOutcome;

mod common;
use common::{check_cleanup, launch_on, report};

const TEST_COLL: &str = env!("CARGO_BIN_EXE_test-coll");

fn launch(conduit: &str, ranks: u32, env: &[(&str, &str)]) -> JobOutcome {
    launch_on(conduit, TEST_COLL, ranks, &[], env)
}

fn passes(conduit: &str, ranks: impl IntoIterator<Item = u32>, env: &[(&str, &str)]) {
    for n in ranks {
        let out = launch(conduit, n, env);
        let what = format!("test-coll -n {n} on {conduit} {env:?}");
        assert!(!out.timed_out, "{what} timed out\n{}", report(&out));
        assert_eq!(out.code, 0, "{what} failed\n{}", report(&out));
        for r in 0..n {
            let line = format!("test-coll: rank {r} of {n}: all checks passed");
            assert!(
                out.stdout.contains(&line),
                "{what}: no {line:?}\n{}",
                report(&out)
            );
        }
        assert_eq!(out.pids.len(), n as usize);
        check_cleanup(&out);
    }
}

#[test]
fn test_coll_1_to_8_ranks() {
    passes("smp", 1..=8, &[]);
}

/// The GASNet-1 barrier over Active Messages, and every message a handler
/// forwards sent by the progress thread instead.
#[test]
fn test_coll_am_barrier_and_deferred_sends() {
    passes(
        "smp",
        [3, 5],
        &[("GEX_COLL_FORCE_AM", "1"), ("GEX_COLL_FORCE_DEFER", "1")],
    );
}

#[test]
fn test_coll_over_udp_2_to_4_ranks() {
    passes("udp", 2..=4, &[("GEX_UDP_BYPASS", "0")]);
}
