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
//! Cheap per entry, since a tree walk meets thousands: a directory is read
//! with `getdents64` into one reused buffer (no `stat`, the entry types come
//! with the names), its names are kept in one buffer, and what the pattern
//! makes of an entry is worked out once per distinct set of pattern states
//! in the directory, not once per entry.

use std::cmp::Ordering;
use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};

use super::pattern::{Glob, Root, Tree, ROOT};

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
}

/// Calls `visit` for each match of `glob`, sorted by bytes, each once.
pub fn walk(glob: &Glob, mut visit: impl FnMut(Found<'_>)) {
    match glob.roots.as_slice() {
        [root] => walk_root(root, &mut visit),
        roots => {
            // Alternatives with both relative and absolute patterns: two
            // sorted streams, merged here (a rare case, so simply collected).
            let mut all: Vec<(Vec<u8>, Kind)> = Vec::new();
            for root in roots {
                walk_root(root, &mut |f: Found<'_>| all.push((f.path.to_vec(), f.kind)));
            }
            all.sort_by(|a, b| a.0.cmp(&b.0));
            all.dedup_by(|a, b| a.0 == b.0);
            for (path, kind) in &all {
                visit(Found { path, kind: *kind });
            }
        }
    }
}

fn walk_root(root: &Root, visit: &mut dyn FnMut(Found<'_>)) {
    let mut path = root.prefix.clone();
    if root.tree.node(ROOT).ends {
        if let Ok(meta) = fs::symlink_metadata(fs_path(&path)) {
            visit(Found { path: &path, kind: Kind::of(meta.file_type()) });
        }
    }
    let states = closure(&root.tree, vec![ROOT]);
    let mut walker = Walker {
        tree: &root.tree,
        visit,
        dirents: vec![0; DIRENT_BUFFER],
        on_path: vec![OnPath { len: path.len(), id: None }],
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

/// Room for directory entries read at once (glibc's readdir uses 32 KiB).
const DIRENT_BUFFER: usize = 32 * 1024;

struct Walker<'t, 'v> {
    tree: &'t Tree,
    visit: &'v mut dyn FnMut(Found<'_>),
    /// The buffer `getdents64` fills, reused for every directory.
    dirents: Vec<u8>,
    /// The directories being walked, from the root down.
    on_path: Vec<OnPath>,
}

/// A directory on the path being walked.
struct OnPath {
    /// The length of its printed path (a prefix of the current one).
    len: usize,
    /// Its (device, inode), once a symbolic link has asked for it.
    id: Option<FileId>,
}

/// A file's identity: (device, inode).
type FileId = (u64, u64);

impl Walker<'_, '_> {
    /// Visits the directory at `path` (a printed path, restored on return)
    /// where the pattern has reached `states`.
    fn directory(&mut self, path: &mut Vec<u8>, states: &[usize]) {
        let listing = self.entries(path, states);
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
                // A link back to a directory being walked is a cycle.
                if outcome.goes_on && !target.is_some_and(|id| self.is_on_path(path, id)) {
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
                Action::Emit => (self.visit)(Found { path, kind: entry.kind }),
                Action::EmitSlash => {
                    path.push(b'/');
                    (self.visit)(Found { path, kind: entry.kind });
                }
                Action::Enter => {
                    // Known already if a link led here.
                    let id = if entry.kind.is_symlink() {
                        fs::metadata(fs_path(path)).ok().map(|m| (m.dev(), m.ino()))
                    } else {
                        None
                    };
                    self.on_path.push(OnPath { len: path.len(), id });
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
    fn entries(&mut self, path: &mut Vec<u8>, states: &[usize]) -> Listing {
        let tree = self.tree;
        let mut listing = Listing { names: Vec::new(), entries: Vec::new(), outcomes: Vec::new() };
        let mut next = Vec::new();
        let lists = states.iter().any(|&s| {
            let node = tree.node(s);
            node.component.is_any_dirs()
                || node.children.iter().any(|&c| tree.node(c).component.literal().is_none())
        });
        let listed = lists
            && read_dir(fs_path(path), &mut self.dirents, |name, kind| {
                transitions(tree, states, name, &mut next);
                if !next.is_empty() {
                    listing.add(tree, name, kind, &next);
                }
            });
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
            push_name(path, name);
            let meta = fs::symlink_metadata(fs_path(path));
            path.truncate(len);
            if let Ok(meta) = meta {
                transitions(tree, states, name, &mut next);
                listing.add(tree, name, Kind::of(meta.file_type()), &next);
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
        let meta = fs::metadata(fs_path(path));
        path.truncate(len);
        meta.ok().filter(|m| m.is_dir()).map(|m| Some((m.dev(), m.ino())))
    }

    /// Whether the directory `id` is on the path being walked (`path` is
    /// the current directory's). Identities are looked up the first time
    /// a link asks: a walk without links to directories makes no `stat`.
    fn is_on_path(&mut self, path: &[u8], id: FileId) -> bool {
        self.on_path.iter_mut().any(|dir| {
            if dir.id.is_none() {
                dir.id = fs::metadata(fs_path(&path[..dir.len])).ok().map(|m| (m.dev(), m.ino()));
            }
            dir.id == Some(id)
        })
    }
}

/// Calls `each` with the name and kind of every entry of the directory at
/// `path` but `.` and `..`, read with `getdents64` into `buffer`; false if
/// the directory cannot be opened. A read error part way ends the listing
/// with the entries read so far.
fn read_dir(path: &OsStr, buffer: &mut [u8], mut each: impl FnMut(&[u8], Kind)) -> bool {
    // O_DIRECTORY: anything else fails at once (a FIFO is never opened).
    let Ok(dir) = OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY).open(path) else {
        return false;
    };
    loop {
        // SAFETY: the kernel writes at most `buffer.len()` bytes of
        // `linux_dirent64` records into `buffer`, which we own.
        let read = unsafe {
            libc::syscall(libc::SYS_getdents64, dir.as_raw_fd(), buffer.as_mut_ptr(), buffer.len())
        };
        let Ok(read) = usize::try_from(read) else { break };
        if read == 0 {
            break;
        }
        for_each_dirent(&buffer[..read.min(buffer.len())], &dir, &mut each);
    }
    true
}

/// Walks the `linux_dirent64` records in `records`: `d_ino` (8 bytes),
/// `d_off` (8), `d_reclen` (2), `d_type` (1), then the name, NUL-ended.
fn for_each_dirent(records: &[u8], dir: &File, each: &mut impl FnMut(&[u8], Kind)) {
    const NAME_AT: usize = 19;
    let mut at = 0;
    while let Some(record) = records.get(at..) {
        let (Some(&[len_lo, len_hi]), Some(&d_type)) = (record.get(16..18), record.get(18)) else {
            break;
        };
        let len = usize::from(u16::from_ne_bytes([len_lo, len_hi]));
        let Some(name) = record.get(NAME_AT..len) else { break };
        let name = &name[..memchr::memchr(0, name).unwrap_or(name.len())];
        at += len;
        if name == b"." || name == b".." {
            continue;
        }
        let kind = match d_type {
            libc::DT_REG => Kind::File,
            libc::DT_DIR => Kind::Dir,
            libc::DT_LNK => Kind::Symlink,
            // Some file systems do not say: ask.
            libc::DT_UNKNOWN => match kind_at(dir, name) {
                Some(kind) => kind,
                None => continue,
            },
            _ => Kind::Other,
        };
        each(name, kind);
    }
}

/// The kind of the entry `name` of `dir` (not following a symlink); `None`
/// if it has gone.
fn kind_at(dir: &File, name: &[u8]) -> Option<Kind> {
    use nix::sys::stat::{fstatat, SFlag};
    let stat = fstatat(
        Some(dir.as_raw_fd()),
        OsStr::from_bytes(name),
        nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
    )
    .ok()?;
    let format = SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits());
    Some(match format {
        SFlag::S_IFREG => Kind::File,
        SFlag::S_IFDIR => Kind::Dir,
        SFlag::S_IFLNK => Kind::Symlink,
        _ => Kind::Other,
    })
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
