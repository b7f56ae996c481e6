//! The udp conduit's one-sided capability ([`gex_conduit::RmaCapability`]):
//! puts and gets to peers reached over UDP, answered by the target's
//! protocol shell with no AM handler.
//!
//! A put travels as one message (kind PUT, see [`crate::wire`]) whose
//! payload the receiving shell places into its segment as the datagrams
//! arrive, as it does for a Long AM; once the message is complete the
//! shell answers PUT_ACK on the reply lane. A get is a GET message naming
//! the range; the target's shell answers GET_DATA on the reply lane with
//! the bytes, which the initiator's shell writes into the destination.
//!
//! The initiator keeps every operation in flight in a table indexed by a
//! slot number with a generation ([`Ops`]); the answers name the
//! operation by both, and an answer naming an unknown or stale operation,
//! from the wrong rank, of the wrong kind or with the wrong length is a
//! fatal error with a message, never a memory access. The target checks
//! every range against its own segment before it touches it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use gex_conduit::{GetDest, OpCompletion};
use gex_types::Rank;

/// The longest transfer of one operation (longer ones are split by the
/// caller): a GET_DATA of this size is one protocol message, reassembled
/// in the inbox, which holds at most 64 MiB.
pub const MAX_TRANSFER: usize = 1 << 20;

/// Marks a placing token as a get's operation id (ids stay below 2^63);
/// without it the token is a segment address (see the shell's placer).
pub const GET_TOKEN: u64 = 1 << 63;

/// What an operation in flight waits for.
enum Pending {
    /// A put: its PUT_ACK.
    Put {
        peer: Rank,
        done: Arc<dyn OpCompletion>,
    },
    /// A get: its GET_DATA, written into `dst`, by the receiving shell as
    /// the datagrams arrive once `placing` (see [`Ops::begin_placing`]),
    /// else from the whole message.
    Get {
        peer: Rank,
        dst: GetDest,
        done: Arc<dyn OpCompletion>,
        placing: bool,
    },
    /// A remote atomic: its ATOMIC_RESULT, which carries `len` bytes of
    /// value (the type's size for a fetching operation, else 0), the
    /// bytes for `dst`.
    Atomic {
        peer: Rank,
        len: usize,
        dst: Option<GetDest>,
        done: Arc<dyn OpCompletion>,
    },
}

/// One slot of the table.
struct Slot {
    generation: u32,
    op: Option<Pending>,
}

/// The operations this rank started and not yet saw answered.
#[derive(Default)]
pub struct Ops {
    inner: Mutex<Table>,
    /// Puts and gets started here, and PUTs and GETs served for peers.
    puts: AtomicU64,
    gets: AtomicU64,
    served: AtomicU64,
    /// Atomics started here, and ATOMICs served for peers.
    atomics: AtomicU64,
    atomics_served: AtomicU64,
}

#[derive(Default)]
struct Table {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

/// The operation an answer named, taken out of the table.
pub enum Answered {
    /// A put's completion.
    Put(Arc<dyn OpCompletion>),
    /// A get's destination and completion.
    Get(GetDest, Arc<dyn OpCompletion>),
}

impl Ops {
    fn insert(&self, op: Pending) -> u64 {
        let mut t = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let slot = match t.free.pop() {
            Some(s) => s,
            None => {
                t.slots.push(Slot {
                    generation: 0,
                    op: None,
                });
                (t.slots.len() - 1) as u32
            }
        };
        let s = &mut t.slots[slot as usize];
        // 31 bits of generation: ids stay below 2^63 (see [`GET_TOKEN`]).
        s.generation = s.generation.wrapping_add(1) & 0x7fff_ffff;
        s.op = Some(op);
        (u64::from(s.generation) << 32) | u64::from(slot)
    }

    /// Starts tracking a put to `peer`; its id.
    pub fn insert_put(&self, peer: Rank, done: Arc<dyn OpCompletion>) -> u64 {
        self.puts.fetch_add(1, Ordering::Relaxed);
        self.insert(Pending::Put { peer, done })
    }

    /// Starts tracking a get from `peer` into `dst`; its id.
    pub fn insert_get(&self, peer: Rank, dst: GetDest, done: Arc<dyn OpCompletion>) -> u64 {
        self.gets.fetch_add(1, Ordering::Relaxed);
        self.insert(Pending::Get {
            peer,
            dst,
            done,
            placing: false,
        })
    }

    /// Starts tracking an atomic at `peer` whose answer carries `len`
    /// bytes of value (0 for an operation that does not fetch), for
    /// `dst`; its id (see [`crate::wire::compact_id`] for the one it
    /// travels under).
    pub fn insert_atomic(
        &self,
        peer: Rank,
        len: usize,
        dst: Option<GetDest>,
        done: Arc<dyn OpCompletion>,
    ) -> u64 {
        self.atomics.fetch_add(1, Ordering::Relaxed);
        self.insert(Pending::Atomic {
            peer,
            len,
            dst,
            done,
        })
    }

    /// Counts an ATOMIC served for a peer.
    pub fn count_atomic_served(&self) {
        self.atomics_served.fetch_add(1, Ordering::Relaxed);
    }

    /// (atomics started, ATOMICs served).
    pub fn atomic_counts(&self) -> (u64, u64) {
        (
            self.atomics.load(Ordering::Relaxed),
            self.atomics_served.load(Ordering::Relaxed),
        )
    }

    /// Counts a PUT or GET served for a peer.
    pub fn count_served(&self) {
        self.served.fetch_add(1, Ordering::Relaxed);
    }

    /// (puts started, gets started, PUTs and GETs served), cancelled
    /// starts included.
    pub fn counts(&self) -> (u64, u64, u64) {
        (
            self.puts.load(Ordering::Relaxed),
            self.gets.load(Ordering::Relaxed),
            self.served.load(Ordering::Relaxed),
        )
    }

    /// The get `id` in flight from `from` for `len` bytes, if there is one
    /// not being placed already: from now on the shell writes its GET_DATA
    /// payload into the destination as it arrives ([`Ops::place`]).
    pub fn begin_placing(&self, id: u64, from: Rank, len: usize) -> bool {
        let mut t = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        match Self::slot_of(&mut t, id) {
            Some(Pending::Get {
                peer, dst, placing, ..
            }) if *peer == from && dst.len() == len && !*placing => {
                *placing = true;
                true
            }
            _ => false,
        }
    }

    /// Writes `bytes` at `at` into the destination of the get `id` being
    /// placed; false (nothing written) if it is no longer in flight or
    /// the range is outside it.
    pub fn place(&self, id: u64, at: usize, bytes: &[u8]) -> bool {
        let mut t = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        match Self::slot_of(&mut t, id) {
            Some(Pending::Get {
                dst, placing: true, ..
            }) if gex_conduit::fits(at, bytes.len(), dst.len()) => {
                dst.fill_at(at, bytes);
                true
            }
            _ => false,
        }
    }

    fn slot_of(t: &mut Table, id: u64) -> Option<&mut Pending> {
        let s = t.slots.get_mut(id as u32 as usize)?;
        if s.generation != (id >> 32) as u32 {
            return None;
        }
        s.op.as_mut()
    }

    /// Forgets an operation that was not started after all (an
    /// `IMMEDIATE` start that found no room).
    pub fn cancel(&self, id: u64) {
        let mut t = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let slot = id as u32;
        if let Some(s) = t.slots.get_mut(slot as usize) {
            if s.generation == (id >> 32) as u32 && s.op.take().is_some() {
                t.free.push(slot);
            }
        }
    }

    /// Takes the operation `id` that `from` answered with a message of
    /// `kind` ([`crate::wire::RMA_PUT_ACK`] or [`crate::wire::RMA_GET_DATA`])
    /// carrying `len` bytes; a description
    /// of what is wrong if the answer does not match an operation in
    /// flight (unknown or stale id, another peer, another kind, another
    /// length, or a GET_DATA `placed` in the destination for a get that
    /// was not being placed, or the reverse).
    pub fn take(
        &self,
        id: u64,
        from: Rank,
        kind: u8,
        len: usize,
        placed: bool,
    ) -> Result<Answered, String> {
        let mut t = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let slot = id as u32;
        let generation = (id >> 32) as u32;
        let Some(s) = t.slots.get_mut(slot as usize) else {
            return Err(format!("names operation slot {slot}, which never existed"));
        };
        let matches = match &s.op {
            _ if s.generation != generation => {
                return Err(format!(
                    "names operation {slot}/{generation}, which is stale (now {})",
                    s.generation
                ))
            }
            None => {
                return Err(format!(
                    "names operation {slot}/{generation}, which is not in flight"
                ))
            }
            Some(Pending::Put { peer, .. }) => {
                *peer == from && kind == crate::wire::RMA_PUT_ACK && len == 0 && !placed
            }
            Some(Pending::Get {
                peer, dst, placing, ..
            }) => {
                *peer == from
                    && kind == crate::wire::RMA_GET_DATA
                    && len == dst.len()
                    && *placing == placed
            }
            Some(Pending::Atomic { .. }) => false,
        };
        if !matches {
            return Err(format!(
                "does not match operation {slot}/{generation} (another rank, kind or length)"
            ));
        }
        let op = s.op.take().expect("checked above");
        t.free.push(slot);
        Ok(match op {
            Pending::Put { done, .. } => Answered::Put(done),
            Pending::Get { dst, done, .. } => Answered::Get(dst, done),
            Pending::Atomic { .. } => unreachable!("refused above"),
        })
    }

    /// Takes the atomic whose compact id ([`crate::wire::compact_id`]) is
    /// `id`, which `from` answered with `len` bytes of value: its
    /// destination and completion, or a description of what is wrong
    /// (unknown slot, a generation whose low byte differs, not an atomic,
    /// another peer or another length).
    pub fn take_atomic(
        &self,
        id: u32,
        from: Rank,
        len: usize,
    ) -> Result<(Option<GetDest>, Arc<dyn OpCompletion>), String> {
        let mut t = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let slot = id & 0x00ff_ffff;
        let generation = id >> 24;
        let Some(s) = t.slots.get_mut(slot as usize) else {
            return Err(format!("names operation slot {slot}, which never existed"));
        };
        let ok = s.generation & 0xff == generation
            && matches!(&s.op, Some(Pending::Atomic { peer, len: l, .. }) if *peer == from && *l == len);
        if !ok {
            return Err(format!(
                "does not match an atomic in flight in slot {slot} (stale, not an atomic, another rank or another length)"
            ));
        }
        let Some(Pending::Atomic { dst, done, .. }) = s.op.take() else {
            unreachable!("checked above")
        };
        t.free.push(slot);
        Ok((dst, done))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{compact_id, RMA_GET_DATA, RMA_PUT_ACK};
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Count(AtomicUsize);
    impl OpCompletion for Count {
        fn complete(&self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn answers_must_match_an_operation_in_flight() {
        let ops = Ops::default();
        let done = Arc::new(Count(AtomicUsize::new(0)));
        let put = ops.insert_put(2, done.clone());
        let mut buf = [0u8; 4];
        // SAFETY: `buf` outlives the table's use of it in this test.
        let dst = unsafe { GetDest::new(buf.as_mut_ptr(), 4, None) };
        let get = ops.insert_get(3, dst, done.clone());
        // Wrong peer, kind, length; unknown slot; then the right answers.
        assert!(ops.take(put, 3, RMA_PUT_ACK, 0, false).is_err());
        assert!(ops.take(put, 2, RMA_GET_DATA, 0, false).is_err());
        assert!(ops.take(get, 3, RMA_GET_DATA, 5, false).is_err());
        assert!(ops.take(99, 2, RMA_PUT_ACK, 0, false).is_err());
        assert!(matches!(
            ops.take(put, 2, RMA_PUT_ACK, 0, false),
            Ok(Answered::Put(_))
        ));
        // Replayed: the slot is free now.
        assert!(ops.take(put, 2, RMA_PUT_ACK, 0, false).is_err());
        let Ok(Answered::Get(mut d, _)) = ops.take(get, 3, RMA_GET_DATA, 4, false) else {
            panic!("the get's answer must match");
        };
        d.fill(&[1, 2, 3, 4]);
        assert_eq!(buf, [1, 2, 3, 4]);
        // A reused slot has a new generation: the old id is stale.
        let again = ops.insert_put(3, done.clone());
        assert_eq!(again as u32, get as u32);
        assert_ne!(again, get);
        assert!(ops.take(get, 3, RMA_GET_DATA, 4, false).is_err());
        ops.cancel(again);
        assert!(ops.take(again, 3, RMA_PUT_ACK, 0, false).is_err());
        // An atomic's answer: only its own value's length, from its peer,
        // under its compact id, and never a put's or get's answer.
        let at = ops.insert_atomic(1, 4, None, done.clone());
        let id = compact_id(at).unwrap();
        assert!(ops.take(at, 1, RMA_GET_DATA, 4, false).is_err());
        assert!(ops.take_atomic(id, 2, 4).is_err());
        assert!(ops.take_atomic(id, 1, 8).is_err());
        assert!(
            ops.take_atomic(id ^ (1 << 24), 1, 4).is_err(),
            "another generation"
        );
        assert!(
            ops.take_atomic(id ^ (1 << 20), 1, 4).is_err(),
            "no such slot"
        );
        assert!(ops.take_atomic(id, 1, 4).is_ok());
        assert!(ops.take_atomic(id, 1, 4).is_err(), "replayed");
        let put = ops.insert_put(1, done);
        assert!(
            ops.take_atomic(compact_id(put).unwrap(), 1, 0).is_err(),
            "a put"
        );
        assert_eq!(ops.atomic_counts(), (1, 0));
    }
}
