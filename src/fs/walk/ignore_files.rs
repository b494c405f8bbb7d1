//! The ignore files the walk of the full profile's grep and glob reads,
//! bounded (docs/TOOLS.md, "The ignore-aware walk", "Bounds"), and the
//! answer's word on those it skipped.
//!
//! A cloned repository chooses its ignore files, and their cost is the
//! `ignore` crate's: the patterns of a file compile into one regex set, at
//! about 1 KB of memory for each byte of pattern in the worst shapes
//! measured (`*a*a…`, `*build000001*/o.tmp`), and each file's matcher keeps
//! a lazy DFA cache of up to about 20 MiB when its patterns make many
//! states. Unbounded, a 16 MiB `.gitignore` of 760,000 patterns took 7 to
//! 14 GB and minutes, one 1 MB line of `*a` 650 MB. So a file is read only
//! within bounds no real repository reaches (the largest real ones are
//! around 10 KB and a few hundred lines: Chromium's top `.gitignore` is
//! 9.6 KB, 350 lines; GitHub's largest template, VisualStudio, 6.7 KB,
//! 400 lines; all of the Linux kernel's together a few thousand lines), and
//! what is compiled at once and over the walk is bounded too. At the bounds
//! (measured, release): 185 MB with 8 files of the worst shapes applying
//! over 50,000 names, 3.4 s compiling the most patterns one walk takes.
//!
//! A file over a bound is skipped whole, never in part: a part would drop
//! its later lines, and with them a `!` that re-includes a file an earlier
//! line leaves out. A skipped file is taken as re-including everything
//! below its directory (`Match::Whitelist`): what it could have kept is
//! kept, what the ignore files farther out would leave out is searched,
//! and hidden names below it are searched. A skipped file can make the walk
//! search more, never less, than the rules would have it: an answer with no
//! match can be trusted.

use std::fs::File;
use std::io::Read;
use std::os::fd::BorrowedFd;
use std::path::Path;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;
use rustix::fs::{Mode, OFlags};

use crate::confine::openat_beneath;
use crate::json::{self, Field};

/// The most bytes of one ignore file: six times the largest real ones.
pub const MAX_FILE_BYTES: u64 = 64 * 1024;
/// The most patterns (lines that are neither blank nor comments) of one
/// ignore file: twenty times the largest real ones.
pub const MAX_FILE_PATTERNS: usize = 8192;
/// The longest pattern line of an ignore file: a pattern is a path, and no
/// path on Linux is longer (PATH_MAX). Blank lines and comments cost
/// nothing and are not bounded but by the file's size.
pub const MAX_LINE_BYTES: usize = 4096;
/// The most ignore files that apply at once (on the path from the top to
/// the directory walked): each may keep a DFA cache of about 20 MiB.
pub const MAX_IN_FORCE_FILES: usize = 8;
/// The most bytes of the ignore files that apply at once: compiled, about
/// 1 KB each in the worst shapes.
pub const MAX_IN_FORCE_BYTES: usize = 128 * 1024;
/// The most patterns compiled over one walk: about 4 s of compiling in the
/// worst shape measured (0.2 ms a pattern).
pub const MAX_WALK_PATTERNS: usize = 20_000;
/// The most bytes of ignore files compiled over one walk.
pub const MAX_WALK_BYTES: usize = 1024 * 1024;

/// The skipped files named in the answer; past them, a count.
const MAX_NAMED: usize = 10;

/// One ignore file as the walk holds it.
pub(super) enum IgnoreFile {
    /// None there, or one without a pattern.
    Absent,
    /// Its patterns, compiled, and the bytes they were read from.
    Rules(Gitignore, usize),
    /// Over a bound: not applied, taken as re-including everything below.
    Skipped,
}

impl IgnoreFile {
    /// What the file says of `path` (below its directory).
    pub(super) fn matched(&self, path: &Path, is_dir: bool) -> Match<()> {
        match self {
            IgnoreFile::Absent => Match::None,
            IgnoreFile::Rules(rules, _) => rules.matched(path, is_dir).map(|_| ()),
            IgnoreFile::Skipped => Match::Whitelist(()),
        }
    }

    pub(super) fn is_absent(&self) -> bool {
        matches!(self, IgnoreFile::Absent)
    }

    /// What the file holds while it applies: (files, bytes).
    pub(super) fn cost(&self) -> InForce {
        match self {
            IgnoreFile::Rules(_, bytes) => InForce { files: 1, bytes: *bytes },
            IgnoreFile::Absent | IgnoreFile::Skipped => InForce::default(),
        }
    }
}

/// What the ignore files that apply hold: how many, how many bytes.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct InForce {
    pub(super) files: usize,
    pub(super) bytes: usize,
}

impl InForce {
    pub(super) fn add(self, other: InForce) -> InForce {
        InForce { files: self.files + other.files, bytes: self.bytes + other.bytes }
    }
}

/// The ignore files of one walk: what was compiled, which were skipped.
#[derive(Debug, Default)]
pub struct IgnoreFiles {
    patterns: usize,
    bytes: usize,
    /// The first `MAX_NAMED` skipped: "PATH: why".
    named: Vec<String>,
    skipped: usize,
}

impl IgnoreFiles {
    pub fn new() -> IgnoreFiles {
        IgnoreFiles::default()
    }

    /// Reads and compiles the ignore file at `rel` in `dir` (beneath it,
    /// its last component not followed), within the bounds, with `in_force`
    /// already applying; `shown` names it in the answer if it is skipped.
    pub(super) fn read(
        &mut self,
        dir: BorrowedFd<'_>,
        rel: &str,
        in_force: InForce,
        shown: impl FnOnce() -> String,
    ) -> IgnoreFile {
        match self.compile(dir, rel, in_force) {
            Ok(file) => file,
            Err(why) => {
                self.skipped += 1;
                if self.named.len() < MAX_NAMED {
                    self.named.push(format!("{}: {why}", shown()));
                }
                IgnoreFile::Skipped
            }
        }
    }

    /// The file, or why it is skipped.
    fn compile(
        &mut self,
        dir: BorrowedFd<'_>,
        rel: &str,
        in_force: InForce,
    ) -> Result<IgnoreFile, String> {
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW;
        let Ok(fd) = openat_beneath(dir, Path::new(rel), flags, Mode::empty()) else {
            return Ok(IgnoreFile::Absent);
        };
        let file = File::from(fd);
        let Ok(meta) = file.metadata() else { return Ok(IgnoreFile::Absent) };
        if !meta.is_file() {
            return Ok(IgnoreFile::Absent);
        }
        let too_large = |size: u64| format!("{size} bytes, more than {MAX_FILE_BYTES}");
        if meta.len() > MAX_FILE_BYTES {
            return Err(too_large(meta.len()));
        }
        let mut text = Vec::new();
        if file.take(MAX_FILE_BYTES + 1).read_to_end(&mut text).is_err() {
            return Ok(IgnoreFile::Absent);
        }
        if text.len() as u64 > MAX_FILE_BYTES {
            // It grew since its size was read.
            return Err(too_large(text.len() as u64));
        }
        let mut builder = GitignoreBuilder::new(".");
        let mut patterns = 0;
        for (number, line) in String::from_utf8_lossy(&text).lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            if line.len() > MAX_LINE_BYTES {
                return Err(format!(
                    "line {} is {} bytes long, more than {MAX_LINE_BYTES}",
                    number + 1,
                    line.len()
                ));
            }
            patterns += 1;
            if patterns > MAX_FILE_PATTERNS {
                return Err(format!("more than {MAX_FILE_PATTERNS} patterns"));
            }
            // A malformed line is passed over, as git and ripgrep do.
            let _ = builder.add_line(None, line);
        }
        if patterns == 0 {
            return Ok(IgnoreFile::Absent);
        }
        let bytes = text.len();
        if in_force.files >= MAX_IN_FORCE_FILES {
            return Err(format!(
                "{MAX_IN_FORCE_FILES} ignore files already apply here, the most at once"
            ));
        }
        if in_force.bytes + bytes > MAX_IN_FORCE_BYTES {
            return Err(format!(
                "{bytes} bytes, beside the {} of the ignore files that apply here: more than \
                 {MAX_IN_FORCE_BYTES} at once",
                in_force.bytes
            ));
        }
        if self.patterns + patterns > MAX_WALK_PATTERNS || self.bytes + bytes > MAX_WALK_BYTES {
            return Err(format!(
                "the ignore files read before it hold {} patterns, {} bytes: at most \
                 {MAX_WALK_PATTERNS} patterns and {MAX_WALK_BYTES} bytes in one call",
                self.patterns, self.bytes
            ));
        }
        self.patterns += patterns;
        self.bytes += bytes;
        match builder.build() {
            Ok(rules) if rules.is_empty() => Ok(IgnoreFile::Absent),
            Ok(rules) => Ok(IgnoreFile::Rules(rules, bytes)),
            Err(_) => Err("its patterns could not be compiled".to_owned()),
        }
    }

    /// The answer's `ignore_files_skipped` when files were skipped: each
    /// named with why (the first `MAX_NAMED`, then how many more), within
    /// what `answer` leaves of the output limit: fewer named when they do
    /// not fit, at least how many when that fits.
    pub fn field(
        &self,
        answer: &[(&'static str, Field)],
        limit: Option<usize>,
    ) -> Option<(&'static str, Field)> {
        if self.skipped == 0 {
            return None;
        }
        // The answer's object, and what one more field adds to it: a
        // comma, the field without the braces of an object of its own.
        let base = json::object_len(answer);
        let mut named = self.named.len();
        loop {
            let mut list: Vec<Field> =
                self.named[..named].iter().map(|n| Field::Text(n.clone().into_bytes())).collect();
            let more = self.skipped - named;
            if more > 0 {
                let files = if more == 1 { "file" } else { "files" };
                let what = if named == 0 { "" } else { "more " };
                list.push(Field::Text(format!("{more} {what}ignore {files} skipped").into_bytes()));
            }
            let field = ("ignore_files_skipped", Field::List(list));
            let Some(limit) = limit else { return Some(field) };
            let fields = [field];
            if base + json::object_len(&fields) - 1 <= limit {
                let [field] = fields;
                return Some(field);
            }
            if named == 0 {
                return None;
            }
            named -= 1;
        }
    }
}
