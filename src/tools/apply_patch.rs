//! apply_patch: OpenAI's patch format, parsed, located and applied.

pub(crate) mod hunks;
pub(crate) mod parse;
pub(crate) mod seek;
pub(crate) mod text;
