//! What the output limit (docs/SPEC.md, "Output limit") makes of an output, computed apart
//! from the tools' code, for ASCII text: the answer's size counts escaping,
//! the envelope and marker take `RESERVE`, the output's head and tail take
//! half of the rest each.

/// What an answer holds beside head and tail, at most (`limit::ANSWER_RESERVE`).
pub const RESERVE: usize = 160;
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

/// The output kept of `whole` (ASCII) under `limit`: the longest head that
/// takes half the room, the longest tail that takes the other half, and
/// the marker line `marker(omitted, head)` between them when anything was
/// left out.
pub fn bounded(whole: &[u8], limit: usize, marker: impl Fn(u64, &[u8]) -> String) -> Vec<u8> {
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
    let tail = &rest[tail_start..];
    let omitted = (whole.len() - head.len() - tail.len()) as u64;
    let mut out = head.to_vec();
    if omitted > 0 {
        if !out.ends_with(b"\n") {
            out.push(b'\n');
        }
        out.extend_from_slice(marker(omitted, head).as_bytes());
        if !tail.starts_with(b"\n") {
            out.push(b'\n');
        }
    }
    out.extend_from_slice(tail);
    out
}

/// The standard marker.
pub fn omitted(n: u64, _head: &[u8]) -> String {
    format!("[... {n} bytes omitted ...]")
}

/// file_read's marker, for output that starts at line `first_line`.
pub fn continue_at(first_line: usize) -> impl Fn(u64, &[u8]) -> String {
    move |n, head| {
        let next = first_line + head.iter().filter(|&&b| b == b'\n').count();
        format!("[... {n} bytes omitted; continue with offset={next} ...]")
    }
}

/// `bounded` for a tool that strips the one final newline (bash, glob,
/// grep), as text.
pub fn bounded_lines(whole: &[u8], limit: usize) -> String {
    let mut out = bounded(whole, limit, omitted);
    assert_eq!(out.pop(), Some(b'\n'));
    String::from_utf8(out).expect("ASCII")
}
