//! The sessions of `mcp --listen`: each has a `Server` of its own, with its
//! own `Calls` (its own jobs namespace) and its own roots. rmcp makes a
//! server per session (and per request of the stateless revision) and drops
//! it when the session ends (DELETE, the server's end); the [`Guard`] it
//! carries then stops that session's calls and ends its jobs, as the end of
//! stdin does on stdio.
//!
//! Sessions are bounded (docs/MCP.md, "Over HTTP"): at most
//! `Limits::sessions` at once, an `initialize` past it refused; and one
//! idle for `Limits::idle` (no request of it open, none for that long, no
//! call and no job of it running, its idle time counted from the last
//! request or the end of the last call or job) expires with its jobs. rmcp's own
//! keep-alive is off: it ended a session idle for 300 s even while a call
//! or a job of it ran, and took them with it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::SessionManager;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::mcp::call::Calls;
use crate::mcp::roots::Listening;
use crate::mcp::tell;

pub struct Sessions {
    live: Mutex<HashMap<u64, Calls>>,
    named: Mutex<Named>,
    next: AtomicU64,
    /// The most sessions at once.
    max: usize,
    /// The shutdowns under way, waited for at the server's end.
    ending: TaskTracker,
}

/// The sessions with an `Mcp-Session-Id`, and the `initialize`s under way.
#[derive(Default)]
struct Named {
    by_id: HashMap<String, Session>,
    /// `initialize`s being answered, each holding a place (a [`Slot`]).
    reserved: usize,
}

impl Named {
    fn count(&self) -> usize {
        self.by_id.len() + self.reserved
    }
}

/// A live session, once its `initialize` answered.
struct Session {
    /// Its server's number (`Sessions::live`).
    made: u64,
    /// Its requests being answered (a GET stream, a call's POST).
    open: usize,
    /// Of those, its standalone streams (GET /mcp): where a server request
    /// unrelated to a call can reach the client.
    streams: usize,
    /// When its last request ended (or its session began).
    last: Instant,
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

/// A place for a session being made (`initialize`), given back when
/// dropped: by then the session holds one of its own, or none was made.
pub struct Slot {
    sessions: Arc<Sessions>,
}

/// A request of a session being answered: the session is not idle.
pub struct Activity {
    sessions: Arc<Sessions>,
    id: String,
    /// Whether it is a standalone stream (GET /mcp).
    stream: bool,
}

impl Sessions {
    pub fn new(max: usize) -> Sessions {
        Sessions {
            live: Mutex::default(),
            named: Mutex::default(),
            next: AtomicU64::new(0),
            max,
            ending: TaskTracker::new(),
        }
    }

    /// The most sessions at once.
    pub fn max(&self) -> usize {
        self.max
    }

    fn named(&self) -> std::sync::MutexGuard<'_, Named> {
        self.named.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts `calls` as a live server's until the guard drops.
    pub fn register(self: &Arc<Self>, calls: Calls) -> Guard {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.live.lock().unwrap_or_else(PoisonError::into_inner).insert(id, calls);
        let _ = MADE.try_with(|made| made.set(Some(id)));
        Guard { id, sessions: Arc::clone(self) }
    }

    /// A place for a new session, if fewer than the most are live.
    pub fn reserve(self: &Arc<Self>) -> Option<Slot> {
        let mut named = self.named();
        if named.count() >= self.max {
            return None;
        }
        named.reserved += 1;
        Some(Slot { sessions: Arc::clone(self) })
    }

    /// Ties the server `made` to the session id its `initialize` answered.
    pub fn name(&self, made: u64, session_id: &str) {
        let session = Session { made, open: 0, streams: 0, last: Instant::now() };
        self.named().by_id.insert(session_id.to_owned(), session);
    }

    /// A request naming `session_id` (its standalone stream if `stream`):
    /// the session is active until the [`Activity`] drops. `None` for a
    /// session not (or no longer) live.
    pub fn begin(self: &Arc<Self>, session_id: &str, stream: bool) -> Option<Activity> {
        let mut named = self.named();
        let session = named.by_id.get_mut(session_id)?;
        session.open += 1;
        session.streams += usize::from(stream);
        Some(Activity { sessions: Arc::clone(self), id: session_id.to_owned(), stream })
    }

    /// The session `session_id` was deleted: its calls stop now. (rmcp
    /// drops a closed session's server only once its running handlers end,
    /// or 5 s later.)
    pub fn deleted(&self, session_id: &str) {
        let made = self.named().by_id.remove(session_id).map(|session| session.made);
        let calls = made
            .and_then(|id| self.live.lock().unwrap_or_else(PoisonError::into_inner).remove(&id));
        if let Some(calls) = calls {
            self.ending.spawn(async move { calls.shutdown_and_wait().await });
        }
    }

    /// Expires, every so often until `stop`, the sessions idle for `idle`:
    /// closed in rmcp (their next request is 404, as after DELETE), their
    /// calls stopped and their jobs ended.
    pub async fn expire_idle(
        self: Arc<Self>,
        idle: Duration,
        manager: Arc<LocalSessionManager>,
        stop: CancellationToken,
    ) {
        // Often enough that a session outlives its bound by a tenth of it.
        let every = (idle / 10).clamp(Duration::from_millis(50), Duration::from_secs(30));
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(every) => {}
            }
            for (session_id, calls) in self.idle_for(idle) {
                if calls.busy().await {
                    // Its idle time counts from the end of its last call
                    // or job: the client may come back to read the job.
                    self.touch(&session_id);
                    continue;
                }
                if !self.still_idle(&session_id, idle) {
                    continue;
                }
                self.deleted(&session_id);
                let _ = manager.close_session(&Arc::from(session_id.as_str())).await;
                let short: String = session_id.chars().take(8).collect();
                tell(format_args!(
                    "session {short} expired: no request for {} s, no call or job running",
                    idle.as_secs_f64()
                ));
            }
        }
    }

    /// The sessions with no request open for `idle`, with their calls.
    fn idle_for(&self, idle: Duration) -> Vec<(String, Calls)> {
        let idle_ones: Vec<(String, u64)> = self
            .named()
            .by_id
            .iter()
            .filter(|(_, s)| s.open == 0 && s.last.elapsed() >= idle)
            .map(|(id, s)| (id.clone(), s.made))
            .collect();
        let live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        idle_ones
            .into_iter()
            .filter_map(|(id, made)| Some((id, live.get(&made)?.clone())))
            .collect()
    }

    /// `session_id` was seen busy: its idle time starts again.
    fn touch(&self, session_id: &str) {
        if let Some(session) = self.named().by_id.get_mut(session_id) {
            session.last = Instant::now();
        }
    }

    /// Whether `session_id` is still idle (no request began while its
    /// calls and jobs were looked at).
    fn still_idle(&self, session_id: &str, idle: Duration) -> bool {
        let named = self.named();
        named.by_id.get(session_id).is_some_and(|s| s.open == 0 && s.last.elapsed() >= idle)
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

/// Whether the session of this server has its standalone stream open: if
/// not, a question for its roots goes on the stream of the call that needs
/// them (docs/MCP.md, "Over HTTP").
impl Listening for Guard {
    fn listening(&self) -> bool {
        self.sessions.named().by_id.values().any(|s| s.made == self.id && s.streams > 0)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.sessions.named().by_id.retain(|_, session| session.made != self.id);
        let calls =
            self.sessions.live.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.id);
        let (Some(calls), Ok(runtime)) = (calls, tokio::runtime::Handle::try_current()) else {
            return;
        };
        self.sessions.ending.spawn_on(async move { calls.shutdown_and_wait().await }, &runtime);
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut named = self.sessions.named();
        named.reserved = named.reserved.saturating_sub(1);
    }
}

impl Drop for Activity {
    fn drop(&mut self) {
        let mut named = self.sessions.named();
        if let Some(session) = named.by_id.get_mut(&self.id) {
            session.open = session.open.saturating_sub(1);
            session.streams = session.streams.saturating_sub(usize::from(self.stream));
            session.last = Instant::now();
        }
    }
}
