//! The small verbs interface the conduit is written against, and what it
//! needs of a provider: a device with one protection domain and one
//! completion queue, memory regions with local and remote keys, reliable
//! connected (RC) queue pairs (each with its own receive queue or
//! attached to a shared receive queue, SRQ), the work requests SEND,
//! RECV, RDMA WRITE,
//! RDMA READ and the two 8-byte atomics, and work completions with their
//! statuses.
//!
//! Two providers implement it: [`crate::sim`] (a simulated device between
//! the processes of one host, with fault injection) and, with the cargo
//! feature `rdma-sys`, `crate::rdma` (libibverbs).

use gex_types::Result;

/// A queue pair, by the provider's number for it.
pub type QpNum = u32;

/// A shared receive queue, by the provider's number for it.
pub type SrqNum = u32;

/// A registered memory region: where it is and its keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mr {
    /// First byte.
    pub addr: usize,
    /// Length in bytes.
    pub len: usize,
    /// The key local work requests name it by.
    pub lkey: u32,
    /// The key peers name it by in RDMA and atomic work requests.
    pub rkey: u32,
}

/// What a device can do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    /// The longest message of one work request.
    pub max_msg: usize,
    /// Work requests a send queue holds.
    pub max_send_wr: usize,
    /// Work requests a receive queue holds.
    pub max_recv_wr: usize,
    /// Work requests a shared receive queue holds (0: the device has no
    /// shared receive queues).
    pub max_srq_wr: usize,
    /// Whether 8-byte fetch-add and compare-swap are supported.
    pub atomics: bool,
}

/// A local buffer of a work request (a scatter/gather element).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sge {
    /// First byte.
    pub addr: usize,
    /// Length in bytes.
    pub len: u32,
    /// The local key of the region it lies in.
    pub lkey: u32,
}

/// A send-queue work request's operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendOp {
    /// SEND: consumes a receive the peer posted.
    Send,
    /// RDMA WRITE of the local buffer to `raddr` in the peer's region `rkey`.
    Write { raddr: u64, rkey: u32 },
    /// RDMA READ from `raddr` in the peer's region `rkey` into the local buffer.
    Read { raddr: u64, rkey: u32 },
    /// 8-byte fetch-and-add at `raddr`; the old value lands in the local buffer.
    FetchAdd { raddr: u64, rkey: u32, add: u64 },
    /// 8-byte compare-and-swap at `raddr`; the old value lands in the local buffer.
    CmpSwap {
        raddr: u64,
        rkey: u32,
        compare: u64,
        swap: u64,
    },
}

/// A work completion's status (the subset of `ibv_wc_status` the conduit
/// tells apart; everything else is `Other`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WcStatus {
    /// Success.
    Success,
    /// The peer had no receive posted for longer than the RNR retries allow.
    RnrRetryExceeded,
    /// The peer refused an RDMA or atomic access (key, bounds, rights).
    RemoteAccess,
    /// The peer did not acknowledge within the transport retries (gone,
    /// unreachable, or stopped).
    RetryExceeded,
    /// The work request was flushed: its queue pair is in the error state.
    Flushed,
    /// A local buffer is outside its region or its key is wrong.
    LocalProtection,
    /// A received message was longer than the receive buffer.
    LocalLength,
    /// The peer could not execute the request (a remote operation error).
    RemoteOp,
    /// Any other status, by its provider code.
    Other(u32),
}

impl std::fmt::Display for WcStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WcStatus::Success => write!(f, "success"),
            WcStatus::RnrRetryExceeded => write!(f, "receiver-not-ready retries exceeded"),
            WcStatus::RemoteAccess => write!(f, "remote access error"),
            WcStatus::RetryExceeded => write!(f, "transport retries exceeded (no answer)"),
            WcStatus::Flushed => write!(f, "flushed (queue pair in the error state)"),
            WcStatus::LocalProtection => write!(f, "local protection error"),
            WcStatus::LocalLength => write!(f, "local length error"),
            WcStatus::RemoteOp => write!(f, "remote operation error"),
            WcStatus::Other(c) => write!(f, "status {c}"),
        }
    }
}

/// What a completion completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WcKind {
    /// A send-queue work request.
    Send,
    /// A receive: `byte_len` bytes arrived in the posted buffer.
    Recv,
}

/// A work completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wc {
    /// The id the work request was posted with.
    pub wr_id: u64,
    /// The queue pair it belongs to.
    pub qp: QpNum,
    /// Its status.
    pub status: WcStatus,
    /// Send or receive.
    pub kind: WcKind,
    /// Bytes received (receives only).
    pub byte_len: u32,
}

/// A verbs device opened by a provider: one protection domain and one
/// completion queue for every queue pair. Every method may be called from
/// any thread.
pub trait Device: Send + Sync {
    /// The provider's name (`sim`, `rdma-sys`).
    fn provider(&self) -> &'static str;

    /// What the device can do.
    fn limits(&self) -> DeviceLimits;

    /// Registers `len` bytes at `addr` for local writes, remote reads and
    /// writes and atomics.
    ///
    /// # Safety
    /// The memory must stay allocated until the device is dropped (regions
    /// are never deregistered while the device lives): the device and its
    /// peers read and write it at any time.
    unsafe fn register(&self, addr: *mut u8, len: usize) -> Result<Mr>;

    /// Creates a shared receive queue holding up to `max_wr` receives.
    /// A SEND arriving on a queue pair attached to it takes its oldest
    /// receive; with none posted, the sender's device retries
    /// (receiver-not-ready) as for a queue pair's own receive queue.
    fn create_srq(&self, max_wr: usize) -> Result<SrqNum>;

    /// Creates an RC queue pair (its receives taken from `srq` if given,
    /// else from its own receive queue); its address (to give the peer)
    /// comes from [`Device::address`].
    fn create_qp(&self, srq: Option<SrqNum>) -> Result<QpNum>;

    /// The bytes a peer connects its queue pair to this one with.
    fn address(&self, qp: QpNum) -> Vec<u8>;

    /// Connects `qp` to the peer's queue pair at `remote` (from the peer's
    /// [`Device::address`]) and makes it ready to send.
    fn connect(&self, qp: QpNum, remote: &[u8]) -> Result<()>;

    /// Posts a send-queue work request, completed (signalled) when done.
    ///
    /// # Safety
    /// `sge` must lie in a registered region and stay valid (and, for a
    /// READ or atomic, unread and unwritten by others) until the
    /// completion of `wr_id` is polled.
    unsafe fn post_send(&self, qp: QpNum, wr_id: u64, op: SendOp, sge: Sge) -> Result<()>;

    /// Posts a receive buffer.
    ///
    /// # Safety
    /// As for [`Device::post_send`]: the buffer belongs to the device until
    /// its completion is polled.
    unsafe fn post_recv(&self, qp: QpNum, wr_id: u64, sge: Sge) -> Result<()>;

    /// Posts a receive buffer to a shared receive queue; its completion
    /// names the queue pair the message arrived on.
    ///
    /// # Safety
    /// As for [`Device::post_recv`].
    unsafe fn post_srq_recv(&self, srq: SrqNum, wr_id: u64, sge: Sge) -> Result<()>;

    /// Moves up to `max` completions into `out`; how many.
    fn poll_cq(&self, out: &mut Vec<Wc>, max: usize) -> usize;
}

/// The provider `GEX_IBV_PROVIDER` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    /// The simulated device ([`crate::sim`]).
    Sim,
    /// libibverbs through rdma-sys (cargo feature `rdma-sys`).
    RdmaSys,
}

impl Provider {
    /// The default: `rdma-sys` when it is compiled in, else `sim`.
    pub fn default_for_build() -> Provider {
        if cfg!(feature = "rdma-sys") {
            Provider::RdmaSys
        } else {
            Provider::Sim
        }
    }

    /// Its name in `GEX_IBV_PROVIDER`.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Sim => "sim",
            Provider::RdmaSys => "rdma-sys",
        }
    }
}
