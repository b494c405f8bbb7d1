//! The temporary file a crash-safe write fills before renaming it over the
//! target: `.NAME.ikigai-tmp-XXXXXX` in the target's directory, so that one
//! left by a killed process is recognisable for what it is. It is removed
//! when dropped unless renamed into place, and when the tool is stopped by
//! a signal (`fs::signals`).

use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use tempfile::NamedTempFile;

use crate::fs::signals::{self, Registration};

/// Marks our temporary files.
const TEMP_MARK: &str = ".ikigai-tmp-";
/// The random characters that end the name.
const RANDOM_LEN: usize = 6;
/// The longest file name most file systems take (NAME_MAX).
const NAME_MAX: usize = 255;

pub struct TempFile {
    // Dropped in this order: the file is removed, then unregistered.
    file: NamedTempFile,
    _cleanup: Registration,
}

impl TempFile {
    /// Creates the temporary file for `name` in `dir`, with `mode` (less the
    /// umask).
    pub fn create(dir: &Path, name: &OsStr, mode: u32) -> io::Result<TempFile> {
        let prefix = prefix(name);
        // Created and registered with the stop signals held back: one that
        // came in between would leave the file behind.
        signals::blocked(|| {
            let file = tempfile::Builder::new().prefix(&prefix).rand_bytes(RANDOM_LEN).make_in(
                dir,
                |path| {
                    OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .mode(mode)
                        .custom_flags(libc::O_CLOEXEC)
                        .open(path)
                },
            )?;
            let cleanup = signals::remove_on_signal(file.path());
            Ok(TempFile { file, _cleanup: cleanup })
        })
    }

    pub fn file(&self) -> &File {
        self.file.as_file()
    }

    /// Renames the file over `target`. On failure it is removed.
    pub fn rename_over(self, target: &Path) -> io::Result<()> {
        // The rename and the unregistering go together: a stop signal in
        // between would remove the target itself.
        signals::blocked(|| self.file.persist(target).map(drop).map_err(|e| e.error))
    }
}

/// `.NAME.ikigai-tmp-`, with NAME shortened so that the whole name, random
/// characters included, stays within NAME_MAX.
fn prefix(name: &OsStr) -> OsString {
    let room = NAME_MAX - 1 - TEMP_MARK.len() - RANDOM_LEN;
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(NAME_MAX);
    out.push(b'.');
    out.extend_from_slice(&bytes[..bytes.len().min(room)]);
    out.extend_from_slice(TEMP_MARK.as_bytes());
    OsString::from_vec(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_recognisable_and_fit_name_max() {
        let dir = tempfile::tempdir().unwrap();
        let temp = TempFile::create(dir.path(), OsStr::new("notes.txt"), 0o600).unwrap();
        let name = temp.file.path().file_name().unwrap().to_str().unwrap().to_owned();
        let random = name.strip_prefix(".notes.txt.ikigai-tmp-").unwrap();
        assert_eq!(random.len(), RANDOM_LEN, "{name}");
        assert!(random.bytes().all(|b| b.is_ascii_alphanumeric()), "{name}");
        let long = "x".repeat(255);
        let temp = TempFile::create(dir.path(), OsStr::new(&long), 0o600).unwrap();
        assert_eq!(temp.file.path().file_name().unwrap().len(), NAME_MAX);
    }

    #[test]
    fn dropped_it_is_gone_renamed_it_is_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let temp = TempFile::create(dir.path(), OsStr::new("f"), 0o600).unwrap();
        drop(temp);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let temp = TempFile::create(dir.path(), OsStr::new("f"), 0o600).unwrap();
        io::Write::write_all(&mut temp.file(), b"new").unwrap();
        temp.rename_over(&dir.path().join("f")).unwrap();
        assert_eq!(std::fs::read(dir.path().join("f")).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
