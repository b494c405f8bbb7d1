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
    /// Each live session's `Mcp-Session-Id`, once its `initialize` answered.
    named: Mutex<HashMap<String, u64>>,
    next: AtomicU64,
    /// The shutdowns under way, waited for at the server's end.
    ending: TaskTracker,
}

tokio::task_local! {
    /// The server made while one request was handled (`initialize`'s), so
    /// that the session id of its answer can be tied to it.
    static MADE: std::cell::Cell<Option<u64>>;
}

/// Runs `handling` (one request), then the id of the server it made, if any.
pub async fn noting_made<F: std::future::Future>(handling: F) -> (F::Output, Option<u64>) {
    MADE.scope(std::cell::Cell::new(None), async {
        let output = handling.await;
        (output, MADE.with(std::cell::Cell::get))
    })
    .await
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
        let _ = MADE.try_with(|made| made.set(Some(id)));
        Guard { id, sessions: Arc::clone(self) }
    }

    /// Ties the server `made` to the session id its `initialize` answered.
    pub fn name(&self, made: u64, session_id: &str) {
        self.named
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(session_id.to_owned(), made);
    }

    /// The session `session_id` was deleted: its calls stop now. (rmcp
    /// drops a closed session's server only once its running handlers end,
    /// or 5 s later.)
    pub fn deleted(&self, session_id: &str) {
        let made = self.named.lock().unwrap_or_else(PoisonError::into_inner).remove(session_id);
        let calls = made
            .and_then(|id| self.live.lock().unwrap_or_else(PoisonError::into_inner).remove(&id));
        if let Some(calls) = calls {
            self.ending.spawn(async move { calls.shutdown_and_wait().await });
        }
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
        let mut named = self.sessions.named.lock().unwrap_or_else(PoisonError::into_inner);
        named.retain(|_, made| *made != self.id);
        drop(named);
        let calls =
            self.sessions.live.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.id);
        let (Some(calls), Ok(runtime)) = (calls, tokio::runtime::Handle::try_current()) else {
            return;
        };
        self.sessions.ending.spawn_on(async move { calls.shutdown_and_wait().await }, &runtime);
    }
}
