//! The conduit's one-sided route: puts and gets through the conduit's
//! [`RmaCapability`] (the udp conduit's, for peers it reaches over the
//! network), used for a peer whose segment is not mapped here when the
//! conduit offers it. The choice is made once per peer ([`reaches`]).
//!
//! Transfers longer than the capability's `max_transfer` are split; the
//! first part carries `IMMEDIATE` and the rest are started without it, so a
//! no-op never leaves a transfer half done. Each part completes one part of
//! the operation's [`Completion`].
//!
//!
//! A conduit offers puts and gets through `Conduit::rma()` returning a
//! `RmaCapability` (`reaches(peer)`, `max_transfer()`, `put`, `get`); the
//! answers to `reaches` are kept per peer; `GEX_RMA_FORCE_AM=1` still sends
//! everything through AMs.
//!
//! A put's source is a `gex_conduit::PutSource`, which the conduit may keep
//! and read after `put` returns (zero-copy): dropping it is local
//! completion, at the latest before the operation's completion is
//! signalled. The caller's memory is handed over only where that is safe
//! without a copy: a blocking put (it waits for both completions), and a
//! source in the local segment under `Lc::Defer`, `Lc::Group` or a leaf
//! event (segment memory outlives every borrow). Any other source is copied
//! into an owned `PutSource` at initiation. Active Message payloads stay
//! borrowed for the call only, so AM local completion is at initiation on
//! every conduit. Completion is signalled through
//! `gex_conduit::OpCompletion`, which gex-core's `Completion` implements. A
//! get names its destination with a `GetDest` (unsafe to build: the caller
//! promises the memory until completion; `as_mut_ptr` gives the address to
//! a conduit whose device writes in place).

use std::sync::{Arc, OnceLock};

use gex_conduit::{GetDest, Injected, OpCompletion, PutSource, RmaCapability};
use gex_core::{Completion, Ep, Staging};
use gex_types::{EpIndex, Rank, Result};

use crate::ampath::GetDst;
use gex_core::internals::*;

/// Whether the conduit's one-sided route reaches each jobrank, decided at
/// the first transfer (or [`crate::route`] query) after segment attach.
static ROUTES: OnceLock<Box<[bool]>> = OnceLock::new();

/// Whether transfers to `jobrank` go through the conduit's capability.
/// Before segments are attached nothing is decided (and nothing reaches).
pub(crate) fn reaches(ep: &Ep, jobrank: Rank) -> bool {
    if gex_core::segment_table().is_none() {
        return false;
    }
    let routes = ROUTES.get_or_init(|| {
        let conduit = ep.runtime().conduit();
        let size = ep.runtime().jobsize();
        match conduit.rma() {
            Some(r) => (0..size).map(|p| r.reaches(p)).collect(),
            None => vec![false; size as usize].into_boxed_slice(),
        }
    });
    routes.get(jobrank as usize).copied().unwrap_or(false)
}

fn capability(ep: &Ep) -> &dyn RmaCapability {
    ep.runtime()
        .conduit()
        .rma()
        .expect("`reaches` said the conduit has a one-sided capability")
}

/// Starts the parts of a transfer of `len` bytes with `start(at, part_len,
/// immediate)`; as [`crate::ampath`]'s, returns `None` for a no-op (and
/// undoes `parent`'s tracking), else the completion.
fn start_parts(
    len: usize,
    max: usize,
    immediate: bool,
    parent: Option<Arc<Completion>>,
    mut start: impl FnMut(usize, usize, Arc<dyn OpCompletion>, bool) -> Result<Injected>,
) -> Result<Option<Arc<Completion>>> {
    let parts = len.div_ceil(max).max(1);
    let c = Completion::new(parts, parent.clone());
    for i in 0..parts {
        let at = i * max;
        let n = max.min(len - at);
        match start(at, n, c.clone(), immediate && i == 0) {
            Ok(Injected::Sent) => {}
            Ok(Injected::NoOp) => {
                if let Some(p) = &parent {
                    p.done(); // undo the caller's tracking
                }
                return Ok(None);
            }
            Err(e) => {
                // Nothing waits for the parts never started.
                for _ in i..parts {
                    c.done();
                }
                return Err(e);
            }
        }
    }
    Ok(Some(c))
}

/// Whether a put hands the conduit the caller's memory or a copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hold {
    /// A copy: the caller's source is free again when the call returns.
    Copy,
    /// The caller's memory, which stays valid and unmodified until local
    /// completion (the caller waits for it, or it is segment memory).
    Borrow,
}

/// Told when a put part's source is released by the conduit: one part of
/// the operation's completion (which waits for every source as well as
/// every remote completion) and one of the separate local completion, if
/// the caller tracks it.
struct Release {
    root: Arc<Completion>,
    lc: Option<Arc<Completion>>,
}

impl OpCompletion for Release {
    fn complete(&self) {
        if let Some(lc) = &self.lc {
            lc.done();
        }
        self.root.done();
    }
}

/// Starts a put of `len` bytes from `src` to offset `off` of `jobrank`'s
/// segment; as [`crate::ampath::put`], with local completion apart:
/// the returned completion (reporting to `parent`) waits for the data in
/// the target segment and for the conduit to release every source;
/// `lc`, if given, is a completion of one part per
/// [`parts`](max_parts) that the releases complete (it is completed here
/// for a no-op or an error as well).
#[allow(clippy::too_many_arguments)]
pub(crate) fn put(
    ep: &Ep,
    (jobrank, remote_ep): (Rank, EpIndex),
    off: usize,
    src: *const u8,
    len: usize,
    hold: Hold,
    immediate: bool,
    parent: Option<Arc<Completion>>,
    lc: Option<Arc<Completion>>,
) -> Result<Option<Arc<Completion>>> {
    let rma = capability(ep);
    let sink = ep.runtime().sink();
    let max = rma.max_transfer();
    let parts = max_parts(ep, len);
    // Two parts each: the remote completion and the source's release.
    let c = Completion::new(2 * parts, parent);
    let release: Arc<dyn OpCompletion> = Arc::new(Release {
        root: c.clone(),
        lc: lc.clone(),
    });
    for i in 0..parts {
        let at = i * max;
        let n = max.min(len - at);
        // SAFETY: `src` is valid for `len` bytes for the call, and this part
        // lies within it. With `Hold::Borrow` the caller keeps it valid and
        // unmodified until the release (it waits for the returned
        // completion, or the source is in the local segment, which lives
        // as long as the process); otherwise it is copied here.
        let part = unsafe {
            match hold {
                Hold::Copy => PutSource::copy_of(std::slice::from_raw_parts(src.add(at), n)),
                Hold::Borrow => PutSource::borrowed(src.add(at), n),
            }
        }
        .on_release(release.clone());
        let started = rma.put(
            jobrank,
            remote_ep,
            off + at,
            part,
            c.clone(),
            immediate && i == 0,
            sink,
        );
        if !matches!(started, Ok(Injected::Sent)) {
            // This part's source was released and its remote completion
            // will never come; the parts after it never started. Complete
            // it all, so that `parent` and `lc` (NBI counters, access
            // regions) are not left waiting.
            c.done();
            for _ in i + 1..parts {
                release.complete();
                c.done();
            }
            return match started {
                Ok(_) => Ok(None),
                Err(e) => Err(e),
            };
        }
    }
    Ok(Some(c))
}

/// How many parts a put of `len` bytes to `jobrank` is split into (the
/// size of its local completion).
pub(crate) fn max_parts(ep: &Ep, len: usize) -> usize {
    len.div_ceil(capability(ep).max_transfer()).max(1)
}

/// Starts a get of `len` bytes at offset `off` of `jobrank`'s segment
/// into `dst`; as [`crate::ampath::get`].
pub(crate) fn get(
    ep: &Ep,
    (jobrank, remote_ep): (Rank, EpIndex),
    off: usize,
    len: usize,
    dst: GetDst,
    immediate: bool,
    parent: Option<Arc<Completion>>,
) -> Result<Option<Arc<Completion>>> {
    let rma = capability(ep);
    let sink = ep.runtime().sink();
    let (base, staging): (*mut u8, Option<Arc<Staging>>) = match dst {
        GetDst::Raw(p) => (p, None),
        GetDst::Staged(s) => (s.ptr(), Some(s)),
    };
    start_parts(
        len,
        rma.max_transfer(),
        immediate,
        parent,
        |at, n, done, imm| {
            let keep = staging
                .clone()
                .map(|s| Box::new(s) as Box<dyn std::any::Any + Send>);
            // SAFETY: the caller's destination (a staging buffer kept alive by
            // `keep`, the local segment, or a slice the caller waits on before
            // its borrow ends) is valid for `len` bytes until the operation
            // completes, and the parts are disjoint ranges of it.
            let part = unsafe { GetDest::new(base.add(at), n, keep) };
            rma.get(jobrank, remote_ep, off + at, part, done, imm, sink)
        },
    )
}
