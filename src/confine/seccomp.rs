//! The seccomp filter beside Landlock when the network is shut (README,
//! "Confinement: allowed roots"): Landlock's network rules cover plain TCP
//! only, so MPTCP (`socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP)`), UDP and
//! every other family would stay open. As Codex's Linux sandbox does, only
//! Unix sockets may be made:
//!
//! - `socket` and `socketpair` with a domain other than `AF_UNIX` fail with
//!   EACCES;
//! - `io_uring_setup` fails with EACCES: io_uring's `IORING_OP_SOCKET`
//!   makes sockets without the `socket` system call;
//! - a system call of another architecture (i386's `int 0x80`, where
//!   `socketcall` would bypass the rule) kills the process: seccompiler's
//!   architecture check; x32 calls (the same architecture, the number with
//!   bit 30 set) get the same rules as their 64-bit twins.
//!
//! The filter is compiled in the parent; the child only installs it
//! (`prctl(PR_SET_NO_NEW_PRIVS)` and `seccomp(2)`, no allocation).

use std::collections::BTreeMap;
use std::io;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::error::ConfineError;

/// x32 system calls share x86-64's audit architecture, with this bit set in
/// the number.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: i64 = 0x4000_0000;

/// A compiled filter, ready for [`Filter::apply_in_child`].
#[derive(Debug)]
pub struct Filter {
    program: BpfProgram,
}

impl Filter {
    /// Compiles the filter for this architecture.
    pub fn no_network() -> Result<Filter, ConfineError> {
        let failed = |what: String| {
            ConfineError::Unsupported(format!("the seccomp filter cannot be built ({what})"))
        };
        let arch =
            TargetArch::try_from(std::env::consts::ARCH).map_err(|e| failed(e.to_string()))?;
        let not_unix = || -> Result<Vec<SeccompRule>, ConfineError> {
            let cond = SeccompCondition::new(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Ne,
                libc::AF_UNIX as u64,
            )
            .map_err(|e| failed(e.to_string()))?;
            Ok(vec![SeccompRule::new(vec![cond]).map_err(|e| failed(e.to_string()))?])
        };
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        for nr in [libc::SYS_socket, libc::SYS_socketpair] {
            rules.insert(nr, not_unix()?);
            #[cfg(target_arch = "x86_64")]
            rules.insert(nr | X32_SYSCALL_BIT, not_unix()?);
        }
        // An empty rule list matches every call.
        rules.insert(libc::SYS_io_uring_setup, Vec::new());
        #[cfg(target_arch = "x86_64")]
        rules.insert(libc::SYS_io_uring_setup | X32_SYSCALL_BIT, Vec::new());
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EACCES as u32),
            arch,
        )
        .map_err(|e| failed(e.to_string()))?;
        let program = BpfProgram::try_from(filter).map_err(|e| failed(e.to_string()))?;
        Ok(Filter { program })
    }

    /// Installs the filter on the calling process; for a `pre_exec` hook.
    /// Sets `no_new_privs` (as seccomp requires of an unprivileged caller)
    /// and makes system calls only: nothing is allocated.
    pub fn apply_in_child(&self) -> io::Result<()> {
        match seccompiler::apply_filter(&self.program) {
            Ok(()) => Ok(()),
            Err(seccompiler::Error::Prctl(e) | seccompiler::Error::Seccomp(e)) => Err(e),
            Err(_) => Err(io::Error::from_raw_os_error(libc::EINVAL)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In a forked child: applies the filter, then `call`; the errno, or 0
    /// when the call succeeded.
    fn in_child(call: impl Fn() -> libc::c_long) -> i32 {
        let filter = Filter::no_network().unwrap();
        // SAFETY: the child makes system calls only and ends with _exit.
        match unsafe { nix::unistd::fork() }.unwrap() {
            nix::unistd::ForkResult::Child => {
                let code = match filter.apply_in_child() {
                    Ok(()) => match call() {
                        -1 => io::Error::last_os_error().raw_os_error().unwrap_or(255),
                        _ => 0,
                    },
                    Err(_) => 254,
                };
                // SAFETY: ends the forked child at once.
                unsafe { libc::_exit(code) }
            }
            nix::unistd::ForkResult::Parent { child } => {
                match nix::sys::wait::waitpid(child, None).unwrap() {
                    nix::sys::wait::WaitStatus::Exited(_, code) => code,
                    other => panic!("{other:?}"),
                }
            }
        }
    }

    fn socket_in_child(domain: i32, ty: i32, protocol: i32) -> i32 {
        // SAFETY: socket(2) with plain integers.
        in_child(|| libc::c_long::from(unsafe { libc::socket(domain, ty, protocol) }))
    }

    #[test]
    fn io_uring_cannot_be_set_up_under_the_filter() {
        let setup = || {
            let mut params = [0u8; 120];
            // SAFETY: io_uring_setup with a zeroed `io_uring_params` it may
            // write; the ring (if any) is closed with the process.
            unsafe { libc::syscall(libc::SYS_io_uring_setup, 1u32, params.as_mut_ptr()) }
        };
        assert_eq!(in_child(setup), libc::EACCES);
    }

    #[test]
    fn only_unix_sockets_can_be_made_under_the_filter() {
        const IPPROTO_MPTCP: i32 = 262;
        assert_eq!(socket_in_child(libc::AF_UNIX, libc::SOCK_STREAM, 0), 0);
        for (domain, ty, protocol) in [
            (libc::AF_INET, libc::SOCK_STREAM, IPPROTO_MPTCP),
            (libc::AF_INET6, libc::SOCK_STREAM, IPPROTO_MPTCP),
            (libc::AF_INET, libc::SOCK_DGRAM, 0),
            (libc::AF_NETLINK, libc::SOCK_RAW, 0),
        ] {
            assert_eq!(socket_in_child(domain, ty, protocol), libc::EACCES, "{domain} {ty}");
        }
    }
}
