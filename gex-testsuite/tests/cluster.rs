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

use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;
use std::time::Duration;

use gex_run::{run, JobOutcome, JobSpec, Output};

/// Guard against a hung job; a healthy one takes seconds.
const TIMEOUT: Duration = Duration::from_secs(240);
/// A failing job must end within this (the launcher ends it promptly).
const PROMPT: Duration = Duration::from_secs(30);

const TEST_AM: &str = env!("CARGO_BIN_EXE_test-am");
const TEST_CORE: &str = env!("CARGO_BIN_EXE_test-core");
const TEST_RMA: &str = env!("CARGO_BIN_EXE_test-rma");
const TEST_FAULTS: &str = env!("CARGO_BIN_EXE_faults");

/// Holds the job lock until dropped (closing the file releases the flock).
struct JobLock(#[allow(dead_code)] File);

/// Waits for the exclusive job lock. The wait is bounded by the jobs that
/// hold it, each of which is bounded by [`TIMEOUT`].
fn job_lock() -> JobLock {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gex-testsuite-cluster.lock");
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("cannot open the job lock {}: {e}", path.display()));
    loop {
        // SAFETY: flock on a file descriptor this function owns (it stays
        // open for as long as `file` lives); no memory is involved.
        let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        if r == 0 {
            return JobLock(file);
        }
        let e = std::io::Error::last_os_error();
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::Interrupted,
            "flock {}: {e}",
            path.display()
        );
    }
}

/// Runs `program args` as a job of `ranks` ranks with captured output.
fn launch(program: &str, ranks: u32, args: &[&str]) -> JobOutcome {
    launch_env(program, ranks, args, &[])
}

fn launch_env(program: &str, ranks: u32, args: &[&str], env: &[(&str, &str)]) -> JobOutcome {
    launch_on("smp", program, ranks, args, env)
}

fn launch_on(
    conduit: &str,
    program: &str,
    ranks: u32,
    args: &[&str],
    env: &[(&str, &str)],
) -> JobOutcome {
    let _lock = job_lock();
    let mut spec = JobSpec::new(ranks, program);
    spec.conduit = conduit.to_string();
    spec.args = args.iter().map(|a| a.to_string()).collect();
    spec.env = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    spec.timeout = Some(TIMEOUT);
    spec.output = Output::Capture;
    spec.label = true;
    let out = run(&spec).unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
    let cmd: Vec<&str> = std::iter::once(program.rsplit('/').next().unwrap_or(program))
        .chain(args.iter().copied())
        .collect();
    eprintln!(
        "{} with {ranks} ranks: code {} in {:.2?} ({})",
        cmd.join(" "),
        out.code,
        out.elapsed,
        out.reason
    );
    out
}

/// The last `max` bytes of `s` (at a character boundary).
fn tail(s: &str, max: usize) -> &str {
    let mut start = s.len().saturating_sub(max);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// What a failed assertion shows about a job.
fn report(out: &JobOutcome) -> String {
    format!(
        "job {}: code {}, timed out {}, {:.2?}, reason: {}\n--- stdout (tail) ---\n{}\n--- stderr (tail) ---\n{}",
        out.job_id,
        out.code,
        out.timed_out,
        out.elapsed,
        out.reason,
        tail(&out.stdout, 4096),
        tail(&out.stderr, 4096)
    )
}

/// No rank process and no shared-memory object of the job is left.
fn check_cleanup(out: &JobOutcome) {
    for &pid in &out.pids {
        let pid = libc::pid_t::try_from(pid).expect("pid fits pid_t");
        // SAFETY: signal 0 only checks whether the process exists; nothing
        // is delivered.
        let r = unsafe { libc::kill(pid, 0) };
        let err = std::io::Error::last_os_error();
        assert!(
            r == -1 && err.raw_os_error() == Some(libc::ESRCH),
            "rank process {pid} is still alive after the job (kill(pid, 0) = {r}, {err})\n{}",
            report(out)
        );
    }
    let prefix = gex_core::bootstrap::wire::shm_prefix(&out.job_id);
    assert_eq!(prefix, format!("gex-{}-", out.job_id));
    let left: Vec<String> = std::fs::read_dir("/dev/shm")
        .expect("read /dev/shm")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(&prefix))
        .collect();
    assert!(
        left.is_empty(),
        "shared-memory objects outlived the job: {left:?}\n{}",
        report(out)
    );
}

/// A test program passes on every rank count from 1 to 4.
fn passes_on_1_to_4_ranks(program: &str, name: &str) {
    passes_on_1_to_4_ranks_env(program, name, &[], "");
}

/// Runs `program` with `env` on 1 to 4 ranks; every rank's success line
/// must end with `suffix`.
fn passes_on_1_to_4_ranks_env(program: &str, name: &str, env: &[(&str, &str)], suffix: &str) {
    for n in 1..=4 {
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
fn test_rma_am_path_1_to_4_ranks() {
    passes_on_1_to_4_ranks_env(
        TEST_RMA,
        "test-rma",
        &[("GEX_RMA_FORCE_AM", "1")],
        " (am path)",
    );
}

/// Runs `program` over the udp conduit with the shared-memory bypass off
/// (every peer over UDP) on 2 to 4 ranks.
fn passes_over_udp(program: &str, name: &str) {
    for n in 2..=4 {
        let out = launch_on("udp", program, n, &[], &[("GEX_UDP_BYPASS", "0")]);
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
            let line = format!("{name}: rank {r} of {n}: all checks passed");
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

#[test]
fn test_core_over_udp_2_to_4_ranks() {
    passes_over_udp(TEST_CORE, "test-core");
}

#[test]
fn test_rma_over_udp_2_to_4_ranks() {
    passes_over_udp(TEST_RMA, "test-rma");
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
