//! Datagram authentication through a real socket: a real `UdpConduit` as
//! rank 0 of a job of two, whose rank 1 is this test (a protocol endpoint
//! behind a std `UdpSocket`), with this test also playing the launcher's
//! control plane. A forger who knows everything public — the job tag, the
//! ranks, the sequence numbers — but not the key, and a replay of another
//! job's datagrams, change nothing; a genuine exchange afterwards
//! completes with exact data.
//!
//! One test per process: it sets this process's environment for the
//! bootstrap (as `gex-run` would for a rank).

use std::io::Write;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixListener;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use gex_bootstrap::wire::{
    self as bw, encode_exchange_result, parse_hello, read_frame, write_frame, Challenge, Kind,
    ENV_CTRL, ENV_JOB_ID, ENV_KEY_FD, ENV_RANK, ENV_SIZE,
};
use gex_bootstrap::Bootstrap;
use gex_conduit::{AmSink, Conduit, IncomingAm, OutgoingAm, PollScope};
use gex_conduit_udp::proto::{self, wire as pw, Config, Endpoint};
use gex_conduit_udp::{wire, UdpConduit, UdpSettings};
use gex_types::AmCategory;

/// Bound on every wait.
const BOUND: Duration = Duration::from_secs(30);

type Delivered = (u8, Vec<i32>, Vec<u8>);

#[derive(Default)]
struct Recorder(Mutex<Vec<Delivered>>);

impl AmSink for Recorder {
    fn deliver(&self, msg: &IncomingAm<'_>) {
        self.0
            .lock()
            .unwrap()
            .push((msg.handler, msg.args.to_vec(), msg.payload.to_vec()));
    }
}

/// An AM request to `handler` with `args` and `payload`, as the udp
/// conduit encodes it into one protocol message.
fn am(handler: u8, args: &[i32], payload: &[u8]) -> Vec<u8> {
    let mut msg = Vec::new();
    wire::encode(
        &OutgoingAm::new(AmCategory::Medium, true, handler, args, payload),
        &mut msg,
    );
    msg
}

/// Everything `ep` transmits now, with destinations.
fn drain(ep: &mut Endpoint, now: Instant) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while ep.poll_transmit(now, &mut buf).is_some() {
        out.push(buf.clone());
    }
    out
}

/// The launcher's side of the control plane for rank 0; rank 1's
/// contributions are made up: its udp address is `rank1`, and it agrees
/// with everything else rank 0 says.
fn serve_control_plane(listener: UnixListener, key: String, rank1: SocketAddr) {
    let (mut conn, _) = listener.accept().expect("rank 0 connects");
    let ch = Challenge {
        key_required: true,
        nonce: [9; bw::NONCE_LEN],
    };
    write_frame(&mut conn, Kind::Challenge, &bw::challenge_body(&ch)).unwrap();
    let (kind, body) = read_frame(&mut conn).expect("Hello");
    assert_eq!(kind, Kind::Hello);
    let hello = parse_hello(&body).expect("a Hello");
    assert_eq!(hello.rank, 0);
    assert_eq!(
        hello.proof,
        Some(bw::hello_proof(&key, &ch.nonce, &hello)),
        "a proof of the key from GEX_KEY_FD"
    );
    let welcome = bw::welcome_proof(&key, &ch.nonce, &hello);
    write_frame(&mut conn, Kind::Welcome, &welcome).unwrap();
    while let Ok((kind, mine)) = read_frame(&mut conn) {
        if kind != Kind::Exchange {
            continue;
        }
        // The udp conduit's address exchange: "host\naddr\nauth\nrcvbuf".
        let text = String::from_utf8_lossy(&mine).into_owned();
        let fields: Vec<&str> = text.split('\n').collect();
        let theirs = match fields[..] {
            [_, addr, auth, rcvbuf] if addr.parse::<SocketAddr>().is_ok() => {
                format!("rank1-host\n{rank1}\n{auth}\n{rcvbuf}").into_bytes()
            }
            _ => mine.clone(),
        };
        let result = encode_exchange_result(&[mine, theirs]);
        if write_frame(&mut conn, Kind::ExchangeResult, &result).is_err() {
            break;
        }
    }
}

/// Rank 0's bootstrap environment, with the key in a pipe (as `gex-run`
/// hands it over).
fn set_rank0_env(ctrl: &std::path::Path, key: &str) {
    let mut fds = [0; 2];
    // SAFETY: pipe writes two descriptors into the array it is given.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors were just created and are owned here.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let mut w = std::fs::File::from(w);
    writeln!(w, "{key}").unwrap();
    drop(w);
    // The bootstrap reads and closes it.
    let fd = r.as_raw_fd();
    std::mem::forget(r);
    std::env::set_var(ENV_KEY_FD, fd.to_string());
    std::env::set_var(ENV_CTRL, ctrl);
    std::env::set_var(ENV_RANK, "0");
    std::env::set_var(ENV_SIZE, "2");
    std::env::set_var(ENV_JOB_ID, format!("authtest{}", std::process::id()));
    std::env::remove_var("GEX_JOB_KEY");
}

#[test]
fn forged_and_replayed_datagrams_change_nothing() {
    let key = "ab".repeat(32);
    let rank1 = UdpSocket::bind("127.0.0.1:0").unwrap();
    rank1
        .set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let rank1_addr = rank1.local_addr().unwrap();
    let dir = std::env::temp_dir().join(format!("gex-udp-auth-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ctrl = dir.join("ctrl.sock");
    let listener = UnixListener::bind(&ctrl).unwrap();
    let k = key.clone();
    let launcher = std::thread::spawn(move || serve_control_plane(listener, k, rank1_addr));
    set_rank0_env(&ctrl, &key);

    let boot = Bootstrap::from_env().expect("bootstrap from the fake launcher");
    assert_eq!((boot.rank(), boot.size()), (0, 2));
    // The conduit's settings in code, not in the environment.
    let mut settings = UdpSettings::default();
    settings.bypass = false;
    let conduit = UdpConduit::with_settings(boot, &settings).expect("udp conduit");
    let to = conduit.local_addr();
    let sink = Recorder::default();
    let _ = std::fs::remove_dir_all(&dir);

    let cfg = Config {
        key: proto::key_from_text(key.as_bytes()),
        ..Config::default()
    };
    let tag = proto::job_tag(&cfg.key);
    let forger = UdpSocket::bind("127.0.0.1:0").unwrap();

    // 1. A valid header (this job's tag, source rank 1, destination rank 0,
    //    in-window sequence numbers 0..8, an ACK block) carrying an AM to
    //    handler 201, with a made-up MAC.
    let mut body = Vec::new();
    let forged_am = am(201, &[66, 66], b"forged payload");
    pw::encode_chunk(
        &mut body,
        true,
        true,
        Some(forged_am.len() as u32),
        &forged_am,
    );
    let mut forged = Vec::new();
    for seq in 0..8u32 {
        let mut d = Vec::new();
        pw::encode_datagram(
            &pw::Datagram {
                tag,
                src: 1,
                dst: 0,
                ack: Some(pw::AckInfo::default()),
                reply_ack: None,
                data: Some(pw::DataInfo {
                    lane: pw::Lane::Request,
                    seq,
                    body: &body,
                }),
            },
            &mut d,
        );
        for (i, b) in d[pw::MAC_AT..pw::COMMON_HEADER_LEN].iter_mut().enumerate() {
            *b = (seq as u8).wrapping_mul(31).wrapping_add(i as u8);
        }
        forged.push(d);
    }
    // 2. Datagrams captured from another job (another key) of the same
    //    shape: rank 1 to rank 0, sequence 0 on.
    let mut other = Endpoint::new(
        1,
        2,
        Config {
            key: proto::key_from_text(b"another job"),
            ..Config::default()
        },
    );
    let t0 = Instant::now();
    other.send(0, &am(202, &[77], b"replayed"), t0).unwrap();
    other.send(0, &am(202, &[78], &[9u8; 100_000]), t0).unwrap();
    let replayed = drain(&mut other, t0);
    assert!(replayed.len() >= 2);

    for d in &forged {
        forger.send_to(d, to).unwrap();
    }
    for d in &replayed {
        forger.send_to(d, to).unwrap();
    }
    let deadline = Instant::now() + BOUND;
    loop {
        conduit.poll(&sink, PollScope::All);
        let s = conduit.stats();
        if s.dropped_bad_mac == forged.len() as u64 && s.dropped_bad_key == replayed.len() as u64 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the forged datagrams were not all dropped: {s:?}"
        );
    }
    for _ in 0..20 {
        conduit.poll(&sink, PollScope::All);
    }
    let s = conduit.stats();
    assert!(
        sink.0.lock().unwrap().is_empty(),
        "a forged or replayed AM ran"
    );
    assert_eq!(s.datagrams_received, (forged.len() + replayed.len()) as u64);
    assert_eq!(
        (
            s.dropped_malformed,
            s.dropped_misaddressed,
            s.dropped_bad_source,
            s.duplicates_dropped,
            s.out_of_window_dropped
        ),
        (0, 0, 0, 0, 0),
        "{s:?}"
    );
    assert_eq!(s.messages_delivered, 0);
    assert_eq!(s.datagrams_sent, 0, "rank 0 answered a forger: {s:?}");
    // Nothing was acknowledged toward rank 1.
    let mut buf = vec![0u8; 65536];
    assert!(
        rank1.recv_from(&mut buf).is_err(),
        "rank 0 sent rank 1 something after forged datagrams"
    );

    // 3. The genuine rank 1: its sequence numbers start at 0, as the
    //    forger's did; rank 0 must take them and acknowledge exactly them.
    let mut peer = Endpoint::new(1, 2, cfg);
    let big: Vec<u8> = (0..60_000u32).map(|i| (i * 7 + 3) as u8).collect();
    peer.send(0, &am(200, &[7, 8], b"genuine"), t0).unwrap();
    peer.send(0, &am(200, &[9], &big), t0).unwrap();
    let genuine = drain(&mut peer, t0);
    for d in &genuine {
        rank1.send_to(d, to).unwrap();
    }
    let deadline = Instant::now() + BOUND;
    while sink.0.lock().unwrap().len() < 2 {
        conduit.poll(&sink, PollScope::All);
        assert!(Instant::now() < deadline, "the genuine AMs never ran");
    }
    assert_eq!(
        *sink.0.lock().unwrap(),
        vec![
            (200, vec![7, 8], b"genuine".to_vec()),
            (200, vec![9], big.clone())
        ]
    );
    // Rank 0's acknowledgement covers exactly the genuine datagrams.
    let deadline = Instant::now() + BOUND;
    while !peer.is_idle(0) {
        conduit.poll(&sink, PollScope::All);
        if let Ok((n, _)) = rank1.recv_from(&mut buf) {
            let d = pw::decode_datagram(&buf[..n]).expect("rank 0 sends well-formed datagrams");
            let ack = d.ack.expect("an acknowledgement");
            assert!(
                ack.cum as usize <= genuine.len(),
                "rank 0 acknowledged {} datagrams, {} were sent",
                ack.cum,
                genuine.len()
            );
            peer.handle_datagram(&buf[..n], Instant::now());
        }
        assert!(Instant::now() < deadline, "rank 0 never acknowledged");
    }
    let ps = peer.stats();
    assert_eq!(
        (ps.dropped_bad_key, ps.dropped_bad_mac, ps.dropped_malformed),
        (0, 0, 0),
        "rank 0's datagrams authenticate"
    );
    let s = conduit.stats();
    assert_eq!(s.dropped_bad_mac, forged.len() as u64);
    assert_eq!(s.dropped_bad_key, replayed.len() as u64);
    assert_eq!(s.messages_delivered, 2);
    // The fake launcher's thread ends with the process (the conduit keeps
    // the control connection).
    drop(launcher);
}
