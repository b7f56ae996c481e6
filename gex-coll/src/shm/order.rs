//! What the two shared-memory data paths share, below both: whether a
//! team has the chunked path ([`eligible`]), the order between the two
//! on the primordial team (the chunked operations this rank started,
//! [`started`], and the last one each member posted, [`posted_op`]), and
//! the mark of a blocking call's initiation ([`blocking`]). `shm::small`
//! and `shm::data` use it; it uses neither (so they form no circle:
//! only `data` looks at `small`, for the small operations' order).
//! Uses the shared area and the team registry.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::area;

/// The bits of a `posted` word below the operation number (the chunks).
pub(super) const CHUNK_BITS: u32 = 20;

/// Whether the data collectives over a team go through shared memory:
/// the primordial team (its barriers on channel 0, which only it holds)
/// over a neighbourhood that is the whole job.
pub(crate) fn eligible(t: &crate::team::TeamInfo) -> bool {
    t.size() > 1 && t.shm_channel() == Some(0) && area::area().is_some_and(|a| a.whole_job())
}

/// Data operations this rank has started (numbered from 1, in call
/// order on the primordial team).
pub(crate) fn started() -> u64 {
    STARTED.load(Ordering::Relaxed)
}

/// Records the data operation this rank started last (`LOCAL.k`).
#[inline]
pub(super) fn set_started(k: u64) {
    STARTED.store(k, Ordering::Relaxed);
}

/// `crate::shm::data`'s `LOCAL.k`, read without its lock.
static STARTED: AtomicU64 = AtomicU64::new(0);

/// The last data operation rank `local` posted a chunk of (0: none).
pub(crate) fn posted_op(local: usize) -> u64 {
    area::area()
        .expect("shared-memory data collectives need the area")
        .data_ctl(local)
        .posted
        .load(Ordering::Acquire)
        >> CHUNK_BITS
}

thread_local! {
    /// Set while a blocking collective initiates on this thread: a read
    /// then waits in place instead of registering.
    static BLOCKING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` (a non-blocking collective that the caller waits for at once)
/// with the thread marked as blocking.
pub(crate) fn blocking<R>(f: impl FnOnce() -> R) -> R {
    struct Unmark(bool);
    impl Drop for Unmark {
        fn drop(&mut self) {
            BLOCKING.with(|b| b.set(self.0));
        }
    }
    let _u = Unmark(BLOCKING.with(|b| b.replace(true)));
    f()
}

/// Whether a blocking collective is initiating on this thread
/// ([`blocking`]).
pub(crate) fn is_blocking() -> bool {
    BLOCKING.with(Cell::get)
}
