//! The sessions of `mcp --listen`: each has a `Server` of its own, with its
//! own `Calls` (its own jobs namespace) and its own roots. rmcp makes a
//! server per session (and per request of the stateless revision) and drops
//! it when the session ends (DELETE, the server's end); the [`Guard`] it
//! carries then stops that session's calls and ends its jobs, as the end of
//! stdin does on stdio.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio_util::task::TaskTracker;

use crate::mcp::call::Calls;

#[derive(Default)]
pub struct Sessions {
    live: Mutex<HashMap<u64, Calls>>,
    next: AtomicU64,
    /// The shutdowns under way, waited for at the server's end.
    ending: TaskTracker,
}

/// Dropped with the last clone of a session's server: ends its calls.
pub struct Guard {
    id: u64,
    sessions: Arc<Sessions>,
}

impl Sessions {
    /// Counts `calls` as a live session's until the guard drops.
    pub fn register(self: &Arc<Self>, calls: Calls) -> Guard {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.live.lock().unwrap_or_else(PoisonError::into_inner).insert(id, calls);
        Guard { id, sessions: Arc::clone(self) }
    }

    /// Stops every live session's calls and waits until all of them, and
    /// every session already ending, are done.
    pub async fn end_all(&self) {
        let live: Vec<Calls> = self
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .map(|(_, c)| c)
            .collect();
        for calls in live {
            self.ending.spawn(async move { calls.shutdown_and_wait().await });
        }
        self.ending.close();
        self.ending.wait().await;
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let calls =
            self.sessions.live.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.id);
        let (Some(calls), Ok(runtime)) = (calls, tokio::runtime::Handle::try_current()) else {
            return;
        };
        self.sessions.ending.spawn_on(async move { calls.shutdown_and_wait().await }, &runtime);
    }
}
