//! A rank started through a spawner gets the job key as the first line of
//! its standard input; rank 0's forwarded standard input follows it,
//! untouched. (A test binary of its own: it replaces this process's
//! standard input, which the launcher forwards.)

use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use gex_run::{run, JobSpec, Output};

mod common;
use common::{check_cleanup, job_lock, on_two_named_hosts, report, TIMEOUT};

#[test]
fn rank_0_reads_its_forwarded_input_after_the_key_line() {
    let mut fds = [0; 2];
    // SAFETY: pipe writes two descriptors into the array it is given.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both were just created and are owned by nobody else.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let mut w = std::fs::File::from(w);
    w.write_all(b"forwarded line 1\nline 2\n").unwrap();
    drop(w);
    // SAFETY: dup2 onto standard input, which this test binary does not
    // otherwise use; `r` stays valid during the call.
    assert_eq!(unsafe { libc::dup2(r.as_raw_fd(), 0) }, 0);
    drop(r);

    let mut spec = JobSpec::new(2, env!("CARGO_BIN_EXE_keycheck"));
    on_two_named_hosts(&mut spec);
    spec.args = vec!["stdin".into()];
    spec.timeout = Some(TIMEOUT);
    spec.output = Output::Capture;
    let _lock = job_lock();
    let out = run(&spec).expect("start the job");
    assert_eq!(out.code, 0, "{}", report(&out));
    assert!(
        out.stdout
            .contains("keycheck: rank 0 stdin: forwarded line 1|line 2\n"),
        "{}",
        report(&out)
    );
    check_cleanup(&out);
}
