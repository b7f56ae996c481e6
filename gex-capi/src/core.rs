//! Core: `gex_Client_Init`, object queries, segments, TM-pairs, the
//! `gex_System_*` queries, polling and exit.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::sync::atomic::AtomicPtr;
use std::sync::OnceLock;

use gex::{Error, ErrorKind, Flags, Rank, Segment, TmRef, MAX_EPS};

use crate::types::*;

static CLIENT: OnceLock<usize> = OnceLock::new();
static PRIMORDIAL: OnceLock<usize> = OnceLock::new();

/// The primordial team's handle once `gex_Client_Init` succeeded.
pub fn primordial_tm() -> Option<gex_TM_t> {
    PRIMORDIAL.get().map(|&p| p as gex_TM_t)
}

/// The client handle once `gex_Client_Init` succeeded.
pub fn client_handle() -> Option<gex_Client_t> {
    CLIENT.get().map(|&p| p as gex_Client_t)
}

/// `gex_Client_Init`. `argc`/`argv` are accepted and left alone: the
/// launcher passes what ranks need in the environment.
///
/// # Safety
/// The out-pointers are valid for writes; `name` is a C string.
#[no_mangle]
pub unsafe extern "C" fn gex_Client_Init(
    client_p: *mut gex_Client_t,
    ep_p: *mut gex_EP_t,
    tm_p: *mut gex_TM_t,
    client_name: *const c_char,
    _argc: *mut c_int,
    _argv: *mut *mut *mut c_char,
    flags: gex_Flags_t,
) -> c_int {
    const CALL: &str = "gex_Client_Init";
    if client_p.is_null() || ep_p.is_null() || tm_p.is_null() || client_name.is_null() {
        return code(Error::bad_arg(format!("{CALL}: a NULL pointer argument")));
    }
    // SAFETY: a C string (caller's contract).
    let name = match unsafe { CStr::from_ptr(client_name) }.to_str() {
        Ok(n) => n.to_owned(),
        Err(_) => return code(Error::bad_arg(format!("{CALL}: the name is not UTF-8"))),
    };
    let f = match flags_checked(flags, CALL) {
        Ok(f) => f,
        Err(e) => return code(e),
    };
    let (client, ep, tm) = match gex::init_with_flags(&name, f) {
        Ok(t) => t,
        Err(e) => return code_reported(e),
    };
    let cclient = leak(CClient {
        client,
        ep: std::ptr::null(),
        cdata: AtomicPtr::new(std::ptr::null_mut()),
    }) as *mut CClient;
    let cep = leak(CEp::new(ep, cclient));
    // SAFETY: just leaked, not shared yet.
    unsafe { (*cclient).ep = cep };
    let ctm = leak(CTm {
        tm: TmObj::Team(tm),
        ep: cep,
        cdata: AtomicPtr::new(std::ptr::null_mut()),
    });
    let asked = SPMD_PROC.load(std::sync::atomic::Ordering::Relaxed);
    let rank = gex_System_QueryJobRank();
    if asked >= 0 && asked != i64::from(rank) {
        gex::fatal(&format!(
            "gex_Client_Init: AMUDP_SPMDSetProc({asked}) asked for rank {asked}, but the launcher made this process rank {rank}"
        ));
    }
    let _ = CLIENT.set(cclient as usize);
    let _ = PRIMORDIAL.set(ctm as usize);
    crate::fast::publish(ctm);
    if let Err(e) = exchange_nodes() {
        return code_reported(e);
    }
    // SAFETY: checked non-NULL above; writable (caller's contract).
    unsafe {
        *client_p = cclient;
        *ep_p = cep;
        *tm_p = ctm;
    }
    GASNET_OK
}

/// `gex_Client_QueryFlags`.
#[no_mangle]
pub unsafe extern "C" fn gex_Client_QueryFlags(client: gex_Client_t) -> gex_Flags_t {
    // SAFETY: a handle of this library.
    unsafe { obj(client, "gex_Client_QueryFlags") }
        .client
        .flags()
        .bits()
}

/// `gex_Client_QueryName`: a C string owned by the library.
#[no_mangle]
pub unsafe extern "C" fn gex_Client_QueryName(client: gex_Client_t) -> *const c_char {
    static NAME: OnceLock<std::ffi::CString> = OnceLock::new();
    // SAFETY: a handle of this library.
    let c = unsafe { obj(client, "gex_Client_QueryName") };
    NAME.get_or_init(|| std::ffi::CString::new(c.client.name()).unwrap_or_default())
        .as_ptr()
}

macro_rules! cdata_calls {
    ($set:ident, $query:ident, $t:ty) => {
        #[doc = concat!("`", stringify!($set), "`.")]
        #[no_mangle]
        pub unsafe extern "C" fn $set(h: $t, val: *const c_void) {
            // SAFETY: a handle of this library.
            set_cdata(&unsafe { obj(h, stringify!($set)) }.cdata, val)
        }
        #[doc = concat!("`", stringify!($query), "`.")]
        #[no_mangle]
        pub unsafe extern "C" fn $query(h: $t) -> *mut c_void {
            // SAFETY: a handle of this library.
            get_cdata(&unsafe { obj(h, stringify!($query)) }.cdata)
        }
    };
}
cdata_calls!(gex_Client_SetCData, gex_Client_QueryCData, gex_Client_t);
cdata_calls!(gex_EP_SetCData, gex_EP_QueryCData, gex_EP_t);
cdata_calls!(gex_TM_SetCData, gex_TM_QueryCData, gex_TM_t);
cdata_calls!(gex_Segment_SetCData, gex_Segment_QueryCData, gex_Segment_t);

/// `gex_Segment_Attach`.
#[no_mangle]
pub unsafe extern "C" fn gex_Segment_Attach(
    segment_p: *mut gex_Segment_t,
    tm: gex_TM_t,
    size: usize,
) -> c_int {
    const CALL: &str = "gex_Segment_Attach";
    // SAFETY: a handle of this library.
    let t = unsafe { team(tm, CALL) };
    match Segment::attach(t, size) {
        Ok(seg) => {
            // (`Segment::attach` ends with a barrier after every rank has
            // recorded its segment table.)
            // SAFETY: a handle of this library.
            let client = unsafe { obj(obj(tm, CALL).ep, CALL) }.client;
            let addr = seg.addr();
            let h = leak(CSegment {
                seg,
                client,
                cdata: AtomicPtr::new(std::ptr::null_mut()),
            });
            // The same handle from gex_EP_QuerySegment and
            // gasnet_QueryGexObjects as from the attach.
            remember_segment(addr, h);
            if !segment_p.is_null() {
                // SAFETY: writable (caller's contract).
                unsafe { *segment_p = h };
            }
            GASNET_OK
        }
        Err(e) => code_reported(e),
    }
}

/// The segment handles made so far, by segment address.
static SEGS: OnceLock<std::sync::Mutex<Vec<(usize, usize)>>> = OnceLock::new();

/// Records the handle of a created segment, for `gex_EP_QuerySegment`.
pub(crate) fn remember_segment(addr: usize, h: gex_Segment_t) {
    let m = SEGS.get_or_init(Default::default);
    let mut v = m.lock().unwrap_or_else(|p| p.into_inner());
    v.retain(|(a, _)| *a != addr);
    v.push((addr, h as usize));
}

/// The segment handle of `ep`'s bound segment, made once.
fn segment_handle_of(cep: &CEp) -> gex_Segment_t {
    let Some(seg) = cep.ep.segment() else {
        return std::ptr::null();
    };
    let m = SEGS.get_or_init(Default::default);
    let mut v = m.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(&(_, h)) = v.iter().find(|(a, _)| *a == seg.addr()) {
        return h as gex_Segment_t;
    }
    let h = leak(CSegment {
        seg: seg.clone(),
        client: cep.client,
        cdata: AtomicPtr::new(std::ptr::null_mut()),
    });
    v.push((seg.addr(), h as usize));
    h
}

/// `gex_Segment_QueryClient`.
#[no_mangle]
pub unsafe extern "C" fn gex_Segment_QueryClient(seg: gex_Segment_t) -> gex_Client_t {
    // SAFETY: a handle of this library.
    unsafe { obj(seg, "gex_Segment_QueryClient") }.client
}

/// `gex_Segment_QueryFlags`.
#[no_mangle]
pub unsafe extern "C" fn gex_Segment_QueryFlags(seg: gex_Segment_t) -> gex_Flags_t {
    // SAFETY: a handle of this library.
    unsafe { obj(seg, "gex_Segment_QueryFlags") }
        .seg
        .flags()
        .bits()
}

/// `gex_Segment_QueryAddr`.
#[no_mangle]
pub unsafe extern "C" fn gex_Segment_QueryAddr(seg: gex_Segment_t) -> *mut c_void {
    // SAFETY: a handle of this library.
    unsafe { obj(seg, "gex_Segment_QueryAddr") }
        .seg
        .as_ptr()
        .cast()
}

/// `gex_Segment_QuerySize`.
#[no_mangle]
pub unsafe extern "C" fn gex_Segment_QuerySize(seg: gex_Segment_t) -> usize {
    // SAFETY: a handle of this library.
    unsafe { obj(seg, "gex_Segment_QuerySize") }.seg.size()
}

/// `gex_TM_QueryClient`.
#[no_mangle]
pub unsafe extern "C" fn gex_TM_QueryClient(tm: gex_TM_t) -> gex_Client_t {
    // SAFETY: handles of this library.
    unsafe { obj(obj(tm, "gex_TM_QueryClient").ep, "gex_TM_QueryClient") }.client
}

/// `gex_TM_QueryEP`.
#[no_mangle]
pub unsafe extern "C" fn gex_TM_QueryEP(tm: gex_TM_t) -> gex_EP_t {
    // SAFETY: a handle of this library.
    unsafe { obj(tm, "gex_TM_QueryEP") }.ep
}

/// `gex_TM_QueryFlags`.
#[no_mangle]
pub unsafe extern "C" fn gex_TM_QueryFlags(tm: gex_TM_t) -> gex_Flags_t {
    // SAFETY: a handle of this library.
    unsafe { team(tm, "gex_TM_QueryFlags") }.flags().bits()
}

/// `gex_TM_QueryRank`.
#[no_mangle]
pub unsafe extern "C" fn gex_TM_QueryRank(tm: gex_TM_t) -> gex_Rank_t {
    // SAFETY: a handle of this library.
    unsafe { team(tm, "gex_TM_QueryRank") }.rank()
}

/// `gex_TM_QuerySize`.
#[no_mangle]
pub unsafe extern "C" fn gex_TM_QuerySize(tm: gex_TM_t) -> gex_Rank_t {
    // SAFETY: a handle of this library.
    unsafe { team(tm, "gex_TM_QuerySize") }.size()
}

/// `gex_TM_TranslateRankToJobrank`.
#[no_mangle]
pub unsafe extern "C" fn gex_TM_TranslateRankToJobrank(
    tm: gex_TM_t,
    rank: gex_Rank_t,
) -> gex_Rank_t {
    // SAFETY: a handle of this library.
    or_fatal(unsafe { team(tm, "gex_TM_TranslateRankToJobrank") }.rank_to_jobrank(rank))
}

/// `gex_TM_TranslateJobrankToRank`.
#[no_mangle]
pub unsafe extern "C" fn gex_TM_TranslateJobrankToRank(
    tm: gex_TM_t,
    jobrank: gex_Rank_t,
) -> gex_Rank_t {
    // SAFETY: a handle of this library.
    or_fatal(unsafe { team(tm, "gex_TM_TranslateJobrankToRank") }.jobrank_to_rank(jobrank))
}

/// `gex_TM_TranslateRankToEP`.
#[no_mangle]
pub unsafe extern "C" fn gex_TM_TranslateRankToEP(
    tm: gex_TM_t,
    rank: gex_Rank_t,
    flags: gex_Flags_t,
) -> gex_EP_Location_t {
    const CALL: &str = "gex_TM_TranslateRankToEP";
    // SAFETY: a handle of this library.
    let loc =
        or_fatal(unsafe { team(tm, CALL) }.rank_to_ep(rank, crate::types::flags(flags, CALL)));
    gex_EP_Location_t {
        gex_rank: loc.rank,
        gex_ep_index: loc.ep_index,
    }
}

/// `gex_TM_Pair`: one handle per (endpoint, index), made on first use.
#[no_mangle]
pub unsafe extern "C" fn gex_TM_Pair(ep: gex_EP_t, remote_index: gex_EP_Index_t) -> gex_TM_t {
    const CALL: &str = "gex_TM_Pair";
    // SAFETY: a handle of this library.
    let cep = unsafe { obj(ep, CALL) };
    let Some(slot) = cep.pairs.get(remote_index as usize) else {
        gex::fatal(&format!(
            "{CALL}: endpoint index {remote_index} is not below GASNET_MAXEPS ({MAX_EPS})"
        ));
    };
    *slot.get_or_init(|| {
        leak(CTm {
            tm: TmObj::Pair(cep.ep.pair(remote_index)),
            ep,
            cdata: AtomicPtr::new(std::ptr::null_mut()),
        }) as usize
    }) as gex_TM_t
}

/// `gex_EP_QueryClient`.
#[no_mangle]
pub unsafe extern "C" fn gex_EP_QueryClient(ep: gex_EP_t) -> gex_Client_t {
    // SAFETY: a handle of this library.
    unsafe { obj(ep, "gex_EP_QueryClient") }.client
}

/// `gex_EP_QueryFlags`.
#[no_mangle]
pub unsafe extern "C" fn gex_EP_QueryFlags(ep: gex_EP_t) -> gex_Flags_t {
    // SAFETY: a handle of this library.
    unsafe { obj(ep, "gex_EP_QueryFlags") }.ep.flags().bits()
}

/// `gex_EP_QueryIndex`.
#[no_mangle]
pub unsafe extern "C" fn gex_EP_QueryIndex(ep: gex_EP_t) -> gex_EP_Index_t {
    // SAFETY: a handle of this library.
    unsafe { obj(ep, "gex_EP_QueryIndex") }.ep.index()
}

/// `gex_EP_QuerySegment`: `GEX_SEGMENT_INVALID` (NULL) before attach.
#[no_mangle]
pub unsafe extern "C" fn gex_EP_QuerySegment(ep: gex_EP_t) -> gex_Segment_t {
    // SAFETY: a handle of this library.
    segment_handle_of(unsafe { obj(ep, "gex_EP_QuerySegment") })
}

/// `gex_EP_QueryBoundSegmentNB`: the answer is known locally, so the
/// event is `GEX_EVENT_INVALID`; no segment reads as NULL addresses and
/// size 0.
#[no_mangle]
pub unsafe extern "C" fn gex_EP_QueryBoundSegmentNB(
    tm: gex_TM_t,
    rank: gex_Rank_t,
    owneraddr_p: *mut *mut c_void,
    localaddr_p: *mut *mut c_void,
    size_p: *mut usize,
    flags: gex_Flags_t,
) -> gex_Event_t {
    const CALL: &str = "gex_EP_QueryBoundSegmentNB";
    let f = crate::types::flags(flags, CALL);
    let got = with_tm!(tm, CALL, |t| or_fatal(t.query_bound_segment(rank, f)));
    // SAFETY: each out-pointer is NULL or writable (caller's contract).
    unsafe { write_bound(got, owneraddr_p, localaddr_p, size_p) };
    std::ptr::null_mut()
}

/// Writes a bound-segment answer to the non-NULL out-pointers.
unsafe fn write_bound(
    got: Option<gex::BoundSegment>,
    owneraddr_p: *mut *mut c_void,
    localaddr_p: *mut *mut c_void,
    size_p: *mut usize,
) {
    let (o, l, s) = match got {
        Some(b) => (b.owner_addr, b.local_addr.unwrap_or(0), b.size),
        None => (0, 0, 0),
    };
    // SAFETY: NULL or writable (caller's contract).
    unsafe {
        if !owneraddr_p.is_null() {
            *owneraddr_p = o as *mut c_void;
        }
        if !localaddr_p.is_null() {
            *localaddr_p = l as *mut c_void;
        }
        if !size_p.is_null() {
            *size_p = s;
        }
    }
}

/// `gex_Segment_QueryBound` [DEPRECATED]: 0 if `rank` has a bound segment
/// (and the outputs written), non-zero with the outputs untouched if not.
#[no_mangle]
pub unsafe extern "C" fn gex_Segment_QueryBound(
    tm: gex_TM_t,
    rank: gex_Rank_t,
    owneraddr_p: *mut *mut c_void,
    localaddr_p: *mut *mut c_void,
    size_p: *mut usize,
) -> c_int {
    const CALL: &str = "gex_Segment_QueryBound";
    let got = with_tm!(tm, CALL, |t| t.query_bound_segment(rank, Flags::empty()));
    match got {
        // No segment: non-zero, and the outputs are left as they were
        // (the reference's behaviour, which its testgasnet checks).
        Ok(None) => 1,
        Ok(g) => {
            // SAFETY: NULL or writable (caller's contract).
            unsafe { write_bound(g, owneraddr_p, localaddr_p, size_p) };
            GASNET_OK
        }
        Err(e) => code(e),
    }
}

/// `gex_System_QueryJobRank`.
#[no_mangle]
pub extern "C" fn gex_System_QueryJobRank() -> gex_Rank_t {
    or_fatal(gex::system::query_job_rank())
}

/// `gex_System_QueryJobSize`.
#[no_mangle]
pub extern "C" fn gex_System_QueryJobSize() -> gex_Rank_t {
    or_fatal(gex::system::query_job_size())
}

/// `gex_System_GetVerboseErrors`.
#[no_mangle]
pub extern "C" fn gex_System_GetVerboseErrors() -> c_int {
    gex::system::get_verbose_errors() as c_int
}

/// `gex_System_SetVerboseErrors`.
#[no_mangle]
pub extern "C" fn gex_System_SetVerboseErrors(enable: c_int) {
    gex::system::set_verbose_errors(enable != 0)
}

/// `gex_System_QueryMaxThreads`.
#[no_mangle]
pub extern "C" fn gex_System_QueryMaxThreads() -> u64 {
    gex::system::query_max_threads()
}

/// `gex_System_QueryHiddenAMConcurrencyLevel`.
#[no_mangle]
pub extern "C" fn gex_System_QueryHiddenAMConcurrencyLevel() -> c_int {
    gex::system::query_hidden_am_concurrency_level()
}

fn rank_table(set: &gex::system::RankSet) -> *const gex_RankInfo_t {
    let v: Vec<gex_RankInfo_t> = set
        .members
        .iter()
        .map(|m| gex_RankInfo_t {
            gex_jobrank: m.jobrank,
        })
        .collect();
    v.leak().as_ptr()
}

/// Writes a rank table (made once per kind) to the non-NULL out-pointers.
unsafe fn rank_info(
    call: &str,
    cell: &OnceLock<(usize, u32, u32)>,
    set: impl FnOnce() -> gex::Result<gex::system::RankSet>,
    info_p: *mut *const gex_RankInfo_t,
    count_p: *mut gex_Rank_t,
    my_p: *mut gex_Rank_t,
) {
    let &(t, n, me) = cell.get_or_init(|| {
        let s = or_fatal(set());
        (rank_table(&s) as usize, s.members.len() as u32, s.my_index)
    });
    let _ = call;
    // SAFETY: NULL or writable (caller's contract).
    unsafe {
        if !info_p.is_null() {
            *info_p = t as *const gex_RankInfo_t;
        }
        if !count_p.is_null() {
            *count_p = n;
        }
        if !my_p.is_null() {
            *my_p = me;
        }
    }
}

/// `gex_System_QueryNbrhdInfo`.
#[no_mangle]
pub unsafe extern "C" fn gex_System_QueryNbrhdInfo(
    info_p: *mut *const gex_RankInfo_t,
    info_count_p: *mut gex_Rank_t,
    my_info_index_p: *mut gex_Rank_t,
) {
    static T: OnceLock<(usize, u32, u32)> = OnceLock::new();
    // SAFETY: caller's contract on the out-pointers.
    unsafe {
        rank_info(
            "gex_System_QueryNbrhdInfo",
            &T,
            gex::system::query_nbrhd_info,
            info_p,
            info_count_p,
            my_info_index_p,
        )
    }
}

/// `gex_System_QueryHostInfo`.
#[no_mangle]
pub unsafe extern "C" fn gex_System_QueryHostInfo(
    info_p: *mut *const gex_RankInfo_t,
    info_count_p: *mut gex_Rank_t,
    my_info_index_p: *mut gex_Rank_t,
) {
    static T: OnceLock<(usize, u32, u32)> = OnceLock::new();
    // SAFETY: caller's contract on the out-pointers.
    unsafe {
        rank_info(
            "gex_System_QueryHostInfo",
            &T,
            gex::system::query_host_info,
            info_p,
            info_count_p,
            my_info_index_p,
        )
    }
}

/// `gex_System_QueryMyPosition`.
#[no_mangle]
pub unsafe extern "C" fn gex_System_QueryMyPosition(
    nbrhd_set_size_p: *mut gex_Rank_t,
    nbrhd_set_rank_p: *mut gex_Rank_t,
    host_set_size_p: *mut gex_Rank_t,
    host_set_rank_p: *mut gex_Rank_t,
) {
    let p = or_fatal(gex::system::query_my_position());
    for (ptr, v) in [
        (nbrhd_set_size_p, p.nbrhd_set_size),
        (nbrhd_set_rank_p, p.nbrhd_set_rank),
        (host_set_size_p, p.host_set_size),
        (host_set_rank_p, p.host_set_rank),
    ] {
        if !ptr.is_null() {
            // SAFETY: writable (caller's contract).
            unsafe { *ptr = v as gex_Rank_t };
        }
    }
}

/// `gasnet_exit`: ends the whole job with `code` (`gex::exit`). Every C
/// stdio stream is flushed first (`fflush(NULL)`, in `gex::exit`, which
/// the fatal-error paths take too), so that a rank's last `printf` is not
/// lost; the other ranks have the exit grace (`GEX_EXIT_TIMEOUT`) to call
/// `gasnet_exit` as well and finish on their own.
#[no_mangle]
pub extern "C" fn gasnet_exit(code: c_int) -> ! {
    gex::exit(code)
}

/// `gasnet_AMPoll` (also what `GASNET_BLOCKUNTIL` polls with).
#[no_mangle]
pub extern "C" fn gasnet_AMPoll() -> c_int {
    rc(gex::poll())
}

/// One step of `GASNET_BLOCKUNTIL`: what a Rust wait does between two
/// tests of its condition (`Runtime::wait_step`: poll; if nothing
/// progressed, spin, or yield the processor once the runtime's spin limit
/// of idle steps in a row is reached, so that oversubscribed ranks
/// progress). `spins` is the idle count on the caller's stack (NULL: poll
/// only). Illegal in handler context or under an HSL. The checks are the
/// inline tests (a runtime, the thread's restriction flag); only a refusal
/// leaves the fast path.
#[no_mangle]
pub unsafe extern "C" fn _gex_BlockUntilStep(spins: *mut u32) {
    let rt = match gex_core::Runtime::get() {
        Some(rt) if gex_core::context::may_communicate() => rt,
        _ => wait_refused(),
    };
    if spins.is_null() {
        rt.progress();
        return;
    }
    // SAFETY: a counter on the caller's stack (the header's macro).
    rt.wait_step(unsafe { &mut *spins });
}

/// The end of the job for a `GASNET_BLOCKUNTIL` without a runtime or from
/// a thread that may not wait, with the checks' messages.
#[cold]
#[inline(never)]
fn wait_refused() -> ! {
    const CALL: &str = "GASNET_BLOCKUNTIL";
    or_fatal(gex_core::Runtime::require(CALL));
    or_fatal(gex_core::context::check_may_communicate(CALL));
    gex::fatal(&format!("{CALL}: refused"))
}

/// What `gasnet_getNodeInfo` and `gasnet_getMaxGlobalSegmentSize` need to
/// know of every rank: its host and neighbourhood (supernode) numbers, as
/// `gex_System_QueryMyPosition` gives them there, and its largest segment.
#[derive(Clone, Copy, Debug)]
struct NodeRec {
    host: Rank,
    nbrhd: Rank,
    max_local: u64,
}

/// [`NodeRec`] of every rank, by jobrank, gathered at `gex_Client_Init`.
static NODES: OnceLock<Vec<NodeRec>> = OnceLock::new();

/// Gathers every rank's [`NodeRec`] through the control plane: part of
/// `gex_Client_Init` (collective), since the queries that need it are
/// local and may come before any attach.
fn exchange_nodes() -> gex::Result<()> {
    const CALL: &str = "gex_Client_Init";
    let rt = gex_core::Runtime::require(CALL)?;
    let p = gex::system::query_my_position()?;
    let max_local = gex::system::max_local_segment_size()? as u64;
    let mut mine = Vec::with_capacity(16);
    mine.extend_from_slice(&p.host_set_rank.to_le_bytes());
    mine.extend_from_slice(&p.nbrhd_set_rank.to_le_bytes());
    mine.extend_from_slice(&max_local.to_le_bytes());
    let all = rt.bootstrap_exchange(&mine)?;
    let mut v = Vec::with_capacity(all.len());
    for (r, b) in all.iter().enumerate() {
        if b.len() != 16 {
            return Err(Error::resource(format!(
                "{CALL}: rank {r} sent {} bytes of node information instead of 16",
                b.len()
            )));
        }
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        v.push(NodeRec {
            host: u32_at(0),
            nbrhd: u32_at(4),
            max_local: u64::from_le_bytes(b[8..16].try_into().expect("8 bytes")),
        });
    }
    let _ = NODES.set(v);
    Ok(())
}

fn nodes(call: &str) -> &'static [NodeRec] {
    NODES.get().unwrap_or_else(|| {
        gex::fatal(&format!(
            "{call}: called before gex_Client_Init or gasnet_init"
        ))
    })
}

/// The GASNet-1 `gasnet_nodeinfo_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct gasnet_nodeinfo_t {
    pub host: u32,
    pub supernode: u32,
    pub offset: isize,
}

/// `gasnet_getNodeInfo`: entries 0 .. min(numentries, job size) - 1; the
/// offset of a rank whose segment this process maps is the local address
/// less the owner's (0 otherwise, and before attach).
#[no_mangle]
pub unsafe extern "C" fn gasnet_getNodeInfo(
    table: *mut gasnet_nodeinfo_t,
    numentries: c_int,
) -> c_int {
    const CALL: &str = "gasnet_getNodeInfo";
    let all = nodes(CALL);
    if numentries < 0 || (table.is_null() && numentries > 0) {
        return code(Error::bad_arg(format!(
            "{CALL}: a NULL table or a negative count ({numentries})"
        )));
    }
    let tm = primordial_tm().expect("set with the node table");
    // SAFETY: the primordial team's handle.
    let t = unsafe { team(tm, CALL) };
    for (r, n) in all.iter().enumerate().take(numentries as usize) {
        let offset = match t.query_bound_segment(r as Rank, Flags::IMMEDIATE) {
            Ok(Some(b)) => b
                .local_addr
                .map_or(0, |l| l.wrapping_sub(b.owner_addr) as isize),
            _ => 0,
        };
        // SAFETY: `numentries` writable entries (caller's contract).
        unsafe {
            *table.add(r) = gasnet_nodeinfo_t {
                host: n.host,
                supernode: n.nbrhd,
                offset,
            }
        };
    }
    GASNET_OK
}

/// `gasnet_getMaxGlobalSegmentSize`: the smallest of every rank's
/// `gasnet_getMaxLocalSegmentSize`.
#[no_mangle]
pub extern "C" fn gasnet_getMaxGlobalSegmentSize() -> usize {
    nodes("gasnet_getMaxGlobalSegmentSize")
        .iter()
        .map(|n| n.max_local)
        .min()
        .map_or(usize::MAX, |m| usize::try_from(m).unwrap_or(usize::MAX))
}

/// `gasnet_QueryGexObjects`: the client, endpoint, primordial team and
/// (once attached) segment behind the GASNet-1 calls; NULL pointers are
/// skipped.
#[no_mangle]
pub unsafe extern "C" fn gasnet_QueryGexObjects(
    client_p: *mut gex_Client_t,
    ep_p: *mut gex_EP_t,
    tm_p: *mut gex_TM_t,
    segment_p: *mut gex_Segment_t,
) {
    const CALL: &str = "gasnet_QueryGexObjects";
    let (Some(c), Some(tm)) = (client_handle(), primordial_tm()) else {
        gex::fatal(&format!(
            "{CALL}: called before gex_Client_Init or gasnet_init"
        ));
    };
    // SAFETY: handles of this library.
    let ep = unsafe { obj(c, CALL) }.ep;
    // SAFETY: as above.
    let seg = segment_handle_of(unsafe { obj(ep, CALL) });
    // SAFETY: each pointer is NULL or writable (caller's contract).
    unsafe {
        if !client_p.is_null() {
            *client_p = c;
        }
        if !ep_p.is_null() {
            *ep_p = ep;
        }
        if !tm_p.is_null() {
            *tm_p = tm;
        }
        if !segment_p.is_null() {
            *segment_p = seg;
        }
    }
}

/// The names and descriptions of the error codes, as C strings, from
/// `gex::ErrorKind` (GASNET_OK first).
fn error_strings() -> &'static [(c_int, CString, CString)] {
    static T: OnceLock<Vec<(c_int, CString, CString)>> = OnceLock::new();
    T.get_or_init(|| {
        let c = |s: &str| CString::new(s).expect("no NUL in the error strings");
        let mut v = vec![(GASNET_OK, c("GASNET_OK"), c("no error"))];
        v.extend(
            ErrorKind::ALL
                .iter()
                .map(|k| (k.code(), c(k.name()), c(k.description()))),
        );
        v
    })
}

/// `gasnet_ErrorName`: the macro name of a code (`"GASNET_ERR_BAD_ARG"`),
/// `"GASNET_ERR_UNKNOWN"` for a value that is none.
#[no_mangle]
pub extern "C" fn gasnet_ErrorName(errval: c_int) -> *const c_char {
    error_strings()
        .iter()
        .find(|e| e.0 == errval)
        .map_or(c"GASNET_ERR_UNKNOWN".as_ptr(), |e| e.1.as_ptr())
}

/// `gasnet_ErrorDesc`: what a code means, in a sentence.
#[no_mangle]
pub extern "C" fn gasnet_ErrorDesc(errval: c_int) -> *const c_char {
    error_strings()
        .iter()
        .find(|e| e.0 == errval)
        .map_or(c"not a GASNet error code".as_ptr(), |e| e.2.as_ptr())
}

/// `gasnet_set_waitmode`: how every wait of the process spends idle polls
/// (`gex::system::set_wait_mode`); `GASNET_ERR_BAD_ARG` for a value that
/// is not a `GASNET_WAIT_*`.
#[no_mangle]
pub extern "C" fn gasnet_set_waitmode(wait_mode: c_int) -> c_int {
    match gex::system::WaitMode::from_code(wait_mode) {
        Some(m) => {
            gex::system::set_wait_mode(m);
            GASNET_OK
        }
        None => code(Error::bad_arg(format!(
            "gasnet_set_waitmode: {wait_mode} is not GASNET_WAIT_SPIN, _BLOCK or _SPINBLOCK"
        ))),
    }
}

/// `gex_ProgressThreadInfo_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct gex_ProgressThreadInfo_t {
    pub gex_device_list: *const c_char,
    pub gex_thread_roles: c_uint,
    pub gex_progress_fn: Option<unsafe extern "C" fn(*mut c_void) -> *mut c_void>,
    pub gex_progress_arg: *mut c_void,
}

/// `gex_System_QueryProgressThreads`: gex runs no progress threads, so a
/// client initialised with `GEX_FLAG_DEFER_THREADS` has none to start
/// (`*count_p` 0, `*info_p` NULL); without the flag the call is erroneous
/// (`GASNET_ERR_RESOURCE`, as the spec says).
#[no_mangle]
pub unsafe extern "C" fn gex_System_QueryProgressThreads(
    client: gex_Client_t,
    count_p: *mut c_uint,
    info_p: *mut *const gex_ProgressThreadInfo_t,
    flags: gex_Flags_t,
) -> c_int {
    const CALL: &str = "gex_System_QueryProgressThreads";
    // SAFETY: a handle of this library.
    let c = unsafe { obj(client, CALL) };
    if count_p.is_null() || info_p.is_null() || flags != 0 {
        return code(Error::bad_arg(format!(
            "{CALL}: count_p and info_p must not be NULL, and flags must be 0 (got {flags:#x})"
        )));
    }
    if !c.client.flags().contains(Flags::DEFER_THREADS) {
        return code(Error::resource(format!(
            "{CALL}: the client was not initialised with GEX_FLAG_DEFER_THREADS"
        )));
    }
    // SAFETY: checked non-NULL; writable (caller's contract).
    unsafe {
        *count_p = 0;
        *info_p = std::ptr::null();
    }
    GASNET_OK
}

/// The rank `AMUDP_SPMDSetProc` asked for (-1: none).
static SPMD_PROC: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(-1);

/// `AMUDP_SPMDSetProc` (the reference's udp conduit, declared by
/// `gasnetex.h` for udp builds): the rank this process expects, checked at
/// init. gex numbers a job started by mpirun by its PMIx ranks, which are
/// its MPI ranks, so a program that passes its MPI rank gets it.
#[no_mangle]
pub extern "C" fn AMUDP_SPMDSetProc(proc_: c_int) {
    if proc_ < 0 {
        gex::fatal(&format!("AMUDP_SPMDSetProc: rank {proc_} is negative"));
    }
    SPMD_PROC.store(i64::from(proc_), std::sync::atomic::Ordering::Relaxed);
}
