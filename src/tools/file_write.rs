//! file_write: creates or overwrites a file with `content` (docs/TOOLS.md).
//! The writing itself, crash-safe and keeping mode, owner, attributes and
//! links, is `fs::atomic_write`'s (on the directory and name `fs::target`
//! resolves, beneath the allowed roots if any: docs/CONFINEMENT.md); the lock that serialises it
//! with edits and other writes
//! of the file is `fs::lock`'s. This file is the tool's
//! arguments and answer.

use crate::context::Context;
use crate::fs::target::Target;
use crate::fs::{atomic_write, basename, lock};
use crate::json::Field;
use crate::protocol::{Args, Outcome};

pub fn run(args: &Args, context: &Context) -> Outcome {
    let path = args.required_path("file_path")?;
    let content = args.required_str("content")?;
    // The directory and name written, beneath the roots if any.
    let target = Target::for_write(path, context.roots()?)?;
    // Held until the new content is in place.
    let lock = lock::for_write(path, &target, context.lock_wait)?;
    atomic_write::write(&target, path, content.as_bytes())?;
    drop(lock);
    let bytes = content.len();
    let output = format!("Wrote {bytes} bytes to {}", basename(path));
    Ok(vec![("output", Field::Text(output.into_bytes())), ("bytes", Field::Int(bytes as i64))])
}
