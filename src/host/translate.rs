//! The registry as the `tools` field of a provider's request. Each format
//! copies `name`, `description` and `parameters` as the tool gave them
//! (keys in its order); nothing is added (no `strict`, no
//! `additionalProperties`), so the model sees exactly what the tool says.
//! One exception, asked for by naming the model: apply_patch for a GPT-5
//! model on OpenAI, offered as the custom tool it is trained on
//! ([`super::freeform`]).

use std::fmt;
use std::str::FromStr;

use serde_json::{json, Value};

use super::freeform;
use super::registry::Registry;
use super::validate::Schema;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// The schema as the tool printed it.
    Ikigai,
    /// `{"type":"function","function":{name,description,parameters}}`.
    OpenAi,
    /// `{name,description,input_schema}`.
    Anthropic,
    /// One `{"functionDeclarations":[{name,description,parameters}…]}`.
    Google,
}

impl Provider {
    pub const ALL: [Provider; 4] =
        [Provider::Ikigai, Provider::OpenAi, Provider::Anthropic, Provider::Google];

    pub fn name(self) -> &'static str {
        match self {
            Provider::Ikigai => "ikigai",
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
            Provider::Google => "google",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Provider {
    type Err = String;

    fn from_str(s: &str) -> Result<Provider, String> {
        Provider::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| format!("unknown provider '{s}' (ikigai, openai, anthropic, google)"))
    }
}

/// The tools of the registry, in name order, as the JSON array a request
/// to the provider carries. For Google that array holds one object with
/// every declaration; with no tools it is empty for every provider.
pub fn translate(registry: &Registry, provider: Provider) -> Value {
    translate_for(registry, provider, None)
}

/// As [`translate`], for a request to `model`: on OpenAI, a model trained
/// on apply_patch ([`freeform::offers_freeform`]) gets that tool as a
/// freeform custom tool with its grammar, the others its JSON form.
pub fn translate_for(registry: &Registry, provider: Provider, model: Option<&str>) -> Value {
    let schemas = registry.tools().iter().map(|t| &t.schema);
    match provider {
        Provider::OpenAi if freeform::offers_freeform(model) => Value::Array(
            schemas
                .map(|s| match freeform::can_be_freeform(s) {
                    true => freeform::custom_tool(),
                    false => tool(s, provider),
                })
                .collect(),
        ),
        Provider::Google => {
            let declarations: Vec<Value> = schemas.map(declaration).collect();
            if declarations.is_empty() {
                json!([])
            } else {
                json!([{ "functionDeclarations": declarations }])
            }
        }
        _ => Value::Array(schemas.map(|s| tool(s, provider)).collect()),
    }
}

/// One tool in the provider's format (for Google, its function declaration).
pub fn tool(schema: &Schema, provider: Provider) -> Value {
    match provider {
        Provider::Ikigai => schema.as_json(),
        Provider::OpenAi => json!({ "type": "function", "function": declaration(schema) }),
        Provider::Anthropic => json!({
            "name": schema.name(),
            "description": schema.description(),
            "input_schema": schema.parameters(),
        }),
        Provider::Google => declaration(schema),
    }
}

fn declaration(schema: &Schema) -> Value {
    json!({
        "name": schema.name(),
        "description": schema.description(),
        "parameters": schema.parameters(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn providers_parse_by_name() {
        for p in Provider::ALL {
            assert_eq!(p.name().parse::<Provider>(), Ok(p));
        }
        assert!("gemini".parse::<Provider>().is_err());
    }

    #[test]
    fn no_tools_is_an_empty_array_everywhere() {
        for p in Provider::ALL {
            assert_eq!(translate(&Registry::new(), p), json!([]));
        }
    }

    #[test]
    fn key_order_is_kept() {
        let registry = Registry::builtin();
        let v = translate(&registry, Provider::Anthropic);
        let keys: Vec<_> = v[0].as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["name", "description", "input_schema"]);
        let props: Vec<_> =
            v[1]["input_schema"]["properties"].as_object().unwrap().keys().cloned().collect();
        assert_eq!(props, ["file_path", "old_string", "new_string", "replace_all"]);
    }
}
