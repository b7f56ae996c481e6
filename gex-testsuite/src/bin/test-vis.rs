//! Vector, indexed and strided transfer tests, run as one rank of a job of
//! any size: `gex-run -n N test-vis` (and with `GEX_VIS_FORCE_AM=1`, which
//! sends every transfer through the Active Message route, and over udp
//! without the bypass).
//!
//! - A random plan against a model: every rank owns an area in every
//!   rank's segment (its own included) and runs random vector puts and gets
//!   (1 to 1000 pieces of random sizes, some long enough for Long AMs, the
//!   two sides cut differently), indexed ones (random element lengths, the
//!   elements in random order) and strided ones (1 to 4 levels, random
//!   extents, strides of either sign and in any order: reflections and
//!   transposes), through NB, NBI (plain and in access regions) and
//!   blocking calls, owner addresses and segment offsets, `IMMEDIATE`
//!   sometimes. Every get lands in a buffer with guard bytes around each
//!   destination; the whole area, whose untouched bytes are the guards of
//!   the puts, is compared with the model after every few operations and
//!   at the end.
//! - NB gets in flight together (staged off the direct route), and one
//!   dropped without a wait.
//! - Peer completion: puts with a handler armed, to every rank through
//!   every kind of call; the handler checks that the put's data is there,
//!   and runs exactly once per put.
//! - `ENABLE_LEAF_LC`: the source is rewritten once local completion is
//!   signalled, and the target still gets the original.
//! - Errors that name the element and write nothing.

use std::sync::atomic::{AtomicU32, Ordering};

use gex::am::{register_handlers, HandlerEntry};
use gex::nbi;
use gex::rma::Rma;
use gex::vis::{set_peer_completion_handler, Injected, Route, StridedLocal, Vis};
use gex::{Ec, Event, Flags, Memvec, Rank, TmRef};
use gex_testsuite::{pattern, Job, Rng};

const SEG: usize = 4 << 20;
/// Each writer's area in every segment: at `writer * AREA`.
const AREA: usize = SEG / 8;
/// The modelled part of an area; the rest holds peer-completion data.
const MODEL: usize = 384 << 10;
/// Peer-completion puts: slots of `PC_SLOT` bytes after the model.
const PC_SLOT: usize = 4 << 10;
const PC_PUTS: usize = 32;
/// The client's peer completion handler.
const H_PC: u8 = 200;
/// The most ranks a job of this test may have (the areas of 8 writers).
const MAX_RANKS: u32 = 8;

/// Peer completions received, by sender.
static PC_SEEN: [AtomicU32; MAX_RANKS as usize] = [const { AtomicU32::new(0) }; MAX_RANKS as usize];

#[derive(Clone, Copy, Debug)]
enum Call {
    Blocking,
    Nbi,
    Nb,
    Region,
}

struct T<'a> {
    job: &'a Job,
    me: Rank,
    n: Rank,
    rng: Rng,
    /// Owner base of every rank's segment.
    segs: Vec<usize>,
    /// This rank's area in every segment, as this rank last wrote it.
    model: Vec<Vec<u8>>,
    tag: u64,
    ops: usize,
}

impl T<'_> {
    fn call(&mut self) -> Call {
        [Call::Blocking, Call::Nbi, Call::Nb, Call::Region][self.rng.below(4) as usize]
    }

    fn data(&mut self, len: usize) -> Vec<u8> {
        self.tag += 1;
        let tag = self.tag ^ (u64::from(self.me) << 40);
        (0..len).map(|i| pattern(tag, i)).collect()
    }

    /// Random lengths for `k` pieces: mostly 0 to 256 bytes, a few long.
    fn lens(&mut self, k: usize, budget: usize) -> Vec<usize> {
        let mut out = Vec::with_capacity(k);
        let mut left = budget;
        for _ in 0..k {
            let want = match self.rng.below(40) {
                0 => 20_000 + self.rng.below(80_000) as usize,
                1..=3 => 0,
                _ => 1 + self.rng.below(256) as usize,
            };
            let n = want.min(left);
            left -= n;
            out.push(n);
        }
        out
    }

    /// Non-overlapping random pieces inside the model part of the area:
    /// (offset, len), in random order if `shuffle`.
    fn pieces(&mut self, lens: &[usize], shuffle: bool) -> Vec<(usize, usize)> {
        let total: usize = lens.iter().sum();
        let slack = MODEL - total;
        let mut gaps: Vec<usize> = (0..lens.len())
            .map(|_| {
                self.rng
                    .below((slack / lens.len().max(1)).max(1) as u64 + 1) as usize
            })
            .collect();
        // Keep inside.
        let sum: usize = gaps.iter().sum();
        if sum > slack {
            gaps.iter_mut().for_each(|g| *g = 0);
        }
        let mut at = 0;
        let mut out = Vec::with_capacity(lens.len());
        for (len, gap) in lens.iter().zip(gaps) {
            at += gap;
            out.push((at, *len));
            at += len;
        }
        if shuffle {
            for i in (1..out.len()).rev() {
                let j = self.rng.below(i as u64 + 1) as usize;
                out.swap(i, j);
            }
        }
        out
    }

    /// Cuts `total` bytes into `k` random local pieces.
    fn cuts(&mut self, total: usize, k: usize) -> Vec<usize> {
        let mut c: Vec<usize> = (0..k.saturating_sub(1))
            .map(|_| self.rng.below(total as u64 + 1) as usize)
            .collect();
        c.push(0);
        c.push(total);
        c.sort();
        c.windows(2).map(|w| w[1] - w[0]).collect()
    }

    fn finish_put(&mut self, call: Call, ev: Option<Event<'static>>) {
        if let Some(ev) = ev {
            ev.wait().expect("wait");
        }
        match call {
            Call::Nbi => nbi::wait(Ec::PUT, Flags::empty()).expect("nbi wait"),
            Call::Region => nbi::end_access_region(Flags::empty())
                .expect("end region")
                .wait()
                .expect("region wait"),
            _ => {}
        }
    }

    fn begin(&self, call: Call) {
        if let Call::Region = call {
            nbi::begin_access_region(Flags::empty()).expect("begin region");
        }
    }

    fn vector_put(&mut self, t: Rank) {
        let most = if self.rng.below(4) == 0 { 1000 } else { 40 };
        let k = 1 + self.rng.below(most) as usize;
        let lens = self.lens(k, MODEL / 2);
        let shuffle = self.rng.below(2) == 0;
        let pcs = self.pieces(&lens, shuffle);
        let total: usize = lens.iter().sum();
        let src = self.data(total + 16);
        let kl = 1 + self.rng.below(60) as usize;
        let cuts = self.cuts(total, kl);
        let mut slices: Vec<&[u8]> = Vec::new();
        let mut at = 0;
        for c in &cuts {
            slices.push(&src[at..at + c]);
            at += c;
        }
        // One addressing mode per call.
        let flags = if self.rng.below(2) == 0 {
            Flags::PEER_SEG_OFFSET
        } else {
            Flags::empty()
        };
        let dst: Vec<Memvec> = pcs
            .iter()
            .map(|&(o, l)| {
                let o = self.me as usize * AREA + o;
                Memvec::new(
                    if flags.is_empty() {
                        self.segs[t as usize] + o
                    } else {
                        o
                    },
                    l,
                )
            })
            .collect();
        let imm = self.rng.below(8) == 0;
        let flags = flags
            | if imm {
                Flags::IMMEDIATE
            } else {
                Flags::empty()
            };
        let call = self.call();
        self.begin(call);
        let tm = &self.job.tm;
        let (inj, ev) = match call {
            Call::Blocking => (
                tm.vector_put_blocking(t, &dst, &slices, flags)
                    .expect("vector put"),
                None,
            ),
            Call::Nbi | Call::Region => (
                tm.vector_put_nbi(t, &dst, &slices, flags)
                    .expect("vector put"),
                None,
            ),
            Call::Nb => {
                let ev = tm
                    .vector_put_nb(t, &dst, &slices, flags)
                    .expect("vector put");
                if ev.is_no_op() {
                    (Injected::NoOp, None)
                } else {
                    (Injected::Sent, Some(ev))
                }
            }
        };
        self.finish_put(call, ev);
        if inj == Injected::Sent {
            let stream: Vec<u8> = slices.concat();
            let m = &mut self.model[t as usize];
            let mut k = 0;
            for &(o, l) in &pcs {
                m[o..o + l].copy_from_slice(&stream[k..k + l]);
                k += l;
            }
        }
        self.ops += 1;
    }

    /// A local buffer with guard bytes around `k` destinations of the given
    /// lengths: (buffer, offset of each destination).
    fn guarded(&mut self, lens: &[usize]) -> (Vec<u8>, Vec<usize>) {
        let mut offs = Vec::with_capacity(lens.len());
        let mut at = 0;
        for l in lens {
            at += 1 + self.rng.below(8) as usize;
            offs.push(at);
            at += l;
        }
        (vec![0xEE; at + 8], offs)
    }

    fn check_guards(what: &str, buf: &[u8], offs: &[usize], lens: &[usize]) {
        let mut inside = vec![false; buf.len()];
        for (o, l) in offs.iter().zip(lens) {
            inside[*o..o + l].iter_mut().for_each(|b| *b = true);
        }
        if let Some(i) = (0..buf.len()).find(|&i| !inside[i] && buf[i] != 0xEE) {
            panic!(
                "{what}: guard byte {i} of the local buffer was written ({:#04x})",
                buf[i]
            );
        }
    }

    fn vector_get(&mut self, t: Rank) {
        let most = if self.rng.below(4) == 0 { 1000 } else { 40 };
        let k = 1 + self.rng.below(most) as usize;
        let lens = self.lens(k, MODEL / 2);
        // Sources may overlap: pick them anywhere in the model part.
        let src: Vec<(usize, usize)> = lens
            .iter()
            .map(|&l| (self.rng.below((MODEL - l) as u64 + 1) as usize, l))
            .collect();
        let total: usize = lens.iter().sum();
        let kl = 1 + self.rng.below(60) as usize;
        let dlens = self.cuts(total, kl);
        let (mut buf, offs) = self.guarded(&dlens);
        let flags = if self.rng.below(2) == 0 {
            Flags::PEER_SEG_OFFSET
        } else {
            Flags::empty()
        };
        let base = self.me as usize * AREA
            + if flags.is_empty() {
                self.segs[t as usize]
            } else {
                0
            };
        let srcv: Vec<Memvec> = src.iter().map(|&(o, l)| Memvec::new(base + o, l)).collect();
        let call = self.call();
        {
            let mut dsts = split_at(&mut buf, &offs, &dlens);
            let tm = &self.job.tm;
            self.begin(call);
            match call {
                Call::Blocking => {
                    tm.vector_get_blocking(&mut dsts, t, &srcv, flags)
                        .expect("vector get");
                }
                Call::Nbi | Call::Region => {
                    tm.vector_get_nbi(&mut dsts, t, &srcv, flags)
                        .expect("vector get");
                }
                Call::Nb => tm
                    .vector_get_nb(&mut dsts, t, &srcv, flags)
                    .expect("vector get")
                    .wait()
                    .expect("wait"),
            }
            match call {
                Call::Nbi => nbi::wait(Ec::GET, Flags::empty()).expect("nbi wait"),
                Call::Region => nbi::end_access_region(Flags::empty())
                    .unwrap()
                    .wait()
                    .unwrap(),
                _ => {}
            }
        }
        let m = &self.model[t as usize];
        let want: Vec<u8> = src
            .iter()
            .flat_map(|&(o, l)| m[o..o + l].to_vec())
            .collect();
        let got: Vec<u8> = offs
            .iter()
            .zip(&dlens)
            .flat_map(|(&o, &l)| buf[o..o + l].to_vec())
            .collect();
        assert!(
            got == want,
            "rank {}: vector get of {k} pieces from {t}: data differs from the model",
            self.me
        );
        Self::check_guards("vector get", &buf, &offs, &dlens);
        self.ops += 1;
    }

    fn indexed(&mut self, t: Rank) {
        let dlen = 1 + self.rng.below(64) as usize;
        let dcount = 1 + self.rng.below(300) as usize;
        let total = dlen * dcount;
        let divs: Vec<usize> = (1..=total.min(512))
            .filter(|d| total.is_multiple_of(*d))
            .collect();
        let slen = divs[self.rng.below(divs.len() as u64) as usize];
        let scount = total / slen;
        let put = self.rng.below(2) == 0;
        let flags = if self.rng.below(2) == 0 {
            Flags::PEER_SEG_OFFSET
        } else {
            Flags::empty()
        };
        let base = self.me as usize * AREA
            + if flags.is_empty() {
                self.segs[t as usize]
            } else {
                0
            };
        let call = self.call();
        let tm = &self.job.tm;
        if put {
            let pcs = self.pieces(&vec![dlen; dcount], true);
            let src = self.data(total);
            let slices: Vec<&[u8]> = src.chunks(slen).collect();
            let dst: Vec<usize> = pcs.iter().map(|p| base + p.0).collect();
            self.begin(call);
            let ev = match call {
                Call::Blocking => {
                    tm.indexed_put_blocking(t, &dst, dlen, &slices, slen, flags)
                        .expect("indexed put");
                    None
                }
                Call::Nbi | Call::Region => {
                    tm.indexed_put_nbi(t, &dst, dlen, &slices, slen, flags)
                        .expect("indexed put");
                    None
                }
                Call::Nb => Some(
                    tm.indexed_put_nb(t, &dst, dlen, &slices, slen, flags)
                        .expect("indexed put"),
                ),
            };
            self.finish_put(call, ev);
            let m = &mut self.model[t as usize];
            for (i, &(o, l)) in pcs.iter().enumerate() {
                m[o..o + l].copy_from_slice(&src[i * dlen..i * dlen + l]);
            }
        } else {
            // Gets: sources of srclen bytes anywhere (they may overlap).
            let src: Vec<usize> = (0..scount)
                .map(|_| self.rng.below((MODEL - slen) as u64 + 1) as usize)
                .collect();
            let dlens = vec![dlen; dcount];
            let (mut buf, offs) = self.guarded(&dlens);
            let srcl: Vec<usize> = src.iter().map(|o| base + o).collect();
            {
                let mut dsts = split_at(&mut buf, &offs, &dlens);
                self.begin(call);
                match call {
                    Call::Blocking => {
                        tm.indexed_get_blocking(&mut dsts, dlen, t, &srcl, slen, flags)
                            .expect("indexed get");
                    }
                    Call::Nbi | Call::Region => {
                        tm.indexed_get_nbi(&mut dsts, dlen, t, &srcl, slen, flags)
                            .expect("indexed get");
                    }
                    Call::Nb => tm
                        .indexed_get_nb(&mut dsts, dlen, t, &srcl, slen, flags)
                        .expect("indexed get")
                        .wait()
                        .expect("wait"),
                }
                match call {
                    Call::Nbi => nbi::wait(Ec::GET, Flags::empty()).unwrap(),
                    Call::Region => nbi::end_access_region(Flags::empty())
                        .unwrap()
                        .wait()
                        .unwrap(),
                    _ => {}
                }
            }
            let m = &self.model[t as usize];
            let want: Vec<u8> = src.iter().flat_map(|&o| m[o..o + slen].to_vec()).collect();
            let got: Vec<u8> = offs
                .iter()
                .flat_map(|&o| buf[o..o + dlen].to_vec())
                .collect();
            assert!(
                got == want,
                "rank {}: indexed get from {t}: data differs from the model",
                self.me
            );
            Self::check_guards("indexed get", &buf, &offs, &dlens);
        }
        self.ops += 1;
    }

    /// A random strided shape: (elemsz, count, strides, extent lo, hi)
    /// with non-overlapping elements fitting in `room` bytes.
    fn shape(&mut self, levels: usize, count: &[usize], elemsz: usize) -> (Vec<isize>, usize) {
        // Nested strides with random gaps, levels in a random order
        // (transposes) and random signs (reflections).
        let mut order: Vec<usize> = (0..levels).collect();
        for i in (1..levels).rev() {
            let j = self.rng.below(i as u64 + 1) as usize;
            order.swap(i, j);
        }
        let mut strides = vec![0isize; levels];
        let mut span = elemsz;
        for &k in &order {
            let s = span + self.rng.below(4) as usize * (1 + self.rng.below(8) as usize);
            strides[k] = if self.rng.below(3) == 0 {
                -(s as isize)
            } else {
                s as isize
            };
            span += s * (count[k] - 1);
        }
        (strides, span)
    }

    fn strided(&mut self, t: Rank) {
        let levels = self.rng.below(5) as usize; // 0: one element
        let elemsz = 1 + self.rng.below(64) as usize;
        let mut count: Vec<usize> = (0..levels)
            .map(|_| 1 + self.rng.below(12) as usize)
            .collect();
        // Keep the extent inside the model part.
        loop {
            let elems: usize = count.iter().product();
            if elems * elemsz * 3 < MODEL / 4 {
                break;
            }
            let k = (0..levels).max_by_key(|&k| count[k]).unwrap();
            count[k] = count[k].div_ceil(2);
        }
        let (rs, rspan) = self.shape(levels, &count, elemsz);
        let (ls, lspan) = self.shape(levels, &count, elemsz);
        if rspan > MODEL {
            return;
        }
        // Element 0's place: past the negative strides.
        let neg = |s: &[isize]| -> usize {
            s.iter()
                .zip(&count)
                .map(|(&s, &c)| if s < 0 { (-s) as usize * (c - 1) } else { 0 })
                .sum()
        };
        let r0 = neg(&rs) + self.rng.below((MODEL - rspan) as u64 + 1) as usize;
        let l0 = neg(&ls) + self.rng.below(16) as usize;
        let lbuf_len = l0 - neg(&ls) + lspan + self.rng.below(16) as usize;
        let flags = if self.rng.below(2) == 0 {
            Flags::PEER_SEG_OFFSET
        } else {
            Flags::empty()
        };
        let base = self.me as usize * AREA
            + if flags.is_empty() {
                self.segs[t as usize]
            } else {
                0
            };
        // Every element: (remote offset, local offset).
        let total: usize = count.iter().product();
        let elems: Vec<(usize, usize)> = (0..total)
            .map(|mut e| {
                let (mut r, mut l) = (r0 as isize, l0 as isize);
                for k in 0..levels {
                    let i = (e % count[k]) as isize;
                    e /= count[k];
                    r += i * rs[k];
                    l += i * ls[k];
                }
                (r as usize, l as usize)
            })
            .collect();
        let call = self.call();
        let tm = &self.job.tm;
        if self.rng.below(2) == 0 {
            let src = self.data(lbuf_len);
            self.begin(call);
            let s = || StridedLocal::new(&src[..], l0);
            let ev = match call {
                Call::Blocking => {
                    tm.strided_put_blocking(t, base + r0, &rs, s(), &ls, elemsz, &count, flags)
                        .expect("strided put");
                    None
                }
                Call::Nbi | Call::Region => {
                    tm.strided_put_nbi(t, base + r0, &rs, s(), &ls, elemsz, &count, flags)
                        .expect("strided put");
                    None
                }
                Call::Nb => Some(
                    tm.strided_put_nb(t, base + r0, &rs, s(), &ls, elemsz, &count, flags)
                        .expect("strided put"),
                ),
            };
            self.finish_put(call, ev);
            let m = &mut self.model[t as usize];
            for &(r, l) in &elems {
                m[r..r + elemsz].copy_from_slice(&src[l..l + elemsz]);
            }
        } else {
            let mut buf = vec![0xEEu8; lbuf_len];
            {
                let d = StridedLocal::new(&mut buf[..], l0);
                self.begin(call);
                match call {
                    Call::Blocking => {
                        tm.strided_get_blocking(d, &ls, t, base + r0, &rs, elemsz, &count, flags)
                            .expect("strided get");
                    }
                    Call::Nbi | Call::Region => {
                        tm.strided_get_nbi(d, &ls, t, base + r0, &rs, elemsz, &count, flags)
                            .expect("strided get");
                    }
                    Call::Nb => tm
                        .strided_get_nb(d, &ls, t, base + r0, &rs, elemsz, &count, flags)
                        .expect("strided get")
                        .wait()
                        .expect("wait"),
                }
                match call {
                    Call::Nbi => nbi::wait(Ec::GET, Flags::empty()).unwrap(),
                    Call::Region => nbi::end_access_region(Flags::empty())
                        .unwrap()
                        .wait()
                        .unwrap(),
                    _ => {}
                }
            }
            let m = &self.model[t as usize];
            let mut want = vec![0xEEu8; lbuf_len];
            for &(r, l) in &elems {
                want[l..l + elemsz].copy_from_slice(&m[r..r + elemsz]);
            }
            assert!(
                buf == want,
                "rank {}: strided get from {t} (elemsz {elemsz}, count {count:?}, remote strides {rs:?}, local strides {ls:?}): differs from the model or a guard byte was written",
                self.me
            );
        }
        self.ops += 1;
    }

    /// Compares this rank's area in every segment with the model.
    fn check_all(&self, when: &str) {
        for t in 0..self.n {
            let mut got = vec![0u8; MODEL];
            self.job
                .tm
                .get_blocking(&mut got, t, self.me as usize * AREA, Flags::PEER_SEG_OFFSET)
                .expect("get");
            if let Some(i) = (0..MODEL).find(|&i| got[i] != self.model[t as usize][i]) {
                panic!(
                    "rank {}: {when}: byte {i} of my area at rank {t} is {:#04x}, the model says {:#04x}",
                    self.me, got[i], self.model[t as usize][i]
                );
            }
        }
    }
}

/// Disjoint mutable slices of `buf` at `offs` with `lens`.
fn split_at<'b>(buf: &'b mut [u8], offs: &[usize], lens: &[usize]) -> Vec<&'b mut [u8]> {
    let mut out = Vec::with_capacity(offs.len());
    let mut rest = buf;
    let mut consumed = 0;
    for (&o, &l) in offs.iter().zip(lens) {
        let r = std::mem::take(&mut rest);
        let (_, r) = r.split_at_mut(o - consumed);
        let (piece, r) = r.split_at_mut(l);
        out.push(piece);
        rest = r;
        consumed = o + l;
    }
    out
}

fn model_test(t: &mut T<'_>) {
    // A known start: zeros everywhere in this rank's areas.
    for r in 0..t.n {
        t.job
            .tm
            .put_blocking(
                r,
                t.me as usize * AREA,
                &vec![0u8; MODEL][..],
                Flags::PEER_SEG_OFFSET,
            )
            .expect("put");
    }
    for i in 0..160 {
        let target = t.rng.below(u64::from(t.n)) as Rank;
        match t.rng.below(5) {
            0 => t.vector_put(target),
            1 => t.vector_get(target),
            2 => t.indexed(target),
            _ => t.strided(target),
        }
        if i % 20 == 19 {
            t.check_all(&format!("after {} operations", t.ops));
        }
    }
    t.check_all("at the end of the plan");
}

/// NB gets in flight together (off the direct route they land in staging
/// buffers their events scatter out), completed with `wait_all`, and one
/// dropped without a wait (the drop waits): data and guards checked.
fn nb_gets_in_flight(t: &mut T<'_>) {
    for target in 0..t.n {
        let base = t.me as usize * AREA;
        let mut jobs = Vec::new();
        for _ in 0..8 {
            let k = 1 + t.rng.below(200) as usize;
            let lens = t.lens(k, MODEL / 8);
            let src: Vec<(usize, usize)> = lens
                .iter()
                .map(|&l| (t.rng.below((MODEL - l) as u64 + 1) as usize, l))
                .collect();
            let total: usize = lens.iter().sum();
            let kl = 1 + t.rng.below(30) as usize;
            let dlens = t.cuts(total, kl);
            let (buf, offs) = t.guarded(&dlens);
            jobs.push((src, dlens, buf, offs));
        }
        {
            let tm = &t.job.tm;
            let srcs: Vec<Vec<Memvec>> = jobs
                .iter()
                .map(|(src, ..)| src.iter().map(|&(o, l)| Memvec::new(base + o, l)).collect())
                .collect();
            let mut lists: Vec<Vec<&mut [u8]>> = jobs
                .iter_mut()
                .map(|(_, dlens, buf, offs)| split_at(buf, offs, dlens))
                .collect();
            let mut evs: Vec<Event<'_>> = lists
                .iter_mut()
                .zip(&srcs)
                .map(|(dst, src)| {
                    tm.vector_get_nb(dst, target, src, Flags::PEER_SEG_OFFSET)
                        .expect("NB get")
                })
                .collect();
            Event::wait_all(&mut evs, Flags::empty()).expect("wait_all");
        }
        let m = &t.model[target as usize];
        for (src, dlens, buf, offs) in &jobs {
            let want: Vec<u8> = src
                .iter()
                .flat_map(|&(o, l)| m[o..o + l].to_vec())
                .collect();
            let got: Vec<u8> = offs
                .iter()
                .zip(dlens)
                .flat_map(|(&o, &l)| buf[o..o + l].to_vec())
                .collect();
            assert!(
                got == want,
                "rank {}: NB gets in flight from {target}: data differs from the model",
                t.me
            );
            T::check_guards("NB gets in flight", buf, offs, dlens);
        }
        // Dropped without a wait: the drop waits, then the data is there.
        let mut buf = vec![0xEEu8; 64 * 64 + 8];
        {
            let ev = t
                .job
                .tm
                .strided_get_nb(
                    StridedLocal::new(&mut buf[..], 4),
                    &[64],
                    target,
                    base + 1000,
                    &[100],
                    40,
                    &[64],
                    Flags::PEER_SEG_OFFSET,
                )
                .expect("strided NB get");
            drop(ev);
        }
        for e in 0..64 {
            assert!(
                buf[4 + e * 64..4 + e * 64 + 40] == m[1000 + e * 100..1000 + e * 100 + 40],
                "rank {}: dropped NB get from {target}: element {e} differs",
                t.me
            );
        }
    }
}

/// Puts with a peer completion handler armed, through each kind of call:
/// the handler (on the target) checks that the data is there.
fn peer_completion(t: &mut T<'_>) {
    let me = t.me;
    for i in 0..PC_PUTS {
        let target = (me + 1 + i as Rank) % t.n;
        let off = MODEL + i * PC_SLOT;
        let len = 1 + (i * 577) % (PC_SLOT - 1);
        let tag = (u64::from(me) << 32) | i as u64;
        let data: Vec<u8> = (0..len).map(|k| pattern(tag, k)).collect();
        let mut payload = Vec::new();
        payload.extend_from_slice(&me.to_le_bytes());
        payload.extend_from_slice(&tag.to_le_bytes());
        payload.extend_from_slice(&((me as usize * AREA + off) as u64).to_le_bytes());
        payload.extend_from_slice(&(len as u64).to_le_bytes());
        set_peer_completion_handler(H_PC, &payload, Flags::empty()).expect("arm");
        let a = me as usize * AREA + off;
        let tm = &t.job.tm;
        let f = Flags::PEER_SEG_OFFSET;
        let half = len / 2;
        match i % 6 {
            0 => {
                tm.vector_put_blocking(
                    target,
                    &[Memvec::new(a, half), Memvec::new(a + half, len - half)],
                    &[&data],
                    f,
                )
                .expect("pc put");
            }
            1 => {
                tm.vector_put_nb(
                    target,
                    &[Memvec::new(a, len)],
                    &[&data[..half], &data[half..]],
                    f,
                )
                .expect("pc put")
                .wait()
                .unwrap();
            }
            2 => {
                tm.indexed_put_nbi(target, &[a], len, &[&data], len, f)
                    .expect("pc put");
                nbi::wait(Ec::PUT, Flags::empty()).unwrap();
            }
            3 => {
                tm.strided_put_blocking(
                    target,
                    a,
                    &[1],
                    StridedLocal::new(&data[..], 0),
                    &[1],
                    1,
                    &[len],
                    f,
                )
                .expect("pc put");
            }
            4 => {
                // An empty put still runs the handler once.
                tm.vector_put_blocking(target, &[Memvec::new(a, len)], &[&data], f)
                    .expect("pc put");
                set_peer_completion_handler(H_PC, &payload, Flags::empty()).unwrap();
                tm.vector_put_nb(target, &[], &[], f)
                    .expect("empty pc put")
                    .wait()
                    .unwrap();
                // So does a degenerate strided put (a zero count: the
                // spec's no-op), and it disarms the handler: the put with
                // IMMEDIATE after it is legal (testvis's pattern).
                set_peer_completion_handler(H_PC, &payload, Flags::empty()).unwrap();
                tm.strided_put_blocking(
                    target,
                    a,
                    &[len as isize, len as isize],
                    StridedLocal::new(&data[..], 0),
                    &[len as isize, len as isize],
                    len,
                    &[1, 0],
                    f,
                )
                .expect("degenerate strided pc put");
                let mut sent = tm
                    .vector_put_blocking(
                        target,
                        &[Memvec::new(a, len)],
                        &[&data],
                        f | Flags::IMMEDIATE,
                    )
                    .expect("an IMMEDIATE put after a degenerate strided put with a handler armed");
                if sent == Injected::NoOp {
                    sent = tm
                        .vector_put_blocking(target, &[Memvec::new(a, len)], &[&data], f)
                        .expect("put");
                }
                assert_eq!(sent, Injected::Sent);
                // (Counted as two more below.)
            }
            _ => {
                tm.strided_put_nb(
                    target,
                    a,
                    &[],
                    StridedLocal::new(&data[..], 0),
                    &[],
                    len,
                    &[],
                    f,
                )
                .expect("pc put")
                .wait()
                .unwrap();
            }
        }
        // An armed handler with a get in between, then disarmed: runs
        // nothing (the counts below are exact).
        set_peer_completion_handler(H_PC, &payload, Flags::empty()).unwrap();
        let mut back = [0u8; 4];
        tm.vector_get_blocking(&mut [&mut back[..]], target, &[Memvec::new(a, 4)], f)
            .unwrap();
        assert_eq!(&back[..len.min(4)], &data[..len.min(4)]);
        set_peer_completion_handler(0, &[], Flags::empty()).unwrap();
        tm.vector_put_blocking(target, &[Memvec::new(a, len)], &[&data], f)
            .expect("put");
    }
}

/// How many peer completions each sender sends to `me` in [`peer_completion`].
fn pc_expected(src: Rank, me: Rank, n: Rank) -> u32 {
    (0..PC_PUTS)
        .filter(|&i| (src + 1 + i as Rank) % n == me)
        .map(|i| if i % 6 == 4 { 3 } else { 1 })
        .sum()
}

fn leaf_lc(t: &mut T<'_>) {
    let tm = &t.job.tm;
    for target in 0..t.n {
        let a = t.me as usize * AREA + MODEL;
        let mut src = vec![0x11u8; 3000];
        let ev = tm
            .vector_put_nb(
                target,
                &[Memvec::new(a, 3000)],
                &[&src],
                Flags::PEER_SEG_OFFSET | Flags::ENABLE_LEAF_LC,
            )
            .expect("leaf lc put");
        let lc = ev.query_leaf(Ec::LC).expect("LC leaf");
        lc.wait().expect("lc wait");
        src.iter_mut().for_each(|b| *b = 0x22);
        ev.wait().expect("root wait");
        let mut back = vec![0u8; 3000];
        tm.get_blocking(&mut back, target, a, Flags::PEER_SEG_OFFSET)
            .unwrap();
        assert!(
            back.iter().all(|&b| b == 0x11),
            "LEAF_LC: the source changed after local completion reached the target"
        );
        // NBI: local completion under Ec::LC.
        let mut src = vec![0x33u8; 5000];
        tm.strided_put_nbi(
            target,
            a,
            &[100],
            StridedLocal::new(&src[..], 0),
            &[100],
            100,
            &[50],
            Flags::PEER_SEG_OFFSET | Flags::ENABLE_LEAF_LC,
        )
        .expect("leaf lc nbi");
        nbi::wait(Ec::LC, Flags::empty()).unwrap();
        src.iter_mut().for_each(|b| *b = 0x44);
        nbi::wait(Ec::PUT, Flags::empty()).unwrap();
        let mut back = vec![0u8; 5000];
        tm.get_blocking(&mut back, target, a, Flags::PEER_SEG_OFFSET)
            .unwrap();
        assert!(
            back.iter().all(|&b| b == 0x33),
            "LEAF_LC NBI: the target got bytes written after local completion"
        );
    }
}

/// Bad arguments: an error naming the element, and nothing written.
fn errors(t: &mut T<'_>) {
    let tm = &t.job.tm;
    let target = (t.me + 1) % t.n;
    let a = t.me as usize * AREA;
    let f = Flags::PEER_SEG_OFFSET;
    let data = vec![0xABu8; 64];
    let expect_err = |r: gex::Result<Injected>, what: &str, needle: &str| {
        let e = r.expect_err(what);
        assert!(
            e.message().contains(needle),
            "{what}: {e} does not name {needle:?}"
        );
        assert!(
            e.message().contains("nothing was transferred")
                || needle.contains("flags")
                || needle.contains("rank"),
            "{what}: {e}"
        );
    };
    // Element 5 outside the segment: nothing of elements 0 to 4 lands.
    let mut dst: Vec<Memvec> = (0..8).map(|i| Memvec::new(a + i * 8, 8)).collect();
    dst[5] = Memvec::new(SEG - 4, 8);
    expect_err(
        tm.vector_put_blocking(target, &dst, &[&data], f),
        "out of segment",
        "dstlist[5]",
    );
    expect_err(
        tm.vector_put_blocking(target, &[Memvec::new(a, 10)], &[&data], f),
        "totals",
        "dstlist covers 10 bytes but srclist 64",
    );
    let mut g1 = [0u8; 8];
    let mut g2 = [0u8; 8];
    expect_err(
        tm.vector_get_blocking(
            &mut [&mut g1, &mut g2],
            target,
            &[Memvec::new(a, 8), Memvec::new(usize::MAX - 2, 8)],
            f,
        ),
        "get out of segment",
        "srclist[1]",
    );
    expect_err(
        tm.indexed_put_blocking(
            target,
            &[a, a + 8],
            8,
            &[&data[..8], &data[..7], &data[..1]],
            8,
            f,
        ),
        "indexed lengths",
        "srclist[1] has 7 bytes",
    );
    expect_err(
        tm.strided_put_blocking(
            target,
            a,
            &[0],
            StridedLocal::new(&data[..], 0),
            &[8],
            8,
            &[4],
            f,
        ),
        "zero stride",
        "dststrides[0] = 0",
    );
    expect_err(
        tm.strided_put_blocking(
            target,
            a,
            &[8, 4],
            StridedLocal::new(&data[..], 0),
            &[8, 32],
            8,
            &[4, 2],
            f,
        ),
        "overlapping strides",
        "dststrides[1]",
    );
    expect_err(
        tm.strided_put_blocking(
            target,
            SEG - 100,
            &[64],
            StridedLocal::new(&data[..], 0),
            &[8],
            8,
            &[8],
            f,
        ),
        "strided out of segment",
        "the dst elements [0] to [7]",
    );
    expect_err(
        tm.strided_put_blocking(
            target,
            a,
            &[8],
            StridedLocal::new(&data[..], 8),
            &[8],
            8,
            &[8],
            f,
        ),
        "strided out of the slice",
        "the src elements [0] to [7] span bytes [8, 72) of a slice of 64 bytes",
    );
    expect_err(
        tm.strided_put_blocking(
            target,
            a,
            &[],
            StridedLocal::new(&data[..], 0),
            &[8],
            8,
            &[4, 2],
            f,
        ),
        "stride arrays",
        "dststrides has 0 entries for 2 stride levels",
    );
    expect_err(
        tm.vector_get_blocking(
            &mut [&mut g1],
            target,
            &[Memvec::new(a, 8)],
            f | Flags::ENABLE_LEAF_LC,
        ),
        "LEAF_LC on a get",
        "flags",
    );
    expect_err(tm.vector_put_blocking(t.n + 3, &[], &[], f), "rank", "rank");
    set_peer_completion_handler(H_PC, b"x", Flags::empty()).unwrap();
    let e = tm
        .vector_put_blocking(
            target,
            &[Memvec::new(a, 8)],
            &[&data[..8]],
            f | Flags::IMMEDIATE,
        )
        .expect_err("armed + IMMEDIATE");
    assert!(e.message().contains("IMMEDIATE"), "{e}");
    set_peer_completion_handler(0, &[], Flags::empty()).unwrap();
    // Degenerate strided calls are no-ops, whatever the addresses.
    tm.strided_put_blocking(
        target,
        usize::MAX,
        &[1],
        StridedLocal::new(&data[..0], 99),
        &[1],
        0,
        &[4],
        f,
    )
    .expect("elemsz 0");
    tm.strided_put_blocking(
        target,
        usize::MAX,
        &[1, 1],
        StridedLocal::new(&data[..0], 99),
        &[1, 1],
        8,
        &[4, 0],
        f,
    )
    .expect("a zero count");
    // Nothing of the above landed.
    t.check_all("after the error cases");
}

fn main() {
    let job = Job::start("TEST_VIS", SEG);
    let (me, n) = (job.rank(), job.size());
    assert!(n <= MAX_RANKS, "test-vis runs on at most {MAX_RANKS} ranks");
    gex::system::set_verbose_errors(false);
    let mut table = [HandlerEntry::reply(
        H_PC,
        Flags::AM_MEDIUM,
        0,
        move |tok, msg| {
            let p = msg.payload();
            assert_eq!(p.len(), 28, "peer completion payload");
            let src = u32::from_le_bytes(p[0..4].try_into().unwrap());
            assert_eq!(
                src,
                tok.src_rank(),
                "peer completion from another rank than the put's"
            );
            let tag = u64::from_le_bytes(p[4..12].try_into().unwrap());
            let off = u64::from_le_bytes(p[12..20].try_into().unwrap()) as usize;
            let len = u64::from_le_bytes(p[20..28].try_into().unwrap()) as usize;
            let info = tok.info();
            let seg = info.ep.segment().expect("a bound segment");
            let mut got = vec![0u8; len];
            seg.read(off, &mut got).expect("read");
            if let Some(k) = (0..len).find(|&k| got[k] != pattern(tag, k)) {
                panic!("rank {me}: peer completion from {src} ran before byte {k} of its put was visible");
            }
            PC_SEEN[src as usize].fetch_add(1, Ordering::SeqCst);
        },
    )];
    register_handlers(&job.ep, &mut table).expect("register");
    job.barrier();
    let segs: Vec<usize> = (0..n)
        .map(|r| {
            job.tm
                .query_bound_segment(r, Flags::empty())
                .unwrap()
                .unwrap()
                .owner_addr
        })
        .collect();
    let mut t = T {
        job: &job,
        me,
        n,
        rng: Rng::new(0x715 ^ u64::from(me) << 24),
        segs,
        model: vec![vec![0u8; MODEL]; n as usize],
        tag: 0,
        ops: 0,
    };
    model_test(&mut t);
    nb_gets_in_flight(&mut t);
    leaf_lc(&mut t);
    errors(&mut t);
    job.barrier();
    peer_completion(&mut t);
    job.barrier();
    for src in 0..n {
        let want = pc_expected(src, me, n);
        job.wait_for(&format!("{want} peer completions from rank {src}"), || {
            PC_SEEN[src as usize].load(Ordering::SeqCst) >= want
        });
    }
    job.barrier();
    for src in 0..n {
        let (got, want) = (
            PC_SEEN[src as usize].load(Ordering::SeqCst),
            pc_expected(src, me, n),
        );
        assert_eq!(
            got, want,
            "rank {me}: {got} peer completions from rank {src}, expected exactly {want}"
        );
    }
    // The routes this rank's transfers took, e.g. "direct+conduit".
    let mut routes: Vec<&str> = (0..n)
        .map(|r| match gex::vis::route(r) {
            Route::Direct => "direct",
            Route::Conduit => "conduit",
            Route::ActiveMessages => "am",
        })
        .collect();
    routes.sort();
    routes.dedup();
    let path = routes.join("+");
    job.barrier();
    println!("test-vis: rank {me} of {n}: {} modelled operations", t.ops);
    println!("test-vis: rank {me} of {n}: all checks passed ({path} path)");
}
