//! Which known name a mistaken one meant, for "did you mean": the one
//! place that decides it, for a parameter (`params`), a tool or command on
//! the command line (`cli`, `host`) and a tool called over MCP.
//!
//! A parameter is a near miss by spelling only: models add keys of their
//! own (`description`, `reason`), which must not be taken for one. A tool
//! name is also a near miss by its words: models call the names other
//! hosts give the same tools (`Read`, `read_file`, `grep_search`).

/// The one of `known` that `name` most likely misspells: compared without
/// case, `_` and `-` (`replaceAll`, `file-raed`), one edit (a
/// transposition counting as one) per four letters, at least one. Close
/// enough for `offest`, `file_pth` and `gerp`; far from the keys models
/// add on their own (`description`, `reason`, `_meta`) and from `cat` for
/// `call`.
pub fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let wanted = plain(name);
    known
        .into_iter()
        .map(|k| (plain(k), k))
        .map(|(p, k)| (strsim::osa_distance(&wanted, &p), p.chars().count(), k))
        .filter(|(distance, len, _)| *distance <= 1.max(len / 4))
        .min_by_key(|(distance, _, _)| *distance)
        .map(|(_, _, k)| k)
}

/// The one of `known` the tool name `name` stands for: read as a file or
/// command name (`file-read.sh`, `grep_tool`, `tools::normalize_name`) and
/// then by `closest`; failing that by its words, `Read` or `ReadFile` or
/// `read_file` for `file_read`, `grep_search` for `grep`: the only known
/// name whose words are all in `name`, or, for a one-word `name`, the
/// only one with that word.
pub fn closest_tool<'a>(
    name: &str,
    known: impl IntoIterator<Item = &'a str> + Clone,
) -> Option<&'a str> {
    closest(&super::normalize_name(name), known.clone()).or_else(|| by_words(name, known))
}

/// `unknown tool 'NAME' (did you mean CLOSE?); the tools are: …`, the
/// answer to a call of a tool that is not there, on the command line and
/// over MCP.
pub fn unknown_tool<'a>(name: &str, known: impl IntoIterator<Item = &'a str> + Clone) -> String {
    let hint = match closest_tool(name, known.clone()) {
        Some(close) => format!(" (did you mean {close}?)"),
        None => String::new(),
    };
    let names: Vec<&str> = known.into_iter().collect();
    if names.is_empty() {
        format!("unknown tool '{name}'; there are no tools")
    } else {
        format!("unknown tool '{name}'{hint}; the tools are: {}", names.join(", "))
    }
}

/// The only known name whose words are all words of `name` (or, `name`
/// being one word, the only one holding it).
fn by_words<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let wanted = words(name);
    let fits = |k: &str| {
        let theirs = words(k);
        match wanted[..] {
            [ref one] => theirs.contains(one),
            _ => theirs.iter().all(|w| wanted.contains(w)),
        }
    };
    let mut fitting = known.into_iter().filter(|k| fits(k));
    match (fitting.next(), fitting.next()) {
        (Some(only), None) => Some(only),
        _ => None,
    }
}

/// The words of a name, in lower case: split at `_`, `-`, `.`, spaces and
/// where a capital follows a small letter (`ReadFile`).
fn words(name: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            previous_lower = false;
            words.push(String::new());
            continue;
        }
        if c.is_uppercase() && previous_lower {
            words.push(String::new());
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        match words.last_mut() {
            Some(word) => word.extend(c.to_lowercase()),
            None => words.push(c.to_lowercase().collect()),
        }
    }
    words.retain(|w| !w.is_empty());
    words
}

/// A name without case, `_` and `-`.
fn plain(name: &str) -> String {
    name.chars().filter(|c| !matches!(c, '_' | '-')).map(|c| c.to_ascii_lowercase()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOLS: [&str; 9] = [
        "bash",
        "file_read",
        "file_write",
        "file_edit",
        "glob",
        "grep",
        "job_output",
        "job_kill",
        "job_list",
    ];

    #[test]
    fn a_tool_is_found_by_its_spelling_or_by_its_words() {
        for (called, meant) in [
            ("file-read", "file_read"),
            ("fileread", "file_read"),
            ("file_raed", "file_read"),
            ("FileRead", "file_read"),
            ("Read", "file_read"),
            ("read_file", "file_read"),
            ("ReadFile", "file_read"),
            ("write_file", "file_write"),
            ("Edit", "file_edit"),
            ("edit_file", "file_edit"),
            ("Grep", "grep"),
            ("grep_search", "grep"),
            ("run_bash", "bash"),
            ("gerp", "grep"),
            ("file_read.sh", "file_read"),
        ] {
            assert_eq!(closest_tool(called, TOOLS), Some(meant), "{called}");
        }
    }

    #[test]
    fn nothing_is_suggested_when_nothing_or_several_fit() {
        for called in ["file", "job", "search_files", "list_directory", "cat", "ls", "kubectl"] {
            assert_eq!(closest_tool(called, TOOLS), None, "{called}");
        }
    }

    #[test]
    fn a_parameter_is_a_near_miss_by_spelling_only() {
        let known = ["file_path", "offset", "limit"];
        assert_eq!(closest("offest", known), Some("offset"));
        assert_eq!(closest("filePath", known), Some("file_path"));
        assert_eq!(closest("path", known), None);
        assert_eq!(closest("description", known), None);
    }

    #[test]
    fn an_unknown_tool_is_told_with_a_close_name_and_the_names() {
        assert_eq!(
            unknown_tool("Read", ["bash", "file_read"]),
            "unknown tool 'Read' (did you mean file_read?); the tools are: bash, file_read"
        );
        assert_eq!(unknown_tool("cat", ["bash"]), "unknown tool 'cat'; the tools are: bash");
        assert_eq!(unknown_tool("cat", []), "unknown tool 'cat'; there are no tools");
    }
}
