//! The process-wide runtime behind the client: the conduit, the segment
//! table, progress and waiting.
//!
//!
//! # Progress hooks
//!
//! Layers register hooks once at set-up (`Runtime::add_progress_hook`);
//! they run after every poll of `Runtime::progress`, so in every wait and
//! poll, and alone in event and NBI tests; never inside a handler, under an
//! HSL or inside Prepare/Commit, and never re-entered by the thread running
//! them. With no hook registered the cost is one relaxed load.
//!
//! # Waiting
//!
//! Every wait polls. `Runtime::wait_until` spins while polls find work and,
//! after a run of empty polls, yields the core; when the host runs more
//! ranks than cores, it yields after every empty poll, so a waiting rank
//! does not take the core of the rank it waits for. `gasnet_set_waitmode`
//! sets the process-wide `WaitMode` that `wait_step` and the shared-memory
//! collectives consult through `Runtime::idle_pause` after an empty poll: a
//! spin hint (`Spin`), a yield (`Block`), or a yield once the spin phase is
//! over (`SpinBlock`, the default). Yields are counted (`wait_yields`).
//!
//! *Time slices when oversubscribed.* A yield alone does not bring back the
//! rank waited for: under EEVDF the yielding rank gives up its slice and
//! whatever runs next keeps the core for a slice of its own (1.4 ms by
//! default on 2 cores), which made every barrier of 4 ranks on a busy
//! 2-core host cost milliseconds. So a rank whose host runs more ranks than
//! cores asks at init for the shortest time slice, 0.1 ms (`sched_setattr`
//! with a runtime on its time-sharing policy, nice value kept; a refusal,
//! or a kernel before 6.12, changes nothing). Ranks with a core each keep
//! the default slice.
//!
//! *Ranks that share a core.* The scheduler may put two ranks on one core
//! while each believes it has its own: a value one spinning rank waits for
//! from the other then moves once per time slice. So a thread whose polls
//! keep finding nothing looks, every `IDLE_LOOK` (64) empty polls, at
//! whether another rank of the host polls in vain on the same core
//! (`Conduit::core_shared_with_spinner`), and yields if so: client polls
//! (`Runtime::poll`) under every wait mode but `Spin`. The library's waits
//! (`wait_step`) record their core the same way but keep their own pace.
//! The smp transport (smp, and the bypass of udp and ibv) keeps one word
//! per member in the last cache line of its queue object: the core of the
//! member's last look (`sched_getcpu`) and when (monotonic ms); a look
//! counts a word of the same core written in the last 50 ms. Without memory
//! shared among the ranks (udp with `GEX_UDP_BYPASS=0`) the conduit cannot
//! tell, and its own pacing applies. test-ratomic's shared-core ring checks
//! it (2000 handoffs on one core within 4 s).

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use gex_types::{Error, Rank, RankInfo, Result};

use crate::conduit::{AmSink, Conduit, IncomingAm, PollScope, SegmentDesc};
use crate::context;

/// The one runtime of this process (the spec allows one client per job).
static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// The primordial endpoints' segment table, for the RMA fast path: one
/// load instead of a walk from the team through the client to the runtime.
/// Published once at attach; or, when the primordial endpoints' segments
/// are created ones bound with `gex_EP_BindSegment` instead (see
/// [`Primordial`]), replaced at each bind, publication and destruction,
/// as a created endpoint's table is ([`crate::epseg`]). Every table
/// stored here is leaked and never modified; the length (the job size)
/// never changes.
static SEGMENT_TABLE: AtomicPtr<SegmentDesc> = AtomicPtr::new(std::ptr::null_mut());
static SEGMENT_COUNT: AtomicUsize = AtomicUsize::new(0);

/// Where this rank's table of the primordial endpoints' segments comes
/// from. The two ways exclude each other for the life of the process, so
/// that a table of attached segments is never replaced (conduits register
/// and map those at attach) and a bound segment never meets the conduit's
/// attach-time state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Primordial {
    /// Neither yet.
    None,
    /// `gex_Segment_Attach`.
    Attached,
    /// Created segments bound to primordial endpoints (this rank's with
    /// `gex_EP_BindSegment`, peers' through `gex_EP_PublishBoundSegment`).
    Bound,
}

static PRIMORDIAL: Mutex<Primordial> = Mutex::new(Primordial::None);
/// `PRIMORDIAL == Attached`, for the paths that only read it.
static ATTACHED: AtomicBool = AtomicBool::new(false);
/// `PRIMORDIAL == Bound`, for the paths that only read it.
static BOUND: AtomicBool = AtomicBool::new(false);

/// Where this rank's primordial segment table comes from.
pub fn primordial_source() -> Primordial {
    *PRIMORDIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether this rank attached a segment (`gex_Segment_Attach`): the
/// conduit then knows every primordial endpoint's segment itself. When it
/// did not, a primordial endpoint's segment, if any, is a created one
/// (bound with `gex_EP_BindSegment`), which conduits reach as they reach
/// a created endpoint's ([`crate::conduit::epseg`]).
///
/// For layer authors.
#[inline]
pub fn primordial_attached() -> bool {
    ATTACHED.load(Ordering::Acquire)
}

/// Whether this rank's primordial endpoints' segments are created ones
/// bound to them ([`Primordial::Bound`]): the conduit did not attach, and
/// reaches them as created endpoints' segments.
///
/// For layer authors.
#[inline]
pub fn primordial_bound() -> bool {
    BOUND.load(Ordering::Acquire)
}

/// Every rank's bound segment, indexed by jobrank (`None` before attach,
/// or before a created segment was bound to a primordial endpoint and
/// known here). The fast path of the RMA layer.
///
/// # For layer and conduit authors
///
/// Raw addresses of every rank's segment: programs use
/// `TmRef::query_bound_segment`.
#[inline(always)]
pub fn segment_table() -> Option<&'static [SegmentDesc]> {
    let p = SEGMENT_TABLE.load(Ordering::Acquire);
    if p.is_null() {
        return None;
    }
    // SAFETY: published by `Runtime::set_segments` or
    // `install_bound_primordial` from a leaked, never-modified slice of
    // SEGMENT_COUNT entries (stored before the pointer, read after it with
    // acquire ordering; the count never changes once set).
    Some(unsafe { std::slice::from_raw_parts(p, SEGMENT_COUNT.load(Ordering::Relaxed)) })
}

/// One rank's segment in the compact form the RMA fast path reads: the
/// range this process may access directly. A segment that is not mapped
/// here (or with direct access turned off) reads as empty, so one bounds
/// check decides both "in range" and "directly accessible"; the general
/// path checks ranges against [`Runtime::segments`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct FastSeg {
    /// Base address in the owner's address space.
    pub owner_base: usize,
    /// Bytes directly accessible: the segment's length when it is mapped
    /// here and direct access is on, else 0.
    pub size: usize,
    /// Base of this process's mapping (0 when `size` is 0).
    pub local_base: usize,
}

impl FastSeg {
    /// The fast-table entry of `d`: directly accessible when `mapped`
    /// (direct access on) and the segment is mapped here and not empty.
    pub(crate) fn of(d: &SegmentDesc, mapped: bool) -> FastSeg {
        match d.local_base {
            Some(local_base) if mapped && d.size > 0 => FastSeg {
                owner_base: d.owner_base,
                size: d.size,
                local_base,
            },
            _ => FastSeg {
                owner_base: d.owner_base,
                size: 0,
                local_base: 0,
            },
        }
    }
}

/// The fast table in use (one of the two below), and both versions.
static FAST_TABLE: AtomicPtr<FastSeg> = AtomicPtr::new(std::ptr::null_mut());
static FAST_MAPPED: AtomicPtr<FastSeg> = AtomicPtr::new(std::ptr::null_mut());
static FAST_UNMAPPED: AtomicPtr<FastSeg> = AtomicPtr::new(std::ptr::null_mut());
static DIRECT_ACCESS: AtomicBool = AtomicBool::new(true);

/// The fast segment table: `jobsize` entries indexed by jobrank, or null
/// before attach. With direct access off every `local_base` reads 0.
#[inline(always)]
pub fn fast_segments() -> *const FastSeg {
    FAST_TABLE.load(Ordering::Acquire)
}

/// The words registered by [`mirror_fast_segments`] (null: none).
static FAST_MIRROR: AtomicPtr<FastMirror> = AtomicPtr::new(std::ptr::null_mut());
/// Serialises the stores to [`FAST_TABLE`] and its mirror, so that the
/// mirror always ends up holding the table in use.
static FAST_PUBLISH: Mutex<()> = Mutex::new(());

/// A copy of the fast table word and its length in bytes, kept by
/// gex-core (see [`mirror_fast_segments`]).
#[derive(Debug)]
#[repr(C)]
pub struct FastMirror {
    /// The fast segment table in use (null before attach).
    pub table: AtomicPtr<FastSeg>,
    /// Its length in bytes: 0 until `table` is first non-null, then the
    /// job size times the entry's size (never changed again).
    pub table_bytes: AtomicUsize,
}

impl FastMirror {
    /// An empty mirror (before attach).
    pub const fn new() -> FastMirror {
        FastMirror {
            table: AtomicPtr::new(std::ptr::null_mut()),
            table_bytes: AtomicUsize::new(0),
        }
    }

    /// Stores the table `p` (non-null: published, never freed or written)
    /// and then its length, each with release ordering.
    fn set(&self, p: *mut FastSeg) {
        self.table.store(p, Ordering::Release);
        let bytes = SEGMENT_COUNT.load(Ordering::Relaxed) * std::mem::size_of::<FastSeg>();
        self.table_bytes.store(bytes, Ordering::Release);
    }
}

impl Default for FastMirror {
    fn default() -> FastMirror {
        FastMirror::new()
    }
}

/// Makes `m` a copy of the word [`fast_segments`] reads: it receives the
/// fast segment table in use (at once if attached, else at attach) and,
/// with release stores, every table that replaces it (when direct access
/// is switched), the table before its length. A reader that loads
/// `table_bytes` with acquire ordering and finds it non-zero then finds a
/// non-null `table` of that many bytes (either table: both stay valid for
/// the process's life and are never written after publication). One
/// mirror per process (a second call replaces the first). For the C
/// interface, whose header's inline RMA fast path reads the table from
/// its own exported struct, one load away, and bounds-checks byte
/// offsets.
///
/// For layer authors.
pub fn mirror_fast_segments(m: &'static FastMirror) {
    let _g = FAST_PUBLISH.lock().unwrap_or_else(|p| p.into_inner());
    FAST_MIRROR.store(m as *const _ as *mut _, Ordering::Relaxed);
    let p = FAST_TABLE.load(Ordering::Acquire);
    if !p.is_null() {
        m.set(p);
    }
}

/// Turns direct access to mapped peer segments on or off for this process
/// (off: every RMA takes the AM reference path, for testing it).
pub fn set_direct_access(on: bool) {
    DIRECT_ACCESS.store(on, Ordering::SeqCst);
    {
        let _g = FAST_PUBLISH.lock().unwrap_or_else(|p| p.into_inner());
        activate_fast();
    }
    crate::epseg::refresh_fast();
}

/// Points [`FAST_TABLE`] and its mirror at the fast form of the current
/// primordial table that the direct-access switch selects (nothing before
/// there is one). The caller holds [`FAST_PUBLISH`], so that the table
/// loaded here is the one stored last.
fn activate_fast() {
    let t = if direct_access() {
        &FAST_MAPPED
    } else {
        &FAST_UNMAPPED
    };
    let p = t.load(Ordering::Acquire);
    if p.is_null() {
        return;
    }
    FAST_TABLE.store(p, Ordering::Release);
    let m = FAST_MIRROR.load(Ordering::Relaxed);
    if !m.is_null() {
        // SAFETY: a non-null mirror is the `&'static FastMirror` that
        // `mirror_fast_segments` registered.
        unsafe { (*m).set(p) };
    }
}

/// The primordial table's length (the job size; 0 before there is one).
pub(crate) fn segment_count() -> usize {
    SEGMENT_COUNT.load(Ordering::Relaxed)
}

/// Installs `descs` (with its two fast forms, as [`FastSeg::of`] makes
/// them) as the primordial endpoints' segment table of a rank that bound
/// created segments to them instead of attaching: replaces the previous
/// one, if any. An error if this rank attached (the two exclude each
/// other); else this rank's primordial segments are bound ones from now
/// on. `epseg`'s writer calls it, holding its lock.
pub(crate) fn install_bound_primordial(
    descs: &'static [SegmentDesc],
    mapped: &'static [FastSeg],
    unmapped: &'static [FastSeg],
) -> Result<()> {
    let mut src = PRIMORDIAL.lock().unwrap_or_else(|p| p.into_inner());
    if *src == Primordial::Attached {
        return Err(Error::bad_arg(
            "this rank attached a segment (gex_Segment_Attach): a created segment cannot be bound to a primordial endpoint, nor one published for it",
        ));
    }
    *src = Primordial::Bound;
    BOUND.store(true, Ordering::Release);
    debug_assert!(descs.len() == mapped.len() && descs.len() == unmapped.len());
    let _g = FAST_PUBLISH.lock().unwrap_or_else(|p| p.into_inner());
    SEGMENT_COUNT.store(descs.len(), Ordering::Relaxed);
    SEGMENT_TABLE.store(descs.as_ptr() as *mut SegmentDesc, Ordering::Release);
    // The fast forms are only ever read through these pointers.
    FAST_MAPPED.store(mapped.as_ptr() as *mut FastSeg, Ordering::Release);
    FAST_UNMAPPED.store(unmapped.as_ptr() as *mut FastSeg, Ordering::Release);
    activate_fast();
    Ok(())
}

/// Whether direct access to mapped peer segments is on.
#[inline]
pub fn direct_access() -> bool {
    DIRECT_ACCESS.load(Ordering::SeqCst)
}

/// A layer's progress function (see [`Runtime::add_progress_hook`]):
/// advances the layer's own state machines and returns how much it did
/// (0 when idle).
pub type ProgressHook = fn() -> usize;

/// The most hooks a process may register (one per layer).
const MAX_HOOKS: usize = 8;

/// Registered hooks: the first `HOOK_COUNT` entries are set.
static HOOKS: [OnceLock<ProgressHook>; MAX_HOOKS] = [const { OnceLock::new() }; MAX_HOOKS];
static HOOK_COUNT: AtomicUsize = AtomicUsize::new(0);
static HOOK_REGISTRATION: std::sync::Mutex<()> = std::sync::Mutex::new(());

thread_local! {
    /// Whether this thread is running the hooks (they are not re-entered).
    static IN_HOOKS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn add_hook(hook: ProgressHook) -> Result<()> {
    let _g = HOOK_REGISTRATION.lock().unwrap_or_else(|p| p.into_inner());
    let n = HOOK_COUNT.load(Ordering::Acquire);
    if HOOKS[..n]
        .iter()
        .any(|h| h.get().is_some_and(|f| std::ptr::fn_addr_eq(*f, hook)))
    {
        return Ok(());
    }
    if n == MAX_HOOKS {
        return Err(Error::resource(format!(
            "add_progress_hook: at most {MAX_HOOKS} progress hooks may be registered"
        )));
    }
    let _ = HOOKS[n].set(hook);
    HOOK_COUNT.store(n + 1, Ordering::Release);
    Ok(())
}

/// Runs the registered hooks unless the calling thread is in a restricted
/// context (an AM handler, holding an HSL, inside Prepare/Commit) or runs
/// them already.
#[cold]
#[inline(never)]
fn run_hooks() -> usize {
    if !context::may_communicate() || IN_HOOKS.get() {
        return 0;
    }
    IN_HOOKS.set(true);
    /// Clears the flag even if a hook panics.
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            IN_HOOKS.set(false);
        }
    }
    let _reset = Reset;
    let n = HOOK_COUNT.load(Ordering::Acquire);
    HOOKS[..n].iter().filter_map(|h| h.get()).map(|h| h()).sum()
}

/// Runs the layers' progress hooks (one relaxed load when none is
/// registered).
#[inline(always)]
fn hooks() -> usize {
    if HOOK_COUNT.load(Ordering::Relaxed) == 0 {
        0
    } else {
        run_hooks()
    }
}

/// Whether non-fatal errors are also printed (`gex_System_SetVerboseErrors`).
static VERBOSE: AtomicBool = AtomicBool::new(true);

/// How the library's waits spend polls that find nothing to do
/// (`gasnet_set_waitmode`), for the whole process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum WaitMode {
    /// Poll without giving up the core (`GASNET_WAIT_SPIN`).
    Spin = 0,
    /// Yield the core after every poll that found nothing
    /// (`GASNET_WAIT_BLOCK`).
    Block = 1,
    /// Spin for a while, then yield after every idle poll
    /// (`GASNET_WAIT_SPINBLOCK`, the default): the spin lasts
    /// [`Runtime::wait_step`]'s limit of idle polls in a row (one when the
    /// host has more ranks than cores), or a wait's own spin time.
    SpinBlock = 2,
}

impl WaitMode {
    /// The mode of a `GASNET_WAIT_*` value.
    pub fn from_code(code: i32) -> Option<WaitMode> {
        match code {
            0 => Some(WaitMode::Spin),
            1 => Some(WaitMode::Block),
            2 => Some(WaitMode::SpinBlock),
            _ => None,
        }
    }
}

static WAIT_MODE: AtomicU8 = AtomicU8::new(WaitMode::SpinBlock as u8);
/// The times a wait yielded the core (the `wait_yields` counter).
static WAIT_YIELDS: AtomicU64 = AtomicU64::new(0);
/// Of those, the times because a rank polling in vain shared the core
/// (the `core_shared_yields` counter).
static CORE_SHARED_YIELDS: AtomicU64 = AtomicU64::new(0);

/// Sets how every wait of the library spends its idle polls, from now on
/// and in every thread (`gasnet_set_waitmode`).
pub fn set_wait_mode(mode: WaitMode) {
    WAIT_MODE.store(mode as u8, Ordering::Relaxed);
}

/// The wait mode in force ([`set_wait_mode`]).
pub fn wait_mode() -> WaitMode {
    match WAIT_MODE.load(Ordering::Relaxed) {
        0 => WaitMode::Spin,
        1 => WaitMode::Block,
        _ => WaitMode::SpinBlock,
    }
}

/// How many times the library's waits have yielded the core in this
/// process (also `gex::stats()`'s `wait_yields`).
pub fn wait_yields() -> u64 {
    WAIT_YIELDS.load(Ordering::Relaxed)
}

/// How many of [`wait_yields`] gave the core to another rank of the host
/// polling in vain on it (`Runtime::poll`; `core_shared_yields` in
/// `gex::stats()`).
pub fn core_shared_yields() -> u64 {
    CORE_SHARED_YIELDS.load(Ordering::Relaxed)
}

/// Polls in a row that find nothing between two looks, by a waiting
/// thread, at whether a spinning rank of the host shares its core
/// ([`Runtime::poll`]; [`Runtime::wait_step`] records its core only): a
/// look costs about as much as a poll.
pub const IDLE_LOOK: u32 = 64;

/// The time slice a rank asks the scheduler for when its host runs more
/// ranks than cores: Linux's shortest (0.1 ms; the default is 0.7 ms
/// times 1 + log2 of the cores, 1.4 ms on 2).
pub const OVERSUBSCRIBED_TIME_SLICE_NS: u64 = 100_000;

/// `struct sched_attr` of `sched_setattr(2)` (its first version, 56 bytes).
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

/// Asks the scheduler to run the calling thread (and the threads it
/// creates from now on, which inherit it) in time slices of
/// [`OVERSUBSCRIBED_TIME_SLICE_NS`], keeping its policy and nice value;
/// false if the thread's policy is not a time-sharing one or the kernel
/// refuses (before 6.12 Linux has no per-task slice and the call changes
/// nothing).
///
/// Why: when the ranks of a host outnumber its cores, a collective waits
/// for ranks that are not running, and other processes compete for the
/// cores too. A waiting rank yields its core, but under the EEVDF
/// scheduler a yield gives up the rest of the rank's slice, and whatever
/// runs next, another rank or an unrelated process, keeps the core for a
/// whole slice of its own: every barrier then costs a few ms (the
/// reference testbarrierlate on 4 ranks over 2 busy cores ran past its
/// 90 s). Recent kernels let the running task keep the core only for the
/// shortest slice among the tasks waiting for it, so with short slices
/// the rank waited for runs again within about a tenth of that (Linux
/// 6.18, test-late: 4 ranks and a busy thread on one core, 2-3 ms per
/// late barrier before, 0.2-0.4 ms after). Compute-bound ranks switch more
/// often: every 0.1 ms while other tasks wait for the core.
fn request_short_time_slice() -> bool {
    let mut attr = SchedAttr::default();
    let size = std::mem::size_of::<SchedAttr>() as u32;
    // SAFETY: `attr` is a writable `struct sched_attr` of `size` bytes;
    // pid 0 is the calling thread.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            0,
            &mut attr as *mut SchedAttr,
            size,
            0,
        )
    };
    if rc != 0
        || !(attr.policy == libc::SCHED_OTHER as u32 || attr.policy == libc::SCHED_BATCH as u32)
    {
        return false;
    }
    // Policy, nice value and reset-on-fork kept; a runtime on a
    // time-sharing policy is the slice.
    const RESET_ON_FORK: u64 = 0x01;
    let want = SchedAttr {
        size,
        policy: attr.policy,
        flags: attr.flags & RESET_ON_FORK,
        nice: attr.nice,
        runtime: OVERSUBSCRIBED_TIME_SLICE_NS,
        ..SchedAttr::default()
    };
    // SAFETY: `want` is a readable `struct sched_attr` whose size field
    // says its size; pid 0 is the calling thread.
    let rc = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &want as *const SchedAttr, 0) };
    rc == 0
}

thread_local! {
    /// This thread's client polls in a row that found nothing
    /// ([`Runtime::poll`]).
    static IDLE_POLLS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Process-wide state shared by every object of the client.
///
/// # For layer and conduit authors
///
/// The conduit handle, progress hooks and the control plane: layers use
/// it; programs do not (the `gex` facade does not export it).
pub struct Runtime {
    pub(crate) conduit: Box<dyn Conduit>,
    pub(crate) jobrank: Rank,
    pub(crate) jobsize: Rank,
    pub(crate) nbrhd_info: Vec<RankInfo>,
    pub(crate) host_info: Vec<RankInfo>,
    /// The AM dispatcher of the primordial endpoint, installed by the AM layer.
    pub(crate) sink: OnceLock<Box<dyn AmSink>>,
    /// Spin this many empty polls before yielding the core.
    spin_limit: u32,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("conduit", &self.conduit.name())
            .field("jobrank", &self.jobrank)
            .field("jobsize", &self.jobsize)
            .finish()
    }
}

/// Delivers messages that arrive before the AM layer installed a
/// dispatcher: that is a client error (handlers must be registered before
/// peers send to them), reported loudly.
struct NoHandlers;

impl AmSink for NoHandlers {
    fn deliver(&self, msg: &IncomingAm<'_>) {
        crate::fatal(&format!(
            "an AM for handler {} arrived from rank {} before any handler was registered",
            msg.handler, msg.src
        ));
    }
}

static NO_HANDLERS: NoHandlers = NoHandlers;

impl Runtime {
    pub(crate) fn install(conduit: Box<dyn Conduit>) -> Result<&'static Runtime> {
        let boot = conduit.bootstrap();
        let jobrank = boot.rank();
        let jobsize = boot.size();
        let layout = conduit.layout();
        let info = |v: &[Rank]| v.iter().map(|&r| RankInfo { jobrank: r }).collect();
        let nbrhd_info = info(&layout.nbrhd);
        let host_info = info(&layout.host);
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        // Oversubscribed: a spinning rank steals the core of the rank it
        // waits for, so yield at once; and ask for the scheduler's
        // shortest time slice, so that a rank the others wait for gets its
        // core back soon from whatever else runs there.
        let oversubscribed = layout.host.len() > cores;
        let spin_limit = if oversubscribed { 1 } else { 2000 };
        if oversubscribed {
            request_short_time_slice();
        }
        let rt = Runtime {
            conduit,
            jobrank,
            jobsize,
            nbrhd_info,
            host_info,
            sink: OnceLock::new(),
            spin_limit,
        };
        RUNTIME.set(rt).map_err(|_| {
            Error::bad_arg("gex_Client_Init: a client already exists in this process (one per job)")
        })?;
        Ok(RUNTIME.get().expect("just set"))
    }

    /// The runtime, if a client was initialised.
    #[inline]
    pub fn get() -> Option<&'static Runtime> {
        RUNTIME.get()
    }

    /// The runtime, or `NOT_INIT` naming `call`.
    pub fn require(call: &str) -> Result<&'static Runtime> {
        RUNTIME
            .get()
            .ok_or_else(|| Error::not_init(format!("{call}: gex_Client_Init has not been called")))
    }

    /// The conduit.
    #[inline]
    pub fn conduit(&self) -> &dyn Conduit {
        &*self.conduit
    }

    /// This process's jobrank.
    #[inline]
    pub fn jobrank(&self) -> Rank {
        self.jobrank
    }

    /// The job size.
    #[inline]
    pub fn jobsize(&self) -> Rank {
        self.jobsize
    }

    /// The AM dispatcher (a reporting stub before the AM layer installs one).
    #[inline]
    pub fn sink(&self) -> &dyn AmSink {
        match self.sink.get() {
            Some(s) => &**s,
            None => &NO_HANDLERS,
        }
    }

    /// Installs the AM dispatcher; fails if one is installed already.
    pub fn install_sink(&self, sink: Box<dyn AmSink>) -> Result<()> {
        self.sink
            .set(sink)
            .map_err(|_| Error::bad_arg("an AM dispatcher is already installed"))
    }

    /// Every rank's bound segment, indexed by jobrank ([`segment_table`]:
    /// `None` before attach, or before a created segment bound to a
    /// primordial endpoint is known here).
    #[inline]
    pub fn segments(&self) -> Option<&'static [SegmentDesc]> {
        segment_table()
    }

    /// Whether this rank attached a segment ([`primordial_attached`]).
    #[inline]
    pub fn attached(&self) -> bool {
        primordial_attached()
    }

    /// Publishes the attached segment table (once per process; false if
    /// this rank attached already or its primordial segments are bound
    /// ones, [`Primordial`]).
    pub(crate) fn set_segments(&self, table: Vec<SegmentDesc>) -> bool {
        {
            let mut src = PRIMORDIAL.lock().unwrap_or_else(|p| p.into_inner());
            if *src != Primordial::None {
                return false;
            }
            *src = Primordial::Attached;
        }
        let leaked: &'static [SegmentDesc] = Box::leak(table.into_boxed_slice());
        let fast = |mapped: bool| -> *mut FastSeg {
            let v: Vec<FastSeg> = leaked.iter().map(|d| FastSeg::of(d, mapped)).collect();
            Box::leak(v.into_boxed_slice()).as_mut_ptr()
        };
        {
            let _g = FAST_PUBLISH.lock().unwrap_or_else(|p| p.into_inner());
            SEGMENT_COUNT.store(leaked.len(), Ordering::Relaxed);
            SEGMENT_TABLE.store(leaked.as_ptr() as *mut SegmentDesc, Ordering::Release);
            FAST_MAPPED.store(fast(true), Ordering::Release);
            FAST_UNMAPPED.store(fast(false), Ordering::Release);
        }
        ATTACHED.store(true, Ordering::Release);
        set_direct_access(direct_access());
        true
    }

    /// Registers a layer's progress hook (once, when the layer is set up at
    /// init): every progress, poll and wait of gex-core runs it after
    /// polling the conduit (as do event and NBI tests, which do not poll),
    /// so that a layer's state machines advance in whichever thread waits.
    ///
    /// Hooks run only where communicating is legal: never inside an AM
    /// handler, under an HSL, or inside Prepare/Commit, and never
    /// re-entered by the thread running them (a progress call made by a
    /// hook runs no hooks). Several threads may run one hook at once. A
    /// hook must not block; it may send with `immediate`. Registering the
    /// same function twice is a no-op.
    pub fn add_progress_hook(&self, hook: ProgressHook) -> Result<()> {
        add_hook(hook)
    }

    /// Runs the layers' progress hooks only, without polling the conduit
    /// (what event and NBI tests do).
    #[inline]
    pub fn run_progress_hooks(&self) -> usize {
        hooks()
    }

    /// Runs arrived handlers once, then the layers' progress hooks, without
    /// any context check (for layers and conduits; clients call
    /// [`Runtime::poll`]). The hooks themselves are skipped in a restricted
    /// context. A conduit must not call it holding its own locks, since
    /// hooks may send.
    #[inline]
    pub fn progress(&self) -> usize {
        self.conduit.poll(self.sink(), PollScope::All) + hooks()
    }

    /// Polls (`gasnet_AMPoll`): illegal in handler context or under an HSL.
    ///
    /// A client may wait by calling this in a loop (testratomic's ring
    /// consumers spin on an atomic GET and `gasnet_AMPoll`), which the
    /// library cannot tell from a busy program's occasional poll. So, unless
    /// the wait mode is `Spin`, every [`IDLE_LOOK`] polls in a row that find
    /// nothing this thread asks the conduit whether another rank of the
    /// host polling in vain (here, or in a library wait) shares its core
    /// (`Conduit::core_shared_with_spinner`), and if so yields it: ranks that
    /// the scheduler put on one core then hand a value over in a few
    /// microseconds rather than once per time slice, and ranks with a core
    /// each never yield here.
    pub fn poll(&self) -> Result<()> {
        context::check_may_communicate("gex_AM_Poll")?;
        let ran = self.progress();
        let _ = IDLE_POLLS.try_with(|n| {
            if ran > 0 {
                n.set(0);
                return;
            }
            let k = n.get().wrapping_add(1);
            n.set(k);
            if k.is_multiple_of(IDLE_LOOK) {
                self.idle_look(true);
            }
        });
        Ok(())
    }

    /// Unless the wait mode is `Spin`: records that this thread polls in
    /// vain on its core (`Conduit::core_shared_with_spinner`) and, if
    /// `may_yield` and another rank of the host polling in vain shares the
    /// core, yields it.
    #[cold]
    #[inline(never)]
    fn idle_look(&self, may_yield: bool) {
        if WAIT_MODE.load(Ordering::Relaxed) == WaitMode::Spin as u8 {
            return;
        }
        if self.conduit.core_shared_with_spinner() && may_yield {
            WAIT_YIELDS.fetch_add(1, Ordering::Relaxed);
            CORE_SHARED_YIELDS.fetch_add(1, Ordering::Relaxed);
            std::thread::yield_now();
        }
    }

    /// Polls until `cond` holds (`GASNET_BLOCKUNTIL`), pacing idle polls
    /// by the wait mode: by default it spins first, then yields the core
    /// between polls so that oversubscribed ranks do not starve each other.
    /// Illegal in handler context or under an HSL.
    pub fn wait_until(&self, cond: impl FnMut() -> bool) -> Result<()> {
        context::check_may_communicate("GASNET_BLOCKUNTIL")?;
        self.spin_until(cond);
        Ok(())
    }

    /// [`Runtime::wait_until`] without the context check, for layers that
    /// checked already.
    pub fn spin_until(&self, mut cond: impl FnMut() -> bool) {
        let mut idle = 0u32;
        while !cond() {
            self.wait_step(&mut idle);
        }
    }

    /// One step of [`Runtime::spin_until`]: polls; when nothing
    /// progressed, counts the idle step in `idle` and pauses by the wait
    /// mode ([`Runtime::idle_pause`]: by default spins, or yields the core
    /// once `idle` reaches the spin limit); progress resets `idle`. (No
    /// context check: the caller's.) For the C interface's
    /// `GASNET_BLOCKUNTIL`, whose condition is C code, so that a C wait
    /// paces itself as a Rust one does.
    ///
    /// For layer authors.
    #[inline]
    pub fn wait_step(&self, idle: &mut u32) {
        if self.progress() > 0 {
            *idle = 0;
            return;
        }
        *idle = idle.saturating_add(1);
        // Recorded for the client polls of a rank that shares this core
        // (see `Runtime::poll`), which yield it to this wait; the wait
        // itself keeps the wait mode's pace.
        if idle.is_multiple_of(IDLE_LOOK) && *idle < self.spin_limit {
            self.idle_look(false);
        }
        Self::idle_pause(*idle >= self.spin_limit);
    }

    /// What a wait does after a poll that found nothing, by the wait mode
    /// ([`set_wait_mode`]): under `Spin` a spin-loop hint; under `Block` a
    /// yield of the core; under `SpinBlock` a yield once `spun_out` (the
    /// caller's spin phase is over), a hint before. For layers with waits
    /// of their own.
    #[inline]
    pub fn idle_pause(spun_out: bool) {
        let mode = WAIT_MODE.load(Ordering::Relaxed);
        if mode == WaitMode::Block as u8 || (spun_out && mode == WaitMode::SpinBlock as u8) {
            WAIT_YIELDS.fetch_add(1, Ordering::Relaxed);
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }

    /// A barrier over the whole job through the control plane, serving AMs
    /// while it waits.
    pub fn bootstrap_barrier(&self) -> Result<()> {
        self.conduit.bootstrap().barrier(&mut || {
            self.progress();
        })
    }

    /// An all-gather over the whole job through the control plane.
    pub fn bootstrap_exchange(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.conduit.bootstrap().exchange(mine, &mut || {
            self.progress();
        })
    }
}

/// Reports a non-fatal error on the console when verbose errors are on, and
/// returns it.
pub fn report(e: Error) -> Error {
    if VERBOSE.load(Ordering::Relaxed) {
        let who = Runtime::get()
            .map(|r| format!(" on rank {}", r.jobrank))
            .unwrap_or_default();
        eprintln!("gex{who}: {e}");
    }
    e
}

pub(crate) fn set_verbose(on: bool) {
    VERBOSE.store(on, Ordering::Relaxed);
}

pub(crate) fn verbose() -> bool {
    VERBOSE.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    static CALLS: AtomicU32 = AtomicU32::new(0);
    static NESTED: AtomicUsize = AtomicUsize::new(usize::MAX);

    fn hook() -> usize {
        CALLS.fetch_add(1, Ordering::SeqCst);
        // A progress made by a hook runs no hooks.
        NESTED.store(hooks(), Ordering::SeqCst);
        1
    }

    /// One test, because the hooks are process-wide.
    #[test]
    fn hooks_run_once_per_progress_outside_restricted_context() {
        add_hook(hook).unwrap();
        add_hook(hook).unwrap();
        assert_eq!(HOOK_COUNT.load(Ordering::SeqCst), 1, "registered once");
        assert_eq!(hooks(), 1);
        assert_eq!(CALLS.load(Ordering::SeqCst), 1);
        assert_eq!(NESTED.load(Ordering::SeqCst), 0, "not re-entered");
        {
            let _h = context::HandlerScope::enter(true);
            assert_eq!(hooks(), 0, "never inside a handler");
        }
        assert_eq!(CALLS.load(Ordering::SeqCst), 1);
        assert_eq!(hooks(), 1, "runs again once the handler returned");
        assert_eq!(CALLS.load(Ordering::SeqCst), 2);
    }

    /// The calling thread's slice as the kernel reports it (0 before
    /// Linux 6.12), and its nice value.
    fn slice_and_nice() -> (u64, i32) {
        let mut attr = SchedAttr::default();
        // SAFETY: `attr` is a writable `struct sched_attr` of the size
        // passed; pid 0 is the calling thread.
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
        (attr.runtime, attr.nice)
    }

    /// In a thread of its own, which it changes (threads created by it
    /// would inherit the slice).
    #[test]
    fn short_time_slice_keeps_the_nice_value() {
        std::thread::spawn(|| {
            let (before, nice) = slice_and_nice();
            let granted = request_short_time_slice();
            let (after, nice_after) = slice_and_nice();
            assert_eq!(nice_after, nice, "the nice value is kept");
            if before != 0 {
                // The kernel reports slices (Linux 6.12 on): it granted.
                assert!(granted, "sched_setattr refused the slice");
                assert_eq!(after, OVERSUBSCRIBED_TIME_SLICE_NS);
                let inherited = std::thread::spawn(|| slice_and_nice().0).join().unwrap();
                assert_eq!(
                    inherited, OVERSUBSCRIBED_TIME_SLICE_NS,
                    "new threads inherit it"
                );
            }
        })
        .join()
        .unwrap();
    }
}
