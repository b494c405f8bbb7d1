//! grep in the full profile (docs/TOOLS.md, grep, "Full profile"): the
//! recursive walk and ripgrep's ignore rules, every parameter, the output
//! modes, context, paging, the file counts, confinement, the errors, and
//! that the seed profile answers as before.

use crate::common;
use common::procs;
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
        json!({"error": format!("File not found: missing{}", env.looked_for("missing")),
               "error_code": "FILE_NOT_FOUND"})
    );
    assert_eq!(
        grep(&env, json!({"pattern": "(unclosed"})),
        json!({
            "error": "Invalid pattern: regex parse error: unclosed group: the '(' at position 0",
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

/// One request for both profiles: the parameters are read in one order and
/// the regex is checked before the glob (as rg does), so a call with two
/// faults is told the same first one in either profile.
#[test]
fn both_profiles_report_the_same_first_fault() {
    let env = Env::new();
    let regex_error = json!({
        "error": "Invalid pattern: regex parse error: unclosed counted repetition: the '{' at position 1",
        "error_code": "INVALID_PATTERN"
    });
    let path_error =
        json!({"error": "parameter path must be a string", "error_code": "INVALID_ARG"});
    for (args, first) in [
        (json!({"pattern": "a{", "glob": "[x"}), &regex_error),
        (json!({"pattern": "a{", "glob": "*.{c"}), &regex_error),
        (json!({"pattern": "x", "glob": 1, "path": 1}), &path_error),
    ] {
        assert_eq!(&env.call("grep", args.clone()), first, "seed: {args}");
        assert_eq!(&grep(&env, args.clone()), first, "full: {args}");
    }
}

#[test]
fn the_seed_profile_answers_as_before() {
    let env = Env::new();
    repo(&env);
    let args =
        json!({"pattern": "needle", "output_mode": "count", "head_limit": 1, "hidden": true});
    // The full profile's parameters are refused (ignored before Reshape III).
    assert_eq!(env.call("grep", args), full_only("output_mode", "grep"));
    // Top level only, no ignore rules, no new fields.
    assert_eq!(
        env.call("grep", json!({"pattern": "needle"})),
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

/// What a full-profile call of `link` answers, and the tool's own peak
/// resident memory (`ru_maxrss`, measured from a small helper process:
/// tests/common/procs.rs, `Measured`).
pub(crate) fn answer_and_peak(env: &Env, link: &str, args: Value) -> (Value, u64) {
    let run = procs::Measured::start(
        &env.link(link),
        &env.work(),
        args.to_string().as_bytes(),
        &[("IKIGAI_TOOLS_PROFILE", Some("full")), ("IKIGAI_TOOLS_MAX_OUTPUT", None)],
    );
    let report = run.finish();
    assert_eq!(report.reaped.code, Some(0), "{report:?}");
    let answer = serde_json::from_slice(&report.stdout).expect("one JSON object");
    (answer, report.reaped.max_rss)
}

/// Far below what the hostile ignore files below cost before they were
/// bounded (1.25 GB for the huge one, 650 MB for the long line), far above
/// what a debug build of the tool takes with or without them (about
/// 20 MiB).
pub(crate) const IGNORE_PEAK_MAX: u64 = 64 << 20;

/// A `.gitignore` of 760,000 paths (14 MB), then `last`, the one pattern
/// that would hide a file of the test's.
pub(crate) fn huge_gitignore(last: &str) -> String {
    let mut huge = String::with_capacity(15 << 20);
    for i in 0..760_000 {
        huge.push_str(&format!("/gen/file-{i:06}.c\n"));
    }
    huge.push_str(last);
    huge.push('\n');
    huge
}

/// A `.gitignore` of 760,000 patterns (14 MB; a cloned repository can carry
/// one, and it cost 1.25 GB and 4 s, or 7 to 14 GB and minutes in other
/// shapes) is not read: it is named in the answer, and what it would
/// leave out is searched (more, never fewer files).
#[test]
fn a_huge_gitignore_is_skipped_and_named_in_the_answer() {
    let env = Env::new();
    env.mkdir(".git");
    let huge = huge_gitignore("*.log");
    env.write(".gitignore", &huge);
    env.write("a.txt", "needle\n");
    env.write("debug.log", "needle\n");
    let (answer, peak) = answer_and_peak(&env, "grep", json!({"pattern": "needle"}));
    assert_eq!(
        answer,
        json!({
            "output": "a.txt:1: needle\ndebug.log:1: needle",
            "count": 2,
            // a.txt, debug.log, and the hidden .gitignore: a skipped file
            // may have re-included hidden names, so they are searched.
            "files_searched": 3,
            "files_skipped": 1,
            "ignore_files_skipped": [format!(".gitignore: {} bytes, more than 65536", huge.len())]
        })
    );
    assert!(peak < IGNORE_PEAK_MAX, "peak {} MiB", peak >> 20);
}

/// One line of 1 MiB of `*a` cost 650 MB once compiled: the file is over
/// the size bound, skipped and named. A line over 4096 bytes in a small
/// file skips its file too.
#[test]
fn a_gitignore_with_a_megabyte_line_is_skipped() {
    let env = Env::new();
    env.mkdir(".git");
    let line = format!("{}\n", "*a".repeat(512 * 1024));
    env.write(".gitignore", &line);
    env.write("a.txt", "needle\n");
    let (answer, peak) = answer_and_peak(&env, "grep", json!({"pattern": "needle"}));
    assert_eq!(
        answer,
        json!({
            "output": "a.txt:1: needle",
            "count": 1,
            "files_searched": 2,
            "files_skipped": 1,
            "ignore_files_skipped": [".gitignore: 1048577 bytes, more than 65536"]
        })
    );
    assert!(peak < IGNORE_PEAK_MAX, "peak {} MiB", peak >> 20);
    // Above the start, the file is named by its absolute path.
    env.write("sub/b.txt", "needle\n");
    let top = env.work().canonicalize().unwrap().join(".gitignore");
    assert_eq!(
        grep(&env, json!({"pattern": "needle", "path": "sub"})),
        json!({
            "output": "sub/b.txt:1: needle",
            "count": 1,
            "files_searched": 1,
            "files_skipped": 0,
            "ignore_files_skipped": [format!("{}: 1048577 bytes, more than 65536", top.display())]
        })
    );
    env.write(".gitignore", format!("*.log\n{}\n", "*a".repeat(2049)));
    env.write("debug.log", "needle\n");
    assert_eq!(
        grep(&env, json!({"pattern": "needle", "path": "."})),
        json!({
            "output": "./a.txt:1: needle\n./debug.log:1: needle\n./sub/b.txt:1: needle",
            "count": 3,
            "files_searched": 4,
            "files_skipped": 1,
            "ignore_files_skipped": ["./.gitignore: line 2 is 4098 bytes long, more than 4096"]
        })
    );
}

/// Each bound, and what a skipped file means: it is taken as re-including
/// everything below its directory, so the rules farther out do not hide
/// what it might have kept, and hidden names below it are searched.
#[test]
fn ignore_files_over_each_bound_are_skipped_and_hide_nothing() {
    let env = Env::new();
    env.mkdir(".git");
    env.write(".gitignore", "*.log\n");
    env.write("debug.log", "needle\n");
    // More than 8192 patterns (each line one).
    let many: String = (0..8193).map(|i| format!("/x{i}\n")).collect();
    env.write("many/.gitignore", &many);
    env.write("many/keep.log", "needle\n");
    env.write("many/.hidden", "needle\n");
    // Nine ignore files on one path: the ninth is one too many at once.
    let mut deep = String::from("deep");
    for level in 1..=8 {
        deep.push_str(&format!("/d{level}"));
        env.write(&format!("{deep}/.gitignore"), "*.tmp\n");
    }
    env.write(&format!("{deep}/keep.log"), "needle\n");
    // Three files of 49,992 bytes (a pattern, then a long comment) on one
    // path: more than 131072 bytes at once.
    let padded = |pattern: &str| format!("{pattern}\n#{}\n", "-".repeat(49_984));
    env.write("wide/.gitignore", padded("*.tmp"));
    env.write("wide/a/.gitignore", padded("*.bak"));
    env.write("wide/a/b/.gitignore", padded("*.old"));
    env.write("wide/a/b/keep.log", "needle\n");
    // 8000 patterns each in three directories side by side: the third
    // would take the walk past 20,000 patterns.
    let some: String = (0..8000).map(|i| format!("/y{i:05}\n")).collect();
    for dir in ["walk/a", "walk/b", "walk/c"] {
        env.write(&format!("{dir}/.gitignore"), &some);
        env.write(&format!("{dir}/keep.log"), "needle\n");
    }
    let answer = grep(&env, json!({"pattern": "needle", "output_mode": "files_with_matches"}));
    assert_eq!(
        answer,
        json!({
            "output": "deep/d1/d2/d3/d4/d5/d6/d7/d8/keep.log\nmany/.hidden\nmany/keep.log\nwalk/c/keep.log\nwide/a/b/keep.log",
            "count": 5,
            // The files above, and the hidden .gitignore beside each of
            // them; skipped: .git, .gitignore and debug.log, the seven
            // .gitignore that apply in deep/, walk/a and walk/b (.gitignore
            // and keep.log), wide/.gitignore and wide/a/.gitignore.
            "files_searched": 9,
            "files_skipped": 16,
            "ignore_files_skipped": [
                "deep/d1/d2/d3/d4/d5/d6/d7/d8/.gitignore: 8 ignore files already apply here, the most at once",
                "many/.gitignore: more than 8192 patterns",
                "walk/c/.gitignore: the ignore files read before it hold 16008 patterns, 128048 bytes: at most 20000 patterns and 1048576 bytes in one call",
                "wide/a/b/.gitignore: 49992 bytes, beside the 99990 of the ignore files that apply here: more than 131072 at once"
            ]
        })
    );
    // Without the ignore files nothing is read or skipped.
    let answer =
        grep(&env, json!({"pattern": "needle", "no_ignore": true, "output_mode": "count"}));
    assert!(answer.get("ignore_files_skipped").is_none(), "{answer}");
}

/// The files named are at most ten, then a count, and the field stays
/// within the output limit with the rest of the answer: fewer named, at
/// least the count.
#[test]
fn the_ignore_files_skipped_are_named_within_the_output_limit() {
    let env = Env::new();
    env.mkdir(".git");
    let long_line = format!("{}\n", "x".repeat(4097));
    let dirs: Vec<String> = (0..12).map(|i| format!("{}{i:02}", "d".repeat(100))).collect();
    for dir in &dirs {
        env.write(&format!("{dir}/.gitignore"), &long_line);
        env.write(&format!("{dir}/a.txt"), "needle\n");
    }
    let why = ".gitignore: line 1 is 4097 bytes long, more than 4096";
    let mut named: Vec<Value> = dirs.iter().take(10).map(|d| json!(format!("{d}/{why}"))).collect();
    named.push(json!("2 more ignore files skipped"));
    let answer = grep(&env, json!({"pattern": "needle", "output_mode": "count"}));
    assert_eq!(answer["ignore_files_skipped"], Value::Array(named), "{answer}");
    for limit in [1024, 2048] {
        let ran = env
            .cmd("grep")
            .env("IKIGAI_TOOLS_PROFILE", "full")
            .env("IKIGAI_TOOLS_MAX_OUTPUT", limit.to_string())
            .stdin(json!({"pattern": "needle", "output_mode": "count"}).to_string())
            .run();
        assert!(ran.stdout.len() <= limit, "{limit}: {} bytes", ran.stdout.len());
        let answer = ran.json();
        let list = answer["ignore_files_skipped"].as_array().expect("the field").clone();
        let (last, names) = list.split_last().expect("not empty");
        let more = if names.is_empty() { "" } else { "more " };
        assert_eq!(last, &json!(format!("{} {more}ignore files skipped", 12 - names.len())));
        for (name, dir) in names.iter().zip(&dirs) {
            assert_eq!(name, &json!(format!("{dir}/{why}")));
        }
    }
}
