//! The local side of a transfer: a Rust slice anywhere in memory, or a range
//! of the local bound segment named by offset (`GEX_FLAG_SELF_SEG_OFFSET`).

use gex_core::Ep;
use gex_types::{Error, Flags, Result};

/// The source of a put.
#[derive(Clone, Copy, Debug)]
pub enum Src<'a> {
    /// Bytes anywhere in this process.
    Slice(&'a [u8]),
    /// `len` bytes at `offset` in the local bound segment; requires
    /// `Flags::SELF_SEG_OFFSET`.
    SegOffset {
        /// Offset from the segment base.
        offset: usize,
        /// Length in bytes.
        len: usize,
    },
}

/// The destination of a get.
#[derive(Debug)]
pub enum Dst<'a> {
    /// Bytes anywhere in this process.
    Slice(&'a mut [u8]),
    /// `len` bytes at `offset` in the local bound segment; requires
    /// `Flags::SELF_SEG_OFFSET`.
    SegOffset {
        /// Offset from the segment base.
        offset: usize,
        /// Length in bytes.
        len: usize,
    },
}

impl<'a> From<&'a [u8]> for Src<'a> {
    fn from(s: &'a [u8]) -> Self {
        Src::Slice(s)
    }
}
impl<'a> From<&'a Vec<u8>> for Src<'a> {
    fn from(s: &'a Vec<u8>) -> Self {
        Src::Slice(s)
    }
}
impl<'a, const N: usize> From<&'a [u8; N]> for Src<'a> {
    fn from(s: &'a [u8; N]) -> Self {
        Src::Slice(s)
    }
}
impl<'a> From<&'a mut [u8]> for Dst<'a> {
    fn from(s: &'a mut [u8]) -> Self {
        Dst::Slice(s)
    }
}
impl<'a> From<&'a mut Vec<u8>> for Dst<'a> {
    fn from(s: &'a mut Vec<u8>) -> Self {
        Dst::Slice(s)
    }
}
impl<'a, const N: usize> From<&'a mut [u8; N]> for Dst<'a> {
    fn from(s: &'a mut [u8; N]) -> Self {
        Dst::Slice(s)
    }
}

impl Src<'_> {
    /// Bytes to move.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            Src::Slice(s) => s.len(),
            Src::SegOffset { len, .. } => *len,
        }
    }

    /// Whether there is nothing to move.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Dst<'_> {
    /// Bytes to move.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            Dst::Slice(s) => s.len(),
            Dst::SegOffset { len, .. } => *len,
        }
    }

    /// Whether there is nothing to move.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Resolves a segment-offset range of the local bound segment to a pointer,
/// checking the flag and the bounds.
pub(crate) fn seg_ptr(
    call: &str,
    ep: &Ep,
    offset: usize,
    len: usize,
    flags: Flags,
) -> Result<*mut u8> {
    if !flags.contains(Flags::SELF_SEG_OFFSET) {
        return Err(Error::bad_arg(format!(
            "{call}: a local segment offset needs GEX_FLAG_SELF_SEG_OFFSET"
        )));
    }
    let seg = ep.segment().ok_or_else(|| {
        Error::bad_arg(format!(
            "{call}: SELF_SEG_OFFSET, but no segment is bound locally"
        ))
    })?;
    let off = seg
        .offset_of(offset, len, true)
        .map_err(|e| Error::bad_arg(format!("{call}: {}", e.named("local"))))?;
    // SAFETY: off <= size (checked), so the pointer stays in the mapping.
    Ok(unsafe { seg.as_ptr().add(off) })
}

/// The start of a put's source: checks that SELF_SEG_OFFSET is given
/// exactly when the source is a segment offset.
#[inline(always)]
pub(crate) fn src_ptr(call: &str, ep: &Ep, src: &Src<'_>, flags: Flags) -> Result<*const u8> {
    match src {
        Src::Slice(s) if !flags.contains(Flags::SELF_SEG_OFFSET) => Ok(s.as_ptr()),
        Src::Slice(_) => Err(Error::bad_arg(format!(
            "{call}: GEX_FLAG_SELF_SEG_OFFSET given with a slice source (use Src::SegOffset)"
        ))),
        Src::SegOffset { offset, len } => {
            seg_ptr(call, ep, *offset, *len, flags).map(|p| p as *const u8)
        }
    }
}

/// The start of a get's destination; as [`src_ptr`].
#[inline(always)]
pub(crate) fn dst_ptr(call: &str, ep: &Ep, dst: &mut Dst<'_>, flags: Flags) -> Result<*mut u8> {
    match dst {
        Dst::Slice(s) if !flags.contains(Flags::SELF_SEG_OFFSET) => Ok(s.as_mut_ptr()),
        Dst::Slice(_) => Err(Error::bad_arg(format!(
            "{call}: GEX_FLAG_SELF_SEG_OFFSET given with a slice destination (use Dst::SegOffset)"
        ))),
        Dst::SegOffset { offset, len } => seg_ptr(call, ep, *offset, *len, flags),
    }
}
