//! The one range check: "address or offset, length -> offset into rank r's
//! segment, or an error naming the rank, the range and the segment".
//!
//! Every place that turns a caller's or a peer's range into an offset of a
//! bound segment uses [`SegmentDesc::offset_of`] (or, for a range inside a
//! plain buffer, [`fits`]): the RMA layer for both ends of a transfer and
//! the targets of its reference path, the AM layer for a Long's
//! destination, the collectives for client scratch, the core for
//! `Segment::read`/`write`, and the conduits for an arriving Long. The
//! arithmetic never overflows, so a range near `usize::MAX` is an error,
//! never a wrap or a panic; the error says which call, rank, range and
//! segment once the caller adds its own context (the call name).
//!
//!
//! `SegmentDesc::offset_of(rank, addr, len, is_offset, zero)`: `is_offset`
//! is the spec's `{SELF,PEER}_SEG_OFFSET` (or `SCRATCH_SEG_OFFSET`); a
//! descriptor of size 0 means "no bound segment". The arithmetic is `off <=
//! size && len <= size - off` (`fits`, also used for a chunk inside a
//! message or a result buffer) after a checked subtraction of the base.
//! `zero` is the rule for an empty range: `InSegment` checks it like any
//! other (inside or at the end of a bound segment), `AnyAddress` accepts
//! any address, as the spec wants of a zero-byte transfer and of a
//! zero-byte Long's `dest_addr`.
//!
//! Callers put their call's name in front of the `RangeError` and keep
//! their error class: `BadArg` for an initiator's range (gex-rma both ends,
//! gex-am's Long destination, gex-coll's scratch, `Segment::read`/`write`,
//! gex-vis naming the element), a fatal error for a range that arrived from
//! a peer (the RMA reference path's targets, an arriving Long in the smp,
//! udp and ibv conduits, a packed VIS record, an atomic's target). Only the
//! RMA and remote-atomics direct routes keep an inlined copy of the
//! inequality against the fast table, since that one comparison also
//! chooses the route (atomics add alignment); their error paths call the
//! shared check. gex-vis checks every remote element of a list, and the
//! whole extent of a strided transfer, before anything moves. Created
//! segments use the same function.

use std::fmt;

use gex_types::Rank;

use crate::SegmentDesc;

/// Whether `[off, off + len)` lies inside `[0, size)` (an empty range may
/// sit at `size`). Never overflows, whatever the arguments.
#[inline(always)]
pub const fn fits(off: usize, len: usize, size: usize) -> bool {
    off <= size && len <= size - off
}

/// What a range of zero bytes may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZeroLen {
    /// An empty range is checked like any other: it needs a bound segment
    /// and must start inside it or at its end.
    InSegment,
    /// An empty range may name any address, in a bound segment or not: the
    /// spec's rule for a transfer that moves nothing (a Long AM of zero
    /// bytes passes `dest_addr` to the handler unchanged "even for the
    /// degenerate case when nbytes==0"). It resolves to its own offset if
    /// that lies in the segment, else to offset 0, so a pointer built from
    /// it never leaves a mapping.
    AnyAddress,
}

impl SegmentDesc {
    /// The offset into this segment (the bound segment of jobrank `rank`,
    /// named in the error) of the `len` bytes at `addr`: an address in the
    /// owner's address space, or an offset from the segment's base if
    /// `is_offset` (the spec's `GEX_FLAG_{SELF,PEER}_SEG_OFFSET`). `zero`
    /// says what an empty range may name. A descriptor of size 0 stands for
    /// a rank with no bound segment (a segment is never empty).
    ///
    /// Returns `off` with `off + len <= self.size` (no overflow), and
    /// `owner_base + off == addr` for an address, or the error.
    #[inline]
    pub fn offset_of(
        &self,
        rank: Rank,
        addr: usize,
        len: usize,
        is_offset: bool,
        zero: ZeroLen,
    ) -> Result<usize, RangeError> {
        let off = if is_offset {
            Some(addr)
        } else {
            addr.checked_sub(self.owner_base)
        };
        if len == 0 && zero == ZeroLen::AnyAddress {
            return Ok(off.filter(|&o| o <= self.size).unwrap_or(0));
        }
        match off {
            Some(o) if self.size > 0 && fits(o, len, self.size) => Ok(o),
            _ => Err(RangeError::new(self, rank, addr, len, is_offset)),
        }
    }
}

/// A range that is not inside a rank's bound segment, or names a rank with
/// none. Its message names the range, the rank and the segment; callers
/// put their call's name in front (`"{call}: {e}"`) and may name the range
/// ([`RangeError::named`]) and say that the segment is this process's own
/// ([`RangeError::local`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RangeError {
    /// The jobrank whose segment was named.
    pub rank: Rank,
    /// The address or offset, as given.
    pub addr: usize,
    /// The length in bytes.
    pub len: usize,
    /// Whether `addr` is an offset from the segment's base.
    pub is_offset: bool,
    /// The segment (owner base, size), or `None` if the rank has none bound.
    pub segment: Option<(usize, usize)>,
    what: &'static str,
    local: bool,
}

impl RangeError {
    /// The error for `[addr, +len)` against `seg` (cold: built on the error
    /// path only).
    #[cold]
    #[inline(never)]
    fn new(seg: &SegmentDesc, rank: Rank, addr: usize, len: usize, is_offset: bool) -> RangeError {
        RangeError {
            rank,
            addr,
            len,
            is_offset,
            segment: (seg.size > 0).then_some((seg.owner_base, seg.size)),
            what: "",
            local: false,
        }
    }

    /// Names the range in the message ("destination", "scratch", "local"):
    /// `"destination range [..)"` instead of `"range [..)"`.
    pub fn named(self, what: &'static str) -> RangeError {
        RangeError { what, ..self }
    }

    /// Says in the message that the segment is this process's own.
    pub fn local(self) -> RangeError {
        RangeError {
            local: true,
            ..self
        }
    }

    /// Whether the rank has no bound segment (rather than the range lying
    /// outside it).
    pub fn no_segment(&self) -> bool {
        self.segment.is_none()
    }
}

impl fmt::Display for RangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (rank, addr, len) = (self.rank, self.addr, self.len);
        let what = self.what;
        let sp = if what.is_empty() { "" } else { " " };
        let offset = if self.is_offset { "offset " } else { "" };
        let wraps = if addr.checked_add(len).is_none() {
            " (it wraps around the address space)"
        } else {
            ""
        };
        let range = format_args!("{what}{sp}{offset}range [{addr:#x}, +{len}){wraps}");
        match (self.segment, self.local) {
            (Some((base, size)), false) => write!(
                f,
                "{range} is outside rank {rank}'s segment [{base:#x}, +{size:#x})"
            ),
            (Some((base, size)), true) => write!(
                f,
                "{range} is outside the local segment [{base:#x}, +{size:#x}) of rank {rank}"
            ),
            (None, false) => write!(f, "rank {rank} has no bound segment for {range}"),
            (None, true) => write!(
                f,
                "rank {rank} (this rank) has no bound segment for {range}"
            ),
        }
    }
}

impl std::error::Error for RangeError {}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const M: usize = usize::MAX;
    const Z: ZeroLen = ZeroLen::InSegment;
    const A: ZeroLen = ZeroLen::AnyAddress;

    fn seg(base: usize, size: usize) -> SegmentDesc {
        SegmentDesc::new(base, None, size)
    }

    #[test]
    fn fits_is_exact_at_the_edges() {
        assert!(fits(0, 0, 0));
        assert!(fits(0, 10, 10));
        assert!(fits(10, 0, 10));
        assert!(!fits(11, 0, 10));
        assert!(!fits(1, 10, 10));
        assert!(!fits(1, M, M));
        assert!(!fits(M, 1, M));
        assert!(fits(M, 0, M));
        assert!(!fits(M, M, 10));
    }

    #[test]
    fn addresses_and_offsets_resolve() {
        let d = seg(0x1000, 0x100);
        assert_eq!(d.offset_of(3, 0x1000, 0x100, false, Z), Ok(0));
        assert_eq!(d.offset_of(3, 0x10f8, 8, false, Z), Ok(0xf8));
        assert_eq!(d.offset_of(3, 0xf8, 8, true, Z), Ok(0xf8));
        assert_eq!(d.offset_of(3, 0x1100, 0, false, Z), Ok(0x100));
        assert!(d.offset_of(3, 0x10f9, 8, false, Z).is_err());
        assert!(d.offset_of(3, 0xff8, 8, false, Z).is_err());
        assert!(d.offset_of(3, 0x1101, 0, false, Z).is_err());
        assert!(d.offset_of(3, 0xf9, 8, true, Z).is_err());
        assert!(d.offset_of(3, 0x101, 0, true, Z).is_err());
    }

    #[test]
    fn hostile_ranges_are_errors_not_wraps() {
        let d = seg(0x1000, 0x100);
        for (addr, len, off) in [
            (M, 1, false),
            (M, 1, true),
            (M - 4, 16, false),
            (M - 4, 16, true),
            (0x1000, M, false),
            (0x10, M, true),
            (M, M, true),
            (0, 0x2000, false),
        ] {
            let e = d.offset_of(7, addr, len, off, Z).unwrap_err();
            assert_eq!((e.rank, e.addr, e.len), (7, addr, len));
            assert_eq!(e.segment, Some((0x1000, 0x100)));
            assert_eq!(d.offset_of(7, addr, len, off, A), Err(e));
        }
        // A segment ending at the top of the address space.
        let top = seg(M - 0xff, 0x100);
        assert_eq!(top.offset_of(0, M, 1, false, Z), Ok(0xff));
        assert!(top.offset_of(0, M, 2, false, Z).is_err());
        // A lying descriptor (base + size overflows) cannot make a wrap pass.
        let lie = seg(M - 4, M);
        assert_eq!(lie.offset_of(0, M, 1, false, Z), Ok(4));
        assert!(lie.offset_of(0, 3, 1, false, Z).is_err());
    }

    #[test]
    fn an_empty_segment_is_no_segment() {
        let none = SegmentDesc::default();
        for (addr, len) in [(0, 0), (0, 1), (M, 0), (M, M)] {
            let e = none.offset_of(2, addr, len, true, Z).unwrap_err();
            assert!(e.no_segment());
            assert!(none.offset_of(2, addr, len, false, Z).is_err());
        }
        assert_eq!(none.offset_of(2, 0, 0, false, A), Ok(0));
        assert_eq!(none.offset_of(2, M, 0, true, A), Ok(0));
        assert!(none.offset_of(2, 0, 1, true, A).unwrap_err().no_segment());
    }

    #[test]
    fn zero_bytes_may_name_any_address_only_when_asked() {
        let d = seg(0x1000, 0x100);
        assert_eq!(d.offset_of(1, 0x1080, 0, false, A), Ok(0x80));
        assert_eq!(d.offset_of(1, 0x1100, 0, false, A), Ok(0x100));
        assert_eq!(d.offset_of(1, 0x1101, 0, false, A), Ok(0));
        assert_eq!(d.offset_of(1, 0, 0, false, A), Ok(0));
        assert_eq!(d.offset_of(1, M, 0, true, A), Ok(0));
        assert!(d.offset_of(1, 0x1101, 0, false, Z).is_err());
        assert!(d.offset_of(1, M, 0, true, Z).is_err());
        assert!(d.offset_of(1, 0x1101, 1, false, A).is_err());
    }

    #[test]
    fn messages_name_the_rank_the_range_and_the_segment() {
        let d = seg(0x1000, 0x100);
        let e = d.offset_of(5, 0x10f9, 8, false, Z).unwrap_err();
        assert_eq!(
            e.to_string(),
            "range [0x10f9, +8) is outside rank 5's segment [0x1000, +0x100)"
        );
        let e = d.offset_of(5, 0xf9, 8, true, Z).unwrap_err();
        assert_eq!(
            e.named("destination").to_string(),
            "destination offset range [0xf9, +8) is outside rank 5's segment [0x1000, +0x100)"
        );
        assert_eq!(
            e.named("scratch").local().to_string(),
            "scratch offset range [0xf9, +8) is outside the local segment [0x1000, +0x100) of rank 5"
        );
        let e = d.offset_of(5, M, 2, true, Z).unwrap_err();
        assert!(
            e.to_string().contains("wraps around the address space"),
            "{e}"
        );
        let e = SegmentDesc::default()
            .offset_of(9, 0x40, 8, false, Z)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "rank 9 has no bound segment for range [0x40, +8)"
        );
        assert_eq!(
            e.local().to_string(),
            "rank 9 (this rank) has no bound segment for range [0x40, +8)"
        );
    }

    /// Values that find the edges: 0, small, near `usize::MAX`, anything.
    fn edgy() -> impl Strategy<Value = usize> {
        prop_oneof![
            Just(0usize),
            0usize..64,
            (0usize..64).prop_map(|d| M - d),
            (0usize..64).prop_map(|d| (1usize << 47) + d),
            any::<usize>(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        #[test]
        fn fits_agrees_with_wide_arithmetic(off in edgy(), len in edgy(), size in edgy()) {
            prop_assert_eq!(fits(off, len, size), off as u128 + len as u128 <= size as u128);
        }

        #[test]
        fn offset_of_agrees_with_wide_arithmetic(
            base in edgy(),
            size in edgy(),
            addr in edgy(),
            len in edgy(),
            is_offset in any::<bool>(),
            any_zero in any::<bool>(),
            rank in any::<u32>(),
        ) {
            let d = seg(base, size);
            let zero = if any_zero { A } else { Z };
            let r = d.offset_of(rank, addr, len, is_offset, zero);
            // The model, in arithmetic that cannot overflow.
            let off = if is_offset {
                Some(addr as i128)
            } else {
                Some(addr as i128 - base as i128).filter(|&o| o >= 0)
            };
            let inside = off.is_some_and(|o| o + len as i128 <= size as i128);
            if len == 0 && any_zero {
                let o = r.expect("an empty range may name any address");
                prop_assert!(o <= size);
                if inside {
                    prop_assert_eq!(Some(o as i128), off);
                } else {
                    prop_assert_eq!(o, 0);
                }
            } else if size > 0 && inside {
                let o = r.expect("inside the segment");
                prop_assert_eq!(Some(o as i128), off);
                prop_assert!(o as u128 + len as u128 <= size as u128);
                if !is_offset {
                    prop_assert_eq!(base as u128 + o as u128, addr as u128);
                }
            } else {
                let e = r.expect_err("outside the segment or none bound");
                prop_assert_eq!((e.rank, e.addr, e.len, e.is_offset), (rank, addr, len, is_offset));
                prop_assert_eq!(e.no_segment(), size == 0);
                let msg = e.to_string();
                let needle = format!("[{addr:#x}, +{len})");
                prop_assert!(msg.contains(&needle), "{}", msg);
                let needle = format!("rank {rank}");
                prop_assert!(msg.contains(&needle), "{}", msg);
                if size > 0 {
                    let needle = format!("[{base:#x}, +{size:#x})");
                    prop_assert!(msg.contains(&needle), "{}", msg);
                }
            }
        }
    }
}
