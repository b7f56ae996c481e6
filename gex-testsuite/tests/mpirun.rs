//! Jobs started by Open MPI's `mpirun` with no `GEX_*` variable at all: the
//! ranks take their rank and size from mpirun and find the rendezvous
//! (its address and the job key rank 0 made) through PMIx.
//!
//! Each test skips, saying so on stderr, when no Open MPI `mpirun` is
//! installed (`apt-get install openmpi-bin`; `.ci/run` installs it). Jobs
//! hold the same job lock as the other multi-process tests, and every job
//! runs in its own process group, killed whole if it outlives [`TIMEOUT`].

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{job_lock, tail, TIMEOUT};

/// A failing job must end within this.
const PROMPT: Duration = Duration::from_secs(30);

const TEST_AM: &str = env!("CARGO_BIN_EXE_test-am");
const TEST_CORE: &str = env!("CARGO_BIN_EXE_test-core");
const TEST_RMA: &str = env!("CARGO_BIN_EXE_test-rma");
const TEST_FAULTS: &str = env!("CARGO_BIN_EXE_faults");

/// Open MPI's `mpirun`, if installed (MPICH's takes other options) with
/// a PMIx library gex can load (Open MPI may carry its own, inside).
fn mpirun() -> Option<&'static str> {
    let loadable = [c"libpmix.so.2", c"libpmix.so"].iter().any(|name| {
        // SAFETY: a NUL-terminated name; the handle is closed again at
        // once and nothing from the library is used.
        unsafe {
            let h = libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
            !h.is_null() && libc::dlclose(h) == 0
        }
    });
    if !loadable {
        eprintln!("skipped: no loadable libpmix.so.2; apt-get install openmpi-bin libpmix-dev");
        return None;
    }
    let out = Command::new("mpirun").arg("--version").output();
    match out {
        Ok(o) if String::from_utf8_lossy(&o.stdout).contains("Open MPI") => Some("mpirun"),
        Ok(o) => {
            eprintln!(
                "skipped: mpirun is not Open MPI's ({})",
                String::from_utf8_lossy(&o.stdout).trim()
            );
            None
        }
        Err(e) => {
            eprintln!("skipped: no mpirun ({e}); apt-get install openmpi-bin libpmix-dev");
            None
        }
    }
}

struct Ended {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

impl Ended {
    fn report(&self) -> String {
        format!(
            "code {:?} after {:.2?}\n--- stdout (tail) ---\n{}\n--- stderr (tail) ---\n{}",
            self.code,
            self.took,
            tail(&self.stdout, 4096),
            tail(&self.stderr, 4096)
        )
    }
}

/// Runs `mpirun --allow-run-as-root --oversubscribe -np N program args`
/// with every `GEX_*` variable (and any enclosing job's launcher
/// variables) removed from its environment, then `env` added.
fn run(mpirun: &str, ranks: u32, program: &[&str], env: &[(&str, &str)]) -> Ended {
    run_with(mpirun, &[], ranks, program, env)
}

/// [`run`] with more mpirun options `opts`.
fn run_with(
    mpirun: &str,
    opts: &[&str],
    ranks: u32,
    program: &[&str],
    env: &[(&str, &str)],
) -> Ended {
    let _lock = job_lock();
    let mut cmd = Command::new(mpirun);
    cmd.args(["--allow-run-as-root", "--oversubscribe"])
        .args(opts)
        .arg("-np")
        .arg(ranks.to_string())
        .args(program)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if ["GEX_", "SLURM_", "OMPI_", "PMIX_", "PMI_"]
            .iter()
            .any(|p| k.starts_with(p))
        {
            cmd.env_remove(&k);
        }
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    let child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {mpirun}: {e}"));
    let pgid = child.id() as libc::pid_t;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(TIMEOUT) {
        Ok(out) => out.expect("wait for mpirun"),
        Err(_) => {
            // SAFETY: kill(2) has no memory-safety preconditions; the
            // group is mpirun's own (process_group(0) above).
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            panic!("mpirun -np {ranks} {program:?} hung for {TIMEOUT:?}");
        }
    };
    let ended = Ended {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took: start.elapsed(),
    };
    eprintln!(
        "mpirun -np {ranks} {:?} {env:?}: {:?} in {:.2?}",
        program
            .iter()
            .map(|p| p.rsplit('/').next().unwrap_or(p))
            .collect::<Vec<_>>(),
        ended.code,
        ended.took
    );
    ended
}

/// Every rank of `name` passed, and mpirun did not complain about the PMIx
/// session (a process that initialised PMIx and exited without finalizing
/// is "exiting improperly" to Open MPI).
fn passed(end: &Ended, name: &str, ranks: u32) {
    assert_eq!(end.code, Some(0), "{name} -np {ranks}\n{}", end.report());
    for r in 0..ranks {
        let line = format!("{name}: rank {r} of {ranks}: all checks passed");
        assert!(
            end.stdout.contains(&line),
            "{name} -np {ranks}: no {line:?}\n{}",
            end.report()
        );
    }
    for bad in ["improperly", "PMIx", "gex: rendezvous"] {
        assert!(
            !end.stderr.contains(bad),
            "{name} -np {ranks}: {bad:?} on stderr\n{}",
            end.report()
        );
    }
}

#[test]
fn test_programs_pass_under_mpirun_without_gex_variables() {
    let Some(mpirun) = mpirun() else { return };
    for ranks in [4, 3] {
        for (program, name) in [
            (TEST_CORE, "test-core"),
            (TEST_AM, "test-am"),
            (TEST_RMA, "test-rma"),
        ] {
            let end = run(mpirun, ranks, &[program], &[]);
            passed(&end, name, ranks);
        }
    }
}

/// Without Open MPI's rank and size variables (as under a PMIx server
/// that sets none, PRRTE's prterun), PMIx gives them. A job of one rank
/// finalizes PMIx at once (Open MPI would call its exit improper
/// otherwise, which `passed` checks).
#[test]
fn pmix_alone_gives_rank_and_size() {
    let Some(mpirun) = mpirun() else { return };
    for (ranks, program, name) in [(3, TEST_AM, "test-am"), (1, TEST_CORE, "test-core")] {
        let program = [
            "env",
            "-u",
            "OMPI_COMM_WORLD_RANK",
            "-u",
            "OMPI_COMM_WORLD_SIZE",
            program,
        ];
        let end = run(mpirun, ranks, &program, &[]);
        passed(&end, name, ranks);
    }
}

/// udp without the shared-memory bypass: the key rank 0 made and published
/// through PMIx reaches every rank's conduit (datagrams are authenticated
/// with it).
#[test]
fn udp_under_mpirun_uses_the_key_from_pmix() {
    let Some(mpirun) = mpirun() else { return };
    let env = [("GEX_CONDUIT", "udp"), ("GEX_UDP_BYPASS", "0")];
    let end = run(mpirun, 3, &[TEST_RMA], &env);
    passed(&end, "test-rma", 3);
    assert!(end.stdout.contains("(conduit path)"), "{}", end.report());
}

/// Two nodes as PMIx sees them (mpirun starts its daemon for the second
/// "node" through a stand-in for ssh that runs it on this machine): PMIx
/// says not every rank is on rank 0's node, so rank 0 listens at its first
/// non-loopback IPv4 address instead of 127.0.0.1, and the ranks of the
/// other node connect there. (On one machine they would reach 127.0.0.1
/// too, so this shows that the two-node branch works, not which address
/// was bound; `ss -ltnp` during such a job shows rank 0 listening at the
/// network address.)
#[test]
fn ranks_on_two_nodes_meet_at_rank_0s_network_address() {
    let Some(mpirun) = mpirun() else { return };
    let Some(ip) = gex_core::bootstrap::os::net::first_ipv4() else {
        eprintln!("skipped: this host has no non-loopback IPv4 address");
        return;
    };
    let agent = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("gex-fake-ssh");
    std::fs::write(
        &agent,
        "#!/bin/sh\n# ssh's stand-in: drops the options and the host, runs the command here\n\
         while [ $# -gt 0 ]; do case \"$1\" in -*) shift;; *) break;; esac; done\n\
         shift\nexec sh -c \"$*\"\n",
    )
    .expect("write the ssh stand-in");
    std::fs::set_permissions(&agent, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("make the ssh stand-in executable");
    let agent = agent.to_string_lossy().into_owned();
    let opts = [
        "--mca",
        "plm_rsh_agent",
        agent.as_str(),
        "--host",
        "localhost:2,gex-second-node:2",
    ];
    let end = run_with(mpirun, &opts, 4, &[TEST_AM], &[]);
    if end.code != Some(0) && end.stderr.contains("ORTE") && !end.stdout.contains("test-am") {
        eprintln!(
            "skipped: mpirun could not start its daemon for a second node here\n{}",
            end.report()
        );
        return;
    }
    eprintln!("rank 0's address: {ip}");
    passed(&end, "test-am", 4);
}

#[test]
fn a_failing_rank_under_mpirun_ends_the_job_with_its_code() {
    let Some(mpirun) = mpirun() else { return };
    // The last rank panics (101) while the others wait forever: the
    // rendezvous ends them with its code, and so does mpirun.
    let end = run(mpirun, 3, &[TEST_FAULTS, "panic"], &[]);
    assert_eq!(end.code, Some(101), "{}", end.report());
    assert!(end.took < PROMPT, "{}", end.report());
    assert!(
        end.stderr
            .contains("the job is ending: rank 2 exited with code 101"),
        "{}",
        end.report()
    );
    // gex::exit(7) on rank 0.
    let end = run(mpirun, 4, &[TEST_FAULTS, "exit"], &[]);
    assert_eq!(end.code, Some(7), "{}", end.report());
    assert!(end.took < PROMPT, "{}", end.report());
    assert!(
        end.stdout.contains("calling gex::exit(7)"),
        "{}",
        end.report()
    );
}

/// A process that looks started by a PMIx server which cannot be reached
/// (and has no GEX_RENDEZVOUS) fails at init with a message naming both;
/// no mpirun is needed.
#[test]
fn an_unreachable_pmix_server_fails_loudly_naming_gex_rendezvous() {
    let _lock = job_lock();
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind a free port")
        .port();
    let mut cmd = Command::new(TEST_CORE);
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if ["GEX_", "SLURM_", "OMPI_", "PMIX_", "PMI_"]
            .iter()
            .any(|p| k.starts_with(p))
        {
            cmd.env_remove(&k);
        }
    }
    let out = cmd
        .env("OMPI_COMM_WORLD_RANK", "1")
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .env("PMIX_NAMESPACE", "gex-test")
        .env("PMIX_RANK", "1")
        .env("PMIX_SERVER_URI2", format!("1.0;tcp4://127.0.0.1:{port}"))
        .env("PMIX_SERVER_URI21", format!("1.0;tcp4://127.0.0.1:{port}"))
        .stdin(Stdio::null())
        .output()
        .expect("run test-core");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("GEX_RENDEZVOUS"), "{err}");
    assert!(err.contains("PMIx"), "{err}");
}

/// Rank 0 cannot publish the rendezvous (here: a `GEX_JOB_KEY` that is no
/// key): it still joins the fence, so the other ranks find no address at
/// once and fail naming it, instead of waiting in the fence.
#[test]
fn a_rank_0_that_cannot_publish_fails_every_rank_promptly() {
    let Some(mpirun) = mpirun() else { return };
    let end = run(mpirun, 3, &[TEST_CORE], &[("GEX_JOB_KEY", "not a key")]);
    assert_ne!(end.code, Some(0), "{}", end.report());
    assert!(end.took < PROMPT, "{}", end.report());
    assert!(
        end.stderr
            .contains("rank 0 of 3, but GEX_RENDEZVOUS (the IP:PORT where the ranks meet"),
        "{}",
        end.report()
    );
    assert!(
        end.stderr.contains("GEX_JOB_KEY: not printable ASCII"),
        "{}",
        end.report()
    );
}
