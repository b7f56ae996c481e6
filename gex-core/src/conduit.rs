//! The conduit SPI: what a transport implements so the layers above can run
//! on it.
//!
//! A conduit moves Active Messages between ranks, polls for arriving ones,
//! creates and maps segments, and reports the job's neighbourhood layout.
//! The layers above never name a conduit: the program (or the `gex` facade)
//! hands a [`ConduitFactory`] to [`crate::Client::init_with`].
//!
//! Network operations go through `dyn Conduit`. The neighbourhood fast path
//! for RMA does not: a conduit that maps peers' segments reports the mapping
//! in [`SegmentDesc::local_base`], and the RMA layer copies directly.

use gex_types::{AmArg, AmCategory, AmIndex, Rank, Result};

use crate::bootstrap::Bootstrap;
use crate::stats::ConduitStats;

/// Payload limits between this rank and one peer (or the least over all).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmLimits {
    /// Largest Medium request payload.
    pub max_request_medium: usize,
    /// Largest Medium reply payload.
    pub max_reply_medium: usize,
    /// Largest Long request payload.
    pub max_request_long: usize,
    /// Largest Long reply payload.
    pub max_reply_long: usize,
}

impl AmLimits {
    /// The element-wise minimum of two limit sets.
    pub fn min(self, o: AmLimits) -> AmLimits {
        AmLimits {
            max_request_medium: self.max_request_medium.min(o.max_request_medium),
            max_reply_medium: self.max_reply_medium.min(o.max_reply_medium),
            max_request_long: self.max_request_long.min(o.max_request_long),
            max_reply_long: self.max_reply_long.min(o.max_reply_long),
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
}

/// An Active Message that arrived, as handed to the [`AmSink`].
#[derive(Clone, Copy, Debug)]
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

/// One rank's bound segment as seen from this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentDesc {
    /// Base address in the owner's address space.
    pub owner_base: usize,
    /// Base address of this process's mapping of it, if mapped.
    pub local_base: Option<usize>,
    /// Length in bytes (0: the rank has no bound segment).
    pub size: usize,
}

/// The job layout a conduit reports: which ranks share memory (nbrhd) and
/// which share a host.
#[derive(Clone, Debug, PartialEq, Eq)]
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

    /// The counters this conduit keeps (see [`crate::stats`]); none by
    /// default.
    fn stats(&self) -> ConduitStats {
        ConduitStats::new(self.name())
    }
}

/// Creates a conduit for a job: what a program chooses at start-up.
pub trait ConduitFactory {
    /// The conduit's short name.
    fn name(&self) -> &'static str;
    /// Creates the transport over a joined control plane.
    fn create(&self, boot: Bootstrap) -> Result<Box<dyn Conduit>>;
}
