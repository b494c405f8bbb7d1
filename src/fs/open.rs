//! Opening the file a tool reads: a regular file, or the error docs/SPEC.md
//! gives for what is not one — without ever blocking on a FIFO or device,
//! or on a "regular" file whose reads wait (`/proc/kmsg`).

use std::fs::{self, File, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;

use rustix::fs::{fcntl_getfl, fcntl_setfl, Mode, OFlags};

use crate::confine::Roots;
use crate::error::{Kind, ToolError, Why};

/// Opens `path` for reading if it is a regular file; the errors are those
/// of docs/SPEC.md. file_read reads it, file_edit edits it. With `roots`
/// (docs/CONFINEMENT.md) it is opened beneath them, or refused.
///
/// The kind of file is checked before opening (a FIFO would block the open,
/// a socket cannot be opened) and again on the open file (it may have been
/// replaced in between; the open itself cannot block, thanks to O_NONBLOCK).
/// Confined, there is no check before the open (it would look at a path,
/// not at what the open meets): the open is non-blocking anyway, and when
/// it fails the kind is read from a descriptor opened beneath the roots, so
/// that the error is the one given unconfined.
///
/// A file whose size says 0 keeps O_NONBLOCK: that is how /proc and the
/// tracing files show that their size is not known up front, and some of
/// them wait for data (`/proc/kmsg`, `trace_pipe`); non-blocking, such a
/// read fails at once (EAGAIN, which callers answer with `READ_FAILED`).
/// Other files are read blocking: O_NONBLOCK means nothing to a disk file,
/// but a FUSE file system could take it at its word.
pub fn open_regular(path: &str, roots: Option<&Roots>) -> Result<File, ToolError> {
    let file = match roots {
        None => open_unconfined(path)?,
        Some(roots) => open_confined(path, roots)?,
    };
    checked_regular(file, path)
}

/// `file`, opened non-blocking from `path`, if it is a regular file, made
/// blocking unless its size says 0 (see `open_regular`).
pub fn checked_regular(file: File, path: &str) -> Result<File, ToolError> {
    let meta = file.metadata().map_err(|_| ToolError::SizeFailed(path.to_owned()))?;
    check_kind(&meta, path)?;
    if meta.len() > 0 {
        clear_nonblock(&file).map_err(|e| ToolError::from_io(&e, path, ToolError::OpenFailed))?;
    }
    Ok(file)
}

fn open_unconfined(path: &str) -> Result<File, ToolError> {
    let open_failed = |e: io::Error| ToolError::from_io(&e, path, ToolError::OpenFailed);
    check_kind(&fs::metadata(path).map_err(open_failed)?, path)?;
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(open_failed)
}

fn open_confined(path: &str, roots: &Roots) -> Result<File, ToolError> {
    match roots.open_read(path) {
        Ok(file) => Ok(file),
        Err(e) if e.is_refusal() => Err(e.into_tool_error(path, ToolError::OpenFailed)),
        Err(e) => {
            // A socket (ENXIO) or a device that cannot be opened: the kind
            // says which error, as it does unconfined before the open.
            if let Ok(fd) = roots.open(path, OFlags::PATH, Mode::empty()) {
                check_kind(&File::from(fd).metadata().map_err(|_| e_size(path))?, path)?;
            }
            Err(e.into_tool_error(path, ToolError::OpenFailed))
        }
    }
}

fn e_size(path: &str) -> ToolError {
    ToolError::SizeFailed(path.to_owned())
}

fn check_kind(meta: &Metadata, path: &str) -> Result<(), ToolError> {
    let why = Why::Kind(Kind::of_type(meta.file_type()));
    if meta.is_dir() {
        // What read(2) on a directory gives: EISDIR.
        Err(ToolError::ReadFailed(path.to_owned()).because(why))
    } else if !meta.is_file() {
        Err(ToolError::SizeFailed(path.to_owned()).because(why))
    } else {
        Ok(())
    }
}

/// Makes reads and writes on `file` blocking again after a non-blocking
/// open (which only served to keep the open itself from blocking).
pub fn clear_nonblock(file: &File) -> io::Result<()> {
    let flags = fcntl_getfl(file)?;
    fcntl_setfl(file, flags - OFlags::NONBLOCK)?;
    Ok(())
}
