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
//! - [`stats`]: the conduit's counters (`GEX_STATS=1` prints them at exit).

#![warn(missing_docs)]

pub mod bootstrap;
mod client;
pub mod conduit;
pub mod context;
pub mod event;
mod hsl;
pub mod nbi;
mod runtime;
pub mod shm;
pub mod stats;
pub mod system;

pub use client::{
    segment_desc, BoundSegment, CData, Client, Ep, LayerInit, Segment, Tm, TmPair, TmRef,
};
pub use event::{Completion, Event, Lc, Staging};
pub use gex_types as types;
pub use hsl::{Hsl, HslGuard};
pub use runtime::{
    direct_access, fast_segments, report, segment_table, set_direct_access, FastSeg, ProgressHook,
    Runtime,
};
pub use stats::stats;

use std::io::Write;

static JOB_ENDING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether [`exit`] was called: the whole job is ending, so exit hooks need
/// not wait for peers (they are being ended too).
pub fn job_ending() -> bool {
    JOB_ENDING.load(std::sync::atomic::Ordering::SeqCst)
}

/// Ends the whole job with `code` (`gasnet_exit`): every other rank is
/// terminated by the launcher, and the job's exit code is `code`. May be
/// called from any rank, any thread, at any time, even in handler context.
pub fn exit(code: i32) -> ! {
    JOB_ENDING.store(true, std::sync::atomic::Ordering::SeqCst);
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    if let Some(rt) = Runtime::get() {
        rt.conduit().bootstrap().request_exit(code);
    } else if let Ok(boot) = bootstrap::Bootstrap::from_env() {
        boot.request_exit(code);
    }
    std::process::exit(code)
}

/// Reports a fatal error (a broken invariant of the job, such as an AM for
/// an unregistered handler) and ends the job with exit code 1.
pub fn fatal(msg: &str) -> ! {
    let who = Runtime::get()
        .map(|r| format!(" on rank {}", r.jobrank()))
        .unwrap_or_default();
    eprintln!("gex: fatal error{who}: {msg}");
    exit(1)
}

/// Polls until `cond` holds (`GASNET_BLOCKUNTIL`); illegal in handler
/// context or under an HSL.
pub fn block_until(cond: impl FnMut() -> bool) -> gex_types::Result<()> {
    Runtime::require("GASNET_BLOCKUNTIL")?.wait_until(cond)
}

/// Polls for and runs arrived Active Messages (`gasnet_AMPoll`).
pub fn poll() -> gex_types::Result<()> {
    Runtime::require("gasnet_AMPoll")?.poll()
}
