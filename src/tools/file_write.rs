//! file_write: creates or overwrites a file with `content` (CONTRACT §4).
//! The writing itself, crash-safe and keeping mode, owner and links, is
//! `fs::atomic_write`'s; this file is the tool's arguments and answer.

use crate::fs::atomic_write;
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

/// The last component of `path`, as POSIX basename(3) gives it: trailing
/// slashes ignored, `/` for the root.
pub(crate) fn basename(path: &str) -> &str {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return if path.is_empty() { "." } else { "/" };
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed)
}

#[cfg(test)]
mod tests {
    use super::basename;

    #[test]
    fn basename_is_posix() {
        assert_eq!(basename("/tmp/test.txt"), "test.txt");
        assert_eq!(basename("test.txt"), "test.txt");
        assert_eq!(basename("a/b/"), "b");
        assert_eq!(basename("/"), "/");
        assert_eq!(basename("./x"), "x");
    }
}
