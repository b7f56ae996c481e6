//! The segments bound to created endpoints, as this process knows them:
//! one table per endpoint index (1 to `MAX_EPS - 1`), indexed by jobrank.
//!
//! The primordial endpoints' segments keep their own table (published once
//! at attach, [`crate::segment_table`]) so that nothing changes on their
//! path. A created endpoint's segment may be bound, published, destroyed
//! and bound again, so its table is replaced, never modified: a writer
//! (bind, publish, destroy, under one mutex) builds a new table from the
//! current one and publishes it with one release store, and readers (RMA
//! over a TM-pair naming that index) take it with one acquire load. Old
//! tables are leaked, like the primordial one: a reader may still hold one,
//! and a table is small (three words per rank, twice). Each table carries
//! its fast form (the [`FastSeg`] entries the RMA direct route reads), in
//! both versions, mapped and with direct access off.

use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;

use gex_types::{EpIndex, Rank, MAX_EPS};

use crate::conduit::SegmentDesc;
use crate::runtime::{direct_access, FastSeg};

/// One endpoint index's table: every rank's segment for that index
/// (size 0: none known here), and its two fast forms.
pub struct EpSegTable {
    descs: Box<[SegmentDesc]>,
    fast_mapped: Box<[FastSeg]>,
    fast_unmapped: Box<[FastSeg]>,
}

impl EpSegTable {
    fn new(descs: Vec<SegmentDesc>) -> EpSegTable {
        let fast = |mapped: bool| -> Box<[FastSeg]> {
            descs.iter().map(|d| FastSeg::of(d, mapped)).collect()
        };
        EpSegTable {
            fast_mapped: fast(true),
            fast_unmapped: fast(false),
            descs: descs.into_boxed_slice(),
        }
    }

    /// Jobrank `rank`'s segment for this index, if one is known here.
    #[inline]
    pub fn get(&self, rank: Rank) -> Option<SegmentDesc> {
        self.descs
            .get(rank as usize)
            .copied()
            .filter(|d| d.size > 0)
    }

    /// The fast form (one entry per jobrank), honouring
    /// [`crate::set_direct_access`].
    #[inline]
    pub fn fast_slice(&self) -> &[FastSeg] {
        if direct_access() {
            &self.fast_mapped
        } else {
            &self.fast_unmapped
        }
    }
}

static TABLES: [AtomicPtr<EpSegTable>; MAX_EPS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_EPS];
static WRITERS: Mutex<()> = Mutex::new(());

/// The table of endpoint index `index` (`None` if nothing was ever bound
/// or published for it here, or for index 0, whose table is the
/// primordial one).
///
/// For layer and conduit authors.
#[inline]
pub fn ep_segments(index: EpIndex) -> Option<&'static EpSegTable> {
    if index == 0 {
        return None;
    }
    let p = TABLES.get(index as usize)?.load(Ordering::Acquire);
    // SAFETY: a non-null pointer was stored by `update` from a leaked box,
    // which is never freed or modified.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// Jobrank `rank`'s segment bound to its endpoint `index`, if known here.
#[inline]
pub fn ep_segment(index: EpIndex, rank: Rank) -> Option<SegmentDesc> {
    ep_segments(index).and_then(|t| t.get(rank))
}

/// Replaces the entries `changes` (jobrank, segment or none) of endpoint
/// index `index`'s table (`1 <= index < MAX_EPS`, `jobsize` entries).
///
/// For layer and conduit authors (gex-mk's bind, publish and destroy).
///
/// # Safety
///
/// Every `local_base` given must be the start of a mapping of at least
/// `size` bytes that stays readable and writable for the rest of the
/// process (RMA copies into it from safe code, through any table that ever
/// held it).
#[doc(hidden)]
pub unsafe fn update_ep_segments(
    index: EpIndex,
    jobsize: Rank,
    changes: &[(Rank, Option<SegmentDesc>)],
) {
    assert!(index != 0 && (index as usize) < MAX_EPS, "endpoint index");
    let _g = WRITERS.lock().unwrap_or_else(|p| p.into_inner());
    // Conduits find created endpoints' segments (Long payloads, one-sided
    // transfers) through this lookup: installed before any table exists.
    // SAFETY: every local base in these tables was promised mapped for the
    // rest of the process by this function's callers.
    unsafe { crate::conduit::epseg::set_ep_segment_lookup(ep_segment) };
    let mut descs = match ep_segments(index) {
        Some(t) => t.descs.to_vec(),
        None => vec![SegmentDesc::default(); jobsize as usize],
    };
    for &(r, d) in changes {
        if let Some(slot) = descs.get_mut(r as usize) {
            *slot = d.unwrap_or_default();
        }
    }
    let leaked = Box::leak(Box::new(EpSegTable::new(descs)));
    TABLES[index as usize].store(leaked, Ordering::Release);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_replace_entries_and_keep_the_others() {
        // Index 31: no other test of this process uses it.
        let i = (MAX_EPS - 1) as EpIndex;
        assert!(ep_segments(i).is_none() && ep_segments(0).is_none());
        let a = SegmentDesc::new(0x1000, Some(0x7000), 4096);
        let b = SegmentDesc::new(0x2000, None, 8192);
        // SAFETY: these tables are only read here, never copied through.
        unsafe { update_ep_segments(i, 4, &[(1, Some(a)), (3, Some(b))]) };
        let t = ep_segments(i).unwrap();
        assert_eq!(
            (t.get(0), t.get(1), t.get(3), t.get(4)),
            (None, Some(a), Some(b), None)
        );
        // The fast form: mapped entries are accessible, the others empty.
        let f = t.fast_slice();
        assert_eq!(f.len(), 4);
        assert_eq!(
            (f[1].size, f[1].local_base, f[1].owner_base),
            (4096, 0x7000, 0x1000)
        );
        assert_eq!((f[3].size, f[0].size), (0, 0));
        // A later update replaces one entry (a destroy), and the table an
        // earlier reader holds is unchanged.
        // SAFETY: as above.
        unsafe { update_ep_segments(i, 4, &[(1, None), (9, Some(a))]) };
        assert_eq!(ep_segment(i, 1), None);
        assert_eq!(ep_segment(i, 3), Some(b));
        assert_eq!(t.get(1), Some(a));
    }
}
