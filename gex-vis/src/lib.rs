//! gex-vis: vector, indexed and strided transfers (GASNet-EX `gasnet_vis.h`).
//!
//! The eighteen calls `gex_VIS_{Vector,Indexed,Strided}{Put,Get}{NB,NBI,Blocking}`
//! are methods of [`Vis`], which every team and TM-pair implements. The
//! remote side is named as in gex-rma (owner addresses, or offsets into the
//! peer's segment with `Flags::PEER_SEG_OFFSET`); the local side is Rust
//! memory: a list of slices (vector, indexed) or one slice with the offset
//! of element 0 in it (strided).
//!
//! # One check, then runs
//!
//! Every call is turned into a list of contiguous runs (remote offset,
//! local address, length; neighbouring runs merged) before anything moves.
//! On the way every remote range goes through the one range check
//! (`gex_conduit::SegmentDesc::offset_of`), every local strided element is
//! checked against its slice, list lengths and totals are compared, and a
//! strided destination whose elements would overlap is refused; a failure
//! is a `BadArg` error naming the element (`dstlist[17]`, `dststrides[1]`,
//! the corner element of a strided extent) and nothing is written.
//!
//! # Routes
//!
//! Chosen per peer ([`route`]):
//! - [`Route::Direct`]: the peer's segment is mapped here (this rank, its
//!   neighbourhood on smp or with the udp bypass): one copy per run (a
//!   strided shape is copied as it is walked, without a list).
//! - [`Route::Conduit`]: the conduit offers one-sided operations for the
//!   peer (`gex_conduit::RmaCapability`; the udp conduit does): runs longer
//!   than half the Medium payload limit go through it, one operation per
//!   run (no conduit offers a gather list yet), and the short runs are
//!   packed into Active Messages as below, since one operation per
//!   8-byte piece would cost far more than packing.
//! - [`Route::ActiveMessages`]: everything else ([`ampath`]): the runs of a
//!   put are packed with their offsets into Medium requests up to the
//!   payload limit (long runs go as Long requests straight into the
//!   segment), all sent before the first acknowledgement is awaited; a get
//!   sends the list of runs in Medium requests and the target answers each
//!   with the packed data in a Medium reply. `GEX_VIS_FORCE_AM=1`
//!   ([`VisSettings::force_am`], [`set_force_am`]) sends every transfer
//!   this way, as does `GEX_RMA_FORCE_AM=1`.
//!
//! # Completion
//!
//! A put copies or packs its source before returning: local completion
//! happens at initiation, so with `Flags::ENABLE_LEAF_LC` the root event's
//! `Ec::LC` leaf is `INVALID` (it "already happened") and an NBI put adds
//! nothing to the `LC` category. On the direct route a put completes at
//! initiation (NB returns `Event::INVALID`); on the other routes its
//! event (or NBI `PUT`) completes when every message is acknowledged,
//! every one-sided operation done, and the peer completion handler, if
//! armed, sent. A get on the direct route completes at initiation. Off
//! it, an NB get's messages land in a staging buffer, and its event (which
//! borrows the destinations) scatters the data out when it completes; a
//! blocking or NBI get writes the destinations directly and waits for the
//! last reply before returning (the borrow of an NBI get's destinations
//! ends with the call, so NBI `GET` tracks nothing).
//!
//! # Peer completion
//!
//! [`set_peer_completion_handler`] arms, for the calling thread, a client
//! handler (registered at the peer as a 0-argument Medium reply handler)
//! that the peer runs after the data of the next VIS put is visible there,
//! once, with the payload given (at most [`MAX_PEERCOMPLETION`] bytes,
//! copied when armed).
//!
//! # For layer and conduit authors
//!
//! [`register`] / [`register_with`] are the layer's set-up at init and
//! [`ampath`] its protocol; the `gex` facade exports the program's calls
//! (`gex::vis`).
//!
//!
//! # Created endpoints
//!
//! Over a TM-pair naming a created endpoint, the peer's range is checked
//! against the segment bound to it as this process knows it
//! (`TmRef::peer_segment`; none known is an error naming the endpoint) and
//! the direct entry comes from that index's fast table, so a mapped created
//! segment takes the direct route. Otherwise the runs are packed into Active
//! Messages to handlers 17 (put) and 18 (get), which take the endpoint
//! index as a fourth argument and check every record against the target's
//! segment of that endpoint (an index without one is fatal); they answer
//! with 13 and 15 as usual. Every run of such a put is packed, since a Long
//! would run in that endpoint's handler table, where gex-vis has none; on
//! the conduit route long runs use the one-sided operations, which name the
//! endpoint. A peer completion still runs in the target's primordial
//! endpoint's table.
//!
//! No conduit offers a gather list yet (`RmaCapability` moves one
//! contiguous range per call), so the conduit route issues one operation per
//! long run and packs the short ones.

#![warn(missing_docs)]

pub mod ampath;
mod shape;

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub use gex_conduit::Injected;
pub use gex_core::Event;
pub use gex_types::Memvec;

use gex_conduit::{SegmentDesc, ZeroLen};
use gex_core::copy::copy_bytes;
use gex_core::internals::*;
use gex_core::{context, nbi, segment_desc, Completion, GetOut, Runtime, Staging, TmRef};
use gex_types::{AmIndex, Ec, EpIndex, Error, Flags, Rank, Result, AM_INDEX_BASE};

use shape::{Level, Merge, Pieces};

/// The largest payload of a peer completion handler
/// (`GEX_VIS_MAX_PEERCOMPLETION`; the spec asks for at least 127).
pub const MAX_PEERCOMPLETION: usize = 512;

static FORCE_AM: AtomicBool = AtomicBool::new(false);

/// Sends every VIS transfer of this process through Active Messages
/// (`true`), or lets mapped peers use direct copies (`false`, the default
/// unless `GEX_VIS_FORCE_AM=1` was set at init).
pub fn set_force_am(on: bool) {
    FORCE_AM.store(on, Ordering::Relaxed);
}

/// Whether the Active Message route is forced for VIS.
pub fn force_am() -> bool {
    FORCE_AM.load(Ordering::Relaxed)
}

/// gex-vis's settings, applied at client init by [`register_with`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct VisSettings {
    /// `GEX_VIS_FORCE_AM` (`1`; default off): every VIS transfer goes
    /// through the Active Message route (see [`set_force_am`]).
    pub force_am: bool,
}

impl VisSettings {
    /// The settings this process's environment gives; a value that does
    /// not parse is an error naming the variable.
    pub fn from_env() -> Result<VisSettings> {
        Self::from_lookup(gex_core::bootstrap::vars::Lookup::env())
    }

    /// The settings `vars` gives (see [`VisSettings::from_env`]).
    pub fn from_lookup(vars: gex_core::bootstrap::vars::Lookup<'_>) -> Result<VisSettings> {
        Ok(VisSettings {
            force_am: vars.flag("GEX_VIS_FORCE_AM", false)?,
        })
    }
}

/// The layer's set-up on every rank at client init, with its settings from
/// the environment; see [`register_with`].
pub fn register(ep: &gex_core::Ep) -> Result<()> {
    register_with(ep, &VisSettings::from_env()?)
}

/// The layer's set-up on every rank at client init: applies `settings`,
/// registers the Active Message route's handlers and its progress hook.
pub fn register_with(ep: &gex_core::Ep, settings: &VisSettings) -> Result<()> {
    if settings.force_am {
        set_force_am(true);
    }
    ampath::register(ep)
}

/// How transfers between this process and a peer travel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Copies through this process's mapping of the peer's segment.
    Direct,
    /// Short runs packed into Active Messages, long runs through the
    /// conduit's one-sided operations (one per run, split at the
    /// capability's `max_transfer`).
    Conduit,
    /// Packed Active Messages (long runs of a put as Long requests).
    ActiveMessages,
}

/// The route VIS transfers to `jobrank` take now (after segment attach;
/// `GEX_VIS_FORCE_AM=1` or `GEX_RMA_FORCE_AM=1` sends everything through
/// Active Messages).
pub fn route(jobrank: Rank) -> Route {
    if direct_base(jobrank).is_some() {
        Route::Direct
    } else if capability(jobrank).is_some() {
        Route::Conduit
    } else {
        Route::ActiveMessages
    }
}

/// The conduit's one-sided capability for the long runs of transfers to
/// `jobrank` (to any endpoint's segment), unless the Active Message route
/// is forced.
fn capability(jobrank: Rank) -> Option<&'static dyn gex_conduit::RmaCapability> {
    if force_am() || !gex_core::direct_access() {
        return None;
    }
    ampath::native(jobrank)
}

/// This process's base of `jobrank`'s segment, if transfers to it are
/// direct copies.
fn direct_base(jobrank: Rank) -> Option<usize> {
    if force_am() {
        return None;
    }
    let rt = Runtime::get()?;
    if jobrank >= rt.jobsize() {
        return None;
    }
    let t = gex_core::fast_segments();
    if t.is_null() {
        return None;
    }
    // SAFETY: a non-null table has one entry per jobrank, and `jobrank` is
    // below the job size.
    let d = unsafe { &*t.add(jobrank as usize) };
    (d.size != 0).then_some(d.local_base)
}

// ---------------------------------------------------------------------------
// Peer completion.

/// An armed peer completion: the client's handler and its payload.
#[derive(Clone, Debug)]
pub(crate) struct PeerCompletion {
    pub(crate) handler: AmIndex,
    pub(crate) payload: Vec<u8>,
}

thread_local! {
    static ARMED: RefCell<Option<PeerCompletion>> = const { RefCell::new(None) };
}

/// `gex_VIS_SetPeerCompletionHandler`: arms `handler` for the next VIS put
/// this thread initiates successfully; the peer runs it (a 0-argument
/// Medium reply handler registered there by the client) once, after that
/// put's data is visible, with `payload` (copied now; at most
/// [`MAX_PEERCOMPLETION`] bytes). `handler == 0` disarms. `flags` must be
/// empty. The put may not pass `IMMEDIATE`; gets leave the handler armed.
pub fn set_peer_completion_handler(handler: AmIndex, payload: &[u8], flags: Flags) -> Result<()> {
    const CALL: &str = "gex_VIS_SetPeerCompletionHandler";
    if !flags.is_empty() {
        return Err(Error::bad_arg(format!(
            "{CALL}: flags are unused and must be empty, got {flags:?}"
        )));
    }
    if handler == 0 {
        ARMED.with(|a| *a.borrow_mut() = None);
        return Ok(());
    }
    if handler < AM_INDEX_BASE {
        return Err(Error::bad_arg(format!(
            "{CALL}: handler index {handler} is reserved to the library (client handlers are {AM_INDEX_BASE} to 255)"
        )));
    }
    if payload.len() > MAX_PEERCOMPLETION {
        return Err(Error::bad_arg(format!(
            "{CALL}: a payload of {} bytes exceeds GEX_VIS_MAX_PEERCOMPLETION = {MAX_PEERCOMPLETION}",
            payload.len()
        )));
    }
    ARMED.with(|a| {
        *a.borrow_mut() = Some(PeerCompletion {
            handler,
            payload: payload.to_vec(),
        })
    });
    Ok(())
}

fn armed() -> bool {
    ARMED.with(|a| a.borrow().is_some())
}

fn take_armed() -> Option<PeerCompletion> {
    ARMED.with(|a| a.borrow_mut().take())
}

// ---------------------------------------------------------------------------
// Checks.

/// Flags every VIS call accepts (puts also `ENABLE_LEAF_LC`).
const VIS_FLAGS: Flags = Flags::IMMEDIATE
    .union(Flags::LC_COPY_YES)
    .union(Flags::LC_COPY_NO)
    .union(Flags::SELF_SEG_UNKNOWN)
    .union(Flags::SELF_SEG_SOME)
    .union(Flags::SELF_SEG_BOUND)
    .union(Flags::PEER_SEG_UNKNOWN)
    .union(Flags::PEER_SEG_SOME)
    .union(Flags::PEER_SEG_BOUND)
    .union(Flags::PEER_SEG_OFFSET)
    .union(Flags::PEER_NEVER_SELF)
    .union(Flags::PEER_NEVER_NBRHD);

/// A checked peer.
struct Peer {
    jobrank: Rank,
    /// The endpoint index named at the peer (0 over a team; a TM-pair's
    /// remote index), whose bound segment the transfer addresses.
    ep: EpIndex,
    desc: SegmentDesc,
    /// This process's base of the peer's segment (direct route).
    direct: Option<usize>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    Put,
    Get,
}

fn peer<T: TmRef + ?Sized>(call: &str, tm: &T, rank: Rank, flags: Flags, dir: Dir) -> Result<Peer> {
    context::check_may_communicate(call)?;
    tm.require_local(call, gex_types::EpCapabilities::VIS)?;
    let allowed = match dir {
        Dir::Put => VIS_FLAGS | Flags::ENABLE_LEAF_LC,
        Dir::Get => VIS_FLAGS,
    };
    if !(flags - allowed).is_empty() {
        return Err(Error::bad_arg(format!(
            "{call}: flags {:?} are not valid here",
            flags - allowed
        )));
    }
    let ep = tm.remote_ep_index();
    let rt = tm.ep().runtime();
    let (jobrank, desc, direct) = if ep == 0 {
        let jobrank = tm.jobrank_of(rank)?;
        let desc = segment_desc(rt, jobrank).unwrap_or_default();
        (jobrank, desc, direct_base(jobrank))
    } else {
        // A created endpoint's segment, as published to this process: the
        // table of that index (its fast entry gives the direct route).
        let jobrank = tm.rma_jobrank_of(rank)?;
        let Some(desc) = tm.peer_segment(jobrank) else {
            return Err(bad(
                call,
                format!(
                    "endpoint {ep} of rank {jobrank} has no segment known here (none bound, not published to this rank, or destroyed)"
                ),
            ));
        };
        let direct = if force_am() {
            None
        } else {
            tm.fast_entry(rank)
                .filter(|f| f.size != 0)
                .map(|f| f.local_base)
        };
        (jobrank, desc, direct)
    };
    let me = rt.jobrank();
    if (flags.contains(Flags::PEER_NEVER_SELF) && jobrank == me)
        || (flags.contains(Flags::PEER_NEVER_NBRHD) && desc.local_base.is_some())
    {
        return Err(Error::bad_arg(format!(
            "{call}: {:?} asserts something rank {jobrank} is not",
            flags & (Flags::PEER_NEVER_SELF | Flags::PEER_NEVER_NBRHD)
        )));
    }
    if dir == Dir::Put && armed() && flags.contains(Flags::IMMEDIATE) {
        return Err(Error::bad_arg(format!(
            "{call}: a peer completion handler is armed, and such a put may not pass GEX_FLAG_IMMEDIATE"
        )));
    }
    Ok(Peer {
        jobrank,
        ep,
        desc,
        direct,
    })
}

#[cold]
fn bad(call: &str, what: String) -> Error {
    Error::bad_arg(format!("{call}: {what}; nothing was transferred"))
}

/// Checks the remote list `[(addr, len)]` named `name`; returns each
/// element's offset in the peer's segment.
fn remote_list(
    call: &str,
    p: &Peer,
    name: &str,
    list: impl Iterator<Item = (usize, usize)> + Clone,
    flags: Flags,
) -> Result<Vec<(usize, usize)>> {
    check_remote(call, p, name, list.clone(), flags)?;
    Ok(remote_offsets(p, list, flags).collect())
}

/// Checks every element of the remote list `[(addr, len)]` named `name`
/// against the peer's segment (the one range check), allocating nothing.
fn check_remote(
    call: &str,
    p: &Peer,
    name: &str,
    list: impl Iterator<Item = (usize, usize)>,
    flags: Flags,
) -> Result<()> {
    let is_offset = flags.contains(Flags::PEER_SEG_OFFSET);
    for (i, (addr, len)) in list.enumerate() {
        p.desc
            .offset_of(p.jobrank, addr, len, is_offset, ZeroLen::AnyAddress)
            .map_err(|e| bad(call, format!("{name}[{i}]: {e}")))?;
    }
    Ok(())
}

/// The segment offsets of a remote list [`check_remote`] accepted (a
/// zero-length element, which names no memory, gets 0).
fn remote_offsets(
    p: &Peer,
    list: impl Iterator<Item = (usize, usize)>,
    flags: Flags,
) -> impl Iterator<Item = (usize, usize)> {
    let (base, is_offset) = (p.desc.owner_base, flags.contains(Flags::PEER_SEG_OFFSET));
    list.map(move |(addr, len)| match (len, is_offset) {
        (0, _) => (0, 0),
        (_, true) => (addr, len),
        (_, false) => (addr - base, len),
    })
}

fn total(call: &str, name: &str, mut lens: impl Iterator<Item = usize>) -> Result<usize> {
    lens.try_fold(0usize, |a, n| a.checked_add(n))
        .ok_or_else(|| bad(call, format!("the lengths of {name} overflow")))
}

fn same_total(call: &str, dst: usize, src: usize) -> Result<()> {
    if dst != src {
        return Err(bad(
            call,
            format!("dstlist covers {dst} bytes but srclist {src}; they must be equal"),
        ));
    }
    Ok(())
}

/// A checked strided transfer: element 0 at segment offset `rbase` and
/// local address `lbase`, contiguous levels folded into the element.
struct StridedPlan {
    rbase: usize,
    lbase: usize,
    elemsz: usize,
    levels: Vec<Level>,
}

/// What a call moves: a list of runs, or a strided shape (whose runs the
/// direct route copies as they come, without a list).
enum Plan {
    Pieces(Pieces),
    Strided(StridedPlan),
}

impl Plan {
    fn into_pieces(self) -> Pieces {
        match self {
            Plan::Pieces(p) => p,
            Plan::Strided(s) => shape::strided(s.rbase, s.lbase, s.elemsz, &s.levels),
        }
    }

    /// Gives every merged run to `f`.
    fn for_each(&self, mut f: impl FnMut(shape::Piece)) {
        match self {
            Plan::Pieces(p) => p.v.iter().for_each(|&r| f(r)),
            Plan::Strided(s) => {
                let mut m = Merge::new(f);
                shape::strided_into(&mut m, s.rbase, s.lbase, s.elemsz, &s.levels);
                m.finish();
            }
        }
    }
}

/// The shape of a strided transfer, checked. `remote` is (address, strides)
/// of the peer's side, `local` (slice start, slice length, offset of
/// element 0, strides) of this process's side.
#[allow(clippy::too_many_arguments)]
fn strided_plan(
    call: &str,
    p: &Peer,
    dir: Dir,
    raddr: usize,
    rstrides: &[isize],
    local: (usize, usize, usize),
    lstrides: &[isize],
    elemsz: usize,
    count: &[usize],
    flags: Flags,
) -> Result<StridedPlan> {
    let (lptr, llen, lat) = local;
    let (rname, lname) = match dir {
        Dir::Put => ("dst", "src"),
        Dir::Get => ("src", "dst"),
    };
    let levels_n = count.len();
    for (name, s) in [(rname, rstrides), (lname, lstrides)] {
        if s.len() < levels_n {
            return Err(bad(
                call,
                format!(
                    "{name}strides has {} entries for {levels_n} stride levels",
                    s.len()
                ),
            ));
        }
    }
    let levels: Vec<Level> = (0..levels_n)
        .map(|k| Level {
            count: count[k],
            rs: rstrides[k],
            ls: lstrides[k],
        })
        .collect();
    let rs = |l: &Level| l.rs;
    let ls = |l: &Level| l.ls;
    // The destination's elements must not overlap (undefined in the spec).
    let (dname, dstride): (&str, fn(&Level) -> isize) = match dir {
        Dir::Put => ("dst", rs),
        Dir::Get => ("dst", ls),
    };
    if let Some(k) = shape::overlapping_level(elemsz, &levels, dstride) {
        return Err(bad(
            call,
            format!(
                "{dname}strides[{k}] = {} makes destination elements overlap (elements of {elemsz} bytes, count {:?})",
                dstride(&levels[k]),
                count
            ),
        ));
    }
    // The remote extent, through the one range check.
    let (rlo, rhi) = shape::extent(elemsz, &levels, rs);
    let start = raddr as i128 + rlo;
    let corner =
        |side: fn(&Level) -> isize, high| format!("{:?}", shape::corner(&levels, side, high));
    if start < 0 || start > usize::MAX as i128 || rhi - rlo > usize::MAX as i128 {
        return Err(bad(
            call,
            format!(
                "{rname}strides take element {} below address 0",
                corner(rs, false)
            ),
        ));
    }
    let roff = p
        .desc
        .offset_of(
            p.jobrank,
            start as usize,
            (rhi - rlo) as usize,
            flags.contains(Flags::PEER_SEG_OFFSET),
            ZeroLen::InSegment,
        )
        .map_err(|e| {
            bad(
                call,
                format!(
                    "the {rname} elements {} to {} span {e}",
                    corner(rs, false),
                    corner(rs, true)
                ),
            )
        })?;
    let rbase = (roff as i128 - rlo) as usize;
    // The local extent, against the slice.
    let (llo, lhi) = shape::extent(elemsz, &levels, ls);
    if lat as i128 + llo < 0 || lat as i128 + lhi > llen as i128 {
        return Err(bad(
            call,
            format!(
                "the {lname} elements {} to {} span bytes [{}, {}) of a slice of {llen} bytes",
                corner(ls, false),
                corner(ls, true),
                lat as i128 + llo,
                lat as i128 + lhi
            ),
        ));
    }
    let (elemsz, levels) = shape::fold(elemsz, &levels);
    Ok(StridedPlan {
        rbase,
        lbase: lptr + lat,
        elemsz,
        levels,
    })
}

// ---------------------------------------------------------------------------
// Execution.

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Blocking,
    Nbi,
    Nb,
}

enum Started {
    Done,
    NoOp,
    Pending(Arc<Completion>),
}

impl Started {
    fn injected(self) -> Injected {
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
        }
    }
}

fn wait_for(c: &Completion) {
    if let Some(rt) = Runtime::get() {
        rt.spin_until(|| c.is_complete());
    }
}

/// The direct route's copy of a put's run into the peer's segment,
/// mapped here at `base` (inlined into the walk over the runs).
#[inline(always)]
fn put_copy(base: usize) -> impl FnMut(shape::Piece) {
    move |r| {
        // SAFETY: `[roff, roff + len)` lies inside the peer's segment
        // (checked by the one range check before any run is walked), which
        // is mapped here at `base`; the source is the caller's memory,
        // borrowed for the call (`memmove`: overlap is the caller's
        // undefined case, never a memory error).
        unsafe { copy_bytes(r.local as *const u8, (base + r.roff) as *mut u8, r.len) };
    }
}

/// The direct route's copy of a get's run out of the peer's segment.
#[inline(always)]
fn get_copy(base: usize) -> impl FnMut(shape::Piece) {
    move |r| {
        // SAFETY: `[roff, roff + len)` lies inside the peer's segment
        // (checked), mapped here at `base`; the destination is the
        // caller's memory, exclusively borrowed for the call.
        unsafe { copy_bytes((base + r.roff) as *const u8, r.local as *mut u8, r.len) };
    }
}

/// The end of a direct put, once its runs are copied: the armed peer
/// completion, if any.
fn direct_put_done(call: &str, p: &Peer) -> Result<Started> {
    if let Some(pc) = take_armed() {
        ampath::send_peer_completion(p.jobrank, &pc)
            .map_err(|e| Error::bad_arg(format!("{call}: peer completion: {e}")))?;
    }
    Ok(Started::Done)
}

/// Moves the runs of a put: copies on the direct route, else packed
/// Active Messages. The sources are read before this returns.
fn run_put(call: &str, p: &Peer, plan: Plan, flags: Flags, mode: Mode) -> Result<Started> {
    if let Some(base) = p.direct {
        plan.for_each(put_copy(base));
        return direct_put_done(call, p);
    }
    let pc = take_armed();
    let pieces = plan.into_pieces();
    let parent = (mode == Mode::Nbi).then(|| nbi::track(Ec::PUT));
    let immediate = flags.contains(Flags::IMMEDIATE);
    let started = ampath::put(
        (p.jobrank, p.ep),
        &pieces,
        immediate,
        parent.clone(),
        pc.clone(),
        capability(p.jobrank),
    );
    let c = match started {
        Ok(Some(c)) => c,
        Ok(None) => {
            if let Some(par) = &parent {
                par.done();
            }
            if let Some(pc) = pc {
                ARMED.with(|a| *a.borrow_mut() = Some(pc));
            }
            return Ok(Started::NoOp);
        }
        Err(e) => return Err(e),
    };
    Ok(match mode {
        Mode::Blocking => {
            wait_for(&c);
            Started::Done
        }
        Mode::Nbi => Started::Done,
        Mode::Nb => Started::Pending(c),
    })
}

/// Moves the runs of a get. Off the direct route, an NB get lands in a
/// staging buffer that its event scatters to the destinations when it
/// completes; a blocking or NBI get writes the destinations directly and
/// waits (their borrow ends with the call).
fn run_get<'d>(p: &Peer, plan: Plan, flags: Flags, mode: Mode) -> Result<GetOut<'d>> {
    if let Some(base) = p.direct {
        plan.for_each(get_copy(base));
        return Ok(GetOut::Done);
    }
    let pieces = plan.into_pieces();
    let immediate = flags.contains(Flags::IMMEDIATE);
    let cap = capability(p.jobrank);
    if mode != Mode::Nb {
        return match ampath::get((p.jobrank, p.ep), &pieces, immediate, cap, None)? {
            None => Ok(GetOut::NoOp),
            Some(c) => {
                wait_for(&c);
                Ok(GetOut::Done)
            }
        };
    }
    let staging = Staging::new(pieces.bytes);
    let base = staging.ptr() as usize;
    let mut staged = Pieces::default();
    let mut scatter = Vec::with_capacity(pieces.v.len());
    for r in &pieces.v {
        staged.push(r.roff, base + staged.bytes, r.len);
        scatter.push((r.local, r.len));
    }
    match ampath::get(
        (p.jobrank, p.ep),
        &staged,
        immediate,
        cap,
        Some(staging.clone()),
    )? {
        None => Ok(GetOut::NoOp),
        Some(c) => {
            // SAFETY: the runs are the caller's destinations (slices
            // exclusively borrowed for 'd by the calling method, disjoint
            // as the checks made them), and their lengths add up to the
            // staging buffer's.
            let mut ev = unsafe { Event::pending_scatter(c, staging, scatter.into()) };
            if ev.test()? {
                return Ok(GetOut::Done);
            }
            Ok(GetOut::Event(ev))
        }
    }
}

// ---------------------------------------------------------------------------
// The calls.

fn vector_put<T: TmRef + ?Sized>(
    tm: &T,
    call: &str,
    rank: Rank,
    dstlist: &[Memvec],
    srclist: &[&[u8]],
    flags: Flags,
    mode: Mode,
) -> Result<Started> {
    let p = peer(call, tm, rank, flags, Dir::Put)?;
    let dt = total(call, "dstlist", dstlist.iter().map(|m| m.len))?;
    let st = total(call, "srclist", srclist.iter().map(|s| s.len()))?;
    same_total(call, dt, st)?;
    let dst = dstlist.iter().map(|m| (m.addr, m.len));
    let src = srclist.iter().map(|s| (s.as_ptr() as usize, s.len()));
    if let Some(base) = p.direct {
        check_remote(call, &p, "dstlist", dst.clone(), flags)?;
        shape::vector_runs(remote_offsets(&p, dst, flags), src, put_copy(base));
        return direct_put_done(call, &p);
    }
    let remote = remote_list(call, &p, "dstlist", dst, flags)?;
    let local: Vec<(usize, usize)> = src.collect();
    run_put(
        call,
        &p,
        Plan::Pieces(shape::vector(&remote, &local)),
        flags,
        mode,
    )
}

fn vector_get<'d, T: TmRef + ?Sized>(
    tm: &T,
    call: &str,
    dstlist: &'d mut [&mut [u8]],
    rank: Rank,
    srclist: &[Memvec],
    flags: Flags,
    mode: Mode,
) -> Result<GetOut<'d>> {
    let p = peer(call, tm, rank, flags, Dir::Get)?;
    let dt = total(call, "dstlist", dstlist.iter().map(|s| s.len()))?;
    let st = total(call, "srclist", srclist.iter().map(|m| m.len))?;
    same_total(call, dt, st)?;
    let src = srclist.iter().map(|m| (m.addr, m.len));
    let dst = dstlist
        .iter_mut()
        .map(|s| (s.as_mut_ptr() as usize, s.len()));
    if let Some(base) = p.direct {
        check_remote(call, &p, "srclist", src.clone(), flags)?;
        shape::vector_runs(remote_offsets(&p, src, flags), dst, get_copy(base));
        return Ok(GetOut::Done);
    }
    let remote = remote_list(call, &p, "srclist", src, flags)?;
    let local: Vec<(usize, usize)> = dst.collect();
    run_get(
        &p,
        Plan::Pieces(shape::vector(&remote, &local)),
        flags,
        mode,
    )
}

fn fixed_lengths(
    call: &str,
    name: &str,
    lens: impl Iterator<Item = usize>,
    want: usize,
) -> Result<()> {
    match lens.enumerate().find(|&(_, n)| n != want) {
        Some((i, n)) => Err(bad(
            call,
            format!("{name}[{i}] has {n} bytes, but {name}'s element length is {want}"),
        )),
        None => Ok(()),
    }
}

fn indexed_total(call: &str, name: &str, count: usize, len: usize) -> Result<usize> {
    count.checked_mul(len).ok_or_else(|| {
        bad(
            call,
            format!("{name}: {count} elements of {len} bytes overflow"),
        )
    })
}

#[allow(clippy::too_many_arguments)]
fn indexed_put<T: TmRef + ?Sized>(
    tm: &T,
    call: &str,
    rank: Rank,
    dstlist: &[usize],
    dstlen: usize,
    srclist: &[&[u8]],
    srclen: usize,
    flags: Flags,
    mode: Mode,
) -> Result<Started> {
    let p = peer(call, tm, rank, flags, Dir::Put)?;
    fixed_lengths(call, "srclist", srclist.iter().map(|s| s.len()), srclen)?;
    same_total(
        call,
        indexed_total(call, "dstlist", dstlist.len(), dstlen)?,
        indexed_total(call, "srclist", srclist.len(), srclen)?,
    )?;
    let dst = dstlist.iter().map(|&a| (a, dstlen));
    let src = srclist.iter().map(|s| (s.as_ptr() as usize, s.len()));
    if let Some(base) = p.direct {
        check_remote(call, &p, "dstlist", dst.clone(), flags)?;
        shape::vector_runs(remote_offsets(&p, dst, flags), src, put_copy(base));
        return direct_put_done(call, &p);
    }
    let remote = remote_list(call, &p, "dstlist", dst, flags)?;
    let local: Vec<(usize, usize)> = src.collect();
    run_put(
        call,
        &p,
        Plan::Pieces(shape::vector(&remote, &local)),
        flags,
        mode,
    )
}

#[allow(clippy::too_many_arguments)]
fn indexed_get<'d, T: TmRef + ?Sized>(
    tm: &T,
    call: &str,
    dstlist: &'d mut [&mut [u8]],
    dstlen: usize,
    rank: Rank,
    srclist: &[usize],
    srclen: usize,
    flags: Flags,
    mode: Mode,
) -> Result<GetOut<'d>> {
    let p = peer(call, tm, rank, flags, Dir::Get)?;
    fixed_lengths(call, "dstlist", dstlist.iter().map(|s| s.len()), dstlen)?;
    same_total(
        call,
        indexed_total(call, "dstlist", dstlist.len(), dstlen)?,
        indexed_total(call, "srclist", srclist.len(), srclen)?,
    )?;
    let src = srclist.iter().map(|&a| (a, srclen));
    let dst = dstlist
        .iter_mut()
        .map(|s| (s.as_mut_ptr() as usize, s.len()));
    if let Some(base) = p.direct {
        check_remote(call, &p, "srclist", src.clone(), flags)?;
        shape::vector_runs(remote_offsets(&p, src, flags), dst, get_copy(base));
        return Ok(GetOut::Done);
    }
    let remote = remote_list(call, &p, "srclist", src, flags)?;
    let local: Vec<(usize, usize)> = dst.collect();
    run_get(
        &p,
        Plan::Pieces(shape::vector(&remote, &local)),
        flags,
        mode,
    )
}

/// Whether a strided call is a no-op by the spec's degenerate cases
/// (`elemsz == 0`, or a zero count).
fn strided_noop(elemsz: usize, count: &[usize]) -> bool {
    elemsz == 0 || count.contains(&0)
}

/// The local side of a strided transfer: a slice and the offset in it of
/// element 0 (strides may be negative, so element 0 need not be first).
#[derive(Debug)]
pub struct StridedLocal<S> {
    /// The memory every element lies in.
    pub buf: S,
    /// Offset of element 0 in `buf`.
    pub at: usize,
}

impl<S> StridedLocal<S> {
    /// `buf` with element 0 at offset `at`.
    pub fn new(buf: S, at: usize) -> Self {
        StridedLocal { buf, at }
    }
}

#[allow(clippy::too_many_arguments)]
fn strided_put<T: TmRef + ?Sized>(
    tm: &T,
    call: &str,
    rank: Rank,
    dstaddr: usize,
    dststrides: &[isize],
    src: StridedLocal<&[u8]>,
    srcstrides: &[isize],
    elemsz: usize,
    count: &[usize],
    flags: Flags,
    mode: Mode,
) -> Result<Started> {
    if strided_noop(elemsz, count) {
        context::check_may_communicate(call)?;
        // An armed peer completion is bound to this put all the same (the
        // reference delivers it: its testvis counts one arrival per armed
        // completion); only then is `rank` read.
        if ARMED.with(|a| a.borrow().is_some()) {
            let p = peer(call, tm, rank, flags, Dir::Put)?;
            return direct_put_done(call, &p);
        }
        return Ok(Started::Done);
    }
    let p = peer(call, tm, rank, flags, Dir::Put)?;
    let plan = strided_plan(
        call,
        &p,
        Dir::Put,
        dstaddr,
        dststrides,
        (src.buf.as_ptr() as usize, src.buf.len(), src.at),
        srcstrides,
        elemsz,
        count,
        flags,
    )?;
    run_put(call, &p, Plan::Strided(plan), flags, mode)
}

#[allow(clippy::too_many_arguments)]
fn strided_get<'d, T: TmRef + ?Sized>(
    tm: &T,
    call: &str,
    dst: StridedLocal<&'d mut [u8]>,
    dststrides: &[isize],
    rank: Rank,
    srcaddr: usize,
    srcstrides: &[isize],
    elemsz: usize,
    count: &[usize],
    flags: Flags,
    mode: Mode,
) -> Result<GetOut<'d>> {
    if strided_noop(elemsz, count) {
        context::check_may_communicate(call)?;
        return Ok(GetOut::Done);
    }
    let p = peer(call, tm, rank, flags, Dir::Get)?;
    let plan = strided_plan(
        call,
        &p,
        Dir::Get,
        srcaddr,
        srcstrides,
        (dst.buf.as_mut_ptr() as usize, dst.buf.len(), dst.at),
        dststrides,
        elemsz,
        count,
        flags,
    )?;
    run_get(&p, Plan::Strided(plan), flags, mode)
}

/// The VIS calls for anything that names a peer: a team or a TM-pair.
///
/// Puts: the NB call returns the root event (`Event::NO_OP` for an
/// `IMMEDIATE` no-op); NBI puts count under `Ec::PUT` (or the open access
/// region); `Flags::ENABLE_LEAF_LC` is accepted on every put (local
/// completion happens at initiation). Gets complete before they return.
/// The NBI and Blocking calls return `Injected::NoOp` only for an
/// `IMMEDIATE` no-op.
pub trait Vis: TmRef {
    /// `gex_VIS_VectorPutNB`: the bytes of `srclist`, as one stream, to
    /// the memvecs of `dstlist` at `dstrank` (equal totals).
    fn vector_put_nb(
        &self,
        dstrank: Rank,
        dstlist: &[Memvec],
        srclist: &[&[u8]],
        flags: Flags,
    ) -> Result<Event<'static>> {
        vector_put(
            self,
            "gex_VIS_VectorPutNB",
            dstrank,
            dstlist,
            srclist,
            flags,
            Mode::Nb,
        )
        .map(Started::event)
    }

    /// `gex_VIS_VectorPutNBI`.
    fn vector_put_nbi(
        &self,
        dstrank: Rank,
        dstlist: &[Memvec],
        srclist: &[&[u8]],
        flags: Flags,
    ) -> Result<Injected> {
        vector_put(
            self,
            "gex_VIS_VectorPutNBI",
            dstrank,
            dstlist,
            srclist,
            flags,
            Mode::Nbi,
        )
        .map(Started::injected)
    }

    /// `gex_VIS_VectorPutBlocking`.
    fn vector_put_blocking(
        &self,
        dstrank: Rank,
        dstlist: &[Memvec],
        srclist: &[&[u8]],
        flags: Flags,
    ) -> Result<Injected> {
        vector_put(
            self,
            "gex_VIS_VectorPutBlocking",
            dstrank,
            dstlist,
            srclist,
            flags,
            Mode::Blocking,
        )
        .map(Started::injected)
    }

    /// `gex_VIS_VectorGetNB`: the memvecs of `srclist` at `srcrank`, as one
    /// stream, into the slices of `dstlist`.
    fn vector_get_nb<'d>(
        &self,
        dstlist: &'d mut [&mut [u8]],
        srcrank: Rank,
        srclist: &[Memvec],
        flags: Flags,
    ) -> Result<Event<'d>> {
        vector_get(
            self,
            "gex_VIS_VectorGetNB",
            dstlist,
            srcrank,
            srclist,
            flags,
            Mode::Nb,
        )
        .map(GetOut::event)
    }

    /// `gex_VIS_VectorGetNBI`.
    fn vector_get_nbi(
        &self,
        dstlist: &mut [&mut [u8]],
        srcrank: Rank,
        srclist: &[Memvec],
        flags: Flags,
    ) -> Result<Injected> {
        vector_get(
            self,
            "gex_VIS_VectorGetNBI",
            dstlist,
            srcrank,
            srclist,
            flags,
            Mode::Nbi,
        )
        .map(GetOut::injected)
    }

    /// `gex_VIS_VectorGetBlocking`.
    fn vector_get_blocking(
        &self,
        dstlist: &mut [&mut [u8]],
        srcrank: Rank,
        srclist: &[Memvec],
        flags: Flags,
    ) -> Result<Injected> {
        vector_get(
            self,
            "gex_VIS_VectorGetBlocking",
            dstlist,
            srcrank,
            srclist,
            flags,
            Mode::Blocking,
        )
        .map(GetOut::injected)
    }

    /// `gex_VIS_IndexedPutNB`: `dstlist` holds addresses of `dstlen`-byte
    /// elements at `dstrank`, `srclist` slices of `srclen` bytes each
    /// (equal totals).
    #[allow(clippy::too_many_arguments)]
    fn indexed_put_nb(
        &self,
        dstrank: Rank,
        dstlist: &[usize],
        dstlen: usize,
        srclist: &[&[u8]],
        srclen: usize,
        flags: Flags,
    ) -> Result<Event<'static>> {
        indexed_put(
            self,
            "gex_VIS_IndexedPutNB",
            dstrank,
            dstlist,
            dstlen,
            srclist,
            srclen,
            flags,
            Mode::Nb,
        )
        .map(Started::event)
    }

    /// `gex_VIS_IndexedPutNBI`.
    #[allow(clippy::too_many_arguments)]
    fn indexed_put_nbi(
        &self,
        dstrank: Rank,
        dstlist: &[usize],
        dstlen: usize,
        srclist: &[&[u8]],
        srclen: usize,
        flags: Flags,
    ) -> Result<Injected> {
        indexed_put(
            self,
            "gex_VIS_IndexedPutNBI",
            dstrank,
            dstlist,
            dstlen,
            srclist,
            srclen,
            flags,
            Mode::Nbi,
        )
        .map(Started::injected)
    }

    /// `gex_VIS_IndexedPutBlocking`.
    #[allow(clippy::too_many_arguments)]
    fn indexed_put_blocking(
        &self,
        dstrank: Rank,
        dstlist: &[usize],
        dstlen: usize,
        srclist: &[&[u8]],
        srclen: usize,
        flags: Flags,
    ) -> Result<Injected> {
        indexed_put(
            self,
            "gex_VIS_IndexedPutBlocking",
            dstrank,
            dstlist,
            dstlen,
            srclist,
            srclen,
            flags,
            Mode::Blocking,
        )
        .map(Started::injected)
    }

    /// `gex_VIS_IndexedGetNB`: `dstlist` slices of `dstlen` bytes each,
    /// `srclist` addresses of `srclen`-byte elements at `srcrank`.
    #[allow(clippy::too_many_arguments)]
    fn indexed_get_nb<'d>(
        &self,
        dstlist: &'d mut [&mut [u8]],
        dstlen: usize,
        srcrank: Rank,
        srclist: &[usize],
        srclen: usize,
        flags: Flags,
    ) -> Result<Event<'d>> {
        indexed_get(
            self,
            "gex_VIS_IndexedGetNB",
            dstlist,
            dstlen,
            srcrank,
            srclist,
            srclen,
            flags,
            Mode::Nb,
        )
        .map(GetOut::event)
    }

    /// `gex_VIS_IndexedGetNBI`.
    #[allow(clippy::too_many_arguments)]
    fn indexed_get_nbi(
        &self,
        dstlist: &mut [&mut [u8]],
        dstlen: usize,
        srcrank: Rank,
        srclist: &[usize],
        srclen: usize,
        flags: Flags,
    ) -> Result<Injected> {
        indexed_get(
            self,
            "gex_VIS_IndexedGetNBI",
            dstlist,
            dstlen,
            srcrank,
            srclist,
            srclen,
            flags,
            Mode::Nbi,
        )
        .map(GetOut::injected)
    }

    /// `gex_VIS_IndexedGetBlocking`.
    #[allow(clippy::too_many_arguments)]
    fn indexed_get_blocking(
        &self,
        dstlist: &mut [&mut [u8]],
        dstlen: usize,
        srcrank: Rank,
        srclist: &[usize],
        srclen: usize,
        flags: Flags,
    ) -> Result<Injected> {
        indexed_get(
            self,
            "gex_VIS_IndexedGetBlocking",
            dstlist,
            dstlen,
            srcrank,
            srclist,
            srclen,
            flags,
            Mode::Blocking,
        )
        .map(GetOut::injected)
    }

    /// `gex_VIS_StridedPutNB`: `count.len()` stride levels of `elemsz`-byte
    /// elements; element `(i0, i1, ..)` moves from `src.at + sum(ik *
    /// srcstrides[k])` in `src.buf` to `dstaddr + sum(ik * dststrides[k])`
    /// at `dstrank`. Strides may be negative (reflection) and in any order
    /// (transpose); destination elements may not overlap.
    #[allow(clippy::too_many_arguments)]
    fn strided_put_nb(
        &self,
        dstrank: Rank,
        dstaddr: usize,
        dststrides: &[isize],
        src: StridedLocal<&[u8]>,
        srcstrides: &[isize],
        elemsz: usize,
        count: &[usize],
        flags: Flags,
    ) -> Result<Event<'static>> {
        strided_put(
            self,
            "gex_VIS_StridedPutNB",
            dstrank,
            dstaddr,
            dststrides,
            src,
            srcstrides,
            elemsz,
            count,
            flags,
            Mode::Nb,
        )
        .map(Started::event)
    }

    /// `gex_VIS_StridedPutNBI`.
    #[allow(clippy::too_many_arguments)]
    fn strided_put_nbi(
        &self,
        dstrank: Rank,
        dstaddr: usize,
        dststrides: &[isize],
        src: StridedLocal<&[u8]>,
        srcstrides: &[isize],
        elemsz: usize,
        count: &[usize],
        flags: Flags,
    ) -> Result<Injected> {
        strided_put(
            self,
            "gex_VIS_StridedPutNBI",
            dstrank,
            dstaddr,
            dststrides,
            src,
            srcstrides,
            elemsz,
            count,
            flags,
            Mode::Nbi,
        )
        .map(Started::injected)
    }

    /// `gex_VIS_StridedPutBlocking`.
    #[allow(clippy::too_many_arguments)]
    fn strided_put_blocking(
        &self,
        dstrank: Rank,
        dstaddr: usize,
        dststrides: &[isize],
        src: StridedLocal<&[u8]>,
        srcstrides: &[isize],
        elemsz: usize,
        count: &[usize],
        flags: Flags,
    ) -> Result<Injected> {
        strided_put(
            self,
            "gex_VIS_StridedPutBlocking",
            dstrank,
            dstaddr,
            dststrides,
            src,
            srcstrides,
            elemsz,
            count,
            flags,
            Mode::Blocking,
        )
        .map(Started::injected)
    }

    /// `gex_VIS_StridedGetNB`: as [`Vis::strided_put_nb`] the other way.
    #[allow(clippy::too_many_arguments)]
    fn strided_get_nb<'d>(
        &self,
        dst: StridedLocal<&'d mut [u8]>,
        dststrides: &[isize],
        srcrank: Rank,
        srcaddr: usize,
        srcstrides: &[isize],
        elemsz: usize,
        count: &[usize],
        flags: Flags,
    ) -> Result<Event<'d>> {
        strided_get(
            self,
            "gex_VIS_StridedGetNB",
            dst,
            dststrides,
            srcrank,
            srcaddr,
            srcstrides,
            elemsz,
            count,
            flags,
            Mode::Nb,
        )
        .map(GetOut::event)
    }

    /// `gex_VIS_StridedGetNBI`.
    #[allow(clippy::too_many_arguments)]
    fn strided_get_nbi(
        &self,
        dst: StridedLocal<&mut [u8]>,
        dststrides: &[isize],
        srcrank: Rank,
        srcaddr: usize,
        srcstrides: &[isize],
        elemsz: usize,
        count: &[usize],
        flags: Flags,
    ) -> Result<Injected> {
        strided_get(
            self,
            "gex_VIS_StridedGetNBI",
            dst,
            dststrides,
            srcrank,
            srcaddr,
            srcstrides,
            elemsz,
            count,
            flags,
            Mode::Nbi,
        )
        .map(GetOut::injected)
    }

    /// `gex_VIS_StridedGetBlocking`.
    #[allow(clippy::too_many_arguments)]
    fn strided_get_blocking(
        &self,
        dst: StridedLocal<&mut [u8]>,
        dststrides: &[isize],
        srcrank: Rank,
        srcaddr: usize,
        srcstrides: &[isize],
        elemsz: usize,
        count: &[usize],
        flags: Flags,
    ) -> Result<Injected> {
        strided_get(
            self,
            "gex_VIS_StridedGetBlocking",
            dst,
            dststrides,
            srcrank,
            srcaddr,
            srcstrides,
            elemsz,
            count,
            flags,
            Mode::Blocking,
        )
        .map(GetOut::injected)
    }
}

impl<T: TmRef + ?Sized> Vis for T {}

#[cfg(test)]
mod tests {
    use super::*;
    use gex_core::bootstrap::vars::{var, Lookup};

    #[test]
    fn vis_settings_from_variables() {
        let read = |pairs: &[(&str, &str)]| VisSettings::from_lookup(Lookup::pairs(pairs));
        assert_eq!(read(&[]).unwrap(), VisSettings::default());
        assert!(read(&[("GEX_VIS_FORCE_AM", "1")]).unwrap().force_am);
        assert!(read(&[("GEX_VIS_FORCE_AM", "x")]).is_err());
        assert_eq!(var("GEX_VIS_FORCE_AM").unwrap().default, "off");
    }

    #[test]
    fn arming_checks_its_arguments() {
        assert!(
            set_peer_completion_handler(200, &[0; MAX_PEERCOMPLETION + 1], Flags::empty()).is_err()
        );
        assert!(set_peer_completion_handler(3, &[], Flags::empty()).is_err());
        assert!(set_peer_completion_handler(200, &[], Flags::IMMEDIATE).is_err());
        assert!(!armed());
        set_peer_completion_handler(200, b"x", Flags::empty()).unwrap();
        assert!(armed());
        set_peer_completion_handler(0, &[], Flags::empty()).unwrap();
        assert!(!armed());
    }
}
