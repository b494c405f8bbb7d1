//! What a grep call asks, read and type-checked once: every parameter of
//! the full schema (docs/TOOLS.md, grep), the seed profile's call being one
//! that leaves the full profile's parameters out (their defaults).
//!
//! Only the types are checked here; the patterns are compiled by what uses
//! them (`search::matcher`, `files`), after every parameter has been read.

use crate::error::ToolError;
use crate::protocol::Args;

/// What the answer lists (`output_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// The lines: `PATH:LINE: TEXT`, context lines `PATH-LINE- TEXT`.
    Content,
    /// The paths of the files that match.
    FilesWithMatches,
    /// `PATH:N`, N the matching lines of the file.
    Count,
}

/// A grep call's parameters, checked.
#[derive(Debug, Clone, Copy)]
pub(super) struct Request<'a> {
    pub(super) pattern: &'a str,
    /// Where to search; `None`: the current directory.
    pub(super) path: Option<&'a str>,
    /// Which files; `None` (absent or empty): all of them.
    pub(super) glob: Option<&'a str>,
    pub(super) mode: Mode,
    /// Lines of context before and after each match (`before`, `after`,
    /// else `context`, else none).
    pub(super) before: usize,
    pub(super) after: usize,
    pub(super) case_insensitive: bool,
    pub(super) fixed_strings: bool,
    /// Matches may span lines (`rg -U`).
    pub(super) multiline: bool,
    pub(super) hidden: bool,
    pub(super) no_ignore: bool,
    /// Entries skipped before the page.
    pub(super) offset: u64,
    /// Entries in the page; 0: no limit.
    pub(super) head_limit: u64,
}

impl<'a> Request<'a> {
    /// Reads every parameter, in the order whose first error is the one
    /// reported (the full profile's order, kept as it was).
    pub(super) fn parse(args: &'a Args) -> Result<Self, ToolError> {
        let pattern = args.required_str("pattern")?;
        let path = args.optional_path("path")?;
        let glob = args.optional_str("glob")?.filter(|g| !g.is_empty());
        let mode = match args.optional_str("output_mode")? {
            None | Some("content") => Mode::Content,
            Some("files_with_matches") => Mode::FilesWithMatches,
            Some("count") => Mode::Count,
            Some(other) => {
                return Err(ToolError::InvalidArg(format!(
                "parameter output_mode must be content, files_with_matches or count, not {other:?}"
            )))
            }
        };
        let both = args.optional_count("context")?;
        let before = args.optional_count("before")?.or(both).unwrap_or(0);
        let after = args.optional_count("after")?.or(both).unwrap_or(0);
        let multiline = args.optional_bool("multiline")?.unwrap_or(false);
        let offset = args.optional_count("offset")?.unwrap_or(0);
        let head_limit = args.optional_count("head_limit")?.unwrap_or(0);
        let hidden = args.optional_bool("hidden")?.unwrap_or(false);
        let no_ignore = args.optional_bool("no_ignore")?.unwrap_or(false);
        let case_insensitive = args.optional_bool("case_insensitive")?.unwrap_or(false);
        let fixed_strings = args.optional_bool("fixed_strings")?.unwrap_or(false);
        Ok(Request {
            pattern,
            path,
            glob,
            mode,
            before: usize::try_from(before).unwrap_or(usize::MAX),
            after: usize::try_from(after).unwrap_or(usize::MAX),
            case_insensitive,
            fixed_strings,
            multiline,
            hidden,
            no_ignore,
            offset,
            head_limit,
        })
    }

    /// Whether lines of context are printed (and `--` between groups).
    pub(super) fn has_context(&self) -> bool {
        self.mode == Mode::Content && (self.before > 0 || self.after > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<Request<'static>, String> {
        let args = Box::leak(Box::new(Args::parse(json.as_bytes()).unwrap()));
        Request::parse(args).map_err(|e| e.to_string())
    }

    /// The seed profile's call is the full request with its defaults.
    #[test]
    fn absent_parameters_take_their_defaults() {
        let r = parse(r#"{"pattern":"x","glob":"","path":""}"#).unwrap();
        assert_eq!((r.pattern, r.path, r.glob), ("x", None, None));
        assert_eq!(r.mode, Mode::Content);
        assert_eq!((r.before, r.after, r.offset, r.head_limit), (0, 0, 0, 0));
        assert!(!(r.case_insensitive || r.fixed_strings || r.multiline || r.hidden || r.no_ignore));
        assert!(!r.has_context());
    }

    #[test]
    fn context_is_the_default_of_before_and_after() {
        let r = parse(r#"{"pattern":"x","context":2,"after":5}"#).unwrap();
        assert_eq!((r.before, r.after), (2, 5));
        assert!(r.has_context());
        let r = parse(r#"{"pattern":"x","context":2,"output_mode":"count"}"#).unwrap();
        assert!(!r.has_context(), "context lines are printed in content mode only");
    }

    /// Every parameter of the full schema is read, and the first wrong one (in the order of
    /// `parse`) is the one reported.
    #[test]
    fn the_first_wrong_parameter_is_reported() {
        let all = [
            ("pattern", "1", "parameter pattern must be a string"),
            ("path", "1", "parameter path must be a string"),
            ("glob", "1", "parameter glob must be a string"),
            (
                "output_mode",
                "\"lines\"",
                "parameter output_mode must be content, files_with_matches or count, not \"lines\"",
            ),
            ("context", "-1", "parameter context must not be negative, got -1"),
            ("before", "true", "parameter before must be an integer"),
            ("after", "-2", "parameter after must not be negative, got -2"),
            ("multiline", "1", "parameter multiline must be a boolean"),
            ("offset", "-1", "parameter offset must not be negative, got -1"),
            ("head_limit", "\"3\"", "parameter head_limit must be an integer"),
            ("hidden", "\"yes\"", "parameter hidden must be a boolean"),
            ("no_ignore", "0", "parameter no_ignore must be a boolean"),
            ("case_insensitive", "0", "parameter case_insensitive must be a boolean"),
            ("fixed_strings", "[]", "parameter fixed_strings must be a boolean"),
        ];
        // Every parameter of the full schema, none other.
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../grep.full.schema.json")).unwrap();
        let mut names: Vec<&str> = schema["parameters"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        let mut read: Vec<&str> = all.iter().map(|(name, _, _)| *name).collect();
        names.sort_unstable();
        read.sort_unstable();
        assert_eq!(read, names);
        for first in 0..all.len() {
            let fields: Vec<String> = all[first..]
                .iter()
                .rev()
                .map(|(name, value, _)| format!("\"{name}\":{value}"))
                .collect();
            let pattern = if first == 0 { "" } else { "\"pattern\":\"x\"," };
            let json = format!("{{{pattern}{}}}", fields.join(","));
            assert_eq!(parse(&json).err().as_deref(), Some(all[first].2), "{json}");
        }
    }
}
