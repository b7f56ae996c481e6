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

use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;
use std::time::Duration;

use gex_run::{run, JobOutcome, JobSpec, Output};

/// Guard against a hung job; a healthy one takes seconds.
const TIMEOUT: Duration = Duration::from_secs(240);

const TEST_COLL: &str = env!("CARGO_BIN_EXE_test-coll");

/// Holds the job lock until dropped (closing the file releases the flock).
struct JobLock(#[allow(dead_code)] File);

/// Waits for the exclusive job lock shared with `cluster.rs`. The wait is
/// bounded by the jobs that hold it, each bounded by their timeout.
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

fn launch(conduit: &str, ranks: u32, env: &[(&str, &str)]) -> JobOutcome {
    let _lock = job_lock();
    let mut spec = JobSpec::new(ranks, TEST_COLL);
    spec.conduit = conduit.to_string();
    spec.env = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    spec.timeout = Some(TIMEOUT);
    spec.output = Output::Capture;
    spec.label = true;
    let out = run(&spec).unwrap_or_else(|e| panic!("cannot start test-coll: {e}"));
    eprintln!(
        "test-coll on {conduit} with {ranks} ranks {env:?}: code {} in {:.2?} ({})",
        out.code, out.elapsed, out.reason
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
