//! The messages of the front end that take some making: a panic told on
//! one line, a tool name that is not known. They are printed, as every
//! message is, by the one printer ([`crate::print`]), whose functions the
//! front end reaches through here.

pub use crate::print::{echo, print, print_command_error, print_error};
/// The message for a tool name that is not known (one maker of it, shared
/// with the MCP server).
pub use crate::tools::near_miss::unknown_tool;

/// The most of a panic's message told on stderr, in bytes: its head and
/// tail are kept around the output limit's marker.
const PANIC_MESSAGE_MAX: usize = 1024;

/// Makes a panic in a tool run print one line on stderr,
/// `ikigai-tools: panic at FILE:LINE: MESSAGE`, the message cut to its first
/// and last 512 bytes. The standard hook prints the whole message and, with
/// `RUST_BACKTRACE` set, a backtrace: a glob of 87,380 `*` once panicked in
/// globset with a message that quoted the whole regex, 437 KB on stderr. A
/// panic still ends the run with status 101 and no answer: a host reports a
/// crash (`call`'s and the MCP server's `TOOL_CRASHED`), not an answer made
/// up after the fact.
pub fn one_line_panics() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("(no message)");
        let mut told = crate::limit::Bounded::new(Some(PANIC_MESSAGE_MAX));
        told.push(message.as_bytes());
        let told = String::from_utf8_lossy(&told.finish()).into_owned();
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line()));
        print_error(format!("panic{}: {told}", at.unwrap_or_default()));
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_tool_is_told_with_a_close_name_and_the_names() {
        let known = ["bash", "glob", "grep"];
        assert_eq!(
            unknown_tool("gerp", known),
            "unknown tool 'gerp' (did you mean grep?); the tools are: bash, glob, grep"
        );
        assert_eq!(
            unknown_tool("cat", known),
            "unknown tool 'cat'; the tools are: bash, glob, grep"
        );
        assert_eq!(unknown_tool("cat", []), "unknown tool 'cat'; there are no tools");
    }
}
