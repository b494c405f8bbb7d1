//! What a not-found or permission answer adds about the path it names
//! (docs/SPEC.md, "Error codes"): the answer keeps its start, `File not found:
//! PATH` with PATH as the model gave it (hosts match on it), and tells in
//! parentheses what was looked up when that differs from what was given:
//!
//! - a path the model wrote for a shell (`~/.bashrc`, `$HOME/x`), which no
//!   tool expands: said, with the expansion the shell would have made where
//!   it is known, to be copied;
//! - a relative path: the absolute path it was resolved to, against the
//!   working directory or, confined, the directory beneath the roots it is
//!   taken from (`Roots::working_dir`), which a model given roots by an MCP
//!   client cannot see.
//!
//! One function, `explain`, used by every tool that opens a path the model
//! gave: file_read, file_write, file_edit, bash's `workdir`, grep's `path`.

use std::path::{Path, PathBuf};

use crate::confine::Roots;
use crate::error::ToolError;

/// `err`, met on the path `given`, with what was looked up told after its
/// message: for `FILE_NOT_FOUND` and `PERMISSION_DENIED` naming `given`
/// itself (a confinement refusal says more already), and `OPEN_FAILED` for
/// a missing directory. Any other error is returned as it is.
pub fn explain(err: ToolError, given: &str, roots: Option<&Roots>) -> ToolError {
    match err {
        ToolError::FileNotFound(p) if p == given => match missing_note(given, roots) {
            Some(note) => ToolError::FileNotFound(format!("{p} ({note})")),
            None => ToolError::FileNotFound(p),
        },
        ToolError::PermissionDenied(p) if p == given => match resolved(given, roots) {
            Some(path) => ToolError::PermissionDenied(format!("{p} (resolved to {path})")),
            None => ToolError::PermissionDenied(p),
        },
        // `Cannot open file: a/b.txt (the directory a does not exist)`: the
        // note joins the reason inside its parentheses.
        ToolError::OpenFailed(told) if is_missing_directory(&told, given) => {
            match (missing_note(given, roots), told.strip_suffix(')')) {
                (Some(note), Some(open)) => ToolError::OpenFailed(format!("{open}; {note})")),
                _ => ToolError::OpenFailed(told),
            }
        }
        other => other,
    }
}

/// Whether `told` is `GIVEN (the directory DIR does not exist)`
/// (`Why::NoDirectory` naming the path's own parent; one a link leads to
/// is not where the path was looked for).
fn is_missing_directory(told: &str, given: &str) -> bool {
    let why = told.strip_prefix(given).and_then(|why| why.strip_prefix(" (the directory "));
    why.is_some_and(|why| !why.starts_with("it would be in ") && why.ends_with(" does not exist)"))
}

/// What a path that was not found adds: that `~` and `$VARIABLES` are not
/// expanded, if it holds one; else where a relative path was looked for.
fn missing_note(given: &str, roots: Option<&Roots>) -> Option<String> {
    if written_for_a_shell(given) {
        let told = "the tool does not expand ~ or $VARIABLES: give the full path";
        return Some(match shell_expansion(given) {
            Some(path) => format!("{told}, e.g. {path}"),
            None => told.to_owned(),
        });
    }
    resolved(given, roots).map(|path| format!("looked for {path}"))
}

/// The absolute path a relative `given` names: beneath the roots, from
/// their working directory; else from the process's. `None` for an
/// absolute path (what was looked for is what was given).
fn resolved(given: &str, roots: Option<&Roots>) -> Option<String> {
    let path = Path::new(given);
    if path.is_absolute() || given.is_empty() {
        return None;
    }
    let base = match roots {
        Some(roots) => roots.working_dir(),
        None => std::env::current_dir().ok()?,
    };
    // `./a//b` as `a/b`; `..` is kept, as the kernel met it.
    let full: PathBuf = base.join(path).components().collect();
    Some(full.display().to_string())
}

/// Whether `path` starts with `~` or holds `$NAME` or `${NAME}`: what a
/// shell would have expanded.
fn written_for_a_shell(path: &str) -> bool {
    path.starts_with('~') || variables(path).next().is_some()
}

/// The `$NAME` and `${NAME}` of `path`: (where it starts, where it ends,
/// the name).
fn variables(path: &str) -> impl Iterator<Item = (usize, usize, &str)> {
    path.match_indices('$').filter_map(move |(at, _)| {
        let rest = &path[at + 1..];
        let (name, len) = match rest.strip_prefix('{') {
            Some(braced) => {
                let name = &braced[..braced.find('}')?];
                (name, name.len() + 2)
            }
            None => {
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                (&rest[..end], end)
            }
        };
        let is_name = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        is_name.then_some((at, at + 1 + len, name))
    })
}

/// `path` as a shell would have expanded it, from this process's
/// environment (the one bash runs commands with): `~` and `~/…` from
/// `HOME`, each variable from its value. `None` when one of them is unset
/// or empty, or for `~user`. Read only on the way to an error answer.
fn shell_expansion(path: &str) -> Option<String> {
    let value = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let mut out = String::new();
    let mut rest = path;
    if let Some(after) = path.strip_prefix('~') {
        if !(after.is_empty() || after.starts_with('/')) {
            return None;
        }
        out.push_str(&value("HOME")?);
        rest = after;
    }
    let mut from = 0;
    for (start, end, name) in variables(rest) {
        out.push_str(&rest[from..start]);
        out.push_str(&value(name)?);
        from = end;
    }
    out.push_str(&rest[from..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_found_where_a_shell_would_expand_them() {
        for path in ["~", "~/.bashrc", "~root/x", "$HOME/x", "/a/${USER}/b", "a$_x"] {
            assert!(written_for_a_shell(path), "{path}");
        }
        for path in ["a~b", "/x/~", "price$", "a$1", "${", "${1}", "a/$/b", ""] {
            assert!(!written_for_a_shell(path), "{path}");
        }
        let found: Vec<_> = variables("$A/${B_2}x$").collect();
        assert_eq!(found, vec![(0, 2, "A"), (3, 9, "B_2")]);
    }

    #[test]
    fn the_expansion_is_the_shells_where_it_is_known() {
        let home = std::env::var("HOME").unwrap_or_default();
        if !home.is_empty() {
            assert_eq!(shell_expansion("~/.bashrc"), Some(format!("{home}/.bashrc")));
            assert_eq!(shell_expansion("~"), Some(home.clone()));
            assert_eq!(shell_expansion("${HOME}/a$HOME"), Some(format!("{home}/a{home}")));
        }
        assert_eq!(shell_expansion("~root/x"), None);
        assert_eq!(shell_expansion("/x/$IKIGAI_SURELY_UNSET_VARIABLE/y"), None);
    }

    #[test]
    fn only_the_errors_on_the_given_path_are_explained() {
        let cwd = std::env::current_dir().unwrap();
        let looked = cwd.join("a/b.txt").display().to_string();
        assert_eq!(
            explain(ToolError::FileNotFound("./a//b.txt".into()), "./a//b.txt", None).to_string(),
            format!("File not found: ./a//b.txt (looked for {looked})")
        );
        assert_eq!(
            explain(ToolError::PermissionDenied("a/b.txt".into()), "a/b.txt", None).to_string(),
            format!("Permission denied: a/b.txt (resolved to {looked})")
        );
        let missing = ToolError::OpenFailed("a/b.txt (the directory a does not exist)".into());
        assert_eq!(
            explain(missing, "a/b.txt", None).to_string(),
            format!(
                "Cannot open file: a/b.txt (the directory a does not exist; looked for {looked})"
            )
        );
        // An absolute path, another error, a refusal: as they were.
        let unchanged = [
            (ToolError::FileNotFound("/a".into()), "/a"),
            (ToolError::ReadFailed("d (it is a directory)".into()), "d"),
            (ToolError::PermissionDenied("x is outside the allowed roots (/r)".into()), "x"),
            (ToolError::OpenFailed("d (it is a directory)".into()), "d"),
        ];
        for (err, given) in unchanged {
            assert_eq!(explain(err.clone(), given, None), err);
        }
        let unknown = explain(ToolError::FileNotFound("~root/x".into()), "~root/x", None);
        assert_eq!(
            unknown.to_string(),
            "File not found: ~root/x (the tool does not expand ~ or $VARIABLES: give the full path)"
        );
    }
}
