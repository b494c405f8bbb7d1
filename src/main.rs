use std::process::ExitCode;

/// `TOOL --schema` before the C runtime starts, in the binary install.sh
/// builds (its entry point).
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod entry;

fn main() -> ExitCode {
    ikigai_tools::cli::main()
}
