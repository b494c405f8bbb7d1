//! grep: which files are searched, how lines match and are printed, binary
//! and unreadable files, and the errors.

use crate::common;
use common::*;

use std::os::unix::fs::symlink;

use serde_json::{json, Value};

fn grep(env: &Env, args: Value) -> Value {
    env.call("grep", args)
}

fn answer(lines: &[&str]) -> Value {
    json!({"output": lines.join("\n"), "count": lines.len()})
}

/// `n` lines of filler, so that a line of interest lands on line `n + 1`.
fn filler(n: usize) -> String {
    "filler\n".repeat(n)
}

#[test]
fn the_seed_example() {
    let env = Env::new();
    env.write("src/main.c", format!("{}// TODO: implement error handling\n", filler(41)));
    env.write("src/util.c", format!("{}// TODO: optimize this\n{}", filler(14), filler(3)));
    env.write("src/notes.txt", "TODO: not a .c file\n");
    assert_eq!(
        grep(&env, json!({"pattern": "TODO", "glob": "*.c", "path": "src"})),
        json!({
            "output": "src/main.c:42: // TODO: implement error handling\nsrc/util.c:15: // TODO: optimize this",
            "count": 2
        })
    );
}

#[test]
fn by_default_only_the_top_level_of_path_is_searched() {
    let env = Env::new();
    env.write("a.c", "needle\n");
    env.write("sub/b.c", "needle\n");
    env.write(".hidden", "needle\n");
    assert_eq!(grep(&env, json!({"pattern": "needle"})), answer(&["a.c:1: needle"]));
    assert_eq!(grep(&env, json!({"pattern": "needle", "glob": ""})), answer(&["a.c:1: needle"]));
    assert_eq!(
        grep(&env, json!({"pattern": "needle", "path": "sub"})),
        answer(&["sub/b.c:1: needle"])
    );
}

#[test]
fn path_absent_prints_bare_names_and_dot_prints_dot_slash() {
    let env = Env::new();
    env.write("a.c", "needle\n");
    assert_eq!(grep(&env, json!({"pattern": "needle", "path": ""})), answer(&["a.c:1: needle"]));
    assert_eq!(grep(&env, json!({"pattern": "needle", "path": "."})), answer(&["./a.c:1: needle"]));
    assert_eq!(
        grep(&env, json!({"pattern": "needle", "path": "./"})),
        answer(&["./a.c:1: needle"])
    );
}

#[test]
fn double_star_searches_the_tree_in_glob_order() {
    let env = Env::new();
    env.write("z.c", "needle\n");
    env.write("a/b/c.c", "x\nneedle\n");
    env.write("a/b.h", "needle\n");
    env.write("B.c", "needle\n");
    env.write(".git/x.c", "needle\n");
    assert_eq!(
        grep(&env, json!({"pattern": "needle", "glob": "**/*.c"})),
        answer(&["B.c:1: needle", "a/b/c.c:2: needle", "z.c:1: needle"])
    );
}

#[test]
fn only_regular_files_are_searched() {
    let env = Env::new();
    env.write("real.c", "needle\n");
    env.write("dir.c/inner", "needle\n");
    symlink("real.c", env.path("link.c")).unwrap();
    nix::unistd::mkfifo(&env.path("fifo.c"), nix::sys::stat::Mode::from_bits_truncate(0o644))
        .unwrap();
    let ran = env.cmd("grep").stdin(r#"{"pattern":"needle"}"#).run();
    assert!(ran.elapsed.as_secs() < 15, "a FIFO must not block the search");
    assert_eq!(ran.json(), answer(&["real.c:1: needle"]));
}

#[test]
fn binary_files_are_skipped_entirely() {
    let env = Env::new();
    env.write("text.c", "needle\n");
    env.write("early.c", b"needle\n\0\n");
    // The NUL comes long after the match, past any first buffer.
    let mut late = b"needle\n".to_vec();
    late.extend(std::iter::repeat_n(b'x', 1 << 20));
    late.extend(b"\n\0needle\n");
    env.write("late.c", late);
    assert_eq!(grep(&env, json!({"pattern": "needle"})), answer(&["text.c:1: needle"]));
}

#[test]
fn unreadable_files_are_skipped_silently() {
    let env = Env::new();
    env.write("a.c", "needle\n");
    env.write("b.c", "needle\n");
    env.write("c.c", "needle\n");
    let _unreadable = ModeGuard::set(env.path("b.c"), 0o000);
    let ran = env.cmd("grep").stdin(r#"{"pattern":"needle"}"#).as_nobody().run();
    assert_eq!(ran.code, Some(0));
    assert_eq!(ran.stderr, "");
    assert_eq!(ran.json(), answer(&["a.c:1: needle", "c.c:1: needle"]));
}

#[test]
fn anchors_hold_at_every_line() {
    let env = Env::new();
    env.write("f", "start middle end\nstart\nend\n  start\nend  \n");
    assert_eq!(
        grep(&env, json!({"pattern": "^start"})),
        answer(&["f:1: start middle end", "f:2: start"])
    );
    assert_eq!(
        grep(&env, json!({"pattern": "end$"})),
        answer(&["f:1: start middle end", "f:3: end"])
    );
    assert_eq!(grep(&env, json!({"pattern": "^end$"})), answer(&["f:3: end"]));
}

#[test]
fn a_match_never_spans_lines() {
    let env = Env::new();
    env.write("f", "foo\nbar\nfoo bar\n");
    assert_eq!(grep(&env, json!({"pattern": r"foo\s+bar"})), answer(&["f:3: foo bar"]));
    assert_eq!(grep(&env, json!({"pattern": "foo[^x]*bar"})), answer(&["f:3: foo bar"]));
}

#[test]
fn alternation_groups_and_posix_classes() {
    let env = Env::new();
    env.write("f", "alpha\nbeta\ngamma 42\ndelta\n");
    assert_eq!(
        grep(&env, json!({"pattern": "(alp|gam)(ha|ma)"})),
        answer(&["f:1: alpha", "f:3: gamma 42"])
    );
    assert_eq!(grep(&env, json!({"pattern": "[[:digit:]]+"})), answer(&["f:3: gamma 42"]));
    assert_eq!(grep(&env, json!({"pattern": "^[[:alpha:]]{4}$"})), answer(&["f:2: beta"]));
}

#[test]
fn each_matching_line_once_and_a_last_line_without_newline() {
    let env = Env::new();
    env.write("f", "a a a\nb\na");
    assert_eq!(grep(&env, json!({"pattern": "a"})), answer(&["f:1: a a a", "f:3: a"]));
}

#[test]
fn a_very_long_line_is_printed_whole() {
    let env = Env::new();
    let long = format!("{}needle{}", "x".repeat(3_000_000), "y".repeat(10));
    env.write("f", format!("short\n{long}\nshort\n"));
    let v = grep(&env, json!({"pattern": "needle"}));
    assert_eq!(v, json!({"output": format!("f:2: {long}"), "count": 1}));
}

#[test]
fn crlf_lines_match_at_their_end_and_print_without_cr() {
    let env = Env::new();
    env.write("win.txt", "first line\r\nsecond\r\nthird line\r\n");
    assert_eq!(
        grep(&env, json!({"pattern": "line$"})),
        answer(&["win.txt:1: first line", "win.txt:3: third line"])
    );
}

#[test]
fn non_utf8_lines_and_names_come_out_lossy() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let env = Env::new();
    std::fs::write(env.work().join(OsStr::from_bytes(b"f\xff")), b"caf\xe9 needle\n").unwrap();
    assert_eq!(
        grep(&env, json!({"pattern": "needle"})),
        answer(&["f\u{FFFD}:1: caf\u{FFFD} needle"])
    );
}

#[test]
fn many_files_keep_their_order() {
    let env = Env::new();
    let mut expected = Vec::new();
    for i in 0..300 {
        let name = format!("d{:02}/f{i:03}.txt", i % 7);
        env.write(&name, format!("{}needle {i}\n", filler(i % 5)));
        expected.push((name, i));
    }
    expected.sort();
    let lines: Vec<String> =
        expected.iter().map(|(name, i)| format!("{name}:{}: needle {i}", i % 5 + 1)).collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    assert_eq!(grep(&env, json!({"pattern": "needle", "glob": "**/*.txt"})), answer(&lines));
}

#[test]
fn nothing_found_is_not_an_error() {
    let env = Env::new();
    env.write("f", "hay\n");
    assert_eq!(grep(&env, json!({"pattern": "needle"})), json!({"output": "", "count": 0}));
    assert_eq!(grep(&env, json!({"pattern": "hay", "path": "missing"})), answer(&[]));
}

#[test]
fn an_invalid_regex_is_reported_on_one_line() {
    let env = Env::new();
    assert_eq!(
        grep(&env, json!({"pattern": "(unclosed", "path": "missing"})),
        json!({
            "error": "Invalid pattern: regex parse error: unclosed group: the '(' at position 0",
            "error_code": "INVALID_PATTERN"
        })
    );
    assert_eq!(
        grep(&env, json!({"pattern": r"(a)\1"})),
        json!({
            "error": "Invalid pattern: regex parse error: backreferences are not supported: the '\\1' at position 3",
            "error_code": "INVALID_PATTERN"
        })
    );
}

#[test]
fn the_regex_is_checked_before_the_glob_filter() {
    let env = Env::new();
    assert_eq!(
        grep(&env, json!({"pattern": "a{", "glob": "[x"})),
        json!({
            "error": "Invalid pattern: regex parse error: unclosed counted repetition: the '{' at position 1",
            "error_code": "INVALID_PATTERN"
        })
    );
}

#[test]
fn a_malformed_glob_filter_is_invalid_pattern() {
    let env = Env::new();
    env.write("a.c", "x\n");
    assert_eq!(
        grep(&env, json!({"pattern": "x", "glob": "*.{c,h"})),
        json!({
            "error": "Invalid glob pattern: unclosed '{' at position 2",
            "error_code": "INVALID_PATTERN"
        })
    );
}

#[test]
fn arguments_are_checked() {
    let env = Env::new();
    assert_eq!(
        grep(&env, json!({"glob": "*"})),
        json!({"error": "missing required parameter: pattern", "error_code": "INVALID_ARG"})
    );
    assert_eq!(
        grep(&env, json!({"pattern": "x", "glob": 1})),
        json!({"error": "parameter glob must be a string", "error_code": "INVALID_ARG"})
    );
}

#[test]
fn the_output_limit_keeps_head_and_tail_and_the_full_count() {
    let env = Env::new();
    for i in 0..60 {
        env.write(&format!("f{i:02}"), "hit\nhit\n");
    }
    let ran =
        env.cmd("grep").stdin(r#"{"pattern":"hit"}"#).env("IKIGAI_TOOLS_MAX_OUTPUT", "40").run();
    // 120 lines of "fNN:L: hit\n": 1,320 bytes, 1,440 in the answer; 40
    // counts as 1 KiB.
    let whole: String =
        (0..60).flat_map(|i| [1, 2].map(|l| format!("f{i:02}:{l}: hit\n"))).collect();
    let want = answer::bounded_lines(whole.as_bytes(), 1024, answer::narrow_grep);
    assert!(want.contains("bytes omitted"));
    assert_eq!(ran.json(), json!({"output": want, "count": 120}));
    assert!(ran.stdout.len() <= 1024, "answer of {} bytes", ran.stdout.len());
}

#[test]
fn snapshots() {
    let env = Env::new();
    env.write("src/main.c", "int main(void) {\n    // TODO: parse args\n    return 0;\n}\n");
    env.write("src/lib/util.c", "// TODO: faster\nvoid f(void) {}\n");
    snap!("answer", grep(&env, json!({"pattern": "TODO|^}", "glob": "**/*.c", "path": "src"})));
    snap!("invalid_regex", grep(&env, json!({"pattern": "[unclosed"})));
}

#[test]
fn a_path_that_names_a_file_searches_that_file() {
    let env = Env::new();
    env.write("src/main.c", "int x;\n// TODO: here\n");
    env.write("src/other.c", "// TODO: not asked for\n");
    env.write(".env", "TODO=1\n");
    let main = answer(&["src/main.c:2: // TODO: here"]);
    assert_eq!(grep(&env, json!({"pattern": "TODO", "path": "src/main.c"})), main);
    // A glob filter still applies to the file, by glob's rules.
    assert_eq!(grep(&env, json!({"pattern": "TODO", "path": "src/main.c", "glob": "*.c"})), main);
    assert_eq!(
        grep(&env, json!({"pattern": "TODO", "path": "src/main.c", "glob": "*.h"})),
        answer(&[])
    );
    // Named explicitly, a dotfile is searched; the path is printed as given.
    assert_eq!(grep(&env, json!({"pattern": "TODO", "path": ".env"})), answer(&[".env:1: TODO=1"]));
    assert_eq!(
        grep(&env, json!({"pattern": "TODO", "path": "./src//main.c", "glob": "*.c"})),
        answer(&["./src//main.c:2: // TODO: here"])
    );
}
