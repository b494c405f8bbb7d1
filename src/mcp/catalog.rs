//! The tools of the profile as `tools/list` shows them, all from the table
//! (`crate::tools::of`): the seed-000 name and description, the schema's
//! `parameters` as `inputSchema`, the title for people, and the hints a host
//! uses to decide what to ask the user before a call (Codex, for one, treats
//! a tool without them as destructive), and the size of the largest text
//! result, where Claude Code reads it (docs/MCP.md, "Answers sized for the
//! hosts").

use std::sync::Arc;

use rmcp::model::{JsonObject, MetaObject, Tool as McpTool, ToolAnnotations};
use serde_json::Value;

use crate::profile::Profile;
use crate::tools::{Hints, Tool};

/// The listing of one tool in `profile`.
pub fn describe(tool: &Tool, profile: Profile) -> McpTool {
    let schema: Value = serde_json::from_str(tool.schema(profile)).unwrap_or(Value::Null);
    let parameters: JsonObject =
        schema.get("parameters").and_then(Value::as_object).cloned().unwrap_or_default();
    McpTool::new(tool.name, tool.description(profile), Arc::new(parameters))
        .with_title(tool.title)
        .with_annotations(annotations(tool.hints))
}

/// The hints as MCP's annotations: `readOnlyHint` always;
/// `destructiveHint` where it means something (a tool that is not
/// read-only); `openWorldHint` where it differs from MCP's default (true),
/// for a tool that stays on the local file system.
fn annotations(hints: Hints) -> ToolAnnotations {
    let mut annotations = ToolAnnotations::new().read_only(hints.read_only);
    if !hints.read_only {
        annotations = annotations.destructive(hints.destructive);
    }
    if !hints.open_world {
        annotations = annotations.open_world(false);
    }
    annotations
}

/// Where Claude Code reads how many characters a tool's result may take
/// before it is saved to a file rather than shown (50,000 by default).
pub const MAX_RESULT_SIZE_CHARS: &str = "anthropic/maxResultSizeChars";

/// The listings of the tools of `profile`, in the table's order, each
/// declaring the largest text result under `max_output`: the text is never
/// longer than the answer, in characters, that the tool kept within
/// `max_output` bytes (docs/MCP.md). No limit, no declaration.
pub fn all(profile: Profile, max_output: Option<usize>) -> Vec<McpTool> {
    crate::tools::of(profile)
        .map(|tool| {
            let listed = describe(tool, profile);
            match max_output {
                Some(limit) => listed.with_meta(MetaObject(
                    [(MAX_RESULT_SIZE_CHARS.to_owned(), Value::from(limit))].into_iter().collect(),
                )),
                None => listed,
            }
        })
        .collect()
}

/// The tool a `tools/call` names: the schema name exactly, as listed in
/// `profile`.
pub fn find(name: &str, profile: Profile) -> Option<&'static Tool> {
    crate::tools::of(profile).find(|tool| tool.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_lists_its_schema_parameters_and_hints() {
        for (tool, profile) in
            crate::tools::TOOLS.iter().flat_map(|t| [(t, Profile::Seed), (t, Profile::Full)])
        {
            let listed = serde_json::to_value(describe(tool, profile)).unwrap();
            let schema: Value = serde_json::from_str(tool.schema(profile)).unwrap();
            assert_eq!(listed["name"], tool.name);
            assert_eq!(listed["description"], schema["description"]);
            assert_eq!(listed["inputSchema"], schema["parameters"]);
            assert_eq!(listed["title"], tool.title);
            let (hints, said) = (tool.hints, &listed["annotations"]);
            assert_eq!(said["readOnlyHint"], hints.read_only, "{}", tool.name);
            let destructive = said["destructiveHint"].as_bool();
            assert_eq!(
                destructive,
                (!hints.read_only).then_some(hints.destructive),
                "{}",
                tool.name
            );
            let open_world = said["openWorldHint"].as_bool();
            assert_eq!(open_world, (!hints.open_world).then_some(false), "{}", tool.name);
        }
    }
}
