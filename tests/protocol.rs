//! The call protocol of docs/SPEC.md, "The protocol", common to all tools: one JSON
//! object in, exactly one JSON object out; bad input answered, never a
//! crash or a hang; the shellclaw dialect.

use crate::common;
use common::*;

use serde_json::json;
use std::process::{Command, Stdio};

/// The links the tools are installed as (`file-read`).
fn links() -> impl Iterator<Item = &'static str> {
    ikigai_tools::tools::TOOLS.iter().map(|t| t.command)
}

/// The ikigai dialect answers bad input with the envelope, exit 0, and the
/// same message as one line on stderr.
fn assert_bad_input(ran: &Ran, code: &str, message: &str) {
    assert_eq!(ran.code, Some(0), "exit code");
    assert_eq!(ran.json(), json!({"error": message, "error_code": code}));
    assert_eq!(ran.stderr, format!("{message}\n"));
}

#[test]
fn empty_stdin_is_invalid_json() {
    let env = Env::new();
    for link in links() {
        for input in ["", "  \n"] {
            let ran = env.run(link, input);
            assert_bad_input(
                &ran,
                "INVALID_JSON",
                "invalid JSON: empty input, expected an object of arguments",
            );
        }
    }
}

#[test]
fn malformed_json_says_where() {
    let env = Env::new();
    let cases = [
        (r#"{"command":"#, "invalid JSON at line 1 column 11: EOF while parsing a value"),
        (r#"{"command":"x"} {}"#, "invalid JSON at line 1 column 17: trailing characters"),
        ("{\n'x': 1}", "invalid JSON at line 2 column 1: key must be a string"),
        ("[1,2]", "invalid JSON: expected an object of arguments, got an array"),
        ("\"ls\"", "invalid JSON: expected an object of arguments, got a string"),
        ("null", "invalid JSON: expected an object of arguments, got null"),
        ("42", "invalid JSON: expected an object of arguments, got a number"),
    ];
    for (input, message) in cases {
        assert_bad_input(&env.run("bash", input), "INVALID_JSON", message);
    }
}

#[test]
fn invalid_utf8_and_deep_nesting_are_answered_not_crashed() {
    let env = Env::new();
    let ran = env.cmd("glob").stdin(b"{\"pattern\":\"\xff\"}").run();
    assert_bad_input(
        &ran,
        "INVALID_JSON",
        "invalid JSON at line 1 column 13: invalid unicode code point",
    );
    let deep = format!("{{\"pattern\":{}{}}}", "[".repeat(100_000), "]".repeat(100_000));
    let ran = env.run("glob", &deep);
    assert_bad_input(
        &ran,
        "INVALID_JSON",
        "invalid JSON at line 1 column 138: recursion limit exceeded",
    );
}

#[test]
fn missing_required_parameters_are_named() {
    let env = Env::new();
    let cases = [
        ("bash", "{}", "command"),
        ("file-read", "{}", "file_path"),
        ("file-write", r#"{"file_path":"a"}"#, "content"),
        ("file-write", r#"{"content":"a"}"#, "file_path"),
        ("file-edit", r#"{"file_path":"a","old_string":"x"}"#, "new_string"),
        ("glob", r#"{"path":"."}"#, "pattern"),
        ("grep", r#"{"glob":"*"}"#, "pattern"),
    ];
    for (link, input, name) in cases {
        assert_bad_input(
            &env.run(link, input),
            "INVALID_ARG",
            &format!("missing required parameter: {name}"),
        );
    }
}

#[test]
fn wrong_types_name_the_type_expected() {
    let env = Env::new();
    env.write("f.txt", "x\n");
    let cases = [
        ("bash", json!({"command": 5}), "parameter command must be a string"),
        (
            "file-read",
            json!({"file_path": "f.txt", "offset": "2"}),
            "parameter offset must be an integer",
        ),
        (
            "file-read",
            json!({"file_path": "f.txt", "limit": 1.5}),
            "parameter limit must be an integer",
        ),
        ("file-read", json!({"file_path": ["f.txt"]}), "parameter file_path must be a string"),
        (
            "file-edit",
            json!({"file_path": "f.txt", "old_string": "x", "new_string": "y", "replace_all": "yes"}),
            "parameter replace_all must be a boolean",
        ),
        ("glob", json!({"pattern": "*", "path": {}}), "parameter path must be a string"),
        ("grep", json!({"pattern": "x", "glob": false}), "parameter glob must be a string"),
    ];
    for (link, args, message) in cases {
        assert_bad_input(&env.run(link, &args.to_string()), "INVALID_ARG", message);
    }
}

#[test]
fn null_is_absent_extra_keys_are_ignored_integral_floats_count() {
    let env = Env::new();
    env.write("f.txt", "one\ntwo\nthree\n");
    let v = env.call(
        "file-read",
        json!({"file_path": "f.txt", "offset": 2.0, "limit": null, "colour": "blue"}),
    );
    assert_eq!(v, json!({"output": "two\nthree\n"}));
    let v = env.call("glob", json!({"pattern": "*.txt", "path": null}));
    assert_eq!(v, json!({"output": "f.txt", "count": 1}));
}

#[test]
fn an_unknown_key_holding_a_number_out_of_range_is_ignored() {
    // serde_json cannot hold 1e400; the whole call was INVALID_JSON.
    let env = Env::new();
    env.write("f.txt", "one\n");
    let input = r#"{"command":"echo hi","x":1e400,"y":[-1e999,{"z":1e400}]}"#;
    let ran = env.run("bash", input);
    assert_eq!((ran.code, ran.stderr.as_str()), (Some(0), ""));
    assert_eq!(ran.json(), json!({"output": "hi", "exit_code": 0}));
    let ran = env.run_arg("bash", input);
    assert_eq!((ran.code, ran.json()), (Some(0), json!({"output": "hi", "exit_code": 0})));
    // Read by the tool, such a number is a bad argument, named.
    assert_bad_input(
        &env.run("file-read", r#"{"file_path":"f.txt","offset":1e400}"#),
        "INVALID_ARG",
        "parameter offset must be an integer: number out of range",
    );
    assert_bad_input(
        &env.run("bash", r#"{"command":1e400}"#),
        "INVALID_ARG",
        "parameter command must be a string",
    );
}

#[test]
fn empty_and_nul_paths_are_invalid_arguments() {
    let env = Env::new();
    assert_bad_input(
        &env.run("file-read", r#"{"file_path":""}"#),
        "INVALID_ARG",
        "parameter file_path must not be empty",
    );
    assert_bad_input(
        &env.run("file-write", r#"{"file_path":"a\u0000b","content":""}"#),
        "INVALID_ARG",
        "parameter file_path must not contain NUL bytes",
    );
}

#[test]
fn answers_are_compact_with_no_trailing_newline() {
    let env = Env::new();
    let ran = env.run("bash", r#"{"command":"echo hi"}"#);
    assert_eq!(ran.stdout_text(), r#"{"output":"hi","exit_code":0}"#);
    assert_eq!(ran.stderr, "");
}

#[test]
fn shellclaw_takes_arguments_in_dollar_one() {
    let env = Env::new();
    let ran = env.run_arg("bash", r#"{"command":"echo hi"}"#);
    assert_eq!(
        (ran.code, ran.stdout_text(), ran.stderr.as_str()),
        (Some(0), r#"{"output":"hi","exit_code":0}"#.into(), "")
    );
    // A failing command is not a tool error.
    let ran = env.run_arg("bash", r#"{"command":"exit 3"}"#);
    assert_eq!((ran.code, ran.json()), (Some(0), json!({"output": "", "exit_code": 3})));
}

#[test]
fn shellclaw_errors_exit_1_with_the_message_on_stderr() {
    let env = Env::new();
    let ran = env.run_arg("file_read", r#"{"file_path":"missing.txt"}"#);
    assert_eq!(ran.code, Some(1));
    let message = format!("File not found: missing.txt{}", env.looked_for("missing.txt"));
    assert_eq!(ran.json(), json!({"error": message, "error_code": "FILE_NOT_FOUND"}));
    assert_eq!(ran.stderr, format!("{message}\n"));
    let ran = env.run_arg("grep", "{");
    assert_eq!(ran.code, Some(1));
    assert_eq!(ran.stderr, "invalid JSON at line 1 column 1: EOF while parsing an object\n");
    snap!("shellclaw_invalid_json", ran.json());
}

#[test]
fn shellclaw_leaves_stdin_alone() {
    // stdin is a pipe that is never closed: reading it would hang the tool,
    // and a byte read from it would be lost to the caller.
    let env = Env::new();
    let mut child = Command::new(env.link("glob"))
        .arg(r#"{"pattern":"*"}"#)
        .current_dir(env.work())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let _writer = child.stdin.take().unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(start.elapsed().as_secs() < 15, "the tool waited for stdin");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.stdout, br#"{"output":"","count":0}"#);
}

#[test]
fn operation_errors_in_ikigai_dialect_are_quiet_on_stderr() {
    let env = Env::new();
    let ran = env.run("file-read", r#"{"file_path":"missing.txt"}"#);
    assert_eq!(ran.code, Some(0));
    assert_eq!(ran.stderr, "");
    snap!("ikigai_file_not_found", env.redacted(ran.json()));
}

/// Runs `link ARG` with stdout on a pseudo-terminal; what the terminal
/// received, and stderr.
fn at_a_terminal(env: &Env, link: &str, arg: &str) -> (Vec<u8>, String) {
    use std::io::Read;
    let pty = nix::pty::openpty(None, None).expect("openpty");
    // The command holds the only other copy of the terminal's end, and is
    // dropped with this statement: the reader sees the end of it when the
    // tool exits.
    let child = Command::new(env.link(link))
        .arg(arg)
        .current_dir(env.work())
        .stdin(Stdio::null())
        .stdout(Stdio::from(pty.slave))
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the tool");
    let mut master = std::fs::File::from(pty.master);
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    // EIO, not 0, is how a pseudo-terminal says its other end is closed.
    while let Ok(n @ 1..) = master.read(&mut buf) {
        seen.extend_from_slice(&buf[..n]);
    }
    let out = child.wait_with_output().expect("wait");
    (seen, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn at_a_terminal_the_answer_ends_its_line_in_a_pipe_it_does_not() {
    let env = Env::new();
    // The terminal turns the newline into CR LF (ONLCR).
    let (seen, stderr) = at_a_terminal(&env, "bash", r#"{"command":"echo hi"}"#);
    assert_eq!(String::from_utf8_lossy(&seen), "{\"output\":\"hi\",\"exit_code\":0}\r\n");
    assert_eq!(stderr, "");
    // The shellclaw dialect's stderr copy of an error comes after that line.
    let (seen, stderr) = at_a_terminal(&env, "file-read", r#"{"file_path":"missing"}"#);
    let message = format!("File not found: missing{}", env.looked_for("missing"));
    assert_eq!(
        String::from_utf8_lossy(&seen),
        format!("{{\"error\":\"{message}\",\"error_code\":\"FILE_NOT_FOUND\"}}\r\n")
    );
    assert_eq!(stderr, format!("{message}\n"));
    // Into a pipe, as a host reads it: the object's exact bytes.
    let ran = env.run_arg("bash", r#"{"command":"echo hi"}"#);
    assert_eq!(ran.stdout, br#"{"output":"hi","exit_code":0}"#);
}

/// Reshape III: in the seed profile `dry_run` was an unknown key, ignored,
/// and `{"file_path":…,"old_string":…,"new_string":…,"dry_run":true}`
/// really edited the file. A full-profile parameter in the seed is refused
/// before the tool runs, and the file is left as it was.
#[test]
fn a_seed_dry_run_is_refused_and_edits_nothing() {
    let env = Env::new();
    env.write("f.txt", "keep me\n");
    let ran = env.run(
        "file-edit",
        &json!({"file_path": "f.txt", "old_string": "keep", "new_string": "lose", "dry_run": true})
            .to_string(),
    );
    assert_bad_input(
        &ran,
        "INVALID_ARG",
        full_only("dry_run", "file_edit")["error"].as_str().unwrap(),
    );
    assert_eq!(env.read("f.txt"), b"keep me\n");
    // Misspelt (`dryrun`), it was as unknown as before and the file edited.
    let ran = env.run(
        "file-edit",
        &json!({"file_path": "f.txt", "old_string": "keep", "new_string": "lose", "dryrun": true})
            .to_string(),
    );
    let told = ran.json()["error"].as_str().unwrap_or_default().to_owned();
    assert!(told.starts_with("unknown parameter dryrun: did you mean dry_run? It is a full-profile parameter of file_edit; "), "{told}");
    assert_eq!(env.read("f.txt"), b"keep me\n");
}

/// Reshape III: `{"file_path":"x","offest":2}` read the whole file, the
/// misspelt `offest` ignored as an unknown key. A near miss of a
/// parameter's name is refused naming the parameter; the model's own keys
/// (`description`) are still ignored.
#[test]
fn a_misspelt_offset_is_refused_instead_of_reading_the_whole_file() {
    let env = Env::new();
    env.write("f.txt", "l1\nl2\nl3\n");
    let ran = env.run("file-read", r#"{"file_path":"f.txt","offest":2}"#);
    assert_bad_input(&ran, "INVALID_ARG", "unknown parameter offest: did you mean offset?");
    let ran = env.run("file-read", r#"{"file_path":"f.txt","offset":2,"description":"x"}"#);
    assert_eq!(ran.json(), json!({"output": "l2\nl3\n"}));
}

/// Bad JSON is told before the parameter names, and the names before the
/// tool's own checks.
#[test]
fn the_name_rule_comes_after_the_json_and_before_the_tool() {
    let env = Env::new();
    let ran = env.run("file-read", r#"{"offest":2"#);
    assert_eq!(ran.json()["error_code"], "INVALID_JSON");
    // file_path is missing too: the name is told first.
    let ran = env.run("file-read", r#"{"offest":2}"#);
    assert_bad_input(&ran, "INVALID_ARG", "unknown parameter offest: did you mean offset?");
    let ran = env.run("file-read", r#"{"offset":{}}"#);
    assert_bad_input(&ran, "INVALID_ARG", "missing required parameter: file_path");
}

/// Every property of every full schema is read by its tool: given a value
/// of the wrong type (an object), with the required parameters given, the
/// call is INVALID_ARG naming it. A parameter a schema promises and the
/// tool ignores fails here.
#[test]
fn every_parameter_of_every_full_schema_is_read_by_its_tool() {
    use ikigai_tools::profile::Profile;
    let env = Env::new();
    let mut unread = Vec::new();
    for tool in ikigai_tools::tools::of(Profile::Full) {
        let mut required: Vec<String> = Vec::new();
        let mut properties = serde_json::Map::new();
        for profile in [Profile::Seed, Profile::Full] {
            let schema: serde_json::Value = serde_json::from_str(tool.schema(profile)).unwrap();
            let parameters = &schema["parameters"];
            properties = parameters["properties"].as_object().unwrap().clone();
            for name in parameters["required"].as_array().unwrap() {
                required.push(name.as_str().unwrap().to_owned());
            }
        }
        for (name, property) in &properties {
            let mut args = serde_json::Map::new();
            for given in &required {
                let value = match properties[given]["type"].as_str() {
                    // Distinct strings (file_edit refuses identical ones).
                    Some("string") => json!(given),
                    Some("integer") => json!(1),
                    Some("boolean") => json!(false),
                    other => panic!("{}.{given}: a required {other:?}", tool.name),
                };
                args.insert(given.clone(), value);
            }
            args.insert(name.clone(), json!({"wrong": "type"}));
            let v = env.call_full(tool.command, serde_json::Value::Object(args.clone()));
            let told = v["error"].as_str().unwrap_or_default();
            let named = told.starts_with(&format!("parameter {name} must be "));
            if v["error_code"] != "INVALID_ARG" || !named {
                unread.push(format!("{}.{name} ({}): {v}", tool.name, property["type"]));
            }
        }
    }
    assert!(unread.is_empty(), "not read by their tool:\n{}", unread.join("\n"));
}
