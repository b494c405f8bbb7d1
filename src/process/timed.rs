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
use super::{drain_deadline, SETTLE_AFTER_KILL, STOP_GRACE, TICK};
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
pub struct TimedRun {
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

/// Runs every one and returns their ends in the same order: all at once
/// when the limit on open files allows it, else in batches of as many as it
/// does. A directory of 1,000 tools under `ulimit -n 1024` would otherwise
/// run out of descriptors halfway and have the rest not started.
pub fn run_all(runs: Vec<TimedRun>) -> Vec<Finished> {
    let at_once = runs_at_once();
    let mut finished = Vec::with_capacity(runs.len());
    let mut runs = runs.into_iter().peekable();
    while runs.peek().is_some() {
        finished.extend(run_at_once(runs.by_ref().take(at_once).collect()));
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

fn run_at_once(runs: Vec<TimedRun>) -> Vec<Finished> {
    let mut running: Vec<Running> = runs.into_iter().map(Running::start).collect();
    let mut buf = vec![0u8; pipes::CHUNK];
    loop {
        let now = Instant::now();
        for run in running.iter_mut() {
            run.advance(now);
        }
        if running.iter().all(Running::is_done) {
            break;
        }
        let events = wait_for_events(&running);
        for (index, stream, revents) in events {
            running[index].handle(stream, revents, &mut buf);
        }
    }
    running.into_iter().map(Running::finish).collect()
}

/// Runs one process.
pub fn run(run: TimedRun) -> Finished {
    run_all(vec![run]).pop().unwrap_or_else(|| Finished {
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

/// One run from its start to its end: what it printed, and the phase it
/// is in.
struct Running {
    out: Bounded,
    err: Bounded,
    /// From the start to the SIGTERM.
    deadline: Instant,
    phase: Phase,
}

/// Where a run stands. Each phase holds what it needs and no more: the
/// process only while it may still be running or print, an exit status
/// only once the leader has been reaped, the status the run ends with only
/// once it is over.
enum Phase {
    /// Started, and not seen to end: waited for until the time limit.
    Running(Process),
    /// The leader has exited (or cannot be waited for): what it printed is
    /// in the pipes already; they are read, but not for long, for what it
    /// left behind (`drain_deadline`).
    Exited { process: Process, status: Status, at: Instant },
    /// Its group is being stopped: SIGTERM, the grace, SIGKILL, until it is
    /// gone.
    Stopping { process: Process, stop: Stop },
    /// Over, or never started.
    Done(Status),
}

/// A started process: its group's leader and the pipes to it.
struct Process {
    pid: Pid,
    stdin: Stdin,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    /// The last time its pipes gave something.
    last_read: Instant,
    /// Kills the group if the host dies outright; released when the
    /// process ends by itself, dropped (killing what is left) when it is
    /// stopped. Last, so that it goes after the pipes.
    guardian: Guardian,
}

/// What the process gets on its stdin, from here on.
enum Stdin {
    /// Closed (all written, refused, or stopping), or never a pipe.
    Closed,
    /// Written as the pipe takes it, never blocking the loop; closed once
    /// all is written, so that the process sees EOF.
    Writing { pipe: ChildStdin, bytes: Vec<u8>, written: usize },
    /// Kept open, and unwritten, until the end (held to be closed then).
    Held(#[allow(dead_code)] ChildStdin),
}

/// A group being stopped at the time limit: the run ends `TimedOut`.
struct Stop {
    since: Instant,
    /// When SIGKILL was sent.
    killed_at: Option<Instant>,
    /// The leader has been reaped: its pid is no longer ours to wait for.
    reaped: bool,
}

impl Running {
    fn start(run: TimedRun) -> Running {
        let now = Instant::now();
        let phase = match Process::start(run.program, run.args, run.input, now) {
            Ok(process) => Phase::Running(process),
            Err(e) => Phase::Done(Status::NotStarted(e)),
        };
        Running {
            out: Bounded::new(run.capture_limit),
            err: Bounded::new(run.capture_limit),
            deadline: now + run.timeout,
            phase,
        }
    }

    fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Done(_))
    }

    /// Moves the run on: notices its exit, enforces the time limit and the
    /// grace periods.
    fn advance(&mut self, now: Instant) {
        if self.is_done() {
            return;
        }
        // Only for as long as the next phase is worked out.
        let placeholder = Phase::Done(Status::Exited(-1));
        self.phase = match std::mem::replace(&mut self.phase, placeholder) {
            Phase::Stopping { process, stop } => stop.advance(process, now),
            Phase::Running(process) => match reap(process.pid) {
                Some(status) => self.drain(process, status, now, now),
                None if now >= self.deadline => Stop::start(process, now),
                None => Phase::Running(process),
            },
            Phase::Exited { process, status, at } => self.drain(process, status, at, now),
            done @ Phase::Done(_) => done,
        };
    }

    /// The process exited at `at`: done once its pipes are closed or
    /// quiet, or have been read for long enough.
    fn drain(&mut self, mut process: Process, status: Status, at: Instant, now: Instant) -> Phase {
        if process.pipes_open() && now < drain_deadline(at, process.last_read) {
            return Phase::Exited { process, status, at };
        }
        // What the pipes hold right now, before they are closed.
        let mut buf = vec![0u8; pipes::CHUNK];
        if let Some(pipe) = process.stdout.as_mut() {
            pipes::sweep(pipe, &mut self.out, &mut buf);
        }
        if let Some(pipe) = process.stderr.as_mut() {
            pipes::sweep(pipe, &mut self.err, &mut buf);
        }
        let Process { stdin, stdout, stderr, guardian, .. } = process;
        drop((stdin, stdout, stderr));
        // Ended by itself: what it left running stays running.
        guardian.release();
        Phase::Done(status)
    }

    fn handle(&mut self, stream: Stream, revents: PollFlags, buf: &mut [u8]) {
        let Running { out, err, phase, .. } = self;
        let Some(process) = phase.process_mut() else { return };
        match stream {
            Stream::Stdin => process.write_stdin(revents),
            Stream::Stdout => read(&mut process.stdout, out, buf, &mut process.last_read),
            Stream::Stderr => read(&mut process.stderr, err, buf, &mut process.last_read),
        }
    }

    fn finish(self) -> Finished {
        let status = match self.phase {
            Phase::Done(status) => status,
            _ => Status::NotStarted(io::Error::other("the run did not end")),
        };
        Finished { status, stdout: Captured::from(self.out), stderr: Captured::from(self.err) }
    }
}

impl Phase {
    /// The process, while the run is not over.
    fn process(&self) -> Option<&Process> {
        match self {
            Phase::Running(process)
            | Phase::Exited { process, .. }
            | Phase::Stopping { process, .. } => Some(process),
            Phase::Done(_) => None,
        }
    }

    fn process_mut(&mut self) -> Option<&mut Process> {
        match self {
            Phase::Running(process)
            | Phase::Exited { process, .. }
            | Phase::Stopping { process, .. } => Some(process),
            Phase::Done(_) => None,
        }
    }
}

impl Process {
    /// Starts `program` in a process group of its own, told to a guardian.
    fn start(
        program: PathBuf,
        args: Vec<OsString>,
        input: Input,
        now: Instant,
    ) -> io::Result<Process> {
        // The guardian first, so that it knows the group before any
        // process is in it: a host killed outright takes its tools along.
        let guardian = Guardian::start()?;
        let line = guardian.line();
        let mut command = Command::new(&program);
        command
            .args(&args)
            .stdin(match input {
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
                return Err(e);
            }
        };
        let Some(pid) = i32::try_from(child.id()).ok().map(Pid::from_raw) else {
            // A pid beyond i32 cannot happen on Unix; refuse rather than
            // lose track of a process.
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::other("process id out of range"));
        };
        let stdin = match (input, child.stdin.take()) {
            (Input::HeldOpen, Some(pipe)) => Stdin::Held(pipe),
            (Input::Bytes(bytes), Some(pipe)) if !bytes.is_empty() => {
                pipes::set_nonblocking(&pipe);
                Stdin::Writing { pipe, bytes, written: 0 }
            }
            _ => Stdin::Closed,
        };
        Ok(Process {
            pid,
            stdin,
            stdout: child.stdout.take(),
            stderr: child.stderr.take(),
            last_read: now,
            guardian,
        })
    }

    fn pipes_open(&self) -> bool {
        self.stdout.is_some() || self.stderr.is_some()
    }

    fn write_stdin(&mut self, revents: PollFlags) {
        let Stdin::Writing { pipe, bytes, written } = &mut self.stdin else { return };
        if revents.intersects(PollFlags::POLLERR | PollFlags::POLLHUP | PollFlags::POLLNVAL) {
            // The tool closed its stdin: it does not want the rest.
            self.stdin = Stdin::Closed;
            return;
        }
        match pipe.write(&bytes[*written..]) {
            Ok(n) => *written += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => {
                self.stdin = Stdin::Closed;
                return;
            }
        }
        if *written >= bytes.len() {
            // All written: close, so that the tool sees EOF.
            self.stdin = Stdin::Closed;
        }
    }
}

impl Stop {
    /// Starts stopping the group of `process` (still running: its leader
    /// not reaped) with SIGTERM. Its stdin is closed.
    fn start(mut process: Process, now: Instant) -> Phase {
        Group::led_by(process.pid).terminate();
        process.stdin = Stdin::Closed;
        Phase::Stopping { process, stop: Stop { since: now, killed_at: None, reaped: false } }
    }

    /// SIGKILL once the grace is over; done once the group is gone, or as
    /// gone as it will get.
    fn advance(mut self, process: Process, now: Instant) -> Phase {
        let group = Group::led_by(process.pid);
        if !self.reaped && reap(process.pid).is_some() {
            self.reaped = true;
        }
        let gone = self.reaped && group.is_empty();
        match self.killed_at {
            None if !gone && now >= self.since + STOP_GRACE => {
                group.kill();
                self.killed_at = Some(now);
            }
            Some(killed) if !gone && now < killed + SETTLE_AFTER_KILL => {}
            None if !gone => {}
            // Gone, or as gone as it will get: the guardian (dropped, not
            // released) kills whatever is left once more.
            _ => return Phase::Done(Status::TimedOut),
        }
        Phase::Stopping { process, stop: self }
    }
}

/// Reads what `pipe` holds into `into`; forgets the pipe once it is closed.
fn read(pipe: &mut Option<impl io::Read>, into: &mut Bounded, buf: &mut [u8], at: &mut Instant) {
    let Some(reading) = pipe.as_mut() else { return };
    match pipes::read_into(reading, into, buf) {
        Drained::Bytes => *at = Instant::now(),
        Drained::Nothing => {}
        Drained::Closed => *pipe = None,
    }
}

/// Reaps the leader `pid` if it has exited: its status.
fn reap(pid: Pid) -> Option<Status> {
    match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
        Ok(status) => Some(match Exit::from_wait(status)? {
            Exit::Code(code) => Status::Exited(code),
            Exit::Signal(sig) => Status::Signaled(sig),
        }),
        Err(Errno::EINTR) => None,
        // ECHILD: the process is gone and cannot be waited for.
        Err(_) => Some(Status::Exited(-1)),
    }
}

/// Polls every open pipe of the runs still going, for at most one tick,
/// and returns the ready ones.
fn wait_for_events(runs: &[Running]) -> Vec<(usize, Stream, PollFlags)> {
    let mut fds: Vec<PollFd> = Vec::new();
    let mut owners: Vec<(usize, Stream)> = Vec::new();
    for (index, run) in runs.iter().enumerate() {
        let Some(process) = run.phase.process() else { continue };
        if let Stdin::Writing { pipe, .. } = &process.stdin {
            fds.push(PollFd::new(pipe.as_fd(), PollFlags::POLLOUT));
            owners.push((index, Stream::Stdin));
        }
        if let Some(stdout) = &process.stdout {
            fds.push(PollFd::new(stdout.as_fd(), PollFlags::POLLIN));
            owners.push((index, Stream::Stdout));
        }
        if let Some(stderr) = &process.stderr {
            fds.push(PollFd::new(stderr.as_fd(), PollFlags::POLLIN));
            owners.push((index, Stream::Stderr));
        }
    }
    // Exits, deadlines and grace periods are noticed by `advance`, not by
    // any fd: wake up every tick while a run is going.
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
#[path = "timed_tests.rs"]
mod tests;
