//! The multi-process test matrix of `cargo xtask test-cluster`: every
//! `test-*` program of gex-testsuite, on every conduit, with 1..=N ranks,
//! each run under gex-run.
//!
//! The matrix has a conduit dimension so that rows for other set-ups (udp
//! across network namespaces, with packet loss) are a new [`CONDUITS`] entry
//! plus, where needed, a different [`Conduit::launch`] command.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// The `--timeout` given to gex-run for each run, in seconds.
pub const GEX_RUN_TIMEOUT_SECS: u64 = 120;
/// How much longer than gex-run's own timeout xtask waits before it ends a
/// run itself (gex-run should have ended the job by then).
pub const WATCHDOG_GRACE: Duration = Duration::from_secs(30);
/// gex-run's exit code when its `--timeout` expires (gex_run::TIMEOUT_CODE;
/// xtask links no workspace crate, so it is repeated here).
pub const GEX_RUN_TIMEOUT_CODE: i32 = 124;

/// One way of running a job in the matrix.
#[derive(Debug, PartialEq, Eq)]
pub struct Conduit {
    /// The name passed to `gex-run --conduit` and shown in the table.
    pub name: &'static str,
}

/// Every conduit the matrix runs, in table order.
pub const CONDUITS: &[Conduit] = &[Conduit { name: "smp" }];

impl Conduit {
    /// The command that runs `program` with `ranks` ranks over this conduit.
    pub fn launch(&self, gex_run: &Path, ranks: u32, program: &Path) -> Command {
        let mut cmd = Command::new(gex_run);
        cmd.arg("-n")
            .arg(ranks.to_string())
            .arg("--timeout")
            .arg(GEX_RUN_TIMEOUT_SECS.to_string())
            .arg("--conduit")
            .arg(self.name)
            .arg(program);
        cmd
    }
}

/// One cell of the matrix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    pub program: String,
    pub conduit: &'static Conduit,
    pub ranks: u32,
}

impl Case {
    /// Where the run's output goes, relative to the log directory.
    pub fn log_name(&self) -> PathBuf {
        Path::new(self.conduit.name).join(format!("{}-n{}.log", self.program, self.ranks))
    }
}

/// The runs, program by program, then conduit, then rank count.
pub fn matrix(programs: &[String], conduits: &[&'static Conduit], max_ranks: u32) -> Vec<Case> {
    let mut cases = Vec::new();
    for program in programs {
        for &conduit in conduits {
            for ranks in 1..=max_ranks {
                cases.push(Case {
                    program: program.clone(),
                    conduit,
                    ranks,
                });
            }
        }
    }
    cases
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    /// Non-zero exit, death by signal or failure to start; says which.
    Failed(String),
    /// Still running after gex-run's timeout plus [`WATCHDOG_GRACE`].
    TimedOut,
}

impl Outcome {
    pub fn passed(&self) -> bool {
        *self == Outcome::Passed
    }

    fn cell(&self) -> &'static str {
        match self {
            Outcome::Passed => "pass",
            Outcome::Failed(_) => "FAIL",
            Outcome::TimedOut => "HUNG",
        }
    }
}

/// Describes a process's end for a message ("exit 3", "signal 9").
pub fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("signal {signal}");
        }
    }
    status.to_string()
}

fn spawn_logged(cmd: &mut Command, log: &Path) -> std::io::Result<Child> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let out = File::create(log)?;
    let err = out.try_clone()?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .spawn()
}

/// Runs `cmd` with its output in `log`, ending it if it outlives `limit`:
/// first SIGTERM (so gex-run can take its ranks down), then SIGKILL.
pub fn run_logged(cmd: &mut Command, log: &Path, limit: Duration) -> Outcome {
    let mut child = match spawn_logged(cmd, log) {
        Ok(child) => child,
        Err(e) => return Outcome::Failed(format!("could not start: {e}")),
    };
    let start = Instant::now();
    let mut terminated_at: Option<Instant> = None;
    loop {
        match child.try_wait() {
            Ok(Some(_)) if terminated_at.is_some() => return Outcome::TimedOut,
            Ok(Some(status)) if status.success() => return Outcome::Passed,
            Ok(Some(status)) if status.code() == Some(GEX_RUN_TIMEOUT_CODE) => {
                return Outcome::Failed(format!(
                    "{}: gex-run's --timeout expired",
                    describe_status(status)
                ))
            }
            Ok(Some(status)) => return Outcome::Failed(describe_status(status)),
            Ok(None) => {}
            Err(e) => return Outcome::Failed(format!("wait failed: {e}")),
        }
        match terminated_at {
            None if start.elapsed() > limit => {
                // The child is not reaped yet, so its id is still its own.
                let _ = Command::new("kill")
                    .args(["-TERM", &child.id().to_string()])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
                terminated_at = Some(Instant::now());
            }
            Some(at) if at.elapsed() > Duration::from_secs(10) => {
                let _ = child.kill();
                let _ = child.wait();
                return Outcome::TimedOut;
            }
            _ => {}
        }
        thread::sleep(Duration::from_millis(5));
    }
}

/// The last `lines` lines of a log, for a failure report.
pub fn tail(log: &Path, lines: usize) -> String {
    match std::fs::read(log) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let all: Vec<&str> = text.lines().collect();
            all[all.len().saturating_sub(lines)..].join("\n")
        }
        Err(e) => format!("(could not read {}: {e})", log.display()),
    }
}

/// The pass/fail table: a row per (program, conduit), a column per rank count.
pub fn render_table(results: &[(Case, Outcome)], max_ranks: u32) -> String {
    let program_width = results
        .iter()
        .map(|(c, _)| c.program.len())
        .chain(["program".len()])
        .max()
        .unwrap_or(0);
    let conduit_width = results
        .iter()
        .map(|(c, _)| c.conduit.name.len())
        .chain(["conduit".len()])
        .max()
        .unwrap_or(0);
    let cell_width = format!("n={max_ranks}").len().max(4);

    let mut out = format!("{:program_width$}  {:conduit_width$}", "program", "conduit");
    for ranks in 1..=max_ranks {
        out += &format!("  {:>cell_width$}", format!("n={ranks}"));
    }
    out.push('\n');

    let mut rows: Vec<(&str, &str)> = Vec::new();
    for (case, _) in results {
        let key = (case.program.as_str(), case.conduit.name);
        if !rows.contains(&key) {
            rows.push(key);
        }
    }
    for (program, conduit) in rows {
        out += &format!("{program:program_width$}  {conduit:conduit_width$}");
        for ranks in 1..=max_ranks {
            let cell = results
                .iter()
                .find(|(c, _)| {
                    c.program == program && c.conduit.name == conduit && c.ranks == ranks
                })
                .map_or("-", |(_, outcome)| outcome.cell());
            out += &format!("  {cell:>cell_width$}");
        }
        out.push('\n');
    }
    out
}

/// The closing line, in the "N passed, N failed" form CI log readers know.
pub fn summary_line(results: &[(Case, Outcome)]) -> String {
    let passed = results.iter().filter(|(_, o)| o.passed()).count();
    format!(
        "test-cluster: {passed} passed, {} failed",
        results.len() - passed
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn smp() -> &'static Conduit {
        &CONDUITS[0]
    }

    #[test]
    fn smp_is_a_conduit() {
        assert_eq!(smp().name, "smp");
    }

    #[test]
    fn matrix_covers_every_program_conduit_and_rank_count() {
        let programs = vec!["test-a".to_string(), "test-b".to_string()];
        let cases = matrix(&programs, &[smp()], 3);
        assert_eq!(cases.len(), 6);
        assert_eq!(
            cases
                .iter()
                .map(|c| (c.program.as_str(), c.ranks))
                .collect::<Vec<_>>(),
            [
                ("test-a", 1),
                ("test-a", 2),
                ("test-a", 3),
                ("test-b", 1),
                ("test-b", 2),
                ("test-b", 3)
            ]
        );
        assert!(matrix(&[], &[smp()], 3).is_empty());
    }

    #[test]
    fn launch_command_line() {
        let cmd = smp().launch(
            Path::new("/t/release/gex-run"),
            4,
            Path::new("/t/release/test-a"),
        );
        assert_eq!(cmd.get_program(), "/t/release/gex-run");
        let args: Vec<_> = cmd.get_args().map(|a| a.to_str().unwrap()).collect();
        assert_eq!(
            args,
            [
                "-n",
                "4",
                "--timeout",
                "120",
                "--conduit",
                "smp",
                "/t/release/test-a"
            ]
        );
    }

    #[test]
    fn log_names_are_distinct_per_case() {
        let case = Case {
            program: "test-a".into(),
            conduit: smp(),
            ranks: 3,
        };
        assert_eq!(case.log_name(), Path::new("smp/test-a-n3.log"));
    }

    #[test]
    fn table_and_summary() {
        let programs = vec!["test-am".to_string(), "test-longer-name".to_string()];
        let cases = matrix(&programs, &[smp()], 2);
        let outcomes = [
            Outcome::Passed,
            Outcome::Failed("exit 1".into()),
            Outcome::Passed,
            Outcome::TimedOut,
        ];
        let results: Vec<_> = cases.into_iter().zip(outcomes).collect();
        let table = render_table(&results, 2);
        assert_eq!(
            table,
            "program           conduit   n=1   n=2\n\
             test-am           smp      pass  FAIL\n\
             test-longer-name  smp      pass  HUNG\n"
        );
        assert_eq!(summary_line(&results), "test-cluster: 2 passed, 2 failed");
    }

    #[cfg(unix)]
    #[test]
    fn run_logged_reports_exit_status_and_captures_output() {
        let dir = std::env::temp_dir().join(format!("xtask-test-{}", std::process::id()));
        let log = dir.join("sub/run.log");
        let mut ok = Command::new("sh");
        ok.args(["-c", "echo out; echo err >&2"]);
        assert_eq!(
            run_logged(&mut ok, &log, Duration::from_secs(30)),
            Outcome::Passed
        );
        assert_eq!(tail(&log, 10), "out\nerr");
        assert_eq!(tail(&log, 1), "err");

        let mut bad = Command::new("sh");
        bad.args(["-c", "exit 3"]);
        assert_eq!(
            run_logged(&mut bad, &log, Duration::from_secs(30)),
            Outcome::Failed("exit 3".into())
        );
        let mut timeout = Command::new("sh");
        timeout.args(["-c", "exit 124"]);
        assert_eq!(
            run_logged(&mut timeout, &log, Duration::from_secs(30)),
            Outcome::Failed("exit 124: gex-run's --timeout expired".into())
        );

        let mut missing = Command::new(dir.join("no-such-program"));
        assert!(matches!(
            run_logged(&mut missing, &log, Duration::from_secs(30)),
            Outcome::Failed(msg) if msg.starts_with("could not start")
        ));

        let mut hung = Command::new("sleep");
        hung.arg("30");
        let start = Instant::now();
        assert_eq!(
            run_logged(&mut hung, &log, Duration::from_millis(50)),
            Outcome::TimedOut
        );
        assert!(start.elapsed() < Duration::from_secs(10));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
