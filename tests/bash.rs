//! The bash tool (docs/SPEC.md, its answer, "Output limit" and "Acceptance
//! checks for bash"; docs/TOOLS.md, bash).

// The harness names its builder method `as_nobody`, which clippy reads as a
// conversion; allowed here rather than changing the shared harness.
use crate::common;

use std::fs;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::dispositions::{with_default_stop_signals, with_stop_signals_ignored};
use common::procs::{self, gone_within, is_gone, Leftover};
use common::*;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

fn bash(env: &Env, command: &str) -> Value {
    env.call("bash", json!({ "command": command }))
}

fn answer(output: &str, exit_code: i64) -> Value {
    json!({ "output": output, "exit_code": exit_code })
}

// --- docs/SPEC.md's acceptance checks for bash: the manual verification commands ---

#[test]
fn seed004_schema_is_valid_json() {
    let env = Env::new();
    let ran = env.cmd("bash").arg("--schema").run();
    assert_eq!(ran.code, Some(0));
    let schema: Value = serde_json::from_slice(&ran.stdout).expect("schema is JSON");
    assert_eq!(schema["name"], "bash");
    assert_eq!(schema["parameters"]["required"], json!(["command"]));
}

#[test]
fn seed004_echo_hello() {
    let env = Env::new();
    let ran = env.run("bash", r#"{"command":"echo hello"}"#);
    assert_eq!(ran.code, Some(0));
    assert_eq!(ran.stdout_text(), r#"{"output":"hello","exit_code":0}"#);
}

#[test]
fn seed004_false_is_a_nonzero_exit_code_not_an_error() {
    let env = Env::new();
    assert_eq!(bash(&env, "false"), answer("", 1));
}

#[test]
fn seed004_missing_command_is_invalid_arg() {
    let env = Env::new();
    let ran = env.run("bash", "{}");
    assert_eq!(ran.code, Some(0));
    let v = ran.json();
    assert_eq!(
        v,
        json!({"error": "missing required parameter: command", "error_code": "INVALID_ARG"})
    );
    assert_eq!(ran.stderr, "missing required parameter: command\n");
    snap!("missing_command", v);
}

// --- bad input -----------------------------------------------------------

#[test]
fn a_command_that_is_not_a_string_is_invalid_arg() {
    let env = Env::new();
    let v = env.call("bash", json!({"command": ["ls"]}));
    assert_eq!(
        v,
        json!({"error": "parameter command must be a string", "error_code": "INVALID_ARG"})
    );
}

#[test]
fn a_command_with_a_nul_byte_is_invalid_arg() {
    let env = Env::new();
    let v = bash(&env, "echo a\0b");
    assert_eq!(
        v,
        json!({"error": "parameter command must not contain NUL bytes", "error_code": "INVALID_ARG"})
    );
}

// --- output --------------------------------------------------------------

#[test]
fn stdout_and_stderr_come_in_the_order_written() {
    let env = Env::new();
    assert_eq!(bash(&env, "echo a; echo b >&2; echo c"), answer("a\nb\nc", 0));
}

#[test]
fn exactly_one_trailing_newline_is_stripped() {
    let env = Env::new();
    assert_eq!(bash(&env, r"printf 'a\n\n'"), answer("a\n", 0));
    assert_eq!(bash(&env, "printf a"), answer("a", 0));
    assert_eq!(bash(&env, r"printf '\n'"), answer("", 0));
}

#[test]
fn binary_output_is_escaped_and_replaced() {
    let env = Env::new();
    let ran = env.run("bash", r#"{"command":"printf 'a\\0b\\377'"}"#);
    assert_eq!(ran.stdout_text(), "{\"output\":\"a\\u0000b\u{FFFD}\",\"exit_code\":0}");
    assert_eq!(ran.json(), answer("a\u{0}b\u{FFFD}", 0));
}

#[test]
fn large_output_is_kept_whole_under_the_limit() {
    let env = Env::new();
    let expected: String = (1..=200_000).map(|i| format!("{i}\n")).collect();
    let v = bash(&env, "seq 1 200000");
    assert_eq!(v, answer(expected.strip_suffix('\n').unwrap(), 0));
}

#[test]
fn output_past_the_limit_keeps_head_and_tail() {
    let env = Env::new();
    let ran = env
        .cmd("bash")
        .env("IKIGAI_TOOLS_MAX_OUTPUT", "1000")
        .stdin(r#"{"command":"seq 1 100000"}"#)
        .run();
    let full: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
    // The limit bounds the whole answer, escaping included (docs/SPEC.md, "Output limit"):
    // head and tail take half of what the envelope and marker leave each,
    // a newline two bytes; one trailing newline stripped.
    let expected = common::answer::bounded_lines(full.as_bytes(), 1000, common::answer::not_kept);
    assert!(expected.starts_with("1\n2\n3\n"));
    assert!(expected.ends_with("\n99999\n100000"));
    assert_eq!(expected.matches(" bytes omitted (lines ").count(), 1);
    assert!(ran.stdout.len() <= 1024, "answer of {} bytes", ran.stdout.len());
    assert_eq!(ran.json(), answer(&expected, 0));
}

#[test]
fn endless_output_is_drained_not_stored() {
    let env = Env::new();
    let total: u64 = 300_000_000;
    let ran = env
        .cmd("bash")
        .env("IKIGAI_TOOLS_MAX_OUTPUT", "100")
        .stdin(json!({ "command": format!("yes | head -c {total}") }).to_string())
        .run();
    // 100 counts as 1 KiB; "y\n" takes three bytes in the answer. What is
    // kept of 300 MB is what is kept of 2,000 bytes, more left out.
    let ends = "y\n".repeat(1000);
    let more = total - ends.len() as u64;
    let mut expected = common::answer::bounded(ends.as_bytes(), 100, |cut| {
        // The lines left out are those of the 2,000 bytes, and more.
        let lines = cut.lines.map(|(first, last)| (first, last + more / 2));
        let cut = common::answer::Cut { omitted: cut.omitted + more, lines, ..*cut };
        common::answer::not_kept(&cut)
    });
    assert_eq!(expected.pop(), Some(b'\n'));
    let expected = String::from_utf8(expected).unwrap();
    assert_eq!(ran.json(), answer(&expected, 0));
    // That the tool's memory stays bounded meanwhile is measured, per
    // process, in output_limit::a_command_that_prints_300_mb_stays_under_the_default_limit.
}

// --- exit codes ----------------------------------------------------------

#[test]
fn exit_code_is_the_status() {
    let env = Env::new();
    assert_eq!(bash(&env, "echo out; exit 3"), answer("out", 3));
}

#[test]
fn a_command_killed_by_a_signal_is_128_plus_n() {
    let env = Env::new();
    assert_eq!(bash(&env, "kill -9 $$"), answer("", 137));
    assert_eq!(bash(&env, "echo before; kill -TERM $$"), answer("before", 143));
}

#[test]
fn command_not_found_is_127_with_the_shell_message() {
    let env = Env::new();
    let v = bash(&env, "nonexistent");
    assert_eq!(v, answer("sh: 1: nonexistent: not found", 127));
    snap!("not_found", v);
}

#[test]
fn an_empty_or_blank_command_is_127() {
    let env = Env::new();
    for command in ["", "   ", " \n\t "] {
        assert_eq!(
            bash(&env, command),
            answer("empty command: nothing to run", 127),
            "{command:?}"
        );
    }
}

#[test]
fn shellclaw_a_failing_command_is_not_a_tool_error() {
    let env = Env::new();
    let ran = env.run_arg("bash", r#"{"command":"false"}"#);
    assert_eq!(ran.code, Some(0));
    assert_eq!(ran.stderr, "");
    assert_eq!(ran.stdout_text(), r#"{"output":"","exit_code":1}"#);
}

// --- the command's surroundings ------------------------------------------

#[test]
fn stdin_is_dev_null() {
    let env = Env::new();
    assert_eq!(bash(&env, "readlink /proc/$$/fd/0; cat"), answer("/dev/null", 0));
}

#[test]
fn no_controlling_terminal_nothing_can_prompt() {
    let env = Env::new();
    assert_eq!(
        bash(&env, "tty; cat /dev/tty"),
        answer("not a tty\ncat: /dev/tty: No such device or address", 1)
    );
}

#[test]
fn the_shell_leads_a_new_session_and_process_group() {
    let env = Env::new();
    // Fields 5 and 6 of /proc/PID/stat: process group and session.
    let v = bash(&env, "echo $$; cut -d' ' -f5,6 /proc/$$/stat");
    let output = v["output"].as_str().unwrap().to_owned();
    let (pid, ids) = output.split_once('\n').unwrap();
    assert_eq!(ids, format!("{pid} {pid}"));
    assert_eq!(v["exit_code"], 0);
}

#[test]
fn pagers_and_git_prompts_are_turned_off() {
    let env = Env::new();
    let ran = env
        .cmd("bash")
        .env("PAGER", "less")
        .env("GIT_PAGER", "less")
        .stdin(r#"{"command":"echo $PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT"}"#)
        .run();
    assert_eq!(ran.json(), answer("cat cat 0", 0));
}

#[test]
fn signals_are_at_their_defaults_in_the_command() {
    let env = Env::new();
    // SIGPIPE ends `yes` quietly (Rust ignores SIGPIPE; the command must not).
    assert_eq!(bash(&env, "yes | head -1"), answer("y", 0));
    // Nothing the tool blocks while it waits is blocked in the command.
    assert_eq!(
        bash(&env, "grep '^SigBlk' /proc/self/status"),
        answer("SigBlk:\t0000000000000000", 0)
    );
}

#[test]
fn the_command_runs_in_the_working_directory_of_the_tool() {
    let env = Env::new();
    let work = env.work().canonicalize().unwrap();
    assert_eq!(bash(&env, "pwd -P"), answer(work.to_str().unwrap(), 0));
}

// --- background processes --------------------------------------------------

fn read_pid(path: &Path) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(text) = fs::read_to_string(path) {
            if let Ok(pid) = text.trim().parse() {
                return pid;
            }
        }
        assert!(Instant::now() < deadline, "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn wait_gone(pid: i32) -> bool {
    gone_within(pid, Duration::from_secs(10))
}

#[test]
fn a_background_process_does_not_delay_the_answer() {
    let env = Env::new();
    let ran = env.run("bash", r#"{"command":"sleep 60 & echo $! > bg.pid; echo done"}"#);
    let bg = Leftover(read_pid(&env.path("bg.pid")));
    assert_eq!(ran.json(), answer("done", 0));
    assert!(ran.elapsed < Duration::from_secs(15), "took {:?}", ran.elapsed);
    // Left running, as the contract says.
    assert!(!is_gone(bg.0), "the background process was killed");
}

#[test]
fn background_children_outlive_the_tool_on_a_normal_exit() {
    let env = Env::new();
    let (short, long) = (procs::unique_sleep(30), procs::unique_sleep(31));
    // One child in the background, one the shell waited for and that left a
    // grandchild: both stayed in the command's group, which the tool's
    // guardian must leave alone once the shell has exited by itself.
    let command = format!("sleep {short} & (sleep {long} &); echo done");
    let ran = env.run("bash", &json!({ "command": command }).to_string());
    let bg = Leftover(procs::wait_for_process(&["sleep", &short]));
    let grandchild = Leftover(procs::wait_for_process(&["sleep", &long]));
    assert_eq!(ran.json(), answer("done", 0));
    // Give a guardian that wrongly acted on the tool's exit time to act.
    std::thread::sleep(Duration::from_millis(300));
    assert!(!is_gone(bg.0), "the background child was killed");
    assert!(!is_gone(grandchild.0), "the grandchild was killed");
}

#[test]
fn output_written_just_before_exit_is_not_lost_to_a_background_holder() {
    let env = Env::new();
    // The background sleep holds the pipe open, so no end of file comes; the
    // last stretch of seq's output is still in the pipe when the shell exits.
    let ran = env.run("bash", r#"{"command":"sleep 60 & echo $! > bg.pid; seq 1 50000"}"#);
    let _bg = Leftover(read_pid(&env.path("bg.pid")));
    let expected: String = (1..=50_000).map(|i| format!("{i}\n")).collect();
    assert_eq!(ran.json(), answer(expected.strip_suffix('\n').unwrap(), 0));
}

// --- the tool told to stop -------------------------------------------------

/// Starts the tool on `command` without waiting for it, SIGINT and SIGHUP
/// at their default action: the tests stop it with them, which a tool
/// started by `nohup cargo test` or `cargo test &` would otherwise ignore.
fn start(env: &Env, command: &str) -> Child {
    let mut child = with_default_stop_signals(&mut Command::new(env.link("bash")))
        .current_dir(env.work())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the tool");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(json!({ "command": command }).to_string().as_bytes()).unwrap();
    drop(stdin);
    child
}

/// Waits (bounded) for the tool to end; its status.
fn wait_tool(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the tool did not end");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The shell and a background child write their pids; the tool gets `sig`;
/// both must be gone when the tool has ended.
fn stopping_the_tool_kills_the_group(sig: Signal, prelude: &str) {
    let env = Env::new();
    let command = format!(
        "{prelude} sleep 60 & echo $! > bg.tmp; mv bg.tmp bg.pid; \
         echo $$ > sh.tmp; mv sh.tmp sh.pid; wait"
    );
    let mut tool = start(&env, &command);
    let shell = Leftover(read_pid(&env.path("sh.pid")));
    let bg = Leftover(read_pid(&env.path("bg.pid")));
    kill(Pid::from_raw(tool.id() as i32), sig).unwrap();
    let status = wait_tool(&mut tool);
    assert_eq!(status.signal(), Some(sig as i32), "the tool ends by the signal it got");
    // Gone by the time the tool has ended (a zombie awaiting its reaper
    // counts as gone, which is_gone already allows).
    // The tool reaps the shell before it ends; SIGKILL reaches the other
    // members of the group asynchronously, so they get a bounded wait.
    assert!(is_gone(shell.0), "the shell survived {sig}");
    assert!(wait_gone(bg.0), "the background process survived {sig}");
}

#[test]
fn sigterm_kills_the_whole_process_group() {
    stopping_the_tool_kills_the_group(Signal::SIGTERM, "");
}

#[test]
fn sigint_kills_the_whole_process_group() {
    stopping_the_tool_kills_the_group(Signal::SIGINT, "");
}

#[test]
fn sighup_kills_the_whole_process_group() {
    stopping_the_tool_kills_the_group(Signal::SIGHUP, "");
}

/// `nohup cargo test`, or `cargo test &` in a script, starts the tests with
/// SIGINT and SIGHUP ignored, and the tools they spawn inherit that. The
/// stop-signal tests then failed with "the tool did not end" (the tool
/// rightly keeps a signal its host ignores): they start the tool with the
/// default action back. Runs them in this test binary started so.
#[test]
fn the_sigint_and_sighup_tests_pass_when_the_suite_starts_ignoring_them() {
    let tests = std::env::current_exe().expect("the test binary");
    let names = [
        "bash::sigint_kills_the_whole_process_group",
        "bash::sighup_kills_the_whole_process_group",
    ];
    let ran = with_stop_signals_ignored(&mut Command::new(tests))
        .args(["--exact", "--test-threads=2"])
        .args(names)
        .stdin(Stdio::null())
        .output()
        .expect("run the test binary");
    let report = String::from_utf8_lossy(&ran.stdout);
    assert_eq!(ran.status.code(), Some(0), "{report}{}", String::from_utf8_lossy(&ran.stderr));
    assert!(report.contains("test result: ok. 2 passed"), "{report}");
}

#[test]
fn processes_that_ignore_sigterm_are_killed_after_a_grace_period() {
    stopping_the_tool_kills_the_group(Signal::SIGTERM, "trap '' TERM;");
}

#[test]
fn sigkill_to_the_tool_takes_the_shell_down() {
    let env = Env::new();
    let mut tool = start(
        &env,
        "sleep 60 & echo $! > bg.tmp; mv bg.tmp bg.pid; echo $$ > sh.tmp; mv sh.tmp sh.pid; wait",
    );
    let shell = Leftover(read_pid(&env.path("sh.pid")));
    let _bg = Leftover(read_pid(&env.path("bg.pid"))); // survives SIGKILL: killed by the guard
    tool.kill().unwrap();
    let status = wait_tool(&mut tool);
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    assert!(wait_gone(shell.0), "the shell outlived the tool");
}

#[test]
fn sigkill_to_the_tool_kills_the_commands_process_group() {
    let env = Env::new();
    let (background, foreground) = (procs::unique_sleep(104), procs::unique_sleep(105));
    let mut tool = start(&env, &format!("sleep {background} & sleep {foreground}; echo x"));
    let sleeps = procs::sleeps_running(&[&background, &foreground]);
    tool.kill().unwrap();
    assert_eq!(wait_tool(&mut tool).signal(), Some(libc::SIGKILL));
    // The contract says within a second; 2 s leaves room for a busy machine.
    procs::assert_all_gone(&sleeps, "the tool");
}
