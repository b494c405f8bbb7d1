//! The Landlock ruleset bash runs under (docs/CONFINEMENT.md; docs/GUARANTEES.md, "Confinement").
//!
//! Everything stays readable and executable; writing (creating, removing,
//! renaming, truncating, device ioctls) is allowed only beneath the roots,
//! the sandbox's private temporary directory (`temp::open_sandbox_temp`, not the
//! whole of `$TMPDIR`: a root under `/tmp` could otherwise be renamed away
//! and replaced by a link) and a few devices every program may write:
//! `/dev/null`, `/dev/zero`, `/dev/full` and `/dev/tty` (bash runs without
//! a controlling terminal, so opening `/dev/tty` fails with ENXIO as it
//! would unconfined rather than EACCES).
//! Not `/dev/pts` or `/dev/ptmx`: a pty the command opened would be its
//! own, but `/dev/pts/N` also names the user's terminals, where typed-in
//! input could be injected; programs that need a pty fail.
//! No device node may be made anywhere (a block device made inside a root
//! would give root the whole disk).
//! TCP bind and connect are refused unless `IKIGAI_TOOLS_NETWORK=on`.
//! From ABI 6 on, abstract Unix sockets and signals are scoped: the command
//! can neither connect to an abstract socket nor signal a process made
//! outside its sandbox (the user's other processes, the tool, its guardian).
//! `no_new_privs` is set, so no set-uid program regains what was dropped.
//!
//! The ruleset is built in the parent (`Rules::prepare`: opening the
//! paths, creating the ruleset, adding the rules: all of which allocate
//! and may fail with a message); the child only calls
//! `Rules::restrict_in_child` between fork and exec, which makes two
//! system calls — prctl(PR_SET_NO_NEW_PRIVS) and landlock_restrict_self —
//! and allocates nothing. A Landlock domain is inherited by every process
//! the command starts and cannot be undone; a nested `ikigai-tools` with
//! other roots can only add a ruleset, i.e. restrict further.
//!
//! Fail closed: the ABI used is the kernel's, capped at the newest tested
//! here (7), with every access right and scope of that ABI handled as a
//! hard requirement; below ABI 3 (or 4 with the network shut) `prepare`
//! refuses with what is missing, and a child whose ruleset is not fully
//! enforced does not exec.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};
use rustix::fs::{open, Mode, OFlags};

use super::error::ConfineError;
use super::outer;
use super::probe;
use super::roots::Roots;
use super::temp;

/// The variable that leaves TCP open to confined commands (`on`; read with
/// a call's `Context`).
pub const NETWORK_VAR: &str = "IKIGAI_TOOLS_NETWORK";

/// The newest Landlock ABI whose rights this ruleset was tested with
/// (ABI 6 adds the scopes; 7 only logging).
const TESTED_ABI: i32 = 7;
/// The first ABI that scopes abstract Unix sockets and signals.
pub const SCOPE_ABI: i32 = 6;

/// Devices every program may write (see the module comment).
const DEVICES: [&str; 4] = ["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];

/// A ruleset ready to be applied in a child.
#[derive(Debug)]
pub struct Rules {
    ruleset: Option<RulesetCreated>,
    /// No ruleset at all: the kernel has too little Landlock and
    /// `IKIGAI_TOOLS_CONFINE=outer` runs the command without it.
    absent: bool,
    /// The private temporary directory, and the descriptor it was checked
    /// through.
    temp: PathBuf,
    temp_fd: OwnedFd,
    /// What the ruleset allows writing (for the tests).
    #[cfg(test)]
    writable: Vec<PathBuf>,
}

impl Rules {
    /// Builds the ruleset for `roots`, with TCP open when `network`.
    pub fn prepare(roots: &Roots, network: bool) -> Result<Rules, ConfineError> {
        let kernel_abi = match probe::require_landlock(network) {
            Ok(abi) => abi,
            // The container is the boundary: the file-system rules where
            // the kernel has them (TCP then left to the seccomp filter),
            // else none (docs/CONFINEMENT.md, "Where a layer is missing").
            Err(_) if outer::outer() => probe::landlock_abi(),
            Err(refusal) => return Err(refusal),
        };
        let temp = temp::open_sandbox_temp()?;
        Rules::prepare_in(roots, network, kernel_abi, &temp.path, temp.fd)
    }

    /// `prepare` with the private temporary directory given (the tests'):
    /// made mode 700 when missing, refused unless private
    /// (`temp::open_private`).
    #[cfg(test)]
    pub fn prepare_with_tmp(
        roots: &Roots,
        network: bool,
        tmp: &Path,
    ) -> Result<Rules, ConfineError> {
        let kernel_abi = probe::require_landlock(network)?;
        let temp_fd = temp::open_private(tmp)?;
        Rules::prepare_in(roots, network, kernel_abi, tmp, temp_fd)
    }

    /// The ruleset, with the private temporary directory `tmp` checked
    /// already (held by `temp_fd`). A root inside it is refused: the
    /// command may rename what is there.
    fn prepare_in(
        roots: &Roots,
        network: bool,
        kernel_abi: i32,
        tmp: &Path,
        temp_fd: OwnedFd,
    ) -> Result<Rules, ConfineError> {
        let temp_real = real_path(temp_fd.as_fd()).unwrap_or_else(|| tmp.to_path_buf());
        for root in roots.roots() {
            if root.path().starts_with(&temp_real) || root.path().starts_with(tmp) {
                return Err(ConfineError::BadRoot {
                    root: root.path().display().to_string(),
                    reason: format!(
                        "it lies inside the sandbox's temporary directory {}, \
                         which a confined command may rename",
                        tmp.display()
                    ),
                });
            }
        }
        if kernel_abi < probe::MIN_FS_ABI {
            return Ok(Rules {
                ruleset: None,
                absent: true,
                temp: tmp.to_path_buf(),
                temp_fd,
                #[cfg(test)]
                writable: Vec::new(),
            });
        }
        let abi = ABI::from(kernel_abi.min(TESTED_ABI));
        let scoped = kernel_abi >= SCOPE_ABI;
        let failed = |e: landlock::RulesetError| {
            ConfineError::Unsupported(format!("the Landlock ruleset cannot be built ({e})"))
        };
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(abi))
            .map_err(failed)?;
        if !network && kernel_abi >= probe::NET_ABI {
            ruleset = ruleset.handle_access(AccessNet::from_all(abi)).map_err(failed)?;
        }
        if scoped {
            ruleset = ruleset.scope(Scope::from_all(abi)).map_err(failed)?;
        }
        let mut created = ruleset.create().map_err(failed)?;

        let everything = open_path(Path::new("/")).map_err(ConfineError::Io)?;
        created = created
            .add_rule(PathBeneath::new(everything, AccessFs::from_read(abi)))
            .map_err(failed)?;
        let mut writable = Vec::new();
        for root in roots.roots() {
            created = created
                .add_rule(PathBeneath::new(root.fd(), writable_tree(abi)))
                .map_err(failed)?;
            writable.push(root.path().to_path_buf());
        }
        created = created
            .add_rule(PathBeneath::new(temp_fd.as_fd(), writable_tree(abi)))
            .map_err(failed)?;
        writable.push(tmp.to_path_buf());
        // A missing device is simply not granted.
        for device in DEVICES {
            if let Ok(fd) = open_path(Path::new(device)) {
                created = created
                    .add_rule(PathBeneath::new(fd, AccessFs::from_file(abi)))
                    .map_err(failed)?;
                writable.push(PathBuf::from(device));
            }
        }
        Ok(Rules {
            ruleset: Some(created),
            absent: false,
            temp: tmp.to_path_buf(),
            temp_fd,
            #[cfg(test)]
            writable,
        })
    }

    /// What commands may write beneath.
    #[cfg(test)]
    pub fn writable(&self) -> &[PathBuf] {
        &self.writable
    }

    /// The private temporary directory: the command's `TMPDIR`.
    pub fn temp_dir(&self) -> &Path {
        &self.temp
    }

    /// The descriptor the private temporary directory was checked through.
    pub fn temp_fd(&self) -> BorrowedFd<'_> {
        self.temp_fd.as_fd()
    }

    /// Restricts the calling process; for a `pre_exec` hook, between fork
    /// and exec. Sets `no_new_privs`, enforces the ruleset, and fails
    /// (so the child does not exec) unless both are fully in force. Makes
    /// system calls only: nothing is allocated.
    pub fn restrict_in_child(&mut self) -> io::Result<()> {
        if self.absent {
            // No set-uid program regains what the other layers dropped.
            // SAFETY: prctl with integer arguments.
            if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
                return Err(io::Error::last_os_error());
            }
            return Ok(());
        }
        let Some(ruleset) = self.ruleset.take() else {
            // Applied already (a second exec attempt): nothing left to do,
            // and nothing may run unconfined either.
            return Err(io::Error::from_raw_os_error(libc::EPERM));
        };
        match ruleset.restrict_self() {
            Ok(status) if status.ruleset == RulesetStatus::FullyEnforced && status.no_new_privs => {
                Ok(())
            }
            Ok(_) => Err(io::Error::from_raw_os_error(libc::EPERM)),
            Err(_) => Err(io::Error::last_os_error()),
        }
    }
}

/// What a command may do beneath a writable directory: everything but
/// making device nodes. A block device made inside a root (`mknod` as root)
/// and then written would write the disk beneath every other file.
fn writable_tree(abi: ABI) -> landlock::BitFlags<AccessFs> {
    AccessFs::from_all(abi) & !(AccessFs::MakeChar | AccessFs::MakeBlock)
}

/// The path the kernel names an open directory by.
fn real_path(fd: BorrowedFd<'_>) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()
}

fn open_path(path: &Path) -> io::Result<OwnedFd> {
    open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()).map_err(Into::into)
}

#[cfg(test)]
#[path = "landlock_tests.rs"]
mod tests;
