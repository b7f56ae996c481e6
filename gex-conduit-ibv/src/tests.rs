use super::*;

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
    ]))
    .unwrap();
    assert_eq!(
        (s.provider, s.bypass, s.credits, s.buf, s.peer_timeout),
        (Provider::Sim, false, 2, 608, Duration::from_millis(2500))
    );
    for (var, bad) in [
        ("GEX_IBV_PROVIDER", "mlx"),
        ("GEX_IBV_CREDITS", "0"),
        ("GEX_IBV_BUF", "100"),
        ("GEX_IBV_PEER_TIMEOUT", "inf"),
        ("GEX_IBV_BYPASS", "no"),
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
