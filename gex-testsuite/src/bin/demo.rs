//! The demo job: `cargo xtask demo` (or `gex-run -n 3 target/release/demo`).
//!
//! Every rank registers its handlers, sends a Medium request carrying a
//! checksummed payload to every rank (itself included), and each request
//! handler verifies the payload and replies with the checksum it computed.
//! Then rank 0 measures, against every rank, the round trip of a Short
//! request/reply and the bandwidth of Long requests landing in the target's
//! segment, each verified by the target.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use gex::am::{register_handlers, AmRequest, HandlerEntry};
use gex::{Flags, Lc, Segment};
use gex_core::internals::*;

const HELLO: u8 = 200; // Medium request: payload, args (sender, checksum)
const ACK: u8 = 201; // Short reply: args (checksum)
const PING: u8 = 202; // Short request; replies PONG
const PONG: u8 = 203; // Short reply
const LAND: u8 = 204; // Long request: args (checksum, verify all); replies PONG

fn checksum(data: &[u8]) -> i32 {
    data.iter()
        .fold(17i32, |h, &b| h.wrapping_mul(31).wrapping_add(i32::from(b)))
}

fn main() {
    let (_client, ep, tm) = gex::init("DEMO").expect("gex::init");
    let _segment = Segment::attach(&tm, 4 << 20).expect("segment attach");
    let (me, n) = (tm.rank(), tm.size());

    let acks = Arc::new(AtomicU64::new(0));
    let pongs = Arc::new(AtomicU64::new(0));
    let (a, p) = (acks.clone(), pongs.clone());
    let mut handlers = [
        HandlerEntry::request(HELLO, Flags::AM_MEDIUM, 2, |tok, msg| {
            let (src, sum) = (msg.arg(0), msg.arg(1));
            assert_eq!(src as u32, tok.src_rank(), "sender named in the arguments");
            assert_eq!(
                checksum(msg.payload()),
                sum,
                "payload from rank {src} intact"
            );
            tok.reply_short(ACK, Flags::empty(), &[sum]).expect("reply");
        })
        .with_name("hello"),
        HandlerEntry::reply(ACK, Flags::AM_SHORT, 1, move |_tok, _msg| {
            a.fetch_add(1, Ordering::Relaxed);
        })
        .with_name("ack"),
        HandlerEntry::request(PING, Flags::AM_SHORT, 0, |tok, _msg| {
            tok.reply_short(PONG, Flags::empty(), &[]).expect("reply");
        })
        .with_name("ping"),
        HandlerEntry::reply(PONG, Flags::AM_SHORT, 0, move |_tok, _msg| {
            p.fetch_add(1, Ordering::Relaxed);
        })
        .with_name("pong"),
        HandlerEntry::request(LAND, Flags::AM_LONG, 2, |tok, msg| {
            // The payload is already in this rank's segment, at dest_addr.
            assert_eq!(msg.payload().as_ptr() as usize, msg.dest_addr());
            let p = msg.payload();
            if msg.arg(1) != 0 {
                assert_eq!(checksum(p), msg.arg(0), "Long payload intact");
            } else {
                assert_eq!((p[0], p[p.len() - 1]), (0, ((p.len() - 1) % 251) as u8));
            }
            tok.reply_short(PONG, Flags::empty(), &[]).expect("reply");
        })
        .with_name("land"),
    ];
    register_handlers(&ep, &mut handlers).expect("register handlers");
    gex::barrier(&tm).expect("barrier");

    // Everyone greets everyone with a payload that differs per pair.
    let rt = ep.runtime();
    let t0 = Instant::now();
    for peer in 0..n {
        let payload: Vec<u8> = (0..4096u32).map(|i| (i * (me + 1) + peer) as u8).collect();
        let args = [me as i32, checksum(&payload)];
        tm.request_medium(peer, HELLO, &payload, Lc::Now, Flags::empty(), &args)
            .expect("request");
    }
    rt.wait_until(|| acks.load(Ordering::Relaxed) == u64::from(n))
        .expect("wait");
    println!(
        "rank {me}/{n}: greeted {n} ranks with 4 KiB Medium AMs; every payload verified ({:.1?})",
        t0.elapsed()
    );
    gex::barrier(&tm).expect("barrier");

    if me == 0 {
        let mut expected = pongs.load(Ordering::Relaxed);
        for peer in 0..n {
            let iters = 20_000u64;
            let t = Instant::now();
            for _ in 0..iters {
                tm.request_short(peer, PING, Flags::empty(), &[])
                    .expect("ping");
                expected += 1;
                rt.wait_until(|| pongs.load(Ordering::Relaxed) == expected)
                    .expect("wait");
            }
            let rtt = t.elapsed().as_secs_f64() * 1e6 / iters as f64;

            let data: Vec<u8> = (0..256u32 << 10).map(|i| (i % 251) as u8).collect();
            let sum = checksum(&data);
            let dest = rt.segments().expect("attached")[peer as usize].owner_base;
            let reps = 2000u64;
            let t = Instant::now();
            for rep in 0..reps {
                // The first transfer is checksummed in full at the target,
                // the others at both ends (checksumming is slower than the copy).
                let args = [sum, i32::from(rep == 0)];
                tm.request_long(peer, LAND, &data, dest, Lc::Now, Flags::empty(), &args)
                    .expect("long");
                expected += 1;
                rt.wait_until(|| pongs.load(Ordering::Relaxed) == expected)
                    .expect("wait");
            }
            let gbs = (reps * data.len() as u64) as f64 / t.elapsed().as_secs_f64() / 1e9;
            println!(
                "rank 0 -> rank {peer}: AMShort round trip {rtt:.3} us; 256 KiB AMLong round trips {gbs:.2} GB/s"
            );
        }
    }
    gex::barrier(&tm).expect("barrier");
    println!("rank {me}/{n}: done");
}
