//! The conduit interface of gex: what a transport implements so that the
//! layers above (gex-core's object model, gex-am, gex-rma, gex-coll, ...)
//! run on it, and what a runtime needs to embed one.
//!
//! This crate depends only on gex-types and the control plane
//! (gex-bootstrap), so a conduit, or a program that drives one directly,
//! links no object model.
//!
//! # Writing a conduit
//!
//! A conduit is a [`Conduit`] (the transport, shared by every thread of the
//! process) and a [`ConduitFactory`] (what a program names at start-up; the
//! `gex` facade's `init` picks one by `--conduit`/`GEX_CONDUIT`). The
//! factory gets the joined control plane ([`gex_bootstrap::Bootstrap`]:
//! rank, size, an all-gather `exchange` and a `barrier` for start-up) and
//! returns the transport. The transport then:
//!
//! * reports the job's [`Layout`] (which ranks share memory, which a host)
//!   and its payload limits ([`AmLimits`], per peer and the least over the
//!   job);
//! * injects Active Messages ([`Conduit::am_send`] with an
//!   [`OutgoingAm`]): the payload must be copied or sent before the call
//!   returns; when resources are short it returns [`Injected::NoOp`] for an
//!   `IMMEDIATE` send and otherwise makes progress until it can send
//!   ([`send_or_progress`] is that loop);
//! * delivers arrived messages to an [`AmSink`] when polled
//!   ([`Conduit::poll`], with the [`PollScope`] the caller allows), one
//!   [`IncomingAm`] each; a Long's payload is already in the bound segment;
//! * carries the source and destination endpoint indices of every message
//!   ([`OutgoingAm::between`], [`IncomingAm::between`]): the AM layer
//!   dispatches by the destination index and replies to the source index;
//! * creates and publishes segments ([`Conduit::attach_segment`], a
//!   collective returning every rank's [`SegmentDesc`]); a conduit that maps
//!   a peer's segment into this process says so in
//!   [`SegmentDesc::local_base`], and the RMA layer then copies directly;
//! * keeps counters for users ([`Conduit::stats`], [`stats`]).
//!
//! Besides Active Messages a conduit may offer one-sided operations, each
//! optional and declared per peer:
//!
//! * puts and gets ([`Conduit::rma`], an [`RmaCapability`]): the RMA layer
//!   uses them for the peers they reach, instead of its AM reference path;
//!   completion comes back through [`OpCompletion`], a get's destination
//!   is a [`GetDest`] (see the udp conduit's `rma` module for one);
//! * a put's source is a [`PutSource`], which the conduit may keep after
//!   the call and read later (zero-copy): local completion is when it
//!   drops it, and the RMA layer reports that as the client's `lc` event,
//!   `Lc::Defer`, `Lc::Group` or NBI completion. Active Message payloads
//!   are borrowed for the call only ([`OutgoingAm`]: copied or sent before
//!   [`Conduit::am_send`] returns);
//! * remote atomics for the (type, operation) pairs it declares
//!   ([`Conduit::atomics`], an [`AtomicCapability`]), for the remote
//!   atomics layer;
//! * whatever it needs to address a peer's segment remotely (an RDMA
//!   registration key) travels in [`SegmentDesc::remote_key`], published
//!   with the segment table at attach.
//!
//! A range in a segment (an arriving Long's destination, say) is checked
//! with [`SegmentDesc::offset_of`], the one range check of gex (see
//! [`range`]): overflow-safe, and its error names rank, range and segment.
//!
//! Everything a transport receives from the network or from another process
//! is untrusted: check it before it touches state, never turn it into a
//! pointer. [`shm`] shares memory between the ranks of a host without names
//! in the file system, so a crash leaves nothing behind.
//!
//! Interface structs are `#[non_exhaustive]` and built with their `new`
//! constructors, so that a field added later breaks no conduit.

pub mod atomic_ops;
pub mod epseg;
pub mod range;
pub mod stats;

/// Nameless shared memory among the ranks of a host (the one copy lives in
/// `gex_bootstrap::os::shm`).
pub use gex_bootstrap::os::shm;

pub use range::{fits, RangeError, ZeroLen};

use gex_types::{AmArg, AmCategory, AmIndex, EpIndex, Rank, Result};

use gex_bootstrap::Bootstrap;

use crate::stats::ConduitStats;

/// Payload limits between this rank and one peer (or the least over all).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AmLimits {
    /// Largest Medium request payload.
    pub max_request_medium: usize,
    /// Largest Medium reply payload.
    pub max_reply_medium: usize,
    /// Largest Long request payload.
    pub max_request_long: usize,
    /// Largest Long reply payload.
    pub max_reply_long: usize,
    /// Largest Long payload, request or reply, to a segment bound to a
    /// created endpoint that this process does not map (client memory is
    /// private to its process): a transport that places Long payloads by
    /// copying into the target's mapping carries such a payload in the
    /// message instead, within this. [`AmLimits::new`] makes it the least
    /// Long limit (a conduit whose Long payloads always travel).
    pub max_long_carried: usize,
}

impl AmLimits {
    /// The limits of Medium and Long requests and replies.
    pub fn new(
        max_request_medium: usize,
        max_reply_medium: usize,
        max_request_long: usize,
        max_reply_long: usize,
    ) -> AmLimits {
        AmLimits {
            max_request_medium,
            max_reply_medium,
            max_request_long,
            max_reply_long,
            max_long_carried: max_request_long.min(max_reply_long),
        }
    }

    /// These limits with [`AmLimits::max_long_carried`] set to `n` (capped
    /// by the Long limits).
    pub fn with_max_long_carried(self, n: usize) -> AmLimits {
        AmLimits {
            max_long_carried: n.min(self.max_request_long).min(self.max_reply_long),
            ..self
        }
    }

    /// The Long limit of a request (`is_request`) or reply to a segment
    /// this process maps (`mapped`) or not.
    #[inline]
    pub fn max_long(&self, is_request: bool, mapped: bool) -> usize {
        let l = if is_request {
            self.max_request_long
        } else {
            self.max_reply_long
        };
        if mapped {
            l
        } else {
            l.min(self.max_long_carried)
        }
    }

    /// The element-wise minimum of two limit sets.
    pub fn min(self, o: AmLimits) -> AmLimits {
        AmLimits {
            max_request_medium: self.max_request_medium.min(o.max_request_medium),
            max_reply_medium: self.max_reply_medium.min(o.max_reply_medium),
            max_request_long: self.max_request_long.min(o.max_request_long),
            max_reply_long: self.max_reply_long.min(o.max_reply_long),
            max_long_carried: self.max_long_carried.min(o.max_long_carried),
        }
    }
}

/// An Active Message to inject. Arguments have been validated by the AM
/// layer; for a Long with a payload, `dest_offset..dest_offset +
/// payload.len()` lies inside the target's bound segment. A zero-byte Long
/// has `dest_offset` 0 and names no memory: the target need not have a
/// segment, and its handler gets `dest_addr` (any value) and an empty
/// payload.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct OutgoingAm<'a> {
    /// Short, Medium or Long.
    pub category: AmCategory,
    /// Request (`true`) or reply (`false`).
    pub is_request: bool,
    /// Handler index at the target.
    pub handler: AmIndex,
    /// Handler arguments (at most 16).
    pub args: &'a [AmArg],
    /// Payload (empty for a Short).
    pub payload: &'a [u8],
    /// Long only: where the payload goes, as an offset into the target's
    /// bound segment.
    pub dest_offset: usize,
    /// Long only: the destination as the initiator named it (address or
    /// offset), passed to the handler unchanged.
    pub dest_addr: usize,
    /// The sending endpoint's index in this process (a reply goes back to
    /// it). Below `gex_types::MAX_EPS`, so it fits one byte on the wire.
    pub src_ep: EpIndex,
    /// The index of the endpoint in the target process whose handler table
    /// runs the message. Below `gex_types::MAX_EPS`; whether the target has
    /// it is for the target to check.
    pub dest_ep: EpIndex,
}

impl<'a> OutgoingAm<'a> {
    /// A Short or Medium message (for a Long, add the destination with
    /// [`OutgoingAm::to_offset`]).
    pub fn new(
        category: AmCategory,
        is_request: bool,
        handler: AmIndex,
        args: &'a [AmArg],
        payload: &'a [u8],
    ) -> OutgoingAm<'a> {
        OutgoingAm {
            category,
            is_request,
            handler,
            args,
            payload,
            dest_offset: 0,
            dest_addr: 0,
            src_ep: 0,
            dest_ep: 0,
        }
    }

    /// This message from endpoint `src_ep` of this process to endpoint
    /// `dest_ep` of the target (both 0, the primordial endpoints, unless
    /// set): both must be below `gex_types::MAX_EPS`.
    #[inline]
    pub fn between(self, src_ep: EpIndex, dest_ep: EpIndex) -> OutgoingAm<'a> {
        debug_assert!((src_ep | dest_ep) < gex_types::MAX_EPS as EpIndex);
        OutgoingAm {
            src_ep,
            dest_ep,
            ..self
        }
    }

    /// This message with a Long's destination: `dest_offset` into the
    /// target's bound segment, `dest_addr` as the initiator named it.
    pub fn to_offset(self, dest_offset: usize, dest_addr: usize) -> OutgoingAm<'a> {
        OutgoingAm {
            dest_offset,
            dest_addr,
            ..self
        }
    }
}

/// An Active Message that arrived, as handed to the [`AmSink`].
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct IncomingAm<'a> {
    /// The sender's jobrank.
    pub src: Rank,
    /// Short, Medium or Long.
    pub category: AmCategory,
    /// Request (`true`) or reply (`false`).
    pub is_request: bool,
    /// Handler index.
    pub handler: AmIndex,
    /// Handler arguments.
    pub args: &'a [AmArg],
    /// Medium: the payload in temporary storage valid during the handler.
    /// Long: the payload where it landed in this rank's bound segment.
    pub payload: &'a [u8],
    /// Long only: the destination as the initiator named it.
    pub dest_addr: usize,
    /// The sending endpoint's index in the sender's process, as the
    /// message says (untrusted: the AM layer checks it).
    pub src_ep: EpIndex,
    /// The index of the endpoint in this process the message is for, as
    /// the message says (untrusted: the AM layer checks that it exists).
    pub dest_ep: EpIndex,
}

impl<'a> IncomingAm<'a> {
    /// A message from `src`; `dest_addr` is a Long's destination as the
    /// initiator named it (0 otherwise).
    pub fn new(
        src: Rank,
        category: AmCategory,
        is_request: bool,
        handler: AmIndex,
        args: &'a [AmArg],
        payload: &'a [u8],
        dest_addr: usize,
    ) -> IncomingAm<'a> {
        IncomingAm {
            src,
            category,
            is_request,
            handler,
            args,
            payload,
            dest_addr,
            src_ep: 0,
            dest_ep: 0,
        }
    }

    /// This message from endpoint `src_ep` of the sender to endpoint
    /// `dest_ep` of this process, as the wire says (unchecked).
    #[inline]
    pub fn between(self, src_ep: EpIndex, dest_ep: EpIndex) -> IncomingAm<'a> {
        IncomingAm {
            src_ep,
            dest_ep,
            ..self
        }
    }
}

/// Receives the messages a conduit's poll finds (the AM layer's dispatcher).
pub trait AmSink: Send + Sync {
    /// Runs the handler for `msg`. `reply` sends a reply to `msg.src` from a
    /// request handler.
    fn deliver(&self, msg: &IncomingAm<'_>);
}

/// Which queues a poll drains.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollScope {
    /// Requests and replies.
    All,
    /// Replies only: used while a reply waits for queue space, so that no
    /// request handler runs inside a request handler.
    RepliesOnly,
}

impl PollScope {
    /// What a sender waiting for resources may run while it polls:
    /// everything for a request, replies only for a reply.
    #[inline]
    pub fn for_sender(is_request: bool) -> PollScope {
        if is_request {
            PollScope::All
        } else {
            PollScope::RepliesOnly
        }
    }
}

/// The injection loop of [`Conduit::am_send`], shared by the conduits:
/// `try_send` until it sends; when it cannot, `NoOp` if `immediate`, else
/// `progress` (which polls with [`PollScope::for_sender`]) and try again,
/// spinning briefly and then yielding the core between tries.
#[inline(always)]
pub fn send_or_progress(
    immediate: bool,
    mut try_send: impl FnMut() -> Result<Injected>,
    mut progress: impl FnMut(),
) -> Result<Injected> {
    let mut tries = 0u32;
    loop {
        if try_send()? == Injected::Sent {
            return Ok(Injected::Sent);
        }
        if immediate {
            return Ok(Injected::NoOp);
        }
        progress();
        tries += 1;
        if tries > 64 {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

/// The outcome of an injection.
/// Without `IMMEDIATE` an injection always returns `Sent`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Injected {
    /// The message was sent (its payload copied or delivered).
    Sent,
    /// `IMMEDIATE` was given and resources were short: nothing was sent.
    NoOp,
}

/// One rank's bound segment as seen from this process. The default (size
/// 0) stands for a rank with no bound segment. [`SegmentDesc::offset_of`]
/// is the range check every layer and conduit uses (see [`range`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SegmentDesc {
    /// Base address in the owner's address space.
    pub owner_base: usize,
    /// Base address of this process's mapping of it, if mapped.
    pub local_base: Option<usize>,
    /// Length in bytes (0: the rank has no bound segment).
    pub size: usize,
    /// What the conduit needs to address this segment remotely (an RDMA
    /// transport's remote key of the owner's registration), published with
    /// the segment; 0 for a conduit that needs none.
    pub remote_key: u64,
}

impl SegmentDesc {
    /// A segment of `size` bytes at `owner_base` in its owner, mapped here
    /// at `local_base` if it is, with no remote key.
    pub fn new(owner_base: usize, local_base: Option<usize>, size: usize) -> SegmentDesc {
        SegmentDesc {
            owner_base,
            local_base,
            size,
            remote_key: 0,
        }
    }

    /// This descriptor with the transport's `remote_key` for the segment.
    pub fn with_remote_key(self, remote_key: u64) -> SegmentDesc {
        SegmentDesc { remote_key, ..self }
    }
}

/// The job layout a conduit reports: which ranks share memory (nbrhd) and
/// which share a host.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Layout {
    /// Jobranks of this process's neighbourhood, ascending.
    pub nbrhd: Vec<Rank>,
    /// Jobranks of this process's host, ascending.
    pub host: Vec<Rank>,
    /// Number of neighbourhoods and this process's one.
    pub nbrhd_set: (Rank, Rank),
    /// Number of hosts and this process's one.
    pub host_set: (Rank, Rank),
}

impl Layout {
    /// A layout: this process's neighbourhood and host (jobranks,
    /// ascending), and (count, index) of neighbourhoods and of hosts.
    pub fn new(
        nbrhd: Vec<Rank>,
        host: Vec<Rank>,
        nbrhd_set: (Rank, Rank),
        host_set: (Rank, Rank),
    ) -> Layout {
        Layout {
            nbrhd,
            host,
            nbrhd_set,
            host_set,
        }
    }
}

/// Signalled by a conduit when a one-sided operation it was given
/// completes (gex-core's `Completion` implements it, so events and NBI
/// counters wait on it).
pub trait OpCompletion: Send + Sync {
    /// The operation is complete: a put's data is in the target segment, a
    /// get's bytes are in its destination. Called exactly once per
    /// operation started, from whichever thread's poll saw it complete.
    fn complete(&self);
}

/// Where a get's bytes go: `len` bytes at `ptr`, kept valid by the caller
/// (or by `keep`, which the conduit drops after completing) until the
/// operation completes.
pub struct GetDest {
    ptr: *mut u8,
    len: usize,
    _keep: Option<Box<dyn std::any::Any + Send>>,
}

// SAFETY: a GetDest is a destination the caller handed over for the
// operation's lifetime (see `GetDest::new`); the conduit writes it from one
// thread, once, before completing.
unsafe impl Send for GetDest {}

impl GetDest {
    /// A destination of `len` bytes at `ptr`.
    ///
    /// # Safety
    /// `ptr` must be valid for writes of `len` bytes, and not read or
    /// written by anyone else, until the operation it is given to
    /// completes (or, if its start returns `NoOp` or an error, until then);
    /// `keep`, if any, is dropped by the conduit after completion and may
    /// own the memory.
    pub unsafe fn new(
        ptr: *mut u8,
        len: usize,
        keep: Option<Box<dyn std::any::Any + Send>>,
    ) -> GetDest {
        GetDest {
            ptr,
            len,
            _keep: keep,
        }
    }

    /// Bytes expected.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no byte is expected.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where the bytes go, for a conduit whose device writes them in
    /// place (an RDMA READ into registered memory). Writing through it is
    /// bound by [`GetDest::new`]'s contract: `len` bytes, until the
    /// operation completes.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    /// Writes `bytes` at `at` (a part of the get's bytes arriving on its
    /// own).
    ///
    /// # Panics
    /// If the range is not inside the destination.
    pub fn fill_at(&mut self, at: usize, bytes: &[u8]) {
        assert!(
            fits(at, bytes.len(), self.len),
            "GetDest::fill_at: [{at}, +{}) is outside {} bytes",
            bytes.len(),
            self.len
        );
        // SAFETY: per `GetDest::new`, `ptr` is writable for `len` bytes and
        // ours alone until completion; the range lies inside (checked);
        // `bytes` is the conduit's own buffer.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr.add(at), bytes.len()) };
    }

    /// Writes the get's bytes; `bytes.len()` must be [`GetDest::len`].
    ///
    /// # Panics
    /// If the length differs (a conduit checks arriving lengths first).
    pub fn fill(&mut self, bytes: &[u8]) {
        assert_eq!(bytes.len(), self.len, "GetDest::fill: wrong length");
        // SAFETY: per `GetDest::new`, `ptr` is writable for `len` bytes and
        // ours alone until completion; `bytes` is the conduit's own buffer.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr, self.len) };
    }
}

impl std::fmt::Debug for GetDest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GetDest").field("len", &self.len).finish()
    }
}

/// The source of a put handed to a conduit, which may keep it after the
/// call returns and read it until it no longer needs it (zero-copy, as
/// RDMA hardware does): **dropping the `PutSource` is the put's local
/// completion**. A conduit that copies the bytes before returning drops it
/// there (local completion at initiation); one that sends from it keeps it
/// (in a retransmission queue, a posted work request) and drops it when
/// the transport is done with it, at the latest before it signals the
/// operation's [`OpCompletion`]. It is also dropped when the start returns
/// `NoOp` or an error. The RMA layer turns the drop into the `lc` event,
/// `Lc::Defer`, `Lc::Group` or NBI completion the client asked for.
pub struct PutSource {
    ptr: *const u8,
    len: usize,
    /// Owns the bytes when the source is a copy or an owned buffer.
    _owner: Option<Box<dyn std::any::Any + Send>>,
    /// Told when the source is dropped.
    lc: Option<std::sync::Arc<dyn OpCompletion>>,
}

// SAFETY: the bytes are valid and unmodified until the source is dropped
// (see `PutSource::borrowed`) or owned by `_owner`, which is `Send`; they
// are only read, from whichever thread holds the source.
unsafe impl Send for PutSource {}
// SAFETY: as above; `&PutSource` only reads the bytes.
unsafe impl Sync for PutSource {}

impl PutSource {
    /// A source of `len` bytes at `ptr`, not copied.
    ///
    /// # Safety
    /// `ptr` must be valid for reads of `len` bytes until the `PutSource`
    /// is dropped, and the caller must not free them before then (a
    /// client that modifies them meanwhile gets whichever bytes the
    /// transport read, as the spec says of a source modified before local
    /// completion; the memory is never written through this type).
    pub unsafe fn borrowed(ptr: *const u8, len: usize) -> PutSource {
        PutSource {
            ptr,
            len,
            _owner: None,
            lc: None,
        }
    }

    /// A source owning `bytes` (nothing to wait for before reusing the
    /// caller's buffer: local completion for the client is at once).
    pub fn owned(bytes: Vec<u8>) -> PutSource {
        let bytes = bytes.into_boxed_slice();
        PutSource {
            ptr: bytes.as_ptr(),
            len: bytes.len(),
            _owner: Some(Box::new(bytes)),
            lc: None,
        }
    }

    /// A copy of `bytes`.
    pub fn copy_of(bytes: &[u8]) -> PutSource {
        PutSource::owned(bytes.to_vec())
    }

    /// The same source, telling `lc` when it is dropped (replacing any
    /// earlier one).
    pub fn on_release(mut self, lc: std::sync::Arc<dyn OpCompletion>) -> PutSource {
        self.lc = Some(lc);
        self
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: per `borrowed`, or owned by `_owner`: readable for `len`
        // bytes while `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// Bytes to put.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no byte to put.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl AsRef<[u8]> for PutSource {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl Drop for PutSource {
    fn drop(&mut self) {
        if let Some(lc) = self.lc.take() {
            lc.complete();
        }
    }
}

impl std::fmt::Debug for PutSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PutSource")
            .field("len", &self.len)
            .field("owned", &self._owner.is_some())
            .finish()
    }
}

/// One-sided puts and gets a conduit offers besides Active Messages
/// ([`Conduit::rma`]). The RMA layer chooses, per peer and once: a direct
/// copy when the peer's segment is mapped here, else this capability if it
/// [`reaches`](RmaCapability::reaches) the peer, else Active Messages.
///
/// Remote ranges are checked by the caller against the peer's
/// [`SegmentDesc`]; a conduit checks what arrives from the network against
/// its own segment again (never trusting the peer).
pub trait RmaCapability: Send + Sync {
    /// Whether puts and gets to `peer` can go this way.
    fn reaches(&self, peer: Rank) -> bool;

    /// The longest transfer one call takes (callers split longer ones).
    fn max_transfer(&self) -> usize;

    /// Starts a put of `src` to the segment bound to endpoint `ep` of
    /// `peer` (0: its primordial endpoint's) at `offset`. `ep` goes to the
    /// target, which checks the range against its own segment of that
    /// endpoint ([`crate::epseg`]) before touching memory. The
    /// conduit may keep `src` and read it after returning; it drops it
    /// (local completion) once it no longer reads it, and before it
    /// completes `done`, which it does once the bytes are in the target
    /// segment. When resources are short: `NoOp` if `immediate` (nothing
    /// started, `src` dropped, `done` never called), else progress through
    /// `sink` as [`Conduit::am_send`] does until it can start.
    #[allow(clippy::too_many_arguments)]
    fn put(
        &self,
        peer: Rank,
        ep: gex_types::EpIndex,
        offset: usize,
        src: PutSource,
        done: std::sync::Arc<dyn OpCompletion>,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected>;

    /// Starts a get of `dst.len()` bytes from the segment bound to endpoint
    /// `ep` of `peer` at `offset` into `dst`; `done` completes once they are
    /// there.
    /// Resources as for [`RmaCapability::put`].
    #[allow(clippy::too_many_arguments)]
    fn get(
        &self,
        peer: Rank,
        ep: gex_types::EpIndex,
        offset: usize,
        dst: GetDest,
        done: std::sync::Arc<dyn OpCompletion>,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected>;
}

/// The preconditions of a one-sided start that the network conduits (udp,
/// ibv) share, as errors: the endpoint index below `gex_types::MAX_EPS`,
/// `peer` a rank that `rma` [`reaches`](RmaCapability::reaches), and `len`
/// at most its [`max_transfer`](RmaCapability::max_transfer), checked in
/// that order. Every message begins with `who` (the conduit, as
/// `"udp conduit"`); an unreached peer's names this rank, `me`.
pub fn check_one_sided<R: RmaCapability + ?Sized>(
    rma: &R,
    who: &str,
    me: Rank,
    peer: Rank,
    ep: EpIndex,
    len: usize,
) -> Result<()> {
    if ep as usize >= gex_types::MAX_EPS {
        return Err(gex_types::Error::bad_arg(format!(
            "{who}: endpoint index {ep} is not below MAX_EPS"
        )));
    }
    if !rma.reaches(peer) {
        return Err(gex_types::Error::bad_arg(format!(
            "{who}: rank {peer} is not reached by one-sided operations from rank {me}"
        )));
    }
    if len > rma.max_transfer() {
        return Err(gex_types::Error::bad_arg(format!(
            "{who}: a one-sided transfer of {len} bytes is over the {}-byte limit",
            rma.max_transfer()
        )));
    }
    Ok(())
}

/// Remote atomic operations a conduit performs itself (a NIC's atomics),
/// for the (type, operation) pairs it declares
/// ([`Conduit::atomics`]). The remote-atomics layer asks
/// [`AtomicCapability::supports`] when an atomic domain is created, and
/// uses the capability for a domain only if it supports every operation of
/// the domain on every peer the domain reaches, so that CPU atomics and
/// transport atomics never act on the same word.
pub trait AtomicCapability: Send + Sync {
    /// Whether atomics to `peer` can go this way.
    fn reaches(&self, peer: Rank) -> bool;

    /// Whether `op` on `dt` is supported.
    fn supports(&self, dt: gex_types::Dt, op: gex_types::Op) -> bool;

    /// Whether the target performs these atomics with the CPU, through
    /// [`atomic_ops::perform_dyn`] on its own segment (the conduit's
    /// protocol executes them for its peers, as the udp conduit does):
    /// they are then coherent with CPU atomics on the same word, and the
    /// remote-atomics layer may use them for the targets it cannot reach
    /// directly within a domain whose other targets take CPU atomics. A
    /// transport whose device performs them (a NIC) says `false` (the
    /// default): it is used only for whole domains.
    fn cpu_coherent(&self) -> bool {
        false
    }

    /// Starts `op` on the `dt` at `offset` in `peer`'s bound segment with
    /// the operands the operation takes (as bits of `dt`, low-order
    /// bytes), writing the fetched value (if the operation fetches) to
    /// `result` before `done` completes. Resources as for
    /// [`RmaCapability::put`].
    #[allow(clippy::too_many_arguments)]
    fn start(
        &self,
        peer: Rank,
        offset: usize,
        dt: gex_types::Dt,
        op: gex_types::Op,
        operands: [u64; 2],
        result: Option<GetDest>,
        done: std::sync::Arc<dyn OpCompletion>,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected>;
}

/// A transport.
///
/// Thread safety: every method may be called from any thread concurrently.
pub trait Conduit: Send + Sync + 'static {
    /// Short name, e.g. `smp`.
    fn name(&self) -> &'static str;

    /// The control plane this conduit was created with.
    fn bootstrap(&self) -> &Bootstrap;

    /// The job layout.
    fn layout(&self) -> &Layout;

    /// Payload limits between this rank and `peer`; symmetric, stable for
    /// the job, and at least 512 bytes each.
    fn am_limits(&self, peer: Rank) -> AmLimits;

    /// The least limits over every pair of ranks in the job.
    fn am_lub_limits(&self) -> AmLimits;

    /// Injects `msg` to jobrank `dest`. When resources are short, returns
    /// `NoOp` if `immediate`, otherwise makes progress (polling through
    /// `sink`: everything for a request, replies only for a reply) until it
    /// can send.
    fn am_send(
        &self,
        dest: Rank,
        msg: &OutgoingAm<'_>,
        immediate: bool,
        sink: &dyn AmSink,
    ) -> Result<Injected>;

    /// Whether an AM of `category` with `nargs` arguments and a payload of
    /// `len` bytes to `dest` could be injected now without waiting for
    /// resources (queue or window space). A negotiated-payload Prepare with
    /// `IMMEDIATE` asks this before it hands out a buffer, and returns the
    /// no-op when the answer is no. It is a hint, not a reservation: another
    /// thread may take the room first (the Commit then waits, as the spec
    /// allows). The default, for a conduit that cannot tell, says yes.
    fn am_can_send(
        &self,
        dest: Rank,
        is_request: bool,
        category: AmCategory,
        nargs: usize,
        len: usize,
    ) -> bool {
        let _ = (dest, is_request, category, nargs, len);
        true
    }

    /// Delivers arrived messages to `sink`; returns how many ran.
    fn poll(&self, sink: &dyn AmSink, scope: PollScope) -> usize;

    /// Largest segment [`Conduit::attach_segment`] accepts on this rank.
    fn max_segment_size(&self) -> usize;

    /// Collectively creates this rank's segment of `size` bytes (validated by
    /// the caller), makes every rank's segment known to every rank, and
    /// returns the table indexed by jobrank together with the local segment
    /// base. Includes a barrier before returning.
    fn attach_segment(&self, size: usize, sink: &dyn AmSink) -> Result<Vec<SegmentDesc>>;

    /// The one-sided puts and gets this conduit offers, if any (see
    /// [`RmaCapability`]); none by default.
    fn rma(&self) -> Option<&dyn RmaCapability> {
        None
    }

    /// The remote atomics this conduit performs itself, if any (see
    /// [`AtomicCapability`]); none by default (the remote-atomics layer
    /// then uses CPU atomics or Active Messages).
    fn atomics(&self) -> Option<&dyn AtomicCapability> {
        None
    }

    /// The counters this conduit keeps (see [`stats`]); none by
    /// default.
    fn stats(&self) -> ConduitStats {
        ConduitStats::new(self.name())
    }

    /// Called by a thread of this rank whose polls keep finding nothing (a
    /// library wait, or a client's own loop around `gasnet_AMPoll`):
    /// records the core it runs on where the other ranks of this host see
    /// it, and says whether another rank of the host recorded the same core
    /// recently while polling in vain too. Such a rank is still runnable
    /// (a spinning rank never blocks) and can only run when this thread
    /// gives the core up: the caller then yields. Without it, two ranks
    /// that the scheduler put on one core while both spin (more busy
    /// processes than cores, which the ranks cannot see) hand each value
    /// back and forth once per time slice: milliseconds, for microseconds
    /// of work. The default, for a conduit without memory shared among the
    /// ranks of a host, says no.
    fn core_shared_with_spinner(&self) -> bool {
        false
    }
}

/// Creates a conduit for a job: what a program chooses at start-up.
pub trait ConduitFactory {
    /// The conduit's short name.
    fn name(&self) -> &'static str;
    /// Creates the transport over a joined control plane.
    fn create(&self, boot: Bootstrap) -> Result<Box<dyn Conduit>>;
}

/// The system page size (`GASNET_PAGESIZE`).
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

#[cfg(test)]
mod interface_tests {
    use super::*;

    #[test]
    fn descriptors_are_built_through_constructors() {
        let d = SegmentDesc::new(0x1000, Some(0x7000), 4096);
        assert_eq!(
            (d.owner_base, d.local_base, d.size, d.remote_key),
            (0x1000, Some(0x7000), 4096, 0)
        );
        let k = d.with_remote_key(0xfeed);
        assert_eq!((k.owner_base, k.size, k.remote_key), (0x1000, 4096, 0xfeed));
        let m = OutgoingAm::new(AmCategory::Long, true, 200, &[1, 2], b"abc").to_offset(16, 0x1010);
        assert_eq!(
            (m.dest_offset, m.dest_addr, m.payload),
            (16, 0x1010, &b"abc"[..])
        );
        let short = OutgoingAm::new(AmCategory::Short, false, 201, &[], &[]);
        assert_eq!((short.dest_offset, short.dest_addr), (0, 0));
        // Between primordial endpoints unless set; `between` keeps the rest.
        assert_eq!((short.src_ep, short.dest_ep), (0, 0));
        let m2 = m.between(3, 31);
        assert_eq!((m2.src_ep, m2.dest_ep, m2.dest_offset), (3, 31, 16));
        let args = [5];
        let inc = IncomingAm::new(2, AmCategory::Short, true, 202, &args, &[], 0);
        assert_eq!((inc.src_ep, inc.dest_ep), (0, 0));
        let inc = inc.between(7, 1);
        assert_eq!(
            (inc.src, inc.src_ep, inc.dest_ep, inc.args),
            (2, 7, 1, &args[..])
        );
        let l = AmLimits::new(1, 2, 3, 4).min(AmLimits::new(4, 3, 2, 1));
        assert_eq!(l, AmLimits::new(1, 2, 2, 1));
    }

    #[test]
    fn get_dest_writes_exactly_its_range() {
        let mut buf = [0u8; 8];
        // SAFETY: `buf` outlives `d`, and nothing else touches it meanwhile.
        let mut d = unsafe { GetDest::new(buf.as_mut_ptr().wrapping_add(2), 4, None) };
        assert_eq!(d.len(), 4);
        d.fill(&[1, 2, 3, 4]);
        drop(d);
        assert_eq!(buf, [0, 0, 1, 2, 3, 4, 0, 0]);
    }

    #[test]
    #[should_panic(expected = "wrong length")]
    fn get_dest_refuses_another_length() {
        let mut buf = [0u8; 4];
        // SAFETY: as above.
        let mut d = unsafe { GetDest::new(buf.as_mut_ptr(), 4, None) };
        d.fill(&[1, 2, 3]);
    }

    #[test]
    fn one_sided_preconditions_are_checked_in_order() {
        struct Rma;
        impl RmaCapability for Rma {
            fn reaches(&self, peer: Rank) -> bool {
                peer == 1
            }
            fn max_transfer(&self) -> usize {
                64
            }
            fn put(
                &self,
                _: Rank,
                _: EpIndex,
                _: usize,
                _: PutSource,
                _: std::sync::Arc<dyn OpCompletion>,
                _: bool,
                _: &dyn AmSink,
            ) -> Result<Injected> {
                unreachable!()
            }
            fn get(
                &self,
                _: Rank,
                _: EpIndex,
                _: usize,
                _: GetDest,
                _: std::sync::Arc<dyn OpCompletion>,
                _: bool,
                _: &dyn AmSink,
            ) -> Result<Injected> {
                unreachable!()
            }
        }
        let max_ep = gex_types::MAX_EPS as EpIndex;
        let check = |peer, ep, len| check_one_sided(&Rma, "x conduit", 0, peer, ep, len);
        assert!(check(1, 0, 64).is_ok());
        let msg = |r: Result<()>| r.unwrap_err().to_string();
        assert!(msg(check(2, max_ep, 65)).contains("x conduit: endpoint index"));
        assert!(msg(check(2, 0, 65)).contains("x conduit: rank 2 is not reached"));
        assert!(msg(check(1, 0, 65)).contains("65 bytes is over the 64-byte limit"));
    }
}
