//! The segments bound to endpoints with `gex_EP_BindSegment`, for
//! conduits.
//!
//! A conduit knows the primordial endpoints' segments from attach
//! ([`crate::Conduit::attach_segment`]). Segments bound to created
//! endpoints are created, bound, published and destroyed by the layers
//! above (gex-mk) and kept in the object model's tables (gex-core's
//! `epseg`), which a conduit cannot name. The object model therefore
//! installs its lookup here, as it installs its AM sink, and a conduit asks
//! [`ep_segment`] where a Long payload or a one-sided transfer for endpoint
//! `index` of a rank goes: for this rank, the bound segment the target
//! checks an arriving range against; for a neighbour, the mapping a sender
//! copies into. Only messages to created endpoints pay for the call.
//!
//! A job may also bind created segments to the primordial endpoints
//! instead of attaching (as the reference allows). A conduit that did not
//! attach then treats index 0 like a created endpoint's: the lookup
//! answers for index 0 too (nothing when the job attached, whose segments
//! the conduit knows itself), and a conduit only asks it for index 0 when
//! it has no attached segment.

use std::sync::OnceLock;

use gex_types::{EpIndex, Rank};

use crate::SegmentDesc;

/// The object model's lookup: jobrank `rank`'s segment bound to its
/// endpoint `index`, as this process knows it (`None`: none known).
pub type EpSegmentLookup = fn(EpIndex, Rank) -> Option<SegmentDesc>;

static LOOKUP: OnceLock<EpSegmentLookup> = OnceLock::new();

/// Installs the object model's lookup (gex-core does, before it stores its
/// first table). The first installation stays; later ones are ignored.
///
/// # Safety
///
/// Every [`SegmentDesc`] `f` returns with a `local_base` must describe
/// memory mapped readable and writable in this process from then on, for
/// the rest of the process: conduits copy payloads from the network into
/// it and hand it to handlers.
pub unsafe fn set_ep_segment_lookup(f: EpSegmentLookup) {
    let _ = LOOKUP.set(f);
}

/// Jobrank `rank`'s segment bound to its endpoint `index` as this process
/// knows it: `None` when no lookup is installed, or when no segment of
/// that endpoint is known here (never bound, not published to this rank,
/// destroyed; for index 0 also when the job attached, whose segments come
/// from the conduit's own table).
#[inline]
pub fn ep_segment(index: EpIndex, rank: Rank) -> Option<SegmentDesc> {
    LOOKUP
        .get()
        .and_then(|f| f(index, rank))
        .filter(|d| d.size > 0)
}

/// Where the payload `[off, +len)` of a Long that arrived at rank `me` for
/// its endpoint `index` lies in this process: the range, untrusted (it came
/// from another process), is checked against the endpoint's bound segment
/// with the one range check before it becomes an address; an endpoint
/// without one is an error naming it.
pub fn arrived_at_ep(
    index: EpIndex,
    me: Rank,
    off: usize,
    len: usize,
) -> std::result::Result<usize, String> {
    let Some(seg) = ep_segment(index, me) else {
        return Err(format!(
            "endpoint {index} of rank {me} has no bound segment (none bound, or destroyed)"
        ));
    };
    let base = seg.local_base.unwrap_or(0);
    if seg.local_base.is_none() {
        return Err(format!(
            "endpoint {index} of rank {me}: its own segment is not mapped"
        ));
    }
    seg.offset_of(me, off, len, true, crate::ZeroLen::InSegment)
        .map(|o| base + o)
        .map_err(|e| format!("endpoint {index}: {}", e.local()))
}
