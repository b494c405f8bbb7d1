//! What the output limit (docs/SPEC.md, "Output limit") makes of an output, computed apart
//! from the tools' code, for ASCII text: the answer's size counts escaping,
//! the envelope and marker take `RESERVE`, the output's head and tail take
//! half of the rest each.

/// What an answer holds beside head and tail, at most (`limit::ANSWER_RESERVE`).
pub const RESERVE: usize = 400;
/// The smallest limit there is; smaller values count as this.
pub const MIN_LIMIT: usize = 1024;

/// The size of one ASCII byte in a JSON string.
pub fn escaped(b: u8) -> usize {
    match b {
        b'\n' | b'\r' | b'\t' | 0x08 | 0x0c | b'"' | b'\\' => 2,
        0..=0x1f => 6,
        _ => 1,
    }
}

/// The size of ASCII text in a JSON string.
pub fn size(bytes: &[u8]) -> usize {
    bytes.iter().map(|&b| escaped(b)).sum()
}

/// Where the model cut an output, for its marker (`limit::Cut` in the
/// tools' code).
#[derive(Debug, Clone, Copy)]
pub struct Cut {
    pub omitted: u64,
    /// Whole lines the head shows.
    pub head_lines: u64,
    /// The first and last line left out, wholly or in part (`None`: not
    /// known, the middle skipped unseen).
    pub lines: Option<(u64, u64)>,
    pub head_inside: bool,
    pub tail_inside: bool,
}

impl Cut {
    /// `N bytes omitted (lines A-B)`, lines counted from `first_line` and
    /// called `one`/`many`.
    pub fn told(&self, first_line: u64, (one, many): (&str, &str)) -> String {
        let n = self.omitted;
        let Some((a, b)) = self.lines else {
            let inside = self.head_inside || self.tail_inside;
            return format!(
                "{n} bytes omitted{}",
                if inside { " (cut inside a line)" } else { "" }
            );
        };
        let (a, b) = (a + first_line - 1, b + first_line - 1);
        let range = if a == b { format!("{one} {a}") } else { format!("{many} {a}-{b}") };
        match (self.head_inside, self.tail_inside) {
            (true, true) if a == b => format!("{n} bytes omitted (cut inside {one} {a})"),
            (true, true) => format!("{n} bytes omitted ({range}, cut inside {many} {a} and {b})"),
            (true, false) => format!("{n} bytes omitted ({range}, cut inside {one} {a})"),
            (false, true) => format!("{n} bytes omitted ({range}, cut inside {one} {b})"),
            (false, false) => format!("{n} bytes omitted ({range})"),
        }
    }

    /// The first line not shown whole, from `first_line` on (a line the
    /// head holds only the start of is passed over).
    pub fn next_line(&self, first_line: u64) -> u64 {
        first_line + self.head_lines + u64::from(self.head_inside && self.head_lines == 0)
    }
}

/// The output kept of `whole` (ASCII) under `limit`: the longest head that
/// takes half the room, the longest tail that takes the other half, both
/// then cut back to line boundaries (the head after its last newline, the
/// tail after its first, unless it starts a line, or the line would take
/// more than half of either with it),
/// and the marker line `marker(cut)` between them when anything was left
/// out.
pub fn bounded(whole: &[u8], limit: usize, marker: impl Fn(&Cut) -> String) -> Vec<u8> {
    assert!(whole.is_ascii(), "the model is for ASCII");
    let budget = limit.max(MIN_LIMIT) - RESERVE;
    let (head_cap, tail_cap) = (budget - budget / 2, budget / 2);
    let mut head_len = 0;
    let mut taken = 0;
    while head_len < whole.len() && taken + escaped(whole[head_len]) <= head_cap {
        taken += escaped(whole[head_len]);
        head_len += 1;
    }
    let (head, rest) = whole.split_at(head_len);
    let mut tail_start = rest.len();
    let mut taken = 0;
    while tail_start > 0 && taken + escaped(rest[tail_start - 1]) <= tail_cap {
        taken += escaped(rest[tail_start - 1]);
        tail_start -= 1;
    }
    let mut tail = &rest[tail_start..];
    let mut head = head;
    let mut out = Vec::new();
    if head.len() + tail.len() < whole.len() {
        let newlines = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count() as u64;
        let head_inside = match head.iter().rposition(|&b| b == b'\n') {
            Some(at) if 2 * (at + 1) >= head.len() => {
                head = &head[..=at];
                false
            }
            _ => !head.is_empty(),
        };
        let before = whole[whole.len() - tail.len() - 1];
        let mut tail_inside = false;
        if before != b'\n' && !tail.is_empty() {
            match tail.iter().position(|&b| b == b'\n') {
                Some(at) if at + 1 < tail.len() && 2 * (at + 1) <= tail.len() => {
                    tail = &tail[at + 1..]
                }
                _ => tail_inside = true,
            }
        }
        let omitted = (whole.len() - head.len() - tail.len()) as u64;
        let first = newlines(head) + 1;
        let last_omitted = whole.len() - tail.len() - 1;
        let last = 1 + newlines(&whole[..last_omitted]);
        let cut = Cut {
            omitted,
            head_lines: newlines(head),
            lines: Some((first, last.max(first))),
            head_inside,
            tail_inside,
        };
        out.extend_from_slice(head);
        if !out.ends_with(b"\n") {
            out.push(b'\n');
        }
        out.extend_from_slice(marker(&cut).as_bytes());
        if !tail.starts_with(b"\n") {
            out.push(b'\n');
        }
    } else {
        out.extend_from_slice(head);
    }
    out.extend_from_slice(tail);
    out
}

/// What the lines of a file are called.
pub const LINES: (&str, &str) = ("line", "lines");
/// What the lines of a search's output are called.
pub const OUTPUT_LINES: (&str, &str) = ("output line", "output lines");

/// The marker that names the lines and says nothing more.
pub fn omitted(cut: &Cut) -> String {
    format!("[... {} ...]", cut.told(1, LINES))
}

/// The marker of an error message: bytes only.
pub fn message(cut: &Cut) -> String {
    format!("[... {} bytes omitted ...]", cut.omitted)
}

/// bash's marker (and a job's): the middle is kept nowhere.
pub fn not_kept(cut: &Cut) -> String {
    format!(
        "[... {}, not kept: run the command again with > out.log 2>&1 and read out.log \
         (file_read offset/limit, or grep), or filter it (| tail -n 200, | grep PATTERN) ...]",
        cut.told(1, LINES)
    )
}

/// file_read's marker, for output that starts at line `first_line`.
pub fn continue_at(first_line: u64) -> impl Fn(&Cut) -> String {
    move |cut| {
        format!(
            "[... {}; continue with offset={} (limit=N for N lines) ...]",
            cut.told(first_line, LINES),
            cut.next_line(first_line)
        )
    }
}

/// The seed grep's marker.
pub fn narrow_grep(cut: &Cut) -> String {
    let told = cut.told(1, OUTPUT_LINES);
    format!("[... {told}; narrow the search: a longer pattern, a path or a glob ...]")
}

/// glob's marker.
pub fn narrow_glob(cut: &Cut) -> String {
    let told = cut.told(1, OUTPUT_LINES);
    format!("[... {told}; narrow the search: a longer pattern or a deeper path ...]")
}

/// `bounded` with `marker` for a tool that strips the one final newline
/// (bash, glob, grep), as text.
pub fn bounded_lines(whole: &[u8], limit: usize, marker: impl Fn(&Cut) -> String) -> String {
    let mut out = bounded(whole, limit, marker);
    assert_eq!(out.pop(), Some(b'\n'));
    String::from_utf8(out).expect("ASCII")
}
