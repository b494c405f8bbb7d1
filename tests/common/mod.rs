//! The test harness: a fixture tree in a temporary directory and the real
//! binary run through a symlink, as a host runs it (`argv[0]` dispatch,
//! JSON on stdin or in `$1`, one JSON object back).
#![allow(dead_code)]

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub mod answer;
pub mod dispositions;
pub mod fuzz;
pub mod http_server;
pub mod layers;
pub mod mcp;
pub mod memory_cage;
pub mod procs;
pub mod sigkill;

/// The binary cargo built for the tests, at a path that `nobody` can reach
/// when the tests run as root (see [`reachable_copy`]).
pub fn binary() -> PathBuf {
    static BINARY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BINARY.get_or_init(|| reachable_copy(Path::new(env!("CARGO_BIN_EXE_ikigai-tools")))).clone()
}

/// As root, the tests run tools as `nobody`, which cannot reach a binary in
/// a clone under a mode-700 directory (`/root`, `mktemp -d`). Then the
/// binary is copied once per build to a world-readable directory under the
/// temporary directory, named after the build's size and time, replacing
/// the copies of earlier builds.
fn reachable_copy(built: &Path) -> PathBuf {
    if !is_root() || reachable_by_others(built) {
        return built.to_path_buf();
    }
    let meta = fs::metadata(built).expect("the built binary");
    let mtime = meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    let key = format!("{}-{}", meta.len(), mtime.map_or(0, |d| d.as_nanos()));
    let parent = std::env::temp_dir().join("ikigai-tools-test-binary");
    let dir = parent.join(&key);
    let copy = dir.join("ikigai-tools");
    if fs::metadata(&copy).is_ok_and(|m| m.len() == meta.len()) {
        return copy;
    }
    for stale in fs::read_dir(&parent).into_iter().flatten().flatten() {
        if stale.file_name() != key.as_str() {
            let _ = fs::remove_dir_all(stale.path());
        }
    }
    fs::create_dir_all(&dir).expect("mkdir for the reachable binary");
    for d in [&parent, &dir] {
        fs::set_permissions(d, fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    // Copied under another name, then renamed: a test process running at the
    // same time never runs half a binary.
    let partial = dir.join(format!(".ikigai-tools.{}", std::process::id()));
    fs::copy(built, &partial).expect("copy the binary where nobody reaches it");
    fs::set_permissions(&partial, fs::Permissions::from_mode(0o755)).expect("chmod");
    fs::rename(&partial, &copy).expect("rename the copy");
    eprintln!(
        "tests: {} is out of nobody's reach; the tests run a copy at {}",
        built.display(),
        copy.display()
    );
    copy
}

/// Whether a user other than the owner can execute `path`: the file and
/// every directory above it grant it to others.
fn reachable_by_others(path: &Path) -> bool {
    let executable =
        |p: &Path, bits: u32| fs::metadata(p).is_ok_and(|m| m.permissions().mode() & bits == bits);
    executable(path, 0o005) && path.ancestors().skip(1).all(|dir| executable(dir, 0o001))
}

/// Stores snapshots in the top-level `snapshots/` directory.
#[macro_export]
macro_rules! snap {
    ($name:expr, $value:expr) => {
        insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => true}, {
            insta::assert_json_snapshot!($name, $value);
        })
    };
}

/// Stores a text snapshot (a help text) in the top-level `snapshots/`.
#[macro_export]
macro_rules! snap_text {
    ($name:expr, $value:expr) => {
        insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => true}, {
            insta::assert_snapshot!($name, $value);
        })
    };
}

/// A temporary directory with `bin/` (links to the binary) and `work/` (the
/// fixture tree, and the tools' working directory).
pub struct Env {
    root: tempfile::TempDir,
}

impl Default for Env {
    fn default() -> Self {
        Self::new()
    }
}

impl Env {
    pub fn new() -> Env {
        let root = tempfile::Builder::new().prefix("ikigai-tools-test").tempdir().expect("tempdir");
        // World-traversable, so that a tool run as `nobody` reaches the fixtures.
        fs::set_permissions(root.path(), fs::Permissions::from_mode(0o755)).expect("chmod");
        fs::create_dir(root.path().join("bin")).expect("mkdir bin");
        fs::create_dir(root.path().join("work")).expect("mkdir work");
        Env { root }
    }

    /// The working directory of the tools: fixtures go here.
    pub fn work(&self) -> PathBuf {
        self.root.path().join("work")
    }

    /// A path under `work/`.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.work().join(rel)
    }

    /// What an answer adds after a relative path under `work/` that was
    /// not found (` (looked for ABS)`), or refused (` (resolved to ABS)`):
    /// `work/REL` as the system names it, links resolved (docs/SPEC.md,
    /// "Error codes").
    pub fn looked_for(&self, rel: &str) -> String {
        format!(" (looked for {})", self.real_path(rel))
    }

    /// See `looked_for`.
    pub fn resolved_to(&self, rel: &str) -> String {
        format!(" (resolved to {})", self.real_path(rel))
    }

    /// `work/REL` as the system names it, links resolved.
    pub fn real_path(&self, rel: &str) -> String {
        let work = fs::canonicalize(self.work()).expect("work/");
        work.join(rel).display().to_string()
    }

    /// `answer` with the path of `work/` (links resolved) as `[WORK]`: an
    /// answer that names what was looked for, ready for a snapshot or for
    /// comparison with another `Env`'s.
    pub fn redacted(&self, answer: Value) -> Value {
        let work = fs::canonicalize(self.work()).expect("work/").display().to_string();
        let text = answer.to_string().replace(&work, "[WORK]");
        serde_json::from_str(&text).expect("still JSON")
    }

    /// Writes a fixture file, creating its directories.
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path(rel);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).expect("mkdir -p");
        }
        fs::write(&p, contents).expect("write fixture");
        p
    }

    /// A new directory `name` beside `work/` (an `outside/`, a `tmp/`): not
    /// under the tools' working directory, still in the test's own tree.
    pub fn beside(&self, name: &str) -> PathBuf {
        let p = self.root.path().join(name);
        fs::create_dir(&p).expect("mkdir beside work/");
        p
    }

    pub fn mkdir(&self, rel: &str) -> PathBuf {
        let p = self.path(rel);
        fs::create_dir_all(&p).expect("mkdir -p");
        p
    }

    pub fn read(&self, rel: &str) -> Vec<u8> {
        fs::read(self.path(rel)).expect("read fixture")
    }

    /// A symlink named `name` in `bin/` that points at the binary.
    pub fn link(&self, name: &str) -> PathBuf {
        let link = self.root.path().join("bin").join(name);
        if fs::symlink_metadata(&link).is_err() {
            std::os::unix::fs::symlink(binary(), &link).expect("symlink");
        }
        link
    }

    /// A call of the tool (or suite) linked as `name`, in `work/`.
    pub fn cmd(&self, name: &str) -> Call {
        let mut command = Command::new(self.link(name));
        command.current_dir(self.work());
        Call { command, stdin: None, as_nobody: false, timeout: Duration::from_secs(120) }
    }

    /// `ikigai-tools ARGS` (a host command) started in `work/` and left
    /// running, stdout piped and stderr dropped, for tests that act on it
    /// while it runs (kill it, wait for what it started).
    pub fn spawn_suite(&self, args: &[&str]) -> std::process::Child {
        Command::new(self.link("ikigai-tools"))
            .args(args)
            .current_dir(self.work())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn ikigai-tools")
    }

    /// The ikigai dialect: arguments on stdin.
    pub fn run(&self, name: &str, stdin: &str) -> Ran {
        self.cmd(name).stdin(stdin).run()
    }

    /// The ikigai dialect with a JSON value, expecting a clean exit 0 and
    /// returning the answer object.
    pub fn call(&self, name: &str, args: Value) -> Value {
        let ran = self.run(name, &args.to_string());
        assert_eq!(ran.code, Some(0), "exit code; stderr: {}", ran.stderr);
        ran.json()
    }

    /// A call in the full profile (`IKIGAI_TOOLS_PROFILE=full`), ikigai
    /// dialect: the whole run, to look at stderr or the exit status too.
    pub fn run_full(&self, name: &str, args: &Value) -> Ran {
        self.cmd(name).env("IKIGAI_TOOLS_PROFILE", "full").stdin(args.to_string()).run()
    }

    /// As [`Env::call`], in the full profile.
    pub fn call_full(&self, name: &str, args: Value) -> Value {
        let ran = self.run_full(name, &args);
        assert_eq!(ran.code, Some(0), "exit code; stderr: {}", ran.stderr);
        ran.json()
    }

    /// The shellclaw dialect: arguments in `$1`.
    pub fn run_arg(&self, name: &str, arg: &str) -> Ran {
        self.cmd(name).arg(arg).run()
    }
}

pub struct Call {
    command: Command,
    stdin: Option<Vec<u8>>,
    as_nobody: bool,
    timeout: Duration,
}

impl Call {
    pub fn arg(mut self, a: impl AsRef<std::ffi::OsStr>) -> Call {
        self.command.arg(a);
        self
    }

    pub fn stdin(mut self, input: impl AsRef<[u8]>) -> Call {
        self.stdin = Some(input.as_ref().to_vec());
        self
    }

    pub fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Call {
        self.command.env(key, value);
        self
    }

    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Call {
        self.command.current_dir(dir);
        self
    }

    pub fn timeout(mut self, t: Duration) -> Call {
        self.timeout = t;
        self
    }

    /// Runs the tool as uid/gid 65534 so that permission checks hold under
    /// root (CI runs the tests as root). A builder step, named for how it
    /// reads at the call site.
    #[allow(clippy::wrong_self_convention)]
    pub fn as_nobody(mut self) -> Call {
        self.as_nobody = true;
        self
    }

    pub fn run(self) -> Ran {
        let Call { command, stdin, as_nobody, timeout } = self;
        let mut command = if as_nobody && is_root() {
            let mut wrapped = Command::new("setpriv");
            wrapped.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]);
            wrapped.arg(command.get_program()).args(command.get_args());
            if let Some(dir) = command.get_current_dir() {
                wrapped.current_dir(dir);
            }
            for (k, v) in command.get_envs() {
                match v {
                    Some(v) => wrapped.env(k, v),
                    None => wrapped.env_remove(k),
                };
            }
            wrapped
        } else {
            command
        };
        command
            .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("spawn the tool");
        if let Some(input) = stdin {
            let mut pipe = child.stdin.take().expect("stdin pipe");
            // A tool may answer without reading everything: ignore EPIPE.
            std::thread::spawn(move || {
                let _ = pipe.write_all(&input);
            });
        }
        let stdout = child.stdout.take().expect("stdout pipe");
        let stderr = child.stderr.take().expect("stderr pipe");
        let out_reader = std::thread::spawn(move || read_all(stdout));
        let err_reader = std::thread::spawn(move || read_all(stderr));
        let start = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            if start.elapsed() > timeout {
                let _ = child.kill();
                panic!("the tool did not finish within {timeout:?}");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        use std::os::unix::process::ExitStatusExt;
        Ran {
            stdout: out_reader.join().expect("stdout reader"),
            stderr: String::from_utf8_lossy(&err_reader.join().expect("stderr reader"))
                .into_owned(),
            code: status.code(),
            signal: status.signal(),
            elapsed: start.elapsed(),
        }
    }
}

fn read_all(mut r: impl std::io::Read) -> Vec<u8> {
    let mut buf = Vec::new();
    let _ = r.read_to_end(&mut buf);
    buf
}

/// A mode taken away for the length of a test: `chmod MODE PATH` now, the
/// mode the path had given back when the guard is dropped, after a panic
/// too. A directory its owner may not read or enter cannot be emptied:
/// `rm -rf` fails on it, and so does the removal of the test's temporary
/// directory, which a normal user would find left in `/tmp` (root is not
/// stopped by modes). Every test that takes permissions away does it
/// through this guard, bound to a name (`let _mode = ...`: `_` alone drops
/// it at once), after the `Env` whose tree it changes.
#[must_use = "the mode is given back when the guard is dropped: bind it to a name"]
pub struct ModeGuard {
    path: PathBuf,
    mode: u32,
}

impl ModeGuard {
    /// Gives `path` the mode `mode`, until the guard is dropped.
    pub fn set(path: impl AsRef<Path>, mode: u32) -> ModeGuard {
        let guard = ModeGuard::keep(path);
        fs::set_permissions(&guard.path, fs::Permissions::from_mode(mode)).expect("chmod");
        guard
    }

    /// Gives `path` its present mode back when the guard is dropped,
    /// whatever changes it meanwhile (a command the test runs).
    pub fn keep(path: impl AsRef<Path>) -> ModeGuard {
        let path = path.as_ref().to_path_buf();
        let mode = fs::metadata(&path).expect("stat").permissions().mode() & 0o7777;
        ModeGuard { path, mode }
    }
}

impl Drop for ModeGuard {
    fn drop(&mut self) {
        let _ = fs::set_permissions(&self.path, fs::Permissions::from_mode(self.mode));
    }
}

/// Says that the running test (or a part of it) is skipped, and why, where
/// `cargo test` shows it: straight to stderr, past the harness's capture of
/// `eprintln!`, so that a skip is never silent. The test's name is its
/// thread's.
pub fn skipped(why: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let _ = writeln!(std::io::stderr(), "{test}: skipped: {why}");
}

/// As root, gives `dirs` and all they hold to the tools' user (uid and gid
/// 65534, as [`Call::as_nobody`] runs them), so that a tool run as nobody
/// may write there; as anyone else, the tools run as the owner already.
pub fn give_to_tool_user(dirs: &[&Path]) {
    if !is_root() {
        return;
    }
    for dir in dirs {
        let status = Command::new("chown").args(["-R", "65534:65534"]).arg(dir).status();
        assert!(status.expect("chown").success(), "chown -R 65534:65534 {}", dir.display());
    }
}

pub fn is_root() -> bool {
    nix::unistd::Uid::effective().is_root()
}

/// What one run of the binary gave.
#[derive(Debug)]
pub struct Ran {
    pub stdout: Vec<u8>,
    pub stderr: String,
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub elapsed: Duration,
}

impl Ran {
    /// The one JSON object on stdout: compact, no trailing newline, nothing
    /// after it.
    pub fn json(&self) -> Value {
        let text = std::str::from_utf8(&self.stdout).expect("stdout is UTF-8");
        assert!(
            text.starts_with('{') && text.ends_with('}'),
            "one compact object on stdout, got {text:?}"
        );
        let v: Value = serde_json::from_str(text).expect("stdout is one JSON value");
        assert!(v.is_object(), "stdout is an object");
        v
    }

    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// The envelope of a call in the seed profile that sends `param`, a
/// parameter of `tool`'s full schema (docs/SPEC.md, "Bad input").
pub fn full_only(param: &str, tool: &str) -> Value {
    serde_json::json!({
        "error": format!(
            "parameter {param} is a full-profile parameter of {tool}; this call runs the seed \
             profile (set IKIGAI_TOOLS_PROFILE=full, or install with install.sh --profile full; \
             the MCP server serves full by default)"
        ),
        "error_code": "INVALID_ARG"
    })
}
