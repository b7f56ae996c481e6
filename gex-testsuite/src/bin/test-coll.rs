//! Collectives and teams tests, run as one rank of a job of any size:
//! `gex-run -n N test-coll` (and with `GEX_COLL_FORCE_AM=1`, which puts
//! every barrier on Active Messages, or `GEX_COLL_FORCE_DEFER=1`, which
//! defers every message a handler forwards to the progress hook).
//!
//! Every collective is checked against a sequential model computed by
//! every rank from the same seeds: barriers (release/acquire through puts
//! made before them), the GASNet-1 barrier's mismatch rules and NOT_READY,
//! broadcast from random roots (0 bytes to 1 MiB, in place and not),
//! reduce-to-one and reduce-to-all for every built-in type and operator,
//! large ones (16 KiB to 1 MiB: reduce-scatter on smp) of `f64` sums of
//! mixed magnitudes bit for bit against the rank-order model, in flight,
//! in every sync mode, user operators (commutative, non-commutative, user types of 3 bytes to
//! 70 KB per element; 1 KiB + 8 B to 200 KiB per member and elements of
//! 1500 and 3000 bytes in flight, through shared memory where the team's
//! members share the neighbourhood: no reduction over Active Messages), scatter, gather, gather-all and exchange; over the
//! primordial team and teams from splits (grid rows and columns, reversed
//! keys, ranks left out, splits of splits) and from `tm_create` (every
//! scratch kind, jobranks and parent ranks); several collectives in flight
//! on two teams at once; 75 small collectives of every kind in flight over
//! each kind of team, odd sizes included (more than the 32 inline slots of
//! the shared-memory path), synced in reverse order; barriers over up to five teams in flight at once
//! with puts before and reads after each; team turnover (shared-memory
//! barrier channels reused with counters left by earlier teams, more teams
//! than channels); team destruction handing scratch back; the address
//! modes and segment hints, the multi-address forms and all_put / all_get
//! (module `coll_modes`); and the argument errors. Every wait is bounded
//! and fails loudly.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Instant;

use gex::am::{register_handlers, AmRequest, HandlerEntry};
use gex::coll::CollHandle;
use gex::coll::{
    barrier_blocking, barrier_nb, barrier_notify, barrier_result, barrier_try,
    barrier_uses_shared_memory, barrier_wait, broadcast, broadcast_nb, exchange, exchange_nb,
    gather, gather_all, gather_all_nb, gather_nb, reduce_to_all, reduce_to_all_nb,
    reduce_to_all_nb_typed, reduce_to_all_typed, reduce_to_one, reduce_to_one_nb,
    reduce_to_one_nb_typed, reduce_to_one_typed, scatter, scatter_nb, tm_create,
    tm_create_scratch_size, tm_create_scratch_size_for, tm_destroy, tm_split,
    tm_split_scratch_size, ReduceOp, BARRIERFLAG_ANONYMOUS, BARRIERFLAG_MISMATCH,
    BARRIERFLAG_UNNAMED,
};
use gex::rma::Rma;
use gex::{Dt, EpLocation, ErrorKind, Flags, Memvec, Op, Rank, Tm, TmRef};
use gex_testsuite::{check_payload, payload, wait_bound, Job, Rng};

const SEG: usize = 8 << 20;
/// Segment layout: [0, 64 KiB) barrier-ordering slots; then scratch areas;
/// [4 MiB, 8 MiB) the address-mode checks' buffers (`coll_modes`).
const SLOTS: usize = 0;
const SCRATCH: usize = 1 << 20;
/// Barrier data checks over teams: 8 KiB per team (two parities of 16
/// bytes per jobrank).
const TEAM_SLOTS: usize = 3 << 20;
const TEAM_STRIDE: usize = 8 << 10;
const H_GO: u8 = 200;
/// "My initiation returned" (counted in `T::entered`).
const H_ENTERED: u8 = 201;

#[path = "../coll_modes.rs"]
mod coll_modes;

struct T {
    job: Job,
    me: u32,
    n: u32,
    oversubscribed: bool,
    go: Arc<AtomicBool>,
    /// `H_ENTERED` messages received and not yet consumed.
    entered: Arc<AtomicU32>,
}

impl T {
    /// Waits for `ev`, polling; panics after the bound.
    fn wait(&self, mut ev: CollHandle<'_>, what: &str) {
        let deadline = Instant::now() + wait_bound();
        let mut i = 0u32;
        while !ev.test().unwrap_or_else(|e| panic!("{what}: {e}")) {
            gex::poll().expect("poll");
            i = i.wrapping_add(1);
            if self.oversubscribed || i.is_multiple_of(16) {
                std::thread::yield_now();
            }
            if i.is_multiple_of(256) && Instant::now() > deadline {
                panic!(
                    "rank {}: timed out after {:?} waiting for {what}",
                    self.me,
                    wait_bound()
                );
            }
        }
    }

    fn wait_all(&self, evs: &mut [CollHandle<'_>], what: &str) {
        let deadline = Instant::now() + wait_bound();
        let mut i = 0u32;
        while !CollHandle::test_all(evs).unwrap_or_else(|e| panic!("{what}: {e}")) {
            gex::poll().expect("poll");
            i = i.wrapping_add(1);
            if self.oversubscribed || i.is_multiple_of(16) {
                std::thread::yield_now();
            }
            if i.is_multiple_of(256) && Instant::now() > deadline {
                panic!(
                    "rank {}: timed out after {:?} waiting for {what}",
                    self.me,
                    wait_bound()
                );
            }
        }
    }

    /// Polls until `cond`; panics after the bound.
    fn wait_for(&self, what: &str, mut cond: impl FnMut() -> bool) {
        let deadline = Instant::now() + wait_bound();
        let mut i = 0u32;
        while !cond() {
            gex::poll().expect("poll");
            i = i.wrapping_add(1);
            if self.oversubscribed || i.is_multiple_of(16) {
                std::thread::yield_now();
            }
            if i.is_multiple_of(256) && Instant::now() > deadline {
                panic!("rank {}: timed out waiting for {what}", self.me);
            }
        }
    }

    fn barrier(&self, tm: &Tm) {
        self.wait(
            barrier_nb(tm, Flags::empty()).expect("barrier_nb"),
            "barrier",
        );
    }
}

fn mix(a: u64, b: u64) -> u64 {
    let mut r = Rng::new(a ^ b.rotate_left(29) ^ 0x5bd1_e995);
    r.next_u64()
}

/// The jobranks of a team's members in rank order.
fn members(tm: &Tm) -> Vec<Rank> {
    (0..tm.size())
        .map(|r| tm.rank_to_jobrank(r).unwrap())
        .collect()
}

// ---------------------------------------------------------------- barriers

fn barriers(t: &T) {
    let tm = &t.job.tm;
    let e = barrier_nb(tm, Flags::IMMEDIATE).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadArg);

    // Release/acquire: a put made before entering is visible after leaving.
    let (me, n) = (t.me, t.n);
    for round in 0..24u32 {
        let target = (me + 1 + round) % n;
        let v = [u64::from(round), u64::from(me)];
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_ne_bytes()).collect();
        tm.put_blocking(
            target,
            SLOTS + 16 * me as usize,
            &bytes[..],
            Flags::PEER_SEG_OFFSET,
        )
        .expect("put");
        t.barrier(tm);
        let writer = (me + 2 * n - 1 - round % n) % n;
        let mut got = [0u8; 16];
        t.job
            .seg
            .read(SLOTS + 16 * writer as usize, &mut got)
            .unwrap();
        let r = u64::from_ne_bytes(got[..8].try_into().unwrap());
        let w = u64::from_ne_bytes(got[8..].try_into().unwrap());
        assert_eq!(
            (r, w),
            (u64::from(round), u64::from(writer)),
            "round {round}: the put of rank {writer} is not visible after the barrier"
        );
    }

    // Many barriers in flight on one team.
    let mut evs: Vec<CollHandle<'static>> = (0..10)
        .map(|_| barrier_nb(tm, Flags::empty()).unwrap())
        .collect();
    t.wait_all(&mut evs, "10 barriers in flight");
}

/// Barriers over several teams at once, with data: in each round every
/// member puts (round, its jobrank) into every member's segment (team `i`
/// of `teams` in its own region, rounds alternating between two halves),
/// then enters one barrier per team, in an order that differs between
/// ranks, and sometimes a second one; after syncing them it reads every
/// member's value in its own segment. A value from the round before, or a
/// torn one, means the barrier did not order the puts. The two halves
/// suffice: a member cannot start round r + 2 before every member entered
/// round r + 1's barrier, which each does after its checks of round r.
fn team_barriers(t: &T, teams: &[&Tm], rounds: u32) {
    assert!(teams.len() * TEAM_STRIDE <= 64 << 10);
    let me = t.me;
    let region = |i: usize, round: u32, jobrank: Rank| {
        TEAM_SLOTS
            + i * TEAM_STRIDE
            + (round as usize % 2) * (TEAM_STRIDE / 2)
            + 16 * jobrank as usize
    };
    for round in 0..rounds {
        for (i, tm) in teams.iter().enumerate() {
            let bytes: Vec<u8> = [u64::from(round) + 1, u64::from(me)]
                .iter()
                .flat_map(|x| x.to_ne_bytes())
                .collect();
            for r in 0..tm.size() {
                tm.put_blocking(r, region(i, round, me), &bytes[..], Flags::PEER_SEG_OFFSET)
                    .expect("put");
            }
        }
        let mut evs: Vec<CollHandle<'static>> = Vec::new();
        let k = teams.len();
        for j in 0..k {
            let tm = teams[(j + me as usize + round as usize) % k];
            evs.push(barrier_nb(tm, Flags::empty()).expect("barrier_nb"));
            if round % 3 == 1 {
                evs.push(barrier_nb(tm, Flags::empty()).expect("second barrier_nb"));
            }
        }
        if round % 2 == 0 {
            t.wait_all(&mut evs, "barriers over several teams");
        } else {
            for ev in evs {
                t.wait(ev, "one of several barriers");
            }
        }
        for (i, tm) in teams.iter().enumerate() {
            for j in members(tm) {
                let mut got = [0u8; 16];
                t.job.seg.read(region(i, round, j), &mut got).unwrap();
                let r = u64::from_ne_bytes(got[..8].try_into().unwrap());
                let w = u64::from_ne_bytes(got[8..].try_into().unwrap());
                assert_eq!(
                    (r, w),
                    (u64::from(round) + 1, u64::from(j)),
                    "rank {me}, team {i} (members {:?}), round {round}: the put of jobrank {j} is not visible after the barrier",
                    members(tm)
                );
            }
        }
    }
}

/// Whether barriers over `tm` should use shared memory: every member
/// shares this process's neighbourhood (the whole job on smp), two or more
/// members, not forced onto Active Messages (and a channel was free,
/// which the callers make sure of).
fn expect_shm(tm: &Tm) -> bool {
    let forced = std::env::var("GEX_COLL_FORCE_AM").is_ok_and(|v| v == "1");
    let nbrhd: Vec<Rank> = gex::system::query_nbrhd_info()
        .unwrap()
        .members
        .iter()
        .map(|m| m.jobrank)
        .collect();
    !forced && tm.size() > 1 && members(tm).iter().all(|j| nbrhd.contains(j))
}

/// Team turnover: the shared-memory channels are per team and reused once
/// a team is destroyed, with counters that kept counting under the teams
/// before; and when every channel is taken, new teams fall back to Active
/// Messages. Barriers with data checks throughout.
fn team_turnover(t: &T) {
    let (me, n) = (t.me, t.n);
    let tm = &t.job.tm;
    // Two disjoint teams (by parity) doing different numbers of barriers,
    // so that the channel they shared has different counts on members.
    let half = tm_split(tm, Some((me % 2) as i32), 0, None, Flags::TM_NO_SCRATCH)
        .unwrap()
        .unwrap();
    for _ in 0..(3 + 4 * (me % 2)) {
        t.barrier(&half);
    }
    tm_destroy(half, Flags::empty()).unwrap();
    // The whole job, then reversed, most likely on that channel again.
    let all = tm_split(tm, Some(0), -(me as i32), None, Flags::TM_NO_SCRATCH)
        .unwrap()
        .unwrap();
    assert_eq!(all.rank(), n - 1 - me);
    team_barriers(t, &[&all, tm], 6);
    // More teams than channels: the later ones use Active Messages.
    let many: Vec<Tm> = (0..70)
        .map(|i| {
            tm_split(tm, Some((me % 3) as i32), i, None, Flags::TM_NO_SCRATCH)
                .unwrap()
                .unwrap()
        })
        .collect();
    // Live teams hold channels: the first of these gets one, the last
    // cannot (63 channels for derived teams, more teams than that alive).
    assert_eq!(
        barrier_uses_shared_memory(&many[0]).unwrap(),
        expect_shm(&many[0])
    );
    assert!(!barrier_uses_shared_memory(&many[69]).unwrap());
    assert_eq!(
        barrier_uses_shared_memory(&all).unwrap(),
        expect_shm(&all),
        "the whole job reusing a channel"
    );
    team_barriers(t, &[&many[0], &many[40], &many[69], &all], 4);
    // Data collectives on a team without a channel (across pretend hosts,
    // a hierarchy whose local teams use Active Messages under the keys
    // reserved at initiation), none waiting at initiation.
    no_wait_at_initiation(t, &many[69], 69, 0x7117);
    for m in many {
        tm_destroy(m, Flags::empty()).unwrap();
    }
    team_barriers(t, &[&all], 3);
    tm_destroy(all, Flags::empty()).unwrap();
}

// ------------------------------------------------------ GASNet-1 barrier

fn kind(r: gex::Result<()>) -> Option<ErrorKind> {
    r.err().map(|e| e.kind())
}

fn g1_barrier(t: &T) {
    let (me, n) = (t.me, t.n);
    let mm = Some(ErrorKind::BarrierMismatch);
    let w = |id: i32, flags: i32| kind(barrier_wait(id, flags));

    // Matching named and anonymous barriers.
    for i in 0..20 {
        barrier_notify(i, 0).unwrap();
        assert_eq!(w(i, 0), None, "named barrier {i}");
        barrier_notify(0, BARRIERFLAG_ANONYMOUS).unwrap();
        assert_eq!(w(123, BARRIERFLAG_ANONYMOUS), None, "anonymous barrier");
    }
    // Anonymous matches named: even ranks anonymous, odd named 5.
    let f = if me % 2 == 0 {
        BARRIERFLAG_ANONYMOUS
    } else {
        0
    };
    barrier_notify(5, f).unwrap();
    assert_eq!(w(5, f), None, "anonymous and named 5");
    // Different names: a mismatch everywhere (when there are two names).
    barrier_notify(me as i32, 0).unwrap();
    assert_eq!(
        w(me as i32, 0),
        if n > 1 { mm } else { None },
        "names differ"
    );
    // Named ids 7 on all but one anonymous rank: fine.
    let f = if me == n - 1 {
        BARRIERFLAG_ANONYMOUS
    } else {
        0
    };
    barrier_notify(7, f).unwrap();
    assert_eq!(w(7, f), None);
    // The MISMATCH flag on one rank: a mismatch everywhere.
    let f = if me == n - 1 { BARRIERFLAG_MISMATCH } else { 0 };
    barrier_notify(3, f).unwrap();
    assert_eq!(w(3, f), mm, "MISMATCH flag on rank {}", n - 1);
    // The wait's flags may differ from the notify's (the reference's rule,
    // API.md "Leniencies"): a named notify, an anonymous wait on rank 0.
    barrier_notify(4, 0).unwrap();
    let got = if me == 0 {
        w(4, BARRIERFLAG_ANONYMOUS)
    } else {
        w(4, 0)
    };
    assert_eq!(got, None, "wait flags differ");
    assert_eq!(barrier_result(), Some(4), "the barrier's name");
    // An anonymous notify on rank 0, a named wait there: checked against
    // the others' name; UNNAMED everywhere: no name.
    let f = if me == 0 { BARRIERFLAG_ANONYMOUS } else { 0 };
    barrier_notify(6, f).unwrap();
    assert_eq!(w(6, 0), None, "anonymous notify, named wait");
    assert_eq!(barrier_result(), (n > 1).then_some(6));
    barrier_notify(0, BARRIERFLAG_UNNAMED).unwrap();
    assert_eq!(w(0, BARRIERFLAG_UNNAMED), None, "unnamed");
    assert_eq!(barrier_result(), None);
    assert_eq!(barrier_blocking(12, 0).err().map(|e| e.kind()), None);
    assert_eq!(barrier_result(), Some(12));
    // A local mismatch: the wait's id differs from the barrier's name
    // (only that rank sees it).
    barrier_notify(4, 0).unwrap();
    let got = if me == 0 { w(5, 0) } else { w(4, 0) };
    assert_eq!(got, if me == 0 { mm } else { None }, "wait id differs");
    // And everything is back in step.
    barrier_notify(9, 0).unwrap();
    assert_eq!(w(9, 0), None);

    // Bad flags are an error. (A second notify, or a wait or try without a
    // notify, is fatal as in the spec: the `faults` program's `barrier-*`
    // modes check that the job dies with a message.)
    assert_eq!(kind(barrier_notify(0, 8)), Some(ErrorKind::BadArg));
    barrier_notify(1, 0).unwrap();
    assert_eq!(w(1, 0), None);

    // NOT_READY from try while rank 1 has not notified: rank 1 notifies
    // only once rank 0 saw NOT_READY and said so.
    if n >= 2 {
        if me == 1 {
            t.wait_for("rank 0's go", || t.go.load(SeqCst));
            t.go.store(false, SeqCst);
        }
        barrier_notify(11, 0).unwrap();
        if me == 0 {
            assert_eq!(kind(barrier_try(11, 0)), Some(ErrorKind::NotReady));
            assert_eq!(kind(barrier_try(11, 0)), Some(ErrorKind::NotReady));
            t.job
                .tm
                .request_short(1, H_GO, Flags::empty(), &[])
                .expect("go");
        }
        let mut r = kind(barrier_try(11, 0));
        t.wait_for("a successful barrier try", || {
            if r == Some(ErrorKind::NotReady) {
                r = kind(barrier_try(11, 0));
            }
            r != Some(ErrorKind::NotReady)
        });
        assert_eq!(r, None, "try after everyone notified");
        // A try that completes with a mismatch.
        barrier_notify(me as i32 + 100, 0).unwrap();
        let mut r = kind(barrier_try(me as i32 + 100, 0));
        t.wait_for("a mismatching try", || {
            if r == Some(ErrorKind::NotReady) {
                r = kind(barrier_try(me as i32 + 100, 0));
            }
            r != Some(ErrorKind::NotReady)
        });
        assert_eq!(r, mm);
    }
}

// --------------------------------------------------------------- broadcast

const BCAST_SIZES: &[usize] = &[0, 1, 7, 64, 4096, 65535, 65536 + 13, 300_000, 1 << 20];

fn broadcasts(t: &T, tm: &Tm, label: u64, sizes: &[usize]) {
    let mut rng = Rng::new(label ^ 0xB0CA57);
    for (case, &size) in sizes.iter().enumerate() {
        let root = rng.below(u64::from(tm.size())) as Rank;
        let in_place = rng.below(3) == 0;
        let tag = mix(label, case as u64);
        let data = payload(tag, size);
        let mut dst = vec![0xeeu8; size];
        let ev = if tm.rank() == root {
            if in_place {
                dst.copy_from_slice(&data);
                broadcast_nb(tm, root, &mut dst, None, Flags::empty())
            } else {
                broadcast_nb(tm, root, &mut dst, Some(&data), Flags::empty())
            }
        } else {
            broadcast_nb(tm, root, &mut dst, None, Flags::empty())
        }
        .expect("broadcast_nb");
        t.wait(ev, "broadcast");
        check_payload(
            &format!("broadcast of {size} bytes from root {root}"),
            tag,
            &dst,
        );
    }
}

/// Broadcasts, reductions and barriers over teams that span
/// neighbourhoods when the job does (`gex-run --hosts host-a,host-b`:
/// the hierarchical algorithms, inside each host then between them):
/// the primordial team, the job with reversed ranks (so a group's lowest
/// team rank is its highest jobrank), the halves by parity (which
/// interleave the hosts) and every rank but 0. Every root in turn, sizes
/// around the inline slot and its pieces, non-blocking with a separate
/// source and blocking in place, reductions (`u64` sums and `f64` maxima,
/// reduce-to-one with the root in place, reduce-to-all), scatter and
/// gather from and to every root and gather-all and exchange, blocks of
/// 1 B to 30 000 B (`HIER_SIZES`, non-blocking and blocking forms in
/// turn), barriers with data checks; every byte and element checked.
fn across_neighbourhoods(t: &T, label: u64) {
    let tm = &t.job.tm;
    let me = t.me;
    let no = Flags::TM_NO_SCRATCH;
    let rev = tm_split(tm, Some(0), -(me as i32), None, no)
        .unwrap()
        .unwrap();
    let half = tm_split(tm, Some((me % 2) as i32), 0, None, no)
        .unwrap()
        .unwrap();
    let rest = tm_split(tm, (me != 0).then_some(0), 0, None, no).unwrap();
    let mut teams: Vec<&Tm> = vec![tm, &rev, &half];
    teams.extend(rest.as_ref());
    for (ti, team) in teams.iter().enumerate() {
        no_wait_at_initiation(t, team, ti, label ^ 0x1417);
        let (r, m) = (team.rank(), team.size());
        for root in 0..m {
            let tag = |x: u64| mix(label ^ (ti as u64) << 40, u64::from(root) << 32 ^ x);
            for &size in &[1usize, 8, 1024, 1025, 5000, 70_000] {
                let what = format!("team {ti} broadcast of {size} bytes from {root}");
                let data = payload(tag(size as u64), size);
                let mut dst = vec![0xeeu8; size];
                let src = (r == root).then_some(&data[..]);
                t.wait(
                    broadcast_nb(team, root, &mut dst, src, Flags::empty()).unwrap(),
                    &what,
                );
                check_payload(&what, tag(size as u64), &dst);
                let mut dst = if r == root {
                    data.clone()
                } else {
                    vec![0xeeu8; size]
                };
                broadcast(team, root, &mut dst, None, Flags::empty()).unwrap();
                check_payload(&format!("blocking {what}"), tag(size as u64), &dst);
            }
            for &count in &[1usize, 200, 3000] {
                let val = |j: Rank, i: usize| tag((u64::from(j) << 24) ^ i as u64) >> 8;
                let mine: Vec<u64> = (0..count).map(|i| val(r, i)).collect();
                let sum: Vec<u64> = (0..count)
                    .map(|i| (0..m).map(|j| val(j, i)).sum())
                    .collect();
                let what = format!("team {ti} u64 sums x{count} to {root}");
                let mut out = vec![0u64; count];
                let h = if r == root && count % 2 == 1 {
                    // In place on the root.
                    out.copy_from_slice(&mine);
                    reduce_to_one_nb_typed(
                        team,
                        root,
                        Some(&mut out[..]),
                        None,
                        &Op::Add.into(),
                        Flags::empty(),
                    )
                } else {
                    let d = (r == root).then_some(&mut out[..]);
                    reduce_to_one_nb_typed(
                        team,
                        root,
                        d,
                        Some(&mine[..]),
                        &Op::Add.into(),
                        Flags::empty(),
                    )
                };
                t.wait(h.unwrap(), &what);
                if r == root {
                    assert_eq!(out, sum, "{what}");
                }
                let fval = |j: Rank, i: usize| (val(j, i) % 1_000_003) as f64 - 500_000.0;
                let fmine: Vec<f64> = (0..count).map(|i| fval(r, i)).collect();
                let fmax: Vec<f64> = (0..count)
                    .map(|i| (0..m).map(|j| fval(j, i)).fold(f64::MIN, f64::max))
                    .collect();
                let mut all = vec![0f64; count];
                reduce_to_all_typed(
                    team,
                    &mut all,
                    Some(&fmine),
                    &Op::Max.into(),
                    Flags::empty(),
                )
                .unwrap();
                assert_eq!(all, fmax, "team {ti} f64 maxima x{count} to all");
                let mut all = vec![0u64; count];
                t.wait(
                    reduce_to_all_nb_typed(
                        team,
                        &mut all,
                        Some(&mine),
                        &Op::Add.into(),
                        Flags::empty(),
                    )
                    .unwrap(),
                    "u64 sums to all",
                );
                assert_eq!(all, sum, "team {ti} u64 sums x{count} to all");
            }
            for (si, &nb) in HIER_SIZES.iter().enumerate() {
                rooted_data(t, team, ti, root, nb, si % 2 == 1, tag(0xDA7A ^ nb as u64));
            }
        }
        for (si, &nb) in HIER_SIZES.iter().enumerate() {
            unrooted_data(
                t,
                team,
                ti,
                nb,
                si % 2 == 0,
                mix(label ^ 0xA11, (ti as u64) << 32 ^ nb as u64),
            );
        }
    }
    team_barriers(t, &teams, 4);
    drop(teams);
    if let Some(x) = rest {
        tm_destroy(x, Flags::empty()).unwrap();
    }
    tm_destroy(half, Flags::empty()).unwrap();
    tm_destroy(rev, Flags::empty()).unwrap();
}

/// NOSYNC broadcasts and reductions do not wait for anyone at initiation
/// (issue #16), across neighbourhoods as well: every member but one
/// (`held`: a broadcast's root, or the last member of a reduction)
/// initiates, and only after its initiation returned tells `held` so with
/// an Active Message; `held` initiates only once it heard from every other
/// member. Where an initiation waits for `held` (a representative waiting
/// for its group or the other representatives), `held`'s bounded wait
/// fails, naming it. Then every byte and element is checked.
fn no_wait_at_initiation(t: &T, team: &Tm, ti: usize, label: u64) {
    let (r, m) = (team.rank(), team.size());
    let nosync = Flags::COLL_IN_NOSYNC | Flags::COLL_OUT_NOSYNC;
    for (k, &size) in [8usize, 1025, 70_000].iter().enumerate() {
        let root = ((k as u32) * 2 + 1) % m;
        let tag = mix(
            label ^ (ti as u64) << 40,
            (u64::from(root) << 32) ^ size as u64,
        );
        let what = format!("team {ti} NOSYNC broadcast of {size} bytes from {root}");
        let data = payload(tag, size);
        let mut dst = vec![0xeeu8; size];
        let src = (r == root).then_some(&data[..]);
        held_last(t, team, root, &what, || {
            broadcast_nb(team, root, &mut dst, src, nosync).unwrap()
        });
        check_payload(&what, tag, &dst);
    }
    for (k, &count) in [1usize, 300].iter().enumerate() {
        let held = m - 1 - (k as u32 % m);
        let val = |j: Rank, i: usize| mix(label ^ 0x5A, (u64::from(j) << 24) ^ i as u64) >> 8;
        let sum: Vec<u64> = (0..count)
            .map(|i| (0..m).map(|j| val(j, i)).sum())
            .collect();
        let mine: Vec<u64> = (0..count).map(|i| val(r, i)).collect();
        let what = format!("team {ti} NOSYNC u64 sums x{count} to all (member {held} last)");
        let mut out = vec![0u64; count];
        held_last(t, team, held, &what, || {
            reduce_to_all_nb_typed(team, &mut out, Some(&mine), &Op::Add.into(), nosync).unwrap()
        });
        assert_eq!(out, sum, "{what}");
        let root = k as u32 % m;
        let what = format!("team {ti} NOSYNC u64 sums x{count} to {root} (member {held} last)");
        let mut out = vec![0u64; count];
        let d = (r == root).then_some(&mut out[..]);
        held_last(t, team, held, &what, || {
            reduce_to_one_nb_typed(team, root, d, Some(&mine), &Op::Add.into(), nosync).unwrap()
        });
        if r == root {
            assert_eq!(out, sum, "{what}");
        }
    }
    let (ru, mu) = (r as usize, m as usize);
    for (k, &nb) in [8usize, 1025].iter().enumerate() {
        let tag = |i: usize, j: usize| {
            mix(
                label ^ (ti as u64) << 40 ^ nb as u64,
                (i as u64) << 20 ^ j as u64,
            )
        };
        let root = (k as u32 + 1) % m;
        let held = m - 1 - (k as u32 % m);
        // Scatter, the root held back.
        let what = format!("team {ti} NOSYNC scatter of {nb}-byte blocks from {root}");
        let src: Vec<u8> = (0..mu).flat_map(|j| payload(tag(mu, j), nb)).collect();
        let s = (r == root).then_some(&src[..]);
        let mut dst = vec![0xeeu8; nb];
        held_last(t, team, root, &what, || {
            scatter_nb(team, root, &mut dst, s, nosync).unwrap()
        });
        check_payload(&what, tag(mu, ru), &dst);
        // Gather, another member held back.
        let what =
            format!("team {ti} NOSYNC gather of {nb}-byte blocks to {root} (member {held} last)");
        let mine = payload(tag(ru, 3), nb);
        let mut all = vec![0xeeu8; nb * mu];
        let d = (r == root).then_some(&mut all[..]);
        held_last(t, team, held, &what, || {
            gather_nb(team, root, d, &mine, nosync).unwrap()
        });
        if r == root {
            for j in 0..mu {
                check_payload(&what, tag(j, 3), &all[j * nb..(j + 1) * nb]);
            }
        }
        // Gather-all and exchange.
        let what = format!("team {ti} NOSYNC gather_all of {nb}-byte blocks (member {held} last)");
        let mine = payload(tag(ru, mu), nb);
        let mut all = vec![0xeeu8; nb * mu];
        held_last(t, team, held, &what, || {
            gather_all_nb(team, &mut all, &mine, nosync).unwrap()
        });
        for j in 0..mu {
            check_payload(&what, tag(j, mu), &all[j * nb..(j + 1) * nb]);
        }
        let what = format!("team {ti} NOSYNC exchange of {nb}-byte blocks (member {held} last)");
        let src: Vec<u8> = (0..mu).flat_map(|j| payload(tag(ru, j), nb)).collect();
        let mut dst = vec![0xeeu8; nb * mu];
        held_last(t, team, held, &what, || {
            exchange_nb(team, &mut dst, &src, nosync).unwrap()
        });
        for i in 0..mu {
            check_payload(&what, tag(i, ru), &dst[i * nb..(i + 1) * nb]);
        }
    }
}

/// Runs `init` (the initiation of a collective over `team`) on every
/// member, team rank `held` last: each other member tells `held` once its
/// initiation returned, and `held` waits (bounded) for all of them first;
/// then waits for the handle.
fn held_last<'a>(t: &T, team: &Tm, held: Rank, what: &str, init: impl FnOnce() -> CollHandle<'a>) {
    let (r, m) = (team.rank(), team.size());
    if r == held {
        let others = m - 1;
        t.wait_for(
            &format!(
                "{what}: the other {others} members' initiations to return (one waits at \
                 initiation, for team rank {held})"
            ),
            || t.entered.load(SeqCst) >= others,
        );
        t.entered.fetch_sub(others, SeqCst);
        t.wait(init(), what);
    } else {
        let h = init();
        let to = team.rank_to_jobrank(held).unwrap();
        t.job
            .tm
            .request_short(to, H_ENTERED, Flags::empty(), &[])
            .expect("entered");
        t.wait(h, what);
    }
}

/// Block sizes of the data collectives across neighbourhoods: 1 B to
/// tens of KB, odd ones included.
const HIER_SIZES: [usize; 6] = [1, 7, 1024, 1025, 5000, 30_000];

/// Scatter and gather of `nb`-byte blocks from/to `root` over `team`
/// (team `ti` of `across_neighbourhoods`), every byte checked;
/// `blocking`: the blocking forms.
fn rooted_data(t: &T, team: &Tm, ti: usize, root: Rank, nb: usize, blocking: bool, seed: u64) {
    let (r, m) = (team.rank() as usize, team.size() as usize);
    let tag = |i: usize, j: usize| mix(seed, (i as u64) << 20 ^ j as u64);
    let what = format!("team {ti} scatter of {nb}-byte blocks from {root}");
    let src: Vec<u8> = (0..m).flat_map(|j| payload(tag(m, j), nb)).collect();
    let s = (r == root as usize).then_some(&src[..]);
    let mut dst = vec![0xeeu8; nb];
    if blocking {
        scatter(team, root, &mut dst, s, Flags::empty()).unwrap();
    } else {
        t.wait(
            scatter_nb(team, root, &mut dst, s, Flags::empty()).unwrap(),
            &what,
        );
    }
    check_payload(&what, tag(m, r), &dst);
    let what = format!("team {ti} gather of {nb}-byte blocks to {root}");
    let mine = payload(tag(r, 3), nb);
    let mut all = vec![0xeeu8; nb * m];
    let d = (r == root as usize).then_some(&mut all[..]);
    if blocking {
        gather(team, root, d, &mine, Flags::empty()).unwrap();
    } else {
        t.wait(
            gather_nb(team, root, d, &mine, Flags::empty()).unwrap(),
            &what,
        );
    }
    if r == root as usize {
        for j in 0..m {
            check_payload(&what, tag(j, 3), &all[j * nb..(j + 1) * nb]);
        }
    } else {
        assert!(
            all.iter().all(|&b| b == 0xee),
            "{what}: a non-root's dst was written"
        );
    }
}

/// Gather-all and exchange of `nb`-byte blocks over `team`, every byte
/// checked; `blocking`: the blocking forms.
fn unrooted_data(t: &T, team: &Tm, ti: usize, nb: usize, blocking: bool, seed: u64) {
    let (r, m) = (team.rank() as usize, team.size() as usize);
    let tag = |i: usize, j: usize| mix(seed, (i as u64) << 20 ^ j as u64);
    let what = format!("team {ti} gather_all of {nb}-byte blocks");
    let mine = payload(tag(r, m), nb);
    let mut all = vec![0xeeu8; nb * m];
    if blocking {
        gather_all(team, &mut all, &mine, Flags::empty()).unwrap();
    } else {
        t.wait(
            gather_all_nb(team, &mut all, &mine, Flags::empty()).unwrap(),
            &what,
        );
    }
    for j in 0..m {
        check_payload(&what, tag(j, m), &all[j * nb..(j + 1) * nb]);
    }
    // Block j of rank i goes to rank j as block i.
    let what = format!("team {ti} exchange of {nb}-byte blocks");
    let src: Vec<u8> = (0..m).flat_map(|j| payload(tag(r, j), nb)).collect();
    let mut dst = vec![0xeeu8; nb * m];
    if blocking {
        exchange(team, &mut dst, &src, Flags::empty()).unwrap();
    } else {
        t.wait(
            exchange_nb(team, &mut dst, &src, Flags::empty()).unwrap(),
            &what,
        );
    }
    for i in 0..m {
        check_payload(&what, tag(i, r), &dst[i * nb..(i + 1) * nb]);
    }
}

// -------------------------------------------------------------- reductions

/// `a (+) b` element-wise, the test's own typed model.
fn model_op(dt: Dt, op: Op, a: &[u8], b: &[u8]) -> Vec<u8> {
    macro_rules! go {
        ($t:ty, $n:literal, $f:expr) => {
            a.chunks_exact($n)
                .zip(b.chunks_exact($n))
                .flat_map(|(x, y)| {
                    let x = <$t>::from_ne_bytes(x.try_into().unwrap());
                    let y = <$t>::from_ne_bytes(y.try_into().unwrap());
                    let f: fn($t, $t) -> $t = $f;
                    f(x, y).to_ne_bytes()
                })
                .collect()
        };
    }
    macro_rules! int {
        ($t:ty, $n:literal) => {
            match op {
                Op::Add => go!($t, $n, |x, y| x.wrapping_add(y)),
                Op::Mult => go!($t, $n, |x, y| x.wrapping_mul(y)),
                Op::Min => go!($t, $n, |x, y| if x <= y { x } else { y }),
                Op::Max => go!($t, $n, |x, y| if x >= y { x } else { y }),
                Op::And => go!($t, $n, |x, y| x & y),
                Op::Or => go!($t, $n, |x, y| x | y),
                Op::Xor => go!($t, $n, |x, y| x ^ y),
                _ => unreachable!(),
            }
        };
    }
    macro_rules! float {
        ($t:ty, $n:literal) => {
            match op {
                Op::Add => go!($t, $n, |x, y| x + y),
                Op::Mult => go!($t, $n, |x, y| x * y),
                Op::Min => go!($t, $n, |x, y| if x <= y { x } else { y }),
                Op::Max => go!($t, $n, |x, y| if x >= y { x } else { y }),
                _ => unreachable!(),
            }
        };
    }
    match dt {
        Dt::I32 => int!(i32, 4),
        Dt::U32 => int!(u32, 4),
        Dt::I64 => int!(i64, 8),
        Dt::U64 => int!(u64, 8),
        Dt::Flt => float!(f32, 4),
        Dt::Dbl => float!(f64, 8),
        Dt::User => unreachable!(),
    }
}

/// Rank `r`'s input: exact in floating point whatever the association
/// (small integers to add, powers of two to multiply).
fn input(dt: Dt, op: Op, r: Rank, count: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed ^ u64::from(r).wrapping_mul(0x9E37_79B9));
    let mut out = Vec::new();
    for _ in 0..count {
        let f = match op {
            Op::Add => rng.below(33) as f64 - 16.0,
            Op::Mult => [1.0, 2.0, 0.5, -1.0][rng.below(4) as usize],
            _ => (rng.below(20001) as f64 - 10000.0) * 0.37,
        };
        match dt {
            Dt::Flt => out.extend((f as f32).to_ne_bytes()),
            Dt::Dbl => out.extend(f.to_ne_bytes()),
            _ => out.extend(&rng.next_u64().to_ne_bytes()[..dt.size().unwrap()]),
        }
    }
    out
}

fn model_reduce(
    n: u32,
    f: impl Fn(Rank) -> Vec<u8>,
    op: impl Fn(&[u8], &[u8]) -> Vec<u8>,
) -> Vec<u8> {
    let mut acc = f(0);
    for r in 1..n {
        acc = op(&acc, &f(r));
    }
    acc
}

/// One reduce-to-one (random root, sometimes in place) and one
/// reduce-to-all (sometimes in place) against `expect`.
#[allow(clippy::too_many_arguments)]
fn reduce_pair(
    t: &T,
    tm: &Tm,
    rng: &mut Rng,
    dt: Dt,
    dt_sz: usize,
    op: &ReduceOp,
    mine: &[u8],
    expect: &[u8],
    what: &str,
) {
    let count = mine.len() / dt_sz;
    let root = rng.below(u64::from(tm.size())) as Rank;
    let in_place = rng.below(2) == 0;
    let mut dst = vec![0u8; mine.len()];
    let ev = if tm.rank() == root {
        if in_place {
            dst.copy_from_slice(mine);
            reduce_to_one_nb(
                tm,
                root,
                Some(&mut dst),
                None,
                dt,
                dt_sz,
                count,
                op,
                Flags::empty(),
            )
        } else {
            reduce_to_one_nb(
                tm,
                root,
                Some(&mut dst),
                Some(mine),
                dt,
                dt_sz,
                count,
                op,
                Flags::empty(),
            )
        }
    } else {
        reduce_to_one_nb(
            tm,
            root,
            None,
            Some(mine),
            dt,
            dt_sz,
            count,
            op,
            Flags::empty(),
        )
    }
    .unwrap_or_else(|e| panic!("{what}: {e}"));
    t.wait(ev, what);
    if tm.rank() == root {
        assert!(
            dst == expect,
            "{what}: reduce-to-one at root {root} differs from the model"
        );
    }
    let in_place = rng.below(2) == 0;
    let mut dst = vec![0u8; mine.len()];
    let ev = if in_place {
        dst.copy_from_slice(mine);
        reduce_to_all_nb(tm, &mut dst, None, dt, dt_sz, count, op, Flags::empty())
    } else {
        reduce_to_all_nb(
            tm,
            &mut dst,
            Some(mine),
            dt,
            dt_sz,
            count,
            op,
            Flags::empty(),
        )
    }
    .unwrap_or_else(|e| panic!("{what}: {e}"));
    t.wait(ev, what);
    assert!(
        dst == expect,
        "{what}: reduce-to-all differs from the model"
    );
}

/// x -> a*x + b on pairs of u32; `L (+) R` is "L then R" (not commutative).
fn affine(x: &[u8], y: &mut [u8], count: usize, dt_sz: usize) {
    assert_eq!(x.len(), count * dt_sz);
    for i in 0..x.len() / 8 {
        let rd = |s: &[u8], j: usize| u32::from_ne_bytes(s[j..j + 4].try_into().unwrap());
        let (al, bl, ar, br) = (
            rd(x, 8 * i),
            rd(x, 8 * i + 4),
            rd(y, 8 * i),
            rd(y, 8 * i + 4),
        );
        y[8 * i..8 * i + 4].copy_from_slice(&ar.wrapping_mul(al).to_ne_bytes());
        y[8 * i + 4..8 * i + 8]
            .copy_from_slice(&ar.wrapping_mul(bl).wrapping_add(br).to_ne_bytes());
    }
}

/// One built-in reduction of `count` elements over `tm`, to one and to
/// all ([`reduce_pair`]), checked against the sequential model; `what`
/// starts with `prefix`.
#[allow(clippy::too_many_arguments)]
fn builtin_reduction(
    t: &T,
    tm: &Tm,
    rng: &mut Rng,
    dt: Dt,
    op: Op,
    count: usize,
    label: u64,
    prefix: &str,
) {
    let (me, n) = (tm.rank(), tm.size());
    let seed = mix(label, (dt as u64) << 32 ^ (op as u64) << 8 ^ count as u64);
    let mine = input(dt, op, me, count, seed);
    let expect = model_reduce(
        n,
        |r| input(dt, op, r, count, seed),
        |a, b| model_op(dt, op, a, b),
    );
    let what = format!("{prefix}{} {} x{count} over {n}", dt.name(), op.name());
    let dt_sz = dt.size().unwrap();
    reduce_pair(t, tm, rng, dt, dt_sz, &op.into(), &mine, &expect, &what);
}

fn reductions(t: &T, tm: &Tm, label: u64, counts: &[usize]) {
    let n = tm.size();
    let me = tm.rank();
    let mut rng = Rng::new(label ^ 0x4ED);
    // Every built-in type with every operator valid for reductions.
    for dt in Dt::BUILTIN {
        for op in Op::ALL {
            if !op.valid_for_reduction(dt) || matches!(op, Op::User | Op::UserNc) {
                continue;
            }
            for &count in counts {
                builtin_reduction(t, tm, &mut rng, dt, op, count, label, "");
            }
        }
    }
    // GEX_OP_USER (commutative): wrapping u64 sums through a user function.
    let user_add = ReduceOp::user(|x, y, count| {
        assert_eq!(x.len(), count * 8);
        for (a, b) in x.chunks_exact(8).zip(y.chunks_exact_mut(8)) {
            let s = u64::from_ne_bytes(a.try_into().unwrap())
                .wrapping_add(u64::from_ne_bytes((&*b).try_into().unwrap()));
            b.copy_from_slice(&s.to_ne_bytes());
        }
    });
    for &count in counts {
        let seed = mix(label, 0xADD ^ count as u64);
        let mine = input(Dt::U64, Op::Xor, me, count, seed);
        let expect = model_reduce(
            n,
            |r| input(Dt::U64, Op::Xor, r, count, seed),
            |a, b| model_op(Dt::U64, Op::Add, a, b),
        );
        reduce_pair(
            t,
            tm,
            &mut rng,
            Dt::U64,
            8,
            &user_add,
            &mine,
            &expect,
            "GEX_OP_USER u64 add",
        );
    }
    // GEX_DT_USER of odd sizes, bytewise wrapping sums (commutative).
    for dt_sz in [3usize, 17, 70_000] {
        let byte_add = ReduceOp::user(move |x, y, count| {
            assert_eq!(y.len(), count * dt_sz);
            for (a, b) in x.iter().zip(y.iter_mut()) {
                *b = b.wrapping_add(*a);
            }
        });
        let count = if dt_sz > 1000 { 2 } else { 5 };
        let seed = mix(label, dt_sz as u64);
        let f = |r: Rank| payload(mix(seed, u64::from(r)), dt_sz * count);
        let expect = model_reduce(n, f, |a, b| {
            a.iter().zip(b).map(|(x, y)| x.wrapping_add(*y)).collect()
        });
        reduce_pair(
            t,
            tm,
            &mut rng,
            Dt::User,
            dt_sz,
            &byte_add,
            &f(me),
            &expect,
            &format!("GEX_DT_USER of {dt_sz} bytes"),
        );
    }
    // GEX_OP_USER_NC: affine-map composition must follow rank order; as a
    // user type of 8 bytes, of 72 KB, and over GEX_DT_U64.
    for (dt, dt_sz, count) in [
        (Dt::User, 8usize, 33usize),
        (Dt::User, 72_000, 2),
        (Dt::U64, 8, 100),
    ] {
        let nc = ReduceOp::user_nc(move |x, y, count| affine(x, y, count, dt_sz));
        let seed = mix(label, 0x0C ^ dt_sz as u64);
        let f = |r: Rank| payload(mix(seed, u64::from(r)), dt_sz * count);
        let expect = model_reduce(n, f, |a, b| {
            let mut y = b.to_vec();
            affine(a, &mut y, a.len() / dt_sz, dt_sz);
            y
        });
        reduce_pair(
            t,
            tm,
            &mut rng,
            dt,
            dt_sz,
            &nc,
            &f(me),
            &expect,
            &format!("GEX_OP_USER_NC {} x{dt_sz}", dt.name()),
        );
    }
    // Determinism: inexact floating-point sums associate the same way in
    // every call, and every member gets the same bits (by recursive
    // doubling for the small vector, over the tree for the large one).
    for count in [3usize, 5000] {
        let mine: Vec<f64> = (0..count)
            .map(|i| ((i as f64 + 1.0) * f64::from(me + 1)).sqrt() * 1e-3 + 1e10 * (i % 3) as f64)
            .collect();
        let mut a = vec![0f64; count];
        let mut b = vec![0f64; count];
        for out in [&mut a, &mut b] {
            t.wait(
                reduce_to_all_nb_typed(tm, out, Some(&mine), &Op::Add.into(), Flags::empty())
                    .unwrap(),
                "inexact reduce-to-all",
            );
        }
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a), bits(&b), "two identical reductions differ");
        let mine_bytes: Vec<u8> = a.iter().flat_map(|x| x.to_ne_bytes()).collect();
        let mut all = vec![0u8; mine_bytes.len() * n as usize];
        t.wait(
            gather_all_nb(tm, &mut all, &mine_bytes, Flags::empty()).unwrap(),
            "gather of results",
        );
        for (r, blk) in all.chunks(mine_bytes.len()).enumerate() {
            assert!(
                blk == mine_bytes,
                "rank {r} got different bits from the same reduce-to-all"
            );
        }
    }
    // Typed convenience calls.
    let mine: Vec<f64> = (0..10).map(|i| f64::from(i) + f64::from(me)).collect();
    let mut sum = vec![0f64; 10];
    t.wait(
        reduce_to_all_nb_typed(tm, &mut sum, Some(&mine), &Op::Add.into(), Flags::empty()).unwrap(),
        "typed reduce-to-all",
    );
    let nn = f64::from(n);
    for (i, s) in sum.iter().enumerate() {
        assert_eq!(*s, i as f64 * nn + nn * (nn - 1.0) / 2.0);
    }
    let mut max = [0i32];
    let root = n - 1;
    let d = (me == root).then_some(&mut max[..]);
    t.wait(
        reduce_to_one_nb_typed(
            tm,
            root,
            d,
            Some(&[-(me as i32)][..]),
            &Op::Min.into(),
            Flags::empty(),
        )
        .unwrap(),
        "typed reduce-to-one",
    );
    if me == root {
        assert_eq!(max[0], -(n as i32 - 1));
    }
}

// ------------------------------------------- user operators, large

/// Big-integer addition of whole elements (little-endian, wrapping at the
/// element's `dt_sz` bytes): commutative, and every carry crosses the
/// element, so an element split between two pieces would come out wrong.
fn big_add(x: &[u8], y: &mut [u8], count: usize, dt_sz: usize) {
    assert_eq!(x.len(), count * dt_sz, "user function: x of count elements");
    assert_eq!(y.len(), count * dt_sz, "user function: y of count elements");
    for (xe, ye) in x.chunks_exact(dt_sz).zip(y.chunks_exact_mut(dt_sz)) {
        let mut carry = 0u16;
        for (a, b) in xe.iter().zip(ye.iter_mut()) {
            let s = u16::from(*a) + u16::from(*b) + carry;
            *b = s as u8;
            carry = s >> 8;
        }
    }
}

/// Maps `v -> a*v + b` of `u16` (4 bytes each, `dt_sz` a multiple of 4);
/// `L (+) R` is "L then R": associative, not commutative.
fn affine16(x: &[u8], y: &mut [u8], count: usize, dt_sz: usize) {
    assert_eq!(x.len(), count * dt_sz, "user function: x of count elements");
    assert_eq!(y.len(), count * dt_sz, "user function: y of count elements");
    let rd = |s: &[u8], j: usize| u16::from_ne_bytes([s[j], s[j + 1]]);
    for i in (0..x.len()).step_by(4) {
        let (al, bl, ar, br) = (rd(x, i), rd(x, i + 2), rd(y, i), rd(y, i + 2));
        y[i..i + 2].copy_from_slice(&ar.wrapping_mul(al).to_ne_bytes());
        y[i + 2..i + 4].copy_from_slice(&ar.wrapping_mul(bl).wrapping_add(br).to_ne_bytes());
    }
}

/// Reductions with user-defined operators larger than an inline slot of
/// the shared-memory path: 1 KiB + 8 B to 200 KiB per member of small
/// elements (4 and 8 bytes: 1 KiB pieces on sub-teams; on the primordial
/// team of a one-neighbourhood job, whose chunked reduction takes
/// built-in operators only, gathered through the chunks and combined in
/// rank order), and elements of 1500 and 3000 bytes (gathered and
/// combined in rank order everywhere); a
/// non-commutative operator (`GEX_OP_USER_NC`) and a commutative one
/// (`GEX_OP_USER`), over the primordial team, an odd-sized sub-team and,
/// across hosts, this host's members; to one from every root and to all,
/// in place and not, non-blocking (all in flight, synced in reverse
/// order) and blocking, in MYSYNC and IN/OUT_ALLSYNC. Every byte against
/// the sequential rank-order model. Where every member shares this
/// neighbourhood and the team has a shared-memory channel, no reduction
/// goes over Active Messages (`reductions_over_am` does not move); with
/// `GEX_COLL_FORCE_AM=1` they all do.
fn user_reductions(t: &T, label: u64) {
    let tm = &t.job.tm;
    let (me, n) = (tm.rank(), tm.size());
    // An odd number of members: all, or all but the last.
    let odd_n = if n % 2 == 1 { n } else { n - 1 };
    let odd = tm_split(tm, (me < odd_n).then_some(0), 0, None, Flags::TM_NO_SCRATCH).unwrap();
    // This host's members, where the job spans several.
    let nbrhd = gex::system::query_nbrhd_info().unwrap();
    let local = if (nbrhd.members.len() as u32) < n {
        let color = nbrhd.members.iter().map(|m| m.jobrank).min().unwrap();
        tm_split(tm, Some(color as i32), 0, None, Flags::TM_NO_SCRATCH).unwrap()
    } else {
        tm_split(tm, None, 0, None, Flags::TM_NO_SCRATCH).unwrap()
    };
    // Where the job spans hosts (placed in blocks of consecutive ranks):
    // the whole job in reverse order (each host still a contiguous range
    // of team ranks: non-commutative operators combine by hosts) and
    // with the hosts interleaved (they cannot: the flat tree).
    let spans = (nbrhd.members.len() as u32) < n;
    let split = |key: u32| {
        tm_split(tm, Some(0), key as i32, None, Flags::TM_NO_SCRATCH)
            .unwrap()
            .unwrap()
    };
    let half = n.div_ceil(2);
    let reordered = spans.then(|| (split(n - 1 - me), split((me % half) * 2 + me / half)));
    let forced = std::env::var("GEX_COLL_FORCE_AM").is_ok_and(|v| v == "1");
    // (name, team, seed): a member of some of the teams only must use
    // the same seed as the others.
    let mut teams: Vec<(&str, &Tm, u64)> = vec![("primordial", tm, 0)];
    if let Some(o) = &odd {
        teams.push(("odd sub-team", o, 1));
    }
    if let Some(l) = &local {
        teams.push(("host sub-team", l, 2));
    }
    if let Some((rev, mixed)) = &reordered {
        teams.push(("reversed team", rev, 3));
        teams.push(("hosts interleaved", mixed, 4));
    }
    for (name, team, ti) in teams {
        let before = gex::coll::reductions_over_am();
        user_reductions_on(t, team, name, mix(label, ti));
        let moved = gex::coll::reductions_over_am() - before;
        let shm = expect_shm(team) && barrier_uses_shared_memory(team).unwrap();
        if shm {
            assert_eq!(
                moved,
                0,
                "{name} of {}: {moved} user-operator reductions went over Active Messages \
                 although every member shares the neighbourhood",
                team.size()
            );
        } else if forced && team.size() > 1 {
            assert!(moved > 0, "{name}: GEX_COLL_FORCE_AM=1 but no AM reduction");
        }
    }
    let (rev, mixed) = reordered.unzip();
    for tmx in [odd, local, rev, mixed].into_iter().flatten() {
        tm_destroy(tmx, Flags::empty()).unwrap();
    }
}

fn user_reductions_on(t: &T, tm: &Tm, name: &str, label: u64) {
    let (me, n) = (tm.rank(), tm.size());
    // (element size, elements): the pieces of small elements, and
    // elements larger than a slot.
    let mut cases: Vec<(usize, usize)> = Vec::new();
    for total in [1024 + 8, 4096, 64 << 10, 200 << 10] {
        cases.push((4, total / 4));
        cases.push((8, total / 8));
    }
    for dt_sz in [1500usize, 3000] {
        for count in [1usize, 3, 45] {
            cases.push((dt_sz, count));
        }
    }
    let modes = [
        Flags::empty(),
        Flags::COLL_IN_ALLSYNC | Flags::COLL_OUT_ALLSYNC,
    ];
    for (ci, &(dt_sz, count)) in cases.iter().enumerate() {
        // Non-commutative for 4-byte maps and 1500-byte elements,
        // commutative for the others.
        let nc = dt_sz % 8 != 0 || dt_sz == 1500;
        let op = if nc {
            ReduceOp::user_nc(move |x: &[u8], y: &mut [u8], c: usize| affine16(x, y, c, dt_sz))
        } else {
            ReduceOp::user(move |x: &[u8], y: &mut [u8], c: usize| big_add(x, y, c, dt_sz))
        };
        let model = |a: &[u8], b: &[u8]| -> Vec<u8> {
            let mut y = b.to_vec();
            if nc {
                affine16(a, &mut y, a.len() / dt_sz, dt_sz);
            } else {
                big_add(a, &mut y, a.len() / dt_sz, dt_sz);
            }
            y
        };
        let nbytes = dt_sz * count;
        for (mi, &flags) in modes.iter().enumerate() {
            let seed = mix(label, (ci as u64) << 8 | mi as u64);
            let input = |r: Rank| -> Vec<u8> {
                let mut v = payload(mix(seed, u64::from(r)), nbytes);
                if nc {
                    // Odd multipliers: no map loses what came before it.
                    for m in v.chunks_exact_mut(4) {
                        let a = u16::from_ne_bytes([m[0], m[1]]) | 1;
                        m[..2].copy_from_slice(&a.to_ne_bytes());
                    }
                }
                v
            };
            let mine = input(me);
            let expect = model_reduce(n, input, model);
            let what = |c: &str, extra: &str| {
                format!(
                    "{name}: {} {c} of {count} x {dt_sz} B over {n} ({flags:?}{extra})",
                    if nc { "GEX_OP_USER_NC" } else { "GEX_OP_USER" }
                )
            };
            // Non-blocking: to one from every root, then two to all (in
            // place and not), all in flight, synced in reverse order (the
            // first to all dropped instead).
            let mut outs: Vec<Vec<u8>> = (0..n + 2)
                .map(|i| {
                    let in_place = (i + ci as u32).is_multiple_of(2);
                    if in_place {
                        mine.clone()
                    } else {
                        vec![0xa5; nbytes]
                    }
                })
                .collect();
            let mut hs: Vec<CollHandle<'_>> = Vec::new();
            for (i, out) in outs.iter_mut().enumerate() {
                let i = i as u32;
                let in_place = (i + ci as u32).is_multiple_of(2);
                let src = (!in_place).then_some(&mine[..]);
                let h = if i < n {
                    let root = i;
                    let (d, s) = if me == root {
                        (Some(&mut out[..]), src)
                    } else {
                        (None, Some(&mine[..]))
                    };
                    reduce_to_one_nb(tm, root, d, s, Dt::User, dt_sz, count, &op, flags)
                } else {
                    reduce_to_all_nb(tm, out, src, Dt::User, dt_sz, count, &op, flags)
                };
                hs.push(h.unwrap_or_else(|e| panic!("{}: {e}", what("initiation", ""))));
            }
            while let Some(h) = hs.pop() {
                if hs.len() == n as usize {
                    // Dropped unsynced: the drop waits for the output.
                    drop(h);
                    continue;
                }
                t.wait(h, &what("non-blocking", &format!(", handle {}", hs.len())));
            }
            drop(hs);
            for (i, out) in outs.iter().enumerate() {
                let i = i as u32;
                if i < n && me != i {
                    continue;
                }
                if let Some(b) = (0..nbytes).find(|&b| out[b] != expect[b]) {
                    let c = if i < n {
                        format!("reduce_to_one to {i}")
                    } else {
                        "reduce_to_all".to_string()
                    };
                    panic!(
                        "{}: byte {b} differs from the model",
                        what(&c, ", non-blocking")
                    );
                }
            }
            // Blocking: to one root (rotating) and to all, in place or not.
            let root = (ci as u32 + mi as u32) % n;
            let in_place = (ci + mi) % 2 == 1;
            let mut out = if in_place {
                mine.clone()
            } else {
                vec![0x5a; nbytes]
            };
            let src = (!in_place).then_some(&mine[..]);
            let r = if me == root {
                reduce_to_one(
                    tm,
                    root,
                    Some(&mut out),
                    src,
                    Dt::User,
                    dt_sz,
                    count,
                    &op,
                    flags,
                )
            } else {
                reduce_to_one(
                    tm,
                    root,
                    None,
                    Some(&mine),
                    Dt::User,
                    dt_sz,
                    count,
                    &op,
                    flags,
                )
            };
            r.unwrap_or_else(|e| panic!("{}: {e}", what("blocking reduce_to_one", "")));
            if me == root {
                assert!(
                    out == expect,
                    "{}: differs from the model",
                    what(&format!("blocking reduce_to_one to {root}"), "")
                );
            }
            let mut out = if in_place {
                mine.clone()
            } else {
                vec![0x5a; nbytes]
            };
            reduce_to_all(tm, &mut out, src, Dt::User, dt_sz, count, &op, flags)
                .unwrap_or_else(|e| panic!("{}: {e}", what("blocking reduce_to_all", "")));
            assert!(
                out == expect,
                "{}: differs from the model",
                what("blocking reduce_to_all", "")
            );
        }
    }
}

// ------------------------------------------------------ data movement

const MOVE_SIZES: &[usize] = &[0, 1, 13, 4096, 70_000];

fn data_movement(t: &T, tm: &Tm, label: u64, sizes: &[usize]) {
    let (me, n) = (tm.rank(), tm.size() as usize);
    let mut rng = Rng::new(label ^ 0xDA7A);
    for (case, &nb) in sizes.iter().enumerate() {
        let tag =
            |r: usize, j: usize| mix(label, (case as u64) << 40 ^ (r as u64) << 20 ^ j as u64);
        // Scatter.
        let root = rng.below(n as u64) as Rank;
        let src: Vec<u8> = (0..n)
            .flat_map(|j| payload(tag(root as usize, j), nb))
            .collect();
        let mut dst = vec![0xeeu8; nb];
        let s = (me == root).then_some(&src[..]);
        t.wait(
            scatter_nb(tm, root, &mut dst, s, Flags::empty()).unwrap(),
            "scatter",
        );
        check_payload("scatter", tag(root as usize, me as usize), &dst);
        // Gather.
        let root = rng.below(n as u64) as Rank;
        let mine = payload(tag(me as usize, 7), nb);
        let mut all = vec![0xeeu8; nb * n];
        let d = (me == root).then_some(&mut all[..]);
        t.wait(
            gather_nb(tm, root, d, &mine, Flags::empty()).unwrap(),
            "gather",
        );
        if me == root {
            for r in 0..n {
                check_payload("gather", tag(r, 7), &all[r * nb..(r + 1) * nb]);
            }
        }
        // Gather-all.
        let mut all = vec![0xeeu8; nb * n];
        t.wait(
            gather_all_nb(tm, &mut all, &mine, Flags::empty()).unwrap(),
            "gather_all",
        );
        for r in 0..n {
            check_payload("gather_all", tag(r, 7), &all[r * nb..(r + 1) * nb]);
        }
        // Exchange: block j of rank i goes to rank j as block i.
        let src: Vec<u8> = (0..n)
            .flat_map(|j| payload(tag(me as usize, j), nb))
            .collect();
        let mut dst = vec![0xeeu8; nb * n];
        t.wait(
            exchange_nb(tm, &mut dst, &src, Flags::empty()).unwrap(),
            "exchange",
        );
        for i in 0..n {
            check_payload("exchange", tag(i, me as usize), &dst[i * nb..(i + 1) * nb]);
        }
    }
}

/// Every collective over `tm`, lighter sizes for sub-teams.
fn all_collectives(t: &T, tm: &Tm, label: u64, full: bool) {
    t.barrier(tm);
    if full {
        broadcasts(t, tm, label, BCAST_SIZES);
        reductions(t, tm, label, &[1, 5, 3000]);
        data_movement(t, tm, label, MOVE_SIZES);
    } else {
        broadcasts(t, tm, label, &[0, 1, 100, 70_000]);
        reductions(t, tm, label, &[1, 100]);
        data_movement(t, tm, label, &[0, 5, 70_000]);
    }
    t.barrier(tm);
}

// ------------------------------------------------------------ handles

/// Tests `h` until it completes, from any thread, polling; panics after
/// the bound.
fn sync_bounded(me: Rank, oversubscribed: bool, h: &mut CollHandle<'_>, what: &str) {
    let deadline = Instant::now() + wait_bound();
    let mut i = 0u32;
    while !h.test().unwrap_or_else(|e| panic!("{what}: {e}")) {
        i = i.wrapping_add(1);
        if oversubscribed || i.is_multiple_of(16) {
            std::thread::yield_now();
        }
        if i.is_multiple_of(256) && Instant::now() > deadline {
            panic!(
                "rank {me}: timed out after {:?} syncing {what}",
                wait_bound()
            );
        }
    }
    assert!(h.is_invalid(), "{what}: a synced handle is invalid");
}

/// `test_some` until every handle is synced, from any thread; each call
/// that reports progress must have synced at least one; panics after the
/// bound.
fn sync_some_bounded(me: Rank, oversubscribed: bool, hs: &mut [CollHandle<'_>], what: &str) {
    let deadline = Instant::now() + wait_bound();
    let mut i = 0u32;
    loop {
        let before = hs.iter().filter(|h| !h.is_invalid()).count();
        if before == 0 {
            assert!(CollHandle::test_some(hs).unwrap(), "{what}: all invalid");
            return;
        }
        if CollHandle::test_some(hs).unwrap_or_else(|e| panic!("{what}: {e}")) {
            let after = hs.iter().filter(|h| !h.is_invalid()).count();
            assert!(
                after < before,
                "{what}: test_some succeeded and synced none"
            );
            continue;
        }
        i = i.wrapping_add(1);
        if oversubscribed || i.is_multiple_of(16) {
            std::thread::yield_now();
        }
        if i.is_multiple_of(256) && Instant::now() > deadline {
            panic!(
                "rank {me}: timed out after {:?} syncing {what}",
                wait_bound()
            );
        }
    }
}

const fn assert_send<T: Send>() {}
const _: () = assert_send::<CollHandle<'static>>();

/// Collective handles synced by a thread other than the initiator's: a
/// barrier (the shared-memory one where the team has a channel: its
/// handle must look at the counters itself, not wait for the initiating
/// thread's progress), broadcast, reduce-to-all, exchange and gather-all,
/// moved to a helper thread that syncs them (one by one and with
/// `test_some`); then collectives initiated on a helper thread and synced
/// by the main thread. Every output byte is checked.
fn handles_across_threads(t: &T, tm: &Tm, label: u64) {
    let (me, n) = (tm.rank(), tm.size() as usize);
    let (jr, over) = (t.me, t.oversubscribed);
    for round in 0..20u64 {
        let tag = |r: usize, j: usize| mix(label ^ round, (r as u64) << 20 ^ j as u64);
        let root = (round % n as u64) as Rank;
        let nb = 1 + (round as usize * 37) % 1500;
        let bsrc = payload(tag(root as usize, 99), nb);
        let mut bdst = vec![0xeeu8; nb];
        let mine = [tag(me as usize, 1), u64::from(me)];
        let mut sum = [0u64; 2];
        let xnb = 1 + (round as usize) % 13;
        let xsrc: Vec<u8> = (0..n)
            .flat_map(|j| payload(tag(me as usize, j), xnb))
            .collect();
        let mut xdst = vec![0xeeu8; xnb * n];
        let gsrc = payload(tag(me as usize, 77), xnb);
        let mut gdst = vec![0xeeu8; xnb * n];
        {
            let bar = barrier_nb(tm, Flags::empty()).unwrap();
            let b = broadcast_nb(
                tm,
                root,
                &mut bdst,
                (me == root).then_some(&bsrc[..]),
                Flags::empty(),
            )
            .unwrap();
            let r =
                reduce_to_all_nb_typed(tm, &mut sum, Some(&mine), &Op::Add.into(), Flags::empty())
                    .unwrap();
            let x = exchange_nb(tm, &mut xdst, &xsrc, Flags::empty()).unwrap();
            let g = gather_all_nb(tm, &mut gdst, &gsrc, Flags::empty()).unwrap();
            std::thread::scope(|s| {
                s.spawn(move || {
                    let mut bar = bar;
                    sync_bounded(jr, over, &mut bar, "barrier on another thread");
                    let mut hs = vec![b, r, x, g];
                    if round % 2 == 0 {
                        sync_some_bounded(jr, over, &mut hs, "test_some on another thread");
                    } else {
                        for (i, h) in hs.iter_mut().enumerate() {
                            sync_bounded(jr, over, h, &format!("handle {i} on another thread"));
                        }
                    }
                });
            });
        }
        check_payload(
            "broadcast synced by another thread",
            tag(root as usize, 99),
            &bdst,
        );
        let want0 = (0..n).fold(0u64, |a, r| a.wrapping_add(tag(r, 1)));
        let want1 = (0..n as u64).sum::<u64>();
        assert_eq!(
            sum,
            [want0, want1],
            "reduce-to-all synced by another thread"
        );
        for i in 0..n {
            check_payload(
                "exchange synced by another thread",
                tag(i, me as usize),
                &xdst[i * xnb..(i + 1) * xnb],
            );
            check_payload(
                "gather_all synced by another thread",
                tag(i, 77),
                &gdst[i * xnb..(i + 1) * xnb],
            );
        }
        // Initiated on a helper thread, synced here.
        let mut bdst = vec![0xeeu8; nb];
        let handles = std::thread::scope(|s| {
            s.spawn(|| {
                let b = broadcast_nb(
                    tm,
                    root,
                    &mut bdst,
                    (me == root).then_some(&bsrc[..]),
                    Flags::empty(),
                )
                .unwrap();
                vec![barrier_nb(tm, Flags::empty()).unwrap(), b]
            })
            .join()
            .unwrap()
        });
        let mut handles = handles;
        sync_some_bounded(jr, over, &mut handles, "handles of another thread");
        drop(handles);
        check_payload(
            "broadcast initiated by another thread",
            tag(root as usize, 99),
            &bdst,
        );
    }
    // Slices of invalid handles: nothing to wait for.
    let mut none = [CollHandle::INVALID, CollHandle::default()];
    assert!(CollHandle::test_some(&mut none).unwrap());
    assert!(CollHandle::test_all(&mut none).unwrap());
    CollHandle::wait_some(&mut none).unwrap();
    CollHandle::wait_all(&mut none).unwrap();
}

/// 2^16 - 1 collectives outstanding at once over `tm` (the notes' minimum):
/// barriers, then 8-byte broadcasts from every root in turn into
/// consecutive pieces of one buffer (2^16 - 1 of them up to 2 ranks, 8191
/// beyond, to keep the debug-build job short), each set synced with one
/// `test_all` loop; every byte checked.
fn many_outstanding(t: &T, tm: &Tm, label: u64) {
    let (me, n) = (tm.rank(), tm.size());
    let mut count: usize = (1 << 16) - 1;
    let mut hs: Vec<CollHandle<'_>> = (0..count)
        .map(|_| barrier_nb(tm, Flags::empty()).unwrap())
        .collect();
    t.wait_all(&mut hs, "2^16-1 barriers");
    assert!(hs.iter().all(CollHandle::is_invalid));
    drop(hs);
    if n > 2 {
        count = 8191;
    }
    let mut buf = vec![0xeeu8; count * 8];
    let srcs: Vec<Vec<u8>> = (0..count)
        .map(|i| {
            if i as u32 % n == me {
                payload(mix(label, i as u64), 8)
            } else {
                Vec::new()
            }
        })
        .collect();
    let mut hs: Vec<CollHandle<'_>> = buf
        .chunks_mut(8)
        .enumerate()
        .map(|(i, d)| {
            let root = i as u32 % n;
            let s = (root == me).then_some(&srcs[i][..]);
            broadcast_nb(tm, root, d, s, Flags::empty()).unwrap()
        })
        .collect();
    t.wait_all(&mut hs, "2^16-1 broadcasts");
    drop(hs);
    for (i, d) in buf.chunks(8).enumerate() {
        check_payload("one of 2^16-1 broadcasts", mix(label, i as u64), d);
    }
}

/// Blocking broadcasts and scatters large enough for the single-copy path
/// on smp (a root offering its input, readers copying out of its memory):
/// every root in turn, the root's input separate and in place (broadcast),
/// back to back with the two-copy sizes, every byte checked.
fn single_copy_paths(tm: &Tm, label: u64) {
    let (me, n) = (tm.rank(), tm.size() as usize);
    for &nb in &[32 << 10, (32 << 10) - 1, 100_003, 300_000] {
        for root in 0..n {
            let tag = |j: usize| mix(label ^ nb as u64, (root as u64) << 20 ^ j as u64);
            let src = payload(tag(0), nb);
            let mut dst = vec![0xeeu8; nb];
            let in_place = root % 2 == 1;
            if me as usize == root && in_place {
                dst.copy_from_slice(&src);
            }
            let s = (me as usize == root && !in_place).then_some(&src[..]);
            broadcast(tm, root as Rank, &mut dst, s, Flags::empty()).unwrap();
            check_payload("single-copy broadcast", tag(0), &dst);
            let ssrc: Vec<u8> = (0..n).flat_map(|j| payload(tag(j + 1), nb)).collect();
            let mut dst = vec![0xeeu8; nb];
            let s = (me as usize == root).then_some(&ssrc[..]);
            scatter(tm, root as Rank, &mut dst, s, Flags::empty()).unwrap();
            check_payload("single-copy scatter", tag(me as usize + 1), &dst);
        }
    }
}

/// The blocking forms, every byte checked, odd sizes.
fn blocking_forms(tm: &Tm, label: u64) {
    let (me, n) = (tm.rank(), tm.size() as usize);
    for &nb in &[0usize, 1, 7, 1000, 70_001] {
        let tag = |r: usize, j: usize| mix(label ^ nb as u64, (r as u64) << 20 ^ j as u64);
        let root = (nb % n) as Rank;
        let src = payload(tag(root as usize, 5), nb);
        let mut dst = vec![0xeeu8; nb];
        broadcast(
            tm,
            root,
            &mut dst,
            (me == root).then_some(&src[..]),
            Flags::empty(),
        )
        .unwrap();
        check_payload("blocking broadcast", tag(root as usize, 5), &dst);
        let ssrc: Vec<u8> = (0..n)
            .flat_map(|j| payload(tag(root as usize, j), nb))
            .collect();
        let mut dst = vec![0xeeu8; nb];
        scatter(
            tm,
            root,
            &mut dst,
            (me == root).then_some(&ssrc[..]),
            Flags::empty(),
        )
        .unwrap();
        check_payload("blocking scatter", tag(root as usize, me as usize), &dst);
        let mine = payload(tag(me as usize, 6), nb);
        let mut all = vec![0xeeu8; nb * n];
        gather(
            tm,
            root,
            (me == root).then_some(&mut all[..]),
            &mine,
            Flags::empty(),
        )
        .unwrap();
        if me == root {
            for r in 0..n {
                check_payload("blocking gather", tag(r, 6), &all[r * nb..(r + 1) * nb]);
            }
        }
        let mut all = vec![0xeeu8; nb * n];
        gather_all(tm, &mut all, &mine, Flags::empty()).unwrap();
        for r in 0..n {
            check_payload("blocking gather_all", tag(r, 6), &all[r * nb..(r + 1) * nb]);
        }
        let xsrc: Vec<u8> = (0..n)
            .flat_map(|j| payload(tag(me as usize, j), nb))
            .collect();
        let mut xdst = vec![0xeeu8; nb * n];
        exchange(tm, &mut xdst, &xsrc, Flags::empty()).unwrap();
        for i in 0..n {
            check_payload(
                "blocking exchange",
                tag(i, me as usize),
                &xdst[i * nb..(i + 1) * nb],
            );
        }
        let cnt = nb.max(1);
        let v: Vec<u64> = (0..cnt).map(|i| tag(me as usize, i)).collect();
        let want: Vec<u64> = (0..cnt)
            .map(|i| (0..n).fold(0u64, |a, r| a.wrapping_add(tag(r, i))))
            .collect();
        let mut out = vec![0u64; cnt];
        reduce_to_all_typed(tm, &mut out, Some(&v), &Op::Add.into(), Flags::empty()).unwrap();
        if let Some(i) = (0..cnt).find(|&i| out[i] != want[i]) {
            panic!(
                "blocking reduce_to_all_typed: element {i} of {cnt} is {:#x}, expected {:#x}",
                out[i], want[i]
            );
        }
        let mut out = vec![0u64; cnt];
        reduce_to_one_typed(
            tm,
            root,
            (me == root).then_some(&mut out[..]),
            Some(&v),
            &Op::Add.into(),
            Flags::empty(),
        )
        .unwrap();
        if me == root {
            assert_eq!(out, want, "blocking reduce_to_one_typed");
        }
        let vb: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let mut ob = vec![0u8; cnt * 8];
        reduce_to_all(
            tm,
            &mut ob,
            Some(&vb),
            Dt::U64,
            8,
            cnt,
            &Op::Add.into(),
            Flags::empty(),
        )
        .unwrap();
        let wb: Vec<u8> = want.iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(ob, wb, "blocking reduce_to_all");
        let mut ob = vec![0u8; cnt * 8];
        reduce_to_one(
            tm,
            root,
            (me == root).then_some(&mut ob[..]),
            Some(&vb),
            Dt::U64,
            8,
            cnt,
            &Op::Add.into(),
            Flags::empty(),
        )
        .unwrap();
        if me == root {
            assert_eq!(ob, wb, "blocking reduce_to_one");
        }
    }
}

/// Every data collective initiated back to back over `tm` without syncing
/// any (on smp's primordial team they all go through the same shared
/// buffers, so each must wait for the readers of the one before, this
/// rank's own reads included), roots rotating, then synced together;
/// sizes of one and of several 64 KiB chunks. Every byte checked.
fn back_to_back(t: &T, tm: &Tm, label: u64) {
    let (me, n) = (tm.rank(), tm.size() as usize);
    for &nb in &[8usize, 3000, 200_000] {
        let tag = |r: usize, j: usize| mix(label ^ nb as u64, (r as u64) << 20 ^ j as u64);
        let cnt = nb / 8;
        let root = |i: usize| ((i + nb) % n) as Rank;
        let v: Vec<u64> = (0..cnt).map(|i| tag(me as usize, i)).collect();
        let want: Vec<u64> = (0..cnt)
            .map(|i| (0..n).fold(0u64, |a, r| a.wrapping_add(tag(r, i))))
            .collect();
        let bsrc = payload(tag(root(1) as usize, 1_000_001), nb);
        let xsrc: Vec<u8> = (0..n)
            .flat_map(|j| payload(tag(me as usize, j), nb))
            .collect();
        let mine = payload(tag(me as usize, 1_000_002), nb);
        let ssrc: Vec<u8> = (0..n)
            .flat_map(|j| payload(tag(root(2) as usize, 2_000_000 + j), nb))
            .collect();
        let (mut sum, mut one) = (vec![0u64; cnt], vec![0u64; cnt]);
        let mut bdst = vec![0xeeu8; nb];
        let mut xdst = vec![0xeeu8; nb * n];
        let mut gadst = vec![0xeeu8; nb * n];
        let mut sdst = vec![0xeeu8; nb];
        let mut gdst = vec![0xeeu8; nb * n];
        let add: ReduceOp = Op::Add.into();
        {
            let mut hs = vec![
                reduce_to_all_nb_typed(tm, &mut sum, Some(&v), &add, Flags::empty()).unwrap(),
                broadcast_nb(
                    tm,
                    root(1),
                    &mut bdst,
                    (me == root(1)).then_some(&bsrc[..]),
                    Flags::empty(),
                )
                .unwrap(),
                exchange_nb(tm, &mut xdst, &xsrc, Flags::empty()).unwrap(),
                gather_all_nb(tm, &mut gadst, &mine, Flags::empty()).unwrap(),
                scatter_nb(
                    tm,
                    root(2),
                    &mut sdst,
                    (me == root(2)).then_some(&ssrc[..]),
                    Flags::empty(),
                )
                .unwrap(),
                gather_nb(
                    tm,
                    root(3),
                    (me == root(3)).then_some(&mut gdst[..]),
                    &mine,
                    Flags::empty(),
                )
                .unwrap(),
                reduce_to_one_nb_typed(
                    tm,
                    root(4),
                    (me == root(4)).then_some(&mut one[..]),
                    Some(&v),
                    &add,
                    Flags::empty(),
                )
                .unwrap(),
            ];
            t.wait_all(&mut hs, "data collectives back to back");
        }
        let what = |c: &str| format!("{c} back to back, {nb} B");
        if let Some(i) = (0..cnt).find(|&i| sum[i] != want[i]) {
            panic!("{}: element {i} differs", what("reduce_to_all"));
        }
        if me == root(4) {
            if let Some(i) = (0..cnt).find(|&i| one[i] != want[i]) {
                panic!("{}: element {i} differs", what("reduce_to_one"));
            }
        }
        check_payload(&what("broadcast"), tag(root(1) as usize, 1_000_001), &bdst);
        for i in 0..n {
            check_payload(
                &what("exchange"),
                tag(i, me as usize),
                &xdst[i * nb..(i + 1) * nb],
            );
            check_payload(
                &what("gather_all"),
                tag(i, 1_000_002),
                &gadst[i * nb..(i + 1) * nb],
            );
            if me == root(3) {
                check_payload(
                    &what("gather"),
                    tag(i, 1_000_002),
                    &gdst[i * nb..(i + 1) * nb],
                );
            }
        }
        check_payload(
            &what("scatter"),
            tag(root(2) as usize, 2_000_000 + me as usize),
            &sdst,
        );
    }
}

/// `f64` inputs of mixed magnitudes and signs (2^-40 to 2^40, random
/// mantissas): their sums round differently in every association, so
/// only rank order gives the model's bits.
fn mixed_f64(r: Rank, count: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng::new(mix(seed, u64::from(r)));
    (0..count)
        .map(|_| {
            let m = 1.0 + (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let e = rng.below(81) as i32 - 40;
            let s = if rng.below(2) == 0 { 1.0 } else { -1.0 };
            s * m * 2f64.powi(e)
        })
        .collect()
}

/// The sequential rank-order model: `((c_0 + c_1) + c_2) ...`.
fn mixed_sum(n: u32, count: usize, seed: u64) -> Vec<u64> {
    let mut acc = mixed_f64(0, count, seed);
    for r in 1..n {
        for (a, x) in acc.iter_mut().zip(mixed_f64(r, count, seed)) {
            *a += x;
        }
    }
    acc.iter().map(|x| x.to_bits()).collect()
}

/// The sum of the magnitudes of every member's operands, by element.
fn mixed_magnitudes(n: u32, count: usize, seed: u64) -> Vec<f64> {
    let mut acc = vec![0.0f64; count];
    for r in 0..n {
        for (a, x) in acc.iter_mut().zip(mixed_f64(r, count, seed)) {
            *a += x.abs();
        }
    }
    acc
}

fn f64_bytes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

/// Large reductions (above 1 KiB: over the primordial team on smp, the
/// chunked shared-memory path; reduce-to-all by reduce-scatter from 16
/// KiB, `GEX_COLL_REDUCE_SCATTER` forces either way, reduce-to-one too):
/// `f64` sums of mixed magnitudes against the sequential rank-order model
/// bit for bit where the shared-memory paths run (within the reordering's
/// bound elsewhere: Active Messages, the hierarchy) (one chunk, a last chunk of one element, several chunks
/// with a short last one, more chunks than a member has slots),
/// reduce-to-all and
/// reduce-to-one from every root, in place and not, blocking and not;
/// every built-in type and operator; several in flight (one handle
/// forgotten) synced in reverse order; every sync mode.
fn large_reductions(t: &T, tm: &Tm, label: u64) {
    let (me, n) = (tm.rank(), tm.size());
    let add: ReduceOp = Op::Add.into();
    let bits = |b: &[u8]| -> Vec<u64> {
        b.chunks_exact(8)
            .map(|c| u64::from_ne_bytes(c.try_into().unwrap()))
            .collect()
    };
    // Bit for bit where the shared-memory paths run (flat or by
    // reduce-scatter: both combine every element in rank order). Elsewhere
    // the order of combination is the algorithm's (a binomial tree or
    // recursive doubling over Active Messages, the hierarchy's groups
    // across neighbourhoods), and floating-point sums differ in their last
    // bits: there every element must be within the reordering's bound
    // ((n - 1) machine epsilons times the sum of the magnitudes; n taken).
    let exact = expect_shm(tm);
    // The first element that differs from `want` (the sequential model's
    // bits; `scale`: the sum of the operands' magnitudes).
    let differs = |got: &[u8], want: &[u64], scale: &[f64]| -> Option<usize> {
        let got = bits(got);
        assert_eq!(got.len(), want.len());
        (0..want.len()).find(|&i| {
            if exact {
                return got[i] != want[i];
            }
            let (g, w) = (f64::from_bits(got[i]), f64::from_bits(want[i]));
            // A NaN or an error beyond the bound differs.
            let within = (g - w).abs() <= f64::from(n) * f64::EPSILON * scale[i];
            !within
        })
    };
    let counts = [2048usize, 2049, 5 * 2048 - 3, 40_000, 131_072];
    for (ci, &count) in counts.iter().enumerate() {
        let seed = mix(label, count as u64);
        let mine = f64_bytes(&mixed_f64(me, count, seed));
        let want = mixed_sum(n, count, seed);
        let scale = mixed_magnitudes(n, count, seed);
        let what = |c: &str, how: &str| format!("{c} of {count} mixed f64 over {n} ({how})");
        for (vi, how) in ["nb", "nb in place", "blocking", "blocking in place"]
            .iter()
            .enumerate()
        {
            let (blocking, in_place) = (vi >= 2, vi % 2 == 1);
            let mut dst = if in_place {
                mine.clone()
            } else {
                vec![0xeeu8; mine.len()]
            };
            let src = (!in_place).then_some(&mine[..]);
            if blocking {
                reduce_to_all(tm, &mut dst, src, Dt::Dbl, 8, count, &add, Flags::empty()).unwrap();
            } else {
                let h =
                    reduce_to_all_nb(tm, &mut dst, src, Dt::Dbl, 8, count, &add, Flags::empty())
                        .unwrap();
                t.wait(h, &what("reduce_to_all", how));
            }
            if let Some(i) = differs(&dst, &want, &scale) {
                panic!(
                    "{}: element {i} differs from the model",
                    what("reduce_to_all", how)
                );
            }
            // Reduce-to-one: every root for the smaller sizes, one for the
            // larger.
            let roots: Vec<Rank> = if count <= 5 * 2048 {
                (0..n).collect()
            } else {
                vec![((ci + vi) % n as usize) as Rank]
            };
            for root in roots {
                let mut out = if in_place && me == root {
                    mine.clone()
                } else {
                    vec![0xeeu8; mine.len()]
                };
                let d = (me == root).then_some(&mut out[..]);
                let src = (!(in_place && me == root)).then_some(&mine[..]);
                if blocking {
                    reduce_to_one(tm, root, d, src, Dt::Dbl, 8, count, &add, Flags::empty())
                        .unwrap();
                } else {
                    let h =
                        reduce_to_one_nb(tm, root, d, src, Dt::Dbl, 8, count, &add, Flags::empty())
                            .unwrap();
                    t.wait(h, &what("reduce_to_one", how));
                }
                if me == root {
                    if let Some(i) = differs(&out, &want, &scale) {
                        panic!(
                            "{} at root {root}: element {i} differs from the model",
                            what("reduce_to_one", how)
                        );
                    }
                }
            }
        }
    }
    // Every built-in type and operator: one full chunk and a last chunk
    // of 1, 2 or 3 elements (fewer than members: some shares empty).
    let mut rng = Rng::new(label ^ 0x5C);
    for dt in Dt::BUILTIN {
        let dt_sz = dt.size().unwrap();
        for op in Op::ALL {
            if !op.valid_for_reduction(dt) || matches!(op, Op::User | Op::UserNc) {
                continue;
            }
            let count = (16 << 10) / dt_sz + 1 + rng.below(3) as usize;
            builtin_reduction(t, tm, &mut rng, dt, op, count, label, "large ");
        }
    }
    // Several in flight, roots rotating, sizes mixed, some in place; the
    // second handle forgotten (its output is never copied to its buffer;
    // the others must still complete); the rest synced in reverse order.
    for round in 0..2u64 {
        // By default the reduce-to-alls of at least 16 KiB reduce-scatter,
        // the 12 KB one and the reduce-to-ones (odd `j`) are flat.
        let sizes = [2048usize, 20_000, 1500, 2049, 40_000, 2048 * 9 + 1];
        let seeds: Vec<u64> = (0..sizes.len())
            .map(|j| mix(label ^ 0xF11 ^ round, j as u64))
            .collect();
        let inputs: Vec<Vec<u8>> = sizes
            .iter()
            .zip(&seeds)
            .map(|(&c, &s)| f64_bytes(&mixed_f64(me, c, s)))
            .collect();
        let mut outs: Vec<Vec<u8>> = inputs.clone();
        let root = |j: usize| ((j as u64 + round) % u64::from(n)) as Rank;
        {
            let mut hs = Vec::new();
            for (j, (out, inp)) in outs.iter_mut().zip(&inputs).enumerate() {
                let count = sizes[j];
                // In place when `j` is a multiple of 3 (the output holds the
                // input already); to-one for odd `j`.
                let src = (j % 3 != 0).then_some(&inp[..]);
                let h = if j % 2 == 1 {
                    let r = root(j);
                    let (d, src) = if me == r {
                        (Some(&mut out[..]), src)
                    } else {
                        (None, Some(&inp[..]))
                    };
                    reduce_to_one_nb(tm, r, d, src, Dt::Dbl, 8, count, &add, Flags::empty())
                } else {
                    reduce_to_all_nb(tm, out, src, Dt::Dbl, 8, count, &add, Flags::empty())
                }
                .unwrap();
                if j == 1 {
                    std::mem::forget(h);
                } else {
                    hs.push(h);
                }
            }
            while let Some(h) = hs.pop() {
                t.wait(h, "large reductions in flight");
            }
        }
        for (j, out) in outs.iter().enumerate() {
            let gets = j % 2 == 0 || me == root(j);
            if j == 1 || !gets {
                continue;
            }
            let want = mixed_sum(n, sizes[j], seeds[j]);
            let scale = mixed_magnitudes(n, sizes[j], seeds[j]);
            if let Some(i) = differs(out, &want, &scale) {
                panic!("large reduction {j} in flight (round {round}): element {i} differs");
            }
        }
    }
    // Every sync mode, to-all and to-one.
    for (mi, &mode) in sync_mode_list().iter().enumerate() {
        let count = 2048 * 3 + 5;
        let seed = mix(label ^ 0x5E, mi as u64);
        let mine = f64_bytes(&mixed_f64(me, count, seed));
        let want = mixed_sum(n, count, seed);
        let scale = mixed_magnitudes(n, count, seed);
        let mut dst = vec![0xeeu8; mine.len()];
        let h = reduce_to_all_nb(tm, &mut dst, Some(&mine), Dt::Dbl, 8, count, &add, mode).unwrap();
        t.wait(h, &format!("large reduce_to_all {mode:?}"));
        assert!(
            differs(&dst, &want, &scale).is_none(),
            "large reduce_to_all {mode:?} differs"
        );
        let root = (mi as u32) % n;
        let mut dst = vec![0xeeu8; mine.len()];
        let d = (me == root).then_some(&mut dst[..]);
        let h = reduce_to_one_nb(tm, root, d, Some(&mine), Dt::Dbl, 8, count, &add, mode).unwrap();
        t.wait(h, &format!("large reduce_to_one {mode:?}"));
        if me == root {
            assert!(
                differs(&dst, &want, &scale).is_none(),
                "large reduce_to_one {mode:?} differs"
            );
        }
    }
}

/// Small collectives (through shared memory's inline slots where the team
/// has a channel): more in flight than a member has slots (32), every
/// kind, roots rotating, sizes on both sides of what fits a slot's line
/// (48 B), up to a slot (1 KiB) and beyond (several pieces on sub-teams;
/// the chunked path on the primordial team mixes in), a non-commutative
/// user operator; a blocking one every ten while earlier handles are
/// pending; the handles synced in reverse order. Every byte checked.
fn small_in_flight(t: &T, tm: &Tm, label: u64) {
    const K: usize = 75;
    const SIZES: [usize; 8] = [1, 8, 40, 48, 56, 200, 1024, 3000];
    let (me, n) = (tm.rank() as usize, tm.size() as usize);
    let tag =
        |i: usize, r: usize, j: usize| mix(label ^ (i as u64) << 40, (r as u64) << 20 ^ j as u64);
    let size = |i: usize| SIZES[(i / 7) % SIZES.len()];
    let root = |i: usize| (i * 3 + 1) % n;
    let affine_nc = ReduceOp::user_nc(|x: &[u8], y: &mut [u8], c: usize| affine(x, y, c, 8));
    let add: ReduceOp = Op::Add.into();
    let words = |i: usize, r: usize| -> Vec<u64> {
        (0..size(i).div_ceil(8)).map(|w| tag(i, r, w)).collect()
    };
    // Inputs, by op.
    let inputs: Vec<Vec<u8>> = (0..K)
        .map(|i| {
            let nb = size(i);
            match i % 7 {
                0 => payload(tag(i, root(i), 0), nb),
                1 => (0..n)
                    .flat_map(|j| payload(tag(i, root(i), j), nb))
                    .collect(),
                2 | 3 => payload(tag(i, me, 0), nb),
                4 => (0..n).flat_map(|j| payload(tag(i, me, j), nb)).collect(),
                5 => payload(tag(i, me, 0), 8 * nb.div_ceil(8)),
                _ => words(i, me).iter().flat_map(|w| w.to_ne_bytes()).collect(),
            }
        })
        .collect();
    let mut outs: Vec<Vec<u8>> = (0..K)
        .map(|i| {
            let nb = size(i);
            vec![
                0xeeu8;
                match i % 7 {
                    0 | 1 => nb,
                    2..=4 => nb * n,
                    _ => 8 * nb.div_ceil(8),
                }
            ]
        })
        .collect();
    {
        let mut hs: Vec<(usize, CollHandle<'_>)> = Vec::new();
        for (i, out) in outs.iter_mut().enumerate() {
            let (r, src) = (root(i), &inputs[i][..]);
            let blocking = i % 10 == 9;
            let what = format!("small op {i} (kind {}, {} B)", i % 7, size(i));
            let h = match i % 7 {
                0 => {
                    let s = (me == r).then_some(src);
                    if blocking {
                        broadcast(tm, r as Rank, out, s, Flags::empty())
                            .map(|_| CollHandle::INVALID)
                    } else {
                        broadcast_nb(tm, r as Rank, out, s, Flags::empty())
                    }
                }
                1 => {
                    let s = (me == r).then_some(src);
                    if blocking {
                        scatter(tm, r as Rank, out, s, Flags::empty()).map(|_| CollHandle::INVALID)
                    } else {
                        scatter_nb(tm, r as Rank, out, s, Flags::empty())
                    }
                }
                2 => {
                    let d = (me == r).then_some(&mut out[..]);
                    if blocking {
                        gather(tm, r as Rank, d, src, Flags::empty()).map(|_| CollHandle::INVALID)
                    } else {
                        gather_nb(tm, r as Rank, d, src, Flags::empty())
                    }
                }
                3 => {
                    if blocking {
                        gather_all(tm, out, src, Flags::empty()).map(|_| CollHandle::INVALID)
                    } else {
                        gather_all_nb(tm, out, src, Flags::empty())
                    }
                }
                4 => {
                    if blocking {
                        exchange(tm, out, src, Flags::empty()).map(|_| CollHandle::INVALID)
                    } else {
                        exchange_nb(tm, out, src, Flags::empty())
                    }
                }
                5 => {
                    let c = src.len() / 8;
                    if blocking {
                        reduce_to_all(
                            tm,
                            out,
                            Some(src),
                            Dt::User,
                            8,
                            c,
                            &affine_nc,
                            Flags::empty(),
                        )
                        .map(|_| CollHandle::INVALID)
                    } else {
                        reduce_to_all_nb(
                            tm,
                            out,
                            Some(src),
                            Dt::User,
                            8,
                            c,
                            &affine_nc,
                            Flags::empty(),
                        )
                    }
                }
                _ => {
                    let c = src.len() / 8;
                    let d = (me == r).then_some(&mut out[..]);
                    if blocking {
                        reduce_to_one(
                            tm,
                            r as Rank,
                            d,
                            Some(src),
                            Dt::U64,
                            8,
                            c,
                            &add,
                            Flags::empty(),
                        )
                        .map(|_| CollHandle::INVALID)
                    } else {
                        reduce_to_one_nb(
                            tm,
                            r as Rank,
                            d,
                            Some(src),
                            Dt::U64,
                            8,
                            c,
                            &add,
                            Flags::empty(),
                        )
                    }
                }
            };
            hs.push((i, h.unwrap_or_else(|e| panic!("{what}: {e}"))));
        }
        for (i, h) in hs.into_iter().rev() {
            t.wait(
                h,
                &format!(
                    "small op {i} (kind {}, {} B), synced in reverse order",
                    i % 7,
                    size(i)
                ),
            );
        }
    }
    for (i, out) in outs.iter().enumerate() {
        let (nb, r) = (size(i), root(i));
        let what = format!("small op {i} (kind {}, {nb} B) over a team of {n}", i % 7);
        match i % 7 {
            0 => check_payload(&what, tag(i, r, 0), out),
            1 => check_payload(&what, tag(i, r, me), out),
            2 | 3 => {
                if i % 7 == 3 || me == r {
                    for m in 0..n {
                        check_payload(&what, tag(i, m, 0), &out[m * nb..(m + 1) * nb]);
                    }
                }
            }
            4 => {
                for m in 0..n {
                    check_payload(&what, tag(i, m, me), &out[m * nb..(m + 1) * nb]);
                }
            }
            5 => {
                let len = out.len();
                let want = model_reduce(
                    n as u32,
                    |m| payload(tag(i, m as usize, 0), len),
                    |a, b| {
                        let mut y = b.to_vec();
                        affine(a, &mut y, len / 8, 8);
                        y
                    },
                );
                assert!(
                    out[..] == want[..],
                    "{what}: non-commutative reduction differs"
                );
            }
            _ => {
                if me == r {
                    for (w, got) in out.chunks(8).enumerate() {
                        let want = (0..n).fold(0u64, |a, m| a.wrapping_add(tag(i, m, w)));
                        let got = u64::from_ne_bytes(got.try_into().unwrap());
                        assert_eq!(got, want, "{what}: word {w}");
                    }
                }
            }
        }
    }
}

// ------------------------------------------------------------ sync modes

/// Segment area of the sync-mode checks: [2 MiB, 3 MiB).
const SYNC_AREA: usize = 2 << 20;

/// No flags, then every (IN, OUT) pair of sync modes.
fn sync_mode_list() -> Vec<Flags> {
    let ins = [
        Flags::COLL_IN_NOSYNC,
        Flags::COLL_IN_MYSYNC,
        Flags::COLL_IN_ALLSYNC,
    ];
    let outs = [
        Flags::COLL_OUT_NOSYNC,
        Flags::COLL_OUT_MYSYNC,
        Flags::COLL_OUT_ALLSYNC,
    ];
    let mut v = vec![
        Flags::empty(),
        Flags::COLL_IN_ALLSYNC,
        Flags::COLL_OUT_ALLSYNC,
    ];
    v.extend(ins.iter().flat_map(|&i| outs.iter().map(move |&o| i | o)));
    v
}

/// Every data-movement collective under every sync mode over `tm`, sizes
/// 0 (complete at initiation: `OUT_ALLSYNC` still closes with a barrier),
/// odd and chunked; then collectives of mixed modes in flight at once
/// (NOSYNC ones overlapping later ones), synced in reverse order. Every
/// byte checked.
fn sync_modes(t: &T, tm: &Tm, label: u64, sizes: &[usize]) {
    let (me, n) = (tm.rank(), tm.size() as usize);
    for (mi, &mode) in sync_mode_list().iter().enumerate() {
        for &nb in sizes {
            let what = |c: &str| format!("{c} {mode:?} {nb} B");
            let tag = |r: usize, j: usize| {
                mix(
                    label ^ (mi as u64) << 32 ^ nb as u64,
                    (r as u64) << 20 ^ j as u64,
                )
            };
            let root = ((mi + nb) % n) as Rank;
            let src = payload(tag(root as usize, 1), nb);
            let mut dst = vec![0xeeu8; nb];
            let s = (me == root).then_some(&src[..]);
            t.wait(
                broadcast_nb(tm, root, &mut dst, s, mode).unwrap(),
                &what("broadcast"),
            );
            check_payload(&what("broadcast"), tag(root as usize, 1), &dst);
            let ssrc: Vec<u8> = (0..n)
                .flat_map(|j| payload(tag(root as usize, j), nb))
                .collect();
            let s = (me == root).then_some(&ssrc[..]);
            t.wait(
                scatter_nb(tm, root, &mut dst, s, mode).unwrap(),
                &what("scatter"),
            );
            check_payload(&what("scatter"), tag(root as usize, me as usize), &dst);
            let mine = payload(tag(me as usize, 2), nb);
            let mut all = vec![0xeeu8; nb * n];
            let d = (me == root).then_some(&mut all[..]);
            t.wait(
                gather_nb(tm, root, d, &mine, mode).unwrap(),
                &what("gather"),
            );
            if me == root {
                for r in 0..n {
                    check_payload(&what("gather"), tag(r, 2), &all[r * nb..(r + 1) * nb]);
                }
            }
            let mut all = vec![0xeeu8; nb * n];
            t.wait(
                gather_all_nb(tm, &mut all, &mine, mode).unwrap(),
                &what("gather_all"),
            );
            for r in 0..n {
                check_payload(&what("gather_all"), tag(r, 2), &all[r * nb..(r + 1) * nb]);
            }
            let xsrc: Vec<u8> = (0..n)
                .flat_map(|j| payload(tag(me as usize, j), nb))
                .collect();
            let mut xdst = vec![0xeeu8; nb * n];
            t.wait(
                exchange_nb(tm, &mut xdst, &xsrc, mode).unwrap(),
                &what("exchange"),
            );
            for i in 0..n {
                check_payload(
                    &what("exchange"),
                    tag(i, me as usize),
                    &xdst[i * nb..(i + 1) * nb],
                );
            }
            let cnt = nb.max(1);
            let v: Vec<u64> = (0..cnt).map(|i| tag(me as usize, i)).collect();
            let want: Vec<u64> = (0..cnt)
                .map(|i| (0..n).fold(0u64, |a, r| a.wrapping_add(tag(r, i))))
                .collect();
            let mut out = vec![0u64; cnt];
            t.wait(
                reduce_to_all_nb_typed(tm, &mut out, Some(&v), &Op::Add.into(), mode).unwrap(),
                &what("reduce_to_all"),
            );
            assert_eq!(out, want, "{}", what("reduce_to_all"));
            let mut out = vec![0u64; cnt];
            t.wait(
                reduce_to_one_nb_typed(
                    tm,
                    root,
                    (me == root).then_some(&mut out[..]),
                    Some(&v),
                    &Op::Add.into(),
                    mode,
                )
                .unwrap(),
                &what("reduce_to_one"),
            );
            if me == root {
                assert_eq!(out, want, "{}", what("reduce_to_one"));
            }
        }
    }
    // Mixed modes in flight at once, synced last to first.
    let nb = 777;
    let tag = |r: usize, j: usize| mix(label ^ 0x0F1, (r as u64) << 20 ^ j as u64);
    let srcs: Vec<Vec<u8>> = (0..6).map(|k| payload(tag(k % n, k), nb)).collect();
    let mut dsts = vec![vec![0xeeu8; nb]; 6];
    let modes = [
        Flags::COLL_IN_NOSYNC | Flags::COLL_OUT_NOSYNC,
        Flags::COLL_OUT_ALLSYNC,
        Flags::COLL_IN_NOSYNC | Flags::COLL_OUT_NOSYNC,
        Flags::empty(),
        Flags::COLL_IN_ALLSYNC | Flags::COLL_OUT_NOSYNC,
        Flags::COLL_IN_NOSYNC | Flags::COLL_OUT_ALLSYNC,
    ];
    let mut hs: Vec<CollHandle<'_>> = dsts
        .iter_mut()
        .enumerate()
        .map(|(k, d)| {
            let root = (k % n) as Rank;
            let s = (me == root).then_some(&srcs[k][..]);
            broadcast_nb(tm, root, d, s, modes[k]).unwrap()
        })
        .collect();
    let mine = [u64::from(me) + 1];
    let mut sum = [0u64];
    let mut last = vec![reduce_to_all_nb_typed(
        tm,
        &mut sum,
        Some(&mine),
        &Op::Add.into(),
        Flags::COLL_IN_NOSYNC | Flags::COLL_OUT_NOSYNC,
    )
    .unwrap()];
    t.wait_all(&mut last, "NOSYNC reduce-to-all after six broadcasts");
    drop(last);
    while let Some(h) = hs.pop() {
        t.wait(h, "broadcasts of mixed sync modes, last first");
    }
    drop(hs);
    for (k, d) in dsts.iter().enumerate() {
        check_payload("broadcasts of mixed sync modes", tag(k % n, k), d);
    }
    assert_eq!(sum[0], (1..=n as u64).sum::<u64>());
}

/// What the ALLSYNC modes promise, checked through memory other ranks
/// write and read (over the primordial team, whose ranks are jobranks):
///
/// - `IN_ALLSYNC`: rank 0 tells every rank to go and enters at once; each
///   rank then puts a stamp into the broadcast source (in rank 0's
///   segment) and into every rank's exchange source, and only then
///   enters. Data may not move before everyone entered, so rank 0's
///   broadcast and every rank's exchange carry every stamp. (Without the
///   mode, rank 0 would read its source before the stamps land.)
/// - `OUT_ALLSYNC`: a broadcast from rank 0 into every rank's segment;
///   once rank 0's sync succeeds, every rank's destination must be in
///   place, which rank 0 checks by reading them all. (Without the mode the
///   root's handle completes at initiation.)
fn allsync_semantics(t: &T) {
    let tm = &t.job.tm;
    let (me, n) = (tm.rank(), tm.size() as usize);
    let seg = &t.job.seg;
    let stamp = |j: usize, k: usize| mix(0xA11, (j as u64) << 16 | k as u64);
    // Zeroed areas: [SYNC_AREA, +8n) the broadcast source on rank 0,
    // [SYNC_AREA + 4096, +8n) each rank's exchange source.
    let xs = SYNC_AREA + 4096;
    seg.write(SYNC_AREA, &vec![0u8; 8 * n]).unwrap();
    seg.write(xs, &vec![0u8; 8 * n]).unwrap();
    t.barrier(tm);
    for round in 0..3 {
        if me == 0 {
            for r in 1..n as Rank {
                tm.request_short(r, H_GO, Flags::empty(), &[]).expect("go");
            }
        } else {
            t.wait_for("rank 0's go", || t.go.load(SeqCst));
            t.go.store(false, SeqCst);
        }
        let v = stamp(me as usize, round).to_le_bytes();
        tm.put_blocking(
            0,
            SYNC_AREA + 8 * me as usize,
            &v[..],
            Flags::PEER_SEG_OFFSET,
        )
        .unwrap();
        for k in 0..n {
            let v = stamp(me as usize, k + 100 * round).to_le_bytes();
            // Block `me` of rank k's exchange source: it goes back to me.
            tm.put_blocking(
                k as Rank,
                xs + 8 * me as usize,
                &v[..],
                Flags::PEER_SEG_OFFSET,
            )
            .unwrap();
        }
        let mut got = vec![0u8; 8 * n];
        let mut xdst = vec![0u8; 8 * n];
        {
            // SAFETY: both ranges lie in this rank's attached segment.
            // Peers write them (puts) only before entering the
            // collectives below, and IN_ALLSYNC makes the library read
            // them only after every rank entered; nothing writes them
            // while the library reads them, and this thread does not
            // read them itself.
            let bsrc = unsafe { std::slice::from_raw_parts(seg.as_ptr().add(SYNC_AREA), 8 * n) };
            // SAFETY: as above.
            let xsrc = unsafe { std::slice::from_raw_parts(seg.as_ptr().add(xs), 8 * n) };
            let s = (me == 0).then_some(bsrc);
            let b = broadcast_nb(tm, 0, &mut got, s, Flags::COLL_IN_ALLSYNC).unwrap();
            t.wait(b, "IN_ALLSYNC broadcast");
            let x = exchange_nb(tm, &mut xdst, xsrc, Flags::COLL_IN_ALLSYNC).unwrap();
            t.wait(x, "IN_ALLSYNC exchange");
        }
        for j in 0..n {
            let w = stamp(j, round).to_le_bytes();
            assert_eq!(
                &got[8 * j..8 * j + 8],
                &w,
                "IN_ALLSYNC broadcast: rank {j}'s stamp"
            );
            let w = stamp(me as usize, j + 100 * round).to_le_bytes();
            assert_eq!(
                &xdst[8 * j..8 * j + 8],
                &w,
                "IN_ALLSYNC exchange: block from rank {j}"
            );
        }
        t.barrier(tm);
    }
    // OUT_ALLSYNC.
    let od = SYNC_AREA + 8192;
    let nb = 4099;
    for round in 0..3u64 {
        seg.write(od, &vec![0u8; nb]).unwrap();
        t.barrier(tm);
        let data = payload(mix(0x0A11, round), nb);
        {
            // SAFETY: the range lies in this rank's attached segment; the
            // only other access is rank 0's read after its OUT_ALLSYNC
            // sync, when this rank's output is in place and the library no
            // longer writes it.
            let dst = unsafe { std::slice::from_raw_parts_mut(seg.as_ptr().add(od), nb) };
            let s = (me == 0).then_some(&data[..]);
            let h = broadcast_nb(tm, 0, dst, s, Flags::COLL_OUT_ALLSYNC).unwrap();
            if me == 0 && n > 1 {
                assert!(!h.is_invalid(), "an OUT_ALLSYNC root waits for the others");
            }
            t.wait(h, "OUT_ALLSYNC broadcast");
        }
        if me == 0 {
            for r in 0..n as Rank {
                let mut back = vec![0u8; nb];
                tm.get_blocking(&mut back[..], r, od, Flags::PEER_SEG_OFFSET)
                    .unwrap();
                check_payload(
                    &format!("OUT_ALLSYNC: rank {r}'s output"),
                    mix(0x0A11, round),
                    &back,
                );
            }
        }
        t.barrier(tm);
    }
}

/// Sync-mode argument errors.
fn sync_mode_errors(tm: &Tm) {
    let mut d = [0u8; 4];
    for f in [
        Flags::COLL_IN_NOSYNC | Flags::COLL_IN_ALLSYNC,
        Flags::COLL_OUT_MYSYNC | Flags::COLL_OUT_NOSYNC,
        Flags::COLL_IN_NOSYNC | Flags::IMMEDIATE,
    ] {
        let e = broadcast_nb(tm, 0, &mut d, Some(&[1, 2, 3, 4][..]), f).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BadArg, "{f:?}");
        let e = exchange_nb(tm, &mut [0u8; 0], &[], f).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BadArg, "{f:?}");
    }
    // The barrier takes no sync mode.
    let e = barrier_nb(tm, Flags::COLL_IN_ALLSYNC).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadArg);
}

// ------------------------------------------------------------------ teams

struct Grid {
    cols: u32,
}

impl Grid {
    fn new(n: u32) -> Grid {
        let mut cols = 1;
        while cols * cols < n {
            cols += 1;
        }
        Grid { cols }
    }
    fn row(&self, r: u32) -> u32 {
        r / self.cols
    }
    fn col(&self, r: u32) -> u32 {
        r % self.cols
    }
}

/// Splits and checks membership against the model; returns (row, column).
fn grid_teams(t: &T) -> (Tm, Tm) {
    let (me, n) = (t.me, t.n);
    let g = Grid::new(n);
    let tm = &t.job.tm;
    // Rows, with client scratch of the recommended size.
    let size = tm_split_scratch_size(
        tm,
        Some(g.row(me) as i32),
        g.col(me) as i32,
        Flags::TM_SCRATCH_SIZE_RECOMMENDED,
    )
    .unwrap();
    assert!(size > 0, "a member's recommended scratch size is non-zero");
    let scratch = Memvec::new(t.job.seg.addr() + SCRATCH, size);
    let row = tm_split(
        tm,
        Some(g.row(me) as i32),
        g.col(me) as i32,
        Some(scratch),
        Flags::empty(),
    )
    .unwrap()
    .expect("every rank joins a row");
    let want: Vec<Rank> = (0..n).filter(|&r| g.row(r) == g.row(me)).collect();
    assert_eq!(members(&row), want, "row team members");
    assert_eq!(row.rank(), g.col(me));
    // Columns with reversed keys, no scratch.
    let col = tm_split(
        tm,
        Some(g.col(me) as i32),
        -(g.row(me) as i32),
        None,
        Flags::TM_NO_SCRATCH,
    )
    .unwrap()
    .expect("every rank joins a column");
    let mut want: Vec<Rank> = (0..n).filter(|&r| g.col(r) == g.col(me)).collect();
    want.reverse();
    assert_eq!(members(&col), want, "column team members (reversed keys)");
    assert_eq!(col.jobrank_to_rank(me).unwrap(), col.rank());
    (row, col)
}

fn teams(t: &T) {
    let (me, n) = (t.me, t.n);
    let tm = &t.job.tm;
    let (row, col) = grid_teams(t);
    all_collectives(t, &row, 0x20 + u64::from(Grid::new(n).row(me)), false);
    all_collectives(t, &col, 0x40 + u64::from(Grid::new(n).col(me)), false);

    // Ranks left out: every third rank passes no colour.
    let left_out = me % 3 == 2;
    let q = tm_split_scratch_size(
        tm,
        (!left_out).then_some((me % 2) as i32),
        0,
        Flags::TM_SCRATCH_SIZE_RECOMMENDED,
    )
    .unwrap();
    assert_eq!(
        q == 0,
        left_out,
        "query size {q} for a rank left out: {left_out}"
    );
    let part = tm_split(
        tm,
        (!left_out).then_some((me % 2) as i32),
        0,
        None,
        Flags::TM_NO_SCRATCH,
    )
    .unwrap();
    assert_eq!(part.is_none(), left_out);
    if let Some(p) = &part {
        let want: Vec<Rank> = (0..n).filter(|&r| r % 3 != 2 && r % 2 == me % 2).collect();
        assert_eq!(members(p), want, "partial team");
        all_collectives(t, p, 0x60 + u64::from(me % 2), false);
    }

    // A split of a split: the row by parity of its ranks, with scratch
    // given as a segment offset.
    let sub = tm_split(
        &row,
        Some((row.rank() % 2) as i32),
        row.rank() as i32,
        Some(Memvec::new(SCRATCH + 64 * 1024, 4096)),
        Flags::SCRATCH_SEG_OFFSET,
    )
    .unwrap()
    .unwrap();
    let want: Vec<Rank> = members(&row)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| *i as u32 % 2 == row.rank() % 2)
        .map(|(_, j)| j)
        .collect();
    assert_eq!(members(&sub), want);
    broadcasts(t, &sub, 0x80 ^ u64::from(me % 2), &[1, 5000]);
    t.barrier(&sub);

    small_in_flight(t, &row, 0x90 + u64::from(Grid::new(n).row(me)));
    small_in_flight(t, &col, 0xA0 + u64::from(Grid::new(n).col(me)));
    small_in_flight(t, &sub, 0xB0 ^ u64::from(me % 2));
    if let Some(p) = &part {
        small_in_flight(t, p, 0xC0 + u64::from(me % 2));
    }
    // Teams of odd sizes where the job allows: the first three ranks and
    // the rest, keys reversed (team ranks are not jobrank order).
    if n >= 4 {
        let first = me < 3;
        let odd = tm_split(
            tm,
            Some(first as i32),
            -(me as i32),
            None,
            Flags::TM_NO_SCRATCH,
        )
        .unwrap()
        .expect("every rank joins");
        assert_eq!(odd.size(), if first { 3 } else { n - 3 });
        all_collectives(t, &odd, 0xD0 + u64::from(first), false);
        // Reductions of several pieces (24 KB) on a sub-team.
        reductions(t, &odd, 0xD8 + u64::from(first), &[3000]);
        small_in_flight(t, &odd, 0xE0 + u64::from(first));
        tm_destroy(odd, Flags::empty()).unwrap();
    }

    in_flight(t, &row, &col);
    for (what, team) in [
        ("primordial", tm),
        ("row", &row),
        ("column", &col),
        ("sub", &sub),
    ] {
        assert_eq!(
            barrier_uses_shared_memory(team).unwrap(),
            expect_shm(team),
            "{what} team of {} members: shared-memory barrier",
            team.size()
        );
    }
    let mut some: Vec<&Tm> = vec![&row, &col, &sub, tm];
    if let Some(p) = &part {
        some.push(p);
    }
    team_barriers(t, &some, 8);
    created_teams(t);
    team_turnover(t);

    // Destroy: the row hands its scratch back (as an address), the
    // column has none, the sub-team's comes back as an offset.
    let rs = tm_destroy(row.clone(), Flags::empty()).unwrap();
    let size = tm_split_scratch_size(tm, Some(0), 0, Flags::TM_SCRATCH_SIZE_RECOMMENDED).unwrap();
    assert_eq!(rs, Some(Memvec::new(t.job.seg.addr() + SCRATCH, size)));
    // The deprecated SIZE_MIN query answers a positive size no larger.
    let min = tm_split_scratch_size(tm, Some(0), 0, Flags::TM_SCRATCH_SIZE_MIN).unwrap();
    assert!(min > 0 && min <= size, "SIZE_MIN {min}, RECOMMENDED {size}");
    assert_eq!(tm_destroy(col, Flags::empty()).unwrap(), None);
    // Quiesced everywhere (a barrier on the parent), so GLOBALLY_QUIESCED.
    t.barrier(tm);
    let ss = tm_destroy(sub, Flags::GLOBALLY_QUIESCED | Flags::SCRATCH_SEG_OFFSET).unwrap();
    assert_eq!(ss, Some(Memvec::new(SCRATCH + 64 * 1024, 4096)));
    if let Some(p) = part {
        assert_eq!(tm_destroy(p, Flags::empty()).unwrap(), None);
    }
    // The destroyed team (a clone of it) is unusable; the primordial team
    // cannot be destroyed.
    assert_eq!(
        barrier_nb(&row, Flags::empty()).unwrap_err().kind(),
        ErrorKind::BadArg
    );
    assert_eq!(
        tm_destroy(tm.clone(), Flags::empty()).unwrap_err().kind(),
        ErrorKind::BadArg
    );
}

/// Several collectives in flight on two teams at once, initiated in an
/// order that differs between ranks (the order per team is the same):
/// one grid row's members start with their row's collectives, the next
/// row's with their column's. That order is the spec's: replacing every
/// call by a blocking barrier would not deadlock, since a row that starts
/// with its columns waits only for rows that finish theirs first. (An
/// order that differs within a row, as this test had, can deadlock a
/// conforming implementation: with 8 ranks on two hosts the hierarchical
/// algorithms, which may wait at initiation, did.)
fn in_flight(t: &T, row: &Tm, col: &Tm) {
    const K: usize = 6;
    let me = t.me;
    let grid_row = Grid::new(t.n).row(me);
    let sizes = [3usize, 5000, 100_000];
    let tag = |team: u64, k: usize| mix(0x1F ^ team, k as u64);
    let data_r: Vec<Vec<u8>> = (0..K).map(|k| payload(tag(1, k), sizes[k % 3])).collect();
    let data_c: Vec<Vec<u8>> = (0..K).map(|k| payload(tag(2, k), sizes[k % 3])).collect();
    let mut out_r: Vec<Vec<u8>> = (0..K).map(|k| vec![0u8; sizes[k % 3]]).collect();
    let mut out_c: Vec<Vec<u8>> = (0..K).map(|k| vec![0u8; sizes[k % 3]]).collect();
    let src_sum: Vec<u64> = (0..64).map(|i| i * 1000 + u64::from(me)).collect();
    let mut sums: Vec<Vec<u64>> = (0..K).map(|_| vec![0u64; 64]).collect();
    let add: ReduceOp = Op::Add.into();
    let mut evs: Vec<CollHandle<'_>> = Vec::new();
    {
        let mut rs = out_r.iter_mut();
        let mut cs = out_c.iter_mut();
        let mut ss = sums.iter_mut();
        for k in 0..K {
            let row_first = (grid_row + k as u32).is_multiple_of(2);
            for pass in 0..2 {
                let (tm, data, out, team_root) = if (pass == 0) == row_first {
                    (row, &data_r[k], rs.next().unwrap(), k as u32 % row.size())
                } else {
                    (
                        col,
                        &data_c[k],
                        cs.next().unwrap(),
                        (k as u32 + 1) % col.size(),
                    )
                };
                evs.push(barrier_nb(tm, Flags::empty()).unwrap());
                let src = (tm.rank() == team_root).then_some(&data[..]);
                evs.push(broadcast_nb(tm, team_root, out, src, Flags::empty()).unwrap());
                if std::ptr::eq(tm, row) {
                    let s = ss.next().unwrap();
                    evs.push(
                        reduce_to_all_nb_typed(tm, s, Some(&src_sum), &add, Flags::empty())
                            .unwrap(),
                    );
                }
            }
        }
    }
    t.wait_all(&mut evs, "collectives in flight on two teams");
    drop(evs);
    for k in 0..K {
        check_payload("in-flight row broadcast", tag(1, k), &out_r[k]);
        check_payload("in-flight column broadcast", tag(2, k), &out_c[k]);
        let rm = members(row);
        for (i, s) in sums[k].iter().enumerate() {
            let want: u64 = rm.iter().map(|&j| i as u64 * 1000 + u64::from(j)).sum();
            assert_eq!(*s, want, "in-flight row sum {k}");
        }
    }
}

/// Teams from explicit lists, with every scratch kind.
fn created_teams(t: &T) {
    let (me, n) = (t.me, t.n);
    let tm = &t.job.tm;
    let seg = |r: Rank| {
        tm.query_bound_segment(r, Flags::empty())
            .unwrap()
            .unwrap()
            .owner_addr
    };
    let base = SCRATCH + 128 * 1024;
    let kinds = [
        Flags::TM_GLOBAL_SCRATCH,
        Flags::TM_LOCAL_SCRATCH,
        Flags::TM_SYMMETRIC_SCRATCH | Flags::SCRATCH_SEG_OFFSET,
        Flags::TM_NO_SCRATCH,
        Flags::TM_GLOBAL_SCRATCH | Flags::SCRATCH_SEG_OFFSET | Flags::RANK_IS_JOBRANK,
    ];
    for (i, &kind) in kinds.iter().enumerate() {
        // Even and odd ranks, each list in decreasing rank order.
        let list: Vec<Rank> = (0..n).rev().filter(|r| r % 2 == me % 2).collect();
        let args: Vec<EpLocation> = list
            .iter()
            .map(|&r| EpLocation {
                rank: r,
                ep_index: 0,
            })
            .collect();
        // The size the query recommends, asked with the list and with its
        // length alone (what C callers passing a NULL args get), is what
        // the team is created with.
        let len = tm_create_scratch_size(tm, &args, Flags::TM_SCRATCH_SIZE_RECOMMENDED).unwrap();
        let by_count =
            tm_create_scratch_size_for(tm, args.len(), Flags::TM_SCRATCH_SIZE_RECOMMENDED).unwrap();
        assert_eq!(
            by_count, len,
            "the scratch query by count agrees with the list's"
        );
        assert!(len > 0 && len <= 8192, "recommended scratch {len}");
        let off = base + i * 8192;
        let addrs: Vec<usize> = if kind.contains(Flags::TM_GLOBAL_SCRATCH) {
            if kind.contains(Flags::SCRATCH_SEG_OFFSET) {
                list.iter().map(|_| off).collect()
            } else {
                list.iter().map(|&r| seg(r) + off).collect()
            }
        } else if kind.contains(Flags::TM_LOCAL_SCRATCH) {
            vec![t.job.seg.addr() + off]
        } else if kind.contains(Flags::TM_SYMMETRIC_SCRATCH) {
            vec![off]
        } else {
            Vec::new()
        };
        let mut new = tm_create(tm, &args, len, &addrs, kind)
            .unwrap_or_else(|e| panic!("tm_create {kind:?}: {e}"));
        assert_eq!(new.len(), 1, "one local member");
        let team = new.pop().unwrap();
        assert_eq!(members(&team), list, "created team {kind:?}");
        all_collectives(t, &team, 0x100 + i as u64 * 2 + u64::from(me % 2), i == 0);
        let back = tm_destroy(team, Flags::SCRATCH_SEG_OFFSET).unwrap();
        if kind.contains(Flags::TM_NO_SCRATCH) {
            assert_eq!(back, None);
        } else {
            assert_eq!(
                back,
                Some(Memvec::new(off, len)),
                "scratch back for {kind:?}"
            );
        }
    }
    // From a non-primordial parent, by parent rank: the parent is the
    // reversed-order team of all ranks; a caller outside its own list.
    let rev = tm_split(tm, Some(0), -(me as i32), None, Flags::TM_NO_SCRATCH)
        .unwrap()
        .unwrap();
    if n >= 2 {
        // Parent ranks 0..n-1 of `rev` are jobranks n-1..1: all but jobrank 0.
        let args: Vec<EpLocation> = (0..n - 1)
            .map(|r| EpLocation {
                rank: r,
                ep_index: 0,
            })
            .collect();
        let new = tm_create(&rev, &args, 0, &[], Flags::TM_NO_SCRATCH).unwrap();
        if me == 0 {
            assert!(new.is_empty(), "jobrank 0 is not in its own list");
        } else {
            assert_eq!(new.len(), 1);
            let want: Vec<Rank> = (1..n).rev().collect();
            assert_eq!(members(&new[0]), want);
            broadcasts(t, &new[0], 0x200, &[17, 20_000]);
            reductions(t, &new[0], 0x201, &[3]);
        }
        for team in new {
            tm_destroy(team, Flags::empty()).unwrap();
        }
    }
    // Errors, on every caller alike: two scratch kinds; a bad scratch range.
    let args = [EpLocation {
        rank: me,
        ep_index: 0,
    }];
    let e = tm_create(
        tm,
        &args,
        64,
        &[0],
        Flags::TM_NO_SCRATCH | Flags::TM_SYMMETRIC_SCRATCH,
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadArg);
    let e = tm_create(
        tm,
        &args,
        64,
        &[SEG],
        Flags::TM_SYMMETRIC_SCRATCH | Flags::SCRATCH_SEG_OFFSET,
    )
    .unwrap_err();
    assert!(e.message().contains("outside the local segment"), "{e}");
    tm_destroy(rev, Flags::empty()).unwrap();
}

// ----------------------------------------------------------------- errors

fn errors(t: &T) {
    let tm = &t.job.tm;
    let n = t.n;
    let bad = |r: gex::Result<CollHandle<'_>>| r.map(|_| ()).unwrap_err().kind();
    let mut buf = vec![0u8; 8];
    assert_eq!(
        bad(broadcast_nb(tm, n, &mut buf, None, Flags::empty())),
        ErrorKind::BadArg
    );
    // A source of the wrong length, every rank the root of its own
    // (single-rank) view: only ranks equal to the root check it, so each
    // rank names itself.
    if n == 1 {
        assert_eq!(
            bad(broadcast_nb(
                tm,
                0,
                &mut buf,
                Some(&[1, 2][..]),
                Flags::empty()
            )),
            ErrorKind::BadArg
        );
    }
    assert_eq!(
        bad(broadcast_nb(tm, 0, &mut buf, None, Flags::IMMEDIATE)),
        ErrorKind::BadArg
    );
    let src = [0u8; 8];
    for (dt, sz, op) in [
        (Dt::I32, 4, ReduceOp::from(Op::Sub)),
        (Dt::Dbl, 8, ReduceOp::from(Op::And)),
        (Dt::I64, 4, ReduceOp::from(Op::Add)),
        (Dt::User, 8, ReduceOp::from(Op::Add)),
        (Dt::U64, 8, ReduceOp::from(Op::User)),
    ] {
        let e = reduce_to_all_nb(
            tm,
            &mut buf,
            Some(&src),
            dt,
            sz,
            8 / sz,
            &op,
            Flags::empty(),
        );
        assert_eq!(bad(e), ErrorKind::BadArg, "{} {:?}", dt.name(), op);
    }
    let e = reduce_to_all_nb(
        tm,
        &mut buf,
        Some(&src),
        Dt::U64,
        8,
        0,
        &Op::Add.into(),
        Flags::empty(),
    );
    assert_eq!(bad(e), ErrorKind::BadArg, "dt_cnt 0");
    let mut small = [0u8; 3];
    assert_eq!(
        bad(gather_all_nb(tm, &mut small, &src, Flags::empty())),
        ErrorKind::BadArg
    );
    // Nothing above consumed a call: collectives still line up.
    broadcasts(t, tm, 0x300, &[8]);
}

fn main() {
    let job = Job::start("TEST_COLL", SEG);
    let (me, n) = (job.rank(), job.size());
    gex::system::set_verbose_errors(false);
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let host = gex::system::query_host_info().unwrap().members.len();
    let go = Arc::new(AtomicBool::new(false));
    let g = go.clone();
    let entered = Arc::new(AtomicU32::new(0));
    let e = entered.clone();
    let mut table = [
        HandlerEntry::request(H_GO, Flags::AM_SHORT, 0, move |_tok, _msg| {
            g.store(true, SeqCst);
        }),
        HandlerEntry::request(H_ENTERED, Flags::AM_SHORT, 0, move |_tok, _msg| {
            e.fetch_add(1, SeqCst);
        }),
    ];
    register_handlers(&job.ep, &mut table).unwrap();
    job.barrier();
    let t = T {
        job,
        me,
        n,
        oversubscribed: host > cores,
        go,
        entered,
    };

    barriers(&t);
    g1_barrier(&t);
    all_collectives(&t, &t.job.tm, 0x10, true);
    across_neighbourhoods(&t, 0x15);
    blocking_forms(&t.job.tm, 0x20);
    single_copy_paths(&t.job.tm, 0x21);
    handles_across_threads(&t, &t.job.tm, 0x30);
    many_outstanding(&t, &t.job.tm, 0x40);
    back_to_back(&t, &t.job.tm, 0x45);
    large_reductions(&t, &t.job.tm, 0x47);
    user_reductions(&t, 0x48);
    small_in_flight(&t, &t.job.tm, 0x46);
    sync_mode_errors(&t.job.tm);
    sync_modes(&t, &t.job.tm, 0x50, &[0, 5, 70_001]);
    allsync_semantics(&t);
    coll_modes::address_modes(&t, &t.job.tm, 0x60, true);
    coll_modes::address_mode_errors(&t);
    coll_modes::multi_address(&t, &t.job.tm, 0x70, true);
    coll_modes::multi_address_errors(&t);
    coll_modes::generalised(&t, &t.job.tm, 0x80, true);
    coll_modes::generalised_errors(&t);
    coll_modes::over_split_teams(&t, 0x90);
    errors(&t);
    teams(&t);
    barriers(&t);

    barrier_notify(0, BARRIERFLAG_ANONYMOUS).unwrap();
    barrier_wait(0, BARRIERFLAG_ANONYMOUS).unwrap();
    println!("test-coll: rank {me} of {n}: all checks passed");
}
