//! grep in the full profile (docs/TOOLS.md, grep, "Full profile"): the
//! recursive walk and ripgrep's ignore rules, every parameter, the output
//! modes, context, paging, the file counts, confinement, the errors, and
//! that the seed profile answers as before.

use crate::common;
use common::*;

use std::os::unix::fs::symlink;

use serde_json::{json, Value};

fn grep(env: &Env, args: Value) -> Value {
    env.call_full("grep", args)
}

fn snapshot(name: &str, value: &Value) {
    insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => true}, {
        insta::assert_json_snapshot!(name, value);
    });
}

/// A git repository (`.git` is all ripgrep looks for) with ignore files,
/// hidden and binary files.
fn repo(env: &Env) {
    env.mkdir(".git/info");
    env.write(".git/info/exclude", "excluded.txt\n");
    env.write(".git/HEAD", "needle\n");
    env.write(".gitignore", "gen/\n*.log\n!keep.log\n");
    env.write(".ignore", "local.txt\n");
    env.write("a.txt", "needle one\nplain\n");
    env.write("excluded.txt", "needle\n");
    env.write("local.txt", "needle\n");
    env.write("debug.log", "needle\n");
    env.write("keep.log", "needle\n");
    env.write(".hidden", "needle\n");
    env.write("bin.dat", "needle\0binary\n");
    env.write("src/main.c", "int main;\n// needle here\n");
    env.write("src/gen/out.c", "needle\n");
    env.write("src/.gitignore", "*.tmp\n!keep.tmp\n");
    env.write("src/x.tmp", "needle\n");
    env.write("src/keep.tmp", "needle\n");
}

#[test]
fn a_directory_is_searched_recursively_with_ripgreps_ignore_rules() {
    let env = Env::new();
    repo(&env);
    // Skipped: .git, .gitignore, .hidden, .ignore (hidden), bin.dat
    // (binary), debug.log, excluded.txt, local.txt, src/.gitignore (hidden),
    // src/gen (one ignored directory), src/x.tmp.
    assert_eq!(
        grep(&env, json!({"pattern": "needle"})),
        json!({
            "output": "a.txt:1: needle one\nkeep.log:1: needle\nsrc/keep.tmp:1: needle\nsrc/main.c:2: // needle here",
            "count": 4,
            "files_searched": 4,
            "files_skipped": 11
        })
    );
}

#[test]
fn no_ignore_and_hidden_are_rgs_flags() {
    let env = Env::new();
    repo(&env);
    let paths = |args: Value| grep(&env, args)["output"].as_str().unwrap().to_owned();
    assert_eq!(
        paths(json!({"pattern": "needle", "no_ignore": true, "output_mode": "files_with_matches"})),
        "a.txt\ndebug.log\nexcluded.txt\nkeep.log\nlocal.txt\nsrc/gen/out.c\nsrc/keep.tmp\nsrc/main.c\nsrc/x.tmp"
    );
    // `.git` is never searched, even with hidden.
    assert_eq!(
        paths(json!({"pattern": "needle", "hidden": true, "output_mode": "files_with_matches"})),
        ".hidden\na.txt\nkeep.log\nsrc/keep.tmp\nsrc/main.c"
    );
    let both = grep(
        &env,
        json!({"pattern": "needle", "hidden": true, "no_ignore": true, "output_mode": "count"}),
    );
    assert_eq!(
        both,
        json!({
            "output": ".hidden:1\na.txt:1\ndebug.log:1\nexcluded.txt:1\nkeep.log:1\nlocal.txt:1\nsrc/gen/out.c:1\nsrc/keep.tmp:1\nsrc/main.c:1\nsrc/x.tmp:1",
            "count": 10,
            // .gitignore, .ignore, src/.gitignore searched without a match.
            "files_searched": 13,
            // .git, bin.dat
            "files_skipped": 2
        })
    );
}

#[test]
fn gitignore_counts_only_inside_a_git_repository_and_ignore_always() {
    let env = Env::new();
    env.write(".gitignore", "a.txt\n");
    env.write(".ignore", "b.txt\n");
    env.write("a.txt", "needle\n");
    env.write("b.txt", "needle\n");
    let out = grep(&env, json!({"pattern": "needle", "output_mode": "files_with_matches"}));
    assert_eq!(out["output"], "a.txt");
    env.mkdir(".git");
    let out = grep(&env, json!({"pattern": "needle", "output_mode": "files_with_matches"}));
    assert_eq!(out, json!({"output": "", "count": 0, "files_searched": 0, "files_skipped": 5}));
}

#[test]
fn rules_of_the_directories_above_path_apply_and_the_closest_wins() {
    let env = Env::new();
    env.mkdir(".git");
    env.write(".gitignore", "*.gen\nsub/deep/\n");
    env.write("sub/a.gen", "needle\n");
    env.write("sub/deep/b.c", "needle\n");
    env.write("sub/inner/.gitignore", "!*.gen\n");
    env.write("sub/inner/c.gen", "needle\n");
    let out = grep(&env, json!({"pattern": "needle", "path": "sub"}));
    assert_eq!(out["output"], "sub/inner/c.gen:1: needle");
}

#[test]
fn glob_filters_by_name_at_any_depth_or_by_path_below_path() {
    let env = Env::new();
    env.write("a.c", "needle\n");
    env.write("a.h", "needle\n");
    env.write("src/b.c", "needle\n");
    env.write("src/deep/c.c", "needle\n");
    env.write(".d.c", "needle\n");
    let lines = |args: Value| grep(&env, args)["output"].as_str().unwrap().to_owned();
    let files = |glob: &str| {
        lines(json!({"pattern": "needle", "glob": glob, "output_mode": "files_with_matches"}))
    };
    // As `rg -g '*.c'`: the glob names `.d.c`, which is then not hidden.
    assert_eq!(files("*.c"), ".d.c\na.c\nsrc/b.c\nsrc/deep/c.c");
    assert_eq!(files("src/**/*.c"), "src/b.c\nsrc/deep/c.c");
    assert_eq!(files("!*.c"), "a.h");
    assert_eq!(
        lines(json!({"pattern": "needle", "path": "src", "glob": "deep/*.c"})),
        "src/deep/c.c:1: needle"
    );
}

#[test]
fn paths_print_as_rg_prints_them() {
    let env = Env::new();
    env.write("src/main.c", "needle\n");
    let out = |args: Value| grep(&env, args)["output"].as_str().unwrap().to_owned();
    assert_eq!(out(json!({"pattern": "needle"})), "src/main.c:1: needle");
    assert_eq!(out(json!({"pattern": "needle", "path": "."})), "./src/main.c:1: needle");
    assert_eq!(out(json!({"pattern": "needle", "path": "src/"})), "src/main.c:1: needle");
    assert_eq!(out(json!({"pattern": "needle", "path": "src/main.c"})), "src/main.c:1: needle");
}

#[test]
fn a_named_file_is_searched_whatever_the_rules() {
    let env = Env::new();
    env.mkdir(".git");
    env.write(".gitignore", "*.log\n");
    env.write(".h.log", "needle\n");
    assert_eq!(
        grep(&env, json!({"pattern": "needle", "path": ".h.log", "glob": "*.c"})),
        json!({"output": ".h.log:1: needle", "count": 1, "files_searched": 1, "files_skipped": 0})
    );
}

#[test]
fn output_modes() {
    let env = Env::new();
    env.write("a.txt", "x\nneedle\nneedle again\n");
    env.write("b.txt", "nothing\n");
    env.write("c.txt", "needle\n");
    let files = grep(&env, json!({"pattern": "needle", "output_mode": "files_with_matches"}));
    assert_eq!(
        files,
        json!({"output": "a.txt\nc.txt", "count": 2, "files_searched": 3, "files_skipped": 0})
    );
    snapshot("files_with_matches", &files);
    let count = grep(&env, json!({"pattern": "needle", "output_mode": "count"}));
    assert_eq!(
        count,
        json!({"output": "a.txt:2\nc.txt:1", "count": 3, "files_searched": 3, "files_skipped": 0})
    );
    snapshot("count", &count);
    let bad = grep(&env, json!({"pattern": "needle", "output_mode": "lines"}));
    assert_eq!(bad["error_code"], "INVALID_ARG");
}

/// Lines 1..=20, `hit` on 3, 5 and 15.
fn numbered(env: &Env) {
    let text: String = (1..=20)
        .map(|i| if [3, 5, 15].contains(&i) { format!("{i} hit\n") } else { format!("{i}\n") })
        .collect();
    env.write("a.txt", &text);
    env.write("b.txt", "b1\nhit b\n");
}

#[test]
fn context_lines_and_separators_as_rg_c() {
    let env = Env::new();
    numbered(&env);
    let out = grep(&env, json!({"pattern": "hit", "context": 1}));
    assert_eq!(
        out["output"],
        "a.txt-2- 2\na.txt:3: 3 hit\na.txt-4- 4\na.txt:5: 5 hit\na.txt-6- 6\n--\n\
         a.txt-14- 14\na.txt:15: 15 hit\na.txt-16- 16\n--\nb.txt-1- b1\nb.txt:2: hit b"
    );
    assert_eq!(out["count"], 4);
    snapshot("context", &out);
    // before/after override context.
    let out = grep(&env, json!({"pattern": "hit", "context": 5, "before": 0, "after": 1}));
    assert_eq!(
        out["output"],
        "a.txt:3: 3 hit\na.txt-4- 4\na.txt:5: 5 hit\na.txt-6- 6\n--\na.txt:15: 15 hit\na.txt-16- 16\n--\nb.txt:2: hit b"
    );
    let out = grep(&env, json!({"pattern": "hit", "before": 2, "path": "a.txt"}));
    assert_eq!(
        out["output"],
        "a.txt-1- 1\na.txt-2- 2\na.txt:3: 3 hit\na.txt-4- 4\na.txt:5: 5 hit\n--\na.txt-13- 13\na.txt-14- 14\na.txt:15: 15 hit"
    );
}

#[test]
fn case_insensitive_fixed_strings_and_multiline() {
    let env = Env::new();
    env.write("a.txt", "Needle\nneedle\na.b\naxb\nstart\nend\n");
    let out = |args: Value| grep(&env, args)["output"].as_str().unwrap().to_owned();
    assert_eq!(out(json!({"pattern": "needle"})), "a.txt:2: needle");
    assert_eq!(
        out(json!({"pattern": "NEEDLE", "case_insensitive": true})),
        "a.txt:1: Needle\na.txt:2: needle"
    );
    assert_eq!(out(json!({"pattern": "a.b"})), "a.txt:3: a.b\na.txt:4: axb");
    assert_eq!(out(json!({"pattern": "a.b", "fixed_strings": true})), "a.txt:3: a.b");
    assert_eq!(out(json!({"pattern": "(", "fixed_strings": true})), "");
    let single = grep(&env, json!({"pattern": "start\\nend"}));
    assert_eq!(single["error_code"], "INVALID_PATTERN", "as rg without -U");
    let multi = grep(&env, json!({"pattern": "start\\nend", "multiline": true}));
    assert_eq!(
        multi,
        json!({"output": "a.txt:5: start\na.txt:6: end", "count": 2, "files_searched": 1, "files_skipped": 0})
    );
}

#[test]
fn pages_put_together_are_the_whole_answer() {
    let env = Env::new();
    numbered(&env);
    env.write("c.txt", "hit\nhit\n");
    for mode in ["content", "files_with_matches", "count"] {
        let whole = grep(&env, json!({"pattern": "hit", "context": 1, "output_mode": mode}));
        assert!(whole.get("next_offset").is_none());
        let mut lines: Vec<String> = Vec::new();
        let mut offset = 0;
        loop {
            let page = grep(
                &env,
                json!({"pattern": "hit", "context": 1, "output_mode": mode, "offset": offset, "head_limit": 3}),
            );
            assert_eq!(page["count"], whole["count"], "{mode}: count is the whole search's");
            assert_eq!(page["files_searched"], whole["files_searched"]);
            let text = page["output"].as_str().unwrap();
            lines.extend(text.lines().map(str::to_owned));
            match page.get("next_offset") {
                Some(next) => {
                    assert_eq!(text.lines().count(), 3, "{mode}: a full page before the end");
                    offset = next.as_u64().unwrap();
                    assert_eq!(offset as usize, lines.len());
                }
                None => break,
            }
        }
        assert_eq!(lines.join("\n"), whole["output"].as_str().unwrap(), "{mode}");
    }
    // head_limit 0: no limit; an offset past the end: nothing, no next_offset.
    let all = grep(&env, json!({"pattern": "hit"}));
    assert_eq!(grep(&env, json!({"pattern": "hit", "head_limit": 0})), all);
    let past = grep(&env, json!({"pattern": "hit", "offset": 100}));
    assert_eq!(past, json!({"output": "", "count": 6, "files_searched": 3, "files_skipped": 0}));
    let page = grep(&env, json!({"pattern": "hit", "offset": 1, "head_limit": 2}));
    snapshot("page", &page);
    assert_eq!(
        page,
        json!({"output": "a.txt:5: 5 hit\na.txt:15: 15 hit", "count": 6, "files_searched": 3, "files_skipped": 0, "next_offset": 3})
    );
}

#[test]
fn binary_and_unreadable_files_are_skipped_and_counted() {
    let env = Env::new();
    env.write("a.txt", "needle\n");
    env.write("b.bin", b"needle\0\n");
    let mut big = "needle\n".repeat(200_000).into_bytes();
    big.push(0);
    env.write("c.big", &big);
    env.write("secret.txt", "needle\n");
    let _guard = ModeGuard::set(env.path("secret.txt"), 0o000);
    // As root, run as `nobody`, whom the mode keeps out.
    let call = env.cmd("grep").env("IKIGAI_TOOLS_PROFILE", "full").as_nobody();
    let out = call.stdin(json!({"pattern": "needle"}).to_string()).run().json();
    assert_eq!(
        out,
        json!({"output": "a.txt:1: needle", "count": 1, "files_searched": 1, "files_skipped": 3})
    );
}

#[test]
fn errors() {
    let env = Env::new();
    env.write("a.txt", "x\n");
    for name in ["head_limit", "offset", "context", "before", "after"] {
        let out = grep(&env, json!({"pattern": "x", name: -1}));
        assert_eq!(
            out,
            json!({"error": format!("parameter {name} must not be negative, got -1"), "error_code": "INVALID_ARG"})
        );
    }
    assert_eq!(
        grep(&env, json!({"pattern": "x", "path": "missing"})),
        json!({"error": "File not found: missing", "error_code": "FILE_NOT_FOUND"})
    );
    assert_eq!(
        grep(&env, json!({"pattern": "(unclosed"})),
        json!({
            "error": "Invalid pattern: regex parse error: (unclosed ^ error: unclosed group",
            "error_code": "INVALID_PATTERN"
        })
    );
    assert_eq!(grep(&env, json!({"pattern": "x", "glob": "[z"}))["error_code"], "INVALID_PATTERN");
}

#[test]
fn confined_the_walk_reads_and_follows_nothing_outside_the_roots() {
    let env = Env::new();
    // Outside the root: a repository whose .gitignore would hide a.txt,
    // and a directory and a file a link leads to.
    env.mkdir(".git");
    env.write(".gitignore", "a.txt\n");
    env.write("outside/secret.txt", "needle\n");
    env.write("root/a.txt", "needle\n");
    symlink("../outside", env.path("root/out")).unwrap();
    symlink("../outside/secret.txt", env.path("root/secret.txt")).unwrap();
    let root = env.path("root");
    let call = |args: Value| {
        env.cmd("grep")
            .env("IKIGAI_TOOLS_PROFILE", "full")
            .env("IKIGAI_TOOLS_ROOTS", &root)
            .current_dir(&root)
            .stdin(args.to_string())
            .run()
            .json()
    };
    // Unconfined, the .gitignore above is read, as ripgrep reads it.
    let unconfined = env
        .cmd("grep")
        .env("IKIGAI_TOOLS_PROFILE", "full")
        .current_dir(&root)
        .stdin(json!({"pattern": "needle"}).to_string())
        .run()
        .json();
    assert_eq!(
        unconfined,
        json!({"output": "", "count": 0, "files_searched": 0, "files_skipped": 3})
    );
    // Confined, it is not: it lies outside the root. Links are skipped.
    assert_eq!(
        call(json!({"pattern": "needle"})),
        json!({"output": "a.txt:1: needle", "count": 1, "files_searched": 1, "files_skipped": 2})
    );
    assert_eq!(call(json!({"pattern": "needle", "path": ".."}))["error_code"], "PERMISSION_DENIED");
    assert_eq!(
        call(json!({"pattern": "needle", "path": "out"}))["error_code"],
        "PERMISSION_DENIED"
    );
}

#[test]
fn the_seed_profile_answers_as_before() {
    let env = Env::new();
    repo(&env);
    let args =
        json!({"pattern": "needle", "output_mode": "count", "head_limit": 1, "hidden": true});
    // Top level only, no ignore rules, no new fields.
    assert_eq!(
        env.call("grep", args),
        json!({
            "output": "a.txt:1: needle one\ndebug.log:1: needle\nexcluded.txt:1: needle\nkeep.log:1: needle\nlocal.txt:1: needle",
            "count": 5
        })
    );
}

/// A file too large to be read whole (it is searched as a stream) with its
/// only NUL at the end is binary in every mode, also multi-line, where the
/// searcher reads it without looking for one.
#[test]
fn a_nul_at_the_end_of_a_large_file_makes_it_binary_in_every_mode() {
    let env = Env::new();
    let mut big = "lorem ipsum\n".repeat(800_000).into_bytes();
    big.extend_from_slice(b"x\0y\n");
    env.write("big.txt", &big);
    let skipped = json!({"output": "", "count": 0, "files_searched": 0, "files_skipped": 1});
    for args in [
        json!({"pattern": "nothing"}),
        json!({"pattern": "nothing", "multiline": true}),
        json!({"pattern": "foo\\nbar", "multiline": true}),
        json!({"pattern": "lorem", "multiline": true, "output_mode": "count"}),
        json!({"pattern": "lorem", "output_mode": "files_with_matches"}),
        json!({"pattern": "ipsum$", "context": 1, "head_limit": 2}),
    ] {
        assert_eq!(grep(&env, args.clone()), skipped, "{args}");
    }
}
