//! What several tools share about the file system.

pub mod append_only;
pub mod atomic_write;
pub mod digest;
pub mod lock;
pub mod looked_up;
pub mod make_dirs;
pub mod open;
pub mod pattern;
pub mod read;
pub mod signals;
pub mod target;
pub mod temp_file;
pub mod walk;
pub mod xattrs;

/// The last component of `path`, as POSIX basename(3) gives it: trailing
/// slashes ignored, `/` for the root.
pub fn basename(path: &str) -> &str {
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
