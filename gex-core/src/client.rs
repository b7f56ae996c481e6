//! The object model: clients, endpoints, teams, TM-pairs and segments
//! (spec: "Operations on gex_Client_t / gex_Segment_t / gex_TM_t / gex_EP_t").
//!
//! # Endpoints
//!
//! `Ep::create(&client, capabilities, flags)` (`gex_EP_Create`) makes an
//! endpoint with the next index of the process (1, 2, ..., below
//! `gex_types::MAX_EPS` = 32; the primordial endpoint is 0), under a mutex
//! of the client. Creation is local, as in the spec: a peer learns of an
//! endpoint only by being told its index. The index is also recorded with
//! its capabilities in a static table (`local_ep_capabilities`), read only
//! on error paths to say why a message cannot run. A created endpoint has
//! no bound segment until gex-mk binds one, and belongs to no team: teams
//! are built from the primordial team only, so everything that takes a team
//! (`Segment::attach`, collectives, atomic domains) is closed to created
//! endpoints by type. They are used through TM-pairs.
//!
//! *Addressing.* `TmRef` has three ways to name a peer:
//!
//! - `jobrank_of(rank)` is for calls that reach the peer's segment through
//!   the primordial tables (atomics): over a pair naming an index other
//!   than 0 it is an error.
//! - `rma_jobrank_of(rank)` (gex-rma, gex-vis) accepts any index below
//!   `MAX_EPS` and goes with `fast_entry(rank)` and `peer_segment(jobrank)`,
//!   which read the table of the index the pair names (for a team: the
//!   primordial tables, inlined, so the team path is unchanged; for a pair,
//!   `fast_entry` reads the slot the pair keeps, see `crate::epseg`).
//! - `am_peer(rank)` gives the (jobrank, endpoint index) an Active Message
//!   goes to: for a team `jobrank_of` and index 0, inlined; for a pair it
//!   also checks that the local endpoint has the AM capability and that the
//!   index is below `MAX_EPS`. Whether the peer has that index only the
//!   target can check.
//!
//! `local_has(cap)` / `require_local(call, cap)` tell whether the local
//! endpoint has a capability: a constant `true` for a team, a test of the
//! pair's endpoint otherwise (gex-rma refuses puts and gets from an
//! endpoint without `GEX_EP_CAPABILITY_RMA`).
//!
//! *On the wire.* `OutgoingAm` and `IncomingAm` carry `src_ep` and
//! `dest_ep` (0 unless set, so a conduit that knows nothing of endpoints
//! talks between primordial endpoints); both fit a byte. The smp record
//! header packs them into its 8 bytes (category, destination index,
//! handler, argument count, a word of payload length in the low 24 bits and
//! source index in the high 8); the udp AM header has 12 bytes.
//!
//! *Long AMs to created endpoints.* A Long over a pair naming index k lands
//! in the segment bound to endpoint k of the target. The sender checks the
//! range against that segment as this process knows it (`epseg`; none
//! known is an error naming the endpoint, nothing sent). Conduits find it
//! through `gex_conduit::epseg::ep_segment(k, rank)`, a lookup gex-core
//! installs; only messages to created endpoints pay for the call. The
//! target checks the untrusted range against its own segment of endpoint k
//! (`gex_conduit::epseg::arrived_at_ep`, the one range check) before
//! anything is written; a failure is fatal, naming the sender, the endpoint
//! and the range. smp copies a Long into a neighbour's mapped library
//! memory at the sender; client memory is private, so such a Long travels
//! in the ring record and the target copies it (at most
//! `AmLimits::max_long_carried`, which `gex_AM_MaxRequestLong` over such a
//! pair reports). udp reassembles a Long for a created endpoint in the
//! message buffer and copies it at delivery; its limits are per peer
//! (`am_limits(peer)`), so over UDP every pair's `gex_AM_Max*Long` is at
//! least the LUB. Still below the LUB: a Long to a neighbour's client
//! memory (64 KiB, a ring record) on smp and through udp's bypass.

use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use gex_types::{
    EpCapabilities, EpIndex, EpLocation, Error, Flags, Rank, Result, MAX_EPS, RANK_INVALID,
};

use crate::bootstrap::Bootstrap;
use crate::conduit::{ConduitFactory, RangeError, SegmentDesc, ZeroLen};
use crate::context;
use crate::runtime::{report, Runtime};
use crate::system;

/// A layer's set-up, run by [`Client::init_with_layers`] on every rank: a
/// function such as `gex_rma::register`, or a closure that carries the
/// layer's settings (`&|ep| gex_rma::register_with(ep, &settings)`).
pub type LayerInit<'a> = &'a dyn Fn(&Ep) -> Result<()>;

/// gex-core's settings, read once at client init
/// ([`Client::init_with_settings`]). `Default` is what an empty
/// environment gives; [`ClientSettings::from_env`] reads the variables
/// named on each field, and an embedding runtime may build the struct in
/// code instead.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientSettings {
    /// `GEX_STATS` (`1`; default off): print this rank's conduit counters
    /// to standard error when the process exits.
    pub stats_at_exit: bool,
}

impl ClientSettings {
    /// The settings this process's environment gives; a value that does
    /// not parse is an error naming the variable.
    pub fn from_env() -> Result<ClientSettings> {
        Self::from_lookup(crate::bootstrap::vars::Lookup::env())
    }

    /// The settings `vars` gives (see [`ClientSettings::from_env`]).
    pub fn from_lookup(vars: crate::bootstrap::vars::Lookup<'_>) -> Result<ClientSettings> {
        Ok(ClientSettings {
            stats_at_exit: vars.flag("GEX_STATS", false)?,
        })
    }
}

/// Client data attached to an object (`gex_*_SetCData` / `QueryCData`).
pub type CData = Arc<dyn Any + Send + Sync>;

#[derive(Default)]
struct CDataSlot(Mutex<Option<CData>>);

impl CDataSlot {
    fn set(&self, v: Option<CData>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = v;
    }
    fn get(&self) -> Option<CData> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

struct ClientInner {
    name: String,
    flags: Flags,
    rt: &'static Runtime,
    cdata: CDataSlot,
    /// Endpoints made so far (the primordial one included): the next
    /// `gex_EP_Create` gets this index.
    ep_count: Mutex<EpIndex>,
}

/// A client of the library (`gex_Client_t`).
#[derive(Clone)]
pub struct Client(Arc<ClientInner>);

struct EpInner {
    client: Client,
    index: EpIndex,
    flags: Flags,
    caps: EpCapabilities,
    /// The primordial endpoint's segment (`gex_Segment_Attach`).
    segment: OnceLock<Segment>,
    /// A created segment bound to this endpoint (`gex_EP_BindSegment`;
    /// unbound again when the segment is destroyed): a created endpoint's,
    /// or the primordial one's in a job that binds instead of attaching.
    bound: Mutex<Option<Segment>>,
    cdata: CDataSlot,
    /// Layer state hung on the endpoint (the AM layer's handler table).
    ext: LayerSlot,
}

/// One value of any type a layer above hangs on an object, set once.
#[derive(Default)]
struct LayerSlot(OnceLock<Arc<dyn Any + Send + Sync>>);

impl LayerSlot {
    /// The value, made by `make` on first use; `None` if a value of
    /// another type was set first.
    fn get_or_init<T: Any + Send + Sync>(&self, make: impl FnOnce() -> Arc<T>) -> Option<&T> {
        self.0
            .get_or_init(|| make() as Arc<dyn Any + Send + Sync>)
            .downcast_ref::<T>()
    }

    /// The value set earlier, if of type `T`.
    #[inline]
    fn get<T: Any>(&self) -> Option<&T> {
        self.0.get().and_then(|a| a.downcast_ref::<T>())
    }
}

/// An endpoint (`gex_EP_t`): this process's communication context.
#[derive(Clone)]
pub struct Ep(Arc<EpInner>);

struct TmInner {
    ep: Ep,
    /// Process-unique identity, shared by every clone (see [`Tm::id`]).
    id: u64,
    /// Layer state hung on the team (gex-coll's view of it).
    ext: LayerSlot,
    rank: Rank,
    size: Rank,
    /// Jobrank of each member; `None` for the primordial team (identity).
    members: Option<Arc<[Rank]>>,
    flags: Flags,
    cdata: CDataSlot,
}

/// A team member (`gex_TM_t`): an ordered set of endpoints and the local
/// one's place in it.
#[derive(Clone)]
pub struct Tm(Arc<TmInner>);

/// A TM-pair (`gex_TM_Pair`): names an endpoint index in any process, for
/// point-to-point calls only. It is a distinct type so it cannot be passed
/// where the spec requires a real team.
#[derive(Clone)]
pub struct TmPair {
    ep: Ep,
    remote_index: EpIndex,
    /// `epseg::fast_slot(remote_index)`: where the direct route finds the
    /// remote endpoint's fast table.
    fast_slot: u8,
    /// The local endpoint's capabilities (fixed at its creation), kept
    /// here so the direct route checks them without reaching the endpoint.
    caps: EpCapabilities,
}

struct SegmentInner {
    client: Client,
    base: usize,
    size: usize,
    flags: Flags,
    cdata: CDataSlot,
    /// For a created segment (`gex_Segment_Create`): its memory kind, what
    /// holds its memory, where it is bound and whether it was destroyed.
    created: Option<Created>,
}

struct Created {
    kind: CData,
    backing: Mutex<Option<Box<dyn Any + Send>>>,
    /// The endpoints it is bound to, in order of binding (weak: an
    /// endpoint holds its segment). One segment may be bound to several
    /// endpoints of its process, as the reference allows.
    bound: Mutex<Vec<(EpIndex, std::sync::Weak<EpInner>)>>,
    destroyed: std::sync::atomic::AtomicBool,
}

/// A segment (`gex_Segment_t`): memory registered for remote access.
#[derive(Clone)]
pub struct Segment(Arc<SegmentInner>);

/// The properties of a (possibly remote) bound segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoundSegment {
    /// Base address in the owner's address space.
    pub owner_addr: usize,
    /// Base address in this process, if mapped here.
    pub local_addr: Option<usize>,
    /// Length in bytes.
    pub size: usize,
}

/// What names the peer of a point-to-point call: a team ([`Tm`]) or a
/// TM-pair ([`TmPair`]), together with a rank.
pub trait TmRef {
    /// The local endpoint.
    fn ep(&self) -> &Ep;
    /// The jobrank named by `rank`, checked, for a call that addresses
    /// the peer endpoint's bound segment through the primordial tables
    /// only (remote atomics): over a TM-pair naming another endpoint than
    /// the primordial one this is an error. Calls that reach created
    /// endpoints' segments use [`TmRef::rma_jobrank_of`] and
    /// [`TmRef::peer_segment`].
    fn jobrank_of(&self, rank: Rank) -> Result<Rank>;

    /// Whether the local endpoint has `cap` (always for a team: every team
    /// is over primordial endpoints, which have every capability).
    #[inline(always)]
    fn local_has(&self, cap: EpCapabilities) -> bool {
        let _ = cap;
        true
    }

    /// An error naming the local endpoint and `call` unless the endpoint
    /// was created with `cap` (see [`TmRef::local_has`]).
    #[inline(always)]
    fn require_local(&self, call: &str, cap: EpCapabilities) -> Result<()> {
        if self.local_has(cap) {
            Ok(())
        } else {
            Err(lacks_capability(self.ep(), call, cap))
        }
    }

    /// The endpoint index this names in every peer (0 for a team: every
    /// team is over primordial endpoints).
    #[inline(always)]
    fn remote_ep_index(&self) -> EpIndex {
        0
    }

    /// The (jobrank, endpoint index) an Active Message to `rank` goes to,
    /// checked: the local endpoint may send Active Messages
    /// (`GEX_EP_CAPABILITY_AM`), `rank` is in range and the index below
    /// [`MAX_EPS`]. For a team, `jobrank_of` and the primordial endpoint.
    #[inline(always)]
    fn am_peer(&self, rank: Rank) -> Result<EpLocation> {
        Ok(EpLocation {
            rank: self.jobrank_of(rank)?,
            ep_index: 0,
        })
    }

    /// The jobrank named by `rank`, checked, for RMA: as
    /// [`TmRef::jobrank_of`], except that a TM-pair may name any endpoint
    /// index below [`MAX_EPS`] (its segment is then looked up with
    /// [`TmRef::peer_segment`]).
    ///
    /// For layer authors (gex-rma).
    #[doc(hidden)]
    #[inline(always)]
    fn rma_jobrank_of(&self, rank: Rank) -> Result<Rank> {
        self.jobrank_of(rank)
    }

    /// The fast-table entry ([`crate::FastSeg`]) of the endpoint this
    /// names at `rank`, checked as [`TmRef::rma_jobrank_of`] does (`None`
    /// for a bad rank or index, or before anything is known): the
    /// primordial table for a team, the table of the pair's endpoint index
    /// for a pair.
    ///
    /// For layer authors (gex-rma's direct route).
    #[doc(hidden)]
    #[inline(always)]
    fn fast_entry(&self, rank: Rank) -> Option<&'static crate::FastSeg> {
        let jobrank = self.jobrank_of(rank).ok()?;
        let t = crate::fast_segments();
        if t.is_null() {
            return None;
        }
        // SAFETY: a non-null table is leaked and has one entry per jobrank;
        // `jobrank_of` returns a jobrank below the job size.
        Some(unsafe { &*t.add(jobrank as usize) })
    }

    /// The segment of the endpoint this names at `jobrank`, as this process
    /// knows it (`None`: none bound, or not published to this process).
    ///
    /// For layer authors (gex-rma's general route).
    #[doc(hidden)]
    #[inline]
    fn peer_segment(&self, jobrank: Rank) -> Option<SegmentDesc> {
        crate::segment_table()
            .and_then(|t| t.get(jobrank as usize).copied())
            .filter(|d| d.size > 0)
    }

    /// [`TmRef::query_bound_segment`] in the spec's non-blocking form
    /// (`gex_EP_QueryBoundSegmentNB`): the answer is written to `out` by the
    /// time the returned event completes. Every segment this process may
    /// address is known locally (the primordial ones since attach, created
    /// ones since their publication), so the query never communicates: the
    /// event is [`Event::INVALID`](crate::Event::INVALID), complete at
    /// return, and `out` is written already.
    fn query_bound_segment_nb<'o>(
        &self,
        rank: Rank,
        out: &'o mut Option<BoundSegment>,
        flags: Flags,
    ) -> Result<crate::Event<'o>> {
        *out = self.query_bound_segment(rank, flags)?;
        Ok(crate::Event::INVALID)
    }

    /// The bound segment of the endpoint named by `(self, rank)`
    /// (`gex_EP_QueryBoundSegmentNB` answered at once, and
    /// `gex_Segment_QueryBound`). `Ok(None)` when it has none, or when it is
    /// a created endpoint's segment not published to this process. Every
    /// segment this process may address is known locally, so the query
    /// never communicates and completes at once; with `IMMEDIATE` it is
    /// also legal in handler context.
    fn query_bound_segment(&self, rank: Rank, flags: Flags) -> Result<Option<BoundSegment>> {
        const CALL: &str = "gex_EP_QueryBoundSegmentNB";
        if flags.difference(Flags::IMMEDIATE) != Flags::empty() {
            return Err(Error::bad_arg(format!(
                "{CALL}: unsupported flags {flags:?}"
            )));
        }
        if !flags.contains(Flags::IMMEDIATE) {
            context::check_may_communicate(CALL)?;
        }
        if rank == RANK_INVALID {
            return Err(Error::bad_arg(format!(
                "{CALL}: GEX_RANK_INVALID is not permitted"
            )));
        }
        let index = self.remote_ep_index();
        if index != 0 {
            // A created endpoint's segment: known here once bound (this
            // process's own) or published to this process; else the spec's
            // "unsuccessful" query (size 0).
            let jobsize = self.ep().runtime().jobsize();
            if rank >= jobsize {
                return Err(not_in_job(rank, jobsize));
            }
            if index as usize >= MAX_EPS {
                return Err(Error::bad_arg(format!(
                    "{CALL}: {}",
                    bad_ep_index(index, rank)
                )));
            }
            return Ok(crate::epseg::ep_segment(index, rank).map(|d| BoundSegment {
                owner_addr: d.owner_base,
                local_addr: d.local_base,
                size: d.size,
            }));
        }
        let jr = self.jobrank_of(rank)?;
        let rt = self.ep().0.client.0.rt;
        Ok(rt.segments().and_then(|t| {
            let d = t[jr as usize];
            (d.size > 0).then_some(BoundSegment {
                owner_addr: d.owner_base,
                local_addr: d.local_base,
                size: d.size,
            })
        }))
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Client({:?})", self.0.name)
    }
}
impl fmt::Debug for Ep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Ep(rank {}, index {})",
            self.0.client.0.rt.jobrank(),
            self.0.index
        )
    }
}
impl fmt::Debug for Tm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tm(rank {} of {})", self.0.rank, self.0.size)
    }
}
impl fmt::Debug for TmPair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "TmPair(local index {}, remote index {})",
            self.ep.0.index, self.remote_index
        )
    }
}
impl fmt::Debug for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Segment({:#x}, {} bytes)", self.0.base, self.0.size)
    }
}

impl PartialEq for TmPair {
    fn eq(&self, o: &TmPair) -> bool {
        Arc::ptr_eq(&self.ep.0, &o.ep.0) && self.remote_index == o.remote_index
    }
}
impl Eq for TmPair {}

impl Client {
    /// Initialises the client over the conduit `factory` makes
    /// (`gex_Client_Init`). Collective over every process of the job; at
    /// most one client per process. Returns the client, the primordial
    /// endpoint and the primordial team, after a barrier.
    ///
    /// `name` must match `[A-Z][A-Z0-9_]+` and be the same on every rank;
    /// `flags` may only contain `USES_GASNET1`.
    pub fn init_with(
        name: &str,
        flags: Flags,
        factory: &dyn ConduitFactory,
    ) -> Result<(Client, Ep, Tm)> {
        Self::init_with_layers(name, flags, factory, &[])
    }

    /// [`Client::init_with`], running each layer's set-up on the primordial
    /// endpoint before the closing barrier: a layer that registers internal
    /// AM handlers there has them registered on every rank before any rank
    /// can use them. gex-core's settings come from the environment
    /// ([`ClientSettings::from_env`]).
    pub fn init_with_layers(
        name: &str,
        flags: Flags,
        factory: &dyn ConduitFactory,
        layers: &[LayerInit<'_>],
    ) -> Result<(Client, Ep, Tm)> {
        let settings = ClientSettings::from_env().map_err(report)?;
        Self::init_with_settings(name, flags, factory, layers, &settings)
    }

    /// [`Client::init_with_layers`] with gex-core's settings given in code:
    /// nothing of gex-core's is read from the environment. (The control
    /// plane still finds the job through the launcher's variables, and the
    /// factory and layers use the settings they were given.)
    pub fn init_with_settings(
        name: &str,
        flags: Flags,
        factory: &dyn ConduitFactory,
        layers: &[LayerInit<'_>],
        settings: &ClientSettings,
    ) -> Result<(Client, Ep, Tm)> {
        const CALL: &str = "gex_Client_Init";
        // The spec asks for names matching [A-Z][A-Z0-9_]+; the reference
        // accepts any, and clients (its own tests among them) pass lower
        // case: gex follows it (API.md, "Leniencies") and refuses only an
        // empty name.
        if name.is_empty() {
            return Err(report(Error::bad_arg(format!(
                "{CALL}: the client name is empty"
            ))));
        }
        if !(flags - (Flags::USES_GASNET1 | Flags::DEFER_THREADS)).is_empty() {
            return Err(report(Error::bad_arg(format!(
                "{CALL}: only GEX_FLAG_USES_GASNET1 and GEX_FLAG_DEFER_THREADS are accepted, got {flags:?}"
            ))));
        }
        if Runtime::get().is_some() {
            return Err(report(Error::bad_arg(format!(
                "{CALL}: a client already exists in this process (one per job)"
            ))));
        }
        let boot = Bootstrap::from_env().map_err(report)?;
        if boot.rank() == 0 {
            // Misspelt settings would be ignored silently otherwise.
            for w in gex_bootstrap::vars::warnings() {
                eprintln!("{w}");
            }
        }
        // Before the conduit registers its own exit hooks (a udp rank
        // lingers to get its last datagrams acknowledged), so that the
        // summary, printed by the hook registered first and so run last,
        // counts that too.
        crate::stats::print_at_exit_if_asked(settings.stats_at_exit);
        let conduit = factory.create(boot).map_err(report)?;
        let rt = Runtime::install(conduit).map_err(report)?;

        // name and flags are single-valued: check it, collectively.
        let mine = format!("{}\0{}", name, flags.bits());
        let all = rt.bootstrap_exchange(mine.as_bytes())?;
        for (r, other) in all.iter().enumerate() {
            if other[..] != *mine.as_bytes() {
                let other = String::from_utf8_lossy(other).replace('\0', " flags ");
                return Err(report(Error::bad_arg(format!(
                    "{CALL}: arguments differ between ranks (single-valued): rank {} passed {:?}, rank {r} passed {other:?}",
                    rt.jobrank(),
                    mine.replace('\0', " flags "),
                ))));
            }
        }

        let client = Client(Arc::new(ClientInner {
            name: name.to_string(),
            flags,
            rt,
            cdata: CDataSlot::default(),
            ep_count: Mutex::new(1),
        }));
        EP_CAPS[0].store(CREATED | EpCapabilities::ALL.bits(), Ordering::Release);
        let ep = Ep(Arc::new(EpInner {
            client: client.clone(),
            index: 0,
            flags: Flags::empty(),
            caps: EpCapabilities::ALL,
            segment: OnceLock::new(),
            bound: Mutex::new(None),
            cdata: CDataSlot::default(),
            ext: LayerSlot::default(),
        }));
        let tm = Tm(Arc::new(TmInner {
            ep: ep.clone(),
            id: next_tm_id(),
            ext: LayerSlot::default(),
            rank: rt.jobrank(),
            size: rt.jobsize(),
            members: None,
            flags: Flags::empty(),
            cdata: CDataSlot::default(),
        }));
        for layer in layers {
            layer(&ep).map_err(report)?;
        }
        rt.bootstrap_barrier()?;
        Ok((client, ep, tm))
    }

    /// The name passed to init (`gex_Client_QueryName`).
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The flags passed to init (`gex_Client_QueryFlags`).
    pub fn flags(&self) -> Flags {
        self.0.flags
    }

    /// Sets the client data (`gex_Client_SetCData`).
    pub fn set_cdata(&self, v: Option<CData>) {
        self.0.cdata.set(v)
    }

    /// The client data (`gex_Client_QueryCData`).
    pub fn cdata(&self) -> Option<CData> {
        self.0.cdata.get()
    }

    /// The process runtime (for layers built on the core).
    pub(crate) fn runtime(&self) -> &'static Runtime {
        self.0.rt
    }
}

/// What each endpoint index of this process was created with: 0 for an
/// index not created yet, else [`CREATED`] and the capabilities' bits.
/// Read on error paths, to say why a message for an index cannot run.
static EP_CAPS: [AtomicU32; MAX_EPS] = [const { AtomicU32::new(0) }; MAX_EPS];
const CREATED: u32 = 1 << 31;

/// The capabilities endpoint `index` of this process was created with, or
/// `None` if this process has not created it (yet).
///
/// For layer and conduit authors: the AM layer names the reason when a
/// message arrives for an endpoint that cannot run it.
#[doc(hidden)]
pub fn local_ep_capabilities(index: EpIndex) -> Option<EpCapabilities> {
    let v = EP_CAPS.get(index as usize)?.load(Ordering::Acquire);
    (v & CREATED != 0).then(|| EpCapabilities::from_bits_truncate(v))
}

impl Ep {
    /// Creates an endpoint of `client` (`gex_EP_Create`), with the next
    /// free index (1, 2, ... in order of creation in this process; at most
    /// [`MAX_EPS`] endpoints in all, the primordial one included).
    ///
    /// Not collective: peers reach it through a TM-pair naming its index
    /// ([`Ep::pair`]), so the program must make sure it exists (and, for
    /// Active Messages, has its handlers registered) before any peer sends
    /// to it; a message for an index this process has not created is a
    /// fatal error naming the index and the sender.
    ///
    /// `capabilities` is a non-empty subset of [`EpCapabilities::ALL`]:
    /// `AM` lets it register handlers and send and receive Active
    /// Messages. A created endpoint gets a segment by binding one
    /// (gex-mk's `ep_bind_segment`), which RMA, VIS and Long AMs over a
    /// pair then reach once published; it belongs to no team, so
    /// collectives, `Segment::attach` and atomic domains (which take a
    /// team) are for the primordial endpoint only. `flags` may hold only
    /// the hints [`Flags::HINT_ACCEL_AD`] and [`Flags::HINT_ACCEL_COLL`]
    /// (the spec defines them for this call, which otherwise requires
    /// zero); no conduit here accelerates either, so they are recorded
    /// ([`Ep::flags`]) and change nothing.
    pub fn create(client: &Client, capabilities: EpCapabilities, flags: Flags) -> Result<Ep> {
        const CALL: &str = "gex_EP_Create";
        context::check_may_communicate(CALL)?;
        if capabilities.is_empty() || !EpCapabilities::ALL.contains(capabilities) {
            return Err(Error::bad_arg(format!(
                "{CALL}: capabilities {:#x} must be a non-empty combination of GEX_EP_CAPABILITY_{{RMA,AM,VIS,COLL,AD}}",
                capabilities.bits()
            )));
        }
        if !Flags::HINT_ACCEL_ALL.contains(flags) {
            return Err(Error::bad_arg(format!(
                "{CALL}: flags must be 0 or GEX_FLAG_HINT_ACCEL_{{AD,COLL,ALL}}, got {flags:?}"
            )));
        }
        let mut count = client.0.ep_count.lock().unwrap_or_else(|p| p.into_inner());
        let index = *count;
        if index as usize >= MAX_EPS {
            return Err(Error::resource(format!(
                "{CALL}: this process already has GASNET_MAXEPS = {MAX_EPS} endpoints (the primordial one included)"
            )));
        }
        *count += 1;
        EP_CAPS[index as usize].store(CREATED | capabilities.bits(), Ordering::Release);
        Ok(Ep(Arc::new(EpInner {
            client: client.clone(),
            index,
            flags,
            caps: capabilities,
            segment: OnceLock::new(),
            bound: Mutex::new(None),
            cdata: CDataSlot::default(),
            ext: LayerSlot::default(),
        })))
    }

    /// The capabilities the endpoint was created with (every one for the
    /// primordial endpoint).
    #[inline]
    pub fn capabilities(&self) -> EpCapabilities {
        self.0.caps
    }

    /// Whether this is the primordial endpoint (index 0).
    #[inline]
    pub fn is_primordial(&self) -> bool {
        self.0.index == 0
    }

    /// The owning client (`gex_EP_QueryClient`).
    pub fn client(&self) -> &Client {
        &self.0.client
    }

    /// The flags the endpoint was created with (`gex_EP_QueryFlags`).
    pub fn flags(&self) -> Flags {
        self.0.flags
    }

    /// The bound segment, if any (`gex_EP_QuerySegment`): the attached
    /// one for the primordial endpoint, else the one bound by
    /// `gex_mk::ep_bind_segment` (and not destroyed since).
    pub fn segment(&self) -> Option<Segment> {
        if let Some(s) = self.0.segment.get() {
            return Some(s.clone());
        }
        self.0
            .bound
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Binds `seg`, a created segment, to this endpoint
    /// (`gex_EP_BindSegment`), and records it as this rank's entry of the
    /// endpoint index's table (so this process reaches it at once; peers
    /// after `gex_EP_PublishBoundSegment`).
    ///
    /// The primordial endpoint too, as the reference allows (the spec
    /// reserves its segment to `gex_Segment_Attach`; API.md,
    /// "Leniencies"): in a job that does not attach, its bound segment
    /// then serves every call that addresses the primordial endpoints'
    /// segments (teams, Long Active Messages, remote atomics, VIS). A rank
    /// that attached cannot bind to its primordial endpoint, and one that
    /// bound cannot attach afterwards. A segment may be bound to several
    /// endpoints of its process (the reference's `testsegment` binds one
    /// to the primordial endpoint and to a created one).
    ///
    /// For layer and conduit authors: gex-mk's `ep_bind_segment` checks
    /// the arguments and calls this.
    #[doc(hidden)]
    pub fn bind_created(&self, seg: &Segment) -> Result<()> {
        const CALL: &str = "gex_EP_BindSegment";
        let me = self.runtime().jobrank();
        if self.0.index == 0 && (self.0.segment.get().is_some() || self.runtime().attached()) {
            return Err(Error::bad_arg(format!(
                "{CALL}: endpoint 0 of rank {me} is the primordial endpoint and has the segment of gex_Segment_Attach; a created segment cannot be bound to it as well"
            )));
        }
        let Some(c) = &seg.0.created else {
            return Err(Error::bad_arg(format!(
                "{CALL}: the segment at {:#x} (+{}) is the attached segment of the primordial endpoint; only segments from gex_Segment_Create may be bound",
                seg.0.base, seg.0.size
            )));
        };
        let mut mine = self.0.bound.lock().unwrap_or_else(|p| p.into_inner());
        let mut at = c.bound.lock().unwrap_or_else(|p| p.into_inner());
        if c.destroyed.load(Ordering::Acquire) {
            return Err(Error::bad_arg(format!(
                "{CALL}: the segment at {:#x} (+{}) was destroyed",
                seg.0.base, seg.0.size
            )));
        }
        if let Some(s) = &*mine {
            return Err(Error::bad_arg(format!(
                "{CALL}: endpoint {} of rank {me} already has a bound segment (at {:#x}, +{}); an endpoint is bound once (destroy its segment first)",
                self.0.index, s.0.base, s.0.size
            )));
        }
        // SAFETY: a created segment's range was promised to `from_created`
        // (valid while named by a table, or for the rest of the process).
        unsafe {
            crate::epseg::update_ep_segments(
                self.0.index,
                self.runtime().jobsize(),
                &[(me, Some(seg.desc()))],
            )
        }
        .map_err(|e| {
            Error::bad_arg(format!(
                "{CALL}: endpoint {} of rank {me}: {}",
                self.0.index,
                e.message()
            ))
        })?;
        *mine = Some(seg.clone());
        at.push((self.0.index, Arc::downgrade(&self.0)));
        Ok(())
    }

    /// The endpoint index (`gex_EP_QueryIndex`); 0 for the primordial one.
    pub fn index(&self) -> EpIndex {
        self.0.index
    }

    /// Sets the endpoint data (`gex_EP_SetCData`).
    pub fn set_cdata(&self, v: Option<CData>) {
        self.0.cdata.set(v)
    }

    /// The endpoint data (`gex_EP_QueryCData`).
    pub fn cdata(&self) -> Option<CData> {
        self.0.cdata.get()
    }

    /// The process runtime.
    #[inline]
    pub(crate) fn runtime(&self) -> &'static Runtime {
        self.0.client.0.rt
    }

    /// Layer state attached to this endpoint by a layer above (the AM
    /// layer's handler table), created on first use.
    pub(crate) fn layer_state<T: Any + Send + Sync>(
        &self,
        make: impl FnOnce() -> Arc<T>,
    ) -> Option<&T> {
        self.0.ext.get_or_init(make)
    }

    /// Layer state attached earlier, if of type `T`.
    #[inline]
    pub(crate) fn existing_layer_state<T: Any>(&self) -> Option<&T> {
        self.0.ext.get()
    }

    /// A TM-pair naming endpoint `remote_index` of any process, to be used
    /// with a jobrank (`gex_TM_Pair`). Not checked here (the call cannot
    /// fail): an index of [`MAX_EPS`] or more is an error in each call
    /// that uses the pair; an index below it that the peer has not created
    /// is the program's error, found by the peer (see [`Ep::create`]).
    pub fn pair(&self, remote_index: EpIndex) -> TmPair {
        TmPair {
            ep: self.clone(),
            remote_index,
            fast_slot: crate::epseg::fast_slot(remote_index),
            caps: self.0.caps,
        }
    }
}

impl Tm {
    /// The owning client (`gex_TM_QueryClient`).
    pub fn client(&self) -> &Client {
        &self.0.ep.0.client
    }

    /// The local endpoint (`gex_TM_QueryEP`).
    pub fn ep(&self) -> &Ep {
        &self.0.ep
    }

    /// Flags the team was created with (`gex_TM_QueryFlags`).
    pub fn flags(&self) -> Flags {
        self.0.flags
    }

    /// This member's rank (`gex_TM_QueryRank`).
    #[inline]
    pub fn rank(&self) -> Rank {
        self.0.rank
    }

    /// The team size (`gex_TM_QuerySize`).
    #[inline]
    pub fn size(&self) -> Rank {
        self.0.size
    }

    /// Whether this is the primordial team of the client.
    pub fn is_primordial(&self) -> bool {
        self.0.members.is_none()
    }

    /// A stable identity of this team object in this process: assigned at
    /// creation, shared by every clone, never reused by another team of the
    /// process (the primordial team's is 0). Local only: the members of one
    /// team generally see different ids.
    #[inline]
    pub fn id(&self) -> u64 {
        self.0.id
    }

    /// Layer state attached to this team by a layer above (gex-coll's view
    /// of the team), created on first use; `None` if state of another type
    /// was attached first.
    pub(crate) fn layer_state<T: Any + Send + Sync>(
        &self,
        make: impl FnOnce() -> Arc<T>,
    ) -> Option<&T> {
        self.0.ext.get_or_init(make)
    }

    /// Layer state attached earlier, if of type `T`.
    #[inline]
    pub(crate) fn existing_layer_state<T: Any>(&self) -> Option<&T> {
        self.0.ext.get()
    }

    /// Sets the team data (`gex_TM_SetCData`).
    pub fn set_cdata(&self, v: Option<CData>) {
        self.0.cdata.set(v)
    }

    /// The team data (`gex_TM_QueryCData`).
    pub fn cdata(&self) -> Option<CData> {
        self.0.cdata.get()
    }

    /// Jobrank of team rank `rank` (`gex_TM_TranslateRankToJobrank`).
    pub fn rank_to_jobrank(&self, rank: Rank) -> Result<Rank> {
        context::check_may_communicate("gex_TM_TranslateRankToJobrank")?;
        self.jobrank_of(rank)
    }

    /// Team rank of `jobrank`, or `RANK_INVALID` if it is not a member
    /// (`gex_TM_TranslateJobrankToRank`).
    pub fn jobrank_to_rank(&self, jobrank: Rank) -> Result<Rank> {
        const CALL: &str = "gex_TM_TranslateJobrankToRank";
        context::check_may_communicate(CALL)?;
        let jobsize = self.ep().runtime().jobsize();
        if jobrank >= jobsize {
            return Err(Error::bad_arg(format!(
                "{CALL}: jobrank {jobrank} out of range 0..{jobsize}"
            )));
        }
        Ok(match &self.0.members {
            None => jobrank,
            Some(m) => m
                .iter()
                .position(|&j| j == jobrank)
                .map_or(RANK_INVALID, |p| p as Rank),
        })
    }

    /// The (jobrank, endpoint index) of team rank `rank`
    /// (`gex_TM_TranslateRankToEP`). `flags` must be empty.
    pub fn rank_to_ep(&self, rank: Rank, flags: Flags) -> Result<EpLocation> {
        const CALL: &str = "gex_TM_TranslateRankToEP";
        context::check_may_communicate(CALL)?;
        if !flags.is_empty() {
            return Err(Error::bad_arg(format!(
                "{CALL}: flags must be 0, got {flags:?}"
            )));
        }
        Ok(EpLocation {
            rank: self.jobrank_of(rank)?,
            ep_index: 0,
        })
    }

    /// A team over `members` (jobranks, in rank order) in which this process
    /// is rank `rank`. For layers that build teams (gex-coll).
    pub(crate) fn new_subteam(&self, members: Vec<Rank>, flags: Flags) -> Result<Tm> {
        let rt = self.ep().runtime();
        let me = rt.jobrank();
        if let Some(&bad) = members.iter().find(|&&j| j >= rt.jobsize()) {
            return Err(not_in_job(bad, rt.jobsize()));
        }
        let rank = members
            .iter()
            .position(|&j| j == me)
            .ok_or_else(|| Error::bad_arg("this process is not a member of the new team"))?;
        Ok(Tm(Arc::new(TmInner {
            ep: self.ep().clone(),
            id: next_tm_id(),
            ext: LayerSlot::default(),
            rank: rank as Rank,
            size: members.len() as Rank,
            members: Some(members.into()),
            flags,
            cdata: CDataSlot::default(),
        })))
    }
}

impl TmRef for Tm {
    #[inline]
    fn ep(&self) -> &Ep {
        &self.0.ep
    }

    #[inline(always)]
    fn jobrank_of(&self, rank: Rank) -> Result<Rank> {
        if rank >= self.0.size {
            return Err(not_in_team(rank, self.0.size));
        }
        Ok(match &self.0.members {
            None => rank,
            // SAFETY: `members` has exactly `size` entries (built so by
            // every team constructor), and `rank < size` was checked above.
            Some(m) => unsafe { *m.get_unchecked(rank as usize) },
        })
    }
}

/// The next team identity of this process (0 is the primordial team's).
fn next_tm_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

#[cold]
#[inline(never)]
fn not_in_team(rank: Rank, size: Rank) -> Error {
    Error::bad_arg(format!("rank {rank} is not in the team (size {size})"))
}

#[cold]
#[inline(never)]
fn not_in_job(rank: Rank, jobsize: Rank) -> Error {
    Error::bad_arg(format!(
        "jobrank {rank} out of range 0..{jobsize} (TM-pair)"
    ))
}

#[cold]
#[inline(never)]
fn bad_ep_index(index: EpIndex, rank: Rank) -> String {
    format!(
        "TM-pair to endpoint index {index} of rank {rank}: no process has such an endpoint (GASNET_MAXEPS is {MAX_EPS})"
    )
}

#[cold]
#[inline(never)]
fn no_segment_ep(index: EpIndex, rank: Rank) -> Error {
    if index as usize >= MAX_EPS {
        return Error::bad_arg(bad_ep_index(index, rank));
    }
    Error::bad_arg(format!(
        "TM-pair to endpoint index {index} of rank {rank}: that endpoint has no bound segment known to this process (only the primordial endpoints' segments, from gex_Segment_Attach, are; created endpoints are reached by Active Messages)"
    ))
}

#[cold]
#[inline(never)]
fn lacks_capability(ep: &Ep, call: &str, cap: EpCapabilities) -> Error {
    let name = match cap {
        EpCapabilities::RMA => "RMA",
        EpCapabilities::AM => "AM",
        EpCapabilities::VIS => "VIS",
        EpCapabilities::COLL => "COLL",
        EpCapabilities::AD => "AD",
        _ => "ALL",
    };
    Error::bad_arg(format!(
        "{call}: endpoint {} of rank {} was created without GEX_EP_CAPABILITY_{name} (capabilities {:?})",
        ep.0.index,
        ep.runtime().jobrank(),
        ep.0.caps
    ))
}

#[cold]
#[inline(never)]
fn not_am_capable(ep: &Ep) -> Error {
    Error::bad_arg(format!(
        "endpoint {} of rank {} was created without GEX_EP_CAPABILITY_AM (capabilities {:?}): it cannot send Active Messages",
        ep.0.index,
        ep.runtime().jobrank(),
        ep.0.caps
    ))
}

/// The error of an Active Message call on an endpoint without the AM
/// capability, naming it. For the AM layer.
#[doc(hidden)]
pub fn ep_not_am_capable(ep: &Ep) -> Error {
    not_am_capable(ep)
}

impl TmPair {
    /// The remote endpoint index this pair names.
    pub fn remote_index(&self) -> EpIndex {
        self.remote_index
    }
}

impl TmRef for TmPair {
    #[inline]
    fn ep(&self) -> &Ep {
        &self.ep
    }

    #[inline(always)]
    fn jobrank_of(&self, rank: Rank) -> Result<Rank> {
        let jobsize = self.ep.runtime().jobsize();
        if rank >= jobsize {
            return Err(not_in_job(rank, jobsize));
        }
        if self.remote_index != 0 {
            return Err(no_segment_ep(self.remote_index, rank));
        }
        Ok(rank)
    }

    #[inline]
    fn remote_ep_index(&self) -> EpIndex {
        self.remote_index
    }

    #[inline(always)]
    fn rma_jobrank_of(&self, rank: Rank) -> Result<Rank> {
        let jobsize = self.ep.runtime().jobsize();
        if rank >= jobsize {
            return Err(not_in_job(rank, jobsize));
        }
        if self.remote_index as usize >= MAX_EPS {
            return Err(Error::bad_arg(bad_ep_index(self.remote_index, rank)));
        }
        Ok(rank)
    }

    #[inline(always)]
    fn fast_entry(&self, rank: Rank) -> Option<&'static crate::FastSeg> {
        // The slot's active fast form (index 0: the primordial table's),
        // the rank checked against the job size; an index of MAX_EPS or
        // more has an always-empty slot.
        crate::epseg::fast_entry_at(self.fast_slot, rank)
    }

    #[inline]
    fn peer_segment(&self, jobrank: Rank) -> Option<SegmentDesc> {
        if self.remote_index == 0 {
            return crate::segment_table()
                .and_then(|t| t.get(jobrank as usize).copied())
                .filter(|d| d.size > 0);
        }
        crate::epseg::ep_segment(self.remote_index, jobrank)
    }

    #[inline(always)]
    fn local_has(&self, cap: EpCapabilities) -> bool {
        self.caps.contains(cap)
    }

    #[inline]
    fn am_peer(&self, rank: Rank) -> Result<EpLocation> {
        if !self.ep.0.caps.contains(EpCapabilities::AM) {
            return Err(not_am_capable(&self.ep));
        }
        let jobsize = self.ep.runtime().jobsize();
        if rank >= jobsize {
            return Err(not_in_job(rank, jobsize));
        }
        if self.remote_index as usize >= MAX_EPS {
            return Err(Error::bad_arg(bad_ep_index(self.remote_index, rank)));
        }
        Ok(EpLocation {
            rank,
            ep_index: self.remote_index,
        })
    }
}

impl Segment {
    /// Collectively allocates and binds a segment of `size` bytes to the
    /// local endpoint of `tm` (`gex_Segment_Attach`).
    ///
    /// `tm` must be the primordial team; `size` a non-zero multiple of the
    /// page size and at most [`system::max_local_segment_size`]; one attach
    /// per process. Every rank's arguments are checked collectively, so a
    /// bad size on one rank is an error on all of them rather than a hang.
    /// Ends with a barrier.
    pub fn attach(tm: &Tm, size: usize) -> Result<Segment> {
        const CALL: &str = "gex_Segment_Attach";
        context::check_may_communicate(CALL)?;
        let ep = tm.ep();
        let rt = ep.runtime();
        let page = system::page_size();
        let max = rt.conduit().max_segment_size();
        let local_err = if !tm.is_primordial() {
            Some("tm must be the primordial team".to_string())
        } else if ep.0.segment.get().is_some() || rt.attached() {
            Some("a segment is already attached (one attach per process)".to_string())
        } else if ep.segment().is_some() {
            Some("a created segment is bound to the primordial endpoint (gex_EP_BindSegment): its segment is that one, and gex_Segment_Attach cannot follow".to_string())
        } else if crate::runtime::primordial_source() == crate::runtime::Primordial::Bound {
            Some("the primordial endpoints' segments are created ones here (gex_EP_BindSegment, published by gex_EP_PublishBoundSegment): gex_Segment_Attach cannot follow".to_string())
        } else if size == 0 || !size.is_multiple_of(page) {
            Some(format!(
                "size {size} is not a non-zero multiple of the page size {page}"
            ))
        } else if size > max {
            Some(format!(
                "size {size} exceeds the maximum local segment size {max}"
            ))
        } else {
            None
        };
        let all = rt.bootstrap_exchange(local_err.as_deref().unwrap_or("").as_bytes())?;
        if let Some((r, why)) = all.iter().enumerate().find(|(_, m)| !m.is_empty()) {
            return Err(report(Error::bad_arg(format!(
                "{CALL}: rank {r}: {}",
                String::from_utf8_lossy(why)
            ))));
        }
        let table = rt.conduit().attach_segment(size, rt.sink())?;
        let mine = table[rt.jobrank() as usize];
        let base = mine
            .local_base
            .ok_or_else(|| Error::resource("conduit did not map the local segment"))?;
        if !rt.set_segments(table) {
            return Err(Error::bad_arg(format!(
                "{CALL}: a segment is already attached, or a created one bound to the primordial endpoint"
            )));
        }
        let seg = Segment(Arc::new(SegmentInner {
            client: ep.client().clone(),
            base,
            size,
            flags: Flags::empty(),
            cdata: CDataSlot::default(),
            created: None,
        }));
        let _ = ep.0.segment.set(seg.clone());
        // The closing barrier: every rank records its table after the
        // conduit's exchange, so without it a peer that returned first
        // could reach this rank (a put over udp's one-sided route, a VIS
        // or Long Active Message) before it knows its own segment, and
        // that is fatal. Once every rank is past this, every table is in
        // place.
        rt.bootstrap_barrier()?;
        Ok(seg)
    }

    /// A created segment (`gex_Segment_Create`) of `size` bytes at `base`
    /// in this process, of memory kind `kind`; `backing` holds its memory
    /// (handed back by [`Segment::destroy_created`]).
    ///
    /// For layer and conduit authors: gex-mk's `segment_create` checks the
    /// arguments, obtains the memory and calls this.
    ///
    /// # Safety
    ///
    /// `[base, base + size)` must be memory this process may read and
    /// write, valid for as long as a table may name it (until the segment
    /// is destroyed and no operation targets it, or for the rest of the
    /// process), and not accessed through Rust references meanwhile.
    #[doc(hidden)]
    pub unsafe fn from_created(
        client: &Client,
        base: usize,
        size: usize,
        kind: CData,
        backing: Box<dyn Any + Send>,
    ) -> Segment {
        Segment(Arc::new(SegmentInner {
            client: client.clone(),
            base,
            size,
            flags: Flags::empty(),
            cdata: CDataSlot::default(),
            created: Some(Created {
                kind,
                backing: Mutex::new(Some(backing)),
                bound: Mutex::new(Vec::new()),
                destroyed: std::sync::atomic::AtomicBool::new(false),
            }),
        }))
    }

    /// Whether the segment came from `gex_Segment_Create` (rather than
    /// `gex_Segment_Attach`).
    pub fn is_created(&self) -> bool {
        self.0.created.is_some()
    }

    /// Whether the segment was destroyed (`gex_Segment_Destroy`).
    pub fn is_destroyed(&self) -> bool {
        self.0
            .created
            .as_ref()
            .is_some_and(|c| c.destroyed.load(Ordering::Acquire))
    }

    /// The memory kind of a created segment (the handle gex-mk gave).
    ///
    /// For layer and conduit authors.
    #[doc(hidden)]
    pub fn created_kind(&self) -> Option<&CData> {
        self.0.created.as_ref().map(|c| &c.kind)
    }

    /// The index of the endpoint a created segment was bound to first
    /// (of those it is bound to; see [`Segment::bound_ep_indices`]).
    pub fn bound_ep_index(&self) -> Option<EpIndex> {
        self.bound_ep_indices().first().copied()
    }

    /// The indices of the endpoints a created segment is bound to, in the
    /// order of binding (empty for the attached segment).
    pub fn bound_ep_indices(&self) -> Vec<EpIndex> {
        let Some(c) = self.0.created.as_ref() else {
            return Vec::new();
        };
        c.bound
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|b| b.0)
            .collect()
    }

    /// Runs `f` on the backing of a created segment that is not destroyed.
    ///
    /// For layer and conduit authors (gex-mk reads how peers map it).
    #[doc(hidden)]
    pub fn with_backing<R>(&self, f: impl FnOnce(&(dyn Any + Send)) -> R) -> Option<R> {
        let c = self.0.created.as_ref()?;
        let b = c.backing.lock().unwrap_or_else(|p| p.into_inner());
        b.as_deref().map(f)
    }

    /// Destroys a created segment (`gex_Segment_Destroy`): marks it
    /// destroyed, unbinds it from its endpoints, removes this rank's entry
    /// from each of those endpoint indices' tables, and hands back its
    /// backing for the caller to release. An error for an attached segment
    /// or one destroyed already.
    ///
    /// For layer and conduit authors: gex-mk's `segment_destroy` calls
    /// this.
    #[doc(hidden)]
    pub fn destroy_created(&self) -> Result<Box<dyn Any + Send>> {
        const CALL: &str = "gex_Segment_Destroy";
        let Some(c) = &self.0.created else {
            return Err(Error::bad_arg(format!(
                "{CALL}: the segment at {:#x} (+{}) is the attached segment of the primordial endpoint, which lives as long as the client",
                self.0.base, self.0.size
            )));
        };
        if c.destroyed.swap(true, Ordering::AcqRel) {
            return Err(Error::bad_arg(format!(
                "{CALL}: the segment at {:#x} (+{}) was destroyed already",
                self.0.base, self.0.size
            )));
        }
        let bound = std::mem::take(&mut *c.bound.lock().unwrap_or_else(|p| p.into_inner()));
        for (index, ep) in bound {
            let rt = self.0.client.0.rt;
            // SAFETY: removing an entry names no memory. It cannot fail:
            // index 0 was bound only on a rank that did not attach, and
            // such a rank can no longer attach.
            let removed = unsafe {
                crate::epseg::update_ep_segments(index, rt.jobsize(), &[(rt.jobrank(), None)])
            };
            debug_assert!(removed.is_ok(), "{removed:?}");
            if let Some(ep) = ep.upgrade() {
                let mut b = ep.bound.lock().unwrap_or_else(|p| p.into_inner());
                if b.as_ref().is_some_and(|s| Arc::ptr_eq(&s.0, &self.0)) {
                    *b = None;
                }
            }
        }
        Ok(c.backing
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .expect("the backing is taken once, by the destroy that set the flag"))
    }

    /// The owning client (`gex_Segment_QueryClient`).
    pub fn client(&self) -> &Client {
        &self.0.client
    }

    /// Flags the segment was created with (`gex_Segment_QueryFlags`).
    pub fn flags(&self) -> Flags {
        self.0.flags
    }

    /// Base address (`gex_Segment_QueryAddr`).
    #[inline]
    pub fn addr(&self) -> usize {
        self.0.base
    }

    /// Base address as a pointer.
    #[inline]
    pub fn as_ptr(&self) -> *mut u8 {
        self.0.base as *mut u8
    }

    /// Length in bytes (`gex_Segment_QuerySize`).
    #[inline]
    pub fn size(&self) -> usize {
        self.0.size
    }

    /// Sets the segment data (`gex_Segment_SetCData`).
    pub fn set_cdata(&self, v: Option<CData>) {
        self.0.cdata.set(v)
    }

    /// The segment data (`gex_Segment_QueryCData`).
    pub fn cdata(&self) -> Option<CData> {
        self.0.cdata.get()
    }

    /// Copies `src` into the segment at `offset`. Peers may access the
    /// segment at any time, so the segment is never handed out as a Rust
    /// slice; copy in and out instead.
    pub fn write(&self, offset: usize, src: &[u8]) -> Result<()> {
        self.check(offset, src.len())?;
        // SAFETY: the range is inside the mapped segment (checked above);
        // a byte copy has no validity requirements, and `src` cannot
        // overlap the segment mapping as a shared borrow of it is never
        // created by this library.
        unsafe { std::ptr::copy(src.as_ptr(), self.as_ptr().add(offset), src.len()) };
        Ok(())
    }

    /// Copies from the segment at `offset` into `dst`.
    pub fn read(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        self.check(offset, dst.len())?;
        // SAFETY: the range is inside the mapped segment (checked above);
        // `dst` is an exclusive borrow of other memory.
        unsafe { std::ptr::copy(self.as_ptr().add(offset), dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    fn check(&self, offset: usize, len: usize) -> Result<()> {
        if self.is_destroyed() {
            return Err(Error::bad_arg(format!(
                "the segment at {:#x} (+{}) was destroyed",
                self.0.base, self.0.size
            )));
        }
        self.offset_of(offset, len, true)
            .map(|_| ())
            .map_err(|e| Error::bad_arg(e.to_string()))
    }

    /// This segment as a descriptor (owner and local base are the same).
    ///
    /// For layer and conduit authors: public because the layers live in
    /// other crates, hidden from the documentation because a program has no
    /// use for it and it skips the checks of the calls made for programs.
    #[doc(hidden)]
    pub fn desc(&self) -> SegmentDesc {
        SegmentDesc::new(self.0.base, Some(self.0.base), self.0.size)
    }

    /// The offset of `[addr, +len)` in this segment (an offset already if
    /// `is_offset`), by the one range check ([`SegmentDesc::offset_of`],
    /// an empty range inside or at the end); the error names this rank's
    /// local segment.
    ///
    /// For layer and conduit authors: public because the layers live in
    /// other crates, hidden from the documentation because a program has no
    /// use for it and it skips the checks of the calls made for programs.
    #[doc(hidden)]
    pub fn offset_of(
        &self,
        addr: usize,
        len: usize,
        is_offset: bool,
    ) -> std::result::Result<usize, RangeError> {
        let me = self.0.client.0.rt.jobrank();
        self.desc()
            .offset_of(me, addr, len, is_offset, ZeroLen::InSegment)
            .map_err(RangeError::local)
    }
}

/// The segment of jobrank `rank` as this process sees it (`None` before
/// attach or if out of range). For the RMA layer's fast path.
#[inline]
pub fn segment_desc(rt: &Runtime, rank: Rank) -> Option<SegmentDesc> {
    rt.segments().and_then(|t| t.get(rank as usize).copied())
}

/// The runtime behind a [`Client`].
///
/// # For layer and conduit authors
///
/// The layers built on the core (in other crates) reach the runtime, and
/// the state slots they keep in the objects, through these traits. The
/// `gex` facade does not export them, so a program cannot reach the
/// conduit or another layer's state through it.
pub trait ClientInternals {
    /// The process runtime.
    fn runtime(&self) -> &'static Runtime;
}

impl ClientInternals for Client {
    #[inline]
    fn runtime(&self) -> &'static Runtime {
        Client::runtime(self)
    }
}

/// The runtime and the layer state slot behind an [`Ep`].
///
/// # For layer and conduit authors
///
/// See [`ClientInternals`].
pub trait EpInternals {
    /// The process runtime.
    fn runtime(&self) -> &'static Runtime;
    /// Layer state attached to this endpoint by a layer above (the AM
    /// layer's handler table), created on first use; `None` if state of
    /// another type was attached first.
    fn layer_state<T: Any + Send + Sync>(&self, make: impl FnOnce() -> Arc<T>) -> Option<&T>;
    /// Layer state attached earlier, if of type `T`.
    fn existing_layer_state<T: Any>(&self) -> Option<&T>;
}

impl EpInternals for Ep {
    #[inline]
    fn runtime(&self) -> &'static Runtime {
        Ep::runtime(self)
    }

    #[inline]
    fn layer_state<T: Any + Send + Sync>(&self, make: impl FnOnce() -> Arc<T>) -> Option<&T> {
        Ep::layer_state(self, make)
    }

    #[inline]
    fn existing_layer_state<T: Any>(&self) -> Option<&T> {
        Ep::existing_layer_state(self)
    }
}

/// The layer state slot of a [`Tm`], and teams built without agreement.
///
/// # For layer and conduit authors
///
/// See [`ClientInternals`]. Programs make teams with the collectives
/// layer's `tm_split` and `tm_create`, which agree on them first.
pub trait TmInternals {
    /// Layer state attached to this team by a layer above (gex-coll's view
    /// of the team), created on first use; `None` if state of another type
    /// was attached first.
    fn layer_state<T: Any + Send + Sync>(&self, make: impl FnOnce() -> Arc<T>) -> Option<&T>;
    /// Layer state attached earlier, if of type `T`.
    fn existing_layer_state<T: Any>(&self) -> Option<&T>;
    /// A team over `members` (jobranks, in rank order, including this
    /// process's), without asking the other members.
    fn new_subteam(&self, members: Vec<Rank>, flags: Flags) -> Result<Tm>;
}

impl TmInternals for Tm {
    #[inline]
    fn layer_state<T: Any + Send + Sync>(&self, make: impl FnOnce() -> Arc<T>) -> Option<&T> {
        Tm::layer_state(self, make)
    }

    #[inline]
    fn existing_layer_state<T: Any>(&self) -> Option<&T> {
        Tm::existing_layer_state(self)
    }

    fn new_subteam(&self, members: Vec<Rank>, flags: Flags) -> Result<Tm> {
        Tm::new_subteam(self, members, flags)
    }
}

#[cfg(test)]
mod settings_tests {
    use super::ClientSettings;
    use crate::bootstrap::vars::{var, Lookup};

    #[test]
    fn client_settings_from_variables_and_code() {
        let read = |pairs: &[(&str, &str)]| ClientSettings::from_lookup(Lookup::pairs(pairs));
        assert_eq!(read(&[]).unwrap(), ClientSettings::default());
        assert!(read(&[("GEX_STATS", "1")]).unwrap().stats_at_exit);
        assert!(!read(&[("GEX_STATS", "0")]).unwrap().stats_at_exit);
        let e = read(&[("GEX_STATS", "yes")]).unwrap_err();
        assert!(e.message().contains("GEX_STATS=\"yes\""), "{e}");
        // In code, without the environment.
        let s = ClientSettings {
            stats_at_exit: true,
        };
        assert_eq!(s, read(&[("GEX_STATS", "1")]).unwrap());
        // The default is the table's.
        assert_eq!(var("GEX_STATS").unwrap().default, "off");
        assert!(!ClientSettings::default().stats_at_exit);
    }
}
