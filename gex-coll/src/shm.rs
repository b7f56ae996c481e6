//! The shared-memory area of the GASNet-1 barrier, for jobs whose ranks
//! all share one neighbourhood (every rank on the smp conduit, or on one
//! host with a network conduit's shared-memory bypass).
//!
//! Rank 0 creates the POSIX object `gex-<job>-coll` (under the job's
//! prefix, which the launcher cleans up after a crash), every rank maps
//! it, they agree that they did, and rank 0 unlinks it at once. Whether to
//! use it is agreed by every rank, so a failure anywhere (or
//! `GEX_COLL_FORCE_AM=1` on any rank) leaves every rank on the AM path.
//!
//! The area holds one slot per rank, 128 bytes apart (x86 prefetches
//! cache lines in pairs): a sequence number and the barrier values of the
//! last two episodes.

use std::ffi::CString;
use std::sync::atomic::AtomicU64;
use std::sync::OnceLock;

use gex_core::Runtime;
use gex_types::{Error, Result};

/// One rank's slot.
#[repr(C, align(128))]
pub(crate) struct Slot {
    /// The last barrier episode this rank notified (release).
    pub(crate) seq: AtomicU64,
    /// Its value for episodes of each parity (written before `seq`).
    pub(crate) val: [AtomicU64; 2],
}

const SLOT: usize = std::mem::size_of::<Slot>();
const _: () = assert!(SLOT == 128);

/// The mapped area: `jobsize` slots indexed by jobrank.
pub(crate) struct Area {
    base: *const Slot,
    n: usize,
}

// SAFETY: the area is shared memory accessed only through atomics, mapped
// for the rest of the process's life.
unsafe impl Send for Area {}
// SAFETY: as above.
unsafe impl Sync for Area {}

impl Area {
    pub(crate) fn slots(&self) -> &[Slot] {
        // SAFETY: `base` is the start of a live, page-aligned, shared
        // mapping of at least `n * 128` bytes that is never unmapped; it
        // was zero-filled at creation, and zero is a valid AtomicU64. Every
        // access goes through atomics, so concurrent use by other processes
        // is not a data race.
        unsafe { std::slice::from_raw_parts(self.base, self.n) }
    }
}

static AREA: OnceLock<Area> = OnceLock::new();

/// The area, if every rank agreed to use it.
pub(crate) fn area() -> Option<&'static Area> {
    AREA.get()
}

fn shm_name(rt: &Runtime) -> Result<CString> {
    let prefix = gex_core::bootstrap::wire::shm_prefix(rt.conduit().bootstrap().job_id());
    CString::new(format!("/{prefix}coll")).map_err(|_| Error::resource("bad shared-memory name"))
}

/// Creates (rank 0) or opens the object and maps `len` bytes of it.
fn map(name: &CString, len: usize, create: bool) -> std::result::Result<*mut u8, String> {
    let oflag = if create {
        libc::O_CREAT | libc::O_EXCL | libc::O_RDWR
    } else {
        libc::O_RDWR
    };
    // SAFETY: name is a valid NUL-terminated string.
    let fd = unsafe { libc::shm_open(name.as_ptr(), oflag, 0o600 as libc::mode_t) };
    if fd < 0 {
        return Err(format!(
            "shm_open {name:?}: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: fd is an open descriptor this function owns.
    if create && unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
        let e = std::io::Error::last_os_error();
        // SAFETY: fd is ours.
        unsafe { libc::close(fd) };
        return Err(format!("ftruncate {name:?}: {e}"));
    }
    // SAFETY: mapping a shared object this function opened; the result is
    // checked below.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    // SAFETY: fd is ours and not needed once mapped (or on failure).
    unsafe { libc::close(fd) };
    if p == libc::MAP_FAILED {
        return Err(format!(
            "mmap {name:?}: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(p as *mut u8)
}

fn unmap(p: *mut u8, len: usize) {
    // SAFETY: p/len came from a successful mmap in `map` and nothing
    // refers to the mapping (it was never published).
    unsafe { libc::munmap(p as *mut libc::c_void, len) };
}

fn unlink(name: &CString) {
    // SAFETY: name is a valid NUL-terminated string; a missing object is
    // fine.
    unsafe { libc::shm_unlink(name.as_ptr()) };
}

/// Sets the area up at client init, collectively over the job: a no-op
/// (without communication) unless every rank shares this neighbourhood.
pub(crate) fn setup(rt: &'static Runtime) -> Result<()> {
    let n = rt.jobsize() as usize;
    if n < 2 || rt.conduit().layout().nbrhd.len() != n {
        return Ok(());
    }
    let want = !std::env::var("GEX_COLL_FORCE_AM").is_ok_and(|v| v == "1");
    let name = shm_name(rt)?;
    let len = (n * SLOT).div_ceil(4096) * 4096;
    let me = rt.jobrank();
    let mut mapped: Option<*mut u8> = None;
    let mut why = String::new();
    if me == 0 && want {
        match map(&name, len, true) {
            Ok(p) => mapped = Some(p),
            Err(e) => why = e,
        }
    }
    let ok0 = [want as u8, mapped.is_some() as u8];
    let all = rt.bootstrap_exchange(&ok0)?;
    let everyone_wants = all.iter().all(|v| v.first() == Some(&1));
    let created = all[0].get(1) == Some(&1);
    if everyone_wants && created && me != 0 {
        match map(&name, len, false) {
            Ok(p) => mapped = Some(p),
            Err(e) => why = e,
        }
    }
    let all = rt.bootstrap_exchange(&[mapped.is_some() as u8])?;
    if me == 0 {
        unlink(&name);
    }
    let use_it = everyone_wants && all.iter().all(|v| v.first() == Some(&1));
    match (use_it, mapped) {
        (true, Some(p)) => {
            let _ = AREA.set(Area {
                base: p as *const Slot,
                n,
            });
        }
        (false, Some(p)) => unmap(p, len),
        _ => {}
    }
    if everyone_wants && !use_it && !why.is_empty() {
        eprintln!("gex-coll on rank {me}: shared-memory barrier unavailable ({why}); using Active Messages");
    }
    Ok(())
}
