//! Active Message tests, run as one rank of a job of any size:
//! `gex-run -n N test-am`.
//!
//! Checks, across all ranks (self included): handler index assignment;
//! Short/Medium/Long requests and replies with every argument count 0..=16,
//! arguments checked in the handlers; Medium payloads of every interesting
//! size up to the maximum; Long payloads at random segment offsets, checked
//! where they land; IMMEDIATE against a full queue (nothing sent, target
//! memory untouched, and IMMEDIATE Prepares are no-ops); negotiated payload;
//! token info; the errors of calls made from handler context or under an
//! HSL; zero-byte Longs, whose handlers see `dest_addr` unchanged whatever
//! it is; and IMMEDIATE replies meeting a full reply queue.

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

use gex::am::{register_handlers, AmRequest, HandlerEntry, Injected, LcOpt, PrepareBuf, Token};
use gex::{AmCategory, ErrorKind, Event, Flags, Hsl, Lc, TmRef, AM_INDEX_BASE, RANK_INVALID};
use gex_core::internals::*;
use gex_testsuite::{arg_value, check_payload, payload, Job, Rng};

const SEG: usize = 8 << 20;
/// Generic handlers: index = GENERIC + 17 * category + nargs.
const GENERIC: u8 = 128;
const H_IMM: u8 = 180;
const H_NPAM_MED: u8 = 181;
const H_NPAM_LONG: u8 = 182;
const H_TOKEN: u8 = 183;
const H_VIOLATE: u8 = 184;
const H_VIOLATE_REPLY: u8 = 185;
const H_OFFSET: u8 = 186;
const H_RESERVED: u8 = 187;
const H_LONG0: u8 = 188;
const H_REPLY_IMM: u8 = 189;
const H_REPLY_IMM_BACK: u8 = 190;

/// Payload of each IMMEDIATE Medium reply in `immediate_reply`: four fill
/// the smp reply ring (256 KiB), so a burst of them meets backpressure.
const IMM_REPLY_BYTES: usize = 60_000;
/// Requests in the `immediate_reply` burst.
const IMM_REPLY_BURST: u64 = 16;

/// An address split into two handler arguments, and back.
fn addr_args(a: usize) -> [i32; 2] {
    [a as u32 as i32, (a as u64 >> 32) as u32 as i32]
}
fn args_addr(lo: i32, hi: i32) -> usize {
    (u64::from(lo as u32) | (u64::from(hi as u32) << 32)) as usize
}

fn cat_flag(c: AmCategory) -> Flags {
    match c {
        AmCategory::Short => Flags::AM_SHORT,
        AmCategory::Medium => Flags::AM_MEDIUM,
        AmCategory::Long => Flags::AM_LONG,
    }
}

fn generic_index(c: AmCategory, nargs: usize) -> u8 {
    GENERIC + 17 * c as u8 + nargs as u8
}

/// Tag of a payload sent by `src` of `len` bytes as a request (or reply).
fn tag(src: u32, len: usize, is_req: bool) -> u64 {
    (u64::from(src) << 40) ^ (len as u64) << 1 ^ u64::from(is_req)
}

struct Counters {
    /// Replies received, per category.
    replies: [AtomicU64; 3],
    imm: Vec<AtomicU64>,
    npam: AtomicU64,
    token: AtomicU64,
    offset: AtomicU64,
    violations_checked: AtomicU64,
    reply_violation_checked: AtomicU64,
    reserved_reply_checked: AtomicU64,
    /// Zero-byte Long replies checked, and requests whose reply was sent.
    long0: AtomicU64,
    /// IMMEDIATE replies: requests handled, replies sent, no-ops, and
    /// replies received (payload checked).
    imm_reply_handled: AtomicU64,
    imm_reply_sent: AtomicU64,
    imm_reply_noop: AtomicU64,
    imm_reply_got: AtomicU64,
}

/// Offset of the region of `seg` where source `src`'s requests land (first
/// half) and replies from `src` land (second half).
fn region(n: u32, src: u32) -> (usize, usize) {
    let r = (SEG - 4096) / n as usize / 4096 * 4096;
    (src as usize * r, r)
}

fn main() {
    let job = Job::start("TEST_AM", SEG);
    let (me, n) = (job.rank(), job.size());
    gex::system::set_verbose_errors(false);

    index_assignment(&job);

    let c = Arc::new(Counters {
        replies: Default::default(),
        imm: (0..n).map(|_| AtomicU64::new(0)).collect(),
        npam: AtomicU64::new(0),
        token: AtomicU64::new(0),
        offset: AtomicU64::new(0),
        violations_checked: AtomicU64::new(0),
        reply_violation_checked: AtomicU64::new(0),
        reserved_reply_checked: AtomicU64::new(0),
        long0: AtomicU64::new(0),
        imm_reply_handled: AtomicU64::new(0),
        imm_reply_sent: AtomicU64::new(0),
        imm_reply_noop: AtomicU64::new(0),
        imm_reply_got: AtomicU64::new(0),
    });
    register_all(&job, &c);
    job.barrier();

    all_to_all_args(&job, &c);
    job.barrier();
    medium_sizes(&job, &c);
    job.barrier();
    flood_with_replies(&job, &c);
    job.barrier();
    long_random(&job, &c);
    job.barrier();
    immediate_full_queue(&job, &c);
    job.barrier();
    negotiated_payload(&job, &c);
    job.barrier();
    token_info(&job, &c);
    job.barrier();
    violations(&job, &c);
    job.barrier();
    limits(&job);
    job.barrier();
    long_zero_bytes(&job, &c);
    job.barrier();
    immediate_reply(&job, &c);
    job.barrier();
    println!("test-am: rank {me} of {n}: all checks passed");
}

fn index_assignment(job: &Job) {
    let ep = &job.ep;
    let noop = |_t: gex::am::RequestToken<'_>, _m: &gex::am::AmMsg<'_>| {};
    let mut t = [
        HandlerEntry::request(200, Flags::AM_SHORT, 0, noop).with_name("fixed200"),
        HandlerEntry::request(0, Flags::AM_SHORT, 0, noop).with_name("zeroA"),
        HandlerEntry::request(255, Flags::AM_SHORT, 0, noop).with_name("fixed255"),
        HandlerEntry::request(0, Flags::AM_MEDLONG, 3, noop).with_name("zeroB"),
    ];
    register_handlers(ep, &mut t).expect("register");
    assert_eq!(
        t.iter().map(|e| e.index).collect::<Vec<_>>(),
        vec![200, 254, 255, 253]
    );
    let mut t2 = [HandlerEntry::request(0, Flags::AM_SHORT, 0, noop)];
    register_handlers(ep, &mut t2).unwrap();
    assert_eq!(t2[0].index, 252);
    // Duplicates, against earlier calls and within one table: nothing of the
    // failing table is registered.
    let mut dup = [HandlerEntry::request(200, Flags::AM_SHORT, 0, noop)];
    let e = register_handlers(ep, &mut dup).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadArg);
    assert!(e.message().contains("200"), "{e}");
    let mut dup2 = [
        HandlerEntry::request(201, Flags::AM_SHORT, 0, noop),
        HandlerEntry::request(201, Flags::AM_SHORT, 0, noop),
    ];
    assert!(register_handlers(ep, &mut dup2).is_err());
    assert!(gex::am::registered_handler(ep, 201).is_none());
    let mut bad = [HandlerEntry::request(
        AM_INDEX_BASE - 1,
        Flags::AM_SHORT,
        0,
        noop,
    )];
    assert!(register_handlers(ep, &mut bad).is_err());
    let mut bad = [HandlerEntry::request(0, Flags::AM_SHORT, 17, noop)];
    assert!(register_handlers(ep, &mut bad).is_err());
    let mut bad = [HandlerEntry::request(
        0,
        Flags::AM_SHORT | Flags::AM_MEDIUM,
        1,
        noop,
    )];
    assert!(register_handlers(ep, &mut bad).is_err());
    let mut bad = [HandlerEntry::request(
        0,
        Flags::AM_SHORT | Flags::IMMEDIATE,
        1,
        noop,
    )];
    assert!(register_handlers(ep, &mut bad).is_err());
    let got = gex::am::registered_handler(ep, 253).expect("zeroB");
    assert_eq!(got.name(), Some("zeroB"));
    assert_eq!(got.nargs(), 3);
    assert_eq!(got.flags(), Flags::AM_MEDLONG | Flags::AM_REQUEST);
}

fn register_all(job: &Job, c: &Arc<Counters>) {
    let mut table = Vec::new();
    let me = job.rank();
    let n = job.size();
    let seg_base = job.seg.addr();
    for cat in [AmCategory::Short, AmCategory::Medium, AmCategory::Long] {
        for nargs in 0..=16usize {
            let c = c.clone();
            let idx = generic_index(cat, nargs);
            table.push(HandlerEntry::req_rep(
                idx,
                cat_flag(cat),
                nargs as u32,
                move |tok, msg| {
                    let src = tok.src_rank();
                    let is_req = tok.is_request();
                    assert_eq!(msg.category(), cat);
                    assert_eq!(msg.args().len(), nargs);
                    for (i, &a) in msg.args().iter().enumerate() {
                        assert_eq!(
                            a,
                            arg_value(src, nargs as u32 + 100 * u32::from(is_req), i),
                            "arg {i} of {nargs} from {src}"
                        );
                    }
                    let len = msg.payload().len();
                    if cat != AmCategory::Short {
                        check_payload(
                            &format!("{cat:?} payload from {src}"),
                            tag(src, len, is_req),
                            msg.payload(),
                        );
                    }
                    if cat == AmCategory::Long {
                        // (A zero-byte Long's payload is an empty slice that
                        // names no memory; its dest_addr is checked below.)
                        if len > 0 {
                            assert_eq!(
                                msg.payload().as_ptr() as usize,
                                msg.dest_addr(),
                                "Long payload lands at dest_addr"
                            );
                        }
                        let (off, r) = region(n, src);
                        let at = msg.dest_addr() - seg_base;
                        if is_req {
                            assert!(
                                at >= off && at + len <= off + r / 2,
                                "request from {src} landed at {at:#x}"
                            );
                        } else {
                            assert!(
                                at >= off + r / 2 && at + len <= off + r,
                                "reply from {src} landed at {at:#x}"
                            );
                        }
                    }
                    match tok {
                        Token::Request(t) => {
                            let args: Vec<i32> =
                                (0..nargs).map(|i| arg_value(me, nargs as u32, i)).collect();
                            let data = payload(tag(me, len, false), len);
                            let r = match cat {
                                AmCategory::Short => t.reply_short(idx, Flags::empty(), &args),
                                AmCategory::Medium => {
                                    t.reply_medium(idx, &data, Lc::Now, Flags::empty(), &args)
                                }
                                AmCategory::Long => {
                                    // Reply into the requester's segment, region `me`,
                                    // second half, at the same relative offset.
                                    let (off, r) = region(n, me);
                                    let (soff, _) = region(n, src);
                                    let rel = msg.dest_addr() - seg_base - soff;
                                    let seg =
                                        t.info().ep.runtime().segments().unwrap()[src as usize];
                                    t.reply_long(
                                        idx,
                                        &data,
                                        seg.owner_base + off + r / 2 + rel,
                                        Lc::Now,
                                        Flags::empty(),
                                        &args,
                                    )
                                }
                            };
                            assert!(r.expect("reply").is_sent());
                        }
                        Token::Reply(_) => {
                            c.replies[cat as usize].fetch_add(1, SeqCst);
                        }
                    }
                },
            ));
        }
    }
    {
        let c = c.clone();
        table.push(HandlerEntry::request(
            H_IMM,
            Flags::AM_SHORT,
            1,
            move |tok, msg| {
                assert_eq!(msg.arg(0), 77);
                c.imm[tok.src_rank() as usize].fetch_add(1, SeqCst);
            },
        ));
    }
    {
        let c = c.clone();
        table.push(HandlerEntry::req_rep(
            H_NPAM_MED,
            Flags::AM_MEDIUM,
            2,
            move |tok, msg| {
                let src = tok.src_rank();
                assert_eq!(msg.arg(0) as u32, src);
                assert_eq!(msg.payload().len(), msg.arg(1) as usize);
                check_payload(
                    "npam medium",
                    tag(src, msg.payload().len(), tok.is_request()),
                    msg.payload(),
                );
                match tok {
                    Token::Request(t) => {
                        let data =
                            payload(tag(me, msg.payload().len(), false), msg.payload().len());
                        let mut sd = t
                            .prepare_reply_medium(
                                PrepareBuf::Client(&data, Lc::Now),
                                data.len(),
                                data.len() + 100,
                                Flags::AM_PREPARE_LEAST_CLIENT,
                                2,
                            )
                            .unwrap()
                            .unwrap();
                        assert_eq!(sd.addr(), data.as_ptr());
                        assert_eq!(sd.size(), data.len());
                        assert!(sd.buf_mut().is_none());
                        sd.commit_medium(H_NPAM_MED, data.len(), &[me as i32, data.len() as i32])
                            .unwrap();
                    }
                    Token::Reply(_) => {
                        c.npam.fetch_add(1, SeqCst);
                    }
                }
            },
        ));
    }
    {
        let c = c.clone();
        table.push(HandlerEntry::req_rep(
            H_NPAM_LONG,
            Flags::AM_LONG,
            2,
            move |tok, msg| {
                let src = tok.src_rank();
                assert_eq!(msg.arg(0) as u32, src);
                let len = msg.payload().len();
                assert_eq!(len, msg.arg(1) as usize);
                check_payload("npam long", tag(src, len, tok.is_request()), msg.payload());
                match tok {
                    Token::Request(t) => {
                        let mut sd = t
                            .prepare_reply_long(
                                PrepareBuf::Alloc,
                                len,
                                len,
                                None,
                                Flags::empty(),
                                2,
                            )
                            .unwrap()
                            .unwrap();
                        assert_eq!(sd.size(), len);
                        assert_eq!(
                            sd.addr() as usize % 16,
                            0,
                            "library buffers are 16-byte aligned"
                        );
                        let b = sd.buf_mut().unwrap();
                        b.copy_from_slice(&payload(tag(me, len, false), len));
                        let (off, r) = region(n, me);
                        let seg = t_seg(src);
                        sd.commit_long(
                            H_NPAM_LONG,
                            len,
                            seg + off + r / 2,
                            &[me as i32, len as i32],
                        )
                        .unwrap();
                    }
                    Token::Reply(_) => {
                        c.npam.fetch_add(1, SeqCst);
                    }
                }
            },
        ));
    }
    {
        let c = c.clone();
        table.push(
            HandlerEntry::req_rep(H_TOKEN, Flags::AM_SHORT, 1, move |tok, msg| {
                let info = tok.info();
                assert_eq!(info.srcrank, msg.arg(0) as u32);
                assert_eq!(info.ep.index(), 0);
                assert_eq!(info.entry.index, H_TOKEN);
                assert_eq!(info.entry.nargs(), 1);
                assert_eq!(info.entry.name(), Some("token-info"));
                assert_eq!(info.is_req, tok.is_request());
                assert!(!info.is_long);
                match tok {
                    Token::Request(t) => {
                        let (_, mask) = t.info_masked(gex::Ti::SRCRANK);
                        assert!(mask.contains(gex::Ti::ALL));
                        let max = t.max_reply_medium(LcOpt::Now, Flags::empty(), 16).unwrap();
                        assert!(max >= 512);
                        assert!(t
                            .reply_short(H_TOKEN, Flags::empty(), &[me as i32])
                            .unwrap()
                            .is_sent());
                    }
                    Token::Reply(_) => {
                        c.token.fetch_add(1, SeqCst);
                    }
                }
            })
            .with_name("token-info"),
        );
    }
    {
        let c = c.clone();
        let tm = job.tm.clone();
        let hsl = Arc::new(Hsl::new(0u32));
        table.push(HandlerEntry::request(
            H_VIOLATE,
            Flags::AM_SHORT,
            0,
            move |tok, _msg| {
                let bad = |r: gex::Result<Injected>| {
                    let e = r.expect_err("must fail in a handler");
                    assert_eq!(e.kind(), ErrorKind::BadArg);
                    assert!(e.message().contains("request handler"), "{e}");
                };
                bad(tm.request_short(0, H_IMM, Flags::empty(), &[77]));
                bad(tm.request_medium(0, H_IMM, &[1], Lc::Now, Flags::empty(), &[]));
                assert!(gex::poll().is_err());
                assert!(Event::INVALID.wait().is_err());
                assert!(gex::barrier(&tm).is_err());
                assert!(tm.rank_to_jobrank(0).is_err());
                // Queries stay legal; the bound-segment query only with IMMEDIATE.
                assert_eq!(tm.size(), n);
                assert!(tm
                    .query_bound_segment(0, Flags::IMMEDIATE)
                    .unwrap()
                    .is_some());
                assert!(tm.query_bound_segment(0, Flags::empty()).is_err());
                // A reply while holding an HSL is refused (and the lock is
                // released before returning, as handlers must).
                let g = hsl.lock();
                let e = tok
                    .reply_short(H_VIOLATE_REPLY, Flags::empty(), &[])
                    .unwrap_err();
                assert!(e.message().contains("handler-safe lock"), "{e}");
                drop(g);
                c.violations_checked.fetch_add(1, SeqCst);
            },
        ));
    }
    {
        let c = c.clone();
        let tm = job.tm.clone();
        table.push(HandlerEntry::req_rep(
            H_VIOLATE_REPLY,
            Flags::AM_SHORT,
            0,
            move |tok, _msg| match tok {
                Token::Request(t) => {
                    assert!(t
                        .reply_short(H_VIOLATE_REPLY, Flags::empty(), &[])
                        .unwrap()
                        .is_sent());
                }
                Token::Reply(_) => {
                    let e = tm
                        .request_short(0, H_IMM, Flags::empty(), &[77])
                        .unwrap_err();
                    assert!(e.message().contains("reply handler"), "{e}");
                    c.reply_violation_checked.fetch_add(1, SeqCst);
                }
            },
        ));
    }
    {
        // A client's handler may not reply to the library's reserved
        // indices either (they would run a layer's handler with arguments
        // of the client's choosing).
        let c = c.clone();
        table.push(HandlerEntry::request(
            H_RESERVED,
            Flags::AM_SHORT,
            1,
            move |tok, msg| {
                let idx = msg.arg(0) as u8;
                let e = tok
                    .reply_short(idx, Flags::empty(), &[0, 0, 0])
                    .expect_err("a reply to a reserved index must fail");
                assert_eq!(e.kind(), ErrorKind::BadArg);
                assert!(e.message().contains("reserved"), "{e}");
                c.reserved_reply_checked.fetch_add(1, SeqCst);
            },
        ));
    }
    {
        let c = c.clone();
        table.push(HandlerEntry::request(
            H_OFFSET,
            Flags::AM_LONG,
            1,
            move |tok, msg| {
                // With PEER_SEG_OFFSET the handler gets the offset, as named.
                assert_eq!(msg.dest_addr(), msg.arg(0) as usize);
                assert_eq!(msg.payload().as_ptr() as usize, seg_base + msg.dest_addr());
                check_payload(
                    "offset long",
                    tag(tok.src_rank(), msg.payload().len(), true),
                    msg.payload(),
                );
                c.offset.fetch_add(1, SeqCst);
            },
        ));
    }
    {
        // Zero-byte Longs: dest_addr reaches the handler exactly as the
        // sender named it, whatever it is (spec: "even for the degenerate
        // case when nbytes==0"). Requests also check Token_MaxReplyLong
        // against the limit the sender computed (limits are symmetric).
        let c = c.clone();
        table.push(HandlerEntry::req_rep(
            H_LONG0,
            Flags::AM_LONG,
            3,
            move |tok, msg| {
                assert!(msg.payload().is_empty(), "a zero-byte Long has no payload");
                let want = args_addr(msg.arg(0), msg.arg(1));
                assert_eq!(msg.dest_addr(), want, "dest_addr of a zero-byte Long");
                match tok {
                    Token::Request(t) => {
                        let max = t.max_reply_long(LcOpt::Now, Flags::empty(), 3).unwrap();
                        assert_eq!(max, msg.arg(2) as usize, "gex_Token_MaxReplyLong");
                        let ev_max = t.max_reply_long(LcOpt::Event, Flags::empty(), 0).unwrap();
                        assert!(ev_max >= 512, "{ev_max}");
                        let e = t
                            .max_reply_long(LcOpt::Group, Flags::empty(), 0)
                            .unwrap_err();
                        assert!(e.message().contains("GROUP"), "{e}");
                        assert!(t.max_reply_long(LcOpt::Now, Flags::empty(), 17).is_err());
                        let back = !want;
                        let [lo, hi] = addr_args(back);
                        let r = t
                            .reply_long(H_LONG0, &[], back, Lc::Now, Flags::empty(), &[lo, hi, 0])
                            .unwrap();
                        assert!(r.is_sent());
                    }
                    Token::Reply(_) => {
                        c.long0.fetch_add(1, SeqCst);
                    }
                }
            },
        ));
    }
    {
        // Replies with IMMEDIATE: a burst of requests to self is handled in
        // one poll, each replying with a large Medium, so the reply queue
        // fills and some replies are no-ops that hand the token back.
        let c1 = c.clone();
        table.push(HandlerEntry::request(
            H_REPLY_IMM,
            Flags::AM_SHORT,
            1,
            move |tok, msg| {
                let seq = msg.arg(0);
                c1.imm_reply_handled.fetch_add(1, SeqCst);
                let data = payload(
                    tag(me, IMM_REPLY_BYTES, false) ^ seq as u64,
                    IMM_REPLY_BYTES,
                );
                match tok
                    .reply_medium(H_REPLY_IMM_BACK, &data, Lc::Now, Flags::IMMEDIATE, &[seq])
                    .unwrap()
                {
                    gex::am::Replied::Sent => {
                        c1.imm_reply_sent.fetch_add(1, SeqCst);
                    }
                    gex::am::Replied::NoOp(t) => {
                        // The token is handed back intact.
                        assert_eq!(t.src_rank(), me);
                        assert!(t.info().is_req);
                        c1.imm_reply_noop.fetch_add(1, SeqCst);
                    }
                }
            },
        ));
        let c = c.clone();
        table.push(HandlerEntry::reply(
            H_REPLY_IMM_BACK,
            Flags::AM_MEDIUM,
            1,
            move |tok, msg| {
                let seq = msg.arg(0);
                assert_eq!(tok.src_rank(), me);
                check_payload(
                    "IMMEDIATE reply",
                    tag(me, IMM_REPLY_BYTES, false) ^ seq as u64,
                    msg.payload(),
                );
                c.imm_reply_got.fetch_add(1, SeqCst);
            },
        ));
    }
    register_handlers(&job.ep, &mut table).expect("register test handlers");
}

/// Zero-byte Long requests (and their zero-byte Long replies) with
/// destinations inside, at the end of, past and far from every segment,
/// by address and by offset: each handler sees `dest_addr` unchanged.
fn long_zero_bytes(job: &Job, c: &Counters) {
    let (me, n) = (job.rank(), job.size());
    let before = c.long0.load(SeqCst);
    let mut sent = 0;
    for peer in 0..n {
        let base = t_seg(peer);
        let max = job
            .tm
            .max_reply_long(peer, LcOpt::Now, Flags::empty(), 3)
            .unwrap();
        let cases = [
            (base, Flags::empty()),
            (base + SEG, Flags::empty()),
            (base + SEG + 12_345, Flags::empty()),
            (base.wrapping_sub(1), Flags::empty()),
            (0, Flags::empty()),
            (1, Flags::empty()),
            (usize::MAX, Flags::empty()),
            (SEG, Flags::PEER_SEG_OFFSET),
            (usize::MAX - 7, Flags::PEER_SEG_OFFSET),
        ];
        for (dest, flags) in cases {
            let [lo, hi] = addr_args(dest);
            let r = job
                .tm
                .request_long(
                    peer,
                    H_LONG0,
                    &[],
                    dest,
                    Lc::Now,
                    flags,
                    &[lo, hi, max as i32],
                )
                .unwrap_or_else(|e| panic!("zero-byte Long to {dest:#x} ({flags:?}): {e}"));
            assert_eq!(r, Injected::Sent);
            sent += 1;
        }
        // Negotiated payload too: a zero-byte commit anywhere.
        let sd = job
            .tm
            .prepare_request_long(peer, PrepareBuf::Alloc, 0, 0, None, Flags::empty(), 3)
            .unwrap()
            .unwrap();
        let dest = usize::MAX - 3;
        let [lo, hi] = addr_args(dest);
        sd.commit_long(H_LONG0, 0, dest, &[lo, hi, max as i32])
            .unwrap();
        sent += 1;
    }
    // A nonzero Long outside the segment is still an error.
    let e = job
        .tm
        .request_long(
            me,
            H_LONG0,
            &[1],
            usize::MAX,
            Lc::Now,
            Flags::empty(),
            &[0, 0, 0],
        )
        .unwrap_err();
    assert!(e.message().contains("outside"), "{e}");
    job.wait_for("the zero-byte Long replies", || {
        c.long0.load(SeqCst) == before + sent
    });
}

/// `Replied::NoOp` from an IMMEDIATE reply: see H_REPLY_IMM. Every reply
/// sent arrives with its payload intact, and the no-ops sent nothing.
fn immediate_reply(job: &Job, c: &Counters) {
    let me = job.rank();
    for seq in 0..IMM_REPLY_BURST {
        let r = job
            .tm
            .request_short(me, H_REPLY_IMM, Flags::empty(), &[seq as i32])
            .unwrap();
        assert_eq!(r, Injected::Sent);
    }
    job.wait_for("the IMMEDIATE-reply requests", || {
        c.imm_reply_handled.load(SeqCst) == IMM_REPLY_BURST
    });
    let sent = c.imm_reply_sent.load(SeqCst);
    assert_eq!(sent + c.imm_reply_noop.load(SeqCst), IMM_REPLY_BURST);
    assert!(
        c.imm_reply_noop.load(SeqCst) > 0,
        "no IMMEDIATE reply met a full reply queue ({sent} sent)"
    );
    job.wait_for("the IMMEDIATE replies", || {
        c.imm_reply_got.load(SeqCst) == sent
    });
    job.barrier();
    assert_eq!(
        c.imm_reply_got.load(SeqCst),
        sent,
        "no-op replies sent nothing"
    );
}

/// The owner address of `rank`'s segment.
fn t_seg(rank: u32) -> usize {
    gex_core::Runtime::get().unwrap().segments().unwrap()[rank as usize].owner_base
}

fn all_to_all_args(job: &Job, c: &Counters) {
    let (me, n) = (job.rank(), job.size());
    for cat in [AmCategory::Short, AmCategory::Medium, AmCategory::Long] {
        for nargs in 0..=16usize {
            let before = c.replies[cat as usize].load(SeqCst);
            let args: Vec<i32> = (0..nargs)
                .map(|i| arg_value(me, nargs as u32 + 100, i))
                .collect();
            let len = 3 * nargs + 1;
            let data = payload(tag(me, len, true), len);
            for peer in 0..n {
                let idx = generic_index(cat, nargs);
                let r = match cat {
                    AmCategory::Short => job.tm.request_short(peer, idx, Flags::empty(), &args),
                    AmCategory::Medium => {
                        let mut ev = Event::default();
                        let r = job.tm.request_medium(
                            peer,
                            idx,
                            &data,
                            Lc::Event(&mut ev),
                            Flags::empty(),
                            &args,
                        );
                        assert!(ev.test().unwrap());
                        r
                    }
                    AmCategory::Long => {
                        let (off, _) = region(n, me);
                        job.tm.request_long(
                            peer,
                            idx,
                            &data,
                            t_seg(peer) + off + 64 * nargs,
                            Lc::Group,
                            Flags::empty(),
                            &args,
                        )
                    }
                };
                assert_eq!(r.expect("request"), Injected::Sent);
            }
            job.wait_for(&format!("{cat:?} replies with {nargs} args"), || {
                c.replies[cat as usize].load(SeqCst) == before + u64::from(n)
            });
        }
    }
}

/// Rank 0 floods its successor with more 1 KiB Medium requests than any
/// conduit queue holds (udp's inbox takes 1024 messages), each answered by
/// a 1 KiB Medium reply sent from inside the request handler. A reply that
/// must wait for window space while the receiver's queue is full must not
/// deadlock; every payload and argument is checked by the handlers.
fn flood_with_replies(job: &Job, c: &Counters) {
    const FLOOD: u64 = 20000;
    const LEN: usize = 1024;
    let (me, n) = (job.rank(), job.size());
    let peer = (me + 1) % n;
    let idx = generic_index(AmCategory::Medium, 2);
    let args: Vec<i32> = (0..2).map(|i| arg_value(me, 102, i)).collect();
    let data = payload(tag(me, LEN, true), LEN);
    // Only rank 0 floods, so that its target is otherwise idle and falls
    // behind the way a server does.
    if me != 0 || n == 1 {
        return;
    }
    let before = c.replies[AmCategory::Medium as usize].load(SeqCst);
    for _ in 0..FLOOD {
        job.tm
            .request_medium(peer, idx, &data, Lc::Now, Flags::empty(), &args)
            .unwrap();
    }
    job.wait_for("replies to a flood of Medium requests", || {
        c.replies[AmCategory::Medium as usize].load(SeqCst) == before + FLOOD
    });
}

fn medium_sizes(job: &Job, c: &Counters) {
    let (me, n) = (job.rank(), job.size());
    let peer = (me + 1) % n;
    let max = job
        .tm
        .max_request_medium(peer, LcOpt::Now, Flags::empty(), 3)
        .unwrap();
    assert!(max >= 512);
    let mut sizes: Vec<usize> = (0..=17).collect();
    let mut p = 32;
    while p <= max {
        sizes.extend([p - 1, p, p + 1]);
        p *= 2;
    }
    sizes.push(max);
    sizes.retain(|&s| s <= max);
    let idx = generic_index(AmCategory::Medium, 3);
    let args: Vec<i32> = (0..3).map(|i| arg_value(me, 103, i)).collect();
    let before = c.replies[AmCategory::Medium as usize].load(SeqCst);
    for &s in &sizes {
        let data = payload(tag(me, s, true), s);
        job.tm
            .request_medium(peer, idx, &data, Lc::Now, Flags::empty(), &args)
            .unwrap();
    }
    job.wait_for("medium replies", || {
        c.replies[AmCategory::Medium as usize].load(SeqCst) == before + sizes.len() as u64
    });
    // Over the limit: an error, nothing sent.
    let big = vec![0u8; max + 1];
    let e = job
        .tm
        .request_medium(peer, idx, &big, Lc::Now, Flags::empty(), &args)
        .unwrap_err();
    assert!(e.message().contains("exceeds"), "{e}");
}

fn long_random(job: &Job, c: &Counters) {
    let (me, n) = (job.rank(), job.size());
    let mut rng = Rng::new(u64::from(me) * 7 + 1);
    let (off, r) = region(n, me);
    let idx = generic_index(AmCategory::Long, 2);
    let args: Vec<i32> = (0..2).map(|i| arg_value(me, 102, i)).collect();
    let max = job
        .tm
        .max_request_long(RANK_INVALID, LcOpt::Now, Flags::empty(), 2)
        .unwrap();
    assert!(max >= 512);
    for round in 0..40 {
        let before = c.replies[AmCategory::Long as usize].load(SeqCst);
        for peer in 0..n {
            let len = match round % 4 {
                0 => 0,
                1 => rng.below(64) as usize,
                2 => rng.below(8192) as usize,
                _ => rng.below((r / 2).min(max) as u64) as usize,
            };
            let at = rng.below((r / 2 - len) as u64 + 1) as usize;
            let data = payload(tag(me, len, true), len);
            job.tm
                .request_long(
                    peer,
                    idx,
                    &data,
                    t_seg(peer) + off + at,
                    Lc::Now,
                    Flags::empty(),
                    &args,
                )
                .unwrap();
        }
        job.wait_for("long replies", || {
            c.replies[AmCategory::Long as usize].load(SeqCst) == before + u64::from(n)
        });
    }
    // Offset addressing.
    for peer in 0..n {
        let at = off + 4096 + 16 * peer as usize;
        let data = payload(tag(me, 77, true), 77);
        job.tm
            .request_long(
                peer,
                H_OFFSET,
                &data,
                at,
                Lc::Now,
                Flags::PEER_SEG_OFFSET,
                &[at as i32],
            )
            .unwrap();
    }
    // Peers may be ahead: count what arrived from all of them.
    job.wait_for("offset-addressed Longs", || {
        c.offset.load(SeqCst) == u64::from(n)
    });
    // Out of the target's segment: an error naming rank and segment, and
    // nothing is sent.
    let peer = (me + 1) % n;
    let end = t_seg(peer) + SEG;
    let e = job
        .tm
        .request_long(
            peer,
            idx,
            &[1, 2, 3],
            end - 2,
            Lc::Now,
            Flags::empty(),
            &args,
        )
        .unwrap_err();
    assert!(
        e.message().contains(&format!("rank {peer}")) && e.message().contains("segment"),
        "{e}"
    );
    let e = job
        .tm
        .request_long(peer, idx, &[1], SEG, Lc::Now, Flags::PEER_SEG_OFFSET, &args)
        .unwrap_err();
    assert!(e.message().contains("outside"), "{e}");
    let e = job
        .tm
        .request_short(n, idx, Flags::empty(), &args)
        .unwrap_err();
    assert!(e.message().contains("not in the team"), "{e}");
}

fn immediate_full_queue(job: &Job, c: &Counters) {
    let (me, n) = (job.rank(), job.size());
    let peer = (me + 1) % n;
    let boot = job.ep.runtime().conduit().bootstrap();
    // A barrier that does not poll: a peer still in the previous (polling)
    // barrier would otherwise drain the queue this rank is about to fill
    // between its no-op and the checks after it.
    boot.barrier(&mut || {}).unwrap();
    let mut sent = 0u64;
    let mut saw_noop = false;
    for _ in 0..10_000_000u64 {
        match job
            .tm
            .request_short(peer, H_IMM, Flags::IMMEDIATE, &[77])
            .unwrap()
        {
            Injected::Sent => sent += 1,
            Injected::NoOp => {
                saw_noop = true;
                break;
            }
        }
    }
    assert!(saw_noop, "IMMEDIATE never met backpressure");
    // A negotiated-payload Prepare with IMMEDIATE is the no-op too while
    // the queue cannot take `least` bytes, with either kind of buffer, and
    // opens no Prepare interval (communication stays allowed).
    let sd = job
        .tm
        .prepare_request_medium(peer, PrepareBuf::Alloc, 16, 64, Flags::IMMEDIATE, 0)
        .unwrap();
    assert!(sd.is_none(), "an IMMEDIATE Prepare ignored a full queue");
    let small = [7u8; 64];
    let sd = job
        .tm
        .prepare_request_long(
            peer,
            PrepareBuf::Client(&small, Lc::Now),
            16,
            64,
            None,
            Flags::IMMEDIATE,
            2,
        )
        .unwrap();
    assert!(
        sd.is_none(),
        "an IMMEDIATE Prepare (Long) ignored a full queue"
    );
    assert!(gex_core::context::check_may_communicate("test").is_ok());
    // The queue is full and nobody polls until everyone got here: an
    // IMMEDIATE Long must be a no-op that leaves the target memory alone.
    let probe = SEG - 4096;
    let data = vec![0xAB; 1024];
    let r = job
        .tm
        .request_long(
            peer,
            generic_index(AmCategory::Long, 0),
            &data,
            probe,
            Lc::Now,
            Flags::IMMEDIATE | Flags::PEER_SEG_OFFSET,
            &[],
        )
        .unwrap();
    assert_eq!(r, Injected::NoOp);
    let mut ev = Event::default();
    let r = job
        .tm
        .request_medium(
            peer,
            generic_index(AmCategory::Medium, 0),
            &data,
            Lc::Event(&mut ev),
            Flags::IMMEDIATE,
            &[],
        )
        .unwrap();
    assert_eq!(r, Injected::NoOp);
    // A barrier that does not poll, so every queue stays full until all
    // ranks have seen their no-ops.
    boot.barrier(&mut || {}).unwrap();
    let all = job
        .ep
        .runtime()
        .bootstrap_exchange(&sent.to_le_bytes())
        .unwrap();
    let from = (me + n - 1) % n;
    let expect = u64::from_le_bytes(all[from as usize][..8].try_into().unwrap());
    job.wait_for("the flood to drain", || {
        c.imm[from as usize].load(SeqCst) == expect
    });
    job.barrier();
    assert_eq!(
        c.imm[from as usize].load(SeqCst),
        expect,
        "exactly the sent requests ran"
    );
    let mut probe_bytes = vec![1u8; 1024];
    job.seg.read(probe, &mut probe_bytes).unwrap();
    assert!(
        probe_bytes.iter().all(|&b| b == 0),
        "an IMMEDIATE no-op wrote target memory"
    );
    // Drained: an IMMEDIATE Prepare hands out a buffer (dropped: sends
    // nothing) once the conduit has its resources back. Over ibv the
    // target returns its credits asynchronously (the shared receive
    // queue's pool tops peers up from a reserve), so the sender may still
    // see a no-op for a few polls after the handlers ran: poll, bounded.
    job.wait_for(
        "an IMMEDIATE Prepare to find room on the drained queue",
        || {
            job.tm
                .prepare_request_medium(peer, PrepareBuf::Alloc, 16, 64, Flags::IMMEDIATE, 0)
                .unwrap()
                .is_some()
        },
    );
}

fn negotiated_payload(job: &Job, c: &Counters) {
    let (me, n) = (job.rank(), job.size());
    let before = c.npam.load(SeqCst);
    let mut expected = 0;
    for peer in 0..n {
        for (i, len) in [16usize, 100, 1000, 4096].into_iter().enumerate() {
            // Library buffer, Medium. The AM_PREPARE_LEAST_* flags are for
            // the Max queries; a Prepare ignores them (spec), either or both.
            let least_flags = [
                Flags::empty(),
                Flags::AM_PREPARE_LEAST_ALLOC,
                Flags::AM_PREPARE_LEAST_CLIENT,
                Flags::AM_PREPARE_LEAST_ALLOC | Flags::AM_PREPARE_LEAST_CLIENT,
            ][i];
            let mut sd = job
                .tm
                .prepare_request_medium(peer, PrepareBuf::Alloc, len, len + 5000, least_flags, 2)
                .unwrap()
                .unwrap();
            assert!(sd.size() >= len && sd.size() <= len + 5000);
            // Between Prepare and Commit no other communication is allowed.
            assert!(job
                .tm
                .request_short(peer, H_IMM, Flags::empty(), &[77])
                .is_err());
            let data = payload(tag(me, len, true), len);
            sd.buf_mut().unwrap()[..len].copy_from_slice(&data);
            sd.commit_medium(H_NPAM_MED, len, &[me as i32, len as i32])
                .unwrap();
            expected += 1;
            // Client buffer, Long, with an event for local completion.
            let mut ev = Event::default();
            let (off, _) = region(n, me);
            let dest = t_seg(peer) + off + 8192;
            let sd = job
                .tm
                .prepare_request_long(
                    peer,
                    PrepareBuf::Client(&data, Lc::Event(&mut ev)),
                    len,
                    len,
                    Some(dest),
                    Flags::empty(),
                    2,
                )
                .unwrap()
                .unwrap();
            assert_eq!(sd.size(), len);
            sd.commit_long(H_NPAM_LONG, len, dest, &[me as i32, len as i32])
                .unwrap();
            assert!(ev.test().unwrap());
            expected += 1;
            job.wait_for("npam replies", || c.npam.load(SeqCst) == before + expected);
        }
    }
    // A dropped prepare ends the restriction and sends nothing.
    let sd = job
        .tm
        .prepare_request_medium(me, PrepareBuf::Alloc, 8, 8, Flags::empty(), 0)
        .unwrap();
    drop(sd);
    assert!(job
        .tm
        .request_short(me, H_IMM, Flags::empty(), &[77])
        .is_ok());
    job.wait_for("self request", || c.imm[me as usize].load(SeqCst) > 0);
    // least above the limit is an error.
    let max = job
        .tm
        .max_request_medium(me, LcOpt::Now, Flags::AM_PREPARE_LEAST_ALLOC, 0)
        .unwrap();
    assert!(job
        .tm
        .prepare_request_medium(me, PrepareBuf::Alloc, max + 1, max + 1, Flags::empty(), 0)
        .is_err());
}

fn token_info(job: &Job, c: &Counters) {
    let (me, n) = (job.rank(), job.size());
    for peer in 0..n {
        job.tm
            .request_short(peer, H_TOKEN, Flags::empty(), &[me as i32])
            .unwrap();
    }
    job.wait_for("token-info replies", || {
        c.token.load(SeqCst) == u64::from(n)
    });
}

fn violations(job: &Job, c: &Counters) {
    let (me, n) = (job.rank(), job.size());
    // Under an HSL in ordinary code: no communication, no polling.
    let hsl: Hsl = Hsl::new(());
    {
        let _g = hsl.lock();
        let e = job
            .tm
            .request_short(me, H_IMM, Flags::empty(), &[77])
            .unwrap_err();
        assert!(e.message().contains("handler-safe lock"), "{e}");
        assert!(gex::poll().is_err());
    }
    job.tm
        .request_short((me + 1) % n, H_VIOLATE, Flags::empty(), &[])
        .unwrap();
    job.wait_for("the violation checks", || {
        c.violations_checked.load(SeqCst) == 1
    });
    job.tm
        .request_short((me + 1) % n, H_VIOLATE_REPLY, Flags::empty(), &[])
        .unwrap();
    job.wait_for("the reply-handler check", || {
        c.reply_violation_checked.load(SeqCst) == 1
    });
    // Bad injections: reply-only lc options, DEFER, unknown flags, too many args.
    let e = job
        .tm
        .request_medium(me, H_IMM, &[1], Lc::Defer, Flags::empty(), &[77])
        .unwrap_err();
    assert!(e.message().contains("DEFER"), "{e}");
    let e = job
        .tm
        .request_short(me, H_IMM, Flags::AD_ACQ, &[77])
        .unwrap_err();
    assert!(e.message().contains("not valid"), "{e}");
    let e = job
        .tm
        .request_short(me, H_IMM, Flags::empty(), &[0; 17])
        .unwrap_err();
    assert!(e.message().contains("17"), "{e}");
    let e = job
        .tm
        .request_short(me, 0, Flags::empty(), &[])
        .unwrap_err();
    assert!(e.message().contains("index 0"), "{e}");
    // The library's reserved indices [1, 128) are refused to clients, in
    // every category, to any rank, before anything is sent.
    for idx in 1..gex::AM_INDEX_BASE {
        let peer = (me + u32::from(idx)) % n;
        let errs = [
            job.tm.request_short(peer, idx, Flags::empty(), &[1, 2, 3]),
            job.tm
                .request_medium(peer, idx, &[7; 16], Lc::Now, Flags::empty(), &[1, 2, 3]),
            job.tm.request_long(
                peer,
                idx,
                &[7; 16],
                0,
                Lc::Now,
                Flags::PEER_SEG_OFFSET,
                &[1, 2, 3],
            ),
            job.ep.pair(0).request_short(peer, idx, Flags::empty(), &[]),
        ];
        for r in errs {
            let e = r.expect_err("a client request to a reserved index must fail");
            assert_eq!(e.kind(), ErrorKind::BadArg);
            assert!(e.message().contains("reserved"), "{e}");
        }
    }
    for idx in [1u8, 2, 4, 5, 127] {
        job.tm
            .request_short((me + 1) % n, H_RESERVED, Flags::empty(), &[i32::from(idx)])
            .unwrap();
    }
    job.wait_for("the reserved-index reply checks", || {
        c.reserved_reply_checked.load(SeqCst) == 5
    });
    // A TM-pair names jobranks; an endpoint index of MAX_EPS or more
    // exists nowhere (pairs to created endpoints: test-ep).
    let pair = job.ep.pair(0);
    pair.request_short((me + 1) % n, H_IMM, Flags::empty(), &[77])
        .unwrap();
    assert!(job
        .ep
        .pair(gex::MAX_EPS as gex::EpIndex)
        .request_short(me, H_IMM, Flags::empty(), &[77])
        .is_err());
}

fn limits(job: &Job) {
    let (me, n) = (job.rank(), job.size());
    let lub = gex::am::lub_limits().unwrap();
    for peer in 0..n {
        for nargs in 0..=16 {
            let m = job
                .tm
                .max_request_medium(peer, LcOpt::Now, Flags::empty(), nargs)
                .unwrap();
            let l = job
                .tm
                .max_request_long(peer, LcOpt::Event, Flags::empty(), nargs)
                .unwrap();
            let rm = job
                .tm
                .max_reply_medium(peer, LcOpt::Now, Flags::empty(), nargs)
                .unwrap();
            let rl = job
                .tm
                .max_reply_long(peer, LcOpt::Now, Flags::empty(), nargs)
                .unwrap();
            for v in [m, l, rm, rl] {
                assert!(v >= 512);
            }
            assert!(lub.max_request_medium <= m && lub.max_request_long <= l);
            assert!(lub.max_reply_medium <= rm && lub.max_reply_long <= rl);
        }
    }
    // Symmetric: every rank reports the same limit for the pair (me, peer).
    let mine: Vec<u8> = (0..n)
        .flat_map(|p| {
            (job.tm
                .max_request_medium(p, LcOpt::Now, Flags::empty(), 4)
                .unwrap() as u64)
                .to_le_bytes()
        })
        .collect();
    let all = job.ep.runtime().bootstrap_exchange(&mine).unwrap();
    for (a, va) in all.iter().enumerate() {
        for (b, vb) in all.iter().enumerate() {
            assert_eq!(
                va[8 * b..8 * b + 8],
                vb[8 * a..8 * a + 8],
                "limit {a}->{b} is symmetric"
            );
        }
    }
    assert!(job
        .tm
        .max_request_medium(me, LcOpt::Group, Flags::empty(), 17)
        .is_err());
    assert!(job
        .tm
        .max_reply_medium(me, LcOpt::Group, Flags::empty(), 1)
        .is_err());
    assert_eq!(gex::am::max_args(), 16);
}
