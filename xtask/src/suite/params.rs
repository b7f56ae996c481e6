//! What the reference's suite says about its tests, read from its source
//! tree at run time: the programs and how each is built
//! (`tests/Makefile.in`: `testprograms_seq`, `testprograms_par`,
//! `CXX_TESTS`, `testprograms_err`, `testprograms_nongasnet`,
//! `MPI_TESTS_SEQ`, `<test>_extraincs` / `_extraobjs` / `_extralibs` /
//! `_extracflags`), and how each is run (`TEST_PARAMS`: `<test>_args`,
//! `_env`, `_nodes`; `tests/harness/gasnet-tests/harness.conf`: `AppArgs`,
//! `AppEnv`, `DynamicThreads`, `TimeLimit`, `RequireFeature`,
//! `ProhibitFeature`).
//!
//! Where both files speak of a test, harness.conf wins key by key (it is
//! the more specific: per conduit and process count), and `TEST_PARAMS`
//! fills what it leaves out. When `Makefile.in` cannot be read, the lists
//! fall back to [`FALLBACK`], the 2025.8.0 suite's.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::harness::{self, Features, HarnessConf};
use super::mak::{self, Vars};
use super::shell::{self, Token};

/// The harness's `$DEFAULT$` time limit for one run.
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(60);

/// The 2025.8.0 suite's lists, for a `Makefile.in` that cannot be read.
pub const FALLBACK: Lists = Lists {
    seq: &[
        "testgasnet",
        "testlegacy",
        "testtools",
        "testinternal",
        "testenv",
        "testhsl",
        "testsmall",
        "testlarge",
        "testval",
        "testam",
        "testmisc",
        "testcore1",
        "testcore2",
        "testcore3",
        "testcore4",
        "testcore5",
        "testslice",
        "testbarrier",
        "testbarrierconf",
        "testbarrierlate",
        "testlogGP",
        "testalign",
        "testrand",
        "testexit",
        "testvis",
        "testcoll",
        "testcollperf",
        "testteambarrier",
        "testteambcast",
        "testreduce",
        "testteam",
        "testnbr",
        "testvisperf",
        "testqueue",
        "testratomic",
        "testfaddperf",
        "testimm",
        "testsplit",
        "testacc",
        "testsegment",
        "testtmpair",
        "testreadonly",
        "testalltoall",
        "testtoken",
        "testcudauva",
        "testhip",
        "testze",
        "testprogthr",
        "testmpi",
    ],
    par: &["testthreads", "testcontend", "testlockcontend"],
    cxx: &["testcxx", "testlegacycxx", "testtoolscxx"],
    err: &["testexit", "testreadonly", "testmpi"],
    nongasnet: &["testtools", "testtoolscxx"],
    mpi: &["testmpi"],
};

/// The program lists, static (for [`FALLBACK`]).
#[derive(Debug)]
pub struct Lists {
    pub seq: &'static [&'static str],
    pub par: &'static [&'static str],
    pub cxx: &'static [&'static str],
    pub err: &'static [&'static str],
    pub nongasnet: &'static [&'static str],
    pub mpi: &'static [&'static str],
}

/// What `TEST_PARAMS` gives one test.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestParams {
    /// The words of `<test>_args`.
    pub args: Option<Vec<String>>,
    /// `<test>_env`, as `NAME=VALUE` pairs.
    pub env: Option<Vec<(String, String)>>,
    pub nodes: Option<u32>,
}

/// How a test is built beyond the common rule.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extras {
    pub incs: Vec<String>,
    pub cflags: Vec<String>,
    pub objs: Vec<String>,
    pub libs: Vec<String>,
}

/// The suite as `DIR` describes it.
#[derive(Debug, Clone, Default)]
pub struct Suite {
    /// Tests of every thread mode, in `Makefile.in`'s order, then the C++
    /// tests, then those only harness.conf names (testhello); each with a
    /// source in `tests/`.
    pub seq: Vec<String>,
    /// Tests built only in PAR mode.
    pub par: Vec<String>,
    /// Tests whose source is C++ (`tests/<name>.cc`).
    pub cxx: Vec<String>,
    /// Tests `run-tests` does not run.
    pub err: Vec<String>,
    /// Tests that do not link the communication library (the tools only).
    pub nongasnet: Vec<String>,
    /// Tests built with the MPI compiler.
    pub mpi: Vec<String>,
    pub extras: BTreeMap<String, Extras>,
    pub params: BTreeMap<String, TestParams>,
    pub harness: HarnessConf,
    /// What could not be read, for the report.
    pub warnings: Vec<String>,
}

/// The configure results `Makefile.in`'s conditionals see: pthreads, MPI
/// compatibility (testmpi is built when an MPI compiler is found), FAST
/// segments, no debug, no cross-compiling.
fn configured(name: &str) -> bool {
    matches!(
        name,
        "HAVE_PTHREAD" | "USE_MPI_COMPAT" | "GASNET_SEGMENT_FAST"
    )
}

fn substitution(name: &str, dir: &Path) -> Option<String> {
    Some(match name {
        "TOP_SRCDIR" | "TOP_BUILDDIR" => dir.display().to_string(),
        "GASNET_THREAD_LIBS" => "-lpthread".into(),
        "MPI_CC" => "mpicc".into(),
        "EXESUFFIX" => String::new(),
        "AWK" => "awk".into(),
        "PERL" => "perl".into(),
        _ => return None,
    })
}

fn words_of(vars: &Vars, name: &str) -> Vec<String> {
    vars.get(name)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Reads `DIR/tests/Makefile.in` and `DIR/tests/harness/gasnet-tests/harness.conf`.
pub fn read(dir: &Path) -> Suite {
    let tests = dir.join("tests");
    let mut suite = Suite::default();
    match std::fs::read_to_string(tests.join("Makefile.in")) {
        Ok(text) => suite.read_makefile(&text, dir),
        Err(e) => suite.warnings.push(format!(
            "cannot read tests/Makefile.in ({e}): using the built-in lists"
        )),
    }
    if suite.seq.is_empty() {
        if suite.warnings.is_empty() {
            suite.warnings.push(
                "tests/Makefile.in names no testprograms_seq: using the built-in lists".into(),
            );
        }
        suite.use_lists(&FALLBACK);
    }
    match std::fs::read_to_string(tests.join("harness/gasnet-tests/harness.conf")) {
        Ok(text) => suite.harness = harness::parse(&text),
        Err(e) => suite.warnings.push(format!(
            "cannot read tests/harness/gasnet-tests/harness.conf ({e}): \
             running tests with Makefile.in's TEST_PARAMS alone"
        )),
    }
    // Tests only harness.conf runs (testhello), then keep those with a source.
    let known: Vec<String> = suite.seq.iter().chain(&suite.par).cloned().collect();
    for entry in &suite.harness.entries {
        if let Some((base, None, "seq")) = harness::split_name(&entry.name) {
            if !known.iter().any(|k| k == base) && !suite.seq.iter().any(|k| k == base) {
                suite.seq.push(base.to_string());
            }
        }
    }
    let has_source = |t: &String| {
        tests.join(format!("{t}.c")).is_file() || tests.join(format!("{t}.cc")).is_file()
    };
    suite.seq.retain(has_source);
    suite.par.retain(has_source);
    suite.cxx = suite
        .seq
        .iter()
        .chain(&suite.par)
        .filter(|t| tests.join(format!("{t}.cc")).is_file())
        .cloned()
        .collect();
    suite
}

impl Suite {
    fn use_lists(&mut self, lists: &Lists) {
        let own = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        self.seq = own(lists.seq);
        for t in lists.cxx {
            if !self.seq.iter().any(|s| s == t) {
                self.seq.push(t.to_string());
            }
        }
        self.par = own(lists.par);
        self.err = own(lists.err);
        self.nongasnet = own(lists.nongasnet);
        self.mpi = own(lists.mpi);
    }

    fn read_makefile(&mut self, text: &str, dir: &Path) {
        let configured_text = mak::configure(text, &configured, &|n| substitution(n, dir));
        let mut vars = mak::parse(&configured_text);
        // Variables the conduit's Makefile or the command line would set.
        for name in [
            "CONDUIT_TESTS",
            "CONDUIT_TESTPARAMS",
            "MANUAL_TESTPARAMS",
            "TEST_INOUT",
        ] {
            vars.set(name, "");
        }
        self.seq = words_of(&vars, "testprograms_seq");
        for t in words_of(&vars, "CXX_TESTS") {
            if !self.seq.contains(&t) {
                self.seq.push(t);
            }
        }
        self.par = words_of(&vars, "testprograms_par");
        self.err = words_of(&vars, "testprograms_err");
        self.nongasnet = words_of(&vars, "testprograms_nongasnet");
        self.mpi = words_of(&vars, "MPI_TESTS_SEQ");
        for t in self.seq.iter().chain(&self.par) {
            let get = |suffix: &str| words_of(&vars, &format!("{t}_{suffix}"));
            let extras = Extras {
                incs: get("extraincs"),
                cflags: get("extracflags"),
                objs: get("extraobjs"),
                libs: get("extralibs"),
            };
            if extras != Extras::default() {
                self.extras.insert(t.clone(), extras);
            }
        }
        match parse_test_params(&vars.get("TEST_PARAMS")) {
            Ok(params) => self.params = params,
            Err(e) => self
                .warnings
                .push(format!("cannot read TEST_PARAMS in tests/Makefile.in: {e}")),
        }
    }
}

/// Reads `TEST_PARAMS` (make-expanded): shell assignments
/// `<test>_args=...`, `<test>_env=...`, `<test>_nodes=...`. `run-tests`
/// re-splits an `_args` or `_env` value through `eval echo`, where the
/// `\"` of a value quote words: so do we.
pub fn parse_test_params(text: &str) -> Result<BTreeMap<String, TestParams>, String> {
    let env = |name: &str| std::env::var(name).ok();
    let mut out: BTreeMap<String, TestParams> = BTreeMap::new();
    for tok in shell::tokens(text, &env)? {
        let Token::Word(word) = tok else { continue };
        let Some((name, value)) = word.split_once('=') else {
            continue;
        };
        let Some((test, what)) = name.rsplit_once('_') else {
            continue;
        };
        if !test.starts_with("test") {
            continue;
        }
        let value = value.replace("\\\"", "\"");
        let p = out.entry(test.to_string()).or_default();
        match what {
            "args" => p.args = Some(shell::words_with(&value, &env)?),
            "env" => p.env = Some(env_pairs(&shell::words_with(&value, &env)?)?),
            "nodes" => {
                p.nodes = Some(
                    value
                        .trim()
                        .parse()
                        .map_err(|_| format!("{name}: not a count: `{value}`"))?,
                )
            }
            _ => {}
        }
    }
    Ok(out)
}

fn env_pairs(words: &[String]) -> Result<Vec<(String, String)>, String> {
    words
        .iter()
        .map(|w| {
            w.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| format!("`{w}` is not NAME=VALUE"))
        })
        .collect()
}

/// The process counts a test may run with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ranks {
    /// Any count (the harness's `$DEFAULT$`).
    Any,
    /// Only these.
    Only(Vec<u32>),
}

impl Ranks {
    pub fn allows(&self, n: u32) -> bool {
        match self {
            Ranks::Any => true,
            Ranks::Only(list) => list.contains(&n),
        }
    }
}

/// How one test runs in one configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub ranks: Ranks,
    /// None: the reference builds it and runs it nowhere.
    pub limit: Option<Duration>,
    /// Set when the harness's feature requirements exclude the run.
    pub excluded: Option<String>,
}

/// Evaluates a `TimeLimit` value: `0`, `300`, `$DEFAULT$`, `2 * $DEFAULT$`.
pub fn time_limit(expr: &str, default: Duration) -> Result<Duration, String> {
    let mut secs = 1.0f64;
    for factor in expr.split('*') {
        let f = factor.trim();
        secs *= if f == "$DEFAULT$" {
            default.as_secs_f64()
        } else {
            f.parse::<f64>()
                .map_err(|_| format!("bad time limit `{expr}`"))?
        };
    }
    if !(secs.is_finite() && secs >= 0.0) {
        return Err(format!("bad time limit `{expr}`"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Reads a `DynamicThreads` value: `1,$DEFAULT$`, `$DEFAULT$`, `1`, `4,$DEFAULT$`.
pub fn dynamic_threads(value: &str) -> Result<Ranks, String> {
    let mut only = Vec::new();
    for item in value.split(',') {
        let item = item.trim();
        if item == "$DEFAULT$" {
            return Ok(Ranks::Any);
        }
        only.push(
            item.parse()
                .map_err(|_| format!("bad DynamicThreads `{value}`"))?,
        );
    }
    Ok(Ranks::Only(only))
}

impl Suite {
    pub fn is_nongasnet(&self, test: &str) -> bool {
        self.nongasnet.iter().any(|t| t == test)
    }

    pub fn is_mpi(&self, test: &str) -> bool {
        self.mpi.iter().any(|t| t == test)
    }

    pub fn is_cxx(&self, test: &str) -> bool {
        self.cxx.iter().any(|t| t == test)
    }

    /// How `entry_name`'s test (`testam-seq`, `testam_async-seq`) runs
    /// with these features; `test` is the program (`testam`).
    pub fn run_spec(
        &self,
        test: &str,
        entry_name: &str,
        features: &Features,
    ) -> Result<RunSpec, String> {
        let entry = self.harness.entry(entry_name);
        let params = self.params.get(test).cloned().unwrap_or_default();
        let is_variant = harness::split_name(entry_name).is_some_and(|(_, v, _)| v.is_some());
        // Values the entry itself sets and that apply here.
        let own = |key: &str| -> Result<Option<Vec<&str>>, String> {
            match entry {
                Some(e) if e.sets(key) => {
                    let v = e.values(key, features)?;
                    Ok((!v.is_empty()).then_some(v))
                }
                _ => Ok(None),
            }
        };
        let args = match own("AppArgs")? {
            Some(values) => {
                let mut words = Vec::new();
                for v in values {
                    words.extend(shell::words(v)?);
                }
                words
            }
            None if is_variant => Vec::new(),
            None => params.args.clone().unwrap_or_default(),
        };
        let env = match own("AppEnv")? {
            Some(values) => {
                let mut pairs = Vec::new();
                for v in values {
                    pairs.extend(env_pairs(&shell::words(v)?)?);
                }
                pairs
            }
            None if is_variant => Vec::new(),
            None => params.env.clone().unwrap_or_default(),
        };
        let ranks = match own("DynamicThreads")? {
            Some(values) => dynamic_threads(values[values.len() - 1])?,
            None => match params.nodes {
                Some(n) if !is_variant => Ranks::Only(vec![n]),
                _ => Ranks::Any,
            },
        };
        // Does the reference run it? run-tests runs what is not in
        // testprograms_err; the harness runs entries with a time limit.
        let default_limit = DEFAULT_TIME_LIMIT.mul_f64(1.5);
        let harness_limit = match entry {
            Some(e) => match e.values("TimeLimit", features)?.last() {
                Some(v) => Some(time_limit(v, DEFAULT_TIME_LIMIT)?),
                None => Some(default_limit),
            },
            None => None,
        };
        let run_tests_runs = !is_variant && !self.err.iter().any(|t| t == test);
        let limit = match harness_limit {
            Some(l) if !l.is_zero() => Some(l),
            // Compile-only in the harness, but run-tests runs it.
            Some(_) if run_tests_runs => Some(default_limit),
            Some(_) => None,
            None if run_tests_runs => Some(default_limit),
            None => None,
        };
        let mut excluded = None;
        if let Some(e) = entry {
            if e.all_true("RequireFeature", features)? == Some(false) {
                excluded = Some(format!(
                    "harness.conf requires {}",
                    e.values("RequireFeature", features)?.join(", ")
                ));
            } else if e
                .values("ProhibitFeature", features)?
                .iter()
                .any(|v| harness::eval(v, features).unwrap_or(false))
            {
                excluded = Some(format!(
                    "harness.conf excludes {}",
                    e.values("ProhibitFeature", features)?.join(", ")
                ));
            }
        }
        Ok(RunSpec {
            args,
            env,
            ranks,
            limit,
            excluded,
        })
    }

    /// harness.conf's variants of `test` in `mode` (`testam_async-seq`)
    /// that run the same program with other arguments: no build flags of
    /// their own, no run command, the usual pass/fail expressions.
    pub fn variants(&self, test: &str, mode: &str) -> Vec<String> {
        self.harness
            .entries
            .iter()
            .filter(|e| {
                matches!(harness::split_name(&e.name),
                    Some((base, Some(_), m)) if base == test && m == mode)
            })
            .filter(|e| {
                !e.sets("MakeFlags")
                    && !e.sets("RunCmd")
                    && !e.sets("PassExpr")
                    && !e.sets("FailExpr")
            })
            .map(|e| e.name.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEST_PARAMS: &str = r#"
TEST_INOUT=
TEST_PARAMS=                    					\
   testam_args="$(TEST_INOUT)";   					\
   testcore1_args="1000";       					\
   testmisc_nodes="1";							\
   testenv_args='GASNet is \"Global Address Space Networking\"';	\
   testenv_env='GASNET_DUMMY="GASNet dummy value"'			\
   testvisperf_args="$(TEST_INOUT) -maxdata 131072 -maxcontig 512 10"; 	\
   testinternal_env="PMI_MAX_KVS_ENTRIES=$${XTASK_SURELY_UNSET_VAR:-1000000}";\
   $(CONDUIT_TESTPARAMS) dummy=1 ; 					\
   $(MANUAL_TESTPARAMS) dummy=1 ;
"#;

    #[test]
    fn test_params_as_run_tests_reads_them() {
        let vars = mak::parse(TEST_PARAMS);
        let params = parse_test_params(&vars.get("TEST_PARAMS")).unwrap();
        assert_eq!(params["testam"].args, Some(vec![]));
        assert_eq!(params["testcore1"].args, Some(vec!["1000".to_string()]));
        assert_eq!(params["testmisc"].nodes, Some(1));
        assert_eq!(
            params["testenv"].args.as_deref().unwrap(),
            ["GASNet", "is", "Global Address Space Networking"]
        );
        assert_eq!(
            params["testenv"].env.as_deref().unwrap(),
            [("GASNET_DUMMY".to_string(), "GASNet dummy value".to_string())]
        );
        assert_eq!(
            params["testvisperf"].args.as_deref().unwrap(),
            ["-maxdata", "131072", "-maxcontig", "512", "10"]
        );
        assert_eq!(
            params["testinternal"].env.as_deref().unwrap(),
            [("PMI_MAX_KVS_ENTRIES".to_string(), "1000000".to_string())]
        );
        assert!(!params.contains_key("dummy"));
    }

    #[test]
    fn limits_and_counts() {
        let d = Duration::from_secs(60);
        assert_eq!(
            time_limit("1.5 * $DEFAULT$", d),
            Ok(Duration::from_secs(90))
        );
        assert_eq!(time_limit("$DEFAULT$", d), Ok(d));
        assert_eq!(time_limit("300", d), Ok(Duration::from_secs(300)));
        assert_eq!(time_limit("0", d), Ok(Duration::ZERO));
        assert!(time_limit("soon", d).is_err());
        assert_eq!(dynamic_threads("1,$DEFAULT$"), Ok(Ranks::Any));
        assert_eq!(dynamic_threads("1"), Ok(Ranks::Only(vec![1])));
        assert_eq!(dynamic_threads("2, 9"), Ok(Ranks::Only(vec![2, 9])));
        assert!(dynamic_threads("many").is_err());
        assert!(Ranks::Only(vec![1]).allows(1) && !Ranks::Only(vec![1]).allows(2));
    }

    fn suite() -> Suite {
        let vars = mak::parse(TEST_PARAMS);
        Suite {
            seq: vec![
                "testam".into(),
                "testenv".into(),
                "testexit".into(),
                "testcxx".into(),
            ],
            err: vec!["testexit".into()],
            params: parse_test_params(&vars.get("TEST_PARAMS")).unwrap(),
            harness: harness::parse(
                "BEGIN_DEFAULT_CONFIG\nAppArgs:\nTimeLimit: 1.5 * $DEFAULT$\nEND_DEFAULT_CONFIG\n\
                 TestName: testam-seq\nAppArgs: -sync-req\nDynamicThreads: 1,$DEFAULT$\n\
                 TestName: testam_async-seq\nAppArgs: -async-req\n\
                 TestName: testam_wextra-seq\nMakeFlags: MANUAL_CFLAGS=-Wextra\n\
                 TestName: testmisc-seq\nDynamicThreads: 1\n\
                 TestName: testimm-seq\nAppArgs: network_udp ; 5000\n\
                 TestName: testenv-seq\nAppEnv: X=1\n\
                 TestName: testexit-seq\nTimeLimit: 0\n\
                 TestName: testcxx-seq\nTimeLimit: 0\nRequireFeature: gasnet_has_udp\n\
                 TestName: testvis_pack-seq\nProhibitFeature: network_smp\n",
            ),
            ..Suite::default()
        }
    }

    #[test]
    fn harness_wins_and_test_params_fill_in() {
        let s = suite();
        let smp = Features::new(["network_smp", "gasnet_has_udp"], 2);
        let udp = Features::new(["network_udp", "gasnet_has_udp"], 2);
        let am = s.run_spec("testam", "testam-seq", &smp).unwrap();
        assert_eq!(am.args, ["-sync-req"]);
        assert_eq!(am.ranks, Ranks::Any);
        assert_eq!(am.limit, Some(Duration::from_secs(90)));
        assert_eq!(am.excluded, None);
        // harness.conf sets AppEnv; TEST_PARAMS gives the args.
        let env = s.run_spec("testenv", "testenv-seq", &smp).unwrap();
        assert_eq!(
            env.args,
            ["GASNet", "is", "Global Address Space Networking"]
        );
        assert_eq!(env.env, [("X".to_string(), "1".to_string())]);
        // A condition that does not hold leaves the field to TEST_PARAMS.
        assert_eq!(
            s.run_spec("testimm", "testimm-seq", &udp).unwrap().args,
            ["5000"]
        );
        assert!(s
            .run_spec("testimm", "testimm-seq", &smp)
            .unwrap()
            .args
            .is_empty());
        // Counts: harness.conf's DynamicThreads, else TEST_PARAMS' nodes.
        let misc = s.run_spec("testmisc", "testmisc-seq", &smp).unwrap();
        assert_eq!(misc.ranks, Ranks::Only(vec![1]));
        // Not run anywhere by the reference: built only.
        assert_eq!(
            s.run_spec("testexit", "testexit-seq", &smp).unwrap().limit,
            None
        );
        // Compile-only in the harness, but run-tests runs it.
        let cxx = s.run_spec("testcxx", "testcxx-seq", &smp).unwrap();
        assert_eq!(cxx.limit, Some(Duration::from_secs(90)));
        let no_udp = Features::new(["network_smp"], 2);
        assert!(s
            .run_spec("testcxx", "testcxx-seq", &no_udp)
            .unwrap()
            .excluded
            .is_some());
        // A test harness.conf does not know: TEST_PARAMS alone.
        let core1 = s.run_spec("testcore1", "testcore1-seq", &smp).unwrap();
        assert_eq!(core1.args, ["1000"]);
        assert_eq!(core1.limit, Some(Duration::from_secs(90)));
        // Variants: their own arguments only, exclusions per conduit.
        let async_ = s.run_spec("testam", "testam_async-seq", &smp).unwrap();
        assert_eq!(async_.args, ["-async-req"]);
        assert!(s
            .run_spec("testvis", "testvis_pack-seq", &smp)
            .unwrap()
            .excluded
            .is_some());
        assert!(s
            .run_spec("testvis", "testvis_pack-seq", &udp)
            .unwrap()
            .excluded
            .is_none());
        assert_eq!(s.variants("testam", "seq"), ["testam_async-seq"]);
        assert!(s.variants("testam", "par").is_empty());
    }

    /// The reference's own files, when the shared tree is beside the
    /// workspace (as in CI): every list and parameter reads, and the
    /// values match what the files say.
    #[test]
    fn the_reference_suite_reads() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/gasnet-ex-2025.8.0");
        if !dir.join("tests/Makefile.in").is_file() {
            eprintln!("skipped: no {}", dir.display());
            return;
        }
        let s = read(&dir);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        for t in [
            "testgasnet",
            "testam",
            "testprogthr",
            "testmpi",
            "testcxx",
            "testhello",
        ] {
            assert!(s.seq.iter().any(|x| x == t), "{t} in {:?}", s.seq);
        }
        assert_eq!(s.par, ["testthreads", "testcontend", "testlockcontend"]);
        assert!(s.is_cxx("testtoolscxx") && s.is_cxx("testlegacycxx") && !s.is_cxx("testam"));
        assert_eq!(s.nongasnet, ["testtools", "testtoolscxx"]);
        assert_eq!(s.mpi, ["testmpi"]);
        assert!(s.err.iter().any(|t| t == "testexit"));
        let amx = format!("-I{}/other/amx", dir.display());
        assert_eq!(s.extras["testgasnet"].incs, [amx]);
        assert_eq!(s.extras["testlogGP"].objs, ["delay.o"]);
        assert_eq!(s.extras["testprogthr"].libs, ["-lpthread"]);
        let smp2 = Features::new(["network_smp", "gasnet", "gasnet_has_udp"], 2);
        let udp2 = Features::new(["network_udp", "gasnet", "gasnet_has_udp"], 2);
        let spec = |t: &str, f: &Features| s.run_spec(t, &format!("{t}-seq"), f).unwrap();
        assert_eq!(
            spec("testenv", &smp2).args,
            ["GASNet", "is", "Global Address Space Networking"]
        );
        assert_eq!(spec("testenv", &smp2).env[0].0, "GASNET_DUMMY");
        assert_eq!(spec("testlarge", &smp2).args, ["100", "2097152"]);
        assert_eq!(spec("testimm", &udp2).args, ["5000"]);
        assert_eq!(spec("testacc", &smp2).args, ["1000000"]);
        assert_eq!(spec("testacc", &udp2).args, ["50000"]);
        assert_eq!(spec("testmisc", &smp2).ranks, Ranks::Only(vec![1]));
        assert_eq!(spec("testtools", &smp2).ranks, Ranks::Only(vec![1]));
        assert_eq!(spec("testexit", &smp2).limit, None);
        assert_eq!(spec("testmpi", &smp2).limit, None);
        assert!(spec("testreadonly", &smp2).limit.is_some());
        assert_eq!(spec("testnbr", &smp2).limit, Some(Duration::from_secs(180)));
        let threads = s.run_spec("testthreads", "testthreads-par", &smp2).unwrap();
        assert_eq!(threads.args, ["2"]);
        assert_eq!(threads.limit, Some(Duration::from_secs(120)));
        assert!(s
            .variants("testam", "seq")
            .contains(&"testam_async-seq".to_string()));
        // Every condition and value of the keys used reads, on both conduits
        // and any count.
        for entry in &s.harness.entries {
            for f in [&smp2, &udp2, &Features::new(["network_smp"], 9)] {
                for key in ["AppArgs", "AppEnv", "DynamicThreads", "TimeLimit"] {
                    entry.values(key, f).unwrap();
                }
                entry.all_true("RequireFeature", f).unwrap();
                entry.all_true("ProhibitFeature", f).unwrap();
                for v in entry.values("TimeLimit", f).unwrap() {
                    time_limit(v, DEFAULT_TIME_LIMIT).unwrap();
                }
                for v in entry.values("DynamicThreads", f).unwrap() {
                    dynamic_threads(v).unwrap();
                }
                if let Some((base, _, _)) = harness::split_name(&entry.name) {
                    s.run_spec(base, &entry.name, f)
                        .unwrap_or_else(|e| panic!("{}: {e}", entry.name));
                }
            }
        }
    }
}
