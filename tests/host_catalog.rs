//! `ikigai-tools catalog`: the built-in tools in each provider's format, and
//! discovery as a host does it.

// The shared harness's `as_nobody(self)` trips this lint; it is not ours to rename.
use crate::common;
use common::*;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

fn tool(env: &Env, rel: &str, script: &str) {
    let path = env.write(rel, script);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// A tool whose `--schema` prints `schema`.
fn schema_tool(schema: &Value) -> String {
    format!("#!/bin/sh\nif [ \"$1\" = --schema ]; then\n  echo '{schema}'\n  exit 0\nfi\nprintf '{{}}'\n")
}

fn simple(name: &str, description: &str) -> Value {
    json!({
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    })
}

fn catalog(env: &Env, args: &[&str]) -> Ran {
    let mut cmd = env.cmd("ikigai-tools").arg("catalog");
    for a in args {
        cmd = cmd.arg(a);
    }
    cmd.run()
}

fn json_out(ran: &Ran) -> Value {
    let text = ran.stdout_text();
    assert!(text.ends_with("]\n"), "one pretty array and a newline: {text:?}");
    serde_json::from_str(&text).expect("stdout is JSON")
}

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tools")
}

#[test]
fn builtins_in_each_provider_format() {
    let env = Env::new();
    for provider in ["ikigai", "openai", "anthropic", "google"] {
        let ran = catalog(&env, &["--provider", provider]);
        assert_eq!((ran.code, ran.stderr.as_str()), (Some(0), ""), "{provider}");
        snap!(provider, json_out(&ran));
    }
}

#[test]
fn the_default_format_is_ikigai_the_schemas_as_they_are() {
    let env = Env::new();
    let ran = catalog(&env, &[]);
    let v = json_out(&ran);
    let mut expected = Vec::new();
    for name in ["bash", "file_edit", "file_read", "file_write", "glob", "grep"] {
        let schema = env.cmd(name).arg("--schema").run();
        expected.push(serde_json::from_slice::<Value>(&schema.stdout).expect("schema"));
    }
    assert_eq!(v, Value::Array(expected));
}

#[test]
fn each_format_wraps_a_discovered_tool_as_its_provider_wants() {
    let env = Env::new();
    tool(&env, "tools/adder", &schema_tool(&simple("adder", "Add")));
    let params =
        json!({"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]});
    let expected = [
        ("ikigai", json!([{"name": "adder", "description": "Add", "parameters": params}])),
        (
            "openai",
            json!([{"type": "function", "function": {"name": "adder", "description": "Add", "parameters": params}}]),
        ),
        ("anthropic", json!([{"name": "adder", "description": "Add", "input_schema": params}])),
        (
            "google",
            json!([{"functionDeclarations": [{"name": "adder", "description": "Add", "parameters": params}]}]),
        ),
    ];
    for (provider, want) in expected {
        let ran = catalog(&env, &["--provider", provider, "tools"]);
        assert_eq!(ran.code, Some(0), "{}", ran.stderr);
        assert_eq!(json_out(&ran), want, "{provider}");
    }
}

#[test]
fn discovery_takes_executable_regular_files_only_sorted_by_name() {
    let env = Env::new();
    tool(&env, "tools/zeta", &schema_tool(&simple("zeta", "Z")));
    tool(&env, "tools/alpha-tool", &schema_tool(&simple("alpha", "A")));
    tool(&env, "tools/.hidden", &schema_tool(&simple("hidden", "H")));
    env.write("tools/not-executable", schema_tool(&simple("plain", "P")));
    tool(&env, "tools/subdir/inner", &schema_tool(&simple("inner", "I")));
    tool(&env, "elsewhere/linked", &schema_tool(&simple("linked", "L")));
    std::os::unix::fs::symlink("../elsewhere/linked", env.path("tools/link")).expect("symlink");
    std::os::unix::fs::symlink("nowhere", env.path("tools/dangling")).expect("symlink");
    let ran = catalog(&env, &["tools"]);
    assert_eq!((ran.code, ran.stderr.as_str()), (Some(0), ""));
    assert_eq!(names(&json_out(&ran)), ["alpha", "linked", "zeta"]);
}

#[test]
fn a_later_directory_overrides_an_earlier_one_by_name() {
    let env = Env::new();
    tool(&env, "a/echo", &schema_tool(&simple("echo", "from a")));
    tool(&env, "a/only-a", &schema_tool(&simple("only_a", "only in a")));
    tool(&env, "b/echo-tool", &schema_tool(&simple("echo", "from b")));
    let ran = catalog(&env, &["a", "b"]);
    assert_eq!(ran.code, Some(0));
    let v = json_out(&ran);
    assert_eq!(names(&v), ["echo", "only_a"]);
    assert_eq!(v[0]["description"], "from b");
    assert_eq!(ran.stderr, "ikigai-tools: b/echo-tool: overrides a/echo (echo)\n");
    let v = json_out(&catalog(&env, &["b", "a"]));
    assert_eq!(v[0]["description"], "from a");
}

#[test]
fn two_files_of_one_directory_with_one_name_keep_the_first() {
    let env = Env::new();
    tool(&env, "tools/echo", &schema_tool(&simple("echo", "first")));
    tool(&env, "tools/echo.bak", &schema_tool(&simple("echo", "second")));
    let ran = catalog(&env, &["tools"]);
    assert_eq!(ran.code, Some(1));
    assert_eq!(json_out(&ran)[0]["description"], "first");
    assert_eq!(
        ran.stderr,
        "ikigai-tools: tools/echo.bak: rejected: declares the name echo, already taken by tools/echo\n"
    );
}

#[test]
fn each_rejected_tool_is_named_with_the_rule_it_broke() {
    let env = Env::new();
    let ran = env.cmd("ikigai-tools").arg("catalog").arg("broken").current_dir(fixtures()).run();
    assert_eq!(ran.code, Some(1));
    assert_eq!(names(&json_out(&ran)), ["call_crash", "call_not_json", "reads_stdin"]);
    assert_eq!(
        ran.stderr.lines().collect::<Vec<_>>(),
        [
            "ikigai-tools: broken/rule1-not-json: rejected: breaks rule 1, valid JSON: expected ident at line 1 column 2",
            "ikigai-tools: broken/rule2-no-description: rejected: breaks rule 2, required fields: missing description",
            "ikigai-tools: broken/rule3-bad-name: rejected: breaks rule 3, name format: \"bad-name\" may hold only letters, digits and underscores",
            "ikigai-tools: broken/rule4-no-properties: rejected: breaks rule 4, parameters structure: parameters.properties is missing",
            "ikigai-tools: broken/rule5-bad-type: rejected: breaks rule 5, property types: property body has type \"text\", not one of string, integer, number, boolean, array, object",
            "ikigai-tools: broken/rule6-unknown-required: rejected: breaks rule 6, required consistency: required lists \"path\", which is not a defined property",
            "ikigai-tools: broken/schema-exits-1: rejected: --schema exited with code 1",
            "ikigai-tools: broken/slow-schema: rejected: did not answer --schema within 1s",
        ]
    );
}

#[test]
fn fifty_slow_tools_are_rejected_in_about_one_second_and_killed() {
    let env = Env::new();
    env.mkdir("pids");
    for i in 0..50 {
        let script = format!(
            "#!/bin/sh\nif [ \"$1\" = --schema ]; then\n  echo $$ > pids/{i}\n  exec sleep 10\nfi\nprintf '{{}}'\n"
        );
        tool(&env, &format!("slow/tool{i:02}"), &script);
    }
    let ran = catalog(&env, &["slow"]);
    assert_eq!(ran.code, Some(1));
    assert_eq!(json_out(&ran), json!([]));
    let lines: Vec<&str> = ran.stderr.lines().collect();
    assert_eq!(lines.len(), 50);
    assert_eq!(lines[0], "ikigai-tools: slow/tool00: rejected: did not answer --schema within 1s");
    // One after the other they would take 50 s.
    assert!(ran.elapsed < Duration::from_secs(8), "took {:?}", ran.elapsed);
    for i in 0..50 {
        let pid: i32 =
            String::from_utf8_lossy(&env.read(&format!("pids/{i}"))).trim().parse().unwrap_or(0);
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit(')').next().and_then(|r| r.split_whitespace().next());
        assert!(matches!(state, None | Some("Z") | Some("X")), "tool{i:02} (pid {pid}) still runs");
    }
}

#[test]
fn default_dirs_are_libexec_then_home_then_project() {
    let env = Env::new();
    tool(&env, "libexec/echo", &schema_tool(&simple("echo", "libexec")));
    tool(&env, "libexec/lib_only", &schema_tool(&simple("lib_only", "libexec")));
    tool(&env, "home/.ikigai/tools/echo", &schema_tool(&simple("echo", "home")));
    tool(&env, "home/.ikigai/tools/home_only", &schema_tool(&simple("home_only", "home")));
    tool(&env, ".ikigai/tools/echo", &schema_tool(&simple("echo", "project")));
    let ran = env
        .cmd("ikigai-tools")
        .arg("catalog")
        .arg("--default-dirs")
        .env("IKIGAI_LIBEXEC_DIR", env.path("libexec"))
        .env("HOME", env.path("home"))
        .run();
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let v = json_out(&ran);
    assert_eq!(names(&v), ["echo", "home_only", "lib_only"]);
    assert_eq!(v[0]["description"], "project");
}

#[test]
fn default_dirs_without_a_libexec_dir_start_from_the_builtins() {
    let env = Env::new();
    tool(&env, ".ikigai/tools/grep", &schema_tool(&simple("grep", "my own grep")));
    let ran = env
        .cmd("ikigai-tools")
        .arg("catalog")
        .arg("--default-dirs")
        .env("IKIGAI_LIBEXEC_DIR", "")
        .env("HOME", env.path("nohome"))
        .run();
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let v = json_out(&ran);
    assert_eq!(names(&v), ["bash", "file_edit", "file_read", "file_write", "glob", "grep"]);
    assert_eq!(v[5]["description"], "my own grep");
    assert_eq!(ran.stderr, "ikigai-tools: ./.ikigai/tools/grep: overrides built-in grep (grep)\n");
}

#[test]
fn the_installed_layout_of_links_is_discovered() {
    let env = Env::new();
    env.mkdir("libexec");
    for name in ["bash", "file-read-tool", "glob"] {
        std::os::unix::fs::symlink(binary(), env.path(&format!("libexec/{name}")))
            .expect("symlink");
    }
    let ran = catalog(&env, &["libexec"]);
    assert_eq!((ran.code, ran.stderr.as_str()), (Some(0), ""));
    assert_eq!(names(&json_out(&ran)), ["bash", "file_read", "glob"]);
}

#[test]
fn a_directory_that_cannot_be_read_is_reported() {
    let env = Env::new();
    let ran = catalog(&env, &["missing"]);
    assert_eq!(ran.code, Some(1));
    assert_eq!(json_out(&ran), json!([]));
    assert_eq!(ran.stderr, "ikigai-tools: missing: cannot read the directory: No such file or directory (os error 2)\n");
}

#[test]
fn an_unknown_provider_is_a_usage_error() {
    let env = Env::new();
    let ran = catalog(&env, &["--provider", "gemini"]);
    assert_eq!(ran.code, Some(2));
    assert!(ran.stdout.is_empty());
    assert!(
        ran.stderr.contains("invalid value 'gemini' for '--provider <PROVIDER>'"),
        "{}",
        ran.stderr
    );
}

#[test]
fn a_thousand_tools_under_a_limit_of_256_open_files_are_all_accepted() {
    // Each `--schema` run holds descriptors while it runs: all 1,000 at once
    // ran out of them and rejected the rest as not started (124 of 1,000
    // were accepted under `ulimit -n 256`, 508 under 1024).
    let env = Env::new();
    tool(
        &env,
        "bin/named-after-itself",
        "#!/bin/sh\nprintf '{\"name\":\"%s\",\"description\":\"d\",\"parameters\":\
         {\"type\":\"object\",\"properties\":{}}}\\n' \"${0##*/}\"\n",
    );
    env.mkdir("tools");
    let expected: Vec<String> = (0..1000).map(|i| format!("t{i:04}")).collect();
    for name in &expected {
        std::os::unix::fs::symlink("../bin/named-after-itself", env.path(&format!("tools/{name}")))
            .expect("symlink");
    }
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -n 256 && exec \"$0\" catalog tools")
        .arg(env.link("ikigai-tools"))
        .current_dir(env.work())
        .output()
        .expect("run sh");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let rejected = stderr.lines().count();
    assert_eq!(
        (out.status.code(), rejected),
        (Some(0), 0),
        "{}",
        stderr.lines().next().unwrap_or("")
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(names(&v), expected);
}
