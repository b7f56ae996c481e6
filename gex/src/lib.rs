//! gex: GASNet-EX in Rust.
//!
//! A gex program is one process per rank. The ranks are started together
//! by the launcher (`gex-run -n 4 ./prog`, or `srun`/`mpirun` with a
//! rendezvous), join the job in [`init`], and then talk to each other with
//! Active Messages, one-sided puts and gets, and collectives. A program
//! started on its own, without a launcher, is a job of one rank: that is
//! how every example on these pages runs.
//!
//! # A tour
//!
//! 1. **Start.** [`init`] joins the job and returns the three objects of the
//!    spec's object model: the [`Client`], its endpoint [`Ep`] and the
//!    primordial team [`Tm`] (every rank of the job). `tm.rank()` and
//!    `tm.size()` say who this rank is. The conduit (the transport) is the
//!    one the launcher chose (`gex-run --conduit smp|udp|ibv`), or the first
//!    compiled in ([`conduits`]).
//! 2. **Memory.** [`Segment::attach`] creates this rank's segment, the
//!    memory other ranks may read and write; it is collective. Remote
//!    addresses are the owner's addresses, or offsets with
//!    [`Flags::PEER_SEG_OFFSET`].
//! 3. **Active Messages** ([`am`]): register handlers in a table
//!    ([`am::register_handlers`]), then `tm.request_short` /
//!    `request_medium` / `request_long` ([`am::AmRequest`]); a request
//!    handler may reply through its token.
//! 4. **Puts and gets** ([`rma`]): `tm.put_blocking`, `tm.get_blocking`, and
//!    the non-blocking `put_nb`/`get_nb` (an [`Event`] to wait on) and
//!    `put_nbi`/`get_nbi` (completion per thread, [`nbi`]) of
//!    [`rma::Rma`].
//! 5. **Collectives and teams** ([`coll`]): barrier, broadcast, reductions,
//!    scatter, gather, exchange, and new teams by split or create.
//! 6. **Waiting.** Every non-blocking call returns an [`Event`]
//!    (`wait`, `test`), or counts toward the thread's implicit events
//!    ([`nbi::wait`]). [`poll`] and [`block_until`] run arrived messages.
//! 7. **The end.** Returning from `main` ends this rank; [`exit`] ends the
//!    whole job with a code. Errors are [`Error`] values whose
//!    [`ErrorKind`] is the spec's return code and whose message names the
//!    call and what was wrong.
//!
//! ```
//! # fn main() -> gex::Result<()> {
//! let (_client, ep, tm) = gex::init("TOUR")?;
//! let seg = gex::Segment::attach(&tm, 4096)?;
//! seg.write(0, b"mine")?;
//! # let _ = ep;
//! println!("rank {} of {}", tm.rank(), tm.size());
//! gex::barrier(&tm)?;
//! # Ok(())
//! # }
//! ```
//!
//! Ending: every rank returns from `main` (each rank ends on its own; the
//! launcher reports the job's code once all have), or one rank ends the
//! whole job at once, even from a handler:
//!
//! ```
//! let (_client, _ep, tm) = gex::init("BYE").expect("init");
//! if tm.rank() == 0 {
//!     // Every rank ends now, and the job's exit code is 0.
//!     gex::exit(0);
//! }
//! ```
//!
//! Calls that are illegal in an AM handler or while a handler-safe lock
//! ([`Hsl`]) is held return an error there rather than deadlocking
//! ([`context`]).
//!
//! # Settings
//!
//! [`init`] reads the settings from the `GEX_*` variables
//! ([`Config::from_env`]; a value that does not parse is an error naming
//! the variable); a program or an embedding runtime that decides them in
//! code builds a [`Config`] (one typed struct per crate, each field naming
//! its variable and default) and calls [`init_with_config`]:
//!
//! ```no_run
//! let mut config = gex::Config::default(); // no variable is read
//! config.conduit = Some("udp".into());
//! config.udp.mtu = Some(1472);
//! let (_client, _ep, tm) = gex::init_with_config("APP", gex::Flags::empty(), &config)?;
//! # Ok::<(), gex::Error>(())
//! ```
//!
//! # What is not here
//!
//! This crate exports what a program uses. The machinery under it (the
//! conduit interface, the runtime handle, handler-scope bookkeeping, the
//! control plane's wire format, the raw segment tables, the layers' own
//! AM handlers) is reachable only through the crates that define it
//! (`gex-core`, `gex-conduit`, `gex-bootstrap`, `gex-am`, `gex-rma`,
//! `gex-ratomic`, `gex-vis`, `gex-coll`, `gex-mk`, `gex-conduit-smp`, `gex-conduit-udp`, `gex-conduit-ibv`), where it is marked
//! "For layer and conduit authors": with it a caller can skip the checks
//! this surface makes. A runtime that embeds one layer, or brings its own
//! transport, depends on those crates directly.
//!
//! # Cargo features
//!
//! One per layer (`am`, `rma`, `ratomic`, `vis`, `coll`, `mk`) and conduit (`smp`, `udp`); all are
//! on by default. The ibv conduit (`ibv`, InfiniBand verbs with a simulated
//! device; `ibv-rdma-sys` adds the libibverbs provider) is off by default.

#![warn(missing_docs)]

mod config;
pub use config::{init_with_config, init_with_factory, Config};

pub use gex_core::{
    block_until, exit, fatal, poll, system, BoundSegment, CData, Client, Ep, Event, Hsl, HslGuard,
    Lc, Segment, Tm, TmPair, TmRef,
};
pub use gex_types::*;

/// The conduit's counters on this rank (`GEX_STATS=1` prints them at exit).
pub use gex_core::stats::stats;

/// The conduit's counters ([`stats()`](crate::stats())).
pub mod stats {
    pub use gex_core::stats::{ConduitStats, Counter, PeerCounters};
}

/// Calling-context queries: whether this thread runs an AM handler or
/// holds handler-safe locks, and so whether it may communicate.
pub mod context {
    pub use gex_core::context::{hsls_held, in_handler, may_communicate};
}

/// Implicit-event (NBI) operations: completion per thread and event
/// category (`gex_NBI_Test`, `gex_NBI_Wait`), and access regions
/// (`gex_NBI_BeginAccessRegion`, `gex_NBI_EndAccessRegion`).
///
/// ```
/// # fn main() -> gex::Result<()> {
/// use gex::rma::Rma;
/// use gex::{Ec, Flags, Segment, TmRef};
///
/// let (_client, _ep, tm) = gex::init("NBI")?;
/// let seg = Segment::attach(&tm, 4096)?;
/// let me = tm.rank();
/// // Remote addresses are the owner's (or offsets, with PEER_SEG_OFFSET).
/// let dest = tm.query_bound_segment(me, Flags::empty())?.unwrap().owner_addr;
/// tm.put_nbi(me, dest + 8, &[7u8; 64], gex::Lc::Now, Flags::empty())?;
/// gex::nbi::wait(Ec::PUT, Flags::empty())?;
/// let mut back = [0u8; 64];
/// seg.read(8, &mut back)?;
/// assert_eq!(back, [7u8; 64]);
/// # Ok(())
/// # }
/// ```
pub mod nbi {
    pub use gex_core::nbi::{begin_access_region, end_access_region, in_access_region, test, wait};
}

/// Active Messages (feature `am`): handler tables, requests, replies,
/// tokens, negotiated payloads and the payload limits.
///
/// ```
/// # fn main() -> gex::Result<()> {
/// use std::sync::atomic::{AtomicI32, Ordering};
/// use gex::am::{register_handlers, AmRequest, HandlerEntry};
/// use gex::Flags;
///
/// static GOT: AtomicI32 = AtomicI32::new(0);
///
/// let (_client, ep, tm) = gex::init("AM")?;
/// // A Short request handler with one argument; the index is chosen at
/// // registration (128 and up belong to the program).
/// let mut table = [HandlerEntry::request(0, Flags::AM_SHORT, 1, |_tok, msg| {
///     GOT.store(msg.arg(0), Ordering::Release);
/// })];
/// register_handlers(&ep, &mut table)?;
/// let peer = (tm.rank() + 1) % tm.size();
/// tm.request_short(peer, table[0].index, Flags::empty(), &[42])?;
/// gex::block_until(|| GOT.load(Ordering::Acquire) == 42)?;
/// # Ok(())
/// # }
/// ```
#[cfg(feature = "am")]
pub mod am {
    pub use gex_am::{
        lub_limits, lub_reply_long, lub_reply_medium, lub_request_long, lub_request_medium,
        max_args, register_handlers, registered_handler, AmMsg, AmRequest, HandlerEntry, Injected,
        LcOpt, PrepareBuf, Replied, ReplyToken, RequestToken, SrcDesc, Token, TokenInfo,
    };
    /// The payload limits [`lub_limits`] returns.
    pub use gex_core::conduit::AmLimits;
}

/// Puts and gets (feature `rma`): blocking, non-blocking with an event,
/// and implicit-event calls on any team ([`Rma`](rma::Rma)).
///
/// ```
/// # fn main() -> gex::Result<()> {
/// use gex::rma::Rma;
/// use gex::{Flags, Segment};
///
/// let (_client, _ep, tm) = gex::init("RMA")?;
/// let _seg = Segment::attach(&tm, 1 << 16)?;
/// let peer = (tm.rank() + 1) % tm.size();
/// // Remote addresses as offsets into the peer's segment.
/// tm.put_blocking(peer, 128, b"hello", Flags::PEER_SEG_OFFSET)?;
/// let mut back = [0u8; 5];
/// tm.get_blocking(&mut back, peer, 128, Flags::PEER_SEG_OFFSET)?;
/// assert_eq!(&back, b"hello");
/// // Non-blocking: the event borrows `back` until it completes.
/// tm.get_nb(&mut back, peer, 129, Flags::PEER_SEG_OFFSET)?.wait()?;
/// assert_eq!(&back[..4], b"ello");
/// # Ok(())
/// # }
/// ```
#[cfg(feature = "rma")]
pub mod rma {
    pub use gex_rma::{
        force_am, route, route_to, set_force_am, Dst, Injected, Rma, Route, Src, FAST_FLAGS,
    };
}

/// Remote atomics (feature `ratomic`): an [`AtomicDomain`](ratomic::AtomicDomain)
/// created collectively over a team for one type and a set of operations,
/// and its operations on any member's segment.
///
/// ```
/// # fn main() -> gex::Result<()> {
/// use gex::ratomic::AtomicDomain;
/// use gex::{Dt, Flags, Op, Ops, Segment};
///
/// let (_client, _ep, tm) = gex::init("RATOMIC")?;
/// let _seg = Segment::attach(&tm, 1 << 16)?;
/// let ad = AtomicDomain::create(&tm, Dt::U64, Ops::FADD | Ops::GET, Flags::empty())?;
/// let peer = (tm.rank() + 1) % tm.size();
/// let before = ad.op_blocking::<u64>(peer, 64, Op::Fadd, 5, 0, Flags::PEER_SEG_OFFSET)?;
/// let mut now = 0u64;
/// ad.op_nb(Some(&mut now), peer, 64, Op::Get, 0, 0, Flags::PEER_SEG_OFFSET)?.wait()?;
/// assert!(now >= before + 5);
/// # gex::barrier(&tm)?;
/// ad.destroy().map_err(|(e, _)| e)?;
/// # Ok(())
/// # }
/// ```
#[cfg(feature = "ratomic")]
pub mod ratomic {
    pub use gex_ratomic::{AdType, AtomicDomain, Injected, Mechanism, Route};
}

/// Vector, indexed and strided transfers (feature `vis`): the
/// `gex_VIS_*` calls on any team ([`Vis`](vis::Vis)).
///
/// ```
/// # fn main() -> gex::Result<()> {
/// use gex::vis::{StridedLocal, Vis};
/// use gex::{Flags, Memvec, Segment};
///
/// let (_client, _ep, tm) = gex::init("VIS")?;
/// let _seg = Segment::attach(&tm, 1 << 16)?;
/// let peer = (tm.rank() + 1) % tm.size();
/// // Two pieces of the stream "hello world" to offsets 0 and 100.
/// let dst = [Memvec::new(0, 5), Memvec::new(100, 6)];
/// tm.vector_put_blocking(peer, &dst, &[b"hel", b"lo world"], Flags::PEER_SEG_OFFSET)?;
/// let (mut a, mut b) = ([0u8; 5], [0u8; 6]);
/// tm.vector_get_blocking(&mut [&mut a, &mut b], peer, &dst, Flags::PEER_SEG_OFFSET)?;
/// assert_eq!((&a, &b), (b"hello", b" world"));
/// // A 2 x 3 block of bytes out of rows of 10 into rows of 3.
/// let src: Vec<u8> = (0..20).collect();
/// tm.strided_put_blocking(peer, 200, &[1, 3], StridedLocal::new(&src[..], 0), &[1, 10], 1, &[3, 2], Flags::PEER_SEG_OFFSET)?;
/// let (mut r0, mut r1) = ([0u8; 3], [0u8; 3]);
/// tm.indexed_get_blocking(&mut [&mut r0, &mut r1], 3, peer, &[200, 203], 3, Flags::PEER_SEG_OFFSET)?;
/// assert_eq!((r0, r1), ([0, 1, 2], [10, 11, 12]));
/// # Ok(())
/// # }
/// ```
#[cfg(feature = "vis")]
pub mod vis {
    pub use gex_vis::{
        force_am, route, set_force_am, set_peer_completion_handler, Injected, Route, StridedLocal,
        Vis, MAX_PEERCOMPLETION,
    };
}

/// Collectives and teams (feature `coll`).
///
/// ```
/// # fn main() -> gex::Result<()> {
/// use gex::coll::{barrier_nb, broadcast_nb, reduce_to_all_nb_typed};
/// use gex::{Flags, Op};
///
/// let (_client, _ep, tm) = gex::init("COLL")?;
/// barrier_nb(&tm, Flags::empty())?.wait()?;
/// let mut buf = [0u8; 4];
/// let data = *b"root";
/// let mine = (tm.rank() == 0).then_some(&data[..]);
/// broadcast_nb(&tm, 0, &mut buf, mine, Flags::empty())?.wait()?;
/// assert_eq!(&buf, b"root");
/// let mut sum = [0u64];
/// reduce_to_all_nb_typed(&tm, &mut sum, Some(&[tm.rank() as u64 + 1][..]), &Op::Add.into(), Flags::empty())?
///     .wait()?;
/// assert_eq!(sum[0], (1..=tm.size() as u64).sum());
/// # Ok(())
/// # }
/// ```
#[cfg(feature = "coll")]
pub mod coll {
    pub use gex_coll::{
        all_get, all_get_nb, all_geti, all_geti_nb, all_put, all_put_nb, all_puti, all_puti_nb,
        barrier, barrier_blocking, barrier_nb, barrier_notify, barrier_result, barrier_try,
        barrier_uses_shared_memory, barrier_wait, broadcast, broadcast_nb, broadcast_nb_with,
        broadcast_with, broadcasti, broadcasti_nb, exchange, exchange_nb, exchange_nb_with,
        exchange_with, exchangei, exchangei_nb, gather, gather_all, gather_all_nb,
        gather_all_nb_with, gather_all_with, gather_alli, gather_alli_nb, gather_nb,
        gather_nb_with, gather_with, gatheri, gatheri_nb, recommended_scratch_size,
        reduce_sequential, reduce_to_all, reduce_to_all_nb, reduce_to_all_nb_typed,
        reduce_to_all_typed, reduce_to_one, reduce_to_one_nb, reduce_to_one_nb_typed,
        reduce_to_one_typed, reductions_over_am, scatter, scatter_nb, scatter_nb_with,
        scatter_with, scatteri, scatteri_nb, tm_create, tm_create_scratch_size,
        tm_create_scratch_size_for, tm_destroy, tm_split, tm_split_scratch_size, Addrs, CollHandle,
        Elem, Images, Partners, ReduceOp, UserReduceFn, BARRIERFLAG_ANONYMOUS,
        BARRIERFLAG_MISMATCH, BARRIERFLAG_UNNAMED,
    };
}

/// Memory kinds and created segments (feature `mk`): `GEX_MK_HOST`
/// ([`Mk::host`](mk::Mk::host)), [`mk_create`](mk::mk_create),
/// [`segment_create`](mk::segment_create) (library memory) and
/// [`segment_create_at`](mk::segment_create_at) (client memory),
/// [`segment_destroy`](mk::segment_destroy), binding to a created endpoint
/// ([`ep_bind_segment`](mk::ep_bind_segment)) and publication
/// ([`ep_publish_bound_segment`](mk::ep_publish_bound_segment)), after which
/// RMA over a TM-pair naming the endpoint reaches the segment.
#[cfg(feature = "mk")]
pub mod mk {
    pub use gex_mk::{
        ep_bind_segment, ep_publish_bound_segment, mk_create, register_class, segment_create,
        segment_create_at, segment_destroy, segment_kind, KindFactory, KindMemory, MemoryKind, Mk,
        MkArgs, MkClass,
    };
}

/// The conduits compiled into this build, by name; the first is the
/// default.
pub fn conduits() -> Vec<&'static str> {
    [
        #[cfg(feature = "smp")]
        "smp",
        #[cfg(feature = "udp")]
        "udp",
        #[cfg(feature = "ibv")]
        "ibv",
    ]
    .to_vec()
}

/// Initialises the client (`gex_Client_Init`) and joins the job, on the
/// conduit the launcher chose (`GEX_CONDUIT`, which `gex-run --conduit`
/// sets), or the first one compiled in, with the settings of the
/// environment ([`Config::from_env`]). Collective: every rank of the job
/// calls it, and it returns on any rank once every rank has initialised.
///
/// `name` is the client's name (`[A-Z][A-Z0-9_]+`, the same on every
/// rank). One client per process: a second call fails. Without a launcher
/// the process is a job of one rank.
///
/// ```
/// # fn main() -> gex::Result<()> {
/// let (client, ep, tm) = gex::init("HELLO")?;
/// assert_eq!(client.name(), "HELLO");
/// assert!(tm.rank() < tm.size());
/// assert_eq!(gex::system::query_job_size()?, tm.size());
/// # let _ = ep;
/// // One client per process.
/// assert!(gex::init("AGAIN").is_err());
/// # Ok(())
/// # }
/// ```
pub fn init(name: &str) -> Result<(Client, Ep, Tm)> {
    init_with_flags(name, Flags::empty())
}

/// [`init`] with flags (`gex_Client_Init`'s `flags`).
pub fn init_with_flags(name: &str, flags: Flags) -> Result<(Client, Ep, Tm)> {
    let config = Config::from_env().map_err(gex_core::report)?;
    init_with_config(name, flags, &config)
}

/// A barrier over the primordial team through the start-up control plane.
/// Slow (a round trip through the launcher): for set-up and tests; the
/// collectives layer provides the fast one ([`coll::barrier`]).
///
/// ```
/// # fn main() -> gex::Result<()> {
/// let (_client, _ep, tm) = gex::init("BARRIER")?;
/// gex::barrier(&tm)?;
/// # Ok(())
/// # }
/// ```
pub fn barrier(tm: &Tm) -> Result<()> {
    gex_core::context::check_may_communicate("gex::barrier")?;
    if !tm.is_primordial() {
        return Err(Error::bad_arg("gex::barrier: only the primordial team"));
    }
    gex_core::internals::EpInternals::runtime(tm.ep()).bootstrap_barrier()
}

/// The runtime's internals are not part of this crate's surface; each of
/// these fails to compile (they are reachable, for layer and conduit
/// authors, only through their own crates).
///
/// The runtime handle (the conduit, progress hooks, raw segments):
/// ```compile_fail
/// let _ = gex::Runtime::get();
/// ```
/// The conduit interface:
/// ```compile_fail
/// fn f(_: &dyn gex::ConduitFactory) {}
/// ```
/// The runtime behind the objects, and the layers' state slots in them:
/// ```compile_fail
/// let (_client, ep, _tm) = gex::init("X").unwrap();
/// let _ = ep.runtime();
/// ```
/// ```compile_fail
/// let (_client, ep, _tm) = gex::init("X").unwrap();
/// let _ = ep.layer_state(|| std::sync::Arc::new(0u32));
/// ```
/// A team made without asking its members:
/// ```compile_fail
/// let (_client, _ep, tm) = gex::init("X").unwrap();
/// let _ = tm.new_subteam(vec![0], gex::Flags::empty());
/// ```
/// Handler-scope entry:
/// ```compile_fail
/// let _scope = gex::context::HandlerScope::enter(true);
/// ```
/// The raw segment tables:
/// ```compile_fail
/// let _ = gex::segment_table();
/// ```
/// The layers' reserved AM indices and their protocols:
/// ```compile_fail
/// let _ = gex::am::register_internal_handlers;
/// ```
/// ```compile_fail
/// let _ = gex::rma::ampath::register;
/// ```
/// ```compile_fail
/// let _ = gex::ratomic::ampath::register;
/// ```
/// ```compile_fail
/// let _ = gex::vis::ampath::register;
/// ```
/// NBI tracking of a layer's operations:
/// ```compile_fail
/// let _ = gex::nbi::track(gex::Ec::PUT);
/// ```
/// The conduits' own types:
/// ```compile_fail
/// let _ = gex::smp::SmpTransport::new;
/// ```
/// While the program's calls next to them compile:
/// ```no_run
/// let _ = gex::context::in_handler();
/// let _ = gex::nbi::wait(gex::Ec::PUT, gex::Flags::empty());
/// let _ = gex::am::register_handlers;
/// let _ = gex::rma::route;
/// let _ = gex::poll();
/// ```
#[cfg(doctest)]
pub struct InternalsAreNotExported;
