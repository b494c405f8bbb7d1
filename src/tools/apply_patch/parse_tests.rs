use super::*;

fn ok(input: &str) -> Vec<FileOp> {
    match parse(input) {
        Ok(patch) => patch.ops,
        Err(e) => panic!("{e}"),
    }
}

fn err(input: &str) -> String {
    match parse(input) {
        Ok(patch) => panic!("parsed: {patch:?}"),
        Err(e) => e.to_string(),
    }
}

fn strings(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|s| s.to_string()).collect()
}

fn only_chunks(input: &str) -> Vec<Chunk> {
    match ok(input).as_slice() {
        [FileOp::Update { chunks, .. }] => chunks.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_operation_parses_in_order() {
    let ops = ok("*** Begin Patch\n\
                  *** Add File: a/new.txt\n\
                  +one\n\
                  +\n\
                  +three\n\
                  *** Delete File: gone.txt\n\
                  *** Update File: src/old.rs\n\
                  *** Move to: src/new.rs\n\
                  @@ fn main\n\
                  -    old();\n\
                  +    new();\n\
                  *** End Patch");
    assert_eq!(
        ops,
        vec![
            FileOp::Add { path: "a/new.txt".into(), contents: "one\n\nthree\n".into() },
            FileOp::Delete { path: "gone.txt".into() },
            FileOp::Update {
                path: "src/old.rs".into(),
                move_to: Some("src/new.rs".into()),
                chunks: vec![Chunk {
                    context: strings(&["fn main"]),
                    context_at: vec![9],
                    old_lines: strings(&["    old();"]),
                    old_at: vec![10],
                    new_lines: strings(&["    new();"]),
                    unchanged: vec![None],
                    end_of_file: false,
                    patch_line: 9,
                }],
            },
        ]
    );
}

#[test]
fn add_file_without_lines_is_an_empty_file() {
    let ops = ok("*** Begin Patch\n*** Add File: empty.txt\n*** End Patch");
    assert_eq!(ops, vec![FileOp::Add { path: "empty.txt".into(), contents: String::new() }]);
}

#[test]
fn context_lines_old_lines_and_new_lines_are_split_by_marker() {
    let chunks =
        only_chunks("*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n+c\n d\n*** End Patch");
    assert_eq!(chunks[0].old_lines, strings(&["a", "b", "d"]));
    assert_eq!(chunks[0].new_lines, strings(&["a", "c", "d"]));
    assert_eq!(chunks[0].old_at, vec![4, 5, 7]);
    assert_eq!(chunks[0].unchanged, vec![Some(0), None, Some(2)]);
    assert!(chunks[0].context.is_empty());
    assert_eq!(chunks[0].patch_line, 3);
}

#[test]
fn several_context_headers_stack() {
    let chunks = only_chunks(
        "*** Begin Patch\n*** Update File: f\n@@ class A\n@@ def b\n-x\n+y\n*** End Patch",
    );
    assert_eq!(chunks[0].context, strings(&["class A", "def b"]));
    assert_eq!(chunks[0].context_at, vec![3, 4]);
}

#[test]
fn a_bare_header_and_a_blank_one_add_no_context() {
    let chunks =
        only_chunks("*** Begin Patch\n*** Update File: f\n@@\n@@   \n-x\n+y\n*** End Patch");
    assert!(chunks[0].context.is_empty());
}

#[test]
fn several_chunks_and_blank_lines_between_them() {
    let chunks = only_chunks(
        "*** Begin Patch\n*** Update File: f\n@@ one\n-a\n+b\n\n   \n@@ two\n-c\n+d\n*** End Patch",
    );
    assert_eq!(chunks.len(), 2);
    assert_eq!(chunks[1].context, strings(&["two"]));
    assert_eq!(chunks[1].patch_line, 8);
}

#[test]
fn a_header_line_ends_the_previous_chunk() {
    let chunks =
        only_chunks("*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n@@\n-c\n+d\n*** End Patch");
    assert_eq!(chunks.len(), 2);
    assert_eq!(chunks[0].old_lines, strings(&["a"]));
    assert_eq!(chunks[1].old_lines, strings(&["c"]));
}

#[test]
fn the_first_chunk_may_go_without_a_header() {
    let chunks =
        only_chunks("*** Begin Patch\n*** Update File: f\n import x\n+import y\n*** End Patch");
    assert_eq!(chunks[0].old_lines, strings(&["import x"]));
    assert_eq!(chunks[0].new_lines, strings(&["import x", "import y"]));
    assert_eq!(chunks[0].patch_line, 3);
}

#[test]
fn a_later_chunk_needs_its_header() {
    assert_eq!(
        err("*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n*** End of File\n-c\n*** End Patch"),
        "patch line 7: expected a line starting with ' ', '+' or '-' in the hunk, or `@@`, or `*** End of File`, got `-c`"
    );
}

#[test]
fn an_empty_line_in_a_chunk_is_an_empty_context_line() {
    let chunks = only_chunks("*** Begin Patch\n*** Update File: f\n@@\n a\n\n-b\n*** End Patch");
    assert_eq!(chunks[0].old_lines, strings(&["a", "", "b"]));
    assert_eq!(chunks[0].new_lines, strings(&["a", ""]));
    assert_eq!(chunks[0].unchanged, vec![Some(0), Some(1)]);
}

#[test]
fn end_of_file_closes_the_chunk() {
    let chunks = only_chunks(
        "*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n*** End of File\n*** End Patch",
    );
    assert!(chunks[0].end_of_file);
    let padded = only_chunks(
        "*** Begin Patch\n*** Update File: f\n@@\n-a\n*** End of File  \n*** End Patch",
    );
    assert!(padded[0].end_of_file);
}

#[test]
fn end_of_file_without_lines_is_refused() {
    assert_eq!(
        err("*** Begin Patch\n*** Update File: f\n@@\n*** End of File\n*** End Patch"),
        "patch line 4: expected the hunk's lines (' ', '+' or '-') before `*** End of File`"
    );
}

#[test]
fn padded_markers_are_accepted() {
    let ops = ok(" *** Begin Patch  \n  *** Update File: f.txt  \n  *** Move to: g.txt \n@@\n-a\n+b\n*** Delete File: h \n *** End Patch \n");
    assert_eq!(ops.len(), 2);
    assert!(
        matches!(&ops[0], FileOp::Update { path, move_to: Some(to), .. } if path == "f.txt" && to == "g.txt")
    );
    assert_eq!(ops[1], FileOp::Delete { path: "h".into() });
}

#[test]
fn a_padded_marker_after_a_chunk_is_a_context_line_as_in_openais() {
    let chunks = only_chunks(
        "*** Begin Patch\n*** Update File: f\n@@\n-a\n  *** Delete File: h\n*** End Patch",
    );
    assert_eq!(chunks[0].old_lines, strings(&["a", " *** Delete File: h"]));
}

#[test]
fn whitespace_around_the_patch_is_ignored_and_lines_still_count_from_the_input() {
    let ops = ok("\n\n  *** Begin Patch\n*** Delete File: x\n*** End Patch\n\n");
    assert_eq!(ops, vec![FileOp::Delete { path: "x".into() }]);
    assert_eq!(
        err("\n\n*** Begin Patch\n*** Update File: f\n@@\nfoo\n*** End Patch"),
        "patch line 6: expected a line starting with ' ', '+' or '-' in the hunk, or `@@`, or `*** End of File`, got `foo`"
    );
}

#[test]
fn crlf_patch_lines_are_read_as_lines() {
    let chunks =
        only_chunks("*** Begin Patch\r\n*** Update File: f\r\n@@\r\n-a\r\n+b\r\n*** End Patch\r\n");
    assert_eq!(chunks[0].old_lines, strings(&["a"]));
    assert_eq!(chunks[0].new_lines, strings(&["b"]));
}

#[test]
fn a_heredoc_wrapper_is_taken_off() {
    for start in ["<<EOF", "<<'EOF'", "<<\"EOF\""] {
        let input = format!("{start}\n*** Begin Patch\n*** Delete File: x\n*** End Patch\nEOF\n");
        assert_eq!(ok(&input), vec![FileOp::Delete { path: "x".into() }], "{start}");
    }
}

#[test]
fn heredoc_lines_count_in_error_lines() {
    assert_eq!(
        err("<<'EOF'\n*** Begin Patch\n*** Frobnicate: x\n*** End Patch\nEOF"),
        "patch line 3: expected `*** Add File: PATH`, `*** Delete File: PATH` or `*** Update File: PATH`, got `*** Frobnicate: x`"
    );
}

#[test]
fn an_unknown_heredoc_start_is_not_taken_off() {
    assert_eq!(
        err("<<PATCH\n*** Begin Patch\n*** Delete File: x\n*** End Patch\nPATCH"),
        "patch line 1: expected `*** Begin Patch` as the first line, got `<<PATCH`"
    );
}

#[test]
fn an_empty_patch_is_refused() {
    assert_eq!(
        err("  \n\n"),
        "patch line 1: the patch is empty: expected `*** Begin Patch`, the files' operations, `*** End Patch`"
    );
}

#[test]
fn a_patch_without_files_is_refused() {
    assert_eq!(
        err("*** Begin Patch\n*** End Patch"),
        "patch line 2: the patch changes no files: expected `*** Add File: PATH`, `*** Delete File: PATH` or `*** Update File: PATH` before `*** End Patch`"
    );
}

#[test]
fn a_missing_begin_patch_is_refused() {
    assert_eq!(
        err("*** Update File: f\n@@\n-a\n*** End Patch"),
        "patch line 1: expected `*** Begin Patch` as the first line, got `*** Update File: f`"
    );
}

#[test]
fn a_missing_end_patch_is_refused() {
    assert_eq!(
        err("*** Begin Patch\n*** Update File: f\n@@\n-a\n+b"),
        "patch line 5: expected `*** End Patch` as the last line, got `+b`"
    );
    assert_eq!(
        err("*** Begin Patch"),
        "patch line 1: expected `*** End Patch` as the last line, got `*** Begin Patch`"
    );
}

#[test]
fn an_add_line_without_plus_is_refused() {
    assert_eq!(
        err("*** Begin Patch\n*** Add File: a.txt\n+one\ntwo\n*** End Patch"),
        "patch line 4: every line of `*** Add File: a.txt` starts with '+' (an empty line is a lone '+'), got `two`"
    );
    assert_eq!(
        err("*** Begin Patch\n*** Add File: a.txt\n+one\n\n+three\n*** End Patch"),
        "patch line 4: every line of `*** Add File: a.txt` starts with '+' (an empty line is a lone '+'), got ``"
    );
}

#[test]
fn an_update_without_chunks_is_refused() {
    assert_eq!(
        err("*** Begin Patch\n*** Update File: f.rs\n*** End Patch"),
        "patch line 2: `*** Update File: f.rs` has no changes: expected `@@` and lines starting with ' ', '+' or '-' after it"
    );
    assert_eq!(
        err("*** Begin Patch\n*** Update File: f.rs\n*** Move to: g.rs\n\n*** Delete File: x\n*** End Patch"),
        "patch line 2: `*** Update File: f.rs` has no changes: expected `@@` and lines starting with ' ', '+' or '-' after it"
    );
}

#[test]
fn a_header_without_lines_is_refused() {
    assert_eq!(
        err("*** Begin Patch\n*** Update File: f\n@@ fn a\n*** End Patch"),
        "patch line 3: expected a line starting with ' ', '+' or '-' in the hunk, or `@@`, or `*** End of File`, got the end of the patch"
    );
    assert_eq!(
        err("*** Begin Patch\n*** Update File: f\n@@ fn a\n*** Delete File: g\n*** End Patch"),
        "patch line 4: expected a line starting with ' ', '+' or '-' in the hunk, or `@@`, or `*** End of File`, got `*** Delete File: g`"
    );
}

#[test]
fn a_stray_line_in_a_hunk_is_refused_with_its_line() {
    assert_eq!(
        err("*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n+c\nfoo\n*** End Patch"),
        "patch line 7: expected a line starting with ' ', '+' or '-' in the hunk, or `@@`, or `*** End of File`, got `foo`"
    );
}

#[test]
fn an_unknown_file_header_is_refused() {
    assert_eq!(
        err("*** Begin Patch\n*** Rename File: a\n*** End Patch"),
        "patch line 2: expected `*** Add File: PATH`, `*** Delete File: PATH` or `*** Update File: PATH`, got `*** Rename File: a`"
    );
}

#[test]
fn a_marker_without_a_path_is_refused() {
    assert_eq!(
        err("*** Begin Patch\n*** Delete File: \n*** End Patch"),
        "patch line 2: `*** Delete File:` needs a path after it"
    );
    assert_eq!(
        err("*** Begin Patch\n*** Update File: a\n*** Move to:\n@@\n-x\n*** End Patch"),
        "patch line 3: `*** Move to:` needs a path after it"
    );
}

#[test]
fn long_lines_are_cut_in_messages() {
    let long = "x".repeat(200);
    let message = err(&format!("*** Begin Patch\n{long}\n*** End Patch"));
    assert!(message.ends_with(&format!("got `{}…`", "x".repeat(80))), "{message}");
}
