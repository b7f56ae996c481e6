//! `gex-run`: the job launcher of gex (like GASNet's `gasnetrun`).
//!
//! [`run`] starts the ranks of a job as processes, serves the start-up
//! control plane they use (all-gather exchanges, barriers, exit; the wire
//! format is [`gex_bootstrap::wire`], the coordinator
//! [`gex_bootstrap::coord`], shared with the rendezvous rank 0 serves under
//! srun or mpirun), forwards their output line by line, and decides the
//! job's exit code:
//!
//! * a rank's `Exit` frame (`gex::exit`, `gasnet_exit`) ends the job with
//!   that code (the first one wins; a non-zero one is reported, naming the
//!   rank): the other ranks have the exit grace ([`JobSpec::exit_grace`]) to
//!   call exit too, or end, and finish on their own with their output, as
//!   GASNet's exit waits for its peers; those still running after it are
//!   killed (a rank waiting in a start-up exchange is told to end at once);
//!   a fatal error's `Exit` ends the others at once;
//! * a rank that exits non-zero or dies from a signal ends the job with that
//!   code (128 + signal for signals);
//! * a rank that exits 0 while others wait in a start-up exchange it never
//!   joined makes the exchange impossible: the waiters get `Abort`, code 1;
//! * a rank (one that said `Hello`: a gex program) that exits 0 while others
//!   still run ends the job with code 0 if they are still running after the
//!   exit grace, with a message naming it: as
//!   in GASNet, a process's exit ends the job with the first exit's code.
//!   Ranks that finish together exit within the grace; a rank that returns
//!   from `main` while a peer waits for its reply no longer hangs the job;
//! * a timeout ends the job with code 124;
//! * otherwise, when every rank has exited 0, the code is 0.
//!
//! Whatever the reason, when [`run`] returns no rank (nor anything a rank
//! started in its process group) is left running, every rank has been
//! reaped, every control connection is closed, and the job's shared memory
//! (nameless: [`gex_bootstrap::os::shm`]) is gone with the last rank that mapped it.
//!
//! Each rank runs in a process group of its own (so that ending a rank also
//! ends what it started), gets the launcher's standard input only if it is
//! rank 0 and that input is not a terminal (`/dev/null` otherwise), and
//! receives SIGKILL from the kernel if the launcher dies.
//!
//! # Several hosts
//!
//! With [`JobSpec::hosts`], ranks are placed in blocks of `ceil(N / H)`
//! consecutive ranks per host ([`placement`]); each gets `GEX_HOST` (its
//! host's name as given) and `GEX_HOSTS` (the number of hosts that got
//! ranks). A rank is started through [`JobSpec::spawn`], a command template
//! in which `{host}` is replaced and after which the program and its
//! arguments follow (`ip netns exec {host}`, `ssh -o BatchMode=yes
//! {host}`); without a template, a host named `localhost` or this machine's
//! hostname is started directly and any other through [`DEFAULT_SPAWN`].
//! Through `ssh` the rank's environment is put on the remote command line
//! (`env GEX_RANK=.. .. PROGRAM ARGS`, shell-quoted), and the program path
//! must be valid on the remote host (it is made absolute here). For other
//! spawners, the environment is the spawner's own.
//!
//! The job key (a fresh 256-bit secret per job, from which network conduits
//! derive their datagram authentication) is never put in an environment or
//! on a command line: a rank started directly inherits a pipe holding it
//! (`GEX_KEY_FD=N`; written and closed by the launcher before the rank
//! runs), and a rank started through a spawner gets it as the first line of
//! its standard input (`GEX_KEY_FD=0`; rank 0's forwarded standard input
//! follows it). The bootstrap reads it once. A program started through a
//! spawner that is not a gex rank sees that line on its standard input.
//!
//! Ranks on other machines cannot reach a Unix socket: [`Ctrl::Tcp`] (the
//! default when some rank is started through ssh) serves the control plane
//! over TCP. On every connection, a rank must prove that it knows the job
//! key (which only the ranks have) in its first small frame, answering a
//! fresh challenge, or the connection is dropped: strangers that connect,
//! however many, do not end the job nor make the launcher hold their data
//! ([`gex_bootstrap::coord`] has the rules). A rank reached over TCP ends
//! itself when the launcher closes its connection.
//!
//! What is local only: the launcher tracks the processes it started (for
//! ssh, the local `ssh` client), so when a job ends, remote ranks end when
//! their control connection closes (at once, unless they are stopped).
//!
//! If the launcher itself is SIGKILLed, the ranks die (a parent-death
//! signal) and nothing remains: local ranks talk to the launcher over
//! inherited socket pairs (no socket file, no address), and shared memory
//! has no name (`gex_bootstrap::os::shm`), so the kernel frees it with its last
//! process. [`leftovers`] lists anything of a job still on the machine.
//!
//! Limits: a process that leaves its rank's
//! process group (`setsid`) is not ended with the job, and if it holds a
//! rank's output open the launcher stops waiting for that output once
//! nothing has arrived for a few seconds after every rank has ended.
//!
//! The `gex-run` binary is a thin command-line front end over [`run`]; it
//! also reads the `GEX_RUN_TIMEOUT` and `GEX_EXIT_TIMEOUT` variables (the
//! library does not).

mod hosts;
mod job;
mod leftovers;
mod output;
mod proc;
mod signals;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

pub use hosts::placement;
pub use leftovers::leftovers;
pub use signals::install_signal_handlers;

/// The spawner used for a host that is not this one when no template is
/// given.
pub const DEFAULT_SPAWN: &str = "ssh -o BatchMode=yes {host}";

/// How the ranks reach the launcher's control plane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ctrl {
    /// Ranks on this machine: each rank inherits one end of a Unix socket
    /// pair made for it alone (`GEX_CTRL=fd:N:PID`), in any network namespace.
    /// There is no address another process could connect to and no file to
    /// leave behind; a spawner must keep inherited descriptors (`ip netns
    /// exec`, `env`, `nsenter` do).
    #[default]
    Unix,
    /// A TCP listener: ranks on other machines.
    Tcp,
}

/// Job exit code when the `--timeout` expires (as coreutils' `timeout`).
pub const TIMEOUT_CODE: i32 = 124;

/// What happens to the ranks' stdout and stderr.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Output {
    /// Forwarded to the launcher's own stdout / stderr as lines arrive.
    #[default]
    Inherit,
    /// Collected into [`JobOutcome::stdout`] / [`JobOutcome::stderr`]
    /// (all ranks' lines in arrival order; the launcher's own `gex-run:`
    /// messages go to the captured stderr too).
    Capture,
}

/// What to run: the description of one job.
#[derive(Clone, Debug)]
pub struct JobSpec {
    /// Number of ranks (processes); at least 1.
    pub ranks: u32,
    /// The program every rank runs: a path, or a name looked up in `PATH`.
    pub program: PathBuf,
    /// Its arguments (the same for every rank).
    pub args: Vec<String>,
    /// End the job with code [`TIMEOUT_CODE`] if it runs longer than this.
    pub timeout: Option<Duration>,
    /// How long the other ranks may still run after a rank's exit before
    /// they are ended: after a rank called exit, for the others to call
    /// exit too (or end); after a rank exited with code 0, before the job
    /// ends with that code. `None`: [`gex_bootstrap::wire::EXIT_GRACE`]
    /// (2 s; the binary takes `GEX_EXIT_TIMEOUT`).
    pub exit_grace: Option<Duration>,
    /// The conduit the ranks should use, passed as `GEX_CONDUIT`.
    pub conduit: String,
    /// Prefix each forwarded output line with `[rank] `.
    pub label: bool,
    /// Forward or capture the ranks' output.
    pub output: Output,
    /// Extra environment variables for the ranks (on top of the launcher's
    /// own environment; the `GEX_*` variables of the job take precedence).
    pub env: Vec<(String, String)>,
    /// Hosts to place the ranks on, in order (see the crate docs); empty:
    /// every rank on this host.
    pub hosts: Vec<String>,
    /// The command template that starts a rank on a host (`{host}` is
    /// replaced, the program and its arguments follow); `None`: direct
    /// for this host, [`DEFAULT_SPAWN`] for others.
    pub spawn: Option<String>,
    /// Extra variables for the ranks on one host: `(host, name, value)`,
    /// applied after [`JobSpec::env`].
    pub host_env: Vec<(String, String, String)>,
    /// The control plane's transport; `None`: TCP if some rank is started
    /// through ssh, else a Unix socket pair per rank.
    pub ctrl: Option<Ctrl>,
    /// Where the TCP control plane listens (default `0.0.0.0:0`). Ranks are
    /// told this IP, or if it is unspecified the first non-loopback IPv4
    /// address of this machine (127.0.0.1 if it has none).
    pub ctrl_addr: Option<SocketAddr>,
}

impl JobSpec {
    /// A job of `ranks` processes of `program`, without arguments, on the
    /// `smp` conduit, with no timeout, output inherited and unlabelled.
    pub fn new(ranks: u32, program: impl Into<PathBuf>) -> Self {
        JobSpec {
            ranks,
            program: program.into(),
            args: Vec::new(),
            timeout: None,
            exit_grace: None,
            conduit: "smp".to_string(),
            label: false,
            output: Output::Inherit,
            env: Vec::new(),
            hosts: Vec::new(),
            spawn: None,
            host_env: Vec::new(),
            ctrl: None,
            ctrl_addr: None,
        }
    }
}

/// How a job ended.
#[derive(Clone, Debug)]
pub struct JobOutcome {
    /// The job's exit code (what the `gex-run` binary exits with).
    pub code: i32,
    /// The job's identifier (`GEX_JOB_ID` of its ranks).
    pub job_id: String,
    /// The process id of each rank, in rank order (for a rank started
    /// through a spawner, the spawner's process on this machine).
    pub pids: Vec<u32>,
    /// Captured stdout of all ranks (empty with [`Output::Inherit`]).
    pub stdout: String,
    /// Captured stderr of all ranks plus the launcher's messages (empty with
    /// [`Output::Inherit`]).
    pub stderr: String,
    /// Whether the job was ended by its timeout.
    pub timed_out: bool,
    /// Wall-clock time from the start of [`run`] until the job was over.
    pub elapsed: Duration,
    /// Why the job ended, for humans (`"rank 1 exited with code 3"`).
    pub reason: String,
}

/// Runs a job to completion and reports how it ended.
///
/// Blocks the calling thread for the whole job; ranks are set to die if
/// that thread's process dies (`PR_SET_PDEATHSIG`). Several jobs may run
/// concurrently from different threads.
///
/// # Errors
///
/// * [`std::io::ErrorKind::InvalidInput`]: `ranks` is 0, the program is
///   empty, or the hosts, spawn template or host environment are malformed;
/// * [`std::io::ErrorKind::NotFound`] / `PermissionDenied`: the program
///   does not exist or cannot be executed;
/// * any other error setting the job up (control socket, spawning a rank);
///   ranks already started are killed and reaped first.
///
/// Everything that happens once the ranks run (failures included) is
/// reported in the [`JobOutcome`], not as an error.
pub fn run(spec: &JobSpec) -> std::io::Result<JobOutcome> {
    job::run_job(spec)
}
