//! file_read's image answer (full profile, for a client that shows images:
//! `Context::images`, which the MCP server sets). A PNG, JPEG, GIF or WebP
//! file, known by its first bytes and a header that gives its size in
//! pixels (never by its name), is answered as the image itself, base64,
//! beside a line that describes it:
//! `{"output":"Image: PNG, 640x480, 12345 bytes","image":{"mime_type":"image/png","data":"…"},"sha256":"…"}`.
//! The MCP server turns `image` into image content (docs/MCP.md).
//!
//! Bounded, never cut: an image of more than `MAX_BYTES` bytes or
//! `MAX_SIDE` pixels a side is `READ_FAILED` saying so (a cut image is no
//! image). The output limit bounds the text a model reads, and the image
//! never becomes text: the MCP server sends it as image content, which
//! hosts measure as an image (docs/MCP.md, "Answers sized for the hosts"). A file with an
//! image's first bytes but no header to read is answered as text, as
//! before: a client given a broken image may refuse the whole request.

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::FileExt;

use base64::Engine;

use crate::error::ToolError;
use crate::fs::digest::sha256_hex;
use crate::fs::read;
use crate::json::Field;
use crate::memory;
use crate::protocol::Answer;

/// The most bytes an image answer carries: 3.75 MiB, whose base64 is the
/// 5 MiB Claude's API takes of one image at most (it counts the base64).
pub const MAX_BYTES: u64 = 5 * 1024 * 1024 / 4 * 3;

/// The most pixels a side: Claude's API refuses an image wider or taller.
pub const MAX_SIDE: u32 = 8000;

/// The first bytes read to know an image (WebP's header ends at 30).
const MAGIC_LEN: usize = 32;

/// The image formats answered as images.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Png,
    Jpeg,
    Gif,
    WebP,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Png => "PNG",
            Format::Jpeg => "JPEG",
            Format::Gif => "GIF",
            Format::WebP => "WebP",
        }
    }

    /// As a binary file's answer names its type (`binary`).
    pub fn described(self) -> &'static str {
        match self {
            Format::Png => "PNG image",
            Format::Jpeg => "JPEG image",
            Format::Gif => "GIF image",
            Format::WebP => "WebP image",
        }
    }

    pub fn mime_type(self) -> &'static str {
        match self {
            Format::Png => "image/png",
            Format::Jpeg => "image/jpeg",
            Format::Gif => "image/gif",
            Format::WebP => "image/webp",
        }
    }
}

/// The format of a file beginning with `head`, by its magic bytes.
pub fn sniff(head: &[u8]) -> Option<Format> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(Format::Png)
    } else if head.starts_with(b"\xff\xd8\xff") {
        Some(Format::Jpeg)
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some(Format::Gif)
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some(Format::WebP)
    } else {
        None
    }
}

/// The answer for `file` (of `size` bytes, opened from `path`) if it is an
/// image; `None` (the file rewound) when it is not one, to be read as text.
pub fn answer(file: &mut File, size: u64, path: &str) -> Result<Option<Answer>, ToolError> {
    // A file that reports no size (`/proc`) is no image.
    if size < 12 {
        return Ok(None);
    }
    let mut head = [0u8; MAGIC_LEN];
    let got = read_head(file, &mut head, path)?;
    let Some(format) = sniff(&head[..got]) else {
        return Ok(None);
    };
    let limit = MAX_BYTES;
    if size > limit {
        // The size in pixels, to tell, where the first bytes give it.
        let pixels = dimensions(format, &head[..got]);
        return Err(too_large(path, format, pixels, size, limit));
    }
    let content = read::read_up_to(file, path, limit.saturating_add(1))?;
    let bytes = content.len() as u64;
    if bytes > limit {
        // It grew since its size was read.
        return Err(too_large(path, format, dimensions(format, &content), bytes, limit));
    }
    let Some((width, height)) = dimensions(format, &content) else {
        file.seek(SeekFrom::Start(0)).map_err(|_| ToolError::SeekFailed(path.to_owned()))?;
        return Ok(None);
    };
    if width > MAX_SIDE || height > MAX_SIDE {
        return Err(too_large(path, format, Some((width, height)), bytes, limit));
    }
    let sha256 = sha256_hex(&content);
    let image = field(format, &content)?;
    drop(content);
    let output = caption(format, (width, height), bytes);
    Ok(Some(vec![
        ("output", Field::Text(output.into_bytes())),
        ("image", image),
        ("sha256", Field::Text(sha256.into_bytes())),
    ]))
}

/// The line an image answer's `output` holds: `Image: PNG, 640x480, 12345 bytes`
/// (file_read's, web_fetch's).
pub fn caption(format: Format, (width, height): (u32, u32), bytes: u64) -> String {
    format!("Image: {}, {width}x{height}, {bytes} bytes", format.name())
}

/// The answer's `image` field, `{"mime_type":…,"data":…}` with `content`
/// in base64, which the MCP server sends as image content
/// (`mcp::image::take`).
pub fn field(format: Format, content: &[u8]) -> Result<Field, ToolError> {
    Ok(Field::Object(vec![
        ("mime_type", Field::Text(format.mime_type().as_bytes().to_vec())),
        ("data", Field::Text(encode(content)?)),
    ]))
}

/// Reads the first bytes of `file` without moving its offset (also how
/// `binary` looks for a NUL).
pub(super) fn read_head(file: &File, head: &mut [u8], path: &str) -> Result<usize, ToolError> {
    let mut got = 0;
    while got < head.len() {
        match file.read_at(&mut head[got..], got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ToolError::from_io(&e, path, ToolError::ReadFailed)),
        }
    }
    Ok(got)
}

fn too_large(
    path: &str,
    format: Format,
    pixels: Option<(u32, u32)>,
    bytes: u64,
    limit: u64,
) -> ToolError {
    let pixels = pixels.map(|(w, h)| format!("{w}x{h} pixels, ")).unwrap_or_default();
    ToolError::ReadFailed(format!(
        "{path} (a {} image of {pixels}{bytes} bytes: an image is answered whole or not at all, \
         at most {limit} bytes (5 MiB in base64) and {MAX_SIDE} pixels a side; bash can make a \
         smaller copy, e.g. convert IN -resize 2000x2000 OUT.png)",
        format.name()
    ))
}

/// `content` in base64, in memory asked for without aborting.
fn encode(content: &[u8]) -> Result<Vec<u8>, ToolError> {
    let len = base64::encoded_len(content.len(), true).ok_or(ToolError::AllocationFailed)?;
    let mut data = Vec::new();
    memory::try_reserve(&mut data, len).map_err(|_| ToolError::AllocationFailed)?;
    data.resize(len, 0);
    let written = base64::engine::general_purpose::STANDARD
        .encode_slice(content, &mut data)
        .map_err(|_| ToolError::AllocationFailed)?;
    data.truncate(written);
    Ok(data)
}

/// The width and height the header of an image of `format` gives; `None`
/// when there is no header to read, or it says 0.
pub fn dimensions(format: Format, bytes: &[u8]) -> Option<(u32, u32)> {
    let (w, h) = match format {
        Format::Png => {
            // The first chunk is IHDR: width and height, big-endian.
            (bytes.get(12..16)? == b"IHDR").then_some(())?;
            (be32(bytes, 16)?, be32(bytes, 20)?)
        }
        Format::Gif => gif(bytes)?,
        Format::WebP => webp(bytes)?,
        Format::Jpeg => jpeg(bytes)?,
    };
    (w > 0 && h > 0).then_some((w, h))
}

/// The size a GIF is shown at: its logical screen, grown to hold every
/// frame. A frame (image descriptor) may be placed and sized beyond the
/// screen, and decoders grow the canvas to fit it (Pillow does), so the
/// bound on the sides must see every frame, not the screen alone. The walk
/// goes from block to block to the trailer: extensions and each frame's
/// image data are skipped by their sub-block sizes, one step each, never
/// past the end, so it is linear in the (bounded) file. A stream that
/// cannot be walked (an unknown block, a block cut short) is no image to
/// measure: `None`, answered as text, as a PNG without its header. One
/// that ends where a block would start, without its trailer, has had
/// every frame measured, and is taken as decoders take it.
fn gif(b: &[u8]) -> Option<(u32, u32)> {
    let (mut width, mut height) = (u32::from(le16(b, 6)?), u32::from(le16(b, 8)?));
    let flags = *b.get(10)?;
    // The header and the logical screen descriptor, then the global colour table.
    let mut at = 13 + colour_table(flags);
    loop {
        let Some(&block) = b.get(at) else {
            return (at == b.len()).then_some((width, height));
        };
        match block {
            // Trailer.
            0x3b => return Some((width, height)),
            // Extension: its label, then sub-blocks.
            0x21 => {
                b.get(at + 1)?;
                at = skip_sub_blocks(b, at + 2)?;
            }
            // Image descriptor: left, top, width, height, flags; a local
            // colour table; the LZW minimum code size; the data's sub-blocks.
            0x2c => {
                let right = u32::from(le16(b, at + 1)?) + u32::from(le16(b, at + 5)?);
                let bottom = u32::from(le16(b, at + 3)?) + u32::from(le16(b, at + 7)?);
                width = width.max(right);
                height = height.max(bottom);
                let flags = *b.get(at + 9)?;
                at += 10 + colour_table(flags);
                b.get(at)?;
                at = skip_sub_blocks(b, at + 1)?;
            }
            _ => return None,
        }
    }
}

/// The bytes of the colour table a GIF's descriptor flags announce.
fn colour_table(flags: u8) -> usize {
    if flags & 0x80 == 0 {
        0
    } else {
        3 << ((flags & 0x07) + 1)
    }
}

/// Where the sub-blocks starting at `at` end (past their zero-sized
/// terminator); `None` when the bytes end first.
fn skip_sub_blocks(b: &[u8], mut at: usize) -> Option<usize> {
    loop {
        let size = usize::from(*b.get(at)?);
        at += 1;
        if size == 0 {
            return Some(at);
        }
        at += size;
    }
}

fn webp(b: &[u8]) -> Option<(u32, u32)> {
    match b.get(12..16)? {
        // Lossy: a key frame's start code, then 14-bit width and height.
        b"VP8 " => {
            (b.get(23..26)? == [0x9d, 0x01, 0x2a]).then_some(())?;
            Some((u32::from(le16(b, 26)? & 0x3fff), u32::from(le16(b, 28)? & 0x3fff)))
        }
        // Lossless: a signature byte, then width - 1 and height - 1 in 14
        // bits each.
        b"VP8L" => {
            (*b.get(20)? == 0x2f).then_some(())?;
            let bits = u32::from_le_bytes(b.get(21..25)?.try_into().ok()?);
            Some(((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1))
        }
        // Extended: the canvas, width - 1 and height - 1 in 24 bits each.
        b"VP8X" => {
            let le24 = |at: usize| -> Option<u32> {
                let s = b.get(at..at + 3)?;
                Some(u32::from(s[0]) | u32::from(s[1]) << 8 | u32::from(s[2]) << 16)
            };
            Some((le24(24)? + 1, le24(27)? + 1))
        }
        _ => None,
    }
}

/// Walks the segments to the first start of frame (SOFn), which holds the
/// height and width; a scan (SOS) before it means none.
fn jpeg(b: &[u8]) -> Option<(u32, u32)> {
    let mut i = 2;
    loop {
        (*b.get(i)? == 0xff).then_some(())?;
        let marker = *b.get(i + 1)?;
        match marker {
            // Fill bytes before a marker.
            0xff => i += 1,
            // Markers without a length.
            0x01 | 0xd0..=0xd7 => i += 2,
            // Start of image, end of image, start of scan: no frame header.
            0xd8..=0xda => return None,
            0xc0..=0xcf if !matches!(marker, 0xc4 | 0xc8 | 0xcc) => {
                return Some((u32::from(be16(b, i + 7)?), u32::from(be16(b, i + 5)?)));
            }
            _ => i += 2 + usize::from(be16(b, i + 2)?),
        }
    }
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn le16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The headers of small images of each format, as encoders write them.
    fn png(w: u32, h: u32) -> Vec<u8> {
        let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        b.extend(w.to_be_bytes());
        b.extend(h.to_be_bytes());
        b.extend([8, 6, 0, 0, 0]);
        b
    }

    #[test]
    fn each_format_is_known_by_its_first_bytes_and_measured() {
        assert_eq!(sniff(&png(1, 1)), Some(Format::Png));
        assert_eq!(dimensions(Format::Png, &png(640, 480)), Some((640, 480)));
        assert_eq!(dimensions(Format::Png, &png(0, 480)), None, "0 wide is no image");
        let gif = b"GIF89a\x80\x02\xe0\x01\x70\0\0;";
        assert_eq!(sniff(gif), Some(Format::Gif));
        assert_eq!(dimensions(Format::Gif, gif), Some((640, 480)));
        // A JPEG with an APP0 segment before its SOF0.
        let mut jpeg = b"\xff\xd8\xff\xe0\x00\x10JFIF\0\x01\x01\0\0\x01\0\x01\0\0".to_vec();
        jpeg.extend(b"\xff\xc0\x00\x11\x08\x01\xe0\x02\x80\x03");
        assert_eq!(sniff(&jpeg), Some(Format::Jpeg));
        assert_eq!(dimensions(Format::Jpeg, &jpeg), Some((640, 480)));
        // A scan before any frame header: nothing to measure.
        assert_eq!(dimensions(Format::Jpeg, b"\xff\xd8\xff\xda\x00\x08"), None);
        let lossless = b"RIFF\0\0\0\0WEBPVP8L\0\0\0\0\x2f\x7f\xc2\x77\x00";
        assert_eq!(sniff(lossless), Some(Format::WebP));
        assert_eq!(dimensions(Format::WebP, lossless), Some((640, 480)));
        let mut lossy = b"RIFF\0\0\0\0WEBPVP8 \0\0\0\0\0\0\0\x9d\x01\x2a".to_vec();
        lossy.extend([0x80, 0x02, 0xe0, 0x01]);
        assert_eq!(dimensions(Format::WebP, &lossy), Some((640, 480)));
        let extended = b"RIFF\0\0\0\0WEBPVP8X\0\0\0\0\0\0\0\0\x7f\x02\0\xdf\x01\0";
        assert_eq!(dimensions(Format::WebP, extended), Some((640, 480)));
        assert_eq!(sniff(b"hello world, not an image"), None);
        assert_eq!(dimensions(Format::Png, b"\x89PNG\r\n\x1a\n"), None, "cut short");
    }

    /// A GIF of a `screen`, a global colour table of 4 entries, a graphic
    /// control extension and one frame of 1 pixel's LZW data for each of
    /// `frames` (left, top, width, height), with a local colour table on
    /// the second; the trailer.
    fn gif(screen: (u16, u16), frames: &[(u16, u16, u16, u16)]) -> Vec<u8> {
        let mut b = b"GIF89a".to_vec();
        b.extend(screen.0.to_le_bytes());
        b.extend(screen.1.to_le_bytes());
        b.extend([0x81, 0, 0]);
        b.extend([0u8; 12]);
        for (i, &(left, top, width, height)) in frames.iter().enumerate() {
            b.extend([0x21, 0xf9, 4, 0, 0, 0, 0, 0]);
            b.push(0x2c);
            for n in [left, top, width, height] {
                b.extend(n.to_le_bytes());
            }
            if i == 1 {
                b.push(0x80);
                b.extend([0u8; 6]);
            } else {
                b.push(0);
            }
            b.extend([2, 2, 0x4c, 0x01, 0]);
        }
        b.push(b';');
        b
    }

    #[test]
    fn a_gif_is_measured_by_its_screen_grown_to_hold_every_frame() {
        let frame = (0, 0, 10, 5);
        assert_eq!(dimensions(Format::Gif, &gif((10, 5), &[frame, frame])), Some((10, 5)));
        // A frame past the screen, by its size or its place: the canvas a
        // decoder makes holds it.
        let wide = gif((10, 5), &[frame, (0, 0, 9000, 5)]);
        assert_eq!(dimensions(Format::Gif, &wide), Some((9000, 5)));
        let placed = gif((10, 5), &[frame, frame, (7990, 7995, 20, 10)]);
        assert_eq!(dimensions(Format::Gif, &placed), Some((8010, 8005)));
        // Without its trailer, every frame was met: taken as decoders take it.
        let mut untrailed = gif((10, 5), &[(0, 0, 9000, 5)]);
        untrailed.pop();
        assert_eq!(dimensions(Format::Gif, &untrailed), Some((9000, 5)));
        // A stream that cannot be walked is none to measure (read as text):
        // cut inside a block, an unknown block, a colour table cut short.
        let whole = gif((10, 5), &[frame, (0, 0, 9000, 5)]);
        for cut in [whole.len() - 2, whole.len() - 5, 30, 14] {
            assert_eq!(dimensions(Format::Gif, &whole[..cut]), None, "cut at {cut}");
        }
        let mut unknown = gif((10, 5), &[frame]);
        unknown.insert(unknown.len() - 1, 0x99);
        assert_eq!(dimensions(Format::Gif, &unknown), None);
    }

    #[test]
    fn the_size_bound_is_claudes_and_shrinks_with_the_output_limit() {
        assert_eq!(MAX_BYTES, 3_932_160);
        assert_eq!(base64::encoded_len(MAX_BYTES as usize, true), Some(5 * 1024 * 1024));
    }
}
