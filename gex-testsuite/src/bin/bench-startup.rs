//! Job start-up: `gex-run -n N bench-startup [SEG_BYTES]`.
//!
//! Each rank prints one line with `CLOCK_MONOTONIC` times in nanoseconds
//! (one clock for every process of the machine): when `main` began, when
//! `gex::init` returned, when a segment of `SEG_BYTES` (default 1 MiB) was
//! attached, and when the first barrier after it completed:
//!
//! `startup rank R main T init T attach T barrier T`
//!
//! `cargo xtask bench-startup` starts jobs of 2 to 128 ranks with it, takes
//! the launch time beside them, and prints the table in the README (with an
//! empty MPI program under `mpirun` for comparison).

use gex::coll::{barrier_notify, barrier_wait, BARRIERFLAG_ANONYMOUS};
use gex::Segment;

/// `CLOCK_MONOTONIC` in nanoseconds.
fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into `ts`, a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn main() {
    let t_main = now_ns();
    let seg_bytes: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("SEG_BYTES"))
        .unwrap_or(1 << 20);
    let (_client, _ep, tm) = gex::init("STARTUP").expect("gex::init");
    let t_init = now_ns();
    let _seg = Segment::attach(&tm, seg_bytes).expect("gex_Segment_Attach");
    let t_attach = now_ns();
    barrier_notify(0, BARRIERFLAG_ANONYMOUS).expect("notify");
    barrier_wait(0, BARRIERFLAG_ANONYMOUS).expect("wait");
    let t_barrier = now_ns();
    println!(
        "startup rank {} main {t_main} init {t_init} attach {t_attach} barrier {t_barrier}",
        tm.rank()
    );
    // Leave together: a rank that returns early would end the job.
    barrier_notify(0, BARRIERFLAG_ANONYMOUS).expect("notify");
    barrier_wait(0, BARRIERFLAG_ANONYMOUS).expect("wait");
}
