//! The allowed roots of an MCP session (docs/MCP.md, "Confining a session").
//!
//! Secure by default: the server confines every call to roots, or refuses
//! it. What the command line says ([`CommandLine`]):
//!
//! - `--root DIR` (or, without it, the server's own `IKIGAI_TOOLS_ROOTS`):
//!   calls are confined to these, and they are a ceiling: the client's
//!   `roots` replace them only with directories that are one of them or
//!   beneath one, decided by identity (walking `..` from the client's
//!   directory), never by name;
//! - `--unconfined`: the whole machine, on purpose, until the client names
//!   roots (then those confine);
//! - neither: only the client's roots confine; without them every call is
//!   refused, saying to pass `--root DIR` or `--unconfined`.
//!
//! In a session, after `notifications/initialized` the server asks
//! `roots/list`, and asks again on `notifications/roots/list_changed`. A
//! call waits for the answer (at most [`ANSWER_WAIT`]), so that no call runs
//! with roots the client has just taken back, nor unconfined while they are
//! asked for. Over HTTP, a client holding no GET stream open never sees
//! the question: a call asks it again on its own stream (docs/MCP.md, "Over
//! HTTP"). On the stateless revision (no session, no server-to-client
//! requests) the roots are asked per call with an `input_required` result.
//!
//! The session opens its roots once, by name (`Roots::from_paths`, which
//! refuses a root reached through another one), and holds them as
//! descriptors; each call's child inherits those descriptors
//! (`IKIGAI_TOOLS_ROOT_FDS`, the names in `IKIGAI_TOOLS_ROOTS`), so that
//! nothing a command does inside the roots changes what a later call's
//! roots are (docs/MCP.md, "Confining a session").
//!
//! Every path fails closed (docs/MCP.md, "Confining a session"): an empty list
//! from the client names no roots, so the command line's stay in force
//! (refused without `--root` or `--unconfined`); a list with no usable root,
//! or none within the `--root` ceiling, refuses every call; a `roots/list`
//! answered with an error, or not within [`ANSWER_WAIT`], refuses every call
//! until an answer arrives (a late answer to the same question counts),
//! never falling back to older or wider roots.

#![allow(deprecated)] // Roots are deprecated by SEP-2577 but still what hosts send.

use std::collections::HashSet;
use std::ffi::OsString;
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ClientResult, ListRootsRequest, ListRootsResult, RequestId, Root,
    ServerRequest,
};
use rmcp::service::{OriginatingRequestId, Peer, ServiceError};
use rmcp::RoleServer;
use tokio::sync::watch;

use super::tell;
use crate::confine::namespace::{identity, Identity};
use crate::confine::{Roots, Source};

/// How long a call waits for the client's `roots/list` answer; also how
/// long the server waits for that answer before it gives up on it.
pub const ANSWER_WAIT: Duration = Duration::from_secs(10);

/// Directories the tools of a call are confined to, held open by the
/// session and passed to each call's child as descriptors.
#[derive(Debug, Clone)]
pub struct Allowed {
    roots: Arc<Roots>,
    /// `IKIGAI_TOOLS_ROOTS` for a call: the names given, colon-separated.
    names: OsString,
    /// `IKIGAI_TOOLS_ROOT_FDS` for a call: the descriptors, in that order.
    fds: OsString,
}

impl PartialEq for Allowed {
    fn eq(&self, other: &Allowed) -> bool {
        Arc::ptr_eq(&self.roots, &other.roots)
    }
}

impl Eq for Allowed {}

impl Allowed {
    /// Opens every path as a root (it must be an existing directory, not
    /// reached through another root). A name holding `:` cannot travel in
    /// the colon-separated variable, and is refused.
    pub fn from_paths(paths: &[PathBuf], source: Source) -> Result<Allowed, String> {
        let roots = Roots::from_paths(paths).map_err(|e| e.message())?;
        Allowed::from_roots(roots.with_source(source))
    }

    /// The roots as a call's child receives them.
    pub fn from_roots(roots: Roots) -> Result<Allowed, String> {
        let (names, fds) = roots.env_values().map_err(|name| {
            format!(
                "allowed root {} holds a ':', which {} cannot carry; use a link to it \
                 without one",
                name.display(),
                crate::confine::ROOTS_VAR
            )
        })?;
        Ok(Allowed { roots: Arc::new(roots), names, fds })
    }

    /// The value of `IKIGAI_TOOLS_ROOTS` for a call.
    pub fn env_value(&self) -> &std::ffi::OsStr {
        &self.names
    }

    /// Where the roots were given: the call's `IKIGAI_TOOLS_ROOTS_FROM`.
    pub fn source(&self) -> Source {
        self.roots.source()
    }

    /// The value of `IKIGAI_TOOLS_ROOT_FDS` for a call.
    pub fn fds_value(&self) -> &std::ffi::OsStr {
        &self.fds
    }

    /// The roots' descriptors, in the order of `fds_value`, for the
    /// spawner to hand to a call's process.
    pub fn raw_fds(&self) -> Vec<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        self.roots.roots().iter().map(|root| root.fd().as_raw_fd()).collect()
    }

    /// The roots as messages name them: `/w/proj, /w/lib`.
    pub fn shown(&self) -> String {
        self.roots.shown()
    }

    /// Whether every one of these roots is one of `ceiling`'s or beneath
    /// one, by identity (see [`at_or_beneath`]).
    pub fn within(&self, ceiling: &Allowed) -> bool {
        let ids: HashSet<Identity> =
            ceiling.roots.roots().iter().filter_map(|root| identity(root.fd()).ok()).collect();
        self.roots.roots().iter().all(|root| at_or_beneath(root.fd(), &ids))
    }

    /// Lets the next child spawned inherit the roots' descriptors, until
    /// the guard is dropped (they are close-on-exec again then). The
    /// server spawns from one thread, so no other call's child sees them.
    pub fn inherited(&self) -> std::io::Result<Inheriting<'_>> {
        let guard = Inheriting(&self.roots);
        for root in self.roots.roots() {
            rustix::io::fcntl_setfd(root.fd(), rustix::io::FdFlags::empty())?;
        }
        Ok(guard)
    }
}

/// While it lives, the roots' descriptors are inherited across exec.
pub struct Inheriting<'r>(&'r Roots);

impl Drop for Inheriting<'_> {
    fn drop(&mut self) {
        for root in self.0.roots() {
            // Cannot fail on a descriptor held open; nothing to do if it did.
            let _ = rustix::io::fcntl_setfd(root.fd(), rustix::io::FdFlags::CLOEXEC);
        }
    }
}

/// What a call runs under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confinement {
    /// The whole machine: `--unconfined`, and the client named no roots.
    Unconfined,
    Roots(Allowed),
    /// No usable roots: every call is refused, with this reason.
    Nothing(String),
}

/// What the command line says about confinement (docs/MCP.md, "Confining
/// a session").
#[derive(Debug, Clone)]
pub enum CommandLine {
    /// `--root DIR …`, or `IKIGAI_TOOLS_ROOTS`: the calls' roots, and the
    /// ceiling of the client's.
    Roots(Allowed),
    /// `--unconfined`: the whole machine unless the client names roots.
    Unconfined,
    /// Neither: only the client's roots confine; without them, nothing runs.
    Neither,
}

impl CommandLine {
    /// What a call runs under while the client names no roots.
    pub fn confinement(&self) -> Confinement {
        match self {
            CommandLine::Roots(allowed) => Confinement::Roots(allowed.clone()),
            CommandLine::Unconfined => Confinement::Unconfined,
            CommandLine::Neither => Confinement::Nothing(format!(
                "the MCP server was started without --root and the client names no roots, so \
                 no call runs: {START_WITH}"
            )),
        }
    }
}

impl CommandLine {
    /// The roots a call will run under, as the instructions of
    /// `initialize` tell the model: they come before the client's roots.
    pub fn described(&self) -> String {
        match self {
            CommandLine::Roots(allowed) => format!(
                "Paths are confined to the allowed roots {} ({}); roots the client names \
                 replace them, within them.",
                allowed.shown(),
                allowed.source().described()
            ),
            CommandLine::Unconfined => "Paths are not confined (the server was started \
                                        --unconfined) until the client names roots."
                .to_owned(),
            CommandLine::Neither => "Paths are confined to the client's roots, asked for \
                                     after this handshake."
                .to_owned(),
        }
    }
}

/// What a refusal for want of any root tells the model to have done.
const START_WITH: &str = "start it as `ikigai-tools mcp --root DIR` to confine the tools to \
                          DIR, or as `ikigai-tools mcp --unconfined` to serve the whole machine \
                          on purpose";

/// The confinement the command line sets: `--root DIR …`, else
/// `IKIGAI_TOOLS_ROOTS` as the server found it, else `--unconfined`'s, else
/// none (every call refused until the client names roots). `--unconfined`
/// beside roots is refused: it cannot mean both. An error is one line for
/// the command line.
pub fn from_command_line(paths: &[PathBuf], unconfined: bool) -> Result<CommandLine, String> {
    if unconfined {
        if !paths.is_empty() {
            return Err("--unconfined cannot be used with --root: --root confines the tools to \
                        DIR, --unconfined serves the whole machine; pass one of them"
                .to_owned());
        }
        if std::env::var_os(crate::confine::ROOTS_VAR).is_some() {
            return Err(format!(
                "--unconfined cannot be used while {} is set, which confines the server to \
                 its directories; unset it, or drop --unconfined",
                crate::confine::ROOTS_VAR
            ));
        }
        return Ok(CommandLine::Unconfined);
    }
    if !paths.is_empty() {
        return Allowed::from_paths(paths, Source::ServerFlag).map(CommandLine::Roots);
    }
    match Roots::from_env() {
        Ok(None) => Ok(CommandLine::Neither),
        Ok(Some(roots)) => {
            Allowed::from_roots(roots.with_source(Source::ServerEnv)).map(CommandLine::Roots)
        }
        Err(e) => Err(e.message()),
    }
}

/// Whether the client offers `roots`.
pub fn client_offers_roots(capabilities: Option<&ClientCapabilities>) -> bool {
    capabilities.is_some_and(|c| c.roots.is_some())
}

/// Whether a server request unrelated to any call reaches the client now:
/// over HTTP, only while it holds the standalone stream (GET /mcp) open.
pub trait Listening: Send + Sync {
    fn listening(&self) -> bool;
}

/// The session's roots: the command line's until the client answers.
#[derive(Clone)]
pub struct SessionRoots {
    command_line: CommandLine,
    /// `None` while an answer of the client is awaited.
    current: Arc<watch::Sender<Option<Confinement>>>,
    /// Bumped at each question, so that an older answer arriving late never
    /// replaces a newer one.
    asked: Arc<AtomicU64>,
    /// The newest question the client answered (with roots or an error).
    answered: Arc<AtomicU64>,
    /// The newest question asked again on a call's stream: once, so that a
    /// client that answers on no stream waits 10 s once, not at every call.
    repeated: Arc<AtomicU64>,
    /// How many times a question went out: only the last one sent refuses
    /// calls when unanswered in time.
    sent: Arc<AtomicU64>,
    /// Over HTTP, whether the standalone stream is open; `None` on stdio,
    /// whose one stream always is.
    listening: Option<Arc<dyn Listening>>,
}

impl SessionRoots {
    pub fn new(command_line: CommandLine) -> SessionRoots {
        SessionRoots {
            current: Arc::new(watch::Sender::new(Some(command_line.confinement()))),
            command_line,
            asked: Arc::new(AtomicU64::new(0)),
            answered: Arc::new(AtomicU64::new(0)),
            repeated: Arc::new(AtomicU64::new(0)),
            sent: Arc::new(AtomicU64::new(0)),
            listening: None,
        }
    }

    /// The roots of an HTTP session, which may not hold its standalone
    /// stream open.
    pub fn with_listening(mut self, listening: Arc<dyn Listening>) -> SessionRoots {
        self.listening = Some(listening);
        self
    }

    /// What the command line says.
    pub fn command_line(&self) -> &CommandLine {
        &self.command_line
    }

    /// Whether the client was asked for its roots in this session.
    pub fn asked(&self) -> bool {
        self.asked.load(Ordering::SeqCst) > 0
    }

    /// Asks the client for its roots unless that was done already.
    pub fn ask_once(&self, peer: &Peer<RoleServer>) {
        if !self.asked() {
            self.ask(peer);
        }
    }

    /// Asks the client for its roots (again); calls wait for the answer.
    /// An error answer, or none within [`ANSWER_WAIT`], refuses every call
    /// until an answer arrives: never the roots in force before, which the
    /// client may just have taken back, nor the command line's, which may
    /// be wider (or none).
    pub fn ask(&self, peer: &Peer<RoleServer>) {
        let question = self.asked.fetch_add(1, Ordering::SeqCst) + 1;
        self.current.send_replace(None);
        let peer = peer.clone();
        self.await_answer(question, async move { peer.list_roots().await });
    }

    /// Asks the newest question again on the stream of the call `call`,
    /// once, if it is unanswered and the client holds no standalone stream
    /// open (over HTTP), where it went and never arrived: the streamable HTTP
    /// transport carries a server request related to a client's request on
    /// that request's own stream (docs/MCP.md, "Over HTTP").
    /// Either answer counts.
    pub fn ask_on_call_if_unheard(&self, peer: &Peer<RoleServer>, call: &RequestId) {
        let question = self.asked.load(Ordering::SeqCst);
        let unanswered = question > 0 && self.answered.load(Ordering::SeqCst) < question;
        let unheard = self.listening.as_ref().is_some_and(|stream| !stream.listening());
        if !unanswered
            || !unheard
            || self.repeated.fetch_max(question, Ordering::SeqCst) >= question
        {
            return;
        }
        // Refused for want of an answer so far: this call waits for this one.
        self.current.send_if_modified(|current| {
            let newest = self.asked.load(Ordering::SeqCst) == question;
            newest && current.take().is_some()
        });
        let mut request = ListRootsRequest::default();
        request.extensions.insert(OriginatingRequestId(call.clone()));
        let peer = peer.clone();
        self.await_answer(question, async move {
            match peer.send_request(ServerRequest::ListRootsRequest(request)).await? {
                ClientResult::ListRootsResult(result) => Ok(result),
                _ => Err(ServiceError::UnexpectedResponse),
            }
        });
    }

    /// Waits, on a task of its own, for the answer to `question`, and makes
    /// it the session's; none within [`ANSWER_WAIT`] refuses every call
    /// until it comes.
    fn await_answer<A>(&self, question: u64, answer: A)
    where
        A: std::future::Future<Output = Result<ListRootsResult, ServiceError>> + Send + 'static,
    {
        let this = self.clone();
        let copy = self.sent.fetch_add(1, Ordering::SeqCst) + 1;
        tokio::spawn(async move {
            tokio::pin!(answer);
            let answer = tokio::select! {
                answer = &mut answer => answer,
                () = tokio::time::sleep(ANSWER_WAIT) => {
                    // The same question, asked again on a call's stream, may
                    // have been answered there (that answer stays) or still
                    // be awaited there (that one refuses if it times out).
                    let last = this.sent.load(Ordering::SeqCst) == copy;
                    if last && this.answered.load(Ordering::SeqCst) < question {
                        let why = format!("did not answer roots/list within {} s", ANSWER_WAIT.as_secs());
                        this.publish(question, not_answered(&why));
                    }
                    // A late answer to this question still counts.
                    answer.await
                }
            };
            this.answered.fetch_max(question, Ordering::SeqCst);
            let confinement = match answer {
                Ok(result) => from_client(&result, &this.command_line),
                Err(e) => not_answered(&format!("answered roots/list with an error ({e})")),
            };
            this.publish(question, confinement);
        });
    }

    /// Makes `confinement` the session's, unless a newer question was asked
    /// since `question`.
    fn publish(&self, question: u64, confinement: Confinement) {
        self.current.send_if_modified(|current| {
            let newest = self.asked.load(Ordering::SeqCst) == question;
            if newest {
                *current = Some(confinement);
            }
            newest
        });
    }

    /// What the next call runs under, once any pending answer is in.
    pub async fn for_call(&self) -> Confinement {
        let mut current = self.current.subscribe();
        // The question itself stops waiting after ANSWER_WAIT (and refuses):
        // waiting a little longer sees that.
        let wait = ANSWER_WAIT + Duration::from_secs(1);
        let answered = tokio::time::timeout(wait, current.wait_for(Option::is_some)).await;
        match answered {
            Ok(Ok(confinement)) => confinement.clone().unwrap_or_else(|| {
                Confinement::Nothing("the session's roots are not known".to_owned())
            }),
            _ => not_answered(&format!(
                "did not answer roots/list within {} s",
                ANSWER_WAIT.as_secs()
            )),
        }
    }
}

/// The refusal while the client has not answered `roots/list`.
fn not_answered(why: &str) -> Confinement {
    tell(format_args!("the client {why}; every call is refused until it answers"));
    Confinement::Nothing(format!(
        "the MCP client {why}, so no call runs until it answers: the client must answer \
         roots/list (send notifications/roots/list_changed to be asked again)"
    ))
}

/// The client's roots as a confinement: its `file://` roots that are
/// usable directories, and, under `--root`, one of those directories or
/// beneath one; others are named on stderr and left out. An empty list
/// names no roots: the command line's confinement stays in force (refused
/// without `--root` or `--unconfined`; docs/MCP.md, "Confining a session").
/// A list with none usable, or none within the ceiling, confines to
/// nothing.
pub fn from_client(result: &ListRootsResult, command_line: &CommandLine) -> Confinement {
    if result.roots.is_empty() {
        if let CommandLine::Neither = command_line {
            tell(
                "the MCP client's list of roots is empty and neither --root nor --unconfined \
                 was given; every call is refused",
            );
            return Confinement::Nothing(format!(
                "the MCP client's list of roots is empty and the server was started without \
                 --root, so no call runs: {START_WITH}, or add a root in the client"
            ));
        }
        return command_line.confinement();
    }
    let usable: Vec<(&Root, PathBuf, Allowed)> = result.roots.iter().filter_map(usable).collect();
    if usable.is_empty() {
        let why = "none of the MCP client's roots is a usable local directory";
        tell(format_args!("{why}; every call is refused until it names one"));
        return Confinement::Nothing(format!(
            "{why}, so this session is confined to nothing; add a root in the client"
        ));
    }
    let ceiling = match command_line {
        CommandLine::Roots(ceiling) => Some(ceiling),
        CommandLine::Unconfined | CommandLine::Neither => None,
    };
    let mut paths = Vec::with_capacity(usable.len());
    let mut outside = Vec::new();
    for (root, path, opened) in usable {
        match ceiling {
            Some(ceiling) if !opened.within(ceiling) => {
                tell(format_args!(
                    "leaving out root {}: it is not within the --root ceiling ({})",
                    root.uri,
                    ceiling.shown()
                ));
                outside.push(root.uri.as_str());
            }
            _ => paths.push(path),
        }
    }
    if let (Some(ceiling), true) = (ceiling, paths.is_empty()) {
        tell("none of the MCP client's roots is within the --root ceiling; every call is refused");
        return Confinement::Nothing(format!(
            "the MCP client's roots ({}) are not within the directories the server was started \
             with (--root {}), which bound them, so no call runs: name one of those \
             directories, or one beneath it, as the client's root, or start the server with a \
             --root that holds the client's roots",
            outside.join(", "),
            ceiling.shown()
        ));
    }
    match Allowed::from_paths(&paths, Source::Client) {
        // Opened again, together: one renamed in between is refused, never
        // kept outside the ceiling.
        Ok(allowed) if ceiling.is_some_and(|ceiling| !allowed.within(ceiling)) => {
            Confinement::Nothing(
                "the MCP client's roots changed while they were opened, and one is no longer \
                 within the --root ceiling, so no call runs; send \
                 notifications/roots/list_changed to have them read again"
                    .to_owned(),
            )
        }
        Ok(allowed) => Confinement::Roots(allowed),
        // Each one was usable alone: together one is reached through
        // another, or a race.
        Err(e) => Confinement::Nothing(e),
    }
}

/// The directory a client root names, opened, if it is a usable one.
fn usable(root: &Root) -> Option<(&Root, PathBuf, Allowed)> {
    let Some(path) = file_uri_path(&root.uri) else {
        tell(format_args!("ignoring root {}: not a local file:// URI", root.uri));
        return None;
    };
    match Allowed::from_paths(std::slice::from_ref(&path), Source::Client) {
        Ok(opened) => Some((root, path, opened)),
        Err(e) => {
            tell(format_args!("ignoring root {}: {e}", root.uri));
            None
        }
    }
}

/// Whether `dir` is one of `ceiling` (by device and inode) or beneath one:
/// one of the directories walking `..` from it reaches before `/`
/// (`confine::reach::ancestry`). Identity, never names: `/w/proj_evil` is
/// not beneath `/w/proj`, and a directory reached through a link is where
/// the link led. Any failure counts as outside.
fn at_or_beneath(dir: BorrowedFd<'_>, ceiling: &HashSet<Identity>) -> bool {
    crate::confine::reach::ancestry(dir).is_ok_and(|ids| ids.iter().any(|id| ceiling.contains(id)))
}

/// The path of a `file://` URI on this machine (`file:///p`,
/// `file://localhost/p`), percent-decoded; `None` for anything else.
fn file_uri_path(uri: &str) -> Option<PathBuf> {
    let scheme_end = uri.find("://")?;
    if !uri[..scheme_end].eq_ignore_ascii_case("file") {
        return None;
    }
    let rest = &uri[scheme_end + 3..];
    let path = match rest.find('/') {
        Some(0) => rest,
        Some(i) if rest[..i].eq_ignore_ascii_case("localhost") => &rest[i..],
        _ => return None,
    };
    // A query or fragment is no part of a path.
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let bytes: Vec<u8> = percent_encoding::percent_decode_str(path).collect();
    Some(PathBuf::from(OsString::from_vec(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::path::Path;

    fn real(path: &Path) -> PathBuf {
        path.canonicalize().unwrap()
    }

    #[test]
    fn file_uris_become_paths_and_others_are_not_paths() {
        assert_eq!(file_uri_path("file:///w/my%20proj"), Some(PathBuf::from("/w/my proj")));
        assert_eq!(file_uri_path("FILE://localhost/w/p"), Some(PathBuf::from("/w/p")));
        assert_eq!(file_uri_path("file:///w/p?x#y"), Some(PathBuf::from("/w/p")));
        assert_eq!(file_uri_path("file://server/share"), None);
        assert_eq!(file_uri_path("https://example.com/w"), None);
        assert_eq!(file_uri_path("/w/p"), None);
    }

    #[test]
    fn a_root_holding_a_colon_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let odd = dir.path().join("a:b");
        std::fs::create_dir(&odd).unwrap();
        let err = Allowed::from_paths(std::slice::from_ref(&odd), Source::Client).unwrap_err();
        assert!(err.starts_with(&format!("allowed root {} holds a ':'", real(&odd).display())));
    }

    #[test]
    fn roots_travel_as_their_names_and_descriptors_joined_by_colons() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir(&a).unwrap();
        std::fs::create_dir(&b).unwrap();
        std::os::unix::fs::symlink(&b, dir.path().join("link")).unwrap();
        let allowed =
            Allowed::from_paths(&[a.clone(), dir.path().join("link")], Source::Client).unwrap();
        let expected = format!("{}:{}", a.display(), dir.path().join("link").display());
        assert_eq!(allowed.env_value(), std::ffi::OsStr::new(&expected));
        let fds: Vec<i32> =
            allowed.fds_value().to_str().unwrap().split(':').map(|n| n.parse().unwrap()).collect();
        assert_eq!(
            fds,
            allowed.roots.roots().iter().map(|r| r.fd().as_raw_fd()).collect::<Vec<_>>()
        );
        // Close-on-exec, but while a child is spawned.
        let cloexec = |fd: usize| rustix::io::fcntl_getfd(allowed.roots.roots()[fd].fd()).unwrap();
        assert_eq!(cloexec(0), rustix::io::FdFlags::CLOEXEC);
        let inheriting = allowed.inherited().unwrap();
        assert_eq!(cloexec(0), rustix::io::FdFlags::empty());
        assert_eq!(cloexec(1), rustix::io::FdFlags::empty());
        drop(inheriting);
        assert_eq!(cloexec(1), rustix::io::FdFlags::CLOEXEC);
    }

    #[test]
    fn an_empty_client_list_keeps_the_command_line_roots_and_without_them_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let allowed = Allowed::from_paths(&[dir.path().into()], Source::Client).unwrap();
        let empty = ListRootsResult::new(vec![]);
        let command_line = CommandLine::Roots(allowed.clone());
        assert_eq!(from_client(&empty, &command_line), Confinement::Roots(allowed));
        assert_eq!(from_client(&empty, &CommandLine::Unconfined), Confinement::Unconfined);
        let confinement = from_client(&empty, &CommandLine::Neither);
        assert!(
            matches!(confinement, Confinement::Nothing(ref why)
                if why.contains("ikigai-tools mcp --root DIR")
                    && why.contains("ikigai-tools mcp --unconfined")),
            "{confinement:?}"
        );
        let remote = ListRootsResult::new(vec![Root::new("https://x/y")]);
        assert!(matches!(from_client(&remote, &command_line), Confinement::Nothing(_)));
    }

    #[test]
    fn without_root_or_unconfined_nothing_runs_until_the_client_names_roots() {
        let Confinement::Nothing(why) = CommandLine::Neither.confinement() else {
            panic!("not a refusal")
        };
        assert!(why.contains("`ikigai-tools mcp --root DIR`"), "{why}");
        assert!(why.contains("`ikigai-tools mcp --unconfined`"), "{why}");
        let dir = tempfile::tempdir().unwrap();
        let list = ListRootsResult::new(vec![Root::new(file_uri(dir.path()))]);
        let Confinement::Roots(allowed) = from_client(&list, &CommandLine::Neither) else {
            panic!("the client's roots do not confine")
        };
        assert_eq!(allowed.shown(), real(dir.path()).display().to_string());
    }

    fn file_uri(path: &Path) -> String {
        format!("file://{}", path.display())
    }

    /// What `from_client` keeps of `offered` under the ceiling `ceiling`:
    /// the real paths of the roots, or the refusal.
    fn kept(ceiling: &Path, offered: &[&Path]) -> Result<String, String> {
        let ceiling =
            CommandLine::Roots(Allowed::from_paths(&[ceiling.into()], Source::Client).unwrap());
        let list = ListRootsResult::new(offered.iter().map(|p| Root::new(file_uri(p))).collect());
        match from_client(&list, &ceiling) {
            Confinement::Roots(allowed) => Ok(allowed.shown()),
            Confinement::Nothing(why) => Err(why),
            Confinement::Unconfined => panic!("unconfined under a ceiling"),
        }
    }

    #[test]
    fn client_roots_are_kept_only_at_or_beneath_the_ceiling_by_identity() {
        let dir = tempfile::tempdir().unwrap();
        let base = real(dir.path());
        let proj = base.join("proj");
        let (sub, evil, home) = (proj.join("sub"), base.join("proj_evil"), base.join("home"));
        for d in [&sub, &evil, &home] {
            std::fs::create_dir_all(d).unwrap();
        }
        // Links: one inside leading out, one outside leading in.
        std::os::unix::fs::symlink(&home, proj.join("out")).unwrap();
        std::os::unix::fs::symlink(&sub, base.join("in")).unwrap();
        let show = |p: &Path| p.display().to_string();
        assert_eq!(kept(&proj, &[&proj]), Ok(show(&proj)));
        assert_eq!(kept(&proj, &[&sub]), Ok(show(&sub)));
        assert_eq!(kept(&proj, &[&base.join("in")]), Ok(show(&sub)));
        assert_eq!(kept(&proj, &[&sub, &home]), Ok(show(&sub)));
        for outside in [&evil, &home, &base, &proj.join("out")] {
            let why = kept(&proj, &[outside]).unwrap_err();
            let expected = format!(
                "the MCP client's roots ({}) are not within the directories the server was \
                 started with (--root {}), which bound them",
                file_uri(outside),
                show(&proj)
            );
            assert!(why.starts_with(&expected), "{why}");
        }
    }

    #[test]
    fn a_ceiling_at_slash_holds_every_directory() {
        let dir = tempfile::tempdir().unwrap();
        let slash = Allowed::from_paths(&[PathBuf::from("/")], Source::Client).unwrap();
        let inner = Allowed::from_paths(&[dir.path().into()], Source::Client).unwrap();
        assert!(inner.within(&slash));
        assert!(!slash.within(&inner));
    }

    #[test]
    fn a_client_that_does_not_answer_is_refused_saying_so() {
        let Confinement::Nothing(why) = not_answered("did not answer roots/list within 10 s")
        else {
            panic!("not a refusal")
        };
        assert!(why.starts_with("the MCP client did not answer roots/list within 10 s, so no call"));
        assert!(why.contains("answer roots/list"), "{why}");
    }
}
