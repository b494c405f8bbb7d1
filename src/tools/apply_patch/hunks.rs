//! A file's chunks applied to its text, all located first, replaced bottom
//! up; a chunk that is not found says which line diverged and what the
//! file has closest to it.
#![allow(dead_code)] // patch-tool is not using these yet

use super::parse::Chunk;

/// A chunk that could not be located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoMatch {
    /// 1-based among the file's chunks.
    pub hunk: usize,
    /// Its `@@` text, if any (the last of stacked ones).
    pub header: Option<String>,
    /// The first line (context or old) that was not found.
    pub wanted: String,
    /// Its 1-based line in the patch.
    pub wanted_at: usize,
    /// 1-based line in the file and its text.
    pub closest: Option<(usize, String)>,
}

impl NoMatch {
    /// One bounded line for the file `path`:
    /// "src/a.rs: hunk 2 (@@ fn main): line 14 of the patch `    let x = 1;`
    /// not found; closest line 37: `    let x = 2;`".
    pub fn message(&self, path: &str) -> String {
        let _ = path;
        String::new()
    }
}

/// Applies `chunks` to `old` (text with '\n' line ends, as text.rs
/// decodes it); the new text.
pub fn apply(old: &str, chunks: &[Chunk]) -> Result<String, NoMatch> {
    let _ = (old, chunks);
    Err(NoMatch { hunk: 1, header: None, wanted: String::new(), wanted_at: 0, closest: None })
}
