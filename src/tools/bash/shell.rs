//! Starting the shell: `/bin/sh -c COMMAND` with stdout and stderr on one
//! pipe (so `output` keeps the order things were written in), stdin from
//! /dev/null, in a session of its own (no controlling terminal: nothing can
//! prompt on /dev/tty), killed if the tool dies (parent-death signal), and
//! announced to the tool's guardian, which kills the whole group if the
//! tool is killed outright. Only descriptors 0, 1 and 2 reach the shell,
//! confined or not (docs/CONFINEMENT.md; docs/TOOLS.md).
//!
//! Confined, the child then applies what `confine::sandbox` prepared in
//! the parent (namespaces, working directory, Landlock, seccomp), last.
//!
//! A job started with `run_in_background` reads a pipe instead of
//! /dev/null, and one started with `tty` runs on a pseudo-terminal
//! (`process::pty`), its controlling terminal (docs/TOOLS.md, "Talking to a
//! job"); the job's supervisor holds the other end.

use std::fs::File;
use std::io;
use std::os::fd::{OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use nix::fcntl::OFlag;
use nix::unistd::Pid;

use crate::confine::sandbox::Prepared;
use crate::process::pty::{self, Pty};
use crate::process::{group, guardian, pipes};

pub const SHELL: &str = "/bin/sh";

/// What a pager, a credential prompt or an editor would wait for, the
/// command cannot give: no terminal, no input (docs/TOOLS.md, "bash").
/// Set over the host's own values: an editor the user chose still has no
/// terminal here, and would hold the call to its timeout.
const ENV: [(&str, &str); 7] = [
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_EDITOR", NO_EDITOR),
    ("GIT_SEQUENCE_EDITOR", NO_EDITOR),
    ("EDITOR", NO_EDITOR),
    ("VISUAL", NO_EDITOR),
];

/// The editor: a shell command (git and most programs run the variable
/// through `sh -c`, appending the file) that says why on stderr and fails
/// at once; `; :` swallows the file appended. A program that executes the
/// value as a file name fails at once too (no such file), naming it.
const NO_EDITOR: &str = "echo 'ikigai-tools: no editor here (no terminal): put the text in the \
                         command (git commit -m MSG) or set EDITOR/GIT_SEQUENCE_EDITOR to a \
                         command that edits the file' >&2; exit 1; :";

/// The terminal type a `tty` command sees: one every program knows, whose
/// escapes the job's output removes (docs/TOOLS.md, "Talking to a job").
const TTY_TERM: &str = "xterm";

/// What the command reads and where it writes (docs/TOOLS.md, "Talking to
/// a job").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// stdin from /dev/null, stdout and stderr on one pipe: a call, and a
    /// job started in the foreground.
    Null,
    /// stdin from a pipe whose write end the job's supervisor keeps: a job
    /// started with `run_in_background`.
    Pipe,
    /// stdin, stdout and stderr on a pseudo-terminal, its controlling
    /// terminal: `tty`.
    Tty,
}

/// A shell started: the child, where its output is read, and where its
/// input is written (none for [`Input::Null`]).
pub struct Spawned {
    pub child: Child,
    pub output: File,
    pub input: Option<OwnedFd>,
}

/// Starts `shell_path -c command`, announced on the guardian's `line`,
/// confined when `confinement` says so (else in `workdir`, when given),
/// reading and writing as `input` says.
pub fn spawn(
    shell_path: &str,
    command: &str,
    line: RawFd,
    confinement: Option<Prepared>,
    workdir: Option<&std::path::Path>,
    input: Input,
) -> io::Result<Spawned> {
    let parent = nix::unistd::getpid();
    let mut cmd = Command::new(shell_path);
    cmd.arg0("sh") // dash names itself after argv[0]: "sh: 1: x: not found"
        .arg("-c")
        .arg(command)
        .envs(ENV);
    let (output, input_end) = match input {
        Input::Tty => {
            let Pty { master, slave } = Pty::open()?;
            cmd.stdin(Stdio::from(slave.try_clone()?))
                .stdout(Stdio::from(slave.try_clone()?))
                .stderr(Stdio::from(slave))
                .env("TERM", TTY_TERM);
            let input_end = master.try_clone()?;
            (master, Some(input_end))
        }
        Input::Null | Input::Pipe => {
            let (read_end, write_end) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
            pipes::enlarge(&read_end);
            let stderr_end = write_end.try_clone()?;
            cmd.stdout(Stdio::from(write_end)).stderr(Stdio::from(stderr_end));
            let input_end = if input == Input::Pipe {
                let (stdin_read, stdin_write) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
                cmd.stdin(Stdio::from(stdin_read));
                Some(stdin_write)
            } else {
                cmd.stdin(Stdio::null());
                None
            };
            (read_end, input_end)
        }
    };
    let tty = input == Input::Tty;
    let mut confinement = confinement;
    match (&confinement, workdir) {
        // The private temporary directory, kept across calls.
        (Some(c), _) => {
            cmd.env("TMPDIR", c.temp_dir());
        }
        (None, Some(dir)) => {
            cmd.current_dir(dir);
        }
        (None, None) => {}
    }
    // SAFETY: `in_child` and `apply_in_child` only make async-signal-safe
    // system calls (everything was built in the parent).
    unsafe {
        cmd.pre_exec(move || {
            in_child(parent, line)?;
            if tty {
                pty::in_take_as_controlling()?;
            }
            // Last, so that nothing after it needs what it forbids. If it
            // fails, the spawn fails: the command never runs unconfined.
            match confinement.as_mut() {
                Some(confinement) => confinement.apply_in_child(parent),
                None => Ok(()),
            }
        });
    }
    let child = cmd.spawn()?;
    // `cmd` holds our copies of the write end (or the slave); once they are
    // closed, end of file (EIO on a terminal) means every process of the
    // command has let go of it.
    drop(cmd);
    Ok(Spawned { child, output: File::from(output), input: input_end })
}

/// Runs in the forked child before exec.
fn in_child(parent: Pid, line: RawFd) -> io::Result<()> {
    // A new session and process group: no controlling terminal, and one
    // group the tool (and its guardian) can signal as a whole.
    group::in_new_session()?;
    // Before anything can join the group, the guardian knows it.
    guardian::announce(line)?;
    // If the tool is killed outright (SIGKILL), the shell goes with it.
    group::in_die_with_parent(parent)?;
    // The command starts with signals as any program would.
    group::in_default_signals()?;
    // Only stdin, stdout and stderr reach the command: a descriptor the
    // host left open without close-on-exec (`exec 3>>log`) would let it
    // write where Landlock never looks (it checks opens, not open files).
    only_stdio()
}

/// Marks every descriptor above 2 close-on-exec (`close_range`, Linux
/// 5.11); on older kernels, one by one below the limit on open files (at
/// most 65,536).
fn only_stdio() -> io::Result<()> {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: changes descriptor flags only.
    let r = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) };
    if r == 0 {
        return Ok(());
    }
    let mut limit = libc::rlimit { rlim_cur: 65_536, rlim_max: 65_536 };
    // SAFETY: getrlimit writes the `rlimit` owned by this frame.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    let last = libc::c_int::try_from(limit.rlim_cur.min(65_536)).unwrap_or(65_536);
    for fd in 3..last {
        // SAFETY: setting FD_CLOEXEC; EBADF for descriptors not open.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    Ok(())
}
