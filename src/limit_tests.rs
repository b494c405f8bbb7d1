//! The output limit's buffer: head and tail kept, the middle counted,
//! cuts between characters, the answer's size measured as a host reads it.

use super::*;

#[test]
fn under_the_limit_everything_is_kept() {
    let mut b = Bounded::new(Some(10));
    b.push(b"hello");
    b.push(b"world");
    assert_eq!(b.finish(), b"helloworld");
}

#[test]
fn past_the_limit_head_and_tail_are_kept() {
    let mut b = Bounded::new(Some(10));
    for chunk in [&b"0123"[..], b"4567", b"89ab", b"cdef"] {
        b.push(chunk);
    }
    assert_eq!(b.omitted(), 6);
    assert_eq!(b.finish(), b"01234\n[... 6 bytes omitted ...]\nbcdef");
}

#[test]
fn a_tail_starting_with_a_newline_gives_no_blank_line() {
    let mut b = Bounded::new(Some(6));
    b.push(b"ab\ncdefg\nhi");
    // The tail "\nhi" starts inside a line: it moves past its newline.
    assert_eq!(b.finish(), b"ab\n[... 6 bytes omitted ...]\nhi");
}

#[test]
fn a_character_is_never_cut_between_head_and_tail() {
    // "é" is two bytes; the head's room ends between them.
    for chunks in
        [vec![&b"abc\xc3\xa9de"[..]], vec![b"abc\xc3", b"\xa9de"], vec![b"abc", b"\xc3\xa9de"]]
    {
        let mut b = Bounded::new(Some(8));
        for c in &chunks {
            b.push(c);
        }
        let parts = b.finish_parts();
        assert_eq!(parts, [b"abc".to_vec(), vec![], "éde".as_bytes().to_vec()], "{chunks:?}");
    }
}

#[test]
fn incomplete_characters_are_found_at_the_end() {
    assert_eq!(incomplete_end(b"ab"), 0);
    assert_eq!(incomplete_end("aé".as_bytes()), 0);
    assert_eq!(incomplete_end(b"a\xc3"), 1);
    assert_eq!(incomplete_end(b"a\xe2\x9c"), 2);
    assert_eq!(incomplete_end(b"a\xf0\x9f\x98"), 3);
    assert_eq!(incomplete_end(b"\x80\x80\x80"), 0);
}

#[test]
fn the_final_newline_is_stripped_from_the_last_part_that_has_bytes() {
    let mut parts = vec![b"a\n".to_vec(), vec![], vec![]];
    assert!(strip_final_newline(&mut parts));
    assert_eq!(parts, [b"a".to_vec(), vec![], vec![]]);
    assert!(!strip_final_newline(&mut parts));
}

#[test]
fn the_tail_is_allocated_once_at_its_size() {
    let mut b = Bounded::new(Some(1 << 20));
    for _ in 0..10_000 {
        b.push(&[b'y'; 1000]);
    }
    assert!(b.tail.capacity() < (1 << 19) + 64, "{}", b.tail.capacity());
}

#[test]
fn one_huge_push_keeps_its_own_tail() {
    let mut b = Bounded::new(Some(4));
    b.push(b"abcdefghij");
    assert_eq!(b.finish(), b"ab\n[... 6 bytes omitted ...]\nij");
}

#[test]
fn skipping_the_middle_gives_what_pushing_it_would() {
    let mut pushed = Bounded::new(Some(4));
    pushed.push(b"abcdefghij");
    let mut skipped = Bounded::new(Some(4));
    skipped.push(b"ab");
    assert_eq!(skipped.skippable(8), 6);
    skipped.skip(6);
    skipped.push(b"ij");
    assert_eq!(skipped.finish(), pushed.finish());
    assert_eq!(Bounded::new(Some(4)).skippable(100), 0, "head not full yet");
    assert_eq!(Bounded::new(None).skippable(100), 0, "no limit");
}

#[test]
fn append_equals_pushing_everything() {
    let ascii: [&[u8]; 5] = [b"0123", b"456789abcdef", b"", b"gh", b"ijklmnopqrstuvwxyz"];
    // Characters that a head may not end inside, so that it ends short.
    let utf8: [&[u8]; 5] =
        ["0é2".as_bytes(), "45✓789ab".as_bytes(), b"", "gé".as_bytes(), "ij✓lmnopqrstu".as_bytes()];
    // Escapes, for the answer's measure.
    let escapes: [&[u8]; 5] = [b"0\n2", b"45\t78\"ab", b"", b"g\x01", b"ij\\lmn\nopqrstu"];
    let limits = [None, Some(1), Some(5), Some(10), Some(16), Some(100)];
    type Make = fn(Option<usize>) -> Bounded;
    let kinds: [(Make, usize); 2] = [(Bounded::new, 0), (Bounded::for_answer, ANSWER_RESERVE)];
    for (chunks, limit, (make, reserve)) in [ascii, utf8, escapes]
        .into_iter()
        .flat_map(|c| limits.map(|l| (c, l)))
        .flat_map(|(c, l)| kinds.map(|k| (c, l, k)))
    {
        let limit = limit.map(|l| l + reserve);
        for split in 0..=chunks.len() {
            let mut whole = make(limit);
            for c in chunks {
                whole.push(c);
            }
            let mut stitched = make(limit);
            for part in [&chunks[..split], &chunks[split..]] {
                let mut piece = make(limit);
                for c in part {
                    piece.push(c);
                }
                stitched.append(piece);
            }
            assert_eq!(stitched.total(), whole.total());
            assert_eq!(stitched.finish(), whole.finish(), "{limit:?} {split} {reserve}");
        }
    }
}

/// The answer a tool prints with `parts` as its output: the widest
/// envelope there is (bash's, with the longest exit code).
fn answer_len(parts: &[Vec<u8>]) -> usize {
    use crate::json::{write_object, Field};
    let mut out = Vec::new();
    write_object(
        &mut out,
        &[("output", Field::Parts(parts.to_vec())), ("exit_code", Field::Int(i64::MIN))],
    )
    .unwrap();
    assert!(serde_json::from_slice::<serde_json::Value>(&out).is_ok());
    out.len()
}

/// Bytes of every kind, from a seed: text to escape or not, characters
/// of each length, bytes that are no UTF-8.
fn mixed(seed: u64, len: usize) -> Vec<u8> {
    let pieces: [&[u8]; 12] = [
        b"line of text ",
        b"\n",
        b"\"q\\",
        b"\x00\x01",
        "é".as_bytes(),
        "✓".as_bytes(),
        "𝄞".as_bytes(),
        b"\xff",
        b"\xe2\x9c",
        b"\x80",
        b"\t",
        b"abcdefgh",
    ];
    crate::json::size::mixed_of(&pieces, seed, len)
}

#[test]
fn the_answer_never_passes_the_limit_escaping_included() {
    for seed in 0..40u64 {
        let text = mixed(seed, 3000 + seed as usize * 97);
        for limit in [1024, 1500, 4096] {
            let mut b = Bounded::for_answer(Some(limit));
            let chunk = 1 + seed as usize * 13 % 700;
            for piece in text.chunks(chunk) {
                b.push(piece);
            }
            assert_eq!(b.total(), text.len() as u64);
            let mut omitted = 0;
            let parts = b.finish_parts_with(|cut| {
                omitted = cut.omitted;
                marker::message(cut)
            });
            let len = answer_len(&parts);
            assert!(len <= limit, "{len} > {limit} (seed {seed})");
            let written = crate::json::size::escaped_len(&text) + 46;
            if written > limit {
                assert!(omitted > 0);
                // Full up to a line on either side (the cut moves back to
                // line boundaries), and a character or two.
                let longest = text.split(|&b| b == b'\n').map(size::escaped_len).max();
                let slack = 2 * (longest.unwrap_or(0) + 2);
                assert!(len + ANSWER_RESERVE + slack >= limit, "{len} (seed {seed})");
            } else {
                assert_eq!(parts.concat(), text, "fits whole (seed {seed})");
            }
            // Head and tail are the text's own first and last bytes.
            assert!(text.starts_with(&parts[0]), "head (seed {seed}, {limit})");
            assert!(text.ends_with(&parts[2]), "tail (seed {seed}, {limit})");
            assert_eq!(omitted, (text.len() - parts[0].len() - parts[2].len()) as u64);
        }
    }
}

#[test]
fn how_the_output_is_pushed_changes_nothing() {
    // Mostly ASCII (measured a block at a time), with stretches of
    // everything else, in large amounts.
    let mut text = Vec::new();
    for i in 0..30u64 {
        let plain = "plain ascii text, line after line\n".repeat(1 + (i as usize * 37) % 120);
        text.extend_from_slice(plain.as_bytes());
        text.extend_from_slice(&mixed(i, 1 + (i as usize * 53) % 900));
    }
    for limit in [5000, 20_000, 100_000] {
        let pushed = |chunk: usize| {
            let mut b = Bounded::for_answer(Some(limit));
            for piece in text.chunks(chunk) {
                b.push(piece);
            }
            b.finish_parts()
        };
        let one_by_one = pushed(1);
        assert!(answer_len(&one_by_one) <= limit);
        for chunk in [3, 4096, 4097, 65_536, text.len()] {
            assert_eq!(pushed(chunk), one_by_one, "limit {limit}, chunks of {chunk}");
        }
    }
}

#[test]
fn the_reserve_holds_the_widest_envelope_and_marker() {
    let marker = format!("[... {} bytes omitted; continue with offset={} ...]", u64::MAX, u64::MAX);
    let parts = vec![b"x".to_vec(), format!("\n{marker}\n").into_bytes(), b"y".to_vec()];
    assert!(answer_len(&parts) - 2 <= ANSWER_RESERVE, "{}", answer_len(&parts));
}

#[test]
fn a_cut_never_leaves_a_replacement_character_at_either_edge() {
    let text = "aé✓𝄞b".repeat(40);
    let bytes = text.as_bytes();
    for limit in [1024, 1100] {
        for measure in [Measure::Bytes, Measure::Answer] {
            for cut in 0..=bytes.len() {
                let budget = if measure == Measure::Bytes { limit - ANSWER_RESERVE } else { limit };
                let mut b = match measure {
                    Measure::Bytes => Bounded::new(Some(budget / 4)),
                    Measure::Answer => Bounded::for_answer(Some(limit)),
                };
                let mut b2 = Bounded::new(Some(budget / 4 + 1));
                b.push(&bytes[..cut]);
                b.push(&bytes[cut..]);
                b2.push(&bytes[..cut]);
                b2.push(&bytes[cut..]);
                for parts in [b.finish_parts(), b2.finish_parts()] {
                    for part in &parts {
                        assert!(std::str::from_utf8(part).is_ok(), "cut at {cut}: {part:?}");
                    }
                }
            }
        }
    }
}

#[test]
fn reading_on_after_a_skip_inside_a_character_leaves_no_replacement_character() {
    let text = "✓𝄞é".repeat(1000);
    let bytes = text.as_bytes();
    for at in 1000..1012 {
        let mut b = Bounded::for_answer(Some(1024));
        b.push(&bytes[..at]);
        let skip = b.skippable((bytes.len() - at) as u64);
        assert!(skip > 0);
        b.skip(skip);
        let from = at + skip as usize;
        b.push(&bytes[from..from + 5]);
        b.push(&bytes[from + 5..]);
        assert_eq!(b.total(), bytes.len() as u64);
        let parts = b.finish_parts();
        let tail = std::str::from_utf8(&parts[2]).expect("whole characters");
        assert!(text.ends_with(tail) && !tail.is_empty());
    }
}

#[test]
fn without_memory_the_rest_is_counted_not_kept() {
    let mut b = Bounded::new(None);
    b.push(b"kept");
    b.out_of_memory = true;
    b.push(b"lost");
    assert!(b.out_of_memory());
    assert_eq!(b.omitted(), 4);
}

#[test]
fn the_last_byte_is_the_tail_s_the_head_s_or_a_pending_one() {
    let mut b = Bounded::new(Some(4));
    assert_eq!(b.last_byte(), None);
    b.push(b"ab");
    assert_eq!(b.last_byte(), Some(b'b'));
    b.push(b"cdefg\n");
    assert_eq!(b.last_byte(), Some(b'\n'), "from the tail");
    b.push(b"\xc3");
    assert_eq!(b.last_byte(), Some(0xc3), "a character still pending");
}

#[test]
fn no_limit_keeps_all() {
    let mut b = Bounded::new(None);
    b.push(&[7u8; 100_000]);
    assert_eq!(b.omitted(), 0);
    assert_eq!(b.finish().len(), 100_000);
}

#[test]
fn an_answer_over_the_limit_is_told_and_one_within_it_is_not() {
    let mut out = Counting::new(Vec::new());
    out.write_all(b"{\"output\":\"0123456789\"}").unwrap();
    assert_eq!(out.written(), 23);
    assert_eq!(overrun(out.written(), Some(23)), None);
    assert_eq!(overrun(out.written(), None), None);
    assert_eq!(
        overrun(out.written(), Some(22)).as_deref(),
        Some("the answer took 23 bytes, over the output limit of 22: a bug")
    );
}

#[test]
fn an_image_is_not_bounded_by_the_limit_and_the_rest_of_the_answer_is() {
    let text = |t: &str| Field::Text(t.as_bytes().to_vec());
    let image = Field::Object(vec![("mime_type", text("image/png")), ("data", text("AAAA"))]);
    let answer = [("output", text("Image: PNG")), ("image", image.clone())];
    let written = json::object_len(&answer);
    let image_len = json::object_len(&[("image", image)]);
    assert_eq!(unbounded_len(&answer), image_len);
    assert_eq!(unbounded_len(&answer[..1]), 0);
    assert_eq!(overrun(written - unbounded_len(&answer), Some(written - image_len)), None);
    assert!(overrun(written, Some(written - image_len)).is_some());
}

/// The parts of `text` pushed into a buffer of `limit` bytes (in chunks of
/// `chunk`), and the cut its marker was given.
fn cut_of(text: &[u8], limit: usize, chunk: usize) -> (Vec<Vec<u8>>, Option<Cut>) {
    let mut b = Bounded::new(Some(limit));
    for piece in text.chunks(chunk) {
        b.push(piece);
    }
    let mut seen = None;
    let parts = b.finish_parts_with(|cut| {
        seen = Some(*cut);
        marker::message(cut)
    });
    (parts, seen)
}

#[test]
fn a_cut_falls_on_line_boundaries_and_names_the_lines_left_out() {
    let text: String = (1..=100).map(|i| format!("{i}\n")).collect();
    for chunk in [1, 7, 4096] {
        let (parts, cut) = cut_of(text.as_bytes(), 40, chunk);
        // The head's 20 bytes end after "10" (no newline yet): it moves
        // back to "9\n". The tail's 20 bytes start with the newline of "94":
        // it moves on to "95".
        assert_eq!(parts[0], b"1\n2\n3\n4\n5\n6\n7\n8\n9\n", "{chunk}");
        assert_eq!(parts[2], b"95\n96\n97\n98\n99\n100\n", "{chunk}");
        let cut = cut.expect("a cut");
        assert_eq!(cut.omitted, (text.len() - parts[0].len() - parts[2].len()) as u64);
        assert_eq!(cut.to_string(), format!("{} bytes omitted (lines 10-94)", cut.omitted));
        assert_eq!((cut.head_lines, cut.next_line()), (9, 10));
    }
}

#[test]
fn a_newline_at_the_very_edge_moves_nothing() {
    // The head's room ends just after a newline, the tail's starts just
    // after one: both are whole lines already.
    let text = b"abc\ndef\nghi\njkl\n";
    let (parts, cut) = cut_of(text, 8, 3);
    assert_eq!(
        parts,
        [b"abc\n".to_vec(), b"[... 8 bytes omitted ...]\n".to_vec(), b"jkl\n".to_vec()]
    );
    assert_eq!(cut.unwrap().to_string(), "8 bytes omitted (lines 2-3)");
}

#[test]
fn a_head_or_tail_without_a_line_boundary_is_cut_inside_and_says_so() {
    let (parts, cut) = cut_of(&[b'x'; 100], 10, 9);
    assert_eq!((parts[0].len(), parts[2].len()), (5, 5));
    assert_eq!(cut.unwrap().to_string(), "90 bytes omitted (cut inside line 1)");
    // One line of megabytes among short ones: its ends are kept, not the
    // short lines alone.
    let text = format!("a\n{}\nz\n", "x".repeat(1000));
    let (parts, cut) = cut_of(text.as_bytes(), 20, 64);
    assert_eq!(parts[0], b"a\nxxxxxxxx");
    assert_eq!(parts[2], b"xxxxxxx\nz\n");
    assert_eq!(cut.unwrap().to_string(), "985 bytes omitted (cut inside line 2)");
    // A cut inside on one side only names that line; the tail "c\nd\ne\n"
    // starts a line.
    let text = format!("{}\nb\nc\nd\ne\n", "x".repeat(100));
    let (parts, cut) = cut_of(text.as_bytes(), 12, 5);
    assert_eq!(parts[2], b"c\nd\ne\n");
    assert_eq!(cut.unwrap().to_string(), "97 bytes omitted (lines 1-2, cut inside line 1)");
}

#[test]
fn crlf_line_ends_stay_whole() {
    let text: String = (1..=50).map(|i| format!("{i}\r\n")).collect();
    let (parts, cut) = cut_of(text.as_bytes(), 30, 4);
    // 15 bytes each: the head "1\r\n".."5\r\n" whole; the tail from inside
    // "47\r\n", moved on past its "\n", not between "\r" and "\n".
    assert_eq!(parts[0], b"1\r\n2\r\n3\r\n4\r\n5\r\n");
    assert_eq!(parts[2], b"48\r\n49\r\n50\r\n");
    assert_eq!(cut.unwrap().lines, Some((6, 47)));
}

#[test]
fn multibyte_characters_near_the_cut_stay_whole() {
    let text = "é✓𝄞\n".repeat(50);
    for limit in [20, 21, 22, 23, 24] {
        let (parts, cut) = cut_of(text.as_bytes(), limit, 3);
        for part in &parts {
            assert!(std::str::from_utf8(part).is_ok(), "{limit}: {part:?}");
        }
        assert!(
            parts[0].ends_with(b"\n") && text.starts_with(std::str::from_utf8(&parts[0]).unwrap())
        );
        assert!(text.ends_with(std::str::from_utf8(&parts[2]).unwrap()));
        let (first, last) = cut.unwrap().lines.unwrap();
        let tail_lines = parts[2].iter().filter(|&&b| b == b'\n').count() as u64;
        assert_eq!((first, last), (parts[0].len() as u64 / 10 + 1, 50 - tail_lines), "{limit}");
    }
}

#[test]
fn lines_skipped_unseen_are_not_named() {
    let mut b = Bounded::new(Some(8));
    b.push(b"ab\ncd\n");
    b.skip(100);
    b.push(b"xy\nzw\n");
    let mut told = String::new();
    b.finish_parts_with(|cut| {
        told = cut.to_string();
        String::new()
    });
    // "c" of the head and "\n" of the tail moved out: 100 + 6.
    assert_eq!(told, "106 bytes omitted");
}

#[test]
fn a_page_keeps_whole_lines_from_the_start_and_nothing_after() {
    let mut b = Bounded::for_answer_from_start(Some(ANSWER_RESERVE + 12));
    for line in ["one\n", "two\n", "three\n", "four\n"] {
        b.push(line.as_bytes());
    }
    let mut seen = None;
    let parts = b.finish_parts_with(|cut| {
        seen = Some(*cut);
        String::from("M")
    });
    // "one\n" and "two\n" take 10 in the answer; "three" would not fit whole.
    assert_eq!(parts, [b"one\ntwo\n".to_vec(), b"M\n".to_vec(), vec![]]);
    assert_eq!(seen.map(|c| (c.omitted, c.head_lines)), Some((11, 2)));
}

#[test]
fn the_reserve_holds_every_marker_at_its_widest() {
    let widest = Cut {
        omitted: u64::MAX,
        head_lines: u64::MAX - 2,
        lines: Some((u64::MAX - 1, u64::MAX)),
        head_inside: true,
        tail_inside: true,
        first_line: 1,
        noun: marker::LINES,
    };
    for told in [
        marker::not_kept(&widest),
        marker::read_on(&widest),
        marker::narrow(&widest, marker::NARROW_GREP),
        marker::narrow(&widest, marker::NARROW_GLOB),
        marker::page_on(u64::MAX, u64::MAX),
    ] {
        let parts = vec![b"x".to_vec(), format!("\n{told}\n").into_bytes(), b"y".to_vec()];
        assert!(answer_len(&parts) - 2 <= ANSWER_RESERVE, "{} {told}", answer_len(&parts));
    }
}

#[test]
fn lines_skipped_with_their_count_are_named_as_if_pushed() {
    // A job's store skips the middle it no longer holds but knows its
    // newlines and last byte: the answer is the one pushing them gives.
    let middle = b"123456789\n".repeat(10);
    let answer = |skip: bool| {
        let mut b = Bounded::new(Some(8));
        b.push(b"ab\ncd\n");
        if skip {
            b.skip_counted(middle.len() as u64, 10, b'\n');
        } else {
            b.push(&middle);
        }
        b.push(b"xy\nzw\n");
        let mut told = String::new();
        let parts = b.finish_parts_with(|cut| {
            told = cut.to_string();
            String::from("M")
        });
        (parts, told)
    };
    let (parts, told) = answer(true);
    assert_eq!((parts, told.clone()), answer(false));
    assert!(told.contains("(lines "), "{told}");
}

/// Regression: a page (head only) of an output ending with a newline named
/// one line more than it has as the last left out (`lines 310-200001` of
/// web_fetch's 200,000 lines): the output's last byte was never seen.
#[test]
fn a_page_names_the_last_line_left_out_as_the_output_has_it() {
    for (last, expected) in [("four\n", (3, 4)), ("four", (3, 4)), ("four\nfive", (3, 5))] {
        let mut b = Bounded::for_answer_from_start(Some(ANSWER_RESERVE + 12));
        for line in ["one\n", "two\n", "three\n", last] {
            b.push(line.as_bytes());
        }
        let mut seen = None;
        b.finish_parts_with(|cut| {
            seen = Some(*cut);
            String::from("M")
        });
        assert_eq!(seen.and_then(|c| c.lines), Some(expected), "{last:?}");
    }
}
