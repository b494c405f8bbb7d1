//! The bearer token of `mcp --listen`: read from `--token-file` or
//! `IKIGAI_TOOLS_MCP_TOKEN`, never the command line (which every user of
//! the machine can read in /proc), and checked in constant time.

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
pub fn load(file: Option<&Path>) -> Result<Option<Token>, String> {
    let from_env = std::env::var(TOKEN_VAR).ok();
    // Before any thread starts (the runtime starts after): the tools run
    // as children of this process, and bash must not be able to print it.
    std::env::remove_var(TOKEN_VAR);
    if let Some(file) = file {
        return read_file(file).map(Some);
    }
    from_env.map(|secret| Token::new(secret.trim_end_matches(['\n', '\r']))).transpose()
}

/// Reads a token file: a regular file reached without following a final
/// symbolic link, readable by nobody but its owner and group, its one line
/// without the line ending.
fn read_file(path: &Path) -> Result<Token, String> {
    let say = |what: String| format!("--token-file {}: {what}", path.display());
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| say(e.to_string()))?;
    let meta = file.metadata().map_err(|e| say(e.to_string()))?;
    if !meta.is_file() {
        return Err(say("not a regular file".to_owned()));
    }
    if meta.mode() & 0o004 != 0 {
        return Err(say(format!(
            "readable by every user (mode {:o}): chmod o-r it",
            meta.mode() & 0o7777
        )));
    }
    let mut text = String::new();
    file.take(MAX_TOKEN_FILE + 1).read_to_string(&mut text).map_err(|e| say(e.to_string()))?;
    if text.len() as u64 > MAX_TOKEN_FILE {
        return Err(say(format!("longer than {MAX_TOKEN_FILE} bytes")));
    }
    Token::new(text.trim_end_matches(['\n', '\r'])).map_err(say)
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
