//! gex-coll: GASNet-EX collectives and teams (spec v0.17 "Collectives
//! (Coll)", `gex_TM_Split` / `gex_TM_Create` / `gex_TM_Destroy`; the
//! GASNet-1 split-phase barrier; the scatter, gather, gather-all and
//! exchange of the collectives design notes).
//!
//! ```text
//! barrier_nb(&tm, Flags::empty())?.wait()?;
//! broadcast_nb(&tm, root, &mut buf, Some(&data), Flags::empty())?.wait()?;
//! reduce_to_all_nb_typed(&tm, &mut sum, Some(&mine), &Op::Add.into(), Flags::empty())?.wait()?;
//! let row = tm_split(&tm, Some(row), col, None, Flags::TM_NO_SCRATCH)?;
//! barrier_notify(7, 0)?; barrier_wait(7, 0)?;
//! ```
//!
//! - Non-blocking collectives return a [`CollHandle`] that borrows the
//!   caller's buffers and that any thread may sync (it is `Send`; wait and
//!   test for one, some or all); each has a blocking form (`broadcast`,
//!   `reduce_to_all`, ...). See [`coll`] for the rules common to all.
//! - Data-movement collectives take the design notes' sync modes in
//!   `flags` (`Flags::COLL_IN_*`, `COLL_OUT_*`; see [`coll`]), and the
//!   segment hints `Flags::COLL_DST_IN_SEGMENT` / `COLL_SRC_IN_SEGMENT`,
//!   which make the data move one-sided; the `*_with` calls add the
//!   address modes ([`Addrs`]: LOCAL, SINGLE).
//! - The multi-address ("i") forms `broadcasti_nb`, ... serve several
//!   images per member ([`Images`]); `all_put_nb` / `all_get_nb` (and
//!   the `i` forms) are the notes' generalised collectives ([`Partners`]).
//! - Small data collectives (a writer's input up to 1 KiB, any operator)
//!   go through inline slots in shared memory on every team whose
//!   members share the neighbourhood, with no lock and no allocation per
//!   operation, and larger ones on sub-teams in pieces of a slot
//!   (module `shm::small`); reductions of elements larger than a slot, and
//!   above a slot with user-defined operators on the primordial team of
//!   a one-neighbourhood job, are gathered through shared memory and
//!   combined locally in rank order (`coll::reductions_over_am` counts
//!   those that use AMs). Larger ones on the primordial team of
//!   a job that is one neighbourhood (smp; reductions with built-in
//!   operators) go through shared memory too: eight 16 KiB chunk slots per rank
//!   in the collectives' area, chunks pipelined, counters in shared memory
//!   (module `shm::data` documents the protocol).
//! - Elsewhere: dissemination barrier; binomial-tree broadcast (pipelined
//!   by chunk); binomial-tree reductions and, for small vectors,
//!   recursive-doubling reduce-to-all, both combining in rank order (so
//!   `GEX_OP_USER_NC` works and results are reproducible); flat scatter,
//!   gather, gather-all and exchange.
//! - Those run over one internal Active Message handler (index 5).
//!   Operations are keyed by (team id, per-team call number), so any number
//!   may be in flight over any teams, and messages for an operation a rank
//!   has not started yet are kept until it does. They advance inside the
//!   handlers, which send without blocking; a send refused for lack of
//!   queue space is retried by the layer's progress hook, which gex-core
//!   runs in every wait, poll and test outside handler context. The module
//!   `engine` documents the protocol.
//! - Barriers use shared memory where every member shares one
//!   neighbourhood: the GASNet-1 barrier when the neighbourhood is the
//!   whole job, and `barrier_nb` over any team whose members all share
//!   this process's neighbourhood (one channel of the area per team,
//!   looked at by the handle; see `shmbar`). Elsewhere, and with
//!   `GEX_COLL_FORCE_AM=1` ([`CollSettings`], for testing), they use Active
//!   Messages.
//! - [`register`] must run on every rank during client init (the `gex`
//!   facade does it): it registers the handler and the progress hook and
//!   sets up the shared memory, collectively.
//!
//! # Layers
//!
//! The modules form layers; a module uses only modules of its own layer
//! and of the layers below, and no two modules use each other, directly
//! or around a circle (`cargo xtask check-layers` checks both, from the
//! `crate::` paths in the sources, against this table, which
//! xtask/src/modlayers.rs repeats as `COLL_LAYERS`). Bottom first; each
//! row of the mechanisms is a layer of its own, above the rows before it
//! (so the hierarchy may use the AM and shared-memory mechanisms, never
//! the reverse):
//!
//! | Layer | Modules | What |
//! |---|---|---|
//! | base | `engine`, `tree`, `reduce`, `sync` | the AM engine (one handler, operations keyed by team and call), tree shapes, the operators, the sync modes |
//! | state | `area`, `team`, `args` | the shared-memory area (layout, channels and each team's view of its channel, the paced wait), the team registry (with each team's grouping by neighbourhood), the argument checks |
//! | handles | `handle` | [`CollHandle`]; it advances a mechanism's operation through the trait `handle::Mechanism` only |
//! | mechanisms | `am` | Active Message algorithms over the engine (`am::algos`), the AM barrier and all-gather, `OUT_ALLSYNC`'s barrier |
//! | | `shmbar` | the shared-memory barrier (and `flat_barrier`: it, or the AM one) |
//! | | `shm` | shared-memory data: inline slots and pieces (`shm::small`), pipelined chunks (`shm::data`) |
//! | | `hier` | the hierarchy, composing the others: broadcast, reductions, barrier (`hier`), scatter/gather/exchange (`hier::blocks`) |
//! | | `barrier` | the barrier of any team (hierarchical, shared memory or AM) and `IN_ALLSYNC`'s entry barrier |
//! | | `onesided` | the segment-hint (one-sided) algorithms and the address modes ([`Addrs`]) |
//! | planner | `plan` | per call: the checks, then the mechanism, from the team, the sizes, the modes, the hints and the settings |
//! | public forms | `coll`, `addr`, `multi`, `allput`, `g1`, `teams` | the EX calls and their blocking forms, the address-mode, multi-image and all_put/all_get forms, the GASNet-1 barrier, the team constructors |
//!
//! The crate root (this file) sits above them all: the re-exports, the
//! settings and [`register`].
//!
//! # For layer and conduit authors
//!
//! [`register`] and the modules [`coll`] and [`reduce`] as modules are the
//! layer's own interface; the `gex` facade exports the calls of a program
//! (`gex::coll`).

#![warn(missing_docs)]

// The modules, by layer (bottom first; see "Layers" above). A module may
// use the modules of the layers below its own; `cargo xtask check-layers`
// checks it (xtask/src/modlayers.rs, `COLL_LAYERS`).
//
// Base: the engine, the tree shapes, the operators, the sync modes.
mod engine;
pub mod reduce;
mod sync;
mod tree;
// State: the shared area, the team registry, the argument checks.
mod area;
mod args;
mod team;
// Handles.
mod handle;
// Mechanisms, each a layer above the previous: AM, shared-memory
// barrier, shared-memory data, hierarchy, any team's barrier, one-sided.
mod am;
mod barrier;
mod hier;
mod onesided;
mod shm;
mod shmbar;
// The planner.
mod plan;
// Public forms.
mod addr;
mod allput;
pub mod coll;
mod g1;
mod multi;
mod teams;

pub use addr::{
    broadcast_nb_with, broadcast_with, exchange_nb_with, exchange_with, gather_all_nb_with,
    gather_all_with, gather_nb_with, gather_with, scatter_nb_with, scatter_with,
};
pub use allput::{
    all_get, all_get_nb, all_geti, all_geti_nb, all_put, all_put_nb, all_puti, all_puti_nb,
    Partners,
};
pub use coll::{
    barrier, barrier_nb, barrier_uses_shared_memory, broadcast, broadcast_nb, exchange,
    exchange_nb, gather, gather_all, gather_all_nb, gather_nb, reduce_to_all, reduce_to_all_nb,
    reduce_to_all_nb_typed, reduce_to_all_typed, reduce_to_one, reduce_to_one_nb,
    reduce_to_one_nb_typed, reduce_to_one_typed, reductions_over_am, scatter, scatter_nb,
};
pub use g1::{
    barrier_blocking, barrier_notify, barrier_result, barrier_try, barrier_wait,
    BARRIERFLAG_ANONYMOUS, BARRIERFLAG_MISMATCH, BARRIERFLAG_UNNAMED,
};
pub use handle::CollHandle;
pub use multi::{
    broadcasti, broadcasti_nb, exchangei, exchangei_nb, gather_alli, gather_alli_nb, gatheri,
    gatheri_nb, scatteri, scatteri_nb, Images,
};
pub use onesided::Addrs;
pub use reduce::{reduce_sequential, Elem, ReduceOp, UserReduceFn};
pub use teams::{
    recommended_scratch_size, tm_create, tm_create_scratch_size, tm_create_scratch_size_for,
    tm_destroy, tm_split, tm_split_scratch_size,
};

use gex_am::{register_internal_handlers, HandlerEntry};
use gex_core::internals::*;
use gex_core::Ep;
use gex_types::{Flags, Result};

/// The layer's set-up, run on every rank at client init before the closing
/// barrier (the facade passes it to `Client::init_with_layers`): registers
/// the collectives' AM handler and progress hook, and sets up the shared
/// memory of the barriers (collective over the job), with its settings from
/// the environment ([`CollSettings::from_env`]). A runtime using gex-coll
/// without the facade must call it (or [`register_with`]) on every rank
/// during init.
pub fn register(ep: &Ep) -> Result<()> {
    register_with(ep, &CollSettings::from_env()?)
}

/// gex-coll's settings, applied at client init by [`register_with`]. Both
/// are for testing. `Default` is what an empty environment gives;
/// [`CollSettings::from_env`] reads the variables named on each field.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CollSettings {
    /// `GEX_COLL_FORCE_AM` (`1`; default off): collectives move data with
    /// Active Messages even within a neighbourhood (no shared-memory
    /// barriers or data collectives; if any rank sets it, no rank uses
    /// them).
    pub force_am: bool,
    /// `GEX_COLL_FORCE_DEFER` (`1`; default off): collective handlers
    /// defer every message they forward to the progress hook.
    pub force_defer: bool,
    /// `GEX_COLL_SINGLE_COPY` (`0` turns it off; default on): large
    /// blocking broadcasts and scatters within a neighbourhood let the
    /// readers copy straight out of the root's memory (`process_vm_readv`)
    /// where the system allows it; off, they copy through shared memory
    /// (if any rank turns it off, no rank uses it).
    pub no_single_copy: bool,
    /// `GEX_COLL_HIER` (`0` turns it off; default on): teams spanning
    /// neighbourhoods use the hierarchical broadcast, reductions,
    /// barrier, scatter, gather, gather-all and exchange (shared memory
    /// inside each neighbourhood, Active Messages between one
    /// representative of each); off, the flat Active Message algorithms
    /// (if any rank turns it off, no rank uses them).
    pub no_hier: bool,
    /// `GEX_COLL_REDUCE_SCATTER` (`0` never, `1` always; default: a
    /// reduce-to-all from 16 KiB, never a reduce-to-one): large
    /// reductions over shared memory go by reduce-scatter (each member
    /// reduces a share of every chunk, then the shares are gathered)
    /// instead of every reader combining every member's vector (members
    /// that disagree end the job with a collective mismatch).
    pub reduce_scatter: Option<bool>,
}

impl CollSettings {
    /// The settings this process's environment gives; a value that does
    /// not parse is an error naming the variable.
    pub fn from_env() -> Result<CollSettings> {
        Self::from_lookup(gex_core::bootstrap::vars::Lookup::env())
    }

    /// The settings `vars` gives (see [`CollSettings::from_env`]).
    pub fn from_lookup(vars: gex_core::bootstrap::vars::Lookup<'_>) -> Result<CollSettings> {
        Ok(CollSettings {
            force_am: vars.flag("GEX_COLL_FORCE_AM", false)?,
            force_defer: vars.flag("GEX_COLL_FORCE_DEFER", false)?,
            no_single_copy: !vars.flag("GEX_COLL_SINGLE_COPY", true)?,
            no_hier: !vars.flag("GEX_COLL_HIER", true)?,
            reduce_scatter: vars
                .parse(
                    "GEX_COLL_REDUCE_SCATTER",
                    "0 (never) or 1 (always; default by rank count and size)",
                    |v: &u8| *v <= 1,
                )?
                .map(|v: u8| v == 1),
        })
    }
}

/// [`register`] with the settings given in code (nothing is read from the
/// environment).
pub fn register_with(ep: &Ep, settings: &CollSettings) -> Result<()> {
    engine::set_force_defer(settings.force_defer);
    shm::data::set_reduce_scatter(settings.reduce_scatter);
    handle::set_mechanisms(&[&shm::ChunkedData, &shm::SmallData, &hier::Hierarchy]);
    let mut table = [HandlerEntry::request(
        engine::H_COLL,
        Flags::AM_MEDIUM,
        engine::NARGS as u32,
        |tok, msg| engine::handle(tok.src_rank(), msg.args(), msg.payload()),
    )
    .with_name("gex-coll")];
    // gex-coll sends through the conduit directly (its handlers must never
    // block), so it keeps no LayerAm.
    register_internal_handlers(ep, &mut table)?;
    ep.runtime().add_progress_hook(progress_hook)?;
    area::setup(
        ep.runtime(),
        settings.force_am,
        !settings.no_single_copy,
        !settings.no_hier,
    )
}

/// The layer's progress: deferred sends, then the shared-memory data
/// collectives (shared-memory barriers are looked at by their handles).
fn progress_hook() -> usize {
    engine::retry_deferred() + shm::data::progress() + shm::small::progress() + hier::progress()
}

#[cfg(test)]
mod tests {
    use super::CollSettings;
    use gex_core::bootstrap::vars::{var, Lookup};

    #[test]
    fn coll_settings_from_variables() {
        let read = |pairs: &[(&str, &str)]| CollSettings::from_lookup(Lookup::pairs(pairs));
        assert_eq!(read(&[]).unwrap(), CollSettings::default());
        let s = read(&[("GEX_COLL_FORCE_AM", "1"), ("GEX_COLL_FORCE_DEFER", "1")]).unwrap();
        assert!(s.force_am && s.force_defer);
        for v in ["GEX_COLL_FORCE_AM", "GEX_COLL_FORCE_DEFER"] {
            let e = read(&[(v, "on")]).unwrap_err();
            assert!(e.message().contains(&format!("{v}=\"on\"")), "{e}");
            assert_eq!(var(v).unwrap().default, "off");
        }
        let d = CollSettings::default();
        assert!(!d.force_am && !d.force_defer && !d.no_single_copy);
        assert!(
            read(&[("GEX_COLL_SINGLE_COPY", "0")])
                .unwrap()
                .no_single_copy
        );
        assert_eq!(var("GEX_COLL_SINGLE_COPY").unwrap().default, "on");
        assert!(read(&[("GEX_COLL_HIER", "0")]).unwrap().no_hier);
        assert!(!d.no_hier);
        assert_eq!(var("GEX_COLL_HIER").unwrap().default, "on");
        assert_eq!(d.reduce_scatter, None);
        for (v, want) in [("0", Some(false)), ("1", Some(true))] {
            let s = read(&[("GEX_COLL_REDUCE_SCATTER", v)]).unwrap();
            assert_eq!(s.reduce_scatter, want);
        }
        let e = read(&[("GEX_COLL_REDUCE_SCATTER", "2")]).unwrap_err();
        assert!(e.message().contains("GEX_COLL_REDUCE_SCATTER"), "{e}");
    }
}
