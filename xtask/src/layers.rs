//! `cargo xtask check-layers`: the allowed dependency graph between workspace
//! crates (DESIGN.md section 2), checked against `cargo metadata`.
//!
//! Only normal and build dependencies count: they are what a crate links into
//! its users. Dev-dependencies may point anywhere (a layer's tests may well run
//! over a conduit).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// What one workspace crate may depend on, among workspace crates.
#[derive(Debug, Clone, Copy)]
pub enum Allowed {
    /// Exactly these workspace crates (an empty list: none).
    Only(&'static [&'static str]),
    /// Any workspace crate except these (and itself).
    AnyExcept(&'static [&'static str]),
}

impl Allowed {
    pub fn permits(&self, dep: &str) -> bool {
        match self {
            Allowed::Only(list) => list.contains(&dep),
            Allowed::AnyExcept(list) => !list.contains(&dep),
        }
    }

    /// How the rule reads in a violation message.
    pub fn describe(&self) -> String {
        match self {
            Allowed::Only([]) => "none".to_string(),
            Allowed::Only(list) => list.join(", "),
            Allowed::AnyExcept(list) => {
                format!("any workspace crate except {}", list.join(", "))
            }
        }
    }
}

/// One row of [`LAYER_TABLE`].
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub krate: &'static str,
    pub allowed: Allowed,
}

const fn only(krate: &'static str, deps: &'static [&'static str]) -> Rule {
    Rule {
        krate,
        allowed: Allowed::Only(deps),
    }
}

/// The allowed workspace dependency graph: row `X` lists the workspace crates
/// that `X` may name as a normal or build dependency. Every workspace crate
/// must have a row; a crate may have a row before it exists (then the row
/// is simply not used), so future crates get their rules up front.
///
/// The rules (DESIGN.md section 2):
/// * arrows point down only: a layer names only the layers below it;
/// * the control plane (gex-bootstrap) and the conduit interface
///   (gex-conduit) sit under the object model: a conduit, or a runtime that
///   embeds one, links neither gex-core nor a layer;
/// * no layer names a conduit: a conduit is chosen at start-up among those
///   compiled in, through the `Conduit` trait of gex-conduit;
/// * conduits depend on gex-conduit and gex-bootstrap (and the network
///   conduits on gex-conduit-smp, whose neighbourhood bypass they embed),
///   never on gex-core or a layer;
/// * gex-run, the launcher, speaks the control plane (gex-bootstrap) but
///   links no conduit, no object model and no layer: it never moves data;
/// * the facade `gex` re-exports everything a program may use, so it may name
///   any library crate, but not the launcher, the tests or the build tool;
/// * gex-testsuite (test programs and benchmarks) may use anything except
///   xtask; xtask (this tool) drives cargo and links no workspace crate.
///
/// When adding a crate, add its row here; `cargo xtask check-layers` fails
/// with "unknown crate" until you do.
pub const LAYER_TABLE: &[Rule] = &[
    // Plain types at the bottom of every graph.
    only("gex-types", &[]),
    // The start-up control plane and job ending.
    only("gex-bootstrap", &["gex-types"]),
    // The conduit interface.
    only("gex-conduit", &["gex-types", "gex-bootstrap"]),
    // Object model.
    only("gex-core", &["gex-types", "gex-bootstrap", "gex-conduit"]),
    // Layers, bottom to top.
    only(
        "gex-am",
        &["gex-types", "gex-bootstrap", "gex-conduit", "gex-core"],
    ),
    only(
        "gex-rma",
        &[
            "gex-types",
            "gex-bootstrap",
            "gex-conduit",
            "gex-core",
            "gex-am",
        ],
    ),
    only(
        "gex-vis",
        &[
            "gex-types",
            "gex-bootstrap",
            "gex-conduit",
            "gex-core",
            "gex-am",
            "gex-rma",
        ],
    ),
    only(
        "gex-ratomic",
        &[
            "gex-types",
            "gex-bootstrap",
            "gex-conduit",
            "gex-core",
            "gex-am",
            "gex-rma",
        ],
    ),
    only(
        "gex-coll",
        &[
            "gex-types",
            "gex-bootstrap",
            "gex-conduit",
            "gex-core",
            "gex-am",
            "gex-rma",
        ],
    ),
    // gex-mk publishes bound segments over any team: a team other than the
    // primordial one exists only through gex-coll (split, create), whose
    // gather-all is the exchange among exactly its members.
    only(
        "gex-mk",
        &[
            "gex-types",
            "gex-bootstrap",
            "gex-conduit",
            "gex-core",
            "gex-coll",
        ],
    ),
    // Conduits: the conduit interface and the control plane only; network
    // conduits embed the smp bypass.
    only(
        "gex-conduit-smp",
        &["gex-types", "gex-bootstrap", "gex-conduit"],
    ),
    only(
        "gex-conduit-udp",
        &[
            "gex-types",
            "gex-bootstrap",
            "gex-conduit",
            "gex-conduit-smp",
        ],
    ),
    only(
        "gex-conduit-ibv",
        &[
            "gex-types",
            "gex-bootstrap",
            "gex-conduit",
            "gex-conduit-smp",
        ],
    ),
    // Facade: every library crate, nothing that is a tool or a test.
    Rule {
        krate: "gex",
        allowed: Allowed::AnyExcept(&["gex-run", "gex-testsuite", "xtask"]),
    },
    // The GASNet tools library: no layer, usable by programs that do not
    // communicate.
    only("gex-tools", &[]),
    // The C interface: the facade's calls behind the spec's C names.
    only("gex-capi", &["gex", "gex-types", "gex-core", "gex-tools"]),
    // Launcher: the control plane only, no conduit, no layer.
    only("gex-run", &["gex-types", "gex-bootstrap"]),
    // Multi-process test programs and benchmarks.
    Rule {
        krate: "gex-testsuite",
        allowed: Allowed::AnyExcept(&["xtask"]),
    },
    // This tool.
    only("xtask", &[]),
];

/// A workspace package and the workspace crates it depends on (normal and
/// build dependencies only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspacePackage {
    pub name: String,
    pub deps: BTreeSet<String>,
}

/// Extracts the workspace dependency graph from `cargo metadata
/// --format-version 1` output (with or without `--no-deps`), in the order
/// cargo lists the packages.
pub fn workspace_graph(meta: &Value) -> Result<Vec<WorkspacePackage>, String> {
    let members: BTreeSet<&str> = meta["workspace_members"]
        .as_array()
        .ok_or("cargo metadata: no `workspace_members` array")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let packages = meta["packages"]
        .as_array()
        .ok_or("cargo metadata: no `packages` array")?;
    let member_packages: Vec<&Value> = packages
        .iter()
        .filter(|p| p["id"].as_str().is_some_and(|id| members.contains(id)))
        .collect();
    let member_names: BTreeSet<&str> = member_packages
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();

    let mut graph = Vec::new();
    for package in member_packages {
        let name = package["name"]
            .as_str()
            .ok_or("cargo metadata: package without a name")?;
        let mut deps = BTreeSet::new();
        for dep in package["dependencies"].as_array().into_iter().flatten() {
            // `kind` is null for normal dependencies, "build" or "dev".
            let counts = match dep["kind"].as_str() {
                None | Some("normal") | Some("build") => true,
                Some(_) => false,
            };
            // `name` is the package name even when the dependency is renamed;
            // a workspace dependency is a path dependency (source null), so
            // a registry crate that happens to share a member's name is not.
            let dep_name = dep["name"].as_str().unwrap_or_default();
            let is_path = dep["source"].is_null();
            if counts && is_path && member_names.contains(dep_name) && dep_name != name {
                deps.insert(dep_name.to_string());
            }
        }
        graph.push(WorkspacePackage {
            name: name.to_string(),
            deps,
        });
    }
    Ok(graph)
}

/// The outcome of [`check`]: one line per package (several for a package
/// with several bad edges) and the number of violations.
#[derive(Debug, Default)]
pub struct Report {
    pub lines: Vec<String>,
    pub violations: usize,
}

impl Report {
    pub fn passed(&self) -> bool {
        self.violations == 0
    }
}

/// Checks every package of `graph` against `table`.
pub fn check(graph: &[WorkspacePackage], table: &[Rule]) -> Report {
    let rules: BTreeMap<&str, &Rule> = table.iter().map(|r| (r.krate, r)).collect();
    let mut report = Report::default();
    for package in graph {
        let Some(rule) = rules.get(package.name.as_str()) else {
            report.lines.push(format!(
                "unknown crate {}: add it to the layer table in xtask",
                package.name
            ));
            report.violations += 1;
            continue;
        };
        let bad: Vec<&String> = package
            .deps
            .iter()
            .filter(|dep| !rule.allowed.permits(dep))
            .collect();
        if bad.is_empty() {
            let deps = if package.deps.is_empty() {
                "no workspace deps".to_string()
            } else {
                package.deps.iter().cloned().collect::<Vec<_>>().join(", ")
            };
            report.lines.push(format!("{}: OK ({deps})", package.name));
        } else {
            for dep in bad {
                report.lines.push(format!(
                    "{} -> {dep}: not allowed (allowed: {})",
                    package.name,
                    rule.allowed.describe()
                ));
                report.violations += 1;
            }
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// One dependency of a synthetic package: (name, kind, source).
    type Dep<'a> = (&'a str, Option<&'a str>, Option<&'a str>);

    fn normal(name: &str) -> Dep<'_> {
        (name, None, None)
    }

    /// Synthetic `cargo metadata --no-deps` output for a workspace of the
    /// given packages.
    fn metadata(packages: &[(&str, Vec<Dep<'_>>)]) -> Value {
        let id = |name: &str| format!("path+file:///ws/{name}#0.1.0");
        let packages: Vec<Value> = packages
            .iter()
            .map(|(name, deps)| {
                let deps: Vec<Value> = deps
                    .iter()
                    .map(|(dep, kind, source)| {
                        json!({
                            "name": dep,
                            "source": source,
                            "req": "^0.1.0",
                            "kind": kind,
                            "rename": null,
                            "optional": false,
                            "target": null,
                        })
                    })
                    .collect();
                json!({
                    "name": name,
                    "version": "0.1.0",
                    "id": id(name),
                    "source": null,
                    "dependencies": deps,
                    "targets": [],
                })
            })
            .collect();
        let members: Vec<String> = packages
            .iter()
            .map(|p| p["id"].as_str().unwrap().to_string())
            .collect();
        json!({
            "packages": packages,
            "workspace_members": members,
            "workspace_root": "/ws",
            "target_directory": "/ws/target",
            "version": 1,
        })
    }

    fn run(packages: &[(&str, Vec<Dep<'_>>)]) -> Report {
        let graph = workspace_graph(&metadata(packages)).expect("graph");
        check(&graph, LAYER_TABLE)
    }

    /// The intended full graph, including crates that do not exist yet.
    fn full_allowed_graph() -> Vec<(&'static str, Vec<Dep<'static>>)> {
        vec![
            ("gex-types", vec![normal("bitflags_is_not_a_member")]),
            ("gex-bootstrap", vec![normal("gex-types")]),
            (
                "gex-conduit",
                vec![normal("gex-types"), normal("gex-bootstrap")],
            ),
            (
                "gex-core",
                vec![
                    normal("gex-types"),
                    normal("gex-bootstrap"),
                    normal("gex-conduit"),
                ],
            ),
            ("gex-am", vec![normal("gex-types"), normal("gex-core")]),
            ("gex-rma", vec![normal("gex-core"), normal("gex-am")]),
            ("gex-vis", vec![normal("gex-rma"), normal("gex-am")]),
            ("gex-ratomic", vec![normal("gex-rma")]),
            ("gex-coll", vec![normal("gex-am"), normal("gex-rma")]),
            ("gex-mk", vec![normal("gex-core")]),
            (
                "gex-conduit-smp",
                vec![normal("gex-conduit"), normal("gex-bootstrap")],
            ),
            (
                "gex-conduit-udp",
                vec![normal("gex-conduit"), normal("gex-conduit-smp")],
            ),
            (
                "gex-conduit-ibv",
                vec![normal("gex-conduit"), normal("gex-conduit-smp")],
            ),
            (
                "gex",
                vec![
                    normal("gex-types"),
                    normal("gex-core"),
                    normal("gex-am"),
                    normal("gex-coll"),
                    normal("gex-conduit-smp"),
                    normal("gex-conduit-udp"),
                ],
            ),
            (
                "gex-run",
                vec![normal("gex-bootstrap"), normal("gex-types")],
            ),
            (
                "gex-testsuite",
                vec![normal("gex"), normal("gex-run"), normal("gex-conduit-smp")],
            ),
            ("xtask", vec![normal("serde_json_is_not_a_member")]),
        ]
    }

    #[test]
    fn allowed_graph_passes() {
        let report = run(&full_allowed_graph());
        assert!(report.passed(), "{:#?}", report.lines);
        assert_eq!(report.lines.len(), 17);
        assert!(report
            .lines
            .contains(&"gex-types: OK (no workspace deps)".to_string()));
        assert!(report
            .lines
            .contains(&"gex-am: OK (gex-core, gex-types)".to_string()));
    }

    #[test]
    fn current_placeholder_workspace_passes() {
        let report = run(&[
            ("gex-types", vec![]),
            ("gex-core", vec![normal("gex-types")]),
            ("gex-am", vec![]),
            ("gex-conduit-smp", vec![]),
            ("gex-run", vec![]),
            ("gex", vec![]),
            ("gex-testsuite", vec![]),
            ("xtask", vec![]),
        ]);
        assert!(report.passed(), "{:#?}", report.lines);
    }

    #[test]
    fn upward_edge_fails() {
        let report = run(&[
            ("gex-types", vec![]),
            ("gex-core", vec![normal("gex-types"), normal("gex-am")]),
            ("gex-am", vec![normal("gex-core")]),
        ]);
        assert!(!report.passed());
        assert_eq!(report.violations, 1);
        assert!(
            report.lines.contains(
                &"gex-core -> gex-am: not allowed (allowed: gex-types, gex-bootstrap, gex-conduit)"
                    .to_string()
            ),
            "{:#?}",
            report.lines
        );
        assert!(report.lines.contains(&"gex-am: OK (gex-core)".to_string()));
    }

    #[test]
    fn layer_naming_a_conduit_fails() {
        let report = run(&[
            ("gex-core", vec![]),
            ("gex-conduit-smp", vec![]),
            (
                "gex-am",
                vec![normal("gex-core"), normal("gex-conduit-smp")],
            ),
        ]);
        assert_eq!(report.violations, 1);
        assert!(report.lines.contains(
            &"gex-am -> gex-conduit-smp: not allowed (allowed: gex-types, gex-bootstrap, gex-conduit, gex-core)".to_string()
        ));
    }

    #[test]
    fn conduit_on_the_object_model_or_a_layer_fails() {
        let report = run(&[
            ("gex-am", vec![]),
            ("gex-conduit-smp", vec![normal("gex-am")]),
        ]);
        assert_eq!(report.violations, 1);
        let report = run(&[
            ("gex-core", vec![]),
            (
                "gex-conduit-udp",
                vec![normal("gex-conduit"), normal("gex-core")],
            ),
        ]);
        assert_eq!(report.violations, 1, "{:#?}", report.lines);
    }

    #[test]
    fn launcher_linking_a_conduit_fails() {
        let report = run(&[
            ("gex-conduit-smp", vec![]),
            ("gex-run", vec![normal("gex-conduit-smp")]),
        ]);
        assert_eq!(report.violations, 1);
    }

    #[test]
    fn facade_rules() {
        let report = run(&[
            ("gex-run", vec![]),
            ("gex-testsuite", vec![]),
            ("gex-mk", vec![]),
            ("gex", vec![normal("gex-mk"), normal("gex-run")]),
        ]);
        assert_eq!(report.violations, 1);
        assert!(report.lines.contains(
            &"gex -> gex-run: not allowed (allowed: any workspace crate except gex-run, gex-testsuite, xtask)"
                .to_string()
        ));
    }

    #[test]
    fn nothing_may_depend_on_xtask() {
        let report = run(&[("xtask", vec![]), ("gex-testsuite", vec![normal("xtask")])]);
        assert_eq!(report.violations, 1);
        let report = run(&[("gex-types", vec![]), ("xtask", vec![normal("gex-types")])]);
        assert!(report
            .lines
            .contains(&"xtask -> gex-types: not allowed (allowed: none)".to_string()));
    }

    #[test]
    fn unknown_crate_fails() {
        let report = run(&[
            ("gex-types", vec![]),
            ("gex-frob", vec![normal("gex-types")]),
        ]);
        assert!(!report.passed());
        assert_eq!(report.violations, 1);
        assert!(report
            .lines
            .contains(&"unknown crate gex-frob: add it to the layer table in xtask".to_string()));
    }

    #[test]
    fn build_dependencies_count_dev_dependencies_do_not() {
        let report = run(&[
            ("gex-am", vec![]),
            ("gex-conduit-smp", vec![]),
            (
                "gex-core",
                vec![
                    ("gex-am", Some("build"), None),
                    ("gex-conduit-smp", Some("dev"), None),
                ],
            ),
        ]);
        assert_eq!(report.violations, 1, "{:#?}", report.lines);
        assert!(report.lines[2].starts_with("gex-core -> gex-am: not allowed"));
    }

    #[test]
    fn registry_crate_sharing_a_member_name_is_ignored() {
        let registry = Some("registry+https://github.com/rust-lang/crates.io-index");
        let report = run(&[
            ("gex", vec![]),
            ("gex-types", vec![("gex", None, registry)]),
        ]);
        assert!(report.passed(), "{:#?}", report.lines);
    }

    #[test]
    fn full_metadata_with_non_member_packages() {
        let mut meta = metadata(&[("gex-types", vec![normal("bitflags")])]);
        // Without --no-deps cargo also lists registry packages; they are not
        // members and must not be checked.
        meta["packages"].as_array_mut().unwrap().push(json!({
            "name": "bitflags",
            "id": "registry+https://github.com/rust-lang/crates.io-index#bitflags@2.6.0",
            "source": "registry+https://github.com/rust-lang/crates.io-index",
            "dependencies": [],
        }));
        let graph = workspace_graph(&meta).unwrap();
        assert_eq!(
            graph,
            vec![WorkspacePackage {
                name: "gex-types".into(),
                deps: BTreeSet::new()
            }]
        );
    }

    #[test]
    fn malformed_metadata_is_an_error() {
        assert!(workspace_graph(&json!({"packages": []})).is_err());
        assert!(workspace_graph(&json!({"workspace_members": []})).is_err());
    }

    // The table itself.

    fn rule(name: &str) -> &'static Rule {
        LAYER_TABLE
            .iter()
            .find(|r| r.krate == name)
            .unwrap_or_else(|| panic!("{name} has no row"))
    }

    fn is_conduit(name: &str) -> bool {
        name.starts_with("gex-conduit-")
    }

    #[test]
    fn table_rows_are_unique_and_refer_to_known_crates() {
        let names: BTreeSet<&str> = LAYER_TABLE.iter().map(|r| r.krate).collect();
        assert_eq!(names.len(), LAYER_TABLE.len(), "duplicate row");
        for r in LAYER_TABLE {
            let list = match r.allowed {
                Allowed::Only(list) | Allowed::AnyExcept(list) => list,
            };
            for dep in list {
                assert!(names.contains(dep), "{} names unknown {dep}", r.krate);
                assert_ne!(*dep, r.krate, "{} names itself", r.krate);
            }
        }
    }

    #[test]
    fn table_arrows_point_down_only() {
        // Depth-first search over the Only rows: no cycle.
        fn visit(name: &str, path: &mut Vec<String>) {
            assert!(
                !path.iter().any(|p| p == name),
                "cycle: {} -> {name}",
                path.join(" -> ")
            );
            if let Allowed::Only(list) = rule(name).allowed {
                path.push(name.to_string());
                for dep in list {
                    visit(dep, path);
                }
                path.pop();
            }
        }
        for r in LAYER_TABLE {
            visit(r.krate, &mut Vec::new());
        }
    }

    #[test]
    fn no_layer_names_a_conduit_and_conduits_stay_low() {
        let layers = [
            "gex-types",
            "gex-bootstrap",
            "gex-conduit",
            "gex-core",
            "gex-am",
            "gex-rma",
            "gex-vis",
            "gex-ratomic",
            "gex-coll",
            "gex-mk",
            "gex-run",
        ];
        for layer in layers {
            let Allowed::Only(list) = rule(layer).allowed else {
                panic!("{layer} must have an explicit list");
            };
            assert!(
                !list.iter().any(|d| is_conduit(d)),
                "{layer} names a conduit"
            );
        }
        for conduit in LAYER_TABLE.iter().filter(|r| is_conduit(r.krate)) {
            let Allowed::Only(list) = conduit.allowed else {
                panic!("{} must have an explicit list", conduit.krate);
            };
            assert!(list.contains(&"gex-conduit"));
            for dep in list {
                assert!(
                    [
                        "gex-types",
                        "gex-bootstrap",
                        "gex-conduit",
                        "gex-conduit-smp"
                    ]
                    .contains(dep),
                    "{} -> {dep}",
                    conduit.krate
                );
            }
        }
    }
}
