//! PLACEHOLDER: crash-safe writing, shared by file_write and file_edit.
