//! A seeded generator of malformed and odd argument objects (docs/SPEC.md, "The protocol"):
//! random bytes, truncated and deeply nested JSON, wrong types, huge
//! numbers, empty/NUL/huge/unicode paths, every kind of Unicode.
//!
//! Every case is derived from `(random seed, tool, case number)` alone, so
//! a failure found on a thread pool is reproduced by the same random seed,
//! whatever the scheduling. The random seed (named so apart from the seed
//! profile) comes from `IKIGAI_FUZZ_SEED`, else a fixed default.
//!
//! Safety: the generated values never name anything outside the tool's
//! working directory: no absolute paths, no `..`, no `/` in shell commands
//! and no lowercase ASCII letters in them (so no shell keyword or builtin
//! word can be formed; the bash tool runs with an empty `PATH` as well).

use std::fmt::Write as _;

/// xorshift64*: small, fast and good enough to spread cases.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(random_seed: u64) -> Rng {
        // splitmix64 of the seed, so that nearby seeds give unrelated streams.
        let mut z = random_seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        Rng(if z == 0 { 1 } else { z })
    }

    /// The generator of one case, independent of every other case.
    pub fn for_case(random_seed: u64, stream: u64, case: u64) -> Rng {
        Rng::new(
            random_seed ^ stream.wrapping_mul(0x1000_0000_01b3) ^ case.wrapping_mul(0x9e37_79b9),
        )
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below((hi - lo + 1) as u64) as usize
    }

    /// True one time in `n`.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// The random seed a run uses when `IKIGAI_FUZZ_SEED` is not set: fixed, so
/// that every run of `cargo test` throws the same cases and any failure
/// replays.
pub const DEFAULT_RANDOM_SEED: u64 = 0x1c1a_1700_15ee_d000;

/// The random seed of this run: `IKIGAI_FUZZ_SEED` (decimal or 0x-hex),
/// else [`DEFAULT_RANDOM_SEED`]; one for every test of the process, printed
/// by each test that uses it.
pub fn random_seed() -> u64 {
    static RANDOM_SEED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *RANDOM_SEED.get_or_init(read_random_seed)
}

fn read_random_seed() -> u64 {
    seed_from_env("IKIGAI_FUZZ_SEED", DEFAULT_RANDOM_SEED)
}

/// A random seed from `var` (decimal or 0x-hex), else `default`.
pub fn seed_from_env(var: &str, default: u64) -> u64 {
    match std::env::var(var) {
        Ok(text) => {
            let text = text.trim();
            let parsed = match text.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => text.parse(),
            };
            parsed.unwrap_or_else(|_| panic!("{var} is not a number: {text:?}"))
        }
        Err(_) => default,
    }
}

/// A number from the environment, or the default.
pub fn count_from_env(var: &str, default: usize) -> usize {
    std::env::var(var).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(default)
}

/// How much a randomised or fault trial does: a short run in every
/// `cargo test`, and the long run of its `#[ignore]`d twin, which `.ci/run`
/// runs with `cargo test -- --ignored`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Length {
    Short,
    Long,
}

impl Length {
    /// The count for this length: `var` from the environment when set,
    /// else `short` or `long`.
    pub fn count(self, var: &str, short: usize, long: usize) -> usize {
        count_from_env(var, if self == Length::Short { short } else { long })
    }
}

/// What kind of value a parameter takes, which decides the odd values
/// thrown at it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A path relative to the tool's directory (or an odd string).
    Path,
    /// Free text (file contents, edit strings).
    Text,
    /// A shell command: harmless text only.
    Command,
    /// A glob pattern.
    Glob,
    /// A regular expression.
    Regex,
    Int,
    Bool,
}

/// A tool as the generator sees it: its link name and its parameters.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    pub link: &'static str,
    pub params: &'static [(&'static str, Kind)],
    /// Names of fixture files in the tool's directory worth aiming at.
    pub fixtures: &'static [&'static str],
}

/// Where the argument object travels: it bounds what can be sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// stdin: any bytes, any size.
    Ikigai,
    /// `$1`: no NUL byte (the kernel cannot pass one), at most 128 KiB
    /// (MAX_ARG_STRLEN), and not starting with `-` (that is a flag, not
    /// an argument object, docs/SPEC.md, "The protocol").
    Shellclaw,
}

impl Dialect {
    fn max_string(self) -> usize {
        match self {
            Dialect::Ikigai => 1 << 20,
            Dialect::Shellclaw => 24 << 10,
        }
    }
}

/// One generated input, with a word on how it was made (for failure reports).
pub struct Case {
    pub input: Vec<u8>,
    pub strategy: &'static str,
}

pub fn generate(rng: &mut Rng, spec: &Spec, dialect: Dialect) -> Case {
    let (strategy, mut input) = match rng.below(20) {
        0..=1 => ("random bytes", random_bytes(rng, dialect)),
        2..=3 => ("truncated JSON", truncated(rng, spec, dialect)),
        4 => ("deep nesting", deep_nesting(rng, spec)),
        5 => ("non-object root", non_object_root(rng, dialect)),
        6 => ("syntax oddity", syntax_oddity(rng, spec, dialect)),
        7 => ("duplicate keys", duplicate_keys(rng, spec, dialect)),
        8..=13 => ("odd object", object(rng, spec, dialect).into_bytes()),
        _ => ("well-typed odd values", well_typed(rng, spec, dialect).into_bytes()),
    };
    if dialect == Dialect::Shellclaw {
        fit_for_argv(&mut input);
    }
    Case { input, strategy }
}

/// The kernel takes no NUL in an argument and at most 128 KiB; a leading
/// `-` would make it a flag.
fn fit_for_argv(input: &mut Vec<u8>) {
    for b in input.iter_mut() {
        if *b == 0 {
            *b = b' ';
        }
    }
    input.truncate(120 << 10);
    if input.first() == Some(&b'-') {
        input[0] = b' ';
    }
}

fn size(rng: &mut Rng, dialect: Dialect) -> usize {
    match rng.below(100) {
        0..=69 => rng.range(0, 40),
        70..=94 => rng.range(41, 2000),
        _ => rng.range(2001, dialect.max_string()),
    }
}

fn random_bytes(rng: &mut Rng, dialect: Dialect) -> Vec<u8> {
    let n = size(rng, dialect);
    let biased = rng.one_in(2);
    (0..n)
        .map(|_| {
            if biased {
                // Mostly JSON punctuation, so the parser goes further.
                rng.pick(b"{}[]\":,0123456789-+.eE \\ntrufalsu\x00\xff\xc3\xa9")
            } else {
                rng.next_u64() as u8
            }
        })
        .collect()
}

fn truncated(rng: &mut Rng, spec: &Spec, dialect: Dialect) -> Vec<u8> {
    let mut text = object(rng, spec, dialect).into_bytes();
    let cut = rng.range(0, text.len().saturating_sub(1));
    text.truncate(cut);
    text
}

fn deep_nesting(rng: &mut Rng, spec: &Spec) -> Vec<u8> {
    let depth = rng.pick(&[2usize, 64, 126, 127, 128, 129, 1000, 50_000]);
    let closed = rng.one_in(2);
    let (open, close): (&str, &str) = match rng.below(3) {
        0 => ("[", "]"),
        1 => ("{\"a\":", "}"),
        _ => ("[{\"k\":", "}]"),
    };
    let mut nest = open.repeat(depth);
    nest.push_str(if rng.one_in(2) { "1" } else { "\"x\"" });
    if closed {
        nest.push_str(&close.repeat(depth));
    }
    if rng.one_in(2) {
        nest.into_bytes()
    } else {
        // As the value of a real parameter.
        let (name, _) = rng.pick(spec.params);
        format!("{{{}:{}}}", json_string(name), nest).into_bytes()
    }
}

fn non_object_root(rng: &mut Rng, dialect: Dialect) -> Vec<u8> {
    let s = odd_string(rng, dialect);
    let root = match rng.below(10) {
        0 => "null".to_owned(),
        1 => "true".to_owned(),
        2 => huge_number(rng).to_owned(),
        3 => json_string(&s),
        4 => format!("[{}]", json_string(&s)),
        5 => "[]".to_owned(),
        6 => String::new(),
        7 => " \t\r\n ".to_owned(),
        8 => "\u{feff}{}".to_owned(),
        _ => format!("{{}}{}", rng.pick(&["{}", "x", "\0", "[", " }", "\u{feff}"])),
    };
    root.into_bytes()
}

fn syntax_oddity(rng: &mut Rng, spec: &Spec, dialect: Dialect) -> Vec<u8> {
    let valid = object(rng, spec, dialect);
    let (name, _) = rng.pick(spec.params);
    let key = json_string(name);
    let odd = match rng.below(14) {
        0 => format!("{{{key}:\"x\",}}"),
        1 => format!("{{/* c */{key}:\"x\"}}"),
        2 => format!("{{'{name}':'x'}}"),
        3 => format!("{{{key}:NaN}}"),
        4 => format!("{{{key}:-Infinity}}"),
        5 => format!("{{{key}:+1}}"),
        6 => format!("{{{key}:0x10}}"),
        7 => format!("{{{key}:\"a\tb\nc\u{1}\"}}"),
        8 => format!("{{{key}:\"\\ud800\"}}"),
        9 => format!("{{{key}:\"\\udc00\\ud800\"}}"),
        10 => format!("{{{key}:\"\\u00\"}}"),
        11 => format!("{valid}{valid}"),
        12 => format!("\u{feff}{valid}"),
        _ => format!("{{{key}:\"\\x41\"}}"),
    };
    let mut bytes = odd.into_bytes();
    if rng.one_in(8) {
        // Overlong and stray UTF-8 inside a string.
        let at = bytes.len().saturating_sub(2);
        let junk: &[u8] =
            rng.pick(&[&b"\xc0\xaf"[..], b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80"]);
        bytes.splice(at..at, junk.iter().copied());
    }
    bytes
}

fn duplicate_keys(rng: &mut Rng, spec: &Spec, dialect: Dialect) -> Vec<u8> {
    let mut members = Vec::new();
    for _ in 0..rng.range(2, 6) {
        let (name, kind) = rng.pick(spec.params);
        members.push(format!("{}:{}", json_string(name), value(rng, kind, spec, dialect)));
    }
    format!("{{{}}}", members.join(",")).into_bytes()
}

/// An object whose members are the tool's parameters with odd values of
/// the right type, values of the wrong type, nulls, and extra keys.
pub fn object(rng: &mut Rng, spec: &Spec, dialect: Dialect) -> String {
    let mut members = Vec::new();
    for &(name, kind) in spec.params {
        match rng.below(10) {
            0 => {}                                                   // absent
            1 => members.push(format!("{}:null", json_string(name))), // null = absent
            2 => members.push(format!("{}:{}", json_string(name), wrong_type(rng, kind, dialect))),
            _ => members.push(format!("{}:{}", json_string(name), value(rng, kind, spec, dialect))),
        }
    }
    for _ in 0..rng.below(3) {
        let key =
            if rng.one_in(2) { odd_string(rng, Dialect::Shellclaw) } else { "extra".to_owned() };
        members.push(format!("{}:{}", json_string(&key), any_value(rng, dialect)));
    }
    // Key order is not part of the protocol: shuffle.
    for i in (1..members.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        members.swap(i, j);
    }
    let ws = rng.pick(&["", " ", "\n", "\t", "\r\n  "]);
    format!("{ws}{{{ws}{}{ws}}}{ws}", members.join(&format!(",{ws}")))
}

/// Every parameter of the right type, with odd values: these reach the
/// tool's own work (reading, writing, matching, running).
fn well_typed(rng: &mut Rng, spec: &Spec, dialect: Dialect) -> String {
    let mut members = Vec::new();
    for &(name, kind) in spec.params {
        if matches!(kind, Kind::Int | Kind::Bool) && rng.one_in(3) {
            continue; // optional: sometimes absent
        }
        members.push(format!("{}:{}", json_string(name), value(rng, kind, spec, dialect)));
    }
    format!("{{{}}}", members.join(","))
}

fn value(rng: &mut Rng, kind: Kind, spec: &Spec, dialect: Dialect) -> String {
    match kind {
        Kind::Path => {
            let s = path(rng, spec);
            lit(rng, &s)
        }
        Kind::Text => {
            let s = text(rng, spec, dialect);
            lit(rng, &s)
        }
        Kind::Command => {
            let s = command(rng, dialect);
            lit(rng, &s)
        }
        Kind::Glob => {
            let s = glob(rng, spec, dialect);
            lit(rng, &s)
        }
        Kind::Regex => {
            let s = regex(rng, dialect);
            lit(rng, &s)
        }
        Kind::Int => int(rng),
        Kind::Bool => rng.pick(&["true", "false"]).to_string(),
    }
}

/// A value of some other type than the parameter takes.
fn wrong_type(rng: &mut Rng, kind: Kind, dialect: Dialect) -> String {
    loop {
        let v = any_value(rng, dialect);
        let first = v.as_bytes().first().copied().unwrap_or(b'n');
        let same = match kind {
            Kind::Int => first == b'-' || first.is_ascii_digit(),
            Kind::Bool => v == "true" || v == "false",
            _ => first == b'"',
        };
        if !same {
            return v;
        }
    }
}

fn any_value(rng: &mut Rng, dialect: Dialect) -> String {
    match rng.below(9) {
        0 => "null".to_owned(),
        1 => rng.pick(&["true", "false"]).to_string(),
        2 => int(rng),
        3 => json_string(&odd_string(rng, dialect)),
        4 => "[]".to_owned(),
        5 => format!("[{},{}]", int(rng), json_string(&odd_string(rng, Dialect::Shellclaw))),
        6 => "{}".to_owned(),
        7 => format!("{{\"a\":{}}}", int(rng)),
        _ => format!("{}{}", "[".repeat(40), "]".repeat(40)),
    }
}

/// Numbers, many of them past what an offset or a limit can mean, some
/// past what an f64 can hold (written as text: no JSON library would).
fn int(rng: &mut Rng) -> String {
    if rng.one_in(4) {
        return (rng.next_u64() as i64 >> rng.below(64)).to_string();
    }
    huge_number(rng).to_owned()
}

fn huge_number(rng: &mut Rng) -> &'static str {
    rng.pick(&[
        "0",
        "1",
        "-1",
        "-0",
        "2.0",
        "2.5",
        "-0.0",
        "1e3",
        "1E-300",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551615",
        "18446744073709551616",
        "340282366920938463463374607431768211456",
        "1e308",
        "-1e308",
        "1e309",
        "-1e400",
        "4.9e-324",
        "9007199254740993",
        "0.00000000000000000000000000000000000001",
        "123456789012345678901234567890e-10",
    ])
}

/// Characters from every kind of Unicode: controls, Latin-1, combining
/// marks, bidi overrides, zero-width, BOM, noncharacters, private use, CJK,
/// astral emoji, the last code point. Never `/`.
fn unicode_char(rng: &mut Rng) -> char {
    let ranges: &[(u32, u32)] = &[
        (0x20, 0x2e),
        (0x30, 0x7e),
        (0x01, 0x1f),
        (0x7f, 0xff),
        (0x300, 0x36f),
        (0x202a, 0x202e),
        (0x2066, 0x2069),
        (0x200b, 0x200f),
        (0xfeff, 0xfeff),
        (0xfff9, 0xffff),
        (0xe000, 0xf8ff),
        (0x4e00, 0x9fff),
        (0x1f300, 0x1faff),
        (0x10fffe, 0x10ffff),
        (0x0, 0x0),
    ];
    let (lo, hi) = rng.pick(ranges);
    char::from_u32(lo + rng.below(u64::from(hi - lo + 1)) as u32).unwrap_or('\u{fffd}')
}

fn unicode_text(rng: &mut Rng, n: usize) -> String {
    (0..n).map(|_| unicode_char(rng)).collect()
}

/// Empty, NUL-laden, huge, or any Unicode.
fn odd_string(rng: &mut Rng, dialect: Dialect) -> String {
    match rng.below(8) {
        0 => String::new(),
        1 => "\0".to_owned(),
        2 => format!("a\0b{}", unicode_text(rng, 3)),
        3 => "x".repeat(size(rng, dialect)),
        4 => " \t\n".to_owned(),
        _ => {
            let n = size(rng, dialect) / 4;
            unicode_text(rng, n)
        }
    }
}

/// A file name inside the tool's directory, or an odd string. Never
/// absolute, never `..`.
fn path(rng: &mut Rng, spec: &Spec) -> String {
    let p = match rng.below(12) {
        0..=2 if !spec.fixtures.is_empty() => rng.pick(spec.fixtures).to_string(),
        3 => String::new(),
        4 => rng.pick(&["\0", "a\0", "\0/x", "."]).to_string(),
        5 => "n".repeat(rng.range(255, 5000)),
        6 => format!("{}/", fixture_or(rng, spec, "x")),
        7 => format!("sub/{}", {
            let n = rng.range(1, 12);
            unicode_text(rng, n)
        }),
        8 => "d/".repeat(rng.range(1, 3000)).trim_end_matches('/').to_owned(),
        _ => {
            let n = rng.range(1, 40);
            unicode_text(rng, n)
        }
    };
    safe_relative(p)
}

/// Makes a generated path or pattern safe: no leading `/`, no `..`
/// anywhere, and no brace alternative that starts with `/` (`{a,/x}` is an
/// absolute pattern, which would walk the whole machine).
fn safe_relative(p: String) -> String {
    let mut p = p.trim_start_matches('/').to_owned();
    for (bad, good) in [("..", "._"), ("{/", "{_/"), (",/", ",_/")] {
        while p.contains(bad) {
            p = p.replace(bad, good);
        }
    }
    p
}

fn text(rng: &mut Rng, spec: &Spec, dialect: Dialect) -> String {
    match rng.below(6) {
        // Strings that occur in the fixtures, so that edits happen.
        0 => rng.pick(&["hello", "world", "\n", "l", "héllo", "\r\n", "\0"]).to_string(),
        1 if !spec.fixtures.is_empty() => "hello\nworld\n".to_owned(),
        _ => odd_string(rng, dialect),
    }
}

/// Shell text that cannot do harm: no lowercase ASCII letter (no keyword,
/// no builtin, no command word), no `/`, and `PATH` is empty.
fn command(rng: &mut Rng, dialect: Dialect) -> String {
    const TOKENS: &[&str] = &[
        ";", "|", "||", "&&", "&", "'", "\"", "`", "$(", ")", "(", "{", "}", ">", ">>", "<", "<<",
        "#", "\\", "*", "?", "[", "]", "$", "${", "$((", "))", "=", "!", "~", "\n", " ", "\t", "%",
        "^", ",", ".", ":", "-", "+", "@", "_", "2>&1", "<&-", ">&2",
    ];
    let n = match rng.below(20) {
        0 => rng.range(1000, dialect.max_string() / 8),
        _ => rng.range(0, 24),
    };
    let mut s = String::new();
    for _ in 0..n {
        match rng.below(4) {
            0 => s.push_str(rng.pick(TOKENS)),
            1 => {
                let _ = write!(s, "{}", rng.below(100_000));
            }
            2 => {
                let c = unicode_char(rng);
                if !c.is_ascii() {
                    s.push(c);
                }
            }
            _ => {
                // A word no command has: an upper-case ASCII name.
                for _ in 0..rng.range(1, 8) {
                    s.push((b'A' + rng.below(26) as u8) as char);
                }
            }
        }
    }
    if rng.one_in(20) {
        s.push('\0');
    }
    s
}

fn glob(rng: &mut Rng, spec: &Spec, dialect: Dialect) -> String {
    const TOKENS: &[&str] = &[
        "*",
        "**",
        "?",
        "[",
        "]",
        "[!",
        "[^",
        "a-z",
        "{",
        "}",
        ",",
        "\\",
        "/",
        ".",
        "*.txt",
        "**/*",
        "sub",
        "[[:alpha:]]",
        "{a,{b,c}}",
        "*{",
        "}}",
        "[]",
        "[!]",
        "-",
        "\0",
    ];
    let s = match rng.below(6) {
        0 => fixture_or(rng, spec, "*"),
        1 => odd_string(rng, dialect),
        _ => {
            let mut s = String::new();
            for _ in 0..rng.range(1, 16) {
                if rng.one_in(3) {
                    s.push(unicode_char(rng));
                } else {
                    s.push_str(rng.pick(TOKENS));
                }
            }
            s
        }
    };
    // A pattern is joined under `path`: keep it relative and inside.
    safe_relative(s)
}

fn regex(rng: &mut Rng, dialect: Dialect) -> String {
    const TOKENS: &[&str] = &[
        ".",
        "*",
        "+",
        "?",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "|",
        "^",
        "$",
        "\\",
        "\\1",
        "(?i)",
        "[[:alpha:]]",
        "[[:bogus:]]",
        "{1000}",
        "{2,1}",
        "{99999999999}",
        "\\p{Greek}",
        "\\p{Nope}",
        "(?P<n>",
        "hello",
        "\\b",
        "\\B",
        "\\n",
        "\\x{110000}",
        "\\0",
        "a{,5}",
        "[a-",
        "(?=x)",
        "\\d",
        "\0",
    ];
    match rng.below(512) {
        0..=63 => odd_string(rng, dialect),
        // Past the regex size limit: half a second to reject in a debug
        // build, so rare.
        64 => "(a{1000}){1000}".to_owned(),
        65..=127 => "(".repeat(rng.range(1, 2000)),
        _ => {
            let mut s = String::new();
            for _ in 0..rng.range(1, 12) {
                if rng.one_in(4) {
                    s.push(unicode_char(rng));
                } else {
                    s.push_str(rng.pick(TOKENS));
                }
            }
            s
        }
    }
}

fn fixture_or(rng: &mut Rng, spec: &Spec, default: &str) -> String {
    if spec.fixtures.is_empty() {
        default.to_owned()
    } else {
        rng.pick(spec.fixtures).to_string()
    }
}

/// A JSON string literal, raw UTF-8 or, one time in four, all `\u`
/// escapes (surrogate pairs for astral characters).
fn lit(rng: &mut Rng, s: &str) -> String {
    if rng.one_in(4) {
        escaped_string(s)
    } else {
        json_string(s)
    }
}

pub fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned())
}

fn escaped_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
    out
}

/// The first bytes of an input, printable, for failure messages.
pub fn preview(input: &[u8]) -> String {
    let head = &input[..input.len().min(300)];
    let mut text = String::from_utf8_lossy(head).escape_debug().to_string();
    if input.len() > head.len() {
        let _ = write!(text, "… ({} bytes in all)", input.len());
    }
    text
}
