//! The host side: what ikigai (docs/SPEC.md's host side) does with tools, as a library a
//! Rust host can use directly (the `catalog`, `check`, `call` and `list`
//! subcommands are its front end, in `src/cli/host.rs`). It prints
//! nothing: it returns values and typed errors.
//!
//! - [`discover`](mod@discover): scan directories the way ikigai does (every executable
//!   regular file, hidden files skipped, all `--schema` calls in parallel,
//!   each killed after [`SCHEMA_TIMEOUT`]), validate each answer against the
//!   six rules of docs/SPEC.md's schema format ([`validate()`]) and build a [`Registry`]; a later
//!   source overrides an earlier one by schema name.
//! - [`translate`](mod@translate): the registry as the `tools` array of a provider's
//!   request ([`Provider`]: ikigai, openai, anthropic, google); with
//!   [`translate_for`] and a GPT-5 model, apply_patch as the freeform
//!   custom tool of [`freeform`](mod@freeform).
//! - [`call()`]: run one tool as a host does (arguments on stdin, stdout and
//!   stderr captured, a time limit after which the tool's whole process group
//!   is killed) and wrap the outcome in the envelope of docs/SPEC.md, "Calls and the envelope"
//!   ([`Envelope`]).
//! - [`check()`]: everything a tool author wants to know about a tool before
//!   a host meets it.
//!
//! ```no_run
//! use ikigai_tools::host::{self, Provider, Source};
//! use std::time::Duration;
//!
//! let found = host::discover(&[Source::BuiltIn, Source::Dir("tools".into())]);
//! for rejected in &found.rejected {
//!     eprintln!("{rejected}");
//! }
//! let tools = host::translate(&found.registry, Provider::Anthropic);
//! println!("{tools}");
//! if let Some(tool) = found.registry.find("grep") {
//!     let envelope = host::call(tool, br#"{"pattern":"TODO"}"#, Duration::from_secs(30));
//!     println!("{}", envelope.to_json());
//! }
//! ```

pub mod call;
pub mod check;
pub mod discover;
pub mod freeform;
pub mod registry;
pub mod translate;
pub mod validate;

pub use call::{call, Envelope, FailureCode, CALL_TIMEOUT};
pub use check::{check, Report};
pub use discover::{
    default_sources, discover, Discovery, Rejected, Rejection, Source, SCHEMA_TIMEOUT,
};
pub use registry::{Origin, RegisteredTool, Registry};
pub use translate::{translate, translate_for, Provider};
pub use validate::{validate, Rule, Schema, Violation};
