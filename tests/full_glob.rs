//! glob in the full profile (docs/TOOLS.md, glob, "Full profile"): hidden
//! and ignored files left out unless asked, sort by path or mtime,
//! head_limit and truncated, confinement, errors, and the seed profile
//! unchanged.

use crate::common;
use common::*;

use std::os::unix::fs::symlink;
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};

fn glob(env: &Env, args: Value) -> Value {
    env.call_full("glob", args)
}

fn tree(env: &Env) {
    env.mkdir(".git");
    env.write(".gitignore", "build/\n*.o\n");
    env.write(".ignore", "local.c\n");
    env.write("a.c", "");
    env.write("a.o", "");
    env.write("local.c", "");
    env.write(".hidden.c", "");
    env.write("src/b.c", "");
    env.write("src/.gitignore", "gen.c\n");
    env.write("src/gen.c", "");
    env.write("build/c.c", "");
    env.write(".config/d.c", "");
}

#[test]
fn hidden_and_ignored_files_are_left_out_unless_asked() {
    let env = Env::new();
    tree(&env);
    let answer = glob(&env, json!({"pattern": "**/*.c"}));
    assert_eq!(answer, json!({"output": "a.c\nsrc/b.c", "count": 2}));
    insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => true}, {
        insta::assert_json_snapshot!("default", answer);
    });
    assert_eq!(
        glob(&env, json!({"pattern": "**/*.c", "hidden": true})),
        json!({"output": ".config/d.c\n.hidden.c\na.c\nsrc/b.c", "count": 4})
    );
    assert_eq!(
        glob(&env, json!({"pattern": "**/*.c", "no_ignore": true})),
        json!({"output": "a.c\nbuild/c.c\nlocal.c\nsrc/b.c\nsrc/gen.c", "count": 5})
    );
    // `.git` is never listed.
    assert_eq!(
        glob(&env, json!({"pattern": "*", "hidden": true, "no_ignore": true})),
        json!({"output": ".config\n.gitignore\n.hidden.c\n.ignore\na.c\na.o\nbuild\nlocal.c\nsrc", "count": 9})
    );
    assert_eq!(
        glob(&env, json!({"pattern": "*/", "path": "."})),
        json!({"output": "./src/", "count": 1})
    );
}

#[test]
fn sort_by_mtime_is_newest_first_then_by_path() {
    let env = Env::new();
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    for (name, age) in [("a.txt", 30), ("b.txt", 10), ("c.txt", 20), ("d.txt", 10)] {
        let file = std::fs::File::create(env.path(name)).unwrap();
        file.set_modified(base - Duration::from_secs(age)).unwrap();
    }
    assert_eq!(
        glob(&env, json!({"pattern": "*.txt", "sort": "mtime"})),
        json!({"output": "b.txt\nd.txt\nc.txt\na.txt", "count": 4})
    );
    assert_eq!(
        glob(&env, json!({"pattern": "*.txt", "sort": "path"})),
        json!({"output": "a.txt\nb.txt\nc.txt\nd.txt", "count": 4})
    );
    let cut = glob(&env, json!({"pattern": "*.txt", "sort": "mtime", "head_limit": 2}));
    assert_eq!(cut, json!({"output": "b.txt\nd.txt", "count": 4, "truncated": true}));
    insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => true}, {
        insta::assert_json_snapshot!("mtime_cut", cut);
    });
}

#[test]
fn head_limit_keeps_the_first_paths_and_counts_all() {
    let env = Env::new();
    for name in ["a", "b", "c"] {
        env.write(name, "");
    }
    assert_eq!(
        glob(&env, json!({"pattern": "*", "head_limit": 2})),
        json!({"output": "a\nb", "count": 3, "truncated": true})
    );
    assert_eq!(
        glob(&env, json!({"pattern": "*", "head_limit": 3})),
        json!({"output": "a\nb\nc", "count": 3})
    );
    assert_eq!(
        glob(&env, json!({"pattern": "*", "head_limit": 0})),
        json!({"output": "a\nb\nc", "count": 3})
    );
}

#[test]
fn errors() {
    let env = Env::new();
    assert_eq!(
        glob(&env, json!({"pattern": "*", "head_limit": -1})),
        json!({"error": "parameter head_limit must not be negative, got -1", "error_code": "INVALID_ARG"})
    );
    assert_eq!(glob(&env, json!({"pattern": "*", "sort": "size"}))["error_code"], "INVALID_ARG");
    assert_eq!(
        glob(&env, json!({"pattern": "*.{c,h"})),
        json!({"error": "Invalid glob pattern: unclosed '{' at position 2", "error_code": "INVALID_PATTERN"})
    );
    // A missing directory is FILE_NOT_FOUND, as in full grep (the seed
    // profile lists nothing).
    assert_eq!(
        glob(&env, json!({"pattern": "*", "path": "missing"})),
        json!({
            "error": format!("File not found: missing{}", env.looked_for("missing")),
            "error_code": "FILE_NOT_FOUND"
        })
    );
}

#[test]
fn confined_the_walk_reads_and_follows_nothing_outside_the_roots() {
    let env = Env::new();
    env.mkdir(".git");
    env.write(".gitignore", "*.c\n");
    env.write("outside/x.c", "");
    env.write("root/a.c", "");
    symlink("../outside", env.path("root/out")).unwrap();
    let root = env.path("root");
    let call = |roots: bool, args: Value| {
        let mut call = env.cmd("glob").env("IKIGAI_TOOLS_PROFILE", "full").current_dir(&root);
        if roots {
            call = call.env("IKIGAI_TOOLS_ROOTS", &root);
        }
        call.stdin(args.to_string()).run().json()
    };
    // Unconfined the .gitignore above applies; confined it is never read.
    assert_eq!(call(false, json!({"pattern": "**/*.c"})), json!({"output": "", "count": 0}));
    assert_eq!(call(true, json!({"pattern": "**/*.c"})), json!({"output": "a.c", "count": 1}));
    // A link out named as the start is refused; met in a walk, never followed.
    assert_eq!(call(true, json!({"pattern": "out/*"}))["error_code"], "PERMISSION_DENIED");
    assert_eq!(call(true, json!({"pattern": "*/*"})), json!({"output": "", "count": 0}));
    assert_eq!(
        call(true, json!({"pattern": "*", "path": ".."}))["error_code"],
        "PERMISSION_DENIED"
    );
}

#[test]
fn the_seed_profile_answers_as_before() {
    let env = Env::new();
    tree(&env);
    // No ignore rules, the dotfile rule, no truncation.
    assert_eq!(
        env.call("glob", json!({"pattern": "**/*.c"})),
        json!({"output": "a.c\nbuild/c.c\nlocal.c\nsrc/b.c\nsrc/gen.c", "count": 5})
    );
    // The full profile's parameters are refused (ignored before Reshape III).
    assert_eq!(
        env.call("glob", json!({"pattern": "**/*.c", "head_limit": 1, "no_ignore": false})),
        full_only("head_limit", "glob")
    );
}

#[test]
fn leading_literal_directories_are_where_the_walk_starts() {
    let env = Env::new();
    env.write("w/src/a.rs", "");
    env.write("w/src/deep/b.rs", "");
    env.write("w/other.rs", "");
    let in_w = |args: Value| {
        env.cmd("glob")
            .env("IKIGAI_TOOLS_PROFILE", "full")
            .current_dir(env.path("w/src"))
            .stdin(args.to_string())
            .run()
            .json()
    };
    assert_eq!(in_w(json!({"pattern": "../*.rs"})), json!({"output": "../other.rs", "count": 1}));
    assert_eq!(
        glob(&env, json!({"pattern": "w/src/**/*.rs"})),
        json!({"output": "w/src/a.rs\nw/src/deep/b.rs", "count": 2})
    );
}

/// The walk glob shares with grep reads no ignore file past its bounds: a
/// `.gitignore` of 760,000 patterns (1.25 GB and 4 s before) is skipped and
/// named, and what it would leave out is listed (more, never fewer).
#[test]
fn a_huge_gitignore_is_skipped_and_named_in_the_answer() {
    let env = Env::new();
    env.mkdir(".git");
    let huge = crate::full_grep::huge_gitignore("*.o");
    env.write(".gitignore", &huge);
    env.write("a.c", "");
    env.write("a.o", "");
    env.write("src/.gitignore", "gen.c\n");
    env.write("src/gen.c", "");
    env.write("src/b.c", "");
    let (answer, peak) =
        crate::full_grep::answer_and_peak(&env, "glob", json!({"pattern": "**/*"}));
    assert_eq!(
        answer,
        json!({
            // src/.gitignore is read and applies below it; the hidden
            // names the skipped file might have re-included are listed.
            "output": ".gitignore\na.c\na.o\nsrc\nsrc/.gitignore\nsrc/b.c",
            "count": 6,
            "ignore_files_skipped": [format!(".gitignore: {} bytes, more than 65536", huge.len())]
        })
    );
    assert!(peak < crate::full_grep::IGNORE_PEAK_MAX, "peak {} MiB", peak >> 20);
}
