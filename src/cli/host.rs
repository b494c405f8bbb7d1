//! The host subcommands of `ikigai-tools`: `catalog`, `check`, `call` and
//! `list`. Each parses its arguments, calls the [`crate::host`] library and
//! prints what it returned; the behaviour lives in the library.
//!
//! Exit codes: success when all is well; failure when a tool was rejected,
//! failed a check, a call failed or the name is unknown; a usage error when
//! the command line is wrong.

use std::io::{self, Read};
use std::path::PathBuf;
use std::time::Duration;

use clap::{value_parser, Arg, ArgAction, ArgMatches, Command};
use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
use serde_json::Value;

use super::report::{print, print_command_error, print_error, unknown_tool};
use super::ExitCode;
use crate::host::discover::{self, Discovery, Source};
use crate::host::{
    call, check, freeform, translate_for, validate, Envelope, Provider, Registry, CALL_TIMEOUT,
};
use crate::profile::{Profile, PROFILE_VAR};

const CATALOG: &str = "catalog";
const CHECK: &str = "check";
const CALL: &str = "call";
const LIST: &str = "list";
const MCP: &str = "mcp";
use super::doctor::DOCTOR;

/// The longest `--timeout` taken: a year. Far beyond any call, and far from
/// where a deadline stops being a time the clock can hold.
const MAX_TIMEOUT_SECS: f64 = 365.0 * 24.0 * 3600.0;

/// Whether `name` is one of the host subcommands.
pub fn is_host_command(name: &str) -> bool {
    [CATALOG, CHECK, CALL, LIST, MCP, DOCTOR].contains(&name)
}

/// The host subcommands, for the `ikigai-tools` applet.
pub fn commands() -> Vec<Command> {
    vec![
        catalog_command(),
        check_command(),
        call_command(),
        list_command(),
        mcp_command(),
        super::doctor::command(),
    ]
}

/// Runs the host subcommand `name`.
pub fn run(name: &str, m: &ArgMatches) -> ExitCode {
    // Discovery runs a process per tool; let it have every descriptor the
    // system allows.
    raise_open_files_limit();
    match name {
        CATALOG => run_catalog(m),
        CHECK => run_check(m),
        CALL => run_call(m),
        LIST => run_list(m),
        MCP => run_mcp(m),
        DOCTOR => super::doctor::run(m),
        _ => ExitCode::UsageError,
    }
}

fn mcp_command() -> Command {
    Command::new(MCP)
        .about(
            "Serve the tools over the Model Context Protocol on stdio (for Claude, Cursor, VS Code, Codex ...)",
        )
        .arg(
            Arg::new("root")
                .long("root")
                .value_name("DIR")
                .action(ArgAction::Append)
                .value_parser(value_parser!(PathBuf))
                .help(
                    "Confine the tools to DIR (repeatable; else IKIGAI_TOOLS_ROOTS). The \
                     client's own roots narrow this: only those that are a DIR or beneath one \
                     are kept. Without --root or --unconfined, a call runs only within the \
                     client's roots, and is refused if it offers none",
                ),
        )
        .arg(
            Arg::new("unconfined")
                .long("unconfined")
                .action(ArgAction::SetTrue)
                .help(
                    "Serve the whole machine on purpose: calls run unconfined unless the \
                     client names roots (then those confine). Not with --root or \
                     IKIGAI_TOOLS_ROOTS",
                ),
        )
        .arg(
            Arg::new("profile")
                .long("profile")
                .value_name("PROFILE")
                .value_parser(["full", "seed"])
                .help(
                    "The tools' profile: full (the default here: every seed parameter and more) \
                     or seed (exactly the six seed schemas); else IKIGAI_TOOLS_PROFILE",
                ),
        )
        .arg(
            Arg::new("max-output")
                .long("max-output")
                .value_name("BYTES")
                .value_parser(value_parser!(u64))
                .help(
                    "The most bytes of a call's answer, as IKIGAI_TOOLS_MAX_OUTPUT (0: no \
                     limit; less than 1024 is 1024); else that variable, else 24000, which \
                     Claude Code keeps whole",
                ),
        )
        .arg(
            Arg::new("listen")
                .long("listen")
                .value_name("ADDR")
                .help(
                    "Serve streamable HTTP at http://ADDR/mcp instead of stdio: PORT (on \
                     127.0.0.1; 0 picks one, said on stderr), HOST:PORT or [IPV6]:PORT",
                ),
        )
        .arg(
            Arg::new("token-file")
                .long("token-file")
                .value_name("FILE")
                .requires("listen")
                .value_parser(value_parser!(PathBuf))
                .help(
                    "With --listen: the bearer token clients must send, from FILE (not readable \
                     by others); else IKIGAI_TOOLS_MCP_TOKEN. Required off loopback",
                ),
        )
        .arg(
            Arg::new("allow-origin")
                .long("allow-origin")
                .value_name("ORIGIN")
                .action(ArgAction::Append)
                .requires("listen")
                .help(
                    "With --listen: a browser Origin allowed beside this machine's own, as \
                     scheme://host:port (port * for any; repeatable)",
                ),
        )
}

fn run_mcp(m: &ArgMatches) -> ExitCode {
    // The token leaves the environment (libc's array and the block the
    // kernel gave, which /proc/PID/environ shows) before the spawner is
    // forked with it and while this is the one thread: no call's process
    // may inherit it nor read it there. A token that cannot be taken is a
    // bad argument: one line, exit 2, as a bad --root.
    let token = match m.contains_id("listen") {
        true => {
            match crate::mcp::take_token(m.get_one::<PathBuf>("token-file").map(PathBuf::as_path)) {
                Ok(token) => token,
                Err(e) => {
                    print_command_error(MCP, format_args!("cannot start: {e}"));
                    return ExitCode::UsageError;
                }
            }
        }
        false => None,
    };
    // What confinement holds here, probed before the spawner's fork
    // (docs/CONFINEMENT.md, "What doctor reports"): said now on stdio, and
    // over HTTP after the line that says where the server listens, which
    // scripts read first.
    let missing = crate::confine::report::shared().missing_lines();
    if !m.contains_id("listen") {
        for line in &missing {
            print_command_error(MCP, line);
        }
    }
    let settings = crate::mcp::CallSettings {
        spawner: crate::mcp::start_spawner(super::run_forked),
        profile: mcp_profile(m),
        max_output: mcp_max_output(m),
    };
    let paths: Vec<PathBuf> =
        m.get_many::<PathBuf>("root").into_iter().flatten().cloned().collect();
    match crate::mcp::roots_from_command_line(&paths, m.get_flag("unconfined")) {
        Ok(roots) => match m.get_one::<String>("listen") {
            Some(listen) => {
                let options = crate::mcp::HttpOptions {
                    listen: listen.clone(),
                    token,
                    allow_origins: m
                        .get_many::<String>("allow-origin")
                        .into_iter()
                        .flatten()
                        .cloned()
                        .collect(),
                };
                ExitCode::from(crate::mcp::run_http(options, roots, settings))
            }
            None => ExitCode::from(crate::mcp::run(roots, settings)),
        },
        Err(e) => {
            print_command_error(MCP, e);
            ExitCode::UsageError
        }
    }
}

/// The MCP server's profile: `--profile`, else `IKIGAI_TOOLS_PROFILE`, else
/// full (MCP hosts read each parameter's description and are not tied to
/// the seed schemas).
fn mcp_profile(m: &ArgMatches) -> Profile {
    let named = m.get_one::<String>("profile").map(String::as_str);
    let env = std::env::var(PROFILE_VAR).ok();
    named.or(env.as_deref()).and_then(Profile::parse).unwrap_or(Profile::Full)
}

/// The MCP server's output limit: `--max-output`, else
/// `IKIGAI_TOOLS_MAX_OUTPUT`, else its own default (docs/MCP.md).
fn mcp_max_output(m: &ArgMatches) -> Option<usize> {
    let flag = m.get_one::<u64>("max-output").map(u64::to_string);
    crate::context::mcp_max_output(flag.as_deref())
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
    // Checked after clap (see `timeout`), so that a bad value is one line;
    // `-1` and `-inf` are values, to be told about, not flags.
    Arg::new("timeout").long("timeout").value_name("SECS").allow_hyphen_values(true).help(help)
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
                .value_parser(Provider::ALL.map(Provider::name))
                .default_value(Provider::Ikigai.name())
                .help("The request format"),
        )
        .arg(Arg::new("model").long("model").value_name("MODEL").help(
            "The model the request goes to: with --provider openai, a GPT-5 or Codex \
                     model (gpt-5*, *codex*) gets apply_patch as the freeform tool with its \
                     grammar that it is trained on; any other, or none, the JSON form",
        ))
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
        .arg(Arg::new("freeform").long("freeform").action(ArgAction::SetTrue).help(
            "ARGS (or stdin) is the raw text a model sent to a freeform (custom) tool, \
                     such as apply_patch's patch: it is passed as {\"input\": TEXT}",
        ))
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

/// The `--timeout` of `command`, [`CALL_TIMEOUT`] without one; a value
/// that is not a usable time limit is told on stderr.
fn timeout(m: &ArgMatches, command: &str) -> Result<Duration, ExitCode> {
    let Some(text) = m.get_one::<String>("timeout") else {
        return Ok(CALL_TIMEOUT);
    };
    parse_timeout(text).ok_or_else(|| {
        print_command_error(
            command,
            format!(
                "--timeout takes a number of seconds more than 0 and at most {MAX_TIMEOUT_SECS}, \
                 not '{text}'"
            ),
        );
        ExitCode::UsageError
    })
}

/// A number of seconds more than 0 and at most [`MAX_TIMEOUT_SECS`]
/// (which also rules out NaN and the infinities).
fn parse_timeout(text: &str) -> Option<Duration> {
    let secs: f64 = text.trim().parse().ok()?;
    (secs > 0.0 && secs <= MAX_TIMEOUT_SECS).then(|| Duration::from_secs_f64(secs))
}

/// Lifts the soft limit on open files to the hard one (each tool run holds
/// its pipes open). Not fatal if it cannot: discovery runs fewer at once.
fn raise_open_files_limit() {
    let limit = getrlimit(Resource::Nofile);
    // The soft limit is at most the hard one (`None`: no limit).
    if limit.current != limit.maximum {
        let _ =
            setrlimit(Resource::Nofile, Rlimit { current: limit.maximum, maximum: limit.maximum });
    }
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
    for (dir, e) in &unreadable {
        if given.contains(dir) {
            print_error(format!("{}: cannot read the directory: {e}", dir.display()));
            clean = false;
        }
    }
    for r in &rejected {
        print_error(r);
    }
    for o in &overridden {
        print_error(o);
    }
    (registry, clean)
}

fn run_catalog(m: &ArgMatches) -> ExitCode {
    let provider = m
        .get_one::<String>("provider")
        .and_then(|p| p.parse::<Provider>().ok())
        .unwrap_or(Provider::Ikigai);
    let model = m.get_one::<String>("model").map(String::as_str);
    let (sources, given) = sources(m, "DIR");
    let (registry, clean) = discover_and_report(&sources, &given);
    print_json_pretty(&translate_for(&registry, provider, model));
    ExitCode::success_if(clean)
}

fn run_check(m: &ArgMatches) -> ExitCode {
    let timeout = match timeout(m, CHECK) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let paths: Vec<PathBuf> =
        m.get_many::<PathBuf>("PATH").into_iter().flatten().cloned().collect();
    let targets = if paths.is_empty() {
        Registry::builtin().tools().iter().map(|t| check::Target::Tool(t.origin.clone())).collect()
    } else {
        check::targets(&paths)
    };
    let reports = check(targets, timeout);
    let failed = reports.iter().filter(|r| !r.passed()).count();
    let mut text: String = reports.iter().map(|r| format!("{r}\n")).collect();
    text.push_str(&format!(
        "{} checked: {} passed, {failed} failed\n",
        plural(reports.len(), "tool"),
        reports.len() - failed
    ));
    print(&text);
    ExitCode::success_if(failed == 0)
}

fn run_call(m: &ArgMatches) -> ExitCode {
    let timeout = match timeout(m, CALL) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let name = m.get_one::<String>("NAME").cloned().unwrap_or_default();
    let args = match m.get_one::<String>("ARGS") {
        Some(text) => text.clone().into_bytes(),
        None => {
            let mut buf = Vec::new();
            if let Err(e) = io::stdin().lock().read_to_end(&mut buf) {
                print_command_error(CALL, format!("cannot read the arguments from stdin: {e}"));
                return ExitCode::UsageError;
            }
            buf
        }
    };
    let freeform = m.get_flag("freeform");
    if let Err(message) = check_args(&args, freeform) {
        print_command_error(CALL, message);
        return ExitCode::UsageError;
    }
    let (sources, given) = sources(m, "dir");
    let registry = if sources == [Source::BuiltIn] {
        Registry::builtin()
    } else {
        discover_and_report(&sources, &given).0
    };
    let envelope = match registry.find(&name) {
        Some(tool) if freeform => {
            if !freeform::takes_input(&tool.schema) {
                print_command_error(
                    CALL,
                    format!(
                        "--freeform: {} takes no string `{}` to put the text in; send its JSON \
                         arguments without --freeform",
                        tool.name(),
                        freeform::INPUT_PARAM
                    ),
                );
                return ExitCode::UsageError;
            }
            let text = String::from_utf8_lossy(&args);
            call(tool, freeform::wrap_input(&text).to_string().as_bytes(), timeout)
        }
        Some(tool) => call(tool, &args, timeout),
        None => {
            unknown(&registry, &name);
            Envelope::not_found(&name)
        }
    };
    print(&envelope.to_json().to_string());
    ExitCode::success_if(envelope.is_success())
}

/// Whether `call` may pass on `args`: a JSON object, or with `--freeform`
/// any UTF-8 text (what a model sends to a custom tool).
fn check_args(args: &[u8], freeform: bool) -> Result<(), String> {
    if freeform {
        return match std::str::from_utf8(args) {
            Ok(_) => Ok(()),
            Err(e) => Err(format!("with --freeform, ARGS must be UTF-8 text: {e}")),
        };
    }
    match serde_json::from_slice::<Value>(args) {
        Ok(Value::Object(_)) => Ok(()),
        Ok(other) => Err(format!("ARGS must be a JSON object, not {}", validate::kind(&other))),
        Err(e) => Err(format!("ARGS must be a JSON object: {e}")),
    }
}

fn run_list(m: &ArgMatches) -> ExitCode {
    let (sources, given) = sources(m, "dir");
    let (registry, _) = discover_and_report(&sources, &given);
    match m.get_one::<String>("NAME") {
        Some(name) => match registry.find(name) {
            Some(tool) => {
                print_json_pretty(&tool.schema.as_json());
                ExitCode::Success
            }
            None => {
                unknown(&registry, name);
                ExitCode::Failure
            }
        },
        None => {
            print(&listing(&registry));
            ExitCode::Success
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
    print_error(unknown_tool(name, registry.tools().iter().map(|t| t.name())));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_parse() {
        assert_eq!(parse_timeout("1"), Some(Duration::from_secs(1)));
        assert_eq!(parse_timeout("0.25"), Some(Duration::from_millis(250)));
        assert_eq!(parse_timeout("31536000"), Some(Duration::from_secs(31_536_000)));
        for bad in ["0", "-1", "-0", "NaN", "inf", "-inf", "1e300", "1.8e19", "31536001", "soon"] {
            assert_eq!(parse_timeout(bad), None, "{bad}");
        }
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
