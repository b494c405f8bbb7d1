//! What grep searches, file after file: the one file `path` names, else
//! the files a walk finds below `path`, each with the way to open it. The
//! walk is where the profiles differ (docs/TOOLS.md, grep):
//!
//! - the seed profile's: the files glob finds for `glob` (default `*`)
//!   under `path`, regular files only, in glob order;
//! - the full profile's: `fs::walk::ignored` (hidden names and what ignore
//!   files exclude left out, as `rg`), `glob` an override (`rg -g`); the
//!   entries it leaves out are counted for `files_skipped`.
//!
//! With allowed roots (docs/CONFINEMENT.md) the walk stays
//! beneath them and each file is opened from the descriptor of the
//! directory the walk found it in (`open_entry`, never following a link),
//! never by its path.

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::sync::Arc;

use super::request::Request;
use crate::confine::{open_entry, Roots};
use crate::error::{GlobFault, ToolError};
use crate::fs::pattern::Glob;
use crate::fs::walk::ignore_files::IgnoreFiles;
use crate::fs::walk::ignored::{walk_ignoring, Met, Rules};
use crate::fs::walk::{walk_within, Found, Kind};

/// How the files below `path` are found.
pub(super) enum Walk {
    /// The seed profile: glob's walk of `glob` under `path`.
    Glob(Glob),
    /// The full profile: the walk that keeps to ripgrep's rules.
    Ignoring(Rules),
}

impl Walk {
    /// The seed profile's walk; a malformed `glob` is refused here.
    pub(super) fn glob(request: &Request<'_>) -> Result<Walk, ToolError> {
        Ok(Walk::Glob(Glob::new(request.path, request.glob.unwrap_or("*"))?))
    }

    /// The full profile's walk; a malformed `glob` is refused here.
    pub(super) fn ignoring(request: &Request<'_>) -> Result<Walk, ToolError> {
        Ok(Walk::Ignoring(Rules {
            hidden: request.hidden,
            no_ignore: request.no_ignore,
            overrides: request.glob.map(overrides).transpose()?,
        }))
    }
}

/// `glob` as `rg -g` takes it, matched against the path below `path`.
fn overrides(glob: &str) -> Result<ignore::overrides::Override, ToolError> {
    if let Some(why) = crate::fs::pattern::too_long(glob.len()) {
        return Err(ToolError::GlobTooLarge(why));
    }
    let invalid = |e: ignore::Error| {
        positioned(glob).unwrap_or_else(|| {
            ToolError::InvalidGlob(GlobFault::Other(crate::error::one_line(&e.to_string())))
        })
    };
    let mut builder = ignore::overrides::OverrideBuilder::new(".");
    builder.add(glob).map_err(invalid)?;
    builder.build().map_err(invalid)
}

/// What is wrong with a `glob` filter globset refused, and where, as glob's
/// own parser tells it (`unclosed '[' at position 2`): globset says what
/// but not where (`error parsing glob '*.[ch': unclosed character class;
/// missing ']'`). `None` when that parser names no place (a `!` before
/// the filter is a literal character to it, so places stay those of the
/// filter as given).
fn positioned(glob: &str) -> Option<ToolError> {
    match Glob::new(None, glob) {
        Err(ToolError::InvalidGlob(fault)) if !matches!(fault, GlobFault::Other(_)) => {
            Some(ToolError::InvalidGlob(fault))
        }
        _ => None,
    }
}

/// The files to search, found as they are fed (see `feed`).
pub(super) struct Files<'r> {
    /// The file `path` names, when it names one: nothing is walked.
    named: Option<Vec<Item>>,
    walk: Walk,
    path: Option<&'r str>,
    roots: Option<&'r Roots>,
}

/// What a walk leaves out, for the full profile's answer.
#[derive(Default)]
pub(super) struct Walked {
    /// Entries left out that are not directories entered.
    pub(super) skipped: i64,
    /// The ignore files read and skipped.
    pub(super) ignore_files: IgnoreFiles,
}

impl<'r> Files<'r> {
    /// The files `walk` finds under the request's `path`, or the file
    /// `path` names (see `named`), beneath `roots` if there are any.
    pub(super) fn new(
        walk: Walk,
        request: &Request<'r>,
        roots: Option<&'r Roots>,
    ) -> Result<Files<'r>, ToolError> {
        if roots.is_some() {
            room_for_directories();
        }
        let filter = match walk {
            Walk::Glob(_) => request.glob,
            // As `rg` searches a file it is given, whatever the rules.
            Walk::Ignoring(_) => None,
        };
        let path = request.path;
        let named = match path {
            Some(path) => named(path, filter, roots)?,
            None => None,
        };
        Ok(Files { named, walk, path, roots })
    }

    /// Threads to search with. The full profile's walk takes twice the
    /// cores: the walk runs on the feeding thread and reads wait in the
    /// kernel (7,911 files on 2 cores: 51 ms with 2 threads, 42 with 3,
    /// 41 with 4; rg 51). Threads only start once files wait for them.
    pub(super) fn threads(&self) -> usize {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        match self.walk {
            Walk::Glob(_) => cores,
            Walk::Ignoring(_) => 2 * cores,
        }
    }

    /// Hands each file to `feed`, in order, as the walk finds it; what the
    /// walk left out.
    pub(super) fn feed(self, feed: &mut dyn FnMut(Item)) -> Result<Walked, ToolError> {
        let mut walked = Walked::default();
        match (self.named, self.walk) {
            (Some(files), _) => files.into_iter().for_each(feed),
            (None, Walk::Glob(glob)) => walk_within(&glob, self.roots, |found| {
                if found.kind.is_file() {
                    feed(Item::of(found));
                }
            })?,
            (None, Walk::Ignoring(rules)) => {
                let skipped = &mut walked.skipped;
                let visit = &mut |met: &Met<'_>| {
                    if met.kept && met.kind == Kind::File {
                        feed(Item::entry(met.path, met.dir, met.name_at, met.local));
                    } else if !(met.kept && met.kind.is_dir()) {
                        *skipped += 1;
                    }
                    true
                };
                walk_ignoring(self.path, self.roots, &rules, &mut walked.ignore_files, visit)?;
            }
        }
        Ok(walked)
    }
}

/// Open files a confined search may need: each file waiting to be
/// searched holds its directory open (up to `ordered`'s queue, 64 a thread,
/// so about 600), besides the walk's own directories.
const CONFINED_FILES: u64 = 4096;

/// Raises the soft limit on open files to `CONFINED_FILES` where the hard
/// limit allows: under a low soft limit (`ulimit -Sn 256`) opening a file
/// from its directory would fail and the file would be passed over.
fn room_for_directories() {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
        let wanted = CONFINED_FILES.min(hard);
        if soft < wanted {
            let _ = setrlimit(Resource::RLIMIT_NOFILE, wanted, hard);
        }
    }
}

/// A file to search: its path as printed, and how to open it.
pub(super) struct Item {
    pub(super) path: Vec<u8>,
    source: Source,
    /// A short read of it means its end (`fs::walk::ignored::page_cached`).
    pub(super) short_read_ends: bool,
}

enum Source {
    /// By its path (unconfined).
    Path,
    /// By its name (from this byte of `path`) in a directory the confined
    /// walk opened beneath the roots.
    Entry(Arc<OwnedFd>, usize),
    /// Opened already (a confined `path` naming a file).
    Opened(File),
}

impl Item {
    /// The file at `path`, opened by it (unconfined).
    pub(super) fn by_path(path: &[u8]) -> Item {
        Item { path: path.to_vec(), source: Source::Path, short_read_ends: false }
    }

    /// The entry whose name starts at byte `at` of `path`, in the open
    /// directory `dir` (the full profile's walk).
    fn entry(path: &[u8], dir: &Arc<OwnedFd>, at: usize, local: bool) -> Item {
        let source = Source::Entry(Arc::clone(dir), at);
        Item { path: path.to_vec(), source, short_read_ends: local }
    }

    fn of(found: Found<'_>) -> Item {
        let source = match found.at {
            Some((dir, at)) => Source::Entry(Arc::clone(dir), at),
            None => Source::Path,
        };
        Item { path: found.path.to_vec(), source, short_read_ends: false }
    }

    /// Opens the file without blocking (see `open`); confined, never by
    /// its path and never through a link.
    pub(super) fn open(&self) -> std::io::Result<File> {
        match &self.source {
            Source::Path => open(&self.path),
            Source::Entry(dir, at) => {
                let flags = rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::NONBLOCK;
                open_entry(dir.as_fd(), OsStr::from_bytes(&self.path[*at..]), flags).map(File::from)
            }
            Source::Opened(file) => file.try_clone(),
        }
    }

    /// The file's identity, following a link as its opening does.
    fn identity(&self) -> Option<FileId> {
        match &self.source {
            Source::Opened(file) => rustix::fs::fstat(file).ok().map(|s| stat_id(&s)),
            _ => path_id(&self.path),
        }
    }
}

/// Opens without blocking: the walk saw a regular file, but a FIFO put in
/// its place since must not hang the search.
fn open(path: &[u8]) -> std::io::Result<File> {
    OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(OsStr::from_bytes(path))
}

/// `path` names a file rather than a directory (a model asking "search
/// src/main.c"): that file, as grep and ripgrep would search it; `None`
/// when it names no file (a directory is walked). A `glob` filter still
/// applies to it, by the rules glob uses in its directory.
///
/// Confined, the file is opened beneath the roots, and selected by the
/// filter beneath them too; a `path` outside the roots is refused.
fn named(
    path: &str,
    filter: Option<&str>,
    roots: Option<&Roots>,
) -> Result<Option<Vec<Item>>, ToolError> {
    let item = match roots {
        None if is_regular_file(path) => Item::by_path(path.as_bytes()),
        None => return Ok(None),
        Some(roots) => match open_confined(path, roots)? {
            Some(file) => Item {
                path: path.as_bytes().to_vec(),
                source: Source::Opened(file),
                short_read_ends: false,
            },
            None => return Ok(None),
        },
    };
    let Some(filter) = filter else { return Ok(Some(vec![item])) };
    let in_dir = Glob::new(directory_of(path), filter)?;
    let wanted = item.identity();
    let mut selected = false;
    walk_within(&in_dir, roots, |found| {
        selected |= found.kind.is_file() && found_id(&found) == wanted;
    })?;
    Ok(Some(if selected { vec![item] } else { Vec::new() }))
}

fn is_regular_file(path: &str) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// Confined, the file `path` names, opened beneath the roots; `None` for a
/// directory (it is walked) or what cannot be opened. A `path` outside the
/// roots is refused.
fn open_confined(path: &str, roots: &Roots) -> Result<Option<File>, ToolError> {
    match roots.open_dir(path) {
        Ok(_) => return Ok(None),
        Err(e) if e.is_refusal() => return Err(e.into_tool_error(path, ToolError::OpenFailed)),
        Err(_) => {}
    }
    match roots.open_read(path) {
        Ok(file) if file.metadata().is_ok_and(|m| m.is_file()) => Ok(Some(file)),
        Ok(_) => Ok(None),
        Err(e) if e.is_refusal() => Err(e.into_tool_error(path, ToolError::OpenFailed)),
        Err(_) => Ok(None),
    }
}

/// The directory glob looks in for the file `path` names: its leading
/// components, `/` at the root, `None` for a bare name.
fn directory_of(path: &str) -> Option<&str> {
    let (dir, _) = path.rsplit_once('/').unwrap_or(("", path));
    let dir = if dir.is_empty() && path.starts_with('/') { "/" } else { dir };
    Some(dir).filter(|d| !d.is_empty())
}

/// A file's identity: (device, inode).
type FileId = (u64, u64);

/// The identity of what a walk found: confined, the entry itself in the
/// directory the walk holds; unconfined, what its path leads to.
fn found_id(found: &Found<'_>) -> Option<FileId> {
    match found.at {
        Some((dir, _)) => {
            let name = OsStr::from_bytes(found.name());
            let flags = rustix::fs::AtFlags::SYMLINK_NOFOLLOW;
            rustix::fs::statat(dir, name, flags).ok().map(|s| stat_id(&s))
        }
        None => path_id(found.path),
    }
}

fn path_id(path: &[u8]) -> Option<FileId> {
    std::fs::metadata(OsStr::from_bytes(path)).ok().map(|m| (m.dev(), m.ino()))
}

fn stat_id(stat: &rustix::fs::Stat) -> FileId {
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    (stat.st_dev as u64, stat.st_ino as u64)
}
