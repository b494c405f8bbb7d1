//! The MCP request handler: `initialize` (rmcp negotiates every revision it
//! knows, and answers the stateless revision's `server/discover`), `ping`,
//! `tools/list` and `tools/call`, and the roots a client offers (asked after
//! `notifications/initialized` and on `notifications/roots/list_changed`, or
//! per call on the stateless revision). Unknown methods are rmcp's -32601.

// Roots are deprecated by SEP-2577 but still what hosts send.
#![allow(deprecated)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, Implementation, InitializeRequestParams, InitializeResult,
    InputRequest, InputRequiredResult, ListRootsRequest, ListRootsResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ProtocolVersion,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, Peer, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{json, Map, Value};
use tokio::sync::watch;

use super::call::{describe_exit, Calls, Ended, Finished};
use super::roots::{self, CommandLine, Confinement, SessionRoots};
use super::{catalog, image, tell, text};
use crate::profile::Profile;

/// How often a running call reports progress, when the request asks.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

#[derive(Clone)]
pub struct Server {
    calls: Calls,
    roots: SessionRoots,
    /// The profile whose tools are listed (and run: `Calls` hands it on).
    profile: Profile,
    /// Dropped with the last clone of the server (HTTP: the session's end,
    /// which stops its calls).
    _guard: Option<Arc<dyn std::any::Any + Send + Sync>>,
    /// The calls of requests outside any session (HTTP's stateless
    /// revision, a server per request): shared, so that a job outlives the
    /// request that started it. `None`: `calls`.
    sessionless: Option<Calls>,
    /// Set when this server answers `initialize`: it then serves a session.
    /// rmcp's `peer_info` cannot tell (over HTTP it makes one up for each
    /// request of the stateless revision, without the client's
    /// capabilities).
    handshake: Arc<AtomicBool>,
    /// Set when the client's `notifications/initialized` came: the server
    /// sends it no request before (docs/MCP.md, "Protocol").
    initialized: Arc<watch::Sender<bool>>,
}

impl Server {
    pub fn new(calls: Calls, roots: SessionRoots, profile: Profile) -> Server {
        Server {
            calls,
            roots,
            profile,
            _guard: None,
            sessionless: None,
            handshake: Arc::new(AtomicBool::new(false)),
            initialized: Arc::new(watch::Sender::new(false)),
        }
    }

    /// The server, holding `guard` until its last clone is dropped.
    pub fn with_guard(mut self, guard: Arc<dyn std::any::Any + Send + Sync>) -> Server {
        self._guard = Some(guard);
        self
    }

    /// The server, running requests outside a session with `calls`.
    pub fn with_sessionless_calls(mut self, calls: Calls) -> Server {
        self.sessionless = Some(calls);
        self
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(crate::BIN_NAME, env!("CARGO_PKG_VERSION")))
            .with_instructions(instructions(self.profile, self.roots.command_line()))
    }

    /// rmcp's own `initialize`, noting that this server now serves a session.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        // One handshake a session: a second would replace the client's
        // capabilities under the roots already asked for.
        if self.in_session() {
            return Err(McpError::invalid_request(
                "initialize was already answered in this session; a session has one handshake \
                 (start a new session for another)",
                None,
            ));
        }
        context.peer.set_peer_info(request.clone());
        let answer = self.negotiate_initialize(&request)?;
        self.handshake.store(true, Ordering::SeqCst);
        Ok(answer)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if offers_roots(&context.peer) {
            self.roots.ask_once(&context.peer);
        }
        self.initialized.send_replace(true);
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        // Asked before: the client declared roots in a request's `_meta`.
        if offers_roots(&context.peer) || self.roots.asked() {
            self.roots.ask(&context.peer);
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(catalog::all(self.profile, self.calls.max_output())))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        // `initialize` carrying only the stateless revision's `_meta` (no
        // `protocolVersion`): that revision has no `initialize`, so it is an
        // unknown method there, on either transport (the conformance suite's
        // `sep-2575-http-server-method-not-found-404-initialize`). A
        // dual-era client's full `initialize` never comes here.
        if request.method == "initialize" && stateless(&context) {
            let revision =
                context.meta.protocol_version().map(|v| v.to_string()).unwrap_or_default();
            return Err(McpError::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("Method not found: initialize (revision {revision} has none; use server/discover)"),
                None,
            ));
        }
        if SERVED.contains(&request.method.as_str()) {
            let hint = if request.method == "tools/call" {
                ": expected {\"name\": string, \"arguments\": object}"
            } else {
                ""
            };
            return Err(McpError::invalid_params(
                format!("malformed params for {}{hint}", request.method),
                None,
            ));
        }
        Err(McpError::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {}", request.method),
            None,
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(tool) = catalog::find(&request.name, self.profile) else {
            let known = crate::tools::of(self.profile).map(|t| t.name);
            return Err(McpError::invalid_params(
                crate::tools::near_miss::unknown_tool(&request.name, known),
                None,
            ));
        };
        let confinement = match self.confinement(&request, &context).await {
            Ok(confinement) => confinement,
            Err(ask_for_roots) => return Ok(ask_for_roots),
        };
        let allowed = match &confinement {
            Confinement::Unconfined => None,
            Confinement::Roots(allowed) => Some(allowed),
            Confinement::Nothing(why) => return Ok(refused(why).into()),
        };
        // Absent arguments are an empty object: the tool names what is missing.
        let args = Value::Object(request.arguments.unwrap_or_default()).to_string().into_bytes();
        let calls = match &self.sessionless {
            // The stateless revision has no sessions: its calls share the
            // sessionless namespace, inside a session too.
            Some(sessionless) if !self.in_session() || stateless(&context) => sessionless,
            _ => &self.calls,
        };
        let run = calls.run(tool, args, allowed, context.ct.clone());
        let ended = match context.meta.get_progress_token() {
            Some(token) => with_progress(run, &context.peer, token).await,
            None => run.await,
        };
        match ended {
            Ok(Ended::Finished(finished)) => Ok(result(tool.name, finished).into()),
            // rmcp sends nothing for a cancelled request; this error is only
            // seen if the cancellation came from the server's shutdown.
            Ok(Ended::Stopped) => Err(McpError::internal_error("the call was stopped", None)),
            Err(e) => Err(McpError::internal_error(format!("cannot run {}: {e}", tool.name), None)),
        }
    }
}

impl Server {
    /// Waits, at most [`roots::ANSWER_WAIT`], for `notifications/initialized`:
    /// a call that comes before it must not make the server ask `roots/list`
    /// first (the MCP lifecycle: no server request before it). `Err`: why
    /// the call is refused.
    async fn until_initialized(&self) -> Result<(), String> {
        let mut initialized = self.initialized.subscribe();
        let wait = roots::ANSWER_WAIT;
        let came = tokio::time::timeout(wait, initialized.wait_for(|&done| done)).await;
        match came.map(|seen| seen.is_ok()) {
            Ok(true) => Ok(()),
            _ => Err(format!(
                "the MCP client called a tool before sending notifications/initialized and did \
                 not send it within {} s, so no call runs: the server asks the client's roots \
                 only after it; send notifications/initialized once initialize is answered",
                wait.as_secs()
            )),
        }
    }

    /// Whether this server serves a session (one begun with `initialize`).
    fn in_session(&self) -> bool {
        self.handshake.load(Ordering::SeqCst)
    }

    /// The roots this call runs under (docs/MCP.md, "Confining a session").
    /// In a session, the session's: the client's answer to `roots/list`
    /// (asked now, once, if the client declares roots, at the handshake or
    /// in this request's `_meta`), else the command line's; a request
    /// carrying the stateless revision in its `_meta` changes nothing there.
    /// Without a session (the stateless revision, on either transport), a
    /// client declaring roots in the request's `_meta` is asked for them
    /// with an `input_required` result (`Err`), and the call comes back with
    /// them; one that declares none runs under the command line's.
    async fn confinement(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<Confinement, CallToolResponse> {
        let declares_roots =
            roots::client_offers_roots(context.meta.client_capabilities().as_ref());
        if self.in_session() {
            if declares_roots || offers_roots(&context.peer) {
                if let Err(why) = self.until_initialized().await {
                    return Ok(Confinement::Nothing(why));
                }
                self.roots.ask_once(&context.peer);
            }
            self.roots.ask_on_call_if_unheard(&context.peer, &context.id);
            return Ok(self.roots.for_call().await);
        }
        if !declares_roots {
            return Ok(self.roots.command_line().confinement());
        }
        let answer = request.input_responses.as_ref().and_then(|answers| answers.get(ROOTS_KEY));
        match answer {
            Some(answer) => Ok(match serde_json::from_value::<ListRootsResult>(answer.clone()) {
                Ok(list) => roots::from_client(&list, self.roots.command_line()),
                Err(e) => Confinement::Nothing(format!("the client's roots cannot be read: {e}")),
            }),
            None => Err(CallToolResponse::InputRequired(ask_for_roots())),
        }
    }
}

/// What the server tells the model it offers: the tools of its profile, by
/// name (the full profile's job tools among them), and the roots the calls
/// are confined to, or where they will come from (docs/MCP.md, "Confining
/// a session"), so that a model need not fail to learn them.
fn instructions(profile: Profile, roots: &CommandLine) -> String {
    let names: Vec<&str> = crate::tools::of(profile).map(|t| t.name).collect();
    let jobs = if profile.is_full() {
        " A bash command still running when its call answers goes on as a job: job_output \
         reads it, job_kill stops it, job_list lists them."
    } else {
        ""
    };
    // The roots in force can change once the client names its own.
    let ask =
        if profile.is_full() { " list_allowed_directories lists those in force." } else { "" };
    format!(
        "Tools to act on this machine: {}. Each call runs in a process of its own.{jobs} {}{ask}{}",
        names.join(", "),
        roots.described(),
        // Only where a layer is missing (docs/CONFINEMENT.md, "What doctor reports").
        crate::confine::report::shared().sentence()
    )
}

/// The key of the roots in an `input_required` exchange.
const ROOTS_KEY: &str = "roots";

fn ask_for_roots() -> InputRequiredResult {
    let question = InputRequest::ListRoots(ListRootsRequest::default());
    InputRequiredResult::new(Some([(ROOTS_KEY.to_owned(), question)].into()), None)
}

/// Whether the request comes on the stateless revision (2026-07-28 and
/// later), whose requests carry their protocol version in `_meta`.
fn stateless(context: &RequestContext<RoleServer>) -> bool {
    let version = context.meta.protocol_version();
    version.is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Whether the client of this session declared the `roots` capability.
fn offers_roots(peer: &Peer<RoleServer>) -> bool {
    roots::client_offers_roots(peer.peer_info().map(|info| info.capabilities.clone()).as_ref())
}

/// The answer to a call refused because the session is confined to
/// nothing: the tools' own `PERMISSION_DENIED` envelope.
fn refused(why: &str) -> CallToolResult {
    let error = crate::error::ToolError::PermissionDenied(why.to_owned());
    let envelope = json!({"error": error.to_string(), "error_code": error.code()});
    let answer = envelope.as_object().cloned().unwrap_or_default();
    let (text, _) = text::render(&answer);
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    result.structured_content = Some(Value::Object(answer));
    result
}

/// The methods this server serves. rmcp hands one whose params it cannot
/// read (`tools/call` without a `name`, `arguments` that are not an object)
/// to `on_custom_request`, as if the method were unknown.
const SERVED: [&str; 5] = ["initialize", "ping", "server/discover", "tools/list", "tools/call"];

/// Runs `call`, sending `notifications/progress` with the elapsed seconds
/// every [`PROGRESS_EVERY`] until it ends. The tool's output reaches the
/// server only when the tool ends, so progress counts time, not bytes.
async fn with_progress<F: std::future::Future>(
    call: F,
    peer: &Peer<RoleServer>,
    token: ProgressToken,
) -> F::Output {
    let started = Instant::now();
    let mut ticker =
        tokio::time::interval_at(tokio::time::Instant::now() + PROGRESS_EVERY, PROGRESS_EVERY);
    tokio::pin!(call);
    loop {
        tokio::select! {
            ended = &mut call => return ended,
            _ = ticker.tick() => {
                let secs = started.elapsed().as_secs_f64();
                let note = ProgressNotificationParam::new(token.clone(), secs)
                    .with_message(format!("running for {secs:.0} s"));
                if let Err(e) = peer.notify_progress(note).await {
                    tell(format_args!("sending progress: {e}"));
                }
            }
        }
    }
}

/// The result of a call whose child ended: its JSON object, or an error
/// result that says how the child died without answering.
fn result(name: &str, finished: Finished) -> CallToolResult {
    let mut answer = match serde_json::from_slice::<Value>(&finished.stdout) {
        Ok(Value::Object(answer)) => answer,
        _ => crashed(name, &finished),
    };
    // An image goes beside the text, and only there.
    let image = image::take(&mut answer);
    let (text, is_error) = text::render(&answer);
    let mut content = vec![ContentBlock::text(text)];
    content.extend(image);
    let mut result =
        if is_error { CallToolResult::error(content) } else { CallToolResult::success(content) };
    result.structured_content = structured(answer);
    result
}

/// The most bytes of `structuredContent`: the answer goes there only while
/// it is small, so that it never doubles a large message. The text carries
/// every field in any case (docs/MCP.md, "Answers sized for the hosts").
pub const STRUCTURED_MAX: usize = 4096;

/// The answer as `structuredContent`: the whole object while its JSON takes
/// at most [`STRUCTURED_MAX`] bytes, else none. Never a part of it: hosts
/// that find `structuredContent` give the model that alone (Claude Code,
/// Codex), so a part would hide the rest from it.
fn structured(answer: Map<String, Value>) -> Option<Value> {
    let answer = Value::Object(answer);
    let size = serde_json::to_vec(&answer).map_or(usize::MAX, |json| json.len());
    (size <= STRUCTURED_MAX).then_some(answer)
}

/// The envelope for a tool process that ended without an answer (a crash,
/// an abort, out of memory, killed).
fn crashed(name: &str, finished: &Finished) -> Map<String, Value> {
    let message =
        format!("the {name} process {} without an answer", describe_exit(finished.status));
    let envelope = json!({"error": message, "error_code": "TOOL_CRASHED"});
    envelope.as_object().cloned().unwrap_or_default()
}
