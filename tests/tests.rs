//! The integration tests, as one test binary (one link step for the whole
//! suite): a module per tool and per concern. Each runs the real binary
//! through a symlink, as a host does.

// The whole crate is tests: its helpers (tests/common, and the functions a
// #[test] calls) may unwrap, expect, panic and print, as #[test] functions
// may (clippy.toml), though they are not #[test] themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stdout)]

#[macro_use]
mod common;
mod test_threads;

mod answers_by_hand;
mod answers_cuts;
mod answers_file_answers;
mod answers_jobs_procs;
mod answers_messages;
mod answers_sandbox_notes;
mod apply_patch;
mod apply_patch_crash;
mod apply_patch_differential;
mod bash;
mod confine;
mod confine_outer;
mod confine_roots;
mod confine_sandbox;
mod crash_safety;
mod dispatch;
mod docs;
mod doctor;
mod file_edit;
mod file_read;
mod file_write;
mod full_differential;
mod full_file_edit;
mod full_file_read;
mod full_file_write;
mod full_glob;
mod full_grep;
mod fuzz_args;
mod glob;
mod grep;
mod host_apply_patch;
mod host_call;
mod host_catalog;
mod host_check;
mod host_list;
mod install;
mod jobs;
mod jobs_talk;
mod load;
mod mcp;
mod mcp_calls;
mod mcp_cost;
mod mcp_http;
mod mcp_protocol;
mod mcp_roots;
mod mcp_size;
mod module_graph;
mod output_limit;
mod profile;
mod protocol;
mod web_fetch;
mod web_net;
mod web_search;
mod web_trials;
