//! The argument checks the collectives share (root, lengths, sizes),
//! each an error naming the call. Uses the team registry only.

use gex_types::{Error, Rank, Result};

use crate::team::TeamInfo;

pub(crate) fn check_root(call: &str, root: Rank, t: &TeamInfo) -> Result<()> {
    if root < t.size() {
        Ok(())
    } else {
        Err(Error::bad_arg(format!(
            "{call}: root {root} is not a rank of the team (size {})",
            t.size()
        )))
    }
}

pub(crate) fn check_len(call: &str, what: &str, got: usize, want: usize) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(Error::bad_arg(format!(
            "{call}: {what} is {got} bytes, {want} expected"
        )))
    }
}

/// Messages carry 32-bit offsets and lengths.
pub(crate) fn check_size(call: &str, nbytes: usize) -> Result<()> {
    if nbytes <= u32::MAX as usize {
        Ok(())
    } else {
        Err(Error::bad_arg(format!(
            "{call}: {nbytes} bytes exceed the 4 GiB a collective moves in one call"
        )))
    }
}
