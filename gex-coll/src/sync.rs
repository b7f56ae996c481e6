//! Synchronisation modes of the data-movement collectives (collectives
//! design notes, "Synchronization modes"), passed in `flags` at
//! initiation: at most one of `COLL_IN_{NO,MY,ALL}SYNC` and one of
//! `COLL_OUT_{NO,MY,ALL}SYNC`; none means MYSYNC.
//!
//! What each costs here:
//!
//! - `IN_NOSYNC` and `IN_MYSYNC` cost nothing: every algorithm reads a
//!   member's input when that member enters (it is copied into messages or
//!   the library's buffers at initiation) and writes a member's output only
//!   in that member's sync (from the library's buffers), so no block ever
//!   moves before its source and destination have entered, and nothing
//!   waits for anyone else. Data arriving for a member that has not entered
//!   waits in the library.
//! - `IN_ALLSYNC`: before this member's input is read, every member must
//!   have entered. For a rooted collective whose only input is the root's
//!   (broadcast, scatter), only the root waits: the other members tell it
//!   they entered (one empty message each, no wait) and go on; over a team
//!   with a shared-memory channel a barrier there is cheaper and is used
//!   instead. Every other collective reads every member's input, so every
//!   member waits for a barrier. The wait is in the initiation call (a
//!   non-blocking initiation may not keep a pointer to the caller's input:
//!   a leaked handle would leave the library reading freed memory).
//! - `OUT_MYSYNC` and `OUT_NOSYNC`: the sync succeeds once this member's
//!   own output is in place (NOSYNC could succeed earlier, but the output
//!   is written by the syncing thread, so it is the same).
//! - `OUT_ALLSYNC`: once this member's output is in place (its sync copied
//!   it), the member enters a dissemination barrier over Active Messages
//!   whose number in the team's sequence was reserved at initiation, and
//!   its sync succeeds when that barrier completes: every member's output
//!   is then in place. This is the notes' "zero-byte broadcast" class of
//!   cost (`ceil(log2 n)` rounds of one empty message per member), not a
//!   barrier before and after. A member must sync (or drop) its handle for
//!   the others' syncs to succeed.
//!
//! Here: the modes and their parsing (layer: bottom, uses nothing of
//! gex-coll); the `IN_ALLSYNC` barrier is `crate::barrier::enter_all`,
//! the `OUT_ALLSYNC` one `crate::am::start_out_barrier`.
//!
//! The mode is single-valued: it goes into every message's signature, so
//! members that disagree end the job with a message once they exchange
//! one (a disagreement that changes no message, such as `IN_ALLSYNC` on a
//! shared-memory team's barrier, is not detected).

use gex_types::{Error, Flags, Result};

const IN: Flags = Flags::COLL_IN_NOSYNC
    .union(Flags::COLL_IN_MYSYNC)
    .union(Flags::COLL_IN_ALLSYNC);
const OUT: Flags = Flags::COLL_OUT_NOSYNC
    .union(Flags::COLL_OUT_MYSYNC)
    .union(Flags::COLL_OUT_ALLSYNC);

/// A data-movement collective's synchronisation mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SyncMode {
    /// `COLL_IN_ALLSYNC`.
    pub(crate) in_all: bool,
    /// `COLL_OUT_ALLSYNC`.
    pub(crate) out_all: bool,
    /// The mode as one number, for signatures (IN * 3 + OUT, each 0 for
    /// NOSYNC, 1 for MYSYNC, 2 for ALLSYNC).
    pub(crate) word: u64,
}

impl SyncMode {
    /// No flags: `IN_MYSYNC | OUT_MYSYNC` (what `parse` gives for none).
    pub(crate) const MY: SyncMode = SyncMode {
        in_all: false,
        out_all: false,
        word: 4,
    };
}

/// The mode `flags` gives `call`; any other flag, or two of one kind, is
/// an error.
#[inline]
pub(crate) fn parse(call: &str, flags: Flags) -> Result<SyncMode> {
    if flags.is_empty() {
        // The common case, decided without the general parse.
        return Ok(SyncMode::MY);
    }
    parse_flags(call, flags)
}

fn parse_flags(call: &str, flags: Flags) -> Result<SyncMode> {
    let other = flags - IN - OUT;
    if !other.is_empty() {
        return Err(Error::bad_arg(format!(
            "{call}: only the COLL_IN_* and COLL_OUT_* sync modes are accepted; got {other:?}"
        )));
    }
    let pick = |kind: &str, set: Flags, no: Flags, all: Flags| -> Result<u64> {
        let f = flags & set;
        match f.bits().count_ones() {
            0 => Ok(1),
            1 if f == no => Ok(0),
            1 if f == all => Ok(2),
            1 => Ok(1),
            _ => Err(Error::bad_arg(format!(
                "{call}: at most one {kind} sync mode; got {f:?}"
            ))),
        }
    };
    let i = pick(
        "COLL_IN_*",
        IN,
        Flags::COLL_IN_NOSYNC,
        Flags::COLL_IN_ALLSYNC,
    )?;
    let o = pick(
        "COLL_OUT_*",
        OUT,
        Flags::COLL_OUT_NOSYNC,
        Flags::COLL_OUT_ALLSYNC,
    )?;
    Ok(SyncMode {
        in_all: i == 2,
        out_all: o == 2,
        word: i * 3 + o,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse() {
        let p = |f| parse("x", f);
        assert_eq!(p(Flags::empty()).unwrap(), SyncMode::MY);
        let m = p(Flags::COLL_IN_ALLSYNC | Flags::COLL_OUT_NOSYNC).unwrap();
        assert!(m.in_all && !m.out_all);
        assert_eq!(m.word, 6);
        let m = p(Flags::COLL_OUT_ALLSYNC).unwrap();
        assert!(!m.in_all && m.out_all);
        assert_eq!(
            p(Flags::COLL_IN_MYSYNC | Flags::COLL_OUT_MYSYNC).unwrap(),
            p(Flags::empty()).unwrap()
        );
        let e = p(Flags::COLL_IN_NOSYNC | Flags::COLL_IN_ALLSYNC).unwrap_err();
        assert!(e.message().contains("at most one COLL_IN_*"), "{e}");
        let e = p(Flags::COLL_OUT_MYSYNC | Flags::COLL_OUT_ALLSYNC).unwrap_err();
        assert!(e.message().contains("at most one COLL_OUT_*"), "{e}");
        let e = p(Flags::IMMEDIATE | Flags::COLL_IN_NOSYNC).unwrap_err();
        assert!(e.message().contains("IMMEDIATE"), "{e}");
        // Every combination has its own word.
        let ins = [
            Flags::COLL_IN_NOSYNC,
            Flags::COLL_IN_MYSYNC,
            Flags::COLL_IN_ALLSYNC,
        ];
        let outs = [
            Flags::COLL_OUT_NOSYNC,
            Flags::COLL_OUT_MYSYNC,
            Flags::COLL_OUT_ALLSYNC,
        ];
        let mut words: Vec<u64> = ins
            .iter()
            .flat_map(|&i| outs.iter().map(move |&o| p(i | o).unwrap().word))
            .collect();
        words.sort();
        words.dedup();
        assert_eq!(words.len(), 9);
    }
}
