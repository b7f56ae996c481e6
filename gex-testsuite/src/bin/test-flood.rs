//! Active Message floods, run as one rank of a job of any size:
//! `gex-run -n N test-flood [COUNT_64K [COUNT_4K]]`.
//!
//! Every rank floods every other rank at once (all-to-all) with Medium
//! requests, then Long requests, of 4 KiB and of 64 KiB; each request
//! handler answers with a reply of the same category and size from inside
//! the handler. Every payload byte and every argument is checked where it
//! arrives, and at the end of each phase every rank checks that it received
//! exactly the expected requests (count and sequence-number sum) and
//! replies from every peer. A conduit whose replies can wait for capacity
//! taken by requests deadlocks here (udp before issue #9), so the job must
//! run under a `--timeout`.
//!
//! COUNT_64K (default 300) and COUNT_4K (default 3000) are the requests each
//! rank sends to each peer per phase. Rank 0 prints each phase's time.

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Instant;

use gex::am::{register_handlers, AmRequest, HandlerEntry, Injected, Token};
use gex::{AmCategory, Flags, Lc};
use gex_core::internals::*;
use gex_testsuite::{arg_value, check_payload, payload, Job};

/// The payload sizes of the phases.
const SIZES: [usize; 2] = [4 << 10, 64 << 10];
/// Arguments of every message: the sequence number, then three checked words.
const NARGS: usize = 4;
const H_MEDIUM: u8 = 150;
const H_LONG: u8 = 151;
/// Offset added to a request's sequence number in its reply's arguments.
const REPLY_SEQ: u32 = 1 << 30;

/// Tag of the payload `src` sends of `len` bytes as a request or reply
/// (the same for every message of a phase: Long payloads of one sender land
/// on the same bytes, so an overwrite by a later message changes nothing).
fn tag(src: u32, len: usize, is_req: bool) -> u64 {
    0xf100d ^ (u64::from(src) << 40) ^ ((len as u64) << 1) ^ u64::from(is_req)
}

fn args_of(src: u32, seq: u32) -> [i32; NARGS] {
    [
        seq as i32,
        arg_value(src, seq, 1),
        arg_value(src, seq, 2),
        arg_value(src, seq, 3),
    ]
}

/// Where Long requests from `src` land in a segment, and Long replies from
/// `src` (`n` ranks): one 64 KiB slot per (direction, source).
fn long_slot(n: u32, src: u32, is_req: bool) -> usize {
    let slot = if is_req { src } else { n + src };
    slot as usize * (64 << 10)
}

/// Per peer counters of one rank.
struct Counts {
    requests: Vec<AtomicU64>,
    request_seq_sum: Vec<AtomicU64>,
    replies: Vec<AtomicU64>,
    reply_seq_sum: Vec<AtomicU64>,
}

impl Counts {
    fn new(n: u32) -> Counts {
        let v = || (0..n).map(|_| AtomicU64::new(0)).collect::<Vec<_>>();
        Counts {
            requests: v(),
            request_seq_sum: v(),
            replies: v(),
            reply_seq_sum: v(),
        }
    }

    fn reset(&self) {
        for v in [
            &self.requests,
            &self.request_seq_sum,
            &self.replies,
            &self.reply_seq_sum,
        ] {
            for a in v {
                a.store(0, SeqCst);
            }
        }
    }
}

/// Expected payloads: `[src][size index][is_req]`.
type Expected = Vec<[[Vec<u8>; 2]; 2]>;

fn main() {
    let mut argv = std::env::args().skip(1);
    let count_64k: u32 = argv.next().map_or(300, |s| s.parse().expect("COUNT_64K"));
    let count_4k: u32 = argv.next().map_or(3000, |s| s.parse().expect("COUNT_4K"));
    // Two slots of 64 KiB per rank and direction.
    let seg_bytes = 2 * 64 * (64 << 10) + (64 << 10);
    let job = Job::start("TEST_FLOOD", seg_bytes);
    let (me, n) = (job.rank(), job.size());
    assert!(n <= 64, "test-flood supports at most 64 ranks");

    let expected: Arc<Expected> = Arc::new(
        (0..n)
            .map(|src| {
                SIZES.map(|len| {
                    [
                        payload(tag(src, len, false), len),
                        payload(tag(src, len, true), len),
                    ]
                })
            })
            .collect(),
    );
    let counts = Arc::new(Counts::new(n));
    let seg_base = job.seg.addr();

    let mut table = Vec::new();
    for (idx, cat, flag) in [
        (H_MEDIUM, AmCategory::Medium, Flags::AM_MEDIUM),
        (H_LONG, AmCategory::Long, Flags::AM_LONG),
    ] {
        let expected = expected.clone();
        let counts = counts.clone();
        table.push(HandlerEntry::req_rep(
            idx,
            flag,
            NARGS as u32,
            move |tok, msg| {
                let src = tok.src_rank();
                let is_req = tok.is_request();
                assert_eq!(msg.category(), cat);
                let args = msg.args();
                assert_eq!(args.len(), NARGS);
                let seq = args[0] as u32;
                let want_seq = if is_req {
                    seq
                } else {
                    seq.wrapping_sub(REPLY_SEQ)
                };
                assert_eq!(
                    args,
                    &args_of(src, seq)[..],
                    "{cat:?} {} arguments from rank {src}",
                    if is_req { "request" } else { "reply" }
                );
                let len = msg.payload().len();
                let si = SIZES
                    .iter()
                    .position(|&s| s == len)
                    .unwrap_or_else(|| panic!("{cat:?} payload of {len} bytes from rank {src}"));
                if msg.payload() != &expected[src as usize][si][usize::from(is_req)][..] {
                    check_payload(
                        &format!("{cat:?} payload {seq} from rank {src}"),
                        tag(src, len, is_req),
                        msg.payload(),
                    );
                }
                if cat == AmCategory::Long {
                    assert_eq!(msg.payload().as_ptr() as usize, msg.dest_addr());
                    assert_eq!(
                        msg.dest_addr() - seg_base,
                        long_slot(n, src, is_req),
                        "Long payload from rank {src} landed off its slot"
                    );
                }
                let s = src as usize;
                match tok {
                    Token::Request(t) => {
                        counts.requests[s].fetch_add(1, SeqCst);
                        counts.request_seq_sum[s].fetch_add(u64::from(want_seq), SeqCst);
                        let rargs = args_of(me, seq.wrapping_add(REPLY_SEQ));
                        let data = &expected[me as usize][si][0];
                        let r = match cat {
                            AmCategory::Long => {
                                let seg = t.info().ep.runtime().segments().unwrap()[s];
                                t.reply_long(
                                    idx,
                                    data,
                                    seg.owner_base + long_slot(n, me, false),
                                    Lc::Now,
                                    Flags::empty(),
                                    &rargs,
                                )
                            }
                            _ => t.reply_medium(idx, data, Lc::Now, Flags::empty(), &rargs),
                        };
                        assert!(r.expect("reply").is_sent());
                    }
                    Token::Reply(_) => {
                        counts.replies[s].fetch_add(1, SeqCst);
                        counts.reply_seq_sum[s].fetch_add(u64::from(want_seq), SeqCst);
                    }
                }
            },
        ));
    }
    register_handlers(&job.ep, &mut table).expect("register handlers");
    job.barrier();

    let segs = job.ep.runtime().segments().expect("segments");
    for (cat, idx) in [(AmCategory::Medium, H_MEDIUM), (AmCategory::Long, H_LONG)] {
        for (si, &len) in SIZES.iter().enumerate() {
            let count = if len == 64 << 10 { count_64k } else { count_4k };
            counts.reset();
            job.barrier();
            let start = Instant::now();
            let data = &expected[me as usize][si][1];
            // Round robin over the peers, so that every pair floods at once.
            for seq in 0..count {
                for k in 1..n {
                    let peer = (me + k) % n;
                    let args = args_of(me, seq);
                    let r = match cat {
                        AmCategory::Long => job.tm.request_long(
                            peer,
                            idx,
                            data,
                            segs[peer as usize].owner_base + long_slot(n, me, true),
                            Lc::Now,
                            Flags::empty(),
                            &args,
                        ),
                        _ => job
                            .tm
                            .request_medium(peer, idx, data, Lc::Now, Flags::empty(), &args),
                    };
                    assert_eq!(r.expect("request"), Injected::Sent);
                }
            }
            let what = format!("replies to the {cat:?} {len}-byte flood");
            job.wait_for(&what, || {
                (0..n)
                    .filter(|&p| p != me)
                    .all(|p| counts.replies[p as usize].load(SeqCst) >= u64::from(count))
            });
            // Every rank has all its replies, so every request was handled.
            job.barrier();
            let sum = u64::from(count) * u64::from(count.saturating_sub(1)) / 2;
            for p in (0..n).filter(|&p| p != me) {
                let p = p as usize;
                assert_eq!(
                    counts.requests[p].load(SeqCst),
                    u64::from(count),
                    "{cat:?} {len}-byte requests from rank {p}"
                );
                assert_eq!(
                    counts.request_seq_sum[p].load(SeqCst),
                    sum,
                    "{cat:?} {len}-byte request numbers from rank {p}"
                );
                assert_eq!(
                    counts.replies[p].load(SeqCst),
                    u64::from(count),
                    "{cat:?} {len}-byte replies from rank {p}"
                );
                assert_eq!(
                    counts.reply_seq_sum[p].load(SeqCst),
                    sum,
                    "{cat:?} {len}-byte reply numbers from rank {p}"
                );
            }
            assert_eq!(counts.requests[me as usize].load(SeqCst), 0);
            if me == 0 {
                println!(
                    "test-flood: {cat:?} {len} bytes x {count} per pair on {n} ranks: {:.3} s",
                    start.elapsed().as_secs_f64()
                );
            }
        }
    }
    job.barrier();
    println!("test-flood: rank {me} of {n}: all checks passed");
}
