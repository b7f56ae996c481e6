//! The sending side of a library layer built on Active Messages.
//!
//! Handler indices `[1, AM_INDEX_BASE)` belong to the library's layers.
//! Client calls ([`crate::AmRequest`], replies from client handlers) may not
//! name them, so that no client can run a layer's handler with arguments of
//! its choosing; a layer sends to its own handlers through the [`LayerAm`]
//! that registering them returned. (A layer's handlers must still treat
//! their arguments as untrusted: they arrive from another process, and
//! over a network conduit possibly from a forger.)
//!
//!
//! # Layer set-up at init
//!
//! A layer above this one may send AMs of its own, so its handlers must be
//! registered on every rank before any rank can send to them.
//! `Client::init_with_layers(name, flags, factory, layers)` runs each
//! `LayerInit` (`&dyn Fn(&Ep) -> Result<()>`, so it may carry the layer's
//! settings) on the primordial endpoint before init's closing barrier: when
//! any rank returns from init, every rank has registered. The facade passes
//! the layers compiled in.
//!
//! Layers register with `register_internal_handlers`, which accepts only
//! fixed indices in `[1, AM_INDEX_BASE)` = `[1, 128)`; clients get 128 to
//! 255. Indices taken: gex-rma 1 to 4 and 6 (memset), 40 to 42 (puts, gets
//! and memsets to created endpoints' segments); gex-coll 5; gex-ratomic 7
//! to 10 (operation, result, create record, create verdict); gex-vis 11 to
//! 18 (packed put, Long put, put acknowledgement, get, get data, peer
//! completion, and put/get to a created endpoint). Client calls (requests,
//! replies from client handlers, negotiated-payload commits) naming an
//! index below 128 are errors. Registration returns a `LayerAm`, the
//! layer's right to send to the indices it registered; a layer handler's
//! token may reply to reserved indices.

use gex_conduit::Injected;
use gex_core::{Ep, Lc};
use gex_types::{AmArg, AmCategory, AmIndex, EpLocation, Error, Flags, Rank, Result};

use crate::inject::request;
use gex_core::internals::*;

/// The right to send requests to a set of a layer's own handlers, returned
/// by [`crate::register_internal_handlers`]. Peers are named by jobrank.
#[derive(Clone)]
pub struct LayerAm {
    ep: Ep,
    /// Bit `i` set: index `i` was registered with this handle.
    indices: u128,
}

impl std::fmt::Debug for LayerAm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LayerAm(indices {:#x})", self.indices)
    }
}

impl LayerAm {
    pub(crate) fn new(ep: &Ep, indices: impl IntoIterator<Item = AmIndex>) -> LayerAm {
        let mut bits = 0u128;
        for i in indices {
            debug_assert!(i < 128, "internal indices are below AM_INDEX_BASE");
            bits |= 1u128 << i;
        }
        LayerAm {
            ep: ep.clone(),
            indices: bits,
        }
    }

    /// The endpoint the handlers were registered on.
    pub fn ep(&self) -> &Ep {
        &self.ep
    }

    /// `jobrank`, if `handler` is one of this layer's and the rank is in
    /// the job.
    fn check(&self, call: &str, jobrank: Rank, handler: AmIndex) -> Result<EpLocation> {
        if handler >= 128 || self.indices & (1u128 << handler) == 0 {
            return Err(Error::bad_arg(format!(
                "{call}: handler index {handler} was not registered by this layer"
            )));
        }
        let size = self.ep.runtime().jobsize();
        if jobrank >= size {
            return Err(Error::bad_arg(format!(
                "{call}: rank {jobrank} is not in the job of {size} ranks"
            )));
        }
        // A layer's handlers are on the primordial endpoints.
        Ok(EpLocation {
            rank: jobrank,
            ep_index: 0,
        })
    }

    /// A Short request to one of this layer's handlers at `jobrank`.
    pub fn request_short(
        &self,
        jobrank: Rank,
        handler: AmIndex,
        flags: Flags,
        args: &[AmArg],
    ) -> Result<Injected> {
        let call = "gex_AM_RequestShort";
        request(
            call,
            &self.ep,
            || self.check(call, jobrank, handler),
            true,
            AmCategory::Short,
            handler,
            &[],
            0,
            Lc::Now,
            flags,
            args,
        )
    }

    /// A Medium request to one of this layer's handlers at `jobrank`.
    pub fn request_medium(
        &self,
        jobrank: Rank,
        handler: AmIndex,
        payload: &[u8],
        lc: Lc<'_>,
        flags: Flags,
        args: &[AmArg],
    ) -> Result<Injected> {
        let call = "gex_AM_RequestMedium";
        request(
            call,
            &self.ep,
            || self.check(call, jobrank, handler),
            true,
            AmCategory::Medium,
            handler,
            payload,
            0,
            lc,
            flags,
            args,
        )
    }

    /// A Long request to one of this layer's handlers at `jobrank`, landing
    /// at `dest_addr` in its segment (an offset with `PEER_SEG_OFFSET`).
    #[allow(clippy::too_many_arguments)]
    pub fn request_long(
        &self,
        jobrank: Rank,
        handler: AmIndex,
        payload: &[u8],
        dest_addr: usize,
        lc: Lc<'_>,
        flags: Flags,
        args: &[AmArg],
    ) -> Result<Injected> {
        let call = "gex_AM_RequestLong";
        request(
            call,
            &self.ep,
            || self.check(call, jobrank, handler),
            true,
            AmCategory::Long,
            handler,
            payload,
            dest_addr,
            lc,
            flags,
            args,
        )
    }
}
