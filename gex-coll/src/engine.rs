//! The engine under every AM-based collective: operations keyed by
//! (team id, per-team sequence number), one internal AM handler, early
//! messages kept until their operation starts, and sends that never block
//! a handler.
//!
//! # Messages
//!
//! Every message is a Medium request to handler [`H_COLL`] with eight
//! arguments: team id (two halves), sequence number, tag, signature,
//! offset, total length, and a reserved zero. A logical message of
//! `total` bytes travels as one or more chunks of at most the peer's
//! `MaxRequestMedium`, each saying where it goes (`offset`), so chunks may
//! arrive in any order and any size of data (any `GEX_DT_USER` element
//! size included) fits. The tag says what the message is within its
//! operation (a dissemination round, the sender's rank, ...); the
//! signature is a hash of the collective's kind and single-valued
//! arguments, so that members calling different collectives (or the same
//! one with different roots or sizes) at the same point end the job with a
//! message naming both instead of corrupting each other.
//!
//! # Progress
//!
//! Operations advance in the AM handlers: when a message makes the next
//! step possible (the next dissemination round, forwarding a broadcast
//! chunk, combining a child's partial result), the handler takes it at
//! once. Handlers may not block, so they inject through the conduit SPI
//! with `immediate` (the rule that client request handlers may only reply
//! exists so that handlers never wait for queue space or nest; these sends
//! do neither: the conduit takes its producer lock only to copy the
//! record, and polls nothing). A send refused for lack of queue space is
//! queued and retried, again with `immediate`, by the layer's progress
//! hook, which gex-core runs in every progress, poll, wait and test of
//! any thread, outside handler context ([`retry_deferred`]). The
//! operation's completion counts such sends, so an event completes only
//! once its rank's part of the data movement is done.
//!
//! Initiation runs in the client's thread and sends blocking. No lock is
//! held across any send (a blocking send polls, and the handlers it runs
//! take the same locks).
//!
//! Layer: base. Uses nothing of gex-coll.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use gex_conduit::{Injected, OutgoingAm};
use gex_core::{Completion, Runtime};
use gex_types::{AmArg, AmCategory, AmIndex, Rank};

/// The handler index of every collective message.
pub(crate) const H_COLL: AmIndex = 5;
/// Its argument count.
pub(crate) const NARGS: usize = 8;

/// (team id, sequence number).
pub(crate) type Key = (u64, u32);

/// Locks a mutex, ignoring poisoning (a panicking handler ends the job).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// `inner` with the sends `initial` made first, once the operation is
/// registered (as the flat collection's initial sends): the receiving
/// side of an exchange-like operation that also sends.
pub(crate) struct WithSends<L> {
    pub(crate) initial: Vec<Out>,
    pub(crate) inner: L,
}

impl<L: Logic> Logic for WithSends<L> {
    fn start(&mut self, cx: &mut Cx<'_>) {
        for o in self.initial.drain(..) {
            cx.send(o);
        }
        self.inner.start(cx);
    }

    fn chunk(
        &mut self,
        cx: &mut Cx<'_>,
        src: Rank,
        tag: u32,
        offset: usize,
        total: usize,
        data: &[u8],
    ) {
        self.inner.chunk(cx, src, tag, offset, total, data);
    }
}

/// What an operation does with its messages.
pub(crate) trait Logic: Send {
    /// Called once, before any message is delivered: the sends this member
    /// makes at initiation, and whether it is already done.
    fn start(&mut self, cx: &mut Cx<'_>);

    /// A chunk of message `tag` from jobrank `src`: `data` belongs at
    /// `offset` of a message of `total` bytes.
    fn chunk(
        &mut self,
        cx: &mut Cx<'_>,
        src: Rank,
        tag: u32,
        offset: usize,
        total: usize,
        data: &[u8],
    );
}

/// Where the bytes of an outgoing message come from.
pub(crate) enum OutData {
    /// The chunk being delivered (forwarded as it arrived).
    Input,
    /// A whole message owned by the operation (shared between sends).
    Owned(Arc<[u8]>),
}

/// One message to send.
pub(crate) struct Out {
    pub(crate) dest: Rank,
    pub(crate) tag: u32,
    /// For `Input`: where the chunk sits in its message; `Owned`: 0.
    pub(crate) offset: usize,
    /// Total length of the logical message.
    pub(crate) total: usize,
    pub(crate) data: OutData,
}

impl Out {
    /// A whole message of owned bytes.
    pub(crate) fn owned(dest: Rank, tag: u32, data: Arc<[u8]>) -> Out {
        Out {
            dest,
            tag,
            offset: 0,
            total: data.len(),
            data: OutData::Owned(data),
        }
    }

    /// The current input chunk, forwarded.
    pub(crate) fn forward(dest: Rank, tag: u32, offset: usize, total: usize) -> Out {
        Out {
            dest,
            tag,
            offset,
            total,
            data: OutData::Input,
        }
    }
}

/// Partially received messages of an operation, by tag.
#[derive(Default)]
pub(crate) struct Inbox {
    parts: HashMap<u32, (Vec<u8>, usize)>,
}

/// What a logic step produces, and its view of the operation's inbox.
pub(crate) struct Cx<'a> {
    pub(crate) outs: Vec<Out>,
    pub(crate) finished: bool,
    inbox: &'a mut Inbox,
}

impl<'a> Cx<'a> {
    /// A step over `inbox` (the engine builds these; so do the tests that
    /// run the state machines without communication).
    pub(crate) fn new(inbox: &'a mut Inbox) -> Self {
        Cx {
            outs: Vec::new(),
            finished: false,
            inbox,
        }
    }

    /// Adds a chunk to message `tag`; returns the whole message once every
    /// byte has arrived. A chunk outside the message is a broken protocol.
    pub(crate) fn assemble(
        &mut self,
        tag: u32,
        offset: usize,
        total: usize,
        data: &[u8],
    ) -> Option<Vec<u8>> {
        check_range(tag, offset, total, data.len());
        if offset == 0 && data.len() == total {
            return Some(data.to_vec());
        }
        let e = self
            .inbox
            .parts
            .entry(tag)
            .or_insert_with(|| (vec![0; total], 0));
        if e.0.len() != total {
            gex_core::fatal(&format!(
                "gex-coll: chunks of message {tag} disagree on its length ({} and {total})",
                e.0.len()
            ));
        }
        e.0[offset..offset + data.len()].copy_from_slice(data);
        e.1 += data.len();
        if e.1 == total {
            self.inbox.parts.remove(&tag).map(|(v, _)| v)
        } else {
            None
        }
    }

    pub(crate) fn send(&mut self, out: Out) {
        self.outs.push(out);
    }

    pub(crate) fn finish(&mut self) {
        self.finished = true;
    }
}

/// Fails loudly if a chunk does not fit its message.
pub(crate) fn check_range(tag: u32, offset: usize, total: usize, len: usize) {
    if !gex_conduit::fits(offset, len, total) {
        gex_core::fatal(&format!(
            "gex-coll: chunk [{offset}, +{len}) of message {tag} exceeds its length {total}"
        ));
    }
}

/// One collective operation on this rank.
pub(crate) struct Op {
    key: Key,
    sig: u32,
    what: &'static str,
    /// Complete when this rank's part is done (data in place, every send
    /// made).
    pub(crate) c: Arc<Completion>,
    st: Mutex<OpState>,
}

struct OpState {
    inbox: Inbox,
    logic: Box<dyn Logic>,
    finished: bool,
}

/// A chunk that arrived before its operation started.
struct Early {
    src: Rank,
    tag: u32,
    sig: u32,
    offset: usize,
    total: usize,
    data: Vec<u8>,
}

enum Slot {
    Early(Vec<Early>),
    Active(Arc<Op>),
}

/// A send a handler could not make at once (queued under its destination).
struct Deferred {
    args: [AmArg; NARGS],
    payload: Vec<u8>,
    c: Arc<Completion>,
}

struct Engine {
    ops: Mutex<HashMap<Key, Slot>>,
    /// Per destination, in the order the handlers made them.
    deferred: Mutex<HashMap<Rank, VecDeque<Deferred>>>,
}

/// Testing (`CollSettings::force_defer`, set at init): every send from a
/// handler is deferred to the progress hook.
static FORCE_DEFER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Applies `CollSettings::force_defer` (at client init).
pub(crate) fn set_force_defer(on: bool) {
    FORCE_DEFER.store(on, std::sync::atomic::Ordering::Relaxed);
}

static ENGINE: LazyLock<Engine> = LazyLock::new(|| Engine {
    ops: Mutex::new(HashMap::new()),
    deferred: Mutex::new(HashMap::new()),
});

/// How sends are made: blocking (client thread) or never blocking (handler).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Client,
    Handler,
}

fn rt() -> &'static Runtime {
    Runtime::get().expect("collectives run after client init")
}

/// Sends one logical message in chunks of at most the peer's Medium limit.
fn send_out(out: &Out, input: &[u8], key: Key, sig: u32, mode: Mode, c: Option<&Arc<Completion>>) {
    let rt = rt();
    let bytes: &[u8] = match &out.data {
        OutData::Input => input,
        OutData::Owned(a) => a,
    };
    let limit = rt.conduit().am_limits(out.dest).max_request_medium.max(1);
    let send_piece = |offset: usize, piece: &[u8]| {
        let args: [AmArg; NARGS] = [
            key.0 as u32 as AmArg,
            (key.0 >> 32) as u32 as AmArg,
            key.1 as AmArg,
            out.tag as AmArg,
            sig as AmArg,
            offset as u32 as AmArg,
            out.total as u32 as AmArg,
            0,
        ];
        send_raw(out.dest, args, piece, mode, c);
    };
    if bytes.is_empty() {
        send_piece(out.offset, &[]);
    } else {
        for (i, piece) in bytes.chunks(limit).enumerate() {
            send_piece(out.offset + i * limit, piece);
        }
    }
}

fn send_raw(
    dest: Rank,
    args: [AmArg; NARGS],
    payload: &[u8],
    mode: Mode,
    c: Option<&Arc<Completion>>,
) {
    let rt = rt();
    let msg = OutgoingAm::new(AmCategory::Medium, true, H_COLL, &args, payload);
    // Only handlers send with `immediate`, and they always pass the
    // completion that a deferred send must count against.
    let defer_to = match (mode, c) {
        (Mode::Handler, Some(c)) => Some(c),
        _ => None,
    };
    if let (Some(c), true) = (
        defer_to,
        FORCE_DEFER.load(std::sync::atomic::Ordering::Relaxed),
    ) {
        defer(dest, args, payload, c);
        return;
    }
    match rt
        .conduit()
        .am_send(dest, &msg, defer_to.is_some(), rt.sink())
    {
        Ok(Injected::Sent) => {}
        Ok(Injected::NoOp) => match defer_to {
            Some(c) => defer(dest, args, payload, c),
            None => unreachable!("a blocking send is never refused"),
        },
        Err(err) => gex_core::fatal(&format!("gex-coll: cannot send to rank {dest}: {err}")),
    }
}

fn defer(dest: Rank, args: [AmArg; NARGS], payload: &[u8], c: &Arc<Completion>) {
    let e = &*ENGINE;
    c.add(1);
    let mut q = lock(&e.deferred);
    q.entry(dest).or_default().push_back(Deferred {
        args,
        payload: payload.to_vec(),
        c: c.clone(),
    });
    DEFERRED_N.fetch_add(1, Ordering::Relaxed);
}

/// How many sends are deferred, read without the lock (changed under it).
static DEFERRED_N: AtomicUsize = AtomicUsize::new(0);

/// The progress hook's part: retries, with `immediate`, the sends handlers
/// could not make, outside handler context (the hook never runs there);
/// those refused again stay queued for the next round. Returns how many
/// were sent.
///
/// Sends wait in one queue per destination, and a round stops at the first
/// refusal of each: a round costs the destinations plus the sends made,
/// never the whole backlog. (With 2^16-1 barriers outstanding, one queue
/// walked in full on every poll kept a rank for seconds inside a blocking
/// send's polls while its socket overflowed.)
///
/// Whatever a rank waits for, it waits in a gex-core progress, poll, test
/// or wait, which runs this; and a refused send only waits for the peer
/// to drain its queue, which the peer does whenever it polls. So every
/// deferred send is eventually made.
pub(crate) fn retry_deferred() -> usize {
    if DEFERRED_N.load(Ordering::Relaxed) == 0 {
        return 0;
    }
    let e = &*ENGINE;
    // Taken out so that sends (which may poll) never run under the lock.
    let batch = std::mem::take(&mut *lock(&e.deferred));
    let rt = rt();
    let mut sent = 0;
    let mut left: Vec<(Rank, VecDeque<Deferred>)> = Vec::new();
    for (dest, mut q) in batch {
        while let Some(d) = q.front() {
            let msg = OutgoingAm::new(AmCategory::Medium, true, H_COLL, &d.args, &d.payload);
            match rt.conduit().am_send(dest, &msg, true, rt.sink()) {
                Ok(Injected::Sent) => {
                    if let Some(d) = q.pop_front() {
                        d.c.done();
                    }
                    sent += 1;
                }
                // That peer's queue is full: the rest waits for the next round.
                Ok(Injected::NoOp) => break,
                Err(err) => {
                    gex_core::fatal(&format!("gex-coll: cannot send to rank {dest}: {err}"))
                }
            }
        }
        if !q.is_empty() {
            left.push((dest, q));
        }
    }
    let mut q = lock(&e.deferred);
    DEFERRED_N.fetch_sub(sent, Ordering::Relaxed);
    for (dest, mut older) in left {
        // Sends deferred meanwhile go after the older ones.
        if let Some(mut newer) = q.remove(&dest) {
            older.append(&mut newer);
        }
        q.insert(dest, older);
    }
    sent
}

impl Op {
    /// Starts an operation: runs its initiation step, registers it (taking
    /// over the chunks that arrived early) unless it is done already, makes
    /// its initial sends and delivers the early chunks. Client thread only.
    pub(crate) fn start(key: Key, sig: u32, what: &'static str, logic: Box<dyn Logic>) -> Arc<Op> {
        let op = Arc::new(Op {
            key,
            sig,
            what,
            c: Completion::new(1, None),
            st: Mutex::new(OpState {
                inbox: Inbox::default(),
                logic,
                finished: false,
            }),
        });
        let (outs, finished) = {
            let mut st = lock(&op.st);
            let OpState { inbox, logic, .. } = &mut *st;
            let mut cx = Cx::new(inbox);
            logic.start(&mut cx);
            let Cx { outs, finished, .. } = cx;
            st.finished = finished;
            (outs, finished)
        };
        let early = if finished {
            Vec::new()
        } else {
            // The initial sends are a part of the operation (see `deliver`).
            op.c.add(1);
            let mut ops = lock(&ENGINE.ops);
            match ops.insert(key, Slot::Active(op.clone())) {
                Some(Slot::Early(v)) => v,
                Some(Slot::Active(_)) => gex_core::fatal(&format!(
                    "gex-coll: operation {key:?} started twice (team ids collide?)"
                )),
                None => Vec::new(),
            }
        };
        for out in &outs {
            send_out(out, &[], key, sig, Mode::Client, None);
        }
        op.c.done();
        for e in early {
            op.deliver(
                e.src,
                e.tag,
                e.sig,
                e.offset,
                e.total,
                &e.data,
                Mode::Client,
            );
        }
        op
    }

    #[allow(clippy::too_many_arguments)]
    fn deliver(
        &self,
        src: Rank,
        tag: u32,
        sig: u32,
        offset: usize,
        total: usize,
        data: &[u8],
        mode: Mode,
    ) {
        if sig != self.sig {
            gex_core::fatal(&format!(
                "gex-coll: collective mismatch on team {:#x} at call {}: this rank called {} \
                 (signature {:#010x}) but rank {src} sent a message of a different collective \
                 or with different single-valued arguments (signature {sig:#010x})",
                self.key.0, self.key.1, self.what, self.sig
            ));
        }
        let (outs, finished) = {
            let mut st = lock(&self.st);
            if st.finished {
                gex_core::fatal(&format!(
                    "gex-coll: {} on team {:#x} call {} got message {tag} from rank {src} after it finished",
                    self.what, self.key.0, self.key.1
                ));
            }
            let OpState { inbox, logic, .. } = &mut *st;
            let mut cx = Cx::new(inbox);
            logic.chunk(&mut cx, src, tag, offset, total, data);
            let Cx { outs, finished, .. } = cx;
            st.finished = finished;
            // Sends made outside the lock count as a part of the
            // operation, so that another thread finishing it meanwhile
            // cannot complete it before they are made.
            if !outs.is_empty() && !finished {
                self.c.add(1);
            }
            (outs, finished)
        };
        for out in &outs {
            send_out(out, data, self.key, self.sig, mode, Some(&self.c));
        }
        if finished {
            lock(&ENGINE.ops).remove(&self.key);
        }
        if finished || !outs.is_empty() {
            self.c.done();
        }
    }

    /// Whether this rank's part is done.
    pub(crate) fn is_complete(&self) -> bool {
        self.c.is_complete()
    }
}

/// Sends `bytes` as message `tag` of operation `key` to jobrank `dest`,
/// blocking: for initiators that send and expect nothing back.
pub(crate) fn send_now(key: Key, sig: u32, dest: Rank, tag: u32, bytes: &[u8]) {
    let out = Out::forward(dest, tag, 0, bytes.len());
    send_out(&out, bytes, key, sig, Mode::Client, None);
}

/// The handler of every collective message.
pub(crate) fn handle(src: Rank, args: &[AmArg], payload: &[u8]) {
    let key: Key = (
        u64::from(args[0] as u32) | (u64::from(args[1] as u32) << 32),
        args[2] as u32,
    );
    let tag = args[3] as u32;
    let sig = args[4] as u32;
    let offset = args[5] as u32 as usize;
    let total = args[6] as u32 as usize;
    let op = {
        let mut ops = lock(&ENGINE.ops);
        match ops.get_mut(&key) {
            Some(Slot::Active(op)) => op.clone(),
            Some(Slot::Early(v)) => {
                v.push(Early {
                    src,
                    tag,
                    sig,
                    offset,
                    total,
                    data: payload.to_vec(),
                });
                return;
            }
            None => {
                ops.insert(
                    key,
                    Slot::Early(vec![Early {
                        src,
                        tag,
                        sig,
                        offset,
                        total,
                        data: payload.to_vec(),
                    }]),
                );
                return;
            }
        }
    };
    op.deliver(src, tag, sig, offset, total, payload, Mode::Handler);
}

/// Waits (polling) until `op` completes; for blocking internal calls made
/// from the client's thread after its context was checked.
pub(crate) fn wait(op: &Op) {
    if !op.is_complete() {
        rt().spin_until(|| op.is_complete());
    }
}

thread_local! {
    /// A word every signature computed by this thread mixes in while set
    /// (see [`with_sig_extra`]); 0 when unset.
    static SIG_EXTRA: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Runs `f` (an initiation, on the client's thread) with `extra` mixed
/// into every signature it computes: the address lists of a SINGLE call,
/// which must agree on every member, reach the existing algorithms'
/// signatures this way without changing their arguments. Restored after.
pub(crate) fn with_sig_extra<R>(extra: u64, f: impl FnOnce() -> R) -> R {
    struct Restore(u64);
    impl Drop for Restore {
        fn drop(&mut self) {
            SIG_EXTRA.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(SIG_EXTRA.with(|c| c.replace(extra)));
    f()
}

/// The word [`with_sig_extra`] set on this thread (0 when none), for
/// signatures computed outside [`signature`].
pub(crate) fn sig_extra() -> u64 {
    SIG_EXTRA.with(|c| c.get())
}

/// A 32-bit signature of a collective's kind and single-valued arguments
/// (a word at a time: it is computed on every call, small collectives
/// included).
pub(crate) fn signature(kind: &str, words: &[u64]) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut mix = |w: u64| {
        h = (h ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 32;
    };
    for c in kind.as_bytes().chunks(8) {
        let mut b = [0u8; 8];
        b[..c.len()].copy_from_slice(c);
        mix(u64::from_le_bytes(b));
    }
    mix(kind.len() as u64);
    for &w in words {
        mix(w);
    }
    let extra = sig_extra();
    if extra != 0 {
        mix(extra);
    }
    (h ^ (h >> 29)) as u32
}

/// Mixes words into a 64-bit id (splitmix64 finaliser per word).
pub(crate) fn hash_id(words: &[u64]) -> u64 {
    let mut h: u64 = 0x9E37_79B9_7F4A_7C15;
    for &w in words {
        let mut z = h ^ w.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h = z ^ (z >> 31);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assembly_in_any_order() {
        let mut inbox = Inbox::default();
        let mut cx = Cx::new(&mut inbox);
        assert_eq!(cx.assemble(1, 0, 0, &[]), Some(vec![]));
        assert_eq!(cx.assemble(2, 0, 3, &[1, 2, 3]), Some(vec![1, 2, 3]));
        assert_eq!(cx.assemble(3, 4, 6, &[5, 6]), None);
        assert_eq!(cx.assemble(4, 0, 2, &[9]), None);
        assert_eq!(
            cx.assemble(3, 0, 6, &[1, 2, 3, 4]),
            Some(vec![1, 2, 3, 4, 5, 6])
        );
        assert_eq!(cx.assemble(4, 1, 2, &[8]), Some(vec![9, 8]));
        assert!(inbox.parts.is_empty());
    }

    #[test]
    fn signatures_and_ids_differ() {
        assert_ne!(signature("bcast", &[0, 8]), signature("bcast", &[1, 8]));
        assert_ne!(signature("bcast", &[0]), signature("barrier", &[0]));
        assert_ne!(hash_id(&[0, 1, 2]), hash_id(&[0, 2, 1]));
        assert_ne!(hash_id(&[0, 1, 2]), 0);
    }
}
