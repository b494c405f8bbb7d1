//! `ikigai-tools mcp --listen ADDR`: the same server over MCP's streamable
//! HTTP transport (rmcp's `StreamableHttpService` under hyper), at `/mcp`
//! (docs/MCP.md, "Over HTTP"). Around rmcp, this module adds what a server
//! reachable from a network needs: a bearer token, the access log, bounds
//! on what clients hold (connections, sessions, the time and bytes of
//! request bodies), and a shutdown that stops every session's calls.
//!
//! - `listen`: the address, and whether it is loopback;
//! - `auth`: the token, from a file or the environment;
//! - `limits`: the bounds, and the tests' knob;
//! - `connections`: how many are open at once;
//! - `body`: a request's body, within its size, time and the byte budget;
//! - `sessions`: a `Server` per session, ended with it, bounded, expired
//!   when idle;
//! - `sse`: the events of an SSE answer as clients read them;
//! - `access_log`: one line per request on stderr;
//! - `health`: `/healthz` and `/readyz`, for orchestrators.

mod access_log;
mod auth;
mod body;
mod connections;
mod health;
mod limits;
mod listen;
mod sessions;
mod sse;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Incoming};
use hyper::header::{HeaderValue, AUTHORIZATION, CONNECTION, RETRY_AFTER, WWW_AUTHENTICATE};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::call::{CallSettings, Calls};
use super::roots::{CommandLine, SessionRoots};
use super::server::Server;
use super::{stop_signal, tell, Ending};
use access_log::{Entry, Logged};
use body::Budget;
use connections::Connections;
use limits::Limits;
use sessions::Sessions;

pub use auth::TOKEN_VAR;
pub use auth::{load as take_token, Token};
pub use limits::TEST_VAR as HTTP_LIMITS_VAR;

/// The path of the MCP endpoint.
pub const ENDPOINT: &str = "/mcp";

/// The largest request body taken (413 above): 64 MiB, the bound of a
/// stdio line, so that a call that fits one transport fits the other (a
/// file_write of a big file is one request).
pub const MAX_REQUEST_BYTES: usize = 64 << 20;

/// How long the shutdown waits for open connections to finish their answer
/// once every call has been stopped.
const CONNECTIONS_GRACE: Duration = Duration::from_secs(2);
/// How long a connection may take to send a request's headers: a client
/// that opens connections and trickles bytes (slowloris) holds none longer.
/// It also bounds an idle keep-alive connection: hyper waits for the next
/// request's headers as for the first.
pub const HEADER_WAIT: Duration = Duration::from_secs(5);
/// The most bytes hyper buffers for a connection (its read buffer, where a
/// request's headers must fit, and its write queue): 64 KiB rather than
/// its ~400 KiB, so that many open connections cost little.
const CONNECTION_BUFFER: usize = 64 << 10;

/// What `mcp --listen` was told.
pub struct Options {
    pub listen: String,
    /// The token clients must send: [`take_token`]'s.
    pub token: Option<Token>,
    /// Browser origins allowed beside this machine's own (`--allow-origin`).
    pub allow_origins: Vec<String>,
}

/// Serves MCP over HTTP until SIGTERM, SIGINT or SIGHUP.
pub fn run(options: Options, command_line_roots: CommandLine, settings: CallSettings) -> Ending {
    let token = options.token;
    let addr = match listen::parse(&options.listen) {
        Ok(addr) => addr,
        Err(e) => {
            tell(format_args!("cannot start: {e}"));
            return Ending::Failed;
        }
    };
    if token.is_none() && !listen::is_loopback(&addr) {
        tell(format_args!(
            "refusing to listen on {addr} without a token: other machines can reach it. Put a \
             token in a file only you can read and pass --token-file FILE, or set {TOKEN_VAR}; \
             clients send it as `Authorization: Bearer TOKEN`"
        ));
        return Ending::Failed;
    }
    let limits = match Limits::from_env() {
        Ok(limits) => limits,
        Err(e) => {
            tell(format_args!("cannot start: {e}"));
            return Ending::Failed;
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            tell(format_args!("cannot start: {e}"));
            return Ending::Failed;
        }
    };
    let served = Served { token, allow_origins: options.allow_origins, limits };
    let ending = runtime.block_on(serve(addr, served, command_line_roots, settings));
    runtime.shutdown_timeout(Duration::from_millis(100));
    ending
}

/// How the server serves, beside the address and the calls' settings.
struct Served {
    token: Option<Token>,
    allow_origins: Vec<String>,
    limits: Limits,
}

/// What every request's handler shares.
struct Shared {
    service: StreamableHttpService<Server, LocalSessionManager>,
    token: Option<Token>,
    sessions: Arc<Sessions>,
    budget: Budget,
    limits: Limits,
    readiness: health::Readiness,
}

async fn serve(
    addr: SocketAddr,
    served: Served,
    command_line_roots: CommandLine,
    settings: CallSettings,
) -> Ending {
    let Served { token, allow_origins, limits } = served;
    let profile = settings.profile;
    let readiness = health::Readiness::new(&settings);
    let listener = match TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(e) => {
            tell(format_args!("cannot listen on {addr}: {e}"));
            return Ending::Failed;
        }
    };
    let bound = listener.local_addr().unwrap_or(addr);
    // The first line on stderr, which scripts and tests read the port from;
    // then what confinement lacks here, probed before the spawner's fork
    // (docs/CONFINEMENT.md, "What doctor reports").
    tell(format_args!(
        "listening on http://{}:{}{ENDPOINT}",
        listen::url_host(&bound),
        bound.port()
    ));
    for line in crate::confine::report::shared().missing_lines() {
        tell(line);
    }

    let stop = CancellationToken::new();
    let sessions = Arc::new(Sessions::new(limits.sessions));
    let factory_sessions = Arc::clone(&sessions);
    // Requests of the stateless revision come without a session, each to a
    // server of its own: their calls (and jobs) share one namespace, which
    // lives as long as the server does.
    let sessionless = Calls::new(&settings);
    let sessionless_guard = sessions.register(sessionless.clone());
    let factory = move || {
        let calls = Calls::new(&settings);
        let guard = Arc::new(factory_sessions.register(calls.clone()));
        let roots = SessionRoots::new(command_line_roots.clone()).with_listening(guard.clone());
        Ok(Server::new(calls, roots, profile)
            .with_guard(guard)
            .with_sessionless_calls(sessionless.clone()))
    };
    let config = rebinding_checks(StreamableHttpServerConfig::default(), &bound, allow_origins)
        .with_cancellation_token(stop.clone())
        .with_max_request_body_bytes(MAX_REQUEST_BYTES);
    // rmcp's keep-alive ends a session idle for 300 s even while a call or
    // a job of it runs: off, and `sessions` expires idle ones instead.
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = None;
    let manager = Arc::new(manager);
    let service = StreamableHttpService::new(factory, Arc::clone(&manager), config);
    let shared = Arc::new(Shared {
        service,
        token,
        sessions: Arc::clone(&sessions),
        budget: Budget::new(limits.budget),
        limits,
        readiness,
    });
    tokio::spawn(Arc::clone(&sessions).expire_idle(limits.idle, manager, stop.clone()));
    let connections = Connections::new(limits.connections);

    let graceful = GracefulShutdown::new();
    let signal = loop {
        let (stream, peer) = tokio::select! {
            signal = stop_signal() => break signal,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors, a connection reset before accept:
                    // the listener itself is fine.
                    tell(format_args!("accepting a connection: {e}"));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Some(open) = connections.admit() else {
            connections.refuse(stream, peer);
            continue;
        };
        let shared = Arc::clone(&shared);
        let handler = hyper::service::service_fn(move |request| {
            let shared = Arc::clone(&shared);
            async move { Ok::<_, Infallible>(handle(&shared, peer, request).await) }
        });
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(HEADER_WAIT)
            .max_buf_size(CONNECTION_BUFFER)
            .serve_connection(TokioIo::new(stream), handler);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            let _open = open;
            if let Err(e) = connection.await {
                if !e.is_incomplete_message() {
                    tell(format_args!("connection from {peer}: {e}"));
                }
            }
        });
    };
    drop(listener);
    tell(format_args!("stopping (signal {signal}): ending every session's calls"));
    stop.cancel();
    drop(sessionless_guard);
    sessions.end_all().await;
    let _ = tokio::time::timeout(CONNECTIONS_GRACE, graceful.shutdown()).await;
    Ending::Shutdown(signal)
}

/// DNS rebinding: a web page whose name was made to point at this machine
/// must not reach the server. rmcp checks `Host` on loopback (this
/// machine's names, and the address listened on) and `Origin` (present only from browsers:
/// this machine's own pages and `--allow-origin`'s) and answers 403.
fn rebinding_checks(
    config: StreamableHttpServerConfig,
    bound: &SocketAddr,
    allow_origins: Vec<String>,
) -> StreamableHttpServerConfig {
    let ip = bound.ip();
    let local = ["localhost".to_owned(), "127.0.0.1".to_owned(), "[::1]".to_owned()];
    let mut origins: Vec<String> = local
        .iter()
        .chain(std::iter::once(&listen::url_host(bound)))
        .flat_map(|host| [format!("http://{host}:*"), format!("https://{host}:*")])
        .collect();
    origins.extend(allow_origins);
    let config = config.with_allowed_origins(origins).enforce_origin_validation();
    if !listen::is_loopback(bound) {
        // Reached from elsewhere, by names not known here (a DNS name, a
        // container's, a tunnel's): the token, required off loopback and
        // which no rebound page has, is what guards it.
        return config.disable_allowed_hosts();
    }
    let local = ["localhost", "127.0.0.1", "::1"].map(str::to_owned);
    config.with_allowed_hosts(local.into_iter().chain(std::iter::once(ip.to_string())))
}

/// One request: the path, the token, the bounds, then rmcp.
async fn handle(shared: &Shared, peer: SocketAddr, request: Request<Incoming>) -> Response<Logged> {
    let mut entry = Entry::new(peer, request.method().as_str(), request.uri().path());
    if let Some(id) = request.headers().get(SESSION_ID) {
        entry.set_session(id.as_bytes());
    }
    let (response, held) = answer(shared, request, &mut entry).await;
    if let Some(id) = response.headers().get(SESSION_ID) {
        entry.set_session(id.as_bytes());
    }
    entry.status = response.status().as_u16();
    response.map(|body| Logged::new(body, entry, Box::new(held)))
}

type BoxBody = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// What a request holds until its answer has been sent.
#[derive(Default)]
struct Held {
    _bytes: Option<body::Held>,
    _activity: Option<sessions::Activity>,
}

async fn answer(
    shared: &Shared,
    request: Request<Incoming>,
    entry: &mut Entry,
) -> (Response<BoxBody>, Held) {
    let mut held = Held::default();
    let (method, path) = (request.method(), request.uri().path());
    if let Some(probe) = health::answer(&shared.readiness, method, path).await {
        return (probe, held);
    }
    if request.uri().path() != ENDPOINT {
        let text = format!("Not Found: the MCP endpoint is {ENDPOINT}");
        return (plain(StatusCode::NOT_FOUND, text), held);
    }
    if let Some(token) = &shared.token {
        let authorization = request.headers().get(AUTHORIZATION).map(HeaderValue::as_bytes);
        if !token.admits(authorization) {
            let mut response = plain(
                StatusCode::UNAUTHORIZED,
                "Unauthorized: a bearer token is required".to_owned(),
            );
            response.headers_mut().insert(
                WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"ikigai-tools mcp\""),
            );
            return (response, held);
        }
    }
    if parts_mix_eras(request.method(), request.headers()) {
        let text = format!(
            "Bad Request: a request of protocol revision {STATELESS} or later has no \
             session, so it cannot carry Mcp-Session-Id (it would run outside the \
             session's roots): send it without the header, or on the session's revision"
        );
        return (plain(StatusCode::BAD_REQUEST, text), held);
    }
    let session = request.headers().get(SESSION_ID).and_then(|id| id.to_str().ok());
    // GET without Last-Event-ID opens the standalone stream (a resumption
    // takes up a call's stream again).
    let stream =
        request.method() == hyper::Method::GET && !request.headers().contains_key("last-event-id");
    held._activity = session.and_then(|id| shared.sessions.begin(id, stream));
    // A declared length over the bound is refused before a byte is read.
    if request.body().size_hint().lower() > MAX_REQUEST_BYTES as u64 {
        return (too_large(), held);
    }
    let (parts, body) = request.into_parts();
    let wait = shared.limits.body_wait;
    let body = match body::read(body, MAX_REQUEST_BYTES, wait, &shared.budget).await {
        Ok((bytes, bytes_held)) => {
            held._bytes = Some(bytes_held);
            bytes
        }
        Err(refused) => return (refusal(refused), held),
    };
    if parts.method == hyper::Method::POST {
        entry.rpc = access_log::rpc_methods(&body);
    }
    // A new session takes a place, if one is left, while it is made.
    let mut slot = None;
    if parts.method == hyper::Method::POST && !parts.headers.contains_key(SESSION_ID) {
        if let Some(id) = initialize_id(&body) {
            match shared.sessions.reserve() {
                Some(reserved) => slot = Some(reserved),
                None => return (full(shared, id), held),
            }
        }
    }
    let deleting = (parts.method == hyper::Method::DELETE)
        .then(|| parts.headers.get(SESSION_ID).and_then(|id| id.to_str().ok()).map(str::to_owned))
        .flatten();
    let request = Request::from_parts(parts, Full::new(body));
    let (mut response, made) = sessions::noting_made(shared.service.handle(request)).await;
    let assigned = response.headers().get(SESSION_ID).and_then(|id| id.to_str().ok());
    if let (Some(made), Some(id)) = (made, assigned) {
        shared.sessions.name(made, id);
    }
    drop(slot);
    if let Some(id) = deleting.filter(|_| response.status().is_success()) {
        shared.sessions.deleted(&id);
        // Ended, not accepted for later: 200, as the SDKs' servers answer
        // (docs/MCP.md, "Over HTTP").
        *response.status_mut() = StatusCode::OK;
    }
    (sse::events(response), held)
}

fn too_large() -> Response<BoxBody> {
    plain(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("Payload Too Large: a request is at most {MAX_REQUEST_BYTES} bytes"),
    )
}

/// The answer to a body not taken. The connection is closed after it: the
/// rest of the body is not read.
fn refusal(refused: body::Refused) -> Response<BoxBody> {
    let mut response = match refused {
        body::Refused::TooLarge => too_large(),
        body::Refused::TooSlow(wait) => plain(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "Request Timeout: a request's body must arrive whole within {} s of its headers",
                wait.as_secs_f64()
            ),
        ),
        body::Refused::Busy(budget) => {
            let mut response = plain(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "Service Unavailable: the requests being answered hold {budget} bytes, the \
                     most this server holds at once; retry in a moment"
                ),
            );
            response.headers_mut().insert(RETRY_AFTER, HeaderValue::from_static("1"));
            response
        }
        body::Refused::Broken(e) => plain(StatusCode::BAD_REQUEST, format!("Bad Request: {e}")),
    };
    response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

/// The `id` of a body that is one `initialize` request (which makes a
/// session), read without copying the rest.
fn initialize_id(body: &[u8]) -> Option<serde_json::Value> {
    #[derive(serde::Deserialize)]
    struct Request<'a> {
        id: Option<serde_json::Value>,
        #[serde(borrow)]
        method: Option<&'a serde_json::value::RawValue>,
    }
    let request: Request = serde_json::from_slice(body).ok()?;
    (request.method?.get() == "\"initialize\"").then(|| request.id.unwrap_or_default())
}

/// The answer to an `initialize` when the most sessions are live: 503 and
/// a JSON-RPC error that says what to do.
fn full(shared: &Shared, id: serde_json::Value) -> Response<BoxBody> {
    let max = shared.sessions.max();
    let idle = shared.limits.idle.as_secs_f64();
    let message = format!(
        "The server is full: {max} sessions are open, the most it takes. End a session you no \
         longer use with DELETE /mcp (its Mcp-Session-Id header), or retry once one idle for \
         {idle} s has expired."
    );
    let error = serde_json::json!({"jsonrpc": "2.0", "id": id,
        "error": {"code": -32000, "message": message}});
    let mut response = Response::new(Full::new(Bytes::from(error.to_string())).boxed());
    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    let headers = response.headers_mut();
    headers.insert(hyper::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(RETRY_AFTER, HeaderValue::from_static("10"));
    response
}

/// The header that names a session.
const SESSION_ID: &str = "mcp-session-id";

/// The first revision without sessions.
const STATELESS: &str = "2026-07-28";

/// Whether a POST names a session and the stateless revision at once
/// (whose `_meta` rmcp requires the `MCP-Protocol-Version` header to match):
/// rmcp would serve it outside the session, under the roots it carries,
/// where every call of a session must run under the session's (docs/MCP.md,
/// "Confining a session"). It is refused.
fn parts_mix_eras(method: &hyper::Method, headers: &hyper::HeaderMap) -> bool {
    let revision = headers.get("mcp-protocol-version").and_then(|v| v.to_str().ok());
    method == hyper::Method::POST
        && headers.contains_key(SESSION_ID)
        && revision.is_some_and(|v| v >= STATELESS)
}

fn plain(status: StatusCode, text: String) -> Response<BoxBody> {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(hyper::header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}
