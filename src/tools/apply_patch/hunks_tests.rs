use super::*;
use crate::tools::apply_patch::parse::{parse, FileOp};

/// The chunks of a one-file Update patch whose body (after the Update
/// line) is `body`.
fn chunks(body: &str) -> Vec<Chunk> {
    let patch = format!("*** Begin Patch\n*** Update File: f\n{body}\n*** End Patch");
    match parse(&patch).unwrap().ops.as_slice() {
        [FileOp::Update { chunks, .. }] => chunks.clone(),
        other => panic!("{other:?}"),
    }
}

fn applied(old: &str, body: &str) -> String {
    match apply(old, &chunks(body)) {
        Ok(new) => new,
        Err(e) => panic!("{}", e.message("f")),
    }
}

fn failure(old: &str, body: &str) -> NoMatch {
    match apply(old, &chunks(body)) {
        Ok(new) => panic!("applied: {new:?}"),
        Err(e) => e,
    }
}

#[test]
fn a_chunk_replaces_its_old_lines() {
    assert_eq!(applied("a\nb\nc\n", "@@\n a\n-b\n+B\n c"), "a\nB\nc\n");
}

#[test]
fn chunks_apply_in_order_each_after_the_previous() {
    let old = "x\ny\nx\ny\n";
    assert_eq!(applied(old, "@@\n-x\n+1\n@@\n-x\n+2"), "1\ny\n2\ny\n");
}

#[test]
fn a_context_header_places_the_chunk_after_it() {
    let old = "fn a() {\n    body();\n}\nfn b() {\n    body();\n}\n";
    assert_eq!(
        applied(old, "@@ fn b() {\n-    body();\n+    other();"),
        "fn a() {\n    body();\n}\nfn b() {\n    other();\n}\n"
    );
}

#[test]
fn stacked_headers_narrow_down_one_after_another() {
    let old =
        "class A:\n  def f():\n    pass\nclass B:\n  def g():\n    pass\n  def f():\n    pass\n";
    assert_eq!(
        applied(old, "@@ class B:\n@@   def f():\n-    pass\n+    return 1"),
        "class A:\n  def f():\n    pass\nclass B:\n  def g():\n    pass\n  def f():\n    return 1\n"
    );
}

#[test]
fn headers_use_the_ladder_too() {
    assert_eq!(applied("  fn b()  \nx\n", "@@ fn b()\n-x\n+y"), "  fn b()  \ny\n");
}

#[test]
fn each_rung_of_the_ladder_locates_a_chunk() {
    assert_eq!(applied("a  \nb\n", "@@\n-a\n+c"), "c\nb\n");
    assert_eq!(applied("  a\nb\n", "@@\n-a\n+c"), "c\nb\n");
    assert_eq!(
        applied("say \u{201C}hi\u{201D} \u{2014} ok\n", "@@\n-say \"hi\" - ok\n+bye"),
        "bye\n"
    );
}

#[test]
fn a_pure_addition_without_header_goes_to_the_end() {
    assert_eq!(applied("a\nb\n", "@@\n+c\n+d"), "a\nb\nc\nd\n");
}

#[test]
fn a_pure_addition_without_header_goes_before_a_final_empty_line() {
    assert_eq!(applied("a\n\n", "@@\n+c"), "a\nc\n\n");
}

#[test]
fn a_pure_addition_goes_after_its_header() {
    assert_eq!(
        applied("fn a() {\n}\nfn b() {\n}\n", "@@ fn a() {\n+    x();"),
        "fn a() {\n    x();\n}\nfn b() {\n}\n"
    );
}

#[test]
fn a_pure_addition_with_end_of_file_goes_to_the_end_even_with_a_header() {
    assert_eq!(
        applied("fn a() {\n}\n", "@@ fn a() {\n+// end\n*** End of File"),
        "fn a() {\n}\n// end\n"
    );
}

#[test]
fn a_pure_addition_to_an_empty_file() {
    assert_eq!(applied("", "@@\n+first"), "first\n");
}

#[test]
fn an_end_of_file_chunk_matches_the_end_first() {
    let old = "end\nmiddle\nend\n";
    assert_eq!(applied(old, "@@\n-end\n+last\n*** End of File"), "end\nmiddle\nlast\n");
    assert_eq!(applied(old, "@@\n-end\n+first"), "first\nmiddle\nend\n");
}

#[test]
fn a_trailing_empty_old_line_is_dropped_when_not_found() {
    assert_eq!(applied("a\nb\n", "@@\n a\n-b\n+c\n"), "a\nc\n");
}

#[test]
fn deleting_every_line_leaves_an_empty_file() {
    assert_eq!(applied("a\nb\n", "@@\n-a\n-b"), "");
}

#[test]
fn a_file_without_a_final_newline_keeps_it_when_its_last_line_is_untouched() {
    assert_eq!(applied("a\nb\nc", "@@\n-a\n+A"), "A\nb\nc");
}

#[test]
fn a_file_without_a_final_newline_gains_one_when_its_last_line_changes() {
    assert_eq!(applied("a\nb", "@@\n a\n-b\n+B"), "a\nB\n");
    assert_eq!(applied("a\nb", "@@\n+c"), "a\nb\nc\n");
}

#[test]
fn a_file_with_a_final_newline_keeps_it() {
    assert_eq!(applied("a\nb\n", "@@\n-b\n+c"), "a\nc\n");
}

#[test]
fn the_first_missing_line_is_the_one_after_the_longest_matching_run() {
    let old = "fn main() {\n    let a = 0;\n    let x = 2;\n    run(x);\n}\n";
    let e = failure(
        old,
        "@@ fn main() {\n     let a = 0;\n-    let x = 1;\n+    let x = 3;\n     run(x);",
    );
    assert_eq!(e.hunk, 1);
    assert_eq!(e.header.as_deref(), Some("fn main() {"));
    assert_eq!(e.wanted, "    let x = 1;");
    assert_eq!(e.wanted_at, 5);
    assert_eq!(e.closest, Some((3, "    let x = 2;".to_string())));
    assert_eq!(e.before, None);
    assert_eq!(
        e.message("src/a.rs"),
        "src/a.rs: hunk 1 (@@ fn main() {): line 5 of the patch `    let x = 1;` not found; closest line 3: `    let x = 2;`"
    );
}

#[test]
fn of_several_places_of_the_run_the_line_after_most_like_the_missing_one_is_named() {
    let old = "    x = 1;\n    y = 0;\n    x = 1;\n    z = 9;\n";
    let e = failure(old, "@@\n-    x = 1;\n-    z = 8;\n+w");
    assert_eq!(e.wanted, "    z = 8;");
    assert_eq!(e.closest, Some((4, "    z = 9;".to_string())));
}

#[test]
fn a_run_of_blank_lines_places_nothing_unless_the_next_line_is_alike() {
    let old = "a\n\nunrelated words\nfn target() {\n";
    let e = failure(old, "@@\n \n-fn targte() {\n+x");
    assert_eq!(e.wanted, "fn targte() {");
    assert_eq!(e.closest, Some((4, "fn target() {".to_string())));
}

#[test]
fn a_first_line_not_found_names_the_most_similar_line() {
    let old = "alpha\nlet total = compute(a, b);\nomega\n";
    let e = failure(old, "@@\n-let total = compute(a, c);\n+x");
    assert_eq!(e.wanted_at, 4);
    assert_eq!(e.closest, Some((2, "let total = compute(a, b);".to_string())));
    assert_eq!(
        e.message("f"),
        "f: hunk 1: line 4 of the patch `let total = compute(a, c);` not found; closest line 2: `let total = compute(a, b);`"
    );
}

#[test]
fn nothing_similar_says_so() {
    let e = failure("alpha\nbeta\n", "@@\n-zzzz qqqq\n+x");
    assert_eq!(e.closest, None);
    assert_eq!(
        e.message("f"),
        "f: hunk 1: line 4 of the patch `zzzz qqqq` not found; no line of the file is like it"
    );
}

#[test]
fn a_header_not_found_is_the_missing_line() {
    let e = failure("fn alpha() {\n}\n", "@@ fn alpah() {\n-}\n+};");
    assert_eq!(e.wanted, "fn alpah() {");
    assert_eq!(e.wanted_at, 3);
    assert_eq!(e.closest, Some((1, "fn alpha() {".to_string())));
}

#[test]
fn the_second_stacked_header_not_found_is_named() {
    let e = failure(
        "class A:\n  def f():\n    pass\n",
        "@@ class A:\n@@   def g():\n-    pass\n+    x",
    );
    assert_eq!(e.wanted, "  def g():");
    assert_eq!(e.wanted_at, 4);
    assert_eq!(e.searched_from, 2);
}

#[test]
fn the_second_hunk_is_numbered() {
    let e = failure("a\nb\nc\n", "@@\n-a\n+A\n@@ b\n-x\n+y");
    assert_eq!(e.hunk, 2);
    assert!(
        e.message("f").starts_with("f: hunk 2 (@@ b): line 7 of the patch `x` not found"),
        "{}",
        e.message("f")
    );
}

#[test]
fn hunks_out_of_order_are_refused_saying_where_the_lines_are() {
    let old = "one\ntwo\nthree\nfour\n";
    let e = failure(old, "@@\n-three\n+3\n@@\n-one\n+1");
    assert_eq!(e.before, Some(1));
    assert_eq!(e.searched_from, 4);
    assert_eq!(
        e.message("f"),
        "f: hunk 2: its lines are at line 1, above line 4 where it may start (after the previous hunk and its @@ lines): give hunks in file order, without overlap"
    );
}

#[test]
fn overlapping_hunks_are_refused() {
    let old = "a\nb\nc\nd\n";
    let e = failure(old, "@@\n a\n-b\n+B\n c\n@@\n c\n-d\n+D");
    assert_eq!(e.hunk, 2);
    assert_eq!(e.before, Some(3));
    assert_eq!(e.searched_from, 4);
}

#[test]
fn hunks_out_of_order_are_named_even_with_a_trailing_empty_line() {
    let e = failure("one\ntwo\nthree\n", "@@\n-three\n+3\n@@\n-one\n+1\n");
    assert_eq!(e.before, Some(1));
}

#[test]
fn a_diverging_line_at_the_end_of_the_file_falls_back_to_similarity() {
    let e = failure("a\nb\nsome line\n", "@@\n a\n b\n-some line\n-more text\n+x");
    // "a", "b", "some line" match at the end; "more text" has no place.
    assert_eq!(e.wanted, "more text");
    assert_eq!(e.closest, None);
}

#[test]
fn long_lines_are_cut_in_the_message() {
    let long = format!("let v = {};", "1".repeat(300));
    let e = failure(&format!("{long}\n"), &format!("@@\n-{long}x\n+y"));
    let message = e.message("f");
    assert!(message.len() < 250, "{message}");
    assert!(message.contains("…`"), "{message}");
}

#[test]
fn a_hundred_chunks_on_ten_thousand_lines_apply_each_in_place() {
    let old: String = (0..10_000).map(|i| format!("line {i}\n")).collect();
    let mut body = String::new();
    for k in 0..100 {
        let i = k * 100 + 50;
        body.push_str(&format!(
            "@@ line {}\n line {}\n-line {}\n+changed {}\n line {}\n",
            i - 2,
            i - 1,
            i,
            i,
            i + 1
        ));
    }
    let chunks = chunks(body.trim_end());
    let new = apply(&old, &chunks).unwrap();
    assert!(new.contains("changed 9950\n"));
    assert_eq!(new.lines().count(), 10_000);
}

#[test]
fn a_hundred_chunks_matched_on_the_last_rung_apply_each_in_place() {
    // Every chunk found on the last rung only: each rung scans to the end.
    let old: String = (0..10_000).map(|i| format!("  say \u{201C}{i}\u{201D}\n")).collect();
    let mut body = String::new();
    for k in 0..100 {
        body.push_str(&format!("@@\n-say \"{}\"\n+said {}\n", k * 100, k));
    }
    let chunks = chunks(body.trim_end());
    let new = apply(&old, &chunks).unwrap();
    assert!(new.starts_with("said 0\n"));
}

#[test]
fn a_crlf_file_with_a_bom_is_patched_as_lf_and_written_back_as_it_was() {
    use crate::tools::apply_patch::text::{decode, encode};
    let decoded = decode(b"\xEF\xBB\xBFone\r\ntwo\r\nthree").unwrap();
    let new = applied(&decoded.text, "@@\n one\n-two\n+2");
    assert_eq!(encode(decoded.form, &new), b"\xEF\xBB\xBFone\r\n2\r\nthree");
}

/// A small deterministic generator (splitmix64) for the random cases.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// One random case: a file of distinct lines, a few edits in file order
/// (each with 0–3 context lines on either side, placed by a `@@` line now
/// and then, context sometimes padded with whitespace), the patch body and
/// the text the edits give.
fn random_case(random: &mut Random) -> (String, String, String) {
    let count = 1 + random.below(40);
    let lines: Vec<String> = (0..count)
        .map(|i| format!("{}line {i} {}", " ".repeat(random.below(3) * 4), random.below(1000)))
        .collect();
    let final_newline = random.below(4) != 0;
    let mut body = String::new();
    let mut expected: Vec<String> = Vec::new();
    let (mut at, mut last_end) = (0, 0);
    while at < count {
        let before = random.below(4).min(count - at);
        let start = at + before;
        let removed = random.below(4).min(count - start);
        let after = random.below(4).min(count - start - removed);
        if before + removed + after == 0 {
            break;
        }
        let added: Vec<String> = (0..random.below(4)).map(|k| format!("new {at} {k}")).collect();
        // A `@@` line names the line above the edit, if no edit holds it.
        if at > last_end && random.below(3) == 0 {
            body.push_str(&format!("@@ {}\n", lines[at - 1]));
        } else {
            body.push_str("@@\n");
        }
        let end = start + removed + after;
        for (i, line) in lines.iter().enumerate().take(end).skip(at) {
            if (start..start + removed).contains(&i) {
                body.push_str(&format!("-{line}\n"));
                if i + 1 == start + removed {
                    added.iter().for_each(|a| body.push_str(&format!("+{a}\n")));
                }
                continue;
            }
            if i == start && removed == 0 {
                added.iter().for_each(|a| body.push_str(&format!("+{a}\n")));
            }
            let padded = match random.below(5) {
                0 => format!("{line}  "),
                1 => line.trim_start().to_string(),
                _ => line.clone(),
            };
            body.push_str(&format!(" {padded}\n"));
            expected.push(line.clone());
        }
        if removed == 0 && after == 0 {
            added.iter().for_each(|a| body.push_str(&format!("+{a}\n")));
        }
        // The expected text: context kept, removed lines replaced by the added.
        let kept_after = expected.split_off(expected.len() - after);
        expected.extend(added);
        expected.extend(kept_after);
        last_end = end;
        // A gap before the next edit, so that no two share a line.
        let gap = random.below(3);
        expected.extend(lines[end..(end + gap).min(count)].iter().cloned());
        at = end + gap;
    }
    expected.extend(lines[at.min(count)..].iter().cloned());
    let mut old = lines.join("\n");
    if final_newline {
        old.push('\n');
    }
    let mut new = expected.join("\n");
    // The last line ends with '\n' unless the file's had none and no edit
    // reached it.
    if !new.is_empty() && (final_newline || last_end == count) {
        new.push('\n');
    }
    (old, body.trim_end_matches('\n').to_string(), new)
}

#[test]
fn random_edits_apply_as_written() {
    let seed = std::env::var("IKIGAI_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_A991_u64);
    println!("random_edits_apply_as_written: IKIGAI_FUZZ_SEED={seed}");
    let mut random = Random(seed);
    for case in 0..500 {
        let (old, body, want) = random_case(&mut random);
        if body.is_empty() {
            continue;
        }
        let got = apply(&old, &chunks(&body)).map_err(|e| e.message("f"));
        assert_eq!(
            got,
            Ok(want),
            "case {case} (IKIGAI_FUZZ_SEED={seed})\nold:\n{old}\npatch:\n{body}"
        );
    }
}

#[test]
fn context_lines_keep_the_files_text_when_matched_leniently() {
    let old = "a \u{201C}q\u{201D}  \n  b\nc\n";
    assert_eq!(applied(old, "@@\n a \"q\"\n b\n-c\n+C"), "a \u{201C}q\u{201D}  \n  b\nC\n");
}

#[test]
fn a_failure_on_ten_thousand_lines_names_the_missing_and_closest_line() {
    let old: String =
        (0..10_000).map(|i| format!("    value_{} = compute({i});\n", i % 7)).collect();
    let body: String = (0..20)
        .map(|i| format!(" value_{} = compute({});\n", (9_000 + i) % 7, 9_000 + i))
        .collect::<String>()
        + "-missing line\n+x";
    let chunks = chunks(&format!("@@\n{body}"));
    let e = apply(&old, &chunks).unwrap_err();
    assert_eq!(e.wanted, "missing line");
    assert_eq!(e.closest.as_ref().map(|c| c.0), Some(9_021));
}
