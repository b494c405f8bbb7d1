//! glob: pattern syntax, the dotfile rule, how results are spelled and
//! sorted, what the walk enters, and its errors.

use crate::common;
use common::*;

use std::os::unix::fs::{symlink, PermissionsExt};

use serde_json::{json, Value};

fn glob(env: &Env, args: Value) -> Value {
    env.call("glob", args)
}

fn answer(paths: &[&str]) -> Value {
    json!({"output": paths.join("\n"), "count": paths.len()})
}

fn invalid_pattern() -> Value {
    json!({"error": "Invalid glob pattern", "error_code": "INVALID_PATTERN"})
}

/// A small source tree used by several tests.
fn tree() -> Env {
    let env = Env::new();
    for f in [
        "a.c",
        "b.c",
        "ab.c",
        "B.h",
        "notes.txt",
        ".hidden.c",
        "src/main.c",
        "src/util.c",
        "src/util.h",
        "src/deep/er/x.c",
        "include/api.h",
        ".git/objects/o.c",
        "src/.cache/c.c",
    ] {
        env.write(f, "");
    }
    env
}

#[test]
fn star_matches_names_at_the_top_level_only() {
    let env = tree();
    assert_eq!(glob(&env, json!({"pattern": "*.c"})), answer(&["a.c", "ab.c", "b.c"]));
}

#[test]
fn question_mark_matches_one_character() {
    let env = tree();
    assert_eq!(glob(&env, json!({"pattern": "?.c"})), answer(&["a.c", "b.c"]));
}

#[test]
fn classes_sets_ranges_and_negation() {
    let env = tree();
    assert_eq!(glob(&env, json!({"pattern": "[ab].c"})), answer(&["a.c", "b.c"]));
    assert_eq!(glob(&env, json!({"pattern": "[a-z]?.c"})), answer(&["ab.c"]));
    assert_eq!(glob(&env, json!({"pattern": "[!a].c"})), answer(&["b.c"]));
    assert_eq!(glob(&env, json!({"pattern": "[^a].c"})), answer(&["b.c"]));
}

#[test]
fn double_star_matches_any_number_of_directories() {
    let env = tree();
    assert_eq!(
        glob(&env, json!({"pattern": "**/*.c"})),
        answer(&["a.c", "ab.c", "b.c", "src/deep/er/x.c", "src/main.c", "src/util.c"])
    );
    assert_eq!(
        glob(&env, json!({"pattern": "src/**/*.c"})),
        answer(&["src/deep/er/x.c", "src/main.c", "src/util.c"])
    );
    assert_eq!(
        glob(&env, json!({"pattern": "src/**"})),
        answer(&[
            "src/deep",
            "src/deep/er",
            "src/deep/er/x.c",
            "src/main.c",
            "src/util.c",
            "src/util.h"
        ])
    );
}

#[test]
fn braces_give_alternatives_even_across_directories() {
    let env = tree();
    assert_eq!(
        glob(&env, json!({"pattern": "src/*.{c,h}"})),
        answer(&["src/main.c", "src/util.c", "src/util.h"])
    );
    assert_eq!(
        glob(&env, json!({"pattern": "{src,include}/*.h"})),
        answer(&["include/api.h", "src/util.h"])
    );
    assert_eq!(
        glob(&env, json!({"pattern": "{a,src/{main,nothing}}.c"})),
        answer(&["a.c", "src/main.c"])
    );
    // The same path reached by two alternatives is listed once.
    assert_eq!(glob(&env, json!({"pattern": "{a,?}.c"})), answer(&["a.c", "b.c"]));
}

#[test]
fn star_skips_dotfiles_and_dot_star_finds_them() {
    let env = tree();
    assert_eq!(
        glob(&env, json!({"pattern": "*"})),
        answer(&["B.h", "a.c", "ab.c", "b.c", "include", "notes.txt", "src"])
    );
    assert_eq!(glob(&env, json!({"pattern": ".*"})), answer(&[".git", ".hidden.c"]));
    assert_eq!(
        glob(&env, json!({"pattern": "{.,}*.c"})),
        answer(&[".hidden.c", "a.c", "ab.c", "b.c"])
    );
}

#[test]
fn double_star_skips_hidden_directories_unless_named() {
    let env = tree();
    let all = glob(&env, json!({"pattern": "**"}));
    let output = all["output"].as_str().unwrap();
    assert!(!output.contains(".git") && !output.contains(".cache") && !output.contains(".hidden"));
    assert_eq!(all["count"], 14);
    assert_eq!(glob(&env, json!({"pattern": ".git/**/*.c"})), answer(&[".git/objects/o.c"]));
    assert_eq!(glob(&env, json!({"pattern": "**/.cache/*"})), answer(&["src/.cache/c.c"]));
}

#[test]
fn results_are_joined_to_path_as_given() {
    let env = tree();
    let in_src = answer(&["src/main.c", "src/util.c"]);
    assert_eq!(glob(&env, json!({"pattern": "*.c", "path": "src"})), in_src);
    assert_eq!(glob(&env, json!({"pattern": "*.c", "path": "src/"})), in_src);
    assert_eq!(glob(&env, json!({"pattern": "*.h", "path": "."})), answer(&["./B.h"]));
    assert_eq!(glob(&env, json!({"pattern": "./*.h"})), answer(&["./B.h"]));
    assert_eq!(glob(&env, json!({"pattern": "*.h", "path": ""})), answer(&["B.h"]));
    assert_eq!(glob(&env, json!({"pattern": "*.h", "path": null})), answer(&["B.h"]));
    let v = env
        .cmd("glob")
        .current_dir(env.path("src"))
        .stdin(r#"{"pattern":"*.h","path":".."}"#)
        .run();
    assert_eq!(v.json(), answer(&["../B.h"]));
    let v = env.cmd("glob").current_dir(env.path("src")).stdin(r#"{"pattern":"../inc*/*"}"#).run();
    assert_eq!(v.json(), answer(&["../include/api.h"]));
}

#[test]
fn an_absolute_pattern_ignores_path() {
    let env = tree();
    let root = env.work().to_str().unwrap().to_owned();
    let v = glob(&env, json!({"pattern": format!("{root}/src/*.h"), "path": "include"}));
    assert_eq!(v, answer(&[&format!("{root}/src/util.h")]));
    assert_eq!(glob(&env, json!({"pattern": "/"})), answer(&["/"]));
    // Alternatives that mix absolute and relative patterns, merged in byte
    // order ('.' before '/').
    let v = glob(&env, json!({"pattern": format!("{{B.h,{root}/src/*.h}}"), "path": "."}));
    assert_eq!(v, answer(&["./B.h", &format!("{root}/src/util.h")]));
}

#[test]
fn path_is_taken_literally() {
    let env = Env::new();
    env.write("we[i]rd/a.c", "");
    env.write("wei/a.c", "");
    assert_eq!(glob(&env, json!({"pattern": "*.c", "path": "we[i]rd"})), answer(&["we[i]rd/a.c"]));
}

#[test]
fn directories_are_included_and_a_trailing_slash_keeps_only_them() {
    let env = tree();
    assert_eq!(
        glob(&env, json!({"pattern": "src/*"})),
        answer(&["src/deep", "src/main.c", "src/util.c", "src/util.h"])
    );
    assert_eq!(glob(&env, json!({"pattern": "*/"})), answer(&["include/", "src/"]));
}

#[test]
fn sorted_by_bytes_uppercase_first_and_paths_as_whole_strings() {
    let env = Env::new();
    for f in ["b", "B", "a", "A", "_", "c-d/x", "c/d", "é"] {
        env.write(f, "");
    }
    // '-' (0x2d) sorts before '/' (0x2f): "c-d/x" before "c/d".
    assert_eq!(
        glob(&env, json!({"pattern": "**"})),
        answer(&["A", "B", "_", "a", "b", "c", "c-d", "c-d/x", "c/d", "é"])
    );
}

#[test]
fn literal_components_are_looked_up_without_listing() {
    let env = Env::new();
    env.write("locked/open/x.c", "");
    env.write("locked/open/y.h", "");
    // Searchable but not readable, by its owner too (so that the test holds
    // as a normal user): a walk that lists `locked` finds nothing.
    std::fs::set_permissions(env.path("locked"), std::fs::Permissions::from_mode(0o311)).unwrap();
    let ran = env.cmd("glob").stdin(r#"{"pattern":"locked/open/*.c"}"#).as_nobody().run();
    assert_eq!(ran.json(), answer(&["locked/open/x.c"]));
    let ran = env.cmd("glob").stdin(r#"{"pattern":"locked/*/*.c"}"#).as_nobody().run();
    assert_eq!(ran.json(), answer(&[]));
}

#[test]
fn only_directories_the_pattern_can_match_are_entered() {
    let env = Env::new();
    env.write("a/b/c", "");
    env.write("a/x/c", "");
    env.write("z/b/c", "");
    // An unreadable sibling, and a directory too deep to matter.
    env.mkdir("a/secret/c");
    std::fs::set_permissions(env.path("a/secret"), std::fs::Permissions::from_mode(0o000)).unwrap();
    env.write("a/b/c2/deeper/c", "");
    let ran = env.cmd("glob").stdin(r#"{"pattern":"a/*/c"}"#).as_nobody().run();
    assert_eq!(ran.code, Some(0));
    assert_eq!(ran.json(), answer(&["a/b/c", "a/x/c"]));
}

#[test]
fn a_symlink_loop_under_double_star_terminates() {
    let env = Env::new();
    env.write("d/f.c", "");
    symlink("..", env.path("d/up")).unwrap();
    symlink(".", env.path("d/self")).unwrap();
    // The symlinks themselves are listed; `**` does not enter them.
    assert_eq!(glob(&env, json!({"pattern": "**"})), answer(&["d", "d/f.c", "d/self", "d/up"]));
    assert_eq!(glob(&env, json!({"pattern": "**/*.c"})), answer(&["d/f.c"]));
    // A component other than `**` follows a symlink, but not one that leads
    // back to a directory on the path being walked.
    env.write("e/h.c", "");
    symlink("../e", env.path("d/side")).unwrap();
    assert_eq!(glob(&env, json!({"pattern": "d/*/*.c"})), answer(&["d/side/h.c"]));
    assert_eq!(glob(&env, json!({"pattern": "d/*/"})), answer(&["d/self/", "d/side/", "d/up/"]));
}

/// `l1 -> .` … `l5 -> .` and a pattern of 14 `*`: followed, the links made
/// 5^14 paths (more than 30 s); a link back to a directory being walked is
/// listed but never entered, so the answer comes at once.
#[test]
fn links_back_to_the_walked_path_are_listed_but_never_entered() {
    let env = Env::new();
    env.write("f.c", "x\n");
    for i in 1..=5 {
        symlink(".", env.path(&format!("l{i}"))).unwrap();
    }
    let glob_of = |pattern: &str| {
        let ran = env
            .cmd("glob")
            .stdin(json!({ "pattern": pattern }).to_string())
            .timeout(std::time::Duration::from_secs(10))
            .run();
        ran.json()
    };
    assert_eq!(glob_of(&["*"; 14].join("/")), answer(&[]));
    assert_eq!(glob_of("*/*/*/*/*/*/*/*"), answer(&[]));
    assert_eq!(glob_of("*"), answer(&["f.c", "l1", "l2", "l3", "l4", "l5"]));
    assert_eq!(glob_of("*/f.c"), answer(&[]));
    assert_eq!(glob_of("l1/"), answer(&["l1/"]));
    // grep walks the same way.
    let ran = env
        .cmd("grep")
        .stdin(json!({"pattern": "x", "glob": (["*"; 12].join("/"))}).to_string())
        .timeout(std::time::Duration::from_secs(10))
        .run();
    assert_eq!(ran.json(), json!({"output": "", "count": 0}));
}

#[test]
fn non_utf8_names_come_out_lossy() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let env = Env::new();
    std::fs::write(env.work().join(OsStr::from_bytes(b"bad\xff.txt")), "").unwrap();
    env.write("good.txt", "");
    assert_eq!(glob(&env, json!({"pattern": "*.txt"})), answer(&["bad\u{FFFD}.txt", "good.txt"]));
}

#[test]
fn escapes_match_wildcard_characters_literally() {
    let env = Env::new();
    env.write("a*b", "");
    env.write("axb", "");
    env.write("{x}", "");
    assert_eq!(glob(&env, json!({"pattern": r"a\*b"})), answer(&["a*b"]));
    assert_eq!(glob(&env, json!({"pattern": r"\{x\}"})), answer(&["{x}"]));
    assert_eq!(glob(&env, json!({"pattern": "[{]*"})), answer(&["{x}"]));
}

#[test]
fn a_pattern_without_wildcards_is_an_existence_check() {
    let env = tree();
    assert_eq!(glob(&env, json!({"pattern": "src/main.c"})), answer(&["src/main.c"]));
    assert_eq!(glob(&env, json!({"pattern": "src/missing.c"})), answer(&[]));
}

#[test]
fn nothing_found_is_not_an_error() {
    let env = tree();
    assert_eq!(glob(&env, json!({"pattern": "*.rs"})), json!({"output": "", "count": 0}));
    assert_eq!(glob(&env, json!({"pattern": "*", "path": "no/such/dir"})), answer(&[]));
    assert_eq!(glob(&env, json!({"pattern": "*", "path": "a.c"})), answer(&[]));
    assert_eq!(glob(&env, json!({"pattern": ""})), answer(&[]));
}

#[test]
fn an_unreadable_directory_is_passed_over() {
    let env = tree();
    std::fs::set_permissions(env.path("src"), std::fs::Permissions::from_mode(0o000)).unwrap();
    let ran = env.cmd("glob").stdin(r#"{"pattern":"**/*.h"}"#).as_nobody().run();
    assert_eq!(ran.json(), answer(&["B.h", "include/api.h"]));
}

#[test]
fn malformed_patterns_are_invalid_pattern() {
    let env = tree();
    for pattern in ["[a", "{a", "a}", "src/{main,util", "*.[", r"a\", "[z-a]", "ok/[x/*.c"] {
        assert_eq!(glob(&env, json!({"pattern": pattern})), invalid_pattern(), "{pattern}");
    }
    // Checked before the walk: a path that does not exist changes nothing.
    assert_eq!(glob(&env, json!({"pattern": "[a", "path": "missing"})), invalid_pattern());
}

#[test]
fn arguments_are_checked() {
    let env = tree();
    assert_eq!(
        glob(&env, json!({})),
        json!({"error": "missing required parameter: pattern", "error_code": "INVALID_ARG"})
    );
    assert_eq!(
        glob(&env, json!({"pattern": "*", "path": 3})),
        json!({"error": "parameter path must be a string", "error_code": "INVALID_ARG"})
    );
}

#[test]
fn the_output_limit_keeps_head_and_tail_and_the_full_count() {
    let env = Env::new();
    for i in 0..300 {
        env.write(&format!("f{i:03}"), "");
    }
    let ran =
        env.cmd("glob").stdin(r#"{"pattern":"*"}"#).env("IKIGAI_TOOLS_MAX_OUTPUT", "40").run();
    // 300 lines of "fNNN\n": 1,500 bytes, 1,800 in the answer; 40 counts
    // as 1 KiB.
    let whole: String = (0..300).map(|i| format!("f{i:03}\n")).collect();
    let want = answer::bounded_lines(whole.as_bytes(), 1024);
    assert!(want.contains("bytes omitted"));
    assert_eq!(ran.json(), json!({"output": want, "count": 300}));
    assert!(ran.stdout.len() <= 1024, "answer of {} bytes", ran.stdout.len());
}

#[test]
fn snapshots() {
    let env = tree();
    snap!("answer", glob(&env, json!({"pattern": "src/**/*.{c,h}"})));
    snap!("invalid_pattern", glob(&env, json!({"pattern": "src/[a"})));
}
