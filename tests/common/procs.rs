//! Running many tool processes at once, and measuring them: a spawn that
//! does not start threads per call (for the fuzz and load tests), a
//! watchdog that kills a tool that hangs, the tool's own peak memory from
//! `wait4`, and fingerprints of directory trees (to prove nothing outside a
//! test's directory changed).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::resource::{getrlimit, setrlimit, Resource};
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitid, Id, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

pub const NOBODY: u32 = 65534;

/// How a tool run ended.
#[derive(Debug)]
pub struct Finished {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub code: Option<i32>,
    pub signal: Option<i32>,
    /// The watchdog killed it: it hung.
    pub hung: bool,
    pub elapsed: Duration,
}

/// A command for the tool linked at `link`, in `cwd`, as `nobody` when
/// the tests run as root and `nobody` is asked for.
pub fn tool_command(link: &Path, cwd: &Path, nobody: bool) -> Command {
    let mut cmd = Command::new(link);
    cmd.current_dir(cwd);
    if nobody && super::is_root() {
        // std drops the supplementary groups (setgroups(0)) before setuid.
        cmd.uid(NOBODY).gid(NOBODY);
    }
    cmd
}

/// Kills tool processes that run longer than `limit`, so that a hang is a
/// failed case, not a stuck test.
pub struct Watchdog {
    inner: Arc<WatchInner>,
}

struct WatchInner {
    limit: Duration,
    running: Mutex<HashMap<u32, Instant>>,
    fired: Mutex<HashSet<u32>>,
    stop: AtomicBool,
}

impl Watchdog {
    pub fn new(limit: Duration) -> Watchdog {
        let inner = Arc::new(WatchInner {
            limit,
            running: Mutex::new(HashMap::new()),
            fired: Mutex::new(HashSet::new()),
            stop: AtomicBool::new(false),
        });
        let watcher = Arc::clone(&inner);
        std::thread::spawn(move || {
            while !watcher.stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                let running = watcher.running.lock().unwrap_or_else(|e| e.into_inner());
                for (&pid, &start) in running.iter() {
                    if start.elapsed() > watcher.limit {
                        watcher.fired.lock().unwrap_or_else(|e| e.into_inner()).insert(pid);
                        // Still in `running`, so not yet reaped: the pid is ours.
                        let _ = kill(pid_of(pid), Signal::SIGKILL);
                    }
                }
            }
        });
        Watchdog { inner }
    }

    fn watch(&self, pid: u32) {
        self.inner.running.lock().unwrap_or_else(|e| e.into_inner()).insert(pid, Instant::now());
    }

    /// Forgets `pid` (before it is reaped) and says whether it was killed.
    fn release(&self, pid: u32) -> bool {
        self.inner.running.lock().unwrap_or_else(|e| e.into_inner()).remove(&pid);
        self.inner.fired.lock().unwrap_or_else(|e| e.into_inner()).remove(&pid)
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.inner.stop.store(true, Ordering::Relaxed);
    }
}

/// Runs `cmd` with `stdin` (None: /dev/null) and collects its output.
/// The process is reaped only after it has been released from the
/// watchdog, so the watchdog never signals a recycled pid.
pub fn run_watched(mut cmd: Command, stdin: Option<&[u8]>, dog: &Watchdog) -> Finished {
    cmd.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn the tool");
    let pid = child.id();
    dog.watch(pid);
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().expect("stdin pipe");
        // The tools read all of stdin before they write: no deadlock. A tool
        // that stops reading early gives EPIPE, which is fine.
        let _ = pipe.write_all(input);
    }
    let (stdout, stderr) = read_both(&mut child);
    // Both pipes are at EOF: the tool has exited or closed them; wait for
    // the exit without reaping (WNOWAIT), release, then reap.
    wait_exited_not_reaped(pid);
    let hung = dog.release(pid);
    let status = child.wait().expect("wait");
    Finished {
        stdout,
        stderr,
        code: status.code(),
        signal: status.signal(),
        hung,
        elapsed: start.elapsed(),
    }
}

fn wait_exited_not_reaped(pid: u32) {
    while waitid(Id::Pid(pid_of(pid)), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT)
        == Err(Errno::EINTR)
    {}
}

fn pid_of(pid: u32) -> Pid {
    Pid::from_raw(i32::try_from(pid).expect("a pid fits in i32"))
}

/// Reads stdout and stderr to EOF together (poll), so that neither pipe
/// can fill up and block the tool.
pub fn read_both(child: &mut Child) -> (Vec<u8>, Vec<u8>) {
    let mut out = child.stdout.take().expect("stdout pipe");
    let mut err = child.stderr.take().expect("stderr pipe");
    let (mut out_buf, mut err_buf) = (Vec::new(), Vec::new());
    let (mut out_open, mut err_open) = (true, true);
    let mut chunk = vec![0u8; 64 * 1024];
    while out_open || err_open {
        // Only the open pipes: a pipe at end of file would report POLLHUP
        // for ever.
        let (out_ready, err_ready) = {
            let mut fds = Vec::new();
            if out_open {
                fds.push(PollFd::new(out.as_fd(), PollFlags::POLLIN));
            }
            if err_open {
                fds.push(PollFd::new(err.as_fd(), PollFlags::POLLIN));
            }
            if poll(&mut fds, PollTimeout::NONE).is_err() {
                continue; // EINTR
            }
            let ready: Vec<bool> =
                fds.iter().map(|fd| fd.revents().is_some_and(|r| !r.is_empty())).collect();
            (out_open && ready[0], err_open && ready[usize::from(out_open)])
        };
        if out_ready {
            match out.read(&mut chunk) {
                Ok(0) | Err(_) => out_open = false,
                Ok(n) => out_buf.extend_from_slice(&chunk[..n]),
            }
        }
        if err_ready {
            match err.read(&mut chunk) {
                Ok(0) | Err(_) => err_open = false,
                Ok(n) => err_buf.extend_from_slice(&chunk[..n]),
            }
        }
    }
    (out_buf, err_buf)
}

/// How a process ended, with its own peak resident memory.
#[derive(Debug, Clone, Copy)]
pub struct Reaped {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    /// `ru_maxrss` of the process, in bytes (Linux reports KiB).
    pub max_rss: u64,
}

/// Reaps `child` with wait4 and returns its exit and its peak RSS. The
/// figure is the tool's own (the maximum over it and the children it
/// waited for), not the test's. (libc: nix has no wait4.)
pub fn wait4(child: &Child) -> Reaped {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value to be overwritten.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: both pointers are to live locals of the right types.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            break;
        }
        assert_eq!(std::io::Error::last_os_error().raw_os_error(), Some(libc::EINTR), "wait4");
    }
    let exit = std::process::ExitStatus::from_raw(status);
    Reaped { code: exit.code(), signal: exit.signal(), max_rss: usage.ru_maxrss as u64 * 1024 }
}

/// Runs `jobs` on `threads` threads; each job gets its index.
pub fn parallel<T: Send>(jobs: usize, threads: usize, job: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..jobs).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= jobs {
                    break;
                }
                let r = job(i);
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.expect("job ran"))
        .collect()
}

/// A fingerprint of everything under `root`: for each entry, its kind,
/// mode, owner, size, mtime and (for files) contents hash. Two equal
/// fingerprints mean nothing under `root` changed.
pub fn fingerprint(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let p = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&p) else { continue };
            let mut line = format!(
                "{:o} {}:{} {} {}.{}",
                meta.mode(),
                meta.uid(),
                meta.gid(),
                meta.size(),
                meta.mtime(),
                meta.mtime_nsec()
            );
            if meta.is_file() {
                let bytes = std::fs::read(&p).unwrap_or_default();
                line.push_str(&format!(" {:016x}", fnv1a(&bytes)));
            } else if meta.is_dir() {
                stack.push(p.clone());
            }
            out.insert(p.strip_prefix(root).unwrap_or(&p).to_path_buf(), line);
        }
    }
    out
}

pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Gives a directory tree to `nobody` (when root), so that a tool run as
/// `nobody` can write there and nowhere else.
pub fn chown_tree_to_nobody(root: &Path) {
    if !super::is_root() {
        return;
    }
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        let _ = std::os::unix::fs::lchown(&p, Some(NOBODY), Some(NOBODY));
        if p.is_dir() && !p.is_symlink() {
            for entry in std::fs::read_dir(&p).expect("read_dir").flatten() {
                stack.push(entry.path());
            }
        }
    }
}

/// Raises the soft limit of open files to the hard limit (500 processes
/// at once need well over 1024 pipe ends).
pub fn raise_fd_limit() -> u64 {
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else { return 0 };
    match setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
        Ok(()) => hard,
        Err(_) => soft,
    }
}

/// Free bytes on the file system holding `dir`.
pub fn free_bytes(dir: &Path) -> u64 {
    nix::sys::statvfs::statvfs(dir).map(|s| s.blocks_available() * s.fragment_size()).unwrap_or(0)
}

/// The names in `dir`, sorted.
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read_dir")
        .flatten()
        .map(|e| String::from_utf8_lossy(e.file_name().as_bytes()).into_owned())
        .collect();
    names.sort();
    names
}

/// Sends `signal` to a process.
pub fn signal(child: &Child, signal: i32) {
    let _ = kill(pid_of(child.id()), Signal::try_from(signal).ok());
}

/// Why the peak is measured from a helper process: a child's `ru_maxrss`
/// starts at its parent's peak RSS, because the kernel records the old
/// address space's high-water mark at exec (and a vfork/posix_spawn child
/// runs in the parent's). A test process holding hundreds of MiB would make
/// every tool look that big. So the test binary runs itself as a small
/// helper (its test named `helper`, with `--ignored`), which forks the tool
/// from its own small address space, waits for it with wait4 and reports.
pub struct Measured {
    helper: Child,
    dir: tempfile::TempDir,
}

/// What the helper reports about the tool.
#[derive(Debug)]
pub struct Report {
    pub reaped: Reaped,
    /// The tool's stdout.
    pub stdout: Vec<u8>,
}

/// The test that is the helper, in this one test binary.
const HELPER_TEST: &str = "common::procs::helper";

/// Not a test: the small process that runs a tool and measures it (see
/// [`Measured`]). Does nothing unless started by `Measured::start`; run by
/// `--ignored` too, where it has nothing to measure.
#[test]
#[ignore = "the peak-memory helper; runs only when a test starts it"]
fn helper() {
    if !helper_main() {
        eprintln!("common::procs::helper: not started by Measured::start, nothing to measure");
    }
}

/// The variables that tell the test binary it runs as the helper.
pub const HELPER_DIR: &str = "IKIGAI_TEST_HELPER_DIR";
const HELPER_TOOL: &str = "IKIGAI_TEST_HELPER_TOOL";

impl Measured {
    /// The peak RSS of the program itself: `glob` answering a trivial call
    /// (code, libc, the relocated pages; a debug build's grow with every
    /// crate), measured once per test binary. A bound on what a tool holds
    /// for its work is this plus the work, so it does not move with the
    /// binary's size.
    pub fn floor(env: &crate::common::Env) -> u64 {
        static FLOOR: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        *FLOOR.get_or_init(|| {
            let args = br#"{"pattern":"none"}"#;
            let report = Measured::start(&env.link("glob"), &env.work(), args, &[]).finish();
            assert_eq!(report.stdout, br#"{"output":"","count":0}"#);
            report.reaped.max_rss
        })
    }

    /// Starts `tool` (a link to the binary) in `cwd` through the helper test
    /// `helper_test` of the current test binary, with `stdin` and the
    /// environment changes in `envs` (None: removed).
    pub fn start(tool: &Path, cwd: &Path, stdin: &[u8], envs: &[(&str, Option<&str>)]) -> Measured {
        let dir = tempfile::tempdir().expect("helper dir");
        std::fs::write(dir.path().join("stdin"), stdin).expect("write stdin");
        let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
        cmd.args([HELPER_TEST, "--exact", "--ignored", "--nocapture", "--test-threads=1", "-q"])
            .current_dir(cwd)
            .env(HELPER_DIR, dir.path())
            .env(HELPER_TOOL, tool)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (key, value) in envs {
            match value {
                Some(v) => cmd.env(key, v),
                None => cmd.env_remove(key),
            };
        }
        let helper = cmd.spawn().expect("spawn the helper");
        Measured { helper, dir }
    }

    /// The tool's pid, once the helper has started it.
    pub fn tool_pid(&self) -> i32 {
        let path = self.dir.path().join("pid");
        let start = Instant::now();
        loop {
            if let Some(pid) =
                std::fs::read_to_string(&path).ok().and_then(|s| s.trim().parse().ok())
            {
                return pid;
            }
            assert!(start.elapsed() < Duration::from_secs(30), "the helper did not start the tool");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Whether the tool has ended (the helper has reported), waiting at most `limit`.
    pub fn ends_within(&self, limit: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            if self.dir.path().join("report").exists() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    pub fn finish(mut self) -> Report {
        let status = self.helper.wait().expect("wait for the helper");
        let report = std::fs::read_to_string(self.dir.path().join("report"))
            .unwrap_or_else(|_| panic!("the helper reported nothing ({status:?})"));
        let field = |i: usize| {
            report.split(' ').nth(i).and_then(|f| f.trim().parse::<i64>().ok()).unwrap_or(-1)
        };
        let opt = |v: i64| (v >= 0).then_some(v as i32);
        Report {
            reaped: Reaped { code: opt(field(0)), signal: opt(field(1)), max_rss: field(2) as u64 },
            stdout: std::fs::read(self.dir.path().join("stdout")).unwrap_or_default(),
        }
    }
}

/// The body of the helper test: when the test binary was started by
/// `Measured::start`, runs the tool and reports `code signal max_rss`.
/// Returns false (and does nothing) in a normal test run.
#[allow(clippy::zombie_processes)] // reaped by `wait4`, which clippy does not know
pub fn helper_main() -> bool {
    let (Some(dir), Some(tool)) = (std::env::var_os(HELPER_DIR), std::env::var_os(HELPER_TOOL))
    else {
        return false;
    };
    let dir = PathBuf::from(dir);
    let stdin = std::fs::File::open(dir.join("stdin")).expect("stdin file");
    let stdout = std::fs::File::create(dir.join("stdout")).expect("stdout file");
    let mut cmd = Command::new(tool);
    cmd.env_remove(HELPER_DIR)
        .env_remove(HELPER_TOOL)
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::null());
    // A hook makes std fork instead of vfork (posix_spawn): a forked child
    // copies only this process's anonymous pages, not the high-water mark
    // of its whole address space.
    // SAFETY: the hook does nothing, so it is async-signal-safe.
    unsafe { cmd.pre_exec(|| Ok(())) };
    let child = cmd.spawn().expect("spawn the tool");
    std::fs::write(dir.join("pid"), child.id().to_string()).expect("write pid");
    let r = wait4(&child);
    let report = format!("{} {} {}", r.code.unwrap_or(-1), r.signal.unwrap_or(-1), r.max_rss);
    // Written whole, then renamed: the parent polls for it.
    std::fs::write(dir.join("report.part"), report).expect("write report");
    std::fs::rename(dir.join("report.part"), dir.join("report")).expect("rename report");
    true
}

/// Whether `child` has exited (it is not reaped: wait4 still can).
pub fn has_exited(child: &Child) -> bool {
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    matches!(waitid(Id::Pid(pid_of(child.id())), flags), Ok(status) if status != WaitStatus::StillAlive)
}

// --- processes a command left behind ---------------------------------------

/// A `sleep` duration no other process on the machine uses: `secs` and a
/// fraction made of this test process's pid and a counter, so that a test
/// finds its own sleeps in /proc (other tests, other checkouts run too).
pub fn unique_sleep(secs: u32) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!("{secs}.{}{:03}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The running processes (zombies excluded) whose command line is exactly
/// `argv`.
pub fn pids_running(argv: &[&str]) -> Vec<i32> {
    let wanted: Vec<u8> = argv.iter().flat_map(|a| a.bytes().chain([0])).collect();
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == wanted))
        .filter(|pid| !is_gone(*pid))
        .collect()
}

/// Waits (bounded) until a process runs `argv`; its pid.
pub fn wait_for_process(argv: &[&str]) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(&pid) = pids_running(argv).first() {
            return pid;
        }
        assert!(Instant::now() < deadline, "no process runs {argv:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A process is gone once it no longer runs: no /proc entry, or a zombie
/// (nobody may reap orphans in a container).
pub fn is_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            let state = stat.rsplit_once(") ").and_then(|(_, rest)| rest.chars().next());
            matches!(state, Some('Z' | 'X') | None)
        }
    }
}

/// Waits until `pid` is gone, at most `limit`; whether it is.
pub fn gone_within(pid: i32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while !is_gone(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

/// Kills a process a test made a command leave behind, whatever the
/// test's outcome.
pub struct Leftover(pub i32);

/// Waits until a `sleep` of each of `durations` (unique, see `unique_sleep`)
/// is running, and holds them as leftovers, killed whatever the outcome.
pub fn sleeps_running(durations: &[&str]) -> Vec<Leftover> {
    durations.iter().map(|d| Leftover(wait_for_process(&["sleep", d]))).collect()
}

/// Asserts that every one of `processes` is gone within two seconds (the
/// contract says one; the second is room for a busy machine); `outlived`
/// says what they outlived, for the message.
pub fn assert_all_gone(processes: &[Leftover], outlived: &str) {
    for process in processes {
        assert!(
            gone_within(process.0, Duration::from_secs(2)),
            "process {} outlived {outlived}",
            process.0
        );
    }
}

impl Drop for Leftover {
    fn drop(&mut self) {
        let _ = kill(Pid::from_raw(self.0), Signal::SIGKILL);
        gone_within(self.0, Duration::from_secs(10));
    }
}

/// Waits until every process of `pids` is gone ([`gone_within`]), failing
/// past `patience`.
pub fn assert_gone_within(pids: &[i32], patience: Duration) {
    let deadline = Instant::now() + patience;
    for &pid in pids {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(gone_within(pid, left), "still running: {pid} of {pids:?}");
    }
}
