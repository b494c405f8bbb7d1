//! The grammar of OpenAI's patch format and the leniency models rely on
//! (docs/TOOLS.md, "apply_patch"): `*** Begin Patch` … `*** End Patch`
//! holding `*** Add File:`, `*** Delete File:` and `*** Update File:`
//! operations. No I/O: text in, a typed [`Patch`] or a [`ParseError`]
//! naming the line out.
#![allow(dead_code)] // patch-tool is not using these yet

use std::fmt;

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The `@@ …` context lines before the chunk (several may stack;
    /// empty for a bare `@@` or none).
    pub context: Vec<String>,
    /// The 1-based patch line of each `context` entry.
    pub context_at: Vec<usize>,
    /// The ' ' and '-' lines, without the marker.
    pub old_lines: Vec<String>,
    /// The 1-based patch line of each of `old_lines`.
    pub old_at: Vec<usize>,
    /// The ' ' and '+' lines, without the marker.
    pub new_lines: Vec<String>,
    /// `*** End of File` closed the chunk: its old lines end the file.
    pub end_of_file: bool,
    /// 1-based line of the patch where the chunk starts (for messages).
    pub patch_line: usize,
}

/// Why a patch could not be read, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based, in the input as given (before a heredoc wrapper is taken off).
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
    let _ = input;
    Err(ParseError { line: 1, message: "not implemented yet".to_string() })
}
