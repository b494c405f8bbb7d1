//! The namespaces bash runs in when the kernel allows them
//! (docs/CONFINEMENT.md): Landlock has no rule for chmod, chown, extended
//! attributes, ACLs, times or inode flags, so outside the roots the file
//! system is made read-only instead, as bubblewrap does; and System V IPC
//! names its objects by key and id, never by path, so Landlock does not see
//! it: the command gets an IPC namespace of its own instead:
//!
//! 1. a new user, mount and IPC namespace (`unshare`), the caller's uid and
//!    gid mapped to themselves (`setgroups` denied first, as the kernel asks
//!    of an unprivileged map). In its IPC namespace the command has System V
//!    shared memory, message queues and semaphores of its own, and none of
//!    the user's other processes'. No network namespace: it would isolate
//!    the abstract Unix socket names too, but costs about half a
//!    millisecond a call, past the budget of a confined call
//!    (docs/CONFINEMENT.md, "bash");
//! 2. propagation made private, so nothing here reaches the host's mounts;
//! 3. each root and the private temporary directory bound onto itself;
//! 4. the whole tree made read-only (`mount_setattr`, recursively), then
//!    each of those binds writable again;
//! 5. each bind checked by path against the directory the parent holds
//!    (device and inode): a directory swapped in under a root's name
//!    between the parent's open and the bind is refused;
//! 6. every capability dropped, the bounding set included: the namespace's
//!    uid 0 (a tool run as root) would otherwise keep them across exec and
//!    could clear the read-only flag again with `mount_setattr`, which no
//!    Landlock rule covers; mounts copied into a namespace the command
//!    makes itself (`unshare -Urm`) are locked read-only by the kernel;
//! 7. the working directory entered by path (a directory entered before the
//!    binds would sit on the read-only mount below them) and checked the
//!    same way.
//!
//! Writes to device nodes (`/dev/null`) still work on a read-only mount.
//!
//! Everything is prepared in the parent (paths as C strings, the map
//! lines, the identities); [`Plan::enter_in_child`] runs between fork and
//! exec and only makes system calls.
//!
//! Where the namespaces cannot be made at all (unshare refused: no user
//! namespaces, `user.max_user_namespaces=0`, a kernel without IPC
//! namespaces, the user's count of them used up; the map or the
//! first mount refused: Ubuntu's AppArmor restriction of unprivileged user
//! namespaces) the child says [`Failure::Unavailable`] and bash falls back
//! to Landlock and seccomp alone, the filter then refusing System V IPC
//! (`seccomp`); a failure once the tree is being changed is
//! [`Failure::Midway`] and fails the spawn.

use std::ffi::CString;
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::fstat;

use super::error::ConfineError;

/// A directory's identity: device and inode.
pub type Identity = (u64, u64);

/// The identity of an open directory.
pub fn identity(fd: BorrowedFd<'_>) -> Result<Identity, ConfineError> {
    let stat = fstat(fd)?;
    Ok((stat.st_dev, stat.st_ino))
}

/// A path as a C string, for the child.
pub fn c_path(path: &Path) -> Result<CString, ConfineError> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| ConfineError::BadRoot {
        root: path.display().to_string(),
        reason: "the path holds a NUL byte".to_owned(),
    })
}

/// What the child does, prepared in the parent.
#[derive(Debug)]
pub struct Plan {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// The directories left writable, with their identities.
    writable: Vec<(CString, Identity)>,
}

/// Why the namespace was not set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The kernel or its policy gives no namespace; nothing was changed
    /// that the command would see. The errno is the refusing call's.
    Unavailable(i32),
    /// A step after the namespace existed failed: the command must not run.
    Midway(i32),
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const AT_RECURSIVE: libc::c_uint = 0x8000;

/// `struct mount_attr` of `<linux/mount.h>`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

impl Plan {
    /// The plan for these writable directories (each with the descriptor
    /// the parent holds for it).
    pub fn prepare(writable: &[(&Path, BorrowedFd<'_>)]) -> Result<Plan, ConfineError> {
        let uid = rustix::process::geteuid().as_raw();
        let gid = rustix::process::getegid().as_raw();
        let mut dirs = Vec::with_capacity(writable.len());
        for (path, fd) in writable {
            dirs.push((c_path(path)?, identity(*fd)?));
        }
        Ok(Plan {
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            writable: dirs,
        })
    }

    /// Sets the namespace up in the calling process (a child between fork
    /// and exec). System calls only: nothing is allocated.
    pub fn enter_in_child(&self) -> Result<(), Failure> {
        use Failure::{Midway, Unavailable};
        // SAFETY: unshare with flags only; the child is single-threaded.
        if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWIPC) }
            != 0
        {
            return Err(Unavailable(errno()));
        }
        // A new user namespace resets the dumpable flag, which would make
        // /proc/self/* root's and the maps below unwritable.
        // SAFETY: prctl with integer arguments.
        unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) };
        write_file(c"/proc/self/setgroups", b"deny\n").map_err(Unavailable)?;
        write_file(c"/proc/self/uid_map", &self.uid_map).map_err(Unavailable)?;
        write_file(c"/proc/self/gid_map", &self.gid_map).map_err(Unavailable)?;
        // SAFETY: mount(2) with a static path and null pointers where the
        // kernel allows them (a propagation change reads neither).
        let private = unsafe {
            libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            )
        };
        if private != 0 {
            return Err(Unavailable(errno()));
        }
        for (path, _) in &self.writable {
            // SAFETY: two C strings owned by the plan; no data argument.
            let bound = unsafe {
                libc::mount(
                    path.as_ptr(),
                    path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                )
            };
            if bound != 0 {
                return Err(Midway(errno()));
            }
        }
        match set_attr(c"/", MOUNT_ATTR_RDONLY, 0, true) {
            Ok(()) => {}
            // mount_setattr is Linux 5.12: before it, nothing was changed.
            Err(libc::ENOSYS) => return Err(Unavailable(libc::ENOSYS)),
            Err(e) => return Err(Midway(e)),
        }
        for (path, id) in &self.writable {
            // A mount the host made read-only stays so (the kernel refuses
            // to clear a flag it locked in a less privileged namespace):
            // then only the bind itself is made writable, and if it is that
            // mount, it stays read-only, as it was to the command before.
            match set_attr(path, 0, MOUNT_ATTR_RDONLY, true) {
                Ok(()) => {}
                Err(libc::EPERM) => match set_attr(path, 0, MOUNT_ATTR_RDONLY, false) {
                    Ok(()) | Err(libc::EPERM) => {}
                    Err(e) => return Err(Midway(e)),
                },
                Err(e) => return Err(Midway(e)),
            }
            check_identity(path, *id).map_err(Midway)?;
        }
        drop_capabilities().map_err(Midway)
    }
}

/// Enters `path` and checks that it is the directory `id` names; for the
/// child, after the namespace is set up.
pub fn enter_dir_in_child(path: &CString, id: Identity) -> Result<(), i32> {
    // SAFETY: a C string owned by the caller.
    if unsafe { libc::chdir(path.as_ptr()) } != 0 {
        return Err(errno());
    }
    check_identity(c".", id)
}

/// Whether `path` (not followed if a link) is the directory `id` names;
/// EXDEV when it is another.
fn check_identity(path: &std::ffi::CStr, id: Identity) -> Result<(), i32> {
    // SAFETY: an all-zero `stat` is a valid value to be overwritten.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a C string and a `stat` owned by this frame.
    if unsafe { libc::fstatat(libc::AT_FDCWD, path.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) }
        != 0
    {
        return Err(errno());
    }
    if (st.st_dev, st.st_ino) == id {
        Ok(())
    } else {
        Err(libc::EXDEV)
    }
}

fn set_attr(path: &std::ffi::CStr, set: u64, clear: u64, recursive: bool) -> Result<(), i32> {
    let attr = MountAttr { attr_set: set, attr_clr: clear, propagation: 0, userns_fd: 0 };
    let flags = if recursive { AT_RECURSIVE } else { 0 };
    // SAFETY: a C string and a `mount_attr` owned by this frame, with its
    // size; the kernel only reads them.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}

/// Writes `data` to the file at `path` in one write.
fn write_file(path: &std::ffi::CStr, data: &[u8]) -> Result<(), i32> {
    // SAFETY: a static C string; the descriptor is closed below.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: `data` is valid for its length; `fd` is ours.
    let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
    let result = if n == data.len() as isize { Ok(()) } else { Err(errno()) };
    // SAFETY: closing the descriptor opened above.
    unsafe { libc::close(fd) };
    result
}

/// Drops every capability: the bounding set (so that an exec as the
/// namespace's uid 0 gains none), the ambient set, and the effective,
/// permitted and inheritable sets.
fn drop_capabilities() -> Result<(), i32> {
    for cap in 0..64 {
        // SAFETY: prctl with integer arguments.
        if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } != 0 {
            match errno() {
                // Past the kernel's last capability.
                libc::EINVAL => break,
                e => return Err(e),
            }
        }
    }
    // SAFETY: prctl with integer arguments.
    if unsafe { libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) } != 0 {
        return Err(errno());
    }
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    let mut header = Header { version: LINUX_CAPABILITY_VERSION_3, pid: 0 };
    let data = [Data { effective: 0, permitted: 0, inheritable: 0 }; 2];
    // SAFETY: a version-3 header and its two data words, owned here.
    let r = unsafe { libc::syscall(libc::SYS_capset, &mut header as *mut Header, data.as_ptr()) };
    if r == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}
