//! The `gex-run` command: parses the command line and runs one job.

use std::io;
use std::process::exit;
use std::time::Duration;

use gex_run::{JobSpec, Output};

const USAGE: &str = "\
usage: gex-run -n N [--timeout SECS] [--conduit NAME] [--label] [--] PROGRAM [ARGS...]

Starts N processes (ranks) of PROGRAM on this host and serves their start-up
control plane. The exit code is the job's: the code a rank passed to exit,
the code (or 128 + signal) of the first rank that failed, 124 on timeout,
130/143 on SIGINT/SIGTERM, 0 if every rank exited 0.

options:
  -n, --ranks N      number of ranks (required, at least 1)
  --timeout SECS     end the job with code 124 after SECS seconds
                     (default: the GEX_RUN_TIMEOUT variable, else none)
  --conduit NAME     conduit the ranks use, passed as GEX_CONDUIT (default: smp)
  --label            prefix every output line with [rank]
  -h, --help         print this help";

/// A command-line error: printed with the usage, exit code 2.
struct UsageError(String);

enum Parsed {
    Run(JobSpec),
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

fn parse(args: &[String], env_timeout: Option<String>) -> Result<Parsed, UsageError> {
    let mut ranks: Option<u32> = None;
    let mut timeout: Option<Duration> = None;
    let mut conduit = "smp".to_string();
    let mut label = false;
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
            "--conduit" => conduit = value(&mut i, name, inline)?,
            "--label" if inline.is_none() => label = true,
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
    let mut spec = JobSpec::new(ranks, program);
    spec.args = args[i + 1..].to_vec();
    spec.timeout = timeout;
    spec.conduit = conduit;
    spec.label = label;
    spec.output = Output::Inherit;
    Ok(Parsed::Run(spec))
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
        Ok(Parsed::Run(spec)) => spec,
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
            Ok(Parsed::Run(spec)) => spec,
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
    }
}
