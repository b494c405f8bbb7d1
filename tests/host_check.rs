//! `ikigai-tools check`: every rule of docs/SPEC.md's schema format, the `--schema` time limit,
//! stdin on `--schema`, and a call with `{}`, against a fixture directory of
//! deliberately broken tools (one per rule).

// The shared harness's `as_nobody(self)` trips this lint; it is not ours to rename.
use crate::common;
use common::procs;
use common::*;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::Duration;

/// Stores a text snapshot in the top-level `snapshots/`.
macro_rules! snap_text {
    ($name:expr, $value:expr) => {
        insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => true}, {
            insta::assert_snapshot!($name, $value);
        })
    };
}

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tools")
}

fn tool(env: &Env, rel: &str, script: &str) {
    let path = env.write(rel, script);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The FAIL lines of each report, by subject.
fn failures(text: &str) -> BTreeMap<String, Vec<String>> {
    let mut reports = BTreeMap::new();
    let mut current = String::new();
    for line in text.lines() {
        if let Some(item) = line.strip_prefix("  ") {
            if let Some(fail) = item.strip_prefix("FAIL  ") {
                reports.entry(current.clone()).or_insert_with(Vec::new).push(fail.to_owned());
            }
        } else if let Some(subject) = line.strip_suffix(": FAILED").or(line.strip_suffix(": ok")) {
            current = subject.to_owned();
            reports.entry(current.clone()).or_insert_with(Vec::new);
        }
    }
    reports
}

#[test]
fn each_broken_tool_fails_exactly_the_check_it_was_made_to_fail() {
    let env = Env::new();
    let ran = env
        .cmd("ikigai-tools")
        .arg("check")
        .arg("--timeout")
        .arg("5")
        .arg("broken")
        .current_dir(fixtures())
        .run();
    assert_eq!(ran.code, Some(1), "{}", ran.stderr);
    assert_eq!(ran.stderr, "");
    let text = ran.stdout_text();
    let failed = failures(&text);
    let first_words = |subject: &str| -> Vec<String> {
        failed[subject].iter().map(|f| f.split(':').next().unwrap_or_default().to_owned()).collect()
    };
    for n in 1..=6 {
        let subject = failed
            .keys()
            .find(|k| k.starts_with(&format!("broken/rule{n}-")))
            .cloned()
            .unwrap_or_default();
        assert_eq!(first_words(&subject), [format!("rule {n}, ") + rule_title(n)], "{subject}");
    }
    assert_eq!(first_words("broken/slow-schema"), ["answers --schema within 1s"]);
    assert_eq!(first_words("broken/reads-stdin"), ["does not wait for stdin on --schema"]);
    assert_eq!(
        first_words("broken/call-not-json"),
        ["answers a call with {} with one JSON object"]
    );
    assert_eq!(first_words("broken/call-crash"), ["answers a call with {} with one JSON object"]);
    assert_eq!(failed.len(), 11);
    assert!(text.ends_with("\n11 tools checked: 0 passed, 11 failed\n"), "{text}");
    // All tools at once: the slow one costs its 1 s once.
    assert!(ran.elapsed < Duration::from_secs(10), "took {:?}", ran.elapsed);
    snap_text!("broken", text);
}

fn rule_title(n: usize) -> &'static str {
    [
        "valid JSON",
        "required fields",
        "name format",
        "parameters structure",
        "property types",
        "required consistency",
    ][n - 1]
}

#[test]
fn a_good_tool_passes_everything() {
    let env = Env::new();
    let ran =
        env.cmd("ikigai-tools").arg("check").arg("good/echo-args").current_dir(fixtures()).run();
    assert_eq!(ran.code, Some(0));
    assert_eq!(
        ran.stdout_text(),
        "good/echo-args: ok\n\
         \x20 ok    answers --schema within 1s\n\
         \x20 ok    does not wait for stdin on --schema\n\
         \x20 ok    rule 1, valid JSON\n\
         \x20 ok    rule 2, required fields\n\
         \x20 ok    rule 3, name format\n\
         \x20 ok    rule 4, parameters structure\n\
         \x20 ok    rule 5, property types\n\
         \x20 ok    rule 6, required consistency\n\
         \x20 ok    answers a call with {} with one JSON object: {\"received\":{}}\n\
         \n\
         1 tool checked: 1 passed, 0 failed\n"
    );
}

#[test]
fn the_builtins_pass_when_no_path_is_given() {
    let env = Env::new();
    let ran = env.cmd("ikigai-tools").arg("check").run();
    assert_eq!(ran.code, Some(0), "{}", ran.stdout_text());
    let text = ran.stdout_text();
    let headers: Vec<&str> =
        text.lines().filter(|l| !l.starts_with(' ') && !l.is_empty()).collect();
    assert_eq!(
        headers,
        [
            "built-in bash: ok",
            "built-in file_edit: ok",
            "built-in file_read: ok",
            "built-in file_write: ok",
            "built-in glob: ok",
            "built-in grep: ok",
            "6 tools checked: 6 passed, 0 failed",
        ]
    );
}

#[test]
fn a_call_that_hangs_fails_after_the_time_limit() {
    let env = Env::new();
    let script = "#!/bin/sh\nif [ \"$1\" = --schema ]; then\n  echo '{\"name\":\"hang\",\"description\":\"Hangs\",\
                  \"parameters\":{\"type\":\"object\",\"properties\":{}}}'\n  exit 0\nfi\nexec sleep 30\n";
    tool(&env, "hang", script);
    let ran = env.cmd("ikigai-tools").arg("check").arg("--timeout").arg("1").arg("hang").run();
    assert_eq!(ran.code, Some(1));
    assert_eq!(
        failures(&ran.stdout_text())["hang"],
        ["answers a call with {} with one JSON object: Tool 'hang' timed out after 1s"]
    );
    assert!(ran.elapsed < Duration::from_secs(10), "took {:?}", ran.elapsed);
}

#[test]
fn a_check_timeout_leaves_nothing_of_what_the_tool_started() {
    let env = Env::new();
    let (background, foreground) = (procs::unique_sleep(104), procs::unique_sleep(105));
    // The tool runs the bash tool, whose command ignores SIGTERM in a
    // session of its own: when the time limit stops the tool's group, the
    // bash tool's guardian must take the command's group down with it.
    let command = format!("trap '' TERM; sleep {background} & sleep {foreground}; echo x");
    let request = serde_json::json!({ "command": command }).to_string();
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = --schema ]; then\n  echo '{{\"name\":\"runs_bash\",\"description\":\"Runs bash\",\
         \"parameters\":{{\"type\":\"object\",\"properties\":{{}}}}}}'\n  exit 0\nfi\n\
         printf '%s' '{}' | '{}'\n",
        request.replace('\'', "'\\''"),
        env.link("bash").display()
    );
    tool(&env, "runs_bash", &script);
    let host = env.spawn_suite(&["check", "--timeout", "1", "runs_bash"]);
    let sleeps = procs::sleeps_running(&[&background, &foreground]);
    let out = host.wait_with_output().expect("wait for the host");
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        failures(&report)["runs_bash"],
        ["answers a call with {} with one JSON object: Tool 'runs_bash' timed out after 1s"],
        "{report}"
    );
    procs::assert_all_gone(&sleeps, "the timeout");
}

#[test]
fn a_schema_name_that_differs_from_the_file_name_is_noted_not_failed() {
    let env = Env::new();
    let script = "#!/bin/sh\nif [ \"$1\" = --schema ]; then\n  echo '{\"name\":\"get_weather\",\"description\":\"Weather\",\
                  \"parameters\":{\"type\":\"object\",\"properties\":{}}}'\n  exit 0\nfi\nprintf '{}'\n";
    tool(&env, "weather.sh", script);
    let ran = env.cmd("ikigai-tools").arg("check").arg("weather.sh").run();
    assert_eq!(ran.code, Some(0));
    let text = ran.stdout_text();
    let notes: Vec<&str> = text.lines().filter(|l| l.starts_with("  note")).collect();
    assert_eq!(
        notes,
        ["  note  the schema names the tool get_weather, the file name suggests weather: hosts register \
          get_weather, but hosts that name tools after their files would offer weather"]
    );
}

#[test]
fn paths_that_are_not_tools_fail() {
    let env = Env::new();
    env.write("notes.txt", "not a tool");
    env.mkdir("empty");
    let ran =
        env.cmd("ikigai-tools").arg("check").arg("missing").arg("notes.txt").arg("empty").run();
    assert_eq!(ran.code, Some(1));
    assert_eq!(
        ran.stdout_text(),
        "missing: FAILED\n\
         \x20 FAIL  cannot be read: No such file or directory (os error 2)\n\
         \n\
         notes.txt: FAILED\n\
         \x20 FAIL  not an executable regular file\n\
         \n\
         empty: FAILED\n\
         \x20 FAIL  the directory holds no executable file\n\
         \n\
         3 tools checked: 0 passed, 3 failed\n"
    );
}
