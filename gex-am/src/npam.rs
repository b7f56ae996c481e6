//! Negotiated-payload Active Messages: Prepare, then Commit
//! (`gex_AM_Prepare*` / `gex_AM_Commit*`, `gex_AM_SrcDesc*`).

use std::marker::PhantomData;

use gex_core::{context, Lc};
use gex_types::{AmArg, AmCategory, AmIndex, Error, Flags, Result, AM_MAX_ARGS};

use crate::inject::{self, check_flags, Dest, LcOpt};
use gex_core::internals::*;

/// The source buffer of a Prepare.
#[derive(Debug)]
pub enum PrepareBuf<'b> {
    /// The client offers this buffer (`client_buf` non-NULL) and chooses
    /// how local completion is reported.
    Client(&'b [u8], Lc<'b>),
    /// The library provides a buffer (`client_buf` NULL), 16-byte aligned.
    Alloc,
}

enum Buf<'b> {
    Client(&'b [u8], Lc<'b>),
    Alloc(Vec<u128>),
}

/// A prepared, not yet committed AM (`gex_AM_SrcDesc_t`). It belongs to the
/// thread that prepared it; until it is committed the thread is in
/// restricted context (no other communication). Dropping it without a
/// commit sends nothing and ends the restriction.
pub struct SrcDesc<'b> {
    dest: Dest<'b>,
    is_request: bool,
    category: AmCategory,
    buf: Buf<'b>,
    size: usize,
    nargs: u32,
    dest_addr: Option<usize>,
    flags: Flags,
    open: bool,
    _not_send: PhantomData<*const ()>,
}

impl std::fmt::Debug for SrcDesc<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SrcDesc")
            .field("category", &self.category)
            .field("is_request", &self.is_request)
            .field("size", &self.size)
            .finish()
    }
}

impl<'b> SrcDesc<'b> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn prepare(
        dest: Dest<'b>,
        is_request: bool,
        category: AmCategory,
        buf: PrepareBuf<'b>,
        least: usize,
        most: usize,
        dest_addr: Option<usize>,
        flags: Flags,
        nargs: u32,
    ) -> Result<Option<SrcDesc<'b>>> {
        let call = format!(
            "gex_AM_Prepare{}{}",
            if is_request { "Request" } else { "Reply" },
            category.name()
        );
        if is_request {
            context::check_may_communicate(&call)?;
        } else {
            context::check_may_reply(&call)?;
        }
        if nargs as usize > AM_MAX_ARGS {
            return Err(Error::bad_arg(format!(
                "{call}: nargs {nargs} exceeds {AM_MAX_ARGS}"
            )));
        }
        // The AM_PREPARE_LEAST_* flags are for the Max queries: "Ignored in
        // gex_AM_Prepare{Request,Reply}{Medium,Long}() calls" (spec), so
        // they are accepted and dropped here (the Commit would reject them).
        let least_flags = Flags::AM_PREPARE_LEAST_CLIENT | Flags::AM_PREPARE_LEAST_ALLOC;
        check_flags(&call, category, flags, least_flags)?;
        let flags = flags - least_flags;
        if least > most {
            return Err(Error::bad_arg(format!(
                "{call}: least_payload {least} exceeds most_payload {most}"
            )));
        }
        let lc_opt = match &buf {
            PrepareBuf::Client(_, lc) => LcOpt::from(lc),
            PrepareBuf::Alloc => LcOpt::Now,
        };
        if let PrepareBuf::Client(_, Lc::Defer) = &buf {
            return Err(Error::bad_arg(format!(
                "{call}: GEX_EVENT_DEFER is not allowed for Active Messages"
            )));
        }
        let max = inject::max_payload(dest, category, is_request, lc_opt, flags, nargs)?;
        if least > max {
            return Err(Error::bad_arg(format!(
                "{call}: least_payload {least} exceeds the maximum {max} to rank {}",
                dest.jobrank
            )));
        }
        let (buf, size) = match buf {
            PrepareBuf::Client(b, lc) => {
                if least > b.len() {
                    return Err(Error::bad_arg(format!(
                        "{call}: least_payload {least} exceeds the client buffer of {} bytes",
                        b.len()
                    )));
                }
                let size = most.min(max).min(b.len());
                (Buf::Client(b, lc), size)
            }
            PrepareBuf::Alloc => {
                let size = most.min(max);
                (Buf::Alloc(vec![0u128; size.div_ceil(16)]), size)
            }
        };
        // IMMEDIATE: the no-op when the conduit could not take a message
        // with `least` payload bytes now ("injection resources ... cannot
        // be obtained"); checked before the interval opens.
        if flags.contains(Flags::IMMEDIATE)
            && !dest.ep.runtime().conduit().am_can_send(
                dest.jobrank,
                is_request,
                category,
                nargs as usize,
                least,
            )
        {
            return Ok(None);
        }
        context::open_prepare(&call)?;
        Ok(Some(SrcDesc {
            dest,
            is_request,
            category,
            buf,
            size,
            nargs,
            dest_addr,
            flags,
            open: true,
            _not_send: PhantomData,
        }))
    }

    /// The source buffer's address (`gex_AM_SrcDescAddr`): the client's
    /// buffer, or the library's.
    pub fn addr(&self) -> *const u8 {
        match &self.buf {
            Buf::Client(b, _) => b.as_ptr(),
            Buf::Alloc(v) => v.as_ptr() as *const u8,
        }
    }

    /// The most bytes the commit may send (`gex_AM_SrcDescSize`), between
    /// the least and most payload passed to the Prepare.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The library-provided buffer to fill (`None` with a client buffer).
    pub fn buf_mut(&mut self) -> Option<&mut [u8]> {
        let size = self.size;
        match &mut self.buf {
            Buf::Client(..) => None,
            Buf::Alloc(v) => {
                // SAFETY: the Vec<u128> holds at least `size` initialised
                // bytes, and u8 has no alignment or validity requirements.
                Some(unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, size) })
            }
        }
    }

    fn commit(
        mut self,
        category: AmCategory,
        handler: AmIndex,
        nbytes: usize,
        dest_addr: usize,
        args: &[AmArg],
    ) -> Result<()> {
        let call = format!(
            "gex_AM_Commit{}{}",
            if self.is_request { "Request" } else { "Reply" },
            category.name()
        );
        self.open = false;
        context::close_prepare();
        if category != self.category {
            return Err(Error::bad_arg(format!(
                "{call}: the Prepare was for a {}",
                self.category.name()
            )));
        }
        if args.len() != self.nargs as usize {
            return Err(Error::bad_arg(format!(
                "{call}: {} arguments, but the Prepare said {}",
                args.len(),
                self.nargs
            )));
        }
        if nbytes > self.size {
            return Err(Error::bad_arg(format!(
                "{call}: nbytes {nbytes} exceeds gex_AM_SrcDescSize() = {}",
                self.size
            )));
        }
        if let Some(d) = self.dest_addr {
            if d != dest_addr {
                return Err(Error::bad_arg(format!(
                    "{call}: dest_addr {dest_addr:#x} differs from {d:#x} given to the Prepare"
                )));
            }
        }
        // The commit is not affected by IMMEDIATE: it always sends.
        let flags = self.flags - Flags::IMMEDIATE;
        let buf = std::mem::replace(&mut self.buf, Buf::Alloc(Vec::new()));
        let sent = match buf {
            Buf::Client(b, lc) => {
                if !self.is_request {
                    context::check_may_reply(&call)?;
                }
                inject::send(
                    self.dest,
                    self.is_request,
                    category,
                    handler,
                    &b[..nbytes],
                    dest_addr,
                    lc,
                    flags,
                    args,
                )?
            }
            Buf::Alloc(v) => {
                // SAFETY: as in buf_mut.
                let bytes = unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, nbytes) };
                if !self.is_request {
                    context::check_may_reply(&call)?;
                }
                inject::send(
                    self.dest,
                    self.is_request,
                    category,
                    handler,
                    bytes,
                    dest_addr,
                    Lc::Now,
                    flags,
                    args,
                )?
            }
        };
        debug_assert!(sent, "a blocking send always sends");
        Ok(())
    }

    /// Sends the first `nbytes` of the buffer as a Medium
    /// (`gex_AM_CommitRequestMedium` / `gex_AM_CommitReplyMedium`).
    pub fn commit_medium(self, handler: AmIndex, nbytes: usize, args: &[AmArg]) -> Result<()> {
        self.commit(AmCategory::Medium, handler, nbytes, 0, args)
    }

    /// Sends the first `nbytes` of the buffer as a Long landing at
    /// `dest_addr` (`gex_AM_CommitRequestLong` / `gex_AM_CommitReplyLong`).
    pub fn commit_long(
        self,
        handler: AmIndex,
        nbytes: usize,
        dest_addr: usize,
        args: &[AmArg],
    ) -> Result<()> {
        self.commit(AmCategory::Long, handler, nbytes, dest_addr, args)
    }
}

impl Drop for SrcDesc<'_> {
    fn drop(&mut self) {
        if self.open {
            context::close_prepare();
        }
    }
}
