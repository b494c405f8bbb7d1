//! The one printer: every message the binary tells on stderr, one line
//! each (as fd's `print_error`), and every text it writes whole on stdout.
//! The front end (`cli`) and the MCP server (`mcp`) print through it, and
//! nothing else in the crate prints: the library returns values and typed
//! errors, and those two tell them (a test below keeps it so).
//!
//! Two writers of stdout are not printing but protocol: a tool's answer
//! (`protocol`) and the MCP server's JSON-RPC messages (`mcp::transport`).
//! clap prints its own usage errors and help.

use std::fmt::Display;
use std::io::{self, Write};

use crate::error::one_line;
use crate::BIN_NAME;

/// Writes a text to stdout; a reader that went away is not an error of ours.
pub fn print(text: &str) {
    let mut out = io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// `ikigai-tools: message`, for the binary's own errors.
pub fn print_error(message: impl Display) {
    write_line(&format!("{BIN_NAME}: {message}"));
}

/// `ikigai-tools COMMAND: message`, for an error or a notice of one
/// subcommand (`catalog`, `check`, `call`, `list`, `mcp`).
pub fn print_command_error(command: &str, message: impl Display) {
    write_line(&format!("{BIN_NAME} {command}: {message}"));
}

/// A tool's error message as the call protocol echoes it: bare, so that a
/// host showing stderr shows what the model was told.
pub fn echo(message: impl Display) {
    write_line(&message.to_string());
}

/// Writes one line; a stderr that cannot be written to is not worth a
/// panic. Under `cargo test`, through the macro the test harness captures,
/// so that the notices of the code under test show only with its failures.
fn write_line(text: &str) {
    #[cfg(not(test))]
    let _ = writeln!(io::stderr().lock(), "{}", one_line(text));
    #[cfg(test)]
    eprintln!("{}", one_line(text));
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    /// What prints, or reaches for a stream to print on; a line is told
    /// by the first of these it holds (`eprintln!(` holds `println!(`).
    const PRINTING: [&str; 7] =
        ["eprintln!(", "eprint!(", "println!(", "print!(", "dbg!(", "stderr()", "stdout()"];

    /// The files that may, and what: this printer, a tool's answer and the
    /// MCP server's JSON-RPC messages.
    const ALLOWED: [(&str, &[&str]); 3] = [
        ("print.rs", &["eprintln!(", "stderr()", "stdout()"]),
        ("protocol.rs", &["stdout()"]),
        ("mcp/transport/stdio.rs", &["stdout()"]),
    ];

    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// The code of a file that runs in the binary: comments (doc examples
    /// print) and the test module at its end left out.
    fn production_code(text: &str) -> String {
        let end = text.find("\n#[cfg(test)]\nmod tests {").unwrap_or(text.len());
        text[..end]
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn nothing_else_prints() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        sources(&src, &mut files);
        assert!(files.len() > 50, "the sources were not found under {}", src.display());
        let mut found = Vec::new();
        for file in files {
            let name = file.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
            if name.ends_with("_tests.rs") {
                continue;
            }
            let allowed = ALLOWED.iter().find(|(f, _)| *f == name).map_or(&[][..], |(_, a)| *a);
            let code = production_code(&std::fs::read_to_string(&file).unwrap());
            for line in code.lines() {
                let token = PRINTING.iter().find(|t| line.contains(*t));
                if let Some(token) = token.filter(|t| !allowed.contains(t)) {
                    found.push(format!("{name}: {token} in `{}`", line.trim()));
                }
            }
        }
        assert!(found.is_empty(), "printing outside src/print.rs:\n{}", found.join("\n"));
    }
}
