//! The control plane, driven by fake ranks that speak the wire protocol,
//! over the Unix socket and over TCP.
//!
//! The ranks are this very test binary: [`fake_rank`] is a test that does
//! nothing normally, and plays the role named by `GEX_RUN_TEST_ROLE` when
//! the launcher starts the binary as a rank (`--exact fake_rank`).

mod common;

use std::io::Write;
use std::time::Duration;

use common::{gone, wait_for_exit, PROMPT};
use gex_bootstrap::os::shm;
use gex_bootstrap::stream::Stream;
use gex_bootstrap::wire::{
    self, decode_exchange_result, hello_body, parse_challenge, read_frame, write_frame, CtrlAddr,
    Hello, Kind, ENV_CTRL, ENV_JOB_ID, ENV_RANK, ENV_SIZE,
};
use gex_run::{run, Ctrl, JobOutcome, JobSpec, Output};

const ROLE: &str = "GEX_RUN_TEST_ROLE";

/// Both control-plane transports.
const CTRLS: [Ctrl; 2] = [Ctrl::Unix, Ctrl::Tcp];

/// A job of `ranks` fake ranks playing `role` over a Unix control socket.
fn fake_job(ranks: u32, role: &str) -> JobSpec {
    fake_job_on(Ctrl::Unix, ranks, role)
}

/// A job of `ranks` fake ranks playing `role`, output captured, with the
/// control plane on `ctrl` (TCP on the loopback interface).
fn fake_job_on(ctrl: Ctrl, ranks: u32, role: &str) -> JobSpec {
    let mut spec = JobSpec::new(ranks, std::env::current_exe().unwrap());
    spec.ctrl = Some(ctrl);
    if ctrl == Ctrl::Tcp {
        spec.ctrl_addr = Some("127.0.0.1:0".parse().unwrap());
    }
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
    stream: Stream,
    rank: u32,
    size: u32,
}

fn env_u32(name: &str) -> u32 {
    std::env::var(name).unwrap().parse().unwrap()
}

impl Ctl {
    /// Connects without saying Hello.
    fn connect_raw() -> Stream {
        let addr = CtrlAddr::parse(&std::env::var(ENV_CTRL).unwrap()).unwrap();
        Stream::connect(&addr).unwrap()
    }

    /// Joins as `rank` with the job key (the whole handshake).
    fn hello(stream: &mut Stream, rank: u32) -> std::io::Result<()> {
        let key = gex_bootstrap::launcher_key()
            .unwrap()
            .expect("a job key from the launcher");
        Ctl::hello_with(stream, rank, &key)
    }

    /// Joins as `rank`, proving `key`.
    fn hello_with(stream: &mut Stream, rank: u32, key: &str) -> std::io::Result<()> {
        let nonce = gex_bootstrap::random_bytes();
        wire::rank_handshake(stream, rank, std::process::id(), Some(key), nonce)
    }

    /// Connects and joins as this process's `GEX_RANK`.
    fn connect() -> Ctl {
        let mut stream = Ctl::connect_raw();
        let rank = env_u32(ENV_RANK);
        Ctl::hello(&mut stream, rank).unwrap();
        Ctl {
            stream,
            rank,
            size: env_u32(ENV_SIZE),
        }
    }

    /// All-gathers `data`; `Err` carries an `Abort` message. On `End` (the
    /// job ends by another rank's exit) the process exits with the code it
    /// carries, as a real rank does.
    fn exchange(&mut self, data: &[u8]) -> Result<Vec<Vec<u8>>, String> {
        write_frame(&mut self.stream, Kind::Exchange, data).unwrap();
        match read_frame(&mut self.stream).unwrap() {
            (Kind::ExchangeResult, body) => Ok(decode_exchange_result(&body).unwrap()),
            (Kind::Abort, body) => Err(String::from_utf8(body).unwrap()),
            (Kind::End, body) => std::process::exit(wire::parse_code_body(&body).unwrap().0),
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
        "key-hidden" => {
            let key = gex_bootstrap::launcher_key()
                .unwrap()
                .expect("a job key from the launcher");
            let fd: i32 = std::env::var(gex_bootstrap::wire::ENV_KEY_FD)
                .expect("GEX_KEY_FD")
                .parse()
                .unwrap();
            if fd != 0 {
                assert!(
                    !std::path::Path::new(&format!("/proc/self/fd/{fd}")).exists(),
                    "the key pipe stays open after the key was read"
                );
            }
            // Neither this process nor its parent (the launcher, or what a
            // spawner left) shows the key in its environment or arguments.
            let ppid = std::os::unix::process::parent_id();
            for what in [
                "/proc/self/environ".to_string(),
                "/proc/self/cmdline".to_string(),
                format!("/proc/{ppid}/environ"),
                format!("/proc/{ppid}/cmdline"),
            ] {
                let Ok(bytes) = std::fs::read(&what) else {
                    continue; // not ours to read
                };
                for entry in bytes.split(|&b| b == 0) {
                    assert!(
                        !entry.starts_with(b"GEX_JOB_KEY="),
                        "{what} has GEX_JOB_KEY"
                    );
                    assert!(
                        !entry.windows(key.len()).any(|w| w == key.as_bytes()),
                        "{what} shows the job key"
                    );
                }
            }
            assert_eq!(key.len(), 64, "256 bits in hex");
            // Every rank got the same key (and, over TCP, the launcher took it).
            let mut ctl = Ctl::connect();
            let all = ctl.exchange(key.as_bytes()).unwrap();
            assert!(all.iter().all(|k| k == key.as_bytes()), "keys differ");
            println!("rank {rank} key hidden (fd {fd})");
            std::process::exit(0)
        }
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
            // Shared memory as the conduits share it (gex_bootstrap::os::shm): rank
            // 0 creates an object, rank 1 maps it through the handle, then
            // rank 0 is killed; nothing may remain anywhere.
            let mut ctl = Ctl::connect();
            let name = shm::object_name(&std::env::var(ENV_JOB_ID).unwrap(), "test");
            if rank == 0 {
                let region = shm::create(&name, 4096).unwrap();
                // SAFETY: the mapping is 4096 bytes long.
                unsafe { region.ptr().write(42) };
                ctl.exchange(&region.handle().encode()).unwrap();
                ctl.exchange(&[]).unwrap();
                println!("rank 0 shared {name}");
                std::io::stdout().flush().unwrap();
                kill_myself()
            }
            let all = ctl.exchange(&[]).unwrap();
            let h = shm::Handle::decode(&all[0]).unwrap();
            let m = shm::open(&h, &name, 4096).unwrap();
            // SAFETY: the mapping is 4096 bytes long.
            println!("rank 1 read {}", unsafe { m.ptr().read() });
            std::io::stdout().flush().unwrap();
            ctl.exchange(&[]).unwrap();
            hang()
        }
        "malformed" => {
            if rank == 0 {
                let mut ctl = Ctl::connect();
                // len = 1, kind = 99: no such kind.
                ctl.stream.write_all(&[1, 0, 0, 0, 99]).unwrap();
                // The coordinator tells why and closes this rank's
                // connection; the job goes on until the rank ends.
                match read_frame(&mut ctl.stream) {
                    Ok((Kind::Abort, why)) => {
                        println!("rank 0 dropped: {}", String::from_utf8_lossy(&why))
                    }
                    other => println!("rank 0 got {other:?}"),
                }
                std::io::stdout().flush().unwrap();
                std::process::exit(1)
            }
            hang()
        }
        "other-rank" | "bad-rank" => {
            if rank == 0 {
                let mut s = Ctl::connect_raw();
                let claim = if role == "other-rank" { 1 } else { 7 };
                match Ctl::hello(&mut s, claim) {
                    Ok(()) => println!("rank 0 joined as {claim}"),
                    Err(e) => println!("rank 0 refused: {e}"),
                }
                std::io::stdout().flush().unwrap();
                std::process::exit(1)
            }
            hang()
        }
        "no-key" => {
            // A Hello without the proof is refused on either transport.
            let mut s = Ctl::connect_raw();
            let (kind, body) = read_frame(&mut s).unwrap();
            assert_eq!(kind, Kind::Challenge);
            assert!(parse_challenge(&body).unwrap().key_required);
            let hello = Hello {
                rank,
                pid: std::process::id(),
                nonce: [7; 16],
                proof: None,
            };
            write_frame(&mut s, Kind::Hello, &hello_body(&hello)).unwrap();
            let refused = match read_frame(&mut s) {
                Ok((Kind::Abort, why)) => String::from_utf8(why).unwrap(),
                other => format!("not refused: {other:?}"),
            };
            println!("rank {rank} without key: {refused}");
            std::process::exit(0)
        }
        "strangers" => {
            // Rank 0 first plays strangers: one hangs up before Hello, one
            // sends garbage, one proves a wrong key, one replays a Hello
            // recorded from another connection. Over TCP none of them may
            // end the job, nor take a rank's place.
            if rank == 0 {
                drop(Ctl::connect_raw());
                // Garbage, then read until the coordinator hangs up (so
                // that this end's close cannot reset the connection before
                // the garbage is read).
                let mut garbage = Ctl::connect_raw();
                garbage.write_all(&[1, 0, 0, 0, 99]).unwrap();
                let mut sink = Vec::new();
                let _ = std::io::Read::read_to_end(&mut garbage, &mut sink);
                let mut s = Ctl::connect_raw();
                let e = Ctl::hello_with(&mut s, 0, "0123456789abcdef").unwrap_err();
                assert!(e.to_string().contains("wrong proof"), "{e}");
                // A genuine Hello for another connection's challenge,
                // replayed on this one.
                let key = gex_bootstrap::launcher_key().unwrap().unwrap();
                let mut recorded = Ctl::connect_raw();
                let (_, body) = read_frame(&mut recorded).unwrap();
                let theirs = parse_challenge(&body).unwrap();
                let mut hello = Hello {
                    rank: 0,
                    pid: 1,
                    nonce: [1; 16],
                    proof: None,
                };
                hello.proof = Some(wire::hello_proof(&key, &theirs.nonce, &hello));
                let mut replay = Ctl::connect_raw();
                let _ = read_frame(&mut replay).unwrap();
                write_frame(&mut replay, Kind::Hello, &hello_body(&hello)).unwrap();
                let (kind, _) = read_frame(&mut replay).unwrap();
                assert_eq!(kind, Kind::Abort, "a replayed Hello was accepted");
                drop(recorded);
            }
            let mut ctl = Ctl::connect();
            let got = ctl.exchange(&payload(0, rank)).unwrap();
            assert_eq!(got.len(), ctl.size as usize);
            println!("rank {rank} exchanges ok");
            std::process::exit(0)
        }
        "siege" => {
            // Every rank joins; ranks 1 and 2 wait in the first exchange
            // while rank 0 besieges the control port: 2,000 idle
            // connections, and 10 that announce 64 MiB frames and send
            // them. Then the job carries on.
            let mut ctl = Ctl::connect();
            // Everyone has joined: the job runs.
            ctl.exchange(b"joined").unwrap();
            if rank == 0 {
                let launcher = std::os::unix::process::parent_id();
                let rest = status_kib(launcher, "VmRSS");
                let t = std::time::Instant::now();
                let (conns, open) = siege();
                let took = t.elapsed().as_secs_f64();
                let got = ctl.exchange(&payload(0, rank)).unwrap();
                assert_eq!(got.len(), 3);
                let peak = status_kib(launcher, "VmHWM");
                println!("rank 0 idle {open} rest {rest} KiB peak {peak} KiB ({took:.2} s)");
                drop(conns);
            } else {
                ctl.exchange(&payload(0, rank)).unwrap();
            }
            let got = ctl.exchange(&payload(1, rank)).unwrap();
            assert_eq!(got[2], payload(1, 2));
            println!("rank {rank} exchanges ok");
            std::process::exit(0)
        }
        "watched" => {
            // A real rank's bootstrap: over TCP it watches its connection.
            let boot = gex_bootstrap::Bootstrap::from_env().unwrap();
            let pids = boot
                .exchange(&std::process::id().to_le_bytes(), &mut || {})
                .unwrap();
            if rank == 0 {
                // Rank 0 reports: it is not killed, so its output arrives.
                let pid = u32::from_le_bytes(pids[1][..].try_into().unwrap());
                println!("rank 1 pid {pid}");
                std::io::stdout().flush().unwrap();
                boot.request_exit(3);
                std::process::exit(3)
            }
            hang()
        }
        other => panic!("unknown role {other}"),
    }
}

/// A line of `/proc/<pid>/status` in KiB (`VmRSS`, `VmHWM`).
fn status_kib(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("{field}:")))
        .unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Opens 2,000 idle connections to the control port (returned, with the
/// count of those the coordinator still holds open) and 10 that announce
/// a 64 MiB frame before any Hello and then send it.
fn siege() -> (Vec<std::net::TcpStream>, usize) {
    let lim = libc::rlimit {
        rlim_cur: 4096,
        rlim_max: 4096,
    };
    // SAFETY: setrlimit only reads `lim`.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };
    let CtrlAddr::Tcp(addr) = CtrlAddr::parse(&std::env::var(ENV_CTRL).unwrap()).unwrap() else {
        panic!("the siege needs the TCP control plane");
    };
    let mut idle = Vec::new();
    for _ in 0..2000 {
        idle.push(std::net::TcpStream::connect(addr).unwrap());
    }
    let big: Vec<std::thread::JoinHandle<()>> = (0..10)
        .map(|_| {
            std::thread::spawn(move || {
                let mut s = std::net::TcpStream::connect(addr).unwrap();
                let len = 64u32 << 20;
                let mut head = len.to_le_bytes().to_vec();
                head.push(Kind::Exchange as u8);
                let chunk = vec![0x5a; 1 << 20];
                // The coordinator drops the connection at the header: the
                // writes fail (reset, broken pipe) long before 64 MiB.
                if s.write_all(&head).is_ok() {
                    for _ in 0..64 {
                        if s.write_all(&chunk).is_err() {
                            break;
                        }
                    }
                }
            })
        })
        .collect();
    for t in big {
        t.join().unwrap();
    }
    // How many idle ones the coordinator still holds open (it drops the
    // oldest beyond its bound): a peek that does not block.
    let open = idle
        .iter()
        .filter(|s| {
            s.set_nonblocking(true).unwrap();
            let mut b = [0u8; 64];
            // Open and silent after the challenge: WouldBlock.
            let _ = std::io::Read::read(&mut &**s, &mut b);
            matches!(std::io::Read::read(&mut &**s, &mut b), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
        })
        .count();
    (idle, open)
}

#[test]
fn a_siege_of_the_control_port_leaves_the_job_and_the_memory_alone() {
    let out = run(&fake_job_on(Ctrl::Tcp, 3, "siege")).unwrap();
    assert_eq!(out.code, 0, "{out:?}");
    let lines = rank_lines(&out);
    let report = lines
        .iter()
        .find(|l| l.starts_with("rank 0 idle"))
        .unwrap_or_else(|| panic!("{out:?}"));
    let f: Vec<u64> = report
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let (open, rest, peak) = (f[1], f[2], f[3]);
    // The launcher is this test process: its peak memory stays within
    // 64 MiB of what it used before the siege.
    eprintln!("{report}");
    assert!(peak < rest + 64 * 1024, "rest {rest} KiB, peak {peak} KiB");
    // Unauthenticated connections are bounded.
    assert!(
        open <= gex_bootstrap::coord::MAX_PENDING as u64,
        "{open} still open"
    );
    assert!(
        out.stderr
            .contains("connections were waiting to authenticate"),
        "{}",
        out.stderr
    );
    assert_eq!(
        lines.iter().filter(|l| l.ends_with("exchanges ok")).count(),
        3,
        "{out:?}"
    );
}

#[test]
fn exchanges_gather_every_payload_in_rank_order() {
    for ctrl in CTRLS {
        let out = run(&fake_job_on(ctrl, 3, "exchange")).unwrap();
        assert_eq!(out.code, 0, "{ctrl:?}: {out:?}");
        let mut lines = rank_lines(&out);
        lines.sort();
        assert_eq!(
            lines,
            [
                "rank 0 exchanges ok",
                "rank 1 exchanges ok",
                "rank 2 exchanges ok"
            ],
            "{ctrl:?}"
        );
    }
}

fn exit_job(ctrl: Ctrl, code: i32) -> JobOutcome {
    let mut spec = fake_job_on(ctrl, 3, "exit");
    spec.env
        .push(("GEX_RUN_TEST_CODE".into(), code.to_string()));
    run(&spec).unwrap()
}

#[test]
fn exit_from_one_rank_ends_the_job_with_its_code() {
    for ctrl in CTRLS {
        let out = exit_job(ctrl, 5);
        assert_eq!(out.code, 5, "{out:?}");
        assert_eq!(out.reason, "rank 0 called exit with code 5");
        // Rank 1, waiting in an exchange, was told to end; rank 2 was
        // ended after the exit grace.
        assert_eq!(rank_lines(&out), ["rank 0 got ExitAck"], "{out:?}");
        assert!(out.elapsed < PROMPT, "{out:?}");
        assert!(out.pids.iter().all(|&p| gone(p)));
        // The non-zero exit is named; ranks the launcher ended are not
        // reported as failures.
        let said: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.starts_with("gex-run:"))
            .collect();
        assert_eq!(
            said,
            ["gex-run: rank 0 called exit with code 5"],
            "{}",
            out.stderr
        );
    }
}

#[test]
fn exit_zero_is_the_job_code_whatever_the_rank_exits_with() {
    for ctrl in CTRLS {
        let out = exit_job(ctrl, 0);
        assert_eq!(out.code, 0, "{out:?}");
        assert_eq!(rank_lines(&out), ["rank 0 got ExitAck"], "{out:?}");
        assert!(out.elapsed < PROMPT, "{out:?}");
        assert!(!out.stderr.contains("gex-run:"), "{}", out.stderr);
    }
}

#[test]
fn a_hello_without_the_key_is_refused_on_both_transports() {
    for ctrl in CTRLS {
        let out = run(&fake_job_on(ctrl, 2, "no-key")).unwrap();
        assert_eq!(out.code, 0, "{ctrl:?}: {out:?}");
        let lines = rank_lines(&out);
        assert_eq!(lines.len(), 2, "{ctrl:?}: {out:?}");
        for l in lines {
            assert!(
                l.contains("carried no proof of the job key"),
                "{ctrl:?}: {l}"
            );
        }
        assert!(
            out.stderr
                .contains("gex-run: dropped a control connection from "),
            "{out:?}"
        );
        assert!(out.elapsed < PROMPT, "{out:?}");
    }
}

#[test]
fn strangers_on_the_tcp_control_port_do_not_end_the_job() {
    let out = run(&fake_job_on(Ctrl::Tcp, 2, "strangers")).unwrap();
    assert_eq!(out.code, 0, "{out:?}");
    let mut lines = rank_lines(&out);
    lines.sort();
    assert_eq!(lines, ["rank 0 exchanges ok", "rank 1 exchanges ok"]);
    for msg in [
        "its first frame was not a control frame",
        "carried a wrong proof of the job key",
    ] {
        assert!(out.stderr.contains(msg), "{msg}: {}", out.stderr);
    }
}

#[test]
fn the_tcp_control_plane_is_advertised_with_its_address() {
    let mut spec = common::sh(2, r#"echo "$GEX_CTRL""#);
    spec.ctrl = Some(Ctrl::Tcp);
    let out = run(&spec).unwrap();
    assert_eq!(out.code, 0, "{out:?}");
    for line in out.stdout.lines() {
        let addr = line
            .strip_prefix("tcp:")
            .unwrap_or_else(|| panic!("{line}"));
        let addr: std::net::SocketAddr = addr.parse().unwrap();
        // Not 0.0.0.0: a non-loopback address of this machine, or 127.0.0.1.
        assert!(!addr.ip().is_unspecified(), "{line}");
        assert_ne!(addr.port(), 0, "{line}");
    }
    spec.ctrl_addr = Some("127.0.0.1:0".parse().unwrap());
    let out = run(&spec).unwrap();
    assert!(out.stdout.starts_with("tcp:127.0.0.1:"), "{out:?}");
}

#[test]
fn a_rank_leaving_a_collective_aborts_the_waiters() {
    for ctrl in CTRLS {
        a_rank_leaving_a_collective_aborts_the_waiters_on(ctrl);
    }
}

fn a_rank_leaving_a_collective_aborts_the_waiters_on(ctrl: Ctrl) {
    let out = run(&fake_job_on(ctrl, 3, "abort")).unwrap();
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
fn shared_memory_of_a_killed_job_leaves_nothing() {
    let out = run(&fake_job(2, "shm")).unwrap();
    assert_eq!(out.code, 137, "{out:?}");
    let name = shm::object_name(&out.job_id, "test");
    let lines = rank_lines(&out);
    assert!(lines.contains(&"rank 1 read 42"), "{out:?}");
    assert!(
        lines.contains(&format!("rank 0 shared {name}").as_str()),
        "{out:?}"
    );
    common::assert_nothing_left(&out.job_id);
    assert!(out.elapsed < PROMPT, "{out:?}");
}

/// A rank that breaks the protocol is dropped with `message` (printed by
/// the launcher and told to the rank), and then ends the job by exiting 1.
fn assert_protocol_error(ctrl: Ctrl, role: &str, message: &str) {
    let out = run(&fake_job_on(ctrl, 2, role)).unwrap();
    assert_eq!(out.code, 1, "{ctrl:?}: {out:?}");
    assert!(out.stderr.contains(message), "{ctrl:?}: {out:?}");
    let told = rank_lines(&out);
    assert!(
        told.iter().any(|l| l.contains(message)),
        "{ctrl:?}: {out:?}"
    );
    assert_eq!(out.reason, "rank 0 exited with code 1", "{ctrl:?}: {out:?}");
    assert!(out.elapsed < PROMPT, "{ctrl:?}: {out:?}");
}

#[test]
fn a_malformed_frame_drops_the_rank() {
    // From a rank that said Hello (with the key): an error on either
    // transport, for that connection.
    for ctrl in CTRLS {
        assert_protocol_error(ctrl, "malformed", "rank 0 sent an unknown frame kind");
    }
}

#[test]
fn an_inherited_connection_speaks_only_for_its_rank() {
    // Over the local socket pairs only: over TCP any process with the key
    // may say Hello as any rank not yet connected.
    assert_protocol_error(
        Ctrl::Unix,
        "other-rank",
        "it said Hello as rank 1 on the socket made for rank 0",
    );
}

#[test]
fn hello_with_a_rank_outside_the_job_is_refused() {
    for ctrl in CTRLS {
        assert_protocol_error(
            ctrl,
            "bad-rank",
            "it said Hello as rank 7, but the job has 2 ranks",
        );
    }
}

/// A stand-in for `ssh` in a directory of its own (the launcher recognises
/// ssh by the spawner's name): it skips the options and the host, then
/// runs the remote command line with a shell in an empty environment, as
/// sshd would; so the rank's environment must travel on that command line.
/// With `detach`, the command runs in a session of its own and outlives
/// the client when the launcher kills it, like a real remote process.
struct FakeSsh(std::path::PathBuf);

impl FakeSsh {
    fn new(tag: &str, detach: bool) -> FakeSsh {
        let dir =
            std::env::temp_dir().join(format!("gex-run-fake-ssh-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let run = if detach {
            r#"env -i PATH="$PATH" setsid sh -c "$*" 2>&1 | cat"#
        } else {
            r#"exec env -i PATH="$PATH" sh -c "$*""#
        };
        let script = format!(
            "#!/bin/sh\nwhile [ $# -gt 0 ]; do\n  case \"$1\" in\n    -o|-p|-l|-i) shift 2 ;;\n    -*) shift ;;\n    *) break ;;\n  esac\ndone\nshift\n{run}\n"
        );
        let path = dir.join("ssh");
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        FakeSsh(dir)
    }

    fn template(&self) -> String {
        format!("{} -o BatchMode=yes {{host}}", self.0.join("ssh").display())
    }
}

impl Drop for FakeSsh {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn ranks_started_through_ssh_get_their_environment_and_a_tcp_control_plane() {
    let ssh = FakeSsh::new("exchange", false);
    let mut spec = fake_job_on(Ctrl::Unix, 3, "exchange");
    // Automatic: TCP, because the spawner is ssh.
    spec.ctrl = None;
    spec.hosts = vec!["node-a".into(), "node-b".into()];
    spec.spawn = Some(ssh.template());
    let out = run(&spec).unwrap();
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

    // What arrives on the remote side, quoting included.
    let mut spec = common::sh(
        3,
        r#"echo "rank $GEX_RANK on $GEX_HOST of $GEX_HOSTS: $GEX_CTRL [$EXTRA] [$HVAR]""#,
    );
    spec.env
        .push(("EXTRA".into(), "it's \"quoted\" $HOME".into()));
    spec.hosts = vec!["node-a".into(), "node-b".into()];
    spec.host_env = vec![("node-b".into(), "HVAR".into(), "b b".into())];
    spec.spawn = Some(ssh.template());
    let out = run(&spec).unwrap();
    assert_eq!(out.code, 0, "{out:?}");
    let mut lines: Vec<&str> = out.stdout.lines().collect();
    lines.sort();
    assert_eq!(lines.len(), 3, "{out:?}");
    for (r, line) in lines.iter().enumerate() {
        let host = if r < 2 { "node-a" } else { "node-b" };
        let hvar = if r < 2 { "" } else { "b b" };
        let (head, tail) = line
            .split_once(": tcp:")
            .unwrap_or_else(|| panic!("{line}"));
        assert_eq!(head, format!("rank {r} on {host} of 2"));
        assert!(
            tail.ends_with(&format!(" [it's \"quoted\" $HOME] [{hvar}]")),
            "{line}"
        );
    }
}

#[test]
fn a_remote_rank_ends_when_the_launcher_closes_its_connection() {
    let ssh = FakeSsh::new("watched", true);
    let mut spec = fake_job_on(Ctrl::Unix, 2, "watched");
    spec.ctrl = None;
    spec.hosts = vec!["node-a".into(), "node-b".into()];
    spec.spawn = Some(ssh.template());
    let out = run(&spec).unwrap();
    assert_eq!(out.code, 3, "{out:?}");
    assert!(out.elapsed < PROMPT, "{out:?}");
    let line = rank_lines(&out)
        .into_iter()
        .find(|l| l.starts_with("rank 1 pid "))
        .unwrap_or_else(|| panic!("{out:?}"));
    let pid: u32 = line["rank 1 pid ".len()..].trim().parse().unwrap();
    // The launcher killed the ssh client only; the rank itself must notice
    // that its control connection closed.
    match wait_for_exit(pid) {
        Some(ended) => assert!(ended, "remote rank {pid} outlived the job"),
        None => eprintln!("skipped: no pidfd_open on this kernel"),
    }
}

/// The job key reaches every rank without ever being in an environment or
/// on a command line: through an inherited pipe when a rank is started
/// directly, as the first line of its standard input through a spawner
/// (here `env`, and a stand-in for ssh, which puts the environment on the
/// remote command line).
#[test]
fn the_job_key_is_in_no_environment_and_on_no_command_line() {
    let check = |spec: &JobSpec, via: &str, fd_zero: bool| {
        let out = run(spec).unwrap();
        assert_eq!(out.code, 0, "{via}: {out:?}");
        let mut lines = rank_lines(&out);
        lines.sort();
        assert_eq!(lines.len(), spec.ranks as usize, "{via}: {out:?}");
        for (r, l) in lines.iter().enumerate() {
            assert!(
                l.starts_with(&format!("rank {r} key hidden (fd ")),
                "{via}: {l}"
            );
            assert_eq!(l.ends_with("(fd 0)"), fd_zero, "{via}: {l}");
        }
    };
    // A key the user exported does not reach the ranks either.
    for ctrl in CTRLS {
        let mut spec = fake_job_on(ctrl, 3, "key-hidden");
        spec.env
            .push(("GEX_JOB_KEY".into(), "exported-by-the-user".into()));
        check(&spec, &format!("direct, {ctrl:?}"), false);
    }
    let mut spec = fake_job(2, "key-hidden");
    spec.spawn = Some("env GEX_FAKE_HOST={host}".into());
    check(&spec, "env spawner", true);
    let ssh = FakeSsh::new("key", false);
    let mut spec = fake_job_on(Ctrl::Unix, 3, "key-hidden");
    spec.ctrl = None;
    spec.hosts = vec!["node-a".into(), "node-b".into()];
    spec.spawn = Some(ssh.template());
    check(&spec, "ssh", true);
}
