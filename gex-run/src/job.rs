//! One job: setting it up, serving it, and the cleanup.
//!
//! Every decision is the coordinator's ([`gex_bootstrap::coord`], shared
//! with the rendezvous that rank 0 serves under srun or mpirun); its
//! network shell ([`gex_bootstrap::serve`]) runs the control connections.
//! This file adds what only a launcher has: the rank processes (watched
//! through pidfds), their output (forwarded line by line), signals, and
//! killing. All of it runs on one thread, under a tokio runtime of one
//! thread: no thread per rank, no polling, no sleep. A rank's output is
//! written by one writer thread, so a slow reader of the launcher's own
//! output never stalls the control plane.

use std::ffi::OsString;
use std::io;
use std::net::{IpAddr, Ipv4Addr};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::process::Child;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gex_bootstrap::coord::{Config, Coordinator, Ended, Mode};
use gex_bootstrap::serve::{serve, Host, Input};
use gex_bootstrap::wire::{
    CtrlAddr, ENV_CONDUIT, ENV_CTRL, ENV_HOST, ENV_HOSTS, ENV_JOB_ID, ENV_RANK, ENV_SIZE,
};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::hosts::{self, Via};
use crate::output::{self, Sink};
use crate::proc::{self, RankCommand, Status};
use crate::{signals, Ctrl, JobOutcome, JobSpec, Output};

/// After every rank has ended, how long output may stay open without
/// anything arriving before the launcher stops waiting for it. Only a
/// process that escaped the rank's process group can hold a pipe that long.
const DRAIN_GRACE: Duration = Duration::from_secs(5);

/// Sets up, runs and cleans up one job (see [`crate::run`]).
pub(crate) fn run_job(spec: &JobSpec) -> io::Result<JobOutcome> {
    if spec.ranks == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a job needs at least one rank",
        ));
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // On a thread of its own, which stays for the whole job (the ranks'
    // parent-death signal follows the thread that forked them), so that a
    // caller already inside a tokio runtime can call `run` too.
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("gex-run-job".into())
            .spawn_scoped(s, || rt.block_on(job(spec)))?
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the job's thread panicked")))
    })
}

/// What the coordinator asks of the launcher.
struct Launcher {
    pids: Vec<u32>,
    diag: Sink,
}

impl Host for Launcher {
    fn message(&mut self, msg: &str) {
        self.diag.message(msg);
    }

    fn kill(&mut self, rank: u32) {
        if let Some(&pid) = self.pids.get(rank as usize) {
            proc::kill_rank(pid);
        }
    }

    fn observe(&mut self, co: &Coordinator) -> bool {
        co.all_left()
    }
}

async fn job(spec: &JobSpec) -> io::Result<JobOutcome> {
    let start = Instant::now();
    // Look the program up with the PATH the ranks will have.
    let path_var = spec
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| OsString::from(v))
        .or_else(|| std::env::var_os("PATH"));
    let mut program = proc::resolve_program(&spec.program, path_var)?;
    let (places, hosts_used) = hosts::plan(spec)?;
    let spawned = places.iter().any(|p| matches!(p.via, Via::Spawner { .. }));
    if spawned && program.is_relative() {
        // A spawner may start the program elsewhere (ssh: in the remote
        // home directory).
        program = std::env::current_dir()?.join(program);
    }
    let over_ssh = places
        .iter()
        .any(|p| matches!(p.via, Via::Spawner { ssh: true, .. }));
    let ctrl_kind = spec
        .ctrl
        .unwrap_or(if over_ssh { Ctrl::Tcp } else { Ctrl::Unix });

    let job_id = new_job_id();
    // The job's secret, never printed nor put in an environment or on a
    // command line (spawn_rank hands it over through a pipe): network
    // conduits derive their datagram authentication key from it, and every
    // rank proves it knows it when it joins the control plane.
    let job_key = gex_bootstrap::new_job_key();
    let (listener, ctrl_addr) = match ctrl_kind {
        Ctrl::Unix => (None, None),
        Ctrl::Tcp => {
            let (l, advertised) = tcp_listener(spec)?;
            (Some(l), Some(advertised.to_string()))
        }
    };
    let (inputs_tx, inputs) = mpsc::unbounded_channel();
    let (subscription, pending_signal) = signals::subscribe(inputs_tx.clone());

    let (out_sink, err_sink, captured) = match spec.output {
        Output::Inherit => (Sink::Stdout, Sink::Stderr, None),
        Output::Capture => {
            let out = Arc::new(Mutex::new(String::new()));
            let err = Arc::new(Mutex::new(String::new()));
            (
                Sink::Buffer(out.clone()),
                Sink::Buffer(err.clone()),
                Some((out, err)),
            )
        }
    };
    let (lines, writer) = output::writer(out_sink, err_sink.clone())?;
    let progress = Arc::new(AtomicU64::new(0));

    let mut children: Vec<Child> = Vec::new();
    let mut outputs = JoinSet::new();
    let mut inherited: Vec<(u32, UnixStream)> = Vec::new();
    // Standard input goes to rank 0 only, and not from a terminal: ranks
    // run in process groups of their own, which may not read the terminal.
    let stdin_to_rank0 = !proc::stdin_is_terminal();
    for (rank, place) in (0..spec.ranks).zip(&places) {
        let mut env: Vec<(OsString, OsString)> =
            spec.env.iter().map(|(k, v)| (k.into(), v.into())).collect();
        if let Some(host) = &place.host {
            env.extend(
                spec.host_env
                    .iter()
                    .filter(|(h, _, _)| h == host)
                    .map(|(_, k, v)| (k.into(), v.into())),
            );
        }
        // Without a listening address, the rank's own end of a socket
        // pair, inherited as descriptor N (`GEX_CTRL=fd:N:PID`). Failing
        // to make it fails this rank's start (below).
        let pair = match &ctrl_addr {
            Some(_) => Ok(None),
            None => socket_pair().map(Some),
        };
        let theirs_fd = pair
            .as_ref()
            .ok()
            .and_then(|p| p.as_ref().map(|(_, theirs)| theirs.as_raw_fd()));
        let rank_ctrl = match (&ctrl_addr, theirs_fd) {
            (Some(a), _) => a.clone(),
            (None, Some(fd)) => CtrlAddr::Fd {
                fd,
                pid: std::process::id(),
            }
            .to_string(),
            (None, None) => String::new(),
        };
        env.extend([
            (ENV_RANK.into(), rank.to_string().into()),
            (ENV_SIZE.into(), spec.ranks.to_string().into()),
            (ENV_CTRL.into(), rank_ctrl.into()),
            (ENV_JOB_ID.into(), job_id.clone().into()),
            (ENV_CONDUIT.into(), spec.conduit.clone().into()),
        ]);
        if let Some(host) = &place.host {
            env.extend([
                (ENV_HOST.into(), host.into()),
                (ENV_HOSTS.into(), hosts_used.to_string().into()),
            ]);
        }
        let rc = RankCommand {
            program: &program,
            arg0: &spec.program,
            args: &spec.args,
            env,
            inherit_stdin: rank == 0 && stdin_to_rank0,
            key: &job_key,
            via: &place.via,
            keep_fd: theirs_fd,
        };
        let started = pair.and_then(|pair| {
            let mut child = proc::spawn_rank(&rc)?;
            let pid = child.id();
            let pipes = (child.stdout.take(), child.stderr.take());
            // From here on, the cleanup covers the child.
            children.push(child);
            // The rank has its copy (or failed to start): the launcher's
            // copy of the rank's end goes here, so that the launcher sees
            // the connection close when the rank ends.
            if let Some((ours, _theirs)) = pair {
                inherited.push((rank, ours));
            }
            let (Some(out), Some(err)) = pipes else {
                return Err(io::Error::other("rank output pipes missing"));
            };
            for (pipe, is_err) in [(OwnedFd::from(out), false), (OwnedFd::from(err), true)] {
                let pipe = tokio::net::unix::pipe::Receiver::from_owned_fd(pipe)?;
                let prefix = spec.label.then(|| format!("[{rank}] "));
                outputs.spawn(output::forward(
                    pipe,
                    prefix,
                    is_err,
                    lines.clone(),
                    progress.clone(),
                ));
            }
            tokio::spawn(watch_exit(rank, pid, inputs_tx.clone()));
            Ok(())
        });
        if let Err(e) = started {
            // Undo the ranks started so far, then report.
            kill_and_reap(&mut children);
            outputs.abort_all();
            drop(lines);
            let _ = writer.join();
            drop(subscription);
            return Err(io::Error::new(
                e.kind(),
                format!("cannot start rank {rank} ({}): {e}", program.display()),
            ));
        }
    }
    drop(lines);
    drop(inputs_tx);

    let pids: Vec<u32> = children.iter().map(Child::id).collect();
    let mut cfg = Config::new(spec.ranks as usize, Mode::Launcher, Some(job_key));
    cfg.timeout = spec.timeout;
    if let Some(g) = spec.exit_grace {
        cfg.exit_grace = g;
    }
    let mut co = Coordinator::new(cfg, start);
    if let Some(sig) = pending_signal {
        co.signal(sig, Instant::now());
    }
    let mut host = Launcher {
        pids: pids.clone(),
        diag: err_sink.clone(),
    };
    serve(&mut co, listener, inherited, inputs, &mut host).await;

    // Every rank has ended. Whatever they started may still run and hold
    // their pipes: kill their process groups (the zombies keep the group
    // ids valid), then wait for their output.
    for &pid in &pids {
        proc::kill_rank(pid);
    }
    let drained = drain(&mut outputs, &progress, &err_sink).await;
    kill_and_reap(&mut children);
    if drained {
        let _ = writer.join();
    } else {
        // A process outside the job holds a pipe: its forwarder is left
        // behind (it only writes to the sink), and so is the writer.
        outputs.detach_all();
    }
    drop(subscription);
    let elapsed = start.elapsed();

    let (stdout, stderr) = match captured {
        Some((out, err)) => (take(&out), take(&err)),
        None => (String::new(), String::new()),
    };
    let outcome = co.outcome().cloned();
    Ok(JobOutcome {
        code: outcome.as_ref().map_or(0, |o| o.code),
        reason: outcome.as_ref().map_or_else(
            || format!("all {} ranks exited with code 0", spec.ranks),
            |o| o.reason.clone(),
        ),
        job_id,
        pids,
        stdout,
        stderr,
        timed_out: outcome.is_some_and(|o| o.timed_out),
        elapsed,
    })
}

/// Waits until every rank's output is forwarded. Returns false if it
/// stopped waiting for output held open by a process outside the job:
/// nothing arrived for [`DRAIN_GRACE`].
async fn drain(outputs: &mut JoinSet<()>, progress: &AtomicU64, diag: &Sink) -> bool {
    let mut seen = progress.load(Ordering::Relaxed);
    loop {
        let deadline = tokio::time::Instant::now() + DRAIN_GRACE;
        loop {
            tokio::select! {
                done = outputs.join_next() => if done.is_none() {
                    return true;
                },
                () = tokio::time::sleep_until(deadline) => break,
            }
        }
        let now = progress.load(Ordering::Relaxed);
        if now == seen {
            diag.message(&format!(
                "output of {} pipes is still open after every rank ended (held by a process that \
                 left its rank's process group); not waiting for it",
                outputs.len()
            ));
            return false;
        }
        // Still flowing: a slow reader, not a leak.
        seen = now;
    }
}

/// Reports rank `rank`'s end (process `pid`) without reaping it.
async fn watch_exit(rank: u32, pid: u32, inputs: mpsc::UnboundedSender<Input>) {
    let status = match pidfd(pid) {
        // SAFETY: the AsyncFd owns the OwnedFd, which stays open and
        // names the same pidfd until the AsyncFd is dropped.
        Ok(fd) => match unsafe {
            tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)
        } {
            Ok(afd) => {
                let _ = afd.readable().await;
                proc::wait_exit_no_reap(pid)
            }
            Err(_) => wait_on_a_thread(pid).await,
        },
        // No pidfd (a kernel before 5.3): a blocking wait on tokio's pool.
        Err(_) => wait_on_a_thread(pid).await,
    };
    let how = match status {
        Ok(Status::Code(c)) => Ended::Code(c),
        Ok(Status::Signal(s)) => Ended::Signal(s),
        Err(e) => {
            let _ = inputs.send(Input::Fail(format!("cannot wait for rank {rank}: {e}")));
            Ended::Code(1)
        }
    };
    let _ = inputs.send(Input::RankEnded(rank, how));
}

async fn wait_on_a_thread(pid: u32) -> io::Result<Status> {
    tokio::task::spawn_blocking(move || proc::wait_exit_no_reap(pid))
        .await
        .unwrap_or_else(|e| Err(io::Error::other(e.to_string())))
}

/// A pidfd for child `pid`: readable once it has ended.
fn pidfd(pid: u32) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor
    // or -1; it touches no memory of ours.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the descriptor was just created and is owned by nobody else.
    Ok(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd as i32) })
}

/// Kills every rank with its process group (a no-op for those already
/// ended, which are still unreaped zombies) and reaps them all.
fn kill_and_reap(children: &mut [Child]) {
    for child in children.iter() {
        proc::kill_rank(child.id());
    }
    for child in children.iter_mut() {
        let _ = child.wait();
    }
}

fn take(buf: &Mutex<String>) -> String {
    buf.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// The TCP control socket for ranks on other machines, and the address
/// they are told: the bound IP, or if it is unspecified this machine's
/// first non-loopback IPv4 address (127.0.0.1 if it has none).
fn tcp_listener(spec: &JobSpec) -> io::Result<(tokio::net::TcpListener, CtrlAddr)> {
    let at = spec
        .ctrl_addr
        .unwrap_or_else(|| (Ipv4Addr::UNSPECIFIED, 0).into());
    let l = gex_bootstrap::serve::bind_tcp(at)?;
    let mut advertised = l.local_addr()?;
    if advertised.ip().is_unspecified() {
        let ip = gex_bootstrap::os::net::first_ipv4().unwrap_or(Ipv4Addr::LOCALHOST);
        advertised.set_ip(IpAddr::V4(ip));
    }
    Ok((
        tokio::net::TcpListener::from_std(l)?,
        CtrlAddr::Tcp(advertised),
    ))
}

/// A rank's control connection: a socket pair; the launcher keeps the
/// first end, the rank inherits the second (close-on-exec, at descriptor 3
/// or above so that it cannot collide with the rank's standard streams;
/// only the spawn that clears the flag in its child passes it on).
fn socket_pair() -> io::Result<(UnixStream, OwnedFd)> {
    let (ours, theirs) = UnixStream::pair()?;
    let theirs = OwnedFd::from(theirs);
    if theirs.as_raw_fd() > 2 {
        return Ok((ours, theirs));
    }
    // `try_clone` duplicates to the lowest free descriptor >= 3.
    Ok((ours, theirs.try_clone()?))
}

/// A fresh job identifier: 16 random hex digits.
fn new_job_id() -> String {
    gex_bootstrap::os::random::new_job_id()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_ids_are_16_hex_digits_and_differ() {
        let a = new_job_id();
        let b = new_job_id();
        assert_eq!(a.len(), 16);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
