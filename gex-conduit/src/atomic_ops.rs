//! The six data types of remote atomics and the operations on them as CPU
//! atomics: what gex-ratomic's direct route does on a mapped segment, what
//! the target of its Active Message does on its own segment, and what a
//! conduit that executes atomics for its peers in its protocol (the udp
//! conduit: [`crate::AtomicCapability::cpu_coherent`]) does at the target,
//! so that all of them are coherent (the same instructions on the same
//! word). It lives here, below both the layer and the conduits, so that
//! they share one definition.
//!
//! Integers use the hardware's fetch-and-op where there is one (ADD, SUB,
//! INC, DEC, AND, OR, XOR, MIN, MAX, SWAP, CAS) and a compare-exchange loop
//! for MULT; floats are compare-exchange loops over the bits, except SET,
//! GET, SWAP and (F)CAS, which act on the bits directly. Arithmetic wraps
//! for integers (C's rule for unsigned types; signed overflow, undefined in
//! C, wraps here). MIN and MAX follow the spec's C expressions exactly:
//! `MIN = (op0 < op1) ? op0 : op1`, `MAX = (op0 > op1) ? op0 : op1`, so
//! for floats a NaN on either side gives `op1`, and `MIN(-0.0, +0.0)` is
//! `+0.0` (the comparison says equal). (F)CAS on FLT/DBL compares bit
//! patterns, as the spec permits ("as if on integers of the same width"):
//! `-0.0` does not match `+0.0`, and a NaN matches the same NaN.

use std::sync::atomic::{fence, AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering};

use gex_types::{Dt, Flags, Op};

mod sealed {
    pub trait Sealed {}
}

/// A data type of remote atomics: `i32`, `u32`, `i64`, `u64`, `f32`, `f64`
/// (`GEX_DT_I32` ... `GEX_DT_DBL`). Sealed: these six only.
pub trait AdType:
    sealed::Sealed + Copy + PartialEq + Default + std::fmt::Debug + Send + Sync + 'static
{
    /// The type's `GEX_DT_*` code.
    const DT: Dt;

    /// The value's bits, zero-extended to 64 (how AM arguments carry it).
    fn to_bits(self) -> u64;

    /// The value from its bits (the low `size_of::<Self>()` bytes).
    fn from_bits(bits: u64) -> Self;

    /// Performs the base operation `op` (see [`base`]) on the value at `p`
    /// with the operands, returning the value before it (`op0`).
    ///
    /// # Safety
    /// `p` is aligned to `size_of::<Self>()` and valid for atomic reads and
    /// writes of that many bytes for the call.
    #[doc(hidden)]
    unsafe fn apply(p: *mut u8, op: Op, o1: Self, o2: Self) -> Self;
}

/// The operation a (possibly fetching) opcode performs on the target:
/// `FADD` -> `ADD`, `FCAS` -> `CAS`, ...; `SET`, `SWAP` and `GET` stay
/// (SET stores, SWAP exchanges). `None` for an opcode that is not an
/// atomic operation (`USER`, `USER_NC`).
#[inline(always)]
pub fn base(op: Op) -> Option<Op> {
    Some(match op {
        Op::Add | Op::Fadd => Op::Add,
        Op::Sub | Op::Fsub => Op::Sub,
        Op::Mult | Op::Fmult => Op::Mult,
        Op::Min | Op::Fmin => Op::Min,
        Op::Max | Op::Fmax => Op::Max,
        Op::Inc | Op::Finc => Op::Inc,
        Op::Dec | Op::Fdec => Op::Dec,
        Op::And | Op::Fand => Op::And,
        Op::Or | Op::For => Op::Or,
        Op::Xor | Op::Fxor => Op::Xor,
        Op::Cas | Op::Fcas => Op::Cas,
        Op::Set => Op::Set,
        Op::Swap => Op::Swap,
        Op::Get => Op::Get,
        Op::User | Op::UserNc => return None,
    })
}

/// Applies `f` to the value at `a` in a compare-exchange loop; returns the
/// value it replaced.
macro_rules! update {
    ($a:expr, $from:expr, $to:expr, $f:expr) => {
        match $a.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
            Some($to(($f)($from(b))))
        }) {
            Ok(v) | Err(v) => $from(v),
        }
    };
}

macro_rules! int_type {
    ($t:ty, $atomic:ty, $dt:expr) => {
        impl sealed::Sealed for $t {}
        impl AdType for $t {
            const DT: Dt = $dt;

            #[inline(always)]
            fn to_bits(self) -> u64 {
                self as u64 & (u64::MAX >> (64 - 8 * std::mem::size_of::<$t>()))
            }

            #[inline(always)]
            fn from_bits(bits: u64) -> Self {
                bits as $t
            }

            #[inline(always)]
            unsafe fn apply(p: *mut u8, op: Op, o1: Self, o2: Self) -> Self {
                // SAFETY: per the contract, `p` is aligned and valid for
                // atomic access of this width for the call.
                let a = unsafe { <$atomic>::from_ptr(p as *mut $t) };
                let r = Ordering::Relaxed;
                let id = |v: $t| v;
                match op {
                    Op::Add => a.fetch_add(o1, r),
                    Op::Sub => a.fetch_sub(o1, r),
                    Op::Inc => a.fetch_add(1, r),
                    Op::Dec => a.fetch_sub(1, r),
                    Op::And => a.fetch_and(o1, r),
                    Op::Or => a.fetch_or(o1, r),
                    Op::Xor => a.fetch_xor(o1, r),
                    Op::Min => a.fetch_min(o1, r),
                    Op::Max => a.fetch_max(o1, r),
                    Op::Mult => update!(a, id, id, |v: $t| v.wrapping_mul(o1)),
                    Op::Set => {
                        a.store(o1, r);
                        <$t>::default()
                    }
                    Op::Swap => a.swap(o1, r),
                    Op::Get => a.load(r),
                    Op::Cas => match a.compare_exchange(o1, o2, r, r) {
                        Ok(v) | Err(v) => v,
                    },
                    _ => unreachable!("apply takes base operations"),
                }
            }
        }
    };
}

int_type!(i32, AtomicI32, Dt::I32);
int_type!(u32, AtomicU32, Dt::U32);
int_type!(i64, AtomicI64, Dt::I64);
int_type!(u64, AtomicU64, Dt::U64);

macro_rules! float_type {
    ($t:ty, $bits:ty, $atomic:ty, $dt:expr) => {
        impl sealed::Sealed for $t {}
        impl AdType for $t {
            const DT: Dt = $dt;

            #[inline(always)]
            fn to_bits(self) -> u64 {
                u64::from(<$t>::to_bits(self))
            }

            #[inline(always)]
            fn from_bits(bits: u64) -> Self {
                <$t>::from_bits(bits as $bits)
            }

            #[inline(always)]
            unsafe fn apply(p: *mut u8, op: Op, o1: Self, o2: Self) -> Self {
                // SAFETY: per the contract, `p` is aligned and valid for
                // atomic access of this width for the call.
                let a = unsafe { <$atomic>::from_ptr(p as *mut $bits) };
                let r = Ordering::Relaxed;
                let (from, to) = (<$t>::from_bits, <$t>::to_bits);
                match op {
                    Op::Add => update!(a, from, to, |v: $t| v + o1),
                    Op::Sub => update!(a, from, to, |v: $t| v - o1),
                    Op::Mult => update!(a, from, to, |v: $t| v * o1),
                    Op::Inc => update!(a, from, to, |v: $t| v + 1.0),
                    Op::Dec => update!(a, from, to, |v: $t| v - 1.0),
                    Op::Min => update!(a, from, to, |v: $t| if v < o1 { v } else { o1 }),
                    Op::Max => update!(a, from, to, |v: $t| if v > o1 { v } else { o1 }),
                    Op::Set => {
                        a.store(to(o1), r);
                        <$t>::default()
                    }
                    Op::Swap => from(a.swap(to(o1), r)),
                    Op::Get => from(a.load(r)),
                    Op::Cas => match a.compare_exchange(to(o1), to(o2), r, r) {
                        Ok(v) | Err(v) => from(v),
                    },
                    _ => unreachable!("apply takes base operations valid for floats"),
                }
            }
        }
    };
}

float_type!(f32, u32, AtomicU32, Dt::Flt);
float_type!(f64, u64, AtomicU64, Dt::Dbl);

/// Performs `op` (any atomic opcode valid for `T`, checked by the caller)
/// on the `T` at `p` with the memory ordering `flags` ask for
/// (`AD_REL`: a release fence before, `AD_ACQ`: an acquire fence after;
/// fences around a relaxed atomic give the spec's release and acquire for
/// every operation, loads and stores included). Returns `op0`.
///
/// # Safety
/// As [`AdType::apply`].
#[inline(always)]
pub unsafe fn perform<T: AdType>(p: *mut u8, op: Op, o1: T, o2: T, flags: Flags) -> T {
    if flags.contains(Flags::AD_REL) {
        fence(Ordering::Release);
    }
    let b = base(op).expect("checked by the caller");
    // SAFETY: the caller's contract.
    let v = unsafe { T::apply(p, b, o1, o2) };
    if flags.contains(Flags::AD_ACQ) {
        fence(Ordering::Acquire);
    }
    v
}

/// [`perform`] for a data type known at run time (the target of an Active
/// Message): operands and result as bits. `dt` and `op` are valid and
/// agree (checked by the caller).
///
/// # Safety
/// `p` is aligned to `dt`'s size and valid for atomic access of it.
#[inline]
pub unsafe fn perform_dyn(p: *mut u8, dt: Dt, op: Op, o1: u64, o2: u64, flags: Flags) -> u64 {
    fn go<T: AdType>(p: *mut u8, op: Op, o1: u64, o2: u64, flags: Flags) -> u64 {
        // SAFETY: `perform_dyn`'s contract, for `T::DT == dt`.
        unsafe { perform::<T>(p, op, T::from_bits(o1), T::from_bits(o2), flags) }.to_bits()
    }
    match dt {
        Dt::I32 => go::<i32>(p, op, o1, o2, flags),
        Dt::U32 => go::<u32>(p, op, o1, o2, flags),
        Dt::I64 => go::<i64>(p, op, o1, o2, flags),
        Dt::U64 => go::<u64>(p, op, o1, o2, flags),
        Dt::Flt => go::<f32>(p, op, o1, o2, flags),
        Dt::Dbl => go::<f64>(p, op, o1, o2, flags),
        Dt::User => unreachable!("checked by the caller"),
    }
}

/// The data type with code `bits`, if it is one of the six.
pub fn dt_from_bits(bits: u32) -> Option<Dt> {
    Dt::BUILTIN.into_iter().find(|d| *d as u32 == bits)
}

/// The opcode with code `bits`, if it is one.
pub fn op_from_bits(bits: u64) -> Option<Op> {
    Op::ALL.into_iter().find(|o| *o as u64 == bits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The spec's expressions, evaluated in plain (non-atomic) arithmetic:
    /// the sequential model the CPU atomics must agree with.
    fn model_int(op: Op, v: i128, o1: i128, o2: i128, bits: u32, signed: bool) -> i128 {
        let m = (1i128 << bits) - 1;
        let wrap = |x: i128| {
            let x = x & m;
            if signed && x >> (bits - 1) != 0 {
                x - (1i128 << bits)
            } else {
                x
            }
        };
        wrap(match op {
            Op::Add => v + o1,
            Op::Sub => v - o1,
            Op::Mult => v.wrapping_mul(o1),
            Op::Inc => v + 1,
            Op::Dec => v - 1,
            Op::And => v & o1,
            Op::Or => v | o1,
            Op::Xor => v ^ o1,
            Op::Min => v.min(o1),
            Op::Max => v.max(o1),
            Op::Set | Op::Swap => o1,
            Op::Get => v,
            Op::Cas => {
                if v == o1 {
                    o2
                } else {
                    v
                }
            }
            _ => unreachable!(),
        })
    }

    const BASE_OPS: [Op; 14] = [
        Op::Add,
        Op::Sub,
        Op::Mult,
        Op::Inc,
        Op::Dec,
        Op::And,
        Op::Or,
        Op::Xor,
        Op::Min,
        Op::Max,
        Op::Set,
        Op::Swap,
        Op::Get,
        Op::Cas,
    ];

    /// (the value fetched, the value after); SET fetches nothing.
    fn run<T: AdType>(v: T, op: Op, o1: T, o2: T) -> (T, T) {
        let mut cell = [0u64; 1];
        let p = cell.as_mut_ptr() as *mut u8;
        // SAFETY: `cell` is 8-byte aligned and at least as large as `T`.
        unsafe { (p as *mut T).write(v) };
        // SAFETY: as above; no other access meanwhile.
        let old = unsafe { perform::<T>(p, op, o1, o2, Flags::AD_ACQ | Flags::AD_REL) };
        // SAFETY: as above.
        (old, unsafe { (p as *const T).read() })
    }

    proptest! {
        #[test]
        fn integer_ops_match_the_model(i in 0usize..14, v: i64, o1: i64, o2: i64, eq: bool) {
            let op = BASE_OPS[i];
            let o1 = if eq && op == Op::Cas { v } else { o1 };
            let (old, new) = run::<i64>(v, op, o1, o2);
            prop_assert!(op == Op::Set || old == v);
            prop_assert_eq!(new as i128, model_int(op, v as i128, o1 as i128, o2 as i128, 64, true));
            let (v, o1, o2) = (v as u32, o1 as u32, o2 as u32);
            let (old, new) = run::<u32>(v, op, o1, o2);
            prop_assert!(op == Op::Set || old == v);
            prop_assert_eq!(new as i128, model_int(op, v as i128, o1 as i128, o2 as i128, 32, false));
            let (v, o1, o2) = (v as i32, o1 as i32, o2 as i32);
            let (old, new) = run::<i32>(v, op, o1, o2);
            prop_assert!(op == Op::Set || old == v);
            prop_assert_eq!(new as i128, model_int(op, v as i128, o1 as i128, o2 as i128, 32, true));
            let (v, o1, o2) = (v as u32 as u64 | (v as u64) << 40, o1 as u32 as u64, o2 as u64);
            let (old, new) = run::<u64>(v, op, o1, o2);
            prop_assert!(op == Op::Set || old == v);
            prop_assert_eq!(new as i128, model_int(op, v as i128, o1 as i128, o2 as i128, 64, false));
        }

        #[test]
        fn float_ops_follow_the_c_expressions(i in 0usize..14, v: f64, o1: f64, o2: f64) {
            let op = BASE_OPS[i];
            if matches!(op, Op::And | Op::Or | Op::Xor) {
                return Ok(());
            }
            let want = |v: f64, o1: f64, o2: f64| match op {
                Op::Add => v + o1,
                Op::Sub => v - o1,
                Op::Mult => v * o1,
                Op::Inc => v + 1.0,
                Op::Dec => v - 1.0,
                Op::Min => if v < o1 { v } else { o1 },
                Op::Max => if v > o1 { v } else { o1 },
                Op::Set | Op::Swap => o1,
                Op::Get => v,
                Op::Cas => if v.to_bits() == o1.to_bits() { o2 } else { v },
                _ => unreachable!(),
            };
            let (old, new) = run::<f64>(v, op, o1, o2);
            prop_assert!(op == Op::Set || old.to_bits() == v.to_bits());
            prop_assert_eq!(new.to_bits(), want(v, o1, o2).to_bits());
            let (v, o1, o2) = (v as f32, o1 as f32, o2 as f32);
            let (old, new) = run::<f32>(v, op, o1, o2);
            prop_assert!(op == Op::Set || old.to_bits() == v.to_bits());
            prop_assert_eq!(new.to_bits(), (want(v as f64, o1 as f64, o2 as f64) as f32).to_bits());
        }
    }

    proptest! {
        /// A random sequence of operations on one word, fetched values and
        /// the final word against the model.
        #[test]
        fn random_sequences_match_the_model(
            start: u64,
            seq in proptest::collection::vec((0usize..14, any::<u64>(), any::<u64>()), 1..64),
        ) {
            let mut cell = [start];
            let p = cell.as_mut_ptr() as *mut u8;
            let mut model = start;
            for (i, o1, o2) in seq {
                let op = BASE_OPS[i];
                // SAFETY: `cell` is an aligned u64, touched by nothing else.
                let old = unsafe { perform::<u64>(p, op, o1, o2, Flags::empty()) };
                if op != Op::Set {
                    prop_assert_eq!(old, model, "{:?}", op);
                }
                model = model_int(op, model as i128, o1 as i128, o2 as i128, 64, false) as u64;
            }
            prop_assert_eq!(cell[0], model);
        }
    }

    #[test]
    fn float_min_max_edge_values() {
        let nan = f64::NAN;
        // MIN(op0, op1) = op0 < op1 ? op0 : op1
        assert_eq!(
            run::<f64>(-0.0, Op::Min, 0.0, 0.0).1.to_bits(),
            0.0f64.to_bits()
        );
        assert_eq!(
            run::<f64>(0.0, Op::Min, -0.0, 0.0).1.to_bits(),
            (-0.0f64).to_bits()
        );
        assert!(run::<f64>(1.0, Op::Min, nan, 0.0).1.is_nan());
        assert_eq!(run::<f64>(nan, Op::Min, 1.0, 0.0).1, 1.0);
        assert_eq!(run::<f64>(f64::NEG_INFINITY, Op::Max, 2.0, 0.0).1, 2.0);
        assert_eq!(
            run::<f32>(f32::INFINITY, Op::Max, 2.0, 0.0).1,
            f32::INFINITY
        );
        // CAS on bits: -0.0 does not match +0.0; a NaN matches itself.
        assert_eq!(
            run::<f64>(-0.0, Op::Cas, 0.0, 5.0).1.to_bits(),
            (-0.0f64).to_bits()
        );
        assert_eq!(run::<f64>(nan, Op::Cas, nan, 5.0).1, 5.0);
    }

    #[test]
    fn codes_round_trip_and_bits_are_zero_extended() {
        for dt in Dt::BUILTIN {
            assert_eq!(dt_from_bits(dt as u32), Some(dt));
        }
        assert_eq!(dt_from_bits(Dt::User as u32), None);
        assert_eq!(dt_from_bits(3), None);
        for op in Op::ALL {
            assert_eq!(op_from_bits(op as u64), Some(op));
        }
        assert_eq!(op_from_bits(3), None);
        assert_eq!((-1i32).to_bits(), 0xffff_ffff);
        assert_eq!(<i32 as AdType>::from_bits(0xffff_ffff), -1);
        assert_eq!(AdType::to_bits(-1.5f32), u64::from((-1.5f32).to_bits()));
        assert_eq!(base(Op::Fcas), Some(Op::Cas));
        assert_eq!(base(Op::User), None);
    }
}
