//! A simulated verbs device, for machines without RDMA hardware: a test
//! double with the semantics the conduit relies on, and the faults real
//! hardware reports.
//!
//! * A device is a listening Unix-domain socket in the abstract namespace
//!   (no file, nothing left behind) and a few threads standing in for the
//!   NIC. Its address for a queue pair is the socket's name and the queue
//!   pair's number.
//! * Connecting a queue pair opens one stream to the peer device, which
//!   carries this queue pair's requests and the peer's answers to them, in
//!   order: reliable, in-order RC delivery.
//! * The peer device's thread for that stream is the responder: a SEND
//!   takes the oldest receive posted on the target queue pair, or on the
//!   shared receive queue it is attached to (waiting for one up to the RNR
//!   timeout, then answering "receiver not ready, retries exceeded"; a
//!   queue pair waiting so carries nothing else meanwhile, as RC's
//!   in-order delivery makes a real one), RDMA WRITE, READ and the 8-byte atomics are checked
//!   against the target region's key, bounds and alignment and then done on
//!   the memory (atomics as CPU atomics), or answered with a remote access
//!   error. The application of the target process takes no part.
//! * This device's thread for the stream reads the answers and turns them
//!   into completions on the one completion queue: success, or the error
//!   status; after an error the queue pair is in the error state and
//!   everything outstanding or posted later completes as flushed. A stream
//!   that ends (the peer process is gone) or an answer that does not come
//!   within the transport timeout completes as "retries exceeded".
//! * Faults are injected with [`SimDevice::inject`]: a queue pair moved to
//!   the error state, the next SEND arriving answered as if no receive were
//!   ever posted (RNR retries exhausted), the next RDMA or atomic arriving
//!   refused with a remote access error.
//!
//! Local buffers are checked against the local regions (key and bounds)
//! as a NIC does, completing with a local protection error otherwise.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::{Duration, Instant};

use gex_types::{Error, Result};

use crate::verbs::{Device, DeviceLimits, Mr, QpNum, SendOp, Sge, SrqNum, Wc, WcKind, WcStatus};

/// The longest message of one work request on the simulated device.
pub const SIM_MAX_MSG: usize = 1 << 30;
/// Work requests a simulated send or receive queue holds.
pub const SIM_QUEUE_DEPTH: usize = 4096;

/// A fault to inject (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Moves the queue pair to the error state: everything outstanding
    /// and everything posted later completes as flushed.
    QpError(QpNum),
    /// The next SEND arriving at this device is answered as if no receive
    /// were posted through all RNR retries.
    RnrNextSend,
    /// The next RDMA or atomic arriving at this device is refused with a
    /// remote access error.
    AccessNextRdma,
}

// Packet kinds on a stream.
const P_SEND: u8 = 1;
const P_WRITE: u8 = 2;
const P_READ: u8 = 3;
const P_FADD: u8 = 4;
const P_CSWAP: u8 = 5;
const P_ACK: u8 = 16;
const P_READ_RESP: u8 = 17;
const P_ATOMIC_RESP: u8 = 18;
const P_NAK: u8 = 19;

/// Header bytes of every packet.
const HDR: usize = 40;

/// A packet header: kind, status (NAK), body length, remote address and
/// key, two operands.
#[derive(Clone, Copy, Debug, Default)]
struct Hdr {
    kind: u8,
    status: u8,
    len: u32,
    raddr: u64,
    rkey: u32,
    a: u64,
    b: u64,
}

impl Hdr {
    fn encode(&self) -> [u8; HDR] {
        let mut h = [0u8; HDR];
        h[0] = self.kind;
        h[1] = self.status;
        h[4..8].copy_from_slice(&self.len.to_le_bytes());
        h[8..16].copy_from_slice(&self.raddr.to_le_bytes());
        h[16..20].copy_from_slice(&self.rkey.to_le_bytes());
        h[24..32].copy_from_slice(&self.a.to_le_bytes());
        h[32..40].copy_from_slice(&self.b.to_le_bytes());
        h
    }

    fn decode(h: &[u8; HDR]) -> Hdr {
        let u32_at = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().expect("8 bytes"));
        Hdr {
            kind: h[0],
            status: h[1],
            len: u32_at(4),
            raddr: u64_at(8),
            rkey: u32_at(16),
            a: u64_at(24),
            b: u64_at(32),
        }
    }
}

fn status_code(s: WcStatus) -> u8 {
    match s {
        WcStatus::Success => 0,
        WcStatus::RnrRetryExceeded => 1,
        WcStatus::RemoteAccess => 2,
        WcStatus::RetryExceeded => 3,
        WcStatus::Flushed => 4,
        WcStatus::LocalProtection => 5,
        WcStatus::LocalLength => 6,
        WcStatus::RemoteOp => 7,
        WcStatus::Other(_) => 8,
    }
}

fn status_of(c: u8) -> WcStatus {
    match c {
        0 => WcStatus::Success,
        1 => WcStatus::RnrRetryExceeded,
        2 => WcStatus::RemoteAccess,
        3 => WcStatus::RetryExceeded,
        4 => WcStatus::Flushed,
        5 => WcStatus::LocalProtection,
        6 => WcStatus::LocalLength,
        7 => WcStatus::RemoteOp,
        c => WcStatus::Other(u32::from(c)),
    }
}

/// A send-queue work request waiting for its answer.
struct Pending {
    wr_id: u64,
    kind: u8,
    sge: Sge,
    posted: Instant,
}

/// A simulated shared receive queue.
struct SimSrq {
    /// Posted receives, oldest first.
    recvs: Mutex<VecDeque<(u64, Sge)>>,
    recv_posted: Condvar,
    /// Receives it holds, at most.
    max_wr: usize,
}

/// A simulated queue pair.
struct SimQp {
    num: QpNum,
    /// The stream to the peer, once connected (writes under this lock, so
    /// that the stream's order is the order of `pending`).
    tx: Mutex<Option<UnixStream>>,
    /// Work requests sent and not yet answered, oldest first.
    pending: Mutex<VecDeque<Pending>>,
    /// In the error state.
    error: AtomicBool,
    /// The peer's device closed the stream with nothing outstanding: the
    /// next work request posted fails as unanswered (a NIC notices a dead
    /// peer only when it sends to it).
    peer_gone: AtomicBool,
    /// Posted receives, oldest first (unused with a shared receive queue).
    recvs: Mutex<VecDeque<(u64, Sge)>>,
    recv_posted: Condvar,
    /// The shared receive queue its SENDs take receives from, if any.
    srq: Option<Arc<SimSrq>>,
}

impl SimQp {
    /// Where SENDs arriving on it take their receives from.
    fn receive_queue(&self) -> (&Mutex<VecDeque<(u64, Sge)>>, &Condvar) {
        match &self.srq {
            Some(s) => (&s.recvs, &s.recv_posted),
            None => (&self.recvs, &self.recv_posted),
        }
    }
}

struct Inner {
    /// The abstract socket name.
    name: String,
    /// Registered regions; region i has keys `key_of(i)`.
    mrs: RwLock<Vec<Mr>>,
    /// A per-device byte in every key, so that keys differ between devices.
    salt: u32,
    qps: RwLock<Vec<Arc<SimQp>>>,
    srqs: RwLock<Vec<Arc<SimSrq>>>,
    cq: Mutex<VecDeque<Wc>>,
    /// RNR and transport timeout.
    timeout: Duration,
    /// The longest message of one work request.
    max_msg: usize,
    rnr_next: AtomicBool,
    access_next: AtomicBool,
    /// SENDs that arrived with no receive posted (and waited).
    rnr_waits: AtomicU64,
    /// Completions the transport timeout check last looked at.
    last_timeout_check: Mutex<Instant>,
}

/// The simulated device (see the module docs).
#[derive(Clone)]
pub struct SimDevice {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SimDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimDevice")
            .field("name", &self.inner.name)
            .finish()
    }
}

fn io_err(what: &str, e: std::io::Error) -> Error {
    Error::resource(format!("ibv sim device: {what}: {e}"))
}

impl SimDevice {
    /// Opens a simulated device whose RNR and transport timeout is
    /// `timeout` (an answer not come by then completes as an error).
    pub fn open(timeout: Duration) -> Result<SimDevice> {
        Self::open_with(timeout, SIM_MAX_MSG)
    }

    /// As [`SimDevice::open`], with work requests of at most `max_msg`
    /// bytes (longer ones complete with a local length error, as on a
    /// NIC), so that tests see transfers split at a small limit.
    pub fn open_with(timeout: Duration, max_msg: usize) -> Result<SimDevice> {
        let max_msg = max_msg.clamp(1, SIM_MAX_MSG);
        let rnd = gex_bootstrap::os::random::random_bytes::<8>();
        let tag = u64::from_le_bytes(rnd);
        let name = format!("gex-ibv-sim-{}-{tag:016x}", std::process::id());
        let addr =
            SocketAddr::from_abstract_name(name.as_bytes()).map_err(|e| io_err("address", e))?;
        let listener = UnixListener::bind_addr(&addr).map_err(|e| io_err("listen", e))?;
        let inner = Arc::new(Inner {
            name,
            mrs: RwLock::new(Vec::new()),
            salt: u32::from(rnd[0]) | 1,
            qps: RwLock::new(Vec::new()),
            srqs: RwLock::new(Vec::new()),
            cq: Mutex::new(VecDeque::new()),
            timeout,
            max_msg,
            rnr_next: AtomicBool::new(false),
            access_next: AtomicBool::new(false),
            rnr_waits: AtomicU64::new(0),
            last_timeout_check: Mutex::new(Instant::now()),
        });
        let acc = inner.clone();
        std::thread::Builder::new()
            .name("gex-ibv-sim-accept".into())
            .spawn(move || accept_loop(acc, listener))
            .map_err(|e| io_err("thread", e))?;
        Ok(SimDevice { inner })
    }

    /// How many SENDs arrived here with no receive posted for them (each
    /// waited, receiver-not-ready, for one): a conduit whose credits cover
    /// its receives never causes one.
    pub fn rnr_waits(&self) -> u64 {
        self.inner.rnr_waits.load(Ordering::Relaxed)
    }

    /// Injects a fault (see [`Fault`]).
    pub fn inject(&self, f: Fault) {
        match f {
            Fault::QpError(q) => {
                if let Some(qp) = self.inner.qp(q) {
                    self.inner.qp_error(&qp, WcStatus::Flushed);
                }
            }
            Fault::RnrNextSend => self.inner.rnr_next.store(true, Ordering::SeqCst),
            Fault::AccessNextRdma => self.inner.access_next.store(true, Ordering::SeqCst),
        }
    }
}

fn key_of(i: usize, salt: u32) -> u32 {
    ((i as u32 + 1) << 8) | (salt & 0xff)
}

impl Inner {
    fn qp(&self, q: QpNum) -> Option<Arc<SimQp>> {
        self.qps
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(q as usize)
            .cloned()
    }

    fn push(&self, wc: Wc) {
        self.cq
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push_back(wc);
    }

    /// Moves `qp` to the error state: what is outstanding completes with
    /// `first` (the oldest) and flushed (the rest), receives posted on it
    /// as flushed (those of a shared receive queue stay, for the other
    /// queue pairs).
    ///
    /// The state changes, and the outstanding requests' completions are
    /// queued, under the `pending` lock, which a post that finds the
    /// queue pair in the error state takes before queueing its flushed
    /// completion: as on a NIC, the error's completion comes before the
    /// flushes that follow from it (a post racing with the error could
    /// otherwise queue its flush first, and the conduit would report
    /// that instead of the cause).
    fn qp_error(&self, qp: &SimQp, first: WcStatus) {
        {
            let mut pending = qp.pending.lock().unwrap_or_else(|p| p.into_inner());
            qp.error.store(true, Ordering::SeqCst);
            for (i, p) in pending.drain(..).enumerate() {
                self.push(Wc {
                    wr_id: p.wr_id,
                    qp: qp.num,
                    status: if i == 0 { first } else { WcStatus::Flushed },
                    kind: WcKind::Send,
                    byte_len: 0,
                });
            }
        }
        let recvs: Vec<(u64, Sge)> = qp
            .recvs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
            .collect();
        for (wr_id, _) in recvs {
            self.push(Wc {
                wr_id,
                qp: qp.num,
                status: WcStatus::Flushed,
                kind: WcKind::Recv,
                byte_len: 0,
            });
        }
        qp.recv_posted.notify_all();
        if let Some(srq) = &qp.srq {
            // A responder waiting for a receive on its behalf gives up.
            let _g = srq.recvs.lock().unwrap_or_else(|p| p.into_inner());
            srq.recv_posted.notify_all();
        }
    }

    /// Whether `[addr, addr + len)` lies in a region whose key is `key`.
    fn check(&self, key: u32, addr: u64, len: usize) -> bool {
        if key & 0xff != self.salt & 0xff {
            return false;
        }
        let i = (key >> 8) as usize;
        let mrs = self.mrs.read().unwrap_or_else(|p| p.into_inner());
        let Some(mr) = i.checked_sub(1).and_then(|i| mrs.get(i)) else {
            return false;
        };
        let Ok(addr) = usize::try_from(addr) else {
            return false;
        };
        addr >= mr.addr && gex_conduit::fits(addr - mr.addr, len, mr.len)
    }

    /// Completes as "retries exceeded" whatever has waited for its answer
    /// longer than the timeout (checked at most every 10 ms).
    fn check_timeouts(&self) {
        let now = Instant::now();
        {
            let Ok(mut last) = self.last_timeout_check.try_lock() else {
                return;
            };
            if now < *last + Duration::from_millis(10) {
                return;
            }
            *last = now;
        }
        let qps: Vec<Arc<SimQp>> = self.qps.read().unwrap_or_else(|p| p.into_inner()).clone();
        for qp in qps {
            let late = qp
                .pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .front()
                .is_some_and(|p| now.duration_since(p.posted) > self.timeout);
            if late && !qp.error.load(Ordering::SeqCst) {
                self.qp_error(&qp, WcStatus::RetryExceeded);
            }
        }
    }
}

fn accept_loop(dev: Arc<Inner>, listener: UnixListener) {
    for s in listener.incoming() {
        let Ok(mut s) = s else { continue };
        let mut hello = [0u8; 4];
        if s.read_exact(&mut hello).is_err() {
            continue;
        }
        let target = u32::from_le_bytes(hello);
        let dev = dev.clone();
        let _ = std::thread::Builder::new()
            .name("gex-ibv-sim-responder".into())
            .spawn(move || responder(dev, target, s));
    }
}

/// Writes an answer; a failure means the requester is gone, which its own
/// side notices.
fn answer(s: &mut UnixStream, h: Hdr, body: &[u8]) -> bool {
    s.write_all(&h.encode()).is_ok() && s.write_all(body).is_ok()
}

/// The responder for one stream: executes the requests of the peer's
/// queue pair on `target` in order, answering each.
fn responder(dev: Arc<Inner>, target: QpNum, mut s: UnixStream) {
    let nak = |s: &mut UnixStream, st: WcStatus| {
        answer(
            s,
            Hdr {
                kind: P_NAK,
                status: status_code(st),
                ..Hdr::default()
            },
            &[],
        )
    };
    let mut body = Vec::new();
    loop {
        let mut hb = [0u8; HDR];
        if s.read_exact(&mut hb).is_err() {
            return;
        }
        let h = Hdr::decode(&hb);
        let carries = matches!(h.kind, P_SEND | P_WRITE);
        body.clear();
        if carries {
            body.resize(h.len as usize, 0);
            if s.read_exact(&mut body).is_err() {
                return;
            }
        }
        let ok = match h.kind {
            P_SEND => {
                let Some(qp) = dev.qp(target) else { return };
                if dev.rnr_next.swap(false, Ordering::SeqCst) {
                    nak(&mut s, WcStatus::RnrRetryExceeded)
                } else {
                    // Receiver not ready: the peer retries until the RNR
                    // timeout (a bounded wait for a receive to be posted).
                    let deadline = Instant::now() + dev.timeout;
                    let (queue, posted) = qp.receive_queue();
                    let mut recvs = queue.lock().unwrap_or_else(|p| p.into_inner());
                    if recvs.is_empty() {
                        dev.rnr_waits.fetch_add(1, Ordering::Relaxed);
                    }
                    while recvs.is_empty()
                        && !qp.error.load(Ordering::SeqCst)
                        && Instant::now() < deadline
                    {
                        let left = deadline.saturating_duration_since(Instant::now());
                        recvs = posted
                            .wait_timeout(recvs, left)
                            .unwrap_or_else(|p| p.into_inner())
                            .0;
                    }
                    let got = recvs.pop_front();
                    drop(recvs);
                    match got {
                        None if qp.error.load(Ordering::SeqCst) => nak(&mut s, WcStatus::RemoteOp),
                        None => nak(&mut s, WcStatus::RnrRetryExceeded),
                        Some((wr_id, sge)) if body.len() > sge.len as usize => {
                            dev.push(Wc {
                                wr_id,
                                qp: target,
                                status: WcStatus::LocalLength,
                                kind: WcKind::Recv,
                                byte_len: 0,
                            });
                            nak(&mut s, WcStatus::RemoteOp)
                        }
                        Some((wr_id, sge)) => {
                            // SAFETY: the receive's buffer was checked
                            // against its region when posted and belongs to
                            // the device until this completion is polled
                            // (`Device::post_recv`); `body` fits in it.
                            unsafe {
                                std::ptr::copy_nonoverlapping(
                                    body.as_ptr(),
                                    sge.addr as *mut u8,
                                    body.len(),
                                )
                            };
                            dev.push(Wc {
                                wr_id,
                                qp: target,
                                status: WcStatus::Success,
                                kind: WcKind::Recv,
                                byte_len: body.len() as u32,
                            });
                            answer(
                                &mut s,
                                Hdr {
                                    kind: P_ACK,
                                    ..Hdr::default()
                                },
                                &[],
                            )
                        }
                    }
                }
            }
            P_WRITE | P_READ | P_FADD | P_CSWAP => {
                let len = match h.kind {
                    P_WRITE | P_READ => h.len as usize,
                    _ => 8,
                };
                let atomic = matches!(h.kind, P_FADD | P_CSWAP);
                let allowed = !dev.access_next.swap(false, Ordering::SeqCst)
                    && dev.check(h.rkey, h.raddr, len)
                    && (!atomic || h.raddr.is_multiple_of(8));
                if !allowed {
                    nak(&mut s, WcStatus::RemoteAccess)
                } else {
                    let at = h.raddr as usize as *mut u8;
                    match h.kind {
                        P_WRITE => {
                            // SAFETY: the range lies in a region registered
                            // on this device (checked above), which stays
                            // allocated while the device lives
                            // (`Device::register`); `body` is separate.
                            unsafe { std::ptr::copy_nonoverlapping(body.as_ptr(), at, len) };
                            answer(
                                &mut s,
                                Hdr {
                                    kind: P_ACK,
                                    ..Hdr::default()
                                },
                                &[],
                            )
                        }
                        P_READ => {
                            // SAFETY: as above; the range is only read.
                            let bytes = unsafe { std::slice::from_raw_parts(at as *const u8, len) };
                            answer(
                                &mut s,
                                Hdr {
                                    kind: P_READ_RESP,
                                    len: len as u32,
                                    ..Hdr::default()
                                },
                                bytes,
                            )
                        }
                        _ => {
                            // SAFETY: 8 bytes in a registered region (checked
                            // above), 8-aligned; every access to the word
                            // through this device is atomic, and the
                            // conduit's coherence rule keeps CPU atomics of
                            // the program off words the device works on.
                            let word = unsafe { AtomicU64::from_ptr(at as *mut u64) };
                            let old = if h.kind == P_FADD {
                                word.fetch_add(h.a, Ordering::SeqCst)
                            } else {
                                match word.compare_exchange(
                                    h.a,
                                    h.b,
                                    Ordering::SeqCst,
                                    Ordering::SeqCst,
                                ) {
                                    Ok(v) | Err(v) => v,
                                }
                            };
                            answer(
                                &mut s,
                                Hdr {
                                    kind: P_ATOMIC_RESP,
                                    len: 8,
                                    ..Hdr::default()
                                },
                                &old.to_le_bytes(),
                            )
                        }
                    }
                }
            }
            _ => return,
        };
        if !ok {
            return;
        }
    }
}

/// The requester's side of one stream: turns the answers into completions
/// of the oldest outstanding work requests of `qp`.
fn requester(dev: Arc<Inner>, qp: Arc<SimQp>, mut s: UnixStream) {
    let mut body = Vec::new();
    loop {
        let mut hb = [0u8; HDR];
        if s.read_exact(&mut hb).is_err() {
            // The peer device is gone: nothing outstanding will be
            // answered, and what is posted later fails.
            qp.peer_gone.store(true, Ordering::SeqCst);
            let idle = qp
                .pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .is_empty();
            if !idle && !qp.error.load(Ordering::SeqCst) {
                dev.qp_error(&qp, WcStatus::RetryExceeded);
            }
            return;
        }
        let h = Hdr::decode(&hb);
        body.clear();
        if matches!(h.kind, P_READ_RESP | P_ATOMIC_RESP) {
            body.resize(h.len as usize, 0);
            if s.read_exact(&mut body).is_err() {
                if !qp.error.load(Ordering::SeqCst) {
                    dev.qp_error(&qp, WcStatus::RetryExceeded);
                }
                return;
            }
        }
        if qp.error.load(Ordering::SeqCst) {
            // Already flushed (an injected error or a timeout).
            continue;
        }
        let Some(p) = qp
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop_front()
        else {
            dev.qp_error(&qp, WcStatus::Other(0xfff));
            continue;
        };
        let status = match h.kind {
            P_ACK if matches!(p.kind, P_SEND | P_WRITE) => WcStatus::Success,
            P_READ_RESP if p.kind == P_READ && body.len() == p.sge.len as usize => {
                // SAFETY: the local buffer was checked against its region at
                // post and belongs to the device until this completion is
                // polled (`Device::post_send`); the length matches.
                unsafe {
                    std::ptr::copy_nonoverlapping(body.as_ptr(), p.sge.addr as *mut u8, body.len())
                };
                WcStatus::Success
            }
            P_ATOMIC_RESP if matches!(p.kind, P_FADD | P_CSWAP) && body.len() == 8 => {
                // SAFETY: as above; the buffer holds at least 8 bytes
                // (checked at post).
                unsafe { std::ptr::copy_nonoverlapping(body.as_ptr(), p.sge.addr as *mut u8, 8) };
                WcStatus::Success
            }
            P_NAK => status_of(h.status),
            _ => WcStatus::Other(0xffe),
        };
        if status == WcStatus::Success {
            dev.push(Wc {
                wr_id: p.wr_id,
                qp: qp.num,
                status,
                kind: WcKind::Send,
                byte_len: 0,
            });
        } else {
            qp.pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push_front(p);
            dev.qp_error(&qp, status);
        }
    }
}

impl Device for SimDevice {
    fn provider(&self) -> &'static str {
        "sim"
    }

    fn limits(&self) -> DeviceLimits {
        DeviceLimits {
            max_msg: self.inner.max_msg,
            max_send_wr: SIM_QUEUE_DEPTH,
            max_recv_wr: SIM_QUEUE_DEPTH,
            max_srq_wr: SIM_QUEUE_DEPTH,
            atomics: true,
        }
    }

    unsafe fn register(&self, addr: *mut u8, len: usize) -> Result<Mr> {
        let mut mrs = self.inner.mrs.write().unwrap_or_else(|p| p.into_inner());
        let key = key_of(mrs.len(), self.inner.salt);
        let mr = Mr {
            addr: addr as usize,
            len,
            lkey: key,
            rkey: key,
        };
        mrs.push(mr);
        Ok(mr)
    }

    fn create_srq(&self, max_wr: usize) -> Result<SrqNum> {
        if max_wr == 0 || max_wr > SIM_QUEUE_DEPTH {
            return Err(Error::bad_arg(format!(
                "ibv sim device: a shared receive queue of {max_wr} receives (1 to {SIM_QUEUE_DEPTH})"
            )));
        }
        let mut srqs = self.inner.srqs.write().unwrap_or_else(|p| p.into_inner());
        srqs.push(Arc::new(SimSrq {
            recvs: Mutex::new(VecDeque::new()),
            recv_posted: Condvar::new(),
            max_wr,
        }));
        Ok((srqs.len() - 1) as SrqNum)
    }

    fn create_qp(&self, srq: Option<SrqNum>) -> Result<QpNum> {
        let srq = match srq {
            None => None,
            Some(n) => Some(
                self.inner
                    .srqs
                    .read()
                    .unwrap_or_else(|p| p.into_inner())
                    .get(n as usize)
                    .cloned()
                    .ok_or_else(|| {
                        Error::bad_arg(format!("ibv sim device: no shared receive queue {n}"))
                    })?,
            ),
        };
        let mut qps = self.inner.qps.write().unwrap_or_else(|p| p.into_inner());
        let num = qps.len() as QpNum;
        qps.push(Arc::new(SimQp {
            num,
            tx: Mutex::new(None),
            pending: Mutex::new(VecDeque::new()),
            error: AtomicBool::new(false),
            peer_gone: AtomicBool::new(false),
            recvs: Mutex::new(VecDeque::new()),
            recv_posted: Condvar::new(),
            srq,
        }));
        Ok(num)
    }

    fn address(&self, qp: QpNum) -> Vec<u8> {
        let mut a = qp.to_le_bytes().to_vec();
        a.extend_from_slice(self.inner.name.as_bytes());
        a
    }

    fn connect(&self, qp: QpNum, remote: &[u8]) -> Result<()> {
        let bad = || Error::bad_arg("ibv sim device: a malformed queue pair address");
        if remote.len() < 5 {
            return Err(bad());
        }
        let their = &remote[..4];
        let name = &remote[4..];
        let q = self.inner.qp(qp).ok_or_else(bad)?;
        let addr = SocketAddr::from_abstract_name(name).map_err(|e| io_err("address", e))?;
        let mut s = UnixStream::connect_addr(&addr).map_err(|e| {
            io_err(
                &format!(
                    "connecting to {:?}",
                    String::from_utf8_lossy(name).into_owned()
                ),
                e,
            )
        })?;
        s.write_all(their).map_err(|e| io_err("connect", e))?;
        let rx = s.try_clone().map_err(|e| io_err("connect", e))?;
        *q.tx.lock().unwrap_or_else(|p| p.into_inner()) = Some(s);
        let dev = self.inner.clone();
        let q2 = q.clone();
        std::thread::Builder::new()
            .name("gex-ibv-sim-requester".into())
            .spawn(move || requester(dev, q2, rx))
            .map_err(|e| io_err("thread", e))?;
        Ok(())
    }

    unsafe fn post_send(&self, qp: QpNum, wr_id: u64, op: SendOp, sge: Sge) -> Result<()> {
        let q = self
            .inner
            .qp(qp)
            .ok_or_else(|| Error::bad_arg(format!("ibv sim device: no queue pair {qp}")))?;
        let flushed = |status| {
            self.inner.push(Wc {
                wr_id,
                qp,
                status,
                kind: WcKind::Send,
                byte_len: 0,
            });
            Ok(())
        };
        if q.error.load(Ordering::SeqCst) {
            // After the error's own completions (`Inner::qp_error`).
            let _order = q.pending.lock().unwrap_or_else(|p| p.into_inner());
            return flushed(WcStatus::Flushed);
        }
        if q.peer_gone.load(Ordering::SeqCst) {
            flushed(WcStatus::RetryExceeded)?;
            self.inner.qp_error(&q, WcStatus::Flushed);
            return Ok(());
        }
        let need = match op {
            SendOp::FetchAdd { .. } | SendOp::CmpSwap { .. } => 8,
            _ => sge.len as usize,
        };
        if need > self.inner.max_msg {
            self.inner.qp_error(&q, WcStatus::Flushed);
            return flushed(WcStatus::LocalLength);
        }
        if need > sge.len as usize || !self.inner.check(sge.lkey, sge.addr as u64, need) {
            self.inner.qp_error(&q, WcStatus::Flushed);
            return flushed(WcStatus::LocalProtection);
        }
        let (kind, h) = match op {
            SendOp::Send => (P_SEND, Hdr::default()),
            SendOp::Write { raddr, rkey } => (
                P_WRITE,
                Hdr {
                    raddr,
                    rkey,
                    ..Hdr::default()
                },
            ),
            SendOp::Read { raddr, rkey } => (
                P_READ,
                Hdr {
                    raddr,
                    rkey,
                    ..Hdr::default()
                },
            ),
            SendOp::FetchAdd { raddr, rkey, add } => (
                P_FADD,
                Hdr {
                    raddr,
                    rkey,
                    a: add,
                    ..Hdr::default()
                },
            ),
            SendOp::CmpSwap {
                raddr,
                rkey,
                compare,
                swap,
            } => (
                P_CSWAP,
                Hdr {
                    raddr,
                    rkey,
                    a: compare,
                    b: swap,
                    ..Hdr::default()
                },
            ),
        };
        let h = Hdr {
            kind,
            len: sge.len,
            ..h
        };
        let carries = matches!(kind, P_SEND | P_WRITE);
        let mut tx = q.tx.lock().unwrap_or_else(|p| p.into_inner());
        let Some(s) = tx.as_mut() else {
            return Err(Error::bad_arg(format!(
                "ibv sim device: queue pair {qp} is not connected"
            )));
        };
        {
            let mut pending = q.pending.lock().unwrap_or_else(|p| p.into_inner());
            if q.error.load(Ordering::SeqCst) {
                // The queue pair failed since the check above: nothing
                // would answer this request any more.
                return flushed(WcStatus::Flushed);
            }
            pending.push_back(Pending {
                wr_id,
                kind,
                sge,
                posted: Instant::now(),
            });
        }
        let body: &[u8] = if carries && sge.len > 0 {
            // SAFETY: the buffer lies in a registered region (checked above)
            // and is valid until completion (`Device::post_send`); the
            // device reads it now, as a NIC reads it by DMA.
            unsafe { std::slice::from_raw_parts(sge.addr as *const u8, sge.len as usize) }
        } else {
            &[]
        };
        if s.write_all(&h.encode()).is_err() || s.write_all(body).is_err() {
            drop(tx);
            if !q.error.load(Ordering::SeqCst) {
                self.inner.qp_error(&q, WcStatus::RetryExceeded);
            }
        }
        Ok(())
    }

    unsafe fn post_recv(&self, qp: QpNum, wr_id: u64, sge: Sge) -> Result<()> {
        let q = self
            .inner
            .qp(qp)
            .ok_or_else(|| Error::bad_arg(format!("ibv sim device: no queue pair {qp}")))?;
        if q.srq.is_some() {
            return Err(Error::bad_arg(format!(
                "ibv sim device: queue pair {qp} takes its receives from a shared receive queue"
            )));
        }
        if q.error.load(Ordering::SeqCst) {
            self.inner.push(Wc {
                wr_id,
                qp,
                status: WcStatus::Flushed,
                kind: WcKind::Recv,
                byte_len: 0,
            });
            return Ok(());
        }
        if !self
            .inner
            .check(sge.lkey, sge.addr as u64, sge.len as usize)
        {
            return Err(Error::bad_arg(
                "ibv sim device: a receive buffer outside its region",
            ));
        }
        q.recvs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push_back((wr_id, sge));
        q.recv_posted.notify_all();
        Ok(())
    }

    unsafe fn post_srq_recv(&self, srq: SrqNum, wr_id: u64, sge: Sge) -> Result<()> {
        let q = self
            .inner
            .srqs
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(srq as usize)
            .cloned()
            .ok_or_else(|| {
                Error::bad_arg(format!("ibv sim device: no shared receive queue {srq}"))
            })?;
        if !self
            .inner
            .check(sge.lkey, sge.addr as u64, sge.len as usize)
        {
            return Err(Error::bad_arg(
                "ibv sim device: a receive buffer outside its region",
            ));
        }
        let mut recvs = q.recvs.lock().unwrap_or_else(|p| p.into_inner());
        if recvs.len() >= q.max_wr {
            return Err(Error::resource(format!(
                "ibv sim device: shared receive queue {srq} is full ({} receives)",
                q.max_wr
            )));
        }
        recvs.push_back((wr_id, sge));
        q.recv_posted.notify_all();
        Ok(())
    }

    fn poll_cq(&self, out: &mut Vec<Wc>, max: usize) -> usize {
        self.inner.check_timeouts();
        let mut cq = self.inner.cq.lock().unwrap_or_else(|p| p.into_inner());
        let n = cq.len().min(max);
        out.extend(cq.drain(..n));
        n
    }
}

#[cfg(test)]
mod tests;
