//! `cargo xtask gasnet-tests DIR`: the reference GASNet-EX test suite
//! (`DIR/tests`, `DIR/other/amx`), unmodified, built against a fresh
//! install of gex the way the reference's `tests/Makefile.in` builds it
//! (through the installed `.mak` fragments, and a few programs through
//! pkg-config), then run with its nightly arguments through the installed
//! launchers, each configuration (`smp1`, `smp2`, `smp4`, `udp2`, ...) a
//! column of one table.
//!
//! Nothing is written into `DIR`. A run passes as in the reference's
//! `run-tests`: exit status 0 and no output line containing `ERROR` or
//! `fatal signal` (other than its two exceptions, see [`verdict`]).

pub mod exec;
pub mod harness;
pub mod mak;
pub mod params;
pub mod shell;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use exec::{Ended, Ran};
use harness::Features;
use mak::Vars;
use params::{Ranks, RunSpec, Suite};

/// The configurations run by default.
pub const DEFAULT_CONFIGS: &str = "smp1,smp2,smp4,udp2";
/// The programs also built through pkg-config (and run in one smp column).
pub const PKG_CONFIG_TESTS: [&str; 4] = ["testhello", "testcore1", "testcxx", "testtools"];
/// How long one compile or link may take (times `--timeout-scale`).
pub const COMPILE_LIMIT: Duration = Duration::from_secs(300);
/// How much longer than a run's limit (given to gex-run as
/// `GEX_RUN_TIMEOUT`) xtask waits before it ends the run's process group.
pub const WATCHDOG_GRACE: Duration = Duration::from_secs(15);
/// How long a job's processes may take to go after its launcher ended.
pub const LEFTOVER_WAIT: Duration = Duration::from_secs(5);
/// gex-run's exit code when its timeout expires.
pub const GEX_RUN_TIMEOUT_CODE: i32 = 124;

/// One column: a conduit and a process count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub conduit: &'static str,
    pub ranks: u32,
}

impl Config {
    pub fn name(&self) -> String {
        format!("{}{}", self.conduit, self.ranks)
    }

    /// `smp2`, `udp4`.
    pub fn parse(text: &str) -> Result<Config, String> {
        for conduit in ["smp", "udp"] {
            if let Some(n) = text.strip_prefix(conduit) {
                return match n.parse::<u32>() {
                    Ok(ranks) if ranks >= 1 => Ok(Config { conduit, ranks }),
                    _ => Err(format!(
                        "configuration `{text}`: expected a process count after `{conduit}`"
                    )),
                };
            }
        }
        Err(format!(
            "unknown configuration `{text}` (smpN or udpN, e.g. {DEFAULT_CONFIGS})"
        ))
    }

    pub fn parse_list(text: &str) -> Result<Vec<Config>, String> {
        let mut out: Vec<Config> = Vec::new();
        for item in text.split(',').filter(|s| !s.is_empty()) {
            let c = Config::parse(item.trim())?;
            if !out.contains(&c) {
                out.push(c);
            }
        }
        if out.is_empty() {
            return Err("--configs: no configuration given".into());
        }
        Ok(out)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub dir: String,
    pub only: Vec<String>,
    pub configs: Vec<Config>,
    pub keep: bool,
    pub build_dir: Option<String>,
    /// Use gex as installed there (by `c-install`) rather than a fresh
    /// install in the build directory.
    pub prefix: Option<String>,
    pub timeout_scale: f64,
    pub jobs: usize,
    pub budget: Duration,
    pub variants: bool,
    pub allow_failures: bool,
}

impl Options {
    pub fn new(dir: String) -> Options {
        Options {
            dir,
            only: Vec::new(),
            configs: Config::parse_list(DEFAULT_CONFIGS).unwrap_or_default(),
            keep: false,
            build_dir: None,
            prefix: None,
            timeout_scale: 1.0,
            jobs: 2,
            budget: Duration::from_secs(12 * 60),
            variants: false,
            allow_failures: false,
        }
    }
}

/// How a program is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Via {
    /// The installed `.mak` fragment's variables.
    Mak,
    /// `pkg-config --cflags --libs` and `--variable=`.
    PkgConfig,
}

/// One build of the suite: a fragment (or .pc file) and a directory.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SetKey {
    Conduit {
        conduit: &'static str,
        mode: &'static str,
        via: Via,
    },
    Tools {
        mode: &'static str,
        via: Via,
    },
}

impl SetKey {
    pub fn name(&self) -> String {
        let (base, via) = match self {
            SetKey::Conduit { conduit, mode, via } => (format!("{conduit}-{mode}"), via),
            SetKey::Tools { mode, via } => (format!("tools-{mode}"), via),
        };
        match via {
            Via::Mak => base,
            Via::PkgConfig => format!("pc-{base}"),
        }
    }
}

/// What a row's program is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowKind {
    /// A GASNet client, built per conduit, run through the launchers.
    Client { mode: &'static str, via: Via },
    /// A program of the tools alone, built once, run directly.
    Tools { mode: &'static str, via: Via },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub label: String,
    pub test: String,
    /// Its harness.conf entry (`testam-seq`, `testam_async-seq`).
    pub entry: String,
    pub kind: RowKind,
}

/// A column of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Column {
    /// Programs that run without a launcher (the tools tests).
    Direct,
    Config(Config),
}

impl Column {
    pub fn name(&self) -> String {
        match self {
            Column::Direct => "direct".into(),
            Column::Config(c) => c.name(),
        }
    }
}

/// The result of building one program in one set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Built {
    Ok(PathBuf),
    CompileError { log: PathBuf, first: String },
    LinkError { log: PathBuf, first: String },
    Skip(String),
}

/// One cell of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cell {
    /// Passed; `Some(n)` when it ran with n processes rather than the
    /// column's count.
    Pass(Option<u32>),
    Fail {
        why: String,
        log: PathBuf,
    },
    Timeout {
        log: PathBuf,
    },
    CompileError {
        log: PathBuf,
        first: String,
    },
    LinkError {
        log: PathBuf,
        first: String,
    },
    Skip(String),
    /// Built; the reference runs it nowhere (or not in this way).
    Built(String),
    /// Ran until the point where its own output says the test needs
    /// updating for gex's capabilities ([`known_stop`]).
    Stopped(String),
    /// Not run: the time budget was spent.
    NoTime,
    /// Not part of this column.
    NotApplicable,
}

impl Cell {
    pub fn text(&self) -> String {
        match self {
            Cell::Pass(None) => "pass".into(),
            Cell::Pass(Some(n)) => format!("pass(n={n})"),
            Cell::Fail { .. } => "FAIL".into(),
            Cell::Timeout { .. } => "TIMEOUT".into(),
            Cell::CompileError { .. } => "compile error".into(),
            Cell::LinkError { .. } => "link error".into(),
            Cell::Skip(_) => "skip".into(),
            Cell::Built(_) => "built".into(),
            Cell::Stopped(_) => "stops".into(),
            Cell::NoTime => "no time".into(),
            Cell::NotApplicable => "-".into(),
        }
    }

    pub fn failed(&self) -> bool {
        matches!(
            self,
            Cell::Fail { .. }
                | Cell::Timeout { .. }
                | Cell::CompileError { .. }
                | Cell::LinkError { .. }
                | Cell::NoTime
        )
    }
}

/// The reference's verdict on a run (tests/Makefile.in `run-tests`): a
/// failure when the exit status is not 0 or when a line of output
/// contains `ERROR` or `fatal signal`, unless it also contains `Retrying
/// allocation` or `GASNET_FREEZE_ON_ERROR`. Returns the reason.
pub fn verdict(ended: &Ended, output: &str) -> Result<(), String> {
    let bad_line = output.lines().find(|l| {
        (l.contains("ERROR") || l.contains("fatal signal"))
            && !(l.contains("Retrying allocation") || l.contains("GASNET_FREEZE_ON_ERROR"))
    });
    let status = match ended {
        Ended::Exited(s) if s.success() => None,
        Ended::Exited(s) => Some(crate::cluster::describe_status(*s)),
        Ended::TimedOut => Some("timed out".to_string()),
        Ended::NotStarted(e) => Some(format!("not started: {e}")),
    };
    match (status, bad_line) {
        (None, None) => Ok(()),
        (Some(s), None) => Err(s),
        (None, Some(l)) => Err(format!("exit 0, but: {}", clip(l.trim(), 160))),
        (Some(s), Some(l)) => Err(format!("{s}: {}", clip(l.trim(), 160))),
    }
}

/// A run that ended where the test's own output says it needs updating for
/// a conduit with gex's capabilities (README, "From C"), recognised
/// narrowly, else `None`. The one case: testtmpair, written for conduits
/// whose created endpoints carry no Active Messages, prints "Update
/// required in testtmpair.c for conduit-specific capabilities" for other
/// conduits, then sends AMs to created endpoints on which it registered no
/// handlers, which gex (as the spec) refuses, ending the job naming the
/// endpoint. Accepted only when that notice was printed, no line reported
/// an error, every section before the AM tests of a created pair ran, and
/// the job ended with that refusal.
pub fn known_stop(test: &str, output: &str) -> Option<String> {
    if test != "testtmpair" {
        return None;
    }
    let notice = output
        .lines()
        .any(|l| l.contains("Update required in testtmpair.c for conduit-specific capabilities"));
    let clean = !output
        .lines()
        .any(|l| l.contains("ERROR") || l.contains("fatal signal"));
    let last_section = output
        .lines()
        .rfind(|l| l.contains(": Starting ") && l.contains(" tests for pair ("))?;
    let at_am_of_created = last_section.contains("Starting AM Request tests for pair (")
        && !last_section.contains("pair (0,0)");
    let refused = output
        .lines()
        .any(|l| l.contains("gex: fatal error") && l.contains("has no handler registered"));
    (notice && clean && at_am_of_created && refused).then(|| {
        "stops where its own output says it needs updating for gex's created endpoints, which carry AMs (README)"
            .to_string()
    })
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(max).collect();
        s.push_str("...");
        s
    }
}

/// The line of a compiler's log that says what went wrong first.
pub fn first_error(log: &str) -> String {
    let lines: Vec<&str> = log.lines().skip(1).collect();
    let line = lines
        .iter()
        .find(|l| l.contains("error") || l.contains("Error") || l.contains("undefined reference"))
        .or_else(|| lines.last())
        .copied()
        .unwrap_or("(no output)");
    clip(line.trim(), 200)
}

/// Everything one `gasnet-tests` run works with.
pub struct Harness<'a> {
    pub opts: &'a Options,
    /// The reference's source tree (read only).
    pub dir: PathBuf,
    pub build: PathBuf,
    pub prefix: PathBuf,
    pub suite: Suite,
    base_features: BTreeSet<String>,
    mpicc: Option<String>,
    pkg_config: bool,
    strip: bool,
}

/// What a run of the harness found.
#[derive(Debug, Default)]
pub struct Summary {
    pub cells: usize,
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
    pub built_only: usize,
    pub table: String,
}

fn command_works(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The features harness.conf's conditions may ask about that hold on this
/// machine whatever the conduit.
fn machine_features(cc: &str) -> BTreeSet<String> {
    let mut set: BTreeSet<String> = [
        "gasnet",
        "gasnet_has_par",
        "gasnet_has_parsync",
        "gasnet_has_smp",
        "gasnet_has_udp",
        "nodebug",
        "pshm",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    set.insert(format!("os_{}", std::env::consts::OS));
    set.insert(format!("cpu_{}", std::env::consts::ARCH));
    set.insert(format!("cpu_{}", usize::BITS));
    let version = Command::new(cc)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    if version.contains("clang") {
        set.insert("cc_clang".into());
    } else if version.contains("gcc")
        || version.contains("GCC")
        || version.contains("Free Software")
    {
        set.insert("cc_gnu".into());
    }
    // A virtual machine: the harness relaxes the timer test there.
    if std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|c| c.contains(" hypervisor")) {
        set.insert("kvm".into());
        set.insert("qemu".into());
    }
    set
}

impl<'a> Harness<'a> {
    pub fn new(opts: &'a Options, dir: PathBuf, build: PathBuf, prefix: PathBuf) -> Self {
        let suite = params::read(&dir);
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        let mpicc = std::env::var("MPICC").unwrap_or_else(|_| "mpicc".into());
        Harness {
            opts,
            dir,
            build,
            prefix,
            suite,
            base_features: machine_features(&cc),
            mpicc: command_works(&mpicc, "--version").then_some(mpicc),
            pkg_config: command_works("pkg-config", "--version"),
            strip: command_works("strip", "--version"),
        }
    }

    fn tests_dir(&self) -> PathBuf {
        self.dir.join("tests")
    }

    fn features(&self, network: Option<&str>, threads: u32) -> Features {
        let mut set = self.base_features.clone();
        if let Some(n) = network {
            set.insert(format!("network_{n}"));
        }
        Features::new(set, threads)
    }

    /// The rows, in the order of the table.
    pub fn rows(&self) -> Result<Vec<Row>, String> {
        let s = &self.suite;
        let mut rows = Vec::new();
        let add_variants = |rows: &mut Vec<Row>, test: &str, mode: &'static str, kind: RowKind| {
            if !self.opts.variants {
                return;
            }
            for entry in s.variants(test, mode) {
                // Variants for hardware or builds this is not (GPU memory
                // kinds, MPI compatibility) get no row.
                let possible = s.harness.entry(&entry).is_some_and(|e| {
                    self.opts.configs.iter().any(|c| {
                        e.all_true("RequireFeature", &self.features(Some(c.conduit), c.ranks))
                            .is_ok_and(|r| r != Some(false))
                    })
                });
                if !possible {
                    continue;
                }
                let label = entry.rsplit_once('-').map_or(entry.as_str(), |(l, _)| l);
                let label = if mode == "par" {
                    format!("{label} [par]")
                } else {
                    label.to_string()
                };
                rows.push(Row {
                    label,
                    test: test.to_string(),
                    entry: entry.clone(),
                    kind: kind.clone(),
                });
            }
        };
        for test in &s.seq {
            let kind = if s.is_nongasnet(test) {
                // The reference builds the tools tests with the thread-safe
                // tools fragment when it has pthreads.
                RowKind::Tools {
                    mode: "par",
                    via: Via::Mak,
                }
            } else {
                RowKind::Client {
                    mode: "seq",
                    via: Via::Mak,
                }
            };
            rows.push(Row {
                label: test.clone(),
                test: test.clone(),
                entry: format!("{test}-seq"),
                kind: kind.clone(),
            });
            if s.is_nongasnet(test) && test == "testtools" {
                rows.push(Row {
                    label: format!("{test} [tools-seq]"),
                    test: test.clone(),
                    entry: format!("{test}-seq"),
                    kind: RowKind::Tools {
                        mode: "seq",
                        via: Via::Mak,
                    },
                });
            }
            add_variants(&mut rows, test, "seq", kind);
        }
        for test in &s.par {
            let kind = RowKind::Client {
                mode: "par",
                via: Via::Mak,
            };
            rows.push(Row {
                label: format!("{test} [par]"),
                test: test.clone(),
                entry: format!("{test}-par"),
                kind: kind.clone(),
            });
            add_variants(&mut rows, test, "par", kind);
        }
        for test in PKG_CONFIG_TESTS {
            if !s.seq.iter().any(|t| t == test) {
                continue;
            }
            let kind = if s.is_nongasnet(test) {
                RowKind::Tools {
                    mode: "par",
                    via: Via::PkgConfig,
                }
            } else {
                RowKind::Client {
                    mode: "seq",
                    via: Via::PkgConfig,
                }
            };
            rows.push(Row {
                label: format!("{test} [pkg-config]"),
                test: test.to_string(),
                entry: format!("{test}-seq"),
                kind,
            });
        }
        if !self.opts.only.is_empty() {
            for name in &self.opts.only {
                if !rows.iter().any(|r| &r.test == name || &r.label == name) {
                    let mut known: Vec<&str> = rows.iter().map(|r| r.test.as_str()).collect();
                    known.dedup();
                    return Err(format!(
                        "--only: no test `{name}` in the suite (tests: {})",
                        known.join(", ")
                    ));
                }
            }
            rows.retain(|r| self.opts.only.iter().any(|n| n == &r.test || n == &r.label));
        }
        Ok(rows)
    }

    pub fn columns(&self, rows: &[Row]) -> Vec<Column> {
        let mut cols = Vec::new();
        if rows.iter().any(|r| matches!(r.kind, RowKind::Tools { .. })) {
            cols.push(Column::Direct);
        }
        cols.extend(self.opts.configs.iter().cloned().map(Column::Config));
        cols
    }

    /// The one column the programs built through pkg-config run in: the
    /// first smp configuration with more than one process, else the first
    /// smp one.
    fn pkg_config_column(&self) -> Option<Config> {
        let smp = || self.opts.configs.iter().filter(|c| c.conduit == "smp");
        smp()
            .find(|c| c.ranks > 1)
            .or_else(|| smp().next())
            .cloned()
    }

    /// The build set a row's program comes from in a column (None: the
    /// row has no cell there).
    fn set_for(&self, row: &Row, col: &Column) -> Option<SetKey> {
        match (&row.kind, col) {
            (RowKind::Tools { mode, via }, Column::Direct) => {
                Some(SetKey::Tools { mode, via: *via })
            }
            (RowKind::Client { mode, via }, Column::Config(c)) => {
                if *via == Via::PkgConfig && self.pkg_config_column().as_ref() != Some(c) {
                    return None;
                }
                Some(SetKey::Conduit {
                    conduit: c.conduit,
                    mode,
                    via: *via,
                })
            }
            _ => None,
        }
    }

    fn set_dir(&self, set: &SetKey) -> PathBuf {
        self.build.join(set.name())
    }

    /// The variables a set builds with: its fragment's, or pkg-config's
    /// answers under the same names.
    fn set_vars(&self, set: &SetKey) -> Result<Vars, String> {
        let include = self.prefix.join("include");
        match set {
            SetKey::Conduit {
                conduit,
                mode,
                via: Via::Mak,
            } => read_mak(
                &include
                    .join(format!("{conduit}-conduit"))
                    .join(format!("{conduit}-{mode}.mak")),
            ),
            SetKey::Tools {
                mode,
                via: Via::Mak,
            } => read_mak(&include.join(format!("gasnet_tools-{mode}.mak"))),
            SetKey::Conduit {
                conduit,
                mode,
                via: Via::PkgConfig,
            } => self.pkg_config_vars(
                &format!("gasnet-{conduit}-{mode}"),
                &[
                    ("GASNET_CC", "--variable=GASNET_CC"),
                    ("GASNET_CXX", "--variable=GASNET_CXX"),
                    ("GASNET_LD", "--variable=GASNET_LD"),
                    ("GASNET_CPPFLAGS", "--cflags"),
                    ("GASNET_CXXCPPFLAGS", "--variable=GASNET_CXXCPPFLAGS"),
                    ("GASNET_CXXFLAGS", "--variable=GASNET_CXXFLAGS"),
                    ("GASNET_LIBS", "--libs"),
                ],
            ),
            SetKey::Tools {
                mode,
                via: Via::PkgConfig,
            } => self.pkg_config_vars(
                &format!("gasnet_tools-{mode}"),
                &[
                    ("GASNETTOOLS_CC", "--variable=GASNETTOOLS_CC"),
                    ("GASNETTOOLS_CXX", "--variable=GASNETTOOLS_CXX"),
                    ("GASNETTOOLS_LD", "--variable=GASNETTOOLS_LD"),
                    ("GASNETTOOLS_CPPFLAGS", "--cflags"),
                    ("GASNETTOOLS_CXXFLAGS", "--variable=GASNETTOOLS_CXXFLAGS"),
                    ("GASNETTOOLS_LIBS", "--libs"),
                ],
            ),
        }
    }

    /// The variables `names` as pkg-config answers each one's query about
    /// `pkg` (`$` escaped for make).
    fn pkg_config_vars(&self, pkg: &str, names: &[(&str, &str)]) -> Result<Vars, String> {
        let mut vars = Vars::default();
        for (name, query) in names {
            vars.set(name, &self.pkg_config(pkg, query)?.replace('$', "$$"));
        }
        Ok(vars)
    }

    fn pkg_config(&self, pkg: &str, query: &str) -> Result<String, String> {
        if !self.pkg_config {
            return Err("pkg-config is not installed".into());
        }
        let out = Command::new("pkg-config")
            .arg(query)
            .arg(pkg)
            .env("PKG_CONFIG_PATH", self.prefix.join("lib/pkgconfig"))
            .output()
            .map_err(|e| format!("pkg-config: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "pkg-config {query} {pkg} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// The compile and link commands of `test` in `set` (with `vars`), as
    /// tests/Makefile.in's rules write them.
    fn recipe(
        &self,
        set: &SetKey,
        vars: &Vars,
        test: &str,
    ) -> Result<(Vec<String>, Vec<String>), String> {
        let w = |name: &str| -> Result<Vec<String>, String> {
            shell::words(&vars.get(name)).map_err(|e| format!("{name}: {e}"))
        };
        let dir = self.set_dir(set);
        let tests = self.tests_dir();
        let obj = dir.join(format!("{test}.o")).display().to_string();
        let exe = dir.join(test).display().to_string();
        let extras = self.suite.extras.get(test).cloned().unwrap_or_default();
        let extra_objs: Vec<String> = extras
            .objs
            .iter()
            .map(|o| dir.join(o).display().to_string())
            .collect();
        let src_inc = format!("-I{}", tests.display());
        let cxx = self.suite.is_cxx(test);
        let src = tests
            .join(format!("{test}.{}", if cxx { "cc" } else { "c" }))
            .display()
            .to_string();
        let mut compile = Vec::new();
        let mut link = Vec::new();
        match set {
            SetKey::Tools { .. } => {
                if cxx {
                    compile.extend(w("GASNETTOOLS_CXX")?);
                    compile.extend(w("GASNETTOOLS_CPPFLAGS")?);
                    compile.extend(w("GASNETTOOLS_CXXFLAGS")?);
                    link.extend(w("GASNETTOOLS_CXX")?);
                    link.extend(w("GASNETTOOLS_CXXFLAGS")?);
                } else {
                    compile.extend(w("GASNETTOOLS_CC")?);
                    compile.extend(w("GASNETTOOLS_CPPFLAGS")?);
                    compile.extend(w("GASNETTOOLS_CFLAGS")?);
                    link.extend(w("GASNETTOOLS_LD")?);
                }
                compile.extend(["-c".into(), "-o".into(), obj.clone(), src]);
                link.extend(w("GASNETTOOLS_LDFLAGS")?);
                link.extend(["-o".into(), exe, obj]);
                link.extend(w("GASNETTOOLS_LIBS")?);
            }
            SetKey::Conduit { .. } if self.suite.is_mpi(test) => {
                let mpicc = self
                    .mpicc
                    .clone()
                    .ok_or_else(|| "no MPI compiler (mpicc; install libopenmpi-dev)".to_string())?;
                let mpicc = shell::words(&mpicc)?;
                compile.extend(mpicc.clone());
                compile.push(src_inc);
                compile.extend(w("GASNET_CPPFLAGS")?);
                compile.extend(["-c".into(), "-o".into(), obj.clone(), src]);
                link.extend(mpicc);
                link.extend(w("GASNET_LDFLAGS")?);
                link.extend(["-o".into(), exe, obj]);
                link.extend(w("GASNET_LIBS")?);
                link.extend(extras.libs.clone());
            }
            SetKey::Conduit { .. } => {
                if cxx {
                    compile.extend(w("GASNET_CXX")?);
                    compile.push(src_inc);
                    compile.extend(extras.incs.clone());
                    compile.extend(w("GASNET_CXXCPPFLAGS")?);
                    compile.extend(w("GASNET_DEVWARN_CXXFLAGS")?);
                    compile.extend(w("GASNET_CXXFLAGS")?);
                    link.extend(w("GASNET_CXX")?);
                    link.extend(w("GASNET_CXXFLAGS")?);
                } else {
                    compile.extend(w("GASNET_CC")?);
                    compile.push(src_inc);
                    compile.extend(extras.incs.clone());
                    compile.extend(w("GASNET_CPPFLAGS")?);
                    compile.extend(w("GASNET_DEVWARN_CFLAGS")?);
                    compile.extend(w("GASNET_CFLAGS")?);
                    compile.extend(extras.cflags.clone());
                    link.extend(w("GASNET_LD")?);
                }
                compile.extend(["-c".into(), "-o".into(), obj.clone(), src]);
                link.extend(w("GASNET_LDFLAGS")?);
                link.extend(["-o".into(), exe, obj]);
                link.extend(extra_objs);
                link.extend(w("GASNET_LIBS")?);
                link.extend(extras.libs.clone());
            }
        }
        Ok((compile, link))
    }

    /// `delay.o`'s command: without optimisation, as the reference builds it.
    fn delay_recipe(&self, set: &SetKey, vars: &Vars) -> Result<Vec<String>, String> {
        let w = |name: &str| shell::words(&vars.get(name)).map_err(|e| format!("{name}: {e}"));
        let mut cmd = w("GASNET_CC")?;
        cmd.extend(w("GASNET_CPPFLAGS")?);
        cmd.extend(w("GASNET_MISC_CFLAGS")?);
        cmd.push("-O0".into());
        cmd.extend([
            "-c".into(),
            "-o".into(),
            self.set_dir(set).join("delay.o").display().to_string(),
            self.tests_dir().join("delay.c").display().to_string(),
        ]);
        Ok(cmd)
    }

    fn limit(&self, base: Duration) -> Duration {
        base.mul_f64(self.opts.timeout_scale)
    }

    /// Runs one build step, its command line the log's first line.
    fn step(&self, argv: &[String], log: &Path, append: bool) -> Ran {
        let header = format!(
            "$ {}\n",
            argv.iter()
                .map(|a| shell::quote(a))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let written = if append {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)
                .and_then(|mut f| f.write_all(header.as_bytes()))
        } else {
            std::fs::write(log, header)
        };
        if let Err(e) = written {
            return Ran {
                ended: Ended::NotStarted(format!("cannot write {}: {e}", log.display())),
                elapsed: Duration::ZERO,
            };
        }
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .current_dir(log.parent().unwrap_or(&self.build));
        exec::run(&mut cmd, log, true, self.limit(COMPILE_LIMIT))
    }

    fn build_one(&self, set: &SetKey, vars: &Result<Vars, String>, test: &str) -> Built {
        let vars = match vars {
            Ok(v) => v,
            Err(e) => return Built::Skip(e.clone()),
        };
        let (compile, link) = match self.recipe(set, vars, test) {
            Ok(r) => r,
            Err(e) => return Built::Skip(e),
        };
        let dir = self.set_dir(set);
        let clog = dir.join(format!("{test}.compile.log"));
        let ran = self.step(&compile, &clog, false);
        if !ran.success() {
            let text = std::fs::read_to_string(&clog).unwrap_or_default();
            let mut first = first_error(&text);
            if ran.ended == Ended::TimedOut {
                first = format!("timed out: {first}");
            }
            return Built::CompileError { log: clog, first };
        }
        let llog = dir.join(format!("{test}.link.log"));
        let ran = self.step(&link, &llog, false);
        if !ran.success() {
            let text = std::fs::read_to_string(&llog).unwrap_or_default();
            return Built::LinkError {
                log: llog,
                first: first_error(&text),
            };
        }
        // Keep the directory small: the object is not needed any more, and
        // libgex's debug information (tens of MB a program) is dropped
        // from the copy linked in (symbols stay, for backtraces).
        let _ = std::fs::remove_file(dir.join(format!("{test}.o")));
        let exe = dir.join(test);
        if self.strip {
            let _ = self.step(
                &[
                    "strip".to_string(),
                    "--strip-debug".to_string(),
                    exe.display().to_string(),
                ],
                &llog,
                true,
            );
        }
        Built::Ok(exe)
    }

    /// Builds every program the rows need in the given columns, `jobs` at
    /// a time.
    pub fn build_all(&self, rows: &[Row], cols: &[Column]) -> BTreeMap<(SetKey, String), Built> {
        let mut wanted: BTreeSet<(SetKey, String)> = BTreeSet::new();
        for row in rows {
            for col in cols {
                if let Some(set) = self.set_for(row, col) {
                    wanted.insert((set, row.test.clone()));
                }
            }
        }
        let sets: BTreeSet<SetKey> = wanted.iter().map(|(s, _)| s.clone()).collect();
        let mut vars: BTreeMap<SetKey, Result<Vars, String>> = BTreeMap::new();
        for set in &sets {
            if let Err(e) = std::fs::create_dir_all(self.set_dir(set)) {
                vars.insert(
                    set.clone(),
                    Err(format!("cannot create its directory: {e}")),
                );
                continue;
            }
            vars.insert(set.clone(), self.set_vars(set));
        }
        let start = Instant::now();
        println!(
            "xtask: gasnet-tests: building {} programs in {} set(s) ({}), {} at a time",
            wanted.len(),
            sets.len(),
            sets.iter().map(SetKey::name).collect::<Vec<_>>().join(", "),
            self.opts.jobs
        );
        let _ = std::io::stdout().flush();
        // delay.o first, in each set whose programs need it.
        let needs_delay: BTreeSet<SetKey> = wanted
            .iter()
            .filter(|(set, t)| {
                matches!(set, SetKey::Conduit { .. })
                    && self
                        .suite
                        .extras
                        .get(t)
                        .is_some_and(|e| e.objs.iter().any(|o| o == "delay.o"))
            })
            .map(|(s, _)| s.clone())
            .collect();
        let delay_jobs: VecDeque<(SetKey, Option<String>)> =
            needs_delay.into_iter().map(|s| (s, None)).collect();
        let test_jobs: VecDeque<(SetKey, Option<String>)> = wanted
            .iter()
            .map(|(s, t)| (s.clone(), Some(t.clone())))
            .collect();
        let results = Mutex::new(BTreeMap::new());
        for jobs in [delay_jobs, test_jobs] {
            let queue = Mutex::new(jobs);
            thread::scope(|scope| {
                for _ in 0..self.opts.jobs.max(1) {
                    scope.spawn(|| loop {
                        let next = queue.lock().map(|mut q| q.pop_front()).unwrap_or(None);
                        let Some((set, test)) = next else { break };
                        let set_vars = &vars[&set];
                        match test {
                            None => {
                                if let Ok(v) = set_vars {
                                    if let Ok(cmd) = self.delay_recipe(&set, v) {
                                        let log = self.set_dir(&set).join("delay.compile.log");
                                        let _ = self.step(&cmd, &log, false);
                                    }
                                }
                            }
                            Some(test) => {
                                let built = self.build_one(&set, set_vars, &test);
                                if let Ok(mut r) = results.lock() {
                                    r.insert((set, test), built);
                                }
                            }
                        }
                    });
                }
            });
        }
        let results = results.into_inner().unwrap_or_default();
        let mut per_set: BTreeMap<String, [usize; 4]> = BTreeMap::new();
        for ((set, _), b) in &results {
            let i = match b {
                Built::Ok(_) => 0,
                Built::CompileError { .. } => 1,
                Built::LinkError { .. } => 2,
                Built::Skip(_) => 3,
            };
            per_set.entry(set.name()).or_default()[i] += 1;
        }
        for (name, [ok, ce, le, sk]) in &per_set {
            println!(
                "xtask: gasnet-tests: {name}: {ok} built, {ce} compile errors, {le} link errors{}",
                if *sk > 0 {
                    format!(", {sk} skipped")
                } else {
                    String::new()
                }
            );
        }
        println!(
            "xtask: gasnet-tests: built in {}",
            crate::format_duration(start.elapsed())
        );
        results
    }

    /// The run of a row in a column, or its final cell.
    fn plan(
        &self,
        row: &Row,
        col: &Column,
        cols: &[Column],
        built: &BTreeMap<(SetKey, String), Built>,
    ) -> Result<(Cell, Option<Planned>), String> {
        let Some(set) = self.set_for(row, col) else {
            return Ok((Cell::NotApplicable, None));
        };
        let exe = match built.get(&(set.clone(), row.test.clone())) {
            Some(Built::Ok(exe)) => exe.clone(),
            Some(Built::CompileError { log, first }) => {
                return Ok((
                    Cell::CompileError {
                        log: log.clone(),
                        first: first.clone(),
                    },
                    None,
                ))
            }
            Some(Built::LinkError { log, first }) => {
                return Ok((
                    Cell::LinkError {
                        log: log.clone(),
                        first: first.clone(),
                    },
                    None,
                ))
            }
            Some(Built::Skip(why)) => return Ok((Cell::Skip(why.clone()), None)),
            None => return Ok((Cell::Skip("not built".into()), None)),
        };
        let (network, ranks) = match col {
            Column::Direct => (None, 1),
            Column::Config(c) => (Some(c.conduit), c.ranks),
        };
        let mut spec =
            self.suite
                .run_spec(&row.test, &row.entry, &self.features(network, ranks))?;
        let mut run_ranks = ranks;
        if let (Column::Config(c), Ranks::Only(list)) = (col, &spec.ranks) {
            if !spec.ranks.allows(c.ranks) {
                // Run it once per conduit, in the first column of the
                // conduit, when no column has a count it allows.
                let same: Vec<&Config> = cols
                    .iter()
                    .filter_map(|k| match k {
                        Column::Config(k) if k.conduit == c.conduit => Some(k),
                        _ => None,
                    })
                    .collect();
                let covered = same.iter().any(|k| list.contains(&k.ranks));
                let first = same.first().is_some_and(|k| *k == c);
                let counts = list
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(" or ");
                if covered || !first || list.is_empty() {
                    return Ok((
                        Cell::Skip(format!("the reference runs it with {counts} process(es)")),
                        None,
                    ));
                }
                run_ranks = list[0];
                spec = self.suite.run_spec(
                    &row.test,
                    &row.entry,
                    &self.features(network, run_ranks),
                )?;
            }
        }
        if let Some(why) = spec.excluded.clone() {
            return Ok((Cell::Skip(why), None));
        }
        if spec.limit.is_none() {
            return Ok((
                Cell::Built("the reference builds it but does not run it".into()),
                None,
            ));
        }
        Ok((
            Cell::NotApplicable,
            Some(Planned {
                exe,
                spec,
                ranks: run_ranks,
                pinned: run_ranks != ranks,
                set,
            }),
        ))
    }

    /// The command of a planned run.
    fn command(&self, col: &Column, p: &Planned) -> (Command, Duration) {
        let limit = self.limit(p.spec.limit.unwrap_or(params::DEFAULT_TIME_LIMIT));
        let mut cmd = match col {
            Column::Direct => Command::new(&p.exe),
            Column::Config(c) => {
                let (launcher, flag) = match c.conduit {
                    "udp" => ("amudprun", "-np"),
                    _ => ("gasnetrun_smp", "-n"),
                };
                let mut cmd = Command::new(self.prefix.join("bin").join(launcher));
                cmd.arg(flag).arg(p.ranks.to_string()).arg(&p.exe);
                // gex-run ends a job at its limit itself; xtask's watchdog
                // is the second line.
                cmd.env("GEX_RUN_TIMEOUT", limit.as_secs().max(1).to_string());
                if c.conduit == "udp" {
                    cmd.env("GEX_UDP_BYPASS", "0");
                }
                cmd
            }
        };
        cmd.args(&p.spec.args);
        for (k, v) in &p.spec.env {
            cmd.env(k, v);
        }
        cmd.current_dir(self.set_dir(&p.set));
        (cmd, limit)
    }

    fn log_path(&self, row: &Row, col: &Column) -> PathBuf {
        let label: String = row
            .label
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let label = label.trim_matches('-').replace("--", "-");
        self.build
            .join("logs")
            .join(format!("{label}.{}.log", col.name()))
    }

    /// Runs one planned cell.
    fn run_cell(&self, row: &Row, col: &Column, p: &Planned) -> Cell {
        let (mut cmd, limit) = self.command(col, p);
        let log = self.log_path(row, col);
        if let Some(dir) = log.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let mut header = String::from("$ ");
        for (k, v) in cmd.get_envs() {
            if let Some(v) = v {
                let _ = write!(
                    header,
                    "{}={} ",
                    k.to_string_lossy(),
                    shell::quote(&v.to_string_lossy())
                );
            }
        }
        header += &shell::quote(&cmd.get_program().to_string_lossy());
        for a in cmd.get_args() {
            header.push(' ');
            header += &shell::quote(&a.to_string_lossy());
        }
        header.push('\n');
        if let Err(e) = std::fs::write(&log, &header) {
            return Cell::Fail {
                why: format!("cannot write the log: {e}"),
                log,
            };
        }
        let ran = exec::run(&mut cmd, &log, true, limit + WATCHDOG_GRACE);
        let leftovers = exec::reap_leftovers(&self.build, LEFTOVER_WAIT);
        let text = std::fs::read(&log)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        let output = text.split_once('\n').map_or("", |(_, rest)| rest);
        let timed_out = ran.ended == Ended::TimedOut
            || (matches!(&ran.ended, Ended::Exited(s) if s.code() == Some(GEX_RUN_TIMEOUT_CODE))
                && ran.elapsed >= limit.mul_f64(0.9));
        let mut cell = if timed_out {
            Cell::Timeout { log: log.clone() }
        } else {
            match verdict(&ran.ended, output) {
                Ok(()) => Cell::Pass(p.pinned.then_some(p.ranks)),
                Err(why) => match known_stop(&row.test, output) {
                    Some(stop) => Cell::Stopped(stop),
                    None => Cell::Fail {
                        why,
                        log: log.clone(),
                    },
                },
            }
        };
        if !leftovers.is_empty() {
            let pids: Vec<String> = leftovers.iter().map(|(p, _)| p.to_string()).collect();
            let why = format!(
                "left {} process(es) behind (killed: {})",
                leftovers.len(),
                pids.join(" ")
            );
            let _ = std::fs::OpenOptions::new()
                .append(true)
                .open(&log)
                .and_then(|mut f| writeln!(f, "xtask: {why}"));
            cell = match cell {
                Cell::Fail { why: w, log } => Cell::Fail {
                    why: format!("{w}; {why}"),
                    log,
                },
                Cell::Timeout { log } => Cell::Timeout { log },
                _ => Cell::Fail { why, log },
            };
        }
        cell
    }

    /// Builds, runs and reports; the table is in the summary.
    pub fn run(&self) -> Result<Summary, String> {
        for w in &self.suite.warnings {
            println!("xtask: gasnet-tests: warning: {w}");
        }
        let rows = self.rows()?;
        let cols = self.columns(&rows);
        let shm_before = exec::shm_names();
        let built = self.build_all(&rows, &cols);
        let mut cells: Vec<Vec<Cell>> = Vec::with_capacity(rows.len());
        let mut plans: Vec<(usize, usize, Planned)> = Vec::new();
        for (ri, row) in rows.iter().enumerate() {
            let mut line = Vec::with_capacity(cols.len());
            for (ci, col) in cols.iter().enumerate() {
                let (cell, planned) = self.plan(row, col, &cols, &built)?;
                if let Some(p) = planned {
                    plans.push((ri, ci, p));
                }
                line.push(cell);
            }
            cells.push(line);
        }
        println!(
            "xtask: gasnet-tests: {} runs (time budget {}; logs in {})",
            plans.len(),
            crate::format_duration(self.opts.budget),
            self.build.join("logs").display()
        );
        let start = Instant::now();
        let total = plans.len();
        for (k, (ri, ci, p)) in plans.iter().enumerate() {
            let (row, col) = (&rows[*ri], &cols[*ci]);
            if start.elapsed() >= self.opts.budget {
                cells[*ri][*ci] = Cell::NoTime;
                continue;
            }
            print!(
                "xtask: gasnet-tests: [{}/{total}] {} {}{} ... ",
                k + 1,
                row.label,
                col.name(),
                if p.pinned {
                    format!(" (n={})", p.ranks)
                } else {
                    String::new()
                }
            );
            let _ = std::io::stdout().flush();
            let t = Instant::now();
            let cell = self.run_cell(row, col, p);
            println!("{} ({})", cell.text(), crate::format_duration(t.elapsed()));
            cells[*ri][*ci] = cell;
        }
        let run_time = start.elapsed();
        let mut shm_new: Vec<String> = exec::shm_names();
        shm_new.retain(|n| !shm_before.contains(n));
        let mut summary = summarize(&rows, &cols, &cells);
        let mut table = render(&rows, &cols, &cells);
        if !shm_new.is_empty() {
            let _ = writeln!(
                table,
                "note: /dev/shm gained {} name(s) during the runs (another program's?): {}",
                shm_new.len(),
                shm_new.join(" ")
            );
        }
        let _ = writeln!(
            table,
            "gasnet-tests: {} passed, {} failed, {} skipped, {} built only ({} runs in {})",
            summary.passed,
            summary.failed,
            summary.skipped,
            summary.built_only,
            total,
            crate::format_duration(run_time)
        );
        summary.table = table;
        Ok(summary)
    }
}

/// A run to make.
#[derive(Debug, Clone)]
struct Planned {
    exe: PathBuf,
    spec: RunSpec,
    ranks: u32,
    /// Runs with another count than its column's.
    pinned: bool,
    set: SetKey,
}

fn read_mak(path: &Path) -> Result<Vars, String> {
    std::fs::read_to_string(path)
        .map(|t| mak::parse(&t))
        .map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn summarize(rows: &[Row], cols: &[Column], cells: &[Vec<Cell>]) -> Summary {
    let mut s = Summary::default();
    for line in cells.iter().take(rows.len()) {
        for cell in line.iter().take(cols.len()) {
            match cell {
                Cell::NotApplicable => continue,
                Cell::Pass(_) => s.passed += 1,
                Cell::Skip(_) | Cell::Stopped(_) => s.skipped += 1,
                Cell::Built(_) => s.built_only += 1,
                c if c.failed() => s.failed += 1,
                _ => {}
            }
            s.cells += 1;
        }
    }
    s
}

/// The table, then what went wrong (with logs), then why cells were
/// skipped.
pub fn render(rows: &[Row], cols: &[Column], cells: &[Vec<Cell>]) -> String {
    let label_w = rows
        .iter()
        .map(|r| r.label.len())
        .chain(["test".len()])
        .max()
        .unwrap_or(4);
    let col_w: Vec<usize> = cols
        .iter()
        .enumerate()
        .map(|(ci, c)| {
            cells
                .iter()
                .map(|line| line[ci].text().len())
                .chain([c.name().len()])
                .max()
                .unwrap_or(4)
        })
        .collect();
    let mut out = format!("{:label_w$}", "test");
    for (c, w) in cols.iter().zip(&col_w) {
        let _ = write!(out, "  {:>w$}", c.name());
    }
    out.push('\n');
    for (row, line) in rows.iter().zip(cells) {
        let mut l = format!("{:label_w$}", row.label);
        for (cell, w) in line.iter().zip(&col_w) {
            let _ = write!(l, "  {:>w$}", cell.text());
        }
        out += l.trim_end();
        out.push('\n');
    }
    // Failures, one line each; a build error once per program and build.
    let mut failures = Vec::new();
    let mut seen_builds: BTreeSet<PathBuf> = BTreeSet::new();
    let mut skips: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (row, line) in rows.iter().zip(cells) {
        for (col, cell) in cols.iter().zip(line) {
            let at = format!("{} {}", row.label, col.name());
            match cell {
                Cell::Fail { why, log } => {
                    failures.push(format!("  {at}: FAIL: {why}\n      log: {}", log.display()))
                }
                Cell::Timeout { log } => failures.push(format!(
                    "  {at}: TIMEOUT (the job was ended)\n      log: {}",
                    log.display()
                )),
                Cell::CompileError { log, first } | Cell::LinkError { log, first }
                    if seen_builds.insert(log.clone()) =>
                {
                    let what = if matches!(cell, Cell::CompileError { .. }) {
                        "compile error"
                    } else {
                        "link error"
                    };
                    let set = log
                        .parent()
                        .and_then(|p| p.file_name())
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    failures.push(format!(
                        "  {} [{set}]: {what}: {first}\n      log: {}",
                        row.test,
                        log.display()
                    ));
                }
                Cell::NoTime => {
                    failures.push(format!("  {at}: not run: the time budget was spent"))
                }
                Cell::Skip(why) | Cell::Built(why) | Cell::Stopped(why) => {
                    skips.entry(why.clone()).or_default().push(at)
                }
                _ => {}
            }
        }
    }
    if !failures.is_empty() {
        out += "\nfailures:\n";
        for f in failures {
            out += &f;
            out.push('\n');
        }
    }
    if !skips.is_empty() {
        out += "\nnot run:\n";
        for (why, at) in skips {
            let _ = writeln!(out, "  {why}: {}", at.join(", "));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn exited(code: i32) -> Ended {
        use std::os::unix::process::ExitStatusExt;
        Ended::Exited(std::process::ExitStatus::from_raw(code << 8))
    }

    #[cfg(unix)]
    #[test]
    fn testtmpair_stops_only_where_it_says_it_needs_updating() {
        let notice = "Update required in testtmpair.c for conduit-specific capabilities.\n";
        let sections = "A: Starting RMA Get tests for pair (0,0)\nG: Starting AM Request tests for pair (0,0)\nE: Starting RMA Get tests for pair (1,1)\nG: Starting AM Request tests for pair (1,1)\n";
        let refusal = "gex: fatal error on rank 1: an AM Short request for handler 128 from rank 0 endpoint 1 to endpoint 1 of this rank: endpoint 1 has no handler registered\n";
        let whole = format!("{notice}{sections}{refusal}");
        assert!(known_stop("testtmpair", &whole).is_some());
        // Another test, no notice, an error line, another end, or a stop in
        // the primordial pair's AM section: a failure as usual.
        assert!(known_stop("testam", &whole).is_none());
        assert!(known_stop("testtmpair", &format!("{sections}{refusal}")).is_none());
        assert!(known_stop(
            "testtmpair",
            &format!("{notice}ERROR: x\n{sections}{refusal}")
        )
        .is_none());
        assert!(known_stop(
            "testtmpair",
            &format!("{notice}{sections}gex: fatal error: other\n")
        )
        .is_none());
        let primordial = "G: Starting AM Request tests for pair (0,0)\n";
        assert!(known_stop("testtmpair", &format!("{notice}{primordial}{refusal}")).is_none());
    }

    #[test]
    fn verdicts_follow_run_tests() {
        assert_eq!(verdict(&exited(0), "all good\nDone.\n"), Ok(()));
        assert_eq!(verdict(&exited(3), "fine\n"), Err("exit 3".into()));
        assert_eq!(
            verdict(&exited(0), "x\nERROR: bad value at 3\n"),
            Err("exit 0, but: ERROR: bad value at 3".into())
        );
        assert!(verdict(&exited(0), "*** Caught a fatal signal: SIGSEGV(11)\n").is_err());
        assert_eq!(
            verdict(&exited(0), "WARNING: ERROR... Retrying allocation\n"),
            Ok(())
        );
        assert_eq!(
            verdict(&exited(0), "set GASNET_FREEZE_ON_ERROR=1\n"),
            Ok(())
        );
        // Case matters, as in the reference.
        assert_eq!(verdict(&exited(0), "no error here\n"), Ok(()));
        assert_eq!(
            verdict(&exited(1), "ERROR: x\n"),
            Err("exit 1: ERROR: x".into())
        );
        assert!(verdict(&Ended::TimedOut, "").is_err());
        assert!(verdict(&Ended::NotStarted("x".into()), "").is_err());
    }

    #[test]
    fn configurations() {
        assert_eq!(
            Config::parse_list("smp1,udp2,smp1").unwrap(),
            [
                Config {
                    conduit: "smp",
                    ranks: 1
                },
                Config {
                    conduit: "udp",
                    ranks: 2
                }
            ]
        );
        assert_eq!(Config::parse("udp16").unwrap().name(), "udp16");
        assert!(Config::parse("smp0").is_err());
        assert!(Config::parse("ibv2").is_err());
        assert!(Config::parse("smp").is_err());
        assert!(Config::parse_list("").is_err());
    }

    #[test]
    fn first_errors() {
        let log = "$ cc -c x.c\nIn file included from x.c:1:\nx.h:3:1: error: expected ';'\n";
        assert_eq!(first_error(log), "x.h:3:1: error: expected ';'");
        let log = "$ cc -o x x.o\n/usr/bin/ld: x.o: undefined reference to `f'\ncollect2: ld returned 1\n";
        assert_eq!(
            first_error(log),
            "/usr/bin/ld: x.o: undefined reference to `f'"
        );
        assert_eq!(first_error("$ cc\n"), "(no output)");
    }

    #[test]
    fn table_lists_failures_with_their_logs() {
        let row = |label: &str| Row {
            label: label.into(),
            test: label.split(' ').next().unwrap().into(),
            entry: format!("{label}-seq"),
            kind: RowKind::Client {
                mode: "seq",
                via: Via::Mak,
            },
        };
        let rows = vec![
            row("testam"),
            row("testmisc"),
            row("testexit"),
            row("testtools"),
        ];
        let cols = vec![
            Column::Direct,
            Column::Config(Config::parse("smp2").unwrap()),
            Column::Config(Config::parse("udp2").unwrap()),
        ];
        let log = |s: &str| PathBuf::from(format!("/b/{s}"));
        let cells = vec![
            vec![
                Cell::NotApplicable,
                Cell::Pass(None),
                Cell::Fail {
                    why: "exit 1".into(),
                    log: log("logs/testam.udp2.log"),
                },
            ],
            vec![
                Cell::NotApplicable,
                Cell::Skip("runs with 1".into()),
                Cell::Pass(Some(1)),
            ],
            vec![
                Cell::NotApplicable,
                Cell::CompileError {
                    log: log("smp-seq/testexit.compile.log"),
                    first: "x.c:1: error: y".into(),
                },
                Cell::Timeout {
                    log: log("logs/testexit.udp2.log"),
                },
            ],
            vec![Cell::Pass(None), Cell::NotApplicable, Cell::NoTime],
        ];
        let text = render(&rows, &cols, &cells);
        assert_eq!(
            text,
            "test       direct           smp2       udp2\n\
             testam          -           pass       FAIL\n\
             testmisc        -           skip  pass(n=1)\n\
             testexit        -  compile error    TIMEOUT\n\
             testtools    pass              -    no time\n\
             \n\
             failures:\n\
             \x20 testam udp2: FAIL: exit 1\n\
             \x20     log: /b/logs/testam.udp2.log\n\
             \x20 testexit [smp-seq]: compile error: x.c:1: error: y\n\
             \x20     log: /b/smp-seq/testexit.compile.log\n\
             \x20 testexit udp2: TIMEOUT (the job was ended)\n\
             \x20     log: /b/logs/testexit.udp2.log\n\
             \x20 testtools udp2: not run: the time budget was spent\n\
             \n\
             not run:\n\
             \x20 runs with 1: testmisc smp2\n"
        );
        let s = summarize(&rows, &cols, &cells);
        assert_eq!((s.cells, s.passed, s.failed, s.skipped), (8, 3, 4, 1));
    }
}
