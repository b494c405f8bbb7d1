//! file_read: a file's contents, whole or a range of lines (CONTRACT §4).
//!
//! - Without `offset` and `limit`: the whole file, bytes as they are.
//! - With either: lines streamed from `offset` (1-based, 0 counts as 1),
//!   `limit` of them; newlines are counted in bulk with memchr and nothing
//!   past the last line asked for is read.
//! - The output limit (CONTRACT §5) bounds the answer, escaping counted; it
//!   keeps head and tail, and the marker between them says which `offset`
//!   continues after the head. Of a large regular
//!   file only the head and the tail are read: the middle is seeked past.
//! - With allowed roots (CONTRACT §8) the file is opened beneath them
//!   (`fs::open`); a path leading out is `PERMISSION_DENIED`.
//! - Only regular files are read: a directory is READ_FAILED, a FIFO, socket
//!   or device SIZE_FAILED, decided before anything could block; a file of
//!   unknown size is read non-blocking (`/proc/kmsg` is READ_FAILED at once).
//! - A file too large for memory with the limit off is OUT_OF_MEMORY
//!   (`Memory allocation failed`), never an abort.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Seek, SeekFrom};

use crate::error::ToolError;
use crate::fs::open::open_regular;
use crate::fs::read;
use crate::json::{size, Field};
use crate::limit::{self, Bounded};
use crate::protocol::{Args, Outcome};

/// Read size: large enough that counting newlines, not system calls,
/// dominates.
const BUFFER_SIZE: usize = 256 * 1024;

/// Seeking past the middle of a file is worth it only for a real saving; it
/// also keeps files whose size is a guess (sysfs says 4096) read in full.
const MIN_SKIP: u64 = 1024 * 1024;

pub fn run(args: &Args) -> Outcome {
    let path = args.required_path("file_path")?;
    let offset = non_negative(args, "offset")?;
    let limit = non_negative(args, "limit")?;
    let roots = super::allowed_roots()?;
    let mut file = open_regular(path, roots.as_ref())?;
    let mut out = Bounded::for_answer(limit::max_output());
    if offset.is_none() && limit.is_none() {
        match read_whole(&mut file, out.budget(), path)? {
            Whole::Fits(content) => return Ok(vec![("output", Field::Text(content))]),
            Whole::TooLarge(read) => {
                // Streamed through the limit from the start (which skips
                // the middle); holding what was read meanwhile would hold
                // the limit twice.
                if !read.is_empty() && file.rewind().is_err() {
                    out.push(&read);
                }
            }
        }
    }
    let mut reader = BufReader::with_capacity(BUFFER_SIZE, file);
    // The line number the output starts at, for the marker.
    let first_line = offset.unwrap_or(1).max(1);
    match (offset, limit) {
        (None, None) => copy_rest(&mut reader, &mut out, path)?,
        (_, Some(0)) => {}
        _ => {
            if skip_lines(&mut reader, first_line - 1, path)? {
                match limit {
                    None => copy_rest(&mut reader, &mut out, path)?,
                    Some(n) => copy_lines(&mut reader, n, &mut out, path)?,
                }
            }
        }
    }
    if out.out_of_memory() {
        return Err(ToolError::AllocationFailed);
    }
    let next_line =
        first_line.saturating_add(memchr::memchr_iter(b'\n', out.head()).count() as u64);
    let output = out.finish_parts_with(|omitted| {
        format!("[... {omitted} bytes omitted; continue with offset={next_line} ...]")
    });
    Ok(vec![("output", Field::Parts(output))])
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
/// the answer's bytes, escaping counted).
fn read_whole(file: &mut File, budget: Option<usize>, path: &str) -> Result<Whole, ToolError> {
    let max = budget.map_or(u64::MAX, |b| b as u64);
    let size = file.metadata().map_err(|_| ToolError::SizeFailed(path.to_owned()))?.len();
    if size > max {
        // Known to be past the limit: every byte takes at least one in the
        // answer.
        return Ok(Whole::TooLarge(Vec::new()));
    }
    let content = read::read_up_to(file, path, max.saturating_add(1))?;
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
fn fill<'a>(reader: &'a mut BufReader<File>, path: &str) -> Result<&'a [u8], ToolError> {
    loop {
        match reader.fill_buf() {
            Ok(_) => return Ok(reader.buffer()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ToolError::from_io(&e, path, ToolError::ReadFailed)),
        }
    }
}

/// Skips `count` lines; false when the file ends first.
fn skip_lines(reader: &mut BufReader<File>, count: u64, path: &str) -> Result<bool, ToolError> {
    each_line_run(reader, count, path, |_| true)
}

/// Copies the next `count` lines (the last one may lack its newline).
fn copy_lines(
    reader: &mut BufReader<File>,
    count: u64,
    out: &mut Bounded,
    path: &str,
) -> Result<(), ToolError> {
    each_line_run(reader, count, path, |bytes| {
        out.push(bytes);
        // Without memory for more, reading on is for nothing.
        !out.out_of_memory()
    })
    .map(drop)
}

/// Hands the next `count` lines to `sink`, a buffer's worth at a time, with
/// newlines counted in bulk, until it says stop; false when the file ends
/// first.
fn each_line_run(
    reader: &mut BufReader<File>,
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
/// middle can be seeked past once the output limit drops it anyway.
fn copy_rest(reader: &mut BufReader<File>, out: &mut Bounded, path: &str) -> Result<(), ToolError> {
    let mut skip_decided = false;
    loop {
        let buf = fill(reader, path)?;
        if buf.is_empty() {
            return Ok(());
        }
        out.push(buf);
        let len = buf.len();
        reader.consume(len);
        if out.out_of_memory() {
            return Ok(()); // reading on is for nothing
        }
        if !skip_decided && out.skippable(u64::MAX) > 0 {
            // The head is full: from here on only the last bytes count.
            skip_decided = true;
            skip_middle(reader, out, path)?;
        }
    }
}

/// Seeks past the part of the rest of the file that the output limit would
/// drop, counting it as omitted.
fn skip_middle(
    reader: &mut BufReader<File>,
    out: &mut Bounded,
    path: &str,
) -> Result<(), ToolError> {
    let seek_failed = |_| ToolError::SeekFailed(path.to_owned());
    let size =
        reader.get_ref().metadata().map_err(|_| ToolError::SizeFailed(path.to_owned()))?.len();
    let pos = reader.stream_position().map_err(seek_failed)?;
    let skip = out.skippable(size.saturating_sub(pos));
    if skip >= MIN_SKIP {
        reader.seek(SeekFrom::Start(pos + skip)).map_err(seek_failed)?;
        out.skip(skip);
    }
    Ok(())
}
