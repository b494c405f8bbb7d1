//! The clap command tree. clap's multicall mode picks the applet from the
//! file name of `argv[0]` (clap drops the directory and the extension), or
//! from the first argument when the binary runs as `ikigai-tools`: each tool
//! is a subcommand at the top (for links) and under `ikigai-tools`.

use clap::{Arg, ArgAction, Command};

use super::{host, BIN_NAME};
use crate::profile::Profile;
use crate::tools::{self, Tool};

/// The argument ids of a tool's command.
pub const SCHEMA: &str = "schema";
pub const DESCRIBE: &str = "describe";
pub const ARGS: &str = "ARGS";

/// The argument id of `ikigai-tools --list`.
pub const LIST: &str = "list";

/// A tool's command (its help adds the parameters: `help::tool_help`).
pub(crate) fn tool_command(tool: &'static Tool, profile: Profile) -> Command {
    Command::new(tool.command)
        .aliases(tool.aliases())
        .about(tool.description(profile))
        .arg(
            Arg::new(SCHEMA)
                .long("schema")
                .action(ArgAction::SetTrue)
                .help("Print the tool's JSON schema and exit (ikigai)"),
        )
        .arg(
            Arg::new(DESCRIBE)
                .long("describe")
                .action(ArgAction::SetTrue)
                .help("Print the tool's JSON schema and exit (shellclaw)"),
        )
        .arg(
            Arg::new(ARGS)
                .allow_hyphen_values(true)
                // Raw bytes: an argument that is not UTF-8 is bad JSON, answered
                // with the envelope, not a usage error.
                .value_parser(clap::builder::OsStringValueParser::new())
                .help("The JSON argument object (shellclaw); without it, read from stdin (ikigai)"),
        )
}

fn tool_commands(profile: Profile) -> impl Iterator<Item = Command> {
    tools::of(profile).map(move |tool| tool_command(tool, profile))
}

/// The `ikigai-tools` applet: the tools as subcommands, and the host side.
pub fn suite_command(profile: Profile) -> Command {
    Command::new(BIN_NAME)
        .version(env!("CARGO_PKG_VERSION"))
        .about("The tools a language model uses to act on a machine, as one binary")
        .after_help(suite_after_help())
        .arg(
            Arg::new(LIST)
                .long("list")
                .action(ArgAction::SetTrue)
                .exclusive(true)
                .help("Print the tools' command names, one per line (the links install.sh makes)"),
        )
        .args_conflicts_with_subcommands(true)
        .subcommands(tool_commands(profile))
        .subcommands(host::commands())
}

/// What the suite's help says after the options (`help::suite_help` adds
/// the environment).
pub(crate) fn suite_after_help() -> String {
    format!(
        "Each tool also runs as a link named after it (libexec/ikigai/file-read), reading its \
         JSON arguments from stdin (ikigai) or from $1 (shellclaw); `{BIN_NAME} TOOL --help` \
         lists its parameters.\n\
         Tools: {}",
        tools::names()
    )
}

/// The whole command tree in multicall mode, the tools described as
/// `profile` describes them.
pub fn command(profile: Profile) -> Command {
    Command::new(BIN_NAME)
        .multicall(true)
        .subcommand(suite_command(profile))
        .subcommands(tool_commands(profile))
}

#[cfg(test)]
mod tests {
    use crate::profile::Profile;

    #[test]
    fn the_command_tree_is_well_formed() {
        for profile in [Profile::Seed, Profile::Full] {
            super::command(profile).debug_assert();
        }
    }
}
