//! gex's internal diagnostics for C clients: `gasnett_diagnostic_gethandlers`
//! and `gasnett_run_diagnostics`, the pair GASNet-EX's `testinternal` calls.
//!
//! The client registers the handler table [`gasnett_diagnostic_gethandlers`]
//! returns on its primordial endpoint, then every rank calls
//! [`gasnett_run_diagnostics`] collectively. Each rank talks only to the
//! `peer` it names (the test passes its successor) and writes only into the
//! first [`REGION`] bytes of the peer's segment, so with every rank naming
//! its successor each segment has one writer. The checks go through the
//! same C entry points a client uses:
//!
//! - `A`: Short request/reply round trips, every argument checked at both ends;
//! - `B`: Medium requests of seeded lengths and contents, checked by the
//!   handler and echoed back in a Medium reply checked by the sender;
//! - `C`: Long requests into the peer's segment, the handler checking the
//!   bytes at its landing address;
//! - `D`: blocking puts and gets of seeded ranges of the peer's segment;
//! - `E`: non-blocking puts (explicit events and NBI) then gets, checked;
//! - `F`: `threads` threads contending on one lock and one counter, and the
//!   timer read by all of them never going backwards.
//!
//! `sections` (letters, case-insensitive; NULL or empty for all) picks which
//! run. The result is the number of errors found on this rank (each is
//! printed to stderr naming the section).

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

use crate::am::{_gex_AM_ReplyMedium, _gex_AM_ReplyShort, gex_Token_Info, gex_Token_t};
use crate::types::*;
use gex::am::AmRequest as _;

/// Bytes of each segment the diagnostics write (the test suite's segments
/// are at least 64 KiB).
pub const REGION: usize = 64 * 1024;

/// The handler indices of the table (the top of the client's range).
const H_SHORT_REQ: gex_AM_Index_t = 250;
const H_SHORT_REP: gex_AM_Index_t = 251;
const H_MED_REQ: gex_AM_Index_t = 252;
const H_MED_REP: gex_AM_Index_t = 253;
const H_LONG_REQ: gex_AM_Index_t = 254;
const H_LONG_REP: gex_AM_Index_t = 255;

/// Errors the handlers found (added to the rank's result).
static HANDLER_ERRORS: AtomicU32 = AtomicU32::new(0);
/// Replies received, by kind (short, medium, long).
static REPLIES: [AtomicU64; 3] = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];
/// The Medium reply's bytes, checked by the sender after it arrives.
static ECHO: Mutex<Vec<u8>> = Mutex::new(Vec::new());

/// The seeded byte pattern of a payload: `len` bytes from `seed`.
fn pattern(seed: u32, len: usize) -> Vec<u8> {
    let mut x = u64::from(seed) | 1 << 40;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// A small seeded generator for lengths and offsets.
struct Rng(u64);
impl Rng {
    fn new(seed: u32, rank: u32) -> Self {
        Rng(u64::from(seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ u64::from(rank) ^ 0x5bd1_e995)
    }
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 17
    }
    /// A value in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() as usize) % (hi - lo + 1)
    }
}

fn handler_error(what: &str) {
    eprintln!("ERROR: gex diagnostics: handler: {what}");
    HANDLER_ERRORS.fetch_add(1, Ordering::Relaxed);
}

/// The sending rank of a running handler's token.
///
/// # Safety
/// `token` is the token of a running handler.
unsafe fn src_of(token: gex_Token_t) -> u32 {
    let mut info = gex_Token_Info_t {
        gex_srcrank: u32::MAX,
        gex_ep: std::ptr::null(),
        gex_entry: std::ptr::null(),
        gex_is_req: 0,
        gex_is_long: 0,
    };
    // SAFETY: a running handler's token and a writable info record.
    unsafe { gex_Token_Info(token, &mut info, GEX_TI_SRCRANK) };
    info.gex_srcrank
}

const GEX_TI_SRCRANK: gex_TI_t = 1;
const GEX_FLAG_AM_SHORT: gex_Flags_t = 1 << 32;
const GEX_FLAG_AM_MEDIUM: gex_Flags_t = 1 << 33;
const GEX_FLAG_AM_LONG: gex_Flags_t = 1 << 34;
const GEX_FLAG_AM_REQUEST: gex_Flags_t = 1 << 35;
const GEX_FLAG_AM_REPLY: gex_Flags_t = 1 << 36;
const GEX_EC_ALL: gex_EC_t = 0x1f;
/// `GEX_EVENT_NOW` and `GEX_EVENT_DEFER` as the C header spells them.
const EVENT_NOW: *mut gex_Event_t = std::ptr::without_provenance_mut(1);
const EVENT_DEFER: *mut gex_Event_t = std::ptr::without_provenance_mut(2);

/// Short request: (seq, !seq, sender); replies (seq + 1, sender).
unsafe extern "C" fn short_req(token: gex_Token_t, seq: i32, inv: i32, sender: i32) {
    // SAFETY: the token of this running handler.
    let src = unsafe { src_of(token) };
    let ok = inv == !seq && src == sender as u32;
    if !ok {
        handler_error(&format!(
            "short request args ({seq}, {inv}, {sender}) from rank {src}"
        ));
    }
    // A bad request is answered with its own number, which the sender's
    // reply handler counts as an error on the sending rank too.
    let a = [if ok { seq.wrapping_add(1) } else { seq }, sender];
    // SAFETY: this handler's token, two arguments.
    unsafe { _gex_AM_ReplyShort(token, H_SHORT_REP, 0, 2, a.as_ptr()) };
}

/// Short reply: counts it (the sender checks the sequence number).
unsafe extern "C" fn short_rep(_token: gex_Token_t, seq: i32, sender: i32) {
    let _ = sender;
    let n = REPLIES[0].fetch_add(1, Ordering::AcqRel);
    if seq as u64 != n + 1 {
        handler_error(&format!("short reply {seq}, expected {}", n + 1));
    }
}

/// Medium request: (seed, len); checks the payload, echoes it back.
unsafe extern "C" fn med_req(
    token: gex_Token_t,
    buf: *mut c_void,
    nbytes: usize,
    seed: i32,
    len: i32,
) {
    // SAFETY: the conduit's payload buffer of `nbytes` bytes.
    let got = unsafe { bytes(buf, nbytes) };
    if len as usize != nbytes || got != pattern(seed as u32, nbytes).as_slice() {
        handler_error(&format!(
            "medium payload of {nbytes} bytes (seed {seed}, len {len})"
        ));
    }
    let a = [seed, len];
    // SAFETY: this handler's token; the payload is read before the call returns.
    unsafe { _gex_AM_ReplyMedium(token, H_MED_REP, buf, nbytes, EVENT_NOW, 0, 2, a.as_ptr()) };
}

/// Medium reply: keeps the echoed bytes for the sender to check.
unsafe extern "C" fn med_rep(
    _token: gex_Token_t,
    buf: *mut c_void,
    nbytes: usize,
    _seed: i32,
    _len: i32,
) {
    // SAFETY: the conduit's payload buffer of `nbytes` bytes.
    let got = unsafe { bytes(buf, nbytes) };
    *ECHO.lock().unwrap_or_else(|e| e.into_inner()) = got.to_vec();
    REPLIES[1].fetch_add(1, Ordering::AcqRel);
}

/// Long request: (seed, len); checks the bytes at the landing address.
unsafe extern "C" fn long_req(
    token: gex_Token_t,
    buf: *mut c_void,
    nbytes: usize,
    seed: i32,
    len: i32,
) {
    // SAFETY: the Long's landing range in this rank's segment.
    let got = unsafe { bytes(buf, nbytes) };
    let ok = len as usize == nbytes && got == pattern(seed as u32, nbytes).as_slice();
    if !ok {
        handler_error(&format!(
            "long payload of {nbytes} bytes (seed {seed}, len {len})"
        ));
    }
    let a = [i32::from(ok), seed];
    // SAFETY: this handler's token, two arguments.
    unsafe { _gex_AM_ReplyShort(token, H_LONG_REP, 0, 2, a.as_ptr()) };
}

/// Long's reply: counts it.
unsafe extern "C" fn long_rep(_token: gex_Token_t, ok: i32, seed: i32) {
    if ok != 1 {
        handler_error(&format!("the peer found a bad long payload (seed {seed})"));
    }
    REPLIES[2].fetch_add(1, Ordering::AcqRel);
}

/// Erases a handler's type for the table (the entry's flags and argument
/// count say how the dispatcher calls it).
macro_rules! fnptr {
    ($f:expr) => {
        // SAFETY: a function pointer cast to the table's generic type; the
        // dispatcher calls it with the signature its entry describes.
        Some(unsafe { std::mem::transmute::<*const (), unsafe extern "C" fn()>($f as *const ()) })
    };
}

struct Table([gex_AM_Entry_t; 6]);
// SAFETY: the table is immutable after construction; its pointers are to
// functions and static strings.
unsafe impl Sync for Table {}
// SAFETY: as for Sync.
unsafe impl Send for Table {}

static TABLE: std::sync::OnceLock<Table> = std::sync::OnceLock::new();

const SHORT_REQ: gex_Flags_t = GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST;
const SHORT_REP: gex_Flags_t = GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REPLY;
const MED_REQ: gex_Flags_t = GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REQUEST;
const MED_REP: gex_Flags_t = GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REPLY;
const LONG_REQ: gex_Flags_t = GEX_FLAG_AM_LONG | GEX_FLAG_AM_REQUEST;
const LONG_REP: gex_Flags_t = GEX_FLAG_AM_LONG | GEX_FLAG_AM_REPLY;

fn table() -> &'static Table {
    TABLE.get_or_init(|| {
        let e = |index, f: gex_AM_Fn_t, flags, nargs, name: &'static CStr| gex_AM_Entry_t {
            gex_index: index,
            gex_fnptr: f,
            gex_flags: flags,
            gex_nargs: nargs,
            gex_cdata: std::ptr::null(),
            gex_name: name.as_ptr(),
        };
        let _ = (LONG_REP, MED_REP);
        Table([
            e(
                H_SHORT_REQ,
                fnptr!(short_req),
                SHORT_REQ,
                3,
                c"gex_diag_short_req",
            ),
            e(
                H_SHORT_REP,
                fnptr!(short_rep),
                SHORT_REP,
                2,
                c"gex_diag_short_rep",
            ),
            e(
                H_MED_REQ,
                fnptr!(med_req),
                MED_REQ,
                2,
                c"gex_diag_medium_req",
            ),
            e(
                H_MED_REP,
                fnptr!(med_rep),
                MED_REP,
                2,
                c"gex_diag_medium_rep",
            ),
            e(
                H_LONG_REQ,
                fnptr!(long_req),
                LONG_REQ,
                2,
                c"gex_diag_long_req",
            ),
            e(
                H_LONG_REP,
                fnptr!(long_rep),
                SHORT_REP,
                2,
                c"gex_diag_long_rep",
            ),
        ])
    })
}

/// `gasnett_diagnostic_gethandlers`: the handler table the diagnostics
/// need, for the client to register on its primordial endpoint before
/// calling [`gasnett_run_diagnostics`]. It uses indices 250-255.
#[no_mangle]
pub unsafe extern "C" fn gasnett_diagnostic_gethandlers(
    table_out: *mut *mut gex_AM_Entry_t,
    cnt_out: *mut c_int,
) {
    if table_out.is_null() || cnt_out.is_null() {
        gex::fatal("gasnett_diagnostic_gethandlers: NULL output pointer");
    }
    let t = table();
    // SAFETY: both outputs are writable (checked non-NULL; caller's
    // contract). The table is never written through the pointer by the
    // registration call, which only reads entries (the spec lets it write
    // gex_index for DONTCARE entries, which these are not).
    unsafe {
        *table_out = t.0.as_ptr().cast_mut();
        *cnt_out = t.0.len() as c_int;
    }
}

/// One section's error reporter.
struct Errs<'a> {
    section: char,
    me: u32,
    count: &'a mut c_int,
}
impl<'a> Errs<'a> {
    fn new(section: char, me: u32, count: &'a mut c_int) -> Self {
        Errs { section, me, count }
    }
    fn err(&mut self, what: String) {
        eprintln!(
            "ERROR: gex diagnostics section {} on rank {}: {what}",
            self.section, self.me
        );
        *self.count += 1;
    }
}

/// Waits for `REPLIES[kind]` to reach `n`, polling; a bounded wait.
fn wait_replies(kind: usize, n: u64, e: &mut Errs<'_>) -> bool {
    match gex::block_until(|| REPLIES[kind].load(Ordering::Acquire) >= n) {
        Ok(()) => true,
        Err(err) => {
            e.err(format!("waiting for reply {n}: {err}"));
            false
        }
    }
}

/// `gasnett_run_diagnostics`: runs the sections `sections` names (all when
/// NULL or empty) `iters` times each against `peer`, whose segment starts at
/// `peerseg` (this rank's at `myseg`); `threads` threads in section F;
/// `seed` seeds the lengths, offsets and contents. Collective over `tm`
/// (every rank calls it; each waits only for its own peer's replies, so no
/// rank needs another to finish first). Returns the number of errors found.
#[no_mangle]
pub unsafe extern "C" fn gasnett_run_diagnostics(
    iters: c_int,
    threads: c_int,
    sections: *const c_char,
    tm: gex_TM_t,
    myseg: *mut c_void,
    peer: gex_Rank_t,
    peerseg: *mut c_void,
    seed: c_uint,
) -> c_int {
    const CALL: &str = "gasnett_run_diagnostics";
    // SAFETY: a team handle from this library (checked by `team`).
    let t = unsafe { team(tm, CALL) };
    let me = t.rank();
    if peer >= t.size() {
        gex::fatal(&format!(
            "{CALL}: peer {peer} is not a rank of a team of {}",
            t.size()
        ));
    }
    if myseg.is_null() || peerseg.is_null() {
        gex::fatal(&format!("{CALL}: NULL segment address"));
    }
    let sel: String = if sections.is_null() {
        String::new()
    } else {
        // SAFETY: a C string (caller's contract).
        unsafe { CStr::from_ptr(sections) }
            .to_string_lossy()
            .to_uppercase()
    };
    let on = |s: char| sel.is_empty() || sel.contains(s);
    let iters = iters.clamp(1, 1_000_000) as usize;
    let threads = threads.clamp(1, 64) as usize;
    let mut errors: c_int = 0;
    let start_handler_errors = HANDLER_ERRORS.load(Ordering::Relaxed);
    let mut rng = Rng::new(seed, me);
    let peerseg = peerseg as usize;

    if on('A') {
        let mut e = Errs::new('A', me, &mut errors);
        let base = REPLIES[0].load(Ordering::Acquire);
        for i in 0..iters {
            let seq = (base + i as u64) as i32;
            let a = [seq, !seq, me as i32];
            // SAFETY: a team handle, three arguments.
            unsafe { crate::am::_gex_AM_RequestShort(tm, peer, H_SHORT_REQ, 0, 3, a.as_ptr()) };
            if !wait_replies(0, base + i as u64 + 1, &mut e) {
                break;
            }
        }
    }

    if on('B') {
        let mut e = Errs::new('B', me, &mut errors);
        let max = t
            .max_request_medium(peer, gex::am::LcOpt::Now, gex::Flags::empty(), 2)
            .unwrap_or(512)
            .min(4096);
        let base = REPLIES[1].load(Ordering::Acquire);
        for i in 0..iters {
            let len = rng.range(0, max);
            let s = rng.next() as u32;
            let data = pattern(s, len);
            let a = [s as i32, len as i32];
            // SAFETY: a team handle; `data` is readable for `len` bytes and
            // GEX_EVENT_NOW makes it reusable on return.
            unsafe {
                crate::am::_gex_AM_RequestMedium(
                    tm,
                    peer,
                    H_MED_REQ,
                    data.as_ptr().cast(),
                    len,
                    EVENT_NOW,
                    0,
                    2,
                    a.as_ptr(),
                )
            };
            if !wait_replies(1, base + i as u64 + 1, &mut e) {
                break;
            }
            let echo = std::mem::take(&mut *ECHO.lock().unwrap_or_else(|p| p.into_inner()));
            if echo != data {
                e.err(format!(
                    "medium echo of {len} bytes came back as {} different bytes",
                    echo.len()
                ));
            }
        }
    }

    if on('C') {
        let mut e = Errs::new('C', me, &mut errors);
        let max = t
            .max_request_long(peer, gex::am::LcOpt::Now, gex::Flags::empty(), 2)
            .unwrap_or(REGION)
            .min(REGION);
        let base = REPLIES[2].load(Ordering::Acquire);
        for i in 0..iters {
            let len = rng.range(1, max.min(8192));
            let off = rng.range(0, REGION - len);
            let s = rng.next() as u32;
            let data = pattern(s, len);
            let a = [s as i32, len as i32];
            // SAFETY: a team handle; the payload is readable; the landing
            // range is inside the peer's first REGION bytes of segment.
            unsafe {
                crate::am::_gex_AM_RequestLong(
                    tm,
                    peer,
                    H_LONG_REQ,
                    data.as_ptr().cast(),
                    len,
                    (peerseg + off) as *mut c_void,
                    EVENT_NOW,
                    0,
                    2,
                    a.as_ptr(),
                )
            };
            if !wait_replies(2, base + i as u64 + 1, &mut e) {
                break;
            }
        }
    }

    if on('D') {
        let mut e = Errs::new('D', me, &mut errors);
        for _ in 0..iters {
            let len = rng.range(1, 4096);
            let off = rng.range(0, REGION - len);
            let data = pattern(rng.next() as u32, len);
            let mut back = vec![0u8; len];
            let dest = (peerseg + off) as *mut c_void;
            // SAFETY: a team handle; the remote range is in the peer's
            // segment; the local buffers are `len` bytes.
            unsafe {
                crate::rma::gex_RMA_PutBlocking(tm, peer, dest, data.as_ptr().cast(), len, 0);
                crate::rma::gex_RMA_GetBlocking(tm, back.as_mut_ptr().cast(), peer, dest, len, 0);
            }
            if back != data {
                e.err(format!(
                    "put then get of {len} bytes at offset {off} differ"
                ));
            }
        }
    }

    if on('E') {
        let mut e = Errs::new('E', me, &mut errors);
        let rounds = iters.div_ceil(16);
        for r in 0..rounds {
            let n = 16usize;
            let len = REGION / n;
            let bufs: Vec<Vec<u8>> = (0..n).map(|_| pattern(rng.next() as u32, len)).collect();
            let nbi = r % 2 == 1;
            let mut events = Vec::new();
            for (k, b) in bufs.iter().enumerate() {
                let dest = (peerseg + k * len) as *mut c_void;
                // SAFETY: a team handle; the range is the k-th slice of the
                // peer's REGION; the source lives until the sync below
                // (GEX_EVENT_DEFER keeps it borrowed until then).
                unsafe {
                    if nbi {
                        crate::rma::gex_RMA_PutNBI(
                            tm,
                            peer,
                            dest,
                            b.as_ptr().cast(),
                            len,
                            EVENT_DEFER,
                            0,
                        );
                    } else {
                        events.push(crate::rma::gex_RMA_PutNB(
                            tm,
                            peer,
                            dest,
                            b.as_ptr().cast(),
                            len,
                            EVENT_DEFER,
                            0,
                        ));
                    }
                }
            }
            // SAFETY: events from the calls above, each synced once.
            unsafe {
                if nbi {
                    crate::rma::gex_NBI_Wait(GEX_EC_ALL, 0);
                } else {
                    crate::rma::gex_Event_WaitAll(events.as_mut_ptr(), events.len(), 0);
                }
            }
            let mut back = vec![0u8; REGION];
            // SAFETY: the peer's REGION, read into a REGION-byte buffer.
            unsafe {
                crate::rma::gex_RMA_GetBlocking(
                    tm,
                    back.as_mut_ptr().cast(),
                    peer,
                    peerseg as *mut c_void,
                    REGION,
                    0,
                )
            };
            for (k, b) in bufs.iter().enumerate() {
                if &back[k * len..(k + 1) * len] != b.as_slice() {
                    e.err(format!(
                        "{} put {k} of {len} bytes reads back different",
                        if nbi { "NBI" } else { "NB" }
                    ));
                }
            }
        }
    }

    if on('F') {
        let mut e = Errs::new('F', me, &mut errors);
        let lock = Mutex::new(0u64);
        let counter = AtomicU64::new(0);
        let backwards = AtomicU32::new(0);
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    let mut last = gex_tools::sys::gasnett_ticks_now();
                    for _ in 0..iters {
                        *lock.lock().unwrap_or_else(|p| p.into_inner()) += 1;
                        counter.fetch_add(1, Ordering::Relaxed);
                        let now = gex_tools::sys::gasnett_ticks_now();
                        if now < last {
                            backwards.fetch_add(1, Ordering::Relaxed);
                        }
                        last = now;
                    }
                });
            }
        });
        let want = (threads * iters) as u64;
        let locked = *lock.lock().unwrap_or_else(|p| p.into_inner());
        if locked != want || counter.load(Ordering::Relaxed) != want {
            e.err(format!("{threads} threads counted {locked} under the lock and {} atomically, expected {want}", counter.load(Ordering::Relaxed)));
        }
        if backwards.load(Ordering::Relaxed) != 0 {
            e.err(format!(
                "the timer went backwards {} times",
                backwards.load(Ordering::Relaxed)
            ));
        }
    }
    let _ = myseg;
    errors + (HANDLER_ERRORS.load(Ordering::Relaxed) - start_handler_errors) as c_int
}
