//! What the multi-process integration tests share: launching a job through
//! the launcher library with captured output, serialising jobs with a file
//! lock (the machines have 2 cores, and a 4-rank job already oversubscribes
//! them), reporting a failed job, and checking that nothing outlived it.

#![allow(dead_code)] // each test binary uses its own subset

use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;
use std::time::Duration;

use gex_run::{run, JobOutcome, JobSpec, Output};

/// Guard against a hung job; a healthy one takes seconds.
pub const TIMEOUT: Duration = Duration::from_secs(240);

/// Holds the job lock until dropped (closing the file releases the flock).
pub struct JobLock(#[allow(dead_code)] File);

/// Waits for the exclusive job lock. The wait is bounded by the jobs that
/// hold it, each of which is bounded by [`TIMEOUT`].
pub fn job_lock() -> JobLock {
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

pub fn launch_on(
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
pub fn tail(s: &str, max: usize) -> &str {
    let mut start = s.len().saturating_sub(max);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// What a failed assertion shows about a job.
pub fn report(out: &JobOutcome) -> String {
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

/// No rank process and nothing of the job ([`gex_run::leftovers`]) is left.
pub fn check_cleanup(out: &JobOutcome) {
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
    // Shared memory (in /dev/shm, or held through a descriptor), socket
    // files or addresses naming the job.
    let left = gex_run::leftovers(&out.job_id);
    assert!(
        left.is_empty(),
        "the job left {left:?} behind\n{}",
        report(out)
    );
}

/// Makes `spec` a udp job over two pretend hosts, `host-a` and `host-b`:
/// each rank gets its host's name (so ranks on one host share memory and
/// reach the others over UDP), and every host's ranks use loopback.
pub fn on_two_named_hosts(spec: &mut JobSpec) {
    spec.conduit = "udp".into();
    spec.hosts = vec!["host-a".into(), "host-b".into()];
    spec.spawn = Some("env GEX_FAKE_HOST={host}".into());
    spec.host_env = ["host-a", "host-b"]
        .map(|h| {
            (
                h.to_string(),
                "GEX_UDP_ADDR".to_string(),
                "127.0.0.1".to_string(),
            )
        })
        .to_vec();
}
