//! Starting the shell: `/bin/sh -c COMMAND` with stdout and stderr on one
//! pipe (so `output` keeps the order things were written in), stdin from
//! /dev/null, in a session of its own (no controlling terminal: nothing can
//! prompt on /dev/tty), and killed if the tool dies (parent-death signal).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use nix::fcntl::OFlag;

pub const SHELL: &str = "/bin/sh";

/// The output pipe's size: 1 MiB, the most an unprivileged process may ask
/// for by default (`/proc/sys/fs/pipe-max-size`), which is also what the
/// last sweep of the pipe reads (`supervise`).
const PIPE_SIZE: libc::c_int = 1024 * 1024;

/// What a pager or a credential prompt would wait for, the command cannot
/// give: no terminal, no input.
const ENV: [(&str, &str); 3] =
    [("PAGER", "cat"), ("GIT_PAGER", "cat"), ("GIT_TERMINAL_PROMPT", "0")];

/// Starts `shell_path -c command`; the child and the read end of its
/// output pipe.
pub fn spawn(shell_path: &str, command: &str) -> io::Result<(Child, File)> {
    let (read_end, write_end) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    // A larger pipe: a command that prints a lot is woken and waited for
    // sixteen times less often. Refused past the user's pipe quota, which
    // only leaves the default size.
    let _ = nix::fcntl::fcntl(read_end.as_raw_fd(), nix::fcntl::FcntlArg::F_SETPIPE_SZ(PIPE_SIZE));
    let stderr_end = write_end.try_clone()?;
    let parent = std::process::id();
    let mut cmd = Command::new(shell_path);
    cmd.arg0("sh") // dash names itself after argv[0]: "sh: 1: x: not found"
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::from(write_end))
        .stderr(Stdio::from(stderr_end))
        .envs(ENV);
    // SAFETY: `in_child` only makes async-signal-safe system calls.
    unsafe {
        cmd.pre_exec(move || in_child(parent));
    }
    let child = cmd.spawn()?;
    // `cmd` holds our copies of the write end; once they are closed, end of
    // file on the pipe means every process of the command has let go of it.
    drop(cmd);
    Ok((child, File::from(read_end)))
}

/// Runs in the forked child before exec.
fn in_child(parent: u32) -> io::Result<()> {
    // SAFETY: plain system calls on the child's own state.
    unsafe {
        // A new session and process group: no controlling terminal, and one
        // group the tool can signal as a whole.
        if libc::setsid() == -1 {
            return Err(io::Error::last_os_error());
        }
        // If the tool is killed outright (SIGKILL), the shell goes with it.
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) == -1 {
            return Err(io::Error::last_os_error());
        }
        // The tool died between fork and prctl: nobody will read the output.
        if libc::getppid() as u32 != parent {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        // Rust ignores SIGPIPE and the tool blocks the signals it watches;
        // the command starts as any program would (`yes | head -1` ends).
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        if libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut()) == -1 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
