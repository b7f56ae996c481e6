//! Killing the launcher (SIGKILL) at random moments of a job's start-up
//! leaves nothing behind (issue #9, defect 5): no rank process (they have a
//! parent-death signal), no shared memory (nameless, `gex_core::shm`), no
//! socket file or address (the local control connections are inherited
//! socket pairs), nothing in the temporary directory.
//!
//! The launcher is this test binary itself: [`launcher_role`] does nothing
//! normally and runs one job through `gex_run::run` when the test starts
//! the binary with `GEX_LEAK_ROLE` set, so that the test can SIGKILL it.
//! The ranks run `faults startup`, which records the job id in
//! `GEX_LEAK_DIR` before anything of the job exists, then inits, attaches a
//! segment, registers handlers, barriers and returns.
//!
//! `GEX_LEAK_KILLS` (default 20) sets the number of kills and
//! `GEX_LEAK_SEED` the seed (printed either way).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gex_run::{JobSpec, Output};

const FAULTS: &str = env!("CARGO_BIN_EXE_faults");
const ROLE: &str = "GEX_LEAK_ROLE";
const DIR: &str = "GEX_LEAK_DIR";
const MARK: &str = "GEX_LEAK_MARK";
/// How long the ranks of a killed launcher may take to go.
const GONE_BOUND: Duration = Duration::from_secs(15);

/// One kind of job: conduit and rank count.
#[derive(Clone, Copy, Debug)]
struct Cfg {
    conduit: &'static str,
    ranks: u32,
}

/// Runs one `faults startup` job (only when started as the launcher).
#[test]
fn launcher_role() {
    let Ok(cfg) = std::env::var(ROLE) else {
        return;
    };
    let (conduit, ranks) = cfg.split_once(':').expect("CONDUIT:RANKS");
    let mut spec = JobSpec::new(ranks.parse().expect("ranks"), FAULTS);
    spec.args = vec!["startup".into()];
    spec.conduit = conduit.into();
    if conduit == "udp" {
        spec.env.push(("GEX_UDP_BYPASS".into(), "0".into()));
    }
    spec.output = Output::Capture;
    spec.timeout = Some(Duration::from_secs(120));
    let out = gex_run::run(&spec).expect("run the job");
    if out.code != 0 {
        eprintln!("{}", common::report(&out));
    }
    std::process::exit(out.code);
}

/// Starts the launcher for `cfg`, with the ranks' job ids recorded in
/// `dir/ranks`, its temporary directory `dir/tmp`, and `mark` in the
/// environment of every process of the job.
fn start_launcher(cfg: Cfg, dir: &Path, mark: &str) -> std::process::Child {
    for sub in ["ranks", "tmp"] {
        std::fs::create_dir_all(dir.join(sub)).expect("make the test directories");
    }
    let mut cmd = Command::new(std::env::current_exe().expect("this test binary"));
    cmd.args([
        "launcher_role",
        "--exact",
        "--nocapture",
        "-q",
        "--test-threads=1",
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    // Nothing of an enclosing job may leak in.
    for (k, _) in std::env::vars() {
        if k.starts_with("GEX_") {
            cmd.env_remove(&k);
        }
    }
    cmd.env(ROLE, format!("{}:{}", cfg.conduit, cfg.ranks))
        .env(DIR, dir.join("ranks"))
        .env(MARK, mark)
        .env("TMPDIR", dir.join("tmp"))
        .spawn()
        .expect("start the launcher")
}

/// Processes whose environment holds `MARK=mark` (alive: a zombie's
/// environment reads empty).
fn marked(mark: &str) -> Vec<u32> {
    let needle = format!("{MARK}={mark}\0");
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").expect("read /proc").flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        if env.windows(needle.len()).any(|w| w == needle.as_bytes()) {
            pids.push(pid);
        }
    }
    pids
}

/// Waits (at most [`GONE_BOUND`]) until no process carries `mark`.
fn wait_marked_gone(mark: &str) {
    let deadline = Instant::now() + GONE_BOUND;
    loop {
        let pids = marked(mark);
        if pids.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "processes {pids:?} of the killed launcher's job still run after {GONE_BOUND:?}"
        );
        wait_for_exit(pids[0], deadline);
    }
}

/// Blocks until process `pid` exits or `deadline` passes: a pidfd becomes
/// readable when its process ends.
fn wait_for_exit(pid: u32, deadline: Instant) {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    if fd < 0 {
        // Gone already (or no pidfds: the caller's loop re-reads /proc).
        return;
    }
    let mut pfd = libc::pollfd {
        fd: fd as libc::c_int,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = deadline
        .saturating_duration_since(Instant::now())
        .as_millis()
        + 1;
    // SAFETY: `pfd` is one valid pollfd; the descriptor is ours to close.
    unsafe {
        libc::poll(&mut pfd, 1, ms.min(60_000) as libc::c_int);
        libc::close(fd as libc::c_int);
    }
}

/// The job ids the ranks recorded in `dir/ranks`.
fn recorded_jobs(dir: &Path) -> Vec<String> {
    let mut jobs: Vec<String> = std::fs::read_dir(dir.join("ranks"))
        .expect("read the rank records")
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .filter(|j| !j.is_empty())
        .collect();
    jobs.sort();
    jobs.dedup();
    jobs
}

/// splitmix64: a small seeded generator, so that a failing sequence of
/// kill moments can be replayed with `GEX_LEAK_SEED`.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number"))
    })
}

#[test]
fn killing_the_launcher_during_start_up_leaves_nothing() {
    if std::env::var_os(ROLE).is_some() {
        return;
    }
    let kills = env_u64("GEX_LEAK_KILLS").unwrap_or(20);
    let seed = env_u64("GEX_LEAK_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    eprintln!("launcher kills: {kills}, seed {seed} (replay with GEX_LEAK_SEED={seed})");
    let mut rng = Rng(seed);
    let _lock = common::job_lock();
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("gex-leaks-{}", std::process::id()));
    let cfgs = [
        Cfg {
            conduit: "smp",
            ranks: 8,
        },
        Cfg {
            conduit: "udp",
            ranks: 4,
        },
        Cfg {
            conduit: "smp",
            ranks: 4,
        },
    ];
    // How long each whole job takes: the kills land anywhere in it.
    let mut took = Vec::new();
    for (c, &cfg) in cfgs.iter().enumerate() {
        let dir = base.join(format!("calibrate{c}"));
        let mark = format!("{}-{seed}-c{c}", std::process::id());
        let start = Instant::now();
        let out = start_launcher(cfg, &dir, &mark)
            .wait_with_output()
            .expect("wait for the launcher");
        let t = start.elapsed();
        assert!(
            out.status.success(),
            "{cfg:?}: the job failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(recorded_jobs(&dir).len(), 1, "{cfg:?}");
        eprintln!("{cfg:?}: a whole job takes {t:.2?}");
        took.push(t);
    }
    let mut before_any_rank = 0;
    for i in 0..kills {
        let c = (i % cfgs.len() as u64) as usize;
        let cfg = cfgs[c];
        let delay = Duration::from_micros(rng.below(took[c].as_micros() as u64));
        let dir = base.join(format!("kill{i}"));
        let mark = format!("{}-{seed}-{i}", std::process::id());
        let mut launcher = start_launcher(cfg, &dir, &mark);
        // A random moment of the job, not a synchronisation.
        std::thread::sleep(delay);
        launcher.kill().expect("SIGKILL the launcher");
        let status = launcher.wait().expect("reap the launcher");
        wait_marked_gone(&mark);
        let jobs = recorded_jobs(&dir);
        let what = format!("kill {i} ({cfg:?}, after {delay:.2?}, seed {seed}; launcher {status})");
        assert!(jobs.len() <= 1, "{what}: several job ids {jobs:?}");
        if jobs.is_empty() {
            before_any_rank += 1;
        }
        for job in &jobs {
            // A rank whose main thread has exited reads as gone to
            // `marked` (its environment reads empty) while its other
            // thread (the control watcher) may still be closing the
            // descriptors they share: what remains must go within the
            // bound, or it is a leak.
            let deadline = Instant::now() + GONE_BOUND;
            let mut left = gex_run::leftovers(job);
            while !left.is_empty() && Instant::now() < deadline {
                std::thread::yield_now();
                left = gex_run::leftovers(job);
            }
            assert!(left.is_empty(), "{what}: job {job} left {left:?}");
        }
        let tmp: Vec<_> = std::fs::read_dir(dir.join("tmp"))
            .expect("read the launcher's TMPDIR")
            .flatten()
            .map(|e| e.path())
            .collect();
        assert!(tmp.is_empty(), "{what}: left {tmp:?} in TMPDIR");
    }
    eprintln!(
        "{kills} launcher kills left nothing ({before_any_rank} landed before any rank started)"
    );
    let _ = std::fs::remove_dir_all(&base);
}
