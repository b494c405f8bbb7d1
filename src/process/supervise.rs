//! Watching one command until it is done, for bash's call and a job's
//! supervisor alike: drain its output pipe into a sink, reap the shell, and
//! stop its process group when a stop signal, its timeout or its caller
//! says so.
//!
//! The command is done when the shell has exited and the pipe is at end of
//! file, or has been quiet for a moment (`drain_deadline`): a process the
//! command left running in the background may hold the pipe for ever, and
//! must not hold up the end (`sleep 60 & echo done`). Such processes are
//! left running.
//!
//! Where the supervision stands is a [`State`]; what it does next is
//! decided in one place, [`next`], from the state, what just happened and
//! the caller's [`Watch`] (its limits and what else it watches).

use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd};
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags};
use nix::sys::signal::Signal;

use super::pipes::{self, Drained, Sink};
use super::{drain_deadline, Group, TICK};

/// The signals that stop a command, queued on a descriptor that wakes the
/// same `poll` as its output (a signalfd; SIGCHLD on it too).
pub trait StopSignals {
    fn fd(&self) -> BorrowedFd<'_>;
    /// Consumes what is queued; the first request to stop among it.
    fn stop_requested(&self) -> Option<Signal>;
}

/// Why a command's group was stopped before the command ended by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// SIGTERM, SIGINT or SIGHUP: a host's, or `job_kill`'s.
    Signal(Signal),
    /// Its timeout passed.
    TimedOut,
    /// Its starter went away before handing it over (a job).
    Abandoned,
    /// Nobody could reach it any more (a job unread for its time to live,
    /// or its directory removed).
    Expired,
}

/// The caller's side of the supervision: its limits and what else it
/// watches.
pub trait Watch {
    /// The longest the loop polls while the command runs (SIGCHLD, output
    /// and the caller's descriptor wake it; this is the net).
    fn tick(&self) -> Duration {
        TICK
    }
    /// When the command is stopped as timed out.
    fn deadline(&self) -> Option<Instant> {
        None
    }
    /// Whether a stop signal still stops the group once the shell has
    /// exited (bash's call: what the command left behind goes with the
    /// tool).
    fn stop_after_exit(&self) -> bool {
        false
    }
    /// A descriptor of the caller's to poll too, while it wants to.
    fn extra(&self) -> Option<BorrowedFd<'_>> {
        None
    }
    /// `extra` was ready: a cause to stop, if that is what it said.
    fn extra_ready(&mut self) -> Option<Cause> {
        None
    }
    /// Looked at each turn while the command runs: whether it is no longer
    /// wanted ([`Cause::Expired`]).
    fn expired(&mut self, _now: Instant) -> bool {
        false
    }
    /// The group has just been stopped for `cause` (bash's call ends the
    /// tool here, by the signal it received).
    fn stopped(&mut self, _cause: Cause) {}
}

/// How the command ended.
#[derive(Debug)]
pub struct Supervised {
    /// `None` when the status could not be collected.
    pub status: Option<ExitStatus>,
    /// Why its group was stopped, if it was.
    pub stopped: Option<Cause>,
}

/// Where the supervision stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// The shell runs: its exit, its output, the signals and the deadlines
    /// are watched.
    Running,
    /// The shell has exited (by itself, or its group was stopped) at
    /// `exited`: the pipe is read until it closes or is quiet.
    Draining { exited: Instant },
}

/// What the supervision does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Poll for at most this long.
    Wait(Duration),
    /// Stop the command's group (SIGTERM, grace, SIGKILL), for this cause.
    Stop(Cause),
    /// Keep the cause, stop nothing: the shell has exited already.
    Note(Cause),
    /// Nothing to do about what happened.
    Carry,
    /// Take what the pipe holds now, and end.
    Sweep,
    /// End.
    Finish,
}

/// What the policy looks at, besides the state and the limits.
#[derive(Debug, Clone, Copy)]
pub struct Seen {
    pub now: Instant,
    /// What just happened (a stop signal, the hand-over refused), if
    /// anything: `next` is asked about it at once.
    pub event: Option<Cause>,
    /// Whether the caller says the command is no longer wanted.
    pub expired: bool,
    /// Whether the pipe is still open.
    pub pipe_open: bool,
    /// When the pipe last gave something.
    pub last_read: Instant,
}

/// The one expiry policy: from where the supervision stands and what it
/// sees, what to do next. An event stops a running command (and, when the
/// caller says so, one whose shell has exited); then the timeout, then the
/// caller's expiry; a running command is otherwise polled for at most a
/// tick, and never past its deadline; an exited one is drained until its
/// pipe closes or `drain_deadline` passes.
pub fn next(state: State, seen: Seen, limits: &impl Watch) -> Next {
    match (state, seen.event) {
        (State::Running, Some(cause)) => Next::Stop(cause),
        (State::Draining { .. }, Some(cause @ Cause::Signal(_))) if limits.stop_after_exit() => {
            Next::Stop(cause)
        }
        (State::Draining { .. }, Some(Cause::Abandoned)) => Next::Note(Cause::Abandoned),
        (State::Draining { .. }, Some(_)) => Next::Carry,
        (State::Running, None) => {
            let deadline = limits.deadline();
            if deadline.is_some_and(|d| seen.now >= d) {
                Next::Stop(Cause::TimedOut)
            } else if seen.expired {
                Next::Stop(Cause::Expired)
            } else {
                let tick = limits.tick();
                Next::Wait(
                    deadline.map_or(tick, |d| tick.min(d.saturating_duration_since(seen.now))),
                )
            }
        }
        (State::Draining { exited }, None) => {
            if !seen.pipe_open {
                return Next::Finish;
            }
            match drain_deadline(exited, seen.last_read).checked_duration_since(seen.now) {
                Some(left) if !left.is_zero() => Next::Wait(left),
                _ => Next::Sweep,
            }
        }
    }
}

/// Runs until the command is done (see the module doc), its output drained
/// into `sink`.
pub fn supervise(
    mut child: Child,
    pipe: File,
    signals: &impl StopSignals,
    sink: &mut impl Sink,
    watch: &mut impl Watch,
) -> Supervised {
    let mut pipe = Some(pipe);
    let mut state = State::Running;
    let mut ended = Supervised { status: None, stopped: None };
    let mut last_read = Instant::now();
    let mut buf = vec![0u8; pipes::CHUNK];
    // Whether the shell may have exited since it was last checked on: at
    // first, after a signal (SIGCHLD) and after a quiet tick. Not after
    // every read: a command that prints a lot would pay a system call per
    // read for nothing.
    let mut check_child = true;
    loop {
        if state == State::Running && std::mem::take(&mut check_child) {
            match child.try_wait() {
                Ok(None) => {}
                Ok(Some(s)) => {
                    ended.status = Some(s);
                    state = State::Draining { exited: Instant::now() };
                }
                // Not ours to wait for (cannot happen once SIGCHLD is at its
                // default): stop waiting, still drain what is there.
                Err(_) => state = State::Draining { exited: Instant::now() },
            }
        }
        let now = Instant::now();
        let expired = state == State::Running && watch.expired(now);
        let seen = Seen { now, event: None, expired, pipe_open: pipe.is_some(), last_read };
        let timeout = match next(state, seen, watch) {
            Next::Wait(timeout) => timeout,
            Next::Stop(cause) => {
                state = stop(&mut child, cause, &mut ended, watch);
                continue;
            }
            Next::Sweep => {
                if let Some(p) = pipe.as_mut() {
                    pipes::sweep(p, sink, &mut buf);
                }
                break;
            }
            Next::Finish => break,
            // Only for an event, and there is none here.
            Next::Note(_) | Next::Carry => watch.tick(),
        };

        let (signalled, readable, extra) = {
            let mut fds = vec![PollFd::new(signals.fd(), PollFlags::POLLIN)];
            let pipe_at = pipe.as_ref().map(|p| {
                fds.push(PollFd::new(p.as_fd(), PollFlags::POLLIN));
                fds.len() - 1
            });
            let extra_at = watch.extra().map(|fd| {
                fds.push(PollFd::new(fd, PollFlags::POLLIN));
                fds.len() - 1
            });
            if pipes::wait(&mut fds, timeout) {
                let ready =
                    |at: Option<usize>| at.and_then(|i| fds.get(i)).is_some_and(pipes::is_ready);
                (pipes::is_ready(&fds[0]), ready(pipe_at), ready(extra_at))
            } else {
                (false, false, false)
            }
        };
        check_child = signalled || !readable;
        let signal = if signalled { signals.stop_requested().map(Cause::Signal) } else { None };
        let refused = if extra { watch.extra_ready() } else { None };
        for event in [signal, refused].into_iter().flatten() {
            let seen = Seen { now: Instant::now(), event: Some(event), ..seen };
            match next(state, seen, watch) {
                Next::Stop(cause) => state = stop(&mut child, cause, &mut ended, watch),
                Next::Note(cause) => ended.stopped = Some(cause),
                _ => {}
            }
        }
        if readable {
            if let Some(p) = pipe.as_mut() {
                match pipes::read_into(p, sink, &mut buf) {
                    Drained::Bytes => last_read = Instant::now(),
                    Drained::Nothing => {}
                    Drained::Closed => pipe = None,
                }
            }
        }
    }
    ended
}

/// Stops the command's whole group (SIGTERM, grace, SIGKILL, until gone)
/// and reaps the shell; tells the caller. The supervision drains what is
/// left from now on.
fn stop(child: &mut Child, cause: Cause, ended: &mut Supervised, watch: &mut impl Watch) -> State {
    // The shell leads its own session, so its pid is the group's id.
    if let Some(group) = Group::of_child(child) {
        group.stop(|| {
            // Reap the shell, or it would count as a member still.
            let _ = child.try_wait();
        });
    }
    ended.stopped = Some(cause);
    watch.stopped(cause);
    // Reaped above (std keeps the status), or now.
    for _ in 0..50 {
        if let Ok(Some(status)) = child.try_wait() {
            ended.status = Some(status);
            break;
        }
        std::thread::sleep(TICK);
    }
    State::Draining { exited: Instant::now() }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Limits {
        deadline: Option<Instant>,
        after_exit: bool,
    }

    impl Watch for Limits {
        fn deadline(&self) -> Option<Instant> {
            self.deadline
        }
        fn stop_after_exit(&self) -> bool {
            self.after_exit
        }
    }

    fn seen(now: Instant) -> Seen {
        Seen { now, event: None, expired: false, pipe_open: true, last_read: now }
    }

    #[test]
    fn a_running_command_is_stopped_by_an_event_first_then_its_timeout_then_expiry() {
        let now = Instant::now();
        let past = Limits { deadline: Some(now), after_exit: false };
        let sig = Cause::Signal(Signal::SIGTERM);
        let with = |event, expired| Seen { event, expired, ..seen(now) };
        assert_eq!(next(State::Running, with(Some(sig), true), &past), Next::Stop(sig));
        assert_eq!(next(State::Running, with(None, true), &past), Next::Stop(Cause::TimedOut));
        let none = Limits { deadline: None, after_exit: false };
        assert_eq!(next(State::Running, with(None, true), &none), Next::Stop(Cause::Expired));
        assert_eq!(next(State::Running, with(None, false), &none), Next::Wait(TICK));
        let soon = Limits { deadline: Some(now + Duration::from_millis(3)), after_exit: false };
        assert_eq!(next(State::Running, seen(now), &soon), Next::Wait(Duration::from_millis(3)));
    }

    #[test]
    fn after_the_exit_a_signal_stops_only_where_the_caller_says_and_a_refused_handover_is_kept() {
        let now = Instant::now();
        let exited = State::Draining { exited: now };
        let sig = Cause::Signal(Signal::SIGHUP);
        let event = |event| Seen { event: Some(event), ..seen(now) };
        let call = Limits { deadline: None, after_exit: true };
        let job = Limits { deadline: None, after_exit: false };
        assert_eq!(next(exited, event(sig), &call), Next::Stop(sig));
        assert_eq!(next(exited, event(sig), &job), Next::Carry);
        assert_eq!(next(exited, event(Cause::Abandoned), &job), Next::Note(Cause::Abandoned));
    }

    #[test]
    fn an_exited_command_is_drained_until_its_pipe_closes_or_is_quiet() {
        let now = Instant::now();
        let job = Limits { deadline: Some(now), after_exit: false };
        let exited = State::Draining { exited: now };
        let closed = Seen { pipe_open: false, ..seen(now) };
        assert_eq!(next(exited, closed, &job), Next::Finish);
        assert_eq!(next(exited, seen(now), &job), Next::Wait(super::super::QUIET_AFTER_EXIT));
        let later = seen(now + super::super::QUIET_AFTER_EXIT);
        assert_eq!(next(exited, Seen { last_read: now, ..later }, &job), Next::Sweep);
    }
}
