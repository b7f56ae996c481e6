//! `cargo xtask`: build orchestration, layer checks and the multi-process
//! test matrix of the gex workspace. Run `cargo xtask help` for the commands.

mod cli;
mod cluster;
mod install;
mod layers;
mod meta;
mod modlayers;
mod startup;
mod suite;

use std::cell::OnceCell;
use std::env;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{self, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use cli::{ClusterOpts, TestOpts, USAGE};
use meta::{LAUNCHER, TESTSUITE};

/// Why a command failed, and the exit code xtask ends with.
struct Failure {
    /// Printed as `xtask: error: ...`; `None` when the cause was already
    /// reported.
    message: Option<String>,
    code: i32,
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure {
            message: Some(message),
            code: 1,
        }
    }
}

type Result<T = ()> = std::result::Result<T, Failure>;

fn main() {
    let command = match cli::parse(env::args().skip(1)) {
        Ok(command) => command,
        Err(e) => {
            eprintln!("xtask: {e}\n\n{USAGE}");
            process::exit(2);
        }
    };
    if let Err(failure) = Ctx::new().dispatch(&command) {
        if let Some(message) = failure.message {
            eprintln!("xtask: error: {message}");
        }
        process::exit(failure.code);
    }
}

/// The exit code to pass on for a child's status (128 + signal when the
/// child was killed, as shells do).
fn exit_code(status: ExitStatus) -> i32 {
    if let Some(code) = status.code() {
        return code;
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return 128 + signal;
        }
    }
    1
}

/// `path` made absolute and, where it exists, canonical (the part that
/// does not exist yet appended).
fn absolute(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut out = std::fs::canonicalize(&existing).unwrap_or(existing);
    for name in rest.into_iter().rev() {
        out.push(name);
    }
    out
}

fn format_duration(d: Duration) -> String {
    let secs = d.as_secs();
    if secs >= 60 {
        format!("{}m{:02}s", secs / 60, secs % 60)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

struct Ctx {
    /// The cargo that runs xtask (`$CARGO`), so children use the same
    /// toolchain.
    cargo: OsString,
    cwd: PathBuf,
    metadata: OnceCell<Value>,
}

impl Ctx {
    fn new() -> Self {
        Ctx {
            cargo: env::var_os("CARGO").unwrap_or_else(|| "cargo".into()),
            cwd: env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            metadata: OnceCell::new(),
        }
    }

    fn dispatch(&self, command: &cli::Command) -> Result {
        use cli::Command as C;
        match command {
            C::Help => {
                print!("{USAGE}");
                Ok(())
            }
            C::CheckLayers => self.check_layers(),
            C::Test(opts) => self.test(opts),
            C::TestCluster(opts) => self.test_cluster(opts),
            C::Demo { ranks, args } => self.demo(*ranks, args),
            C::Bench {
                ranks,
                conduit,
                names,
            } => self.bench(*ranks, conduit.as_deref(), names),
            C::BenchStartup { ranks, reps } => self.bench_startup(ranks, *reps),
            C::CInstall { prefix } => self.c_install(Path::new(prefix), true),
            C::GasnetTests(opts) => self.gasnet_tests(opts),
            C::FmtCheck => self.fmt_check(),
            C::Lint => self.lint(),
            C::Ci => self.ci(),
        }
    }

    // Running commands.

    fn cargo(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.cargo);
        cmd.args(args);
        cmd
    }

    /// The command line as a reader would type it: `cargo` for our cargo,
    /// paths relative to the current directory.
    fn display(&self, cmd: &Command) -> String {
        let program = if cmd.get_program() == self.cargo {
            "cargo".to_string()
        } else {
            self.display_arg(cmd.get_program())
        };
        let mut line = String::new();
        for (k, v) in cmd.get_envs() {
            if let Some(v) = v {
                line += &format!("{}={} ", k.to_string_lossy(), self.display_arg(v));
            }
        }
        line += &program;
        for arg in cmd.get_args() {
            line.push(' ');
            line += &self.display_arg(arg);
        }
        line
    }

    fn display_arg(&self, arg: &std::ffi::OsStr) -> String {
        let path = Path::new(arg);
        let shown = match path.strip_prefix(&self.cwd) {
            Ok(rel) if path.is_absolute() && !rel.as_os_str().is_empty() => rel.to_string_lossy(),
            _ => arg.to_string_lossy(),
        };
        if shown.is_empty() || shown.contains(|c: char| c.is_whitespace() || c == '\'') {
            format!("'{}'", shown.replace('\'', r"'\''"))
        } else {
            shown.into_owned()
        }
    }

    /// Runs `cmd` with inherited stdio, announcing it first.
    fn status(&self, cmd: &mut Command) -> Result<ExitStatus> {
        println!("xtask: running {}", self.display(cmd));
        let _ = std::io::stdout().flush();
        cmd.status()
            .map_err(|e| Failure::from(format!("could not start `{}`: {e}", self.display(cmd))))
    }

    /// Runs `cmd`, failing unless it succeeds.
    fn run(&self, cmd: &mut Command) -> Result {
        let status = self.status(cmd)?;
        if status.success() {
            Ok(())
        } else {
            Err(format!(
                "`{}` failed ({})",
                self.display(cmd),
                cluster::describe_status(status)
            )
            .into())
        }
    }

    fn metadata(&self) -> Result<&Value> {
        if let Some(meta) = self.metadata.get() {
            return Ok(meta);
        }
        let mut cmd = self.cargo(&["metadata", "--format-version", "1", "--no-deps"]);
        let output = cmd
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("could not run cargo metadata: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "cargo metadata failed ({})",
                cluster::describe_status(output.status)
            )
            .into());
        }
        let meta: Value = serde_json::from_slice(&output.stdout)
            .map_err(|e| format!("cargo metadata printed invalid JSON: {e}"))?;
        Ok(self.metadata.get_or_init(|| meta))
    }

    fn release_dir(&self) -> Result<PathBuf> {
        Ok(meta::current_target_dir(self.metadata()?).join("release"))
    }

    /// Fails unless gex-run has its launcher binary.
    fn require_launcher(&self) -> Result {
        if meta::bins(self.metadata()?, LAUNCHER)?
            .iter()
            .any(|b| b == LAUNCHER)
        {
            Ok(())
        } else {
            Err(format!("package {LAUNCHER} has no `{LAUNCHER}` binary yet").into())
        }
    }

    fn has_nextest(&self) -> bool {
        self.cargo(&["nextest", "--version"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    // Subcommands.

    fn check_layers(&self) -> Result {
        println!("xtask: checking workspace dependencies against the layer table");
        let graph = layers::workspace_graph(self.metadata()?)?;
        let report = layers::check(&graph, layers::LAYER_TABLE);
        for line in &report.lines {
            println!("  {line}");
        }
        println!("xtask: checking gex-coll's module imports against its layer table");
        let root = meta::workspace_root(self.metadata()?)
            .ok_or_else(|| Failure::from("cargo metadata has no workspace_root".to_string()))?;
        let modules = modlayers::module_graph(&root.join("gex-coll").join("src"))?;
        let coll = modlayers::check("gex-coll", &modules, modlayers::COLL_LAYERS);
        for line in &coll.lines {
            println!("  {line}");
        }
        if report.passed() && coll.passed() {
            println!(
                "check-layers: {} crates OK; gex-coll's {} modules OK",
                graph.len(),
                modules.len()
            );
            Ok(())
        } else {
            Err(format!(
                "check-layers: {} violation(s) of the crate layer rules (DESIGN.md section 2), \
                 {} of gex-coll's module layers (gex-coll/src/lib.rs, \"Layers\")",
                report.violations, coll.violations
            )
            .into())
        }
    }

    fn test(&self, opts: &TestOpts) -> Result {
        if opts.quick {
            return self.test_quick(&opts.packages);
        }
        self.check_layers()?;
        if self.has_nextest() {
            // nextest does not run doctests. They go first so that the
            // closing lines are nextest's summary rather than the doctest
            // count of whichever crate cargo tests last.
            self.run(&mut self.cargo(&["test", "--workspace", "--doc"]))?;
            self.run(&mut self.cargo(&["nextest", "run", "--workspace"]))
        } else {
            self.run(&mut self.cargo(&["test", "--workspace"]))
        }
    }

    /// `test --quick`: the unit and integration tests of `packages` (every
    /// crate but gex-testsuite when empty), without doctests: the edit loop.
    fn test_quick(&self, packages: &[String]) -> Result {
        let mut args: Vec<&str> = Vec::new();
        if packages.is_empty() {
            args.extend(["--workspace", "--exclude", TESTSUITE]);
        } else {
            for p in packages {
                args.extend(["-p", p.as_str()]);
            }
        }
        if self.has_nextest() {
            // A crate without tests (gex-am) is not an error here.
            let mut all = vec!["nextest", "run", "--no-tests=warn"];
            all.extend(&args);
            self.run(&mut self.cargo(&all))
        } else {
            let mut all = vec!["test", "--lib", "--bins", "--tests"];
            all.extend(&args);
            self.run(&mut self.cargo(&all))
        }
    }

    /// `test-cluster`: the program matrix, then the wide variants (both
    /// run even if the first fails; the first failure is returned).
    fn test_cluster(&self, opts: &ClusterOpts) -> Result {
        let matrix = if opts.matrix {
            self.cluster_matrix(opts)
        } else {
            Ok(())
        };
        let wide = if opts.wide {
            self.cluster_wide()
        } else {
            Ok(())
        };
        matrix.and(wide)
    }

    /// The wide variants that `cargo xtask test` leaves out: gex-testsuite's
    /// `#[ignore]`d integration tests (8 ranks, forced paths and
    /// environment variants, pretend hosts, the smallest ibv buffers and
    /// pools), each with the checks, environment and rank counts it had in
    /// `cargo xtask test`, whatever `--max-ranks` and `--conduit` say.
    fn cluster_wide(&self) -> Result {
        println!(
            "xtask: test-cluster: the wide variants ({TESTSUITE}'s ignored tests; see its tests/*.rs)"
        );
        let start = Instant::now();
        // `--workspace` and a filter rather than `-p`: the same features
        // as `cargo xtask test`'s build, so nothing is built again.
        let filter = format!("package({TESTSUITE})");
        let result = if self.has_nextest() {
            self.run(&mut self.cargo(&[
                "nextest",
                "run",
                "--workspace",
                "-E",
                &filter,
                "--run-ignored",
                "only",
                "--no-fail-fast",
            ]))
        } else {
            self.run(&mut self.cargo(&[
                "test",
                "-p",
                TESTSUITE,
                "--no-fail-fast",
                "--",
                "--ignored",
            ]))
        };
        println!(
            "xtask: test-cluster: wide variants {} in {}",
            if result.is_ok() { "passed" } else { "FAILED" },
            format_duration(start.elapsed())
        );
        result
    }

    fn cluster_matrix(&self, opts: &ClusterOpts) -> Result {
        let programs: Vec<String> = meta::bins(self.metadata()?, TESTSUITE)?
            .into_iter()
            .filter(|b| b.starts_with("test-"))
            .collect();
        if programs.is_empty() {
            println!(
                "xtask: test-cluster: {TESTSUITE} has no `test-*` programs yet; nothing to run"
            );
            return Ok(());
        }
        self.build_programs()?;

        let release = self.release_dir()?;
        let gex_run = release.join(LAUNCHER);
        let logs = release.join("xtask-test-cluster");
        // Our own scratch directory: logs of an earlier run would mislead.
        let _ = std::fs::remove_dir_all(&logs);

        let cases = cluster::matrix(&programs, &opts.conduits, opts.max_ranks);
        println!(
            "xtask: test-cluster: {} programs x {} set-up(s) ({}), up to {} ranks = {} runs (logs in {})",
            programs.len(),
            opts.conduits.len(),
            opts.conduits
                .iter()
                .map(|c| c.name)
                .collect::<Vec<_>>()
                .join(", "),
            opts.max_ranks,
            cases.len(),
            self.display_arg(logs.as_os_str())
        );
        // The namespaces live until the end of this function (or of xtask,
        // however it ends: see cluster::Netns).
        let mut netns = None;
        let mut netns_skip = None;
        if cases.iter().any(|c| c.conduit.netns) {
            match cluster::netns_support() {
                Err(missing) => {
                    netns_skip = Some(format!("needs root, ip and nft ({missing})"));
                }
                Ok(()) => match cluster::Netns::create() {
                    Ok(ns) => {
                        let [a, b] = &ns.names;
                        let [ip_a, ip_b] = ns.addrs();
                        println!(
                            "xtask: test-cluster: network namespaces {a} ({ip_a}) and {b} \
                             ({ip_b}), 10% of UDP datagrams dropped in each"
                        );
                        netns = Some(ns);
                    }
                    Err(e) => {
                        netns_skip = Some(format!("could not set up network namespaces: {e}"));
                    }
                },
            }
            if let Some(why) = &netns_skip {
                println!("xtask: test-cluster: udp-netns runs skipped: {why}");
            }
        }

        let mut results = Vec::with_capacity(cases.len());
        let mut times = Vec::with_capacity(cases.len());
        for case in cases {
            if let (true, Some(why)) = (case.conduit.netns, &netns_skip) {
                results.push((case, cluster::Outcome::Skipped(why.clone())));
                times.push(Duration::ZERO);
                continue;
            }
            let mut cmd = case.conduit.launch(
                &gex_run,
                case.ranks,
                &release.join(&case.program),
                netns.as_ref(),
            );
            let log = logs.join(case.log_name());
            print!("xtask: running {} ... ", self.display(&cmd));
            let _ = std::io::stdout().flush();
            let start = Instant::now();
            let outcome = cluster::run_logged(&mut cmd, &log, case.conduit.limit());
            let elapsed = start.elapsed();
            let took = format_duration(elapsed);
            match &outcome {
                cluster::Outcome::Passed => println!("ok ({took})"),
                cluster::Outcome::Failed(why) => println!("FAILED: {why} ({took})"),
                cluster::Outcome::TimedOut => println!("HUNG: ended by xtask after {took}"),
                cluster::Outcome::Skipped(why) => println!("skipped: {why}"),
            }
            if !outcome.passed() {
                println!(
                    "---- last lines of {} ----",
                    self.display_arg(log.as_os_str())
                );
                println!("{}", cluster::tail(&log, 40));
                println!("----");
            }
            results.push((case, outcome));
            times.push(elapsed);
        }
        println!();
        print!("{}", cluster::render_table(&results, opts.max_ranks));
        for line in cluster::skip_lines(&results) {
            println!("{line}");
        }
        if let Some(ns) = &netns {
            let dropped = ns.dropped();
            println!(
                "udp-netns: nftables dropped {} UDP datagrams ({} in {}, {} in {})",
                dropped.iter().sum::<u64>(),
                dropped[0],
                ns.names[0],
                dropped[1],
                ns.names[1]
            );
        }
        print!("{}", cluster::render_times(&results, &times));
        println!("{}", cluster::summary_line(&results));
        drop(netns);
        let failed = results
            .iter()
            .filter(|(_, o)| !o.passed() && !matches!(o, cluster::Outcome::Skipped(_)))
            .count();
        if failed == 0 {
            Ok(())
        } else {
            Err(format!("test-cluster: {failed} of {} runs failed", results.len()).into())
        }
    }

    fn demo(&self, ranks: u32, args: &[String]) -> Result {
        if !meta::bins(self.metadata()?, TESTSUITE)?
            .iter()
            .any(|b| b == "demo")
        {
            return Err(format!("package {TESTSUITE} has no `demo` binary yet").into());
        }
        self.require_launcher()?;
        self.run(&mut self.cargo(&[
            "build",
            "--release",
            "-p",
            LAUNCHER,
            "-p",
            TESTSUITE,
            "--bin",
            LAUNCHER,
            "--bin",
            "demo",
        ]))?;
        let release = self.release_dir()?;
        let mut cmd = Command::new(release.join(LAUNCHER));
        cmd.arg("-n")
            .arg(ranks.to_string())
            .arg(release.join("demo"))
            .args(args);
        let status = self.status(&mut cmd)?;
        if status.success() {
            Ok(())
        } else {
            Err(Failure {
                message: Some(format!(
                    "demo failed ({})",
                    cluster::describe_status(status)
                )),
                code: exit_code(status),
            })
        }
    }

    fn bench(&self, ranks: u32, conduit: Option<&str>, names: &[String]) -> Result {
        let all = meta::bins(self.metadata()?, TESTSUITE)?;
        let benches: Vec<String> = if names.is_empty() {
            all.iter()
                .filter(|b| b.starts_with("bench-"))
                .cloned()
                .collect()
        } else {
            for name in names {
                if !all.contains(name) {
                    return Err(format!(
                        "package {TESTSUITE} has no program `{name}` (programs: {})",
                        if all.is_empty() {
                            "none".to_string()
                        } else {
                            all.join(", ")
                        }
                    )
                    .into());
                }
            }
            names.to_vec()
        };
        if benches.is_empty() {
            println!("xtask: bench: {TESTSUITE} has no `bench-*` programs yet; nothing to run");
            return Ok(());
        }
        self.build_programs()?;
        let release = self.release_dir()?;
        let mut failed = Vec::new();
        for bench in &benches {
            let mut cmd = Command::new(release.join(LAUNCHER));
            cmd.arg("-n").arg(ranks.to_string());
            if let Some(c) = conduit {
                cmd.arg("--conduit").arg(c);
            }
            cmd.arg(release.join(bench));
            let status = self.status(&mut cmd)?;
            if !status.success() {
                println!(
                    "xtask: {bench} failed ({})",
                    cluster::describe_status(status)
                );
                failed.push(bench.as_str());
            }
        }
        if failed.is_empty() {
            Ok(())
        } else {
            Err(format!("benchmarks failed: {}", failed.join(", ")).into())
        }
    }

    /// Builds the launcher and every test and benchmark program (release).
    fn build_programs(&self) -> Result {
        self.require_launcher()?;
        self.run(&mut self.cargo(&[
            "build",
            "--release",
            "-p",
            LAUNCHER,
            "-p",
            TESTSUITE,
            "--bins",
        ]))
    }

    fn bench_startup(&self, ranks: &[u32], reps: u32) -> Result {
        self.build_programs()?;
        let release = self.release_dir()?;
        let workspace = meta::workspace_root(self.metadata()?)
            .ok_or_else(|| "cargo metadata has no workspace root".to_string())?;
        startup::run(&workspace, &release, ranks, reps.max(1)).map_err(Into::into)
    }

    /// `c-install PREFIX`: the C interface (gex-capi), the tools library
    /// (gex-tools) and the launcher, built in release, installed under
    /// PREFIX with a pkg-config file per conduit (from
    /// gex-capi/pkgconfig/gex.pc.in), and the layout GASNet clients build
    /// with (see `install`). `verbose` lists every file.
    fn c_install(&self, prefix: &Path, verbose: bool) -> Result {
        self.run(&mut self.cargo(&[
            "build",
            "--release",
            "-p",
            "gex-capi",
            "-p",
            "gex-run",
            "-p",
            "gex-tools",
        ]))?;
        let prefix = if prefix.is_absolute() {
            prefix.to_path_buf()
        } else {
            self.cwd.join(prefix)
        };
        let meta = self.metadata()?;
        let root = meta::workspace_root(meta)
            .ok_or_else(|| Failure::from("cargo metadata has no workspace_root".to_string()))?;
        let capi = root.join("gex-capi");
        let release = self.release_dir()?;
        let io = |what: &str, e: std::io::Error| Failure::from(format!("c-install: {what}: {e}"));
        let (inc, lib, bin) = (
            prefix.join("include"),
            prefix.join("lib"),
            prefix.join("bin"),
        );
        let pc = lib.join("pkgconfig");
        for d in [&inc, &lib, &bin, &pc] {
            std::fs::create_dir_all(d).map_err(|e| io(&d.display().to_string(), e))?;
        }
        let mut installed: Vec<PathBuf> = Vec::new();
        let mut copied = Vec::new();
        let headers =
            std::fs::read_dir(capi.join("include")).map_err(|e| io("gex-capi/include", e))?;
        for h in headers {
            let h = h.map_err(|e| io("gex-capi/include", e))?.path();
            copied.push((h.clone(), inc.join(h.file_name().unwrap_or_default())));
        }
        copied.push((release.join("libgex_capi.a"), lib.join("libgex.a")));
        copied.push((release.join("libgex_capi.so"), lib.join("libgex.so")));
        copied.push((
            release.join("libgex_tools.a"),
            lib.join("libgasnet_tools-seq.a"),
        ));
        copied.push((release.join("gex-run"), bin.join("gex-run")));
        for (from, to) in &copied {
            // Replace rather than overwrite: a running program may map the old file.
            let _ = std::fs::remove_file(to);
            std::fs::copy(from, to).map_err(|e| io(&from.display().to_string(), e))?;
            installed.push(to.clone());
        }
        let template = std::fs::read_to_string(capi.join("pkgconfig/gex.pc.in"))
            .map_err(|e| io("gex.pc.in", e))?;
        let version = env!("CARGO_PKG_VERSION");
        let mut written: Vec<(PathBuf, String, bool)> = Vec::new();
        for conduit in install::CONDUITS {
            let text = template
                .replace("@PREFIX@", &prefix.to_string_lossy())
                .replace("@CONDUIT@", conduit)
                .replace("@CONDUIT_UC@", &conduit.to_uppercase())
                .replace("@VERSION@", version);
            written.push((pc.join(format!("gex-{conduit}.pc")), text, false));
        }

        // The layout GASNet clients build with.
        let gasnetex = std::fs::read_to_string(capi.join("include/gasnetex.h"))
            .map_err(|e| io("gex-capi/include/gasnetex.h", e))?;
        let layout = install::Layout {
            prefix: prefix.to_string_lossy().into_owned(),
            cc: env::var("CC").unwrap_or_else(|_| "cc".into()),
            cxx: env::var("CXX").unwrap_or_else(|_| "c++".into()),
            release: install::release_from_header(&gasnetex).unwrap_or(install::DEFAULT_RELEASE),
            gex_version: version.to_string(),
        };
        if !capi.join("include/gasnet_config.h").exists() {
            written.push((inc.join("gasnet_config.h"), layout.gasnet_config_h(), false));
        }
        for conduit in install::CONDUITS {
            let dir = inc.join(format!("{conduit}-conduit"));
            std::fs::create_dir_all(&dir).map_err(|e| io(&dir.display().to_string(), e))?;
            written.push((
                dir.join("gasnet_core_fwd.h"),
                layout.conduit_header(conduit),
                false,
            ));
            for mode in install::MODES {
                written.push((
                    dir.join(format!("{conduit}-{mode}.mak")),
                    layout.conduit_mak(conduit, mode),
                    false,
                ));
                written.push((
                    pc.join(format!("gasnet-{conduit}-{mode}.pc")),
                    layout.conduit_pc(conduit, mode),
                    false,
                ));
            }
        }
        for mode in install::TOOLS_MODES {
            written.push((
                inc.join(format!("gasnet_tools-{mode}.mak")),
                layout.tools_mak(mode),
                false,
            ));
            written.push((
                pc.join(format!("gasnet_tools-{mode}.pc")),
                layout.tools_pc(mode),
                false,
            ));
        }
        for (name, conduit) in install::LAUNCHERS {
            written.push((
                bin.join(name),
                install::launcher_script(name, conduit),
                true,
            ));
        }
        for (to, text, executable) in &written {
            let _ = std::fs::remove_file(to);
            std::fs::write(to, text).map_err(|e| io(&to.display().to_string(), e))?;
            if *executable {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755))
                    .map_err(|e| io(&to.display().to_string(), e))?;
            }
            installed.push(to.clone());
        }
        // One library serves every conduit and mode: links, not copies.
        let mut links: Vec<(PathBuf, &str)> = Vec::new();
        for conduit in install::CONDUITS {
            for mode in install::MODES {
                links.push((
                    lib.join(format!("libgasnet-{conduit}-{mode}.a")),
                    "libgex.a",
                ));
            }
        }
        links.push((lib.join("libgasnet_tools-par.a"), "libgasnet_tools-seq.a"));
        for (link, target) in &links {
            let _ = std::fs::remove_file(link);
            std::os::unix::fs::symlink(target, link)
                .map_err(|e| io(&link.display().to_string(), e))?;
            installed.push(link.clone());
        }
        if verbose {
            for path in &installed {
                println!("xtask: installed {}", path.display());
            }
        }
        println!(
            "c-install: {} files in {}; build with\n  \
             PKG_CONFIG_PATH={} cc prog.c $(pkg-config --cflags --libs gex-smp)\n  \
             (or include {}/smp-conduit/smp-seq.mak, or pkg-config gasnet-smp-seq)\n\
             and run with\n  {} -n 4 ./a.out  (or {} -n 4 ./a.out)",
            installed.len(),
            prefix.display(),
            pc.display(),
            inc.display(),
            bin.join("gex-run").display(),
            bin.join("gasnetrun_smp").display()
        );
        Ok(())
    }

    /// `gasnet-tests DIR`: the reference's suite against a fresh install.
    fn gasnet_tests(&self, opts: &suite::Options) -> Result {
        let started = Instant::now();
        let dir = std::fs::canonicalize(&opts.dir)
            .map_err(|e| format!("gasnet-tests: {}: {e}", opts.dir))?;
        if !dir.join("tests").is_dir() {
            return Err(format!(
                "gasnet-tests: {} has no tests/ directory (expected a GASNet-EX source tree)",
                dir.display()
            )
            .into());
        }
        let build = match &opts.build_dir {
            Some(b) => self.cwd.join(b),
            None => meta::current_target_dir(self.metadata()?).join("gasnet-tests"),
        };
        // Never inside DIR: the suite's tree is read only.
        let build_abs = absolute(&build);
        if build_abs.starts_with(&dir) {
            return Err(format!(
                "gasnet-tests: the build directory {} is inside {}, which must stay untouched",
                build_abs.display(),
                dir.display()
            )
            .into());
        }
        let _ = std::fs::remove_dir_all(&build_abs);
        std::fs::create_dir_all(&build_abs)
            .map_err(|e| format!("gasnet-tests: {}: {e}", build_abs.display()))?;
        println!(
            "xtask: gasnet-tests: the suite in {}, built in {}",
            dir.display(),
            build_abs.display()
        );
        let prefix = match &opts.prefix {
            Some(p) => {
                let p = absolute(&self.cwd.join(p));
                if !p.join("include/smp-conduit/smp-seq.mak").is_file() {
                    return Err(format!(
                        "gasnet-tests: {} is not a gex install (no include/smp-conduit/smp-seq.mak; \
                         see cargo xtask c-install)",
                        p.display()
                    )
                    .into());
                }
                println!(
                    "xtask: gasnet-tests: using gex as installed in {}",
                    p.display()
                );
                p
            }
            None => {
                let p = build_abs.join("install");
                self.c_install(&p, false)?;
                p
            }
        };
        let harness = suite::Harness::new(opts, dir, build_abs.clone(), prefix);
        let summary = harness.run().map_err(|e| format!("gasnet-tests: {e}"))?;
        println!();
        print!("{}", summary.table);
        println!(
            "xtask: gasnet-tests took {}",
            format_duration(started.elapsed())
        );
        if opts.keep || summary.failed > 0 {
            println!(
                "xtask: gasnet-tests: build directory kept: {}",
                build_abs.display()
            );
        } else {
            let _ = std::fs::remove_dir_all(&build_abs);
        }
        if summary.failed == 0 {
            Ok(())
        } else if opts.allow_failures {
            println!(
                "xtask: gasnet-tests: {} cell(s) failed; exit status 0 (--allow-failures)",
                summary.failed
            );
            Ok(())
        } else {
            Err(format!("gasnet-tests: {} cell(s) failed", summary.failed).into())
        }
    }

    fn fmt_check(&self) -> Result {
        self.run(&mut self.cargo(&["fmt", "--all", "--check"]))
    }

    fn lint(&self) -> Result {
        self.run(&mut self.cargo(&[
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]))
    }

    fn ci(&self) -> Result {
        let cluster = ClusterOpts::with_max_ranks(cli::CI_MAX_RANKS);
        let steps: [(&str, &dyn Fn() -> Result); 4] = [
            ("fmt-check", &|| self.fmt_check()),
            ("lint", &|| self.lint()),
            ("test", &|| self.test(&TestOpts::default())),
            ("test-cluster --max-ranks 4", &|| {
                self.test_cluster(&cluster)
            }),
        ];
        let start = Instant::now();
        for (i, (name, step)) in steps.iter().enumerate() {
            println!("xtask: ci step {}/{}: {name}", i + 1, steps.len());
            let step_start = Instant::now();
            let result = step();
            let took = format_duration(step_start.elapsed());
            match result {
                Ok(()) => println!("xtask: ci step {name}: ok ({took})"),
                Err(failure) => {
                    println!("xtask: ci step {name}: FAILED ({took})");
                    return Err(failure);
                }
            }
        }
        println!("xtask: ci passed in {}", format_duration(start.elapsed()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Ctx {
        Ctx {
            cargo: "/toolchain/bin/cargo".into(),
            cwd: PathBuf::from("/ws"),
            metadata: OnceCell::new(),
        }
    }

    #[test]
    fn display_shortens_cargo_and_workspace_paths() {
        let ctx = ctx();
        assert_eq!(
            ctx.display(&ctx.cargo(&["test", "--workspace"])),
            "cargo test --workspace"
        );
        let mut cmd = Command::new("/ws/target/release/gex-run");
        cmd.args([
            "-n",
            "2",
            "/ws/target/release/demo",
            "a b",
            "",
            "/elsewhere/x",
        ]);
        assert_eq!(
            ctx.display(&cmd),
            "target/release/gex-run -n 2 target/release/demo 'a b' '' /elsewhere/x"
        );
    }

    #[test]
    fn durations() {
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(format_duration(Duration::from_secs(125)), "2m05s");
    }

    #[cfg(unix)]
    #[test]
    fn exit_codes_pass_through() {
        let status = Command::new("sh").args(["-c", "exit 7"]).status().unwrap();
        assert_eq!(exit_code(status), 7);
        let status = Command::new("sh")
            .args(["-c", "kill -9 $$"])
            .status()
            .unwrap();
        assert_eq!(exit_code(status), 128 + 9);
    }
}
