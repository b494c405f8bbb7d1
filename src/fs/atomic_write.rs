//! Crash-safe writing, shared by file_write and file_edit (docs/TOOLS.md,
//! "file_write and file_edit").
//!
//! The new content goes to a temporary file in the target's own directory
//! (`fs::temp_file`), which is flushed to disk and renamed over the target,
//! and then the directory is flushed too: a reader, or a machine that
//! crashes, sees the old file or the new one, never half of each. The
//! target's owner, group, extended attributes (its ACL among them) and
//! permission bits (set-id bits included) are given to the new file; a
//! symbolic link keeps being a link and the file it points to is written.
//!
//! Where a rename would be wrong or impossible the file is written in place:
//! several hard links (a rename would split them), not a regular file
//! (`/dev/null`), a directory we may not write while the file is writable,
//! an append-only directory (no temporary file is made there at all),
//! somebody else's file whose owner a new file could not get, or one whose
//! attributes or mode a new file could not get. Space is reserved first
//! where the file system can, so that a full disk leaves even an in-place
//! target untouched. A FIFO or socket is refused: writing one could wait
//! forever.
//!
//! Every step works on the target's directory descriptor and the file's
//! name in it (`fs::target`): with confinement on (docs/CONFINEMENT.md) that
//! descriptor was opened beneath an allowed root, and nothing is resolved
//! by path again — not the temporary file, the rename, the in-place write,
//! the attributes or the directory's flush.
//!
//! `create` (file_write's `expected_sha256` `""`) makes a file that must not
//! exist: the same crash-safe steps, but the rename never replaces
//! (`RENAME_NOREPLACE`), so a file that appeared meanwhile is `STALE`.
//!
//! `prepare` is every step short of the rename (checks, temporary file
//! filled and flushed with the target's owner, attributes and mode), for
//! apply_patch, which prepares every file of a patch before it puts any in
//! place (docs/GUARANTEES.md, "apply_patch"); `write` is `prepare` and the
//! rename.
//!
//! The caller holds the lock (`fs::lock`); this module only writes.

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};

use nix::unistd::{fchown, Gid, Uid};
use rustix::fs::{FileType, Mode, OFlags, Stat};

use crate::error::{Kind, ToolError, Why};
use crate::fs::append_only::is_append_only;
use crate::fs::open::clear_nonblock;
use crate::fs::target::{missing_directory, Target};
use crate::fs::temp_file::TempFile;
use crate::fs::xattrs;

/// The bytes to write: their length, and the bytes themselves piece by
/// piece, so that an edit of a large file writes the unchanged stretches
/// straight from the old content instead of building the new one.
pub trait Content {
    /// The number of bytes.
    fn size(&self) -> usize;

    /// Calls `sink` with the pieces, in order, until it fails.
    fn each_piece(&self, sink: &mut dyn FnMut(&[u8]) -> io::Result<()>) -> io::Result<()>;
}

impl Content for [u8] {
    fn size(&self) -> usize {
        self.len()
    }

    fn each_piece(&self, sink: &mut dyn FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        sink(self)
    }
}

/// Writes `content` to `target` (resolved from `path`, as the caller gave
/// it; error messages name it so) crash-safely, or in place where a rename
/// would be wrong: `prepare`, then the one rename (`Prepared::Temp`).
pub fn write<C: Content + ?Sized>(
    target: &Target,
    path: &str,
    content: &C,
) -> Result<(), ToolError> {
    match prepare(target, path, content, None)? {
        Prepared::Temp { temp, existing } => match temp.rename_over(target.name()) {
            Ok(()) => {
                flush_dir(target);
                Ok(())
            }
            // The directory refuses the rename (sticky, a bind-mounted
            // file) while the file itself is writable: write it in place.
            Err(e) if rename_refused(&e) && existing.is_some() => match existing {
                Some(meta) => write_in_place(target, content, &meta, path),
                None => Err(ToolError::from_io(&e, path, ToolError::WriteFailed)),
            },
            Err(e) => Err(ToolError::from_io(&e, path, ToolError::WriteFailed)),
        },
        Prepared::InPlace(meta) => write_in_place(target, content, &meta, path),
        Prepared::CreateInPlace => create_in_place(target, content)
            .map_err(|e| new_file_error(e, path, Replacing::Anything)),
    }
}

/// A file's new content made ready by `prepare`, nothing of the target
/// changed yet.
pub enum Prepared<'t> {
    /// Written and flushed to a temporary file beside the target, with its
    /// owner, attributes and mode (`existing`: the target's metadata, `None`
    /// for a new file); a rename (or exchange) puts it in place.
    Temp { temp: TempFile<'t>, existing: Option<Stat> },
    /// To be written over the file itself (see the module comment): its
    /// metadata.
    InPlace(Stat),
    /// A new file in an append-only directory, to be created directly.
    CreateInPlace,
}

/// Everything of a crash-safe write short of putting the content in place:
/// the checks of the target and, where it will be renamed, the temporary
/// file filled and flushed. `like` gives the owner, attributes and mode
/// a new file takes from another (a file moved: apply_patch's Move to);
/// else they are the target's own, when it exists.
pub fn prepare<'t, C: Content + ?Sized>(
    target: &'t Target,
    path: &str,
    content: &C,
    like: Option<(&Target, &Stat)>,
) -> Result<Prepared<'t>, ToolError> {
    let open_failed = |e: &io::Error| ToolError::from_io(e, path, ToolError::OpenFailed);
    let meta = match target.stat() {
        Ok(meta) => meta,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
            if is_append_only(target.dir()) {
                return Ok(Prepared::CreateInPlace);
            }
            return match fill(target, content, like) {
                Ok(temp) => Ok(Prepared::Temp { temp, existing: None }),
                Err(e) => Err(new_file_error(e, path, Replacing::Anything)),
            };
        }
        Err(e) => return Err(open_failed(&e)),
    };
    let kind = FileType::from_raw_mode(meta.st_mode);
    // A directory cannot be written; a FIFO or a socket would make the
    // write wait for a reader that may never come. (A symbolic link comes
    // here only when confined and planted since the target was resolved:
    // the in-place open refuses it, never following it.)
    if matches!(kind, FileType::Directory | FileType::Fifo | FileType::Socket) {
        let why = Why::Kind(Kind::of_mode(meta.st_mode));
        return Err(ToolError::OpenFailed(path.to_owned()).because(why));
    }
    // The rename would replace a file we may not write (a read-only file
    // in a writable directory): refuse, as opening it would.
    target.check_writable().map_err(|e| open_failed(&e))?;
    if kind != FileType::RegularFile || meta.st_nlink > 1 || is_append_only(target.dir()) {
        return Ok(Prepared::InPlace(meta));
    }
    match fill(target, content, Some(like.unwrap_or((target, &meta)))) {
        Ok(temp) => Ok(Prepared::Temp { temp, existing: Some(meta) }),
        // The directory refuses a new entry (not writable, read-only
        // mount) while the file itself is writable: write it in place.
        Err(Failure::Create(e)) if rename_refused(&e) => Ok(Prepared::InPlace(meta)),
        // Somebody else's file we may write: a new file would be ours, so
        // write theirs in place (as Emacs and Vim do) and it stays theirs.
        // Likewise a file whose attributes or mode a new file cannot get.
        Err(Failure::Owner | Failure::Attributes) => Ok(Prepared::InPlace(meta)),
        Err(other) => Err(other.into_tool_error(path)),
    }
}

/// Writes `content` over the existing file `target` itself, `meta` its
/// metadata (`Prepared::InPlace`): not crash-safe, the way for files a
/// rename would be wrong for.
pub fn overwrite<C: Content + ?Sized>(
    target: &Target,
    path: &str,
    content: &C,
    meta: &Stat,
) -> Result<(), ToolError> {
    write_in_place(target, content, meta, path)
}

/// Creates the new file `target` with `content` directly
/// (`Prepared::CreateInPlace`), never replacing one.
pub fn create_directly<C: Content + ?Sized>(
    target: &Target,
    path: &str,
    content: &C,
) -> Result<(), ToolError> {
    create_in_place(target, content).map_err(|e| new_file_error(e, path, Replacing::Nothing))
}

/// Flushes the target's directory, which makes a rename in it durable.
/// Some file systems cannot sync a directory, and a directory held as
/// O_PATH cannot be; the file is written anyway.
pub fn flush_dir(target: &Target) {
    let _ = rustix::fs::fsync(target.dir());
}

/// Writes `content` to `target`, which must not exist (file_write's
/// `expected_sha256` `""`), crash-safely as `write` creates a file; the
/// rename into place replaces nothing, so a file that appears meanwhile is
/// never overwritten: that, or one there already, is `STALE` (`Exists`).
pub fn create<C: Content + ?Sized>(
    target: &Target,
    path: &str,
    content: &C,
) -> Result<(), ToolError> {
    match target.stat() {
        Ok(_) => Err(ToolError::Exists(path.to_owned())),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
            write_new(target, path, content, Replacing::Nothing)
        }
        Err(e) => Err(ToolError::from_io(&e, path, ToolError::OpenFailed)),
    }
}

/// What the rename of a new file into place may replace: a file that
/// appeared since the target was looked at.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Replacing {
    Anything,
    Nothing,
}

/// A new file; its parent must exist, and a missing one is OPEN_FAILED,
/// not FILE_NOT_FOUND (docs/SPEC.md).
fn write_new<C: Content + ?Sized>(
    target: &Target,
    path: &str,
    content: &C,
    replacing: Replacing,
) -> Result<(), ToolError> {
    let created = if is_append_only(target.dir()) {
        create_in_place(target, content)
    } else {
        replace(target, content, None, replacing)
    };
    created.map_err(|err| new_file_error(err, path, replacing))
}

/// The error of a new file's creation: a missing directory is
/// OPEN_FAILED saying so, a name taken meanwhile `Exists` when nothing may
/// be replaced.
fn new_file_error(err: Failure, path: &str, replacing: Replacing) -> ToolError {
    match err {
        Failure::Create(e) if e.raw_os_error() == Some(libc::ENOENT) => {
            ToolError::OpenFailed(path.to_owned()).because(missing_directory(path))
        }
        // Only an exclusive creation meets EEXIST at the target's name.
        Failure::Create(e) | Failure::Rename(e)
            if replacing == Replacing::Nothing && e.raw_os_error() == Some(libc::EEXIST) =>
        {
            ToolError::Exists(path.to_owned())
        }
        other => other.into_tool_error(path),
    }
}

/// Why a crash-safe replacement failed.
enum Failure {
    /// The temporary file could not be created.
    Create(io::Error),
    /// Writing or flushing the temporary file failed.
    Write(io::Error),
    /// The rename over the target failed.
    Rename(io::Error),
    /// The target's owner or group cannot be given to a new file.
    Owner,
    /// The target's extended attributes or mode cannot be given to a new
    /// file.
    Attributes,
}

impl Failure {
    fn into_tool_error(self, path: &str) -> ToolError {
        match self {
            Failure::Create(e) => ToolError::from_io(&e, path, ToolError::OpenFailed),
            Failure::Write(e) | Failure::Rename(e) => {
                ToolError::from_io(&e, path, ToolError::WriteFailed)
            }
            Failure::Owner | Failure::Attributes => ToolError::WriteFailed(path.to_owned()),
        }
    }
}

fn rename_refused(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EACCES | libc::EPERM | libc::EROFS | libc::EBUSY | libc::EXDEV)
    )
}

/// Writes a temporary file next to `target` and renames it over it.
/// `existing` is the target's metadata, `None` for a new file.
fn replace<C: Content + ?Sized>(
    target: &Target,
    content: &C,
    existing: Option<&Stat>,
    replacing: Replacing,
) -> Result<(), Failure> {
    let temp = fill(target, content, existing.map(|meta| (target, meta)))?;
    match replacing {
        Replacing::Anything => temp.rename_over(target.name()),
        Replacing::Nothing => temp.rename_new(target.name()),
    }
    .map_err(Failure::Rename)?;
    // The rename itself is durable only once the directory is flushed.
    flush_dir(target);
    Ok(())
}

/// The temporary file beside `target` holding `content`, flushed to disk,
/// with the owner, extended attributes and mode of `like` (a file and its
/// metadata) when given.
fn fill<'t, C: Content + ?Sized>(
    target: &'t Target,
    content: &C,
    like: Option<(&Target, &Stat)>,
) -> Result<TempFile<'t>, Failure> {
    // A new file gets 0666 less the umask (and its directory's default
    // ACL), as open() gives them. An existing file's mode comes last; until
    // then only we may read the temporary file.
    let create_mode = if like.is_some() { 0o600 } else { 0o666 };
    let temp =
        TempFile::create(target.dir(), target.name(), create_mode).map_err(Failure::Create)?;
    let file = temp.file();
    if let Some((source, meta)) = like {
        if !keep_owner(file, meta).map_err(Failure::Write)? {
            return Err(Failure::Owner);
        }
        source
            .with_attribute_path(meta, |from| xattrs::copy(from, file))
            .map_err(|_| Failure::Attributes)?;
    }
    write_all(file, content).map_err(Failure::Write)?;
    if let Some((_, meta)) = like {
        // After the owner (chown clears set-id bits) and after the last
        // write (a write by anyone but root clears them too).
        keep_mode(file, meta)?;
    }
    file.sync_all().map_err(Failure::Write)?;
    Ok(temp)
}

/// Gives the temporary file the target's permission bits, and checks that
/// it has them: the kernel silently drops a setgid bit that a process
/// outside the file's group sets.
fn keep_mode(file: &File, meta: &Stat) -> Result<(), Failure> {
    let mode = meta.st_mode & 0o7777;
    file.set_permissions(fs::Permissions::from_mode(mode)).map_err(Failure::Write)?;
    match file.metadata() {
        Ok(now) if now.mode() & 0o7777 == mode => Ok(()),
        Ok(_) => Err(Failure::Attributes),
        Err(e) => Err(Failure::Write(e)),
    }
}

/// Gives the temporary file the target's owner and group; false when the
/// process may not (it is not root, and the file is not its own or has a
/// group it is not in).
fn keep_owner(file: &File, meta: &Stat) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    let ours = file.metadata()?;
    let uid = (ours.uid() != meta.st_uid).then(|| Uid::from_raw(meta.st_uid));
    let gid = (ours.gid() != meta.st_gid).then(|| Gid::from_raw(meta.st_gid));
    if uid.is_none() && gid.is_none() {
        return Ok(true);
    }
    Ok(fchown(file.as_raw_fd(), uid, gid).is_ok())
}

/// Writes over the existing file itself: its inode, links, owner, mode and
/// attributes stay as they are. Only regular files and devices come here
/// (a FIFO or socket was refused).
fn write_in_place<C: Content + ?Sized>(
    target: &Target,
    content: &C,
    meta: &Stat,
    path: &str,
) -> Result<(), ToolError> {
    let regular = FileType::from_raw_mode(meta.st_mode) == FileType::RegularFile;
    // O_NONBLOCK keeps the open from waiting should a FIFO have been put
    // in the file's place since we looked (it fails, ENXIO, without a
    // reader); the file is checked again once open.
    let file = target
        .open(OFlags::WRONLY | OFlags::NONBLOCK, Mode::empty())
        .map_err(|e| ToolError::from_io(&e, path, ToolError::OpenFailed))?;
    let write_failed = |e: io::Error| ToolError::from_io(&e, path, ToolError::WriteFailed);
    let kind = file.metadata().map_err(write_failed)?.file_type();
    if kind.is_fifo() || kind.is_socket() || kind.is_dir() {
        return Err(ToolError::OpenFailed(path.to_owned()).because(Why::Kind(Kind::of_type(kind))));
    }
    clear_nonblock(&file).map_err(write_failed)?;
    if regular {
        reserve_space(&file, content.size()).map_err(write_failed)?;
    }
    write_all(&file, content).map_err(write_failed)?;
    if regular {
        // Cut off what remains of a longer old content.
        file.set_len(content.size() as u64).map_err(write_failed)?;
        file.sync_all().map_err(write_failed)?;
    }
    Ok(())
}

/// A new file in a directory that allows no rename (append-only): created
/// and written directly, as `echo > file` would.
fn create_in_place<C: Content + ?Sized>(target: &Target, content: &C) -> Result<(), Failure> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL;
    let file = target.open(flags, Mode::from_raw_mode(0o666)).map_err(Failure::Create)?;
    reserve_space(&file, content.size()).map_err(Failure::Write)?;
    write_all(&file, content).map_err(Failure::Write)?;
    file.sync_all().map_err(Failure::Write)
}

/// Writes the content's pieces in order: large ones as they are, small
/// ones gathered into few writes. Each `FLUSH_AHEAD` bytes written are sent
/// on to the disk at once, so that the disk works while the rest is written
/// and the final fsync has little left to wait for.
fn write_all<C: Content + ?Sized>(file: &File, content: &C) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(GATHER, file);
    let mut flushed = 0u64;
    let mut written = 0u64;
    let result = content
        .each_piece(&mut |part| {
            for piece in part.chunks(FLUSH_AHEAD) {
                out.write_all(piece)?;
                written += piece.len() as u64;
                if written - flushed >= FLUSH_AHEAD as u64 {
                    out.flush()?;
                    start_writeback(file, flushed, written - flushed);
                    flushed = written;
                }
            }
            Ok(())
        })
        .and_then(|()| out.flush());
    if result.is_err() {
        // Dropped unflushed: no second try at a write that failed.
        let _ = out.into_parts();
    }
    result
}

/// Parts smaller than this are gathered into writes of this size.
const GATHER: usize = 256 * 1024;
/// How much is written before it is sent on to the disk.
const FLUSH_AHEAD: usize = 8 * 1024 * 1024;

/// Starts writing `len` bytes at `offset` to the disk without waiting
/// (a hint: where it is not supported, the fsync does all of it).
#[cfg(target_os = "linux")]
fn start_writeback(file: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (libc::off64_t::try_from(offset), libc::off64_t::try_from(len))
    else {
        return;
    };
    // SAFETY: a hint about a range of a file we hold open; no memory is
    // passed.
    unsafe {
        libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE);
    }
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_file: &File, _offset: u64, _len: u64) {}

/// Reserves the blocks `len` bytes need without changing the file, so that a
/// full disk fails here, before a byte of the target is overwritten. File
/// systems that cannot reserve are written without.
#[cfg(target_os = "linux")]
fn reserve_space(file: &File, len: usize) -> io::Result<()> {
    use nix::errno::Errno;
    use nix::fcntl::{fallocate, FallocateFlags};
    use std::os::fd::AsRawFd;
    let Ok(len) = libc::off_t::try_from(len) else {
        return Err(io::Error::from_raw_os_error(libc::EFBIG));
    };
    if len == 0 {
        return Ok(());
    }
    match fallocate(file.as_raw_fd(), FallocateFlags::FALLOC_FL_KEEP_SIZE, 0, len) {
        Ok(()) => Ok(()),
        Err(errno @ (Errno::ENOSPC | Errno::EDQUOT | Errno::EFBIG)) => Err(errno.into()),
        // Not supported here (tmpfs before 3.5, NFS, FUSE …): write without.
        Err(_) => Ok(()),
    }
}

#[cfg(not(target_os = "linux"))]
fn reserve_space(_file: &File, _len: usize) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Content in pieces, as an edit gives it.
    struct Pieces<'a>(&'a [&'a [u8]]);

    impl Content for Pieces<'_> {
        fn size(&self) -> usize {
            self.0.iter().map(|p| p.len()).sum()
        }

        fn each_piece(&self, sink: &mut dyn FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
            self.0.iter().try_for_each(|p| sink(p))
        }
    }

    #[test]
    fn pieces_are_written_in_order_small_and_large() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let large: Vec<u8> = (0..FLUSH_AHEAD + 12345).map(|i| (i % 251) as u8).collect();
        let parts: [&[u8]; 5] = [&large, b"a", b"", b"bc", &large[..FLUSH_AHEAD - 1]];
        let path = path.to_str().unwrap();
        let target = Target::resolve(path, None).unwrap();
        write(&target, path, &Pieces(&parts)).unwrap();
        assert!(fs::read(path).unwrap() == parts.concat());
    }
}
