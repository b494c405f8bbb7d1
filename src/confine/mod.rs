//! Confinement (docs/CONFINEMENT.md): allowed roots the tools cannot leave.
//!
//! - `roots`: the allowed roots (`IKIGAI_TOOLS_ROOTS`, `mcp --root`), each
//!   held as a descriptor opened once at start, or passed as one by the MCP
//!   server;
//! - `beneath`: opening what the model names beneath a root with
//!   `openat2(RESOLVE_BENEATH)`, for reading, writing and walking;
//! - `sandbox`: the sandbox a confined command runs in: the parts below,
//!   prepared in the parent and applied in the child in order, and the
//!   retry without namespaces where the kernel gives none;
//! - `landlock`: the Landlock ruleset bash runs under (writes only beneath
//!   the roots, the private temporary directory and a few devices; no TCP;
//!   abstract sockets and signals scoped);
//! - `namespace`: the namespaces bash runs in: everything but the roots and
//!   its private temporary directory read-only, and IPC of its own;
//! - `seccomp`: the filter that refuses new user namespaces and POSIX
//!   message queues, leaves confined commands Unix sockets only when the
//!   network is shut, and refuses System V IPC where no namespace was made;
//! - `temp`: the sandbox's private temporary directory;
//! - `reach`: whether a directory lies where a confined command may write
//!   (beneath a root or the private temporary directory), by identity;
//! - `probe`: what the kernel offers, and the refusals when it lacks it;
//! - `report`: each layer available or not and why, and what a confined
//!   call will therefore do (`ikigai-tools doctor`, the MCP server's start);
//! - `outer`: `IKIGAI_TOOLS_CONFINE=outer`, every layer there is instead of
//!   a refusal where one is missing;
//! - `source`: where the roots were given (`IKIGAI_TOOLS_ROOTS`, the MCP
//!   server's `--root`, the client's roots), which a refusal names;
//! - `error`: why something was refused, and its tool error.
//!
//! Without roots nothing here is used and nothing changes.

pub mod beneath;
pub mod error;
pub mod landlock;
pub mod namespace;
pub mod outer;
pub mod probe;
pub mod reach;
pub mod report;
pub mod roots;
pub mod sandbox;
pub mod seccomp;
pub mod source;
pub mod temp;

pub use beneath::{open_entry, openat_beneath};
pub use error::ConfineError;
pub use landlock::NETWORK_VAR;
pub use outer::CONFINE_VAR;
pub use roots::{Roots, ROOTS_VAR, ROOT_FDS_VAR};
pub use sandbox::Sandbox;
pub use source::{Source, ROOTS_FROM_VAR};
