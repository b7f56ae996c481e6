//! Shapes to runs: every VIS call becomes a list of contiguous runs
//! ([`Piece`]: an offset in the peer's segment, an address in this process,
//! a length), with neighbouring runs merged, before anything moves. Pure
//! arithmetic on checked inputs; no memory is touched here.

/// One contiguous run of a transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    /// Offset in the peer's segment.
    pub(crate) roff: usize,
    /// Address in this process (the source of a put, the destination of a
    /// get).
    pub(crate) local: usize,
    /// Bytes.
    pub(crate) len: usize,
}

/// The runs of one transfer, in order, neighbours merged.
#[derive(Debug, Default)]
pub(crate) struct Pieces {
    pub(crate) v: Vec<Piece>,
    pub(crate) bytes: usize,
}

impl Pieces {
    /// Appends a run, merging it into the last one when both sides continue
    /// it (one copy per contiguous run, however the caller cut it).
    #[inline]
    pub(crate) fn push(&mut self, roff: usize, local: usize, len: usize) {
        if len == 0 {
            return;
        }
        self.bytes += len;
        if let Some(last) = self.v.last_mut() {
            if last.roff.wrapping_add(last.len) == roff
                && last.local.wrapping_add(last.len) == local
            {
                last.len += len;
                return;
            }
        }
        self.v.push(Piece { roff, local, len });
    }
}

/// Matches two lists of (start, length) with equal totals as byte
/// streams: the runs where both sides are contiguous. `remote` holds
/// segment offsets (already checked), `local` addresses.
pub(crate) fn vector(remote: &[(usize, usize)], local: &[(usize, usize)]) -> Pieces {
    let mut out = Pieces::default();
    vector_runs(remote.iter().copied(), local.iter().copied(), |r| {
        out.push(r.roff, r.local, r.len)
    });
    out
}

/// [`vector`] as a stream: calls `f` with each run (not merged, no
/// allocation), in order. Zero-length elements on either side are
/// skipped.
#[inline]
pub(crate) fn vector_runs(
    mut remote: impl Iterator<Item = (usize, usize)>,
    mut local: impl Iterator<Item = (usize, usize)>,
    mut f: impl FnMut(Piece),
) {
    let (mut r, mut l) = (remote.next(), local.next());
    while let (Some((ro, rl)), Some((la, ll))) = (r, l) {
        if rl == 0 {
            r = remote.next();
            continue;
        }
        if ll == 0 {
            l = local.next();
            continue;
        }
        let n = rl.min(ll);
        f(Piece {
            roff: ro,
            local: la,
            len: n,
        });
        r = Some((ro + n, rl - n));
        l = Some((la + n, ll - n));
    }
}

/// One stride level of a strided transfer: `count` elements `rs` bytes
/// apart on the remote side and `ls` bytes apart on the local side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Level {
    pub(crate) count: usize,
    pub(crate) rs: isize,
    pub(crate) ls: isize,
}

/// Folds contiguous levels into the element: a level whose strides on both
/// sides equal the element size makes `count` elements one larger
/// element, and a level whose strides are the level below's times its
/// count merges with it. Levels of count 1 vanish. Returns the element size
/// and the levels left (a 64 x 64 block of doubles whose rows are
/// contiguous becomes 64 rows of 512 bytes).
pub(crate) fn fold(mut elemsz: usize, levels: &[Level]) -> (usize, Vec<Level>) {
    let mut out: Vec<Level> = Vec::with_capacity(levels.len());
    for &l in levels {
        if l.count == 1 {
            continue;
        }
        if out.is_empty() && l.rs as usize == elemsz && l.ls as usize == elemsz && l.rs > 0 {
            if let Some(e) = elemsz.checked_mul(l.count) {
                elemsz = e;
                continue;
            }
        }
        if let Some(prev) = out.last_mut() {
            let c = prev.count as isize;
            if prev.rs.checked_mul(c) == Some(l.rs) && prev.ls.checked_mul(c) == Some(l.ls) {
                if let Some(n) = prev.count.checked_mul(l.count) {
                    prev.count = n;
                    continue;
                }
            }
        }
        out.push(l);
    }
    (elemsz, out)
}

/// The lowest and one past the highest byte, relative to element 0, that
/// the elements of one side touch (`stride` picks the side's stride).
pub(crate) fn extent(elemsz: usize, levels: &[Level], stride: fn(&Level) -> isize) -> (i128, i128) {
    let (mut lo, mut hi) = (0i128, elemsz as i128);
    for l in levels {
        let span = stride(l) as i128 * (l.count as i128 - 1);
        if span < 0 {
            lo += span;
        } else {
            hi += span;
        }
    }
    (lo, hi)
}

/// The index of the element at the low (`high == false`) or high end of
/// one side's extent, for error messages.
pub(crate) fn corner(levels: &[Level], stride: fn(&Level) -> isize, high: bool) -> Vec<usize> {
    levels
        .iter()
        .map(|l| {
            if (stride(l) < 0) != high {
                l.count - 1
            } else {
                0
            }
        })
        .collect()
}

/// Checks that no two elements of the destination side overlap, with a
/// sufficient rule: sorted by the size of their stride, each level with
/// more than one element steps over everything the levels below it cover.
/// Returns the (original) index of the first level that breaks it.
pub(crate) fn overlapping_level(
    elemsz: usize,
    levels: &[Level],
    stride: fn(&Level) -> isize,
) -> Option<usize> {
    let mut order: Vec<usize> = (0..levels.len()).filter(|&k| levels[k].count > 1).collect();
    order.sort_by_key(|&k| stride(&levels[k]).unsigned_abs());
    let mut span = elemsz as u128;
    for k in order {
        let s = stride(&levels[k]).unsigned_abs() as u128;
        if s < span {
            return Some(k);
        }
        span += s * (levels[k].count as u128 - 1);
    }
    None
}

/// Where the runs of a transfer go, in order.
pub(crate) trait Runs {
    /// One run (possibly continuing the last one).
    fn run(&mut self, roff: usize, local: usize, len: usize);
}

impl Runs for Pieces {
    #[inline]
    fn run(&mut self, roff: usize, local: usize, len: usize) {
        self.push(roff, local, len)
    }
}

/// Merges the runs handed to it and gives each merged run to `f`
/// ([`Merge::finish`] gives the last one): runs without a list.
pub(crate) struct Merge<F: FnMut(Piece)> {
    pending: Option<Piece>,
    f: F,
}

impl<F: FnMut(Piece)> Merge<F> {
    pub(crate) fn new(f: F) -> Self {
        Merge { pending: None, f }
    }

    pub(crate) fn finish(mut self) {
        if let Some(p) = self.pending.take() {
            (self.f)(p);
        }
    }
}

impl<F: FnMut(Piece)> Runs for Merge<F> {
    #[inline]
    fn run(&mut self, roff: usize, local: usize, len: usize) {
        if len == 0 {
            return;
        }
        if let Some(p) = &mut self.pending {
            if p.roff.wrapping_add(p.len) == roff && p.local.wrapping_add(p.len) == local {
                p.len += len;
                return;
            }
            let done = *p;
            (self.f)(done);
        }
        self.pending = Some(Piece { roff, local, len });
    }
}

/// The runs of a strided transfer whose element 0 is at segment offset
/// `rbase` and local address `lbase`, levels already checked to stay
/// within both sides' ranges.
pub(crate) fn strided(rbase: usize, lbase: usize, elemsz: usize, levels: &[Level]) -> Pieces {
    let mut out = Pieces::default();
    let total: usize = levels.iter().map(|l| l.count).product();
    out.v.reserve(total.min(1 << 16));
    strided_into(&mut out, rbase, lbase, elemsz, levels);
    out
}

/// The runs of a strided transfer, handed to `out` in order (see
/// [`strided`]).
pub(crate) fn strided_into(
    out: &mut impl Runs,
    rbase: usize,
    lbase: usize,
    elemsz: usize,
    levels: &[Level],
) {
    let mut idx = [0usize; 8];
    let mut idx_heap;
    let idx: &mut [usize] = if levels.len() <= idx.len() {
        &mut idx[..levels.len()]
    } else {
        idx_heap = vec![0usize; levels.len()];
        &mut idx_heap
    };
    let (mut r, mut l) = (rbase, lbase);
    loop {
        out.run(r, l, elemsz);
        // The odometer: bump the lowest level, carry into the next.
        let mut k = 0;
        loop {
            if k == levels.len() {
                return;
            }
            let lv = &levels[k];
            if idx[k] + 1 < lv.count {
                idx[k] += 1;
                r = r.wrapping_add_signed(lv.rs);
                l = l.wrapping_add_signed(lv.ls);
                break;
            }
            // Back to 0 on this level.
            let back = idx[k] as isize;
            r = r.wrapping_add_signed(lv.rs.wrapping_mul(-back));
            l = l.wrapping_add_signed(lv.ls.wrapping_mul(-back));
            idx[k] = 0;
            k += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Applies `pieces` (local addresses are offsets into `src`) to `dst`.
    fn apply(pieces: &Pieces, src: &[u8], dst: &mut [u8]) {
        for p in &pieces.v {
            dst[p.roff..p.roff + p.len].copy_from_slice(&src[p.local..p.local + p.len]);
        }
    }

    #[test]
    fn a_block_of_rows_folds_to_rows() {
        let levels = [
            Level {
                count: 64,
                rs: 8,
                ls: 8,
            },
            Level {
                count: 64,
                rs: 8192,
                ls: 512,
            },
        ];
        let (e, l) = fold(8, &levels);
        assert_eq!((e, l.len()), (512, 1));
        let p = strided(0, 0, e, &l);
        assert_eq!(p.v.len(), 64);
        assert_eq!(p.bytes, 64 * 64 * 8);
        // Fully contiguous on both sides: one run.
        let levels = [
            Level {
                count: 4,
                rs: 8,
                ls: 8,
            },
            Level {
                count: 3,
                rs: 32,
                ls: 32,
            },
        ];
        let (e, l) = fold(8, &levels);
        assert_eq!((e, l.len()), (96, 0));
        assert_eq!(
            strided(5, 7, e, &l).v,
            [Piece {
                roff: 5,
                local: 7,
                len: 96
            }]
        );
    }

    #[test]
    fn overlap_rule() {
        let l = |count, rs| Level { count, rs, ls: 0 };
        let rs = |l: &Level| l.rs;
        assert_eq!(overlapping_level(8, &[l(4, 8), l(2, 32)], rs), None);
        assert_eq!(overlapping_level(8, &[l(4, 4)], rs), Some(0));
        assert_eq!(overlapping_level(8, &[l(4, 0)], rs), Some(0));
        assert_eq!(overlapping_level(8, &[l(1, 0)], rs), None, "one element");
        assert_eq!(overlapping_level(8, &[l(4, 8), l(2, 24)], rs), Some(1));
        // A transpose: the larger stride first is fine.
        assert_eq!(overlapping_level(8, &[l(4, 64), l(8, -8)], rs), None);
    }

    fn vec_shape() -> impl Strategy<Value = (Vec<usize>, Vec<usize>, Vec<usize>)> {
        // Remote piece lengths (0..40) and gaps, and a local cut of the
        // same total.
        prop::collection::vec((0usize..40, 0usize..9), 1..30).prop_flat_map(|r| {
            let total: usize = r.iter().map(|x| x.0).sum();
            let lens: Vec<usize> = r.iter().map(|x| x.0).collect();
            let gaps: Vec<usize> = r.iter().map(|x| x.1).collect();
            (
                Just(lens),
                Just(gaps),
                prop::collection::vec(0usize..=total.max(1), 0..20).prop_map(move |mut cuts| {
                    cuts.push(0);
                    cuts.push(total);
                    cuts.retain(|&c| c <= total);
                    cuts.sort();
                    cuts.windows(2).map(|w| w[1] - w[0]).collect()
                }),
            )
        })
    }

    proptest! {
        /// A vector transfer's runs move every byte of the stream to the
        /// right place, and nothing else.
        #[test]
        fn vector_runs_match_the_model((lens, gaps, cuts) in vec_shape()) {
            let mut remote = Vec::new();
            let mut at = 0;
            for (len, gap) in lens.iter().zip(&gaps) {
                at += gap;
                remote.push((at, *len));
                at += len;
            }
            let rsize = at;
            let mut local = Vec::new();
            let mut lat = 0;
            for c in &cuts {
                lat += 3; // gaps on the local side too
                local.push((lat, *c));
                lat += c;
            }
            let src: Vec<u8> = (0..lat + 1).map(|i| (i * 7 + 1) as u8).collect();
            let p = vector(&remote, &local);
            let mut got = vec![0u8; rsize];
            apply(&p, &src, &mut got);
            // The model: the two streams byte by byte.
            let stream: Vec<u8> = local.iter().flat_map(|&(a, n)| src[a..a + n].to_vec()).collect();
            let mut want = vec![0u8; rsize];
            let mut k = 0;
            for &(o, n) in &remote {
                want[o..o + n].copy_from_slice(&stream[k..k + n]);
                k += n;
            }
            prop_assert_eq!(got, want);
            prop_assert_eq!(p.bytes, k);
            // Merged: no two neighbouring runs continue each other.
            for w in p.v.windows(2) {
                prop_assert!(!(w[0].roff + w[0].len == w[1].roff && w[0].local + w[0].len == w[1].local));
            }
        }

        /// A strided transfer's runs (folded or not) equal the element-wise
        /// model, with strides of either sign.
        #[test]
        fn strided_runs_match_the_model(
            elemsz in 1usize..9,
            dims in prop::collection::vec((1usize..5, -3isize..4, -3isize..4), 0..4),
        ) {
            // Strides as multiples of a growing unit, so that destinations
            // never overlap (the model would be ambiguous otherwise).
            let mut levels = Vec::new();
            let mut unit = elemsz as isize;
            for &(count, a, b) in &dims {
                let rs = unit * if a == 0 { 1 } else { a };
                let ls = unit * if b == 0 { 1 } else { b };
                levels.push(Level { count, rs, ls });
                unit *= 4 * count as isize;
            }
            let rsx = |l: &Level| l.rs;
            let lsx = |l: &Level| l.ls;
            prop_assert_eq!(overlapping_level(elemsz, &levels, rsx), None);
            let (rlo, rhi) = extent(elemsz, &levels, rsx);
            let (llo, lhi) = extent(elemsz, &levels, lsx);
            let rbase = (-rlo) as usize;
            let lbase = (-llo) as usize;
            let src: Vec<u8> = (0..(lhi - llo) as usize).map(|i| (i * 13 + 5) as u8).collect();
            let mut want = vec![0u8; (rhi - rlo) as usize];
            // Element-wise model.
            let total: usize = levels.iter().map(|l| l.count).product();
            for mut e in 0..total {
                let (mut r, mut l) = (rbase as isize, lbase as isize);
                for lv in &levels {
                    let i = (e % lv.count) as isize;
                    e /= lv.count;
                    r += i * lv.rs;
                    l += i * lv.ls;
                }
                let (r, l) = (r as usize, l as usize);
                want[r..r + elemsz].copy_from_slice(&src[l..l + elemsz]);
            }
            let mut plain = vec![0u8; want.len()];
            apply(&strided(rbase, lbase, elemsz, &levels), &src, &mut plain);
            prop_assert_eq!(&plain, &want);
            let (e, f) = fold(elemsz, &levels);
            let folded = strided(rbase, lbase, e, &f);
            // Streaming through `Merge` gives the same runs.
            let mut streamed = Vec::new();
            let mut m = Merge::new(|p| streamed.push(p));
            strided_into(&mut m, rbase, lbase, e, &f);
            m.finish();
            prop_assert_eq!(&streamed, &folded.v);
            let mut got = vec![0u8; want.len()];
            apply(&folded, &src, &mut got);
            prop_assert_eq!(&got, &want);
            prop_assert_eq!(folded.bytes, total * elemsz);
        }
    }
}
