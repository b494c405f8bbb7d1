//! web_search (docs/TOOLS.md, "web_search") through the real binary,
//! against a local server answering in each provider's documented format
//! (Brave's web search API, SearXNG's JSON API): results, the parameters
//! passed, the domain filters, each error code, where the key comes from
//! (the environment or ikigai's credentials file, never a command line),
//! and the address check the configured endpoint is spared.

use crate::common;
use common::http_server::{Reply, Seen, Server};
use common::*;

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

const KEY: &str = "test-key-7f3a9c";

/// Brave's answer (its API's documented shape) with these results.
fn brave_body(results: &[(&str, &str, &str)]) -> String {
    let results: Vec<Value> = results
        .iter()
        .map(|(title, url, description)| {
            json!({"title": title, "url": url, "description": description, "type": "search_result"})
        })
        .collect();
    json!({"type": "search", "query": {"original": "q"}, "web": {"type": "search", "results": results}})
        .to_string()
}

/// SearXNG's answer (its JSON API's documented shape) with these results.
fn searxng_body(results: &[(&str, &str, &str)]) -> String {
    let results: Vec<Value> = results
        .iter()
        .map(|(title, url, content)| {
            json!({"title": title, "url": url, "content": content, "engine": "duckduckgo"})
        })
        .collect();
    json!({"query": "q", "number_of_results": 0, "results": results, "answers": [],
        "unresponsive_engines": []})
    .to_string()
}

const THREE: [(&str, &str, &str); 3] = [
    (
        "The Rust Programming Language",
        "https://doc.rust-lang.org/book/",
        "The <strong>Rust</strong> book &amp; more",
    ),
    ("Rust (video game)", "https://rust.facepunch.com/", "A survival game"),
    ("Learn Rust", "https://www.rust-lang.org/learn", "Get started with Rust"),
];

/// The settings a search runs with: none of the machine's own (an empty
/// value counts as unset), then `vars`.
fn search_with(env: &Env, vars: &[(&str, &str)], args: Value) -> Ran {
    let home = env.mkdir("home");
    let mut call = env
        .cmd("web-search")
        .env("IKIGAI_TOOLS_PROFILE", "full")
        .env("HOME", &home)
        .env("BRAVE_API_KEY", "")
        .env("IKIGAI_TOOLS_SEARCH_PROVIDER", "")
        .env("IKIGAI_TOOLS_SEARCH_URL", "")
        .env("IKIGAI_TOOLS_FETCH_ALLOW", "");
    for (name, value) in vars {
        call = call.env(name, value);
    }
    call.stdin(args.to_string()).run()
}

fn search(env: &Env, vars: &[(&str, &str)], args: Value) -> Value {
    let ran = search_with(env, vars, args);
    assert_eq!(ran.code, Some(0), "stderr: {}", ran.stderr);
    ran.json()
}

/// A Brave endpoint on the test server answering `reply`.
fn brave(reply: Reply) -> Server {
    Server::start(move |_| reply.clone())
}

fn brave_vars(server: &Server) -> Vec<(&'static str, String)> {
    vec![
        ("BRAVE_API_KEY", KEY.to_owned()),
        ("IKIGAI_TOOLS_SEARCH_URL", server.url("/res/v1/web/search")),
    ]
}

fn vars<'a>(owned: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    owned.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

fn only_request(server: &Server) -> Seen {
    let seen = server.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    seen[0].clone()
}

#[test]
fn web_search_schema_is_the_tables_with_a_short_description() {
    let env = Env::new();
    let ran = env.cmd("web-search").env("IKIGAI_TOOLS_PROFILE", "full").arg("--schema").run();
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let text = ran.stdout_text();
    let schema: Value = serde_json::from_str(&text).unwrap();
    let description = schema["description"].as_str().unwrap();
    assert!(description.len() <= 200, "{} bytes", description.len());
    // The text itself is held by profile::full_schemas_snapshot.
    assert_eq!(text, include_str!("../src/tools/web_search.full.schema.json"));
}

#[test]
fn web_search_brave_results_with_count_and_offset_passed_and_the_key_in_its_header() {
    let env = Env::new();
    let server = brave(Reply::ok("application/json", brave_body(&THREE)));
    let owned = brave_vars(&server);
    let answer =
        search(&env, &vars(&owned), json!({"query": "rust lang", "count": 3, "offset": 1}));
    let request = only_request(&server);
    assert_eq!(request.path, "/res/v1/web/search?q=rust%20lang&count=3&offset=1");
    assert_eq!(request.header("x-subscription-token"), Some(KEY));
    insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => true}, {
        insta::assert_json_snapshot!("brave_answer", answer);
    });
    assert_eq!(answer["count"], 3);
    assert_eq!(answer["results"][0]["snippet"], "The Rust book & more");
}

#[test]
fn web_search_searxng_pages_by_offset_and_takes_count() {
    let env = Env::new();
    let server = Server::start(|_| Reply::ok("application/json", searxng_body(&THREE)));
    let url = server.url("/");
    let answer = search(
        &env,
        &[("IKIGAI_TOOLS_SEARCH_PROVIDER", "searxng"), ("IKIGAI_TOOLS_SEARCH_URL", &url)],
        json!({"query": "rust", "count": 2, "offset": 1}),
    );
    assert_eq!(only_request(&server).path, "/search?q=rust&format=json&pageno=2");
    assert_eq!(
        answer,
        json!({
            "output": "1. The Rust Programming Language\n   https://doc.rust-lang.org/book/\n   The Rust book & more\n2. Rust (video game)\n   https://rust.facepunch.com/\n   A survival game",
            "results": [
                {"title": "The Rust Programming Language", "url": "https://doc.rust-lang.org/book/", "snippet": "The Rust book & more"},
                {"title": "Rust (video game)", "url": "https://rust.facepunch.com/", "snippet": "A survival game"}
            ],
            "count": 2
        })
    );
}

#[test]
fn web_search_domain_filters_keep_subdomains_drop_the_blocked_and_say_how_many() {
    let env = Env::new();
    let server = brave(Reply::ok("application/json", brave_body(&THREE)));
    let owned = brave_vars(&server);
    let allowed =
        search(&env, &vars(&owned), json!({"query": "rust", "allowed_domains": ["rust-lang.org"]}));
    assert_eq!(allowed["count"], 2);
    assert_eq!(allowed["filtered"], 1);
    let urls: Vec<&str> =
        allowed["results"].as_array().unwrap().iter().map(|r| r["url"].as_str().unwrap()).collect();
    assert_eq!(urls, ["https://doc.rust-lang.org/book/", "https://www.rust-lang.org/learn"]);
    assert!(allowed["output"]
        .as_str()
        .unwrap()
        .ends_with("\n(1 results left out by allowed_domains/blocked_domains)"));
    let blocked = search(
        &env,
        &vars(&owned),
        json!({"query": "rust", "blocked_domains": ["doc.rust-lang.org", "facepunch.com"]}),
    );
    assert_eq!(blocked["count"], 1);
    assert_eq!(blocked["filtered"], 2);
    assert_eq!(blocked["results"][0]["url"], "https://www.rust-lang.org/learn");
}

#[test]
fn web_search_no_key_is_auth_missing_telling_every_way_to_set_one() {
    let env = Env::new();
    let answer = search(&env, &[], json!({"query": "rust"}));
    assert_eq!(
        answer,
        json!({
            "error": "web_search needs a search provider. Brave Search: set BRAVE_API_KEY=KEY in the environment, or put {\"BRAVE_API_KEY\": \"KEY\"} in ~/.config/ikigai/credentials.json (a free key: https://brave.com/search/api/). Or a SearXNG of your own: set IKIGAI_TOOLS_SEARCH_PROVIDER=searxng and IKIGAI_TOOLS_SEARCH_URL=http://HOST:PORT. Then search again.",
            "error_code": "AUTH_MISSING"
        })
    );
}

#[test]
fn web_search_401_is_auth_invalid_naming_where_the_key_came_from() {
    let env = Env::new();
    let server =
        brave(Reply::status(401, "application/json", r#"{"error":{"detail":"bad token"}}"#));
    let owned = brave_vars(&server);
    let answer = search(&env, &vars(&owned), json!({"query": "rust"}));
    assert_eq!(
        answer,
        json!({"error": "API key is invalid or unauthorized (HTTP 401 from 127.0.0.1): check BRAVE_API_KEY in the environment",
            "error_code": "AUTH_INVALID"})
    );
}

/// With `Retry-After`, the wait it names; without, what Brave's free plan
/// allows.
#[test]
fn web_search_429_is_rate_limit_saying_when_to_retry() {
    let env = Env::new();
    let server = brave(Reply::status(429, "application/json", "{}").header("Retry-After", "30"));
    let owned = brave_vars(&server);
    let answer = search(&env, &vars(&owned), json!({"query": "rust"}));
    assert_eq!(
        answer,
        json!({"error": "Rate limit exceeded (HTTP 429 from 127.0.0.1): retry after 30 s",
            "error_code": "RATE_LIMIT"})
    );
    let server = brave(Reply::status(429, "application/json", "{}"));
    let owned = brave_vars(&server);
    let answer = search(&env, &vars(&owned), json!({"query": "rust"}));
    assert_eq!(
        answer,
        json!({"error": "Rate limit exceeded (HTTP 429 from 127.0.0.1): wait before searching again (Brave's free plan: 1 search a second, 2,000 a month)",
            "error_code": "RATE_LIMIT"})
    );
}

#[test]
fn web_search_500_and_bad_json_are_api_errors() {
    let env = Env::new();
    let server = brave(Reply::status(500, "text/plain", "upstream down"));
    let owned = brave_vars(&server);
    let answer = search(&env, &vars(&owned), json!({"query": "rust"}));
    assert_eq!(
        answer,
        json!({"error": "The search API answered HTTP 500 (127.0.0.1): upstream down", "error_code": "API_ERROR"})
    );
    let server = brave(Reply::ok("application/json", "{\"web\": [oops"));
    let owned = brave_vars(&server);
    let answer = search(&env, &vars(&owned), json!({"query": "rust"}));
    assert_eq!(answer["error_code"], "API_ERROR");
    let message = answer["error"].as_str().unwrap();
    assert!(
        message.starts_with("Invalid JSON response from the search API (127.0.0.1): "),
        "{message}"
    );
}

#[test]
fn web_search_an_endpoint_that_does_not_answer_is_a_network_error() {
    let env = Env::new();
    // A port nothing listens on: the server's, once it is gone.
    let url = {
        let server = brave(Reply::ok("application/json", "{}"));
        server.url("/res/v1/web/search")
    };
    let answer = search(
        &env,
        &[("BRAVE_API_KEY", KEY), ("IKIGAI_TOOLS_SEARCH_URL", &url)],
        json!({"query": "rust"}),
    );
    assert_eq!(answer["error_code"], "NETWORK_ERROR", "{answer}");
}

#[test]
fn web_search_the_configured_endpoint_is_trusted_but_a_redirect_elsewhere_is_checked() {
    let env = Env::new();
    let server = brave(Reply::redirect(302, "http://169.254.169.254/latest/meta-data/"));
    let owned = brave_vars(&server);
    let answer = search(&env, &vars(&owned), json!({"query": "rust"}));
    assert_eq!(answer["error_code"], "PERMISSION_DENIED", "{answer}");
    assert!(answer["error"].as_str().unwrap().contains("169.254.169.254"), "{answer}");
    assert_eq!(server.hits(), 1);
}

#[test]
fn web_search_the_key_is_read_from_ikigais_credentials_file_never_from_a_command_line() {
    let env = Env::new();
    env.write("home/.config/ikigai/credentials.json", format!(r#"{{"BRAVE_API_KEY": "{KEY}"}}"#));
    // While the server answers, the tool is waiting for it: no process's
    // command line may hold the key.
    let on_a_command_line = Arc::new(Mutex::new(Vec::new()));
    let found = Arc::clone(&on_a_command_line);
    let server = Server::start(move |_| {
        found.lock().unwrap().extend(command_lines_holding(KEY));
        Reply::ok("application/json", brave_body(&THREE[..1]))
    });
    let url = server.url("/res/v1/web/search");
    let answer = search(&env, &[("IKIGAI_TOOLS_SEARCH_URL", &url)], json!({"query": "rust"}));
    assert_eq!(answer["count"], 1, "{answer}");
    assert_eq!(only_request(&server).header("x-subscription-token"), Some(KEY));
    assert_eq!(*on_a_command_line.lock().unwrap(), Vec::<String>::new());
}

/// The pids whose command line holds `needle`.
fn command_lines_holding(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        if cmdline.windows(needle.len()).any(|w| w == needle.as_bytes()) {
            found.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    found
}

#[test]
fn web_search_bad_parameters_are_invalid_arg() {
    let env = Env::new();
    for (args, message) in [
        (json!({"query": "r"}), "parameter query must be at least 2 characters"),
        (json!({"query": "rust", "count": 21}), "parameter count must be from 1 to 20, got 21"),
        (
            json!({"query": "rust", "blocked_domains": [1]}),
            "parameter blocked_domains must be an array of strings",
        ),
        (
            json!({"query": "rust", "offset": 10}),
            "parameter offset must be at most 9 with Brave Search, got 10",
        ),
    ] {
        let answer = search(&env, &[("BRAVE_API_KEY", KEY)], args);
        assert_eq!(answer, json!({"error": message, "error_code": "INVALID_ARG"}));
    }
}
