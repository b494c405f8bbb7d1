//! file_read's answer for a binary file (docs/TOOLS.md, "file_read"): a
//! file with a NUL byte in its first `SNIFF_LEN` bytes is not shown, which
//! would be escaped bytes a model takes for text, but told, in the seed's
//! answer shape, with its size, its type where its first bytes say it, and
//! how to look inside:
//! `{"output":"[binary file: 12345 bytes, ELF executable or library; not shown. Inspect it with bash: file, xxd | head, strings]"}`.
//! The full profile adds `binary: true` and the file's `sha256`. A NUL is
//! grep's test too (grep skips such a file); grep looks through the whole
//! file, file_read at its start only, as git does, so that a line range of
//! a large file costs no more than before.
//!
//! A UTF-16 or UTF-32 text (a byte-order mark, then NUL bytes between the
//! characters) is told as such, with the command that converts it. A file
//! that reports no size (`/proc/self/cmdline`, NUL-separated text) is read
//! as before. No parameter shows the bytes: bash does (`xxd`, `base64`).

use std::fs::File;

use super::image;
use crate::error::ToolError;
use crate::fs::digest::sha256_of_file;
use crate::json::Field;
use crate::protocol::Answer;

/// How much of a file's start is looked at for a NUL: git's 8000 bytes,
/// rounded up to 8 KiB.
const SNIFF_LEN: usize = 8 * 1024;

/// The answer for `file` (of `size` bytes, opened from `path`) if it is
/// binary; `None` when it is text, to be read as such. `full`: the full
/// profile's fields too.
pub fn answer(file: &File, size: u64, path: &str, full: bool) -> Result<Option<Answer>, ToolError> {
    if size == 0 {
        return Ok(None);
    }
    let mut head = [0u8; SNIFF_LEN];
    let got = image::read_head(file, &mut head, path)?;
    let head = &head[..got];
    if memchr::memchr(0, head).is_none() {
        return Ok(None);
    }
    let output = match kind(head) {
        Kind::Text(encoding) => format!(
            "[{encoding} text: {size} bytes; not shown. Convert it with bash: iconv -f \
             {encoding} -t UTF-8 FILE]"
        ),
        Kind::Binary(what) => {
            let what = what.map(|w| format!(", {w}")).unwrap_or_default();
            format!(
                "[binary file: {size} bytes{what}; not shown. Inspect it with bash: file, \
                 xxd | head, strings]"
            )
        }
    };
    let mut answer = vec![("output", Field::Text(output.into_bytes()))];
    if full {
        let sha256 = sha256_of_file(file)
            .map_err(|e| ToolError::from_io(&e, path, ToolError::ReadFailed))?;
        answer.push(("binary", Field::Bool(true)));
        answer.push(("sha256", Field::Text(sha256.into_bytes())));
    }
    Ok(Some(answer))
}

/// What a file holding a NUL is, by its first bytes.
#[derive(Debug, PartialEq, Eq)]
enum Kind {
    /// Text in a wide encoding, as `iconv` names it.
    Text(&'static str),
    /// Binary, and its type where its first bytes are well known.
    Binary(Option<&'static str>),
}

fn kind(head: &[u8]) -> Kind {
    if head.starts_with(b"\xff\xfe\0\0") || head.starts_with(b"\0\0\xfe\xff") {
        return Kind::Text("UTF-32");
    }
    if head.starts_with(b"\xff\xfe") || head.starts_with(b"\xfe\xff") {
        return Kind::Text("UTF-16");
    }
    if let Some(format) = image::sniff(head) {
        return Kind::Binary(Some(format.described()));
    }
    const MAGIC: &[(&[u8], &str)] = &[
        (b"%PDF-", "PDF document"),
        (b"\x1f\x8b", "gzip compressed data"),
        (b"PK\x03\x04", "Zip archive"),
        (b"PK\x05\x06", "Zip archive"),
        (b"\xfd7zXZ\0", "xz compressed data"),
        (b"\x28\xb5\x2f\xfd", "zstd compressed data"),
        (b"SQLite format 3\0", "SQLite 3 database"),
        (b"\xfe\xed\xfa\xce", "Mach-O binary"),
        (b"\xce\xfa\xed\xfe", "Mach-O binary"),
        (b"\xfe\xed\xfa\xcf", "Mach-O binary"),
        (b"\xcf\xfa\xed\xfe", "Mach-O binary"),
        (b"\xca\xfe\xba\xbe", "Mach-O universal binary or Java class"),
        (b"MZ", "DOS/Windows executable"),
    ];
    if head.starts_with(b"\x7fELF") {
        return Kind::Binary(Some(elf(head)));
    }
    if head.get(257..262) == Some(b"ustar") {
        return Kind::Binary(Some("tar archive"));
    }
    let known = MAGIC.iter().find(|(magic, _)| head.starts_with(magic));
    Kind::Binary(known.map(|(_, what)| *what))
}

/// An ELF file's type (`e_type`, in the byte order `EI_DATA` gives).
fn elf(head: &[u8]) -> &'static str {
    let e_type = match (head.get(5), head.get(16..18)) {
        (Some(1), Some(&[lo, hi])) => u16::from_le_bytes([lo, hi]),
        (Some(2), Some(&[hi, lo])) => u16::from_be_bytes([hi, lo]),
        _ => 0,
    };
    match e_type {
        1 => "ELF object file",
        4 => "ELF core dump",
        // ET_DYN is a shared library or a position-independent program.
        _ => "ELF executable or library",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_type_is_told_by_the_first_bytes() {
        let mut tar = vec![0u8; 512];
        tar[257..262].copy_from_slice(b"ustar");
        let mut elf_object = b"\x7fELF\x02\x01\x01\0".to_vec();
        elf_object.resize(18, 0);
        elf_object[16] = 1;
        let cases: [(&[u8], Kind); 9] = [
            (b"\xff\xfeh\0i\0", Kind::Text("UTF-16")),
            (b"\xfe\xff\0h\0i", Kind::Text("UTF-16")),
            (b"\xff\xfe\0\0h\0\0\0", Kind::Text("UTF-32")),
            (b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", Kind::Binary(Some("PNG image"))),
            (&tar, Kind::Binary(Some("tar archive"))),
            (&elf_object, Kind::Binary(Some("ELF object file"))),
            (b"\x7fELF\x02\x01", Kind::Binary(Some("ELF executable or library"))),
            (b"SQLite format 3\0", Kind::Binary(Some("SQLite 3 database"))),
            (b"ab\0cd", Kind::Binary(None)),
        ];
        for (head, want) in cases {
            assert_eq!(kind(head), want, "{head:?}");
        }
    }
}
