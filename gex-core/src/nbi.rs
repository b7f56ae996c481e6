//! Implicit-event (NBI) operations: per-thread tracking by event category,
//! access regions, and their test/wait calls (`gex_NBI_*`).
//!
//! A layer that initiates an NBI operation that does not complete at
//! initiation calls [`track`] and reports the operation's completion to the
//! [`Completion`] it gets back: the calling thread's counter for that
//! category, or the open access region, which then owns the operation.
//!
//!
//! Each thread has one `Completion` per category (GET, PUT, AM, LC, RMW)
//! in a `thread_local!`. `test`/`wait(mask)` read the counters in `mask`.
//! Only operations that outlive their call are tracked (reference-path
//! puts, segment-destination gets), so on the direct path an NBI sync is a
//! few loads.
//!
//! An access region is a fresh completion holding one part for the region
//! itself. While it is open, `track` hands it out instead of the
//! counters; `end_access_region` releases the region's own part and returns
//! an event pending on it (`INVALID` if everything has finished). Regions
//! do not nest, and NBI test/wait inside one is an error.

use std::cell::RefCell;
use std::sync::Arc;

use gex_types::{Ec, Error, Flags, Result};

use crate::context;
use crate::event::{Completion, Event};
use crate::runtime::Runtime;

const CATEGORIES: [Ec; 5] = [Ec::GET, Ec::PUT, Ec::AM, Ec::LC, Ec::RMW];

struct NbiState {
    /// Outstanding operations per category, indexed like `CATEGORIES`.
    counters: [Arc<Completion>; 5],
    region: Option<Arc<Completion>>,
}

thread_local! {
    static NBI: RefCell<NbiState> = RefCell::new(NbiState {
        counters: std::array::from_fn(|_| Completion::new(0, None)),
        region: None,
    });
}

fn slot(ec: Ec) -> usize {
    CATEGORIES
        .iter()
        .position(|&c| c == ec)
        .expect("a single event category")
}

/// Registers one pending implicit operation of category `ec` (a single
/// category) initiated by the calling thread; returns the completion to
/// report it to (call [`Completion::done`] once when it completes).
pub fn track(ec: Ec) -> Arc<Completion> {
    NBI.with(|s| {
        let s = s.borrow();
        let c = match &s.region {
            Some(r) => r.clone(),
            None => s.counters[slot(ec)].clone(),
        };
        c.add(1);
        c
    })
}

/// Whether an access region is open on this thread.
pub fn in_access_region() -> bool {
    NBI.with(|s| s.borrow().region.is_some())
}

fn check(call: &str, flags: Flags) -> Result<()> {
    context::check_may_communicate(call)?;
    if !flags.is_empty() {
        return Err(Error::bad_arg(format!(
            "{call}: flags are reserved and must be empty, got {flags:?}"
        )));
    }
    Ok(())
}

/// Opens an access region on this thread (`gex_NBI_BeginAccessRegion`):
/// NBI operations initiated until [`end_access_region`] belong to the event
/// it returns. Regions do not nest.
pub fn begin_access_region(flags: Flags) -> Result<()> {
    check("gex_NBI_BeginAccessRegion", flags)?;
    NBI.with(|s| {
        let mut s = s.borrow_mut();
        if s.region.is_some() {
            return Err(Error::bad_arg(
                "gex_NBI_BeginAccessRegion: an access region is already open (regions do not nest)",
            ));
        }
        // One part held by the open region itself, released at its end.
        s.region = Some(Completion::new(1, None));
        Ok(())
    })
}

/// Closes the access region and returns one event covering every NBI
/// operation initiated inside it (`gex_NBI_EndAccessRegion`).
pub fn end_access_region(flags: Flags) -> Result<Event<'static>> {
    check("gex_NBI_EndAccessRegion", flags)?;
    let region = NBI
        .with(|s| s.borrow_mut().region.take())
        .ok_or_else(|| Error::bad_arg("gex_NBI_EndAccessRegion: no access region is open"))?;
    region.done();
    Ok(if region.is_complete() {
        Event::INVALID
    } else {
        Event::pending(region)
    })
}

fn all_done(mask: Ec) -> bool {
    NBI.with(|s| {
        let s = s.borrow();
        CATEGORIES
            .iter()
            .enumerate()
            .all(|(i, &c)| !mask.contains(c) || s.counters[i].is_complete())
    })
}

fn check_sync(call: &str, mask: Ec, flags: Flags) -> Result<()> {
    check(call, flags)?;
    if mask.is_empty() || !Ec::ALL.contains(mask) {
        return Err(Error::bad_arg(format!(
            "{call}: the event mask must be a non-empty set of GEX_EC_* values, got {mask:?}"
        )));
    }
    if in_access_region() {
        return Err(Error::bad_arg(format!(
            "{call}: implicit synchronisation inside an access region is erroneous"
        )));
    }
    Ok(())
}

/// Whether every NBI operation of the categories in `mask` initiated by
/// this thread has completed (`gex_NBI_Test` == 0). Does not poll the
/// conduit; runs the layers' progress hooks once if something is pending.
pub fn test(mask: Ec, flags: Flags) -> Result<bool> {
    check_sync("gex_NBI_Test", mask, flags)?;
    if all_done(mask) {
        return Ok(true);
    }
    Ok(Runtime::get().is_some_and(|rt| rt.run_progress_hooks() > 0) && all_done(mask))
}

/// Polls until [`test`](fn@test) would succeed (`gex_NBI_Wait`).
pub fn wait(mask: Ec, flags: Flags) -> Result<()> {
    check_sync("gex_NBI_Wait", mask, flags)?;
    if !all_done(mask) {
        Runtime::require("gex_NBI_Wait")?.spin_until(|| all_done(mask));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_and_regions() {
        assert!(test(Ec::ALL, Flags::empty()).unwrap());
        let put = track(Ec::PUT);
        assert!(!test(Ec::PUT, Flags::empty()).unwrap());
        assert!(test(Ec::GET, Flags::empty()).unwrap());
        put.done();
        assert!(test(Ec::ALL, Flags::empty()).unwrap());

        begin_access_region(Flags::empty()).unwrap();
        assert!(begin_access_region(Flags::empty()).is_err());
        assert!(
            test(Ec::ALL, Flags::empty()).is_err(),
            "no implicit sync inside a region"
        );
        let op = track(Ec::GET);
        let mut ev = end_access_region(Flags::empty()).unwrap();
        assert!(
            test(Ec::GET, Flags::empty()).unwrap(),
            "region ops are not implicit any more"
        );
        assert!(!ev.try_finish_for_test());
        op.done();
        assert!(ev.try_finish_for_test());
        assert!(end_access_region(Flags::empty()).is_err());
        let empty = {
            begin_access_region(Flags::empty()).unwrap();
            end_access_region(Flags::empty()).unwrap()
        };
        assert!(empty.is_invalid());
        assert!(test(Ec::empty(), Flags::empty()).is_err());
    }
}
