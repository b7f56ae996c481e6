//! The shared-memory collectives' one wait, paced for the host (part of
//! the shared area, [`crate::area`]). Uses nothing of gex-coll but the
//! area's neighbours in `gex_core`.

use std::sync::LazyLock;

/// Whether this host runs more ranks than it has cores.
pub(crate) static OVERSUBSCRIBED: LazyLock<bool> = LazyLock::new(|| {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    gex_core::Runtime::get().is_some_and(|rt| rt.conduit().layout().host.len() > cores)
});

/// How long a waiter spins, with a core per rank, before it starts
/// yielding its core: several times what a 64 KiB operation takes when
/// both sides run, far less than a scheduler's time slice (when the
/// member waited for shares this core with it, for instance because
/// other processes took the rest, each wait costs this long: spinning
/// for 2000 polls, about 600 us, made a 64 KiB broadcast take that per
/// operation on a loaded machine).
const SPIN_FOR: std::time::Duration = std::time::Duration::from_micros(20);

/// Looks at the condition between two polls, with a core per rank.
const LOOKS: u32 = 32;

/// The shared-memory collectives' one wait (`crate::shm::small`'s inline
/// slots, `crate::shm::data`'s chunks): polls until `cond` holds. With a
/// core per rank it looks [`LOOKS`] times between polls (a poll runs
/// every layer's progress, far longer than a look at one line, so a
/// change is seen sooner) and, once it has waited [`SPIN_FOR`], yields
/// after every idle poll (the member waited for has probably lost its
/// core); when ranks share cores it looks once and yields after every
/// idle poll (the member waited for may need this core). Those yields are
/// the `SpinBlock` wait mode's; `Spin` never yields, `Block` after every
/// idle poll (`gex_core::Runtime::idle_pause`).
pub(crate) fn wait_until(rt: &gex_core::Runtime, mut cond: impl FnMut() -> bool) {
    if cond() {
        return;
    }
    let over = *OVERSUBSCRIBED;
    let looks = if over { 1 } else { LOOKS };
    let t0 = std::time::Instant::now();
    let mut patient = !over;
    loop {
        for _ in 0..looks {
            if cond() {
                return;
            }
            std::hint::spin_loop();
        }
        if rt.progress() > 0 {
            continue;
        }
        if patient && t0.elapsed() >= SPIN_FOR {
            patient = false;
        }
        // The wait mode decides (`gasnet_set_waitmode`): by default a
        // yield once the spin time is over.
        gex_core::Runtime::idle_pause(!patient);
    }
}
