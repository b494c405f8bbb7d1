//! `ikigai-tools mcp`: the tools as a Model Context Protocol server on
//! stdio (docs/MCP.md). The async runtime starts here and only here, so the
//! tools' own start-up never pays for it.
//!
//! - `transport`: newline-delimited JSON-RPC on stdin/stdout;
//! - `server`: the rmcp handler (`tools/list`, `tools/call`, progress);
//! - `catalog`: the tools as listed, from the table (titles and hints included);
//! - `call`: one call as a child process of this binary, and stopping it;
//! - `spawner`: the process, forked before the runtime, that forks each call's;
//! - `anonymous_code`: the spawner's code as anonymous memory, which a fork maps;
//! - `roots`: the allowed roots of the session (`--root`, the client's);
//! - `text`: the text a model reads from a result;
//! - `image`: an image in an answer, sent as image content;
//! - `to_client`: a server request's shape, on every transport;
//! - `http`: the same server over streamable HTTP (`mcp --listen`).

mod anonymous_code;
mod call;
mod catalog;
mod http;
mod image;
mod roots;
mod server;
mod spawner;
mod text;
mod to_client;
mod transport;

use std::io::IsTerminal;

use rmcp::ServiceExt;

pub use call::CallSettings;
use call::Calls;
pub use http::{run as run_http, take_token, Options as HttpOptions, HTTP_LIMITS_VAR, TOKEN_VAR};
use roots::SessionRoots;
pub use roots::{from_command_line as roots_from_command_line, CommandLine};
use server::Server;
pub use spawner::{RunTool, Spawner};
use transport::StdioLines;

/// The subcommand, as its notices on stderr name it.
const COMMAND: &str = "mcp";

/// A notice of the server on stderr, `ikigai-tools mcp: message`, through
/// the one printer.
fn tell(message: impl std::fmt::Display) {
    crate::print::print_command_error(COMMAND, message);
}

/// What the server tells a person who started it at a terminal, who would
/// otherwise see a silent cursor: a client starts it, with its stdin and
/// stdout for the protocol (README, "MCP hosts"). On stderr: stdout is the
/// protocol's.
const AT_A_TERMINAL: &str = "an MCP server: JSON-RPC on stdin and stdout, waiting for an MCP \
     client to start it (e.g. claude mcp add ikigai-tools -- ikigai-tools mcp --root \"$PWD\"; \
     see docs/MCP.md); Ctrl-D or Ctrl-C stops it";

/// How a run of the server ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The client closed stdin (or said it was done): the normal end.
    InputClosed,
    /// The server could not start or serve (said on stderr).
    Failed,
    /// Stopped by this signal (SIGTERM, SIGINT, SIGHUP).
    Stopped(i32),
    /// The HTTP server stopped by this signal: its normal end (exit 0).
    Shutdown(i32),
}

/// The spawner of the calls' processes, started first thing in `ikigai-tools
/// mcp`: before the runtime starts its threads (only a process with one
/// thread forks safely), and before the server reads its own roots (a call's
/// process must find its roots as a new process does, not the server's).
/// Each call's process runs its tool by `run_tool`, the binary's entry.
pub fn start_spawner(run_tool: RunTool) -> Option<std::sync::Arc<Spawner>> {
    Spawner::start(run_tool)
        .inspect_err(|e| {
            tell(format_args!("cannot start the spawner ({e}); each call is spawned anew"))
        })
        .ok()
        .map(std::sync::Arc::new)
}

/// Serves MCP on stdin/stdout until stdin ends, the calls confined as the
/// command line says (see [`roots_from_command_line`]) until the client
/// names its own roots (within `--root`'s), every call run as `settings` say.
pub fn run(command_line_roots: CommandLine, settings: CallSettings) -> Ending {
    if std::io::stdin().is_terminal() {
        tell(AT_A_TERMINAL);
    }
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            tell(format_args!("cannot start: {e}"));
            return Ending::Failed;
        }
    };
    let code = runtime.block_on(serve(command_line_roots, settings));
    // A read of stdin may still sit in tokio's blocking pool: do not wait.
    runtime.shutdown_background();
    code
}

async fn serve(command_line_roots: CommandLine, settings: CallSettings) -> Ending {
    let calls = Calls::new(&settings);
    let profile = settings.profile;
    let (transport, stdin_closed) = StdioLines::new();
    let writer = transport.writer();
    let running = match Server::new(calls.clone(), SessionRoots::new(command_line_roots), profile)
        .serve(transport)
        .await
    {
        Ok(running) => running,
        Err(e) => {
            // stdin closed before `initialize`, or the handshake failed.
            tell(e);
            calls.shutdown_and_wait().await;
            flushed(&writer).await;
            return if stdin_closed.is_cancelled() { Ending::InputClosed } else { Ending::Failed };
        }
    };
    let cancel = running.cancellation_token();
    let code = tokio::select! {
        // MCP ends a stdio server by closing its stdin: stop every call now
        // rather than wait for them to answer a client that has gone.
        () = stdin_closed.cancelled() => Ending::InputClosed,
        // The next steps of that ending, or a user's ^C: the same.
        signal = stop_signal() => Ending::Stopped(signal),
        quit = running.waiting() => {
            if let Err(e) = quit {
                tell(e);
            }
            Ending::InputClosed
        }
    };
    calls.shutdown_and_wait().await;
    cancel.cancel();
    flushed(&writer).await;
    code
}

/// What is queued for stdout written, unless the client stopped reading.
async fn flushed(writer: &transport::Writer) {
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), writer.flushed()).await;
}

/// Waits for SIGTERM, SIGINT or SIGHUP; returns its number. A signal whose
/// handler cannot be installed is never waited for.
async fn stop_signal() -> i32 {
    use tokio::signal::unix::{signal, Signal, SignalKind};
    let watch = |kind: SignalKind| {
        signal(kind).inspect_err(|e| tell(format_args!("cannot watch a stop signal: {e}"))).ok()
    };
    async fn received(stream: &mut Option<Signal>) {
        match stream {
            Some(stream) => {
                stream.recv().await;
            }
            None => std::future::pending().await,
        }
    }
    let (mut term, mut int, mut hup) = (
        watch(SignalKind::terminate()),
        watch(SignalKind::interrupt()),
        watch(SignalKind::hangup()),
    );
    tokio::select! {
        () = received(&mut term) => libc::SIGTERM,
        () = received(&mut int) => libc::SIGINT,
        () = received(&mut hup) => libc::SIGHUP,
    }
}
