//! `cargo xtask check-layers`, inside a crate: the layers of gex-coll's
//! modules (its crate docs, "Layers"), checked against the imports in its
//! sources.
//!
//! A module is a top-level module of the crate: `src/x.rs` or `src/x/`
//! (every file under it counts as `x`). Its imports are the `crate::y`
//! paths in its code (`use crate::y::...`, `crate::y::f()`, and the names
//! of a `use crate::{y, z}` group), outside comments; the crate root
//! (`lib.rs`) is above every layer and is not checked. A module may use
//! the modules of its own layer and of the layers below; an arrow to a
//! layer above is a violation, and so is any circle of modules (within a
//! layer, where arrows are allowed both ways).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::layers::Report;

/// One layer: a name, for messages, and its modules.
pub type ModLayer = (&'static str, &'static [&'static str]);

/// gex-coll's layers, bottom first (the table of gex-coll/src/lib.rs).
pub const COLL_LAYERS: &[ModLayer] = &[
    ("base", &["engine", "reduce", "sync", "tree"]),
    ("state", &["area", "args", "team"]),
    ("handles", &["handle"]),
    ("mechanism: Active Messages", &["am"]),
    ("mechanism: shared-memory barrier", &["shmbar"]),
    ("mechanism: shared-memory data", &["shm"]),
    ("mechanism: hierarchy", &["hier"]),
    ("team barrier", &["barrier"]),
    ("mechanism: one-sided", &["onesided"]),
    ("planner", &["plan"]),
    (
        "public forms",
        &["addr", "allput", "coll", "g1", "multi", "teams"],
    ),
];

/// Module -> the modules it imports (itself excluded).
pub type ModGraph = BTreeMap<String, BTreeSet<String>>;

/// The module graph of the crate whose sources are in `src`.
pub fn module_graph(src: &Path) -> Result<ModGraph, String> {
    let mut graph = ModGraph::new();
    let entries = std::fs::read_dir(src).map_err(|e| format!("{}: {e}", src.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", src.display()))?.path();
        let name = match path.file_stem().and_then(|s| s.to_str()) {
            Some(n) => n.to_string(),
            None => continue,
        };
        if path.is_dir() {
            let mut files = Vec::new();
            rs_files(&path, &mut files)?;
            let deps = graph.entry(name.clone()).or_default();
            for f in files {
                deps.extend(imports(&read(&f)?));
            }
        } else if path.extension().is_some_and(|e| e == "rs") && name != "lib" {
            let deps = graph.entry(name.clone()).or_default();
            deps.extend(imports(&read(&path)?));
        } else {
            continue;
        }
        graph.get_mut(&name).expect("inserted").remove(&name);
    }
    Ok(graph)
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn rs_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_dir() {
            rs_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// The top-level modules that `code` names through `crate::` paths,
/// comments left out.
pub fn imports(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in code.lines() {
        let line = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            // `crate::` must start a path (not `my_crate::`).
            let before = rest[..i].chars().next_back();
            rest = &rest[i + "crate::".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            if let Some(group) = rest.strip_prefix('{') {
                // `crate::{a, b::c, self}`: the first name of each part.
                let end = group.find('}').unwrap_or(group.len());
                for part in group[..end].split(',') {
                    if let Some(m) = ident(part.trim_start()) {
                        out.insert(m);
                    }
                }
            } else if let Some(m) = ident(rest) {
                out.insert(m);
            }
        }
    }
    out.remove("self");
    out
}

fn ident(s: &str) -> Option<String> {
    let id: String = s
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!id.is_empty() && !id.starts_with(char::is_uppercase)).then_some(id)
}

/// Checks `graph` against `layers` (bottom first): every module must be in
/// the table, import nothing from a higher layer, and be in no circle.
/// `krate` names the crate in the messages.
pub fn check(krate: &str, graph: &ModGraph, layers: &[ModLayer]) -> Report {
    let mut report = Report::default();
    let layer_of: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(i, (_, ms))| ms.iter().map(move |m| (*m, i)))
        .collect();
    for (module, deps) in graph {
        let Some(&from) = layer_of.get(module.as_str()) else {
            report.lines.push(format!(
                "{krate}: module `{module}` is in no layer: add it to the layer table (xtask/src/modlayers.rs and {krate}'s crate docs)"
            ));
            report.violations += 1;
            continue;
        };
        for dep in deps {
            match layer_of.get(dep.as_str()) {
                Some(&to) if to > from => {
                    report.lines.push(format!(
                        "{krate}: `{module}` ({}) uses `{dep}` ({}), a higher layer: imports must run downward",
                        layers[from].0, layers[to].0
                    ));
                    report.violations += 1;
                }
                Some(_) => {}
                None if graph.contains_key(dep) => {} // reported as unlayered above
                None => {} // not a module (a macro, a re-export of lib.rs)
            }
        }
    }
    for cycle in cycles(graph) {
        report.lines.push(format!(
            "{krate}: modules in a circle: {} -> {}",
            cycle.join(" -> "),
            cycle[0]
        ));
        report.violations += 1;
    }
    if report.violations == 0 {
        report.lines.push(format!(
            "{krate}: {} modules in {} layers, imports downward, no circle",
            graph.len(),
            layers.len()
        ));
    }
    report
}

/// One circle per strongly connected component of more than one module
/// (Tarjan), as a path through it.
fn cycles(graph: &ModGraph) -> Vec<Vec<String>> {
    struct Tarjan<'g> {
        graph: &'g ModGraph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        sccs: Vec<Vec<&'g str>>,
    }
    impl<'g> Tarjan<'g> {
        fn visit(&mut self, v: &'g str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.graph.contains_key(w) {
                    continue;
                }
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if self.on_stack.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut scc = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    scc.push(w);
                    if w == v {
                        break;
                    }
                }
                self.sccs.push(scc);
            }
        }
    }
    let mut t = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        sccs: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.sccs
        .into_iter()
        .filter(|scc| scc.len() > 1)
        .map(|scc| circle_in(graph, &scc))
        .collect()
}

/// A circle through the first module of `scc` (a strongly connected
/// component), found by a breadth-first search inside it.
fn circle_in(graph: &ModGraph, scc: &[&str]) -> Vec<String> {
    let members: BTreeSet<&str> = scc.iter().copied().collect();
    let start = *members.iter().next().expect("non-empty");
    let mut prev: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for w in graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !members.contains(w) {
                continue;
            }
            if w == start {
                let mut path = vec![v.to_string()];
                let mut at = v;
                while at != start {
                    at = prev[at];
                    path.push(at.to_string());
                }
                path.reverse();
                return path;
            }
            if !prev.contains_key(w) && w != start {
                prev.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    scc.iter().map(|s| s.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &[&str])]) -> ModGraph {
        edges
            .iter()
            .map(|(m, ds)| (m.to_string(), ds.iter().map(|d| d.to_string()).collect()))
            .collect()
    }

    const LAYERS: &[ModLayer] = &[
        ("bottom", &["engine", "team"]),
        ("mechanisms", &["am", "shm"]),
        ("top", &["coll"]),
    ];

    #[test]
    fn a_layered_graph_passes() {
        let g = graph(&[
            ("engine", &[]),
            ("team", &["engine"]),
            ("am", &["engine", "team"]),
            ("shm", &["am", "team"]),
            ("coll", &["am", "shm", "engine"]),
        ]);
        let r = check("demo", &g, LAYERS);
        assert!(r.passed(), "{:?}", r.lines);
    }

    #[test]
    fn an_upward_arrow_is_rejected() {
        let g = graph(&[
            ("engine", &["am"]),
            ("team", &[]),
            ("am", &[]),
            ("shm", &[]),
            ("coll", &[]),
        ]);
        let r = check("demo", &g, LAYERS);
        assert_eq!(r.violations, 1, "{:?}", r.lines);
        assert!(r.lines[0].contains("`engine` (bottom) uses `am` (mechanisms)"));
    }

    #[test]
    fn a_circle_is_rejected_even_within_a_layer() {
        let g = graph(&[
            ("engine", &[]),
            ("team", &[]),
            ("am", &["shm"]),
            ("shm", &["am"]),
            ("coll", &["am"]),
        ]);
        let r = check("demo", &g, LAYERS);
        assert_eq!(r.violations, 1, "{:?}", r.lines);
        assert!(
            r.lines[0].contains("circle: am -> shm -> am"),
            "{:?}",
            r.lines
        );
        // Across layers too: the upward arrow and the circle are both named.
        let g = graph(&[
            ("engine", &["coll"]),
            ("team", &[]),
            ("am", &[]),
            ("shm", &[]),
            ("coll", &["engine"]),
        ]);
        let r = check("demo", &g, LAYERS);
        assert_eq!(r.violations, 2, "{:?}", r.lines);
    }

    #[test]
    fn an_unknown_module_is_rejected() {
        let g = graph(&[("engine", &[]), ("stray", &["engine"])]);
        let r = check("demo", &g, LAYERS);
        assert_eq!(r.violations, 1);
        assert!(r.lines[0].contains("`stray` is in no layer"));
    }

    #[test]
    fn imports_are_read_from_paths_outside_comments() {
        let code = "use crate::engine::{lock, Key};\n\
                    use crate::{am, shm::small};\n\
                    // crate::coll in a comment\n\
                    /// [`crate::plan`] in docs\n\
                    let x = crate::team::team_of(tm)?; // and crate::hier\n\
                    use gex_crate::thing;\n\
                    pub(crate) fn f() {}\n";
        let got: Vec<String> = imports(code).into_iter().collect();
        assert_eq!(got, ["am", "engine", "shm", "team"]);
    }
}
