//! The grammar of OpenAI's patch format, as OpenAI's apply_patch reads it,
//! and the leniency models rely on. No I/O: text in, a typed [`Patch`] or a
//! [`ParseError`] naming the line and what was expected there.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: PATH            then every line `+TEXT`
//! *** Delete File: PATH
//! *** Update File: PATH
//! *** Move to: PATH             optional
//! @@ TEXT                       or a bare `@@`; several may stack
//!  context / -old / +new        a bare empty line is an empty context line
//! *** End of File               optional: the chunk ends the file
//! *** End Patch
//! ```
//!
//! The leniency, as OpenAI's: whitespace around the whole patch and around
//! the `***` markers of the patch and its files; the whole patch wrapped in
//! a heredoc (`<<EOF`, `<<'EOF'` or `<<"EOF"` first, a line ending in `EOF`
//! last); blank lines between chunks; the first chunk of an Update without
//! `@@`. Ours on top: `*** Move to:` and `*** End of File` may be padded
//! too, and a `@@` followed by whitespace only is a bare `@@`.

use std::fmt;

const BEGIN_PATCH: &str = "*** Begin Patch";
const END_PATCH: &str = "*** End Patch";
const ADD_FILE: &str = "*** Add File:";
const DELETE_FILE: &str = "*** Delete File:";
const UPDATE_FILE: &str = "*** Update File:";
const MOVE_TO: &str = "*** Move to:";
const END_OF_FILE: &str = "*** End of File";
/// The first lines the heredoc wrapper may have (the last ends in `EOF`).
const HEREDOC_STARTS: [&str; 3] = ["<<EOF", "<<'EOF'", "<<\"EOF\""];

/// What a line inside a hunk may be, for the messages.
const HUNK_LINE: &str =
    "expected a line starting with ' ', '+' or '-' in the hunk, or `@@`, or `*** End of File`";
/// What may start a file's operation, for the messages.
const FILE_OP: &str =
    "expected `*** Add File: PATH`, `*** Delete File: PATH` or `*** Update File: PATH`";

/// A parsed patch: its file operations in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    pub ops: Vec<FileOp>,
}

/// One file's operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// Every line `+`; contents joined with '\n', with a final '\n'.
    Add {
        path: String,
        contents: String,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        chunks: Vec<Chunk>,
    },
}

/// One change of an Update: where (the `@@` lines and the old lines) and
/// what to put there.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Chunk {
    /// The `@@ …` context lines before the chunk (several may stack; none
    /// for a bare `@@` or a first chunk without one).
    pub context: Vec<String>,
    /// The 1-based patch line of each `context` entry.
    pub context_at: Vec<usize>,
    /// The ' ' and '-' lines, without the marker.
    pub old_lines: Vec<String>,
    /// The 1-based patch line of each of `old_lines`.
    pub old_at: Vec<usize>,
    /// The ' ' and '+' lines, without the marker.
    pub new_lines: Vec<String>,
    /// For each of `new_lines`, the index in `old_lines` of the same
    /// context line (a ' ' or empty line), `None` for a '+' line: a context
    /// line keeps the file's own text.
    pub unchanged: Vec<Option<usize>>,
    /// `*** End of File` closed the chunk: its old lines end the file.
    pub end_of_file: bool,
    /// 1-based line of the patch where the chunk starts (for messages).
    pub patch_line: usize,
}

/// Why a patch could not be read, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based, in the input as given (a heredoc wrapper's line counts).
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "patch line {}: {}", self.line, self.message)
    }
}

/// Reads a whole patch.
pub fn parse(input: &str) -> Result<Patch, ParseError> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return Err(error(1, "the patch is empty: expected `*** Begin Patch`, the files' operations, `*** End Patch`"));
    }
    // Line numbers count in the input as given: the blank lines `trim`
    // took off the front come first.
    let skipped = input.len() - input.trim_start().len();
    let first_number = 1 + input[..skipped].matches('\n').count();
    let all: Vec<Line> = trimmed
        .lines()
        .enumerate()
        .map(|(i, text)| Line { number: first_number + i, text })
        .collect();
    let body = within_markers(&all)?;
    let mut reader = Reader { lines: body, at: 0 };
    let mut ops = Vec::new();
    while let Some(line) = reader.peek() {
        ops.push(reader.file_op(line)?);
    }
    if ops.is_empty() {
        let line = all.last().map_or(1, |l| l.number);
        return Err(error(
            line,
            &format!("the patch changes no files: {FILE_OP} before `{END_PATCH}`"),
        ));
    }
    Ok(Patch { ops })
}

/// A line of the patch and its 1-based number in the input.
#[derive(Debug, Clone, Copy)]
struct Line<'a> {
    number: usize,
    text: &'a str,
}

fn error(line: usize, message: &str) -> ParseError {
    ParseError { line, message: message.to_string() }
}

/// A line quoted in a message, cut to a readable length (80 characters
/// and `…`).
pub(super) fn quoted(text: &str) -> String {
    const MOST: usize = 80;
    match text.char_indices().nth(MOST) {
        Some((cut, _)) => format!("`{}…`", &text[..cut]),
        None => format!("`{text}`"),
    }
}

/// The lines between `*** Begin Patch` and `*** End Patch`, the whole
/// patch or the heredoc's inside.
fn within_markers<'a, 'b>(all: &'b [Line<'a>]) -> Result<&'b [Line<'a>], ParseError> {
    let plain = between_markers(all);
    if plain.is_ok() {
        return plain;
    }
    if let [first, .., last] = all {
        if all.len() >= 4
            && HEREDOC_STARTS.contains(&first.text.trim())
            && last.text.trim_end().ends_with("EOF")
        {
            return between_markers(&all[1..all.len() - 1]);
        }
    }
    plain
}

fn between_markers<'a, 'b>(lines: &'b [Line<'a>]) -> Result<&'b [Line<'a>], ParseError> {
    let (Some(first), Some(last)) = (lines.first(), lines.last()) else {
        return Err(error(1, &format!("expected `{BEGIN_PATCH}`")));
    };
    if first.text.trim() != BEGIN_PATCH {
        return Err(error(
            first.number,
            &format!("expected `{BEGIN_PATCH}` as the first line, got {}", quoted(first.text)),
        ));
    }
    if lines.len() < 2 || last.text.trim() != END_PATCH {
        return Err(error(
            last.number,
            &format!("expected `{END_PATCH}` as the last line, got {}", quoted(last.text)),
        ));
    }
    Ok(&lines[1..lines.len() - 1])
}

/// The operations' lines, read front to back.
struct Reader<'a, 'b> {
    lines: &'b [Line<'a>],
    at: usize,
}

impl<'a> Reader<'a, '_> {
    fn peek(&self) -> Option<Line<'a>> {
        self.lines.get(self.at).copied()
    }

    fn file_op(&mut self, header: Line<'a>) -> Result<FileOp, ParseError> {
        self.at += 1;
        let text = header.text.trim();
        if let Some(rest) = text.strip_prefix(ADD_FILE) {
            let path = path_of(header, ADD_FILE, rest)?;
            return self.add(path);
        }
        if let Some(rest) = text.strip_prefix(DELETE_FILE) {
            let path = path_of(header, DELETE_FILE, rest)?;
            return Ok(FileOp::Delete { path });
        }
        if let Some(rest) = text.strip_prefix(UPDATE_FILE) {
            let path = path_of(header, UPDATE_FILE, rest)?;
            return self.update(header, path);
        }
        Err(error(header.number, &format!("{FILE_OP}, got {}", quoted(header.text))))
    }

    /// An Add File's `+` lines, up to the next `***` marker.
    fn add(&mut self, path: String) -> Result<FileOp, ParseError> {
        let mut contents = String::new();
        while let Some(line) = self.peek() {
            if let Some(text) = line.text.strip_prefix('+') {
                contents.push_str(text);
                contents.push('\n');
                self.at += 1;
            } else if line.text.trim_start().starts_with("***") {
                break;
            } else {
                return Err(error(
                    line.number,
                    &format!(
                        "every line of `{ADD_FILE} {path}` starts with '+' (an empty line is a lone '+'), got {}",
                        quoted(line.text)
                    ),
                ));
            }
        }
        Ok(FileOp::Add { path, contents })
    }

    /// An Update's optional Move to and its chunks, up to the next line
    /// starting with `***` that is not `*** End of File`.
    fn update(&mut self, header: Line<'a>, path: String) -> Result<FileOp, ParseError> {
        let mut move_to = None;
        if let Some(line) = self.peek() {
            if let Some(rest) = line.text.trim().strip_prefix(MOVE_TO) {
                move_to = Some(path_of(line, MOVE_TO, rest)?);
                self.at += 1;
            }
        }
        let mut chunks = Vec::new();
        while let Some(line) = self.peek() {
            if line.text.trim().is_empty() {
                self.at += 1;
                continue;
            }
            if line.text.starts_with("***") {
                break;
            }
            chunks.push(self.chunk(line, chunks.is_empty())?);
        }
        if chunks.is_empty() {
            return Err(error(
                header.number,
                &format!(
                    "`{UPDATE_FILE} {path}` has no changes: expected `@@` and lines starting with ' ', '+' or '-' after it"
                ),
            ));
        }
        Ok(FileOp::Update { path, move_to, chunks })
    }

    /// One chunk: its `@@` lines (optional for the first chunk), then its
    /// ' ', '-' and '+' lines, ended by `*** End of File`, by a line that
    /// is none of those, or by the end of the patch.
    fn chunk(&mut self, start: Line<'a>, first: bool) -> Result<Chunk, ParseError> {
        let mut chunk = Chunk { patch_line: start.number, ..Chunk::default() };
        let mut headed = false;
        while let Some(line) = self.peek() {
            let Some(rest) = line.text.strip_prefix("@@") else { break };
            if !(rest.is_empty() || rest.starts_with(' ')) {
                break;
            }
            headed = true;
            self.at += 1;
            let text = rest.strip_prefix(' ').unwrap_or(rest);
            if !text.trim().is_empty() {
                chunk.context.push(text.to_string());
                chunk.context_at.push(line.number);
            }
        }
        if !headed && !first {
            return Err(error(start.number, &format!("{HUNK_LINE}, got {}", quoted(start.text))));
        }
        let mut count = 0;
        while let Some(line) = self.peek() {
            if line.text.trim_end() == END_OF_FILE {
                if count == 0 {
                    return Err(error(
                        line.number,
                        &format!(
                            "expected the hunk's lines (' ', '+' or '-') before `{END_OF_FILE}`"
                        ),
                    ));
                }
                chunk.end_of_file = true;
                self.at += 1;
                break;
            }
            let (old, new) = match line.text.chars().next() {
                // A bare empty line is an empty context line: models drop
                // the space of an empty one.
                None => (Some(""), Some("")),
                Some(' ') => (Some(&line.text[1..]), Some(&line.text[1..])),
                Some('-') => (Some(&line.text[1..]), None),
                Some('+') => (None, Some(&line.text[1..])),
                Some(_) if count > 0 => break,
                Some(_) => {
                    return Err(error(
                        line.number,
                        &format!("{HUNK_LINE}, got {}", quoted(line.text)),
                    ));
                }
            };
            if let Some(old) = old {
                chunk.old_lines.push(old.to_string());
                chunk.old_at.push(line.number);
            }
            if let Some(new) = new {
                chunk.new_lines.push(new.to_string());
                let context = old.is_some().then(|| chunk.old_lines.len() - 1);
                chunk.unchanged.push(context);
            }
            count += 1;
            self.at += 1;
        }
        if count == 0 {
            let (number, got) = match self.peek() {
                Some(line) => (line.number, quoted(line.text)),
                None => (start.number, "the end of the patch".to_string()),
            };
            return Err(error(number, &format!("{HUNK_LINE}, got {got}")));
        }
        Ok(chunk)
    }
}

/// The path after a `***` marker (`rest`, what follows the colon).
fn path_of(line: Line<'_>, marker: &str, rest: &str) -> Result<String, ParseError> {
    let path = rest.trim();
    if path.is_empty() {
        return Err(error(line.number, &format!("`{marker}` needs a path after it")));
    }
    Ok(path.to_string())
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
