//! This host's name.

/// This host's name (`gethostname`), if it has a non-empty one. Ranks that
/// compare host identities use `GEX_HOST` first where it is set (see the
/// callers); this is the fallback.
pub fn hostname() -> Option<String> {
    nix::unistd::gethostname()
        .ok()
        .map(|h| h.to_string_lossy().into_owned())
        .filter(|h| !h.is_empty())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_hostname_matches_the_kernels() {
        let kernel = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        assert_eq!(super::hostname().as_deref(), Some(kernel.trim_end()));
    }
}
