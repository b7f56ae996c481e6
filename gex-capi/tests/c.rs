//! The C interface from C: the C programs of `tests/c/` compiled with the
//! system C compiler against `libgex_capi.a` and the headers, run under the
//! launcher on 1 to 4 ranks over smp and udp (`GEX_UDP_BYPASS=0`); header
//! hygiene (C99 and C++17 with warnings as errors); the exported symbols;
//! the layout of the public structs against the compiler's; a build through
//! the pkg-config files.
//!
//! Jobs run one at a time under the same lock file as gex-testsuite's
//! cluster tests (the machines have 2 cores).
//!
//!
//! The programs: `test_ex` (AMs of every category with 0 to 16 arguments,
//! token info, RMA of every form, events and NBI, collectives, split and
//! created teams, the inline route against the library call at every length
//! 0 to 40 and the segment's edges) and `test_g1` (a GASNet-1 program) on
//! smp with 1 to 4 ranks and udp with 2 to 4; `test_ratomic`, `test_vis`,
//! `test_mk`, `test_coll1` and `test_coll_g1` (every `gasnet_coll_*` call,
//! every sync mode, LOCAL and SINGLE, the team barrier's matches and
//! mismatches; with an argument, one erroneous call that must end the job
//! naming it) on smp, forced AMs and udp; `rma_errors` (erroneous transfers
//! reach the library, which ends the job naming them); `am_tokens` (the
//! token record and its fatal misuses); `exit_flush` (late output kept,
//! `gasnet_exit(3)` during a barrier); `test_tools`; a C++17 program
//! including every header; every header alone; the README's program built
//! through pkg-config; and the three C benchmarks smoke-run on 1 and 2
//! ranks.

use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use gex_run::{run, JobOutcome, JobSpec, Output};

/// Guard against a hung job; a healthy one takes seconds.
const TIMEOUT: Duration = Duration::from_secs(240);

/// The libraries a program linking `libgex_capi.a` needs
/// (`--print native-static-libs`).
pub const NATIVE_LIBS: &[&str] = &["-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl"];

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn include_dir() -> PathBuf {
    crate_dir().join("include")
}

/// The directory of the library this test was built with: `cargo test`
/// builds it next to this test's executable (`target/<profile>/deps`) and
/// does not copy it up to `target/<profile>`, where a `cargo build` would
/// leave one that may be older.
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe
        .parent()
        .expect("test executable in target/<profile>/deps");
    let a = deps.join("libgex_capi.a");
    assert!(
        a.exists() && deps.join("libgex_capi.so").exists(),
        "{} is missing: cargo builds it with the gex-capi library",
        a.display()
    );
    deps.to_path_buf()
}

fn out_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gex-capi-c");
    std::fs::create_dir_all(&d).expect("create the build directory");
    d
}

/// Runs `cmd`, panicking with its output if it fails.
fn checked(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({})\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether `tool` runs; a missing one fails under CI (`CI` set), where
/// `.ci/run` installs it, and skips the test elsewhere with a message.
fn have(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "{tool} is not installed (.ci/run installs it)"
        );
        eprintln!("skipped: {tool} is not installed");
    }
    ok
}

/// Compiles and links the C program `tests/c/NAME.c` against the static
/// library as `TAG` (one executable per test: tests run in parallel);
/// returns the executable.
fn build_c(name: &str, tag: &str) -> PathBuf {
    let exe = out_dir().join(tag);
    let mut cmd = Command::new("cc");
    cmd.args(["-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(include_dir())
        .arg(crate_dir().join("tests/c").join(format!("{name}.c")))
        .arg(lib_dir().join("libgex_capi.a"))
        .args(NATIVE_LIBS)
        .arg("-o")
        .arg(&exe);
    checked(&mut cmd);
    exe
}

/// Holds the job lock until dropped.
struct JobLock(#[allow(dead_code)] File);

fn job_lock() -> JobLock {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gex-testsuite-cluster.lock");
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("cannot open the job lock {}: {e}", path.display()));
    loop {
        // SAFETY: flock on a descriptor this function owns; no memory is
        // involved.
        let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        if r == 0 {
            return JobLock(file);
        }
        let e = std::io::Error::last_os_error();
        assert_eq!(e.kind(), std::io::ErrorKind::Interrupted, "flock: {e}");
    }
}

fn launch(conduit: &str, program: &Path, ranks: u32, env: &[(&str, &str)]) -> JobOutcome {
    launch_args(conduit, program, ranks, env, &[])
}

/// [`launch`] with arguments for the program.
fn launch_args(
    conduit: &str,
    program: &Path,
    ranks: u32,
    env: &[(&str, &str)],
    args: &[&str],
) -> JobOutcome {
    let _lock = job_lock();
    let mut spec = JobSpec::new(ranks, program);
    spec.args = args.iter().map(|a| a.to_string()).collect();
    spec.conduit = conduit.to_string();
    spec.env = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    spec.timeout = Some(TIMEOUT);
    spec.output = Output::Capture;
    spec.label = true;
    let out = run(&spec).unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
    eprintln!(
        "{} on {conduit} with {ranks} ranks: code {} in {:.2?} ({})",
        program.display(),
        out.code,
        out.elapsed,
        out.reason
    );
    out
}

fn tail(s: &str) -> &str {
    let mut start = s.len().saturating_sub(4096);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// `program` passes on every rank count in `sizes`: exit code 0 and every
/// rank's line `NAME: rank R of N: all checks passed`.
fn passes(conduit: &str, program: &Path, name: &str, sizes: &[u32], env: &[(&str, &str)]) {
    for &n in sizes {
        let out = launch(conduit, program, n, env);
        let report = || {
            format!(
                "{name} on {conduit} -n {n}: code {}, timed out {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
                out.code,
                out.timed_out,
                tail(&out.stdout),
                tail(&out.stderr)
            )
        };
        assert!(!out.timed_out && out.code == 0, "{}", report());
        for r in 0..n {
            let line = format!("{name}: rank {r} of {n}: all checks passed");
            assert!(out.stdout.contains(&line), "no {line:?}\n{}", report());
        }
    }
}

const UDP: &[(&str, &str)] = &[("GEX_UDP_BYPASS", "0")];

/// `tests/c/NAME.c`, built as `NAME-CONDUIT`, passes on 1 to 4 ranks of
/// smp, or on 2 to 4 of udp.
fn passes_on(name: &str, conduit: &str) {
    let exe = build_c(name, &format!("{name}-{conduit}"));
    let (sizes, env): (&[u32], _) = match conduit {
        "smp" => (&[1, 2, 3, 4], &[][..]),
        "udp" => (&[2, 3, 4], UDP),
        _ => panic!("no conduit {conduit}"),
    };
    passes(conduit, &exe, name, sizes, env);
}

/// `tests/c/NAME.c` passes on 1 to 4 ranks of smp, on 3 with `force` set
/// to 1 (Active Messages in place of direct access), and on 2 to 4 of udp.
fn passes_smp_am_and_udp(name: &str, force: &str) {
    let exe = build_c(name, name);
    passes("smp", &exe, name, &[1, 2, 3, 4], &[]);
    passes("smp", &exe, name, &[3], &[(force, "1")]);
    passes("udp", &exe, name, &[2, 3, 4], UDP);
}

/// `exe CASE` on `ranks` ranks of `conduit` (udp without the bypass) ends
/// the job as an erroneous call must: a failing code, `done` on stdout
/// (the valid part ran first) when given, no "was not refused", and the
/// library's `msg` on stderr.
fn refused(conduit: &str, exe: &Path, ranks: u32, case: &str, done: Option<&str>, msg: &str) {
    let _lock = job_lock();
    let mut spec = JobSpec::new(ranks, exe);
    spec.conduit = conduit.to_string();
    if conduit == "udp" {
        spec.env = vec![("GEX_UDP_BYPASS".into(), "0".into())];
    }
    spec.args = vec![case.into()];
    spec.timeout = Some(TIMEOUT);
    spec.output = Output::Capture;
    let out = run(&spec).unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
    let report = format!(
        "{case} on {conduit} -n {ranks}: code {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.code,
        tail(&out.stdout),
        tail(&out.stderr)
    );
    assert!(!out.timed_out && out.code != 0, "{report}");
    if let Some(done) = done {
        assert!(out.stdout.contains(done), "{report}");
    }
    assert!(!out.stdout.contains("was not refused"), "{report}");
    assert!(out.stderr.contains(msg), "no {msg:?}: {report}");
}

#[test]
fn test_ex_smp_1_to_4_ranks() {
    passes_on("test_ex", "smp");
}

#[test]
fn test_ex_udp_2_to_4_ranks() {
    passes_on("test_ex", "udp");
}

/// The names of the 2025.8.0 release's interface beyond spec v0.17 and
/// the GASNet-1 names `gasnetex.h` carries (`tests/c/test_compat.c`):
/// versions, error names, AMs without `[M]`, Cancel and `_v2` Commits,
/// the progress-thread query, `gasnet_barrier` and `_result`, segment and
/// node queries, `gasnet_memset_nbi`, and the wait mode's effect on the
/// count of `sched_yield` calls.
#[test]
fn test_compat_smp_1_to_4_ranks() {
    passes_on("test_compat", "smp");
}

#[test]
fn test_compat_udp_2_to_4_ranks() {
    passes_on("test_compat", "udp");
}

/// How `gasnet_exit` ends a job, as the reference's does (issue #29): the
/// ranks other than 0 print their last words without a newline and exit
/// right after a barrier, rank 0 20 ms later after printing a line: every
/// rank's output arrives (ranks that exit too finish on their own, C stdio
/// flushed) and the job's code is 0, with nothing reported. Then rank 1
/// exits with 3 while the others wait in a barrier it never joins: they are
/// ended within the exit grace, the code is 3, and the launcher names rank
/// 1 and the code. On 2 and 4 ranks, smp and udp (without the bypass).
#[test]
fn gasnet_exit_keeps_every_ranks_output_and_names_a_failing_code() {
    let exe = build_c("exit_flush", "exit_flush");
    for (conduit, env) in [("smp", &[][..]), ("udp", UDP)] {
        for n in [2, 4] {
            let out = launch_args(conduit, &exe, n, env, &["late"]);
            let report = format!(
                "late on {conduit} -n {n}: code {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
                out.code,
                tail(&out.stdout),
                tail(&out.stderr)
            );
            assert!(!out.timed_out && out.code == 0, "{report}");
            let line =
                format!("[0] exit_flush: rank 0 of {n}: the last line, after the others' exits");
            assert!(
                out.stdout.lines().any(|l| l == line),
                "no {line:?}: {report}"
            );
            for r in 1..n {
                let line =
                    format!("[{r}] exit_flush: rank {r} of {n}: last words without a newline");
                assert!(
                    out.stdout.lines().any(|l| l == line),
                    "no {line:?}: {report}"
                );
            }
            assert!(!out.stderr.contains("gex-run:"), "{report}");
            assert!(out.elapsed < TIMEOUT, "{report}");
        }
        let out = launch_args(conduit, &exe, 3, env, &["code"]);
        let report = format!(
            "code on {conduit}: code {}, {:.2?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            out.code,
            out.elapsed,
            tail(&out.stdout),
            tail(&out.stderr)
        );
        assert!(!out.timed_out && out.code == 3, "{report}");
        assert!(
            out.stdout
                .contains("[1] exit_flush: rank 1 of 3: calling gasnet_exit(3)"),
            "{report}"
        );
        assert!(!out.stdout.contains("ERROR"), "{report}");
        assert!(
            out.stderr
                .contains("gex-run: rank 1 called exit with code 3"),
            "{report}"
        );
        // Ended by the exit grace (2 s, and a few seconds for start-up on a
        // busy machine), not by the job's timeout.
        assert!(out.elapsed < Duration::from_secs(25), "{report}");
    }
}

/// Erroneous puts and gets (blocking, NBI, NB), which the header's inline
/// direct route hands to the library: each case ends the job with the
/// library's message naming the call, after valid puts and gets of every
/// inline form by the same route (data checked); on 2 ranks of smp
/// (direct route to rank 0) and udp.
#[test]
fn inline_rma_hands_errors_to_the_library() {
    let exe = build_c("rma_errors", "rma_errors");
    let cases = [
        ("handler", "gex_RMA_PutBlocking is not allowed"),
        ("prepare", "gex_RMA_GetBlocking is not allowed"),
        ("bounds", "gex_RMA_PutBlocking"),
        ("before", "gex_RMA_GetBlocking"),
        ("rank", "rank 2 is not in the team (size 2)"),
        (
            "flags",
            "gex_RMA_PutBlocking: unknown flag bits 0x4000000000000000",
        ),
        (
            "valsize",
            "gex_RMA_PutBlockingVal: nbytes must be 1 to 8, got 9",
        ),
        ("nbi", "gex_RMA_PutNBI"),
        ("nb", "gex_RMA_GetNB"),
    ];
    let done = Some("rma_errors: valid transfers done");
    for conduit in ["smp", "udp"] {
        for (case, msg) in cases {
            refused(conduit, &exe, 2, case, done, msg);
        }
    }
}

/// The token a C handler gets: Short, Medium and Long requests with three
/// arguments to a handler registered for requests and replies, which
/// checks every `gex_Token_Info` field, the arguments and the payload,
/// queries the reply limit and replies; the reply's token is checked the
/// same way (on 1 and 3 ranks, smp and udp). Then each misuse of a token
/// (a second reply, a reply from a reply handler, a reply-limit query in a
/// reply handler) ends the job with the library's message.
#[test]
fn c_tokens_valid_and_misused() {
    let exe = build_c("am_tokens", "am_tokens");
    for (conduit, ranks) in [("smp", 1), ("smp", 3), ("udp", 3)] {
        let _lock = job_lock();
        let mut spec = JobSpec::new(ranks, &exe);
        spec.conduit = conduit.to_string();
        if conduit == "udp" {
            spec.env = vec![("GEX_UDP_BYPASS".into(), "0".into())];
        }
        spec.timeout = Some(TIMEOUT);
        spec.output = Output::Capture;
        let out = run(&spec).expect("start am_tokens");
        assert!(
            !out.timed_out && out.code == 0 && out.stdout.contains("am_tokens: valid tokens done"),
            "{conduit} on {ranks}: code {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            out.code,
            tail(&out.stdout),
            tail(&out.stderr)
        );
    }
    let cases = [
        (
            "twice",
            "gex_AM_ReplyShort: this request handler has already replied",
        ),
        (
            "fromreply",
            "gex_AM_ReplyShort: called from a reply handler",
        ),
        (
            "repmax",
            "gex_Token_MaxReplyMedium: only in a request handler",
        ),
    ];
    let done = Some("am_tokens: valid tokens done");
    for (case, msg) in cases {
        refused("smp", &exe, 3, case, done, msg);
    }
}

/// Every header compiles alone in C99 and C++17 with warnings as errors.
#[test]
fn headers_compile_alone_in_c99_and_cxx17() {
    let dir = out_dir();
    for entry in std::fs::read_dir(include_dir()).expect("include/") {
        let h = entry.expect("entry").file_name();
        let h = h.to_string_lossy();
        let c = dir.join(format!("alone-{h}.c"));
        std::fs::write(
            &c,
            format!("#include <{h}>\nint main(void) {{ return 0; }}\n"),
        )
        .expect("write");
        checked(
            Command::new("cc")
                .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-c", "-I"])
                .arg(include_dir())
                .arg(&c)
                .arg("-o")
                .arg(dir.join(format!("alone-{h}.o"))),
        );
        if have("c++") {
            let cc = dir.join(format!("alone-{h}.cc"));
            std::fs::write(&cc, format!("#include <{h}>\nint main() {{ return 0; }}\n"))
                .expect("write");
            checked(
                Command::new("c++")
                    .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-c", "-I"])
                    .arg(include_dir())
                    .arg(&cc)
                    .arg("-o")
                    .arg(dir.join(format!("alone-{h}.cc.o"))),
            );
        }
    }
}

/// The functions the headers declare (`extern T name(`), by header.
fn declared_functions() -> Vec<(String, String)> {
    let mut v = Vec::new();
    for entry in std::fs::read_dir(include_dir()).expect("include/") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("read header");
        let h = path.file_name().unwrap().to_string_lossy().into_owned();
        for stmt in text.split(';') {
            let s = stmt.trim_start();
            let Some(rest) = s.strip_prefix("extern ") else {
                continue;
            };
            if rest.starts_with('"') {
                continue; // extern "C" {
            }
            let Some(open) = rest.find('(') else {
                continue;
            };
            let name = rest[..open]
                .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("");
            if !name.is_empty() {
                v.push((h.clone(), name.to_string()));
            }
        }
    }
    assert!(v.len() > 90, "found only {} declarations", v.len());
    v
}

/// The shared library exports exactly API names (prefixes `gex_`, `_gex_`,
/// `gasnet_`, `_gasnet_`, `gasnett_`, and `AMUDP_SPMDSetProc`), and every function a header
/// declares.
#[test]
fn exported_symbols_are_the_apis() {
    if !have("nm") {
        return;
    }
    let so = lib_dir().join("libgex_capi.so");
    let out = checked(Command::new("nm").args(["-D", "--defined-only"]).arg(&so));
    let syms: Vec<&str> = out
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_addr, kind, name) = (f.next()?, f.next()?, f.next()?);
            kind.chars().all(|c| c.is_ascii_uppercase()).then_some(name)
        })
        .collect();
    assert!(!syms.is_empty(), "no symbols in {}", so.display());
    let bad: Vec<&&str> = syms
        .iter()
        .filter(|s| {
            !["gex_", "_gex_", "gasnet_", "_gasnet_", "gasnett_"]
                .iter()
                .any(|p| s.starts_with(p))
                // The reference udp conduit's one call its clients use
                // (testmpi), declared by gasnetex.h for udp builds.
                && **s != "AMUDP_SPMDSetProc"
        })
        .collect();
    assert!(bad.is_empty(), "exported symbols outside the API: {bad:?}");
    // The only exported data: the table of gasnetex.h's inline RMA route
    // (reserved, documented there).
    let data: Vec<&str> = out
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_addr, kind, name) = (f.next()?, f.next()?, f.next()?);
            matches!(kind, "B" | "D" | "R" | "V").then_some(name)
        })
        .collect();
    assert_eq!(data, ["_gex_rma_fast"], "exported data symbols");
    let missing: Vec<String> = declared_functions()
        .into_iter()
        .filter(|(_, f)| !syms.contains(&f.as_str()))
        .map(|(h, f)| format!("{h}: {f}"))
        .collect();
    assert!(missing.is_empty(), "declared but not exported: {missing:?}");
}

/// The layout of every public struct, as the C compiler sees it through
/// the headers, equals the Rust side's.
#[test]
fn abi_layout_matches_the_headers() {
    use gex_capi::*;
    use std::mem::{align_of, offset_of, size_of};
    let rust: Vec<(&str, usize)> = vec![
        ("sizeof(gex_AM_Entry_t)", size_of::<gex_AM_Entry_t>()),
        ("_Alignof(gex_AM_Entry_t)", align_of::<gex_AM_Entry_t>()),
        (
            "offsetof(gex_AM_Entry_t, gex_index)",
            offset_of!(gex_AM_Entry_t, gex_index),
        ),
        (
            "offsetof(gex_AM_Entry_t, gex_fnptr)",
            offset_of!(gex_AM_Entry_t, gex_fnptr),
        ),
        (
            "offsetof(gex_AM_Entry_t, gex_flags)",
            offset_of!(gex_AM_Entry_t, gex_flags),
        ),
        (
            "offsetof(gex_AM_Entry_t, gex_nargs)",
            offset_of!(gex_AM_Entry_t, gex_nargs),
        ),
        (
            "offsetof(gex_AM_Entry_t, gex_cdata)",
            offset_of!(gex_AM_Entry_t, gex_cdata),
        ),
        (
            "offsetof(gex_AM_Entry_t, gex_name)",
            offset_of!(gex_AM_Entry_t, gex_name),
        ),
        ("sizeof(gex_Token_Info_t)", size_of::<gex_Token_Info_t>()),
        (
            "offsetof(gex_Token_Info_t, gex_srcrank)",
            offset_of!(gex_Token_Info_t, gex_srcrank),
        ),
        (
            "offsetof(gex_Token_Info_t, gex_ep)",
            offset_of!(gex_Token_Info_t, gex_ep),
        ),
        (
            "offsetof(gex_Token_Info_t, gex_entry)",
            offset_of!(gex_Token_Info_t, gex_entry),
        ),
        (
            "offsetof(gex_Token_Info_t, gex_is_req)",
            offset_of!(gex_Token_Info_t, gex_is_req),
        ),
        (
            "offsetof(gex_Token_Info_t, gex_is_long)",
            offset_of!(gex_Token_Info_t, gex_is_long),
        ),
        ("sizeof(gex_Memvec_t)", size_of::<gex_Memvec_t>()),
        (
            "offsetof(gex_Memvec_t, gex_addr)",
            offset_of!(gex_Memvec_t, gex_addr),
        ),
        (
            "offsetof(gex_Memvec_t, gex_len)",
            offset_of!(gex_Memvec_t, gex_len),
        ),
        ("sizeof(gex_EP_Location_t)", size_of::<gex_EP_Location_t>()),
        (
            "offsetof(gex_EP_Location_t, gex_rank)",
            offset_of!(gex_EP_Location_t, gex_rank),
        ),
        (
            "offsetof(gex_EP_Location_t, gex_ep_index)",
            offset_of!(gex_EP_Location_t, gex_ep_index),
        ),
        ("sizeof(gex_RankInfo_t)", size_of::<gex_RankInfo_t>()),
        (
            "offsetof(gex_RankInfo_t, gex_jobrank)",
            offset_of!(gex_RankInfo_t, gex_jobrank),
        ),
        ("sizeof(gex_Flags_t)", size_of::<gex_Flags_t>()),
        ("sizeof(gex_Rank_t)", size_of::<gex_Rank_t>()),
        ("sizeof(gex_AM_Arg_t)", size_of::<gex_AM_Arg_t>()),
        ("sizeof(gex_RMA_Value_t)", size_of::<gex_RMA_Value_t>()),
        ("sizeof(gex_OP_t)", size_of::<gex_OP_t>()),
        ("sizeof(gex_DT_t)", size_of::<gex_DT_t>()),
        ("sizeof(gex_EC_t)", size_of::<gex_EC_t>()),
        ("sizeof(gex_TI_t)", size_of::<gex_TI_t>()),
        (
            "sizeof(gasnett_tick_t)",
            size_of::<gex_capi::tools::gasnett_tick_t>(),
        ),
        // Flag values: the bits of gex::Flags.
        (
            "(size_t)(GEX_FLAG_IMMEDIATE)",
            gex::Flags::IMMEDIATE.bits() as usize,
        ),
        (
            "(size_t)(GEX_FLAG_PEER_SEG_OFFSET)",
            gex::Flags::PEER_SEG_OFFSET.bits() as usize,
        ),
        (
            "(size_t)(GEX_FLAG_AM_MEDLONG)",
            gex::Flags::AM_MEDLONG.bits() as usize,
        ),
        (
            "(size_t)(GEX_FLAG_AM_REQREP)",
            gex::Flags::AM_REQREP.bits() as usize,
        ),
        (
            "(size_t)(GEX_FLAG_TM_NO_SCRATCH)",
            gex::Flags::TM_NO_SCRATCH.bits() as usize,
        ),
        (
            "(size_t)(GEX_FLAG_COLL_SRC_IN_SEGMENT)",
            gex::Flags::COLL_SRC_IN_SEGMENT.bits() as usize,
        ),
        (
            "(size_t)(GEX_FLAG_HINT_ACCEL_ALL)",
            gex::Flags::HINT_ACCEL_ALL.bits() as usize,
        ),
        ("(size_t)(GEX_EC_ALL)", gex::Ec::ALL.bits() as usize),
        ("sizeof(_gex_fastseg_t)", size_of::<fast::FastSeg>()),
        (
            "offsetof(_gex_fastseg_t, owner_base)",
            offset_of!(fast::FastSeg, owner_base),
        ),
        (
            "offsetof(_gex_fastseg_t, size)",
            offset_of!(fast::FastSeg, size),
        ),
        (
            "offsetof(_gex_fastseg_t, local_base)",
            offset_of!(fast::FastSeg, local_base),
        ),
        ("sizeof(_gex_rma_fast_t)", size_of::<fast::RmaFast>()),
        (
            "offsetof(_gex_rma_fast_t, tm)",
            offset_of!(fast::RmaFast, tm),
        ),
        (
            "offsetof(_gex_rma_fast_t, g1_tm)",
            offset_of!(fast::RmaFast, g1_tm),
        ),
        (
            "offsetof(_gex_rma_fast_t, table)",
            offset_of!(fast::RmaFast, fast.table),
        ),
        (
            "offsetof(_gex_rma_fast_t, table_bytes)",
            offset_of!(fast::RmaFast, fast.table_bytes),
        ),
        (
            "(size_t)(_GEX_RMA_FAST_FLAGS)",
            gex::rma::FAST_FLAGS.bits() as usize,
        ),
        ("(size_t)(GEX_TI_ALL)", gex::Ti::ALL.bits() as usize),
        (
            "(size_t)(GEX_EP_CAPABILITY_ALL)",
            gex::EpCapabilities::ALL.bits() as usize,
        ),
        ("(size_t)(GEX_DT_DBL)", gex::Dt::Dbl as usize),
        ("(size_t)(GEX_DT_USER)", gex::Dt::User as usize),
        ("(size_t)(GEX_OP_FCAS)", gex::Op::Fcas as usize),
        ("(size_t)(GEX_OP_USER_NC)", gex::Op::UserNc as usize),
        (
            "(size_t)(GEX_VIS_MAX_PEERCOMPLETION)",
            gex::vis::MAX_PEERCOMPLETION,
        ),
        ("(size_t)(GEX_AM_INDEX_BASE)", gex::AM_INDEX_BASE as usize),
        ("(size_t)(GASNET_MAXEPS)", gex::MAX_EPS),
        ("(size_t)(GEX_RANK_INVALID)", gex::RANK_INVALID as usize),
        (
            "(size_t)(GASNET_ERR_NOT_READY)",
            gex::ErrorKind::NotReady.code() as usize,
        ),
        (
            "(size_t)(GASNET_ERR_BAD_ARG)",
            gex::ErrorKind::BadArg.code() as usize,
        ),
        (
            "(size_t)(GASNET_ERR_RESOURCE)",
            gex::ErrorKind::Resource.code() as usize,
        ),
        (
            "(size_t)(GASNET_ERR_NOT_INIT)",
            gex::ErrorKind::NotInit.code() as usize,
        ),
        (
            "(size_t)(GASNET_ERR_BARRIER_MISMATCH)",
            gex::ErrorKind::BarrierMismatch.code() as usize,
        ),
        (
            "(size_t)(GASNET_BARRIERFLAG_ANONYMOUS)",
            gex::coll::BARRIERFLAG_ANONYMOUS as usize,
        ),
        (
            "(size_t)(GASNET_BARRIERFLAG_MISMATCH)",
            gex::coll::BARRIERFLAG_MISMATCH as usize,
        ),
        (
            "(size_t)(GASNET_BARRIERFLAG_UNNAMED)",
            gex::coll::BARRIERFLAG_UNNAMED as usize,
        ),
        (
            "(size_t)(GEX_FLAG_DEFER_THREADS)",
            gex::Flags::DEFER_THREADS.bits() as usize,
        ),
        (
            "(size_t)(GEX_FLAG_USES_GASNET1)",
            gex::Flags::USES_GASNET1.bits() as usize,
        ),
        (
            "(size_t)(GASNET_WAIT_SPIN)",
            gex::system::WaitMode::Spin as usize,
        ),
        (
            "(size_t)(GASNET_WAIT_BLOCK)",
            gex::system::WaitMode::Block as usize,
        ),
        (
            "(size_t)(GASNET_WAIT_SPINBLOCK)",
            gex::system::WaitMode::SpinBlock as usize,
        ),
        // gex's own version is the crate's.
        (
            "(size_t)(GEX_VERSION_MAJOR)",
            env!("CARGO_PKG_VERSION_MAJOR").parse().expect("major"),
        ),
        (
            "(size_t)(GEX_VERSION_MINOR)",
            env!("CARGO_PKG_VERSION_MINOR").parse().expect("minor"),
        ),
        (
            "(size_t)(GEX_VERSION_PATCH)",
            env!("CARGO_PKG_VERSION_PATCH").parse().expect("patch"),
        ),
        (
            "(size_t)(sizeof(GEX_VERSION_STR) - 1)",
            env!("CARGO_PKG_VERSION").len(),
        ),
        (
            "(size_t)(sizeof(gasnet_nodeinfo_t))",
            size_of::<gex_capi::core::gasnet_nodeinfo_t>(),
        ),
        (
            "(size_t)(offsetof(gasnet_nodeinfo_t, offset))",
            offset_of!(gex_capi::core::gasnet_nodeinfo_t, offset),
        ),
        (
            "(size_t)(sizeof(gex_ProgressThreadInfo_t))",
            size_of::<gex_capi::core::gex_ProgressThreadInfo_t>(),
        ),
        (
            "(size_t)(offsetof(gex_ProgressThreadInfo_t, gex_progress_arg))",
            offset_of!(gex_capi::core::gex_ProgressThreadInfo_t, gex_progress_arg),
        ),
        (
            "(size_t)(_GEX_AM_KIND_REQUEST | _GEX_AM_KIND_REPLY << 8 | _GEX_AM_KIND_MEDIUM << 16 | _GEX_AM_KIND_LONG << 24)",
            (gex_capi::npam::KIND_REQUEST
                | gex_capi::npam::KIND_REPLY << 8
                | gex_capi::npam::KIND_MEDIUM << 16
                | gex_capi::npam::KIND_LONG << 24) as usize,
        ),
    ];
    let mut src = String::from(
        "#include <gasnet.h>\n#include <gasnet_ratomic.h>\n#include <gasnet_vis.h>\n#include <gasnet_mk.h>\n#include <gasnet_coll.h>\n#include <gasnet_tools.h>\n#include <stdio.h>\n#include <stddef.h>\nint main(void) {\n",
    );
    for (expr, _) in &rust {
        src.push_str(&format!("    printf(\"%zu\\n\", (size_t)({expr}));\n"));
    }
    src.push_str("    return 0;\n}\n");
    let dir = out_dir();
    let c = dir.join("abi.c");
    std::fs::write(&c, src).expect("write");
    let exe = dir.join("abi");
    checked(
        Command::new("cc")
            .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-I"])
            .arg(include_dir())
            .arg(&c)
            .arg("-o")
            .arg(&exe),
    );
    let out = checked(&mut Command::new(&exe));
    let c_values: Vec<usize> = out.lines().map(|l| l.parse().expect("number")).collect();
    assert_eq!(c_values.len(), rust.len());
    let diffs: Vec<String> = rust
        .iter()
        .zip(&c_values)
        .filter(|((_, r), c)| r != *c)
        .map(|((e, r), c)| format!("{e}: C {c}, Rust {r}"))
        .collect();
    assert!(diffs.is_empty(), "layouts differ: {diffs:?}");
}

/// The GASNet-1 program, both ways of initialising.
#[test]
fn test_g1_smp_1_to_4_ranks() {
    passes_on("test_g1", "smp");
}

#[test]
fn test_g1_init_attach_smp_and_udp() {
    let exe = out_dir().join("test_g1-attach");
    checked(
        Command::new("cc")
            .args([
                "-std=c99",
                "-O1",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-DINIT_ATTACH",
                "-I",
            ])
            .arg(include_dir())
            .arg(crate_dir().join("tests/c/test_g1.c"))
            .arg(lib_dir().join("libgex_capi.a"))
            .args(NATIVE_LIBS)
            .arg("-o")
            .arg(&exe),
    );
    passes("smp", &exe, "test_g1", &[3], &[]);
    passes("udp", &exe, "test_g1", &[2, 3, 4], UDP);
}

/// Remote atomics: direct on smp, through Active Messages, over udp.
#[test]
fn test_ratomic_smp_am_and_udp() {
    passes_smp_am_and_udp("test_ratomic", "GEX_RMA_FORCE_AM");
}

/// VIS: direct on smp, packed Active Messages, over udp (NB gets pending,
/// data scattered at the sync).
#[test]
fn test_vis_smp_am_and_udp() {
    passes_smp_am_and_udp("test_vis", "GEX_VIS_FORCE_AM");
}

/// Created endpoints, kinds and segments: direct on smp, through Active
/// Messages, over udp.
#[test]
fn test_mk_smp_am_and_udp() {
    passes_smp_am_and_udp("test_mk", "GEX_RMA_FORCE_AM");
}

/// A thread that only puts and gets (the header's inline route) runs AM
/// handlers: its loop ends when its own and its predecessor's requests
/// have run (smp, where the route copies directly; and udp).
#[test]
fn blocking_rma_loops_run_handlers() {
    let exe = build_c("rma_polls", "rma_polls");
    passes("smp", &exe, "rma_polls", &[1, 2, 3], &[]);
    passes("udp", &exe, "rma_polls", &[2], UDP);
}

/// gex's internal diagnostics (gasnett_run_diagnostics): every section
/// against the successor rank, on smp and udp, odd rank counts included.
#[test]
fn test_diag_smp_and_udp() {
    let exe = build_c("test_diag", "test_diag");
    passes("smp", &exe, "test_diag", &[1, 2, 3], &[]);
    passes("udp", &exe, "test_diag", &[2, 3], UDP);
}

/// The design notes' collectives, every sync mode, both address modes, the
/// segment hints.
#[test]
fn test_coll1_smp_and_udp() {
    passes_smp_am_and_udp("test_coll1", "GEX_COLL_FORCE_AM");
}

/// The GASNet-1 collectives (`gasnet_coll_*`): every call, blocking, nb
/// and M forms, over the whole job, a reversed team and the parity
/// halves; the team barrier; data checked on every rank.
#[test]
fn test_coll_g1_smp_and_udp() {
    passes_smp_am_and_udp("test_coll_g1", "GEX_COLL_FORCE_AM");
}

/// Erroneous `gasnet_coll_*` calls (every rank makes the same one): each
/// ends the job with the library's message naming the call, on 2 ranks of
/// smp.
#[test]
fn coll_g1_errors_end_the_job() {
    let exe = build_c("test_coll_g1", "test_coll_g1-errors");
    let cases = [
        (
            "root",
            "gasnet_coll_broadcast_nb: srcimage 2 is not an image of the team",
        ),
        ("nulldst", "gasnet_coll_gather_all_nb: dst is NULL"),
        ("overlap", "gasnet_coll_exchange_nb: src and dst overlap"),
        ("flags", "gasnet_coll_scatter_nb: unknown flags 0x100000"),
        ("mlist", "gasnet_coll_broadcastM_nb: dstlist is NULL"),
        ("team", "gasnet_coll_gather_all_nb: the team is NULL"),
        (
            "wait",
            "gasnet_coll_barrier_wait: no gasnet_coll_barrier_notify on this team precedes it",
        ),
        (
            "notify2",
            "gasnet_coll_barrier_notify: called twice on a team",
        ),
        (
            "init",
            "gasnet_coll_init: gex has no GASNet-1 reduce or scan",
        ),
    ];
    for (case, msg) in cases {
        refused("smp", &exe, 2, case, None, msg);
    }
}

#[test]
fn tools_header() {
    let exe = build_c("test_tools", "test_tools");
    let out = checked(&mut Command::new(&exe));
    assert!(out.contains("test_tools: all checks passed"), "{out}");
}

/// The tools library as this test build made it: the newest
/// `libgex_tools-*.a` beside the test (cargo builds gex-tools' static
/// library as a dependency of gex-capi).
fn tools_lib() -> PathBuf {
    let newest = std::fs::read_dir(lib_dir())
        .expect("deps")
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with("libgex_tools-") && n.ends_with(".a")
        })
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok());
    newest
        .expect("cargo builds libgex_tools-*.a with gex-capi's dependencies")
        .path()
}

/// Runs `exe ARG` without a launcher, in an environment without the tools'
/// own settings plus `env`.
fn run_tools(exe: &Path, arg: Option<&str>, env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new(exe);
    cmd.args(arg);
    for k in [
        "GASNET_VERBOSEENV",
        "GEX_RANK",
        "GASNET_BACKTRACE",
        "GASNET_BACKTRACE_TYPE",
        "GASNET_FREEZE_ON_ERROR",
    ] {
        cmd.env_remove(k);
    }
    cmd.envs(env.iter().copied());
    cmd.output().expect("run the tools-only program")
}

/// A tools-only program (gasnet_tools.h without gasnetex.h) links against
/// libgex_tools.a alone and passes its end-to-end checks in both thread
/// models; its failures (fatal errors with and without a position and
/// with the user backtrace hook, unparsable numbers and settings) end it
/// with the messages the tools document; verbose environment reporting
/// prints each setting once, only on rank 0.
#[test]
fn tools_only_program_links_the_tools_library_alone() {
    let mut seq = None;
    for (tag, def) in [
        ("seq", "-DGASNETT_THREAD_SINGLE"),
        ("par", "-DGASNETT_THREAD_SAFE=1"),
    ] {
        let exe = out_dir().join(format!("tools_only_{tag}"));
        checked(
            Command::new("cc")
                .args(["-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", def, "-I"])
                .arg(include_dir())
                .arg(crate_dir().join("tests/c/tools_only.c"))
                .arg(tools_lib())
                .args(NATIVE_LIBS)
                .arg("-o")
                .arg(&exe),
        );
        let out = run_tools(&exe, None, &[]);
        let text = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{tag}: {text}");
        assert!(
            text.contains(&format!("tools_only: all checks passed ({tag})")),
            "{tag}: {text}"
        );
        seq.get_or_insert(exe);
    }
    let exe = seq.expect("built");
    use std::os::unix::process::ExitStatusExt;
    let fails = |arg: &str, env: &[(&str, &str)], want: &[&str], not: &[&str]| {
        let out = run_tools(&exe, Some(arg), env);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.signal(), Some(libc::SIGABRT), "{arg}: {err}");
        for w in want {
            assert!(err.contains(w), "{arg}: no {w:?} in {err}");
        }
        for n in not {
            assert!(!err.contains(n), "{arg}: {n:?} in {err}");
        }
    };
    fails(
        "fatal",
        &[],
        &["FATAL ERROR", "in main() at ", "tools_only.c:", "boom 42"],
        &["user backtrace hook ran"],
    );
    fails(
        "fatal",
        &[
            ("GASNET_BACKTRACE", "1"),
            ("GASNET_BACKTRACE_TYPE", "MYAPP"),
        ],
        &["boom 42", "user backtrace hook ran"],
        &[],
    );
    fails(
        "nopos",
        &[],
        &["FATAL ERROR", "quiet boom x"],
        &["tools_only.c"],
    );
    fails("badint", &[], &["gasnett_parse_int(\"12 apples\", 1)"], &[]);
    fails(
        "badenv",
        &[("GEX_TT_BADINT", "12q")],
        &["GEX_TT_BADINT=\"12q\" is not an integer"],
        &[],
    );
    let verbose = |env: &[(&str, &str)]| {
        let out = run_tools(&exe, Some("verbose"), env);
        assert!(out.status.success(), "{out:?}");
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (o, e) = verbose(&[("GASNET_VERBOSEENV", "1"), ("GEX_TT_SIZE", "2M")]);
    assert!(o.contains("verboseenv=1"), "{o}");
    assert_eq!(
        e.matches("ENV parameter: GEX_TT_SIZE = 2 MB\n").count(),
        1,
        "{e}"
    );
    assert!(
        e.contains("ENV parameter: GEX_TT_NAME = 'dflt'   (default)"),
        "{e}"
    );
    assert!(
        e.contains("ENV parameter: GEX_TT_FLAG = YES   (default)"),
        "{e}"
    );
    let (o, e) = verbose(&[("GASNET_VERBOSEENV", "1"), ("GEX_RANK", "1")]);
    assert!(
        o.contains("verboseenv=0") && !e.contains("ENV parameter"),
        "{o}{e}"
    );
    let (o, e) = verbose(&[]);
    assert!(
        o.contains("verboseenv=0") && !e.contains("ENV parameter"),
        "{o}{e}"
    );
}

/// A C++17 program including every header runs on 1 to 3 ranks.
#[test]
fn cxx_program_including_every_header() {
    if !have("c++") {
        return;
    }
    let exe = out_dir().join("every_header");
    checked(
        Command::new("c++")
            .args(["-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-I"])
            .arg(include_dir())
            .arg(crate_dir().join("tests/c/every_header.cc"))
            .arg(lib_dir().join("libgex_capi.a"))
            .args(NATIVE_LIBS)
            .arg("-o")
            .arg(&exe),
    );
    passes("smp", &exe, "every_header", &[1, 2, 3], &[]);
}

/// Writes the pkg-config file of `conduit` for `prefix` from the template
/// (what `cargo xtask c-install` does).
fn write_pc(dir: &Path, prefix: &Path, conduit: &str) {
    let text = std::fs::read_to_string(crate_dir().join("pkgconfig/gex.pc.in"))
        .expect("the template")
        .replace("@PREFIX@", &prefix.to_string_lossy())
        .replace("@CONDUIT@", conduit)
        .replace("@CONDUIT_UC@", &conduit.to_uppercase())
        .replace("@VERSION@", env!("CARGO_PKG_VERSION"));
    std::fs::write(dir.join(format!("gex-{conduit}.pc")), text).expect("write .pc");
}

/// `pkg-config --cflags --libs gex-smp` (and `gex-udp`) builds the
/// README's program against an installed layout (the shared library, found
/// through the rpath), and it runs under the launcher.
#[test]
fn pkg_config_builds_a_program_that_runs() {
    if !have("pkg-config") {
        return;
    }
    let prefix = out_dir().join("prefix");
    let _ = std::fs::remove_dir_all(&prefix);
    let lib = prefix.join("lib");
    let pc = lib.join("pkgconfig");
    std::fs::create_dir_all(&pc).expect("mkdir");
    std::os::unix::fs::symlink(include_dir(), prefix.join("include")).expect("symlink");
    std::fs::copy(lib_dir().join("libgex_capi.so"), lib.join("libgex.so")).expect("copy .so");
    for (conduit, env) in [("smp", &[][..]), ("udp", UDP)] {
        write_pc(&pc, &prefix, conduit);
        let flags = checked(
            Command::new("pkg-config")
                .env("PKG_CONFIG_PATH", &pc)
                .args(["--cflags", "--libs", &format!("gex-{conduit}")]),
        );
        let exe = out_dir().join(format!("hello-{conduit}"));
        checked(
            Command::new("cc")
                .args(["-std=c99", "-Wall", "-Wextra", "-Werror"])
                .arg(crate_dir().join("tests/c/hello.c"))
                .arg("-o")
                .arg(&exe)
                .args(flags.split_whitespace()),
        );
        let n = 3;
        let out = launch(conduit, &exe, n, env);
        assert_eq!(
            out.code, 0,
            "hello on {conduit}\n{}\n{}",
            out.stdout, out.stderr
        );
        for r in 0..n {
            assert!(
                out.stdout
                    .contains(&format!("rank {r} of {n} got its reply")),
                "{}",
                out.stdout
            );
        }
        // The header's inline puts and gets read the shared library's
        // exported table: valid transfers (no error case named).
        let exe = out_dir().join(format!("rma-shared-{conduit}"));
        checked(
            Command::new("cc")
                .args(["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror"])
                .arg(crate_dir().join("tests/c/rma_errors.c"))
                .arg("-o")
                .arg(&exe)
                .args(flags.split_whitespace()),
        );
        let out = launch(conduit, &exe, 2, env);
        assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
        assert_eq!(
            out.stdout
                .matches("rma_errors: valid transfers done")
                .count(),
            2,
            "{}",
            out.stdout
        );
    }
}

/// The C ports of bench-testam and bench-testsmall run (a few iterations:
/// a benchmark is measured by hand, never timed in a test).
#[test]
fn c_benchmarks_run() {
    let rows: [(&str, &[&str]); 3] = [
        (
            "bench_testam",
            &[
                "AMShort     ping-pong",
                "AMShort     flood",
                "AMMedium    ping-pong",
            ],
        ),
        (
            "bench_testsmall",
            &["PutBlocking", "GetBlocking", "PutNBI", "GetNB"],
        ),
        (
            "bench_testlarge",
            &[
                "PutBlocking  throughput  4194304 B",
                "GetBlocking  throughput  4194304 B",
                "PutNBI       throughput  4194304 B",
                "GetNBI       throughput  4194304 B",
                "PutNB        throughput  4194304 B",
                "GetNB        throughput  4194304 B",
            ],
        ),
    ];
    for (name, rows) in rows {
        let exe = out_dir().join(format!("{name}_c"));
        checked(
            Command::new("cc")
                .args(["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-I"])
                .arg(include_dir())
                .arg(crate_dir().join(format!("bench/{name}.c")))
                .arg(lib_dir().join("libgex_capi.a"))
                .args(NATIVE_LIBS)
                .arg("-o")
                .arg(&exe),
        );
        for n in [1, 2] {
            let _lock = job_lock();
            let mut spec = JobSpec::new(n, &exe);
            // A few operations per figure: this checks the rows, not speed.
            let ops = if name == "bench_testlarge" {
                "20"
            } else {
                "300"
            };
            spec.args = vec![ops.into()];
            spec.timeout = Some(TIMEOUT);
            spec.output = Output::Capture;
            let out = run(&spec).expect("start a C benchmark");
            assert_eq!(out.code, 0, "{name}\n{}\n{}", out.stdout, out.stderr);
            for row in rows {
                assert!(
                    out.stdout.contains(row),
                    "{name}: no {row:?} row\n{}",
                    out.stdout
                );
            }
        }
    }
}
