//! What a job could leave on this machine, for tests and diagnostics.
//!
//! Nothing, by design: the ranks' shared memory is nameless
//! (`gex_bootstrap::os::shm`) and the local control connections are socket pairs,
//! so a crash of any process at any moment leaves no name behind. This
//! looks anyway, so that tests catch a regression.

use gex_bootstrap::wire::shm_prefix;

/// Everything on this machine that names job `job_id`: `/dev/shm` objects,
/// entries of the temporary directory and `/tmp`, Unix socket addresses
/// (files or abstract names), and descriptors any process holds on the
/// job's shared memory (a rank still alive, or memory that outlived the
/// job). Empty once a job is over.
pub fn leftovers(job_id: &str) -> Vec<String> {
    let prefix = shm_prefix(job_id);
    let mut found = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from("/dev/shm"), "/tmp".into()];
    let tmp = std::env::temp_dir();
    if !dirs.contains(&tmp) {
        dirs.push(tmp);
    }
    for dir in dirs {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if entry.file_name().to_string_lossy().contains(job_id) {
                found.push(entry.path().display().to_string());
            }
        }
    }
    if let Ok(unix) = std::fs::read_to_string("/proc/net/unix") {
        found.extend(
            unix.lines()
                .filter(|l| l.contains(job_id))
                .map(|l| format!("Unix socket {}", l.rsplit(' ').next().unwrap_or(l))),
        );
    }
    let memfd = format!("/memfd:{prefix}");
    for proc in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let pid = proc.file_name();
        if !pid.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let fds = proc.path().join("fd");
        for fd in std::fs::read_dir(&fds).into_iter().flatten().flatten() {
            if let Ok(link) = std::fs::read_link(fd.path()) {
                if link.to_string_lossy().starts_with(&memfd) {
                    found.push(format!("{} -> {}", fd.path().display(), link.display()));
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_a_held_memfd_and_a_file() {
        let job = format!("leftovertest{}", std::process::id());
        assert!(super::leftovers(&job).is_empty());
        let name = gex_bootstrap::os::shm::object_name(&job, "x");
        let region = gex_bootstrap::os::shm::create(&name, 4096).unwrap();
        let found = super::leftovers(&job);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains(&name), "{found:?}");
        drop(region);
        assert!(super::leftovers(&job).is_empty());
    }
}
