//! Which stretches of a file's new content are copied from its old one,
//! for the diff (`tools::diff` takes them as `Piece`s): the lines that
//! occur once in each text and in the same order anchor the alignment
//! (as patience diff does), each anchor widened to the equal lines around
//! it. Linear in the texts; a stretch it does not align is shown as
//! changed, never a wrong one (a copied piece is equal bytes).

use std::collections::HashMap;

use crate::tools::diff::Piece;

/// `new` as pieces: copied from `old` where aligned, written elsewhere.
pub fn pieces(old: &[u8], new: &[u8]) -> Vec<Piece> {
    let (a, b) = (lines(old), lines(new));
    // Each line's count in old and new, and its place in old.
    let mut seen: HashMap<&[u8], (usize, usize, usize)> = HashMap::new();
    for (i, &r) in a.iter().enumerate() {
        let e = seen.entry(text(old, r)).or_insert((0, 0, i));
        e.0 += 1;
    }
    for &r in &b {
        if let Some(e) = seen.get_mut(&text(new, r)) {
            e.1 += 1;
        }
    }
    // Runs of equal lines (old line, new line, count), in order in both.
    let mut runs: Vec<(usize, usize, usize)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    let extend = |i: usize, j: usize| {
        let mut n = 0;
        while i + n < a.len() && j + n < b.len() && text(old, a[i + n]) == text(new, b[j + n]) {
            n += 1;
        }
        n
    };
    while j < b.len() {
        let start = (i, j);
        let n = extend(i, j);
        if n > 0 {
            runs.push((start.0, start.1, n));
            i += n;
            j += n;
            continue;
        }
        // The next line of new that is once in each text, after `i` in old.
        let anchor = (j..b.len()).find_map(|k| match seen.get(&text(new, b[k])) {
            Some(&(1, 1, p)) if p >= i => Some((p, k)),
            _ => None,
        });
        let Some((p, k)) = anchor else { break };
        // Widen back over equal lines not yet taken.
        let mut back = 0;
        while p - back > i
            && k - back > j
            && text(old, a[p - back - 1]) == text(new, b[k - back - 1])
        {
            back += 1;
        }
        i = p - back;
        j = k - back;
    }
    let mut out = Vec::new();
    let mut at = 0;
    for (oi, nj, n) in runs {
        let (from, to) = (b[nj].0, b[nj + n - 1].1);
        if from > at {
            out.push(Piece { len: from - at, from: None });
        }
        out.push(Piece { len: to - from, from: Some(a[oi].0) });
        at = to;
    }
    if new.len() > at {
        out.push(Piece { len: new.len() - at, from: None });
    }
    out
}

/// The bytes of line `r` of `t`.
fn text(t: &[u8], r: (usize, usize)) -> &[u8] {
    &t[r.0..r.1]
}

/// Each line's byte range, its line end included.
fn lines(text: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &byte) in text.iter().enumerate() {
        if byte == b'\n' {
            out.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < text.len() {
        out.push((start, text.len()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The new content the pieces make from `old`.
    fn rebuilt(old: &[u8], new: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut at = 0;
        for p in pieces(old, new) {
            match p.from {
                Some(from) => out.extend_from_slice(&old[from..from + p.len]),
                None => out.extend_from_slice(&new[at..at + p.len]),
            }
            at += p.len;
        }
        out
    }

    #[test]
    fn changes_far_apart_leave_the_middle_copied() {
        let old: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 3\n", "LINE 3\n").replace("line 996\n", "LINE 996\n");
        let p = pieces(old.as_bytes(), new.as_bytes());
        let written: usize = p.iter().filter(|p| p.from.is_none()).map(|p| p.len).sum();
        assert_eq!(written, "LINE 3\nLINE 996\n".len());
        assert_eq!(rebuilt(old.as_bytes(), new.as_bytes()), new.as_bytes());
    }

    #[test]
    fn any_texts_are_rebuilt_exactly() {
        let cases: [(&[u8], &[u8]); 6] = [
            (b"", b"x"),
            (b"x", b""),
            (b"a\nb\n", b"b\na\n"),
            (b"}\n}\n}\n", b"}\nx\n}\n"),
            (b"a\nb", b"a\nb\n"),
            (b"one\ntwo\nthree\n", b"zero\none\nthree\nfour"),
        ];
        for (old, new) in cases {
            assert_eq!(rebuilt(old, new), new, "{old:?} -> {new:?}");
        }
    }
}
