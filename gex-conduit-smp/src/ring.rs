//! A single-producer single-consumer ring of variable-length records in
//! shared memory: the smp conduit's AM queue between one sender process and
//! one receiver process.
//!
//! Layout (offsets from the ring base, which is 64-byte aligned):
//!
//! | offset | what |
//! | --- | --- |
//! | 0 | `head: u64`, bytes ever consumed (consumer writes, in batches) |
//! | 128 | `capacity` bytes of records |
//!
//! A record starts with an 8-byte header word `len: u32 | seq: u32` and is a
//! multiple of [`ALIGN`] bytes. `seq` is the low 32 bits of the record's
//! position (bytes ever written before it), so the consumer knows a record
//! is ready by reading its header alone: there is no shared tail counter,
//! and a message costs the cache lines of the record and nothing else. The
//! producer writes the body, zeroes the header word that follows the record
//! (so the consumer never mistakes older bytes there for a header), then
//! publishes the header with one release store. A record never wraps: when
//! the space to the end of the buffer is too short the producer writes a
//! wrap record (`len` with [`WRAP`] set) covering it and starts again at 0.
//!
//! The consumer hands space back by storing `head` at most once per drain
//! (or every quarter ring), since each store moves that line to the
//! producer's core.

use std::sync::atomic::{AtomicU64, Ordering};

/// Record alignment and size granule.
pub const ALIGN: usize = 16;
/// Bytes of record header before the body.
pub const REC_HEADER: usize = 8;
/// Set in `len` for a padding record that skips to the start of the buffer.
const WRAP: u32 = 1 << 31;
const CTRL_BYTES: usize = 128;

/// Bytes of shared memory a ring of `capacity` record bytes occupies.
pub const fn ring_bytes(capacity: usize) -> usize {
    CTRL_BYTES + capacity
}

/// Rounds `n` up to the record granule.
#[inline]
pub const fn align_up(n: usize) -> usize {
    (n + ALIGN - 1) & !(ALIGN - 1)
}

#[inline]
fn header(len: u32, pos: u64) -> u64 {
    u64::from(len) | (u64::from(pos as u32) << 32)
}

/// Where a ring lives.
#[derive(Clone, Copy, Debug)]
struct RingPtr {
    base: *mut u8,
    capacity: usize,
}

// SAFETY: RingPtr is an address in a shared mapping that outlives every
// Producer/Consumer built on it (the conduit keeps the mapping alive for the
// whole process); every access follows the SPSC protocol in the module docs.
unsafe impl Send for RingPtr {}

impl RingPtr {
    #[inline]
    fn head(&self) -> &AtomicU64 {
        // SAFETY: offset 0 is 8-byte aligned, inside the control block, and
        // only ever accessed atomically.
        unsafe { &*(self.base as *const AtomicU64) }
    }

    /// The header word of the record at buffer index `index`.
    #[inline]
    fn header_at(&self, index: usize) -> &AtomicU64 {
        debug_assert!(index < self.capacity && index.is_multiple_of(ALIGN));
        // SAFETY: index < capacity and 16-aligned, so the word is inside the
        // mapping and 8-byte aligned; header words are only accessed
        // atomically by both sides.
        unsafe { &*(self.base.add(CTRL_BYTES + index) as *const AtomicU64) }
    }

    #[inline]
    fn data(&self, index: usize) -> *mut u8 {
        debug_assert!(index < self.capacity);
        // SAFETY: index < capacity, so the pointer stays in the mapping.
        unsafe { self.base.add(CTRL_BYTES + index) }
    }

    #[inline]
    fn index(&self, pos: u64) -> usize {
        (pos % self.capacity as u64) as usize
    }
}

/// The sending side of a ring.
#[derive(Debug)]
pub struct Producer {
    ring: RingPtr,
    tail: u64,
    cached_head: u64,
    /// (position, length) of the record reserved last, not yet published.
    pending: Option<(u64, u32)>,
}

/// The receiving side of a ring.
#[derive(Debug)]
pub struct Consumer {
    ring: RingPtr,
    head: u64,
    /// The head value last stored for the producer to see.
    shared_head: u64,
}

fn ring_at(base: *mut u8, capacity: usize) -> RingPtr {
    assert!(capacity.is_power_of_two() && capacity >= 8 * ALIGN);
    assert_eq!(base as usize % 64, 0, "ring base must be 64-byte aligned");
    RingPtr { base, capacity }
}

impl Producer {
    /// The producer of the ring at `base`.
    ///
    /// # Safety
    /// `base` must point to [`ring_bytes`]`(capacity)` bytes of memory,
    /// zero-initialised before first use, that stay mapped while the
    /// producer lives, and at most one `Producer` may exist for the ring at
    /// any time (across all processes).
    pub unsafe fn new(base: *mut u8, capacity: usize) -> Producer {
        let ring = ring_at(base, capacity);
        let head = ring.head().load(Ordering::Acquire);
        Producer {
            ring,
            tail: head,
            cached_head: head,
            pending: None,
        }
    }

    /// The largest body a record may carry.
    pub fn max_body(&self) -> usize {
        self.ring.capacity / 2 - REC_HEADER
    }

    /// Reserves a record with a `body_len`-byte body and returns a pointer
    /// to the body (8 bytes past a 16-byte aligned record start). `None` if
    /// the ring has no room now. Nothing is visible before
    /// [`Producer::publish`].
    #[inline]
    pub fn reserve(&mut self, body_len: usize) -> Option<*mut u8> {
        debug_assert!(self.pending.is_none(), "reserve twice without publish");
        let rec = align_up(REC_HEADER + body_len);
        assert!(
            rec <= self.ring.capacity / 2,
            "record of {rec} bytes too large for ring"
        );
        let cap = self.ring.capacity as u64;
        let idx = self.ring.index(self.tail);
        let to_end = self.ring.capacity - idx;
        // Room for the record (after a wrap record if it does not fit before
        // the end) and for the zeroed header word that follows it.
        let need = (if rec > to_end { to_end + rec } else { rec } + ALIGN) as u64;
        if cap - (self.tail - self.cached_head) < need {
            self.cached_head = self.ring.head().load(Ordering::Acquire);
            if cap - (self.tail - self.cached_head) < need {
                return None;
            }
        }
        if rec > to_end {
            // The record goes at 0: clear its header first, then publish the
            // wrap record that leads the consumer there.
            self.ring.header_at(0).store(0, Ordering::Relaxed);
            self.ring
                .header_at(idx)
                .store(header(to_end as u32 | WRAP, self.tail), Ordering::Release);
            self.tail += to_end as u64;
        }
        let at = self.ring.index(self.tail);
        self.pending = Some((self.tail, rec as u32));
        // SAFETY: the body starts inside the reserved, free record.
        Some(unsafe { self.ring.data(at).add(REC_HEADER) })
    }

    /// Whether [`Producer::reserve`] of a `body_len`-byte body would succeed
    /// now (nothing is reserved).
    pub fn has_room(&mut self, body_len: usize) -> bool {
        let rec = align_up(REC_HEADER + body_len);
        if rec > self.ring.capacity / 2 {
            return false;
        }
        let cap = self.ring.capacity as u64;
        let to_end = self.ring.capacity - self.ring.index(self.tail);
        let need = (if rec > to_end { to_end + rec } else { rec } + ALIGN) as u64;
        if cap - (self.tail - self.cached_head) < need {
            self.cached_head = self.ring.head().load(Ordering::Acquire);
        }
        cap - (self.tail - self.cached_head) >= need
    }

    /// Publishes the record reserved last (release: its bytes, and any other
    /// writes made before, such as a Long payload, are visible to the
    /// consumer that sees it).
    #[inline]
    pub fn publish(&mut self) {
        let (pos, len) = self.pending.take().expect("publish without reserve");
        let next = pos + u64::from(len);
        // The word after the record may hold bytes of an older record; zero
        // it so that the consumer waits there until the next publish. It is
        // free space: reserve kept ALIGN bytes of slack.
        self.ring
            .header_at(self.ring.index(next))
            .store(0, Ordering::Relaxed);
        self.ring
            .header_at(self.ring.index(pos))
            .store(header(len, pos), Ordering::Release);
        self.tail = next;
    }

    /// Abandons the reserved record (nothing becomes visible).
    pub fn cancel(&mut self) {
        self.pending = None;
    }
}

/// A record seen by the consumer.
#[derive(Clone, Copy, Debug)]
pub struct Record {
    /// Start of the body.
    pub body: *const u8,
    /// Bytes from the body start to the record end (body plus padding).
    pub body_room: usize,
    len: u64,
}

impl Consumer {
    /// The consumer of the ring at `base`.
    ///
    /// # Safety
    /// As for [`Producer::new`], with at most one `Consumer` per ring.
    pub unsafe fn new(base: *mut u8, capacity: usize) -> Consumer {
        let ring = ring_at(base, capacity);
        let head = ring.head().load(Ordering::Relaxed);
        Consumer {
            ring,
            head,
            shared_head: head,
        }
    }

    /// Bytes consumed so far (the private head).
    #[inline]
    pub fn head(&self) -> u64 {
        self.head
    }

    /// The oldest unconsumed record, if any. Its bytes stay valid and
    /// unchanged until [`Consumer::release`].
    #[inline]
    pub fn peek(&mut self) -> Option<Record> {
        loop {
            let idx = self.ring.index(self.head);
            let h = self.ring.header_at(idx).load(Ordering::Acquire);
            let (len, seq) = (h as u32, (h >> 32) as u32);
            if len == 0 || seq != self.head as u32 {
                return None;
            }
            if len & WRAP != 0 {
                self.head += u64::from(len & !WRAP);
                continue;
            }
            assert!(
                len as usize >= REC_HEADER && len as usize <= self.ring.capacity - idx,
                "corrupt AM ring record (len {len} at {idx})"
            );
            return Some(Record {
                // SAFETY: inside the record.
                body: unsafe { self.ring.data(idx).add(REC_HEADER) },
                body_room: len as usize - REC_HEADER,
                len: u64::from(len),
            });
        }
    }

    /// Consumes `rec` (the record returned by the last `peek`). Its space
    /// goes back to the producer at the next [`Consumer::sync`], or at once
    /// when a quarter of the ring is waiting to be handed back.
    #[inline]
    pub fn release(&mut self, rec: Record) {
        self.head += rec.len;
        if self.head - self.shared_head >= (self.ring.capacity / 4) as u64 {
            self.sync();
        }
    }

    /// Hands every released record's space back to the producer (release:
    /// the consumer's reads of those records happen before the producer
    /// reuses the space).
    #[inline]
    pub fn sync(&mut self) {
        if self.shared_head != self.head {
            self.shared_head = self.head;
            self.ring.head().store(self.head, Ordering::Release);
        }
    }
}

/// Whether the ring at `base` has a record ready at position `head` (one
/// acquire load of that record's header line).
///
/// # Safety
/// `base` must be a live ring of `capacity` record bytes.
#[inline]
pub unsafe fn ready_at(base: *mut u8, capacity: usize, head: u64) -> bool {
    let ring = RingPtr { base, capacity };
    let h = ring.header_at(ring.index(head)).load(Ordering::Relaxed);
    h as u32 != 0 && (h >> 32) as u32 == head as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C, align(64))]
    struct Block([u8; 64]);

    fn alloc(bytes: usize) -> Vec<Block> {
        (0..bytes.div_ceil(64)).map(|_| Block([0; 64])).collect()
    }

    fn body(rec: &Record, n: usize) -> Vec<u8> {
        // SAFETY: test records hold n body bytes.
        unsafe { std::slice::from_raw_parts(rec.body, n).to_vec() }
    }

    #[test]
    fn records_round_trip_and_wrap() {
        let cap = 1024;
        let mut mem = alloc(ring_bytes(cap));
        let base = mem.as_mut_ptr() as *mut u8;
        // SAFETY: mem outlives p and c, zeroed, one producer and consumer.
        let (mut p, mut c) = unsafe { (Producer::new(base, cap), Consumer::new(base, cap)) };
        for round in 0..400u32 {
            let n = (round as usize * 37) % 300;
            let b = p.reserve(n + 4).expect("room");
            // SAFETY: reserved n + 4 bytes at b.
            unsafe {
                (b as *mut u32).write_unaligned(round);
                for i in 0..n {
                    b.add(4 + i).write((round as usize + i) as u8);
                }
            }
            assert!(c.peek().is_none(), "nothing visible before publish");
            p.publish();
            // SAFETY: mem is the live ring.
            assert!(unsafe { ready_at(base, cap, c.head()) });
            let r = c.peek().expect("record");
            let got = body(&r, n + 4);
            assert_eq!(u32::from_ne_bytes(got[..4].try_into().unwrap()), round);
            for i in 0..n {
                assert_eq!(got[4 + i], (round as usize + i) as u8);
            }
            c.release(r);
            c.sync();
            assert!(c.peek().is_none());
        }
    }

    #[test]
    fn payload_bytes_never_look_like_headers() {
        // Fill records with bytes that would be valid headers for the
        // positions the consumer will look at next.
        let cap = 512;
        let mut mem = alloc(ring_bytes(cap));
        let base = mem.as_mut_ptr() as *mut u8;
        // SAFETY: as above.
        let (mut p, mut c) = unsafe { (Producer::new(base, cap), Consumer::new(base, cap)) };
        for round in 0..200u64 {
            let len = 8 + (round as usize % 5) * 16;
            let b = p.reserve(len).unwrap();
            for k in 0..len / 8 {
                let fake = header(16, c.head() + 16 * (k as u64 + 1));
                // SAFETY: within the reserved body.
                unsafe { (b.add(8 * k) as *mut u64).write_unaligned(fake) };
            }
            p.publish();
            let r = c.peek().unwrap();
            c.release(r);
            assert!(c.peek().is_none(), "stale payload read as a header");
            c.sync();
        }
    }

    #[test]
    fn full_ring_refuses_until_consumed() {
        let cap = 256;
        let mut mem = alloc(ring_bytes(cap));
        let base = mem.as_mut_ptr() as *mut u8;
        // SAFETY: as above.
        let (mut p, mut c) = unsafe { (Producer::new(base, cap), Consumer::new(base, cap)) };
        let mut n = 0;
        while p.reserve(24).is_some() {
            p.publish();
            n += 1;
        }
        assert_eq!(n, cap / 32 - 1, "one granule of slack");
        assert!(!p.has_room(24), "has_room agrees with reserve");
        let r = c.peek().unwrap();
        c.release(r);
        assert!(p.reserve(24).is_none(), "not handed back before sync");
        assert!(!p.has_room(24));
        c.sync();
        assert!(p.has_room(24), "has_room sees the consumer's progress");
        assert!(!p.has_room(cap), "larger than a record may be");
        assert!(p.reserve(24).is_some());
        p.cancel();
    }

    #[test]
    fn two_threads_stream_in_order() {
        let cap = 4096;
        let mut mem = alloc(ring_bytes(cap));
        let base = mem.as_mut_ptr() as usize;
        const N: u64 = 200_000;
        let prod = std::thread::spawn(move || {
            // SAFETY: mem outlives both threads (joined below).
            let mut p = unsafe { Producer::new(base as *mut u8, cap) };
            for i in 0..N {
                let len = 8 + (i % 97) as usize;
                let b = loop {
                    if let Some(b) = p.reserve(len) {
                        break b;
                    }
                    std::hint::spin_loop();
                };
                // SAFETY: len >= 8 bytes reserved.
                unsafe {
                    (b as *mut u64).write_unaligned(i);
                    std::ptr::write_bytes(b.add(8), (i % 251) as u8, len - 8);
                }
                p.publish();
            }
        });
        // SAFETY: as above.
        let mut c = unsafe { Consumer::new(base as *mut u8, cap) };
        let mut next = 0u64;
        while next < N {
            if let Some(r) = c.peek() {
                let len = 8 + (next % 97) as usize;
                let got = body(&r, len);
                assert_eq!(u64::from_ne_bytes(got[..8].try_into().unwrap()), next);
                assert!(got[8..].iter().all(|&x| x == (next % 251) as u8));
                c.release(r);
                next += 1;
            } else {
                c.sync();
                std::hint::spin_loop();
            }
        }
        prod.join().unwrap();
        drop(mem);
    }
}
