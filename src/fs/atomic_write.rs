//! Crash-safe writing, shared by file_write and file_edit (CONTRACT §4, "how
//! a file is written").
//!
//! The new content goes to a temporary file in the target's own directory
//! (`.NAME.ikigai-tmp-XXXXXX`), which is flushed to disk and renamed over the
//! target, and then the directory is flushed too: a reader, or a machine that
//! crashes, sees the old file or the new one, never half of each. The
//! target's permission bits, owner and group are kept; a symbolic link
//! keeps being a link and the file it points to is written.
//!
//! Where a rename would be wrong or impossible the file is written in place:
//! several hard links (a rename would split them), not a regular file
//! (`/dev/null`, a FIFO), a directory we may not write while the file is
//! writable, or somebody else's file whose owner a new file could not get. Space is reserved first where the file system can, so that a
//! full disk leaves even an in-place target untouched.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use nix::unistd::{faccessat, fchown, AccessFlags, Gid, Uid};

use crate::error::ToolError;
use crate::fs::open::clear_nonblock;

/// Marks our temporary files, so that one left by a killed process is
/// recognisable for what it is.
const TEMP_MARK: &str = ".ikigai-tmp-";

/// Symbolic links followed before giving up, as the kernel does (ELOOP).
const MAX_SYMLINKS: usize = 40;

/// The longest file name most file systems take (NAME_MAX).
const NAME_MAX: usize = 255;

/// Writes `content` to `path` (as the caller gave it; error messages name it
/// so) crash-safely, or in place where a rename would be wrong.
pub fn write(path: &str, content: &[u8]) -> Result<(), ToolError> {
    write_parts(path, &[content])
}

/// `write` of the concatenation of `parts`, without making it: an edit of a
/// large file writes the unchanged stretches straight from the old content.
pub fn write_parts(path: &str, parts: &[&[u8]]) -> Result<(), ToolError> {
    let content = Parts(parts);
    // A file size limit (`ulimit -f`) must fail the write with EFBIG, which
    // we report, rather than kill the tool with SIGXFSZ before it answers.
    // SAFETY: setting a signal disposition to SIG_IGN has no preconditions.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    // `fopen("dir/", "w")` fails whether or not `dir` exists: a path with a
    // trailing slash names a directory, never a file to write.
    if path.ends_with('/') {
        return Err(ToolError::OpenFailed(path.to_owned()));
    }
    let open_failed = |e: &io::Error| ToolError::from_io(e, path, ToolError::OpenFailed);
    let target = resolve_symlinks(Path::new(path)).map_err(|e| open_failed(&e))?;
    let meta = match fs::metadata(&target) {
        Ok(meta) => meta,
        // A new file; its parent must exist, and a missing one is
        // OPEN_FAILED, not FILE_NOT_FOUND (seed 000).
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
            return replace(&target, content, None).map_err(|err| match err {
                Failure::Create(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                    ToolError::OpenFailed(path.to_owned())
                }
                other => other.into_tool_error(path),
            });
        }
        Err(e) => return Err(open_failed(&e)),
    };
    if meta.is_dir() {
        return Err(ToolError::OpenFailed(path.to_owned()));
    }
    // The rename below would replace a file we may not write (a read-only
    // file in a writable directory): refuse, as opening it would.
    faccessat(None, &target, AccessFlags::W_OK, nix::fcntl::AtFlags::AT_EACCESS)
        .map_err(|errno| open_failed(&io::Error::from(errno)))?;
    if !meta.is_file() || meta.nlink() > 1 {
        return write_in_place(&target, content, &meta, path);
    }
    match replace(&target, content, Some(&meta)) {
        Ok(()) => Ok(()),
        // The directory refuses a new entry or the rename (not writable,
        // sticky, read-only mount, a bind-mounted file) while the file
        // itself is writable: write it in place.
        Err(Failure::Create(e) | Failure::Rename(e)) if rename_refused(&e) => {
            write_in_place(&target, content, &meta, path)
        }
        // Somebody else's file we may write: a new file would be ours, so
        // write theirs in place (as Emacs and Vim do) and it stays theirs.
        Err(Failure::Owner) => write_in_place(&target, content, &meta, path),
        Err(other) => Err(other.into_tool_error(path)),
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
}

impl Failure {
    fn into_tool_error(self, path: &str) -> ToolError {
        match self {
            Failure::Create(e) => ToolError::from_io(&e, path, ToolError::OpenFailed),
            Failure::Write(e) | Failure::Rename(e) => {
                ToolError::from_io(&e, path, ToolError::WriteFailed)
            }
            Failure::Owner => ToolError::WriteFailed(path.to_owned()),
        }
    }
}

fn rename_refused(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EACCES | libc::EPERM | libc::EROFS | libc::EBUSY | libc::EXDEV)
    )
}

/// Follows `path` through symbolic links (chains and relative links
/// included) to the path of the file they end at, which may not exist yet
/// (a dangling link: writing creates its target, as `echo > link` does).
fn resolve_symlinks(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_SYMLINKS {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let next = fs::read_link(&current)?;
                current = if next.is_absolute() {
                    next
                } else {
                    // Relative to the directory holding the link.
                    current.parent().unwrap_or(Path::new("")).join(next)
                };
            }
            // Not a link, or nothing there (yet): later steps report errors
            // with the right code.
            _ => return Ok(current),
        }
    }
    Err(io::Error::from_raw_os_error(libc::ELOOP))
}

/// Writes a temporary file next to `target` and renames it over it.
/// `existing` is the target's metadata, `None` for a new file.
fn replace(target: &Path, content: Parts<'_>, existing: Option<&Metadata>) -> Result<(), Failure> {
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = target.file_name().unwrap_or(target.as_os_str());
    // A new file gets 0666 less the umask, which open() applies. An existing
    // file's mode is set once its owner is (chown clears set-id bits); until
    // then only we may read the temporary file.
    let create_mode = if existing.is_some() { 0o600 } else { 0o666 };
    let mut temp = TempFile::create(dir, name, create_mode).map_err(Failure::Create)?;
    if let Some(meta) = existing {
        if !keep_owner(&temp.file, meta).map_err(Failure::Write)? {
            return Err(Failure::Owner);
        }
        // After the owner: chown clears set-id bits.
        let mode = fs::Permissions::from_mode(meta.mode() & 0o7777);
        temp.file.set_permissions(mode).map_err(Failure::Write)?;
    }
    content.write_to(&temp.file).map_err(Failure::Write)?;
    temp.file.sync_all().map_err(Failure::Write)?;
    fs::rename(&temp.path, target).map_err(Failure::Rename)?;
    temp.renamed = true;
    // The rename itself is durable only once the directory is flushed.
    // Some file systems cannot sync a directory; the file is written anyway.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Gives the temporary file the target's owner and group; false when the
/// process may not (it is not root, and the file is not its own or has a
/// group it is not in).
fn keep_owner(file: &File, meta: &Metadata) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    let ours = file.metadata()?;
    let uid = (ours.uid() != meta.uid()).then(|| Uid::from_raw(meta.uid()));
    let gid = (ours.gid() != meta.gid()).then(|| Gid::from_raw(meta.gid()));
    if uid.is_none() && gid.is_none() {
        return Ok(true);
    }
    Ok(fchown(file.as_raw_fd(), uid, gid).is_ok())
}

/// A temporary file that removes itself unless it was renamed into place.
struct TempFile {
    path: PathBuf,
    file: File,
    renamed: bool,
}

impl TempFile {
    fn create(dir: &Path, name: &OsStr, mode: u32) -> io::Result<TempFile> {
        let seed = random_seed();
        let mut last_err = io::Error::from_raw_os_error(libc::EEXIST);
        for attempt in 0..100u64 {
            let path = dir.join(temp_name(
                name,
                seed.wrapping_add(attempt.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            ));
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(mode)
                .custom_flags(libc::O_CLOEXEC)
                .open(&path)
            {
                Ok(file) => return Ok(TempFile { path, file, renamed: false }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last_err = e,
                Err(e) => return Err(e),
            }
        }
        Err(last_err)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// `.NAME.ikigai-tmp-XXXXXX`, with NAME shortened so that the whole stays
/// within NAME_MAX.
fn temp_name(name: &OsStr, random: u64) -> OsString {
    const SUFFIX_LEN: usize = 6;
    let room = NAME_MAX - 1 - TEMP_MARK.len() - SUFFIX_LEN;
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(NAME_MAX);
    out.push(b'.');
    out.extend_from_slice(&bytes[..bytes.len().min(room)]);
    out.extend_from_slice(TEMP_MARK.as_bytes());
    const ALPHABET: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut r = random;
    for _ in 0..SUFFIX_LEN {
        out.push(ALPHABET[(r % ALPHABET.len() as u64) as usize]);
        r /= ALPHABET.len() as u64;
    }
    OsString::from_vec(out)
}

/// Enough randomness to make a name collision with a concurrent writer
/// unlikely; `create_new` makes one harmless anyway.
fn random_seed() -> u64 {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let pid = u64::from(std::process::id());
    // splitmix64 finaliser: spread the bits of time and pid over the word.
    let mut z = nanos ^ pid.rotate_left(32);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Writes over the existing file itself: its inode, links, owner and mode
/// stay as they are.
fn write_in_place(
    target: &Path,
    content: Parts<'_>,
    meta: &Metadata,
    path: &str,
) -> Result<(), ToolError> {
    use std::os::unix::fs::FileTypeExt;
    let regular = meta.is_file();
    let fifo = meta.file_type().is_fifo();
    // A FIFO without a reader would block the open forever; O_NONBLOCK makes
    // it fail (ENXIO) instead.
    let flags = libc::O_CLOEXEC | if fifo { libc::O_NONBLOCK } else { 0 };
    let file = OpenOptions::new()
        .write(true)
        .custom_flags(flags)
        .open(target)
        .map_err(|e| ToolError::from_io(&e, path, ToolError::OpenFailed))?;
    let write_failed = |e: io::Error| ToolError::from_io(&e, path, ToolError::WriteFailed);
    if fifo {
        clear_nonblock(&file).map_err(write_failed)?;
    }
    if regular {
        reserve_space(&file, content.len()).map_err(write_failed)?;
    }
    content.write_to(&file).map_err(write_failed)?;
    if regular {
        // Cut off what remains of a longer old content.
        file.set_len(content.len() as u64).map_err(write_failed)?;
        file.sync_all().map_err(write_failed)?;
    }
    Ok(())
}

/// The content to write, in pieces.
#[derive(Clone, Copy)]
struct Parts<'a>(&'a [&'a [u8]]);

impl Parts<'_> {
    fn len(self) -> usize {
        self.0.iter().map(|part| part.len()).sum()
    }

    /// Writes the parts in order: large ones as they are, small ones
    /// gathered into few writes. Each `FLUSH_AHEAD` bytes written are sent
    /// on to the disk at once, so that the disk works while the rest is
    /// written and the final fsync has little left to wait for.
    fn write_to(self, file: &File) -> io::Result<()> {
        let mut out = io::BufWriter::with_capacity(GATHER, file);
        let mut flushed = 0u64;
        let mut written = 0u64;
        let result = self
            .0
            .iter()
            .flat_map(|part| part.chunks(FLUSH_AHEAD))
            .try_for_each(|piece| {
                out.write_all(piece)?;
                written += piece.len() as u64;
                if written - flushed >= FLUSH_AHEAD as u64 {
                    out.flush()?;
                    start_writeback(file, flushed, written - flushed);
                    flushed = written;
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

    #[test]
    fn parts_are_written_in_order_small_and_large() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let large: Vec<u8> = (0..FLUSH_AHEAD + 12345).map(|i| (i % 251) as u8).collect();
        let parts: [&[u8]; 5] = [&large, b"a", b"", b"bc", &large[..FLUSH_AHEAD - 1]];
        write_parts(path.to_str().unwrap(), &parts).unwrap();
        assert!(fs::read(&path).unwrap() == parts.concat());
    }

    #[test]
    fn temp_names_are_recognisable_and_fit_name_max() {
        let short = temp_name(OsStr::new("notes.txt"), 0);
        let short = short.to_str().unwrap();
        assert!(short.starts_with(".notes.txt.ikigai-tmp-"), "{short}");
        assert_eq!(short.len(), ".notes.txt.ikigai-tmp-".len() + 6);
        let long = "x".repeat(255);
        assert_eq!(temp_name(OsStr::new(&long), u64::MAX).len(), NAME_MAX);
    }

    #[test]
    fn relative_symlink_chains_resolve_against_their_directories() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::create_dir(d.join("sub")).unwrap();
        fs::write(d.join("real.txt"), "x").unwrap();
        std::os::unix::fs::symlink("../real.txt", d.join("sub/one")).unwrap();
        std::os::unix::fs::symlink("sub/one", d.join("two")).unwrap();
        assert_eq!(resolve_symlinks(&d.join("two")).unwrap(), d.join("sub/../real.txt"));
        std::os::unix::fs::symlink("loop", d.join("loop")).unwrap();
        assert_eq!(
            resolve_symlinks(&d.join("loop")).unwrap_err().raw_os_error(),
            Some(libc::ELOOP)
        );
    }
}
