//! The pattern walker shared by glob and grep: it walks the file system and
//! a compiled pattern tree (see `pattern`) together, and hands out every
//! match in byte order of its printed path.
//!
//! - A directory is only entered when the pattern can match below it, and
//!   only listed when a wildcard has to be matched against its entries:
//!   literal components are looked up directly.
//! - `**` never enters a symbolic link (no cycles); a component that names
//!   a symlink to a directory (`*`, a literal) does follow it, as glob(3).
//! - Unreadable or vanished directories are passed over silently.
//! - Results stream in sorted order without being collected: siblings are
//!   visited in the order of `name` for the entry itself and `name/` for
//!   what lies below it, which is exactly the byte order of full paths.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs::{self, FileType};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use super::pattern::{Glob, Root, Tree, ROOT};

/// One result of a walk.
#[derive(Debug, Clone, Copy)]
pub struct Found<'a> {
    /// The path as printed: the root's prefix, one `/`, the names (and a
    /// trailing `/` for a pattern that ends with one). It is also the path
    /// to open, relative to the current directory.
    pub path: &'a [u8],
    /// The type of the entry itself (a symlink is a symlink, not followed).
    pub file_type: FileType,
}

/// Calls `visit` for each match of `glob`, sorted by bytes, each once.
pub fn walk(glob: &Glob, mut visit: impl FnMut(Found<'_>)) {
    match glob.roots.as_slice() {
        [root] => walk_root(root, &mut visit),
        roots => {
            // Alternatives with both relative and absolute patterns: two
            // sorted streams, merged here (a rare case, so simply collected).
            let mut all: Vec<(Vec<u8>, FileType)> = Vec::new();
            for root in roots {
                walk_root(root, &mut |f: Found<'_>| all.push((f.path.to_vec(), f.file_type)));
            }
            all.sort_by(|a, b| a.0.cmp(&b.0));
            all.dedup_by(|a, b| a.0 == b.0);
            for (path, file_type) in &all {
                visit(Found { path, file_type: *file_type });
            }
        }
    }
}

fn walk_root(root: &Root, visit: &mut dyn FnMut(Found<'_>)) {
    let mut path = root.prefix.clone();
    if root.tree.node(ROOT).ends {
        if let Ok(meta) = fs::symlink_metadata(fs_path(&path)) {
            visit(Found { path: &path, file_type: meta.file_type() });
        }
    }
    let states = closure(&root.tree, vec![ROOT]);
    Walker { tree: &root.tree, visit }.directory(&mut path, &states);
}

/// The path to hand to the file system for a printed path.
fn fs_path(path: &[u8]) -> &OsStr {
    if path.is_empty() {
        OsStr::new(".")
    } else {
        OsStr::from_bytes(path)
    }
}

/// Appends `name` to a directory's printed path with exactly one `/`.
fn push_name(path: &mut Vec<u8>, name: &[u8]) {
    if !path.is_empty() && !path.ends_with(b"/") {
        path.push(b'/');
    }
    path.extend_from_slice(name);
}

/// Adds the `**` nodes that may match zero directories: wherever a node is,
/// its `**` children are too.
fn closure(tree: &Tree, mut nodes: Vec<usize>) -> Vec<usize> {
    let mut i = 0;
    while i < nodes.len() {
        for &child in &tree.node(nodes[i]).children {
            if tree.node(child).component.is_any_dirs() && !nodes.contains(&child) {
                nodes.push(child);
            }
        }
        i += 1;
    }
    nodes.sort_unstable();
    nodes.dedup();
    nodes
}

/// The nodes an entry named `name` reaches from `states`. A `**` node
/// reaches itself (one more directory); its `**` children are already in
/// `states` by closure, so children that are `**` are not tried here.
fn transitions(tree: &Tree, states: &[usize], name: &[u8]) -> Vec<usize> {
    let mut next = Vec::new();
    for &state in states {
        let node = tree.node(state);
        if node.component.is_any_dirs() && node.component.matches(name) {
            next.push(state);
        }
        for &child in &node.children {
            let component = &tree.node(child).component;
            if !component.is_any_dirs() && component.matches(name) {
                next.push(child);
            }
        }
    }
    next.sort_unstable();
    next.dedup();
    next
}

/// An entry of a directory that the pattern reaches.
struct Child {
    file_type: FileType,
    next: Vec<usize>,
}

/// What to do with an entry, in sorted order.
enum Step {
    /// Print it (with a trailing `/` when a pattern ended with one).
    Emit { slash: bool },
    /// Walk the directory below it in these states.
    Enter(Vec<usize>),
}

struct Walker<'t, 'v> {
    tree: &'t Tree,
    visit: &'v mut dyn FnMut(Found<'_>),
}

impl Walker<'_, '_> {
    /// Visits the directory at `path` (a printed path, restored on return)
    /// where the pattern has reached `states`.
    fn directory(&mut self, path: &mut Vec<u8>, states: &[usize]) {
        let tree = self.tree;
        let found = self.entries(path, states);
        let mut steps: Vec<(Vec<u8>, Step, &[u8], FileType)> = Vec::new();
        for (name, child) in &found {
            let ends = child.next.iter().any(|&n| tree.node(n).ends);
            let ends_dir = child.next.iter().any(|&n| tree.node(n).ends_dir);
            // `**` nodes got here by consuming this entry: they may not go
            // through a symlink.
            let through: Vec<usize> = if child.file_type.is_symlink() {
                child
                    .next
                    .iter()
                    .copied()
                    .filter(|&n| !tree.node(n).component.is_any_dirs())
                    .collect()
            } else {
                child.next.clone()
            };
            let below = closure(tree, through);
            let goes_on = below.iter().any(|&n| {
                let node = tree.node(n);
                node.component.is_any_dirs() || !node.children.is_empty()
            });
            let is_dir = (ends_dir || goes_on) && self.is_dir(path, name, child.file_type);
            let mut slashed = name.clone();
            slashed.push(b'/');
            if ends {
                steps.push((name.clone(), Step::Emit { slash: false }, name, child.file_type));
            }
            if ends_dir && is_dir {
                steps.push((slashed.clone(), Step::Emit { slash: true }, name, child.file_type));
            }
            if goes_on && is_dir {
                steps.push((slashed, Step::Enter(below), name, child.file_type));
            }
        }
        // Stable: for equal keys (`name/`), the entry comes before its contents.
        steps.sort_by(|a, b| a.0.cmp(&b.0));
        let len = path.len();
        for (_, step, name, file_type) in steps {
            push_name(path, name);
            match step {
                Step::Emit { slash } => {
                    if slash {
                        path.push(b'/');
                    }
                    (self.visit)(Found { path, file_type });
                }
                Step::Enter(states) => self.directory(path, &states),
            }
            path.truncate(len);
        }
    }

    /// The entries of the directory that some state can reach, by name.
    /// The directory is listed only when a wildcard or `**` must be tried;
    /// literal names are looked up (and `.`/`..` always are: no listing
    /// shows them).
    fn entries(&self, path: &mut Vec<u8>, states: &[usize]) -> BTreeMap<Vec<u8>, Child> {
        let tree = self.tree;
        let mut found = BTreeMap::new();
        let lists = states.iter().any(|&s| {
            let node = tree.node(s);
            node.component.is_any_dirs()
                || node.children.iter().any(|&c| tree.node(c).component.literal().is_none())
        });
        let mut listed = false;
        if lists {
            if let Ok(entries) = fs::read_dir(fs_path(path)) {
                listed = true;
                for entry in entries.flatten() {
                    let Ok(file_type) = entry.file_type() else { continue };
                    let name = entry.file_name().into_vec();
                    let next = transitions(tree, states, &name);
                    if !next.is_empty() {
                        found.insert(name, Child { file_type, next });
                    }
                }
            }
        }
        let literals = states
            .iter()
            .flat_map(|&s| &tree.node(s).children)
            .filter_map(|&c| tree.node(c).component.literal());
        let len = path.len();
        for name in literals {
            let dots = name == b"." || name == b"..";
            if (listed && !dots) || found.contains_key(name) {
                continue;
            }
            push_name(path, name);
            let meta = fs::symlink_metadata(fs_path(path));
            path.truncate(len);
            if let Ok(meta) = meta {
                let next = transitions(tree, states, name);
                found.insert(name.to_vec(), Child { file_type: meta.file_type(), next });
            }
        }
        found
    }

    /// Whether the entry is a directory, following a symlink.
    fn is_dir(&self, path: &mut Vec<u8>, name: &[u8], file_type: FileType) -> bool {
        if !file_type.is_symlink() {
            return file_type.is_dir();
        }
        let len = path.len();
        push_name(path, name);
        let is_dir = fs::metadata(fs_path(path)).is_ok_and(|m| m.is_dir());
        path.truncate(len);
        is_dir
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob_in(dir: &std::path::Path, pattern: &str) -> Vec<String> {
        let prefix = dir.to_str().unwrap();
        let glob = Glob::new(Some(prefix), pattern).unwrap();
        let mut out = Vec::new();
        walk(&glob, |f| {
            let p = String::from_utf8_lossy(f.path).into_owned();
            out.push(p[prefix.len()..].to_owned());
        });
        out
    }

    #[test]
    fn sorted_like_full_paths() {
        let dir = tempfile::tempdir().unwrap();
        for d in ["a", "a-b", "a/b"] {
            fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        fs::write(dir.path().join("a-b/x"), "").unwrap();
        fs::write(dir.path().join("a/b/x"), "").unwrap();
        let got = glob_in(dir.path(), "**");
        assert_eq!(got, ["/a", "/a-b", "/a-b/x", "/a/b", "/a/b/x"]);
        let mut sorted = got.clone();
        sorted.sort();
        assert_eq!(got, sorted);
        assert_eq!(glob_in(dir.path(), "*/"), ["/a-b/", "/a/"]);
    }
}
