//! What a cut answer says (docs/SPEC.md, "Output limit"): the marker line
//! that stands where `Bounded` left bytes out, `[... N bytes omitted …]`,
//! naming the lines it left out and, per tool, what to send next to get
//! them. A model acts on every word of it: each says where the rest is, or
//! that it is kept nowhere and how to run again so that it is.

use std::fmt;

/// Where `Bounded` cut an output, for its marker: what was left out
/// between the head and the tail, which both stop at line boundaries
/// unless one line alone held all of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// Bytes of the output left out.
    pub omitted: u64,
    /// Whole lines the head shows (its newlines).
    pub head_lines: u64,
    /// The first and the last line left out, wholly or in part, counted
    /// from `first_line`; `None` when the middle was skipped unseen.
    pub lines: Option<(u64, u64)>,
    /// The head ends inside a line: no newline in it at all.
    pub head_inside: bool,
    /// The tail starts inside a line: no line starts in it.
    pub tail_inside: bool,
    /// The number of the output's first line (file_read's `offset`).
    pub first_line: u64,
    /// What its lines are called, one and many: a file's `line`s, a
    /// search's `output line`s (not to be read as lines of a file).
    pub noun: (&'static str, &'static str),
}

impl Cut {
    /// Nothing was cut: `omitted` bytes were lost (memory ran out), not
    /// placed.
    pub fn unplaced(omitted: u64) -> Cut {
        Cut {
            omitted,
            head_lines: 0,
            lines: None,
            head_inside: false,
            tail_inside: false,
            first_line: 1,
            noun: LINES,
        }
    }

    /// The same cut, its lines called `output line`s.
    pub fn of_output_lines(self) -> Cut {
        Cut { noun: OUTPUT_LINES, ..self }
    }

    /// The same cut, its lines counted from `first_line`.
    pub fn numbered_from(self, first_line: u64) -> Cut {
        Cut { first_line: first_line.max(1), ..self }
    }

    fn number(&self, relative: u64) -> u64 {
        self.first_line.saturating_add(relative.saturating_sub(1))
    }

    /// The first line not shown whole after the head: where to read on.
    /// A line the head holds nothing but the start of is longer than the
    /// limit lets through, and reading it again would stop there again:
    /// the next one.
    pub fn next_line(&self) -> u64 {
        let too_long = self.head_inside && self.head_lines == 0;
        self.number(self.head_lines + 1 + u64::from(too_long))
    }
}

/// `N bytes omitted (lines A-B)`, with which line a cut falls inside.
impl fmt::Display for Cut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bytes omitted", self.omitted)?;
        let Some((first, last)) = self.lines else {
            if self.head_inside || self.tail_inside {
                f.write_str(" (cut inside a line)")?;
            }
            return Ok(());
        };
        let (first, last) = (self.number(first), self.number(last));
        let (one, many) = self.noun;
        match (self.head_inside, self.tail_inside) {
            (true, true) if first == last => write!(f, " (cut inside {one} {first})"),
            (head, tail) => {
                if first == last {
                    write!(f, " ({one} {first}")?;
                } else {
                    write!(f, " ({many} {first}-{last}")?;
                }
                match (head, tail) {
                    (true, true) => write!(f, ", cut inside {many} {first} and {last})"),
                    (true, false) => write!(f, ", cut inside {one} {first})"),
                    (false, true) => write!(f, ", cut inside {one} {last})"),
                    (false, false) => f.write_str(")"),
                }
            }
        }
    }
}

/// What a file's lines are called, one and many.
pub const LINES: (&str, &str) = ("line", "lines");
/// What the lines of a search's output are called.
pub const OUTPUT_LINES: (&str, &str) = ("output line", "output lines");

/// The marker of a message cut to size (an error's, a host's capture of a
/// tool's answer), whose lines mean nothing to whoever reads it.
pub fn message(cut: &Cut) -> String {
    format!("[... {} bytes omitted ...]", cut.omitted)
}

/// The marker of a command's output, whose middle is kept nowhere (bash,
/// and a job's output once read): run it again so that it is, into a file
/// in the working directory, which a confined command may write and
/// file_read reads as given.
pub fn not_kept(cut: &Cut) -> String {
    format!(
        "[... {cut}, not kept: run the command again with > out.log 2>&1 and read out.log \
         (file_read offset/limit, or grep), or filter it (| tail -n 200, | grep PATTERN) ...]"
    )
}

/// file_read's marker: the line to read on from (docs/TOOLS.md, file_read).
pub fn read_on(cut: &Cut) -> String {
    format!("[... {cut}; continue with offset={} (limit=N for N lines) ...]", cut.next_line())
}

/// grep's marker in the full profile, where `next_offset` pages on: only
/// whole entries from the start are kept.
pub fn page_on(omitted: u64, next_offset: u64) -> String {
    format!("[... {omitted} bytes omitted; continue with offset={next_offset} ...]")
}

/// The marker of a search whose rest no parameter pages to (seed grep,
/// glob): a narrower one finds less.
pub fn narrow(cut: &Cut, how: &str) -> String {
    format!("[... {}; narrow the search: {how} ...]", cut.of_output_lines())
}

/// What narrows a grep, for [`narrow`].
pub const NARROW_GREP: &str = "a longer pattern, a path or a glob";

/// What narrows a glob, for [`narrow`].
pub const NARROW_GLOB: &str = "a longer pattern or a deeper path";
