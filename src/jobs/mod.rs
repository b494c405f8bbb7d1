//! Jobs (docs/TOOLS.md, "Jobs"): bash commands that outlive the call that
//! started them, in the full profile. A job is run by a detached supervisor
//! (`supervisor`); what it prints and how it ended are kept
//! in a directory of its own, read by `job_output`, `job_list` and
//! `job_kill`, each a separate process.
//!
//! - `settings`: the variables (`IKIGAI_TOOLS_YIELD`, `IKIGAI_TOOLS_STATE_DIR`,
//!   `IKIGAI_TOOLS_JOB_TTL`, `IKIGAI_AGENT_ID`, `IKIGAI_TOOLS_SESSION`);
//! - `state`: the state directory (checked before each use, never trusted
//!   when someone else made it, refused where a confined command may
//!   write), the caller's namespace in it, job ids;
//! - `store`: one job's files: its output (head and latest tail, bounded
//!   however much it prints), its exit status, the reader's position;
//! - `supervisor`: the detached process that runs a job's command, drains
//!   its output into the job's files, enforces its timeout and time to
//!   live, and records its exit;
//! - `input`: what `job_write` sends a job, through its FIFO, and the
//!   supervisor's forwarder to the command's stdin;
//! - `control`: what the job tools do with a job: read, wait, stop (a
//!   signal only to a process proven the job's supervisor), list, expire.

pub mod control;
pub mod input;
pub mod settings;
pub mod state;
pub mod store;
pub mod supervisor;

pub use settings::Settings;
pub use state::Namespace;
