//! Multi-process tests of the collectives: `test-coll` as jobs of 1 to 8
//! ranks on the smp conduit (odd sizes included), again with every barrier
//! forced onto Active Messages and every forwarded message deferred to the
//! progress hook, and over the udp conduit with the
//! shared-memory bypass off, and on two named hosts (so that teams within a
//! host use the shared-memory barrier and the others Active Messages).
//!
//! As in `cluster.rs`: every job has a 240 s timeout as a guard against
//! hangs, captures its output (its tail is shown when a check fails), must
//! leave no rank process and no `/dev/shm` object behind, and holds an
//! exclusive `flock` on the same lock file as `cluster.rs`, so that jobs
//! of both test binaries never run at once on the 2-core machines.

use gex_run::{run, JobOutcome, JobSpec, Output};

mod common;
use common::{check_cleanup, job_lock, launch_on, on_two_named_hosts, report, TIMEOUT};

const TEST_COLL: &str = env!("CARGO_BIN_EXE_test-coll");

fn launch(conduit: &str, ranks: u32, env: &[(&str, &str)]) -> JobOutcome {
    launch_on(conduit, TEST_COLL, ranks, &[], env)
}

fn passes(conduit: &str, ranks: impl IntoIterator<Item = u32>, env: &[(&str, &str)]) {
    for n in ranks {
        let out = launch(conduit, n, env);
        check(&out, n, &format!("test-coll -n {n} on {conduit} {env:?}"));
    }
}

fn check(out: &JobOutcome, n: u32, what: &str) {
    assert!(!out.timed_out, "{what} timed out\n{}", report(out));
    assert_eq!(out.code, 0, "{what} failed\n{}", report(out));
    for r in 0..n {
        let line = format!("test-coll: rank {r} of {n}: all checks passed");
        assert!(
            out.stdout.contains(&line),
            "{what}: no {line:?}\n{}",
            report(out)
        );
    }
    assert_eq!(out.pids.len(), n as usize);
    check_cleanup(out);
}

#[test]
fn test_coll_1_to_4_ranks() {
    passes("smp", 1..=4, &[]);
}

/// More ranks than cores (odd sizes included): 5 to 8 ranks.
#[test]
#[ignore = "wide matrix: cargo xtask test-cluster runs it"]
fn test_coll_5_to_8_ranks() {
    passes("smp", 5..=8, &[]);
}

/// Every barrier over Active Messages, and every message a handler
/// forwards deferred to the progress hook instead.
#[test]
#[ignore = "wide matrix: cargo xtask test-cluster runs it"]
fn test_coll_am_barrier_and_deferred_sends() {
    passes(
        "smp",
        [3, 5],
        &[("GEX_COLL_FORCE_AM", "1"), ("GEX_COLL_FORCE_DEFER", "1")],
    );
}

/// Large blocking broadcasts and scatters through the two-copy path
/// (`GEX_COLL_SINGLE_COPY=0`).
#[test]
#[ignore = "wide matrix: cargo xtask test-cluster runs it"]
fn test_coll_without_single_copy() {
    passes("smp", [3], &[("GEX_COLL_SINGLE_COPY", "0")]);
}

/// Large reductions flat (`GEX_COLL_REDUCE_SCATTER=0`: every reader
/// combines every member's vector), and by reduce-scatter at every size
/// of the chunked path (`=1`, below its 16 KiB line too).
#[test]
#[ignore = "wide matrix: cargo xtask test-cluster runs it"]
fn test_coll_reduce_scatter_off_and_forced() {
    passes("smp", [4, 5], &[("GEX_COLL_REDUCE_SCATTER", "0")]);
    passes("smp", [3, 6], &[("GEX_COLL_REDUCE_SCATTER", "1")]);
}

#[test]
fn test_coll_over_udp_2_to_4_ranks() {
    passes("udp", 2..=4, &[("GEX_UDP_BYPASS", "0")]);
}

/// Two named hosts (started through a spawner that only sets a variable):
/// the udp conduit groups ranks by host, so teams inside one host get the
/// shared-memory barrier of that host's area and teams across hosts the
/// hierarchical algorithms (shared memory inside each host, Active
/// Messages between them; the default), and the flat Active Message
/// algorithms across hosts with `GEX_COLL_HIER=0`, in one job. 8 ranks
/// (4 + 4) put two hierarchical teams and a flat one in test-coll's
/// `in_flight` grid.
#[test]
#[ignore = "wide matrix: cargo xtask test-cluster runs it"]
fn test_coll_over_udp_on_two_named_hosts() {
    for (n, hier) in [(3, true), (5, true), (8, true), (4, false), (5, false)] {
        let _lock = job_lock();
        let mut spec = JobSpec::new(n, TEST_COLL);
        on_two_named_hosts(&mut spec);
        if !hier {
            spec.env.push(("GEX_COLL_HIER".into(), "0".into()));
        }
        spec.timeout = Some(TIMEOUT);
        spec.output = Output::Capture;
        spec.label = true;
        let out = run(&spec).expect("start the job");
        check(
            &out,
            n,
            &format!("test-coll -n {n} on udp over two hosts (hierarchical: {hier})"),
        );
    }
}
