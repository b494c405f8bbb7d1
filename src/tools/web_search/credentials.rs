//! The Brave key from ikigai's credentials file (docs/TOOLS.md,
//! "web_search"): `~/.config/ikigai/credentials.json`, read as upstream
//! ikigai reads it: a flat object keyed by the variables' names
//! (`{"BRAVE_API_KEY": "…"}`), or the nested form upstream's older message
//! names (`{"web_search": {"brave": {"api_key": "…"}}}`). The environment's
//! key comes first (`settings`); an empty string counts as none.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Where the file is, under the user's home directory.
pub const CREDENTIALS_PATH: &str = ".config/ikigai/credentials.json";

/// The file of the user whose home is `home`.
pub fn path(home: &Path) -> PathBuf {
    home.join(CREDENTIALS_PATH)
}

/// The key the file at `path` holds for `name`: `Ok(None)` when there is no
/// file or no key in it; `Err` says why a file there could not be read,
/// for the message that asks for a key.
pub fn key(path: &Path, name: &str) -> Result<Option<String>, String> {
    let text = match std::fs::read(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read it: {e}")),
    };
    let root: Value =
        serde_json::from_slice(&text).map_err(|e| format!("it is not valid JSON: {e}"))?;
    let flat = root.get(name);
    let nested = root.get("web_search").and_then(|w| w.get("brave")).and_then(|b| b.get("api_key"));
    let found = [flat, nested]
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::trim)
        .find(|k| !k.is_empty());
    Ok(found.map(str::to_owned))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("credentials.json");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn the_flat_and_the_nested_forms_are_read() {
        let (_d, flat) = file(r#"{"OPENAI_API_KEY":"o","BRAVE_API_KEY":"b1"}"#);
        assert_eq!(key(&flat, "BRAVE_API_KEY"), Ok(Some("b1".into())));
        let (_d, nested) = file(r#"{"web_search":{"brave":{"api_key":"b2"}}}"#);
        assert_eq!(key(&nested, "BRAVE_API_KEY"), Ok(Some("b2".into())));
        let (_d, empty) = file(r#"{"BRAVE_API_KEY":"","web_search":{"brave":{"api_key":7}}}"#);
        assert_eq!(key(&empty, "BRAVE_API_KEY"), Ok(None));
    }

    #[test]
    fn no_file_is_no_key_and_a_broken_one_says_why() {
        assert_eq!(key(Path::new("/nonexistent/credentials.json"), "BRAVE_API_KEY"), Ok(None));
        let (_d, broken) = file("{ not json");
        let why = key(&broken, "BRAVE_API_KEY").unwrap_err();
        assert!(why.starts_with("it is not valid JSON: "), "{why}");
    }
}
