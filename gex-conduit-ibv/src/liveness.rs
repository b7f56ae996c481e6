//! Liveness: the heartbeat thread that notices dead peers, and the BYE a
//! rank that ends cleanly says at exit.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gex_types::Rank;

use crate::verbs::{Device, QpNum, SendOp, Sge};
use crate::{wr, wr_parts, BYE, CQ_BATCH, CTRL_WORDS, W_BYE, W_HB};

/// Heartbeats and BYE: what the heartbeat thread and the exit hook share
/// with the conduit.
///
/// Every tick (a quarter of the peer timeout, 10 ms to 1 s) the heartbeat
/// thread posts one 8-byte RDMA READ of its control words at every other
/// rank it has no heartbeat in flight to. A peer that does not answer
/// within the transport timeout makes it complete with an error, which the
/// conduit's next poll reports, naming the peer: so a rank waiting (in a
/// barrier, say) with nothing outstanding toward a dead peer still ends the
/// job. A rank that ends cleanly first writes BYE into every peer's control
/// words (waiting, boundedly, for the writes to complete), so that the
/// failures its departure causes are not taken for a death.
pub(crate) struct Liveness {
    pub(crate) dev: Arc<dyn Device>,
    /// Per rank: (queue pair, address of this rank's control words there,
    /// key); `None` for this rank.
    pub(crate) peers: Vec<Option<(QpNum, u64, u32)>>,
    /// A heartbeat is in flight to the rank.
    pub(crate) inflight: Vec<AtomicBool>,
    /// Where heartbeat READs land (8 bytes per rank) and its key.
    pub(crate) scratch: (usize, u32),
    /// A registered word holding 1: the source of BYE writes.
    pub(crate) bye_src: (usize, u32),
    pub(crate) ctrl: &'static [AtomicU64],
    pub(crate) stop: AtomicBool,
}

impl Liveness {
    /// Whether `r` has said BYE (ended cleanly).
    pub(crate) fn departed(&self, r: Rank) -> bool {
        self.ctrl[CTRL_WORDS * r as usize + BYE].load(Ordering::Acquire) != 0
    }

    /// Posts a heartbeat to every peer with none in flight.
    pub(crate) fn beat(&self) {
        for (r, p) in self.peers.iter().enumerate() {
            let Some((qp, raddr, rkey)) = *p else {
                continue;
            };
            if self.departed(r as Rank) || self.inflight[r].swap(true, Ordering::AcqRel) {
                continue;
            }
            let sge = Sge {
                addr: self.scratch.0 + 8 * r,
                len: 8,
                lkey: self.scratch.1,
            };
            // SAFETY: the scratch word of rank r lies in its registered
            // region and only this heartbeat (one in flight per rank)
            // writes it; nobody reads it.
            let posted = unsafe {
                self.dev.post_send(
                    qp,
                    wr(W_HB, r as Rank, 0),
                    SendOp::Read { raddr, rkey },
                    sge,
                )
            };
            if posted.is_err() {
                self.inflight[r].store(false, Ordering::Release);
            }
        }
    }

    /// At exit: BYE to every peer, waiting at most `max` for the writes.
    pub(crate) fn say_bye(&self, max: Duration) {
        self.stop.store(true, Ordering::Release);
        let mut want = 0;
        for (r, p) in self.peers.iter().enumerate() {
            let Some((qp, raddr, rkey)) = *p else {
                continue;
            };
            let sge = Sge {
                addr: self.bye_src.0,
                len: 8,
                lkey: self.bye_src.1,
            };
            let op = SendOp::Write {
                raddr: raddr + 8 * BYE as u64,
                rkey,
            };
            // SAFETY: the BYE word lies in its registered region and is
            // never written after start-up.
            if unsafe { self.dev.post_send(qp, wr(W_BYE, r as Rank, 0), op, sge) }.is_ok() {
                want += 1;
            }
        }
        // The process is ending: completions are taken here, and only the
        // BYE writes' are counted.
        let start = Instant::now();
        let mut wcs = Vec::new();
        while want > 0 && start.elapsed() < max {
            wcs.clear();
            self.dev.poll_cq(&mut wcs, CQ_BATCH);
            want -= wcs
                .iter()
                .filter(|w| wr_parts(w.wr_id).0 == W_BYE)
                .count()
                .min(want);
            std::thread::yield_now();
        }
    }
}

/// The heartbeat thread (see [`Liveness`]): a periodic timer, not a
/// synchronisation.
pub(crate) fn heartbeat_thread(l: Arc<Liveness>, tick: Duration) {
    loop {
        std::thread::sleep(tick);
        if l.stop.load(Ordering::Acquire) {
            return;
        }
        l.beat();
    }
}

/// The liveness state of this process's conduits, for the exit hook.
pub(crate) static LIVE: Mutex<Vec<Arc<Liveness>>> = Mutex::new(Vec::new());

pub(crate) extern "C" fn bye_at_exit() {
    let live: Vec<Arc<Liveness>> = match LIVE.try_lock() {
        Ok(l) => l.clone(),
        Err(_) => return,
    };
    for l in live {
        if gex_bootstrap::job_ending() {
            // The launcher ends every rank: nobody needs a BYE.
            l.stop.store(true, Ordering::Release);
        } else {
            l.say_bye(Duration::from_secs(1));
        }
    }
}
