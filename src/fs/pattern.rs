//! Glob patterns as glob and grep read them (docs/TOOLS.md, glob): `*`, `?`, `[abc]`,
//! `[a-z]`, `[!a]`, `**` and `{a,b}`.
//!
//! A pattern is compiled into a tree of path components, one tree per kind
//! of root (relative to `path`, or absolute). Brace alternatives are expanded
//! first, so `{src,include}/*.h` and `*.{c,h}` become plain patterns whose
//! common leading components share tree nodes; the walker then goes through
//! the tree and the file system together. Each component is one of:
//! - a literal name, looked up directly (no directory listing needed);
//! - `**`, any number of directories;
//! - a wildcard name, translated by globset with `literal_separator` and
//!   backslash escapes, bytewise (as C's glob(3) in the "C" locale), and
//!   compiled here within `REGEX_SIZE_LIMIT`.
//!
//! A pattern longer than `MAX_PATTERN_BYTES`, or one whose braces or
//! compiled components pass their bounds, is `INVALID_PATTERN` with a
//! message that says what is too large; a malformed one, with what is wrong
//! and where (an unclosed `[` or `{`, a `}` alone, a backward range, a `\`
//! that escapes nothing or a `/`): the brace parser reads the whole pattern
//! first, positions and all.
//!
//! The dotfile rule: a name that starts with `.` is only matched by a
//! component that starts with `.` (after brace expansion), so `*`, `?` and
//! `**` skip hidden files and directories while `.*` finds them.

use std::collections::HashMap;

use globset::GlobBuilder;
use regex::bytes::{Regex, RegexBuilder};

use crate::error::{GlobFault, ToolError};

/// The longest pattern the tools take, glob's and grep's alike (README,
/// docs/TOOLS.md): matching costs up to pattern × text, and no pattern a
/// model means is this long. A glob of 87,380 `*` made globset panic.
pub const MAX_PATTERN_BYTES: usize = 8192;
/// What one compiled pattern (grep's regex, a glob component's) and its
/// lazy DFA may take: beyond it the regex engine falls back to slower
/// matching, not to more memory, and a pattern too large to compile within
/// it is refused (a 100 KB regex took 1 GiB without it).
pub const REGEX_SIZE_LIMIT: usize = 10 * 1024 * 1024;
/// Brace expansion stops here: a pattern that names more alternatives than
/// this is refused rather than walked (and memory stays bounded).
const MAX_ALTERNATIVES: usize = 4096;
/// The expanded patterns together may not exceed this many bytes: each
/// distinct wildcard component among them is compiled and tried against
/// entries, and the tree holds a node per component (4096 alternatives of
/// 1,000 `*` each took 34 s and 970 MB when this was 4 MiB).
const MAX_EXPANDED_BYTES: usize = 64 * 1024;
/// Braces nested deeper than this are refused (the parser recurses).
const MAX_BRACE_DEPTH: usize = 32;

/// Why a pattern of `len` bytes is refused, if it is longer than
/// `MAX_PATTERN_BYTES`: the one wording for glob's and grep's patterns.
pub fn too_long(len: usize) -> Option<String> {
    (len > MAX_PATTERN_BYTES)
        .then(|| format!("pattern is {len} bytes long, at most {MAX_PATTERN_BYTES} are accepted"))
}

/// One path component of a pattern.
#[derive(Debug)]
pub enum Component {
    /// A name without wildcards (escapes removed).
    Literal(Vec<u8>),
    /// `**`: any number of directories.
    AnyDirs,
    /// A name with wildcards.
    Wild {
        text: String,
        test: Wildcard,
        /// Whether it may match a name that starts with `.`.
        dotfiles: bool,
    },
}

/// How a wildcard name is tested against an entry's name.
#[derive(Debug)]
pub enum Wildcard {
    /// A name with one `*` and no other wildcard (`*`, `*.c`, `test_*`):
    /// most patterns a model writes. Tested without a regex, and none is
    /// compiled: building one (its DFA) cost a listing's call more than
    /// the rest of its work together (docs/PERFORMANCE.md).
    Star(Star),
    /// Any other: globset's translation of the name, compiled here with a
    /// size limit: globset's own `compile_matcher` panics on a regex that
    /// does not compile (`expect`), which a long pattern reaches.
    Regex(Regex),
}

impl Wildcard {
    pub fn matches(&self, name: &[u8]) -> bool {
        match self {
            Wildcard::Star(star) => star.matches(name),
            Wildcard::Regex(matcher) => matcher.is_match(name),
        }
    }
}

/// A name with one `*`: what comes before it and what comes after.
#[derive(Debug)]
pub struct Star {
    prefix: Vec<u8>,
    suffix: Vec<u8>,
}

impl Star {
    /// The `*` of `text` if it is its only wildcard (and nothing is escaped).
    fn of(text: &str) -> Option<Star> {
        let bytes = text.as_bytes();
        if bytes.iter().any(|b| matches!(b, b'?' | b'[' | b'\\'))
            || bytes.iter().filter(|&&b| b == b'*').count() != 1
        {
            return None;
        }
        let star = bytes.iter().position(|&b| b == b'*')?;
        Some(Star { prefix: bytes[..star].to_vec(), suffix: bytes[star + 1..].to_vec() })
    }

    pub fn matches(&self, name: &[u8]) -> bool {
        // Byte loops rather than slice equality, which calls memcmp even
        // for the empty prefix of `*.c`: this runs for every entry.
        name.len() >= self.prefix.len() + self.suffix.len()
            && self.prefix.iter().zip(name).all(|(a, b)| a == b)
            && self.suffix.iter().rev().zip(name.iter().rev()).all(|(a, b)| a == b)
    }
}

impl Component {
    /// Whether the component matches one entry name. `.` and `..` are only
    /// ever matched literally.
    pub fn matches(&self, name: &[u8]) -> bool {
        match self {
            Component::Literal(literal) => literal == name,
            Component::AnyDirs => !name.starts_with(b"."),
            Component::Wild { test, dotfiles, .. } => {
                let hidden = name.starts_with(b".");
                (*dotfiles || !hidden) && name != b"." && name != b".." && test.matches(name)
            }
        }
    }

    pub fn is_any_dirs(&self) -> bool {
        matches!(self, Component::AnyDirs)
    }

    pub fn literal(&self) -> Option<&[u8]> {
        match self {
            Component::Literal(literal) => Some(literal),
            _ => None,
        }
    }

    /// Whether two components are the same pattern text (to share nodes).
    fn same_as(&self, other: &Component) -> bool {
        match (self, other) {
            (Component::Literal(a), Component::Literal(b)) => a == b,
            (Component::AnyDirs, Component::AnyDirs) => true,
            (Component::Wild { text: a, .. }, Component::Wild { text: b, .. }) => a == b,
            _ => false,
        }
    }

    /// Reads one component's text (no `/`, no unescaped braces); the
    /// matchers of wildcard components already compiled are in `compiled`.
    fn parse(text: &str, compiled: &mut HashMap<String, Regex>) -> Result<Component, ToolError> {
        if text == "**" {
            return Ok(Component::AnyDirs);
        }
        let bytes = text.as_bytes();
        let mut literal = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => {
                    // Not met: the brace parser refuses a `\` at the end or
                    // before a `/` (which ends a component).
                    let escaped = *bytes.get(i + 1).ok_or_else(|| {
                        ToolError::InvalidGlob(GlobFault::Other("a '\\' escapes nothing".into()))
                    })?;
                    literal.push(escaped);
                    i += 2;
                }
                b'*' | b'?' | b'[' => return Component::wild(text, compiled),
                b => {
                    literal.push(b);
                    i += 1;
                }
            }
        }
        Ok(Component::Literal(literal))
    }

    fn wild(text: &str, compiled: &mut HashMap<String, Regex>) -> Result<Component, ToolError> {
        let test = match (Star::of(text), compiled.get(text)) {
            (Some(star), _) => Wildcard::Star(star),
            (None, Some(matcher)) => Wildcard::Regex(matcher.clone()),
            (None, None) => {
                let matcher = compile(text)?;
                compiled.insert(text.to_owned(), matcher.clone());
                Wildcard::Regex(matcher)
            }
        };
        Ok(Component::Wild {
            text: text.to_owned(),
            test,
            dotfiles: text.starts_with('.') || text.starts_with("\\."),
        })
    }
}

/// The matcher of one wildcard component: globset's translation into a
/// regex (`literal_separator`, backslash escapes, bytewise), compiled with
/// the options globset's own matcher has and the size limit grep's regex
/// has. A regex that does not compile is `INVALID_PATTERN`, never a panic.
fn compile(text: &str) -> Result<Regex, ToolError> {
    let glob = GlobBuilder::new(text)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        // Not met for what the brace parser lets through; globset's words.
        .map_err(|e| ToolError::InvalidGlob(GlobFault::Other(e.kind().to_string())))?;
    RegexBuilder::new(glob.regex())
        .dot_matches_new_line(true)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(limit) => ToolError::GlobTooLarge(format!(
                "pattern compiles to more than {limit} bytes, the most accepted"
            )),
            other => ToolError::InvalidGlob(GlobFault::Other(format!(
                "it does not compile: {}",
                crate::error::one_line(&other.to_string())
            ))),
        })
}

/// A node of a pattern tree: the component it matched, what may follow.
#[derive(Debug)]
pub struct Node {
    pub component: Component,
    pub children: Vec<usize>,
    /// A pattern ends here: the entry that matched is a result.
    pub ends: bool,
    /// A pattern ends here with a `/`: the entry is a result if it is a
    /// directory, printed with a trailing `/`.
    pub ends_dir: bool,
}

/// The components of all patterns that start at one root.
#[derive(Debug)]
pub struct Tree {
    pub nodes: Vec<Node>,
}

/// Index of the root node of every tree.
pub const ROOT: usize = 0;

impl Tree {
    fn new() -> Tree {
        Tree {
            nodes: vec![Node {
                component: Component::Literal(Vec::new()),
                children: Vec::new(),
                ends: false,
                ends_dir: false,
            }],
        }
    }

    fn insert(&mut self, components: Vec<Component>, dir_only: bool) {
        let mut at = ROOT;
        for component in components {
            let existing = self.nodes[at]
                .children
                .iter()
                .copied()
                .find(|&c| self.nodes[c].component.same_as(&component));
            at = match existing {
                Some(child) => child,
                None => {
                    self.nodes.push(Node {
                        component,
                        children: Vec::new(),
                        ends: false,
                        ends_dir: false,
                    });
                    let child = self.nodes.len() - 1;
                    self.nodes[at].children.push(child);
                    child
                }
            };
        }
        if dir_only {
            self.nodes[at].ends_dir = true;
        } else {
            self.nodes[at].ends = true;
        }
    }

    pub fn node(&self, id: usize) -> &Node {
        &self.nodes[id]
    }
}

/// Where a tree's walk starts and how its results are spelled.
#[derive(Debug)]
pub struct Root {
    /// What results start with: `path` exactly as given, `/` for absolute
    /// patterns, empty for a relative pattern without `path` (the walk
    /// then starts in the current directory).
    pub prefix: Vec<u8>,
    pub tree: Tree,
}

/// A compiled glob: `pattern` under `path`.
#[derive(Debug)]
pub struct Glob {
    pub roots: Vec<Root>,
}

impl Glob {
    /// Compiles `pattern` relative to `path` (taken literally, not as a
    /// pattern); an absolute pattern ignores `path`. Every component is
    /// checked here, before anything is read.
    pub fn new(path: Option<&str>, pattern: &str) -> Result<Glob, ToolError> {
        if let Some(why) = too_long(pattern.len()) {
            return Err(ToolError::GlobTooLarge(why));
        }
        let mut compiled = HashMap::new();
        let mut relative: Option<Tree> = None;
        let mut absolute: Option<Tree> = None;
        for expanded in expand_braces(pattern)? {
            if expanded.is_empty() {
                continue;
            }
            // Cut only at ASCII bytes: never met.
            let text = String::from_utf8(expanded).map_err(|_| {
                ToolError::InvalidGlob(GlobFault::Other("it is not UTF-8 once expanded".into()))
            })?;
            let is_absolute = text.starts_with('/');
            let tree = if is_absolute { &mut absolute } else { &mut relative }
                .get_or_insert_with(Tree::new);
            let components = text
                .split('/')
                .filter(|c| !c.is_empty())
                .map(|c| Component::parse(c, &mut compiled))
                .collect::<Result<Vec<_>, _>>()?;
            // `/` alone (no component) names the root directory itself.
            let dir_only = text.ends_with('/') && !components.is_empty();
            tree.insert(components, dir_only);
        }
        let mut roots = Vec::new();
        if let Some(tree) = absolute {
            roots.push(Root { prefix: b"/".to_vec(), tree });
        }
        if let Some(tree) = relative {
            let prefix = path.unwrap_or_default().as_bytes().to_vec();
            roots.push(Root { prefix, tree });
        }
        Ok(Glob { roots })
    }
}

/// One piece of a pattern before brace expansion.
enum Piece {
    Text(Vec<u8>),
    Alternatives(Vec<Vec<Piece>>),
}

/// Expands `{a,b}` alternatives (nested ones too) into plain patterns.
/// Escapes and character classes are kept as they are for globset.
fn expand_braces(pattern: &str) -> Result<Vec<Vec<u8>>, ToolError> {
    let mut parser = BraceParser { s: pattern.as_bytes(), i: 0 };
    let pieces = parser.sequence(0)?;
    if parser.i != parser.s.len() {
        return Err(parser.fault(GlobFault::UnopenedBrace, parser.i));
    }
    expand(&pieces)
}

struct BraceParser<'a> {
    s: &'a [u8],
    i: usize,
}

impl BraceParser<'_> {
    /// The fault `what` at byte `at`, whose position is told in characters.
    fn fault(&self, what: fn(usize) -> GlobFault, at: usize) -> ToolError {
        ToolError::InvalidGlob(what(self.position(at)))
    }

    /// The position of byte `at` in characters from 0 (the pattern is
    /// UTF-8, and `at` starts a character).
    fn position(&self, at: usize) -> usize {
        self.s[..at].iter().filter(|&&b| b & 0xC0 != 0x80).count()
    }

    /// Reads up to the end, or (inside braces) up to `,` or `}`.
    fn sequence(&mut self, depth: usize) -> Result<Vec<Piece>, ToolError> {
        let mut pieces = Vec::new();
        let mut text = Vec::new();
        while let Some(&b) = self.s.get(self.i) {
            match b {
                b'\\' => {
                    let end = self.i + 2;
                    match self.s.get(self.i + 1) {
                        None => return Err(self.fault(GlobFault::DanglingEscape, self.i)),
                        Some(b'/') => return Err(self.fault(GlobFault::EscapedSlash, self.i)),
                        Some(_) => {}
                    }
                    text.extend_from_slice(&self.s[self.i..end]);
                    self.i = end;
                }
                b'[' => {
                    let end = self.class_end()?;
                    text.extend_from_slice(&self.s[self.i..end]);
                    self.i = end;
                }
                b'{' => {
                    if depth >= MAX_BRACE_DEPTH {
                        return Err(ToolError::GlobTooLarge(format!(
                            "braces are nested more than {MAX_BRACE_DEPTH} deep"
                        )));
                    }
                    let open = self.i;
                    self.i += 1;
                    if !text.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut text)));
                    }
                    let mut alternatives = Vec::new();
                    loop {
                        alternatives.push(self.sequence(depth + 1)?);
                        match self.s.get(self.i) {
                            Some(b',') => self.i += 1,
                            Some(b'}') => {
                                self.i += 1;
                                break;
                            }
                            _ => return Err(self.fault(GlobFault::UnclosedBrace, open)),
                        }
                    }
                    pieces.push(Piece::Alternatives(alternatives));
                }
                b',' | b'}' if depth > 0 => break,
                b'}' => return Err(self.fault(GlobFault::UnopenedBrace, self.i)),
                _ => {
                    text.push(b);
                    self.i += 1;
                }
            }
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        Ok(pieces)
    }

    /// The end (exclusive) of the character class at `self.i`, read as
    /// globset reads it: `]` right after `[` or `[!` is a member. A class
    /// is checked here as globset would check it, so that its error can
    /// say where: unclosed, a range whose end comes before its start; and
    /// it may not hold a `/`, which would split it in two components.
    fn class_end(&self) -> Result<usize, ToolError> {
        let open = self.i;
        let mut j = open + 1;
        if matches!(self.s.get(j), Some(b'!' | b'^')) {
            j += 1;
        }
        let members = j;
        if self.s.get(j) == Some(&b']') {
            j += 1;
        }
        let close = self.s[j.min(self.s.len())..]
            .iter()
            .position(|&b| b == b']')
            .ok_or_else(|| self.fault(GlobFault::UnclosedClass, open))?;
        let end = j + close + 1;
        if self.s[members..end].contains(&b'/') {
            return Err(self.fault(GlobFault::SlashInClass, open));
        }
        self.check_ranges(members, end - 1)?;
        Ok(end)
    }

    /// The ranges of the class members `s[from..to]`, as globset reads them
    /// (`-` first or last is a member): each must not run backwards.
    fn check_ranges(&self, from: usize, to: usize) -> Result<(), ToolError> {
        // Between ASCII bytes of a `&str`: UTF-8.
        let members = std::str::from_utf8(&self.s[from..to]).unwrap_or_default();
        let mut start: Option<(char, usize)> = None;
        let mut in_range = false;
        for (n, (at, c)) in members.char_indices().enumerate() {
            match (c, start) {
                ('-', Some(_)) if n > 0 && !in_range => in_range = true,
                (c, Some((first, first_at))) if in_range => {
                    if c < first {
                        let at = self.position(from + first_at);
                        return Err(ToolError::InvalidGlob(GlobFault::BackwardRange {
                            at,
                            from: first,
                            to: c,
                        }));
                    }
                    in_range = false;
                }
                (c, _) => start = Some((c, at)),
            }
        }
        Ok(())
    }
}

fn too_many_alternatives() -> ToolError {
    ToolError::GlobTooLarge(format!(
        "its braces expand to more than {MAX_ALTERNATIVES} patterns, at most {MAX_ALTERNATIVES} \
         are accepted"
    ))
}

fn too_many_bytes() -> ToolError {
    ToolError::GlobTooLarge(format!(
        "its braces expand to more than {MAX_EXPANDED_BYTES} bytes of patterns, at most \
         {MAX_EXPANDED_BYTES} are accepted"
    ))
}

fn expand(pieces: &[Piece]) -> Result<Vec<Vec<u8>>, ToolError> {
    let mut results: Vec<Vec<u8>> = vec![Vec::new()];
    for piece in pieces {
        match piece {
            Piece::Text(text) => {
                let bytes: usize = results.iter().map(|r| r.len() + text.len()).sum();
                if bytes > MAX_EXPANDED_BYTES {
                    return Err(too_many_bytes());
                }
                for r in &mut results {
                    r.extend_from_slice(text);
                }
            }
            Piece::Alternatives(alternatives) => {
                let mut options = Vec::new();
                for alternative in alternatives {
                    options.extend(expand(alternative)?);
                    if options.len() > MAX_ALTERNATIVES {
                        return Err(too_many_alternatives());
                    }
                }
                if results.len().saturating_mul(options.len()) > MAX_ALTERNATIVES {
                    return Err(too_many_alternatives());
                }
                let mut product = Vec::with_capacity(results.len() * options.len());
                let mut bytes = 0usize;
                for r in &results {
                    for o in &options {
                        bytes += r.len() + o.len();
                        if bytes > MAX_EXPANDED_BYTES {
                            return Err(too_many_bytes());
                        }
                        product.push([r.as_slice(), o.as_slice()].concat());
                    }
                }
                results = product;
            }
        }
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Component, ToolError> {
        Component::parse(text, &mut HashMap::new())
    }

    fn expanded(p: &str) -> Vec<String> {
        expand_braces(p).unwrap().into_iter().map(|b| String::from_utf8(b).unwrap()).collect()
    }

    #[test]
    fn braces_expand_in_order_and_nest() {
        assert_eq!(expanded("a{b,c}d"), ["abd", "acd"]);
        assert_eq!(expanded("{a,{b,c}}x"), ["ax", "bx", "cx"]);
        assert_eq!(expanded("{a,b}{1,2}"), ["a1", "a2", "b1", "b2"]);
        assert_eq!(expanded("{,x}y"), ["y", "xy"]);
        assert_eq!(expanded("a,b"), ["a,b"]);
        assert_eq!(expanded("{src,include/sys}/*.h"), ["src/*.h", "include/sys/*.h"]);
    }

    #[test]
    fn escapes_and_classes_keep_braces_literal() {
        assert_eq!(expanded(r"\{a,b\}"), [r"\{a,b\}"]);
        assert_eq!(expanded("[{]x{1,2}"), ["[{]x1", "[{]x2"]);
        assert_eq!(expanded("[]}]"), ["[]}]"]);
        assert_eq!(expanded("[!}]"), ["[!}]"]);
    }

    #[test]
    fn malformed_patterns_are_refused() {
        let fault = |p: &str| match Glob::new(None, p) {
            Err(ToolError::InvalidGlob(fault)) => fault,
            other => panic!("{p}: {other:?}"),
        };
        for (p, expected) in [
            ("{a", GlobFault::UnclosedBrace(0)),
            ("a}", GlobFault::UnopenedBrace(1)),
            ("{a,b", GlobFault::UnclosedBrace(0)),
            ("x{a,{b}", GlobFault::UnclosedBrace(1)),
            ("[a", GlobFault::UnclosedClass(0)),
            ("[]", GlobFault::UnclosedClass(0)),
            ("[!]", GlobFault::UnclosedClass(0)),
            ("a\\", GlobFault::DanglingEscape(1)),
            ("a\\/b", GlobFault::EscapedSlash(1)),
            ("{a,[b}", GlobFault::UnclosedClass(3)),
            ("}{", GlobFault::UnopenedBrace(0)),
            ("ok/[x/*.c", GlobFault::UnclosedClass(3)),
            ("a[/]b", GlobFault::SlashInClass(1)),
            ("*.[", GlobFault::UnclosedClass(2)),
            ("é[a", GlobFault::UnclosedClass(1)),
            ("[z-a]", GlobFault::BackwardRange { at: 1, from: 'z', to: 'a' }),
            ("x[!a-c-b0-9z-y]", GlobFault::BackwardRange { at: 11, from: 'z', to: 'y' }),
            ("[a-]-[", GlobFault::UnclosedClass(5)),
        ] {
            assert_eq!(fault(p), expected, "{p}");
        }
        // What globset takes, the checks here take.
        for p in ["[]a]", "[!]]", "[-a]", "[a-]", "[a-c-d]", "[---]", "[é-ü]", "\\[a", "{[,]}"] {
            assert!(Glob::new(None, p).is_ok(), "{p}");
            assert!(GlobBuilder::new(p).backslash_escape(true).build().is_ok(), "{p}");
        }
        let deep = format!("{}{}", "{".repeat(100), "}".repeat(100));
        let refused = |p: &str| expand_braces(p).err().map(|e| e.to_string());
        assert_eq!(
            refused(&deep).as_deref(),
            Some("Invalid glob pattern: braces are nested more than 32 deep")
        );
        let many = "{a,b,c,d}".repeat(7);
        assert_eq!(
            refused(&many).as_deref(),
            Some("Invalid glob pattern: its braces expand to more than 4096 patterns, at most 4096 are accepted")
        );
    }

    #[test]
    fn components_are_classified() {
        assert!(matches!(parse("**"), Ok(Component::AnyDirs)));
        assert!(matches!(parse(r"a\*b"), Ok(Component::Literal(l)) if l == b"a*b"));
        assert!(matches!(parse("a*"), Ok(Component::Wild { dotfiles: false, .. })));
        assert!(matches!(parse(".*"), Ok(Component::Wild { dotfiles: true, .. })));
        assert!(matches!(parse(r"\.*"), Ok(Component::Wild { dotfiles: true, .. })));
    }

    #[test]
    fn one_star_is_matched_without_compiling_a_regex_and_alike() {
        let names: [&[u8]; 12] = [
            b"a.c", b".c", b"c", b"ab.c", b"a.cc", b"test_x", b"test_", b"xtest_", b"", b"a",
            b"\xff.c", b"a*c",
        ];
        for pattern in ["*", "*.c", "test_*", "a*c", "a*", "*c", "*.c*", "a?c", "[a]*", "a\\*c*"] {
            let Ok(Component::Wild { test, .. }) = parse(pattern) else {
                panic!("{pattern} is a wildcard");
            };
            let is_star = matches!(test, Wildcard::Star(_));
            assert_eq!(is_star, !pattern.contains(['?', '[', '\\']) && pattern != "*.c*");
            let matcher = compile(pattern).unwrap();
            for name in names {
                let expected = matcher.is_match(name);
                assert_eq!(test.matches(name), expected, "{pattern} on {name:?}");
            }
        }
    }

    #[test]
    fn the_dotfile_rule() {
        let star = parse("*").unwrap();
        assert!(star.matches(b"a") && !star.matches(b".a"));
        let dot_star = parse(".*").unwrap();
        assert!(dot_star.matches(b".a") && !dot_star.matches(b".") && !dot_star.matches(b".."));
        assert!(!Component::AnyDirs.matches(b".git"));
        assert!(parse(".git").unwrap().matches(b".git"));
    }

    #[test]
    fn shared_prefixes_share_nodes() {
        let glob = Glob::new(Some("dir/"), "src/{a,b}/*.c").unwrap();
        assert_eq!(glob.roots.len(), 1);
        assert_eq!(glob.roots[0].prefix, b"dir/");
        // root, src, a, b, *.c under a, *.c under b
        assert_eq!(glob.roots[0].tree.nodes.len(), 6);
        let both = Glob::new(Some("dir"), "{/abs,rel}").unwrap();
        assert_eq!(
            both.roots.iter().map(|r| r.prefix.clone()).collect::<Vec<_>>(),
            [b"/".to_vec(), b"dir".to_vec()]
        );
    }
}
