//! The allowed roots: directories the tools may not leave.
//!
//! Each root is opened once, at start, as an `O_PATH | O_DIRECTORY`
//! descriptor; every later open starts from that descriptor (see
//! `beneath`), never from its name. A root that is itself a symbolic link is
//! followed once, here, to the directory it names; both spellings (the one
//! given and the directory's real path, as the kernel tells it for the
//! descriptor) count as the root when a path is matched against it.

use std::ffi::OsString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{open, Mode, OFlags};

use super::error::ConfineError;

/// The variable that turns confinement on: colon-separated directories.
pub const ROOTS_VAR: &str = "IKIGAI_TOOLS_ROOTS";

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
    /// Opens `path` as a root: it must be an existing directory (a link to
    /// one is followed, once).
    pub fn open(path: &Path) -> Result<Root, ConfineError> {
        let bad =
            |reason: String| ConfineError::BadRoot { root: path.display().to_string(), reason };
        let given = absolute(path).map_err(|e| bad(e.to_string()))?;
        let fd = open(&given, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
            .map_err(|e| bad(std::io::Error::from(e).to_string()))?;
        let real = real_path(&fd).map_err(|e| bad(e.to_string()))?;
        Ok(Root { given: lexically_clean(&given), real, fd })
    }

    /// The directory's real path (what messages and bash use).
    pub fn path(&self) -> &Path {
        &self.real
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

/// The allowed roots, in the order given (the first one is where relative
/// paths go when the working directory is outside them all).
#[derive(Debug)]
pub struct Roots {
    roots: Vec<Root>,
    /// The working directory when the roots were set, if it lies inside
    /// one: (index of the deepest root holding it, its path below that).
    cwd: Option<(usize, PathBuf)>,
}

impl Roots {
    /// The roots named by `IKIGAI_TOOLS_ROOTS`; `None` when it is unset
    /// (nothing changes). Set but naming no directory is an error: an
    /// empty expansion (`IKIGAI_TOOLS_ROOTS=$UNSET`) must not run
    /// unconfined.
    pub fn from_env() -> Result<Option<Roots>, ConfineError> {
        match std::env::var_os(ROOTS_VAR) {
            None => Ok(None),
            Some(value) => Roots::from_list(&value).map(Some),
        }
    }

    /// Roots from a colon-separated list; empty entries are ignored.
    pub fn from_list(list: &std::ffi::OsStr) -> Result<Roots, ConfineError> {
        let entries: Vec<PathBuf> = list
            .as_bytes()
            .split(|&b| b == b':')
            .filter(|entry| !entry.is_empty())
            .map(|entry| PathBuf::from(OsString::from_vec(entry.to_vec())))
            .collect();
        Roots::from_paths(entries)
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
        let mut roots: Vec<Root> = Vec::new();
        for path in paths {
            let root = Root::open(path.as_ref())?;
            if !roots.iter().any(|r| r.real == root.real) {
                roots.push(root);
            }
        }
        if roots.is_empty() {
            return Err(ConfineError::NoRoots);
        }
        let cwd = cwd.and_then(|dir| deepest(&roots, &lexically_clean(dir)));
        Ok(Roots { roots, cwd })
    }

    pub fn roots(&self) -> &[Root] {
        &self.roots
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

    /// Whether `path` lies lexically inside a root. A pre-filter only: it
    /// says nothing about links below; opening goes through `beneath`.
    pub fn contains(&self, path: &Path) -> bool {
        let path = if path.is_absolute() { lexically_clean(path) } else { return true };
        self.roots.iter().any(|r| r.rest_of(&path).is_some_and(|rest| !has_parent_dir(rest)))
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

fn has_parent_dir(path: &Path) -> bool {
    path.components().any(|c| c == Component::ParentDir)
}

/// The real path of the directory `fd` holds, as the kernel names it.
fn real_path(fd: &OwnedFd) -> std::io::Result<PathBuf> {
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
        assert!(!roots.contains(&evil));
        assert!(roots.contains(&real.join("x")));
        assert!(!roots.contains(&real.join("../x")));
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
}
