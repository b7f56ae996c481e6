//! Set-up: the conduit's settings and factory, opening the device,
//! joining the job (queue pairs, receive buffers, credit windows) and
//! attaching the segment.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use gex_bootstrap::vars::Lookup;
use gex_bootstrap::Bootstrap;
use gex_conduit::{AmSink, Conduit, ConduitFactory, Layout, PollScope, SegmentDesc};
use gex_conduit_smp::{hostname, SmpTransport};
use gex_types::{Error, Rank, Result};

use crate::am::{Peer, PeerTx};
use crate::liveness::{bye_at_exit, heartbeat_thread, Liveness, LIVE};
use crate::rma::Ops;
use crate::stats::Counts;
use crate::verbs::{Device, Mr, Provider, QpNum};
use crate::{
    sim, wire, IbvConduit, MySeg, CHUNK, CHUNKS, CQ_BATCH, CREDIT_RING, CTRL_WORDS, MAX_LONG,
    MAX_OPS, REP, REQ, SQ_DEPTH,
};

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
pub(crate) fn open_device(
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
        Provider::RdmaSys => Ok((Arc::new(crate::rdma::VerbsDevice::open()?), None)),
        #[cfg(not(feature = "rdma-sys"))]
        Provider::RdmaSys => Err(Error::not_init(
            "ibv conduit: GEX_IBV_PROVIDER=rdma-sys, but this build has no rdma-sys provider \
             (build gex-conduit-ibv with the feature rdma-sys, or set GEX_IBV_PROVIDER=sim)",
        )),
    }
}

/// Memory registered for the life of the process (never freed: a device
/// and its peers may write it at any time while the process runs).
pub(crate) fn registered(dev: &dyn Device, len: usize) -> Result<(&'static mut [u8], Mr)> {
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
pub(crate) struct Budget {
    /// Receive buffers in all (and send buffers).
    pub(crate) bufs: usize,
    /// In one shared receive queue (else `2 * credits` per peer).
    pub(crate) srq: bool,
    /// The window every peer starts with on each lane: messages it may
    /// have unfinished here.
    pub(crate) window0: u64,
    /// Buffers not in any window: granted, one window at a time, to peers
    /// that use theirs, up to `credits` per lane.
    pub(crate) reserve: usize,
}

/// The budget of a rank reaching `am_peers` peers over the device:
/// per-peer buffers (`2 * credits` each, windows of `credits`) without a
/// shared receive queue; with one, `pool` buffers, but at least one per
/// peer and lane and at most what every window full would use, split
/// evenly into starting windows, the rest held in reserve. Either way the
/// windows of all peers on both lanes never add up to more than the
/// buffers posted, so a SEND always finds a receive.
pub(crate) fn budget(srq: bool, pool: usize, credits: usize, am_peers: usize) -> Budget {
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

/// Parses `GEX_IBV_SIM_FAULT` (`KIND@RANK:AFTER`) for rank `me`.
pub(crate) fn parse_fault(spec: &str, me: Rank) -> Result<Option<(String, u64)>> {
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

    /// `Conduit::attach_segment`: the smp segment, registered with the
    /// device, and every rank's remote key exchanged.
    pub(crate) fn attach(&self, size: usize, sink: &dyn AmSink) -> Result<Vec<SegmentDesc>> {
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
}
