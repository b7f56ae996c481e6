//! The C interface of gex: the GASNet-EX calls of `gasnetex.h` (and the
//! GASNet-1 calls of `gasnet.h`) as `extern "C"` functions over the Rust
//! calls API.md names, for C and C++ programs and runtimes.
//!
//! Built as `libgex_capi.a` and `libgex_capi.so` (installed as `libgex` by
//! `cargo xtask c-install PREFIX`); the headers are in `include/`
//! (`gasnetex.h`, `gasnet.h`, `gasnet_ratomic.h`, `gasnet_vis.h`,
//! `gasnet_mk.h`, `gasnet_coll.h`, `gasnet_tools.h`). Every symbol this
//! library exports starts with `gex_`, `gasnet_`, `gasnett_` or, for the
//! entry points of the headers' inline wrappers (`gex_AM_RequestShort3` and
//! the like are `static inline` functions that pass their arguments as an
//! array), `_gex_` and `_gasnet_`. The one exported data symbol,
//! `_gex_rma_fast`, is the table `gasnetex.h`'s inline blocking puts and
//! gets read ([`fast`]).
//!
//! Handles are pointers to objects this library allocates once and never
//! frees (client, endpoints, teams, segments: a process has a handful), or,
//! for events, to a boxed Rust event freed when the event is synced. C
//! handlers are registered in the same per-endpoint tables as Rust ones: the
//! registered Rust closure calls the C function with a token that points to
//! a record on the dispatching thread's stack.
//!
//! Errors: calls the spec gives an `int` result return `GASNET_OK` (0) or
//! the error code (`GASNET_ERR_*`) and print the message when verbose
//! errors are on; calls whose result only reports the `IMMEDIATE` no-op
//! (AM and RMA injection) and calls without a result end the job with the
//! message (`gex::fatal`), as the reference does for an erroneous call.

#![allow(non_camel_case_types, non_snake_case, clippy::missing_safety_doc)]

pub mod am;
pub mod coll;
pub mod coll1;
pub mod core;
pub mod diag;
pub mod fast;
pub mod g1;
pub mod mk;
pub mod npam;
pub mod ratomic;
pub mod rma;
pub use gex_tools as tools;
pub mod types;
pub mod vis;

pub use types::*;
