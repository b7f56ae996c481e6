//! gex-core: the GASNet-EX core object model.
//!
//! - [`Client`], [`Ep`], [`Tm`], [`TmPair`] and [`Segment`]: the spec's
//!   objects, with their queries and client data;
//! - [`conduit`]: the SPI a transport implements;
//! - [`Runtime`]: progress (poll, waiting that spins then yields, layers'
//!   progress hooks);
//! - [`bootstrap`]: the start-up control plane shared with the launcher;
//! - [`system`]: job-wide queries (rank, size, neighbourhood, host);
//! - [`Hsl`] and [`context`]: handler-safe locks and restricted-context
//!   checks;
//! - [`shm`]: shared memory among the ranks of a host, without names;
//! - [`exit`]: ending the whole job from any rank;
//! - [`stats`](mod@stats): the conduit's counters (`GEX_STATS=1` prints them at exit).
//!
//! Programs use these through the `gex` facade, which re-exports the
//! objects, [`system`], the program-facing calls of [`nbi`] and
//! [`context`], [`poll`], [`block_until`] and [`exit`].
//!
//! # For layer and conduit authors
//!
//! The rest of this crate is the machinery layers are built on, and the
//! facade does not export it: with it a caller can skip the checks the
//! program-facing calls make. [`Runtime`] (the conduit handle, progress and
//! its hooks, the control plane), [`conduit`], [`bootstrap`] and [`shm`];
//! the raw segment tables ([`segment_table`], [`fast_segments`],
//! [`FastSeg`], [`segment_desc`], [`set_direct_access`]); handler-scope
//! entry and Prepare bookkeeping ([`context::HandlerScope`],
//! [`context::open_prepare`], [`context::close_prepare`], the
//! `check_may_*` calls); completion records ([`Completion`], [`Staging`],
//! [`nbi::track`]); the table of operations in flight ([`slots`]);
//! [`LayerInit`] and [`report`]. The objects' runtime
//! and layer state slots are methods of the traits in [`internals`]
//! (`ep.runtime()`, `layer_state`, `new_subteam`), which a layer imports
//! and the facade does not export.
//!
//! # The runtime and the objects
//!
//! `Client::init_with(name, flags, &factory)` joins the job through the
//! control plane (`bootstrap`), lets the factory build the conduit,
//! installs the one process-wide `Runtime` (a `static OnceLock`: the spec
//! allows one client per job), checks collectively that the single-valued
//! arguments agree, and ends with a barrier. `init_with_layers` also runs
//! each layer's `LayerInit` on the primordial endpoint before that
//! barrier (see `gex_am`'s layer module), so gex-core never names a layer
//! above it. The objects are cheap `Arc` handles:
//!
//! - `Client` (name, flags, cdata) -> `Ep` (index: 0 for the primordial
//!   one; capabilities, bound segment, cdata, the layer-state slot the AM
//!   layer uses) -> `Tm` (rank, size, member table or identity for the
//!   primordial team, a process-local `id()`, a layer-state slot gex-coll
//!   keeps its team record in).
//! - `TmPair` is a separate type, so it cannot be passed to a team-only
//!   call. Point-to-point calls are generic over `TmRef`, which both
//!   implement.
//! - `Segment::attach` first exchanges every rank's validation result, so a
//!   bad size on one rank is an error on all ranks rather than a hang, then
//!   asks the conduit to create and map segments, and ends with a barrier
//!   once every rank has recorded its table (otherwise a peer could reach a
//!   rank before it knew its own segment). The table of every rank's
//!   segment (owner base, local mapping, size) is leaked into a `&'static`
//!   slice and published once (`Runtime::segments`, `segment_table`).
//!   The RMA direct route reads a compact copy, `fast_segments`
//!   (`FastSeg`: owner base, directly accessible size, local base), with
//!   one acquire load. A segment not mapped here reads as size 0. Two copies
//!   exist, one with every entry empty; `set_direct_access(false)` (what
//!   `GEX_RMA_FORCE_AM=1` does) publishes that one, so forcing the AM path
//!   costs the direct route no extra test. The C header reads a mirror of
//!   the table in use (`FastMirror`, kept current by
//!   `mirror_fast_segments`).
//! - A job may instead bind created segments to the primordial endpoints
//!   and publish them (see `epseg`).
//!
//! Global queries (`system`) read the runtime and return `NOT_INIT`
//! before init.
//!
//! Events, NBI counters and access regions live here so that every layer
//! shares them: see `event` and `nbi`. Waiting and progress: see
//! `runtime`.

#![warn(missing_docs)]

mod client;
pub mod context;
pub mod copy;
pub mod epseg;
pub mod event;
mod hsl;
pub mod nbi;
mod runtime;
pub mod slots;
pub mod stats;
pub mod system;

pub use client::{
    ep_not_am_capable, local_ep_capabilities, segment_desc, BoundSegment, CData, Client,
    ClientSettings, Ep, LayerInit, Segment, Tm, TmPair, TmRef,
};
pub use event::{Completion, Event, GetOut, Lc, Staging};

/// Access to the runtime and the layers' state slots of the objects.
///
/// # For layer and conduit authors
///
/// `use gex_core::internals::*;` in a layer crate; the `gex` facade does not
/// export this module.
pub mod internals {
    pub use crate::client::{ClientInternals, EpInternals, TmInternals};
}
pub use gex_bootstrap as bootstrap;
pub use gex_bootstrap::{exit, fatal, job_ending};
pub use gex_conduit as conduit;
pub use gex_conduit::shm;
pub use gex_types as types;
pub use hsl::{Hsl, HslGuard};
pub use runtime::{
    core_shared_yields, direct_access, fast_segments, mirror_fast_segments, primordial_attached,
    primordial_bound, primordial_source, report, segment_table, set_direct_access, set_wait_mode,
    wait_mode, wait_yields, FastMirror, FastSeg, Primordial, ProgressHook, Runtime, WaitMode,
    OVERSUBSCRIBED_TIME_SLICE_NS,
};
pub use stats::stats;

/// Polls until `cond` holds (`GASNET_BLOCKUNTIL`); illegal in handler
/// context or under an HSL.
pub fn block_until(cond: impl FnMut() -> bool) -> gex_types::Result<()> {
    Runtime::require("GASNET_BLOCKUNTIL")?.wait_until(cond)
}

/// Polls for and runs arrived Active Messages (`gasnet_AMPoll`).
pub fn poll() -> gex_types::Result<()> {
    Runtime::require("gasnet_AMPoll")?.poll()
}
