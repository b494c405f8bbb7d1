//! job_list (full profile): the jobs of the caller's agent or session
//! (docs/TOOLS.md, "Jobs"): id, command, state, age in seconds, bytes
//! printed and not yet read (and how an ended one ended, as job_output
//! says it: `exit_code`, `timed_out`), as many as the output limit holds;
//! the number left out in `more`.

use crate::context::Context;
use crate::error::ToolError;
use crate::jobs::control::{self, Listed};
use crate::jobs::store::{self, Ended};
use crate::json::Field;
use crate::protocol::{Answer, Args, Outcome};

/// The most of a command `job_list` shows, in bytes.
const COMMAND_SHOWN: usize = 200;

/// What the answer holds beside the rows (`{"jobs":[],"more":N}`), with room.
const FIELDS_RESERVE: usize = 64;

/// A call's parameters (job_list.full.schema.json: none).
#[derive(Debug)]
pub struct Request;

impl Request {
    pub fn parse(_args: &Args) -> Result<Self, ToolError> {
        Ok(Request)
    }
}

pub fn run(args: &Args, context: &Context) -> Outcome {
    let Request = Request::parse(args)?;
    let jobs = control::list(&context.jobs, context.roots()?)?;
    let budget = context.answer_limit(FIELDS_RESERVE).unwrap_or(usize::MAX);
    let mut rows = Vec::new();
    let mut size = 0;
    let mut more = 0i64;
    for job in jobs {
        let row = row(job);
        // What the row takes in the answer, with its comma.
        let mut written = Vec::new();
        let _ = crate::json::write_object(&mut written, &row);
        if size + written.len() + 1 > budget {
            more += 1;
            continue;
        }
        size += written.len() + 1;
        rows.push(Field::Object(row));
    }
    let mut fields: Answer = vec![("jobs", Field::List(rows))];
    if more > 0 {
        fields.push(("more", Field::Int(more)));
    }
    Ok(fields)
}

/// One job's row.
fn row(job: Listed) -> Vec<(&'static str, Field)> {
    let mut command = job.command;
    if command.len() > COMMAND_SHOWN {
        command = format!("{}…", store::cut_at_char(&command, COMMAND_SHOWN));
    }
    let mut row = vec![
        ("job_id", Field::Text(job.id.into_bytes())),
        ("command", Field::Text(command.into_bytes())),
        ("state", Field::Text(state_name(job.ended).as_bytes().to_vec())),
        ("age", Field::Int(int(job.age))),
        ("bytes", Field::Int(int(job.bytes))),
        // An ended job stays listed until job_output has read it to its
        // end: what is left to read says why, and that job_output is next.
        ("unread", Field::Int(int(job.unread))),
    ];
    if let Some(e) = job.ended {
        row.push(("exit_code", Field::Int(e.exit_code)));
        if e.timed_out {
            row.push(("timed_out", Field::Bool(true)));
        }
    }
    row
}

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn state_name(ended: Option<Ended>) -> &'static str {
    match ended {
        None => "running",
        Some(e) if e.timed_out => "timed_out",
        Some(e) if e.killed => "killed",
        Some(_) => "exited",
    }
}
