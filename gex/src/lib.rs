//! gex: GASNet-EX in Rust.
//!
//! This facade re-exports the layers a program enabled through cargo
//! features (`am`, `rma`; conduits: `smp`, `udp`) and chooses the conduit
//! at start-up (`gex-run --conduit NAME` sets `GEX_CONDUIT`).
//! Runtimes that embed a single layer depend on that crate directly
//! (`gex-core`, `gex-am`, `gex-conduit-smp`, ...).
//!
//! Settings: [`init`] reads them from the `GEX_*` variables
//! ([`Config::from_env`]); a program or an embedding runtime that decides
//! them in code builds a [`Config`] (one typed struct per crate, each field
//! naming its variable and default) and calls [`init_with_config`]:
//!
//! ```no_run
//! let mut config = gex::Config::default(); // no variable is read
//! config.conduit = Some("udp".into());
//! config.udp.mtu = Some(1472);
//! let (_client, _ep, tm) = gex::init_with_config("APP", gex::Flags::empty(), &config)?;
//! # Ok::<(), gex::Error>(())
//! ```
//!
//! ```no_run
//! use gex::am::{register_handlers, AmRequest, HandlerEntry};
//! use gex::Flags;
//!
//! let (_client, ep, tm) = gex::init("HELLO").unwrap();
//! let mut table = [HandlerEntry::request(0, Flags::AM_SHORT, 1, |_tok, msg| {
//!     assert_eq!(msg.arg(0), 42);
//! })];
//! register_handlers(&ep, &mut table).unwrap();
//! gex::barrier(&tm).unwrap();
//! let peer = (tm.rank() + 1) % tm.size();
//! tm.request_short(peer, table[0].index, Flags::empty(), &[42]).unwrap();
//! ```

#![warn(missing_docs)]

mod config;
pub use config::{init_with_config, Config};

pub use gex_core::bootstrap::wire::ENV_CONDUIT;
pub use gex_core::conduit::{Conduit, ConduitFactory};
pub use gex_core::stats::{self, stats, ConduitStats, Counter, PeerCounters};
pub use gex_core::{
    block_until, context, exit, fatal, nbi, poll, system, BoundSegment, CData, Client, Ep, Event,
    Hsl, HslGuard, Lc, Runtime, Segment, Tm, TmPair, TmRef,
};
pub use gex_types::*;

/// Active Messages (feature `am`).
#[cfg(feature = "am")]
pub use gex_am as am;

/// Puts and gets (feature `rma`).
#[cfg(feature = "rma")]
pub use gex_rma as rma;

/// Collectives and teams (feature `coll`).
#[cfg(feature = "coll")]
pub use gex_coll as coll;

/// The shared-memory conduit (feature `smp`).
#[cfg(feature = "smp")]
pub use gex_conduit_smp as smp;

/// The udp conduit (feature `udp`).
#[cfg(feature = "udp")]
pub use gex_conduit_udp as udp;

/// The conduits compiled into this build, by name; the first is the
/// default.
pub fn conduits() -> Vec<&'static str> {
    [
        #[cfg(feature = "smp")]
        "smp",
        #[cfg(feature = "udp")]
        "udp",
    ]
    .to_vec()
}

/// The factory of conduit `name`, if compiled in, with its settings from
/// the environment (read when it creates the conduit; [`Config`] gives
/// them in code).
pub fn conduit_factory(name: &str) -> Option<Box<dyn ConduitFactory>> {
    match name {
        #[cfg(feature = "smp")]
        "smp" => Some(Box::new(gex_conduit_smp::SmpFactory)),
        #[cfg(feature = "udp")]
        "udp" => Some(Box::new(gex_conduit_udp::UdpFactory::from_env())),
        _ => None,
    }
}

/// Initialises the client (`gex_Client_Init`) on the conduit the launcher
/// chose (`GEX_CONDUIT`), or the first one compiled in, with the settings
/// of the environment ([`Config::from_env`]; a value that does not parse is
/// an error naming the variable). Collective.
pub fn init(name: &str) -> Result<(Client, Ep, Tm)> {
    init_with_flags(name, Flags::empty())
}

/// [`init`] with flags.
pub fn init_with_flags(name: &str, flags: Flags) -> Result<(Client, Ep, Tm)> {
    let config = Config::from_env().map_err(gex_core::report)?;
    init_with_config(name, flags, &config)
}

/// A barrier over the primordial team through the start-up control plane.
/// Slow (a round trip through the launcher): for set-up and tests; the
/// collectives layer provides the fast one.
pub fn barrier(tm: &Tm) -> Result<()> {
    context::check_may_communicate("gex::barrier")?;
    if !tm.is_primordial() {
        return Err(Error::bad_arg("gex::barrier: only the primordial team"));
    }
    tm.ep().runtime().bootstrap_barrier()
}
