//! A body's Content-Encoding (gzip, deflate, br) decoded with a bound on
//! the decoded size: a decompression bomb is an error, never an exhausted
//! memory (docs/CONFINEMENT.md, "The web tools' network").

use std::io::Read;

use super::policy::MAX_BYTES_VAR;
use crate::error::ToolError;

/// `raw` decoded by `encoding` (the Content-Encoding header: codings in
/// the order applied, `identity` or none for none), at most `bound` bytes;
/// past it `NETWORK_ERROR` ("decompressed past N bytes"). `truncated` says
/// the raw body was cut at the download bound, so a stream that ends early
/// keeps what it decoded.
pub fn decode(
    raw: Vec<u8>,
    encoding: Option<&str>,
    bound: u64,
    truncated: bool,
    url: &str,
) -> Result<Vec<u8>, ToolError> {
    let codings: Vec<String> = encoding
        .unwrap_or_default()
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty() && c != "identity")
        .collect();
    let mut body = raw;
    // Applied first, decoded last.
    for coding in codings.iter().rev() {
        let input = &body[..];
        let reader: Box<dyn Read + '_> = match coding.as_str() {
            "gzip" | "x-gzip" => Box::new(flate2::read::MultiGzDecoder::new(input)),
            // As browsers do: zlib-wrapped as the standard says, or raw
            // deflate as some servers send.
            "deflate" if input.first().is_some_and(|b| b & 0x0f == 8) => {
                Box::new(flate2::read::ZlibDecoder::new(input))
            }
            "deflate" => Box::new(flate2::read::DeflateDecoder::new(input)),
            "br" => Box::new(brotli_decompressor::Decompressor::new(input, 64 * 1024)),
            other => {
                return Err(ToolError::NetworkError(format!(
                    "{url} answered in the Content-Encoding '{other}', which is not supported \
                     (gzip, deflate and br are)"
                )))
            }
        };
        body = bounded(reader, bound, truncated, coding, url)?;
    }
    Ok(body)
}

fn bounded(
    reader: impl Read,
    bound: u64,
    truncated: bool,
    coding: &str,
    url: &str,
) -> Result<Vec<u8>, ToolError> {
    let mut out = Vec::new();
    let result = reader.take(bound.saturating_add(1)).read_to_end(&mut out);
    if out.len() as u64 > bound {
        return Err(ToolError::NetworkError(format!(
            "The {coding} body of {url} decompressed past {bound} bytes: refused as a \
             decompression bomb ({MAX_BYTES_VAR} bounds it)"
        )));
    }
    match result {
        Ok(_) => Ok(out),
        // The download stopped at its bound: what was decoded stands.
        Err(_) if truncated => Ok(out),
        Err(err) => Err(ToolError::NetworkError(format!(
            "The {coding} body of {url} could not be decoded: {err}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn each_coding_is_decoded() {
        let text = b"hello, hello, hello".to_vec();
        assert_eq!(decode(gzip(&text), Some("gzip"), 100, false, "u").unwrap(), text);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(&text).unwrap();
        assert_eq!(decode(z.finish().unwrap(), Some("deflate"), 100, false, "u").unwrap(), text);
        let mut d = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        d.write_all(&text).unwrap();
        assert_eq!(decode(d.finish().unwrap(), Some("Deflate"), 100, false, "u").unwrap(), text);
        // "X", brotli-encoded (brotli-decompressor's own test vector).
        let br = vec![0x0b, 0x00, 0x80, 0x58, 0x03];
        assert_eq!(decode(br, Some("br"), 100, false, "u").unwrap(), b"X");
        assert_eq!(decode(text.clone(), Some("identity"), 100, false, "u").unwrap(), text);
        assert_eq!(decode(gzip(&gzip(&text)), Some("gzip, gzip"), 100, false, "u").unwrap(), text);
    }

    #[test]
    fn a_bomb_is_refused_past_the_bound() {
        let bomb = gzip(&vec![0u8; 1 << 20]);
        let err = decode(bomb, Some("gzip"), 1000, false, "http://x/").unwrap_err();
        assert_eq!(err.code(), "NETWORK_ERROR");
        assert_eq!(
            err.to_string(),
            "The gzip body of http://x/ decompressed past 1000 bytes: refused as a \
             decompression bomb (IKIGAI_TOOLS_FETCH_MAX_BYTES bounds it)"
        );
    }

    #[test]
    fn a_cut_stream_keeps_what_it_decoded_and_a_bad_one_is_an_error() {
        let text = vec![b'a'; 5000];
        let mut packed = gzip(&text);
        packed.truncate(packed.len() - 12);
        assert!(decode(packed.clone(), Some("gzip"), 10_000, true, "u").is_ok());
        assert_eq!(
            decode(packed, Some("gzip"), 10_000, false, "u").unwrap_err().code(),
            "NETWORK_ERROR"
        );
        let err = decode(b"x".to_vec(), Some("zstd"), 10, false, "http://x/").unwrap_err();
        assert_eq!(
            err.to_string(),
            "http://x/ answered in the Content-Encoding 'zstd', which is not supported (gzip, \
             deflate and br are)"
        );
    }
}
