//! The host subcommands of `ikigai-tools`: `catalog`, `check`, `call` and
//! `list`. Each parses its arguments, calls the library and prints; the
//! behaviour lives in the modules beside this one.
//!
//! Exit codes: 0 all well, 1 a tool was rejected, failed a check or a call
//! failed (or the name is unknown), 2 the command line is wrong.

use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::time::Duration;

use clap::{value_parser, Arg, ArgAction, ArgMatches, Command};
use serde_json::Value;

use super::call::{self, Envelope, CALL_TIMEOUT};
use super::check;
use super::discover::{self, Discovery, Source};
use super::registry::Registry;
use super::translate::{self, Provider};
use crate::cli::BIN_NAME;

/// How a host command ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Exit {
    Ok = 0,
    /// A tool was rejected, failed a check, or a call failed.
    Failed = 1,
    Usage = 2,
}

const CATALOG: &str = "catalog";
const CHECK: &str = "check";
const CALL: &str = "call";
const LIST: &str = "list";
const MCP: &str = "mcp";

/// Whether `name` is one of the host subcommands.
pub fn is_host_command(name: &str) -> bool {
    [CATALOG, CHECK, CALL, LIST, MCP].contains(&name)
}

/// The host subcommands, for the `ikigai-tools` applet.
pub fn commands() -> Vec<Command> {
    vec![catalog_command(), check_command(), call_command(), list_command(), mcp_command()]
}

/// Runs the host subcommand `name`; returns the exit code.
pub fn run(name: &str, m: &ArgMatches) -> u8 {
    let exit = match name {
        CATALOG => run_catalog(m),
        CHECK => run_check(m),
        CALL => run_call(m),
        LIST => run_list(m),
        MCP => return crate::mcp::run(),
        _ => Exit::Usage,
    };
    exit as u8
}

fn mcp_command() -> Command {
    Command::new(MCP).about(
        "Serve the tools over the Model Context Protocol on stdio (for Claude, Cursor, VS Code, Codex ...)",
    )
}

fn default_dirs_arg() -> Arg {
    Arg::new("default-dirs").long("default-dirs").action(ArgAction::SetTrue).help(
        "Scan $IKIGAI_LIBEXEC_DIR (the built-in tools when it is not set), ~/.ikigai/tools \
         and ./.ikigai/tools, in that order",
    )
}

fn dir_option() -> Arg {
    Arg::new("dir")
        .long("dir")
        .value_name("DIR")
        .action(ArgAction::Append)
        .value_parser(value_parser!(PathBuf))
        .help("Discover the tools of DIR instead of the built-in ones (repeatable; later wins)")
}

fn timeout_arg(help: &'static str) -> Arg {
    Arg::new("timeout").long("timeout").value_name("SECS").value_parser(parse_timeout).help(help)
}

fn catalog_command() -> Command {
    Command::new(CATALOG)
        .about("Print the tools as the `tools` array of a provider's request")
        .long_about(
            "Print the tools as the `tools` array of a provider's request, sorted by name.\n\
             With no DIR, the six built-in tools. With DIRs, discovery as a host does it: \
             every executable file of each DIR is asked for --schema (all at once, 1 s each), \
             a schema is kept only if it passes the six rules of the schema format, and a \
             later DIR overrides an earlier one by name. Rejected tools are named on stderr.",
        )
        .arg(
            Arg::new("provider")
                .long("provider")
                .value_name("PROVIDER")
                .value_parser(["ikigai", "openai", "anthropic", "google"])
                .default_value("ikigai")
                .help("The request format"),
        )
        .arg(default_dirs_arg())
        .arg(
            Arg::new("DIR")
                .num_args(0..)
                .value_parser(value_parser!(PathBuf))
                .help("Directories of tools, in order of precedence (last wins)"),
        )
}

fn check_command() -> Command {
    Command::new(CHECK)
        .about("Check tools the way a host will meet them (for tool authors)")
        .long_about(
            "Check tools the way a host will meet them: whether --schema answers within 1 s \
             and without waiting for stdin, every rule of the schema format, and whether a \
             call with {} returns one JSON object. A PATH is a tool, or a directory whose \
             executables are all checked; with none, the built-in tools. Exit 0 only if \
             every tool passes.",
        )
        .arg(timeout_arg("Time limit of the call with {} (default 30)"))
        .arg(
            Arg::new("PATH")
                .num_args(0..)
                .value_parser(value_parser!(PathBuf))
                .help("Tools, or directories of tools"),
        )
}

fn call_command() -> Command {
    Command::new(CALL)
        .about("Call a tool as a host does and print the envelope the model would read")
        .long_about(
            "Call a tool as a host does: the arguments on its stdin, stdout and stderr \
             captured, its process group killed after the time limit. Prints \
             {\"tool_success\":true,\"result\":…} or the failure envelope (TOOL_TIMEOUT, \
             TOOL_CRASHED, INVALID_OUTPUT, TOOL_NOT_FOUND). Exit 0 on success, 1 on failure.",
        )
        .arg(timeout_arg("Time limit in seconds (default 30)"))
        .arg(dir_option())
        .arg(default_dirs_arg())
        .arg(Arg::new("NAME").required(true).help("The tool's name"))
        .arg(
            Arg::new("ARGS")
                .allow_hyphen_values(true)
                .help("The argument object, as JSON; read from stdin when absent"),
        )
}

fn list_command() -> Command {
    Command::new(LIST)
        .about("List the tools with their descriptions, or print one tool's schema")
        .arg(dir_option())
        .arg(default_dirs_arg())
        .arg(Arg::new("NAME").help("The tool whose whole schema to print"))
}

fn parse_timeout(text: &str) -> Result<Duration, String> {
    let secs: f64 = text.trim().parse().map_err(|_| format!("not a number of seconds: {text}"))?;
    if secs.is_nan() || secs <= 0.0 {
        return Err(format!("the time limit must be more than 0 seconds, not {text}"));
    }
    Duration::try_from_secs_f64(secs).map_err(|e| format!("not a usable time limit: {e}"))
}

/// The tool sources a command names: `--default-dirs` first, then the
/// directories given; the built-in tools when there are neither.
fn sources(m: &ArgMatches, dirs_id: &str) -> (Vec<Source>, Vec<PathBuf>) {
    let given: Vec<PathBuf> =
        m.get_many::<PathBuf>(dirs_id).into_iter().flatten().cloned().collect();
    let mut sources = Vec::new();
    if m.get_flag("default-dirs") {
        sources = discover::default_sources();
    }
    sources.extend(given.iter().cloned().map(Source::Dir));
    if sources.is_empty() {
        sources.push(Source::BuiltIn);
    }
    (sources, given)
}

/// Discovers the tools of the sources and tells stderr what did not make
/// it. Returns whether everything did (no rejection, every directory
/// given could be read; a missing default directory is normal).
fn discover_and_report(sources: &[Source], given: &[PathBuf]) -> (Registry, bool) {
    let Discovery { registry, rejected, overridden, unreadable } = discover::discover(sources);
    let mut clean = rejected.is_empty();
    let mut err = io::stderr().lock();
    for (dir, e) in &unreadable {
        if given.contains(dir) {
            let _ = writeln!(err, "{BIN_NAME}: {}: cannot read the directory: {e}", dir.display());
            clean = false;
        }
    }
    for r in &rejected {
        let _ = writeln!(err, "{BIN_NAME}: {r}");
    }
    for o in &overridden {
        let _ = writeln!(err, "{BIN_NAME}: {o}");
    }
    (registry, clean)
}

fn run_catalog(m: &ArgMatches) -> Exit {
    let provider = m
        .get_one::<String>("provider")
        .and_then(|p| p.parse::<Provider>().ok())
        .unwrap_or(Provider::Ikigai);
    let (sources, given) = sources(m, "DIR");
    let (registry, clean) = discover_and_report(&sources, &given);
    print_json_pretty(&translate::translate(&registry, provider));
    if clean {
        Exit::Ok
    } else {
        Exit::Failed
    }
}

fn run_check(m: &ArgMatches) -> Exit {
    let timeout = m.get_one::<Duration>("timeout").copied().unwrap_or(CALL_TIMEOUT);
    let paths: Vec<PathBuf> =
        m.get_many::<PathBuf>("PATH").into_iter().flatten().cloned().collect();
    let targets = if paths.is_empty() {
        Registry::builtin().tools().iter().map(|t| check::Target::Tool(t.origin.clone())).collect()
    } else {
        check::targets(&paths)
    };
    let reports = check::check(targets, timeout);
    let failed = reports.iter().filter(|r| !r.passed()).count();
    let mut text: String = reports.iter().map(|r| format!("{r}\n")).collect();
    text.push_str(&format!(
        "{} checked: {} passed, {failed} failed\n",
        plural(reports.len(), "tool"),
        reports.len() - failed
    ));
    print(&text);
    if failed == 0 {
        Exit::Ok
    } else {
        Exit::Failed
    }
}

fn run_call(m: &ArgMatches) -> Exit {
    let timeout = m.get_one::<Duration>("timeout").copied().unwrap_or(CALL_TIMEOUT);
    let name = m.get_one::<String>("NAME").cloned().unwrap_or_default();
    let args = match m.get_one::<String>("ARGS") {
        Some(text) => text.clone().into_bytes(),
        None => {
            let mut buf = Vec::new();
            if let Err(e) = io::stdin().lock().read_to_end(&mut buf) {
                eprintln!("{BIN_NAME} {CALL}: cannot read the arguments from stdin: {e}");
                return Exit::Usage;
            }
            buf
        }
    };
    match serde_json::from_slice::<Value>(&args) {
        Ok(Value::Object(_)) => {}
        Ok(other) => {
            let kind = super::validate::kind(&other);
            eprintln!("{BIN_NAME} {CALL}: ARGS must be a JSON object, not {kind}");
            return Exit::Usage;
        }
        Err(e) => {
            eprintln!("{BIN_NAME} {CALL}: ARGS must be a JSON object: {e}");
            return Exit::Usage;
        }
    }
    let (sources, given) = sources(m, "dir");
    let registry = if sources == [Source::BuiltIn] {
        Registry::builtin()
    } else {
        discover_and_report(&sources, &given).0
    };
    let envelope = match registry.find(&name) {
        Some(tool) => call::call(tool, &args, timeout),
        None => {
            unknown(&registry, &name);
            Envelope::not_found(&name)
        }
    };
    print(&envelope.to_json().to_string());
    if envelope.is_success() {
        Exit::Ok
    } else {
        Exit::Failed
    }
}

fn run_list(m: &ArgMatches) -> Exit {
    let (sources, given) = sources(m, "dir");
    let (registry, _) = discover_and_report(&sources, &given);
    match m.get_one::<String>("NAME") {
        Some(name) => match registry.find(name) {
            Some(tool) => {
                print_json_pretty(&tool.schema.as_json());
                Exit::Ok
            }
            None => {
                unknown(&registry, name);
                Exit::Failed
            }
        },
        None => {
            print(&listing(&registry));
            Exit::Ok
        }
    }
}

/// One line a tool: name and description, and under it the path of a
/// discovered tool.
fn listing(registry: &Registry) -> String {
    if registry.is_empty() {
        return "No tools available\n".to_owned();
    }
    let width = registry.tools().iter().map(|t| t.name().chars().count()).max().unwrap_or(0);
    let mut text = String::new();
    for tool in registry.tools() {
        text.push_str(&format!("{:<width$}  {}\n", tool.name(), tool.schema.description()));
        if let Some(path) = tool.origin.path() {
            text.push_str(&format!("{:<width$}  {}\n", "", path.display()));
        }
    }
    text
}

fn unknown(registry: &Registry, name: &str) {
    let hint = match registry.suggest(name) {
        Some(close) => format!(" (did you mean {close}?)"),
        None => String::new(),
    };
    eprintln!("{BIN_NAME}: unknown tool '{name}'{hint}; `{BIN_NAME} {LIST}` shows the tools");
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn print_json_pretty(value: &Value) {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    print(&format!("{text}\n"));
}

/// Writes to stdout; a reader that went away is not an error of ours.
fn print(text: &str) {
    let mut out = io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_parse() {
        assert_eq!(parse_timeout("1"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_timeout("0.25"), Ok(Duration::from_millis(250)));
        assert!(parse_timeout("0").is_err());
        assert!(parse_timeout("-1").is_err());
        assert!(parse_timeout("NaN").is_err());
        assert!(parse_timeout("1e300").is_err());
        assert!(parse_timeout("soon").is_err());
    }

    #[test]
    fn the_listing_aligns_descriptions() {
        let text = listing(&Registry::builtin());
        assert!(text.starts_with("bash        Execute a shell command and return output\n"));
        assert_eq!(text.lines().count(), 6);
        assert_eq!(listing(&Registry::new()), "No tools available\n");
    }

    #[test]
    fn every_command_is_well_formed() {
        for command in commands() {
            command.debug_assert();
        }
    }
}
