//! One run of the binary: which applet it is, and running it.

use std::ffi::{OsStr, OsString};
use std::io::IsTerminal;
use std::os::unix::ffi::OsStringExt;

use clap::error::ErrorKind;
use clap::ArgMatches;

use super::app::{self, ARGS, DESCRIBE, LIST, SCHEMA};
use super::report::{echo, one_line_panics, print, print_error, unknown_tool};
use super::{call_form, help};
use super::{host, ExitCode, BIN_NAME};
use crate::context::{Context, Dialect};
use crate::error::ToolError;
use crate::profile::{Profile, FULL_BINARY_NAME};
use crate::protocol::{self, Args};
use crate::tools::{self, Tool};

/// Runs one invocation and returns how it ends.
pub fn run(argv: impl IntoIterator<Item = OsString>) -> ExitCode {
    let mut argv: Vec<OsString> = argv.into_iter().collect();
    // argv[0] as typed, for the calls a person is shown (`call_form`).
    let called_as = argv.first().cloned().unwrap_or_default();
    // `ikigai-tools-full` is the suite under the full profile's name
    // (`crate::profile`): the same applet.
    if argv
        .first()
        .is_some_and(|a| std::path::Path::new(a).file_stem() == Some(FULL_BINARY_NAME.as_ref()))
    {
        argv[0] = BIN_NAME.into();
    }
    // A profile that names none is refused before anything is answered,
    // `--schema` included (docs/SPEC.md, "Profiles").
    if let Err(bad) = Profile::check_env() {
        print_error(bad);
        return ExitCode::UsageError;
    }
    if let Some(tool) = schema_request(&argv) {
        return print_schema(tool, Profile::from_env());
    }
    let profile = Profile::from_env();
    if let Some(tool) = plain_call(&argv, profile) {
        return call(tool, None, &argv, &called_as, profile);
    }
    let matches = match app::command(profile).try_get_matches_from(&argv) {
        Ok(m) => m,
        Err(e) => return clap_error(e, &argv, &called_as, profile),
    };
    let Some((applet, sub)) = matches.subcommand() else {
        return unknown(&applet_name(&argv));
    };
    if applet != BIN_NAME {
        return run_tool(applet, sub, &argv, &called_as, profile);
    }
    match sub.subcommand() {
        Some((name, m)) if host::is_host_command(name) => host::run(name, m),
        Some((name, m)) => run_tool(name, m, &argv, &called_as, profile),
        None if sub.get_flag(LIST) => print_list(),
        None => {
            // `ikigai-tools` alone: usage on stdout, as --help.
            print(&help::suite_help(profile));
            ExitCode::Success
        }
    }
}

/// A tool named by clap's matches: its schema, or a call.
fn run_tool(
    name: &str,
    m: &ArgMatches,
    argv: &[OsString],
    called_as: &OsStr,
    profile: Profile,
) -> ExitCode {
    let Some(tool) = tools::find_in(name, profile) else {
        return unknown(name);
    };
    if m.get_flag(SCHEMA) || m.get_flag(DESCRIBE) {
        return print_schema(tool, profile);
    }
    call(tool, m.get_one::<OsString>(ARGS).cloned(), argv, called_as, profile)
}

/// One call of a tool: arguments from `$1` (shellclaw) or stdin (ikigai),
/// one JSON object out. The call's context is read here, once, and handed
/// to the tool. A person calling by hand is told the call's form where the
/// call is not one (`call_form`): before a terminal is read, and after a
/// text that is not JSON.
fn call(
    tool: &'static Tool,
    arg: Option<OsString>,
    argv: &[OsString],
    called_as: &OsStr,
    profile: Profile,
) -> ExitCode {
    // The process-wide signal settings of a tool run (a stop signal removes
    // a write's temporary file), before it reads its arguments. Not for the
    // host commands and the MCP server, which handle stop signals their way.
    crate::fs::signals::install();
    one_line_panics();
    let in_suite = help::in_suite(argv);
    let command = || call_form::command(called_as, tool, in_suite);
    let (raw, dialect) = match arg {
        Some(arg) => (Ok(arg.into_vec()), Dialect::Shellclaw),
        None => {
            // A host's stdin is a pipe; a terminal is a person who typed
            // the tool's name and would otherwise wait on a silent cursor.
            if std::io::stdin().is_terminal() {
                let name = usage_name(argv, tool, in_suite);
                echo(call_form::stdin_notice(&name, tool, profile, &command()));
            }
            (protocol::read_stdin(), Dialect::Ikigai)
        }
    };
    // The default output limit depends on the name the tool was called by
    // (65,535 under ikigai's `-tool` names), which clap does not keep.
    let context = Context::from_env(&applet_name(argv), dialect, profile);
    let from_argument = dialect == Dialect::Shellclaw;
    let outcome = raw
        .and_then(|bytes| {
            Args::parse(&bytes).map_err(|e| match e {
                ToolError::InvalidJson(message) => {
                    match call_form::hint(&bytes, from_argument, tool, profile, &command()) {
                        Some(hint) => ToolError::InvalidJson(format!("{message}; {hint}")),
                        None => ToolError::InvalidJson(message),
                    }
                }
                other => other,
            })
        })
        .and_then(|args| tool.call(&args, &context));
    let ending = protocol::finish(&outcome, &context);
    if let Some(message) = ending.echo {
        echo(message);
    }
    ExitCode::success_if(!ending.failed)
}

/// The name a tool's usage goes by: the link's file stem, or
/// `ikigai-tools TOOL`.
fn usage_name(argv: &[OsString], tool: &Tool, in_suite: bool) -> String {
    if in_suite {
        format!("{BIN_NAME} {}", tool.command)
    } else {
        applet_name(argv)
    }
}

/// A link called with nothing but its name, the JSON on stdin (ikigai):
/// every call a host makes, and every call of the MCP server. Answered
/// without clap, whose command tree of every tool's schema costs more than
/// a small call itself (docs/PERFORMANCE.md); only a name clap would match
/// (the command or an alias, as clap drops the directory and extension), so
/// that the answer is clap's.
fn plain_call(argv: &[OsString], profile: Profile) -> Option<&'static Tool> {
    let [argv0] = argv else { return None };
    let name = std::path::Path::new(argv0).file_stem()?.to_str()?;
    let tool = tools::find_in(name, profile)?;
    (tool.command == name || tool.aliases().iter().any(|a| a == name)).then_some(tool)
}

/// `TOOL --schema` (or `--describe`) through a link: the call a host makes
/// for every tool at every start, answered before clap builds its command
/// tree, which would triple its cost. Anything else goes through clap.
fn schema_request(argv: &[OsString]) -> Option<&'static Tool> {
    match argv {
        [_, flag] if flag == "--schema" || flag == "--describe" => {
            tools::find_in(&applet_name(&argv[..1]), Profile::from_env())
        }
        _ => None,
    }
}

/// The schema of the profile in force (`crate::profile`).
fn print_schema(tool: &Tool, profile: Profile) -> ExitCode {
    print(tool.schema(profile));
    ExitCode::Success
}

/// `ikigai-tools --list`: the command names, as install.sh lays out links.
fn print_list() -> ExitCode {
    let names: String =
        tools::of(Profile::from_env()).map(|t| format!("{}\n", t.command)).collect();
    print(&names);
    ExitCode::Success
}

/// The applet name clap saw: the file stem of `argv[0]`, or the first
/// argument when that is the suite itself.
fn applet_name(argv: &[OsString]) -> String {
    let stem = |s: &OsString| {
        std::path::Path::new(s)
            .file_stem()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let first = argv.first().map(stem).unwrap_or_default();
    if first == BIN_NAME {
        argv.get(1).map(|a| a.to_string_lossy().into_owned()).unwrap_or_default()
    } else {
        first
    }
}

fn unknown(name: &str) -> ExitCode {
    print_error(unknown_tool(name, tools::TOOLS.iter().map(|t| t.name)));
    ExitCode::UsageError
}

fn clap_error(e: clap::Error, argv: &[OsString], called_as: &OsStr, profile: Profile) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp => {
            // A tool's help lists its parameters; the suite's, the environment.
            match help::topic(argv, called_as) {
                Some(topic) => print(&help::render(&topic, profile)),
                None => {
                    let _ = e.print();
                }
            }
            ExitCode::Success
        }
        ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::Success
        }
        ErrorKind::InvalidSubcommand => {
            let name = applet_name(argv);
            if name.starts_with('-') {
                // `ikigai-tools --schema`: a flag where a tool belongs.
                print_error(format!(
                    "{name} needs a tool: {BIN_NAME} TOOL {name} (tools: {})",
                    tools::names()
                ));
                ExitCode::UsageError
            } else if help::in_suite(argv) {
                // `ikigai-tools catlog`: the closest tool or host command.
                print_error(help::unknown_command(&name));
                ExitCode::UsageError
            } else {
                unknown(&name)
            }
        }
        _ => {
            let _ = e.print();
            ExitCode::UsageError
        }
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::{app, plain_call};
    use crate::profile::Profile;
    use crate::tools;

    /// The tool clap's multicall picks for `argv` = `[name]`, if any.
    fn clap_tool(name: &str, profile: Profile) -> Option<&'static str> {
        let matches = app::command(profile).try_get_matches_from([name]).ok()?;
        let (applet, _) = matches.subcommand()?;
        tools::find_in(applet, profile).map(|t| t.name)
    }

    #[test]
    fn a_plain_call_skips_clap_for_exactly_the_names_clap_runs_as_a_tool() {
        for profile in [Profile::Seed, Profile::Full] {
            let mut names: Vec<String> = Vec::new();
            for tool in tools::of(Profile::Full) {
                for name in [tool.command.to_owned()].into_iter().chain(tool.aliases()) {
                    names.extend([
                        format!("/usr/libexec/ikigai/{name}"),
                        format!("{name}.sh"),
                        format!("{name}.sh.bak"),
                        format!("{name}_tool"),
                        name.to_uppercase(),
                        name,
                    ]);
                }
            }
            names.extend(
                ["ikigai-tools", "ikigai-tools-full", "cat", "", "catalog", "list"]
                    .map(String::from),
            );
            for name in &names {
                let fast = plain_call(&[OsString::from(name)], profile).map(|t| t.name);
                assert_eq!(fast, clap_tool(name, profile), "{name} ({profile:?})");
            }
        }
    }
}
