//! The signal dispositions a test's child starts with. A process started in
//! the background by a shell without job control (`cargo test &` in a
//! script) ignores SIGINT, one started by `nohup` ignores SIGHUP, and an
//! ignored disposition survives `exec`: the test process and every tool it
//! spawns inherit it. The binary keeps an ignored stop signal ignored on
//! purpose, as a shell does for `&` (docs/TOOLS.md, "bash"), so a test that
//! stops a tool with SIGINT or SIGHUP gives its child the default action
//! back first, and `cargo test` passes however it was started.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// The signals a test stops a tool with that a background start can leave
/// ignored.
const STOP_SIGNALS: [libc::c_int; 2] = [libc::SIGINT, libc::SIGHUP];

/// Starts `command`'s child with SIGINT and SIGHUP at their default
/// action, whatever this process inherited.
pub fn with_default_stop_signals(command: &mut Command) -> &mut Command {
    set_in_child(command, libc::SIG_DFL)
}

/// Starts `command`'s child with SIGINT and SIGHUP ignored, as `nohup
/// cargo test &` starts the tests: for the test that the suite passes so.
pub fn with_stop_signals_ignored(command: &mut Command) -> &mut Command {
    set_in_child(command, libc::SIG_IGN)
}

fn set_in_child(command: &mut Command, action: libc::sighandler_t) -> &mut Command {
    // SAFETY: between fork and exec the closure only calls signal(2),
    // which is async-signal-safe, and allocates nothing.
    unsafe {
        command.pre_exec(move || {
            for signal in STOP_SIGNALS {
                if libc::signal(signal, action) == libc::SIG_ERR {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        })
    }
}
