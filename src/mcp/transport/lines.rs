//! Lines of stdin, each at most [`LIMIT`] bytes: a longer one is reported
//! once and skipped to its newline without being kept (docs/MCP.md,
//! "Protocol").

use std::io;

use tokio::io::{AsyncBufReadExt, BufReader};

use super::stdio::{self, Input};

/// The longest line read: 64 MiB holds the largest `file_write` a model
/// sends (its content JSON-escaped) many times over, and bounds what one
/// line can make the server hold.
pub const LIMIT: usize = 64 << 20;

pub enum Next {
    /// A whole line, its `\n` included (absent on a last unterminated line).
    Line(Vec<u8>),
    /// A line over [`LIMIT`]: what was read of it is dropped, and the rest
    /// is skipped by the next reads.
    TooLong,
    /// stdin ended.
    End,
}

pub struct Lines {
    input: BufReader<Input>,
    /// The line read so far. Kept here, not in the future: rmcp drops a
    /// pending `receive` whenever it has something else to do, so `next`
    /// must lose nothing when dropped between two reads.
    line: Vec<u8>,
    /// Inside a line over the limit, until its newline.
    skipping: bool,
}

impl Lines {
    pub fn new() -> Lines {
        Lines {
            input: BufReader::with_capacity(64 << 10, stdio::input()),
            line: Vec::new(),
            skipping: false,
        }
    }

    /// The next line. Cancel-safe: `fill_buf` is, and what it returned is
    /// consumed only once kept in `self`.
    pub async fn next(&mut self) -> io::Result<Next> {
        loop {
            let Lines { input, line, skipping } = self;
            let buf = input.fill_buf().await?;
            if buf.is_empty() {
                if *skipping || line.is_empty() {
                    return Ok(Next::End);
                }
                return Ok(Next::Line(std::mem::take(line)));
            }
            let (end, whole) = match memchr::memchr(b'\n', buf) {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            if *skipping {
                *skipping = !whole;
                input.consume(end);
                continue;
            }
            if line.len() + end > LIMIT {
                *line = Vec::new();
                *skipping = !whole;
                input.consume(end);
                return Ok(Next::TooLong);
            }
            line.extend_from_slice(&buf[..end]);
            input.consume(end);
            if whole {
                return Ok(Next::Line(std::mem::take(line)));
            }
        }
    }
}
