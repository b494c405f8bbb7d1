//! Which profile a run serves (docs/SPEC.md, "Profiles"): `seed`, exactly
//! the six schemas ikigai hosts were built against, or `full`, a strict
//! superset (more parameters, more fields in the answers). The table
//! (`tools::TOOLS`) holds both; this says which one is in force.
//!
//! In order: `IKIGAI_TOOLS_PROFILE` (`seed` or `full`); else the name of
//! the executable itself, `ikigai-tools-full` being the full profile (what
//! `install.sh --profile full` installs, so that a host needs no setting);
//! else `seed`. The MCP server serves `full` unless told `--profile seed`,
//! and hands its profile to every call in the variable.

use std::ffi::OsStr;

/// The variable that chooses the profile.
pub const PROFILE_VAR: &str = "IKIGAI_TOOLS_PROFILE";

/// The file name of a binary whose default profile is `full`: a hard link
/// (or copy) of `ikigai-tools` under this name.
pub const FULL_BINARY_NAME: &str = "ikigai-tools-full";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// The six seed schemas, byte for byte, and their answers.
    Seed,
    /// Every seed call still valid; new optional parameters and fields.
    Full,
}

impl Profile {
    /// The name a user writes: `seed`, `full`.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Seed => "seed",
            Profile::Full => "full",
        }
    }

    /// The profile a name means, if any.
    pub fn parse(name: &str) -> Option<Profile> {
        match name {
            "seed" => Some(Profile::Seed),
            "full" => Some(Profile::Full),
            _ => None,
        }
    }

    /// The profile in force for this process: the variable, else the
    /// executable's name, else `seed`. A value of the variable that names no
    /// profile is ignored rather than failing a `--schema` a host depends on.
    pub fn from_env() -> Profile {
        std::env::var_os(PROFILE_VAR)
            .and_then(|v| v.to_str().and_then(Profile::parse))
            .unwrap_or_else(Profile::of_executable)
    }

    /// The default of the executable itself: `full` for `ikigai-tools-full`.
    fn of_executable() -> Profile {
        match std::fs::read_link("/proc/self/exe") {
            Ok(path) if path.file_name() == Some(OsStr::new(FULL_BINARY_NAME)) => Profile::Full,
            _ => Profile::Seed,
        }
    }

    pub fn is_full(self) -> bool {
        self == Profile::Full
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_nothing_else_parses() {
        for profile in [Profile::Seed, Profile::Full] {
            assert_eq!(Profile::parse(profile.name()), Some(profile));
        }
        for other in ["", "Full", "FULL", " full", "seed ", "all"] {
            assert_eq!(Profile::parse(other), None, "{other:?}");
        }
    }
}
