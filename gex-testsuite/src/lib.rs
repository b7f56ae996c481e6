//! Shared helpers of the multi-process test programs and benchmarks.
//!
//! Every program here is one rank of a job started by `gex-run`. Checks
//! panic, which ends the rank with a non-zero code, which ends the job.

use std::time::{Duration, Instant};

pub mod model;
pub mod rmabench;
pub mod simnic;

use gex::{Client, Ep, Segment, Tm};
use gex_core::conduit::ConduitFactory;
use gex_core::internals::*;

/// How long any wait in a test may take before it fails loudly.
pub fn wait_bound() -> Duration {
    let secs = std::env::var("GEX_TEST_WAIT_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    Duration::from_secs(secs)
}

/// An initialised job: client, primordial endpoint and team, segment.
pub struct Job {
    /// The client.
    pub client: Client,
    /// The primordial endpoint.
    pub ep: Ep,
    /// The primordial team.
    pub tm: Tm,
    /// This rank's attached segment.
    pub seg: Segment,
}

impl Job {
    /// Initialises the client `name` and attaches a segment of `seg_bytes`.
    pub fn start(name: &str, seg_bytes: usize) -> Job {
        Job::attach(gex::init(name).expect("gex::init"), seg_bytes)
    }

    fn attach((client, ep, tm): (Client, Ep, Tm), seg_bytes: usize) -> Job {
        let seg = Segment::attach(&tm, seg_bytes).expect("gex_Segment_Attach");
        Job {
            client,
            ep,
            tm,
            seg,
        }
    }

    /// [`Job::start`] over the conduit `factory` makes (a wrapper of the
    /// configured one, see [`simnic`]), with the layers' settings from the
    /// environment.
    pub fn start_on(name: &str, seg_bytes: usize, factory: &dyn ConduitFactory) -> Job {
        let config = gex::Config::from_env().expect("settings");
        let started = gex::init_with_factory(name, gex::Flags::empty(), &config, factory);
        Job::attach(started.expect("gex::init"), seg_bytes)
    }

    /// This rank.
    pub fn rank(&self) -> u32 {
        self.tm.rank()
    }

    /// The job size.
    pub fn size(&self) -> u32 {
        self.tm.size()
    }

    /// Barrier over the job (control plane; serves AMs while waiting).
    pub fn barrier(&self) {
        gex::barrier(&self.tm).expect("barrier");
    }

    /// Polls until `cond` holds, however long it takes (benchmarks: the
    /// serving ranks wait for the measuring one).
    pub fn wait_for_unbounded(&self, cond: impl FnMut() -> bool) {
        self.ep.runtime().wait_until(cond).expect("wait");
    }

    /// Polls until `cond` holds; panics naming `what` after [`wait_bound`].
    pub fn wait_for(&self, what: &str, mut cond: impl FnMut() -> bool) {
        let deadline = Instant::now() + wait_bound();
        let rt = self.ep.runtime();
        let mut n = 0u32;
        while !cond() {
            rt.poll().expect("poll");
            n = n.wrapping_add(1);
            if n.is_multiple_of(1024) {
                if Instant::now() > deadline {
                    panic!(
                        "rank {}: timed out after {:?} waiting for {what}",
                        self.rank(),
                        wait_bound()
                    );
                }
                std::thread::yield_now();
            }
        }
    }
}

/// A small deterministic generator (xorshift64*), so that every rank can
/// recompute what another rank sent.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// The byte at position `i` of the payload tagged `tag`.
#[inline]
pub fn pattern(tag: u64, i: usize) -> u8 {
    let x = tag
        .wrapping_mul(31)
        .wrapping_add(i as u64)
        .wrapping_mul(0x9E37_79B9);
    (x >> 24) as u8
}

/// A payload of `len` bytes tagged `tag`.
pub fn payload(tag: u64, len: usize) -> Vec<u8> {
    (0..len).map(|i| pattern(tag, i)).collect()
}

/// Checks `got` against the payload tagged `tag`; panics at the first
/// difference with its position.
pub fn check_payload(what: &str, tag: u64, got: &[u8]) {
    if let Some(i) = (0..got.len()).find(|&i| got[i] != pattern(tag, i)) {
        panic!(
            "{what}: byte {i} of {} is {:#04x}, expected {:#04x}",
            got.len(),
            got[i],
            pattern(tag, i)
        );
    }
}

/// The argument `i` of message `seq` from `src` (what handlers check).
#[inline]
pub fn arg_value(src: u32, seq: u32, i: usize) -> i32 {
    (src as i32).wrapping_mul(1_000_003)
        ^ (seq as i32).wrapping_mul(7919)
        ^ (i as i32 * 65_537)
        ^ 0x5a5a
}
