//! End-to-end checks of gex-core through the `gex` facade, run as one rank
//! of a job of any size: `gex-run -n N test-core`.
//!
//! Checks, in order: calls before init and init's argument validation;
//! the object queries of client, endpoint and team; rank translation;
//! collective segment-attach errors (on every rank, on one rank, too
//! large) and a good attach with a different size per rank; the
//! bound-segment queries of every rank; segment contents seen through the
//! local mappings of peers' segments; neighbourhood and host tables; client
//! data on every object; system queries; handler-safe locks shared by
//! threads and an AM handler; TM-pairs; events; polling; a pending event
//! dropped under an HSL (no poll); `block_until` refused in handler context
//! and under an HSL; handler cdata.

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

use gex::am::{register_handlers, AmRequest, HandlerEntry, Injected};
use gex::system::{self, Position};
use gex::{CData, EpLocation, ErrorKind, Event, Flags, Hsl, Segment, TmRef, RANK_INVALID};
use gex_core::internals::*;
use gex_testsuite::{check_payload, payload, Job};

/// Handler: locks the shared HSL and increments the counter under it.
const H_HSL: u8 = 200;
/// Handler: counts requests sent through a TM-pair, per source.
const H_PAIR: u8 = 201;
/// Handler: completes the event dropped under an HSL (see `drop_under_hsl`).
const H_DROP: u8 = 202;
/// Handler: checks its cdata and that waiting is refused in handler context.
const H_RESTRICT: u8 = 203;

/// The completion the H_DROP handler marks done.
static DROP_C: Mutex<Option<Arc<gex_core::Completion>>> = Mutex::new(None);
/// H_DROP runs, and the most HSLs its thread held while it ran.
static DROP_RAN: AtomicU64 = AtomicU64::new(0);
static DROP_HSLS: AtomicU64 = AtomicU64::new(0);
/// H_RESTRICT runs that passed every check.
static RESTRICT_OK: AtomicU64 = AtomicU64::new(0);

/// The cdata rank `r` registers with H_RESTRICT.
fn handler_cdata(r: u32) -> String {
    format!("H_RESTRICT cdata of rank {r}")
}

/// AMs every rank sends to every rank in the HSL phase.
const HSL_AMS: u64 = 100;
/// Threads incrementing the HSL counter locally, and increments each.
const HSL_THREADS: u64 = 4;
const HSL_INCREMENTS: u64 = 10_000;

/// Segment size of rank `r`: different on every rank.
fn seg_size(r: u32) -> usize {
    (2 << 20) + r as usize * system::page_size()
}

/// Tag of the pattern rank `r` writes into its segment.
fn seg_tag(r: u32) -> u64 {
    0xC0DE_0000 + u64::from(r)
}

fn main() {
    before_init();
    let (client, ep, tm) = gex::init("TEST_CORE").expect("gex::init");
    let (me, n) = (tm.rank(), tm.size());
    let e = gex::init("TEST_CORE").expect_err("a second init must fail");
    assert_eq!(e.kind(), ErrorKind::BadArg, "{e}");
    assert!(e.message().contains("already"), "{e}");

    queries(&client, &ep, &tm);
    let seg = attach(&tm);
    let job = Job {
        client,
        ep,
        tm,
        seg,
    };
    bound_segments(&job);
    job.barrier();
    segment_contents(&job);
    job.barrier();
    nbrhd_and_host(&job);
    cdata(&job);
    system_queries();
    events_and_poll();

    let hsl = Arc::new(Hsl::new(0u64));
    let hsl_ams = Arc::new(AtomicU64::new(0));
    let pair_ams: Arc<Vec<AtomicU64>> = Arc::new((0..n).map(|_| AtomicU64::new(0)).collect());
    register(&job, &hsl, &hsl_ams, &pair_ams);
    job.barrier();
    hsl_local(&hsl);
    hsl_threads_and_ams(&job, &hsl, &hsl_ams);
    job.barrier();
    tm_pairs(&job, &pair_ams);
    job.barrier();
    drop_under_hsl(&job);
    job.barrier();
    restricted_waits(&job);
    job.barrier();
    wait_modes();
    job.barrier();
    conduit_stats(&job);
    println!("test-core: rank {me} of {n}: all checks passed");
}

/// The wait mode (`gasnet_set_waitmode`): how many times a
/// `gex::block_until` whose condition holds at its `k`-th look yields the
/// core (`gex::system::wait_yields`, also `wait_yields` in `gex::stats()`):
/// never under `Spin`, after every idle poll under `Block`, and under
/// `SpinBlock` only past the spin limit (2000 idle polls, or 1 when the
/// host has more ranks than cores).
fn wait_modes() {
    use gex::system::{set_wait_mode, wait_mode, wait_yields, WaitMode};
    assert_eq!(wait_mode(), WaitMode::SpinBlock, "the default");
    let yields_in = |mode: WaitMode, k: u32| {
        set_wait_mode(mode);
        let before = wait_yields();
        let mut looks = 0;
        gex::block_until(|| {
            looks += 1;
            looks >= k
        })
        .expect("block_until");
        wait_yields() - before
    };
    let spin = yields_in(WaitMode::Spin, 1000);
    let block = yields_in(WaitMode::Block, 1000);
    let short = yields_in(WaitMode::SpinBlock, 100);
    set_wait_mode(WaitMode::SpinBlock);
    assert_eq!(spin, 0, "Spin never yields");
    // Polls that find work (a late message) skip the pause.
    assert!(
        (500..1000).contains(&block),
        "Block: {block} yields in 999 idle polls"
    );
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let host = gex::system::query_host_info().expect("host").members.len();
    if host <= cores {
        assert_eq!(short, 0, "SpinBlock within the spin limit");
    } else {
        assert!(
            short >= 50,
            "SpinBlock oversubscribed: {short} yields in 99 idle polls"
        );
    }
    let st = gex::stats().expect("stats");
    assert!(st.get("wait_yields").is_some_and(|y| y >= block), "{st:?}");
}

/// `gex::stats()`: the conduit's counters. Over udp without the bypass
/// every AM of this program crossed the protocol, so its counters saw them;
/// nothing a correct peer sends is ever dropped as another job's, forged or
/// misaddressed.
fn conduit_stats(job: &Job) {
    let st = gex::stats().expect("stats after init");
    let name = job.ep.runtime().conduit().name();
    assert_eq!(st.conduit, name);
    let summary = st.summary(job.tm.rank());
    assert!(summary.contains(&format!("conduit {name}")), "{summary}");
    if name != "udp" {
        return;
    }
    let get = |c: &str| st.get(c).unwrap_or_else(|| panic!("udp keeps {c}: {st:?}"));
    for c in [
        "dropped_bad_key",
        "dropped_malformed",
        "dropped_misaddressed",
    ] {
        assert_eq!(get(c), 0, "{c}: {st:?}");
    }
    if job.tm.size() > 1 && std::env::var("GEX_UDP_BYPASS").as_deref() == Ok("0") {
        // Every rank sent TM-pair requests to every rank, and received one
        // from every rank (self-sends do not cross UDP).
        let peers = u64::from(job.tm.size() - 1);
        assert!(get("messages_sent") >= peers, "{st:?}");
        assert!(get("messages_delivered") >= peers, "{st:?}");
        assert!(
            get("data_sent") >= 1 && get("datagrams_received") >= 1,
            "{st:?}"
        );
        // Per peer: a TM-pair request went to every peer and one came from
        // every peer; the totals are the sums.
        let me = job.tm.rank();
        let mut sent = 0;
        for r in (0..job.tm.size()).filter(|&r| r != me) {
            let p = st
                .peer(r)
                .unwrap_or_else(|| panic!("no counters for peer {r}: {st:?}"));
            let c = |name: &str| p.get(name).unwrap_or_else(|| panic!("peer {r}: {name}"));
            assert!(c("messages_sent") >= 1, "peer {r}: {st:?}");
            assert!(c("datagrams_received") >= 1, "peer {r}: {st:?}");
            sent += c("messages_sent");
        }
        assert!(st.peer(me).is_none(), "{st:?}");
        assert_eq!(sent, get("messages_sent"), "{st:?}");
    }
}

/// Everything that must fail (or be checked) before the client exists.
/// Init's argument checks come before any communication, so a bad init on
/// every rank is safe.
fn before_init() {
    // The default, then quiet: the errors below are expected.
    assert!(system::get_verbose_errors(), "verbose errors default to on");
    system::set_verbose_errors(false);
    assert!(!system::get_verbose_errors());

    let e = system::query_job_rank().expect_err("no job rank before init");
    assert_eq!(e.kind(), ErrorKind::NotInit, "{e}");
    let e = system::query_job_size().expect_err("no job size before init");
    assert_eq!(e.kind(), ErrorKind::NotInit, "{e}");
    assert_eq!(
        system::query_nbrhd_info().unwrap_err().kind(),
        ErrorKind::NotInit
    );
    assert_eq!(
        system::max_local_segment_size().unwrap_err().kind(),
        ErrorKind::NotInit
    );
    assert_eq!(gex::poll().unwrap_err().kind(), ErrorKind::NotInit);
    assert!(gex_core::Runtime::get().is_none());

    // Names outside the spec's pattern are accepted, as by the reference
    // (API.md, "Leniencies"); an empty one is refused.
    let e = gex::init("").expect_err("an empty client name must fail");
    assert_eq!(e.kind(), ErrorKind::BadArg, "init(\"\"): {e}");
    assert!(e.message().contains("client name"), "init(\"\"): {e}");
    let e = gex::init_with_flags("OK", Flags::IMMEDIATE).expect_err("bad init flags");
    assert_eq!(e.kind(), ErrorKind::BadArg, "{e}");
    assert!(e.message().contains("IMMEDIATE"), "{e}");
    // Nothing was created by the failed calls.
    assert!(gex_core::Runtime::get().is_none());
    assert_eq!(
        system::query_job_rank().unwrap_err().kind(),
        ErrorKind::NotInit
    );
}

fn queries(client: &gex::Client, ep: &gex::Ep, tm: &gex::Tm) {
    let (me, n) = (tm.rank(), tm.size());
    assert_eq!(system::query_job_rank().unwrap(), me);
    assert_eq!(system::query_job_size().unwrap(), n);
    if std::env::var_os("GEX_CTRL").is_some() && std::env::var_os("GEX_RANK").is_some() {
        let env = |k: &str| -> u32 {
            std::env::var(k)
                .unwrap_or_else(|_| panic!("{k} is set by gex-run"))
                .parse()
                .unwrap_or_else(|_| panic!("{k} is a number"))
        };
        assert_eq!(env("GEX_RANK"), me);
        assert_eq!(env("GEX_SIZE"), n);
    } else if let (Ok(r), Ok(s)) = (
        std::env::var("OMPI_COMM_WORLD_RANK"),
        std::env::var("OMPI_COMM_WORLD_SIZE"),
    ) {
        // Started by Open MPI's mpirun (meeting through PMIx or at
        // GEX_RENDEZVOUS): its rank and size, and PMIx's rank.
        assert_eq!(
            (me.to_string(), n.to_string()),
            (r, s),
            "mpirun's rank and size"
        );
        if let Ok(p) = std::env::var("PMIX_RANK") {
            assert_eq!(me.to_string(), p, "the PMIx rank");
        }
    } else if std::env::var_os("GEX_CTRL").is_none() && std::env::var_os("GEX_RENDEZVOUS").is_none()
    {
        assert_eq!((me, n), (0, 1), "a process started alone is a singleton");
    }
    assert!(me < n);

    // Client.
    assert_eq!(client.name(), "TEST_CORE");
    assert_eq!(client.flags(), Flags::empty());
    // Team.
    assert!(tm.is_primordial());
    assert_eq!(tm.flags(), Flags::empty());
    assert_eq!(tm.client().name(), "TEST_CORE");
    assert_eq!(tm.ep().index(), 0);
    assert!(std::ptr::eq(tm.ep().runtime(), ep.runtime()));
    assert!(std::ptr::eq(client.runtime(), ep.runtime()));
    // Endpoint.
    assert_eq!(ep.index(), 0);
    assert_eq!(ep.flags(), Flags::empty());
    assert_eq!(ep.client().name(), "TEST_CORE");
    assert!(ep.segment().is_none(), "no segment before attach");
    assert_eq!(ep.runtime().jobrank(), me);
    assert_eq!(ep.runtime().jobsize(), n);

    // Rank translation: the identity on the primordial team.
    for r in 0..n {
        assert_eq!(tm.rank_to_jobrank(r).unwrap(), r);
        assert_eq!(tm.jobrank_to_rank(r).unwrap(), r);
        assert_eq!(
            tm.rank_to_ep(r, Flags::empty()).unwrap(),
            EpLocation {
                rank: r,
                ep_index: 0
            }
        );
    }
    for bad in [n, n + 7, RANK_INVALID] {
        let e = tm.rank_to_jobrank(bad).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BadArg, "{e}");
        assert!(e.message().contains(&format!("rank {bad}")), "{e}");
        let e = tm.jobrank_to_rank(bad).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BadArg, "{e}");
        assert!(e.message().contains(&format!("jobrank {bad}")), "{e}");
        let e = tm.rank_to_ep(bad, Flags::empty()).unwrap_err();
        assert!(e.message().contains(&format!("rank {bad}")), "{e}");
    }
    let e = tm.rank_to_ep(0, Flags::IMMEDIATE).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadArg, "{e}");
    assert!(e.message().contains("flags"), "{e}");

    // No segment anywhere yet.
    for r in 0..n {
        assert_eq!(tm.query_bound_segment(r, Flags::empty()).unwrap(), None);
        assert_eq!(tm.query_bound_segment(r, Flags::IMMEDIATE).unwrap(), None);
        assert_eq!(
            ep.pair(0).query_bound_segment(r, Flags::empty()).unwrap(),
            None
        );
    }
}

/// The collective errors of segment attach, then a good attach.
fn attach(tm: &gex::Tm) -> Segment {
    let (me, n) = (tm.rank(), tm.size());
    let last = n - 1;
    let page = system::page_size();
    let good = seg_size(me);

    // A bad size on every rank: every rank learns it.
    for bad in [1000usize, 0, page + 1] {
        let e = Segment::attach(tm, bad).expect_err("a size that is not a page multiple");
        assert_eq!(e.kind(), ErrorKind::BadArg, "{e}");
        assert!(e.message().contains("page size"), "{e}");
        assert!(
            e.message().contains("rank 0"),
            "the first bad rank is named: {e}"
        );
    }
    // A bad size on the last rank only: every rank fails, naming it.
    let size = if me == last { 1000 } else { good };
    let e = Segment::attach(tm, size).expect_err("one rank's bad size fails everyone");
    assert_eq!(e.kind(), ErrorKind::BadArg, "{e}");
    assert!(e.message().contains(&format!("rank {last}")), "{e}");
    assert!(e.message().contains("page size"), "{e}");
    // Above the maximum.
    let max = system::max_local_segment_size().unwrap();
    assert!(max >= good, "max segment size {max} below {good}");
    assert_eq!(max % page, 0, "max segment size is a page multiple");
    let e = Segment::attach(tm, max + page).expect_err("above the maximum");
    assert_eq!(e.kind(), ErrorKind::BadArg, "{e}");
    assert!(e.message().contains("exceeds"), "{e}");
    // Failures leave nothing behind.
    assert!(tm.ep().segment().is_none());
    assert_eq!(tm.query_bound_segment(me, Flags::empty()).unwrap(), None);

    let seg = Segment::attach(tm, good).expect("gex_Segment_Attach");
    assert_eq!(seg.size(), good);
    assert_ne!(seg.addr(), 0);
    assert_eq!(seg.addr() % page, 0, "the segment is page aligned");
    assert_eq!(seg.as_ptr() as usize, seg.addr());
    assert_eq!(seg.flags(), Flags::empty());
    assert_eq!(seg.client().name(), "TEST_CORE");
    let bound = tm.ep().segment().expect("the endpoint has its segment");
    assert_eq!((bound.addr(), bound.size()), (seg.addr(), seg.size()));

    // A second attach fails on every rank.
    let e = Segment::attach(tm, good).expect_err("one attach per process");
    assert_eq!(e.kind(), ErrorKind::BadArg, "{e}");
    assert!(e.message().contains("already attached"), "{e}");
    seg
}

fn bound_segments(job: &Job) {
    let (me, n) = (job.rank(), job.size());
    let mut mine = (job.seg.addr() as u64).to_le_bytes().to_vec();
    mine.extend_from_slice(&(job.seg.size() as u64).to_le_bytes());
    let all = job
        .ep
        .runtime()
        .bootstrap_exchange(&mine)
        .expect("exchange");
    assert_eq!(all.len(), n as usize);
    let pair = job.ep.pair(0);
    for r in 0..n {
        let v = &all[r as usize];
        let addr = u64::from_le_bytes(v[..8].try_into().unwrap()) as usize;
        let size = u64::from_le_bytes(v[8..16].try_into().unwrap()) as usize;
        assert_eq!(size, seg_size(r), "rank {r} attached its own size");
        let bs = job
            .tm
            .query_bound_segment(r, Flags::empty())
            .expect("query")
            .unwrap_or_else(|| panic!("rank {r} has a bound segment"));
        assert_eq!(bs.size, size, "size of rank {r}'s segment");
        assert_eq!(bs.owner_addr, addr, "owner address of rank {r}'s segment");
        // A segment is mapped here exactly when its rank shares memory with
        // this one (the whole job on smp; only this rank on udp without
        // the bypass).
        assert_eq!(
            bs.local_addr.is_some(),
            in_nbrhd(r),
            "rank {r}'s segment mapped here iff in the neighbourhood"
        );
        if r == me {
            assert_eq!(bs.local_addr, Some(job.seg.addr()));
        }
        assert_eq!(
            job.tm.query_bound_segment(r, Flags::IMMEDIATE).unwrap(),
            Some(bs)
        );
        assert_eq!(
            pair.query_bound_segment(r, Flags::empty()).unwrap(),
            Some(bs)
        );
    }
    let e = job
        .tm
        .query_bound_segment(RANK_INVALID, Flags::empty())
        .unwrap_err();
    assert!(e.message().contains("RANK_INVALID"), "{e}");
    let e = job.tm.query_bound_segment(n, Flags::empty()).unwrap_err();
    assert!(e.message().contains(&format!("rank {n}")), "{e}");
    assert!(job.tm.query_bound_segment(0, Flags::AD_ACQ).is_err());
}

fn segment_contents(job: &Job) {
    let (me, n) = (job.rank(), job.size());
    let size = job.seg.size();
    job.seg
        .write(0, &payload(seg_tag(me), size))
        .expect("write the whole segment");
    // Round trip at the very end of the segment.
    let mut tail = [0u8; 16];
    job.seg.read(size - 16, &mut tail).unwrap();
    assert_eq!(&tail[..], &payload(seg_tag(me), size)[size - 16..]);
    // Out of range: errors, nothing copied.
    let mut one = [0xEEu8; 1];
    assert!(job.seg.write(size - 1, &[1, 2]).is_err());
    assert!(job.seg.write(size, &[1]).is_err());
    assert!(job.seg.write(usize::MAX, &[1]).is_err());
    let e = job.seg.read(size, &mut one).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadArg, "{e}");
    assert!(e.message().contains("outside"), "{e}");
    assert_eq!(one, [0xEE]);
    assert!(job.seg.read(usize::MAX - 2, &mut [0u8; 8]).is_err());
    job.seg
        .write(size, &[])
        .expect("an empty write at the end is in range");
    job.seg.read(size - 1, &mut one).unwrap();
    assert_eq!(one[0], payload(seg_tag(me), size)[size - 1]);

    job.barrier();
    for r in 0..n {
        let bs = job
            .tm
            .query_bound_segment(r, Flags::empty())
            .unwrap()
            .unwrap();
        let mut got = vec![0u8; bs.size];
        match bs.local_addr {
            // SAFETY: `local` is this process's mapping of rank r's bound
            // segment, valid for `bs.size` bytes for the rest of the job.
            // Every rank wrote its segment before the barrier above and
            // nobody writes any segment until the barrier after this phase,
            // so the read does not race. `got` is a separate allocation of
            // the same length.
            Some(local) => unsafe { std::ptr::copy(local as *const u8, got.as_mut_ptr(), bs.size) },
            // Not mapped here: fetch it over the conduit.
            None => {
                use gex::rma::Rma;
                job.tm
                    .get_blocking(&mut got, r, bs.owner_addr, Flags::empty())
                    .expect("get a peer's segment");
            }
        }
        check_payload(
            &format!("rank {r}'s segment seen by rank {me}"),
            seg_tag(r),
            &got,
        );
    }
}

/// Whether ranks on this host share memory: always on smp; on udp unless
/// `GEX_UDP_BYPASS=0`, on ibv unless `GEX_IBV_BYPASS=0`.
fn bypass() -> bool {
    let conduit = gex_core::Runtime::get().expect("init").conduit().name();
    let var = match conduit {
        "udp" => "GEX_UDP_BYPASS",
        "ibv" => "GEX_IBV_BYPASS",
        _ => return true,
    };
    std::env::var(var).as_deref() != Ok("0")
}

/// Whether `r` is in this rank's neighbourhood.
fn in_nbrhd(r: u32) -> bool {
    system::query_nbrhd_info()
        .unwrap()
        .members
        .iter()
        .any(|m| m.jobrank == r)
}

fn nbrhd_and_host(job: &Job) {
    let (me, n) = (job.rank(), job.size());
    // Every rank's host identity, as the conduits group ranks: the
    // launcher's host name when it placed ranks on several hosts (network
    // namespaces here), else the hostname.
    let mine = std::env::var("GEX_HOST").unwrap_or_else(|_| {
        gex_core::bootstrap::os::host::hostname().unwrap_or_else(|| "?".into())
    });
    let all: Vec<String> = job
        .ep
        .runtime()
        .bootstrap_exchange(mine.as_bytes())
        .unwrap()
        .iter()
        .map(|h| String::from_utf8_lossy(h).into_owned())
        .collect();
    let conduit = job.ep.runtime().conduit().name();
    // smp needs one host; udp groups ranks by host identity.
    let same_host: Vec<u32> = if conduit == "smp" {
        (0..n).collect()
    } else {
        (0..n).filter(|&r| all[r as usize] == mine).collect()
    };
    let mut distinct: Vec<&String> = Vec::new();
    for h in &all {
        if !distinct.contains(&h) {
            distinct.push(h);
        }
    }
    let (host_set_size, host_set_rank) = if conduit == "smp" {
        (1, 0)
    } else {
        (
            distinct.len() as u32,
            distinct.iter().position(|h| **h == mine).unwrap() as u32,
        )
    };
    for (what, set) in [
        ("nbrhd", system::query_nbrhd_info().unwrap()),
        ("host", system::query_host_info().unwrap()),
    ] {
        let ranks: Vec<u32> = set.members.iter().map(|m| m.jobrank).collect();
        assert!(
            ranks.windows(2).all(|w| w[0] < w[1]),
            "{what} members are sorted: {ranks:?}"
        );
        // The neighbourhood is the host's ranks unless the udp conduit runs
        // without its shared-memory bypass.
        let expect: Vec<u32> = if what == "nbrhd" && !bypass() {
            vec![me]
        } else {
            same_host.clone()
        };
        assert_eq!(ranks, expect, "{what} members");
        assert_eq!(set.members[set.my_index as usize].jobrank, me, "{what}");
    }
    let (nbrhd_set_size, nbrhd_set_rank) = if bypass() {
        (host_set_size, host_set_rank)
    } else {
        (n, me)
    };
    assert_eq!(
        system::query_my_position().unwrap(),
        Position {
            nbrhd_set_size,
            nbrhd_set_rank,
            host_set_size,
            host_set_rank,
        }
    );
}

/// Set, query, replace and clear the client data of one object.
fn cdata_round_trip(what: &str, set: &dyn Fn(Option<CData>), get: &dyn Fn() -> Option<CData>) {
    assert!(get().is_none(), "{what}: no data before it is set");
    let a: CData = Arc::new(42u64);
    set(Some(a.clone()));
    let got = get().unwrap_or_else(|| panic!("{what}: data set"));
    assert!(Arc::ptr_eq(&got, &a), "{what}: the very value set");
    assert_eq!(got.downcast_ref::<u64>(), Some(&42), "{what}");
    assert!(got.downcast_ref::<String>().is_none(), "{what}");
    drop(got);

    let b: CData = Arc::new(format!("{what} data"));
    set(Some(b));
    assert_eq!(
        Arc::strong_count(&a),
        1,
        "{what}: the replaced value is released"
    );
    let got = get().unwrap();
    assert!(got.downcast_ref::<u64>().is_none(), "{what}");
    let s: Arc<String> = got.downcast::<String>().expect("a String");
    assert_eq!(*s, format!("{what} data"));

    set(None);
    assert!(get().is_none(), "{what}: cleared");
    assert_eq!(
        Arc::strong_count(&s),
        1,
        "{what}: the cleared value is released"
    );
}

fn cdata(job: &Job) {
    let (client, ep, tm, seg) = (&job.client, &job.ep, &job.tm, &job.seg);
    cdata_round_trip("client", &|v| client.set_cdata(v), &|| client.cdata());
    cdata_round_trip("ep", &|v| ep.set_cdata(v), &|| ep.cdata());
    cdata_round_trip("tm", &|v| tm.set_cdata(v), &|| tm.cdata());
    cdata_round_trip("segment", &|v| seg.set_cdata(v), &|| seg.cdata());

    // Each object has its own slot, shared by every handle on the object.
    let tag = |s: &str| -> CData { Arc::new(s.to_string()) };
    client.set_cdata(Some(tag("client")));
    ep.set_cdata(Some(tag("ep")));
    tm.set_cdata(Some(tag("tm")));
    seg.set_cdata(Some(tag("seg")));
    let read = |c: Option<CData>| -> String {
        c.expect("data set")
            .downcast_ref::<String>()
            .expect("a String")
            .clone()
    };
    assert_eq!(read(client.cdata()), "client");
    assert_eq!(read(ep.cdata()), "ep");
    assert_eq!(read(tm.cdata()), "tm");
    assert_eq!(read(seg.cdata()), "seg");
    assert_eq!(read(ep.client().cdata()), "client");
    assert_eq!(read(tm.client().cdata()), "client");
    assert_eq!(read(seg.client().cdata()), "client");
    assert_eq!(read(tm.ep().cdata()), "ep");
    assert_eq!(read(tm.clone().cdata()), "tm");
    assert_eq!(read(ep.segment().unwrap().cdata()), "seg");
    for c in [client.cdata(), ep.cdata(), tm.cdata(), seg.cdata()] {
        assert!(c.is_some());
    }
    client.set_cdata(None);
    ep.set_cdata(None);
    tm.set_cdata(None);
    seg.set_cdata(None);
    assert!(ep.client().cdata().is_none() && ep.segment().unwrap().cdata().is_none());
}

fn system_queries() {
    assert!(!system::get_verbose_errors());
    system::set_verbose_errors(true);
    assert!(system::get_verbose_errors());
    system::set_verbose_errors(false);
    assert!(!system::get_verbose_errors());
    assert!(system::query_max_threads() >= 1);
    assert_eq!(system::query_hidden_am_concurrency_level(), 0);
    let page = system::page_size();
    assert!(page.is_power_of_two() && page >= 4096, "page size {page}");
}

fn events_and_poll() {
    assert!(Event::default().test().unwrap());
    assert!(Event::INVALID.is_invalid());
    let mut ev = Event::default();
    assert!(ev.is_invalid());
    assert!(ev.test().unwrap());
    let mut no_op = Event::NO_OP;
    assert!(no_op.test().is_err(), "GEX_EVENT_NO_OP may not be tested");
    ev.wait()
        .expect("waiting on an invalid event completes at once");
    Event::INVALID.wait().unwrap();
    for _ in 0..10 {
        gex::poll().expect("poll outside handlers");
    }
}

fn register(
    job: &Job,
    hsl: &Arc<Hsl<u64>>,
    hsl_ams: &Arc<AtomicU64>,
    pair_ams: &Arc<Vec<AtomicU64>>,
) {
    let mut table = Vec::new();
    {
        let (hsl, hsl_ams) = (hsl.clone(), hsl_ams.clone());
        table.push(
            HandlerEntry::request(H_HSL, Flags::AM_SHORT, 1, move |tok, msg| {
                assert!(gex::context::in_handler());
                assert_eq!(gex::context::hsls_held(), 0);
                assert_eq!(msg.arg(0) as u32, tok.src_rank());
                {
                    let mut g = hsl.lock();
                    assert_eq!(gex::context::hsls_held(), 1);
                    *g += 1;
                }
                assert_eq!(gex::context::hsls_held(), 0);
                hsl_ams.fetch_add(1, SeqCst);
            })
            .with_name("hsl-increment"),
        );
    }
    {
        let pair_ams = pair_ams.clone();
        table.push(
            HandlerEntry::request(H_PAIR, Flags::AM_SHORT, 1, move |tok, msg| {
                assert_eq!(msg.arg(0) as u32, tok.src_rank());
                pair_ams[tok.src_rank() as usize].fetch_add(1, SeqCst);
            })
            .with_name("pair-count"),
        );
    }
    table.push(
        HandlerEntry::request(H_DROP, Flags::AM_SHORT, 0, |_tok, _msg| {
            DROP_HSLS.fetch_max(u64::from(gex::context::hsls_held()), SeqCst);
            DROP_RAN.fetch_add(1, SeqCst);
            if let Some(c) = DROP_C.lock().unwrap().take() {
                c.done();
            }
        })
        .with_name("drop-complete"),
    );
    let me = job.rank();
    let cdata: CData = Arc::new(handler_cdata(me));
    table.push(
        HandlerEntry::request(H_RESTRICT, Flags::AM_SHORT, 1, move |tok, msg| {
            assert_eq!(msg.arg(0) as u32, tok.src_rank());
            // The handler's own registration data (gex_AM_RegisterHandlers'
            // cdata, through gex_Token_Info).
            let info = tok.info();
            let got = info.entry.cdata().expect("handler cdata");
            assert_eq!(got.downcast_ref::<String>(), Some(&handler_cdata(me)));
            assert_eq!(info.entry.name(), Some("restricted-waits"));
            // GASNET_BLOCKUNTIL is not allowed in handler context, nor under
            // an HSL taken there; the condition is never evaluated.
            let e = gex::block_until(|| panic!("evaluated in a handler"))
                .expect_err("block_until in handler context");
            assert!(e.message().contains("handler"), "{e}");
            let h: Hsl = Hsl::new(());
            {
                let _g = h.lock();
                let e = gex::block_until(|| panic!("evaluated under an HSL"))
                    .expect_err("block_until under an HSL in a handler");
                assert!(e.message().contains("GASNET_BLOCKUNTIL"), "{e}");
            }
            RESTRICT_OK.fetch_add(1, SeqCst);
        })
        .with_name("restricted-waits")
        .with_cdata(cdata),
    );
    register_handlers(&job.ep, &mut table).expect("register handlers");
    assert_eq!(table[0].index, H_HSL);
    assert_eq!(table[1].index, H_PAIR);
    assert_eq!(table[2].index, H_DROP);
    assert_eq!(table[3].index, H_RESTRICT);
}

/// Dropping a pending event under an HSL must not poll (that would run
/// handlers while the lock is held): the drop returns at once and the
/// operation completes later. The event's completion is marked done by a
/// handler of a request this rank sends itself, which runs only when this
/// rank polls.
fn drop_under_hsl(job: &Job) {
    let c = gex_core::Completion::new(1, None);
    *DROP_C.lock().unwrap() = Some(c.clone());
    let ev = Event::pending(c.clone());
    let r = job
        .tm
        .request_short(job.rank(), H_DROP, Flags::empty(), &[])
        .expect("request to self");
    assert_eq!(r, Injected::Sent);
    let hsl: Hsl = Hsl::new(());
    {
        let _g = hsl.lock();
        drop(ev);
        assert_eq!(
            DROP_HSLS.load(SeqCst),
            0,
            "dropping a pending event under an HSL ran a handler under the lock"
        );
    }
    job.wait_for("the H_DROP handler", || DROP_RAN.load(SeqCst) == 1);
    assert!(c.is_complete());
    assert_eq!(DROP_HSLS.load(SeqCst), 0);
    // Outside restricted context a dropped pending event still waits.
    let c = gex_core::Completion::new(1, None);
    *DROP_C.lock().unwrap() = Some(c.clone());
    job.tm
        .request_short(job.rank(), H_DROP, Flags::empty(), &[])
        .expect("request to self");
    drop(Event::pending(c.clone()));
    assert!(
        c.is_complete(),
        "a dropped pending event waits for completion"
    );
    assert_eq!(DROP_RAN.load(SeqCst), 2);
}

/// `gex::block_until` from a handler (of every peer's request) and under an
/// HSL in ordinary code is refused without evaluating the condition; the
/// handlers also check their registration's cdata.
fn restricted_waits(job: &Job) {
    let (me, n) = (job.rank(), job.size());
    let hsl: Hsl = Hsl::new(());
    {
        let _g = hsl.lock();
        let e = gex::block_until(|| panic!("evaluated under an HSL"))
            .expect_err("block_until under an HSL");
        assert!(e.message().contains("handler-safe lock"), "{e}");
    }
    for peer in 0..n {
        job.tm
            .request_short(peer, H_RESTRICT, Flags::empty(), &[me as i32])
            .expect("request");
    }
    job.wait_for("the H_RESTRICT handlers", || {
        RESTRICT_OK.load(SeqCst) == u64::from(n)
    });
    gex::block_until(|| RESTRICT_OK.load(SeqCst) == u64::from(n)).expect("block_until");
}

/// The HSL on one thread and across two: counting, restriction, try_lock.
fn hsl_local(hsl: &Arc<Hsl<u64>>) {
    use gex::context::hsls_held;
    assert_eq!(hsls_held(), 0);
    let other: Hsl = Hsl::new(());
    {
        // Not necessarily 0: a peer that left the barrier first may already
        // have sent increments that this rank ran while leaving it.
        let g = hsl.lock();
        assert_eq!(hsls_held(), 1);
        let e = gex::poll().expect_err("no polling under an HSL");
        assert!(e.message().contains("handler-safe lock"), "{e}");
        {
            let _g2 = other.try_lock().expect("a free HSL");
            assert_eq!(hsls_held(), 2);
        }
        assert_eq!(hsls_held(), 1);
        // Held here: another thread cannot take it.
        let h = hsl.clone();
        let (got, held_there) = std::thread::spawn(move || {
            let got = h.try_lock().is_some();
            (got, hsls_held())
        })
        .join()
        .expect("try_lock thread");
        assert!(!got, "try_lock succeeded on an HSL held by another thread");
        assert_eq!(held_there, 0, "a failed try_lock holds nothing");
        drop(g);
    }
    assert_eq!(hsls_held(), 0);
    gex::poll().expect("polling is allowed again");
    // Free again: another thread can take it.
    let h = hsl.clone();
    let got = std::thread::spawn(move || {
        let g = h.try_lock();
        let n = hsls_held();
        (g.is_some(), n)
    })
    .join()
    .unwrap();
    assert_eq!(got, (true, 1));
    assert_eq!(hsls_held(), 0);
}

/// Local threads and every rank's AM handlers increment the same HSL-guarded
/// counter concurrently.
fn hsl_threads_and_ams(job: &Job, hsl: &Arc<Hsl<u64>>, hsl_ams: &AtomicU64) {
    let (me, n) = (job.rank(), job.size());
    let threads: Vec<_> = (0..HSL_THREADS)
        .map(|_| {
            let hsl = hsl.clone();
            std::thread::spawn(move || {
                for _ in 0..HSL_INCREMENTS {
                    *hsl.lock() += 1;
                }
                assert_eq!(gex::context::hsls_held(), 0);
            })
        })
        .collect();
    for _ in 0..HSL_AMS {
        for peer in 0..n {
            let r = job
                .tm
                .request_short(peer, H_HSL, Flags::empty(), &[me as i32])
                .expect("request");
            assert_eq!(r, Injected::Sent);
        }
    }
    job.wait_for("the HSL AMs of every rank", || {
        hsl_ams.load(SeqCst) == HSL_AMS * u64::from(n)
    });
    for t in threads {
        t.join().expect("HSL thread");
    }
    job.barrier();
    assert_eq!(hsl_ams.load(SeqCst), HSL_AMS * u64::from(n));
    assert_eq!(
        *hsl.lock(),
        HSL_THREADS * HSL_INCREMENTS + HSL_AMS * u64::from(n),
        "HSL-guarded counter"
    );
}

fn tm_pairs(job: &Job, pair_ams: &[AtomicU64]) {
    let (me, n) = (job.rank(), job.size());
    let pair = job.ep.pair(0);
    assert_eq!(pair, job.ep.pair(0));
    assert_ne!(pair, job.ep.pair(1));
    assert_eq!(pair.clone(), pair);
    assert_eq!(pair.remote_index(), 0);
    assert_eq!(pair.ep().index(), 0);
    for r in 0..n {
        assert_eq!(pair.jobrank_of(r).unwrap(), r);
        let sent = pair
            .request_short(r, H_PAIR, Flags::empty(), &[me as i32])
            .expect("request through a TM-pair");
        assert_eq!(sent, Injected::Sent);
    }
    let e = pair
        .request_short(n, H_PAIR, Flags::empty(), &[me as i32])
        .unwrap_err();
    assert!(e.message().contains(&format!("jobrank {n}")), "{e}");
    // An index no process can have is an error at the sender; an index
    // below MAX_EPS is the target's to check (test-ep sends to created
    // endpoints). A created endpoint's segment is not known here: the
    // spec's unsuccessful query, and RMA over such a pair is an error.
    let max = gex::MAX_EPS as gex::EpIndex;
    let e = job
        .ep
        .pair(max)
        .request_short(me, H_PAIR, Flags::empty(), &[me as i32])
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadArg, "{e}");
    assert!(e.message().contains(&format!("index {max}")), "{e}");
    assert!(job
        .ep
        .pair(max)
        .query_bound_segment(me, Flags::empty())
        .is_err());
    assert_eq!(
        job.ep
            .pair(1)
            .query_bound_segment(me, Flags::empty())
            .unwrap(),
        None
    );
    let e = job.ep.pair(1).jobrank_of(me).unwrap_err();
    assert!(e.message().contains("no bound segment"), "{e}");
    job.wait_for("a TM-pair request from every rank", || {
        pair_ams.iter().all(|c| c.load(SeqCst) == 1)
    });
}
