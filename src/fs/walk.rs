//! PLACEHOLDER: the pattern walker, shared by glob and grep.
