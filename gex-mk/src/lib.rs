//! Memory kinds and created segments for gex (`gasnet_mk.h` and the
//! segment calls of the memory-kinds proposal).
//!
//! - [`Mk`] (`gex_MK_t`): a memory kind. [`Mk::host`] is `GEX_MK_HOST`;
//!   [`mk_create`] (`gex_MK_Create`) makes a kind of a class ([`MkClass`])
//!   from its arguments ([`MkArgs`]), [`Mk::destroy`] (`gex_MK_Destroy`)
//!   ends it. Host memory works everywhere. The device classes (CUDA UVA,
//!   HIP, Level Zero) are recognised: a device crate implements
//!   [`MemoryKind`] and registers its class with [`register_class`]; without
//!   one, creating a kind of that class is a `BadArg` error naming the
//!   missing runtime.
//! - [`segment_create`] (`gex_Segment_Create` with memory the library
//!   allocates) and [`segment_create_at`] (over client memory),
//!   [`segment_destroy`] (`gex_Segment_Destroy`).
//! - [`ep_bind_segment`] (`gex_EP_BindSegment`) binds a created segment to
//!   a created endpoint, [`ep_publish_bound_segment`]
//!   (`gex_EP_PublishBoundSegment`, collective over any team: the control
//!   plane's all-gather for the primordial team, gex-coll's gather-all for
//!   a split or created one) makes the bound segments of endpoints known to
//!   every member of the team. After that, RMA over a
//!   TM-pair naming the endpoint reaches the segment (`gex_rma`: a direct
//!   copy when it is mapped here, else Active Messages), with the same
//!   bounds checks as the primordial segment; queries
//!   (`TmRef::query_bound_segment`, `query_bound_segment_nb`) report it.
//! - A job may also bind created segments to the primordial endpoints
//!   instead of calling `gex_Segment_Attach` (the spec reserves that for a
//!   future release; the reference allows it, and its `testsegment` relies
//!   on it: API.md, "Leniencies"). Once published, such a segment serves
//!   everything that addresses the primordial endpoints' segments: RMA,
//!   Long Active Messages, VIS and remote atomics over teams.
//!
//! Library memory of the host kind is a shared-memory object
//! (`gex_core::shm`), so the ranks of a neighbourhood map each other's
//! created segments at publication and copy directly; client memory is
//! private to its process and reached through Active Messages.
//!
//!
//! # Design
//!
//! A memory kind (`Mk`) wraps an `Arc<dyn MemoryKind>`: the trait says
//! the kind's class, whether the CPU may load and store its memory, and
//! allocates memory for a segment (`KindMemory`: base, length, how a
//! neighbour maps it, release). A CUDA kind would live in a crate of its
//! own linking the driver API: `allocate` is `cuMemAlloc`, `share` an IPC
//! handle (`cuIpcGetMemHandle`) that neighbours open with
//! `cuIpcOpenMemHandle`, `release` is `cuMemFree` after peers closed
//! theirs; `host_accessible` false. The RMA hook for memory the CPU cannot
//! access is not there yet, so segment creation refuses such a kind.
//!
//! A created segment is a gex-core `Segment` with a `created` part: its
//! kind (opaque to the core), the backing (the `KindMemory`, or nothing for
//! client memory), the endpoints it is bound to (one segment may be bound
//! to several endpoints of its process, as the reference allows) and a
//! destroyed flag. Host library memory is a memfd (`gex_core::shm`), kept
//! open until destroy so neighbours can map it when it is published.
//!
//! The tables of bound segments, their fast forms, publication and destroy
//! are gex-core's (`gex_core::epseg`). Publication over the primordial team
//! uses the control plane's all-gather; a team other than the primordial one
//! exists only through gex-coll, so over such a team it is gex-coll's
//! gather-all, twice (every member's length, then the contributions padded
//! to the longest; a length above what 31 entries can take is an error
//! naming the member). That is why this crate depends on gex-coll, and the
//! facade's `mk` feature enables `coll`.

#![warn(missing_docs)]

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use gex_core::conduit::SegmentDesc;
use gex_core::internals::*;
use gex_core::shm;
use gex_core::{context, report, Client, Ep, Segment, Tm};
use gex_types::{EpIndex, Error, Flags, Rank, Result, MAX_EPS};

/// A class of memory kinds (`gex_MK_Class_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MkClass {
    /// Host memory (`GEX_MK_CLASS_HOST`).
    Host,
    /// CUDA UVA device memory (`GEX_MK_CLASS_CUDA_UVA`).
    CudaUva,
    /// HIP device memory (`GEX_MK_CLASS_HIP`).
    Hip,
    /// oneAPI Level Zero device memory (`GEX_MK_CLASS_ZE`).
    Ze,
}

impl MkClass {
    /// The spec's name of the class.
    pub fn spec_name(self) -> &'static str {
        match self {
            MkClass::Host => "GEX_MK_CLASS_HOST",
            MkClass::CudaUva => "GEX_MK_CLASS_CUDA_UVA",
            MkClass::Hip => "GEX_MK_CLASS_HIP",
            MkClass::Ze => "GEX_MK_CLASS_ZE",
        }
    }

    /// The runtime a kind of this class needs.
    pub fn runtime_name(self) -> &'static str {
        match self {
            MkClass::Host => "none",
            MkClass::CudaUva => "the CUDA driver and runtime",
            MkClass::Hip => "the HIP (ROCm) runtime",
            MkClass::Ze => "the oneAPI Level Zero runtime",
        }
    }
}

/// The arguments of `gex_MK_Create` (`gex_MK_Create_args_t`): the class
/// and its device, one variant per class instead of the C union.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MkArgs {
    /// Host memory.
    Host,
    /// `gex_class_cuda_uva.gex_CUdevice`.
    CudaUva {
        /// The CUDA device ordinal.
        device: i32,
    },
    /// `gex_class_hip.gex_hipDevice`.
    Hip {
        /// The HIP device ordinal.
        device: i32,
    },
    /// `gex_class_ze`: device and context handles, memory ordinal.
    Ze {
        /// `ze_device_handle_t`, as an integer.
        device: usize,
        /// `ze_context_handle_t`, as an integer.
        context: usize,
        /// The memory ordinal.
        memory_ordinal: u32,
    },
}

impl MkArgs {
    /// The class these arguments are for.
    pub fn class(&self) -> MkClass {
        match self {
            MkArgs::Host => MkClass::Host,
            MkArgs::CudaUva { .. } => MkClass::CudaUva,
            MkArgs::Hip { .. } => MkClass::Hip,
            MkArgs::Ze { .. } => MkClass::Ze,
        }
    }
}

/// Memory a kind obtained for a segment ([`MemoryKind::allocate`]).
///
/// # Safety
///
/// `[base(), base() + len())` must be memory this process may read and
/// write (with the CPU, if the kind says it is host accessible), mapped
/// from allocation until `release` and harmless to access after it (the
/// tables and peers may still name it), and for the rest of the process
/// if the value is dropped without `release`; `share` must name an object
/// of `len()` bytes holding that memory.
pub unsafe trait KindMemory: Send {
    /// Base address in this process (a device address for a device kind).
    fn base(&self) -> usize;
    /// Length in bytes.
    fn len(&self) -> usize;
    /// Whether the length is 0 (never, for memory of a segment).
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// How a process of the same neighbourhood maps this memory, if it can
    /// (host memory in a shared-memory object).
    fn share(&self) -> Option<shm::Handle>;
    /// Gives the memory back (at `gex_Segment_Destroy`; memory dropped
    /// without it must stay valid, since tables may still name it). Peers
    /// may still
    /// hold mappings or send to the segment while they learn of the
    /// destruction: the address range must stay harmless to access (the
    /// host kind replaces the pages with private anonymous ones).
    fn release(self: Box<Self>);
}

/// A memory kind: what a device crate implements to add a class (see the
/// crate docs, "Design", for what a CUDA kind would do).
pub trait MemoryKind: Send + Sync + 'static {
    /// Its class.
    fn class(&self) -> MkClass;
    /// A description for messages (`host`, `CUDA device 0`).
    fn describe(&self) -> String;
    /// Whether the CPU may load and store this memory directly. The RMA
    /// direct route and the Active Message handlers copy with the CPU, so
    /// a segment of a kind that says no cannot be created until the RMA
    /// layer routes such segments through the kind's own copies.
    fn host_accessible(&self) -> bool;
    /// Allocates `len` bytes for a segment created with library memory;
    /// `name` names the object (for shared memory: its memfd name).
    fn allocate(&self, name: &str, len: usize) -> Result<Box<dyn KindMemory>>;
}

/// The host kind: shared-memory objects (memfd), so that the processes of
/// a neighbourhood map each other's created segments.
struct HostKind;

struct HostMemory {
    region: Option<shm::Region>,
    len: usize,
}

// SAFETY: the memory is a memfd mapping of `len` bytes owned by the
// region; `release` replaces its pages in place and `Drop` leaks it, so it
// is never unmapped.
unsafe impl KindMemory for HostMemory {
    fn base(&self) -> usize {
        self.region.as_ref().map_or(0, |r| r.ptr() as usize)
    }
    fn len(&self) -> usize {
        self.len
    }
    fn share(&self) -> Option<shm::Handle> {
        self.region.as_ref().map(|r| r.handle())
    }
    fn release(mut self: Box<Self>) {
        let Some(region) = self.region.take() else {
            return;
        };
        // Close the descriptor (no peer can open the object any more) and
        // keep the address range: a stale direct copy racing with the
        // destruction (a program error) must not fault, so the shared
        // pages are replaced by private anonymous ones, and the range stays
        // reserved for the rest of the process.
        let map = region.into_mapping();
        let len = map.len();
        let p = map.leak();
        if let (Some(addr), Some(len)) = (NonZeroUsize::new(p as usize), NonZeroUsize::new(len)) {
            // SAFETY: `[p, p + len)` is a mapping this process made and
            // leaked above, referred to by no Rust reference; MAP_FIXED
            // replaces exactly those pages with fresh zero pages.
            let r = unsafe {
                nix::sys::mman::mmap_anonymous(
                    Some(addr),
                    len,
                    nix::sys::mman::ProtFlags::PROT_READ | nix::sys::mman::ProtFlags::PROT_WRITE,
                    nix::sys::mman::MapFlags::MAP_PRIVATE | nix::sys::mman::MapFlags::MAP_FIXED,
                )
            };
            if let Err(e) = r {
                gex_core::fatal(&format!(
                    "gex_Segment_Destroy: cannot release the segment's memory at {p:p} (+{len}): {e}"
                ));
            }
        }
    }
}

impl Drop for HostMemory {
    fn drop(&mut self) {
        // Dropped without `release` (every handle of a segment the program
        // never destroyed is gone): this process's table, and peers' Active
        // Messages, may still name the memory, so it stays mapped (and its
        // descriptor open) for the rest of the process.
        if let Some(region) = self.region.take() {
            std::mem::forget(region);
        }
    }
}

impl MemoryKind for HostKind {
    fn class(&self) -> MkClass {
        MkClass::Host
    }
    fn describe(&self) -> String {
        "host memory (GEX_MK_HOST)".to_string()
    }
    fn host_accessible(&self) -> bool {
        true
    }
    fn allocate(&self, name: &str, len: usize) -> Result<Box<dyn KindMemory>> {
        let region = shm::create(name, len)?;
        Ok(Box::new(HostMemory {
            region: Some(region),
            len,
        }))
    }
}

struct MkInner {
    kind: Arc<dyn MemoryKind>,
    predefined: bool,
    destroyed: AtomicBool,
    /// Process-unique number, for messages.
    id: u64,
}

/// A memory kind (`gex_MK_t`): a cheap handle; clones name the same kind.
#[derive(Clone)]
pub struct Mk(Arc<MkInner>);

impl std::fmt::Debug for Mk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mk#{}({})", self.0.id, self.0.kind.describe())
    }
}

impl PartialEq for Mk {
    fn eq(&self, o: &Mk) -> bool {
        Arc::ptr_eq(&self.0, &o.0)
    }
}
impl Eq for Mk {}

static NEXT_MK: AtomicU64 = AtomicU64::new(1);

static HOST: LazyLock<Mk> = LazyLock::new(|| {
    Mk(Arc::new(MkInner {
        kind: Arc::new(HostKind),
        predefined: true,
        destroyed: AtomicBool::new(false),
        id: 0,
    }))
});

impl Mk {
    /// The predefined host kind (`GEX_MK_HOST`).
    pub fn host() -> Mk {
        HOST.clone()
    }

    /// The kind's class.
    pub fn class(&self) -> MkClass {
        self.0.kind.class()
    }

    /// The kind's description (for messages).
    pub fn describe(&self) -> String {
        self.0.kind.describe()
    }

    /// Whether [`Mk::destroy`] was called on it.
    pub fn is_destroyed(&self) -> bool {
        self.0.destroyed.load(Ordering::Acquire)
    }

    /// Destroys the kind (`gex_MK_Destroy`): segments may no longer be
    /// created of it (segments created before keep their memory until
    /// destroyed). `flags` must be empty. `GEX_MK_HOST` cannot be destroyed,
    /// nor a kind twice: both are errors naming it.
    pub fn destroy(&self, flags: Flags) -> Result<()> {
        const CALL: &str = "gex_MK_Destroy";
        if !flags.is_empty() {
            return Err(Error::bad_arg(format!(
                "{CALL}: flags must be 0, got {flags:?}"
            )));
        }
        if self.0.predefined {
            return Err(Error::bad_arg(format!(
                "{CALL}: GEX_MK_HOST is predefined and cannot be destroyed"
            )));
        }
        if self.0.destroyed.swap(true, Ordering::AcqRel) {
            return Err(Error::bad_arg(format!(
                "{CALL}: memory kind {self:?} was destroyed already"
            )));
        }
        Ok(())
    }

    fn check_alive(&self, call: &str) -> Result<()> {
        if self.is_destroyed() {
            return Err(Error::bad_arg(format!(
                "{call}: memory kind {self:?} was destroyed (gex_MK_Destroy)"
            )));
        }
        Ok(())
    }
}

/// What makes a kind of a device class: registered by a device crate.
pub type KindFactory = fn(&Client, &MkArgs) -> Result<Arc<dyn MemoryKind>>;

static CLASSES: LazyLock<Mutex<HashMap<MkClass, KindFactory>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Registers the factory of a device class (for a device crate: a CUDA
/// crate registers [`MkClass::CudaUva`] once it found a device). The host
/// class is built in and cannot be replaced; registering a class twice is
/// an error.
pub fn register_class(class: MkClass, factory: KindFactory) -> Result<()> {
    if class == MkClass::Host {
        return Err(Error::bad_arg(
            "gex_mk::register_class: GEX_MK_CLASS_HOST is built in",
        ));
    }
    let mut c = CLASSES.lock().unwrap_or_else(|p| p.into_inner());
    if c.contains_key(&class) {
        return Err(Error::bad_arg(format!(
            "gex_mk::register_class: {} has a factory already",
            class.spec_name()
        )));
    }
    c.insert(class, factory);
    Ok(())
}

/// Creates a memory kind (`gex_MK_Create`). `flags` must be empty.
/// [`MkArgs::Host`] gives a host kind (equivalent to `GEX_MK_HOST`). A
/// device class is made by the factory a device crate registered
/// ([`register_class`]); without one, the call is a `BadArg` error
/// (`GASNET_ERR_BAD_ARG`) saying which runtime this build lacks.
pub fn mk_create(client: &Client, args: &MkArgs, flags: Flags) -> Result<Mk> {
    const CALL: &str = "gex_MK_Create";
    context::check_may_communicate(CALL)?;
    if !flags.is_empty() {
        return Err(Error::bad_arg(format!(
            "{CALL}: flags must be 0, got {flags:?}"
        )));
    }
    let class = args.class();
    let kind: Arc<dyn MemoryKind> = if class == MkClass::Host {
        Arc::new(HostKind)
    } else {
        let f = CLASSES
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&class)
            .copied();
        let Some(f) = f else {
            // An unsupported class is a bad argument (GASNET_ERR_BAD_ARG),
            // as the memory-kinds documents say and the reference's device
            // tests expect; the message still names the missing runtime.
            return Err(report(Error::bad_arg(format!(
                "{CALL}: {} ({args:?}) needs {}, which this build of gex does not have (no device crate registered the class with gex_mk::register_class)",
                class.spec_name(),
                class.runtime_name()
            ))));
        };
        let kind = f(client, args)?;
        if kind.class() != class {
            return Err(Error::bad_arg(format!(
                "{CALL}: the factory of {} made a kind of {}",
                class.spec_name(),
                kind.class().spec_name()
            )));
        }
        kind
    };
    Ok(Mk(Arc::new(MkInner {
        kind,
        predefined: false,
        destroyed: AtomicBool::new(false),
        id: NEXT_MK.fetch_add(1, Ordering::Relaxed),
    })))
}

/// What a created segment's memory is, kept in the core's segment as its
/// backing.
struct Backing {
    /// Library memory (released at destroy); `None` for client memory.
    mem: Option<Box<dyn KindMemory>>,
    /// Process-unique serial (names the shared object).
    serial: u64,
}

static NEXT_SEGMENT: AtomicU64 = AtomicU64::new(1);

fn object_name(client: &Client, rank: Rank, serial: u64) -> String {
    let job = client.runtime().conduit().bootstrap().job_id().to_string();
    shm::object_name(&job, &format!("mk{rank}-{serial}"))
}

fn check_create(call: &str, mk: &Mk, len: usize, flags: Flags) -> Result<()> {
    context::check_may_communicate(call)?;
    if !flags.is_empty() {
        return Err(Error::bad_arg(format!(
            "{call}: flags must be 0, got {flags:?}"
        )));
    }
    mk.check_alive(call)?;
    if !mk.0.kind.host_accessible() {
        return Err(Error::bad_arg(format!(
            "{call}: memory kind {mk:?} is not accessible to the CPU, and the RMA layer copies with the CPU (device segments are not supported yet)"
        )));
    }
    if len == 0 {
        return Err(Error::bad_arg(format!("{call}: length 0")));
    }
    Ok(())
}

/// Creates a segment of `len` bytes of kind `mk` in memory the library
/// allocates (`gex_Segment_Create` with a null address). `flags` must be
/// empty and `len` non-zero; a destroyed kind is an error naming it. The
/// memory is zero-filled. The segment is not bound: see
/// [`ep_bind_segment`].
pub fn segment_create(client: &Client, mk: &Mk, len: usize, flags: Flags) -> Result<Segment> {
    const CALL: &str = "gex_Segment_Create";
    check_create(CALL, mk, len, flags)?;
    let serial = NEXT_SEGMENT.fetch_add(1, Ordering::Relaxed);
    let me = client.runtime().jobrank();
    let mem =
        mk.0.kind
            .allocate(&object_name(client, me, serial), len)
            .map_err(|e| {
                report(Error::resource(format!(
                    "{CALL}: {len} bytes of {mk:?}: {e}"
                )))
            })?;
    let base = mem.base();
    let backing = Backing {
        mem: Some(mem),
        serial,
    };
    // SAFETY: the kind allocated `len` bytes at `base` for this segment;
    // they stay mapped until `release` (which keeps the range harmless) or,
    // if never released, for the rest of the process (`Drop` of the
    // memory leaks it).
    Ok(
        unsafe {
            Segment::from_created(client, base, len, Arc::new(mk.clone()), Box::new(backing))
        },
    )
}

/// Creates a segment over `len` bytes of client memory at `addr`, of kind
/// `mk` (`gex_Segment_Create` with an address). `flags` must be empty,
/// `len` non-zero, `addr` non-null and the range must not wrap; a
/// destroyed kind is an error naming it. The memory is private to this
/// process, so peers reach it through Active Messages.
///
/// # Safety
///
/// `[addr, addr + len)` must be memory of kind `mk` that this process may
/// read and write, valid from this call until [`segment_destroy`] returns
/// and no operation targeting the segment is in flight, and not accessed
/// through Rust references meanwhile (peers write it at any time).
pub unsafe fn segment_create_at(
    client: &Client,
    addr: usize,
    len: usize,
    mk: &Mk,
    flags: Flags,
) -> Result<Segment> {
    const CALL: &str = "gex_Segment_Create";
    check_create(CALL, mk, len, flags)?;
    if addr == 0 || addr.checked_add(len).is_none() {
        return Err(Error::bad_arg(format!(
            "{CALL}: client memory [{addr:#x}, +{len}) is null or wraps around the address space"
        )));
    }
    let backing = Backing {
        mem: None,
        serial: NEXT_SEGMENT.fetch_add(1, Ordering::Relaxed),
    };
    // SAFETY: the caller's promise (this function's contract) is the one
    // `from_created` needs.
    Ok(
        unsafe {
            Segment::from_created(client, addr, len, Arc::new(mk.clone()), Box::new(backing))
        },
    )
}

/// The memory kind of a created segment (`None` for the attached one).
pub fn segment_kind(seg: &Segment) -> Option<Mk> {
    seg.created_kind()
        .and_then(|k| k.downcast_ref::<Mk>())
        .cloned()
}

/// Destroys a created segment (`gex_Segment_Destroy`): unbinds it from its
/// endpoint (which may then be bound to another segment), so that this
/// process no longer reaches it, and releases memory the library
/// allocated. `flags` must be empty. The attached segment, and a segment
/// destroyed already, are errors naming it.
///
/// As the spec requires, no communication may target the segment from
/// then on: peers learn of the destruction only by the program. A peer's
/// Active Message to it is a fatal error here naming the endpoint; a
/// peer's direct copy lands in its own mapping of memory no one else sees.
pub fn segment_destroy(seg: &Segment, flags: Flags) -> Result<()> {
    const CALL: &str = "gex_Segment_Destroy";
    context::check_may_communicate(CALL)?;
    if !flags.is_empty() {
        return Err(Error::bad_arg(format!(
            "{CALL}: flags must be 0, got {flags:?}"
        )));
    }
    let backing = seg.destroy_created()?;
    if let Ok(b) = backing.downcast::<Backing>() {
        if let Some(mem) = b.mem {
            mem.release();
        }
    }
    Ok(())
}

/// Binds `seg` to the endpoint `ep` (`gex_EP_BindSegment`), so that RMA
/// over TM-pairs naming `ep`'s index reaches it: from this process at
/// once, from the other members of a team after
/// [`ep_publish_bound_segment`]. `flags` must be empty.
///
/// `ep` may be the primordial endpoint of a rank that did not attach (as
/// the reference allows): its bound segment is then what teams, Long
/// Active Messages, VIS and atomics address on this rank, and this rank
/// can no longer attach. One segment may be bound to several endpoints
/// (as the reference's `testsegment` does). Binding an endpoint that has
/// a segment (the primordial one of a rank that attached included), a
/// destroyed segment or the attached segment are errors naming them.
pub fn ep_bind_segment(ep: &Ep, seg: &Segment, flags: Flags) -> Result<()> {
    const CALL: &str = "gex_EP_BindSegment";
    context::check_may_communicate(CALL)?;
    if !flags.is_empty() {
        return Err(Error::bad_arg(format!(
            "{CALL}: flags must be 0, got {flags:?}"
        )));
    }
    ep.bind_created(seg)
}

/// One published entry: endpoint index, segment, how to map it.
struct Entry {
    index: EpIndex,
    owner_base: usize,
    size: usize,
    share: Option<(shm::Handle, u64)>,
}

const ENTRY_BYTES: usize = 1 + 8 + 8 + 1 + shm::Handle::BYTES + 8;

fn encode(entries: &[Entry]) -> Vec<u8> {
    let mut v = vec![0u8];
    for e in entries {
        v.push(e.index as u8);
        v.extend_from_slice(&(e.owner_base as u64).to_le_bytes());
        v.extend_from_slice(&(e.size as u64).to_le_bytes());
        match &e.share {
            Some((h, serial)) => {
                v.push(1);
                v.extend_from_slice(&h.encode());
                v.extend_from_slice(&serial.to_le_bytes());
            }
            None => {
                v.push(0);
                v.extend_from_slice(&[0u8; shm::Handle::BYTES + 8]);
            }
        }
    }
    v
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Decodes rank `r`'s contribution: its entries, or its error message.
fn decode(r: usize, b: &[u8]) -> std::result::Result<Vec<Entry>, String> {
    match b.first() {
        Some(0) => {}
        Some(1) => return Err(String::from_utf8_lossy(&b[1..]).into_owned()),
        _ => return Err(format!("rank {r} sent a malformed publication")),
    }
    let body = &b[1..];
    if !body.len().is_multiple_of(ENTRY_BYTES) {
        return Err(format!("rank {r} sent a malformed publication"));
    }
    let mut out = Vec::new();
    for e in body.chunks_exact(ENTRY_BYTES) {
        let index = EpIndex::from(e[0]);
        let owner_base = u64_at(e, 1) as usize;
        let size = u64_at(e, 9) as usize;
        if index as usize >= MAX_EPS || size == 0 {
            return Err(format!(
                "rank {r} published endpoint {index} with a segment of {size} bytes"
            ));
        }
        let share = match e[17] {
            0 => None,
            1 => {
                let h =
                    shm::Handle::decode(&e[18..18 + shm::Handle::BYTES]).expect("length checked");
                Some((h, u64_at(e, 18 + shm::Handle::BYTES)))
            }
            _ => return Err(format!("rank {r} sent a malformed publication")),
        };
        out.push(Entry {
            index,
            owner_base,
            size,
            share,
        });
    }
    Ok(out)
}

/// Publishes the bound segments of `eps` to every member of `tm`
/// (`gex_EP_PublishBoundSegment`). Collective over `tm`; `eps` may differ
/// between ranks (and be empty). After it returns, this process may
/// initiate RMA to the segment bound to any endpoint another member named,
/// through any TM-pair naming that endpoint's index. An endpoint without a
/// bound segment publishes nothing (as the spec permits); a later publish
/// replaces an endpoint's entry. The primordial endpoint may be named: an
/// attached segment is published by attach already, a created one bound
/// to it is published here (and is an error on every member if one of
/// them attached instead).
///
/// `tm` may be any team: the members of a team made by `gex_TM_Split` or
/// `gex_TM_Create` learn of each other's segments only (the other ranks
/// of the job keep what they knew). `flags` must be empty and the
/// endpoints distinct and of this client: a member that breaks a rule
/// makes the call fail on every member, with its message. Segments in
/// library memory are mapped by the members of this rank's
/// neighbourhood, which then copy directly; the others are reached
/// through Active Messages.
pub fn ep_publish_bound_segment(tm: &Tm, eps: &[&Ep], flags: Flags) -> Result<()> {
    const CALL: &str = "gex_EP_PublishBoundSegment";
    context::check_may_communicate(CALL)?;
    let client = tm.client();
    let rt = tm.ep().runtime();
    let me = rt.jobrank();
    let local: std::result::Result<Vec<Entry>, String> = (|| {
        if !flags.is_empty() {
            return Err(format!("flags must be 0, got {flags:?}"));
        }
        let mut seen = [false; MAX_EPS];
        let mut entries = Vec::new();
        for ep in eps {
            let i = ep.index();
            if std::mem::replace(&mut seen[i as usize], true) {
                return Err(format!("endpoint {i} is named twice"));
            }
            let Some(seg) = ep.segment() else { continue };
            if !seg.is_created() {
                // The primordial endpoint's attached segment: attach
                // published it already.
                continue;
            }
            let share = seg
                .with_backing(|b| {
                    let b = b.downcast_ref::<Backing>()?;
                    let h = b.mem.as_ref()?.share()?;
                    Some((h, b.serial))
                })
                .flatten();
            entries.push(Entry {
                index: i,
                owner_base: seg.addr(),
                size: seg.size(),
                share,
            });
        }
        Ok(entries)
    })();
    let msg = match &local {
        Ok(entries) => encode(entries),
        Err(why) => {
            let mut v = vec![1u8];
            v.extend_from_slice(why.as_bytes());
            v
        }
    };
    let all = team_exchange(CALL, tm, &msg)?;
    let mut decoded = Vec::with_capacity(all.len());
    for (r, b) in &all {
        match decode(*r as usize, b) {
            Ok(e) => decoded.push((*r, e)),
            Err(why) => {
                return Err(report(Error::bad_arg(format!("{CALL}: rank {r}: {why}"))));
            }
        }
    }
    // Map what the neighbourhood shares, then agree that every member could.
    let nbrhd = &rt.conduit().layout().nbrhd;
    let mut changes: Vec<Vec<(Rank, Option<SegmentDesc>)>> = vec![Vec::new(); MAX_EPS];
    let mut open_err: Option<String> = None;
    for (r, entries) in &decoded {
        let r = *r;
        for e in entries {
            if e.index == 0 && rt.attached() {
                // A created segment bound to a primordial endpoint meets a
                // rank that attached: the two ways exclude each other.
                open_err.get_or_insert_with(|| {
                    format!(
                        "rank {r} published a created segment bound to its primordial endpoint, but rank {me} attached a segment (gex_Segment_Attach); a job uses one way or the other"
                    )
                });
                continue;
            }
            let local_base = if r == me {
                Some(e.owner_base)
            } else if let (true, Some((h, serial))) = (nbrhd.contains(&r), &e.share) {
                match shm::open(h, &object_name(client, r, *serial), e.size) {
                    // The mapping lives as long as the process: a reader
                    // may hold this table after a later publication
                    // replaced it.
                    Ok(m) => Some(m.leak() as usize),
                    Err(err) => {
                        open_err.get_or_insert_with(|| err.to_string());
                        None
                    }
                }
            } else {
                None
            };
            changes[e.index as usize]
                .push((r, Some(SegmentDesc::new(e.owner_base, local_base, e.size))));
        }
    }
    let verdicts = team_exchange(CALL, tm, open_err.as_deref().unwrap_or("").as_bytes())?;
    if let Some((r, why)) = verdicts.iter().find(|(_, m)| !m.is_empty()) {
        return Err(report(Error::resource(format!(
            "{CALL}: rank {r} could not take a published segment: {}",
            String::from_utf8_lossy(why)
        ))));
    }
    for (index, ch) in changes.iter().enumerate() {
        if !ch.is_empty() {
            // SAFETY: every local base is this rank's own bound segment
            // (promised to `Segment::from_created`) or a neighbour's object
            // mapped above and leaked, so mapped for the rest of the
            // process.
            unsafe { gex_core::epseg::update_ep_segments(index as EpIndex, rt.jobsize(), ch) }
                .map_err(|e| report(Error::bad_arg(format!("{CALL}: {}", e.message()))))?;
        }
    }
    Ok(())
}

/// The most one member may contribute to a publication's exchange: every
/// endpoint index with an entry, or a message.
const MAX_CONTRIBUTION: usize = 1 + MAX_EPS * ENTRY_BYTES + 4096;

/// Every member's `mine`, with its jobrank, in team rank order: an
/// all-gather among the members of `tm`. The primordial team uses the
/// control plane's exchange (it needs no layer); another team exists only
/// through gex-coll (`gex_TM_Split`, `gex_TM_Create`), whose gather-all
/// reaches exactly its members: first every member's length, then every
/// contribution padded to the longest. Lengths come from peers, so one
/// above [`MAX_CONTRIBUTION`] is an error naming the member, nothing
/// allocated for it.
fn team_exchange(call: &str, tm: &Tm, mine: &[u8]) -> Result<Vec<(Rank, Vec<u8>)>> {
    if tm.is_primordial() {
        let all = tm.ep().runtime().bootstrap_exchange(mine)?;
        return Ok(all
            .into_iter()
            .enumerate()
            .map(|(r, b)| (r as Rank, b))
            .collect());
    }
    let mine = &mine[..mine.len().min(MAX_CONTRIBUTION)];
    let n = tm.size() as usize;
    let mut lens = vec![0u8; 8 * n];
    gex_coll::gather_all(
        tm,
        &mut lens,
        &(mine.len() as u64).to_le_bytes(),
        Flags::empty(),
    )?;
    let mut sizes = Vec::with_capacity(n);
    for (t, l) in lens.chunks_exact(8).enumerate() {
        let l = u64::from_le_bytes(l.try_into().expect("8 bytes"));
        if l > MAX_CONTRIBUTION as u64 {
            return Err(report(Error::bad_arg(format!(
                "{call}: team rank {t} announced a publication of {l} bytes (at most {MAX_CONTRIBUTION})"
            ))));
        }
        sizes.push(l as usize);
    }
    let width = sizes.iter().copied().max().unwrap_or(0);
    let mut padded = mine.to_vec();
    padded.resize(width, 0);
    let mut all = vec![0u8; width * n];
    gex_coll::gather_all(tm, &mut all, &padded, Flags::empty())?;
    let mut out = Vec::with_capacity(n);
    for (t, &len) in sizes.iter().enumerate() {
        let at = t * width;
        out.push((tm.rank_to_jobrank(t as Rank)?, all[at..at + len].to_vec()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(index: EpIndex, share: bool) -> Entry {
        Entry {
            index,
            owner_base: 0x7f00_0000_1000,
            size: 65536,
            share: share.then_some((
                shm::Handle {
                    pid: 42,
                    fd: 7,
                    len: 65536,
                },
                9,
            )),
        }
    }

    #[test]
    fn publications_round_trip() {
        let b = encode(&[entry(1, true), entry(31, false)]);
        let d = decode(3, &b).unwrap();
        assert_eq!(d.len(), 2);
        assert_eq!(
            (d[0].index, d[0].owner_base, d[0].size),
            (1, 0x7f00_0000_1000, 65536)
        );
        let (h, serial) = d[0].share.unwrap();
        assert_eq!((h.pid, h.fd, h.len, serial), (42, 7, 65536, 9));
        assert!(d[1].share.is_none() && d[1].index == 31);
        assert!(decode(0, &encode(&[])).unwrap().is_empty());
        let mut err = vec![1u8];
        err.extend_from_slice(b"endpoint 1 is named twice");
        assert_eq!(decode(0, &err).err().unwrap(), "endpoint 1 is named twice");
    }

    #[test]
    fn malformed_publications_are_refused() {
        let good = encode(&[entry(2, true)]);
        // Truncated, empty, unknown status.
        assert!(decode(1, &good[..good.len() - 1]).is_err());
        assert!(decode(1, &[]).is_err());
        assert!(decode(1, &[7]).is_err());
        // Index MAX_EPS, a bad share byte.
        for (at, v) in [(1, MAX_EPS as u8), (18, 2)] {
            let mut b = good.clone();
            b[at] = v;
            assert!(decode(1, &b).is_err(), "byte {at} = {v}");
        }
        let mut b = good.clone();
        b[10..18].fill(0);
        let e = decode(1, &b).err().unwrap();
        assert!(e.contains("0 bytes"), "{e}");
        // Index 0: a created segment bound to the primordial endpoint.
        let d = decode(1, &encode(&[entry(0, false)])).unwrap();
        assert_eq!((d[0].index, d[0].size), (0, 65536));
    }

    #[test]
    fn device_classes_name_their_runtime() {
        for c in [MkClass::CudaUva, MkClass::Hip, MkClass::Ze] {
            assert!(c.spec_name().starts_with("GEX_MK_CLASS_"));
            assert_ne!(c.runtime_name(), "none");
        }
        assert_eq!(MkArgs::Hip { device: 1 }.class(), MkClass::Hip);
        assert!(register_class(MkClass::Host, |_, _| unreachable!()).is_err());
    }
}
