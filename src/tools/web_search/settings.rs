//! Which search provider a call uses and how it reaches it (docs/TOOLS.md,
//! "web_search"), read from the environment when the tool runs, as the web
//! client's policy is:
//!
//! - `IKIGAI_TOOLS_SEARCH_PROVIDER`: `brave` (unset: brave) or `searxng`;
//! - `BRAVE_API_KEY`, else ikigai's credentials file (`credentials`): the
//!   key, never an argument (a command line is seen by every user);
//! - `IKIGAI_TOOLS_SEARCH_URL`: the endpoint, trusted by the web client's
//!   address check since the user set it: a SearXNG instance (required for
//!   searxng), or a proxy in front of Brave's API.

use std::path::PathBuf;

use crate::error::ToolError;

use super::credentials;

pub const PROVIDER_VAR: &str = "IKIGAI_TOOLS_SEARCH_PROVIDER";
pub const URL_VAR: &str = "IKIGAI_TOOLS_SEARCH_URL";
/// Upstream ikigai's name, in the environment and in the credentials file.
pub const BRAVE_KEY_VAR: &str = "BRAVE_API_KEY";

/// Brave's web search endpoint (its API's documentation).
pub const BRAVE_ENDPOINT: &str = "https://api.search.brave.com/res/v1/web/search";

/// The settings of one search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub provider: Provider,
    /// `IKIGAI_TOOLS_SEARCH_URL`, when set: the endpoint the user chose.
    pub configured: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Provider {
    Brave(Key),
    Searxng,
}

/// A key and where it came from, for a message that names the place.
#[derive(Clone, PartialEq, Eq)]
pub struct Key {
    pub value: String,
    pub from: KeySource,
}

impl std::fmt::Debug for Key {
    /// Never the key itself (a panic or a log line would show it).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key({:?})", self.from)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    Environment,
    File(PathBuf),
}

impl KeySource {
    /// Where the key was read, in the words of a message.
    pub fn told(&self) -> String {
        match self {
            KeySource::Environment => format!("{BRAVE_KEY_VAR} in the environment"),
            KeySource::File(path) => format!("{BRAVE_KEY_VAR} in {}", path.display()),
        }
    }
}

impl Settings {
    /// The settings of this process's environment.
    pub fn from_env() -> Result<Settings, ToolError> {
        let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        Settings::read(|name| std::env::var(name).ok(), home)
    }

    /// The settings `var` gives, the credentials file under `home`.
    pub fn read(
        var: impl Fn(&str) -> Option<String>,
        home: Option<PathBuf>,
    ) -> Result<Settings, ToolError> {
        let set = |name: &str| var(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        let configured = set(URL_VAR);
        let provider = match set(PROVIDER_VAR).map(|p| p.to_ascii_lowercase()).as_deref() {
            None | Some("brave") => Provider::Brave(brave_key(set(BRAVE_KEY_VAR), home)?),
            Some("searxng") if configured.is_some() => Provider::Searxng,
            Some("searxng") => return Err(ToolError::AuthMissing(searxng_needs_url())),
            Some(other) => return Err(ToolError::AuthMissing(not_a_provider(other))),
        };
        Ok(Settings { provider, configured })
    }

    /// The endpoint searched: the configured one, else Brave's.
    pub fn endpoint(&self) -> &str {
        self.configured.as_deref().unwrap_or(BRAVE_ENDPOINT)
    }
}

/// The key from the environment, else from the credentials file, else the
/// error that tells how to set one.
fn brave_key(env: Option<String>, home: Option<PathBuf>) -> Result<Key, ToolError> {
    if let Some(value) = env {
        return Ok(Key { value, from: KeySource::Environment });
    }
    let mut why = None;
    if let Some(home) = home {
        let path = credentials::path(&home);
        match credentials::key(&path, BRAVE_KEY_VAR) {
            Ok(Some(value)) => return Ok(Key { value, from: KeySource::File(path) }),
            Ok(None) => {}
            Err(e) => why = Some(format!("{} was not used: {e}", path.display())),
        }
    }
    Err(ToolError::AuthMissing(no_key(why.as_deref())))
}

/// AUTH_MISSING's message: every way to set a provider up, exactly.
pub fn no_key(why: Option<&str>) -> String {
    let mut message = format!(
        "web_search needs a search provider. Brave Search: set {BRAVE_KEY_VAR}=KEY in the \
         environment, or put {{\"{BRAVE_KEY_VAR}\": \"KEY\"}} in ~/{} (a free key: \
         https://brave.com/search/api/). Or a SearXNG of your own: set \
         {PROVIDER_VAR}=searxng and {URL_VAR}=http://HOST:PORT. Then search again.",
        credentials::CREDENTIALS_PATH
    );
    if let Some(why) = why {
        message.push_str(&format!(" ({why})"));
    }
    message
}

fn searxng_needs_url() -> String {
    format!(
        "{PROVIDER_VAR}=searxng needs {URL_VAR}: the address of your SearXNG instance \
         (e.g. http://127.0.0.1:8888), with json among its search formats"
    )
}

fn not_a_provider(name: &str) -> String {
    format!("{PROVIDER_VAR}={name} is not a search provider: set it to brave or searxng")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(vars: &[(&str, &str)], home: Option<PathBuf>) -> Result<Settings, ToolError> {
        let vars: Vec<(String, String)> =
            vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Settings::read(|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()), home)
    }

    #[test]
    fn brave_is_the_default_with_the_environment_key_first() {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join(credentials::CREDENTIALS_PATH);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, r#"{"BRAVE_API_KEY":"from-file"}"#).unwrap();
        let home = Some(home.path().to_path_buf());
        let env = read(&[("BRAVE_API_KEY", "from-env")], home.clone()).unwrap();
        let key = Key { value: "from-env".into(), from: KeySource::Environment };
        assert_eq!(env, Settings { provider: Provider::Brave(key), configured: None });
        assert_eq!(env.endpoint(), BRAVE_ENDPOINT);
        let from_file = read(&[("BRAVE_API_KEY", " ")], home).unwrap();
        let key = Key { value: "from-file".into(), from: KeySource::File(file) };
        assert_eq!(from_file.provider, Provider::Brave(key));
    }

    #[test]
    fn searxng_needs_its_url_and_other_names_are_refused() {
        let s = read(&[(PROVIDER_VAR, "SearXNG"), (URL_VAR, "http://127.0.0.1:8888")], None);
        let s = s.unwrap();
        assert_eq!(
            (s.provider.clone(), s.endpoint()),
            (Provider::Searxng, "http://127.0.0.1:8888")
        );
        let missing = read(&[(PROVIDER_VAR, "searxng")], None).unwrap_err();
        assert_eq!(missing, ToolError::AuthMissing(searxng_needs_url()));
        let other = read(&[(PROVIDER_VAR, "google")], None).unwrap_err();
        assert_eq!(other.code(), "AUTH_MISSING");
        assert_eq!(
            other.to_string(),
            "IKIGAI_TOOLS_SEARCH_PROVIDER=google is not a search provider: set it to brave or \
             searxng"
        );
    }

    #[test]
    fn no_key_tells_every_way_to_set_one_and_never_debug_prints_the_key() {
        let err = read(&[], None).unwrap_err();
        assert_eq!(err, ToolError::AuthMissing(no_key(None)));
        let key = Key { value: "secret".into(), from: KeySource::Environment };
        assert!(!format!("{key:?}").contains("secret"));
    }
}
