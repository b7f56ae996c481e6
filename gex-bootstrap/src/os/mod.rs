//! The operating-system plumbing of every gex crate, written once:
//!
//! - [`shm`]: nameless shared-memory objects (memfds) that peers on the
//!   same host map through `/proc/<pid>/fd`, so that nothing outlives a
//!   crashed job;
//! - [`net`]: the walk of this host's network interfaces (the address a
//!   rank publishes, where the launcher's control plane listens);
//! - [`host`]: this host's name;
//! - [`random`]: random bytes, job ids and job keys from the kernel.
//!
//! The system calls go through the `nix` and `getrandom` crates; none of
//! these runs on a communication fast path.
//!
//! # For layer and conduit authors
//!
//! Programs never need this module: it is public so that the conduits, the
//! layers and the launcher share one copy.
//!
//!
//! # Why not the `shared_memory` crate
//!
//! Its objects are named (`shm_open` names under `/dev/shm`), peers open
//! them by name, and the name is removed only when the owner's handle
//! drops, so a rank or launcher killed before that leaves the memory
//! behind. Ours have no name at all; peers reach a memfd through
//! `/proc/<pid>/fd/<n>` only while its creator holds it, and the kernel
//! frees it with the last mapping.

pub mod host;
pub mod net;
pub mod random;
pub mod shm;
