//! The bounds of `mcp --listen` on what clients may hold (docs/MCP.md,
//! "Over HTTP"): time, connections, sessions and bytes. Each is chosen so
//! that real clients never meet it and a hostile one (with the token, or
//! any local user on a token-less loopback server) cannot hold the server's
//! memory or descriptors beyond it.

use std::time::Duration;

/// The test knob: `body=S,idle=S,connections=N,sessions=N,budget=BYTES`,
/// any of them, to shorten the bounds so that tests need not wait minutes.
/// Not for use: a server runs with the bounds below.
pub const TEST_VAR: &str = "IKIGAI_TOOLS_MCP_HTTP_LIMITS";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// How long a request's whole body may take to arrive once its headers
    /// have: 60 s, in which even the largest (64 MiB) passes at 9 Mbit/s,
    /// while a body trickled a byte at a time is cut off (408).
    pub body_wait: Duration,
    /// How long a session may go without a request, no request of it open
    /// (a GET stream), no call and no job running, before it expires with
    /// its jobs: 300 s, what rmcp kept any session (even a busy one) before.
    pub idle: Duration,
    /// The most connections open at once: 256. A client holds one or two
    /// (its GET stream and a POST), a call in flight one; each costs a
    /// descriptor and a few KiB, and past the bound a new one is answered
    /// 503 and closed at once.
    pub connections: usize,
    /// The most sessions at once: 1024. One is a client (an agent) and
    /// costs about 70 KiB, so 1024 hold about 70 MiB, where 20,000 took
    /// 1.4 GB; past it `initialize` is answered 503, saying to end a
    /// session with DELETE. Idle ones expire after `idle`.
    pub sessions: usize,
    /// The most bytes of request bodies held at once, across every
    /// request: 256 MiB, four of the largest. A request whose body would
    /// pass it is answered 503 with `Retry-After`, never allocated.
    pub budget: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            body_wait: Duration::from_secs(60),
            idle: Duration::from_secs(300),
            connections: 256,
            sessions: 1024,
            budget: 256 << 20,
        }
    }
}

impl Limits {
    /// The bounds, with the test knob's values where it sets any.
    pub fn from_env() -> Result<Limits, String> {
        match std::env::var(TEST_VAR) {
            Ok(text) => Limits::default().with(&text).map_err(|e| format!("{TEST_VAR}: {e}")),
            Err(_) => Ok(Limits::default()),
        }
    }

    fn with(mut self, text: &str) -> Result<Limits, String> {
        for setting in text.split(',').filter(|s| !s.is_empty()) {
            let (name, value) =
                setting.split_once('=').ok_or_else(|| format!("`{setting}` is not NAME=VALUE"))?;
            let number = value
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite() && *n > 0.0 && *n < 1e9)
                .ok_or_else(|| format!("`{setting}`: a positive number is expected"))?;
            match name {
                "body" => self.body_wait = Duration::from_secs_f64(number),
                "idle" => self.idle = Duration::from_secs_f64(number),
                // Counts: whole numbers, below 1e9 (checked above).
                "connections" => self.connections = number as usize,
                "sessions" => self.sessions = number as usize,
                "budget" => self.budget = number as usize,
                _ => {
                    return Err(format!(
                        "`{name}` is none of body, idle, connections, sessions, budget"
                    ))
                }
            }
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_knob_sets_what_it_names_and_nothing_else() {
        let limits = Limits::default().with("body=0.5,sessions=3").unwrap();
        assert_eq!(limits.body_wait, Duration::from_millis(500));
        assert_eq!(limits.sessions, 3);
        assert_eq!(limits.idle, Limits::default().idle);
        assert!(Limits::default().with("idle=-1").is_err());
        assert!(Limits::default().with("speed=3").is_err());
        assert!(Limits::default().with("idle").is_err());
    }
}
