//! The web tools' HTTP client (web_fetch, web_search): one GET, safe by
//! default (docs/CONFINEMENT.md, "The web tools' network"). Only http and https;
//! every address a name resolves to, and every redirect hop's, is checked
//! against the refused ranges before connecting, and the checked address is
//! the one connected to; the download, the decoded body, the time and the
//! redirects are bounded; TLS is verified against the system's roots.
//!
//! The tools build a [`Policy`] from the environment once
//! ([`Policy::from_env`]), then call [`get`]. An HTTP status of 400 or more
//! is not an error here: the answer carries it and the tool decides.

pub mod address;
pub mod charset;
pub mod client;
pub mod decode;
pub mod policy;
mod resolve;
mod target;
mod tls;

pub use client::{get, Fetched, Request};
pub use policy::{Policy, ALLOW_VAR, CA_VAR, MAX_BYTES_VAR, TIMEOUT_VAR};
