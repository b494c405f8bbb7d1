//! Every environment variable the binary reads, in one table: its name,
//! what it means, what holds when it is unset, and who reads it. `--help`'s
//! `Environment:` section is made from it (`cli::help`), and a test holds
//! the README's table (README.md, "Environment variables") to it.
//!
//! The names are the constants of the modules that read them; the two
//! without one (`TMPDIR`, `IKIGAI_LIBEXEC_DIR`) are named here.

use crate::confine::{CONFINE_VAR, NETWORK_VAR, ROOTS_FROM_VAR, ROOTS_VAR, ROOT_FDS_VAR};
use crate::context::{IMAGES_VAR, LOCK_WAIT_VAR, MAX_OUTPUT_VAR};
use crate::jobs::settings::{
    AGENT_VAR, RUNTIME_DIR_VAR, SESSION_VAR, STATE_DIR_VAR, TTL_VAR, YIELD_VAR,
};
use crate::mcp::{HTTP_LIMITS_VAR, TOKEN_VAR};
use crate::profile::PROFILE_VAR;
use crate::tools::web_search::settings::{BRAVE_KEY_VAR, PROVIDER_VAR, URL_VAR};
use crate::web::{ALLOW_VAR, CA_VAR, MAX_BYTES_VAR, TIMEOUT_VAR};

/// Where a confined command's private temporary directory and the jobs'
/// default state directory are made (`confine::temp`).
pub const TMPDIR_VAR: &str = "TMPDIR";
/// The first directory the host commands scan (`host::discover`).
pub const LIBEXEC_DIR_VAR: &str = "IKIGAI_LIBEXEC_DIR";

/// Who reads a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// These tools (schema names); every tool when empty.
    Tools(&'static [&'static str]),
    /// The host commands (catalog, check, call, list).
    Host,
    /// `ikigai-tools mcp` itself; its own `--help` names it.
    Server,
}

/// One environment variable.
#[derive(Debug)]
pub struct EnvVar {
    pub name: &'static str,
    /// What it means, one line.
    pub meaning: &'static str,
    /// What holds when it is unset (or who sets it); empty when nothing
    /// needs saying.
    pub default: &'static str,
    pub reader: Reader,
    /// Read in the full profile only (the jobs' variables).
    pub full_only: bool,
}

impl EnvVar {
    /// The meaning and, in parentheses, the default: `--help`'s text.
    pub fn text(&self) -> String {
        match self.default {
            "" => self.meaning.to_owned(),
            default => format!("{} ({default})", self.meaning),
        }
    }
}

const JOB_TOOLS: &[&str] = &["bash", "job_output", "job_kill", "job_list", "job_write"];
const WEB_TOOLS: &[&str] = &["web_fetch", "web_search"];

/// Every variable, in the order `--help` lists them.
pub const ENVIRONMENT: &[EnvVar] = &[
    EnvVar {
        name: MAX_OUTPUT_VAR,
        meaning: "The most bytes of an answer, escaping included; past it the output keeps \
                  its head and tail around a marker",
        default: "0: no limit; default 16 MiB, 65535 under the -tool names, 24000 under \
                  ikigai-tools mcp",
        reader: Reader::Tools(&[]),
        full_only: false,
    },
    EnvVar {
        name: ROOTS_VAR,
        meaning: "Confine the tool to these directories, colon-separated",
        default: "unset: not confined; set but naming none: every call refused",
        reader: Reader::Tools(&[]),
        full_only: false,
    },
    EnvVar {
        name: ROOT_FDS_VAR,
        meaning: "The open descriptors of those roots, which `ikigai-tools mcp` passes to its \
                  calls",
        default: "not set by hand",
        reader: Reader::Tools(&[]),
        full_only: false,
    },
    EnvVar {
        name: ROOTS_FROM_VAR,
        meaning: "Where those roots were given (`root`, `env`, `client`), which \
                  `ikigai-tools mcp` passes to its calls so that a refusal names the setting",
        default: "not set by hand",
        reader: Reader::Tools(&[]),
        full_only: false,
    },
    EnvVar {
        name: PROFILE_VAR,
        meaning: "`full` for the full profile's parameters and answers, `seed` for exactly the \
                  six seed schemas",
        default: "default: seed; full when the binary is ikigai-tools-full, as install.sh \
                  --profile full installs it; any case; another value is refused at start",
        reader: Reader::Tools(&[]),
        full_only: false,
    },
    EnvVar {
        name: IMAGES_VAR,
        meaning: "`1`, set by `ikigai-tools mcp` for its calls: in the full profile an image \
                  file is answered as image data",
        default: "not set by hand",
        reader: Reader::Tools(&["file_read"]),
        full_only: false,
    },
    EnvVar {
        name: NETWORK_VAR,
        meaning: "`on` lets a confined command open TCP connections",
        default: "shut by default",
        reader: Reader::Tools(&["bash"]),
        full_only: false,
    },
    EnvVar {
        name: CONFINE_VAR,
        meaning: "`outer`: the container is the boundary; where the kernel lacks a layer of \
                  bash's sandbox, a confined command runs under the others instead of being \
                  refused (`ikigai-tools doctor` lists them)",
        default: "unset: without Landlock or seccomp filters every confined command is refused",
        reader: Reader::Tools(&["bash"]),
        full_only: false,
    },
    EnvVar {
        name: TMPDIR_VAR,
        meaning: "Where a confined command's private temporary directory (ikigai-tools-UID) is \
                  made",
        default: "default /tmp",
        reader: Reader::Tools(&["bash"]),
        full_only: false,
    },
    EnvVar {
        name: LOCK_WAIT_VAR,
        meaning: "Seconds to wait for another change of the same file before giving up",
        default: "default 25",
        reader: Reader::Tools(&["file_write", "file_edit"]),
        full_only: false,
    },
    EnvVar {
        name: LIBEXEC_DIR_VAR,
        meaning: "The first directory that catalog, check, call and list scan with \
                  --default-dirs",
        default: "unset: the built-in tools",
        reader: Reader::Host,
        full_only: false,
    },
    EnvVar {
        name: YIELD_VAR,
        meaning: "Seconds after which a foreground command answers what it printed so far and \
                  runs on as a job",
        default: "0: never; default 20 by name, none under `ikigai-tools mcp`",
        reader: Reader::Tools(&["bash"]),
        full_only: true,
    },
    EnvVar {
        name: STATE_DIR_VAR,
        meaning: "Where jobs are kept: an absolute path, a directory of this user's, mode 0700, \
                  outside the allowed roots",
        default: "default $XDG_RUNTIME_DIR/ikigai-tools, else ikigai-tools-jobs-UID in the \
                  temporary directory",
        reader: Reader::Tools(JOB_TOOLS),
        full_only: true,
    },
    EnvVar {
        name: TTL_VAR,
        meaning: "Seconds a job lives without a job_output read before it is ended and removed",
        default: "default 86400",
        reader: Reader::Tools(JOB_TOOLS),
        full_only: true,
    },
    EnvVar {
        name: AGENT_VAR,
        meaning: "The agent whose jobs a call sees: each agent (and each MCP session) has its \
                  own",
        default: "",
        reader: Reader::Tools(JOB_TOOLS),
        full_only: true,
    },
    EnvVar {
        name: SESSION_VAR,
        meaning: "The MCP session whose jobs a call sees, which `ikigai-tools mcp` passes to \
                  its calls",
        default: "not set by hand",
        reader: Reader::Tools(JOB_TOOLS),
        full_only: true,
    },
    EnvVar {
        name: RUNTIME_DIR_VAR,
        meaning: "The user's runtime directory: the jobs' state directory is made in it when it \
                  is an absolute path",
        default: "unset: the temporary directory",
        reader: Reader::Tools(JOB_TOOLS),
        full_only: true,
    },
    EnvVar {
        name: ALLOW_VAR,
        meaning: "Hosts, IP addresses and CIDR ranges, comma-separated, that the web tools fetch \
                  although loopback, private or link-local",
        default: "unset: none of those ranges is ever connected to",
        reader: Reader::Tools(WEB_TOOLS),
        full_only: true,
    },
    EnvVar {
        name: CA_VAR,
        meaning: "A PEM file of CA certificates the web tools trust besides the system's",
        default: "unset: the system's only",
        reader: Reader::Tools(WEB_TOOLS),
        full_only: true,
    },
    EnvVar {
        name: MAX_BYTES_VAR,
        meaning: "The most bytes a fetch downloads, and decodes",
        default: "default 10485760, 10 MiB",
        reader: Reader::Tools(WEB_TOOLS),
        full_only: true,
    },
    EnvVar {
        name: TIMEOUT_VAR,
        meaning: "Seconds a whole fetch may take, redirects and body included",
        default: "default and most 25",
        reader: Reader::Tools(WEB_TOOLS),
        full_only: true,
    },
    EnvVar {
        name: PROVIDER_VAR,
        meaning: "The search provider: `brave` (Brave Search's API) or `searxng` (a SearXNG \
                  instance's JSON API)",
        default: "default brave",
        reader: Reader::Tools(&["web_search"]),
        full_only: true,
    },
    EnvVar {
        name: BRAVE_KEY_VAR,
        meaning: "The Brave Search API key (never a parameter)",
        default: "unset: the same name in ~/.config/ikigai/credentials.json",
        reader: Reader::Tools(&["web_search"]),
        full_only: true,
    },
    EnvVar {
        name: URL_VAR,
        meaning: "The search endpoint, trusted by the address check: the SearXNG instance, or \
                  a proxy in front of Brave's API",
        default: "unset: Brave's; required for searxng",
        reader: Reader::Tools(&["web_search"]),
        full_only: true,
    },
    EnvVar {
        name: TOKEN_VAR,
        meaning: "The bearer token `mcp --listen` requires, when --token-file is not given",
        default: "unset: no token; required off loopback",
        reader: Reader::Server,
        full_only: false,
    },
    EnvVar {
        name: HTTP_LIMITS_VAR,
        meaning: "The tests' shorter bounds of `mcp --listen` \
                  (`body=S,idle=S,connections=N,sessions=N,budget=BYTES`): not for use",
        default: "unset: the documented bounds",
        reader: Reader::Server,
        full_only: false,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_variable_is_listed_once_on_one_line() {
        let mut names: Vec<&str> = ENVIRONMENT.iter().map(|v| v.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ENVIRONMENT.len(), "a variable listed twice");
        for var in ENVIRONMENT {
            assert!(!var.meaning.is_empty(), "{}", var.name);
            for text in [var.meaning, var.default] {
                // One line, and no `|`: the README's table cell.
                assert!(!text.contains(['\n', '|']), "{}: {text:?}", var.name);
            }
        }
    }
}
