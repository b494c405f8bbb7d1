//! The state directory and the caller's namespace in it.
//!
//! `IKIGAI_TOOLS_STATE_DIR` (an absolute path: a relative one is refused),
//! else `$XDG_RUNTIME_DIR/ikigai-tools` (when that is absolute), else
//! `ikigai-tools-jobs-UID` in the temporary directory (`$TMPDIR` when
//! absolute, else `/tmp`): not `ikigai-tools-UID`, the private temporary
//! directory a confined command may write (`confine::temp`). It is created
//! mode 0700 when missing, and on every use it must be a directory (not a
//! link) owned by the caller with no access for anyone else: one the user
//! named that someone else made, or opened to others, is refused, never
//! repaired or trusted; a default name another user took first is passed
//! over for one of the user's own (`private_dir`).
//!
//! Nor may a confined command be able to write it: it could forge a job
//! there (naming any pid) or change another's. One that lies beneath an
//! allowed root of the call, or beneath the sandbox's private temporary
//! directory, or holds a root, is refused (`confine::reach`, by identity).
//!
//! Inside, one directory per namespace: the agent (`IKIGAI_AGENT_ID`) and
//! the MCP session (`IKIGAI_TOOLS_SESSION`), hashed, so that no name
//! chosen by a caller reaches a path. Inside that, a directory per job,
//! named by its id: 128 random bits in hex. Another namespace's jobs are
//! not there, and an id that is not 32 hex digits is never looked up:
//! either is `JOB_NOT_FOUND`.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use super::settings::{RUNTIME_DIR_VAR, STATE_DIR_VAR};
use super::Settings;
use crate::confine::{reach, temp, Roots};
use crate::error::ToolError;
use crate::fs::digest::sha256_hex;
use crate::private_dir::{self, PrivateDir, Refused};

/// A job id's length: 16 random bytes in hex.
pub const ID_LEN: usize = 32;

/// The caller's namespace, open.
#[derive(Debug)]
pub struct Namespace {
    path: PathBuf,
    fd: OwnedFd,
}

impl Namespace {
    /// Opens (creating it if need be) the namespace of `settings` in the
    /// state directory, checking both; refused when a confined command of
    /// `roots` (or any, through the private temporary directory) could
    /// write the state directory.
    pub fn open(settings: &Settings, roots: Option<&Roots>) -> Result<Namespace, ToolError> {
        let state = state_dir(settings)?;
        match reach::writable(state.fd.as_fd(), roots) {
            Ok(None) => {}
            Ok(Some(place)) => {
                return Err(ToolError::PermissionDenied(format!(
                    "job state directory {} {}, where a confined command may write (and forge \
                     or change jobs); set {STATE_DIR_VAR} (or {RUNTIME_DIR_VAR}) to a directory \
                     outside the allowed roots and the sandbox's temporary directory",
                    state.path.display(),
                    place.describe()
                )))
            }
            Err(e) => {
                return Err(ToolError::PermissionDenied(format!(
                "job state directory {}: where it lies cannot be told ({e}); refusing to use it",
                state.path.display()
            )))
            }
        }
        let name = namespace_name(settings);
        let fd = private_dir::open_exact_at(state.fd.as_fd(), Path::new(&name))
            .map_err(|why| refusal(&state.path.join(&name), &why))?;
        Ok(Namespace { path: state.path.join(name), fd })
    }

    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The ids of the jobs in the namespace.
    pub fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.names().into_iter().filter(|name| is_id(name)).collect();
        ids.sort();
        ids
    }

    /// The jobs being made (`new-ID`), which no call sees as jobs.
    pub fn unfinished(&self) -> Vec<String> {
        self.names()
            .into_iter()
            .filter(|name| name.strip_prefix(UNFINISHED).is_some_and(is_id))
            .collect()
    }

    /// The names in the namespace's directory, read through its descriptor.
    fn names(&self) -> Vec<String> {
        let Ok(dir) = rustix::fs::Dir::read_from(&self.fd) else { return vec![] };
        dir.filter_map(|e| e.ok()?.file_name().to_str().ok().map(str::to_owned)).collect()
    }
}

/// The prefix of a job's directory while it is made.
pub const UNFINISHED: &str = "new-";

/// Whether the state directory `settings` name can be used now (opened or
/// made, and checked as a call checks it, for a call with no roots): the
/// readiness of `mcp --listen` (docs/MCP.md, "Health and readiness").
pub fn is_usable(settings: &Settings) -> bool {
    state_dir(settings)
        .is_ok_and(|state| matches!(reach::writable(state.fd.as_fd(), None), Ok(None)))
}

/// The state directory `settings` name, open and checked (see the module
/// doc).
fn state_dir(settings: &Settings) -> Result<PrivateDir, ToolError> {
    if let Some(dir) = &settings.state_dir {
        if dir.is_relative() {
            return Err(ToolError::PermissionDenied(format!(
                "job state directory {}: {STATE_DIR_VAR} must be an absolute path (a relative \
                 one names another directory in each working directory); set it to one",
                dir.display()
            )));
        }
        let fd =
            private_dir::open_exact_at(rustix::fs::CWD, dir).map_err(|why| refusal(dir, &why))?;
        return Ok(PrivateDir { path: dir.clone(), fd });
    }
    let (base, name) = match &settings.runtime_dir {
        Some(run) => (run.clone(), "ikigai-tools".to_owned()),
        None => {
            (temp::base_dir(), format!("ikigai-tools-jobs-{}", rustix::process::geteuid().as_raw()))
        }
    };
    private_dir::open_own(&base, &name).map_err(|why| refusal(&base.join(&name), &why))
}

fn refusal(dir: &Path, why: &Refused) -> ToolError {
    ToolError::PermissionDenied(format!(
        "job state directory {} {}; refusing to use it",
        dir.display(),
        why.describe()
    ))
}

/// The namespace's directory name: `default`, or a hash of the agent and
/// the session.
fn namespace_name(settings: &Settings) -> String {
    match (&settings.agent, &settings.session) {
        (None, None) => "default".to_owned(),
        (agent, session) => {
            let text = format!(
                "agent:{}\0session:{}",
                agent.as_deref().unwrap_or(""),
                session.as_deref().unwrap_or("")
            );
            sha256_hex(text.as_bytes())[..ID_LEN].to_owned()
        }
    }
}

/// Whether `name` can be a job id: 32 lowercase hex digits.
pub fn is_id(name: &str) -> bool {
    name.len() == ID_LEN && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A new job id: 128 bits from the kernel's random source.
pub fn new_id() -> io::Result<String> {
    let mut bytes = [0u8; ID_LEN / 2];
    let mut filled = 0;
    while filled < bytes.len() {
        let rest = &mut bytes[filled..];
        // SAFETY: getrandom writes at most `rest.len()` bytes into `rest`.
        let n = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if n < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        filled += n as usize;
    }
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_32_hex_digits_and_differ() {
        let (a, b) = (new_id().unwrap(), new_id().unwrap());
        assert!(is_id(&a) && is_id(&b) && a != b);
        for bad in ["", "../x", &a.to_uppercase(), &a[1..], &format!("{a}0")] {
            assert!(!is_id(bad), "{bad}");
        }
    }

    #[test]
    fn namespaces_differ_by_agent_and_session() {
        let of = |agent: Option<&str>, session: Option<&str>| {
            namespace_name(&Settings {
                agent: agent.map(str::to_owned),
                session: session.map(str::to_owned),
                ..Settings::default()
            })
        };
        assert_eq!(of(None, None), "default");
        let names = [
            of(Some("a"), None),
            of(Some("b"), None),
            of(None, Some("a")),
            of(Some("a"), Some("s")),
        ];
        for (i, a) in names.iter().enumerate() {
            assert!(is_id(a));
            for b in &names[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }
}
