//! gex-core: the GASNet-EX core object model (work in progress).
pub mod bootstrap {
    pub mod wire;
}
