//! apply_patch (full profile; docs/TOOLS.md, "apply_patch"): OpenAI's
//! patch format through the real binary, linked as `apply_patch`. Codex's
//! semantics (Add over a file and Move over a destination replace it,
//! Delete of a directory or a missing file fails, an operation sees what
//! the ones before it made), line endings, BOM, mode and attributes kept;
//! all or nothing (a failing hunk of a later file leaves every file as it
//! was); the answer's list and diff; `dry_run`; confinement.

use crate::common;
use common::mcp::Session;
use common::*;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{json, Value};

fn patch(env: &Env, input: &str) -> Value {
    env.call_full("apply_patch", json!({"input": input}))
}

/// A patch of `body` between the markers.
fn wrapped(body: &str) -> String {
    format!("*** Begin Patch\n{body}*** End Patch\n")
}

/// The files of `dir`, each with its content: what a failure must leave
/// as it was (temporary files included, so none may be left).
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            let meta = fs::symlink_metadata(&p).unwrap();
            let name = p.strip_prefix(dir).unwrap().display().to_string();
            if meta.is_dir() {
                out.push((format!("{name}/"), Vec::new()));
                todo.push(p);
            } else if meta.file_type().is_symlink() {
                out.push((name, fs::read_link(&p).unwrap().display().to_string().into_bytes()));
            } else {
                out.push((name, fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn error_code(v: &Value) -> &str {
    v["error_code"].as_str().unwrap_or_else(|| panic!("not an error: {v}"))
}

fn success(lines: &str) -> String {
    format!("Success. Updated the following files:\n{lines}")
}

#[test]
fn add_update_delete_and_move_answer_codexs_list_and_the_diff() {
    let env = Env::new();
    env.write("src/main.rs", "fn main() {\n    let x = 1;\n}\n");
    env.write("old.txt", "gone\n");
    env.write("from.txt", "one\ntwo\n");
    let input = wrapped(
        "*** Add File: docs/new.md\n+# New\n+text\n\
         *** Update File: src/main.rs\n@@ fn main() {\n-    let x = 1;\n+    let x = 2;\n\
         *** Delete File: old.txt\n\
         *** Update File: from.txt\n*** Move to: to/moved.txt\n@@\n one\n-two\n+three\n",
    );
    let v = patch(&env, &input);
    assert_eq!(v["output"], success("A docs/new.md\nM src/main.rs\nM to/moved.txt\nD old.txt\n"));
    assert_eq!(env.read("docs/new.md"), b"# New\ntext\n");
    assert_eq!(env.read("src/main.rs"), b"fn main() {\n    let x = 2;\n}\n");
    assert_eq!(env.read("to/moved.txt"), b"one\nthree\n");
    assert!(!env.path("old.txt").exists() && !env.path("from.txt").exists());
    insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => true}, {
        insta::assert_json_snapshot!("success", v);
    });
    assert_eq!(
        tree(&env.work()).iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["docs/", "docs/new.md", "src/", "src/main.rs", "to/", "to/moved.txt"]
    );
}

#[test]
fn add_over_an_existing_file_replaces_it() {
    let env = Env::new();
    env.write("a.txt", "old\n");
    let v = patch(&env, &wrapped("*** Add File: a.txt\n+new\n"));
    assert_eq!(v["output"], success("A a.txt\n"));
    assert_eq!(env.read("a.txt"), b"new\n");
}

#[test]
fn move_over_an_existing_destination_replaces_it() {
    let env = Env::new();
    env.write("a.txt", "a\n");
    env.write("b.txt", "b\n");
    let v = patch(&env, &wrapped("*** Update File: a.txt\n*** Move to: b.txt\n@@\n-a\n+A\n"));
    assert_eq!(v["output"], success("M b.txt\n"));
    assert_eq!(env.read("b.txt"), b"A\n");
    assert!(!env.path("a.txt").exists());
}

#[test]
fn delete_of_a_directory_fails_and_changes_nothing() {
    let env = Env::new();
    env.write("d/f.txt", "x\n");
    env.write("keep.txt", "k\n");
    let before = tree(&env.work());
    let input = wrapped("*** Update File: keep.txt\n@@\n-k\n+K\n*** Delete File: d\n");
    let v = env.redacted(patch(&env, &input));
    assert_eq!(
        v,
        json!({
            "error": "Failed to read file: d (it is a directory) (nothing was changed)",
            "error_code": "READ_FAILED"
        })
    );
    assert_eq!(tree(&env.work()), before);
}

#[test]
fn update_or_delete_of_a_missing_file_is_file_not_found() {
    let env = Env::new();
    for op in ["*** Update File: nope.txt\n@@\n-a\n+b\n", "*** Delete File: nope.txt\n"] {
        let v = env.redacted(patch(&env, &wrapped(op)));
        assert_eq!(
            v,
            json!({
                "error": "File not found: nope.txt (looked for [WORK]/nope.txt) (nothing was changed)",
                "error_code": "FILE_NOT_FOUND"
            }),
            "{op}"
        );
    }
}

#[test]
fn the_same_file_twice_applies_in_turn() {
    let env = Env::new();
    env.write("f.txt", "a\nb\n");
    let input =
        wrapped("*** Update File: f.txt\n@@\n-a\n+A\n*** Update File: f.txt\n@@\n A\n-b\n+B\n");
    let v = patch(&env, &input);
    assert_eq!(v["output"], success("M f.txt\nM f.txt\n"));
    assert_eq!(env.read("f.txt"), b"A\nB\n");
    // Added then updated: the update sees what was added.
    let v = patch(&env, &wrapped("*** Add File: g.txt\n+x\n*** Update File: g.txt\n@@\n-x\n+y\n"));
    assert_eq!(v["output"], success("A g.txt\nM g.txt\n"));
    assert_eq!(env.read("g.txt"), b"y\n");
}

#[test]
fn a_crlf_file_stays_crlf_and_a_bom_is_kept() {
    let env = Env::new();
    env.write("w.txt", "one\r\ntwo\r\nthree\r\n");
    env.write("b.txt", "\u{feff}alpha\nbeta\n");
    let input =
        wrapped("*** Update File: w.txt\n@@\n one\n-two\n+TWO\n*** Update File: b.txt\n@@\n-alpha\n+ALPHA\n");
    patch(&env, &input);
    assert_eq!(env.read("w.txt"), b"one\r\nTWO\r\nthree\r\n");
    assert_eq!(env.read("b.txt"), "\u{feff}ALPHA\nbeta\n".as_bytes());
}

#[test]
fn mode_xattr_and_acl_are_kept() {
    let env = Env::new();
    let f = env.write("run.sh", "echo a\n");
    fs::set_permissions(&f, fs::Permissions::from_mode(0o751)).unwrap();
    let xattr = std::process::Command::new("setfattr")
        .args(["-n", "user.note", "-v", "kept"])
        .arg(&f)
        .status()
        .is_ok_and(|s| s.success());
    let acl = std::process::Command::new("setfacl")
        .args(["-m", "u:nobody:r"])
        .arg(&f)
        .status()
        .is_ok_and(|s| s.success());
    let acl_before = acl.then(|| getfacl(&f));
    patch(&env, &wrapped("*** Update File: run.sh\n@@\n-echo a\n+echo b\n"));
    assert_eq!(env.read("run.sh"), b"echo b\n");
    assert_eq!(fs::metadata(&f).unwrap().permissions().mode() & 0o7777, 0o751);
    if xattr {
        let got = std::process::Command::new("getfattr")
            .args(["--only-values", "-n", "user.note"])
            .arg(&f)
            .output()
            .unwrap();
        assert_eq!(got.stdout, b"kept");
    } else {
        skipped("user.* extended attributes: setfattr is missing or the file system refuses them");
    }
    match acl_before {
        Some(before) => assert_eq!(getfacl(&f), before),
        None => skipped("ACL: setfacl is missing or the file system refuses ACLs"),
    }
}

#[test]
fn a_file_with_two_hard_links_is_written_in_place_for_both() {
    let env = Env::new();
    let f = env.write("a.txt", "a\n");
    fs::hard_link(&f, env.path("b.txt")).unwrap();
    patch(&env, &wrapped("*** Update File: a.txt\n@@\n-a\n+b\n"));
    assert_eq!(env.read("b.txt"), b"b\n");
    assert_eq!(tree(&env.work()).len(), 2);
}

fn getfacl(f: &Path) -> String {
    let out = std::process::Command::new("getfacl").arg("-c").arg(f).output().unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_failing_hunk_of_a_later_file_leaves_every_file_unchanged() {
    let env = Env::new();
    env.write("a.txt", "a1\na2\n");
    env.write("b.txt", "b1\nb2\nb3\n");
    env.write("c.txt", "c\n");
    let before = tree(&env.work());
    let input = wrapped(
        "*** Update File: a.txt\n@@\n-a1\n+A1\n*** Delete File: c.txt\n*** Add File: n/new.txt\n+n\n\
         *** Update File: b.txt\n@@\n-b1\n+B1\n@@\n b2\n-b3x\n+B3\n",
    );
    assert_eq!(
        patch(&env, &input),
        json!({
            "error": "b.txt: hunk 2: line 15 of the patch `b3x` not found; closest line 3: `b3` \
                      (nothing was changed)",
            "error_code": "NOT_FOUND"
        })
    );
    assert_eq!(tree(&env.work()), before);
}

#[test]
fn a_parse_error_names_the_patch_line_and_changes_nothing() {
    let env = Env::new();
    env.write("a.txt", "a\n");
    let v = patch(&env, "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\nfoo\n*** End Patch\n");
    assert_eq!(
        v,
        json!({
            "error": "patch line 5: expected a line starting with ' ', '+' or '-' in the hunk, \
                      or `@@`, or `*** End of File`, got `foo` (nothing was changed)",
            "error_code": "INVALID_ARG"
        })
    );
    assert_eq!(env.read("a.txt"), b"a\n");
}

#[test]
fn dry_run_writes_nothing_and_answers_the_same_list_and_diff() {
    let env = Env::new();
    env.write("a.txt", "a\n");
    let input = wrapped("*** Update File: a.txt\n@@\n-a\n+b\n*** Add File: d/n.txt\n+n\n");
    let before = tree(&env.work());
    let dry = env.call_full("apply_patch", json!({"input": input, "dry_run": true}));
    assert_eq!(tree(&env.work()), before);
    assert_eq!(
        dry["output"],
        "Dry run, nothing was written. The patch would update the following files:\n\
         A d/n.txt\nM a.txt\n"
    );
    let real = patch(&env, &input);
    assert_eq!(dry["diff"], real["diff"]);
    assert_eq!(env.read("a.txt"), b"b\n");
}

#[test]
fn workdir_is_what_the_paths_are_relative_to() {
    let env = Env::new();
    env.write("sub/a.txt", "a\n");
    let input = wrapped("*** Update File: a.txt\n@@\n-a\n+b\n");
    let v = env.call_full("apply_patch", json!({"input": input, "workdir": "sub"}));
    assert_eq!(v["output"], success("M a.txt\n"));
    assert_eq!(env.read("sub/a.txt"), b"b\n");
}

/// Confined: each case refused, and nothing written inside or outside.
struct Confined {
    env: Env,
    outside: std::path::PathBuf,
}

impl Confined {
    fn new() -> Confined {
        let env = Env::new();
        let outside = env.beside("outside");
        fs::write(outside.join("secret.txt"), "secret\n").unwrap();
        env.write("root/in.txt", "in\n");
        std::os::unix::fs::symlink(outside.join("secret.txt"), env.path("root/link.txt")).unwrap();
        std::os::unix::fs::symlink(&outside, env.path("root/out")).unwrap();
        Confined { env, outside }
    }

    /// A patch in the root (`work/root` the only root and the workdir),
    /// confined unless `unconfined`.
    fn run(&self, body: &str, unconfined: bool) -> Value {
        let root = self.env.path("root");
        let mut call = self.env.cmd("apply_patch").env("IKIGAI_TOOLS_PROFILE", "full");
        if !unconfined {
            call = call.env("IKIGAI_TOOLS_ROOTS", &root);
        }
        let args = json!({"input": wrapped(body)});
        let ran = call.current_dir(&root).stdin(args.to_string()).run();
        assert_eq!(ran.code, Some(0), "stderr: {}", ran.stderr);
        ran.json()
    }

    fn refused(&self, body: &str, code: &str) {
        let (root, outside) = (tree(&self.env.path("root")), tree(&self.outside));
        let v = self.run(body, false);
        assert_eq!(error_code(&v), code, "{body}: {v}");
        assert!(v["error"].as_str().unwrap().ends_with("(nothing was changed)"), "{v}");
        assert_eq!(tree(&self.env.path("root")), root, "{body}");
        assert_eq!(tree(&self.outside), outside, "{body}");
    }
}

#[test]
fn a_path_climbing_out_of_workdir_is_refused() {
    let c = Confined::new();
    c.refused("*** Add File: ../x.txt\n+x\n", "PERMISSION_DENIED");
    c.refused(
        "*** Update File: in.txt\n*** Move to: a/../../x.txt\n@@\n-in\n+x\n",
        "PERMISSION_DENIED",
    );
}

#[test]
fn an_absolute_path_is_refused() {
    let c = Confined::new();
    let abs = c.outside.join("secret.txt").display().to_string();
    c.refused(&format!("*** Delete File: {abs}\n"), "INVALID_ARG");
}

#[test]
fn a_link_out_of_the_roots_is_refused() {
    let c = Confined::new();
    let body = "*** Update File: link.txt\n@@\n-secret\n+changed\n";
    c.refused(body, "PERMISSION_DENIED");
    // Unconfined, the same patch goes through the link: the refusal is the
    // confinement's.
    assert_eq!(c.run(body, true)["output"], success("M link.txt\n"));
}

#[test]
fn a_move_out_of_the_roots_is_refused() {
    let c = Confined::new();
    let body = "*** Update File: in.txt\n*** Move to: out/moved.txt\n@@\n-in\n+moved\n";
    c.refused(body, "PERMISSION_DENIED");
    assert_eq!(c.run(body, true)["output"], success("M out/moved.txt\n"));
}

#[test]
fn an_add_into_a_directory_outside_is_refused() {
    let c = Confined::new();
    let body = "*** Add File: out/new/planted.txt\n+x\n";
    c.refused(body, "PERMISSION_DENIED");
    assert_eq!(c.run(body, true)["output"], success("A out/new/planted.txt\n"));
}

#[test]
fn the_schema_is_short_and_named_for_the_models() {
    let env = Env::new();
    let ran = env.cmd("apply_patch").env("IKIGAI_TOOLS_PROFILE", "full").arg("--schema").run();
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    // Its text is snapshotted with every full schema (profile::full_schemas_snapshot).
    let text = ran.stdout_text();
    let schema: Value = serde_json::from_str(&text).unwrap();
    assert!(schema["description"].as_str().unwrap().len() <= 450);
    assert_eq!(schema["parameters"]["required"], json!(["input"]));
    let list = env.cmd("ikigai-tools").env("IKIGAI_TOOLS_PROFILE", "full").arg("--list").run();
    assert!(list.stdout_text().lines().any(|l| l == "apply-patch"), "{}", list.stdout_text());
}

#[test]
fn over_mcp_a_patch_is_applied() {
    let env = Env::new();
    env.write("a.txt", "a\n");
    let mut session = Session::initialized(&env);
    let answer = session.call(
        2,
        "apply_patch",
        json!({"input": wrapped("*** Update File: a.txt\n@@\n-a\n+b\n")}),
    );
    assert_eq!(answer["result"]["structuredContent"]["output"], success("M a.txt\n"));
    assert_eq!(answer["result"]["isError"], json!(false));
    assert_eq!(env.read("a.txt"), b"b\n");
}
