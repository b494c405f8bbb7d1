//! Issue 25, finding 6: a person (or a model in a shell) calling the binary
//! by hand. A word or an unknown option where the JSON object goes is
//! answered with the call's form; a tool or `mcp` started at a terminal
//! says on stderr what it waits for; every example of every `--help` runs
//! as pasted.

use crate::common;
use common::*;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

/// What the shellclaw dialect answers an error: the envelope on stdout,
/// its message on stderr, exit 1.
fn assert_shellclaw_error(ran: &Ran, code: &str, message: &str) {
    assert_eq!(ran.json(), json!({"error": message, "error_code": code}));
    assert_eq!(ran.stderr, format!("{message}\n"));
    assert_eq!(ran.code, Some(1));
}

/// The tail every call form ends with.
const ON_STDIN: &str = "(or that JSON on stdin; --help lists the parameters)";

#[test]
fn a_word_where_the_json_goes_is_answered_with_the_calls_form() {
    let env = Env::new();
    let suite = env.link("ikigai-tools").display().to_string();
    let grep = env.link("grep").display().to_string();
    let bash = env.link("bash").display().to_string();
    let cases = [
        (
            env.cmd("ikigai-tools").arg("grep").arg("foo"),
            format!(
                "invalid JSON at line 1 column 2: expected ident; \
                 call it as: {suite} grep '{{\"pattern\":\"foo\"}}' {ON_STDIN}"
            ),
        ),
        (
            env.cmd("ikigai-tools").arg("bash").arg("echo hi"),
            format!(
                "invalid JSON at line 1 column 1: expected value; \
                 call it as: {suite} bash '{{\"command\":\"echo hi\"}}' {ON_STDIN}"
            ),
        ),
        (
            env.cmd("grep").arg("foo"),
            format!(
                "invalid JSON at line 1 column 2: expected ident; \
                 call it as: {grep} '{{\"pattern\":\"foo\"}}' {ON_STDIN}"
            ),
        ),
        (
            env.cmd("bash").arg("echo hi"),
            format!(
                "invalid JSON at line 1 column 1: expected value; \
                 call it as: {bash} '{{\"command\":\"echo hi\"}}' {ON_STDIN}"
            ),
        ),
        // Not a plain word: the example holds a placeholder.
        (
            env.cmd("grep").arg("it's"),
            format!(
                "invalid JSON at line 1 column 1: expected value; \
                 call it as: {grep} '{{\"pattern\":\"…\"}}' {ON_STDIN}"
            ),
        ),
    ];
    for (call, message) in cases {
        assert_shellclaw_error(&call.run(), "INVALID_JSON", &message);
    }
    // On stdin (ikigai): the same form, in the envelope of that dialect
    // (exit 0, the message echoed on stderr).
    let ran = env.run("grep", "foo\n");
    let message = format!(
        "invalid JSON at line 1 column 2: expected ident; \
         call it as: {grep} '{{\"pattern\":\"foo\"}}' {ON_STDIN}"
    );
    assert_eq!(ran.json(), json!({"error": message, "error_code": "INVALID_JSON"}));
    assert_eq!((ran.stderr, ran.code), (format!("{message}\n"), Some(0)));
    // What starts as an object keeps its own message: it is a call, broken.
    let ran = env.cmd("grep").arg(r#"{"pattern":"#).run();
    assert_shellclaw_error(
        &ran,
        "INVALID_JSON",
        "invalid JSON at line 1 column 11: EOF while parsing a value",
    );
}

#[test]
fn an_unknown_option_is_answered_with_the_option_meant() {
    let env = Env::new();
    let ran = env.cmd("ikigai-tools").arg("grep").arg("--schma").run();
    assert_shellclaw_error(
        &ran,
        "INVALID_JSON",
        "invalid JSON at line 1 column 2: invalid number; \
         unknown option --schma: did you mean --schema?",
    );
    let ran = env.cmd("file-read").arg("--descibe").run();
    assert_shellclaw_error(
        &ran,
        "INVALID_JSON",
        "invalid JSON at line 1 column 2: invalid number; \
         unknown option --descibe: did you mean --describe?",
    );
    // Far from every option: the call's form.
    let grep = env.link("grep").display().to_string();
    let ran = env.cmd("grep").arg("-x").run();
    assert_shellclaw_error(
        &ran,
        "INVALID_JSON",
        &format!(
            "invalid JSON at line 1 column 2: invalid number; unknown option -x; \
             call it as: {grep} '{{\"pattern\":\"…\"}}' {ON_STDIN}"
        ),
    );
}

/// Runs `program ARGS` with stdin on a pseudo-terminal, types Ctrl-D there
/// (the end of input at the start of a line), and returns stdout, stderr
/// and the exit status.
fn with_a_terminal_on_stdin(program: &Path, args: &[&str], work: &Path) -> (String, String, i32) {
    let pty = nix::pty::openpty(None, None).expect("openpty");
    let mut child = Command::new(program)
        .args(args)
        .current_dir(work)
        .stdin(Stdio::from(pty.slave))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut master = std::fs::File::from(pty.master);
    // Read on the terminal until its line discipline hands the reader the
    // end of input, whenever the reader reads.
    master.write_all(b"\x04").expect("type Ctrl-D");
    let mut stdout = String::new();
    let mut stderr = String::new();
    child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let status = child.wait().expect("wait");
    (stdout, stderr, status.code().expect("an exit status"))
}

#[test]
fn a_tool_at_a_terminal_says_what_it_waits_for() {
    let env = Env::new();
    let grep = env.link("grep");
    let empty = "invalid JSON: empty input, expected an object of arguments";
    let (stdout, stderr, code) = with_a_terminal_on_stdin(&grep, &[], &env.work());
    assert_eq!(
        stderr,
        format!(
            "grep: reading the JSON arguments from stdin (end with Ctrl-D); \
             or call: {} '{{\"pattern\":\"…\"}}'\n{empty}\n",
            grep.display()
        )
    );
    assert_eq!(stdout, format!(r#"{{"error":"{empty}","error_code":"INVALID_JSON"}}"#));
    assert_eq!(code, 0);
    // Through the suite, the suite's command; a pipe (a host) is told nothing.
    let suite = env.link("ikigai-tools");
    let (_, stderr, _) = with_a_terminal_on_stdin(&suite, &["file-read"], &env.work());
    assert_eq!(
        stderr.lines().next().unwrap(),
        format!(
            "ikigai-tools file-read: reading the JSON arguments from stdin (end with Ctrl-D); \
             or call: {} file-read '{{\"file_path\":\"…\"}}'",
            suite.display()
        )
    );
    assert_eq!(env.run("grep", "").stderr, format!("{empty}\n"));
}

#[test]
fn mcp_at_a_terminal_says_what_it_is_and_how_to_stop_it() {
    let env = Env::new();
    let suite = env.link("ikigai-tools");
    let (stdout, stderr, code) =
        with_a_terminal_on_stdin(&suite, &["mcp", "--unconfined"], &env.work());
    assert_eq!(
        stderr.lines().next().unwrap(),
        "ikigai-tools mcp: an MCP server: JSON-RPC on stdin and stdout, waiting for an MCP \
         client to start it (e.g. claude mcp add ikigai-tools -- ikigai-tools mcp --root \
         \"$PWD\"; see docs/MCP.md); Ctrl-D or Ctrl-C stops it"
    );
    // Nothing on stdout, the protocol's; Ctrl-D ended it as a client's
    // closing stdin does.
    assert_eq!((stdout.as_str(), code), ("", 0));
    // A client (a pipe) is told nothing of it.
    let ran = env.cmd("ikigai-tools").arg("mcp").arg("--unconfined").stdin("").run();
    assert!(!ran.stderr.contains("an MCP server"), "{}", ran.stderr);
}

/// The lines under `Examples:` of a help text, up to the blank line.
fn examples(help: &str) -> Vec<String> {
    let mut lines = help.lines().skip_while(|l| *l != "Examples:").skip(1);
    let found: Vec<String> =
        lines.by_ref().take_while(|l| !l.is_empty()).map(|l| l.trim().to_owned()).collect();
    assert!(!found.is_empty(), "no examples in\n{help}");
    found
}

/// Runs a pasted line in a fresh directory holding what the examples name
/// (README.md, notes.txt), through `sh`, the links' directory on `PATH`.
fn paste(line: &str, bin: &Path, profile: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "# a project\n".repeat(30)).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hello\n").unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    Command::new("sh")
        .arg("-c")
        .arg(line)
        .current_dir(dir.path())
        .env("PATH", path)
        .env("IKIGAI_TOOLS_PROFILE", profile)
        .env("IKIGAI_TOOLS_STATE_DIR", dir.path().join("state"))
        // web_search's example: no provider set up, whatever the machine has.
        .env("HOME", dir.path())
        .env("BRAVE_API_KEY", "")
        .env("IKIGAI_TOOLS_SEARCH_PROVIDER", "")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Issue 25: a link's help showed `echo '…' | bash`, which pasted runs
/// /bin/bash, and its notes in parentheses were a shell syntax error. Every
/// example of every tool's help — through the suite and through a link,
/// called by path or by name on `PATH`, in both profiles — runs as pasted
/// and answers success, or the error its help says it answers.
#[test]
fn every_help_example_runs_as_pasted() {
    let env = Env::new();
    let bin = env.link("ikigai-tools").parent().unwrap().to_path_buf();
    for profile in ["seed", "full"] {
        let tools: Vec<&ikigai_tools::tools::Tool> =
            ikigai_tools::tools::of(ikigai_tools::profile::Profile::parse(profile).unwrap())
                .collect();
        for tool in tools {
            let link = env.link(tool.command);
            let by_path = |program: &Path, args: &[&str]| {
                Command::new(program).args(args).env("IKIGAI_TOOLS_PROFILE", profile).output()
            };
            let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
            let by_name = |program: &str, args: &[&str]| {
                Command::new(program)
                    .args(args)
                    .env("PATH", &path)
                    .env("IKIGAI_TOOLS_PROFILE", profile)
                    .output()
            };
            let helps = [
                by_path(&bin.join("ikigai-tools"), &[tool.command, "--help"]),
                by_path(&bin.join("ikigai-tools"), &["help", tool.name]),
                by_path(&link, &["--help"]),
                by_name("ikigai-tools", &[tool.command, "--help"]),
                by_name(tool.command, &["--help"]),
            ];
            for help in helps {
                let help = help.unwrap();
                assert_eq!(help.status.code(), Some(0));
                let text = String::from_utf8(help.stdout).unwrap();
                let expected_error =
                    ["JOB_NOT_FOUND", "INVALID_ARG", "AUTH_MISSING", "NETWORK_ERROR"]
                        .into_iter()
                        .find(|code| text.contains(&format!("this one answers {code}")))
                        .or_else(|| {
                            let told = "this one has one line and answers INVALID_ARG";
                            text.contains(told).then_some("INVALID_ARG")
                        });
                for line in examples(&text) {
                    let ran = paste(&line, &bin, profile);
                    let stdout = String::from_utf8_lossy(&ran.stdout);
                    if line.starts_with('#') {
                        assert_eq!((ran.status.code(), stdout.as_ref()), (Some(0), ""), "{line}");
                        continue;
                    }
                    let answer: Value = serde_json::from_str(&stdout)
                        .unwrap_or_else(|e| panic!("{line}: {e}: {stdout:?}"));
                    let code = answer.get("error_code").and_then(Value::as_str);
                    // web_fetch's example succeeds where the web is reachable.
                    let offline = "cannot be reached this one answers NETWORK_ERROR";
                    let either = text.contains(offline) && code.is_none();
                    if !either {
                        assert_eq!(code, expected_error, "{line}: {answer}");
                    }
                    let exit = if code.is_some() && !line.starts_with("echo") {
                        1 // shellclaw's status for an error envelope
                    } else {
                        0
                    };
                    assert_eq!(ran.status.code(), Some(exit), "{line}: {answer}");
                }
            }
        }
    }
}
