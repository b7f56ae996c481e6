//! The `gex-run` binary: command line, exit codes, signals.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use common::{gone, wait_for_exit, PROMPT};

fn gex_run(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gex-run"));
    cmd.args(args).env_remove("GEX_RUN_TIMEOUT");
    cmd
}

fn output(cmd: &mut Command) -> (i32, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().unwrap();
    (
        status.code().expect("gex-run died from a signal"),
        String::from_utf8(stdout).unwrap(),
        String::from_utf8(stderr).unwrap(),
    )
}

#[test]
fn command_line_errors_exit_2_with_usage() {
    for (args, msg) in [
        (&[][..], "the number of ranks (-n N) is required"),
        (&["-n", "0", "true"][..], "at least one rank"),
        (&["-n", "2"][..], "no program to run"),
        (&["-n", "2", "--frobnicate", "true"][..], "unknown option"),
        (
            &["-n", "2", "gex-run-no-such-program"][..],
            "program 'gex-run-no-such-program' not found",
        ),
    ] {
        let (code, stdout, stderr) = output(&mut gex_run(args));
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert_eq!(stdout, "");
        assert!(stderr.contains(msg), "{args:?}: {stderr}");
        assert!(stderr.contains("usage: gex-run -n N"), "{args:?}: {stderr}");
    }
    let (code, stdout, _) = output(&mut gex_run(&["--help"]));
    assert_eq!(code, 0);
    assert!(stdout.starts_with("usage: gex-run"));
}

#[test]
fn help_names_every_option_and_bad_values_exit_2() {
    for flag in ["--help", "-h"] {
        let (code, stdout, stderr) = output(&mut gex_run(&[flag]));
        assert_eq!((code, stderr.as_str()), (0, ""), "{flag}");
        assert!(stdout.starts_with("usage: gex-run -n N"), "{stdout}");
        for option in [
            "-n, --ranks <N>",
            "--timeout <SECS>",
            "--exit-grace <SECS>",
            "--conduit <NAME>",
            "--label",
            "--hosts <H1,H2,...>",
            "--hostfile <FILE>",
            "--spawn <TEMPLATE>",
            "--host-env <HOST:VAR=VALUE>",
            "--ctrl <unix|tcp>",
            "--ctrl-addr <IP:PORT>",
            "-h, --help",
            "124 on timeout",
        ] {
            assert!(stdout.contains(option), "{flag} lacks {option}:\n{stdout}");
        }
    }
    for (args, msg) in [
        (
            &["-n", "2", "--ctrl", "udp", "true"][..],
            "expected unix or tcp",
        ),
        (&["-n", "2", "--timeout"][..], "--timeout needs a value"),
        (&["-n", "2", "--label=yes", "true"][..], "--label"),
        (&["-n", "x", "true"][..], "expected a number of ranks"),
        (
            &["-n", "2", "--hosts", "a", "--hostfile", "f", "true"][..],
            "given twice",
        ),
    ] {
        let (code, stdout, stderr) = output(&mut gex_run(args));
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert_eq!(stdout, "");
        assert!(stderr.contains(msg), "{args:?}: {stderr}");
        assert!(stderr.contains("(gex-run --help for more)"), "{stderr}");
    }
}

#[test]
fn forwards_labelled_output_and_the_exit_code() {
    let (code, stdout, stderr) = output(&mut gex_run(&[
        "-n",
        "2",
        "--label",
        "sh",
        "-c",
        r#"echo "hi $GEX_CONDUIT"; echo oops >&2"#,
    ]));
    assert_eq!(code, 0, "{stderr}");
    let mut lines: Vec<&str> = stdout.lines().collect();
    lines.sort();
    assert_eq!(lines, ["[0] hi smp", "[1] hi smp"]);
    let mut lines: Vec<&str> = stderr.lines().collect();
    lines.sort();
    assert_eq!(lines, ["[0] oops", "[1] oops"]);

    let (code, _, stderr) = output(&mut gex_run(&["-n", "3", "sh", "-c", "exit 3"]));
    assert_eq!(code, 3);
    assert!(stderr.contains("exited with code 3"), "{stderr}");
}

#[test]
fn the_timeout_can_come_from_the_environment() {
    let start = Instant::now();
    let (code, _, stderr) = output(
        gex_run(&["-n", "2", "--conduit", "smp", "sleep", "30"]).env("GEX_RUN_TIMEOUT", "0.2"),
    );
    assert_eq!(code, 124, "{stderr}");
    assert!(
        stderr.contains("gex-run: job timed out after 0.2 s; ending 2 ranks"),
        "{stderr}"
    );
    assert!(start.elapsed() < PROMPT);
}

/// Starts a 2-rank job that reports its rank pids and waits; once both
/// ranks are up, sends `sig` to the launcher.
fn signal_launcher(sig: libc::c_int) -> (i32, String, Vec<u32>) {
    let start = Instant::now();
    let mut child = gex_run(&["-n", "2", "sh", "-c", "echo $$; exec sleep 30"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Reading the pids is the synchronisation: both ranks run.
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let pids: Vec<u32> = (0..2)
        .map(|_| lines.next().unwrap().unwrap().parse().unwrap())
        .collect();
    // SAFETY: kill(2) has no memory-safety preconditions.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
    let out = child.wait_with_output().unwrap();
    assert!(start.elapsed() < PROMPT);
    (
        out.status.code().expect("gex-run died from the signal"),
        String::from_utf8(out.stderr).unwrap(),
        pids,
    )
}

#[test]
fn sigterm_ends_the_job_with_143() {
    let (code, stderr, pids) = signal_launcher(libc::SIGTERM);
    assert_eq!(code, 143, "{stderr}");
    assert!(
        stderr.contains("gex-run: received SIGTERM; ending 2 ranks"),
        "{stderr}"
    );
    assert!(pids.iter().all(|&p| gone(p)), "{pids:?}");
}

#[test]
fn sigint_ends_the_job_with_130() {
    let (code, stderr, pids) = signal_launcher(libc::SIGINT);
    assert_eq!(code, 130, "{stderr}");
    assert!(
        stderr.contains("gex-run: received SIGINT; ending 2 ranks"),
        "{stderr}"
    );
    assert!(pids.iter().all(|&p| gone(p)), "{pids:?}");
}

#[test]
fn ranks_die_with_the_launcher() {
    let mut child = gex_run(&["-n", "2", "sh", "-c", "echo $$ $GEX_CTRL; exec sleep 30"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut pids = Vec::new();
    for _ in 0..2 {
        let line = lines.next().unwrap().unwrap();
        let (pid, ctrl) = line.split_once(' ').unwrap();
        pids.push(pid.parse::<u32>().unwrap());
        // An inherited connection: no socket file for anyone to remove.
        assert!(ctrl.starts_with("fd:"), "{line}");
    }
    // SIGKILL: the launcher gets no chance to clean up; the kernel's
    // parent-death signal must end the ranks.
    child.kill().unwrap();
    child.wait().unwrap();
    for pid in pids {
        match wait_for_exit(pid) {
            Some(ended) => assert!(ended, "rank {pid} survived the launcher"),
            None => eprintln!("skipped: no pidfd_open on this kernel"),
        }
    }
}

#[test]
fn host_options_on_the_command_line() {
    let (code, stdout, stderr) = output(&mut gex_run(&[
        "-n",
        "3",
        "--hosts",
        "a,b",
        "--spawn",
        "env GEX_FAKE_HOST={host}",
        "--host-env",
        "b:HVAR=bee",
        "--label",
        "sh",
        "-c",
        r#"echo "$GEX_HOST $GEX_HOSTS $GEX_FAKE_HOST ${HVAR:-none}""#,
    ]));
    assert_eq!(code, 0, "{stderr}");
    let mut lines: Vec<&str> = stdout.lines().collect();
    lines.sort();
    assert_eq!(
        lines,
        ["[0] a 2 a none", "[1] a 2 a none", "[2] b 2 b bee"],
        "{stderr}"
    );
}
