//! The walk of the full profile's grep and glob (docs/TOOLS.md, "The
//! ignore-aware walk"): ripgrep's defaults, decided by the `ignore` crate's
//! matchers, on a walk that goes by descriptor only.
//!
//! One mechanism, confined or not: the starting directory is opened once
//! (beneath the roots when there are any, `Roots::open_dir`), and from then
//! on every directory is entered with `open_entry` from its parent's
//! descriptor (never following a link), listed with `getdents64`, and
//! every ignore file is read from the descriptor of its directory. Links
//! are never followed (ripgrep's and fd's default), so nothing the walk
//! meets can lead it out of the directory it started in. The `.gitignore`,
//! `.ignore` and `.git` of the directories above the start are read as
//! ripgrep reads them, but confined only up to the root the start lies
//! in: nothing outside the roots is opened.
//!
//! What is kept follows `ignore::dir` (ripgrep 14), in this order:
//! `.git` is never entered; an override (grep's `glob`, `rg -g`) decides
//! when it matches; then the ignore files, the closest directory first,
//! `.ignore` before `.gitignore` before `.git/info/exclude`, a `.gitignore`
//! only inside a git repository and never above the repository's top; then
//! a name starting with `.` is hidden, unless a rule whitelisted it.
//! `no_ignore` drops the ignore files (not the override), `hidden` keeps
//! hidden names.
//!
//! The ignore files are read within bounds (`ignore_files`): one over a
//! bound is skipped, taken as re-including everything below its
//! directory, and named in the answer. A `.gitignore` that cannot apply
//! (no `.git` in its directory or above it) is not read.

use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use ignore::overrides::Override;
use ignore::Match;
use rustix::fs::{Mode, OFlags};

use super::dirents::Dirents;
use super::ignore_files::{IgnoreFile, IgnoreFiles, InForce};
use super::{Kind, MAX_DEPTH};
use crate::confine::{open_entry, openat_beneath, Roots};
use crate::error::ToolError;

/// What the walk keeps (see the module comment).
#[derive(Default)]
pub struct Rules {
    /// Keep hidden names (`rg --hidden`).
    pub hidden: bool,
    /// Read no ignore file (`rg --no-ignore`).
    pub no_ignore: bool,
    /// grep's `glob` (`rg -g`), matched against the path below the start.
    pub overrides: Option<Override>,
}

/// One entry the walk met.
pub struct Met<'a> {
    /// The path as printed: the start as given, one `/`, the names.
    pub path: &'a [u8],
    pub kind: Kind,
    /// The directory that holds the entry (open it from there by `name`).
    pub dir: &'a Arc<OwnedFd>,
    /// Where the entry's name starts in `path`.
    pub name_at: usize,
    /// False for an entry the rules leave out (not entered if a directory).
    pub kept: bool,
    /// How many directories below the start it lies (0: in the start).
    pub depth: usize,
    /// The directory lies on a local file system read through the page
    /// cache (`page_cached`), where a short read of a regular file means
    /// its end.
    pub local: bool,
}

impl Met<'_> {
    pub fn name(&self) -> &[u8] {
        &self.path[self.name_at..]
    }
}

/// The rules of one directory (or of one above the start).
struct Level {
    ignore: IgnoreFile,
    gitignore: IgnoreFile,
    exclude: IgnoreFile,
    has_git: bool,
    /// Above the start: the path from this directory to the start, ending
    /// with `/`; the matched path is this and the path below the start.
    lead: Vec<u8>,
    /// At or below the start: where the paths below this directory start
    /// in the path below the start.
    at: usize,
}

impl Level {
    fn is_empty(&self) -> bool {
        self.ignore.is_absent() && self.gitignore.is_absent() && self.exclude.is_absent()
    }

    fn cost(&self) -> InForce {
        self.ignore.cost().add(self.gitignore.cost()).add(self.exclude.cost())
    }
}

/// What the ignore files of `levels` hold.
fn in_force(levels: &[Level]) -> InForce {
    levels.iter().fold(InForce::default(), |sum, level| sum.add(level.cost()))
}

/// Walks the directory `start` (the path as given; `None`: the current
/// directory) and calls `visit` for every entry met, directories before
/// what they hold, the entries of a directory in byte order of their names
/// (`rg --sort path`); a kept directory is entered when `visit` answers
/// true for it. A start outside the roots is `PERMISSION_DENIED`, a
/// missing one `FILE_NOT_FOUND`. The ignore files read and skipped are
/// counted in `files` (one for all the walks of a call).
pub fn walk_ignoring(
    start: Option<&str>,
    roots: Option<&Roots>,
    rules: &Rules,
    files: &mut IgnoreFiles,
    visit: &mut dyn FnMut(&Met<'_>) -> bool,
) -> Result<(), ToolError> {
    let shown = start.unwrap_or(".");
    let (dir, above) = match roots {
        None => {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
            let dir = rustix::fs::open(shown, flags, Mode::empty())
                .map_err(|e| ToolError::from_io(&e.into(), shown, ToolError::OpenFailed))?;
            let above = if rules.no_ignore { Vec::new() } else { levels_above(shown, files) };
            (dir, above)
        }
        Some(roots) => {
            let dir = roots
                .open_dir(shown)
                .map_err(|e| e.into_tool_error(shown, ToolError::OpenFailed))?;
            let above = if rules.no_ignore {
                Vec::new()
            } else {
                levels_above_in(roots, dir.root, &dir.rel, files)
            };
            (dir.fd, above)
        }
    };
    let mut path = start.unwrap_or("").as_bytes().to_vec();
    if !path.is_empty() && !path.ends_with(b"/") {
        path.push(b'/');
    }
    let rel_at = path.len();
    let mut walker = Walker { rules, files, visit, dirents: Dirents::new(), levels: above, rel_at };
    walker.directory(&mut path, &Arc::new(dir), 0);
    Ok(())
}

struct Walker<'r, 'v> {
    rules: &'r Rules,
    files: &'v mut IgnoreFiles,
    visit: &'v mut dyn FnMut(&Met<'_>) -> bool,
    dirents: Dirents,
    /// The rules of the directories above the current entry, outermost first.
    levels: Vec<Level>,
    /// Where the path below the start begins in the printed path.
    rel_at: usize,
}

/// A directory's entries: names one after the other, and (start, end, kind).
struct Listing {
    names: Vec<u8>,
    entries: Vec<(usize, usize, Kind)>,
}

impl Walker<'_, '_> {
    /// Walks the directory `dir` whose printed path is `path` (ending with
    /// `/` unless empty; restored on return).
    fn directory(&mut self, path: &mut Vec<u8>, dir: &Arc<OwnedFd>, depth: usize) {
        let mut listing = Listing { names: Vec::new(), entries: Vec::new() };
        self.dirents.list(dir.as_fd(), &mut |name: &[u8], kind| {
            let start = listing.names.len();
            listing.names.extend_from_slice(name);
            listing.entries.push((start, listing.names.len(), kind));
        });
        let names = &listing.names;
        listing.entries.sort_unstable_by(|a, b| names[a.0..a.1].cmp(&names[b.0..b.1]));
        let level = self.level_of(dir.as_fd(), &listing, path, path.len() - self.rel_at);
        let local = page_cached(dir.as_fd());
        self.levels.push(level);
        let len = path.len();
        for &(start, end, kind) in &listing.entries {
            let name = &listing.names[start..end];
            path.extend_from_slice(name);
            let kept = self.keeps(&path[self.rel_at..], name, kind.is_dir());
            let met = Met { path, kind, dir, name_at: len, kept, depth, local };
            let enter = (self.visit)(&met);
            if enter && kept && kind.is_dir() && depth < MAX_DEPTH {
                let flags = OFlags::RDONLY | OFlags::DIRECTORY;
                if let Ok(below) = open_entry(dir.as_fd(), OsStr::from_bytes(name), flags) {
                    path.push(b'/');
                    self.directory(path, &Arc::new(below), depth + 1);
                }
            }
            path.truncate(len);
        }
        self.levels.pop();
    }

    /// The ignore files of the directory being listed, printed as `shown`
    /// (ending with `/` unless empty).
    fn level_of(
        &mut self,
        dir: BorrowedFd<'_>,
        listing: &Listing,
        shown: &[u8],
        at: usize,
    ) -> Level {
        let mut level = Level {
            ignore: IgnoreFile::Absent,
            gitignore: IgnoreFile::Absent,
            exclude: IgnoreFile::Absent,
            has_git: false,
            lead: Vec::new(),
            at,
        };
        if self.rules.no_ignore {
            return level;
        }
        let mut present = Present { ignore: false, gitignore: false };
        for &(start, end, _) in &listing.entries {
            match &listing.names[start..end] {
                b".ignore" => present.ignore = true,
                b".gitignore" => present.gitignore = true,
                b".git" => level.has_git = true,
                _ => {}
            }
        }
        let named = |name: &str| {
            let mut path = String::from_utf8_lossy(shown).into_owned();
            path.push_str(name);
            path
        };
        read_level(&mut level, &self.levels, self.files, dir, present, named);
        level
    }

    /// Whether the entry at `rel` (below the start) named `name` is kept.
    fn keeps(&self, rel: &[u8], name: &[u8], is_dir: bool) -> bool {
        if name == b".git" {
            return false;
        }
        if let Some(overrides) = &self.rules.overrides {
            match overrides.matched(Path::new(OsStr::from_bytes(rel)), is_dir) {
                Match::Ignore(_) => return false,
                Match::Whitelist(_) => return true,
                Match::None => {}
            }
        }
        let whitelisted = match self.ignored(rel, is_dir) {
            Match::Ignore(()) => return false,
            Match::Whitelist(()) => true,
            Match::None => false,
        };
        whitelisted || self.rules.hidden || !name.starts_with(b".")
    }

    /// What the ignore files say of `rel`: the closest directory first,
    /// `.ignore` over `.gitignore` over `.git/info/exclude`, the git ones
    /// only inside a repository and not above its top (`ignore::dir`).
    fn ignored(&self, rel: &[u8], is_dir: bool) -> Match<()> {
        if self.rules.no_ignore {
            return Match::None;
        }
        let any_git = self.levels.iter().any(|l| l.has_git);
        let (mut ignore, mut gitignore, mut exclude) = (Match::None, Match::None, Match::None);
        let mut saw_git = false;
        let mut joined = Vec::new();
        for level in self.levels.iter().rev() {
            let git = any_git && !saw_git;
            saw_git |= level.has_git;
            if level.is_empty() {
                continue;
            }
            let below = if level.lead.is_empty() {
                &rel[level.at.min(rel.len())..]
            } else {
                joined.clear();
                joined.extend_from_slice(&level.lead);
                joined.extend_from_slice(rel);
                &joined[..]
            };
            let below = Path::new(OsStr::from_bytes(below));
            let of = |file: &IgnoreFile| file.matched(below, is_dir);
            if ignore.is_none() {
                ignore = of(&level.ignore);
            }
            if git && gitignore.is_none() {
                gitignore = of(&level.gitignore);
            }
            if git && exclude.is_none() {
                exclude = of(&level.exclude);
            }
        }
        ignore.or(gitignore).or(exclude)
    }
}

/// Whether `dir` lies on a local file system whose reads go through the
/// page cache (ext4, XFS, Btrfs, tmpfs, overlayfs, F2FS): there a read of a
/// regular file returns less than asked only at its end, so grep can skip
/// the read that would find it (one system call a file). Elsewhere (FUSE,
/// NFS, /proc) a short read proves nothing. One `fstatfs` a directory: a
/// file system mounted on a directory is met as a directory.
fn page_cached(dir: BorrowedFd<'_>) -> bool {
    const LOCAL: [i64; 6] = [
        0xEF53,      // ext2/3/4
        0x5846_5342, // XFS
        0x9123_683E, // Btrfs
        0x0102_1994, // tmpfs
        0x794C_7630, // overlayfs
        0xF2F5_2010, // F2FS
    ];
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    rustix::fs::fstatfs(dir).is_ok_and(|fs| LOCAL.contains(&(fs.f_type as i64)))
}

/// Which ignore files a directory holds (a directory above the start is
/// not listed: both are tried).
struct Present {
    ignore: bool,
    gitignore: bool,
}

/// Reads the ignore files of a directory into `level` (its `has_git` set),
/// below the levels `outer`: the strongest first (`.ignore`, `.gitignore`,
/// `.git/info/exclude`), each counted against the bounds with those that
/// apply there already. A `.gitignore` is read only with a `.git` in the
/// directory or above it: elsewhere it cannot apply. `named` names a file
/// in the answer, should it be skipped.
fn read_level(
    level: &mut Level,
    outer: &[Level],
    files: &mut IgnoreFiles,
    dir: BorrowedFd<'_>,
    present: Present,
    named: impl Fn(&str) -> String,
) {
    let in_git = level.has_git || outer.iter().any(|l| l.has_git);
    let mut held = in_force(outer);
    let mut read = |rel: &str| {
        let file = files.read(dir, rel, held, || named(rel));
        held = held.add(file.cost());
        file
    };
    if present.ignore {
        level.ignore = read(".ignore");
    }
    if in_git && present.gitignore {
        level.gitignore = read(".gitignore");
    }
    if level.has_git {
        level.exclude = read(".git/info/exclude");
    }
}

/// The rules of the directories above the start `shown` (unconfined),
/// outermost first, as ripgrep reads them: up to `/`.
fn levels_above(shown: &str, files: &mut IgnoreFiles) -> Vec<Level> {
    let Ok(cwd) = std::env::current_dir() else { return Vec::new() };
    let names = normal_names(&cwd.join(shown));
    let mut levels = Vec::new();
    let mut dir = PathBuf::from("/");
    for (i, name) in names.iter().enumerate() {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        if let Ok(fd) = rustix::fs::open(&dir, flags, Mode::empty()) {
            let level = level_above(fd.as_fd(), &names[i..], &levels, files, &dir);
            levels.push(level);
        }
        dir.push(OsStr::from_bytes(name));
    }
    levels
}

/// The rules of the directories above the start, below `rel` of root
/// `root` (confined): the root and the directories down to the start,
/// never anything above the root.
fn levels_above_in(roots: &Roots, root: usize, rel: &Path, files: &mut IgnoreFiles) -> Vec<Level> {
    let Some(root) = roots.roots().get(root) else { return Vec::new() };
    if rel.components().any(|c| c == Component::ParentDir) {
        return Vec::new();
    }
    let names = normal_names(rel);
    let mut levels = Vec::new();
    let mut dir = PathBuf::new();
    for (i, name) in names.iter().enumerate() {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY;
        if let Ok(fd) = openat_beneath(root.fd(), &dir, flags, Mode::empty()) {
            let shown = root.path().join(&dir);
            let level = level_above(fd.as_fd(), &names[i..], &levels, files, &shown);
            levels.push(level);
        }
        dir.push(OsStr::from_bytes(name));
    }
    levels
}

/// The rules of a directory above the start (`shown`, to name its files),
/// which lies at `names` below it, below the levels `outer`.
fn level_above(
    dir: BorrowedFd<'_>,
    names: &[Vec<u8>],
    outer: &[Level],
    files: &mut IgnoreFiles,
    shown: &Path,
) -> Level {
    let mut lead = Vec::new();
    for name in names {
        lead.extend_from_slice(name);
        lead.push(b'/');
    }
    let has_git = rustix::fs::statat(dir, ".git", rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok();
    let mut level = Level {
        ignore: IgnoreFile::Absent,
        gitignore: IgnoreFile::Absent,
        exclude: IgnoreFile::Absent,
        has_git,
        lead,
        at: 0,
    };
    let named = |name: &str| shown.join(name).to_string_lossy().into_owned();
    let present = Present { ignore: true, gitignore: true };
    read_level(&mut level, outer, files, dir, present, named);
    level
}

/// The names of `path`, `.` dropped and `..` taken back lexically.
fn normal_names(path: &Path) -> Vec<Vec<u8>> {
    let mut names: Vec<Vec<u8>> = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(name) => names.push(name.as_bytes().to_vec()),
            Component::ParentDir => {
                names.pop();
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `walk_ignoring` keeps, as printed, in order.
    fn ours(start: &str, rules: &Rules) -> Vec<String> {
        let mut kept = Vec::new();
        walk_ignoring(Some(start), None, rules, &mut IgnoreFiles::new(), &mut |met: &Met<'_>| {
            if met.kept {
                kept.push(String::from_utf8_lossy(met.path).into_owned());
            }
            true
        })
        .unwrap();
        kept
    }

    /// What ripgrep's own walker (`ignore::WalkBuilder`, sorted, `.git`
    /// left out as ours does) keeps.
    fn theirs(start: &str, rules: &Rules) -> Vec<String> {
        let mut builder = ignore::WalkBuilder::new(start);
        builder
            .hidden(!rules.hidden)
            .git_global(false)
            .ignore(!rules.no_ignore)
            .git_ignore(!rules.no_ignore)
            .git_exclude(!rules.no_ignore)
            .parents(!rules.no_ignore)
            .filter_entry(|e| e.file_name() != ".git")
            .sort_by_file_name(|a, b| a.as_encoded_bytes().cmp(b.as_encoded_bytes()));
        builder.build().skip(1).map(|e| e.unwrap().path().to_string_lossy().into_owned()).collect()
    }

    /// Random trees of names, hidden names, `.gitignore`/`.ignore` lines
    /// (negations, anchored and directory patterns) and `.git` directories:
    /// the walk keeps what ripgrep's walker keeps, in the same order.
    #[test]
    fn keeps_what_ripgreps_walker_keeps() {
        let seed: u64 =
            std::env::var("IKIGAI_WALK_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(7);
        eprintln!("keeps_what_ripgreps_walker_keeps: IKIGAI_WALK_SEED={seed}");
        let mut state = seed;
        let mut next = move |n: u64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let names = ["a", "b.c", "c.log", ".h", "d", "e.tmp", "f"];
        let lines =
            ["*.log", "!keep.log", "d/", "/b.c", "*.tmp", "!e.tmp", ".h", "f", "x/a", "**/b.c"];
        for trial in 0..15 {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            for _ in 0..25 {
                let depth = 1 + next(3) as usize;
                let mut path = root.to_path_buf();
                for level in 0..depth {
                    let name = names[next(names.len() as u64) as usize];
                    path.push(if level + 1 < depth { format!("{name}x") } else { name.to_owned() });
                }
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                if !path.exists() {
                    std::fs::write(&path, "").unwrap();
                }
                let parent = path.parent().unwrap().to_path_buf();
                match next(6) {
                    0 => std::fs::create_dir_all(parent.join(".git")).unwrap(),
                    1 | 2 => {
                        let file = if next(2) == 0 { ".gitignore" } else { ".ignore" };
                        let text: String = (0..1 + next(3))
                            .map(|_| format!("{}\n", lines[next(lines.len() as u64) as usize]))
                            .collect();
                        std::fs::write(parent.join(file), text).unwrap();
                    }
                    _ => {}
                }
            }
            let start = root.to_str().unwrap();
            for (hidden, no_ignore) in [(false, false), (true, false), (false, true), (true, true)]
            {
                let rules = Rules { hidden, no_ignore, overrides: None };
                assert_eq!(
                    ours(start, &rules),
                    theirs(start, &rules),
                    "trial {trial}, hidden {hidden}, no_ignore {no_ignore}, IKIGAI_WALK_SEED={seed}"
                );
            }
        }
    }
}
