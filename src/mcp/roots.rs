//! The allowed roots of an MCP session (CONTRACT §7 last point, §8).
//!
//! They come from `mcp --root DIR` (or, without it, the server's own
//! `IKIGAI_TOOLS_ROOTS`), and are replaced by the client's `roots` where it
//! offers them: after `notifications/initialized` the server asks
//! `roots/list`, and asks again on `notifications/roots/list_changed`. A
//! call waits for the answer (at most [`ANSWER_WAIT`]), so that no call runs
//! with roots the client has just taken back, nor unconfined while they are
//! asked for. On the stateless revision (no session, no server-to-client
//! requests) the roots are asked per call with an `input_required` result.
//!
//! Each call's child gets them as `IKIGAI_TOOLS_ROOTS` (the tools confine
//! themselves from it), as the directories' real paths.
//!
//! An empty list from the client fails closed: every call is refused with
//! `PERMISSION_DENIED` until the client names a root. A client that cannot
//! answer `roots/list` leaves the command-line roots in force.

#![allow(deprecated)] // Roots are deprecated by SEP-2577 but still what hosts send.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ClientCapabilities, ListRootsResult, Root};
use rmcp::service::Peer;
use rmcp::RoleServer;
use tokio::sync::watch;

use crate::confine::Roots;

/// How long a call waits for the client's `roots/list` answer; also how
/// long the server waits for that answer before it gives up on it.
pub const ANSWER_WAIT: Duration = Duration::from_secs(10);

/// Directories the tools of a call are confined to, as the child's
/// `IKIGAI_TOOLS_ROOTS` carries them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed {
    /// The real paths, colon-separated.
    list: OsString,
}

impl Allowed {
    /// Opens every path as a root (it must be an existing directory) and
    /// keeps their real paths. A path holding `:` cannot travel in the
    /// colon-separated variable, and is refused.
    pub fn from_paths(paths: &[PathBuf]) -> Result<Allowed, String> {
        let roots = Roots::from_paths(paths).map_err(|e| e.message())?;
        let mut list = Vec::new();
        for root in roots.roots() {
            let path = root.path().as_os_str().as_bytes();
            if path.contains(&b':') {
                return Err(format!(
                    "allowed root {} holds a ':', which {} cannot carry; use a link to it \
                     without one",
                    root.path().display(),
                    crate::confine::ROOTS_VAR
                ));
            }
            if !list.is_empty() {
                list.push(b':');
            }
            list.extend_from_slice(path);
        }
        Ok(Allowed { list: OsString::from_vec(list) })
    }

    /// The value of `IKIGAI_TOOLS_ROOTS` for a call.
    pub fn env_value(&self) -> &std::ffi::OsStr {
        &self.list
    }
}

/// What a call runs under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confinement {
    /// No roots anywhere: as without confinement.
    Unconfined,
    Roots(Allowed),
    /// Confinement was asked for but names no usable directory: every call
    /// is refused, with this reason.
    Nothing(String),
}

/// The roots given at start: `--root DIR …`, or else `IKIGAI_TOOLS_ROOTS`
/// as the server found it. An error is one line for the command line.
pub fn from_command_line(paths: &[PathBuf]) -> Result<Confinement, String> {
    if !paths.is_empty() {
        return Allowed::from_paths(paths).map(Confinement::Roots);
    }
    let Some(list) = std::env::var_os(crate::confine::ROOTS_VAR) else {
        return Ok(Confinement::Unconfined);
    };
    let paths: Vec<PathBuf> = list
        .as_bytes()
        .split(|&b| b == b':')
        .filter(|entry| !entry.is_empty())
        .map(|entry| PathBuf::from(OsString::from_vec(entry.to_vec())))
        .collect();
    if paths.is_empty() {
        return Err(crate::confine::ConfineError::NoRoots.message());
    }
    Allowed::from_paths(&paths).map(Confinement::Roots)
}

/// Whether the client offers `roots`.
pub fn client_offers_roots(capabilities: Option<&ClientCapabilities>) -> bool {
    capabilities.is_some_and(|c| c.roots.is_some())
}

/// The session's roots: the command line's until the client answers.
#[derive(Clone)]
pub struct SessionRoots {
    command_line: Confinement,
    /// `None` while an answer of the client is awaited.
    current: Arc<watch::Sender<Option<Confinement>>>,
    /// Bumped at each question, so that an older answer arriving late never
    /// replaces a newer one.
    asked: Arc<AtomicU64>,
}

impl SessionRoots {
    pub fn new(command_line: Confinement) -> SessionRoots {
        SessionRoots {
            current: Arc::new(watch::Sender::new(Some(command_line.clone()))),
            command_line,
            asked: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The roots given at start.
    pub fn command_line(&self) -> Confinement {
        self.command_line.clone()
    }

    /// Asks the client for its roots unless that was done already.
    pub fn ask_once(&self, peer: &Peer<RoleServer>) {
        if self.asked.load(Ordering::SeqCst) == 0 {
            self.ask(peer);
        }
    }

    /// Asks the client for its roots (again); calls wait for the answer.
    pub fn ask(&self, peer: &Peer<RoleServer>) {
        let question = self.asked.fetch_add(1, Ordering::SeqCst) + 1;
        self.current.send_replace(None);
        let (peer, this) = (peer.clone(), self.clone());
        tokio::spawn(async move {
            let answer = tokio::time::timeout(ANSWER_WAIT, peer.list_roots()).await;
            let confinement = match answer {
                Ok(Ok(result)) => from_client(&result),
                Ok(Err(e)) => this.fall_back(&format!("roots/list failed: {e}")),
                Err(_) => this.fall_back(&format!(
                    "roots/list was not answered within {} s",
                    ANSWER_WAIT.as_secs()
                )),
            };
            this.current.send_if_modified(|current| {
                let newest = this.asked.load(Ordering::SeqCst) == question;
                if newest {
                    *current = Some(confinement);
                }
                newest
            });
        });
    }

    fn fall_back(&self, why: &str) -> Confinement {
        let now = match &self.command_line {
            Confinement::Roots(_) => "the command-line roots stay in force",
            _ => "no roots are in force",
        };
        eprintln!("ikigai-tools mcp: {why}; {now}");
        self.command_line.clone()
    }

    /// What the next call runs under, once any pending answer is in.
    pub async fn for_call(&self) -> Confinement {
        let mut current = self.current.subscribe();
        // The question itself gives up after ANSWER_WAIT (and falls back):
        // waiting a little longer sees its end.
        let wait = ANSWER_WAIT + Duration::from_secs(1);
        let answered = tokio::time::timeout(wait, current.wait_for(Option::is_some)).await;
        match answered {
            Ok(Ok(confinement)) => confinement.clone().unwrap_or(Confinement::Unconfined),
            _ => Confinement::Nothing(format!(
                "the MCP client has not answered roots/list within {} s, so no call runs",
                ANSWER_WAIT.as_secs()
            )),
        }
    }
}

/// The client's roots as a confinement: its `file://` roots that are
/// usable directories; others are named on stderr and left out. None left
/// (an empty list included) confines to nothing.
pub fn from_client(result: &ListRootsResult) -> Confinement {
    let paths: Vec<PathBuf> = result.roots.iter().filter_map(usable).collect();
    if paths.is_empty() {
        let why = if result.roots.is_empty() {
            "the MCP client's list of roots is empty".to_owned()
        } else {
            "none of the MCP client's roots is a usable local directory".to_owned()
        };
        eprintln!("ikigai-tools mcp: {why}; every call is refused until it names one");
        return Confinement::Nothing(format!(
            "{why}, so this session is confined to nothing; add a root in the client"
        ));
    }
    match Allowed::from_paths(&paths) {
        Ok(allowed) => Confinement::Roots(allowed),
        // Each one was checked alone; only a race can get here.
        Err(e) => Confinement::Nothing(e),
    }
}

/// The directory a client root names, if it is a usable one.
fn usable(root: &Root) -> Option<PathBuf> {
    let Some(path) = file_uri_path(&root.uri) else {
        eprintln!("ikigai-tools mcp: ignoring root {}: not a local file:// URI", root.uri);
        return None;
    };
    match Allowed::from_paths(std::slice::from_ref(&path)) {
        Ok(_) => Some(path),
        Err(e) => {
            eprintln!("ikigai-tools mcp: ignoring root {}: {e}", root.uri);
            None
        }
    }
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
        let err = Allowed::from_paths(std::slice::from_ref(&odd)).unwrap_err();
        assert!(err.starts_with(&format!("allowed root {} holds a ':'", real(&odd).display())));
    }

    #[test]
    fn roots_travel_as_real_paths_joined_by_colons() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir(&a).unwrap();
        std::fs::create_dir(&b).unwrap();
        std::os::unix::fs::symlink(&b, dir.path().join("link")).unwrap();
        let allowed = Allowed::from_paths(&[a.clone(), dir.path().join("link")]).unwrap();
        let expected = format!("{}:{}", real(&a).display(), real(&b).display());
        assert_eq!(allowed.env_value(), std::ffi::OsStr::new(&expected));
    }

    #[test]
    fn an_empty_client_list_confines_to_nothing() {
        let confinement = from_client(&ListRootsResult::new(vec![]));
        assert!(matches!(confinement, Confinement::Nothing(ref why) if why.contains("empty")));
        let remote = from_client(&ListRootsResult::new(vec![Root::new("https://x/y")]));
        assert!(matches!(remote, Confinement::Nothing(_)));
    }
}
