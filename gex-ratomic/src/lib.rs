//! gex-ratomic: remote atomics (GASNet-EX `gasnet_ratomic.h`).
//!
//! An [`AtomicDomain`] (`gex_AD_t`) is created collectively over a team
//! for one data type and a set of operations ([`AtomicDomain::create`]);
//! its operations ([`AtomicDomain::op_nb`], [`AtomicDomain::op_nbi`],
//! [`AtomicDomain::op_blocking`]) are one generic entry over the six types
//! of [`AdType`] (`i32`, `u32`, `i64`, `u64`, `f32`, `f64`), the typed C
//! calls `gex_AD_OpNB_U64` ... in one.
//!
//! # Mechanisms
//!
//! Every operation of one domain acts on a word through one mechanism, so
//! that a CPU atomic and a transport's atomic never race on it. Create
//! chooses ([`Mechanism`], [`AtomicDomain::mechanism`]):
//!
//! - [`Mechanism::Cpu`]: CPU atomics on the target's memory. A target whose
//!   segment is mapped into this process (this rank, its neighbourhood) is
//!   operated on directly, inlined into the caller: a flag test, a rank
//!   translation, one bounds-and-alignment check against the fast segment
//!   table, the atomic instruction. Any other target gets an Active Message
//!   that the target executes with the same CPU atomics on its own segment
//!   ([`ampath`]), so the two routes are coherent and may serve one word
//!   at once; or, where the conduit's atomics are performed by the
//!   target's CPU in the conduit's protocol
//!   (`gex_conduit::AtomicCapability::cpu_coherent`: the udp conduit's
//!   ATOMIC messages) and support the operation, the same operation
//!   travels as one such message each way, with no AM handler at either
//!   end (faster than the Active Message; `GEX_RMA_FORCE_AM=1` keeps the
//!   Active Message route).
//! - [`Mechanism::Conduit`]: the conduit's own atomics
//!   (`gex_conduit::AtomicCapability`) for every target, this rank's too;
//!   chosen only when, on every member, the conduit reaches every member and
//!   supports every operation of the domain on its type, and the domain
//!   does not favour local targets. The ibv conduit offers NIC
//!   fetch-add and compare-swap for I64/U64; a test double
//!   (`gex_testsuite::simnic`) exercises the mechanism on smp too.
//!
//! `GEX_RMA_FORCE_AM=1` (or `gex_rma::set_force_am`), which turns direct
//! access to mapped segments off, sends CPU-mechanism operations through
//! Active Messages too (how the tests exercise that route on smp).
//!
//! # Completion
//!
//! Direct operations complete at initiation: NB calls return
//! `Event::INVALID` with the fetched value already written, NBI calls track
//! nothing. On the Active Message route an NB call's event carries the
//! fetched value in a staging buffer and writes it through the borrowed
//! result when a test or wait sees completion; an NBI operation counts
//! under `Ec::PUT` (SET), `Ec::GET` (GET) or `Ec::RMW` (the others), or in
//! the open access region, except that a fetching NBI operation waits
//! before returning, since the borrow of its result ends with the call.
//!
//! # For layer and conduit authors
//!
//! [`register`] is the layer's set-up at init and [`ampath`] its Active
//! Message protocol; the `gex` facade exports the program's calls
//! (`gex::ratomic`).
//!
//!
//! # Routes
//!
//! | team, flags | conduit's atomics | mechanism | route per target |
//! | --- | --- | --- | --- |
//! | all members in this neighbourhood, or `AD_FAVOR_MY_RANK` / `AD_FAVOR_MY_NBRHD` | any | CPU | direct if mapped here, else as in the last row |
//! | members in other neighbourhoods, no hint or `AD_FAVOR_REMOTE` | performed by the transport (`cpu_coherent` false), reaching every member and supporting every (type, op), on every member | conduit | the conduit's atomics for every target, this rank's too |
//! | the same | none, not covering, or performed by the target's CPU (udp) | CPU | direct if mapped; else the conduit's CPU-coherent atomics where they reach and support the operation; else AM |
//!
//! *Create* is collective: it checks its arguments (a built-in type, a
//! non-empty set of operations valid for it, at most one `AD_FAVOR_*`), then
//! every member sends its single-valued arguments, and whether the
//! conduit's atomics would cover the domain from it, to the team's rank 0
//! in an Active Message; rank 0 answers every member with the verdict (a
//! member that differs is named in every member's error). Messages for a
//! creation rank 0 has not reached yet wait in a table keyed by a hash of
//! the team's members and a per-team sequence number. A domain is not
//! `Clone`, so `destroy(self)` leaves no handle; an operation of this rank
//! still in flight makes it an error that hands the domain back.
//!
//! *The direct route* is inlined: type and operation against the domain,
//! the flags against `IMMEDIATE | AD_ACQ | AD_REL | PEER_SEG_OFFSET`, a CPU
//! domain, the thread may communicate, the rank, and one comparison against
//! the fast segment table that checks range and alignment and chooses the
//! route. Then `AtomicU64::from_ptr` (or I64/U32/I32) on the mapping: the
//! hardware's fetch-and-op where there is one, a compare-exchange loop for
//! MULT, float arithmetic and MIN/MAX; SET, GET, SWAP and (F)CAS on floats
//! act on the bits (CAS "as if on integers": `-0.0` does not match `+0.0`,
//! a NaN matches itself). MIN and MAX are the spec's C expressions
//! (`op0 < op1 ? op0 : op1`). `AD_REL` is a release fence before the
//! relaxed atomic, `AD_ACQ` an acquire fence after it. Each public call
//! tests the direct route itself and returns from it with nothing built in
//! memory (pending stores must drain before a locked instruction).
//!
//! *Blocking calls over the conduit's coherent atomics* (udp) have a short
//! route tested after the direct one: at Create a CPU domain over a
//! `cpu_coherent` conduit records per team rank the jobrank and segment of
//! every member it reaches that is not mapped here (`ConduitRoute`); a
//! blocking call with the fast flags and a supported operation then
//! allocates one completion, starts the operation and waits. udp's ATOMIC
//! message is 16 bytes plus only the operands the operation takes, its
//! ATOMIC_RESULT 8 bytes plus the value (fetching operations only); the
//! 32-bit id is the slot (24 bits) and the low byte of its generation. The
//! target's shell checks range, alignment, type and opcode (anything else
//! is fatal) and performs it with `gex_conduit::atomic_ops::perform_dyn`,
//! the function the direct route and the AM handler use.
//!
//! *Everything else* takes the general route: every check with a message
//! naming what is wrong, then a direct atomic if mapped, else the conduit's
//! `AtomicCapability::start`, else the AM route: one Short request (offset,
//! type, opcode, ordering, two operands, slot, generation: 11 arguments)
//! and one Short reply (slot, generation, value). The target validates
//! codes, range and alignment before performing anything; the reply takes
//! its operation out of the slot table before writing the value, so an
//! unknown, stale, repeated or misdirected reply is fatal. On the conduit
//! route `AD_REL` is a release fence before the start; `AD_ACQ` needs
//! nothing more, since completion is seen through an acquire load.
//! Blocking and fetching NBI operations are not counted in flight.
//!
//! *The test double.* `gex_testsuite::simnic` wraps the smp conduit, tells
//! every rank it is alone in its neighbourhood, hides mappings, and offers
//! an `AtomicCapability` for every (type, op) but MULT, performed when the
//! rank polls; a full queue refuses `IMMEDIATE`. `test-ratomic` with
//! `GEX_TEST_SIMNIC=1` runs through it and checks the choice table.

#![warn(missing_docs)]

pub mod ampath;
use gex_conduit::atomic_ops as ops;

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

pub use gex_conduit::Injected;
pub use gex_core::{Event, Tm};
pub use ops::AdType;

use gex_conduit::{GetDest, ZeroLen};
use gex_core::internals::*;
use gex_core::{context, nbi, segment_desc, CData, Completion, Ep, Runtime, Staging, TmRef};
use gex_types::{Dt, Ec, Error, Flags, Op, Ops, Rank, Result, RANK_INVALID};

use ampath::ResultDst;

/// The layer's set-up on every rank at client init: registers its Active
/// Message handlers (the facade passes it to `Client::init_with_layers`).
pub fn register(ep: &Ep) -> Result<()> {
    ampath::register(ep)
}

/// How a domain's operations act on their targets (see the crate docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mechanism {
    /// CPU atomics: directly on mapped segments, else by the target on an
    /// Active Message.
    Cpu,
    /// The conduit's atomics, for every target.
    Conduit,
}

/// How one operation reaches its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// A CPU atomic through this process's mapping of the target segment.
    Direct,
    /// An Active Message the target executes with CPU atomics.
    ActiveMessages,
    /// The conduit's atomics: a NIC's for a [`Mechanism::Conduit`] domain;
    /// for a [`Mechanism::Cpu`] domain, a conduit whose protocol performs
    /// them at the target with CPU atomics (the udp conduit's one-sided
    /// ATOMIC messages, no AM handler at either end).
    Conduit,
}

/// Flags `gex_AD_Create` accepts: at most one of the FAVOR hints.
const CREATE_FLAGS: Flags = Flags::AD_FAVOR_MY_RANK
    .union(Flags::AD_FAVOR_MY_NBRHD)
    .union(Flags::AD_FAVOR_REMOTE);

/// Flags `gex_AD_Op*` accepts.
const OP_FLAGS: Flags = Flags::IMMEDIATE
    .union(Flags::AD_MY_RANK)
    .union(Flags::AD_MY_NBRHD)
    .union(Flags::AD_ACQ)
    .union(Flags::AD_REL)
    .union(Flags::RANK_IS_JOBRANK)
    .union(Flags::PEER_SEG_OFFSET);

/// Flags under which the inlined direct route applies; the others (the
/// assertions, jobranks) take the general route, which checks them.
const FAST_FLAGS: Flags = Flags::IMMEDIATE
    .union(Flags::AD_ACQ)
    .union(Flags::AD_REL)
    .union(Flags::PEER_SEG_OFFSET);

struct AdInner {
    tm: Tm,
    dt: Dt,
    ops: Ops,
    flags: Flags,
    mechanism: Mechanism,
    cdata: Mutex<Option<CData>>,
    /// Operations in flight on the Active Message route.
    outstanding: Arc<AtomicUsize>,
    /// The blocking calls' short way to a CPU domain's targets served by
    /// the conduit's coherent atomics (see [`ConduitRoute`]).
    conduit: Option<ConduitRoute>,
}

/// For a CPU domain over a conduit whose protocol performs atomics with
/// the target's CPU (coherent with the direct route), what a blocking
/// call to a target not mapped here needs, gathered at creation: the
/// capability, the operations of the domain it supports and, per team
/// rank, the target's jobrank and segment (size 0: not this way). The
/// general route reaches the same targets the same way after checking
/// everything; this one keeps a round trip's own work to a few cache
/// lines (a blocking atomic is measured against an AMShort round trip).
struct ConduitRoute {
    rt: &'static Runtime,
    cap: &'static dyn gex_conduit::AtomicCapability,
    ops: Ops,
    targets: Box<[ConduitTarget]>,
}

#[derive(Clone, Copy, Default)]
struct ConduitTarget {
    jobrank: Rank,
    owner_base: usize,
    size: usize,
}

impl ConduitRoute {
    /// The route for a CPU domain over `members` (jobranks by team rank),
    /// if the conduit's atomics are coherent with CPU atomics and reach a
    /// member whose segment is attached and not mapped here.
    fn new(rt: &'static Runtime, members: &[Rank], dt: Dt, ops: Ops) -> Option<ConduitRoute> {
        let cap = rt.conduit().atomics().filter(|c| c.cpu_coherent())?;
        let ops = Op::ALL
            .iter()
            .filter(|o| ops.contains(o.as_set()) && cap.supports(dt, **o))
            .fold(Ops::empty(), |acc, o| acc | o.as_set());
        let targets: Box<[ConduitTarget]> = members
            .iter()
            .map(|&m| match segment_desc(rt, m) {
                Some(d) if d.local_base.is_none() && d.size > 0 && cap.reaches(m) => {
                    ConduitTarget {
                        jobrank: m,
                        owner_base: d.owner_base,
                        size: d.size,
                    }
                }
                _ => ConduitTarget::default(),
            })
            .collect();
        (!ops.is_empty() && targets.iter().any(|t| t.size > 0)).then_some(ConduitRoute {
            rt,
            cap,
            ops,
            targets,
        })
    }
}

/// An atomic domain (`gex_AD_t`): a team, one data type and a set of
/// operations. Not `Clone`: [`AtomicDomain::destroy`] takes the one handle,
/// so no operation can use a destroyed domain; share it by reference
/// (`&AtomicDomain` is `Send + Sync`).
pub struct AtomicDomain(Arc<AdInner>);

impl std::fmt::Debug for AtomicDomain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AtomicDomain")
            .field("dt", &self.0.dt)
            .field("ops", &self.0.ops)
            .field("flags", &self.0.flags)
            .field("mechanism", &self.0.mechanism)
            .finish()
    }
}

#[cold]
#[inline(never)]
fn create_error(msg: String) -> Error {
    Error::bad_arg(format!("gex_AD_Create: {msg}"))
}

/// Whether the conduit's atomics cover a domain over `members` for `dt`
/// and `ops`, from this process.
fn conduit_covers(rt: &Runtime, members: &[Rank], dt: Dt, ops: Ops) -> bool {
    let Some(cap) = rt.conduit().atomics() else {
        return false;
    };
    // A capability the target performs with CPU atomics serves single
    // targets of CPU domains instead (see `AtomicDomain::general`).
    !cap.cpu_coherent()
        && members.iter().all(|&m| cap.reaches(m))
        && Op::ALL
            .iter()
            .filter(|o| ops.contains(o.as_set()))
            .all(|&o| cap.supports(dt, o))
}

impl AtomicDomain {
    /// `gex_AD_Create`: collective over `tm`; `dt` is one of the six
    /// built-in types, `ops` a non-empty set of atomic operations valid for
    /// it, `flags` empty or one `AD_FAVOR_*` hint. The three are
    /// single-valued: every member must pass the same, and a member that
    /// does not makes the call an error on every member, naming it.
    pub fn create(tm: &Tm, dt: Dt, ops: Ops, flags: Flags) -> Result<AtomicDomain> {
        context::check_may_communicate("gex_AD_Create")?;
        if dt.size().is_none() {
            return Err(create_error(format!(
                "{} is not a type of remote atomics",
                dt.name()
            )));
        }
        if ops.is_empty() {
            return Err(create_error("the set of operations is empty".into()));
        }
        if let Some(bad) = Op::ALL
            .iter()
            .find(|o| ops.contains(o.as_set()) && !o.valid_for_atomic(dt))
        {
            return Err(create_error(format!(
                "{} is not an atomic operation on {}",
                bad.name(),
                dt.name()
            )));
        }
        if !(flags - CREATE_FLAGS).is_empty() {
            return Err(create_error(format!(
                "flags {:?} are not valid here (only one AD_FAVOR_* hint)",
                flags - CREATE_FLAGS
            )));
        }
        if (flags & CREATE_FLAGS).bits().count_ones() > 1 {
            return Err(create_error(format!(
                "the AD_FAVOR_* hints are mutually exclusive, got {flags:?}"
            )));
        }
        let rt = tm.ep().runtime();
        let members: Vec<Rank> = (0..tm.size())
            .map(|r| tm.jobrank_of(r))
            .collect::<Result<_>>()?;
        // A team inside one neighbourhood, or a hint for local targets,
        // keeps CPU atomics (direct everywhere or nearly); otherwise the
        // conduit's atomics if they cover the domain on every member.
        let nbrhd = &rt.conduit().layout().nbrhd;
        let all_local = members.iter().all(|m| nbrhd.binary_search(m).is_ok());
        let favour_local = flags.intersects(Flags::AD_FAVOR_MY_RANK | Flags::AD_FAVOR_MY_NBRHD);
        let nic = !all_local && !favour_local && conduit_covers(rt, &members, dt, ops);
        let verdict = ampath::agree(
            &members,
            tm.rank() as usize,
            ampath::record(dt, ops.bits(), flags, nic),
        )?;
        let conduit = if verdict.nic {
            None
        } else {
            ConduitRoute::new(rt, &members, dt, ops)
        };
        Ok(AtomicDomain(Arc::new(AdInner {
            conduit,
            tm: tm.clone(),
            dt,
            ops,
            flags,
            mechanism: if verdict.nic {
                Mechanism::Conduit
            } else {
                Mechanism::Cpu
            },
            cdata: Mutex::new(None),
            outstanding: Arc::new(AtomicUsize::new(0)),
        })))
    }

    /// `gex_AD_Destroy`: collective over the domain's team (it does not
    /// synchronise: the spec asks every operation on the domain to be
    /// complete, on every member, before any member calls it). An operation
    /// of this rank still in flight is an error, and the domain is then
    /// returned.
    pub fn destroy(self) -> std::result::Result<(), (Error, AtomicDomain)> {
        if let Err(e) = context::check_may_communicate("gex_AD_Destroy") {
            return Err((e, self));
        }
        let n = self
            .0
            .outstanding
            .load(std::sync::atomic::Ordering::Acquire);
        if n > 0 {
            return Err((
                Error::bad_arg(format!(
                    "gex_AD_Destroy: {n} operation(s) of this rank on the domain are still in flight (complete them first)"
                )),
                self,
            ));
        }
        Ok(())
    }

    /// `gex_AD_QueryFlags`.
    pub fn flags(&self) -> Flags {
        self.0.flags
    }

    /// `gex_AD_QueryTM`.
    pub fn tm(&self) -> &Tm {
        &self.0.tm
    }

    /// `gex_AD_QueryDT`.
    pub fn dt(&self) -> Dt {
        self.0.dt
    }

    /// `gex_AD_QueryOps`.
    pub fn ops(&self) -> Ops {
        self.0.ops
    }

    /// `gex_AD_SetCData`.
    pub fn set_cdata(&self, v: Option<CData>) {
        *self.0.cdata.lock().unwrap_or_else(|p| p.into_inner()) = v;
    }

    /// `gex_AD_QueryCData` (`None` for a new domain).
    pub fn cdata(&self) -> Option<CData> {
        self.0
            .cdata
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The mechanism Create chose.
    pub fn mechanism(&self) -> Mechanism {
        self.0.mechanism
    }

    /// How an operation on team rank `rank` travels now.
    pub fn route(&self, rank: Rank) -> Result<Route> {
        let jobrank = self.0.tm.jobrank_of(rank)?;
        if self.0.mechanism == Mechanism::Conduit {
            return Ok(Route::Conduit);
        }
        Ok(if fast_entry(jobrank).is_some_and(|d| d.size != 0) {
            Route::Direct
        } else if Op::ALL
            .iter()
            .filter(|o| self.0.ops.contains(o.as_set()))
            .all(|&o| self.coherent_conduit(jobrank, o))
        {
            Route::Conduit
        } else {
            Route::ActiveMessages
        })
    }

    /// The inlined direct route: a thread that may communicate, only
    /// [`FAST_FLAGS`], the domain's type and one of its operations, a CPU
    /// domain, a target mapped here with the whole aligned value inside its
    /// segment. Returns where the value is, or `None` for everything else
    /// (errors included), which the general route handles and reports.
    #[inline(always)]
    fn direct<T: AdType>(&self, rank: Rank, addr: usize, op: Op, flags: Flags) -> Option<*mut u8> {
        let d = &*self.0;
        if T::DT != d.dt
            || !d.ops.contains(op.as_set())
            || !(flags - FAST_FLAGS).is_empty()
            || d.mechanism != Mechanism::Cpu
            || !context::may_communicate()
        {
            return None;
        }
        let jobrank = d.tm.jobrank_of(rank).ok()?;
        let t = gex_core::fast_segments();
        if t.is_null() {
            return None;
        }
        // SAFETY: the table has one entry per jobrank, and `jobrank_of`
        // returns a jobrank below the job size.
        let e = unsafe { *t.add(jobrank as usize) };
        // An entry not directly accessible has size 0, so this one check
        // also sends it down the general route.
        let off = value_offset::<T>(addr, e.owner_base, e.size, flags)?;
        Some((e.local_base + off) as *mut u8)
    }

    /// `gex_AD_OpNB_[TYPE]`: `op` on the `T` at `tgt_addr` (an owner
    /// address, or an offset with `PEER_SEG_OFFSET`) on team rank
    /// `tgt_rank` (a jobrank with `RANK_IS_JOBRANK`), with `operand1` and
    /// `operand2` as the operation takes them. A fetching operation writes
    /// the target's prior value to `result` by the time the event
    /// completes (`None` discards it; a non-fetching one ignores `result`).
    /// Returns `Event::NO_OP` for an `IMMEDIATE` no-op.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn op_nb<'r, T: AdType>(
        &self,
        result: Option<&'r mut T>,
        tgt_rank: Rank,
        tgt_addr: usize,
        op: Op,
        operand1: T,
        operand2: T,
        flags: Flags,
    ) -> Result<Event<'r>> {
        if let Some(p) = self.direct::<T>(tgt_rank, tgt_addr, op, flags) {
            // SAFETY: `p` lies inside a segment mapped here, aligned to
            // `T` (checked by `direct`); the domain's accesses are atomic.
            let v = unsafe { ops::perform(p, op, operand1, operand2, flags) };
            if let (true, Some(r)) = (op.is_fetching(), result) {
                *r = v;
            }
            return Ok(Event::INVALID);
        }
        let args = (tgt_rank, tgt_addr, op, [operand1, operand2], flags);
        self.general("gex_AD_OpNB", result, args, Mode::Nb)
            .map(Out::event)
    }

    /// `gex_AD_OpNBI_[TYPE]`: as [`AtomicDomain::op_nb`], synchronised with
    /// `nbi::wait` (`Ec::PUT` for SET, `Ec::GET` for GET, `Ec::RMW` for the
    /// rest) or an access region. A fetching operation on the Active
    /// Message route completes before returning (the borrow of `result`
    /// ends with the call).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn op_nbi<T: AdType>(
        &self,
        result: Option<&mut T>,
        tgt_rank: Rank,
        tgt_addr: usize,
        op: Op,
        operand1: T,
        operand2: T,
        flags: Flags,
    ) -> Result<Injected> {
        if let Some(p) = self.direct::<T>(tgt_rank, tgt_addr, op, flags) {
            // SAFETY: as in `op_nb`.
            let v = unsafe { ops::perform(p, op, operand1, operand2, flags) };
            if let (true, Some(r)) = (op.is_fetching(), result) {
                *r = v;
            }
            return Ok(Injected::Sent);
        }
        let args = (tgt_rank, tgt_addr, op, [operand1, operand2], flags);
        self.general("gex_AD_OpNBI", result, args, Mode::Nbi)
            .map(|o| match o {
                Out::NoOp => Injected::NoOp,
                _ => Injected::Sent,
            })
    }

    /// A blocking operation (no spec call: `op_nb` and a wait in one):
    /// returns the target's prior value for a fetching operation, and the
    /// type's zero otherwise. `IMMEDIATE` is ignored: the call always
    /// performs the operation.
    ///
    /// The direct route returns the value in registers, with nothing built
    /// in memory on the way: stores before a locked instruction must drain
    /// first, and they cost a tenth of the operation.
    #[inline(always)]
    pub fn op_blocking<T: AdType>(
        &self,
        tgt_rank: Rank,
        tgt_addr: usize,
        op: Op,
        operand1: T,
        operand2: T,
        flags: Flags,
    ) -> Result<T> {
        let flags = flags - Flags::IMMEDIATE;
        if let Some(p) = self.direct::<T>(tgt_rank, tgt_addr, op, flags) {
            // SAFETY: as in `op_nb`.
            let v = unsafe { ops::perform(p, op, operand1, operand2, flags) };
            return Ok(if op.is_fetching() { v } else { T::default() });
        }
        if let Some((route, jobrank, off)) = self.conduit_target::<T>(tgt_rank, tgt_addr, op, flags)
        {
            return blocking_conduit(route, jobrank, off, op, [operand1, operand2], flags);
        }
        self.blocking_general(tgt_rank, tgt_addr, op, [operand1, operand2], flags)
    }

    /// The blocking calls' conduit route (see [`ConduitRoute`]): as
    /// [`AtomicDomain::direct`]'s checks, for a target the route serves
    /// with the whole aligned value inside its segment and the conduit
    /// route not turned off (`GEX_RMA_FORCE_AM`); `None` for everything
    /// else, which the general route handles and reports.
    #[inline(always)]
    fn conduit_target<T: AdType>(
        &self,
        rank: Rank,
        addr: usize,
        op: Op,
        flags: Flags,
    ) -> Option<(&ConduitRoute, Rank, usize)> {
        let d = &*self.0;
        let route = d.conduit.as_ref()?;
        if T::DT != d.dt
            || !route.ops.contains(op.as_set())
            || !(flags - FAST_FLAGS).is_empty()
            || !context::may_communicate()
            || !gex_core::direct_access()
        {
            return None;
        }
        let t = route.targets.get(rank as usize)?;
        // A target the route does not serve has size 0.
        let off = value_offset::<T>(addr, t.owner_base, t.size, flags)?;
        Some((route, t.jobrank, off))
    }

    /// [`AtomicDomain::op_blocking`] off the direct route.
    #[cold]
    #[inline(never)]
    fn blocking_general<T: AdType>(
        &self,
        tgt_rank: Rank,
        tgt_addr: usize,
        op: Op,
        operands: [T; 2],
        flags: Flags,
    ) -> Result<T> {
        let mut v = T::default();
        let args = (tgt_rank, tgt_addr, op, operands, flags);
        self.general("gex_AD_OpBlocking", Some(&mut v), args, Mode::Blocking)?;
        Ok(if op.is_fetching() { v } else { T::default() })
    }

    /// Every operation the direct route does not take: checks everything
    /// and reports what is wrong (nothing is touched then), then performs
    /// it directly, through the conduit, or by Active Message.
    #[cold]
    #[inline(never)]
    fn general<'r, T: AdType>(
        &self,
        call: &'static str,
        result: Option<&'r mut T>,
        (tgt_rank, tgt_addr, op, operands, flags): (Rank, usize, Op, [T; 2], Flags),
        mode: Mode,
    ) -> Result<Out<'r>> {
        let t = self.check::<T>(call, tgt_rank, tgt_addr, op, flags)?;
        let d = &*self.0;
        let fetch = op.is_fetching();
        if d.mechanism == Mechanism::Cpu {
            if let Some(p) = t.local {
                // SAFETY: `p` lies inside a segment mapped here, aligned to
                // `T` (checked by `check`); the domain's accesses are atomic.
                let v = unsafe { ops::perform(p, op, operands[0], operands[1], flags) };
                if let (true, Some(r)) = (fetch, result) {
                    *r = v;
                }
                return Ok(Out::Done);
            }
        }
        let ec = match op {
            Op::Set => Ec::PUT,
            Op::Get => Ec::GET,
            _ => Ec::RMW,
        };
        let bits = [operands[0].to_bits(), operands[1].to_bits()];
        let n = std::mem::size_of::<T>();
        let (parent, dst, staged) = match (mode, fetch, result) {
            (Mode::Nb, true, Some(r)) => {
                let s = Staging::new(n);
                (None, ResultDst::Staged(s.clone()), Some((s, r)))
            }
            (Mode::Nbi, false, _) => (Some(nbi::track(ec)), ResultDst::None, None),
            (_, true, Some(r)) => (None, ResultDst::Raw(r as *mut T as *mut u8), None),
            _ => (None, ResultDst::None, None),
        };
        // Blocking and fetching NBI calls complete before returning (and
        // `destroy` cannot run meanwhile: it takes the domain by value).
        let waited = matches!(mode, Mode::Blocking) || (matches!(mode, Mode::Nbi) && fetch);
        let started = match d.mechanism {
            Mechanism::Conduit => self.start_conduit(&t, op, bits, flags, dst, parent, waited)?,
            Mechanism::Cpu if self.coherent_conduit(t.jobrank, op) => {
                self.start_conduit(&t, op, bits, flags, dst, parent, waited)?
            }
            Mechanism::Cpu => ampath::start(
                t.jobrank,
                t.off,
                d.dt,
                op,
                bits,
                flags,
                dst,
                parent,
                &d.outstanding,
            )?,
        };
        let Some(c) = started else {
            return Ok(Out::NoOp);
        };
        Ok(match (mode, staged) {
            (Mode::Nb, Some((s, r))) => {
                // SAFETY: `T` is a plain number: any bytes are a value, and
                // `r` is exclusively borrowed for the event's lifetime.
                let bytes = unsafe { std::slice::from_raw_parts_mut(r as *mut T as *mut u8, n) };
                let mut ev = Event::pending_into(c, s, bytes);
                if ev.test()? {
                    Out::Done
                } else {
                    Out::Event(ev)
                }
            }
            (Mode::Nb, None) if !c.is_complete() => Out::Event(Event::pending(c)),
            (Mode::Nbi, _) if !fetch => Out::Done,
            _ => {
                // Blocking, or a fetching NBI whose result borrow ends now.
                if let Some(rt) = Runtime::get() {
                    rt.spin_until(|| c.is_complete());
                }
                Out::Done
            }
        })
    }

    /// Whether an operation `op` of this CPU domain on `jobrank`, which is
    /// not mapped here, goes through conduit atomics that the target
    /// performs with CPU atomics (coherent with the direct route; the udp
    /// conduit's): the conduit reaches the rank and supports the operation,
    /// and the Active Message route is not forced (`GEX_RMA_FORCE_AM`).
    fn coherent_conduit(&self, jobrank: Rank, op: Op) -> bool {
        gex_core::direct_access()
            && self
                .0
                .tm
                .ep()
                .runtime()
                .conduit()
                .atomics()
                .is_some_and(|c| {
                    c.cpu_coherent() && c.reaches(jobrank) && c.supports(self.0.dt, op)
                })
    }

    /// Starts an operation through the conduit's atomics. One the caller
    /// waits for before returning (`waited`) is not counted among the
    /// domain's operations in flight: `destroy` takes the domain by value,
    /// so it cannot run meanwhile, and the operation costs one allocation
    /// (its completion) as a one-sided get does.
    #[allow(clippy::too_many_arguments)]
    fn start_conduit(
        &self,
        t: &Target,
        op: Op,
        bits: [u64; 2],
        flags: Flags,
        dst: ResultDst,
        parent: Option<Arc<Completion>>,
        waited: bool,
    ) -> Result<Option<Arc<Completion>>> {
        let rt = self.0.tm.ep().runtime();
        let cap = rt
            .conduit()
            .atomics()
            .ok_or_else(|| Error::bad_arg("gex_AD_Op: the conduit no longer offers atomics"))?;
        let n = self.0.dt.size().expect("a built-in type");
        let result = match dst {
            ResultDst::None => None,
            // SAFETY: the caller waits for completion before the value's
            // borrow ends (blocking and fetching NBI calls).
            ResultDst::Raw(p) => Some(unsafe { GetDest::new(p, n, None) }),
            // SAFETY: the staging buffer lives as long as `keep`, which the
            // conduit drops only after completing.
            ResultDst::Staged(s) => Some(unsafe { GetDest::new(s.ptr(), n, Some(Box::new(s))) }),
        };
        let c = Completion::new(1, parent.clone());
        // AD_REL: this thread's earlier writes are visible before the
        // transport reads or writes the target. (AD_ACQ needs nothing more:
        // completion is observed with an acquire load of the completion,
        // which the conduit signals after the operation.)
        if flags.contains(Flags::AD_REL) {
            std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
        }
        // Otherwise counted in flight until the conduit completes it, so
        // that `destroy` sees it.
        let outstanding = (!waited).then(|| self.0.outstanding.clone());
        let done: Arc<dyn gex_conduit::OpCompletion> = match &outstanding {
            None => c.clone(),
            Some(o) => {
                o.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
                Arc::new(Tracked {
                    c: c.clone(),
                    outstanding: o.clone(),
                })
            }
        };
        let sent = cap.start(
            t.jobrank,
            t.off,
            self.0.dt,
            op,
            bits,
            result,
            done,
            flags.contains(Flags::IMMEDIATE),
            rt.sink(),
        );
        if !matches!(sent, Ok(Injected::Sent)) {
            if let Some(o) = &outstanding {
                o.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
            }
            if let Some(p) = &parent {
                p.done();
            }
        }
        Ok(match sent? {
            Injected::Sent => Some(c),
            Injected::NoOp => None,
        })
    }

    /// Checks an operation and its target; the error names what is wrong.
    #[allow(clippy::too_many_arguments)]
    fn check<T: AdType>(
        &self,
        call: &'static str,
        tgt_rank: Rank,
        tgt_addr: usize,
        op: Op,
        flags: Flags,
    ) -> Result<Target> {
        context::check_may_communicate(call)?;
        let d = &*self.0;
        let err = |m: String| Err(Error::bad_arg(format!("{call}: {m}; nothing was done")));
        if !(flags - OP_FLAGS).is_empty() {
            let bad = flags - OP_FLAGS;
            let why = if bad.intersects(CREATE_FLAGS) {
                " (the AD_FAVOR_* hints are gex_AD_Create's)"
            } else if bad.contains(Flags::SELF_SEG_OFFSET) {
                " (SELF_SEG_OFFSET is unimplemented, as in the spec)"
            } else {
                ""
            };
            return err(format!("flags {bad:?} are not valid for an atomic{why}"));
        }
        if T::DT != d.dt {
            return err(format!(
                "the domain is for {}, the call for {}",
                d.dt.name(),
                T::DT.name()
            ));
        }
        if !d.ops.contains(op.as_set()) {
            return err(format!(
                "{} is not in the domain's operations {:?}",
                op.name(),
                d.ops
            ));
        }
        if flags.contains(Flags::AD_MY_RANK | Flags::AD_MY_NBRHD) {
            return err("AD_MY_RANK and AD_MY_NBRHD are mutually exclusive".into());
        }
        let rt = d.tm.ep().runtime();
        let jobrank = if flags.contains(Flags::RANK_IS_JOBRANK) {
            let size = rt.jobsize();
            if tgt_rank >= size {
                return err(format!("jobrank {tgt_rank} is not in the job of {size}"));
            }
            if d.tm.jobrank_to_rank(tgt_rank)? == RANK_INVALID {
                return err(format!(
                    "jobrank {tgt_rank} is not a member of the domain's team"
                ));
            }
            tgt_rank
        } else {
            match d.tm.jobrank_of(tgt_rank) {
                Ok(j) => j,
                Err(e) => return err(e.message().to_string()),
            }
        };
        let me = rt.jobrank();
        if flags.contains(Flags::AD_MY_RANK) && jobrank != me {
            return err(format!(
                "AD_MY_RANK asserts that the target is this rank ({me}), but it is rank {jobrank}"
            ));
        }
        if flags.contains(Flags::AD_MY_NBRHD)
            && rt.conduit().layout().nbrhd.binary_search(&jobrank).is_err()
        {
            return err(format!(
                "AD_MY_NBRHD asserts that the target is in this neighbourhood, but rank {jobrank} is not"
            ));
        }
        let n = std::mem::size_of::<T>();
        let seg = segment_desc(rt, jobrank).unwrap_or_default();
        let off = match seg.offset_of(
            jobrank,
            tgt_addr,
            n,
            flags.contains(Flags::PEER_SEG_OFFSET),
            ZeroLen::InSegment,
        ) {
            Ok(o) => o,
            Err(e) => return err(format!("target {e}")),
        };
        if off % n != 0 {
            return err(format!(
                "the target at {tgt_addr:#x} is not aligned to the {n} bytes of {}",
                d.dt.name()
            ));
        }
        let local = fast_entry(jobrank)
            .filter(|e| e.size != 0)
            .map(|e| (e.local_base + off) as *mut u8);
        Ok(Target {
            jobrank,
            off,
            local,
        })
    }
}

/// Where the `T` at `addr` (an owner address, or an offset under
/// `PEER_SEG_OFFSET`) lies in a segment at `owner_base` of `size` bytes:
/// its offset, if the whole value is inside and aligned (never for size
/// 0).
#[inline(always)]
fn value_offset<T>(addr: usize, owner_base: usize, size: usize, flags: Flags) -> Option<usize> {
    let off = if flags.contains(Flags::PEER_SEG_OFFSET) {
        addr
    } else {
        addr.wrapping_sub(owner_base)
    };
    let n = std::mem::size_of::<T>();
    (off <= size && n <= size - off && off.is_multiple_of(n)).then_some(off)
}

/// A blocking operation through the conduit's coherent atomics, checked
/// by [`AtomicDomain::conduit_target`]: the value before it for a
/// fetching operation, the type's zero otherwise. Not counted among the
/// domain's operations in flight: it completes before returning, and
/// `destroy` takes the domain by value.
#[inline(never)]
fn blocking_conduit<T: AdType>(
    route: &ConduitRoute,
    jobrank: Rank,
    off: usize,
    op: Op,
    operands: [T; 2],
    flags: Flags,
) -> Result<T> {
    let fetch = op.is_fetching();
    let mut v = T::default();
    let n = std::mem::size_of::<T>();
    // SAFETY: `v` lives until this function returns, after the completion
    // below, and nothing else touches it meanwhile.
    let result = fetch.then(|| unsafe { GetDest::new(&mut v as *mut T as *mut u8, n, None) });
    let c = Completion::new(1, None);
    // AD_REL: this thread's earlier writes are visible before the target
    // performs the operation (AD_ACQ: completion is observed with an
    // acquire load, after the conduit wrote the value).
    if flags.contains(Flags::AD_REL) {
        std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
    }
    let sent = route.cap.start(
        jobrank,
        off,
        T::DT,
        op,
        [operands[0].to_bits(), operands[1].to_bits()],
        result,
        c.clone(),
        false,
        route.rt.sink(),
    );
    match sent? {
        Injected::Sent => route.rt.spin_until(|| c.is_complete()),
        // A start without IMMEDIATE waits for resources instead.
        Injected::NoOp => {
            return Err(Error::resource(
                "gex_AD_OpBlocking: the conduit did not start the atomic",
            ))
        }
    }
    Ok(if fetch { v } else { T::default() })
}

/// A conduit operation's completion that also counts it out of its
/// domain's operations in flight.
struct Tracked {
    c: Arc<Completion>,
    outstanding: Arc<AtomicUsize>,
}

impl gex_conduit::OpCompletion for Tracked {
    fn complete(&self) {
        self.outstanding
            .fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
        self.c.done();
    }
}

/// The fast segment table's entry for `jobrank`.
#[inline(always)]
fn fast_entry(jobrank: Rank) -> Option<gex_core::FastSeg> {
    let t = gex_core::fast_segments();
    let size = Runtime::get()?.jobsize();
    if t.is_null() || jobrank >= size {
        return None;
    }
    // SAFETY: a non-null table has one entry per jobrank, and `jobrank` is
    // below the job size.
    Some(unsafe { *t.add(jobrank as usize) })
}

/// A checked target.
struct Target {
    jobrank: Rank,
    off: usize,
    /// Where it is in this process, when its segment is mapped here and
    /// direct access is on.
    local: Option<*mut u8>,
}

#[derive(Clone, Copy)]
enum Mode {
    Blocking,
    Nbi,
    Nb,
}

enum Out<'r> {
    Done,
    NoOp,
    Event(Event<'r>),
}

impl<'r> Out<'r> {
    fn event(self) -> Event<'r> {
        match self {
            Out::Done => Event::INVALID,
            Out::NoOp => Event::NO_OP,
            Out::Event(e) => e,
        }
    }
}
