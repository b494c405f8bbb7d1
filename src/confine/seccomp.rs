//! The seccomp filters beside Landlock (docs/CONFINEMENT.md).
//!
//! With the network shut: Landlock's network rules cover plain TCP only, so
//! MPTCP (`socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP)`), UDP and every
//! other family would stay open. As Codex's Linux sandbox does, only Unix
//! sockets may be made:
//!
//! - `socket` and `socketpair` with a domain other than `AF_UNIX` fail with
//!   EACCES;
//! - `io_uring_setup` fails with EACCES: io_uring's `IORING_OP_SOCKET`
//!   makes sockets without the `socket` system call.
//!
//! Always, when confined: no new user namespace (`unshare` or `clone` with
//! `CLONE_NEWUSER` fail with EACCES; `clone3`, whose flags a filter cannot
//! read, fails with ENOSYS, on which libc falls back to `clone`). A command
//! that could make them could use up the user's count
//! (`user.max_user_namespaces`) from a background process, and the next
//! call, finding none left, would run without its read-only namespace
//! (`namespace`); it also keeps the kernel's namespace code out of reach.
//!
//! Always, when confined: no POSIX message queue (`mq_open`,
//! `mq_timedsend`, `mq_timedreceive`, `mq_notify`, `mq_getsetattr`,
//! `mq_unlink` fail with EACCES). By name Landlock already refuses opening
//! one (the queues' own file system lies beneath no rule), but where the
//! host mounted an mqueue file system (`/dev/mqueue`) every queue of the
//! user is also a file there, which the command may open for reading like
//! any file, and `mq_timedreceive` on that descriptor takes the message;
//! the IPC namespace does not change what that mount shows.
//!
//! Without the namespaces (`namespace`), System V IPC too: `shmget`,
//! `shmat`, `shmdt`, `shmctl`, `msgget`, `msgsnd`, `msgrcv`, `msgctl`,
//! `semget`, `semop`, `semtimedop`, `semctl` fail with EACCES, the error
//! each of them gives when permission is denied. They name objects by key
//! or id, never by path, so Landlock does not see them; in the namespaces
//! the command has an IPC namespace of its own instead, and keeps them.
//!
//! A system call of another architecture (i386's `int 0x80`, where
//! `socketcall` would bypass the rules) kills the process: seccompiler's
//! architecture check; x32 calls (the same architecture, the number with
//! bit 30 set) get the same rules as their 64-bit twins.
//!
//! The filters are compiled in the parent; the child only installs them
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

/// Every POSIX message queue call (see the module comment).
const POSIX_MESSAGE_QUEUES: [i64; 6] = [
    libc::SYS_mq_open,
    libc::SYS_mq_unlink,
    libc::SYS_mq_timedsend,
    libc::SYS_mq_timedreceive,
    libc::SYS_mq_notify,
    libc::SYS_mq_getsetattr,
];

/// x32's own number for `mq_notify` (its `struct sigevent` differs from
/// x86-64's), which the twin `insert` adds does not name.
#[cfg(target_arch = "x86_64")]
const X32_MQ_NOTIFY: i64 = X32_SYSCALL_BIT | 527;

/// Every System V IPC call (x86-64 and arm64 have one each; i386's
/// multiplexed `ipc` is another architecture's, which the filter kills).
const SYSTEM_V_IPC: [i64; 12] = [
    libc::SYS_shmget,
    libc::SYS_shmat,
    libc::SYS_shmdt,
    libc::SYS_shmctl,
    libc::SYS_msgget,
    libc::SYS_msgsnd,
    libc::SYS_msgrcv,
    libc::SYS_msgctl,
    libc::SYS_semget,
    libc::SYS_semop,
    libc::SYS_semtimedop,
    libc::SYS_semctl,
];

/// The compiled filters, ready for [`Filter::apply_in_child`].
#[derive(Debug)]
pub struct Filter {
    /// What fails with EACCES.
    refused: BpfProgram,
    /// What fails with ENOSYS (`clone3`).
    missing: BpfProgram,
}

fn failed(what: String) -> ConfineError {
    ConfineError::Unsupported(format!("the seccomp filter cannot be built ({what})"))
}

/// Adds `rules` for system call `nr` and, on x86-64, its x32 twin.
fn insert(map: &mut BTreeMap<i64, Vec<SeccompRule>>, nr: i64, rules: Vec<SeccompRule>) {
    #[cfg(target_arch = "x86_64")]
    map.insert(nr | X32_SYSCALL_BIT, rules.clone());
    map.insert(nr, rules);
}

/// One rule: argument `arg` (32 bits) compared with `op`.
fn when(arg: u8, op: SeccompCmpOp, value: u64) -> Result<Vec<SeccompRule>, ConfineError> {
    let cond = SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value)
        .map_err(|e| failed(e.to_string()))?;
    Ok(vec![SeccompRule::new(vec![cond]).map_err(|e| failed(e.to_string()))?])
}

fn compile(rules: BTreeMap<i64, Vec<SeccompRule>>, errno: i32) -> Result<BpfProgram, ConfineError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| failed(e.to_string()))?;
    let filter =
        SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(errno as u32), arch)
            .map_err(|e| failed(e.to_string()))?;
    BpfProgram::try_from(filter).map_err(|e| failed(e.to_string()))
}

impl Filter {
    /// Compiles the filters for this architecture: user namespaces and POSIX
    /// message queues always refused, sockets other than Unix ones and
    /// io_uring unless `network`, System V IPC unless the command runs in
    /// an IPC `namespace` of its own.
    pub fn confined(network: bool, namespace: bool) -> Result<Filter, ConfineError> {
        let new_user = libc::CLONE_NEWUSER as u64;
        let mut refused: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        // unshare(flags), clone(flags, …): the flags are the first argument
        // on every architecture this builds for.
        for nr in [libc::SYS_unshare, libc::SYS_clone] {
            insert(&mut refused, nr, when(0, SeccompCmpOp::MaskedEq(new_user), new_user)?);
        }
        if !network {
            for nr in [libc::SYS_socket, libc::SYS_socketpair] {
                insert(&mut refused, nr, when(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?);
            }
            // An empty rule list matches every call.
            insert(&mut refused, libc::SYS_io_uring_setup, Vec::new());
        }
        for nr in POSIX_MESSAGE_QUEUES {
            insert(&mut refused, nr, Vec::new());
        }
        #[cfg(target_arch = "x86_64")]
        refused.insert(X32_MQ_NOTIFY, Vec::new());
        if !namespace {
            for nr in SYSTEM_V_IPC {
                insert(&mut refused, nr, Vec::new());
            }
        }
        let mut missing: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        insert(&mut missing, libc::SYS_clone3, Vec::new());
        Ok(Filter {
            refused: compile(refused, libc::EACCES)?,
            missing: compile(missing, libc::ENOSYS)?,
        })
    }

    /// Installs the filters on the calling process; for a `pre_exec` hook.
    /// Sets `no_new_privs` (as seccomp requires of an unprivileged caller)
    /// and makes system calls only: nothing is allocated.
    pub fn apply_in_child(&self) -> io::Result<()> {
        for program in [&self.missing, &self.refused] {
            match seccompiler::apply_filter(program) {
                Ok(()) => {}
                Err(seccompiler::Error::Prctl(e) | seccompiler::Error::Seccomp(e)) => {
                    return Err(e)
                }
                Err(_) => return Err(io::Error::from_raw_os_error(libc::EINVAL)),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In a forked child: applies the filter (network shut, in the
    /// namespaces), then `call`; the errno, or 0 when the call succeeded.
    fn in_child(call: impl Fn() -> libc::c_long) -> i32 {
        in_child_with(false, true, call)
    }

    /// `in_child` under the filters for `network` and `namespace`.
    fn in_child_with(network: bool, namespace: bool, call: impl Fn() -> libc::c_long) -> i32 {
        let filter = Filter::confined(network, namespace).unwrap();
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
    fn no_user_namespace_can_be_made_under_the_filter_network_or_not() {
        for network in [false, true] {
            // SAFETY: unshare with flags only, in the forked child.
            let unshare = || libc::c_long::from(unsafe { libc::unshare(libc::CLONE_NEWUSER) });
            assert_eq!(in_child_with(network, true, unshare), libc::EACCES);
            // SAFETY: clone3 with a null argument: the filter answers
            // before the kernel reads it.
            let clone3 = || unsafe { libc::syscall(libc::SYS_clone3, 0usize, 0usize) };
            assert_eq!(in_child_with(network, true, clone3), libc::ENOSYS);
        }
        // Other namespaces and plain forks are not the filter's business.
        // SAFETY: unshare with flags only, in the forked child.
        let mount_ns = || libc::c_long::from(unsafe { libc::unshare(libc::CLONE_NEWNS) });
        assert_ne!(in_child(mount_ns), libc::EACCES);
    }

    #[test]
    fn with_the_network_on_sockets_are_left_alone() {
        // SAFETY: socket(2) with plain integers.
        let udp =
            || libc::c_long::from(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) });
        assert_eq!(in_child_with(true, true, udp), 0);
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

    /// Makes a private System V object of each kind and removes it; the
    /// first errno, or 0.
    fn system_v_objects() -> libc::c_long {
        let private = 0o600 | libc::IPC_CREAT;
        // SAFETY: System V calls with integers; IPC_RMID reads no buffer.
        unsafe {
            let shm = libc::shmget(libc::IPC_PRIVATE, 64, private);
            if shm < 0 {
                return -1;
            }
            libc::shmctl(shm, libc::IPC_RMID, std::ptr::null_mut());
            let msg = libc::msgget(libc::IPC_PRIVATE, private);
            if msg < 0 {
                return -1;
            }
            libc::msgctl(msg, libc::IPC_RMID, std::ptr::null_mut());
            let sem = libc::semget(libc::IPC_PRIVATE, 1, private);
            if sem < 0 {
                return -1;
            }
            libc::semctl(sem, 0, libc::IPC_RMID);
        }
        0
    }

    #[test]
    fn system_v_ipc_is_refused_unless_the_command_has_an_ipc_namespace_of_its_own() {
        for network in [false, true] {
            assert_eq!(in_child_with(network, false, system_v_objects), libc::EACCES);
            assert_eq!(in_child_with(network, true, system_v_objects), 0);
        }
    }

    #[test]
    fn posix_message_queues_are_refused_namespace_or_not() {
        // The system call takes the name without glibc's leading slash.
        let name = c"ikigai-tools-unit-test-no-such-queue";
        // SAFETY: mq_open with a C string, flags and a null attribute.
        let open = || unsafe {
            libc::syscall(libc::SYS_mq_open, name.as_ptr(), libc::O_RDONLY, 0, 0usize)
        };
        assert_eq!(open(), -1);
        assert_eq!(io::Error::last_os_error().raw_os_error(), Some(libc::ENOENT));
        for (network, namespace) in [(false, false), (false, true), (true, false), (true, true)] {
            assert_eq!(in_child_with(network, namespace, open), libc::EACCES);
            // SAFETY: mq_timedreceive on a descriptor that is no queue: the
            // filter answers first, else the kernel says EBADF.
            let receive = || unsafe {
                libc::syscall(libc::SYS_mq_timedreceive, 0, 0usize, 0usize, 0usize, 0usize)
            };
            assert_eq!(in_child_with(network, namespace, receive), libc::EACCES);
        }
    }
}
