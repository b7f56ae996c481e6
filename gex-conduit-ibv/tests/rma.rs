//! One-sided transfers of the conduit over the simulated device, end to
//! end, at the sizes where they are split: jobs of 3 ranks (this test
//! binary, started again as the ranks by the launcher library) where every
//! rank puts into and gets back from the next rank's segment, with sizes
//! around a bounce buffer (64 KiB), the device's largest message (set to
//! 96 KiB with `GEX_IBV_SIM_MAX_MSG`, whose device refuses a longer work
//! request) and the largest transfer of one call (1 MiB), at odd offsets,
//! from and into this rank's registered segment (zero-copy: written and
//! read in place, in pieces of the largest message) and from and into
//! memory outside it (through bounce buffers). Every get is checked byte
//! for byte, every target checks its whole region of the writer's
//! segment (the data where it was put, zeros elsewhere), and the counts of
//! RDMA work requests show which path each transfer took.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gex_bootstrap::Bootstrap;
use gex_conduit::{AmSink, Conduit, GetDest, IncomingAm, OpCompletion, PollScope, PutSource};
use gex_conduit_ibv::verbs::Provider;
use gex_conduit_ibv::{IbvConduit, IbvSettings, CHUNK, MAX_RMA};

/// Set in the ranks' environment: run [`rank_main`].
const CHILD: &str = "IBV_RMA_CHILD";
/// The simulated device's largest message here.
const MAX_MSG: usize = 96 << 10;
/// Bytes of the target region each writer has in a segment.
const REGION: usize = 6 << 20;
/// Where, in each rank's own segment, zero-copy sources and destinations
/// are (past every target region).
const SCRATCH: usize = 3 * REGION;
const SEGMENT: usize = SCRATCH + (4 << 20);

/// The transfer sizes: empty, tiny, and either side of every split.
fn sizes() -> Vec<usize> {
    vec![
        0,
        1,
        7,
        CHUNK - 1,
        CHUNK,
        CHUNK + 1,
        MAX_MSG - 1,
        MAX_MSG,
        MAX_MSG + 1,
        2 * MAX_MSG + 13,
        MAX_RMA - 1,
        MAX_RMA,
    ]
}

/// The cases: every size, from the segment (zero-copy) and from outside
/// it; their offsets in the writer's target region (odd, a gap apart).
fn cases() -> Vec<(usize, bool, usize)> {
    let mut at = 3;
    let mut out = Vec::new();
    for len in sizes() {
        for in_seg in [true, false] {
            out.push((len, in_seg, at));
            at += len + 5;
        }
    }
    assert!(at <= REGION);
    out
}

fn byte(writer: u32, case: usize, i: usize) -> u8 {
    let x = (u64::from(writer) << 40) ^ ((case as u64) << 24) ^ i as u64;
    let x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (x >> 56) as u8 ^ (i as u8)
}

struct NoAms;

impl AmSink for NoAms {
    fn deliver(&self, m: &IncomingAm<'_>) {
        panic!("no Active Message is sent here: {m:?}");
    }
}

#[derive(Default)]
struct Flag(AtomicBool);

impl OpCompletion for Flag {
    fn complete(&self) {
        assert!(!self.0.swap(true, Ordering::SeqCst), "completed twice");
    }
}

/// Polls until `f` is set (bounded).
fn wait(c: &IbvConduit, f: &Flag, what: &str) {
    let start = Instant::now();
    while !f.0.load(Ordering::SeqCst) {
        c.poll(&NoAms, PollScope::All);
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::yield_now();
    }
}

fn rank_main() {
    let boot = Bootstrap::from_env().expect("the control plane");
    let (me, n) = (boot.rank(), boot.size());
    let settings = IbvSettings::from_env().expect("settings");
    assert_eq!(settings.provider, Provider::Sim);
    let c = IbvConduit::new(boot, &settings).expect("the conduit");
    let table = c.attach_segment(SEGMENT, &NoAms).expect("a segment");
    let base = table[me as usize].local_base.expect("mapped");
    let seg = |off: usize, len: usize| -> &mut [u8] {
        assert!(off + len <= SEGMENT);
        // SAFETY: this rank's attached segment, mapped for the process;
        // the range lies in it and nobody else writes this rank's scratch.
        unsafe { std::slice::from_raw_parts_mut((base + off) as *mut u8, len) }
    };
    let rma = c.rma().expect("one-sided capability");
    let target = (me + 1) % n;
    assert!(rma.reaches(target) && rma.max_transfer() == MAX_RMA);
    let (mut writes, mut reads) = (0u64, 0u64);
    let pieces = |len: usize, in_place: bool| {
        let p = if in_place && len > 0 { MAX_MSG } else { CHUNK };
        len.div_ceil(p).max(1) as u64
    };
    for (k, &(len, in_seg, at)) in cases().iter().enumerate() {
        let data: Vec<u8> = (0..len).map(|i| byte(me, k, i)).collect();
        let remote = me as usize * REGION + at;
        // The source: in the segment at an odd offset, or a vector.
        let src = if in_seg {
            let s = seg(SCRATCH + 1, len);
            s.copy_from_slice(&data);
            // SAFETY: this rank's segment, unchanged until the put
            // completes (waited for below).
            unsafe { PutSource::borrowed(s.as_ptr(), len) }
        } else {
            PutSource::copy_of(&data)
        };
        let done = Arc::new(Flag::default());
        let r = rma.put(target, 0, remote, src, done.clone(), false, &NoAms);
        assert!(matches!(r, Ok(gex_conduit::Injected::Sent)), "{r:?}");
        wait(&c, &done, &format!("put {k} ({len} bytes)"));
        writes += pieces(len, in_seg);
        // Back, into the segment (in place) and into a vector.
        for into_seg in [true, false] {
            let mut outside = vec![0xa5u8; len + 2];
            let at_local = SCRATCH + (2 << 20) + 7;
            seg(at_local - 1, len + 2).fill(0xa5);
            let ptr = if into_seg {
                (base + at_local) as *mut u8
            } else {
                outside[1..].as_mut_ptr()
            };
            // SAFETY: `len` bytes at `ptr` (the scratch range or the
            // vector past its first byte), untouched until completion.
            let dst = unsafe { GetDest::new(ptr, len, None) };
            let done = Arc::new(Flag::default());
            let r = rma.get(target, 0, remote, dst, done.clone(), false, &NoAms);
            assert!(matches!(r, Ok(gex_conduit::Injected::Sent)), "{r:?}");
            wait(&c, &done, &format!("get {k} ({len} bytes)"));
            reads += pieces(len, into_seg);
            let got: &[u8] = if into_seg {
                seg(at_local - 1, len + 2)
            } else {
                &outside
            };
            assert_eq!(got[0], 0xa5, "case {k}: the byte before was written");
            assert_eq!(got[len + 1], 0xa5, "case {k}: the byte after was written");
            if got[1..=len] != data[..] {
                let i = (0..len).find(|&i| got[1 + i] != data[i]).unwrap();
                panic!(
                    "rank {me}: case {k} ({len} bytes, source in segment {in_seg}, into segment {into_seg}): byte {i} differs"
                );
            }
        }
    }
    let st = c.stats();
    assert_eq!(
        (st.get("rdma_writes"), st.get("rdma_reads")),
        (Some(writes), Some(reads)),
        "rank {me}: RDMA work requests"
    );
    c.bootstrap()
        .barrier(&mut || {
            c.poll(&NoAms, PollScope::All);
        })
        .expect("the barrier");
    // The region the previous rank wrote here: its data, zeros between.
    let writer = (me + n - 1) % n;
    let region = seg(writer as usize * REGION, REGION);
    let mut want = vec![0u8; REGION];
    for (k, &(len, _, at)) in cases().iter().enumerate() {
        for i in 0..len {
            want[at + i] = byte(writer, k, i);
        }
    }
    if region[..] != want[..] {
        let i = (0..REGION).find(|&i| region[i] != want[i]).unwrap();
        panic!("rank {me}: byte {i} of rank {writer}'s region differs");
    }
    c.bootstrap()
        .barrier(&mut || {
            c.poll(&NoAms, PollScope::All);
        })
        .expect("the barrier");
    println!("rma ok: rank {me} of {n}: {writes} writes, {reads} reads");
}

/// Not a test by itself: the ranks' entry (does nothing unless started by
/// the job below).
#[test]
fn rma_child() {
    if std::env::var_os(CHILD).is_some() {
        rank_main();
    }
}

#[test]
fn transfers_split_at_every_limit_arrive_intact_in_place_and_bounced() {
    let ranks = 3;
    let mut spec = gex_run::JobSpec::new(ranks, std::env::current_exe().expect("this binary"));
    spec.conduit = "ibv".into();
    spec.args = ["--exact", "rma_child", "--nocapture", "--test-threads=1"]
        .map(String::from)
        .to_vec();
    spec.env = [
        (CHILD, "1".to_string()),
        ("GEX_IBV_PROVIDER", "sim".into()),
        ("GEX_IBV_BYPASS", "0".into()),
        ("GEX_IBV_SIM_MAX_MSG", MAX_MSG.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    spec.timeout = Some(Duration::from_secs(120));
    spec.output = gex_run::Output::Capture;
    let out = gex_run::run(&spec).expect("the job starts");
    assert!(!out.timed_out, "timed out\n{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.code, 0, "failed\n{}\n{}", out.stdout, out.stderr);
    for r in 0..ranks {
        assert!(
            out.stdout.contains(&format!("rma ok: rank {r} of {ranks}")),
            "rank {r}\n{}\n{}",
            out.stdout,
            out.stderr
        );
    }
}
