//! The start-up control plane, rank side: all-gather exchange, barrier and
//! job exit through the launcher.
//!
//! How a process finds its job, in order:
//!
//! 1. `GEX_CTRL` is set: the process was started by `gex-run`, and reaches
//!    its control plane there (`fd:N:PID`, a connected socket the launcher
//!    passed down, or `tcp:IP:PORT` for ranks on other machines; see
//!    [`wire::CtrlAddr`]).
//! 2. Another launcher's variables are set — Slurm's `SLURM_PROCID` and
//!    `SLURM_NTASKS`, Open MPI's `OMPI_COMM_WORLD_RANK` and
//!    `OMPI_COMM_WORLD_SIZE`, or MPICH's `PMI_RANK` and `PMI_SIZE` — for a
//!    job of more than one rank: the ranks meet at `GEX_RENDEZVOUS=IP:PORT`,
//!    or at the address rank 0 published through PMIx when a PMIx server
//!    started them, where rank 0 serves the control plane itself (see
//!    [`rendezvous`]).
//! 3. Otherwise the process is a job of one rank ("singleton") and needs no
//!    launcher.
//!
//! The control plane is slow (a socket round trip through the launcher)
//! and is only used while objects are created: client init, segment
//! attach, team creation.
//!
//! The operating-system plumbing every crate of gex shares (nameless
//! shared memory, interface walks, the host name, random ids and keys) is
//! in [`os`], once.
//!
//! This crate also ends jobs: [`exit`] (the whole job, with a code),
//! [`fatal`] (a broken invariant, named with the rank) and [`job_ending`],
//! which every layer and conduit may call without the object model.

pub mod coord;
pub mod os;
mod pmix;
pub mod rendezvous;
pub mod serve;
pub mod stream;
pub mod vars;
pub mod wire;

use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use gex_types::{Error, Rank, Result};

pub use os::random::{new_job_key, random_bytes, random_hex};
use stream::Stream;
use wire::{CtrlAddr, Kind};

/// Bound on each step of the handshake with the control plane.
const HANDSHAKE_WAIT: Duration = Duration::from_secs(60);

/// Reads and writes a stream; writes never raise SIGPIPE.
struct NoSigPipeRw<'a>(&'a mut Stream);

impl Read for NoSigPipeRw<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for NoSigPipeRw<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        stream::NoSigPipe(&*self.0).write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// How long a rank waits for the launcher to acknowledge an exit request.
const EXIT_ACK_TIMEOUT: Duration = Duration::from_secs(10);

/// The rank side of the control plane.
pub struct Bootstrap {
    rank: Rank,
    size: Rank,
    job_id: String,
    job_key: Option<String>,
    /// Distinct hosts the job spans, when known (see [`Bootstrap::hosts`]).
    hosts: Option<u32>,
    conn: Option<Arc<Shared>>,
}

/// Who serves the control plane of this process's job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Server {
    /// `gex-run`, through a Unix socket or TCP.
    Launcher { tcp: bool },
    /// Rank 0's coordinator, at `GEX_RENDEZVOUS`.
    Rendezvous,
}

impl Server {
    fn name(self) -> &'static str {
        match self {
            Server::Launcher { .. } => "the launcher",
            Server::Rendezvous => "the rendezvous coordinator (rank 0)",
        }
    }
}

/// The control connection, shared by the threads that use it: the caller
/// of a collective, and (over TCP and at a rendezvous) the watcher thread
/// that ends the process when the job ends while no collective runs.
struct Shared {
    conn: Mutex<Conn>,
    /// Signalled when [`Conn::busy`] turns false.
    idle: Condvar,
    server: Server,
    rank: Rank,
}

struct Conn {
    stream: Stream,
    /// Bytes read but not yet consumed as a whole frame.
    pending: Vec<u8>,
    /// A collective or an exit request is waiting for its answer: the
    /// frames that arrive are its own, the watcher leaves them alone.
    busy: bool,
}

impl std::fmt::Debug for Bootstrap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bootstrap")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("job_id", &self.job_id)
            .field("hosts", &self.hosts)
            .field("server", &self.conn.as_ref().map(|s| s.server))
            .finish()
    }
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// `GEX_HOSTS`, as the launcher (or a user starting ranks by hand) set it.
fn hosts_from_env() -> Result<Option<u32>> {
    hosts_from(vars::Lookup::env())
}

fn hosts_from(vars: vars::Lookup<'_>) -> Result<Option<u32>> {
    vars.parse(
        wire::ENV_HOSTS,
        "a number of hosts, at least 1",
        |&h: &u32| h >= 1,
    )
}

fn io_err(e: io::Error) -> Error {
    Error::resource(format!("control plane: {e}"))
}

impl Bootstrap {
    /// A job of one rank with no launcher.
    pub fn singleton() -> Bootstrap {
        let job_id = format!("s{}", std::process::id());
        Bootstrap {
            rank: 0,
            size: 1,
            job_id,
            job_key: None,
            hosts: Some(1),
            conn: None,
        }
        .joined()
    }

    /// Records this process's rank and control connection for [`exit`] and
    /// [`fatal`] (the first joined control plane of the process counts).
    fn joined(self) -> Bootstrap {
        let _ = JOINED.set((self.rank, self.conn.clone()));
        self
    }

    /// Joins the job described by the environment (see the module docs):
    /// `gex-run`'s job when `GEX_CTRL` is set, a rendezvous when another
    /// launcher started several ranks, otherwise a singleton.
    ///
    /// At a rendezvous this is collective: it returns once every rank has
    /// arrived (rank 0 distributes the job's identifier and key then).
    pub fn from_env() -> Result<Bootstrap> {
        if let Some(ctrl) = env_var(wire::ENV_CTRL) {
            return Bootstrap::from_launcher(&ctrl);
        }
        match rendezvous::detect()? {
            Some(ext) if ext.size > 1 => rendezvous::join(&ext).map(Bootstrap::joined),
            _ => Ok(Bootstrap::singleton()),
        }
    }

    fn from_launcher(ctrl: &str) -> Result<Bootstrap> {
        let addr = CtrlAddr::parse(ctrl).ok_or_else(|| {
            Error::not_init(format!(
                "{}={ctrl:?} is none of fd:N:PID, a socket path, tcp:IP:PORT",
                wire::ENV_CTRL
            ))
        })?;
        let parse = |name: &str| -> Result<Rank> {
            let v = env_var(name).ok_or_else(|| {
                Error::not_init(format!("{} is set but {name} is not", wire::ENV_CTRL))
            })?;
            v.parse::<Rank>()
                .map_err(|_| Error::not_init(format!("{name}={v:?} is not a rank")))
        };
        let rank = parse(wire::ENV_RANK)?;
        let size = parse(wire::ENV_SIZE)?;
        if size == 0 || rank >= size {
            return Err(Error::not_init(format!(
                "rank {rank} is not in a job of {size} ranks"
            )));
        }
        let job_id = env_var(wire::ENV_JOB_ID)
            .ok_or_else(|| Error::not_init(format!("{} is not set", wire::ENV_JOB_ID)))?;
        let job_key = launcher_key()?;
        let hosts = hosts_from_env()?;
        let stream = Stream::connect(&addr)
            .map_err(|e| Error::resource(format!("cannot reach the launcher at {ctrl}: {e}")))?;
        let tcp = stream.is_tcp();
        let shared = Shared::hello(stream, rank, job_key.as_deref(), Server::Launcher { tcp })?;
        if tcp {
            // A rank on another machine is not the launcher's child: it
            // must notice by itself when the launcher ends the job.
            shared.spawn_watcher()?;
        }
        Ok(Bootstrap {
            rank,
            size,
            job_id,
            job_key,
            hosts,
            conn: Some(shared),
        }
        .joined())
    }

    /// This process's rank in the job.
    pub fn rank(&self) -> Rank {
        self.rank
    }

    /// The number of ranks in the job.
    pub fn size(&self) -> Rank {
        self.size
    }

    /// The job's identifier (prefix of its shared-memory object names).
    pub fn job_id(&self) -> &str {
        &self.job_id
    }

    /// The job's secret key (text; 64 hex digits unless a user chose it):
    /// from `gex-run` through [`wire::ENV_KEY_FD`], or handed out by rank 0
    /// at a rendezvous. Network conduits derive their datagram
    /// authentication key from it; it never goes on the wire. `None` for a
    /// singleton.
    pub fn job_key(&self) -> Option<&str> {
        self.job_key.as_deref()
    }

    /// How many distinct hosts the job spans, when this process knows:
    /// `GEX_HOSTS` from `gex-run` (which places ranks on hosts), the number
    /// of host names the ranks reported when they met at a rendezvous
    /// (unless `GEX_HOSTS` was set), 1 for a singleton. Network conduits
    /// choose their address and datagram size from it (one host: loopback
    /// and the largest datagrams).
    pub fn hosts(&self) -> Option<u32> {
        self.hosts
    }

    /// Whether a launcher (`gex-run`, or rank 0 at a rendezvous) serves this
    /// job.
    pub fn has_launcher(&self) -> bool {
        self.conn.is_some()
    }

    /// All-gather: every rank contributes `mine` and receives every rank's
    /// contribution, in rank order. Collective over the job. `progress` is
    /// called while waiting, so that a rank blocked here still serves
    /// messages its peers need.
    pub fn exchange(&self, mine: &[u8], progress: &mut dyn FnMut()) -> Result<Vec<Vec<u8>>> {
        let Some(shared) = &self.conn else {
            return Ok(vec![mine.to_vec()]);
        };
        let _busy = shared.begin(Kind::Exchange, mine).map_err(io_err)?;
        loop {
            // The connection is locked only around each read, never while
            // progress runs handlers: a handler may call `exit`, which needs
            // the connection to tell the launcher.
            let frame = shared.lock().try_recv().map_err(io_err)?;
            match frame {
                Some((Kind::ExchangeResult, body)) => {
                    let parts = wire::decode_exchange_result(&body).ok_or_else(|| {
                        Error::resource("control plane: malformed exchange result")
                    })?;
                    if parts.len() != self.size as usize {
                        return Err(Error::resource(format!(
                            "control plane: exchange returned {} parts for {} ranks",
                            parts.len(),
                            self.size
                        )));
                    }
                    return Ok(parts);
                }
                Some((Kind::Abort, body)) => {
                    return Err(Error::resource(format!(
                        "{} ended the job: {}",
                        shared.server.name(),
                        String::from_utf8_lossy(&body)
                    )))
                }
                Some((Kind::End, body)) => shared.on_end(&body),
                Some((kind, _)) => {
                    return Err(Error::resource(format!(
                        "control plane: unexpected {kind:?} frame"
                    )))
                }
                None => {
                    progress();
                    std::thread::yield_now();
                }
            }
        }
    }

    /// Barrier over the job (an exchange of nothing).
    pub fn barrier(&self, progress: &mut dyn FnMut()) -> Result<()> {
        self.exchange(&[], progress).map(|_| ())
    }

    /// Asks the launcher to end the whole job with `code`, and waits (at
    /// most 10 s, `EXIT_ACK_TIMEOUT`) for its acknowledgement, so that the
    /// launcher has recorded the code before this process exits. Frames
    /// of a collective in progress are dropped: the job is ending.
    pub fn request_exit(&self, code: i32) {
        if let Some(shared) = &self.conn {
            request_exit_on(shared, code, "");
        }
    }
}

/// The exit grace ([`coord::Config::exit_grace`]) `vars` set:
/// `GEX_EXIT_TIMEOUT` in seconds (0 or more: 0 ends the other ranks as
/// soon as one exits), else [`wire::EXIT_GRACE`]. Read by the coordinator's
/// owner: the `gex-run` binary, and rank 0 at a rendezvous.
pub fn exit_timeout(vars: vars::Lookup<'_>) -> Result<Duration> {
    let secs = vars.parse::<f64>(wire::ENV_EXIT_TIMEOUT, "seconds, 0 or more", |s: &f64| {
        s.is_finite() && (0.0..1e9).contains(s)
    })?;
    Ok(secs.map_or(wire::EXIT_GRACE, Duration::from_secs_f64))
}

/// The rank and control connection of the first control plane this process
/// joined (see [`Bootstrap::joined`]).
static JOINED: OnceLock<(Rank, Option<Arc<Shared>>)> = OnceLock::new();

/// Set by [`exit`]: the whole job is ending.
static JOB_ENDING: AtomicBool = AtomicBool::new(false);

/// Whether [`exit`] was called: the whole job is ending, so exit hooks need
/// not wait for peers (they are being ended too).
pub fn job_ending() -> bool {
    JOB_ENDING.load(Ordering::SeqCst)
}

/// Ends the whole job with `code` (`gasnet_exit`), as GASNet's exit does:
/// the first rank's exit decides the job's code; the other ranks may call
/// exit too within the exit grace (`GEX_EXIT_TIMEOUT`, see
/// [`exit_timeout`]) and then finish on their own, with their output;
/// those that do not are ended by the launcher after it. This process's
/// buffered output (Rust's standard streams and every C stdio stream) is
/// flushed first. May be called from any rank, any thread, at any time,
/// even in handler context.
pub fn exit(code: i32) -> ! {
    exit_as(code, "")
}

/// [`exit`], telling the coordinator `why` ([`wire::EXIT_FATAL`] for a
/// fatal error, which ends the other ranks at once).
fn exit_as(code: i32, why: &str) -> ! {
    JOB_ENDING.store(true, Ordering::SeqCst);
    flush_output();
    match JOINED.get() {
        Some((_, Some(shared))) => request_exit_on(shared, code, why),
        Some((_, None)) => {}
        None => {
            if let Ok(Bootstrap {
                conn: Some(shared), ..
            }) = Bootstrap::from_env()
            {
                request_exit_on(&shared, code, why);
            }
        }
    }
    std::process::exit(code)
}

/// Flushes what this process holds for its standard streams: Rust's stdout
/// and stderr, and every C stdio output stream (`fflush(NULL)`), so that a
/// C client's last `printf` (a pipe to the launcher is fully buffered) is
/// written before the job ends, as the reference flushes at exit.
pub fn flush_output() {
    let _ = io::stdout().flush();
    let _ = io::stderr().flush();
    // SAFETY: fflush(NULL) flushes every open output stream of the C
    // library under its own locks; it reads no memory of ours.
    unsafe { libc::fflush(std::ptr::null_mut()) };
}

/// Reports a fatal error (a broken invariant of the job, such as an AM for
/// an unregistered handler) and ends the job with exit code 1, the other
/// ranks at once (as an abort ends the reference's job: they are not
/// waited for, see [`exit`]).
pub fn fatal(msg: &str) -> ! {
    let who = JOINED
        .get()
        .map(|(r, _)| format!(" on rank {r}"))
        .unwrap_or_default();
    eprintln!("gex: fatal error{who}: {msg}");
    exit_as(1, wire::EXIT_FATAL)
}

/// [`Bootstrap::request_exit`] over `shared`, with the reason `why`.
fn request_exit_on(shared: &Shared, code: i32, why: &str) {
    let Ok(_busy) = shared.begin(Kind::Exit, &wire::code_body(code, why)) else {
        return;
    };
    let deadline = Instant::now() + EXIT_ACK_TIMEOUT;
    while Instant::now() < deadline {
        match shared.lock().try_recv() {
            // The job is ending anyway (another rank's exit came first).
            Ok(Some((Kind::ExitAck | Kind::End, _))) | Err(_) => return,
            Ok(_) => std::thread::yield_now(),
        }
    }
}

/// Marks a collective in progress; clears the mark when dropped.
struct Busy<'a>(&'a Shared);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.lock().busy = false;
        self.0.idle.notify_all();
    }
}

/// Set once this process has started to exit through one of our paths or
/// the exit hook: `exit` must not run twice at once.
static EXITING: AtomicBool = AtomicBool::new(false);

impl Shared {
    /// Sends `Hello` on a new connection and wraps it.
    fn hello(stream: Stream, rank: Rank, key: Option<&str>, server: Server) -> Result<Arc<Shared>> {
        let mut stream = stream;
        let shake = |s: &mut Stream| -> io::Result<()> {
            s.set_nonblocking(false)?;
            s.set_read_timeout(Some(HANDSHAKE_WAIT))?;
            s.set_write_timeout(Some(HANDSHAKE_WAIT))?;
            wire::rank_handshake(
                &mut NoSigPipeRw(s),
                rank,
                std::process::id(),
                key,
                random_bytes(),
            )?;
            s.set_read_timeout(None)?;
            s.set_write_timeout(None)?;
            s.set_nonblocking(true)
        };
        // Over TCP, a connection the coordinator dropped while it waited
        // (too many strangers were waiting with it) is made again, until
        // the handshake's bound.
        let peer = match &stream {
            Stream::Tcp(s) => s.peer_addr().ok(),
            Stream::Unix(_) => None,
        };
        let deadline = Instant::now() + HANDSHAKE_WAIT;
        let mut pause = Duration::from_millis(10);
        loop {
            let e = match shake(&mut stream) {
                Ok(()) => break,
                Err(e) => e,
            };
            let again = matches!(
                e.kind(),
                io::ErrorKind::ConnectionAborted
                    | io::ErrorKind::ConnectionReset
                    | io::ErrorKind::UnexpectedEof
                    | io::ErrorKind::BrokenPipe
            );
            let Some(peer) = peer.filter(|_| again && Instant::now() + pause < deadline) else {
                return Err(Error::resource(format!(
                    "rank {rank} could not join the job's control plane ({}): {e}",
                    server.name()
                )));
            };
            // A bounded back-off before trying again, not a synchronisation.
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(250));
            if let Ok(s) = std::net::TcpStream::connect(peer).and_then(Stream::tcp) {
                stream = s;
            }
        }
        Ok(Arc::new(Shared {
            conn: Mutex::new(Conn {
                stream,
                pending: Vec::new(),
                busy: false,
            }),
            idle: Condvar::new(),
            server,
            rank,
        }))
    }

    fn lock(&self) -> MutexGuard<'_, Conn> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sends a request and marks the connection busy until the returned
    /// guard is dropped.
    fn begin(&self, kind: Kind, body: &[u8]) -> io::Result<Busy<'_>> {
        let mut c = self.lock();
        c.send(kind, body)?;
        c.busy = true;
        drop(c);
        Ok(Busy(self))
    }

    /// The process ends because the job ended (an `End` frame).
    fn on_end(&self, body: &[u8]) -> ! {
        let (code, reason) = wire::parse_code_body(body).unwrap_or((1, String::new()));
        let msg = (code != 0).then(|| format!("the job is ending: {reason}"));
        end_process(self.rank, code, msg)
    }

    /// Starts the thread that ends this process when the job ends while no
    /// collective is in progress (an `End` or `Abort` frame, or the server
    /// closing the connection).
    fn spawn_watcher(self: &Arc<Shared>) -> Result<()> {
        let me = self.clone();
        std::thread::Builder::new()
            .name("gex-ctrl-watch".into())
            .spawn(move || me.watch())
            .map(|_| ())
            .map_err(|e| Error::resource(format!("cannot start the control watcher: {e}")))
    }

    fn watch(&self) {
        let fd = self.lock().stream.as_raw_fd();
        loop {
            let mut c = self.lock();
            while c.busy {
                c = self.idle.wait(c).unwrap_or_else(|p| p.into_inner());
            }
            match c.try_recv() {
                Ok(None) => {}
                Ok(Some((Kind::End, body))) => {
                    drop(c);
                    self.on_end(&body)
                }
                Ok(Some((Kind::Abort, body))) => {
                    drop(c);
                    let msg = format!(
                        "{} ended the job: {}",
                        self.server.name(),
                        String::from_utf8_lossy(&body)
                    );
                    end_process(self.rank, 1, Some(msg))
                }
                // Not ours to answer (cannot happen outside a collective).
                Ok(Some(_)) => continue,
                Err(e) => {
                    drop(c);
                    let msg = format!("lost the connection to {}: {e}", self.server.name());
                    end_process(self.rank, 1, Some(msg))
                }
            }
            drop(c);
            let mut pfd = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd; the descriptor stays open for as
            // long as `self` (which owns the stream) lives.
            unsafe { libc::poll(&mut pfd, 1, -1) };
        }
    }
}

/// How long a rank waits for its job key on [`wire::ENV_KEY_FD`].
const KEY_READ_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest key line accepted.
const MAX_KEY_LINE: usize = 1024;

/// The job key `gex-run` handed this process: read once from the file
/// descriptor named by [`wire::ENV_KEY_FD`] (later calls return the same),
/// else [`wire::ENV_JOB_KEY`] if the user set it, else `None`.
pub fn launcher_key() -> Result<Option<String>> {
    static KEY: std::sync::OnceLock<std::result::Result<Option<String>, String>> =
        std::sync::OnceLock::new();
    KEY.get_or_init(|| match env_var(wire::ENV_KEY_FD) {
        Some(v) => {
            let fd =
                v.parse::<i32>().ok().filter(|&fd| fd >= 0).ok_or_else(|| {
                    format!("{}={v:?} is not a file descriptor", wire::ENV_KEY_FD)
                })?;
            read_key_line(fd, KEY_READ_TIMEOUT).map(Some).map_err(|e| {
                format!(
                    "cannot read the job key from {}={fd}: {e}",
                    wire::ENV_KEY_FD
                )
            })
        }
        None => Ok(env_var(wire::ENV_JOB_KEY)),
    })
    .clone()
    .map_err(Error::not_init)
}

/// Reads one line (without its newline) from `fd` byte by byte, so nothing
/// after it is consumed, waiting at most `timeout` in all; closes `fd`
/// unless it is standard input.
fn read_key_line(fd: i32, timeout: Duration) -> io::Result<String> {
    if fd != 0 {
        // Only ever a pipe from the launcher: a descriptor number inherited
        // by mistake (a child of a rank, whose key pipe is long closed) must
        // not make this read, and close, an unrelated file.
        // SAFETY: all-zero is a valid `stat`; fstat writes into it and only
        // reads the descriptor number.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above; `st` is a live, writable stat buffer.
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return Err(io::Error::last_os_error());
        }
        if st.st_mode & libc::S_IFMT != libc::S_IFIFO {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a pipe from the launcher",
            ));
        }
    }
    let deadline = Instant::now() + timeout;
    let mut line = Vec::new();
    let result = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd on the stack; poll only reads the
        // descriptor number.
        let r = unsafe { libc::poll(&mut pfd, 1, left.as_millis().min(i32::MAX as u128) as i32) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            break Err(e);
        }
        if r == 0 {
            break Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no key line within {} s", timeout.as_secs()),
            ));
        }
        let mut b = 0u8;
        // SAFETY: reads at most one byte into a live, writable u8.
        let n = unsafe { libc::read(fd, (&mut b as *mut u8).cast(), 1) };
        match n {
            1 if b == b'\n' => break Ok(()),
            1 if line.len() >= MAX_KEY_LINE => {
                break Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "key line too long",
                ))
            }
            1 => line.push(b),
            0 => break Ok(()),
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                break Err(e);
            }
        }
    };
    if fd != 0 {
        // SAFETY: the launcher gave this descriptor to this process for the
        // key alone; nothing else in the process uses it.
        unsafe { libc::close(fd) };
    }
    result?;
    let key = String::from_utf8(line)
        .ok()
        .filter(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_graphic()))
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no key, or not a key"))?;
    Ok(key)
}

/// Ends this process with `code` after printing `msg`, unless another
/// thread is already exiting it (then this thread just stops).
fn end_process(rank: Rank, code: i32, msg: Option<String>) -> ! {
    use std::io::Write;
    if let Some(m) = msg {
        // Not eprintln: stderr may be a closed pipe (the launcher is gone),
        // and this must not panic.
        let _ = writeln!(std::io::stderr(), "gex: rank {rank}: {m}");
    }
    flush_output();
    if EXITING.swap(true, Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
    std::process::exit(code)
}

impl Conn {
    fn send(&mut self, kind: Kind, body: &[u8]) -> io::Result<()> {
        // The socket is non-blocking for reads; writes are small, so switch
        // to blocking for the write to avoid partial-frame bookkeeping.
        self.stream.set_nonblocking(false)?;
        let r = wire::write_frame(&mut stream::NoSigPipe(&self.stream), kind, body);
        self.stream.set_nonblocking(true)?;
        r
    }

    /// Returns a whole frame if one has arrived, without blocking.
    fn try_recv(&mut self) -> io::Result<Option<(Kind, Vec<u8>)>> {
        let mut buf = [0u8; 4096];
        loop {
            if self.pending.len() >= 4 {
                let len = u32::from_le_bytes(self.pending[0..4].try_into().unwrap()) as usize;
                if len == 0 || len > wire::MAX_FRAME {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "bad control frame length",
                    ));
                }
                if self.pending.len() >= 4 + len {
                    let frame: Vec<u8> = self.pending.drain(..4 + len).collect();
                    let (kind, body) = wire::read_frame(&mut &frame[..])?;
                    return Ok(Some((kind, body)));
                }
            }
            match self.stream.read(&mut buf) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the control connection was closed",
                    ))
                }
                Ok(n) => self.pending.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod key_tests;

#[cfg(test)]
mod hosts_tests {
    use super::{hosts_from, vars::Lookup, Bootstrap};

    #[test]
    fn the_exit_timeout_comes_from_gex_exit_timeout() {
        use super::{exit_timeout, wire::EXIT_GRACE};
        use std::time::Duration;
        assert_eq!(exit_timeout(Lookup::pairs(&[])).unwrap(), EXIT_GRACE);
        let set = |v| exit_timeout(Lookup::pairs(&[("GEX_EXIT_TIMEOUT", v)]));
        assert_eq!(set("0.5").unwrap(), Duration::from_millis(500));
        assert_eq!(set("0").unwrap(), Duration::ZERO);
        assert_eq!(set(" 30 ").unwrap(), Duration::from_secs(30));
        for bad in ["-1", "soon", "inf", "1e10"] {
            let e = set(bad).unwrap_err();
            assert!(
                e.message()
                    .contains(&format!("GEX_EXIT_TIMEOUT={bad:?}: expected seconds")),
                "{e}"
            );
        }
    }

    #[test]
    fn the_host_count_comes_from_gex_hosts_or_is_one_for_a_singleton() {
        assert_eq!(Bootstrap::singleton().hosts(), Some(1));
        assert_eq!(hosts_from(Lookup::pairs(&[])).unwrap(), None);
        assert_eq!(
            hosts_from(Lookup::pairs(&[("GEX_HOSTS", "3")])).unwrap(),
            Some(3)
        );
        for bad in ["0", "two", "-1"] {
            let e = hosts_from(Lookup::pairs(&[("GEX_HOSTS", bad)])).unwrap_err();
            assert!(e.message().contains(&format!("GEX_HOSTS={bad:?}")), "{e}");
        }
    }
}
