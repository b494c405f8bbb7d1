//! What the running kernel offers confinement: `openat2` (Linux 5.6) for
//! the file tools, Landlock (its ABI version) for bash. Each answer names
//! what is missing, so that a refusal tells the user what to upgrade.

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
    static ABI: OnceLock<i32> = OnceLock::new();
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
        i32::try_from(version).unwrap_or(0).max(0)
    })
}

/// Whether openat2(2) with RESOLVE_BENEATH works here.
pub fn openat2_available() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
        // ENOSYS: the kernel predates openat2 (5.6); a seccomp filter that
        // denies it answers EPERM or ENOSYS as well.
        !matches!(openat2(CWD, ".", flags, Mode::empty(), resolve), Err(Errno::NOSYS | Errno::PERM))
    })
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

fn landlock_requirement(abi: i32, network: bool) -> Result<i32, ConfineError> {
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
