//! Liveness: lingering at exit until peers have what this rank sent (and
//! saying BYE), and the heartbeat thread that notices silent peers.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::progress::Link;

impl Link {
    /// Whether everything this rank sent has been acknowledged.
    pub(crate) fn all_acked(&self) -> bool {
        let net = self.net.lock().unwrap_or_else(|p| p.into_inner());
        (0..net.ep.npeers()).all(|p| net.ep.is_idle(p))
    }

    /// Whether every peer said BYE.
    pub(crate) fn all_departed(&self) -> bool {
        let net = self.net.lock().unwrap_or_else(|p| p.into_inner());
        let me = net.ep.me();
        (0..net.ep.npeers()).all(|p| p == me || net.ep.has_departed(p))
    }

    /// At process exit: keeps the protocol going until everything this rank
    /// sent is acknowledged, then says BYE to every peer (this rank sends no
    /// more data; peers still running, watching for silence, see
    /// [`heartbeat_thread`], expect its silence from now on) and keeps
    /// acknowledging until it has heard BYE from every peer. A peer says BYE
    /// only once its own data is acknowledged, so after every BYE nothing
    /// can still need this rank, and it leaves at once: a job whose ranks
    /// all exit together ends within a few round trips. A peer that does
    /// not say BYE (it is still running, or its BYE was lost) may still be
    /// retransmitting data whose acknowledgement was lost; the rank then
    /// leaves once that peer has been quiet for [`LINGER_QUIET`], and after
    /// `max` in every case.
    pub(crate) fn linger(&self, max: Duration) {
        // The progress and heartbeat threads end: from here on this
        // thread drives the protocol, and no peer is declared dead.
        self.stop.store(true, Ordering::Relaxed);
        let start = Instant::now();
        let mut quiet_since = start;
        let mut said_bye = false;
        loop {
            if self.progress_checked(false, false, false, false).0 > 0 {
                quiet_since = Instant::now();
            }
            if !said_bye && self.all_acked() {
                let mut net = self.net.lock().unwrap_or_else(|p| p.into_inner());
                net.ep.send_bye();
                net.flush(Instant::now());
                said_bye = true;
            }
            let now = Instant::now();
            if now >= start + max
                || (said_bye && (self.all_departed() || now >= quiet_since + LINGER_QUIET))
            {
                break;
            }
            self.wait_readable(Duration::from_millis(2));
        }
        if !said_bye {
            let mut net = self.net.lock().unwrap_or_else(|p| p.into_inner());
            net.ep.send_bye();
            net.flush(Instant::now());
        }
    }
}

/// How long peers must be quiet before an exiting rank leaves.
const LINGER_QUIET: Duration = Duration::from_millis(200);
/// The longest an exiting rank lingers.
const LINGER_MAX: Duration = Duration::from_secs(5);

/// The links of this process, for the exit hook.
pub(crate) static LINKS: Mutex<Vec<std::sync::Weak<Link>>> = Mutex::new(Vec::new());

extern "C" fn linger_at_exit() {
    if gex_bootstrap::job_ending() {
        return;
    }
    let links: Vec<Arc<Link>> = match LINKS.try_lock() {
        Ok(l) => l.iter().filter_map(|w| w.upgrade()).collect(),
        Err(_) => return,
    };
    for l in links {
        l.linger(LINGER_MAX);
    }
}

/// Registers `link` with the exit hook (installed once per process).
pub(crate) fn linger_on_exit(link: &Arc<Link>) {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        // SAFETY: registering a plain extern "C" function with no arguments;
        // it only takes locks with try_lock and never calls exit.
        unsafe { libc::atexit(linger_at_exit) };
    });
    LINKS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(Arc::downgrade(link));
}

/// How often the heartbeat thread runs the protocol's timers: an eighth of
/// the peer timeout, within these bounds.
pub(crate) const HEARTBEAT_TICK_MIN: Duration = Duration::from_millis(10);
/// See [`HEARTBEAT_TICK_MIN`].
pub(crate) const HEARTBEAT_TICK_MAX: Duration = Duration::from_secs(1);

/// The heartbeat thread, in every udp rank: every `tick` it receives what
/// has arrived (any datagram from a peer proves it alive), runs the
/// protocol's timers (which queue a heartbeat to every peer not sent to for
/// a quarter of the peer timeout), transmits, and ends the job if a peer
/// has been silent past the peer timeout, even with nothing outstanding.
/// Being a thread, it proves this rank alive while the application
/// computes without polling; a stopped process's threads all stop, so its
/// peers notice. It runs no handlers. It ends at exit (see
/// [`Link::linger`]) or when the conduit is dropped.
pub(crate) fn heartbeat_thread(link: Arc<Link>, tick: Duration) {
    loop {
        // A periodic timer, not a synchronisation.
        std::thread::sleep(tick);
        if link.stop.load(Ordering::Relaxed) {
            return;
        }
        link.progress_checked(false, true, false, true);
    }
}
