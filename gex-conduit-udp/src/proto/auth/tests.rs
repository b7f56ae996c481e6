//! Authentication of datagrams at the endpoint: every forged, corrupted,
//! truncated or misattributed datagram is dropped before it changes
//! anything but a drop counter.

use std::time::Instant;

use proptest::prelude::*;

use super::*;
use crate::proto::wire::{decode_datagram, encode_datagram, AckInfo, DataInfo, Datagram};
use crate::proto::{Endpoint, Stats};

fn cfg_with(key: u8, auth: bool) -> Config {
    Config {
        key: [key; 32],
        auth,
        ..Config::default()
    }
}

fn cfg() -> Config {
    cfg_with(0x42, true)
}

/// The datagrams rank 0 of 3 sends to rank 1 for one message (a piggybacked
/// ACK included when `with_ack`), with `cfg`.
fn datagrams_from_0(cfg: Config, msg: &[u8], with_ack: bool) -> Vec<Vec<u8>> {
    exchange_from_0(cfg, msg, with_ack).1
}

/// [`datagrams_from_0`] and the rank 1 they are for (which sent what the
/// ACK block acknowledges).
fn exchange_from_0(cfg: Config, msg: &[u8], with_ack: bool) -> (Endpoint, Vec<Vec<u8>>) {
    let t0 = Instant::now();
    let mut a = Endpoint::new(0, 3, cfg.clone());
    let mut b = Endpoint::new(1, 3, cfg);
    if with_ack {
        // Let a have heard from rank 1, so its DATA carries an ACK block.
        b.send(0, b"first", t0).unwrap();
        let mut buf = Vec::new();
        while b.poll_transmit(t0, &mut buf).is_some() {
            a.handle_datagram(&buf, t0);
        }
        assert_eq!(a.poll_message(), Some((1, b"first".to_vec())));
    }
    a.send(1, msg, t0).unwrap();
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while let Some(dst) = a.poll_transmit(t0, &mut buf) {
        if dst == 1 {
            out.push(buf.clone());
        }
    }
    (b, out)
}

/// What an outside observer can see of an endpoint's state.
#[derive(Debug, PartialEq)]
struct Seen {
    stats: Stats,
    buffered: usize,
    next_timeout: Option<Instant>,
    has_transmit: bool,
    has_message: bool,
    dead: Option<(u32, std::time::Duration)>,
}

fn seen(e: &Endpoint, now: Instant) -> Seen {
    Seen {
        stats: e.stats(),
        buffered: e.buffered_bytes(),
        next_timeout: e.next_timeout(),
        has_transmit: e.has_transmit(),
        has_message: e.has_message(),
        dead: e.dead_peer(now + std::time::Duration::from_secs(3600)),
    }
}

/// Feeds `d` to `e` and checks that only `datagrams_received` and the
/// counter chosen by `which` moved, by one each.
fn assert_dropped(e: &mut Endpoint, d: &[u8], which: fn(&mut Stats) -> &mut u64, what: &str) {
    let now = Instant::now();
    let mut before = seen(e, now);
    e.handle_datagram(d, now);
    before.stats.datagrams_received += 1;
    *which(&mut before.stats) += 1;
    assert_eq!(seen(e, now), before, "{what}: the datagram changed state");
}

fn bad_key(s: &mut Stats) -> &mut u64 {
    &mut s.dropped_bad_key
}
fn bad_mac(s: &mut Stats) -> &mut u64 {
    &mut s.dropped_bad_mac
}
fn bad_source(s: &mut Stats) -> &mut u64 {
    &mut s.dropped_bad_source
}
fn malformed(s: &mut Stats) -> &mut u64 {
    &mut s.dropped_malformed
}

/// The counter a datagram with bit `bit` flipped is dropped under: the
/// magic and version make it malformed, the tag makes it another job's,
/// anything else breaks the MAC.
fn counter_for_bit(bit: usize) -> fn(&mut Stats) -> &mut u64 {
    match bit / 8 {
        0..=2 => malformed,
        4..=11 => bad_key,
        _ => bad_mac,
    }
}

#[test]
fn genuine_datagrams_pass_and_deliver() {
    let mut b = Endpoint::new(1, 3, cfg());
    let t0 = Instant::now();
    for d in datagrams_from_0(cfg(), &[9u8; 3000], false) {
        b.handle_datagram(&d, t0);
    }
    assert_eq!(b.poll_message(), Some((0, vec![9u8; 3000])));
    let s = b.stats();
    assert_eq!(
        (s.dropped_bad_key, s.dropped_bad_mac, s.dropped_bad_source),
        (0, 0, 0)
    );
}

#[test]
fn another_jobs_tag_is_dropped() {
    let mut b = Endpoint::new(1, 3, cfg());
    for d in datagrams_from_0(cfg_with(0x43, true), b"hello", false) {
        assert_dropped(&mut b, &d, bad_key, "another job's datagram");
    }
    // Another job with authentication off: still its tag.
    for d in datagrams_from_0(cfg_with(0x43, false), b"hello", false) {
        assert_dropped(&mut b, &d, bad_key, "another job's datagram");
    }
}

#[test]
fn any_flipped_bit_is_dropped() {
    for with_ack in [false, true] {
        let (mut b, mut ds) = exchange_from_0(cfg(), b"in-window data", with_ack);
        let d = ds.remove(0);
        // Header (common header, ACK block, DATA header), body, MAC: every bit.
        for bit in 0..d.len() * 8 {
            let mut f = d.clone();
            f[bit / 8] ^= 1 << (bit % 8);
            assert_dropped(&mut b, &f, counter_for_bit(bit), &format!("bit {bit}"));
        }
        assert!(b.poll_message().is_none());
        // The genuine one still goes through, and is acknowledged alone.
        let t0 = Instant::now();
        b.handle_datagram(&d, t0);
        assert_eq!(b.poll_message(), Some((0, b"in-window data".to_vec())));
    }
}

#[test]
fn truncated_datagrams_are_dropped() {
    let d = datagrams_from_0(cfg(), b"truncate me", true).remove(0);
    let mut b = Endpoint::new(1, 3, cfg());
    for len in 0..d.len() {
        let which = if len < COMMON_HEADER_LEN {
            malformed
        } else {
            bad_mac
        };
        assert_dropped(&mut b, &d[..len], which, &format!("{len} bytes"));
    }
    // Trailing bytes break the MAC as well.
    let mut long = d.clone();
    long.push(0);
    assert_dropped(&mut b, &long, bad_mac, "one byte more");
}

#[test]
fn forged_mac_on_valid_header_changes_nothing() {
    // Right tag, right ranks, in-window sequence numbers, a plausible ACK:
    // only the MAC is made up (the forger does not know the key).
    let mut b = Endpoint::new(1, 3, cfg());
    let tag = job_tag(&cfg().key);
    let mut body = Vec::new();
    crate::proto::wire::encode_chunk(&mut body, true, true, Some(6), b"forged");
    for seq in 0..8u32 {
        let mut d = Vec::new();
        encode_datagram(
            &Datagram {
                tag,
                src: 0,
                dst: 1,
                ack: Some(AckInfo::default()),
                reply_ack: None,
                data: Some(DataInfo {
                    lane: crate::proto::Lane::Request,
                    seq,
                    body: &body,
                }),
            },
            &mut d,
        );
        d[MAC_AT..COMMON_HEADER_LEN].copy_from_slice(&[seq as u8; MAC_LEN]);
        assert_dropped(&mut b, &d, bad_mac, "forged MAC");
    }
    // The receiver acknowledges none of the forged sequence numbers: the
    // first genuine datagram is sequence 0, and its ACK says 1.
    let t0 = Instant::now();
    for d in datagrams_from_0(cfg(), b"genuine", false) {
        b.handle_datagram(&d, t0);
    }
    assert_eq!(b.poll_message(), Some((0, b"genuine".to_vec())));
    let mut buf = Vec::new();
    let later = t0 + std::time::Duration::from_secs(1);
    b.handle_timeout(later);
    assert_eq!(b.poll_transmit(later, &mut buf), Some(0));
    let ack = decode_datagram(&buf).unwrap().ack.unwrap();
    assert_eq!((ack.cum, ack.nsack), (1, 0));
}

#[test]
fn sources_outside_the_job_or_self_are_dropped() {
    let auth = Auth::new(&cfg());
    let d = datagrams_from_0(cfg(), b"who", false).remove(0);
    let mut b = Endpoint::new(1, 3, cfg());
    for src in [1u32, 3, 7, u32::MAX] {
        // Authentic (sealed with the key) yet from a wrong source.
        let mut f = d.clone();
        f[12..16].copy_from_slice(&src.to_le_bytes());
        auth.seal(&mut f, &[]);
        assert_dropped(&mut b, &f, bad_source, &format!("source {src}"));
    }
}

#[test]
fn seal_over_two_parts_equals_one() {
    let auth = Auth::new(&cfg());
    let d = datagrams_from_0(cfg(), &[5u8; 200], true).remove(0);
    let mut whole = d.clone();
    whole[MAC_AT..COMMON_HEADER_LEN].fill(0);
    let split = whole.len() - 150;
    let mut head = whole[..split].to_vec();
    auth.seal(&mut head, &whole[split..]);
    auth.seal(&mut whole, &[]);
    assert_eq!(head[..], whole[..split]);
    assert_eq!(whole, d);
    assert!(auth.verify(&whole));
}

proptest! {
    /// Large datagrams (over 64 KiB) sealed as a head and a tail
    /// split anywhere get the
    /// MAC of the whole, which verifies; changing any byte breaks it.
    #[test]
    fn seal_of_large_datagrams_does_not_depend_on_the_split(
        len in COMMON_HEADER_LEN..70_000usize,
        split in 0.0f64..1.0,
        seed in any::<u64>(),
        flip in 0.0f64..1.0,
    ) {
        let auth = Auth::new(&cfg());
        let mut whole: Vec<u8> = (0..len)
            .map(|i| (seed.wrapping_mul(i as u64 + 1) >> 7) as u8)
            .collect();
        whole[MAC_AT..COMMON_HEADER_LEN].fill(0);
        let at = COMMON_HEADER_LEN + ((len - COMMON_HEADER_LEN) as f64 * split) as usize;
        let mut head = whole[..at].to_vec();
        auth.seal(&mut head, &whole[at..]);
        auth.seal(&mut whole, &[]);
        prop_assert_eq!(&head[..], &whole[..at]);
        prop_assert!(auth.verify(&whole));
        // Any byte but those of the MAC field itself is covered.
        let mut i = ((len as f64) * flip) as usize % len;
        if (MAC_AT..COMMON_HEADER_LEN).contains(&i) {
            i = 0;
        }
        whole[i] ^= 0x10;
        prop_assert!(!auth.verify(&whole));
    }
}

#[test]
fn authentication_off_carries_no_mac_and_checks_none() {
    let off = cfg_with(0x42, false);
    let d = datagrams_from_0(off.clone(), b"trusted", false).remove(0);
    assert_eq!(d[MAC_AT..COMMON_HEADER_LEN], [0; MAC_LEN]);
    // An endpoint with authentication on refuses it.
    let mut on = Endpoint::new(1, 3, cfg());
    assert_dropped(&mut on, &d, bad_mac, "a datagram without a MAC");
    // One with it off takes it; the tag and the source are still checked.
    let mut b = Endpoint::new(1, 3, off.clone());
    b.handle_datagram(&d, Instant::now());
    assert_eq!(b.poll_message(), Some((0, b"trusted".to_vec())));
    let mut f = d.clone();
    f[12..16].copy_from_slice(&1u32.to_le_bytes());
    assert_dropped(&mut b, &f, bad_source, "its own rank as source");
    assert!(format!("{:?}", Auth::new(&off)).contains("mac: false"));
}

#[test]
fn debug_never_shows_the_key() {
    let c = cfg_with(0xab, true);
    let shown = format!("{c:?} {:?}", Auth::new(&c));
    assert!(!shown.contains("171") && !shown.to_lowercase().contains("abab"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any single-bit flip of any valid datagram (DATA with or without a
    /// piggybacked ACK, standalone ACK) is dropped and changes nothing.
    #[test]
    fn single_bit_flips_are_rejected(
        len in 1usize..3000,
        with_ack in any::<bool>(),
        pick in any::<prop::sample::Index>(),
        bit in any::<prop::sample::Index>(),
    ) {
        let msg: Vec<u8> = (0..len).map(|i| i as u8).collect();
        let mut all = datagrams_from_0(cfg(), &msg, with_ack);
        // A standalone ACK from rank 0 too.
        {
            let t0 = Instant::now();
            let mut a = Endpoint::new(0, 3, cfg());
            let mut b = Endpoint::new(1, 3, cfg());
            b.send(0, b"x", t0).unwrap();
            let mut buf = Vec::new();
            while b.poll_transmit(t0, &mut buf).is_some() {
                a.handle_datagram(&buf, t0);
            }
            let later = t0 + std::time::Duration::from_secs(1);
            a.handle_timeout(later);
            prop_assert_eq!(a.poll_transmit(later, &mut buf), Some(1));
            prop_assert!(decode_datagram(&buf).unwrap().data.is_none());
            all.push(buf);
        }
        let d = pick.get(&all).clone();
        let bit = bit.index(d.len() * 8);
        let mut f = d.clone();
        f[bit / 8] ^= 1 << (bit % 8);
        let mut b = Endpoint::new(1, 3, cfg());
        let now = Instant::now();
        let mut before = seen(&b, now);
        b.handle_datagram(&f, now);
        before.stats.datagrams_received += 1;
        *counter_for_bit(bit)(&mut before.stats) += 1;
        prop_assert_eq!(seen(&b, now), before);
    }
}

#[test]
fn mac_order_covers_every_byte_once_and_ignores_the_iovec_split() {
    let a = Auth::new(&cfg());
    for len in [
        COMMON_HEADER_LEN,
        COMMON_HEADER_LEN + 1,
        1023 + COMMON_HEADER_LEN,
        1024 + COMMON_HEADER_LEN,
        1025 + COMMON_HEADER_LEN,
        4156,
        65507,
    ] {
        let d: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
        let mut whole = d.clone();
        a.seal(&mut whole, &[]);
        // Any split into a header buffer and a tail gives the same MAC.
        for cut in [COMMON_HEADER_LEN, COMMON_HEADER_LEN + 5, len / 2, len] {
            let cut = cut.clamp(COMMON_HEADER_LEN, len);
            let mut head = d[..cut].to_vec();
            a.seal(&mut head, &d[cut..]);
            assert_eq!(
                head[MAC_AT..COMMON_HEADER_LEN],
                whole[MAC_AT..COMMON_HEADER_LEN]
            );
        }
        assert!(a.verify(&whole), "len {len}");
        // Every byte outside the MAC field is covered.
        for i in (0..len).filter(|i| !(MAC_AT..COMMON_HEADER_LEN).contains(i)) {
            let mut bad = whole.clone();
            bad[i] ^= 0x40;
            assert!(!a.verify(&bad), "len {len}: byte {i} not covered");
        }
    }
}

/// Short MAC inputs are copied together and absorbed at once: the same
/// MAC as absorbing the length, the header and the rest in turn, on both
/// sides of the line.
#[test]
fn short_mac_inputs_absorbed_at_once_give_the_streamed_mac() {
    let a = Auth::new(&cfg());
    let keys = a.mac_key.as_ref().expect("authentication on");
    let around = SHORT_MAC_INPUT + MAC_LEN - 4;
    for len in (COMMON_HEADER_LEN..COMMON_HEADER_LEN + 40).chain(around - 8..around + 8) {
        let d: Vec<u8> = (0..len).map(|i| (i * 13 + 5) as u8).collect();
        let mut lead = vec![];
        lead.extend_from_slice(&(len as u32).to_le_bytes());
        lead.extend_from_slice(&d[..MAC_AT]);
        let mut m = keys.narrow.clone();
        m.update(&lead);
        m.update(&d[COMMON_HEADER_LEN..]);
        let want: [u8; MAC_LEN] = m.finalize();
        assert_eq!(Auth::mac(keys, &d, &[]), want, "len {len}");
        let cut = (COMMON_HEADER_LEN + len) / 2;
        assert_eq!(
            Auth::mac(keys, &d[..cut], &d[cut..]),
            want,
            "len {len}, cut {cut}"
        );
    }
}
