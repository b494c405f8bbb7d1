//! glob: pattern syntax, the dotfile rule, how results are spelled and
//! sorted, what the walk enters, and its errors.

use crate::common;
use common::fuzz;
use common::*;

use std::os::unix::fs::symlink;

use serde_json::{json, Value};

fn glob(env: &Env, args: Value) -> Value {
    env.call("glob", args)
}

fn answer(paths: &[&str]) -> Value {
    json!({"output": paths.join("\n"), "count": paths.len()})
}

/// `Invalid glob pattern: WHY`.
fn invalid_pattern(why: &str) -> Value {
    json!({"error": format!("Invalid glob pattern: {why}"), "error_code": "INVALID_PATTERN"})
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
    let _locked = ModeGuard::set(env.path("locked"), 0o311);
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
    let _secret = ModeGuard::set(env.path("a/secret"), 0o000);
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
    let _src = ModeGuard::set(env.path("src"), 0o000);
    let ran = env.cmd("glob").stdin(r#"{"pattern":"**/*.h"}"#).as_nobody().run();
    assert_eq!(ran.json(), answer(&["B.h", "include/api.h"]));
}

#[test]
fn malformed_patterns_are_invalid_pattern() {
    let env = tree();
    // What is wrong, and where (in characters, from 0).
    for (pattern, why) in [
        ("[a", "unclosed '[' at position 0"),
        ("{a", "unclosed '{' at position 0"),
        ("a}", r"'}' at position 1 closes no '{' (escape it as '\}')"),
        ("src/{main,util", "unclosed '{' at position 4"),
        ("*.[", "unclosed '[' at position 2"),
        (r"a\", r"'\' at position 1 ends the pattern and escapes nothing"),
        (r"a\/b", r"'\' at position 1 escapes '/', which separates names and cannot be escaped"),
        ("[z-a]", "invalid range 'z-a' at position 1 ('z' comes after 'a')"),
        ("ok/[x/*.c", "unclosed '[' at position 3"),
        ("src/[/]", "the '[' at position 4 holds a '/', which no name contains"),
        ("é/ü/[", "unclosed '[' at position 4"),
    ] {
        assert_eq!(glob(&env, json!({"pattern": pattern})), invalid_pattern(why), "{pattern}");
    }
    // Checked before the walk: a path that does not exist changes nothing.
    assert_eq!(
        glob(&env, json!({"pattern": "[a", "path": "missing"})),
        invalid_pattern("unclosed '[' at position 0")
    );
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
    let want = answer::bounded_lines(whole.as_bytes(), 1024, answer::narrow_glob);
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

/// A break found by attack: a glob of 87,380 `*` made globset panic (exit 101,
/// 437 KB on stderr), and so did 150,000 `?` and grep's `glob` parameter.
/// Now each is refused with `INVALID_PATTERN`, saying what is too large, as
/// grep's regex is; the longest pattern accepted is answered.
#[test]
fn a_glob_of_87380_stars_is_refused_not_a_panic() {
    let env = tree();
    let too_long = |n: usize| {
        json!({
            "error": format!(
                "Invalid glob pattern: pattern is {n} bytes long, at most 8192 are accepted"
            ),
            "error_code": "INVALID_PATTERN"
        })
    };
    for (link, args, n) in [
        ("glob", json!({"pattern": "*".repeat(87_380)}), 87_380),
        ("glob", json!({"pattern": "?".repeat(150_000)}), 150_000),
        ("grep", json!({"pattern": "x", "glob": "*".repeat(87_380)}), 87_380),
        ("grep", json!({"pattern": "x", "glob": "?".repeat(150_000)}), 150_000),
    ] {
        let ran = env.run(link, &args.to_string());
        assert_eq!((ran.code, ran.signal), (Some(0), None), "{link}: {}", ran.stderr.len());
        assert_eq!(ran.json(), too_long(n), "{link}");
        assert_eq!(ran.stderr, "", "{link}");
    }
    // 8,192 bytes is answered: every `*` compiled into one component.
    let stars = glob(&env, json!({"pattern": "*".repeat(8192)}));
    assert_eq!(stars, answer(&["B.h", "a.c", "ab.c", "b.c", "include", "notes.txt", "src"]));
    let marks = glob(&env, json!({"pattern": format!("{}.c", "?".repeat(8190))}));
    assert_eq!(marks, answer(&[]));
}

/// Pattern shapes thrown at glob, and at grep's `glob`: long runs of each
/// wildcard, long and nested `{a,b,…}` alternations, `[` classes, `**`
/// chains, escapes, all mixed. Every one is answered or refused with
/// `INVALID_PATTERN` (or, absolute and so run confined, outside the
/// fixture: `PERMISSION_DENIED`): exit 0, one JSON object, nothing on
/// stderr, well within a host's 30 s. Seeded (`IKIGAI_FUZZ_SEED`, printed), and
/// `IKIGAI_FUZZ_CASES` sets the count.
fn random_patterns(length: fuzz::Length) {
    use common::fuzz::{self as f, Rng};
    use common::procs::{self, Watchdog};
    let random_seed = f::random_seed();
    let cases = length.count("IKIGAI_FUZZ_CASES", 100, 3000);
    let env = tree();
    let links = [env.link("glob"), env.link("grep")];
    let dog = Watchdog::new(std::time::Duration::from_secs(20));
    let results = procs::parallel(cases, 2, |i| {
        let mut rng = Rng::for_case(random_seed, procs::fnv1a(b"glob patterns"), i as u64);
        let pattern = random_pattern(&mut rng);
        let (link, args) = if rng.one_in(3) {
            (1, json!({"pattern": "a", "glob": pattern}))
        } else {
            (0, json!({"pattern": pattern}))
        };
        let mut cmd = procs::tool_command(&links[link], &env.work(), false);
        // An absolute pattern would walk the whole machine (`/**`, /proc
        // included), which is slow, not broken: it runs confined to the
        // fixture, where one outside is refused before anything is read.
        let absolute = ["{/", ",/"].iter().any(|a| pattern.contains(a)) || pattern.starts_with('/');
        if absolute {
            cmd.env("IKIGAI_TOOLS_ROOTS", env.work());
        }
        let link = ["glob", "grep"][link];
        let ran = procs::run_watched(cmd, Some(args.to_string().as_bytes()), &dog);
        let verdict = (|| {
            if ran.hung || ran.signal.is_some() || ran.code != Some(0) {
                return Err(format!(
                    "hung {} signal {:?} exit {:?}",
                    ran.hung, ran.signal, ran.code
                ));
            }
            if !ran.stderr.is_empty() {
                return Err(format!("stderr: {}", f::preview(&ran.stderr)));
            }
            let v: Value = serde_json::from_slice(&ran.stdout).map_err(|e| e.to_string())?;
            match v.get("error_code") {
                None if v.get("count").is_some() => Ok("answered"),
                Some(code) if code == "INVALID_PATTERN" => Ok("refused"),
                Some(code) if absolute && code == "PERMISSION_DENIED" => Ok("refused"),
                _ => Err(format!("answer: {}", f::preview(&ran.stdout))),
            }
        })();
        let shown = format!("case {i} {link} {}", f::preview(pattern.as_bytes()));
        (verdict.map_err(|why| format!("{shown}: {why}")), (ran.elapsed, shown))
    });
    let (slowest, slowest_case) =
        results.iter().map(|(_, e)| e).max_by_key(|(e, _)| *e).cloned().unwrap_or_default();
    let answered =
        results.iter().filter(|(v, _)| v.as_ref().is_ok_and(|k| *k == "answered")).count();
    let failures: Vec<&String> = results.iter().filter_map(|(v, _)| v.as_ref().err()).collect();
    println!(
        "glob patterns: IKIGAI_FUZZ_SEED={random_seed} IKIGAI_FUZZ_CASES={cases}: {} failed, {answered} \
         answered, the rest refused; slowest {:.2} s ({slowest_case:.300})",
        failures.len(),
        slowest.as_secs_f64()
    );
    assert!(failures.is_empty(), "replay: IKIGAI_FUZZ_SEED={random_seed}\n{failures:#?}");
}

/// One pattern of the shapes above, up to about 160 KB.
fn random_pattern(rng: &mut fuzz::Rng) -> String {
    let pieces = [
        "*",
        "?",
        "**",
        "**/",
        "/",
        "[a-z]",
        "[!a]",
        "[",
        "]",
        "[]]",
        "{",
        "}",
        ",",
        "{a,b}",
        "\\",
        "\\*",
        "a",
        "src",
        ".",
        ".c",
        "é",
        "[é-ü]",
        "{,}",
        "*.{c,h}",
        "[[:alpha:]]",
        "[z-a]",
    ];
    let mut pattern = String::new();
    for _ in 0..rng.range(1, 4) {
        match rng.below(6) {
            // A run of one piece, short or very long.
            0 => {
                let n = match rng.below(6) {
                    0 | 1 => rng.range(8192, 160_000),
                    2 => rng.range(1000, 8000),
                    _ => rng.range(1, 200),
                };
                pattern.push_str(&rng.pick(&pieces).repeat(n));
            }
            // A long alternation.
            1 => {
                let n = if rng.one_in(4) { rng.range(1000, 6000) } else { rng.range(2, 800) };
                let items: Vec<String> =
                    (0..n).map(|k| format!("{}{k}", rng.pick(&pieces))).collect();
                pattern.push_str(&format!("{{{}}}", items.join(",")));
            }
            // Nested braces.
            2 => {
                let depth = rng.range(1, 60);
                pattern.push_str(&"{a,".repeat(depth));
                pattern.push_str(&"b}".repeat(depth));
            }
            // Alternations one after another: their product.
            3 => pattern.push_str(&"{a,b,c}".repeat(rng.range(1, 12))),
            // A `**` chain.
            4 => pattern.push_str(&"**/".repeat(rng.range(1, 3000))),
            _ => {
                for _ in 0..rng.range(1, 30) {
                    pattern.push_str(rng.pick(&pieces));
                }
            }
        }
    }
    pattern
}

#[test]
fn random_patterns_are_answered_or_refused() {
    random_patterns(fuzz::Length::Short);
}

#[test]
#[ignore = "long trial (3,000 patterns), run by .ci/run"]
fn random_patterns_are_answered_or_refused_long() {
    random_patterns(fuzz::Length::Long);
}

/// A chain of directories named `d`, `depth` deep under `top`, with a file
/// `name` at each depth in `files`: made and removed by descriptors, since
/// its paths pass PATH_MAX.
struct DeepTree {
    top: std::path::PathBuf,
    depth: usize,
}

impl DeepTree {
    fn new(top: std::path::PathBuf, depth: usize, files: &[(usize, &str)]) -> DeepTree {
        use rustix::fs::{mkdirat, openat, Mode, OFlags, CWD};
        let flags = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC;
        let mut dir = openat(CWD, &top, flags, Mode::empty()).expect("open the top");
        for level in 0..=depth {
            for (_, name) in files.iter().filter(|(at, _)| *at == level) {
                let file = OFlags::CREATE | OFlags::WRONLY | OFlags::CLOEXEC;
                let fd = openat(&dir, *name, file, Mode::from_raw_mode(0o644)).expect("create");
                rustix::io::write(&fd, b"x\n").expect("write");
            }
            if level < depth {
                mkdirat(&dir, "d", Mode::from_raw_mode(0o755)).expect("mkdir d");
                dir = openat(&dir, "d", flags, Mode::empty()).expect("open d");
            }
        }
        DeepTree { top, depth }
    }
}

impl Drop for DeepTree {
    fn drop(&mut self) {
        use rustix::fs::{openat, unlinkat, AtFlags, Mode, OFlags, CWD};
        let flags = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC;
        let Ok(mut dir) = openat(CWD, &self.top, flags, Mode::empty()) else { return };
        for _ in 0..self.depth {
            match openat(&dir, "d", flags, Mode::empty()) {
                Ok(below) => dir = below,
                Err(_) => break,
            }
        }
        // From the bottom up: each directory's files, then it.
        loop {
            for entry in rustix::fs::Dir::read_from(&dir).into_iter().flatten().flatten() {
                let name = entry.file_name().to_owned();
                if entry.file_type() == rustix::fs::FileType::RegularFile {
                    let _ = unlinkat(&dir, name.as_c_str(), AtFlags::empty());
                }
            }
            let Ok(up) = openat(&dir, "..", flags, Mode::empty()) else { return };
            if unlinkat(&up, "d", AtFlags::REMOVEDIR).is_err() {
                return; // back at the top
            }
            dir = up;
        }
    }
}

/// Found while trying pattern shapes for the globset panic: confined, the
/// walk goes by descriptors and so has no PATH_MAX to stop it, and `**`
/// over a directory 5,000 deep overflowed the stack (SIGABRT, no answer).
/// The walk enters at most 1,024 levels below where it starts.
#[test]
fn a_directory_5000_deep_is_walked_to_1024_levels_not_a_stack_overflow() {
    let env = Env::new();
    let top = env.mkdir("deep");
    let _tree = DeepTree::new(top, 5000, &[(1000, "near.c"), (5000, "far.c")]);
    let near = format!("deep/{}near.c", "d/".repeat(1000));
    for (link, args) in [
        ("glob", json!({"pattern": "deep/**/*.c"})),
        ("grep", json!({"pattern": "x", "glob": "deep/**/*.c"})),
    ] {
        let ran = env.cmd(link).env("IKIGAI_TOOLS_ROOTS", env.work()).stdin(args.to_string()).run();
        assert_eq!((ran.code, ran.signal), (Some(0), None), "{link}: {:.300}", ran.stderr);
        let v = ran.json();
        assert_eq!(v["count"], 1, "{link}: {:.300}", v["output"]);
        let output = v["output"].as_str().expect("output");
        let expected = if link == "glob" { near.clone() } else { format!("{near}:1: x") };
        assert_eq!(output, expected, "{link}");
    }
}
