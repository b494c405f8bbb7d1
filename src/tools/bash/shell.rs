//! Starting the shell: `/bin/sh -c COMMAND` with stdout and stderr on one
//! pipe (so `output` keeps the order things were written in), stdin from
//! /dev/null, in a session of its own (no controlling terminal: nothing can
//! prompt on /dev/tty), killed if the tool dies (parent-death signal), and
//! announced to the tool's guardian, which kills the whole group if the
//! tool is killed outright.

use std::fs::File;
use std::io;
use std::os::fd::RawFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use nix::fcntl::OFlag;
use nix::unistd::Pid;

use crate::confine::Sandbox;
use crate::process::{group, guardian, pipes};

pub const SHELL: &str = "/bin/sh";

/// What a pager or a credential prompt would wait for, the command cannot
/// give: no terminal, no input.
const ENV: [(&str, &str); 3] =
    [("PAGER", "cat"), ("GIT_PAGER", "cat"), ("GIT_TERMINAL_PROMPT", "0")];

/// What confines a command when allowed roots are set: the Landlock
/// ruleset, applied last in the child, and the directory it starts in.
pub struct Confinement {
    pub sandbox: Sandbox,
    pub cwd: PathBuf,
}

/// Starts `shell_path -c command`, announced on the guardian's `line`,
/// confined when `confinement` says so; the child and the read end of its
/// output pipe.
pub fn spawn(
    shell_path: &str,
    command: &str,
    line: RawFd,
    confinement: Option<Confinement>,
) -> io::Result<(Child, File)> {
    let (read_end, write_end) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    pipes::enlarge(&read_end);
    let stderr_end = write_end.try_clone()?;
    let parent = nix::unistd::getpid();
    let mut cmd = Command::new(shell_path);
    cmd.arg0("sh") // dash names itself after argv[0]: "sh: 1: x: not found"
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::from(write_end))
        .stderr(Stdio::from(stderr_end))
        .envs(ENV);
    let mut sandbox = confinement.map(|Confinement { sandbox, cwd }| {
        cmd.current_dir(cwd);
        sandbox
    });
    // SAFETY: `in_child` and `restrict_in_child` only make async-signal-safe
    // system calls (the ruleset was built in the parent).
    unsafe {
        cmd.pre_exec(move || {
            in_child(parent, line)?;
            // Last, so that nothing after it needs what it forbids. If it
            // fails, the spawn fails: the command never runs unconfined.
            match sandbox.as_mut() {
                Some(sandbox) => sandbox.restrict_in_child(),
                None => Ok(()),
            }
        });
    }
    let child = cmd.spawn()?;
    // `cmd` holds our copies of the write end; once they are closed, end of
    // file on the pipe means every process of the command has let go of it.
    drop(cmd);
    Ok((child, File::from(read_end)))
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
    group::in_default_signals()
}
