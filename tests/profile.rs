//! Profiles (docs/SPEC.md, "Profiles"): the seed schemas by default for a
//! tool run by name, the full ones when `IKIGAI_TOOLS_PROFILE=full` or the
//! binary is named `ikigai-tools-full`, and the full ones by default over
//! MCP, whose listing stays small enough for a host to pay for every turn.

use crate::common;
use crate::common::mcp::Session;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;

use common::*;
use ikigai_tools::profile::Profile;
use ikigai_tools::tools::TOOLS;
use serde_json::{json, Value};

/// What `LINK --schema` prints, with `IKIGAI_TOOLS_PROFILE` set to `profile`
/// (or unset).
fn schema_via(link: &Path, profile: Option<&str>) -> String {
    let mut cmd = Command::new(link);
    cmd.arg("--schema").env_remove("IKIGAI_TOOLS_PROFILE");
    if let Some(profile) = profile {
        cmd.env("IKIGAI_TOOLS_PROFILE", profile);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_tool_run_by_name_shows_the_seed_schema_unless_the_variable_says_full() {
    let env = Env::new();
    for tool in &TOOLS {
        let link = env.link(tool.command);
        let (seed, full) = (tool.schema(Profile::Seed), tool.schema(Profile::Full));
        assert_eq!(schema_via(&link, None), seed, "{}: the default", tool.name);
        assert_eq!(schema_via(&link, Some("seed")), seed, "{}", tool.name);
        assert_eq!(schema_via(&link, Some("full")), full, "{}", tool.name);
        // The names in any case (Reshape III: `Full` meant seed).
        assert_eq!(schema_via(&link, Some("Full")), full, "{}", tool.name);
        assert_eq!(schema_via(&link, Some("SEED")), seed, "{}", tool.name);
    }
}

#[test]
fn a_binary_named_ikigai_tools_full_serves_the_full_profile_unless_the_variable_says_seed() {
    let tmp = tempfile::tempdir().unwrap();
    let (bin, libexec) = (tmp.path().join("bin"), tmp.path().join("libexec"));
    fs::create_dir_all(&bin).unwrap();
    fs::create_dir_all(&libexec).unwrap();
    // As install.sh --profile full makes it: the binary under the full name.
    let full_binary = bin.join("ikigai-tools-full");
    fs::hard_link(binary(), &full_binary)
        .or_else(|_| fs::copy(binary(), &full_binary).map(drop))
        .unwrap();
    for tool in &TOOLS {
        let link = libexec.join(tool.command);
        symlink(&full_binary, &link).unwrap();
        assert_eq!(schema_via(&link, None), tool.schema(Profile::Full), "{}", tool.name);
        assert_eq!(schema_via(&link, Some("seed")), tool.schema(Profile::Seed), "{}", tool.name);
    }
    let out = Command::new(&full_binary)
        .args(["file_edit", "--schema"])
        .env_remove("IKIGAI_TOOLS_PROFILE")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), TOOLS[3].schema(Profile::Full));
}

/// The `tools/list` result of a server started with `args`, and its size
/// as sent (compact JSON).
fn tools_list(args: &[&OsStr]) -> (Vec<Value>, usize) {
    let env = Env::new();
    let mut session = Session::initialized_with(&env, args, json!({}));
    let answer = session.request(2, "tools/list", json!({}));
    let size = answer["result"].to_string().len();
    (answer["result"]["tools"].as_array().unwrap().clone(), size)
}

fn assert_lists(listed: &[Value], profile: Profile) {
    let names: Vec<&str> = listed.iter().map(|t| t["name"].as_str().unwrap()).collect();
    let expected: Vec<&str> = ikigai_tools::tools::of(profile).map(|t| t.name).collect();
    assert_eq!(names, expected);
    for (listing, tool) in listed.iter().zip(ikigai_tools::tools::of(profile)) {
        let schema: Value = serde_json::from_str(tool.schema(profile)).unwrap();
        assert_eq!(listing["inputSchema"], schema["parameters"], "{}", tool.name);
        assert_eq!(listing["description"], schema["description"], "{}", tool.name);
    }
}

#[test]
fn mcp_lists_the_full_profile_by_default_and_the_seed_one_when_asked() {
    assert_lists(&tools_list(&[]).0, Profile::Full);
    let seed: [&OsStr; 2] = ["--profile".as_ref(), "seed".as_ref()];
    assert_lists(&tools_list(&seed).0, Profile::Seed);
    let full: [&OsStr; 2] = ["--profile".as_ref(), "full".as_ref()];
    assert_lists(&tools_list(&full).0, Profile::Full);
}

#[test]
fn mcp_refuses_a_profile_it_does_not_have_in_one_line() {
    let env = Env::new();
    let ran = env.cmd("ikigai-tools").arg("mcp").arg("--profile").arg("all").stdin("").run();
    assert_eq!(ran.code, Some(2));
    assert!(ran.stderr.contains("'all'") && ran.stderr.contains("full"), "{}", ran.stderr);
}

/// Reshape III: `IKIGAI_TOOLS_PROFILE=ful` (or any value naming no
/// profile) silently meant the seed, hiding the full profile from whoever
/// set it. It is refused at the start of every run, a call, `--schema`, the
/// host commands and the MCP server alike: exit 2 and one line naming the
/// variable, the value and the two profiles. Empty counts as unset.
#[test]
fn a_profile_variable_naming_no_profile_is_refused_at_start() {
    let env = Env::new();
    env.write("a.txt", "hi\n");
    let runs: [(&str, &[&str], &str); 6] = [
        ("file-read", &[], r#"{"file_path":"a.txt"}"#),
        ("file-read", &[r#"{"file_path":"a.txt"}"#], ""),
        ("file-read", &["--schema"], ""),
        ("ikigai-tools", &["glob", "--schema"], ""),
        ("ikigai-tools", &["list"], ""),
        ("ikigai-tools", &["mcp"], ""),
    ];
    for value in ["ful", "all", "seed "] {
        for (link, args, stdin) in runs {
            let call = args.iter().fold(env.cmd(link), |call, a| call.arg(a));
            let ran = call.env("IKIGAI_TOOLS_PROFILE", value).stdin(stdin).run();
            let what = format!("{link} {args:?} with {value:?}");
            assert_eq!(ran.code, Some(2), "{what}: {}", ran.stderr);
            assert!(ran.stdout.is_empty(), "{what}: nothing answered");
            assert_eq!(
                ran.stderr,
                format!(
                    "ikigai-tools: IKIGAI_TOOLS_PROFILE={value:?} names no profile: use seed or full\n"
                ),
                "{what}"
            );
        }
    }
    let link = env.link("file-read");
    let seed = TOOLS[1].schema(Profile::Seed);
    assert_eq!(schema_via(&link, Some("")), seed, "empty is unset");
    let ran = env
        .cmd("file-read")
        .env("IKIGAI_TOOLS_PROFILE", "FULL")
        .stdin(r#"{"file_path":"a.txt"}"#)
        .run();
    assert!(ran.json()["sha256"].is_string(), "FULL is full: {}", ran.stderr);
}

/// A fixture where the seed and the full profile must agree: a flat
/// directory (the full grep recurses, the seed's does not), no hidden or
/// ignored files.
fn flat_fixture() -> Env {
    let env = Env::new();
    env.write("a.txt", "one\ntwo\nthree two\n");
    env.write("b.txt", "four\n");
    env.write("c.rs", "fn main() {}\n");
    env
}

/// Seed calls of every tool, successes and errors.
fn seed_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("bash", json!({"command": "echo hi; echo err >&2; exit 3"})),
        ("file_read", json!({"file_path": "a.txt"})),
        ("file_read", json!({"file_path": "a.txt", "offset": 2, "limit": 1})),
        ("file_read", json!({"file_path": "missing.txt"})),
        ("file_write", json!({"file_path": "new.txt", "content": "new\n"})),
        ("file_edit", json!({"file_path": "b.txt", "old_string": "four", "new_string": "4"})),
        ("file_edit", json!({"file_path": "a.txt", "old_string": "two", "new_string": "2"})),
        ("file_edit", json!({"file_path": "a.txt", "old_string": "absent", "new_string": "x"})),
        (
            "file_edit",
            json!({"file_path": "a.txt", "old_string": "two", "new_string": "2", "replace_all": true}),
        ),
        ("glob", json!({"pattern": "*.txt"})),
        ("glob", json!({"pattern": "*.{txt,rs}", "path": "."})),
        ("grep", json!({"pattern": "t[wh]", "glob": "*.txt"})),
        ("grep", json!({"pattern": "o", "path": "."})),
        ("grep", json!({"pattern": "("})),
    ]
}

/// docs/SPEC.md, "Profiles": a seed call sent to the full profile answers
/// the same object, every field the seed answers with the same value, plus
/// new fields only; and the files it leaves are the same.
#[test]
fn a_seed_call_in_the_full_profile_answers_the_seed_object_plus_new_fields_only() {
    let (seed_env, full_env) = (flat_fixture(), flat_fixture());
    for (tool, args) in seed_calls() {
        // A path not found names where it was looked for: each in its own
        // directory.
        let seed = seed_env.redacted(seed_env.call(tool, args.clone()));
        let full = full_env.redacted(full_env.call_full(tool, args.clone()));
        let (seed, full) = (seed.as_object().unwrap(), full.as_object().unwrap());
        for (key, value) in seed {
            assert_eq!(full.get(key), Some(value), "{tool} {args}: {key}\nfull: {full:?}");
        }
        let seed_keys: Vec<&String> = seed.keys().collect();
        let full_keys: Vec<&String> = full.keys().take(seed.len()).collect();
        assert_eq!(full_keys, seed_keys, "{tool} {args}: the seed's fields first, in order");
    }
    for name in ["a.txt", "b.txt", "new.txt"] {
        assert_eq!(seed_env.read(name), full_env.read(name), "{name}");
    }
}

/// The full profile's schemas as `TOOL --schema` prints them, snapshotted:
/// a change to a parameter a model sees is a reviewed change.
#[test]
fn full_schemas_snapshot() {
    let env = Env::new();
    for tool in ikigai_tools::tools::of(Profile::Full) {
        let ran = env.cmd(tool.command).arg("--schema").env("IKIGAI_TOOLS_PROFILE", "full").run();
        assert_eq!((ran.code, ran.stderr.as_str()), (Some(0), ""), "{}", tool.name);
        let text = ran.stdout_text();
        insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => true}, {
            insta::assert_snapshot!(format!("full_schema_{}", tool.name), text);
        });
    }
}

/// The instructions of `initialize` name the tools of the server's profile,
/// the full profile's job tools among them (they said "Six tools" to a
/// model offered nine).
#[test]
fn mcp_instructions_name_every_tool_of_the_profile() {
    for (args, profile) in [(&["--profile", "seed"][..], Profile::Seed), (&[][..], Profile::Full)] {
        let env = Env::new();
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        let mut session = Session::start_with(&env, &args);
        let answer =
            session.request(1, "initialize", crate::common::mcp::initialize_params("2025-06-18"));
        let names: Vec<&str> = ikigai_tools::tools::of(profile).map(|t| t.name).collect();
        let mut expected = format!(
            "Tools to act on this machine: {}. Each call runs in a process of its own.",
            names.join(", ")
        );
        if profile == Profile::Full {
            expected.push_str(
                " A bash command still running when its call answers goes on as a job: \
                 job_output reads it, job_kill stops it, job_list lists them.",
            );
        }
        // Started with neither --root nor --unconfined: the client's roots.
        expected
            .push_str(" Paths are confined to the client's roots, asked for after this handshake.");
        if profile == Profile::Full {
            expected.push_str(" list_allowed_directories lists those in force.");
        }
        assert_eq!(answer["result"]["instructions"], expected.as_str(), "{profile:?}");
    }
}
