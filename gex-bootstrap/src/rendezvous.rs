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
//!   environment. [`super::Bootstrap::hosts`] gives the number of distinct
//!   hosts the ranks reported (`GEX_HOSTS` if set), which the udp conduit
//!   uses to choose its address and datagram size.
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
//! * `gex::exit(code)` on any rank: the others have the exit grace
//!   (`GEX_EXIT_TIMEOUT`, default [`wire::EXIT_GRACE`], 2 s) to call exit
//!   too, each finishing on its own with its output; those still running
//!   after it exit with `code` (a rank waiting in a start-up collective at
//!   once);
//! * a rank that exits non-zero: the others exit with its code;
//! * a rank whose connection closes without `Exit` or `Bye` (killed by a
//!   signal): the others exit with code 1;
//! * a rank that exits 0 while others wait in a start-up collective it did
//!   not join: the waiters' collective fails, the rest exit with code 1;
//! * a rank that exits 0 while others still run: if they still run after
//!   the exit grace, they exit with code 0 and rank 0 prints a
//!   message naming the rank (as under `gex-run`: as in GASNet, a
//!   process's exit ends the job with the first exit's code).
//!
//! Rank 0's process hosts the coordinator, so its exit hook waits until
//! every other rank has gone (at most the exit grace and 10 s more once the
//! job is ending; without
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

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Condvar, Mutex, OnceLock, TryLockError};
use std::time::{Duration, Instant};

use gex_types::{Error, Rank, Result};

use super::coord::{Config, Coordinator, Mode};
use super::serve::{serve, Host};
use super::stream::Stream;
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
    hosts: u32,
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
            hosts: Some(j.hosts),
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
        let exit_grace = super::exit_timeout(super::vars::Lookup::env())?;
        let status = start_coordinator(listener, size as usize, key_env.clone(), exit_grace)?;
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
        hosts: None,
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
    // The Bootstrap carries the host count (for the udp conduit) and the
    // job key; nothing is put in the environment.
    let hosts = match super::hosts_from_env()? {
        Some(h) => h,
        None => hosts.len() as u32,
    };
    *joined = Some(Joined {
        rank,
        size,
        job_id: job_id.clone(),
        job_key: job_key.clone(),
        hosts,
        shared: shared.clone(),
    });
    Ok(Bootstrap {
        rank,
        size,
        job_id,
        job_key: Some(job_key),
        hosts: Some(hosts),
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
    match super::serve::bind_tcp(addr) {
        Err(e) if e.kind() == io::ErrorKind::AddrNotAvailable => {
            let any: SocketAddr = match addr {
                SocketAddr::V4(_) => (std::net::Ipv4Addr::UNSPECIFIED, addr.port()).into(),
                SocketAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, addr.port()).into(),
            };
            super::serve::bind_tcp(any)
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
    h.write(crate::os::random::new_job_id().as_bytes());
    format!("r{:016x}", h.finish())
}

/// This host's name as network conduits group ranks: `GEX_HOST` if set,
/// else the hostname.
fn host_name() -> String {
    if let Some(h) = env_var(wire::ENV_HOST) {
        return h.replace('\n', " ");
    }
    crate::os::host::hostname().map_or_else(|| "?".into(), |h| h.replace('\n', " "))
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
    /// The coordinator's exit grace (`GEX_EXIT_TIMEOUT`).
    exit_grace: Duration,
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

    /// Waits until the other ranks are gone, or the exit grace and the end
    /// grace after the job started to end have passed (the coordinator
    /// disconnects them then).
    fn linger(&self) {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if g.others_gone {
                return;
            }
            g = match g.ending_since {
                Some(t) => {
                    let left = (t + self.exit_grace + GRACE + Duration::from_secs(1))
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

/// Rank 0's coordinator as [`serve`] sees it: it prints, and tells the
/// exit hook how far the job is.
struct RendezvousHost {
    status: Arc<Status>,
    published: (bool, Option<Instant>),
}

impl Host for RendezvousHost {
    fn message(&mut self, msg: &str) {
        warn(msg);
    }

    /// Never asked: at a rendezvous ranks are ended with `End` frames.
    fn kill(&mut self, _rank: u32) {}

    fn observe(&mut self, co: &Coordinator) -> bool {
        let now = (co.others_gone(), co.ending_since());
        if now != self.published {
            self.published = now;
            self.status.update(|s| {
                s.others_gone = now.0;
                s.ending_since = now.1;
            });
        }
        // Serves until the process exits.
        false
    }
}

/// Starts serving the control plane on `listener` from a thread of its
/// own, running the coordinator ([`crate::coord`]) under a one-thread
/// tokio runtime.
fn start_coordinator(
    listener: TcpListener,
    size: usize,
    key: Option<String>,
    exit_grace: Duration,
) -> Result<Arc<Status>> {
    let err = |e: io::Error| Error::resource(format!("cannot start the rendezvous: {e}"));
    listener.set_nonblocking(true).map_err(err)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(err)?;
    let listener = {
        let _in_rt = rt.enter();
        tokio::net::TcpListener::from_std(listener).map_err(err)?
    };
    let status = Arc::new(Status {
        inner: Mutex::new(StatusInner::default()),
        changed: Condvar::new(),
        exit_grace,
    });
    let mut host = RendezvousHost {
        status: status.clone(),
        published: (false, None),
    };
    std::thread::Builder::new()
        .name("gex-rendezvous".into())
        .spawn(move || {
            let mut cfg = Config::new(size, Mode::Rendezvous, key);
            cfg.exit_grace = exit_grace;
            cfg.end_grace = GRACE;
            let mut co = Coordinator::new(cfg, Instant::now());
            // No inputs: ranks say themselves how they end.
            let (_, inputs) = tokio::sync::mpsc::unbounded_channel();
            rt.block_on(serve(
                &mut co,
                Some(listener),
                Vec::new(),
                inputs,
                &mut host,
            ));
        })
        .map_err(err)?;
    Ok(status)
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
