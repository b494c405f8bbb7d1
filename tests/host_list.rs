//! `ikigai-tools list [NAME]`: what ikigai's `/tool` and `/tool NAME` show.

// The shared harness's `as_nobody(self)` trips this lint; it is not ours to rename.
use crate::common;
use common::*;

use std::os::unix::fs::PermissionsExt;

use serde_json::{json, Value};

fn tool(env: &Env, rel: &str, schema: &Value) {
    let script = format!("#!/bin/sh\nif [ \"$1\" = --schema ]; then\n  echo '{schema}'\n  exit 0\nfi\nprintf '{{}}'\n");
    let path = env.write(rel, script);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn list(env: &Env, args: &[&str]) -> Ran {
    let mut cmd = env.cmd("ikigai-tools").arg("list");
    for a in args {
        cmd = cmd.arg(a);
    }
    cmd.run()
}

#[test]
fn the_builtins_with_their_descriptions() {
    let env = Env::new();
    let ran = list(&env, &[]);
    assert_eq!((ran.code, ran.stderr.as_str()), (Some(0), ""));
    assert_eq!(
        ran.stdout_text(),
        "bash        Execute a shell command and return output\n\
         file_edit   Edit a file by replacing exact text matches. You must read the file before editing.\n\
         file_read   Read contents of a file\n\
         file_write  Write content to a file (creates or overwrites)\n\
         glob        Find files matching a glob pattern\n\
         grep        Search for pattern in files using regular expressions\n"
    );
}

#[test]
fn discovered_tools_show_their_paths() {
    let env = Env::new();
    let params = json!({"type": "object", "properties": {}});
    tool(
        &env,
        "tools/weather.sh",
        &json!({"name": "get_weather", "description": "Current weather", "parameters": params}),
    );
    tool(
        &env,
        "tools/ls",
        &json!({"name": "ls", "description": "List a directory", "parameters": params}),
    );
    let ran = list(&env, &["--dir", "tools"]);
    assert_eq!((ran.code, ran.stderr.as_str()), (Some(0), ""));
    assert_eq!(
        ran.stdout_text(),
        "get_weather  Current weather\n             tools/weather.sh\nls           List a directory\n             tools/ls\n"
    );
}

#[test]
fn one_tool_shows_its_whole_schema() {
    let env = Env::new();
    let ran = list(&env, &["file_edit"]);
    assert_eq!((ran.code, ran.stderr.as_str()), (Some(0), ""));
    let text = ran.stdout_text();
    assert!(text.ends_with("}\n"));
    let shown: Value = serde_json::from_str(&text).expect("JSON");
    let schema = env.cmd("file-edit").arg("--schema").run();
    assert_eq!(shown, serde_json::from_slice::<Value>(&schema.stdout).expect("schema"));
    snap!("file_edit", shown);
}

#[test]
fn any_spelling_of_a_builtin_name_is_found() {
    let env = Env::new();
    let ran = list(&env, &["file-read-tool"]);
    assert_eq!(ran.code, Some(0));
    let shown: Value = serde_json::from_slice(&ran.stdout).expect("JSON");
    assert_eq!(shown["name"], "file_read");
}

#[test]
fn an_unknown_name_is_told_with_the_tools() {
    let env = Env::new();
    let ran = list(&env, &["nonesuch"]);
    assert_eq!(ran.code, Some(1));
    assert!(ran.stdout.is_empty());
    assert_eq!(
        ran.stderr,
        "ikigai-tools: unknown tool 'nonesuch'; the tools are: \
         bash, file_edit, file_read, file_write, glob, grep\n"
    );
    let ran = list(&env, &["glop"]);
    assert_eq!(
        ran.stderr,
        "ikigai-tools: unknown tool 'glop' (did you mean glob?); the tools are: \
         bash, file_edit, file_read, file_write, glob, grep\n"
    );
}

#[test]
fn an_empty_directory_has_no_tools() {
    let env = Env::new();
    env.mkdir("empty");
    let ran = list(&env, &["--dir", "empty"]);
    assert_eq!((ran.code, ran.stdout_text().as_str()), (Some(0), "No tools available\n"));
}
