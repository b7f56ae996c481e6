//! The reduction table: what every (data type, operator) pair computes,
//! as pure functions over byte vectors (no communication).
//!
//! Every combination follows the spec's user-function convention,
//! `y[i] = x[i] (+) y[i]`: `x` holds the left operands (lower ranks), `y`
//! the right operands and the result. Integers wrap; floating-point MIN and
//! MAX are IEEE minNum/maxNum (`f64::min`/`max`: a quiet NaN loses to a
//! number). Elements are read and written with native byte order and no
//! alignment requirement, so buffers of any alignment work.
//!
//! Layer: base (public: the operators of every reduction). Uses the tree
//! shapes in its tests only.

use std::sync::Arc;

use gex_types::{Dt, Error, Op, Result};

/// A user-defined reduction operator (`gex_Coll_ReduceFn_t`):
/// `f(x, y, count)` must set `y[i] = x[i] (+) y[i]` for the `count`
/// elements of the two byte slices (each `count * dt_sz` bytes). Client
/// data is whatever the closure captures.
///
/// It may be called any number of times, with any `count`, from any
/// thread that polls (inside AM handlers), concurrently with itself; it
/// must not communicate or wait for communication.
pub type UserReduceFn = Arc<dyn Fn(&[u8], &mut [u8], usize) + Send + Sync>;

/// The operator of a reduction: a built-in `GEX_OP_*`, or a user function
/// (`GEX_OP_USER`, associative and commutative; `GEX_OP_USER_NC`,
/// associative only: the result then combines contributions in rank order).
#[derive(Clone)]
pub enum ReduceOp {
    /// A built-in opcode valid for reductions (`Op::valid_for_reduction`):
    /// ADD, MULT, MIN, MAX (every built-in type), AND, OR, XOR (integers).
    Builtin(Op),
    /// `GEX_OP_USER`.
    User(UserReduceFn),
    /// `GEX_OP_USER_NC`.
    UserNc(UserReduceFn),
}

impl std::fmt::Debug for ReduceOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.op().name())
    }
}

impl From<Op> for ReduceOp {
    fn from(op: Op) -> Self {
        ReduceOp::Builtin(op)
    }
}

impl ReduceOp {
    /// `GEX_OP_USER` with `f`.
    pub fn user(f: impl Fn(&[u8], &mut [u8], usize) + Send + Sync + 'static) -> Self {
        ReduceOp::User(Arc::new(f))
    }

    /// `GEX_OP_USER_NC` with `f`.
    pub fn user_nc(f: impl Fn(&[u8], &mut [u8], usize) + Send + Sync + 'static) -> Self {
        ReduceOp::UserNc(Arc::new(f))
    }

    /// The opcode this operator stands for.
    pub fn op(&self) -> Op {
        match self {
            ReduceOp::Builtin(op) => *op,
            ReduceOp::User(_) => Op::User,
            ReduceOp::UserNc(_) => Op::UserNc,
        }
    }

    /// Whether the operator is declared commutative.
    pub fn is_commutative(&self) -> bool {
        !matches!(self, ReduceOp::UserNc(_))
    }
}

/// A built-in element type of a reduction.
pub trait Elem: Copy + Send + Sync + 'static + sealed::Sealed {
    /// Its `GEX_DT_*`.
    const DT: Dt;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! elem {
    ($($t:ty => $dt:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Elem for $t {
            const DT: Dt = Dt::$dt;
        }
    )*};
}
elem!(i32 => I32, u32 => U32, i64 => I64, u64 => U64, f32 => Flt, f64 => Dbl);

/// The bytes of a slice of built-in elements.
pub fn as_bytes<T: Elem>(s: &[T]) -> &[u8] {
    // SAFETY: every `Elem` is a plain integer or float with no padding, so
    // its memory is `size_of_val(s)` initialised bytes; the borrow is
    // carried over.
    unsafe { std::slice::from_raw_parts(s.as_ptr() as *const u8, std::mem::size_of_val(s)) }
}

/// The bytes of a mutable slice of built-in elements.
pub fn as_bytes_mut<T: Elem>(s: &mut [T]) -> &mut [u8] {
    // SAFETY: as in `as_bytes`; moreover every bit pattern is a valid
    // integer or float, so any bytes written through the view leave valid
    // elements. The exclusive borrow is carried over.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr() as *mut u8, std::mem::size_of_val(s)) }
}

/// Checks `(dt, dt_sz, op)` of a reduction: the operator must be valid for
/// the type, `dt_sz` must be the built-in type's size (any non-zero size
/// for `Dt::User`), and user opcodes must come with a function.
pub fn validate(call: &str, dt: Dt, dt_sz: usize, op: &ReduceOp) -> Result<()> {
    if let ReduceOp::Builtin(o @ (Op::User | Op::UserNc)) = op {
        return Err(Error::bad_arg(format!(
            "{call}: {} needs a function: pass ReduceOp::User / ReduceOp::UserNc",
            o.name()
        )));
    }
    let o = op.op();
    if !o.valid_for_reduction(dt) {
        return Err(Error::bad_arg(format!(
            "{call}: {} is not valid for reductions on {}",
            o.name(),
            dt.name()
        )));
    }
    match dt.size() {
        Some(s) if s != dt_sz => Err(Error::bad_arg(format!(
            "{call}: dt_sz {dt_sz} is not the size of {} ({s})",
            dt.name()
        ))),
        None if dt_sz == 0 => Err(Error::bad_arg(format!(
            "{call}: dt_sz must be non-zero for GEX_DT_USER"
        ))),
        _ => Ok(()),
    }
}

#[inline]
fn apply<const N: usize, T: Copy>(
    x: &[u8],
    y: &mut [u8],
    from: fn([u8; N]) -> T,
    to: fn(T) -> [u8; N],
    f: impl Fn(T, T) -> T,
) {
    for (xc, yc) in x.chunks_exact(N).zip(y.chunks_exact_mut(N)) {
        let a = from(xc.try_into().expect("chunk of N bytes"));
        let b = from((&*yc).try_into().expect("chunk of N bytes"));
        yc.copy_from_slice(&to(f(a, b)));
    }
}

macro_rules! int_ops {
    ($t:ty, $n:literal, $op:expr, $x:expr, $y:expr) => {{
        let (from, to): (fn([u8; $n]) -> $t, fn($t) -> [u8; $n]) =
            (<$t>::from_ne_bytes, <$t>::to_ne_bytes);
        match $op {
            Op::Add => apply($x, $y, from, to, |a: $t, b: $t| a.wrapping_add(b)),
            Op::Mult => apply($x, $y, from, to, |a: $t, b: $t| a.wrapping_mul(b)),
            Op::Min => apply($x, $y, from, to, |a: $t, b: $t| a.min(b)),
            Op::Max => apply($x, $y, from, to, |a: $t, b: $t| a.max(b)),
            Op::And => apply($x, $y, from, to, |a: $t, b: $t| a & b),
            Op::Or => apply($x, $y, from, to, |a: $t, b: $t| a | b),
            Op::Xor => apply($x, $y, from, to, |a: $t, b: $t| a ^ b),
            other => unreachable!("{} is not a reduction operator", other.name()),
        }
    }};
}

macro_rules! float_ops {
    ($t:ty, $n:literal, $op:expr, $x:expr, $y:expr) => {{
        let (from, to): (fn([u8; $n]) -> $t, fn($t) -> [u8; $n]) =
            (<$t>::from_ne_bytes, <$t>::to_ne_bytes);
        match $op {
            Op::Add => apply($x, $y, from, to, |a: $t, b: $t| a + b),
            Op::Mult => apply($x, $y, from, to, |a: $t, b: $t| a * b),
            Op::Min => apply($x, $y, from, to, |a: $t, b: $t| a.min(b)),
            Op::Max => apply($x, $y, from, to, |a: $t, b: $t| a.max(b)),
            other => unreachable!(
                "{} is not a floating-point reduction operator",
                other.name()
            ),
        }
    }};
}

/// `y[i] = x[i] (+) y[i]` for a built-in type and opcode (validated).
pub fn combine_builtin(dt: Dt, op: Op, x: &[u8], y: &mut [u8]) {
    debug_assert_eq!(x.len(), y.len());
    match dt {
        Dt::I32 => int_ops!(i32, 4, op, x, y),
        Dt::U32 => int_ops!(u32, 4, op, x, y),
        Dt::I64 => int_ops!(i64, 8, op, x, y),
        Dt::U64 => int_ops!(u64, 8, op, x, y),
        Dt::Flt => float_ops!(f32, 4, op, x, y),
        Dt::Dbl => float_ops!(f64, 8, op, x, y),
        Dt::User => unreachable!("GEX_DT_USER has no built-in operators"),
    }
}

/// `y[i] = x[i] (+) y[i]` over whole vectors of `dt_sz`-byte elements.
pub fn combine(dt: Dt, dt_sz: usize, op: &ReduceOp, x: &[u8], y: &mut [u8]) {
    debug_assert_eq!(x.len(), y.len());
    match op {
        ReduceOp::Builtin(o) => combine_builtin(dt, *o, x, y),
        ReduceOp::User(f) | ReduceOp::UserNc(f) => {
            if !y.is_empty() {
                f(x, y, y.len() / dt_sz)
            }
        }
    }
}

/// The sequential model of a reduction: the contributions of ranks
/// `0..n` combined left to right, `((c0 (+) c1) (+) c2) ...`.
pub fn reduce_sequential(dt: Dt, dt_sz: usize, op: &ReduceOp, inputs: &[&[u8]]) -> Vec<u8> {
    let mut acc = inputs.first().map(|s| s.to_vec()).unwrap_or_default();
    for next in &inputs[1.min(inputs.len())..] {
        let mut y = next.to_vec();
        combine(dt, dt_sz, op, &acc, &mut y);
        acc = y;
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{binomial_children, binomial_parent};
    use proptest::prelude::*;

    /// Every (dt, op) pair the spec allows for reductions.
    fn pairs() -> Vec<(Dt, Op)> {
        let mut v = Vec::new();
        for dt in Dt::BUILTIN {
            for op in Op::ALL {
                if op.valid_for_reduction(dt) && !matches!(op, Op::User | Op::UserNc) {
                    v.push((dt, op));
                }
            }
        }
        v
    }

    #[test]
    fn the_table_has_every_pair() {
        // 4 integer types x 7 ops + 2 float types x 4 ops.
        assert_eq!(pairs().len(), 4 * 7 + 2 * 4);
        for dt in Dt::BUILTIN {
            for op in Op::ALL {
                let r = validate("t", dt, dt.size().unwrap(), &ReduceOp::Builtin(op));
                let expect = op.valid_for_reduction(dt) && !matches!(op, Op::User | Op::UserNc);
                assert_eq!(r.is_ok(), expect, "{} {}", dt.name(), op.name());
            }
        }
        assert!(validate("t", Dt::I32, 8, &Op::Add.into()).is_err());
        assert!(validate("t", Dt::User, 0, &ReduceOp::user(|_, _, _| {})).is_err());
        assert!(validate("t", Dt::User, 13, &ReduceOp::user(|_, _, _| {})).is_ok());
        assert!(validate("t", Dt::User, 13, &Op::Add.into()).is_err());
        assert!(validate("t", Dt::U64, 8, &ReduceOp::user_nc(|_, _, _| {})).is_ok());
    }

    /// The typed model: one element of `dt` from 8 raw bytes, combined.
    fn model(dt: Dt, op: Op, a: u64, b: u64) -> u64 {
        macro_rules! int {
            ($t:ty) => {{
                let (a, b) = (a as $t, b as $t);
                (match op {
                    Op::Add => a.wrapping_add(b),
                    Op::Mult => a.wrapping_mul(b),
                    Op::Min => {
                        if a < b {
                            a
                        } else {
                            b
                        }
                    }
                    Op::Max => {
                        if a > b {
                            a
                        } else {
                            b
                        }
                    }
                    Op::And => a & b,
                    Op::Or => a | b,
                    Op::Xor => a ^ b,
                    _ => unreachable!(),
                }) as u64
            }};
        }
        macro_rules! float {
            ($t:ty, $bits:ty) => {{
                let (a, b) = (<$t>::from_bits(a as $bits), <$t>::from_bits(b as $bits));
                let r = match op {
                    Op::Add => a + b,
                    Op::Mult => a * b,
                    Op::Min => a.min(b),
                    Op::Max => a.max(b),
                    _ => unreachable!(),
                };
                r.to_bits() as u64
            }};
        }
        match dt {
            Dt::I32 => int!(i32) as u32 as u64,
            Dt::U32 => int!(u32),
            Dt::I64 => int!(i64),
            Dt::U64 => int!(u64),
            Dt::Flt => float!(f32, u32),
            Dt::Dbl => float!(f64, u64),
            Dt::User => unreachable!(),
        }
    }

    fn to_bytes(dt: Dt, v: &[u64]) -> Vec<u8> {
        let sz = dt.size().unwrap();
        v.iter()
            .flat_map(|x| x.to_ne_bytes()[..sz].to_vec())
            .collect()
    }

    fn canon(dt: Dt, x: u64) -> u64 {
        if dt.size() == Some(4) {
            x & 0xffff_ffff
        } else {
            x
        }
    }

    proptest! {
        /// Every (dt, op) pair, element-wise, against the typed model, for
        /// arbitrary bit patterns (NaNs included: compared as bits, with
        /// any NaN equal to any NaN).
        #[test]
        fn every_pair_matches_the_model(
            which in 0usize..36,
            xs in proptest::collection::vec(any::<u64>(), 0..20),
            ys in proptest::collection::vec(any::<u64>(), 0..20),
        ) {
            let (dt, op) = pairs()[which % pairs().len()];
            let n = xs.len().min(ys.len());
            let (xs, ys) = (&xs[..n], &ys[..n]);
            let x = to_bytes(dt, xs);
            let mut y = to_bytes(dt, ys);
            combine(dt, dt.size().unwrap(), &ReduceOp::Builtin(op), &x, &mut y);
            let sz = dt.size().unwrap();
            for i in 0..n {
                let mut got = [0u8; 8];
                got[..sz].copy_from_slice(&y[i * sz..(i + 1) * sz]);
                let got = u64::from_ne_bytes(got);
                let want = canon(dt, model(dt, op, xs[i], ys[i]));
                let nan = |v: u64| match dt {
                    Dt::Flt => f32::from_bits(v as u32).is_nan(),
                    Dt::Dbl => f64::from_bits(v).is_nan(),
                    _ => false,
                };
                prop_assert!(got == want || (nan(got) && nan(want)),
                    "{} {}: {:#x} (+) {:#x} = {:#x}, model {:#x}",
                    dt.name(), op.name(), xs[i], ys[i], got, want);
            }
        }

        /// A reduction over the binomial tree (children combined in
        /// increasing order after the node's own range) equals the
        /// sequential left fold, for a non-commutative operator: the
        /// composition of affine maps x -> a*x + b (mod 2^32).
        #[test]
        fn tree_order_is_rank_order(
            elems in proptest::collection::vec((any::<u32>(), any::<u32>()), 1..40),
        ) {
            let n = elems.len() as u32;
            let op = affine();
            let input = |r: u32| {
                let (a, b) = elems[r as usize];
                [a.to_ne_bytes(), b.to_ne_bytes()].concat()
            };
            fn reduce_subtree(v: u32, n: u32, op: &ReduceOp, input: &dyn Fn(u32) -> Vec<u8>) -> Vec<u8> {
                let mut acc = input(v);
                for c in binomial_children(v, n) {
                    assert_eq!(binomial_parent(c), Some(v));
                    let mut y = reduce_subtree(c, n, op, input);
                    combine(Dt::User, 8, op, &acc, &mut y);
                    acc = y;
                }
                acc
            }
            let tree = reduce_subtree(0, n, &op, &input);
            let inputs: Vec<Vec<u8>> = (0..n).map(input).collect();
            let refs: Vec<&[u8]> = inputs.iter().map(|v| &v[..]).collect();
            let seq = reduce_sequential(Dt::User, 8, &op, &refs);
            prop_assert_eq!(tree, seq);
        }
    }

    /// x -> a*x + b, elements (a, b) of two u32; `L (+) R` is "L then R".
    fn affine() -> ReduceOp {
        ReduceOp::user_nc(|x, y, count| {
            for i in 0..count {
                let rd = |s: &[u8], j: usize| u32::from_ne_bytes(s[j..j + 4].try_into().unwrap());
                let (al, bl) = (rd(x, 8 * i), rd(x, 8 * i + 4));
                let (ar, br) = (rd(y, 8 * i), rd(y, 8 * i + 4));
                let a = ar.wrapping_mul(al);
                let b = ar.wrapping_mul(bl).wrapping_add(br);
                y[8 * i..8 * i + 4].copy_from_slice(&a.to_ne_bytes());
                y[8 * i + 4..8 * i + 8].copy_from_slice(&b.to_ne_bytes());
            }
        })
    }

    #[test]
    fn affine_is_not_commutative() {
        let op = affine();
        let l = [2u32.to_ne_bytes(), 3u32.to_ne_bytes()].concat();
        let r = [5u32.to_ne_bytes(), 7u32.to_ne_bytes()].concat();
        let a = reduce_sequential(Dt::User, 8, &op, &[&l, &r]);
        let b = reduce_sequential(Dt::User, 8, &op, &[&r, &l]);
        assert_ne!(a, b);
    }

    #[test]
    fn typed_views() {
        let mut v = [1u64, 2, 3];
        assert_eq!(as_bytes(&v).len(), 24);
        as_bytes_mut(&mut v)[0] = 9;
        assert_eq!(
            v[0],
            if cfg!(target_endian = "little") {
                9
            } else {
                1 | 9 << 56
            }
        );
    }
}
