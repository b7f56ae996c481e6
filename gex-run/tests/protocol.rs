//! The control plane, driven by fake ranks that speak the wire protocol.
//!
//! The ranks are this very test binary: [`fake_rank`] is a test that does
//! nothing normally, and plays the role named by `GEX_RUN_TEST_ROLE` when
//! the launcher starts the binary as a rank (`--exact fake_rank`).

mod common;

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use common::{gone, PROMPT};
use gex_core::bootstrap::wire::{
    decode_exchange_result, hello_body, read_frame, shm_prefix, write_frame, Kind, ENV_CTRL,
    ENV_JOB_ID, ENV_RANK, ENV_SIZE,
};
use gex_run::{run, JobOutcome, JobSpec, Output};

const ROLE: &str = "GEX_RUN_TEST_ROLE";

/// A job of `ranks` fake ranks playing `role`, output captured.
fn fake_job(ranks: u32, role: &str) -> JobSpec {
    let mut spec = JobSpec::new(ranks, std::env::current_exe().unwrap());
    spec.args = [
        "fake_rank",
        "--exact",
        "--nocapture",
        "--test-threads=1",
        "-q",
    ]
    .map(String::from)
    .to_vec();
    spec.env.push((ROLE.into(), role.into()));
    spec.output = Output::Capture;
    spec
}

/// The lines a fake rank printed that start with `rank ` (libtest prints
/// its own lines around them).
fn rank_lines(out: &JobOutcome) -> Vec<&str> {
    out.stdout
        .lines()
        .filter(|l| l.starts_with("rank "))
        .collect()
}

/// A rank's end of the control connection.
struct Ctl {
    stream: UnixStream,
    rank: u32,
    size: u32,
}

fn env_u32(name: &str) -> u32 {
    std::env::var(name).unwrap().parse().unwrap()
}

impl Ctl {
    /// Connects without saying Hello.
    fn connect_raw() -> UnixStream {
        UnixStream::connect(std::env::var(ENV_CTRL).unwrap()).unwrap()
    }

    /// Connects and says Hello as this process's `GEX_RANK`.
    fn connect() -> Ctl {
        let mut stream = Ctl::connect_raw();
        let rank = env_u32(ENV_RANK);
        write_frame(
            &mut stream,
            Kind::Hello,
            &hello_body(rank, std::process::id()),
        )
        .unwrap();
        Ctl {
            stream,
            rank,
            size: env_u32(ENV_SIZE),
        }
    }

    /// All-gathers `data`; `Err` carries an `Abort` message.
    fn exchange(&mut self, data: &[u8]) -> Result<Vec<Vec<u8>>, String> {
        write_frame(&mut self.stream, Kind::Exchange, data).unwrap();
        match read_frame(&mut self.stream).unwrap() {
            (Kind::ExchangeResult, body) => Ok(decode_exchange_result(&body).unwrap()),
            (Kind::Abort, body) => Err(String::from_utf8(body).unwrap()),
            (kind, _) => panic!("unexpected {kind:?}"),
        }
    }

    /// Asks the launcher to end the job with `code`; returns on `ExitAck`.
    fn exit(&mut self, code: i32) {
        write_frame(&mut self.stream, Kind::Exit, &code.to_le_bytes()).unwrap();
        let (kind, _) = read_frame(&mut self.stream).unwrap();
        assert_eq!(kind, Kind::ExitAck);
    }
}

/// Blocks "forever": the launcher is expected to kill this rank long before.
fn hang() -> ! {
    std::thread::sleep(Duration::from_secs(60));
    println!("rank {} was not killed", env_u32(ENV_RANK));
    std::process::exit(99)
}

fn kill_myself() -> ! {
    // SAFETY: kill(2) on our own pid has no memory-safety preconditions.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
    unreachable!("SIGKILL cannot be caught")
}

fn payload(round: u32, rank: u32) -> Vec<u8> {
    // Distinct contents and lengths per round and rank.
    format!(
        "round {round} from rank {rank}:{}",
        "x".repeat(rank as usize * 7)
    )
    .into_bytes()
}

/// The rank side of every scenario below.
#[test]
fn fake_rank() {
    let Ok(role) = std::env::var(ROLE) else {
        return; // An ordinary test run: nothing to do.
    };
    let rank = env_u32(ENV_RANK);
    match role.as_str() {
        "exchange" => {
            let mut ctl = Ctl::connect();
            for round in 0..2 {
                let got = ctl.exchange(&payload(round, rank)).unwrap();
                let want: Vec<Vec<u8>> = (0..ctl.size).map(|r| payload(round, r)).collect();
                assert_eq!(got, want, "round {round}");
                // A barrier is an exchange of nothing.
                let got = ctl.exchange(&[]).unwrap();
                assert_eq!(got, vec![Vec::<u8>::new(); ctl.size as usize]);
            }
            println!("rank {rank} exchanges ok");
            std::process::exit(0)
        }
        "exit" => {
            let code: i32 = std::env::var("GEX_RUN_TEST_CODE").unwrap().parse().unwrap();
            let mut ctl = Ctl::connect();
            ctl.exchange(&[]).unwrap();
            match ctl.rank {
                0 => {
                    ctl.exit(code);
                    println!("rank 0 got ExitAck");
                    std::io::stdout().flush().unwrap();
                    // The job code is the one sent, not this.
                    std::process::exit(if code == 0 { 7 } else { 0 })
                }
                1 => {
                    // Waits in an exchange that rank 0 never joins.
                    let r = ctl.exchange(b"never");
                    println!("rank 1 was not killed: {r:?}");
                    std::process::exit(98)
                }
                _ => hang(),
            }
        }
        "abort" => {
            let mut ctl = Ctl::connect();
            ctl.exchange(&[]).unwrap();
            if ctl.rank == 2 {
                // Leaves without joining the second exchange.
                std::process::exit(0);
            }
            match ctl.exchange(b"second") {
                Err(msg) => {
                    println!("rank {rank} aborted: {msg}");
                    std::process::exit(1)
                }
                Ok(_) => {
                    println!("rank {rank} completed an impossible exchange");
                    std::process::exit(0)
                }
            }
        }
        "shm" => {
            if rank == 0 {
                let job = std::env::var(ENV_JOB_ID).unwrap();
                let path = format!("/dev/shm/{}test", shm_prefix(&job));
                std::fs::File::create(&path).unwrap();
                println!("rank 0 created {path}");
                std::io::stdout().flush().unwrap();
                kill_myself()
            }
            hang()
        }
        "malformed" => {
            if rank == 0 {
                let mut ctl = Ctl::connect();
                // len = 1, kind = 99: no such kind.
                ctl.stream.write_all(&[1, 0, 0, 0, 99]).unwrap();
            }
            hang()
        }
        "no-hello" => {
            if rank == 0 {
                drop(Ctl::connect_raw());
            }
            hang()
        }
        "bad-rank" => {
            if rank == 0 {
                let mut s = Ctl::connect_raw();
                write_frame(&mut s, Kind::Hello, &hello_body(7, std::process::id())).unwrap();
            }
            hang()
        }
        other => panic!("unknown role {other}"),
    }
}

#[test]
fn exchanges_gather_every_payload_in_rank_order() {
    let out = run(&fake_job(3, "exchange")).unwrap();
    assert_eq!(out.code, 0, "{out:?}");
    let mut lines = rank_lines(&out);
    lines.sort();
    assert_eq!(
        lines,
        [
            "rank 0 exchanges ok",
            "rank 1 exchanges ok",
            "rank 2 exchanges ok"
        ]
    );
}

fn exit_job(code: i32) -> JobOutcome {
    let mut spec = fake_job(3, "exit");
    spec.env
        .push(("GEX_RUN_TEST_CODE".into(), code.to_string()));
    run(&spec).unwrap()
}

#[test]
fn exit_from_one_rank_ends_the_job_with_its_code() {
    let out = exit_job(5);
    assert_eq!(out.code, 5, "{out:?}");
    assert_eq!(out.reason, "rank 0 called exit with code 5");
    assert_eq!(rank_lines(&out), ["rank 0 got ExitAck"], "{out:?}");
    assert!(out.elapsed < PROMPT, "{out:?}");
    assert!(out.pids.iter().all(|&p| gone(p)));
    // Ranks the launcher killed are not reported as failures.
    assert!(!out.stderr.contains("gex-run:"), "{}", out.stderr);
}

#[test]
fn exit_zero_is_the_job_code_whatever_the_rank_exits_with() {
    let out = exit_job(0);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(rank_lines(&out), ["rank 0 got ExitAck"], "{out:?}");
    assert!(out.elapsed < PROMPT, "{out:?}");
}

#[test]
fn a_rank_leaving_a_collective_aborts_the_waiters() {
    let out = run(&fake_job(3, "abort")).unwrap();
    assert_eq!(out.code, 1, "{out:?}");
    // Which ranks were already waiting when rank 2's exit was noticed is a
    // race; the message names exactly those.
    let line = out
        .stderr
        .lines()
        .find(|l| l.starts_with("gex-run: rank 2 exited while ranks ["))
        .unwrap_or_else(|| panic!("{out:?}"));
    assert!(line.ends_with("] wait in a start-up collective"), "{line}");
    let aborted = rank_lines(&out);
    assert!(!aborted.is_empty(), "{out:?}");
    for l in aborted {
        let (who, msg) = l.split_once(" aborted: ").unwrap_or_else(|| panic!("{l}"));
        let r = who.strip_prefix("rank ").unwrap();
        assert!(
            line.contains(r),
            "{r} aborted but is not listed in '{line}'"
        );
        assert!(msg.contains("rank 2 exited"), "{msg}");
    }
    assert!(out.elapsed < PROMPT, "{out:?}");
}

#[test]
fn shared_memory_of_the_job_is_removed() {
    if !std::path::Path::new("/dev/shm").is_dir() {
        eprintln!("skipped: no /dev/shm on this machine");
        return;
    }
    // An object of another job must survive.
    let other = format!("/dev/shm/gex-runtest{}-keep", std::process::id());
    std::fs::File::create(&other).unwrap();
    let out = run(&fake_job(2, "shm")).unwrap();
    let kept = std::path::Path::new(&other).exists();
    std::fs::remove_file(&other).unwrap();
    assert_eq!(out.code, 137, "{out:?}");
    let path = format!("/dev/shm/{}test", shm_prefix(&out.job_id));
    assert_eq!(rank_lines(&out), [format!("rank 0 created {path}")]);
    assert!(!std::path::Path::new(&path).exists(), "{path} left behind");
    assert!(kept);
    assert!(out.elapsed < PROMPT, "{out:?}");
}

fn assert_protocol_error(role: &str, message: &str) {
    let out = run(&fake_job(2, role)).unwrap();
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains(&format!("gex-run: {message}")),
        "{out:?}"
    );
    assert!(out.reason.contains(message), "{out:?}");
    assert!(out.elapsed < PROMPT, "{out:?}");
}

#[test]
fn a_malformed_frame_ends_the_job() {
    assert_protocol_error(
        "malformed",
        "malformed control frame from rank 0: unknown control frame kind 99",
    );
}

#[test]
fn hanging_up_before_hello_ends_the_job() {
    assert_protocol_error(
        "no-hello",
        "a process connected to the control socket and hung up before sending Hello",
    );
}

#[test]
fn hello_with_a_rank_outside_the_job_ends_it() {
    assert_protocol_error(
        "bad-rank",
        "a process said Hello as rank 7, but the job has 2 ranks",
    );
}
