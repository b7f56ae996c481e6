//! The conduit's protocol over the simulated device, end to end, with a
//! proptest over message mixes: jobs of 2 or 3 ranks (this test binary,
//! started again as the ranks by the launcher library) where every rank
//! sends every other rank a random plan of Short, Medium and Long requests
//! (0 to 16 arguments, payloads from empty to past a receive buffer, so
//! that Longs go by RDMA WRITE too), with tiny credit and buffer counts.
//! Every request handler checks its message against the plan (arguments,
//! payload, per-sender order) and answers with a reply carrying a checksum
//! of what it saw, which the sender checks; every rank ends with every
//! request and every reply accounted for.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use gex_bootstrap::Bootstrap;
use gex_conduit::{AmSink, Conduit, IncomingAm, OutgoingAm, PollScope};
use gex_conduit_ibv::verbs::Provider;
use gex_conduit_ibv::{IbvConduit, IbvSettings};
use gex_types::AmCategory;

/// Set in the ranks' environment: run [`rank_main`].
const CHILD: &str = "IBV_MIX_CHILD";
/// The plan: `SEED,COUNT`.
const PLAN: &str = "IBV_MIX_PLAN";
const H_REQ: u8 = 200;
const H_REP: u8 = 201;

fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Message `i` from `src` to `dst` of the plan with `seed`: category,
/// arguments, payload length.
fn message(seed: u64, src: u32, dst: u32, i: usize, limit: usize) -> (AmCategory, Vec<i32>, usize) {
    let h = mix(seed ^ (u64::from(src) << 48) ^ (u64::from(dst) << 32) ^ i as u64);
    let cat = match h % 3 {
        0 => AmCategory::Short,
        1 => AmCategory::Medium,
        _ => AmCategory::Long,
    };
    let nargs = ((h >> 8) % 17) as usize;
    // The first argument is the sequence number.
    let mut args: Vec<i32> = (0..nargs).map(|k| mix(h ^ k as u64) as i32).collect();
    if let Some(a) = args.first_mut() {
        *a = i as i32;
    }
    let len = match cat {
        AmCategory::Short => 0,
        AmCategory::Medium => ((h >> 16) as usize) % (limit + 1),
        // Up to past two bounce buffers (RDMA WRITE in pieces).
        AmCategory::Long => ((h >> 16) as usize) % (3 * limit + 150_000),
    };
    (cat, args, len)
}

fn payload_byte(seed: u64, src: u32, i: usize, at: usize) -> u8 {
    (mix(seed ^ u64::from(src) ^ ((i as u64) << 20)) as usize).wrapping_add(at * 7) as u8
}

/// Where Long `i` from `src` lands in `dst`'s segment: every Long of the
/// plan has its own range (an RDMA WRITE may land before the handler of
/// the previous Long has run).
fn long_offset(
    seed: u64,
    src: u32,
    dst: u32,
    i: usize,
    n: u32,
    count: usize,
    limit: usize,
) -> usize {
    let mut off = 0;
    for s in 0..n {
        for j in 0..count {
            if (s, j) == (src, i) {
                return off;
            }
            let (cat, _, len) = message(seed, s, dst, j, limit);
            if cat == AmCategory::Long {
                off += len;
            }
        }
    }
    off
}

fn segment_need(seed: u64, dst: u32, n: u32, count: usize, limit: usize) -> usize {
    (0..n)
        .flat_map(|s| (0..count).map(move |j| (s, j)))
        .map(|(s, j)| message(seed, s, dst, j, limit))
        .filter(|m| m.0 == AmCategory::Long)
        .map(|m| m.2)
        .sum()
}

struct Rank {
    conduit: OnceLock<IbvConduit>,
    seed: u64,
    me: u32,
    limit: usize,
    /// The next sequence number expected from each sender.
    next: Mutex<Vec<usize>>,
    requests: AtomicUsize,
    replies: AtomicUsize,
    /// Checksums the replies must carry, per (peer, i).
    expect: Mutex<Vec<Vec<i32>>>,
}

fn checksum(args: &[i32], payload: &[u8]) -> i32 {
    let mut h = 0u64;
    for a in args {
        h = mix(h ^ *a as u32 as u64);
    }
    for chunk in payload.chunks(8) {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        h = mix(h ^ u64::from_le_bytes(w));
    }
    h as i32
}

impl AmSink for Rank {
    fn deliver(&self, m: &IncomingAm<'_>) {
        let src = m.src;
        if m.handler == H_REP {
            assert!(
                !m.is_request && m.args.len() == 2,
                "a reply from {src}: {m:?}"
            );
            let i = m.args[0] as usize;
            let want = self.expect.lock().unwrap()[src as usize][i];
            assert_eq!(
                m.args[1], want,
                "rank {}: the checksum of request {i} to rank {src}",
                self.me
            );
            self.replies.fetch_add(1, Ordering::SeqCst);
            return;
        }
        assert_eq!(m.handler, H_REQ);
        assert!(m.is_request);
        let i = {
            let mut next = self.next.lock().unwrap();
            let i = next[src as usize];
            next[src as usize] += 1;
            i
        };
        let (cat, args, len) = message(self.seed, src, self.me, i, self.limit);
        assert_eq!(m.category, cat, "rank {}: message {i} from {src}", self.me);
        assert_eq!(
            m.args,
            &args[..],
            "rank {}: arguments of {i} from {src}",
            self.me
        );
        assert_eq!(
            m.payload.len(),
            len,
            "rank {}: payload of {i} from {src}",
            self.me
        );
        for (at, b) in m.payload.iter().enumerate() {
            assert_eq!(
                *b,
                payload_byte(self.seed, src, i, at),
                "rank {}: byte {at} of {i} from {src}",
                self.me
            );
        }
        let sum = checksum(m.args, m.payload);
        self.requests.fetch_add(1, Ordering::SeqCst);
        let reply_args = [i as i32, sum];
        let reply = OutgoingAm::new(AmCategory::Short, false, H_REP, &reply_args, &[]);
        self.conduit
            .get()
            .unwrap()
            .am_send(src, &reply, false, self)
            .expect("reply");
    }
}

fn rank_main() {
    let plan = std::env::var(PLAN).expect("the plan");
    let mut it = plan.split(',').map(|v| v.parse::<u64>().expect("a number"));
    let (seed, count) = (it.next().unwrap(), it.next().unwrap() as usize);
    let boot = Bootstrap::from_env().expect("the control plane");
    let (me, n) = (boot.rank(), boot.size());
    let settings = IbvSettings::from_env().expect("settings");
    assert_eq!(settings.provider, Provider::Sim);
    let c = IbvConduit::new(boot, &settings).expect("the conduit");
    let limit = c.am_lub_limits().max_request_medium;
    let rank = Arc::new(Rank {
        conduit: OnceLock::new(),
        seed,
        me,
        limit,
        next: Mutex::new(vec![0; n as usize]),
        requests: AtomicUsize::new(0),
        replies: AtomicUsize::new(0),
        expect: Mutex::new(vec![vec![0; count]; n as usize]),
    });
    let _ = rank.conduit.set(c);
    let c = rank.conduit.get().unwrap();
    let need = (0..n)
        .map(|d| segment_need(seed, d, n, count, limit))
        .max()
        .unwrap_or(0);
    let page = 4096;
    c.attach_segment((need + 1).div_ceil(page) * page, &*rank)
        .expect("a segment");
    let wait = |what: &str, done: &dyn Fn() -> bool| {
        let start = Instant::now();
        while !done() {
            c.poll(&*rank, PollScope::All);
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "rank {me}: timed out waiting for {what}"
            );
            std::thread::yield_now();
        }
    };
    for i in 0..count {
        for dst in (0..n).filter(|&d| d != me) {
            let (cat, args, len) = message(seed, me, dst, i, limit);
            let payload: Vec<u8> = (0..len).map(|at| payload_byte(seed, me, i, at)).collect();
            rank.expect.lock().unwrap()[dst as usize][i] = checksum(&args, &payload);
            let mut m = OutgoingAm::new(cat, true, H_REQ, &args, &payload);
            if cat == AmCategory::Long {
                let off = long_offset(seed, me, dst, i, n, count, limit);
                m = m.to_offset(off, off);
            }
            c.am_send(dst, &m, false, &*rank).expect("a request");
        }
    }
    let expected = count * (n as usize - 1);
    wait("requests", &|| {
        rank.requests.load(Ordering::SeqCst) == expected
    });
    wait("replies", &|| {
        rank.replies.load(Ordering::SeqCst) == expected
    });
    // Everyone is done before anyone leaves (the others may still need
    // this rank's replies and credits).
    let boot = c.bootstrap();
    boot.barrier(&mut || {
        c.poll(&*rank, PollScope::All);
    })
    .expect("the barrier");
    let grants = c.stats().get("credit_grants").unwrap_or(0);
    // The credits never let a SEND arrive before a receive was posted.
    assert_eq!(
        c.stats().get("sim_rnr_waits"),
        Some(0),
        "rank {me}: SENDs met no receive"
    );
    println!("mix ok: rank {me} of {n}: {expected} requests and replies; {grants} credits granted from the reserve");
}

/// Not a test by itself: the ranks' entry (does nothing unless started by
/// [`mix_job`]).
#[test]
fn mix_child() {
    if std::env::var_os(CHILD).is_some() {
        rank_main();
    }
}

/// Where the receive buffers are: per peer, or a shared receive queue
/// with a pool of this many.
#[derive(Clone, Copy, Debug)]
enum Bufs {
    PerPeer,
    Srq(usize),
}

/// Runs a job; the credits its ranks granted from their reserves.
fn mix_job(seed: u64, count: usize, ranks: u32, credits: usize, buf: usize, bufs: Bufs) -> u64 {
    let mut spec = gex_run::JobSpec::new(ranks, std::env::current_exe().expect("this binary"));
    spec.conduit = "ibv".into();
    spec.args = ["--exact", "mix_child", "--nocapture", "--test-threads=1"]
        .map(String::from)
        .to_vec();
    spec.env = [
        (CHILD, "1".to_string()),
        (PLAN, format!("{seed},{count}")),
        ("GEX_IBV_PROVIDER", "sim".into()),
        ("GEX_IBV_BYPASS", "0".into()),
        ("GEX_IBV_CREDITS", credits.to_string()),
        ("GEX_IBV_BUF", buf.to_string()),
        (
            "GEX_IBV_SRQ",
            if matches!(bufs, Bufs::PerPeer) {
                "0"
            } else {
                "1"
            }
            .into(),
        ),
        (
            "GEX_IBV_SRQ_POOL",
            match bufs {
                Bufs::PerPeer => 256,
                Bufs::Srq(p) => p,
            }
            .to_string(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    spec.timeout = Some(Duration::from_secs(120));
    spec.output = gex_run::Output::Capture;
    let out = gex_run::run(&spec).expect("the job starts");
    let what = format!(
        "seed {seed}, {count} per pair, {ranks} ranks, {credits} credits, {buf}-byte buffers, {bufs:?}"
    );
    assert!(
        !out.timed_out,
        "{what}: timed out\n{}\n{}",
        out.stdout, out.stderr
    );
    assert_eq!(
        out.code, 0,
        "{what}: failed\n{}\n{}",
        out.stdout, out.stderr
    );
    for r in 0..ranks {
        assert!(
            out.stdout.contains(&format!("mix ok: rank {r} of {ranks}")),
            "{what}: rank {r}\n{}\n{}",
            out.stdout,
            out.stderr
        );
    }
    out.stdout
        .lines()
        .filter_map(|l| l.split("; ").nth(1)?.split(' ').next()?.parse::<u64>().ok())
        .sum()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 6, failure_persistence: None, ..Default::default() })]

    /// Random message mixes between 2 to 4 ranks with 1 to 3 credits,
    /// buffers from the smallest to 4 KiB, per peer or in a shared pool
    /// from the smallest (one per peer and lane, windows growing from the
    /// reserve): everything arrives, in order per sender, intact, and is
    /// answered.
    #[test]
    fn message_mixes_arrive_intact_in_order_and_are_answered(
        seed in proptest::prelude::any::<u64>(),
        count in 1usize..30,
        ranks in 2u32..=4,
        credits in 1usize..=3,
        buf in proptest::sample::select(vec![624usize, 1000, 4096]),
        pool in proptest::option::of(2usize..=14),
    ) {
        let bufs = pool.map_or(Bufs::PerPeer, Bufs::Srq);
        let grants = mix_job(seed, count, ranks, credits, buf, bufs);
        if matches!(bufs, Bufs::PerPeer) {
            proptest::prop_assert_eq!(grants, 0);
        }
    }
}

/// The smallest shared pool on 4 ranks (one buffer per peer and lane:
/// one credit each, nothing in reserve) and one a little larger (windows
/// of one growing to three from a reserve of 4): floods of requests, each
/// answered, all intact.
#[test]
fn the_smallest_shared_pools_carry_floods() {
    assert_eq!(mix_job(7, 60, 4, 3, 624, Bufs::Srq(2)), 0);
    // Every rank's peers flood it: windows grow, the reserve runs out.
    assert!(mix_job(8, 60, 4, 3, 1000, Bufs::Srq(10)) > 0);
}
