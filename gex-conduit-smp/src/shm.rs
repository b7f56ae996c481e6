//! POSIX shared-memory objects: create, map, unlink.
//!
//! Every object of a job is named `/gex-<job id>-<what>`, so that the
//! launcher can remove whatever a crashed job left in /dev/shm.

use std::ffi::CString;

use gex_types::{Error, Result};

/// A mapping of a shared-memory object, unmapped on drop.
#[derive(Debug)]
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain shared memory; the conduit synchronises every
// access to it with atomics (rings) or leaves it to the client (segments).
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Start of the mapping (page aligned).
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mapping is empty (never: objects have a size).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: ptr/len came from a successful mmap and are unmapped once.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

fn c_name(name: &str) -> Result<CString> {
    CString::new(format!("/{name}"))
        .map_err(|_| Error::bad_arg(format!("bad shared-memory name {name:?}")))
}

fn os_err(what: &str, name: &str) -> Error {
    Error::resource(format!(
        "{what} /dev/shm/{name}: {}",
        std::io::Error::last_os_error()
    ))
}

/// Creates object `name` of `len` bytes (zero-filled; fails if it exists)
/// and maps it.
pub fn create(name: &str, len: usize) -> Result<Mapping> {
    let c = c_name(name)?;
    // SAFETY: c is a valid NUL-terminated string.
    let fd = unsafe {
        libc::shm_open(
            c.as_ptr(),
            libc::O_CREAT | libc::O_EXCL | libc::O_RDWR,
            0o600 as libc::mode_t,
        )
    };
    if fd < 0 {
        return Err(os_err("cannot create", name));
    }
    // SAFETY: fd is an open descriptor we own.
    if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
        let e = os_err("cannot size", name);
        // SAFETY: fd is ours; c is valid.
        unsafe {
            libc::close(fd);
            libc::shm_unlink(c.as_ptr());
        }
        return Err(e);
    }
    let m = map_fd(fd, len, name);
    if m.is_err() {
        // SAFETY: c is valid.
        unsafe { libc::shm_unlink(c.as_ptr()) };
    }
    m
}

/// Maps the existing object `name`, which must be at least `len` bytes.
pub fn open(name: &str, len: usize) -> Result<Mapping> {
    let c = c_name(name)?;
    // SAFETY: c is a valid NUL-terminated string.
    let fd = unsafe { libc::shm_open(c.as_ptr(), libc::O_RDWR, 0) };
    if fd < 0 {
        return Err(os_err("cannot open", name));
    }
    map_fd(fd, len, name)
}

fn map_fd(fd: libc::c_int, len: usize, name: &str) -> Result<Mapping> {
    // SAFETY: mapping a shared object we opened; the result is checked.
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
    // SAFETY: fd is ours and no longer needed once mapped (or on failure).
    unsafe { libc::close(fd) };
    if p == libc::MAP_FAILED {
        return Err(os_err("cannot map", name));
    }
    Ok(Mapping {
        ptr: p as *mut u8,
        len,
    })
}

/// Removes object `name` (mappings stay valid). Missing objects are fine.
pub fn unlink(name: &str) {
    if let Ok(c) = c_name(name) {
        // SAFETY: c is a valid NUL-terminated string.
        unsafe { libc::shm_unlink(c.as_ptr()) };
    }
}

/// Total bytes of the shared-memory file system, for the segment limit.
pub fn shm_capacity() -> Option<usize> {
    let path = CString::new("/dev/shm").ok()?;
    // SAFETY: statvfs writes into the zeroed struct we pass.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(path.as_ptr(), &mut st) != 0 {
            return None;
        }
        Some((st.f_blocks as usize).saturating_mul(st.f_frsize as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_open_unlink() {
        let name = format!("gex-unittest{}-x", std::process::id());
        let a = create(&name, 8192).unwrap();
        assert!(create(&name, 8192).is_err(), "exclusive create");
        let b = open(&name, 8192).unwrap();
        unlink(&name);
        assert!(open(&name, 8192).is_err(), "unlinked");
        // SAFETY: both map the same 8192 bytes.
        unsafe {
            a.ptr().add(100).write(42);
            assert_eq!(b.ptr().add(100).read(), 42);
        }
        assert!(!std::path::Path::new(&format!("/dev/shm/{name}")).exists());
    }
}
