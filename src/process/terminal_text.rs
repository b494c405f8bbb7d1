//! What a terminal shows, as text a model reads (docs/TOOLS.md, "Talking
//! to a job"): the escape sequences programs write to a terminal (colours,
//! cursor moves, titles, mode switches: CSI, OSC and the other ESC forms)
//! are removed, `\r\n` becomes `\n`, and a bell is dropped; everything else
//! is kept as written. A state machine fed chunk by chunk, since a
//! sequence may be cut between two reads.

use super::pipes::Sink;

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Text,
    /// After `\r`: a `\n` next makes one `\n`.
    Return,
    /// After ESC.
    Escape,
    /// ESC `(`, `)`, `*`, `+`, `#`, `%`, space: one more byte.
    EscapeArgument,
    /// ESC `[`: parameters and intermediates up to a final byte.
    Csi,
    /// ESC `]`, `P`, `X`, `^`, `_`: a string up to BEL or ESC `\`.
    String,
    /// ESC within a string: `\` ends it.
    StringEscape,
}

/// Removes terminal escapes from what passes through to `sink`.
pub struct TerminalText<'a, S: Sink> {
    sink: &'a mut S,
    state: State,
    out: Vec<u8>,
}

impl<'a, S: Sink> TerminalText<'a, S> {
    pub fn new(sink: &'a mut S) -> Self {
        TerminalText { sink, state: State::Text, out: Vec::new() }
    }
}

impl<S: Sink> Sink for TerminalText<'_, S> {
    fn take(&mut self, bytes: &[u8]) {
        self.out.clear();
        for &b in bytes {
            self.state = step(self.state, b, &mut self.out);
        }
        if !self.out.is_empty() {
            self.sink.take(&self.out);
        }
    }
}

/// One byte: what it adds to `out`, and the state after it.
fn step(state: State, b: u8, out: &mut Vec<u8>) -> State {
    match state {
        State::Text | State::Return => {
            let after_return = state == State::Return;
            match b {
                b'\n' => {
                    out.push(b'\n');
                    State::Text
                }
                _ => {
                    if after_return {
                        out.push(b'\r');
                    }
                    match b {
                        b'\r' => State::Return,
                        ESC => State::Escape,
                        BEL => State::Text,
                        _ => {
                            out.push(b);
                            State::Text
                        }
                    }
                }
            }
        }
        State::Escape => match b {
            b'[' => State::Csi,
            b']' | b'P' | b'X' | b'^' | b'_' => State::String,
            b'(' | b')' | b'*' | b'+' | b'#' | b'%' | b' ' => State::EscapeArgument,
            _ => State::Text,
        },
        State::EscapeArgument => State::Text,
        // Parameters 0x30–0x3F and intermediates 0x20–0x2F go on; a final
        // byte (0x40–0x7E) ends it, and so does anything unexpected.
        State::Csi => match b {
            0x20..=0x3f => State::Csi,
            _ => State::Text,
        },
        State::String => match b {
            BEL => State::Text,
            ESC => State::StringEscape,
            _ => State::String,
        },
        State::StringEscape => match b {
            b'\\' => State::Text,
            ESC => State::StringEscape,
            _ => State::String,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limit::Bounded;

    /// `input` fed in chunks of `size` bytes.
    fn text(input: &[u8], size: usize) -> String {
        let mut out = Bounded::new(None);
        let mut filter = TerminalText::new(&mut out);
        for chunk in input.chunks(size) {
            filter.take(chunk);
        }
        String::from_utf8(out.finish()).unwrap()
    }

    #[test]
    fn escapes_are_removed_and_text_kept_however_the_bytes_are_cut() {
        let cases: [(&[u8], &str); 8] = [
            (b"\x1b[31mred\x1b[0m", "red"),
            (b"a\r\nb\r\n", "a\nb\n"),
            (b"50%\r100%\n", "50%\r100%\n"),
            (b"\x1b]0;title\x07x", "x"),
            (b"\x1b]8;;http://a\x1b\\link\x1b]8;;\x1b\\", "link"),
            (b"\x1b(Bk\x1b=\x1b>\x07", "k"),
            (b"\x1b[?1049h\x1b[1;24r\x1b[Hvi\x1b[K", "vi"),
            (b"\xc3\xa9t\xc3\xa9\r", "\u{e9}t\u{e9}"),
        ];
        for (input, want) in cases {
            for size in 1..=input.len() {
                assert_eq!(text(input, size), want, "{input:?} in chunks of {size}");
            }
        }
    }
}
