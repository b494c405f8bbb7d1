//! web_fetch (full profile): a web page as markdown a model reads
//! (docs/TOOLS.md, "web_fetch"). `{url, offset?, limit?, raw?}`, upstream
//! ikigai's schema with `raw`: the page is fetched through the safe client
//! (`crate::web`: only http and https, loopback and private addresses
//! refused unless `IKIGAI_TOOLS_FETCH_ALLOW` allows them, bounded in size,
//! time and redirects), read by its type (`answer`), HTML's main content
//! picked and pruned (`extract`) and converted (`convert`), the text paged
//! by line (`page`).

mod answer;
mod convert;
mod extract;
mod page;

/// HTML's text, for web_search's snippets: one HTML reader.
pub(super) use extract::text_of as html_text;

use crate::context::Context;
use crate::error::ToolError;
use crate::protocol::{Args, Outcome};
use crate::web;

/// What web_fetch asks a server for: markdown-friendly types first.
const ACCEPT: &str = "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,\
                      image/*;q=0.8,*/*;q=0.5";

/// A call's arguments, read and type-checked once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request<'a> {
    pub url: &'a str,
    /// The first line answered, 1-based (0 counts as 1).
    pub offset: Option<u64>,
    /// How many lines.
    pub limit: Option<u64>,
    /// The body as received, not converted (text types only).
    pub raw: bool,
}

impl<'a> Request<'a> {
    pub fn parse(args: &'a Args) -> Result<Request<'a>, ToolError> {
        Ok(Request {
            url: args.required_str("url")?,
            offset: args.optional_count("offset")?,
            limit: args.optional_count("limit")?,
            raw: args.optional_bool("raw")?.unwrap_or(false),
        })
    }
}

pub fn run(args: &Args, context: &Context) -> Outcome {
    let request = Request::parse(args)?;
    let policy = web::Policy::from_env()?;
    let fetched =
        web::get(&web::Request { url: request.url, headers: &[], accept: ACCEPT }, &policy)?;
    answer::of(fetched, &request, context)
}
