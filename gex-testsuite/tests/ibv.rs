//! The ibv conduit over its simulated device (`GEX_IBV_PROVIDER=sim`):
//! the test programs with tiny credit and buffer counts and the smallest
//! shared receive pools (so that flow control and the one-sided paths'
//! splitting are exercised), faults the
//! simulated device injects (a queue pair in the error state, RNR retries
//! exhausted, a remote access error), and a peer that stops answering.
//! Every failure must end the job promptly with a message naming the peer.
//! (The full program matrix, bypass off and on, is `cargo xtask
//! test-cluster`'s `ibv-nobypass` and `ibv-hosts` rows.)

use std::time::Duration;

mod common;
use common::{check_cleanup, launch_on, report};

/// A failing job must end within this.
const PROMPT: Duration = Duration::from_secs(60);

const TEST_AM: &str = env!("CARGO_BIN_EXE_test-am");
const TEST_RMA: &str = env!("CARGO_BIN_EXE_test-rma");
const TEST_COLL: &str = env!("CARGO_BIN_EXE_test-coll");
const TEST_VIS: &str = env!("CARGO_BIN_EXE_test-vis");
const TEST_FLOOD: &str = env!("CARGO_BIN_EXE_test-flood");
const TEST_RATOMIC: &str = env!("CARGO_BIN_EXE_test-ratomic");
const TEST_FAULTS: &str = env!("CARGO_BIN_EXE_faults");
const TEST_MK: &str = env!("CARGO_BIN_EXE_test-mk");
const TEST_PRIMSEG: &str = env!("CARGO_BIN_EXE_test-primseg");

/// `program` passes on 3 ranks over ibv with `env` (plus the simulated
/// device, bypass off): every rank's success line is there.
fn passes(program: &str, name: &str, env: &[(&str, &str)]) {
    let mut all = vec![("GEX_IBV_PROVIDER", "sim"), ("GEX_IBV_BYPASS", "0")];
    all.extend_from_slice(env);
    let out = launch_on("ibv", program, 3, &[], &all);
    assert!(!out.timed_out, "{name} {env:?} timed out\n{}", report(&out));
    assert_eq!(out.code, 0, "{name} {env:?} failed\n{}", report(&out));
    for r in 0..3 {
        let line = format!("{name}: rank {r} of 3: all checks passed");
        assert!(
            out.stdout.contains(&line),
            "{name} {env:?}: no {line:?}\n{}",
            report(&out)
        );
    }
    check_cleanup(&out);
}

/// One credit per lane: every message after the first waits for its
/// credit to come back, and replies (on their own lane, returned as soon
/// as they arrive) still make progress under an all-to-all flood.
#[test]
#[ignore = "wide matrix: cargo xtask test-cluster runs it"]
fn programs_pass_with_one_credit() {
    let env = [("GEX_IBV_CREDITS", "1")];
    passes(TEST_AM, "test-am", &env);
    passes(TEST_FLOOD, "test-flood", &env);
    passes(TEST_RATOMIC, "test-ratomic", &env);
    passes(TEST_MK, "test-mk", &env);
}

/// The smallest receive buffers (a Medium limit of 528 bytes): Longs go by
/// RDMA WRITE from their first bytes over that, one-sided transfers and
/// Longs (up to the LUB, in test-mk) to created endpoints are split into
/// many messages.
#[test]
#[ignore = "wide matrix: cargo xtask test-cluster runs it"]
fn programs_pass_with_the_smallest_buffers() {
    let env = [("GEX_IBV_CREDITS", "2"), ("GEX_IBV_BUF", "624")];
    passes(TEST_RMA, "test-rma", &env);
    passes(TEST_VIS, "test-vis", &env);
    passes(TEST_COLL, "test-coll", &env);
    passes(TEST_MK, "test-mk", &env);
}

/// Created segments bound to the primordial endpoints instead of attached
/// (nothing registered with the device): Longs, puts and atomics travel in
/// messages and land through the created-endpoint route, also with the
/// smallest buffers.
#[test]
fn primordial_bound_segments_pass() {
    passes(TEST_PRIMSEG, "test-primseg", &[]);
}

#[test]
#[ignore = "wide matrix: cargo xtask test-cluster runs it"]
fn primordial_bound_segments_pass_with_the_smallest_buffers() {
    passes(
        TEST_PRIMSEG,
        "test-primseg",
        &[("GEX_IBV_CREDITS", "2"), ("GEX_IBV_BUF", "624")],
    );
}

/// The smallest shared receive pool (one buffer per peer and lane: every
/// window one credit, nothing in reserve) and one with a small reserve
/// (windows of one growing to four for the peers that use them): floods,
/// replies and collectives still make progress, data intact.
#[test]
#[ignore = "wide matrix: cargo xtask test-cluster runs it"]
fn programs_pass_with_the_smallest_shared_pools() {
    let env = [("GEX_IBV_CREDITS", "4"), ("GEX_IBV_SRQ_POOL", "2")];
    passes(TEST_FLOOD, "test-flood", &env);
    passes(TEST_AM, "test-am", &env);
    let env = [("GEX_IBV_CREDITS", "4"), ("GEX_IBV_SRQ_POOL", "6")];
    passes(TEST_FLOOD, "test-flood", &env);
    passes(TEST_COLL, "test-coll", &env);
}

/// Per-peer receive buffers (no shared receive queue), one credit.
#[test]
#[ignore = "wide matrix: cargo xtask test-cluster runs it"]
fn programs_pass_with_per_peer_buffers() {
    let env = [("GEX_IBV_SRQ", "0"), ("GEX_IBV_CREDITS", "1")];
    passes(TEST_FLOOD, "test-flood", &env);
    passes(TEST_RMA, "test-rma", &env);
}

/// Runs `program` on 3 ranks with the fault `spec` (`GEX_IBV_SIM_FAULT`)
/// and checks that the job ends promptly, with exit code 1 and a fatal
/// message of the ibv conduit that contains one of `whats` (each names
/// the peer and what failed).
fn fails_naming(program: &str, spec: &str, whats: &[&str]) {
    let env = [
        ("GEX_IBV_PROVIDER", "sim"),
        ("GEX_IBV_BYPASS", "0"),
        ("GEX_IBV_SIM_FAULT", spec),
        ("GEX_IBV_PEER_TIMEOUT", "5"),
    ];
    let out = launch_on("ibv", program, 3, &[], &env);
    assert!(!out.timed_out, "{spec}: timed out\n{}", report(&out));
    assert!(
        out.elapsed < PROMPT,
        "{spec}: took {:.2?}\n{}",
        out.elapsed,
        report(&out)
    );
    assert_eq!(out.code, 1, "{spec}\n{}", report(&out));
    let fatal = out
        .stderr
        .lines()
        .find(|l| l.contains("fatal error on rank") && l.contains("ibv conduit"))
        .unwrap_or_else(|| panic!("{spec}: no fatal message\n{}", report(&out)));
    assert!(
        whats.iter().any(|w| fatal.contains(w)),
        "{spec}: {fatal:?} should contain one of {whats:?}\n{}",
        report(&out)
    );
    check_cleanup(&out);
}

/// Rank 0's queue pair to rank 1 moves to the error state after its 20th
/// send: what it had posted and posts later is flushed, and rank 0 ends
/// the job naming rank 1 (or rank 1 is first to send to rank 0, meets the
/// queue pair in the error state, and ends it naming rank 0).
#[test]
fn a_queue_pair_in_the_error_state_ends_the_job_naming_the_peer() {
    fails_naming(
        TEST_AM,
        "qp_error@0:20",
        &[
            "with rank 1 failed: flushed",
            "rank 1: a SEND with rank 0 failed: remote operation error",
        ],
    );
}

/// Rank 1's device answers the next SEND arriving after its 10th send as
/// receiver-not-ready with the retries exhausted: the sender ends the job
/// naming rank 1 (or, as for a remote access error, rank 1 is first to
/// meet the sender's queue pair in the error state).
#[test]
fn rnr_retries_exhausted_end_the_job_naming_the_peer() {
    fails_naming(
        TEST_AM,
        "rnr@1:10",
        &[
            "with rank 1 failed: receiver-not-ready retries exceeded",
            "rank 1: a SEND with rank 0 failed: remote operation error",
            "rank 1: a SEND with rank 2 failed: remote operation error",
        ],
    );
}

/// Rank 1's device refuses the next RDMA operation arriving after its
/// first send with a remote access error: the initiator ends the job
/// naming rank 1, unless rank 1 is first to send to the initiator, whose
/// queue pair is now in the error state, and ends it naming the initiator
/// (a remote operation error).
#[test]
fn a_remote_access_error_ends_the_job_naming_the_peer() {
    fails_naming(
        TEST_RMA,
        "access@1:1",
        &[
            "with rank 1 failed: remote access error",
            "rank 1: a SEND with rank 0 failed: remote operation error",
            "rank 1: a SEND with rank 2 failed: remote operation error",
        ],
    );
}

/// The last rank stops (SIGSTOP, its simulated device's threads too);
/// rank 0 sends it Active Messages: once the sends go unanswered past
/// `GEX_IBV_PEER_TIMEOUT`, rank 0 ends the job naming it.
#[test]
fn a_stopped_peer_ends_the_job_naming_it() {
    let env = [
        ("GEX_IBV_PROVIDER", "sim"),
        ("GEX_IBV_BYPASS", "0"),
        ("GEX_IBV_PEER_TIMEOUT", "2"),
    ];
    let out = launch_on("ibv", TEST_FAULTS, 3, &["silent-peer"], &env);
    assert!(!out.timed_out, "{}", report(&out));
    assert!(
        out.elapsed < PROMPT,
        "took {:.2?}\n{}",
        out.elapsed,
        report(&out)
    );
    assert_eq!(out.code, 1, "{}", report(&out));
    assert!(
        out.stderr.contains("ibv conduit: rank 0: ") && out.stderr.contains("rank 2"),
        "{}",
        report(&out)
    );
    check_cleanup(&out);
}

/// The last rank stops (SIGSTOP) while the others wait in a barrier with
/// nothing outstanding toward it: their heartbeats go unanswered, and
/// within the peer timeout (plus a heartbeat period) the job ends naming
/// it. (A rank that ends cleanly says BYE first, so the jobs above end
/// normally although their ranks leave at different times.)
#[test]
fn a_rank_stopped_in_a_barrier_is_noticed_by_heartbeats() {
    let env = [
        ("GEX_IBV_PROVIDER", "sim"),
        ("GEX_IBV_BYPASS", "0"),
        ("GEX_IBV_PEER_TIMEOUT", "2"),
    ];
    let out = launch_on("ibv", TEST_FAULTS, 3, &["stopped-in-barrier"], &env);
    assert!(!out.timed_out, "{}", report(&out));
    assert!(
        out.elapsed < PROMPT,
        "took {:.2?}\n{}",
        out.elapsed,
        report(&out)
    );
    assert_eq!(out.code, 1, "{}", report(&out));
    assert!(
        out.stderr.contains("a heartbeat with rank 2 failed"),
        "{}",
        report(&out)
    );
    check_cleanup(&out);
}
