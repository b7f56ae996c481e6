//! The multi-process test matrix of `cargo xtask test-cluster`: every
//! `test-*` program of gex-testsuite, on every set-up of [`CONDUITS`], with
//! a range of rank counts, each run under gex-run.
//!
//! The set-ups:
//!
//! * `smp`: one host, 1..=N ranks;
//! * `udp-nobypass`: the udp conduit on one host with its shared-memory
//!   bypass off (`GEX_UDP_BYPASS=0`), so every message crosses UDP on
//!   loopback; 2..=min(N, 4) ranks;
//! * `udp-netns`: the udp conduit across two network namespaces ([`Netns`]),
//!   each a "host" joined to the other by a veth pair, with nftables
//!   dropping 10% of the UDP datagrams each namespace receives; ranks in the
//!   same namespace use the bypass; 2..=min(N, 4) ranks. It needs root, `ip`
//!   and `nft`; without them its cells are skipped, visibly, and do not
//!   count as passes.
//! * `ibv-nobypass`: the ibv conduit over its simulated device
//!   (`GEX_IBV_PROVIDER=sim`) with the bypass off, so every message, put,
//!   get and atomic crosses the device; 2..=min(N, 4) ranks.
//! * `ibv-hosts`: the ibv conduit over its simulated device on two pretend
//!   hosts (gex-run `--hosts host-a,host-b`, each rank told its host), with
//!   the bypass inside each; 2..=min(N, 4) ranks. (Tiny credit and buffer
//!   counts are gex-testsuite's `tests/ibv.rs`: with 2 credits, test-coll's
//!   2^16-1 outstanding barriers take minutes.)

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// The `--timeout` given to gex-run for each run, in seconds.
pub const GEX_RUN_TIMEOUT_SECS: u64 = 120;
/// The `--timeout` of runs across network namespaces (10% loss).
pub const NETNS_TIMEOUT_SECS: u64 = 300;
/// The most ranks a udp set-up runs with (2 cores: more only adds time).
pub const UDP_MAX_RANKS: u32 = 4;
/// How much longer than gex-run's own timeout xtask waits before it ends a
/// run itself (gex-run should have ended the job by then).
pub const WATCHDOG_GRACE: Duration = Duration::from_secs(30);
/// gex-run's exit code when its `--timeout` expires (gex_run::TIMEOUT_CODE;
/// xtask links no workspace crate, so it is repeated here).
pub const GEX_RUN_TIMEOUT_CODE: i32 = 124;

/// One way of running a job in the matrix.
#[derive(Debug, PartialEq, Eq)]
pub struct Conduit {
    /// The set-up's name: shown in the table, selected by `--conduit`.
    pub name: &'static str,
    /// The conduit passed to `gex-run --conduit`.
    pub conduit: &'static str,
    /// The fewest ranks it runs with.
    pub min_ranks: u32,
    /// The most ranks it runs with, whatever `--max-ranks` says.
    pub cap_ranks: Option<u32>,
    /// Extra environment for the ranks (set on gex-run, which passes its
    /// environment on).
    pub env: &'static [(&'static str, &'static str)],
    /// Runs across two network namespaces with packet loss.
    pub netns: bool,
    /// Runs on two pretend hosts of this machine (`--hosts host-a,host-b`,
    /// spawned through `env`), for conduits that group ranks by the host
    /// name the launcher gives.
    pub pretend_hosts: bool,
    /// gex-run's `--timeout`, in seconds.
    pub timeout_secs: u64,
}

/// Every set-up the matrix runs, in table order.
pub const CONDUITS: &[Conduit] = &[
    Conduit {
        name: "smp",
        conduit: "smp",
        min_ranks: 1,
        cap_ranks: None,
        env: &[],
        netns: false,
        pretend_hosts: false,
        timeout_secs: GEX_RUN_TIMEOUT_SECS,
    },
    Conduit {
        name: "udp-nobypass",
        conduit: "udp",
        min_ranks: 2,
        cap_ranks: Some(UDP_MAX_RANKS),
        env: &[("GEX_UDP_BYPASS", "0")],
        netns: false,
        pretend_hosts: false,
        timeout_secs: GEX_RUN_TIMEOUT_SECS,
    },
    Conduit {
        name: "udp-netns",
        conduit: "udp",
        min_ranks: 2,
        cap_ranks: Some(UDP_MAX_RANKS),
        env: &[],
        netns: true,
        pretend_hosts: false,
        timeout_secs: NETNS_TIMEOUT_SECS,
    },
    Conduit {
        name: "ibv-nobypass",
        conduit: "ibv",
        min_ranks: 2,
        cap_ranks: Some(UDP_MAX_RANKS),
        env: &[("GEX_IBV_PROVIDER", "sim"), ("GEX_IBV_BYPASS", "0")],
        netns: false,
        pretend_hosts: false,
        timeout_secs: GEX_RUN_TIMEOUT_SECS,
    },
    Conduit {
        name: "ibv-hosts",
        conduit: "ibv",
        min_ranks: 2,
        cap_ranks: Some(UDP_MAX_RANKS),
        env: &[("GEX_IBV_PROVIDER", "sim")],
        netns: false,
        pretend_hosts: true,
        timeout_secs: GEX_RUN_TIMEOUT_SECS,
    },
];

impl Conduit {
    /// The rank counts this set-up runs with under `--max-ranks max`.
    pub fn rank_counts(&self, max: u32) -> std::ops::RangeInclusive<u32> {
        self.min_ranks..=self.cap_ranks.map_or(max, |c| c.min(max))
    }

    /// How long xtask lets one run take before it ends it.
    pub fn limit(&self) -> Duration {
        Duration::from_secs(self.timeout_secs) + WATCHDOG_GRACE
    }

    /// The command that runs `program` with `ranks` ranks on this set-up;
    /// `netns` is where the namespace set-ups run.
    pub fn launch(
        &self,
        gex_run: &Path,
        ranks: u32,
        program: &Path,
        netns: Option<&Netns>,
    ) -> Command {
        let mut cmd = Command::new(gex_run);
        cmd.arg("-n")
            .arg(ranks.to_string())
            .arg("--timeout")
            .arg(self.timeout_secs.to_string())
            .arg("--conduit")
            .arg(self.conduit);
        if let (true, Some(ns)) = (self.netns, netns) {
            let [a, b] = &ns.names;
            let [ip_a, ip_b] = ns.addrs();
            cmd.arg("--hosts")
                .arg(format!("{a},{b}"))
                .arg("--spawn")
                .arg("ip netns exec {host}")
                .arg("--host-env")
                .arg(format!("{a}:GEX_UDP_ADDR={ip_a}"))
                .arg("--host-env")
                .arg(format!("{b}:GEX_UDP_ADDR={ip_b}"));
        }
        if self.pretend_hosts {
            cmd.arg("--hosts")
                .arg("host-a,host-b")
                .arg("--spawn")
                .arg("env GEX_FAKE_HOST={host}");
        }
        cmd.arg(program);
        for (k, v) in self.env {
            cmd.env(k, v);
        }
        cmd
    }
}

/// Whether this machine can run the namespace set-ups: root, `ip` and
/// `nft`. The error says what is missing.
pub fn netns_support() -> Result<(), String> {
    let mut missing = Vec::new();
    if !is_root() {
        missing.push("not running as root".to_string());
    }
    for (tool, flag) in [("ip", "-V"), ("nft", "--version")] {
        let ok = Command::new(tool)
            .arg(flag)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            missing.push(format!("no working `{tool} {flag}`"));
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(missing.join(", "))
    }
}

/// Whether the effective user is root (from /proc: xtask links no libc).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1).map(|e| e == "0"))
            .unwrap_or(false)
    })
}

/// Two network namespaces, `gexA-<pid>` and `gexB-<pid>`, that stand for
/// two hosts: a veth pair joins them with 10.77.k.1/24 and 10.77.k.2/24
/// (addresses that exist only inside these namespaces), loopback is up, and
/// an nftables rule in each drops 10% of the UDP datagrams it receives
/// (counted, see [`Netns::dropped`]).
///
/// Dropping it deletes both namespaces (which takes the veth pair and the
/// rules with them). So does a helper process that waits for the end of a
/// pipe from this one and ignores SIGINT, SIGTERM and SIGHUP: the
/// namespaces go even when xtask is killed (Ctrl-C ends xtask at once).
pub struct Netns {
    pub names: [String; 2],
    k: u8,
    reaper: Option<(Child, ChildStdin)>,
}

impl Netns {
    /// Creates the namespaces; on failure, removes whatever was created.
    pub fn create() -> Result<Netns, String> {
        remove_stale_namespaces();
        let pid = std::process::id();
        let names = [format!("gexA-{pid}"), format!("gexB-{pid}")];
        let veth = [format!("gxa{pid}"), format!("gxb{pid}")];
        let k = (pid % 250) as u8 + 1;
        let mut reaper = Command::new("sh")
            .args([
                "-c",
                "trap '' INT TERM HUP; cat >/dev/null; \
                 ip netns del \"$1\" 2>/dev/null; ip netns del \"$2\" 2>/dev/null; true",
                "gex-netns-reaper",
            ])
            .args(&names)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start the namespace reaper: {e}"))?;
        let Some(pipe) = reaper.stdin.take() else {
            let _ = reaper.kill();
            let _ = reaper.wait();
            return Err("the namespace reaper has no stdin".into());
        };
        let ns = Netns {
            names,
            k,
            reaper: Some((reaper, pipe)),
        };
        let [a, b] = &ns.names;
        let [va, vb] = &veth;
        let [ip_a, ip_b] = ns.addrs();
        let mut steps: Vec<Vec<String>> = vec![
            vec!["ip", "netns", "add", a],
            vec!["ip", "netns", "add", b],
            vec!["ip", "link", "add", va, "type", "veth", "peer", "name", vb],
            vec!["ip", "link", "set", va, "netns", a],
            vec!["ip", "link", "set", vb, "netns", b],
        ]
        .into_iter()
        .map(|v| v.into_iter().map(String::from).collect())
        .collect();
        for (ns_name, dev, ip) in [(a, va, &ip_a), (b, vb, &ip_b)] {
            let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
            steps.push(words(&format!(
                "ip -n {ns_name} addr add {ip}/24 dev {dev}"
            )));
            steps.push(words(&format!("ip -n {ns_name} link set lo up")));
            steps.push(words(&format!("ip -n {ns_name} link set {dev} up")));
            let nft = ["ip", "netns", "exec", ns_name.as_str(), "nft", "add"];
            let with = |rest: &[&str]| {
                nft.iter()
                    .chain(rest)
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
            };
            steps.push(with(&["table", "inet", "gexloss"]));
            steps.push(with(&[
                "chain",
                "inet",
                "gexloss",
                "input",
                "{ type filter hook input priority 0; }",
            ]));
            steps.push(with(&[
                "rule", "inet", "gexloss", "input", "meta", "l4proto", "udp", "numgen", "random",
                "mod", "10", "0", "counter", "drop",
            ]));
        }
        for step in &steps {
            let out = Command::new(&step[0])
                .args(&step[1..])
                .stdin(Stdio::null())
                .output()
                .map_err(|e| format!("`{}`: {e}", step.join(" ")))?;
            if !out.status.success() {
                return Err(format!(
                    "`{}` failed ({}): {}",
                    step.join(" "),
                    describe_status(out.status),
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
        }
        Ok(ns)
    }

    /// The addresses of the two namespaces.
    pub fn addrs(&self) -> [String; 2] {
        [format!("10.77.{}.1", self.k), format!("10.77.{}.2", self.k)]
    }

    /// The UDP datagrams nftables dropped so far, per namespace.
    pub fn dropped(&self) -> Vec<u64> {
        self.names
            .iter()
            .map(|n| {
                let out = Command::new("ip")
                    .args([
                        "netns", "exec", n, "nft", "list", "table", "inet", "gexloss",
                    ])
                    .stderr(Stdio::null())
                    .output();
                let text = out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
                text.ok()
                    .and_then(|t| {
                        let after = t.split("counter packets ").nth(1)?;
                        after.split_whitespace().next()?.parse().ok()
                    })
                    .unwrap_or(0)
            })
            .collect()
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // Closing the pipe makes the reaper delete the namespaces; wait
        // for it, so they are gone when xtask ends.
        let Some((mut reaper, pipe)) = self.reaper.take() else {
            return;
        };
        drop(pipe);
        let _ = reaper.wait();
        // In case the reaper could not do it.
        for n in &self.names {
            let _ = Command::new("ip")
                .args(["netns", "del", n])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// Deletes `gexA-<pid>` / `gexB-<pid>` namespaces whose xtask is gone (its
/// reaper was killed too).
fn remove_stale_namespaces() {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return;
    };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or_default();
        let pid = name
            .strip_prefix("gexA-")
            .or_else(|| name.strip_prefix("gexB-"))
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(pid) = pid {
            if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
                println!("xtask: removing the stale network namespace {name}");
                let _ = Command::new("ip").args(["netns", "del", name]).status();
            }
        }
    }
}

/// One cell of the matrix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    pub program: String,
    pub conduit: &'static Conduit,
    pub ranks: u32,
}

impl Case {
    /// Where the run's output goes, relative to the log directory.
    pub fn log_name(&self) -> PathBuf {
        Path::new(self.conduit.name).join(format!("{}-n{}.log", self.program, self.ranks))
    }
}

/// The runs, program by program, then set-up, then rank count.
pub fn matrix(programs: &[String], conduits: &[&'static Conduit], max_ranks: u32) -> Vec<Case> {
    let mut cases = Vec::new();
    for program in programs {
        for &conduit in conduits {
            for ranks in conduit.rank_counts(max_ranks) {
                cases.push(Case {
                    program: program.clone(),
                    conduit,
                    ranks,
                });
            }
        }
    }
    cases
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    /// Non-zero exit, death by signal or failure to start; says which.
    Failed(String),
    /// Still running after gex-run's timeout plus [`WATCHDOG_GRACE`].
    TimedOut,
    /// Not run: the machine cannot (says why). Not a pass.
    Skipped(String),
}

impl Outcome {
    pub fn passed(&self) -> bool {
        *self == Outcome::Passed
    }

    fn cell(&self) -> &'static str {
        match self {
            Outcome::Passed => "pass",
            Outcome::Failed(_) => "FAIL",
            Outcome::TimedOut => "HUNG",
            Outcome::Skipped(_) => "skip",
        }
    }
}

/// Describes a process's end for a message ("exit 3", "signal 9").
pub fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("signal {signal}");
        }
    }
    status.to_string()
}

fn spawn_logged(cmd: &mut Command, log: &Path) -> std::io::Result<Child> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let out = File::create(log)?;
    let err = out.try_clone()?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .spawn()
}

/// Runs `cmd` with its output in `log`, ending it if it outlives `limit`:
/// first SIGTERM (so gex-run can take its ranks down), then SIGKILL.
pub fn run_logged(cmd: &mut Command, log: &Path, limit: Duration) -> Outcome {
    let mut child = match spawn_logged(cmd, log) {
        Ok(child) => child,
        Err(e) => return Outcome::Failed(format!("could not start: {e}")),
    };
    let start = Instant::now();
    let mut terminated_at: Option<Instant> = None;
    loop {
        match child.try_wait() {
            Ok(Some(_)) if terminated_at.is_some() => return Outcome::TimedOut,
            Ok(Some(status)) if status.success() => return Outcome::Passed,
            Ok(Some(status)) if status.code() == Some(GEX_RUN_TIMEOUT_CODE) => {
                return Outcome::Failed(format!(
                    "{}: gex-run's --timeout expired",
                    describe_status(status)
                ))
            }
            Ok(Some(status)) => return Outcome::Failed(describe_status(status)),
            Ok(None) => {}
            Err(e) => return Outcome::Failed(format!("wait failed: {e}")),
        }
        match terminated_at {
            None if start.elapsed() > limit => {
                // The child is not reaped yet, so its id is still its own.
                let _ = Command::new("kill")
                    .args(["-TERM", &child.id().to_string()])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
                terminated_at = Some(Instant::now());
            }
            Some(at) if at.elapsed() > Duration::from_secs(10) => {
                let _ = child.kill();
                let _ = child.wait();
                return Outcome::TimedOut;
            }
            _ => {}
        }
        thread::sleep(Duration::from_millis(5));
    }
}

/// The last `lines` lines of a log, for a failure report.
pub fn tail(log: &Path, lines: usize) -> String {
    match std::fs::read(log) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let all: Vec<&str> = text.lines().collect();
            all[all.len().saturating_sub(lines)..].join("\n")
        }
        Err(e) => format!("(could not read {}: {e})", log.display()),
    }
}

/// The pass/fail table: a row per (program, conduit), a column per rank count.
pub fn render_table(results: &[(Case, Outcome)], max_ranks: u32) -> String {
    let program_width = results
        .iter()
        .map(|(c, _)| c.program.len())
        .chain(["program".len()])
        .max()
        .unwrap_or(0);
    let conduit_width = results
        .iter()
        .map(|(c, _)| c.conduit.name.len())
        .chain(["conduit".len()])
        .max()
        .unwrap_or(0);
    let cell_width = format!("n={max_ranks}").len().max(4);

    let mut out = format!("{:program_width$}  {:conduit_width$}", "program", "conduit");
    for ranks in 1..=max_ranks {
        out += &format!("  {:>cell_width$}", format!("n={ranks}"));
    }
    out.push('\n');

    let mut rows: Vec<(&str, &str)> = Vec::new();
    for (case, _) in results {
        let key = (case.program.as_str(), case.conduit.name);
        if !rows.contains(&key) {
            rows.push(key);
        }
    }
    for (program, conduit) in rows {
        out += &format!("{program:program_width$}  {conduit:conduit_width$}");
        for ranks in 1..=max_ranks {
            let cell = results
                .iter()
                .find(|(c, _)| {
                    c.program == program && c.conduit.name == conduit && c.ranks == ranks
                })
                .map_or("-", |(_, outcome)| outcome.cell());
            out += &format!("  {cell:>cell_width$}");
        }
        out.push('\n');
    }
    out
}

/// The time each row (program, set-up) took, summed over its rank counts.
pub fn render_times(results: &[(Case, Outcome)], times: &[Duration]) -> String {
    let mut rows: Vec<(&str, &str, Duration)> = Vec::new();
    for ((case, _), t) in results.iter().zip(times) {
        let key = (case.program.as_str(), case.conduit.name);
        match rows.iter_mut().find(|r| (r.0, r.1) == key) {
            Some(r) => r.2 += *t,
            None => rows.push((key.0, key.1, *t)),
        }
    }
    let pw = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let cw = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    let mut out = String::from("time per row:\n");
    for (p, c, t) in &rows {
        out += &format!("  {p:pw$}  {c:cw$}  {:>7.1}s\n", t.as_secs_f64());
    }
    let total: Duration = times.iter().sum();
    out += &format!("  total {:.1}s\n", total.as_secs_f64());
    out
}

/// The closing line, in the "N passed, N failed" form CI log readers know
/// (plus ", N skipped" when some were).
pub fn summary_line(results: &[(Case, Outcome)]) -> String {
    let passed = results.iter().filter(|(_, o)| o.passed()).count();
    let skipped = results
        .iter()
        .filter(|(_, o)| matches!(o, Outcome::Skipped(_)))
        .count();
    let mut line = format!(
        "test-cluster: {passed} passed, {} failed",
        results.len() - passed - skipped
    );
    if skipped > 0 {
        line += &format!(", {skipped} skipped");
    }
    line
}

/// One line per skipped set-up, saying why (for under the table).
pub fn skip_lines(results: &[(Case, Outcome)]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for (case, outcome) in results {
        if let Outcome::Skipped(why) = outcome {
            let line = format!("{}: skipped: {why}", case.conduit.name);
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn smp() -> &'static Conduit {
        &CONDUITS[0]
    }

    #[test]
    fn smp_is_a_conduit() {
        assert_eq!(smp().name, "smp");
    }

    #[test]
    fn matrix_covers_every_program_conduit_and_rank_count() {
        let programs = vec!["test-a".to_string(), "test-b".to_string()];
        let cases = matrix(&programs, &[smp()], 3);
        assert_eq!(cases.len(), 6);
        assert_eq!(
            cases
                .iter()
                .map(|c| (c.program.as_str(), c.ranks))
                .collect::<Vec<_>>(),
            [
                ("test-a", 1),
                ("test-a", 2),
                ("test-a", 3),
                ("test-b", 1),
                ("test-b", 2),
                ("test-b", 3)
            ]
        );
        assert!(matrix(&[], &[smp()], 3).is_empty());
    }

    fn conduit(name: &str) -> &'static Conduit {
        CONDUITS.iter().find(|c| c.name == name).unwrap()
    }

    #[test]
    fn ibv_rows_run_the_simulated_device_without_and_with_the_bypass() {
        let args = |name: &str| -> Vec<String> {
            conduit(name)
                .launch(Path::new("gex-run"), 3, Path::new("t"), None)
                .get_args()
                .map(|a| a.to_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(
            args("ibv-nobypass"),
            ["-n", "3", "--timeout", "120", "--conduit", "ibv", "t"]
        );
        assert_eq!(
            args("ibv-hosts"),
            [
                "-n",
                "3",
                "--timeout",
                "120",
                "--conduit",
                "ibv",
                "--hosts",
                "host-a,host-b",
                "--spawn",
                "env GEX_FAKE_HOST={host}",
                "t"
            ]
        );
        for name in ["ibv-nobypass", "ibv-hosts"] {
            let c = conduit(name);
            assert!(c.env.contains(&("GEX_IBV_PROVIDER", "sim")), "{name}");
            assert_eq!(c.rank_counts(8), 2..=4, "{name}");
        }
        assert!(conduit("ibv-nobypass")
            .env
            .contains(&("GEX_IBV_BYPASS", "0")));
    }

    #[test]
    fn udp_rows_run_2_to_4_ranks() {
        let programs = vec!["test-a".to_string()];
        let all: Vec<&'static Conduit> = CONDUITS.iter().collect();
        let cases = matrix(&programs, &all, 5);
        let ranks = |name: &str| -> Vec<u32> {
            cases
                .iter()
                .filter(|c| c.conduit.name == name)
                .map(|c| c.ranks)
                .collect()
        };
        assert_eq!(ranks("smp"), [1, 2, 3, 4, 5]);
        assert_eq!(ranks("udp-nobypass"), [2, 3, 4]);
        assert_eq!(ranks("udp-netns"), [2, 3, 4]);
        assert_eq!(conduit("udp-netns").rank_counts(3), 2..=3);
        assert!(conduit("udp-netns").rank_counts(1).is_empty());
    }

    #[test]
    fn udp_launch_command_lines() {
        let cmd = conduit("udp-nobypass").launch(Path::new("gex-run"), 3, Path::new("t"), None);
        let args: Vec<_> = cmd.get_args().map(|a| a.to_str().unwrap()).collect();
        assert_eq!(
            args,
            ["-n", "3", "--timeout", "120", "--conduit", "udp", "t"]
        );
        let envs: Vec<_> = cmd.get_envs().collect();
        assert_eq!(
            envs,
            [(
                std::ffi::OsStr::new("GEX_UDP_BYPASS"),
                Some(std::ffi::OsStr::new("0"))
            )]
        );

        let ns = Netns {
            names: ["gexA-9".into(), "gexB-9".into()],
            k: 10,
            reaper: None,
        };
        let cmd = conduit("udp-netns").launch(Path::new("gex-run"), 4, Path::new("t"), Some(&ns));
        let args: Vec<_> = cmd.get_args().map(|a| a.to_str().unwrap()).collect();
        assert_eq!(
            args,
            [
                "-n",
                "4",
                "--timeout",
                "300",
                "--conduit",
                "udp",
                "--hosts",
                "gexA-9,gexB-9",
                "--spawn",
                "ip netns exec {host}",
                "--host-env",
                "gexA-9:GEX_UDP_ADDR=10.77.10.1",
                "--host-env",
                "gexB-9:GEX_UDP_ADDR=10.77.10.2",
                "t"
            ]
        );
        assert_eq!(cmd.get_envs().count(), 0);
    }

    #[test]
    fn skips_are_shown_and_not_passes() {
        let programs = vec!["test-a".to_string()];
        let cases = matrix(&programs, &[smp(), conduit("udp-netns")], 2);
        let results: Vec<_> = cases
            .into_iter()
            .map(|c| {
                let o = if c.conduit.netns {
                    Outcome::Skipped("needs root, ip and nft".into())
                } else {
                    Outcome::Passed
                };
                (c, o)
            })
            .collect();
        assert_eq!(
            render_table(&results, 2),
            "program  conduit     n=1   n=2\n\
             test-a   smp        pass  pass\n\
             test-a   udp-netns     -  skip\n"
        );
        assert_eq!(
            summary_line(&results),
            "test-cluster: 2 passed, 0 failed, 1 skipped"
        );
        assert_eq!(
            skip_lines(&results),
            ["udp-netns: skipped: needs root, ip and nft"]
        );
        assert!(!Outcome::Skipped(String::new()).passed());
    }

    #[test]
    fn launch_command_line() {
        let cmd = smp().launch(
            Path::new("/t/release/gex-run"),
            4,
            Path::new("/t/release/test-a"),
            None,
        );
        assert_eq!(cmd.get_program(), "/t/release/gex-run");
        let args: Vec<_> = cmd.get_args().map(|a| a.to_str().unwrap()).collect();
        assert_eq!(
            args,
            [
                "-n",
                "4",
                "--timeout",
                "120",
                "--conduit",
                "smp",
                "/t/release/test-a"
            ]
        );
    }

    #[test]
    fn log_names_are_distinct_per_case() {
        let case = Case {
            program: "test-a".into(),
            conduit: smp(),
            ranks: 3,
        };
        assert_eq!(case.log_name(), Path::new("smp/test-a-n3.log"));
    }

    #[test]
    fn table_and_summary() {
        let programs = vec!["test-am".to_string(), "test-longer-name".to_string()];
        let cases = matrix(&programs, &[smp()], 2);
        let outcomes = [
            Outcome::Passed,
            Outcome::Failed("exit 1".into()),
            Outcome::Passed,
            Outcome::TimedOut,
        ];
        let results: Vec<_> = cases.into_iter().zip(outcomes).collect();
        let table = render_table(&results, 2);
        assert_eq!(
            table,
            "program           conduit   n=1   n=2\n\
             test-am           smp      pass  FAIL\n\
             test-longer-name  smp      pass  HUNG\n"
        );
        assert_eq!(summary_line(&results), "test-cluster: 2 passed, 2 failed");
    }

    #[cfg(unix)]
    #[test]
    fn run_logged_reports_exit_status_and_captures_output() {
        let dir = std::env::temp_dir().join(format!("xtask-test-{}", std::process::id()));
        let log = dir.join("sub/run.log");
        let mut ok = Command::new("sh");
        ok.args(["-c", "echo out; echo err >&2"]);
        assert_eq!(
            run_logged(&mut ok, &log, Duration::from_secs(30)),
            Outcome::Passed
        );
        assert_eq!(tail(&log, 10), "out\nerr");
        assert_eq!(tail(&log, 1), "err");

        let mut bad = Command::new("sh");
        bad.args(["-c", "exit 3"]);
        assert_eq!(
            run_logged(&mut bad, &log, Duration::from_secs(30)),
            Outcome::Failed("exit 3".into())
        );
        let mut timeout = Command::new("sh");
        timeout.args(["-c", "exit 124"]);
        assert_eq!(
            run_logged(&mut timeout, &log, Duration::from_secs(30)),
            Outcome::Failed("exit 124: gex-run's --timeout expired".into())
        );

        let mut missing = Command::new(dir.join("no-such-program"));
        assert!(matches!(
            run_logged(&mut missing, &log, Duration::from_secs(30)),
            Outcome::Failed(msg) if msg.starts_with("could not start")
        ));

        let mut hung = Command::new("sleep");
        hung.arg("30");
        let start = Instant::now();
        assert_eq!(
            run_logged(&mut hung, &log, Duration::from_millis(50)),
            Outcome::TimedOut
        );
        assert!(start.elapsed() < Duration::from_secs(10));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
