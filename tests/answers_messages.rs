//! Answers a model can act on (issue 25, finding 5): each message says
//! what is true and what to send next. `expected_sha256` `""` on an
//! existing file says it exists; a regex error names the part of the
//! pattern and where; an unknown tool over MCP gets "did you mean"; a
//! failed edit of `edits` says the text it was looked for in; full glob
//! with a missing `path` is `FILE_NOT_FOUND`, as full grep.

use crate::common;
use common::mcp::Session;
use common::*;

use serde_json::json;

#[test]
fn an_empty_expected_sha256_on_an_existing_file_says_it_exists() {
    let env = Env::new();
    env.write("there.txt", "keep");
    let args = json!({"file_path": "there.txt", "content": "x", "expected_sha256": ""});
    assert_eq!(
        env.call_full("file_write", args),
        json!({
            "error": "File exists: there.txt (expected_sha256 \"\" means the file must not exist; \
                      nothing was written: to replace it, pass the sha256 file_read answers, or \
                      leave expected_sha256 out)",
            "error_code": "STALE"
        })
    );
    assert_eq!(env.read("there.txt"), b"keep");
}

#[test]
fn a_regex_error_names_the_part_of_the_pattern_and_where_it_starts() {
    let env = Env::new();
    env.write("a.txt", "x\n");
    let args = json!({"pattern": "ab(c|d", "glob": "*.txt"});
    let expected = json!({
        "error": "Invalid pattern: regex parse error: unclosed group: the '(' at position 2",
        "error_code": "INVALID_PATTERN"
    });
    assert_eq!(env.call("grep", args.clone()), expected, "seed profile");
    assert_eq!(env.call_full("grep", args), expected, "full profile");
    // A position counts characters, not bytes.
    assert_eq!(
        env.call_full("grep", json!({"pattern": "é{2,"})),
        json!({
            "error": "Invalid pattern: regex parse error: unclosed counted repetition: the '{2,' \
                      at position 1",
            "error_code": "INVALID_PATTERN"
        })
    );
    // The glob filter's error is told the same way: what, and where.
    let bad_filter = json!({"pattern": "x", "glob": "*.[ch"});
    let expected = json!({
        "error": "Invalid glob pattern: unclosed '[' at position 2",
        "error_code": "INVALID_PATTERN"
    });
    assert_eq!(env.call("grep", bad_filter.clone()), expected, "seed profile");
    assert_eq!(env.call_full("grep", bad_filter), expected, "full profile");
    // Full profile, an excluding filter (`rg -g '!…'`): places as given.
    assert_eq!(
        env.call_full("grep", json!({"pattern": "x", "glob": "!*.{c,h"})),
        json!({
            "error": "Invalid glob pattern: unclosed '{' at position 3",
            "error_code": "INVALID_PATTERN"
        })
    );
}

#[test]
fn an_unknown_tool_over_mcp_is_told_the_tool_it_likely_meant() {
    let env = Env::new();
    let mut session = Session::initialized(&env);
    let tools =
        "bash, file_read, file_write, file_edit, glob, grep, job_output, job_kill, job_list, \
                 job_write, list_allowed_directories, apply_patch, web_fetch, web_search";
    let cases = [
        ("file-read", Some("file_read")),
        ("fileread", Some("file_read")),
        ("Read", Some("file_read")),
        ("read_file", Some("file_read")),
        ("grep_search", Some("grep")),
        ("cat", None),
    ];
    for (id, (called, meant)) in (2..).zip(cases) {
        let answer = session.call(id, called, json!({"file_path": "x"}));
        let hint = meant.map(|m| format!(" (did you mean {m}?)")).unwrap_or_default();
        assert_eq!(
            answer["error"],
            json!({
                "code": -32602,
                "message": format!("unknown tool '{called}'{hint}; the tools are: {tools}")
            }),
            "{called}"
        );
    }
}

#[test]
fn a_failed_later_edit_says_its_closest_line_is_in_the_edited_text() {
    let env = Env::new();
    env.write("f.txt", "alpha\nbeta\n");
    // The closest line, `gamma one`, exists only once edits[0] has run.
    let args = json!({"file_path": "f.txt", "edits": [
        {"old_string": "alpha", "new_string": "gamma one"},
        {"old_string": "gamma two", "new_string": "x"},
    ]});
    assert_eq!(
        env.call_full("file_edit", args),
        json!({
            "error": "String not found in file (edits[1].old_string, looked for after edits[0] \
                      was applied in memory: line numbers are in that text; no edit was written)",
            "error_code": "NOT_FOUND",
            "edit": 1,
            "closest": {"line": 1, "text": "gamma one", "after_edits": 1},
        })
    );
    let args = json!({"file_path": "f.txt", "edits": [
        {"old_string": "alpha", "new_string": "gamma one"},
        {"old_string": "beta", "new_string": "delta"},
        {"old_string": "delta two", "new_string": "x"},
    ]});
    assert_eq!(
        env.call_full("file_edit", args),
        json!({
            "error": "String not found in file (edits[2].old_string, looked for after \
                      edits[0]-edits[1] were applied in memory: line numbers are in that text; no \
                      edit was written)",
            "error_code": "NOT_FOUND",
            "edit": 2,
            "closest": {"line": 2, "text": "delta", "after_edits": 2},
        })
    );
    // The first edit is looked for in the file itself, as before.
    let args =
        json!({"file_path": "f.txt", "edits": [{"old_string": "alpha two", "new_string": "x"}]});
    assert_eq!(
        env.call_full("file_edit", args),
        json!({
            "error": "String not found in file (edits[0].old_string; no edit was written)",
            "error_code": "NOT_FOUND",
            "edit": 0,
            "closest": {"line": 1, "text": "alpha"},
        })
    );
    assert_eq!(env.read("f.txt"), b"alpha\nbeta\n");
}

#[test]
fn full_glob_and_full_grep_agree_that_a_missing_path_is_file_not_found() {
    let env = Env::new();
    env.write("src/a.rs", "fn main() {}\n");
    let message = format!("File not found: scr{}", env.looked_for("scr"));
    let not_found = json!({"error": message, "error_code": "FILE_NOT_FOUND"});
    let glob = json!({"pattern": "*.rs", "path": "scr"});
    assert_eq!(env.call_full("glob", glob.clone()), not_found);
    assert_eq!(env.call_full("grep", json!({"pattern": "main", "path": "scr"})), not_found);
    // Confined, the same (the path is looked for beneath the roots).
    let confined = env
        .cmd("glob")
        .env("IKIGAI_TOOLS_PROFILE", "full")
        .env("IKIGAI_TOOLS_ROOTS", env.work())
        .current_dir(env.work())
        .stdin(glob.to_string())
        .run()
        .json();
    assert_eq!(confined, not_found);
    // A directory that is there, and a missing one inside the pattern, are
    // no error: nothing matched.
    assert_eq!(
        env.call_full("glob", json!({"pattern": "*.rs", "path": "src"})),
        json!({"output": "src/a.rs", "count": 1})
    );
    assert_eq!(
        env.call_full("glob", json!({"pattern": "lib/*.rs"})),
        json!({"output": "", "count": 0})
    );
    // The seed profile keeps the seed's answer: nothing matched.
    assert_eq!(env.call("glob", glob), json!({"output": "", "count": 0}));
}
