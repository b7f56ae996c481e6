//! The segments bound to created endpoints, as this process knows them:
//! one table per endpoint index (1 to `MAX_EPS - 1`), indexed by jobrank.
//!
//! The primordial endpoints' segments keep their own table (published once
//! at attach, [`crate::segment_table`]) so that nothing changes on their
//! path. Index 0 has a table here only in a job that binds created
//! segments to the primordial endpoints instead of attaching (what the
//! reference's `testsegment` does; API.md, "Leniencies"): each update of
//! that table is also installed as the primordial one, so that every
//! layer's path to index 0 reads it, and conduits, which did not attach,
//! reach those segments as they reach a created endpoint's. A created endpoint's segment may be bound, published, destroyed
//! and bound again, so its table is replaced, never modified: a writer
//! (bind, publish, destroy, under one mutex) builds a new table from the
//! current one and publishes it with one release store, and readers (RMA
//! over a TM-pair naming that index) take it with one acquire load. Old
//! tables are leaked, like the primordial one: a reader may still hold one,
//! and a table is small (three words per rank, twice). Each table carries
//! its fast form (the [`FastSeg`] entries the RMA direct route reads), in
//! both versions, mapped and with direct access off.
//!
//! The direct route over a TM-pair reads neither the table nor the
//! direct-access switch: [`fast_entry_at`] loads the active fast form of
//! the pair's slot (for index 0 the primordial table's, as
//! [`crate::fast_segments`] gives it; for a created index the form its
//! table's switch selects; kept in `FAST` by the writers, by attach and
//! by [`crate::set_direct_access`]) and checks the rank against the job
//! size, which every table's length is (`FAST_LEN`): two independent
//! loads and the entry, with no test of the index (the pair clamps it
//! when it is made, [`fast_slot`]). Through the table it was a chain of
//! three dependent loads plus the switch's, and an 8-byte get to a created
//! segment took 1.5-1.7x the primordial one.
//!
//! # Publication
//!
//! Binding sets this rank's entry (owner base = local base), so the process
//! reaches its own segment at once. `ep_publish_bound_segment` (gex-mk) is
//! an all-gather among the team's members of each one's entries (index,
//! owner base, size, memfd handle and serial); neighbours then map library
//! memory (mappings live as long as the process) and every member stores
//! the others' entries; a second all-gather agrees that every mapping
//! worked. A member's bad arguments travel in the first all-gather, so
//! every member fails with its message. Ranks outside the team learn
//! nothing. Destroy clears this rank's entry of every endpoint the segment
//! is bound to, unbinds them, and replaces the pages of library memory
//! with private anonymous ones (`MAP_FIXED`), so a stale access racing with
//! it never faults.
//!
//! # The primordial endpoints with created segments
//!
//! Every update of index 0's table (bind, publish, destroy) also installs
//! it, with its two fast forms, as the primordial one
//! (`runtime::install_bound_primordial`: the statics behind
//! `segment_table()`, `Runtime::segments()`, `fast_segments()`, the C
//! header's mirror, and slot 0 of the pairs' fast forms), so every layer's
//! path to the primordial segments (gex-rma, gex-am's Long check, gex-vis,
//! gex-ratomic, the C inline route) reads it unchanged, with the same range
//! checks. Conduits did not attach and know nothing of these segments: a
//! conduit with no attached segment treats index 0 like a created
//! endpoint's (smp copies into a neighbour's mapped library memory or
//! carries the payload in the ring record; udp neither places payloads nor
//! answers gets by reference; ibv sends Longs in messages rather than by
//! RDMA), and the conduits' one-sided and atomic capabilities do not reach
//! a peer before attach, so gex-rma and gex-ratomic take the Active Message
//! routes, whose handlers check the range against this rank's entry.
//!
//! The two ways exclude each other for the life of the process
//! (`crate::Primordial`, under a mutex): attach after a bind (or after a
//! peer's publication reached this rank) is an error on every rank; a bind
//! on a rank that attached is an error; a publication of a primordial
//! endpoint's segment that reaches a rank that attached fails on every
//! member (the second all-gather carries the verdict). The attached table
//! is never replaced.

use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
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
/// Slots of `FAST`: a power of two above `MAX_EPS`, so that a slot is
/// masked into range rather than checked.
const FAST_SLOTS: usize = 64;
const _: () = assert!(MAX_EPS < FAST_SLOTS && FAST_SLOTS.is_power_of_two());
/// Each index's active fast form: for 0 the primordial table's active
/// form, for a created index the first entry of its table's `fast_mapped`
/// or `fast_unmapped` (as [`direct_access`] says); null when there is none,
/// and always for slots `MAX_EPS` and above.
static FAST: [AtomicPtr<FastSeg>; FAST_SLOTS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; FAST_SLOTS];
/// The number of entries of every table (the job size), set before the
/// first table is published and never changed.
static FAST_LEN: AtomicUsize = AtomicUsize::new(0);
static WRITERS: Mutex<()> = Mutex::new(());

/// The slot of endpoint index `index` in the active fast forms: the index
/// itself below `MAX_EPS`, else `MAX_EPS` (a slot that is always empty).
/// A TM-pair keeps it, so that its direct route tests no index.
#[inline]
pub fn fast_slot(index: EpIndex) -> u8 {
    index.min(MAX_EPS as EpIndex) as u8
}

/// The fast-table entry of jobrank `rank` in slot `slot` ([`fast_slot`]:
/// 0 is the primordial table): `None` before anything is known for it
/// here, for an empty slot or for a rank outside the job. What the RMA
/// direct route over a TM-pair reads.
///
/// For layer authors.
#[inline(always)]
pub fn fast_entry_at(slot: u8, rank: Rank) -> Option<&'static FastSeg> {
    let p = FAST[slot as usize & (FAST_SLOTS - 1)].load(Ordering::Acquire);
    // The acquire load above sees FAST_LEN's value, stored before the
    // first pointer was published.
    if p.is_null() || rank as usize >= FAST_LEN.load(Ordering::Relaxed) {
        return None;
    }
    // SAFETY: a non-null pointer is the first entry of a leaked fast form
    // of FAST_LEN entries (never freed or modified), and `rank` is below.
    Some(unsafe { &*p.add(rank as usize) })
}

/// The fast-table entry of jobrank `rank` for the created endpoint index
/// `index` (`None` for index 0, whose table is the primordial one, an
/// index of `MAX_EPS` or more, before anything is known for the index
/// here, or a rank outside the job).
///
/// For layer authors.
#[inline]
pub fn ep_fast_entry(index: EpIndex, rank: Rank) -> Option<&'static FastSeg> {
    if index == 0 || index as usize >= MAX_EPS {
        return None;
    }
    fast_entry_at(index as u8, rank)
}

/// Sets FAST_LEN to the job size `len` (every table has that many
/// entries) before a first fast form is published; it never changes.
fn set_len(len: usize) {
    match FAST_LEN.load(Ordering::Relaxed) {
        0 => FAST_LEN.store(len, Ordering::Relaxed),
        n => assert_eq!(n, len, "the job size does not change"),
    }
}

/// Points `index`'s active fast form at `t`'s, as the direct-access
/// switch says. Writers hold [`WRITERS`].
fn activate(index: usize, t: &EpSegTable) {
    let f = if direct_access() {
        &t.fast_mapped
    } else {
        &t.fast_unmapped
    };
    FAST[index].store(f.as_ptr() as *mut FastSeg, Ordering::Release);
}

/// Re-selects every index's active fast form after the direct-access
/// switch changed or the primordial table was published
/// ([`crate::set_direct_access`]): for index 0 the primordial table's
/// active form, once there is one.
pub(crate) fn refresh_fast() {
    let _g = WRITERS.lock().unwrap_or_else(|p| p.into_inner());
    let p = crate::runtime::fast_segments();
    if !p.is_null() {
        set_len(crate::runtime::segment_count());
        FAST[0].store(p as *mut FastSeg, Ordering::Release);
    }
    for i in 1..MAX_EPS {
        if let Some(t) = ep_segments(i as EpIndex) {
            activate(i, t);
        }
    }
}

/// The table of endpoint index `index` (`None` if nothing was ever bound
/// or published for it here; for index 0 also when the primordial
/// endpoints' segments were attached, whose table is
/// [`crate::segment_table`]).
///
/// For layer and conduit authors.
#[inline]
pub fn ep_segments(index: EpIndex) -> Option<&'static EpSegTable> {
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
/// index `index`'s table (`index < MAX_EPS`, `jobsize` entries).
///
/// Index 0 is the primordial endpoints' when their segments are created
/// ones bound to them rather than attached: the new table is also
/// installed as the primordial one ([`crate::segment_table`], the fast
/// forms and their mirror). That is an error, nothing changed, if this
/// rank attached a segment.
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
) -> gex_types::Result<()> {
    assert!((index as usize) < MAX_EPS, "endpoint index");
    let _g = WRITERS.lock().unwrap_or_else(|p| p.into_inner());
    if index == 0 && crate::runtime::primordial_attached() {
        return Err(gex_types::Error::bad_arg(
            "this rank attached a segment (gex_Segment_Attach): the primordial endpoints' segments are the attached ones",
        ));
    }
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
    assert_eq!(descs.len(), jobsize as usize, "one entry per jobrank");
    set_len(descs.len());
    let leaked: &'static EpSegTable = Box::leak(Box::new(EpSegTable::new(descs)));
    if index == 0 {
        crate::runtime::install_bound_primordial(
            &leaked.descs,
            &leaked.fast_mapped,
            &leaked.fast_unmapped,
        )?;
    }
    TABLES[index as usize].store(
        leaked as *const EpSegTable as *mut EpSegTable,
        Ordering::Release,
    );
    activate(index as usize, leaked);
    Ok(())
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
        unsafe { update_ep_segments(i, 4, &[(1, Some(a)), (3, Some(b))]) }.unwrap();
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
        assert_eq!(ep_fast_entry(i, 1), Some(&f[1]));
        assert_eq!((ep_fast_entry(i, 4), ep_fast_entry(0, 1)), (None, None));
        // A later update replaces one entry (a destroy), and the table an
        // earlier reader holds is unchanged.
        // SAFETY: as above.
        unsafe { update_ep_segments(i, 4, &[(1, None), (9, Some(a))]) }.unwrap();
        assert_eq!(ep_segment(i, 1), None);
        assert_eq!(ep_segment(i, 3), Some(b));
        assert_eq!(t.get(1), Some(a));
    }
}
