//! What the running kernel offers confinement: `openat2` (Linux 5.6) for
//! the file tools, Landlock (its ABI version), seccomp filters and user
//! and mount namespaces for bash. Each answer names what is missing and
//! the errno that said so, so that a refusal or `ikigai-tools doctor`
//! (`report`) tells the user what to change.

use std::sync::OnceLock;

use rustix::fs::{openat2, Mode, OFlags, ResolveFlags, CWD};
use rustix::io::Errno;

use super::error::ConfineError;

/// Landlock ABI the file-system rules need at least: ABI 3 (Linux 6.2)
/// is the first that also confines truncate(2); below it a command could
/// empty any file it can name.
pub const MIN_FS_ABI: i32 = 3;
/// Landlock ABI whose rules cover TCP bind and connect (Linux 6.7).
pub const NET_ABI: i32 = 4;

/// The Landlock ABI version of the running kernel: 0 when Landlock is not
/// built in (ENOSYS) or not enabled at boot (EOPNOTSUPP).
pub fn landlock_abi() -> i32 {
    landlock_version().unwrap_or(0)
}

/// The Landlock ABI version, or the errno that said there is none: ENOSYS
/// (not built in, or hidden by a seccomp filter), EOPNOTSUPP (not enabled
/// at boot).
pub fn landlock_version() -> Result<i32, i32> {
    static ABI: OnceLock<Result<i32, i32>> = OnceLock::new();
    *ABI.get_or_init(|| {
        const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
        // SAFETY: with a null attribute, size 0 and the VERSION flag the
        // call only returns a number; no memory is read or written.
        let version = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<libc::c_void>(),
                0usize,
                LANDLOCK_CREATE_RULESET_VERSION,
            )
        };
        match i32::try_from(version) {
            Ok(v) if v > 0 => Ok(v),
            _ => Err(last_errno()),
        }
    })
}

/// Whether openat2(2) with RESOLVE_BENEATH works here.
pub fn openat2_available() -> bool {
    openat2_refused().is_none()
}

/// The errno openat2(2) with RESOLVE_BENEATH was refused with, if it was.
pub fn openat2_refused() -> Option<i32> {
    static REFUSED: OnceLock<Option<i32>> = OnceLock::new();
    *REFUSED.get_or_init(|| {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
        // ENOSYS: the kernel predates openat2 (5.6); a seccomp filter that
        // denies it answers EPERM or ENOSYS as well.
        match openat2(CWD, ".", flags, Mode::empty(), resolve) {
            Err(e @ (Errno::NOSYS | Errno::PERM)) => Some(e.raw_os_error()),
            _ => None,
        }
    })
}

/// Ok when this process may install seccomp filters (Linux 3.5 with
/// `CONFIG_SECCOMP_FILTER`), else the errno: asks whether the filters'
/// "fail with an errno" action is known, which installs nothing.
pub fn seccomp_available() -> Result<(), i32> {
    static OK: OnceLock<Result<(), i32>> = OnceLock::new();
    *OK.get_or_init(|| {
        const SECCOMP_GET_ACTION_AVAIL: libc::c_uint = 2;
        const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
        let action = SECCOMP_RET_ERRNO;
        // SAFETY: the kernel reads one u32 owned by this frame.
        let r = unsafe {
            libc::syscall(libc::SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action as *const u32)
        };
        if r == 0 {
            Ok(())
        } else {
            Err(last_errno())
        }
    })
}

/// Ok when this process may make a user namespace, else the errno
/// `unshare(CLONE_NEWUSER)` gave; asked in a forked child, which then
/// exits, so that nothing here changes.
pub fn user_namespace() -> Result<(), i32> {
    // SAFETY: unshare with flags only, in the forked child.
    in_child(|| match unsafe { libc::unshare(libc::CLONE_NEWUSER) } {
        0 => 0,
        _ => last_errno(),
    })
}

/// Ok when bash's namespaces can be made here (user, mount and IPC, the
/// tree made read-only: `namespace::Plan`), else the errno of the step
/// that failed; in a forked child, as [`user_namespace`].
pub fn mount_namespace() -> Result<(), i32> {
    let plan = super::namespace::Plan::prepare(&[]).map_err(|_| libc::EIO)?;
    in_child(|| match plan.enter_in_child() {
        Ok(()) => 0,
        Err(super::namespace::Failure::Unavailable(e) | super::namespace::Failure::Midway(e)) => e,
    })
}

/// Runs `probe` in a forked child that exits with its result (0 or an
/// errno); Ok when it was 0. The child makes system calls only.
fn in_child(probe: impl FnOnce() -> i32) -> Result<(), i32> {
    use nix::sys::wait::{waitpid, WaitStatus};
    use nix::unistd::{fork, ForkResult};
    // SAFETY: the child only makes system calls (`probe`) and ends with
    // _exit; nothing it shares with the parent's threads is touched.
    match unsafe { fork() } {
        Ok(ForkResult::Child) => {
            let code = probe();
            // SAFETY: ends the forked child at once, running no destructor.
            unsafe { libc::_exit(code.clamp(0, 255)) }
        }
        Ok(ForkResult::Parent { child }) => match waitpid(child, None) {
            Ok(WaitStatus::Exited(_, 0)) => Ok(()),
            Ok(WaitStatus::Exited(_, code)) => Err(code),
            // Killed (a filter that kills the call): refused all the same.
            Ok(_) => Err(libc::EPERM),
            Err(e) => Err(e as i32),
        },
        Err(e) => Err(e as i32),
    }
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// Ok when the file tools can be confined here.
pub fn require_openat2() -> Result<(), ConfineError> {
    if openat2_available() {
        Ok(())
    } else {
        Err(ConfineError::Unsupported(
            "the kernel lacks openat2 with RESOLVE_BENEATH (Linux 5.6 or later is needed)"
                .to_owned(),
        ))
    }
}

/// Ok when bash can be confined here: Landlock at least `MIN_FS_ABI`,
/// and `NET_ABI` when the network is to be shut.
pub fn require_landlock(network: bool) -> Result<i32, ConfineError> {
    landlock_requirement(landlock_abi(), network)
}

pub(crate) fn landlock_requirement(abi: i32, network: bool) -> Result<i32, ConfineError> {
    let need = if network { MIN_FS_ABI } else { NET_ABI.max(MIN_FS_ABI) };
    if abi >= need {
        return Ok(abi);
    }
    let have = if abi == 0 {
        "the kernel has no Landlock (not built in, or not in the lsm= boot list)".to_owned()
    } else {
        format!("the kernel has Landlock ABI {abi}")
    };
    let why = if abi >= MIN_FS_ABI {
        format!(
            "{have}, but shutting TCP needs ABI {NET_ABI} (Linux 6.7); \
             IKIGAI_TOOLS_NETWORK=on would leave the network open"
        )
    } else {
        format!("{have}, but confining bash needs ABI {MIN_FS_ABI} (Linux 6.2)")
    };
    Err(ConfineError::Unsupported(why))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The machine this project is built on has both (ANCHORS.md); a
    /// kernel without them must make the tests say so, not pass silently.
    #[test]
    fn this_kernel_has_openat2_and_landlock() {
        assert!(openat2_available(), "openat2 is missing");
        let abi = landlock_abi();
        eprintln!("Landlock ABI {abi}");
        assert!(abi >= NET_ABI, "Landlock ABI {abi} < {NET_ABI}");
        assert_eq!(require_landlock(false).ok(), Some(abi));
    }

    #[test]
    fn what_is_missing_is_named_in_the_refusal() {
        let none = landlock_requirement(0, true).unwrap_err().message();
        assert!(none.contains("no Landlock") && none.contains("ABI 3"), "{none}");
        assert!(none.ends_with("refusing to run unconfined"), "{none}");
        let old = landlock_requirement(2, true).unwrap_err().message();
        assert!(old.contains("Landlock ABI 2") && old.contains("Linux 6.2"), "{old}");
        let no_net = landlock_requirement(3, false).unwrap_err().message();
        assert!(no_net.contains("ABI 4") && no_net.contains("IKIGAI_TOOLS_NETWORK"), "{no_net}");
        assert_eq!(landlock_requirement(3, true).ok(), Some(3));
        assert_eq!(landlock_requirement(4, false).ok(), Some(4));
    }
}
