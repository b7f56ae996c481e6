//! Tokens: what a handler gets to identify the message and, for a request,
//! to reply (`gex_Token_t`, `gex_Token_Info`).

use std::marker::PhantomData;

use gex_core::{Ep, Lc};
use gex_types::{AmArg, AmCategory, AmIndex, EpIndex, Flags, Rank, Result, Ti, AM_INDEX_BASE};

use crate::handlers::{AmLayer, HandlerEntry};
use crate::inject::{self, Dest, LcOpt};
use crate::npam::{PrepareBuf, SrcDesc};

#[derive(Clone, Copy)]
pub(crate) struct TokenCtx<'a> {
    pub(crate) layer: &'a AmLayer,
    pub(crate) entry: &'a HandlerEntry,
    pub(crate) src: Rank,
    /// The sending endpoint's index in its process (checked below
    /// `MAX_EPS` by the dispatcher): where a reply goes.
    pub(crate) src_ep: EpIndex,
    pub(crate) category: AmCategory,
}

/// What `gex_Token_Info` reports about the message being handled.
#[derive(Clone, Debug)]
pub struct TokenInfo<'a> {
    /// The sender's jobrank.
    pub srcrank: Rank,
    /// The sending endpoint's index in its process (an extension: the
    /// spec's struct has "at least" its fields). A reply goes to it.
    pub src_ep_index: EpIndex,
    /// The receiving endpoint.
    pub ep: &'a Ep,
    /// The running handler's registration.
    pub entry: &'a HandlerEntry,
    /// Whether the handler runs as a request.
    pub is_req: bool,
    /// Whether the message is a Long.
    pub is_long: bool,
}

impl<'a> TokenCtx<'a> {
    fn info(&self, is_req: bool) -> TokenInfo<'a> {
        TokenInfo {
            srcrank: self.src,
            src_ep_index: self.src_ep,
            ep: &self.layer.ep,
            entry: self.entry,
            is_req,
            is_long: self.category == AmCategory::Long,
        }
    }
}

/// The token of a request handler. Replying consumes it, so a handler
/// replies at most once; dropping it without replying is allowed.
/// It cannot leave the handler's thread or outlive the handler.
pub struct RequestToken<'a> {
    ctx: TokenCtx<'a>,
    _not_send: PhantomData<*const ()>,
}

/// The token of a reply handler: information only, no way to communicate.
pub struct ReplyToken<'a> {
    ctx: TokenCtx<'a>,
    _not_send: PhantomData<*const ()>,
}

/// The token of a handler registered for both requests and replies.
pub enum Token<'a> {
    /// Running as a request: may reply once.
    Request(RequestToken<'a>),
    /// Running as a reply.
    Reply(ReplyToken<'a>),
}

/// The outcome of a reply: sent, or (with `IMMEDIATE` under backpressure)
/// not sent, with the token handed back so the handler may try again.
/// Without `IMMEDIATE` a reply is always `Sent`.
pub enum Replied<'a> {
    /// The reply was sent.
    Sent,
    /// Nothing was sent; the token is still usable.
    NoOp(RequestToken<'a>),
}

impl Replied<'_> {
    /// Whether the reply was sent.
    pub fn is_sent(&self) -> bool {
        matches!(self, Replied::Sent)
    }
}

impl std::fmt::Debug for RequestToken<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "RequestToken(from rank {} endpoint {})",
            self.ctx.src, self.ctx.src_ep
        )
    }
}
impl std::fmt::Debug for ReplyToken<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ReplyToken(from rank {} endpoint {})",
            self.ctx.src, self.ctx.src_ep
        )
    }
}
impl std::fmt::Debug for Replied<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.is_sent() { "Sent" } else { "NoOp" })
    }
}

impl<'a> ReplyToken<'a> {
    pub(crate) fn new(ctx: TokenCtx<'a>) -> Self {
        ReplyToken {
            ctx,
            _not_send: PhantomData,
        }
    }

    /// Everything token info can report (`gex_Token_Info` with `GEX_TI_ALL`).
    pub fn info(&self) -> TokenInfo<'a> {
        self.ctx.info(false)
    }

    /// `gex_Token_Info`: the info and the mask of valid fields (every field
    /// is always supported, so the mask is `Ti::ALL`).
    pub fn info_masked(&self, _mask: Ti) -> (TokenInfo<'a>, Ti) {
        (self.info(), Ti::ALL)
    }

    /// The sender's jobrank (`gasnet_AMGetMsgSource`).
    pub fn src_rank(&self) -> Rank {
        self.ctx.src
    }

    /// The sending endpoint's index in its process (where a reply goes).
    pub fn src_ep_index(&self) -> EpIndex {
        self.ctx.src_ep
    }
}

impl<'a> RequestToken<'a> {
    pub(crate) fn new(ctx: TokenCtx<'a>) -> Self {
        RequestToken {
            ctx,
            _not_send: PhantomData,
        }
    }

    /// Everything token info can report (`gex_Token_Info` with `GEX_TI_ALL`).
    pub fn info(&self) -> TokenInfo<'a> {
        self.ctx.info(true)
    }

    /// `gex_Token_Info`: the info and the mask of valid fields (every field
    /// is always supported, so the mask is `Ti::ALL`).
    pub fn info_masked(&self, _mask: Ti) -> (TokenInfo<'a>, Ti) {
        (self.info(), Ti::ALL)
    }

    /// The sender's jobrank (`gasnet_AMGetMsgSource`).
    pub fn src_rank(&self) -> Rank {
        self.ctx.src
    }

    /// The sending endpoint's index in its process (where a reply goes).
    pub fn src_ep_index(&self) -> EpIndex {
        self.ctx.src_ep
    }

    fn dest(&self) -> Dest<'a> {
        Dest {
            ep: &self.ctx.layer.ep,
            jobrank: self.ctx.src,
            remote_ep: self.ctx.src_ep,
            // A layer's handler replies to its own layer's handlers; a
            // client's handler only to client indices.
            internal: self.ctx.entry.index < AM_INDEX_BASE,
        }
    }

    fn outcome(self, sent: bool) -> Replied<'a> {
        if sent {
            Replied::Sent
        } else {
            Replied::NoOp(self)
        }
    }

    /// Replies with a Short (`gex_AM_ReplyShort`).
    pub fn reply_short(
        self,
        handler: AmIndex,
        flags: Flags,
        args: &[AmArg],
    ) -> Result<Replied<'a>> {
        let sent = inject::reply(
            self.dest(),
            AmCategory::Short,
            handler,
            &[],
            0,
            Lc::Now,
            flags,
            args,
        )?;
        Ok(self.outcome(sent))
    }

    /// Replies with a Medium (`gex_AM_ReplyMedium`). `lc` may not be
    /// `Group` or `Defer`.
    pub fn reply_medium(
        self,
        handler: AmIndex,
        payload: &[u8],
        lc: Lc<'_>,
        flags: Flags,
        args: &[AmArg],
    ) -> Result<Replied<'a>> {
        let sent = inject::reply(
            self.dest(),
            AmCategory::Medium,
            handler,
            payload,
            0,
            lc,
            flags,
            args,
        )?;
        Ok(self.outcome(sent))
    }

    /// Replies with a Long landing at `dest_addr` in the requester's segment
    /// (`gex_AM_ReplyLong`).
    #[allow(clippy::too_many_arguments)]
    pub fn reply_long(
        self,
        handler: AmIndex,
        payload: &[u8],
        dest_addr: usize,
        lc: Lc<'_>,
        flags: Flags,
        args: &[AmArg],
    ) -> Result<Replied<'a>> {
        let sent = inject::reply(
            self.dest(),
            AmCategory::Long,
            handler,
            payload,
            dest_addr,
            lc,
            flags,
            args,
        )?;
        Ok(self.outcome(sent))
    }

    /// Largest Medium reply payload (`gex_Token_MaxReplyMedium`).
    pub fn max_reply_medium(&self, lc: LcOpt, flags: Flags, nargs: u32) -> Result<usize> {
        inject::max_payload(self.dest(), AmCategory::Medium, false, lc, flags, nargs)
    }

    /// Largest Long reply payload (`gex_Token_MaxReplyLong`).
    pub fn max_reply_long(&self, lc: LcOpt, flags: Flags, nargs: u32) -> Result<usize> {
        inject::max_payload(self.dest(), AmCategory::Long, false, lc, flags, nargs)
    }

    /// Negotiated-payload Medium reply, phase one (`gex_AM_PrepareReplyMedium`).
    /// The token moves into the descriptor; its commit sends the reply.
    pub fn prepare_reply_medium<'b>(
        self,
        buf: PrepareBuf<'b>,
        least: usize,
        most: usize,
        flags: Flags,
        nargs: u32,
    ) -> Result<Option<SrcDesc<'b>>>
    where
        'a: 'b,
    {
        let dest = self.dest();
        SrcDesc::prepare(
            dest,
            false,
            AmCategory::Medium,
            buf,
            least,
            most,
            None,
            flags,
            nargs,
        )
    }

    /// Negotiated-payload Long reply, phase one (`gex_AM_PrepareReplyLong`).
    #[allow(clippy::too_many_arguments)]
    pub fn prepare_reply_long<'b>(
        self,
        buf: PrepareBuf<'b>,
        least: usize,
        most: usize,
        dest_addr: Option<usize>,
        flags: Flags,
        nargs: u32,
    ) -> Result<Option<SrcDesc<'b>>>
    where
        'a: 'b,
    {
        let dest = self.dest();
        SrcDesc::prepare(
            dest,
            false,
            AmCategory::Long,
            buf,
            least,
            most,
            dest_addr,
            flags,
            nargs,
        )
    }
}

impl<'a> Token<'a> {
    /// Whether the handler runs as a request.
    pub fn is_request(&self) -> bool {
        matches!(self, Token::Request(_))
    }

    /// The sender's jobrank.
    pub fn src_rank(&self) -> Rank {
        match self {
            Token::Request(t) => t.src_rank(),
            Token::Reply(t) => t.src_rank(),
        }
    }

    /// The sending endpoint's index in its process.
    pub fn src_ep_index(&self) -> EpIndex {
        match self {
            Token::Request(t) => t.src_ep_index(),
            Token::Reply(t) => t.src_ep_index(),
        }
    }

    /// Token info (`gex_Token_Info` with `GEX_TI_ALL`).
    pub fn info(&self) -> TokenInfo<'a> {
        match self {
            Token::Request(t) => t.info(),
            Token::Reply(t) => t.info(),
        }
    }
}
