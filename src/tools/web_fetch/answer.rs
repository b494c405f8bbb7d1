//! web_fetch's answer for what came back (docs/TOOLS.md, "web_fetch"), by
//! its type: HTML as markdown, `text/*` as it is, JSON pretty-printed, all
//! three paged by line (`page`); an image as image content to a client
//! that shows images, told in a line elsewhere; a PDF or another binary
//! type told, never shown. An HTTP status of 400 or more is an error, as
//! upstream ikigai's web_fetch answers it.

use super::{convert, extract, Request};
use crate::context::Context;
use crate::error::ToolError;
use crate::json::{size, Field};
use crate::protocol::Outcome;
use crate::tools::file_read::image::{self, Format};
use crate::web::{charset, Fetched, MAX_BYTES_VAR};

/// What the body is, for its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Html,
    Json,
    Text,
    Image(Format),
    Pdf,
    Binary,
}

/// What the answer's fields other than `output` take at most beyond the
/// URL, title and type measured: their names, quotes and two numbers.
const FIELDS_RESERVE: usize = 120;

/// The answer to `request` for `fetched`.
pub fn of(fetched: Fetched, request: &Request, context: &Context) -> Outcome {
    if fetched.status >= 400 {
        return Err(ToolError::NetworkError(format!(
            "{} answered HTTP {}: an error, not the page (check the URL; nothing is shown of an \
             error page)",
            fetched.url, fetched.status
        )));
    }
    let kind = kind_of(fetched.content_type.as_deref(), &fetched.body);
    let content_type = fetched.content_type.clone().unwrap_or_else(|| sniffed_type(kind).into());
    let told = |output: String| told(output, &fetched.url, &content_type);
    match kind {
        Kind::Html | Kind::Json | Kind::Text => {}
        _ if request.raw => {
            return Err(ToolError::InvalidArg(format!(
                "raw: {} is {content_type}, not text; raw shows a text body as received (send \
                 the call without raw)",
                fetched.url
            )));
        }
        Kind::Image(format) => return image_answer(format, &fetched, &content_type, context),
        Kind::Pdf => {
            return Ok(told(format!(
                "[PDF document, {} bytes: not shown; web_fetch reads HTML, text, JSON and \
                 images, not PDFs]",
                fetched.body.len()
            )))
        }
        Kind::Binary => {
            return Ok(told(format!(
                "[{content_type}, {} bytes: binary, not shown; web_fetch reads HTML, text, JSON \
                 and images]",
                fetched.body.len()
            )))
        }
    }
    let text = charset::to_text(&fetched.body, fetched.charset.as_deref(), kind == Kind::Html);
    let (mut output, title) = match kind {
        _ if request.raw => (text, String::new()),
        Kind::Html => html(&text, &fetched.url)?,
        Kind::Json => (pretty_json(text), String::new()),
        _ => (text, String::new()),
    };
    if let Some(bound) = fetched.cut {
        if !output.is_empty() && !output.ends_with('\n') {
            output.push('\n');
        }
        output.push_str(&format!(
            "[... the download stopped at {bound} bytes ({MAX_BYTES_VAR}): the rest of the \
             page is not here ...]"
        ));
    }
    let reserve = FIELDS_RESERVE
        + size::escaped_len(fetched.url.as_bytes())
        + size::escaped_len(title.as_bytes())
        + size::escaped_len(content_type.as_bytes());
    let page = super::page::Page::of(
        output.as_bytes(),
        request.offset,
        request.limit,
        context.answer_limit(reserve),
    );
    let fields = page.fields();
    let mut answer = vec![
        ("output", Field::Parts(page.output)),
        ("url", Field::Text(fetched.url.into_bytes())),
        ("title", Field::Text(title.into_bytes())),
        ("content_type", Field::Text(content_type.into_bytes())),
    ];
    answer.extend(fields);
    Ok(answer)
}

/// An HTML page as markdown, and its title.
fn html(text: &str, url: &str) -> Result<(String, String), ToolError> {
    let tree = convert::parse(text);
    let base = url::Url::parse(url).ok();
    let page = extract::read(&tree, base.as_ref());
    if page.needs_javascript {
        let title = match page.title.as_str() {
            "" => String::new(),
            title => format!(" (\"{title}\")"),
        };
        return Err(ToolError::JsRequired(format!(
            "{url}{title} is made by JavaScript: its HTML holds no readable text, only scripts, \
             and web_fetch runs none. Look for the same content elsewhere (web_search), or an \
             API or feed of the site"
        )));
    }
    let mut markdown = convert::markdown(&page.content);
    if markdown.trim().is_empty() {
        markdown = "[the page holds no text]".to_owned();
    }
    Ok((markdown, page.title))
}

/// JSON pretty-printed, keys in their order; what does not parse (cut at
/// the bound, or not JSON at all) as it is.
fn pretty_json(text: String) -> String {
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(value) => serde_json::to_string_pretty(&value).unwrap_or(text),
        Err(_) => text,
    }
}

/// An answer that tells what the body is instead of showing it.
fn told(output: String, url: &str, content_type: &str) -> Vec<(&'static str, Field)> {
    vec![
        ("output", Field::Text(output.into_bytes())),
        ("url", Field::Text(url.as_bytes().to_vec())),
        ("title", Field::Text(Vec::new())),
        ("content_type", Field::Text(content_type.as_bytes().to_vec())),
    ]
}

/// An image: as image content to a client that shows images
/// (`Context::images`), with file_read's bounds; told in a line
/// elsewhere, or when it is past the bounds or has no header to read.
fn image_answer(format: Format, fetched: &Fetched, content_type: &str, context: &Context) -> Outcome {
    let body = &fetched.body;
    let bytes = body.len() as u64;
    let Some(pixels) = image::dimensions(format, body) else {
        return Ok(told(
            format!("[{} image, {bytes} bytes: no size in its header; not shown]", format.name()),
            &fetched.url,
            content_type,
        ));
    };
    let caption = image::caption(format, pixels, bytes);
    let fits = bytes <= image::MAX_BYTES && pixels.0 <= image::MAX_SIDE && pixels.1 <= image::MAX_SIDE;
    if !context.images || !fits {
        let why = if fits {
            "shown only to an MCP client that shows images".to_owned()
        } else {
            format!(
                "not shown: an image is answered whole, at most {} bytes and {} pixels a side",
                image::MAX_BYTES,
                image::MAX_SIDE
            )
        };
        return Ok(told(format!("[{caption}: {why}]"), &fetched.url, content_type));
    }
    let mut answer = told(caption, &fetched.url, content_type);
    answer.insert(1, ("image", image::field(format, body)?));
    Ok(answer)
}

/// The kind of a body of `content_type` (the header's media type), by its
/// first bytes where the header says nothing more precise.
fn kind_of(content_type: Option<&str>, body: &[u8]) -> Kind {
    match content_type {
        Some("text/html" | "application/xhtml+xml") => Kind::Html,
        Some(t) if t == "application/json" || t.ends_with("+json") => Kind::Json,
        Some(t) if is_text(t) => Kind::Text,
        Some("application/pdf") => Kind::Pdf,
        Some(t) if t.starts_with("image/") => image::sniff(body).map_or(Kind::Binary, Kind::Image),
        Some(t) if t != "application/octet-stream" && t != "binary/octet-stream" => Kind::Binary,
        _ => sniff(body),
    }
}

/// Media types read as text besides `text/*`.
fn is_text(t: &str) -> bool {
    t.starts_with("text/")
        || t.ends_with("+xml")
        || matches!(
            t,
            "application/xml"
                | "application/javascript"
                | "application/x-javascript"
                | "application/ecmascript"
                | "application/yaml"
                | "application/x-yaml"
                | "application/toml"
                | "application/x-sh"
        )
}

/// A body without a type, by its first bytes.
fn sniff(body: &[u8]) -> Kind {
    let head = &body[..body.len().min(8 * 1024)];
    let start = head.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(head.len());
    let opening = head[start..].iter().take(15).map(u8::to_ascii_lowercase).collect::<Vec<u8>>();
    if opening.starts_with(b"<!doctype html") || opening.starts_with(b"<html") {
        Kind::Html
    } else if let Some(format) = image::sniff(head) {
        Kind::Image(format)
    } else if head.starts_with(b"%PDF-") {
        Kind::Pdf
    } else if memchr::memchr(0, head).is_some() {
        Kind::Binary
    } else {
        Kind::Text
    }
}

/// The media type a body without one was taken for.
fn sniffed_type(kind: Kind) -> &'static str {
    match kind {
        Kind::Html => "text/html",
        Kind::Json => "application/json",
        Kind::Text => "text/plain",
        Kind::Image(format) => format.mime_type(),
        Kind::Pdf => "application/pdf",
        Kind::Binary => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_is_the_headers_then_the_first_bytes() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        let cases: [(Option<&str>, &[u8], Kind); 10] = [
            (Some("text/html"), b"x", Kind::Html),
            (Some("application/ld+json"), b"{}", Kind::Json),
            (Some("image/svg+xml"), b"<svg/>", Kind::Text),
            (Some("text/csv"), b"a,b", Kind::Text),
            (Some("image/png"), png, Kind::Image(Format::Png)),
            (Some("image/png"), b"not one", Kind::Binary),
            (Some("application/zip"), b"PK\x03\x04", Kind::Binary),
            (None, b"  <!DOCTYPE html><p>x", Kind::Html),
            (Some("application/octet-stream"), b"%PDF-1.7", Kind::Pdf),
            (None, b"plain words", Kind::Text),
        ];
        for (content_type, body, want) in cases {
            assert_eq!(kind_of(content_type, body), want, "{content_type:?}");
        }
    }

    #[test]
    fn json_is_pretty_printed_in_its_order_and_left_as_is_when_it_does_not_parse() {
        assert_eq!(pretty_json(r#"{"b":1,"a":[2]}"#.into()), "{\n  \"b\": 1,\n  \"a\": [\n    2\n  ]\n}");
        assert_eq!(pretty_json("{\"cut".into()), "{\"cut");
    }
}
