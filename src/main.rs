use std::process::ExitCode;

fn main() -> ExitCode {
    ikigai_tools::cli::main()
}
