//! The break "the command moves the walls", found by attacking the roots,
//! guarded: nothing a confined command does inside the roots changes what
//! a later call's roots are (docs/CONFINEMENT.md and docs/MCP.md,
//! "Confining a session").
//!
//! In each test the confined command itself is the attacker: a bash call
//! renames the directory holding a root away and puts a link to `outside/`
//! at the root's name (renaming the root itself fails: in bash's namespace
//! a root is a mount point), and the next calls try to read and write there
//! through the root's old name. Nothing outside may be read or changed.
//!
//! - With roots by name (a host's `IKIGAI_TOOLS_ROOTS`), a root reached
//!   through another root is refused once it leads out of it.
//! - An MCP session holds its roots as descriptors: the move only moved the
//!   directory, which later calls still find.
//!
//! The fixture: `work/a` and `work/a/p/b` (or a link to it) are the roots,
//! `outside/` beside `work/` is not, and `TMPDIR` is `tmp/` beside them.

use crate::common;
use crate::common::mcp::{answer_roots_list, exists, file_uri, Session};
use common::*;

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

const SECRET: &str = "SECRET outside the roots";

struct Fixture {
    env: Env,
    outside: PathBuf,
    tmp: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let env = Env::new();
        let (outside, tmp) = (env.beside("outside"), env.beside("tmp"));
        fs::write(outside.join("secret.txt"), SECRET).expect("write the secret");
        env.mkdir("a/p/b");
        Fixture { env, outside, tmp }
    }

    /// A tool run with `IKIGAI_TOOLS_ROOTS=roots`, as a host runs it.
    fn call(&self, tool: &str, roots: &str, args: Value) -> Value {
        let ran = self
            .env
            .cmd(tool)
            .env("TMPDIR", &self.tmp)
            .env("IKIGAI_TOOLS_ROOTS", roots)
            .stdin(args.to_string())
            .run();
        assert_eq!(ran.code, Some(0), "stderr: {}", ran.stderr);
        ran.json()
    }

    /// The attack, as a shell command: the directory holding `dir` renamed
    /// to `.old` (with `dir` in it: see [`moved`]), made anew, and a link to
    /// `outside/` put at `dir`'s name.
    fn move_the_wall(&self, dir: &Path) -> String {
        let parent = dir.parent().expect("a root below a directory");
        format!(
            "mv '{0}' '{0}.old' && mkdir '{0}' && ln -s '{1}' '{2}' && echo moved",
            parent.display(),
            self.outside.display(),
            dir.display()
        )
    }

    /// Nothing outside was written, and the secret is as it was.
    fn assert_outside_untouched(&self) {
        let mut names: Vec<String> = fs::read_dir(&self.outside)
            .expect("list outside")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["secret.txt"], "something was written outside the roots");
        assert_eq!(fs::read_to_string(self.outside.join("secret.txt")).expect("read"), SECRET);
    }
}

/// Asserts that `answer` (a tool's JSON object) never shows the secret.
fn assert_no_secret(answer: &Value) {
    assert!(!answer.to_string().contains(SECRET), "the secret leaked: {answer}");
}

/// Where [`Fixture::move_the_wall`] put the directory that was at `dir`.
fn moved(dir: &Path) -> PathBuf {
    let parent = dir.parent().expect("a root below a directory");
    let name = parent.file_name().unwrap_or_default().to_string_lossy();
    parent.with_file_name(format!("{name}.old")).join(dir.file_name().unwrap_or_default())
}

/// The three tries through the moved root's old name `dir`: file_write,
/// file_read, bash writing; each answer returned for the caller to check.
fn tries(dir: &Path) -> [(&'static str, Value); 3] {
    [
        ("file_write", json!({"file_path": dir.join("w.txt"), "content": "escaped"})),
        ("file_read", json!({"file_path": dir.join("secret.txt")})),
        ("bash", json!({"command": format!("echo escaped > '{}'", dir.join("b.txt").display())})),
    ]
}

/// Guards the break "the command moves the walls", found by attacking the
/// roots: with roots by name (`IKIGAI_TOOLS_ROOTS`), one root inside another, a
/// command moved the inner one away and put a link to the outside at its name,
/// and later calls followed it.
#[test]
fn env_nested_root_moved_by_the_command_gains_nothing() {
    let f = Fixture::new();
    let (a, b) = (f.env.path("a"), f.env.path("a/p/b"));
    let roots = format!("{}:{}", a.display(), b.display());
    let moved = f.call("bash", &roots, json!({"command": f.move_the_wall(&b)}));
    assert_eq!(moved["output"], "moved", "the command could not move the root: {moved}");
    for (tool, args) in tries(&b) {
        let answer = f.call(tool, &roots, args);
        assert_no_secret(&answer);
        assert_eq!(answer["error_code"], "PERMISSION_DENIED", "{tool}: {answer}");
        let error = answer["error"].as_str().unwrap_or_default();
        let expected = format!(
            "Permission denied: allowed root {} is reached through allowed root {}",
            b.display(),
            a.display()
        );
        assert!(error.starts_with(&expected), "{tool}: {error}");
    }
    f.assert_outside_untouched();
}

/// Guards the break "the command moves the walls", found by attacking the
/// roots: with roots by name, a root reached through a link in another root was
/// re-pointed by a command at the outside.
#[test]
fn env_root_through_a_link_in_another_root_gains_nothing() {
    let f = Fixture::new();
    let (a, b) = (f.env.path("a"), f.env.path("a/p/b"));
    let link = f.env.path("link");
    std::os::unix::fs::symlink(&b, &link).expect("symlink");
    let roots = format!("{}:{}", a.display(), link.display());
    // Before: the root reached through the link works.
    let wrote = f.call("file_write", &roots, json!({"file_path": link.join("f"), "content": "x"}));
    assert!(wrote.get("error").is_none(), "{wrote}");
    assert_eq!(f.env.read("a/p/b/f"), b"x");
    let moved = f.call("bash", &roots, json!({"command": f.move_the_wall(&b)}));
    assert_eq!(moved["output"], "moved", "the command could not move the root: {moved}");
    for (tool, args) in tries(&link) {
        let answer = f.call(tool, &roots, args);
        assert_no_secret(&answer);
        assert_eq!(answer["error_code"], "PERMISSION_DENIED", "{tool}: {answer}");
    }
    f.assert_outside_untouched();
}

/// The tries of [`tries`] over MCP, each answer checked to hold no secret;
/// then a write by the old name, which must land in the moved directory.
fn mcp_tries(session: &mut Session, dir: &Path) {
    for (id, (tool, args)) in (10..).zip(tries(dir)) {
        let answer = session.call(id, tool, args);
        assert!(!answer.to_string().contains(SECRET), "{tool}: the secret leaked: {answer}");
    }
    let moved = moved(dir);
    let answer =
        session.call(20, "file_write", json!({"file_path": dir.join("later"), "content": "x"}));
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert!(exists(&moved.join("later")), "a later call did not reach the moved root");
}

/// Guards the break "the command moves the walls", found by attacking the
/// roots: in an MCP session with nested `--root`s, a command moved the inner
/// one away and put a link to the outside at its name.
#[test]
fn mcp_nested_roots_moved_by_the_command_gain_nothing() {
    let f = Fixture::new();
    let (a, b) = (f.env.path("a"), f.env.path("a/p/b"));
    let args = ["--root".as_ref(), a.as_os_str(), "--root".as_ref(), b.as_os_str()];
    let mut session = Session::initialized_with(&f.env, &args, json!({}));
    let moved = session.call(2, "bash", json!({"command": f.move_the_wall(&b)}));
    assert_eq!(moved["result"]["structuredContent"]["output"], "moved", "{moved}");
    mcp_tries(&mut session, &b);
    f.assert_outside_untouched();
}

/// Guards the break "the command moves the walls", found by attacking the
/// roots: in an MCP session confined by nested roots of the client, a command
/// moved the inner one away and put a link to the outside at its name.
#[test]
fn mcp_client_roots_moved_by_the_command_gain_nothing() {
    let f = Fixture::new();
    let (a, b) = (f.env.path("a"), f.env.path("a/p/b"));
    let offers_roots = json!({"roots": {"listChanged": true}});
    let mut session = Session::initialized_with(&f.env, &[], offers_roots);
    answer_roots_list(&mut session, &[file_uri(&a), file_uri(&b)]);
    let moved = session.call(2, "bash", json!({"command": f.move_the_wall(&b)}));
    assert_eq!(moved["result"]["structuredContent"]["output"], "moved", "{moved}");
    mcp_tries(&mut session, &b);
    f.assert_outside_untouched();
}

/// Guards the same break for an MCP session whose `--root` lies directly in
/// the server's temporary directory: a command renamed the root away and
/// put a link to the outside at its name.
#[test]
fn mcp_root_under_the_temporary_directory_moved_by_the_command_gains_nothing() {
    // The server's TMPDIR is `tmp/` (see `Session::start_with`): a root in
    // it, as a `mktemp -d` workspace is. bash may write only its private
    // directory there (docs/CONFINEMENT.md), so the root stays in place.
    let f = Fixture::new();
    let proj = f.env.mkdir("../tmp/proj");
    let mut session =
        Session::initialized_with(&f.env, &["--root".as_ref(), proj.as_os_str()], json!({}));
    let attack = format!(
        "mv '{0}' '{0}.old' && ln -s '{1}' '{0}' && echo moved",
        proj.display(),
        f.outside.display()
    );
    let tried = session.call(2, "bash", json!({ "command": attack }));
    let output = tried["result"]["structuredContent"]["output"].as_str().unwrap_or_default();
    assert!(output.starts_with("mv: cannot move"), "the root was moved: {tried}");
    for (id, (tool, args)) in (10..).zip(tries(&proj)) {
        let answer = session.call(id, tool, args);
        assert!(!answer.to_string().contains(SECRET), "{tool}: the secret leaked: {answer}");
    }
    assert!(proj.is_dir() && !proj.is_symlink(), "the root is no longer a directory");
    assert_eq!(fs::read_to_string(proj.join("w.txt")).expect("w.txt in the root"), "escaped");
    f.assert_outside_untouched();
}

#[test]
fn root_descriptors_that_cannot_be_used_refuse_the_call() {
    let f = Fixture::new();
    let a = f.env.path("a");
    let secret = f.outside.join("secret.txt");
    for (fds, names) in
        [("99", a.clone()), ("x", a.clone()), ("1", a.clone()), ("99:98", a.clone())]
    {
        let ran = f
            .env
            .cmd("file_read")
            .env("IKIGAI_TOOLS_ROOTS", &names)
            .env("IKIGAI_TOOLS_ROOT_FDS", fds)
            .stdin(json!({ "file_path": secret }).to_string())
            .run();
        let answer = ran.json();
        assert_no_secret(&answer);
        assert_eq!(answer["error_code"], "PERMISSION_DENIED", "{fds}: {answer}");
        let error = answer["error"].as_str().unwrap_or_default();
        assert!(
            error
                .starts_with("Permission denied: the roots passed as descriptors cannot be used ("),
            "{fds}: {error}"
        );
    }
}

#[test]
fn mcp_a_command_sees_neither_the_root_descriptors_nor_their_variable() {
    let f = Fixture::new();
    let a = f.env.path("a");
    let mut session =
        Session::initialized_with(&f.env, &["--root".as_ref(), a.as_os_str()], json!({}));
    let command = "echo \"fds=${IKIGAI_TOOLS_ROOT_FDS-unset}\"; \
                   for fd in /proc/$$/fd/*; do readlink \"$fd\"; done";
    let answer = session.call(2, "bash", json!({ "command": command }));
    let output = answer["result"]["structuredContent"]["output"].as_str().unwrap_or_default();
    assert!(output.starts_with("fds=unset\n"), "{answer}");
    let root = a.canonicalize().expect("canonical root");
    assert!(
        !output.lines().skip(1).any(|target| Path::new(target) == root),
        "the command holds a descriptor of the root: {output}"
    );
}
