//! The note a confined command's failure gets when the sandbox likely
//! caused it (docs/CONFINEMENT.md, "What a confined call is told"): a
//! write outside the roots answers `Read-only file system` or `Permission
//! denied`, a refused socket `Could not resolve host` — which reads like a
//! full disk or a DNS failure unless the model is told that the sandbox
//! did it, what it allows, and the setting that changes it.
//!
//! A heuristic on the output's text: the note is added only to a confined
//! command that ended non-zero, and only when its output holds one of the
//! messages below. It cannot see a failure a program words otherwise, or
//! whose message it hid; it may add the note where a message matched for
//! another reason (a file system mounted read-only anyway).

use std::path::{Path, PathBuf};

use crate::confine::{Sandbox, NETWORK_VAR};
use crate::json::size::escaped_len;

/// Messages of a write the sandbox refused wherever it was aimed (the
/// namespace mounts everything but the roots and `$TMPDIR` read-only).
const WRITE_REFUSED: [&str; 1] = ["Read-only file system"];

/// Messages of a refusal that counts when it names a path outside the
/// places a command may write (Landlock's EACCES without the namespace).
const ACCESS_REFUSED: [&str; 1] = ["Permission denied"];

/// Messages of a network the sandbox shut, as curl, wget, git, pip, npm,
/// python and bash's `/dev/tcp` print them.
const NETWORK_REFUSED: [&str; 9] = [
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "unable to resolve host address",
    "EAI_AGAIN",
    "Network is unreachable",
    "Couldn't connect to server",
    "/dev/tcp/",
    "/dev/udp/",
];

/// A refused system call, which is the network's when the output also
/// speaks of a socket or a connection (`bash: socket: Permission denied`,
/// python's `sock.connect(sa)` … `PermissionError`, node's `connect
/// EACCES`). EACCES only: both the filter (socket) and Landlock (connect)
/// answer it, while EPERM on a connect is Landlock's scope of abstract Unix
/// sockets, which `IKIGAI_TOOLS_NETWORK` does not change.
const CALL_REFUSED: [&str; 2] = ["Permission denied", "EACCES"];
const ABOUT_SOCKETS: [&str; 2] = ["socket", "connect"];

/// What the sandbox of one command allows, and its note.
pub struct SandboxNote {
    /// Where the command may write: the roots (both spellings) and its
    /// private temporary directory.
    writable: Vec<PathBuf>,
    network_off: bool,
    /// What the note says of writes.
    writes: String,
}

impl SandboxNote {
    /// The note for a command run in `sandbox`.
    pub fn for_sandbox(sandbox: &Sandbox<'_>) -> SandboxNote {
        let roots = sandbox.roots();
        let mut writable: Vec<PathBuf> =
            roots.roots().iter().flat_map(|r| r.spellings()).map(Path::to_path_buf).collect();
        writable.push(sandbox.temp_dir().to_path_buf());
        let writes = format!(
            "writes are allowed only beneath {} and $TMPDIR ({})",
            roots.shown(),
            roots.source().sets_them()
        );
        SandboxNote { writable, network_off: !sandbox.network(), writes }
    }

    /// The most the note adds to `output` in the answer (escaped, with its
    /// newline): what the output's budget keeps back for it.
    pub fn reserve(&self) -> usize {
        escaped_len(text(Some(&self.writes), self.network_off).as_bytes())
    }

    /// The note for a command that ended with `exit_code` and printed
    /// `output` (the parts kept), or `None` when nothing in it points at
    /// the sandbox.
    pub fn for_output(&self, output: &[Vec<u8>], exit_code: i64) -> Option<String> {
        if exit_code == 0 {
            return None;
        }
        let output = String::from_utf8_lossy(&output.concat()).into_owned();
        let has = |messages: &[&str]| messages.iter().any(|m| output.contains(m));
        let writes = has(&WRITE_REFUSED)
            || output
                .lines()
                .filter(|line| ACCESS_REFUSED.iter().any(|m| line.contains(m)))
                .any(|line| absolute_paths(line).any(|path| !self.may_write(path)));
        let network = self.network_off
            && (has(&NETWORK_REFUSED) || (has(&CALL_REFUSED) && has(&ABOUT_SOCKETS)));
        (writes || network).then(|| text(writes.then_some(self.writes.as_str()), network))
    }

    /// Adds the note, if any, on a line of its own after `output` (which
    /// is never empty then: the note answers something in it). `output`
    /// came from a budget less [`Self::reserve`], so the answer stays
    /// within the limit.
    pub fn add_to(&self, output: &mut Vec<Vec<u8>>, exit_code: i64) {
        if let Some(note) = self.for_output(output, exit_code) {
            output.push(note.into_bytes());
        }
    }

    /// Whether `path` lies where the command may write (lexically), or is
    /// a socket's name, which is the network's part.
    fn may_write(&self, path: &str) -> bool {
        let path = Path::new(path);
        path.starts_with("/dev/tcp")
            || path.starts_with("/dev/udp")
            || self.writable.iter().any(|dir| path.starts_with(dir))
    }
}

/// The note's text, on a line of its own after the output: what it says
/// of writes, and of the network when that is what failed.
fn text(writes: Option<&str>, network: bool) -> String {
    let shut = format!("network is off ({NETWORK_VAR}=on allows it)");
    let parts: Vec<&str> = writes.into_iter().chain(network.then_some(shut.as_str())).collect();
    format!("\n[ikigai-tools sandbox: {}]", parts.join("; "))
}

/// The absolute paths a message names: from a `/` at the start of the
/// line or after a space or an opening quote, to the next space, quote,
/// colon or comma.
fn absolute_paths(line: &str) -> impl Iterator<Item = &str> {
    let opens = |c: char| c.is_whitespace() || "'\"`‘“(".contains(c);
    let ends = |c: char| c.is_whitespace() || "'\"`’”):,".contains(c);
    line.char_indices()
        .filter(move |&(i, c)| c == '/' && line[..i].chars().next_back().is_none_or(opens))
        .map(move |(i, _)| {
            let rest = &line[i..];
            rest.find(ends).map_or(rest, |end| &rest[..end])
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(network_off: bool) -> SandboxNote {
        SandboxNote {
            writable: vec![PathBuf::from("/w/proj"), PathBuf::from("/tmp/ikigai-tools-1000")],
            network_off,
            writes: "writes are allowed only beneath /w/proj and $TMPDIR (IKIGAI_TOOLS_ROOTS \
                     sets them)"
                .to_owned(),
        }
    }

    fn out(text: &str) -> Vec<Vec<u8>> {
        vec![text.as_bytes().to_vec()]
    }

    const WRITES: &str = "\n[ikigai-tools sandbox: writes are allowed only beneath /w/proj and \
                          $TMPDIR (IKIGAI_TOOLS_ROOTS sets them)]";
    const NETWORK: &str =
        "\n[ikigai-tools sandbox: network is off (IKIGAI_TOOLS_NETWORK=on allows it)]";

    #[test]
    fn a_write_refused_outside_the_roots_gets_the_writes_note() {
        let n = note(true);
        let erofs = out("sh: 1: cannot create /etc/x: Read-only file system");
        assert_eq!(n.for_output(&erofs, 2).as_deref(), Some(WRITES));
        let eacces = out("touch: cannot touch '/etc/x': Permission denied");
        assert_eq!(n.for_output(&eacces, 1).as_deref(), Some(WRITES));
        let mkdir = out("mkdir: cannot create directory ‘/home/x’: Permission denied");
        assert_eq!(n.for_output(&mkdir, 1).as_deref(), Some(WRITES));
    }

    #[test]
    fn permission_denied_inside_the_roots_or_on_no_path_gets_no_note() {
        let n = note(true);
        for text in [
            "sh: 1: /w/proj/run.sh: Permission denied",
            "cp: cannot open '/tmp/ikigai-tools-1000/a' for reading: Permission denied",
            "sh: 1: ./run.sh: Permission denied",
        ] {
            assert_eq!(n.for_output(&out(text), 126), None, "{text}");
        }
    }

    #[test]
    fn a_refused_network_gets_the_network_note_only_while_it_is_off() {
        for text in [
            "curl: (6) Could not resolve host: example.com",
            "socket.gaierror: [Errno -3] Temporary failure in name resolution",
            "bash: socket: Permission denied\nbash: line 1: /dev/tcp/1.1.1.1/80: Permission denied",
            "  sock.connect(sa)\nPermissionError: [Errno 13] Permission denied",
            "fatal: unable to access 'https://github.com/x/y/': Could not resolve host: github.com",
            "npm error code EAI_AGAIN",
        ] {
            assert_eq!(note(true).for_output(&out(text), 1).as_deref(), Some(NETWORK), "{text}");
            assert_eq!(note(false).for_output(&out(text), 1), None, "{text}");
        }
    }

    #[test]
    fn a_refused_abstract_socket_is_not_the_networks() {
        let text = out("connect: Operation not permitted");
        assert_eq!(note(true).for_output(&text, 1), None);
    }

    #[test]
    fn both_failures_get_one_note_naming_both() {
        let text = out("cannot create /etc/x: Read-only file system\nCould not resolve host: a");
        let both = format!(
            "{}; network is off (IKIGAI_TOOLS_NETWORK=on allows it)]",
            &WRITES[..WRITES.len() - 1]
        );
        assert_eq!(note(true).for_output(&text, 1), Some(both.clone()));
        assert_eq!(note(true).reserve(), escaped_len(both.as_bytes()));
    }

    #[test]
    fn the_note_goes_on_a_line_of_its_own_after_the_output() {
        let mut output = out("x\ncannot create /etc/x: Read-only file system");
        note(true).add_to(&mut output, 2);
        assert_eq!(
            output,
            [out("x\ncannot create /etc/x: Read-only file system"), out(WRITES)].concat()
        );
        let mut unrelated = out("x");
        note(true).add_to(&mut unrelated, 1);
        assert_eq!(unrelated, out("x"));
    }

    #[test]
    fn a_success_or_an_unrelated_failure_gets_no_note() {
        let n = note(true);
        assert_eq!(n.for_output(&out("cannot create /etc/x: Read-only file system"), 0), None);
        assert_eq!(n.for_output(&out("grep: x: No such file or directory"), 2), None);
        assert_eq!(n.for_output(&[], 1), None);
    }
}
