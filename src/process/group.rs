//! A process group: starting a child as the leader of a new one, and
//! signalling, watching and stopping the group as a whole.
//!
//! The `in_*` functions run in a forked child before exec (`pre_exec`):
//! they make only async-signal-safe system calls.

use std::io;
use std::time::Instant;

use nix::errno::Errno;
use nix::sys::prctl;
use nix::sys::signal::{self, kill, killpg, SigHandler, SigSet, SigmaskHow, Signal};
use nix::unistd::{self, Pid};

use super::{SETTLE_AFTER_KILL, STOP_GRACE, TICK};

/// A process group, named by its leader's pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group(Pid);

impl Group {
    /// The group led by `leader` (started with [`in_new_session`] or
    /// [`in_new_group`], so that its pid is the group's id).
    pub fn led_by(leader: Pid) -> Group {
        Group(leader)
    }

    /// The group of a child started by std, led by it.
    pub fn of_child(child: &std::process::Child) -> Option<Group> {
        i32::try_from(child.id()).ok().map(|pid| Group(Pid::from_raw(pid)))
    }

    #[cfg(test)]
    pub fn id(self) -> Pid {
        self.0
    }

    /// Sends `sig` to every member; false when the group has none.
    pub fn signal(self, sig: Signal) -> bool {
        killpg(self.0, sig) != Err(Errno::ESRCH)
    }

    /// Whether no live process is left in the group. Zombies do not count:
    /// they are dead, and where init does not reap orphans (a container
    /// without an init) they stay members for ever.
    pub fn is_empty(self) -> bool {
        kill(Pid::from_raw(-self.0.as_raw()), None) == Err(Errno::ESRCH) || !has_live_member(self.0)
    }

    /// Asks the group to end (SIGTERM, and SIGCONT so that stopped members
    /// see it). SIGTERM rather than SIGINT: background jobs of a
    /// non-interactive shell ignore SIGINT.
    pub fn terminate(self) {
        self.signal(Signal::SIGTERM);
        self.signal(Signal::SIGCONT);
    }

    pub fn kill(self) {
        self.signal(Signal::SIGKILL);
    }

    /// Stops the group and waits (bounded) until it is gone: SIGTERM, up to
    /// [`STOP_GRACE`] for it to end, SIGKILL, up to [`SETTLE_AFTER_KILL`]
    /// for the kill to land. `reap_leader` is called while waiting: a leader
    /// that is our child stays a member until it is reaped.
    pub fn stop(self, reap_leader: impl FnMut()) {
        stop_all(&[self], reap_leader);
    }
}

/// Stops every group of `groups` as [`Group::stop`] does one, all at once:
/// one grace for all of them, not one after another.
pub fn stop_all(groups: &[Group], mut reap_leaders: impl FnMut()) {
    groups.iter().for_each(|group| group.terminate());
    if wait_empty(groups, STOP_GRACE, &mut reap_leaders) {
        return;
    }
    groups.iter().for_each(|group| group.kill());
    wait_empty(groups, SETTLE_AFTER_KILL, &mut reap_leaders);
}

/// Waits until every group is empty or `limit` has passed; whether they are.
fn wait_empty(groups: &[Group], limit: std::time::Duration, reap: &mut impl FnMut()) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        reap();
        if groups.iter().all(|group| group.is_empty()) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(TICK);
    }
}

/// Whether /proc shows a process of group `pgid` that is not a zombie.
/// Only asked while a group is being stopped, after kill(2) said it has
/// members: one read of /proc/PID/stat per process on the machine. When
/// /proc cannot be read, the answer is yes (the caller waits its bounded
/// time, as it would without this).
fn has_live_member(pgid: Pid) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else { return true };
    let mut buf = Vec::with_capacity(512);
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        buf.clear();
        let path = format!("/proc/{pid}/stat");
        let Ok(mut file) = std::fs::File::open(path) else { continue };
        if std::io::Read::read_to_end(&mut file, &mut buf).is_err() {
            continue;
        }
        if let Some((state, group)) = state_and_group(&buf) {
            if group == pgid.as_raw() && !matches!(state, b'Z' | b'X') {
                return true;
            }
        }
    }
    false
}

/// The state (field 3) and process group (field 5) of a /proc/PID/stat
/// line. The command name (field 2) may hold spaces and parentheses: the
/// fields after it start after the last ')'.
fn state_and_group(stat: &[u8]) -> Option<(u8, i32)> {
    let close = stat.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(stat.get(close + 2..)?).ok()?;
    let mut fields = rest.split(' ');
    let state = *fields.next()?.as_bytes().first()?;
    let group = fields.nth(1)?.parse().ok()?;
    Some((state, group))
}

/// In the child: a new session and process group, so no controlling
/// terminal (nothing can prompt on /dev/tty) and one group to signal.
pub fn in_new_session() -> io::Result<()> {
    unistd::setsid()?;
    Ok(())
}

/// In the child: a new process group in the same session (a tool run by a
/// host keeps the host's terminal, as under ikigai).
pub fn in_new_group() -> io::Result<()> {
    unistd::setpgid(Pid::from_raw(0), Pid::from_raw(0))?;
    Ok(())
}

/// In the child: SIGKILL when the parent dies. Checked again after it is
/// set: a parent that died between the fork and now would never send it.
pub fn in_die_with_parent(parent: Pid) -> io::Result<()> {
    prctl::set_pdeathsig(Signal::SIGKILL)?;
    if unistd::getppid() != parent {
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    Ok(())
}

/// In the child: signals as any program starts with them. Rust ignores
/// SIGPIPE (`yes | head -1` must end) and the parent may block the signals
/// it watches; neither must reach the command.
pub fn in_default_signals() -> io::Result<()> {
    // SAFETY: the default disposition, no handler code.
    unsafe { signal::signal(Signal::SIGPIPE, SigHandler::SigDfl) }?;
    signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    #[test]
    fn the_state_and_group_are_read_past_an_awkward_command_name() {
        let stat = b"42 (a) b (c) S 1 4242 4242 0 -1 4194560";
        assert_eq!(state_and_group(stat), Some((b'S', 4242)));
        assert_eq!(state_and_group(b"42 (x"), None);
    }

    #[test]
    fn a_group_whose_only_member_is_a_zombie_is_empty() {
        let mut child = Command::new("/bin/true").process_group(0).spawn().unwrap();
        let group = Group::of_child(&child).unwrap();
        // Exited, not reaped: a zombie, still a member for kill(2).
        let flags = nix::sys::wait::WaitPidFlag::WEXITED | nix::sys::wait::WaitPidFlag::WNOWAIT;
        nix::sys::wait::waitid(nix::sys::wait::Id::Pid(group.id()), flags).unwrap();
        assert_eq!(kill(Pid::from_raw(-group.id().as_raw()), None), Ok(()));
        assert!(group.is_empty());
        child.wait().unwrap();
    }

    #[test]
    fn a_group_with_a_running_member_is_not_empty() {
        let mut child = Command::new("/bin/sleep").arg("10").process_group(0).spawn().unwrap();
        let group = Group::of_child(&child).unwrap();
        assert!(!group.is_empty());
        group.kill();
        child.wait().unwrap();
    }
}
