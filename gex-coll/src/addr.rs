//! The address-mode forms of the data collectives (`*_with`: the design
//! notes' `*_LOCAL` and `*_SINGLE`, [`Addrs`]), non-blocking and
//! blocking; the plain calls with a segment hint go the same way. The
//! modes and the one-sided algorithms are documented in
//! `crate::onesided`.
//!
//! Layer: public forms. Uses the planner only.

use gex_core::Tm;
use gex_types::{Flags, Rank, Result};

use crate::handle::CollHandle;
use crate::onesided::Addrs;
use crate::plan;

/// [`broadcast_nb`](crate::broadcast_nb) with an address mode; also where
/// the plain call goes with a segment hint in `flags`.
/// `Addrs::Single`: `dst` has one address per member, `src` the root's
/// (its `dst` when `src` is `None`).
#[inline]
pub fn broadcast_nb_with<'a>(
    tm: &Tm,
    root: Rank,
    dst: &'a mut [u8],
    src: Option<&'a [u8]>,
    addrs: Addrs<'_>,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    plan::broadcast_nb_with(tm, root, dst, src, addrs, flags)
}

/// [`scatter_nb`](crate::scatter_nb) with an address mode.
/// `Addrs::Single`: `dst` one address per member, `src` the root's.
#[inline]
pub fn scatter_nb_with<'a>(
    tm: &Tm,
    root: Rank,
    dst: &'a mut [u8],
    src: Option<&'a [u8]>,
    addrs: Addrs<'_>,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    plan::scatter_nb_with(tm, root, dst, src, addrs, flags)
}

/// [`gather_nb`](crate::gather_nb) with an address mode.
/// `Addrs::Single`: `dst` the root's address, `src` one per member.
#[inline]
pub fn gather_nb_with<'a>(
    tm: &Tm,
    root: Rank,
    dst: Option<&'a mut [u8]>,
    src: &'a [u8],
    addrs: Addrs<'_>,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    plan::gather_nb_with(tm, root, dst, src, addrs, flags)
}

/// [`gather_all_nb`](crate::gather_all_nb) with an address mode.
/// `Addrs::Single`: one `dst` and one `src` address per member.
#[inline]
pub fn gather_all_nb_with<'a>(
    tm: &Tm,
    dst: &'a mut [u8],
    src: &'a [u8],
    addrs: Addrs<'_>,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    plan::gather_all_nb_with(tm, dst, src, addrs, flags)
}

/// [`exchange_nb`](crate::exchange_nb) with an address mode.
/// `Addrs::Single`: one `dst` and one `src` address per member.
#[inline]
pub fn exchange_nb_with<'a>(
    tm: &Tm,
    dst: &'a mut [u8],
    src: &'a [u8],
    addrs: Addrs<'_>,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    plan::exchange_nb_with(tm, dst, src, addrs, flags)
}

/// Blocking [`broadcast_nb_with`].
pub fn broadcast_with(
    tm: &Tm,
    root: Rank,
    dst: &mut [u8],
    src: Option<&[u8]>,
    addrs: Addrs<'_>,
    flags: Flags,
) -> Result<()> {
    broadcast_nb_with(tm, root, dst, src, addrs, flags)?.wait()
}

/// Blocking [`scatter_nb_with`].
pub fn scatter_with(
    tm: &Tm,
    root: Rank,
    dst: &mut [u8],
    src: Option<&[u8]>,
    addrs: Addrs<'_>,
    flags: Flags,
) -> Result<()> {
    scatter_nb_with(tm, root, dst, src, addrs, flags)?.wait()
}

/// Blocking [`gather_nb_with`].
pub fn gather_with(
    tm: &Tm,
    root: Rank,
    dst: Option<&mut [u8]>,
    src: &[u8],
    addrs: Addrs<'_>,
    flags: Flags,
) -> Result<()> {
    gather_nb_with(tm, root, dst, src, addrs, flags)?.wait()
}

/// Blocking [`gather_all_nb_with`].
pub fn gather_all_with(
    tm: &Tm,
    dst: &mut [u8],
    src: &[u8],
    addrs: Addrs<'_>,
    flags: Flags,
) -> Result<()> {
    gather_all_nb_with(tm, dst, src, addrs, flags)?.wait()
}

/// Blocking [`exchange_nb_with`].
pub fn exchange_with(
    tm: &Tm,
    dst: &mut [u8],
    src: &[u8],
    addrs: Addrs<'_>,
    flags: Flags,
) -> Result<()> {
    exchange_nb_with(tm, dst, src, addrs, flags)?.wait()
}
