//! file_read in the full profile (docs/TOOLS.md, "file_read", "Full
//! profile"): `line_numbers` as `cat -n` numbers lines, `total_lines` and
//! the `sha256` of the whole file whatever part is read, and images
//! answered as images to a client that shows them (the MCP server).

use crate::common;
use crate::common::mcp::{unconfined, Session};
use common::*;

use std::process::Command;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

pub(crate) fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The seed answer with the full profile's fields after it.
fn with_version(seed: Value, content: &[u8], lines: u64) -> Value {
    let mut answer = seed;
    answer["total_lines"] = json!(lines);
    answer["sha256"] = json!(sha256(content));
    answer
}

const FILE: &str = "one\ntwo\n\nfour \"4\"\nfive";

#[test]
fn full_every_seed_call_answers_the_seed_answer_plus_total_lines_and_sha256() {
    let env = Env::new();
    env.write("f.txt", FILE);
    env.write("empty.txt", "");
    for args in [
        json!({"file_path": "f.txt"}),
        json!({"file_path": "f.txt", "offset": 2}),
        json!({"file_path": "f.txt", "offset": 2, "limit": 2}),
        json!({"file_path": "f.txt", "limit": 0}),
        json!({"file_path": "f.txt", "offset": 99}),
        json!({"file_path": "f.txt", "line_numbers": false}),
        json!({"file_path": "empty.txt"}),
        json!({"file_path": "empty.txt", "offset": 1, "line_numbers": true}),
    ] {
        let mut seed_args = args.clone();
        seed_args.as_object_mut().unwrap().remove("line_numbers");
        let seed = env.call("file_read", seed_args);
        let file = args["file_path"].as_str().unwrap();
        let content = env.read(file);
        let lines = if content.is_empty() { 0 } else { 5 };
        assert_eq!(env.call_full("file_read", args.clone()), with_version(seed, &content, lines));
    }
    // The seed profile refuses the new parameter, ignored before Reshape III.
    assert_eq!(
        env.call("file_read", json!({"file_path": "f.txt", "line_numbers": true})),
        full_only("line_numbers", "file_read")
    );
}

#[test]
fn full_line_numbers_are_cat_n_s_numbered_from_the_line_in_the_file() {
    let env = Env::new();
    env.write("f.txt", FILE);
    let cat = Command::new("cat").arg("-n").arg(env.path("f.txt")).output().unwrap();
    let cat = String::from_utf8(cat.stdout).unwrap();
    let v = env.call_full("file_read", json!({"file_path": "f.txt", "line_numbers": true}));
    assert_eq!(v, with_version(json!({"output": cat}), FILE.as_bytes(), 5));
    // A window: the same lines of cat -n, numbered as in the file.
    let cat_lines: Vec<&str> = cat.split_inclusive('\n').collect();
    for (offset, limit) in [(1, 1), (2, 2), (3, 9), (5, 1), (0, 2)] {
        let args =
            json!({"file_path": "f.txt", "offset": offset, "limit": limit, "line_numbers": true});
        let first = offset.max(1) - 1;
        let want = cat_lines[first..(first + limit).min(5)].concat();
        assert_eq!(env.call_full("file_read", args)["output"], want, "{offset}, {limit}");
    }
    snap!(
        "line_numbers",
        env.call_full(
            "file_read",
            json!({"file_path": "f.txt", "offset": 3, "limit": 2, "line_numbers": true})
        )
    );
    // Past 999999 the column widens, as cat -n's does.
    let many: String = (1..=1_000_001).map(|n| format!("{n}\n")).collect();
    env.write("many.txt", &many);
    let v = env.call_full(
        "file_read",
        json!({"file_path": "many.txt", "offset": 999_999, "line_numbers": true}),
    );
    assert_eq!(
        v,
        with_version(
            json!({"output": "999999\t999999\n1000000\t1000000\n1000001\t1000001\n"}),
            many.as_bytes(),
            1_000_001
        )
    );
}

#[test]
fn full_total_lines_counts_a_last_line_without_a_newline() {
    let env = Env::new();
    for (content, lines) in
        [("", 0), ("a", 1), ("a\n", 1), ("\n\n", 2), ("a\nb", 2), ("a\r\nb\r\n", 2)]
    {
        env.write("f", content);
        let v = env.call_full("file_read", json!({"file_path": "f", "limit": 1}));
        assert_eq!(v["total_lines"], lines, "{content:?}");
    }
}

/// The output limit cuts the answer, the numbers included; the sha256 and
/// the line count are still the whole file's (nothing is seeked past in
/// the full profile), and the answer, fields and all, stays within it.
#[test]
fn full_the_output_limit_cuts_the_output_never_the_version() {
    let env = Env::new();
    // 3 MiB: the seed profile seeks past most of it.
    let content: String = (1..=300_000).map(|n| format!("line {n:04}\n")).collect();
    let total = content.lines().count() as u64;
    env.write("big.txt", &content);
    for args in [
        json!({"file_path": "big.txt"}),
        json!({"file_path": "big.txt", "line_numbers": true}),
        json!({"file_path": "big.txt", "offset": 10, "limit": 100_000, "line_numbers": true}),
    ] {
        let ran = env
            .cmd("file_read")
            .env("IKIGAI_TOOLS_PROFILE", "full")
            .env("IKIGAI_TOOLS_MAX_OUTPUT", "1024")
            .stdin(args.to_string())
            .run();
        assert!(ran.stdout.len() <= 1024, "{args}: {} bytes", ran.stdout.len());
        let v = ran.json();
        assert_eq!(v["total_lines"], total, "{args}");
        assert_eq!(v["sha256"], sha256(content.as_bytes()), "{args}");
        let output = v["output"].as_str().unwrap();
        assert!(output.contains(" bytes omitted (lines "), "{args}: {output}");
        assert!(output.contains("); continue with offset="), "{args}: {output}");
    }
    // The marker's offset is the line after the head's last whole line,
    // numbers or not.
    let ran = env
        .cmd("file_read")
        .env("IKIGAI_TOOLS_PROFILE", "full")
        .env("IKIGAI_TOOLS_MAX_OUTPUT", "1024")
        .stdin(json!({"file_path": "big.txt", "line_numbers": true}).to_string())
        .run();
    let output = ran.json()["output"].as_str().unwrap().to_owned();
    let (head, rest) = output.split_once("\n[... ").unwrap();
    let head_lines = head.lines().count();
    assert!(head.starts_with("     1\tline 0001\n     2\tline 0002\n"), "{head}");
    // The head ends on a line now: the next line is the first not shown.
    let next = format!("continue with offset={} (limit=N for N lines) ...]", head_lines + 1);
    assert!(rest.contains(&next), "{rest}");
    assert!(output.ends_with("300000\tline 300000\n"), "{output}");
}

#[test]
fn full_a_sizeless_file_is_hashed_when_read_whole_and_not_when_cut_at_64_mib() {
    let env = Env::new();
    let v = env.call_full("file_read", json!({"file_path": "/proc/self/status", "limit": 1}));
    assert!(v["output"].as_str().unwrap().starts_with("Name:"), "{v}");
    assert!(v["total_lines"].as_u64().is_some_and(|n| n > 1), "{v}");
    assert_eq!(v["sha256"].as_str().map(str::len), Some(64), "{v}");
    // pagemap goes on far past 64 MiB: what the file holds is not known,
    // so neither field is given; the output is the seed profile's.
    let args = json!({"file_path": "/proc/self/pagemap", "offset": 1, "limit": 1});
    let ran = env
        .cmd("file_read")
        .env("IKIGAI_TOOLS_PROFILE", "full")
        .env("IKIGAI_TOOLS_MAX_OUTPUT", "4096")
        .stdin(args.to_string())
        .run();
    let v = ran.json();
    assert_eq!(v.as_object().unwrap().keys().collect::<Vec<_>>(), ["output"], "{v}");
    assert!(v["output"].as_str().unwrap().ends_with(
        "[... stopped after 67108864 bytes, at line 1: the file reports no size (as /proc and \
         /sys files do) and file_read reads at most 64 MiB of such a file; bash can read on \
         from there (tail -c +67108865 FILE) ...]"
    ));
}

#[test]
fn full_line_numbers_must_be_a_boolean() {
    let env = Env::new();
    env.write("f", "x");
    assert_eq!(
        env.call_full("file_read", json!({"file_path": "f", "line_numbers": "yes"})),
        json!({"error": "parameter line_numbers must be a boolean", "error_code": "INVALID_ARG"})
    );
}

// Images.

/// A PNG of `w` x `h` red pixels, as an encoder writes it.
pub(crate) fn png(w: u32, h: u32) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8], data: &[u8]) {
        out.extend((data.len() as u32).to_be_bytes());
        out.extend(kind);
        out.extend(data);
        out.extend(crc32(&[kind, data].concat()).to_be_bytes());
    }
    let mut ihdr = Vec::new();
    ihdr.extend(w.to_be_bytes());
    ihdr.extend(h.to_be_bytes());
    ihdr.extend([8, 2, 0, 0, 0]);
    // Stored (uncompressed) deflate blocks: no compressor needed.
    let row: Vec<u8> = std::iter::once(0).chain((0..w).flat_map(|_| [255, 0, 0])).collect();
    let raw: Vec<u8> = (0..h).flat_map(|_| row.clone()).collect();
    let mut zlib = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65_535).collect();
    for (i, block) in blocks.iter().enumerate() {
        zlib.push(u8::from(i + 1 == blocks.len()));
        let len = block.len() as u16;
        zlib.extend(len.to_le_bytes());
        zlib.extend((!len).to_le_bytes());
        zlib.extend(*block);
    }
    zlib.extend(adler32(&raw).to_be_bytes());
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &zlib);
    chunk(&mut out, b"IEND", b"");
    out
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

fn adler32(bytes: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &x in bytes {
        a = (a + u32::from(x)) % 65_521;
        b = (b + a) % 65_521;
    }
    (b << 16) | a
}

pub(crate) fn base64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A call as the MCP server makes it: full profile, images on.
fn call_with_images(env: &Env, args: Value) -> Value {
    let ran = env
        .cmd("file_read")
        .env("IKIGAI_TOOLS_PROFILE", "full")
        .env("IKIGAI_TOOLS_IMAGES", "1")
        .stdin(args.to_string())
        .run();
    ran.json()
}

#[test]
fn full_an_image_is_answered_as_one_only_when_images_are_asked_for() {
    let env = Env::new();
    let image = png(3, 2);
    env.write("red.png", &image);
    // Known by its bytes, not its name.
    env.write("red.txt", &image);
    let want = json!({
        "output": format!("Image: PNG, 3x2, {} bytes", image.len()),
        "image": {"mime_type": "image/png", "data": base64(&image)},
        "sha256": sha256(&image),
    });
    assert_eq!(call_with_images(&env, json!({"file_path": "red.png"})), want);
    assert_eq!(call_with_images(&env, json!({"file_path": "red.txt", "offset": 2})), want);
    // The command line (no images asked for) and the seed profile tell a
    // binary file (docs/TOOLS.md, "file_read").
    let seed = env.call("file_read", json!({"file_path": "red.png"}));
    let told = format!(
        "[binary file: {} bytes, PNG image; not shown. Inspect it with bash: file, xxd | head, \
         strings]",
        image.len()
    );
    assert_eq!(seed, json!({"output": told}));
    let full = env.call_full("file_read", json!({"file_path": "red.png"}));
    assert_eq!(full, json!({"output": told, "binary": true, "sha256": sha256(&image)}));
    let ran = env
        .cmd("file_read")
        .env("IKIGAI_TOOLS_IMAGES", "1")
        .stdin(json!({"file_path": "red.png"}).to_string())
        .run();
    assert_eq!(ran.json(), seed);
}

#[test]
fn full_jpeg_gif_and_webp_are_known_and_measured() {
    let env = Env::new();
    let mut jpeg = b"\xff\xd8\xff\xe0\x00\x10JFIF\0\x01\x01\0\0\x01\0\x01\0\0".to_vec();
    jpeg.extend(b"\xff\xc0\x00\x11\x08\x01\xe0\x02\x80\x03\x01\x22\x00\x02\x11\x01\x03\x11\x01");
    jpeg.extend(b"\xff\xd9");
    let gif = b"GIF89a\x0a\x00\x05\x00\x00\x00\x00;".to_vec();
    let webp = b"RIFF\x1a\0\0\0WEBPVP8L\x0d\0\0\0\x2f\x7f\xc2\x77\x00\0\0\0\0\0\0\0\0".to_vec();
    for (name, bytes, told, mime) in [
        ("a.jpg", &jpeg, "JPEG, 640x480", "image/jpeg"),
        ("a.gif", &gif, "GIF, 10x5", "image/gif"),
        ("a.webp", &webp, "WebP, 640x480", "image/webp"),
    ] {
        env.write(name, bytes);
        let v = call_with_images(&env, json!({"file_path": name}));
        let want = json!({
            "output": format!("Image: {told}, {} bytes", bytes.len()),
            "image": {"mime_type": mime, "data": base64(bytes)},
            "sha256": sha256(bytes),
        });
        assert_eq!(v, want, "{name}");
    }
    // An image's first bytes without a header to measure: read as text.
    env.write("cut.png", b"\x89PNG\r\n\x1a\nnot a header at all");
    let v = call_with_images(&env, json!({"file_path": "cut.png"}));
    assert_eq!(v["output"], "\u{FFFD}PNG\r\n\u{1a}\nnot a header at all");
    assert_eq!(v["total_lines"], 3);
}

#[test]
fn full_an_image_too_large_is_refused_whole_never_cut() {
    let env = Env::new();
    // 8001 pixels wide: only the header matters.
    let mut wide = png(1, 1);
    wide[16..20].copy_from_slice(&8001u32.to_be_bytes());
    env.write("wide.png", &wide);
    snap!("image_too_wide", call_with_images(&env, json!({"file_path": "wide.png"})));
    // Past 3.75 MiB (5 MiB in base64).
    let mut big = png(1, 1);
    big.resize(3_932_161, 0);
    env.write("big.png", &big);
    assert_eq!(
        call_with_images(&env, json!({"file_path": "big.png"})),
        json!({
            "error": "Failed to read file: big.png (a PNG image of 1x1 pixels, 3932161 bytes: an image is \
                      answered whole or not at all, at most 3932160 bytes (5 MiB in base64) and \
                      8000 pixels a side; bash can make a smaller copy, e.g. convert IN -resize \
                      2000x2000 OUT.png)",
            "error_code": "READ_FAILED"
        })
    );
    // The output limit bounds text, and the image is sent as an image
    // (docs/MCP.md, "Answers sized for the hosts"): whole, past the limit.
    let image = png(40, 40);
    env.write("mid.png", &image);
    let ran = env
        .cmd("file_read")
        .env("IKIGAI_TOOLS_PROFILE", "full")
        .env("IKIGAI_TOOLS_IMAGES", "1")
        .env("IKIGAI_TOOLS_MAX_OUTPUT", "2048")
        .stdin(json!({"file_path": "mid.png"}).to_string())
        .run();
    let answer = ran.json();
    assert_eq!(answer["image"]["data"], base64(&image));
    assert!(image.len() > 2048, "{}", image.len());
    // Not an overrun of the limit either (`limit::unbounded_len`).
    assert_eq!(ran.stderr, "");
}

/// A GIF's logical screen is small, a frame in it is 9000 pixels wide (or
/// placed past 8000): decoders grow the canvas to hold the frame, so the
/// bound on the sides applies to every frame, not the screen alone.
#[test]
fn full_a_gif_frame_larger_than_the_bound_is_refused() {
    let env = Env::new();
    // The header, a 10x5 screen without a colour table, then frames of one
    // pixel's LZW data each: (left, top, width, height).
    let gif = |frames: &[(u16, u16, u16, u16)]| {
        let mut b = b"GIF89a\x0a\x00\x05\x00\x00\x00\x00".to_vec();
        for &(left, top, width, height) in frames {
            b.extend([0x21, 0xf9, 4, 0, 0, 0, 0, 0, 0x2c]);
            for n in [left, top, width, height] {
                b.extend(n.to_le_bytes());
            }
            b.extend([0, 2, 2, 0x4c, 0x01, 0]);
        }
        b.push(b';');
        b
    };
    let refusal = |name: &str, bytes: &[u8], pixels: &str| {
        json!({
            "error": format!(
                "Failed to read file: {name} (a GIF image of {pixels} pixels, {} bytes: an image \
                 is answered whole or not at all, at most 3932160 bytes (5 MiB in base64) and \
                 8000 pixels a side; bash can make a smaller copy, e.g. convert IN -resize \
                 2000x2000 OUT.png)",
                bytes.len()
            ),
            "error_code": "READ_FAILED"
        })
    };
    let wide = gif(&[(0, 0, 10, 5), (0, 0, 9000, 5)]);
    env.write("wide.gif", &wide);
    let v = call_with_images(&env, json!({"file_path": "wide.gif"}));
    assert_eq!(v, refusal("wide.gif", &wide, "9000x5"));
    let placed = gif(&[(7995, 0, 10, 5)]);
    env.write("placed.gif", &placed);
    let v = call_with_images(&env, json!({"file_path": "placed.gif"}));
    assert_eq!(v, refusal("placed.gif", &placed, "8005x5"));
    // Frames within the bound: the image, measured by the canvas they make.
    let fits = gif(&[(0, 0, 10, 5), (0, 0, 8000, 7)]);
    env.write("fits.gif", &fits);
    let v = call_with_images(&env, json!({"file_path": "fits.gif"}));
    assert_eq!(v["output"], format!("Image: GIF, 8000x7, {} bytes", fits.len()), "{v}");
    assert_eq!(v["image"]["data"], base64(&fits));
}

/// Through the MCP server: the image is image content beside the text, and
/// its base64 is nowhere else.
#[test]
fn full_mcp_an_image_is_image_content_and_its_data_is_sent_once() {
    let env = Env::new();
    let image = png(3, 2);
    env.write("red.png", &image);
    env.write("a.txt", "text\n");
    let mut session = Session::initialized_with(&env, &unconfined(), json!({}));
    let answer = session.call(2, "file_read", json!({"file_path": "red.png"}));
    let text = format!("Image: PNG, 3x2, {} bytes\nsha256: {}", image.len(), sha256(&image));
    assert_eq!(
        answer["result"],
        json!({
            "content": [
                {"type": "text", "text": text},
                {"type": "image", "data": base64(&image), "mimeType": "image/png"},
            ],
            "structuredContent": {
                "output": format!("Image: PNG, 3x2, {} bytes", image.len()),
                "sha256": sha256(&image),
            },
            "isError": false
        })
    );
    assert_eq!(answer.to_string().matches(&base64(&image)).count(), 1);
    // Text stays text.
    let answer = session.call(3, "file_read", json!({"file_path": "a.txt"}));
    assert_eq!(answer["result"]["content"].as_array().map(Vec::len), Some(1));
    // Served in the seed profile, the server reads every file as text.
    let args = ["--unconfined".as_ref(), "--profile".as_ref(), "seed".as_ref()];
    let mut seed = Session::initialized_with(&env, &args, json!({}));
    let answer = seed.call(2, "file_read", json!({"file_path": "red.png"}));
    let content = answer["result"]["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "{answer}");
    assert_eq!(content[0]["type"], "text");
    assert!(answer["result"]["structuredContent"].get("sha256").is_none(), "{answer}");
}
