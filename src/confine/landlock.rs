//! The Landlock ruleset bash runs under (CONTRACT §8).
//!
//! Everything stays readable and executable; writing (creating, removing,
//! renaming, truncating, device ioctls) is allowed only beneath the roots,
//! the temporary directory (`$TMPDIR`, else `/tmp`) and a few devices
//! every program may write: `/dev/null`, `/dev/zero`, `/dev/full` and
//! `/dev/tty` (bash runs without a controlling terminal, so opening
//! `/dev/tty` fails with ENXIO as it would unconfined rather than EACCES).
//! Not `/dev/pts` or `/dev/ptmx`: a pty the command opened would be its
//! own, but `/dev/pts/N` also names the user's terminals, where typed-in
//! input could be injected; programs that need a pty fail.
//! No device node may be made anywhere (a block device made inside a root
//! would give root the whole disk).
//! TCP bind and connect are refused unless `IKIGAI_TOOLS_NETWORK=on`.
//! `no_new_privs` is set, so no set-uid program regains what was dropped.
//!
//! The ruleset is built in the parent (`Sandbox::prepare`: opening the
//! paths, creating the ruleset, adding the rules: all of which allocate
//! and may fail with a message); the child only calls
//! `Sandbox::restrict_in_child` between fork and exec, which makes two
//! system calls — prctl(PR_SET_NO_NEW_PRIVS) and landlock_restrict_self —
//! and allocates nothing. A Landlock domain is inherited by every process
//! the command starts and cannot be undone; a nested `ikigai-tools` with
//! other roots can only add a ruleset, i.e. restrict further.
//!
//! Fail closed: the ABI used is the kernel's, capped at the one tested
//! here (5: truncate and device ioctls are confined), with every access
//! right of that ABI handled as a hard requirement; below ABI 3 (or 4 with
//! the network shut) `prepare` refuses with what is missing, and a child
//! whose ruleset is not fully enforced does not exec.

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, RulesetStatus, ABI,
};
use rustix::fs::{open, Mode, OFlags};

use super::error::ConfineError;
use super::probe;
use super::roots::Roots;

/// The variable that leaves TCP open to confined commands.
pub const NETWORK_VAR: &str = "IKIGAI_TOOLS_NETWORK";

/// The newest Landlock ABI whose rights this ruleset was tested with.
const TESTED_ABI: i32 = 5;

/// Devices every program may write (see the module comment).
const DEVICES: [&str; 4] = ["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];

/// Whether `IKIGAI_TOOLS_NETWORK=on` leaves TCP open.
pub fn network_allowed() -> bool {
    std::env::var_os(NETWORK_VAR).is_some_and(|v| v == "on")
}

/// A ruleset ready to be applied in a child.
#[derive(Debug)]
pub struct Sandbox {
    ruleset: Option<RulesetCreated>,
    /// What the ruleset allows writing, for messages and tests.
    writable: Vec<PathBuf>,
}

impl Sandbox {
    /// Builds the ruleset for `roots`, with TCP open when `network`.
    pub fn prepare(roots: &Roots, network: bool) -> Result<Sandbox, ConfineError> {
        Sandbox::prepare_with_tmp(roots, network, &temp_dir())
    }

    /// `prepare` with the temporary directory given.
    pub fn prepare_with_tmp(
        roots: &Roots,
        network: bool,
        tmp: &Path,
    ) -> Result<Sandbox, ConfineError> {
        let abi = probe::require_landlock(network)?;
        let abi = ABI::from(abi.min(TESTED_ABI));
        let failed = |e: landlock::RulesetError| {
            ConfineError::Unsupported(format!("the Landlock ruleset cannot be built ({e})"))
        };
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(abi))
            .map_err(failed)?;
        if !network {
            ruleset = ruleset.handle_access(AccessNet::from_all(abi)).map_err(failed)?;
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
        // A missing temporary directory or device is simply not granted.
        if let Ok(fd) = open_path(tmp) {
            created = created.add_rule(PathBeneath::new(fd, writable_tree(abi))).map_err(failed)?;
            writable.push(tmp.to_path_buf());
        }
        for device in DEVICES {
            if let Ok(fd) = open_path(Path::new(device)) {
                created = created
                    .add_rule(PathBeneath::new(fd, AccessFs::from_file(abi)))
                    .map_err(failed)?;
                writable.push(PathBuf::from(device));
            }
        }
        Ok(Sandbox { ruleset: Some(created), writable })
    }

    /// What commands may write beneath.
    pub fn writable(&self) -> &[PathBuf] {
        &self.writable
    }

    /// Restricts the calling process; for a `pre_exec` hook, between fork
    /// and exec. Sets `no_new_privs`, enforces the ruleset, and fails
    /// (so the child does not exec) unless both are fully in force. Makes
    /// system calls only: nothing is allocated.
    pub fn restrict_in_child(&mut self) -> io::Result<()> {
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

/// `$TMPDIR` when it is an absolute path, else `/tmp`.
pub fn temp_dir() -> PathBuf {
    std::env::var_os("TMPDIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| PathBuf::from("/tmp"))
}

fn open_path(path: &Path) -> io::Result<OwnedFd> {
    open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()).map_err(Into::into)
}

#[cfg(test)]
#[path = "landlock_tests.rs"]
mod tests;
