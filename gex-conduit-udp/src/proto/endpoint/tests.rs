use super::*;
use crate::proto::wire::{encode_chunk, AckInfo, DataInfo, Datagram, Kind};

fn cfg() -> Config {
    Config {
        key: [0x5a; 32],
        ..Config::default()
    }
}

/// The job tag of `cfg()`.
fn tag() -> u64 {
    crate::proto::job_tag(&cfg().key)
}

/// Encodes `d` into `buf` and seals it with `cfg()`'s key, as a peer of the
/// job would.
fn encode_datagram(d: &Datagram<'_>, buf: &mut Vec<u8>) {
    crate::proto::wire::encode_datagram(d, buf);
    Auth::new(&cfg()).seal(buf, &[]);
}

fn drain(ep: &mut Endpoint, now: Instant) -> Vec<(u32, Vec<u8>)> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while let Some(dst) = ep.poll_transmit(now, &mut buf) {
        assert!(buf.len() <= ep.config().max_datagram);
        out.push((dst, buf.clone()));
    }
    out
}

/// Exchanges datagrams between a (rank 0) and b (rank 1) without loss until
/// neither has anything to send, firing delayed ACKs; returns the time reached.
fn settle(a: &mut Endpoint, b: &mut Endpoint, mut now: Instant) -> Instant {
    for _ in 0..10_000 {
        let mut moved = false;
        for (dst, d) in drain(a, now) {
            assert_eq!(dst, 1);
            b.handle_datagram(&d, now);
            moved = true;
        }
        for (dst, d) in drain(b, now) {
            assert_eq!(dst, 0);
            a.handle_datagram(&d, now);
            moved = true;
        }
        if !moved {
            match [a.next_timeout(), b.next_timeout()]
                .into_iter()
                .flatten()
                .min()
            {
                Some(t) if t <= now + Duration::from_millis(2) => {
                    now = now.max(t);
                    a.handle_timeout(now);
                    b.handle_timeout(now);
                }
                _ => return now,
            }
        }
    }
    panic!("no quiescence");
}

fn messages(ep: &mut Endpoint) -> Vec<(u32, Vec<u8>)> {
    std::iter::from_fn(|| ep.poll_message()).collect()
}

#[test]
fn roundtrip_small_and_large() {
    let t0 = Instant::now();
    let mut a = Endpoint::new(0, 2, cfg());
    let mut b = Endpoint::new(1, 2, cfg());
    let big: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
    a.send(1, b"hello", t0).unwrap();
    a.send(1, b"", t0).unwrap();
    a.send(1, &big, t0).unwrap();
    b.send(0, b"back", t0).unwrap();
    let now = settle(&mut a, &mut b, t0);
    assert_eq!(
        messages(&mut b),
        vec![(0, b"hello".to_vec()), (0, vec![]), (0, big)]
    );
    assert_eq!(messages(&mut a), vec![(1, b"back".to_vec())]);
    assert!(a.is_idle(1) && b.is_idle(0));
    assert_eq!(a.in_flight(1), 0);
    assert_eq!(a.buffered_bytes() + b.buffered_bytes(), 0);
    assert_eq!(a.next_timeout(), None, "{:?}", now);
    assert_eq!(a.stats().retransmits, 0);
    assert_eq!(b.stats().messages_delivered, 3);
}

#[test]
fn small_messages_share_datagrams() {
    let t0 = Instant::now();
    let mut a = Endpoint::new(0, 2, cfg());
    for i in 0..100u8 {
        a.send(1, &[i; 20], t0).unwrap();
    }
    let out = drain(&mut a, t0);
    // 100 * (20 + 7) = 2700 body bytes, 1409 per datagram.
    assert_eq!(out.len(), 2);
    let mut b = Endpoint::new(1, 2, cfg());
    for (_, d) in &out {
        b.handle_datagram(d, t0);
    }
    let got = messages(&mut b);
    assert_eq!(got.len(), 100);
    for (i, (src, m)) in got.into_iter().enumerate() {
        assert_eq!((src, m), (0, vec![i as u8; 20]));
    }
}

#[test]
fn window_bounds_flight_and_backpressure_bounds_queue() {
    let t0 = Instant::now();
    let c = Config {
        window: 4,
        max_datagram: 512,
        ..cfg()
    };
    let mut a = Endpoint::new(0, 2, c);
    let max_body = a.max_body();
    let msg = vec![1u8; max_body - 7];
    let mut accepted = 0;
    while a.can_send(1, msg.len()) {
        a.send(1, &msg, t0).unwrap();
        accepted += 1;
    }
    assert_eq!(accepted, 4);
    assert_eq!(a.send(1, &msg, t0), Err(Backpressure));
    assert_eq!(a.stats().messages_sent, 4);
    // A message larger than the whole budget goes only into an empty queue.
    let huge = vec![2u8; 10 * max_body];
    assert!(!a.can_send(1, huge.len()));
    let out = drain(&mut a, t0);
    assert_eq!(out.len(), 4);
    assert_eq!(a.in_flight(1), 4);
    assert!(a.can_send(1, huge.len()));
    a.send(1, &huge, t0).unwrap();
    assert!(drain(&mut a, t0).is_empty(), "window is full");
    assert_eq!(a.in_flight(1), 4);
    assert!(!a.can_send(1, 0));
    assert!(!a.can_send(2, 0), "no such peer");
    assert!(!a.can_send(1, MAX_MESSAGE + 1));
    let mut b = Endpoint::new(1, 2, c_with(4, 512));
    let mut now = t0;
    for (_, d) in &out {
        b.handle_datagram(d, now);
    }
    now = settle(&mut a, &mut b, now);
    let got = messages(&mut b);
    assert_eq!(got.len(), 5);
    assert_eq!(got[4].1, huge);
    assert!(a.is_idle(1), "{now:?}");
}

fn c_with(window: usize, max_datagram: usize) -> Config {
    Config {
        window,
        max_datagram,
        ..cfg()
    }
}

#[test]
fn delayed_ack_then_immediate_on_gap() {
    let t0 = Instant::now();
    let mut a = Endpoint::new(0, 2, cfg());
    let mut b = Endpoint::new(1, 2, cfg());
    a.send(1, b"x", t0).unwrap();
    let d1 = drain(&mut a, t0);
    assert_eq!(a.next_timeout(), Some(t0 + Duration::from_millis(50)));
    b.handle_datagram(&d1[0].1, t0);
    assert!(drain(&mut b, t0).is_empty(), "ACK is delayed");
    let t1 = t0 + Duration::from_millis(1);
    assert_eq!(b.next_timeout(), Some(t1));
    b.handle_timeout(t1);
    let acks = drain(&mut b, t1);
    assert_eq!(acks.len(), 1);
    assert_eq!(b.stats().acks_sent, 1);
    a.handle_datagram(&acks[0].1, t1);
    assert_eq!(a.in_flight(1), 0);
    assert_eq!(a.next_timeout(), None);
    // RTT sample of 1 ms: RTO = 1 + 4 * 0.5 = 3 ms, clamped to min_rto.
    assert_eq!(a.peers[1].snd[0].rto, Duration::from_millis(5));

    // Out of order: immediate ACK with a SACK bit.
    a.send(1, b"y", t1).unwrap();
    let lost = drain(&mut a, t1);
    a.send(1, b"z", t1).unwrap();
    let d3 = drain(&mut a, t1);
    b.handle_datagram(&d3[0].1, t1);
    let acks = drain(&mut b, t1);
    assert_eq!(acks.len(), 1);
    let ack = decode_datagram(&acks[0].1).unwrap().ack.unwrap();
    assert_eq!((ack.cum, ack.nsack, ack.sack[0]), (1, 1, 1));
    a.handle_datagram(&acks[0].1, t1);
    assert_eq!(a.in_flight(1), 1);
    // The duplicate of d3 is counted and ACKed at once.
    b.handle_datagram(&d3[0].1, t1);
    assert_eq!(b.stats().duplicates_dropped, 1);
    assert_eq!(drain(&mut b, t1).len(), 1);
    b.handle_datagram(&lost[0].1, t1);
    assert_eq!(
        messages(&mut b),
        vec![(0, b"x".to_vec()), (0, b"y".to_vec()), (0, b"z".to_vec())]
    );
    assert_eq!(drain(&mut b, t1).len(), 1, "gap filled: immediate ACK");
}

#[test]
fn rto_backs_off_and_clamps() {
    let t0 = Instant::now();
    let c = Config {
        initial_rto: Duration::from_millis(400),
        max_rto: Duration::from_secs(2),
        ..cfg()
    };
    let mut a = Endpoint::new(0, 2, c);
    a.send(1, b"x", t0).unwrap();
    assert_eq!(drain(&mut a, t0).len(), 1);
    let mut now = t0;
    let mut gaps = Vec::new();
    for _ in 0..5 {
        let t = a.next_timeout().unwrap();
        gaps.push(t - now);
        now = t;
        a.handle_timeout(now);
        assert_eq!(drain(&mut a, now).len(), 1);
    }
    let ms = |m| Duration::from_millis(m);
    assert_eq!(gaps, vec![ms(400), ms(800), ms(1600), ms(2000), ms(2000)]);
    assert_eq!(a.stats().retransmits, 5);
    assert_eq!(a.stats().rto_expirations, 5);
}

#[test]
fn fast_retransmit_on_sack() {
    let t0 = Instant::now();
    let mut a = Endpoint::new(0, 2, cfg());
    let mut b = Endpoint::new(1, 2, cfg());
    let mut out = Vec::new();
    for i in 0..6u8 {
        a.send(1, &vec![i; 1300], t0).unwrap();
        out.extend(drain(&mut a, t0));
    }
    assert_eq!(out.len(), 6);
    for (i, (_, d)) in out.iter().enumerate() {
        if i != 1 {
            b.handle_datagram(d, t0);
        }
    }
    for (_, d) in drain(&mut b, t0) {
        a.handle_datagram(&d, t0);
    }
    assert!(a.stats().fast_retransmits >= 1);
    let re = drain(&mut a, t0);
    assert_eq!(re.len(), 1);
    assert_eq!(a.stats().retransmits, 1);
    b.handle_datagram(&re[0].1, t0);
    assert_eq!(messages(&mut b).len(), 6);
}

/// Sends 8 datagrams of one message each from `a` to rank 1 at `t0`.
fn eight(a: &mut Endpoint, t0: Instant) -> Vec<(u32, Vec<u8>)> {
    let mut out = Vec::new();
    for i in 0..8u8 {
        a.send(1, &vec![i; 1300], t0).unwrap();
        out.extend(drain(a, t0));
    }
    assert_eq!(out.len(), 8);
    out
}

/// Every message of [`eight`] arrived at `b` exactly once, in order.
fn got_eight(b: &mut Endpoint) {
    let got = messages(b);
    assert_eq!(got.len(), 8);
    for (i, (src, m)) in got.iter().enumerate() {
        assert_eq!((*src, m.as_slice()), (0, &vec![i as u8; 1300][..]));
    }
}

/// A peer that is slow to acknowledge (descheduled: ranks outnumber
/// cores) costs one datagram at the timeout, not a window of them.
#[test]
fn a_slow_peer_costs_one_retransmission() {
    let t0 = Instant::now();
    let (mut a, mut b) = (Endpoint::new(0, 2, cfg()), Endpoint::new(1, 2, cfg()));
    let out = eight(&mut a, t0);
    for (_, d) in &out {
        b.handle_datagram(d, t0);
    }
    // b's acknowledgement comes after a's timeout.
    let t1 = a.next_timeout().unwrap();
    a.handle_timeout(t1);
    let again = drain(&mut a, t1);
    assert_eq!(again.len(), 1, "the timeout resent a whole window");
    b.handle_timeout(t1);
    for (_, d) in drain(&mut b, t1) {
        a.handle_datagram(&d, t1);
    }
    // It acknowledged datagrams sent once: nothing more goes again.
    assert!(drain(&mut a, t1).is_empty());
    b.handle_datagram(&again[0].1, t1);
    settle(&mut a, &mut b, t1);
    got_eight(&mut b);
    assert_eq!(a.stats().retransmits, 1);
    assert_eq!(b.stats().duplicates_dropped, 1);
}

/// When only the resent datagram is acknowledged after a timeout, the rest
/// of the window was lost too and goes again at once.
#[test]
fn a_lost_window_goes_again_after_the_probe() {
    let t0 = Instant::now();
    let (mut a, mut b) = (Endpoint::new(0, 2, cfg()), Endpoint::new(1, 2, cfg()));
    let _lost = eight(&mut a, t0);
    let t1 = a.next_timeout().unwrap();
    a.handle_timeout(t1);
    let probe = drain(&mut a, t1);
    assert_eq!(probe.len(), 1);
    b.handle_datagram(&probe[0].1, t1);
    b.handle_timeout(t1 + Duration::from_millis(50));
    for (_, d) in drain(&mut b, t1) {
        a.handle_datagram(&d, t1);
    }
    let rest = drain(&mut a, t1);
    assert_eq!(rest.len(), 7, "the rest of the window waits for timeouts");
    for (_, d) in &rest {
        b.handle_datagram(d, t1);
    }
    settle(&mut a, &mut b, t1);
    got_eight(&mut b);
    assert_eq!(a.stats().retransmits, 8);
}

/// The acknowledgement of a datagram sent twice may be for its first
/// transmission: it must not pass for that of the second, which would
/// declare lost everything sent in between.
#[test]
fn an_ambiguous_ack_declares_nothing_lost() {
    let t0 = Instant::now();
    let (mut a, mut b) = (Endpoint::new(0, 2, cfg()), Endpoint::new(1, 2, cfg()));
    let out = eight(&mut a, t0);
    // The first four arrive; the other four are still on their way.
    for (_, d) in &out[..4] {
        b.handle_datagram(d, t0);
    }
    let t1 = a.next_timeout().unwrap();
    a.handle_timeout(t1);
    let again = drain(&mut a, t1);
    assert_eq!(again.len(), 1);
    b.handle_timeout(t1);
    for (_, d) in drain(&mut b, t1) {
        a.handle_datagram(&d, t1);
    }
    // Past the loss threshold of the four in flight, before the next
    // timeout: none may be declared lost.
    let t2 = t0 + Duration::from_millis(120);
    assert!(a.next_timeout().unwrap() > t2);
    a.handle_timeout(t2);
    assert_eq!(a.stats().fast_retransmits, 0);
    assert!(drain(&mut a, t2).is_empty());
    for (_, d) in out[4..].iter().chain(&again) {
        b.handle_datagram(d, t2);
    }
    settle(&mut a, &mut b, t2);
    got_eight(&mut b);
    assert_eq!(a.stats().retransmits, 1);
}

#[test]
fn sequence_numbers_wrap() {
    let t0 = Instant::now();
    let c = c_with(8, 512);
    let mut a = Endpoint::new(0, 2, c.clone());
    let mut b = Endpoint::new(1, 2, c);
    let start = (1u64 << 32) - 5;
    a.peers[1].snd[0].una = start;
    b.peers[0].rcv[0].next = start;
    let mut now = t0;
    let mut expect = Vec::new();
    for i in 0..40u32 {
        let m = vec![i as u8; 300 + i as usize * 13];
        while a.send(1, &m, now).is_err() {
            now = settle(&mut a, &mut b, now);
        }
        expect.push((0, m));
    }
    settle(&mut a, &mut b, now);
    assert_eq!(messages(&mut b), expect);
    assert!(a.peers[1].snd[0].una > 1 << 32);
    assert_eq!(a.stats().retransmits, 0);
}

#[test]
fn strangers_and_nonsense_are_dropped() {
    let t0 = Instant::now();
    let mut a = Endpoint::new(0, 3, cfg());
    let mut b = Endpoint::new(1, 3, cfg());
    a.send(1, b"hi", t0).unwrap();
    let d = drain(&mut a, t0).pop().unwrap().1;

    let mut wrong_key = d.clone();
    wrong_key[4] ^= 1;
    b.handle_datagram(&wrong_key, t0);
    assert_eq!(b.stats().dropped_bad_key, 1);

    let mut c = Endpoint::new(2, 3, cfg());
    c.handle_datagram(&d, t0);
    assert_eq!(c.stats().dropped_misaddressed, 1);

    let mut from_nowhere = d.clone();
    from_nowhere[12..16].copy_from_slice(&7u32.to_le_bytes());
    b.handle_datagram(&from_nowhere, t0);
    assert_eq!(
        b.stats().dropped_bad_mac,
        1,
        "a changed source breaks the MAC"
    );
    Auth::new(&cfg()).seal(&mut from_nowhere, &[]);
    b.handle_datagram(&from_nowhere, t0);
    assert_eq!(b.stats().dropped_bad_source, 1);
    b.handle_datagram(&d[..d.len() - 1], t0);
    assert_eq!(b.stats().dropped_bad_mac, 2, "a truncation breaks the MAC");
    b.handle_datagram(b"GX", t0);
    // An ACK for data never sent.
    let mut bogus = Vec::new();
    encode_datagram(
        &Datagram {
            tag: tag(),
            src: 0,
            dst: 1,
            ack: Some(AckInfo {
                cum: 3,
                ..AckInfo::default()
            }),
            reply_ack: None,
            data: None,
        },
        &mut bogus,
    );
    b.handle_datagram(&bogus, t0);
    assert_eq!(b.stats().dropped_malformed, 2);
    assert!(b.poll_message().is_none());
    assert!(b.peers[0].last_heard.is_none());

    // A datagram beyond the receive window.
    let mut far = Vec::new();
    let body = {
        let mut v = Vec::new();
        encode_chunk(&mut v, true, true, Some(1), b"!");
        v
    };
    encode_datagram(
        &Datagram {
            tag: tag(),
            src: 0,
            dst: 1,
            ack: None,
            reply_ack: None,
            data: Some(DataInfo {
                lane: Lane::Request,
                seq: 256,
                body: &body,
            }),
        },
        &mut far,
    );
    b.handle_datagram(&far, t0);
    assert_eq!(b.stats().out_of_window_dropped, 1);
    b.handle_datagram(&d, t0);
    assert_eq!(b.poll_message(), Some((0, b"hi".to_vec())));
    assert_eq!(b.stats().datagrams_received, 8);
}

#[test]
fn framing_violations_do_not_deliver() {
    let t0 = Instant::now();
    let mut b = Endpoint::new(1, 2, cfg());
    let mut seq = 0;
    let mut feed = |b: &mut Endpoint, chunks: &[(bool, bool, Option<u32>, &[u8])]| {
        let mut body = Vec::new();
        for &(f, l, t, bytes) in chunks {
            encode_chunk(&mut body, f, l, t, bytes);
        }
        let mut d = Vec::new();
        encode_datagram(
            &Datagram {
                tag: tag(),
                src: 0,
                dst: 1,
                ack: None,
                reply_ack: None,
                data: Some(DataInfo {
                    lane: Lane::Request,
                    seq,
                    body: &body,
                }),
            },
            &mut d,
        );
        seq += 1;
        b.handle_datagram(&d, t0);
    };
    // Continuation without a start; a start never finished; overlong; short.
    feed(&mut b, &[(false, true, None, b"ab")]);
    feed(
        &mut b,
        &[(true, false, Some(4), b"ab"), (true, true, Some(1), b"c")],
    );
    feed(
        &mut b,
        &[(true, false, Some(3), b"ab"), (false, true, None, b"cd")],
    );
    feed(
        &mut b,
        &[(true, false, Some(3), b"ab"), (false, true, None, b"")],
    );
    assert_eq!(b.stats().dropped_malformed, 4);
    assert_eq!(messages(&mut b), vec![(0, b"c".to_vec())]);
    assert_eq!(b.buffered_bytes(), 0);
}

#[test]
fn dead_peer_after_timeout_only() {
    let t0 = Instant::now();
    let c = Config {
        peer_timeout: Duration::from_secs(3),
        ..cfg()
    };
    let mut a = Endpoint::new(0, 2, c);
    assert_eq!(a.dead_peer(t0 + Duration::from_secs(100)), None, "idle");
    a.send(1, b"x", t0).unwrap();
    drain(&mut a, t0);
    assert_eq!(a.dead_peer(t0 + Duration::from_millis(2999)), None);
    assert_eq!(
        a.dead_peer(t0 + Duration::from_secs(3)),
        Some((1, Duration::from_secs(3)))
    );
}

#[test]
fn config_is_clamped() {
    let a = Endpoint::new(
        0,
        1,
        Config {
            max_datagram: 10,
            window: 0,
            min_rto: Duration::from_secs(5),
            max_rto: Duration::from_secs(1),
            ..cfg()
        },
    );
    assert_eq!(a.config().max_datagram, MIN_DATAGRAM);
    assert_eq!(a.config().window, 1);
    assert_eq!(a.config().min_rto, Duration::from_secs(1));
    assert_eq!(a.max_body(), MIN_DATAGRAM - MAX_OVERHEAD);
    let a = Endpoint::new(
        0,
        1,
        Config {
            max_datagram: 1 << 20,
            ..cfg()
        },
    );
    assert_eq!(a.config().max_datagram, MAX_DATAGRAM);
}

/// A receiver that can take no more messages still processes the ACKs of
/// what it sent (so its own sends progress) while refusing new DATA, which
/// arrives exactly once after a retransmission once it accepts again.
#[test]
fn refused_data_still_acks_and_arrives_later() {
    let t0 = Instant::now();
    let mut a = Endpoint::new(0, 2, cfg());
    let mut b = Endpoint::new(1, 2, cfg());
    // b has one message in flight to a.
    b.send(0, b"from b", t0).unwrap();
    for (_, d) in drain(&mut b, t0) {
        a.handle_datagram(&d, t0);
    }
    assert_eq!(messages(&mut a), vec![(1, b"from b".to_vec())]);
    // a's next DATA to b piggybacks the ACK of b's message.
    a.send(1, b"from a", t0).unwrap();
    let d = drain(&mut a, t0);
    assert_eq!(d.len(), 1);
    assert!(decode_datagram(&d[0].1).unwrap().ack.is_some());
    b.handle_datagram_gated(&d[0].1, t0, false);
    assert_eq!(b.in_flight(0), 0, "the ACK was processed");
    assert!(messages(&mut b).is_empty(), "the DATA was refused");
    assert_eq!(b.stats().refused_data, 1);
    assert!(
        drain(&mut b, t0).is_empty(),
        "refused DATA is not acknowledged"
    );
    // a retransmits after its timeout; b now accepts.
    let t1 = a.next_timeout().expect("retransmission timer");
    a.handle_timeout(t1);
    for (_, d) in drain(&mut a, t1) {
        b.handle_datagram_gated(&d, t1, true);
    }
    assert_eq!(messages(&mut b), vec![(0, b"from a".to_vec())]);
    settle(&mut a, &mut b, t1);
    assert_eq!(a.in_flight(1), 0);
    assert!(messages(&mut b).is_empty(), "exactly once");
}

/// Records what a placer is given.
#[derive(Default)]
struct Recorder {
    splits: Vec<(u32, usize)>,
    placed: Vec<u8>,
}

impl Placer for Recorder {
    fn split(&mut self, peer: u32, first: &[u8], total: usize) -> Option<(usize, u64)> {
        self.splits.push((peer, total));
        // Keep a 10-byte "header", place the rest.
        (first.len() >= 10).then_some((10, 77))
    }

    fn write(&mut self, token: u64, at: usize, bytes: &[u8]) {
        assert_eq!(token, 77);
        assert_eq!(
            at,
            self.placed.len(),
            "writes come in order, each byte once"
        );
        self.placed.extend_from_slice(bytes);
    }
}

/// A message spanning many datagrams, delivered out of order, is placed:
/// the placer sees its bytes past the split exactly once and in order; a
/// message that fits one datagram is never offered to it.
#[test]
fn placer_receives_long_messages_in_order() {
    let t0 = Instant::now();
    let mut a = Endpoint::new(0, 2, cfg());
    let mut b = Endpoint::new(1, 2, cfg());
    let big: Vec<u8> = (0..20_000u32).map(|i| (i * 7 + 3) as u8).collect();
    a.send(1, b"small", t0).unwrap();
    a.send(1, &big, t0).unwrap();
    let mut ds = drain(&mut a, t0);
    assert!(ds.len() > 5, "the big message spans several datagrams");
    ds.reverse();
    let mut rec = Recorder::default();
    for (_, d) in &ds {
        b.handle_datagram_placed(d, t0, true, &mut rec);
    }
    assert_eq!(rec.splits, vec![(0, big.len())]);
    assert_eq!(rec.placed, big[10..]);
    assert_eq!(b.poll_placed_message(), Some((0, b"small".to_vec(), false)));
    assert_eq!(b.poll_placed_message(), Some((0, big[..10].to_vec(), true)));
    assert_eq!(b.poll_placed_message(), None);
}

/// `send_with` writes a message straight into a DATA body when nothing
/// waits and falls back to the queue otherwise; either way every message
/// arrives once, in order, intact, and the endpoint ends idle.
#[test]
fn send_with_direct_and_queued() {
    let t0 = Instant::now();
    let mut a = Endpoint::new(0, 2, cfg());
    let mut b = Endpoint::new(1, 2, cfg());
    let fill =
        |tag: u8, len: usize| move |out: &mut Vec<u8>| out.extend((0..len).map(|i| tag ^ i as u8));
    let want = |tag: u8, len: usize| (0..len).map(|i| tag ^ i as u8).collect::<Vec<u8>>();
    // Direct: nothing queued.
    a.send_with(1, Lane::Request, 40, t0, fill(1, 40)).unwrap();
    // Queued behind it (it has not been transmitted yet), then a large
    // one that cannot fit a datagram, then an empty one.
    a.send_with(1, Lane::Request, 10, t0, fill(2, 10)).unwrap();
    a.send_with(1, Lane::Request, 5000, t0, fill(3, 5000))
        .unwrap();
    a.send_with(1, Lane::Request, 0, t0, fill(4, 0)).unwrap();
    let now = settle(&mut a, &mut b, t0);
    assert_eq!(
        messages(&mut b),
        vec![
            (0, want(1, 40)),
            (0, want(2, 10)),
            (0, want(3, 5000)),
            (0, vec![])
        ]
    );
    assert!(a.is_idle(1));
    // Direct again once everything was acknowledged.
    a.send_with(1, Lane::Request, 3, now, fill(5, 3)).unwrap();
    settle(&mut a, &mut b, now);
    assert_eq!(messages(&mut b), vec![(0, want(5, 3))]);
    assert!(a.is_idle(1));
}

/// A receiver refusing requests (full inbox) still takes replies, on their
/// own lane with their own sequence numbers; the refused request arrives
/// once the receiver accepts again, and each lane stays in order.
#[test]
fn replies_pass_refused_requests() {
    let t0 = Instant::now();
    let mut a = Endpoint::new(0, 2, cfg());
    let mut b = Endpoint::new(1, 2, cfg());
    a.send(1, b"req0", t0).unwrap();
    a.send_on(1, Lane::Reply, b"rep0", t0).unwrap();
    let out = drain(&mut a, t0);
    assert_eq!(out.len(), 2, "one DATA datagram per lane");
    let lanes: Vec<Lane> = out
        .iter()
        .map(|(_, d)| decode_datagram(d).unwrap().data.unwrap().lane)
        .collect();
    assert_eq!(lanes, vec![Lane::Reply, Lane::Request], "replies first");
    for (_, d) in &out {
        b.handle_datagram_gated(d, t0, false);
    }
    assert_eq!(b.stats().refused_data, 1);
    assert_eq!(messages(&mut b), vec![(0, b"rep0".to_vec())]);
    // The reply is acknowledged, the request not.
    let t1 = t0 + Duration::from_millis(5);
    b.handle_timeout(t1);
    for (_, d) in drain(&mut b, t1) {
        a.handle_datagram(&d, t1);
    }
    assert_eq!(a.in_flight_on(1, Lane::Reply), 0);
    assert_eq!(a.in_flight_on(1, Lane::Request), 1);
    // More replies still flow while requests are refused.
    a.send_on(1, Lane::Reply, b"rep1", t1).unwrap();
    for (_, d) in drain(&mut a, t1) {
        b.handle_datagram_gated(&d, t1, false);
    }
    assert_eq!(messages(&mut b), vec![(0, b"rep1".to_vec())]);
    // The request's retransmission is taken once the receiver accepts.
    // (rep1, unacknowledged, may be retransmitted too: b drops the copy.)
    let mut got = Vec::new();
    for _ in 0..4 {
        let t2 = a.next_timeout().unwrap();
        a.handle_timeout(t2);
        for (_, d) in drain(&mut a, t2) {
            b.handle_datagram(&d, t2);
        }
        got.extend(messages(&mut b));
    }
    assert_eq!(got, vec![(0, b"req0".to_vec())]);
    assert_eq!(b.stats().messages_delivered, 3);
}

/// With keepalive, an idle peer gets heartbeats every quarter of the peer
/// timeout, a silent peer is reported dead after the timeout though
/// nothing is outstanding, and a peer that said BYE is not.
#[test]
fn keepalive_heartbeats_death_and_bye() {
    let t0 = Instant::now();
    let timeout = Duration::from_secs(2);
    let c = Config {
        peer_timeout: timeout,
        ..cfg()
    };
    let mut a = Endpoint::new(0, 3, c.clone());
    let mut b = Endpoint::new(1, 3, c.clone());
    let mut z = Endpoint::new(2, 3, c);
    for ep in [&mut a, &mut b, &mut z] {
        ep.start_keepalive(t0);
    }
    assert_eq!(a.next_timeout(), Some(t0 + timeout / 4));
    // b answers (heartbeats), z never does.
    let mut now = t0;
    for _ in 0..20 {
        now = a.next_timeout().unwrap().min(b.next_timeout().unwrap());
        a.handle_timeout(now);
        b.handle_timeout(now);
        for (to, d) in drain(&mut a, now) {
            if to == 1 {
                b.handle_datagram(&d, now);
            }
        }
        for (to, d) in drain(&mut b, now) {
            if to == 0 {
                a.handle_datagram(&d, now);
            }
        }
        if a.dead_peer(now).is_some() {
            break;
        }
    }
    assert!(a.stats().heartbeats_sent >= 4, "{:?}", a.stats());
    let (dead, silent) = a.dead_peer(now).expect("z is silent");
    assert_eq!(dead, 2);
    assert!(
        silent >= timeout && silent < timeout + timeout / 2,
        "{silent:?}"
    );
    assert!(a.is_idle(2), "nothing outstanding toward z");
    assert_eq!(b.dead_peer(t0 + timeout - Duration::from_millis(1)), None);
    // z says BYE: it is no longer watched.
    z.send_bye();
    for (to, d) in drain(&mut z, now) {
        assert!(decode_datagram(&d).unwrap().kind() == Kind::Bye);
        if to == 0 {
            a.handle_datagram(&d, now);
        }
    }
    assert!(a.has_departed(2));
    assert_eq!(a.stats().byes_received, 2, "sent twice");
    assert_eq!(a.dead_peer(now + timeout * 10).map(|(p, _)| p), Some(1));
}

/// A message body kept by reference that records when the protocol lets
/// go of it.
struct Watched(Vec<u8>, std::sync::Arc<std::sync::atomic::AtomicBool>);

impl AsRef<[u8]> for Watched {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        self.1.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// Messages of a head and a body kept by reference (a one-sided put's
    /// header and the client's source), between other messages and split
    /// at any length: they arrive whole and in order, and the body is let
    /// go once everything is acknowledged, not before the last datagram
    /// carrying it was sent.
    #[test]
    fn two_part_messages_arrive_whole_and_release_the_body(
        before in 0usize..3000,
        head_len in 0usize..100,
        body_len in 0usize..300_000,
        after in 0usize..70_000,
        max_datagram in proptest::prop_oneof![proptest::strategy::Just(1472usize), proptest::strategy::Just(9000), proptest::strategy::Just(65_507)],
    ) {
        let t0 = Instant::now();
        let c = Config { max_datagram, ..cfg() };
        let mut a = Endpoint::new(0, 2, c.clone());
        let mut b = Endpoint::new(1, 2, c);
        let pattern = |n: usize, k: u32| (0..n as u32).map(|i| (i.wrapping_mul(k) >> 3) as u8).collect::<Vec<u8>>();
        let first = pattern(before, 7);
        let head = pattern(head_len, 13);
        let body = pattern(body_len, 31);
        let last = pattern(after, 5);
        let released = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let owned = Bytes::from_owner(Watched(body.clone(), released.clone()));
        a.send(1, &first, t0).unwrap();
        a.send_parts(1, Lane::Request, Bytes::from(head.clone()), owned, t0).unwrap();
        proptest::prop_assert!(!released.load(std::sync::atomic::Ordering::SeqCst), "released while queued");
        // The last message waits for room in the queue if it must.
        let now = if a.send(1, &last, t0).is_err() {
            let now = settle(&mut a, &mut b, t0);
            a.send(1, &last, now).unwrap();
            now
        } else {
            t0
        };
        settle(&mut a, &mut b, now);
        let mut whole = head.clone();
        whole.extend_from_slice(&body);
        proptest::prop_assert_eq!(messages(&mut b), vec![(0, first), (0, whole), (0, last)]);
        proptest::prop_assert!(released.load(std::sync::atomic::Ordering::SeqCst), "the body is still held");
        proptest::prop_assert!(a.is_idle(1));
    }
}
