//! The block collectives' plans: scatter, gather, gather-all and
//! exchange, over the hierarchy, shared memory or Active Messages (part
//! of the planner, `crate::plan`).
//!
//! Uses what the planner does (`crate::plan`).

use std::sync::Arc;

use gex_core::{Staging, Tm};
use gex_types::{Error, Flags, Rank, Result};

use super::{begin, exchange_nb_with, gather_all_nb_with, gather_nb_with, scatter_nb_with};
use crate::am::algos::{Collect, CollectSink};
use crate::am::{fin, out_key};
use crate::args::{check_len, check_root, check_size};
use crate::barrier::enter_all;
use crate::engine::{send_now, signature, Op, Out};
use crate::handle::CollHandle;
use crate::hier::blocks as hblocks;
use crate::onesided::{Addrs, HINTS};
use crate::shm::data::{self, Readers};
use crate::shm::small::{self, Pat};
use crate::sync::SyncMode;
use crate::team::TeamInfo;

/// A flat collection of `expect_blocks` blocks of `block` bytes into a
/// fresh result buffer, with `own` (this rank's slot and block) already in
/// place, after the `initial` sends.
#[allow(clippy::too_many_arguments)]
pub(crate) fn collect<'a>(
    call: &'static str,
    key: crate::engine::Key,
    sig: u32,
    dst: &'a mut [u8],
    block: usize,
    own: Option<(usize, &[u8])>,
    expect_blocks: usize,
    initial: Vec<Out>,
) -> CollHandle<'a> {
    let staging = Staging::new(dst.len());
    if let Some((slot, bytes)) = own {
        // SAFETY: the slot lies inside the fresh staging buffer (the callers
        // size it as blocks * block), and no other writer exists yet: the
        // operation that will receive into it has not started.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                staging.ptr().add(slot * block),
                bytes.len(),
            )
        };
    }
    let op = Op::start(
        key,
        sig,
        call,
        Box::new(Collect {
            initial,
            expect_msgs: expect_blocks,
            got_msgs: 0,
            sink: CollectSink::Staging {
                staging: staging.clone(),
                block,
                got: 0,
                expect: expect_blocks * block,
            },
        }),
    );
    CollHandle::pending_into(op.c.clone(), staging, dst)
}

/// [`crate::coll::scatter_nb`]: the checks, then the mechanism.
pub(crate) fn scatter_nb<'a>(
    tm: &Tm,
    root: Rank,
    dst: &'a mut [u8],
    src: Option<&'a [u8]>,
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_ScatterNB";
    if flags.intersects(HINTS) {
        // Segment hints: the one-sided algorithms (`crate::onesided`).
        return scatter_nb_with(tm, root, dst, src, Addrs::Local, flags);
    }
    let (t, mode) = begin(CALL, tm, flags)?;
    check_root(CALL, root, t)?;
    let (me, n, nb) = (t.me, t.size(), dst.len());
    check_size(CALL, nb)?;
    let src = if me == root {
        let s = src.ok_or_else(|| Error::bad_arg(format!("{CALL}: the root needs a src")))?;
        check_len(CALL, "src", s.len(), nb * n as usize)?;
        Some(s)
    } else {
        None
    };
    if mode.in_all {
        enter_all(t, Some(root), CALL);
    }
    if let Some(h) = t.hier() {
        return hblocks::scatter(t, h, mode, root, dst, src);
    }
    Ok(scatter_on(t, mode, root, dst, src, CALL))
}

/// [`scatter_nb`] over `t` once the arguments are checked (`src` is
/// `Some` on the root only) and `IN_ALLSYNC` is done (also the stages of
/// the hierarchical scatter, `crate::hier::blocks`). `src` is read during the
/// call.
pub(crate) fn scatter_on<'a>(
    t: &Arc<TeamInfo>,
    mode: SyncMode,
    root: Rank,
    dst: &'a mut [u8],
    src: Option<&[u8]>,
    call: &'static str,
) -> CollHandle<'a> {
    let (me, n, nb) = (t.me, t.size(), dst.len());
    if nb > 0 && small::qualifies(t, &mode, nb * n as usize, 1) {
        let pat = Pat::Scatter {
            root: root as usize,
            nb,
        };
        let wlen = nb * n as usize;
        if let Some(s) = src {
            dst.copy_from_slice(&s[me as usize * nb..(me as usize + 1) * nb]);
            return small::start(t, &mode, pat, wlen, Some(s), None);
        }
        return small::start(t, &mode, pat, wlen, None, Some(dst));
    }
    let key = t.next_key();
    let out = out_key(t, mode);
    let sig = signature("scatter", &[u64::from(root), nb as u64, mode.word]);
    if nb > 0 && data::eligible(t) {
        if let Some(s) = src {
            let own = &s[me as usize * nb..(me as usize + 1) * nb];
            if data::single_copy(nb) {
                data::offer(u64::from(sig), s, n as usize, || dst.copy_from_slice(own));
            } else {
                dst.copy_from_slice(own);
                data::write_only(u64::from(sig), s, n as usize, Readers::Others);
            }
            return fin(CollHandle::INVALID, out);
        }
        return fin(
            data::read_one(u64::from(sig), root, nb * n as usize, Some(nb), dst),
            out,
        );
    }
    if let Some(s) = src {
        dst.copy_from_slice(&s[me as usize * nb..(me as usize + 1) * nb]);
        if nb > 0 {
            for i in 1..n {
                let to = (me + i) % n;
                let blk = &s[to as usize * nb..(to as usize + 1) * nb];
                send_now(key, sig, t.members[to as usize], 0, blk);
            }
        }
        return fin(CollHandle::INVALID, out);
    }
    if nb == 0 {
        return fin(CollHandle::INVALID, out);
    }
    fin(collect(call, key, sig, dst, nb, None, 1, Vec::new()), out)
}

/// [`crate::coll::gather_nb`]: the checks, then the mechanism.
pub(crate) fn gather_nb<'a>(
    tm: &Tm,
    root: Rank,
    dst: Option<&'a mut [u8]>,
    src: &'a [u8],
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_GatherNB";
    if flags.intersects(HINTS) {
        // Segment hints: the one-sided algorithms (`crate::onesided`).
        return gather_nb_with(tm, root, dst, src, Addrs::Local, flags);
    }
    let (t, mode) = begin(CALL, tm, flags)?;
    check_root(CALL, root, t)?;
    let (me, n, nb) = (t.me, t.size(), src.len());
    check_size(CALL, nb * n as usize)?;
    let dst = if me == root {
        let d = dst.ok_or_else(|| Error::bad_arg(format!("{CALL}: the root needs a dst")))?;
        check_len(CALL, "dst", d.len(), nb * n as usize)?;
        Some(d)
    } else {
        None
    };
    if mode.in_all {
        enter_all(t, None, CALL);
    }
    if let Some(h) = t.hier() {
        return hblocks::gather(t, h, mode, root, dst, src);
    }
    Ok(gather_on(t, mode, root, dst, src, CALL))
}

/// [`gather_nb`] over `t` once the arguments are checked (`dst` is
/// `Some` on the root only) and `IN_ALLSYNC` is done (also the stages of
/// the hierarchical collectives, `crate::hier::blocks`). `src` is read during
/// the call.
pub(crate) fn gather_on<'a>(
    t: &Arc<TeamInfo>,
    mode: SyncMode,
    root: Rank,
    dst: Option<&'a mut [u8]>,
    src: &[u8],
    call: &'static str,
) -> CollHandle<'a> {
    let (me, n, nb) = (t.me, t.size(), src.len());
    if nb > 0 && small::qualifies(t, &mode, nb, 1) {
        let pat = Pat::Gather {
            root: root as usize,
            nb,
        };
        return small::start(t, &mode, pat, nb, Some(src), dst);
    }
    let key = t.next_key();
    let out = out_key(t, mode);
    let sig = signature("gather", &[u64::from(root), nb as u64, mode.word]);
    if nb > 0 && data::eligible(t) {
        let Some(d) = dst else {
            data::write_only(u64::from(sig), src, n as usize, Readers::One(root));
            return fin(CollHandle::INVALID, out);
        };
        return fin(
            data::all(
                u64::from(sig),
                src,
                n as usize,
                data::How::GatherAll,
                Readers::One(root),
                d,
            ),
            out,
        );
    }
    let Some(dst) = dst else {
        if nb > 0 {
            send_now(key, sig, t.members[root as usize], me, src);
        }
        return fin(CollHandle::INVALID, out);
    };
    if nb == 0 || n == 1 {
        dst[me as usize * nb..(me as usize + 1) * nb].copy_from_slice(src);
        return fin(CollHandle::INVALID, out);
    }
    fin(
        collect(
            call,
            key,
            sig,
            dst,
            nb,
            Some((me as usize, src)),
            n as usize - 1,
            Vec::new(),
        ),
        out,
    )
}

/// [`crate::coll::gather_all_nb`]: the checks, then the mechanism.
pub(crate) fn gather_all_nb<'a>(
    tm: &Tm,
    dst: &'a mut [u8],
    src: &'a [u8],
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_GatherAllNB";
    if flags.intersects(HINTS) {
        // Segment hints: the one-sided algorithms (`crate::onesided`).
        return gather_all_nb_with(tm, dst, src, Addrs::Local, flags);
    }
    let (t, mode) = begin(CALL, tm, flags)?;
    let (n, nb) = (t.size(), src.len());
    check_size(CALL, nb * n as usize)?;
    check_len(CALL, "dst", dst.len(), nb * n as usize)?;
    if mode.in_all {
        enter_all(t, None, CALL);
    }
    if let Some(h) = t.hier() {
        return hblocks::gather_all(t, h, mode, dst, src);
    }
    Ok(gather_all_on(t, mode, dst, src, CALL))
}

/// [`gather_all_nb`] over `t` once the arguments are checked and
/// `IN_ALLSYNC` is done. `src` is read during the call.
pub(crate) fn gather_all_on<'a>(
    t: &Arc<TeamInfo>,
    mode: SyncMode,
    dst: &'a mut [u8],
    src: &[u8],
    call: &'static str,
) -> CollHandle<'a> {
    let (me, n, nb) = (t.me, t.size(), src.len());
    if nb > 0 && small::qualifies(t, &mode, nb, 1) {
        let pat = Pat::GatherAll { nb };
        return small::start(t, &mode, pat, nb, Some(src), Some(dst));
    }
    let key = t.next_key();
    let out = out_key(t, mode);
    let sig = signature("gather_all", &[nb as u64, mode.word]);
    if nb == 0 || n == 1 {
        dst[me as usize * nb..(me as usize + 1) * nb].copy_from_slice(src);
        return fin(CollHandle::INVALID, out);
    }
    if data::eligible(t) {
        return fin(
            data::all(
                u64::from(sig),
                src,
                n as usize,
                data::How::GatherAll,
                Readers::Everyone,
                dst,
            ),
            out,
        );
    }
    let mine: Arc<[u8]> = src.into();
    let initial = (1..n)
        .map(|i| Out::owned(t.members[((me + i) % n) as usize], me, mine.clone()))
        .collect();
    fin(
        collect(
            call,
            key,
            sig,
            dst,
            nb,
            Some((me as usize, src)),
            n as usize - 1,
            initial,
        ),
        out,
    )
}

/// [`crate::coll::exchange_nb`]: the checks, then the mechanism.
pub(crate) fn exchange_nb<'a>(
    tm: &Tm,
    dst: &'a mut [u8],
    src: &'a [u8],
    flags: Flags,
) -> Result<CollHandle<'a>> {
    const CALL: &str = "gex_Coll_ExchangeNB";
    if flags.intersects(HINTS) {
        // Segment hints: the one-sided algorithms (`crate::onesided`).
        return exchange_nb_with(tm, dst, src, Addrs::Local, flags);
    }
    let (t, mode) = begin(CALL, tm, flags)?;
    let n = t.size() as usize;
    check_len(CALL, "dst", dst.len(), src.len())?;
    if !src.len().is_multiple_of(n) {
        return Err(Error::bad_arg(format!(
            "{CALL}: src of {} bytes is not {n} equal blocks",
            src.len()
        )));
    }
    check_size(CALL, src.len())?;
    if mode.in_all {
        enter_all(t, None, CALL);
    }
    if let Some(h) = t.hier().filter(|h| hblocks::exchange_fits(h, src.len())) {
        return hblocks::exchange(t, h, mode, dst, src);
    }
    Ok(exchange_on(t, mode, dst, src, CALL))
}

/// [`exchange_nb`] over `t` once the arguments are checked and
/// `IN_ALLSYNC` is done. `src` is read during the call.
pub(crate) fn exchange_on<'a>(
    t: &Arc<TeamInfo>,
    mode: SyncMode,
    dst: &'a mut [u8],
    src: &[u8],
    call: &'static str,
) -> CollHandle<'a> {
    let (me, n) = (t.me, t.size() as usize);
    let nb = src.len() / n;
    if nb > 0 && small::qualifies(t, &mode, src.len(), 1) {
        let pat = Pat::Exchange { nb };
        return small::start(t, &mode, pat, src.len(), Some(src), Some(dst));
    }
    let key = t.next_key();
    let out = out_key(t, mode);
    let sig = signature("exchange", &[nb as u64, mode.word]);
    let own = &src[me as usize * nb..(me as usize + 1) * nb];
    if nb == 0 || n == 1 {
        dst[me as usize * nb..(me as usize + 1) * nb].copy_from_slice(own);
        return fin(CollHandle::INVALID, out);
    }
    if data::eligible(t) {
        return fin(
            data::all(
                u64::from(sig),
                src,
                n,
                data::How::Exchange { nb },
                Readers::Everyone,
                dst,
            ),
            out,
        );
    }
    let initial = (1..n as u32)
        .map(|i| {
            let to = (me + i) % n as u32;
            let blk: Arc<[u8]> = src[to as usize * nb..(to as usize + 1) * nb].into();
            Out::owned(t.members[to as usize], me, blk)
        })
        .collect();
    fin(
        collect(
            call,
            key,
            sig,
            dst,
            nb,
            Some((me as usize, own)),
            n - 1,
            initial,
        ),
        out,
    )
}
