//! Running tool processes as a host does, several at once: each in its own
//! process group, stdin written then closed (or kept open, or `/dev/null`),
//! stdout and stderr read concurrently into bounded buffers, and a time limit
//! after which the whole group is stopped (SIGTERM, then SIGKILL).
//!
//! One thread drives every process with `poll`, so fifty tools that hang
//! cost one time limit, not fifty, and nothing is left blocked in a reader
//! thread when a process that escaped its group still holds a pipe.

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::poll::{poll, PollFd, PollFlags};
use nix::sys::signal::{killpg, Signal};
use nix::sys::wait::{waitid, waitpid, Id, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

use crate::limit::Bounded;

/// How long a process told to stop (SIGTERM) may take to clean up before
/// its group is killed outright. The bash tool uses it to kill the command
/// it started in a session of its own.
pub const STOP_GRACE: Duration = Duration::from_millis(250);

/// How long the output of a process that has exited is still read while
/// something it left behind holds the pipes open.
pub const DRAIN_GRACE: Duration = Duration::from_millis(250);

/// How often processes whose pipes are closed are checked for their exit.
const TICK: Duration = Duration::from_millis(10);

/// What the process gets on its stdin.
#[derive(Debug, Clone)]
pub enum Input {
    /// `/dev/null`: EOF at once.
    Null,
    /// These bytes, then EOF.
    Bytes(Vec<u8>),
    /// A pipe that stays open and empty until the run is over: a process
    /// that reads stdin waits, as it would on a host's terminal.
    HeldOpen,
}

/// One process to run.
#[derive(Debug, Clone)]
pub struct Job {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub input: Input,
    /// From the spawn to the SIGTERM.
    pub timeout: Duration,
    /// Bytes kept of stdout and of stderr each (head and tail, see
    /// [`Bounded`]); `None` keeps everything.
    pub capture_limit: Option<usize>,
}

/// How a run ended.
#[derive(Debug)]
pub enum Status {
    Exited(i32),
    /// Killed by this signal, not by us.
    Signaled(i32),
    /// Still running at the time limit: its group was stopped.
    TimedOut,
    /// The process could not be started (not executable, not found …).
    NotStarted(io::Error),
}

/// What a process printed on one stream.
#[derive(Debug, Default)]
pub struct Captured {
    /// The bytes kept; past the capture limit, head and tail with a marker
    /// line between them.
    pub bytes: Vec<u8>,
    /// Bytes printed but not kept.
    pub omitted: u64,
}

impl Captured {
    fn from(bounded: Bounded) -> Captured {
        let omitted = bounded.omitted();
        Captured { bytes: bounded.finish(), omitted }
    }

    /// The bytes as text (invalid UTF-8 becomes U+FFFD).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

#[derive(Debug)]
pub struct Finished {
    pub status: Status,
    pub stdout: Captured,
    pub stderr: Captured,
}

/// Runs every job at once and returns their ends in the same order.
pub fn run_all(jobs: Vec<Job>) -> Vec<Finished> {
    if jobs.len() > 64 {
        raise_fd_limit();
    }
    let mut running: Vec<Running> = jobs.into_iter().map(Running::start).collect();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let now = Instant::now();
        for job in running.iter_mut() {
            job.advance(now);
        }
        if running.iter().all(|j| j.outcome.is_some()) {
            break;
        }
        let events = wait_for_events(&running);
        for (index, stream, revents) in events {
            running[index].handle(stream, revents, &mut buf);
        }
    }
    running.into_iter().map(Running::finish).collect()
}

/// Runs one job.
pub fn run(job: Job) -> Finished {
    run_all(vec![job]).pop().unwrap_or_else(|| Finished {
        status: Status::NotStarted(io::Error::other("no process was run")),
        stdout: Captured::default(),
        stderr: Captured::default(),
    })
}

#[derive(Clone, Copy, Debug)]
enum Stream {
    Stdin,
    Stdout,
    Stderr,
}

struct Running {
    pid: Option<Pid>,
    stdin: Option<ChildStdin>,
    /// What is still to be written to stdin.
    pending: Vec<u8>,
    written: usize,
    /// Keep stdin open (and unwritten) until the end.
    hold_stdin: bool,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    out: Bounded,
    err: Bounded,
    deadline: Instant,
    /// When the process was found to have exited (and was reaped).
    exited_at: Option<Instant>,
    /// When the group was sent SIGTERM.
    stopping_since: Option<Instant>,
    /// Set when the job is over.
    outcome: Option<Status>,
    exit: Option<Status>,
}

impl Running {
    fn start(job: Job) -> Running {
        let deadline = Instant::now() + job.timeout;
        let mut running = Running {
            pid: None,
            stdin: None,
            pending: Vec::new(),
            written: 0,
            hold_stdin: false,
            stdout: None,
            stderr: None,
            out: Bounded::new(job.capture_limit),
            err: Bounded::new(job.capture_limit),
            deadline,
            exited_at: None,
            stopping_since: None,
            outcome: None,
            exit: None,
        };
        let mut command = Command::new(&job.program);
        command
            .args(&job.args)
            .stdin(match job.input {
                Input::Null => Stdio::null(),
                Input::Bytes(_) | Input::HeldOpen => Stdio::piped(),
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group, so that a timeout reaches whatever
            // the tool started too.
            .process_group(0);
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                running.outcome = Some(Status::NotStarted(e));
                return running;
            }
        };
        running.pid = i32::try_from(child.id()).ok().map(Pid::from_raw);
        running.stdout = child.stdout.take();
        running.stderr = child.stderr.take();
        running.stdin = child.stdin.take();
        match job.input {
            Input::Null => {}
            Input::HeldOpen => running.hold_stdin = true,
            Input::Bytes(bytes) => {
                running.pending = bytes;
                if let Some(stdin) = &running.stdin {
                    // Written as the pipe takes it, never blocking the loop.
                    let _ = fcntl(stdin.as_raw_fd(), FcntlArg::F_SETFL(OFlag::O_NONBLOCK));
                }
                if running.pending.is_empty() {
                    running.stdin = None;
                }
            }
        }
        if running.pid.is_none() {
            // A pid beyond i32 cannot happen on Unix; refuse rather than
            // lose track of a process.
            let _ = child.kill();
            let _ = child.wait();
            running.outcome = Some(Status::NotStarted(io::Error::other("process id out of range")));
        }
        running
    }

    fn pipes_open(&self) -> bool {
        self.stdout.is_some() || self.stderr.is_some()
    }

    /// Moves the job on: notices its exit, enforces the time limit and the
    /// grace periods.
    fn advance(&mut self, now: Instant) {
        let Some(pid) = self.pid else { return };
        if self.outcome.is_some() {
            return;
        }
        if let Some(since) = self.stopping_since {
            // Stopping: do not reap before the final SIGKILL, so that the
            // group id cannot be reused by then.
            let gone = matches!(
                waitid(Id::Pid(pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT),
                Ok(status) if status != WaitStatus::StillAlive
            );
            if gone || now >= since + STOP_GRACE {
                let _ = killpg(pid, Signal::SIGKILL);
                let _ = waitpid(pid, None);
                self.close_all();
                self.outcome = Some(Status::TimedOut);
            }
            return;
        }
        if self.exit.is_none() {
            match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::Exited(_, code)) => self.exit = Some(Status::Exited(code)),
                Ok(WaitStatus::Signaled(_, signal, _)) => {
                    self.exit = Some(Status::Signaled(signal as i32))
                }
                Ok(_) => {}
                Err(Errno::EINTR) => {}
                // ECHILD: the process is gone and cannot be waited for.
                Err(_) => self.exit = Some(Status::Exited(-1)),
            }
            if self.exit.is_some() {
                self.exited_at = Some(now);
            }
        }
        match self.exited_at {
            // Exited: what it printed is in the pipes already; read it, but
            // do not wait long for what it left behind.
            Some(at) if !self.pipes_open() || now >= at + DRAIN_GRACE => {
                self.close_all();
                self.outcome = self.exit.take();
            }
            Some(_) => {}
            None if now >= self.deadline => {
                let _ = killpg(pid, Signal::SIGTERM);
                self.stdin = None;
                self.stopping_since = Some(now);
            }
            None => {}
        }
    }

    fn close_all(&mut self) {
        self.stdin = None;
        self.stdout = None;
        self.stderr = None;
    }

    fn handle(&mut self, stream: Stream, revents: PollFlags, buf: &mut [u8]) {
        match stream {
            Stream::Stdin => self.write_stdin(revents),
            Stream::Stdout => {
                if let Some(pipe) = self.stdout.as_mut() {
                    if !read_into(pipe, &mut self.out, buf) {
                        self.stdout = None;
                    }
                }
            }
            Stream::Stderr => {
                if let Some(pipe) = self.stderr.as_mut() {
                    if !read_into(pipe, &mut self.err, buf) {
                        self.stderr = None;
                    }
                }
            }
        }
    }

    fn write_stdin(&mut self, revents: PollFlags) {
        let Some(pipe) = self.stdin.as_mut() else { return };
        if revents.intersects(PollFlags::POLLERR | PollFlags::POLLHUP | PollFlags::POLLNVAL) {
            // The tool closed its stdin: it does not want the rest.
            self.stdin = None;
            return;
        }
        match pipe.write(&self.pending[self.written..]) {
            Ok(n) => self.written += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => self.stdin = None,
        }
        if self.written >= self.pending.len() {
            // All written: close, so that the tool sees EOF.
            self.stdin = None;
        }
    }

    fn finish(self) -> Finished {
        Finished {
            status: self
                .outcome
                .unwrap_or_else(|| Status::NotStarted(io::Error::other("the run did not end"))),
            stdout: Captured::from(self.out),
            stderr: Captured::from(self.err),
        }
    }
}

/// Reads once from a pipe that poll said is ready; false at EOF or on error.
fn read_into(pipe: &mut impl Read, into: &mut Bounded, buf: &mut [u8]) -> bool {
    match pipe.read(buf) {
        Ok(0) => false,
        Ok(n) => {
            into.push(&buf[..n]);
            true
        }
        Err(e) if e.kind() == io::ErrorKind::Interrupted => true,
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => true,
        Err(_) => false,
    }
}

/// Polls every open pipe of the jobs still going, for at most one tick, and
/// returns the ready ones.
fn wait_for_events(jobs: &[Running]) -> Vec<(usize, Stream, PollFlags)> {
    let mut fds: Vec<PollFd> = Vec::new();
    let mut owners: Vec<(usize, Stream)> = Vec::new();
    let mut wait = Duration::from_secs(1);
    for (index, job) in jobs.iter().enumerate() {
        if job.outcome.is_some() {
            continue;
        }
        // Exits, deadlines and grace periods are noticed by `advance`, not
        // by any fd: wake up every tick while a job is going.
        wait = wait.min(TICK);
        if let Some(stdin) = &job.stdin {
            if !job.hold_stdin {
                fds.push(PollFd::new(stdin.as_fd(), PollFlags::POLLOUT));
                owners.push((index, Stream::Stdin));
            }
        }
        if let Some(stdout) = &job.stdout {
            fds.push(PollFd::new(stdout.as_fd(), PollFlags::POLLIN));
            owners.push((index, Stream::Stdout));
        }
        if let Some(stderr) = &job.stderr {
            fds.push(PollFd::new(stderr.as_fd(), PollFlags::POLLIN));
            owners.push((index, Stream::Stderr));
        }
    }
    let millis = u16::try_from(wait.as_millis()).unwrap_or(u16::MAX);
    if fds.is_empty() {
        std::thread::sleep(Duration::from_millis(u64::from(millis)));
        return Vec::new();
    }
    match poll(&mut fds, millis) {
        Ok(n) if n > 0 => fds
            .iter()
            .zip(owners)
            .filter_map(|(fd, (index, stream))| {
                let revents = fd.revents().unwrap_or(PollFlags::empty());
                (!revents.is_empty()).then_some((index, stream, revents))
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Lifts the soft limit on open files to the hard one, so that scanning a
/// large directory does not run out of descriptors (three per tool).
fn raise_fd_limit() {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit only read and write the struct given.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, input: Input, timeout: Duration) -> Job {
        Job {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            input,
            timeout,
            capture_limit: Some(1024),
        }
    }

    #[test]
    fn stdin_is_written_then_closed_and_both_streams_are_captured() {
        let done = run(sh(
            "cat; echo oops >&2; exit 3",
            Input::Bytes(b"hi".to_vec()),
            Duration::from_secs(5),
        ));
        assert!(matches!(done.status, Status::Exited(3)), "{:?}", done.status);
        assert_eq!(done.stdout.bytes, b"hi");
        assert_eq!(done.stderr.bytes, b"oops\n");
    }

    #[test]
    fn held_stdin_never_ends() {
        let start = Instant::now();
        let done = run(sh("cat", Input::HeldOpen, Duration::from_millis(300)));
        assert!(matches!(done.status, Status::TimedOut), "{:?}", done.status);
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn input_larger_than_a_pipe_is_written_whole() {
        let input = vec![b'x'; 1 << 20];
        let done = run(Job {
            capture_limit: None,
            ..sh("wc -c", Input::Bytes(input), Duration::from_secs(10))
        });
        assert_eq!(done.stdout.text().trim(), "1048576");
    }

    #[test]
    fn output_past_the_limit_keeps_head_and_tail() {
        let done =
            run(sh("head -c 5000 /dev/zero | tr '\\0' a", Input::Null, Duration::from_secs(5)));
        assert_eq!(done.stdout.omitted, 5000 - 1024);
    }

    #[test]
    fn a_missing_program_is_not_started() {
        let done = run(Job {
            program: "/nonexistent/tool".into(),
            ..sh("", Input::Null, Duration::from_secs(1))
        });
        assert!(matches!(done.status, Status::NotStarted(_)));
    }

    #[test]
    fn a_signal_is_reported_as_such() {
        let done = run(sh("kill -SEGV $$", Input::Null, Duration::from_secs(5)));
        assert!(matches!(done.status, Status::Signaled(11)), "{:?}", done.status);
    }
}
