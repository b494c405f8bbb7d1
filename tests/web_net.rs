//! The web tools' client (src/web/) through the library, against the local
//! test server (tests/common/http_server.rs): the refused ranges, the
//! allow-list, redirects, the rebinding gap, the bounds, TLS
//! (docs/CONFINEMENT.md, "The web tools' network"). Only loopback is ever
//! connected to: every other address here is refused before any
//! connection, which is what the tests assert.

use std::time::{Duration, Instant};

use ikigai_tools::web::{get, Fetched, Policy, Request};

use crate::common::http_server::{Reply, Server, TestCa};

/// A policy from these settings (the others unset).
fn policy(settings: &[(&str, &str)]) -> Policy {
    let settings: Vec<(String, String)> =
        settings.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Policy::from_settings(|name| settings.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
        .unwrap()
}

fn allow(list: &str) -> Policy {
    policy(&[("IKIGAI_TOOLS_FETCH_ALLOW", list)])
}

fn fetch(url: &str, policy: &Policy) -> Result<Fetched, (String, String)> {
    let req = Request { url, headers: &[], accept: "*/*" };
    get(&req, policy).map_err(|err| (err.code().to_owned(), err.to_string()))
}

fn refusal(what: &str, kind: &str) -> (String, String) {
    (
        "PERMISSION_DENIED".to_owned(),
        format!(
            "Refused to connect to {what}: {kind}, fetched only when IKIGAI_TOOLS_FETCH_ALLOW \
             names it (the user's setting: hosts, addresses or CIDR ranges, comma-separated)"
        ),
    )
}

fn hello() -> Server {
    Server::start(|req| match req.path.as_str() {
        "/" => Reply::ok("text/html; charset=ISO-8859-1", "<p>hello</p>"),
        path => Reply::status(404, "text/plain", format!("no {path}")),
    })
}

#[test]
fn every_refused_range_is_refused_without_the_allow_list() {
    let none = Policy::default();
    let cases = [
        ("http://127.0.0.1:9/", "127.0.0.1", "a loopback address"),
        ("http://[::1]:9/", "::1", "a loopback address"),
        ("http://10.0.0.1/", "10.0.0.1", "a private address"),
        ("http://172.16.0.1/", "172.16.0.1", "a private address"),
        ("http://192.168.1.1/", "192.168.1.1", "a private address"),
        ("http://100.64.0.1/", "100.64.0.1", "a shared (carrier-grade NAT) address"),
        (
            "http://169.254.169.254/latest/meta-data/",
            "169.254.169.254",
            "the cloud metadata address (link-local)",
        ),
        ("http://169.254.1.1/", "169.254.1.1", "a link-local address"),
        ("http://[fe80::1]/", "fe80::1", "a link-local address"),
        ("http://[fd00::1]/", "fd00::1", "a unique-local address"),
        ("http://224.0.0.1/", "224.0.0.1", "a multicast address"),
        ("http://[ff02::1]/", "ff02::1", "a multicast address"),
        ("http://0.0.0.0/", "0.0.0.0", "an unspecified (this-network) address"),
        ("http://255.255.255.255/", "255.255.255.255", "the broadcast address"),
        ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1", "a loopback address"),
        (
            "http://[64:ff9b::a9fe:a9fe]/",
            "64:ff9b::a9fe:a9fe",
            "the cloud metadata address (link-local)",
        ),
        // IP literals in decimal and octal, read as browsers read them.
        ("http://2130706433/", "127.0.0.1", "a loopback address"),
        ("https://0177.0.0.1/", "127.0.0.1", "a loopback address"),
        ("http://0xa9.254.169.254/", "169.254.169.254", "the cloud metadata address (link-local)"),
    ];
    for (url, what, kind) in cases {
        assert_eq!(fetch(url, &none), Err(refusal(what, kind)), "{url}");
    }
}

#[test]
fn the_allow_list_lets_through_an_address_a_range_or_a_host() {
    let server = hello();
    let by_name = server.url_as("localhost", "/");
    assert_eq!(
        fetch(&server.url("/"), &Policy::default()),
        Err(refusal("127.0.0.1", "a loopback address"))
    );
    assert_eq!(fetch(&by_name, &Policy::default()).unwrap_err().0, "PERMISSION_DENIED");
    assert_eq!(server.hits(), 0, "a refused fetch reached the server");
    for (list, url) in [
        ("127.0.0.1", server.url("/")),
        ("10.0.0.0/8, 127.0.0.0/8", server.url("/")),
        ("localhost", by_name.clone()),
    ] {
        let fetched = fetch(&url, &allow(list)).unwrap();
        assert_eq!(
            fetched,
            Fetched {
                url: url.clone(),
                status: 200,
                content_type: Some("text/html".into()),
                charset: Some("ISO-8859-1".into()),
                body: b"<p>hello</p>".to_vec(),
                cut: None,
                retry_after: None,
            },
            "{list}"
        );
    }
    // Another address of the range is not let through by one address.
    assert_eq!(
        fetch("http://127.0.0.2:9/", &allow("127.0.0.1")),
        Err(refusal("127.0.0.2", "a loopback address"))
    );
    assert_eq!(server.hits(), 3);
}

#[test]
fn localhost_is_refused_by_each_of_its_addresses_until_allowed_by_name() {
    // localhost resolves to 127.0.0.1 and ::1: the name is refused whole,
    // naming the address found, and never connected to.
    let server = hello();
    let url = server.url_as("localhost", "/");
    let (code, message) = fetch(&url, &Policy::default()).unwrap_err();
    assert_eq!(code, "PERMISSION_DENIED");
    let ipv4 = refusal("localhost (127.0.0.1)", "a loopback address").1;
    let ipv6 = refusal("localhost (::1)", "a loopback address").1;
    assert!(message == ipv4 || message == ipv6, "{message}");
    assert_eq!(server.hits(), 0);
    assert_eq!(fetch(&url, &allow("LOCALHOST")).unwrap().status, 200);
    // The name allowed does not allow its address under another name.
    assert_eq!(
        fetch(&server.url("/"), &allow("localhost")),
        Err(refusal("127.0.0.1", "a loopback address"))
    );
}

#[test]
fn a_redirect_to_a_refused_address_is_refused_before_connecting() {
    let inside = hello();
    let inside_url = inside.url("/");
    let server = Server::start(move |req| match req.path.as_str() {
        "/metadata" => Reply::redirect(302, "http://169.254.169.254/latest/meta-data/"),
        "/v6" => Reply::redirect(301, "http://[::1]/"),
        _ => Reply::redirect(307, &inside_url),
    });
    let policy = allow("localhost");
    let cases = [
        ("/metadata", refusal("169.254.169.254", "the cloud metadata address (link-local)")),
        ("/v6", refusal("::1", "a loopback address")),
        // A loopback server by its address, which the allow-list does not name.
        ("/by-address", refusal("127.0.0.1", "a loopback address")),
    ];
    for (path, refused) in cases {
        let url = server.url_as("localhost", path);
        assert_eq!(fetch(&url, &policy), Err(refused), "{path}");
    }
    let paths: Vec<String> = server.seen().into_iter().map(|s| s.path).collect();
    assert_eq!(paths, ["/metadata", "/v6", "/by-address"]);
    assert_eq!(inside.hits(), 0);
}

#[test]
fn redirects_are_followed_and_the_final_url_answered() {
    let server = Server::start(|req| match req.path.as_str() {
        "/a" => Reply::redirect(301, "/b?x=1"),
        "/b?x=1" => Reply::redirect(303, "http://127.0.0.1:1/never"),
        _ => Reply::ok("text/plain", "end"),
    });
    // A relative Location is resolved against the hop that sent it.
    let chain = Server::start(|req| match req.path.as_str() {
        "/1" => Reply::redirect(302, "2"),
        "/2" => Reply::redirect(308, "/3"),
        _ => Reply::ok("text/plain", "three"),
    });
    let fetched = fetch(&chain.url("/1"), &allow("127.0.0.1")).unwrap();
    assert_eq!((fetched.url, fetched.body), (chain.url("/3"), b"three".to_vec()));
    // A hop to a closed port is a network error naming the URL.
    let (code, message) = fetch(&server.url("/a"), &allow("127.0.0.1")).unwrap_err();
    assert_eq!(code, "NETWORK_ERROR");
    assert!(message.starts_with("Cannot fetch http://127.0.0.1:1/never: "), "{message}");
}

#[test]
fn a_redirect_loop_is_found() {
    let server = Server::start(|req| match req.path.as_str() {
        "/a" => Reply::redirect(302, "/b"),
        _ => Reply::redirect(302, "/a"),
    });
    assert_eq!(
        fetch(&server.url("/a"), &allow("127.0.0.1")),
        Err((
            "NETWORK_ERROR".into(),
            format!(
                "Redirect loop: {} redirects back to {}, already fetched",
                server.url("/b"),
                server.url("/a")
            )
        ))
    );
    assert_eq!(server.hits(), 2);
}

#[test]
fn more_than_ten_redirects_are_refused() {
    let server = Server::start(|req| {
        let n: u32 = req.path.trim_start_matches('/').parse().unwrap_or(0);
        Reply::redirect(302, &format!("/{}", n + 1))
    });
    assert_eq!(
        fetch(&server.url("/0"), &allow("127.0.0.1")),
        Err((
            "NETWORK_ERROR".into(),
            format!(
                "Too many redirects: more than 10 from {}; the last went to {}",
                server.url("/0"),
                server.url("/11")
            )
        ))
    );
    assert_eq!(server.hits(), 11);
}

#[test]
fn request_headers_go_to_their_origin_only() {
    let other = Server::start(|_| Reply::ok("text/plain", "other"));
    let other_url = other.url("/");
    let server = Server::start(move |req| match req.path.as_str() {
        "/" => Reply::redirect(302, "/same"),
        "/same" => Reply::redirect(302, &other_url),
        _ => Reply::ok("text/plain", "x"),
    });
    let req = Request {
        url: &server.url("/"),
        headers: &[("X-Subscription-Token", "key")],
        accept: "application/json",
    };
    let fetched = get(&req, &allow("127.0.0.1")).unwrap();
    assert_eq!(fetched.body, b"other");
    let keys: Vec<Option<String>> = server
        .seen()
        .iter()
        .chain(other.seen().iter())
        .map(|s| s.header("x-subscription-token").map(str::to_owned))
        .collect();
    assert_eq!(keys, [Some("key".to_owned()), Some("key".to_owned()), None]);
    let seen = other.seen();
    assert_eq!(seen[0].header("accept"), Some("application/json"));
    assert_eq!(seen[0].header("accept-encoding"), Some("gzip, deflate, br"));
}

#[test]
fn an_error_status_is_answered_not_raised() {
    let server = hello();
    let fetched = fetch(&server.url("/missing"), &allow("127.0.0.1")).unwrap();
    assert_eq!((fetched.status, fetched.body), (404, b"no /missing".to_vec()));
}

#[test]
fn the_download_stops_at_the_bound_and_says_so() {
    let server = Server::start(|_| Reply::ok("text/plain", vec![b'x'; 4096]).endless());
    let bounded = policy(&[
        ("IKIGAI_TOOLS_FETCH_ALLOW", "127.0.0.1"),
        ("IKIGAI_TOOLS_FETCH_MAX_BYTES", "100000"),
    ]);
    let fetched = fetch(&server.url("/"), &bounded).unwrap();
    assert_eq!((fetched.body.len(), fetched.cut), (100000, Some(100000)));
    // A body of exactly the bound is not cut.
    let exact = Server::start(|_| Reply::ok("text/plain", vec![b'y'; 100000]).chunked(7000));
    let fetched = fetch(&exact.url("/"), &bounded).unwrap();
    assert_eq!((fetched.body.len(), fetched.cut), (100000, None));
}

#[test]
fn a_gzip_body_is_decoded_and_a_bomb_refused() {
    let page = "<p>compressed</p>".repeat(100);
    let body = page.clone();
    let server = Server::start(move |req| match req.path.as_str() {
        "/page" => Reply::gzip("text/html", body.as_bytes()),
        _ => Reply::gzip("text/html", &vec![0u8; 20 << 20]),
    });
    let bounded = policy(&[
        ("IKIGAI_TOOLS_FETCH_ALLOW", "127.0.0.1"),
        ("IKIGAI_TOOLS_FETCH_MAX_BYTES", "1048576"),
    ]);
    let fetched = fetch(&server.url("/page"), &bounded).unwrap();
    assert_eq!(fetched.body, page.as_bytes());
    assert_eq!(
        fetch(&server.url("/bomb"), &bounded),
        Err((
            "NETWORK_ERROR".into(),
            format!(
                "The gzip body of {} decompressed past 1048576 bytes: refused as a \
                 decompression bomb (IKIGAI_TOOLS_FETCH_MAX_BYTES bounds it)",
                server.url("/bomb")
            )
        ))
    );
}

#[test]
fn a_trickling_server_is_cut_off_by_the_timeout() {
    let server = Server::start(|_| {
        Reply::ok("text/plain", vec![b'.'; 40]).trickle(1, Duration::from_millis(100))
    });
    let quick =
        policy(&[("IKIGAI_TOOLS_FETCH_ALLOW", "127.0.0.1"), ("IKIGAI_TOOLS_FETCH_TIMEOUT", "1")]);
    let started = Instant::now();
    assert_eq!(
        fetch(&server.url("/"), &quick),
        Err((
            "NETWORK_ERROR".into(),
            format!(
                "Timed out fetching {}: the whole fetch may take 1 s (IKIGAI_TOOLS_FETCH_TIMEOUT)",
                server.url("/")
            )
        ))
    );
    let took = started.elapsed();
    assert!(took < Duration::from_millis(2500), "took {took:?}");
}

#[test]
fn tls_is_verified_and_the_ca_setting_adds_one() {
    let ca = TestCa::new();
    let server = Server::start_tls(&ca, |_| Reply::ok("text/plain", "over tls"));
    let ca_file = ca.ca_file();
    let trusted = policy(&[
        ("IKIGAI_TOOLS_FETCH_ALLOW", "127.0.0.1,localhost"),
        ("IKIGAI_TOOLS_FETCH_CA", ca_file.to_str().unwrap()),
    ]);
    for url in [server.url("/"), server.url_as("localhost", "/")] {
        assert_eq!(fetch(&url, &trusted).unwrap().body, b"over tls", "{url}");
    }
    assert_eq!(
        fetch(&server.url("/"), &allow("127.0.0.1")),
        Err((
            "NETWORK_ERROR".into(),
            "TLS failed for host 127.0.0.1: invalid peer certificate: UnknownIssuer \
             (IKIGAI_TOOLS_FETCH_CA names a CA file to trust besides the system's)"
                .into()
        ))
    );
    let missing = policy(&[("IKIGAI_TOOLS_FETCH_CA", "/nonexistent/ca.pem")]);
    assert_eq!(
        fetch(&server.url("/"), &missing),
        Err((
            "INVALID_ARG".into(),
            "IKIGAI_TOOLS_FETCH_CA=/nonexistent/ca.pem: No such file or directory (a PEM file \
             of CA certificates is needed)"
                .into()
        ))
    );
}

#[test]
fn ipv6_loopback_is_fetched_when_allowed() {
    let server = Server::start_v6(|_| Reply::ok("text/plain", "six"));
    let url = server.url("/");
    assert!(url.starts_with("http://[::1]:"), "{url}");
    assert_eq!(fetch(&url, &Policy::default()), Err(refusal("::1", "a loopback address")));
    assert_eq!(fetch(&url, &allow("::1/128")).unwrap().body, b"six");
}

#[test]
fn only_http_and_https_urls_without_credentials_are_fetched() {
    let none = Policy::default();
    assert_eq!(
        fetch("file:///etc/passwd", &none),
        Err((
            "INVALID_ARG".into(),
            "Unsupported URL scheme 'file' in 'file:///etc/passwd': only http:// and https:// \
             URLs are fetched"
                .into()
        ))
    );
    assert_eq!(
        fetch("https://user:pw@example.com/", &none),
        Err((
            "INVALID_ARG".into(),
            "URL 'https://***:***@example.com/' holds a user name or password: remove them \
             (the web tools send no credentials)"
                .into()
        ))
    );
}
