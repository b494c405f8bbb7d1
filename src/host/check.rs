//! `check`: what a tool author needs to know before a host meets the tool.
//! Three runs of each tool, all tools at once:
//!
//! 1. `TOOL --schema` with stdin `/dev/null`, as discovery runs it: did it
//!    answer within [`SCHEMA_TIMEOUT`], and does the answer pass each rule
//!    of docs/SPEC.md's schema format (every rule is judged, not just the first that fails);
//! 2. `TOOL --schema` with a stdin that stays open and empty, as a host that
//!    lets the tool inherit its terminal does (ikigai does): a tool that
//!    answers (1) but not (2) reads stdin on `--schema`, and would hang
//!    such a host or steal its input;
//! 3. `TOOL` with `{}` on stdin, then EOF, as a call: did it answer with
//!    exit 0 and one JSON object (an error object is fine: `{}` usually
//!    lacks a required argument).
//!
//! A note (not a failure) says when the file name and the schema's name
//! differ: the schema's name is what a host registers, but hosts that name
//! tools after their files would offer the file's name.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use super::call::{self, Envelope};
use super::discover::{self, seconds, SCHEMA_TIMEOUT};
use super::registry::Origin;
use super::validate::{self, Verdict};
use crate::process::{self, Finished, Input, Status, TimedRun};
use crate::tools::normalize_name as normalize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Pass,
    Fail,
    Skip,
    Note,
}

impl Mark {
    fn label(self) -> &'static str {
        match self {
            Mark::Pass => "ok",
            Mark::Fail => "FAIL",
            Mark::Skip => "skip",
            Mark::Note => "note",
        }
    }
}

/// One line of a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub mark: Mark,
    pub text: String,
}

impl Item {
    fn new(mark: Mark, text: impl Into<String>) -> Item {
        Item { mark, text: text.into() }
    }
}

/// What `check` found about one tool (or one path that is not a tool).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The path as given, or `built-in NAME`.
    pub subject: String,
    pub items: Vec<Item>,
}

impl Report {
    pub fn passed(&self) -> bool {
        self.items.iter().all(|i| i.mark != Mark::Fail)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}: {}", self.subject, if self.passed() { "ok" } else { "FAILED" })?;
        for item in &self.items {
            writeln!(f, "  {:<4}  {}", item.mark.label(), item.text)?;
        }
        Ok(())
    }
}

/// What a path given to `check` stands for.
pub enum Target {
    Tool(Origin),
    /// Not a tool: the report says why.
    NotATool(Report),
}

/// A file is one tool; a directory is each of its executables (as
/// discovery picks them); anything else is reported.
pub fn targets(paths: &[PathBuf]) -> Vec<Target> {
    let mut targets = Vec::new();
    for path in paths {
        let not_a_tool = |why: String| {
            Target::NotATool(Report {
                subject: path.display().to_string(),
                items: vec![Item::new(Mark::Fail, why)],
            })
        };
        match std::fs::metadata(path) {
            Err(e) => targets.push(not_a_tool(format!("cannot be read: {e}"))),
            Ok(meta) if meta.is_dir() => match discover::executables(path) {
                Err(e) => targets.push(not_a_tool(format!("cannot be listed: {e}"))),
                Ok(files) if files.is_empty() => {
                    targets.push(not_a_tool("the directory holds no executable file".into()))
                }
                Ok(files) => {
                    targets.extend(files.into_iter().map(|f| Target::Tool(Origin::File(f))))
                }
            },
            Ok(_) if !discover::is_executable_file(path) => {
                targets.push(not_a_tool("not an executable regular file".into()))
            }
            Ok(_) => targets.push(Target::Tool(Origin::File(path.clone()))),
        }
    }
    targets
}

/// Checks every target at once; reports in the order of the targets.
pub fn check(targets: Vec<Target>, call_timeout: Duration) -> Vec<Report> {
    let mut jobs = Vec::new();
    for target in &targets {
        if let Target::Tool(origin) = target {
            jobs.extend(probes(origin, call_timeout));
        }
    }
    let mut runs = process::run_all(jobs).into_iter();
    targets
        .into_iter()
        .map(|target| match target {
            Target::NotATool(report) => report,
            Target::Tool(origin) => {
                let (Some(plain), Some(held), Some(called)) =
                    (runs.next(), runs.next(), runs.next())
                else {
                    let items = vec![Item::new(Mark::Fail, "was not run")];
                    return Report { subject: origin.display(), items };
                };
                judge(&origin, plain, held, called, call_timeout)
            }
        })
        .collect()
}

/// The three runs of a tool, in the order `judge` takes them.
fn probes(origin: &Origin, call_timeout: Duration) -> Vec<TimedRun> {
    // An origin that cannot name its program gives jobs that fail to start.
    let (program, lead) = origin.command().unwrap_or_default();
    vec![
        discover::schema_job(program.clone(), lead.clone(), Input::Null),
        discover::schema_job(program.clone(), lead.clone(), Input::HeldOpen),
        TimedRun {
            program,
            args: lead,
            input: Input::Bytes(b"{}".to_vec()),
            timeout: call_timeout,
            capture_limit: crate::context::max_output(crate::BIN_NAME),
        },
    ]
}

fn judge(
    origin: &Origin,
    plain: Finished,
    held: Finished,
    called: Finished,
    call_timeout: Duration,
) -> Report {
    let subject = origin.display();
    if let Status::NotStarted(e) = &plain.status {
        return Report {
            subject,
            items: vec![Item::new(Mark::Fail, format!("cannot be run: {e}"))],
        };
    }
    let mut items = Vec::new();
    let within = format!("answers --schema within {}", seconds(SCHEMA_TIMEOUT));
    items.push(match &plain.status {
        Status::Exited(0) => Item::new(Mark::Pass, within),
        Status::TimedOut => Item::new(Mark::Fail, format!("{within}: no answer")),
        other => Item::new(Mark::Fail, format!("{within}: {}", ended(other))),
    });
    let answered = |f: &Finished| matches!(f.status, Status::Exited(_) | Status::Signaled(_));
    let stdin = "does not wait for stdin on --schema";
    items.push(match (answered(&plain), answered(&held)) {
        (_, true) => Item::new(Mark::Pass, stdin),
        (true, false) => Item::new(
            Mark::Fail,
            format!(
                "{stdin}: answers only once stdin is closed; --schema must not read stdin \
                 (a host may leave it open)"
            ),
        ),
        (false, false) => Item::new(Mark::Skip, format!("{stdin}: no answer either way")),
    });

    // The rules judge whichever --schema run answered.
    let answer = [&plain, &held].into_iter().find(|f| answered(f));
    let mut schema_name = None;
    match answer {
        None => items.extend(
            validate::Rule::ALL
                .iter()
                .map(|rule| Item::new(Mark::Skip, format!("{rule}: no answer to --schema"))),
        ),
        Some(answer) => {
            for (rule, verdict) in validate::check_rules(&answer.stdout.bytes) {
                items.push(match verdict {
                    Verdict::Pass => Item::new(Mark::Pass, rule.to_string()),
                    Verdict::Fail(why) => Item::new(Mark::Fail, format!("{rule}: {why}")),
                    Verdict::Skipped(why) => Item::new(Mark::Skip, format!("{rule}: {why}")),
                });
            }
            schema_name =
                validate::validate(&answer.stdout.bytes).ok().map(|s| s.name().to_owned());
        }
    }

    let file_name =
        origin.path().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned());
    let call_name = schema_name.clone().or_else(|| file_name.clone()).unwrap_or_default();
    let what = "answers a call with {} with one JSON object";
    items.push(match call::wrap(&call_name, called, call_timeout) {
        Envelope::Success(result) => {
            Item::new(Mark::Pass, format!("{what}: {}", abbreviate(&result.to_string(), 100)))
        }
        Envelope::Failure { error, .. } => Item::new(Mark::Fail, format!("{what}: {error}")),
    });

    if let (Some(schema), Some(file)) = (&schema_name, &file_name) {
        let derived = normalize(file);
        if derived != *schema {
            items.push(Item::new(
                Mark::Note,
                format!(
                    "the schema names the tool {schema}, the file name suggests {derived}: \
                     hosts register {schema}, but hosts that name tools after their files \
                     would offer {derived}"
                ),
            ));
        }
    }
    Report { subject, items }
}

fn ended(status: &Status) -> String {
    match status {
        Status::Exited(code) => format!("exited with code {code}"),
        Status::Signaled(signal) => format!("killed by signal {signal}"),
        Status::TimedOut => "no answer".to_owned(),
        Status::NotStarted(e) => format!("cannot be run: {e}"),
    }
}

fn abbreviate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}
