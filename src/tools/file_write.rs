//! file_write: creates or overwrites a file with `content` (CONTRACT §4).
//! The writing itself, crash-safe and keeping mode, owner and links, is
//! `fs::atomic_write`'s; this file is the tool's arguments and answer.

use crate::fs::{atomic_write, basename};
use crate::json::Field;
use crate::protocol::{Args, Outcome};

pub fn run(args: &Args) -> Outcome {
    let path = args.required_path("file_path")?;
    let content = args.required_str("content")?;
    atomic_write::write(path, content.as_bytes())?;
    let bytes = content.len();
    let output = format!("Wrote {bytes} bytes to {}", basename(path));
    Ok(vec![("output", Field::Text(output.into_bytes())), ("bytes", Field::Int(bytes as i64))])
}
