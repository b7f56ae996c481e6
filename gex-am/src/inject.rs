//! Fixed-payload injection and payload-limit queries, shared by requests,
//! replies and negotiated-payload commits.

use gex_conduit::{AmLimits, Injected, OutgoingAm, ZeroLen};
use gex_core::internals::*;
use gex_core::{segment_desc, Ep, Event, Lc, TmRef};
use gex_types::{
    AmArg, AmCategory, AmIndex, EpIndex, EpLocation, Error, Flags, Rank, Result, AM_INDEX_BASE,
    AM_MAX_ARGS, RANK_INVALID,
};

/// Where a message goes: the local endpoint, the peer's jobrank and the
/// endpoint index there.
#[derive(Clone, Copy)]
pub(crate) struct Dest<'a> {
    pub(crate) ep: &'a Ep,
    pub(crate) jobrank: Rank,
    /// The endpoint index in the peer (below `MAX_EPS`, checked by
    /// `TmRef::am_peer` or taken from an arrived message that was checked).
    pub(crate) remote_ep: EpIndex,
    /// Whether the sender may name the library's reserved handler indices
    /// `[1, AM_INDEX_BASE)`: a layer's [`crate::LayerAm`], or a reply from
    /// one of a layer's own handlers. Client calls never may.
    pub(crate) internal: bool,
}

impl<'a> Dest<'a> {
    /// A destination for a client call (client handler indices only).
    pub(crate) fn client(ep: &'a Ep, to: EpLocation) -> Self {
        Dest {
            ep,
            jobrank: to.rank,
            remote_ep: to.ep_index,
            internal: false,
        }
    }
}

/// The `lc_opt` of a payload-limit query: the constant passed, or any event
/// pointer (limits do not depend on which event).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LcOpt {
    /// `GEX_EVENT_NOW`.
    Now,
    /// `GEX_EVENT_GROUP` (requests only).
    Group,
    /// A pointer to an event (or NULL).
    Event,
}

impl From<&Lc<'_>> for LcOpt {
    fn from(lc: &Lc<'_>) -> LcOpt {
        match lc {
            Lc::Now | Lc::Defer => LcOpt::Now,
            Lc::Group => LcOpt::Group,
            Lc::Event(_) => LcOpt::Event,
        }
    }
}

/// Flags an AM injection of `cat` accepts.
fn allowed_flags(cat: AmCategory) -> Flags {
    let mut f = Flags::IMMEDIATE
        | Flags::LC_COPY_YES
        | Flags::LC_COPY_NO
        | Flags::SELF_SEG_UNKNOWN
        | Flags::SELF_SEG_SOME
        | Flags::SELF_SEG_BOUND;
    if cat == AmCategory::Long {
        f |= Flags::PEER_SEG_UNKNOWN
            | Flags::PEER_SEG_SOME
            | Flags::PEER_SEG_BOUND
            | Flags::PEER_SEG_OFFSET;
    }
    f
}

fn name(cat: AmCategory, is_request: bool) -> String {
    format!(
        "gex_AM_{}{}",
        if is_request { "Request" } else { "Reply" },
        cat.name()
    )
}

pub(crate) fn check_flags(call: &str, cat: AmCategory, flags: Flags, extra: Flags) -> Result<()> {
    let bad = flags - allowed_flags(cat) - extra;
    if bad.is_empty() {
        return Ok(());
    }
    let hint = if bad.contains(Flags::SELF_SEG_OFFSET) {
        " (the source is a Rust slice, not an address or offset)"
    } else {
        ""
    };
    Err(Error::bad_arg(format!(
        "{call}: flags {bad:?} are not valid here{hint}"
    )))
}

fn check_lc(call: &str, lc: LcOpt, is_request: bool, defer: bool) -> Result<()> {
    if defer {
        return Err(Error::bad_arg(format!(
            "{call}: GEX_EVENT_DEFER is not allowed for Active Messages"
        )));
    }
    if lc == LcOpt::Group && !is_request {
        return Err(Error::bad_arg(format!(
            "{call}: GEX_EVENT_GROUP is not allowed for replies"
        )));
    }
    Ok(())
}

/// The payload limit of `cat` to endpoint `remote_ep` of `jobrank`: a
/// Long to a created endpoint's segment that this process does not map
/// (client memory, or not known here) within the conduit's
/// `max_long_carried`. So is a Long to a primordial endpoint in a job that
/// bound created segments to them instead of attaching: conduits reach
/// those as created endpoints' segments.
#[inline]
fn limit_to(
    l: AmLimits,
    cat: AmCategory,
    is_request: bool,
    remote_ep: EpIndex,
    jobrank: Rank,
) -> usize {
    if cat == AmCategory::Long && (remote_ep != 0 || gex_core::primordial_bound()) {
        let mapped =
            gex_core::epseg::ep_segment(remote_ep, jobrank).is_some_and(|s| s.local_base.is_some());
        return l.max_long(is_request, mapped);
    }
    limit_of(l, cat, is_request)
}

fn limit_of(l: AmLimits, cat: AmCategory, is_request: bool) -> usize {
    match (cat, is_request) {
        (AmCategory::Medium, true) => l.max_request_medium,
        (AmCategory::Medium, false) => l.max_reply_medium,
        (AmCategory::Long, true) => l.max_request_long,
        (AmCategory::Long, false) => l.max_reply_long,
        (AmCategory::Short, _) => 0,
    }
}

/// The offset into `jobrank`'s segment of a Long destination, checked by
/// the one range check ([`gex_conduit::SegmentDesc::offset_of`]; a Long of
/// zero bytes still needs a bound segment and an address inside it or at
/// its end).
/// `call` names the API in error messages only (built on the error path).
fn resolve_long(
    call: impl Fn() -> String,
    d: Dest<'_>,
    dest_addr: usize,
    len: usize,
    flags: Flags,
) -> Result<usize> {
    let seg = if d.remote_ep == 0 {
        segment_desc(d.ep.runtime(), d.jobrank).unwrap_or_default()
    } else {
        // A created endpoint: the segment bound to it and published to this
        // process (or bound here, for this rank).
        let Some(seg) = gex_core::epseg::ep_segment(d.remote_ep, d.jobrank) else {
            return Err(Error::bad_arg(format!(
                "{}: endpoint {} of rank {} has no segment known here (none bound, not published to this rank, or destroyed): a Long with a payload cannot go there",
                call(),
                d.remote_ep,
                d.jobrank
            )));
        };
        seg
    };
    let is_offset = flags.contains(Flags::PEER_SEG_OFFSET);
    seg.offset_of(d.jobrank, dest_addr, len, is_offset, ZeroLen::InSegment)
        .map_err(|e| Error::bad_arg(format!("{}: {}", call(), e.named("destination"))))
}

/// Handler index 0 is never registered, and `[1, AM_INDEX_BASE)` belongs
/// to the library's layers: a client may not send to those, so no client
/// can make a layer's handler run with arguments of its choosing.
pub(crate) fn check_handler_index(call: &str, handler: AmIndex, internal: bool) -> Result<()> {
    if handler == 0 {
        return Err(Error::bad_arg(format!(
            "{call}: handler index 0 is never registered"
        )));
    }
    if handler < AM_INDEX_BASE && !internal {
        return Err(Error::bad_arg(format!(
            "{call}: handler index {handler} is reserved to the library's layers; client handlers use [{AM_INDEX_BASE}, 255]"
        )));
    }
    Ok(())
}

/// Validates and injects one AM. Returns whether it was sent (`false`: an
/// `IMMEDIATE` no-op). The caller has checked the calling context.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn send(
    d: Dest<'_>,
    is_request: bool,
    cat: AmCategory,
    handler: AmIndex,
    payload: &[u8],
    dest_addr: usize,
    lc: Lc<'_>,
    flags: Flags,
    args: &[AmArg],
) -> Result<bool> {
    if args.len() > AM_MAX_ARGS
        || (handler < AM_INDEX_BASE && !(d.internal && handler != 0))
        || !(flags - allowed_flags(cat)).is_empty()
    {
        let call = name(cat, is_request);
        if args.len() > AM_MAX_ARGS {
            return Err(Error::bad_arg(format!(
                "{call}: {} arguments exceed gex_AM_MaxArgs() = {AM_MAX_ARGS}",
                args.len()
            )));
        }
        check_handler_index(&call, handler, d.internal)?;
        check_flags(&call, cat, flags, Flags::empty())?;
    }
    let rt = d.ep.runtime();
    let conduit = rt.conduit();
    let mut dest_offset = 0;
    if cat != AmCategory::Short {
        // The call's name is formatted only on an error path: this is the
        // injection fast path.
        let call = || name(cat, is_request);
        if matches!(lc, Lc::Defer) || (matches!(lc, Lc::Group) && !is_request) {
            check_lc(
                &call(),
                LcOpt::from(&lc),
                is_request,
                matches!(lc, Lc::Defer),
            )?;
        }
        let max = limit_to(
            conduit.am_limits(d.jobrank),
            cat,
            is_request,
            d.remote_ep,
            d.jobrank,
        );
        if payload.len() > max {
            return Err(Error::bad_arg(format!(
                "{}: payload of {} bytes exceeds the maximum {max} to rank {}",
                call(),
                payload.len(),
                d.jobrank
            )));
        }
        // A zero-byte Long touches no memory: its `dest_addr` goes to the
        // handler unchanged whatever it is ("even for the degenerate case
        // when nbytes==0", spec), so it is not checked against a segment,
        // and the conduit gets offset 0.
        if cat == AmCategory::Long && !payload.is_empty() {
            dest_offset = resolve_long(call, d, dest_addr, payload.len(), flags)?;
        }
    }
    let msg = OutgoingAm::new(cat, is_request, handler, args, payload)
        .to_offset(dest_offset, dest_addr)
        .between(d.ep.index(), d.remote_ep);
    match conduit.am_send(d.jobrank, &msg, flags.contains(Flags::IMMEDIATE), rt.sink())? {
        Injected::Sent => {
            // The payload was copied out at injection: locally complete.
            if let Lc::Event(e) = lc {
                *e = Event::INVALID;
            }
            Ok(true)
        }
        Injected::NoOp => Ok(false),
    }
}

/// One request, for client calls and layers alike: the calling context is
/// checked first, then the peer is resolved (`jobrank`, which also applies
/// the caller's own checks), then the message is validated and injected.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn request(
    call: &str,
    ep: &Ep,
    to: impl FnOnce() -> Result<EpLocation>,
    internal: bool,
    cat: AmCategory,
    handler: AmIndex,
    payload: &[u8],
    dest_addr: usize,
    lc: Lc<'_>,
    flags: Flags,
    args: &[AmArg],
) -> Result<Injected> {
    gex_core::context::check_may_communicate(call)?;
    let to = to()?;
    let d = Dest {
        ep,
        jobrank: to.rank,
        remote_ep: to.ep_index,
        internal,
    };
    send(d, true, cat, handler, payload, dest_addr, lc, flags, args).map(crate::injected)
}

/// A reply from a request handler: checks the context, then sends.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn reply(
    d: Dest<'_>,
    cat: AmCategory,
    handler: AmIndex,
    payload: &[u8],
    dest_addr: usize,
    lc: Lc<'_>,
    flags: Flags,
    args: &[AmArg],
) -> Result<bool> {
    gex_core::context::check_may_reply("gex_AM_Reply")?;
    send(d, false, cat, handler, payload, dest_addr, lc, flags, args)
}

/// `gex_AM_Max{Request,Reply}{Medium,Long}` for one peer.
pub(crate) fn max_payload(
    d: Dest<'_>,
    cat: AmCategory,
    is_request: bool,
    lc: LcOpt,
    flags: Flags,
    nargs: u32,
) -> Result<usize> {
    let call = format!(
        "gex_AM_Max{}{}",
        if is_request { "Request" } else { "Reply" },
        cat.name()
    );
    check_query(&call, cat, is_request, lc, flags, nargs)?;
    Ok(limit_to(
        d.ep.runtime().conduit().am_limits(d.jobrank),
        cat,
        is_request,
        d.remote_ep,
        d.jobrank,
    ))
}

fn check_query(
    call: &str,
    cat: AmCategory,
    is_request: bool,
    lc: LcOpt,
    flags: Flags,
    nargs: u32,
) -> Result<()> {
    if nargs as usize > AM_MAX_ARGS {
        return Err(Error::bad_arg(format!(
            "{call}: nargs {nargs} exceeds gex_AM_MaxArgs() = {AM_MAX_ARGS}"
        )));
    }
    check_flags(
        call,
        cat,
        flags,
        Flags::AM_PREPARE_LEAST_CLIENT | Flags::AM_PREPARE_LEAST_ALLOC,
    )?;
    if flags.contains(Flags::AM_PREPARE_LEAST_CLIENT | Flags::AM_PREPARE_LEAST_ALLOC) {
        return Err(Error::bad_arg(format!(
            "{call}: AM_PREPARE_LEAST_CLIENT and AM_PREPARE_LEAST_ALLOC are mutually exclusive"
        )));
    }
    check_lc(call, lc, is_request, false)
}

/// Payload limit to `rank` of `tm`, or the least over the team when `rank`
/// is `RANK_INVALID`.
pub(crate) fn max_payload_tm<T: TmRef + ?Sized>(
    tm: &T,
    rank: Rank,
    cat: AmCategory,
    is_request: bool,
    lc: LcOpt,
    flags: Flags,
    nargs: u32,
) -> Result<usize> {
    if rank != RANK_INVALID {
        let to = tm.am_peer(rank)?;
        return max_payload(Dest::client(tm.ep(), to), cat, is_request, lc, flags, nargs);
    }
    let call = format!(
        "gex_AM_Max{}{}",
        if is_request { "Request" } else { "Reply" },
        cat.name()
    );
    check_query(&call, cat, is_request, lc, flags, nargs)?;
    // The local endpoint and the remote index first (every tm has a rank
    // 0): an error about them rather than "no endpoint".
    tm.am_peer(0)?;
    let conduit = tm.ep().runtime().conduit();
    let mut least = usize::MAX;
    let mut r = 0;
    // Every rank the tm can address: stop at the first out-of-range rank.
    while let Ok(to) = tm.am_peer(r) {
        least = least.min(limit_to(
            conduit.am_limits(to.rank),
            cat,
            is_request,
            to.ep_index,
            to.rank,
        ));
        r += 1;
    }
    if r == 0 {
        return Err(Error::bad_arg(format!(
            "{call}: the tm addresses no AM-capable endpoint"
        )));
    }
    Ok(least)
}
