//! Late arrivals at the GASNet-1 barrier on a host with more ranks than
//! cores, under competing load (the shape of the reference testbarrierlate,
//! which ran past its 90 s on 4 ranks over 2 busy cores).
//!
//! Before the client starts, every rank pins itself to one core, the
//! lowest its launcher allowed, so that the host is oversubscribed on any
//! machine (the runtime sees one core and two or more ranks); rank 0 also
//! starts a thread that computes without pause on that core until the
//! checks end: the unrelated busy process of a loaded host. Then, for each
//! rank in turn, that rank computes briefly before its notify (late
//! notify) and between its notify and its wait (late wait), for
//! [`ITERS`] barriers each.
//!
//! Every rank of a host with two or more ranks (all on the one core) must
//! have asked the scheduler for short time slices (`gex_core::runtime`),
//! where the kernel has per-task slices (Linux 6.12 on): what is checked
//! is that the slice was granted, not the time the barriers take, which
//! a loaded machine stretches (0.2-0.4 ms per barrier with short slices,
//! 2-3 ms with the default one, on an otherwise idle 2-core host). The
//! late phases are bounded by a watchdog's wait ([`wait_bound`]) that ends
//! the job loudly, and their time is printed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use gex::coll::{barrier_notify, barrier_wait, BARRIERFLAG_ANONYMOUS};
use gex_testsuite::{wait_bound, Job};

/// Barriers per late phase (two phases per rank).
const ITERS: u32 = 200;

/// How long the late rank computes before its notify or its wait.
const DELAY: Duration = Duration::from_micros(20);

/// The short slice the runtime asks for, in ns (`gex_core`'s
/// `OVERSUBSCRIBED_TIME_SLICE_NS`).
const SHORT_SLICE_NS: u64 = gex_core::OVERSUBSCRIBED_TIME_SLICE_NS;

/// Tells rank 0's busy thread to stop.
static STOP: AtomicBool = AtomicBool::new(false);

/// `struct sched_attr` of `sched_getattr(2)` (its first version).
#[repr(C)]
#[derive(Default)]
struct SchedAttr {
    size: u32,
    policy: u32,
    flags: u64,
    nice: i32,
    priority: u32,
    runtime: u64,
    deadline: u64,
    period: u64,
    util_min: u32,
    util_max: u32,
}

/// The calling thread's time slice in ns as the kernel reports it (0 where
/// it reports none: Linux before 6.12).
fn time_slice_ns() -> u64 {
    let mut attr = SchedAttr::default();
    // SAFETY: `attr` is a writable `struct sched_attr` of the size passed;
    // pid 0 is the calling thread.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            0,
            &mut attr as *mut SchedAttr,
            std::mem::size_of::<SchedAttr>() as u32,
            0,
        )
    };
    assert_eq!(rc, 0, "sched_getattr: {}", std::io::Error::last_os_error());
    attr.runtime
}

/// Pins the calling thread to the lowest core of its affinity; returns it.
fn pin_to_lowest_core() -> usize {
    // SAFETY: an all-zero cpu_set_t is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is writable and of the size passed.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
    assert_eq!(
        rc,
        0,
        "sched_getaffinity: {}",
        std::io::Error::last_os_error()
    );
    let cpu = (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `c` is below CPU_SETSIZE.
        .find(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .expect("an affinity with a core");
    // SAFETY: an all-zero cpu_set_t is the empty set.
    let mut one: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` is below CPU_SETSIZE.
    unsafe { libc::CPU_SET(cpu, &mut one) };
    // SAFETY: `one` is a valid cpu_set_t of the size passed.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&one), &one) };
    assert_eq!(
        rc,
        0,
        "sched_setaffinity: {}",
        std::io::Error::last_os_error()
    );
    cpu
}

/// Computes for `d` (a late rank's work; no synchronisation).
fn compute(d: Duration) {
    let t0 = Instant::now();
    let mut x = 1.000_01f64;
    while t0.elapsed() < d {
        for _ in 0..64 {
            x = std::hint::black_box(x * 1.000_01);
        }
    }
    std::hint::black_box(x);
}

fn barrier(late_wait: bool) {
    barrier_notify(0, BARRIERFLAG_ANONYMOUS).expect("notify");
    if late_wait {
        compute(DELAY);
    }
    barrier_wait(0, BARRIERFLAG_ANONYMOUS).expect("wait");
}

fn main() {
    // Before the client starts (and before any thread of the library, so
    // that all inherit it): one core for the whole job.
    let cpu = pin_to_lowest_core();
    let busy = (std::env::var("GEX_RANK").as_deref() == Ok("0")).then(|| {
        std::thread::spawn(|| {
            // Bounded: stops by itself well after any job would end.
            let t0 = Instant::now();
            let mut x = 1u64;
            while !STOP.load(Ordering::Relaxed) && t0.elapsed() < Duration::from_secs(600) {
                for _ in 0..1024 {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            }
            x
        })
    });
    let job = Job::start("TEST_LATE", 1 << 16);
    let (me, n) = (job.rank(), job.size());
    let slice = time_slice_ns();
    // The ranks of this host share the one core (over udp without the
    // bypass or on pretend hosts, a host may hold this rank alone).
    let host = gex::system::query_host_info()
        .expect("host info")
        .members
        .len();
    if host >= 2 && slice != 0 {
        assert!(
            slice == SHORT_SLICE_NS,
            "rank {me}: {host} ranks of this host on core {cpu}: the scheduler slice is {slice} ns, not the {SHORT_SLICE_NS} ns an oversubscribed rank asks for"
        );
    }
    job.barrier();
    let barriers = 2 * n * ITERS;
    let limit = wait_bound();
    // The watchdog: a bounded wait for the late phases to end.
    let (done, watched) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if watched.recv_timeout(limit).is_err() {
            gex::fatal(&format!(
                "test-late: rank {me}: {barriers} late-arrival barriers among {n} ranks and a busy thread on core {cpu} did not end within {limit:?} (scheduler slice {slice} ns)"
            ));
        }
    });
    let t0 = Instant::now();
    for late_wait in [false, true] {
        for j in 0..n {
            for _ in 0..ITERS {
                if j == me && !late_wait {
                    compute(DELAY);
                }
                barrier(late_wait && j == me);
            }
        }
    }
    let took = t0.elapsed();
    done.send(()).expect("watchdog");
    watchdog.join().expect("watchdog");
    STOP.store(true, Ordering::Relaxed);
    if let Some(t) = busy {
        t.join().expect("busy thread");
    }
    job.barrier();
    if me == 0 {
        println!(
            "test-late: {barriers} late-arrival barriers among {n} ranks and a busy thread on core {cpu} in {took:?} (limit {limit:?}, slice {slice} ns)"
        );
    }
    println!("test-late: rank {me} of {n}: all checks passed");
    job.barrier();
}
