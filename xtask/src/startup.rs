//! `cargo xtask bench-startup`: how long jobs take to start, by rank count,
//! for gex-run on smp and udp, and for an empty MPI program under mpirun.
//!
//! Every rank of `bench-startup` (and of `startup_mpi.c`) prints its
//! `CLOCK_MONOTONIC` times; this driver notes the same clock just before it
//! starts the launcher, so it can report, per job: launch to the last rank
//! past init (`gex::init`, `MPI_Init`), launch to the last rank past the
//! first barrier after it (gex: after a segment attach too), and the whole
//! job (launch until the launcher has exited). Each figure is the median of
//! the repetitions.

use std::path::Path;
use std::process::Command;

/// One measured job.
#[derive(Clone, Copy, Debug)]
struct Sample {
    init: f64,
    barrier: f64,
    total: f64,
}

fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into `ts`, a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Runs `cmd` once; the ranks must print `startup rank R main T init T
/// attach T barrier T` lines, `n` of them.
fn sample(mut cmd: Command, n: u32) -> Result<Sample, String> {
    let t0 = now_ns();
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    let t1 = now_ns();
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.starts_with("startup rank "))
        .map(|l| l.split_whitespace().collect())
        .collect();
    if !out.status.success() || rows.len() != n as usize {
        return Err(format!(
            "{cmd:?}: {} with {} of {n} rank lines\n{}",
            out.status,
            rows.len(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let last = |key: &str| -> Result<u64, String> {
        rows.iter()
            .map(|r| {
                let i = r.iter().position(|w| *w == key).ok_or("no field")?;
                r.get(i + 1)
                    .and_then(|v| v.parse::<u64>().ok())
                    .ok_or("bad field")
            })
            .try_fold(0u64, |m, v| v.map(|v| m.max(v)))
            .map_err(|e| format!("{cmd:?}: {e} {key}"))
    };
    let secs = |t: u64| t.saturating_sub(t0) as f64 / 1e9;
    Ok(Sample {
        init: secs(last("init")?),
        barrier: secs(last("barrier")?),
        total: secs(t1),
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Builds the MPI program with mpicc, if there is one.
fn build_mpi(workspace: &Path, release: &Path) -> Option<std::path::PathBuf> {
    let src = workspace.join("gex-testsuite/bench/startup_mpi.c");
    let out = release.join("startup-mpi");
    let ok = Command::new("mpicc")
        .arg("-O2")
        .arg("-o")
        .arg(&out)
        .arg(&src)
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(out)
}

/// Runs the table and prints it (Markdown).
pub fn run(workspace: &Path, release: &Path, ranks: &[u32], reps: u32) -> Result<(), String> {
    let launcher = release.join("gex-run");
    let prog = release.join("bench-startup");
    let mpi = build_mpi(workspace, release);
    if mpi.is_none() {
        println!("xtask: bench-startup: no mpicc (apt-get install openmpi-bin libopenmpi-dev); MPI rows skipped");
    }
    println!(
        "| ranks | launcher | last rank past init | last rank past first barrier | whole job |"
    );
    println!("|---:|---|---:|---:|---:|");
    for &n in ranks {
        let mut rows: Vec<(String, Box<dyn Fn() -> Command>)> = Vec::new();
        for (label, conduit, bypass) in [
            ("gex-run smp", "smp", None),
            ("gex-run udp", "udp", Some("0")),
        ] {
            let (l, p) = (launcher.clone(), prog.clone());
            rows.push((
                label.to_string(),
                Box::new(move || {
                    let mut c = Command::new(&l);
                    c.arg("-n")
                        .arg(n.to_string())
                        .arg("--conduit")
                        .arg(conduit)
                        .arg(&p);
                    if let Some(b) = bypass {
                        c.env("GEX_UDP_BYPASS", b);
                    }
                    c
                }),
            ));
        }
        if let Some(m) = &mpi {
            let m = m.clone();
            rows.push((
                "mpirun (empty MPI program)".to_string(),
                Box::new(move || {
                    let mut c = Command::new("mpirun");
                    c.args(["--allow-run-as-root", "--oversubscribe", "-np"])
                        .arg(n.to_string())
                        .arg(&m);
                    c
                }),
            ));
        }
        for (label, make) in &rows {
            let mut samples = Vec::new();
            for _ in 0..reps {
                samples.push(sample(make(), n)?);
            }
            let med = |f: fn(&Sample) -> f64| median(samples.iter().map(f).collect());
            println!(
                "| {n} | {label} | {:.3} s | {:.3} s | {:.3} s |",
                med(|s| s.init),
                med(|s| s.barrier),
                med(|s| s.total)
            );
        }
    }
    Ok(())
}
