//! Multi-process tests: the test programs of this crate run as jobs of 1 to
//! 4 ranks through the launcher library (`gex_run::run`), and the fault
//! programs check how jobs end when a rank fails or exits.
//!
//! Every job runs with a 240 s timeout as a guard against hangs, captures
//! its output (shown, last 4 KiB, when a check fails), and after it ends no
//! rank process and no `/dev/shm` object of the job may remain.
//!
//! The machines this runs on have 2 cores and a 4-rank job already
//! oversubscribes them, so jobs never run concurrently: each holds an
//! exclusive `flock` on a file in the target's temporary directory, which
//! serialises them across the threads of `cargo test` and the processes of
//! `cargo nextest` alike.

use std::time::Duration;

use gex_run::{run, JobOutcome, JobSpec, Output};

mod common;
use common::{check_cleanup, job_lock, launch_on, on_two_named_hosts, report, tail, TIMEOUT};

/// A failing job must end within this (the launcher ends it promptly).
const PROMPT: Duration = Duration::from_secs(30);

const TEST_AM: &str = env!("CARGO_BIN_EXE_test-am");
const TEST_CORE: &str = env!("CARGO_BIN_EXE_test-core");
const TEST_RMA: &str = env!("CARGO_BIN_EXE_test-rma");
const TEST_RATOMIC: &str = env!("CARGO_BIN_EXE_test-ratomic");
const TEST_VIS: &str = env!("CARGO_BIN_EXE_test-vis");
const TEST_EP: &str = env!("CARGO_BIN_EXE_test-ep");
const TEST_MK: &str = env!("CARGO_BIN_EXE_test-mk");
const TEST_PRIMSEG: &str = env!("CARGO_BIN_EXE_test-primseg");
const TEST_FAULTS: &str = env!("CARGO_BIN_EXE_faults");
const TEST_FLOOD: &str = env!("CARGO_BIN_EXE_test-flood");
const TEST_CONFIG: &str = env!("CARGO_BIN_EXE_test-config");
const TEST_LATE: &str = env!("CARGO_BIN_EXE_test-late");

/// Runs `program args` as a job of `ranks` ranks with captured output.
fn launch(program: &str, ranks: u32, args: &[&str]) -> JobOutcome {
    launch_env(program, ranks, args, &[])
}

fn launch_env(program: &str, ranks: u32, args: &[&str], env: &[(&str, &str)]) -> JobOutcome {
    launch_on("smp", program, ranks, args, env)
}

/// A test program passes on every rank count from 1 to 4.
fn passes_on_1_to_4_ranks(program: &str, name: &str) {
    passes_on_1_to_4_ranks_env(program, name, &[], "");
}

/// Runs `program` with `env` on 1 to 4 ranks; every rank's success line
/// must end with `suffix`.
fn passes_on_1_to_4_ranks_env(program: &str, name: &str, env: &[(&str, &str)], suffix: &str) {
    passes_on_ranks_env(program, name, 1..=4, env, suffix);
}

/// [`passes_on_1_to_4_ranks_env`] on the job sizes `sizes`.
fn passes_on_ranks_env(
    program: &str,
    name: &str,
    sizes: std::ops::RangeInclusive<u32>,
    env: &[(&str, &str)],
    suffix: &str,
) {
    for n in sizes {
        let out = launch_env(program, n, &[], env);
        assert!(!out.timed_out, "{name} -n {n} timed out\n{}", report(&out));
        assert_eq!(out.code, 0, "{name} -n {n} failed\n{}", report(&out));
        for r in 0..n {
            let line = format!("{name}: rank {r} of {n}: all checks passed{suffix}");
            assert!(
                out.stdout.contains(&line),
                "{name} -n {n}: no {line:?}\n{}",
                report(&out)
            );
        }
        assert_eq!(out.pids.len(), n as usize);
        check_cleanup(&out);
    }
}

#[test]
fn test_am_1_to_4_ranks() {
    passes_on_1_to_4_ranks(TEST_AM, "test-am");
}

#[test]
fn test_rma_1_to_4_ranks() {
    passes_on_1_to_4_ranks_env(TEST_RMA, "test-rma", &[], " (direct path)");
}

/// The same RMA tests with every transfer forced through the Active Message
/// reference path.
#[test]
#[ignore = "wide matrix: cargo xtask test-cluster runs it"]
fn test_rma_am_path_1_to_4_ranks() {
    passes_on_1_to_4_ranks_env(
        TEST_RMA,
        "test-rma",
        &[("GEX_RMA_FORCE_AM", "1")],
        " (am path)",
    );
}

/// Remote atomics: CPU atomics on mapped segments (smp), the same through
/// Active Messages the target executes (forced), and both over udp without
/// the bypass (direct to the rank itself, the conduit's ATOMIC messages to the others).
#[test]
fn test_ratomic_1_to_4_ranks() {
    passes_on_1_to_4_ranks_env(TEST_RATOMIC, "test-ratomic", &[], " (direct path)");
}

#[test]
#[ignore = "wide matrix: cargo xtask test-cluster runs it"]
fn test_ratomic_am_path_1_to_4_ranks() {
    passes_on_1_to_4_ranks_env(
        TEST_RATOMIC,
        "test-ratomic",
        &[("GEX_RMA_FORCE_AM", "1")],
        " (am path)",
    );
}

/// Over a simulated NIC (a test double of a conduit with its own atomics,
/// completing asynchronously): domains use the conduit's atomics for every
/// rank, the model and hammer tests pass through them, and IMMEDIATE
/// no-ops on a full NIC queue and on a congested AM route touch nothing.
/// (One rank is one neighbourhood: CPU atomics, already covered above.)
#[test]
#[ignore = "wide matrix: cargo xtask test-cluster runs it"]
fn test_ratomic_over_simulated_nic_2_to_4_ranks() {
    passes_on_ranks_env(
        TEST_RATOMIC,
        "test-ratomic",
        2..=4,
        &[("GEX_TEST_SIMNIC", "1")],
        " (nic path)",
    );
}

/// Over udp without the bypass, operations on other ranks travel as the
/// conduit's ATOMIC messages, performed by the target's protocol shell
/// with CPU atomics; forced, as Active Messages (every rank, itself too).
#[test]
fn test_ratomic_over_udp_2_to_4_ranks() {
    passes_over_udp_env(
        TEST_RATOMIC,
        "test-ratomic",
        &[("GEX_UDP_BYPASS", "0")],
        " (direct+conduit path)",
    );
}

#[test]
#[ignore = "wide matrix: cargo xtask test-cluster runs it"]
fn test_ratomic_am_path_over_udp_2_to_4_ranks() {
    passes_over_udp_env(
        TEST_RATOMIC,
        "test-ratomic",
        &[("GEX_UDP_BYPASS", "0"), ("GEX_RMA_FORCE_AM", "1")],
        " (am path)",
    );
}

/// Vector, indexed and strided transfers: direct copies on smp, packed
/// Active Messages (forced), and over udp without the bypass direct to the
/// rank itself and through the conduit's one-sided operations plus packed
/// AMs to the others (or packed AMs only, forced).
#[test]
fn test_vis_1_to_4_ranks() {
    passes_on_1_to_4_ranks_env(TEST_VIS, "test-vis", &[], " (direct path)");
}

#[test]
#[ignore = "wide matrix: cargo xtask test-cluster runs it"]
fn test_vis_am_path_1_to_4_ranks() {
    passes_on_1_to_4_ranks_env(
        TEST_VIS,
        "test-vis",
        &[("GEX_VIS_FORCE_AM", "1")],
        " (am path)",
    );
}

#[test]
fn test_vis_over_udp_2_to_4_ranks() {
    passes_over_udp_env(
        TEST_VIS,
        "test-vis",
        &[("GEX_UDP_BYPASS", "0")],
        " (conduit+direct path)",
    );
}

#[test]
#[ignore = "wide matrix: cargo xtask test-cluster runs it"]
fn test_vis_am_path_over_udp_2_to_4_ranks() {
    passes_over_udp_env(
        TEST_VIS,
        "test-vis",
        &[("GEX_UDP_BYPASS", "0"), ("GEX_VIS_FORCE_AM", "1")],
        " (am path)",
    );
}

/// Endpoints made with `gex_EP_Create`: three AM-capable endpoints per
/// rank, each served by its own thread, exchange Short, Medium and Long
/// requests and replies between every pair of (rank, endpoint), on smp
/// and over udp without the bypass; plus the error cases.
#[test]
fn test_ep_1_to_4_ranks() {
    passes_on_1_to_4_ranks(TEST_EP, "test-ep");
}

#[test]
fn test_ep_over_udp_2_to_4_ranks() {
    passes_over_udp(TEST_EP, "test-ep");
}

/// Memory kinds and created segments: two created endpoints per rank with
/// segments in library and client memory, published over the primordial
/// team, RMA between every (rank, endpoint) from one thread per endpoint,
/// queries, destroy and re-create, the errors; on smp (direct copies into
/// mapped library memory), with the AM route forced, and over udp without
/// the bypass.
#[test]
fn test_mk_1_to_4_ranks() {
    passes_on_1_to_4_ranks(TEST_MK, "test-mk");
}

#[test]
#[ignore = "wide matrix: cargo xtask test-cluster runs it"]
fn test_mk_am_path_1_to_4_ranks() {
    passes_on_1_to_4_ranks_env(TEST_MK, "test-mk", &[("GEX_RMA_FORCE_AM", "1")], "");
}

#[test]
fn test_mk_over_udp_2_to_4_ranks() {
    passes_over_udp(TEST_MK, "test-mk");
}

/// Created segments bound to the primordial endpoints and published
/// instead of attached (as the reference's testsegment does): RMA over
/// the team and over a pair naming a created endpoint that shares the
/// segment, Long requests and replies, atomics, every byte checked at its
/// owner; the errors (attaching after binding among them). On smp (direct
/// copies into library memory, client memory through the AM route), with
/// the AM route forced, and over udp with and without the bypass.
#[test]
fn test_primseg_1_to_4_ranks() {
    passes_on_1_to_4_ranks(TEST_PRIMSEG, "test-primseg");
}

#[test]
#[ignore = "wide matrix: cargo xtask test-cluster runs it"]
fn test_primseg_am_path_3_ranks() {
    passes_on_ranks_env(
        TEST_PRIMSEG,
        "test-primseg",
        3..=3,
        &[("GEX_RMA_FORCE_AM", "1")],
        "",
    );
}

#[test]
fn test_primseg_over_udp_2_to_4_ranks() {
    passes_over_udp(TEST_PRIMSEG, "test-primseg");
}

#[test]
#[ignore = "wide matrix: cargo xtask test-cluster runs it"]
fn test_primseg_over_udp_with_the_bypass_2_to_4_ranks() {
    passes_over_udp_env(TEST_PRIMSEG, "test-primseg", &[("GEX_UDP_BYPASS", "1")], "");
}

/// Runs `program` over the udp conduit with the shared-memory bypass off
/// (every peer over UDP) on 2 to 4 ranks.
fn passes_over_udp(program: &str, name: &str) {
    passes_over_udp_env(program, name, &[("GEX_UDP_BYPASS", "0")], "");
}

/// [`passes_over_udp`] with the environment `env` and `suffix` after every
/// rank's "all checks passed".
fn passes_over_udp_env(program: &str, name: &str, env: &[(&str, &str)], suffix: &str) {
    for n in 2..=4 {
        let out = launch_on("udp", program, n, &[], env);
        assert!(
            !out.timed_out,
            "{name} -n {n} over udp timed out\n{}",
            report(&out)
        );
        assert_eq!(
            out.code,
            0,
            "{name} -n {n} over udp failed\n{}",
            report(&out)
        );
        for r in 0..n {
            let line = format!("{name}: rank {r} of {n}: all checks passed{suffix}");
            assert!(
                out.stdout.contains(&line),
                "{name} -n {n} over udp: no {line:?}\n{}",
                report(&out)
            );
        }
        check_cleanup(&out);
    }
}

#[test]
fn test_am_over_udp_2_to_4_ranks() {
    passes_over_udp(TEST_AM, "test-am");
}

/// `GEX_STATS=1`: every rank prints its conduit's counters at exit.
/// A misspelt variable is named in a warning, once (rank 0, whose lines
/// the launcher prefixes with `[0]`), with the
/// variable it most likely means, and the job runs; a value that does not
/// parse ends init with an error naming the variable.
#[test]
fn unknown_variables_warn_and_bad_values_fail_naming_them() {
    let out = launch_on(
        "udp",
        TEST_CORE,
        3,
        &[],
        &[("GEX_UDP_BYPAS", "0"), ("GEX_STATS", "0")],
    );
    assert_eq!(out.code, 0, "{}", report(&out));
    let warned: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("GEX_UDP_BYPAS "))
        .collect();
    assert_eq!(
        warned,
        ["[0] gex: warning: GEX_UDP_BYPAS is not a gex variable (did you mean GEX_UDP_BYPASS?); ignored"],
        "{}",
        report(&out)
    );
    check_cleanup(&out);
    let out = launch_on("udp", TEST_CORE, 2, &[], &[("GEX_UDP_MTU", "abc")]);
    assert_ne!(out.code, 0, "{}", report(&out));
    assert!(
        out.stderr.contains("GEX_UDP_MTU=\"abc\""),
        "the error names the variable: {}",
        report(&out)
    );
    check_cleanup(&out);
}

/// Settings a program passes in code (`gex::Config`) take effect, and win
/// over the environment: test-config sets a datagram size of 1024 bytes,
/// no bypass and RMA through Active Messages, and checks each (see the
/// program). With `code-only` it reads no setting from the environment, so
/// variables that would not parse do not matter.
#[test]
fn settings_passed_in_code_take_effect() {
    type Case<'a> = (
        &'a str,
        u32,
        &'a [&'a str],
        &'a [(&'a str, &'a str)],
        &'a str,
    );
    let cases: [Case; 3] = [
        (
            "udp",
            3,
            &[],
            &[
                ("GEX_UDP_MTU", "65507"),
                ("GEX_UDP_BYPASS", "1"),
                ("GEX_RMA_FORCE_AM", "0"),
            ],
            "",
        ),
        (
            "udp",
            2,
            &["code-only"],
            &[("GEX_UDP_MTU", "abc"), ("GEX_RMA_FORCE_AM", "x")],
            " (code only)",
        ),
        ("smp", 2, &[], &[], ""),
    ];
    for (conduit, n, args, env, suffix) in cases {
        let out = launch_on(conduit, TEST_CONFIG, n, args, env);
        assert_eq!(out.code, 0, "{conduit} {args:?}: {}", report(&out));
        for r in 0..n {
            let line = format!("test-config: rank {r} of {n}: all checks passed{suffix}");
            assert!(
                out.stdout.contains(&line),
                "{conduit} {args:?}: no {line:?}\n{}",
                report(&out)
            );
        }
        check_cleanup(&out);
    }
}

#[test]
fn gex_stats_prints_every_ranks_counters_at_exit() {
    for (conduit, n) in [("udp", 3), ("smp", 2)] {
        let out = launch_on(
            conduit,
            TEST_CORE,
            n,
            &[],
            &[("GEX_UDP_BYPASS", "0"), ("GEX_STATS", "1")],
        );
        assert_eq!(out.code, 0, "{conduit}: {}", report(&out));
        for r in 0..n {
            let head = format!("gex stats, rank {r}, conduit {conduit}:");
            let line = out
                .stderr
                .lines()
                .find(|l| l.contains(&head))
                .unwrap_or_else(|| panic!("{conduit}: no {head:?}\n{}", report(&out)));
            if conduit == "udp" {
                for c in ["messages_sent=", "retransmits=", "dropped_bad_key=0"] {
                    assert!(line.contains(c), "{conduit}: {c} missing in {line:?}");
                }
            }
        }
        check_cleanup(&out);
    }
}

#[test]
fn test_core_over_udp_2_to_4_ranks() {
    passes_over_udp(TEST_CORE, "test-core");
}

/// test-rma over udp on the conduit's one-sided operations (bypass off);
/// the other two routes (direct copies through the shared-memory bypass,
/// the AM reference path) are test-cluster's wide variant
/// `test_rma_over_udp_direct_and_am_routes_2_to_4_ranks`.
#[test]
fn test_rma_over_udp_conduit_route_2_to_4_ranks() {
    passes_over_udp_env(
        TEST_RMA,
        "test-rma",
        &[("GEX_UDP_BYPASS", "0"), ("GEX_STATS", "1")],
        " (conduit path)",
    );
}

/// The other two routes: the bypass, and the AM path (forced).
#[test]
#[ignore = "wide matrix: cargo xtask test-cluster runs it"]
fn test_rma_over_udp_direct_and_am_routes_2_to_4_ranks() {
    passes_over_udp_env(TEST_RMA, "test-rma", &[], " (direct path)");
    passes_over_udp_env(
        TEST_RMA,
        "test-rma",
        &[("GEX_UDP_BYPASS", "0"), ("GEX_RMA_FORCE_AM", "1")],
        " (am path)",
    );
}

/// The udp conduit's counter `name` in rank `r`'s `GEX_STATS=1` summary
/// line of a finished job (panics naming what is missing).
fn udp_counter(out: &JobOutcome, r: u32, name: &str) -> u64 {
    let head = format!("gex stats, rank {r}, conduit udp:");
    let line = out
        .stderr
        .lines()
        .find(|l| l.contains(&head))
        .unwrap_or_else(|| panic!("no {head:?}\n{}", report(out)));
    line.split(&format!(" {name}="))
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("rank {r}: no {name}= in {line:?}"))
}

/// Over udp without the bypass, remote atomics on other ranks really
/// travel as the conduit's ATOMIC messages: every rank of 3 starts them
/// and serves its peers' (the conduit's counters), and with the Active
/// Message route forced none do.
#[test]
fn udp_atomics_travel_as_conduit_messages() {
    for (force, want_some) in [("0", true), ("1", false)] {
        let out = launch_on(
            "udp",
            TEST_RATOMIC,
            3,
            &[],
            &[
                ("GEX_UDP_BYPASS", "0"),
                ("GEX_STATS", "1"),
                ("GEX_RMA_FORCE_AM", force),
            ],
        );
        assert_eq!(out.code, 0, "{}", report(&out));
        for r in 0..3 {
            for c in ["atomics", "atomics_served"] {
                let v = udp_counter(&out, r, c);
                assert_eq!(v > 0, want_some, "rank {r}, forced AMs {force}: {c}={v}");
            }
        }
        check_cleanup(&out);
    }
}

/// With the bypass off, the one-sided route really carries the transfers:
/// every rank starts puts and gets and serves its peers' (the conduit's
/// counters), with no AM handler involved.
#[test]
fn udp_one_sided_route_moves_the_data() {
    let out = launch_on(
        "udp",
        TEST_RMA,
        3,
        &[],
        &[("GEX_UDP_BYPASS", "0"), ("GEX_STATS", "1")],
    );
    assert_eq!(out.code, 0, "{}", report(&out));
    for r in 0..3 {
        for c in ["rma_puts", "rma_gets", "rma_served"] {
            let v = udp_counter(&out, r, c);
            assert!(v > 0, "rank {r}: {c}={v}");
        }
    }
    check_cleanup(&out);
}

/// Late arrivals at the barrier with every rank and a busy thread on one
/// core (test-late): oversubscribed ranks were granted short time slices
/// (where the kernel has them), and the late phases end within their bound.
#[test]
fn late_barriers_on_a_busy_shared_core_1_to_4_ranks() {
    passes_on_1_to_4_ranks(TEST_LATE, "test-late");
}

/// test-late over udp without the bypass (one rank per "host": no
/// oversubscribed host, default time slices).
#[test]
fn late_barriers_over_udp_2_to_4_ranks() {
    passes_over_udp(TEST_LATE, "test-late");
}

#[test]
fn test_core_1_to_4_ranks() {
    passes_on_1_to_4_ranks(TEST_CORE, "test-core");
}

/// Runs `faults mode` on `ranks` ranks and checks what every failing
/// job must do: end promptly, without the timeout, leaving nothing behind,
/// after every rank reached the fault (its announcement is in stdout).
fn fault(mode: &str, ranks: u32, announce: &str) -> JobOutcome {
    let out = launch(TEST_FAULTS, ranks, &[mode]);
    assert!(
        !out.timed_out,
        "{mode} on {ranks} ranks timed out\n{}",
        report(&out)
    );
    assert!(
        out.elapsed < PROMPT,
        "{mode} on {ranks} ranks took {:.2?} to end\n{}",
        out.elapsed,
        report(&out)
    );
    assert!(
        out.stdout.contains(&format!("mode {mode}: {announce}")),
        "{mode} on {ranks} ranks: no {announce:?} line\n{}",
        report(&out)
    );
    check_cleanup(&out);
    out
}

#[test]
fn fault_panic_ends_the_job_with_101() {
    for n in [2, 3, 4] {
        let out = fault("panic", n, "panicking");
        assert_eq!(out.code, 101, "{}", report(&out));
        assert!(
            out.stderr.contains("test-faults: deliberate panic"),
            "{}",
            report(&out)
        );
        // The others were ended by the launcher, not by finishing.
        assert!(out.stdout.contains("waiting forever"), "{}", report(&out));
    }
}

#[test]
fn fault_sigkill_ends_the_job_with_137() {
    let out = fault("sigkill", 3, "sending SIGKILL to myself");
    assert_eq!(out.code, 128 + libc::SIGKILL, "{}", report(&out));
}

#[test]
fn fault_exit_from_one_rank_ends_the_job_with_its_code() {
    let out = fault("exit", 3, "calling gex::exit(7)");
    assert_eq!(out.code, 7, "{}", report(&out));
    // The launcher names the rank and the non-zero code.
    assert!(
        out.stderr
            .contains("gex-run: rank 0 called exit with code 7"),
        "{}",
        report(&out)
    );
}

/// Issue #29: ranks that call exit too finish on their own, with their
/// output. After a barrier the ranks other than 0 print their last words
/// (no newline: Rust's buffered stdout) and exit at once; rank 0 exits
/// 20 ms later after printing a line, which used to be lost: the first
/// exit killed it. On smp and udp (without the bypass), 2 and 4 ranks.
#[test]
fn ranks_exiting_after_the_first_exit_keep_their_output() {
    for (conduit, env) in [("smp", &[][..]), ("udp", &[("GEX_UDP_BYPASS", "0")][..])] {
        for n in [2, 4] {
            let out = launch_on(conduit, TEST_FAULTS, n, &["exit-late-print"], env);
            let all = report(&out);
            assert!(!out.timed_out && out.code == 0, "{conduit} -n {n}\n{all}");
            let line = format!(
                "[0] test-faults: rank 0 of {n}: mode exit-late-print: the last line, after the \
                 others' exits"
            );
            assert!(
                out.stdout.lines().any(|l| l == line),
                "{conduit} -n {n}: no {line:?}\n{all}"
            );
            for r in 1..n {
                let line = format!(
                    "[{r}] test-faults: rank {r} of {n}: mode exit-late-print: last words without \
                     a newline"
                );
                assert!(
                    out.stdout.lines().any(|l| l == line),
                    "{conduit} -n {n}: no {line:?}\n{all}"
                );
            }
            assert!(!out.stderr.contains("gex-run:"), "{conduit} -n {n}\n{all}");
            check_cleanup(&out);
        }
    }
}

/// An exit while the others wait in a barrier it never joins: they are
/// ended once the exit grace is over (not at once, and not hung), and the
/// job's code is the exit's; in a control-plane barrier they are told to
/// end at once.
#[test]
fn ranks_blocked_in_a_barrier_are_ended_after_the_exit_grace() {
    let grace = gex_core::bootstrap::wire::EXIT_GRACE;
    let out = fault(
        "exit-in-barrier",
        3,
        "calling gex::exit(5) while the others wait in a barrier",
    );
    assert_eq!(out.code, 5, "{}", report(&out));
    assert!(out.elapsed >= grace, "{}", report(&out));
    assert!(out.elapsed < grace + EXIT_SLACK, "{}", report(&out));
    assert!(!out.stdout.contains("completed"), "{}", report(&out));
    assert!(
        out.stderr
            .contains("gex-run: rank 0 called exit with code 5"),
        "{}",
        report(&out)
    );
    // In the control plane's barrier, they are told to end at once, and
    // end with the exit's code, saying why.
    let out = fault(
        "exit-in-ctrl-barrier",
        3,
        "calling gex::exit(5) while the others wait in a barrier",
    );
    assert_eq!(out.code, 5, "{}", report(&out));
    for r in [1, 2] {
        let line = format!("gex: rank {r}: the job is ending: rank 0 called exit with code 5");
        assert!(out.stderr.contains(&line), "no {line:?}\n{}", report(&out));
    }
}

#[test]
fn fault_exit0_on_every_rank_is_success() {
    let out = fault("exit0-all", 3, "calling gex::exit(0)");
    assert_eq!(out.code, 0, "{}", report(&out));
}

#[test]
fn fault_am_to_unregistered_handler_is_fatal() {
    let out = fault(
        "fatal-handler",
        3,
        "sending rank 2 an AM for unregistered handler 250",
    );
    assert_ne!(out.code, 0, "{}", report(&out));
    assert!(
        out.stderr.contains("no handler is registered")
            && out.stderr.contains("handler index 250")
            && out.stderr.contains("on rank 2"),
        "{}",
        report(&out)
    );
}

#[test]
fn fault_exit_from_a_handler_ends_the_job_with_its_code() {
    let out = fault("handler-context", 3, "calling gex::exit(3) in a handler");
    assert_eq!(out.code, 3, "{}", report(&out));
}

#[test]
fn fault_exit0_from_a_handler_inside_a_barrier_is_success() {
    let out = fault("exit0-in-barrier", 3, "calling gex::exit(0) in a handler");
    assert_eq!(out.code, 0, "{}", report(&out));
}

/// A forged reply to a layer's handler (what a forged datagram would
/// deliver) names an operation that is not in flight: a fatal error naming
/// the handler, never a memory access (the reply used to carry a pointer).
#[test]
fn forged_replies_to_rma_handlers_are_fatal_not_a_signal() {
    for (mode, handler) in [
        ("forge-put-ack", "gex-rma put ack"),
        ("forge-get-data", "gex-rma get data"),
    ] {
        let out = fault(mode, 2, "forging a reply");
        assert_eq!(out.code, 1, "{mode}: {}", report(&out));
        assert!(
            out.stderr
                .contains(&format!("fatal error on rank 0: {handler}"))
                && out.stderr.contains("not in flight"),
            "{mode}: {}",
            report(&out)
        );
    }
}

/// Forged messages to gex-ratomic's handlers (what a forged datagram would
/// deliver): a request naming a target outside the segment or misaligned,
/// or a reply naming an operation not in flight, is a fatal error naming
/// the handler, checked before any memory is touched (never a signal).
#[test]
fn forged_messages_to_ratomic_handlers_are_fatal_not_a_signal() {
    for (mode, handler, what) in [
        (
            "forge-ratomic-range",
            "gex-ratomic op from rank 1",
            "is outside the local segment",
        ),
        (
            "forge-ratomic-align",
            "gex-ratomic op from rank 1",
            "is not aligned to the 8 bytes of GEX_DT_U64",
        ),
        (
            "forge-ratomic-result",
            "gex-ratomic result",
            "not in flight",
        ),
    ] {
        let out = fault(mode, 2, "forging a message");
        assert_eq!(out.code, 1, "{mode}: {}", report(&out));
        assert!(
            out.stderr
                .contains(&format!("fatal error on rank 0: {handler}"))
                && out.stderr.contains(what),
            "{mode}: {}",
            report(&out)
        );
    }
}

/// Forged messages to gex-vis's handlers (what a forged datagram would
/// deliver): a packed put whose record names a range outside the segment
/// or announces more data than follows, a get whose payload is not whole
/// records, a reply naming an operation not in flight, a peer completion
/// naming a reserved handler: a fatal error naming the handler, checked
/// before any byte is written (never a signal).
#[test]
fn forged_messages_to_vis_handlers_are_fatal_not_a_signal() {
    for (mode, handler, what) in [
        (
            "forge-vis-range",
            "gex-vis put from rank 1: record 0",
            "outside the local segment",
        ),
        (
            "forge-vis-truncated",
            "gex-vis put from rank 1",
            "record 0 announces 100 bytes but only 10 follow",
        ),
        (
            "forge-vis-header",
            "gex-vis get from rank 1",
            "a truncated record header at byte 0 of a 5-byte payload",
        ),
        (
            "forge-vis-toolarge",
            "gex-vis get from rank 1",
            "asks for 1048576000 bytes, more than a Medium reply carries",
        ),
        ("forge-vis-ack", "gex-vis put ack", "not in flight"),
        (
            "forge-vis-ep",
            "gex-vis put from rank 1",
            "endpoint 7 of this rank has no bound segment",
        ),
        (
            "forge-vis-ep-range",
            "gex-vis get from rank 1: record 0 (endpoint 1)",
            "outside the local segment",
        ),
        (
            "forge-vis-pc",
            "gex-vis peer completion from rank 1",
            "handler index 3 is reserved to the library",
        ),
    ] {
        let out = fault(mode, 2, "forging a message");
        assert_eq!(out.code, 1, "{mode}: {}", report(&out));
        assert!(
            out.stderr
                .contains(&format!("fatal error on rank 0: {handler}"))
                && out.stderr.contains(what),
            "{mode}: {}",
            report(&out)
        );
    }
}

/// Forged requests to gex-rma's handlers for created endpoints' segments
/// (an index that is not a created endpoint's, one without a bound
/// segment, a range past the segment) are fatal errors naming what is
/// wrong, never a write.
#[test]
fn forged_created_segment_rma_is_fatal() {
    for (mode, what) in [
        (
            "forge-mk-index",
            "endpoint index 0 is not the index of a created endpoint",
        ),
        (
            "forge-mk-unbound",
            "endpoint 7 of rank 0 has no bound segment",
        ),
        ("forge-mk-range", "(endpoint 1)"),
    ] {
        let out = fault(mode, 2, "forging a message");
        assert_eq!(out.code, 1, "{mode}: {}", report(&out));
        assert!(
            out.stderr.contains("fatal error on rank 0: RMA ")
                && out.stderr.contains("from rank 1")
                && out.stderr.contains(what),
            "{mode}: {}",
            report(&out)
        );
        if mode == "forge-mk-range" {
            assert!(out.stderr.contains("range"), "{mode}: {}", report(&out));
        }
    }
}

/// Long Active Messages forged past the AM layer's checks to a created
/// endpoint without a bound segment, or past the end of one, are fatal at
/// the target, naming the endpoint (and the range), never a write. Over
/// udp without the bypass: on smp the sender's transport copies into the
/// mapping it checked itself, so it refuses them first.
#[test]
fn forged_longs_to_created_endpoints_are_fatal() {
    for (mode, what) in [
        (
            "forge-long-unbound",
            "endpoint 7 of rank 0 has no bound segment",
        ),
        ("forge-long-range", "endpoint 1: "),
    ] {
        let out = launch_on("udp", TEST_FAULTS, 2, &[mode], &[("GEX_UDP_BYPASS", "0")]);
        assert!(!out.timed_out, "{mode}: {}", report(&out));
        assert!(
            out.stdout.contains(&format!("mode {mode}: forging a Long")),
            "{mode}: {}",
            report(&out)
        );
        assert_eq!(out.code, 1, "{mode}: {}", report(&out));
        assert!(
            out.stderr
                .contains("fatal error on rank 0: udp conduit: a Long AM from rank 1")
                && out.stderr.contains(what),
            "{mode}: {}",
            report(&out)
        );
        if mode == "forge-long-range" {
            assert!(out.stderr.contains("range"), "{mode}: {}", report(&out));
        }
        check_cleanup(&out);
    }
}

/// One-sided requests of the udp conduit, started past gex-rma's checks,
/// to a created endpoint without a bound segment or past the end of one,
/// are fatal at the target, naming the endpoint (and the range), before
/// any memory is touched.
#[test]
fn forged_one_sided_requests_to_created_endpoints_are_fatal() {
    for (mode, what) in [
        (
            "forge-rma-ep-unbound",
            "endpoint 7 of rank 0 has no bound segment",
        ),
        ("forge-rma-ep-range", "(endpoint 1): endpoint 1: "),
    ] {
        let out = forged_one_sided_message(mode, 2, "forging a one-sided", what);
        if mode == "forge-rma-ep-range" {
            assert!(out.stderr.contains("range"), "{mode}: {}", report(&out));
        }
        check_cleanup(&out);
    }
}

/// Runs faults `mode` over udp without the bypass on `n` ranks, where the
/// last rank announces `announce` and sends a one-sided message rank 0
/// must find fatal, with `what` in the message; returns the job's output.
fn forged_one_sided_message(mode: &str, n: u32, announce: &str, what: &str) -> JobOutcome {
    let out = launch_on("udp", TEST_FAULTS, n, &[mode], &[("GEX_UDP_BYPASS", "0")]);
    assert!(!out.timed_out, "{mode}: {}", report(&out));
    assert!(
        out.stdout.contains(&format!("mode {mode}: {announce}")),
        "{mode}: {}",
        report(&out)
    );
    assert_eq!(out.code, 1, "{mode}: {}", report(&out));
    let fatal = format!(
        "fatal error on rank 0: udp conduit: a one-sided message from rank {}",
        n - 1
    );
    assert!(
        out.stderr.contains(&fatal) && out.stderr.contains(what),
        "{mode}: {}",
        report(&out)
    );
    out
}

/// Remote atomics started through the udp conduit's capability past
/// gex-ratomic's checks, outside rank 0's segment or misaligned, are fatal
/// at the target naming the sender and the reason, before any memory is
/// touched.
#[test]
fn forged_conduit_atomics_are_fatal() {
    for (mode, what) in [
        ("forge-atomic-range", "outside this rank's segment"),
        ("forge-atomic-misaligned", "misaligned for GEX_DT_U64"),
    ] {
        let out = forged_one_sided_message(mode, 3, "forging a U64 fetch-add", what);
        check_cleanup(&out);
    }
}

/// A message naming an endpoint index the target does not have (forged
/// past `MAX_EPS`, an impossible source index, or sent through the API to
/// an index the target never created: endpoints are created locally) is a
/// fatal error naming the index and the reason, never a memory access or
/// a panic; on smp and over udp.
#[test]
fn messages_to_missing_endpoints_are_fatal() {
    for (mode, announce, what) in [
        (
            "forge-ep-dest",
            "forging a message to endpoint 200 of rank 0",
            "no process has endpoint index 200",
        ),
        (
            "forge-ep-source",
            "forging a message from endpoint 77 to rank 0",
            "the source endpoint index 77 is impossible",
        ),
        (
            "ep-not-created",
            "sending to endpoint 5 of rank 0, which it never created",
            "this rank has not created endpoint 5",
        ),
    ] {
        for conduit in ["smp", "udp"] {
            let env: &[(&str, &str)] = if conduit == "udp" {
                &[("GEX_UDP_BYPASS", "0")]
            } else {
                &[]
            };
            let out = launch_on(conduit, TEST_FAULTS, 2, &[mode], env);
            assert!(!out.timed_out, "{mode} over {conduit}: {}", report(&out));
            assert!(
                out.stdout.contains(&format!("mode {mode}: {announce}")),
                "{mode} over {conduit}: {}",
                report(&out)
            );
            assert_eq!(out.code, 1, "{mode} over {conduit}: {}", report(&out));
            assert!(
                out.stderr
                    .contains("fatal error on rank 0: an AM Short request")
                    && out.stderr.contains(what),
                "{mode} over {conduit}: {}",
                report(&out)
            );
            check_cleanup(&out);
        }
    }
}

/// Members that pass different single-valued arguments to a collective
/// (here the size of a broadcast) end the job with a message rather than
/// corrupt data: through the shared-memory broadcast's signature check on
/// smp (the small collectives' inline slots, or the chunked path), the
/// Active Message signature check on udp without the bypass.
#[test]
fn collective_mismatch_is_fatal() {
    let out = fault("coll-mismatch", 3, "calling mismatched broadcasts");
    assert_eq!(out.code, 1, "smp: {}", report(&out));
    assert!(
        out.stderr
            .contains("collective mismatch in small shared-memory operation")
            || out
                .stderr
                .contains("collective mismatch in shared-memory data operation"),
        "smp: {}",
        report(&out)
    );
    let out = launch_on(
        "udp",
        TEST_FAULTS,
        3,
        &["coll-mismatch"],
        &[("GEX_UDP_BYPASS", "0")],
    );
    assert!(!out.timed_out, "udp: {}", report(&out));
    assert_eq!(out.code, 1, "udp: {}", report(&out));
    assert!(
        out.stderr.contains("gex-coll: collective mismatch on team"),
        "udp: {}",
        report(&out)
    );
    check_cleanup(&out);
}

/// Members whose broadcast sizes lie either side of the small
/// collectives' inline line (1 KiB) take different shared-memory paths on
/// smp: each side notices the other's progress on its path and ends the
/// job with a message naming the mismatch, instead of waiting forever.
#[test]
fn collective_size_across_the_inline_line_is_fatal() {
    for mode in ["coll-size-line", "coll-size-line-rev"] {
        let out = fault(
            mode,
            3,
            "calling broadcasts of sizes either side of the inline line",
        );
        assert_eq!(out.code, 1, "{mode}: {}", report(&out));
        assert!(
            out.stderr.contains("gex-coll: collective mismatch")
                && out.stderr.contains("the members passed different sizes"),
            "{mode}: {}",
            report(&out)
        );
        check_cleanup(&out);
    }
}

/// `Addrs::Single` lists that differ between members are caught by the
/// signature of the first message they exchange (smp, and udp without the
/// bypass), before any data moves.
#[test]
fn single_address_lists_that_differ_are_fatal() {
    let out = fault(
        "coll-single-mismatch",
        3,
        "calling exchanges with disagreeing address lists",
    );
    assert_eq!(out.code, 1, "smp: {}", report(&out));
    assert!(
        out.stderr.contains("gex-coll: collective mismatch on team"),
        "smp: {}",
        report(&out)
    );
    let out = launch_on(
        "udp",
        TEST_FAULTS,
        3,
        &["coll-single-mismatch"],
        &[("GEX_UDP_BYPASS", "0")],
    );
    assert!(!out.timed_out, "udp: {}", report(&out));
    assert_eq!(out.code, 1, "udp: {}", report(&out));
    assert!(
        out.stderr.contains("gex-coll: collective mismatch on team"),
        "udp: {}",
        report(&out)
    );
    check_cleanup(&out);
}

/// GASNet-1 barrier misuse is a fatal error in the spec: the job dies with
/// code 1 and a message naming the call, on the smp and udp conduits and an
/// odd rank count.
#[test]
fn barrier_misuse_is_fatal() {
    for (mode, announce, message) in [
        (
            "barrier-double-notify",
            "notifying twice",
            "gasnet_barrier_notify: called twice",
        ),
        (
            "barrier-wait-unnotified",
            "waiting without a notify",
            "gasnet_barrier_wait: no gasnet_barrier_notify precedes it",
        ),
        (
            "barrier-try-unnotified",
            "trying without a notify",
            "gasnet_barrier_try: no gasnet_barrier_notify precedes it",
        ),
    ] {
        let out = fault(mode, 3, announce);
        assert_eq!(out.code, 1, "{mode}: {}", report(&out));
        assert!(
            out.stderr
                .contains(&format!("fatal error on rank 2: {message}")),
            "{mode}: {}",
            report(&out)
        );
        assert!(
            !out.stderr.contains("returned:"),
            "{mode}: {}",
            report(&out)
        );
    }
    let out = launch_on(
        "udp",
        TEST_FAULTS,
        3,
        &["barrier-double-notify"],
        &[("GEX_UDP_BYPASS", "0")],
    );
    assert!(!out.timed_out, "udp: {}", report(&out));
    assert_eq!(out.code, 1, "udp: {}", report(&out));
    assert!(
        out.stderr
            .contains("fatal error on rank 2: gasnet_barrier_notify: called twice"),
        "udp: {}",
        report(&out)
    );
    check_cleanup(&out);
}

#[test]
fn fault_silent_udp_peer_is_declared_dead() {
    let out = launch_on(
        "udp",
        TEST_FAULTS,
        3,
        &["silent-peer"],
        &[("GEX_UDP_BYPASS", "0"), ("GEX_UDP_PEER_TIMEOUT", "2")],
    );
    assert!(!out.timed_out, "{}", report(&out));
    assert!(
        out.elapsed < PROMPT,
        "took {:.2?}\n{}",
        out.elapsed,
        report(&out)
    );
    assert_eq!(out.code, 1, "{}", report(&out));
    assert!(
        out.stderr.contains("rank 2 has not answered"),
        "{}",
        report(&out)
    );
    check_cleanup(&out);
}

/// A rank stopped (SIGSTOP) while the others wait in a barrier with
/// nothing outstanding toward it: the heartbeats stop, the others declare
/// it dead within the peer timeout (plus a heartbeat period and start-up),
/// naming it, and the launcher kills the stopped process.
#[test]
fn fault_stopped_udp_rank_in_a_barrier_is_declared_dead() {
    let out = launch_on(
        "udp",
        TEST_FAULTS,
        3,
        &["stopped-in-barrier"],
        &[("GEX_UDP_BYPASS", "0"), ("GEX_UDP_PEER_TIMEOUT", "2")],
    );
    assert!(!out.timed_out, "{}", report(&out));
    assert!(
        out.elapsed < Duration::from_secs(10),
        "took {:.2?}\n{}",
        out.elapsed,
        report(&out)
    );
    assert_eq!(out.code, 1, "{}", report(&out));
    assert!(
        out.stdout
            .contains("mode stopped-in-barrier: stopping myself"),
        "{}",
        report(&out)
    );
    assert!(
        out.stderr.contains("rank 2 has not answered"),
        "{}",
        report(&out)
    );
    check_cleanup(&out);
}

/// Requests per pair and phase in the CI floods (64 KiB, 4 KiB): enough
/// to fill the windows many times over, small enough for CI.
const FLOOD_ARGS: [&str; 2] = ["300", "3000"];

/// The udp floods run with an inbox of 64 messages (`GEX_UDP_INBOX_LIMIT`),
/// so that receivers refuse request DATA often even in a small flood: with
/// one lane for requests and replies (before issue #9) these jobs hung
/// for good on 3 and 5 ranks.
const SMALL_INBOX: (&str, &str) = ("GEX_UDP_INBOX_LIMIT", "64");

/// Runs test-flood on `conduit` with `env` on each of `ranks`; every run
/// must pass (each payload byte, argument and count is checked by the
/// program).
fn floods(conduit: &str, ranks: &[u32], env: &[(&str, &str)]) {
    for &n in ranks {
        let out = launch_on(conduit, TEST_FLOOD, n, &FLOOD_ARGS, env);
        let what = format!("test-flood -n {n} on {conduit} {env:?}");
        assert!(!out.timed_out, "{what} timed out\n{}", report(&out));
        assert_eq!(out.code, 0, "{what} failed\n{}", report(&out));
        for r in 0..n {
            let line = format!("test-flood: rank {r} of {n}: all checks passed");
            assert!(
                out.stdout.contains(&line),
                "{what}: no {line:?}\n{}",
                report(&out)
            );
        }
        check_cleanup(&out);
    }
}

/// All-to-all floods of Medium and Long requests answered from their
/// handlers by same-size replies (a reply must always make progress).
#[test]
fn test_flood_smp() {
    floods("smp", &[2, 3, 5], &[]);
}

#[test]
fn test_flood_over_udp() {
    floods("udp", &[2, 3, 5], &[("GEX_UDP_BYPASS", "0"), SMALL_INBOX]);
    floods("udp", &[3], &[("GEX_UDP_BYPASS", "0")]);
}

#[test]
#[ignore = "wide matrix: cargo xtask test-cluster runs it"]
fn test_flood_over_udp_with_a_progress_thread() {
    let pt = ("GEX_UDP_PROGRESS_THREAD", "1");
    floods("udp", &[2, 3], &[("GEX_UDP_BYPASS", "0"), pt, SMALL_INBOX]);
    floods("udp", &[5], &[("GEX_UDP_BYPASS", "0"), pt]);
}

// Jobs started by another launcher: the processes get Slurm's (or Open
// MPI's) rank and size variables and no GEX_CTRL, and meet at
// GEX_RENDEZVOUS, where rank 0 serves the control plane itself.

/// How one process of a rendezvous job ended.
struct RankEnd {
    /// Exit code, or `None` if a signal ended it.
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// A free TCP port on the loopback interface (it may be taken again before
/// rank 0 binds it; then the job fails loudly).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind a free port")
        .port()
}

/// Starts `ranks` processes of `program args` as an external launcher
/// would, the rank and size in the variables `(rank_var, size_var)`, with
/// `env` on top, and waits for all of them (at most [`TIMEOUT`]).
fn launch_rendezvous(
    program: &str,
    ranks: u32,
    args: &[&str],
    vars: (&str, &str),
    env: &[(&str, &str)],
) -> (Vec<RankEnd>, Duration) {
    let _lock = job_lock();
    let rdv = format!("127.0.0.1:{}", free_port());
    let start = std::time::Instant::now();
    let (tx, rx) = std::sync::mpsc::channel();
    let mut pids = Vec::new();
    for r in 0..ranks {
        let mut cmd = std::process::Command::new(program);
        cmd.args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        // Nothing of a gex-run job (this test may itself run under one) or
        // of a real Slurm or MPI job may leak in.
        for (k, _) in std::env::vars() {
            if k.starts_with("GEX_")
                || k.starts_with("SLURM_")
                || k.starts_with("OMPI_")
                || k.starts_with("PMI_")
            {
                cmd.env_remove(&k);
            }
        }
        cmd.env(vars.0, r.to_string())
            .env(vars.1, ranks.to_string())
            .env("GEX_RENDEZVOUS", &rdv);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
        pids.push(child.id());
        let tx = tx.clone();
        std::thread::spawn(move || {
            let out = child.wait_with_output();
            let _ = tx.send((r, out));
        });
    }
    drop(tx);
    let mut ends: Vec<Option<RankEnd>> = (0..ranks).map(|_| None).collect();
    let deadline = start + TIMEOUT;
    for _ in 0..ranks {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok((r, out)) => {
                let out = out.expect("wait for a rank");
                ends[r as usize] = Some(RankEnd {
                    code: out.status.code(),
                    stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                    stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
                });
            }
            Err(_) => {
                for &pid in &pids {
                    // SAFETY: kill(2) has no memory-safety preconditions;
                    // the processes are our unreaped children.
                    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
                }
                panic!("a rendezvous job of {ranks} ranks of {program} hung");
            }
        }
    }
    let elapsed = start.elapsed();
    eprintln!(
        "{} {args:?} with {ranks} ranks at a rendezvous ({} {}): {elapsed:.2?}",
        program.rsplit('/').next().unwrap_or(program),
        vars.0,
        vars.1
    );
    (ends.into_iter().map(Option::unwrap).collect(), elapsed)
}

fn report_ends(ends: &[RankEnd]) -> String {
    let mut s = String::new();
    for (r, e) in ends.iter().enumerate() {
        s += &format!(
            "--- rank {r}: code {:?}\n--- stdout:\n{}\n--- stderr:\n{}\n",
            e.code,
            tail(&e.stdout, 2048),
            tail(&e.stderr, 2048)
        );
    }
    s
}

const SLURM: (&str, &str) = ("SLURM_PROCID", "SLURM_NTASKS");
const OPEN_MPI: (&str, &str) = ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE");

/// Runs `program` at a rendezvous on 3 ranks; every rank must pass.
fn passes_at_a_rendezvous(program: &str, name: &str, vars: (&str, &str), env: &[(&str, &str)]) {
    let (ends, _) = launch_rendezvous(program, 3, &[], vars, env);
    for (r, e) in ends.iter().enumerate() {
        assert_eq!(e.code, Some(0), "{name} {env:?}\n{}", report_ends(&ends));
        let line = format!("{name}: rank {r} of 3: all checks passed");
        assert!(
            e.stdout.contains(&line),
            "{name} {env:?}: no {line:?}\n{}",
            report_ends(&ends)
        );
    }
}

// (test-core itself cannot run here: it asserts that a process without
// GEX_CTRL is a singleton.)

#[test]
fn test_am_under_srun_meets_at_a_rendezvous() {
    let job_id = format!("rdvtest{}", std::process::id());
    passes_at_a_rendezvous(
        TEST_AM,
        "test-am",
        SLURM,
        &[("GEX_CONDUIT", "smp"), ("GEX_JOB_ID", &job_id)],
    );
    let left = gex_run::leftovers(&job_id);
    assert!(left.is_empty(), "the job left {left:?}");
}

/// Settings in code at a rendezvous, over udp: the host count reaches the
/// conduit through the bootstrap, and no variable is set on the way.
#[test]
fn test_config_over_udp_under_mpirun_meets_at_a_rendezvous() {
    passes_at_a_rendezvous(
        TEST_CONFIG,
        "test-config",
        OPEN_MPI,
        &[("GEX_CONDUIT", "udp")],
    );
}

/// udp without the bypass, no GEX_JOB_KEY: the key rank 0 makes up must
/// reach every rank's conduit.
#[test]
fn test_rma_over_udp_under_mpirun_meets_at_a_rendezvous() {
    passes_at_a_rendezvous(
        TEST_RMA,
        "test-rma",
        OPEN_MPI,
        &[("GEX_CONDUIT", "udp"), ("GEX_UDP_BYPASS", "0")],
    );
}

#[test]
fn exit_under_an_external_launcher_ends_every_rank_with_its_code() {
    let (ends, took) = launch_rendezvous(TEST_FAULTS, 3, &["exit"], SLURM, &[]);
    assert!(took < PROMPT, "took {took:.2?}\n{}", report_ends(&ends));
    for e in &ends {
        assert_eq!(e.code, Some(7), "{}", report_ends(&ends));
    }
    assert!(ends[0].stdout.contains("calling gex::exit(7)"));
    assert!(
        ends[1]
            .stderr
            .contains("the job is ending: rank 0 called exit with code 7"),
        "{}",
        report_ends(&ends)
    );
}

#[test]
fn a_failing_rank_under_an_external_launcher_ends_the_others() {
    // A panic: the rank exits with 101, and so do the others.
    let (ends, took) = launch_rendezvous(TEST_FAULTS, 3, &["panic"], SLURM, &[]);
    assert!(took < PROMPT, "took {took:.2?}\n{}", report_ends(&ends));
    for e in &ends {
        assert_eq!(e.code, Some(101), "{}", report_ends(&ends));
    }
    assert!(ends[0].stderr.contains("rank 2 exited with code 101"));

    // SIGKILL: no exit hook runs; the coordinator sees the connection
    // close and ends the others with code 1.
    let (ends, took) = launch_rendezvous(TEST_FAULTS, 3, &["sigkill"], OPEN_MPI, &[]);
    assert!(took < PROMPT, "took {took:.2?}\n{}", report_ends(&ends));
    assert_eq!(ends[2].code, None, "{}", report_ends(&ends));
    for e in &ends[..2] {
        assert_eq!(e.code, Some(1), "{}", report_ends(&ends));
        assert!(
            e.stderr.contains("rank 2 lost its connection"),
            "{}",
            report_ends(&ends)
        );
    }
}

#[test]
fn every_rank_exiting_zero_under_an_external_launcher_is_success() {
    let (ends, took) = launch_rendezvous(TEST_FAULTS, 3, &["exit0-all"], SLURM, &[]);
    assert!(took < PROMPT, "took {took:.2?}\n{}", report_ends(&ends));
    for e in &ends {
        assert_eq!(e.code, Some(0), "{}", report_ends(&ends));
    }
}

#[test]
fn a_rank_without_the_rendezvous_address_fails_loudly() {
    // One rank is a singleton: no rendezvous needed.
    let (ends, _) = launch_rendezvous(TEST_CORE, 1, &[], SLURM, &[]);
    assert_eq!(ends[0].code, Some(0), "{}", report_ends(&ends));

    let _lock = job_lock();
    let out = std::process::Command::new(TEST_CORE)
        .env_remove("GEX_CTRL")
        .env_remove("GEX_RENDEZVOUS")
        .env("SLURM_PROCID", "1")
        .env("SLURM_NTASKS", "2")
        .output()
        .expect("run test-core");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("GEX_RENDEZVOUS"), "{err}");
}

/// gex-run with ranks on two named hosts (started through a spawner that
/// only sets a variable) and its control plane over TCP: the udp conduit
/// groups ranks by GEX_HOST, so ranks 0-1 share memory and reach rank 2
/// over UDP.
#[test]
fn test_am_over_udp_on_two_named_hosts_with_a_tcp_control_plane() {
    let _lock = job_lock();
    let mut spec = JobSpec::new(3, TEST_AM);
    on_two_named_hosts(&mut spec);
    spec.ctrl = Some(gex_run::Ctrl::Tcp);
    spec.timeout = Some(TIMEOUT);
    spec.output = Output::Capture;
    spec.label = true;
    let out = run(&spec).expect("start the job");
    assert!(!out.timed_out, "{}", report(&out));
    assert_eq!(out.code, 0, "{}", report(&out));
    for r in 0..3 {
        let line = format!("test-am: rank {r} of 3: all checks passed");
        assert!(out.stdout.contains(&line), "no {line:?}\n{}", report(&out));
    }
    check_cleanup(&out);
}

// A rank that leaves early (issue #9, defect 4b): returning from `main`
// while a peer waits for its reply ends the job after the exit grace, with
// that rank's code, instead of hanging until the timeout.

/// How much later than the exit grace an early exit may end the job
/// (start-up of a few ranks on a busy 2-core machine, and the kill).
const EXIT_SLACK: Duration = Duration::from_secs(8);

#[test]
fn a_rank_returning_early_ends_the_job_after_the_grace() {
    let grace = gex_core::bootstrap::wire::EXIT_GRACE;
    for (mode, code) in [("early-exit0", 0), ("early-exit3", 3)] {
        let out = fault(mode, 3, &format!("leaving main with code {code}"));
        assert_eq!(out.code, code, "{}", report(&out));
        if code == 0 {
            // Within the grace, rank 0 has asked (with code 3 the job may
            // end before it prints).
            assert!(
                out.stdout.contains(&format!(
                    "mode {mode}: asking rank 1 and waiting for its reply"
                )),
                "{}",
                report(&out)
            );
        }
        assert!(!out.stdout.contains("got a reply"), "{}", report(&out));
        assert!(out.elapsed < grace + EXIT_SLACK, "{}", report(&out));
        if code == 0 {
            // Ended by the grace, not at once, with a message naming rank 1.
            assert!(out.elapsed >= grace, "{}", report(&out));
            assert!(
                out.stderr
                    .contains("gex-run: rank 1 exited with code 0 while ranks [0, 2] still ran"),
                "{}",
                report(&out)
            );
        } else {
            assert!(
                out.stderr.contains("gex-run: rank 1 exited with code 3"),
                "{}",
                report(&out)
            );
        }
    }
}

#[test]
fn a_rank_returning_early_at_a_rendezvous_ends_the_job_after_the_grace() {
    let grace = gex_core::bootstrap::wire::EXIT_GRACE;
    let job_id = format!("rdvexit{}", std::process::id());
    let env = [("GEX_CONDUIT", "smp"), ("GEX_JOB_ID", job_id.as_str())];
    for (mode, code) in [("early-exit0", 0), ("early-exit3", 3)] {
        let (ends, took) = launch_rendezvous(TEST_FAULTS, 3, &[mode], SLURM, &env);
        let all = report_ends(&ends);
        assert!(took < grace + EXIT_SLACK, "took {took:.2?}\n{all}");
        for e in &ends {
            assert_eq!(e.code, Some(code), "{mode}\n{all}");
        }
        assert!(!ends[0].stdout.contains("got a reply"), "{all}");
        let named = format!("rank 1 exited with code {code}");
        assert!(
            ends[0].stderr.contains(&named),
            "{mode}: no {named:?}\n{all}"
        );
        if code == 0 {
            assert!(took >= grace, "took {took:.2?}\n{all}");
        }
        let left = gex_run::leftovers(&job_id);
        assert!(left.is_empty(), "the job left {left:?}");
    }
}
