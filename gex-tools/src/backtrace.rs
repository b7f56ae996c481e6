//! Backtraces, debugger freezes and fatal errors.
//!
//! Mechanisms, tried in the order of `GASNET_BACKTRACE_TYPE` (a
//! comma-separated list of names, any case) or, by default, `USER` then
//! `NATIVE`: `USER` is the client's `gasnett_backtrace_user` (registered by
//! `gasnett_backtrace_init`), `NATIVE` the Rust standard library's
//! unwinder and symbolizer. The first that succeeds ends the attempt.
//! Fatal errors print a backtrace when `GASNET_BACKTRACE` is yes, and
//! freeze for a debugger first when `GASNET_FREEZE_ON_ERROR` is yes.

use std::ffi::{c_char, c_int};
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};
use std::sync::Mutex;

use crate::env::{var, yesno};
use crate::write_fd;

/// `gasnett_backtrace_type_t`.
#[repr(C)]
pub struct gasnett_backtrace_type_t {
    pub name: *const c_char,
    pub fnp: Option<unsafe extern "C" fn(c_int) -> c_int>,
    pub threadsupport: c_int,
}

/// The client's backtrace mechanism, when registered.
static USER: AtomicPtr<gasnett_backtrace_type_t> = AtomicPtr::new(std::ptr::null_mut());

/// `gasnett_backtrace_init` (the header passes the client's
/// `gasnett_backtrace_user`, null when the program defines none).
#[no_mangle]
pub unsafe extern "C" fn _gex_tools_backtrace_init(
    _exename: *const c_char,
    user: *const gasnett_backtrace_type_t,
) {
    USER.store(user.cast_mut(), Ordering::Release);
}

/// The registered user mechanism: its name and function.
fn user() -> Option<(String, unsafe extern "C" fn(c_int) -> c_int)> {
    let p = USER.load(Ordering::Acquire);
    if p.is_null() {
        return None;
    }
    // SAFETY: the client's static gasnett_backtrace_user, which lives as
    // long as the program.
    let u = unsafe { &*p };
    let f = u.fnp?;
    // SAFETY: null or the client's C string.
    let name = unsafe { crate::cstr(u.name) }
        .map_or("USER".into(), |n| n.to_string_lossy().to_ascii_uppercase());
    Some((name, f))
}

fn native(fd: c_int) -> bool {
    let bt = std::backtrace::Backtrace::force_capture();
    let text = format!("Backtrace of process {}:\n{bt}\n", std::process::id());
    write_fd(fd, text.as_bytes());
    true
}

/// `gasnett_print_backtrace`: writes a backtrace of the calling thread to
/// `fd`; 0 when a mechanism succeeded, 1 otherwise.
#[no_mangle]
pub extern "C" fn gasnett_print_backtrace(fd: c_int) -> c_int {
    static ONE: Mutex<()> = Mutex::new(());
    let _g = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let user = user();
    let list = var("GASNET_BACKTRACE_TYPE")
        .filter(|l| !l.is_empty())
        .unwrap_or_else(|| "USER,NATIVE".into());
    for name in list.split(',').map(|n| n.trim().to_ascii_uppercase()) {
        let ok = match (&user, name.as_str()) {
            (Some((un, f)), n) if n == un || n == "USER" => {
                // SAFETY: the client's backtrace function, called as its
                // contract says (a file descriptor to write to).
                unsafe { f(fd) == 0 }
            }
            (_, "NATIVE") => native(fd),
            _ => false,
        };
        if ok {
            return 0;
        }
    }
    1
}

extern "C" fn print_backtrace_ifenabled(fd: c_int) -> c_int {
    if yesno("GASNET_BACKTRACE", false) {
        gasnett_print_backtrace(fd)
    } else {
        0
    }
}

type BacktraceFn = unsafe extern "C" fn(c_int) -> c_int;

/// The hook `gasnett_print_backtrace_ifenabled` names (the header makes it
/// an assignable function pointer through this slot).
static mut IFENABLED: BacktraceFn = print_backtrace_ifenabled;

/// The slot behind `gasnett_print_backtrace_ifenabled`.
#[no_mangle]
pub extern "C" fn _gex_tools_print_backtrace_ifenabled_slot() -> *mut BacktraceFn {
    // Only the address is taken here; C reads and writes the slot, as with
    // the reference's global function pointer.
    std::ptr::addr_of_mut!(IFENABLED)
}

/// `gasnett_freezeForDebuggerNow`: waits until a debugger clears `*flag`
/// (announcing the process, the flag's name and address on stderr).
#[no_mangle]
pub unsafe extern "C" fn gasnett_freezeForDebuggerNow(
    flag: *const c_int,
    flagsymname: *const c_char,
) {
    if flag.is_null() {
        return;
    }
    // SAFETY: null or a C string (caller's contract).
    let name = unsafe { crate::cstr(flagsymname) }
        .map_or("the flag".into(), |n| n.to_string_lossy().into_owned());
    let host = {
        // SAFETY: the library's own host name string.
        unsafe { crate::cstr(crate::sys::gasnett_gethostname()) }
            .map_or(String::new(), |h| h.to_string_lossy().into_owned())
    };
    write_fd(
        2,
        format!(
            "Process {} on {host} frozen for debugger: attach and set {name} (at {flag:p}) to 0 to continue\n",
            std::process::id()
        )
        .as_bytes(),
    );
    // SAFETY: `flag` is the caller's live int, read volatile because a
    // debugger writes it.
    while unsafe { std::ptr::read_volatile(flag) } != 0 {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

static FROZEN: AtomicI32 = AtomicI32::new(0);

/// `gasnett_freezeForDebuggerErr`: freezes when `GASNET_FREEZE_ON_ERROR` is
/// yes.
#[no_mangle]
pub extern "C" fn gasnett_freezeForDebuggerErr() {
    if yesno("GASNET_FREEZE_ON_ERROR", false) {
        FROZEN.store(1, Ordering::SeqCst);
        // SAFETY: a live static int and a C string literal.
        unsafe {
            gasnett_freezeForDebuggerNow(FROZEN.as_ptr(), c"gasnett_frozen".as_ptr());
        }
    }
}

/// `gasnett_current_loc`: `"FUNC at FILE:LINE"` in memory from malloc (the
/// caller frees it).
#[no_mangle]
pub unsafe extern "C" fn _gex_tools_current_loc(
    func: *const c_char,
    file: *const c_char,
    line: c_int,
) -> *mut c_char {
    // SAFETY: null or C strings (the header passes __func__ and __FILE__).
    let (func, file) = unsafe { (crate::cstr(func), crate::cstr(file)) };
    let s = format!(
        "{} at {}:{line}",
        func.map_or("?".into(), |f| f.to_string_lossy()),
        file.map_or("?".into(), |f| f.to_string_lossy())
    );
    // SAFETY: malloc of len + 1 bytes, filled and NUL-terminated below.
    let p = unsafe { libc::malloc(s.len() + 1) }.cast::<u8>();
    if !p.is_null() {
        // SAFETY: p has s.len() + 1 writable bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(s.as_ptr(), p, s.len());
            *p.add(s.len()) = 0;
        }
    }
    p.cast()
}

/// Ends the process as `gasnett_fatalerror` does: the message on stderr,
/// a freeze when asked for, the backtrace hook, then `abort`.
pub(crate) fn fatal_at(pos: Option<String>, msg: &str) -> ! {
    crate::sys::gasnett_flush_streams();
    let text = match pos {
        Some(p) => format!(
            "*** FATAL ERROR (pid {}): in {p}: {msg}\n",
            std::process::id()
        ),
        None => format!("*** FATAL ERROR (pid {}): {msg}\n", std::process::id()),
    };
    write_fd(2, text.as_bytes());
    gasnett_freezeForDebuggerErr();
    // SAFETY: the hook is this library's function or one the client
    // installed through gasnett_print_backtrace_ifenabled.
    unsafe {
        let hook = *_gex_tools_print_backtrace_ifenabled_slot();
        hook(2);
    }
    crate::sys::gasnett_flush_streams();
    std::process::abort()
}

/// A fatal error of this library (a bad argument or setting).
pub(crate) fn fatal(msg: &str) -> ! {
    fatal_at(None, msg)
}

/// `gasnett_fatalerror` and `gasnett_fatalerror_nopos` (the header formats
/// the message): `func`, `file`, `line` give the position, null for none.
#[no_mangle]
pub unsafe extern "C" fn _gex_tools_fatal(
    func: *const c_char,
    file: *const c_char,
    line: c_int,
    msg: *const c_char,
) -> ! {
    // SAFETY: null or C strings (the header passes __func__, __FILE__ and
    // its formatted buffer).
    let (func, file, msg) = unsafe { (crate::cstr(func), crate::cstr(file), crate::cstr(msg)) };
    let pos = match (func, file) {
        (Some(f), Some(p)) => Some(format!(
            "{}() at {}:{line}",
            f.to_string_lossy(),
            p.to_string_lossy()
        )),
        (None, Some(p)) => Some(format!("{}:{line}", p.to_string_lossy())),
        (Some(f), None) => Some(format!("{}()", f.to_string_lossy())),
        (None, None) => None,
    };
    let msg = msg.map_or("(no message)".into(), |m| m.to_string_lossy());
    fatal_at(pos, msg.trim_end_matches('\n'))
}
