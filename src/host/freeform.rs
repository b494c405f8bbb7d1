//! apply_patch as OpenAI's GPT-5 models are trained to call it: a custom
//! (freeform) tool whose input is the patch itself, constrained by a Lark
//! grammar of OpenAI's apply_patch format, instead of a JSON function with
//! an `input` string (docs/HOSTS.md, "apply_patch for GPT-5 models").
//!
//! Two halves: the catalog offers the tool in that form ([`offers_freeform`],
//! [`custom_tool`]), and `call --freeform` turns the text the model sent
//! back into the arguments the tool takes ([`wrap_input`]).

use serde_json::{json, Value};

use super::validate::Schema;

/// The tool offered in freeform to the models trained on it.
pub const TOOL_NAME: &str = "apply_patch";

/// The parameter that carries the patch in the JSON form: what a freeform
/// call's text becomes.
pub const INPUT_PARAM: &str = "input";

/// OpenAI's apply_patch format as a Lark grammar: the language those models
/// were trained to write (Begin/End Patch, Add/Delete/Update File, Move to,
/// `@@` headers, ` `/`-`/`+` lines, End of File).
pub const GRAMMAR: &str = include_str!("apply_patch.lark");

/// What the model reads of the freeform tool: short, since the grammar
/// carries the format and the model is trained on it.
const DESCRIPTION: &str = "Edit files with a patch in the apply_patch format, all or nothing; \
                           paths are relative. This is a FREEFORM tool: send the patch itself, \
                           not JSON.";

/// Whether a request to `model` should get apply_patch in freeform: the
/// GPT-5 family (`gpt-5`, `gpt-5.1`, `gpt-5-codex`, …) and the Codex models
/// (`codex-mini-latest`, …), which are trained on it; a router's prefix
/// (`openai/gpt-5`) is skipped. Others, the o-series and `gpt-oss` among
/// them, and a request whose model is not said, get the JSON form, which
/// every model can call.
pub fn offers_freeform(model: Option<&str>) -> bool {
    let Some(model) = model else {
        return false;
    };
    let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    name.starts_with("gpt-5") || name.contains("codex")
}

/// Whether a registered tool can be offered in freeform: apply_patch, with
/// the string parameter `input` that a freeform call's text fills.
pub fn can_be_freeform(schema: &Schema) -> bool {
    schema.name() == TOOL_NAME && takes_input(schema)
}

/// Whether the tool takes a string `input` (what `--freeform` fills).
pub fn takes_input(schema: &Schema) -> bool {
    schema.parameters()["properties"][INPUT_PARAM]["type"] == "string"
}

/// The custom tool of a Chat Completions request, as the rest of the
/// `openai` catalog: `{"type":"custom","custom":{name,description,format}}`
/// with the grammar as its format.
pub fn custom_tool() -> Value {
    json!({
        "type": "custom",
        "custom": {
            "name": TOOL_NAME,
            "description": DESCRIPTION,
            "format": {
                "type": "grammar",
                "grammar": { "syntax": "lark", "definition": GRAMMAR },
            },
        },
    })
}

/// The arguments a freeform call's raw text stands for: `{"input": text}`.
pub fn wrap_input(text: &str) -> Value {
    json!({ INPUT_PARAM: text })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpt5_and_codex_models_get_the_freeform_tool_and_others_do_not() {
        for model in
            ["gpt-5", "gpt-5.1", "gpt-5-codex", "GPT-5-mini", "codex-mini-latest", "openai/gpt-5"]
        {
            assert!(offers_freeform(Some(model)), "{model}");
        }
        for model in ["gpt-4.1", "gpt-oss-120b", "o3", "o4-mini", "gpt-4o", "gpt-4.5-preview"] {
            assert!(!offers_freeform(Some(model)), "{model}");
        }
        assert!(!offers_freeform(None));
    }

    #[test]
    fn the_grammar_has_every_marker_of_the_format() {
        for marker in [
            "*** Begin Patch",
            "*** End Patch",
            "*** Add File: ",
            "*** Delete File: ",
            "*** Update File: ",
            "*** Move to: ",
            "*** End of File",
            "\"@@ \"",
        ] {
            assert!(GRAMMAR.contains(marker), "{marker}");
        }
    }
}
