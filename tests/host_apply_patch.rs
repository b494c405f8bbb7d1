//! apply_patch for the models trained on it (docs/HOSTS.md, "apply_patch
//! for GPT-5 models"): `catalog --provider openai --model M` offers it to a
//! GPT-5 or Codex model as a freeform custom tool with the Lark grammar,
//! and the JSON `{input}` form otherwise; `call --freeform` takes the raw
//! text such a model sends and passes it as `{"input": TEXT}`.

use crate::common::*;

use std::os::unix::fs::PermissionsExt;

use serde_json::{json, Value};

/// The grammar the freeform tool carries: the repository's file, whole.
const GRAMMAR: &str = include_str!("../src/host/apply_patch.lark");

/// A discovered apply_patch whose call prints the arguments it was given:
/// what the host passed, seen from the tool's side.
fn echoing_apply_patch(env: &Env) {
    let schema = json!({"name": "apply_patch", "description": "Patch files",
        "parameters": {"type": "object", "properties": {"input": {"type": "string"}},
        "required": ["input"]}});
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = --schema ]; then\n  echo '{schema}'\n  exit 0\nfi\ncat\n"
    );
    let path = env.write("tools/apply-patch", script);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// `ikigai-tools ARGS…` in the full profile.
fn suite(env: &Env, args: &[&str]) -> Call {
    let mut cmd = env.cmd("ikigai-tools").env("IKIGAI_TOOLS_PROFILE", "full");
    for a in args {
        cmd = cmd.arg(a);
    }
    cmd
}

fn catalog(env: &Env, args: &[&str]) -> Value {
    let ran = suite(env, &[&["catalog"], args].concat()).run();
    assert_eq!((ran.code, ran.stderr.as_str()), (Some(0), ""), "{args:?}");
    serde_json::from_str(&ran.stdout_text()).expect("stdout is JSON")
}

/// The freeform tool exactly as a Chat Completions request carries it.
fn freeform_tool() -> Value {
    json!({"type": "custom", "custom": {
        "name": "apply_patch",
        "description": "Edit files with a patch in the apply_patch format, all or nothing; paths are relative. This is a FREEFORM tool: send the patch itself, not JSON.",
        "format": {"type": "grammar", "grammar": {"syntax": "lark", "definition": GRAMMAR}}
    }})
}

fn json_form() -> Value {
    json!({"type": "function", "function": {"name": "apply_patch", "description": "Patch files",
        "parameters": {"type": "object", "properties": {"input": {"type": "string"}},
        "required": ["input"]}}})
}

#[test]
fn gpt5_and_codex_models_get_apply_patch_as_the_freeform_tool_with_the_grammar() {
    let env = Env::new();
    echoing_apply_patch(&env);
    for model in ["gpt-5", "gpt-5.1-codex", "GPT-5-mini", "codex-mini-latest", "openai/gpt-5"] {
        let tools = catalog(&env, &["--provider", "openai", "--model", model, "tools"]);
        assert_eq!(tools, json!([freeform_tool()]), "{model}");
    }
    snap!("freeform_tool", catalog(&env, &["--provider", "openai", "--model", "gpt-5", "tools"]));
}

#[test]
fn other_models_and_a_request_without_a_model_get_the_json_form() {
    let env = Env::new();
    echoing_apply_patch(&env);
    for model in ["gpt-4.1", "gpt-oss-120b", "o3", "o4-mini"] {
        let tools = catalog(&env, &["--provider", "openai", "--model", model, "tools"]);
        assert_eq!(tools, json!([json_form()]), "{model}");
    }
    assert_eq!(catalog(&env, &["--provider", "openai", "tools"]), json!([json_form()]));
}

#[test]
fn only_openai_has_a_freeform_tool_the_other_providers_ignore_the_model() {
    let env = Env::new();
    echoing_apply_patch(&env);
    for provider in ["ikigai", "anthropic", "google"] {
        let with = catalog(&env, &["--provider", provider, "--model", "gpt-5", "tools"]);
        assert_eq!(with, catalog(&env, &["--provider", provider, "tools"]), "{provider}");
    }
}

#[test]
fn for_gpt5_only_apply_patch_changes_form_every_other_tool_stays_a_function() {
    let env = Env::new();
    let json_tools = catalog(&env, &["--provider", "openai"]);
    let built_in = suite(&env, &["list", "apply_patch"]).run();
    let schema: Value = serde_json::from_slice(&built_in.stdout).expect("apply_patch's schema");
    assert_eq!(json_tools[0], json!({"type": "function", "function": schema}));
    let expected: Vec<Value> = json_tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| match t["function"]["name"] == "apply_patch" {
            true => freeform_tool(),
            false => t.clone(),
        })
        .collect();
    assert_eq!(catalog(&env, &["--provider", "openai", "--model", "gpt-5"]), json!(expected));
}

#[test]
fn call_freeform_passes_the_raw_patch_as_input() {
    let env = Env::new();
    echoing_apply_patch(&env);
    let patch = "*** Begin Patch\n*** Add File: a.txt\n+\"quoted\" {not json}\n*** End Patch\n";
    let ran =
        suite(&env, &["call", "--dir", "tools", "--freeform", "apply_patch"]).stdin(patch).run();
    assert_eq!((ran.code, ran.stderr.as_str()), (Some(0), ""));
    assert_eq!(
        ran.stdout_text(),
        json!({"tool_success": true, "result": {"input": patch}}).to_string()
    );
    // In $1 as well.
    let ran = suite(&env, &["call", "--dir", "tools", "--freeform", "apply_patch", patch]).run();
    assert_eq!(ran.json(), json!({"tool_success": true, "result": {"input": patch}}));
}

#[test]
fn call_freeform_refuses_a_tool_without_a_string_input() {
    let env = Env::new();
    let ran = suite(&env, &["call", "--freeform", "grep", "TODO"]).run();
    assert_eq!(ran.code, Some(2));
    assert!(ran.stdout.is_empty());
    assert_eq!(
        ran.stderr,
        "ikigai-tools call: --freeform: grep takes no string `input` to put the text in; send \
         its JSON arguments without --freeform\n"
    );
}

#[test]
fn call_freeform_refuses_text_that_is_not_utf8() {
    let env = Env::new();
    echoing_apply_patch(&env);
    let ran = suite(&env, &["call", "--dir", "tools", "--freeform", "apply_patch"])
        .stdin(b"\xff\xfe".as_slice())
        .run();
    assert_eq!(ran.code, Some(2));
    assert_eq!(
        ran.stderr,
        "ikigai-tools call: with --freeform, ARGS must be UTF-8 text: invalid utf-8 sequence of 1 \
         bytes from index 0\n"
    );
}

#[test]
fn without_freeform_raw_text_is_still_refused_as_not_json() {
    let env = Env::new();
    echoing_apply_patch(&env);
    let ran = suite(&env, &["call", "--dir", "tools", "apply_patch"])
        .stdin("*** Begin Patch\n*** End Patch\n")
        .run();
    assert_eq!(ran.code, Some(2));
    assert!(
        ran.stderr.starts_with("ikigai-tools call: ARGS must be a JSON object: "),
        "{}",
        ran.stderr
    );
}

#[test]
fn call_freeform_applies_a_raw_patch_with_the_built_in_apply_patch() {
    let env = Env::new();
    env.write("hello.txt", "hello\nworld\n");
    let patch =
        "*** Begin Patch\n*** Update File: hello.txt\n@@\n hello\n-world\n+there\n*** End Patch\n";
    let ran = suite(&env, &["call", "--freeform", "apply_patch", patch]).run();
    assert_eq!((ran.code, ran.stderr.as_str()), (Some(0), ""));
    assert_eq!(
        ran.json(),
        json!({"tool_success": true, "result": {
            "output": "Success. Updated the following files:\nM hello.txt\n",
            "diff": "--- a/hello.txt\n+++ b/hello.txt\n@@ -1,2 +1,2 @@\n hello\n-world\n+there\n"
        }})
    );
    assert_eq!(env.read("hello.txt"), b"hello\nthere\n");
}
