//! Jobs started by another launcher (Slurm's `srun`, Open MPI's or MPICH's
//! `mpirun`): the ranks meet at a rendezvous.
//!
//! Each process takes its rank and the job size from its launcher's
//! environment ([`detect`]) and `GEX_RENDEZVOUS=IP:PORT` from the user
//! (for example `GEX_RENDEZVOUS=$(hostname -i):7777 srun -n 8 prog`: the
//! address must be one of rank 0's host). Rank 0 listens there and serves
//! the control plane `gex-run` would otherwise serve (exchange, barrier,
//! exit; [`super::wire`]) from a thread of its own; every rank, rank 0
//! included, connects to it over TCP. Other ranks keep trying to connect
//! for `GEX_RENDEZVOUS_TIMEOUT` seconds (default 60), then fail with a
//! message naming the address.
//!
//! Where a PMIx server started the job (Open MPI's `mpirun`, `srun
//! --mpi=pmix`) and `GEX_RENDEZVOUS` is not set, rank 0 listens on a free
//! port and publishes the address and the job key through PMIx instead
//! (module `pmix`); the ranks then join as if `GEX_RENDEZVOUS` and
//! `GEX_JOB_KEY` were set. PMIx also gives the rank and size when no
//! launcher's variables do.
//!
//! Joining is collective: it ends with a first exchange in which every
//! rank checks that all agree on the job size, and rank 0 hands out
//!
//! * the job identifier (prefix of shared-memory objects): `GEX_JOB_ID` if
//!   rank 0 has it, else `slurm<SLURM_JOB_ID>.<SLURM_STEP_ID>` under Slurm,
//!   else one derived from the rendezvous address and rank 0's process;
//! * the job key, from which network conduits derive the key that
//!   authenticates their datagrams: `GEX_JOB_KEY` if rank 0 has it (an
//!   explicit opt-in), else 64 random hex digits. Every rank's
//!   [`super::Bootstrap::job_key`] carries it; it is not put in any
//!   environment. Joining sets `GEX_HOSTS` (the number of distinct hosts,
//!   which the udp conduit uses to choose its address and datagram size)
//!   when it is not set; `std::env::set_var` is only sound while no other
//!   thread reads the environment: call [`super::Bootstrap::from_env`]
//!   (client init) before starting threads that do.
//!
//! The key travels to the ranks in that first exchange, over the
//! rendezvous's TCP connections, in clear. If rank 0 has `GEX_JOB_KEY`, the
//! rendezvous only accepts connections that present it; otherwise any
//! process that reaches the port first and speaks the protocol could pose
//! as a rank (and learn the key), so set the key (for example
//! `export GEX_JOB_KEY=$(openssl rand -hex 32)`) on networks you do not
//! trust.
//!
//! # Exit semantics
//!
//! There is no launcher watching the processes, so each rank tells the
//! coordinator how it ends: [`crate::exit`] sends `Exit`, and an exit hook
//! sends `Bye` with the exit code of any other exit (returning from `main`,
//! `std::process::exit`, a panic). The coordinator then applies `gex-run`'s
//! rules and ends the other ranks with an `End` frame, on which a watcher
//! thread in each rank exits its process:
//!
//! * `gex::exit(code)` on any rank: every rank exits with `code`;
//! * a rank that exits non-zero: the others exit with its code;
//! * a rank whose connection closes without `Exit` or `Bye` (killed by a
//!   signal): the others exit with code 1;
//! * a rank that exits 0 while others wait in a start-up collective it did
//!   not join: the waiters' collective fails, the rest exit with code 1;
//! * a rank that exits 0 while others still run: if they still run after
//!   [`wire::EXIT_GRACE`] (2 s), they exit with code 0 and rank 0 prints a
//!   message naming the rank (as under `gex-run`: as in GASNet, a
//!   process's exit ends the job with the first exit's code).
//!
//! Rank 0's process hosts the coordinator, so its exit hook waits until
//! every other rank has gone (at most 10 s once the job is ending; without
//! a bound while the others still run normally). If rank 0 dies without
//! running its exit hook (a signal), the others see the connection close
//! and exit with code 1.
//!
//! Limits: a rank that already returned from `main` keeps its own exit
//! code; a rank stuck in a data-path wait for a dead peer is only ended
//! through the control connection's watcher, which needs its process to
//! still be scheduled (it is a separate thread, so it normally is); on C
//! libraries without `on_exit` (musl) the exit hook cannot see the code and
//! reports 0. Shared memory needs no cleanup after a crash: it has no
//! name (`crate::shm`), so the kernel frees it with its last process.

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::sync::{Arc, Condvar, Mutex, OnceLock, TryLockError};
use std::time::{Duration, Instant};

use gex_types::{Error, Rank, Result};

use super::stream::{send_all_nosignal, Stream};
use super::wire::{self, Kind};
use super::{env_var, Bootstrap, Server, Shared, EXITING};

/// How long ranks told to end (and rank 0's exit) wait for the others.
const GRACE: Duration = Duration::from_secs(10);
/// Default of `GEX_RENDEZVOUS_TIMEOUT`.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(60);

/// A rank of a job started by another launcher.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExternalLauncher {
    /// This process's rank.
    pub rank: Rank,
    /// The number of ranks.
    pub size: Rank,
    /// Which launcher's variables gave them (`Slurm`, `Open MPI`, `MPICH`).
    pub launcher: &'static str,
}

/// The launchers recognised, and their rank and size variables.
const LAUNCHERS: [(&str, &str, &str); 3] = [
    ("Slurm", "SLURM_PROCID", "SLURM_NTASKS"),
    ("Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
    ("MPICH", "PMI_RANK", "PMI_SIZE"),
];

/// The rank and size another launcher gave this process, if one did (both
/// of its variables are set). An error if they are malformed.
pub fn detect() -> Result<Option<ExternalLauncher>> {
    for (launcher, rank_var, size_var) in LAUNCHERS {
        let (Some(rank), Some(size)) = (env_var(rank_var), env_var(size_var)) else {
            continue;
        };
        let parse = |name: &str, v: &str| {
            v.trim()
                .parse::<Rank>()
                .map_err(|_| Error::not_init(format!("{launcher}: {name}={v:?} is not a number")))
        };
        let (rank, size) = (parse(rank_var, &rank)?, parse(size_var, &size)?);
        if size == 0 || rank >= size {
            return Err(Error::not_init(format!(
                "{launcher}: {rank_var}={rank} is not a rank of a job of {size_var}={size}"
            )));
        }
        return Ok(Some(ExternalLauncher {
            rank,
            size,
            launcher,
        }));
    }
    if super::pmix::started_by_pmix() {
        // A PMIx server without a launcher's variables (PRRTE's prterun):
        // PMIx itself gives the rank and size.
        let job = super::pmix::job().map_err(|e| {
            Error::not_init(format!(
                "a PMIx server started this process (PMIX_RANK is set), but: {e}"
            ))
        })?;
        return Ok(Some(ExternalLauncher {
            rank: job.rank,
            size: job.size,
            launcher: "PMIx",
        }));
    }
    Ok(None)
}

/// What a process that joined keeps, so that a second `from_env` (as
/// `gex::exit` does before init) reuses the connection.
struct Joined {
    rank: Rank,
    size: Rank,
    job_id: String,
    job_key: String,
    shared: Arc<Shared>,
}

static JOINED: Mutex<Option<Joined>> = Mutex::new(None);

/// What the exit hook needs.
struct Hook {
    shared: Arc<Shared>,
    /// Rank 0's coordinator, whose end the hook waits for.
    coord: Option<Arc<Status>>,
}

static HOOK: OnceLock<Hook> = OnceLock::new();

/// Joins the job at `GEX_RENDEZVOUS` (see the module docs).
pub(super) fn join(ext: &ExternalLauncher) -> Result<Bootstrap> {
    let mut joined = JOINED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(j) = &*joined {
        return Ok(Bootstrap {
            rank: j.rank,
            size: j.size,
            job_id: j.job_id.clone(),
            job_key: Some(j.job_key.clone()),
            conn: Some(j.shared.clone()),
        });
    }
    let (rank, size) = (ext.rank, ext.size);
    let timeout = match env_var(wire::ENV_RENDEZVOUS_TIMEOUT) {
        None => CONNECT_TIMEOUT,
        Some(t) => t
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| {
                Error::bad_arg(format!(
                    "{}={t:?}: expected seconds",
                    wire::ENV_RENDEZVOUS_TIMEOUT
                ))
            })?,
    };
    let (rdv, key_env, bound) = rendezvous_point(ext, timeout)?;
    let addr = resolve(&rdv)?;

    let (stream, coord) = if rank == 0 {
        let listener = match bound {
            Some(l) => l,
            None => listen(addr)
                .map_err(|e| Error::resource(format!("rank 0 cannot listen at {rdv}: {e}")))?,
        };
        let local = listener.local_addr().map_err(super::io_err)?;
        let status = Coordinator::start(listener, size as usize, key_env.clone())?;
        let mut to = local;
        if to.ip().is_unspecified() {
            to.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
        }
        let s = TcpStream::connect(to)
            .and_then(Stream::tcp)
            .map_err(|e| Error::resource(format!("rank 0 cannot reach its own rendezvous: {e}")))?;
        (s, Some(status))
    } else {
        (connect(addr, &rdv, rank, timeout)?, None)
    };
    let shared = Shared::hello(stream, rank, key_env.as_deref(), Server::Rendezvous)?;
    install_exit_hook(&shared, coord);
    shared.spawn_watcher()?;

    // The first exchange: everyone checks the size; rank 0 hands out the
    // job identifier and key.
    let (id, key) = if rank == 0 {
        (
            job_id(&rdv),
            key_env.clone().unwrap_or_else(super::new_job_key),
        )
    } else {
        (String::new(), String::new())
    };
    let mine = format!("gex-rendezvous-1\n{size}\n{}\n{id}\n{key}", host_name());
    let first = Bootstrap {
        rank,
        size,
        job_id: String::new(),
        job_key: None,
        conn: Some(shared.clone()),
    };
    let all = first.exchange(mine.as_bytes(), &mut || {})?;
    let mut hosts: Vec<String> = Vec::new();
    let mut zero: (String, String) = Default::default();
    for (r, part) in all.iter().enumerate() {
        let text = String::from_utf8_lossy(part);
        let fields: Vec<&str> = text.split('\n').collect();
        let [magic, their_size, host, id, key] = fields[..] else {
            return Err(Error::resource(format!(
                "rendezvous: rank {r} sent a malformed greeting (another program?)"
            )));
        };
        if magic != "gex-rendezvous-1" {
            return Err(Error::resource(format!(
                "rendezvous: rank {r} speaks another protocol version ({magic:?})"
            )));
        }
        if their_size != size.to_string() {
            return Err(Error::not_init(format!(
                "rendezvous: rank {r} was started in a job of {their_size} ranks, rank {rank} \
                 in one of {size}"
            )));
        }
        if !hosts.iter().any(|h| h == host) {
            hosts.push(host.to_string());
        }
        if r == 0 {
            zero = (id.to_string(), key.to_string());
        }
    }
    let (job_id, job_key) = zero;
    if job_id.is_empty() || job_key.is_empty() {
        return Err(Error::resource(
            "rendezvous: rank 0 sent no job identifier or key",
        ));
    }
    // The udp conduit reads this from the environment (see the module docs
    // on why this is sound at this point). The job key is not put there:
    // the Bootstrap carries it.
    if env_var(wire::ENV_HOSTS).is_none() {
        std::env::set_var(wire::ENV_HOSTS, hosts.len().to_string());
    }
    *joined = Some(Joined {
        rank,
        size,
        job_id: job_id.clone(),
        job_key: job_key.clone(),
        shared: shared.clone(),
    });
    Ok(Bootstrap {
        rank,
        size,
        job_id,
        job_key: Some(job_key),
        conn: Some(shared),
    })
}

/// Where the ranks meet, and the job key the rendezvous requires:
/// `GEX_RENDEZVOUS` and `GEX_JOB_KEY` if set, else what rank 0 published
/// through PMIx (with rank 0's listener, already bound; module `pmix`).
fn rendezvous_point(
    ext: &ExternalLauncher,
    timeout: Duration,
) -> Result<(String, Option<String>, Option<TcpListener>)> {
    let key_env = env_var(wire::ENV_JOB_KEY);
    if let Some(rdv) = env_var(wire::ENV_RENDEZVOUS) {
        super::pmix::close();
        return Ok((rdv, key_env, None));
    }
    let (rank, size) = (ext.rank, ext.size);
    let missing = |why: String| {
        Error::not_init(format!(
            "{} started this process as rank {rank} of {size}, but {} (the IP:PORT where the \
             ranks meet; rank 0 listens there) is not set, and PMIx cannot stand in for it: {why}",
            ext.launcher,
            wire::ENV_RENDEZVOUS
        ))
    };
    if !super::pmix::started_by_pmix() {
        return Err(missing(
            "no PMIx server started this process (no PMIX_NAMESPACE, PMIX_RANK, PMIX_SERVER_URI*)"
                .into(),
        ));
    }
    let m = super::pmix::meet(rank, size, key_env, timeout).map_err(missing)?;
    Ok((m.rdv, Some(m.key), m.listener))
}

fn resolve(rdv: &str) -> Result<SocketAddr> {
    let bad = |why: String| {
        Error::bad_arg(format!(
            "{}={rdv:?}: expected IP:PORT ({why})",
            wire::ENV_RENDEZVOUS
        ))
    };
    let mut addrs = rdv.to_socket_addrs().map_err(|e| bad(e.to_string()))?;
    let addr = addrs.next().ok_or_else(|| bad("no address".into()))?;
    if addr.port() == 0 {
        return Err(bad("port 0".into()));
    }
    Ok(addr)
}

/// Binds the rendezvous; if the address is not one of this host's (it may
/// be a name for the host that resolves elsewhere), the port on every
/// interface.
fn listen(addr: SocketAddr) -> io::Result<TcpListener> {
    match TcpListener::bind(addr) {
        Err(e) if e.kind() == io::ErrorKind::AddrNotAvailable => {
            let any: SocketAddr = match addr {
                SocketAddr::V4(_) => (std::net::Ipv4Addr::UNSPECIFIED, addr.port()).into(),
                SocketAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, addr.port()).into(),
            };
            TcpListener::bind(any)
        }
        r => r,
    }
}

/// Connects to the rendezvous, retrying until `timeout` has passed: rank 0
/// may not listen yet.
fn connect(addr: SocketAddr, rdv: &str, rank: Rank, timeout: Duration) -> Result<Stream> {
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(5);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let attempt = TcpStream::connect_timeout(
            &addr,
            left.clamp(Duration::from_millis(100), Duration::from_secs(5)),
        );
        match attempt.and_then(Stream::tcp) {
            Ok(s) => return Ok(s),
            Err(e) if Instant::now() + pause >= deadline => {
                return Err(Error::resource(format!(
                    "rank {rank} could not reach the rendezvous at {rdv} (rank 0 listens there) \
                     within {:.0} s ({}): {e}",
                    timeout.as_secs_f64(),
                    wire::ENV_RENDEZVOUS_TIMEOUT
                )))
            }
            Err(_) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(250));
            }
        }
    }
}

/// The job identifier rank 0 hands out.
fn job_id(rdv: &str) -> String {
    if let Some(id) = env_var(wire::ENV_JOB_ID) {
        return id;
    }
    if let Some(job) = env_var("SLURM_JOB_ID") {
        let step = env_var("SLURM_STEP_ID").unwrap_or_else(|| "0".into());
        let clean = |s: &str| -> String {
            s.chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        };
        return format!("slurm{}.{}", clean(&job), clean(&step));
    }
    // A hash of the address, rank 0's process and a random value: unique
    // among the jobs that share a host.
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write(rdv.as_bytes());
    h.write_u32(std::process::id());
    h.write(super::random_hex16().as_bytes());
    format!("r{:016x}", h.finish())
}

/// This host's name as network conduits group ranks: `GEX_HOST` if set,
/// else the hostname.
fn host_name() -> String {
    if let Some(h) = env_var(wire::ENV_HOST) {
        return h.replace('\n', " ");
    }
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "?".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).replace('\n', " ")
}

// The exit hook.

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" {
    /// glibc's `on_exit`: like `atexit`, but the function gets the code.
    fn on_exit(
        func: extern "C" fn(libc::c_int, *mut libc::c_void),
        arg: *mut libc::c_void,
    ) -> libc::c_int;
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" fn exit_hook(code: libc::c_int, _arg: *mut libc::c_void) {
    run_exit_hook(code);
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
extern "C" fn exit_hook() {
    run_exit_hook(0);
}

fn install_exit_hook(shared: &Arc<Shared>, coord: Option<Arc<Status>>) {
    let hook = Hook {
        shared: shared.clone(),
        coord,
    };
    if HOOK.set(hook).is_err() {
        return;
    }
    // SAFETY: registers a function that lives for the whole program; it
    // only touches statics and never unwinds (it does not panic).
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    unsafe {
        on_exit(exit_hook, std::ptr::null_mut());
    }
    // SAFETY: as above.
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    unsafe {
        libc::atexit(exit_hook);
    }
}

/// Tells the coordinator this process exits with `code`; on rank 0, waits
/// for the other ranks to go (the coordinator lives in this process).
fn run_exit_hook(code: i32) {
    EXITING.store(true, std::sync::atomic::Ordering::SeqCst);
    let Some(hook) = HOOK.get() else { return };
    // Another thread may hold the connection for a moment (it never holds
    // it while blocking); do not wait for it forever.
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let guard = match hook.shared.conn.try_lock() {
            Ok(g) => Some(g),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        };
        if let Some(mut c) = guard {
            let _ = c.send(Kind::Bye, &wire::code_body(code, ""));
            break;
        }
        if Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    if let Some(status) = &hook.coord {
        status.linger();
    }
}

// The coordinator (rank 0).

/// What the coordinator tells rank 0's exit hook.
struct Status {
    inner: Mutex<StatusInner>,
    changed: Condvar,
}

#[derive(Default)]
struct StatusInner {
    /// Every rank but 0 has connected and its connection has closed.
    others_gone: bool,
    /// When the job started to end.
    ending_since: Option<Instant>,
}

impl Status {
    fn update(&self, f: impl FnOnce(&mut StatusInner)) {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut g);
        self.changed.notify_all();
    }

    /// Waits until the other ranks are gone, or the grace after the job
    /// started to end has passed (the coordinator disconnects them then).
    fn linger(&self) {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if g.others_gone {
                return;
            }
            g = match g.ending_since {
                Some(t) => {
                    let left = (t + GRACE + Duration::from_secs(1))
                        .saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return;
                    }
                    self.changed
                        .wait_timeout(g, left)
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
                None => self.changed.wait(g).unwrap_or_else(|p| p.into_inner()),
            };
        }
    }
}

/// Why a rank left the job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Left {
    /// It sent `Exit` (gex::exit).
    Exit,
    /// It sent `Bye` with this code (any other exit).
    Bye(i32),
    /// Its connection closed without either.
    Lost,
}

#[derive(Default)]
struct RankState {
    peer: Option<usize>,
    /// `Exchange` frames sent: the next one joins that round.
    contributed: usize,
    left: Option<Left>,
    closed: bool,
}

struct Peer {
    stream: TcpStream,
    addr: String,
    inbuf: Vec<u8>,
    out: Vec<u8>,
    rank: Option<usize>,
}

struct Coordinator {
    listener: TcpListener,
    key: Option<Vec<u8>>,
    peers: Vec<Option<Peer>>,
    ranks: Vec<RankState>,
    rounds: BTreeMap<usize, Vec<Option<Vec<u8>>>>,
    completed: usize,
    ending: Option<(Instant, String)>,
    /// The grace after the job started to end has passed and the remaining
    /// ranks were disconnected.
    grace_over: bool,
    /// The first rank that exited 0 while others ran, and when the job ends
    /// unless they have all left by then ([`wire::EXIT_GRACE`]).
    early_exit: Option<(usize, Instant)>,
    status: Arc<Status>,
}

impl Coordinator {
    /// Starts serving the control plane on `listener` from a thread.
    fn start(listener: TcpListener, size: usize, key: Option<String>) -> Result<Arc<Status>> {
        listener.set_nonblocking(true).map_err(super::io_err)?;
        let status = Arc::new(Status {
            inner: Mutex::new(StatusInner::default()),
            changed: Condvar::new(),
        });
        let mut co = Coordinator {
            listener,
            key: key.map(String::into_bytes),
            peers: Vec::new(),
            ranks: (0..size).map(|_| RankState::default()).collect(),
            rounds: BTreeMap::new(),
            completed: 0,
            ending: None,
            grace_over: false,
            early_exit: None,
            status: status.clone(),
        };
        std::thread::Builder::new()
            .name("gex-rendezvous".into())
            .spawn(move || co.run())
            .map_err(|e| Error::resource(format!("cannot start the rendezvous thread: {e}")))?;
        Ok(status)
    }

    fn run(&mut self) {
        loop {
            let mut fds = vec![libc::pollfd {
                fd: self.listener.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            }];
            let mut which = Vec::new();
            for (i, p) in self.peers.iter().enumerate() {
                if let Some(p) = p {
                    let mut events = libc::POLLIN;
                    if !p.out.is_empty() {
                        events |= libc::POLLOUT;
                    }
                    fds.push(libc::pollfd {
                        fd: p.stream.as_raw_fd(),
                        events,
                        revents: 0,
                    });
                    which.push(i);
                }
            }
            let deadline = match (&self.ending, self.early_exit) {
                (Some((t, _)), _) if !self.grace_over => Some(*t + GRACE),
                (None, Some((_, t))) => Some(t),
                _ => None,
            };
            let timeout_ms = match deadline {
                Some(t) => {
                    let left = t.saturating_duration_since(Instant::now());
                    // Rounded up, so that the wake-up is not early.
                    (left.as_millis() + 1).min(60_000) as libc::c_int
                }
                None => -1,
            };
            // SAFETY: `fds` is a valid array of fds.len() pollfds whose
            // descriptors are owned by `self` for the whole call.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    // Cannot happen with valid arguments; do not spin.
                    std::thread::sleep(Duration::from_millis(10));
                }
                continue;
            }
            if fds[0].revents != 0 {
                self.accept();
            }
            for (k, &i) in which.iter().enumerate() {
                let rev = fds[k + 1].revents;
                if rev & libc::POLLOUT != 0 {
                    self.flush(i);
                }
                if rev & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                    self.read(i);
                }
            }
            if let (None, Some((first, t))) = (&self.ending, self.early_exit) {
                if Instant::now() >= t {
                    self.on_early_exit(first);
                }
            }
            if let Some((t, _)) = &self.ending {
                if !self.grace_over && t.elapsed() >= GRACE {
                    self.grace_over = true;
                    self.disconnect_all_but_rank0();
                }
            }
            self.publish();
        }
    }

    fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((stream, addr)) => {
                    if stream.set_nonblocking(true).is_err() {
                        continue;
                    }
                    let _ = stream.set_nodelay(true);
                    let peer = Peer {
                        stream,
                        addr: addr.to_string(),
                        inbuf: Vec::new(),
                        out: Vec::new(),
                        rank: None,
                    };
                    match self.peers.iter().position(Option::is_none) {
                        Some(i) => self.peers[i] = Some(peer),
                        None => self.peers.push(Some(peer)),
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // WouldBlock: no more for now; other errors (a connection
                // reset before it was accepted, no descriptors left) are
                // the client's to notice.
                Err(_) => return,
            }
        }
    }

    /// Reads what peer `i` sent, handles its complete frames, and closes it
    /// on end of file or error.
    fn read(&mut self, i: usize) {
        let mut eof = false;
        {
            let Some(p) = self.peers[i].as_mut() else {
                return;
            };
            let mut buf = [0u8; 8192];
            loop {
                match p.stream.read(&mut buf) {
                    Ok(0) => {
                        eof = true;
                        break;
                    }
                    Ok(n) => p.inbuf.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(_) => {
                        eof = true;
                        break;
                    }
                }
            }
        }
        loop {
            let Some(p) = self.peers[i].as_mut() else {
                return;
            };
            if p.inbuf.len() < 4 {
                break;
            }
            let len = u32::from_le_bytes([p.inbuf[0], p.inbuf[1], p.inbuf[2], p.inbuf[3]]) as usize;
            if len == 0 || len > wire::MAX_FRAME {
                return self.bad_frame(i, format!("bad control frame length {len}"));
            }
            if p.inbuf.len() < 4 + len {
                break;
            }
            let frame: Vec<u8> = p.inbuf.drain(..4 + len).collect();
            match wire::read_frame(&mut &frame[..]) {
                Ok((kind, body)) => self.on_frame(i, kind, body),
                Err(e) => return self.bad_frame(i, e.to_string()),
            }
        }
        if eof {
            self.close(i);
        }
    }

    fn bad_frame(&mut self, i: usize, e: String) {
        let Some(p) = &self.peers[i] else { return };
        match p.rank {
            Some(r) => self.fatal(format!("malformed control frame from rank {r}: {e}")),
            None => warn(&format!(
                "dropped a connection from {}: malformed control frame: {e}",
                p.addr
            )),
        }
        self.close(i);
    }

    /// Writes as much of peer `i`'s queued output as the socket takes.
    fn flush(&mut self, i: usize) {
        let Some(p) = self.peers[i].as_mut() else {
            return;
        };
        while !p.out.is_empty() {
            // SAFETY: `p.out` is valid for reads of its length; the
            // descriptor belongs to `p.stream`.
            let n = unsafe {
                libc::send(
                    p.stream.as_raw_fd(),
                    p.out.as_ptr().cast(),
                    p.out.len(),
                    libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
                )
            };
            if n > 0 {
                p.out.drain(..n as usize);
                continue;
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock => return,
                // The peer is gone; reading will tell.
                _ => {
                    p.out.clear();
                    return;
                }
            }
        }
    }

    fn send(&mut self, rank: usize, kind: Kind, body: &[u8]) {
        let Some(i) = self.ranks[rank].peer else {
            return;
        };
        let Some(p) = self.peers[i].as_mut() else {
            return;
        };
        let mut frame = Vec::with_capacity(5 + body.len());
        if wire::write_frame(&mut frame, kind, body).is_ok() {
            p.out.extend_from_slice(&frame);
        }
        self.flush(i);
    }

    /// Closes connection `i`; a rank whose connection closes without
    /// having said how it ends has died.
    fn close(&mut self, i: usize) {
        let Some(p) = self.peers[i].take() else {
            return;
        };
        if let Some(out) = (!p.out.is_empty()).then_some(&p.out) {
            // Last chance for a queued End or Abort (best effort).
            let _ = p.stream.set_nonblocking(false);
            let _ = p.stream.set_write_timeout(Some(Duration::from_millis(100)));
            let _ = send_all_nosignal(p.stream.as_raw_fd(), out);
        }
        let Some(r) = p.rank else { return };
        self.ranks[r].closed = true;
        self.ranks[r].peer = None;
        if self.ranks[r].left.is_none() {
            self.ranks[r].left = Some(Left::Lost);
            self.end(
                1,
                format!(
                    "rank {r} lost its connection to the rendezvous without exiting (killed by a \
                     signal?)"
                ),
                &[],
            );
        } else {
            self.check_stuck(Some(r));
        }
    }

    fn disconnect_all_but_rank0(&mut self) {
        for i in 0..self.peers.len() {
            if self.peers[i].as_ref().is_some_and(|p| p.rank != Some(0)) {
                self.close(i);
            }
        }
    }

    fn publish(&self) {
        let others_gone = self.ranks.iter().skip(1).all(|r| r.closed);
        let ending_since = self.ending.as_ref().map(|(t, _)| *t);
        let st = &self.status;
        let g = st.inner.lock().unwrap_or_else(|p| p.into_inner());
        let changed = g.others_gone != others_gone || g.ending_since != ending_since;
        drop(g);
        if changed {
            st.update(|s| {
                s.others_gone = others_gone;
                s.ending_since = ending_since;
            });
        }
    }

    /// The exit grace after rank `first` exited 0 has passed: ranks that
    /// still run end with its code, 0, as `gex-run` ends them.
    fn on_early_exit(&mut self, first: usize) {
        let running: Vec<usize> = (0..self.ranks.len())
            .filter(|&r| self.ranks[r].left.is_none())
            .collect();
        if running.is_empty() {
            return;
        }
        let msg = format!(
            "rank {first} exited with code 0 while ranks {running:?} still ran {} ms later; a \
             rank's exit ends the job",
            wire::EXIT_GRACE.as_millis()
        );
        warn(&msg);
        self.end(0, msg, &[]);
    }

    fn fatal(&mut self, msg: String) {
        if self.ending.is_none() {
            warn(&msg);
        }
        self.end(1, msg, &[]);
    }

    /// Ends the job (once): every connected rank except those in `spare`
    /// and those that already left gets `End` with `code`.
    fn end(&mut self, code: i32, reason: String, spare: &[usize]) {
        if self.ending.is_some() {
            return;
        }
        let body = wire::code_body(code, &reason);
        self.ending = Some((Instant::now(), reason));
        for r in 0..self.ranks.len() {
            if !spare.contains(&r) && self.ranks[r].left.is_none() {
                self.send(r, Kind::End, &body);
            }
        }
    }

    fn on_frame(&mut self, i: usize, kind: Kind, body: Vec<u8>) {
        let Some(p) = &self.peers[i] else { return };
        let Some(r) = p.rank else {
            if kind == Kind::Hello {
                return self.on_hello(i, &body);
            }
            let addr = p.addr.clone();
            warn(&format!(
                "dropped a connection from {addr}: its first frame was {kind:?}, not Hello"
            ));
            return self.close(i);
        };
        match kind {
            Kind::Exchange if self.ending.is_some() => {
                let why = format!(
                    "the job is ending: {}",
                    self.ending.as_ref().map_or("", |(_, s)| s.as_str())
                );
                self.send(r, Kind::Abort, why.as_bytes());
            }
            Kind::Exchange => self.on_exchange(r, body),
            Kind::Exit => {
                let code = wire::parse_code_body(&body).map_or(1, |(c, _)| c);
                self.send(r, Kind::ExitAck, &[]);
                if self.ranks[r].left.is_none() {
                    self.ranks[r].left = Some(Left::Exit);
                }
                self.end(code, format!("rank {r} called exit with code {code}"), &[r]);
            }
            Kind::Bye => {
                let code = wire::parse_code_body(&body).map_or(1, |(c, _)| c);
                if self.ranks[r].left.is_some() {
                    return;
                }
                self.ranks[r].left = Some(Left::Bye(code));
                if code != 0 {
                    self.end(code, format!("rank {r} exited with code {code}"), &[r]);
                } else {
                    self.check_stuck(Some(r));
                    let running = self.ranks.iter().any(|s| s.left.is_none());
                    if self.ending.is_none() && self.early_exit.is_none() && running {
                        self.early_exit = Some((r, Instant::now() + wire::EXIT_GRACE));
                    }
                }
            }
            Kind::Hello => self.fatal(format!("rank {r} sent Hello twice")),
            other => self.fatal(format!(
                "rank {r} sent a {other:?} frame, which only the coordinator sends"
            )),
        }
    }

    fn on_hello(&mut self, i: usize, body: &[u8]) {
        let Some(addr) = self.peers[i].as_ref().map(|p| p.addr.clone()) else {
            return;
        };
        let Some(hello) = wire::parse_hello(body) else {
            warn(&format!(
                "dropped a connection from {addr}: malformed Hello"
            ));
            return self.close(i);
        };
        if let Some(key) = &self.key {
            if !hello
                .key
                .as_deref()
                .is_some_and(|k| wire::keys_match(k, key))
            {
                warn(&format!(
                    "rejected a connection from {addr} (as rank {}): wrong or missing job key",
                    hello.rank
                ));
                // Tell it why (a rank started without GEX_JOB_KEY would
                // otherwise only see its connection close).
                let why = format!(
                    "the rendezvous rejected this process: rank 0 has {} set, and this \
                     process presented another key or none",
                    wire::ENV_JOB_KEY
                );
                if let Some(p) = self.peers[i].as_mut() {
                    let _ = wire::write_frame(&mut p.out, Kind::Abort, why.as_bytes());
                }
                return self.close(i);
            }
        }
        let n = self.ranks.len();
        let r = hello.rank as usize;
        if r >= n {
            self.fatal(format!(
                "a process at {addr} said Hello as rank {r}, but the job has {n} ranks"
            ));
            return self.close(i);
        }
        if self.ranks[r].peer.is_some() || self.ranks[r].closed {
            self.fatal(format!(
                "rank {r} said Hello twice (the second from {addr})"
            ));
            return self.close(i);
        }
        if let Some(p) = self.peers[i].as_mut() {
            p.rank = Some(r);
        }
        self.ranks[r].peer = Some(i);
        if let Some((_, reason)) = &self.ending {
            let body = wire::code_body(1, reason);
            self.send(r, Kind::End, &body);
        }
    }

    fn on_exchange(&mut self, rank: usize, body: Vec<u8>) {
        let n = self.ranks.len();
        let k = self.ranks[rank].contributed;
        self.ranks[rank].contributed += 1;
        let round = self.rounds.entry(k).or_insert_with(|| vec![None; n]);
        round[rank] = Some(body);
        if round.iter().all(Option::is_some) {
            // Rounds complete in order: every rank contributed to k, hence
            // to every earlier round.
            let parts: Vec<Vec<u8>> = self
                .rounds
                .remove(&k)
                .unwrap_or_default()
                .into_iter()
                .flatten()
                .collect();
            self.completed = k + 1;
            let result = wire::encode_exchange_result(&parts);
            if result.len() >= wire::MAX_FRAME {
                return self.fatal(format!(
                    "the result of start-up exchange round {k} is {} bytes, over the control \
                     plane's {}-byte frame limit",
                    result.len(),
                    wire::MAX_FRAME
                ));
            }
            for r in 0..n {
                self.send(r, Kind::ExchangeResult, &result);
            }
        }
        self.check_stuck(None);
    }

    /// Ends the job if an open exchange round can never complete because a
    /// rank left without joining it; the waiting ranks get `Abort` (their
    /// collective fails), the others `End`.
    fn check_stuck(&mut self, trigger: Option<usize>) {
        if self.ending.is_some() {
            return;
        }
        let gone_before = |k: usize| -> Vec<usize> {
            (0..self.ranks.len())
                .filter(|&r| self.ranks[r].left.is_some() && self.ranks[r].contributed <= k)
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
        let waiting: Vec<usize> = (0..self.ranks.len())
            .filter(|&r| self.ranks[r].left.is_none() && self.ranks[r].contributed > self.completed)
            .collect();
        if waiting.is_empty() {
            return;
        }
        let culprit = trigger.filter(|t| gone.contains(t)).unwrap_or(gone[0]);
        let abort = format!(
            "a start-up collective cannot complete: rank {culprit} exited without joining it"
        );
        for &r in &waiting {
            self.send(r, Kind::Abort, abort.as_bytes());
        }
        self.end(
            1,
            format!("rank {culprit} exited while ranks {waiting:?} wait in a start-up collective"),
            &waiting,
        );
    }
}

fn warn(msg: &str) {
    use std::io::Write;
    // Not eprintln: a closed stderr must not panic the coordinator.
    let _ = writeln!(std::io::stderr(), "gex: rendezvous: {msg}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_checked() {
        assert_eq!(
            resolve("127.0.0.1:4000").unwrap(),
            "127.0.0.1:4000".parse().unwrap()
        );
        assert!(resolve("127.0.0.1").is_err());
        assert!(resolve("127.0.0.1:0").is_err());
    }
}
