//! How a run of the binary ends, named once (as fd's `exit_codes.rs`).

/// The exit status of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// All went well; in the ikigai dialect also a call answered with an
    /// error envelope (the host reads the envelope, not the status).
    Success,
    /// A shellclaw call answered with an error envelope; a host command
    /// whose tool was rejected, failed its check, failed its call or is not
    /// known.
    Failure,
    /// The command line cannot be made sense of: an unknown tool, a wrong
    /// option, a bad value.
    UsageError,
    /// `doctor`: a confinement layer is missing, confined calls still run.
    LayersMissing,
    /// `doctor`: a confined call is refused on this kernel.
    ConfinedRefused,
    /// Stopped by signal N (the MCP server on SIGTERM, SIGINT or SIGHUP):
    /// 128+N, as a shell reports it.
    StoppedBy(i32),
}

impl ExitCode {
    /// The number the process exits with.
    pub fn code(self) -> u8 {
        match self {
            ExitCode::Success => 0,
            ExitCode::Failure => 1,
            ExitCode::UsageError => 2,
            ExitCode::LayersMissing => 3,
            ExitCode::ConfinedRefused => 4,
            ExitCode::StoppedBy(signal) => {
                u8::try_from(crate::process::status::signal_exit_code(signal)).unwrap_or(u8::MAX)
            }
        }
    }

    /// `Success` when `ok`, else `Failure`.
    pub fn success_if(ok: bool) -> ExitCode {
        if ok {
            ExitCode::Success
        } else {
            ExitCode::Failure
        }
    }
}

impl From<crate::mcp::Ending> for ExitCode {
    fn from(ending: crate::mcp::Ending) -> ExitCode {
        match ending {
            crate::mcp::Ending::InputClosed => ExitCode::Success,
            crate::mcp::Ending::Shutdown(_) => ExitCode::Success,
            crate::mcp::Ending::Failed => ExitCode::Failure,
            crate::mcp::Ending::Stopped(signal) => ExitCode::StoppedBy(signal),
        }
    }
}

impl From<ExitCode> for std::process::ExitCode {
    fn from(code: ExitCode) -> std::process::ExitCode {
        std::process::ExitCode::from(code.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_those_hosts_expect() {
        assert_eq!(
            [ExitCode::Success, ExitCode::Failure, ExitCode::UsageError].map(ExitCode::code),
            [0, 1, 2]
        );
        assert_eq!(ExitCode::success_if(false), ExitCode::Failure);
        assert_eq!(ExitCode::StoppedBy(15).code(), 143);
    }
}
