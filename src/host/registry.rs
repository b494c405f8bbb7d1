//! The registry: the tools a host offers the model, one per schema name,
//! sorted by name, each with its schema and where it runs from.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use crate::tools;

use super::validate::Schema;

/// Where a tool comes from.
#[derive(Clone)]
pub enum Origin {
    /// One of the six tools of this binary: run as `ikigai-tools NAME`
    /// through `std::env::current_exe`, so only meaningful inside the
    /// `ikigai-tools` binary; another host discovers the installed
    /// `libexec/ikigai/` directory instead.
    BuiltIn(&'static tools::Tool),
    /// An executable found in a directory.
    File(PathBuf),
}

impl std::fmt::Debug for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::BuiltIn(tool) => f.debug_tuple("BuiltIn").field(&tool.name).finish(),
            Origin::File(path) => f.debug_tuple("File").field(path).finish(),
        }
    }
}

impl PartialEq for Origin {
    fn eq(&self, other: &Origin) -> bool {
        match (self, other) {
            (Origin::BuiltIn(a), Origin::BuiltIn(b)) => a.name == b.name,
            (Origin::File(a), Origin::File(b)) => a == b,
            _ => false,
        }
    }
}

impl Origin {
    /// The program and the leading arguments that run the tool.
    pub fn command(&self) -> io::Result<(PathBuf, Vec<OsString>)> {
        match self {
            Origin::BuiltIn(tool) => Ok((std::env::current_exe()?, vec![tool.command.into()])),
            // A bare name would be looked up in $PATH: run the file meant.
            Origin::File(path) if !path.as_os_str().as_encoded_bytes().contains(&b'/') => {
                Ok((Path::new(".").join(path), Vec::new()))
            }
            Origin::File(path) => Ok((path.clone(), Vec::new())),
        }
    }

    /// The file, for a discovered tool.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Origin::BuiltIn(_) => None,
            Origin::File(path) => Some(path),
        }
    }

    /// For messages: the path, or `built-in NAME`.
    pub fn display(&self) -> String {
        match self {
            Origin::BuiltIn(tool) => format!("built-in {}", tool.name),
            Origin::File(path) => path.display().to_string(),
        }
    }
}

/// A tool the registry holds: its schema and where it runs from (one of
/// this binary's, a `tools::Tool` of its table, or a file found).
#[derive(Debug, Clone, PartialEq)]
pub struct RegisteredTool {
    pub schema: Schema,
    pub origin: Origin,
}

impl RegisteredTool {
    /// The schema's name: what the model calls.
    pub fn name(&self) -> &str {
        self.schema.name()
    }
}

/// Tools by name. Names are unique; iteration is in name (byte) order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Registry {
    tools: Vec<RegisteredTool>,
}

impl Registry {
    pub fn new() -> Registry {
        Registry::default()
    }

    /// The tools of this binary, as the profile in force describes them:
    /// the one they run in, since they inherit this process's environment.
    pub fn builtin() -> Registry {
        let mut registry = Registry::new();
        let profile = crate::profile::Profile::from_env();
        for tool in tools::of(profile) {
            if let Ok(schema) = super::validate::validate(tool.schema(profile).as_bytes()) {
                registry.insert(RegisteredTool { schema, origin: Origin::BuiltIn(tool) });
            }
        }
        registry
    }

    /// Adds a tool; one of the same name is replaced and returned.
    pub fn insert(&mut self, tool: RegisteredTool) -> Option<RegisteredTool> {
        match self.tools.binary_search_by(|t| t.name().cmp(tool.name())) {
            Ok(i) => Some(std::mem::replace(&mut self.tools[i], tool)),
            Err(i) => {
                self.tools.insert(i, tool);
                None
            }
        }
    }

    /// The tool of that name: its schema name exactly, or failing that any
    /// spelling the built-in tools answer to (`file-read`, `file_read_tool`).
    pub fn find(&self, name: &str) -> Option<&RegisteredTool> {
        self.get(name).or_else(|| self.get(&tools::normalize_name(name)))
    }

    fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.binary_search_by(|t| t.name().cmp(name)).ok().map(|i| &self.tools[i])
    }

    /// A close name for a misspelled one, for "did you mean".
    pub fn suggest(&self, name: &str) -> Option<&str> {
        tools::near_miss::closest_tool(name, self.tools.iter().map(RegisteredTool::name))
    }

    pub fn tools(&self) -> &[RegisteredTool] {
        &self.tools
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_are_sorted_and_found_by_any_spelling() {
        let registry = Registry::builtin();
        let names: Vec<_> = registry.tools().iter().map(RegisteredTool::name).collect();
        assert_eq!(names, ["bash", "file_edit", "file_read", "file_write", "glob", "grep"]);
        for spelling in
            ["file_read", "file-read", "file-read-tool", "file_read_tool", "file-read.sh"]
        {
            assert_eq!(
                registry.find(spelling).map(RegisteredTool::name),
                Some("file_read"),
                "{spelling}"
            );
        }
        assert!(registry.find("cat").is_none());
    }

    #[test]
    fn close_names_are_suggested() {
        let registry = Registry::builtin();
        assert_eq!(registry.suggest("gerp"), Some("grep"));
        assert_eq!(registry.suggest("fileread"), Some("file_read"));
        assert_eq!(registry.suggest("kubectl"), None);
    }

    #[test]
    fn a_bare_file_name_runs_the_file_not_a_command_from_path() {
        let (program, lead) = Origin::File("grep".into()).command().unwrap();
        assert_eq!((program, lead), (PathBuf::from("./grep"), vec![]));
        let (program, _) = Origin::File("tools/grep".into()).command().unwrap();
        assert_eq!(program, PathBuf::from("tools/grep"));
    }
}
