//! The six tools as `tools/list` shows them: the seed-000 name and
//! description, the schema's `parameters` as `inputSchema`, a title for
//! people, and the hints a host uses to decide what to ask the user before a
//! call (Codex, for one, treats a tool without them as destructive).

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool as McpTool, ToolAnnotations};
use serde_json::Value;

use crate::tools::{Tool, TOOLS};

/// What a host may assume about a tool.
struct Hints {
    title: &'static str,
    /// Changes nothing (file_read, glob, grep).
    read_only: bool,
    /// Works only on the local file system, never the network.
    closed_world: bool,
}

fn hints(tool: &Tool) -> Hints {
    let (title, read_only, closed_world) = match tool.name {
        "bash" => ("Run a shell command", false, false),
        "file_read" => ("Read a file", true, true),
        "file_write" => ("Write a file", false, true),
        "file_edit" => ("Edit a file", false, true),
        "glob" => ("Find files by pattern", true, true),
        "grep" => ("Search file contents", true, true),
        _ => (tool.name, false, false),
    };
    Hints { title, read_only, closed_world }
}

/// The listing of one tool.
pub fn describe(tool: &Tool) -> McpTool {
    let schema: Value = serde_json::from_str(tool.schema).unwrap_or(Value::Null);
    let parameters: JsonObject =
        schema.get("parameters").and_then(Value::as_object).cloned().unwrap_or_default();
    let hints = hints(tool);
    let mut annotations = ToolAnnotations::new().read_only(hints.read_only);
    if !hints.read_only {
        // A write replaces what was there; a command may do anything.
        annotations = annotations.destructive(true);
    }
    if hints.closed_world {
        annotations = annotations.open_world(false);
    }
    McpTool::new(tool.name, tool.description(), Arc::new(parameters))
        .with_title(hints.title)
        .with_annotations(annotations)
}

/// The listings of all six, in the table's order.
pub fn all() -> Vec<McpTool> {
    TOOLS.iter().map(describe).collect()
}

/// The tool a `tools/call` names: the schema name exactly, as listed.
pub fn find(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|tool| tool.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_lists_its_schema_parameters_and_hints() {
        for tool in &TOOLS {
            let listed = serde_json::to_value(describe(tool)).unwrap();
            let schema: Value = serde_json::from_str(tool.schema).unwrap();
            assert_eq!(listed["name"], tool.name);
            assert_eq!(listed["description"], schema["description"]);
            assert_eq!(listed["inputSchema"], schema["parameters"]);
            assert!(listed["title"].is_string());
            let read_only = ["file_read", "glob", "grep"].contains(&tool.name);
            assert_eq!(listed["annotations"]["readOnlyHint"], read_only, "{}", tool.name);
            assert_eq!(
                listed["annotations"]["destructiveHint"].as_bool(),
                (!read_only).then_some(true)
            );
            let open_world = listed["annotations"]["openWorldHint"].as_bool();
            assert_eq!(open_world, (tool.name != "bash").then_some(false), "{}", tool.name);
        }
    }
}
