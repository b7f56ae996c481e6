//! The sequential model of remote atomics: the spec's C expressions for
//! each (type, operation), evaluated without atomics and written apart from
//! the library's code. test-ratomic checks every fetched value and every
//! final word against it; the simulated NIC ([`crate::simnic`]) uses it as
//! its arithmetic unit.

use gex::ratomic::AdType;
use gex::Op;

use crate::Rng;

/// A type of remote atomics with its model.
pub trait Model: AdType + PartialOrd {
    /// The type's name in the spec (`U64`, `DBL`, ...).
    const NAME: &'static str;

    /// The arithmetic and bitwise base operations (ADD, SUB, MULT, INC,
    /// DEC, AND, OR, XOR) on `v` with `o1`.
    fn arith(op: Op, v: Self, o1: Self) -> Self;

    /// A random operand, edge values included.
    fn random(rng: &mut Rng) -> Self;

    /// The value of a small count.
    fn from_u32(v: u32) -> Self;

    /// The value `op` (fetching or not) leaves at a target that held `v`.
    fn model(op: Op, v: Self, o1: Self, o2: Self) -> Self {
        match op.to_nonfetching().unwrap_or(op) {
            Op::Min => {
                if v < o1 {
                    v
                } else {
                    o1
                }
            }
            Op::Max => {
                if v > o1 {
                    v
                } else {
                    o1
                }
            }
            Op::Set => o1,
            Op::Get => v,
            // On bit patterns (for floats, as the spec permits).
            Op::Cas => {
                if Self::same(v, o1) {
                    o2
                } else {
                    v
                }
            }
            base => Self::arith(base, v, o1),
        }
    }

    /// Whether two values are the same bits (NaN equals itself, -0.0 is
    /// not 0.0).
    fn same(a: Self, b: Self) -> bool {
        a.to_bits() == b.to_bits()
    }
}

macro_rules! int_model {
    ($t:ty, $name:expr) => {
        impl Model for $t {
            const NAME: &'static str = $name;
            fn arith(op: Op, v: Self, o1: Self) -> Self {
                match op {
                    Op::Add => v.wrapping_add(o1),
                    Op::Sub => v.wrapping_sub(o1),
                    Op::Mult => v.wrapping_mul(o1),
                    Op::Inc => v.wrapping_add(1),
                    Op::Dec => v.wrapping_sub(1),
                    Op::And => v & o1,
                    Op::Or => v | o1,
                    Op::Xor => v ^ o1,
                    o => unreachable!("{o:?} on {}", $name),
                }
            }
            fn random(rng: &mut Rng) -> Self {
                match rng.below(4) {
                    0 => rng.below(8) as $t,
                    1 => <$t>::MAX.wrapping_sub(rng.below(4) as $t),
                    _ => rng.next_u64() as $t,
                }
            }
            fn from_u32(v: u32) -> Self {
                v as $t
            }
        }
    };
}

int_model!(i32, "I32");
int_model!(u32, "U32");
int_model!(i64, "I64");
int_model!(u64, "U64");

macro_rules! float_model {
    ($t:ty, $name:expr) => {
        impl Model for $t {
            const NAME: &'static str = $name;
            fn arith(op: Op, v: Self, o1: Self) -> Self {
                match op {
                    Op::Add => v + o1,
                    Op::Sub => v - o1,
                    Op::Mult => v * o1,
                    Op::Inc => v + 1.0,
                    Op::Dec => v - 1.0,
                    o => unreachable!("{o:?} on {}", $name),
                }
            }
            fn random(rng: &mut Rng) -> Self {
                const EDGE: [$t; 8] = [
                    <$t>::NAN,
                    -0.0,
                    0.0,
                    <$t>::INFINITY,
                    <$t>::NEG_INFINITY,
                    1.5,
                    -2.25,
                    <$t>::MAX,
                ];
                match rng.below(3) {
                    0 => EDGE[rng.below(8) as usize],
                    _ => (rng.below(2001) as $t - 1000.0) / 8.0,
                }
            }
            fn from_u32(v: u32) -> Self {
                v as $t
            }
        }
    };
}

float_model!(f32, "FLT");
float_model!(f64, "DBL");

/// `op` on the bits of a `dt` value (as the conduit interface carries
/// them) through the model: the new bits.
pub fn apply_bits(dt: gex::Dt, op: Op, old: u64, operands: [u64; 2]) -> u64 {
    fn via<T: Model>(op: Op, old: u64, o: [u64; 2]) -> u64 {
        T::model(
            op,
            T::from_bits(old),
            T::from_bits(o[0]),
            T::from_bits(o[1]),
        )
        .to_bits()
    }
    match dt {
        gex::Dt::I32 => via::<i32>(op, old, operands),
        gex::Dt::U32 => via::<u32>(op, old, operands),
        gex::Dt::I64 => via::<i64>(op, old, operands),
        gex::Dt::U64 => via::<u64>(op, old, operands),
        gex::Dt::Flt => via::<f32>(op, old, operands),
        gex::Dt::Dbl => via::<f64>(op, old, operands),
        other => unreachable!("{other:?} is not a type of remote atomics"),
    }
}
