//! The `gex-run` command: parses the command line and runs one job.

use std::io;
use std::process::exit;
use std::time::Duration;

use gex_run::{Ctrl, JobSpec, Output};

const USAGE: &str = "\
usage: gex-run -n N [--timeout SECS] [--conduit NAME] [--label] [--hosts H1,H2,...]
               [--] PROGRAM [ARGS...]

Starts N processes (ranks) of PROGRAM, on this host or on several, and
serves their start-up control plane. The exit code is the job's: the code a
rank passed to exit, the code (or 128 + signal) of the first rank that
failed, 124 on timeout, 130/143 on SIGINT/SIGTERM, 0 if every rank exited 0.

options:
  -n, --ranks N         number of ranks (required, at least 1)
  --timeout SECS        end the job with code 124 after SECS seconds
                        (default: the GEX_RUN_TIMEOUT variable, else none)
  --exit-grace SECS     after a rank exits 0, end the job (code 0) if others
                        still run SECS seconds later (default: 2)
  --conduit NAME        conduit the ranks use, passed as GEX_CONDUIT (default: smp)
  --label               prefix every output line with [rank]
  --hosts H1,H2,...     place the ranks on these hosts, ceil(N/H) consecutive
                        ranks per host; each rank gets GEX_HOST (its host) and
                        GEX_HOSTS (the number of hosts used)
  --hostfile FILE       the same, one host per line (# starts a comment)
  --spawn TEMPLATE      command that starts a rank on a host, {host} replaced,
                        the program and its arguments appended (default: ssh
                        -o BatchMode=yes {host}, or directly for localhost and
                        this host); through ssh the environment is passed as
                        `env VAR=VALUE ...` on the remote command line
  --host-env HOST:VAR=VALUE
                        set VAR=VALUE for the ranks on HOST (repeatable)
  --ctrl unix|tcp       control plane transport (default: tcp if some rank is
                        started through ssh, else a Unix socket pair per rank,
                        inherited as GEX_CTRL=fd:N:PID)
  --ctrl-addr IP:PORT   where the tcp control plane listens (default 0.0.0.0:0;
                        ranks are told this IP, or this host's first
                        non-loopback IPv4 address)
  -h, --help            print this help";

/// A command-line error: printed with the usage, exit code 2.
struct UsageError(String);

enum Parsed {
    Run(Box<JobSpec>),
    Help,
}

fn parse_timeout(v: &str, origin: &str) -> Result<Duration, UsageError> {
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e9)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| {
            UsageError(format!(
                "{origin}: expected a positive number of seconds, got '{v}'"
            ))
        })
}

/// Reads a host file: one host per line; blank lines and `#` comments are
/// skipped.
fn read_hostfile(path: &str) -> Result<Vec<String>, UsageError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| UsageError(format!("--hostfile {path}: {e}")))?;
    Ok(text
        .lines()
        .map(|l| l.split('#').next().unwrap_or_default().trim())
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect())
}

fn parse(args: &[String], env_timeout: Option<String>) -> Result<Parsed, UsageError> {
    let mut ranks: Option<u32> = None;
    let mut timeout: Option<Duration> = None;
    let mut conduit = "smp".to_string();
    let mut label = false;
    let mut hosts: Option<Vec<String>> = None;
    let mut spawn: Option<String> = None;
    let mut host_env: Vec<(String, String, String)> = Vec::new();
    let mut ctrl: Option<Ctrl> = None;
    let mut ctrl_addr: Option<std::net::SocketAddr> = None;
    let mut exit_grace: Option<Duration> = None;
    let mut i = 0;
    // Takes the value of option `name`: `--name=V`, `-nV`, or the next word.
    let value = |i: &mut usize, name: &str, inline: Option<&str>| -> Result<String, UsageError> {
        if let Some(v) = inline {
            return Ok(v.to_string());
        }
        *i += 1;
        args.get(*i)
            .cloned()
            .ok_or_else(|| UsageError(format!("option {name} needs a value")))
    };
    while i < args.len() {
        let arg = args[i].as_str();
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ if arg.starts_with("-n") && arg.len() > 2 && !arg.starts_with("--") => {
                ("-n", Some(&arg[2..]))
            }
            _ => (arg, None),
        };
        match name {
            "-h" | "--help" => return Ok(Parsed::Help),
            "-n" | "--ranks" => {
                let v = value(&mut i, name, inline)?;
                let n = v.parse::<u32>().map_err(|_| {
                    UsageError(format!("-n: expected a number of ranks, got '{v}'"))
                })?;
                if n == 0 {
                    return Err(UsageError("-n: a job needs at least one rank".into()));
                }
                ranks = Some(n);
            }
            "--timeout" => {
                timeout = Some(parse_timeout(&value(&mut i, name, inline)?, "--timeout")?)
            }
            "--exit-grace" => {
                exit_grace = Some(parse_timeout(
                    &value(&mut i, name, inline)?,
                    "--exit-grace",
                )?)
            }
            "--conduit" => conduit = value(&mut i, name, inline)?,
            "--label" if inline.is_none() => label = true,
            "--hosts" | "--hostfile" => {
                let v = value(&mut i, name, inline)?;
                if hosts.is_some() {
                    return Err(UsageError("--hosts/--hostfile given twice".into()));
                }
                let list = if name == "--hosts" {
                    v.split(',')
                        .map(str::trim)
                        .filter(|h| !h.is_empty())
                        .map(String::from)
                        .collect()
                } else {
                    read_hostfile(&v)?
                };
                if list.is_empty() {
                    return Err(UsageError(format!("{name}: no hosts in '{v}'")));
                }
                hosts = Some(list);
            }
            "--spawn" => {
                let v = value(&mut i, name, inline)?;
                if v.trim().is_empty() {
                    return Err(UsageError("--spawn: empty command template".into()));
                }
                spawn = Some(v);
            }
            "--host-env" => {
                let v = value(&mut i, name, inline)?;
                let parsed = v.split_once(':').and_then(|(h, kv)| {
                    let (k, val) = kv.split_once('=')?;
                    (!h.is_empty() && !k.is_empty()).then(|| (h.into(), k.into(), val.into()))
                });
                host_env.push(parsed.ok_or_else(|| {
                    UsageError(format!("--host-env: expected HOST:VAR=VALUE, got '{v}'"))
                })?);
            }
            "--ctrl" => {
                ctrl = Some(match value(&mut i, name, inline)?.as_str() {
                    "unix" => Ctrl::Unix,
                    "tcp" => Ctrl::Tcp,
                    other => {
                        return Err(UsageError(format!(
                            "--ctrl: expected unix or tcp, got '{other}'"
                        )))
                    }
                })
            }
            "--ctrl-addr" => {
                let v = value(&mut i, name, inline)?;
                ctrl_addr = Some(v.parse().map_err(|_| {
                    UsageError(format!("--ctrl-addr: expected IP:PORT, got '{v}'"))
                })?);
            }
            "--" => {
                i += 1;
                break;
            }
            _ if arg.starts_with('-') && arg != "-" => {
                return Err(UsageError(format!("unknown option '{arg}'")))
            }
            _ => break,
        }
        i += 1;
    }
    let ranks = ranks.ok_or_else(|| UsageError("the number of ranks (-n N) is required".into()))?;
    let Some(program) = args.get(i) else {
        return Err(UsageError("no program to run".into()));
    };
    if timeout.is_none() {
        if let Some(v) = env_timeout.filter(|v| !v.trim().is_empty()) {
            timeout = Some(parse_timeout(&v, "GEX_RUN_TIMEOUT")?);
        }
    }
    let hosts = hosts.unwrap_or_default();
    if let Some((h, _, _)) = host_env.iter().find(|(h, _, _)| !hosts.contains(h)) {
        return Err(UsageError(format!(
            "--host-env: '{h}' is not one of the hosts (--hosts / --hostfile)"
        )));
    }
    if ctrl_addr.is_some() && ctrl == Some(Ctrl::Unix) {
        return Err(UsageError("--ctrl-addr needs --ctrl tcp".into()));
    }
    if ctrl_addr.is_some() {
        ctrl = Some(Ctrl::Tcp);
    }
    let mut spec = JobSpec::new(ranks, program);
    spec.args = args[i + 1..].to_vec();
    spec.timeout = timeout;
    spec.exit_grace = exit_grace;
    spec.conduit = conduit;
    spec.label = label;
    spec.output = Output::Inherit;
    spec.hosts = hosts;
    spec.spawn = spawn;
    spec.host_env = host_env;
    spec.ctrl = ctrl;
    spec.ctrl_addr = ctrl_addr;
    Ok(Parsed::Run(Box::new(spec)))
}

fn usage_error(msg: &str) -> ! {
    // The first line of the help is the synopsis.
    let synopsis = USAGE.lines().next().unwrap_or_default();
    eprintln!("gex-run: {msg}\n{synopsis}\n(gex-run --help for more)");
    exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let spec = match parse(&args, std::env::var("GEX_RUN_TIMEOUT").ok()) {
        Ok(Parsed::Run(spec)) => *spec,
        Ok(Parsed::Help) => {
            println!("{USAGE}");
            return;
        }
        Err(UsageError(msg)) => usage_error(&msg),
    };
    if let Err(e) = gex_run::install_signal_handlers() {
        eprintln!("gex-run: cannot install signal handlers: {e}");
        exit(1);
    }
    match gex_run::run(&spec) {
        Ok(outcome) => exit(outcome.code),
        Err(e) => match e.kind() {
            io::ErrorKind::InvalidInput
            | io::ErrorKind::NotFound
            | io::ErrorKind::PermissionDenied => usage_error(&e.to_string()),
            _ => {
                eprintln!("gex-run: {e}");
                exit(1)
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn spec(s: &str, env: Option<&str>) -> JobSpec {
        match parse(&words(s), env.map(String::from)) {
            Ok(Parsed::Run(spec)) => *spec,
            Ok(Parsed::Help) => panic!("help"),
            Err(UsageError(e)) => panic!("{e}"),
        }
    }

    fn error(s: &str) -> String {
        match parse(&words(s), None) {
            Err(UsageError(e)) => e,
            _ => panic!("'{s}' should not parse"),
        }
    }

    #[test]
    fn parses_options_then_program_and_its_arguments() {
        let s = spec(
            "-n 3 --timeout 1.5 --label --conduit udp prog -n 9 --label",
            None,
        );
        assert_eq!(s.ranks, 3);
        assert_eq!(s.timeout, Some(Duration::from_millis(1500)));
        assert!(s.label);
        assert_eq!(s.conduit, "udp");
        assert_eq!(s.program.to_str(), Some("prog"));
        assert_eq!(s.args, words("-n 9 --label"));

        let s = spec("-n4 --timeout=2 -- -weird", Some("7"));
        assert_eq!(s.ranks, 4);
        assert_eq!(s.timeout, Some(Duration::from_secs(2)));
        assert_eq!(s.program.to_str(), Some("-weird"));

        let s = spec("--ranks=2 prog", Some("7"));
        assert_eq!(s.timeout, Some(Duration::from_secs(7)));
        assert_eq!(s.conduit, "smp");
        assert!(!s.label);
        assert!(matches!(parse(&words("--help"), None), Ok(Parsed::Help)));
    }

    #[test]
    fn rejects_bad_command_lines() {
        assert!(error("prog").contains("-n N"));
        assert!(error("-n 0 prog").contains("at least one"));
        assert!(error("-n x prog").contains("number of ranks"));
        assert!(error("-n 2").contains("no program"));
        assert!(error("-n").contains("needs a value"));
        assert!(error("-n 2 --timeout -1 prog").contains("positive"));
        assert!(error("-n 2 --bogus prog").contains("unknown option"));
        assert!(matches!(
            parse(&words("-n 2 prog"), Some("soon".into())),
            Err(UsageError(e)) if e.contains("GEX_RUN_TIMEOUT")
        ));
        assert!(error("-n 2 --hosts , prog").contains("no hosts"));
        assert!(error("-n 2 --hosts a --hostfile /dev/null prog").contains("twice"));
        assert!(error("-n 2 --hostfile /no/such/file prog").contains("/no/such/file"));
        assert!(error("-n 2 --host-env a:X prog").contains("HOST:VAR=VALUE"));
        assert!(error("-n 2 --hosts a --host-env b:X=1 prog").contains("not one of the hosts"));
        assert!(error("-n 2 --ctrl udp prog").contains("unix or tcp"));
        assert!(error("-n 2 --ctrl-addr nowhere prog").contains("IP:PORT"));
        assert!(error("-n 2 --ctrl unix --ctrl-addr 1.2.3.4:5 prog").contains("--ctrl tcp"));
    }

    #[test]
    fn parses_host_options() {
        let args: Vec<String> = [
            "-n",
            "5",
            "--hosts",
            "a,b",
            "--spawn",
            "ip netns exec {host}",
            "--host-env",
            "a:GEX_UDP_ADDR=10.0.0.1",
            "--host-env=b:X=y=z",
            "prog",
        ]
        .map(String::from)
        .to_vec();
        let Ok(Parsed::Run(s)) = parse(&args, None) else {
            panic!("should parse")
        };
        assert_eq!(s.hosts, ["a", "b"]);
        assert_eq!(s.spawn.as_deref(), Some("ip netns exec {host}"));
        assert_eq!(
            s.host_env,
            [
                ("a".into(), "GEX_UDP_ADDR".into(), "10.0.0.1".into()),
                ("b".into(), "X".into(), "y=z".into())
            ]
        );
        assert_eq!(s.ctrl, None);

        let s = spec("-n 2 --ctrl tcp prog", None);
        assert_eq!(s.ctrl, Some(Ctrl::Tcp));
        let s = spec("-n 2 --ctrl-addr 127.0.0.1:0 prog", None);
        assert_eq!(s.ctrl, Some(Ctrl::Tcp));
        assert_eq!(s.ctrl_addr, Some("127.0.0.1:0".parse().unwrap()));

        let path = std::env::temp_dir().join(format!("gex-run-hostfile-{}", std::process::id()));
        std::fs::write(&path, "# the cluster\nnode1\n\n  node2  # spare\n").unwrap();
        let s = spec(&format!("-n 3 --hostfile {} prog", path.display()), None);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(s.hosts, ["node1", "node2"]);
    }
}
