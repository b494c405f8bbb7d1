//! HTML to markdown (docs/TOOLS.md, "web_fetch"): htmd, turndown's rules
//! (ATX headings, fenced code keeping its language, pipe tables, nested
//! lists, inline links), with the short list markers (`- `, `1. `) that
//! cost a model fewest bytes. The page is parsed and pruned by `extract`
//! first; this converts what it picked.

use std::rc::Rc;

use htmd::options::{BulletListMarker, Options};
use htmd::{HtmlToMarkdown, Node};

/// The converter, as web_fetch configures it.
fn converter() -> HtmlToMarkdown {
    let options = Options {
        bullet_list_marker: BulletListMarker::Dash,
        ul_bullet_spacing: 1,
        ol_number_spacing: 1,
        ..Options::default()
    };
    // Scripting on: a `<noscript>` is one text node, dropped whole by
    // `extract`, never parsed into content a browser would not show.
    HtmlToMarkdown::builder().options(options).scripting_enabled(true).build()
}

/// The parsed tree of `html` (html5ever never fails: any bytes are a
/// document, as a browser reads them).
pub fn parse(html: &str) -> Rc<Node> {
    let tree = converter().html_to_tree(html);
    tree.unwrap_or_else(|_| Node::new(markup5ever_rcdom::NodeData::Document))
}

/// The markdown of `node` and what is below it.
pub fn markdown(node: &Rc<Node>) -> String {
    converter().tree_to_markdown(node)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_lists_tables_code_and_links_convert_as_markdown() {
        let html = "<h1>Title</h1><p>A <b>bold</b> <a href='https://e.com/'>link</a>.</p>\
                    <ul><li>one<ul><li>nested</li></ul></li><li>two</li></ul>\
                    <ol><li>first</li><li>second</li></ol>\
                    <table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>\
                    <pre><code class='language-rust'>fn main() {}\n</code></pre>";
        assert_eq!(
            markdown(&parse(html)),
            "# Title\n\nA **bold** [link](https://e.com/).\n\n- one\n  - nested\n- two\n\n\
             1. first\n2. second\n\n| k | v |\n| - | - |\n| a | 1 |\n\n```rust\nfn main() {}\n```"
        );
    }
}
