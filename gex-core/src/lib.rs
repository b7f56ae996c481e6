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
