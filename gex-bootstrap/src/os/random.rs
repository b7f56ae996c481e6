//! Random bytes, job ids and job keys.

/// `N` random bytes from the kernel's random source (`getrandom`). The one
/// source of job ids and keys.
///
/// # Panics
///
/// If the kernel has no random bytes to give (no `getrandom(2)` and no
/// `/dev/urandom`): a job key made up without them would be guessable, so
/// there is no weaker fallback.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    if let Err(e) = getrandom::fill(&mut bytes) {
        panic!("gex: the kernel's random source failed: {e}");
    }
    bytes
}

/// `2 * N` random hex digits ([`random_bytes`]).
pub fn random_hex<const N: usize>() -> String {
    random_bytes::<N>()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A fresh job id: 16 random hex digits (it names the job's shared-memory
/// objects and tells jobs apart; it is no secret).
pub fn new_job_id() -> String {
    random_hex::<8>()
}

/// A fresh job key: 64 random hex digits (256 bits).
pub fn new_job_key() -> String {
    random_hex::<32>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_keys_are_fresh_hex() {
        let (a, b) = (new_job_id(), new_job_id());
        assert_eq!(a.len(), 16);
        assert_ne!(a, b);
        let k = new_job_key();
        assert_eq!(k.len(), 64);
        assert!(k.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(random_bytes::<16>(), random_bytes::<16>());
    }
}
