//! web_search (full profile): a web search through the provider the user
//! configured (docs/TOOLS.md, "web_search"): Brave Search's API, as
//! upstream ikigai's tool, or a SearXNG instance of the user's own. Upstream's
//! parameters (`query`, `count` 1–20, `offset`, `allowed_domains`,
//! `blocked_domains`) and error codes (`AUTH_MISSING`, `AUTH_INVALID`,
//! `RATE_LIMIT`, `NETWORK_ERROR`, `API_ERROR`); upstream's answer
//! (`results` of `{title, url, snippet}`, `count`) with an `output` a
//! model reads, and `filtered` when a domain filter was given.
//!
//! - `settings`: the provider, its endpoint and key, from the environment
//!   and `credentials`, ikigai's file;
//! - `brave`, `searxng`: each provider's request and answer; `provider`
//!   what they share (results, statuses);
//! - `filter`: the domain filters; `text`: snippets as plain, bounded text.

mod brave;
mod credentials;
mod filter;
mod provider;
mod searxng;
pub(crate) mod settings;
mod text;
mod transport;

use serde_json::Value;

use crate::context::Context;
use crate::error::ToolError;
use crate::json::size::escaped_len;
use crate::json::Field;
use crate::protocol::{Answer, Args, Outcome};

use filter::Domains;
use provider::{Answered, Hit, Search};
use settings::{Provider, Settings};

/// Upstream ikigai's bounds and default of `count`.
const COUNT_DEFAULT: u32 = 10;
const COUNT_MAX: u32 = 20;
/// The query's bounds: upstream's `minLength`; Brave's API takes at most
/// 400 characters.
const QUERY_MIN: usize = 2;
const QUERY_MAX: usize = 400;
/// Brave's API's largest `offset`.
const BRAVE_OFFSET_MAX: u64 = 9;
/// What the answer holds beside the results (field names, `count`,
/// `filtered`, the lines that end `output`), with room.
const FIELDS_RESERVE: usize = 512;

/// A call's parameters (web_search.full.schema.json).
#[derive(Debug)]
pub struct Request {
    pub search: Search,
    pub domains: Domains,
}

impl Request {
    pub fn parse(args: &Args) -> Result<Self, ToolError> {
        let query = args.required_str("query")?.trim();
        let chars = query.chars().count();
        if chars < QUERY_MIN {
            return Err(ToolError::InvalidArg(format!(
                "parameter query must be at least {QUERY_MIN} characters"
            )));
        }
        if chars > QUERY_MAX {
            return Err(ToolError::InvalidArg(format!(
                "parameter query must be at most {QUERY_MAX} characters, got {chars}"
            )));
        }
        let count = match args.optional_int("count")? {
            None => COUNT_DEFAULT,
            Some(n) if (1..=i64::from(COUNT_MAX)).contains(&n) => n as u32,
            Some(n) => {
                return Err(ToolError::InvalidArg(format!(
                    "parameter count must be from 1 to {COUNT_MAX}, got {n}"
                )))
            }
        };
        let offset = args.optional_count("offset")?.unwrap_or(0);
        let domains =
            Domains::new(&strings(args, "allowed_domains")?, &strings(args, "blocked_domains")?);
        Ok(Request { search: Search { query: query.to_owned(), count, offset }, domains })
    }
}

/// An optional array of strings.
fn strings(args: &Args, name: &str) -> Result<Vec<String>, ToolError> {
    let items = args.optional_array(name)?.unwrap_or_default();
    items
        .iter()
        .map(|item| match item {
            Value::String(s) => Ok(s.clone()),
            _ => {
                Err(ToolError::InvalidArg(format!("parameter {name} must be an array of strings")))
            }
        })
        .collect()
}

pub fn run(args: &Args, context: &Context) -> Outcome {
    let Request { search, domains } = Request::parse(args)?;
    let settings = Settings::from_env()?;
    if matches!(settings.provider, Provider::Brave(_)) && search.offset > BRAVE_OFFSET_MAX {
        return Err(ToolError::InvalidArg(format!(
            "parameter offset must be at most {BRAVE_OFFSET_MAX} with Brave Search, got {}",
            search.offset
        )));
    }
    let answered = searched(&settings, &search)?;
    Ok(answer(&search, &domains, answered, context.answer_limit(FIELDS_RESERVE)))
}

/// The provider's results for `search`.
fn searched(settings: &Settings, search: &Search) -> Result<Answered, ToolError> {
    let headers = provider::headers(settings);
    let reply = transport::get(settings, &provider::url(settings, search), &headers)?;
    if reply.status != 200 {
        return Err(provider::refused(
            settings,
            reply.status,
            reply.retry_after.as_deref(),
            &reply.body,
        ));
    }
    provider::answered(settings, &reply.body)
}

/// The answer: the results the filters keep, at most `count`, as many as
/// `budget` holds; `output` lists them for a model, `results` for a host.
fn answer(search: &Search, domains: &Domains, answered: Answered, budget: Option<usize>) -> Answer {
    let total = answered.hits.len();
    let kept: Vec<Hit> = answered.hits.into_iter().filter(|h| domains.keeps(&h.url)).collect();
    let filtered = total - kept.len();
    let mut budget = budget.unwrap_or(usize::MAX);
    let mut output = String::new();
    let mut results = Vec::new();
    let mut more = 0usize;
    for hit in kept.into_iter().take(search.count as usize) {
        let line =
            format!("{}. {}\n   {}\n   {}\n", results.len() + 1, hit.title, hit.url, hit.snippet);
        let item = vec![
            ("title", Field::Text(hit.title.into_bytes())),
            ("url", Field::Text(hit.url.into_bytes())),
            ("snippet", Field::Text(hit.snippet.into_bytes())),
        ];
        let mut written = Vec::new();
        let _ = crate::json::write_object(&mut written, &item);
        let size = escaped_len(line.as_bytes()) + written.len() + 1;
        if size > budget || more > 0 {
            more += 1;
            continue;
        }
        budget -= size;
        output.push_str(&line);
        results.push(Field::Object(item));
    }
    if results.is_empty() {
        output.push_str(&format!("No results for \"{}\"", search.query));
        if !answered.silent.is_empty() {
            output.push_str(&format!(
                " (engines that did not answer: {})",
                answered.silent.join(", ")
            ));
        }
        output.push('\n');
    }
    if filtered > 0 {
        output.push_str(&format!(
            "({filtered} results left out by allowed_domains/blocked_domains)\n"
        ));
    }
    if more > 0 {
        output.push_str(&format!("({more} more results did not fit the output limit)\n"));
    }
    let count = results.len() as i64;
    let mut fields: Answer = vec![
        ("output", Field::Text(output.trim_end().as_bytes().to_vec())),
        ("results", Field::List(results)),
        ("count", Field::Int(count)),
    ];
    if domains.any() {
        fields.push(("filtered", Field::Int(filtered as i64)));
    }
    fields
}
