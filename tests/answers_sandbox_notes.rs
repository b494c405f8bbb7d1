//! Finding 2 of "Answers a model can act on" (docs/CONFINEMENT.md, "What a
//! confined call is told"): a confinement refusal names the setting that
//! sets the roots; a confined bash command's failure that the sandbox
//! caused ends with one note saying what it allows and the setting that
//! changes it; the MCP instructions name the roots, and
//! list_allowed_directories answers them without a refusal first.
//!
//! The fixture: `work/` is the root, `tmp/` beside it the `TMPDIR`.

use crate::common;
use crate::confine::connect_command;
use common::mcp::{answer_roots_list, file_uri, Session};
use common::*;

use std::ffi::OsStr;
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// The note's half about writes, for roots set by `IKIGAI_TOOLS_ROOTS`.
fn writes_note(root: &Path) -> String {
    format!(
        "[ikigai-tools sandbox: writes are allowed only beneath {} and $TMPDIR \
         (IKIGAI_TOOLS_ROOTS sets them)]",
        root.display()
    )
}

const NETWORK_NOTE: &str =
    "[ikigai-tools sandbox: network is off (IKIGAI_TOOLS_NETWORK=on allows it)]";

struct Fixture {
    env: Env,
    tmp: PathBuf,
    /// `work/`'s real path: what messages name.
    root: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let env = Env::new();
        let tmp = env.beside("tmp");
        let root = env.work().canonicalize().expect("work/");
        Fixture { env, tmp, root }
    }

    /// bash with `command`, confined to `work/` when `confined`, with
    /// `vars` set; `None` (said why) where the kernel cannot confine.
    fn bash(&self, command: &str, confined: bool, vars: &[(&str, &str)]) -> Option<Value> {
        let mut call = self.env.cmd("bash").env("TMPDIR", &self.tmp);
        if confined {
            call = call.env("IKIGAI_TOOLS_ROOTS", self.env.work());
        }
        for (key, value) in vars {
            call = call.env(key, value);
        }
        let ran = call.stdin(json!({ "command": command }).to_string()).run();
        assert_eq!(ran.code, Some(0), "stderr: {}", ran.stderr);
        let answer = ran.json();
        if answer["error_code"] == "PERMISSION_DENIED" {
            skipped(&format!("the kernel cannot confine bash here: {answer}"));
            return None;
        }
        Some(answer)
    }
}

/// The output's first line: what the command itself printed.
fn first_line(answer: &Value) -> &str {
    let output = answer["output"].as_str().unwrap_or_else(|| panic!("output: {answer}"));
    output.lines().next().unwrap_or_default()
}

#[test]
fn a_confined_write_outside_the_roots_ends_with_the_sandbox_note() {
    let f = Fixture::new();
    let Some(answer) = f.bash("echo x > /etc/x", true, &[]) else { return };
    // EROFS in the read-only namespace, EACCES from Landlock without one.
    let said = first_line(&answer);
    assert!(
        said == "sh: 1: cannot create /etc/x: Read-only file system"
            || said == "sh: 1: cannot create /etc/x: Permission denied",
        "{answer}"
    );
    let output = format!("{said}\n{}", writes_note(&f.root));
    assert_eq!(answer, json!({"output": output, "exit_code": 2}));
}

#[test]
fn a_refused_connection_ends_with_the_network_note_only_while_the_network_is_off() {
    if !Path::new("/usr/bin/perl").exists() {
        skipped("needs /usr/bin/perl for the probe");
        return;
    }
    let f = Fixture::new();
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("address").port();
    let Some(shut) = f.bash(&connect_command(port), true, &[]) else { return };
    let output = format!("socket: Permission denied\n{NETWORK_NOTE}");
    assert_eq!(shut, json!({"output": output, "exit_code": 13}));
    // With the network on, a connection that fails is not the sandbox's.
    drop(listener);
    let on = f.bash(&connect_command(port), true, &[("IKIGAI_TOOLS_NETWORK", "on")]);
    assert_eq!(on, Some(json!({"output": "connect: Connection refused", "exit_code": 111})));
}

#[test]
fn an_unconfined_failure_with_the_sandboxs_words_gets_no_note() {
    let f = Fixture::new();
    let command = "echo 'cannot create /etc/x: Read-only file system'; \
                   echo 'curl: (6) Could not resolve host: example.com'; exit 1";
    let answer = f.bash(command, false, &[]);
    let output = "cannot create /etc/x: Read-only file system\n\
                  curl: (6) Could not resolve host: example.com";
    assert_eq!(answer, Some(json!({"output": output, "exit_code": 1})));
}

#[test]
fn a_confined_success_or_an_unrelated_failure_gets_no_note() {
    let f = Fixture::new();
    let Some(success) = f.bash("echo 'Read-only file system'", true, &[]) else { return };
    assert_eq!(success, json!({"output": "Read-only file system", "exit_code": 0}));
    let failure = f.bash("ls missing", true, &[]);
    let said = "ls: cannot access 'missing': No such file or directory";
    assert_eq!(failure, Some(json!({"output": said, "exit_code": 2})));
}

#[test]
fn the_sandbox_note_fits_within_the_output_limit() {
    let f = Fixture::new();
    let limit = 2000;
    let command = "seq 1 5000; echo x > /etc/x";
    let vars = [("IKIGAI_TOOLS_MAX_OUTPUT", "2000")];
    let mut call = f.env.cmd("bash").env("TMPDIR", &f.tmp).env("IKIGAI_TOOLS_ROOTS", f.env.work());
    for (key, value) in vars {
        call = call.env(key, value);
    }
    let ran = call.stdin(json!({ "command": command }).to_string()).run();
    let answer = ran.json();
    if answer["error_code"] == "PERMISSION_DENIED" {
        skipped(&format!("the kernel cannot confine bash here: {answer}"));
        return;
    }
    assert!(ran.stdout.len() <= limit, "{} bytes: {answer}", ran.stdout.len());
    assert!(ran.stderr.is_empty(), "the answer went over: {}", ran.stderr);
    let output = answer["output"].as_str().expect("output");
    assert!(output.ends_with(&format!("\n{}", writes_note(&f.root))), "{answer}");
}

#[test]
fn a_refusal_names_ikigai_tools_roots_as_what_sets_the_roots() {
    let f = Fixture::new();
    let ran = f
        .env
        .cmd("file_read")
        .env("IKIGAI_TOOLS_ROOTS", f.env.work())
        .stdin(json!({"file_path": "/etc/passwd"}).to_string())
        .run();
    let error = format!(
        "Permission denied: /etc/passwd is outside the allowed roots ({}); \
         IKIGAI_TOOLS_ROOTS sets them",
        f.root.display()
    );
    assert_eq!(ran.json(), json!({"error": error, "error_code": "PERMISSION_DENIED"}));
}

#[test]
fn list_allowed_directories_answers_the_roots_of_the_command_line() {
    let f = Fixture::new();
    let call = |confined: bool| {
        let mut call = f.env.cmd("list_allowed_directories").env("IKIGAI_TOOLS_PROFILE", "full");
        if confined {
            call = call.env("IKIGAI_TOOLS_ROOTS", f.env.work());
        }
        call.stdin("{}").run().json()
    };
    let root = f.root.display().to_string();
    let output = format!("{root}\n(the allowed roots, from IKIGAI_TOOLS_ROOTS)");
    assert_eq!(call(true), json!({"output": output, "roots": [root]}));
    let none = json!({"output": "not confined: the tools may use any path", "roots": []});
    assert_eq!(call(false), none);
}

#[test]
fn the_mcp_instructions_and_refusals_name_the_root_roots() {
    let f = Fixture::new();
    let work = f.env.work();
    let args = [OsStr::new("--root"), work.as_os_str()];
    let mut session = Session::start_with(&f.env, &args);
    let answer = session.request(1, "initialize", common::mcp::initialize_params("2025-06-18"));
    let instructions = answer["result"]["instructions"].as_str().expect("instructions");
    let roots = format!(
        " Paths are confined to the allowed roots {} (from the MCP server's --root); roots the \
         client names replace them, within them. list_allowed_directories lists those in force.",
        f.root.display()
    );
    assert!(instructions.ends_with(&roots), "{instructions}");
    session
        .send_line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
    let read = session.call(2, "file_read", json!({"file_path": "/etc/passwd"}));
    let error = format!(
        "Permission denied: /etc/passwd is outside the allowed roots ({}); the MCP server's \
         --root sets them",
        f.root.display()
    );
    assert_eq!(
        read["result"]["structuredContent"],
        json!({"error": error, "error_code": "PERMISSION_DENIED"})
    );
}

#[test]
fn list_allowed_directories_answers_the_clients_roots_over_mcp() {
    let f = Fixture::new();
    let mut session = Session::initialized_with(&f.env, &[], json!({"roots": {}}));
    answer_roots_list(&mut session, &[file_uri(&f.env.work())]);
    let listed = session.call(2, "list_allowed_directories", json!({}));
    let root = f.root.display().to_string();
    let output = format!("{root}\n(the allowed roots, from the MCP client's roots)");
    assert_eq!(listed["result"]["structuredContent"], json!({"output": output, "roots": [root]}));
    assert_eq!(listed["result"]["isError"], false, "{listed}");
}
