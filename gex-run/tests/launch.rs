//! Jobs of real processes (`sh` scripts): exit codes, signals, timeouts,
//! environment, output forwarding, and that nothing outlives a job.

mod common;

use std::io::ErrorKind;
use std::time::Duration;

use common::{gone, sh, wait_for_exit, PROMPT};
use gex_run::{run, JobSpec, Output};

#[test]
fn a_failing_rank_sets_the_job_code() {
    let out = run(&sh(2, "exit 3")).unwrap();
    assert_eq!(out.code, 3, "{out:?}");
    assert!(out.reason.ends_with("exited with code 3"), "{out:?}");
    assert!(out.stderr.contains("gex-run: rank "), "{out:?}");
    assert!(out.stderr.contains(" exited with code 3\n"), "{out:?}");
    assert_eq!(out.pids.len(), 2);
    assert!(!out.timed_out);
}

#[test]
fn a_job_whose_ranks_all_exit_zero_succeeds() {
    let out = run(&sh(3, "exit 0")).unwrap();
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.reason, "all 3 ranks exited with code 0");
    assert_eq!(out.stdout, "");
    assert_eq!(out.stderr, "");
    assert!(out.pids.iter().all(|&p| gone(p)));
}

#[test]
fn a_rank_killed_by_a_signal_ends_the_job_promptly() {
    // The other ranks' `sleep` is a child of their shell: killing the
    // rank's process group must take it down too.
    let script = r#"if [ "$GEX_RANK" = 1 ]; then kill -9 $$; fi
sleep 30 & echo "sleeper $!"; wait"#;
    let out = run(&sh(3, script)).unwrap();
    assert_eq!(out.code, 128 + 9, "{out:?}");
    assert!(
        out.stderr
            .contains("gex-run: rank 1 killed by signal 9 (SIGKILL)\n"),
        "{out:?}"
    );
    assert_eq!(out.reason, "rank 1 killed by signal 9 (SIGKILL)");
    assert!(out.elapsed < PROMPT, "{out:?}");
    assert!(out.pids.iter().all(|&p| gone(p)), "{out:?}");
    for line in out.stdout.lines() {
        let pid: u32 = line.strip_prefix("sleeper ").unwrap().parse().unwrap();
        // SIGKILL of its process group is sent, not yet acted on,
        // when the job returns: wait (bounded) for it to take effect.
        let ended = wait_for_exit(pid).unwrap_or_else(|| gone(pid));
        assert!(ended, "sleep {pid} outlived the job by {PROMPT:?}");
    }
}

#[test]
fn the_timeout_ends_the_job_with_124() {
    let mut spec = sh(2, "exec sleep 30");
    spec.timeout = Some(Duration::from_millis(300));
    let out = run(&spec).unwrap();
    assert_eq!(out.code, 124, "{out:?}");
    assert!(out.timed_out);
    assert!(
        out.stderr
            .contains("gex-run: job timed out after 0.3 s; ending 2 ranks\n"),
        "{out:?}"
    );
    assert!(out.elapsed >= Duration::from_millis(300));
    assert!(out.elapsed < PROMPT, "{out:?}");
}

#[test]
fn ranks_get_the_job_environment() {
    let mut spec = sh(
        3,
        // The last word: how many Unix sockets on the machine have an
        // address naming the job (a file or an abstract name).
        r#"echo "$GEX_RANK $GEX_SIZE $GEX_JOB_ID $GEX_CONDUIT $EXTRA $GEX_CTRL $(grep -c "$GEX_JOB_ID" /proc/net/unix)""#,
    );
    spec.conduit = "udp".into();
    spec.env.push(("EXTRA".into(), "hello".into()));
    let out = run(&spec).unwrap();
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.job_id.len(), 16);
    let mut lines: Vec<&str> = out.stdout.lines().collect();
    lines.sort();
    assert_eq!(lines.len(), 3, "{out:?}");
    for (rank, line) in lines.iter().enumerate() {
        let words: Vec<&str> = line.split(' ').collect();
        assert_eq!(
            words[..5],
            [&rank.to_string(), "3", &out.job_id, "udp", "hello"]
        );
        // Each rank inherits a connected socket of its own: nothing on the
        // machine has an address another process could connect to.
        let (fd, pid) = words[5]
            .strip_prefix("fd:")
            .and_then(|w| w.split_once(':'))
            .unwrap_or_else(|| panic!("{line}"));
        assert!(fd.parse::<u32>().unwrap() > 2, "{line}");
        // The launcher's pid, which the rank checks against the socket's
        // peer credentials: here, this test process.
        assert_eq!(pid, std::process::id().to_string(), "{line}");
        assert_eq!(words[6], "0", "a socket address names the job: {line}");
    }
}

#[test]
fn job_ids_differ_between_jobs() {
    let a = run(&sh(1, "true")).unwrap();
    let b = run(&sh(1, "true")).unwrap();
    assert_ne!(a.job_id, b.job_id);
}

#[test]
fn labelled_lines_are_whole_and_in_order() {
    const LINES: usize = 300;
    let script = format!(
        r#"i=0; while [ $i -lt {LINES} ]; do
  echo "rank $GEX_RANK line $i abcdefghijklmnopqrstuvwxyz0123456789"
  echo "err $GEX_RANK $i" >&2
  i=$((i+1))
done
printf "tail $GEX_RANK""#
    );
    let mut spec = sh(4, &script);
    spec.label = true;
    let out = run(&spec).unwrap();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut next = [0usize; 4];
    for line in out.stdout.lines() {
        let (label, rest) = line.split_once("] ").unwrap();
        let rank: usize = label.strip_prefix('[').unwrap().parse().unwrap();
        if next[rank] == LINES {
            // The unterminated last line is forwarded as a line too.
            assert_eq!(rest, format!("tail {rank}"));
            next[rank] += 1;
            continue;
        }
        assert_eq!(
            rest,
            format!(
                "rank {rank} line {} abcdefghijklmnopqrstuvwxyz0123456789",
                next[rank]
            )
        );
        next[rank] += 1;
    }
    assert_eq!(next, [LINES + 1; 4]);
    let mut next = [0usize; 4];
    for line in out.stderr.lines() {
        let (label, rest) = line.split_once("] ").unwrap();
        let rank: usize = label.strip_prefix('[').unwrap().parse().unwrap();
        assert_eq!(rest, format!("err {rank} {}", next[rank]));
        next[rank] += 1;
    }
    assert_eq!(next, [LINES; 4]);
}

#[test]
fn output_written_before_a_kill_is_not_lost() {
    // Rank 0 fills its pipe far beyond the pipe buffer, then dies; the
    // launcher must still forward every line (rank 1 just exits 0).
    let mut spec = sh(
        2,
        r#"if [ "$GEX_RANK" = 0 ]; then seq 1 20000; kill -9 $$; fi"#,
    );
    spec.label = true;
    let out = run(&spec).unwrap();
    assert_eq!(out.code, 137, "{}", out.stderr);
    let lines: Vec<&str> = out
        .stdout
        .lines()
        .map(|l| l.strip_prefix("[0] ").unwrap())
        .collect();
    assert_eq!(lines.len(), 20000);
    assert_eq!(lines.last(), Some(&"20000"));
}

#[test]
fn background_descendants_do_not_outlive_the_job() {
    // Every rank exits 0 at once, leaving a `sleep` that holds its stdout.
    let out = run(&sh(2, "sleep 30 & echo $!")).unwrap();
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.elapsed < PROMPT, "{out:?}");
    let pids: Vec<u32> = out.stdout.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(pids.len(), 2);
    // Killed: a process that has closed its files may take a moment more
    // to become a zombie, so wait (bounded) for it to end.
    assert!(
        pids.iter()
            .all(|&p| wait_for_exit(p).unwrap_or_else(|| gone(p))),
        "{pids:?}"
    );
}

#[test]
fn inherited_output_is_not_captured() {
    let mut spec = JobSpec::new(1, "true");
    spec.output = Output::Inherit;
    let out = run(&spec).unwrap();
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (0, "", "")
    );
}

#[test]
fn bad_specs_are_errors() {
    let e = run(&JobSpec::new(0, "true")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    let e = run(&JobSpec::new(2, "gex-run-no-such-program")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert!(e.to_string().contains("gex-run-no-such-program"), "{e}");
    let e = run(&JobSpec::new(2, "/nonexistent/prog")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
}

#[test]
fn a_rank_that_cannot_start_is_an_error_and_leaves_nothing() {
    // Executable, so it passes the up-front check, but exec fails.
    let script =
        std::env::temp_dir().join(format!("gex-run-test-badinterp-{}", std::process::id()));
    std::fs::write(&script, "#!/nonexistent/interpreter\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let e = run(&JobSpec::new(2, &script)).unwrap_err();
    std::fs::remove_file(&script).unwrap();
    assert!(e.to_string().starts_with("cannot start rank 0"), "{e}");
}
