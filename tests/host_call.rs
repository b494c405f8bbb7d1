//! `ikigai-tools call`: a tool run as a host runs it, the envelope of seeds
//! 000 and 003 back.

// The shared harness's `as_nobody(self)` trips this lint; it is not ours to rename.
use crate::common;
use common::procs::{self, is_gone};
use common::*;

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use serde_json::{json, Value};

/// Writes an executable fixture tool under `work/`.
fn tool(env: &Env, rel: &str, script: &str) {
    let path = env.write(rel, script);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// A tool named `name` (with an empty parameter list) whose call runs `body`.
fn script(name: &str, body: &str) -> String {
    format!(
        "#!/bin/sh\nif [ \"$1\" = --schema ]; then\n  echo '{{\"name\":\"{name}\",\"description\":\"Test tool\",\
         \"parameters\":{{\"type\":\"object\",\"properties\":{{}}}}}}'\n  exit 0\nfi\n{body}\n"
    )
}

/// `ikigai-tools call --dir tools ARGS…`, its exit code and envelope.
fn call(env: &Env, args: &[&str]) -> (Option<i32>, Value, Ran) {
    let mut cmd = env.cmd("ikigai-tools").arg("call").arg("--dir").arg("tools");
    for a in args {
        cmd = cmd.arg(a);
    }
    let ran = cmd.run();
    (ran.code, ran.json(), ran)
}

/// Waits a little for a process killed a moment ago to be gone.
fn gone(pid: i32) -> bool {
    for _ in 0..200 {
        if is_gone(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// The pids a fixture printed on stderr as `tool PID` and `child PID`.
fn pids(stderr: &str) -> Vec<i32> {
    stderr
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(what, _)| *what == "tool" || *what == "child")
        .filter_map(|(_, pid)| pid.trim().parse().ok())
        .collect()
}

#[test]
fn success_wraps_the_answer_and_passes_the_arguments_on_stdin() {
    let env = Env::new();
    tool(&env, "tools/echo-args", &script("echo_args", r#"printf '{"received":%s}' "$(cat)""#));
    let (code, v, _) = call(&env, &["echo_args", r#"{"text":"hi","n":[1,2]}"#]);
    assert_eq!(code, Some(0));
    assert_eq!(
        v,
        json!({"tool_success": true, "result": {"received": {"text": "hi", "n": [1, 2]}}})
    );
    snap!("success", v);
}

#[test]
fn arguments_are_read_from_stdin_when_absent() {
    let env = Env::new();
    tool(&env, "tools/echo-args", &script("echo_args", r#"printf '{"received":%s}' "$(cat)""#));
    let ran = env
        .cmd("ikigai-tools")
        .arg("call")
        .arg("--dir")
        .arg("tools")
        .arg("echo_args")
        .stdin(r#"{"a":1}"#)
        .run();
    assert_eq!(ran.code, Some(0));
    assert_eq!(ran.json(), json!({"tool_success": true, "result": {"received": {"a": 1}}}));
}

#[test]
fn a_tool_is_found_by_its_schema_name_not_its_file_name() {
    let env = Env::new();
    tool(&env, "tools/whatever.sh", &script("real_name", r#"printf '{"ok":true}'"#));
    let (code, v, _) = call(&env, &["real_name", "{}"]);
    assert_eq!((code, v), (Some(0), json!({"tool_success": true, "result": {"ok": true}})));
    let (code, v, _) = call(&env, &["whatever", "{}"]);
    assert_eq!(code, Some(1));
    assert_eq!(v["error_code"], "TOOL_NOT_FOUND");
}

#[test]
fn a_sleeping_tool_times_out_and_is_killed() {
    let env = Env::new();
    tool(
        &env,
        "tools/sleeper",
        &script("sleeper", "echo \"tool $$\" >&2\necho partial\nexec sleep 30"),
    );
    let (code, v, ran) = call(&env, &["--timeout", "1", "sleeper", "{}"]);
    assert_eq!(code, Some(1));
    let stderr = v["stderr"].as_str().unwrap_or_default().to_owned();
    assert_eq!(
        v,
        json!({
            "tool_success": false,
            "error": "Tool 'sleeper' timed out after 1s",
            "error_code": "TOOL_TIMEOUT",
            "exit_code": null,
            "stdout": "partial\n",
            "stderr": stderr,
        })
    );
    assert!(ran.elapsed < Duration::from_secs(10), "took {:?}", ran.elapsed);
    let pids = pids(&stderr);
    assert_eq!(pids.len(), 1, "{stderr}");
    assert!(gone(pids[0]), "the tool is still running");
}

/// Calls a tool that reports its pid and its child's on stderr and then
/// outlives a 1 s limit: the envelope says so, and both processes are gone.
fn times_out_and_leaves_nothing(env: &Env, name: &str, body: &str) {
    tool(env, &format!("tools/{name}"), &script(name, body));
    let (code, v, ran) = call(env, &["--timeout", "1", name, "{}"]);
    assert_eq!(code, Some(1));
    assert_eq!(v["error_code"], "TOOL_TIMEOUT");
    assert_eq!(v["error"], format!("Tool '{name}' timed out after 1s"));
    assert!(ran.elapsed < Duration::from_secs(10), "took {:?}", ran.elapsed);
    let pids = pids(v["stderr"].as_str().unwrap_or_default());
    assert_eq!(pids.len(), 2, "{v}");
    for pid in pids {
        assert!(gone(pid), "process {pid} is still running");
    }
}

#[test]
fn a_tool_that_forks_a_sleeping_child_loses_both() {
    let env = Env::new();
    let body = "echo \"tool $$\" >&2\nsleep 30 &\necho \"child $!\" >&2\nwait";
    times_out_and_leaves_nothing(&env, "forker", body);
}

#[test]
fn a_tool_that_ignores_sigterm_is_killed_all_the_same() {
    let env = Env::new();
    // An ignored signal stays ignored in the child: neither stops on TERM.
    let body = "trap '' TERM\necho \"tool $$\" >&2\nsleep 30 &\necho \"child $!\" >&2\nwait";
    times_out_and_leaves_nothing(&env, "stubborn", body);
}

#[test]
fn a_call_timeout_leaves_nothing_of_a_bash_command_that_ignores_sigterm() {
    let env = Env::new();
    let (background, foreground) = (procs::unique_sleep(104), procs::unique_sleep(105));
    // The bash tool gives its command a grace period on SIGTERM; the host
    // may kill the tool before that is over: the tool's guardian must then
    // take the command's group (another session) down.
    let command = format!("trap '' TERM; sleep {background} & sleep {foreground}; echo x");
    let args = json!({ "command": command }).to_string();
    let host = env.spawn_suite(&["call", "--timeout", "1", "bash", &args]);
    let sleeps = procs::sleeps_running(&[&background, &foreground]);
    let out = host.wait_with_output().expect("wait for the host");
    let v: Value = serde_json::from_slice(&out.stdout).expect("an envelope");
    assert_eq!((out.status.code(), &v["error_code"]), (Some(1), &json!("TOOL_TIMEOUT")), "{v}");
    procs::assert_all_gone(&sleeps, "the timeout");
}

#[test]
fn sigkill_to_the_host_kills_the_tools_process_group() {
    let env = Env::new();
    let (background, foreground) = (procs::unique_sleep(104), procs::unique_sleep(105));
    tool(
        &env,
        "tools/sleeper",
        &script("sleeper", &format!("sleep {background} &\nsleep {foreground}")),
    );
    let mut host = env.spawn_suite(&["call", "--dir", "tools", "sleeper", "{}"]);
    let sleeps = procs::sleeps_running(&[&background, &foreground]);
    host.kill().expect("SIGKILL the host");
    host.wait().expect("reap the host");
    procs::assert_all_gone(&sleeps, "the host");
}

#[test]
fn a_fractional_timeout_is_reported_as_given() {
    let env = Env::new();
    tool(&env, "tools/sleeper", &script("sleeper", "exec sleep 30"));
    let (_, v, _) = call(&env, &["--timeout", "0.5", "sleeper", "{}"]);
    assert_eq!(v["error"], "Tool 'sleeper' timed out after 0.5s");
}

#[test]
fn a_non_zero_exit_is_a_crash_with_what_was_printed() {
    let env = Env::new();
    tool(
        &env,
        "tools/crasher",
        &script("crasher", "echo partial\necho 'segmentation fault' >&2\nexit 3"),
    );
    let (code, v, _) = call(&env, &["crasher", "{}"]);
    assert_eq!(code, Some(1));
    assert_eq!(
        v,
        json!({
            "tool_success": false,
            "error": "Tool 'crasher' crashed with exit code 3",
            "error_code": "TOOL_CRASHED",
            "exit_code": 3,
            "stdout": "partial\n",
            "stderr": "segmentation fault\n",
        })
    );
    snap!("crashed", v);
}

#[test]
fn a_tool_killed_by_a_signal_reports_128_plus_the_signal() {
    let env = Env::new();
    tool(&env, "tools/segv", &script("segv", "kill -SEGV $$"));
    let (code, v, _) = call(&env, &["segv", "{}"]);
    assert_eq!(code, Some(1));
    assert_eq!(
        v,
        json!({
            "tool_success": false,
            "error": "Tool 'segv' crashed with exit code 139 (killed by signal 11)",
            "error_code": "TOOL_CRASHED",
            "exit_code": 139,
            "stdout": "",
            "stderr": "",
        })
    );
}

#[test]
fn output_that_is_not_one_json_object_is_invalid() {
    let env = Env::new();
    tool(&env, "tools/texter", &script("texter", "echo hello"));
    tool(&env, "tools/twice", &script("twice", "printf '{}{}'"));
    tool(&env, "tools/lister", &script("lister", "printf '[1]'"));
    tool(&env, "tools/silent", &script("silent", "exit 0"));
    let (code, v, _) = call(&env, &["texter", "{}"]);
    assert_eq!(code, Some(1));
    assert_eq!(
        v,
        json!({
            "tool_success": false,
            "error": "Tool 'texter' returned invalid output: not one JSON object: expected value at line 1 column 1",
            "error_code": "INVALID_OUTPUT",
            "exit_code": 0,
            "stdout": "hello\n",
            "stderr": "",
        })
    );
    let error = |name: &str| call(&env, &[name, "{}"]).1["error"].clone();
    assert_eq!(
        error("twice"),
        "Tool 'twice' returned invalid output: not one JSON object: trailing characters at line 1 column 3"
    );
    assert_eq!(
        error("lister"),
        "Tool 'lister' returned invalid output: expected one JSON object, got an array"
    );
    assert_eq!(error("silent"), "Tool 'silent' returned invalid output: no output");
}

#[test]
fn invalid_utf8_and_nul_in_captured_output_stay_valid_json() {
    let env = Env::new();
    tool(&env, "tools/binary", &script("binary", r"printf 'a\377b\000c'; exit 1"));
    let (_, v, _) = call(&env, &["binary", "{}"]);
    assert_eq!(v["stdout"], "a\u{FFFD}b\u{0}c");
}

#[test]
fn an_unknown_name_is_tool_not_found_with_a_hint() {
    let env = Env::new();
    env.mkdir("tools");
    let ran = env.cmd("ikigai-tools").arg("call").arg("gerp").arg("{}").run();
    assert_eq!(ran.code, Some(1));
    assert_eq!(
        ran.json(),
        json!({
            "tool_success": false,
            "error": "Tool 'gerp' not found",
            "error_code": "TOOL_NOT_FOUND",
            "exit_code": null,
            "stdout": "",
            "stderr": "",
        })
    );
    assert_eq!(
        ran.stderr,
        "ikigai-tools: unknown tool 'gerp' (did you mean grep?); the tools are: \
         bash, file_edit, file_read, file_write, glob, grep\n"
    );
}

#[test]
fn arguments_that_are_not_an_object_are_a_usage_error() {
    let env = Env::new();
    for (args, message) in [
        ("[1]", "ikigai-tools call: ARGS must be a JSON object, not an array\n"),
        ("{", "ikigai-tools call: ARGS must be a JSON object: EOF while parsing an object at line 1 column 1\n"),
    ] {
        let ran = env.cmd("ikigai-tools").arg("call").arg("bash").arg(args).run();
        assert_eq!(ran.code, Some(2), "{args}");
        assert_eq!(ran.stderr, message);
        assert!(ran.stdout.is_empty());
    }
    let ran =
        env.cmd("ikigai-tools").arg("call").arg("--timeout").arg("0").arg("bash").arg("{}").run();
    assert_eq!(ran.code, Some(2));
}

#[test]
fn a_built_in_tool_is_called_through_the_binary_itself() {
    let env = Env::new();
    // Any spelling of a built-in; `{}` lacks the required argument, which
    // the tool itself answers as INVALID_ARG.
    for name in ["file_read", "file-read"] {
        let ran = env.cmd("ikigai-tools").arg("call").arg(name).arg("{}").run();
        assert_eq!(ran.code, Some(0), "{}", ran.stderr);
        assert_eq!(
            ran.json(),
            json!({"tool_success": true, "result": {
                "error": "missing required parameter: file_path", "error_code": "INVALID_ARG"}})
        );
    }
    let ran = env.cmd("ikigai-tools").arg("call").arg("bash").arg(r#"{"command":"echo hi"}"#).run();
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert_eq!(
        ran.json(),
        json!({"tool_success": true, "result": {"output": "hi", "exit_code": 0}})
    );
}

#[test]
fn a_tool_that_exits_while_its_child_holds_stdout_answers_at_once() {
    let env = Env::new();
    // The background child keeps the pipe open for 30 s; it records its pid
    // so that the test can stop it.
    let body = "printf '{\"ok\":true}'\nsleep 30 &\necho $! > child.pid\nexit 0";
    tool(&env, "tools/leaver", &script("leaver", body));
    let (code, v, ran) = call(&env, &["leaver", "{}"]);
    let child: i32 = String::from_utf8_lossy(&env.read("child.pid")).trim().parse().unwrap_or(0);
    if child > 0 {
        let _ =
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(child), nix::sys::signal::SIGKILL);
    }
    assert_eq!((code, v), (Some(0), json!({"tool_success": true, "result": {"ok": true}})));
    assert!(ran.elapsed < Duration::from_secs(10), "took {:?}", ran.elapsed);
}
