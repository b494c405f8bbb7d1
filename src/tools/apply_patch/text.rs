//! A file's bytes as the text hunks work on ('\n' line ends, no BOM), and
//! back, keeping its CRLF line ends and its BOM.
#![allow(dead_code)] // patch-tool is not using these yet

use std::fmt;

/// A file's text and how it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// With '\n' line ends and without the BOM.
    pub text: String,
    /// How to write it back.
    pub form: Form,
}

/// How a file writes its text: what [`encode`] restores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Form {
    /// All or most line ends were `\r\n`.
    pub crlf: bool,
    /// It began with a UTF-8 BOM.
    pub bom: bool,
}

/// The file is not UTF-8 text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotText {
    /// 0-based byte offset of the first invalid byte.
    pub offset: usize,
}

impl fmt::Display for NotText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not UTF-8 text (byte {}): apply_patch edits text files only", self.offset)
    }
}

/// Decodes a file's bytes.
pub fn decode(bytes: &[u8]) -> Result<Decoded, NotText> {
    let _ = bytes;
    Err(NotText { offset: 0 })
}

/// The bytes to write for `text` ('\n' line ends) in the file's `form`.
pub fn encode(form: Form, text: &str) -> Vec<u8> {
    let _ = (form, text);
    Vec::new()
}
