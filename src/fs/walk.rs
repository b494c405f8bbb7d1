//! The pattern walker shared by glob and grep: it walks the file system and
//! a compiled pattern tree (see `pattern`) together, and hands out every
//! match in byte order of its printed path.
//!
//! - A directory is only entered when the pattern can match below it, and
//!   only listed when a wildcard has to be matched against its entries:
//!   literal components are looked up directly.
//! - `**` never enters a symbolic link (no cycles); a component that names
//!   a symlink to a directory (`*`, a literal) does follow it, as glob(3),
//!   unless it leads back to a directory already on the path being walked:
//!   such a link is listed but never entered, whatever the pattern (with
//!   `l1 -> .` … `l5 -> .`, `*/*/*/*/*/*/*/*/*/*` would otherwise walk 5^10
//!   directories). The walker keeps the (device, inode) of the directories
//!   on its path, found only when a link asks.
//! - Unreadable or vanished directories are passed over silently.
//! - Results stream in sorted order without being collected: siblings are
//!   visited in the order of `name` for the entry itself and `name/` for
//!   what lies below it, which is exactly the byte order of full paths.
//!
//! Confined (`walk_confined`, docs/CONFINEMENT.md), the walk never names a path to
//! the kernel: it starts from a directory opened beneath a root, enters each
//! directory with `open_entry` from its parent's descriptor (never following
//! a link), lists and looks up entries relative to that descriptor, and
//! hands out each entry as (directory descriptor, name), so that grep opens
//! the very file the walk met. A link to a directory that the pattern
//! follows is opened by its path from the root with `open_below`: followed
//! while it stays beneath the roots, skipped (listed as a link, never
//! entered nor shown with a `/`) when it leads out. Renaming a link in place
//! of a directory mid-walk can only make that directory vanish from it.
//! Without roots, paths are used as they always were (no change, no cost).
//!
//! Cheap per entry, since a tree walk meets thousands: a directory is read
//! with `getdents64` into one reused buffer (`dirents`; no `stat`, the entry
//! types come with the names), its names are kept in one buffer, and what
//! the pattern makes of an entry is worked out once per distinct set of
//! pattern states in the directory, not once per entry.

use std::cmp::Ordering;
use std::ffi::OsStr;
use std::fs;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::PathBuf;
use std::sync::Arc;

use rustix::fs::{fstat, OFlags, Stat};

mod dirents;
pub mod ignore_files;
pub mod ignored;
pub mod matched;

use dirents::{kind_at, Dirents};

use super::pattern::{Glob, Root, Tree, ROOT};
use crate::confine::{open_entry, Roots};
use crate::error::ToolError;

/// What an entry is, itself: a symbolic link is a link, not followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

impl Kind {
    pub fn is_file(self) -> bool {
        self == Kind::File
    }

    pub fn is_dir(self) -> bool {
        self == Kind::Dir
    }

    pub fn is_symlink(self) -> bool {
        self == Kind::Symlink
    }

    fn of(file_type: fs::FileType) -> Kind {
        if file_type.is_file() {
            Kind::File
        } else if file_type.is_dir() {
            Kind::Dir
        } else if file_type.is_symlink() {
            Kind::Symlink
        } else {
            debug_assert!(
                file_type.is_fifo()
                    || file_type.is_socket()
                    || file_type.is_block_device()
                    || file_type.is_char_device()
            );
            Kind::Other
        }
    }
}

/// One result of a walk.
#[derive(Debug, Clone, Copy)]
pub struct Found<'a> {
    /// The path as printed: the root's prefix, one `/`, the names (and a
    /// trailing `/` for a pattern that ends with one). It is also the path
    /// to open, relative to the current directory.
    pub path: &'a [u8],
    pub kind: Kind,
    /// Confined walks: the directory that holds the entry, and where its
    /// name starts in `path`; open the entry from there (`open_entry`),
    /// never by `path`.
    pub at: Option<(&'a Arc<OwnedFd>, usize)>,
}

impl Found<'_> {
    /// The entry's name in its directory (confined walks).
    pub fn name(&self) -> &[u8] {
        self.at.map_or(self.path, |(_, start)| &self.path[start..])
    }
}

/// A directory being walked, held open (confined walks).
type Dir = Arc<OwnedFd>;

/// Where a confined walk started: the roots, and which root and directory
/// below it the printed prefix stands for (to follow links from the root).
struct Confine<'r> {
    roots: &'r Roots,
    root: usize,
    rel: PathBuf,
    prefix_len: usize,
}

impl Confine<'_> {
    /// Opens the link at printed path `path` as a directory, beneath the
    /// roots; `None` when it leads out (or is no directory).
    fn follow(&self, path: &[u8]) -> Option<OwnedFd> {
        let below = path.get(self.prefix_len..)?;
        let below = below.strip_prefix(b"/").unwrap_or(below);
        let rel = self.rel.join(OsStr::from_bytes(below));
        self.roots.open_below(self.root, &rel, OFlags::RDONLY | OFlags::DIRECTORY).ok()
    }
}

/// Calls `visit` for each match of `glob`, sorted by bytes, each once.
pub fn walk(glob: &Glob, visit: impl FnMut(Found<'_>)) {
    let starts: Vec<Start<'_>> = glob
        .roots
        .iter()
        .map(|root| Start {
            tree: &root.tree,
            node: ROOT,
            prefix: root.prefix.clone(),
            dir: None,
            confine: None,
        })
        .collect();
    walk_starts(starts, visit);
}

/// `walk` beneath `roots` (see the module comment). A starting directory
/// outside them (`path`, or the leading directories of an absolute
/// pattern) is refused before anything is read: `PERMISSION_DENIED` naming
/// the roots. One that cannot be opened otherwise gives no results, as
/// unconfined.
pub fn walk_confined(
    glob: &Glob,
    roots: &Roots,
    visit: impl FnMut(Found<'_>),
) -> Result<(), ToolError> {
    let mut starts = Vec::new();
    for root in &glob.roots {
        let (prefix, node) = literal_start(root);
        let shown = String::from_utf8_lossy(&prefix).into_owned();
        let dir = match roots.open_dir(if shown.is_empty() { "." } else { &shown }) {
            Ok(dir) => dir,
            Err(e) if e.is_refusal() => {
                return Err(e.into_tool_error(&shown, ToolError::OpenFailed));
            }
            Err(_) => continue,
        };
        let confine =
            Confine { roots, root: dir.root, rel: dir.rel.clone(), prefix_len: prefix.len() };
        starts.push(Start {
            tree: &root.tree,
            node,
            prefix,
            dir: Some(Arc::new(dir.fd)),
            confine: Some(confine),
        });
    }
    walk_starts(starts, visit);
    Ok(())
}

/// `walk_confined` beneath `roots` when there are roots, else `walk`.
pub fn walk_within(
    glob: &Glob,
    roots: Option<&Roots>,
    visit: impl FnMut(Found<'_>),
) -> Result<(), ToolError> {
    match roots {
        None => {
            walk(glob, visit);
            Ok(())
        }
        Some(roots) => walk_confined(glob, roots, visit),
    }
}

/// The directory an absolute pattern's leading literal components name
/// (`/w/proj/src/**` starts at `/w/proj/src`, not `/`), and the pattern
/// node there: a confined walk opens it beneath the roots at once. Results
/// are printed as before: the prefix, one `/`, the names.
fn literal_start(root: &Root) -> (Vec<u8>, usize) {
    let mut prefix = root.prefix.clone();
    let mut at = ROOT;
    if prefix != b"/" {
        return (prefix, at);
    }
    loop {
        let node = root.tree.node(at);
        let [child] = node.children[..] else { break };
        let next = root.tree.node(child);
        let Some(name) = next.component.literal() else { break };
        if node.ends || node.ends_dir || next.ends || next.ends_dir || name == b"." || name == b".."
        {
            break;
        }
        push_name(&mut prefix, name);
        at = child;
    }
    (prefix, at)
}

/// Where one tree's walk starts.
struct Start<'t> {
    tree: &'t Tree,
    node: usize,
    prefix: Vec<u8>,
    /// Confined: the starting directory, opened beneath a root.
    dir: Option<Dir>,
    confine: Option<Confine<'t>>,
}

fn walk_starts(starts: Vec<Start<'_>>, mut visit: impl FnMut(Found<'_>)) {
    if starts.len() == 1 {
        starts.into_iter().for_each(|start| walk_root(start, &mut visit));
        return;
    }
    // Alternatives with both relative and absolute patterns: two sorted
    // streams, merged here (a rare case, so simply collected).
    /// A result kept: path, kind, and where to open it (confined).
    type Kept = (Vec<u8>, Kind, Option<(Dir, usize)>);
    let mut all: Vec<Kept> = Vec::new();
    for start in starts {
        walk_root(start, &mut |f: Found<'_>| {
            all.push((f.path.to_vec(), f.kind, f.at.map(|(dir, at)| (Arc::clone(dir), at))))
        });
    }
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all.dedup_by(|a, b| a.0 == b.0);
    for (path, kind, at) in &all {
        visit(Found { path, kind: *kind, at: at.as_ref().map(|(dir, at)| (dir, *at)) });
    }
}

fn walk_root(start: Start<'_>, visit: &mut dyn FnMut(Found<'_>)) {
    let mut path = start.prefix;
    if start.tree.node(start.node).ends {
        let kind = match &start.dir {
            // Opened as a directory.
            Some(_) => Some(Kind::Dir),
            None => fs::symlink_metadata(fs_path(&path)).ok().map(|m| Kind::of(m.file_type())),
        };
        if let Some(kind) = kind {
            visit(Found { path: &path, kind, at: None });
        }
    }
    let states = closure(start.tree, vec![start.node]);
    let mut walker = Walker {
        tree: start.tree,
        visit,
        dirents: Dirents::new(),
        on_path: vec![OnPath { len: path.len(), id: None, dir: start.dir }],
        confine: start.confine,
    };
    walker.directory(&mut path, &states);
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

/// The nodes an entry named `name` reaches from `states`, into `next`. A
/// `**` node reaches itself (one more directory); its `**` children are
/// already in `states` by closure, so children that are `**` are not tried
/// here.
fn transitions(tree: &Tree, states: &[usize], name: &[u8], next: &mut Vec<usize>) {
    next.clear();
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
}

/// What the pattern makes of entries that reach the same nodes.
struct Outcome {
    /// The nodes reached (the key, with `symlink`).
    next: Vec<usize>,
    symlink: bool,
    /// The entry is a result.
    ends: bool,
    /// The entry is a result with a `/` if it is a directory.
    ends_dir: bool,
    /// The states below the entry, if it is a directory to enter.
    below: Vec<usize>,
    /// Something below the entry can match.
    goes_on: bool,
}

impl Outcome {
    fn new(tree: &Tree, next: &[usize], symlink: bool) -> Outcome {
        let ends = next.iter().any(|&n| tree.node(n).ends);
        let ends_dir = next.iter().any(|&n| tree.node(n).ends_dir);
        // `**` nodes got here by consuming this entry: they may not go
        // through a symlink.
        let through: Vec<usize> = next
            .iter()
            .copied()
            .filter(|&n| !(symlink && tree.node(n).component.is_any_dirs()))
            .collect();
        let below = closure(tree, through);
        let goes_on = below.iter().any(|&n| {
            let node = tree.node(n);
            node.component.is_any_dirs() || !node.children.is_empty()
        });
        Outcome { next: next.to_vec(), symlink, ends, ends_dir, below, goes_on }
    }
}

/// The entries of one directory that the pattern reaches.
struct Listing {
    /// All names, one after the other.
    names: Vec<u8>,
    entries: Vec<Entry>,
    outcomes: Vec<Outcome>,
}

struct Entry {
    /// Where the name lies in `Listing::names`.
    start: usize,
    end: usize,
    /// The first bytes of the name, to sort by (`sort_key`).
    key: u64,
    kind: Kind,
    /// Index into `Listing::outcomes`.
    outcome: usize,
}

impl Listing {
    fn name(&self, entry: &Entry) -> &[u8] {
        &self.names[entry.start..entry.end]
    }

    /// Adds an entry that reaches `next` (not empty).
    fn add(&mut self, tree: &Tree, name: &[u8], kind: Kind, next: &[usize]) {
        let symlink = kind.is_symlink();
        // Compared element by element: a slice comparison calls memcmp, for
        // every entry of the directory.
        let same = |o: &Outcome| {
            o.symlink == symlink
                && o.next.len() == next.len()
                && o.next.iter().zip(next).all(|(a, b)| a == b)
        };
        let outcome = match self.outcomes.iter().position(same) {
            Some(known) => known,
            None => {
                self.outcomes.push(Outcome::new(tree, next, symlink));
                self.outcomes.len() - 1
            }
        };
        let start = self.names.len();
        self.names.extend_from_slice(name);
        let key = sort_key(name, false);
        self.entries.push(Entry { start, end: self.names.len(), key, kind, outcome });
    }

    fn contains(&self, name: &[u8]) -> bool {
        self.entries.iter().any(|e| self.name(e) == name)
    }
}

/// What to do with an entry, in this order when keys are equal: print it,
/// print it with a `/`, walk below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Action {
    Emit,
    EmitSlash,
    Enter,
}

impl Action {
    /// Whether the action sorts (and prints) as `name/`.
    fn slashed(self) -> bool {
        self != Action::Emit
    }
}

/// The first eight bytes of `name` (and a `/` after it if `slash`) as a
/// number that sorts as they do: names of a large directory often share a
/// prefix, and most comparisons are then settled without a `memcmp`. Names
/// hold no NUL, so the zero padding sorts a shorter name first, as bytes do.
fn sort_key(name: &[u8], slash: bool) -> u64 {
    let mut bytes = [0u8; 8];
    let take = name.len().min(8);
    bytes[..take].copy_from_slice(&name[..take]);
    if slash && take < 8 {
        bytes[take] = b'/';
    }
    u64::from_be_bytes(bytes)
}

/// Orders `a` (followed by a `/` if `a_slash`) against `b` likewise.
fn cmp_keys(a: &[u8], a_slash: bool, b: &[u8], b_slash: bool) -> Ordering {
    let common = a.len().min(b.len());
    a[..common].cmp(&b[..common]).then_with(|| {
        let rest_a = a[common..].iter().chain(a_slash.then_some(&b'/'));
        let rest_b = b[common..].iter().chain(b_slash.then_some(&b'/'));
        rest_a.cmp(rest_b)
    })
}

/// The walk enters directories at most this many levels below where it
/// starts (docs/TOOLS.md, glob). The walk recurses a directory a level: a
/// confined walk (by descriptors, never by path) of `**` over a directory
/// 5,000 deep overflowed the stack (SIGABRT, no answer). Unconfined, paths
/// past PATH_MAX (4096 bytes, about 2,000 levels) could not be opened anyway.
const MAX_DEPTH: usize = 1024;

struct Walker<'t, 'v> {
    tree: &'t Tree,
    /// Confined walks only.
    confine: Option<Confine<'t>>,
    visit: &'v mut dyn FnMut(Found<'_>),
    dirents: Dirents,
    /// The directories being walked, from the root down.
    on_path: Vec<OnPath>,
}

/// A directory on the path being walked.
struct OnPath {
    /// The length of its printed path (a prefix of the current one).
    len: usize,
    /// Its (device, inode), once a symbolic link has asked for it.
    id: Option<FileId>,
    /// Confined walks: the directory, open.
    dir: Option<Dir>,
}

fn id_of(stat: &Stat) -> FileId {
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    (stat.st_dev as u64, stat.st_ino as u64)
}

/// A file's identity: (device, inode).
type FileId = (u64, u64);

impl Walker<'_, '_> {
    /// Visits the directory at `path` (a printed path, restored on return)
    /// where the pattern has reached `states`.
    fn directory(&mut self, path: &mut Vec<u8>, states: &[usize]) {
        let here = self.on_path.last().and_then(|dir| dir.dir.clone());
        let listing = self.entries(path, states, here.as_ref());
        let mut steps: Vec<(usize, Action)> = Vec::with_capacity(listing.entries.len());
        for (index, entry) in listing.entries.iter().enumerate() {
            let outcome = &listing.outcomes[entry.outcome];
            if outcome.ends {
                steps.push((index, Action::Emit));
            }
            if outcome.ends_dir || outcome.goes_on {
                let Some(target) = self.directory_at(path, listing.name(entry), entry.kind) else {
                    continue;
                };
                if outcome.ends_dir {
                    steps.push((index, Action::EmitSlash));
                }
                // A link back to a directory being walked is a cycle; past
                // MAX_DEPTH nothing is entered.
                if outcome.goes_on
                    && self.on_path.len() <= MAX_DEPTH
                    && !target.is_some_and(|id| self.is_on_path(path, id))
                {
                    steps.push((index, Action::Enter));
                }
            }
        }
        let name = |index: usize| listing.name(&listing.entries[index]);
        let mut steps: Vec<(u64, usize, Action)> = steps
            .into_iter()
            .map(|(index, action)| (sort_key(name(index), action.slashed()), index, action))
            .collect();
        steps.sort_unstable_by(|&(key_a, a, action_a), &(key_b, b, action_b)| {
            key_a.cmp(&key_b).then_with(|| {
                cmp_keys(name(a), action_a.slashed(), name(b), action_b.slashed())
                    .then(action_a.cmp(&action_b))
            })
        });
        let len = path.len();
        for (_, index, action) in steps {
            let entry = &listing.entries[index];
            push_name(path, listing.name(entry));
            match action {
                Action::Emit => {
                    let at = here.as_ref().map(|dir| (dir, path.len() - (entry.end - entry.start)));
                    (self.visit)(Found { path, kind: entry.kind, at });
                }
                Action::EmitSlash => {
                    path.push(b'/');
                    (self.visit)(Found { path, kind: entry.kind, at: None });
                }
                Action::Enter if here.is_some() => {
                    let name = OsStr::from_bytes(listing.name(entry));
                    let dir = match (&here, entry.kind.is_symlink()) {
                        (_, true) => self.confine.as_ref().and_then(|c| c.follow(path)),
                        (Some(here), false) => {
                            open_entry(here.as_fd(), name, OFlags::RDONLY | OFlags::DIRECTORY).ok()
                        }
                        (None, false) => None,
                    };
                    if let Some(dir) = dir {
                        let id = if entry.kind.is_symlink() {
                            fstat(&dir).ok().map(|s| id_of(&s))
                        } else {
                            None
                        };
                        self.on_path.push(OnPath { len: path.len(), id, dir: Some(Arc::new(dir)) });
                        self.directory(path, &listing.outcomes[entry.outcome].below);
                        self.on_path.pop();
                    }
                }
                Action::Enter => {
                    // Known already if a link led here.
                    let id = if entry.kind.is_symlink() {
                        fs::metadata(fs_path(path)).ok().map(|m| (m.dev(), m.ino()))
                    } else {
                        None
                    };
                    self.on_path.push(OnPath { len: path.len(), id, dir: None });
                    self.directory(path, &listing.outcomes[entry.outcome].below);
                    self.on_path.pop();
                }
            }
            path.truncate(len);
        }
    }

    /// The entries of the directory that some state can reach. The
    /// directory is listed only when a wildcard or `**` must be tried;
    /// literal names are looked up (and `.`/`..` always are: no listing
    /// shows them).
    fn entries(&mut self, path: &mut Vec<u8>, states: &[usize], here: Option<&Dir>) -> Listing {
        let tree = self.tree;
        let mut listing = Listing { names: Vec::new(), entries: Vec::new(), outcomes: Vec::new() };
        let mut next = Vec::new();
        let lists = states.iter().any(|&s| {
            let node = tree.node(s);
            node.component.is_any_dirs()
                || node.children.iter().any(|&c| tree.node(c).component.literal().is_none())
        });
        let mut each = |name: &[u8], kind| {
            transitions(tree, states, name, &mut next);
            if !next.is_empty() {
                listing.add(tree, name, kind, &next);
            }
        };
        let listed = lists
            && match here {
                Some(dir) => {
                    self.dirents.list(dir.as_fd(), &mut each);
                    true
                }
                None => self.dirents.list_path(fs_path(path), &mut each),
            };
        let literals = states
            .iter()
            .flat_map(|&s| &tree.node(s).children)
            .filter_map(|&c| tree.node(c).component.literal());
        let len = path.len();
        for name in literals {
            let dots = name == b"." || name == b"..";
            if (listed && !dots) || listing.contains(name) {
                continue;
            }
            let kind = match here {
                // `..` of the starting directory may be outside the roots.
                Some(_) if name == b".." => None,
                Some(dir) => kind_at(dir.as_fd(), name),
                None => {
                    push_name(path, name);
                    let meta = fs::symlink_metadata(fs_path(path));
                    path.truncate(len);
                    meta.ok().map(|meta| Kind::of(meta.file_type()))
                }
            };
            if let Some(kind) = kind {
                transitions(tree, states, name, &mut next);
                listing.add(tree, name, kind, &next);
            }
        }
        let names = &listing.names;
        listing.entries.sort_unstable_by(|a, b| {
            a.key.cmp(&b.key).then_with(|| names[a.start..a.end].cmp(&names[b.start..b.end]))
        });
        listing
    }

    /// Whether the entry is a directory, following a symlink: `None` if
    /// not, and for a symlink, the identity of the directory it leads to.
    fn directory_at(&self, path: &mut Vec<u8>, name: &[u8], kind: Kind) -> Option<Option<FileId>> {
        if !kind.is_symlink() {
            return kind.is_dir().then_some(None);
        }
        let len = path.len();
        push_name(path, name);
        let found = match &self.confine {
            // Opened beneath the roots: a link out is no directory here.
            Some(confine) => {
                confine.follow(path).and_then(|dir| fstat(&dir).ok()).map(|s| id_of(&s))
            }
            None => {
                fs::metadata(fs_path(path)).ok().filter(|m| m.is_dir()).map(|m| (m.dev(), m.ino()))
            }
        };
        path.truncate(len);
        found.map(Some)
    }

    /// Whether the directory `id` is on the path being walked (`path` is
    /// the current directory's). Identities are looked up the first time
    /// a link asks: a walk without links to directories makes no `stat`.
    fn is_on_path(&mut self, path: &[u8], id: FileId) -> bool {
        self.on_path.iter_mut().any(|dir| {
            if dir.id.is_none() {
                dir.id = match &dir.dir {
                    Some(fd) => fstat(fd).ok().map(|s| id_of(&s)),
                    None => {
                        fs::metadata(fs_path(&path[..dir.len])).ok().map(|m| (m.dev(), m.ino()))
                    }
                };
            }
            dir.id == Some(id)
        })
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
    fn sort_keys_order_as_the_bytes_do() {
        let keys = [
            (&b"a"[..], false),
            (b"a", true),
            (b"a-b", false),
            (b"abcdefgh", false),
            (b"abcdefgh", true),
            (b"abcdefghi", false),
            (b"b", false),
            (b"\xff", false),
        ];
        for (a, a_slash) in keys {
            for (b, b_slash) in keys {
                let key_order = sort_key(a, a_slash).cmp(&sort_key(b, b_slash));
                let full_order = cmp_keys(a, a_slash, b, b_slash);
                // Equal keys defer to the full comparison; unequal ones agree.
                assert!(key_order == full_order || key_order.is_eq(), "{a:?} {b:?}");
            }
        }
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
