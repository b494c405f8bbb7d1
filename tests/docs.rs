//! The documentation held to the code: every `docs/X.md, "Heading"` cited
//! names a heading that exists, README and SPEC name the number of tools
//! the table has, and the README's environment table is the one `--help`
//! is made from (`ikigai_tools::env_vars`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ikigai_tools::env_vars::{Reader, ENVIRONMENT};
use ikigai_tools::profile::Profile;
use ikigai_tools::tools;
use regex::Regex;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `.rs` and `.md` files beneath `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs" || e == "md") {
            out.push(path);
        }
    }
}

/// Text as one line of words: comment markers and a string's line
/// continuations between them gone, as a citation may wrap.
fn words(text: &str) -> String {
    let markers = Regex::new(r#"\\?\s*\n\s*(//[!/]?|\*)?\s*"#).unwrap();
    markers.replace_all(text, " ").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The headings of a Markdown file, as written after the `#`s.
fn headings(text: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.insert(line.trim_start_matches('#').trim().to_owned());
        }
    }
    out
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces
/// as hyphens.
fn anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The file a citation names: README.md at the top, the others in docs/.
fn doc_file(name: &str) -> PathBuf {
    match name {
        "README" => root().join("README.md"),
        _ => root().join("docs").join(format!("{name}.md")),
    }
}

#[test]
fn every_cited_heading_exists() {
    let mut files = vec![root().join("README.md")];
    for dir in ["src", "tests", "docs"] {
        sources(&root().join(dir), &mut files);
    }
    // `docs/X.md, "Heading"`, in prose, a comment (wrapped or not) or a
    // string literal (its quotes escaped).
    let citation = Regex::new(
        r#"(?:docs/)?\b([A-Z][A-Z_]+)\.md,(?:\s|//[!/]?|\\)*\\?"((?:[^"\\]|\\\s)+)\\?""#,
    )
    .unwrap();
    // `[…](docs/X.md#anchor)`, `[…](X.md#anchor)` and `[…](#anchor)` links of
    // the Markdown files.
    let link = Regex::new(r"\]\(((?:[\w./]*[A-Z][A-Z_]+\.md)?)#([^)\s]+)\)").unwrap();
    let mut wrong = Vec::new();
    let mut cited = 0;
    for file in &files {
        let text = read(file);
        let here = file.strip_prefix(root()).unwrap().display().to_string();
        for found in citation.captures_iter(&text) {
            let target = doc_file(&found[1]);
            let heading = words(&found[2]);
            cited += 1;
            if !target.exists() || !headings(&read(&target)).contains(&heading) {
                wrong.push(format!("{here}: {}.md, {heading:?}", &found[1]));
            }
        }
        if file.extension().is_some_and(|e| e == "md") {
            for found in link.captures_iter(&text) {
                let target = match &found[1] {
                    "" => file.clone(),
                    name => file.parent().unwrap().join(name),
                };
                let anchors: BTreeSet<String> =
                    headings(&read(&target)).iter().map(|h| anchor(h)).collect();
                if !anchors.contains(&found[2]) {
                    wrong.push(format!("{here}: link to {}#{}", &found[1], &found[2]));
                }
            }
        }
    }
    assert!(cited > 20, "the citations were not found: {cited}");
    assert!(wrong.is_empty(), "cited headings that do not exist:\n{}", wrong.join("\n"));
}

const NUMBERS: [&str; 15] = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen",
];

#[test]
fn readme_and_spec_name_the_tools_the_table_has() {
    let seed = tools::of(Profile::Seed).count();
    let full = tools::of(Profile::Full).count();
    assert_eq!(seed, tools::TOOLS.len());
    // The seed's, the full profile's, and the job tools it adds.
    let counts = [seed, full, full - seed].map(|n| NUMBERS[n]);
    let named = Regex::new(r"(?i)\b(\w+) (?:(\w+) )?tools\b").unwrap();
    for doc in ["README.md", "docs/SPEC.md"] {
        let text = words(&read(&root().join(doc)));
        for found in named.captures_iter(&text) {
            for word in found.iter().skip(1).flatten() {
                let word = word.as_str().to_lowercase();
                if NUMBERS.contains(&word.as_str()) {
                    assert!(counts.contains(&word.as_str()), "{doc}: {:?}", &found[0]);
                }
            }
        }
        for n in [seed, full] {
            let phrase = format!("{} tools", NUMBERS[n]);
            assert!(text.to_lowercase().contains(&phrase), "{doc} never says {phrase:?}");
        }
    }
}

/// Who reads a variable, as the README's table says it.
fn reader(reader: Reader, full_only: bool) -> String {
    let who = match reader {
        Reader::Tools([]) => "every tool".to_owned(),
        Reader::Tools(tools) => tools.join(", "),
        Reader::Host => "catalog, check, call, list".to_owned(),
        Reader::Server => "`mcp --listen`".to_owned(),
    };
    if full_only {
        format!("{who} (full profile)")
    } else {
        who
    }
}

/// The README's environment table, made from `env_vars::ENVIRONMENT`.
fn environment_table() -> String {
    let mut out =
        String::from("| Variable | Meaning | Unset, or set by | Read by |\n|---|---|---|---|\n");
    for var in ENVIRONMENT {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            var.name,
            var.meaning,
            var.default,
            reader(var.reader, var.full_only)
        ));
    }
    out
}

const BEGIN: &str = "<!-- environment: made by tests/docs.rs from src/env_vars.rs; \
                     UPDATE_DOCS=1 cargo test --test tests docs rewrites it -->\n";
const END: &str = "<!-- end of environment -->";

/// README.md, "Environment variables" is `--help`'s list; `UPDATE_DOCS=1`
/// writes it there.
#[test]
fn the_readme_lists_the_environment_help_lists() {
    let path = root().join("README.md");
    let text = read(&path);
    let start = text.find(BEGIN).expect("the README's environment block") + BEGIN.len();
    let end = start + text[start..].find(END).expect("the end of the environment block");
    let table = environment_table();
    if text[start..end] != table && std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, format!("{}{table}{}", &text[..start], &text[end..])).unwrap();
        return;
    }
    assert_eq!(
        text[start..end],
        table,
        "README.md: run UPDATE_DOCS=1 cargo test --test tests docs"
    );
}
