//! gex-coll: collectives and teams (work in progress).

/// The layer's set-up on every rank at client init.
pub fn register(_ep: &gex_core::Ep) -> gex_types::Result<()> {
    Ok(())
}
