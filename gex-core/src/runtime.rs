//! The process-wide runtime behind the client: the conduit, the segment
//! table, progress and waiting.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::OnceLock;

use gex_types::{Error, Rank, RankInfo, Result};

use crate::conduit::{AmSink, Conduit, IncomingAm, PollScope, SegmentDesc};
use crate::context;

/// The one runtime of this process (the spec allows one client per job).
static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// The segment table, published once at attach for the RMA fast path: one
/// load instead of a walk from the team through the client to the runtime.
static SEGMENT_TABLE: AtomicPtr<SegmentDesc> = AtomicPtr::new(std::ptr::null_mut());
static SEGMENT_COUNT: AtomicUsize = AtomicUsize::new(0);

/// Every rank's bound segment, indexed by jobrank (`None` before attach).
/// The fast path of the RMA layer.
#[inline(always)]
pub fn segment_table() -> Option<&'static [SegmentDesc]> {
    let p = SEGMENT_TABLE.load(Ordering::Acquire);
    if p.is_null() {
        return None;
    }
    // SAFETY: published once by `Runtime::set_segments` from a leaked,
    // never-modified boxed slice of SEGMENT_COUNT entries (stored before the
    // pointer, read after it with acquire ordering).
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

/// Turns direct access to mapped peer segments on or off for this process
/// (off: every RMA takes the AM reference path, for testing it).
pub fn set_direct_access(on: bool) {
    DIRECT_ACCESS.store(on, Ordering::SeqCst);
    let t = if on { &FAST_MAPPED } else { &FAST_UNMAPPED };
    let p = t.load(Ordering::Acquire);
    if !p.is_null() {
        FAST_TABLE.store(p, Ordering::Release);
    }
}

/// Whether direct access to mapped peer segments is on.
pub fn direct_access() -> bool {
    DIRECT_ACCESS.load(Ordering::SeqCst)
}

/// Whether non-fatal errors are also printed (`gex_System_SetVerboseErrors`).
static VERBOSE: AtomicBool = AtomicBool::new(true);

/// Process-wide state shared by every object of the client.
pub struct Runtime {
    pub(crate) conduit: Box<dyn Conduit>,
    pub(crate) jobrank: Rank,
    pub(crate) jobsize: Rank,
    pub(crate) nbrhd_info: Vec<RankInfo>,
    pub(crate) host_info: Vec<RankInfo>,
    /// The AM dispatcher of the primordial endpoint, installed by the AM layer.
    pub(crate) sink: OnceLock<Box<dyn AmSink>>,
    /// Every rank's bound segment, indexed by jobrank, once attached.
    pub(crate) segments: OnceLock<&'static [SegmentDesc]>,
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
        // waits for, so yield at once.
        let spin_limit = if layout.host.len() > cores { 1 } else { 2000 };
        let rt = Runtime {
            conduit,
            jobrank,
            jobsize,
            nbrhd_info,
            host_info,
            sink: OnceLock::new(),
            segments: OnceLock::new(),
            spin_limit,
        };
        RUNTIME.set(rt).map_err(|_| {
            Error::bad_arg("gex_Client_Init: a client already exists in this process (one per job)")
        })?;
        Ok(RUNTIME.get().expect("just set"))
    }

    /// The runtime, if a client was initialised.
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

    /// Every rank's bound segment, indexed by jobrank (`None` before attach).
    #[inline]
    pub fn segments(&self) -> Option<&'static [SegmentDesc]> {
        self.segments.get().copied()
    }

    /// Publishes the segment table (once per process).
    pub(crate) fn set_segments(&self, table: Vec<SegmentDesc>) -> bool {
        let leaked: &'static [SegmentDesc] = Box::leak(table.into_boxed_slice());
        if self.segments.set(leaked).is_err() {
            return false;
        }
        SEGMENT_COUNT.store(leaked.len(), Ordering::Relaxed);
        SEGMENT_TABLE.store(leaked.as_ptr() as *mut SegmentDesc, Ordering::Release);
        let fast = |mapped: bool| -> *mut FastSeg {
            let v: Vec<FastSeg> = leaked
                .iter()
                .map(|d| match d.local_base {
                    Some(local_base) if mapped => FastSeg {
                        owner_base: d.owner_base,
                        size: d.size,
                        local_base,
                    },
                    _ => FastSeg {
                        owner_base: d.owner_base,
                        size: 0,
                        local_base: 0,
                    },
                })
                .collect();
            Box::leak(v.into_boxed_slice()).as_mut_ptr()
        };
        FAST_MAPPED.store(fast(true), Ordering::Release);
        FAST_UNMAPPED.store(fast(false), Ordering::Release);
        set_direct_access(direct_access());
        true
    }

    /// Runs arrived handlers once, without any context check (for layers
    /// and conduits; clients call [`Runtime::poll`]).
    #[inline]
    pub fn progress(&self) -> usize {
        self.conduit.poll(self.sink(), PollScope::All)
    }

    /// Polls (`gasnet_AMPoll`): illegal in handler context or under an HSL.
    pub fn poll(&self) -> Result<()> {
        context::check_may_communicate("gex_AM_Poll")?;
        self.progress();
        Ok(())
    }

    /// Polls until `cond` holds (`GASNET_BLOCKUNTIL`). Spins first, then
    /// yields the core between polls so that oversubscribed ranks do not
    /// starve each other. Illegal in handler context or under an HSL.
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
            if self.progress() > 0 {
                idle = 0;
                continue;
            }
            idle = idle.saturating_add(1);
            if idle >= self.spin_limit {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
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
