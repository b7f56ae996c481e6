//! A simulated NIC: a conduit wrapper that performs remote atomics itself,
//! as an RDMA adapter does, so that the remote-atomics layer's conduit
//! mechanism (`Conduit::atomics`, `Mechanism::Conduit`) runs end to end on
//! a machine without one. A test double, not a transport.
//!
//! [`SimNicFactory`] wraps the factory of a real conduit (smp, whose
//! segments are all mapped into every process). The wrapper:
//!
//! - says every rank is alone in its neighbourhood and hides the other
//!   ranks' mappings from the layers above, so that nothing reaches another
//!   rank's segment directly: remote atomics go through the NIC (or, for a
//!   domain the NIC does not cover, through Active Messages);
//! - offers an [`AtomicCapability`] for every type and every operation
//!   except MULT/FMULT (so that a domain with them must fall back to CPU
//!   atomics, as the coherence rule wants), to every rank, this one too;
//! - queues each operation it is given (at most `depth`) and performs it
//!   later, when the rank polls, with its own arithmetic (the model of
//!   [`crate::model`], in a compare-and-swap loop on the target word), then
//!   writes the fetched value and completes: completion is asynchronous, as
//!   a NIC's is. A full queue refuses an `IMMEDIATE` operation (touching
//!   nothing) and otherwise drains first;
//! - refuses `IMMEDIATE` Active Messages while told it is congested
//!   ([`NicControl::set_congested`]), so that the IMMEDIATE no-op of the
//!   Active Message route can be tested deterministically;
//! - counts what it did in the conduit's statistics (`simnic_*`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use gex::{AmCategory, Dt, Error, Op, Rank, Result};
use gex_core::bootstrap::Bootstrap;
use gex_core::conduit::stats::{ConduitStats, Counter};
use gex_core::conduit::{
    AmLimits, AmSink, AtomicCapability, Conduit, ConduitFactory, GetDest, Injected, Layout,
    OpCompletion, OutgoingAm, PollScope, RmaCapability, SegmentDesc,
};

use crate::model::apply_bits;

/// What a test sees of the simulated NIC and may change while it runs.
#[derive(Debug, Default)]
pub struct NicControl {
    congested: AtomicBool,
    started: AtomicU64,
    executed: AtomicU64,
    refused: AtomicU64,
    am_refused: AtomicU64,
}

impl NicControl {
    /// While `on`, `IMMEDIATE` Active Messages find no room.
    pub fn set_congested(&self, on: bool) {
        self.congested.store(on, Ordering::SeqCst);
    }

    /// Atomics accepted so far.
    pub fn started(&self) -> u64 {
        self.started.load(Ordering::SeqCst)
    }

    /// Atomics performed and completed so far.
    pub fn executed(&self) -> u64 {
        self.executed.load(Ordering::SeqCst)
    }

    /// `IMMEDIATE` atomics refused for a full queue.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::SeqCst)
    }

    /// `IMMEDIATE` Active Messages refused while congested.
    pub fn am_refused(&self) -> u64 {
        self.am_refused.load(Ordering::SeqCst)
    }
}

/// Makes the wrapper over the conduit another factory makes.
pub struct SimNicFactory {
    inner: Box<dyn ConduitFactory>,
    depth: usize,
    ctl: Arc<NicControl>,
}

impl SimNicFactory {
    /// A NIC over `inner`'s conduit with a queue of `depth` operations;
    /// its control handle.
    pub fn new(inner: Box<dyn ConduitFactory>, depth: usize) -> (SimNicFactory, Arc<NicControl>) {
        let ctl = Arc::new(NicControl::default());
        let f = SimNicFactory {
            inner,
            depth: depth.max(1),
            ctl: ctl.clone(),
        };
        (f, ctl)
    }
}

impl ConduitFactory for SimNicFactory {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn create(&self, boot: Bootstrap) -> Result<Box<dyn Conduit>> {
        let inner = self.inner.create(boot)?;
        let me = inner.bootstrap().rank();
        let size = inner.bootstrap().size();
        let l = inner.layout();
        let layout = Layout::new(vec![me], l.host.clone(), (size, me), l.host_set);
        Ok(Box::new(SimNic {
            inner,
            layout,
            me,
            segments: OnceLock::new(),
            queue: Mutex::new(VecDeque::new()),
            depth: self.depth,
            ctl: self.ctl.clone(),
        }))
    }
}

/// An operation the NIC accepted and has not performed yet.
struct Queued {
    /// The target word in this process's mapping of the peer's segment.
    at: usize,
    dt: Dt,
    op: Op,
    operands: [u64; 2],
    result: Option<GetDest>,
    done: Arc<dyn OpCompletion>,
}

struct SimNic {
    inner: Box<dyn Conduit>,
    layout: Layout,
    me: Rank,
    /// Every rank's segment as mapped here: (local base, size), once
    /// attached.
    segments: OnceLock<Vec<Option<(usize, usize)>>>,
    queue: Mutex<VecDeque<Queued>>,
    depth: usize,
    ctl: Arc<NicControl>,
}

impl SimNic {
    /// Performs every queued operation; how many.
    fn drain(&self) -> usize {
        let work: Vec<Queued> = {
            let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            q.drain(..).collect()
        };
        let n = work.len();
        for q in work {
            let old = execute(q.at, q.dt, q.op, q.operands);
            if let Some(mut r) = q.result {
                let size = r.len();
                r.fill(&old.to_le_bytes()[..size]);
            }
            self.ctl.executed.fetch_add(1, Ordering::SeqCst);
            q.done.complete();
        }
        n
    }

    /// Where `[offset, +len)` of `peer`'s segment is mapped here, checked
    /// as a NIC checks a remote key's bounds.
    fn locate(&self, peer: Rank, offset: usize, len: usize) -> Result<usize> {
        let seg = self
            .segments
            .get()
            .and_then(|t| t.get(peer as usize).copied().flatten());
        let Some((base, size)) = seg else {
            return Err(Error::bad_arg(format!(
                "simnic: rank {peer}'s segment is not registered with the NIC"
            )));
        };
        if offset > size || len > size - offset || !offset.is_multiple_of(len) {
            return Err(Error::bad_arg(format!(
                "simnic: remote access error: [{offset:#x}, +{len}) in rank {peer}'s segment of {size} bytes"
            )));
        }
        Ok(base + offset)
    }
}

/// The NIC's arithmetic unit: `op` on the `dt` word at `at`, in a
/// compare-and-swap loop; the bits it held before.
fn execute(at: usize, dt: Dt, op: Op, operands: [u64; 2]) -> u64 {
    match dt.size() {
        Some(4) => {
            // SAFETY: `at` lies in a mapped segment, 4-byte aligned and
            // inside it (checked by `locate` when the operation was
            // accepted); segments stay mapped while the job runs, and
            // every access to the word by this domain is atomic.
            let a = unsafe { &*(at as *const AtomicU32) };
            let mut cur = a.load(Ordering::SeqCst);
            loop {
                let new = apply_bits(dt, op, u64::from(cur), operands) as u32;
                match a.compare_exchange_weak(cur, new, Ordering::SeqCst, Ordering::SeqCst) {
                    Ok(_) => return u64::from(cur),
                    Err(now) => cur = now,
                }
            }
        }
        _ => {
            // SAFETY: as above, for an 8-byte aligned word.
            let a = unsafe { &*(at as *const AtomicU64) };
            let mut cur = a.load(Ordering::SeqCst);
            loop {
                let new = apply_bits(dt, op, cur, operands);
                match a.compare_exchange_weak(cur, new, Ordering::SeqCst, Ordering::SeqCst) {
                    Ok(_) => return cur,
                    Err(now) => cur = now,
                }
            }
        }
    }
}

impl AtomicCapability for SimNic {
    fn reaches(&self, peer: Rank) -> bool {
        self.segments
            .get()
            .is_some_and(|t| t.get(peer as usize).copied().flatten().is_some())
    }

    fn supports(&self, dt: Dt, op: Op) -> bool {
        dt.size().is_some() && !matches!(op, Op::Mult | Op::Fmult)
    }

    fn start(
        &self,
        peer: Rank,
        offset: usize,
        dt: Dt,
        op: Op,
        operands: [u64; 2],
        result: Option<GetDest>,
        done: Arc<dyn OpCompletion>,
        immediate: bool,
        _sink: &dyn AmSink,
    ) -> Result<Injected> {
        if !self.supports(dt, op) {
            return Err(Error::bad_arg(format!(
                "simnic: {} on {} is not supported",
                op.name(),
                dt.name()
            )));
        }
        let n = dt.size().expect("checked");
        let at = self.locate(peer, offset, n)?;
        if result.as_ref().is_some_and(|r| r.len() != n) {
            return Err(Error::bad_arg("simnic: the result is not one value"));
        }
        loop {
            {
                let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                if q.len() < self.depth {
                    q.push_back(Queued {
                        at,
                        dt,
                        op,
                        operands,
                        result,
                        done,
                    });
                    self.ctl.started.fetch_add(1, Ordering::SeqCst);
                    return Ok(Injected::Sent);
                }
            }
            if immediate {
                self.ctl.refused.fetch_add(1, Ordering::SeqCst);
                return Ok(Injected::NoOp);
            }
            self.drain();
        }
    }
}

impl Conduit for SimNic {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn bootstrap(&self) -> &Bootstrap {
        self.inner.bootstrap()
    }

    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn am_limits(&self, peer: Rank) -> AmLimits {
        self.inner.am_limits(peer)
    }

    fn am_lub_limits(&self) -> AmLimits {
        self.inner.am_lub_limits()
    }

    fn am_send(
        &self,
        dest: Rank,
        msg: &OutgoingAm<'_>,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected> {
        if immediate && self.ctl.congested.load(Ordering::SeqCst) {
            self.ctl.am_refused.fetch_add(1, Ordering::SeqCst);
            return Ok(Injected::NoOp);
        }
        self.inner.am_send(dest, msg, immediate, sink)
    }

    fn am_can_send(
        &self,
        dest: Rank,
        is_request: bool,
        category: AmCategory,
        nargs: usize,
        len: usize,
    ) -> bool {
        !self.ctl.congested.load(Ordering::SeqCst)
            && self
                .inner
                .am_can_send(dest, is_request, category, nargs, len)
    }

    fn poll(&self, sink: &dyn AmSink, scope: PollScope) -> usize {
        self.drain() + self.inner.poll(sink, scope)
    }

    fn max_segment_size(&self) -> usize {
        self.inner.max_segment_size()
    }

    fn attach_segment(&self, size: usize, sink: &dyn AmSink) -> Result<Vec<SegmentDesc>> {
        let mut table = self.inner.attach_segment(size, sink)?;
        let mapped = table
            .iter()
            .map(|d| d.local_base.filter(|_| d.size > 0).map(|b| (b, d.size)))
            .collect();
        let _ = self.segments.set(mapped);
        // The layers above see only their own segment mapped.
        for (r, d) in table.iter_mut().enumerate() {
            if r != self.me as usize {
                d.local_base = None;
            }
        }
        Ok(table)
    }

    fn rma(&self) -> Option<&dyn RmaCapability> {
        self.inner.rma()
    }

    fn atomics(&self) -> Option<&dyn AtomicCapability> {
        Some(self)
    }

    fn core_shared_with_spinner(&self) -> bool {
        self.inner.core_shared_with_spinner()
    }

    fn stats(&self) -> ConduitStats {
        let mut st = self.inner.stats();
        for (name, v) in [
            ("simnic_started", self.ctl.started()),
            ("simnic_executed", self.ctl.executed()),
            ("simnic_refused", self.ctl.refused()),
            ("simnic_am_refused", self.ctl.am_refused()),
        ] {
            st.counters.push(Counter::new(name, v));
        }
        st
    }
}
