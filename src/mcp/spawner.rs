//! The spawner: a small process with one thread, forked by `mcp::run`
//! before the async runtime starts, that forks each call's process
//! (docs/MCP.md, "How a call runs").
//!
//! Spawning `/proc/self/exe` for every call costs an exec, the loading of
//! a binary of several megabytes and the whole start of a program; a fork
//! of this process, which holds little memory and no thread, costs a
//! fraction of that, and the child runs the tool through the same entry
//! the binary's `main` uses for a tool named by `argv[0]`, which the front
//! end hands the spawner as a [`RunTool`] (`cli::run_forked`: the MCP
//! server sits below the front end and never names it). Each call is still a process of its own: a crash,
//! an abort or a kill takes only it.
//!
//! The server sends each call as one message on a `SOCK_SEQPACKET` socket:
//! the tool's name and the environment settings of the call, and by
//! `SCM_RIGHTS` the child's stdin and stdout (pipe ends), a socket to
//! answer on, and the descriptors of the call's roots. The spawner forks,
//! answers the child's pid at once and its wait status when it ends, and
//! exits when the server's end of the socket closes.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io::{self, IoSlice, IoSliceMut};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::net::UnixStream as StdUnixStream;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};

use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::socket::{
    recvmsg, sendmsg, socketpair, AddressFamily, ControlMessage, ControlMessageOwned, MsgFlags,
    SockFlag, SockType,
};
use nix::unistd::{dup2, fork, pipe2, setpgid, ForkResult, Pid};
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::net::UnixStream;

use super::tell;
use crate::confine::ROOT_FDS_VAR;
use crate::process::title::{self, ArgumentArea};
use crate::process::Group;

/// The most root descriptors one call sends (the kernel takes at most 253
/// descriptors in one message; three more travel with them).
const MAX_ROOTS: usize = 240;
/// The largest request (the tool's name and its environment settings).
const MAX_REQUEST: usize = 1 << 16;
/// The descriptors before the roots: stdin, stdout, the answering socket.
const FIXED_FDS: usize = 3;
/// The first descriptor a call's roots get in its process.
const FIRST_ROOT_FD: RawFd = 3;

/// An answer of the spawner, 8 bytes: what (below), then a number.
const STARTED: u32 = 1; // the pid
const FAILED: u32 = 2; // the errno of the fork
const EXITED: u32 = 3; // the raw wait status

/// Runs the tool a link named `argv0` runs, in the call's process, and
/// returns the status to exit with: the binary's own entry, handed down by
/// the front end that starts the server.
pub type RunTool = fn(OsString) -> i32;

/// The server's side: the socket to the spawner.
pub struct Spawner {
    socket: OwnedFd,
    /// Cleared the first time the spawner is found gone.
    alive: AtomicBool,
}

/// What a call asks for: the tool (its name as `argv[0]`), the environment
/// variables to set in its process, and its roots' descriptors (their
/// names are among the variables).
pub struct Request<'a> {
    pub argv0: &'a str,
    pub env: Vec<(&'a str, &'a OsStr)>,
    pub roots: Vec<RawFd>,
}

/// A call's process, started by the spawner.
pub struct Forked {
    pub pid: Pid,
    pub stdin: Option<pipe::Sender>,
    pub stdout: pipe::Receiver,
    answers: UnixStream,
}

impl Forked {
    /// How the process ended, as the spawner reaped it.
    pub async fn status(&mut self) -> io::Result<ExitStatus> {
        match read_answer(&mut self.answers).await? {
            Some((EXITED, raw)) => Ok(ExitStatus::from_raw(raw)),
            _ => Err(io::Error::other("the spawner ended before the call's process did")),
        }
    }
}

impl Spawner {
    /// Forks the spawner. Only while this process has one thread: a fork
    /// copies only the calling thread, and a lock another thread held
    /// (the allocator's) would stay locked in the child. Each call's
    /// process runs its tool by `run_tool`.
    pub fn start(run_tool: RunTool) -> io::Result<Spawner> {
        if threads()? != 1 {
            return Err(io::Error::other("the server already runs more than one thread"));
        }
        let (ours, theirs) =
            socketpair(AddressFamily::Unix, SockType::SeqPacket, None, SockFlag::SOCK_CLOEXEC)?;
        // SAFETY: this process has one thread (checked above), so the child
        // is a whole copy of it, locks included; it runs `serve`, which
        // never returns.
        match unsafe { fork() }? {
            ForkResult::Child => {
                drop(ours);
                serve(theirs, run_tool)
            }
            ForkResult::Parent { .. } => Ok(Spawner { socket: ours, alive: AtomicBool::new(true) }),
        }
    }

    /// Whether the spawner still serves: not found gone by a call, and its
    /// end of the socket not closed (it never writes on this socket, so
    /// any event on it is its end). The readiness of `mcp --listen`
    /// (docs/MCP.md, "Health and readiness").
    pub fn is_up(&self) -> bool {
        if !self.alive.load(Ordering::Relaxed) {
            return false;
        }
        let mut fds = [PollFd::new(self.socket.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::ZERO) {
            Ok(0) => true,
            Ok(_) | Err(_) => false,
        }
    }

    /// Starts a call's process. `Ok(None)`: the spawner cannot take this
    /// call (too many roots) or is gone (said once on stderr); the caller
    /// spawns it as before. `Err`: the fork failed.
    pub async fn spawn(&self, request: &Request<'_>) -> io::Result<Option<Forked>> {
        if !self.alive.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let payload = encode(request);
        if payload.len() > MAX_REQUEST || request.roots.len() > MAX_ROOTS {
            return Ok(None);
        }
        match self.send(request, &payload).await {
            Ok(Ok(forked)) => Ok(Some(forked)),
            Ok(Err(fork_failed)) => Err(fork_failed),
            Err(gone) => {
                if self.alive.swap(false, Ordering::Relaxed) {
                    tell(format_args!(
                        "the spawner is gone ({gone}); each call is now spawned as a new process"
                    ));
                }
                Ok(None)
            }
        }
    }

    /// Sends the call and reads the pid: the outer error means the spawner
    /// is gone, the inner one that it could not fork.
    async fn send(&self, request: &Request<'_>, payload: &[u8]) -> io::Result<io::Result<Forked>> {
        let (stdin_theirs, stdin) = pipe2(OFlag::O_CLOEXEC)?;
        let (stdout, stdout_theirs) = pipe2(OFlag::O_CLOEXEC)?;
        let (answers, answers_theirs) = StdUnixStream::pair()?;
        let mut fds =
            vec![stdin_theirs.as_raw_fd(), stdout_theirs.as_raw_fd(), answers_theirs.as_raw_fd()];
        fds.extend_from_slice(&request.roots);
        // A short message on a local socket: the spawner reads it at once.
        sendmsg::<()>(
            self.socket.as_raw_fd(),
            &[IoSlice::new(payload)],
            &[ControlMessage::ScmRights(&fds)],
            MsgFlags::MSG_NOSIGNAL,
            None,
        )?;
        // The spawner holds its copies now; the child's ends must close
        // here for the child to see its stdin end and us its stdout's.
        drop((stdin_theirs, stdout_theirs, answers_theirs));
        answers.set_nonblocking(true)?;
        let mut answers = UnixStream::from_std(answers)?;
        match read_answer(&mut answers).await? {
            Some((STARTED, pid)) => Ok(Ok(Forked {
                pid: Pid::from_raw(pid),
                stdin: Some(pipe::Sender::from_owned_fd(stdin)?),
                stdout: pipe::Receiver::from_owned_fd(stdout)?,
                answers,
            })),
            Some((FAILED, errno)) => Ok(Err(io::Error::from_raw_os_error(errno))),
            _ => Err(io::Error::other("it closed the call's socket")),
        }
    }
}

/// The threads of this process.
fn threads() -> io::Result<usize> {
    Ok(std::fs::read_dir("/proc/self/task")?.count())
}

/// `argv0 NUL (NAME=VALUE NUL)*`: environment values hold no NUL.
fn encode(request: &Request<'_>) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(request.argv0.as_bytes());
    out.push(0);
    for (name, value) in &request.env {
        out.extend_from_slice(name.as_bytes());
        out.push(b'=');
        out.extend_from_slice(value.as_bytes());
        out.push(0);
    }
    out
}

/// One answer, or `None` at the end of the stream.
async fn read_answer(answers: &mut UnixStream) -> io::Result<Option<(u32, i32)>> {
    let mut buf = [0u8; 8];
    match answers.read_exact(&mut buf).await {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let (what, number) = buf.split_at(4);
    let what = u32::from_le_bytes(what.try_into().map_err(io::Error::other)?);
    let number = i32::from_le_bytes(number.try_into().map_err(io::Error::other)?);
    Ok(Some((what, number)))
}

// ---- The spawner's process. ----

/// A call as the spawner received it.
struct Call {
    argv0: OsString,
    env: Vec<(OsString, OsString)>,
    stdin: OwnedFd,
    stdout: OwnedFd,
    answers: OwnedFd,
    roots: Vec<OwnedFd>,
}

/// The spawner's life: calls until the server's end of `socket` closes.
fn serve(socket: OwnedFd, run_tool: RunTool) -> ! {
    let code = match serve_until_closed(socket, run_tool) {
        Ok(()) => 0,
        Err(e) => {
            tell(format_args!("the spawner stops: {e}"));
            1
        }
    };
    std::process::exit(code)
}

fn serve_until_closed(socket: OwnedFd, run_tool: RunTool) -> io::Result<()> {
    let socket = keep_only(socket)?;
    warm_up();
    let title_area = ArgumentArea::find();
    // Slower calls where it fails, nothing else: the code stays the file's.
    let _ = super::anonymous_code::copy_code_to_anonymous_memory();
    // A child's end is read from a descriptor, not a handler.
    let mut sigchld = SigSet::empty();
    sigchld.add(Signal::SIGCHLD);
    sigchld.thread_block()?;
    let ended = SignalFd::with_flags(&sigchld, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)?;
    // Each running call's answering socket, by its pid.
    let mut running: HashMap<i32, OwnedFd> = HashMap::new();
    let mut buf = vec![0u8; MAX_REQUEST];
    loop {
        let mut fds = [
            PollFd::new(socket.as_fd(), PollFlags::POLLIN),
            PollFd::new(ended.as_fd(), PollFlags::POLLIN),
        ];
        match poll(&mut fds, PollTimeout::NONE) {
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
            Ok(_) => {}
        }
        let ready = |fd: &PollFd| fd.revents().is_some_and(|r| !r.is_empty());
        let (call_ready, child_ended) = (ready(&fds[0]), ready(&fds[1]));
        if child_ended {
            while let Ok(Some(_)) = ended.read_signal() {}
            reap(&mut running);
        }
        if call_ready {
            match receive(&socket, &mut buf)? {
                Received::Closed => {
                    stop_every_call(&mut running);
                    return Ok(());
                }
                Received::Malformed => {}
                Received::Call(call) => {
                    start(call, &sigchld, &mut running, run_tool, title_area.as_ref())
                }
            }
        }
    }
}

/// What every call's process would otherwise find out anew, once here:
/// the CPU's features (std's detection, and sha2's, which picks the SHA
/// instructions), and the number of CPUs the regex engine sizes its cache
/// pools by (read from the cgroup files at its first regex: glob's and
/// grep's patterns), so that each fork inherits them.
fn warm_up() {
    #[cfg(target_arch = "x86_64")]
    {
        let _ = std::arch::is_x86_feature_detected!("avx2");
    }
    use sha2::Digest;
    let _ = sha2::Sha256::digest(b"");
    let _ = regex::Regex::new("");
}

/// Leaves the spawner only `socket` (as descriptor 3), its stderr, and
/// /dev/null as stdin and stdout: the server's descriptors (its stdio
/// pipes, the command line's roots) must not reach any call.
fn keep_only(socket: OwnedFd) -> io::Result<OwnedFd> {
    let raw = socket.into_raw_fd();
    if raw != FIRST_ROOT_FD {
        dup2(raw, FIRST_ROOT_FD)?;
        nix::unistd::close(raw)?;
    }
    fcntl(FIRST_ROOT_FD, FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC))?;
    close_from(FIRST_ROOT_FD + 1)?;
    let null = nix::fcntl::open("/dev/null", OFlag::O_RDWR, nix::sys::stat::Mode::empty())?;
    dup2(null, 0)?;
    dup2(null, 1)?;
    nix::unistd::close(null)?;
    // SAFETY: descriptor 3 is the socket, open and owned by nothing else
    // (its first number was given up above).
    Ok(unsafe { OwnedFd::from_raw_fd(FIRST_ROOT_FD) })
}

/// Closes every descriptor from `first` on.
fn close_from(first: RawFd) -> io::Result<()> {
    let first = u32::try_from(first).map_err(io::Error::other)?;
    // SAFETY: close_range only closes descriptors; the callers own none
    // of those from `first` on through a live Rust object that would close
    // them again (they gave their numbers up or exit without dropping).
    if unsafe { libc::close_range(first, u32::MAX, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

enum Received {
    Closed,
    Malformed,
    Call(Call),
}

fn receive(socket: &OwnedFd, buf: &mut [u8]) -> io::Result<Received> {
    let mut control = nix::cmsg_space!([RawFd; FIXED_FDS + MAX_ROOTS]);
    let mut iov = [IoSliceMut::new(buf)];
    let (bytes, truncated, mut fds) = loop {
        match recvmsg::<()>(
            socket.as_raw_fd(),
            &mut iov,
            Some(&mut control),
            MsgFlags::MSG_CMSG_CLOEXEC,
        ) {
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
            Ok(msg) => {
                let mut fds = Vec::new();
                for cmsg in msg.cmsgs()? {
                    if let ControlMessageOwned::ScmRights(received) = cmsg {
                        for fd in received {
                            // SAFETY: the kernel just installed `fd` in this
                            // process for this message; nothing else owns it.
                            fds.push(unsafe { OwnedFd::from_raw_fd(fd) });
                        }
                    }
                }
                let truncated = msg.flags.intersects(MsgFlags::MSG_TRUNC | MsgFlags::MSG_CTRUNC);
                break (msg.bytes, truncated, fds);
            }
        }
    };
    if bytes == 0 && fds.is_empty() {
        return Ok(Received::Closed);
    }
    if truncated || fds.len() < FIXED_FDS {
        return Ok(Received::Malformed);
    }
    let mut fields = buf.get(..bytes).unwrap_or_default().split(|&b| b == 0);
    let argv0 = OsString::from_vec(fields.next().unwrap_or_default().to_vec());
    let env = fields
        .filter(|f| !f.is_empty())
        .filter_map(|f| {
            let at = f.iter().position(|&b| b == b'=')?;
            let (name, value) = f.split_at(at);
            Some((
                OsString::from_vec(name.to_vec()),
                OsString::from_vec(value.get(1..).unwrap_or_default().to_vec()),
            ))
        })
        .collect();
    let roots = fds.split_off(FIXED_FDS);
    let mut fixed = fds.into_iter();
    let (Some(stdin), Some(stdout), Some(answers)) = (fixed.next(), fixed.next(), fixed.next())
    else {
        return Ok(Received::Malformed);
    };
    Ok(Received::Call(Call { argv0, env, stdin, stdout, answers, roots }))
}

/// Forks the call's process and answers its pid (or why not).
fn start(
    call: Call,
    sigchld: &SigSet,
    running: &mut HashMap<i32, OwnedFd>,
    run_tool: RunTool,
    title_area: Option<&ArgumentArea>,
) {
    // SAFETY: the spawner has one thread (it was forked from a process
    // with one and starts none), so the child is a whole copy of it; the
    // child runs `become_call`, which never returns.
    match unsafe { fork() } {
        Err(e) => answer(&call.answers, FAILED, e as i32),
        Ok(ForkResult::Child) => become_call(call, sigchld, run_tool, title_area),
        Ok(ForkResult::Parent { child }) => {
            // Also in the child: whichever runs first, the group exists
            // before the server can signal it.
            let _ = setpgid(child, child);
            answer(&call.answers, STARTED, child.as_raw());
            // The call's pipes and roots close here: the child has them.
            running.insert(child.as_raw(), call.answers);
        }
    }
}

/// The server is gone (killed outright: a server that ends stops its calls
/// itself): nobody can read what the running calls answer, so they are
/// stopped as a cancellation stops one, rather than left to run to their
/// end (docs/MCP.md, "How a call runs").
fn stop_every_call(running: &mut HashMap<i32, OwnedFd>) {
    let groups: Vec<Group> =
        running.keys().map(|&pid| Group::led_by(nix::unistd::Pid::from_raw(pid))).collect();
    crate::process::group::stop_all(&groups, || reap(running));
}

/// Answers how every call's process that ended did.
fn reap(running: &mut HashMap<i32, OwnedFd>) {
    while let Ok(Some((pid, status))) = rustix::process::wait(rustix::process::WaitOptions::NOHANG)
    {
        if let Some(answers) = running.remove(&pid.as_raw_nonzero().get()) {
            answer(&answers, EXITED, status.as_raw());
        }
    }
}

/// One answer; a server that stopped listening (the call was cancelled)
/// is not an error.
fn answer(answers: &OwnedFd, what: u32, number: i32) {
    let mut buf = [0u8; 8];
    let (a, b) = buf.split_at_mut(4);
    a.copy_from_slice(&what.to_le_bytes());
    b.copy_from_slice(&number.to_le_bytes());
    let _ = nix::sys::socket::send(answers.as_raw_fd(), &buf, MsgFlags::MSG_NOSIGNAL);
}

// ---- The call's process. ----

/// In the forked child: the call's descriptors, environment, signal mask
/// and process group, then the tool as the binary runs it by its name.
fn become_call(
    call: Call,
    sigchld: &SigSet,
    run_tool: RunTool,
    title_area: Option<&ArgumentArea>,
) -> ! {
    let code = match set_up(call, sigchld, title_area) {
        Ok(argv0) => run_tool(argv0),
        Err(e) => {
            tell(format_args!("cannot set up a call's process: {e}"));
            127
        }
    };
    // The answer is written and flushed (`protocol::finish`, `print`):
    // nothing is left for exit's handlers (stdio, the loaded objects'
    // destructors), which cost each call's process more than its work.
    // SAFETY: _exit ends the process; it touches no memory of ours.
    unsafe { libc::_exit(code) }
}

fn set_up(call: Call, sigchld: &SigSet, title_area: Option<&ArgumentArea>) -> io::Result<OsString> {
    nix::sys::signal::sigprocmask(SigmaskHow::SIG_UNBLOCK, Some(sigchld), None)?;
    setpgid(Pid::from_raw(0), Pid::from_raw(0))?;
    // Named after its tool in ps and top, as a spawned call is by argv[0],
    // and its command line too (no exec rewrote the server's).
    let tool = call.argv0.to_string_lossy();
    let titles = [format!("ikigai-tools mcp: {tool}"), format!("mcp: {tool}")];
    title::name(&tool);
    if let Some(area) = title_area {
        area.write(&[&titles[0], &titles[1], &tool]);
    }
    // Raw numbers from here: `close_from` closes what is not kept.
    let stdin = call.stdin.into_raw_fd();
    let stdout = call.stdout.into_raw_fd();
    let _ = call.answers.into_raw_fd();
    let roots: Vec<RawFd> = call.roots.into_iter().map(IntoRawFd::into_raw_fd).collect();
    dup2(stdin, 0)?;
    dup2(stdout, 1)?;
    // The roots become 3, 4, … : first each above every number in play,
    // so that no dup2 closes a root not yet moved.
    let count = RawFd::try_from(roots.len()).map_err(io::Error::other)?;
    let above = roots.iter().copied().chain([stdin, stdout, FIRST_ROOT_FD + count]).max();
    let above = above.unwrap_or(FIRST_ROOT_FD + count) + 1;
    let mut moved = Vec::with_capacity(roots.len());
    for fd in &roots {
        moved.push(fcntl(*fd, FcntlArg::F_DUPFD(above))?);
    }
    let mut numbers = Vec::with_capacity(moved.len());
    for (target, fd) in (FIRST_ROOT_FD..).zip(&moved) {
        dup2(*fd, target)?;
        numbers.push(target.to_string());
    }
    close_from(FIRST_ROOT_FD + count)?;
    for (name, value) in &call.env {
        std::env::set_var(name, value);
    }
    if numbers.is_empty() {
        std::env::remove_var(ROOT_FDS_VAR);
    } else {
        std::env::set_var(ROOT_FDS_VAR, numbers.join(":"));
    }
    Ok(call.argv0)
}
