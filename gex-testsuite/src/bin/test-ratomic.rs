//! Remote atomics tests, run as one rank of a job of any size:
//! `gex-run -n N test-ratomic` (and with `GEX_RMA_FORCE_AM=1`, which sends
//! every operation through the Active Message route, and over udp without
//! the bypass).
//!
//! - Every (type, operation) against a sequential model: each rank owns one
//!   word per type in every rank's segment (its own included) and runs a
//!   random plan of operations with random operands (FLT/DBL edge values:
//!   NaN, -0.0, infinities) through NB, NBI, blocking calls and access
//!   regions, owner addresses and segment offsets, checking every fetched
//!   value and, at the end, every word.
//! - All ranks hammering one word per type on rank 0 and on the last rank
//!   with FADD, FINC and CAS loops: the final value is exact.
//! - ACQ/REL: data put, then a flag SET with REL; the reader that sees the
//!   flag with an ACQ GET sees the data.
//! - The reference testratomic's producer/consumer ring (consumers spin on
//!   an ACQ GET and `gex::poll`) with every rank pinned to one core, in
//!   bounded time: idle polls yield the core to a spinning rank that
//!   shares it.
//! - NBI: non-fetching operations counted under `Ec::RMW` (SET under
//!   `Ec::PUT`), synchronised with `nbi::wait` and access regions.
//! - Errors that name what is wrong and touch nothing: an operation not in
//!   the domain, a type mismatch, an integer-only operation on floats, a
//!   misaligned or out-of-segment target, a rank outside the team, a
//!   contradicted assertion, a Create flag on an operation, single-valued
//!   arguments that disagree.
//! - Queries, client data, a domain over a sub-team, destroy.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use gex::coll::tm_split;
use gex::nbi;
use gex::ratomic::{AtomicDomain, Mechanism, Route};
use gex::rma::Rma;
use gex::system::core_shared_yields;
use gex::{Dt, Ec, Event, Flags, Op, Ops, Rank, TmRef};
use gex_testsuite::model::Model;
use gex_testsuite::simnic::{NicControl, SimNicFactory};
use gex_testsuite::{wait_bound, Job, Rng};

const SEG: usize = 1 << 20;
/// Where the model words live: rank `w`'s word of type `i` in every
/// segment is at `MODEL + (w * 6 + i) * 8`.
const MODEL: usize = 0;
/// The hammered words (one per type) in rank 0's and the last rank's
/// segment.
const HAMMER: usize = 256 << 10;
/// Flags and data of the ordering test.
const FLAG: usize = 300 << 10;
const DATA: usize = 304 << 10;
const DATA_LEN: usize = 4096;
/// Words for the NBI, error and sub-team tests.
const SCRATCH: usize = 400 << 10;
/// The shared-core ring: each rank's X and Y words, and rank 0's core.
const RING: usize = 320 << 10;
const RING_CPU: usize = RING + 64;
/// Handoffs of the shared-core ring (rounds times ranks, about).
const RING_HANDOFFS: u32 = 2000;

/// Whether the job runs over the simulated NIC (`GEX_TEST_SIMNIC=1`).
static NIC: AtomicBool = AtomicBool::new(false);

fn nic() -> bool {
    NIC.load(Ordering::Relaxed)
}

/// Every atomic opcode valid for `dt` (over the simulated NIC, those it
/// supports: all but MULT and FMULT, so that the domains use it).
fn ops_for(dt: Dt) -> Vec<Op> {
    Op::ALL
        .into_iter()
        .filter(|o| o.valid_for_atomic(dt))
        .filter(|o| !nic() || !matches!(o, Op::Mult | Op::Fmult))
        .collect()
}

fn ops_set(ops: &[Op]) -> Ops {
    ops.iter().fold(Ops::empty(), |s, o| s | o.as_set())
}

/// Index of a type among the six.
fn type_index(dt: Dt) -> usize {
    Dt::BUILTIN.iter().position(|&d| d == dt).unwrap()
}

fn word(writer: Rank, dt: Dt) -> usize {
    MODEL + (writer as usize * 6 + type_index(dt)) * 8
}

/// Runs `op` on `(rank, addr)` through one of the calls, chosen by `how`;
/// returns the fetched value (for a fetching op).
#[allow(clippy::too_many_arguments)]
fn run_op<T: Model>(
    ad: &AtomicDomain,
    how: u64,
    rank: Rank,
    addr: usize,
    op: Op,
    o1: T,
    o2: T,
    flags: Flags,
) -> T {
    let mut got = T::default();
    let fetch = op.is_fetching();
    match how {
        0 => {
            got = ad
                .op_blocking::<T>(rank, addr, op, o1, o2, flags)
                .expect("op_blocking");
        }
        1 | 2 => {
            // NB, sometimes with IMMEDIATE (a no-op is retried without).
            let imm = if how == 2 {
                Flags::IMMEDIATE
            } else {
                Flags::empty()
            };
            let ev = ad
                .op_nb(
                    fetch.then_some(&mut got),
                    rank,
                    addr,
                    op,
                    o1,
                    o2,
                    flags | imm,
                )
                .expect("op_nb");
            let no_op = ev.is_no_op();
            if !no_op {
                ev.wait().expect("wait");
            } else {
                drop(ev);
                ad.op_nb(fetch.then_some(&mut got), rank, addr, op, o1, o2, flags)
                    .expect("op_nb")
                    .wait()
                    .expect("wait");
            }
        }
        3 => {
            ad.op_nbi(fetch.then_some(&mut got), rank, addr, op, o1, o2, flags)
                .expect("op_nbi");
            nbi::wait(Ec::ALL, Flags::empty()).expect("nbi wait");
        }
        _ => {
            nbi::begin_access_region(Flags::empty()).expect("begin region");
            ad.op_nbi(fetch.then_some(&mut got), rank, addr, op, o1, o2, flags)
                .expect("op_nbi");
            nbi::end_access_region(Flags::empty())
                .expect("end region")
                .wait()
                .expect("region wait");
        }
    }
    got
}

/// Every (type, op) against the model on every rank's segment.
fn model_test<T: Model>(job: &Job, rng: &mut Rng) -> usize {
    let (me, n) = (job.rank(), job.size());
    let ops = ops_for(T::DT);
    let ad = AtomicDomain::create(&job.tm, T::DT, ops_set(&ops), Flags::empty()).expect("create");
    assert_eq!(
        (ad.dt(), ad.ops(), ad.flags()),
        (T::DT, ops_set(&ops), Flags::empty())
    );
    // Over the NIC, unless the team is one neighbourhood (one rank).
    let want = if nic() && n > 1 {
        Mechanism::Conduit
    } else {
        Mechanism::Cpu
    };
    assert_eq!(ad.mechanism(), want);
    let at = word(me, T::DT);
    let mut model = vec![T::default(); n as usize];
    let mut count = 0;
    for round in 0..3 {
        for &op in &ops {
            for t in 0..n {
                let (o1, o2) = (T::random(rng), T::random(rng));
                // CAS sometimes with the current value, so it swaps.
                let o1 = if op.to_nonfetching().unwrap_or(op) == Op::Cas && rng.below(2) == 0 {
                    model[t as usize]
                } else {
                    o1
                };
                let (addr, mut flags) = if rng.below(2) == 0 {
                    (at, Flags::PEER_SEG_OFFSET)
                } else {
                    let seg = job
                        .tm
                        .query_bound_segment(t, Flags::empty())
                        .expect("query")
                        .expect("a segment");
                    (seg.owner_addr + at, Flags::empty())
                };
                if rng.below(3) == 0 {
                    flags |= Flags::AD_ACQ;
                }
                if rng.below(3) == 0 {
                    flags |= Flags::AD_REL;
                }
                if t == me && rng.below(2) == 0 {
                    flags |= Flags::AD_MY_RANK;
                }
                let how = rng.below(5);
                let got = run_op::<T>(&ad, how, t, addr, op, o1, o2, flags);
                let before = model[t as usize];
                if op.is_fetching() {
                    assert!(
                        T::same(got, before),
                        "{} {} on rank {t} (round {round}, call {how}): fetched {got:?}, the model holds {before:?}",
                        T::NAME,
                        op.name()
                    );
                }
                model[t as usize] = T::model(op, before, o1, o2);
                count += 1;
            }
        }
    }
    for t in 0..n {
        let v = ad
            .op_blocking::<T>(
                t,
                at,
                Op::Get,
                T::default(),
                T::default(),
                Flags::PEER_SEG_OFFSET,
            )
            .expect("get");
        assert!(
            T::same(v, model[t as usize]),
            "{}: rank {t} holds {v:?}, the model {:?}",
            T::NAME,
            model[t as usize]
        );
    }
    job.barrier();
    ad.destroy().map_err(|(e, _)| e).expect("destroy");
    count
}

/// Every rank adds to one word per type on rank 0 and on the last rank.
fn hammer<T: Model>(job: &Job) {
    let (me, n) = (job.rank(), job.size());
    const K: u32 = 200;
    let at = HAMMER + type_index(T::DT) * 8;
    let ad = AtomicDomain::create(
        &job.tm,
        T::DT,
        Ops::FADD | Ops::FINC | Ops::FCAS | Ops::GET | Ops::SET,
        Flags::AD_FAVOR_REMOTE,
    )
    .expect("create");
    let targets = if n > 1 { vec![0, n - 1] } else { vec![0] };
    if targets.contains(&me) {
        ad.op_blocking::<T>(
            me,
            at,
            Op::Set,
            T::default(),
            T::default(),
            Flags::PEER_SEG_OFFSET,
        )
        .expect("set");
    }
    job.barrier();
    for i in 0..K {
        for &t in &targets {
            let f = Flags::PEER_SEG_OFFSET;
            ad.op_blocking::<T>(t, at, Op::Fadd, T::from_u32(me + 1), T::default(), f)
                .expect("fadd");
            ad.op_nb::<T>(None, t, at, Op::Finc, T::default(), T::default(), f)
                .and_then(|e| e.wait())
                .expect("finc");
            // A CAS loop adding 2.
            let mut cur = ad
                .op_blocking::<T>(t, at, Op::Get, T::default(), T::default(), f)
                .expect("get");
            loop {
                let next = T::model(Op::Add, cur, T::from_u32(2), T::default());
                let seen = ad
                    .op_blocking::<T>(t, at, Op::Fcas, cur, next, f)
                    .expect("fcas");
                if T::same(seen, cur) {
                    break;
                }
                cur = seen;
            }
            if i % 16 == 0 {
                gex::poll().expect("poll");
            }
        }
    }
    job.barrier();
    let sum: u32 = (1..=n).sum::<u32>() + 3 * n;
    let want = T::from_u32(K * sum);
    for &t in &targets {
        let v = ad
            .op_blocking::<T>(
                t,
                at,
                Op::Get,
                T::default(),
                T::default(),
                Flags::PEER_SEG_OFFSET,
            )
            .expect("get");
        assert!(
            T::same(v, want),
            "{} hammer on rank {t}: {v:?}, expected {want:?}",
            T::NAME
        );
    }
    job.barrier();
    ad.destroy().map_err(|(e, _)| e).expect("destroy");
}

/// A put, then a flag SET with REL; the reader that sees the flag with an
/// ACQ GET sees the data. Rank r writes to rank r+1; the reader answers
/// with an acknowledgement flag before the next round.
fn acq_rel(job: &Job) {
    let (me, n) = (job.rank(), job.size());
    let ad = AtomicDomain::create(&job.tm, Dt::U64, Ops::SET | Ops::GET, Flags::empty())
        .expect("create");
    let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
    let off = Flags::PEER_SEG_OFFSET;
    // FLAG: the round whose data arrived; FLAG + 8: the round read.
    let wait_flag = |at: usize, round: u64| {
        let deadline = Instant::now() + wait_bound();
        loop {
            let v = ad
                .op_blocking::<u64>(
                    me,
                    at,
                    Op::Get,
                    0,
                    0,
                    off | Flags::AD_ACQ | Flags::AD_MY_RANK,
                )
                .expect("get");
            if v >= round {
                return;
            }
            gex::poll().expect("poll");
            assert!(
                Instant::now() < deadline,
                "rank {me}: no flag {round} at {at:#x} after {:?}",
                wait_bound()
            );
        }
    };
    for round in 1..=20u64 {
        let data: Vec<u8> = (0..DATA_LEN)
            .map(|i| (i as u64 * 131 + round * 7 + u64::from(me)) as u8)
            .collect();
        job.tm
            .put_blocking(next, DATA, &data[..], off)
            .expect("put");
        ad.op_nbi::<u64>(None, next, FLAG, Op::Set, round, 0, off | Flags::AD_REL)
            .expect("set flag");
        wait_flag(FLAG, round);
        let mut got = vec![0u8; DATA_LEN];
        job.seg.read(DATA, &mut got).expect("read");
        for (i, b) in got.iter().enumerate() {
            let want = (i as u64 * 131 + round * 7 + u64::from(prev)) as u8;
            assert_eq!(
                *b, want,
                "round {round}: byte {i} from rank {prev} not there when its flag was"
            );
        }
        ad.op_blocking::<u64>(prev, FLAG + 8, Op::Set, round, 0, off | Flags::AD_REL)
            .expect("ack");
        wait_flag(FLAG + 8, round);
    }
    nbi::wait(Ec::PUT, Flags::empty()).expect("nbi");
    job.barrier();
    ad.destroy().map_err(|(e, _)| e).expect("destroy");
}

/// This thread's CPU affinity.
fn affinity() -> libc::cpu_set_t {
    // SAFETY: an all-zero cpu_set_t is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is writable and of the size passed.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
    assert_eq!(
        rc,
        0,
        "sched_getaffinity: {}",
        std::io::Error::last_os_error()
    );
    set
}

/// Sets this thread's CPU affinity.
fn set_affinity(set: &libc::cpu_set_t) {
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(set), set) };
    assert_eq!(
        rc,
        0,
        "sched_setaffinity: {}",
        std::io::Error::last_os_error()
    );
}

/// The reference testratomic's producer/consumer ring, with every rank
/// pinned to one core: each consumer spins on an `AD_ACQ` GET of its own Y
/// word and `gex::poll`; the producer SETs the next rank's X, then its Y
/// with `AD_REL`. The scheduler runs one rank of the core at a time, so a
/// value moves only when the spinning rank gives the core up: a client
/// poll that finds nothing while another rank of the host spins on the
/// same core must yield it (`Runtime::poll`), else each handoff costs a
/// time slice (the reference suite's testratomic took minutes on a busy
/// host, where the scheduler had put its two ranks on one core; this ring
/// took 12-16 s without the yield, ~20 ms with it, on an idle machine).
/// Where the ranks share memory, every rank must have yielded the core to
/// a spinning neighbour (`core_shared_yields` in `gex::stats()`): the
/// mechanism is checked, not the time, which a loaded machine stretches.
/// Every wait is bounded.
fn shared_core_ring(job: &Job) {
    let (me, n) = (job.rank(), job.size());
    if n < 2 {
        return;
    }
    let off = Flags::PEER_SEG_OFFSET;
    let ad = AtomicDomain::create(&job.tm, Dt::U64, Ops::SET | Ops::GET, Flags::empty())
        .expect("create");
    for w in [RING, RING + 8] {
        ad.op_blocking::<u64>(me, w, Op::Set, 0, 0, off | Flags::AD_MY_RANK)
            .expect("init");
    }
    // Every rank on the core rank 0 runs on now.
    if me == 0 {
        // SAFETY: no preconditions.
        let cpu = unsafe { libc::sched_getcpu() };
        assert!(
            cpu >= 0,
            "sched_getcpu: {}",
            std::io::Error::last_os_error()
        );
        job.seg
            .write(RING_CPU, &(cpu as u64).to_le_bytes())
            .expect("write");
    }
    job.barrier();
    let mut b = [0u8; 8];
    job.tm
        .get_blocking(&mut b[..], 0, RING_CPU, off)
        .expect("get core");
    let cpu = u64::from_le_bytes(b) as usize;
    let saved = affinity();
    // SAFETY: an all-zero cpu_set_t is the empty set.
    let mut one: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` is below CPU_SETSIZE (a core number the kernel gave).
    unsafe { libc::CPU_SET(cpu, &mut one) };
    set_affinity(&one);
    job.barrier();
    let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
    // The ranks see where the others run through memory they share: the
    // limit holds where every rank is in this one's neighbourhood (smp,
    // udp with its bypass). Without it (udp with GEX_UDP_BYPASS=0, which
    // models ranks on separate hosts, where they share no core) the
    // conduit's own pacing applies: it blocks on its socket once polls
    // find nothing for its spin time, which AMs a rank sends itself keep
    // resetting (GEX_RMA_FORCE_AM); so only the bound on each wait holds,
    // over a tenth of the handoffs.
    let shared = gex::system::query_nbrhd_info()
        .expect("nbrhd")
        .members
        .len()
        == n as usize;
    let handoffs = if shared {
        RING_HANDOFFS
    } else {
        RING_HANDOFFS / 10
    };
    let rounds = u64::from(handoffs / n).max(1);
    let yields0 = core_shared_yields();
    let t0 = Instant::now();
    let deadline = t0 + wait_bound();
    let consume = |value: u64| loop {
        let y = ad
            .op_blocking::<u64>(
                me,
                RING + 8,
                Op::Get,
                0,
                0,
                off | Flags::AD_MY_RANK | Flags::AD_ACQ,
            )
            .expect("get y");
        if y == value {
            let x = ad
                .op_blocking::<u64>(me, RING, Op::Get, 0, 0, off | Flags::AD_MY_RANK)
                .expect("get x");
            assert_eq!(
                x, value,
                "rank {me}: Y {value} from rank {prev} arrived before its X"
            );
            return;
        }
        assert!(
            y + 1 == value,
            "rank {me}: Y is {y} waiting for {value} from rank {prev}"
        );
        gex::poll().expect("poll");
        assert!(
            Instant::now() < deadline,
            "rank {me}: no value {value} from rank {prev} after {:?} (the ranks share core {cpu})",
            wait_bound()
        );
    };
    let produce = |value: u64| {
        ad.op_blocking::<u64>(next, RING, Op::Set, value, 0, off)
            .expect("set x");
        ad.op_blocking::<u64>(next, RING + 8, Op::Set, value, 0, off | Flags::AD_REL)
            .expect("set y");
    };
    // Round i carries value i + 1 from rank 0 around the ring and back.
    for v in 1..=rounds {
        if me == 0 {
            if v > 1 {
                consume(v - 1);
            }
        } else {
            consume(v);
        }
        produce(v);
    }
    if me == 0 {
        consume(rounds);
    }
    let took = t0.elapsed();
    let yields = core_shared_yields() - yields0;
    set_affinity(&saved);
    job.barrier();
    ad.destroy().map_err(|(e, _)| e).expect("destroy");
    assert!(
        !shared || yields > 0,
        "rank {me}: {} handoffs among {n} ranks on core {cpu} in {took:?} without once yielding the core to a rank polling in vain on it: ranks spinning on one core do not yield it to each other",
        rounds * u64::from(n)
    );
    if me == 0 {
        println!(
            "test-ratomic: shared-core ring: {} handoffs among {n} ranks on core {cpu} in {took:?}, {yields} yields to a spinning neighbour on rank 0{}",
            rounds * u64::from(n),
            if shared { "" } else { " (not checked: the ranks share no memory)" }
        );
    }
}

/// NBI streams: counted under RMW (SET under PUT), in access regions too.
fn nbi_streams(job: &Job) {
    let (me, n) = (job.rank(), job.size());
    let ad = AtomicDomain::create(
        &job.tm,
        Dt::I64,
        Ops::ADD | Ops::SET | Ops::GET,
        Flags::empty(),
    )
    .expect("create");
    let peer = (me + 1) % n;
    let at = SCRATCH + me as usize * 8;
    let off = Flags::PEER_SEG_OFFSET;
    ad.op_nbi::<i64>(None, peer, at, Op::Set, -5, 0, off)
        .expect("set");
    nbi::wait(Ec::PUT, Flags::empty()).expect("wait put");
    for i in 0..500i64 {
        ad.op_nbi::<i64>(None, peer, at, Op::Add, i, 0, off)
            .expect("add");
    }
    nbi::wait(Ec::RMW, Flags::empty()).expect("wait rmw");
    assert!(nbi::test(Ec::ALL, Flags::empty()).expect("test"));
    let v = ad
        .op_blocking::<i64>(peer, at, Op::Get, 0, 0, off)
        .expect("get");
    assert_eq!(v, -5 + (0..500).sum::<i64>(), "after the NBI stream");
    nbi::begin_access_region(Flags::empty()).expect("begin");
    for _ in 0..100 {
        ad.op_nbi::<i64>(None, peer, at, Op::Add, -1, 0, off)
            .expect("add");
    }
    let ev: Event<'static> = nbi::end_access_region(Flags::empty()).expect("end");
    ev.wait().expect("region");
    let v = ad
        .op_blocking::<i64>(peer, at, Op::Get, 0, 0, off)
        .expect("get");
    assert_eq!(v, -5 + (0..500).sum::<i64>() - 100, "after the region");
    job.barrier();
    ad.destroy().map_err(|(e, _)| e).expect("destroy");
}

fn expect_err(what: &str, r: gex::Result<impl std::fmt::Debug>, needle: &str) {
    match r {
        Ok(v) => panic!("{what}: succeeded ({v:?}), expected an error with {needle:?}"),
        Err(e) => assert!(
            e.message().contains(needle),
            "{what}: {e} does not say {needle:?}"
        ),
    }
}

/// Bad input is an error naming what is wrong, and touches nothing.
fn errors(job: &Job) {
    let (me, n) = (job.rank(), job.size());
    let off = Flags::PEER_SEG_OFFSET;
    let at = SCRATCH + 64 * 8 + me as usize * 16;
    expect_err(
        "AND on DBL",
        AtomicDomain::create(&job.tm, Dt::Dbl, Ops::FADD | Ops::AND, Flags::empty()),
        "GEX_OP_AND is not an atomic operation on GEX_DT_DBL",
    );
    expect_err(
        "two FAVOR hints",
        AtomicDomain::create(
            &job.tm,
            Dt::U64,
            Ops::FADD,
            Flags::AD_FAVOR_REMOTE | Flags::AD_FAVOR_MY_RANK,
        ),
        "mutually exclusive",
    );
    expect_err(
        "USER type",
        AtomicDomain::create(&job.tm, Dt::User, Ops::ADD, Flags::empty()),
        "not a type of remote atomics",
    );
    let ad = AtomicDomain::create(
        &job.tm,
        Dt::U64,
        Ops::FADD | Ops::SET | Ops::GET,
        Flags::empty(),
    )
    .expect("create");
    ad.op_blocking::<u64>(me, at, Op::Set, 77, 0, off)
        .expect("set");
    let peer = (me + 1) % n;
    expect_err(
        "op not in the set",
        ad.op_blocking::<u64>(me, at, Op::Fsub, 1, 0, off),
        "GEX_OP_FSUB is not in the domain's operations",
    );
    expect_err(
        "type mismatch",
        ad.op_blocking::<u32>(me, at, Op::Fadd, 1, 0, off),
        "the domain is for GEX_DT_U64, the call for GEX_DT_U32",
    );
    expect_err(
        "misaligned",
        ad.op_blocking::<u64>(peer, at + 4, Op::Fadd, 1, 0, off),
        "not aligned to the 8 bytes",
    );
    expect_err(
        "out of segment",
        ad.op_blocking::<u64>(peer, SEG - 4, Op::Fadd, 1, 0, off),
        "outside",
    );
    expect_err(
        "wrapping address",
        ad.op_blocking::<u64>(peer, usize::MAX - 3, Op::Fadd, 1, 0, Flags::empty()),
        "range",
    );
    expect_err(
        "rank outside the team",
        ad.op_blocking::<u64>(n, at, Op::Fadd, 1, 0, off),
        "not in the team",
    );
    expect_err(
        "jobrank outside the job",
        ad.op_blocking::<u64>(n + 3, at, Op::Fadd, 1, 0, off | Flags::RANK_IS_JOBRANK),
        "is not in the job",
    );
    expect_err(
        "FAVOR on an op",
        ad.op_blocking::<u64>(me, at, Op::Fadd, 1, 0, off | Flags::AD_FAVOR_REMOTE),
        "gex_AD_Create's",
    );
    expect_err(
        "both assertions",
        ad.op_blocking::<u64>(
            me,
            at,
            Op::Fadd,
            1,
            0,
            off | Flags::AD_MY_RANK | Flags::AD_MY_NBRHD,
        ),
        "mutually exclusive",
    );
    // A fetch whose value is not wanted.
    ad.op_nb::<u64>(None, peer, at, Op::Fadd, 0, 0, off)
        .expect("fadd")
        .wait()
        .expect("wait");
    if n > 1 {
        expect_err(
            "AD_MY_RANK on another rank",
            ad.op_blocking::<u64>(peer, at, Op::Fadd, 1, 0, off | Flags::AD_MY_RANK),
            "AD_MY_RANK asserts",
        );
        let nbrhd = gex::system::query_nbrhd_info().expect("nbrhd");
        let outside = (0..n).find(|r| !nbrhd.members.iter().any(|i| i.jobrank == *r));
        if let Some(r) = outside {
            expect_err(
                "AD_MY_NBRHD on another neighbourhood",
                ad.op_blocking::<u64>(r, at, Op::Fadd, 1, 0, off | Flags::AD_MY_NBRHD),
                "AD_MY_NBRHD asserts",
            );
        }
    }
    // Jobranks name the same targets.
    let v = ad
        .op_blocking::<u64>(
            me,
            at,
            Op::Fadd,
            0,
            0,
            off | Flags::RANK_IS_JOBRANK | Flags::AD_MY_NBRHD,
        )
        .expect("by jobrank");
    assert_eq!(v, 77, "every failed call touched the word");
    // Queries and client data.
    assert_eq!(ad.tm().size(), n);
    assert!(ad.cdata().is_none());
    ad.set_cdata(Some(std::sync::Arc::new(42u32)));
    assert_eq!(
        ad.cdata().and_then(|c| c.downcast_ref::<u32>().copied()),
        Some(42)
    );
    assert_eq!(
        ad.route(me).expect("route"),
        if ad.mechanism() == Mechanism::Conduit {
            Route::Conduit
        } else if gex::rma::force_am() {
            Route::ActiveMessages
        } else {
            Route::Direct
        }
    );
    job.barrier();
    ad.destroy().map_err(|(e, _)| e).expect("destroy");
    // Single-valued arguments that disagree: an error on every member.
    if n > 1 {
        let ops = if me == n - 1 {
            Ops::FADD | Ops::GET
        } else {
            Ops::FADD
        };
        expect_err(
            "disagreeing members",
            AtomicDomain::create(&job.tm, Dt::U64, ops, Flags::empty()),
            "another set of operations",
        );
        // And the next creation agrees again.
        let ad = AtomicDomain::create(&job.tm, Dt::U64, Ops::FADD, Flags::empty()).expect("create");
        job.barrier();
        ad.destroy().map_err(|(e, _)| e).expect("destroy");
    }
}

/// A domain over a sub-team (even and odd ranks): team ranks name the
/// members, jobranks with RANK_IS_JOBRANK.
fn subteam(job: &Job) {
    let (me, n) = (job.rank(), job.size());
    let sub = tm_split(
        &job.tm,
        Some((me % 2) as i32),
        me as i32,
        None,
        Flags::TM_NO_SCRATCH,
    )
    .expect("split")
    .expect("a member");
    let ad =
        AtomicDomain::create(&sub, Dt::U32, Ops::FINC | Ops::GET, Flags::empty()).expect("create");
    let at = SCRATCH + 128 * 8;
    let root_job = sub.rank_to_jobrank(0).expect("translate");
    ad.op_nb::<u32>(None, 0, at, Op::Finc, 0, 0, Flags::PEER_SEG_OFFSET)
        .expect("finc")
        .wait()
        .expect("wait");
    ad.op_blocking::<u32>(
        root_job,
        at,
        Op::Finc,
        0,
        0,
        Flags::PEER_SEG_OFFSET | Flags::RANK_IS_JOBRANK,
    )
    .expect("finc by jobrank");
    if n > 1 {
        let other = if me % 2 == 0 { 1 } else { 0 };
        expect_err(
            "a jobrank outside the sub-team",
            ad.op_blocking::<u32>(
                other,
                at,
                Op::Finc,
                0,
                0,
                Flags::PEER_SEG_OFFSET | Flags::RANK_IS_JOBRANK,
            ),
            "not a member of the domain's team",
        );
    }
    job.barrier();
    let v = ad
        .op_blocking::<u32>(0, at, Op::Get, 0, 0, Flags::PEER_SEG_OFFSET)
        .expect("get");
    assert_eq!(v, 2 * sub.size(), "sub-team increments");
    job.barrier();
    ad.destroy().map_err(|(e, _)| e).expect("destroy");
}

/// Operations the simulated NIC's queue holds (`IMMEDIATE` ones beyond it
/// are refused).
const NIC_DEPTH: usize = 4;

/// Over the simulated NIC: which mechanism Create picks, that every
/// operation of a conduit domain goes through the NIC (counted), and the
/// `IMMEDIATE` no-op of both the NIC route (a full queue) and the Active
/// Message route (congestion), which must write nothing, count nothing
/// and leave the target untouched.
fn nic_checks(job: &Job, ctl: &NicControl) {
    let (me, n) = (job.rank(), job.size());
    let off = Flags::PEER_SEG_OFFSET;
    let peer = (me + 1) % n;
    let at = SCRATCH + 128 * 8 + me as usize * 8;
    // Mechanisms: the NIC covers FADD/ADD/GET/SET on every member; MULT it
    // does not, and a FAVOR_MY_RANK domain keeps CPU atomics.
    let nicd = AtomicDomain::create(
        &job.tm,
        Dt::U64,
        Ops::FADD | Ops::ADD | Ops::GET | Ops::SET,
        Flags::empty(),
    )
    .expect("create");
    assert_eq!(nicd.mechanism(), Mechanism::Conduit);
    for r in 0..n {
        assert_eq!(nicd.route(r).expect("route"), Route::Conduit);
    }
    let cpu = AtomicDomain::create(&job.tm, Dt::U64, Ops::FMULT | Ops::FADD, Flags::empty())
        .expect("create");
    assert_eq!(cpu.mechanism(), Mechanism::Cpu, "MULT is not the NIC's");
    let favour =
        AtomicDomain::create(&job.tm, Dt::U64, Ops::FADD, Flags::AD_FAVOR_MY_RANK).expect("create");
    assert_eq!(favour.mechanism(), Mechanism::Cpu, "FAVOR_MY_RANK");
    for r in 0..n {
        let want = if r == me {
            Route::Direct
        } else {
            Route::ActiveMessages
        };
        assert_eq!(cpu.route(r).expect("route"), want);
    }
    job.barrier();

    // Every operation of the NIC domain is the NIC's: 100 of them.
    let before = (ctl.started(), ctl.executed());
    nicd.op_blocking::<u64>(peer, at, Op::Set, 7, 0, off)
        .expect("set");
    for i in 0..99u64 {
        assert_eq!(
            nicd.op_blocking::<u64>(peer, at, Op::Fadd, 1, 0, off)
                .expect("fadd"),
            7 + i
        );
    }
    let (started, executed) = (ctl.started() - before.0, ctl.executed() - before.1);
    assert_eq!(
        (started, executed),
        (100, 100),
        "operations through the NIC"
    );

    // IMMEDIATE on a full NIC queue: non-fetching NBI operations return
    // without polling, so NIC_DEPTH of them fill it.
    let refused = ctl.refused();
    for _ in 0..NIC_DEPTH {
        let r = nicd
            .op_nbi::<u64>(None, peer, at, Op::Add, 10, 0, off | Flags::IMMEDIATE)
            .expect("add");
        assert!(matches!(r, gex::ratomic::Injected::Sent));
    }
    let r = nicd
        .op_nbi::<u64>(None, peer, at, Op::Add, 1000, 0, off | Flags::IMMEDIATE)
        .expect("add");
    assert!(
        matches!(r, gex::ratomic::Injected::NoOp),
        "a full NIC queue refuses IMMEDIATE, got {r:?}"
    );
    let mut sentinel = 0xdead_beef_u64;
    let ev = nicd
        .op_nb::<u64>(
            Some(&mut sentinel),
            peer,
            at,
            Op::Fadd,
            1000,
            0,
            off | Flags::IMMEDIATE,
        )
        .expect("fadd");
    assert!(ev.is_no_op(), "a full NIC queue refuses IMMEDIATE");
    drop(ev);
    assert_eq!(sentinel, 0xdead_beef, "an IMMEDIATE no-op wrote its result");
    assert_eq!(ctl.refused() - refused, 2);
    // The no-ops count nothing: the NBI wait ends once the queue drains.
    job.wait_for("the NIC's NBI operations", || {
        nbi::test(Ec::RMW, Flags::empty()).expect("test")
    });
    let v = nicd
        .op_blocking::<u64>(peer, at, Op::Get, 0, 0, off)
        .expect("get");
    assert_eq!(
        v,
        7 + 99 + 10 * NIC_DEPTH as u64,
        "the no-ops added nothing"
    );
    job.barrier();

    // IMMEDIATE on the Active Message route while the conduit is
    // congested: a no-op that writes nothing and does nothing at the
    // target.
    if n > 1 {
        let am_at = at + 4096;
        cpu.op_blocking::<u64>(peer, am_at, Op::Fadd, 0, 0, off)
            .expect("fadd");
        let base = cpu
            .op_blocking::<u64>(peer, am_at, Op::Fadd, 0, 0, off)
            .expect("fadd");
        ctl.set_congested(true);
        let am_refused = ctl.am_refused();
        let mut sentinel = 0x5eed_u64;
        let ev = cpu
            .op_nb::<u64>(
                Some(&mut sentinel),
                peer,
                am_at,
                Op::Fmult,
                3,
                0,
                off | Flags::IMMEDIATE,
            )
            .expect("fmult");
        assert!(ev.is_no_op(), "a congested AM route refuses IMMEDIATE");
        drop(ev);
        let r = cpu
            .op_nbi::<u64>(None, peer, am_at, Op::Fadd, 5, 0, off | Flags::IMMEDIATE)
            .expect("fadd");
        assert!(matches!(r, gex::ratomic::Injected::NoOp));
        ctl.set_congested(false);
        assert_eq!(sentinel, 0x5eed, "an IMMEDIATE no-op wrote its result");
        assert_eq!(ctl.am_refused() - am_refused, 2);
        assert!(nbi::test(Ec::ALL, Flags::empty()).expect("test"));
        let v = cpu
            .op_blocking::<u64>(peer, am_at, Op::Fadd, 0, 0, off)
            .expect("fadd");
        assert_eq!(v, base, "the no-ops changed the target");
    }
    job.barrier();
    for ad in [nicd, cpu, favour] {
        ad.destroy().map_err(|(e, _)| e).expect("destroy");
    }
}

fn main() {
    NIC.store(
        std::env::var("GEX_TEST_SIMNIC").as_deref() == Ok("1"),
        Ordering::Relaxed,
    );
    let (job, nic_ctl): (Job, Option<Arc<NicControl>>) = if nic() {
        let inner = gex::Config::from_env()
            .and_then(|c| c.conduit_factory())
            .expect("conduit");
        let (factory, ctl) = SimNicFactory::new(inner, NIC_DEPTH);
        (Job::start_on("TEST_RATOMIC", SEG, &factory), Some(ctl))
    } else {
        (Job::start("TEST_RATOMIC", SEG), None)
    };
    let (me, n) = (job.rank(), job.size());
    gex::system::set_verbose_errors(false);
    let mut rng = Rng::new(0x5eed ^ u64::from(me) << 20);
    let mut count = 0;
    count += model_test::<i32>(&job, &mut rng);
    count += model_test::<u32>(&job, &mut rng);
    count += model_test::<i64>(&job, &mut rng);
    count += model_test::<u64>(&job, &mut rng);
    count += model_test::<f32>(&job, &mut rng);
    count += model_test::<f64>(&job, &mut rng);
    hammer::<u64>(&job);
    hammer::<i32>(&job);
    hammer::<f64>(&job);
    hammer::<f32>(&job);
    acq_rel(&job);
    shared_core_ring(&job);
    nbi_streams(&job);
    errors(&job);
    subteam(&job);
    if let (Some(ctl), true) = (&nic_ctl, n > 1) {
        nic_checks(&job, ctl);
    }
    job.barrier();
    // The routes this rank's operations took: direct to every rank on
    // smp, through AMs to every rank when forced, direct to itself and
    // through the conduit's atomics (ATOMIC messages its shell performs) to
    // the others over udp without the bypass.
    let ad = AtomicDomain::create(&job.tm, Dt::U64, Ops::GET, Flags::empty()).expect("create");
    let routes: Vec<Route> = (0..n).map(|r| ad.route(r).expect("route")).collect();
    let path = if ad.mechanism() == Mechanism::Conduit {
        assert!(routes.iter().all(|&r| r == Route::Conduit));
        "nic"
    } else {
        let has = |k: Route| routes.contains(&k);
        match (
            has(Route::Direct),
            has(Route::Conduit),
            has(Route::ActiveMessages),
        ) {
            (true, false, false) => "direct",
            (false, false, true) => "am",
            (true, false, true) => "direct+am",
            (true, true, false) => "direct+conduit",
            other => panic!("rank {me}: unexpected mix of routes {other:?}: {routes:?}"),
        }
    };
    job.barrier();
    ad.destroy().map_err(|(e, _)| e).expect("destroy");
    println!("test-ratomic: rank {me} of {n}: {count} modelled operations");
    println!("test-ratomic: rank {me} of {n}: all checks passed ({path} path)");
}
