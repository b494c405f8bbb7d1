//! The allowed roots: directories the tools may not leave.
//!
//! Each root is opened once, at start, as an `O_PATH | O_DIRECTORY`
//! descriptor; every later open starts from that descriptor (see
//! `beneath`), never from its name. Both spellings of a root (the one given
//! and the directory's real path, as the kernel tells it for the
//! descriptor) count as the root when a path is matched against it.
//!
//! What a root is must not be something a confined command can change
//! (docs/CONFINEMENT.md; docs/GUARANTEES.md). Two ways in:
//!
//! - An MCP session opens its roots once and hands each call's process the
//!   descriptors themselves (`IKIGAI_TOOLS_ROOT_FDS`, beside the names in
//!   `IKIGAI_TOOLS_ROOTS`): a command that renames a root away and puts a
//!   link in its place only moved the directory, which later calls still
//!   find by identity (`from_env`, `from_inherited`).
//! - Roots given by name (a host's `IKIGAI_TOOLS_ROOTS`, `mcp --root`, an
//!   MCP client's roots) are resolved here component by component, never by
//!   the kernel in one go (`resolve`): each name is looked up with `O_PATH |
//!   O_NOFOLLOW` from the directory before it, links read and followed by
//!   hand (at most 40, as the kernel), and every directory a lookup happened
//!   in is recorded by identity. A root one of whose lookups happened at or
//!   beneath another root, or beneath the sandbox's private temporary
//!   directory, went through a place a confined command may write: it is
//!   kept only if it ends beneath a root that was not reached so (then it
//!   adds no directory to the roots), and refused otherwise, naming both.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rustix::fs::{fstat, open, openat, readlinkat, FileType, Mode, OFlags};

use super::beneath::push_front;
use super::error::ConfineError;
use super::source::{Source, ROOTS_FROM_VAR};

/// The variable that turns confinement on: colon-separated directories.
pub const ROOTS_VAR: &str = "IKIGAI_TOOLS_ROOTS";

/// The descriptors of the roots named in `IKIGAI_TOOLS_ROOTS`, in the same
/// order, colon-separated (`3:4`): how the MCP server passes each call the
/// roots it opened once. Taken out of the environment at first use, so a
/// command run by bash never sees it.
pub const ROOT_FDS_VAR: &str = "IKIGAI_TOOLS_ROOT_FDS";

/// Links followed while a root's name is resolved, as the kernel (ELOOP).
const MAX_LINKS: usize = 40;

/// A directory's identity: device and inode.
type Id = (u64, u64);

/// One allowed root.
#[derive(Debug)]
pub struct Root {
    /// As given, made absolute (not resolved).
    given: PathBuf,
    /// The directory's real path, as the kernel names the descriptor.
    real: PathBuf,
    fd: OwnedFd,
}

impl Root {
    /// The directory's real path (what messages and bash use).
    pub fn path(&self) -> &Path {
        &self.real
    }

    /// Both names of the root: its real path and the one given.
    pub fn spellings(&self) -> [&Path; 2] {
        [&self.real, &self.given]
    }

    /// The `O_PATH` descriptor every open beneath this root starts from.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// What `path` (absolute) is below this root, lexically and component
    /// by component (`/w/proj_evil` is not below `/w/proj`); `None` when it
    /// is not below either spelling of the root.
    pub fn rest_of<'p>(&self, path: &'p Path) -> Option<&'p Path> {
        path.strip_prefix(&self.real).or_else(|_| path.strip_prefix(&self.given)).ok()
    }
}

/// A root opened by name, and what its resolution went through.
struct Resolved {
    root: Root,
    /// The directories some lookup of its name happened in, and all their
    /// ancestors.
    lookups: HashSet<Id>,
    /// The directory itself and all its ancestors.
    chain: HashSet<Id>,
    id: Id,
}

impl Resolved {
    /// Resolves `path` component by component from `/` (see the module
    /// comment).
    fn of(path: &Path) -> Result<Resolved, ConfineError> {
        let bad =
            |reason: String| ConfineError::BadRoot { root: path.display().to_string(), reason };
        let io = |e: std::io::Error| bad(e.to_string());
        let given = absolute(path).map_err(io)?;
        let dir = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let top = open("/", dir, Mode::empty()).map_err(|e| io(e.into()))?;
        let top_id = id_of(&top).map_err(io)?;
        // The directories from `/` down to where the next lookup happens.
        let mut stack: Vec<(OwnedFd, Id)> = vec![(top, top_id)];
        let mut lookups: HashSet<Id> = HashSet::new();
        let mut todo: Vec<OsString> = Vec::new();
        push_front(&mut todo, &given);
        let mut links = 0;
        while let Some(name) = todo.pop() {
            if name == ".." {
                // `/..` is `/`, as the kernel has it.
                if stack.len() > 1 {
                    stack.pop();
                }
                continue;
            }
            lookups.extend(stack.iter().map(|(_, id)| *id));
            let Some((here, _)) = stack.last() else {
                return Err(io(std::io::Error::from_raw_os_error(libc::ENOENT)));
            };
            let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd =
                openat(here, name.as_os_str(), flags, Mode::empty()).map_err(|e| io(e.into()))?;
            let stat = fstat(&fd).map_err(|e| io(e.into()))?;
            match FileType::from_raw_mode(stat.st_mode) {
                FileType::Symlink => {
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(io(std::io::Error::from_raw_os_error(libc::ELOOP)));
                    }
                    let target = readlinkat(&fd, "", Vec::new()).map_err(|e| io(e.into()))?;
                    let target = PathBuf::from(OsString::from_vec(target.into_bytes()));
                    if target.is_absolute() {
                        stack.truncate(1);
                    }
                    push_front(&mut todo, &target);
                }
                FileType::Directory => stack.push((fd, (stat.st_dev, stat.st_ino))),
                _ => return Err(io(std::io::Error::from_raw_os_error(libc::ENOTDIR))),
            }
        }
        let chain: HashSet<Id> = stack.iter().map(|(_, id)| *id).collect();
        let Some((fd, id)) = stack.pop() else {
            return Err(io(std::io::Error::from_raw_os_error(libc::ENOENT)));
        };
        let real = real_path(fd.as_fd()).map_err(io)?;
        Ok(Resolved { root: Root { given: lexically_clean(&given), real, fd }, lookups, chain, id })
    }
}

/// The identity of the directory `fd` holds.
/// A file's identity (device and inode) by its descriptor.
pub(super) fn id_of(fd: impl AsFd) -> std::io::Result<Id> {
    let stat = fstat(fd)?;
    Ok((stat.st_dev, stat.st_ino))
}

/// The sandbox's private temporary directory, by identity, if it exists: a
/// confined command may write beneath it (`temp::find_sandbox_temp`).
fn sandbox_temp_id() -> Option<(Id, PathBuf)> {
    let dir = super::temp::find_sandbox_temp()?;
    Some((id_of(&dir.fd).ok()?, dir.path))
}

/// Of roots resolved by name, those that may stand: a root some lookup of
/// which happened at or beneath another root (or the sandbox's temporary
/// directory) is kept only if it ends beneath a root not reached so; else
/// confinement is refused, naming both.
fn keep_unreachable(resolved: Vec<Resolved>) -> Result<Vec<Root>, ConfineError> {
    let temp = sandbox_temp_id();
    // For each root, what it was reached through (the other root's name).
    let through: Vec<Option<String>> = resolved
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let by_root = resolved
                .iter()
                .enumerate()
                .find(|(j, other)| *j != i && other.id != r.id && r.lookups.contains(&other.id));
            match (by_root, &temp) {
                (Some((_, other)), _) => {
                    Some(format!("allowed root {}", other.root.given.display()))
                }
                (None, Some((temp_id, dir))) if r.lookups.contains(temp_id) => {
                    Some(format!("the sandbox's temporary directory {}", dir.display()))
                }
                _ => None,
            }
        })
        .collect();
    for (i, r) in resolved.iter().enumerate() {
        let Some(how) = &through[i] else { continue };
        let beneath_a_firm_root = resolved
            .iter()
            .enumerate()
            .any(|(j, other)| j != i && through[j].is_none() && r.chain.contains(&other.id));
        if !beneath_a_firm_root {
            return Err(ConfineError::ReachedThrough {
                root: r.root.given.display().to_string(),
                through: how.clone(),
            });
        }
    }
    // Each one kept is a directory beneath a root no command could have
    // redirected: it adds no directory, only its names (and its place in
    // the order, which relative paths follow).
    Ok(resolved.into_iter().map(|r| r.root).collect())
}

/// The allowed roots, in the order given (the first one is where relative
/// paths go when the working directory is outside them all).
#[derive(Debug)]
pub struct Roots {
    roots: Vec<Root>,
    /// The working directory when the roots were set, if it lies inside
    /// one: (index of the deepest root holding it, its path below that).
    cwd: Option<(usize, PathBuf)>,
    /// Where they were given: what a refusal names as changing them.
    source: Source,
}

/// The roots passed as descriptors, taken once from the environment: the
/// names and duplicates of the descriptors (see `Roots::from_env`).
static INHERITED: OnceLock<Option<(Source, Result<Inherited, String>)>> = OnceLock::new();

/// Roots passed as descriptors: each one's name and descriptor.
type Inherited = Vec<(PathBuf, OwnedFd)>;

impl Roots {
    /// The roots of this process; `None` when `IKIGAI_TOOLS_ROOTS` is unset
    /// (nothing changes). With `IKIGAI_TOOLS_ROOT_FDS`, they are the
    /// descriptors it names (an MCP call's process), taken once and the
    /// variable removed; a malformed variable or a descriptor that is not a
    /// directory refuses. Otherwise each name is opened as `from_paths`
    /// does. Set but naming no directory is an error: an empty expansion
    /// (`IKIGAI_TOOLS_ROOTS=$UNSET`) must not run unconfined.
    pub fn from_env() -> Result<Option<Roots>, ConfineError> {
        let inherited = INHERITED.get_or_init(|| {
            let fds = std::env::var_os(ROOT_FDS_VAR)?;
            // So that nothing this process runs (bash's command) inherits
            // it; the descriptors themselves are close-on-exec from here.
            // The tools (and the MCP server, before its runtime starts) ask
            // for their roots at start, before any thread of theirs runs.
            std::env::remove_var(ROOT_FDS_VAR);
            let from = std::env::var_os(ROOTS_FROM_VAR);
            std::env::remove_var(ROOTS_FROM_VAR);
            let names = std::env::var_os(ROOTS_VAR).unwrap_or_default();
            Some((Source::from_name(from.as_deref()), take_inherited(&fds, &names)))
        });
        match inherited {
            Some((source, Ok(roots))) => {
                let mut cloned = Vec::with_capacity(roots.len());
                for (name, fd) in roots {
                    cloned.push((name.clone(), fd.try_clone().map_err(bad_fds)?));
                }
                let cwd = std::env::current_dir().ok();
                let roots = Roots::from_inherited(cloned, cwd.as_deref())?;
                Ok(Some(roots.with_source(*source)))
            }
            Some((_, Err(why))) => Err(bad_fds(why.clone())),
            None => match std::env::var_os(ROOTS_VAR) {
                None => Ok(None),
                Some(value) => Roots::from_list(&value).map(Some),
            },
        }
    }

    /// Roots from descriptors held by this process and their names: the
    /// name given, and the directory's real path now.
    pub fn from_inherited(
        roots: Vec<(PathBuf, OwnedFd)>,
        cwd: Option<&Path>,
    ) -> Result<Roots, ConfineError> {
        super::probe::require_openat2()?;
        let mut out: Vec<Root> = Vec::with_capacity(roots.len());
        for (given, fd) in roots {
            let real = real_path(fd.as_fd()).map_err(|e| ConfineError::BadRoot {
                root: given.display().to_string(),
                reason: e.to_string(),
            })?;
            out.push(Root { given: lexically_clean(&given), real, fd });
        }
        if out.is_empty() {
            return Err(ConfineError::NoRoots);
        }
        let cwd = cwd.and_then(|dir| deepest(&out, &lexically_clean(dir)));
        Ok(Roots { roots: out, cwd, source: Source::Server })
    }

    /// Roots from a colon-separated list; empty entries are ignored.
    pub fn from_list(list: &std::ffi::OsStr) -> Result<Roots, ConfineError> {
        Roots::from_paths(split_list(list))
    }

    /// Roots given one by one (`mcp --root DIR`, an MCP client's roots).
    pub fn from_paths<I, P>(paths: I) -> Result<Roots, ConfineError>
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        Roots::from_paths_in(paths, std::env::current_dir().ok().as_deref())
    }

    /// `from_paths` with the working directory given (`None`: outside all
    /// roots), for a server whose sessions have their own.
    pub fn from_paths_in<I, P>(paths: I, cwd: Option<&Path>) -> Result<Roots, ConfineError>
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        // Fail closed: without openat2 nothing could be opened safely.
        super::probe::require_openat2()?;
        let mut resolved: Vec<Resolved> = Vec::new();
        for path in paths {
            let root = Resolved::of(path.as_ref())?;
            if !resolved.iter().any(|r| r.id == root.id) {
                resolved.push(root);
            }
        }
        if resolved.is_empty() {
            return Err(ConfineError::NoRoots);
        }
        let roots = keep_unreachable(resolved)?;
        let cwd = cwd.and_then(|dir| deepest(&roots, &lexically_clean(dir)));
        Ok(Roots { roots, cwd, source: Source::Env })
    }

    /// These roots, given by `source` (what a refusal names).
    pub fn with_source(mut self, source: Source) -> Roots {
        self.source = source;
        self
    }

    /// Where the roots were given.
    pub fn source(&self) -> Source {
        self.source
    }

    pub fn roots(&self) -> &[Root] {
        &self.roots
    }

    /// The values of `IKIGAI_TOOLS_ROOTS` and `IKIGAI_TOOLS_ROOT_FDS` that
    /// hand these roots to a child, which takes them back with `from_env`:
    /// the names given and the descriptors, in the same order, each list
    /// colon-separated. `Err` with the first name that holds a `:`, which
    /// such a list cannot carry.
    pub fn env_values(&self) -> Result<(OsString, OsString), &Path> {
        let (mut names, mut fds) = (Vec::new(), Vec::new());
        for root in &self.roots {
            let name = root.given.as_os_str().as_bytes();
            if name.contains(&SEPARATOR) {
                return Err(&root.given);
            }
            if !names.is_empty() {
                names.push(SEPARATOR);
                fds.push(SEPARATOR);
            }
            names.extend_from_slice(name);
            fds.extend_from_slice(root.fd.as_raw_fd().to_string().as_bytes());
        }
        Ok((OsString::from_vec(names), OsString::from_vec(fds)))
    }

    /// The roots as messages name them: `/w/proj, /w/lib`.
    pub fn shown(&self) -> String {
        let names: Vec<String> = self.roots.iter().map(|r| r.real.display().to_string()).collect();
        names.join(", ")
    }

    /// Where bash starts and relative paths resolve: the working directory
    /// when it lies inside a root, otherwise the first root.
    pub fn working_dir(&self) -> PathBuf {
        match &self.cwd {
            Some((i, rest)) => self.roots[*i].real.join(rest),
            None => self.roots[0].real.clone(),
        }
    }

    /// The places `path` may name, deepest root first: (root index, path
    /// below it). A relative path is taken from the working directory when
    /// that lies inside a root, else from the first root. Empty when an
    /// absolute path lies under no root.
    pub(super) fn candidates(&self, path: &Path) -> Vec<(usize, PathBuf)> {
        if path.is_relative() {
            let (i, base) = match &self.cwd {
                Some((i, rest)) => (*i, rest.clone()),
                None => (0, PathBuf::new()),
            };
            let mut out = vec![(i, base.join(path))];
            // A working directory inside nested roots: the outer roots too.
            if base.as_os_str().is_empty() {
                return out;
            }
            let cwd = self.roots[i].real.join(&base);
            for (j, root) in self.roots.iter().enumerate() {
                if let (true, Some(rest)) = (j != i, root.rest_of(&cwd)) {
                    out.push((j, rest.join(path)));
                }
            }
            return out;
        }
        let path = lexically_clean(path);
        let mut out: Vec<(usize, PathBuf)> = self
            .roots
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.rest_of(&path).map(|rest| (i, rest.to_path_buf())))
            .collect();
        // Deepest root first: the shortest rest.
        out.sort_by_key(|(_, rest)| rest.components().count());
        out
    }
}

/// The deepest root holding `dir`, and `dir` below it.
fn deepest(roots: &[Root], dir: &Path) -> Option<(usize, PathBuf)> {
    roots
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.rest_of(dir).map(|rest| (i, rest.to_path_buf())))
        .min_by_key(|(_, rest)| rest.components().count())
}

/// `path` made absolute against the working directory, without resolving.
fn absolute(path: &Path) -> std::io::Result<PathBuf> {
    if path.is_absolute() {
        Ok(path.to_path_buf())
    } else {
        Ok(std::env::current_dir()?.join(path))
    }
}

/// `/a//b/./c` as `/a/b/c`: what `Path::components` gives. `..` is kept:
/// undoing it lexically would be wrong through a link, and the kernel
/// refuses a `..` that climbs above a root anyway.
fn lexically_clean(path: &Path) -> PathBuf {
    path.components().collect()
}

/// The real path of the directory `fd` holds, as the kernel names it.
fn real_path(fd: BorrowedFd<'_>) -> std::io::Result<PathBuf> {
    let link = format!("/proc/self/fd/{}", fd.as_raw_fd());
    match std::fs::read_link(link) {
        Ok(path) if path.is_absolute() => Ok(path),
        // No /proc: the resolved name, which the descriptor was opened from
        // a moment ago (at start, before any command could move it).
        _ => Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "/proc is not mounted, so the root's real path cannot be known",
        )),
    }
}

/// What separates the entries of `IKIGAI_TOOLS_ROOTS` and of
/// `IKIGAI_TOOLS_ROOT_FDS`.
const SEPARATOR: u8 = b':';

/// The entries of a colon-separated list, empty ones left out.
pub fn split_list(list: &OsStr) -> Vec<PathBuf> {
    list.as_bytes()
        .split(|&b| b == SEPARATOR)
        .filter(|entry| !entry.is_empty())
        .map(|entry| PathBuf::from(OsString::from_vec(entry.to_vec())))
        .collect()
}

/// The refusal for an `IKIGAI_TOOLS_ROOT_FDS` that cannot be used.
fn bad_fds(why: impl std::fmt::Display) -> ConfineError {
    ConfineError::BadRootFds(why.to_string())
}

/// Takes the descriptors `fds` names (`3:4`), paired with `names` (the
/// colon-separated `IKIGAI_TOOLS_ROOTS`): each must be an open directory,
/// listed once, with a name that is absolute. Each is duplicated
/// close-on-exec, and the inherited one marked close-on-exec too (it is
/// not closed: nothing proves this process alone holds that number).
fn take_inherited(fds: &OsStr, names: &OsStr) -> Result<Inherited, String> {
    let names = split_list(names);
    let text = fds.to_str().ok_or_else(|| format!("{ROOT_FDS_VAR} is not text"))?;
    let numbers: Vec<RawFd> = text
        .split(char::from(SEPARATOR))
        .map(|n| n.parse::<RawFd>().ok().filter(|&n| n > 2))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| format!("{ROOT_FDS_VAR}={text:?} is not a list of descriptor numbers"))?;
    if numbers.len() != names.len() {
        return Err(format!(
            "{ROOT_FDS_VAR} names {} descriptors but {ROOTS_VAR} names {} roots",
            numbers.len(),
            names.len()
        ));
    }
    let mut taken = Vec::with_capacity(numbers.len());
    for (i, (&number, name)) in numbers.iter().zip(names).enumerate() {
        if numbers[..i].contains(&number) {
            return Err(format!("{ROOT_FDS_VAR} names descriptor {number} twice"));
        }
        if !name.is_absolute() {
            return Err(format!("{ROOTS_VAR} entry {} is not absolute", name.display()));
        }
        // SAFETY: fcntl with F_DUPFD_CLOEXEC reads nothing through memory;
        // a number that is not an open descriptor fails with EBADF.
        let dup = unsafe { libc::fcntl(number, libc::F_DUPFD_CLOEXEC, 3) };
        if dup < 0 {
            let e = std::io::Error::last_os_error();
            return Err(format!("descriptor {number} for root {}: {e}", name.display()));
        }
        // SAFETY: `dup` was just returned by F_DUPFD_CLOEXEC: an open
        // descriptor no one else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(dup) };
        // SAFETY: as above; setting a descriptor flag on an open descriptor.
        unsafe { libc::fcntl(number, libc::F_SETFD, libc::FD_CLOEXEC) };
        let kind = fstat(&fd).map(|s| FileType::from_raw_mode(s.st_mode));
        if kind != Ok(FileType::Directory) {
            return Err(format!(
                "descriptor {number} for root {} is not a directory",
                name.display()
            ));
        }
        taken.push((name, fd));
    }
    Ok(taken)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_look_alike_is_not_below_the_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("proj")).unwrap();
        let roots = Roots::from_paths([dir.path().join("proj")]).unwrap();
        let real = roots.roots()[0].path().to_path_buf();
        let evil = PathBuf::from(format!("{}_evil/x", real.display()));
        assert!(roots.candidates(&evil).is_empty());
        assert_eq!(roots.candidates(&real.join("a/./b//c")), vec![(0, PathBuf::from("a/b/c"))]);
    }

    #[test]
    fn env_list_ignores_empty_entries_and_refuses_none() {
        let dir = tempfile::tempdir().unwrap();
        let list = format!("::{}:", dir.path().display());
        let roots = Roots::from_list(std::ffi::OsStr::new(&list)).unwrap();
        assert_eq!(roots.roots().len(), 1);
        let none = Roots::from_list(std::ffi::OsStr::new("::")).unwrap_err();
        assert!(matches!(none, ConfineError::NoRoots), "{none}");
    }

    #[test]
    fn a_missing_root_or_a_file_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        let err = Roots::from_paths([&missing]).unwrap_err();
        assert_eq!(
            err.message(),
            format!(
                "allowed root {} cannot be used: No such file or directory (os error 2)",
                missing.display()
            )
        );
        std::fs::write(dir.path().join("f"), "").unwrap();
        let err = Roots::from_paths([dir.path().join("f")]).unwrap_err();
        assert!(err.message().contains("Not a directory"), "{err}");
    }

    #[test]
    fn a_root_that_is_a_link_is_known_by_both_names() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        let roots = Roots::from_paths([dir.path().join("link")]).unwrap();
        assert_eq!(roots.roots()[0].path(), real.canonicalize().unwrap());
        assert_eq!(roots.candidates(&dir.path().join("link/a")), vec![(0, PathBuf::from("a"))]);
        assert_eq!(
            roots.candidates(&real.canonicalize().unwrap().join("a")),
            vec![(0, PathBuf::from("a"))]
        );
    }

    /// `t/a` (a root) with `t/a/b` in it, `t/out` beside it.
    fn nested() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(t.join("a/b")).unwrap();
        std::fs::create_dir(t.join("out")).unwrap();
        (dir, t)
    }

    #[test]
    fn a_root_inside_another_is_kept_in_its_place_as_the_directory_it_is() {
        let (_dir, t) = nested();
        let roots = Roots::from_paths([t.join("a/b"), t.join("a")]).unwrap();
        assert_eq!(roots.roots().len(), 2);
        assert_eq!(roots.roots()[0].path(), t.join("a/b"));
        // The other way round too: the outer root reaches the inner one.
        let roots = Roots::from_paths([t.join("a"), t.join("a/b")]).unwrap();
        assert_eq!(roots.shown(), format!("{0}/a, {0}/a/b", t.display()));
    }

    #[test]
    fn a_root_reached_through_another_and_leading_out_is_refused_naming_both() {
        let (_dir, t) = nested();
        std::os::unix::fs::symlink(t.join("out"), t.join("a/link")).unwrap();
        let err = Roots::from_paths([t.join("a"), t.join("a/link")]).unwrap_err();
        assert!(matches!(err, ConfineError::ReachedThrough { .. }), "{err}");
        assert!(
            err.message().starts_with(&format!(
                "allowed root {0}/a/link is reached through allowed root {0}/a, where",
                t.display()
            )),
            "{err}"
        );
        // A link elsewhere leading into a root, then out again through one
        // of its entries (`/w/link -> /w/a/b`, `b` replaced by a link out).
        std::os::unix::fs::symlink(t.join("a/b"), t.join("via")).unwrap();
        assert!(Roots::from_paths([t.join("a"), t.join("via")]).is_ok());
        std::fs::rename(t.join("a/b"), t.join("a/b.old")).unwrap();
        std::os::unix::fs::symlink("/", t.join("a/b")).unwrap();
        let err = Roots::from_paths([t.join("a"), t.join("via")]).unwrap_err();
        assert!(matches!(err, ConfineError::ReachedThrough { .. }), "{err}");
        // Alone, a link to `/` is what the user named: no other root holds it.
        assert_eq!(Roots::from_paths([t.join("via")]).unwrap().roots()[0].path(), Path::new("/"));
    }

    #[test]
    fn names_are_resolved_component_by_component_as_the_kernel_does() {
        let (_dir, t) = nested();
        std::os::unix::fs::symlink("a/b/../b", t.join("rel")).unwrap();
        std::os::unix::fs::symlink("loop", t.join("loop")).unwrap();
        let roots = Roots::from_paths([t.join("rel/./..//b/")]).unwrap();
        assert_eq!(roots.roots()[0].path(), t.join("a/b"));
        let err = Roots::from_paths([t.join("loop")]).unwrap_err();
        assert!(err.message().contains("Too many levels of symbolic links"), "{err}");
        let up = Roots::from_paths([Path::new("/../..").join(t.strip_prefix("/").unwrap())]);
        assert_eq!(up.unwrap().roots()[0].path(), t);
    }

    #[test]
    fn roots_passed_as_descriptors_are_found_by_identity_after_a_move() {
        let (_dir, t) = nested();
        let b = Roots::from_paths([t.join("a/b")]).unwrap();
        let fd = b.roots()[0].fd().try_clone_to_owned().unwrap();
        std::fs::rename(t.join("a/b"), t.join("a/b.old")).unwrap();
        std::os::unix::fs::symlink(t.join("out"), t.join("a/b")).unwrap();
        let roots = Roots::from_inherited(vec![(t.join("a/b"), fd)], None).unwrap();
        assert_eq!(roots.roots()[0].given, t.join("a/b"));
        assert_eq!(roots.roots()[0].path(), t.join("a/b.old"));
        std::fs::write(t.join("out/f"), "outside").unwrap();
        let err = roots.open_read(&t.join("a/b/f").display().to_string()).unwrap_err();
        assert!(matches!(err, ConfineError::Io(ref e) if e.raw_os_error() == Some(libc::ENOENT)));
        // What the moved directory holds is still reached, by its old name.
        std::fs::write(t.join("a/b.old/in"), "inside").unwrap();
        let mut text = String::new();
        let mut file = roots.open_read(&t.join("a/b/in").display().to_string()).unwrap();
        std::io::Read::read_to_string(&mut file, &mut text).unwrap();
        assert_eq!(text, "inside");
    }

    #[test]
    fn roots_handed_to_a_child_are_taken_back_as_they_were() {
        let (_dir, t) = nested();
        let roots = Roots::from_paths([t.join("a/b"), t.join("out")]).unwrap();
        let (names, fds) = roots.env_values().unwrap();
        let taken = take_inherited(&fds, &names).unwrap();
        let given: Vec<&Path> = roots.roots().iter().map(|r| r.given.as_path()).collect();
        assert_eq!(taken.iter().map(|(name, _)| name.as_path()).collect::<Vec<_>>(), given);
        for ((_, fd), root) in taken.iter().zip(roots.roots()) {
            assert_eq!(id_of(fd).unwrap(), id_of(&root.fd).unwrap());
        }
        std::fs::create_dir(t.join("a:b")).unwrap();
        let odd = Roots::from_paths([t.join("a"), t.join("a:b")]).unwrap();
        assert_eq!(odd.env_values().unwrap_err(), t.join("a:b"));
    }

    #[test]
    fn malformed_root_descriptors_are_refused() {
        let (_dir, t) = nested();
        let name = t.join("a").into_os_string();
        for (fds, names, why) in [
            ("x", name.clone(), "is not a list of descriptor numbers"),
            ("1", name.clone(), "is not a list of descriptor numbers"),
            ("", name.clone(), "is not a list of descriptor numbers"),
            ("998", name.clone(), "Bad file descriptor"),
            ("998:999", name.clone(), "names 2 descriptors but IKIGAI_TOOLS_ROOTS names 1"),
            ("998", OsString::from("rel"), "is not absolute"),
        ] {
            let err = take_inherited(OsStr::new(fds), &names).unwrap_err();
            assert!(err.contains(why), "{fds}: {err}");
        }
        let file = std::fs::File::create(t.join("f")).unwrap();
        let number = file.as_raw_fd().to_string();
        let err = take_inherited(OsStr::new(&number), &name).unwrap_err();
        assert!(err.ends_with("is not a directory"), "{err}");
        let dir = std::fs::File::open(t.join("a")).unwrap();
        let number = dir.as_raw_fd().to_string();
        let twice = format!("{number}:{number}");
        let names = format!("{0}:{0}", t.join("a").display());
        let err = take_inherited(OsStr::new(&twice), OsStr::new(&names)).unwrap_err();
        assert!(err.contains("twice"), "{err}");
    }
}
