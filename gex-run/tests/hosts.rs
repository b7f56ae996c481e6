//! Placing ranks on several hosts: blocks of ranks per host, `GEX_HOST`
//! and `GEX_HOSTS`, spawner templates and per-host environment. The hosts
//! are only names here: the spawner is `env GEX_FAKE_HOST={host}` (or a
//! `sh -c` wrapper), so every rank runs on this machine.

mod common;

use std::io::ErrorKind;

use common::sh;
use gex_run::{placement, run, JobOutcome, JobSpec};

const REPORT: &str = r#"echo "$GEX_RANK ${GEX_HOST:-unset} ${GEX_HOSTS:-unset} ${GEX_FAKE_HOST:-unset} ${HVAR:-unset}""#;

/// The job's report lines, in rank order, split into words.
fn reports(out: &JobOutcome) -> Vec<Vec<String>> {
    let mut lines: Vec<Vec<String>> = out
        .stdout
        .lines()
        .map(|l| l.split(' ').map(String::from).collect())
        .collect();
    lines.sort_by_key(|w| w[0].parse::<u32>().unwrap());
    lines
}

fn hosts_job(ranks: u32, hosts: &[&str]) -> JobSpec {
    let mut spec = sh(ranks, REPORT);
    spec.hosts = hosts.iter().map(|h| h.to_string()).collect();
    spec.spawn = Some("env GEX_FAKE_HOST={host}".into());
    spec
}

#[test]
fn ranks_are_placed_in_blocks_with_their_host_in_the_environment() {
    let mut spec = hosts_job(7, &["h1", "h2", "h3"]);
    spec.host_env = vec![
        ("h2".into(), "HVAR".into(), "two".into()),
        ("h3".into(), "HVAR".into(), "three".into()),
    ];
    let out = run(&spec).unwrap();
    assert_eq!(out.code, 0, "{out:?}");
    let want: Vec<Vec<String>> = (0..7)
        .map(|r| {
            let (h, v) = match r {
                0..=2 => ("h1", "unset"),
                3..=5 => ("h2", "two"),
                _ => ("h3", "three"),
            };
            [r.to_string().as_str(), h, "3", h, v]
                .map(String::from)
                .to_vec()
        })
        .collect();
    assert_eq!(reports(&out), want, "{out:?}");
    assert_eq!(placement(7, 3), [0, 0, 0, 1, 1, 1, 2]);
}

#[test]
fn gex_hosts_counts_the_hosts_that_got_ranks() {
    let out = run(&hosts_job(2, &["h1", "h2", "h3"])).unwrap();
    assert_eq!(out.code, 0, "{out:?}");
    let r = reports(&out);
    assert_eq!(r[0][1..4], ["h1", "2", "h1"]);
    assert_eq!(r[1][1..4], ["h2", "2", "h2"]);
}

#[test]
fn this_host_is_started_directly_without_a_spawner() {
    let mut hosts = vec!["localhost".to_string()];
    hosts.extend(gex_bootstrap::os::host::hostname());
    let mut spec = sh(hosts.len() as u32, REPORT);
    spec.hosts = hosts.clone();
    let out = run(&spec).unwrap();
    assert_eq!(out.code, 0, "{out:?}");
    for (r, words) in reports(&out).iter().enumerate() {
        let n = hosts.len().to_string();
        assert_eq!(words[1..4], [hosts[r].as_str(), &n, "unset"], "{out:?}");
    }
}

#[test]
fn the_program_and_its_arguments_follow_the_spawner_as_separate_words() {
    // The template's own quoting is honoured; the spawner sees the program
    // as $0 and its arguments (one with spaces) as "$@".
    let mut spec = sh(2, r#"echo "args: $0 [$1]""#);
    spec.args.extend(["zero".into(), "x y".into()]);
    spec.hosts = vec!["a".into(), "b".into()];
    spec.spawn = Some(r#"sh -c 'echo "on {host}: $#" >&2; exec "$0" "$@"'"#.into());
    let out = run(&spec).unwrap();
    assert_eq!(out.code, 0, "{out:?}");
    // sh -c SCRIPT zero "x y": 4 words after the program.
    let mut err: Vec<&str> = out.stderr.lines().collect();
    err.sort();
    assert_eq!(err, ["on a: 4", "on b: 4"], "{out:?}");
    for line in out.stdout.lines() {
        assert_eq!(line, "args: zero [x y]");
    }
}

#[test]
fn bad_host_specifications_are_errors() {
    let mut spec = hosts_job(2, &["h1"]);
    spec.host_env = vec![("h2".into(), "X".into(), "1".into())];
    assert_eq!(run(&spec).unwrap_err().kind(), ErrorKind::InvalidInput);
    let mut spec = hosts_job(2, &["h1"]);
    spec.spawn = Some("env 'unbalanced".into());
    assert_eq!(run(&spec).unwrap_err().kind(), ErrorKind::InvalidInput);
    let spec = hosts_job(2, &["h1", ""]);
    assert_eq!(run(&spec).unwrap_err().kind(), ErrorKind::InvalidInput);
}

#[test]
fn a_spawner_that_fails_fails_the_job() {
    let mut spec = hosts_job(2, &["h1", "h2"]);
    spec.spawn = Some("sh -c 'echo cannot reach {host} >&2; exit 255'".into());
    let out = run(&spec).unwrap();
    assert_eq!(out.code, 255, "{out:?}");
    assert!(out.stderr.contains("cannot reach h"), "{out:?}");
}
