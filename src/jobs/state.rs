//! The state directory and the caller's namespace in it.
//!
//! `IKIGAI_TOOLS_STATE_DIR`, else `$XDG_RUNTIME_DIR/ikigai-tools`, else
//! `ikigai-tools-jobs-UID` in the temporary directory: not `ikigai-tools-UID`,
//! the private temporary directory a confined command may write
//! (`confine::temp`), where it could plant files in other agents' jobs. It is created mode 0700
//! when missing, and on every use it must be a directory (not a link) owned
//! by the caller with no access for anyone else: one that someone else
//! made, or opened to others, is refused, never repaired or trusted.
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

use super::Settings;
use crate::error::ToolError;
use crate::fs::digest::sha256_hex;

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
    /// state directory, checking both.
    pub fn open(settings: &Settings) -> Result<Namespace, ToolError> {
        let root = state_dir(settings);
        let root_fd = private_dir(None, &root)?;
        let name = namespace_name(settings);
        let fd = private_dir(Some(root_fd.as_fd()), Path::new(&name))?;
        Ok(Namespace { path: root.join(name), fd })
    }

    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The ids of the jobs in the namespace.
    pub fn ids(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.path) else { return vec![] };
        let mut ids: Vec<String> = entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|name| is_id(name))
            .collect();
        ids.sort();
        ids
    }

    /// The jobs being made (`new-ID`), which no call sees as jobs.
    pub fn unfinished(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.path) else { return vec![] };
        entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|name| name.strip_prefix(UNFINISHED).is_some_and(is_id))
            .collect()
    }
}

/// The prefix of a job's directory while it is made.
pub const UNFINISHED: &str = "new-";

/// The state directory `settings` name.
fn state_dir(settings: &Settings) -> PathBuf {
    if let Some(dir) = &settings.state_dir {
        return dir.clone();
    }
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(run) => Path::new(&run).join("ikigai-tools"),
        None => std::env::temp_dir()
            .join(format!("ikigai-tools-jobs-{}", rustix::process::geteuid().as_raw())),
    }
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

/// Opens the directory `name` (in `parent`, or as a path), creating it
/// mode 0700 if missing, and checks it is the caller's alone
/// (`fs::private_dir`).
fn private_dir(
    parent: Option<std::os::fd::BorrowedFd<'_>>,
    name: &Path,
) -> Result<OwnedFd, ToolError> {
    let at = parent.unwrap_or(rustix::fs::CWD);
    crate::fs::private_dir::open_exact_at(at, name).map_err(|why| {
        ToolError::PermissionDenied(format!(
            "job state directory {} {}; refusing to use it",
            name.display(),
            why.describe()
        ))
    })
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
