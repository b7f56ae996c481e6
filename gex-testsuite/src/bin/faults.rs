//! Failure behaviour of the launcher and the library, one mode per run:
//! `gex-run -n N faults MODE`. Used by `tests/cluster.rs`, which checks how
//! each job ends. (Not named `test-*`: its jobs fail on purpose, so
//! `cargo xtask test-cluster` must not run it as a test program.)
//!
//! | mode | what happens | job exit code |
//! | --- | --- | --- |
//! | `panic` | the last rank panics, the others wait for an AM forever | 101 |
//! | `sigkill` | the last rank SIGKILLs itself, the others wait forever | 137 |
//! | `exit` | rank 0 calls `gex::exit(7)`, the others wait forever | 7 |
//! | `exit0-all` | every rank calls `gex::exit(0)` | 0 |
//! | `exit-late-print` | after a barrier the ranks other than 0 print their last words without a newline and call `gex::exit(0)`; rank 0 sleeps 20 ms, prints a line and calls `gex::exit(0)`: every rank's output arrives | 0 |
//! | `exit-in-barrier` | rank 0 calls `gex::exit(5)` while the others wait in a barrier (`gex::coll::barrier`) it never joins: they are ended after the exit grace | 5 |
//! | `exit-in-ctrl-barrier` | the same with the control plane's barrier (`gex::barrier`): the others are told to end at once | 5 |
//! | `fatal-handler` | rank 0 sends the last rank an AM for a handler index it never registered | non-zero |
//! | `handler-context` | rank 0 calls `gex::exit(3)` from inside an AM handler | 3 |
//! | `silent-peer` | (udp) the last rank stops (SIGSTOP); rank 0 sends it AMs and waits; the protocol declares it dead after `GEX_UDP_PEER_TIMEOUT` | 1 |
//! | `stopped-in-barrier` | (udp) the last rank stops (SIGSTOP) while the others wait in a barrier with nothing outstanding; heartbeats stop, and the others declare it dead after `GEX_UDP_PEER_TIMEOUT` | 1 |
//! | `exit0-in-barrier` | rank 0 calls `gex::exit(0)` from a handler run while it waits in a barrier | 0 |
//! | `forge-put-ack` | the last rank forges, through the conduit interface (client calls cannot name the reserved indices), a reply to gex-rma's put acknowledgement handler at rank 0 with arbitrary arguments | 1, a fatal message naming the handler |
//! | `forge-get-data` | the same with gex-rma's get data handler and a payload | 1, likewise |
//! | `forge-ratomic-range` | the last rank forges a request to gex-ratomic's operation handler at rank 0 naming a U64 FADD at an offset past its segment | 1, a fatal message naming the handler and the range |
//! | `forge-ratomic-align` | the same at offset 4 (inside, misaligned for a U64) | 1, a fatal message naming the alignment |
//! | `forge-ratomic-result` | the last rank forges a reply to gex-ratomic's result handler at rank 0 naming an operation not in flight | 1, a fatal message naming the handler |
//! | `forge-vis-range` | the last rank forges a request to gex-vis's packed put handler at rank 0 whose record names a range past its segment | 1, a fatal message naming the handler, the record and the range |
//! | `forge-vis-truncated` | the same with a record announcing 100 bytes of which 10 follow | 1, a fatal message naming the record |
//! | `forge-vis-header` | a request to gex-vis's get handler whose payload (5 bytes) is not a whole record header | 1, a fatal message naming the truncation |
//! | `forge-vis-toolarge` | a get request whose 1000 records each name the whole segment, more than any reply carries (the target must not build it) | 1, a fatal message naming the size |
//! | `forge-vis-ack` | a reply to gex-vis's put acknowledgement handler naming an operation not in flight | 1, a fatal message naming the handler |
//! | `forge-vis-pc` | a request to gex-vis's peer completion handler naming reserved handler index 3 | 1, a fatal message naming the index |
//! | `forge-vis-ep` | a request to gex-vis's packed put handler for created endpoints naming endpoint 7, which rank 0 never bound | 1, a fatal message naming the endpoint |
//! | `forge-vis-ep-range` | every rank binds a 4 KiB created segment to endpoint 1; a request to gex-vis's get handler for created endpoints whose record names a range past its end | 1, a fatal message naming the record, the endpoint and the range |
//! | `forge-mk-index` | the last rank forges a put to gex-rma's created-endpoint put handler at rank 0 naming endpoint index 0 | 1, a fatal message naming the index |
//! | `forge-mk-unbound` | a get to gex-rma's created-endpoint get handler naming endpoint 7, which rank 0 never bound | 1, a fatal message naming the endpoint |
//! | `forge-mk-range` | every rank binds a 4 KiB created segment to endpoint 1; the last rank forges a put into rank 0's past its end | 1, a fatal message naming the range |
//! | `forge-long-unbound` | (udp without the bypass) the last rank forges, through the conduit, a Long AM to endpoint 7 of rank 0, which has no bound segment | 1, a fatal message naming the endpoint |
//! | `forge-long-range` | (udp without the bypass) every rank binds a 4 KiB created segment to endpoint 1; the last rank forges a Long AM into rank 0's past its end | 1, a fatal message naming the endpoint and the range |
//! | `forge-rma-ep-unbound` | (udp without the bypass) the last rank starts, through the conduit's one-sided capability (past gex-rma's checks), a get from endpoint 7 of rank 0, which has no bound segment | 1, a fatal message naming the endpoint |
//! | `forge-rma-ep-range` | (udp without the bypass) every rank binds a 4 KiB created segment to endpoint 1; the last rank starts a one-sided put into rank 0's past its end | 1, a fatal message naming the endpoint and the range |
//! | `forge-atomic-range` | (udp without the bypass) the last rank starts, through the conduit's atomics (past gex-ratomic's checks), a U64 fetch-add on rank 0 at an offset past its segment | 1, a fatal message naming the range |
//! | `forge-atomic-misaligned` | likewise at offset 4 (misaligned for U64) | 1, a fatal message saying misaligned |
//! | `barrier-double-notify` | the last rank calls `gasnet_barrier_notify` twice; the others wait forever | 1, a fatal message naming the call |
//! | `barrier-wait-unnotified` | the last rank calls `gasnet_barrier_wait` with no notify | 1, likewise |
//! | `barrier-try-unnotified` | the last rank calls `gasnet_barrier_try` with no notify | 1, likewise |
//! | `coll-mismatch` | rank 0 broadcasts 8 bytes, the others expect 16 from it (a single-valued argument that differs) | 1, a fatal message naming the collective mismatch (shared memory on smp, Active Messages on udp) |
//! | `coll-single-mismatch` | every rank calls an exchange with `Addrs::Single` and `COLL_DST_IN_SEGMENT`; rank 0's list names another address for the last rank's dst (still in its segment), so the lists disagree | 1, a fatal message naming the collective mismatch, before any data moves |
//! | `coll-size-line` | rank 0 broadcasts 2048 bytes, the others expect 512 from it: on smp the root takes the chunked path, the others the small one (inline slots up to 1 KiB) | 1, a fatal message naming the mismatch of paths, rather than a hang |
//! | `coll-size-line-rev` | as `coll-size-line` with the sizes swapped: the root takes the small path, the others the chunked one | likewise |
//! | `early-exit0` | rank 1 returns from `main` (code 0) while rank 0 waits for its reply to an AM; the others wait forever | 0, after the exit grace |
//! | `early-exit3` | as `early-exit0`, but rank 1 exits with code 3 | 3 |
//! | `startup` | writes `GEX_JOB_ID` to `$GEX_LEAK_DIR/<rank>`, then starts (init, segment, handlers, barrier) and returns: the job the launcher-kill test kills at random moments | 0 |
//!
//! The "wait forever" loops deliberately have no bound: ending them is the
//! launcher's job, and the test checks that it does so promptly.

use gex::am::{register_handlers, AmRequest, HandlerEntry};
use gex::Flags;
use gex_testsuite::Job;

const MODES: &[&str] = &[
    "panic",
    "sigkill",
    "exit",
    "exit0-all",
    "exit-late-print",
    "exit-in-barrier",
    "exit-in-ctrl-barrier",
    "fatal-handler",
    "handler-context",
    "exit0-in-barrier",
    "silent-peer",
    "forge-put-ack",
    "forge-get-data",
    "forge-ratomic-range",
    "forge-ratomic-align",
    "forge-ratomic-result",
    "forge-vis-range",
    "forge-vis-truncated",
    "forge-vis-header",
    "forge-vis-toolarge",
    "forge-vis-ack",
    "forge-vis-pc",
    "forge-vis-ep",
    "forge-vis-ep-range",
    "forge-ep-dest",
    "forge-ep-source",
    "ep-not-created",
    "forge-mk-index",
    "forge-mk-unbound",
    "forge-mk-range",
    "forge-long-unbound",
    "forge-long-range",
    "forge-rma-ep-unbound",
    "forge-rma-ep-range",
    "forge-atomic-range",
    "forge-atomic-misaligned",
    "stopped-in-barrier",
    "barrier-double-notify",
    "barrier-wait-unnotified",
    "barrier-try-unnotified",
    "coll-mismatch",
    "coll-single-mismatch",
    "coll-size-line",
    "coll-size-line-rev",
];

/// A handler every rank registers, so the AM layer is installed everywhere.
const H_PRESENT: u8 = 200;
/// The handler that calls `gex::exit(3)` (mode `handler-context`).
const H_EXIT: u8 = 201;
/// A handler index nobody registers (mode `fatal-handler`).
const H_MISSING: u8 = 250;

/// Modes of the early-exit and launcher-kill tests (see the table).
const EXIT_MODES: &[&str] = &["early-exit0", "early-exit3", "startup"];
/// Mode `early-exit*`: the request rank 1 gets and never answers.
const H_ASK: u8 = 230;
/// Mode `early-exit*`: the reply rank 0 waits for.
const H_ANSWER: u8 = 231;

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    if EXIT_MODES.contains(&mode.as_str()) {
        return exit_modes(&mode);
    }
    if !MODES.contains(&mode.as_str()) {
        panic!(
            "usage: faults MODE, with MODE one of {}, {}; got {mode:?}",
            MODES.join(", "),
            EXIT_MODES.join(", ")
        );
    }
    let job = Job::start("TEST_FAULTS", 1 << 20);
    let (me, n) = (job.rank(), job.size());
    let last = n - 1;
    let say = |what: &str| println!("test-faults: rank {me} of {n}: mode {mode}: {what}");

    let mut table = vec![HandlerEntry::request(
        H_PRESENT,
        Flags::AM_SHORT,
        0,
        |_tok, _msg| {},
    )];
    if mode == "exit0-in-barrier" {
        table.push(HandlerEntry::request(H_EXIT, Flags::AM_SHORT, 1, move |_tok, _msg| {
            println!(
                "test-faults: rank {me} of {n}: mode exit0-in-barrier: calling gex::exit(0) in a handler"
            );
            gex::exit(0)
        }));
    }
    if mode == "handler-context" {
        table.push(HandlerEntry::request(
            H_EXIT,
            Flags::AM_SHORT,
            1,
            move |tok, msg| {
                assert!(gex::context::in_handler());
                assert_eq!(msg.arg(0) as u32, tok.src_rank());
                println!(
                    "test-faults: rank {me} of {n}: mode handler-context: calling gex::exit(3) in a handler"
                );
                gex::exit(3)
            },
        ));
    }
    register_handlers(&job.ep, &mut table).expect("register handlers");
    job.barrier();

    match mode.as_str() {
        "panic" => {
            if me == last {
                say("panicking");
                panic!("test-faults: deliberate panic");
            }
            say("waiting forever");
            wait_forever()
        }
        "sigkill" => {
            if me == last {
                say("sending SIGKILL to myself");
                // SAFETY: kill(2) on our own pid with a valid signal number;
                // SIGKILL ends the process at once, which is the point.
                unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
                unreachable!("SIGKILL did not end the process");
            }
            say("waiting forever");
            wait_forever()
        }
        "exit" => {
            if me == 0 {
                say("calling gex::exit(7)");
                gex::exit(7)
            }
            say("waiting forever");
            wait_forever()
        }
        "exit0-all" => {
            say("calling gex::exit(0)");
            gex::exit(0)
        }
        "exit-late-print" => {
            if me == 0 {
                // So that the others' exits reach the launcher first (the
                // race of issue #29), not a synchronisation.
                std::thread::sleep(std::time::Duration::from_millis(20));
                say("the last line, after the others' exits");
            } else {
                print!("test-faults: rank {me} of {n}: mode {mode}: last words without a newline");
            }
            gex::exit(0)
        }
        "exit-in-barrier" | "exit-in-ctrl-barrier" => {
            if me == 0 {
                say("calling gex::exit(5) while the others wait in a barrier");
                gex::exit(5)
            }
            say("waiting in a barrier rank 0 never joins");
            if mode == "exit-in-barrier" {
                gex::coll::barrier(&job.tm, Flags::empty()).expect("barrier");
            } else {
                job.barrier();
            }
            panic!("a barrier without rank 0 completed");
        }
        "fatal-handler" => {
            if me == 0 {
                say(&format!(
                    "sending rank {last} an AM for unregistered handler {H_MISSING}"
                ));
                assert!(gex::am::registered_handler(&job.ep, H_MISSING).is_none());
                job.tm
                    .request_short(last, H_MISSING, Flags::empty(), &[])
                    .expect("the sender cannot know the handler is missing");
            }
            say("waiting forever");
            wait_forever()
        }
        "handler-context" => {
            if me == last {
                say("asking rank 0 to exit from a handler");
                job.tm
                    .request_short(0, H_EXIT, Flags::empty(), &[me as i32])
                    .expect("request");
            }
            say("waiting forever");
            wait_forever()
        }
        "exit0-in-barrier" => {
            if me == last {
                say("asking rank 0 to exit(0) from a handler");
                job.tm
                    .request_short(0, H_EXIT, Flags::empty(), &[me as i32])
                    .expect("request");
            }
            // Rank 0 runs the handler while serving AMs inside a barrier:
            // the exit must still reach the launcher, and end the job with 0.
            say("looping in barriers");
            loop {
                job.barrier();
            }
        }
        "barrier-double-notify" | "barrier-wait-unnotified" | "barrier-try-unnotified" => {
            use gex::coll::{barrier_notify, barrier_try, barrier_wait, BARRIERFLAG_ANONYMOUS};
            if me == last {
                match mode.as_str() {
                    "barrier-double-notify" => {
                        barrier_notify(1, 0).expect("the first notify");
                        say("notifying twice");
                        let r = barrier_notify(1, 0);
                        panic!("a second gasnet_barrier_notify returned: {r:?}");
                    }
                    "barrier-wait-unnotified" => {
                        say("waiting without a notify");
                        let r = barrier_wait(0, BARRIERFLAG_ANONYMOUS);
                        panic!("gasnet_barrier_wait without a notify returned: {r:?}");
                    }
                    _ => {
                        say("trying without a notify");
                        let r = barrier_try(0, BARRIERFLAG_ANONYMOUS);
                        panic!("gasnet_barrier_try without a notify returned: {r:?}");
                    }
                }
            }
            say("waiting forever");
            wait_forever()
        }
        "coll-mismatch" => {
            let mut buf = vec![0u8; if me == 0 { 8 } else { 16 }];
            let src = [7u8; 8];
            say("calling mismatched broadcasts");
            let h = gex::coll::broadcast_nb(
                &job.tm,
                0,
                &mut buf,
                (me == 0).then_some(&src[..]),
                Flags::empty(),
            )
            .expect("broadcast_nb");
            if me != 0 {
                let r = h.wait();
                panic!("a mismatched broadcast returned: {r:?}");
            }
            drop(h);
            say("waiting forever");
            wait_forever()
        }
        "coll-size-line" | "coll-size-line-rev" => {
            let (big, small) = (2048, 512);
            let root_big = mode == "coll-size-line";
            let len = match (me == 0, root_big) {
                (true, true) | (false, false) => big,
                _ => small,
            };
            let mut buf = vec![0u8; len];
            let src = vec![7u8; len];
            say("calling broadcasts of sizes either side of the inline line");
            let r = gex::coll::broadcast(
                &job.tm,
                0,
                &mut buf,
                (me == 0).then_some(&src[..]),
                Flags::empty(),
            );
            if me != 0 {
                panic!("a broadcast of mismatched sizes returned: {r:?}");
            }
            say("waiting forever");
            wait_forever()
        }
        "coll-single-mismatch" => {
            use gex::TmRef;
            let nb = 8 * n as usize;
            let base = |r: u32| {
                job.tm
                    .query_bound_segment(r, Flags::empty())
                    .expect("query")
                    .expect("a segment")
                    .owner_addr
            };
            let mut dsts: Vec<usize> = (0..n).map(base).collect();
            let srcs: Vec<usize> = (0..n).map(|r| base(r) + (64 << 10)).collect();
            if me == 0 {
                dsts[last as usize] += 128;
            }
            // SAFETY: the first and the 64 KiB-th bytes of this rank's own
            // segment, used by this call alone.
            let (dst, src) = unsafe {
                let b = job.seg.addr();
                (
                    std::slice::from_raw_parts_mut(b as *mut u8, nb),
                    std::slice::from_raw_parts((b + (64 << 10)) as *const u8, nb),
                )
            };
            say("calling exchanges with disagreeing address lists");
            let h = gex::coll::exchange_nb_with(
                &job.tm,
                dst,
                src,
                gex::coll::Addrs::Single {
                    dst: &dsts,
                    src: &srcs,
                },
                Flags::COLL_DST_IN_SEGMENT,
            )
            .expect("exchange_nb_with");
            let r = h.wait();
            panic!("a mismatched exchange returned: {r:?}");
        }
        "silent-peer" => {
            if me == last && n > 1 {
                say("stopping myself");
                // SAFETY: kill(2) on our own pid with a valid signal number;
                // the process stays stopped until the launcher kills it.
                unsafe { libc::kill(libc::getpid(), libc::SIGSTOP) };
            }
            if me == 0 {
                // Keep sending: AMs that reached the peer before it stopped
                // may have been acknowledged; new ones never will be, and
                // once the window is full the sends wait (polling) until the
                // protocol declares the peer dead.
                say(&format!("sending AMs to rank {last}"));
                loop {
                    job.tm
                        .request_short(last, H_PRESENT, Flags::empty(), &[])
                        .expect("request");
                    gex::poll().expect("poll");
                }
            }
            say("waiting forever");
            wait_forever()
        }
        "forge-put-ack" | "forge-get-data" => {
            if me == last && n > 1 {
                // gex-rma's reply handlers: 2 (put ack), 4 (get data).
                let (handler, payload): (u8, &[u8]) = if mode == "forge-put-ack" {
                    (2, &[])
                } else {
                    (4, &[0xAB; 64])
                };
                // Client calls may not name reserved indices ...
                let refused = job.tm.request_short(0, handler, Flags::empty(), &[1, 2, 3]);
                assert!(
                    refused.is_err(),
                    "a client request to reserved index {handler} must be an error"
                );
                // ... so forge one below them, through the conduit interface.
                say(&format!("forging a reply to handler {handler} at rank 0"));
                forge(0, false, handler, payload, &[0x0BAD_F00D, 0x7EAD_BEEF, 5]);
            }
            say("waiting forever");
            wait_forever()
        }
        "forge-ratomic-range" | "forge-ratomic-align" | "forge-ratomic-result" => {
            if me == last && n > 1 {
                // gex-ratomic's handlers: 7 (operation request), 8 (result
                // reply). Arguments of the request: offset (lo, hi), type,
                // opcode, ordering, operands (lo, hi) x 2, slot, generation.
                let (fadd, u64_dt) = (gex::Op::Fadd as u64 as i32, gex::Dt::U64 as u32 as i32);
                let (request, handler, args): (bool, u8, Vec<i32>) = match mode.as_str() {
                    "forge-ratomic-range" => {
                        (true, 7, vec![0, 0x40, u64_dt, fadd, 0, 1, 0, 0, 0, 0, 0])
                    }
                    "forge-ratomic-align" => {
                        (true, 7, vec![4, 0, u64_dt, fadd, 0, 1, 0, 0, 0, 0, 0])
                    }
                    _ => (false, 8, vec![0x0BAD_F00D, 0x7EAD_BEEF, 1, 2]),
                };
                say(&format!("forging a message to handler {handler} at rank 0"));
                forge(0, request, handler, &[], &args);
            }
            say("waiting forever");
            wait_forever()
        }
        "forge-vis-range"
        | "forge-vis-truncated"
        | "forge-vis-header"
        | "forge-vis-toolarge"
        | "forge-vis-ack"
        | "forge-vis-pc"
        | "forge-vis-ep"
        | "forge-vis-ep-range" => {
            if mode == "forge-vis-ep-range" {
                let ep = gex::Ep::create(&job.client, gex::EpCapabilities::ALL, Flags::empty())
                    .expect("create an endpoint");
                let seg = gex::mk::segment_create(
                    &job.client,
                    &gex::mk::Mk::host(),
                    4096,
                    Flags::empty(),
                )
                .expect("create a segment");
                gex::mk::ep_bind_segment(&ep, &seg, Flags::empty()).expect("bind");
                job.barrier();
            }
            if me == last && n > 1 {
                // gex-vis's handlers: 11 (packed put, Medium request), 13
                // (put ack, Short reply), 14 (get, Medium request), 16
                // (peer completion, Medium request). A record is an offset
                // (u64 LE) and a length (u32 LE), data after it for a put.
                let record = |off: u64, len: u32, data: usize| {
                    let mut r = off.to_le_bytes().to_vec();
                    r.extend_from_slice(&len.to_le_bytes());
                    r.extend(std::iter::repeat_n(0xAB, data));
                    r
                };
                let (request, handler, payload, args): (bool, u8, Vec<u8>, Vec<i32>) =
                    match mode.as_str() {
                        "forge-vis-range" => (true, 11, record(1 << 30, 4, 4), vec![0, 0, 0]),
                        "forge-vis-truncated" => (true, 11, record(0, 100, 10), vec![0, 0, 0]),
                        // 17, 18: put and get to a created endpoint's
                        // segment (a fourth argument, the endpoint index).
                        "forge-vis-ep" => (true, 17, record(0, 4, 4), vec![0, 0, 0, 7]),
                        "forge-vis-ep-range" => (true, 18, record(4092, 8, 0), vec![0, 0, 0, 1]),
                        "forge-vis-header" => (true, 14, vec![1, 2, 3, 4, 5], vec![0, 0, 0]),
                        "forge-vis-toolarge" => {
                            (true, 14, record(0, 1 << 20, 0).repeat(1000), vec![0, 0, 0])
                        }
                        "forge-vis-ack" => (false, 13, vec![], vec![0x0BAD_F00D, 0x7EAD_BEEF, 5]),
                        _ => (true, 16, b"x".to_vec(), vec![3]),
                    };
                say(&format!("forging a message to handler {handler} at rank 0"));
                forge(0, request, handler, &payload, &args);
            }
            say("waiting forever");
            wait_forever()
        }
        "forge-atomic-range" | "forge-atomic-misaligned" => {
            job.barrier();
            if me == last && n > 1 {
                let rt = gex_core::Runtime::get().expect("the client exists");
                let cap = rt.conduit().atomics().expect("udp has conduit atomics");
                let done: std::sync::Arc<dyn gex_core::conduit::OpCompletion> =
                    gex_core::Completion::new(1, None);
                let off = if mode == "forge-atomic-range" {
                    1 << 40
                } else {
                    4
                };
                say(&format!(
                    "forging a U64 fetch-add on rank 0 at offset {off:#x}"
                ));
                cap.start(
                    0,
                    off,
                    gex::Dt::U64,
                    gex::Op::Fadd,
                    [1, 0],
                    None,
                    done,
                    false,
                    rt.sink(),
                )
                .expect("the capability sends what it is given");
            }
            say("waiting forever");
            wait_forever()
        }
        "forge-mk-index"
        | "forge-mk-unbound"
        | "forge-mk-range"
        | "forge-long-unbound"
        | "forge-long-range"
        | "forge-rma-ep-unbound"
        | "forge-rma-ep-range" => {
            if mode.ends_with("-range") {
                let ep = gex::Ep::create(&job.client, gex::EpCapabilities::ALL, Flags::empty())
                    .expect("create an endpoint");
                let seg = gex::mk::segment_create(
                    &job.client,
                    &gex::mk::Mk::host(),
                    4096,
                    Flags::empty(),
                )
                .expect("create a segment");
                gex::mk::ep_bind_segment(&ep, &seg, Flags::empty()).expect("bind");
                job.barrier();
            }
            if me == last && n > 1 && mode.starts_with("forge-rma-ep") {
                let rt = gex_core::Runtime::get().expect("the client exists");
                let cap = rt.conduit().rma().expect("udp has one-sided operations");
                let done: std::sync::Arc<dyn gex_core::conduit::OpCompletion> =
                    gex_core::Completion::new(1, None);
                if mode == "forge-rma-ep-unbound" {
                    say("forging a one-sided get from endpoint 7 of rank 0");
                    let buf: &'static mut [u8] = Box::leak(vec![0u8; 8].into_boxed_slice());
                    // SAFETY: the buffer is leaked, so valid for the rest of
                    // the process, and not accessed otherwise.
                    let dst = unsafe {
                        gex_core::conduit::GetDest::new(buf.as_mut_ptr(), buf.len(), None)
                    };
                    cap.get(0, 7, 0, dst, done, false, rt.sink())
                        .expect("the capability sends what it is given");
                } else {
                    say("forging a one-sided put past the end of endpoint 1's segment at rank 0");
                    let src = gex_core::conduit::PutSource::copy_of(&[7u8; 8]);
                    cap.put(0, 1, 4092, src, done, false, rt.sink())
                        .expect("the capability sends what it is given");
                }
            } else if me == last && n > 1 && mode.starts_with("forge-long") {
                // Through the conduit, past the AM layer's checks (which
                // refuse both at the sender).
                let (dest_ep, off) = if mode == "forge-long-unbound" {
                    (7, 0)
                } else {
                    (1, 4092)
                };
                say(&format!(
                    "forging a Long to endpoint {dest_ep} of rank 0 at offset {off}"
                ));
                use gex_core::conduit::OutgoingAm;
                let rt = gex_core::Runtime::get().expect("the client exists");
                let mut msg =
                    OutgoingAm::new(gex::AmCategory::Long, true, H_PRESENT, &[], &[7u8; 8])
                        .to_offset(off, off);
                msg.dest_ep = dest_ep;
                rt.conduit()
                    .am_send(0, &msg, false, rt.sink())
                    .expect("the udp conduit sends what it is given");
            } else if me == last && n > 1 {
                // gex-rma's handlers for created endpoints: 40 (put,
                // Medium: offset lo, hi, endpoint, slot x 3), 41 (get,
                // Short: offset lo, hi, length, endpoint, slot x 3).
                let (handler, payload, args): (u8, Vec<u8>, Vec<i32>) = match mode.as_str() {
                    "forge-mk-index" => (40, vec![1; 8], vec![0, 0, 0, 0, 0, 0]),
                    "forge-mk-unbound" => (41, vec![], vec![0, 0, 8, 7, 0, 0, 0]),
                    _ => (40, vec![1; 8], vec![4092, 0, 1, 0, 0, 0]),
                };
                say(&format!("forging a message to handler {handler} at rank 0"));
                forge(0, true, handler, &payload, &args);
            }
            say("waiting forever");
            wait_forever()
        }
        "forge-ep-dest" | "forge-ep-source" | "ep-not-created" => {
            if me == last && n > 1 {
                match mode.as_str() {
                    "forge-ep-dest" => {
                        say("forging a message to endpoint 200 of rank 0");
                        forge_between(0, true, H_PRESENT, &[], &[], 0, 200);
                    }
                    "forge-ep-source" => {
                        say("forging a message from endpoint 77 to rank 0");
                        forge_between(0, true, H_PRESENT, &[], &[], 77, 0);
                    }
                    _ => {
                        // A well-formed request through the API to an
                        // index below MAX_EPS that rank 0 never created.
                        say("sending to endpoint 5 of rank 0, which it never created");
                        job.ep
                            .pair(5)
                            .request_short(0, H_PRESENT, Flags::empty(), &[])
                            .expect("the sender cannot know whether the index exists");
                    }
                }
            }
            say("waiting forever");
            wait_forever()
        }
        "stopped-in-barrier" => {
            if me == last && n > 1 {
                say("stopping myself");
                // SAFETY: raise(3) with a valid signal number; the process
                // stays stopped until the launcher kills it.
                unsafe { libc::raise(libc::SIGSTOP) };
            }
            // Nothing outstanding toward the stopped rank: only the
            // heartbeats can tell that it is gone.
            say("waiting in a barrier");
            job.barrier();
            unreachable!("a barrier passed without the stopped rank");
        }
        _ => unreachable!("mode checked above"),
    }
}

/// Sends an AM (a request, or a reply that no request asked for) straight
/// through the conduit: what a forged datagram would deliver over a
/// network.
fn forge(dest: u32, is_request: bool, handler: u8, payload: &[u8], args: &[i32]) {
    forge_between(dest, is_request, handler, payload, args, 0, 0)
}

/// [`forge`] from endpoint index `src_ep` to endpoint index `dest_ep`,
/// whatever they are (the wire has a byte for each).
fn forge_between(
    dest: u32,
    is_request: bool,
    handler: u8,
    payload: &[u8],
    args: &[i32],
    src_ep: u32,
    dest_ep: u32,
) {
    use gex_core::conduit::OutgoingAm;
    let rt = gex_core::Runtime::get().expect("the client exists");
    let category = if payload.is_empty() {
        gex::AmCategory::Short
    } else {
        gex::AmCategory::Medium
    };
    let mut msg = OutgoingAm::new(category, is_request, handler, args, payload);
    // Not `between`, which (in debug builds) asserts the indices are valid.
    msg.src_ep = src_ep;
    msg.dest_ep = dest_ep;
    rt.conduit()
        .am_send(dest, &msg, false, rt.sink())
        .expect("a forged message is still well formed");
}

/// Polls for an AM that never comes. No bound, on purpose: the job must be
/// ended by the launcher (or by a handler that runs here).
fn wait_forever() -> ! {
    loop {
        gex::poll().expect("poll");
        std::thread::yield_now();
    }
}

/// The modes of [`EXIT_MODES`].
fn exit_modes(mode: &str) {
    if mode == "startup" {
        // Before anything of the job exists: whatever the job creates can
        // be looked for under this identifier, wherever it is killed.
        let dir = std::env::var("GEX_LEAK_DIR").expect("GEX_LEAK_DIR");
        let rank = std::env::var("GEX_RANK").expect("GEX_RANK");
        let job = std::env::var("GEX_JOB_ID").expect("GEX_JOB_ID");
        std::fs::write(format!("{dir}/{rank}"), job).expect("record the job id");
    }
    let job = Job::start("TEST_FAULTS", 1 << 20);
    let (me, n) = (job.rank(), job.size());
    let say = |what: &str| println!("test-faults: rank {me} of {n}: mode {mode}: {what}");
    let answered = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = answered.clone();
    let mut table = vec![
        // Rank 1 never answers: it may still be serving AMs in the barrier
        // when rank 0, out of it first (at a rendezvous rank 0 hosts the
        // coordinator), asks; a reply from there raced the rank's exit.
        HandlerEntry::request(H_ASK, Flags::AM_SHORT, 0, |_tok, _msg| {}),
        HandlerEntry::reply(H_ANSWER, Flags::AM_SHORT, 0, move |_tok, _msg| {
            seen.store(true, std::sync::atomic::Ordering::SeqCst);
        }),
    ];
    register_handlers(&job.ep, &mut table).expect("register handlers");
    job.barrier();
    if mode == "startup" {
        return;
    }
    assert!(n >= 2, "mode {mode} needs 2 ranks or more");
    match me {
        1 => {
            let code = if mode == "early-exit3" { 3 } else { 0 };
            say(&format!("leaving main with code {code}"));
            if code != 0 {
                std::process::exit(code);
            }
        }
        0 => {
            say("asking rank 1 and waiting for its reply");
            job.tm
                .request_short(1, H_ASK, Flags::empty(), &[])
                .expect("request");
            // No bound, on purpose: rank 1 never answers, and the launcher
            // must end the job.
            while !answered.load(std::sync::atomic::Ordering::SeqCst) {
                gex::poll().expect("poll");
                std::thread::yield_now();
            }
            say("got a reply from a rank that left");
        }
        _ => {
            say("waiting forever");
            wait_forever()
        }
    }
}
