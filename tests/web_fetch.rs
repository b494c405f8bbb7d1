//! web_fetch through the real binary (docs/TOOLS.md, "web_fetch"): a page
//! served by the tests' own HTTP server on loopback, which only
//! `IKIGAI_TOOLS_FETCH_ALLOW=127.0.0.1` lets the tool reach. HTML becomes
//! markdown, text stays, JSON is pretty-printed, lines are paged, a
//! JavaScript shell is said to be one, an image reaches an MCP client as
//! image content, an error status is an error.

use crate::common;
use common::http_server::{Reply, Server};
use common::mcp::Session;
use common::*;

use serde_json::{json, Value};

/// The setting that lets the tool reach the test server.
const ALLOW: (&str, &str) = ("IKIGAI_TOOLS_FETCH_ALLOW", "127.0.0.1");

/// A page with what the converter must keep and what it must drop.
const ARTICLE: &str = "<!doctype html><html><head><title>The  Page</title>\
<style>p{color:red}</style><script>track()</script></head><body>\
<header><a href='/'>Site</a></header><nav><a href='/a'>A</a></nav>\
<main><h1>Title</h1><p>Some <b>bold</b> text and a <a href='/next'>link</a>.</p>\
<ul><li>one</li><li>two</li></ul>\
<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>\
<pre><code class='language-sh'>echo hi\n</code></pre></main>\
<aside>ads</aside><footer>foot</footer></body></html>";

/// The server every test fetches from: a path a case.
fn server() -> Server {
    Server::start(|seen| match seen.path.as_str() {
        "/article" => Reply::ok("text/html; charset=utf-8", ARTICLE),
        "/notes.txt" => Reply::ok("text/plain", "line 1\nline 2\n"),
        "/data.json" => Reply::ok("application/json", r#"{"b":1,"a":[true,null]}"#),
        "/lines" => {
            let lines: String = (1..=10).map(|n| format!("line {n}\n")).collect();
            Reply::ok("text/plain", lines)
        }
        "/many" => {
            let lines: String = (1..=1000).map(|n| format!("line {n}\n")).collect();
            Reply::ok("text/plain", lines)
        }
        "/app" => Reply::ok(
            "text/html",
            "<html><head><title>My App</title></head><body><div id=root></div>\
             <noscript>You need to enable JavaScript to run this app.</noscript>\
             <script src='/app.js'></script></body></html>",
        ),
        "/red.png" => Reply::ok("image/png", crate::full_file_read::png(3, 2)),
        "/doc.pdf" => Reply::ok("application/pdf", "%PDF-1.7\n%\u{e2}\u{e3}\n"),
        _ => Reply::status(404, "text/html", "<h1>Not here</h1>"),
    })
}

/// A call of web_fetch as an ikigai host makes it, loopback allowed.
fn fetch(env: &Env, args: Value) -> Ran {
    env.cmd("web_fetch")
        .env("IKIGAI_TOOLS_PROFILE", "full")
        .env(ALLOW.0, ALLOW.1)
        .stdin(args.to_string())
        .run()
}

/// A call that must succeed: its answer.
fn fetched(env: &Env, args: Value) -> Value {
    let ran = fetch(env, args);
    assert_eq!(ran.code, Some(0), "stderr: {}", ran.stderr);
    ran.json()
}

#[test]
fn web_fetch_html_is_answered_as_markdown_of_its_main_content_with_its_title() {
    let (env, server) = (Env::new(), server());
    let url = server.url("/article");
    let answer = fetched(&env, json!({"url": url}));
    let next = server.url("/next");
    let markdown = format!(
        "# Title\n\nSome **bold** text and a [link]({next}).\n\n- one\n- two\n\n\
         | k | v |\n| - | - |\n| a | 1 |\n\n```sh\necho hi\n```"
    );
    assert_eq!(
        answer,
        json!({"output": markdown, "url": url, "title": "The Page", "content_type": "text/html",
            "total_lines": 14})
    );
    insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => true,
        filters => vec![(r"http://127\.0\.0\.1:\d+", "http://127.0.0.1:PORT")]}, {
        insta::assert_json_snapshot!("article", answer);
    });
}

#[test]
fn web_fetch_text_is_answered_as_is_and_json_pretty_printed() {
    let (env, server) = (Env::new(), server());
    let url = server.url("/notes.txt");
    assert_eq!(
        fetched(&env, json!({"url": url})),
        json!({"output": "line 1\nline 2\n", "url": url, "title": "",
            "content_type": "text/plain", "total_lines": 2})
    );
    let url = server.url("/data.json");
    assert_eq!(
        fetched(&env, json!({"url": url})),
        json!({"output": "{\n  \"b\": 1,\n  \"a\": [\n    true,\n    null\n  ]\n}", "url": url,
            "title": "", "content_type": "application/json", "total_lines": 7})
    );
}

#[test]
fn web_fetch_offset_and_limit_page_by_line_and_next_offset_says_where_to_go_on() {
    let (env, server) = (Env::new(), server());
    let url = server.url("/lines");
    assert_eq!(
        fetched(&env, json!({"url": url, "offset": 3, "limit": 2})),
        json!({"output": "line 3\nline 4\n[... 43 bytes omitted; continue with offset=5 ...]",
            "url": url, "title": "", "content_type": "text/plain", "total_lines": 10,
            "next_offset": 5})
    );
    // The last page: no next_offset.
    assert_eq!(
        fetched(&env, json!({"url": url, "offset": 9, "limit": 5})),
        json!({"output": "line 9\nline 10\n", "url": url, "title": "",
            "content_type": "text/plain", "total_lines": 10})
    );
}

/// The output limit cuts a page after whole lines from its start, as
/// `limit` does, and says where to go on: the same `next_offset`, and
/// file_read's marker naming the lines left out (the last of them as the
/// page has it, not one more).
#[test]
fn web_fetch_the_output_limit_cuts_after_whole_lines_and_says_where_to_go_on() {
    let (env, server) = (Env::new(), server());
    let url = server.url("/many");
    let limited = |args: Value| {
        let ran = env
            .cmd("web_fetch")
            .env("IKIGAI_TOOLS_PROFILE", "full")
            .env(ALLOW.0, ALLOW.1)
            .env("IKIGAI_TOOLS_MAX_OUTPUT", "600")
            .stdin(args.to_string())
            .run();
        assert_eq!(ran.code, Some(0), "{}", ran.stderr);
        ran.json()
    };
    let shown: String = (1..=52).map(|n| format!("line {n}\n")).collect();
    let marker = "[... 8486 bytes omitted (lines 53-1000); continue with offset=53 (limit=N for N \
                  lines) ...]\n";
    assert_eq!(
        limited(json!({"url": url})),
        json!({"output": format!("{shown}{marker}"), "url": url, "title": "",
            "content_type": "text/plain", "total_lines": 1000, "next_offset": 53})
    );
    // Going on from there: the next lines, and where to go on again.
    let next = limited(json!({"url": url, "offset": 53}));
    let output = next["output"].as_str().unwrap_or_default();
    assert!(output.starts_with("line 53\nline 54\n"), "{next}");
    assert_eq!(next["next_offset"], json!(53 + output.lines().count() as u64 - 1), "{next}");
}

#[test]
fn web_fetch_raw_is_the_body_as_received_and_only_for_text() {
    let (env, server) = (Env::new(), server());
    let url = server.url("/data.json");
    assert_eq!(
        fetched(&env, json!({"url": url, "raw": true})),
        json!({"output": r#"{"b":1,"a":[true,null]}"#, "url": url, "title": "",
            "content_type": "application/json", "total_lines": 1})
    );
    let url = server.url("/article");
    assert_eq!(fetched(&env, json!({"url": url, "raw": true}))["output"], ARTICLE);
    let url = server.url("/red.png");
    let ran = fetch(&env, json!({"url": url, "raw": true}));
    assert_eq!(
        ran.json(),
        json!({"error": format!("raw: {url} is image/png, not text; raw shows a text body as \
            received (send the call without raw)"), "error_code": "INVALID_ARG"})
    );
}

#[test]
fn web_fetch_a_javascript_only_page_is_js_required_with_its_title() {
    let (env, server) = (Env::new(), server());
    let url = server.url("/app");
    assert_eq!(
        fetch(&env, json!({"url": url})).json(),
        json!({"error": format!("{url} (\"My App\") is made by JavaScript: its HTML holds no \
            readable text, only scripts, and web_fetch runs none. Look for the same content \
            elsewhere (web_search), or an API or feed of the site"),
            "error_code": "JS_REQUIRED"})
    );
}

#[test]
fn web_fetch_an_image_is_image_content_over_mcp_and_a_line_on_the_command_line() {
    let (env, server) = (Env::new(), server());
    let url = server.url("/red.png");
    let image = crate::full_file_read::png(3, 2);
    let caption = format!("Image: PNG, 3x2, {} bytes", image.len());
    assert_eq!(
        fetched(&env, json!({"url": url})),
        json!({"output": format!("[{caption}: shown only to an MCP client that shows images]"),
            "url": url, "title": "", "content_type": "image/png"})
    );
    let mut session = Session::start_with_vars(
        &env,
        &common::mcp::unconfined(),
        &[ALLOW, ("IKIGAI_TOOLS_PROFILE", "full")],
    );
    let params = json!({"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "tests", "version": "0"}});
    session.request(1, "initialize", params);
    session.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let answer =
        session.request(2, "tools/call", json!({"name": "web_fetch", "arguments": {"url": url}}));
    let result = &answer["result"];
    assert_eq!(result["isError"], false, "{answer}");
    assert_eq!(
        result["content"][1],
        json!({"type": "image", "data": crate::full_file_read::base64(&image), "mimeType": "image/png"})
    );
    assert_eq!(
        result["structuredContent"],
        json!({"output": caption, "url": url, "title": "", "content_type": "image/png"})
    );
}

#[test]
fn web_fetch_a_pdf_is_told_not_shown() {
    let (env, server) = (Env::new(), server());
    let url = server.url("/doc.pdf");
    assert_eq!(
        fetched(&env, json!({"url": url}))["output"],
        "[PDF document, 15 bytes: not shown; web_fetch reads HTML, text, JSON and images, not PDFs]"
    );
}

#[test]
fn web_fetch_an_http_error_status_is_an_error_naming_it() {
    let (env, server) = (Env::new(), server());
    let url = server.url("/missing");
    assert_eq!(
        fetch(&env, json!({"url": url})).json(),
        json!({"error": format!("{url} answered HTTP 404: an error, not the page (check the \
            URL; nothing is shown of an error page)"), "error_code": "NETWORK_ERROR"})
    );
}

#[test]
fn web_fetch_loopback_is_refused_without_the_setting_and_never_reached() {
    let (env, server) = (Env::new(), server());
    let url = server.url("/article");
    let ran = env
        .cmd("web_fetch")
        .env("IKIGAI_TOOLS_PROFILE", "full")
        .stdin(json!({"url": url}).to_string())
        .run();
    let answer = ran.json();
    assert_eq!(answer["error_code"], "PERMISSION_DENIED", "{answer}");
    let error = answer["error"].as_str().unwrap();
    assert!(error.contains("127.0.0.1") && error.contains("IKIGAI_TOOLS_FETCH_ALLOW"), "{error}");
    assert_eq!(server.hits(), 0, "nothing reached the server");
}
