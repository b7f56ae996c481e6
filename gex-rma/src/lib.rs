//! gex-rma: one-sided Put and Get (GASNet-EX "Extended API").
//!
//! Every call names the peer by `(tm, rank)` and its remote memory by the
//! owner's address, or by an offset into the peer's bound segment with
//! `Flags::PEER_SEG_OFFSET`. The whole remote range is checked against the
//! peer's segment before anything moves; a violation is an error naming the
//! rank, the range and the segment. The local side is any Rust slice, or a
//! range of the local segment by offset (`Src::SegOffset`/`Dst::SegOffset`
//! with `Flags::SELF_SEG_OFFSET`).
//!
//! Two transports:
//! - to a peer whose segment is mapped into this process (the whole job on
//!   the smp conduit), a transfer is a bounds check and a copy, inlined: no
//!   dynamic dispatch, no allocation, no lock; it completes at initiation, so
//!   NB calls return `Event::INVALID`;
//! - to any other peer, the conduit's one-sided operations when it offers
//!   them for that peer (`gex_conduit::RmaCapability`; the udp conduit
//!   does), chosen once per peer;
//! - otherwise the Active Message reference path ([`ampath`]), which every
//!   conduit without one-sided operations uses. `GEX_RMA_FORCE_AM=1` in
//!   the environment ([`RmaSettings::force_am`], or [`set_force_am`])
//!   sends everything that way.
//!
//! [`route`] tells which a peer gets.
//!
//! Completion: a put on the direct or AM route copies its source out
//! before returning (local completion at initiation, whatever `lc` asks).
//! On the conduit's one-sided route the conduit may send from the source
//! itself and release it later (zero-copy): a blocking put hands it the
//! caller's memory and returns after both completions; a source in the
//! local segment (`Src::SegOffset`) under `Lc::Defer`, `Lc::Group` or a
//! leaf event is sent from the segment, and local completion is reported
//! there (the leaf event, `nbi::wait(Ec::LC, ..)`, the root event's LC
//! leaf; the root event and NBI PUT completion include it); every other
//! source is copied at initiation. NB calls return an
//! [`Event`] that borrows the destination of a get until it completes. NBI
//! calls are tracked per thread by category (`gex_core::nbi`). An NBI get
//! into a slice on the reference path completes before returning: its
//! borrow of the slice ends with the call, so the data may not arrive later.
//!
//! # For layer and conduit authors
//!
//! [`register`] (the layer's set-up at init) and [`ampath`] (the reference
//! path's AM protocol) are the layer's own; the `gex` facade exports the
//! calls of a program (`gex::rma`).
//!
//! # The direct route
//!
//! Every call (`Rma`, implemented for every `TmRef`) first tries the direct
//! route, inlined into the caller: the thread may communicate (one
//! thread-local flag), the flags are among `FAST_FLAGS` (no
//! `PEER_NEVER_*`, no `SELF_SEG_OFFSET`), the local side is a slice, the
//! rank translates to a jobrank, and the remote range lies in that rank's
//! entry of the fast segment table (`off <= size && len <= size - off`;
//! the offset is the owner address minus the peer's base, or the offset
//! itself under `PEER_SEG_OFFSET`). An entry not directly accessible (not
//! mapped here, or the AM path forced) has size 0, so that one check also
//! decides the route. The transfer is then one copy through the mapping
//! (`gex_core::copy_bytes`: up to 16 bytes as at most two overlapping
//! unaligned loads and stores per side, longer ranges `ptr::copy`): no
//! dynamic dispatch, allocation or lock, and no conduit.
//!
//! # The general route
//!
//! Everything else takes `put_general`/`get_general` (`#[cold]`, out of
//! line, so the direct route stays straight-line code): every rule checked
//! again with an error saying what failed (context, flags, `lc`, the rank,
//! the range with the one range check, `PEER_NEVER_SELF`/`_NBRHD`, the
//! local side under `SELF_SEG_OFFSET`), then a direct copy if the peer is
//! mapped, else the conduit's one-sided route if it reaches that peer
//! (`native`), else the AM reference path (`ampath`). Error messages are
//! built in `#[cold]` functions.
//!
//! # Created endpoints' segments
//!
//! The direct route takes its entry from `tm.fast_entry(rank)`: for a team
//! the primordial fast table; for a pair `epseg::fast_entry_at(slot,
//! rank)`, one load of the slot's active fast form and one of the job size
//! (the pair's index is clamped to a slot when the pair is made). So a
//! mapped created segment costs two independent loads, one bounds check and
//! a copy. The general route checks the range against
//! `tm.peer_segment(jobrank)` (nothing known is an error naming the
//! endpoint). Unmapped segments of created endpoints go through Active
//! Messages: puts as Medium requests (handler 40: offset, endpoint index,
//! slot), gets as Short requests answered by the usual Medium reply (41),
//! memsets (42); the target checks the index and the range against its own
//! entry and a violation is fatal, naming the sender and the endpoint. The
//! conduit's one-sided route reaches them too (`RmaCapability::put`/`get`
//! name the endpoint index; the udp and ibv targets check the range
//! against that endpoint's segment). `route_to` tells the route to a
//! created endpoint's segment. Atomics never go over pairs: an atomic
//! domain is created over a team of primordial endpoints.

#![warn(missing_docs)]

pub mod ampath;
mod local;
mod native;

use std::sync::Arc;

pub use gex_conduit::Injected;
pub use gex_core::nbi;
pub use gex_core::{Event, Lc};
pub use local::{Dst, Src};

use gex_conduit::{RangeError, ZeroLen};
use gex_core::copy::copy_bytes;
use gex_core::{context, segment_desc, Completion, Ep, GetOut, Runtime, Staging, TmRef};
use gex_types::{Ec, EpCapabilities, EpIndex, Error, Flags, Rank, Result, RmaValue};

use ampath::GetDst;
use gex_core::internals::*;
use native::Hold;

/// Sends every transfer of this process through the AM reference path
/// (`true`), or lets mapped peers use direct copies (`false`, the default
/// unless `GEX_RMA_FORCE_AM=1` was set at init).
pub fn set_force_am(on: bool) {
    gex_core::set_direct_access(!on);
}

/// Whether the AM reference path is forced.
pub fn force_am() -> bool {
    !gex_core::direct_access()
}

/// How transfers between this process and a peer travel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// A copy through this process's mapping of the peer's segment.
    Direct,
    /// The conduit's one-sided operations (e.g. the udp conduit's, with no
    /// AM handler at the target).
    Conduit,
    /// The Active Message reference path.
    ActiveMessages,
}

/// The route transfers to `jobrank` take now (after segment attach; the
/// choice between the conduit's capability and AMs is made once per peer,
/// and `GEX_RMA_FORCE_AM=1` or [`set_force_am`] sends everything through
/// AMs).
pub fn route(ep: &Ep, jobrank: Rank) -> Route {
    route_to(ep, 0, jobrank)
}

/// The route transfers to the segment bound to endpoint `remote_ep` of
/// `jobrank` take now (over a TM-pair naming that index; 0 is [`route`]):
/// `Direct` when this process maps it, else as [`route`] says.
pub fn route_to(ep: &Ep, remote_ep: EpIndex, jobrank: Rank) -> Route {
    let desc = if remote_ep == 0 {
        segment_desc(ep.runtime(), jobrank)
    } else {
        gex_core::epseg::ep_segment(remote_ep, jobrank)
    };
    let mapped = desc.is_some_and(|d| d.local_base.is_some());
    if force_am() {
        Route::ActiveMessages
    } else if mapped {
        Route::Direct
    } else if native::reaches(ep, jobrank) {
        Route::Conduit
    } else {
        Route::ActiveMessages
    }
}

/// gex-rma's settings, applied at client init by [`register_with`].
/// `Default` is what an empty environment gives; [`RmaSettings::from_env`]
/// reads the variables named on each field.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RmaSettings {
    /// `GEX_RMA_FORCE_AM` (`1`; default off): every put and get goes
    /// through the Active Message reference path (see [`set_force_am`]).
    pub force_am: bool,
}

impl RmaSettings {
    /// The settings this process's environment gives; a value that does
    /// not parse is an error naming the variable.
    pub fn from_env() -> Result<RmaSettings> {
        Self::from_lookup(gex_core::bootstrap::vars::Lookup::env())
    }

    /// The settings `vars` gives (see [`RmaSettings::from_env`]).
    pub fn from_lookup(vars: gex_core::bootstrap::vars::Lookup<'_>) -> Result<RmaSettings> {
        Ok(RmaSettings {
            force_am: vars.flag("GEX_RMA_FORCE_AM", false)?,
        })
    }
}

/// The layer's set-up on every rank at client init, with its settings from
/// the environment ([`RmaSettings::from_env`]); see [`register_with`].
pub fn register(ep: &Ep) -> Result<()> {
    register_with(ep, &RmaSettings::from_env()?)
}

/// The layer's set-up on every rank at client init: applies `settings` and
/// registers the reference path's AM handlers.
pub fn register_with(ep: &Ep, settings: &RmaSettings) -> Result<()> {
    if settings.force_am {
        set_force_am(true);
    }
    ampath::register(ep)
}

/// Flags every RMA call accepts.
const RMA_FLAGS: Flags = Flags::IMMEDIATE
    .union(Flags::PEER_NEVER_SELF)
    .union(Flags::PEER_NEVER_NBRHD)
    .union(Flags::LC_COPY_YES)
    .union(Flags::LC_COPY_NO)
    .union(Flags::SELF_SEG_UNKNOWN)
    .union(Flags::SELF_SEG_SOME)
    .union(Flags::SELF_SEG_BOUND)
    .union(Flags::SELF_SEG_OFFSET)
    .union(Flags::PEER_SEG_UNKNOWN)
    .union(Flags::PEER_SEG_SOME)
    .union(Flags::PEER_SEG_BOUND)
    .union(Flags::PEER_SEG_OFFSET);

/// Flags under which the inlined direct route applies; any other RMA flag
/// (the PEER_NEVER assertions, SELF_SEG_OFFSET) takes the general route,
/// which checks it. The general routes are marked cold so that the direct
/// route is the straight-line path in the caller's code. (Public for the
/// C interface, whose header's inline route accepts the same flags.)
pub const FAST_FLAGS: Flags = RMA_FLAGS
    .difference(Flags::PEER_NEVER_SELF)
    .difference(Flags::PEER_NEVER_NBRHD)
    .difference(Flags::SELF_SEG_OFFSET);

/// The common case, inlined into the caller: a thread that may
/// communicate, only [`FAST_FLAGS`], a valid rank whose segment is mapped
/// here and contains the whole range. Returns where the range lives in
/// this process, or `None` for everything else (errors included), which
/// the general route then handles and reports in full.
#[inline(always)]
fn direct_route<T: TmRef + ?Sized>(
    tm: &T,
    rank: Rank,
    addr: usize,
    len: usize,
    flags: Flags,
) -> Option<*mut u8> {
    // `local_has` is a constant `true` for a team (primordial endpoint).
    if !context::may_communicate()
        || !(flags - FAST_FLAGS).is_empty()
        || !tm.local_has(EpCapabilities::RMA)
    {
        return None;
    }
    // For a team this is the primordial table's entry (`fast_entry` is
    // inlined to `jobrank_of` and `fast_segments`); for a pair, that of
    // the endpoint index it names.
    let d = tm.fast_entry(rank)?;
    let off = if flags.contains(Flags::PEER_SEG_OFFSET) {
        addr
    } else {
        addr.wrapping_sub(d.owner_base)
    };
    // An entry not directly accessible has size 0, so this one check
    // also sends it down the general route (zero bytes at offset 0 pass,
    // and copying nothing is right wherever the segment is).
    if off > d.size || len > d.size - off {
        return None;
    }
    Some((d.local_base + off) as *mut u8)
}

/// A checked remote range.
struct Remote {
    jobrank: Rank,
    /// The endpoint index whose segment it is (0: the primordial one).
    ep: EpIndex,
    off: usize,
    /// The range in this process, when the peer's segment is mapped and the
    /// reference path is not forced.
    local: Option<*mut u8>,
}

#[cold]
#[inline(never)]
fn bad_flags(call: &str, flags: Flags) -> Error {
    Error::bad_arg(format!(
        "{call}: flags {:?} are not valid for RMA",
        flags - RMA_FLAGS
    ))
}

#[cold]
#[inline(never)]
fn out_of_segment(call: &str, e: RangeError) -> Error {
    Error::bad_arg(format!("{call}: {e}; nothing was transferred"))
}

#[cold]
#[inline(never)]
fn unpublished(call: &str, jobrank: Rank, ep: EpIndex) -> Error {
    Error::bad_arg(format!(
        "{call}: endpoint {ep} of rank {jobrank} has no segment known to this process (none bound there, or not published with gex_EP_PublishBoundSegment, or destroyed here); nothing was transferred"
    ))
}

#[cold]
#[inline(never)]
fn wrong_peer(call: &str, jobrank: Rank, flags: Flags) -> Error {
    Error::bad_arg(format!(
        "{call}: {:?} asserts that rank {jobrank} is not {}, but it is",
        flags & (Flags::PEER_NEVER_SELF | Flags::PEER_NEVER_NBRHD),
        if flags.contains(Flags::PEER_NEVER_NBRHD) {
            "in this neighbourhood"
        } else {
            "this process"
        }
    ))
}

/// Checks the call and the remote range `[addr, addr + len)` of `rank`.
#[inline]
fn remote<T: TmRef + ?Sized>(
    call: &'static str,
    tm: &T,
    rank: Rank,
    addr: usize,
    len: usize,
    flags: Flags,
) -> Result<Remote> {
    context::check_may_communicate(call)?;
    tm.require_local(call, EpCapabilities::RMA)?;
    if !(flags - RMA_FLAGS).is_empty() {
        return Err(bad_flags(call, flags));
    }
    let jobrank = tm.rma_jobrank_of(rank)?;
    let ep = tm.remote_ep_index();
    if len == 0 {
        // Zero bytes name no memory: any address will do, as in the
        // reference implementation (the callers complete at once).
        return Ok(Remote {
            jobrank,
            ep,
            off: 0,
            local: None,
        });
    }
    let d = tm.peer_segment(jobrank);
    if ep != 0 && d.is_none() {
        return Err(unpublished(call, jobrank, ep));
    }
    let d = d.unwrap_or_default();
    let is_offset = flags.contains(Flags::PEER_SEG_OFFSET);
    let off = d
        .offset_of(jobrank, addr, len, is_offset, ZeroLen::InSegment)
        .map_err(|e| out_of_segment(call, e))?;
    // Direct access when the fast table says so (mapped here, and the
    // reference path not forced).
    let local = tm
        .fast_entry(rank)
        .is_some_and(|f| f.size != 0)
        .then(|| d.local_base.map(|b| (b + off) as *mut u8))
        .flatten();
    if flags.intersects(Flags::PEER_NEVER_SELF | Flags::PEER_NEVER_NBRHD)
        && ((flags.contains(Flags::PEER_NEVER_SELF) && jobrank == tm.ep().runtime().jobrank())
            || (flags.contains(Flags::PEER_NEVER_NBRHD) && d.local_base.is_some()))
    {
        return Err(wrong_peer(call, jobrank, flags));
    }
    Ok(Remote {
        jobrank,
        ep,
        off,
        local,
    })
}

fn check_lc(call: &str, lc: &Lc<'_>, nbi: bool) -> Result<()> {
    match lc {
        Lc::Group if !nbi => Err(Error::bad_arg(format!(
            "{call}: GEX_EVENT_GROUP is only for NBI calls"
        ))),
        Lc::Event(_) if nbi => Err(Error::bad_arg(format!(
            "{call}: NBI calls take GEX_EVENT_NOW, DEFER or GROUP, not an event"
        ))),
        _ => Ok(()),
    }
}

/// Signals local completion as `lc` asks, for a put whose source was
/// copied out at initiation.
#[inline]
fn local_complete(lc: Lc<'_>) {
    if let Lc::Event(e) = lc {
        *e = Event::INVALID;
    }
}

fn value_bytes(call: &str, value: RmaValue, nbytes: usize) -> Result<[u8; 8]> {
    if nbytes == 0 || nbytes > 8 {
        return Err(Error::bad_arg(format!(
            "{call}: nbytes must be 1 to 8, got {nbytes}"
        )));
    }
    let mut out = [0u8; 8];
    let b = value.to_ne_bytes();
    // The low-order nbytes of the value, in this machine's byte order.
    if cfg!(target_endian = "little") {
        out[..nbytes].copy_from_slice(&b[..nbytes]);
    } else {
        out[..nbytes].copy_from_slice(&b[8 - nbytes..]);
    }
    Ok(out)
}

fn bytes_value(bytes: &[u8]) -> RmaValue {
    let mut b = [0u8; 8];
    if cfg!(target_endian = "little") {
        b[..bytes.len()].copy_from_slice(bytes);
    } else {
        b[8 - bytes.len()..].copy_from_slice(bytes);
    }
    RmaValue::from_ne_bytes(b)
}

/// How an initiation ended.
enum Started {
    /// Complete at initiation.
    Done,
    /// `IMMEDIATE` and nothing was done.
    NoOp,
    /// In flight.
    Pending(Arc<Completion>),
    /// In flight, with local completion tracked apart (the root event's
    /// LC leaf).
    /// (Boxed: keeps `Started` two words, as the inlined direct route
    /// returns it.)
    PendingLc(Box<(Arc<Completion>, Arc<Completion>)>),
}

impl Started {
    fn injected(&self) -> Injected {
        match self {
            Started::NoOp => Injected::NoOp,
            _ => Injected::Sent,
        }
    }

    fn event(self) -> Event<'static> {
        match self {
            Started::Done => Event::INVALID,
            Started::NoOp => Event::NO_OP,
            Started::Pending(c) if c.is_complete() => Event::INVALID,
            Started::Pending(c) => Event::pending(c),
            Started::PendingLc(b) if b.0.is_complete() => Event::INVALID,
            Started::PendingLc(b) => Event::pending_with_lc(b.0, b.1),
        }
    }
}

enum Mode {
    Blocking,
    Nbi,
    Nb,
}

/// Put and Get for anything that names a peer: a team ([`gex_core::Tm`])
/// or a TM-pair ([`gex_core::TmPair`]).
pub trait Rma: TmRef {
    /// `gex_RMA_PutBlocking`: copies `src` to `dest` at `rank` and returns
    /// once the data is in place.
    #[inline(always)]
    fn put_blocking<'s>(
        &self,
        rank: Rank,
        dest: usize,
        src: impl Into<Src<'s>>,
        flags: Flags,
    ) -> Result<Injected> {
        put(
            self,
            "gex_RMA_PutBlocking",
            rank,
            dest,
            src.into(),
            Lc::Now,
            flags,
            Mode::Blocking,
        )
        .map(|s| s.injected())
    }

    /// `gex_RMA_PutNBI`: `lc` is `Now`, `Defer` or `Group`; completion is
    /// synchronised with `nbi::wait(Ec::PUT, ..)` or an access region.
    #[inline(always)]
    fn put_nbi<'s>(
        &self,
        rank: Rank,
        dest: usize,
        src: impl Into<Src<'s>>,
        lc: Lc<'_>,
        flags: Flags,
    ) -> Result<Injected> {
        put(
            self,
            "gex_RMA_PutNBI",
            rank,
            dest,
            src.into(),
            lc,
            flags,
            Mode::Nbi,
        )
        .map(|s| s.injected())
    }

    /// `gex_RMA_PutNB`: `lc` is `Now`, `Defer` or a leaf event. Returns the
    /// root event (`Event::NO_OP` for an `IMMEDIATE` no-op).
    #[inline(always)]
    fn put_nb<'s>(
        &self,
        rank: Rank,
        dest: usize,
        src: impl Into<Src<'s>>,
        lc: Lc<'_>,
        flags: Flags,
    ) -> Result<Event<'static>> {
        put(
            self,
            "gex_RMA_PutNB",
            rank,
            dest,
            src.into(),
            lc,
            flags,
            Mode::Nb,
        )
        .map(Started::event)
    }

    /// `gex_RMA_GetBlocking`: copies `src` at `rank` into `dst`.
    #[inline(always)]
    fn get_blocking<'d>(
        &self,
        dst: impl Into<Dst<'d>>,
        rank: Rank,
        src: usize,
        flags: Flags,
    ) -> Result<Injected> {
        get_plain(
            self,
            "gex_RMA_GetBlocking",
            dst.into(),
            rank,
            src,
            flags,
            Mode::Blocking,
        )
    }

    /// `gex_RMA_GetNBI`: synchronised with `nbi::wait(Ec::GET, ..)` or an
    /// access region. Into a slice on the reference path it completes
    /// before returning (the borrow of the slice ends with the call).
    #[inline(always)]
    fn get_nbi<'d>(
        &self,
        dst: impl Into<Dst<'d>>,
        rank: Rank,
        src: usize,
        flags: Flags,
    ) -> Result<Injected> {
        get_plain(
            self,
            "gex_RMA_GetNBI",
            dst.into(),
            rank,
            src,
            flags,
            Mode::Nbi,
        )
    }

    /// `gex_RMA_GetNB`: the event borrows `dst` until it completes.
    #[inline(always)]
    fn get_nb<'d>(
        &self,
        dst: impl Into<Dst<'d>>,
        rank: Rank,
        src: usize,
        flags: Flags,
    ) -> Result<Event<'d>> {
        get(
            self,
            "gex_RMA_GetNB",
            dst.into(),
            rank,
            src,
            flags,
            Mode::Nb,
        )
        .map(GetOut::event)
    }

    /// `gex_RMA_GetBlockingVal`: the `nbytes` (1 to 8) bytes at `src` as an
    /// integer in this machine's byte order, zero-extended.
    ///
    /// `IMMEDIATE` is accepted, as on every initiation call. The flag lets
    /// a call return without communicating ("*may* return"), never obliges
    /// it to, and this call's result has no no-op value: it always performs
    /// the get, waiting for resources if it must.
    fn get_blocking_val(
        &self,
        rank: Rank,
        src: usize,
        nbytes: usize,
        flags: Flags,
    ) -> Result<RmaValue> {
        value_bytes("gex_RMA_GetBlockingVal", 0, nbytes)?;
        let flags = flags - Flags::IMMEDIATE;
        let mut b = [0u8; 8];
        get_plain(
            self,
            "gex_RMA_GetBlockingVal",
            Dst::Slice(&mut b[..nbytes]),
            rank,
            src,
            flags,
            Mode::Blocking,
        )?;
        Ok(bytes_value(&b[..nbytes]))
    }

    /// `gex_RMA_PutBlockingVal`: writes the low-order `nbytes` (1 to 8)
    /// bytes of `value`.
    fn put_blocking_val(
        &self,
        rank: Rank,
        dest: usize,
        value: RmaValue,
        nbytes: usize,
        flags: Flags,
    ) -> Result<Injected> {
        let b = value_bytes("gex_RMA_PutBlockingVal", value, nbytes)?;
        put(
            self,
            "gex_RMA_PutBlockingVal",
            rank,
            dest,
            Src::Slice(&b[..nbytes]),
            Lc::Now,
            flags,
            Mode::Blocking,
        )
        .map(|s| s.injected())
    }

    /// `gex_RMA_PutNBIVal`.
    fn put_nbi_val(
        &self,
        rank: Rank,
        dest: usize,
        value: RmaValue,
        nbytes: usize,
        flags: Flags,
    ) -> Result<Injected> {
        let b = value_bytes("gex_RMA_PutNBIVal", value, nbytes)?;
        put(
            self,
            "gex_RMA_PutNBIVal",
            rank,
            dest,
            Src::Slice(&b[..nbytes]),
            Lc::Now,
            flags,
            Mode::Nbi,
        )
        .map(|s| s.injected())
    }

    /// `gex_RMA_PutNBVal`.
    fn put_nb_val(
        &self,
        rank: Rank,
        dest: usize,
        value: RmaValue,
        nbytes: usize,
        flags: Flags,
    ) -> Result<Event<'static>> {
        let b = value_bytes("gex_RMA_PutNBVal", value, nbytes)?;
        put(
            self,
            "gex_RMA_PutNBVal",
            rank,
            dest,
            Src::Slice(&b[..nbytes]),
            Lc::Now,
            flags,
            Mode::Nb,
        )
        .map(Started::event)
    }

    /// GASNet-1 `gasnet_memset`: sets the `nbytes` bytes at `dest` on
    /// `rank` to `val`, and returns once they are set. `dest` is an owner
    /// address, or an offset with `Flags::PEER_SEG_OFFSET`; the range is
    /// checked against the peer's segment like a put's. (GASNet-EX v0.17
    /// deprecates the call and has no replacement; gex keeps it.)
    fn memset_blocking(
        &self,
        rank: Rank,
        dest: usize,
        val: u8,
        nbytes: usize,
        flags: Flags,
    ) -> Result<Injected> {
        memset(
            self,
            "gasnet_memset",
            rank,
            dest,
            val,
            nbytes,
            flags,
            Mode::Blocking,
        )
        .map(|s| s.injected())
    }

    /// GASNet-1 `gasnet_memset_nb`: as [`Rma::memset_blocking`], completed
    /// through the returned event (a put's synchronisation).
    fn memset_nb(
        &self,
        rank: Rank,
        dest: usize,
        val: u8,
        nbytes: usize,
        flags: Flags,
    ) -> Result<Event<'static>> {
        memset(
            self,
            "gasnet_memset_nb",
            rank,
            dest,
            val,
            nbytes,
            flags,
            Mode::Nb,
        )
        .map(Started::event)
    }
}

impl<T: TmRef + ?Sized> Rma for T {}

/// Flags a memset accepts: a put's, less those about a local source.
const MEMSET_FLAGS: Flags = Flags::IMMEDIATE
    .union(Flags::PEER_NEVER_SELF)
    .union(Flags::PEER_NEVER_NBRHD)
    .union(Flags::PEER_SEG_UNKNOWN)
    .union(Flags::PEER_SEG_SOME)
    .union(Flags::PEER_SEG_BOUND)
    .union(Flags::PEER_SEG_OFFSET);

#[allow(clippy::too_many_arguments)]
fn memset<T: TmRef + ?Sized>(
    tm: &T,
    call: &'static str,
    rank: Rank,
    dest: usize,
    val: u8,
    nbytes: usize,
    flags: Flags,
    mode: Mode,
) -> Result<Started> {
    if !(flags - MEMSET_FLAGS).is_empty() {
        return Err(Error::bad_arg(format!(
            "{call}: flags {:?} are not valid for a memset",
            flags - MEMSET_FLAGS
        )));
    }
    let r = remote(call, tm, rank, dest, nbytes, flags)?;
    if let Some(p) = r.local {
        // SAFETY: `p..p+nbytes` lies in the peer's mapped segment (checked
        // by `remote`).
        unsafe { std::ptr::write_bytes(p, val, nbytes) };
        return Ok(Started::Done);
    }
    if nbytes == 0 {
        return Ok(Started::Done);
    }
    let immediate = flags.contains(Flags::IMMEDIATE);
    let Some(c) = ampath::memset(tm.ep(), r.jobrank, r.ep, r.off, nbytes, val, immediate)? else {
        return Ok(Started::NoOp);
    };
    Ok(match mode {
        Mode::Nb => Started::Pending(c),
        Mode::Blocking | Mode::Nbi => {
            wait_for(&c);
            Started::Done
        }
    })
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn put<T: TmRef + ?Sized>(
    tm: &T,
    call: &'static str,
    rank: Rank,
    dest: usize,
    src: Src<'_>,
    lc: Lc<'_>,
    flags: Flags,
    mode: Mode,
) -> Result<Started> {
    if let Src::Slice(s) = src {
        let lc_ok = match mode {
            Mode::Nbi => !matches!(lc, Lc::Event(_)),
            Mode::Blocking | Mode::Nb => !matches!(lc, Lc::Group),
        };
        if lc_ok {
            if let Some(p) = direct_route(tm, rank, dest, s.len(), flags) {
                // SAFETY: `p..p+len` lies in the peer's mapped segment
                // (checked by `direct_route`); `s` is readable.
                unsafe { copy_bytes(s.as_ptr(), p, s.len()) };
                local_complete(lc);
                return Ok(Started::Done);
            }
        }
        return put_general(
            tm,
            call,
            rank,
            dest,
            s.as_ptr() as usize,
            s.len(),
            false,
            lc,
            flags,
            mode,
        );
    }
    let Src::SegOffset { offset, len } = src else {
        unreachable!()
    };
    put_general(tm, call, rank, dest, offset, len, true, lc, flags, mode)
}

/// Every put the direct route does not take: checks everything, reports
/// errors, and copies directly or goes through the reference path.
#[allow(clippy::too_many_arguments)]
#[cold]
#[inline(never)]
fn put_general<T: TmRef + ?Sized>(
    tm: &T,
    call: &'static str,
    rank: Rank,
    dest: usize,
    src_at: usize,
    len: usize,
    src_in_segment: bool,
    lc: Lc<'_>,
    flags: Flags,
    mode: Mode,
) -> Result<Started> {
    let src = if src_in_segment {
        Src::SegOffset {
            offset: src_at,
            len,
        }
    } else {
        // SAFETY: `put` passed the address and length of the caller's
        // `Src::Slice`, which is borrowed for the whole call.
        Src::Slice(unsafe { std::slice::from_raw_parts(src_at as *const u8, len) })
    };
    let r = remote(call, tm, rank, dest, len, flags)?;
    if !matches!(lc, Lc::Now) {
        check_lc(call, &lc, matches!(mode, Mode::Nbi))?;
    }
    if len == 0 {
        // Nothing to copy from anywhere: complete at once, whatever the
        // local and remote addresses.
        local_complete(lc);
        return Ok(Started::Done);
    }
    let sp = local::src_ptr(call, tm.ep(), &src, flags)?;
    if let Some(p) = r.local {
        // SAFETY: `p..p+len` lies in the peer's mapped segment (checked by
        // `remote`); `sp..sp+len` is the caller's source, readable for the
        // call.
        unsafe { copy_bytes(sp, p, len) };
        local_complete(lc);
        return Ok(Started::Done);
    }
    put_am(tm.ep(), r, sp, len, src_in_segment, lc, flags, mode)
}

/// The part of a put to a peer whose segment is not mapped here, out of
/// line: through the conduit's one-sided capability when it reaches the
/// peer (and the AM reference path is not forced), else through the
/// reference path.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn put_am(
    ep: &Ep,
    r: Remote,
    sp: *const u8,
    len: usize,
    src_in_segment: bool,
    lc: Lc<'_>,
    flags: Flags,
    mode: Mode,
) -> Result<Started> {
    if len == 0 {
        local_complete(lc);
        return Ok(Started::Done);
    }
    let parent = match mode {
        Mode::Nbi => Some(nbi::track(Ec::PUT)),
        _ => None,
    };
    let immediate = flags.contains(Flags::IMMEDIATE);
    if !force_am() && native::reaches(ep, r.jobrank) {
        return put_native(ep, r, sp, len, src_in_segment, lc, immediate, parent, mode);
    }
    let Some(c) = ampath::put(ep, r.jobrank, r.ep, r.off, sp, len, immediate, parent)? else {
        return Ok(Started::NoOp);
    };
    local_complete(lc);
    Ok(match mode {
        Mode::Blocking => {
            wait_for(&c);
            Started::Done
        }
        Mode::Nbi => Started::Done,
        Mode::Nb => Started::Pending(c),
    })
}

/// A put through the conduit's one-sided capability, which may keep
/// reading the source after the call (zero-copy). The conduit is given
/// the caller's memory when that stays valid and unmodified until local
/// completion: a blocking put (it waits for it), or a source in the local
/// segment under `Lc::Defer`, `Lc::Group` or a leaf event (segment memory
/// lives as long as the process, and the spec forbids modifying a source
/// before local completion). Any other source is copied at initiation
/// (`Lc::Now`, or a borrowed slice whose borrow ends with the call).
#[allow(clippy::too_many_arguments)]
fn put_native(
    ep: &Ep,
    r: Remote,
    sp: *const u8,
    len: usize,
    src_in_segment: bool,
    lc: Lc<'_>,
    immediate: bool,
    parent: Option<Arc<Completion>>,
    mode: Mode,
) -> Result<Started> {
    let hold = match (&mode, &lc) {
        (Mode::Blocking, _) => Hold::Borrow,
        (_, Lc::Now) => Hold::Copy,
        _ if src_in_segment => Hold::Borrow,
        _ => Hold::Copy,
    };
    // Local completion tracked apart from the operation's when the client
    // can observe it: a leaf event, the NBI LC category, or the root
    // event's LC leaf.
    let lc_done = match (&lc, hold, &mode) {
        (_, Hold::Copy, _) | (_, _, Mode::Blocking) => None,
        (Lc::Group, _, _) => Some(Completion::new(
            native::max_parts(ep, len),
            Some(nbi::track(Ec::LC)),
        )),
        (Lc::Event(_), _, _) | (_, _, Mode::Nb) => {
            Some(Completion::new(native::max_parts(ep, len), None))
        }
        _ => None,
    };
    let Some(c) = native::put(
        ep,
        (r.jobrank, r.ep),
        r.off,
        sp,
        len,
        hold,
        immediate,
        parent,
        lc_done.clone(),
    )?
    else {
        return Ok(Started::NoOp);
    };
    if let Lc::Event(e) = lc {
        *e = match &lc_done {
            Some(l) if !l.is_complete() => Event::pending(l.clone()),
            _ => Event::INVALID,
        };
    }
    Ok(match mode {
        Mode::Blocking => {
            wait_for(&c);
            Started::Done
        }
        Mode::Nbi => Started::Done,
        Mode::Nb => match lc_done {
            Some(l) => Started::PendingLc(Box::new((c, l))),
            None => Started::Pending(c),
        },
    })
}

/// A get to a peer whose segment is not mapped here: through the
/// conduit's one-sided capability when it reaches the peer (and the AM
/// reference path is not forced), else through the reference path.
fn route_get(
    ep: &Ep,
    r: &Remote,
    len: usize,
    dst: GetDst,
    immediate: bool,
    parent: Option<Arc<Completion>>,
) -> Result<Option<Arc<Completion>>> {
    let (jobrank, off) = (r.jobrank, r.off);
    if !force_am() && native::reaches(ep, jobrank) {
        native::get(ep, (jobrank, r.ep), off, len, dst, immediate, parent)
    } else {
        ampath::get(ep, jobrank, r.ep, off, len, dst, immediate, parent)
    }
}

fn wait_for(c: &Completion) {
    if let Some(rt) = Runtime::get() {
        rt.spin_until(|| c.is_complete());
    }
}

/// A get that returns no event (blocking and NBI): the fast path returns a
/// one-word result, and only the reference path deals in events.
#[inline(always)]
fn get_plain<T: TmRef + ?Sized>(
    tm: &T,
    call: &'static str,
    mut dst: Dst<'_>,
    rank: Rank,
    src: usize,
    flags: Flags,
    mode: Mode,
) -> Result<Injected> {
    if get_direct(tm, &mut dst, rank, src, flags) {
        return Ok(Injected::Sent);
    }
    get_general(tm, call, dst, rank, src, flags, mode).map(GetOut::injected)
}

/// A get by the direct route, if it applies: whether it was done.
#[inline(always)]
fn get_direct<T: TmRef + ?Sized>(
    tm: &T,
    dst: &mut Dst<'_>,
    rank: Rank,
    src: usize,
    flags: Flags,
) -> bool {
    let Dst::Slice(d) = dst else {
        return false;
    };
    let Some(p) = direct_route(tm, rank, src, d.len(), flags) else {
        return false;
    };
    // SAFETY: `p..p+len` lies in the peer's mapped segment (checked by
    // `direct_route`); `d` is writable.
    unsafe { copy_bytes(p as *const u8, d.as_mut_ptr(), d.len()) };
    true
}

#[inline(always)]
fn get<'d, T: TmRef + ?Sized>(
    tm: &T,
    call: &'static str,
    mut dst: Dst<'d>,
    rank: Rank,
    src: usize,
    flags: Flags,
    mode: Mode,
) -> Result<GetOut<'d>> {
    if get_direct(tm, &mut dst, rank, src, flags) {
        return Ok(GetOut::Done);
    }
    get_general(tm, call, dst, rank, src, flags, mode)
}

/// Every get the direct route does not take; as [`put_general`].
#[cold]
#[inline(never)]
fn get_general<'d, T: TmRef + ?Sized>(
    tm: &T,
    call: &'static str,
    mut dst: Dst<'d>,
    rank: Rank,
    src: usize,
    flags: Flags,
    mode: Mode,
) -> Result<GetOut<'d>> {
    let len = dst.len();
    let r = remote(call, tm, rank, src, len, flags)?;
    if len == 0 {
        // Nothing to copy to anywhere: complete at once, whatever the
        // local and remote addresses.
        return Ok(GetOut::Done);
    }
    let dp = local::dst_ptr(call, tm.ep(), &mut dst, flags)?;
    if let Some(p) = r.local {
        // SAFETY: `p..p+len` lies in the peer's mapped segment (checked);
        // `dp..dp+len` is the caller's destination, writable for the call.
        unsafe { copy_bytes(p as *const u8, dp, len) };
        return Ok(GetOut::Done);
    }
    get_am(tm.ep(), r, dst, dp, flags, mode)
}

/// The reference-path part of a get, out of line.
#[inline(never)]
fn get_am<'d>(
    ep: &Ep,
    r: Remote,
    dst: Dst<'d>,
    dp: *mut u8,
    flags: Flags,
    mode: Mode,
) -> Result<GetOut<'d>> {
    let len = dst.len();
    if len == 0 {
        return Ok(GetOut::Done);
    }
    let immediate = flags.contains(Flags::IMMEDIATE);
    let into_segment = matches!(dst, Dst::SegOffset { .. });
    let started = match mode {
        // The destination outlives the operation only if it is the segment.
        Mode::Nbi if into_segment => {
            let parent = Some(nbi::track(Ec::GET));
            route_get(ep, &r, len, GetDst::Raw(dp), immediate, parent)?
        }
        Mode::Nb if !into_segment => {
            let staging = Staging::new(len);
            let Some(c) = route_get(
                ep,
                &r,
                len,
                GetDst::Staged(staging.clone()),
                immediate,
                None,
            )?
            else {
                return Ok(GetOut::NoOp);
            };
            let Dst::Slice(s) = dst else {
                unreachable!("checked above")
            };
            let mut ev = Event::pending_into(c, staging, s);
            // Complete already (answered during injection): finish now so
            // the caller gets INVALID.
            if ev.test()? {
                return Ok(GetOut::Done);
            }
            return Ok(GetOut::Event(ev));
        }
        Mode::Nb => {
            let Some(c) = route_get(ep, &r, len, GetDst::Raw(dp), immediate, None)? else {
                return Ok(GetOut::NoOp);
            };
            return Ok(GetOut::Event(Started::Pending(c).event()));
        }
        Mode::Blocking | Mode::Nbi => {
            // Into a slice: the borrow ends with this call, so complete now.
            let started = route_get(ep, &r, len, GetDst::Raw(dp), immediate, None)?;
            if let Some(c) = &started {
                wait_for(c);
            }
            started
        }
    };
    Ok(if started.is_some() {
        GetOut::Done
    } else {
        GetOut::NoOp
    })
}

#[cfg(test)]
mod tests {
    use super::RmaSettings;
    use gex_core::bootstrap::vars::{var, Lookup};

    #[test]
    fn rma_settings_from_variables() {
        let read = |pairs: &[(&str, &str)]| RmaSettings::from_lookup(Lookup::pairs(pairs));
        assert_eq!(read(&[]).unwrap(), RmaSettings::default());
        assert!(read(&[("GEX_RMA_FORCE_AM", "1")]).unwrap().force_am);
        assert!(!read(&[("GEX_RMA_FORCE_AM", "0")]).unwrap().force_am);
        let e = read(&[("GEX_RMA_FORCE_AM", "2")]).unwrap_err();
        assert!(e.message().contains("GEX_RMA_FORCE_AM=\"2\""), "{e}");
        assert_eq!(var("GEX_RMA_FORCE_AM").unwrap().default, "off");
        assert!(!RmaSettings::default().force_am);
    }
}
