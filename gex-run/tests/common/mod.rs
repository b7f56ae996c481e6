//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::time::Duration;

use gex_run::{JobSpec, Output};

/// Upper bound for jobs whose ranks would otherwise run 30-60 s: a job that
/// ends promptly finishes far below it. It is a bound, not a synchronisation.
pub const PROMPT: Duration = Duration::from_secs(15);

/// A job of `ranks` copies of `sh -c script`, output captured.
pub fn sh(ranks: u32, script: &str) -> JobSpec {
    let mut spec = JobSpec::new(ranks, "sh");
    spec.args = vec!["-c".into(), script.into()];
    spec.output = Output::Capture;
    spec
}

/// Whether process `pid` no longer runs (gone, or a zombie awaiting its
/// reaper, which for a re-parented grandchild may be a slow init).
pub fn gone(pid: u32) -> bool {
    // SAFETY: kill with signal 0 only checks for existence.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    if r != 0 {
        return std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
    }
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}

/// Waits (up to [`PROMPT`]) for process `pid`, not a child of ours, to end:
/// a pidfd becomes readable when its process exits. `None` if pidfds are
/// not supported here.
pub fn wait_for_exit(pid: u32) -> Option<bool> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    if fd < 0 {
        return match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::ESRCH) => Some(true), // already gone
            _ => None,
        };
    }
    let mut pfd = libc::pollfd {
        fd: fd as libc::c_int,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `pfd` is one valid pollfd; the descriptor is ours to close.
    let ready = unsafe {
        let r = libc::poll(&mut pfd, 1, PROMPT.as_millis() as libc::c_int);
        libc::close(fd as libc::c_int);
        r
    };
    Some(ready == 1)
}

/// Asserts that nothing of job `job_id` remains on this machine (see
/// [`gex_run::leftovers`]).
pub fn assert_nothing_left(job_id: &str) {
    let left = gex_run::leftovers(job_id);
    assert!(left.is_empty(), "job {job_id} left {left:?}");
}
