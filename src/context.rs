//! What one call of a tool runs with: the dialect it was called in (see
//! `protocol`) and the settings of its environment, read once by the front end
//! (`cli::dispatch`) and handed to the tool's `run`. No tool reads the
//! environment on its own, and nothing here is process-wide.
//!
//! - the output limit (docs/SPEC.md, "Output limit"): `IKIGAI_TOOLS_MAX_OUTPUT`
//!   bounds the whole answer a tool prints; 16 MiB by default, 65,535
//!   under the `-tool` names of current ikigai releases (which read no
//!   more), `0` for none; less than 1 KiB counts as 1 KiB;
//! - the allowed roots (docs/CONFINEMENT.md):
//!   `IKIGAI_TOOLS_ROOT_FDS` from an MCP server, else `IKIGAI_TOOLS_ROOTS`;
//! - whether a confined command keeps TCP: `IKIGAI_TOOLS_NETWORK=on`;
//! - how long a change waits for another change of the same file:
//!   `IKIGAI_TOOLS_LOCK_WAIT` (docs/TOOLS.md, `fs::lock`).
//!
//! - the profile (`crate::profile`): which parameters the call may use and
//!   which fields its answer carries;
//! - whether the answer may carry an image (file_read, full profile):
//!   `IKIGAI_TOOLS_IMAGES=1`, set by the MCP server for its calls, whose
//!   clients take image content; a command-line host reads text.

use std::time::Duration;

use crate::confine::{Roots, NETWORK_VAR};
use crate::error::ToolError;
use crate::limit::DEFAULT_MAX_OUTPUT;
use crate::profile::Profile;

pub const MAX_OUTPUT_VAR: &str = "IKIGAI_TOOLS_MAX_OUTPUT";
/// The default of `ikigai-tools mcp` (docs/MCP.md, "Answers sized for the
/// hosts"): under Claude Code's 25,000 tokens at one token a byte, the
/// worst case, and its 50,000 characters kept inline.
pub const MCP_MAX_OUTPUT: usize = 24_000;
/// The default under the `-tool` names (`file-read-tool`): current ikigai
/// releases read at most this much of an answer and call anything longer
/// invalid JSON.
const IKIGAI_TOOL_MAX_OUTPUT: usize = 65_535;
/// Smaller limits count as this much: room for the envelope, the marker
/// and some output.
const MIN_MAX_OUTPUT: usize = 1024;

/// Set to `1` by the MCP server for each call (`mcp::call`).
pub const IMAGES_VAR: &str = "IKIGAI_TOOLS_IMAGES";

pub const LOCK_WAIT_VAR: &str = "IKIGAI_TOOLS_LOCK_WAIT";
/// How long a change waits for another change of the same file: ours take
/// milliseconds to a second, but a hundred queued edits of a large file add
/// up. Past this the change answers an error rather than go ahead unlocked
/// (which would lose a change that answered success); it stays under the
/// 30 s a host gives a call.
const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(25);
/// The longest wait taken: a day.
const MAX_LOCK_WAIT_SECS: f64 = 86_400.0;

/// Where the argument object came from, which decides how errors end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// ikigai: arguments on stdin, always exit 0.
    Ikigai,
    /// shellclaw: arguments in `$1`, exit 1 on an error envelope.
    Shellclaw,
}

/// The settings of one call.
#[derive(Debug)]
pub struct Context {
    /// Where the arguments came from, which decides how errors end.
    pub dialect: Dialect,
    /// The limit on the answer's size; `None`: no limit. A tool gets its
    /// share through `answer_limit`.
    max_output: Option<usize>,
    /// The allowed roots (`None`: unconfined), or why the call is refused:
    /// told when the tool first needs them, after its arguments are checked.
    roots: Result<Option<Roots>, ToolError>,
    /// Whether a confined command keeps TCP.
    pub network: bool,
    /// How long a change waits for the lock on the file it changes.
    pub lock_wait: Duration,
    /// The profile the call is served in: the full profile's parameters
    /// and answer fields exist only there (docs/SPEC.md, "Profiles").
    pub profile: Profile,
    /// Whether an image file may be answered as an image (base64) rather
    /// than as text: only a client that shows images (MCP) asks.
    pub images: bool,
    /// Jobs (full profile): the yield, the state directory, the namespace,
    /// the time to live (`crate::jobs::Settings`).
    pub jobs: crate::jobs::Settings,
}

impl Context {
    /// The context of a call in `dialect` of the tool called by `name` (the
    /// file name of `argv[0]`, or the tool named after `ikigai-tools`), from
    /// this process's environment.
    pub fn from_env(name: &str, dialect: Dialect, profile: Profile) -> Context {
        Context {
            dialect,
            max_output: max_output(name),
            // Roots that cannot confine (none named, a missing one, a kernel
            // without openat2) refuse the call: never run unconfined.
            roots: Roots::from_env().map_err(|e| ToolError::PermissionDenied(e.message())),
            network: std::env::var_os(NETWORK_VAR).is_some_and(|v| v == "on"),
            lock_wait: parse_lock_wait(std::env::var(LOCK_WAIT_VAR).ok().as_deref()),
            profile,
            images: std::env::var_os(IMAGES_VAR).is_some_and(|v| v == "1"),
            jobs: crate::jobs::Settings::from_env(profile),
        }
    }

    /// What the bounded part of the answer (a tool's `output`, its
    /// `content`) may take: the limit less `reserve`, the most the answer's
    /// other fields take beyond `limit::ANSWER_RESERVE` (the envelope and
    /// the marker); `None`: no limit. The one way a tool learns the limit
    /// (docs/SPEC.md, "Output limit"), so that none forgets its reserve;
    /// `protocol::finish` tells an answer that still goes over. What it
    /// gives is the limit of the tool's `limit::Bounded::for_answer`.
    pub fn answer_limit(&self, reserve: usize) -> Option<usize> {
        self.max_output.map(|limit| limit.saturating_sub(reserve))
    }

    /// The limit on the whole answer, for its writer (`protocol::finish`):
    /// the error envelope it makes, and its check of every answer.
    pub fn whole_answer_limit(&self) -> Option<usize> {
        self.max_output
    }

    /// The allowed roots, `None` when there are none; an error refuses the
    /// call.
    pub fn roots(&self) -> Result<Option<&Roots>, ToolError> {
        self.roots.as_ref().map(Option::as_ref).map_err(Clone::clone)
    }
}

/// The output limit in force for a run called by `name`: `None` when there
/// is none. A value that is not a number is ignored in favour of the default
/// rather than lifting the bound. The host side reads it under the suite's
/// own name, for the tools it calls.
pub fn max_output(name: &str) -> Option<usize> {
    parse_limit(std::env::var(MAX_OUTPUT_VAR).ok().as_deref(), default_max_output(name))
}

/// The output limit of `ikigai-tools mcp`, which it gives each call:
/// `--max-output` (`flag`), else `IKIGAI_TOOLS_MAX_OUTPUT`, else
/// [`MCP_MAX_OUTPUT`], read as the variable is.
pub fn mcp_max_output(flag: Option<&str>) -> Option<usize> {
    let env = std::env::var(MAX_OUTPUT_VAR).ok();
    parse_limit(flag.or(env.as_deref()), MCP_MAX_OUTPUT)
}

/// The default limit of a run called by `name`: what current ikigai reads
/// under a `-tool` or `_tool` name.
fn default_max_output(name: &str) -> usize {
    if name.ends_with("-tool") || name.ends_with("_tool") {
        IKIGAI_TOOL_MAX_OUTPUT
    } else {
        DEFAULT_MAX_OUTPUT
    }
}

fn parse_limit(value: Option<&str>, default: usize) -> Option<usize> {
    match value.map(str::trim).map(str::parse::<u64>) {
        Some(Ok(0)) => None,
        Some(Ok(n)) => Some(usize::try_from(n).unwrap_or(usize::MAX).max(MIN_MAX_OUTPUT)),
        _ => Some(default),
    }
}

/// Seconds, at most a day; anything else is the default.
fn parse_lock_wait(value: Option<&str>) -> Duration {
    value
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(DEFAULT_LOCK_WAIT, |s| Duration::from_secs_f64(s.min(MAX_LOCK_WAIT_SECS)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_values() {
        let d = DEFAULT_MAX_OUTPUT;
        assert_eq!(parse_limit(None, d), Some(DEFAULT_MAX_OUTPUT));
        assert_eq!(parse_limit(Some("0"), d), None);
        assert_eq!(parse_limit(Some("100000"), d), Some(100_000));
        assert_eq!(parse_limit(Some("100"), d), Some(MIN_MAX_OUTPUT), "less than 1 KiB is 1 KiB");
        assert_eq!(parse_limit(Some("lots"), d), Some(DEFAULT_MAX_OUTPUT));
        assert_eq!(parse_limit(None, IKIGAI_TOOL_MAX_OUTPUT), Some(65_535));
    }

    #[test]
    fn the_tool_names_of_ikigai_default_to_what_it_reads() {
        for name in ["file-read-tool", "file_read_tool", "bash-tool"] {
            assert_eq!(default_max_output(name), IKIGAI_TOOL_MAX_OUTPUT, "{name}");
        }
        for name in ["file-read", "file_read", "bash", "ikigai-tools", ""] {
            assert_eq!(default_max_output(name), DEFAULT_MAX_OUTPUT, "{name}");
        }
    }

    #[test]
    fn lock_waits() {
        assert_eq!(parse_lock_wait(None), DEFAULT_LOCK_WAIT);
        assert_eq!(parse_lock_wait(Some(" 0.3 ")), Duration::from_millis(300));
        assert_eq!(parse_lock_wait(Some("0")), Duration::ZERO);
        assert_eq!(parse_lock_wait(Some("1e9")), Duration::from_secs(86_400));
        for bad in ["-1", "NaN", "inf", "soon", ""] {
            assert_eq!(parse_lock_wait(Some(bad)), DEFAULT_LOCK_WAIT, "{bad}");
        }
    }
}
