//! Running one command (a compiler, a launcher, a test) with its output in
//! a log file and a time limit: the command gets its own process group,
//! and when the limit passes the whole group gets SIGTERM, then SIGKILL.
//! A thread waits for the child and reports through a channel, so every
//! wait here is a bounded `recv_timeout`.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// How long a group has between SIGTERM and SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_secs(10);
/// How long a SIGKILLed group may take to be reaped before we give up
/// waiting (the waiting thread is then left behind).
const KILL_WAIT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    Exited(ExitStatus),
    /// Ended by us at the limit (with the status it then had, if reaped).
    TimedOut,
    /// Could not be started.
    NotStarted(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    pub ended: Ended,
    pub elapsed: Duration,
}

impl Ran {
    pub fn success(&self) -> bool {
        matches!(&self.ended, Ended::Exited(s) if s.success())
    }
}

fn signal_group(pgid: u32, signal: &str) {
    let _ = Command::new("kill")
        .args([&format!("-{signal}"), "--", &format!("-{pgid}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Runs `cmd` in its own process group, standard output and error to
/// `log` (appended when `append`), standard input empty, for at most
/// `limit`.
pub fn run(cmd: &mut Command, log: &Path, append: bool, limit: Duration) -> Ran {
    let start = Instant::now();
    let not_started = |e: String| Ran {
        ended: Ended::NotStarted(e),
        elapsed: start.elapsed(),
    };
    if let Some(dir) = log.parent() {
        if let Err(e) = std::fs::create_dir_all(dir) {
            return not_started(format!("cannot create {}: {e}", dir.display()));
        }
    }
    let file = if append {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
    } else {
        File::create(log)
    };
    let (out, err) = match file.and_then(|f| Ok((f.try_clone()?, f))) {
        Ok(pair) => pair,
        Err(e) => return not_started(format!("cannot write {}: {e}", log.display())),
    };
    cmd.stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .process_group(0);
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => return not_started(format!("cannot start {:?}: {e}", cmd.get_program())),
    };
    let pgid = child.id();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    match rx.recv_timeout(limit) {
        Ok(result) => {
            let ended = match result {
                Ok(s) => Ended::Exited(s),
                Err(e) => Ended::NotStarted(format!("wait failed: {e}")),
            };
            return Ran {
                ended,
                elapsed: start.elapsed(),
            };
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            return not_started("the waiting thread ended".into())
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {}
    }
    // The child is not reaped yet, so its process group id is still ours.
    signal_group(pgid, "TERM");
    if rx.recv_timeout(TERM_GRACE).is_err() {
        signal_group(pgid, "KILL");
        let _ = rx.recv_timeout(KILL_WAIT);
    }
    // Anything of the group still running (children that outlived the
    // leader) goes too.
    signal_group(pgid, "KILL");
    Ran {
        ended: Ended::TimedOut,
        elapsed: start.elapsed(),
    }
}

/// Processes whose executable is under `root` (our test programs), by
/// process id.
pub fn processes_under(root: &Path) -> Vec<(u32, PathBuf)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        // A zombie has no executable: it is gone but for its parent's wait.
        if let Ok(exe) = std::fs::read_link(entry.path().join("exe")) {
            if exe.starts_with(root) {
                out.push((pid, exe));
            }
        }
    }
    out.sort();
    out
}

/// Waits (at most `within`) for processes of programs under `root` to
/// end; SIGKILLs and returns those still there. A job's ranks die with
/// their launcher (a parent-death signal), which may take a moment after
/// the launcher is reaped.
pub fn reap_leftovers(root: &Path, within: Duration) -> Vec<(u32, PathBuf)> {
    let deadline = Instant::now() + within;
    loop {
        let left = processes_under(root);
        if left.is_empty() {
            return left;
        }
        if Instant::now() >= deadline {
            for (pid, _) in &left {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
            }
            return left;
        }
        // A bounded poll: processes that are not our children cannot be
        // waited for.
        thread::sleep(Duration::from_millis(20));
    }
}

/// The names in /dev/shm (to report shared-memory objects a run left).
pub fn shm_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("xtask-exec-{}-{name}", std::process::id()))
    }

    #[test]
    fn output_status_and_append() {
        let log = tmp("a/run.log");
        let mut ok = Command::new("sh");
        ok.args(["-c", "echo out; echo err >&2"]);
        let ran = run(&mut ok, &log, false, Duration::from_secs(30));
        assert!(ran.success(), "{ran:?}");
        let mut bad = Command::new("sh");
        bad.args(["-c", "echo more; exit 3"]);
        let ran = run(&mut bad, &log, true, Duration::from_secs(30));
        assert!(matches!(ran.ended, Ended::Exited(s) if s.code() == Some(3)));
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "out\nerr\nmore\n");
        let mut missing = Command::new(tmp("no-such-program"));
        assert!(matches!(
            run(&mut missing, &log, false, Duration::from_secs(30)).ended,
            Ended::NotStarted(_)
        ));
        let _ = std::fs::remove_dir_all(tmp("a"));
    }

    #[test]
    fn a_hung_group_is_ended_whole() {
        let log = tmp("b/run.log");
        // The shell starts a child that ignores SIGTERM, then waits: both
        // must be gone when run returns.
        let marker = tmp("b/child-pid");
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            &format!(
                "sh -c 'trap \"\" TERM; echo $$ > {}; exec sleep 600' & wait",
                marker.display()
            ),
        ]);
        let start = Instant::now();
        let ran = run(&mut cmd, &log, false, Duration::from_millis(300));
        assert_eq!(ran.ended, Ended::TimedOut);
        assert!(start.elapsed() < TERM_GRACE + Duration::from_secs(5));
        let pid = std::fs::read_to_string(&marker).unwrap().trim().to_string();
        // SIGKILL went to the group: the child (which ignored SIGTERM)
        // goes, though the kernel may take a moment to finish it.
        let deadline = Instant::now() + Duration::from_secs(5);
        let is_sleep = || {
            std::fs::read_link(format!("/proc/{pid}/exe"))
                .is_ok_and(|exe| exe.file_name().is_some_and(|n| n == "sleep"))
        };
        while is_sleep() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
        }
        assert!(!is_sleep(), "child {pid} survived");
        let _ = std::fs::remove_dir_all(tmp("b"));
    }

    #[test]
    fn leftovers_are_found_by_executable() {
        let dir = tmp("c");
        std::fs::create_dir_all(&dir).unwrap();
        let copy = dir.join("sleeper");
        std::fs::copy("/bin/sleep", &copy).unwrap();
        let mut child = Command::new(&copy).arg("600").spawn().unwrap();
        let found = processes_under(&dir);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, child.id());
        let left = reap_leftovers(&dir, Duration::from_millis(50));
        assert_eq!(left.len(), 1);
        let status = child.wait().unwrap();
        assert!(!status.success());
        assert!(processes_under(&dir).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
