//! The six validation rules of docs/SPEC.md's schema format, applied to what a tool prints for
//! `--schema`. A schema is accepted only if it passes all six.
//!
//! Where the seed leaves a rule loose, the reading taken here is:
//! - rule 2 wants `name` and `description` as strings and `parameters`
//!   present (its shape is rule 4's business);
//! - rule 5 applies to nested schemas too: the `properties` of a property
//!   of type `object` and the `items` of a property of type `array`;
//! - rule 6 applies to every `required` list, nested ones included, and
//!   wants an array of strings.

use std::fmt;

use serde_json::{Map, Value};

/// The property types docs/SPEC.md's schema format allows.
pub const PROPERTY_TYPES: [&str; 6] = ["string", "integer", "number", "boolean", "array", "object"];

/// One validation rule of docs/SPEC.md's schema format, in its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    ValidJson,
    RequiredFields,
    NameFormat,
    ParametersStructure,
    PropertyTypes,
    RequiredConsistency,
}

impl Rule {
    pub const ALL: [Rule; 6] = [
        Rule::ValidJson,
        Rule::RequiredFields,
        Rule::NameFormat,
        Rule::ParametersStructure,
        Rule::PropertyTypes,
        Rule::RequiredConsistency,
    ];

    /// Its number in docs/SPEC.md's schema format (1–6).
    pub fn number(self) -> u8 {
        match self {
            Rule::ValidJson => 1,
            Rule::RequiredFields => 2,
            Rule::NameFormat => 3,
            Rule::ParametersStructure => 4,
            Rule::PropertyTypes => 5,
            Rule::RequiredConsistency => 6,
        }
    }

    /// Its name in docs/SPEC.md's schema format.
    pub fn title(self) -> &'static str {
        match self {
            Rule::ValidJson => "valid JSON",
            Rule::RequiredFields => "required fields",
            Rule::NameFormat => "name format",
            Rule::ParametersStructure => "parameters structure",
            Rule::PropertyTypes => "property types",
            Rule::RequiredConsistency => "required consistency",
        }
    }

    /// What the rule asks, in the words of docs/SPEC.md's schema format.
    pub fn message(self) -> &'static str {
        match self {
            Rule::ValidJson => "the output must parse successfully",
            Rule::RequiredFields => "name, description, parameters present",
            Rule::NameFormat => "letters, digits and underscore only",
            Rule::ParametersStructure => "type \"object\", properties present",
            Rule::PropertyTypes => {
                "each property has a type of string, integer, number, boolean, array or object"
            }
            Rule::RequiredConsistency => "required lists only defined properties",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rule {}, {}", self.number(), self.title())
    }
}

/// A rule a schema breaks, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub rule: Rule,
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "breaks {}: {}", self.rule, self.detail)
    }
}

impl std::error::Error for Violation {}

/// What one rule says about one schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail(String),
    /// Cannot be judged because an earlier rule failed (the text says what
    /// is missing).
    Skipped(&'static str),
}

/// A schema that passed all six rules.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    name: String,
    description: String,
    parameters: Value,
    /// The whole object, keys in the tool's order.
    raw: Map<String, Value>,
}

impl Schema {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn description(&self) -> &str {
        &self.description
    }

    /// The JSON Schema of the arguments.
    pub fn parameters(&self) -> &Value {
        &self.parameters
    }

    /// The schema as the tool printed it (parsed; keys in its order).
    pub fn as_json(&self) -> Value {
        Value::Object(self.raw.clone())
    }
}

/// Validates the output of `--schema`: the schema, or the first rule it
/// breaks.
pub fn validate(output: &[u8]) -> Result<Schema, Violation> {
    let (verdicts, value) = judge(output);
    for (rule, verdict) in verdicts {
        match verdict {
            Verdict::Pass => {}
            Verdict::Fail(detail) => return Err(Violation { rule, detail }),
            Verdict::Skipped(why) => return Err(Violation { rule, detail: why.to_owned() }),
        }
    }
    let raw = match value {
        Some(Value::Object(map)) => map,
        _ => {
            return Err(Violation {
                rule: Rule::RequiredFields,
                detail: "the schema is not an object".to_owned(),
            })
        }
    };
    let text = |key: &str| raw.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    Ok(Schema {
        name: text("name"),
        description: text("description"),
        parameters: raw.get("parameters").cloned().unwrap_or(Value::Null),
        raw,
    })
}

/// Every rule's verdict on the output of `--schema`, in the order of the
/// seed, for `check`.
pub fn check_rules(output: &[u8]) -> Vec<(Rule, Verdict)> {
    judge(output).0
}

fn judge(output: &[u8]) -> (Vec<(Rule, Verdict)>, Option<Value>) {
    let value = match parse(output) {
        Ok(value) => value,
        Err(detail) => {
            let mut verdicts = vec![(Rule::ValidJson, Verdict::Fail(detail))];
            verdicts.extend(Rule::ALL[1..].iter().map(|&r| (r, Verdict::Skipped("no JSON"))));
            return (verdicts, None);
        }
    };
    let verdicts = match value.as_object() {
        None => {
            let detail = format!("the schema must be an object, not {}", kind(&value));
            let mut verdicts = vec![
                (Rule::ValidJson, Verdict::Pass),
                (Rule::RequiredFields, Verdict::Fail(detail)),
            ];
            verdicts.extend(Rule::ALL[2..].iter().map(|&r| (r, Verdict::Skipped("no object"))));
            verdicts
        }
        Some(root) => vec![
            (Rule::ValidJson, Verdict::Pass),
            (Rule::RequiredFields, required_fields(root)),
            (Rule::NameFormat, name_format(root)),
            (Rule::ParametersStructure, parameters_structure(root)),
            (Rule::PropertyTypes, with_properties(root, property_types)),
            (Rule::RequiredConsistency, with_properties(root, required_consistency)),
        ],
    };
    (verdicts, Some(value))
}

fn parse(output: &[u8]) -> Result<Value, String> {
    if output.iter().all(u8::is_ascii_whitespace) {
        return Err("no output".to_owned());
    }
    serde_json::from_slice(output).map_err(|e| e.to_string())
}

/// "a string", "an array" …: for messages.
pub use crate::json::kind_of as kind;

fn verdict(problems: Vec<String>) -> Verdict {
    if problems.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Fail(problems.join("; "))
    }
}

fn required_fields(root: &Map<String, Value>) -> Verdict {
    let missing: Vec<&str> = ["name", "description", "parameters"]
        .into_iter()
        .filter(|key| !root.contains_key(*key))
        .collect();
    let mut problems = Vec::new();
    if !missing.is_empty() {
        problems.push(format!("missing {}", missing.join(", ")));
    }
    for key in ["name", "description"] {
        if let Some(value) = root.get(key).filter(|v| !v.is_string()) {
            problems.push(format!("{key} must be a string, not {}", kind(value)));
        }
    }
    verdict(problems)
}

fn name_format(root: &Map<String, Value>) -> Verdict {
    let Some(name) = root.get("name").and_then(Value::as_str) else {
        return Verdict::Skipped("no name");
    };
    if name.is_empty() {
        Verdict::Fail("the name is empty".to_owned())
    } else if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        Verdict::Fail(format!(
            "{} may hold only letters, digits and underscores",
            Value::from(name)
        ))
    } else {
        Verdict::Pass
    }
}

fn parameters_structure(root: &Map<String, Value>) -> Verdict {
    let Some(parameters) = root.get("parameters") else {
        return Verdict::Skipped("no parameters");
    };
    let Some(parameters) = parameters.as_object() else {
        return Verdict::Fail(format!("parameters must be an object, not {}", kind(parameters)));
    };
    let mut problems = Vec::new();
    match parameters.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => problems.push(format!("parameters.type must be \"object\", not {other}")),
        None => problems.push("parameters.type is missing".to_owned()),
    }
    match parameters.get("properties") {
        Some(Value::Object(_)) => {}
        Some(other) => {
            problems.push(format!("parameters.properties must be an object, not {}", kind(other)))
        }
        None => problems.push("parameters.properties is missing".to_owned()),
    }
    verdict(problems)
}

/// A rule over one object schema (`owner`) and its `properties`; `prefix`
/// says where they sit, problems are pushed.
type PropertiesRule = fn(&Map<String, Value>, &Map<String, Value>, &str, &mut Vec<String>);

/// Runs a rule over `parameters.properties` when there is such an object.
fn with_properties(root: &Map<String, Value>, rule: PropertiesRule) -> Verdict {
    let parameters = root.get("parameters").and_then(Value::as_object);
    let Some(parameters) = parameters else { return Verdict::Skipped("no parameters object") };
    let Some(properties) = parameters.get("properties").and_then(Value::as_object) else {
        return Verdict::Skipped("no properties object");
    };
    let mut problems = Vec::new();
    rule(parameters, properties, "", &mut problems);
    verdict(problems)
}

/// Rule 5 over one `properties` object (`prefix` names where it sits).
fn property_types(
    _owner: &Map<String, Value>,
    properties: &Map<String, Value>,
    prefix: &str,
    problems: &mut Vec<String>,
) {
    for (name, schema) in properties {
        property_type(schema, &format!("{prefix}{name}"), problems);
    }
}

fn property_type(schema: &Value, path: &str, problems: &mut Vec<String>) {
    let Some(schema) = schema.as_object() else {
        problems.push(format!("property {path} must be an object, not {}", kind(schema)));
        return;
    };
    let t = match schema.get("type") {
        Some(Value::String(t)) if PROPERTY_TYPES.contains(&t.as_str()) => t.as_str(),
        Some(other) => {
            problems.push(format!(
                "property {path} has type {other}, not one of {}",
                PROPERTY_TYPES.join(", ")
            ));
            return;
        }
        None => {
            problems.push(format!("property {path} has no type"));
            return;
        }
    };
    match t {
        "object" => match schema.get("properties") {
            Some(Value::Object(nested)) => {
                property_types(schema, nested, &format!("{path}."), problems)
            }
            Some(other) => {
                problems.push(format!("{path}.properties must be an object, not {}", kind(other)))
            }
            None => {}
        },
        "array" => {
            if let Some(items) = schema.get("items") {
                property_type(items, &format!("{path}[]"), problems);
            }
        }
        _ => {}
    }
}

/// Rule 6 over one object schema: its `required` against its `properties`,
/// then the same for nested object schemas.
fn required_consistency(
    owner: &Map<String, Value>,
    properties: &Map<String, Value>,
    prefix: &str,
    problems: &mut Vec<String>,
) {
    let at = if prefix.is_empty() { "required".to_owned() } else { format!("{prefix}required") };
    match owner.get("required") {
        None => {}
        Some(Value::Array(names)) => {
            for name in names {
                match name.as_str() {
                    Some(n) if properties.contains_key(n) => {}
                    Some(n) => problems.push(format!(
                        "{at} lists {}, which is not a defined property",
                        Value::from(n)
                    )),
                    None => problems.push(format!("{at} holds {}, not a property name", name)),
                }
            }
        }
        Some(other) => {
            problems.push(format!("{at} must be an array of property names, not {}", kind(other)))
        }
    }
    for (name, schema) in properties {
        nested_required(schema, &format!("{prefix}{name}"), problems);
    }
}

fn nested_required(schema: &Value, path: &str, problems: &mut Vec<String>) {
    let Some(schema) = schema.as_object() else { return };
    if let Some(Value::Object(nested)) = schema.get("properties") {
        required_consistency(schema, nested, &format!("{path}."), problems);
    } else if schema.contains_key("required") {
        let empty = Map::new();
        required_consistency(schema, &empty, &format!("{path}."), problems);
    }
    if let Some(items) = schema.get("items") {
        nested_required(items, &format!("{path}[]"), problems);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn good() -> Value {
        json!({
            "name": "file_edit",
            "description": "Edit a file",
            "parameters": {
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": "Path"},
                    "opts": {
                        "type": "object",
                        "properties": {"include": {"type": "string"}},
                        "required": ["include"]
                    },
                    "paths": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["file_path"]
            }
        })
    }

    fn broken(edit: impl FnOnce(&mut Value)) -> Violation {
        let mut v = good();
        edit(&mut v);
        validate(v.to_string().as_bytes()).unwrap_err()
    }

    #[test]
    fn a_good_schema_passes_and_keeps_its_key_order() {
        let schema = validate(good().to_string().as_bytes()).unwrap();
        assert_eq!(schema.name(), "file_edit");
        assert_eq!(schema.description(), "Edit a file");
        assert_eq!(schema.as_json(), good());
        let keys: Vec<_> = schema.as_json().as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["name", "description", "parameters"]);
    }

    #[test]
    fn each_rule_is_named_by_what_breaks_it() {
        let v = validate(b"not json").unwrap_err();
        assert_eq!(
            (v.rule, v.detail.as_str()),
            (Rule::ValidJson, "expected ident at line 1 column 2")
        );
        assert_eq!(validate(b"  \n").unwrap_err().detail, "no output");
        assert_eq!(validate(b"{} {}").unwrap_err().rule, Rule::ValidJson);
        let v = validate(b"[1]").unwrap_err();
        assert_eq!(
            (v.rule, v.detail.as_str()),
            (Rule::RequiredFields, "the schema must be an object, not an array")
        );
        let v = broken(|v| {
            v.as_object_mut().unwrap().remove("description");
        });
        assert_eq!((v.rule, v.detail.as_str()), (Rule::RequiredFields, "missing description"));
        let v = broken(|v| v["name"] = json!("file-edit"));
        assert_eq!(
            (v.rule, v.detail.as_str()),
            (Rule::NameFormat, "\"file-edit\" may hold only letters, digits and underscores")
        );
        let v = broken(|v| v["parameters"]["type"] = json!("array"));
        assert_eq!(
            (v.rule, v.detail.as_str()),
            (Rule::ParametersStructure, "parameters.type must be \"object\", not \"array\"")
        );
        let v = broken(|v| {
            v["parameters"]["properties"]["opts"]["properties"]["include"]["type"] = json!("str")
        });
        assert_eq!(v.rule, Rule::PropertyTypes);
        assert_eq!(
            v.detail,
            "property opts.include has type \"str\", not one of string, integer, number, boolean, array, object"
        );
        let v = broken(|v| v["parameters"]["required"] = json!(["file_path", "nope"]));
        assert_eq!(
            (v.rule, v.detail.as_str()),
            (Rule::RequiredConsistency, "required lists \"nope\", which is not a defined property")
        );
        let v = broken(|v| v["parameters"]["properties"]["opts"]["required"] = json!(["exclude"]));
        assert_eq!(v.detail, "opts.required lists \"exclude\", which is not a defined property");
    }

    #[test]
    fn every_rule_is_judged_even_after_a_failure() {
        let mut v = good();
        v["name"] = json!("bad name");
        v["parameters"]["required"] = json!(["ghost"]);
        let verdicts = check_rules(v.to_string().as_bytes());
        let failed: Vec<u8> = verdicts
            .iter()
            .filter(|(_, v)| matches!(v, Verdict::Fail(_)))
            .map(|(r, _)| r.number())
            .collect();
        assert_eq!(failed, [3, 6]);
    }

    #[test]
    fn the_six_built_in_schemas_pass() {
        for tool in crate::tools::of(crate::profile::Profile::Full) {
            for profile in [crate::profile::Profile::Seed, crate::profile::Profile::Full] {
                assert!(validate(tool.schema(profile).as_bytes()).is_ok(), "{}", tool.name);
            }
        }
    }
}
