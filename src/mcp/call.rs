//! One `tools/call` as a child process of this very binary: `/proc/self/exe`
//! named after the tool, the JSON arguments on stdin (the ikigai dialect),
//! one JSON object back on stdout. The command line's code path answers,
//! and a call that crashes, aborts or kills itself takes only its own
//! process with it.
//!
//! The child leads its own process group, so that a cancellation reaches
//! everything it started in that group; bash puts its command in a session
//! of its own and kills it when told to stop (SIGTERM), which is why the
//! group gets SIGTERM first and SIGKILL only after a grace.
//!
//! The group is stopped as every group is, by `crate::process`.

use std::ffi::OsStr;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::Signal;
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::roots::Allowed;
use super::spawner::{Request, Spawner};
use crate::confine::{ROOTS_FROM_VAR, ROOTS_VAR, ROOT_FDS_VAR};
use crate::context::{IMAGES_VAR, MAX_OUTPUT_VAR};
use crate::process::{Group, SETTLE_AFTER_KILL, STOP_GRACE};
use crate::profile::{Profile, PROFILE_VAR};
use crate::tools::Tool;

/// What the child left behind.
pub struct Finished {
    pub stdout: Vec<u8>,
    pub status: ExitStatus,
}

/// How a call ended.
pub enum Ended {
    Finished(Finished),
    /// Cancelled by the client or by the server's shutdown: the child's
    /// group was stopped and nothing is to be answered.
    Stopped,
}

/// How the server runs every call, whatever its transport or session.
#[derive(Clone)]
pub struct CallSettings {
    /// The profile whose tools are listed and run.
    pub profile: Profile,
    /// The output limit every call gets (`None`: none): docs/MCP.md,
    /// "Answers sized for the hosts".
    pub max_output: Option<usize>,
    /// Forks the calls' processes ([`super::start_spawner`]; `None`: each
    /// is spawned anew).
    pub spawner: Option<Arc<Spawner>>,
}

/// What every call shares: the server's profile, its shutdown, and the
/// number of calls running, so that the shutdown can wait for their
/// processes to be gone.
#[derive(Clone)]
pub struct Calls {
    profile: Profile,
    /// The output limit every call gets (`None`: none): docs/MCP.md,
    /// "Answers sized for the hosts".
    max_output: Option<usize>,
    /// `max_output` as the call's `IKIGAI_TOOLS_MAX_OUTPUT` (0: none).
    max_output_var: Arc<String>,
    /// The session's namespace of jobs (`IKIGAI_TOOLS_SESSION`, random):
    /// its jobs are seen by its calls only, and end with it.
    session: Arc<String>,
    shutdown: CancellationToken,
    running: Arc<watch::Sender<usize>>,
    /// Forks the calls' processes (`None`: it could not start).
    spawner: Option<Arc<Spawner>>,
}

/// Counts a call as running while it lives.
struct Running(Arc<watch::Sender<usize>>);

impl Running {
    fn new(count: &Arc<watch::Sender<usize>>) -> Running {
        count.send_modify(|n| *n += 1);
        Running(Arc::clone(count))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
}

impl Calls {
    /// The calls of one session (or of the stateless requests), as the
    /// server's settings say: each has its own jobs' namespace.
    pub fn new(settings: &CallSettings) -> Calls {
        let CallSettings { profile, max_output, spawner } = settings.clone();
        Calls {
            profile,
            max_output,
            max_output_var: Arc::new(max_output.unwrap_or(0).to_string()),
            session: Arc::new(crate::jobs::state::new_id().unwrap_or_else(|_| {
                format!("{}-{:?}", std::process::id(), std::time::SystemTime::now())
            })),
            shutdown: CancellationToken::new(),
            running: Arc::new(watch::Sender::new(0)),
            spawner,
        }
    }

    /// The output limit of every call.
    pub fn max_output(&self) -> Option<usize> {
        self.max_output
    }

    /// Stops every running call (as a cancellation does) and waits, at most
    /// the grace and a little, until their processes are gone.
    pub async fn shutdown_and_wait(&self) {
        self.shutdown.cancel();
        let mut count = self.running.subscribe();
        let all_stopped = count.wait_for(|n| *n == 0);
        let _ = tokio::time::timeout(
            STOP_GRACE + SETTLE_AFTER_KILL + Duration::from_millis(200),
            all_stopped,
        )
        .await;
        // The session's jobs end with it (the full profile's only).
        if self.profile.is_full() {
            let settings = self.jobs_settings();
            let _ =
                tokio::task::spawn_blocking(move || crate::jobs::control::end_all(&settings)).await;
        }
    }

    /// Whether a call of the session runs, or a job of it (the full
    /// profile's): an idle HTTP session is kept while one does.
    pub async fn busy(&self) -> bool {
        if *self.running.borrow() > 0 {
            return true;
        }
        if !self.profile.is_full() {
            return false;
        }
        let settings = self.jobs_settings();
        tokio::task::spawn_blocking(move || crate::jobs::control::any_running(&settings))
            .await
            .unwrap_or(true)
    }

    /// The job tools' settings for the session's namespace.
    fn jobs_settings(&self) -> crate::jobs::Settings {
        let mut settings = crate::jobs::Settings::from_env(self.profile);
        settings.session = Some(self.session.as_str().to_owned());
        settings
    }

    /// Runs `tool` with `args` (a JSON object's text) to its end, or until
    /// `cancel` fires or the server shuts down. The spawner forks its
    /// process; without one (or once it is gone) it is spawned anew.
    pub async fn run(
        &self,
        tool: &Tool,
        args: Vec<u8>,
        roots: Option<&Allowed>,
        cancel: CancellationToken,
    ) -> io::Result<Ended> {
        let _running = Running::new(&self.running);
        if self.shutdown.is_cancelled() {
            return Ok(Ended::Stopped);
        }
        let request = self.request(tool, roots);
        let forked = match &self.spawner {
            Some(spawner) => spawner.spawn(&request).await?,
            None => None,
        };
        if let Some(mut forked) = forked {
            let pgid = Some(forked.pid);
            let work = async {
                let out = exchange(forked.stdin.take(), &mut forked.stdout, &args).await?;
                let status = forked.status().await?;
                Ok(Finished { stdout: out, status })
            };
            return self.until_done(pgid, work, cancel).await;
        }
        let mut child = spawn_in_own_group(&request, roots)?;
        let pgid = child.id().and_then(|id| i32::try_from(id).ok()).map(Pid::from_raw);
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let work = async {
            let out = match stdout {
                Some(mut pipe) => exchange(stdin, &mut pipe, &args).await?,
                None => Vec::new(),
            };
            let status = child.wait().await?;
            Ok::<_, io::Error>(Finished { stdout: out, status })
        };
        self.until_done(pgid, work, cancel).await
    }

    /// The call's process as the spawner forks it, or `spawn_in_own_group`
    /// spawns it: its name and the environment settings of the call.
    fn request<'a>(&'a self, tool: &'a Tool, roots: Option<&'a Allowed>) -> Request<'a> {
        let mut env = vec![
            // The call runs in the profile the server lists its tools in.
            (PROFILE_VAR, OsStr::new(self.profile.name())),
            (crate::jobs::settings::SESSION_VAR, OsStr::new(self.session.as_str())),
            // An MCP client takes image content: file_read may answer an
            // image as one (full profile).
            (IMAGES_VAR, OsStr::new("1")),
            // The tool cuts its own answer, head, tail and marker (0: none).
            (MAX_OUTPUT_VAR, OsStr::new(self.max_output_var.as_str())),
        ];
        if let Some(roots) = roots {
            env.push((ROOTS_VAR, roots.env_value()));
            // What a refusal names as setting them (`confine::source`).
            env.push((ROOTS_FROM_VAR, OsStr::new(roots.source().name())));
        }
        Request { argv0: tool.command, env, roots: roots.map(Allowed::raw_fds).unwrap_or_default() }
    }

    /// `work` to its end, or the group `pgid` stopped when `cancel` fires
    /// or the server shuts down.
    async fn until_done(
        &self,
        pgid: Option<Pid>,
        work: impl std::future::Future<Output = io::Result<Finished>>,
        cancel: CancellationToken,
    ) -> io::Result<Ended> {
        tokio::select! {
            finished = work => return finished.map(Ended::Finished),
            () = cancel.cancelled() => {}
            () = self.shutdown.cancelled() => {}
        }
        if let Some(pgid) = pgid {
            stop_group(pgid).await;
        }
        Ok(Ended::Stopped)
    }
}

/// Writes `args` to the tool's stdin, closes it, and reads its stdout to
/// the end. The tool reads all of stdin before it writes anything, so
/// writing first and reading after cannot deadlock.
async fn exchange(
    stdin: Option<impl AsyncWrite + Unpin>,
    stdout: &mut (impl AsyncRead + Unpin),
    args: &[u8],
) -> io::Result<Vec<u8>> {
    if let Some(mut pipe) = stdin {
        // A tool that dies early closes its end: its status says why.
        let _ = pipe.write_all(args).await;
    }
    let mut out = Vec::new();
    stdout.read_to_end(&mut out).await?;
    Ok(out)
}

/// Starts the call `request` names as a child of this binary, in a process
/// group of its own, with piped stdin and stdout and the server's stderr,
/// confined to `roots` when there are any (the tools take them from their
/// environment and the descriptors it names).
///
/// No `pre_exec` (a parent-death signal would need one): it turns std's
/// posix_spawn (vfork) into fork + exec, which cost about 0.3 ms more CPU
/// per call here and broke the speed target. The server stops its calls
/// itself on stdin's end and on SIGTERM, SIGINT or SIGHUP; a SIGKILL of the
/// server leaves calls spawned this way (the spawner gone) to run to their
/// end, where the spawner stops the calls it forked.
fn spawn_in_own_group(request: &Request, roots: Option<&Allowed>) -> io::Result<Child> {
    let mut command = Command::new("/proc/self/exe");
    command
        // argv[0] picks the tool, as a link in libexec/ikigai does.
        .arg0(request.argv0)
        .envs(request.env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0);
    // The roots travel as the session's descriptors, inherited (their
    // close-on-exec flag cleared only for this spawn), so that a command
    // that renames a root and puts a link in its place changes nothing for
    // later calls (docs/MCP.md, "Confining a session").
    match roots {
        Some(roots) => {
            // The names are among the request's variables.
            command.env(ROOT_FDS_VAR, roots.fds_value());
            let _inheriting = roots.inherited()?;
            command.spawn()
        }
        None => {
            command.env_remove(ROOT_FDS_VAR);
            command.spawn()
        }
    }
}

/// Stops the process group `pgid` led by a child of ours, as every group is
/// stopped (`crate::process::Group::stop`: SIGTERM, a grace, SIGKILL,
/// until gone), on a blocking thread. Reaping the leader is left to tokio
/// (the child handle was dropped); a zombie does not count as alive.
async fn stop_group(pgid: Pid) {
    let group = Group::led_by(pgid);
    let _ = tokio::task::spawn_blocking(move || group.stop(|| {})).await;
}

/// A one-line account of a child that did not answer with a JSON object.
pub fn describe_exit(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (_, Some(signal)) => {
            let name = Signal::try_from(signal).map(|s| s.as_str()).unwrap_or("unknown signal");
            format!("was killed by signal {signal} ({name})")
        }
        (Some(code), _) => format!("exited with status {code}"),
        (None, None) => "ended".to_owned(),
    }
}
