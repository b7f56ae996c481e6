//! One job: setting it up, the coordinator that owns every decision, and
//! the cleanup.
//!
//! All the other threads (acceptor, one reader per control connection, one
//! waiter per rank, two output forwarders per rank, the signal watcher) only
//! report [`Event`]s on one channel. The coordinator, running on the
//! caller's thread, reacts to them in arrival order and wakes up for
//! deadlines with `recv_deadline`: there is no polling and no sleep.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::Child;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use gex_bootstrap::stream::{NoSigPipe, Stream};
use gex_bootstrap::wire::{
    encode_exchange_result, keys_match, parse_hello, write_frame, CtrlAddr, Kind, ENV_CONDUIT,
    ENV_CTRL, ENV_HOST, ENV_HOSTS, ENV_JOB_ID, ENV_RANK, ENV_SIZE, EXIT_GRACE, MAX_FRAME,
};

use crate::ctrl::{ConnId, ControlSocket, Listen};
use crate::hosts::{self, Via};
use crate::output::{self, Sink};
use crate::proc::{self, RankCommand, Status};
use crate::{signals, Ctrl, JobOutcome, JobSpec, Output, TIMEOUT_CODE};

/// How long a rank that was told to finish on its own (it sent `Exit`, or
/// it got `Abort`) may take before it is killed.
const GRACE: Duration = Duration::from_secs(10);

/// After every rank has ended, how long output may stay open without
/// anything arriving before the launcher stops waiting for it. Only a
/// process that escaped the rank's process group can hold a pipe that long.
const DRAIN_GRACE: Duration = Duration::from_secs(5);

/// Bound on a blocking write to a rank's control connection, so a rank
/// that stops reading cannot wedge the coordinator.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// What the coordinator hears about.
pub(crate) enum Event {
    /// A process connected to the control socket, or a rank's inherited
    /// connection was made (`rank`: the only rank it may say `Hello` as);
    /// `stream` is the write handle for replies.
    Connected {
        conn: ConnId,
        stream: Stream,
        rank: Option<u32>,
    },
    /// A frame arrived on a connection.
    Frame {
        conn: ConnId,
        kind: Kind,
        body: Vec<u8>,
    },
    /// A connection ended: cleanly between frames (`error: None`) or with a
    /// malformed or truncated frame.
    Closed { conn: ConnId, error: Option<String> },
    /// The control socket stopped accepting connections.
    AcceptFailed(String),
    /// A rank process ended (it is not reaped yet).
    Exited {
        rank: u32,
        status: io::Result<Status>,
    },
    /// One of a rank's output pipes reached end of file and is fully
    /// forwarded.
    OutputDone { rank: u32 },
    /// The launcher received SIGINT or SIGTERM.
    Signal(i32),
}

/// Sets up, runs and cleans up one job (see [`crate::run`]).
pub(crate) fn run_job(spec: &JobSpec) -> io::Result<JobOutcome> {
    let start = Instant::now();
    if spec.ranks == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a job needs at least one rank",
        ));
    }
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
    // conduits derive their datagram authentication key from it, and ranks
    // present it over TCP.
    let job_key = gex_bootstrap::new_job_key();
    let listen = match ctrl_kind {
        Ctrl::Unix => Listen::Inherited,
        Ctrl::Tcp => Listen::Tcp(
            spec.ctrl_addr
                .unwrap_or_else(|| (std::net::Ipv4Addr::UNSPECIFIED, 0).into()),
        ),
    };
    let (tx, rx) = crossbeam_channel::unbounded();
    let mut ctrl = ControlSocket::start(&listen, tx.clone())?;
    let ctrl_addr = ctrl.advertised().map(ToString::to_string);
    let (subscription, pending_signal) = signals::subscribe(tx.clone());

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
    let progress = Arc::new(AtomicU64::new(0));

    let io = RankIo {
        label: spec.label,
        stdout: out_sink,
        stderr: err_sink.clone(),
        progress: progress.clone(),
        events: tx.clone(),
    };
    let mut ranks = Ranks::default();
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
        // pair, inherited as descriptor N (`GEX_CTRL=fd:N:PID`).
        // Failing to make it fails this rank's start (below).
        let (inherited, made) = match &ctrl_addr {
            Some(_) => (None, Ok(())),
            None => match inherit_ctrl(&mut ctrl, rank) {
                Ok(fd) => (Some(fd), Ok(())),
                Err(e) => (None, Err(e)),
            },
        };
        let rank_ctrl = match (&ctrl_addr, &inherited) {
            (Some(a), _) => a.clone(),
            (None, Some(fd)) => CtrlAddr::Fd {
                fd: fd.as_raw_fd(),
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
            keep_fd: inherited.as_ref().map(AsRawFd::as_raw_fd),
        };
        let started = made.and_then(|()| ranks.start(&rc, rank, &io));
        // The rank has its copy (or failed to start): the launcher's copy
        // of the rank's end must go, so that the launcher sees the
        // connection close when the rank ends.
        drop(inherited);
        if let Err(e) = started {
            // Undo the ranks started so far, then report.
            ranks.kill_and_reap();
            join_all(ranks.forwarders);
            shutdown_streams(ctrl.stop(), &rx, Vec::new());
            drop(subscription);
            return Err(io::Error::new(
                e.kind(),
                format!("cannot start rank {rank} ({}): {e}", program.display()),
            ));
        }
    }
    drop(io);

    let pids: Vec<u32> = ranks.children.iter().map(Child::id).collect();
    let mut co = Coordinator::new(spec, &pids, err_sink, start, job_key);
    if let Some(sig) = pending_signal {
        co.on_signal(sig);
    }
    let drained = co.drive(&rx, &progress);

    // Every rank has ended and its process group was killed: reap them.
    ranks.kill_and_reap();
    let conns = co.conns.drain().map(|(_, c)| c.stream).collect();
    shutdown_streams(ctrl.stop(), &rx, conns);
    if drained {
        join_all(ranks.forwarders);
    }
    // else: a process outside the job holds a pipe; its forwarder thread
    // is left to finish on its own (it only writes to the sink).
    drop(subscription);
    let elapsed = start.elapsed();

    let (stdout, stderr) = match captured {
        Some((out, err)) => (take(&out), take(&err)),
        None => (String::new(), String::new()),
    };
    Ok(JobOutcome {
        code: co.code.unwrap_or(0),
        reason: co
            .reason
            .unwrap_or_else(|| format!("all {} ranks exited with code 0", spec.ranks)),
        job_id,
        pids,
        stdout,
        stderr,
        timed_out: co.timed_out,
        elapsed,
    })
}

/// Where a rank's output and exit are reported.
struct RankIo {
    label: bool,
    stdout: Sink,
    stderr: Sink,
    progress: Arc<AtomicU64>,
    events: Sender<Event>,
}

/// The rank processes started so far and the threads watching them.
#[derive(Default)]
struct Ranks {
    children: Vec<Child>,
    /// One per rank: reports its exit without reaping it.
    waiters: Vec<JoinHandle<()>>,
    /// Two per rank: forward its stdout and stderr.
    forwarders: Vec<JoinHandle<()>>,
}

impl Ranks {
    /// Spawns rank `rank` and the threads that watch it.
    fn start(&mut self, rc: &RankCommand<'_>, rank: u32, io: &RankIo) -> io::Result<()> {
        let mut child = proc::spawn_rank(rc)?;
        let pid = child.id();
        let pipes = (child.stdout.take(), child.stderr.take());
        // From here on, kill_and_reap covers the child.
        self.children.push(child);
        let (Some(out), Some(err)) = pipes else {
            return Err(io::Error::other("rank output pipes missing"));
        };
        for (pipe, sink) in [
            (Box::new(out) as Box<dyn Read + Send>, &io.stdout),
            (Box::new(err), &io.stderr),
        ] {
            let (label, sink) = (io.label, sink.clone());
            let (progress, events) = (io.progress.clone(), io.events.clone());
            self.forwarders.push(
                std::thread::Builder::new()
                    .name(format!("gex-run-out-{rank}"))
                    .spawn(move || output::forward(pipe, rank, label, sink, progress, events))?,
            );
        }
        let events = io.events.clone();
        self.waiters.push(
            std::thread::Builder::new()
                .name(format!("gex-run-wait-{rank}"))
                .spawn(move || {
                    let status = proc::wait_exit_no_reap(pid);
                    let _ = events.send(Event::Exited { rank, status });
                })?,
        );
        Ok(())
    }

    /// Kills every rank with its process group (a no-op for those already
    /// ended, which are still unreaped zombies), reaps them all, and joins
    /// the waiter threads.
    fn kill_and_reap(&mut self) {
        for child in &self.children {
            proc::kill_rank(child.id());
        }
        for child in &mut self.children {
            let _ = child.wait();
        }
        join_all(std::mem::take(&mut self.waiters));
    }
}

/// Shuts down every control connection so their reader threads end, then
/// joins them. `conns` are the ones the coordinator knew; connections
/// announced after it stopped listening are still in `rx`.
fn shutdown_streams(readers: Vec<JoinHandle<()>>, rx: &Receiver<Event>, conns: Vec<Stream>) {
    let late = rx.try_iter().filter_map(|ev| match ev {
        Event::Connected { stream, .. } => Some(stream),
        _ => None,
    });
    for stream in conns.into_iter().chain(late) {
        let _ = stream.shutdown(std::net::Shutdown::Both);
    }
    join_all(readers);
}

fn join_all(threads: Vec<JoinHandle<()>>) {
    for t in threads {
        let _ = t.join();
    }
}

fn take(buf: &Mutex<String>) -> String {
    buf.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// What the coordinator knows about one rank.
struct Rank {
    pid: u32,
    /// The connection that said `Hello` for this rank.
    conn: Option<ConnId>,
    /// How many `Exchange` frames it sent: the next one joins that round.
    contributed: usize,
    /// How it ended, once it has (it stays unreaped until cleanup).
    status: Option<Status>,
    /// Left to finish on its own while the job ends (it sent `Exit`, or it
    /// was sent `Abort`).
    spared: bool,
    /// Output pipes not yet at end of file.
    open_outputs: u8,
}

/// A control connection.
struct Conn {
    stream: Stream,
    rank: Option<u32>,
    /// For a rank's inherited connection, the rank it belongs to.
    only: Option<u32>,
}

/// The job's state machine; see the crate docs for the rules it applies.
struct Coordinator {
    ranks: Vec<Rank>,
    conns: HashMap<ConnId, Conn>,
    /// Open exchange rounds: contributions by rank.
    rounds: BTreeMap<usize, Vec<Option<Vec<u8>>>>,
    /// Rounds completed (rounds complete in order).
    completed: usize,
    timeout: Option<Duration>,
    deadline: Option<Instant>,
    /// When spared ranks will be killed.
    grace: Option<Instant>,
    /// How long the others may run after a rank exited 0 (see
    /// [`gex_bootstrap::wire::EXIT_GRACE`]).
    exit_grace: Duration,
    /// The first rank that exited 0 while others ran, and when the job ends
    /// unless they have all exited by then.
    early_exit: Option<(usize, Instant)>,
    /// Set once the job is ending: the first reason wins.
    ending: bool,
    code: Option<i32>,
    reason: Option<String>,
    timed_out: bool,
    /// Where the launcher's own messages go.
    diag: Sink,
    /// The job key: a `Hello` over TCP must present it.
    key: String,
}

impl Coordinator {
    fn new(spec: &JobSpec, pids: &[u32], diag: Sink, start: Instant, key: String) -> Coordinator {
        Coordinator {
            ranks: pids
                .iter()
                .map(|&pid| Rank {
                    pid,
                    conn: None,
                    contributed: 0,
                    status: None,
                    spared: false,
                    open_outputs: 2,
                })
                .collect(),
            conns: HashMap::new(),
            rounds: BTreeMap::new(),
            completed: 0,
            timeout: spec.timeout,
            deadline: spec.timeout.map(|t| start + t),
            grace: None,
            exit_grace: spec.exit_grace.unwrap_or(EXIT_GRACE),
            early_exit: None,
            ending: false,
            code: None,
            reason: None,
            timed_out: false,
            diag,
            key,
        }
    }

    /// Handles events until every rank has ended and its output is
    /// forwarded. Returns false if it stopped waiting for output held open
    /// by a process outside the job.
    fn drive(&mut self, rx: &Receiver<Event>, progress: &AtomicU64) -> bool {
        // (deadline, lines forwarded when it was set)
        let mut drain: Option<(Instant, u64)> = None;
        loop {
            if self.ranks.iter().all(|r| r.status.is_some()) {
                if drain.is_none() {
                    // Whatever the ranks started may still run and hold
                    // their pipes; the zombies keep the group ids valid.
                    for r in &self.ranks {
                        proc::kill_rank(r.pid);
                    }
                    drain = Some((
                        Instant::now() + DRAIN_GRACE,
                        progress.load(Ordering::Relaxed),
                    ));
                }
                if self.ranks.iter().all(|r| r.open_outputs == 0) {
                    return true;
                }
            }
            let job_deadline = self.deadline.filter(|_| !self.ending);
            let early = self.early_exit.filter(|_| !self.ending).map(|e| e.1);
            let wake = [job_deadline, self.grace, early, drain.map(|d| d.0)]
                .into_iter()
                .flatten()
                .min();
            let event = match wake {
                Some(t) => rx.recv_deadline(t),
                None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            match event {
                Ok(ev) => self.handle(ev),
                Err(RecvTimeoutError::Timeout) => {
                    let now = Instant::now();
                    if job_deadline.is_some_and(|d| now >= d) {
                        self.on_timeout();
                    }
                    if early.is_some_and(|d| now >= d) {
                        self.on_early_exit();
                    }
                    if self.grace.is_some_and(|g| now >= g) {
                        self.grace = None;
                        self.kill_spared("did not exit within the grace period");
                    }
                    if let Some((d, seen)) = drain {
                        if now >= d {
                            let lines = progress.load(Ordering::Relaxed);
                            if lines != seen {
                                // Still flowing: a slow reader, not a leak.
                                drain = Some((now + DRAIN_GRACE, lines));
                            } else {
                                let open: Vec<usize> = (0..self.ranks.len())
                                    .filter(|&r| self.ranks[r].open_outputs > 0)
                                    .collect();
                                self.diag.message(&format!(
                                    "output of ranks {open:?} is still open after they ended \
                                     (held by a process that left their process group); \
                                     not waiting for it"
                                ));
                                return false;
                            }
                        }
                    }
                }
                // Cannot happen: run_job holds a sender for the whole job.
                Err(RecvTimeoutError::Disconnected) => return false,
            }
        }
    }

    fn handle(&mut self, ev: Event) {
        match ev {
            Event::Connected { conn, stream, rank } => {
                let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
                self.conns.insert(
                    conn,
                    Conn {
                        stream,
                        rank: None,
                        only: rank,
                    },
                );
            }
            Event::Frame { conn, kind, body } => self.on_frame(conn, kind, body),
            Event::Closed { conn, error } => self.on_closed(conn, error),
            Event::AcceptFailed(e) => self.fail(1, format!("the control socket failed: {e}")),
            Event::Exited { rank, status } => self.on_exited(rank, status),
            Event::OutputDone { rank, .. } => {
                let r = &mut self.ranks[rank as usize];
                r.open_outputs = r.open_outputs.saturating_sub(1);
            }
            Event::Signal(sig) => self.on_signal(sig),
        }
    }

    fn alive(&self) -> usize {
        self.ranks.iter().filter(|r| r.status.is_none()).count()
    }

    /// Ends the job (unless it is already ending): records `code` and
    /// `reason`, kills every live rank except those in `spare`, which get
    /// [`GRACE`] to exit on their own.
    fn end(&mut self, code: i32, reason: String, spare: &[u32]) {
        if self.ending {
            return;
        }
        self.ending = true;
        self.code = Some(code);
        self.reason = Some(reason);
        for (i, r) in self.ranks.iter_mut().enumerate() {
            if r.status.is_some() {
                continue;
            }
            if spare.contains(&(i as u32)) {
                r.spared = true;
            } else {
                proc::kill_rank(r.pid);
            }
        }
        if self.ranks.iter().any(|r| r.spared && r.status.is_none()) {
            let grace = Instant::now() + GRACE;
            // The job's own deadline bounds the grace too.
            self.grace = Some(self.deadline.map_or(grace, |d| d.min(grace)));
        }
    }

    /// Prints `msg` as a launcher message and ends the job with `code`.
    fn fail(&mut self, code: i32, msg: String) {
        if self.ending {
            return;
        }
        self.diag.message(&msg);
        self.end(code, msg, &[]);
    }

    fn kill_spared(&mut self, why: &str) {
        for (i, r) in self.ranks.iter_mut().enumerate() {
            if r.spared && r.status.is_none() {
                self.diag.message(&format!("rank {i} {why}; killing it"));
                proc::kill_rank(r.pid);
                r.spared = false;
            }
        }
    }

    /// Sends a frame to `rank`, if it is connected. A failed write is not
    /// acted on: the rank is gone or going, and its exit is what counts.
    fn send(&mut self, rank: usize, kind: Kind, body: &[u8]) {
        let Some(conn) = self.ranks[rank].conn else {
            return;
        };
        if let Some(c) = self.conns.get_mut(&conn) {
            if write_frame(&mut NoSigPipe(&c.stream), kind, body).is_err() {
                let _ = c.stream.shutdown(std::net::Shutdown::Both);
            }
        }
    }

    fn on_frame(&mut self, conn: ConnId, kind: Kind, body: Vec<u8>) {
        let Some(rank) = self.conns.get(&conn).map(|c| c.rank) else {
            return;
        };
        if self.ending {
            // Keep ranks that are finishing on their own from blocking.
            if let Some(r) = rank {
                let r = r as usize;
                match kind {
                    Kind::Exit => self.send(r, Kind::ExitAck, &[]),
                    Kind::Exchange => {
                        let why = format!("the job is ending: {}", self.reason_text());
                        self.send(r, Kind::Abort, why.as_bytes());
                    }
                    _ => {}
                }
            }
            return;
        }
        match (rank, kind) {
            (None, Kind::Hello) => self.on_hello(conn, &body),
            (None, kind) if self.is_tcp(conn) => {
                self.reject(conn, &format!("its first frame was {kind:?}, not Hello"))
            }
            (None, kind) => self.fail(
                1,
                format!("the first frame on a control connection was {kind:?}, not Hello"),
            ),
            (Some(r), Kind::Exchange) => self.on_exchange(r as usize, body),
            (Some(r), Kind::Exit) => self.on_exit(r as usize, &body),
            (Some(r), Kind::Hello) => self.fail(1, format!("rank {r} sent Hello twice")),
            (Some(r), kind) => self.fail(
                1,
                format!("rank {r} sent a {kind:?} frame, which only the launcher sends"),
            ),
        }
    }

    fn reason_text(&self) -> &str {
        self.reason.as_deref().unwrap_or("")
    }

    fn is_tcp(&self, conn: ConnId) -> bool {
        self.conns.get(&conn).is_some_and(|c| c.stream.is_tcp())
    }

    /// Drops a TCP connection that did not prove it belongs to the job: a
    /// stranger on the network must not be able to end it.
    fn reject(&mut self, conn: ConnId, why: &str) {
        if let Some(c) = self.conns.remove(&conn) {
            self.diag.message(&format!(
                "dropped a control connection from {}: {why}",
                c.stream.peer()
            ));
            let _ = c.stream.shutdown(std::net::Shutdown::Both);
        }
    }

    fn on_hello(&mut self, conn: ConnId, body: &[u8]) {
        let Some(hello) = parse_hello(body) else {
            if self.is_tcp(conn) {
                return self.reject(conn, "malformed Hello");
            }
            return self.fail(
                1,
                format!("malformed Hello frame ({} bytes, expected 8)", body.len()),
            );
        };
        let key_ok = hello
            .key
            .as_deref()
            .map(|k| keys_match(k, self.key.as_bytes()));
        match key_ok {
            Some(true) => {}
            None if !self.is_tcp(conn) => {}
            None => return self.reject(conn, "its Hello carried no job key"),
            Some(false) if self.is_tcp(conn) => {
                return self.reject(conn, "its Hello carried a wrong job key")
            }
            Some(false) => {
                return self.fail(
                    1,
                    format!(
                        "a process said Hello as rank {} with a wrong job key",
                        hello.rank
                    ),
                )
            }
        }
        let rank = hello.rank;
        // The pid is not checked against the spawned one: a rank may be a
        // wrapper script's child. An inherited connection speaks for the
        // rank it was made for and no other.
        let n = self.ranks.len();
        if rank as usize >= n {
            return self.fail(
                1,
                format!("a process said Hello as rank {rank}, but the job has {n} ranks"),
            );
        }
        if let Some(only) = self.conns.get(&conn).and_then(|c| c.only) {
            if only != rank {
                return self.fail(
                    1,
                    format!(
                        "a process said Hello as rank {rank} on the control connection of rank \
                         {only}"
                    ),
                );
            }
        }
        if self.ranks[rank as usize].conn.is_some() {
            return self.fail(1, format!("rank {rank} sent Hello twice"));
        }
        self.ranks[rank as usize].conn = Some(conn);
        if let Some(c) = self.conns.get_mut(&conn) {
            c.rank = Some(rank);
        }
    }

    fn on_exchange(&mut self, rank: usize, body: Vec<u8>) {
        let n = self.ranks.len();
        let k = self.ranks[rank].contributed;
        self.ranks[rank].contributed += 1;
        let round = self.rounds.entry(k).or_insert_with(|| vec![None; n]);
        round[rank] = Some(body);
        if round.iter().all(Option::is_some) {
            // Every rank contributed to k, hence to every earlier round:
            // rounds complete in order.
            let parts: Vec<Vec<u8>> = self
                .rounds
                .remove(&k)
                .unwrap_or_default()
                .into_iter()
                .flatten()
                .collect();
            self.completed = k + 1;
            let result = encode_exchange_result(&parts);
            if result.len() >= MAX_FRAME {
                return self.fail(
                    1,
                    format!(
                        "the result of start-up exchange round {k} is {} bytes, over the \
                         control plane's {MAX_FRAME}-byte frame limit",
                        result.len()
                    ),
                );
            }
            for r in 0..n {
                self.send(r, Kind::ExchangeResult, &result);
            }
        }
        self.check_stuck(None);
    }

    /// Ends the job if an open exchange round can never complete because a
    /// rank exited without joining it, telling the waiting ranks.
    /// `trigger` is the rank whose exit prompted the check, if any.
    fn check_stuck(&mut self, trigger: Option<usize>) {
        if self.ending {
            return;
        }
        let gone_before = |k: usize| -> Vec<usize> {
            (0..self.ranks.len())
                .filter(|&r| self.ranks[r].status.is_some() && self.ranks[r].contributed <= k)
                .collect()
        };
        let Some(gone) = self
            .rounds
            .keys()
            .map(|&k| gone_before(k))
            .find(|g| !g.is_empty())
        else {
            return;
        };
        // A rank waits if it contributed to a round that has not completed.
        let waiting: Vec<usize> = (0..self.ranks.len())
            .filter(|&r| {
                self.ranks[r].status.is_none() && self.ranks[r].contributed > self.completed
            })
            .collect();
        if waiting.is_empty() {
            return;
        }
        let culprit = trigger.filter(|t| gone.contains(t)).unwrap_or(gone[0]);
        let msg =
            format!("rank {culprit} exited while ranks {waiting:?} wait in a start-up collective");
        self.diag.message(&msg);
        let abort = format!(
            "gex-run: a start-up collective cannot complete: rank {culprit} exited without \
             joining it"
        );
        for &r in &waiting {
            self.send(r, Kind::Abort, abort.as_bytes());
        }
        let spare: Vec<u32> = waiting.iter().map(|&r| r as u32).collect();
        self.end(1, msg, &spare);
    }

    fn on_exit(&mut self, rank: usize, body: &[u8]) {
        let Ok(code) = <[u8; 4]>::try_from(body) else {
            return self.fail(
                1,
                format!(
                    "malformed Exit frame from rank {rank} ({} bytes, expected 4)",
                    body.len()
                ),
            );
        };
        let code = i32::from_le_bytes(code);
        self.send(rank, Kind::ExitAck, &[]);
        self.end(
            code,
            format!("rank {rank} called exit with code {code}"),
            &[rank as u32],
        );
    }

    fn on_closed(&mut self, conn: ConnId, error: Option<String>) {
        let Some(c) = self.conns.remove(&conn) else {
            return;
        };
        match (error, c.rank) {
            (Some(e), Some(r)) => {
                self.fail(1, format!("malformed control frame from rank {r}: {e}"))
            }
            (Some(e), None) if c.stream.is_tcp() => self.diag.message(&format!(
                "dropped a control connection from {}: malformed control frame: {e}",
                c.stream.peer()
            )),
            (Some(e), None) => self.fail(
                1,
                format!("malformed control frame on a new control connection: {e}"),
            ),
            // Over TCP, anyone may connect: only a rank's Hello counts.
            (None, None) if c.stream.is_tcp() => {}
            // A rank's inherited connection closes when the rank process
            // ends, whether or not it is a gex program: its exit status
            // is what counts.
            (None, None) if c.only.is_some() => {}
            (None, None) => self.fail(
                1,
                format!(
                    "a process connected to the control socket and hung up before sending \
                     Hello (is {ENV_CTRL} used by something that is not a gex rank?)"
                ),
            ),
            // A rank hanging up is ordinary: it is exiting, and its exit
            // status is what counts.
            (None, Some(_)) => {}
        }
    }

    fn on_exited(&mut self, rank: u32, status: io::Result<Status>) {
        let r = rank as usize;
        let status = match status {
            Ok(s) => s,
            Err(e) => {
                self.diag
                    .message(&format!("cannot wait for rank {rank}: {e}"));
                Status::Code(1)
            }
        };
        self.ranks[r].status = Some(status);
        if self.ending {
            // Ranks the launcher killed, and whatever happens after the
            // job's fate is decided, do not count.
            if self.grace.is_some() && !self.ranks.iter().any(|r| r.spared && r.status.is_none()) {
                self.grace = None;
            }
            return;
        }
        match status {
            Status::Signal(s) => self.fail(
                status.job_code(),
                format!(
                    "rank {rank} killed by signal {s} ({})",
                    proc::signal_name(s)
                ),
            ),
            Status::Code(c) if c != 0 => self.fail(c, format!("rank {rank} exited with code {c}")),
            Status::Code(_) => {
                self.check_stuck(Some(r));
                // A gex rank (one that said Hello) that leaves while others
                // run ends the job after the exit grace, as in GASNet.
                if !self.ending
                    && self.early_exit.is_none()
                    && self.ranks[r].conn.is_some()
                    && self.alive() > 0
                {
                    self.early_exit = Some((r, Instant::now() + self.exit_grace));
                }
            }
        }
    }

    /// The exit grace after a rank's exit with code 0 has passed and ranks
    /// still run: the job ends with that rank's code, 0.
    fn on_early_exit(&mut self) {
        let Some((first, _)) = self.early_exit else {
            return;
        };
        let running: Vec<usize> = (0..self.ranks.len())
            .filter(|&r| self.ranks[r].status.is_none())
            .collect();
        if running.is_empty() {
            return;
        }
        self.fail(
            0,
            format!(
                "rank {first} exited with code 0 while ranks {running:?} still ran {} s later; \
                 a rank's exit ends the job",
                fmt_secs(self.exit_grace)
            ),
        );
    }

    fn on_signal(&mut self, sig: i32) {
        let name = proc::signal_name(sig);
        if self.ending {
            // Asked again while ranks finish on their own: stop waiting.
            self.grace = None;
            self.kill_spared(&format!("still running at {name}"));
            return;
        }
        let alive = self.alive();
        self.fail(128 + sig, format!("received {name}; ending {alive} ranks"));
    }

    fn on_timeout(&mut self) {
        let secs = self.timeout.map(fmt_secs).unwrap_or_default();
        let alive = self.alive();
        self.timed_out = true;
        self.fail(
            TIMEOUT_CODE,
            format!("job timed out after {secs} s; ending {alive} ranks"),
        );
    }
}

/// Formats seconds without needless decimals: `2`, `0.5`, `1.25`.
fn fmt_secs(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        return d.as_secs().to_string();
    }
    let s = format!("{:.3}", d.as_secs_f64());
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A fresh job identifier: 16 random hex digits.
fn new_job_id() -> String {
    gex_bootstrap::os::random::new_job_id()
}

/// Makes rank `rank`'s control connection: a socket pair whose launcher
/// end `ctrl` reads, and whose other end (returned, close-on-exec, at
/// descriptor 3 or above so that it cannot collide with the rank's standard
/// streams) the rank inherits.
fn inherit_ctrl(ctrl: &mut ControlSocket, rank: u32) -> io::Result<OwnedFd> {
    let theirs = OwnedFd::from(ctrl.adopt(rank)?);
    if theirs.as_raw_fd() > 2 {
        return Ok(theirs);
    }
    // `try_clone` duplicates to the lowest free descriptor >= 3.
    theirs.try_clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_formatted_tersely() {
        assert_eq!(fmt_secs(Duration::from_secs(2)), "2");
        assert_eq!(fmt_secs(Duration::from_millis(500)), "0.5");
        assert_eq!(fmt_secs(Duration::from_millis(1250)), "1.25");
    }

    #[test]
    fn job_ids_are_16_hex_digits_and_differ() {
        let a = new_job_id();
        let b = new_job_id();
        assert_eq!(a.len(), 16);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
