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

    /// The profile a name means, in any case (`Full`), if any.
    pub fn parse(name: &str) -> Option<Profile> {
        [Profile::Seed, Profile::Full].into_iter().find(|p| p.name().eq_ignore_ascii_case(name))
    }

    /// The profile in force for this process: the variable, else the
    /// executable's name, else `seed`. A value of the variable that names no
    /// profile was refused at the start of the run (`check_env`); here it
    /// counts as unset.
    pub fn from_env() -> Profile {
        Profile::try_from_env().unwrap_or_else(|_| Profile::of_executable())
    }

    /// Refuses a value of the variable that names no profile: the start of
    /// every run (a call, `--schema`, the host commands, the MCP server).
    pub fn check_env() -> Result<(), BadProfile> {
        Profile::try_from_env().map(drop)
    }

    /// `from_env`, with a value that names no profile an error.
    fn try_from_env() -> Result<Profile, BadProfile> {
        match std::env::var_os(PROFILE_VAR) {
            Some(value) if !value.is_empty() => value
                .to_str()
                .and_then(Profile::parse)
                .ok_or_else(|| BadProfile(value.to_string_lossy().into_owned())),
            _ => Ok(Profile::of_executable()),
        }
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

/// A value of `IKIGAI_TOOLS_PROFILE` that names no profile; its message
/// is the one line a run refused for it prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadProfile(pub String);

impl std::fmt::Display for BadProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{PROFILE_VAR}={:?} names no profile: use seed or full", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_any_case_parse_and_nothing_else() {
        for profile in [Profile::Seed, Profile::Full] {
            assert_eq!(Profile::parse(profile.name()), Some(profile));
        }
        for (name, profile) in
            [("Full", Profile::Full), ("FULL", Profile::Full), ("SeEd", Profile::Seed)]
        {
            assert_eq!(Profile::parse(name), Some(profile), "{name:?}");
        }
        for other in ["", "ful", " full", "seed ", "all"] {
            assert_eq!(Profile::parse(other), None, "{other:?}");
        }
    }
}
