//! The shared-memory area of the barriers, one per neighbourhood (every
//! rank on the smp conduit; the ranks of one host with a network conduit's
//! shared-memory bypass).
//!
//! The lowest jobrank of each neighbourhood creates the object (a nameless
//! memfd, `gex_conduit::shm`, called `gex-<job>-coll<jobrank>` in `/proc`),
//! the other members map it, every rank of the job agrees that they did,
//! and the creators close its descriptor: a crash at any moment leaves
//! nothing behind. Whether to use the areas is agreed by every rank of the job, so a
//! failure anywhere (or `GEX_COLL_FORCE_AM=1` on any rank) leaves every
//! rank on the AM path.
//!
//! The area holds 128-byte slots (x86 prefetches cache lines in pairs),
//! indexed by the position of a rank in its neighbourhood (its local
//! index):
//!
//! - one slot per rank for the GASNet-1 barrier (used only when the
//!   neighbourhood is the whole job): a sequence number and the barrier
//!   values of the last two episodes;
//! - [`CHANNELS`] channels of one slot per rank for the EX barrier
//!   (`crate::shmbar`): a team whose members all share the neighbourhood
//!   owns one channel while it lives, and each member counts its barrier
//!   initiations in its slot of that channel;
//! - then, page-aligned, the data area of the shared-memory data
//!   collectives (`crate::shm::data`): one control slot per rank, then two
//!   buffers of [`HALF`] bytes per rank;
//! - then, page-aligned, the small-message area (`crate::shm::small`): for
//!   each channel, one region of [`SMALL_REGION`] bytes per rank
//!   (acknowledgements, then [`SMALL_DEPTH`] slots: a line each, then a
//!   data block each), used by the team that owns the channel.
//!
//! Layer: state (bottom). Uses nothing of gex-coll above the engine;
//! its submodules hold the channels and their views ([`channels`]) and the
//! paced wait ([`wait`]).

mod channels;
mod wait;

pub(crate) use channels::{claim, free_channels, release, ShmTeam, SmallTeam};
pub(crate) use wait::{wait_until, OVERSUBSCRIBED};

use std::sync::atomic::AtomicU64;
use std::sync::OnceLock;

use gex_core::{shm, Runtime};
use gex_types::{Rank, Result};

/// EX-barrier channels per neighbourhood (bits of a `u64` free mask;
/// channel 0 belongs to the primordial team).
pub(crate) const CHANNELS: usize = 64;

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

/// The mapped area of this process's neighbourhood: `(1 + CHANNELS) * n`
/// slots for a neighbourhood of `n` ranks.
pub(crate) struct Area {
    base: *const Slot,
    /// Jobranks of the neighbourhood, ascending (local index order).
    nbrhd: Vec<Rank>,
    /// Whether the neighbourhood is the whole job.
    whole_job: bool,
    /// Process ids by local index, when every member can read every
    /// other's memory with `process_vm_readv` (probed at set-up); `None`
    /// otherwise.
    cma: Option<Vec<libc::pid_t>>,
}

// SAFETY: the area is shared memory accessed only through atomics, mapped
// for the rest of the process's life.
unsafe impl Send for Area {}
// SAFETY: as above.
unsafe impl Sync for Area {}

impl Area {
    fn all(&self) -> &'static [Slot] {
        // SAFETY: `base` is the start of a live, page-aligned, shared
        // mapping of at least `area_len(n)` bytes that is never unmapped
        // (the area lives in a static); it was zero-filled at creation, and
        // zero is a valid AtomicU64. Every access goes through atomics, so
        // concurrent use by other processes is not a data race.
        unsafe { std::slice::from_raw_parts(self.base, slot_count(self.nbrhd.len())) }
    }

    /// The GASNet-1 barrier's slots, by local index (= jobrank when the
    /// neighbourhood is the whole job, the only case that uses them).
    pub(crate) fn slots(&self) -> &'static [Slot] {
        &self.all()[..self.nbrhd.len()]
    }

    /// Whether every rank of the job shares this neighbourhood.
    pub(crate) fn whole_job(&self) -> bool {
        self.whole_job
    }

    /// The process id of local index `local`, if single-copy reads from
    /// other members' memory work here (`crate::shm::data`'s large
    /// broadcasts).
    pub(crate) fn cma_pid(&self, local: usize) -> Option<libc::pid_t> {
        self.cma.as_ref().map(|p| p[local])
    }

    /// The local index of `jobrank`, if it shares this neighbourhood.
    pub(crate) fn local_index(&self, jobrank: Rank) -> Option<usize> {
        self.nbrhd.binary_search(&jobrank).ok()
    }

    /// The data control slot of local index `local`.
    pub(crate) fn data_ctl(&self, local: usize) -> &'static DataCtl {
        let n = self.nbrhd.len();
        assert!(local < n, "data slot out of range");
        // SAFETY: `data_offset(n) + n * SLOT` bytes lie inside the mapping
        // (`area_len`), the offset is 128-byte aligned (page-aligned plus
        // multiples of SLOT), the memory was zero-filled at creation (zero
        // is a valid `DataCtl`: `AtomicU64`s only) and is only accessed
        // through atomics; the mapping lives for the rest of the process.
        unsafe { &*((self.base as *const u8).add(data_offset(n) + local * SLOT) as *const DataCtl) }
    }

    /// Start of chunk slot `slot` (< [`SLOTS`], [`CHUNK`] bytes) of the
    /// data buffers of local index `local` (two [`HALF`]-byte buffers, one
    /// after the other). Accessed with raw copies only, under the
    /// `posted`/`done` protocol of `crate::shm::data`.
    pub(crate) fn data_slot(&self, local: usize, slot: usize) -> *mut u8 {
        let n = self.nbrhd.len();
        assert!(local < n && slot < SLOTS, "data slot out of range");
        // SAFETY: the offset stays inside the mapping (`area_len`): the
        // rank's `2 * HALF` bytes of buffers hold `SLOTS` chunks.
        unsafe { (self.base as *mut u8).add(buffers_offset(n) + local * 2 * HALF + slot * CHUNK) }
    }

    /// Start of the small-message region ([`SMALL_REGION`] bytes,
    /// 128-byte aligned, zero-filled at creation) of local index `local`
    /// in channel `ch`. Accessed under the protocol of `crate::shm::small`.
    pub(crate) fn small_region(&self, ch: usize, local: usize) -> *mut u8 {
        let n = self.nbrhd.len();
        assert!(ch < CHANNELS && local < n, "small region out of range");
        // SAFETY: the offset stays inside the mapping (`area_len`:
        // `CHANNELS * n` regions after `small_offset(n)`).
        unsafe { (self.base as *mut u8).add(small_offset(n) + (ch * n + local) * SMALL_REGION) }
    }

    /// The EX-barrier counter of the rank of local index `local` in
    /// channel `ch`.
    pub(crate) fn counter(&self, ch: usize, local: usize) -> &'static AtomicU64 {
        let n = self.nbrhd.len();
        assert!(ch < CHANNELS && local < n, "channel slot out of range");
        &self.all()[n * (1 + ch) + local].seq
    }
}

fn slot_count(n: usize) -> usize {
    n * (1 + CHANNELS)
}

/// Bytes of one of the two data buffers of each rank.
pub(crate) const HALF: usize = 64 << 10;

/// Bytes of one chunk of a shared-memory data collective: a payload
/// travels in chunks this size, so that readers copy one chunk out while
/// the writer copies the next in (a 64 KiB broadcast is four chunks, not
/// one copy after the other).
pub(crate) const CHUNK: usize = 16 << 10;

/// Chunk slots in a rank's two buffers.
pub(crate) const SLOTS: usize = 2 * HALF / CHUNK;

/// Where the data area starts: after the slots, page-aligned.
fn data_offset(n: usize) -> usize {
    (slot_count(n) * SLOT).div_ceil(4096) * 4096
}

/// Where the buffers start: after the data control slots, page-aligned.
fn buffers_offset(n: usize) -> usize {
    data_offset(n) + (n * SLOT).div_ceil(4096) * 4096
}

/// Where the small-message regions start: after the buffers,
/// page-aligned.
fn small_offset(n: usize) -> usize {
    (buffers_offset(n) + n * 2 * HALF).div_ceil(4096) * 4096
}

/// Inline slots per rank and channel (`crate::shm::small`): how many
/// small operations a writer may run ahead of the slowest reader.
pub(crate) const SMALL_DEPTH: usize = 32;

/// Bytes of a slot's line: a 16-byte header (sequence, signature) and up
/// to [`SMALL_TINY`] bytes of data.
pub(crate) const SMALL_LINE: usize = 64;

/// Data that travels in the slot's line itself.
pub(crate) const SMALL_TINY: usize = SMALL_LINE - 16;

/// The most data one slot holds (more than [`SMALL_TINY`] bytes go in the
/// slot's data block, not its line).
pub(crate) const SMALL_MAX: usize = 1024;

/// Where a rank's slot lines start in its region: after the
/// acknowledgements (one `u64` per slot, two 128-byte lines).
pub(crate) const SMALL_LINES_AT: usize = 256;

/// Where the data blocks start: after the lines.
pub(crate) const SMALL_BLOCKS_AT: usize = SMALL_LINES_AT + SMALL_DEPTH * SMALL_LINE;

/// Bytes of one rank's small-message region in one channel:
/// acknowledgements, lines (contiguous, so a reader going through them in
/// order is helped by the hardware prefetcher), data blocks.
pub(crate) const SMALL_REGION: usize = SMALL_BLOCKS_AT + SMALL_DEPTH * SMALL_MAX;

const _: () = assert!(SMALL_DEPTH * 8 <= SMALL_LINES_AT);
const _: () = assert!(SMALL_REGION.is_multiple_of(128) && SMALL_BLOCKS_AT.is_multiple_of(128));

fn area_len(n: usize) -> usize {
    small_offset(n) + CHANNELS * n * SMALL_REGION
}

/// A rank's control slot of the data collectives.
#[repr(C, align(128))]
pub(crate) struct DataCtl {
    /// `(op << 20) | chunks`: the chunks of data operation `op` this rank
    /// has written into its buffers so far (release, after the data).
    pub(crate) posted: AtomicU64,
    /// `(op << 20) | chunks`: how far this rank has consumed the data of
    /// operation `op` (release, after its reads); `(op + 1) << 20` once it
    /// is done with `op` and every operation before.
    pub(crate) done: AtomicU64,
    /// The signature of this rank's operation `op` (written before its
    /// first chunk is posted): what readers compare theirs with.
    pub(crate) sig: AtomicU64,
    /// The operation whose data this rank offers in its own memory
    /// instead of its buffers (a single-copy broadcast root), and where:
    /// written before `posted`.
    pub(crate) cma_op: AtomicU64,
    /// The address of that data in this rank's process.
    pub(crate) cma_addr: AtomicU64,
    /// `(op << 20) | chunks`: the chunks of a reduce-scatter reduction
    /// `op` whose share this rank has reduced and published in its own
    /// buffers (release, after the share; `crate::shm::data`'s "Reduce-
    /// scatter").
    pub(crate) red: AtomicU64,
}

const _: () = assert!(std::mem::size_of::<DataCtl>() == SLOT);

static AREA: OnceLock<Area> = OnceLock::new();

/// The neighbourhood of every jobrank (its lowest jobrank), when every
/// rank agreed to use the areas.
static NBRHDS: OnceLock<Box<[Rank]>> = OnceLock::new();

/// Keeps the neighbourhoods the set-up exchange reported (`all[r][2..6]`,
/// rank `r`'s lowest neighbour), if they are consistent: every entry a
/// jobrank no greater than its rank, each neighbourhood's lowest rank its
/// own, and this process's as it knows it. Otherwise none (the
/// collectives then stay flat).
fn set_nbrhds(all: &[Vec<u8>], jobsize: Rank, me: Rank, leader: Rank) {
    let of: Option<Vec<Rank>> = all
        .iter()
        .map(|v| {
            v.get(2..6)
                .and_then(|b| b.try_into().ok())
                .map(u32::from_le_bytes)
        })
        .collect();
    let Some(of) = of else { return };
    let sane = of.len() == jobsize as usize
        && of
            .iter()
            .enumerate()
            .all(|(r, &l)| l as usize <= r && of[l as usize] == l)
        && of[me as usize] == leader;
    if sane {
        let _ = NBRHDS.set(of.into());
    }
}

/// The neighbourhood (its lowest jobrank) of every jobrank, if the areas
/// are in use; the same answer on every rank.
pub(crate) fn nbrhds() -> Option<&'static [Rank]> {
    NBRHDS.get().map(|b| &b[..])
}

/// Where the set-up exchange's shared-memory handle starts: after the
/// two flags, the process id (4 bytes) and the probe address (8).
const PROBE_AT: usize = 14;

/// A word the other members read at set-up to see whether single-copy
/// reads (`process_vm_readv`) work between the job's processes.
static PROBE: u64 = 0x6765_782d_636d_6121;

/// Whether `process_vm_readv` reads [`PROBE`] at `addr` in process `pid`
/// (refused by a seccomp filter, a ptrace policy or a missing syscall:
/// then the data collectives copy through the area only).
fn probe_cma(pid: libc::pid_t, addr: u64) -> bool {
    let mut got = 0u64;
    // SAFETY: `got` is 8 writable bytes of this frame.
    let ok = unsafe { read_process(pid, addr, std::ptr::addr_of_mut!(got) as *mut u8, 8) };
    ok.is_ok() && got == PROBE
}

/// Reads `len` bytes at `addr` in process `pid` into `dst` with
/// `process_vm_readv` (the kernel checks the other process's mapping and
/// this process's right to read it; a bad address is an error, never a
/// fault here).
///
/// # Safety
///
/// `dst` is valid for writes of `len` bytes, and nothing else accesses
/// them meanwhile.
pub(crate) unsafe fn read_process(
    pid: libc::pid_t,
    addr: u64,
    dst: *mut u8,
    len: usize,
) -> std::io::Result<()> {
    let mut done = 0usize;
    while done < len {
        let local = libc::iovec {
            iov_base: dst.wrapping_add(done) as *mut libc::c_void,
            iov_len: len - done,
        };
        let remote = libc::iovec {
            iov_base: (addr as usize).wrapping_add(done) as *mut libc::c_void,
            iov_len: len - done,
        };
        // SAFETY: the local iovec is `len - done` writable bytes of the
        // caller's `dst` (its contract); the remote one is only an
        // address in the other process, which the kernel checks.
        let r = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if r == 0 {
            return Err(std::io::Error::other("process_vm_readv read nothing"));
        }
        done += r as usize;
    }
    Ok(())
}

/// The area, if every rank agreed to use the areas and this neighbourhood
/// has more than one rank.
pub(crate) fn area() -> Option<&'static Area> {
    AREA.get()
}

fn object_name(rt: &Runtime, leader: Rank) -> String {
    shm::object_name(rt.conduit().bootstrap().job_id(), &format!("coll{leader}"))
}

/// Sets the areas up at client init, collectively over the job (two
/// control-plane exchanges unless the job has one rank); with `force_am`
/// (`CollSettings::force_am`) this rank wants none, and so no rank uses
/// one.
pub(crate) fn setup(
    rt: &'static Runtime,
    force_am: bool,
    single_copy: bool,
    hier: bool,
) -> Result<()> {
    if rt.jobsize() < 2 {
        return Ok(());
    }
    let nbrhd = rt.conduit().layout().nbrhd.clone();
    let n = nbrhd.len();
    let me = rt.jobrank();
    let leader = nbrhd.first().copied().unwrap_or(me);
    // A neighbourhood of one needs no area (its teams have one member).
    let needs = n >= 2;
    let want = !force_am;
    let name = object_name(rt, leader);
    let len = area_len(n);
    let mut created: Option<shm::Region> = None;
    let mut mapped: Option<shm::Mapping> = None;
    let mut why = String::new();
    if needs && me == leader && want {
        match shm::create(&name, len) {
            Ok(r) => created = Some(r),
            Err(e) => why = e.to_string(),
        }
    }
    let mut mine = vec![want as u8, created.is_some() as u8];
    // This process's id and the address of a word with a known value, for
    // the others' single-copy probe.
    mine.extend_from_slice(&std::process::id().to_le_bytes());
    mine.extend_from_slice(&(std::ptr::addr_of!(PROBE) as u64).to_le_bytes());
    if let Some(r) = &created {
        mine.extend_from_slice(&r.handle().encode());
    }
    let all = rt.bootstrap_exchange(&mine)?;
    let everyone_wants = all.iter().all(|v| v.first() == Some(&1));
    let handle = all[leader as usize]
        .get(PROBE_AT..)
        .and_then(shm::Handle::decode)
        .filter(|_| all[leader as usize].get(1) == Some(&1));
    if let (true, true, Some(h), true) = (needs, everyone_wants, handle, me != leader) {
        match shm::open(&h, &name, len) {
            Ok(m) => mapped = Some(m),
            Err(e) => why = e.to_string(),
        }
    }
    // Single-copy reads: this rank reads its successor's probe word.
    let pids: Vec<libc::pid_t> = nbrhd
        .iter()
        .map(|&r| {
            let v = &all[r as usize];
            let b = v.get(2..6).and_then(|b| b.try_into().ok());
            b.map_or(0, |b| u32::from_le_bytes(b) as libc::pid_t)
        })
        .collect();
    let cma_ok = single_copy && n >= 2 && {
        let local = nbrhd.binary_search(&me).unwrap_or(0);
        let next = nbrhd[(local + 1) % n] as usize;
        let addr = all[next]
            .get(6..PROBE_AT)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u64::from_le_bytes);
        probe_cma(pids[(local + 1) % n], addr)
    };
    // The creator's descriptor stays open until every member has mapped
    // the area (or failed to), then closes: nothing outlives the job.
    let ok = !needs || mapped.is_some() || created.is_some();
    // With this rank's neighbourhood (its lowest jobrank), for the
    // hierarchical collectives of teams spanning several.
    let mut rec = vec![ok as u8, cma_ok as u8];
    rec.extend_from_slice(&leader.to_le_bytes());
    rec.push(hier as u8);
    let all = rt.bootstrap_exchange(&rec)?;
    // Every member of this neighbourhood must be able to read (the others
    // are in other neighbourhoods, but one answer for the job is simpler
    // and the same on every rank).
    let cma = all.iter().all(|v| v.get(1) == Some(&1)).then_some(pids);
    if let Some(r) = created {
        mapped = Some(r.into_mapping());
    }
    let use_it = everyone_wants && all.iter().all(|v| v.first() == Some(&1));
    if use_it && all.iter().all(|v| v.get(6) == Some(&1)) {
        set_nbrhds(&all, rt.jobsize(), me, leader);
    }
    match (use_it, mapped) {
        (true, Some(m)) => {
            let _ = AREA.set(Area {
                base: m.leak() as *const Slot,
                whole_job: n == rt.jobsize() as usize,
                nbrhd,
                cma,
            });
        }
        // Not used: unmapped on drop.
        (false, Some(m)) => drop(m),
        _ => {}
    }
    if everyone_wants && !use_it && !why.is_empty() {
        eprintln!("gex-coll on rank {me}: shared-memory barriers unavailable ({why}); using Active Messages");
    }
    Ok(())
}
