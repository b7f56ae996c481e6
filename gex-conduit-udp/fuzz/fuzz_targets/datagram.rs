//! Fuzzes the udp protocol's datagram decoder and `Endpoint::handle_datagram`.
//!
//! Run from gex-conduit-udp/: `cargo +nightly fuzz run datagram -- -max_total_time=60`.
//!
//! The input is a sequence of datagrams, each prefixed by one control byte and
//! a two-byte little-endian length. Control bit 0 patches the magic, version
//! and job tag into the datagram (bytes 0..3 and 4..12), bit 1 patches a
//! valid source (rank 0 or 2) and the destination (rank 1) into bytes 12..20,
//! and bit 5 seals it with the job's MAC (bytes 20..36), so that the input
//! reaches past those checks into the ACK, DATA and reassembly paths; bits
//! 2-4 advance the clock (0..7 times 3 ms) so that retransmission, loss and
//! delayed-ACK timers fire. Bit 6 turns authentication off for the whole
//! input (when set on the first datagram). Every datagram also goes
//! through `decode_datagram` on its own, and the endpoint's transmit and
//! message queues are drained between datagrams (everything it emits must
//! decode and fit `max_datagram`).
#![no_main]

use std::time::{Duration, Instant};

use gex_conduit_udp::proto::{decode_datagram, job_tag, wire, Auth, Config, Endpoint};
use libfuzzer_sys::fuzz_target;

const KEY: [u8; 32] = [0x5a; 32];

fuzz_target!(|data: &[u8]| {
    // The whole input as one datagram.
    let _ = decode_datagram(data);

    let cfg = Config {
        key: KEY,
        auth: data.first().is_none_or(|c| c & 64 == 0),
        max_datagram: 512,
        window: 8,
        ..Config::default()
    };
    let t0 = Instant::now();
    let mut now = t0;
    // Rank 1 of 3; it also has data of its own outstanding toward ranks 0
    // and 2, so that incoming ACKs have something to acknowledge.
    let auth = Auth::new(&cfg);
    let mut ep = Endpoint::new(1, 3, cfg);
    let _ = ep.send(0, &[0x5a; 1500], now);
    let _ = ep.send(2, b"hello", now);
    let mut buf = Vec::new();
    while ep.poll_transmit(now, &mut buf).is_some() {}

    let mut rest = data;
    while rest.len() >= 3 {
        let ctl = rest[0];
        let len = u16::from_le_bytes([rest[1], rest[2]]) as usize;
        rest = &rest[3..];
        let take = len.min(rest.len());
        let mut dgram = rest[..take].to_vec();
        rest = &rest[take..];
        if ctl & 1 != 0 && dgram.len() >= 12 {
            dgram[0..2].copy_from_slice(b"GX");
            dgram[2] = wire::VERSION;
            dgram[4..12].copy_from_slice(&job_tag(&KEY).to_le_bytes());
        }
        if ctl & 2 != 0 && dgram.len() >= 20 {
            let src: u32 = if dgram[12] & 1 == 0 { 0 } else { 2 };
            dgram[12..16].copy_from_slice(&src.to_le_bytes());
            dgram[16..20].copy_from_slice(&1u32.to_le_bytes());
        }
        if ctl & 32 != 0 && dgram.len() >= wire::COMMON_HEADER_LEN {
            auth.seal(&mut dgram, &[]);
        }
        let _ = decode_datagram(&dgram);
        now += Duration::from_millis(3 * u64::from((ctl >> 2) & 7));
        ep.handle_datagram(&dgram, now);
        if ep.next_timeout().is_some_and(|t| t <= now) {
            ep.handle_timeout(now);
        }
        while ep.poll_transmit(now, &mut buf).is_some() {
            assert!(buf.len() <= 512);
            assert!(
                decode_datagram(&buf).is_some(),
                "emitted an undecodable datagram"
            );
        }
        while ep.poll_message().is_some() {}
        assert!(ep.in_flight(0) <= 8 && ep.in_flight(2) <= 8);
        let _ = ep.dead_peer(now);
    }
    let _ = (ep.stats(), ep.buffered_bytes());
});
