//! The job key and datagram authentication, end to end through `gex-run`:
//! no rank shows the key in its environment or arguments while udp works
//! (ranks started directly, and through a spawner, which hands the key on
//! standard input), with authentication on (the default) and off; ranks
//! that disagree on `GEX_UDP_AUTH` fail together with a message naming it.

use gex_run::{run, JobSpec, Output};

mod common;
use common::{check_cleanup, job_lock, on_two_named_hosts, report, TIMEOUT};

/// A failing job must end within this.
const PROMPT: std::time::Duration = std::time::Duration::from_secs(30);

const KEYCHECK: &str = env!("CARGO_BIN_EXE_keycheck");

fn spec(ranks: u32, env: &[(&str, &str)]) -> JobSpec {
    let mut spec = JobSpec::new(ranks, KEYCHECK);
    spec.conduit = "udp".into();
    spec.env = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    spec.timeout = Some(TIMEOUT);
    spec.output = Output::Capture;
    spec
}

fn passes(spec: &JobSpec, what: &str) {
    let _lock = job_lock();
    let out = run(spec).expect("start the job");
    assert_eq!(out.code, 0, "{what}: {}", report(&out));
    for r in 0..spec.ranks {
        let line = format!("keycheck: rank {r} of {}: key hidden, ", spec.ranks);
        assert!(
            out.stdout.contains(&line),
            "{what}: no {line:?}\n{}",
            report(&out)
        );
    }
    check_cleanup(&out);
}

#[test]
fn the_key_is_hidden_and_udp_works_with_and_without_authentication() {
    for auth in ["1", "0"] {
        passes(
            &spec(3, &[("GEX_UDP_BYPASS", "0"), ("GEX_UDP_AUTH", auth)]),
            &format!("direct, GEX_UDP_AUTH={auth}"),
        );
    }
    // Through a spawner (the key comes on standard input), two hosts.
    let mut s = spec(4, &[]);
    on_two_named_hosts(&mut s);
    passes(&s, "spawner");
}

#[test]
fn ranks_that_disagree_on_authentication_fail_naming_the_setting() {
    let mut s = spec(2, &[]);
    on_two_named_hosts(&mut s);
    s.host_env
        .push(("host-b".into(), "GEX_UDP_AUTH".into(), "0".into()));
    let _lock = job_lock();
    let out = run(&s).expect("start the job");
    assert_ne!(out.code, 0, "{}", report(&out));
    assert!(!out.timed_out, "{}", report(&out));
    assert!(
        out.elapsed < PROMPT,
        "took {:?}\n{}",
        out.elapsed,
        report(&out)
    );
    assert!(
        out.stderr
            .contains("datagram authentication is on on rank 0 but off on rank 1")
            && out.stderr.contains("GEX_UDP_AUTH"),
        "{}",
        report(&out)
    );
    check_cleanup(&out);
}
