//! `gex-run -n N keycheck`: the job key is hidden from everything a user of
//! the machine can read about a rank, and the conduit (udp in the tests)
//! still carries AMs with exact data.
//!
//! Before `gex::init`, each rank reads its job key the way the bootstrap
//! does ([`gex_core::bootstrap::launcher_key`], which init then reuses) and
//! checks that neither its `/proc/self/environ` nor its
//! `/proc/self/cmdline` holds the key or a `GEX_JOB_KEY` variable. Then
//! every rank sends every other rank Medium requests of 16 B, 4 KiB and
//! 60 KiB whose handlers verify the payload byte for byte and reply with
//! its checksum, which the sender checks.
//!
//! With the argument `stdin`, rank 0 then reads its standard input to the
//! end and prints it (one line, newlines as `|`): what the launcher
//! forwarded after the key line.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use gex::am::{register_handlers, AmRequest, HandlerEntry};
use gex::{Flags, Lc};
use gex_testsuite::{check_payload, payload, Job};

const REQ: u8 = 200; // Medium request: args (sender, tag, checksum)
const ACK: u8 = 201; // Short reply: args (checksum)

const SIZES: [usize; 3] = [16, 4096, 60 << 10];

fn checksum(data: &[u8]) -> i32 {
    data.iter()
        .fold(17i32, |h, &b| h.wrapping_mul(31).wrapping_add(i32::from(b)))
}

fn tag(src: u32, dst: u32, i: usize) -> u64 {
    (u64::from(src) << 40) | (u64::from(dst) << 20) | i as u64
}

fn main() {
    let key = gex_core::bootstrap::launcher_key()
        .expect("read the job key")
        .expect("the launcher gave a job key");
    for what in ["/proc/self/environ", "/proc/self/cmdline"] {
        let bytes = std::fs::read(what).unwrap_or_else(|e| panic!("read {what}: {e}"));
        for entry in bytes.split(|&b| b == 0) {
            assert!(
                !entry.starts_with(b"GEX_JOB_KEY="),
                "{what} has GEX_JOB_KEY"
            );
            assert!(
                !entry.windows(key.len()).any(|w| w == key.as_bytes()),
                "{what} shows the job key"
            );
        }
    }

    let job = Job::start("KEYCHECK", 1 << 20);
    let (me, n) = (job.rank(), job.size());
    let acks = Arc::new(AtomicU64::new(0));
    let sums = Arc::new(AtomicU64::new(0));
    let (a, s) = (acks.clone(), sums.clone());
    let mut handlers = [
        HandlerEntry::request(REQ, Flags::AM_MEDIUM, 3, move |tok, msg| {
            let (src, i, sum) = (msg.arg(0) as u32, msg.arg(1) as usize, msg.arg(2));
            assert_eq!(src, tok.src_rank(), "sender named in the arguments");
            check_payload("Medium request", tag(src, me, i), msg.payload());
            assert_eq!(msg.payload().len(), SIZES[i]);
            assert_eq!(checksum(msg.payload()), sum);
            tok.reply_short(ACK, Flags::empty(), &[sum]).expect("reply");
        }),
        HandlerEntry::reply(ACK, Flags::AM_SHORT, 1, move |_tok, msg| {
            s.fetch_add(msg.arg(0) as u32 as u64, Ordering::Relaxed);
            a.fetch_add(1, Ordering::Relaxed);
        }),
    ];
    register_handlers(&job.ep, &mut handlers).expect("register handlers");
    job.barrier();

    let mut want = 0u64;
    let mut sent = 0u64;
    for peer in (0..n).filter(|&p| p != me) {
        for (i, &len) in SIZES.iter().enumerate() {
            let p = payload(tag(me, peer, i), len);
            let sum = checksum(&p);
            want += sum as u32 as u64;
            sent += 1;
            job.tm
                .request_medium(
                    peer,
                    REQ,
                    &p,
                    Lc::Now,
                    Flags::empty(),
                    &[me as i32, i as i32, sum],
                )
                .expect("request");
        }
    }
    job.wait_for("the replies", || acks.load(Ordering::Relaxed) == sent);
    assert_eq!(sums.load(Ordering::Relaxed), want, "reply checksums");
    job.barrier();
    println!(
        "keycheck: rank {me} of {n}: key hidden, {sent} AMs verified over {}",
        std::env::var("GEX_CONDUIT").unwrap_or_default()
    );
    if me == 0 && std::env::args().nth(1).as_deref() == Some("stdin") {
        let mut input = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut input).expect("read stdin");
        println!(
            "keycheck: rank 0 stdin: {}",
            input.trim_end().replace('\n', "|")
        );
    }
}
