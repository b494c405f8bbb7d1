//! apply_patch against file_edit: the same random change, written once as a
//! patch in OpenAI's apply_patch format and once as file_edit calls (one a
//! file, its `edits`), applied through the real binary to two copies of the
//! same files, must leave identical bytes.
//!
//! Files: lines drawn from a small vocabulary (so lines repeat), blank
//! lines, lines with trailing spaces or tabs, non-ASCII text, LF or CRLF
//! line endings, each file ending in one (a patch that reaches the last
//! line of a file without a final newline gives it one, as OpenAI's
//! apply_patch does, where file_edit keeps the file as it was: a difference
//! by design, not compared here). Edits: blocks replaced, inserted and deleted, at the start,
//! in the middle and at the end of a file, several to a file, one to three
//! files to a patch. Each hunk carries context lines until its old lines
//! occur once in the file, and each `old_string` once in the text file_edit
//! edits, so that both sides mean the same place; a hunk that reaches the
//! end of the file says `*** End of File` one time in two.
//!
//! Every case is derived from `(seed, case number)` alone. The seed is
//! fixed, printed, and replayed with `IKIGAI_TEST_SEED=…` (decimal or 0x
//! hex); `IKIGAI_PATCH_DIFF_CASES=N` sets how many cases a run makes and
//! `IKIGAI_PATCH_DIFF_ONLY=N` runs case N alone.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{json, Value};

use crate::common::fuzz::{seed_from_env, Length, Rng};
use crate::common::{Env, Ran};

/// The seed when `IKIGAI_TEST_SEED` is not set: fixed, so that every run
/// throws the same cases.
const DEFAULT_SEED: u64 = 0x0a99_1e5a_7c4d_2026;

/// Cases run at once.
const THREADS: usize = 4;

/// The stream of this trial in [`Rng::for_case`].
const STREAM: u64 = 26;

/// The lines a file is made of: repeats, blanks, trailing whitespace,
/// non-ASCII text; none that the patch format could take for a marker.
const VOCABULARY: &[&str] = &[
    "fn main() {",
    "    let x = 1;",
    "    let x = 1;  ",
    "}",
    "",
    "",
    "    ",
    "\treturn x;",
    "// a comment",
    "x",
    "x ",
    "use std::io;",
    "café – \"quoted\" ☕",
    "    if x > 0 {",
    "        x -= 1;",
    "    }",
    "@ not a header",
    "* not a marker",
];

fn seed() -> u64 {
    seed_from_env("IKIGAI_TEST_SEED", DEFAULT_SEED)
}

/// One file of a case: its name, its lines (without endings), its ending.
struct File {
    name: String,
    lines: Vec<String>,
    crlf: bool,
}

impl File {
    fn eol(&self) -> &'static str {
        if self.crlf {
            "\r\n"
        } else {
            "\n"
        }
    }

    fn text(&self, lines: &[String]) -> String {
        lines.iter().map(|l| format!("{l}{}", self.eol())).collect()
    }
}

/// One change to a file: `deleted` lines from `start` give way to `added`.
struct Edit {
    start: usize,
    deleted: usize,
    added: Vec<String>,
}

/// An edit with its context: the hunk `lines[from..to]` of the old file.
struct Hunk {
    from: usize,
    to: usize,
    edit: Edit,
}

fn random_lines(rng: &mut Rng, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| {
            if rng.one_in(6) {
                format!("line {}", rng.below(1000))
            } else {
                rng.pick(VOCABULARY).to_owned()
            }
        })
        .collect()
}

fn random_file(rng: &mut Rng, index: usize) -> File {
    let n = rng.range(1, 40);
    File { name: format!("f{index}.txt"), lines: random_lines(rng, n), crlf: rng.one_in(3) }
}

/// Up to `count` edits in file order, apart from each other by at least
/// one line, so that each hunk can have context of its own.
fn random_edits(rng: &mut Rng, lines: &[String], count: usize) -> Vec<Edit> {
    let len = lines.len();
    let mut edits = Vec::new();
    let mut at = 0;
    for _ in 0..count {
        if at > len {
            break;
        }
        // At the very start or end now and then.
        let start = match rng.below(4) {
            0 => at,
            1 => len,
            _ => rng.range(at, len),
        };
        let room = len - start;
        let mut deleted = if room == 0 { 0 } else { rng.range(0, room.min(4)) };
        let mut added = rng.range(0, 3);
        if deleted == 0 && added == 0 {
            if room > 0 {
                deleted = 1;
            } else {
                added = 1;
            }
        }
        // Never the whole file away: an empty result is a case of its own.
        if deleted == len && added == 0 {
            added = 1;
        }
        let mut added = random_lines(rng, added);
        // A change that changes nothing is refused by file_edit.
        if added[..] == lines[start..start + deleted] {
            added.push(format!("line {}", rng.below(1000)));
        }
        edits.push(Edit { start, deleted, added });
        at = start + deleted + 1;
    }
    edits
}

/// Whether `needle` occurs exactly once in `haystack` as a run of lines.
fn once_as_lines(haystack: &[String], needle: &[String]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).filter(|w| *w == needle).count() == 1
}

/// Whether `needle` occurs exactly once in `text`, overlapping
/// occurrences counted (`a\na\n` is twice in `a\na\na\n`).
fn once_in(text: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let mut found = 0;
    let mut from = 0;
    while let Some(at) = text.get(from..).and_then(|rest| rest.find(needle)) {
        found += 1;
        from += at + needle.chars().next().map_or(1, char::len_utf8);
    }
    found == 1
}

/// The hunks of the edits: each widened by context, a line before and
/// after at a time within the room its neighbours leave, until its old
/// lines occur once in the file and once in `text_before`, the text the
/// file_edit `edits` meet it in (the edits before it applied). An edit that
/// never gets there is dropped.
fn hunks(file: &File, edits: Vec<Edit>) -> Vec<Hunk> {
    let lines = &file.lines;
    let mut kept: Vec<Hunk> = Vec::new();
    let mut current = lines.clone();
    // The shift of line numbers in `current` from the edits kept so far.
    let mut shift: isize = 0;
    let mut floor = 0;
    let count = edits.len();
    let starts: Vec<usize> = edits.iter().map(|e| e.start).collect();
    for (i, edit) in edits.into_iter().enumerate() {
        let ceiling = if i + 1 < count { starts[i + 1] } else { lines.len() };
        let (mut from, mut to) = (edit.start, edit.start + edit.deleted);
        loop {
            let old = &lines[from..to];
            let text = file.text(&current);
            if once_as_lines(lines, old) && once_in(&text, &file.text(old)) {
                break;
            }
            if from == floor && to == ceiling {
                from = usize::MAX;
                break;
            }
            from = from.saturating_sub(1).max(floor);
            to = (to + 1).min(ceiling);
        }
        if from == usize::MAX {
            continue;
        }
        let at = (from as isize + shift) as usize;
        let old_len = to - from;
        let mut new: Vec<String> = lines[from..edit.start].to_vec();
        new.extend(edit.added.iter().cloned());
        new.extend(lines[edit.start + edit.deleted..to].iter().cloned());
        shift += new.len() as isize - old_len as isize;
        current.splice(at..at + old_len, new);
        floor = to;
        kept.push(Hunk { from, to, edit });
    }
    kept
}

/// The patch's section for one file.
fn patch_section(out: &mut String, file: &File, hunks: &[Hunk], rng: &mut Rng) {
    let _ = writeln!(out, "*** Update File: {}", file.name);
    for hunk in hunks {
        out.push_str("@@\n");
        let Hunk { from, to, edit } = hunk;
        for line in &file.lines[*from..edit.start] {
            let _ = writeln!(out, " {line}");
        }
        for line in &file.lines[edit.start..edit.start + edit.deleted] {
            let _ = writeln!(out, "-{line}");
        }
        for line in &edit.added {
            let _ = writeln!(out, "+{line}");
        }
        for line in &file.lines[edit.start + edit.deleted..*to] {
            let _ = writeln!(out, " {line}");
        }
        if *to == file.lines.len() && rng.one_in(2) {
            out.push_str("*** End of File\n");
        }
    }
}

/// file_edit's `edits` for one file: each hunk's old lines and new lines,
/// with the file's line ending.
fn file_edits(file: &File, hunks: &[Hunk]) -> Value {
    let edits: Vec<Value> = hunks
        .iter()
        .map(|Hunk { from, to, edit }| {
            let old = file.text(&file.lines[*from..*to]);
            let mut new_lines: Vec<String> = file.lines[*from..edit.start].to_vec();
            new_lines.extend(edit.added.iter().cloned());
            new_lines.extend(file.lines[edit.start + edit.deleted..*to].iter().cloned());
            json!({"old_string": old, "new_string": file.text(&new_lines)})
        })
        .collect();
    json!(edits)
}

/// A case: its files, the patch, each file's edits and what each edited
/// file should hold (the generator's own account, checked by
/// `apply_patch_differential_cases_are_well_formed`).
struct Case {
    files: Vec<File>,
    patch: String,
    edits: Vec<(String, Value)>,
    expected: Vec<String>,
}

/// The file's text with the hunks' edits made, line by line.
fn edited_text(file: &File, hunks: &[Hunk]) -> String {
    let mut lines = Vec::new();
    let mut at = 0;
    for Hunk { edit, .. } in hunks {
        lines.extend(file.lines[at..edit.start].iter().cloned());
        lines.extend(edit.added.iter().cloned());
        at = edit.start + edit.deleted;
    }
    lines.extend(file.lines[at..].iter().cloned());
    file.text(&lines)
}

fn make_case(seed: u64, number: u64) -> Option<Case> {
    let mut rng = Rng::for_case(seed, STREAM, number);
    let mut files = Vec::new();
    let mut patch = String::from("*** Begin Patch\n");
    let mut edits = Vec::new();
    let mut expected = Vec::new();
    for index in 0..rng.range(1, 3) {
        let file = random_file(&mut rng, index);
        let count = rng.range(1, 4);
        let hunks = hunks(&file, random_edits(&mut rng, &file.lines, count));
        if !hunks.is_empty() {
            patch_section(&mut patch, &file, &hunks, &mut rng);
            edits.push((file.name.clone(), file_edits(&file, &hunks)));
        }
        expected.push(edited_text(&file, &hunks));
        files.push(file);
    }
    patch.push_str("*** End Patch\n");
    (!edits.is_empty()).then_some(Case { files, patch, edits, expected })
}

fn write_files(env: &Env, dir: &str, files: &[File]) {
    for file in files {
        env.write(&format!("{dir}/{}", file.name), file.text(&file.lines));
    }
}

fn read_files(dir: &Path, files: &[File]) -> Vec<(String, Vec<u8>)> {
    files
        .iter()
        .map(|f| (f.name.clone(), std::fs::read(dir.join(&f.name)).unwrap_or_default()))
        .collect()
}

/// Whether a call failed: its exit status, or an answer that is not an
/// object without `error`.
fn failed(ran: &Ran) -> bool {
    let answer = serde_json::from_slice::<Value>(&ran.stdout);
    ran.code != Some(0) || answer.map_or(true, |a| !a.is_object() || a.get("error").is_some())
}

/// Runs one case; a difference or a failed call is the message that says
/// how to replay it.
fn run_case(env: &Env, seed: u64, number: u64) -> Result<bool, String> {
    let Some(case) = make_case(seed, number) else {
        return Ok(false);
    };
    let (by_patch, by_edit) = (format!("{number}/patch"), format!("{number}/edit"));
    write_files(env, &by_patch, &case.files);
    write_files(env, &by_edit, &case.files);
    let replay = format!("IKIGAI_TEST_SEED={seed:#x} IKIGAI_PATCH_DIFF_ONLY={number}");

    let ran = env
        .cmd("apply_patch")
        .env("IKIGAI_TOOLS_PROFILE", "full")
        .current_dir(env.path(&by_patch))
        .stdin(json!({"input": case.patch}).to_string())
        .run();
    if failed(&ran) {
        return Err(format!(
            "case {number} ({replay}): apply_patch failed: {}\n{}\npatch:\n{}",
            ran.stdout_text(),
            ran.stderr,
            case.patch
        ));
    }
    for (name, edits) in &case.edits {
        let args = json!({"file_path": name, "edits": edits});
        let ran = env
            .cmd("file_edit")
            .env("IKIGAI_TOOLS_PROFILE", "full")
            .current_dir(env.path(&by_edit))
            .stdin(args.to_string())
            .run();
        if failed(&ran) {
            return Err(format!(
                "case {number} ({replay}): file_edit failed: {}\nargs: {args}",
                ran.stdout_text()
            ));
        }
    }
    let patched = read_files(&env.path(&by_patch), &case.files);
    let edited = read_files(&env.path(&by_edit), &case.files);
    for ((name, p), (_, e)) in patched.iter().zip(&edited) {
        if p != e {
            return Err(format!(
                "case {number} ({replay}): {name} differs\napply_patch: {:?}\nfile_edit:   {:?}\npatch:\n{}",
                String::from_utf8_lossy(p),
                String::from_utf8_lossy(e),
                case.patch
            ));
        }
    }
    Ok(true)
}

fn trial(length: Length) {
    let seed = seed();
    let cases = length.count("IKIGAI_PATCH_DIFF_CASES", 300, 5000) as u64;
    let only = std::env::var("IKIGAI_PATCH_DIFF_ONLY").ok().and_then(|n| n.trim().parse().ok());
    let numbers: Vec<u64> = match only {
        Some(n) => vec![n],
        None => (0..cases).collect(),
    };
    println!("apply_patch differential: seed {seed:#x}, {} cases", numbers.len());
    let env = Env::new();
    // The links first: made from several threads at once, two would collide.
    env.link("apply_patch");
    env.link("file_edit");
    // Most of a call's time is the writer's fsync: the cases run on a few
    // threads, each failure kept with its case number.
    let next = AtomicUsize::new(0);
    let mut results: Vec<(u64, Result<bool, String>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    while let Some(&number) = numbers.get(next.fetch_add(1, Ordering::Relaxed)) {
                        done.push((number, run_case(&env, seed, number)));
                    }
                    done
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });
    results.sort_by_key(|(number, _)| *number);
    let ran = results.iter().filter(|(_, r)| matches!(r, Ok(true))).count();
    let failures: Vec<String> = results.into_iter().filter_map(|(_, r)| r.err()).collect();
    println!("apply_patch differential: {ran} cases compared, {} differ or failed", failures.len());
    // A few are enough to read; the rest would only repeat.
    let shown = failures.iter().take(3).cloned().collect::<Vec<_>>().join("\n\n");
    assert!(failures.is_empty(), "seed {seed:#x}:\n{shown}");
    assert!(ran > 0, "no case ran");
}

#[test]
fn apply_patch_leaves_the_same_bytes_as_file_edit_on_random_changes() {
    trial(Length::Short);
}

#[test]
#[ignore = "long trial (5000 cases), run by .ci/run"]
fn apply_patch_leaves_the_same_bytes_as_file_edit_on_random_changes_long() {
    trial(Length::Long);
}

/// The generator itself: each file's `edits`, made as file_edit makes them
/// (each `old_string` found once in the text the edits before it left, and
/// replaced), give the text the edits were drawn to make.
#[test]
fn apply_patch_differential_cases_are_well_formed() {
    let seed = seed();
    let mut made = 0;
    for number in 0..300 {
        let Some(case) = make_case(seed, number) else { continue };
        made += 1;
        assert!(case.patch.starts_with("*** Begin Patch\n*** Update File: "), "{number}");
        assert!(case.patch.ends_with("*** End Patch\n"), "{number}");
        for (file, expected) in case.files.iter().zip(&case.expected) {
            let mut text = file.text(&file.lines);
            if let Some((_, edits)) = case.edits.iter().find(|(name, _)| *name == file.name) {
                for edit in edits.as_array().unwrap() {
                    let old = edit["old_string"].as_str().unwrap();
                    assert!(once_in(&text, old), "case {number}: {old:?} not once in {text:?}");
                    text = text.replacen(old, edit["new_string"].as_str().unwrap(), 1);
                }
            }
            assert_eq!(text, *expected, "case {number}, {}", file.name);
        }
    }
    assert!(made > 250, "only {made} of 300 cases made");
}
