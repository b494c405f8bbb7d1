//! The bearer token of `mcp --listen`: read from `--token-file` or
//! `IKIGAI_TOOLS_MCP_TOKEN`, never the command line (which every user of
//! the machine can read in /proc), and checked in constant time.

use std::ffi::CStr;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use sha2::{Digest, Sha256};

/// The environment variable that may hold the token.
pub const TOKEN_VAR: &str = "IKIGAI_TOOLS_MCP_TOKEN";

/// The longest token file read: a token is a line, not a document.
const MAX_TOKEN_FILE: u64 = 4096;

/// The token a request must carry, as its digest: requests are compared
/// digest to digest, so that neither the time nor the length of the
/// comparison depends on how much of the token a guess got right.
pub struct Token(Vec<u8>);

impl Token {
    fn new(secret: &str) -> Result<Token, String> {
        if secret.is_empty() {
            return Err("the token is empty".to_owned());
        }
        if secret.chars().any(|c| c.is_control() || c == ' ') {
            return Err("the token holds a space or a control character".to_owned());
        }
        Ok(Token(Sha256::digest(secret.as_bytes()).to_vec()))
    }

    /// Whether an `Authorization` header's value is `Bearer` and the token.
    pub fn admits(&self, authorization: Option<&[u8]>) -> bool {
        let Some(value) = authorization else { return false };
        let Some(given) = strip_bearer(value) else { return false };
        let digest = Sha256::digest(given);
        let differing = digest.iter().zip(&self.0).fold(0u8, |acc, (a, b)| acc | (a ^ b));
        std::hint::black_box(differing) == 0
    }
}

/// The credentials after the scheme `Bearer` (case-insensitive, RFC 6750).
fn strip_bearer(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(7)?;
    if !scheme.eq_ignore_ascii_case(b"bearer ") {
        return None;
    }
    Some(rest.trim_ascii())
}

/// The token from `file` when given, else from the environment (then taken
/// out of it, so that no tool call inherits it); `None` when neither.
///
/// Called while the process has one thread, before the spawner is forked
/// and the runtime starts (`cli::host`): the variable's bytes are
/// overwritten where the kernel put them, which a thread reading the
/// environment at the same time could see half done.
pub fn load(file: Option<&Path>) -> Result<Option<Token>, String> {
    let from_env = std::env::var(TOKEN_VAR).ok().map(String::into_bytes);
    scrub_from_environment();
    let Some(file) = file else { return from_env.map(token_from).transpose() };
    if let Some(mut unused) = from_env {
        wipe(&mut unused);
    }
    read_file(file).map(Some)
}

/// Takes the token out of the environment, from libc's array and from the
/// block the kernel gave the process: `remove_var` edits only the array,
/// while /proc/PID/environ shows the block, and every process forked
/// without exec (the spawner) carries a copy of it. Each `NAME=value`
/// string is found through the array (an exec may pass it more than once),
/// taken out of it, then overwritten with zeros where it lies.
fn scrub_from_environment() {
    let prefix = format!("{TOKEN_VAR}=");
    let mut entries: Vec<*mut libc::c_char> = Vec::new();
    // SAFETY: `environ` is libc's null-terminated array of pointers to
    // NUL-terminated strings; the process has one thread (see `load`), so
    // nothing changes the array while it is walked.
    unsafe {
        let mut at = environ;
        while !at.is_null() && !(*at).is_null() {
            if CStr::from_ptr(*at).to_bytes().starts_with(prefix.as_bytes()) {
                entries.push(*at);
            }
            at = at.add(1);
        }
    }
    // Every entry of that name leaves the array (glibc and musl remove
    // them all); the strings themselves are left where they lie.
    std::env::remove_var(TOKEN_VAR);
    for entry in entries {
        // SAFETY: each pointer is to a NUL-terminated string of the
        // environment, writable (the kernel's block on the stack, or
        // memory libc allocated for a variable set in the process), which
        // the array no longer names, so no `getenv` reads it again; only
        // its bytes before the NUL are written, with one thread running.
        unsafe {
            let len = libc::strlen(entry);
            std::ptr::write_bytes(entry, 0, len);
        }
    }
}

extern "C" {
    /// libc's environment array (glibc and musl export it).
    static mut environ: *mut *mut libc::c_char;
}

/// The token of `secret`, whose bytes are then overwritten: no copy of the
/// token lingers in the heap once its digest is taken.
fn token_from(mut secret: Vec<u8>) -> Result<Token, String> {
    let made = match std::str::from_utf8(&secret) {
        Ok(text) => Token::new(text.trim_end_matches(['\n', '\r'])),
        Err(_) => Err("the token is not UTF-8".to_owned()),
    };
    wipe(&mut secret);
    made
}

/// Overwrites a copy of the token before it is freed.
fn wipe(secret: &mut [u8]) {
    secret.fill(0);
    // Not optimised away as a write to memory about to be freed.
    std::hint::black_box(secret);
}

/// Reads a token file: a regular file reached without following a final
/// symbolic link, readable by nobody but its owner and group, at most
/// [`MAX_TOKEN_FILE`] bytes, its one line without the line ending. Opened
/// without blocking: a FIFO (or a device) is refused at once rather than
/// waited on.
fn read_file(path: &Path) -> Result<Token, String> {
    let say = |what: String| format!("--token-file {}: {what}", path.display());
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => say("a symbolic link: name the file itself".to_owned()),
            _ => say(e.to_string()),
        })?;
    let meta = file.metadata().map_err(|e| say(e.to_string()))?;
    if !meta.is_file() {
        return Err(say(format!("not a regular file (a {})", kind(&meta))));
    }
    if meta.mode() & 0o004 != 0 {
        return Err(say(format!(
            "readable by every user (mode {:o}): chmod o-r it",
            meta.mode() & 0o7777
        )));
    }
    if meta.len() > MAX_TOKEN_FILE {
        return Err(say(format!("longer than {MAX_TOKEN_FILE} bytes: a token is one line")));
    }
    let mut text = Vec::new();
    // The size may change under the read: never more than the bound.
    file.take(MAX_TOKEN_FILE + 1).read_to_end(&mut text).map_err(|e| say(e.to_string()))?;
    if text.len() as u64 > MAX_TOKEN_FILE {
        wipe(&mut text);
        return Err(say(format!("longer than {MAX_TOKEN_FILE} bytes: a token is one line")));
    }
    token_from(text).map_err(say)
}

/// What a file that is not a regular one is, for the refusal.
fn kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_fifo() {
        "FIFO"
    } else if kind.is_dir() {
        "directory"
    } else if kind.is_socket() {
        "socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "device"
    } else {
        "special file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_bearer_token_itself_is_admitted() {
        let token = Token::new("s3cret").unwrap();
        assert!(token.admits(Some(b"Bearer s3cret")));
        assert!(token.admits(Some(b"bearer s3cret")));
        assert!(!token.admits(Some(b"Bearer s3cre")));
        assert!(!token.admits(Some(b"Bearer s3cret2")));
        assert!(!token.admits(Some(b"Basic s3cret")));
        assert!(!token.admits(Some(b"s3cret")));
        assert!(!token.admits(None));
    }

    #[test]
    fn an_empty_token_is_refused() {
        assert!(Token::new("").is_err());
        assert!(Token::new("a b").is_err());
    }
}
