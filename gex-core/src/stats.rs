//! Counters a conduit keeps, for users to read (`gex::stats()`) and, with
//! `GEX_STATS=1`, printed to standard error when the process exits. The
//! types are the conduit crate's ([`gex_conduit::stats`]).

use gex_types::Result;

pub use gex_conduit::stats::{ConduitStats, Counter, PeerCounters};

use crate::Runtime;

/// The conduit's counters on this rank (`gex::stats()`), and gex-core's
/// `wait_yields` (the times a wait yielded the core: [`crate::wait_yields`])
/// and `core_shared_yields` (of those, to a rank polling in vain on the same
/// core: [`crate::core_shared_yields`]).
pub fn stats() -> Result<ConduitStats> {
    let mut st = Runtime::require("gex::stats")?.conduit().stats();
    st.counters
        .push(Counter::new("wait_yields", crate::wait_yields()));
    st.counters.push(Counter::new(
        "core_shared_yields",
        crate::core_shared_yields(),
    ));
    Ok(st)
}

/// With `GEX_STATS=1` (`ClientSettings::stats_at_exit`), prints this
/// rank's counters to standard error when the process exits (normally, by
/// `gex::exit`, or by a fatal error; not when killed by a signal). Called
/// once at client init.
pub(crate) fn print_at_exit_if_asked(asked: bool) {
    if !asked {
        return;
    }
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        // SAFETY: registering a plain extern "C" function with no
        // arguments; it never calls exit and unwinds nowhere (it catches
        // panics).
        unsafe { libc::atexit(print_stats_at_exit) };
    });
}

extern "C" fn print_stats_at_exit() {
    let _ = std::panic::catch_unwind(|| {
        if let (Some(rt), Ok(st)) = (Runtime::get(), stats()) {
            eprintln!("{}", st.summary(rt.jobrank()));
        }
    });
}
