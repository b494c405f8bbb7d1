//! Reading a whole file into memory (file_edit; file_read without the
//! output limit), without ever aborting the process: memory that cannot be
//! had is `OUT_OF_MEMORY` (`Memory allocation failed`), and a read that
//! would wait (`/proc/kmsg`, opened non-blocking by `open_regular`) is
//! `READ_FAILED`.

use std::fs::File;
use std::io::{self, Read};

use crate::error::ToolError;
use crate::memory;

/// Room added at a time when a file turns out longer than its size said
/// (files in /proc say 0).
const GROWTH: usize = 64 * 1024;

/// The most read of a file that reports no size (docs/TOOLS.md, file_read
/// and file_edit): far more than the largest text `/proc` makes
/// (`/proc/kallsyms`, a few MB), and read in well under a second, where
/// `/proc/self/pagemap` would go on for 256 GiB.
pub const SIZELESS_MAX: u64 = 64 * 1024 * 1024;

/// Reads all of `file` (opened from `path`) to be changed (file_edit). A
/// file that reports no size and goes on past `SIZELESS_MAX` is
/// `READ_FAILED` rather than read for minutes (or until memory runs out).
pub fn read_all(file: &File, path: &str) -> Result<Vec<u8>, ToolError> {
    let size = file.metadata().map_err(|_| ToolError::SizeFailed(path.to_owned()))?.len();
    if size > 0 {
        return read_up_to(file, path, u64::MAX);
    }
    let content = read_up_to(file, path, SIZELESS_MAX)?;
    // Whether it goes on (a read of a whole number of 8-byte words, which
    // `/proc/self/pagemap` insists on).
    let mut probe = [0u8; 4096];
    let more = content.len() as u64 == SIZELESS_MAX
        && (&*file)
            .read(&mut probe)
            .map_err(|e| ToolError::from_io(&e, path, ToolError::ReadFailed))?
            > 0;
    if more {
        return Err(ToolError::ReadFailed(format!(
            "{path} (it reports no size and goes on past {} MiB, the most read of such a file; \
             nothing was changed)",
            SIZELESS_MAX >> 20
        )));
    }
    Ok(content)
}

/// Reads `file` (opened from `path`, which errors name) to its end, or up to
/// `max` bytes, whichever comes first.
pub fn read_up_to(file: &File, path: &str, max: u64) -> Result<Vec<u8>, ToolError> {
    let size = file.metadata().map_err(|_| ToolError::SizeFailed(path.to_owned()))?.len();
    let mut content = Vec::new();
    // One byte more than the size, so the read that finds the end needs no
    // new room.
    let expected = usize::try_from(size.min(max).saturating_add(1)).unwrap_or(usize::MAX);
    memory::try_reserve(&mut content, expected).map_err(|_| ToolError::AllocationFailed)?;
    loop {
        let left = max - content.len() as u64;
        if left == 0 {
            return Ok(content);
        }
        if content.len() == content.capacity() {
            let more = content.len().max(GROWTH).min(usize::try_from(left).unwrap_or(usize::MAX));
            memory::try_reserve(&mut content, more).map_err(|_| ToolError::AllocationFailed)?;
        }
        // Never past the room there is: `read_to_end` then has no reason to
        // grow the buffer itself (which it would do without asking).
        let room = (content.capacity() - content.len()) as u64;
        match file.take(room.min(left)).read_to_end(&mut content) {
            Ok(0) => return Ok(content),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::OutOfMemory => {
                return Err(ToolError::AllocationFailed)
            }
            Err(e) => return Err(ToolError::from_io(&e, path, ToolError::ReadFailed)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn reads_whole_or_up_to_max_whatever_the_size_said() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        File::create(&path).unwrap().write_all(&data).unwrap();
        let file = File::open(&path).unwrap();
        assert!(read_up_to(&file, "f", u64::MAX).unwrap() == data);
        let file = File::open(&path).unwrap();
        assert!(read_up_to(&file, "f", 1000).unwrap() == data[..1000]);
        // A file whose size says 0 but which has content, like /proc files.
        let file = File::open("/proc/self/status").unwrap();
        assert!(read_up_to(&file, "status", u64::MAX).unwrap().starts_with(b"Name:"));
    }
}
