use super::*;
use crate::atomics::fadd_operand;
use crate::setup::{budget, parse_fault};
use crate::verbs::Provider;
use gex_bootstrap::vars::Lookup;
use gex_types::Op;

#[test]
fn work_request_ids_round_trip() {
    for (k, p, i) in [
        (W_RECV, 0, 0),
        (W_OP, 0xff_ffff, u32::MAX),
        (W_CREDIT, 3, 7),
    ] {
        assert_eq!(wr_parts(wr(k, p, i)), (k, p, i));
    }
}

#[test]
fn settings_are_read_and_checked() {
    let s = IbvSettings::from_lookup(Lookup::pairs(&[])).unwrap();
    assert_eq!(s, IbvSettings::default());
    let s = IbvSettings::from_lookup(Lookup::pairs(&[
        ("GEX_IBV_PROVIDER", "sim"),
        ("GEX_IBV_BYPASS", "0"),
        ("GEX_IBV_CREDITS", "2"),
        ("GEX_IBV_BUF", "608"),
        ("GEX_IBV_PEER_TIMEOUT", "2.5"),
        ("GEX_IBV_SRQ", "0"),
        ("GEX_IBV_SRQ_POOL", "12"),
    ]))
    .unwrap();
    assert_eq!(
        (s.provider, s.bypass, s.credits, s.buf, s.peer_timeout),
        (Provider::Sim, false, 2, 608, Duration::from_millis(2500))
    );
    assert_eq!((s.srq, s.srq_pool), (false, 12));
    for (var, bad) in [
        ("GEX_IBV_PROVIDER", "mlx"),
        ("GEX_IBV_CREDITS", "0"),
        ("GEX_IBV_BUF", "100"),
        ("GEX_IBV_PEER_TIMEOUT", "inf"),
        ("GEX_IBV_BYPASS", "no"),
        ("GEX_IBV_SRQ", "maybe"),
        ("GEX_IBV_SRQ_POOL", "1"),
        ("GEX_IBV_SRQ_POOL", "65537"),
    ] {
        let e = IbvSettings::from_lookup(Lookup::pairs(&[(var, bad)])).unwrap_err();
        assert!(e.message().contains(var), "{var}={bad}: {e}");
    }
    let s = IbvSettings {
        credits: 0,
        ..IbvSettings::default()
    };
    assert!(s.validate().is_err());
}

#[test]
fn faults_are_parsed_for_their_rank() {
    assert_eq!(
        parse_fault("rnr@1:5", 1).unwrap(),
        Some(("rnr".to_string(), 5))
    );
    assert_eq!(parse_fault("rnr@1:5", 0).unwrap(), None);
    for bad in ["rnr", "boom@1:2", "rnr@x:1", "rnr@1:"] {
        assert!(parse_fault(bad, 0).is_err(), "{bad}");
    }
}

#[test]
fn nic_atomics_cover_64_bit_fetch_add_and_compare_swap_only() {
    assert_eq!(fadd_operand(Op::Sub, 5), Some(5u64.wrapping_neg()));
    assert_eq!(fadd_operand(Op::Dec, 0), Some(u64::MAX));
    assert_eq!(fadd_operand(Op::Mult, 2), None);
    assert_eq!(fadd_operand(Op::Swap, 2), None);
}

/// The buffers posted always cover every window on both lanes (so a SEND
/// always finds a receive), with at least one credit per peer and lane,
/// and the shared pool is bounded by its setting (or by the floor of two
/// buffers per peer) however many peers there are.
#[test]
fn budgets_cover_every_window_within_the_pool() {
    // Per-peer buffers: 2 * credits each, full windows, no reserve.
    assert_eq!(
        budget(false, 256, 16, 10),
        Budget {
            bufs: 320,
            srq: false,
            window0: 16,
            reserve: 0
        }
    );
    // A small job: the pool is cut to what full windows use.
    assert_eq!(
        budget(true, 256, 16, 3),
        Budget {
            bufs: 96,
            srq: true,
            window0: 16,
            reserve: 0
        }
    );
    // A large job: 256 buffers for 1000 peers would leave some without a
    // credit, so the pool is raised to one per peer and lane.
    assert_eq!(
        budget(true, 256, 16, 1000),
        Budget {
            bufs: 2000,
            srq: true,
            window0: 1,
            reserve: 0
        }
    );
    // In between: even windows, the rest in reserve.
    assert_eq!(
        budget(true, 256, 16, 20),
        Budget {
            bufs: 256,
            srq: true,
            window0: 6,
            reserve: 16
        }
    );
    for srq in [false, true] {
        for pool in [2, 3, 7, 64, 256, 4096] {
            for credits in [1, 2, 5, 16] {
                for peers in [0, 1, 2, 3, 17, 300] {
                    let b = budget(srq, pool, credits, peers);
                    let windows = 2 * peers as u64 * b.window0;
                    assert_eq!(windows + b.reserve as u64, b.bufs as u64, "{b:?}");
                    assert!((1..=credits as u64).contains(&b.window0), "{b:?}");
                    assert!(b.bufs <= 2 * credits * peers, "{b:?}");
                    if b.srq {
                        assert!(b.bufs <= pool.max(2 * peers), "{b:?}");
                    }
                }
            }
        }
    }
}
