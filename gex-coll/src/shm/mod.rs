//! Mechanism: the shared-memory data collectives of a team whose members
//! share this process's neighbourhood: small data through inline slots
//! and pieces of a slot ([`small`]), and large data on the primordial
//! team of a one-neighbourhood job in pipelined 16 KiB chunks ([`data`]).
//! What both need of the other's order lives in `order`, below both, so
//! that only `data` looks at `small`. Both keep their queued work in this process and advance it in the
//! progress hook and in the tests of their handles ([`SmallData`],
//! [`ChunkedData`]: the handle's [`Mechanism`]).
//!
//! Layer: a mechanism. Uses the engine, the operators, the sync modes,
//! the shared area (its layout and the teams' channel views), the team
//! registry, the handles and the AM mechanism (the `OUT_ALLSYNC`
//! barrier); not the barrier or hierarchy mechanisms.

pub(crate) mod data;
mod order;
pub(crate) mod small;

pub(crate) use order::blocking;

use crate::handle::Mechanism;

/// The small-data collectives, as a handle advances them.
pub(crate) struct SmallData;

impl Mechanism for SmallData {
    fn progress(&self) -> usize {
        small::progress()
    }
}

/// The chunked data collectives, as a handle advances them.
pub(crate) struct ChunkedData;

impl Mechanism for ChunkedData {
    fn progress(&self) -> usize {
        data::progress()
    }
}
