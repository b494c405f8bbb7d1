//! file_read: a file's contents, whole or a range of lines (docs/TOOLS.md).
//!
//! - Without `offset` and `limit`: the whole file, bytes as they are.
//! - With either: lines streamed from `offset` (1-based, 0 counts as 1),
//!   `limit` of them; newlines are counted in bulk with memchr and nothing
//!   past the last line asked for is read.
//! - The output limit (docs/SPEC.md, "Output limit") bounds the answer, escaping
//!   counted; it
//!   keeps head and tail, and the marker between them says which `offset`
//!   continues after the head. Of a large regular
//!   file only the head and the tail are read: the middle is seeked past.
//! - With allowed roots (docs/CONFINEMENT.md) the file is opened beneath them
//!   (`fs::open`); a path leading out is `PERMISSION_DENIED`.
//! - Only regular files are read: a directory is READ_FAILED, a FIFO, socket
//!   or device SIZE_FAILED, decided before anything could block; a file of
//!   unknown size is read non-blocking (`/proc/kmsg` is READ_FAILED at once).
//! - A file too large for memory with the limit off is OUT_OF_MEMORY
//!   (`Memory allocation failed`), never an abort.
//! - A file that reports no size (`/proc`, `/sys`) is read at most
//!   `SIZELESS_MAX` bytes, and the answer says where it stopped: some never
//!   end in a host's time (`/proc/self/pagemap` is 256 GiB of page table
//!   entries; an offset scan of it took 163 s).
//!
//! The full profile (docs/TOOLS.md, "file_read", "Full profile") adds
//! `line_numbers` (`numbered`) and, in the answer, `total_lines` and the
//! `sha256` of the whole file (`version`): every byte is then read, once,
//! hashed as it goes by (nothing is seeked past, nothing is held twice),
//! whatever part is answered. An image, to a client that shows images, is
//! answered as one (`image`).

mod binary;
// web_fetch answers an image as file_read does.
pub(crate) mod image;
mod numbered;
mod version;

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};

use crate::context::Context;
use crate::error::ToolError;
use crate::fs::looked_up;
use crate::fs::open::open_regular;
use crate::fs::read::{self, SIZELESS_MAX};
use crate::json::{size, Field};
use crate::limit::{marker, Bounded};
use crate::protocol::{Args, Outcome};
use numbered::Numbering;
use version::Tally;

/// Read size: large enough that counting newlines, not system calls,
/// dominates.
const BUFFER_SIZE: usize = 256 * 1024;

/// Seeking past the middle of a file is worth it only for a real saving; it
/// also keeps files whose size is a guess (sysfs says 4096) read in full.
const MIN_SKIP: u64 = 1024 * 1024;

/// What the full profile's fields take in the answer at most:
/// `,"total_lines":18446744073709551615,"sha256":"` and 64 hex digits and
/// `"`; the output limit leaves the output that much less room.
const FULL_FIELDS: usize = 112;

/// A call's arguments, every parameter of the full schema read and
/// type-checked once, in the order of its messages; the seed's call is the
/// same with `line_numbers` false (the parameter-name rule refused it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request<'a> {
    pub file_path: &'a str,
    /// The first line answered, 1-based (0 counts as 1).
    pub offset: Option<u64>,
    /// How many lines.
    pub limit: Option<u64>,
    /// Full profile: each line prefixed with its number and a tab.
    pub line_numbers: bool,
}

impl<'a> Request<'a> {
    pub fn parse(args: &'a Args) -> Result<Request<'a>, ToolError> {
        Ok(Request {
            file_path: args.required_path("file_path")?,
            offset: non_negative(args, "offset")?,
            limit: non_negative(args, "limit")?,
            line_numbers: args.optional_bool("line_numbers")?.unwrap_or(false),
        })
    }
}

pub fn run(args: &Args, context: &Context) -> Outcome {
    let request = Request::parse(args)?;
    let path = request.file_path;
    let roots = context.roots()?;
    // A path not found or refused says what was looked up.
    read_file(request, context).map_err(|e| looked_up::explain(e, path, roots))
}

fn read_file(request: Request, context: &Context) -> Outcome {
    let Request { file_path: path, offset, limit, line_numbers: numbers } = request;
    let mut file = open_regular(path, context.roots()?)?;
    let size = file.metadata().map_err(|_| ToolError::SizeFailed(path.to_owned()))?.len();
    // What the full profile adds, decided here once: an image answered as
    // one, and the file's version (`tally`), for which every byte is read
    // and hashed. The seed shows neither (`Tool::full_fields`) and pays for
    // neither.
    let full = context.profile.is_full();
    if full && context.images {
        if let Some(answer) = image::answer(&mut file, size, path)? {
            return Ok(answer);
        }
    }
    // Told, not shown, whatever part was asked for (`binary`).
    if let Some(answer) = binary::answer(&file, size, path, full)? {
        return Ok(answer);
    }
    let mut tally = full.then(Tally::new);
    // What may still be read: all of a file that has a size, a bounded
    // amount of one that has none.
    let mut readable = (size == 0).then_some(SIZELESS_MAX);
    // What was read before the reader below starts, if the file could not
    // be rewound.
    let mut before: &[u8] = &[];
    let max_output = match tally {
        Some(_) => context.answer_limit(FULL_FIELDS),
        None => context.answer_limit(0),
    };
    let mut out = Bounded::for_answer(max_output);
    let whole;
    // Numbered lines are streamed: the numbers make them longer than the
    // file.
    if offset.is_none() && limit.is_none() && !numbers {
        whole = read_whole(&mut file, out.budget(), readable, path)?;
        match &whole {
            Whole::Fits(_) => {}
            Whole::TooLarge(read) => {
                // Streamed through the limit from the start (which skips
                // the middle); holding what was read meanwhile would hold
                // the limit twice.
                if !read.is_empty() && file.rewind().is_err() {
                    out.push(read);
                    readable = readable.map(|r| r.saturating_sub(read.len() as u64));
                    before = read;
                }
            }
        }
        if let Whole::Fits(content) = whole {
            if let Some(tally) = &mut tally {
                tally.add(&content);
            }
            let mut answer = vec![("output", Field::Text(content))];
            add_version(&mut answer, tally);
            return Ok(answer);
        }
    }
    let mut reader =
        BufReader::with_capacity(BUFFER_SIZE, Capped::new(file, readable, before, tally));
    // The line number the output starts at, for the marker.
    let first_line = offset.unwrap_or(1).max(1);
    let mut lines = Lines { out: &mut out, numbers: numbers.then(|| Numbering::new(first_line)) };
    match (offset, limit) {
        (None, None) if !numbers => copy_rest(&mut reader, &mut lines, path)?,
        (_, Some(0)) => {}
        _ => {
            if skip_lines(&mut reader, first_line - 1, path)? {
                match limit {
                    None => copy_rest(&mut reader, &mut lines, path)?,
                    Some(n) => copy_lines(&mut reader, n, &mut lines, path)?,
                }
            }
        }
    }
    if out.out_of_memory() {
        return Err(ToolError::AllocationFailed);
    }
    // Where a file that reports no size stopped, if the answer reached
    // that far (what the full profile reads on for its fields below is
    // not the answer's).
    let stopped = reader.get_ref().stopped();
    if reader.get_ref().tally.is_some() {
        read_rest(&mut reader, path)?;
    }
    if let Some(stop) = stopped {
        // On a line of its own after what was read, as the omission marker
        // stands: the tail keeps it whatever the limit cuts.
        if out.last_byte().is_some_and(|b| b != b'\n') {
            out.push(b"\n");
        }
        out.push(stop.as_bytes());
    }
    // The head ends on a line: the marker names the first line not shown.
    let output = out.finish_parts_with(|cut| marker::read_on(&cut.numbered_from(first_line)));
    let mut answer = vec![("output", Field::Parts(output))];
    let capped = reader.into_inner();
    // A file that went on past what may be read of it was not read whole:
    // its lines and its version are not known.
    add_version(&mut answer, capped.tally.filter(|_| !capped.more));
    Ok(answer)
}

/// The full profile's fields: the whole file's lines and sha256.
fn add_version(answer: &mut Vec<(&'static str, Field)>, tally: Option<Tally>) {
    if let Some(tally) = tally {
        let (lines, sha256) = tally.finish();
        answer.push(("total_lines", Field::Int(i64::try_from(lines).unwrap_or(i64::MAX))));
        answer.push(("sha256", Field::Text(sha256.into_bytes())));
    }
}

/// Where the lines read go: the output, numbered when `line_numbers` asks.
struct Lines<'a> {
    out: &'a mut Bounded,
    numbers: Option<Numbering>,
}

impl Lines<'_> {
    fn push(&mut self, bytes: &[u8]) {
        match &mut self.numbers {
            None => self.out.push(bytes),
            Some(numbers) => {
                let out = &mut *self.out;
                numbers.push(bytes, |piece| out.push(piece));
            }
        }
    }
}

/// The file being read, and how much of it may still be: a file that
/// reports no size is read at most `SIZELESS_MAX` bytes, then ends as at
/// end of file; whether it had more is found by one more read.
struct Capped {
    file: File,
    /// `None`: no bound (the file has a size).
    left: Option<u64>,
    /// Bytes read through this reader, and the newlines among them
    /// (counted only for a bounded file).
    read: u64,
    newlines: u64,
    /// The file went on past the bound.
    more: bool,
    /// The full profile's tally of every byte read.
    tally: Option<Tally>,
}

impl Capped {
    /// `file`, of which `before` was read already.
    fn new(file: File, left: Option<u64>, before: &[u8], mut tally: Option<Tally>) -> Capped {
        let read = before.len() as u64;
        let newlines = memchr::memchr_iter(b'\n', before).count() as u64;
        if let Some(tally) = &mut tally {
            tally.add(before);
        }
        Capped { file, left, read, newlines, more: false, tally }
    }

    /// `read` and the tally of what it read.
    fn tallied(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read(buf)?;
        if let Some(tally) = &mut self.tally {
            tally.add(&buf[..n]);
        }
        Ok(n)
    }

    /// The line that says where a bounded read stopped, if it did.
    fn stopped(&self) -> Option<String> {
        let mib = SIZELESS_MAX / (1024 * 1024);
        self.more.then(|| {
            format!(
                "[... stopped after {} bytes, at line {}: the file reports no size (as /proc and \
                 /sys files do) and file_read reads at most {mib} MiB of such a file; bash can \
                 read on from there (tail -c +{} FILE) ...]",
                self.read,
                self.newlines + 1,
                self.read + 1
            )
        })
    }
}

impl Read for Capped {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(left) = self.left else {
            return self.tallied(buf);
        };
        if left == 0 {
            // Past the bound: does the file go on? (What a read at the end
            // of a file finds, nothing, needs no saying.)
            if !buf.is_empty() && !self.more {
                self.more = !matches!(self.file.read(buf), Ok(0));
            }
            return Ok(0);
        }
        let room = usize::try_from(left).map_or(buf.len(), |l| l.min(buf.len()));
        let n = self.tallied(&mut buf[..room])?;
        self.left = Some(left - n as u64);
        self.read += n as u64;
        self.newlines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
        Ok(n)
    }
}

impl Seek for Capped {
    /// Only a file with a size is seeked (past the middle the limit drops).
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.file.seek(pos)
    }
}

/// What reading a whole file within the output limit gave.
enum Whole {
    /// The whole file, which fits in the answer: the answer as it stands.
    Fits(Vec<u8>),
    /// The file is too large for the answer; what was read of it.
    TooLarge(Vec<u8>),
}

/// Reads the whole file straight into the buffer that becomes the answer
/// (no copy; sized by the file's size) if it fits within `budget` (in
/// the answer's bytes, escaping counted) and within `readable`, what may be
/// read of a file that reports no size.
fn read_whole(
    file: &mut File,
    budget: Option<usize>,
    readable: Option<u64>,
    path: &str,
) -> Result<Whole, ToolError> {
    let max = budget.map_or(u64::MAX, |b| b as u64);
    let size = file.metadata().map_err(|_| ToolError::SizeFailed(path.to_owned()))?.len();
    if size > max {
        // Known to be past the limit: every byte takes at least one in the
        // answer.
        return Ok(Whole::TooLarge(Vec::new()));
    }
    let most = max.min(readable.unwrap_or(u64::MAX));
    let content = read::read_up_to(file, path, most.saturating_add(1))?;
    if content.len() as u64 > most {
        return Ok(Whole::TooLarge(content));
    }
    let fits = match budget {
        None => true,
        // Six bytes a byte at most (`\u0000`): most files need no count.
        Some(budget) => content.len() <= budget / 6 || size::escaped_len(&content) <= budget,
    };
    Ok(if fits { Whole::Fits(content) } else { Whole::TooLarge(content) })
}

/// An optional integer parameter that must not be negative.
fn non_negative(args: &Args, name: &str) -> Result<Option<u64>, ToolError> {
    match args.optional_int(name)? {
        None => Ok(None),
        Some(n) => u64::try_from(n).map(Some).map_err(|_| {
            ToolError::InvalidArg(format!("parameter {name} must be a non-negative integer"))
        }),
    }
}

/// The buffered bytes, refilled when empty; empty at end of file.
fn fill<'a>(reader: &'a mut BufReader<Capped>, path: &str) -> Result<&'a [u8], ToolError> {
    loop {
        match reader.fill_buf() {
            Ok(_) => return Ok(reader.buffer()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ToolError::from_io(&e, path, ToolError::ReadFailed)),
        }
    }
}

/// Skips `count` lines; false when the file ends first.
fn skip_lines(reader: &mut BufReader<Capped>, count: u64, path: &str) -> Result<bool, ToolError> {
    each_line_run(reader, count, path, |_| true)
}

/// Copies the next `count` lines (the last one may lack its newline).
fn copy_lines(
    reader: &mut BufReader<Capped>,
    count: u64,
    out: &mut Lines,
    path: &str,
) -> Result<(), ToolError> {
    each_line_run(reader, count, path, |bytes| {
        out.push(bytes);
        // Without memory for more, reading on is for nothing.
        !out.out.out_of_memory()
    })
    .map(drop)
}

/// Hands the next `count` lines to `sink`, a buffer's worth at a time, with
/// newlines counted in bulk, until it says stop; false when the file ends
/// first.
fn each_line_run(
    reader: &mut BufReader<Capped>,
    mut count: u64,
    path: &str,
    mut sink: impl FnMut(&[u8]) -> bool,
) -> Result<bool, ToolError> {
    while count > 0 {
        let buf = fill(reader, path)?;
        if buf.is_empty() {
            return Ok(false);
        }
        let newlines = memchr::memchr_iter(b'\n', buf).count() as u64;
        if newlines < count {
            if !sink(buf) {
                return Ok(true);
            }
            let len = buf.len();
            reader.consume(len);
            count -= newlines;
            continue;
        }
        // The last line ends in this buffer (`count` <= `newlines`, so
        // `count - 1` fits in usize).
        let end =
            memchr::memchr_iter(b'\n', buf).nth((count - 1) as usize).map_or(buf.len(), |i| i + 1);
        let _ = sink(&buf[..end]);
        reader.consume(end);
        count = 0;
    }
    Ok(true)
}

/// Copies everything up to end of file. The size is never trusted for
/// where the file ends (`/proc` files say 0), only for how much of the
/// middle can be seeked past once the output limit drops it anyway (not
/// in the full profile, which hashes every byte).
fn copy_rest(
    reader: &mut BufReader<Capped>,
    lines: &mut Lines,
    path: &str,
) -> Result<(), ToolError> {
    let mut skip_decided = false;
    loop {
        let buf = fill(reader, path)?;
        if buf.is_empty() {
            return Ok(());
        }
        lines.push(buf);
        let len = buf.len();
        reader.consume(len);
        let out = &mut *lines.out;
        if out.out_of_memory() {
            return Ok(()); // reading on is for nothing
        }
        if !skip_decided && out.skippable(u64::MAX) > 0 {
            // The head is full: from here on only the last bytes count.
            skip_decided = true;
            if reader.get_ref().tally.is_none() {
                skip_middle(reader, out, path)?;
            }
        }
    }
}

/// Reads the rest of the file for the tally alone (full profile), up to
/// its end or what may be read of it.
fn read_rest(reader: &mut BufReader<Capped>, path: &str) -> Result<(), ToolError> {
    loop {
        let len = fill(reader, path)?.len();
        if len == 0 {
            return Ok(());
        }
        reader.consume(len);
    }
}

/// Seeks past the part of the rest of the file that the output limit would
/// drop, counting it as omitted.
fn skip_middle(
    reader: &mut BufReader<Capped>,
    out: &mut Bounded,
    path: &str,
) -> Result<(), ToolError> {
    let seek_failed = |_| ToolError::SeekFailed(path.to_owned());
    let size =
        reader.get_ref().file.metadata().map_err(|_| ToolError::SizeFailed(path.to_owned()))?.len();
    let pos = reader.stream_position().map_err(seek_failed)?;
    let skip = out.skippable(size.saturating_sub(pos));
    if skip >= MIN_SKIP {
        reader.seek(SeekFrom::Start(pos + skip)).map_err(seek_failed)?;
        out.skip(skip);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bounded reader of a file of `len` bytes that may read `left`.
    fn capped(len: usize, left: u64) -> (Vec<u8>, Capped) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "ab\n".repeat(len / 3)).unwrap();
        let mut reader = Capped::new(File::open(&path).unwrap(), Some(left), b"x\n", None);
        let mut read = Vec::new();
        reader.read_to_end(&mut read).unwrap();
        (read, reader)
    }

    #[test]
    fn a_bounded_read_stops_at_the_bound_and_says_so_only_if_there_was_more() {
        let (read, reader) = capped(30, 10);
        assert_eq!(read, b"ab\nab\nab\na");
        // Two bytes and a newline were read before it started.
        assert_eq!((reader.read, reader.newlines, reader.more), (12, 4, true));
        let told = reader.stopped().unwrap();
        assert!(told.starts_with("[... stopped after 12 bytes, at line 5: "), "{told}");
        assert!(told.ends_with("(tail -c +13 FILE) ...]"), "{told}");
        let (read, reader) = capped(30, 30);
        assert_eq!(read.len(), 30);
        assert_eq!(reader.stopped(), None, "the file ended at the bound");
    }
}
