//! Rank processes: finding the program, spawning, waiting without reaping,
//! killing, and describing how a process ended.

use std::ffi::OsString;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use gex_bootstrap::wire::{ENV_JOB_KEY, ENV_KEY_FD};

use crate::hosts::{shell_quote, Via};

/// How a rank process ended.
pub(crate) use gex_bootstrap::coord::Ended as Status;

/// Finds `program` the way `execvp` would: a name with a `/` is used as is,
/// a bare name is searched in `path` (the `PATH` the ranks will see).
///
/// Checking up front (rather than letting the first spawn fail) gives the
/// launcher one clear "not found" error before any rank exists.
pub(crate) fn resolve_program(program: &Path, path: Option<OsString>) -> io::Result<PathBuf> {
    let shown = program.display();
    if program.as_os_str().is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "no program to run",
        ));
    }
    let is_executable = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    };
    if program.as_os_str().as_encoded_bytes().contains(&b'/') {
        if !program.exists() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("program '{shown}' not found"),
            ));
        }
        if !is_executable(program) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("program '{shown}' is not an executable file"),
            ));
        }
        return Ok(program.to_path_buf());
    }
    let path = path.unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        // An empty PATH entry means the current directory.
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let candidate = dir.join(program);
        if is_executable(&candidate) {
            return Ok(candidate);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        format!("program '{shown}' not found in PATH"),
    ))
}

/// Everything needed to start one rank.
pub(crate) struct RankCommand<'a> {
    pub program: &'a Path,
    /// What the program was called on the command line: becomes `argv[0]`
    /// (when the program is started directly).
    pub arg0: &'a Path,
    pub args: &'a [String],
    /// Extra variables, applied in order (later ones win).
    pub env: Vec<(OsString, OsString)>,
    /// Give this rank the launcher's standard input (else `/dev/null`).
    pub inherit_stdin: bool,
    /// The job key, handed over by [`spawn_rank`] through a pipe (see
    /// [`gex_bootstrap::wire::ENV_KEY_FD`]), never in the environment.
    pub key: &'a str,
    /// Directly, or through a spawner.
    pub via: &'a Via,
    /// A descriptor the rank inherits (its control connection): its
    /// close-on-exec flag is cleared in the child only.
    pub keep_fd: Option<std::os::fd::RawFd>,
}

/// The command that starts `rc`: the program, or the spawner with the
/// program and its arguments after it (for ssh, behind `env` and the
/// rank's variables, all shell-quoted for the remote shell).
pub(crate) fn rank_command(rc: &RankCommand<'_>) -> Command {
    match rc.via {
        Via::Direct => {
            let mut cmd = Command::new(rc.program);
            cmd.arg0(rc.arg0).args(rc.args);
            for (k, v) in &rc.env {
                cmd.env(k, v);
            }
            cmd
        }
        Via::Spawner { argv, ssh: false } => {
            let mut cmd = Command::new(&argv[0]);
            cmd.args(&argv[1..]).arg(rc.program).args(rc.args);
            for (k, v) in &rc.env {
                cmd.env(k, v);
            }
            cmd
        }
        Via::Spawner { argv, ssh: true } => {
            let mut cmd = Command::new(&argv[0]);
            cmd.args(&argv[1..]).arg("env");
            for (k, v) in &rc.env {
                let kv = format!("{}={}", k.to_string_lossy(), v.to_string_lossy());
                cmd.arg(shell_quote(&kv));
            }
            cmd.arg(shell_quote(&rc.program.to_string_lossy()));
            for a in rc.args {
                cmd.arg(shell_quote(a));
            }
            cmd
        }
    }
}

/// Spawns one rank with piped stdout/stderr, in a process group of its own,
/// set to die with the launcher.
///
/// The rank leads its own process group so that ending it with
/// [`kill_rank`] also ends whatever it started (a shell's `sleep`, a
/// background helper): those descendants would otherwise keep the output
/// pipes open and outlive the job.
///
/// `PR_SET_PDEATHSIG` fires when the *thread* that forked the child exits,
/// so this must be called from the thread that stays in [`crate::run`] until
/// the job is over (it is).
///
/// The job key goes to a rank started directly through a pipe it inherits
/// (its number in `GEX_KEY_FD`; the key is written and the launcher's ends
/// are closed before the rank runs), and to a rank started through a
/// spawner as the first line of its standard input (`GEX_KEY_FD=0`), which
/// a spawner such as ssh forwards; rank 0's forwarded standard input
/// follows that line.
pub(crate) fn spawn_rank(rc: &RankCommand<'_>) -> io::Result<Child> {
    let key_pipe = match rc.via {
        Via::Direct => Some(key_pipe(rc.key)?),
        Via::Spawner { .. } => None,
    };
    let key_fd = key_pipe.as_ref().map(|fd| fd.as_raw_fd());
    let mut env = rc.env.clone();
    env.push((ENV_KEY_FD.into(), key_fd.unwrap_or(0).to_string().into()));
    let mut cmd = rank_command(&RankCommand { env, ..*rc });
    // A key the user exported must not reach the ranks' environments.
    cmd.env_remove(ENV_JOB_KEY);
    cmd.stdin(if key_fd.is_none() {
        Stdio::piped()
    } else if rc.inherit_stdin {
        Stdio::inherit()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .process_group(0);
    let launcher = std::process::id() as libc::pid_t;
    let keep_fd = rc.keep_fd;
    // SAFETY: the closure runs in the forked child before exec, where only
    // async-signal-safe functions may be called: it calls prctl, getppid,
    // raise and fcntl, which are plain system calls, and allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if let Some(fd) = keep_fd {
                // The launcher's descriptor is close-on-exec (so that other
                // ranks' spawns do not inherit it); this rank keeps it.
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            // The launcher may have died between fork and prctl, in which
            // case the death signal will never come: end now instead.
            if libc::getppid() != launcher {
                libc::raise(libc::SIGKILL);
            }
            // The key pipe (close-on-exec in the launcher) stays open
            // across this exec only.
            if let Some(fd) = key_fd {
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    // The rank has its copy of the pipe; the launcher's closes here.
    drop(key_pipe);
    if let Some(mut stdin) = child.stdin.take() {
        // A rank that ended (or does not read its input: not a gex
        // program) before the line went in closes the pipe: then there is
        // nobody to give the key to, and its end is reported as usual (a
        // gex rank that cannot read its key fails saying so).
        let sent = stdin
            .write_all(rc.key.as_bytes())
            .and_then(|()| stdin.write_all(b"\n"));
        if sent.is_ok() && rc.inherit_stdin {
            // The rest of rank 0's standard input follows the key line.
            // The thread ends when either side closes.
            std::thread::Builder::new()
                .name("gex-run-stdin".into())
                .spawn(move || {
                    let _ = io::copy(&mut io::stdin(), &mut stdin);
                })?;
        }
        // else: dropping `stdin` closes it after the key line.
    }
    Ok(child)
}

/// A pipe holding `key` and a newline, its write end already closed: the
/// read end (close-on-exec, numbered 3 or more so that a child's standard
/// streams never take its number) for a rank to inherit.
fn key_pipe(key: &str) -> io::Result<OwnedFd> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and ours alone.
    let (mut read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    if read.as_raw_fd() < 3 {
        // SAFETY: F_DUPFD_CLOEXEC on an open descriptor returns a new one
        // (or -1), which we then own.
        let moved = unsafe { libc::fcntl(read.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
        if moved < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `moved` is a fresh descriptor owned by nobody else.
        read = unsafe { OwnedFd::from_raw_fd(moved) };
    }
    // A key line is far smaller than a pipe's buffer: this never blocks.
    let mut w = std::fs::File::from(write);
    w.write_all(key.as_bytes())?;
    w.write_all(b"\n")?;
    Ok(read)
}

/// Blocks until process `pid` (a child of this process) has ended, and says
/// how, WITHOUT reaping it.
///
/// Leaving the zombie in place until the launcher reaps it explicitly
/// guarantees that its pid (and process-group id) cannot be reused by an
/// unrelated process while the launcher may still send it signals.
pub(crate) fn wait_exit_no_reap(pid: u32) -> io::Result<Status> {
    loop {
        // SAFETY: siginfo_t is plain old data; all-zero is a valid value.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid, writable siginfo_t; waitid with
        // WNOWAIT only reads process state.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r != 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        // SAFETY: waitid succeeded for a child, so the SIGCHLD fields of the
        // union are the ones filled in.
        let status = unsafe { info.si_status() };
        return Ok(match info.si_code {
            libc::CLD_EXITED => Status::Code(status),
            // CLD_KILLED, CLD_DUMPED: WEXITED reports nothing else.
            _ => Status::Signal(status),
        });
    }
}

/// Sends SIGKILL to rank `pid` and to its process group (its descendants).
///
/// Only call this while the rank has not been reaped: until then the pid
/// cannot name another process (see [`wait_exit_no_reap`]).
pub(crate) fn kill_rank(pid: u32) {
    let pid = pid as libc::pid_t;
    // SAFETY: kill has no memory-safety preconditions; errors (ESRCH when the
    // group has no live member left) are expected and harmless.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
        libc::kill(pid, libc::SIGKILL);
    }
}

/// Whether the launcher's standard input is a terminal.
pub(crate) fn stdin_is_terminal() -> bool {
    use std::io::IsTerminal;
    io::stdin().is_terminal()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_bare_names_in_path() {
        let p = resolve_program(Path::new("sh"), std::env::var_os("PATH")).unwrap();
        assert!(p.ends_with("sh"), "{p:?}");
        let e = resolve_program(Path::new("no-such-program-gex"), std::env::var_os("PATH"))
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let e = resolve_program(Path::new("/no/such/program"), None).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let e = resolve_program(Path::new("/"), None).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        let e = resolve_program(Path::new(""), None).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn spawner_commands() {
        let env = vec![("GEX_RANK".into(), "1".into()), ("X".into(), "a b".into())];
        let args = vec!["--flag".to_string(), "it's".to_string()];
        let direct = Via::Direct;
        let netns = Via::Spawner {
            argv: vec!["ip".into(), "netns".into(), "exec".into(), "h1".into()],
            ssh: false,
        };
        let ssh = Via::Spawner {
            argv: vec![
                "ssh".into(),
                "-o".into(),
                "BatchMode=yes".into(),
                "h2".into(),
            ],
            ssh: true,
        };
        let words = |via: &Via| {
            let rc = RankCommand {
                program: Path::new("/bin/prog"),
                arg0: Path::new("prog"),
                args: &args,
                env: env.clone(),
                inherit_stdin: false,
                key: "secret",
                via,
                keep_fd: None,
            };
            let cmd = rank_command(&rc);
            let mut w = vec![cmd.get_program().to_string_lossy().into_owned()];
            w.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
            let envs = cmd.get_envs().count();
            (w, envs)
        };
        assert_eq!(
            words(&direct),
            (vec!["/bin/prog".into(), "--flag".into(), "it's".into()], 2)
        );
        assert_eq!(
            words(&netns).0,
            ["ip", "netns", "exec", "h1", "/bin/prog", "--flag", "it's"]
        );
        assert_eq!(words(&netns).1, 2);
        assert_eq!(
            words(&ssh),
            (
                [
                    "ssh",
                    "-o",
                    "BatchMode=yes",
                    "h2",
                    "env",
                    "GEX_RANK=1",
                    "'X=a b'",
                    "/bin/prog",
                    "--flag",
                    r"'it'\''s'"
                ]
                .map(String::from)
                .to_vec(),
                0
            )
        );
    }
}
