//! A call's form, for a person (or a model) calling a tool by hand: the
//! command as it was typed, and a call it can paste. Told where a call is
//! not one — a word or an unknown option where the JSON object goes, a
//! terminal on stdin — and in the examples of a tool's `--help`
//! (docs/SPEC.md, "The protocol"). A host never meets these: it sends an
//! object, on a pipe.

use std::ffi::OsStr;

use serde_json::Value;

use crate::profile::Profile;
use crate::tools::near_miss;
use crate::tools::Tool;

/// The options a tool's command knows, without their dashes: what an
/// argument starting with `-` was likely meant to be.
const OPTIONS: [&str; 3] = ["schema", "describe", "help"];

/// What a paste of the example object holds where a value is not known.
const PLACEHOLDER: &str = "…";

/// The longest word taken as the value of the example object.
const WORD_MAX: usize = 200;

/// The command that runs `tool` as it was just run: `called_as` (argv[0]
/// as typed, so that it names the same file when pasted), followed by the
/// tool's name when that is the suite (`ikigai-tools grep`).
pub fn command(called_as: &OsStr, tool: &Tool, in_suite: bool) -> String {
    let program = shell_word(&called_as.to_string_lossy());
    if in_suite {
        format!("{program} {}", tool.command)
    } else {
        program
    }
}

/// The argument object of a call: the tool's first required parameter set
/// to `value` (`{"pattern":"foo"}`), or to a placeholder; `{}` for a tool
/// that requires none.
pub fn example_object(tool: &Tool, profile: Profile, value: Option<&str>) -> String {
    let schema: Value = serde_json::from_str(tool.schema(profile)).unwrap_or_default();
    let Some(first) = schema["parameters"]["required"].get(0).and_then(Value::as_str) else {
        return "{}".to_owned();
    };
    let mut object = serde_json::Map::new();
    object.insert(first.to_owned(), Value::from(value.unwrap_or(PLACEHOLDER)));
    Value::Object(object).to_string()
}

/// What follows the message of an argument text that is not JSON at all
/// (`raw`, from `$1` when `from_argument`, else from stdin): the call's
/// form, or for an unknown option (`--schma`) the option meant. `None` for
/// a text that starts as an object does, is empty or is JSON (`[1]`): its
/// own message says what is wrong with it.
pub fn hint(
    raw: &[u8],
    from_argument: bool,
    tool: &Tool,
    profile: Profile,
    command: &str,
) -> Option<String> {
    let text = String::from_utf8_lossy(raw);
    let text = text.trim();
    let json = || serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok();
    if text.is_empty() || text.starts_with('{') || json() {
        return None;
    }
    let form = |value| {
        format!(
            "call it as: {command} '{}' (or that JSON on stdin; --help lists the parameters)",
            example_object(tool, profile, value)
        )
    };
    if from_argument && text.starts_with('-') {
        let option = one_line(text);
        return Some(match near_miss::closest(text.trim_start_matches('-'), OPTIONS) {
            Some(meant) => format!("unknown option {option}: did you mean --{meant}?"),
            None => format!("unknown option {option}; {}", form(None)),
        });
    }
    Some(form(plain(text)))
}

/// The line a tool tells on stderr before it reads a terminal (a person
/// who typed its name and waits): what it waits for, and the other form.
pub fn stdin_notice(name: &str, tool: &Tool, profile: Profile, command: &str) -> String {
    format!(
        "{name}: reading the JSON arguments from stdin (end with Ctrl-D); or call: {command} '{}'",
        example_object(tool, profile, None)
    )
}

/// `text` as the value of the example object, when it is a plain word or
/// phrase that a paste keeps as it is (`foo`, `echo hi`): one line, no
/// quotes, backslashes or brackets, not long.
fn plain(text: &str) -> Option<&str> {
    let special = |c: char| c.is_control() || "'\"\\{}[]".contains(c);
    (text.chars().count() <= WORD_MAX && !text.chars().any(special)).then_some(text)
}

/// An argument as a message may quote it: its first line, not too long.
fn one_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(WORD_MAX) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_owned(),
    }
}

/// `word` as one word of a POSIX shell: as it is when it holds only
/// characters no shell reads specially, else in single quotes.
pub fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-+:,@%=".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools;

    fn grep() -> &'static Tool {
        tools::find("grep").unwrap()
    }

    #[test]
    fn the_command_is_the_one_typed() {
        let grep = grep();
        assert_eq!(command(OsStr::new("grep"), grep, false), "grep");
        assert_eq!(command(OsStr::new("./bin/grep-tool"), grep, false), "./bin/grep-tool");
        assert_eq!(command(OsStr::new("ikigai-tools"), grep, true), "ikigai-tools grep");
        assert_eq!(command(OsStr::new("/my tools/it's"), grep, true), r"'/my tools/it'\''s' grep");
    }

    #[test]
    fn the_example_sets_the_first_required_parameter() {
        assert_eq!(example_object(grep(), Profile::Seed, Some("foo")), r#"{"pattern":"foo"}"#);
        let file_edit = tools::find("file_edit").unwrap();
        assert_eq!(example_object(file_edit, Profile::Seed, None), r#"{"file_path":"…"}"#);
        let job_list = tools::find_in("job_list", Profile::Full).unwrap();
        assert_eq!(example_object(job_list, Profile::Full, Some("x")), "{}");
    }

    #[test]
    fn a_word_becomes_the_example_and_an_object_gets_no_hint() {
        let hint = |raw: &str, arg| hint(raw.as_bytes(), arg, grep(), Profile::Seed, "grep");
        assert_eq!(
            hint("foo", true).unwrap(),
            r#"call it as: grep '{"pattern":"foo"}' (or that JSON on stdin; --help lists the parameters)"#
        );
        assert_eq!(
            hint("it's", true).unwrap(),
            r#"call it as: grep '{"pattern":"…"}' (or that JSON on stdin; --help lists the parameters)"#
        );
        assert_eq!(
            hint("--schma", true).unwrap(),
            "unknown option --schma: did you mean --schema?"
        );
        assert_eq!(hint("--hlep", true).unwrap(), "unknown option --hlep: did you mean --help?");
        assert_eq!(
            hint("-x", true).unwrap(),
            r#"unknown option -x; call it as: grep '{"pattern":"…"}' (or that JSON on stdin; --help lists the parameters)"#
        );
        // On stdin a leading dash is just text.
        assert!(hint("--schma", false)
            .unwrap()
            .starts_with("call it as: grep '{\"pattern\":\"--schma\"}'"));
        for raw in ["", "  \n", "{\"pattern\":", " {x", "[1]", "\"foo\"", "-1"] {
            assert_eq!(hint(raw, true), None, "{raw:?}");
        }
    }

    #[test]
    fn a_shell_word_is_quoted_only_when_it_must_be() {
        assert_eq!(shell_word("/usr/libexec/ikigai/file-read"), "/usr/libexec/ikigai/file-read");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("$HOME"), "'$HOME'");
    }
}
