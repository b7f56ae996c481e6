//! Handler registration (`gex_EP_RegisterHandlers`) and dispatch.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::layer::LayerAm;
use gex_conduit::{AmSink, IncomingAm};
use gex_core::context::{hsls_held, HandlerScope};
use gex_core::{CData, Ep};
use gex_types::{
    AmArg, AmCategory, AmIndex, EpCapabilities, EpIndex, Error, Flags, Result, AM_INDEX_BASE,
    AM_MAX_ARGS, MAX_EPS,
};

use crate::token::{ReplyToken, RequestToken, Token, TokenCtx};
use gex_core::internals::*;

/// What a handler receives besides its token: arguments and payload.
#[derive(Clone, Copy, Debug)]
pub struct AmMsg<'a> {
    pub(crate) category: AmCategory,
    pub(crate) args: &'a [AmArg],
    pub(crate) payload: &'a [u8],
    pub(crate) dest_addr: usize,
}

impl<'a> AmMsg<'a> {
    /// Short, Medium or Long.
    pub fn category(&self) -> AmCategory {
        self.category
    }

    /// The handler arguments, as many as the sender passed.
    pub fn args(&self) -> &'a [AmArg] {
        self.args
    }

    /// Argument `i` (panics if out of range, like indexing).
    pub fn arg(&self, i: usize) -> AmArg {
        self.args[i]
    }

    /// The payload: for a Medium, temporary storage valid until the handler
    /// returns (copy what you keep); for a Long, the bytes where they landed
    /// in this rank's segment (at [`AmMsg::dest_addr`]); empty for a Short.
    pub fn payload(&self) -> &'a [u8] {
        self.payload
    }

    /// Long only: the destination exactly as the sender named it (an address,
    /// or an offset with `PEER_SEG_OFFSET`), even when the payload is empty.
    pub fn dest_addr(&self) -> usize {
        self.dest_addr
    }
}

type RequestFn = dyn Fn(RequestToken<'_>, &AmMsg<'_>) + Send + Sync;
type ReplyFn = dyn Fn(&ReplyToken<'_>, &AmMsg<'_>) + Send + Sync;
type ReqRepFn = dyn Fn(Token<'_>, &AmMsg<'_>) + Send + Sync;

#[derive(Clone)]
enum HandlerFn {
    Request(Arc<RequestFn>),
    Reply(Arc<ReplyFn>),
    ReqRep(Arc<ReqRepFn>),
}

/// One AM handler to register (`gex_AM_Entry_t`).
///
/// Build it with [`HandlerEntry::request`], [`HandlerEntry::reply`] or
/// [`HandlerEntry::req_rep`]: the constructor fixes whether the handler
/// gets a [`RequestToken`] (which can reply once), a [`ReplyToken`] (which
/// cannot reply) or either.
#[derive(Clone)]
pub struct HandlerEntry {
    /// 0 ("don't care": assigned at registration) or a fixed index in
    /// `[AM_INDEX_BASE, 255]`. Updated in place by registration.
    pub index: AmIndex,
    flags: Flags,
    nargs: u32,
    /// A GASNet-1 handler ([`HandlerEntry::gasnet1`]): any category, any
    /// argument count.
    any_shape: bool,
    name: Option<String>,
    cdata: Option<CData>,
    func: HandlerFn,
}

impl std::fmt::Debug for HandlerEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandlerEntry")
            .field("index", &self.index)
            .field("flags", &self.flags)
            .field("nargs", &self.nargs)
            .field("name", &self.name)
            .finish()
    }
}

impl HandlerEntry {
    fn new(index: AmIndex, category: Flags, nargs: u32, kind: Flags, func: HandlerFn) -> Self {
        HandlerEntry {
            index,
            flags: category | kind,
            nargs,
            any_shape: false,
            name: None,
            cdata: None,
            func,
        }
    }

    /// A request handler. `category` is `Flags::AM_SHORT`, `AM_MEDIUM`,
    /// `AM_LONG` or `AM_MEDLONG`; `nargs` the argument count every caller
    /// passes.
    pub fn request(
        index: AmIndex,
        category: Flags,
        nargs: u32,
        f: impl Fn(RequestToken<'_>, &AmMsg<'_>) + Send + Sync + 'static,
    ) -> Self {
        Self::new(
            index,
            category,
            nargs,
            Flags::AM_REQUEST,
            HandlerFn::Request(Arc::new(f)),
        )
    }

    /// A reply handler (it cannot communicate).
    pub fn reply(
        index: AmIndex,
        category: Flags,
        nargs: u32,
        f: impl Fn(&ReplyToken<'_>, &AmMsg<'_>) + Send + Sync + 'static,
    ) -> Self {
        Self::new(
            index,
            category,
            nargs,
            Flags::AM_REPLY,
            HandlerFn::Reply(Arc::new(f)),
        )
    }

    /// A handler called as a request or a reply; the token says which.
    pub fn req_rep(
        index: AmIndex,
        category: Flags,
        nargs: u32,
        f: impl Fn(Token<'_>, &AmMsg<'_>) + Send + Sync + 'static,
    ) -> Self {
        Self::new(
            index,
            category,
            nargs,
            Flags::AM_REQREP,
            HandlerFn::ReqRep(Arc::new(f)),
        )
    }

    /// A GASNet-1 handler (`gasnet_handlerentry_t`, which has neither a
    /// category nor an argument count): called for a Short, Medium or Long
    /// request or reply with whatever arguments the sender passed (the
    /// GASNet-1 contract makes matching them the client's business); the
    /// token says request or reply, [`AmMsg::category`] and
    /// [`AmMsg::args`] the rest. For GASNet-1 compatibility layers.
    pub fn gasnet1(
        index: AmIndex,
        f: impl Fn(Token<'_>, &AmMsg<'_>) + Send + Sync + 'static,
    ) -> Self {
        let mut e = Self::new(
            index,
            Flags::AM_SHORT | Flags::AM_MEDLONG,
            AM_MAX_ARGS as u32,
            Flags::AM_REQREP,
            HandlerFn::ReqRep(Arc::new(f)),
        );
        e.any_shape = true;
        e
    }

    /// Whether this is a GASNet-1 handler of any category and argument
    /// count ([`HandlerEntry::gasnet1`]).
    pub fn is_gasnet1(&self) -> bool {
        self.any_shape
    }

    /// Names the handler (used in error messages).
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Attaches client data, visible through token info.
    pub fn with_cdata(mut self, cdata: CData) -> Self {
        self.cdata = Some(cdata);
        self
    }

    /// The registration flags (category and request/reply).
    pub fn flags(&self) -> Flags {
        self.flags
    }

    /// The argument count.
    pub fn nargs(&self) -> u32 {
        self.nargs
    }

    /// The name, if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The client data, if any.
    pub fn cdata(&self) -> Option<&CData> {
        self.cdata.as_ref()
    }

    fn validate(&self, internal: bool) -> Result<()> {
        let what = || match &self.name {
            Some(n) => format!("handler {n:?}"),
            None => format!("handler entry with index {}", self.index),
        };
        let cat = self.flags & Flags::AM_MEDLONG.union(Flags::AM_SHORT);
        if !(cat == Flags::AM_SHORT
            || cat == Flags::AM_MEDIUM
            || cat == Flags::AM_LONG
            || cat == Flags::AM_MEDLONG
            || (self.any_shape && cat == Flags::AM_SHORT | Flags::AM_MEDLONG))
        {
            return Err(Error::bad_arg(format!(
                "{}: the category must be exactly one of AM_SHORT, AM_MEDIUM, AM_LONG, AM_MEDLONG (got {cat:?})",
                what()
            )));
        }
        let kind = match self.func {
            HandlerFn::Request(_) => Flags::AM_REQUEST,
            HandlerFn::Reply(_) => Flags::AM_REPLY,
            HandlerFn::ReqRep(_) => Flags::AM_REQREP,
        };
        if self.flags & Flags::AM_REQREP != kind {
            return Err(Error::bad_arg(format!(
                "{}: the category argument may not carry AM_REQUEST/AM_REPLY: the constructor \
                 (request, reply, req_rep) decides which token the handler gets",
                what()
            )));
        }
        let other = self.flags - (Flags::AM_SHORT | Flags::AM_MEDLONG | Flags::AM_REQREP);
        if !other.is_empty() {
            return Err(Error::bad_arg(format!(
                "{}: flags {other:?} are not registration flags",
                what()
            )));
        }
        if self.nargs as usize > AM_MAX_ARGS {
            return Err(Error::bad_arg(format!(
                "{}: nargs {} exceeds gex_AM_MaxArgs() = {AM_MAX_ARGS}",
                what(),
                self.nargs
            )));
        }
        let ok_index = if internal {
            self.index >= 1 && self.index < AM_INDEX_BASE
        } else {
            self.index == 0 || self.index >= AM_INDEX_BASE
        };
        if !ok_index {
            return Err(Error::bad_arg(if internal {
                format!(
                    "{}: internal handlers need a fixed index in [1, {AM_INDEX_BASE})",
                    what()
                )
            } else {
                format!(
                    "{}: index {} is neither 0 nor in [{AM_INDEX_BASE}, 255]",
                    what(),
                    self.index
                )
            }));
        }
        Ok(())
    }

    pub(crate) fn accepts(&self, category: AmCategory, is_request: bool) -> bool {
        let c = match category {
            AmCategory::Short => Flags::AM_SHORT,
            AmCategory::Medium => Flags::AM_MEDIUM,
            AmCategory::Long => Flags::AM_LONG,
        };
        let k = if is_request {
            Flags::AM_REQUEST
        } else {
            Flags::AM_REPLY
        };
        self.flags.contains(c) && self.flags.contains(k)
    }
}

/// The AM state of an endpoint: its handler table.
pub(crate) struct AmLayer {
    pub(crate) ep: Ep,
    slots: Box<[OnceLock<HandlerEntry>]>,
    registering: Mutex<()>,
}

impl AmLayer {
    /// The AM layer of `ep`, created and installed as the endpoint's
    /// dispatcher on first use.
    pub(crate) fn of(ep: &Ep) -> Result<&AmLayer> {
        if let Some(l) = ep.existing_layer_state::<AmLayer>() {
            return Ok(l);
        }
        if !ep.capabilities().contains(EpCapabilities::AM) {
            return Err(gex_core::ep_not_am_capable(ep));
        }
        let mut created = false;
        let layer = ep
            .layer_state(|| {
                created = true;
                Arc::new(AmLayer {
                    ep: ep.clone(),
                    slots: (0..256).map(|_| OnceLock::new()).collect(),
                    registering: Mutex::new(()),
                })
            })
            .ok_or_else(|| Error::bad_arg("endpoint state is owned by another layer"))?;
        if created {
            // The table lives as long as the process (see `unsafe_static`);
            // from now on messages for this endpoint's index run in it.
            let ptr: &'static AmLayer = unsafe_static(layer);
            let _ = EP_LAYERS[ep.index() as usize].set(ptr);
            // One dispatcher per process, routing by endpoint index,
            // installed by the first endpoint to register.
            let rt = ep.runtime();
            let _g = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
            if !SINK_INSTALLED.load(Ordering::Acquire) {
                rt.install_sink(Box::new(Dispatch))?;
                SINK_INSTALLED.store(true, Ordering::Release);
            }
        }
        Ok(layer)
    }

    #[inline]
    pub(crate) fn entry(&self, index: AmIndex) -> Option<&HandlerEntry> {
        self.slots[index as usize].get()
    }

    pub(crate) fn register(&self, table: &mut [HandlerEntry], internal: bool) -> Result<()> {
        let _g = self.registering.lock().unwrap_or_else(|p| p.into_inner());
        for e in table.iter() {
            e.validate(internal)?;
        }
        // Fixed indices first: unique within the table and the endpoint.
        let mut taken: Vec<bool> = (0..256).map(|i| self.slots[i].get().is_some()).collect();
        for e in table.iter().filter(|e| e.index != 0) {
            if taken[e.index as usize] {
                return Err(Error::bad_arg(format!(
                    "handler index {} is already registered on this endpoint{}",
                    e.index,
                    e.name
                        .as_ref()
                        .map(|n| format!(" (registering {n:?})"))
                        .unwrap_or_default()
                )));
            }
            taken[e.index as usize] = true;
        }
        // Then "don't care" entries, in table order, each taking the highest
        // index still free.
        let mut assigned = Vec::with_capacity(table.len());
        for e in table.iter() {
            if e.index != 0 {
                assigned.push(e.index);
                continue;
            }
            let free = (AM_INDEX_BASE as usize..=255)
                .rev()
                .find(|&i| !taken[i])
                .ok_or_else(|| {
                    Error::resource(format!(
                        "no free handler index left in [{AM_INDEX_BASE}, 255] for {}",
                        e.name.as_deref().unwrap_or("an index-0 entry")
                    ))
                })?;
            taken[free] = true;
            assigned.push(free as AmIndex);
        }
        for (e, idx) in table.iter_mut().zip(assigned) {
            e.index = idx;
            let _ = self.slots[idx as usize].set(e.clone());
        }
        Ok(())
    }
}

/// Extends the lifetime of the endpoint's layer state to `'static`.
fn unsafe_static(layer: &AmLayer) -> &'static AmLayer {
    // SAFETY: the layer lives in an Arc stored in the endpoint's OnceLock,
    // and the endpoint is referenced by the layer itself (a deliberate
    // cycle), so the allocation is never freed while the process runs.
    unsafe { &*(layer as *const AmLayer) }
}

/// The handler table of each endpoint index of this process, set when the
/// endpoint first registers handlers (an endpoint index is never reused).
static EP_LAYERS: [OnceLock<&'static AmLayer>; MAX_EPS] = [const { OnceLock::new() }; MAX_EPS];
static INSTALL: Mutex<()> = Mutex::new(());
static SINK_INSTALLED: AtomicBool = AtomicBool::new(false);

/// The process's AM dispatcher: runs each message in the handler table of
/// the endpoint it names.
struct Dispatch;

impl AmSink for Dispatch {
    #[inline]
    fn deliver(&self, msg: &IncomingAm<'_>) {
        // Both indices are untrusted; MAX_EPS is a power of two, so one
        // comparison checks both.
        if (msg.src_ep | msg.dest_ep) as usize >= MAX_EPS {
            bad_endpoint(msg)
        }
        match EP_LAYERS[msg.dest_ep as usize].get() {
            Some(layer) => layer.dispatch(msg),
            None => bad_endpoint(msg),
        }
    }
}

/// A message for an endpoint index that cannot run it (out of range, not
/// created here, without the AM capability, no handler registered), or
/// from an impossible source index: fatal, with the reason.
#[cold]
#[inline(never)]
fn bad_endpoint(msg: &IncomingAm<'_>) -> ! {
    let what = format!(
        "an AM {} {} for handler {} from rank {} endpoint {} to endpoint {} of this rank",
        msg.category.name(),
        if msg.is_request { "request" } else { "reply" },
        msg.handler,
        msg.src,
        msg.src_ep,
        msg.dest_ep
    );
    let why = if msg.src_ep as usize >= MAX_EPS {
        format!(
            "the source endpoint index {} is impossible (GASNET_MAXEPS is {MAX_EPS})",
            msg.src_ep
        )
    } else if msg.dest_ep as usize >= MAX_EPS {
        format!(
            "no process has endpoint index {} (GASNET_MAXEPS is {MAX_EPS})",
            msg.dest_ep
        )
    } else {
        match gex_core::local_ep_capabilities(msg.dest_ep as EpIndex) {
            None => format!(
                "this rank has not created endpoint {} (endpoints are created locally, not collectively: the sender must make sure the target endpoint exists, and has its handlers, before sending to it)",
                msg.dest_ep
            ),
            Some(c) if !c.contains(EpCapabilities::AM) => format!(
                "endpoint {} was created without GEX_EP_CAPABILITY_AM ({c:?})",
                msg.dest_ep
            ),
            Some(_) => format!("endpoint {} has no handler registered", msg.dest_ep),
        }
    };
    gex_core::fatal(&format!("{what}: {why}"))
}

impl AmLayer {
    #[inline]
    fn dispatch(&self, msg: &IncomingAm<'_>) {
        let Some(entry) = self.entry(msg.handler) else {
            gex_core::fatal(&format!(
                "an AM {} {} for handler index {} arrived from rank {}, but no handler is registered there",
                msg.category.name(),
                if msg.is_request { "request" } else { "reply" },
                msg.handler,
                msg.src
            ))
        };
        if !entry.accepts(msg.category, msg.is_request)
            || (msg.args.len() != entry.nargs as usize && !entry.any_shape)
        {
            gex_core::fatal(&format!(
                "an AM {} {} with {} args from rank {} violates the registration of handler {} ({:?}, {} args)",
                msg.category.name(),
                if msg.is_request { "request" } else { "reply" },
                msg.args.len(),
                msg.src,
                entry.name.as_deref().unwrap_or(&msg.handler.to_string()),
                entry.flags,
                entry.nargs
            ))
        }
        let m = AmMsg {
            category: msg.category,
            args: msg.args,
            payload: msg.payload,
            dest_addr: msg.dest_addr,
        };
        let ctx = TokenCtx {
            layer: self,
            entry,
            src: msg.src,
            src_ep: msg.src_ep,
            category: msg.category,
        };
        let scope = HandlerScope::enter(msg.is_request);
        match (&entry.func, msg.is_request) {
            (HandlerFn::Request(f), _) => f(RequestToken::new(ctx), &m),
            (HandlerFn::Reply(f), _) => f(&ReplyToken::new(ctx), &m),
            (HandlerFn::ReqRep(f), true) => f(Token::Request(RequestToken::new(ctx)), &m),
            (HandlerFn::ReqRep(f), false) => f(Token::Reply(ReplyToken::new(ctx)), &m),
        }
        if hsls_held() != scope.hsls_at_entry() {
            gex_core::fatal(&format!(
                "AM handler {} returned while holding a handler-safe lock",
                entry.name.as_deref().unwrap_or(&msg.handler.to_string())
            ));
        }
    }
}

/// Registers `table` on `ep` (`gex_EP_RegisterHandlers`).
///
/// Fixed indices must be unique across the table and every earlier
/// registration on the endpoint; entries with index 0 then get, in table
/// order, the highest index still free, written back into `table`. Not
/// collective: register before any peer may send to the handlers. The whole
/// table is checked before anything is registered, so an error registers
/// nothing.
pub fn register_handlers(ep: &Ep, table: &mut [HandlerEntry]) -> Result<()> {
    AmLayer::of(ep)?.register(table, false)
}

/// Registers handlers of a gex layer at fixed indices in `[1, AM_INDEX_BASE)`
/// (reserved to the library). For layers built on the AM layer, not clients.
/// Returns the layer's right to send requests to these handlers: client
/// calls may not name reserved indices.
pub fn register_internal_handlers(ep: &Ep, table: &mut [HandlerEntry]) -> Result<LayerAm> {
    AmLayer::of(ep)?.register(table, true)?;
    Ok(LayerAm::new(ep, table.iter().map(|e| e.index)))
}

/// The entry registered at `index` on `ep`, if any.
pub fn registered_handler(ep: &Ep, index: AmIndex) -> Option<HandlerEntry> {
    ep.existing_layer_state::<AmLayer>()
        .and_then(|l| l.entry(index).cloned())
}
