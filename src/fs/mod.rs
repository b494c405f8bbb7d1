//! What several tools share about the file system.

pub mod atomic_write;
pub mod pattern;
pub mod walk;
