//! The sandbox a confined command runs in (docs/CONFINEMENT.md): what
//! confines it, prepared in the parent, and the order the child applies it
//! in between fork and exec.
//!
//! The child, in this order: enters the namespaces where the kernel gives
//! them (`namespace`: the outside read-only, IPC of its own), enters the
//! working directory, applies the Landlock ruleset (`landlock`) and the
//! seccomp filters (`seccomp`: no user namespaces, no POSIX message queues;
//! with the network shut, Unix sockets only; without the namespaces, no
//! System V IPC). All of it is prepared in the parent; the child only makes
//! system calls. If any step fails, the spawn fails: the command never runs
//! half-confined.
//!
//! Where the kernel gives no namespace, the child fails before anything was
//! changed with [`NO_NAMESPACE`], and [`Sandbox::spawn`] starts the command
//! once more under Landlock and seccomp alone (docs/CONFINEMENT.md, "Fail
//! closed").

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::unistd::Pid;
use rustix::fs::{Mode, OFlags};

use super::error::ConfineError;
use super::landlock;
use super::namespace::{self, Failure, Identity, Plan};
use super::openat_beneath;
use super::roots::Roots;
use super::seccomp::Filter;
use super::{outer, probe};
use crate::process::group;

/// The error a spawn fails with when the kernel gave no namespace before
/// anything was changed: [`Sandbox::spawn`] starts it again without one.
pub const NO_NAMESPACE: i32 = libc::EUSERS;

/// What confines a command when allowed roots are set: the roots, whether
/// the network is open, the directory the command starts in, and the
/// confinement first tried (with the namespaces). Where the kernel cannot
/// confine the command, the spawn fails: it never runs unconfined.
pub struct Sandbox<'r> {
    roots: &'r Roots,
    network: bool,
    /// Where the command starts (bash's `workdir`), beneath a root.
    workdir: Option<PathBuf>,
    first: Prepared,
}

impl<'r> Sandbox<'r> {
    /// Prepares the sandbox for `roots`, the namespaces included; the
    /// command starts in `workdir` (beneath a root) when given, else in the
    /// roots' working directory.
    pub fn prepare(
        roots: &'r Roots,
        network: bool,
        workdir: Option<PathBuf>,
    ) -> Result<Sandbox<'r>, ConfineError> {
        let first = Prepared::prepare(roots, network, true, workdir.as_deref())?;
        Ok(Sandbox { roots, network, workdir, first })
    }

    /// The roots the command is confined to.
    pub fn roots(&self) -> &Roots {
        self.roots
    }

    /// Whether the command keeps TCP (`IKIGAI_TOOLS_NETWORK=on`).
    pub fn network(&self) -> bool {
        self.network
    }

    /// The command's private temporary directory (its `TMPDIR`).
    pub fn temp_dir(&self) -> &Path {
        self.first.temp_dir()
    }

    /// Spawns the command with `spawn`, handing it the confinement its
    /// child applies ([`Prepared::apply_in_child`]); where the kernel gave
    /// no namespace, once more with Landlock and seccomp alone.
    pub fn spawn<T>(self, mut spawn: impl FnMut(Prepared) -> io::Result<T>) -> io::Result<T> {
        let Sandbox { roots, network, workdir, first } = self;
        let namespace = first.has_namespace();
        match spawn(first) {
            Err(err) if namespace && err.raw_os_error() == Some(NO_NAMESPACE) => {
                let fallback = Prepared::prepare(roots, network, false, workdir.as_deref())
                    .map_err(|e| io::Error::other(e.message()))?;
                spawn(fallback)
            }
            started => started,
        }
    }
}

/// One confinement, ready for a child: the Landlock ruleset, the seccomp
/// filters, the namespace plan (where tried), and the directory the command
/// starts in.
pub struct Prepared {
    rules: landlock::Rules,
    /// None only with `IKIGAI_TOOLS_CONFINE=outer` where the kernel has no
    /// seccomp filters.
    filter: Option<Filter>,
    namespace: Option<Plan>,
    cwd: CString,
    cwd_fd: OwnedFd,
    cwd_id: Identity,
}

impl Prepared {
    /// Prepares the confinement for `roots`; with `namespace`, the plan of
    /// the namespaces (everything but the roots and the private temporary
    /// directory read-only, IPC of its own), else a filter that refuses
    /// System V IPC too.
    /// The command starts in `workdir` (beneath a root) when given, else
    /// in the roots' working directory.
    fn prepare(
        roots: &Roots,
        network: bool,
        namespace: bool,
        workdir: Option<&Path>,
    ) -> Result<Self, ConfineError> {
        let rules = landlock::Rules::prepare(roots, network)?;
        let filter = match probe::seccomp_available() {
            Ok(()) => Some(Filter::confined(network, namespace)?),
            // The container is the boundary (docs/CONFINEMENT.md, "Where a
            // layer is missing").
            Err(_) if outer::outer() => None,
            Err(errno) => {
                return Err(ConfineError::Unsupported(format!(
                    "the kernel gives no seccomp filters ({:?})",
                    nix::errno::Errno::from_raw(errno)
                )))
            }
        };
        let namespace = if namespace {
            let mut writable: Vec<_> = roots.roots().iter().map(|r| (r.path(), r.fd())).collect();
            writable.push((rules.temp_dir(), rules.temp_fd()));
            Some(Plan::prepare(&writable)?)
        } else {
            None
        };
        // The working directory, opened beneath its root: the child enters
        // it by path inside the namespace and checks it is this one.
        let wd = match workdir {
            Some(dir) => roots.working_dir().join(dir),
            None => roots.working_dir(),
        };
        let (root, rest) = roots
            .roots()
            .iter()
            .find_map(|r| r.rest_of(&wd).map(|rest| (r, rest)))
            .ok_or_else(|| roots.outside(&wd.display().to_string()))?;
        let cwd_fd =
            openat_beneath(root.fd(), rest, OFlags::PATH | OFlags::DIRECTORY, Mode::empty())?;
        let cwd_id = namespace::identity(cwd_fd.as_fd())?;
        Ok(Prepared { cwd: namespace::c_path(&wd)?, cwd_fd, cwd_id, rules, filter, namespace })
    }

    /// Whether the command runs in a namespace with the outside read-only.
    fn has_namespace(&self) -> bool {
        self.namespace.is_some()
    }

    /// The private temporary directory: the command's `TMPDIR`.
    pub fn temp_dir(&self) -> &Path {
        self.rules.temp_dir()
    }

    /// In the child (of `parent`), once it leads its own session: the
    /// namespace, the working directory, Landlock, seccomp. Last, so that
    /// nothing after it needs what it forbids.
    pub fn apply_in_child(&mut self, parent: Pid) -> io::Result<()> {
        match &self.namespace {
            Some(plan) => {
                plan.enter_in_child().map_err(|failure| match failure {
                    Failure::Unavailable(_) => io::Error::from_raw_os_error(NO_NAMESPACE),
                    Failure::Midway(e) => io::Error::from_raw_os_error(e),
                })?;
                // A new user namespace clears the parent-death signal.
                group::in_die_with_parent(parent)?;
                namespace::enter_dir_in_child(&self.cwd, self.cwd_id)
                    .map_err(io::Error::from_raw_os_error)?;
            }
            None => {
                // SAFETY: fchdir to a descriptor the parent opened.
                if unsafe { libc::fchdir(self.cwd_fd.as_raw_fd()) } != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
        }
        self.rules.restrict_in_child()?;
        match &self.filter {
            Some(filter) => filter.apply_in_child(),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spawns in a sandbox of a fresh root with a spawner that fails with
    /// `errno`; whether each attempt had the namespaces, and the error.
    fn attempts_failing_with(errno: i32) -> (Vec<bool>, Option<i32>) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let roots = Roots::from_paths_in([&root], Some(&root)).unwrap();
        let sandbox = Sandbox::prepare(&roots, false, None).unwrap();
        let mut attempts = Vec::new();
        let failed = sandbox
            .spawn(|prepared| {
                attempts.push(prepared.has_namespace());
                Err::<(), _>(io::Error::from_raw_os_error(errno))
            })
            .unwrap_err();
        (attempts, failed.raw_os_error())
    }

    #[test]
    fn no_namespace_from_the_kernel_is_tried_once_more_without_one() {
        assert_eq!(attempts_failing_with(NO_NAMESPACE), (vec![true, false], Some(NO_NAMESPACE)));
    }

    #[test]
    fn any_other_failed_spawn_is_not_tried_again() {
        assert_eq!(attempts_failing_with(libc::EACCES), (vec![true], Some(libc::EACCES)));
    }
}
