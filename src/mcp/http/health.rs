//! `GET /healthz` and `GET /readyz`: the probes of an orchestrator
//! (docs/MCP.md, "Health and readiness"). They carry no data, so they are
//! answered without the token, a session or the Origin check, and say
//! nothing but a status and one word: no path, no version. They come
//! through the same accept loop as every request, so they count against
//! the bound on connections.

use std::sync::Arc;

use hyper::header::{HeaderValue, ALLOW};
use hyper::{Method, StatusCode};

use super::super::call::CallSettings;
use super::super::spawner::Spawner;
use super::{plain, BoxBody};
use crate::jobs;

/// Alive: the process serves.
pub const HEALTHZ: &str = "/healthz";
/// Ready: a call can run now.
pub const READYZ: &str = "/readyz";

/// What readiness looks at: the spawner, and the job state directory in
/// the full profile (the seed profile has no jobs).
pub struct Readiness {
    spawner: Option<Arc<Spawner>>,
    jobs: Option<jobs::Settings>,
}

impl Readiness {
    pub fn new(settings: &CallSettings) -> Readiness {
        let jobs = settings.profile.is_full().then(|| jobs::Settings::from_env(settings.profile));
        Readiness { spawner: settings.spawner.clone(), jobs }
    }

    /// `None` when ready, else the one word of why not.
    async fn not_ready(&self) -> Option<&'static str> {
        if !self.spawner.as_ref().is_some_and(|spawner| spawner.is_up()) {
            return Some("spawner");
        }
        let settings = self.jobs.clone()?;
        // A file system that hangs must not hang the server's one thread.
        let usable = tokio::task::spawn_blocking(move || jobs::state::is_usable(&settings)).await;
        (!usable.unwrap_or(false)).then_some("state")
    }
}

/// The answer when `path` is one of the probes; `None` otherwise.
pub async fn answer(
    readiness: &Readiness,
    method: &Method,
    path: &str,
) -> Option<hyper::Response<BoxBody>> {
    if path != HEALTHZ && path != READYZ {
        return None;
    }
    if method != Method::GET && method != Method::HEAD {
        let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed\n".to_owned());
        response.headers_mut().insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return Some(response);
    }
    if path == HEALTHZ {
        return Some(plain(StatusCode::OK, "ok\n".to_owned()));
    }
    Some(match readiness.not_ready().await {
        None => plain(StatusCode::OK, "ready\n".to_owned()),
        Some(why) => plain(StatusCode::SERVICE_UNAVAILABLE, format!("{why}\n")),
    })
}
