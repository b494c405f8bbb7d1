//! Cut answers a model can act on (docs/SPEC.md, "Output limit"): every
//! cut falls on a line boundary, or says it fell inside a line, and the
//! marker says how to get the rest: bash, run again into a file; file_read,
//! the offset to read on from; full grep, `next_offset`, whichever bound
//! cut it; seed grep and glob, how to narrow the search.

use crate::common::mcp::Session;
use crate::common::*;

use std::ffi::OsStr;

use serde_json::{json, Value};

/// What bash's marker says after the bytes and lines: the middle is kept
/// nowhere.
const NOT_KEPT: &str = ", not kept: run the command again with > out.log 2>&1 and read out.log \
                        (file_read offset/limit, or grep), or filter it (| tail -n 200, | grep \
                        PATTERN)";

/// The head, the marker (without its brackets) and the tail of a cut output.
fn split_at_marker(output: &str) -> (&str, &str, &str) {
    let (head, rest) =
        output.split_once("\n[... ").unwrap_or_else(|| panic!("no marker: {output}"));
    let (marker, tail) = rest.split_once(" ...]").unwrap_or_else(|| panic!("no end: {rest}"));
    (head, marker, tail.strip_prefix('\n').unwrap_or(tail))
}

/// Every line of `text` as a number.
fn numbers(text: &str) -> Vec<u64> {
    text.lines()
        .map(|l| l.parse().unwrap_or_else(|_| panic!("not a whole number: {l:?}")))
        .collect()
}

#[test]
fn a_bash_cut_falls_between_whole_numbers_and_names_the_omitted_lines() {
    let env = Env::new();
    let ran = env
        .cmd("bash")
        .env("IKIGAI_TOOLS_MAX_OUTPUT", "2000")
        .stdin(json!({"command": "seq 1 100000"}).to_string())
        .run();
    assert!(ran.stdout.len() <= 2000, "answer of {} bytes", ran.stdout.len());
    let v = ran.json();
    assert_eq!(v["exit_code"], 0);
    let output = v["output"].as_str().unwrap();
    let (head, marker, tail) = split_at_marker(output);
    // Before: `…2171\n2\n[... 568929 bytes omitted ...]\n298\n98299…`.
    let (head, tail) = (numbers(head), numbers(tail));
    assert_eq!(head, (1..=head.len() as u64).collect::<Vec<_>>());
    let first_tail = tail[0];
    assert_eq!(tail, (first_tail..=100_000).collect::<Vec<_>>());
    let whole: usize = (1..=100_000u64).map(|i| i.to_string().len() + 1).sum();
    let kept: usize = head.iter().chain(&tail).map(|i| i.to_string().len() + 1).sum();
    let first_omitted = head.len() + 1;
    let last_omitted = first_tail - 1;
    assert_eq!(
        marker,
        format!("{} bytes omitted (lines {first_omitted}-{last_omitted}){NOT_KEPT}", whole - kept)
    );
}

#[test]
fn a_single_line_longer_than_the_limit_says_it_was_cut_inside_the_line() {
    let env = Env::new();
    let command = "head -c 5000 /dev/zero | tr '\\0' a";
    let ran = env
        .cmd("bash")
        .env("IKIGAI_TOOLS_MAX_OUTPUT", "1024")
        .stdin(json!({ "command": command }).to_string())
        .run();
    let output = ran.json()["output"].as_str().unwrap().to_owned();
    let (head, marker, tail) = split_at_marker(&output);
    assert!(head.bytes().all(|b| b == b'a') && !head.is_empty(), "{head}");
    assert!(tail.bytes().all(|b| b == b'a') && !tail.is_empty(), "{tail}");
    let omitted = 5000 - head.len() - tail.len();
    assert_eq!(marker, format!("{omitted} bytes omitted (cut inside line 1){NOT_KEPT}"));

    // file_read reads on past such a line: offset 1 would stop inside it again.
    env.write("long.txt", format!("{}\nnext\n", "a".repeat(5000)));
    let v = env
        .cmd("file-read")
        .env("IKIGAI_TOOLS_MAX_OUTPUT", "1024")
        .stdin(json!({"file_path": "long.txt"}).to_string())
        .run()
        .json();
    let output = v["output"].as_str().unwrap();
    let (head, marker, tail) = split_at_marker(output);
    assert!(tail.ends_with("a\nnext\n"), "{tail}");
    let omitted = 5000 + "\nnext\n".len() - head.len() - tail.len();
    assert_eq!(
        marker,
        format!(
            "{omitted} bytes omitted (cut inside line 1); continue with offset=2 \
             (limit=N for N lines)"
        )
    );
}

#[test]
fn a_file_read_cut_ends_on_a_line_and_its_offset_reads_on_from_the_next() {
    let env = Env::new();
    let whole: String = (1..=3000).map(|i| format!("line {i:04}\n")).collect();
    env.write("lines.txt", &whole);
    let read = |args: Value| {
        let ran =
            env.cmd("file-read").env("IKIGAI_TOOLS_MAX_OUTPUT", "1024").stdin(args.to_string());
        ran.run().json()["output"].as_str().unwrap().to_owned()
    };
    let output = read(json!({"file_path": "lines.txt"}));
    let (head, marker, tail) = split_at_marker(&output);
    let shown = head.lines().count();
    assert!(whole.starts_with(&format!("{head}\n")), "the head is whole lines");
    assert!(whole.ends_with(tail) && tail.starts_with("line "), "the tail is whole lines");
    let next = shown + 1;
    let last = 3000 - tail.lines().count();
    let omitted = whole.len() - head.len() - 1 - tail.len();
    assert_eq!(
        marker,
        format!(
            "{omitted} bytes omitted (lines {next}-{last}); continue with offset={next} \
             (limit=N for N lines)"
        )
    );
    // The offset it names reads on from the first line not shown.
    let on = read(json!({"file_path": "lines.txt", "offset": next, "limit": 2}));
    assert_eq!(on, format!("line {next:04}\nline {:04}\n", next + 1));
}

/// grep's entries of `nums.txt` for `77`, one call of the full profile
/// under `limit` from `offset`: the answer.
fn grep_page(env: &Env, limit: &str, offset: Option<u64>) -> Value {
    let mut args = json!({"pattern": "77", "path": "nums.txt"});
    if let Some(offset) = offset {
        args["offset"] = json!(offset);
    }
    let ran = env
        .cmd("grep")
        .env("IKIGAI_TOOLS_PROFILE", "full")
        .env("IKIGAI_TOOLS_MAX_OUTPUT", limit)
        .stdin(args.to_string())
        .run();
    if limit != "0" {
        assert!(ran.stdout.len() <= 1024, "answer of {} bytes", ran.stdout.len());
    }
    ran.json()
}

fn nums(env: &Env) {
    env.write("nums.txt", (1..=5000).map(|i| format!("{i}\n")).collect::<String>());
}

#[test]
fn a_full_grep_cut_by_the_output_limit_pages_on_with_next_offset() {
    let env = Env::new();
    nums(&env);
    let all = grep_page(&env, "0", None);
    let all: Vec<String> = all["output"].as_str().unwrap().lines().map(str::to_owned).collect();
    let first = grep_page(&env, "1024", None);
    let output = first["output"].as_str().unwrap();
    let (head, marker, tail) = split_at_marker(output);
    assert_eq!(tail, "", "nothing after the marker: whole entries from the start");
    let shown: Vec<&str> = head.lines().collect();
    assert_eq!(shown, all[..shown.len()]);
    let next = shown.len() as u64;
    assert_eq!(first["next_offset"], next, "{first}");
    // Every entry ends with a newline; the head's last one stands before the marker.
    let omitted = all.iter().map(|e| e.len() + 1).sum::<usize>() - (head.len() + 1);
    assert_eq!(marker, format!("{omitted} bytes omitted; continue with offset={next}"));
    assert_eq!(first["count"], all.len());
    // Each page continues exactly where the one before stopped.
    let mut paged: Vec<String> = shown.iter().map(|s| s.to_string()).collect();
    let mut offset = next;
    for _ in 0..100 {
        let page = grep_page(&env, "1024", Some(offset));
        let output = page["output"].as_str().unwrap();
        let entries = output.split_once("\n[... ").map_or(output, |(head, _)| head);
        paged.extend(entries.lines().map(str::to_owned));
        match page["next_offset"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    assert_eq!(paged, all);
}

#[test]
fn over_mcp_a_grep_cut_by_the_output_limit_pages_on_with_next_offset() {
    let env = Env::new();
    nums(&env);
    let all = grep_page(&env, "0", None);
    let all: Vec<&str> = all["output"].as_str().unwrap().lines().collect();
    let args = [OsStr::new("--unconfined"), OsStr::new("--max-output"), OsStr::new("1024")];
    let mut session = Session::start_with(&env, &args);
    let params = json!({"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "tests", "version": "0"}});
    session.request(1, "initialize", params);
    session.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let first = session.call(2, "grep", json!({"pattern": "77", "path": "nums.txt"}));
    let result = &first["result"];
    let next = result["structuredContent"]["next_offset"].as_u64().expect("next_offset");
    let text = result["content"][0]["text"].as_str().unwrap();
    let (head, marker, rest) = split_at_marker(text);
    assert_eq!(head.lines().collect::<Vec<_>>(), all[..next as usize]);
    assert!(marker.ends_with(&format!("; continue with offset={next}")), "{marker}");
    assert!(rest.contains(&format!("next_offset: {next}")), "{rest}");
    let second =
        session.call(3, "grep", json!({"pattern": "77", "path": "nums.txt", "offset": next}));
    let text = second["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(text.lines().next(), Some(all[next as usize]), "{text}");
}

#[test]
fn a_seed_grep_or_glob_cut_says_how_to_narrow_the_search() {
    let env = Env::new();
    nums(&env);
    let v = env
        .cmd("grep")
        .env("IKIGAI_TOOLS_MAX_OUTPUT", "1024")
        .stdin(json!({"pattern": "7", "path": "nums.txt"}).to_string())
        .run()
        .json();
    let (head, marker, tail) = split_at_marker(v["output"].as_str().unwrap());
    assert!(head.lines().chain(tail.lines()).all(|l| l.starts_with("nums.txt:")), "whole entries");
    let shown = head.lines().count();
    assert!(
        marker.contains(&format!(" bytes omitted (output lines {}-", shown + 1))
            && marker.ends_with("; narrow the search: a longer pattern, a path or a glob"),
        "{marker}"
    );
    for i in 0..300 {
        env.write(&format!("d/f{i:03}"), "");
    }
    let v = env
        .cmd("glob")
        .env("IKIGAI_TOOLS_MAX_OUTPUT", "1024")
        .stdin(json!({"pattern": "d/*"}).to_string())
        .run()
        .json();
    let (_, marker, _) = split_at_marker(v["output"].as_str().unwrap());
    assert!(marker.ends_with("; narrow the search: a longer pattern or a deeper path"), "{marker}");
}

#[test]
fn a_finished_jobs_cut_names_its_lines_as_a_foreground_call_does() {
    // In the full profile a command that may yield runs as a job, whose
    // store skips the middle it dropped: it counts the newlines as they are
    // written, so the first answer names the lines left out as the
    // foreground path (IKIGAI_TOOLS_YIELD=0, MCP's) does, byte for byte.
    let env = Env::new();
    let answer = |yield_after: &str| {
        let ran = env
            .cmd("bash")
            .env("IKIGAI_TOOLS_PROFILE", "full")
            .env("IKIGAI_TOOLS_MAX_OUTPUT", "2000")
            .env("IKIGAI_TOOLS_YIELD", yield_after)
            .env("IKIGAI_TOOLS_STATE_DIR", env.path("state"))
            .stdin(json!({"command": "seq 1 100000"}).to_string())
            .run();
        ran.json()
    };
    let foreground = answer("0");
    let (_, marker, _) = split_at_marker(foreground["output"].as_str().unwrap());
    assert!(marker.contains(" bytes omitted (lines "), "{marker}");
    assert_eq!(answer("20"), foreground);
}
