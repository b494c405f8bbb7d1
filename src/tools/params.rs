//! The parameter-name rule of a call (docs/SPEC.md, "Bad input"), which
//! `Tool::call` applies to every call before the tool reads its arguments:
//! a parameter of the full schema sent in the seed profile is refused, a
//! name that is a near miss of a parameter's is refused naming it, and any
//! other unknown name is ignored (models add `description` to their calls,
//! hosts pass the model's arguments as given).
//!
//! The names come from the tool's schemas in the table, parsed here at call
//! time only (never on the `--schema` path), and the full schema only when a
//! name is not the seed's.

use std::collections::BTreeMap;

use serde::de::IgnoredAny;
use serde::Deserialize;

use super::near_miss;
use super::Tool;
use crate::error::ToolError;
use crate::profile::{Profile, PROFILE_VAR};
use crate::protocol::Args;

/// Refuses the first name of `args` the rule refuses.
pub fn check(tool: &Tool, args: &Args, profile: Profile) -> Result<(), ToolError> {
    let known = names(tool.schema(profile));
    let mut full_names: Option<Vec<String>> = None;
    for name in args.names() {
        if known.iter().any(|k| k == name) {
            continue;
        }
        if profile == Profile::Seed {
            let full = full_names.get_or_insert_with(|| names(tool.schemas.full));
            if full.iter().any(|k| k == name) {
                return Err(ToolError::InvalidArg(format!(
                    "parameter {name} is a full-profile parameter of {}; {}",
                    tool.name,
                    seed_profile_hint()
                )));
            }
        }
        if let Some(close) = near_miss::closest(name, known.iter().map(String::as_str)) {
            return Err(ToolError::InvalidArg(format!(
                "unknown parameter {name}: did you mean {close}?"
            )));
        }
        // A misspelt full-profile parameter in the seed (`dryrun`) is no
        // less meant: ignored, the call would do what it was asked not to.
        if let Some(close) = full_names
            .as_deref()
            .and_then(|full| near_miss::closest(name, full.iter().map(String::as_str)))
        {
            return Err(ToolError::InvalidArg(format!(
                "unknown parameter {name}: did you mean {close}? It is a full-profile parameter \
                 of {}; {}",
                tool.name,
                seed_profile_hint()
            )));
        }
    }
    Ok(())
}

/// What a call refused for a full-profile parameter is told to do.
fn seed_profile_hint() -> String {
    format!(
        "this call runs the seed profile (set {PROFILE_VAR}=full, or install with install.sh \
         --profile full; the MCP server serves full by default)"
    )
}

/// The parameter names of a schema text (its `parameters.properties`).
pub fn names(schema: &str) -> Vec<String> {
    #[derive(Deserialize)]
    struct Schema {
        parameters: Parameters,
    }
    #[derive(Deserialize)]
    struct Parameters {
        #[serde(default)]
        properties: BTreeMap<String, IgnoredAny>,
    }
    serde_json::from_str::<Schema>(schema)
        .map(|s| s.parameters.properties.into_keys().collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools;

    fn refusal(tool: &str, text: &str, profile: Profile) -> Option<String> {
        let tool = tools::find_in(tool, Profile::Full).unwrap();
        let args = Args::parse(text.as_bytes()).unwrap();
        check(tool, &args, profile).err().map(|e| e.to_string())
    }

    /// The misspellings a model makes are caught, each naming the
    /// parameter meant.
    #[test]
    fn near_misses_are_refused_naming_the_closest() {
        for (tool, name, meant) in [
            ("file_read", "offest", "offset"),
            ("file_read", "file_pth", "file_path"),
            ("file_read", "filePath", "file_path"),
            ("file_edit", "old_strng", "old_string"),
            ("file_edit", "replaceall", "replace_all"),
            ("file_edit", "replaceAll", "replace_all"),
            ("grep", "case_insensitve", "case_insensitive"),
            ("glob", "patern", "pattern"),
        ] {
            let told = refusal(tool, &format!(r#"{{"{name}":1}}"#), Profile::Full);
            let expected = format!("unknown parameter {name}: did you mean {meant}?");
            assert_eq!(told.as_deref(), Some(expected.as_str()), "{tool}");
        }
    }

    /// The keys models and hosts add on their own are no near miss of any
    /// tool's parameter: ignored, in both profiles.
    #[test]
    fn keys_models_add_are_ignored() {
        for tool in tools::of(Profile::Full) {
            for name in [
                "description",
                "reason",
                "explanation",
                "_meta",
                "meta",
                "thought",
                "rationale",
                "summary",
                "title",
                "comment",
                "id",
                "type",
                "name",
            ] {
                for profile in [Profile::Seed, Profile::Full] {
                    let text = format!(r#"{{"{name}":{{"x":1}}}}"#);
                    assert_eq!(refusal(tool.name, &text, profile), None, "{} {name}", tool.name);
                }
            }
        }
    }

    #[test]
    fn a_full_parameter_in_the_seed_is_refused_naming_the_profile() {
        let told = refusal("file_edit", r#"{"file_path":"a","dry_run":true}"#, Profile::Seed);
        assert_eq!(
            told.as_deref(),
            Some(
                "parameter dry_run is a full-profile parameter of file_edit; this call runs the \
                 seed profile (set IKIGAI_TOOLS_PROFILE=full, or install with install.sh \
                 --profile full; the MCP server serves full by default)"
            )
        );
        assert_eq!(refusal("file_edit", r#"{"dry_run":true}"#, Profile::Full), None);
        // Reshape III: a misspelt full-profile parameter in the seed was
        // ignored, and the file edited for real.
        let told = refusal("file_edit", r#"{"file_path":"a","dryrun":true}"#, Profile::Seed);
        assert_eq!(
            told.as_deref(),
            Some(
                "unknown parameter dryrun: did you mean dry_run? It is a full-profile parameter \
                 of file_edit; this call runs the seed profile (set IKIGAI_TOOLS_PROFILE=full, \
                 or install with install.sh --profile full; the MCP server serves full by \
                 default)"
            )
        );
        // A near miss of a seed parameter is told as one, in the seed too.
        let told = refusal("file_read", r#"{"offest":2}"#, Profile::Seed);
        assert_eq!(told.as_deref(), Some("unknown parameter offest: did you mean offset?"));
        // null is absent, as for every parameter.
        assert_eq!(refusal("file_edit", r#"{"dry_run":null}"#, Profile::Seed), None);
    }

    #[test]
    fn every_schema_names_its_parameters() {
        for tool in tools::of(Profile::Full) {
            for profile in [Profile::Seed, Profile::Full] {
                let v: serde_json::Value = serde_json::from_str(tool.schema(profile)).unwrap();
                let expected: Vec<String> =
                    v["parameters"]["properties"].as_object().unwrap().keys().cloned().collect();
                let mut got = names(tool.schema(profile));
                let mut expected = expected;
                got.sort();
                expected.sort();
                assert_eq!(got, expected, "{}", tool.name);
            }
        }
    }
}
