//! An image in a tool's answer (file_read in the full profile: docs/MCP.md,
//! "Calls"): taken out of the answer and sent as image content beside the
//! text, so that its base64 travels once, never in `structuredContent`.

use rmcp::model::ContentBlock;
use serde_json::{Map, Value};

/// Takes `image` (`{"mime_type":…,"data":…}`) out of `answer`, as the
/// image content block it becomes. Anything else under that name is left
/// as it is.
pub fn take(answer: &mut Map<String, Value>) -> Option<ContentBlock> {
    let image = answer.get("image")?;
    let mime_type = image.get("mime_type")?.as_str()?.to_owned();
    image.get("data")?.as_str()?;
    let Some(Value::Object(mut image)) = answer.shift_remove("image") else {
        return None;
    };
    let Some(Value::String(data)) = image.shift_remove("data") else {
        return None;
    };
    Some(ContentBlock::image(data, mime_type))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_image_leaves_the_answer_and_the_other_fields_keep_their_order() {
        let mut answer = json!({"output": "Image: PNG, 1x1, 67 bytes",
            "image": {"mime_type": "image/png", "data": "iVBORw0K"}, "sha256": "ab"});
        let answer = answer.as_object_mut().unwrap();
        assert_eq!(take(answer), Some(ContentBlock::image("iVBORw0K", "image/png")));
        assert_eq!(
            Value::Object(answer.clone()).to_string(),
            r#"{"output":"Image: PNG, 1x1, 67 bytes","sha256":"ab"}"#
        );
        let mut other = json!({"output": "x", "image": "not one"});
        assert_eq!(take(other.as_object_mut().unwrap()), None);
        assert_eq!(other["image"], "not one");
    }
}
