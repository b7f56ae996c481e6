//! Plain types shared by every layer of gex, the Rust implementation of the
//! GASNet-EX communication API (spec v0.17).
//!
//! Nothing here communicates: these are the ranks, flags, event categories,
//! data types, opcodes, token-info masks, AM index and argument types, memory
//! vectors, constants and the error type that the upper layers share.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
mod flags;
mod ops;

pub use error::{Error, ErrorKind, Result};
pub use flags::{Ec, EpCapabilities, Flags, Ti};
pub use ops::{Dt, Op, Ops};

/// A position within, or the size of, an ordered set such as a team
/// (`gex_Rank_t`).
pub type Rank = u32;

/// "Not a rank" (`GEX_RANK_INVALID`): larger than any valid rank.
pub const RANK_INVALID: Rank = Rank::MAX;

/// An AM handler index (`gex_AM_Index_t`).
pub type AmIndex = u8;

/// A client-defined AM handler argument (`gex_AM_Arg_t`).
pub type AmArg = i32;

/// The widest scalar an RMA value call moves (`gex_RMA_Value_t`).
pub type RmaValue = u64;

/// The endpoint index within a process (`gex_EP_Index_t`).
pub type EpIndex = u32;

/// Minimum fixed index for client AM handler registration
/// (`GEX_AM_INDEX_BASE`). Indices below it are reserved to the library.
pub const AM_INDEX_BASE: AmIndex = 128;

/// Maximum number of AM handler arguments (`gex_AM_MaxArgs()`).
pub const AM_MAX_ARGS: usize = 16;

/// Every payload limit query returns at least this many bytes.
pub const AM_MIN_PAYLOAD_LIMIT: usize = 512;

/// Maximum number of endpoints per client in each process (`GASNET_MAXEPS`):
/// the primordial endpoint (index 0) and up to 31 made by `gex_EP_Create`
/// (indices 1 to 31, in order of creation). A power of two at most 256, so
/// that an index travels in one byte of an AM header and one comparison
/// checks two indices (`(a | b) < MAX_EPS`).
pub const MAX_EPS: usize = 32;

const _: () = assert!(MAX_EPS.is_power_of_two() && MAX_EPS <= 256);

/// Specification version implemented (major, minor).
pub const SPEC_VERSION: (u32, u32) = (0, 17);

/// A (rank, endpoint index) pair (`gex_EP_Location_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EpLocation {
    /// The jobrank of the process, or a team rank (see `RANK_IS_JOBRANK`).
    pub rank: Rank,
    /// The endpoint index in that process.
    pub ep_index: EpIndex,
}

/// One entry of a neighbourhood or host table (`gex_RankInfo_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RankInfo {
    /// The job rank of the member.
    pub jobrank: Rank,
}

/// A tuple of memory address and length (`gex_Memvec_t`).
///
/// The address is kept as an integer: a memvec may describe memory of
/// another process, which this process must never dereference directly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Memvec {
    /// Start address (or offset, with the SEG_OFFSET flags).
    pub addr: usize,
    /// Length in bytes.
    pub len: usize,
}

impl Memvec {
    /// A memvec over `len` bytes at `addr`.
    pub const fn new(addr: usize, len: usize) -> Self {
        Memvec { addr, len }
    }

    /// One past the last byte, or `None` if the range wraps the address space.
    pub fn end(&self) -> Option<usize> {
        self.addr.checked_add(self.len)
    }
}

/// The category of an Active Message: what it carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum AmCategory {
    /// Arguments only.
    Short = 0,
    /// Arguments and a payload delivered to a temporary buffer.
    Medium = 1,
    /// Arguments and a payload delivered into the target's bound segment.
    Long = 2,
}

impl AmCategory {
    /// The category from its wire encoding.
    pub fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(AmCategory::Short),
            1 => Some(AmCategory::Medium),
            2 => Some(AmCategory::Long),
            _ => None,
        }
    }

    /// Upper-case name as used in the spec (`Short`, `Medium`, `Long`).
    pub fn name(self) -> &'static str {
        match self {
            AmCategory::Short => "Short",
            AmCategory::Medium => "Medium",
            AmCategory::Long => "Long",
        }
    }
}

/// Checks a client name against the spec's pattern `[A-Z][A-Z0-9_]+`.
pub fn valid_client_name(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() >= 2
        && b[0].is_ascii_uppercase()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_names() {
        assert!(valid_client_name("GEX"));
        assert!(valid_client_name("MY_CLIENT_2"));
        assert!(!valid_client_name("G"));
        assert!(!valid_client_name(""));
        assert!(!valid_client_name("gex"));
        assert!(!valid_client_name("1ABC"));
        assert!(!valid_client_name("_ABC"));
        assert!(!valid_client_name("AB-C"));
        assert!(!valid_client_name("ABc"));
    }

    #[test]
    fn memvec_end() {
        assert_eq!(Memvec::new(10, 5).end(), Some(15));
        assert_eq!(Memvec::new(usize::MAX, 1).end(), None);
    }

    #[test]
    fn categories_round_trip() {
        for c in [AmCategory::Short, AmCategory::Medium, AmCategory::Long] {
            assert_eq!(AmCategory::from_u8(c as u8), Some(c));
        }
        assert_eq!(AmCategory::from_u8(3), None);
    }
}
