//! `ikigai-tools doctor`: the confinement report of this kernel and
//! container (`crate::confine::report`; docs/CONFINEMENT.md, "What doctor
//! reports"), as text for a person or `--json` for a machine. It probes; it
//! runs no shell.

use clap::{Arg, ArgAction, ArgMatches, Command};

use super::report::print;
use super::ExitCode;
use crate::confine::report::{Report, Standing};

pub const DOCTOR: &str = "doctor";

pub fn command() -> Command {
    Command::new(DOCTOR)
        .about(
            "Say which confinement layers this kernel and container give, why one is missing, \
             and what a confined call will do",
        )
        .arg(
            Arg::new("json")
                .long("json")
                .action(ArgAction::SetTrue)
                .help("Print one JSON object instead of text"),
        )
        .after_help(
            "Exit status: 0 every layer is there; 3 a layer is missing, confined calls still \
             run; 4 a confined call is refused here (see IKIGAI_TOOLS_CONFINE=outer)",
        )
}

pub fn run(m: &ArgMatches) -> ExitCode {
    let report = Report::probe();
    if m.get_flag("json") {
        print(&format!("{}\n", report.json()));
    } else {
        print(&report.text());
    }
    match report.standing() {
        Standing::Complete => ExitCode::Success,
        Standing::Reduced => ExitCode::LayersMissing,
        Standing::Refusing => ExitCode::ConfinedRefused,
    }
}
