//! Settings passed in code (`gex::Config`, `gex::init_with_config`), as an
//! embedding runtime passes them: `gex-run -n N test-config [code-only]`.
//!
//! Without an argument the program starts from the environment
//! (`Config::from_env`) and then decides in code: the udp conduit gets
//! datagrams of at most 1024 bytes and no shared-memory bypass, and gex-rma
//! sends every transfer through Active Messages. With `code-only` it
//! reads no setting from the environment at all (`Config::default()`, on
//! the udp conduit), so a variable that would not parse is never looked at.
//!
//! Every rank then checks that init changed no `GEX_*` variable and that
//! the settings took effect: gex-rma routes
//! every rank through Active Messages, and a put to the next rank and a
//! get back return the bytes put. On udp the conduit reports a largest
//! datagram of 1024 bytes, every rank is a neighbourhood of its own, and
//! the Medium requests of 4000 bytes sent to the next rank (checked byte
//! for byte where they arrive) took at least 4 DATA datagrams each.

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

use gex::am::{register_handlers, AmRequest, HandlerEntry};
use gex::rma::{Rma, Route};
use gex::{Flags, Lc, Segment};
use gex_testsuite::{arg_value, check_payload, payload, Job};

const MTU: usize = 1024;
const LEN: usize = 4000;
const COUNT: u32 = 20;
const H_DATA: u8 = 140;
const SEG: usize = 64 << 10;

fn tag(src: u32, seq: u32) -> u64 {
    0xc0f1 ^ (u64::from(src) << 32) ^ u64::from(seq)
}

fn main() {
    let code_only = std::env::args().nth(1).as_deref() == Some("code-only");
    let mut config = if code_only {
        let mut c = gex::Config::default();
        c.conduit = Some("udp".into());
        c
    } else {
        gex::Config::from_env().expect("gex::Config::from_env")
    };
    config.udp.mtu = Some(MTU);
    config.udp.bypass = false;
    config.rma.force_am = true;
    let gex_vars = || -> Vec<(String, String)> {
        std::env::vars()
            .filter(|(k, _)| k.starts_with("GEX_"))
            .collect()
    };
    let env_before = gex_vars();
    let (client, ep, tm) =
        gex::init_with_config("TEST_CONFIG", Flags::empty(), &config).expect("init_with_config");
    // Init passes nothing through the environment (a rendezvous once set
    // GEX_HOSTS for the udp conduit).
    assert_eq!(gex_vars(), env_before, "init changed the GEX_* variables");
    let seg = Segment::attach(&tm, SEG).expect("gex_Segment_Attach");
    let job = Job {
        client,
        ep,
        tm,
        seg,
    };
    let (me, n) = (job.rank(), job.size());
    let next = (me + 1) % n;
    let prev = (me + n - 1) % n;

    // gex-rma took its setting from the code.
    for r in 0..n {
        assert_eq!(
            gex::rma::route(&job.ep, r),
            Route::ActiveMessages,
            "rank {me}: route to rank {r} with force_am set in code"
        );
    }

    let received = Arc::new(AtomicU64::new(0));
    let got = received.clone();
    let mut table = [HandlerEntry::request(
        H_DATA,
        Flags::AM_MEDIUM,
        2,
        move |tok, msg| {
            let src = tok.src_rank();
            assert_eq!(src, prev, "rank {me}: a request from rank {src}");
            let seq = msg.arg(0) as u32;
            assert_eq!(msg.arg(1), arg_value(src, seq, 1), "argument of {seq}");
            assert_eq!(msg.payload().len(), LEN, "payload length of {seq}");
            check_payload(
                &format!("rank {me}: request {seq} from rank {src}"),
                tag(src, seq),
                msg.payload(),
            );
            got.fetch_add(1, SeqCst);
        },
    )];
    register_handlers(&job.ep, &mut table).expect("register handlers");
    job.barrier();

    let net = gex::stats().expect("stats");
    let on_udp = net.conduit == "udp";
    let data_before = net.get("data_sent").unwrap_or(0);
    if n > 1 {
        for seq in 0..COUNT {
            let data = payload(tag(me, seq), LEN);
            let args = [seq as i32, arg_value(me, seq, 1)];
            job.tm
                .request_medium(next, table[0].index, &data, Lc::Now, Flags::empty(), &args)
                .expect("request_medium");
        }
        job.wait_for("the requests of the previous rank", || {
            received.load(SeqCst) >= u64::from(COUNT)
        });
    }

    // A put to the next rank and a get back, through the reference path.
    let mine = payload(tag(me, 1 << 20), 3000);
    job.tm
        .put_blocking(next, 512, &mine[..], Flags::PEER_SEG_OFFSET)
        .expect("put");
    let mut back = vec![0u8; mine.len()];
    job.tm
        .get_blocking(&mut back[..], next, 512, Flags::PEER_SEG_OFFSET)
        .expect("get");
    assert_eq!(back, mine, "rank {me}: get from rank {next} after the put");
    job.barrier();
    let mut local = vec![0u8; mine.len()];
    job.seg.read(512, &mut local).expect("segment read");
    check_payload(
        &format!("rank {me}: the put of rank {prev}"),
        tag(prev, 1 << 20),
        &local,
    );

    if on_udp {
        let st = gex::stats().expect("stats");
        assert_eq!(
            st.get("max_datagram"),
            Some(MTU as u64),
            "rank {me}: the udp conduit's datagram size set in code"
        );
        let nbrhd = gex::system::query_nbrhd_info().expect("nbrhd");
        assert_eq!(
            nbrhd.members.len(),
            1,
            "rank {me}: bypass off in code: a neighbourhood of one"
        );
        if n > 1 {
            let sent = st.get("data_sent").unwrap_or(0) - data_before;
            let least = u64::from(COUNT) * LEN.div_ceil(MTU) as u64;
            assert!(
                sent >= least,
                "rank {me}: {sent} DATA datagrams for {COUNT} requests of {LEN} bytes, \
                 at most {MTU} bytes each: expected at least {least}"
            );
        }
    } else {
        assert!(
            !code_only,
            "code-only runs on the udp conduit, not {}",
            net.conduit
        );
    }
    job.barrier();
    println!(
        "test-config: rank {me} of {n}: all checks passed{}",
        if code_only { " (code only)" } else { "" }
    );
}
