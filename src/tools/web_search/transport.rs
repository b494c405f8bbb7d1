//! The one GET of a search, through the web tools' client (`crate::web`).

use crate::error::ToolError;

use super::settings::Settings;

/// What the provider answered.
pub struct Reply {
    pub status: u16,
    pub retry_after: Option<String>,
    pub body: Vec<u8>,
}

pub fn get(
    _settings: &Settings,
    _url: &str,
    _headers: &[(&'static str, String)],
) -> Result<Reply, ToolError> {
    Err(ToolError::ApiError("the web client is not merged yet".into()))
}
