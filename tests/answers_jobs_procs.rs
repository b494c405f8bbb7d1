//! Issue 25, finding 7 (docs/TOOLS.md, "bash"): an MCP call's process
//! shows its tool in `ps`, and a command that would wait for an editor
//! fails at once, saying what to do instead.
//! (job_list's ended jobs: tests/jobs.rs.)

use crate::common::mcp::Session;
use crate::common::*;

use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// What the editor every bash command gets says, on stderr, as it fails.
const NO_EDITOR: &str = "ikigai-tools: no editor here (no terminal): put the text in the command \
                         (git commit -m MSG) or set EDITOR/GIT_SEQUENCE_EDITOR to a command that \
                         edits the file";

/// Far below the 120 s a call may take here: an editor that waited would
/// hold the call to its end.
const AT_ONCE: Duration = Duration::from_secs(10);

#[test]
fn an_mcp_calls_process_shows_its_tool_in_ps() {
    let env = Env::new();
    let mut session = Session::initialized(&env);
    // The shell's parent is the call's process; `ps aux` and `ps -ef` show
    // its /proc/PID/cmdline, NULs read as spaces and the trailing ones cut.
    let answer = session.call(2, "bash", json!({"command": "tr '\\0' ' ' < /proc/$PPID/cmdline"}));
    let output = answer["result"]["structuredContent"]["output"].as_str().expect("output");
    assert_eq!(output.trim_end(), "ikigai-tools mcp: bash", "{answer}");
    // And its name (`ps -e`, top) too, as before.
    let answer = session.call(3, "bash", json!({"command": "cat /proc/$PPID/comm"}));
    assert_eq!(answer["result"]["structuredContent"], json!({"output": "bash", "exit_code": 0}));
}

/// `git commit` without `-m` in a fresh repository, through bash run as a
/// host runs it, `vars` on top; the answer and how long it took.
fn git_commit_without_a_message(env: &Env, vars: &[(&str, &std::ffi::OsStr)]) -> (Value, Duration) {
    env.write("notes.txt", "a line\n");
    let command = "git init -q . && git add notes.txt && \
                   git -c user.name=t -c user.email=t@t commit";
    let mut call = env.cmd("bash").stdin(json!({"command": command}).to_string());
    for (k, v) in vars {
        call = call.env(k, v);
    }
    let started = Instant::now();
    let ran = call.run();
    let took = started.elapsed();
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    (ran.json(), took)
}

/// Whether git is here (CI installs it: .ci/run); said when it is not.
fn has_git() -> bool {
    let here = std::process::Command::new("git").arg("--version").output().is_ok();
    if !here {
        skipped("git is not installed");
    }
    here
}

/// The answer's first line is the editor's message, and the command failed.
fn assert_fails_naming_the_way_on(answer: &Value, took: Duration) {
    assert!(took < AT_ONCE, "took {took:?}: {answer}");
    let output = answer["output"].as_str().expect("output");
    assert_eq!(output.lines().next(), Some(NO_EDITOR), "{answer}");
    assert_eq!(answer["exit_code"], 1, "{answer}");
}

#[test]
fn a_command_waiting_for_an_editor_fails_at_once_saying_what_to_do() {
    if !has_git() {
        return;
    }
    let env = Env::new();
    // The user's own editor is overridden: it would have no terminal either.
    let (answer, took) = git_commit_without_a_message(&env, &[("EDITOR", "vi".as_ref())]);
    assert_fails_naming_the_way_on(&answer, took);
}

#[test]
fn a_confined_command_waiting_for_an_editor_fails_at_once_saying_what_to_do() {
    if !has_git() {
        return;
    }
    let env = Env::new();
    let tmp = env.beside("tmp");
    let vars = [("IKIGAI_TOOLS_ROOTS", env.work().into_os_string()), ("TMPDIR", tmp.into())];
    let vars: Vec<(&str, &std::ffi::OsStr)> =
        vars.iter().map(|(k, v)| (*k, v.as_os_str())).collect();
    let (answer, took) = git_commit_without_a_message(&env, &vars);
    assert_fails_naming_the_way_on(&answer, took);
}

#[test]
fn an_editor_run_as_sh_c_with_the_file_appended_fails_with_the_message() {
    // As crontab and many others run it: `sh -c "$EDITOR FILE"`.
    let env = Env::new();
    let answer = env.call("bash", json!({"command": "sh -c \"$VISUAL some-file\"; echo $?"}));
    assert_eq!(answer, json!({"output": format!("{NO_EDITOR}\n1"), "exit_code": 0}));
}
