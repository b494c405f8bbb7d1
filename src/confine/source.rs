//! Where the roots in force were given, so that a refusal can name the
//! setting that changes them (docs/CONFINEMENT.md, "What a confined call is told").
//!
//! On the command line the roots are `IKIGAI_TOOLS_ROOTS`. An MCP call's
//! roots come from the server's `--root`, its own `IKIGAI_TOOLS_ROOTS`, or
//! the client's roots; the server says which in `IKIGAI_TOOLS_ROOTS_FROM`
//! beside the descriptors, and the call takes it out of its environment
//! with them (a command run by bash never sees it).

use super::roots::ROOTS_VAR;

/// The variable an MCP server sets for each confined call: where its roots
/// came from (`root`, `env`, `client`).
pub const ROOTS_FROM_VAR: &str = "IKIGAI_TOOLS_ROOTS_FROM";

/// Where the roots in force were given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `IKIGAI_TOOLS_ROOTS` of this process (a host's, or set by hand).
    Env,
    /// `ikigai-tools mcp --root DIR`.
    ServerFlag,
    /// The MCP server's own `IKIGAI_TOOLS_ROOTS`.
    ServerEnv,
    /// The MCP client's roots (`roots/list`).
    Client,
    /// An MCP server's call that did not say which (an older server).
    Server,
}

impl Source {
    /// The value of [`ROOTS_FROM_VAR`] that stands for this source (a
    /// server never sends `env-here`: that is the call's own variable).
    pub fn name(self) -> &'static str {
        match self {
            Source::Env => "env-here",
            Source::ServerFlag => "root",
            Source::ServerEnv => "env",
            Source::Client => "client",
            Source::Server => "server",
        }
    }

    /// The source a call's [`ROOTS_FROM_VAR`] names; roots passed by an MCP
    /// server without it are the server's, which of its settings unknown.
    pub fn from_name(name: Option<&std::ffi::OsStr>) -> Source {
        let all = [Source::Env, Source::ServerFlag, Source::ServerEnv, Source::Client];
        all.into_iter().find(|s| name.is_some_and(|n| n == s.name())).unwrap_or(Source::Server)
    }

    /// What sets the roots: `IKIGAI_TOOLS_ROOTS`, `the MCP client's roots`.
    pub fn setting(self) -> String {
        match self {
            Source::Env => ROOTS_VAR.to_owned(),
            Source::ServerFlag => "the MCP server's --root".to_owned(),
            Source::ServerEnv => format!("the MCP server's {ROOTS_VAR}"),
            Source::Client => "the MCP client's roots".to_owned(),
            Source::Server => "the MCP server's --root or the client's roots".to_owned(),
        }
    }

    /// What sets the roots, as a refusal ends: `IKIGAI_TOOLS_ROOTS sets
    /// them`, `the MCP client's roots set them`.
    pub fn sets_them(self) -> String {
        let setting = self.setting();
        let verb = if setting.ends_with("roots") { "set" } else { "sets" };
        format!("{setting} {verb} them")
    }

    /// Where the roots come from, for a listing of them.
    pub fn described(self) -> String {
        format!("from {}", self.setting())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_source_travels_by_its_name_and_an_unknown_one_is_the_servers() {
        for source in [Source::Env, Source::ServerFlag, Source::ServerEnv, Source::Client] {
            assert_eq!(Source::from_name(Some(std::ffi::OsStr::new(source.name()))), source);
        }
        assert_eq!(Source::from_name(None), Source::Server);
        assert_eq!(Source::from_name(Some(std::ffi::OsStr::new("x"))), Source::Server);
    }
}
