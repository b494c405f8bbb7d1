//! The crate's top-level modules form no cycle: each can be read, tested and
//! changed knowing only the modules below it.
//!
//! What counts (read from the sources, not from the compiler):
//! - the modules: those `src/lib.rs` declares; a file belongs to the
//!   top-level module whose tree declares it (`mod x;`, `#[path]` too), so
//!   `main.rs` and what only it declares are not part of the graph;
//! - a use: any `crate::X` in code (a `use`, a path in an expression or a
//!   type, `crate::{X, …}` groups), and `super::X` that climbs out of the
//!   file's top-level module, where `X` is another top-level module; test
//!   code counts (a test that needs a module above its own is a cycle too),
//!   comments do not;
//! - the entry: `lib.rs` and `cli` (the front end, which wires every
//!   module) may use anything; nothing may use `cli`, and the rest must be
//!   acyclic.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The front end: it may use every module, and no module may use it.
const ENTRY: &str = "cli";

/// Module → the modules it uses → the files that use it.
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

#[test]
fn the_top_level_modules_form_no_cycle_and_none_uses_the_entry() {
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    // The graph, for whoever reads the test's output (`--nocapture`).
    for (module, uses) in &graph {
        let names: Vec<&str> = uses.keys().map(String::as_str).collect();
        println!("{module} -> {}", names.join(" "));
    }
    assert!(graph.len() > 10, "too few modules found: {:?}", graph.keys());
    for (module, uses) in &graph {
        if let Some(files) = uses.get(ENTRY) {
            panic!(
                "{module} uses the entry, {ENTRY} (in {files:?}): hand it what it needs instead"
            );
        }
    }
    if let Some(cycle) = find_cycle(&graph) {
        let steps: Vec<String> = cycle
            .windows(2)
            .map(|w| format!("{} -> {} (in {:?})", w[0], w[1], graph[&w[0]][&w[1]]))
            .collect();
        panic!("the modules form a cycle: {}\n{}", cycle.join(" -> "), steps.join("\n"));
    }
}

#[test]
fn a_cycle_is_found_and_named() {
    let edge = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    let graph = |edges: &[(String, String)]| -> Graph {
        let mut g = Graph::new();
        for (a, b) in edges {
            g.entry(a.clone()).or_default().entry(b.clone()).or_default().insert("x.rs".into());
            g.entry(b.clone()).or_default();
        }
        g
    };
    let acyclic = graph(&[edge("fs", "error"), edge("tools", "fs"), edge("tools", "error")]);
    assert_eq!(find_cycle(&acyclic), None);
    let cyclic = graph(&[
        edge("fs", "protocol"),
        edge("protocol", "context"),
        edge("context", "jobs"),
        edge("jobs", "fs"),
        edge("tools", "fs"),
    ]);
    assert_eq!(
        find_cycle(&cyclic),
        Some(["context", "jobs", "fs", "protocol", "context"].map(String::from).to_vec())
    );
    assert_eq!(
        uses_in("use crate::{fs::x, json};\nlet a = crate::limit::A; // crate::cli"),
        ["fs", "json", "limit"]
    );
    assert_eq!(uses_in("/// [`crate::cli`]\n//! crate::mcp"), Vec::<String>::new());
}

/// A cycle, as the modules in order with the first repeated at the end, or
/// `None`.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        graph: &Graph,
        module: &str,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match marks.get(module) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let from = path.iter().position(|m| m == module)?;
                let mut cycle = path[from..].to_vec();
                cycle.push(module.to_owned());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(module.to_owned(), Mark::Open);
        path.push(module.to_owned());
        for next in graph.get(module).into_iter().flat_map(BTreeMap::keys) {
            if let Some(cycle) = visit(graph, next, marks, path) {
                return Some(cycle);
            }
        }
        path.pop();
        marks.insert(module.to_owned(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    graph.keys().find_map(|m| visit(graph, m, &mut marks, &mut Vec::new()))
}

/// The graph of the crate at `src`.
fn module_graph(src: &Path) -> Graph {
    let top: Vec<(String, PathBuf)> = declared_mods(&src.join("lib.rs"), src);
    let names: BTreeSet<&str> = top.iter().map(|(name, _)| name.as_str()).collect();
    let mut graph = Graph::new();
    for (module, file) in &top {
        let uses = graph.entry(module.clone()).or_default();
        let mut files = vec![(file.clone(), 0)];
        while let Some((file, depth)) = files.pop() {
            let text = std::fs::read_to_string(&file).unwrap();
            let dir = mod_dir(&file);
            for (_, child) in declared_mods(&file, &dir) {
                files.push((child, depth + 1));
            }
            let shown = file.strip_prefix(src).unwrap_or(&file).display().to_string();
            let climbed = super_uses(&text, depth);
            for used in uses_in(&text).into_iter().chain(climbed) {
                if used != *module && names.contains(used.as_str()) {
                    uses.entry(used).or_default().insert(shown.clone());
                }
            }
        }
    }
    graph
}

/// The directory a file's `mod x;` declarations are found in: its own for
/// `mod.rs` and `lib.rs`, else `x/` beside `x.rs`.
fn mod_dir(file: &Path) -> PathBuf {
    let parent = file.parent().unwrap().to_path_buf();
    match file.file_stem().and_then(|s| s.to_str()) {
        Some("mod" | "lib") => parent,
        Some(stem) => parent.join(stem),
        None => parent,
    }
}

/// The modules `file` declares out of line (`mod x;`, `pub(crate) mod x;`),
/// each with its file: `#[path = "…"]` (relative to `file`'s directory),
/// else `dir/x.rs` or `dir/x/mod.rs`.
fn declared_mods(file: &Path, dir: &Path) -> Vec<(String, PathBuf)> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut path_attr: Option<String> = None;
    let mut found = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("#[path = \"") {
            path_attr = rest.split('"').next().map(String::from);
            continue;
        }
        if line.starts_with("#[") {
            continue;
        }
        let decl = line.strip_prefix("pub ").or_else(|| line.strip_prefix("pub(crate) "));
        let decl = decl.unwrap_or(line);
        if let Some(name) = decl.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
            let path = match path_attr.take() {
                Some(p) => file.parent().unwrap().join(p),
                None if dir.join(format!("{name}.rs")).exists() => dir.join(format!("{name}.rs")),
                None => dir.join(name).join("mod.rs"),
            };
            found.push((name.to_owned(), path));
        }
        path_attr = None;
    }
    found
}

/// `text` without its comments (`//`, `///`, `//!` to the end of the line).
fn code_of(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            // Not inside a string such as "http://": a quote before it.
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level names after `crate::` in `text`'s code, in order.
fn uses_in(text: &str) -> Vec<String> {
    let code = code_of(text);
    let mut used = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        if code[..at].ends_with('$')
            || code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => used.extend(group_heads(group)),
            None => used.extend(ident(rest)),
        }
    }
    used
}

/// The first names of the items of a `{a::b, c, d::{e, f}}` group (text
/// after the opening brace).
fn group_heads(group: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut item_start = true;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => item_start = true,
            c if c.is_whitespace() => {}
            _ if item_start && depth == 0 => {
                heads.extend(ident(&group[i..]));
                item_start = false;
            }
            _ => {}
        }
    }
    heads
}

fn ident(text: &str) -> Option<String> {
    let end = text.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(text.len());
    (end > 0).then(|| text[..end].to_owned())
}

/// The names `super::…::X` reaches when it climbs out of the top-level
/// module, from a file `depth` files below it. (A `super` inside an inline
/// `mod tests` climbs one less; those name `super::*` or their own module's
/// items, never a top-level module, so they are not told apart here.)
fn super_uses(text: &str, depth: usize) -> Vec<String> {
    let code = code_of(text);
    let mut used = Vec::new();
    for (at, _) in code.match_indices("super::") {
        if code[..at].ends_with("super::") || code[..at].ends_with(|c: char| c.is_alphanumeric()) {
            continue;
        }
        let mut rest = &code[at..];
        let mut climbs = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            climbs += 1;
            rest = r;
        }
        if climbs == depth + 1 {
            used.extend(ident(rest));
        }
    }
    used
}
