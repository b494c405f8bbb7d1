//! The patch put in place, all or nothing (docs/GUARANTEES.md, "apply_patch").
//!
//! 1. **Prepare**: the directories new files need are made (beneath the
//!    roots when confined), and every new content is written to a
//!    temporary file beside its target and flushed, with the target's
//!    owner, mode and attributes (`fs::atomic_write::prepare`). A failure
//!    here removes the temporary files and the directories made: nothing
//!    changed.
//! 2. **Commit**, with the stop signals held back: each file changed in
//!    one rename. An existing file is exchanged with its temporary file
//!    (`RENAME_EXCHANGE`: the old content stays at the temporary name), a
//!    new one renamed into place (never replacing one that appeared
//!    meanwhile), a deleted one renamed aside. Files the writer writes in
//!    place (several hard links, another owner's, not a regular file, an
//!    append-only directory) are written last, their old content kept in
//!    memory. If a step fails, the steps done are undone in reverse order
//!    (exchanged back, renamed back, written back), so every file is as it
//!    was.
//! 3. **Finish**: the directories flushed, the old contents (at the
//!    temporary names) removed.
//!
//! A crash or SIGKILL during 2 leaves each file entirely old or entirely
//! new, some files new and others old, and `.NAME.ikigai-tmp-XXXXXX` files
//! holding the other version beside them.

use std::io;

use rustix::fs::{AtFlags, Stat};

use crate::confine::Roots;
use crate::error::ToolError;
use crate::fs::atomic_write::{self, Prepared};
use crate::fs::make_dirs;
use crate::fs::signals;
use crate::fs::target::Target;
use crate::fs::temp_file::{Aside, TempFile};

use super::files::{Files, State};

/// Why the commit failed.
pub enum Failed {
    /// Every step done was undone: nothing changed.
    Undone(ToolError),
    /// An undo failed too: the error names the files left changed.
    Partly(ToolError),
}

/// One file's change, ready.
enum Step<'t> {
    Write { target: &'t Target, full: &'t str, content: &'t [u8], prepared: Box<Prepared<'t>> },
    Remove { target: &'t Target, full: &'t str },
}

/// One file's change, done: what undoes it, and what finishes it.
enum Done<'t> {
    /// The new content is in place; the temporary file holds the old one.
    Exchanged(TempFile<'t>, &'t Target),
    /// The old file renamed aside, the new one renamed into place (where
    /// the file system cannot exchange).
    Replaced(Aside<'t>, &'t Target),
    /// A new file renamed into place.
    Created(&'t Target),
    /// The old file renamed aside (deleted).
    Removed(Aside<'t>, &'t Target),
    /// Written in place; the old content to write back.
    Overwritten { target: &'t Target, full: &'t str, old: &'t [u8], meta: Stat },
    /// A new file created in place.
    CreatedInPlace(&'t Target),
}

pub fn commit(files: &Files, roots: Option<&Roots>) -> Result<(), Failed> {
    let mut made = Vec::new();
    let result = commit_made(files, roots, &mut made);
    if matches!(result, Err(Failed::Undone(_))) {
        make_dirs::remove_made(&made, roots);
    }
    result
}

fn commit_made(
    files: &Files,
    roots: Option<&Roots>,
    made: &mut Vec<std::path::PathBuf>,
) -> Result<(), Failed> {
    let changed: Vec<_> = files.entries.iter().filter(|e| e.changed()).collect();
    // New files: their directories, then where they go.
    let mut new_targets: Vec<(usize, Target)> = Vec::new();
    for (n, entry) in changed.iter().enumerate() {
        if entry.target.is_some() || !matches!(entry.current, State::File(_)) {
            continue;
        }
        let full = entry.path.full.as_str();
        let explained = |e| crate::fs::looked_up::explain(e, full, roots);
        made.extend(make_dirs::parents(full, roots).map_err(|e| Failed::Undone(explained(e)))?);
        let target = Target::for_write(full, roots).map_err(|e| Failed::Undone(explained(e)))?;
        new_targets.push((n, target));
    }
    let target_of = |n: usize| -> Option<&Target> {
        changed[n]
            .target
            .as_ref()
            .or_else(|| new_targets.iter().find(|(m, _)| *m == n).map(|(_, t)| t))
    };
    let mut steps = Vec::new();
    for (n, entry) in changed.iter().enumerate() {
        let full = entry.path.full.as_str();
        let Some(target) = target_of(n) else {
            return Err(Failed::Undone(ToolError::WriteFailed(full.to_owned())));
        };
        match &entry.current {
            State::File(content) => {
                let like = entry
                    .moved_from
                    .filter(|_| entry.target.is_none())
                    .and_then(|from| files.entries[from].target.as_ref())
                    .and_then(|source| source.stat().ok().map(|meta| (source, meta)));
                let like = like.as_ref().map(|(source, meta)| (*source, meta));
                let prepared = atomic_write::prepare(target, full, &content[..], like)
                    .map_err(Failed::Undone)?;
                steps.push(Step::Write { target, full, content, prepared: Box::new(prepared) });
            }
            _ => steps.push(Step::Remove { target, full }),
        }
    }
    // The renames, then the writes in place, each undone should one fail;
    // a stop signal waits until all are done or undone.
    signals::blocked(|| {
        let mut done: Vec<Done> = Vec::new();
        let (renames, in_place): (Vec<_>, Vec<_>) = steps.into_iter().partition(|s| {
            !matches!(s, Step::Write { prepared, .. }
                if matches!(**prepared, Prepared::InPlace(_) | Prepared::CreateInPlace))
        });
        let originals: Vec<(&str, &[u8])> = changed
            .iter()
            .filter_map(|e| match &e.original {
                State::File(old) => Some((e.path.full.as_str(), &old[..])),
                _ => None,
            })
            .collect();
        for step in renames.into_iter().chain(in_place) {
            match take(step, &originals) {
                Ok(d) => done.push(d),
                Err(e) => return Err(undo(done, e)),
            }
        }
        finish(done);
        Ok(())
    })
}

/// Takes one step.
fn take<'t>(step: Step<'t>, originals: &[(&str, &'t [u8])]) -> Result<Done<'t>, ToolError> {
    let failed = |e: io::Error, full: &str| ToolError::from_io(&e, full, ToolError::WriteFailed);
    let (target, full, content, prepared) = match step {
        Step::Remove { target, full } => {
            return Aside::move_aside(target.dir(), target.name())
                .map(|aside| Done::Removed(aside, target))
                .map_err(|e| failed(e, full));
        }
        Step::Write { target, full, content, prepared } => (target, full, content, *prepared),
    };
    match prepared {
        Prepared::Temp { temp, existing: Some(_) } => match temp.exchange(target.name()) {
            Ok(()) => Ok(Done::Exchanged(temp, target)),
            // No exchange here: the old file aside, the new in place.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                let aside =
                    Aside::move_aside(target.dir(), target.name()).map_err(|e| failed(e, full))?;
                match temp.rename_new(target.name()) {
                    Ok(()) => Ok(Done::Replaced(aside, target)),
                    Err(e) => {
                        let _ = aside.put_back();
                        Err(failed(e, full))
                    }
                }
            }
            Err(e) => Err(failed(e, full)),
        },
        Prepared::Temp { temp, existing: None } => match temp.rename_new(target.name()) {
            Ok(()) => Ok(Done::Created(target)),
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => Err(ToolError::WriteFailed(
                format!("{full} (a file appeared there while the patch was applied)"),
            )),
            Err(e) => Err(failed(e, full)),
        },
        Prepared::InPlace(meta) => {
            let old = originals.iter().find(|(f, _)| *f == full).map_or(&[][..], |(_, o)| *o);
            atomic_write::overwrite(target, full, content, &meta)?;
            Ok(Done::Overwritten { target, full, old, meta })
        }
        Prepared::CreateInPlace => {
            atomic_write::create_directly(target, full, content)?;
            Ok(Done::CreatedInPlace(target))
        }
    }
}

/// Undoes the steps `done`, last first; `Undone(err)` if all were undone.
fn undo(done: Vec<Done>, err: ToolError) -> Failed {
    let mut left = Vec::new();
    for d in done.into_iter().rev() {
        let (ok, target) = match d {
            Done::Exchanged(temp, target) => (temp.exchange(target.name()).is_ok(), target),
            Done::Replaced(aside, target) | Done::Removed(aside, target) => {
                (aside.put_back().is_ok(), target)
            }
            Done::Created(target) | Done::CreatedInPlace(target) => (
                rustix::fs::unlinkat(target.dir(), target.name(), AtFlags::empty()).is_ok(),
                target,
            ),
            Done::Overwritten { target, full, old, meta } => {
                (atomic_write::overwrite(target, full, old, &meta).is_ok(), target)
            }
        };
        if !ok {
            left.push(target.name().to_string_lossy().into_owned());
        }
    }
    if left.is_empty() {
        Failed::Undone(err)
    } else {
        let note =
            format!("the patch was partly applied: {} could not be restored", left.join(", "));
        Failed::Partly(err.detailed(Some(note), Vec::new()))
    }
}

/// The commit done: each directory flushed (the renames made durable),
/// then the old contents removed.
fn finish(done: Vec<Done>) {
    for d in &done {
        let target = match d {
            Done::Exchanged(_, t)
            | Done::Replaced(_, t)
            | Done::Created(t)
            | Done::Removed(_, t) => t,
            Done::Overwritten { target, .. } | Done::CreatedInPlace(target) => target,
        };
        atomic_write::flush_dir(target);
    }
    for d in done {
        match d {
            // Dropped: the temporary name, which holds the old content, goes.
            Done::Exchanged(temp, _) => drop(temp),
            Done::Replaced(aside, _) | Done::Removed(aside, _) => aside.remove(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_failed_step_undoes_the_exchanges_and_removals_done() {
        let dir = tempfile::tempdir().unwrap();
        let (f, g) = (dir.path().join("f"), dir.path().join("g"));
        fs_write(&f, b"old f");
        fs_write(&g, b"old g");
        let (f_path, g_path) = (f.to_str().unwrap(), g.to_str().unwrap());
        let (tf, tg) =
            (Target::resolve(f_path, None).unwrap(), Target::resolve(g_path, None).unwrap());
        let temp = TempFile::create(tf.dir(), tf.name(), 0o600).unwrap();
        temp.file().write_all(b"new f").unwrap();
        temp.exchange(tf.name()).unwrap();
        let aside = Aside::move_aside(tg.dir(), tg.name()).unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"new f");
        assert!(!g.exists());
        let done = vec![Done::Exchanged(temp, &tf), Done::Removed(aside, &tg)];
        let failed = undo(done, ToolError::WriteFailed("h".to_owned()));
        assert!(matches!(failed, Failed::Undone(ToolError::WriteFailed(_))));
        assert_eq!(std::fs::read(&f).unwrap(), b"old f");
        assert_eq!(std::fs::read(&g).unwrap(), b"old g");
        // Nothing else left in the directory: the temporary file is gone.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    fn fs_write(path: &std::path::Path, bytes: &[u8]) {
        std::fs::write(path, bytes).unwrap();
    }
}
