//! Every file a patch names, read and locked before anything is written,
//! and the patch's operations applied to them in memory, in order, as
//! OpenAI's apply_patch applies them one after the other to the disk: an
//! operation sees what the ones before it made of a file (an Update after
//! an Add of the same path updates what was added; two Updates of a file
//! apply in turn). Only the end state of each file is then committed.
//!
//! Locks (`fs::lock`, as file_edit takes them) are taken in the order of
//! the files' paths, so that two patches never wait on each other; a file
//! is locked from before it is read until the patch is in place.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::confine::Roots;
use crate::error::{Kind, ToolError, Why};
use crate::fs::lock::{self, Locked};
use crate::fs::open::open_regular;
use crate::fs::target::Target;
use crate::fs::{looked_up, read};
use crate::tools::diff;

use super::parse::{FileOp, Patch};
use super::paths::{self, FilePath};
use super::text;
use super::{align, hunks};

/// What a path holds: before the patch, or as the operations so far left it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    Absent,
    Directory,
    File(Vec<u8>),
}

/// One file of the patch.
pub struct Entry {
    pub path: FilePath,
    pub original: State,
    pub current: State,
    /// Where the file is written: resolved (beneath the roots if any) and
    /// locked when it existed; a new file's is resolved at the commit,
    /// once its directories are made.
    pub target: Option<Target>,
    pub lock: Option<Locked>,
    /// The entry whose file was moved here (`*** Move to`): the new file
    /// takes its owner, mode and attributes.
    pub moved_from: Option<usize>,
}

impl Entry {
    pub fn changed(&self) -> bool {
        self.original != self.current
    }
}

/// A line of the answer: `A`, `M` or `D`, and the path as the patch gave it.
pub type Change = (char, String);

pub struct Files<'r> {
    workdir: Option<&'r str>,
    pub roots: Option<&'r Roots>,
    wait: Duration,
    /// In the order the patch first names them.
    pub entries: Vec<Entry>,
    index: HashMap<PathBuf, usize>,
}

impl<'r> Files<'r> {
    pub fn new(workdir: Option<&'r str>, roots: Option<&'r Roots>, wait: Duration) -> Files<'r> {
        Files { workdir, roots, wait, entries: Vec::new(), index: HashMap::new() }
    }

    /// Reads every file `patch` names and applies its operations to them
    /// in memory; the answer's lines, in the patch's order. Nothing is
    /// written.
    pub fn apply(&mut self, patch: &Patch) -> Result<Vec<Change>, ToolError> {
        for op in &patch.ops {
            let (path, move_to) = match op {
                FileOp::Add { path, .. } | FileOp::Delete { path } => (path, None),
                FileOp::Update { path, move_to, .. } => (path, move_to.as_ref()),
            };
            self.register(path)?;
            if let Some(dest) = move_to {
                self.register(dest)?;
            }
        }
        self.load_all()?;
        patch.ops.iter().map(|op| self.run(op)).collect()
    }

    fn register(&mut self, given: &str) -> Result<usize, ToolError> {
        let path = paths::resolve(given, self.workdir)?;
        if let Some(&i) = self.index.get(&path.key) {
            return Ok(i);
        }
        let i = self.entries.len();
        self.index.insert(path.key.clone(), i);
        self.entries.push(Entry {
            path,
            original: State::Absent,
            current: State::Absent,
            target: None,
            lock: None,
            moved_from: None,
        });
        Ok(i)
    }

    fn find(&self, given: &str) -> Result<usize, ToolError> {
        let path = paths::resolve(given, self.workdir)?;
        self.index
            .get(&path.key)
            .copied()
            .ok_or_else(|| ToolError::InvalidArg(format!("patch path {given} was not read")))
    }

    /// Opens, locks and reads every file, in the order of their keys.
    fn load_all(&mut self) -> Result<(), ToolError> {
        let mut order: Vec<usize> = (0..self.entries.len()).collect();
        order.sort_by(|&a, &b| self.entries[a].path.key.cmp(&self.entries[b].path.key));
        let mut held: Vec<(u64, u64)> = Vec::new();
        for i in order {
            let full = self.entries[i].path.full.clone();
            let explain = |e| looked_up::explain(e, &full, self.roots);
            let file = match open_regular(&full, self.roots) {
                Ok(file) => file,
                Err(ToolError::FileNotFound(_)) => continue,
                Err(e) if e == is_directory(&full) => {
                    self.entries[i].original = State::Directory;
                    self.entries[i].current = State::Directory;
                    continue;
                }
                Err(e) => return Err(explain(e)),
            };
            // Two paths of the patch for one file (a link, a hard link):
            // its lock is held already, and a second would wait on it.
            let meta = file.metadata().map_err(|_| ToolError::SizeFailed(full.clone()))?;
            let id = (
                std::os::unix::fs::MetadataExt::dev(&meta),
                std::os::unix::fs::MetadataExt::ino(&meta),
            );
            if held.contains(&id) {
                return Err(ToolError::InvalidArg(format!(
                    "{} is a file another path of the patch names too (a link to it): \
                     name each file by one path",
                    self.entries[i].path.given
                )));
            }
            held.push(id);
            let target = Target::for_write(&full, self.roots).map_err(explain)?;
            let locked = lock::for_edit(&full, &target, file, self.wait).map_err(explain)?;
            let bytes = read::read_all(&locked, &full)?;
            let entry = &mut self.entries[i];
            entry.original = State::File(bytes.clone());
            entry.current = State::File(bytes);
            entry.target = Some(target);
            entry.lock = Some(locked);
        }
        Ok(())
    }

    /// One operation, applied to the files in memory.
    fn run(&mut self, op: &FileOp) -> Result<Change, ToolError> {
        match op {
            FileOp::Add { path, contents } => {
                let i = self.find(path)?;
                self.entries[i].current = State::File(contents.clone().into_bytes());
                self.entries[i].moved_from = None;
                Ok(('A', path.clone()))
            }
            FileOp::Delete { path } => {
                let i = self.find(path)?;
                self.existing(i)?;
                self.entries[i].current = State::Absent;
                Ok(('D', path.clone()))
            }
            FileOp::Update { path, move_to, chunks } => {
                let i = self.find(path)?;
                let old = self.existing(i)?;
                let decoded = text::decode(old).map_err(|e| {
                    ToolError::ReadFailed(format!("{} ({e})", self.entries[i].path.full))
                })?;
                let new = hunks::apply(&decoded.text, chunks)
                    .map_err(|m| ToolError::HunkNotFound(m.message(path)))?;
                let bytes = text::encode(decoded.form, &new);
                match move_to {
                    Some(dest) => {
                        let d = self.find(dest)?;
                        if d != i {
                            self.entries[i].current = State::Absent;
                            self.entries[d].moved_from = Some(i);
                        }
                        self.entries[d].current = State::File(bytes);
                        Ok(('M', dest.clone()))
                    }
                    None => {
                        self.entries[i].current = State::File(bytes);
                        Ok(('M', path.clone()))
                    }
                }
            }
        }
    }

    /// The content of entry `i`, which an operation needs to exist.
    fn existing(&self, i: usize) -> Result<&[u8], ToolError> {
        let full = &self.entries[i].path.full;
        match &self.entries[i].current {
            State::File(bytes) => Ok(bytes),
            State::Absent => {
                Err(looked_up::explain(ToolError::FileNotFound(full.clone()), full, self.roots))
            }
            State::Directory => Err(is_directory(full)),
        }
    }

    /// The unified diff of every file changed, in the patch's order, each
    /// bounded as file_edit's (`tools::diff`): a new file's from
    /// `/dev/null`, a deleted one's to it, a moved one's from its old name
    /// (its old content against its new).
    pub fn diff(&self) -> Vec<u8> {
        let bytes = |state: &State| match state {
            State::File(bytes) => bytes.clone(),
            _ => Vec::new(),
        };
        // Moved files: the source's diff is the destination's.
        let moved: Vec<(usize, usize)> = (0..self.entries.len())
            .filter_map(|d| {
                let dest = &self.entries[d];
                let from = dest.moved_from?;
                let source_gone = self.entries[from].current == State::Absent;
                (dest.original == State::Absent && source_gone).then_some((from, d))
            })
            .collect();
        let mut out = Vec::new();
        for (i, entry) in self.entries.iter().enumerate().filter(|(_, e)| e.changed()) {
            if moved.iter().any(|(from, _)| *from == i) {
                continue;
            }
            let source = moved.iter().find(|(_, d)| *d == i).map(|(from, _)| &self.entries[*from]);
            let old = bytes(&source.unwrap_or(entry).original);
            let new = bytes(&entry.current);
            let given = &entry.path.given;
            let text = diff::unified(&old, &new, &align::pieces(&old, &new), given);
            let (old_name, new_name) = match (source, &entry.original, &entry.current) {
                (Some(source), _, _) => (format!("a/{}", source.path.given), format!("b/{given}")),
                (None, State::File(_), State::File(_)) => {
                    (format!("a/{given}"), format!("b/{given}"))
                }
                (None, State::File(_), _) => (format!("a/{given}"), "/dev/null".to_owned()),
                (None, _, _) => ("/dev/null".to_owned(), format!("b/{given}")),
            };
            let header = format!("--- a/{given}\n+++ b/{given}\n");
            match text.strip_prefix(header.as_bytes()) {
                Some(body) => {
                    out.extend(format!("--- {old_name}\n+++ {new_name}\n").as_bytes());
                    out.extend(body);
                }
                None => out.extend(text),
            }
        }
        out
    }
}

/// What reading a directory answers (`fs::open`), to tell it from other
/// errors.
fn is_directory(full: &str) -> ToolError {
    ToolError::ReadFailed(full.to_owned()).because(Why::Kind(Kind::Directory))
}
