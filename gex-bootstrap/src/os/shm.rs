//! Shared memory without names: the one helper every layer that shares
//! memory between the ranks of a host uses (the smp transport's AM queues
//! and segments, gex-coll's barrier area), also reachable as
//! `gex_conduit::shm` and `gex_core::shm`.
//!
//! An object is a `memfd` (an anonymous file that lives as long as a
//! descriptor or a mapping refers to it). Its creator maps it, keeps the
//! descriptor open, and publishes a [`Handle`] (its pid and the descriptor
//! number) to its peers through the control plane; a peer opens
//! `/proc/<pid>/fd/<n>`, which the kernel allows to a process of the same
//! user, checks that it reached the object it was told about (the memfd's
//! name and size), and maps it. Once every peer has mapped it (the caller
//! agrees on that over the control plane) the creator closes the
//! descriptor ([`Region::into_mapping`]); the memory then lives exactly as
//! long as some process maps it.
//!
//! Nothing has a name in the file system, so a crash at any moment (of a
//! rank or of the launcher) leaves nothing behind: the kernel frees the
//! memory when the last process that holds it ends. This works whoever
//! started the ranks (`gex-run`, a spawner such as `ip netns exec`, ssh to
//! the same host, srun or mpirun), as long as the ranks of a host share the
//! pid namespace and `/proc` is mounted without `hidepid`; when a peer
//! cannot open the object the caller's agreement step fails on every rank
//! with the message naming the path.

use std::num::NonZeroUsize;
use std::os::fd::{AsRawFd, OwnedFd};
use std::ptr::NonNull;

use gex_types::{Error, Result};
use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::memfd::MFdFlags;
use nix::sys::mman::{MapFlags, ProtFlags};
use nix::sys::stat::Mode;

/// A mapping of a shared-memory object, unmapped on drop.
#[derive(Debug)]
pub struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain shared memory; its users synchronise every
// access to it with atomics (rings, barrier counters) or leave it to the
// client (segments).
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Start of the mapping (page aligned).
    pub fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mapping is empty (never: objects have a size).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Keeps the memory mapped for the rest of the process's life (for
    /// areas published through statics).
    pub fn leak(self) -> *mut u8 {
        let p = self.ptr.as_ptr();
        std::mem::forget(self);
        p
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: ptr/len came from a successful mmap and are unmapped once;
        // nothing of ours refers to the memory after the drop.
        let _ = unsafe { nix::sys::mman::munmap(self.ptr.cast(), self.len) };
    }
}

/// Where a peer finds an object: its creator's pid and descriptor, and its
/// size. Sent to peers as [`Handle::BYTES`] bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handle {
    /// The creator's process id.
    pub pid: u32,
    /// The descriptor number in the creator.
    pub fd: u32,
    /// The object's size in bytes.
    pub len: u64,
}

impl Handle {
    /// Encoded size.
    pub const BYTES: usize = 16;

    /// Encodes the handle (little endian).
    pub fn encode(&self) -> [u8; Handle::BYTES] {
        let mut b = [0u8; Handle::BYTES];
        b[0..4].copy_from_slice(&self.pid.to_le_bytes());
        b[4..8].copy_from_slice(&self.fd.to_le_bytes());
        b[8..16].copy_from_slice(&self.len.to_le_bytes());
        b
    }

    /// Decodes a handle from its first [`Handle::BYTES`] bytes of `b`;
    /// `None` if `b` is too short. The values come from another process:
    /// [`open`] checks what they lead to before mapping anything.
    pub fn decode(b: &[u8]) -> Option<Handle> {
        let b = b.get(..Handle::BYTES)?;
        Some(Handle {
            pid: u32::from_le_bytes(b[0..4].try_into().ok()?),
            fd: u32::from_le_bytes(b[4..8].try_into().ok()?),
            len: u64::from_le_bytes(b[8..16].try_into().ok()?),
        })
    }
}

/// An object this process created: its mapping and the descriptor peers
/// open it through until [`Region::into_mapping`].
#[derive(Debug)]
pub struct Region {
    fd: OwnedFd,
    map: Mapping,
}

impl Region {
    /// Start of the mapping.
    pub fn ptr(&self) -> *mut u8 {
        self.map.ptr()
    }

    /// Where peers find this object.
    pub fn handle(&self) -> Handle {
        Handle {
            pid: std::process::id(),
            fd: self.fd.as_raw_fd() as u32,
            len: self.map.len() as u64,
        }
    }

    /// Closes the descriptor (peers can no longer open the object; those
    /// that mapped it keep it) and returns the mapping.
    pub fn into_mapping(self) -> Mapping {
        drop(self.fd);
        self.map
    }
}

fn os_err(what: &str, name: &str, e: Errno) -> Error {
    Error::resource(format!(
        "{what} shared memory {name}: {}",
        std::io::Error::from(e)
    ))
}

/// The memfd name of object `what` of job `job` (it appears only in
/// `/proc/<pid>/fd` links, as `/memfd:<name> (deleted)`).
pub fn object_name(job: &str, what: &str) -> String {
    format!("{}{what}", crate::wire::shm_prefix(job))
}

/// Creates an anonymous object named `name` (see [`object_name`]) of `len`
/// bytes, zero-filled, and maps it.
pub fn create(name: &str, len: usize) -> Result<Region> {
    if name.contains('\0') {
        return Err(Error::bad_arg(format!("bad shared-memory name {name:?}")));
    }
    let size = libc::off_t::try_from(len)
        .map_err(|_| Error::bad_arg(format!("shared memory {name}: {len} bytes is too large")))?;
    let fd = nix::sys::memfd::memfd_create(name, MFdFlags::MFD_CLOEXEC)
        .map_err(|e| os_err("cannot create", name, e))?;
    nix::unistd::ftruncate(&fd, size).map_err(|e| os_err("cannot size", name, e))?;
    let map = map_fd(&fd, len, name)?;
    Ok(Region { fd, map })
}

/// Maps the object `h` names, which must be the memfd `name` of `len`
/// bytes: anything else (a pid reused by another process, a descriptor
/// that is not that object) is an error, never a mapping.
pub fn open(h: &Handle, name: &str, len: usize) -> Result<Mapping> {
    let path = format!("/proc/{}/fd/{}", h.pid, h.fd);
    let shown = format!("{name} ({path})");
    if h.len != len as u64 {
        return Err(Error::resource(format!(
            "shared memory {shown}: announced as {} bytes, expected {len}",
            h.len
        )));
    }
    let fd = nix::fcntl::open(
        path.as_str(),
        OFlag::O_RDWR | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| os_err("cannot open", &shown, e))?;
    // What we opened, as the kernel names it: our own descriptor's link.
    let link = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
        .map_err(|e| Error::resource(format!("shared memory {shown}: {e}")))?;
    let expect = format!("/memfd:{name} (deleted)");
    if link.as_os_str().as_encoded_bytes() != expect.as_bytes() {
        return Err(Error::resource(format!(
            "shared memory {shown}: the descriptor is {}, not {expect}",
            link.display()
        )));
    }
    let size = nix::sys::stat::fstat(&fd)
        .map_err(|e| os_err("cannot stat", &shown, e))?
        .st_size as u64;
    if size != len as u64 {
        return Err(Error::resource(format!(
            "shared memory {shown}: {size} bytes, expected {len}"
        )));
    }
    map_fd(&fd, len, &shown)
}

fn map_fd(fd: &OwnedFd, len: usize, name: &str) -> Result<Mapping> {
    let length = NonZeroUsize::new(len)
        .ok_or_else(|| Error::bad_arg(format!("shared memory {name}: empty")))?;
    // SAFETY: a new shared mapping of an object through a descriptor we
    // hold, at an address the kernel chooses, so no existing memory is
    // replaced; the result is checked.
    let p = unsafe {
        nix::sys::mman::mmap(
            None,
            length,
            ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
            MapFlags::MAP_SHARED,
            fd,
            0,
        )
    }
    .map_err(|e| os_err("cannot map", name, e))?;
    Ok(Mapping { ptr: p.cast(), len })
}

/// Total bytes of the shared-memory file system (memfds are charged to the
/// same limits as `/dev/shm` objects), for the segment limit.
pub fn shm_capacity() -> Option<usize> {
    let st = nix::sys::statvfs::statvfs("/dev/shm").ok()?;
    Some((st.blocks() as usize).saturating_mul(st.fragment_size() as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_open_through_proc_and_close() {
        let name = object_name(&format!("unittest{}", std::process::id()), "x");
        let a = create(&name, 8192).unwrap();
        let h = a.handle();
        assert_eq!(Handle::decode(&h.encode()), Some(h));
        assert_eq!(Handle::decode(&h.encode()[..15]), None);
        let b = open(&h, &name, 8192).unwrap();
        // SAFETY: both map the same 8192 bytes.
        unsafe {
            a.ptr().add(100).write(42);
            assert_eq!(b.ptr().add(100).read(), 42);
        }
        // A wrong name, a wrong size, or a descriptor that is not a memfd
        // are refused.
        assert!(open(&h, "gex-other-x", 8192).is_err());
        assert!(open(&h, &name, 4096).is_err());
        let stdin = Handle { fd: 0, ..h };
        assert!(open(&stdin, &name, 8192).is_err());
        // Once the creator closes its descriptor, nobody can open it, and
        // the mappings stay valid.
        let a = a.into_mapping();
        assert!(open(&h, &name, 8192).is_err());
        // SAFETY: still mapped.
        unsafe { assert_eq!(a.ptr().add(100).read(), 42) };
        assert!(!std::path::Path::new(&format!("/dev/shm/{name}")).exists());
    }
}
