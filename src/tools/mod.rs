//! The table of the six tools. The dispatcher knows nothing else about them:
//! each entry is a name, the schema text of seed 000 and a `run` function.

use crate::confine::Roots;
use crate::error::ToolError;
use crate::protocol::{Args, Outcome};

pub mod bash;
pub mod file_edit;
pub mod file_read;
pub mod file_write;
pub mod glob;
pub mod grep;

pub struct Tool {
    /// The schema name, as models call it: `file_read`.
    pub name: &'static str,
    /// The name of its executable in `libexec/ikigai/`: `file-read`.
    pub command: &'static str,
    /// The `--schema` text, exactly as seed 000 prints it (with a final newline).
    pub schema: &'static str,
    pub run: fn(&Args) -> Outcome,
}

pub static TOOLS: [Tool; 6] = [
    Tool {
        name: "bash",
        command: "bash",
        schema: include_str!("bash.schema.json"),
        run: bash::run,
    },
    Tool {
        name: "file_read",
        command: "file-read",
        schema: include_str!("file_read.schema.json"),
        run: file_read::run,
    },
    Tool {
        name: "file_write",
        command: "file-write",
        schema: include_str!("file_write.schema.json"),
        run: file_write::run,
    },
    Tool {
        name: "file_edit",
        command: "file-edit",
        schema: include_str!("file_edit.schema.json"),
        run: file_edit::run,
    },
    Tool {
        name: "glob",
        command: "glob",
        schema: include_str!("glob.schema.json"),
        run: glob::run,
    },
    Tool {
        name: "grep",
        command: "grep",
        schema: include_str!("grep.schema.json"),
        run: grep::run,
    },
];

impl Tool {
    /// Every spelling the tool answers to (README, "The tools") besides `command`:
    /// the schema name, and both with a `-tool` or `_tool` suffix.
    pub fn aliases(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        let spellings = [self.name.to_owned()].into_iter().chain(
            [self.name, self.command]
                .into_iter()
                .flat_map(|base| ["-tool", "_tool"].map(|suffix| format!("{base}{suffix}"))),
        );
        for spelling in spellings {
            if spelling != self.command && !names.contains(&spelling) {
                names.push(spelling);
            }
        }
        names
    }

    /// The description of the schema (for usage texts and listings).
    pub fn description(&self) -> String {
        serde_json::from_str::<serde_json::Value>(self.schema)
            .ok()
            .and_then(|v| v.get("description")?.as_str().map(str::to_owned))
            .unwrap_or_default()
    }
}

/// The tool a name stands for, in any of its spellings, with any extension
/// (`file-read-tool`, `file_read.sh`).
pub fn find(name: &str) -> Option<&'static Tool> {
    let normal = normalize_name(name);
    TOOLS.iter().find(|t| t.name == normal)
}

/// The tool name a file or command name stands for (README, "The tools"): without
/// an extension and a `-tool`/`_tool` suffix, `-` read as `_`.
pub fn normalize_name(name: &str) -> String {
    let stem = name.split('.').next().unwrap_or(name).replace('-', "_");
    stem.strip_suffix("_tool").filter(|s| !s.is_empty()).unwrap_or(&stem).to_owned()
}

/// The schema names, comma-separated, for messages.
pub fn names() -> String {
    TOOLS.iter().map(|t| t.name).collect::<Vec<_>>().join(", ")
}

/// The allowed roots the tools work beneath (README, "Confinement: allowed
/// roots"), read once at start: the descriptors an MCP server passed
/// (`IKIGAI_TOOLS_ROOT_FDS`), else the names of `IKIGAI_TOOLS_ROOTS`;
/// `None` when neither is set. Roots that cannot confine
/// (none named, a missing one, a kernel without openat2) refuse the call:
/// never run unconfined.
pub(crate) fn allowed_roots() -> Result<Option<Roots>, ToolError> {
    Roots::from_env().map_err(|e| ToolError::PermissionDenied(e.message()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_finds_its_tool() {
        for (name, tool) in [
            ("bash", "bash"),
            ("bash-tool", "bash"),
            ("file-read", "file_read"),
            ("file_read", "file_read"),
            ("file-read-tool", "file_read"),
            ("file_read_tool", "file_read"),
            ("file_read.sh", "file_read"),
            ("grep.exe", "grep"),
        ] {
            assert_eq!(find(name).map(|t| t.name), Some(tool), "{name}");
        }
        assert_eq!(normalize_name("my_tool"), "my");
        assert_eq!(normalize_name("_tool"), "_tool");
        assert_eq!(normalize_name("x.py"), "x");
        assert!(find("cat").is_none());
        assert!(find("file_reader").is_none());
        assert!(find("").is_none());
    }

    #[test]
    fn schemas_parse_and_carry_their_names() {
        for tool in &TOOLS {
            let v: serde_json::Value = serde_json::from_str(tool.schema).unwrap();
            assert_eq!(v["name"], tool.name);
            assert!(tool.schema.ends_with("}\n") && !tool.schema.ends_with("\n\n"));
        }
    }

    #[test]
    fn aliases_cover_the_contract_spellings() {
        let tool = find("file_read").unwrap();
        assert_eq!(
            tool.aliases(),
            ["file_read", "file_read-tool", "file_read_tool", "file-read-tool", "file-read_tool"]
        );
    }
}
