//! Typed configuration: [`Config`] holds the settings of the core, of every
//! layer and of every conduit compiled in, and [`init_with_config`] starts
//! a client with them.
//!
//!
//! Settings are typed. The core, each layer and each conduit that has any
//! keep them in one struct with public fields and a documented default per
//! field, each naming its `GEX_*` variable: `gex_core::ClientSettings`
//! (`GEX_STATS`), `gex_rma::RmaSettings` (`GEX_RMA_FORCE_AM`),
//! `gex_vis::VisSettings`, `gex_coll::CollSettings`,
//! `gex_conduit_udp::UdpSettings`, the ibv conduit's; smp has none.
//! `Default` is what an empty environment gives, and a test in each crate
//! keeps it equal to the default stated in the table of variables
//! (`gex_bootstrap::vars::VARS`, and so the README). `from_env()` reads the
//! variables once, at init, through `gex_bootstrap::vars::Lookup` (the
//! environment, or pairs in tests), whose `flag` and `parse` make a value
//! that does not parse or is out of bounds an error naming the variable and
//! the value; a name read must be in the table. Nothing reads a variable
//! where it is used, and no library code sets one.
//!
//! The settings travel as arguments: a conduit's in its factory
//! (`UdpFactory::new(settings)`; values set in code are checked against the
//! same bounds), the core's to `Client::init_with_settings`, a layer's to
//! its `register_with(ep, &settings)` (run as a `LayerInit` closure).
//! `Config` gathers them (plus the conduit's name, `GEX_CONDUIT`):
//! `gex::init` is `init_with_config` with `Config::from_env()`; an
//! embedding runtime builds a `Config` (from `Config::default()` to read no
//! variable); `init_with_factory` runs the same layers over a conduit the
//! program makes, such as a wrapper of `Config::conduit_factory()`. Only the
//! launcher's description of the job (`GEX_RANK`, `GEX_SIZE`, `GEX_CTRL`,
//! the key, `GEX_HOSTS`, the rendezvous) is read by gex-bootstrap from the
//! environment; a conduit gets what it needs of it with the `Bootstrap`.

use gex_core::bootstrap::vars::Lookup;
use gex_core::conduit::ConduitFactory;
use gex_core::{report, Client, ClientSettings, Ep, LayerInit, Tm};
use gex_types::{Error, Flags, Result};

use crate::conduits;
use gex_core::bootstrap::wire::ENV_CONDUIT;

/// The settings of everything this build of gex contains, one struct per
/// crate. [`Config::default`] is what an empty environment gives (every
/// field documents its variable and default); [`Config::from_env`] reads
/// the `GEX_*` variables, as [`crate::init`] does. Fields are public:
/// start from either and change what the program decides.
///
/// ```
/// let mut config = gex::Config::default(); // nothing from the environment
/// config.conduit = Some("udp".into());
/// config.udp.mtu = Some(1472);
/// let (_client, _ep, tm) = gex::init_with_config("CONFIGURED", gex::Flags::empty(), &config)?;
/// assert_eq!(gex::stats()?.get("max_datagram"), Some(1472));
/// gex::barrier(&tm)?;
/// # Ok::<(), gex::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Config {
    /// `GEX_CONDUIT` (`gex-run --conduit` sets it; default `None`: the
    /// first conduit compiled in, see [`conduits`]): the conduit by name.
    pub conduit: Option<String>,
    /// gex-core's settings (`GEX_STATS`).
    pub client: ClientSettings,
    /// The udp conduit's settings (`GEX_UDP_*`, `GEX_HOST`), used when it
    /// is the conduit (feature `udp`).
    #[cfg(feature = "udp")]
    pub udp: gex_conduit_udp::UdpSettings,
    /// The ibv conduit's settings (`GEX_IBV_*`, `GEX_HOST`), used when it
    /// is the conduit (feature `ibv`).
    #[cfg(feature = "ibv")]
    pub ibv: gex_conduit_ibv::IbvSettings,
    /// gex-rma's settings (`GEX_RMA_FORCE_AM`; feature `rma`).
    #[cfg(feature = "rma")]
    pub rma: gex_rma::RmaSettings,
    /// gex-vis's settings (`GEX_VIS_FORCE_AM`; feature `vis`).
    #[cfg(feature = "vis")]
    pub vis: gex_vis::VisSettings,
    /// gex-coll's settings (`GEX_COLL_FORCE_*`; feature `coll`).
    #[cfg(feature = "coll")]
    pub coll: gex_coll::CollSettings,
}

impl Config {
    /// The settings this process's environment gives. A value that does
    /// not parse is an error naming the variable and the value (those of
    /// every crate compiled in, whichever conduit is chosen).
    pub fn from_env() -> Result<Config> {
        Self::from_lookup(Lookup::env())
    }

    /// The settings `vars` gives (see [`Config::from_env`]).
    pub fn from_lookup(vars: Lookup<'_>) -> Result<Config> {
        Ok(Config {
            conduit: vars.value(ENV_CONDUIT),
            client: ClientSettings::from_lookup(vars)?,
            #[cfg(feature = "udp")]
            udp: gex_conduit_udp::UdpSettings::from_lookup(vars)?,
            #[cfg(feature = "ibv")]
            ibv: gex_conduit_ibv::IbvSettings::from_lookup(vars)?,
            #[cfg(feature = "rma")]
            rma: gex_rma::RmaSettings::from_lookup(vars)?,
            #[cfg(feature = "vis")]
            vis: gex_vis::VisSettings::from_lookup(vars)?,
            #[cfg(feature = "coll")]
            coll: gex_coll::CollSettings::from_lookup(vars)?,
        })
    }

    /// The factory of the chosen conduit, with its settings: what
    /// [`init_with_config`] starts the job on. A program that interposes
    /// on the conduit (instrumentation, a test double) wraps it and passes
    /// the wrapper to [`init_with_factory`].
    pub fn conduit_factory(&self) -> Result<Box<dyn ConduitFactory>> {
        let name = match &self.conduit {
            Some(c) => c.clone(),
            None => conduits().first().map(|c| c.to_string()).ok_or_else(|| {
                Error::not_init("no conduit is compiled in (enable a conduit feature of gex)")
            })?,
        };
        let factory: Option<Box<dyn ConduitFactory>> = match name.as_str() {
            #[cfg(feature = "smp")]
            "smp" => Some(Box::new(gex_conduit_smp::SmpFactory)),
            #[cfg(feature = "udp")]
            "udp" => Some(Box::new(gex_conduit_udp::UdpFactory::new(self.udp.clone()))),
            #[cfg(feature = "ibv")]
            "ibv" => Some(Box::new(gex_conduit_ibv::IbvFactory::new(self.ibv.clone()))),
            _ => None,
        };
        factory.ok_or_else(|| {
            Error::bad_arg(format!(
                "conduit {name:?} is not compiled in (available: {})",
                conduits().join(", ")
            ))
        })
    }
}

/// Initialises the client (`gex_Client_Init`) with the settings in
/// `config`, on the conduit it names, running the set-up of every layer
/// compiled in: what [`crate::init`] does with [`Config::from_env`].
/// Nothing is read from the environment except the launcher's description
/// of the job (rank, size, control plane, hosts). Collective.
pub fn init_with_config(name: &str, flags: Flags, config: &Config) -> Result<(Client, Ep, Tm)> {
    let factory = config.conduit_factory().map_err(report)?;
    init_with_factory(name, flags, config, &*factory)
}

/// [`init_with_config`] over the conduit `factory` makes instead of the
/// one `config` names (the layers still take their settings from
/// `config`): how a program runs over a conduit of its own, or over a
/// wrapper of [`Config::conduit_factory`]'s. Collective.
pub fn init_with_factory(
    name: &str,
    flags: Flags,
    config: &Config,
    factory: &dyn ConduitFactory,
) -> Result<(Client, Ep, Tm)> {
    #[cfg(feature = "rma")]
    let rma = |ep: &Ep| gex_rma::register_with(ep, &config.rma);
    #[cfg(feature = "coll")]
    let coll = |ep: &Ep| gex_coll::register_with(ep, &config.coll);
    #[cfg(feature = "ratomic")]
    let ratomic = |ep: &Ep| gex_ratomic::register(ep);
    #[cfg(feature = "vis")]
    let vis = |ep: &Ep| gex_vis::register_with(ep, &config.vis);
    let layers: &[LayerInit<'_>] = &[
        #[cfg(feature = "rma")]
        &rma,
        #[cfg(feature = "ratomic")]
        &ratomic,
        #[cfg(feature = "vis")]
        &vis,
        #[cfg(feature = "coll")]
        &coll,
    ];
    Client::init_with_settings(name, flags, factory, layers, &config.client)
}

#[cfg(all(
    test,
    feature = "smp",
    feature = "udp",
    feature = "coll",
    feature = "vis"
))]
mod tests {
    use super::*;

    #[test]
    fn the_environment_fills_every_crates_settings() {
        let c = Config::from_lookup(Lookup::pairs(&[
            ("GEX_CONDUIT", "udp"),
            ("GEX_STATS", "1"),
            ("GEX_UDP_MTU", "1000"),
            ("GEX_RMA_FORCE_AM", "1"),
            ("GEX_VIS_FORCE_AM", "1"),
            ("GEX_COLL_FORCE_AM", "1"),
            ("GEX_COLL_FORCE_DEFER", "0"),
        ]))
        .unwrap();
        assert_eq!(c.conduit.as_deref(), Some("udp"));
        assert!(c.client.stats_at_exit);
        assert_eq!(c.udp.mtu, Some(1000));
        assert!(c.rma.force_am);
        assert!(c.vis.force_am);
        assert!(c.coll.force_am && !c.coll.force_defer);
        let d = Config::from_lookup(Lookup::pairs(&[])).unwrap();
        assert_eq!(d.conduit, None);
        assert_eq!(d.client, ClientSettings::default());
        assert_eq!(d.udp, gex_conduit_udp::UdpSettings::default());
        assert_eq!(d.rma, gex_rma::RmaSettings::default());
        assert_eq!(d.vis, gex_vis::VisSettings::default());
        assert_eq!(d.coll, gex_coll::CollSettings::default());
    }

    #[test]
    fn a_bad_value_of_any_crate_names_its_variable() {
        for (var, bad) in [
            ("GEX_STATS", "yes"),
            ("GEX_UDP_MTU", "abc"),
            ("GEX_RMA_FORCE_AM", "2"),
            ("GEX_VIS_FORCE_AM", "2"),
            ("GEX_COLL_FORCE_AM", "on"),
            ("GEX_COLL_FORCE_DEFER", "true"),
        ] {
            let e = Config::from_lookup(Lookup::pairs(&[(var, bad)])).expect_err(var);
            assert!(e.message().contains(&format!("{var}={bad:?}")), "{e}");
        }
    }

    #[test]
    fn an_unknown_conduit_is_an_error_naming_it() {
        let mut c = Config {
            conduit: Some("carrier-pigeon".into()),
            ..Config::default()
        };
        let e = c.conduit_factory().err().expect("no such conduit");
        assert!(
            e.message()
                .contains("\"carrier-pigeon\" is not compiled in"),
            "{e}"
        );
        c.conduit = Some("ibv".into());
        match c.conduit_factory() {
            Ok(f) => assert!(cfg!(feature = "ibv") && f.name() == "ibv"),
            Err(e) => assert!(
                !cfg!(feature = "ibv") && e.message().contains("\"ibv\" is not compiled in"),
                "{e}"
            ),
        }
        c.conduit = None;
        assert_eq!(c.conduit_factory().unwrap().name(), conduits()[0]);
        // The default conduit is the one the table of variables names.
        let table = gex_core::bootstrap::vars::var(ENV_CONDUIT).unwrap();
        assert_eq!(table.default, conduits()[0]);
    }
}
