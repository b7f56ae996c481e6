//! Events (`gex_Event_t`), their test/wait operations, and local-completion
//! options (`lc_opt`).
//!
//! An [`Event`] is a handle on one operation's completion. It borrows the
//! operation's local buffer for its lifetime `'a`, so the buffer cannot be
//! reused or freed while the operation may still use it. Dropping an event
//! that has not completed waits for it (and a staged get's data is copied
//! into its destination, as a wait does), except in restricted context (AM
//! handler, HSL held, open Prepare), where polling is not allowed: there the
//! drop returns at once and the operation completes in the background
//! (a staged get's data is then not copied into the released buffer).
//! Events also implement [`std::future::Future`].
//!
//! Operations that complete at initiation return [`Event::INVALID`]; an
//! `IMMEDIATE` initiation that did nothing returns [`Event::NO_OP`], which
//! must not be tested or waited on.
//!
//!
//! # Completions
//!
//! A `Completion` is an atomic count of outstanding parts with an
//! optional parent. `done()` counts down with release ordering, and the
//! call that reaches zero calls `done()` on the parent. `is_complete()` is
//! an acquire load, so whoever sees completion sees the data. Parts may
//! finish in any thread that polls. It implements
//! `gex_conduit::OpCompletion`, so a conduit's one-sided operations
//! complete events, NBI counters and access regions unchanged.
//!
//! An event is `INVALID`, `NO_OP`, or pending on a completion (plus, for a
//! staged get, the copy-out). `test` never polls the conduit; it runs the
//! layers' progress hooks. `wait` and the array calls (`test_some`,
//! `wait_some`, `test_all`, `wait_all`) spin through `Runtime::spin_until`.
//! The thread that observes completion finishes the operation (the
//! copy-out) and the event becomes `INVALID`. `query_leaf` gives `INVALID`
//! for `LC` (local completion at initiation) and, for another category of a
//! pending root, an event pending on the root's completion. As a `Future`,
//! each poll tries to finish, runs one round of progress, tries again, and
//! otherwise wakes itself at once: there is no interrupt, so an executor
//! busy-polls.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use gex_types::{Ec, Error, Flags, Result};

use crate::context;
use crate::runtime::Runtime;

/// Completion state shared between an event (or an NBI category, or an
/// access region) and the operations behind it: a count of outstanding
/// parts. When the count reaches zero the parent, if any, is told.
#[derive(Debug, Default)]
pub struct Completion {
    remaining: AtomicUsize,
    parent: Option<Arc<Completion>>,
}

impl Completion {
    /// A completion waiting for `parts` parts, reporting to `parent` once
    /// they are all done.
    pub fn new(parts: usize, parent: Option<Arc<Completion>>) -> Arc<Completion> {
        Arc::new(Completion {
            remaining: AtomicUsize::new(parts),
            parent,
        })
    }

    /// Adds `n` outstanding parts (before the completion can be observed
    /// complete).
    pub fn add(&self, n: usize) {
        self.remaining.fetch_add(n, Ordering::Relaxed);
    }

    /// Marks one part done (release: the data it wrote is visible to whoever
    /// observes completion).
    pub fn done(&self) {
        if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            if let Some(p) = &self.parent {
                p.done();
            }
        }
    }

    /// Whether every part is done.
    #[inline]
    pub fn is_complete(&self) -> bool {
        self.remaining.load(Ordering::Acquire) == 0
    }
}

impl gex_conduit::OpCompletion for Completion {
    /// A conduit's one-sided operation (one part) is done.
    fn complete(&self) {
        self.done();
    }
}

/// A buffer that handlers fill in parts (disjoint ranges, possibly from
/// several threads) and the thread that completes the event copies out.
pub struct Staging {
    /// From `Box::into_raw`; freed in `Drop`. Only ever accessed through
    /// raw pointers, so concurrent writers of disjoint ranges never hold
    /// overlapping references.
    ptr: *mut u8,
    len: usize,
}

// SAFETY: writers fill disjoint ranges through raw pointers and the single
// reader copies out only after the completion count (acquire) says every
// writer is done (release).
unsafe impl Sync for Staging {}
// SAFETY: as above; the buffer is plain bytes owned by the Staging.
unsafe impl Send for Staging {}

impl Staging {
    /// A zeroed staging buffer of `len` bytes.
    pub fn new(len: usize) -> Arc<Staging> {
        let b: Box<[u8]> = vec![0u8; len].into_boxed_slice();
        Arc::new(Staging {
            ptr: Box::into_raw(b) as *mut u8,
            len,
        })
    }

    /// Start of the buffer, for writers of disjoint ranges.
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // SAFETY: ptr/len came from Box::into_raw of a boxed slice of len
        // bytes, and are freed once, here.
        unsafe {
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                self.ptr, self.len,
            )))
        };
    }
}

struct CopyOut {
    staging: Arc<Staging>,
    dst: *mut u8,
    len: usize,
    /// A scatter list instead of `dst`/`len`: (address, length) in order,
    /// filled from consecutive bytes of `staging`.
    scatter: Option<Box<[(usize, usize)]>>,
}

enum State {
    Invalid,
    NoOp,
    Pending {
        c: Arc<Completion>,
        copy: Option<CopyOut>,
        /// Local completion tracked apart from `c` (which includes it), for
        /// the LC leaf.
        lc: Option<Arc<Completion>>,
    },
}

/// A handle on an operation's completion (`gex_Event_t`). It belongs to the
/// thread that initiated the operation (it is not `Send`), as the spec
/// requires.
#[must_use = "an event must be tested or waited on"]
pub struct Event<'a> {
    state: State,
    _borrow: PhantomData<&'a mut [u8]>,
}

impl std::fmt::Debug for Event<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match &self.state {
            State::Invalid => "Event(INVALID)",
            State::NoOp => "Event(NO_OP)",
            State::Pending { c, .. } if c.is_complete() => "Event(complete)",
            State::Pending { .. } => "Event(pending)",
        })
    }
}

impl Default for Event<'_> {
    fn default() -> Self {
        Event::INVALID
    }
}

impl Event<'static> {
    /// A pending event completed through `c`.
    ///
    /// For layer and conduit authors (a program's events come from the calls
    /// that start operations); hidden from the documentation.
    #[doc(hidden)]
    pub fn pending(c: Arc<Completion>) -> Event<'static> {
        Event {
            state: State::Pending {
                c,
                copy: None,
                lc: None,
            },
            _borrow: PhantomData,
        }
    }

    /// A pending event completed through `c`, whose local completion
    /// (`Ec::LC` leaf) is `lc`; `c` must not complete before `lc`.
    ///
    /// For layer and conduit authors (a program's events come from the calls
    /// that start operations); hidden from the documentation.
    #[doc(hidden)]
    pub fn pending_with_lc(c: Arc<Completion>, lc: Arc<Completion>) -> Event<'static> {
        Event {
            state: State::Pending {
                c,
                copy: None,
                lc: Some(lc),
            },
            _borrow: PhantomData,
        }
    }
}

impl<'a> Event<'a> {
    /// The event of an operation complete at initiation (`GEX_EVENT_INVALID`).
    pub const INVALID: Event<'a> = Event {
        state: State::Invalid,
        _borrow: PhantomData,
    };

    /// The result of an `IMMEDIATE` initiation that did nothing
    /// (`GEX_EVENT_NO_OP`); testing or waiting on it is an error.
    pub const NO_OP: Event<'a> = Event {
        state: State::NoOp,
        _borrow: PhantomData,
    };

    /// A pending event whose completion also copies `staging` into `dst`
    /// (a get whose data arrives in parts): the copy is made by the thread
    /// that observes completion, which holds the borrow of `dst`.
    ///
    /// For layer and conduit authors (a program's events come from the calls
    /// that start operations); hidden from the documentation.
    #[doc(hidden)]
    pub fn pending_into(c: Arc<Completion>, staging: Arc<Staging>, dst: &'a mut [u8]) -> Event<'a> {
        assert_eq!(
            staging.len(),
            dst.len(),
            "staging and destination differ in length"
        );
        Event {
            state: State::Pending {
                c,
                copy: Some(CopyOut {
                    staging,
                    dst: dst.as_mut_ptr(),
                    len: dst.len(),
                    scatter: None,
                }),
                lc: None,
            },
            _borrow: PhantomData,
        }
    }

    /// A pending event whose completion also copies `staging`, in order,
    /// into the ranges of `scatter` (address, length): a get into several
    /// places whose data arrives in parts (gex-vis). The copy is made by
    /// the thread that observes completion.
    ///
    /// For layer and conduit authors; hidden from the documentation.
    ///
    /// # Safety
    /// Every range of `scatter` must be writable, disjoint from the others
    /// and exclusively borrowed by the caller for `'a` (the event carries
    /// that borrow); their lengths must add up to `staging.len()`.
    #[doc(hidden)]
    pub unsafe fn pending_scatter(
        c: Arc<Completion>,
        staging: Arc<Staging>,
        scatter: Box<[(usize, usize)]>,
    ) -> Event<'a> {
        assert_eq!(
            scatter.iter().map(|r| r.1).sum::<usize>(),
            staging.len(),
            "staging and scatter list differ in length"
        );
        Event {
            state: State::Pending {
                c,
                copy: Some(CopyOut {
                    staging,
                    dst: std::ptr::null_mut(),
                    len: 0,
                    scatter: Some(scatter),
                }),
                lc: None,
            },
            _borrow: PhantomData,
        }
    }

    /// Whether this is `GEX_EVENT_INVALID` (nothing to wait for).
    pub fn is_invalid(&self) -> bool {
        matches!(self.state, State::Invalid)
    }

    /// Whether this is `GEX_EVENT_NO_OP`.
    pub fn is_no_op(&self) -> bool {
        matches!(self.state, State::NoOp)
    }

    /// If complete, finishes the operation (copies staged data out) and
    /// becomes `INVALID`; returns whether it is complete.
    fn try_finish(&mut self) -> bool {
        let done = match &self.state {
            State::Invalid => return true,
            State::NoOp => return false,
            State::Pending { c, .. } => c.is_complete(),
        };
        if done {
            if let State::Pending { copy: Some(cp), .. } =
                std::mem::replace(&mut self.state, State::Invalid)
            {
                // The completion count reached zero with acquire ordering,
                // so every part of the staging buffer was written and no
                // writer remains.
                match &cp.scatter {
                    // SAFETY: (and) `dst` is valid for `len` bytes and
                    // exclusively borrowed for 'a, which this event carries.
                    None => unsafe {
                        std::ptr::copy_nonoverlapping(cp.staging.ptr(), cp.dst, cp.len)
                    },
                    Some(runs) => {
                        let mut at = 0;
                        for &(dst, len) in runs.iter() {
                            // SAFETY: (as above) the ranges are writable and
                            // borrowed for 'a (`pending_scatter`'s
                            // contract), and their lengths add up to the
                            // staging buffer's, so `at + len` stays in it.
                            unsafe {
                                std::ptr::copy_nonoverlapping(
                                    cp.staging.ptr().add(at),
                                    dst as *mut u8,
                                    len,
                                )
                            };
                            at += len;
                        }
                    }
                }
            }
            self.state = State::Invalid;
        }
        done
    }

    #[cfg(test)]
    pub(crate) fn try_finish_for_test(&mut self) -> bool {
        self.try_finish()
    }

    fn check(&self, call: &str) -> Result<()> {
        if self.is_no_op() {
            return Err(Error::bad_arg(format!(
                "{call}: GEX_EVENT_NO_OP may not be tested or waited on"
            )));
        }
        Ok(())
    }

    /// Whether the operation completed (`gex_Event_Test` == 0). Does not
    /// poll the conduit, but runs the layers' progress hooks once if the
    /// operation is not complete (a collective may advance there). On
    /// success the event becomes `INVALID`.
    pub fn test(&mut self) -> Result<bool> {
        context::check_may_communicate("gex_Event_Test")?;
        self.check("gex_Event_Test")?;
        if self.try_finish() {
            return Ok(true);
        }
        Ok(hooks_then(|| self.try_finish()))
    }

    /// Polls until the operation completes (`gex_Event_Wait`).
    pub fn wait(mut self) -> Result<()> {
        context::check_may_communicate("gex_Event_Wait")?;
        self.check("gex_Event_Wait")?;
        if !self.try_finish() {
            let rt = Runtime::require("gex_Event_Wait")?;
            rt.spin_until(|| self.try_finish());
        }
        Ok(())
    }

    /// The leaf event of category `ec` of this root event
    /// (`gex_Event_QueryLeaf`). `ec` must be one category, not `ALL`.
    ///
    /// The spec lets a leaf be `INVALID` only when it "already happened".
    /// The local completion leaf (`Ec::LC`) is pending while a conduit
    /// still reads the source of a put (zero-copy; the root was made with
    /// [`Event::pending_with_lc`]), and `INVALID` otherwise: every other
    /// operation copies its payload out before the call returns. Any other category
    /// (`GET`, `PUT`, `AM`, `RMW`) of a root that is still pending is a
    /// pending event on the root's own completion: it completes when the
    /// root's operations do, never before. Every query of a root returns an
    /// event on the same completion, as the spec's "the *same* event"
    /// requires. A root that is `INVALID` or complete gives `INVALID`.
    pub fn query_leaf(&self, ec: Ec) -> Result<Event<'static>> {
        if ec.bits().count_ones() != 1 || !Ec::ALL.contains(ec) {
            return Err(Error::bad_arg(format!(
                "gex_Event_QueryLeaf: the category must be a single GEX_EC_* value, got {ec:?}"
            )));
        }
        self.check("gex_Event_QueryLeaf")?;
        match &self.state {
            State::Pending { c, .. } if ec != Ec::LC && !c.is_complete() => {
                Ok(Event::pending(c.clone()))
            }
            State::Pending { lc: Some(l), .. } if ec == Ec::LC && !l.is_complete() => {
                Ok(Event::pending(l.clone()))
            }
            _ => Ok(Event::INVALID),
        }
    }

    fn check_flags(call: &str, flags: Flags) -> Result<()> {
        context::check_may_communicate(call)?;
        if flags.is_empty() {
            Ok(())
        } else {
            Err(Error::bad_arg(format!(
                "{call}: flags are reserved and must be empty, got {flags:?}"
            )))
        }
    }

    fn check_all(call: &str, events: &[Event<'a>]) -> Result<()> {
        match events.iter().position(Event::is_no_op) {
            Some(i) => Err(Error::bad_arg(format!(
                "{call}: entry {i} is GEX_EVENT_NO_OP"
            ))),
            None => Ok(()),
        }
    }

    /// Completes what has completed; returns (completed now, still pending).
    fn sweep(events: &mut [Event<'a>]) -> (usize, usize) {
        let (mut done, mut pending) = (0, 0);
        for e in events.iter_mut() {
            if e.is_invalid() {
                continue;
            }
            if e.try_finish() {
                done += 1;
            } else {
                pending += 1;
            }
        }
        (done, pending)
    }

    /// `gex_Event_TestSome`: true if at least one event completed (those are
    /// overwritten with `INVALID`) or all entries are `INVALID`. No poll of
    /// the conduit; the progress hooks run once if nothing completed.
    pub fn test_some(events: &mut [Event<'a>], flags: Flags) -> Result<bool> {
        Self::check_flags("gex_Event_TestSome", flags)?;
        Self::check_all("gex_Event_TestSome", events)?;
        let (done, pending) = Self::sweep(events);
        if done > 0 || pending == 0 {
            return Ok(true);
        }
        Ok(hooks_then(|| Self::sweep(events).0 > 0))
    }

    /// `gex_Event_WaitSome`: polls until [`Event::test_some`] would succeed.
    pub fn wait_some(events: &mut [Event<'a>], flags: Flags) -> Result<()> {
        Self::check_flags("gex_Event_WaitSome", flags)?;
        Self::check_all("gex_Event_WaitSome", events)?;
        let (done, pending) = Self::sweep(events);
        if done == 0 && pending > 0 {
            let rt = Runtime::require("gex_Event_WaitSome")?;
            rt.spin_until(|| {
                let (d, p) = Self::sweep(events);
                d > 0 || p == 0
            });
        }
        Ok(())
    }

    /// `gex_Event_TestAll`: true if every event completed (completed ones
    /// are overwritten with `INVALID` either way). No poll of the conduit;
    /// the progress hooks run once if some event is pending.
    pub fn test_all(events: &mut [Event<'a>], flags: Flags) -> Result<bool> {
        Self::check_flags("gex_Event_TestAll", flags)?;
        Self::check_all("gex_Event_TestAll", events)?;
        if Self::sweep(events).1 == 0 {
            return Ok(true);
        }
        Ok(hooks_then(|| Self::sweep(events).1 == 0))
    }

    /// `gex_Event_WaitAll`: polls until every event completed.
    pub fn wait_all(events: &mut [Event<'a>], flags: Flags) -> Result<()> {
        Self::check_flags("gex_Event_WaitAll", flags)?;
        Self::check_all("gex_Event_WaitAll", events)?;
        if Self::sweep(events).1 > 0 {
            let rt = Runtime::require("gex_Event_WaitAll")?;
            rt.spin_until(|| Self::sweep(events).1 == 0);
        }
        Ok(())
    }
}

impl Drop for Event<'_> {
    fn drop(&mut self) {
        // An operation may still use the borrowed buffer: wait for it.
        if let State::Pending { c, .. } = &self.state {
            if !c.is_complete() {
                // Waiting polls, and polling is not allowed in restricted
                // context (AM handler, HSL held, open Prepare): it would run
                // handlers while a lock is held. Do not wait there: the
                // operation finishes on its own completion record, which it
                // shares; a staged get writes only its staging buffer and
                // its copy-out is skipped, so nothing writes the borrowed
                // buffer after this.
                if !context::may_communicate() {
                    crate::runtime::report(context::check_may_communicate(
                        "drop of a pending gex::Event (not waited for: completes in the background)",
                    ).unwrap_err());
                    return;
                }
                if let Some(rt) = Runtime::get() {
                    let c = c.clone();
                    rt.spin_until(|| c.is_complete());
                }
            }
            // Complete (now or before): a staged get's data goes to its
            // destination, as a wait would have put it there.
            self.try_finish();
        }
    }
}

impl Future for Event<'_> {
    type Output = Result<()>;

    /// Each poll of the future makes progress once; until the operation
    /// completes it asks to be polled again at once (there is no interrupt
    /// to wake it), so an executor keeps driving it.
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        let this = self.get_mut();
        if let Err(e) = context::check_may_communicate("gex_Event_Wait (future)")
            .and_then(|_| this.check("gex_Event_Wait (future)"))
        {
            return Poll::Ready(Err(e));
        }
        if this.try_finish() {
            return Poll::Ready(Ok(()));
        }
        if let Some(rt) = Runtime::get() {
            rt.progress();
        }
        if this.try_finish() {
            Poll::Ready(Ok(()))
        } else {
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

/// Runs the layers' progress hooks (if a client exists and any hook did
/// something) and evaluates `cond` again; false otherwise.
fn hooks_then(cond: impl FnOnce() -> bool) -> bool {
    match Runtime::get() {
        Some(rt) if rt.run_progress_hooks() > 0 => cond(),
        _ => false,
    }
}

/// Local-completion option of an injection (`lc_opt`).
#[derive(Debug)]
pub enum Lc<'a> {
    /// Return only once the source buffer may be reused (`GEX_EVENT_NOW`).
    Now,
    /// Local completion is tracked by the NBI AM/LC category
    /// (`GEX_EVENT_GROUP`).
    Group,
    /// Local completion may be deferred to the root event (`GEX_EVENT_DEFER`);
    /// not allowed for AMs.
    Defer,
    /// Local completion is signalled through this (leaf) event.
    Event(&'a mut Event<'static>),
}

/// How a get's initiation ended, before the call shapes it into what it
/// returns (an [`Injected`](gex_conduit::Injected) for NBI and blocking
/// forms, an [`Event`] for NB ones).
///
/// For layer authors (gex-rma, gex-vis).
#[doc(hidden)]
pub enum GetOut<'d> {
    /// Complete at return.
    Done,
    /// An `IMMEDIATE` call that did nothing.
    NoOp,
    /// Completes with this event.
    Event(Event<'d>),
}

impl<'d> GetOut<'d> {
    /// The outcome as an NBI or blocking call reports it.
    pub fn injected(self) -> gex_conduit::Injected {
        match self {
            GetOut::NoOp => gex_conduit::Injected::NoOp,
            _ => gex_conduit::Injected::Sent,
        }
    }

    /// The outcome as an NB call reports it.
    pub fn event(self) -> Event<'d> {
        match self {
            GetOut::Done => Event::INVALID,
            GetOut::NoOp => Event::NO_OP,
            GetOut::Event(e) => e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_counts_and_notifies_parent() {
        let parent = Completion::new(1, None);
        let c = Completion::new(2, Some(parent.clone()));
        assert!(!c.is_complete());
        c.done();
        assert!(!c.is_complete() && !parent.is_complete());
        c.done();
        assert!(c.is_complete() && parent.is_complete());
    }

    #[test]
    fn staged_copy_out_happens_on_completion() {
        let c = Completion::new(1, None);
        let st = Staging::new(4);
        let mut dst = [0u8; 4];
        {
            let mut ev = Event::pending_into(c.clone(), st.clone(), &mut dst);
            assert!(!ev.try_finish());
            // SAFETY: the test is the only writer of the staging buffer.
            unsafe { std::ptr::copy_nonoverlapping([1u8, 2, 3, 4].as_ptr(), st.ptr(), 4) };
            c.done();
            assert!(ev.try_finish());
            assert!(ev.is_invalid());
        }
        assert_eq!(dst, [1, 2, 3, 4]);
    }

    /// A dropped event whose staged get completed copies its data out, as
    /// a wait would (it used to be lost).
    #[test]
    fn a_dropped_complete_event_copies_its_staged_data_out() {
        let c = Completion::new(1, None);
        let st = Staging::new(3);
        let mut dst = [0u8; 3];
        {
            let ev = Event::pending_into(c.clone(), st.clone(), &mut dst);
            // SAFETY: the test is the only writer of the staging buffer.
            unsafe { std::ptr::copy_nonoverlapping([7u8, 8, 9].as_ptr(), st.ptr(), 3) };
            c.done();
            drop(ev);
        }
        assert_eq!(dst, [7, 8, 9]);
    }

    #[test]
    fn a_scatter_copy_out_fills_every_range_in_order() {
        let c = Completion::new(1, None);
        let st = Staging::new(5);
        let mut dst = [0u8; 9];
        {
            let p = dst.as_mut_ptr() as usize;
            // SAFETY: three disjoint ranges of `dst` (2 + 1 + 2 bytes, the
            // staging buffer's 5), borrowed by this block only.
            let mut ev = unsafe {
                Event::pending_scatter(
                    c.clone(),
                    st.clone(),
                    Box::new([(p + 6, 2), (p, 1), (p + 3, 2)]),
                )
            };
            // SAFETY: the test is the only writer of the staging buffer.
            unsafe { std::ptr::copy_nonoverlapping([1u8, 2, 3, 4, 5].as_ptr(), st.ptr(), 5) };
            assert!(!ev.try_finish());
            c.done();
            assert!(ev.try_finish());
        }
        assert_eq!(dst, [3, 0, 0, 4, 5, 0, 1, 2, 0]);
    }

    #[test]
    fn leaves_of_a_pending_root_are_pending() {
        let c = Completion::new(1, None);
        let root = Event::pending(c.clone());
        let mut leaves: Vec<_> = [Ec::GET, Ec::PUT, Ec::AM, Ec::RMW]
            .into_iter()
            .map(|ec| root.query_leaf(ec).unwrap())
            .collect();
        for leaf in &mut leaves {
            assert!(!leaf.is_invalid() && !leaf.try_finish());
        }
        // Local completion happens at initiation here.
        assert!(root.query_leaf(Ec::LC).unwrap().is_invalid());
        assert!(root.query_leaf(Ec::GET | Ec::PUT).is_err());
        assert!(root.query_leaf(Ec::ALL).is_err());
        c.done();
        for leaf in &mut leaves {
            assert!(leaf.try_finish());
        }
        assert!(root.query_leaf(Ec::GET).unwrap().is_invalid());
        assert!(Event::INVALID.query_leaf(Ec::PUT).unwrap().is_invalid());
        assert!(Event::NO_OP.query_leaf(Ec::PUT).is_err());
    }

    #[test]
    fn arrays_follow_some_and_all_rules() {
        let a = Completion::new(1, None);
        let b = Completion::new(1, None);
        let mut evs = [
            Event::pending(a.clone()),
            Event::INVALID,
            Event::pending(b.clone()),
        ];
        assert_eq!(Event::sweep(&mut evs), (0, 2));
        a.done();
        assert_eq!(Event::sweep(&mut evs), (1, 1));
        assert!(evs[0].is_invalid());
        b.done();
        assert_eq!(Event::sweep(&mut evs), (1, 0));
        let mut only_invalid = [Event::INVALID, Event::INVALID];
        assert_eq!(Event::sweep(&mut only_invalid), (0, 0));
        assert!(Event::check_all("x", &[Event::NO_OP]).is_err());
    }
}
