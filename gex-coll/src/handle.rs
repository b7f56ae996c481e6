//! Collective handles (the design notes' `gasnet_all_handle_t`): what every
//! non-blocking collective returns.
//!
//! A [`CollHandle`] is a handle on this member's part of one collective.
//! Unlike a `gex_core::Event` it is `Send`: the notes make collective
//! handles per process, not per thread, so any thread may test or wait on
//! it (one at a time: syncing takes `&mut self` or `self`). Everything it
//! needs to complete is reachable from the handle itself, never from the
//! initiating thread's state:
//!
//! - an operation over Active Messages completes through its shared
//!   completion record, advanced by the handlers (whichever thread polls)
//!   and the layer's progress hook (whichever thread runs it);
//! - a shared-memory barrier completes once an acquire load has seen every
//!   member's counter at its episode; the handle carries the team's channel
//!   and the episode and looks itself.
//!
//! Output that arrives in parts lands in a library-owned staging buffer
//! and is copied into the caller's `dst` by the thread that observes
//! completion, which holds the handle and so the borrow of `dst`.
//!
//! Handles are plain values: there is no table of outstanding handles and
//! no limit on how many may be outstanding besides memory (the notes ask
//! for at least 2^16 - 1; test-coll keeps that many in flight).
//!
//! Dropping a handle whose output is still to be copied waits for it (as
//! dropping an event does); outside a restricted context only. Dropping
//! any other pending handle returns at once: the operation completes in
//! the background (its inputs were copied at initiation).
//!
//! Layer: handles. Uses the engine, the team registry and the shared
//! area's wait; it reaches the mechanisms only through [`Mechanism`].

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use gex_core::{context, Completion, Runtime, Staging};
use gex_types::Result;

use crate::engine::{Key, Op};
use crate::team::TeamInfo;

/// The one interface between a handle and the mechanism that runs its
/// operation: the handle names no mechanism, it holds one of these (or
/// asks the ones registered with [`set_mechanisms`]). Each mechanism
/// implements what its handles need; the defaults say "nothing to do".
pub(crate) trait Mechanism: Send + Sync {
    /// Advances this rank's queued work of the mechanism (the stages of
    /// shared-memory and hierarchical operations); how many steps it made.
    /// Run by a test of a shared-memory operation's handle (`poke`).
    fn progress(&self) -> usize {
        0
    }

    /// Whether the operation at episode `k` completed on every member,
    /// advancing `*from` past the members seen to have arrived (a
    /// shared-memory barrier's handle looks itself).
    fn arrived(&self, k: u64, from: &mut usize) -> bool {
        let _ = (k, from);
        true
    }

    /// Enters the closing barrier of `OUT_ALLSYNC` over `t` under `key`
    /// (reserved at initiation); the operation completes with it.
    fn enter_barrier(&self, t: &TeamInfo, key: Key) -> Arc<Op> {
        let _ = (t, key);
        unreachable!("this mechanism has no closing barrier")
    }
}

/// The mechanisms whose queued work a test of a poked handle advances
/// (shared-memory data, small data, hierarchy), set at client init.
static MECHANISMS: OnceLock<&'static [&'static dyn Mechanism]> = OnceLock::new();

/// Registers the mechanisms a poked handle advances (at client init, by
/// `crate::register_with`; later calls keep the first set).
pub(crate) fn set_mechanisms(m: &'static [&'static dyn Mechanism]) {
    let _ = MECHANISMS.set(m);
}

/// The registered mechanisms' progress (see [`Mechanism::progress`]).
fn progress_mechanisms() -> usize {
    MECHANISMS
        .get()
        .map_or(0, |ms| ms.iter().map(|m| m.progress()).sum())
}

/// The closing barrier of `OUT_ALLSYNC`: the team, the key reserved at
/// initiation, and the mechanism that enters it.
pub(crate) type Then = (Arc<TeamInfo>, Key, &'static dyn Mechanism);

/// Enters the closing barrier `then` describes.
fn enter(then: &Then) -> Arc<Op> {
    then.2.enter_barrier(&then.0, then.1)
}

/// What a completed operation reports: `Some` error if it failed.
pub(crate) type Verdict = Arc<dyn Fn() -> Option<gex_types::Error> + Send + Sync>;

/// What finishes a [`CollHandle::combine`] handle: `f(buf, dst)`, run
/// once by the thread that observes the inner operation's completion.
pub(crate) type Finish = Box<dyn FnOnce(&mut [u8], &mut [u8]) + Send>;

/// Output staged by the library, copied into the caller's buffer at
/// completion.
struct CopyOut {
    /// `None`: the output was written in place, by the writers of a
    /// blocking call (`crate::shm::data`'s "Output"); nothing to copy, but
    /// the handle must still not end its borrow before completion.
    staging: Option<Arc<Staging>>,
    /// (offset in `staging`, destination, length): one part for the
    /// plain calls, one per image for the multi-address ones.
    parts: Vec<(usize, *mut u8, usize)>,
}

enum State {
    Invalid,
    /// Complete when `c` is; then `copy` (if any) goes to its destination,
    /// and with `then` (`OUT_ALLSYNC`: the team and the key reserved at
    /// initiation) this member enters the closing barrier.
    Pending {
        c: Arc<Completion>,
        copy: Option<CopyOut>,
        then: Option<Then>,
        /// A shared-memory data collective: a test advances this rank's
        /// queues of them first (`crate::shm::data::progress`,
        /// `crate::shm::small::progress`).
        poke: bool,
        /// Asked once complete: an error a partner reported (all_put /
        /// all_get), which the sync returns.
        verdict: Option<Verdict>,
    },
    /// Complete, with an error for the sync to return.
    Failed(gex_types::Error),
    /// `OUT_ALLSYNC`'s closing barrier, entered: complete with it.
    OutBarrier {
        op: Arc<Op>,
    },
    /// A collective whose data moves as another (`inner`, writing into
    /// the library-owned `buf`), finished by `finish(buf, dst)` once
    /// that completes (a reduction of elements larger than a slot,
    /// gathered and combined: `crate::coll`); then, with `then`, the
    /// `OUT_ALLSYNC` barrier as for `Pending`.
    Combine {
        /// Declared before `buf`: dropped first (its drop may wait for
        /// writes into `buf`).
        inner: Box<CollHandle<'static>>,
        buf: Arc<Staging>,
        finish: Option<Finish>,
        /// The caller's output (borrowed for the handle's `'a`).
        dst: (*mut u8, usize),
        then: Option<Then>,
    },
    /// A shared-memory barrier: complete once every member's counter has
    /// reached episode `k` (those before `from` have, already).
    ShmBarrier {
        team: Arc<dyn Mechanism>,
        k: u64,
        from: usize,
    },
}

/// A handle on a non-blocking collective (see the module documentation):
/// `Send`, synced with [`CollHandle::test`], [`CollHandle::wait`] and the
/// slice forms [`CollHandle::test_some`], [`CollHandle::wait_some`],
/// [`CollHandle::test_all`], [`CollHandle::wait_all`]; also a
/// [`Future`]. It borrows the call's output buffer for `'a`.
#[must_use = "a collective handle must be tested or waited on"]
pub struct CollHandle<'a> {
    state: State,
    _borrow: PhantomData<&'a mut [u8]>,
}

// SAFETY: the only fields that are not `Send` by themselves are
// `CopyOut::parts` and `State::Combine::dst`, the starts of the caller's
// output buffers, which the handle borrows
// exclusively for `'a` (`PhantomData<&'a mut [u8]>`, itself `Send`).
// Moving the handle to another thread moves that exclusive borrow with it,
// as moving a `&'a mut [u8]` would; the copy into it is made only by the
// thread holding the handle, after the completion's acquire load says every
// writer of the staging buffer is done. Everything else is `Arc`s of
// `Send + Sync` types.
unsafe impl Send for CollHandle<'_> {}

impl std::fmt::Debug for CollHandle<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match &self.state {
            State::Invalid => "CollHandle(INVALID)",
            State::Pending { c, .. } if c.is_complete() => "CollHandle(complete)",
            State::Failed(_) => "CollHandle(failed)",
            _ => "CollHandle(pending)",
        })
    }
}

impl Default for CollHandle<'_> {
    fn default() -> Self {
        CollHandle::INVALID
    }
}

impl CollHandle<'static> {
    /// Pending on `c`, with no output to copy.
    pub(crate) fn pending(c: Arc<Completion>) -> Self {
        CollHandle {
            state: State::Pending {
                c,
                copy: None,
                then: None,
                poke: false,
                verdict: None,
            },
            _borrow: PhantomData,
        }
    }

    /// A shared-memory barrier entered at episode `k`, not complete at
    /// entry (members before `from` had arrived).
    pub(crate) fn shm_barrier(team: Arc<dyn Mechanism>, k: u64, from: usize) -> Self {
        CollHandle {
            state: State::ShmBarrier { team, k, from },
            _borrow: PhantomData,
        }
    }
}

impl<'a> CollHandle<'a> {
    /// The handle of a collective complete at initiation (the notes'
    /// `GASNET_ALL_INVALID_HANDLE`).
    pub const INVALID: CollHandle<'a> = CollHandle {
        state: State::Invalid,
        _borrow: PhantomData,
    };

    /// Pending on `c`; at completion `staging` is copied into `dst`.
    pub(crate) fn pending_into(
        c: Arc<Completion>,
        staging: Arc<Staging>,
        dst: &'a mut [u8],
    ) -> Self {
        assert_eq!(staging.len(), dst.len(), "staging and dst differ in length");
        CollHandle {
            state: State::Pending {
                c,
                copy: Some(CopyOut {
                    staging: Some(staging),
                    parts: vec![(0, dst.as_mut_ptr(), dst.len())],
                }),
                then: None,
                poke: false,
                verdict: None,
            },
            _borrow: PhantomData,
        }
    }

    /// Pending on `c`, whose writers put the output straight into `dst`
    /// (a blocking call's reader, `crate::shm::data`): nothing to copy at
    /// completion, but dropping the handle waits for it, as for staged
    /// output, since `dst` is written until then.
    pub(crate) fn pending_in_place(c: Arc<Completion>, _dst: &'a mut [u8]) -> Self {
        CollHandle {
            state: State::Pending {
                c,
                copy: Some(CopyOut {
                    staging: None,
                    parts: Vec::new(),
                }),
                then: None,
                poke: false,
                verdict: None,
            },
            _borrow: PhantomData,
        }
    }

    /// Pending on `c`; at completion each `(offset, dst)` of `parts`
    /// receives `dst.len()` bytes from `offset` of `staging` (the
    /// multi-address forms: one destination per image).
    pub(crate) fn pending_into_parts(
        c: Arc<Completion>,
        staging: Arc<Staging>,
        parts: Vec<(usize, &'a mut [u8])>,
    ) -> Self {
        let parts = parts
            .into_iter()
            .map(|(off, d)| {
                assert!(
                    off.checked_add(d.len()).is_some_and(|e| e <= staging.len()),
                    "a part exceeds the staging buffer"
                );
                (off, d.as_mut_ptr(), d.len())
            })
            .collect();
        CollHandle {
            state: State::Pending {
                c,
                copy: Some(CopyOut {
                    staging: Some(staging),
                    parts,
                }),
                then: None,
                poke: false,
                verdict: None,
            },
            _borrow: PhantomData,
        }
    }

    /// The handle of a collective whose data moves as `inner`, which
    /// writes into `buf` (library-owned; `inner` borrows it as
    /// `'static`, and this handle keeps it alive for as long as `inner`
    /// lives); once `inner` completes, the thread that observes it runs
    /// `finish(buf, dst)`. `inner` carries no `OUT_ALLSYNC` barrier (add
    /// one to this handle).
    pub(crate) fn combine(
        inner: CollHandle<'static>,
        buf: Arc<Staging>,
        dst: &'a mut [u8],
        finish: Finish,
    ) -> Self {
        CollHandle {
            state: State::Combine {
                inner: Box::new(inner),
                buf,
                finish: Some(finish),
                dst: (dst.as_mut_ptr(), dst.len()),
                then: None,
            },
            _borrow: PhantomData,
        }
    }

    /// Finishes the handle if complete, without polling (the stages of
    /// the hierarchical collectives, looked at from the progress hook);
    /// whether it is. An error is fatal: a stage has no caller to
    /// report it to.
    pub(crate) fn finished(&mut self) -> bool {
        let done = self.try_finish();
        if let Err(e) = self.take_error() {
            gex_core::fatal(&format!("gex-coll: a hierarchical collective's stage: {e}"));
        }
        done
    }

    /// Whether this is the invalid handle (nothing to wait for; a handle
    /// becomes invalid once synced).
    pub fn is_invalid(&self) -> bool {
        matches!(self.state, State::Invalid)
    }

    /// Completes with the error `verdict` gives, if any, once complete.
    pub(crate) fn with_verdict(mut self, v: Verdict) -> Self {
        if let State::Pending { verdict, .. } = &mut self.state {
            *verdict = Some(v);
        }
        self
    }

    /// Takes the error of a failed operation (the handle becomes invalid).
    fn take_error(&mut self) -> Result<()> {
        if matches!(self.state, State::Failed(_)) {
            if let State::Failed(e) = std::mem::replace(&mut self.state, State::Invalid) {
                return Err(e);
            }
        }
        Ok(())
    }

    /// The first error among completed handles (each becomes invalid).
    fn take_errors(handles: &mut [CollHandle<'a>]) -> Result<()> {
        let mut first = Ok(());
        for h in handles {
            if let Err(e) = h.take_error() {
                if first.is_ok() {
                    first = Err(e);
                }
            }
        }
        first
    }

    /// Marks a shared-memory data collective's handle (see `poke`).
    pub(crate) fn shm_poke(mut self) -> Self {
        if let State::Pending { poke, .. } = &mut self.state {
            *poke = true;
        }
        self
    }

    /// `OUT_ALLSYNC`: once this member's part is done (and its output in
    /// place), it enters a barrier over `t` under `key` (reserved at
    /// initiation), and the handle completes with that barrier. Enters at
    /// once if the part is done already.
    pub(crate) fn then_out_barrier(mut self, out: Then) -> Self {
        match &mut self.state {
            State::Pending { then, .. } | State::Combine { then, .. } => *then = Some(out),
            State::Invalid => self.state = State::OutBarrier { op: enter(&out) },
            State::ShmBarrier { .. } | State::OutBarrier { .. } | State::Failed(_) => {
                unreachable!("a barrier has no OUT_ALLSYNC")
            }
        }
        self
    }

    /// If complete, finishes (copies staged output out, enters the
    /// `OUT_ALLSYNC` barrier) and becomes invalid; returns whether it is
    /// complete.
    fn try_finish(&mut self) -> bool {
        match &mut self.state {
            State::Invalid | State::Failed(_) => return true,
            State::Pending { c, poke, .. } => {
                let done =
                    c.is_complete() || (*poke && progress_mechanisms() > 0 && c.is_complete());
                if !done {
                    return false;
                }
            }
            State::Combine {
                inner,
                buf,
                finish,
                dst,
                then,
            } => {
                if !inner.try_finish() {
                    return false;
                }
                let then = then.take();
                if let Err(e) = inner.take_error() {
                    if let Some(then) = then {
                        let _ = enter(&then);
                    }
                    self.state = State::Failed(e);
                    return true;
                }
                if let Some(f) = finish.take() {
                    // SAFETY: `inner` completed (its writers into `buf`
                    // are done, its staged output copied with the
                    // completion's acquire), so nothing else accesses
                    // `buf`, which this state keeps alive; `dst` is the
                    // caller's buffer of that length, exclusively
                    // borrowed for 'a, which this handle carries, and
                    // distinct from `buf` (library-owned).
                    let (b, d) = unsafe {
                        (
                            std::slice::from_raw_parts_mut(buf.ptr(), buf.len()),
                            std::slice::from_raw_parts_mut(dst.0, dst.1),
                        )
                    };
                    f(b, d);
                }
                self.state = State::Invalid;
                if let Some(then) = then {
                    let op = enter(&then);
                    if !op.is_complete() {
                        self.state = State::OutBarrier { op };
                        return false;
                    }
                }
                return true;
            }
            State::ShmBarrier { team, k, from } => {
                if !team.arrived(*k, from) {
                    return false;
                }
            }
            State::OutBarrier { op } => {
                if !op.is_complete() {
                    return false;
                }
            }
        }
        if let State::Pending {
            copy,
            then,
            verdict,
            ..
        } = std::mem::replace(&mut self.state, State::Invalid)
        {
            if let Some(CopyOut {
                staging: Some(staging),
                parts,
            }) = copy
            {
                for (off, dst, len) in parts {
                    // SAFETY: the completion count reached zero with
                    // acquire ordering, so every part of the staging buffer
                    // was written and no writer remains; `dst` is valid for
                    // `len` bytes and exclusively borrowed for 'a, which
                    // this handle carries (the parts are distinct caller
                    // slices, so they do not overlap); `[off, off + len)`
                    // lies in the staging buffer (checked when built).
                    unsafe { std::ptr::copy_nonoverlapping(staging.ptr().add(off), dst, len) };
                }
            }
            if let Some(e) = verdict.and_then(|v| v()) {
                // The closing barrier is entered all the same: the other
                // members' syncs wait for it.
                if let Some(then) = then {
                    let _ = enter(&then);
                }
                self.state = State::Failed(e);
                return true;
            }
            if let Some(then) = then {
                let op = enter(&then);
                if !op.is_complete() {
                    self.state = State::OutBarrier { op };
                    return false;
                }
            }
        }
        true
    }

    /// Whether the collective completed on this member (the notes'
    /// `gasnet_all_try_sync`); on success the handle becomes invalid and
    /// the output is in place. If not complete, polls once (handlers and
    /// the layers' progress hooks) and looks again. From any thread
    /// outside handler context.
    pub fn test(&mut self) -> Result<bool> {
        context::check_may_communicate("gex_coll try_sync")?;
        if self.try_finish() {
            self.take_error()?;
            return Ok(true);
        }
        if let Some(rt) = Runtime::get() {
            rt.progress();
        }
        let done = self.try_finish();
        self.take_error()?;
        Ok(done)
    }

    /// Polls until the collective completed on this member (the notes'
    /// `gasnet_all_wait_sync`); the output is then in place. From any
    /// thread outside handler context.
    pub fn wait(mut self) -> Result<()> {
        context::check_may_communicate("gex_coll wait_sync")?;
        if self.is_invalid() {
            // Nothing to drop either (the drop glue would still run).
            std::mem::forget(self);
            return Ok(());
        }
        if !self.try_finish() {
            let rt = Runtime::require("gex_coll wait_sync")?;
            if self.poked() {
                // Waiting for shared memory (a local stage, perhaps a
                // hierarchical operation's step that another member of
                // this host must run): paced as the shared-memory waits
                // are, yielding the core soon (a pretend host's layout
                // may not say that the machine is oversubscribed, and
                // spinning 2000 polls per wait made the hierarchical
                // reductions 10-30 times slower).
                crate::area::wait_until(rt, || self.try_finish());
            } else {
                rt.spin_until(|| self.try_finish());
            }
        }
        self.take_error()
    }

    /// Whether this is a shared-memory data collective's handle (`poke`).
    fn poked(&self) -> bool {
        match &self.state {
            State::Pending { poke, .. } => *poke,
            State::Combine { inner, .. } => inner.poked(),
            _ => false,
        }
    }

    /// Completes handles in order until one completes (returns true) or
    /// none is left to look at (false); `pending` says whether any handle
    /// looked at is still pending. Stopping at the first completion keeps
    /// a test of many handles cheap: looking at a pending handle may run
    /// the shared-memory collectives' progress, and a full pass over 2^16
    /// handles per poll made waiting on them quadratic.
    /// A handle that completed with an error gives it to `err` (and
    /// becomes invalid).
    fn complete_one(
        handles: &mut [CollHandle<'a>],
        pending: &mut bool,
        err: &mut Option<gex_types::Error>,
    ) -> bool {
        for h in handles.iter_mut() {
            if h.is_invalid() {
                continue;
            }
            if h.try_finish() {
                if let Err(e) = h.take_error() {
                    err.get_or_insert(e);
                }
                return true;
            }
            *pending = true;
        }
        false
    }

    /// Completes handles in order up to the first that is still pending;
    /// returns whether every handle is complete (invalid, or failed: a
    /// failed handle stays valid until the caller takes the errors). Collectives
    /// complete roughly in the order they were initiated, so stopping at
    /// the first pending one costs little and keeps a test of many
    /// handles linear in what completed, not in what is outstanding.
    fn complete_prefix(handles: &mut [CollHandle<'a>]) -> bool {
        handles.iter_mut().all(|h| h.try_finish())
    }

    /// The notes' `gasnet_all_try_sync_some`: true if at least one handle
    /// completed (it becomes invalid; others that completed may stay valid
    /// until the next call) or every entry is invalid. Polls once if
    /// nothing completed.
    pub fn test_some(handles: &mut [CollHandle<'a>]) -> Result<bool> {
        context::check_may_communicate("gex_coll try_sync_some")?;
        let (mut pending, mut err) = (false, None);
        if Self::complete_one(handles, &mut pending, &mut err) || !pending {
            return err.map_or(Ok(true), Err);
        }
        if let Some(rt) = Runtime::get() {
            rt.progress();
        }
        let done = Self::complete_one(handles, &mut pending, &mut err);
        err.map_or(Ok(done), Err)
    }

    /// The notes' `gasnet_all_wait_sync_some`: polls until
    /// [`CollHandle::test_some`] would succeed.
    pub fn wait_some(handles: &mut [CollHandle<'a>]) -> Result<()> {
        context::check_may_communicate("gex_coll wait_sync_some")?;
        let (mut pending, mut err) = (false, None);
        if !Self::complete_one(handles, &mut pending, &mut err) && pending {
            let rt = Runtime::require("gex_coll wait_sync_some")?;
            rt.spin_until(|| {
                let mut pending = false;
                Self::complete_one(handles, &mut pending, &mut err) || !pending
            });
        }
        err.map_or(Ok(()), Err)
    }

    /// The notes' `gasnet_all_try_sync_all`: true if every handle completed
    /// (they are all invalid then). Handles are completed in order up to
    /// the first pending one, so on false some completed handles may still
    /// be valid (a later call completes them). Polls once if some handle
    /// is pending.
    pub fn test_all(handles: &mut [CollHandle<'a>]) -> Result<bool> {
        context::check_may_communicate("gex_coll try_sync_all")?;
        if Self::complete_prefix(handles) {
            // A handle that failed stays valid (and complete) until now.
            Self::take_errors(handles)?;
            return Ok(true);
        }
        if let Some(rt) = Runtime::get() {
            rt.progress();
        }
        let done = Self::complete_prefix(handles);
        if done {
            Self::take_errors(handles)?;
        }
        Ok(done)
    }

    /// The notes' `gasnet_all_wait_sync_all`: polls until every handle
    /// completed.
    pub fn wait_all(handles: &mut [CollHandle<'a>]) -> Result<()> {
        context::check_may_communicate("gex_coll wait_sync_all")?;
        if !Self::complete_prefix(handles) {
            let rt = Runtime::require("gex_coll wait_sync_all")?;
            if handles.iter().any(CollHandle::poked) {
                // As in `wait`.
                crate::area::wait_until(rt, || Self::complete_prefix(handles));
            } else {
                rt.spin_until(|| Self::complete_prefix(handles));
            }
        }
        Self::take_errors(handles)
    }
}

impl Drop for CollHandle<'_> {
    #[inline]
    fn drop(&mut self) {
        // Otherwise nothing borrowed is written after initiation, and an
        // entered barrier advances in the handlers: the operation
        // finishes in the background.
        if matches!(self.state, State::Pending { .. } | State::Combine { .. }) {
            self.drop_pending();
        }
    }
}

impl CollHandle<'_> {
    /// [`Drop`] of a pending or combining handle.
    fn drop_pending(&mut self) {
        if matches!(self.state, State::Combine { .. }) {
            // As below: the output must reach `dst` before the borrow
            // ends, and an `OUT_ALLSYNC` member must enter its barrier.
            // In restricted context nothing is waited for: `dst` is not
            // written after this (the inner handle's drop decides about
            // `buf`).
            if context::may_communicate() {
                if let Some(rt) = Runtime::get() {
                    rt.spin_until(|| {
                        self.try_finish() || matches!(self.state, State::OutBarrier { .. })
                    });
                }
            }
            return;
        }
        let State::Pending { c, copy, then, .. } = &self.state else {
            return;
        };
        if copy.is_none() && then.is_none() {
            return;
        }
        // The output must reach its destination (the borrow ends here),
        // and an `OUT_ALLSYNC` member must enter the closing barrier, or
        // the others' syncs would never succeed.
        if !c.is_complete() {
            // Polling is not allowed in restricted context: there the
            // staged output is dropped with the handle (nothing writes the
            // borrowed buffer after this).
            if !context::may_communicate() {
                if copy.as_ref().is_some_and(|cp| cp.staging.is_none()) {
                    // Only blocking calls write in place, and they never
                    // run in restricted context: unreachable, but the
                    // borrow must not end while the output is written.
                    gex_core::fatal(
                        "gex-coll: a collective writing in place was dropped in restricted context",
                    );
                }
                return;
            }
            if let Some(rt) = Runtime::get() {
                let c = c.clone();
                rt.spin_until(|| c.is_complete());
            }
        }
        self.try_finish();
    }
}

impl Future for CollHandle<'_> {
    type Output = Result<()>;

    /// Each poll makes progress once; until the collective completes it
    /// asks to be polled again at once (no interrupt wakes it).
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        let this = self.get_mut();
        match this.test() {
            Ok(true) => Poll::Ready(Ok(())),
            Ok(false) => {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}
