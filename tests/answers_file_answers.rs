//! Answers a model can act on, for the file tools (issue 25, findings 3 and
//! 4): a path not found names what was looked up (docs/SPEC.md, "Error codes"),
//! and file_read tells a binary file rather than showing its bytes
//! (docs/TOOLS.md, "file_read").

use crate::common;
use crate::common::mcp::{answer_roots_list, file_uri, Session};
use crate::full_file_read::{png, sha256};

use common::*;
use serde_json::{json, Value};

fn error(message: &str, code: &str) -> Value {
    json!({"error": message, "error_code": code})
}

const NOT_EXPANDED: &str = "the tool does not expand ~ or $VARIABLES: give the full path";

/// A call with `HOME` and `PROJECT` set as a shell would have them.
fn call_with_home(env: &Env, tool: &str, args: Value) -> Value {
    env.cmd(tool)
        .env("IKIGAI_TOOLS_PROFILE", "full")
        .env("HOME", "/home/u")
        .env("PROJECT", "/srv/proj")
        .stdin(args.to_string())
        .run()
        .json()
}

#[test]
fn a_path_with_tilde_or_a_variable_not_found_names_the_shells_expansion() {
    let env = Env::new();
    let cases = [
        (
            "file_read",
            json!({"file_path": "~/.bashrc"}),
            error(
                &format!("File not found: ~/.bashrc ({NOT_EXPANDED}, e.g. /home/u/.bashrc)"),
                "FILE_NOT_FOUND",
            ),
        ),
        (
            "file_edit",
            json!({"file_path": "${PROJECT}/src/main.rs", "old_string": "a", "new_string": "b"}),
            error(
                &format!(
                    "File not found: ${{PROJECT}}/src/main.rs ({NOT_EXPANDED}, e.g. \
                     /srv/proj/src/main.rs)"
                ),
                "FILE_NOT_FOUND",
            ),
        ),
        (
            "file_write",
            json!({"file_path": "~/notes/a.txt", "content": "x"}),
            error(
                &format!(
                    "Cannot open file: ~/notes/a.txt (the directory ~/notes does not exist; \
                     {NOT_EXPANDED}, e.g. /home/u/notes/a.txt)"
                ),
                "OPEN_FAILED",
            ),
        ),
        (
            "bash",
            json!({"command": "pwd", "workdir": "~"}),
            error(&format!("File not found: ~ ({NOT_EXPANDED}, e.g. /home/u)"), "FILE_NOT_FOUND"),
        ),
        (
            "grep",
            json!({"pattern": "x", "path": "$IKIGAI_UNSET_FOR_TESTS/src"}),
            // A variable that is not set: no expansion to give.
            error(
                &format!("File not found: $IKIGAI_UNSET_FOR_TESTS/src ({NOT_EXPANDED})"),
                "FILE_NOT_FOUND",
            ),
        ),
    ];
    for (tool, args, want) in cases {
        assert_eq!(call_with_home(&env, tool, args.clone()), want, "{tool} {args}");
    }
}

#[test]
fn a_relative_missing_path_names_the_absolute_path_looked_for() {
    let env = Env::new();
    let looked = env.real_path("src/main.rs");
    assert_eq!(
        env.call("file_read", json!({"file_path": "./src//main.rs"})),
        error(&format!("File not found: ./src//main.rs (looked for {looked})"), "FILE_NOT_FOUND")
    );
    // An absolute path is what was looked for: nothing to add.
    let absolute = env.path("src/main.rs").display().to_string();
    assert_eq!(
        env.call("file_read", json!({"file_path": absolute})),
        error(&format!("File not found: {absolute}"), "FILE_NOT_FOUND")
    );
}

#[test]
fn confined_a_missing_path_names_the_path_beneath_the_root() {
    let env = Env::new();
    let root = env.mkdir("proj");
    // The working directory (work/) is outside the root: relative paths
    // are taken from the root.
    let ran = env
        .cmd("file_read")
        .env("IKIGAI_TOOLS_ROOTS", &root)
        .stdin(json!({"file_path": "main.rs"}).to_string())
        .run();
    let looked = env.real_path("proj/main.rs");
    assert_eq!(
        ran.json(),
        error(&format!("File not found: main.rs (looked for {looked})"), "FILE_NOT_FOUND")
    );
    let ran = env
        .cmd("file_write")
        .env("IKIGAI_TOOLS_ROOTS", &root)
        .stdin(json!({"file_path": "sub/x.txt", "content": "x"}).to_string())
        .run();
    let looked = env.real_path("proj/sub/x.txt");
    assert_eq!(
        ran.json(),
        error(
            &format!(
                "Cannot open file: sub/x.txt (the directory sub does not exist; looked for \
                 {looked})"
            ),
            "OPEN_FAILED"
        )
    );
}

#[test]
fn over_mcp_with_client_roots_a_missing_path_names_the_roots_path() {
    let env = Env::new();
    let root = env.mkdir("proj");
    let mut session = Session::initialized_with(&env, &[], json!({"roots": {"listChanged": true}}));
    answer_roots_list(&mut session, &[file_uri(&root)]);
    let answer = session.call(2, "file_read", json!({"file_path": "main.rs"}));
    let looked = env.real_path("proj/main.rs");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"],
        format!("FILE_NOT_FOUND: File not found: main.rs (looked for {looked})")
    );
}

#[test]
fn a_file_literally_named_with_a_tilde_or_a_dollar_is_read_as_before() {
    let env = Env::new();
    env.write("~x", "tilde\n");
    env.write("~/a.txt", "in a directory named ~\n");
    env.write("$HOME", "dollar\n");
    for (path, content) in
        [("~x", "tilde\n"), ("~/a.txt", "in a directory named ~\n"), ("$HOME", "dollar\n")]
    {
        assert_eq!(env.call("file_read", json!({"file_path": path})), json!({"output": content}));
    }
}

/// What file_read answers for a binary file of `size` bytes (`what`: its
/// type, if known).
fn binary(size: usize, what: Option<&str>) -> String {
    let what = what.map(|w| format!(", {w}")).unwrap_or_default();
    format!(
        "[binary file: {size} bytes{what}; not shown. Inspect it with bash: file, xxd | head, \
         strings]"
    )
}

#[test]
fn file_read_of_a_binary_file_says_so_in_both_profiles() {
    let env = Env::new();
    let elf = std::fs::read(env!("CARGO_BIN_EXE_ikigai-tools")).unwrap();
    env.write("program", &elf);
    let image = png(3, 2);
    env.write("red.png", &image);
    env.write("one_nul.txt", b"text\nwith one \0 NUL\n");
    let cases = [
        ("program", &elf[..], binary(elf.len(), Some("ELF executable or library"))),
        ("red.png", &image[..], binary(image.len(), Some("PNG image"))),
        ("one_nul.txt", b"text\nwith one \0 NUL\n", binary(20, None)),
    ];
    for (name, bytes, told) in cases {
        // A line range, numbered lines: the same answer.
        for args in
            [json!({"file_path": name}), json!({"file_path": name, "offset": 2, "limit": 1})]
        {
            assert_eq!(env.call("file_read", args.clone()), json!({"output": told}), "{args}");
        }
        let args = json!({"file_path": name, "offset": 2, "line_numbers": true});
        assert_eq!(
            env.call_full("file_read", args),
            json!({"output": told, "binary": true, "sha256": sha256(bytes)}),
            "{name}"
        );
    }
}

#[test]
fn file_read_of_a_utf16_file_says_to_convert_it() {
    let env = Env::new();
    let utf16: Vec<u8> =
        [0xfeff_u16].into_iter().chain("hi\n".encode_utf16()).flat_map(u16::to_le_bytes).collect();
    env.write("wide.txt", &utf16);
    assert_eq!(
        env.call("file_read", json!({"file_path": "wide.txt"})),
        json!({"output": "[UTF-16 text: 8 bytes; not shown. Convert it with bash: iconv -f UTF-16 \
                          -t UTF-8 FILE]"})
    );
}

#[test]
fn a_text_file_with_no_nul_in_its_start_is_read_as_before() {
    let env = Env::new();
    let text = "plain \x01 text\n";
    env.write("a.txt", text);
    assert_eq!(env.call("file_read", json!({"file_path": "a.txt"})), json!({"output": text}));
    // A NUL past the first 8 KiB is not looked for.
    let mut late = "line\n".repeat(2000).into_bytes();
    late.extend(b"\0end\n");
    env.write("late.txt", &late);
    let answer = env.call("file_read", json!({"file_path": "late.txt", "offset": 2001}));
    assert_eq!(answer, json!({"output": "\0end\n"}));
    // A file that reports no size, NUL-separated: read as before.
    let answer = env.call("file_read", json!({"file_path": "/proc/self/cmdline"}));
    assert!(answer["output"].as_str().unwrap().ends_with('\0'), "{answer}");
}
