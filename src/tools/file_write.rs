//! file_write: creates or overwrites a file with `content` (CONTRACT §4).
//! The writing itself, crash-safe and keeping mode, owner, attributes and
//! links, is `fs::atomic_write`'s; the lock that serialises it with edits
//! and other writes of the file is `fs::lock`'s. This file is the tool's
//! arguments and answer.

use crate::fs::{atomic_write, basename, lock};
use crate::json::Field;
use crate::protocol::{Args, Outcome};

pub fn run(args: &Args) -> Outcome {
    let path = args.required_path("file_path")?;
    let content = args.required_str("content")?;
    // Held until the new content is in place.
    let lock = lock::for_write(path)?;
    atomic_write::write(path, content.as_bytes())?;
    drop(lock);
    let bytes = content.len();
    let output = format!("Wrote {bytes} bytes to {}", basename(path));
    Ok(vec![("output", Field::Text(output.into_bytes())), ("bytes", Field::Int(bytes as i64))])
}
