//! The help texts and the word for a command that is not known.
//!
//! - A tool's help (`TOOL --help` through a link, `ikigai-tools TOOL --help`,
//!   `ikigai-tools help TOOL`): clap's usage, then the parameters of the JSON
//!   argument object as its schema gives them (name, type, whether required,
//!   description), the environment variables the tool reads, and a call in
//!   each dialect.
//! - The suite's help (`ikigai-tools --help`, or alone): clap's, then every
//!   environment variable.
//! - A mistyped command of `ikigai-tools` (`catlog`, `gerp`): one line with
//!   the closest tool or host command, and both lists.
//!
//! All of it is made only when asked for: the clap tree that every run
//! builds holds none of it (and `TOOL --schema` is answered before that).

use std::ffi::{OsStr, OsString};
use std::path::Path;

use serde_json::Value;

use super::{app, call_form, host, BIN_NAME};
use crate::env_vars::{EnvVar, Reader, ENVIRONMENT};
use crate::profile::Profile;
use crate::tools::{self, Tool};

/// A call of each tool, for its help. No backslash: zsh's and dash's
/// `echo` would read `\n` as a newline, which JSON may not hold raw.
fn example(tool: &Tool) -> &'static str {
    match tool.name {
        "bash" => r#"{"command":"ls -l"}"#,
        "file_read" => r#"{"file_path":"README.md","offset":1,"limit":20}"#,
        "file_write" => r#"{"file_path":"notes.txt","content":"hello world"}"#,
        "file_edit" => r#"{"file_path":"notes.txt","old_string":"hello","new_string":"goodbye"}"#,
        "glob" => r#"{"pattern":"**/*.rs"}"#,
        "grep" => r#"{"pattern":"TODO","glob":"*.rs"}"#,
        "job_output" => r#"{"job_id":"0123456789abcdef0123456789abcdef","wait":10}"#,
        "job_kill" => r#"{"job_id":"0123456789abcdef0123456789abcdef"}"#,
        "job_write" => r#"{"job_id":"0123456789abcdef0123456789abcdef","input":"y"}"#,
        "apply_patch" => r#"{"input":"*** Begin Patch","dry_run":true}"#,
        "web_fetch" => r#"{"url":"https://example.com/","limit":40}"#,
        "web_search" => r#"{"query":"rust borrow checker","count":3}"#,
        _ => "{}",
    }
}

/// What a tool's example answers when it cannot succeed as pasted: the job
/// tools' `job_id` stands for one the reader's own job was given.
fn example_note(tool: &Tool) -> &'static str {
    match tool.name {
        "job_output" | "job_kill" | "job_write" => {
            "\n  # the job_id is one that bash's run_in_background answered or job_list shows; \
             this one answers JOB_NOT_FOUND"
        }
        "apply_patch" => {
            "\n  # a patch is lines, joined by newlines in the JSON string (*** Begin Patch, its \
             files, *** End Patch); this one has one line and answers INVALID_ARG"
        }
        "web_fetch" => {
            "\n  # needs the web: where example.com cannot be reached this one answers \
             NETWORK_ERROR"
        }
        "web_search" => {
            "\n  # needs BRAVE_API_KEY, or IKIGAI_TOOLS_SEARCH_PROVIDER=searxng and \
             IKIGAI_TOOLS_SEARCH_URL; without them this one answers AUTH_MISSING"
        }
        _ => "",
    }
}

/// Whose help a run that asked for help wants.
pub enum Topic {
    /// A tool's, with the name its usage line calls it by and the command
    /// its examples run it by (`call_form::command`).
    Tool(&'static Tool, String, String),
    /// The suite's: `ikigai-tools --help`, `ikigai-tools help`.
    Suite,
}

impl std::fmt::Debug for Topic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Topic::Tool(tool, name, command) => {
                write!(f, "Tool({}, {name:?}, {command:?})", tool.name)
            }
            Topic::Suite => f.write_str("Suite"),
        }
    }
}

impl PartialEq for Topic {
    fn eq(&self, other: &Topic) -> bool {
        match (self, other) {
            (Topic::Tool(a, x, c), Topic::Tool(b, y, d)) => a.name == b.name && x == y && c == d,
            (Topic::Suite, Topic::Suite) => true,
            _ => false,
        }
    }
}

/// Whose help `argv` asks for, when ours says more than clap's: a tool's or
/// the suite's; `None` for a host command (clap's help is its whole help).
/// `called_as` is argv[0] as typed, which the examples run.
pub fn topic(argv: &[OsString], called_as: &OsStr) -> Option<Topic> {
    let applet = argv.first().map(stem).unwrap_or_default();
    if applet != BIN_NAME {
        // Through a link: clap picked the applet by this name.
        return tools::find_in(&applet, Profile::from_env())
            .map(|tool| Topic::Tool(tool, applet, call_form::command(called_as, tool, false)));
    }
    let mut words = argv[1..].iter().map(|a| a.to_string_lossy()).filter(|a| !a.starts_with('-'));
    let mut first = words.next();
    if first.as_deref() == Some("help") {
        first = words.next();
    }
    match first {
        None => Some(Topic::Suite),
        Some(word) => tools::find_in(&word, Profile::from_env()).map(|tool| {
            Topic::Tool(
                tool,
                format!("{BIN_NAME} {}", tool.command),
                call_form::command(called_as, tool, true),
            )
        }),
    }
}

/// Whether `argv` runs the suite, `ikigai-tools` (rather than a tool
/// through a link).
pub fn in_suite(argv: &[OsString]) -> bool {
    argv.first().is_some_and(|a| stem(a) == BIN_NAME)
}

/// The file name clap's multicall goes by: without directory and extension.
fn stem(arg: &OsString) -> String {
    Path::new(arg).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The help of `topic`.
pub fn render(topic: &Topic, profile: Profile) -> String {
    match topic {
        Topic::Tool(tool, name, command) => tool_help(tool, name, command, profile),
        Topic::Suite => suite_help(profile),
    }
}

/// A tool's help in `profile`, its usage line naming it `name`, its
/// examples running it as `command`: each runs as pasted into a shell,
/// its note a comment (docs/SPEC.md, "The protocol").
pub fn tool_help(tool: &'static Tool, name: &str, command: &str, profile: Profile) -> String {
    let more = format!(
        "{}\n\n{}\n\nExamples:\n  echo '{example}' | {command}    # ikigai: the object on stdin\n  \
         {command} '{example}'    # shellclaw: the object as the one argument{note}\n\n\
         The answer is one JSON object on stdout; an error is \
         {{\"error\":\"...\",\"error_code\":\"...\"}}.",
        parameters(tool, profile),
        environment(Some(tool), profile),
        example = example(tool),
        note = example_note(tool),
    );
    app::tool_command(tool, profile).bin_name(name).after_help(more).render_help().to_string()
}

/// The suite's help: clap's, and every environment variable.
pub fn suite_help(profile: Profile) -> String {
    let more = format!("{}\n\n{}", app::suite_after_help(), environment(None, profile));
    app::suite_command(profile).after_help(more).render_help().to_string()
}

/// The parameters of the tool's JSON argument object, from its schema.
fn parameters(tool: &Tool, profile: Profile) -> String {
    let schema: Value = serde_json::from_str(tool.schema(profile)).unwrap_or_default();
    let params = &schema["parameters"];
    let required: Vec<&str> = params["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let rows: Vec<[String; 3]> = params["properties"]
        .as_object()
        .map(|props| {
            props
                .iter()
                .map(|(name, p)| {
                    let kind = p["type"].as_str().unwrap_or("any");
                    let kind = if required.contains(&name.as_str()) {
                        format!("{kind}, required")
                    } else {
                        kind.to_owned()
                    };
                    let text = p["description"].as_str().unwrap_or_default().to_owned();
                    [name.clone(), kind, text]
                })
                .collect()
        })
        .unwrap_or_default();
    format!("Parameters (the JSON argument object):\n{}", table(&rows))
}

/// The `Environment:` section, from the one table (`env_vars`): every
/// variable of the tools and the host commands (`tool` `None`, each followed
/// by the tools that read it when not all do), or those `tool` reads. The
/// jobs' variables only in the full profile; the server's own in
/// `mcp --help`.
fn environment(tool: Option<&Tool>, profile: Profile) -> String {
    let wanted = |v: &EnvVar| {
        let read = match (v.reader, tool) {
            (Reader::Server, _) => false,
            (Reader::Host, tool) => tool.is_none(),
            (Reader::Tools(tools), Some(tool)) => tools.is_empty() || tools.contains(&tool.name),
            (Reader::Tools(_), None) => true,
        };
        read && (profile.is_full() || !v.full_only)
    };
    let rows: Vec<[String; 2]> = ENVIRONMENT
        .iter()
        .filter(|v| wanted(v))
        .map(|v| {
            let whom = match v.reader {
                Reader::Tools(tools) if tool.is_none() && !tools.is_empty() => {
                    format!("; {} only", tools.join(" and "))
                }
                _ => String::new(),
            };
            [v.name.to_owned(), format!("{}{whom}", v.text())]
        })
        .collect();
    format!("Environment:\n{}", table(&rows))
}

/// The width help texts are wrapped to.
const WIDTH: usize = 100;

/// Rows as aligned columns, indented by two spaces; the last column is
/// wrapped within `WIDTH`, its lines beneath each other.
fn table<const N: usize>(rows: &[[String; N]]) -> String {
    let mut widths = [0; N];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    // Where the last column starts: two spaces, then each other column and
    // two spaces.
    let indent = 2 + widths[..N - 1].iter().map(|w| w + 2).sum::<usize>();
    let mut out = Vec::new();
    for row in rows {
        let mut line = String::from("  ");
        for (cell, width) in row[..N - 1].iter().zip(widths) {
            line.push_str(cell);
            line.extend(std::iter::repeat_n(' ', width - cell.chars().count() + 2));
        }
        let room = WIDTH.saturating_sub(indent).max(40);
        let mut used = 0;
        for word in row[N - 1].split(' ') {
            let len = word.chars().count();
            if used > 0 && used + 1 + len > room {
                out.push(line.trim_end().to_owned());
                line = " ".repeat(indent);
                used = 0;
            }
            if used > 0 {
                line.push(' ');
                used += 1;
            }
            line.push_str(word);
            used += len;
        }
        out.push(line.trim_end().to_owned());
    }
    out.join("\n")
}

/// The message for a command of `ikigai-tools` that is neither a tool nor
/// a host command: the closest of either, and both lists.
pub fn unknown_command(name: &str) -> String {
    let tools: Vec<&str> = tools::of(Profile::from_env()).map(|t| t.name).collect();
    let commands: Vec<String> = host::commands().iter().map(|c| c.get_name().to_owned()).collect();
    let candidates = tools
        .iter()
        .copied()
        .chain(commands.iter().map(String::as_str))
        .chain(["help"])
        .collect::<Vec<_>>();
    let hint = match tools::near_miss::closest_tool(name, candidates.iter().copied()) {
        Some(close) => format!(" (did you mean {close}?)"),
        None => String::new(),
    };
    format!(
        "unknown tool or command '{name}'{hint}; the tools are: {}; the commands are: {}",
        tools.join(", "),
        commands.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_topic_is_the_tool_or_the_suite() {
        let grep = tools::find("grep").unwrap();
        let file_read = tools::find("file_read").unwrap();
        for (args, expected) in [
            (&["grep", "--help"][..], Some(Topic::Tool(grep, "grep".into(), "grep".into()))),
            (
                &["/x/libexec/ikigai/grep-tool", "-h"],
                Some(Topic::Tool(grep, "grep-tool".into(), "/x/libexec/ikigai/grep-tool".into())),
            ),
            (
                &["ikigai-tools", "grep", "--help"],
                Some(Topic::Tool(grep, "ikigai-tools grep".into(), "ikigai-tools grep".into())),
            ),
            (
                &["/opt/ikigai-tools", "help", "file_read"],
                Some(Topic::Tool(
                    file_read,
                    "ikigai-tools file-read".into(),
                    "/opt/ikigai-tools file-read".into(),
                )),
            ),
            (&["/usr/bin/ikigai-tools", "--help"], Some(Topic::Suite)),
            (&["ikigai-tools", "help"], Some(Topic::Suite)),
            (&["ikigai-tools", "catalog", "--help"], None),
            (&["ikigai-tools", "help", "call"], None),
        ] {
            let argv = argv(args);
            assert_eq!(topic(&argv, &argv[0]), expected, "{args:?}");
        }
    }

    #[test]
    fn a_tool_help_lists_every_parameter_and_its_variables() {
        let seed = tools::of(Profile::Seed).map(|t| (t, Profile::Seed));
        for (tool, profile) in seed.chain(tools::of(Profile::Full).map(|t| (t, Profile::Full))) {
            let help = tool_help(tool, tool.command, tool.command, profile);
            let schema: Value = serde_json::from_str(tool.schema(profile)).unwrap();
            // A long description wraps onto the lines below its row.
            let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
            let flowing = words(&help);
            let required = schema["parameters"]["required"].as_array().unwrap();
            for (name, p) in schema["parameters"]["properties"].as_object().unwrap() {
                let kind = p["type"].as_str().unwrap();
                let kind = if required.iter().any(|r| r == name) {
                    format!("{kind}, required")
                } else {
                    kind.to_owned()
                };
                let row = format!("{name} {kind} {}", words(p["description"].as_str().unwrap()));
                assert!(flowing.contains(&row), "{}: {row:?} in\n{help}", tool.name);
            }
            assert!(help.contains("IKIGAI_TOOLS_MAX_OUTPUT"), "{help}");
            assert_eq!(help.contains("IKIGAI_TOOLS_NETWORK"), tool.name == "bash");
            assert_eq!(
                help.contains("IKIGAI_TOOLS_LOCK_WAIT"),
                ["file_write", "file_edit"].contains(&tool.name)
            );
            assert!(!help.contains("IKIGAI_LIBEXEC_DIR"));
            assert_eq!(
                help.contains("IKIGAI_TOOLS_YIELD"),
                profile.is_full() && tool.name == "bash"
            );
            assert_eq!(
                help.contains("IKIGAI_TOOLS_STATE_DIR"),
                profile.is_full() && (tool.name == "bash" || tool.name.starts_with("job_"))
            );
        }
    }

    #[test]
    fn the_suite_help_names_every_variable() {
        let help = suite_help(Profile::Full);
        for var in ENVIRONMENT {
            assert_eq!(help.contains(var.name), var.reader != Reader::Server, "{}", var.name);
        }
    }

    #[test]
    fn a_mistyped_command_is_told_the_closest_tool_or_command() {
        let lists = "; the tools are: bash, file_read, file_write, file_edit, glob, grep; \
                     the commands are: catalog, check, call, list, mcp, doctor";
        for (typed, close) in [
            ("catlog", "catalog"),
            ("chek", "check"),
            ("mpc", "mcp"),
            ("gerp", "grep"),
            ("docter", "doctor"),
        ] {
            assert_eq!(
                unknown_command(typed),
                format!("unknown tool or command '{typed}' (did you mean {close}?){lists}")
            );
        }
        for far in ["cat", "ls", "catalogue-of-things"] {
            assert_eq!(unknown_command(far), format!("unknown tool or command '{far}'{lists}"));
        }
        assert!(unknown_command("file-raed").contains("(did you mean file_read?)"));
        assert!(unknown_command("hlep").contains("(did you mean help?)"));
    }
}
