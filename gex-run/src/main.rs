//! The `gex-run` command: parses the command line and runs one job.

use std::io;
use std::process::exit;
use std::time::Duration;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{ArgAction, Parser};
use gex_run::{Ctrl, JobSpec, Output};

/// The synopsis: the first line of the help and of every usage error.
const SYNOPSIS: &str = "\
usage: gex-run -n N [--timeout SECS] [--conduit NAME] [--label] [--hosts H1,H2,...]
               [-x VAR[=VALUE]]... [--] PROGRAM [ARGS...]";

/// The conduits a rank program can be asked to use (`--conduit`,
/// `GEX_CONDUIT`).
const CONDUITS: [&str; 3] = ["smp", "udp", "ibv"];

/// The command line. Every value is kept as written and checked in
/// [`parse`], so that each error names the option and what it expected.
#[derive(Parser, Debug)]
#[command(
    name = "gex-run",
    about = ABOUT,
    help_template = "usage: {usage}\n\n{about}\n\noptions:\n{options}",
    override_usage = "gex-run -n N [--timeout SECS] [--conduit NAME] [--label] [--hosts H1,H2,...]\n               [-x VAR[=VALUE]]... [--] PROGRAM [ARGS...]",
    disable_version_flag = true,
    args_override_self = true
)]
struct Cli {
    /// number of ranks (required, at least 1;
    /// -np N, as mpirun has it, is the same)
    #[arg(
        verbatim_doc_comment,
        allow_hyphen_values = true,
        short = 'n',
        long = "ranks",
        value_name = "N"
    )]
    ranks: Option<String>,
    /// end the job with code 124 after SECS seconds
    /// (default: the GEX_RUN_TIMEOUT variable, else
    /// none)
    #[arg(
        verbatim_doc_comment,
        allow_hyphen_values = true,
        long,
        value_name = "SECS"
    )]
    timeout: Option<String>,
    /// after a rank's exit, how long the others
    /// may take to exit too before they are ended
    /// (after exit(0) from main, the job then
    /// ends with code 0); 0 or more (default: the
    /// GEX_EXIT_TIMEOUT variable, else 2)
    #[arg(
        verbatim_doc_comment,
        allow_hyphen_values = true,
        long,
        value_name = "SECS"
    )]
    exit_grace: Option<String>,
    /// conduit the ranks use: smp, udp or ibv, passed
    /// as GEX_CONDUIT (default: the GEX_CONDUIT
    /// variable, else smp)
    #[arg(
        verbatim_doc_comment,
        allow_hyphen_values = true,
        long,
        value_name = "NAME"
    )]
    conduit: Option<String>,
    /// pass VAR to every rank with the value it has
    /// here, or set it to VALUE (repeatable; as
    /// mpirun's -x)
    #[arg(
        verbatim_doc_comment,
        short = 'x',
        allow_hyphen_values = true,
        value_name = "VAR[=VALUE]",
        action = ArgAction::Append
    )]
    export: Vec<String>,
    /// print gex-run's version and exit
    #[arg(verbatim_doc_comment, long)]
    version: bool,
    /// prefix every output line with [rank]
    #[arg(verbatim_doc_comment, long)]
    label: bool,
    /// place the ranks on these hosts, ceil(N/H)
    /// consecutive ranks per host; each rank gets
    /// GEX_HOST (its host) and GEX_HOSTS (the
    /// number of hosts used)
    #[arg(
        verbatim_doc_comment,
        allow_hyphen_values = true,
        long,
        value_name = "H1,H2,...",
        conflicts_with = "hostfile"
    )]
    hosts: Option<String>,
    /// the same, one host per line (# starts a
    /// comment)
    #[arg(
        verbatim_doc_comment,
        allow_hyphen_values = true,
        long,
        value_name = "FILE"
    )]
    hostfile: Option<String>,
    /// command that starts a rank on a host, {host}
    /// replaced, the program and its arguments
    /// appended (default: ssh -o BatchMode=yes
    /// {host}, or directly for localhost and this
    /// host); through ssh the environment is passed
    /// as `env VAR=VALUE ...` on the remote command
    /// line
    #[arg(
        verbatim_doc_comment,
        allow_hyphen_values = true,
        long,
        value_name = "TEMPLATE"
    )]
    spawn: Option<String>,
    /// set VAR=VALUE for the ranks on HOST
    /// (repeatable)
    #[arg(verbatim_doc_comment, allow_hyphen_values = true, long, value_name = "HOST:VAR=VALUE", action = ArgAction::Append)]
    host_env: Vec<String>,
    /// control plane transport, unix or tcp
    /// (default: tcp if some rank is started
    /// through ssh, else a Unix socket pair per
    /// rank, inherited as GEX_CTRL=fd:N:PID)
    #[arg(
        verbatim_doc_comment,
        allow_hyphen_values = true,
        long,
        value_name = "unix|tcp"
    )]
    ctrl: Option<String>,
    /// where the tcp control plane listens (default
    /// 0.0.0.0:0; ranks are told this IP, or this
    /// host's first non-loopback IPv4 address)
    #[arg(
        verbatim_doc_comment,
        allow_hyphen_values = true,
        long,
        value_name = "IP:PORT"
    )]
    ctrl_addr: Option<String>,
    /// the program to start and its arguments
    /// (everything from the first word that is not
    /// an option on belongs to the program)
    #[arg(
        verbatim_doc_comment,
        value_name = "PROGRAM",
        trailing_var_arg = true,
        hide = true
    )]
    command: Vec<String>,
}

const ABOUT: &str = "\
Starts N processes (ranks) of PROGRAM, on this host or on several, and
serves their start-up control plane. The exit code is the job's: the code a
rank passed to exit, the code (or 128 + signal) of the first rank that
failed, 124 on timeout, 130/143 on SIGINT/SIGTERM, 0 if every rank exited 0.
A usage error exits 2.";

/// A command-line error: printed with the usage, exit code 2.
struct UsageError(String);

enum Parsed {
    Run(Box<JobSpec>),
    /// `--help` or `--version`: the text to print.
    Help(String),
}

/// The options that take a value in the next word (so that the word after
/// them is not the program).
const VALUED: [&str; 12] = [
    "-n",
    "--ranks",
    "--timeout",
    "--exit-grace",
    "--conduit",
    "--hosts",
    "--hostfile",
    "--spawn",
    "--host-env",
    "--ctrl",
    "--ctrl-addr",
    "-x",
];

/// mpirun's spelling `-np N` (and `-np=N`) as `-n N`, among gex-run's own
/// options only: from the program on (the first word that is neither an
/// option nor an option's value, or after `--`), words are the program's.
fn mpirun_habits(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut value_next = false;
    let mut program = false;
    for a in args {
        if program {
            out.push(a.clone());
            continue;
        }
        if value_next {
            value_next = false;
            out.push(a.clone());
            continue;
        }
        if a == "--" || !a.starts_with('-') {
            program = true;
            out.push(a.clone());
            continue;
        }
        let a = if a == "-np" {
            "-n".to_string()
        } else if let Some(v) = a.strip_prefix("-np=") {
            format!("-n={v}")
        } else {
            a.clone()
        };
        value_next = VALUED.contains(&a.as_str());
        out.push(a);
    }
    out
}

/// `VAR` or `VAR=VALUE` of `-x`: the pair the ranks get (`VAR` alone takes
/// the value from `env`, and must have one).
fn export(v: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<(String, String), UsageError> {
    let (name, value) = match v.split_once('=') {
        Some((k, val)) => (k, Some(val.to_string())),
        None => (v, None),
    };
    let valid = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(UsageError(format!(
            "-x: expected VAR or VAR=VALUE with a variable name, got '{v}'"
        )));
    }
    let value = match value {
        Some(val) => val,
        None => env(name).ok_or_else(|| {
            UsageError(format!(
                "-x {name}: {name} is not set here (give -x {name}=VALUE)"
            ))
        })?,
    };
    Ok((name.to_string(), value))
}

/// Our wording of clap's errors: what went wrong and where, without clap's
/// usage and tips (the caller prints the synopsis).
fn clap_error(e: &clap::Error) -> UsageError {
    let arg = || match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(s)) => s.clone(),
        _ => String::new(),
    };
    // The option's name as written on the command line (clap adds the
    // value name: "-n <N>").
    // clap names an option by its long form; -n is how users write it.
    let name = || match arg().split(' ').next().unwrap_or_default() {
        "--ranks" | "-n" => "-n/--ranks".to_string(),
        other => other.to_string(),
    };
    UsageError(match e.kind() {
        ErrorKind::UnknownArgument => format!("unknown option '{}'", arg()),
        ErrorKind::InvalidValue | ErrorKind::NoEquals
            if matches!(e.get(ContextKind::InvalidValue), Some(ContextValue::String(v)) if v.is_empty())
                || e.get(ContextKind::InvalidValue).is_none() =>
        {
            format!("option {} needs a value", name())
        }
        ErrorKind::ArgumentConflict => "--hosts/--hostfile given twice".into(),
        _ => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or_default();
            first.trim_start_matches("error: ").to_string()
        }
    })
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

/// The hosts of `--hosts H1,H2,...`.
fn host_list(v: &str) -> Vec<String> {
    v.split(',')
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .map(String::from)
        .collect()
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

/// The exit grace: `0` or more seconds (0: the others are ended as soon as
/// a rank exits).
fn parse_grace(v: &str, origin: &str) -> Result<Duration, UsageError> {
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0 && *s < 1e9)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| UsageError(format!("{origin}: expected 0 or more seconds, got '{v}'")))
}

/// Parses the command line; `env` gives the variables the binary reads
/// (`GEX_RUN_TIMEOUT`, `GEX_EXIT_TIMEOUT`), the defaults of `--timeout`
/// and `--exit-grace`.
fn parse(args: &[String], env: &dyn Fn(&str) -> Option<String>) -> Result<Parsed, UsageError> {
    let words = std::iter::once("gex-run".to_string()).chain(mpirun_habits(args));
    let cli = match Cli::try_parse_from(words) {
        Ok(cli) => cli,
        Err(e) if e.kind() == ErrorKind::DisplayHelp => {
            return Ok(Parsed::Help(e.render().to_string().trim_end().to_string()))
        }
        Err(e) => return Err(clap_error(&e)),
    };
    if cli.version {
        return Ok(Parsed::Help(format!(
            "gex-run {} (gex, GASNet-EX API of release 2025.8.0)",
            env!("CARGO_PKG_VERSION")
        )));
    }
    let ranks = match cli.ranks {
        None => None,
        Some(v) => {
            let n = v
                .parse::<u32>()
                .map_err(|_| UsageError(format!("-n: expected a number of ranks, got '{v}'")))?;
            if n == 0 {
                return Err(UsageError("-n: a job needs at least one rank".into()));
            }
            Some(n)
        }
    };
    let mut timeout = cli
        .timeout
        .map(|v| parse_timeout(&v, "--timeout"))
        .transpose()?;
    let mut exit_grace = cli
        .exit_grace
        .map(|v| parse_grace(&v, "--exit-grace"))
        .transpose()?;
    let hosts = match (cli.hosts, cli.hostfile) {
        (Some(v), _) => Some(("--hosts", v.clone(), host_list(&v))),
        (None, Some(path)) => Some(("--hostfile", path.clone(), read_hostfile(&path)?)),
        (None, None) => None,
    };
    let hosts = match hosts {
        Some((name, v, list)) if list.is_empty() => {
            return Err(UsageError(format!("{name}: no hosts in '{v}'")))
        }
        Some((_, _, list)) => Some(list),
        None => None,
    };
    let spawn = match cli.spawn {
        Some(v) if v.trim().is_empty() => {
            return Err(UsageError("--spawn: empty command template".into()))
        }
        other => other,
    };
    let host_env = cli
        .host_env
        .iter()
        .map(|v| {
            let parsed = v.split_once(':').and_then(|(h, kv)| {
                let (k, val) = kv.split_once('=')?;
                (!h.is_empty() && !k.is_empty()).then(|| (h.into(), k.into(), val.into()))
            });
            parsed.ok_or_else(|| {
                UsageError(format!("--host-env: expected HOST:VAR=VALUE, got '{v}'"))
            })
        })
        .collect::<Result<Vec<(String, String, String)>, UsageError>>()?;
    let mut ctrl = match cli.ctrl.as_deref() {
        None => None,
        Some("unix") => Some(Ctrl::Unix),
        Some("tcp") => Some(Ctrl::Tcp),
        Some(other) => {
            return Err(UsageError(format!(
                "--ctrl: expected unix or tcp, got '{other}'"
            )))
        }
    };
    let ctrl_addr: Option<std::net::SocketAddr> = cli
        .ctrl_addr
        .map(|v| {
            v.parse()
                .map_err(|_| UsageError(format!("--ctrl-addr: expected IP:PORT, got '{v}'")))
        })
        .transpose()?;
    let conduit = match cli.conduit {
        Some(c) => Some((c, "--conduit")),
        None => env("GEX_CONDUIT")
            .filter(|c| !c.trim().is_empty())
            .map(|c| (c, "GEX_CONDUIT")),
    };
    let conduit = match conduit {
        None => "smp".to_string(),
        Some((c, origin)) => {
            let c = c.trim().to_string();
            if !CONDUITS.contains(&c.as_str()) {
                return Err(UsageError(format!(
                    "{origin}: expected one of {}, got '{c}'",
                    CONDUITS.join(", ")
                )));
            }
            c
        }
    };
    let exports = cli
        .export
        .iter()
        .map(|v| export(v, env))
        .collect::<Result<Vec<_>, _>>()?;
    let label = cli.label;
    let command = cli.command;
    let ranks = ranks.ok_or_else(|| UsageError("the number of ranks (-n N) is required".into()))?;
    let Some((program, args)) = command.split_first() else {
        return Err(UsageError("no program to run".into()));
    };
    if timeout.is_none() {
        if let Some(v) = env("GEX_RUN_TIMEOUT").filter(|v| !v.trim().is_empty()) {
            timeout = Some(parse_timeout(&v, "GEX_RUN_TIMEOUT")?);
        }
    }
    if exit_grace.is_none() {
        if let Some(v) = env("GEX_EXIT_TIMEOUT").filter(|v| !v.trim().is_empty()) {
            exit_grace = Some(parse_grace(&v, "GEX_EXIT_TIMEOUT")?);
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
    spec.args = args.to_vec();
    spec.timeout = timeout;
    spec.exit_grace = exit_grace;
    spec.conduit = conduit;
    spec.env.extend(exports);
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
    eprintln!("gex-run: {msg}\n{SYNOPSIS}\n(gex-run --help for more)");
    exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let spec = match parse(&args, &|name| std::env::var(name).ok()) {
        Ok(Parsed::Run(spec)) => *spec,
        Ok(Parsed::Help(text)) => {
            println!("{text}");
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

    /// `GEX_RUN_TIMEOUT` set to `v`, nothing else.
    fn run_timeout(v: Option<&str>) -> impl Fn(&str) -> Option<String> + '_ {
        move |name| v.filter(|_| name == "GEX_RUN_TIMEOUT").map(String::from)
    }

    fn spec(s: &str, env: Option<&str>) -> JobSpec {
        match parse(&words(s), &run_timeout(env)) {
            Ok(Parsed::Run(spec)) => *spec,
            Ok(Parsed::Help(_)) => panic!("help"),
            Err(UsageError(e)) => panic!("{e}"),
        }
    }

    fn error(s: &str) -> String {
        match parse(&words(s), &run_timeout(None)) {
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
        assert!(
            matches!(parse(&words("--help"), &run_timeout(None)), Ok(Parsed::Help(h)) if h.starts_with(SYNOPSIS))
        );
    }

    #[test]
    fn the_exit_grace_comes_from_the_option_else_gex_exit_timeout() {
        let exit_timeout =
            |v: &'static str| move |name: &str| (name == "GEX_EXIT_TIMEOUT").then(|| v.to_string());
        let grace = |s: &str, env: &dyn Fn(&str) -> Option<String>| match parse(&words(s), env) {
            Ok(Parsed::Run(spec)) => Ok(spec.exit_grace),
            Ok(Parsed::Help(_)) => panic!("help"),
            Err(UsageError(e)) => Err(e),
        };
        assert_eq!(grace("-n 2 prog", &run_timeout(None)), Ok(None));
        assert_eq!(
            grace("-n 2 prog", &exit_timeout("0.25")),
            Ok(Some(Duration::from_millis(250)))
        );
        assert_eq!(
            grace("-n 2 --exit-grace 0 prog", &exit_timeout("5")),
            Ok(Some(Duration::ZERO))
        );
        assert_eq!(
            grace("-n 2 --exit-grace 3 prog", &run_timeout(None)),
            Ok(Some(Duration::from_secs(3)))
        );
        let e = grace("-n 2 prog", &exit_timeout("later")).unwrap_err();
        assert!(
            e.contains("GEX_EXIT_TIMEOUT: expected 0 or more seconds"),
            "{e}"
        );
        let e = grace("-n 2 --exit-grace -1 prog", &run_timeout(None)).unwrap_err();
        assert!(
            e.contains("--exit-grace: expected 0 or more seconds"),
            "{e}"
        );
    }

    #[test]
    fn rejects_bad_command_lines() {
        assert!(error("prog").contains("-n N"));
        assert!(error("-n 0 prog").contains("at least one"));
        assert!(error("-n x prog").contains("number of ranks"));
        assert!(error("-n 2").contains("no program"));
        assert_eq!(error("-n"), "option -n/--ranks needs a value");
        assert!(error("-n 2 --timeout -1 prog").contains("positive"));
        assert!(error("-n 2 --bogus prog").contains("unknown option"));
        assert!(matches!(
            parse(&words("-n 2 prog"), &run_timeout(Some("soon"))),
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

    /// mpirun's habits: `-np N`, `-x VAR[=VALUE]`, `--version`, the
    /// conduit from `GEX_CONDUIT` and checked by name.
    #[test]
    fn takes_mpirun_habits() {
        let vars = |name: &str| match name {
            "OMP_NUM_THREADS" => Some("4".to_string()),
            "GEX_CONDUIT" => Some("udp".to_string()),
            _ => None,
        };
        let run = |s: &str| match parse(&words(s), &vars) {
            Ok(Parsed::Run(spec)) => Ok(*spec),
            Ok(Parsed::Help(h)) => Err(h),
            Err(UsageError(e)) => Err(e),
        };
        let s = run("-np 4 prog -np 9").unwrap();
        assert_eq!(s.ranks, 4);
        assert_eq!(s.args, words("-np 9"), "the program's -np is its own");
        assert_eq!(run("-np=3 prog").unwrap().ranks, 3);
        assert_eq!(run("--timeout 5 -np 2 prog").unwrap().ranks, 2);
        // After an option's value or `--`, -np belongs to the program.
        let s = run("-n 2 --spawn -np prog").unwrap();
        assert_eq!(s.spawn.as_deref(), Some("-np"));
        let s = run("-n 2 -- -np").unwrap();
        assert_eq!(s.program.to_str(), Some("-np"));

        let s = run("-n 2 -x OMP_NUM_THREADS -x MODE=fast -x EMPTY= prog").unwrap();
        assert_eq!(
            s.env,
            [
                ("OMP_NUM_THREADS".into(), "4".into()),
                ("MODE".into(), "fast".into()),
                ("EMPTY".into(), String::new())
            ]
        );
        let e = run("-n 2 -x UNSET_HERE prog").unwrap_err();
        assert!(e.contains("UNSET_HERE is not set here"), "{e}");
        let e = run("-n 2 -x =1 prog").unwrap_err();
        assert!(e.contains("-x: expected VAR"), "{e}");
        let e = run("-n 2 -x 9LIVES=1 prog").unwrap_err();
        assert!(e.contains("-x: expected VAR"), "{e}");

        // The conduit: the option, else GEX_CONDUIT, else smp; a name
        // gex does not have is a usage error here, not in every rank.
        assert_eq!(run("-n 2 prog").unwrap().conduit, "udp");
        assert_eq!(run("-n 2 --conduit ibv prog").unwrap().conduit, "ibv");
        assert_eq!(spec("-n 2 prog", None).conduit, "smp");
        let e = run("-n 2 --conduit foo prog").unwrap_err();
        assert!(
            e.contains("--conduit: expected one of smp, udp, ibv, got 'foo'"),
            "{e}"
        );
        let bad = |name: &str| (name == "GEX_CONDUIT").then(|| "mpi".to_string());
        assert!(matches!(
            parse(&words("-n 2 prog"), &bad),
            Err(UsageError(e)) if e.contains("GEX_CONDUIT: expected one of smp, udp, ibv, got 'mpi'")
        ));

        let v = run("--version").unwrap_err();
        assert!(
            v.starts_with("gex-run ") && v.contains(env!("CARGO_PKG_VERSION")),
            "{v}"
        );
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
        let Ok(Parsed::Run(s)) = parse(&args, &run_timeout(None)) else {
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
