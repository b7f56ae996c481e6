//! The socket shell in a job of one rank: a datagram without the job's key
//! is dropped and counted, never delivered; one with it is delivered.

use std::net::UdpSocket;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use gex_bootstrap::Bootstrap;
use gex_conduit::{AmSink, Conduit, IncomingAm, OutgoingAm, PollScope};
use gex_conduit_udp::{proto, wire, UdpConduit, UdpSettings};
use gex_types::AmCategory;

/// What a delivered AM carried: handler, arguments, payload.
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

/// The datagrams an endpoint with `key` emits for one AM to rank 0.
fn datagrams(key: [u8; 32], handler: u8) -> Vec<Vec<u8>> {
    let mut ep = proto::Endpoint::new(
        0,
        1,
        proto::Config {
            key,
            ..proto::Config::default()
        },
    );
    let mut msg = Vec::new();
    let payload = b"payload".to_vec();
    wire::encode(
        &OutgoingAm::new(AmCategory::Medium, true, handler, &[7, 8], &payload),
        &mut msg,
    );
    let now = Instant::now();
    ep.send(0, &msg, now).expect("room for one message");
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while ep.poll_transmit(now, &mut buf).is_some() {
        out.push(buf.clone());
    }
    out
}

#[test]
fn foreign_datagrams_are_dropped_and_counted() {
    // A singleton job: no launcher, so the conduit makes up its own key.
    std::env::remove_var("GEX_JOB_KEY");
    let mut settings = UdpSettings::default();
    settings.bypass = false;
    let conduit =
        UdpConduit::with_settings(Bootstrap::singleton(), &settings).expect("udp conduit");
    let sink = Recorder::default();
    let to = conduit.local_addr();
    let out = UdpSocket::bind("127.0.0.1:0").unwrap();

    // The wrong key: dropped and counted.
    let forged = datagrams([0x5e; 32], 200);
    for d in &forged {
        out.send_to(d, to).unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while conduit.stats().dropped_bad_key < forged.len() as u64 {
        assert!(
            Instant::now() < deadline,
            "the forged datagrams never arrived"
        );
        conduit.poll(&sink, PollScope::All);
    }
    for _ in 0..10 {
        conduit.poll(&sink, PollScope::All);
    }
    assert!(
        sink.0.lock().unwrap().is_empty(),
        "a datagram without the key was delivered"
    );
    assert_eq!(conduit.stats().dropped_bad_key, forged.len() as u64);
}
