//! A single-producer single-consumer ring of variable-length records in
//! shared memory: the smp conduit's AM queue between one sender process and
//! one receiver process.
//!
//! Layout (all offsets from the ring base, which is 64-byte aligned):
//!
//! | offset | what |
//! | --- | --- |
//! | 0 | `tail: u64`, bytes ever published (producer writes) |
//! | 128 | `head: u64`, bytes ever consumed (consumer writes) |
//! | 256 | `capacity` bytes of records |
//!
//! The counters are 128 bytes apart, not 64: x86 prefetches cache lines in
//! aligned pairs, so counters on adjacent lines would still bounce together.
//!
//! A record is `len: u32` (whole record, a multiple of [`ALIGN`]) and
//! `tag: u32`, then the body. A record never wraps: when the space up to
//! the end of the buffer is too short, the producer writes a [`TAG_WRAP`]
//! record covering it and starts again at offset 0. Positions only grow;
//! the buffer index is `pos % capacity` (capacity is a power of two).
//!
//! Each side caches the other's counter and re-reads it only when the ring
//! looks full (producer) or empty (consumer), so a busy ring costs one
//! shared cache line transfer per batch, not per record.

use std::sync::atomic::{AtomicU64, Ordering};

/// Record alignment and size granule.
pub const ALIGN: usize = 16;
/// Bytes of record header (`len`, `tag`) before the body.
pub const REC_HEADER: usize = 8;
/// Tag of a padding record that skips to the start of the buffer.
pub const TAG_WRAP: u32 = 0x5752_4150;
const CTRL_BYTES: usize = 256;

/// Bytes of shared memory a ring of `capacity` record bytes occupies.
pub const fn ring_bytes(capacity: usize) -> usize {
    CTRL_BYTES + capacity
}

/// Rounds `n` up to the record granule.
#[inline]
pub const fn align_up(n: usize) -> usize {
    (n + ALIGN - 1) & !(ALIGN - 1)
}

/// Where a ring lives.
#[derive(Clone, Copy, Debug)]
struct RingPtr {
    base: *mut u8,
    capacity: usize,
}

// SAFETY: RingPtr is an address in a shared mapping that outlives every
// Producer/Consumer built on it (the conduit keeps the mapping alive for the
// whole process); all access to the counters is atomic and all access to the
// record bytes follows the SPSC protocol described in the module docs.
unsafe impl Send for RingPtr {}

impl RingPtr {
    #[inline]
    fn tail(&self) -> &AtomicU64 {
        // SAFETY: offset 0 is 8-byte aligned inside the ring's control block,
        // and is only ever accessed atomically.
        unsafe { &*(self.base as *const AtomicU64) }
    }

    #[inline]
    fn head(&self) -> &AtomicU64 {
        // SAFETY: as for `tail`, at offset 128.
        unsafe { &*(self.base.add(128) as *const AtomicU64) }
    }

    #[inline]
    fn data(&self, index: usize) -> *mut u8 {
        debug_assert!(index < self.capacity);
        // SAFETY: index < capacity, so the pointer stays in the mapping.
        unsafe { self.base.add(CTRL_BYTES + index) }
    }
}

/// The sending side of a ring.
#[derive(Debug)]
pub struct Producer {
    ring: RingPtr,
    tail: u64,
    cached_head: u64,
    /// Record reserved by the last successful `reserve`, not yet published.
    pending: u64,
}

/// The receiving side of a ring.
#[derive(Debug)]
pub struct Consumer {
    ring: RingPtr,
    head: u64,
    /// The head value last stored for the producer to see.
    shared_head: u64,
    cached_tail: u64,
}

/// Validates and returns the ring at `base`.
fn ring_at(base: *mut u8, capacity: usize) -> RingPtr {
    assert!(capacity.is_power_of_two() && capacity >= 4 * ALIGN);
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
        let tail = ring.tail().load(Ordering::Relaxed);
        let cached_head = ring.head().load(Ordering::Acquire);
        Producer {
            ring,
            tail,
            cached_head,
            pending: 0,
        }
    }

    /// The largest body a record may carry.
    pub fn max_body(&self) -> usize {
        self.ring.capacity / 2 - REC_HEADER
    }

    /// Reserves a record with a `body_len`-byte body and returns a pointer
    /// to the body (16-byte aligned, minus the 8-byte header: the body
    /// starts 8 bytes into a 16-aligned record). `None` if the ring has no
    /// room now. The record becomes visible at [`Producer::publish`].
    #[inline]
    pub fn reserve(&mut self, body_len: usize, tag: u32) -> Option<*mut u8> {
        debug_assert_eq!(self.pending, 0, "reserve twice without publish");
        let rec = align_up(REC_HEADER + body_len);
        assert!(
            rec <= self.ring.capacity / 2,
            "record of {rec} bytes too large for ring"
        );
        let cap = self.ring.capacity as u64;
        let idx = (self.tail % cap) as usize;
        let to_end = self.ring.capacity - idx;
        let need = if rec > to_end { to_end + rec } else { rec } as u64;
        if cap - (self.tail - self.cached_head) < need {
            self.cached_head = self.ring.head().load(Ordering::Acquire);
            if cap - (self.tail - self.cached_head) < need {
                return None;
            }
        }
        let mut at = idx;
        if rec > to_end {
            // SAFETY: [idx, capacity) is free (checked above) and owned by
            // the producer until published; the header fits since
            // to_end >= ALIGN.
            unsafe { write_header(self.ring.data(idx), to_end as u32, TAG_WRAP) };
            self.tail += to_end as u64;
            at = 0;
        }
        let p = self.ring.data(at);
        // SAFETY: [at, at + rec) is free space owned by the producer.
        unsafe { write_header(p, rec as u32, tag) };
        self.pending = rec as u64;
        // SAFETY: the body starts inside the reserved record.
        Some(unsafe { p.add(REC_HEADER) })
    }

    /// Publishes the record reserved last (release: its bytes, and any
    /// other writes made before, are visible to the consumer that sees it).
    #[inline]
    pub fn publish(&mut self) {
        self.tail += std::mem::take(&mut self.pending);
        self.ring.tail().store(self.tail, Ordering::Release);
    }

    /// Abandons the reserved record (nothing becomes visible).
    pub fn cancel(&mut self) {
        self.pending = 0;
    }
}

/// # Safety
/// `p` must be valid for an 8-byte write.
#[inline]
unsafe fn write_header(p: *mut u8, len: u32, tag: u32) {
    // SAFETY: caller guarantees 8 writable bytes at p; 4-byte alignment
    // holds since records are 16-byte aligned.
    unsafe {
        (p as *mut u32).write(len);
        (p.add(4) as *mut u32).write(tag);
    }
}

/// A record seen by the consumer.
#[derive(Clone, Copy, Debug)]
pub struct Record {
    /// The record's tag.
    pub tag: u32,
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
        let cached_tail = ring.tail().load(Ordering::Acquire);
        Consumer {
            ring,
            head,
            shared_head: head,
            cached_tail,
        }
    }

    /// Bytes consumed so far (the private head).
    #[inline]
    pub fn head(&self) -> u64 {
        self.head
    }

    /// Whether a record may be waiting (one relaxed load when the cached
    /// view is empty).
    #[inline]
    pub fn maybe_ready(&self) -> bool {
        self.head != self.cached_tail || self.ring.tail().load(Ordering::Relaxed) != self.head
    }

    /// The oldest unconsumed record, if any. Its bytes stay valid and
    /// unchanged until [`Consumer::release`].
    #[inline]
    pub fn peek(&mut self) -> Option<Record> {
        loop {
            if self.head == self.cached_tail {
                self.cached_tail = self.ring.tail().load(Ordering::Acquire);
                if self.head == self.cached_tail {
                    return None;
                }
            }
            let idx = (self.head % self.ring.capacity as u64) as usize;
            let p = self.ring.data(idx);
            // SAFETY: head < tail, so a published record header is at p
            // (acquire on tail made it visible); 4-byte aligned.
            let (len, tag) = unsafe { ((p as *const u32).read(), (p.add(4) as *const u32).read()) };
            if tag == TAG_WRAP {
                self.head += u64::from(len);
                continue;
            }
            assert!(
                len as usize >= REC_HEADER && len as usize <= self.ring.capacity - idx,
                "corrupt AM ring record (len {len} at {idx})"
            );
            return Some(Record {
                tag,
                // SAFETY: inside the record.
                body: unsafe { p.add(REC_HEADER) },
                body_room: len as usize - REC_HEADER,
                len: u64::from(len),
            });
        }
    }

    /// Consumes `rec` (the record returned by the last `peek`). Its space
    /// goes back to the producer at the next [`Consumer::sync`], or at once
    /// once a quarter of the ring is waiting to be handed back: storing the
    /// shared head per record would move its cache line once per message.
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
        for round in 0..200u32 {
            let n = (round as usize * 37) % 300;
            let b = p.reserve(n + 4, 7).expect("room");
            // SAFETY: reserved n + 4 bytes at b.
            unsafe {
                (b as *mut u32).write_unaligned(round);
                for i in 0..n {
                    b.add(4 + i).write((round as usize + i) as u8);
                }
            }
            p.publish();
            let r = c.peek().expect("record");
            assert_eq!(r.tag, 7);
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
    fn full_ring_refuses_until_consumed() {
        let cap = 256;
        let mut mem = alloc(ring_bytes(cap));
        let base = mem.as_mut_ptr() as *mut u8;
        // SAFETY: as above.
        let (mut p, mut c) = unsafe { (Producer::new(base, cap), Consumer::new(base, cap)) };
        let mut n = 0;
        while p.reserve(24, 1).is_some() {
            p.publish();
            n += 1;
        }
        assert_eq!(n, cap / 32);
        let r = c.peek().unwrap();
        c.release(r);
        assert!(p.reserve(24, 1).is_none(), "not handed back before sync");
        c.sync();
        assert!(p.reserve(24, 1).is_some());
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
                    if let Some(b) = p.reserve(len, 3) {
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
