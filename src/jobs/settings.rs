//! The variables of jobs, read once by `Context::from_env`.

use std::path::PathBuf;
use std::time::Duration;

use crate::profile::Profile;

pub const YIELD_VAR: &str = "IKIGAI_TOOLS_YIELD";
pub const STATE_DIR_VAR: &str = "IKIGAI_TOOLS_STATE_DIR";
pub const TTL_VAR: &str = "IKIGAI_TOOLS_JOB_TTL";
/// The user's runtime directory (XDG Base Directory): the state
/// directory's default place.
pub const RUNTIME_DIR_VAR: &str = "XDG_RUNTIME_DIR";
pub const AGENT_VAR: &str = "IKIGAI_AGENT_ID";
/// Set by the MCP server for its calls: the session's own namespace.
pub const SESSION_VAR: &str = "IKIGAI_TOOLS_SESSION";

/// ikigai's hosts kill a tool at 30 s: a foreground command still running
/// at 20 s answers with what it printed and goes on as a job, leaving the
/// model 10 s of margin.
const DEFAULT_YIELD: Duration = Duration::from_secs(20);
/// A job nobody reads for a day is ended.
const DEFAULT_TTL: Duration = Duration::from_secs(24 * 3600);
/// The longest of either taken, and the longest `timeout` of a command: a
/// year.
const MAX_SECS: f64 = 365.0 * 86_400.0;
pub const LONGEST: Duration = Duration::from_secs(MAX_SECS as u64);

#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// `IKIGAI_TOOLS_STATE_DIR`, if set (a relative one is refused when
    /// used: `state`).
    pub state_dir: Option<PathBuf>,
    /// `XDG_RUNTIME_DIR`, if set to an absolute path: the XDG specification
    /// has a relative one ignored.
    pub runtime_dir: Option<PathBuf>,
    pub agent: Option<String>,
    pub session: Option<String>,
    /// How long a foreground command runs before it answers as a job;
    /// `None`: until it ends.
    pub yield_after: Option<Duration>,
    pub ttl: Duration,
}

impl Settings {
    pub fn from_env(profile: Profile) -> Settings {
        let var = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
        let session = var(SESSION_VAR);
        Settings {
            state_dir: std::env::var_os(STATE_DIR_VAR).filter(|v| !v.is_empty()).map(PathBuf::from),
            runtime_dir: std::env::var_os(RUNTIME_DIR_VAR)
                .map(PathBuf::from)
                .filter(|d| d.is_absolute()),
            agent: var(AGENT_VAR),
            yield_after: yield_after(var(YIELD_VAR).as_deref(), profile, session.is_some()),
            session,
            ttl: seconds(var(TTL_VAR).as_deref()).unwrap_or(DEFAULT_TTL),
        }
    }
}

/// The yield: the variable (`0`: none); else none over MCP (a session's
/// client waits as long as it likes, with progress) and 20 s for a tool
/// run by name in the full profile. The seed profile never yields.
fn yield_after(value: Option<&str>, profile: Profile, mcp: bool) -> Option<Duration> {
    if !profile.is_full() {
        return None;
    }
    match value.map(|v| seconds(Some(v))) {
        Some(Some(d)) if d.is_zero() => None,
        Some(Some(d)) => Some(d),
        _ if mcp => None,
        _ => Some(DEFAULT_YIELD),
    }
}

/// Seconds (fractions allowed), at most a year; `None` for anything else.
pub fn seconds(value: Option<&str>) -> Option<Duration> {
    value
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| Duration::from_secs_f64(s.min(MAX_SECS)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_yield_by_profile_and_host() {
        let full = Profile::Full;
        assert_eq!(yield_after(None, Profile::Seed, false), None);
        assert_eq!(yield_after(Some("1"), Profile::Seed, false), None);
        assert_eq!(yield_after(None, full, false), Some(DEFAULT_YIELD));
        assert_eq!(yield_after(None, full, true), None);
        assert_eq!(yield_after(Some("0.5"), full, true), Some(Duration::from_millis(500)));
        assert_eq!(yield_after(Some("0"), full, false), None);
        assert_eq!(yield_after(Some("soon"), full, false), Some(DEFAULT_YIELD));
    }
}
