//! The shared-memory transport among the ranks of one neighbourhood: AM
//! rings and mapped segments. The smp conduit is this transport over the
//! whole job; network conduits embed it for their neighbourhood peers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use gex_bootstrap::Bootstrap;
use gex_conduit::{
    AmLimits, AmSink, IncomingAm, Injected, OutgoingAm, PollScope, SegmentDesc, ZeroLen,
};
use gex_types::{AmArg, AmCategory, EpIndex, Error, Rank, Result, AM_MAX_ARGS};

use crate::lock::SpinLock;
use crate::ring::{self, align_up, ring_bytes, Consumer, Producer};
use gex_conduit::shm;

/// Record bytes of each AM ring.
pub const RING_CAPACITY: usize = 256 << 10;
/// Largest Medium payload, requests and replies.
pub const MAX_MEDIUM: usize = 64 << 10;
/// Largest Long payload, requests and replies (copied straight into the
/// target segment, so only bounded to keep one injection's copy short).
pub const MAX_LONG: usize = 1 << 20;
/// Messages drained from one ring per poll before moving to the next.
const POLL_BATCH: usize = 64;
/// Bytes before the arguments: ring header (8) and AM header (8). The AM
/// header is: category (1), destination endpoint index (1), handler (1),
/// argument count (1), and a little-endian word of the payload length
/// (low 24 bits) and the source endpoint index (high 8 bits). Whether the
/// record is a request or a reply is which ring it is in.
const AM_HEADER: usize = 16;
/// The payload length's bits in the AM header's last word.
const PLEN_MASK: u32 = (1 << 24) - 1;
const _: () = assert!(MAX_MEDIUM <= PLEN_MASK as usize);
const _: () = assert!(MAX_LONG <= PLEN_MASK as usize);
const _: () = assert!(gex_types::MAX_EPS <= 256);
/// Set in a record's category byte when a Long's payload travels in the
/// record (after its offset and address): a Long to a created endpoint's
/// segment that the sender does not map (client memory), which the target
/// copies into its segment before the handler runs. Any other Long's
/// payload was copied into the target's segment by the sender.
const CARRIED: u8 = 0x80;

/// An inbound ring and what this process knows of it without touching
/// shared memory beyond the producer's tail.
#[repr(align(64))]
struct InRing {
    consumer: SpinLock<Consumer>,
    /// Ring base, for the lock-free emptiness check.
    base: usize,
    /// The consumer's head as of its last drain, kept in process-local
    /// memory so that checking an empty ring reads only the tail line.
    seen_head: AtomicU64,
}

impl InRing {
    /// # Safety
    /// As for [`Consumer::new`].
    unsafe fn new(base: *mut u8) -> InRing {
        // SAFETY: forwarded to the caller.
        let c = unsafe { Consumer::new(base, RING_CAPACITY) };
        InRing {
            seen_head: AtomicU64::new(c.head()),
            consumer: SpinLock::new(c),
            base: base as usize,
        }
    }

    /// Whether a record is ready where this process will consume next.
    #[inline]
    fn has_data(&self) -> bool {
        // SAFETY: base is a live ring of RING_CAPACITY record bytes.
        unsafe {
            ring::ready_at(
                self.base as *mut u8,
                RING_CAPACITY,
                self.seen_head.load(Ordering::Relaxed),
            )
        }
    }
}

struct Segments {
    table: Vec<SegmentDesc>,
    _maps: Vec<shm::Mapping>,
}

/// AM rings and segment mappings among `members` (see the module docs).
pub struct SmpTransport {
    me: Rank,
    members: Vec<Rank>,
    /// Local index of each jobrank, `u32::MAX` for non-members.
    local_of: Vec<u32>,
    /// Outbound rings, indexed by the destination's local index.
    out_req: Vec<SpinLock<Producer>>,
    out_rep: Vec<SpinLock<Producer>>,
    /// Inbound rings, indexed by the source's local index.
    in_req: Vec<InRing>,
    in_rep: Vec<InRing>,
    segments: OnceLock<Segments>,
    /// Every member's core word (see [`SmpTransport::core_shared_with_spinner`]),
    /// by local index: the last word of its queue object.
    cores: Vec<CoreWord>,
    /// This process's local index.
    me_local: usize,
    _queues: Vec<shm::Mapping>,
}

/// A member's core word in shared memory: 0 (never written), or the core
/// its last idle poll ran on plus one (high 32 bits) and when, in
/// milliseconds of the host's monotonic clock (low 32 bits, wrapping).
struct CoreWord(*const AtomicU64);

// SAFETY: the word lies in a mapping the transport keeps for its whole
// life, and is only accessed atomically.
unsafe impl Send for CoreWord {}
// SAFETY: as above.
unsafe impl Sync for CoreWord {}

impl CoreWord {
    fn get(&self) -> &AtomicU64 {
        // SAFETY: a live, aligned word of a mapping the transport owns
        // (see the `Send` impl).
        unsafe { &*self.0 }
    }
}

/// How recent another member's record of this core must be for
/// [`SmpTransport::core_shared_with_spinner`] to count it: longer than a
/// runnable process waits for its turn on a busy core, short enough that a
/// member gone elsewhere stops counting soon.
const CORE_RECENT_MS: u32 = 50;

/// The host's monotonic clock in milliseconds (wrapping at 32 bits), the
/// same in every process.
fn monotonic_ms() -> u32 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is writable; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1000)
        .wrapping_add(ts.tv_nsec as u64 / 1_000_000) as u32
}

impl std::fmt::Debug for SmpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmpTransport")
            .field("rank", &self.me)
            .field("members", &self.members)
            .finish()
    }
}

fn queue_name(job: &str, rank: Rank) -> String {
    shm::object_name(job, &format!("q{rank}"))
}

fn segment_name(job: &str, rank: Rank) -> String {
    shm::object_name(job, &format!("s{rank}"))
}

/// Offset of ring `i` (0..2m) in a rank's queue object; `ring_offset(2m)`
/// is where its core word lies, in a cache line of its own.
fn ring_offset(i: usize) -> usize {
    i * ring_bytes(RING_CAPACITY)
}

const _: () = assert!(ring_bytes(RING_CAPACITY).is_multiple_of(64));

/// Bytes of a queue object for `m` members: the rings and the core word.
fn queue_bytes(m: usize) -> usize {
    ring_offset(2 * m) + 64
}

/// This host's name, as ranks compare it to find their neighbours (`?` if
/// it has none).
pub fn hostname() -> String {
    gex_bootstrap::os::host::hostname().unwrap_or_else(|| "?".into())
}

/// Runs a collective step: every rank reports success or a message, and all
/// fail together if any failed, so one rank's error is not a hang elsewhere.
pub(crate) fn agree(
    boot: &Bootstrap,
    mine: &Result<()>,
    what: &str,
    progress: &mut dyn FnMut(),
) -> Result<()> {
    let msg = match mine {
        Ok(()) => Vec::new(),
        Err(e) => e.to_string().into_bytes(),
    };
    let all = boot.exchange(&msg, progress)?;
    match all.iter().enumerate().find(|(_, m)| !m.is_empty()) {
        None => Ok(()),
        Some((r, m)) => Err(Error::resource(format!(
            "smp conduit: {what} failed on rank {r}: {}",
            String::from_utf8_lossy(m)
        ))),
    }
}

impl SmpTransport {
    /// Creates this rank's queues for `members` (sorted jobranks including
    /// this rank), maps every member's, and closes its descriptor once all
    /// are mapped. Collective over the whole job: every rank calls it, each with
    /// its own neighbourhood.
    pub fn new(boot: &Bootstrap, members: &[Rank]) -> Result<SmpTransport> {
        let me = boot.rank();
        let n = boot.size() as usize;
        let job = boot.job_id().to_string();
        let mut idle = || {};
        let mut members = members.to_vec();
        members.sort_unstable();
        members.dedup();
        let me_local = members
            .iter()
            .position(|&r| r == me)
            .ok_or_else(|| Error::bad_arg("a rank must be a member of its own neighbourhood"))?;
        let m = members.len();
        let mut local_of = vec![u32::MAX; n];
        for (i, &r) in members.iter().enumerate() {
            *local_of
                .get_mut(r as usize)
                .ok_or_else(|| Error::bad_arg(format!("neighbour {r} is not in the job")))? =
                i as u32;
        }

        let qbytes = queue_bytes(m);
        // Create, publish the handle, map the members', agree, close: a
        // crash at any step leaves nothing (see gex_conduit::shm).
        let mine = shm::create(&queue_name(&job, me), qbytes);
        // One byte says which: 1 and the handle, or 0 and the error.
        let msg = match &mine {
            Ok(q) => [&[1u8][..], &q.handle().encode()].concat(),
            Err(e) => [&[0u8][..], e.to_string().as_bytes()].concat(),
        };
        let all = boot.exchange(&msg, &mut idle)?;
        let mut handles = Vec::with_capacity(all.len());
        for (r, m) in all.iter().enumerate() {
            match (
                m.first(),
                shm::Handle::decode(m.get(1..).unwrap_or_default()),
            ) {
                (Some(1), Some(h)) => handles.push(h),
                _ => {
                    return Err(Error::resource(format!(
                        "smp conduit: creating AM queues failed on rank {r}: {}",
                        String::from_utf8_lossy(m.get(1..).unwrap_or_default())
                    )))
                }
            }
        }
        let mine = mine.expect("every rank created its queues");

        let mut queues = Vec::with_capacity(m);
        let mut open_err = Ok(());
        for &r in members.iter().filter(|&&r| r != me) {
            match shm::open(&handles[r as usize], &queue_name(&job, r), qbytes) {
                Ok(q) => queues.push((r, q)),
                Err(e) => {
                    open_err = Err(e);
                    break;
                }
            }
        }
        let agreed = agree(boot, &open_err, "mapping peer AM queues", &mut idle);
        let mine = mine.into_mapping();
        agreed?;

        let base_of = |r: Rank| -> *mut u8 {
            if r == me {
                mine.ptr()
            } else {
                queues
                    .iter()
                    .find(|(q, _)| *q == r)
                    .expect("mapped")
                    .1
                    .ptr()
            }
        };
        let mut out_req = Vec::with_capacity(m);
        let mut out_rep = Vec::with_capacity(m);
        let mut in_req = Vec::with_capacity(m);
        let mut in_rep = Vec::with_capacity(m);
        for (i, &r) in members.iter().enumerate() {
            let peer = base_of(r);
            // SAFETY: each ring lies inside a live mapping of ring_bytes()
            // bytes (the object is 2m rings), zero-filled at creation; this
            // process is the only producer into member r's rings for source
            // `me`, and the only consumer of its own rings.
            unsafe {
                let req = peer.add(ring_offset(me_local));
                let rep = peer.add(ring_offset(m + me_local));
                out_req.push(SpinLock::new(Producer::new(req, RING_CAPACITY)));
                out_rep.push(SpinLock::new(Producer::new(rep, RING_CAPACITY)));
                in_req.push(InRing::new(mine.ptr().add(ring_offset(i))));
                in_rep.push(InRing::new(mine.ptr().add(ring_offset(m + i))));
            }
        }
        // Each member's core word: the line after its rings, zero-filled
        // at creation, aligned (ring bytes are whole cache lines).
        let cores = members
            .iter()
            .map(|&r| CoreWord(base_of(r).wrapping_add(ring_offset(2 * m)) as *const AtomicU64))
            .collect();
        let mut maps: Vec<shm::Mapping> = queues.into_iter().map(|(_, q)| q).collect();
        maps.push(mine);
        Ok(SmpTransport {
            me,
            members,
            local_of,
            out_req,
            out_rep,
            in_req,
            in_rep,
            segments: OnceLock::new(),
            cores,
            me_local,
            _queues: maps,
        })
    }

    /// The member jobranks, ascending.
    pub fn members(&self) -> &[Rank] {
        &self.members
    }

    /// Whether `jobrank` is reached through this transport.
    #[inline]
    pub fn contains(&self, jobrank: Rank) -> bool {
        self.local_of
            .get(jobrank as usize)
            .is_some_and(|&i| i != u32::MAX)
    }

    /// `Conduit::core_shared_with_spinner` for the members: records the
    /// core this thread runs on, now, in this process's core word, and says
    /// whether another member recorded the same core in the last
    /// [`CORE_RECENT_MS`]. Costs a `getcpu` (no system call where the
    /// kernel offers it in the vDSO), a clock read and a line per member.
    pub fn core_shared_with_spinner(&self) -> bool {
        if self.members.len() < 2 {
            return false;
        }
        // SAFETY: no preconditions.
        let cpu = unsafe { libc::sched_getcpu() };
        if cpu < 0 {
            return false;
        }
        let cpu = cpu as u64 + 1;
        let now = monotonic_ms();
        self.cores[self.me_local]
            .get()
            .store(cpu << 32 | u64::from(now), Ordering::Relaxed);
        self.cores.iter().enumerate().any(|(i, w)| {
            let v = w.get().load(Ordering::Relaxed);
            i != self.me_local && v >> 32 == cpu && now.wrapping_sub(v as u32) < CORE_RECENT_MS
        })
    }

    /// Payload limits between members.
    pub fn limits() -> AmLimits {
        AmLimits::new(MAX_MEDIUM, MAX_MEDIUM, MAX_LONG, MAX_LONG).with_max_long_carried(MAX_MEDIUM)
    }

    /// Drains up to a batch of messages from one inbound ring.
    #[inline]
    fn drain(&self, ring: &InRing, src: Rank, is_request: bool, sink: &dyn AmSink) -> usize {
        if !ring.has_data() {
            return 0;
        }
        // Another thread of this process is draining it: let it.
        let Some(mut c) = ring.consumer.try_lock() else {
            return 0;
        };
        let mut ran = 0;
        while ran < POLL_BATCH {
            let Some(rec) = c.peek() else { break };
            self.deliver(rec, src, is_request, sink);
            c.release(rec);
            ran += 1;
        }
        c.sync();
        ring.seen_head.store(c.head(), Ordering::Relaxed);
        ran
    }

    #[inline]
    fn deliver(&self, rec: ring::Record, src: Rank, is_request: bool, sink: &dyn AmSink) {
        // SAFETY: the record is a published AM record in our own ring: its
        // header and arguments were written by the sender before the
        // release-store that made it visible, and the bytes stay unchanged
        // until we release it after the handler returns.
        unsafe {
            let start = rec.body.sub(8);
            let carried = *start.add(8) & CARRIED != 0;
            let cat = *start.add(8) & !CARRIED;
            let dest_ep = *start.add(9);
            let handler = *start.add(10);
            let nargs = (*start.add(11) as usize).min(AM_MAX_ARGS);
            let word = (start.add(12) as *const u32).read();
            let (plen, src_ep) = ((word & PLEN_MASK) as usize, (word >> 24) as u8);
            let args = std::slice::from_raw_parts(start.add(AM_HEADER) as *const AmArg, nargs);
            let after = align_up(AM_HEADER + 4 * nargs);
            let category = AmCategory::from_u8(cat).unwrap_or_else(|| {
                gex_bootstrap::fatal(&format!(
                    "corrupt AM record from rank {src}: category {cat}"
                ))
            });
            let (payload, dest_addr): (&[u8], usize) = match category {
                AmCategory::Short => (&[], 0),
                AmCategory::Medium => (std::slice::from_raw_parts(start.add(after), plen), 0),
                AmCategory::Long if plen == 0 => {
                    // Names no memory: dest_addr as sent, any value.
                    (&[], (start.add(after + 8) as *const u64).read() as usize)
                }
                AmCategory::Long => {
                    let off = (start.add(after) as *const u64).read() as usize;
                    let dest = (start.add(after + 8) as *const u64).read() as usize;
                    // The primordial endpoint's attached segment; without
                    // one, a created segment bound to it (or to a created
                    // endpoint), as the object model knows it.
                    let attached = dest_ep == 0 && self.segments.get().is_some();
                    let at = if attached {
                        let seg = self.segments.get().map(|s| s.table[self.me as usize]);
                        arrived_long(seg, self.me, off, plen)
                    } else {
                        gex_conduit::epseg::arrived_at_ep(
                            EpIndex::from(dest_ep),
                            self.me,
                            off,
                            plen,
                        )
                    };
                    let at = at.unwrap_or_else(|e| {
                        gex_bootstrap::fatal(&format!(
                            "smp conduit: a Long AM from rank {src} (endpoint {src_ep}): {e}"
                        ))
                    });
                    if carried {
                        // The payload follows in the record: its length
                        // was written by another process, so it is checked
                        // against the record before it is read.
                        if attached || after + 16 + plen > 8 + rec.body_room {
                            gex_bootstrap::fatal(&format!(
                                "smp conduit: a Long AM from rank {src} carries {plen} bytes its record does not hold (or for the attached segment of the primordial endpoint, which the sender maps)"
                            ));
                        }
                        // The segment range was checked above; the record
                        // is this ring's memory, separate from it.
                        std::ptr::copy_nonoverlapping(start.add(after + 16), at as *mut u8, plen);
                    }
                    (std::slice::from_raw_parts(at as *const u8, plen), dest)
                }
            };
            sink.deliver(
                &IncomingAm::new(src, category, is_request, handler, args, payload, dest_addr)
                    .between(EpIndex::from(src_ep), EpIndex::from(dest_ep)),
            );
        }
    }

    /// Writes `msg` into a reserved record body (`b` is 8 bytes into the
    /// record) and, for a Long with a payload, copies the payload to
    /// `long_at` ([`SmpTransport::long_target`]: an address in the target's
    /// segment mapped here), or into the record after its offset and
    /// address when `long_at` is `None`.
    ///
    /// # Safety
    /// `b` must be the body of a reserved record of `record_len(msg) - 8`
    /// bytes, plus the payload's length for a carried Long; `long_at` must
    /// be the start of `msg.payload.len()` writable bytes of a mapping.
    #[inline]
    unsafe fn write_record(
        &self,
        b: *mut u8,
        msg: &OutgoingAm<'_>,
        long_at: Option<usize>,
    ) -> Result<()> {
        // SAFETY: per the function contract.
        unsafe {
            let start = b.sub(8);
            *start.add(8) = msg.category as u8;
            *start.add(9) = msg.dest_ep as u8;
            *start.add(10) = msg.handler;
            *start.add(11) = msg.args.len() as u8;
            (start.add(12) as *mut u32).write(msg.payload.len() as u32 | (msg.src_ep << 24));
            std::ptr::copy_nonoverlapping(
                msg.args.as_ptr() as *const u8,
                start.add(AM_HEADER),
                4 * msg.args.len(),
            );
            let after = align_up(AM_HEADER + 4 * msg.args.len());
            match msg.category {
                AmCategory::Short => {}
                AmCategory::Medium => std::ptr::copy_nonoverlapping(
                    msg.payload.as_ptr(),
                    start.add(after),
                    msg.payload.len(),
                ),
                AmCategory::Long if msg.payload.is_empty() => {
                    (start.add(after) as *mut u64).write(0);
                    (start.add(after + 8) as *mut u64).write(msg.dest_addr as u64);
                }
                AmCategory::Long => {
                    match long_at {
                        // `copy` (memmove) rather than copy_nonoverlapping:
                        // the source may itself lie in a mapped segment.
                        Some(at) => {
                            std::ptr::copy(msg.payload.as_ptr(), at as *mut u8, msg.payload.len())
                        }
                        None => {
                            *start.add(8) |= CARRIED;
                            std::ptr::copy_nonoverlapping(
                                msg.payload.as_ptr(),
                                start.add(after + 16),
                                msg.payload.len(),
                            );
                        }
                    }
                    (start.add(after) as *mut u64).write(msg.dest_offset as u64);
                    (start.add(after + 8) as *mut u64).write(msg.dest_addr as u64);
                }
            }
        }
        Ok(())
    }

    /// Where the payload of a Long with a payload to `dest` goes: the
    /// address, in this process's mapping of the target's segment, that the
    /// sender copies it to; or `None` when the record carries it (a created
    /// endpoint's segment not mapped here, within [`MAX_MEDIUM`]). The range
    /// was validated by the AM layer and is checked again against the table
    /// the copy goes through.
    fn long_target(&self, dest: Rank, msg: &OutgoingAm<'_>) -> Result<Option<usize>> {
        let len = msg.payload.len();
        // Index 0 without an attached segment: a created segment bound to
        // the primordial endpoint, reached as a created endpoint's.
        let seg = if msg.dest_ep == 0 && self.segments.get().is_some() {
            self.segments
                .get()
                .map(|s| s.table[dest as usize])
                .filter(|s| s.local_base.is_some())
        } else {
            let Some(seg) = gex_conduit::epseg::ep_segment(msg.dest_ep, dest) else {
                return Err(Error::bad_arg(format!(
                    "smp conduit: Long AM to endpoint {} of rank {dest}: no segment of it is known here",
                    msg.dest_ep
                )));
            };
            if seg.local_base.is_none() {
                seg.offset_of(dest, msg.dest_offset, len, true, ZeroLen::InSegment)
                    .map_err(|e| {
                        Error::bad_arg(format!(
                            "smp conduit: Long AM to endpoint {} of rank {dest}: {e}",
                            msg.dest_ep
                        ))
                    })?;
                if len > MAX_MEDIUM {
                    return Err(Error::bad_arg(format!(
                        "smp conduit: Long AM of {len} bytes to endpoint {} of rank {dest}: its segment is not mapped here (client memory), so the payload travels in the message, at most {MAX_MEDIUM} bytes",
                        msg.dest_ep
                    )));
                }
                return Ok(None);
            }
            Some(seg)
        };
        let seg = seg.unwrap_or_default();
        match seg.offset_of(dest, msg.dest_offset, len, true, ZeroLen::InSegment) {
            Ok(off) => Ok(Some(seg.local_base.unwrap_or(0) + off)),
            Err(e) => Err(Error::bad_arg(format!(
                "smp conduit: Long AM to rank {dest} (endpoint {}): no mapped segment covers it: {e}",
                msg.dest_ep
            ))),
        }
    }
}

/// Where the payload `[off, +len)` of a Long that arrived at rank `me`
/// lies in this process, given `me`'s segment (`None` before attach). The
/// range was written by another process: it is checked here, before it
/// becomes a pointer, by the one range check ([`SegmentDesc::offset_of`]).
#[inline]
fn arrived_long(
    seg: Option<SegmentDesc>,
    me: Rank,
    off: usize,
    len: usize,
) -> std::result::Result<usize, String> {
    // This rank's own segment is always mapped here; an unmapped one is
    // treated as none.
    let seg = seg.filter(|s| s.local_base.is_some()).unwrap_or_default();
    seg.offset_of(me, off, len, true, ZeroLen::InSegment)
        .map(|o| seg.local_base.unwrap_or(0) + o)
        .map_err(|e| e.local().to_string())
}

/// Total record length of `msg`.
#[inline]
fn record_len(msg: &OutgoingAm<'_>) -> usize {
    record_len_of(msg.category, msg.args.len(), msg.payload.len())
}

/// Total record length of an AM of `category` with `nargs` arguments and a
/// `len`-byte payload (a Long's payload goes to the segment, not the ring).
#[inline]
fn record_len_of(category: AmCategory, nargs: usize, len: usize) -> usize {
    let after = align_up(AM_HEADER + 4 * nargs);
    after
        + match category {
            AmCategory::Short => 0,
            AmCategory::Medium => len,
            AmCategory::Long => 16,
        }
}

impl SmpTransport {
    /// One attempt to inject `msg` to member `dest`: `NoOp` when its ring is
    /// full (the caller decides whether to wait).
    #[inline]
    pub fn try_send(&self, dest: Rank, msg: &OutgoingAm<'_>) -> Result<Injected> {
        let rings = if msg.is_request {
            &self.out_req
        } else {
            &self.out_rep
        };
        let idx = *self
            .local_of
            .get(dest as usize)
            .filter(|&&i| i != u32::MAX)
            .ok_or_else(|| Error::bad_arg(format!("rank {dest} is not in this neighbourhood")))?;
        let ring = &rings[idx as usize];
        if msg.args.len() > AM_MAX_ARGS
            || (msg.category == AmCategory::Medium && msg.payload.len() > MAX_MEDIUM)
            || (msg.category == AmCategory::Long && msg.payload.len() > MAX_LONG)
        {
            return Err(Error::bad_arg("AM exceeds the smp transport's limits"));
        }
        let mut body = record_len(msg) - 8;
        let mut long_at = None;
        if msg.category == AmCategory::Long && !msg.payload.is_empty() {
            long_at = self.long_target(dest, msg)?;
            if long_at.is_none() {
                body += msg.payload.len();
            }
        }
        let mut p = ring.lock();
        let Some(b) = p.reserve(body) else {
            return Ok(Injected::NoOp);
        };
        // SAFETY: b is the body of a record of `body` bytes (with room for a
        // carried payload); a Long's address was checked against the table
        // of the mapping it lies in.
        match unsafe { self.write_record(b, msg, long_at) } {
            Ok(()) => {
                p.publish();
                Ok(Injected::Sent)
            }
            Err(e) => {
                p.cancel();
                Err(e)
            }
        }
    }

    /// Whether [`SmpTransport::try_send`] of such an AM to member `dest`
    /// would find room in its ring now (see `Conduit::am_can_send`).
    pub fn can_send(
        &self,
        dest: Rank,
        is_request: bool,
        category: AmCategory,
        nargs: usize,
        len: usize,
    ) -> bool {
        let rings = if is_request {
            &self.out_req
        } else {
            &self.out_rep
        };
        let Some(&idx) = self.local_of.get(dest as usize).filter(|&&i| i != u32::MAX) else {
            return false;
        };
        if nargs > AM_MAX_ARGS
            || (category == AmCategory::Medium && len > MAX_MEDIUM)
            || (category == AmCategory::Long && len > MAX_LONG)
        {
            return false;
        }
        let body = record_len_of(category, nargs, len) - 8;
        rings[idx as usize].lock().has_room(body)
    }

    /// Delivers arrived messages to `sink`; returns how many ran.
    #[inline]
    pub fn poll(&self, sink: &dyn AmSink, scope: PollScope) -> usize {
        let mut ran = 0;
        for (i, &src) in self.members.iter().enumerate() {
            ran += self.drain(&self.in_rep[i], src, false, sink);
        }
        if scope == PollScope::All {
            for (i, &src) in self.members.iter().enumerate() {
                ran += self.drain(&self.in_req[i], src, true, sink);
            }
        }
        ran
    }

    /// The largest segment this rank may attach.
    pub fn max_segment_size(&self) -> usize {
        let page = gex_conduit::page_size();
        let total = shm::shm_capacity().unwrap_or(1 << 30);
        let per_rank = total / self.members.len().max(1);
        per_rank / page * page
    }

    /// Collectively (over the whole job) creates this rank's segment of
    /// `size` bytes, learns every rank's, maps the members', and closes
    /// its descriptor once they are mapped. Returns the table indexed by jobrank.
    pub fn attach_segment(
        &self,
        boot: &Bootstrap,
        size: usize,
        progress: &mut dyn FnMut(),
    ) -> Result<Vec<SegmentDesc>> {
        let job = boot.job_id().to_string();
        let me = self.me;
        let name = segment_name(&job, me);
        let mine = shm::create(&name, size);
        let mut info = Vec::new();
        if let Ok(m) = &mine {
            info.extend_from_slice(&(m.ptr() as u64).to_le_bytes());
            info.extend_from_slice(&m.handle().encode());
        }
        const INFO: usize = 8 + shm::Handle::BYTES;
        let all = boot.exchange(&info, progress)?;
        if let Some((r, _)) = all.iter().enumerate().find(|(_, i)| i.len() != INFO) {
            let why = match &mine {
                Err(e) if r == me as usize => e.to_string(),
                _ => "could not create its segment".to_string(),
            };
            return Err(Error::resource(format!(
                "gex_Segment_Attach: rank {r}: {why}"
            )));
        }
        let mine = mine.expect("all ranks created their segment");
        let mut table = Vec::with_capacity(all.len());
        let mut maps = Vec::new();
        let mut open_err = Ok(());
        for (r, i) in all.iter().enumerate() {
            let owner_base = u64::from_le_bytes(i[0..8].try_into().expect("8 bytes")) as usize;
            let h = shm::Handle::decode(&i[8..]).expect("length checked");
            let sz = usize::try_from(h.len).unwrap_or(usize::MAX);
            let local_base = if r == me as usize {
                Some(mine.ptr() as usize)
            } else if self.contains(r as Rank) {
                match shm::open(&h, &segment_name(&job, r as Rank), sz) {
                    Ok(m) => {
                        let p = m.ptr() as usize;
                        maps.push(m);
                        Some(p)
                    }
                    Err(e) => {
                        open_err = Err(e);
                        None
                    }
                }
            } else {
                None
            };
            table.push(SegmentDesc::new(owner_base, local_base, sz));
        }
        let agreed = agree(boot, &open_err, "mapping peer segments", progress);
        let mine = mine.into_mapping();
        agreed?;
        maps.push(mine);
        self.segments
            .set(Segments {
                table: table.clone(),
                _maps: maps,
            })
            .map_err(|_| Error::bad_arg("gex_Segment_Attach: a segment is already attached"))?;
        Ok(table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Long's range comes from another process: a hostile one is an
    /// error, never a wrap (an offset near `usize::MAX` plus the length
    /// used to wrap below the segment's size and pass) nor a panic.
    #[test]
    fn an_arrived_long_outside_the_segment_is_refused() {
        let base = 0x7f00_0000_0000usize;
        let seg = Some(SegmentDesc::new(0x1000, Some(base), 0x1000));
        assert_eq!(arrived_long(seg, 2, 0, 0x1000), Ok(base));
        assert_eq!(arrived_long(seg, 2, 0xff8, 8), Ok(base + 0xff8));
        assert_eq!(arrived_long(seg, 2, 0x1000, 0), Ok(base + 0x1000));
        for (off, len) in [
            (0xff9, 8),
            (0x1001, 0),
            (usize::MAX, 1),
            (usize::MAX - 7, 16),
            (usize::MAX - 0xfff, 0x1001),
            (0, usize::MAX),
        ] {
            let e = arrived_long(seg, 2, off, len).unwrap_err();
            assert!(
                e.contains(&format!("[{off:#x}, +{len})")) && e.contains("rank 2"),
                "{e}"
            );
        }
        let e = arrived_long(None, 2, 0, 8).unwrap_err();
        assert!(e.contains("rank 2"), "{e}");
    }
}
