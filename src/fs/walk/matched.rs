//! The full profile's glob walk: the seed's pattern tree (`fs::pattern`,
//! the same syntax and errors) run over the ignore-aware walk (`ignored`),
//! which decides what is seen (hidden names, ignore files) as `fd --glob`
//! does. A directory is only entered while the pattern can match below it.
//!
//! Hidden names are the walk's to leave out, so a wildcard here also
//! matches a name that starts with `.` (`hidden: true` with `*` lists
//! `.env`, as fd does); `.` and `..` are never met.

use super::ignore_files::IgnoreFiles;
use super::ignored::{walk_ignoring, Met, Rules};
use super::{closure, literal_start, push_name};
use crate::confine::Roots;
use crate::error::ToolError;
use crate::fs::pattern::Root;
use crate::fs::pattern::{Component, Glob, Tree};

/// Calls `found` with each match of `glob` the walk keeps, as printed (a
/// directory matched by a pattern ending with `/` gets one), and the entry.
/// A start that cannot be opened gives no matches; one outside the roots
/// is `PERMISSION_DENIED`. The ignore files read are counted in `files`.
pub fn glob_ignoring(
    glob: &Glob,
    roots: Option<&Roots>,
    rules: &Rules,
    files: &mut IgnoreFiles,
    found: &mut dyn FnMut(&[u8], &Met<'_>),
) -> Result<(), ToolError> {
    for root in &glob.roots {
        let (prefix, node) = start_of(root);
        let tree = &root.tree;
        // The states reached at each depth: `below[d]` for entries at depth d.
        let mut below: Vec<Vec<usize>> = vec![closure(tree, vec![node])];
        let mut next = Vec::new();
        let mut shown = Vec::new();
        let start = String::from_utf8_lossy(&prefix).into_owned();
        let start = (!start.is_empty()).then_some(start.as_str());
        let walked = walk_ignoring(start, roots, rules, files, &mut |met: &Met<'_>| {
            if !met.kept {
                return false;
            }
            below.truncate(met.depth + 1);
            let Some(states) = below.last() else { return false };
            transitions(tree, states, met.name(), &mut next);
            if next.is_empty() {
                return false;
            }
            let is_dir = met.kind.is_dir();
            if next.iter().any(|&n| tree.node(n).ends) {
                found(met.path, met);
            }
            if is_dir && next.iter().any(|&n| tree.node(n).ends_dir) {
                shown.clear();
                shown.extend_from_slice(met.path);
                shown.push(b'/');
                found(&shown, met);
            }
            if !is_dir {
                return false;
            }
            let deeper = closure(tree, next.clone());
            let goes_on = deeper.iter().any(|&n| {
                let node = tree.node(n);
                node.component.is_any_dirs() || !node.children.is_empty()
            });
            below.push(deeper);
            goes_on
        });
        match walked {
            Err(e @ ToolError::PermissionDenied(_)) => return Err(e),
            _ => continue,
        }
    }
    Ok(())
}

/// Where the walk of `root` starts: the directory its leading literal
/// components name (`src/**/*.rs` starts in `src`, `../*.c` in `..`), and
/// the pattern node there. That directory is taken as given, as `rg` and
/// `fd` take the path they are given: the rules apply below it.
fn start_of(root: &Root) -> (Vec<u8>, usize) {
    let (mut prefix, mut at) = literal_start(root);
    loop {
        let node = root.tree.node(at);
        let [child] = node.children[..] else { break };
        let next = root.tree.node(child);
        let Some(name) = next.component.literal() else { break };
        if node.ends || node.ends_dir || next.ends || next.ends_dir {
            break;
        }
        push_name(&mut prefix, name);
        at = child;
    }
    (prefix, at)
}

/// The nodes an entry named `name` reaches from `states` (as the seed's
/// walk, but a wildcard matches a hidden name too).
fn transitions(tree: &Tree, states: &[usize], name: &[u8], next: &mut Vec<usize>) {
    next.clear();
    for &state in states {
        let node = tree.node(state);
        if node.component.is_any_dirs() {
            next.push(state);
        }
        for &child in &node.children {
            let component = &tree.node(child).component;
            if !component.is_any_dirs() && matches(component, name) {
                next.push(child);
            }
        }
    }
    next.sort_unstable();
    next.dedup();
}

fn matches(component: &Component, name: &[u8]) -> bool {
    match component {
        Component::Literal(literal) => literal == name,
        Component::AnyDirs => true,
        Component::Wild { test, .. } => test.matches(name),
    }
}
