//! Running tool processes as a host does, several at once: each in its own
//! process group with a [`Guardian`], stdin written then closed (or kept
//! open, or `/dev/null`), stdout and stderr read concurrently into bounded
//! buffers, and a time limit after which the whole group is stopped
//! (SIGTERM, grace, SIGKILL, until it is gone).
//!
//! One thread drives every process with `poll`, so fifty tools that hang
//! cost one time limit, not fifty, and nothing is left blocked in a reader
//! thread when a process that escaped its group still holds a pipe.

use std::ffi::OsString;
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags};
use nix::sys::resource::{getrlimit, Resource};
use nix::sys::wait::{waitpid, WaitPidFlag};
use nix::unistd::Pid;

use super::group::{self, Group};
use super::guardian::{self, Guardian};
use super::pipes::{self, Drained};
use super::status::Exit;
use super::{DRAIN_AFTER_EXIT, QUIET_AFTER_EXIT, SETTLE_AFTER_KILL, STOP_GRACE, TICK};
use crate::limit::Bounded;

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

/// Runs every job and returns their ends in the same order: all at once
/// when the limit on open files allows it, else in batches of as many as it
/// does. A directory of 1,000 tools under `ulimit -n 1024` would otherwise
/// run out of descriptors halfway and have the rest not started.
pub fn run_all(jobs: Vec<Job>) -> Vec<Finished> {
    let at_once = runs_at_once();
    let mut finished = Vec::with_capacity(jobs.len());
    let mut jobs = jobs.into_iter().peekable();
    while jobs.peek().is_some() {
        finished.extend(run_at_once(jobs.by_ref().take(at_once).collect()));
    }
    finished
}

/// How many runs fit in the descriptors left: the soft limit on open files
/// less those open now and a reserve (a spawn opens a few more for a
/// moment), at four a run (the stdin, stdout and stderr pipes and the
/// guardian's line). At least one.
fn runs_at_once() -> usize {
    const PER_RUN: u64 = 4;
    const RESERVE: u64 = 16;
    let limit = getrlimit(Resource::RLIMIT_NOFILE).map_or(1024, |(soft, _)| soft);
    let open = std::fs::read_dir("/proc/self/fd").map_or(RESERVE, |d| d.count() as u64);
    let runs = limit.saturating_sub(open + RESERVE) / PER_RUN;
    usize::try_from(runs).unwrap_or(usize::MAX).max(1)
}

fn run_at_once(jobs: Vec<Job>) -> Vec<Finished> {
    let mut running: Vec<Running> = jobs.into_iter().map(Running::start).collect();
    let mut buf = vec![0u8; pipes::CHUNK];
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

/// A group being stopped, and what the job will have ended with.
struct Stopping {
    then: fn() -> Status,
    /// When SIGKILL was sent.
    killed_at: Option<Instant>,
    since: Instant,
}

struct Running {
    pid: Option<Pid>,
    guardian: Option<Guardian>,
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
    /// The leader has been reaped: its pid is no longer ours to wait for.
    reaped: bool,
    /// When the process was found to have exited, and the last time its
    /// pipes gave something.
    exited_at: Option<Instant>,
    last_read: Instant,
    stopping: Option<Stopping>,
    /// Set when the job is over.
    outcome: Option<Status>,
    exit: Option<Status>,
}

impl Running {
    fn start(job: Job) -> Running {
        let now = Instant::now();
        let mut running = Running {
            pid: None,
            guardian: None,
            stdin: None,
            pending: Vec::new(),
            written: 0,
            hold_stdin: false,
            stdout: None,
            stderr: None,
            out: Bounded::new(job.capture_limit),
            err: Bounded::new(job.capture_limit),
            deadline: now + job.timeout,
            reaped: false,
            exited_at: None,
            last_read: now,
            stopping: None,
            outcome: None,
            exit: None,
        };
        // The guardian first, so that it knows the group before any
        // process is in it: a host killed outright takes its tools along.
        let guardian = match Guardian::start() {
            Ok(guardian) => guardian,
            Err(e) => {
                running.outcome = Some(Status::NotStarted(e));
                return running;
            }
        };
        let line = guardian.line();
        let mut command = Command::new(&job.program);
        command
            .args(&job.args)
            .stdin(match job.input {
                Input::Null => Stdio::null(),
                Input::Bytes(_) | Input::HeldOpen => Stdio::piped(),
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: both steps only make async-signal-safe system calls.
        unsafe {
            command.pre_exec(move || {
                // Its own process group (in the host's session: a tool keeps
                // the host's terminal), so that a timeout reaches whatever
                // the tool started too.
                group::in_new_group()?;
                guardian::announce(line)
            });
        }
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                // Told of a group that never ran: nothing to kill.
                guardian.release();
                running.outcome = Some(Status::NotStarted(e));
                return running;
            }
        };
        running.guardian = Some(guardian);
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
                    pipes::set_nonblocking(stdin);
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

    /// Reaps the leader if it has exited; its status, once.
    fn reap(&mut self, pid: Pid) -> Option<Status> {
        if self.reaped {
            return None;
        }
        match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
            Ok(status) => {
                let exit = Exit::from_wait(status)?;
                self.reaped = true;
                Some(match exit {
                    Exit::Code(code) => Status::Exited(code),
                    Exit::Signal(sig) => Status::Signaled(sig),
                })
            }
            Err(Errno::EINTR) => None,
            // ECHILD: the process is gone and cannot be waited for.
            Err(_) => {
                self.reaped = true;
                Some(Status::Exited(-1))
            }
        }
    }

    /// Moves the job on: notices its exit, enforces the time limit, the
    /// grace periods.
    fn advance(&mut self, now: Instant) {
        let Some(pid) = self.pid else { return };
        if self.outcome.is_some() {
            return;
        }
        let group = Group::led_by(pid);
        if let Some(stopping) = &self.stopping {
            let (since, killed_at, then) = (stopping.since, stopping.killed_at, stopping.then);
            self.reap(pid);
            let gone = self.reaped && group.is_empty();
            match killed_at {
                None if !gone && now >= since + STOP_GRACE => {
                    group.kill();
                    if let Some(s) = self.stopping.as_mut() {
                        s.killed_at = Some(now);
                    }
                }
                Some(killed) if !gone && now < killed + SETTLE_AFTER_KILL => {}
                None if !gone => {}
                // Gone, or as gone as it will get: the guardian (dropped,
                // not released) kills whatever is left once more.
                _ => {
                    self.close_all();
                    self.guardian = None;
                    self.outcome = Some(then());
                }
            }
            return;
        }
        if self.exit.is_none() {
            self.exit = self.reap(pid);
            if self.exit.is_some() {
                self.exited_at = Some(now);
            }
        }
        match self.exited_at {
            // Exited: what it printed is in the pipes already; read it, but
            // do not wait long for what it left behind.
            Some(at) => {
                let quiet_since = self.last_read.max(at);
                let done = (at + DRAIN_AFTER_EXIT).min(quiet_since + QUIET_AFTER_EXIT);
                if !self.pipes_open() || now >= done {
                    self.sweep();
                    self.close_all();
                    // Ended by itself: what it left running stays running.
                    if let Some(guardian) = self.guardian.take() {
                        guardian.release();
                    }
                    self.outcome = self.exit.take();
                }
            }
            None if now >= self.deadline => {
                group.terminate();
                self.stdin = None;
                self.stopping =
                    Some(Stopping { then: || Status::TimedOut, killed_at: None, since: now });
            }
            None => {}
        }
    }

    /// What the pipes hold right now, before they are closed.
    fn sweep(&mut self) {
        let mut buf = vec![0u8; pipes::CHUNK];
        if let Some(pipe) = self.stdout.as_mut() {
            pipes::sweep(pipe, &mut self.out, &mut buf);
        }
        if let Some(pipe) = self.stderr.as_mut() {
            pipes::sweep(pipe, &mut self.err, &mut buf);
        }
    }

    fn close_all(&mut self) {
        self.stdin = None;
        self.stdout = None;
        self.stderr = None;
    }

    fn handle(&mut self, stream: Stream, revents: PollFlags, buf: &mut [u8]) {
        let (pipe, into) = match stream {
            Stream::Stdin => return self.write_stdin(revents),
            Stream::Stdout => (self.stdout.as_mut().map(|p| p as &mut dyn io::Read), &mut self.out),
            Stream::Stderr => (self.stderr.as_mut().map(|p| p as &mut dyn io::Read), &mut self.err),
        };
        let Some(pipe) = pipe else { return };
        match pipes::read_into(pipe, into, buf) {
            Drained::Bytes => self.last_read = Instant::now(),
            Drained::Nothing => {}
            Drained::Closed => match stream {
                Stream::Stdout => self.stdout = None,
                _ => self.stderr = None,
            },
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

/// Polls every open pipe of the jobs still going, for at most one tick, and
/// returns the ready ones.
fn wait_for_events(jobs: &[Running]) -> Vec<(usize, Stream, PollFlags)> {
    let mut fds: Vec<PollFd> = Vec::new();
    let mut owners: Vec<(usize, Stream)> = Vec::new();
    for (index, job) in jobs.iter().enumerate() {
        if job.outcome.is_some() {
            continue;
        }
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
    // Exits, deadlines and grace periods are noticed by `advance`, not by
    // any fd: wake up every tick while a job is going.
    if fds.is_empty() {
        std::thread::sleep(TICK);
        return Vec::new();
    }
    if !pipes::wait(&mut fds, TICK) {
        return Vec::new();
    }
    fds.iter()
        .zip(owners)
        .filter_map(|(fd, (index, stream))| {
            let revents = fd.revents().unwrap_or(PollFlags::empty());
            (!revents.is_empty()).then_some((index, stream, revents))
        })
        .collect()
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
