//! Data types (`gex_DT_t`) and operation codes (`gex_OP_t`) for remote
//! atomics and reductions.

use bitflags::bitflags;

/// A data type code (`GEX_DT_*`). Every value is a distinct non-zero bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Dt {
    /// `int32_t`
    I32 = 1 << 0,
    /// `uint32_t`
    U32 = 1 << 1,
    /// `int64_t`
    I64 = 1 << 2,
    /// `uint64_t`
    U64 = 1 << 3,
    /// `float`
    Flt = 1 << 4,
    /// `double`
    Dbl = 1 << 5,
    /// An opaque user-defined type (reductions only).
    User = 1 << 6,
}

impl Dt {
    /// Every built-in data type.
    pub const BUILTIN: [Dt; 6] = [Dt::I32, Dt::U32, Dt::I64, Dt::U64, Dt::Flt, Dt::Dbl];

    /// Size in bytes of a built-in type; `None` for [`Dt::User`].
    pub fn size(self) -> Option<usize> {
        match self {
            Dt::I32 | Dt::U32 | Dt::Flt => Some(4),
            Dt::I64 | Dt::U64 | Dt::Dbl => Some(8),
            Dt::User => None,
        }
    }

    /// Whether this is a built-in integer type.
    pub fn is_integer(self) -> bool {
        matches!(self, Dt::I32 | Dt::U32 | Dt::I64 | Dt::U64)
    }

    /// Whether this is a built-in floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, Dt::Flt | Dt::Dbl)
    }

    /// The spec's name, e.g. `GEX_DT_U64`.
    pub fn name(self) -> &'static str {
        match self {
            Dt::I32 => "GEX_DT_I32",
            Dt::U32 => "GEX_DT_U32",
            Dt::I64 => "GEX_DT_I64",
            Dt::U64 => "GEX_DT_U64",
            Dt::Flt => "GEX_DT_FLT",
            Dt::Dbl => "GEX_DT_DBL",
            Dt::User => "GEX_DT_USER",
        }
    }
}

bitflags! {
    /// A set of operation codes, as an atomic domain is created with.
    /// Every opcode is a distinct non-zero bit (the spec's guarantee).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct Ops: u64 {
        #[allow(missing_docs)] const ADD = 1 << 0;
        #[allow(missing_docs)] const MULT = 1 << 1;
        #[allow(missing_docs)] const MIN = 1 << 2;
        #[allow(missing_docs)] const MAX = 1 << 3;
        #[allow(missing_docs)] const SUB = 1 << 4;
        #[allow(missing_docs)] const INC = 1 << 5;
        #[allow(missing_docs)] const DEC = 1 << 6;
        #[allow(missing_docs)] const AND = 1 << 7;
        #[allow(missing_docs)] const OR = 1 << 8;
        #[allow(missing_docs)] const XOR = 1 << 9;
        #[allow(missing_docs)] const FADD = 1 << 10;
        #[allow(missing_docs)] const FMULT = 1 << 11;
        #[allow(missing_docs)] const FMIN = 1 << 12;
        #[allow(missing_docs)] const FMAX = 1 << 13;
        #[allow(missing_docs)] const FSUB = 1 << 14;
        #[allow(missing_docs)] const FINC = 1 << 15;
        #[allow(missing_docs)] const FDEC = 1 << 16;
        #[allow(missing_docs)] const FAND = 1 << 17;
        #[allow(missing_docs)] const FOR = 1 << 18;
        #[allow(missing_docs)] const FXOR = 1 << 19;
        #[allow(missing_docs)] const SET = 1 << 20;
        #[allow(missing_docs)] const CAS = 1 << 21;
        #[allow(missing_docs)] const GET = 1 << 22;
        #[allow(missing_docs)] const SWAP = 1 << 23;
        #[allow(missing_docs)] const FCAS = 1 << 24;
        #[allow(missing_docs)] const USER = 1 << 25;
        #[allow(missing_docs)] const USER_NC = 1 << 26;
    }
}

/// One operation code (`GEX_OP_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u64)]
#[allow(missing_docs)]
pub enum Op {
    Add = Ops::ADD.bits(),
    Mult = Ops::MULT.bits(),
    Min = Ops::MIN.bits(),
    Max = Ops::MAX.bits(),
    Sub = Ops::SUB.bits(),
    Inc = Ops::INC.bits(),
    Dec = Ops::DEC.bits(),
    And = Ops::AND.bits(),
    Or = Ops::OR.bits(),
    Xor = Ops::XOR.bits(),
    Fadd = Ops::FADD.bits(),
    Fmult = Ops::FMULT.bits(),
    Fmin = Ops::FMIN.bits(),
    Fmax = Ops::FMAX.bits(),
    Fsub = Ops::FSUB.bits(),
    Finc = Ops::FINC.bits(),
    Fdec = Ops::FDEC.bits(),
    Fand = Ops::FAND.bits(),
    For = Ops::FOR.bits(),
    Fxor = Ops::FXOR.bits(),
    Set = Ops::SET.bits(),
    Cas = Ops::CAS.bits(),
    Get = Ops::GET.bits(),
    Swap = Ops::SWAP.bits(),
    Fcas = Ops::FCAS.bits(),
    User = Ops::USER.bits(),
    UserNc = Ops::USER_NC.bits(),
}

/// (non-fetching, fetching) pairs, the table behind the conversions.
const FETCH_PAIRS: [(Op, Op); 12] = [
    (Op::Add, Op::Fadd),
    (Op::Mult, Op::Fmult),
    (Op::Min, Op::Fmin),
    (Op::Max, Op::Fmax),
    (Op::Sub, Op::Fsub),
    (Op::Inc, Op::Finc),
    (Op::Dec, Op::Fdec),
    (Op::And, Op::Fand),
    (Op::Or, Op::For),
    (Op::Xor, Op::Fxor),
    (Op::Set, Op::Swap),
    (Op::Cas, Op::Fcas),
];

impl Op {
    /// Every opcode.
    pub const ALL: [Op; 27] = [
        Op::Add,
        Op::Mult,
        Op::Min,
        Op::Max,
        Op::Sub,
        Op::Inc,
        Op::Dec,
        Op::And,
        Op::Or,
        Op::Xor,
        Op::Fadd,
        Op::Fmult,
        Op::Fmin,
        Op::Fmax,
        Op::Fsub,
        Op::Finc,
        Op::Fdec,
        Op::Fand,
        Op::For,
        Op::Fxor,
        Op::Set,
        Op::Cas,
        Op::Get,
        Op::Swap,
        Op::Fcas,
        Op::User,
        Op::UserNc,
    ];

    /// This opcode as a one-element set.
    #[inline]
    pub fn as_set(self) -> Ops {
        Ops::from_bits_retain(self as u64)
    }

    /// `GEX_OP_TO_FETCHING`: the fetching counterpart of a non-fetching
    /// arithmetic or bit-wise opcode, `SET` (-> `SWAP`) or `CAS` (-> `FCAS`).
    /// `None` for any other opcode.
    pub fn to_fetching(self) -> Option<Op> {
        FETCH_PAIRS.iter().find(|p| p.0 == self).map(|p| p.1)
    }

    /// `GEX_OP_TO_NONFETCHING`: the inverse of [`Op::to_fetching`].
    pub fn to_nonfetching(self) -> Option<Op> {
        FETCH_PAIRS.iter().find(|p| p.1 == self).map(|p| p.0)
    }

    /// Whether the opcode fetches the target's prior value (one mask test:
    /// it is on every remote atomic's path).
    #[inline]
    pub fn is_fetching(self) -> bool {
        const FETCHING: Ops = Ops::FADD
            .union(Ops::FMULT)
            .union(Ops::FMIN)
            .union(Ops::FMAX)
            .union(Ops::FSUB)
            .union(Ops::FINC)
            .union(Ops::FDEC)
            .union(Ops::FAND)
            .union(Ops::FOR)
            .union(Ops::FXOR)
            .union(Ops::SWAP)
            .union(Ops::FCAS)
            .union(Ops::GET);
        FETCHING.intersects(self.as_set())
    }

    /// Number of operands (`op1`, `op2`) an atomic with this opcode takes.
    #[inline]
    pub fn operand_count(self) -> usize {
        match self {
            Op::Inc | Op::Dec | Op::Finc | Op::Fdec | Op::Get => 0,
            Op::Cas | Op::Fcas => 2,
            _ => 1,
        }
    }

    /// Whether the opcode is valid for remote atomics on `dt`.
    #[inline]
    pub fn valid_for_atomic(self, dt: Dt) -> bool {
        if dt == Dt::User || matches!(self, Op::User | Op::UserNc) {
            return false;
        }
        let bitwise = matches!(
            self,
            Op::And | Op::Or | Op::Xor | Op::Fand | Op::For | Op::Fxor
        );
        !bitwise || dt.is_integer()
    }

    /// Whether the opcode is valid for reductions on `dt`.
    pub fn valid_for_reduction(self, dt: Dt) -> bool {
        match self {
            Op::User | Op::UserNc => true,
            Op::Add | Op::Mult | Op::Min | Op::Max => dt != Dt::User,
            Op::And | Op::Or | Op::Xor => dt.is_integer(),
            _ => false,
        }
    }

    /// The spec's name, e.g. `GEX_OP_FADD`.
    pub fn name(self) -> &'static str {
        match self {
            Op::Add => "GEX_OP_ADD",
            Op::Mult => "GEX_OP_MULT",
            Op::Min => "GEX_OP_MIN",
            Op::Max => "GEX_OP_MAX",
            Op::Sub => "GEX_OP_SUB",
            Op::Inc => "GEX_OP_INC",
            Op::Dec => "GEX_OP_DEC",
            Op::And => "GEX_OP_AND",
            Op::Or => "GEX_OP_OR",
            Op::Xor => "GEX_OP_XOR",
            Op::Fadd => "GEX_OP_FADD",
            Op::Fmult => "GEX_OP_FMULT",
            Op::Fmin => "GEX_OP_FMIN",
            Op::Fmax => "GEX_OP_FMAX",
            Op::Fsub => "GEX_OP_FSUB",
            Op::Finc => "GEX_OP_FINC",
            Op::Fdec => "GEX_OP_FDEC",
            Op::Fand => "GEX_OP_FAND",
            Op::For => "GEX_OP_FOR",
            Op::Fxor => "GEX_OP_FXOR",
            Op::Set => "GEX_OP_SET",
            Op::Cas => "GEX_OP_CAS",
            Op::Get => "GEX_OP_GET",
            Op::Swap => "GEX_OP_SWAP",
            Op::Fcas => "GEX_OP_FCAS",
            Op::User => "GEX_OP_USER",
            Op::UserNc => "GEX_OP_USER_NC",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn opcodes_are_distinct_bits() {
        let mut seen = 0u64;
        for op in Op::ALL {
            let b = op as u64;
            assert_eq!(b.count_ones(), 1, "{}", op.name());
            assert_eq!(seen & b, 0, "{}", op.name());
            seen |= b;
        }
        assert_eq!(seen, Ops::all().bits());
    }

    #[test]
    fn fetching_conversions_follow_the_spec() {
        assert_eq!(Op::Set.to_fetching(), Some(Op::Swap));
        assert_eq!(Op::Swap.to_nonfetching(), Some(Op::Set));
        assert_eq!(Op::Cas.to_fetching(), Some(Op::Fcas));
        assert_eq!(Op::Add.to_fetching(), Some(Op::Fadd));
        assert_eq!(Op::Fxor.to_nonfetching(), Some(Op::Xor));
        assert_eq!(Op::Get.to_fetching(), None);
        assert_eq!(Op::User.to_fetching(), None);
        assert!(Op::Get.is_fetching());
        assert!(!Op::Set.is_fetching());
        // The mask is the table: the fetching half of every pair, and GET.
        for op in Op::ALL {
            assert_eq!(
                op.is_fetching(),
                op.to_nonfetching().is_some() || op == Op::Get,
                "{op:?}"
            );
        }
    }

    #[test]
    fn validity_tables() {
        assert!(Op::Add.valid_for_reduction(Dt::Dbl));
        assert!(!Op::Sub.valid_for_reduction(Dt::I32));
        assert!(!Op::And.valid_for_reduction(Dt::Flt));
        assert!(Op::Xor.valid_for_reduction(Dt::U64));
        assert!(Op::User.valid_for_reduction(Dt::User));
        assert!(!Op::Add.valid_for_reduction(Dt::User));
        assert!(Op::Fsub.valid_for_atomic(Dt::Flt));
        assert!(!Op::Fand.valid_for_atomic(Dt::Dbl));
        assert!(!Op::User.valid_for_atomic(Dt::U32));
    }

    #[test]
    fn dt_bits_distinct() {
        let mut seen = 0u32;
        for dt in Dt::BUILTIN.iter().copied().chain([Dt::User]) {
            assert_eq!((dt as u32).count_ones(), 1);
            assert_eq!(seen & dt as u32, 0);
            seen |= dt as u32;
        }
    }

    proptest! {
        #[test]
        fn conversions_are_inverse(i in 0usize..Op::ALL.len()) {
            let op = Op::ALL[i];
            if let Some(f) = op.to_fetching() {
                prop_assert_eq!(f.to_nonfetching(), Some(op));
                prop_assert!(f.is_fetching());
                prop_assert!(!op.is_fetching());
            }
            if let Some(n) = op.to_nonfetching() {
                prop_assert_eq!(n.to_fetching(), Some(op));
            }
        }
    }
}
