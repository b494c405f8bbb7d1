//! web_fetch against servers that misbehave (docs/CONFINEMENT.md, "The web
//! tools' network"): redirect chains, loops and hops to private addresses,
//! huge and trickling bodies, a gzip bomb, Latin-1 and Shift-JIS declared in
//! a header or in `<meta>`, a binary type, a JavaScript-only page, paging
//! across a page whole, IPv6. Through the real binary (the `web_fetch` link,
//! full profile) and the local server of tests/common/http_server.rs;
//! loopback is allowed by `IKIGAI_TOOLS_FETCH_ALLOW` only where a test says.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::http_server::{Reply, Seen, Server};
use crate::common::procs::Measured;
use crate::common::{skipped, Env};

const ALLOW: &str = "IKIGAI_TOOLS_FETCH_ALLOW";
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/web/");

/// web_fetch's answer to `args`, with `IKIGAI_TOOLS_FETCH_ALLOW=allow`
/// (unset when `None`) and the other settings given.
fn fetch(allow: Option<&str>, settings: &[(&str, &str)], args: Value) -> Value {
    let env = Env::new();
    let mut call = env.cmd("web_fetch").env("IKIGAI_TOOLS_PROFILE", "full");
    if let Some(allow) = allow {
        call = call.env(ALLOW, allow);
    }
    for (k, v) in settings {
        call = call.env(k, v);
    }
    let ran = call.stdin(args.to_string()).run();
    assert_eq!(ran.code, Some(0), "exit code; stderr: {}", ran.stderr);
    ran.json()
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{FIXTURES}{name}")).expect("a saved page")
}

fn text(answer: &Value, field: &str) -> String {
    answer[field].as_str().unwrap_or_else(|| panic!("no {field} in {answer}")).to_owned()
}

/// An error answer's code, and its message.
fn error(answer: &Value) -> (String, String) {
    assert!(answer.get("output").is_none(), "an error, not an answer: {answer}");
    (text(answer, "error_code"), text(answer, "error"))
}

/// `/hop/N` redirects to `/hop/N+1` until `/hop/LAST`, which redirects to
/// `/end`: a chain of LAST+1 redirects.
fn chain(last: usize) -> impl Fn(&Seen) -> Reply {
    move |req: &Seen| match req.path.strip_prefix("/hop/").and_then(|n| n.parse::<usize>().ok()) {
        Some(n) if n < last => Reply::redirect(302, &format!("/hop/{}", n + 1)),
        Some(_) => Reply::redirect(301, "/end"),
        None => Reply::ok("text/plain", "arrived\n"),
    }
}

#[test]
fn a_chain_of_ten_redirects_is_followed_and_the_final_url_answered() {
    let server = Server::start(chain(9));
    let answer = fetch(Some("127.0.0.1"), &[], json!({"url": server.url("/hop/0")}));
    assert_eq!(text(&answer, "url"), server.url("/end"), "{answer}");
    assert_eq!(text(&answer, "output").trim_end(), "arrived", "{answer}");
    assert_eq!(answer["content_type"], "text/plain");
    assert_eq!(server.hits(), 11, "ten redirects and the page");
}

#[test]
fn an_eleventh_redirect_is_an_error_and_not_followed() {
    let server = Server::start(chain(10));
    let answer = fetch(Some("127.0.0.1"), &[], json!({"url": server.url("/hop/0")}));
    let (code, message) = error(&answer);
    assert_eq!(code, "NETWORK_ERROR", "{answer}");
    let from = server.url("/hop/0");
    let last = server.url("/end");
    let expected = format!("Too many redirects: more than 10 from {from}; the last went to {last}");
    assert_eq!(message, expected, "the bound is named");
    assert_eq!(server.hits(), 11, "the first request and ten redirects followed, no more");
}

#[test]
fn a_redirect_loop_is_an_error() {
    let server = Server::start(|req| match req.path.as_str() {
        "/a" => Reply::redirect(302, "/b"),
        _ => Reply::redirect(302, "/a"),
    });
    let answer = fetch(Some("127.0.0.1"), &[], json!({"url": server.url("/a")}));
    let (a, b) = (server.url("/a"), server.url("/b"));
    let expected = format!("Redirect loop: {b} redirects back to {a}, already fetched");
    assert_eq!(error(&answer), ("NETWORK_ERROR".into(), expected));
    assert_eq!(server.hits(), 2, "found when /a came back, not after ten redirects");
}

/// A redirect from an allowed host to `target` is refused, naming the
/// address and the setting, before anything is sent there.
fn refused_hop(target: &str, address: &str, range: &str) {
    // The allow-list names the first host only: `localhost`, by name.
    let server = Server::start({
        let target = target.to_owned();
        move |req| match req.path.as_str() {
            "/" => Reply::redirect(302, &target),
            _ => Reply::ok("text/plain", "secret\n"),
        }
    });
    let answer = fetch(Some("localhost"), &[], json!({"url": server.url_as("localhost", "/")}));
    let (code, message) = error(&answer);
    assert_eq!(code, "PERMISSION_DENIED", "{answer}");
    let expected = format!(
        "Refused to connect to {address}: {range}, fetched only when {ALLOW} names it (the \
         user's setting: hosts, addresses or CIDR ranges, comma-separated)"
    );
    assert_eq!(message, expected, "names the address and the setting");
    assert_eq!(server.seen().iter().map(|s| s.path.clone()).collect::<Vec<_>>(), ["/"]);
}

#[test]
fn a_redirect_to_loopback_is_refused_though_the_first_host_is_allowed() {
    let server = Server::start(|_| Reply::ok("text/plain", "secret\n"));
    refused_hop(&server.url("/secret"), "127.0.0.1", "a loopback address");
    assert_eq!(server.hits(), 0, "the loopback address was never connected to");
}

#[test]
fn a_redirect_to_a_private_address_is_refused_though_the_first_host_is_allowed() {
    refused_hop("http://10.1.2.3/internal", "10.1.2.3", "a private address");
}

#[test]
fn a_redirect_to_the_metadata_address_is_refused_though_the_first_host_is_allowed() {
    refused_hop(
        "http://169.254.169.254/latest/meta-data/",
        "169.254.169.254",
        "the cloud metadata address (link-local)",
    );
}

#[test]
fn loopback_is_refused_without_the_allow_list() {
    let server = Server::start(|_| Reply::ok("text/plain", "secret\n"));
    let answer = fetch(None, &[], json!({"url": server.url("/")}));
    let (code, message) = error(&answer);
    assert_eq!(code, "PERMISSION_DENIED", "{answer}");
    let expected = "Refused to connect to 127.0.0.1: a loopback address, fetched only when \
         IKIGAI_TOOLS_FETCH_ALLOW names it (the user's setting: hosts, addresses or CIDR ranges, \
         comma-separated)";
    assert_eq!(message, expected, "names the address and the setting");
    assert_eq!(server.hits(), 0);
}

/// 100-byte lines, the body repeated without end.
fn hundred_byte_lines() -> Vec<u8> {
    (0..10).flat_map(|i| format!("{i:099}\n").into_bytes()).collect()
}

#[test]
fn a_huge_body_is_cut_at_the_bound_and_says_so() {
    let server = Server::start(|_| Reply::ok("text/plain", hundred_byte_lines()).endless());
    let bound = [("IKIGAI_TOOLS_FETCH_MAX_BYTES", "100000")];
    let first = fetch(Some("127.0.0.1"), &bound, json!({"url": server.url("/")}));
    let total = first["total_lines"].as_u64().unwrap_or_else(|| panic!("{first}"));
    assert_eq!(total, 1001, "100,000 bytes of 100-byte lines, then the note: {first}");
    let last = fetch(Some("127.0.0.1"), &bound, json!({"url": server.url("/"), "offset": total}));
    let note = text(&last, "output");
    let expected = "[... the download stopped at 100000 bytes (IKIGAI_TOOLS_FETCH_MAX_BYTES): \
                    the rest of the page is not here ...]";
    assert_eq!(note, expected, "the cut is said, with the bound and its setting");
}

#[test]
fn a_trickling_body_ends_within_the_total_timeout_and_says_so() {
    // 10 bytes every 200 ms: 10,000 bytes would take 200 s.
    let body = vec![b'x'; 10_000];
    let server = Server::start(move |_| {
        Reply::ok("text/plain", body.clone()).trickle(10, Duration::from_millis(200))
    });
    let answer = fetch(
        Some("127.0.0.1"),
        &[("IKIGAI_TOOLS_FETCH_TIMEOUT", "2")],
        json!({"url": server.url("/")}),
    );
    // An error, not the 10,000 bytes: the fetch ended at its 2 s bound.
    let error = format!(
        "Timed out fetching {}: the whole fetch may take 2 s (IKIGAI_TOOLS_FETCH_TIMEOUT)",
        server.url("/")
    );
    assert_eq!(answer, json!({"error": error, "error_code": "NETWORK_ERROR"}));
}

/// `decoded` bytes of zeros, gzip-compressed by gzip(1) (fast, in constant
/// memory, where the test's unoptimised flate2 would take long).
fn gzip_bomb(decoded: u64) -> Vec<u8> {
    let mut gzip = Command::new("gzip")
        .arg("-1c")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("gzip(1)");
    let mut input = gzip.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..decoded >> 20 {
            input.write_all(&zeros).expect("to gzip");
        }
    });
    let mut out = Vec::new();
    gzip.stdout.take().expect("stdout").read_to_end(&mut out).expect("from gzip");
    writer.join().expect("writer");
    assert!(gzip.wait().expect("gzip").success());
    out
}

/// Runs the `web_fetch` link on `args` and returns its answer and its peak
/// RSS in bytes, measured from the small helper process (a child of this
/// big test process would start with its high-water mark:
/// `common::procs::Measured`).
fn fetch_measured(allow: &str, args: &Value) -> (Value, u64) {
    let env = Env::new();
    let report = Measured::start(
        &env.link("web_fetch"),
        &env.work(),
        args.to_string().as_bytes(),
        &[("IKIGAI_TOOLS_PROFILE", Some("full")), (ALLOW, Some(allow))],
    )
    .finish();
    let answer = serde_json::from_slice(&report.stdout)
        .unwrap_or_else(|_| panic!("one JSON answer: {report:?}"));
    (answer, report.reaped.max_rss)
}

#[test]
fn a_gzip_bomb_is_an_error_in_bounded_memory() {
    // 512 MiB of zeros in about 500 KB; the default bound is 10 MiB.
    let bomb = gzip_bomb(512 << 20);
    let server = Server::start(move |_| {
        Reply::ok("text/html", bomb.clone()).header("Content-Encoding", "gzip")
    });
    let (answer, rss) = fetch_measured("127.0.0.1", &json!({"url": server.url("/")}));
    let expected = format!(
        "The gzip body of {} decompressed past 10485760 bytes: refused as a decompression bomb \
         (IKIGAI_TOOLS_FETCH_MAX_BYTES bounds it)",
        server.url("/")
    );
    assert_eq!(error(&answer), ("NETWORK_ERROR".into(), expected), "a bomb is an error");
    // The body's 10 MiB bound, decoded once, and the program: not 512 MiB.
    let bound = Measured::floor(&Env::new()) + 3 * (10 << 20);
    assert!(rss < bound, "peak RSS {rss} bytes, bound {bound}");
}

#[test]
fn latin1_declared_in_the_header_is_decoded() {
    let server = Server::start(|_| {
        Reply::ok("text/plain; charset=ISO-8859-1", b"Cr\xe8me br\xfbl\xe9e, 150 \xb0C\n".to_vec())
    });
    let answer = fetch(Some("127.0.0.1"), &[], json!({"url": server.url("/")}));
    assert_eq!(text(&answer, "output").trim_end(), "Crème brûlée, 150 °C", "{answer}");
}

#[test]
fn latin1_declared_in_meta_is_decoded() {
    let server = Server::start(|_| Reply::ok("text/html", fixture("latin1.html")));
    let answer = fetch(Some("127.0.0.1"), &[], json!({"url": server.url("/")}));
    assert_eq!(text(&answer, "title"), "Crème brûlée à la façon de Noël", "{answer}");
    let output = text(&answer, "output");
    assert!(output.contains("# Crème brûlée à la façon de Noël"), "{output}");
    assert!(output.contains("Préchauffer le four à 150 °C."), "{output}");
}

#[test]
fn shift_jis_declared_in_the_header_is_decoded() {
    let (bytes, _, _) = encoding_rs::SHIFT_JIS.encode("東京の天気予報：週末は晴れ\n");
    let body = bytes.into_owned();
    let server = Server::start(move |_| Reply::ok("text/plain; charset=Shift_JIS", body.clone()));
    let answer = fetch(Some("127.0.0.1"), &[], json!({"url": server.url("/")}));
    assert_eq!(text(&answer, "output").trim_end(), "東京の天気予報：週末は晴れ", "{answer}");
}

#[test]
fn shift_jis_declared_in_meta_is_decoded() {
    let server = Server::start(|_| Reply::ok("text/html", fixture("shift_jis.html")));
    let answer = fetch(Some("127.0.0.1"), &[], json!({"url": server.url("/")}));
    assert_eq!(text(&answer, "title"), "東京の天気予報：週末は晴れ", "{answer}");
    let output = text(&answer, "output");
    assert!(output.contains("| 横浜 | 17度 | 10度 |"), "{output}");
}

#[test]
fn a_binary_type_is_answered_as_one_not_shown() {
    let server =
        Server::start(|_| Reply::ok("application/zip", b"PK\x03\x04\x00\xff\xfe".to_vec()));
    let answer = fetch(Some("127.0.0.1"), &[], json!({"url": server.url("/a.zip")}));
    assert_eq!(answer["content_type"], "application/zip", "{answer}");
    let output = text(&answer, "output");
    let expected = "[application/zip, 7 bytes: binary, not shown; web_fetch reads HTML, text, \
                    JSON and images]";
    assert_eq!(output, expected, "the bytes are not shown");
}

#[test]
fn a_javascript_only_page_is_said_to_be_one_with_its_title() {
    let server = Server::start(|_| Reply::ok("text/html", fixture("spa.html")));
    let answer = fetch(Some("127.0.0.1"), &[], json!({"url": server.url("/app")}));
    let expected = format!(
        "{} (\"Dashboard | Orbit\") is made by JavaScript: its HTML holds no readable text, only \
         scripts, and web_fetch runs none. Look for the same content elsewhere (web_search), or \
         an API or feed of the site",
        server.url("/app")
    );
    assert_eq!(error(&answer), ("JS_REQUIRED".into(), expected), "with the page's title");
}

#[test]
fn paging_with_offset_and_limit_covers_a_page_whole() {
    let server = Server::start(|_| Reply::ok("text/html", fixture("article.html")));
    let url = server.url("/post");
    let whole = fetch(Some("127.0.0.1"), &[], json!({"url": url, "limit": 100000}));
    let total = whole["total_lines"].as_u64().unwrap_or_else(|| panic!("{whole}"));
    assert!(whole.get("next_offset").is_none(), "one page: {whole}");
    let (mut pages, mut offset, mut offsets) = (String::new(), Some(1), Vec::new());
    while let Some(at) = offset {
        let part = fetch(Some("127.0.0.1"), &[], json!({"url": url, "offset": at, "limit": 7}));
        assert_eq!(part["total_lines"], total, "{part}");
        let output = text(&part, "output");
        offset = part.get("next_offset").and_then(Value::as_u64);
        offsets.push(offset);
        match offset {
            Some(next) => {
                assert_eq!(next, at + 7, "the next page starts after this one");
                // A cut page ends with the line that says how to go on.
                let (lines, marker) = output.rsplit_once('\n').expect("a marker line");
                let omitted = marker
                    .strip_prefix("[... ")
                    .and_then(|m| {
                        m.strip_suffix(&format!(" bytes omitted; continue with offset={next} ...]"))
                    })
                    .unwrap_or_else(|| panic!("the marker line: {marker:?}"));
                assert!(omitted.parse::<u64>().is_ok_and(|n| n > 0), "{marker}");
                pages.push_str(lines);
                pages.push('\n');
            }
            None => pages.push_str(&output),
        }
    }
    assert_eq!(offsets.len() as u64, total.div_ceil(7), "{offsets:?}");
    assert_eq!(pages.trim_end(), text(&whole, "output").trim_end());
}

#[test]
fn ipv6_loopback_is_refused_by_default_and_fetched_when_allowed() {
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        skipped("no IPv6 loopback here");
        return;
    }
    let server = Server::start_v6(|_| Reply::ok("text/plain", "over six\n"));
    let url = server.url("/");
    assert!(url.starts_with("http://[::1]:"), "{url}");
    for allow in [None, Some("127.0.0.1")] {
        let answer = fetch(allow, &[], json!({"url": url}));
        let (code, message) = error(&answer);
        assert_eq!(code, "PERMISSION_DENIED", "allow {allow:?}: {answer}");
        assert!(message.contains("::1") && message.contains(ALLOW), "{message}");
    }
    assert_eq!(server.hits(), 0, "never connected to");
    let answer = fetch(Some("::1"), &[], json!({"url": url}));
    assert_eq!(text(&answer, "output").trim_end(), "over six", "{answer}");
    assert_eq!(text(&answer, "url"), url);
}

#[test]
fn an_ipv4_mapped_ipv6_loopback_is_refused() {
    let answer = fetch(None, &[], json!({"url": "http://[::ffff:127.0.0.1]:9/"}));
    let (code, message) = error(&answer);
    assert_eq!(code, "PERMISSION_DENIED", "{answer}");
    assert!(message.contains(ALLOW), "{message}");
}
