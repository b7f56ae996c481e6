//! Finding the rendezvous through PMIx, for jobs started by a PMIx server
//! (Open MPI's `mpirun`, Slurm's `srun --mpi=pmix`, PRRTE's `prterun`)
//! without `GEX_RENDEZVOUS`.
//!
//! The PMIx client library (`libpmix.so.2`) is loaded at run time with
//! `dlopen`, so gex neither needs it to build nor to run elsewhere; only
//! the few calls and structures used here are declared, after PMIx 4's
//! `pmix_common.h` (their layout is the same since PMIx 2; a test checks
//! it against the installed header when there is one).
//!
//! How the ranks meet ([`meet`]):
//!
//! 1. Every rank calls `PMIx_Init`, which gives its rank and namespace, and
//!    reads the job size (`pmix.job.size`) and the number of its ranks on
//!    this node (`pmix.local.size`).
//! 2. Rank 0 binds the rendezvous's TCP listener on port 0, at 127.0.0.1
//!    when the whole job is on its node, else at its first non-loopback
//!    IPv4 address, makes the job key (or takes `GEX_JOB_KEY`), and puts
//!    `IP:PORT` and the key into the PMIx store (`PMIx_Put`, `PMIx_Commit`).
//! 3. Every rank calls `PMIx_Fence` with data collection; then ranks 1..
//!    `PMIx_Get` rank 0's two values.
//! 4. Every rank calls `PMIx_Finalize`: the rest of the job (the control
//!    plane, the exit rules) is the rendezvous's as with `GEX_RENDEZVOUS`,
//!    and the rendezvous only accepts connections that present the key.
//!
//! The key thus never appears in an environment or on a command line; the
//! PMIx server holds it for the job's processes (its store belongs to the
//! user who started the job). Everything PMIx returns is checked before
//! use: types, lengths (strings are read with a bound), the rank against
//! the size, the address and the key's characters.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use gex_types::Rank;

use super::env_var;

/// `PMIX_MAX_NSLEN + 1`.
const NSPACE_LEN: usize = 256;
/// `PMIX_MAX_KEYLEN + 1`.
const KEY_LEN: usize = 512;

/// `pmix_proc_t`.
#[repr(C)]
#[derive(Clone, Copy)]
struct Proc {
    nspace: [c_char; NSPACE_LEN],
    rank: u32,
}

/// The members of `pmix_value_t`'s data union used here; `_size` gives the
/// union its size in C (its largest member, `pmix_envar_t`, is two
/// pointers and a char: 24 bytes, aligned to 8).
#[repr(C)]
#[derive(Clone, Copy)]
union Data {
    flag: bool,
    string: *mut c_char,
    integer: c_int,
    uint: std::ffi::c_uint,
    uint16: u16,
    uint32: u32,
    uint64: u64,
    size: usize,
    _size: [u64; 3],
}

/// `pmix_value_t`.
#[repr(C)]
struct Value {
    kind: u16,
    data: Data,
}

/// `pmix_info_t`.
#[repr(C)]
struct Info {
    key: [c_char; KEY_LEN],
    flags: u32,
    value: Value,
}

type Status = c_int;
const SUCCESS: Status = 0;

// pmix_data_type_t values.
const T_BOOL: u16 = 1;
const T_STRING: u16 = 3;
const T_SIZE: u16 = 4;
const T_INT: u16 = 6;
const T_UINT: u16 = 11;
const T_UINT16: u16 = 13;
const T_UINT32: u16 = 14;
const T_UINT64: u16 = 15;

/// `PMIX_GLOBAL`: share with every process of the job, on any node.
const SCOPE_GLOBAL: u8 = 3;
/// `PMIX_RANK_WILDCARD`: the job as a whole.
const RANK_WILDCARD: u32 = u32::MAX - 1;

const KEY_JOB_SIZE: &CStr = c"pmix.job.size";
const KEY_LOCAL_SIZE: &CStr = c"pmix.local.size";
const KEY_COLLECT_DATA: &CStr = c"pmix.collect";
const KEY_TIMEOUT: &CStr = c"pmix.timeout";
const KEY_OPTIONAL: &CStr = c"pmix.optional";
/// What rank 0 publishes: the rendezvous's `IP:PORT`, and the job key.
const KEY_RENDEZVOUS: &CStr = c"gex.rendezvous";
const KEY_JOB_KEY: &CStr = c"gex.job_key";

/// Longest address string accepted from PMIx.
const MAX_ADDR: usize = 64;
/// Longest job key accepted from PMIx.
const MAX_KEY: usize = 1024;

type InitFn = unsafe extern "C" fn(*mut Proc, *mut Info, usize) -> Status;
type FinalizeFn = unsafe extern "C" fn(*const Info, usize) -> Status;
type PutFn = unsafe extern "C" fn(u8, *const c_char, *mut Value) -> Status;
type CommitFn = unsafe extern "C" fn() -> Status;
type FenceFn = unsafe extern "C" fn(*const Proc, usize, *const Info, usize) -> Status;
type GetFn =
    unsafe extern "C" fn(*const Proc, *const c_char, *const Info, usize, *mut *mut Value) -> Status;
type ErrorStringFn = unsafe extern "C" fn(Status) -> *const c_char;
type ValueDestructFn = unsafe extern "C" fn(*mut Value);

/// The PMIx client calls used here, from the loaded library.
struct Api {
    init: InitFn,
    finalize: FinalizeFn,
    put: PutFn,
    commit: CommitFn,
    fence: FenceFn,
    get: GetFn,
    error_string: ErrorStringFn,
    /// `PMIx_Value_destruct` (exported since PMIx 4; before, a macro).
    value_destruct: Option<ValueDestructFn>,
}

/// The library names tried, in order.
const LIBRARIES: [&CStr; 2] = [c"libpmix.so.2", c"libpmix.so"];

/// Loads the PMIx client library once (it stays loaded: its progress
/// thread and exit handlers may outlive the session).
fn api() -> std::result::Result<&'static Api, String> {
    static API: OnceLock<std::result::Result<Api, String>> = OnceLock::new();
    API.get_or_init(load).as_ref().map_err(Clone::clone)
}

fn load() -> std::result::Result<Api, String> {
    let mut handle: *mut c_void = std::ptr::null_mut();
    for name in LIBRARIES {
        // SAFETY: `name` is a NUL-terminated string; dlopen runs the
        // library's initialisers, which PMIx keeps free of side effects
        // beyond its own state.
        handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        if !handle.is_null() {
            break;
        }
    }
    if handle.is_null() {
        return Err("cannot load the PMIx library (libpmix.so.2 or libpmix.so)".into());
    }
    let sym = |name: &CStr| -> *mut c_void {
        // SAFETY: `handle` is a live handle from dlopen (never closed) and
        // `name` is NUL-terminated.
        unsafe { libc::dlsym(handle, name.as_ptr()) }
    };
    let need = |name: &CStr| -> std::result::Result<*mut c_void, String> {
        let p = sym(name);
        if p.is_null() {
            Err(format!(
                "the PMIx library has no {}",
                name.to_string_lossy()
            ))
        } else {
            Ok(p)
        }
    };
    // SAFETY (each transmute below): the symbol is the PMIx function of
    // that name, whose C prototype in pmix.h matches the Rust type it is
    // turned into (pointer and integer arguments of the same widths).
    unsafe {
        Ok(Api {
            init: std::mem::transmute::<*mut c_void, InitFn>(need(c"PMIx_Init")?),
            finalize: std::mem::transmute::<*mut c_void, FinalizeFn>(need(c"PMIx_Finalize")?),
            put: std::mem::transmute::<*mut c_void, PutFn>(need(c"PMIx_Put")?),
            commit: std::mem::transmute::<*mut c_void, CommitFn>(need(c"PMIx_Commit")?),
            fence: std::mem::transmute::<*mut c_void, FenceFn>(need(c"PMIx_Fence")?),
            get: std::mem::transmute::<*mut c_void, GetFn>(need(c"PMIx_Get")?),
            error_string: std::mem::transmute::<*mut c_void, ErrorStringFn>(need(
                c"PMIx_Error_string",
            )?),
            value_destruct: {
                let p = sym(c"PMIx_Value_destruct");
                (!p.is_null()).then(|| std::mem::transmute::<*mut c_void, ValueDestructFn>(p))
            },
        })
    }
}

impl Api {
    /// The name of a PMIx status, for messages.
    fn describe(&self, status: Status) -> String {
        // SAFETY: PMIx_Error_string takes any status and returns a static
        // string or NULL.
        let p = unsafe { (self.error_string)(status) };
        match bounded_str(p, 128) {
            Some(s) => format!("{s} ({status})"),
            None => format!("status {status}"),
        }
    }

    fn check(&self, what: &str, status: Status) -> std::result::Result<(), String> {
        if status == SUCCESS {
            Ok(())
        } else {
            Err(format!("{what} failed: {}", self.describe(status)))
        }
    }

    /// `PMIx_Get` of `key` for `proc`, turned into an owned [`Got`] (the
    /// value PMIx allocated is released here).
    fn get(&self, proc: &Proc, key: &CStr, info: &[Info]) -> std::result::Result<Got, String> {
        let mut out: *mut Value = std::ptr::null_mut();
        // SAFETY: `proc` and `key` are valid for the call, `info` is a
        // slice of initialised pmix_info_t; PMIx stores a pointer to a
        // value it allocated (or nothing) in `out`.
        let status = unsafe {
            (self.get)(
                proc,
                key.as_ptr(),
                if info.is_empty() {
                    std::ptr::null()
                } else {
                    info.as_ptr()
                },
                info.len(),
                &mut out,
            )
        };
        let what = format!("PMIx_Get({}, rank {})", key.to_string_lossy(), proc.rank);
        self.check(&what, status)?;
        if out.is_null() {
            return Err(format!("{what} returned no value"));
        }
        // SAFETY: PMIx returned success and a non-null pointer to a value
        // it allocated with malloc; it is read once here and released by
        // `release`.
        let got = unsafe { Got::read(&*out) };
        // SAFETY: as above; `out` is not used afterwards.
        unsafe { self.release(out) };
        Ok(got)
    }

    /// Frees a value `PMIx_Get` returned (PMIX_VALUE_RELEASE).
    ///
    /// # Safety
    ///
    /// `v` came from a successful `PMIx_Get` and is not used afterwards.
    unsafe fn release(&self, v: *mut Value) {
        match self.value_destruct {
            Some(destruct) => destruct(v),
            // Before PMIx 4 the destructor is a macro: free a string's
            // storage by hand (the only pointer type read here; other
            // pointer types leak a few bytes, once).
            None => {
                if (*v).kind == T_STRING && !(*v).data.string.is_null() {
                    libc::free((*v).data.string.cast());
                }
            }
        }
        libc::free(v.cast());
    }
}

/// A value PMIx returned, copied out of PMIx's memory.
#[derive(Debug, PartialEq, Eq)]
enum Got {
    Number(u64),
    Text(Option<String>),
    Other(u16),
}

impl Got {
    /// # Safety
    ///
    /// `v` is a value PMIx initialised: its type tag says which member of
    /// the union is set, and a string member is NULL or NUL-terminated.
    unsafe fn read(v: &Value) -> Got {
        match v.kind {
            T_UINT32 => Got::Number(u64::from(v.data.uint32)),
            T_UINT16 => Got::Number(u64::from(v.data.uint16)),
            T_UINT64 => Got::Number(v.data.uint64),
            T_SIZE => Got::Number(v.data.size as u64),
            T_UINT => Got::Number(u64::from(v.data.uint)),
            T_INT => u64::try_from(v.data.integer).map_or(Got::Other(T_INT), Got::Number),
            T_STRING => Got::Text(bounded_str(v.data.string, MAX_KEY + 1)),
            other => Got::Other(other),
        }
    }
}

/// A C string of at most `max` bytes as text, or `None` (NULL, longer,
/// not UTF-8).
fn bounded_str(p: *const c_char, max: usize) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` is non-null and (by the caller's contract with PMIx)
    // NUL-terminated; strnlen reads no further than the NUL or `max`.
    let len = unsafe { libc::strnlen(p, max) };
    if len >= max {
        return None;
    }
    // SAFETY: the `len` bytes before the NUL are readable (just scanned).
    let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
    std::str::from_utf8(bytes).ok().map(str::to_owned)
}

/// A `pmix_info_t` with a boolean or integer value.
fn info(key: &CStr, kind: u16, data: Data) -> Info {
    let mut i = Info {
        key: [0; KEY_LEN],
        flags: 0,
        value: Value { kind, data },
    };
    for (d, s) in i.key.iter_mut().zip(key.to_bytes()) {
        *d = *s as c_char;
    }
    i
}

/// Whether a PMIx server started this process: its namespace, rank and
/// server address are in the environment.
pub(crate) fn started_by_pmix() -> bool {
    env_var("PMIX_NAMESPACE").is_some()
        && env_var("PMIX_RANK").is_some()
        && std::env::vars_os().any(|(k, _)| k.to_string_lossy().starts_with("PMIX_SERVER_URI"))
}

/// An open PMIx session.
struct Session {
    api: &'static Api,
    me: Proc,
    rank: Rank,
    size: Rank,
    /// Ranks of the job on this node (`pmix.local.size`), if PMIx said.
    local: Option<u64>,
}

enum State {
    Closed,
    Open(Box<Session>),
    /// Finalized: PMIx cannot be initialised again.
    Done,
}

static STATE: Mutex<State> = Mutex::new(State::Closed);

/// The job as PMIx describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Job {
    pub rank: Rank,
    pub size: Rank,
}

fn open() -> std::result::Result<Session, String> {
    let api = api()?;
    let mut me = Proc {
        nspace: [0; NSPACE_LEN],
        rank: 0,
    };
    // SAFETY: `me` is a writable pmix_proc_t; no info is passed.
    let status = unsafe { (api.init)(&mut me, std::ptr::null_mut(), 0) };
    api.check("PMIx_Init", status)?;
    // Whatever PMIx wrote, the namespace ends within its array.
    me.nspace[NSPACE_LEN - 1] = 0;
    let job = Proc {
        nspace: me.nspace,
        rank: RANK_WILDCARD,
    };
    let size = match api.get(&job, KEY_JOB_SIZE, &[]) {
        Ok(Got::Number(n)) => n,
        Ok(other) => {
            let _ = finalize(api);
            return Err(format!("PMIx gave a job size of {other:?}"));
        }
        Err(e) => {
            let _ = finalize(api);
            return Err(e);
        }
    };
    let local = match api.get(&job, KEY_LOCAL_SIZE, &[]) {
        Ok(Got::Number(n)) => Some(n),
        _ => None,
    };
    let (rank, size) = match (Rank::try_from(me.rank), Rank::try_from(size)) {
        (Ok(r), Ok(s)) if s > 0 && r < s => (r, s),
        _ => {
            let _ = finalize(api);
            return Err(format!(
                "PMIx gave rank {} of a job of {size} ranks",
                me.rank
            ));
        }
    };
    Ok(Session {
        api,
        me,
        rank,
        size,
        local,
    })
}

fn finalize(api: &Api) -> std::result::Result<(), String> {
    // SAFETY: called once per successful PMIx_Init, with no info.
    let status = unsafe { (api.finalize)(std::ptr::null(), 0) };
    api.check("PMIx_Finalize", status)
}

/// This process's rank and the job size from PMIx (opening the session,
/// which [`meet`] then uses; a job of one rank needs no rendezvous, so the
/// session is closed at once then). The answer is kept: later calls
/// return it.
pub(crate) fn job() -> std::result::Result<Job, String> {
    static JOB: OnceLock<std::result::Result<Job, String>> = OnceLock::new();
    JOB.get_or_init(|| {
        let mut state = STATE.lock().unwrap_or_else(|p| p.into_inner());
        if !matches!(*state, State::Closed) {
            return Err("the PMIx session was already closed".into());
        }
        // PMIx is initialised once per process, even if that fails.
        *state = State::Done;
        let s = open()?;
        let job = Job {
            rank: s.rank,
            size: s.size,
        };
        if s.size <= 1 {
            finalize(s.api)?;
        } else {
            *state = State::Open(Box::new(s));
        }
        Ok(job)
    })
    .clone()
}

/// Closes the session [`job`] opened, if it is open (the rendezvous was
/// found another way).
pub(crate) fn close() {
    let mut state = STATE.lock().unwrap_or_else(|p| p.into_inner());
    if let State::Open(s) = std::mem::replace(&mut *state, State::Done) {
        let _ = finalize(s.api);
    }
}

/// Where this rank meets the others: what [`meet`] found.
pub(crate) struct Meeting {
    /// The rendezvous, `IP:PORT`.
    pub rdv: String,
    /// The job key the rendezvous requires.
    pub key: String,
    /// Rank 0: the listener bound at `rdv`.
    pub listener: Option<TcpListener>,
}

/// Finds the rendezvous through PMIx (see the module docs) for rank
/// `rank` of `size` (as the launcher's variables say; PMIx must agree).
/// Rank 0 uses `key` as the job key if given, else makes one. Waits at most
/// about `timeout` for the other ranks. Closes the PMIx session.
pub(crate) fn meet(
    rank: Rank,
    size: Rank,
    key: Option<String>,
    timeout: Duration,
) -> std::result::Result<Meeting, String> {
    let mut state = STATE.lock().unwrap_or_else(|p| p.into_inner());
    let s = match std::mem::replace(&mut *state, State::Done) {
        State::Open(s) => *s,
        State::Closed => open()?,
        State::Done => return Err("the PMIx session was already closed".into()),
    };
    let result = exchange(&s, rank, size, key, timeout);
    let fin = finalize(s.api);
    let m = result?;
    fin?;
    Ok(m)
}

fn exchange(
    s: &Session,
    rank: Rank,
    size: Rank,
    key: Option<String>,
    timeout: Duration,
) -> std::result::Result<Meeting, String> {
    if (s.rank, s.size) != (rank, size) {
        return Err(format!(
            "PMIx says this process is rank {} of {}, the launcher's variables rank {rank} of \
             {size}",
            s.rank, s.size
        ));
    }
    let api = s.api;
    let secs = c_int::try_from(timeout.as_secs().max(1)).unwrap_or(c_int::MAX);
    // After the fence, rank 0's values are in this process's store: look
    // only there (a value rank 0 did not publish is an error at once).
    let get_info = [
        info(KEY_OPTIONAL, T_BOOL, Data { flag: true }),
        info(KEY_TIMEOUT, T_INT, Data { integer: secs }),
    ];
    // Rank 0 fences even when it failed to publish, so that the others
    // find no address at once rather than wait in the fence.
    let published = (rank == 0).then(|| publish(s, size, key));
    let fence_info = [
        info(KEY_COLLECT_DATA, T_BOOL, Data { flag: true }),
        info(KEY_TIMEOUT, T_INT, Data { integer: secs }),
    ];
    // SAFETY: no procs (the whole namespace), and an array of initialised
    // pmix_info_t of the length passed.
    let status = unsafe { (api.fence)(std::ptr::null(), 0, fence_info.as_ptr(), fence_info.len()) };
    if let Some(m) = published {
        let m = m?;
        api.check("PMIx_Fence", status)?;
        return Ok(m);
    }
    api.check("PMIx_Fence", status)?;
    let zero = Proc {
        nspace: s.me.nspace,
        rank: 0,
    };
    let rdv = match api.get(&zero, KEY_RENDEZVOUS, &get_info)? {
        Got::Text(Some(t)) => check_addr(&t)?,
        other => return Err(format!("rank 0 published a rendezvous of {other:?}")),
    };
    let key = match api.get(&zero, KEY_JOB_KEY, &get_info)? {
        Got::Text(Some(t)) => {
            check_key(&t).map_err(|e| format!("rank 0 published a bad job key: {e}"))?;
            t
        }
        other => return Err(format!("rank 0 published a job key of {other:?}")),
    };
    Ok(Meeting {
        rdv,
        key,
        listener: None,
    })
}

/// Rank 0: binds the rendezvous's listener and puts its address and the
/// job key (`key`, else a new one) into the PMIx store.
fn publish(s: &Session, size: Rank, key: Option<String>) -> std::result::Result<Meeting, String> {
    let api = s.api;
    let one_node = s.local.is_some_and(|l| l == u64::from(size));
    let ip = if one_node {
        Ipv4Addr::LOCALHOST
    } else {
        crate::os::net::first_ipv4().ok_or(
            "the job spans several nodes, but rank 0's host has no non-loopback IPv4 address \
             to listen at",
        )?
    };
    let listener = crate::serve::bind_tcp((ip, 0).into())
        .map_err(|e| format!("rank 0 cannot listen at {ip}: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("rank 0's rendezvous has no address: {e}"))?;
    let key = key.unwrap_or_else(crate::new_job_key);
    check_key(&key).map_err(|e| format!("{}: {e}", crate::wire::ENV_JOB_KEY))?;
    put(api, KEY_RENDEZVOUS, &addr.to_string())?;
    put(api, KEY_JOB_KEY, &key)?;
    // SAFETY: no arguments; commits what this process put.
    api.check("PMIx_Commit", unsafe { (api.commit)() })?;
    Ok(Meeting {
        rdv: addr.to_string(),
        key,
        listener: Some(listener),
    })
}

/// `PMIx_Put` of a string, for every process of the job.
fn put(api: &Api, key: &CStr, text: &str) -> std::result::Result<(), String> {
    let c = CString::new(text).map_err(|_| format!("{text:?} contains a NUL"))?;
    let mut v = Value {
        kind: T_STRING,
        data: Data {
            string: c.as_ptr().cast_mut(),
        },
    };
    // SAFETY: `key` is NUL-terminated; `v` is a string value whose string
    // lives across the call (PMIx copies it, and does not write to it).
    let status = unsafe { (api.put)(SCOPE_GLOBAL, key.as_ptr(), &mut v) };
    api.check(&format!("PMIx_Put({})", key.to_string_lossy()), status)
}

/// A rendezvous address from PMIx: an IP literal and a port, not 0.
fn check_addr(text: &str) -> std::result::Result<String, String> {
    match text.parse::<SocketAddr>() {
        Ok(a) if a.port() != 0 && text.len() <= MAX_ADDR => Ok(text.to_string()),
        _ => Err(format!(
            "rank 0 published {:?} as its rendezvous, not IP:PORT",
            text.chars().take(MAX_ADDR).collect::<String>()
        )),
    }
}

/// A job key: 1 to [`MAX_KEY`] printable ASCII characters, no spaces.
fn check_key(key: &str) -> std::result::Result<(), String> {
    if key.is_empty() || key.len() > MAX_KEY {
        return Err(format!("{} bytes long", key.len()));
    }
    if !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("not printable ASCII without spaces".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_declared_layouts_are_pmix_4s() {
        // Sizes and offsets as gcc lays out pmix_common.h on x86_64 and
        // aarch64 (LP64).
        assert_eq!(std::mem::size_of::<Proc>(), 260);
        assert_eq!(std::mem::size_of::<Value>(), 32);
        assert_eq!(std::mem::offset_of!(Value, data), 8);
        assert_eq!(std::mem::size_of::<Info>(), 552);
        assert_eq!(std::mem::offset_of!(Info, flags), 512);
        assert_eq!(std::mem::offset_of!(Info, value), 520);
    }

    /// The same numbers from the installed header, when there is one and a
    /// C compiler (else the test says so and passes).
    #[test]
    fn the_declared_layouts_match_the_installed_header() {
        let Some(dir) = [
            "/usr/include",
            "/usr/lib/x86_64-linux-gnu/pmix2/include",
            "/usr/lib/aarch64-linux-gnu/pmix2/include",
        ]
        .into_iter()
        .find(|d| std::path::Path::new(d).join("pmix_common.h").exists()) else {
            eprintln!("skipped: no pmix_common.h installed (apt-get install libpmix-dev)");
            return;
        };
        let tmp = std::env::temp_dir().join(format!("gex-pmix-layout-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        let src = tmp.join("layout.c");
        std::fs::write(
            &src,
            r#"#include <pmix_common.h>
#include <stdio.h>
#include <stddef.h>
int main(void) {
    printf("%zu %zu %zu %zu %zu %zu %d %d %d %d %d %d %d %d %d %u\n",
        sizeof(pmix_proc_t), sizeof(pmix_value_t), offsetof(pmix_value_t, data),
        sizeof(pmix_info_t), offsetof(pmix_info_t, flags), offsetof(pmix_info_t, value),
        PMIX_BOOL, PMIX_STRING, PMIX_SIZE, PMIX_INT, PMIX_UINT, PMIX_UINT16, PMIX_UINT32,
        PMIX_UINT64, PMIX_GLOBAL, PMIX_RANK_WILDCARD);
    return 0;
}
"#,
        )
        .unwrap();
        let exe = tmp.join("layout");
        let cc = std::process::Command::new("cc")
            .arg(format!("-I{dir}"))
            .arg(&src)
            .arg("-o")
            .arg(&exe)
            .output();
        let out = match cc {
            Ok(o) if o.status.success() => std::process::Command::new(&exe).output().unwrap(),
            other => {
                eprintln!("skipped: cannot compile against {dir}/pmix_common.h: {other:?}");
                let _ = std::fs::remove_dir_all(&tmp);
                return;
            }
        };
        let _ = std::fs::remove_dir_all(&tmp);
        let text = String::from_utf8_lossy(&out.stdout);
        let expected = format!(
            "{} {} {} {} {} {} {T_BOOL} {T_STRING} {T_SIZE} {T_INT} {T_UINT} {T_UINT16} {T_UINT32} \
             {T_UINT64} {SCOPE_GLOBAL} {RANK_WILDCARD}",
            std::mem::size_of::<Proc>(),
            std::mem::size_of::<Value>(),
            std::mem::offset_of!(Value, data),
            std::mem::size_of::<Info>(),
            std::mem::offset_of!(Info, flags),
            std::mem::offset_of!(Info, value),
        );
        assert_eq!(text.trim(), expected);
        // And the key names.
        let header = std::fs::read_to_string(format!("{dir}/pmix_common.h")).unwrap();
        for (name, key) in [
            ("PMIX_JOB_SIZE", KEY_JOB_SIZE),
            ("PMIX_LOCAL_SIZE", KEY_LOCAL_SIZE),
            ("PMIX_COLLECT_DATA", KEY_COLLECT_DATA),
            ("PMIX_TIMEOUT", KEY_TIMEOUT),
            ("PMIX_OPTIONAL", KEY_OPTIONAL),
        ] {
            let def = format!("\"{}\"", key.to_string_lossy());
            assert!(
                header
                    .lines()
                    .any(|l| l.starts_with(&format!("#define {name} ")) && l.contains(&def)),
                "{name} is not {def}"
            );
        }
    }

    #[test]
    fn what_pmix_returns_is_checked() {
        assert_eq!(check_addr("127.0.0.1:4000").unwrap(), "127.0.0.1:4000");
        assert_eq!(check_addr("[::1]:4000").unwrap(), "[::1]:4000");
        for bad in [
            "127.0.0.1:0",
            "127.0.0.1",
            "localhost:4000",
            "",
            "1.2.3.4:5\n6",
        ] {
            assert!(check_addr(bad).is_err(), "{bad:?}");
        }
        assert!(check_key(&crate::new_job_key()).is_ok());
        assert!(check_key("").is_err());
        assert!(check_key("a b").is_err());
        assert!(check_key("a\nb").is_err());
        assert!(check_key(&"a".repeat(MAX_KEY + 1)).is_err());
        assert!(check_key(&"a".repeat(MAX_KEY)).is_ok());
    }

    #[test]
    fn strings_from_pmix_are_read_with_a_bound() {
        let s = c"0123456789";
        assert_eq!(bounded_str(s.as_ptr(), 11).as_deref(), Some("0123456789"));
        assert_eq!(bounded_str(s.as_ptr(), 10), None);
        assert_eq!(bounded_str(std::ptr::null(), 10), None);
        let bad = [0xffu8 as c_char, 0];
        assert_eq!(bounded_str(bad.as_ptr(), 10), None);
    }

    #[test]
    fn values_are_read_by_their_type() {
        let v = |kind, data| Value { kind, data };
        // SAFETY (each read): the tag names the member set.
        unsafe {
            assert_eq!(Got::read(&v(T_UINT32, Data { uint32: 4 })), Got::Number(4));
            assert_eq!(
                Got::read(&v(T_UINT64, Data { uint64: 1 << 40 })),
                Got::Number(1 << 40)
            );
            let s = c"1.2.3.4:5";
            let t = Got::read(&v(
                T_STRING,
                Data {
                    string: s.as_ptr().cast_mut(),
                },
            ));
            assert_eq!(t, Got::Text(Some("1.2.3.4:5".into())));
            assert_eq!(
                Got::read(&v(
                    T_STRING,
                    Data {
                        string: std::ptr::null_mut()
                    }
                )),
                Got::Text(None)
            );
            assert_eq!(Got::read(&v(99, Data { uint64: 7 })), Got::Other(99));
            assert_eq!(
                Got::read(&v(T_INT, Data { integer: -1 })),
                Got::Other(T_INT)
            );
            assert_eq!(Got::read(&v(T_INT, Data { integer: 3 })), Got::Number(3));
        }
    }
}
