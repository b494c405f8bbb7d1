//! Which tool a run is: by the name of the link (`argv[0]`) or by the first
//! argument of `ikigai-tools`; the suite's own usage, version and errors.

use crate::common;
use common::*;

use std::io::Write;
use std::process::{Command, Stdio};

/// Each tool's schema name and command name, from the binary's own table.
fn tools() -> impl Iterator<Item = (&'static str, &'static str)> {
    ikigai_tools::tools::TOOLS.iter().map(|t| (t.name, t.command))
}

fn schema_of(env: &Env, link: &str, flag: &str) -> String {
    let ran = env.cmd(link).arg(flag).run();
    assert_eq!(ran.code, Some(0), "{link} {flag}: {}", ran.stderr);
    assert_eq!(ran.stderr, "");
    ran.stdout_text()
}

#[test]
fn schemas_are_those_of_seed_000() {
    let env = Env::new();
    for (name, command) in tools() {
        let text = schema_of(&env, command, "--schema");
        insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => true}, {
            insta::assert_snapshot!(format!("schema_{name}"), text);
        });
        // Pretty with two-space indents and one trailing newline.
        assert!(
            text.starts_with("{\n  \"name\": ") && text.ends_with("}\n") && !text.ends_with("\n\n")
        );
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["name"], name);
    }
}

#[test]
fn every_spelling_of_a_name_runs_its_tool() {
    let env = Env::new();
    for (name, command) in tools() {
        let expected = schema_of(&env, command, "--schema");
        let spellings = [
            name.to_owned(),
            format!("{name}_tool"),
            format!("{name}-tool"),
            format!("{command}-tool"),
            format!("{command}_tool"),
            format!("{name}.sh"),
            format!("{command}-tool.py"),
        ];
        for spelling in spellings {
            assert_eq!(schema_of(&env, &spelling, "--schema"), expected, "{spelling}");
        }
        assert_eq!(schema_of(&env, command, "--describe"), expected, "{command} --describe");
        let suite = env.cmd("ikigai-tools").arg(name).arg("--schema").run();
        assert_eq!(suite.stdout_text(), expected, "ikigai-tools {name}");
        let suite = env.cmd("ikigai-tools").arg(format!("{command}-tool")).arg("--describe").run();
        assert_eq!(suite.stdout_text(), expected, "ikigai-tools {command}-tool");
    }
}

#[test]
fn schema_does_not_read_stdin() {
    // stdin is a pipe whose writer stays open: a tool that read it would hang.
    let env = Env::new();
    let mut child = Command::new(env.link("grep"))
        .arg("--schema")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut writer = child.stdin.take().unwrap();
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success());
            break;
        }
        assert!(start.elapsed().as_secs() < 15, "--schema waited for stdin");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let _ = writer.write_all(b"late");
}

#[test]
fn suite_alone_prints_usage_listing_the_tools() {
    let env = Env::new();
    for args in [&[][..], &["--help"], &["-h"]] {
        let mut call = env.cmd("ikigai-tools");
        for a in args {
            call = call.arg(a);
        }
        let ran = call.run();
        assert_eq!(ran.code, Some(0), "{args:?}");
        let text = ran.stdout_text();
        assert!(text.starts_with("The tools a language model uses"), "{args:?}: {text}");
        assert!(
            text.contains("Usage: ikigai-tools [OPTIONS]\n       ikigai-tools <COMMAND>"),
            "{text}"
        );
        for (_, command) in tools() {
            assert!(text.contains(&format!("\n  {command} ")), "{command} listed: {text}");
        }
    }
}

#[test]
fn version_prints_the_version() {
    let env = Env::new();
    let ran = env.cmd("ikigai-tools").arg("--version").run();
    assert_eq!(ran.code, Some(0));
    assert_eq!(ran.stdout_text(), format!("ikigai-tools {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn suite_schema_without_a_tool_is_a_usage_error() {
    // A host that scans a directory holding the binary itself must skip it.
    let env = Env::new();
    for flag in ["--schema", "--describe"] {
        let ran = env.cmd("ikigai-tools").arg(flag).run();
        assert_eq!(ran.code, Some(2), "{flag}");
        assert_eq!(ran.stdout_text(), "");
        assert!(ran.stderr.contains(&format!("unexpected argument '{flag}'")), "{}", ran.stderr);
    }
}

#[test]
fn unknown_tool_name_is_exit_2_with_one_line() {
    let env = Env::new();
    let tools = "the tools are: bash, file_read, file_write, file_edit, glob, grep";
    // Through a link only a tool can be meant; `ikigai-tools` has its host
    // commands too.
    let by_link = env.cmd("cat").stdin("{}").run();
    let expected = format!("ikigai-tools: unknown tool 'cat'; {tools}\n");
    assert_eq!((by_link.code, by_link.stderr, by_link.stdout.len()), (Some(2), expected, 0));
    let by_arg = env.cmd("ikigai-tools").arg("cat").arg("--schema").run();
    let expected = format!(
        "ikigai-tools: unknown tool or command 'cat'; {tools}; \
         the commands are: catalog, check, call, list, mcp, doctor\n"
    );
    assert_eq!((by_arg.code, by_arg.stderr, by_arg.stdout.len()), (Some(2), expected, 0));
}

/// Issue 15: `ikigai-tools catlog` named no close command, where `gerp`
/// named grep.
#[test]
fn a_mistyped_command_is_told_the_closest_tool_or_command() {
    let env = Env::new();
    for (typed, close) in
        [("catlog", "catalog"), ("chek", "check"), ("mpc", "mcp"), ("gerp", "grep")]
    {
        let ran = env.cmd("ikigai-tools").arg(typed).run();
        assert_eq!(ran.code, Some(2), "{typed}");
        assert_eq!(ran.stdout_text(), "", "{typed}");
        assert_eq!(
            ran.stderr,
            format!(
                "ikigai-tools: unknown tool or command '{typed}' (did you mean {close}?); \
                 the tools are: bash, file_read, file_write, file_edit, glob, grep; \
                 the commands are: catalog, check, call, list, mcp, doctor\n"
            )
        );
    }
}

/// The help `link ARGS` prints, called by name on `PATH` as a person types
/// it: its examples run the command as typed (issue 25), a path would vary.
fn help(env: &Env, link: &str, args: &[&str]) -> String {
    let bin = env.link(link).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let ran = std::process::Command::new(link)
        .args(args)
        .current_dir(env.work())
        .env("PATH", path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&ran.stderr);
    assert_eq!((ran.status.code(), stderr.as_ref()), (Some(0), ""), "{link} {args:?}");
    String::from_utf8(ran.stdout).unwrap()
}

/// Issue 15: a tool's help listed no parameters. Now it gives the schema's
/// parameters (name, type, whether required, description), the environment
/// variables the tool reads and a call in each dialect, however it is
/// asked for; the suite's help names every environment variable.
#[test]
fn help_texts_list_the_parameters_and_the_environment() {
    let env = Env::new();
    for tool in &ikigai_tools::tools::TOOLS {
        let text = help(&env, "ikigai-tools", &[tool.command, "--help"]);
        snap_text!(format!("help_{}", tool.name), text.clone());
        assert_eq!(help(&env, "ikigai-tools", &[tool.command, "-h"]), text);
        assert_eq!(help(&env, "ikigai-tools", &["help", tool.name]), text);
        // Through a link, the usage and the examples name the link.
        let by_link = text.replace(&format!("ikigai-tools {}", tool.command), tool.command);
        assert_eq!(help(&env, tool.command, &["--help"]), by_link);
    }
    let text = help(&env, "ikigai-tools", &["--help"]);
    snap_text!("help_suite", text.clone());
    for args in [&[][..], &["-h"], &["help"]] {
        assert_eq!(help(&env, "ikigai-tools", args), text, "{args:?}");
    }
    // A host command's help is clap's own.
    let catalog = help(&env, "ikigai-tools", &["catalog", "--help"]);
    assert!(catalog.starts_with("Print the tools as the `tools` array"), "{catalog}");
}

#[test]
fn more_than_one_argument_is_a_usage_error() {
    let env = Env::new();
    let ran = env.cmd("bash").arg("{}").arg("{}").run();
    assert_eq!(ran.code, Some(2));
    assert_eq!(ran.stdout_text(), "");
    assert!(ran.stderr.starts_with("error: unexpected argument '{}'"), "{}", ran.stderr);
}

#[test]
fn list_prints_the_command_names_one_per_line() {
    let env = Env::new();
    let ran = env.cmd("ikigai-tools").arg("--list").run();
    assert_eq!((ran.code, ran.stderr.as_str()), (Some(0), ""));
    // The names install.sh links (README, "install.sh").
    assert_eq!(ran.stdout_text(), "bash\nfile-read\nfile-write\nfile-edit\nglob\ngrep\n");
    let ran = env.cmd("ikigai-tools").arg("--list").arg("grep").run();
    assert_eq!((ran.code, ran.stdout.len()), (Some(2), 0));
}

#[test]
fn a_timeout_too_large_negative_or_not_a_number_is_a_one_line_usage_error() {
    // 1.8e19 seconds overflowed the deadline: a panic, exit 101.
    let env = Env::new();
    for command in ["call", "check"] {
        for value in ["1.8e19", "1e300", "-1", "0", "NaN", "inf", "-inf", "soon"] {
            let mut call = env.cmd("ikigai-tools").arg(command).arg("--timeout").arg(value);
            if command == "call" {
                call = call.arg("bash").arg("{}");
            }
            let ran = call.run();
            assert_eq!(ran.code, Some(2), "{command} --timeout {value}: {}", ran.stderr);
            assert_eq!(ran.stdout_text(), "");
            assert_eq!(
                ran.stderr,
                format!(
                    "ikigai-tools {command}: --timeout takes a number of seconds more than 0 \
                     and at most 31536000, not '{value}'\n"
                )
            );
        }
    }
}
