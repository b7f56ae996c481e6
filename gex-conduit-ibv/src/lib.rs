//! gex-conduit-ibv: Active Messages, RDMA puts and gets and NIC atomics
//! over InfiniBand verbs.
//!
//! The conduit talks to the hardware through one small interface
//! ([`verbs::Device`]) with two providers, chosen by `GEX_IBV_PROVIDER`:
//! `rdma-sys` (libibverbs, cargo feature `rdma-sys`; the default when
//! compiled in) and `sim` ([`sim`], a simulated device between the
//! processes of one host, for machines without RDMA hardware and for
//! tests; the default otherwise).
//!
//! * Every rank gets one reliable-connected queue pair to every rank (to
//!   itself too), connected at start-up through the control plane's
//!   exchange. Active Messages use the queue pairs to ranks outside this
//!   rank's neighbourhood; inside it they go through shared memory (the
//!   smp bypass, `GEX_IBV_BYPASS=0` turns it off), and the others carry
//!   only RDMA and atomics.
//! * Active Messages are SENDs into receive buffers posted in advance
//!   (`GEX_IBV_BUF` bytes each): by default one bounded pool in a shared
//!   receive queue (`GEX_IBV_SRQ_POOL`, at least one buffer per peer and
//!   lane), else `2 * GEX_IBV_CREDITS` per peer (`GEX_IBV_SRQ=0`). Flow
//!   control is by credits on two lanes, requests and replies: every peer
//!   has a window per lane (at most `GEX_IBV_CREDITS`; with the shared
//!   pool an even share, grown from a reserve for the peers that use it),
//!   and the windows never add up to more than the buffers posted, so that
//!   nothing ever arrives without a receive posted for it. A receiver
//!   returns credits by writing what it grants (per lane, cumulative:
//!   messages finished plus the window) into the sender's memory with an
//!   RDMA WRITE, which needs no receive at the sender. Reply buffers are copied out and returned
//!   as soon as they arrive, request buffers once their handler has run:
//!   so a reply always makes progress, whatever the peer's handlers do.
//! * A Long payload too large for a buffer is copied into a registered
//!   bounce buffer and RDMA-written into the target's segment; the SEND
//!   that follows on the same queue pair is the notification (RC order
//!   puts it after the data).
//! * Segments are registered at attach; their remote keys travel in the
//!   segment descriptors ([`gex_conduit::SegmentDesc::remote_key`]). Puts
//!   and gets to ranks outside the neighbourhood are RDMA WRITE and READ
//!   ([`gex_conduit::RmaCapability`]), up to [`MAX_RMA`] per call split
//!   into work requests: in place (zero-copy) where the local side lies in
//!   this rank's registered segment, in pieces of the device's largest
//!   message, else through bounce buffers; to a created endpoint's
//!   segment, which is not registered, they are messages the target's
//!   conduit serves.
//! * 64-bit fetch-add and compare-swap (and the operations built on them)
//!   are NIC atomics ([`gex_conduit::AtomicCapability`]) to every rank,
//!   this one included, so that a domain using them uses them for every
//!   word (the coherence rule of the remote-atomics layer).
//! * A completion with an error status (a queue pair in the error state,
//!   RNR retries exceeded, a remote access error, a peer that does not
//!   answer within the transport timeout) ends the job with a message
//!   naming the peer, and so does a peer that returns no credits for
//!   `GEX_IBV_PEER_TIMEOUT` seconds while this rank waits for them. A
//!   heartbeat thread reads every peer's memory every quarter of that
//!   timeout, so a dead peer is noticed with nothing outstanding toward
//!   it; a rank that ends cleanly says BYE first.
//!
//! Everything that arrives is untrusted: message headers are decoded with
//! every field checked against the buffer, every range against this
//! rank's segment before memory is touched, and operation ids against the
//! table of operations in flight; a violation ends the job naming the
//! sender.

pub mod sim;
pub mod verbs;
pub mod wire;

#[cfg(feature = "rdma-sys")]
pub mod rdma;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use gex_bootstrap::vars::Lookup;
use gex_bootstrap::Bootstrap;
use gex_conduit::stats::{ConduitStats, Counter};
use gex_conduit::{
    AmLimits, AmSink, AtomicCapability, Conduit, ConduitFactory, GetDest, IncomingAm, Injected,
    Layout, OpCompletion, OutgoingAm, PollScope, PutSource, RmaCapability, SegmentDesc, ZeroLen,
};
use gex_conduit_smp::{hostname, SmpTransport};
use gex_types::{AmCategory, Dt, EpIndex, Error, Op, Rank, Result};

use verbs::{Device, Mr, Provider, QpNum, SendOp, Sge, Wc, WcStatus};

/// The largest Long payload (written by RDMA in bounce-buffer pieces).
pub const MAX_LONG: usize = 1 << 20;
/// Bytes of one bounce buffer (RDMA WRITE and READ staging).
pub const CHUNK: usize = 64 << 10;
/// The longest one-sided transfer of one call (the RMA layer splits longer
/// ones; this conduit splits each into work requests of at most the
/// device's largest message, or a bounce buffer, or into messages).
pub const MAX_RMA: usize = 1 << 20;
/// Bounce buffers per process.
const CHUNKS: usize = 64;
/// One-sided operations in flight per process, at most.
const MAX_OPS: usize = 4096;
/// Work requests outstanding per queue pair, at most (less if the device's
/// send queues are shorter).
const SQ_DEPTH: usize = 1024;
/// Completions taken per poll.
const CQ_BATCH: usize = 64;
/// Words per rank in the control region peers write: requests finished,
/// replies finished (credit returns), and BYE (non-zero once the rank
/// has ended cleanly).
const CTRL_WORDS: usize = 3;
/// The BYE word's index in a rank's control words.
const BYE: usize = 2;
/// Credit returns in flight per peer, at most (each with its own source).
const CREDIT_RING: usize = 8;
/// Messages delivered per poll.
const DELIVER_BATCH: usize = 64;

/// The request lane and the reply lane.
const REQ: usize = 0;
const REP: usize = 1;

// Work request ids: kind (8 bits), peer (24 bits), index (32 bits).
const W_RECV: u64 = 1;
const W_SLOT: u64 = 2;
const W_CHUNK: u64 = 3;
const W_CREDIT: u64 = 4;
const W_OP: u64 = 5;
const W_HB: u64 = 6;
const W_BYE: u64 = 7;

fn wr(kind: u64, peer: Rank, idx: u32) -> u64 {
    (kind << 56) | ((u64::from(peer) & 0xff_ffff) << 32) | u64::from(idx)
}

fn wr_parts(id: u64) -> (u64, Rank, u32) {
    (id >> 56, ((id >> 32) & 0xff_ffff) as Rank, id as u32)
}

/// The ibv conduit's settings; `Default` is what an empty environment
/// gives, [`IbvSettings::from_env`] reads the variables named on each
/// field.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct IbvSettings {
    /// `GEX_IBV_PROVIDER` (default `rdma-sys` when compiled in, else
    /// `sim`).
    pub provider: Provider,
    /// `GEX_IBV_BYPASS` (default on): ranks on one host talk through
    /// shared memory.
    pub bypass: bool,
    /// `GEX_IBV_CREDITS` (default 16, 1 to 1024): messages in flight per
    /// peer and lane, at most (per-peer receive buffers: twice this).
    pub credits: usize,
    /// `GEX_IBV_BUF` (default 65632, 608 to 1 MiB + 96): bytes of a receive
    /// buffer; the Medium limit is this less 96.
    pub buf: usize,
    /// `GEX_IBV_SRQ` (default on): receive buffers are one pool in a shared
    /// receive queue rather than `2 * credits` per peer.
    pub srq: bool,
    /// `GEX_IBV_SRQ_POOL` (default 256, 2 to 65536): receive buffers in the
    /// shared pool (and send buffers), raised to 2 per peer reached over
    /// the device and lowered to what the credits could ever use.
    pub srq_pool: usize,
    /// `GEX_IBV_PEER_TIMEOUT` (default 30 s): a peer that answers nothing
    /// for this long while this rank waits on it ends the job.
    pub peer_timeout: Duration,
    /// `GEX_HOST` (default the host name): the host identity for grouping
    /// ranks into neighbourhoods.
    pub host: Option<String>,
    /// `GEX_IBV_SIM_FAULT` (tests; default none): `KIND@RANK:AFTER`
    /// injects a fault of the simulated device on rank RANK once it has
    /// sent AFTER messages (KIND `qp_error`, `rnr` or `access`).
    pub sim_fault: Option<String>,
    /// `GEX_IBV_SIM_MAX_MSG` (tests; default 1 GiB, 65536 to 1 GiB): the
    /// simulated device's longest work request, so that one-sided
    /// transfers are seen split at it.
    pub sim_max_msg: usize,
}

const CREDIT_RANGE: std::ops::RangeInclusive<usize> = 1..=1024;
const POOL_RANGE: std::ops::RangeInclusive<usize> = 2..=65536;
const SIM_MSG_RANGE: std::ops::RangeInclusive<usize> = (64 << 10)..=sim::SIM_MAX_MSG;
const BUF_RANGE: std::ops::RangeInclusive<usize> =
    (512 + wire::MAX_HEADER)..=((1 << 20) + wire::MAX_HEADER);

impl Default for IbvSettings {
    fn default() -> IbvSettings {
        IbvSettings {
            provider: Provider::default_for_build(),
            bypass: true,
            credits: 16,
            buf: (64 << 10) + wire::MAX_HEADER,
            srq: true,
            srq_pool: 256,
            peer_timeout: Duration::from_secs(30),
            host: None,
            sim_fault: None,
            sim_max_msg: sim::SIM_MAX_MSG,
        }
    }
}

impl IbvSettings {
    /// The settings this process's environment gives; a bad value is an
    /// error naming the variable.
    pub fn from_env() -> Result<IbvSettings> {
        Self::from_lookup(Lookup::env())
    }

    /// The settings `vars` gives.
    pub fn from_lookup(vars: Lookup<'_>) -> Result<IbvSettings> {
        let d = IbvSettings::default();
        let provider = match vars.value("GEX_IBV_PROVIDER").as_deref() {
            None => d.provider,
            Some("sim") => Provider::Sim,
            Some("rdma-sys") => Provider::RdmaSys,
            Some(v) => {
                return Err(Error::bad_arg(format!(
                    "GEX_IBV_PROVIDER={v:?}: expected sim or rdma-sys"
                )))
            }
        };
        let timeout = match vars.value("GEX_IBV_PEER_TIMEOUT") {
            None => d.peer_timeout,
            Some(v) => v
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s > 0.0 && *s <= 86_400.0)
                .map(Duration::from_secs_f64)
                .ok_or_else(|| {
                    Error::bad_arg(format!(
                        "GEX_IBV_PEER_TIMEOUT={v:?}: expected seconds, more than 0 and at most 86400"
                    ))
                })?,
        };
        Ok(IbvSettings {
            provider,
            bypass: vars.flag("GEX_IBV_BYPASS", d.bypass)?,
            credits: vars
                .parse("GEX_IBV_CREDITS", "1 to 1024", |c| CREDIT_RANGE.contains(c))?
                .unwrap_or(d.credits),
            buf: vars
                .parse(
                    "GEX_IBV_BUF",
                    &format!("{} to {}", BUF_RANGE.start(), BUF_RANGE.end()),
                    |b| BUF_RANGE.contains(b),
                )?
                .unwrap_or(d.buf),
            srq: vars.flag("GEX_IBV_SRQ", d.srq)?,
            srq_pool: vars
                .parse("GEX_IBV_SRQ_POOL", "2 to 65536", |c| POOL_RANGE.contains(c))?
                .unwrap_or(d.srq_pool),
            peer_timeout: timeout,
            host: vars.value("GEX_HOST"),
            sim_fault: vars.value("GEX_IBV_SIM_FAULT"),
            sim_max_msg: vars
                .parse("GEX_IBV_SIM_MAX_MSG", "65536 to 1073741824", |m| {
                    SIM_MSG_RANGE.contains(m)
                })?
                .unwrap_or(d.sim_max_msg),
        })
    }

    /// Checks values set in code against the variables' bounds.
    pub fn validate(&self) -> Result<()> {
        if !CREDIT_RANGE.contains(&self.credits) {
            return Err(Error::bad_arg(format!(
                "ibv conduit: IbvSettings::credits (GEX_IBV_CREDITS) = {}: expected 1 to 1024",
                self.credits
            )));
        }
        if !BUF_RANGE.contains(&self.buf) {
            return Err(Error::bad_arg(format!(
                "ibv conduit: IbvSettings::buf (GEX_IBV_BUF) = {}: expected {} to {}",
                self.buf,
                BUF_RANGE.start(),
                BUF_RANGE.end()
            )));
        }
        if !POOL_RANGE.contains(&self.srq_pool) {
            return Err(Error::bad_arg(format!(
                "ibv conduit: IbvSettings::srq_pool (GEX_IBV_SRQ_POOL) = {}: expected 2 to 65536",
                self.srq_pool
            )));
        }
        if self.peer_timeout.is_zero() {
            return Err(Error::bad_arg(
                "ibv conduit: IbvSettings::peer_timeout (GEX_IBV_PEER_TIMEOUT) is 0",
            ));
        }
        Ok(())
    }
}

/// Creates the ibv conduit.
#[derive(Clone, Debug, Default)]
pub struct IbvFactory {
    settings: Option<IbvSettings>,
}

impl IbvFactory {
    /// A factory whose conduit reads the environment when created.
    pub fn from_env() -> IbvFactory {
        IbvFactory { settings: None }
    }

    /// A factory whose conduit uses `settings`.
    pub fn new(settings: IbvSettings) -> IbvFactory {
        IbvFactory {
            settings: Some(settings),
        }
    }
}

impl ConduitFactory for IbvFactory {
    fn name(&self) -> &'static str {
        "ibv"
    }

    fn create(&self, boot: Bootstrap) -> Result<Box<dyn Conduit>> {
        let s = match &self.settings {
            Some(s) => s.clone(),
            None => IbvSettings::from_env()?,
        };
        Ok(Box::new(IbvConduit::new(boot, &s)?))
    }
}

/// Opens the device `provider` names.
fn open_device(
    provider: Provider,
    timeout: Duration,
    sim_max_msg: usize,
) -> Result<(Arc<dyn Device>, Option<sim::SimDevice>)> {
    match provider {
        Provider::Sim => {
            let d = sim::SimDevice::open_with(timeout, sim_max_msg)?;
            Ok((Arc::new(d.clone()), Some(d)))
        }
        #[cfg(feature = "rdma-sys")]
        Provider::RdmaSys => Ok((Arc::new(rdma::VerbsDevice::open()?), None)),
        #[cfg(not(feature = "rdma-sys"))]
        Provider::RdmaSys => Err(Error::not_init(
            "ibv conduit: GEX_IBV_PROVIDER=rdma-sys, but this build has no rdma-sys provider \
             (build gex-conduit-ibv with the feature rdma-sys, or set GEX_IBV_PROVIDER=sim)",
        )),
    }
}

/// Memory registered for the life of the process (never freed: a device
/// and its peers may write it at any time while the process runs).
fn registered(dev: &dyn Device, len: usize) -> Result<(&'static mut [u8], Mr)> {
    // Allocated as u64 words: 8-aligned (credit words are atomics).
    let words: &'static mut [u64] =
        Box::leak(vec![0u64; len.div_ceil(8).max(1)].into_boxed_slice());
    // SAFETY: the words are leaked (allocated for the process) and viewed
    // as their bytes, which any bit pattern is.
    let mem =
        unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr() as *mut u8, words.len() * 8) };
    // SAFETY: the memory is leaked, so it stays allocated for the process.
    let mr = unsafe { dev.register(mem.as_mut_ptr(), mem.len())? };
    Ok((mem, mr))
}

/// A rank's receive buffers and the credits it grants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Budget {
    /// Receive buffers in all (and send buffers).
    bufs: usize,
    /// In one shared receive queue (else `2 * credits` per peer).
    srq: bool,
    /// The window every peer starts with on each lane: messages it may
    /// have unfinished here.
    window0: u64,
    /// Buffers not in any window: granted, one window at a time, to peers
    /// that use theirs, up to `credits` per lane.
    reserve: usize,
}

/// The budget of a rank reaching `am_peers` peers over the device:
/// per-peer buffers (`2 * credits` each, windows of `credits`) without a
/// shared receive queue; with one, `pool` buffers, but at least one per
/// peer and lane and at most what every window full would use, split
/// evenly into starting windows, the rest held in reserve. Either way the
/// windows of all peers on both lanes never add up to more than the
/// buffers posted, so a SEND always finds a receive.
fn budget(srq: bool, pool: usize, credits: usize, am_peers: usize) -> Budget {
    let full = 2 * credits * am_peers;
    if !srq || am_peers == 0 {
        return Budget {
            bufs: full,
            srq: false,
            window0: credits as u64,
            reserve: 0,
        };
    }
    let bufs = pool.clamp(2 * am_peers, full);
    let window0 = (bufs / (2 * am_peers)).clamp(1, credits);
    Budget {
        bufs,
        srq: true,
        window0: window0 as u64,
        reserve: bufs - 2 * am_peers * window0,
    }
}

/// Sending state toward one peer.
struct PeerTx {
    /// Messages sent per lane (cumulative).
    sent: [u64; 2],
    /// Work requests outstanding on the queue pair.
    sq_used: usize,
    /// Credit returns to this peer in flight.
    credit_inflight: usize,
    /// Credit returns posted to this peer (the next one's source slot).
    credit_next: usize,
    /// Credits last returned to this peer, per lane.
    reported: [u64; 2],
}

struct Peer {
    qp: QpNum,
    /// This peer's index among the peers Active Messages go to over the
    /// device (their buffers), if it is one.
    am: Option<usize>,
    tx: Mutex<PeerTx>,
    /// Messages of this peer's that arrived here, per lane (cumulative).
    arrived: [AtomicU64; 2],
    /// Messages of this peer's finished here (their buffers posted
    /// again), per lane (cumulative).
    done: [AtomicU64; 2],
    /// Messages this peer may have sent here, per lane (cumulative): what
    /// it has finished plus its window; returned to it as its credits.
    granted: [AtomicU64; 2],
    /// Where our credit returns go in the peer (address, key).
    ctrl_remote: (u64, u32),
}

/// A one-sided operation in flight.
enum What {
    /// RDMA WRITEs, from bounce buffers (`chunks`: piece i from chunk i;
    /// the source was released when copied) or from the source in place
    /// (no chunks; kept until every write completes).
    Write {
        _src: Option<PutSource>,
        chunks: Vec<u32>,
    },
    /// RDMA READs, into bounce buffers (`chunks`, copied out at the end)
    /// or into the destination in place (no chunks).
    Read { dst: GetDest, chunks: Vec<u32> },
    /// A NIC atomic; the old value lands in the scratch word of its slot.
    Atomic { result: Option<GetDest> },
    /// A put to a created endpoint's segment, as messages of `piece` bytes
    /// to offsets from `base`, each acknowledged once (`got`).
    MsgPut {
        base: u64,
        piece: usize,
        len: usize,
        got: Vec<bool>,
    },
    /// A get from a created endpoint's segment, as messages asking for
    /// `piece` bytes at offsets from `base`, each answered once.
    MsgGet {
        dst: GetDest,
        base: u64,
        piece: usize,
        got: Vec<bool>,
    },
}

struct OpEntry {
    peer: Rank,
    what: What,
    done: Arc<dyn OpCompletion>,
    /// Work requests (or answers) still to come.
    left: usize,
}

/// The work requests of one operation: operation and local buffer each.
type WorkRequests = Vec<(SendOp, Sge)>;

/// The pieces `[at, at + n)` of `len` bytes split at `max` (one empty
/// piece for an empty transfer).
fn pieces(len: usize, max: usize) -> impl Iterator<Item = (usize, usize)> {
    let max = max.max(1);
    (0..len.div_ceil(max).max(1)).map(move |i| (i * max, max.min(len - i * max)))
}

struct OpSlot {
    gen: u32,
    op: Option<OpEntry>,
}

#[derive(Default)]
struct Ops {
    slots: Vec<OpSlot>,
    free: Vec<u32>,
}

impl Ops {
    fn insert(&mut self, op: OpEntry) -> Option<u64> {
        let slot = match self.free.pop() {
            Some(s) => s,
            None if self.slots.len() < MAX_OPS => {
                self.slots.push(OpSlot { gen: 0, op: None });
                (self.slots.len() - 1) as u32
            }
            None => return None,
        };
        let s = &mut self.slots[slot as usize];
        s.gen = s.gen.wrapping_add(1);
        s.op = Some(op);
        Some((u64::from(s.gen) << 32) | u64::from(slot))
    }

    fn take(&mut self, id: u64) -> Option<OpEntry> {
        let slot = id as u32;
        let s = self.slots.get_mut(slot as usize)?;
        if u64::from(s.gen) != id >> 32 {
            return None;
        }
        let op = s.op.take()?;
        self.free.push(slot);
        Some(op)
    }

    /// Undoes an insert whose work request was never posted.
    fn cancel(&mut self, id: u64) -> Option<OpEntry> {
        self.take(id)
    }
}

/// This rank's segment once attached: (base, size, region).
#[derive(Clone, Copy)]
struct MySeg {
    base: usize,
    size: usize,
    mr: Mr,
}

/// A message waiting for its handler.
enum InMsg {
    /// A request, in its receive buffer (returned after the handler).
    InBuf { src: Rank, buf: u32, len: usize },
    /// A reply, copied out (its buffer returned at once).
    Copied { src: Rank, bytes: Vec<u8> },
}

#[derive(Default)]
struct Counts {
    sends: AtomicU64,
    received: AtomicU64,
    rdma_writes: AtomicU64,
    rdma_reads: AtomicU64,
    atomics: AtomicU64,
    credit_writes: AtomicU64,
    credit_waits: AtomicU64,
    rma_puts: AtomicU64,
    rma_gets: AtomicU64,
    rma_served: AtomicU64,
    long_pieces: AtomicU64,
    grants: AtomicU64,
}

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
struct Liveness {
    dev: Arc<dyn Device>,
    /// Per rank: (queue pair, address of this rank's control words there,
    /// key); `None` for this rank.
    peers: Vec<Option<(QpNum, u64, u32)>>,
    /// A heartbeat is in flight to the rank.
    inflight: Vec<AtomicBool>,
    /// Where heartbeat READs land (8 bytes per rank) and its key.
    scratch: (usize, u32),
    /// A registered word holding 1: the source of BYE writes.
    bye_src: (usize, u32),
    ctrl: &'static [AtomicU64],
    stop: AtomicBool,
}

impl Liveness {
    /// Whether `r` has said BYE (ended cleanly).
    fn departed(&self, r: Rank) -> bool {
        self.ctrl[CTRL_WORDS * r as usize + BYE].load(Ordering::Acquire) != 0
    }

    /// Posts a heartbeat to every peer with none in flight.
    fn beat(&self) {
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
    fn say_bye(&self, max: Duration) {
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
fn heartbeat_thread(l: Arc<Liveness>, tick: Duration) {
    loop {
        std::thread::sleep(tick);
        if l.stop.load(Ordering::Acquire) {
            return;
        }
        l.beat();
    }
}

/// The liveness state of this process's conduits, for the exit hook.
static LIVE: Mutex<Vec<Arc<Liveness>>> = Mutex::new(Vec::new());

extern "C" fn bye_at_exit() {
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

/// The ibv conduit (see the crate docs).
pub struct IbvConduit {
    boot: Bootstrap,
    layout: Layout,
    me: Rank,
    smp: SmpTransport,
    dev: Arc<dyn Device>,
    sim: Option<sim::SimDevice>,
    peers: Vec<Peer>,
    credits: usize,
    buf: usize,
    /// Receive buffers: `budget.bufs` of `buf` bytes (per-peer: AM peer
    /// a's are `2 * credits` from `a * 2 * credits`).
    recv_mem: usize,
    recv_mr: Mr,
    budget: Budget,
    /// The shared receive queue, with one.
    srq: Option<verbs::SrqNum>,
    /// Buffers not yet granted to any peer's window.
    reserve: AtomicUsize,
    /// The AM peers, by their index.
    am_ranks: Vec<Rank>,
    /// Queue pair -> rank (a receive of the shared queue names its queue
    /// pair only).
    qp_rank: std::collections::HashMap<QpNum, Rank>,
    /// Send buffers (`budget.bufs` of `buf` bytes), shared by every peer.
    send_mem: usize,
    send_mr: Mr,
    send_free: Mutex<Vec<u32>>,
    /// Control words peers write: per rank, [requests finished, replies
    /// finished, BYE].
    ctrl: &'static [AtomicU64],
    /// The source of our credit writes: per rank, two words.
    ctrl_out: usize,
    ctrl_out_mr: Mr,
    /// Bounce buffers.
    chunk_mem: usize,
    chunk_mr: Mr,
    chunks_free: Mutex<Vec<u32>>,
    /// Atomics' result words, one per operation slot.
    scratch_mem: usize,
    scratch_mr: Mr,
    ops: Mutex<Ops>,
    cq: Mutex<Vec<Wc>>,
    inbox: Mutex<VecDeque<InMsg>>,
    inbox_len: AtomicUsize,
    delivering: AtomicBool,
    credits_dirty: AtomicBool,
    segment: OnceLock<MySeg>,
    /// Every rank's segment: (owner base, size, rkey).
    seg_keys: OnceLock<Vec<(u64, usize, u32)>>,
    peer_timeout: Duration,
    /// Work requests outstanding per queue pair, at most.
    sq_depth: usize,
    /// The device's longest message (zero-copy pieces).
    max_msg: usize,
    /// Heartbeats and BYE.
    live: Arc<Liveness>,
    /// A fault to inject after this many sends (`GEX_IBV_SIM_FAULT`).
    fault: Option<(sim::Fault, u64)>,
    counts: Counts,
}

impl std::fmt::Debug for IbvConduit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IbvConduit")
            .field("rank", &self.me)
            .field("provider", &self.dev.provider())
            .finish()
    }
}

fn fatal(msg: &str) -> ! {
    gex_bootstrap::fatal(msg)
}

/// Parses `GEX_IBV_SIM_FAULT` (`KIND@RANK:AFTER`) for rank `me`.
fn parse_fault(spec: &str, me: Rank) -> Result<Option<(String, u64)>> {
    let bad = || {
        Error::bad_arg(format!(
            "GEX_IBV_SIM_FAULT={spec:?}: expected KIND@RANK:AFTER, KIND one of qp_error, rnr, access"
        ))
    };
    let (kind, rest) = spec.split_once('@').ok_or_else(bad)?;
    let (rank, after) = rest.split_once(':').ok_or_else(bad)?;
    let rank: Rank = rank.parse().map_err(|_| bad())?;
    let after: u64 = after.parse().map_err(|_| bad())?;
    if !["qp_error", "rnr", "access"].contains(&kind) {
        return Err(bad());
    }
    Ok((rank == me).then(|| (kind.to_string(), after)))
}

impl IbvConduit {
    /// Joins the job: opens the device, learns every rank's host and
    /// queue pair addresses, connects a queue pair to every rank and posts
    /// the receive buffers. Collective over the job.
    pub fn new(boot: Bootstrap, settings: &IbvSettings) -> Result<IbvConduit> {
        settings.validate()?;
        let me = boot.rank();
        let n = boot.size();
        let (dev, simdev) = open_device(
            settings.provider,
            settings.peer_timeout,
            settings.sim_max_msg,
        )?;
        let lim = dev.limits();
        if lim.max_msg < CHUNK.max(settings.buf) {
            return Err(Error::resource(format!(
                "ibv conduit: the device's largest message ({} bytes) is under {} bytes",
                lim.max_msg,
                CHUNK.max(settings.buf)
            )));
        }
        // Less one for the heartbeat and one for the BYE, not counted.
        let sq_depth = SQ_DEPTH.min(lim.max_send_wr).saturating_sub(2);
        // A Long takes its pieces, a credit return and the SEND at once.
        let use_srq = settings.srq && lim.max_srq_wr > 0 && n > 1;
        if sq_depth < MAX_LONG / CHUNK + 2 || (!use_srq && lim.max_recv_wr < 2 * settings.credits) {
            return Err(Error::resource(format!(
                "ibv conduit: the device's queues ({} sends, {} receives) are too short for {} \
                 credits per lane (GEX_IBV_CREDITS) and {}-piece Longs",
                lim.max_send_wr,
                lim.max_recv_wr,
                settings.credits,
                MAX_LONG / CHUNK
            )));
        }
        let host_name = settings.host.clone().unwrap_or_else(hostname);

        // The shared receive queue, as large as any neighbourhood could
        // need (the buffers posted are counted once it is known), then
        // queue pairs, one per rank, and the credit words.
        let pool = settings.srq_pool.min(lim.max_srq_wr);
        let srq = if use_srq {
            let most = budget(true, pool, settings.credits, n as usize - 1).bufs;
            Some(dev.create_srq(most.min(lim.max_srq_wr))?)
        } else {
            None
        };
        let qps: Vec<QpNum> = (0..n)
            .map(|r| dev.create_qp(if r == me { None } else { srq }))
            .collect::<Result<_>>()?;
        let (ctrl_bytes, ctrl_mr) = registered(&*dev, 8 * CTRL_WORDS * n as usize)?;
        let ctrl: &'static [AtomicU64] = {
            let p = ctrl_bytes.as_mut_ptr();
            // SAFETY: `registered` allocates 8-aligned words for the life of
            // the process, 2 per rank; AtomicU64 has the size and (on the
            // targets with 64-bit atomics) the alignment of u64, and from
            // here on the words are only accessed as atomics here (the
            // device writes them as a NIC does, by DMA).
            unsafe { std::slice::from_raw_parts(p as *const AtomicU64, CTRL_WORDS * n as usize) }
        };
        let (ctrl_out, ctrl_out_mr) = registered(&*dev, 16 * CREDIT_RING * n as usize)?;

        // Exchange: settings, host, credit words, queue pair addresses.
        let mut mine = Vec::new();
        mine.extend_from_slice(&(settings.credits as u32).to_le_bytes());
        mine.extend_from_slice(&(settings.buf as u32).to_le_bytes());
        mine.extend_from_slice(&(ctrl_mr.addr as u64).to_le_bytes());
        mine.extend_from_slice(&ctrl_mr.rkey.to_le_bytes());
        mine.push(u8::from(settings.bypass));
        mine.extend_from_slice(&(host_name.len() as u16).to_le_bytes());
        mine.extend_from_slice(host_name.as_bytes());
        for &q in &qps {
            let a = dev.address(q);
            mine.extend_from_slice(&(a.len() as u16).to_le_bytes());
            mine.extend_from_slice(&a);
        }
        let all = boot.exchange(&mine, &mut || {})?;
        struct Info {
            credits: u32,
            buf: u32,
            ctrl: (u64, u32),
            bypass: bool,
            host: String,
            /// Its queue pair for this rank.
            qp_addr: Vec<u8>,
        }
        let parse = |r: usize, b: &[u8]| -> Option<Info> {
            let u32_at = |i: usize| Some(u32::from_le_bytes(b.get(i..i + 4)?.try_into().ok()?));
            let credits = u32_at(0)?;
            let buf = u32_at(4)?;
            let ctrl_addr = u64::from_le_bytes(b.get(8..16)?.try_into().ok()?);
            let ctrl_key = u32_at(16)?;
            let bypass = *b.get(20)? != 0;
            let hl = u16::from_le_bytes(b.get(21..23)?.try_into().ok()?) as usize;
            let host = String::from_utf8_lossy(b.get(23..23 + hl)?).into_owned();
            let mut at = 23 + hl;
            let mut qp_addr = None;
            for q in 0..n as usize {
                let l = u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?) as usize;
                let a = b.get(at + 2..at + 2 + l)?;
                if q == me as usize {
                    qp_addr = Some(a.to_vec());
                }
                at += 2 + l;
            }
            let _ = r;
            Some(Info {
                credits,
                buf,
                ctrl: (ctrl_addr, ctrl_key),
                bypass,
                host,
                qp_addr: qp_addr?,
            })
        };
        let mut infos = Vec::with_capacity(n as usize);
        for (r, b) in all.iter().enumerate() {
            let i = parse(r, b).ok_or_else(|| {
                Error::resource(format!("ibv conduit: rank {r} sent a malformed address"))
            })?;
            if (i.credits as usize, i.buf as usize, i.bypass)
                != (settings.credits, settings.buf, settings.bypass)
            {
                return Err(Error::bad_arg(format!(
                    "ibv conduit: rank {r} has GEX_IBV_CREDITS={}, GEX_IBV_BUF={}, GEX_IBV_BYPASS={} \
                     but rank {me} has {}, {}, {}: every rank must have the same",
                    i.credits,
                    i.buf,
                    u8::from(i.bypass),
                    settings.credits,
                    settings.buf,
                    u8::from(settings.bypass)
                )));
            }
            infos.push(i);
        }
        let my_host = infos[me as usize].host.clone();
        let host: Vec<Rank> = (0..n)
            .filter(|&r| infos[r as usize].host == my_host)
            .collect();
        let mut distinct: Vec<&str> = Vec::new();
        for i in &infos {
            if !distinct.contains(&i.host.as_str()) {
                distinct.push(&i.host);
            }
        }
        let host_set = (
            distinct.len() as Rank,
            distinct.iter().position(|h| *h == my_host).unwrap_or(0) as Rank,
        );
        let (nbrhd, nbrhd_set) = if settings.bypass {
            (host.clone(), host_set)
        } else {
            (vec![me], (n, me))
        };

        // Buffers for the peers Active Messages reach over the device, and
        // the windows each peer starts with here (which every rank learns).
        let am_peers: Vec<Rank> = (0..n).filter(|r| !nbrhd.contains(r)).collect();
        let bud = budget(srq.is_some(), pool, settings.credits, am_peers.len());
        if bud.srq && bud.bufs > lim.max_srq_wr {
            return Err(Error::resource(format!(
                "ibv conduit: the device's shared receive queue holds {} receives, fewer than \
                 one per lane for each of {} peers (set GEX_IBV_SRQ=0 for per-peer buffers)",
                lim.max_srq_wr,
                am_peers.len()
            )));
        }
        let windows = boot.exchange(&bud.window0.to_le_bytes(), &mut || {})?;
        for (r, w) in windows.iter().enumerate() {
            let w = <[u8; 8]>::try_from(w.as_slice())
                .ok()
                .map(u64::from_le_bytes)
                .filter(|w| (1..=settings.credits as u64).contains(w))
                .ok_or_else(|| {
                    Error::resource(format!("ibv conduit: rank {r} sent a malformed window"))
                })?;
            // What rank r grants this rank before its first credit return
            // (nothing else writes these words before the barrier below).
            ctrl[CTRL_WORDS * r + REQ].store(w, Ordering::Release);
            ctrl[CTRL_WORDS * r + REP].store(w, Ordering::Release);
        }
        let (recv_mem, recv_mr) = registered(&*dev, bud.bufs * settings.buf)?;
        let (send_mem, send_mr) = registered(&*dev, bud.bufs * settings.buf)?;
        let (chunk_mem, chunk_mr) = registered(&*dev, CHUNKS * CHUNK)?;
        let (scratch_mem, scratch_mr) = registered(&*dev, 8 * MAX_OPS)?;
        let (hb_mem, hb_mr) = registered(&*dev, 8 * n as usize)?;
        let (bye_mem, bye_mr) = registered(&*dev, 8)?;
        bye_mem[0] = 1;
        let live = Arc::new(Liveness {
            dev: dev.clone(),
            peers: (0..n)
                .map(|r| {
                    (r != me).then(|| {
                        let i = &infos[r as usize];
                        (
                            qps[r as usize],
                            i.ctrl.0 + 8 * (CTRL_WORDS as u64) * u64::from(me),
                            i.ctrl.1,
                        )
                    })
                })
                .collect(),
            inflight: (0..n).map(|_| AtomicBool::new(false)).collect(),
            scratch: (hb_mem.as_mut_ptr() as usize, hb_mr.lkey),
            bye_src: (bye_mem.as_mut_ptr() as usize, bye_mr.lkey),
            ctrl,
            stop: AtomicBool::new(false),
        });

        let peers: Vec<Peer> = (0..n)
            .map(|r| {
                let am = am_peers.iter().position(|&p| p == r);
                Peer {
                    qp: qps[r as usize],
                    am,
                    tx: Mutex::new(PeerTx {
                        sent: [0; 2],
                        sq_used: 0,
                        credit_inflight: 0,
                        credit_next: 0,
                        reported: [0; 2],
                    }),
                    arrived: [AtomicU64::new(0), AtomicU64::new(0)],
                    done: [AtomicU64::new(0), AtomicU64::new(0)],
                    granted: [AtomicU64::new(bud.window0), AtomicU64::new(bud.window0)],
                    ctrl_remote: (
                        infos[r as usize].ctrl.0 + 8 * (CTRL_WORDS as u64) * u64::from(me),
                        infos[r as usize].ctrl.1,
                    ),
                }
            })
            .collect();
        let smp = SmpTransport::new(&boot, &nbrhd)?;
        let fault = match &settings.sim_fault {
            Some(spec) => parse_fault(spec, me)?.map(|(k, after)| {
                let f = match k.as_str() {
                    "qp_error" => sim::Fault::QpError(u32::MAX),
                    "rnr" => sim::Fault::RnrNextSend,
                    _ => sim::Fault::AccessNextRdma,
                };
                (f, after)
            }),
            None => None,
        };
        let conduit = IbvConduit {
            layout: Layout::new(nbrhd, host, nbrhd_set, host_set),
            me,
            smp,
            sim: simdev,
            credits: settings.credits,
            buf: settings.buf,
            recv_mem: recv_mem.as_mut_ptr() as usize,
            recv_mr,
            budget: bud,
            srq: srq.filter(|_| bud.srq),
            reserve: AtomicUsize::new(bud.reserve),
            qp_rank: qps
                .iter()
                .enumerate()
                .map(|(r, &q)| (q, r as Rank))
                .collect(),
            am_ranks: am_peers,
            send_mem: send_mem.as_mut_ptr() as usize,
            send_mr,
            send_free: Mutex::new((0..bud.bufs as u32).rev().collect()),
            ctrl,
            ctrl_out: ctrl_out.as_mut_ptr() as usize,
            ctrl_out_mr,
            chunk_mem: chunk_mem.as_mut_ptr() as usize,
            chunk_mr,
            chunks_free: Mutex::new((0..CHUNKS as u32).rev().collect()),
            scratch_mem: scratch_mem.as_mut_ptr() as usize,
            scratch_mr,
            ops: Mutex::new(Ops::default()),
            cq: Mutex::new(Vec::with_capacity(CQ_BATCH)),
            inbox: Mutex::new(VecDeque::new()),
            inbox_len: AtomicUsize::new(0),
            delivering: AtomicBool::new(false),
            credits_dirty: AtomicBool::new(false),
            segment: OnceLock::new(),
            seg_keys: OnceLock::new(),
            peer_timeout: settings.peer_timeout,
            sq_depth,
            max_msg: lim.max_msg,
            live,
            fault,
            counts: Counts::default(),
            peers,
            dev,
            boot,
        };
        // Receives first, then connect, then a barrier: nobody sends
        // before every buffer is posted.
        for b in 0..conduit.budget.bufs as u32 {
            conduit.post_recv(b)?;
        }
        for (r, p) in conduit.peers.iter().enumerate() {
            conduit.dev.connect(p.qp, &infos[r].qp_addr)?;
        }
        conduit.boot.barrier(&mut || {})?;
        {
            static HOOK: std::sync::Once = std::sync::Once::new();
            HOOK.call_once(|| {
                // SAFETY: registering a plain extern "C" function without
                // arguments; it takes locks with try_lock only and never
                // calls exit.
                unsafe { libc::atexit(bye_at_exit) };
            });
            LIVE.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(conduit.live.clone());
            let tick =
                (conduit.peer_timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(1));
            let l = conduit.live.clone();
            std::thread::Builder::new()
                .name("gex-ibv-heartbeat".into())
                .spawn(move || heartbeat_thread(l, tick))
                .map_err(|e| Error::resource(format!("ibv conduit: heartbeat thread: {e}")))?;
        }
        Ok(conduit)
    }

    /// The simulated device, when that is the provider (tests inject
    /// faults through it).
    pub fn sim_device(&self) -> Option<&sim::SimDevice> {
        self.sim.as_ref()
    }

    /// The queue pair this rank uses toward `peer`.
    pub fn qp_of(&self, peer: Rank) -> Option<QpNum> {
        self.peers.get(peer as usize).map(|p| p.qp)
    }

    /// Limits to a peer reached over the device: a Long to a created
    /// endpoint's segment (not registered) travels in pieces, so it is
    /// carried up to [`MAX_LONG`] like any Long.
    fn net_limits(&self) -> AmLimits {
        let inline = self.buf - wire::MAX_HEADER;
        let s = SmpTransport::limits();
        AmLimits::new(
            inline.min(s.max_request_medium),
            inline.min(s.max_reply_medium),
            MAX_LONG.min(s.max_request_long),
            MAX_LONG.min(s.max_reply_long),
        )
    }

    /// Limits to a neighbour reached through shared memory (this rank
    /// included): a Long to its client memory is carried in a ring record.
    fn smp_limits(&self) -> AmLimits {
        self.net_limits().min(SmpTransport::limits())
    }

    /// The largest payload a message carries.
    fn inline_max(&self) -> usize {
        self.buf - wire::MAX_HEADER
    }

    /// Address of buffer `b` in the region at `base`.
    fn buf_addr(&self, base: usize, b: u32) -> usize {
        base + b as usize * self.buf
    }

    /// The rank whose queue pair receive buffer `b` is posted on, without
    /// a shared receive queue.
    fn buf_owner(&self, b: u32) -> Rank {
        self.am_ranks[b as usize / (2 * self.credits)]
    }

    /// Posts receive buffer `b` (to the shared receive queue, or to its
    /// owner's queue pair).
    fn post_recv(&self, b: u32) -> Result<()> {
        let addr = self.buf_addr(self.recv_mem, b);
        let sge = Sge {
            addr,
            len: self.buf as u32,
            lkey: self.recv_mr.lkey,
        };
        // SAFETY: the buffer lies in the registered receive region, which
        // lives for the process; nothing reads or writes it until its
        // completion is polled (the buffer is ours again only then).
        unsafe {
            match self.srq {
                Some(q) => self.dev.post_srq_recv(q, wr(W_RECV, 0, b), sge),
                None => {
                    let owner = self.buf_owner(b);
                    self.dev
                        .post_recv(self.peers[owner as usize].qp, wr(W_RECV, owner, b), sge)
                }
            }
        }
    }

    /// A message of `src`'s on `lane` is finished and its buffer posted
    /// again: the window it used goes back to `src`, grown (toward
    /// `credits`) from the reserve while that lasts.
    fn finish_msg(&self, src: Rank, lane: usize) {
        let p = &self.peers[src as usize];
        let done = p.done[lane].fetch_add(1, Ordering::AcqRel) + 1;
        let granted = p.granted[lane].load(Ordering::Acquire);
        // The window left open after this message: granted - done.
        let open = granted.saturating_sub(done);
        let want = (self.credits as u64).saturating_sub(open + 1);
        let extra = if want == 0 {
            0
        } else {
            self.reserve
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |r| {
                    (r > 0).then(|| r - (want as usize).min(r))
                })
                .map_or(0, |r| (want as usize).min(r) as u64)
        };
        if extra > 0 {
            self.counts.grants.fetch_add(extra, Ordering::Relaxed);
        }
        p.granted[lane].fetch_add(1 + extra, Ordering::AcqRel);
        self.credits_dirty.store(true, Ordering::Release);
    }

    /// Ends the job for a completion that failed toward `peer`.
    fn failed(&self, peer: Rank, what: &str, status: WcStatus) -> ! {
        let why = match status {
            WcStatus::RetryExceeded => format!("; rank {peer} may have died or stopped"),
            WcStatus::RnrRetryExceeded => format!("; rank {peer} posted no receive"),
            _ => String::new(),
        };
        fatal(&format!(
            "ibv conduit: rank {}: {what} with rank {peer} failed: {status} (the queue pair to rank {peer} is in the error state{why})",
            self.me
        ))
    }

    /// Takes completions and acts on them: frees send buffers, bounce
    /// buffers and queue slots, completes operations, queues arrived
    /// messages. One thread at a time.
    fn drain_cq(&self) -> usize {
        let Ok(mut wcs) = self.cq.try_lock() else {
            return 0;
        };
        wcs.clear();
        let n = self.dev.poll_cq(&mut wcs, CQ_BATCH);
        for wc in wcs.iter() {
            self.completed(wc);
        }
        n
    }

    fn completed(&self, wc: &Wc) {
        let (kind, peer, idx) = wr_parts(wc.wr_id);
        // By the id: an error completion's opcode is undefined in verbs.
        if kind == W_RECV {
            // A receive of the shared queue is known by its queue pair.
            let peer = match self.srq {
                Some(_) => *self.qp_rank.get(&wc.qp).unwrap_or_else(|| {
                    fatal(&format!(
                        "ibv conduit: a receive completed on queue pair {}, which is no peer's",
                        wc.qp
                    ))
                }),
                None => peer,
            };
            match wc.status {
                WcStatus::Success => {}
                // The queue pair went to the error state: its cause is
                // reported by the send side when this rank needs the peer
                // (a peer that ended after its last message leaves exactly
                // this behind, and nothing is wrong).
                WcStatus::Flushed => return,
                s => self.failed(peer, "receiving", s),
            }
            self.counts.received.fetch_add(1, Ordering::Relaxed);
            self.arrived(peer, idx, wc.byte_len as usize);
            return;
        }
        let Some(p) = self.peers.get(peer as usize) else {
            fatal(&format!(
                "ibv conduit: a completion names rank {peer}, not in the job"
            ));
        };
        match kind {
            W_HB => {
                if wc.status == WcStatus::Success {
                    self.live.inflight[peer as usize].store(false, Ordering::Release);
                } else if !self.live.departed(peer) {
                    self.failed(peer, "a heartbeat", wc.status);
                }
                return;
            }
            W_BYE => return,
            _ => {}
        }
        {
            let mut tx = p.tx.lock().unwrap_or_else(|e| e.into_inner());
            tx.sq_used = tx.sq_used.saturating_sub(1);
            match kind {
                W_SLOT => self
                    .send_free
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(idx),
                W_CREDIT => tx.credit_inflight = tx.credit_inflight.saturating_sub(1),
                _ => {}
            }
        }
        if wc.status != WcStatus::Success {
            match kind {
                // A credit return to a rank that has ended: nothing needs it.
                W_CREDIT if matches!(wc.status, WcStatus::RetryExceeded | WcStatus::Flushed) => {
                    return
                }
                W_CREDIT => self.failed(peer, "returning credits", wc.status),
                W_SLOT => self.failed(peer, "a SEND", wc.status),
                W_CHUNK => self.failed(peer, "an RDMA WRITE of a Long payload", wc.status),
                _ => self.failed(peer, "a one-sided operation", wc.status),
            }
        }
        match kind {
            W_CHUNK => self.free_chunk(idx),
            W_OP => {
                let op = {
                    let mut ops = self.ops.lock().unwrap_or_else(|e| e.into_inner());
                    let Some(s) = ops.slots.get_mut(idx as usize) else {
                        fatal("ibv conduit: a completion names no operation in flight");
                    };
                    let gen = s.gen;
                    let Some(e) = s.op.as_mut() else {
                        fatal("ibv conduit: a completion names no operation in flight");
                    };
                    e.left = e.left.saturating_sub(1);
                    if e.left == 0 {
                        ops.take((u64::from(gen) << 32) | u64::from(idx))
                    } else {
                        None
                    }
                };
                if let Some(op) = op {
                    self.finish(op, idx);
                }
            }
            _ => {}
        }
    }

    /// Finishes a one-sided operation whose work request completed.
    fn finish(&self, op: OpEntry, slot: u32) {
        match op.what {
            What::Write { _src, chunks } => {
                drop(_src);
                self.free_chunks(&chunks);
            }
            What::Read { mut dst, chunks } => {
                let len = dst.len();
                for ((at, n), &c) in pieces(len, CHUNK).zip(&chunks) {
                    // SAFETY: the bounce buffer is ours again (its READ
                    // completed) and holds the piece's `n` bytes.
                    let bytes = unsafe {
                        std::slice::from_raw_parts(
                            (self.chunk_mem + c as usize * CHUNK) as *const u8,
                            n,
                        )
                    };
                    dst.fill_at(at, bytes);
                }
                drop(dst);
                self.free_chunks(&chunks);
            }
            What::Atomic { result } => {
                if let Some(mut r) = result {
                    // SAFETY: the scratch word of this slot was written by
                    // the completed atomic and is not in use by another op
                    // until the slot is reused (after this).
                    let v = unsafe { *((self.scratch_mem + 8 * slot as usize) as *const u64) };
                    let b = v.to_ne_bytes();
                    let n = r.len().min(8);
                    r.fill(&b[..n]);
                }
            }
            What::MsgPut { .. } | What::MsgGet { .. } => {}
        }
        op.done.complete();
    }

    fn free_chunk(&self, c: u32) {
        self.free_chunks(&[c]);
    }

    fn free_chunks(&self, cs: &[u32]) {
        self.chunks_free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(cs);
    }

    /// A message arrived from `src` in receive buffer `b`.
    fn arrived(&self, src: Rank, b: u32, len: usize) {
        let p = &self.peers[src as usize];
        if p.am.is_none() {
            fatal(&format!(
                "ibv conduit: a message from rank {src}, which sends through shared memory"
            ));
        }
        if b as usize >= self.budget.bufs || (self.srq.is_none() && self.buf_owner(b) != src) {
            fatal(&format!(
                "ibv conduit: a receive completion from rank {src} names buffer {b}, not one posted for it"
            ));
        }
        if len > self.buf {
            fatal(&format!(
                "ibv conduit: an oversized message from rank {src}"
            ));
        }
        let addr = self.buf_addr(self.recv_mem, b);
        // SAFETY: the receive completed, so the buffer is ours; `len` is
        // within it (checked).
        let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, len) };
        let is_request = bytes.get(1).is_some_and(|f| f & 1 != 0);
        let lane = if is_request { REQ } else { REP };
        let n = p.arrived[lane].fetch_add(1, Ordering::AcqRel) + 1;
        if n > p.granted[lane].load(Ordering::Acquire) {
            fatal(&format!(
                "ibv conduit: rank {}: rank {src} sent more {} than the credits it was given",
                self.me,
                if is_request { "requests" } else { "replies" }
            ));
        }
        let m = if is_request {
            InMsg::InBuf { src, buf: b, len }
        } else {
            // Replies are copied out and their buffer (and credit) goes
            // back at once: a reply never waits for handlers.
            let copy = bytes.to_vec();
            if let Err(e) = self.post_recv(b) {
                fatal(&format!("ibv conduit: reposting a receive: {e}"));
            }
            self.finish_msg(src, REP);
            InMsg::Copied { src, bytes: copy }
        };
        let mut inbox = self.inbox.lock().unwrap_or_else(|e| e.into_inner());
        inbox.push_back(m);
        self.inbox_len.store(inbox.len(), Ordering::Release);
    }

    /// Runs handlers of queued messages (replies only for `RepliesOnly`);
    /// one thread at a time, so each sender's messages run in order.
    fn deliver(&self, sink: &dyn AmSink, scope: PollScope) -> usize {
        if self.inbox_len.load(Ordering::Acquire) == 0 {
            return 0;
        }
        if self.delivering.swap(true, Ordering::Acquire) {
            return 0;
        }
        let mut ran = 0;
        while ran < DELIVER_BATCH {
            let next = {
                let mut inbox = self.inbox.lock().unwrap_or_else(|e| e.into_inner());
                let m = match scope {
                    PollScope::All => inbox.pop_front(),
                    PollScope::RepliesOnly => inbox
                        .iter()
                        .position(|m| matches!(m, InMsg::Copied { .. }))
                        .and_then(|i| inbox.remove(i)),
                };
                self.inbox_len.store(inbox.len(), Ordering::Release);
                m
            };
            let Some(m) = next else { break };
            match m {
                InMsg::Copied { src, bytes } => self.run(src, &bytes, sink),
                InMsg::InBuf { src, buf, len } => {
                    let addr = self.buf_addr(self.recv_mem, buf);
                    // SAFETY: the buffer is ours until it is posted again
                    // below; `len` was checked at arrival.
                    let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, len) };
                    self.run(src, bytes, sink);
                    if let Err(e) = self.post_recv(buf) {
                        fatal(&format!("ibv conduit: reposting a receive: {e}"));
                    }
                    self.finish_msg(src, REQ);
                }
            }
            ran += 1;
        }
        self.delivering.store(false, Ordering::Release);
        ran
    }

    /// Returns credits: for every peer whose finished counts changed, one
    /// RDMA WRITE of both counts into the peer's credit words.
    fn flush_credits(&self) {
        if !self.credits_dirty.swap(false, Ordering::AcqRel) {
            return;
        }
        let mut again = false;
        for (r, p) in self.peers.iter().enumerate() {
            if p.am.is_none() {
                continue;
            }
            let mut tx = p.tx.lock().unwrap_or_else(|e| e.into_inner());
            again |= !self.return_credits(r as Rank, p, &mut tx);
        }
        if again {
            self.credits_dirty.store(true, Ordering::Release);
        }
    }

    /// Writes what this rank grants `p` (its finished messages plus its
    /// windows, per lane) into `p`'s credit words if it changed since the
    /// last write; `false` if that
    /// must wait (every credit source slot or queue slot in use). Writes
    /// to one peer land in order (one queue pair), so a later, larger count
    /// never lands before an earlier one; each has its own source slot of
    /// [`CREDIT_RING`], so none is overwritten while the device reads it.
    fn return_credits(&self, r: Rank, p: &Peer, tx: &mut PeerTx) -> bool {
        let f = [
            p.granted[REQ].load(Ordering::Acquire),
            p.granted[REP].load(Ordering::Acquire),
        ];
        if tx.reported == f {
            return true;
        }
        if tx.credit_inflight >= CREDIT_RING || tx.sq_used >= self.sq_depth {
            return false;
        }
        let slot = tx.credit_next % CREDIT_RING;
        let src = self.ctrl_out + 16 * (r as usize * CREDIT_RING + slot);
        // SAFETY: slot `slot` of peer r's ring in our registered credit
        // source; the write that last used it has completed (completions
        // of one queue pair come in order and fewer than CREDIT_RING are
        // in flight), so the device is not reading it.
        unsafe {
            *(src as *mut u64) = f[REQ];
            *((src + 8) as *mut u64) = f[REP];
        }
        let sge = Sge {
            addr: src,
            len: 16,
            lkey: self.ctrl_out_mr.lkey,
        };
        let op = SendOp::Write {
            raddr: p.ctrl_remote.0,
            rkey: p.ctrl_remote.1,
        };
        // SAFETY: the source lies in its registered region and is not
        // written again until this write completes (see above).
        match unsafe { self.dev.post_send(p.qp, wr(W_CREDIT, r, 0), op, sge) } {
            Ok(()) => {
                tx.reported = f;
                tx.credit_inflight += 1;
                tx.credit_next += 1;
                tx.sq_used += 1;
                self.counts.credit_writes.fetch_add(1, Ordering::Relaxed);
                true
            }
            Err(_) => false,
        }
    }

    /// Device progress: completions, handlers, credit returns.
    fn progress(&self, sink: &dyn AmSink, scope: PollScope) -> usize {
        let mut ran = self.smp.poll(sink, scope);
        self.drain_cq();
        ran += self.deliver(sink, scope);
        self.flush_credits();
        ran
    }

    /// Credits available toward `p` on `lane`: what the peer granted (its
    /// credit words here, which it writes) less what was sent.
    fn credits_left(&self, peer: Rank, tx: &PeerTx, lane: usize) -> u64 {
        let granted = self.ctrl[CTRL_WORDS * peer as usize + lane].load(Ordering::Acquire);
        granted.saturating_sub(tx.sent[lane])
    }

    /// The injection loop: `try_send` until it sends; `NoOp` if
    /// `immediate`; else progress, and end the job naming `dest` if it
    /// answers nothing for the peer timeout.
    fn send_loop(
        &self,
        dest: Rank,
        immediate: bool,
        scope: PollScope,
        sink: &dyn AmSink,
        mut try_send: impl FnMut() -> Result<Injected>,
    ) -> Result<Injected> {
        let mut since: Option<Instant> = None;
        let mut tries = 0u32;
        gex_conduit::send_or_progress(immediate, &mut try_send, || {
            if since.is_none() {
                since = Some(Instant::now());
                self.counts.credit_waits.fetch_add(1, Ordering::Relaxed);
            }
            self.progress(sink, scope);
            tries = tries.wrapping_add(1);
            if tries.is_multiple_of(256) {
                let waited = since.map_or(Duration::ZERO, |s| s.elapsed());
                if waited > self.peer_timeout {
                    fatal(&format!(
                        "ibv conduit: rank {}: rank {dest} has returned no credits and completed nothing for {:.1} s (GEX_IBV_PEER_TIMEOUT); it is presumed dead",
                        self.me,
                        waited.as_secs_f64()
                    ));
                }
            }
        })
    }

    /// Counts a send and injects the configured fault when its time comes.
    fn count_send(&self) {
        let n = self.counts.sends.fetch_add(1, Ordering::Relaxed) + 1;
        if let (Some((f, after)), Some(sim)) = (self.fault, &self.sim) {
            if n == after {
                let f = match f {
                    sim::Fault::QpError(_) => {
                        // The queue pair of the first peer reached over the
                        // device.
                        let Some(q) = self.peers.iter().find(|p| p.am.is_some()) else {
                            return;
                        };
                        sim::Fault::QpError(q.qp)
                    }
                    f => f,
                };
                sim.inject(f);
            }
        }
    }

    /// One attempt to SEND a message of `hdr` + `payload` (`placed`:
    /// plus RDMA WRITEs of `long` into the target's segment at
    /// `long_raddr` first) to `dest` on `lane`.
    fn try_send_msg(
        &self,
        dest: Rank,
        lane: usize,
        fill: &dyn Fn(&mut [u8]) -> usize,
        long: Option<(&[u8], u64, u32)>,
    ) -> Result<Injected> {
        let p = &self.peers[dest as usize];
        let pieces = long.map_or(0, |(b, _, _)| b.len().div_ceil(CHUNK));
        let mut tx = p.tx.lock().unwrap_or_else(|e| e.into_inner());
        if self.credits_left(dest, &tx, lane) == 0 || tx.sq_used + pieces + 2 > self.sq_depth {
            return Ok(Injected::NoOp);
        }
        // A send buffer: they are freed by SEND completions, which never
        // wait on the peer's handlers (a SEND always finds a receive).
        let Some(slot) = self
            .send_free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
        else {
            return Ok(Injected::NoOp);
        };
        let chunks: Vec<u32> = if pieces > 0 {
            let mut free = self.chunks_free.lock().unwrap_or_else(|e| e.into_inner());
            if free.len() < pieces {
                drop(free);
                self.send_free
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(slot);
                return Ok(Injected::NoOp);
            }
            let at = free.len() - pieces;
            free.split_off(at)
        } else {
            Vec::new()
        };
        // Credits owed to this peer go first, on the same queue pair: they
        // land before this message does.
        if !self.return_credits(dest, p, &mut tx) {
            self.credits_dirty.store(true, Ordering::Release);
        }
        tx.sent[lane] += 1;
        if let Some((bytes, raddr, rkey)) = long {
            for (i, (piece, &c)) in bytes.chunks(CHUNK).zip(&chunks).enumerate() {
                let addr = self.chunk_mem + c as usize * CHUNK;
                // SAFETY: bounce buffer `c` is ours (taken from the free
                // list) and holds CHUNK bytes; the piece is at most that.
                unsafe {
                    std::ptr::copy_nonoverlapping(piece.as_ptr(), addr as *mut u8, piece.len())
                };
                let sge = Sge {
                    addr,
                    len: piece.len() as u32,
                    lkey: self.chunk_mr.lkey,
                };
                let op = SendOp::Write {
                    raddr: raddr + (i * CHUNK) as u64,
                    rkey,
                };
                // SAFETY: the bounce buffer stays ours until this write's
                // completion returns it to the free list.
                unsafe { self.dev.post_send(p.qp, wr(W_CHUNK, dest, c), op, sge)? };
                tx.sq_used += 1;
                self.counts.rdma_writes.fetch_add(1, Ordering::Relaxed);
            }
        }
        let addr = self.buf_addr(self.send_mem, slot);
        // SAFETY: send buffer `slot` is ours (taken from the free list)
        // and `buf` bytes long.
        let out = unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, self.buf) };
        let len = fill(out);
        let sge = Sge {
            addr,
            len: len as u32,
            lkey: self.send_mr.lkey,
        };
        // SAFETY: the send buffer stays ours until the SEND's completion
        // returns it.
        unsafe {
            self.dev
                .post_send(p.qp, wr(W_SLOT, dest, slot), SendOp::Send, sge)?
        };
        tx.sq_used += 1;
        drop(tx);
        self.count_send();
        Ok(Injected::Sent)
    }

    /// Handles a message from `src` (already checked to be from a peer
    /// reached over the device).
    fn run(&self, src: Rank, bytes: &[u8], sink: &dyn AmSink) {
        let bad = |what: &str| -> ! {
            fatal(&format!(
                "ibv conduit: rank {}: a message from rank {src} {what}",
                self.me
            ))
        };
        let Some(m) = wire::decode(bytes) else {
            bad("is malformed")
        };
        let body = &bytes[m.payload_at..];
        match m.kind {
            wire::K_AM => {
                let mut payload: &[u8] = body;
                let len = m.len;
                if m.category == AmCategory::Long && len > 0 {
                    let off = usize::try_from(m.offset).unwrap_or(usize::MAX);
                    // Index 0 without an attached segment: a created
                    // segment bound to the primordial endpoint.
                    let at = if m.dest_ep != 0 || self.segment.get().is_none() {
                        gex_conduit::epseg::arrived_at_ep(m.dest_ep, self.me, off, len)
                            .unwrap_or_else(|e| bad(&format!("(a Long AM): {e}")))
                    } else {
                        let Some(seg) = self.segment.get() else {
                            bad("(a Long AM) arrived before this rank attached a segment")
                        };
                        let d = SegmentDesc::new(seg.base, Some(seg.base), seg.size);
                        let o = d
                            .offset_of(self.me, off, len, true, ZeroLen::InSegment)
                            .unwrap_or_else(|e| bad(&format!("(a Long AM): {}", e.local())));
                        seg.base + o
                    };
                    if !m.placed {
                        // SAFETY: [at, at + len) lies in this rank's
                        // segment (checked above), mapped for the process;
                        // the message is separate memory.
                        unsafe { std::ptr::copy_nonoverlapping(body.as_ptr(), at as *mut u8, len) };
                    }
                    // SAFETY: as above; the handler reads the payload where
                    // it landed.
                    payload = unsafe { std::slice::from_raw_parts(at as *const u8, len) };
                } else if m.category == AmCategory::Long {
                    payload = &[];
                }
                sink.deliver(
                    &IncomingAm::new(
                        src,
                        m.category,
                        m.is_request,
                        m.handler,
                        &m.args[..m.nargs],
                        payload,
                        m.addr as usize,
                    )
                    .between(m.src_ep, m.dest_ep),
                );
            }
            wire::K_LONG_PIECE => {
                // Checked against this rank's segment of that endpoint
                // before it is written; no answer (the Long follows).
                let off = usize::try_from(m.offset).unwrap_or(usize::MAX);
                if m.len > self.buf - wire::FIXED {
                    bad("carries more than a message holds");
                }
                let at = gex_conduit::epseg::arrived_at_ep(m.dest_ep, self.me, off, m.len)
                    .unwrap_or_else(|e| bad(&format!("(a piece of a Long): {e}")));
                // SAFETY: [at, at + len) lies in this rank's segment of the
                // endpoint (checked above), mapped for the process; the
                // message is separate memory.
                unsafe { std::ptr::copy_nonoverlapping(body.as_ptr(), at as *mut u8, m.len) };
            }
            wire::K_RMA_PUT | wire::K_RMA_GET => {
                let off = usize::try_from(m.offset).unwrap_or(usize::MAX);
                if m.len > self.inline_max() {
                    bad("asks for more than a message carries");
                }
                let at = if m.len == 0 {
                    0
                } else {
                    gex_conduit::epseg::arrived_at_ep(m.dest_ep, self.me, off, m.len)
                        .unwrap_or_else(|e| bad(&format!("(a one-sided message): {e}")))
                };
                let op = m.addr;
                self.counts.rma_served.fetch_add(1, Ordering::Relaxed);
                if m.kind == wire::K_RMA_PUT {
                    if m.len > 0 {
                        // SAFETY: the range lies in this rank's segment of
                        // that endpoint (checked above); the message is
                        // separate memory.
                        unsafe {
                            std::ptr::copy_nonoverlapping(body.as_ptr(), at as *mut u8, m.len)
                        };
                    }
                    // The answers name the piece by its offset.
                    let _ = self.send_internal(src, REP, sink, &|out| {
                        wire::encode_rma(wire::K_RMA_PUT_ACK, 0, m.offset, op, 0, out);
                        wire::FIXED
                    });
                } else {
                    let data: &[u8] = if m.len == 0 {
                        &[]
                    } else {
                        // SAFETY: as above; only read.
                        unsafe { std::slice::from_raw_parts(at as *const u8, m.len) }
                    };
                    let _ = self.send_internal(src, REP, sink, &|out| {
                        wire::encode_rma(wire::K_RMA_GET_DATA, 0, m.offset, op, data.len(), out);
                        out[wire::FIXED..wire::FIXED + data.len()].copy_from_slice(data);
                        wire::FIXED + data.len()
                    });
                }
            }
            _ => {
                let op = {
                    let mut ops = self.ops.lock().unwrap_or_else(|e| e.into_inner());
                    let slot = m.addr as u32 as usize;
                    let entry = ops
                        .slots
                        .get_mut(slot)
                        .filter(|s| u64::from(s.gen) == m.addr >> 32)
                        .and_then(|s| s.op.as_mut())
                        .filter(|o| o.peer == src);
                    // The piece answered: its offset from the operation's
                    // first, which must start a piece not yet answered, of
                    // the length asked for.
                    let answered = entry.and_then(|e| {
                        let (base, piece, total, got) = match (&mut e.what, m.kind) {
                            (
                                What::MsgPut {
                                    base,
                                    piece,
                                    len,
                                    got,
                                },
                                wire::K_RMA_PUT_ACK,
                            ) => (*base, *piece, *len, got),
                            (
                                What::MsgGet {
                                    dst,
                                    base,
                                    piece,
                                    got,
                                },
                                wire::K_RMA_GET_DATA,
                            ) => (*base, *piece, dst.len(), got),
                            _ => return None,
                        };
                        let at = usize::try_from(m.offset.checked_sub(base)?).ok()?;
                        let i = at / piece;
                        if at % piece != 0 || got.get(i) != Some(&false) {
                            return None;
                        }
                        if m.kind == wire::K_RMA_GET_DATA && m.len != piece.min(total - at) {
                            return None;
                        }
                        got[i] = true;
                        if let What::MsgGet { dst, .. } = &mut e.what {
                            dst.fill_at(at, body);
                        }
                        e.left -= 1;
                        Some(e.left == 0)
                    });
                    match answered {
                        None => None,
                        Some(false) => Some(None),
                        Some(true) => Some(ops.take(m.addr)),
                    }
                };
                let Some(op) = op else {
                    bad("answers no operation in flight to it (unknown, stale, another kind, piece or length)")
                };
                if let Some(op) = op {
                    drop(op.what);
                    op.done.complete();
                }
            }
        }
    }

    /// Sends a conduit-internal message (blocking), lanes as AMs.
    fn send_internal(
        &self,
        dest: Rank,
        lane: usize,
        sink: &dyn AmSink,
        fill: &dyn Fn(&mut [u8]) -> usize,
    ) -> Result<Injected> {
        let scope = PollScope::for_sender(lane == REQ);
        self.send_loop(dest, false, scope, sink, || {
            self.try_send_msg(dest, lane, fill, None)
        })
    }

    fn check_peer(&self, peer: Rank) -> Result<()> {
        if peer >= self.boot.size() {
            return Err(Error::bad_arg(format!(
                "ibv conduit: rank {peer} is not in the job of {} ranks",
                self.boot.size()
            )));
        }
        Ok(())
    }

    /// The segment of `peer` as the device addresses it: (base, size, rkey).
    fn seg_of(&self, peer: Rank) -> Result<(u64, usize, u32)> {
        self.seg_keys
            .get()
            .and_then(|k| k.get(peer as usize).copied())
            .filter(|k| k.1 > 0)
            .ok_or_else(|| {
                Error::bad_arg(format!(
                    "ibv conduit: rank {peer} has no registered segment"
                ))
            })
    }

    /// Posts the `need` work requests of one one-sided operation that
    /// `make` builds for an operation slot, taking queue slots (and the
    /// operation slot); `NoOp` when either is short or `make` gives nothing
    /// (no bounce buffers free).
    fn try_post_op(
        &self,
        peer: Rank,
        need: usize,
        make: &mut dyn FnMut(u32) -> Option<(OpEntry, WorkRequests)>,
    ) -> Result<Injected> {
        let p = &self.peers[peer as usize];
        let mut tx = p.tx.lock().unwrap_or_else(|e| e.into_inner());
        if tx.sq_used + need > self.sq_depth {
            return Ok(Injected::NoOp);
        }
        let mut ops = self.ops.lock().unwrap_or_else(|e| e.into_inner());
        let slot = match ops.free.last() {
            Some(&s) => s,
            None if ops.slots.len() < MAX_OPS => ops.slots.len() as u32,
            None => return Ok(Injected::NoOp),
        };
        let Some((mut entry, wrs)) = make(slot) else {
            return Ok(Injected::NoOp);
        };
        debug_assert!(!wrs.is_empty() && wrs.len() <= need);
        entry.left = wrs.len();
        let id = ops.insert(entry).expect("a slot is free");
        debug_assert_eq!(id as u32, slot);
        drop(ops);
        for (i, (op, sge)) in wrs.into_iter().enumerate() {
            // SAFETY: `make` built the local buffer in a registered region
            // (bounce buffer, scratch word, or this rank's segment where
            // the client's source or destination lies), kept by the
            // operation entry until its last completion.
            if let Err(e) = unsafe { self.dev.post_send(p.qp, wr(W_OP, peer, slot), op, sge) } {
                if i > 0 {
                    // Pieces are in flight: their completions name the
                    // operation, which cannot be undone.
                    fatal(&format!(
                        "ibv conduit: rank {}: posting a piece of a one-sided operation to rank {peer}: {e}",
                        self.me
                    ));
                }
                let undone = self
                    .ops
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .cancel(id);
                if let Some(OpEntry {
                    what: What::Write { chunks, .. } | What::Read { chunks, .. },
                    ..
                }) = undone
                {
                    self.free_chunks(&chunks);
                }
                return Err(e);
            }
            tx.sq_used += 1;
        }
        Ok(Injected::Sent)
    }

    /// `n` bounce buffers, all or none.
    fn take_chunks(&self, n: usize) -> Option<Vec<u32>> {
        let mut free = self.chunks_free.lock().unwrap_or_else(|e| e.into_inner());
        let at = free.len().checked_sub(n)?;
        Some(free.split_off(at))
    }

    /// The work requests of a one-sided transfer of `len` bytes in pieces
    /// of at most `piece`: each piece's operation (`op` of its offset) and
    /// its local side, in place at `local` when `in_place` gives the
    /// registered segment's key, else in the bounce buffer `chunks[i]`.
    fn piece_wrs(
        &self,
        len: usize,
        piece: usize,
        (local, in_place): (usize, Option<u32>),
        chunks: &[u32],
        op: impl Fn(usize) -> SendOp,
    ) -> Vec<(SendOp, Sge)> {
        pieces(len, piece)
            .enumerate()
            .map(|(i, (at, n))| {
                let sge = match in_place {
                    Some(lkey) => Sge {
                        addr: local + at,
                        len: n as u32,
                        lkey,
                    },
                    None => Sge {
                        addr: self.chunk_mem + chunks[i] as usize * CHUNK,
                        len: n as u32,
                        lkey: self.chunk_mr.lkey,
                    },
                };
                (op(at), sge)
            })
            .collect()
    }

    /// The local key of this rank's registered segment if `[addr, addr +
    /// len)` lies in it (a non-empty range: the device reads or writes it
    /// in place).
    fn in_segment(&self, addr: usize, len: usize) -> Option<u32> {
        let s = self.segment.get()?;
        (len > 0 && addr >= s.base && gex_conduit::fits(addr - s.base, len, s.size))
            .then_some(s.mr.lkey)
    }
}

impl Conduit for IbvConduit {
    fn name(&self) -> &'static str {
        "ibv"
    }

    fn bootstrap(&self) -> &Bootstrap {
        &self.boot
    }

    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn am_limits(&self, peer: Rank) -> AmLimits {
        if self.smp.contains(peer) {
            self.smp_limits()
        } else {
            self.net_limits()
        }
    }

    fn am_lub_limits(&self) -> AmLimits {
        // This rank is always reached through shared memory.
        self.smp_limits()
    }

    fn am_send(
        &self,
        dest: Rank,
        msg: &OutgoingAm<'_>,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected> {
        let scope = PollScope::for_sender(msg.is_request);
        if self.smp.contains(dest) {
            return gex_conduit::send_or_progress(
                immediate,
                || self.smp.try_send(dest, msg),
                || {
                    self.progress(sink, scope);
                },
            );
        }
        self.check_peer(dest)?;
        let lane = if msg.is_request { REQ } else { REP };
        // RDMA into the attached segments only: a created segment (bound to
        // a created endpoint, or to the primordial one in a job that did
        // not attach) is not registered, and a payload over a buffer goes
        // in pieces.
        let over = msg.category == AmCategory::Long && msg.payload.len() > self.inline_max();
        if over && (msg.dest_ep != 0 || self.seg_keys.get().is_none()) {
            return self.long_in_pieces(dest, lane, msg, immediate, scope, sink);
        }
        let by_rdma = over;
        let long = if by_rdma {
            let (base, size, rkey) = self.seg_of(dest)?;
            if !gex_conduit::fits(msg.dest_offset, msg.payload.len(), size) {
                return Err(Error::bad_arg(format!(
                    "ibv conduit: a Long to rank {dest} at [{:#x}, +{}) is outside its segment",
                    msg.dest_offset,
                    msg.payload.len()
                )));
            }
            Some((msg.payload, base + msg.dest_offset as u64, rkey))
        } else {
            if msg.payload.len() > self.inline_max() {
                return Err(Error::bad_arg(format!(
                    "ibv conduit: a payload of {} bytes is over the {}-byte limit",
                    msg.payload.len(),
                    self.inline_max()
                )));
            }
            None
        };
        let fill = |out: &mut [u8]| {
            let h = wire::encode_am(msg, by_rdma, out);
            if by_rdma {
                h
            } else {
                out[h..h + msg.payload.len()].copy_from_slice(msg.payload);
                h + msg.payload.len()
            }
        };
        self.send_loop(dest, immediate, scope, sink, || {
            self.try_send_msg(dest, lane, &fill, long)
        })
    }

    fn am_can_send(
        &self,
        dest: Rank,
        is_request: bool,
        category: AmCategory,
        nargs: usize,
        len: usize,
    ) -> bool {
        if self.smp.contains(dest) {
            return self.smp.can_send(dest, is_request, category, nargs, len);
        }
        let Some(p) = self.peers.get(dest as usize) else {
            return false;
        };
        let lane = if is_request { REQ } else { REP };
        let tx = p.tx.lock().unwrap_or_else(|e| e.into_inner());
        self.credits_left(dest, &tx, lane) > 0
            && tx.sq_used < self.sq_depth
            && !self
                .send_free
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_empty()
    }

    fn poll(&self, sink: &dyn AmSink, scope: PollScope) -> usize {
        self.progress(sink, scope)
    }

    fn max_segment_size(&self) -> usize {
        self.smp.max_segment_size()
    }

    fn attach_segment(&self, size: usize, sink: &dyn AmSink) -> Result<Vec<SegmentDesc>> {
        let mut table = self.smp.attach_segment(&self.boot, size, &mut || {
            self.progress(sink, PollScope::All);
        })?;
        let mine = table[self.me as usize];
        let base = mine
            .local_base
            .ok_or_else(|| Error::resource("ibv conduit: the local segment is not mapped"))?;
        // SAFETY: the attached segment stays mapped for the life of the
        // process (it is never detached).
        let mr = unsafe { self.dev.register(base as *mut u8, mine.size)? };
        let _ = self.segment.set(MySeg {
            base,
            size: mine.size,
            mr,
        });
        let all = self.boot.exchange(&mr.rkey.to_le_bytes(), &mut || {
            self.progress(sink, PollScope::All);
        })?;
        let mut keys = Vec::with_capacity(all.len());
        for (r, k) in all.iter().enumerate() {
            let key = u32::from_le_bytes(k.as_slice().try_into().map_err(|_| {
                Error::resource(format!("ibv conduit: rank {r} sent a malformed key"))
            })?);
            table[r] = table[r].with_remote_key(u64::from(key));
            keys.push((table[r].owner_base as u64, table[r].size, key));
        }
        let _ = self.seg_keys.set(keys);
        Ok(table)
    }

    fn rma(&self) -> Option<&dyn RmaCapability> {
        Some(self)
    }

    fn atomics(&self) -> Option<&dyn AtomicCapability> {
        self.dev
            .limits()
            .atomics
            .then_some(self as &dyn AtomicCapability)
    }

    fn core_shared_with_spinner(&self) -> bool {
        self.smp.core_shared_with_spinner()
    }

    fn stats(&self) -> ConduitStats {
        let c = &self.counts;
        let mut st = ConduitStats::new("ibv");
        st.counters = [
            ("sends", c.sends.load(Ordering::Relaxed)),
            ("received", c.received.load(Ordering::Relaxed)),
            ("rdma_writes", c.rdma_writes.load(Ordering::Relaxed)),
            ("rdma_reads", c.rdma_reads.load(Ordering::Relaxed)),
            ("atomics", c.atomics.load(Ordering::Relaxed)),
            ("credit_writes", c.credit_writes.load(Ordering::Relaxed)),
            ("credit_waits", c.credit_waits.load(Ordering::Relaxed)),
            ("rma_puts", c.rma_puts.load(Ordering::Relaxed)),
            ("rma_gets", c.rma_gets.load(Ordering::Relaxed)),
            ("rma_served", c.rma_served.load(Ordering::Relaxed)),
            ("long_pieces", c.long_pieces.load(Ordering::Relaxed)),
            ("credit_grants", c.grants.load(Ordering::Relaxed)),
            ("credits", self.credits as u64),
            ("buf", self.buf as u64),
            ("srq", u64::from(self.srq.is_some())),
            ("recv_bufs", self.budget.bufs as u64),
            ("window0", self.budget.window0),
        ]
        .into_iter()
        .chain(self.sim.as_ref().map(|d| ("sim_rnr_waits", d.rnr_waits())))
        .map(|(n, v)| Counter::new(n, v))
        .collect();
        st
    }
}

impl RmaCapability for IbvConduit {
    /// Ranks outside this rank's neighbourhood, once segments are attached.
    fn reaches(&self, peer: Rank) -> bool {
        peer < self.boot.size() && !self.smp.contains(peer) && self.seg_keys.get().is_some()
    }

    /// Split here into work requests (or messages to a created endpoint's
    /// segment).
    fn max_transfer(&self) -> usize {
        MAX_RMA
    }

    fn put(
        &self,
        peer: Rank,
        ep: EpIndex,
        offset: usize,
        src: PutSource,
        done: Arc<dyn OpCompletion>,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected> {
        self.check_one_sided(peer, ep, src.len())?;
        self.counts.rma_puts.fetch_add(1, Ordering::Relaxed);
        let len = src.len();
        if ep != 0 {
            // A created endpoint's segment is not registered: messages.
            return self.msg_put(peer, ep, offset, src, done, immediate, sink);
        }
        let (base, size, rkey) = self.seg_of(peer)?;
        if !gex_conduit::fits(offset, len, size) {
            return Err(Error::bad_arg(format!(
                "ibv conduit: a put to rank {peer} at [{offset:#x}, +{len}) is outside its segment"
            )));
        }
        let raddr = base + offset as u64;
        // Zero-copy when the source lies in this rank's registered
        // segment: written in place, in pieces of the device's largest
        // message; else copied into bounce buffers, a piece each.
        let from = src.as_slice().as_ptr() as usize;
        let in_place = self.in_segment(from, len);
        let piece = if in_place.is_some() {
            self.max_msg
        } else {
            CHUNK
        };
        let need = pieces(len, piece).count();
        let mut src = Some(src);
        let mut done = Some(done);
        let r = self.send_loop(peer, immediate, PollScope::All, sink, || {
            self.try_post_op(peer, need, &mut |_slot| {
                let chunks = match in_place {
                    Some(_) => Vec::new(),
                    None => {
                        let chunks = self.take_chunks(need)?;
                        let s = src.as_ref().expect("until posted").as_slice();
                        for ((at, n), &c) in pieces(len, CHUNK).zip(&chunks) {
                            // SAFETY: bounce buffer `c` is ours (taken from
                            // the free list) and CHUNK bytes long; the piece
                            // is at most that, and lies in the source.
                            unsafe {
                                std::ptr::copy_nonoverlapping(
                                    s.as_ptr().add(at),
                                    (self.chunk_mem + c as usize * CHUNK) as *mut u8,
                                    n,
                                )
                            };
                        }
                        chunks
                    }
                };
                let wrs =
                    self.piece_wrs(len, piece, (from, in_place), &chunks, |at| SendOp::Write {
                        raddr: raddr + at as u64,
                        rkey,
                    });
                // A copied source is released now (local completion); one
                // written in place is kept until the writes complete.
                let keep = src.take().filter(|_| in_place.is_some());
                Some((
                    OpEntry {
                        peer,
                        what: What::Write { _src: keep, chunks },
                        done: done.take().expect("until posted"),
                        left: 0,
                    },
                    wrs,
                ))
            })
        });
        if matches!(r, Ok(Injected::Sent)) {
            self.counts
                .rdma_writes
                .fetch_add(need as u64, Ordering::Relaxed);
        }
        r
    }

    fn get(
        &self,
        peer: Rank,
        ep: EpIndex,
        offset: usize,
        dst: GetDest,
        done: Arc<dyn OpCompletion>,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected> {
        let len = dst.len();
        self.check_one_sided(peer, ep, len)?;
        self.counts.rma_gets.fetch_add(1, Ordering::Relaxed);
        if ep != 0 {
            return self.msg_get(peer, ep, offset, dst, done, immediate, sink);
        }
        let (base, size, rkey) = self.seg_of(peer)?;
        if !gex_conduit::fits(offset, len, size) {
            return Err(Error::bad_arg(format!(
                "ibv conduit: a get from rank {peer} at [{offset:#x}, +{len}) is outside its segment"
            )));
        }
        let raddr = base + offset as u64;
        // Zero-copy when the destination lies in this rank's registered
        // segment: read in place, in pieces of the device's largest
        // message; else into bounce buffers, a piece each, copied out when
        // every read has completed.
        let mut dst = dst;
        let to = dst.as_mut_ptr() as usize;
        let in_place = self.in_segment(to, len);
        let piece = if in_place.is_some() {
            self.max_msg
        } else {
            CHUNK
        };
        let need = pieces(len, piece).count();
        let mut dst = Some(dst);
        let mut done = Some(done);
        let r = self.send_loop(peer, immediate, PollScope::All, sink, || {
            self.try_post_op(peer, need, &mut |_slot| {
                let chunks = match in_place {
                    Some(_) => Vec::new(),
                    None => self.take_chunks(need)?,
                };
                // In place: the destination (GetDest's contract: ours
                // until completion) in the registered segment.
                let wrs = self.piece_wrs(len, piece, (to, in_place), &chunks, |at| SendOp::Read {
                    raddr: raddr + at as u64,
                    rkey,
                });
                Some((
                    OpEntry {
                        peer,
                        what: What::Read {
                            dst: dst.take().expect("until posted"),
                            chunks,
                        },
                        done: done.take().expect("until posted"),
                        left: 0,
                    },
                    wrs,
                ))
            })
        });
        if matches!(r, Ok(Injected::Sent)) {
            self.counts
                .rdma_reads
                .fetch_add(need as u64, Ordering::Relaxed);
        }
        r
    }
}

impl IbvConduit {
    /// A Long larger than a message to a created endpoint's segment, which
    /// is not registered with the device (no RDMA WRITE): its payload goes
    /// first in [`wire::K_LONG_PIECE`] messages of at most a buffer each,
    /// on the Long's queue pair and lane, so they are written before the
    /// Long, which follows marked placed. `IMMEDIATE` gives up only before
    /// the first piece.
    fn long_in_pieces(
        &self,
        dest: Rank,
        lane: usize,
        msg: &OutgoingAm<'_>,
        immediate: bool,
        scope: PollScope,
        sink: &dyn AmSink,
    ) -> Result<Injected> {
        let len = msg.payload.len();
        if len > MAX_LONG {
            return Err(Error::bad_arg(format!(
                "ibv conduit: a Long payload of {len} bytes is over the {MAX_LONG}-byte limit"
            )));
        }
        let piece = self.buf - wire::FIXED;
        for (i, (at, k)) in pieces(len, piece).enumerate() {
            let fill = |out: &mut [u8]| {
                let off = (msg.dest_offset + at) as u64;
                wire::encode_piece(msg.dest_ep, off, msg.is_request, k, out);
                out[wire::FIXED..wire::FIXED + k].copy_from_slice(&msg.payload[at..at + k]);
                wire::FIXED + k
            };
            let r = self.send_loop(dest, immediate && i == 0, scope, sink, || {
                self.try_send_msg(dest, lane, &fill, None)
            })?;
            if r == Injected::NoOp {
                return Ok(r);
            }
            self.counts.long_pieces.fetch_add(1, Ordering::Relaxed);
        }
        let fill = |out: &mut [u8]| wire::encode_am(msg, true, out);
        self.send_loop(dest, false, scope, sink, || {
            self.try_send_msg(dest, lane, &fill, None)
        })
    }

    /// A put to a created endpoint's segment (not registered): messages of
    /// at most a buffer's payload, each acknowledged; the source is copied
    /// into them, so it is released on return.
    #[allow(clippy::too_many_arguments)]
    fn msg_put(
        &self,
        peer: Rank,
        ep: EpIndex,
        offset: usize,
        src: PutSource,
        done: Arc<dyn OpCompletion>,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected> {
        let len = src.len();
        let piece = self.inline_max();
        let n = pieces(len, piece).count();
        let id = self
            .ops
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(OpEntry {
                peer,
                what: What::MsgPut {
                    base: offset as u64,
                    piece,
                    len,
                    got: vec![false; n],
                },
                done,
                left: n,
            })
            .ok_or_else(|| Error::resource("ibv conduit: too many operations in flight"))?;
        let data = src.as_slice();
        for (i, (at, k)) in pieces(len, piece).enumerate() {
            let fill = |out: &mut [u8]| {
                wire::encode_rma(wire::K_RMA_PUT, ep, (offset + at) as u64, id, k, out);
                out[wire::FIXED..wire::FIXED + k].copy_from_slice(&data[at..at + k]);
                wire::FIXED + k
            };
            let r = self.send_loop(peer, immediate && i == 0, PollScope::All, sink, || {
                self.try_send_msg(peer, REQ, &fill, None)
            });
            if let Some(r) = self.msg_piece_sent(peer, id, i, r) {
                return r;
            }
        }
        Ok(Injected::Sent)
    }

    /// A get from a created endpoint's segment: messages asking for at
    /// most a buffer's payload each, answered with the bytes.
    #[allow(clippy::too_many_arguments)]
    fn msg_get(
        &self,
        peer: Rank,
        ep: EpIndex,
        offset: usize,
        dst: GetDest,
        done: Arc<dyn OpCompletion>,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected> {
        let len = dst.len();
        let piece = self.inline_max();
        let n = pieces(len, piece).count();
        let id = self
            .ops
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(OpEntry {
                peer,
                what: What::MsgGet {
                    dst,
                    base: offset as u64,
                    piece,
                    got: vec![false; n],
                },
                done,
                left: n,
            })
            .ok_or_else(|| Error::resource("ibv conduit: too many operations in flight"))?;
        for (i, (at, k)) in pieces(len, piece).enumerate() {
            let fill = |out: &mut [u8]| {
                wire::encode_rma(wire::K_RMA_GET, ep, (offset + at) as u64, id, k, out);
                wire::FIXED
            };
            let r = self.send_loop(peer, immediate && i == 0, PollScope::All, sink, || {
                self.try_send_msg(peer, REQ, &fill, None)
            });
            if let Some(r) = self.msg_piece_sent(peer, id, i, r) {
                return r;
            }
        }
        Ok(Injected::Sent)
    }

    /// What sending piece `i` of message operation `id` came to: `None`
    /// to go on; the first piece may not go (the operation is undone and
    /// the call returns that), a later one must, answers to the earlier
    /// being on their way.
    fn msg_piece_sent(
        &self,
        peer: Rank,
        id: u64,
        i: usize,
        r: Result<Injected>,
    ) -> Option<Result<Injected>> {
        match r {
            Ok(Injected::Sent) => None,
            _ if i == 0 => {
                self.ops
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .cancel(id);
                Some(r)
            }
            Err(e) => fatal(&format!(
                "ibv conduit: rank {}: sending a piece of a one-sided operation to rank {peer}: {e}",
                self.me
            )),
            Ok(_) => fatal("ibv conduit: a blocking send returned without sending"),
        }
    }
}

impl IbvConduit {
    fn check_one_sided(&self, peer: Rank, ep: EpIndex, len: usize) -> Result<()> {
        if ep as usize >= gex_types::MAX_EPS {
            return Err(Error::bad_arg(format!(
                "ibv conduit: endpoint index {ep} is not below MAX_EPS"
            )));
        }
        if !RmaCapability::reaches(self, peer) {
            return Err(Error::bad_arg(format!(
                "ibv conduit: rank {peer} is not reached by one-sided operations from rank {}",
                self.me
            )));
        }
        if len > RmaCapability::max_transfer(self) {
            return Err(Error::bad_arg(format!(
                "ibv conduit: a one-sided transfer of {len} bytes is over the {}-byte limit",
                RmaCapability::max_transfer(self)
            )));
        }
        Ok(())
    }
}

/// The operand added by a NIC fetch-add for `op`, or `None` if `op` is
/// not one the NIC does (compare-swap aside).
fn fadd_operand(op: Op, operand: u64) -> Option<u64> {
    match op {
        Op::Add | Op::Fadd => Some(operand),
        Op::Sub | Op::Fsub => Some(operand.wrapping_neg()),
        Op::Inc | Op::Finc => Some(1),
        Op::Dec | Op::Fdec => Some(u64::MAX),
        Op::Get => Some(0),
        _ => None,
    }
}

impl AtomicCapability for IbvConduit {
    /// Every rank, this one included (one mechanism for every word of a
    /// domain), once segments are attached.
    fn reaches(&self, peer: Rank) -> bool {
        peer < self.boot.size() && self.seg_keys.get().is_some()
    }

    /// 64-bit integers, with fetch-add (ADD, SUB, INC, DEC, GET and their
    /// fetching forms) and compare-swap (CAS, FCAS).
    fn supports(&self, dt: Dt, op: Op) -> bool {
        matches!(dt, Dt::I64 | Dt::U64)
            && (fadd_operand(op, 0).is_some() || matches!(op, Op::Cas | Op::Fcas))
    }

    fn start(
        &self,
        peer: Rank,
        offset: usize,
        dt: Dt,
        op: Op,
        operands: [u64; 2],
        result: Option<GetDest>,
        done: Arc<dyn OpCompletion>,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected> {
        if !AtomicCapability::supports(self, dt, op) {
            return Err(Error::bad_arg(format!(
                "ibv conduit: {op:?} on {dt:?} is not a NIC atomic"
            )));
        }
        self.check_peer(peer)?;
        let (base, size, rkey) = self.seg_of(peer)?;
        if !gex_conduit::fits(offset, 8, size) || !offset.is_multiple_of(8) {
            return Err(Error::bad_arg(format!(
                "ibv conduit: an atomic on rank {peer} at offset {offset:#x} is outside its segment or unaligned"
            )));
        }
        let raddr = base + offset as u64;
        let sop = match fadd_operand(op, operands[0]) {
            Some(add) => SendOp::FetchAdd { raddr, rkey, add },
            None => SendOp::CmpSwap {
                raddr,
                rkey,
                compare: operands[0],
                swap: operands[1],
            },
        };
        let mut result = Some(result);
        let mut done = Some(done);
        let r = self.send_loop(peer, immediate, PollScope::All, sink, || {
            self.try_post_op(peer, 1, &mut |slot| {
                Some((
                    OpEntry {
                        peer,
                        what: What::Atomic {
                            result: result.take().expect("until posted"),
                        },
                        done: done.take().expect("until posted"),
                        left: 0,
                    },
                    vec![(
                        sop,
                        Sge {
                            addr: self.scratch_mem + 8 * slot as usize,
                            len: 8,
                            lkey: self.scratch_mr.lkey,
                        },
                    )],
                ))
            })
        });
        if matches!(r, Ok(Injected::Sent)) {
            self.counts.atomics.fetch_add(1, Ordering::Relaxed);
        }
        r
    }
}

impl Drop for IbvConduit {
    fn drop(&mut self) {
        self.live.stop.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests;
