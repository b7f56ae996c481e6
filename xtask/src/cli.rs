//! Hand-written argument parsing for `cargo xtask`.

use crate::cluster::{Conduit, CONDUITS};
use crate::suite;

pub const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  check-layers                 check the workspace dependency graph against
                               the layer table (DESIGN.md section 2)
  test                         check-layers, then the workspace tests
                               (cargo nextest if installed, plus doctests);
                               the wide multi-rank variants (`#[ignore]`d
                               tests of gex-testsuite) are test-cluster's
  test --quick [-p CRATE]...   the edit loop: only the named crates' unit
                               and integration tests (default: every crate
                               but gex-testsuite), no doctests, no
                               multi-rank matrices
  test-cluster [--max-ranks N] [--conduit C]... [--no-wide | --wide-only]
                               run every gex-testsuite `test-*` program under
                               gex-run on each set-up (default: all of them):
                               smp with 1..=N ranks (default 8); udp-nobypass
                               (udp, GEX_UDP_BYPASS=0) and udp-netns (udp
                               across two network namespaces with 10% UDP
                               loss; needs root, ip and nft, else skipped),
                               ibv-nobypass and ibv-hosts (ibv over its
                               simulated device, bypass off; two pretend
                               hosts, bypass on) with 2..=min(N, 4) ranks;
                               then the wide variants: gex-testsuite's
                               ignored tests (8 ranks, forced paths and
                               environment variants, pretend hosts, the
                               smallest ibv buffers; `--no-wide`: skip them,
                               `--wide-only`: only them)
  demo [-n N] [-- ARGS...]     run gex-testsuite's `demo` under gex-run with N
                               ranks (default 3)
  bench [-n N] [--conduit C] [NAME...]
                               run gex-testsuite's `bench-*` programs (or the
                               named ones) under gex-run with N ranks (default 2)
                               on conduit C (smp, udp or ibv; default smp)
  bench-startup [--ranks N,N,...] [--reps R]
                               job start-up times by rank count (default
                               2,8,32,128; median of R runs, default 3):
                               gex-run on smp and udp, and an empty MPI
                               program under mpirun when mpicc is installed
  c-install PREFIX             build gex's C interface and tools library
                               (release) and install PREFIX/include/*.h,
                               PREFIX/lib/libgex.{a,so}, gex-{smp,udp}.pc,
                               PREFIX/bin/gex-run, and the layout GASNet
                               clients build with: gasnet_config.h,
                               include/{smp,udp}-conduit/*-{seq,par,parsync}.mak,
                               lib/libgasnet-{smp,udp}-*.a, gasnet-*.pc, the
                               tools library (libgasnet_tools-{seq,par}.a,
                               gasnet_tools-*.mak, .pc) and the launchers
                               gasnetrun_smp, gasnetrun_udp, amudprun
  gasnet-tests DIR [--only T,T...] [--configs C,C...] [--keep]
               [--build-dir D] [--prefix P] [--timeout-scale F]
               [--jobs N] [--budget MIN] [--variants] [--allow-failures]
                               build the reference GASNet-EX test suite in
                               DIR (a GASNet-EX source tree: DIR/tests,
                               DIR/other/amx; nothing is written there)
                               against a fresh c-install, as its
                               tests/Makefile.in does (the .mak fragments;
                               a few through pkg-config), run each test with
                               its nightly arguments (Makefile.in TEST_PARAMS,
                               harness.conf) through the installed launchers
                               in each configuration (default smp1,smp2,smp4,
                               udp2; udp without the shared-memory bypass;
                               PAR-only tests in a PAR build) and print one
                               table; fails if any cell does, unless
                               --allow-failures. --only: these tests;
                               --keep: keep the build directory (default:
                               kept only when something failed; D defaults
                               to target/gasnet-tests); --prefix: use gex
                               as c-install installed it in P instead of
                               installing afresh; --timeout-scale:
                               multiply every time limit; --jobs: compiles
                               at a time (2); --budget: minutes of runs
                               before the rest are not run (12);
                               --variants: also harness.conf's variants
  fmt-check                    cargo fmt --all --check
  lint                         cargo clippy --workspace --all-targets -- -D warnings
  ci                           fmt-check, lint, test, test-cluster --max-ranks 4
  help                         this text
";

pub const DEFAULT_MAX_RANKS: u32 = 8;
pub const DEFAULT_DEMO_RANKS: u32 = 3;
pub const DEFAULT_BENCH_RANKS: u32 = 2;
/// `cargo xtask ci` keeps the cluster matrix small enough for a 2-core machine.
pub const CI_MAX_RANKS: u32 = 4;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterOpts {
    pub max_ranks: u32,
    pub conduits: Vec<&'static Conduit>,
    /// Run the program matrix.
    pub matrix: bool,
    /// Run the wide variants (gex-testsuite's ignored tests).
    pub wide: bool,
}

impl ClusterOpts {
    pub fn with_max_ranks(max_ranks: u32) -> Self {
        ClusterOpts {
            max_ranks,
            conduits: CONDUITS.iter().collect(),
            matrix: true,
            wide: true,
        }
    }
}

/// `cargo xtask test`'s options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestOpts {
    /// `--quick`: unit and integration tests of `packages` only.
    pub quick: bool,
    /// `-p`/`--package` (with `--quick`); empty: every crate but
    /// gex-testsuite.
    pub packages: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Help,
    CheckLayers,
    Test(TestOpts),
    TestCluster(ClusterOpts),
    Demo {
        ranks: u32,
        args: Vec<String>,
    },
    Bench {
        ranks: u32,
        /// `--conduit` for gex-run (smp when absent).
        conduit: Option<String>,
        names: Vec<String>,
    },
    BenchStartup {
        ranks: Vec<u32>,
        reps: u32,
    },
    CInstall {
        prefix: String,
    },
    GasnetTests(suite::Options),
    FmtCheck,
    Lint,
    Ci,
}

/// Parses the arguments after `cargo xtask`.
pub fn parse<I, S>(args: I) -> Result<Command, String>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let mut args = Args::new(args.into_iter().map(Into::into).collect());
    let Some(command) = args.next() else {
        return Ok(Command::Help);
    };
    let parsed = match command.as_str() {
        "help" | "-h" | "--help" => Command::Help,
        "check-layers" => Command::CheckLayers,
        "test" => {
            let mut opts = TestOpts::default();
            while let Some(arg) = args.next() {
                if arg == "--quick" {
                    opts.quick = true;
                } else if let Some(v) = args.value_of(&arg, &["-p", "--package"])? {
                    opts.packages.push(v);
                } else if is_help(&arg) {
                    return Ok(Command::Help);
                } else {
                    return Err(unexpected("test", &arg));
                }
            }
            if !opts.quick && !opts.packages.is_empty() {
                return Err("test: -p/--package needs --quick".into());
            }
            Command::Test(opts)
        }
        "fmt-check" => Command::FmtCheck,
        "lint" => Command::Lint,
        "ci" => Command::Ci,
        "c-install" => {
            let Some(prefix) = args.next() else {
                return Err("c-install: missing PREFIX (where to install)".into());
            };
            if is_help(&prefix) {
                return Ok(Command::Help);
            }
            if let Some(extra) = args.next() {
                return Err(unexpected("c-install", &extra));
            }
            Command::CInstall { prefix }
        }
        "gasnet-tests" => {
            let mut dir = None;
            let mut opts = suite::Options::new(String::new());
            while let Some(arg) = args.next() {
                if let Some(v) = args.value_of(&arg, &["--only"])? {
                    for name in v.split(',').filter(|s| !s.is_empty()) {
                        if !opts.only.iter().any(|n| n == name) {
                            opts.only.push(name.to_string());
                        }
                    }
                } else if let Some(v) = args.value_of(&arg, &["--configs"])? {
                    opts.configs = suite::Config::parse_list(&v)?;
                } else if let Some(v) = args.value_of(&arg, &["--build-dir"])? {
                    opts.build_dir = Some(v);
                } else if let Some(v) = args.value_of(&arg, &["--prefix"])? {
                    opts.prefix = Some(v);
                } else if let Some(v) = args.value_of(&arg, &["--timeout-scale"])? {
                    opts.timeout_scale = positive("--timeout-scale", &v)?;
                } else if let Some(v) = args.value_of(&arg, &["--jobs", "-j"])? {
                    opts.jobs = rank_count("--jobs", &v)? as usize;
                } else if let Some(v) = args.value_of(&arg, &["--budget"])? {
                    opts.budget =
                        std::time::Duration::from_secs_f64(positive("--budget", &v)? * 60.0);
                } else if arg == "--keep" {
                    opts.keep = true;
                } else if arg == "--variants" {
                    opts.variants = true;
                } else if arg == "--allow-failures" {
                    opts.allow_failures = true;
                } else if is_help(&arg) {
                    return Ok(Command::Help);
                } else if arg.starts_with('-') || dir.is_some() {
                    return Err(unexpected("gasnet-tests", &arg));
                } else {
                    dir = Some(arg);
                }
            }
            let Some(dir) = dir else {
                return Err("gasnet-tests: missing DIR (a GASNet-EX source tree)".into());
            };
            opts.dir = dir;
            Command::GasnetTests(opts)
        }
        "test-cluster" => {
            let mut max_ranks = DEFAULT_MAX_RANKS;
            let mut conduits: Vec<&'static Conduit> = Vec::new();
            let (mut no_wide, mut wide_only) = (false, false);
            while let Some(arg) = args.next() {
                if arg == "--no-wide" {
                    no_wide = true;
                } else if arg == "--wide-only" {
                    wide_only = true;
                } else if let Some(v) = args.value_of(&arg, &["--max-ranks"])? {
                    max_ranks = rank_count("--max-ranks", &v)?;
                } else if let Some(v) = args.value_of(&arg, &["--conduit"])? {
                    let c = CONDUITS.iter().find(|c| c.name == v).ok_or_else(|| {
                        let known: Vec<&str> = CONDUITS.iter().map(|c| c.name).collect();
                        format!("unknown conduit `{v}` (known: {})", known.join(", "))
                    })?;
                    if !conduits.contains(&c) {
                        conduits.push(c);
                    }
                } else if is_help(&arg) {
                    return Ok(Command::Help);
                } else {
                    return Err(unexpected("test-cluster", &arg));
                }
            }
            if no_wide && wide_only {
                return Err("test-cluster: --no-wide and --wide-only exclude each other".into());
            }
            if conduits.is_empty() {
                conduits = CONDUITS.iter().collect();
            }
            Command::TestCluster(ClusterOpts {
                max_ranks,
                conduits,
                matrix: !wide_only,
                wide: !no_wide,
            })
        }
        "bench-startup" => {
            let mut ranks = vec![2, 8, 32, 128];
            let mut reps = 3;
            while let Some(arg) = args.next() {
                if let Some(v) = args.value_of(&arg, &["--ranks"])? {
                    ranks = v
                        .split(',')
                        .map(|r| rank_count("--ranks", r))
                        .collect::<Result<_, _>>()?;
                } else if let Some(v) = args.value_of(&arg, &["--reps"])? {
                    reps = rank_count("--reps", &v)?;
                } else if is_help(&arg) {
                    return Ok(Command::Help);
                } else {
                    return Err(unexpected("bench-startup", &arg));
                }
            }
            Command::BenchStartup { ranks, reps }
        }
        "demo" => {
            let mut ranks = DEFAULT_DEMO_RANKS;
            let mut extra = Vec::new();
            while let Some(arg) = args.next() {
                if let Some(v) = args.value_of(&arg, &["-n", "--ranks"])? {
                    ranks = rank_count("-n", &v)?;
                } else if arg == "--" {
                    extra.extend(args.by_ref());
                } else if is_help(&arg) {
                    return Ok(Command::Help);
                } else {
                    return Err(unexpected("demo", &arg));
                }
            }
            Command::Demo { ranks, args: extra }
        }
        "bench" => {
            let mut ranks = DEFAULT_BENCH_RANKS;
            let mut names = Vec::new();
            let mut conduit = None;
            while let Some(arg) = args.next() {
                if let Some(v) = args.value_of(&arg, &["-n", "--ranks"])? {
                    ranks = rank_count("-n", &v)?;
                } else if let Some(v) = args.value_of(&arg, &["--conduit"])? {
                    if !["smp", "udp", "ibv"].contains(&v.as_str()) {
                        return Err(format!("unknown conduit `{v}` (known: smp, udp, ibv)"));
                    }
                    conduit = Some(v);
                } else if arg == "--" {
                    names.extend(args.by_ref());
                } else if is_help(&arg) {
                    return Ok(Command::Help);
                } else if arg.starts_with('-') {
                    return Err(unexpected("bench", &arg));
                } else {
                    names.push(arg);
                }
            }
            Command::Bench {
                ranks,
                conduit,
                names,
            }
        }
        other => return Err(format!("unknown command `{other}`")),
    };
    // Commands without options take no arguments.
    if let Some(extra) = args.next() {
        if is_help(&extra) {
            return Ok(Command::Help);
        }
        return Err(unexpected(&command, &extra));
    }
    Ok(parsed)
}

fn is_help(arg: &str) -> bool {
    arg == "-h" || arg == "--help"
}

fn unexpected(command: &str, arg: &str) -> String {
    format!("{command}: unexpected argument `{arg}`")
}

fn rank_count(flag: &str, value: &str) -> Result<u32, String> {
    match value.parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "{flag}: expected a rank count of at least 1, got `{value}`"
        )),
    }
}

fn positive(flag: &str, value: &str) -> Result<f64, String> {
    match value.parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
        _ => Err(format!("{flag}: expected a positive number, got `{value}`")),
    }
}

/// A cursor over the arguments that understands `--flag VALUE`,
/// `--flag=VALUE` and, for short flags, `-nVALUE`.
struct Args {
    items: std::vec::IntoIter<String>,
}

impl Args {
    fn new(items: Vec<String>) -> Self {
        Args {
            items: items.into_iter(),
        }
    }

    /// If `arg` is one of `flags`, returns its value (taking the next
    /// argument when it is not attached).
    fn value_of(&mut self, arg: &str, flags: &[&str]) -> Result<Option<String>, String> {
        for flag in flags {
            if arg == *flag {
                return match self.items.next() {
                    Some(v) => Ok(Some(v)),
                    None => Err(format!("{flag} needs a value")),
                };
            }
            if let Some(rest) = arg.strip_prefix(flag) {
                if let Some(v) = rest.strip_prefix('=') {
                    return Ok(Some(v.to_string()));
                }
                // `-n4`: only short flags take an attached value.
                if !flag.starts_with("--") && !rest.is_empty() {
                    return Ok(Some(rest.to_string()));
                }
            }
        }
        Ok(None)
    }
}

impl Iterator for Args {
    type Item = String;
    fn next(&mut self) -> Option<String> {
        self.items.next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Command, String> {
        parse(args.iter().copied())
    }

    fn cluster(max_ranks: u32) -> Command {
        Command::TestCluster(ClusterOpts::with_max_ranks(max_ranks))
    }

    #[test]
    fn no_arguments_is_help() {
        assert_eq!(p(&[]), Ok(Command::Help));
        assert_eq!(p(&["help"]), Ok(Command::Help));
        assert_eq!(p(&["--help"]), Ok(Command::Help));
        assert_eq!(p(&["-h"]), Ok(Command::Help));
        assert_eq!(p(&["test-cluster", "--help"]), Ok(Command::Help));
        assert_eq!(p(&["lint", "-h"]), Ok(Command::Help));
    }

    #[test]
    fn simple_commands() {
        assert_eq!(p(&["check-layers"]), Ok(Command::CheckLayers));
        assert_eq!(p(&["test"]), Ok(Command::Test(TestOpts::default())));
        assert_eq!(p(&["fmt-check"]), Ok(Command::FmtCheck));
        assert_eq!(p(&["lint"]), Ok(Command::Lint));
        assert_eq!(p(&["ci"]), Ok(Command::Ci));
    }

    #[test]
    fn c_install_takes_a_prefix() {
        assert_eq!(
            p(&["c-install", "/opt/gex"]),
            Ok(Command::CInstall {
                prefix: "/opt/gex".into()
            })
        );
        assert!(p(&["c-install"]).is_err());
        assert!(p(&["c-install", "/a", "/b"]).is_err());
    }

    #[test]
    fn gasnet_tests_options() {
        let Ok(Command::GasnetTests(o)) = p(&["gasnet-tests", "../ref"]) else {
            panic!()
        };
        assert_eq!(o, suite::Options::new("../ref".into()));
        assert_eq!(
            o.configs.iter().map(|c| c.name()).collect::<Vec<_>>(),
            ["smp1", "smp2", "smp4", "udp2"]
        );
        let Ok(Command::GasnetTests(o)) = p(&[
            "gasnet-tests",
            "--only",
            "testam,testgasnet",
            "/ref",
            "--only=testam",
            "--configs",
            "udp3",
            "--keep",
            "--build-dir",
            "/b",
            "--prefix",
            "/p",
            "--timeout-scale=2.5",
            "-j",
            "3",
            "--budget",
            "0.5",
            "--variants",
            "--allow-failures",
        ]) else {
            panic!()
        };
        assert_eq!(o.dir, "/ref");
        assert_eq!(o.only, ["testam", "testgasnet"]);
        assert_eq!(o.configs, [suite::Config::parse("udp3").unwrap()]);
        assert!(o.keep && o.variants && o.allow_failures);
        assert_eq!(o.build_dir.as_deref(), Some("/b"));
        assert_eq!(o.prefix.as_deref(), Some("/p"));
        assert_eq!(o.timeout_scale, 2.5);
        assert_eq!(o.jobs, 3);
        assert_eq!(o.budget, std::time::Duration::from_secs(30));
        assert!(p(&["gasnet-tests"]).is_err());
        assert!(p(&["gasnet-tests", "a", "b"]).is_err());
        assert!(p(&["gasnet-tests", "a", "--configs", "ibv2"]).is_err());
        assert!(p(&["gasnet-tests", "a", "--timeout-scale", "0"]).is_err());
        assert!(p(&["gasnet-tests", "a", "--frob"]).is_err());
        assert_eq!(p(&["gasnet-tests", "--help"]), Ok(Command::Help));
    }

    #[test]
    fn simple_commands_take_no_arguments() {
        assert_eq!(
            p(&["test", "--release"]),
            Err("test: unexpected argument `--release`".into())
        );
        assert_eq!(
            p(&["test", "-p", "gex-am"]),
            Err("test: -p/--package needs --quick".into())
        );
        assert!(p(&["check-layers", "x"]).is_err());
        assert!(p(&["ci", "--max-ranks", "3"]).is_err());
    }

    #[test]
    fn unknown_command() {
        assert_eq!(p(&["frob"]), Err("unknown command `frob`".into()));
    }

    #[test]
    fn test_cluster_max_ranks() {
        assert_eq!(p(&["test-cluster"]), Ok(cluster(8)));
        assert_eq!(p(&["test-cluster", "--max-ranks", "5"]), Ok(cluster(5)));
        assert_eq!(p(&["test-cluster", "--max-ranks=3"]), Ok(cluster(3)));
        assert_eq!(
            p(&["test-cluster", "--max-ranks", "2", "--max-ranks", "4"]),
            Ok(cluster(4))
        );
    }

    #[test]
    fn test_cluster_bad_max_ranks() {
        assert_eq!(
            p(&["test-cluster", "--max-ranks"]),
            Err("--max-ranks needs a value".into())
        );
        assert!(p(&["test-cluster", "--max-ranks", "0"]).is_err());
        assert!(p(&["test-cluster", "--max-ranks", "-1"]).is_err());
        assert!(p(&["test-cluster", "--max-ranks", "many"]).is_err());
        // Long flags take no attached value without `=`.
        assert!(p(&["test-cluster", "--max-ranks5"]).is_err());
        assert!(p(&["test-cluster", "5"]).is_err());
    }

    #[test]
    fn test_cluster_conduits() {
        let smp = CONDUITS.iter().find(|c| c.name == "smp").unwrap();
        assert_eq!(
            p(&["test-cluster", "--conduit", "smp", "--conduit=smp"]),
            Ok(Command::TestCluster(ClusterOpts {
                max_ranks: 8,
                conduits: vec![smp],
                matrix: true,
                wide: true,
            }))
        );
        assert!(p(&["test-cluster", "--conduit", "carrier-pigeon"])
            .unwrap_err()
            .contains("unknown conduit `carrier-pigeon`"));
    }

    #[test]
    fn test_cluster_wide_flags() {
        let opts = |args: &[&str]| match p(args) {
            Ok(Command::TestCluster(o)) => (o.matrix, o.wide),
            other => panic!("{other:?}"),
        };
        assert_eq!(opts(&["test-cluster"]), (true, true));
        assert_eq!(opts(&["test-cluster", "--no-wide"]), (true, false));
        assert_eq!(opts(&["test-cluster", "--wide-only"]), (false, true));
        assert!(p(&["test-cluster", "--no-wide", "--wide-only"]).is_err());
    }

    #[test]
    fn test_quick() {
        assert_eq!(
            p(&["test", "--quick"]),
            Ok(Command::Test(TestOpts {
                quick: true,
                packages: vec![]
            }))
        );
        assert_eq!(
            p(&["test", "--quick", "-p", "gex-am", "--package=gex-rma"]),
            Ok(Command::Test(TestOpts {
                quick: true,
                packages: vec!["gex-am".into(), "gex-rma".into()]
            }))
        );
    }

    #[test]
    fn demo() {
        assert_eq!(
            p(&["demo"]),
            Ok(Command::Demo {
                ranks: 3,
                args: vec![]
            })
        );
        for args in [
            &["demo", "-n", "5"][..],
            &["demo", "-n5"],
            &["demo", "-n=5"],
            &["demo", "--ranks", "5"],
            &["demo", "--ranks=5"],
        ] {
            assert_eq!(
                p(args),
                Ok(Command::Demo {
                    ranks: 5,
                    args: vec![]
                }),
                "{args:?}"
            );
        }
        assert_eq!(
            p(&["demo", "-n", "2", "--", "-n", "x"]),
            Ok(Command::Demo {
                ranks: 2,
                args: vec!["-n".into(), "x".into()]
            })
        );
        assert!(p(&["demo", "-n"]).is_err());
        assert!(p(&["demo", "-n", "0"]).is_err());
        assert!(p(&["demo", "extra"]).is_err());
    }

    #[test]
    fn bench() {
        assert_eq!(
            p(&["bench"]),
            Ok(Command::Bench {
                ranks: 2,
                conduit: None,
                names: vec![]
            })
        );
        assert_eq!(
            p(&["bench", "--conduit", "udp", "bench-testam"]),
            Ok(Command::Bench {
                ranks: 2,
                conduit: Some("udp".into()),
                names: vec!["bench-testam".into()]
            })
        );
        assert!(p(&["bench", "--conduit", "ib"]).is_err());
        assert_eq!(
            p(&["bench", "bench-am", "-n", "4", "bench-put"]),
            Ok(Command::Bench {
                ranks: 4,
                conduit: None,
                names: vec!["bench-am".into(), "bench-put".into()]
            })
        );
        assert_eq!(
            p(&["bench", "--", "-weird-name"]),
            Ok(Command::Bench {
                ranks: 2,
                conduit: None,
                names: vec!["-weird-name".into()]
            })
        );
        assert!(p(&["bench", "--release"]).is_err());
        assert!(p(&["bench", "-n", "none"]).is_err());
    }

    #[test]
    fn bench_startup() {
        assert_eq!(
            p(&["bench-startup"]),
            Ok(Command::BenchStartup {
                ranks: vec![2, 8, 32, 128],
                reps: 3
            })
        );
        assert_eq!(
            p(&["bench-startup", "--ranks", "3,5", "--reps", "1"]),
            Ok(Command::BenchStartup {
                ranks: vec![3, 5],
                reps: 1
            })
        );
        assert!(p(&["bench-startup", "--ranks", "3,x"]).is_err());
        assert!(p(&["bench-startup", "--bogus"]).is_err());
    }
}
