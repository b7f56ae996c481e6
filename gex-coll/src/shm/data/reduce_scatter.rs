//! The chunked reductions' reduce-scatter (see "Reduce-scatter" in
//! `crate::shm::data`): when it is used, the shares of a chunk, and how a
//! member advances one (reduces its share of every member's chunk, then
//! reads the other shares). Part of the shared-memory data mechanism.

use std::sync::atomic::{AtomicU8, Ordering};

use crate::area::{Area, CHUNK, SLOTS};
use crate::reduce::combine;

use super::{check_sig, check_skipped, chunks, mark, me, Entry, Kind};

/// Folded into the signature of a reduction by reduce-scatter, so that
/// members that chose differently (`GEX_COLL_REDUCE_SCATTER` set
/// differently) end the job with a mismatch instead of misreading.
pub(super) const RS_SIG: u64 = 0x5253 << 48;

/// Reduce-scatter for reductions of at least this many bytes ...
pub(crate) const RS_MIN_BYTES: usize = 16 << 10;

/// ... over at least this many members (see "Reduce-scatter" above for
/// where the figures come from: on the 2-core machine measured, every
/// rank count from 2 gained from 16 KiB on when the cores were not
/// contended, some at 8 KiB, none at 2 KiB).
pub(crate) const RS_MIN_RANKS: usize = 2;

/// `GEX_COLL_REDUCE_SCATTER`: 0 by size and rank count, 1 never, 2
/// always.
pub(super) static RS_MODE: AtomicU8 = AtomicU8::new(0);

/// Applies `CollSettings::reduce_scatter` (at client init): `None` by
/// size and rank count, `Some(false)` never, `Some(true)` always.
pub(crate) fn set_reduce_scatter(v: Option<bool>) {
    RS_MODE.store(
        match v {
            None => 0,
            Some(false) => 1,
            Some(true) => 2,
        },
        Ordering::Relaxed,
    );
}

/// Whether a shared-memory reduction of `nbytes` over `n` members (to
/// all members if `to_all`, else to one) goes by reduce-scatter: a
/// function of single-valued arguments (and a setting that the
/// signature covers), so every member chooses the same. A reduce-to-one
/// does so only when the setting says always: measured on 2 cores it
/// was slower at every size and rank count (see "Reduce-scatter" above).
pub(crate) fn reduce_scatter(n: usize, nbytes: usize, to_all: bool) -> bool {
    match RS_MODE.load(Ordering::Relaxed) {
        1 => false,
        2 => n > 1,
        _ => to_all && n >= RS_MIN_RANKS && nbytes >= RS_MIN_BYTES,
    }
}

/// Bytes `[lo, hi)` of a chunk of `len` bytes (whole `dt_sz`-byte
/// elements) that member `m` of `n` reduces: the chunk split into runs
/// of whole elements filling 64 bytes (a cache line, when `dt_sz`
/// divides 64) and the runs shared out as evenly as possible, in member
/// order (the last run may be short; members get none when there are
/// fewer runs than members). Shares are contiguous, disjoint and cover
/// the chunk; every bound is a multiple of `dt_sz`.
pub(crate) fn share(len: usize, dt_sz: usize, n: usize, m: usize) -> (usize, usize) {
    let g = (64 / dt_sz).max(1) * dt_sz;
    let runs = len.div_ceil(g);
    let at = |j: usize| (j * runs / n * g).min(len);
    (at(m), at(m + 1))
}

/// Advances a reduce-scatter entry (see "Reduce-scatter" above) as far as
/// the others allow: reduces this member's share of each chunk every
/// member has posted, in order, publishing it in its own buffer; then, if
/// it gathers, copies the others' shares of each chunk every member has
/// reduced. Stores `done` as it goes (for a member that does not gather,
/// once its share is reduced: nobody reads its input after that, and the
/// root's `done` covers its published share); returns the chunks done.
pub(super) fn advance_rs(a: &Area, e: &mut Entry) -> u64 {
    let me = me();
    let mine = a.data_ctl(me);
    let total = chunks(e.nbytes);
    let Kind::Rs {
        n,
        dt,
        dt_sz,
        ref op,
        ref mut red,
        gathers,
    } = e.kind
    else {
        unreachable!("a reduce-scatter entry")
    };
    let output = e.out.as_ref().expect("a reducer has an output");
    // The output's bytes `[at, at + len)`.
    let out = |at: usize, len: usize| {
        assert!(at + len <= output.len(), "output range");
        // SAFETY: in range (asserted); the output is a staging buffer or
        // a blocking caller's buffer (see `Output`), and this queue entry
        // is its only writer until its completion is signalled; the
        // ranges written by one call do not overlap.
        unsafe { std::slice::from_raw_parts_mut(output.ptr().add(at), len) }
    };
    // Bytes `[lo, hi)` of member `m`'s slot `slot`.
    // SAFETY (each read): `hi <= len <= CHUNK`, inside the slot; the
    // bytes were posted (or, for a share, published: acquire loads
    // below) and are not overwritten before this rank's `done` says it
    // is through with them; nothing else writes them meanwhile (a member
    // writes only its own share of its posted slot).
    let buf = |m: usize, slot: usize, lo: usize, hi: usize| unsafe {
        std::slice::from_raw_parts(a.data_slot(m, slot).add(lo), hi - lo)
    };
    let k = e.k;
    let mut moved = 0;
    loop {
        let mut stepped = false;
        // Reduce this member's share of chunk `red`, once all posted it.
        while *red < total {
            let want = mark(k, *red + 1);
            let posted = |m: usize| {
                let ok = a.data_ctl(m).posted.load(Ordering::Acquire) >= want;
                if !ok {
                    check_skipped(a, e.small_at, k, m, want);
                }
                ok
            };
            if !(0..n).all(posted) {
                break;
            }
            if *red == 0 {
                for m in 0..n {
                    check_sig(a, k, e.sig, m);
                }
            }
            let i = *red as usize;
            let (off, slot) = (i * CHUNK, i % SLOTS);
            let len = (e.nbytes - off).min(CHUNK);
            let (lo, hi) = share(len, dt_sz, n, me);
            if lo < hi {
                // A gatherer reduces into its output (`off + hi <=
                // nbytes`, its length); the others into their chunk-sized
                // scratch (`hi <= min(nbytes, CHUNK)`).
                let acc = out(if gathers { off + lo } else { lo }, hi - lo);
                acc.copy_from_slice(buf(0, slot, lo, hi));
                // As the flat path combines (see `consume`): the same
                // call, element by element, in rank order, so the same
                // bits.
                for m in 1..n {
                    combine(dt, dt_sz, op, buf(m, slot, lo, hi), acc);
                }
                // SAFETY: bytes `[lo, hi)` of this rank's slot `slot`
                // (inside it: `hi <= CHUNK`) hold its input's share,
                // which only this rank reads (just done); the other
                // members read other bytes of the slot until `red` says
                // this share is published.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        acc.as_ptr(),
                        a.data_slot(me, slot).add(lo),
                        hi - lo,
                    )
                };
            }
            *red += 1;
            // Release: the share (and the reads of the inputs) before
            // the count.
            mine.red.store(mark(k, *red), Ordering::Release);
            if !gathers {
                e.got = *red;
                moved += 1;
                mine.done.store(mark(k, e.got), Ordering::Release);
            }
            stepped = true;
        }
        // Copy the others' shares of chunk `got`, once all reduced it.
        while gathers && e.got < *red {
            let want = mark(k, e.got + 1);
            if !(0..n).all(|m| a.data_ctl(m).red.load(Ordering::Acquire) >= want) {
                break;
            }
            let i = e.got as usize;
            let (off, slot) = (i * CHUNK, i % SLOTS);
            let len = (e.nbytes - off).min(CHUNK);
            for m in (0..n).filter(|&m| m != me) {
                let (lo, hi) = share(len, dt_sz, n, m);
                if lo < hi {
                    // `off + hi <= nbytes`, the output's length.
                    out(off + lo, hi - lo).copy_from_slice(buf(m, slot, lo, hi));
                }
            }
            e.got += 1;
            moved += 1;
            // Release: the reads of the shares before the count.
            mine.done.store(mark(k, e.got), Ordering::Release);
            stepped = true;
        }
        if !stepped {
            return moved;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shares of a chunk: contiguous, disjoint, in member order,
    /// covering it, element-aligned, as even as whole 64-byte runs allow;
    /// and chunks of a payload never split an element.
    #[test]
    fn shares_cover_each_chunk_in_whole_elements() {
        for dt_sz in [4usize, 8] {
            assert_eq!(CHUNK % dt_sz, 0, "an element never straddles chunks");
            for n in 1..=9usize {
                let mut lens: Vec<usize> = vec![dt_sz, 2 * dt_sz, 64, 64 + dt_sz, 1000 * dt_sz];
                lens.extend([CHUNK - dt_sz, CHUNK]);
                lens.extend((1..=n + 1).map(|e| e * dt_sz));
                lens.extend((1..=3 * n).map(|r| r * 64 - dt_sz));
                for len in lens {
                    let shares: Vec<_> = (0..n).map(|m| share(len, dt_sz, n, m)).collect();
                    assert_eq!(shares[0].0, 0);
                    assert_eq!(shares[n - 1].1, len, "len {len} n {n}");
                    let runs = len.div_ceil(64 / dt_sz * dt_sz);
                    for (m, &(lo, hi)) in shares.iter().enumerate() {
                        assert!(lo <= hi, "len {len} n {n} m {m}");
                        assert_eq!(lo % dt_sz, 0);
                        assert_eq!(hi % dt_sz, 0);
                        if m + 1 < n {
                            assert_eq!(hi, shares[m + 1].0, "contiguous");
                        }
                        // Whole runs, as even as they go (the last run
                        // may be short).
                        let r = hi.div_ceil(64) - lo / 64;
                        assert!(
                            r >= runs / n && r <= runs.div_ceil(n),
                            "len {len} n {n} m {m}"
                        );
                    }
                    if len / dt_sz < n {
                        // Fewer elements than members: some get none.
                        assert!(shares.iter().any(|&(lo, hi)| lo == hi));
                    }
                }
            }
        }
        // A payload's chunks: the last one short, every one element-aligned.
        for nbytes in [8usize, CHUNK, CHUNK + 8, 5 * CHUNK - 8, 200_000] {
            let total = chunks(nbytes) as usize;
            let lens: Vec<usize> = (0..total)
                .map(|i| (nbytes - i * CHUNK).min(CHUNK))
                .collect();
            assert_eq!(lens.iter().sum::<usize>(), nbytes);
            assert!(lens.iter().all(|l| l % 8 == 0 && *l > 0));
        }
    }

    #[test]
    fn reduce_scatter_is_chosen_by_size_and_ranks() {
        // The default (no setting in a unit test).
        assert!(!reduce_scatter(1, 1 << 20, true));
        assert!(!reduce_scatter(RS_MIN_RANKS, RS_MIN_BYTES - 8, true));
        assert!(!reduce_scatter(8, 2048, true));
        assert!(reduce_scatter(RS_MIN_RANKS, RS_MIN_BYTES, true));
        assert!(reduce_scatter(3, 65536, true));
        assert!(reduce_scatter(8, 1 << 20, true));
        // Reduce-to-one: flat unless forced.
        assert!(!reduce_scatter(8, 1 << 20, false));
    }
}
