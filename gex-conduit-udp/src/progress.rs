//! Progress: the link (protocol, socket, inbox) that polls, the progress
//! thread and the heartbeat thread drive, and the conduit's poll:
//! receiving, timers, transmitting and delivering complete messages.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use gex_conduit::{AmSink, PollScope};
use gex_types::Rank;

use crate::rma::SegmentPlacer;
use crate::socket::Net;
use crate::{
    rma, UdpConduit, BACKLOG, DELIVER_BATCH, INBOX_LIMIT_BYTES, MAX_SLEEP, RECV_BATCH,
    SPIN_CHECK_POLLS, TIMER_CHECK, TIMER_CHECK_POLLS, YIELD_EVERY,
};

/// A complete message: (sender, bytes, whether its Long payload was
/// already placed in the segment; see [`SegmentPlacer`]).
pub(crate) type InboxMsg = (Rank, Vec<u8>, bool);

/// The protocol, its socket, and the messages it completed.
pub(crate) struct Link {
    pub(crate) net: Mutex<Net>,
    /// Complete messages not yet delivered, in arrival order.
    /// (sender, message, whether its Long payload was already placed in
    /// the segment; see [`SegmentPlacer`]).
    pub(crate) inbox: Mutex<VecDeque<InboxMsg>>,
    /// This rank's segment (base, size) once attached: where Long payloads
    /// land.
    pub(crate) segment: OnceLock<(usize, usize)>,
    /// The one-sided operations this rank started and not yet saw
    /// answered (gets are placed from here as their data arrives).
    pub(crate) ops: rma::Ops,
    /// The inbox's length as of its last change, readable without the
    /// lock (a poll with nothing to deliver then takes no lock).
    pub(crate) inbox_len: AtomicUsize,
    /// Bytes of the messages in the inbox.
    pub(crate) inbox_bytes: AtomicUsize,
    /// Tells the progress thread, if any, to end.
    pub(crate) stop: AtomicBool,
    /// Polls by the application's threads (any count; only changes are
    /// read): the progress thread stays out of the way while it moves.
    pub(crate) app_polls: AtomicU64,
    /// Complete messages waiting for handlers beyond which request DATA
    /// is refused ([`INBOX_LIMIT`] unless `GEX_UDP_INBOX_LIMIT`).
    pub(crate) inbox_limit: usize,
    pub(crate) fd: std::os::fd::RawFd,
}

impl Link {
    /// Receives (waiting first, bounded by the socket's read timeout, when
    /// `wait`), runs timers, transmits, and moves complete messages to the
    /// inbox; returns how many datagrams arrived. Skipped when another
    /// thread is doing it.
    pub(crate) fn progress(&self, wait: bool) -> usize {
        self.progress_checked(wait, true, false, false).0
    }

    /// [`Link::progress`]; a dead peer ends the job only when `check_dead`.
    /// `deliverer`: the caller holds the right to run handlers and will run
    /// them next. Then, with a backlog of [`BACKLOG`] messages, nothing is
    /// received (the handlers catch up first, so the inbox stays short);
    /// and with the inbox empty, the first message completed is returned
    /// instead of queued, for the caller to run at once (the oldest
    /// undelivered message, since only a holder of the net lock adds to the
    /// inbox): a round trip then takes no inbox lock.
    pub(crate) fn progress_checked(
        &self,
        mut wait: bool,
        check_dead: bool,
        deliverer: bool,
        timers_now: bool,
    ) -> (usize, Option<InboxMsg>) {
        let Ok(mut guard) = self.net.try_lock() else {
            return (0, None);
        };
        let net = &mut *guard;
        let mut received = 0;
        // The clock is read only when something needs it: a datagram to
        // handle, the periodic look at the timers, or data to transmit.
        let mut clock: Option<Instant> = None;
        // With the inbox full, datagrams are still read (their ACKs keep
        // this rank's own sends moving, and the peer is heard from) but
        // their DATA is refused unacknowledged: the senders retransmit it
        // once the handlers have caught up.
        let full = self.inbox_len.load(Ordering::Relaxed) >= self.inbox_limit
            || self.inbox_bytes.load(Ordering::Relaxed) >= INBOX_LIMIT_BYTES;
        let defer = deliverer && self.inbox_len.load(Ordering::Relaxed) >= BACKLOG;
        wait &= !full && !defer;
        for _ in 0..if defer { 0 } else { RECV_BATCH } {
            let Some(len) = net.recv(wait) else { break };
            wait = false;
            let now = *clock.get_or_insert_with(Instant::now);
            let (ep, rx) = (&mut net.ep, &net.rx);
            let mut placer = SegmentPlacer(self.segment.get().copied(), &self.ops);
            ep.handle_datagram_placed(&rx[..len], now, !full, &mut placer);
            received += 1;
            // Complete messages go to their handlers before the next
            // receive call, which would most often find nothing and only
            // delay a handler (and its reply) by a system call.
            if ep.has_message() {
                break;
            }
        }
        // Timers are milliseconds apart (delayed ACKs, retransmissions,
        // peer death), so a poll looks at them only every
        // TIMER_CHECK_POLLS polls and at most every TIMER_CHECK: a spinning
        // poll then costs little more than its receive call.
        let mut dead = None;
        net.polls_since_timers += 1;
        if wait || timers_now || net.polls_since_timers >= TIMER_CHECK_POLLS {
            net.polls_since_timers = 0;
            let now = *clock.get_or_insert_with(Instant::now);
            if now >= net.next_timer_check || timers_now {
                net.next_timer_check = now + TIMER_CHECK;
                if net.ep.next_timeout().is_some_and(|t| t <= now) {
                    net.ep.handle_timeout(now);
                }
                dead = net.ep.dead_peer(now).filter(|_| check_dead);
            }
        }
        if net.ep.has_transmit() {
            let now = *clock.get_or_insert_with(Instant::now);
            net.flush(now);
        }
        if let Some((peer, silent)) = dead {
            drop(guard);
            gex_bootstrap::fatal(&format!(
                "udp conduit: rank {peer} has not answered for {:.1} s (GEX_UDP_PEER_TIMEOUT); it is presumed dead",
                silent.as_secs_f64()
            ));
        }
        let mut first = None;
        if deliverer && self.inbox_len.load(Ordering::Relaxed) == 0 {
            first = net.ep.poll_placed_message();
        }
        if net.ep.has_message() {
            // Lock order: net, then inbox (nothing takes net under inbox).
            let mut inbox = self.inbox.lock().unwrap_or_else(|p| p.into_inner());
            while let Some(m) = net.ep.poll_placed_message() {
                self.inbox_bytes.fetch_add(m.1.len(), Ordering::Relaxed);
                inbox.push_back(m);
            }
            self.inbox_len.store(inbox.len(), Ordering::Relaxed);
        }
        drop(guard);
        (received, first)
    }

    /// Waits until the socket is readable, for at most `max`, without
    /// holding any lock.
    pub(crate) fn wait_readable(&self, max: Duration) {
        let mut pfd = libc::pollfd {
            fd: self.fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = max.as_millis().clamp(1, i32::MAX as u128) as libc::c_int;
        // SAFETY: one valid pollfd for a socket the link owns; poll only
        // reads and writes that struct.
        unsafe { libc::poll(&mut pfd, 1, ms) };
    }
}

/// The progress thread (`GEX_UDP_PROGRESS_THREAD=1`): keeps the protocol
/// going — ACKs, retransmissions, receiving into the inbox — while the
/// application computes without polling. It runs no handlers: those still
/// run in the application's polls, so handler concurrency is unchanged.
///
/// While the application polls, its polls do all of that, and a second
/// thread taking datagrams (and the net lock) from under them only costs:
/// 4 ranks on 2 cores flooding each other took twice as long with the
/// thread as without it. So the thread steps in only when no application
/// poll happened during its last wait: it then sleeps for the longest wait
/// (a periodic timer, not a synchronisation) rather than watching the
/// socket the polls are reading.
pub(crate) fn progress_thread(link: Arc<Link>) {
    let mut seen = link.app_polls.load(Ordering::Relaxed);
    while !link.stop.load(Ordering::Relaxed) {
        let now = link.app_polls.load(Ordering::Relaxed);
        if now != seen {
            seen = now;
            std::thread::sleep(MAX_SLEEP);
            continue;
        }
        link.wait_readable(MAX_SLEEP);
        if link.app_polls.load(Ordering::Relaxed) != seen {
            continue;
        }
        link.progress(false);
    }
}

impl UdpConduit {
    /// Network progress for a poll: waits for a datagram first when polls
    /// have found nothing for longer than the spin time and no neighbour
    /// could be waiting on shared memory.
    pub(crate) fn progress_net(&self, deliverer: bool) -> (usize, Option<InboxMsg>) {
        let idle = self.idle_polls.load(Ordering::Relaxed);
        let mut wait = false;
        // The clock is read every SPIN_CHECK_POLLS empty polls only.
        if idle > 0 && idle.is_multiple_of(SPIN_CHECK_POLLS) && self.smp.members().len() == 1 {
            let since = Duration::from_nanos(self.idle_since.load(Ordering::Relaxed));
            wait = self.epoch.elapsed().saturating_sub(since) >= self.spin;
            if !wait && idle.is_multiple_of(YIELD_EVERY) {
                std::thread::yield_now();
            }
        }
        self.link.progress_checked(wait, true, deliverer, false)
    }

    /// Runs handlers of inbox messages (replies only for `RepliesOnly`).
    pub(crate) fn deliver(&self, sink: &dyn AmSink, scope: PollScope) -> usize {
        if self.delivering.swap(true, Ordering::Acquire) {
            return 0;
        }
        let ran = self.deliver_held(sink, scope);
        self.delivering.store(false, Ordering::Release);
        ran
    }

    /// [`UdpConduit::deliver`] for a caller that holds `delivering`.
    pub(crate) fn deliver_held(&self, sink: &dyn AmSink, scope: PollScope) -> usize {
        let mut ran = 0;
        while ran < DELIVER_BATCH && self.link.inbox_len.load(Ordering::Relaxed) > 0 {
            let next = {
                let mut inbox = self.link.inbox.lock().unwrap_or_else(|p| p.into_inner());
                let next = match scope {
                    PollScope::All => inbox.pop_front(),
                    PollScope::RepliesOnly => inbox
                        .iter()
                        .position(|(_, m, _)| m.get(1) == Some(&0))
                        .and_then(|i| inbox.remove(i)),
                };
                self.link.inbox_len.store(inbox.len(), Ordering::Relaxed);
                if let Some((_, m, _)) = &next {
                    self.link.inbox_bytes.fetch_sub(m.len(), Ordering::Relaxed);
                }
                next
            };
            let Some((src, m, placed)) = next else { break };
            self.run(src, &m, placed, sink);
            ran += 1;
        }
        ran
    }

    /// `Conduit::poll`: the bypass, then the network (receiving, timers,
    /// transmitting), then the handlers of complete messages; counts idle
    /// polls for the spin-then-wait decision.
    pub(crate) fn progress(&self, sink: &dyn AmSink, scope: PollScope) -> usize {
        // A load and a store, not a locked add: only a change is read, and
        // two polls racing still change it.
        let polls = self.link.app_polls.load(Ordering::Relaxed);
        self.link
            .app_polls
            .store(polls.wrapping_add(1), Ordering::Relaxed);
        let mut ran = self.smp.poll(sink, scope);
        // Take the right to run handlers before receiving, so that a
        // message completed now can run at once (see `progress_checked`).
        let held = scope == PollScope::All && !self.delivering.swap(true, Ordering::Acquire);
        let (received, first) = self.progress_net(held);
        if held {
            if let Some((src, m, placed)) = first {
                self.run(src, &m, placed, sink);
                ran += 1;
            }
            ran += self.deliver_held(sink, scope);
            self.delivering.store(false, Ordering::Release);
        } else {
            ran += self.deliver(sink, scope);
        }
        if ran + received == 0 {
            if self.idle_polls.fetch_add(1, Ordering::Relaxed) == 0 {
                let now = self.epoch.elapsed().as_nanos() as u64;
                self.idle_since.store(now, Ordering::Relaxed);
            }
        } else {
            self.idle_polls.store(0, Ordering::Relaxed);
        }
        ran
    }
}
