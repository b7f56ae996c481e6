//! What xtask reads from `cargo metadata`.

use std::env;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The package that holds the multi-process test programs and benchmarks.
pub const TESTSUITE: &str = "gex-testsuite";
/// The launcher package, and its binary.
pub const LAUNCHER: &str = "gex-run";

/// The names of `package`'s binary targets, sorted; empty when the package
/// has none, an error when the workspace has no such package.
pub fn bins(meta: &Value, package: &str) -> Result<Vec<String>, String> {
    let pkg = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == package && p["source"].is_null())
        .ok_or_else(|| format!("the workspace has no package `{package}`"))?;
    let mut bins: Vec<String> = pkg["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| {
            t["kind"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|k| k == "bin"))
        })
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    bins.sort();
    Ok(bins)
}

/// The workspace root.
pub fn workspace_root(meta: &Value) -> Option<PathBuf> {
    meta["workspace_root"].as_str().map(PathBuf::from)
}

/// The target directory: `CARGO_TARGET_DIR` when set (relative to the
/// directory xtask runs in, as cargo reads it), else what cargo reports
/// (which also honours `build.target-dir`), else `<workspace>/target`.
pub fn target_dir(meta: &Value, env_target_dir: Option<PathBuf>, cwd: &Path) -> PathBuf {
    if let Some(dir) = env_target_dir.filter(|d| !d.as_os_str().is_empty()) {
        return cwd.join(dir);
    }
    if let Some(dir) = meta["target_directory"].as_str() {
        return PathBuf::from(dir);
    }
    workspace_root(meta)
        .unwrap_or_else(|| cwd.to_path_buf())
        .join("target")
}

/// [`target_dir`] for this process's environment.
pub fn current_target_dir(meta: &Value) -> PathBuf {
    let cwd = env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    target_dir(
        meta,
        env::var_os("CARGO_TARGET_DIR").map(PathBuf::from),
        &cwd,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta() -> Value {
        json!({
            "packages": [
                {"name": "gex-run", "source": null, "targets": [
                    {"kind": ["lib"], "name": "gex_run"},
                    {"kind": ["bin"], "name": "gex-run"},
                ]},
                {"name": "gex-testsuite", "source": null, "targets": [
                    {"kind": ["lib"], "name": "gex_testsuite"},
                    {"kind": ["bin"], "name": "test-barrier"},
                    {"kind": ["bin"], "name": "demo"},
                    {"kind": ["bin"], "name": "bench-am"},
                    {"kind": ["test"], "name": "test-not-a-bin"},
                    {"kind": ["example"], "name": "test-example"},
                ]},
                {"name": "gex-am", "source": null, "targets": [
                    {"kind": ["lib"], "name": "gex_am"},
                ]},
            ],
            "workspace_root": "/ws",
            "target_directory": "/ws/target",
        })
    }

    #[test]
    fn bins_of_a_package() {
        assert_eq!(
            bins(&meta(), "gex-testsuite").unwrap(),
            ["bench-am", "demo", "test-barrier"]
        );
        assert_eq!(bins(&meta(), "gex-run").unwrap(), ["gex-run"]);
        assert!(bins(&meta(), "gex-am").unwrap().is_empty());
        assert!(bins(&meta(), "gex-nope").is_err());
    }

    #[test]
    fn target_dir_precedence() {
        let cwd = Path::new("/home/u/ws/sub");
        assert_eq!(
            target_dir(&meta(), Some("/abs/t".into()), cwd),
            Path::new("/abs/t")
        );
        assert_eq!(
            target_dir(&meta(), Some("rel".into()), cwd),
            Path::new("/home/u/ws/sub/rel")
        );
        assert_eq!(
            target_dir(&meta(), Some("".into()), cwd),
            Path::new("/ws/target")
        );
        assert_eq!(target_dir(&meta(), None, cwd), Path::new("/ws/target"));
        assert_eq!(
            target_dir(&json!({"workspace_root": "/w"}), None, cwd),
            Path::new("/w/target")
        );
    }
}
