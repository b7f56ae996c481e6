//! AM benchmark in the layout of GASNet-EX's testam:
//! `gex-run -n 2 bench-testam [ITERS]`.
//!
//! Rank 0 measures against rank 1 (itself with one rank); other ranks idle.
//! Reported per message: ping-pong round trips (request/reply and
//! request/request), flood one-way (time per request until the target has
//! run them all) and flood round trip (time per request/reply pair with
//! many in flight), for Short, and for Medium and Long by payload size.
//! This is a benchmark program, not a test: it checks delivery counts only.
//! `BENCH_ONLY=pingpong` or `BENCH_ONLY=oneway` measures just the Short
//! ping-pong or the Short one-way flood; `BENCH_ONLY=pingpong-ep` the
//! Short ping-pong between created endpoints (index 1 on both ranks,
//! through TM-pairs), which the full run also reports after the primordial
//! one; `BENCH_ONLY=medium` the 1 KiB Medium ping-pong (ITERS / 4 round
//! trips, as the full run's row).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Instant;

use gex::am::{register_handlers, AmRequest, HandlerEntry, LcOpt, Token};
use gex::{AmCategory, Flags, Lc, RANK_INVALID};
use gex_core::internals::*;
use gex_testsuite::Job;

const H_PING: u8 = 200; // Short req/rep: request replies, reply counts
const H_REQ: u8 = 201; // Short request that only counts
const H_MED: u8 = 202; // Medium req/rep
const H_MED_REQ: u8 = 203; // Medium request that only counts
const H_LONG: u8 = 204; // Long req/rep
const H_LONG_REQ: u8 = 205; // Long request that only counts
const H_DONE: u8 = 206;
const H_ACK: u8 = 207; // Short request that counts as a reply (flood end)

struct State {
    replies: AtomicU64,
    requests: AtomicU64,
    done: AtomicU64,
}

fn main() {
    let iters: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(200_000);
    // "short": only the AMShort rows.
    let short_only = std::env::args().nth(2).as_deref() == Some("short");
    let job = Job::start("TESTAM", 32 << 20);
    let (me, n) = (job.rank(), job.size());
    let st = Arc::new(State {
        replies: AtomicU64::new(0),
        requests: AtomicU64::new(0),
        done: AtomicU64::new(0),
    });
    let seg = job.seg.addr();
    let mut table = vec![];
    for (idx, cat) in [
        (H_PING, AmCategory::Short),
        (H_MED, AmCategory::Medium),
        (H_LONG, AmCategory::Long),
    ] {
        let s = st.clone();
        let flag = match cat {
            AmCategory::Short => Flags::AM_SHORT,
            AmCategory::Medium => Flags::AM_MEDIUM,
            AmCategory::Long => Flags::AM_LONG,
        };
        table.push(HandlerEntry::req_rep(
            idx,
            flag,
            0,
            move |tok, msg| match tok {
                Token::Request(t) => {
                    let _ = match cat {
                        AmCategory::Short => t.reply_short(idx, Flags::empty(), &[]),
                        AmCategory::Medium => {
                            t.reply_medium(idx, msg.payload(), Lc::Now, Flags::empty(), &[])
                        }
                        AmCategory::Long => {
                            // Reply into the requester's segment at the same offset.
                            let off = msg.dest_addr() - seg;
                            let src = t.src_rank() as usize;
                            let base = gex_core::Runtime::get().unwrap().segments().unwrap()[src]
                                .owner_base;
                            t.reply_long(
                                idx,
                                msg.payload(),
                                base + off,
                                Lc::Now,
                                Flags::empty(),
                                &[],
                            )
                        }
                    }
                    .expect("reply");
                }
                Token::Reply(_) => {
                    s.replies.fetch_add(1, Relaxed);
                }
            },
        ));
    }
    for (idx, flag) in [
        (H_REQ, Flags::AM_SHORT),
        (H_MED_REQ, Flags::AM_MEDIUM),
        (H_LONG_REQ, Flags::AM_LONG),
    ] {
        let s = st.clone();
        table.push(HandlerEntry::request(idx, flag, 0, move |_t, _m| {
            s.requests.fetch_add(1, Relaxed);
        }));
    }
    {
        let s = st.clone();
        table.push(HandlerEntry::request(
            H_DONE,
            Flags::AM_SHORT,
            1,
            move |_t, m| {
                s.done.store(m.arg(0) as u64, SeqCst);
            },
        ));
    }
    {
        let s = st.clone();
        table.push(HandlerEntry::request(
            H_ACK,
            Flags::AM_SHORT,
            0,
            move |_t, _m| {
                s.replies.fetch_add(1, Relaxed);
            },
        ));
    }
    register_handlers(&job.ep, &mut table).unwrap();
    // A created endpoint on every rank with the ping-pong handler, for the
    // row between created endpoints.
    let ep1 = gex::Ep::create(&job.client, gex::EpCapabilities::AM, Flags::empty())
        .expect("gex_EP_Create");
    {
        let s = st.clone();
        let mut t1 = vec![HandlerEntry::req_rep(
            H_PING,
            Flags::AM_SHORT,
            0,
            move |tok, _msg| match tok {
                Token::Request(t) => {
                    t.reply_short(H_PING, Flags::empty(), &[]).expect("reply");
                }
                Token::Reply(_) => {
                    s.replies.fetch_add(1, Relaxed);
                }
            },
        )];
        register_handlers(&ep1, &mut t1).unwrap();
    }
    job.barrier();

    let peer = if n > 1 { 1 } else { 0 };
    if me == 0 {
        let tm = &job.tm;
        let rt = job.ep.runtime();
        let wait = |cond: &dyn Fn() -> bool| rt.wait_until(cond).expect("wait");
        println!(
            "bench-testam: {n} ranks, rank 0 <-> rank {peer}, conduit {}",
            rt.conduit().name()
        );
        let report = |name: &str, iters: u64, t: f64, bytes: usize| {
            let us = t * 1e6 / iters as f64;
            if bytes > 0 {
                println!(
                    "P0: {name:<44} {us:>9.3} us  {:>9.1} MB/s",
                    bytes as f64 / us
                );
            } else {
                println!("P0: {name:<44} {us:>9.3} us");
            }
        };
        // Short ping-pong, request/reply.
        let pingpong = |cat: AmCategory, idx: u8, len: usize, iters: u64| -> f64 {
            let data = vec![7u8; len];
            let dest =
                gex_core::Runtime::get().unwrap().segments().unwrap()[peer as usize].owner_base;
            let start = st.replies.load(SeqCst);
            let t0 = Instant::now();
            for i in 1..=iters {
                match cat {
                    AmCategory::Short => tm.request_short(peer, idx, Flags::empty(), &[]),
                    AmCategory::Medium => {
                        tm.request_medium(peer, idx, &data, Lc::Now, Flags::empty(), &[])
                    }
                    AmCategory::Long => {
                        tm.request_long(peer, idx, &data, dest, Lc::Now, Flags::empty(), &[])
                    }
                }
                .unwrap();
                wait(&|| st.replies.load(Relaxed) == start + i);
            }
            t0.elapsed().as_secs_f64()
        };
        // Short ping-pong between the created endpoints (index 1 <-> 1).
        let pair1 = ep1.pair(1);
        let pingpong_ep = |iters: u64| -> f64 {
            let start = st.replies.load(SeqCst);
            let t0 = Instant::now();
            for i in 1..=iters {
                pair1
                    .request_short(peer, H_PING, Flags::empty(), &[])
                    .unwrap();
                wait(&|| st.replies.load(Relaxed) == start + i);
            }
            t0.elapsed().as_secs_f64()
        };
        let flood = |cat: AmCategory, idx: u8, len: usize, iters: u64, roundtrip: bool| -> f64 {
            let data = vec![7u8; len];
            let dest =
                gex_core::Runtime::get().unwrap().segments().unwrap()[peer as usize].owner_base;
            let start_rep = st.replies.load(SeqCst);
            let start_req = st.requests.load(SeqCst);
            let t0 = Instant::now();
            for _ in 0..iters {
                match cat {
                    AmCategory::Short => tm.request_short(peer, idx, Flags::empty(), &[]),
                    AmCategory::Medium => {
                        tm.request_medium(peer, idx, &data, Lc::Now, Flags::empty(), &[])
                    }
                    AmCategory::Long => {
                        tm.request_long(peer, idx, &data, dest, Lc::Now, Flags::empty(), &[])
                    }
                }
                .unwrap();
            }
            if roundtrip {
                wait(&|| st.replies.load(Relaxed) == start_rep + iters);
            } else if peer == 0 {
                wait(&|| st.requests.load(Relaxed) >= start_req + iters);
            } else {
                // The target acknowledges once it has run every request.
                tm.request_short(peer, H_DONE, Flags::empty(), &[-1])
                    .unwrap();
                wait(&|| st.replies.load(Relaxed) == start_rep + 1);
            }
            t0.elapsed().as_secs_f64()
        };
        // Warm up.
        pingpong(AmCategory::Short, H_PING, 0, 1000);
        let only = std::env::var("BENCH_ONLY").ok();
        if matches!(
            only.as_deref(),
            Some("oneway" | "pingpong" | "pingpong-ep" | "medium")
        ) {
            if only.as_deref() == Some("medium") {
                let it = (iters / 4).max(100);
                let t = pingpong(AmCategory::Medium, H_MED, 1024, it);
                report(
                    &format!("AMMedium    ping-pong roundtrip ReqRep: {:>8} B", 1024),
                    it,
                    t,
                    1024,
                );
            } else if only.as_deref() == Some("pingpong-ep") {
                pingpong_ep(1000);
                let t = pingpong_ep(iters);
                report("AMShort     ping-pong roundtrip ReqRep ep1:", iters, t, 0);
            } else if only.as_deref() == Some("oneway") {
                let t = flood(AmCategory::Short, H_REQ, 0, iters * 20, false);
                report("AMShort     flood     one-way   Req:", iters * 20, t, 0);
            } else {
                let t = pingpong(AmCategory::Short, H_PING, 0, iters);
                report("AMShort     ping-pong roundtrip ReqRep:", iters, t, 0);
            }
            for r in 0..n {
                tm.request_short(r, H_DONE, Flags::empty(), &[1]).unwrap();
            }
            job.ep
                .runtime()
                .wait_until(|| st.done.load(Relaxed) != 0)
                .expect("wait");
            job.barrier();
            return;
        }
        let t = pingpong(AmCategory::Short, H_PING, 0, iters);
        report("AMShort     ping-pong roundtrip ReqRep:", iters, t, 0);
        pingpong_ep(1000);
        let t = pingpong_ep(iters);
        report("AMShort     ping-pong roundtrip ReqRep ep1:", iters, t, 0);
        let t = flood(AmCategory::Short, H_REQ, 0, iters * 5, false);
        report("AMShort     flood     one-way   Req:", iters * 5, t, 0);
        let t = flood(AmCategory::Short, H_PING, 0, iters * 5, true);
        report("AMShort     flood     roundtrip ReqRep:", iters * 5, t, 0);

        let max_med = tm
            .max_request_medium(RANK_INVALID, LcOpt::Now, Flags::empty(), 0)
            .unwrap();
        let max_long = tm
            .max_request_long(RANK_INVALID, LcOpt::Now, Flags::empty(), 0)
            .unwrap();
        let sized = if short_only {
            vec![]
        } else {
            vec![
                (AmCategory::Medium, max_med, H_MED, H_MED, H_MED_REQ),
                (AmCategory::Long, max_long, H_LONG, H_LONG, H_LONG_REQ),
            ]
        };
        for (cat, max, pp, fl, fl1) in sized {
            let mut len = 0usize;
            loop {
                let it = (iters / 4)
                    .max(100)
                    .min((4u64 << 30) / (len as u64 + 1))
                    .max(100);
                let name = format!("AM{:<9} ping-pong roundtrip ReqRep: {len:>8} B", cat.name());
                let t = pingpong(cat, pp, len, it);
                report(&name, it, t, len);
                let name = format!("AM{:<9} flood     one-way   Req:    {len:>8} B", cat.name());
                let t = flood(cat, fl1, len, it, false);
                report(&name, it, t, len);
                let name = format!("AM{:<9} flood     roundtrip ReqRep: {len:>8} B", cat.name());
                let t = flood(cat, fl, len, it, true);
                report(&name, it, t, len);
                if len >= max {
                    break;
                }
                len = if len == 0 { 1 } else { (len * 4).min(max) };
            }
        }
        for r in 0..n {
            tm.request_short(r, H_DONE, Flags::empty(), &[1]).unwrap();
        }
    }
    // The passive side: serve requests until told to stop; acknowledge
    // "-1" (end of a one-way flood) with a reply through the ping handler.
    let s = st.clone();
    loop {
        job.ep
            .runtime()
            .wait_until(|| s.done.load(Relaxed) != 0)
            .expect("wait");
        if s.done.swap(0, SeqCst) == 1 {
            break;
        }
        // AMs from one sender run in order: every flood request ran before
        // the marker did.
        job.tm.request_short(0, H_ACK, Flags::empty(), &[]).unwrap();
    }
    job.barrier();
}
