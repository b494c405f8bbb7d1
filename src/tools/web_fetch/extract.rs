//! What of an HTML page web_fetch converts (docs/TOOLS.md, "web_fetch"):
//! the tree parsed once, its title, the main content picked and pruned of
//! what is no text to read, its links made absolute, and whether it is a
//! shell that JavaScript fills.
//!
//! - **Main content**: the first `<main>` or `role="main"` element, else
//!   the page's one `<article>` (several are a list of them: the body
//!   then), else `<body>`.
//! - **Dropped**: scripts, styles, `<noscript>`, SVG, forms and their
//!   controls, `<nav>` and `<aside>` wherever they are; `<header>` and
//!   `<footer>` outside an article or `<main>`, where they are the site's
//!   chrome, not the article's title or byline.
//! - **Links**: `href` and `src` resolved against the final URL, so a model
//!   can fetch what a page links to.

use std::rc::Rc;

use markup5ever_rcdom::{Node, NodeData};
use url::Url;

/// Dropped wherever they are: no text a reader reads.
const DROPPED: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "form", "button",
    "input", "select", "textarea", "nav", "aside",
];

/// Dropped outside an article or `<main>` (the site's chrome).
const CHROME: &[&str] = &["header", "footer"];

/// Nesting kept: html5ever sets no bound, and the converter walks the
/// tree recursively; a page nested deeper (an attack, no page a person
/// reads) loses what is below.
const MAX_DEPTH: usize = 256;

/// What a `<noscript>` says on a page JavaScript renders, in some words.
const ASKS_FOR_JAVASCRIPT: &str = "javascript";

/// Under this many letters and digits a page that asks for JavaScript in
/// a `<noscript>` is taken for a shell ("Loading…").
const SHELL_TEXT: usize = 200;

/// An HTML page, read.
pub struct Page {
    /// The `<title>`, whitespace collapsed; empty when there is none.
    pub title: String,
    /// The content to convert, pruned.
    pub content: Rc<Node>,
    /// No readable text, only scripts to make it: a JavaScript shell.
    pub needs_javascript: bool,
    /// The document `content` is in, kept alive with it: dropping a
    /// document empties every node below it, whoever else holds one.
    _document: Rc<Node>,
}

/// Reads the parsed `document` fetched from `base`.
pub fn read(document: &Rc<Node>, base: Option<&Url>) -> Page {
    let mut seen = Seen::default();
    seen.walk(document);
    let content = (seen.main.clone().or_else(|| seen.single_article()))
        .or_else(|| seen.body.clone())
        .unwrap_or_else(|| document.clone());
    let in_article = is_element(&content, &["main", "article"]) || seen.role_main_is(&content);
    prune(&content, base, in_article, 0);
    let letters = letters_in(&content);
    let needs_javascript = seen.scripts > 0
        && (letters == 0 || (letters < SHELL_TEXT && seen.noscript_asks_for_javascript));
    let title = seen.title.unwrap_or_default();
    Page { title, content, needs_javascript, _document: document.clone() }
}

/// What one walk over the whole page finds.
#[derive(Default)]
struct Seen {
    title: Option<String>,
    main: Option<Rc<Node>>,
    /// Whether `main` is there by `role="main"`.
    main_by_role: bool,
    articles: Vec<Rc<Node>>,
    body: Option<Rc<Node>>,
    scripts: usize,
    noscript_asks_for_javascript: bool,
}

impl Seen {
    /// Walks the tree without recursion (it may be deep).
    fn walk(&mut self, document: &Rc<Node>) {
        let mut stack = vec![document.clone()];
        while let Some(node) = stack.pop() {
            if let NodeData::Element { name, attrs, .. } = &node.data {
                match &*name.local {
                    "title" if self.title.is_none() => self.title = Some(collapsed_text(&node)),
                    "main" if self.main.is_none() => self.main = Some(node.clone()),
                    "article" => self.articles.push(node.clone()),
                    "body" if self.body.is_none() => self.body = Some(node.clone()),
                    "script" => self.scripts += 1,
                    "noscript" => {
                        let text = collapsed_text(&node).to_ascii_lowercase();
                        self.noscript_asks_for_javascript |= text.contains(ASKS_FOR_JAVASCRIPT);
                    }
                    _ => {}
                }
                let role_main = attrs
                    .borrow()
                    .iter()
                    .any(|a| &*a.name.local == "role" && a.value.eq_ignore_ascii_case("main"));
                if role_main && self.main.is_none() {
                    self.main = Some(node.clone());
                    self.main_by_role = true;
                }
            }
            // Children pushed last first: the walk goes in document order,
            // so "the first" is the first in the page.
            stack.extend(node.children.borrow().iter().rev().cloned());
        }
    }

    fn single_article(&self) -> Option<Rc<Node>> {
        match self.articles.as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        }
    }

    fn role_main_is(&self, node: &Rc<Node>) -> bool {
        self.main_by_role && self.main.as_ref().is_some_and(|m| Rc::ptr_eq(m, node))
    }
}

/// Whether `node` is one of the elements `names`.
fn is_element(node: &Node, names: &[&str]) -> bool {
    matches!(&node.data, NodeData::Element { name, .. } if names.contains(&&*name.local))
}

/// Removes what is not read below `node`, makes its links absolute.
fn prune(node: &Rc<Node>, base: Option<&Url>, in_article: bool, depth: usize) {
    if depth >= MAX_DEPTH {
        node.children.borrow_mut().clear();
        return;
    }
    node.children
        .borrow_mut()
        .retain(|child| !is_element(child, DROPPED) && (in_article || !is_element(child, CHROME)));
    if let (Some(base), NodeData::Element { attrs, .. }) = (base, &node.data) {
        for attr in attrs.borrow_mut().iter_mut() {
            if matches!(&*attr.name.local, "href" | "src") && !attr.value.starts_with('#') {
                if let Ok(absolute) = base.join(&attr.value) {
                    attr.value = String::from(absolute).into();
                }
            }
        }
    }
    let children: Vec<Rc<Node>> = node.children.borrow().clone();
    for child in &children {
        let in_article = in_article || is_element(child, &["main", "article"]);
        prune(child, base, in_article, depth + 1);
    }
}

/// The text an HTML fragment reads as: its text nodes, entities decoded,
/// white space folded (web_search's snippets, which providers mark up
/// with `<strong>` and `&amp;`).
pub fn text_of(html: &str) -> String {
    collapsed_text(&super::convert::parse(html))
}

/// The text below `node`, whitespace runs made one space, trimmed.
fn collapsed_text(node: &Rc<Node>) -> String {
    let mut text = String::new();
    each_text(node, |t| text.push_str(t));
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// How many letters and digits the text below `node` holds.
fn letters_in(node: &Rc<Node>) -> usize {
    let mut letters = 0;
    each_text(node, |t| letters += t.chars().filter(|c| c.is_alphanumeric()).count());
    letters
}

/// Each text node below `node`, in order, without recursion.
fn each_text(node: &Rc<Node>, mut f: impl FnMut(&str)) {
    let mut stack = vec![node.clone()];
    while let Some(node) = stack.pop() {
        if let NodeData::Text { contents } = &node.data {
            f(&contents.borrow());
        }
        stack.extend(node.children.borrow().iter().rev().cloned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(html: &str) -> Page {
        let tree = htmd::HtmlToMarkdown::new().html_to_tree(html).unwrap();
        read(&tree, Url::parse("https://example.com/docs/page.html").ok().as_ref())
    }

    fn text(page: &Page) -> String {
        collapsed_text(&page.content)
    }

    #[test]
    fn a_fragments_text_has_no_tags_its_entities_decoded_and_space_folded() {
        assert_eq!(
            text_of("The <strong>Rust</strong> &amp; C&#43;&#x2B;\n\n book &lt;3 a < b &foo; &"),
            "The Rust & C++ book <3 a < b &foo; &"
        );
        assert_eq!(text_of("<b>é</b>&nbsp;x"), "é x");
        assert_eq!(text_of("<h1>Internal\nError</h1>"), "Internal Error");
    }

    #[test]
    fn main_is_preferred_then_role_main_then_the_one_article_then_body() {
        let p = page("<title> A \n title </title><nav>menu</nav><main>the text</main><p>other</p>");
        assert_eq!((p.title.as_str(), text(&p).as_str()), ("A title", "the text"));
        let p = page("<div role=main>by role</div><p>other</p>");
        assert_eq!(text(&p), "by role");
        let p = page("<article>one</article><p>other</p>");
        assert_eq!(text(&p), "one");
        let p = page("<article>one</article><article>two</article>");
        assert_eq!(text(&p), "onetwo", "the body, its text nodes joined");
    }

    #[test]
    fn chrome_goes_outside_an_article_and_stays_inside() {
        let p = page(
            "<header>site</header><article><header><h1>Title</h1></header>body\
             <footer>by me</footer></article><footer>site foot</footer>",
        );
        assert_eq!(text(&p), "Titlebodyby me");
        let p = page("<header>site</header><p>body<script>x()</script><style>p{}</style></p>");
        assert_eq!(text(&p), "body");
    }

    #[test]
    fn links_are_made_absolute_against_the_page() {
        let p = page("<a href='../x'>x</a><a href='#top'>t</a><img src='/i.png'>");
        let md = htmd::HtmlToMarkdown::new().tree_to_markdown(&p.content);
        assert_eq!(md, "[x](https://example.com/x)[t](#top)![](https://example.com/i.png)");
    }

    #[test]
    fn a_page_of_scripts_needs_javascript_and_one_with_text_does_not() {
        assert!(page("<div id=root></div><script src=app.js></script>").needs_javascript);
        let shell = "<div id=root>Loading…</div><noscript>You need to enable JavaScript to run \
                     this app.</noscript><script src=app.js></script>";
        assert!(page(shell).needs_javascript);
        assert!(!page("<p>Hello</p><script>track()</script>").needs_javascript);
        assert!(!page("<p></p>").needs_javascript, "empty, but no script to fill it");
    }

    #[test]
    fn nesting_past_the_bound_is_cut_not_overflowed() {
        let html = format!("{}deep{}", "<div>".repeat(1_000), "</div>".repeat(1_000));
        let p = page(&html);
        assert_eq!(text(&p), "");
    }
}
