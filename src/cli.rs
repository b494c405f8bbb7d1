//! The command line: which tool (or host command) a run is, and how it was
//! called. clap's multicall mode picks the tool from the file name of
//! `argv[0]` (clap drops the directory and the extension), or from the first
//! argument when the binary runs as `ikigai-tools`.

use std::ffi::OsString;
use std::io::{self, Write};
use std::os::unix::ffi::OsStringExt;
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{Arg, ArgAction, ArgMatches, Command};

use crate::protocol::{self, Args, Dialect};
use crate::tools::{self, Tool};

pub const BIN_NAME: &str = "ikigai-tools";

/// Exit code for a call the command line cannot make sense of.
const USAGE_ERROR: u8 = 2;

fn tool_command(tool: &'static Tool) -> Command {
    Command::new(tool.command)
        .aliases(tool.aliases())
        .about(tool.description())
        .arg(
            Arg::new("schema")
                .long("schema")
                .action(ArgAction::SetTrue)
                .help("Print the tool's JSON schema and exit (ikigai)"),
        )
        .arg(
            Arg::new("describe")
                .long("describe")
                .action(ArgAction::SetTrue)
                .help("Print the tool's JSON schema and exit (shellclaw)"),
        )
        .arg(
            Arg::new("ARGS")
                .allow_hyphen_values(true)
                // Raw bytes: an argument that is not UTF-8 is bad JSON, answered
                // with the envelope, not a usage error.
                .value_parser(clap::builder::OsStringValueParser::new())
                .help("The JSON argument object (shellclaw); without it, read from stdin (ikigai)"),
        )
}

fn tool_commands() -> impl Iterator<Item = Command> {
    tools::TOOLS.iter().map(tool_command)
}

/// The `ikigai-tools` applet: the tools as subcommands, and the host side.
fn suite_command() -> Command {
    Command::new(BIN_NAME)
        .version(env!("CARGO_PKG_VERSION"))
        .about("The tools a language model uses to act on a machine, as one binary")
        .after_help(format!(
            "Each tool also runs as a link named after it (libexec/ikigai/file-read), \
             reading its JSON arguments from stdin (ikigai) or from $1 (shellclaw).\n\
             Tools: {}",
            tools::names()
        ))
        .subcommands(tool_commands())
        .subcommands(crate::host::commands::commands())
}

/// The whole command tree in multicall mode.
pub fn command() -> Command {
    Command::new(BIN_NAME).multicall(true).subcommand(suite_command()).subcommands(tool_commands())
}

/// The entry point of the binary.
pub fn main() -> ExitCode {
    ExitCode::from(run(std::env::args_os()))
}

/// Runs one invocation and returns its exit code.
pub fn run(argv: impl IntoIterator<Item = OsString>) -> u8 {
    let argv: Vec<OsString> = argv.into_iter().collect();
    crate::limit::called_as(&applet_name(&argv));
    if let Some(tool) = schema_request(&argv) {
        return print_schema(tool);
    }
    let matches = match command().try_get_matches_from(&argv) {
        Ok(m) => m,
        Err(e) => return clap_error(e, &argv),
    };
    let Some((applet, sub)) = matches.subcommand() else {
        return unknown_tool(&applet_name(&argv));
    };
    if applet != BIN_NAME {
        return run_tool(applet, sub);
    }
    match sub.subcommand() {
        Some((name, m)) if crate::host::commands::is_host_command(name) => {
            crate::host::commands::run(name, m)
        }
        Some((name, m)) => run_tool(name, m),
        None => {
            // `ikigai-tools` alone: usage on stdout, as --help.
            let _ = suite_command().print_help();
            0
        }
    }
}

fn run_tool(name: &str, m: &ArgMatches) -> u8 {
    let Some(tool) = tools::find(name) else {
        return unknown_tool(name);
    };
    if m.get_flag("schema") || m.get_flag("describe") {
        return print_schema(tool);
    }
    let (raw, dialect) = match m.get_one::<OsString>("ARGS") {
        Some(arg) => (Ok(arg.clone().into_vec()), Dialect::Shellclaw),
        None => (protocol::read_stdin(), Dialect::Ikigai),
    };
    let outcome = raw.and_then(|bytes| Args::parse(&bytes)).and_then(|args| (tool.run)(&args));
    protocol::finish(&outcome, dialect)
}

/// `TOOL --schema` (or `--describe`) through a link: the call a host makes
/// for every tool at every start, answered before clap builds its command
/// tree, which would triple its cost. Anything else goes through clap.
fn schema_request(argv: &[OsString]) -> Option<&'static Tool> {
    match argv {
        [_, flag] if flag == "--schema" || flag == "--describe" => {
            tools::find(&applet_name(&argv[..1]))
        }
        _ => None,
    }
}

fn print_schema(tool: &Tool) -> u8 {
    let mut out = io::stdout().lock();
    let _ = out.write_all(tool.schema.as_bytes()).and_then(|()| out.flush());
    0
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

fn unknown_tool(name: &str) -> u8 {
    eprintln!("{BIN_NAME}: unknown tool '{name}'; the tools are: {}", tools::names());
    USAGE_ERROR
}

fn clap_error(e: clap::Error, argv: &[OsString]) -> u8 {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            0
        }
        ErrorKind::InvalidSubcommand => {
            let name = applet_name(argv);
            if name.starts_with('-') {
                // `ikigai-tools --schema`: a flag where a tool belongs.
                eprintln!(
                    "{BIN_NAME}: {name} needs a tool: {BIN_NAME} TOOL {name} (tools: {})",
                    tools::names()
                );
                USAGE_ERROR
            } else {
                unknown_tool(&name)
            }
        }
        _ => {
            let _ = e.print();
            USAGE_ERROR
        }
    }
}
