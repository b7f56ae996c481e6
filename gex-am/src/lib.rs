//! gex-am: GASNet-EX Active Messages.
//!
//! ```text
//! register_handlers(&ep, &mut [HandlerEntry::request(0, Flags::AM_SHORT, 1, |tok, msg| { ... })])
//! tm.request_short(peer, index, Flags::empty(), &[42])
//! ```
//!
//! - Handlers are registered per endpoint ([`register_handlers`]); a
//!   request handler receives a [`RequestToken`] that replying consumes (at
//!   most one reply, by type), a reply handler a [`ReplyToken`] with no way
//!   to communicate.
//! - Requests are methods of [`AmRequest`], implemented for every way of
//!   naming a peer ([`gex_core::Tm`] and [`gex_core::TmPair`]).
//! - With `Flags::IMMEDIATE`, an injection that would have to wait for
//!   queue space sends nothing and returns [`Injected::NoOp`]
//!   (`Replied::NoOp` for replies, which hands the token back).
//! - Negotiated payload: `prepare_*` returns a [`SrcDesc`], whose
//!   `commit_*` sends.
//!
//! Handlers run in whichever thread polls, one at a time per thread, and
//! may only reply (request handlers), take HSLs and make queries: anything
//! else returns an error (see [`gex_core::context`]).
//!
//! # For layer and conduit authors
//!
//! [`register_internal_handlers`] and [`LayerAm`] are for layers above this
//! one (gex-rma, gex-coll) that need handlers at the reserved indices
//! below `AM_INDEX_BASE`; the `gex` facade does not export them.
//!
//! # Dispatch
//!
//! The core's poll must run AM handlers, yet the AM layer sits above the
//! core. The conduit interface therefore defines the dispatch interface
//! (`gex_conduit::AmSink`) and this layer installs its dispatcher (one per
//! process) as the runtime's sink the first time handlers are registered on
//! any endpoint; the core never sees a handler type.
//!
//! The layer keeps one handler table per endpoint (the endpoint's
//! layer-state slot) and a static array of `MAX_EPS`
//! `OnceLock<&'static AmLayer>`, set when an endpoint first registers
//! handlers (registering on an endpoint without `GEX_EP_CAPABILITY_AM` is
//! an error naming it). A table is a fixed 256-slot array of `OnceLock`s,
//! so registration is set-once and lookup lock-free. The dispatcher checks
//! both untrusted endpoint indices with one comparison (`(src | dest) <
//! MAX_EPS`, a power of two), picks `EP_LAYERS[dest]`, looks the handler
//! up, checks category and argument count against the registration, enters
//! handler context and runs it with a `RequestToken` or `ReplyToken`. An
//! index out of range, one this rank has not created, one without the AM
//! capability or without handlers is a fatal error saying which, naming the
//! sender's rank and endpoint: never a memory access or a panic. The token
//! keeps the source index, so a reply goes back to the endpoint that sent
//! the request; `TokenInfo::src_ep_index` reports it (`TokenInfo::ep` is
//! the receiving endpoint). On the primordial path this costs an index into
//! a static array and the sender's read of its endpoint index: no lock,
//! allocation or extra dynamic call.
//!
//! For a Long, the destination is resolved at the sender to an offset in
//! the target's segment and checked with the one range check
//! (`gex_conduit::range`); an error names rank, range and segment.

#![warn(missing_docs)]

mod handlers;
mod inject;
mod layer;
mod npam;
mod token;

pub use gex_conduit::Injected;
pub use handlers::{
    register_handlers, register_internal_handlers, registered_handler, AmMsg, HandlerEntry,
};
pub use inject::LcOpt;
pub use layer::LayerAm;
pub use npam::{PrepareBuf, SrcDesc};
pub use token::{Replied, ReplyToken, RequestToken, Token, TokenInfo};

use gex_core::{Lc, Runtime, TmRef};
use gex_types::{AmArg, AmCategory, AmIndex, Flags, Rank, Result, AM_MAX_ARGS};

use inject::Dest;

/// `gex_AM_MaxArgs()`.
pub fn max_args() -> usize {
    AM_MAX_ARGS
}

#[inline]
fn injected(sent: bool) -> Injected {
    if sent {
        Injected::Sent
    } else {
        Injected::NoOp
    }
}

/// Active Message requests and payload limits, for anything that names a
/// peer: a team ([`gex_core::Tm`]) or a TM-pair ([`gex_core::TmPair`]).
pub trait AmRequest: TmRef {
    /// `gex_AM_RequestShort`: runs `handler` at `rank` with `args`.
    #[inline]
    fn request_short(
        &self,
        rank: Rank,
        handler: AmIndex,
        flags: Flags,
        args: &[AmArg],
    ) -> Result<Injected> {
        inject::request(
            "gex_AM_RequestShort",
            self.ep(),
            || self.am_peer(rank),
            false,
            AmCategory::Short,
            handler,
            &[],
            0,
            Lc::Now,
            flags,
            args,
        )
    }

    /// `gex_AM_RequestMedium`: runs `handler` at `rank` with a copy of
    /// `payload`. `lc` is `Now`, `Group` or an event (not `Defer`).
    #[inline]
    fn request_medium(
        &self,
        rank: Rank,
        handler: AmIndex,
        payload: &[u8],
        lc: Lc<'_>,
        flags: Flags,
        args: &[AmArg],
    ) -> Result<Injected> {
        inject::request(
            "gex_AM_RequestMedium",
            self.ep(),
            || self.am_peer(rank),
            false,
            AmCategory::Medium,
            handler,
            payload,
            0,
            lc,
            flags,
            args,
        )
    }

    /// `gex_AM_RequestLong`: copies `payload` to `dest_addr` in `rank`'s
    /// bound segment (an owner address, or an offset with
    /// `PEER_SEG_OFFSET`), then runs `handler` there.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn request_long(
        &self,
        rank: Rank,
        handler: AmIndex,
        payload: &[u8],
        dest_addr: usize,
        lc: Lc<'_>,
        flags: Flags,
        args: &[AmArg],
    ) -> Result<Injected> {
        inject::request(
            "gex_AM_RequestLong",
            self.ep(),
            || self.am_peer(rank),
            false,
            AmCategory::Long,
            handler,
            payload,
            dest_addr,
            lc,
            flags,
            args,
        )
    }

    /// `gex_AM_MaxRequestMedium`; `rank` may be `RANK_INVALID` (least over
    /// the tm).
    fn max_request_medium(&self, rank: Rank, lc: LcOpt, flags: Flags, nargs: u32) -> Result<usize> {
        inject::max_payload_tm(self, rank, AmCategory::Medium, true, lc, flags, nargs)
    }

    /// `gex_AM_MaxRequestLong`.
    fn max_request_long(&self, rank: Rank, lc: LcOpt, flags: Flags, nargs: u32) -> Result<usize> {
        inject::max_payload_tm(self, rank, AmCategory::Long, true, lc, flags, nargs)
    }

    /// `gex_AM_MaxReplyMedium`.
    fn max_reply_medium(&self, rank: Rank, lc: LcOpt, flags: Flags, nargs: u32) -> Result<usize> {
        inject::max_payload_tm(self, rank, AmCategory::Medium, false, lc, flags, nargs)
    }

    /// `gex_AM_MaxReplyLong`.
    fn max_reply_long(&self, rank: Rank, lc: LcOpt, flags: Flags, nargs: u32) -> Result<usize> {
        inject::max_payload_tm(self, rank, AmCategory::Long, false, lc, flags, nargs)
    }

    /// `gex_AM_PrepareRequestMedium`. `Ok(None)` is the `IMMEDIATE` no-op
    /// (never returned by the smp conduit, which always has a buffer).
    fn prepare_request_medium<'b>(
        &'b self,
        rank: Rank,
        buf: PrepareBuf<'b>,
        least: usize,
        most: usize,
        flags: Flags,
        nargs: u32,
    ) -> Result<Option<SrcDesc<'b>>> {
        let d = Dest::client(self.ep(), self.am_peer(rank)?);
        SrcDesc::prepare(
            d,
            true,
            AmCategory::Medium,
            buf,
            least,
            most,
            None,
            flags,
            nargs,
        )
    }

    /// `gex_AM_PrepareRequestLong`. A `dest_addr` given here must be passed
    /// again to the commit.
    #[allow(clippy::too_many_arguments)]
    fn prepare_request_long<'b>(
        &'b self,
        rank: Rank,
        buf: PrepareBuf<'b>,
        least: usize,
        most: usize,
        dest_addr: Option<usize>,
        flags: Flags,
        nargs: u32,
    ) -> Result<Option<SrcDesc<'b>>> {
        let d = Dest::client(self.ep(), self.am_peer(rank)?);
        SrcDesc::prepare(
            d,
            true,
            AmCategory::Long,
            buf,
            least,
            most,
            dest_addr,
            flags,
            nargs,
        )
    }
}

impl<T: TmRef + ?Sized> AmRequest for T {}

/// The least payload limits over every pair of ranks and every argument
/// (`gex_AM_LUB{Request,Reply}{Medium,Long}`), in that order:
/// (request medium, reply medium, request long, reply long).
pub fn lub_limits() -> Result<gex_conduit::AmLimits> {
    Ok(Runtime::require("gex_AM_LUBRequestMedium")?
        .conduit()
        .am_lub_limits())
}

/// `gex_AM_LUBRequestMedium()`.
pub fn lub_request_medium() -> Result<usize> {
    lub_limits().map(|l| l.max_request_medium)
}

/// `gex_AM_LUBReplyMedium()`.
pub fn lub_reply_medium() -> Result<usize> {
    lub_limits().map(|l| l.max_reply_medium)
}

/// `gex_AM_LUBRequestLong()`.
pub fn lub_request_long() -> Result<usize> {
    lub_limits().map(|l| l.max_request_long)
}

/// `gex_AM_LUBReplyLong()`.
pub fn lub_reply_long() -> Result<usize> {
    lub_limits().map(|l| l.max_reply_long)
}
