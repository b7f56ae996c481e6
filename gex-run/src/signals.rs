//! SIGINT/SIGTERM handling for the launcher process.
//!
//! The handler only records the signal and writes its number to a
//! self-pipe (both async-signal-safe). A watcher thread reads the pipe and
//! forwards [`Input::Signal`] to every job running in this process, whose
//! coordinator then ends the job like any other failure.

use std::io;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use gex_bootstrap::serve::Input;
use tokio::sync::mpsc::UnboundedSender;

/// Write end of the self-pipe, or -1 before installation.
static PIPE_WR: AtomicI32 = AtomicI32::new(-1);
/// The last SIGINT/SIGTERM received (0: none): a job that starts after the
/// signal arrived ends at once.
static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// Jobs to tell, by registration id.
static JOBS: Mutex<Vec<(u64, UnboundedSender<Input>)>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(0);
static INSTALLED: OnceLock<io::Result<()>> = OnceLock::new();

extern "C" fn on_signal(sig: libc::c_int) {
    RECEIVED.store(sig, Ordering::SeqCst);
    let fd = PIPE_WR.load(Ordering::SeqCst);
    if fd >= 0 {
        let byte = sig as u8;
        // SAFETY: write(2) is async-signal-safe; `byte` outlives the call.
        // errno is saved and restored so the interrupted code never sees
        // the handler's value.
        unsafe {
            let errno = *libc::__errno_location();
            libc::write(fd, (&byte as *const u8).cast(), 1);
            *libc::__errno_location() = errno;
        }
    }
}

/// Makes SIGINT and SIGTERM end every job that [`crate::run`] is running in
/// this process (ranks killed, cleanup done, code 130 / 143) instead of
/// killing the process outright. Idempotent.
///
/// The `gex-run` binary calls this; a library user that has its own signal
/// handling should not.
pub fn install_signal_handlers() -> io::Result<()> {
    INSTALLED
        .get_or_init(install)
        .as_ref()
        .map(|_| ())
        .map_err(|e| io::Error::new(e.kind(), e.to_string()))
}

fn install() -> io::Result<()> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let [rd, wr] = fds;
    PIPE_WR.store(wr, Ordering::SeqCst);
    std::thread::Builder::new()
        .name("gex-run-signals".into())
        .spawn(move || watch(rd))?;
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: sigaction is plain data, zero is a valid start; the handler
        // is an `extern "C" fn(c_int)` that only does async-signal-safe work.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            if libc::sigaction(sig, &sa, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

fn watch(rd: libc::c_int) {
    loop {
        let mut byte = 0u8;
        // SAFETY: reads at most one byte into `byte`, which is valid.
        let n = unsafe { libc::read(rd, (&mut byte as *mut u8).cast(), 1) };
        if n == 1 {
            let jobs = JOBS.lock().unwrap_or_else(|p| p.into_inner());
            for (_, tx) in jobs.iter() {
                let _ = tx.send(Input::Signal(i32::from(byte)));
            }
        } else if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        } else {
            return;
        }
    }
}

/// A job's subscription to launcher signals; unsubscribes when dropped.
pub(crate) struct Subscription(u64);

/// Subscribes a job. Returns the subscription and, if a signal already
/// arrived before (so the job must end at once), that signal.
pub(crate) fn subscribe(tx: UnboundedSender<Input>) -> (Subscription, Option<i32>) {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    JOBS.lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((id, tx));
    let pending = RECEIVED.load(Ordering::SeqCst);
    (Subscription(id), (pending != 0).then_some(pending))
}

impl Drop for Subscription {
    fn drop(&mut self) {
        JOBS.lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|(id, _)| *id != self.0);
    }
}
