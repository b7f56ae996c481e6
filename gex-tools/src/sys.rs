//! Timers, versions, processor and memory queries, sleeping, signals,
//! resource limits, streams and the byte utilities of `gasnet_tools.h`.

use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::OnceLock;

/// `gasnett_tick_t`: nanoseconds of `CLOCK_MONOTONIC`.
pub type gasnett_tick_t = u64;

/// The GASNet-EX release whose interface gex provides.
const RELEASE: (u64, u64, u64) = (2025, 8, 0);

/// `gasnett_ticks_now`.
#[no_mangle]
pub extern "C" fn gasnett_ticks_now() -> gasnett_tick_t {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// `gasnett_ticks_to_ns`.
#[no_mangle]
pub extern "C" fn gasnett_ticks_to_ns(t: gasnett_tick_t) -> u64 {
    t
}

/// `gasnett_ticks_to_us`.
#[no_mangle]
pub extern "C" fn gasnett_ticks_to_us(t: gasnett_tick_t) -> u64 {
    t / 1000
}

/// `gasnett_tick_granularityus`: the clock's resolution in microseconds.
#[no_mangle]
pub extern "C" fn gasnett_tick_granularityus() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_getres writes the timespec it is given.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as f64) * 1e6 + (ts.tv_nsec as f64) / 1e3
}

/// `gasnett_tick_overheadus`: the cost of one `gasnett_ticks_now`, measured
/// once.
#[no_mangle]
pub extern "C" fn gasnett_tick_overheadus() -> f64 {
    static O: OnceLock<f64> = OnceLock::new();
    *O.get_or_init(|| {
        const N: u64 = 1000;
        let t0 = gasnett_ticks_now();
        for _ in 0..N {
            std::hint::black_box(gasnett_ticks_now());
        }
        // At least a nanosecond: the result is documented as positive.
        ((gasnett_ticks_now() - t0) as f64 / N as f64 / 1e3).max(1e-3)
    })
}

/// `gasnett_gettimeofday_us`: microseconds since the epoch (wall clock).
#[no_mangle]
pub extern "C" fn gasnett_gettimeofday_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// `gasnett_release_version`: major·10⁶ + minor·10⁴ + patch of the release
/// (2025.8.0).
#[no_mangle]
pub extern "C" fn gasnett_release_version() -> u64 {
    RELEASE.0 * 1_000_000 + RELEASE.1 * 10_000 + RELEASE.2
}

/// `gasnett_release_version_str`: `"2025.8.0"`.
#[no_mangle]
pub extern "C" fn gasnett_release_version_str() -> *const c_char {
    c"2025.8.0".as_ptr()
}

/// `gasnett_performance_warning_str`: empty, gex has no debugging, tracing
/// or statistics build.
#[no_mangle]
pub extern "C" fn gasnett_performance_warning_str() -> *const c_char {
    c"".as_ptr()
}

/// `gasnett_cpu_count`: the processors this process may run on.
#[no_mangle]
pub extern "C" fn gasnett_cpu_count() -> c_int {
    std::thread::available_parallelism().map_or(0, |n| n.get() as c_int)
}

/// `gasnett_getPhysMemSz`: physical memory in bytes; 0 when unknown, or a
/// fatal error if `failure_is_fatal`.
#[no_mangle]
pub extern "C" fn gasnett_getPhysMemSz(failure_is_fatal: c_int) -> u64 {
    // SAFETY: sysconf has no memory effects.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages > 0 && size > 0 {
        return pages as u64 * size as u64;
    }
    if failure_is_fatal != 0 {
        crate::backtrace::fatal("gasnett_getPhysMemSz: cannot determine the physical memory size");
    }
    0
}

/// `gasnett_set_affinity`: binds the calling thread to one processor, the
/// `rank`-th (modulo their number) of those the process could run on at
/// its first call. 0 on success.
#[no_mangle]
pub extern "C" fn gasnett_set_affinity(rank: c_int) -> c_int {
    static ALLOWED: OnceLock<Vec<usize>> = OnceLock::new();
    let allowed = ALLOWED.get_or_init(|| {
        // SAFETY: an all-zero cpu_set_t is a valid empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: sched_getaffinity writes at most size_of(set) bytes.
        let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
        if r != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            // SAFETY: i < CPU_SETSIZE.
            .filter(|&i| unsafe { libc::CPU_ISSET(i, &set) })
            .collect()
    });
    if allowed.is_empty() {
        return -1;
    }
    let cpu = allowed[(rank as i64).rem_euclid(allowed.len() as i64) as usize];
    // SAFETY: an all-zero cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: cpu < CPU_SETSIZE (it came from CPU_ISSET's range).
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: sched_setaffinity reads size_of(set) bytes.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) };
    if r == 0 {
        0
    } else {
        -1
    }
}

/// `gasnett_sched_yield`.
#[no_mangle]
pub extern "C" fn gasnett_sched_yield() -> c_int {
    // SAFETY: no memory effects.
    unsafe { libc::sched_yield() }
}

/// `gasnett_nsleep`: sleeps at least `ns` nanoseconds; 0, or -1 with errno
/// EINTR when a signal interrupts the sleep.
#[no_mangle]
pub extern "C" fn gasnett_nsleep(ns: u64) -> c_int {
    if ns == 0 {
        return 0;
    }
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000).min(libc::time_t::MAX as u64) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as _,
    };
    // SAFETY: nanosleep reads the request; the remainder may be null.
    unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) }
}

/// `gasnett_gethostname`: this host's name, owned by the library.
#[no_mangle]
pub extern "C" fn gasnett_gethostname() -> *const c_char {
    static H: OnceLock<CString> = OnceLock::new();
    H.get_or_init(|| {
        let mut buf = [0u8; 256];
        // SAFETY: gethostname writes at most `len` bytes into the buffer.
        let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len() - 1) };
        let end = buf.iter().position(|&b| b == 0).unwrap_or(0);
        CString::new(if r == 0 { &buf[..end] } else { b"localhost" }).unwrap_or_default()
    })
    .as_ptr()
}

/// `gasnett_exe_name`: the full path of the running executable, or `""`.
#[no_mangle]
pub extern "C" fn gasnett_exe_name() -> *const c_char {
    static E: OnceLock<CString> = OnceLock::new();
    E.get_or_init(|| {
        std::fs::read_link("/proc/self/exe")
            .ok()
            .and_then(|p| CString::new(p.into_os_string().into_encoded_bytes()).ok())
            .unwrap_or_default()
    })
    .as_ptr()
}

/// `gasnett_flush_streams`: flushes every C stdio output stream and Rust's
/// standard streams; errors are ignored.
#[no_mangle]
pub extern "C" fn gasnett_flush_streams() {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: fflush(NULL) flushes all open output streams.
    unsafe { libc::fflush(std::ptr::null_mut()) };
}

extern "C" {
    static mut stdin: *mut libc::FILE;
    static mut stdout: *mut libc::FILE;
    static mut stderr: *mut libc::FILE;
}

/// `gasnett_close_streams`: flushes, then closes stdin, stdout and stderr;
/// errors are ignored.
#[no_mangle]
pub extern "C" fn gasnett_close_streams() {
    gasnett_flush_streams();
    // SAFETY: the C library's standard streams; each is closed once here
    // (a stream already closed by the client is the client's contract, as
    // with fclose).
    unsafe {
        for f in [stdin, stdout, stderr] {
            if !f.is_null() {
                libc::fclose(f);
            }
        }
    }
}

/// `gasnett_killmyprocess`: ends the process now with `exitcode`, without
/// atexit handlers, other threads included.
#[no_mangle]
pub extern "C" fn gasnett_killmyprocess(exitcode: c_int) -> ! {
    gasnett_flush_streams();
    // SAFETY: _exit ends the process.
    unsafe { libc::_exit(exitcode) }
}

/// `gasnett_reghandler`: installs `fp` (a handler, `SIG_DFL` or `SIG_IGN`)
/// for `sig` and returns the previous one; `SIG_ERR` for a signal number
/// out of range or one that cannot be caught.
#[no_mangle]
pub extern "C" fn gasnett_reghandler(sig: c_int, fp: libc::sighandler_t) -> libc::sighandler_t {
    if sig <= 0 || sig >= 65 {
        return libc::SIG_ERR;
    }
    // SAFETY: signal() validates the signal number and installs `fp`, a
    // handler address the C caller supplies (or SIG_DFL / SIG_IGN).
    unsafe { libc::signal(sig, fp) }
}

fn rlimit_name(res: c_int) -> Option<&'static str> {
    #[allow(clippy::useless_conversion)]
    let r = res as u32;
    Some(match r {
        x if x == libc::RLIMIT_CPU as u32 => "RLIMIT_CPU",
        x if x == libc::RLIMIT_DATA as u32 => "RLIMIT_DATA",
        x if x == libc::RLIMIT_RSS as u32 => "RLIMIT_RSS",
        x if x == libc::RLIMIT_STACK as u32 => "RLIMIT_STACK",
        x if x == libc::RLIMIT_AS as u32 => "RLIMIT_AS",
        x if x == libc::RLIMIT_MEMLOCK as u32 => "RLIMIT_MEMLOCK",
        _ => return None,
    })
}

fn maximize(res: c_int, desc: &str) -> bool {
    let key = format!("GASNET_MAXIMIZE_{desc}");
    if !crate::env::yesno(&key, true) {
        return true;
    }
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the rlimit it is given.
    if unsafe { libc::getrlimit(res as _, &mut lim) } != 0 {
        return false;
    }
    if lim.rlim_cur == lim.rlim_max {
        return true;
    }
    lim.rlim_cur = lim.rlim_max;
    // SAFETY: setrlimit reads the rlimit it is given.
    unsafe { libc::setrlimit(res as _, &lim) == 0 }
}

/// `gasnett_maximize_rlimit`: raises the soft limit `res` to its hard limit
/// unless `GASNET_MAXIMIZE_<lim_desc>` is false; non-zero on success.
#[no_mangle]
pub unsafe extern "C" fn gasnett_maximize_rlimit(res: c_int, lim_desc: *const c_char) -> c_int {
    // SAFETY: null or a C string (caller's contract).
    let desc = match unsafe { crate::cstr(lim_desc) } {
        Some(d) => d.to_string_lossy().into_owned(),
        None => match rlimit_name(res) {
            Some(n) => n.to_owned(),
            None => format!("RLIMIT_{res}"),
        },
    };
    maximize(res, &desc) as c_int
}

/// `gasnett_maximize_rlimits`: [`gasnett_maximize_rlimit`] for processor
/// time and the memory limits (data, resident set, stack, address space,
/// locked memory); non-zero when all succeed.
#[no_mangle]
pub extern "C" fn gasnett_maximize_rlimits() -> c_int {
    let all = [
        libc::RLIMIT_CPU,
        libc::RLIMIT_DATA,
        libc::RLIMIT_RSS,
        libc::RLIMIT_STACK,
        libc::RLIMIT_AS,
        libc::RLIMIT_MEMLOCK,
    ];
    let mut ok = true;
    for r in all {
        let r = r as c_int;
        ok &= maximize(r, rlimit_name(r).unwrap_or("RLIMIT"));
    }
    ok as c_int
}

/// `gasnett_mmap`: `size` bytes of fresh zeroed private memory, page
/// aligned; null on failure (or for size 0).
#[no_mangle]
pub extern "C" fn gasnett_mmap(size: usize) -> *mut c_void {
    if size == 0 {
        return std::ptr::null_mut();
    }
    // SAFETY: an anonymous private mapping chosen by the kernel.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        std::ptr::null_mut()
    } else {
        p
    }
}

/// `gasnett_checksum`: a 64-bit FNV-1a hash of `nbytes` bytes.
#[no_mangle]
pub unsafe extern "C" fn gasnett_checksum(p: *const c_void, nbytes: usize) -> u64 {
    let b: &[u8] = if nbytes == 0 || p.is_null() {
        &[]
    } else {
        // SAFETY: `nbytes` readable bytes at `p` (caller's contract).
        unsafe { std::slice::from_raw_parts(p.cast(), nbytes) }
    };
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
        (h ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// `gasnett_count0s`: the zero bytes among `n` bytes at `p`.
#[no_mangle]
pub unsafe extern "C" fn gasnett_count0s(p: *const c_void, n: usize) -> usize {
    if n == 0 || p.is_null() {
        return 0;
    }
    // SAFETY: `n` readable bytes at `p` (caller's contract).
    let b: &[u8] = unsafe { std::slice::from_raw_parts(p.cast(), n) };
    b.iter().filter(|&&x| x == 0).count()
}

/// `gasnett_count0s_copy`: copies `n` bytes from `src` to `dst` and
/// returns the zero bytes among them.
#[no_mangle]
pub unsafe extern "C" fn gasnett_count0s_copy(
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
) -> usize {
    if n == 0 || dst.is_null() || src.is_null() {
        return 0;
    }
    // SAFETY: `n` readable bytes at `src`, `n` writable at `dst` (caller's
    // contract); `copy` tolerates overlap, which the contract excludes.
    unsafe { std::ptr::copy(src.cast::<u8>(), dst.cast::<u8>(), n) };
    // SAFETY: `dst` now holds `n` initialised bytes.
    unsafe { gasnett_count0s(dst, n) }
}
