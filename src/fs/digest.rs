//! The version of a file's content a model can name: its sha256, in
//! lowercase hex (docs/TOOLS.md, "Versions"). file_read answers it (full
//! profile); file_edit and file_write compare `expected_sha256` with it.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use sha2::{Digest, Sha256};

/// The sha256 of bytes fed in pieces.
#[derive(Default, Clone)]
pub struct Sha256Hex(Sha256);

impl Sha256Hex {
    pub fn new() -> Sha256Hex {
        Sha256Hex::default()
    }

    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The digest as 64 lowercase hex digits.
    pub fn finish(self) -> String {
        hex(&self.0.finalize())
    }
}

/// The sha256 of `bytes`, as 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The sha256 of the content of `file`, read from its start (whatever its
/// offset) to its end, a buffer at a time, never held whole.
pub fn sha256_of_file(file: &File) -> io::Result<String> {
    let mut buf = vec![0u8; 256 * 1024];
    let mut sha = Sha256Hex::new();
    let mut at = 0u64;
    loop {
        match file.read_at(&mut buf, at) {
            Ok(0) => return Ok(sha.finish()),
            Ok(n) => {
                sha.update(&buf[..n]);
                at += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        text.push(char::from(DIGITS[usize::from(b >> 4)]));
        text.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests_whole_and_in_pieces() {
        let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(sha256_hex(b""), empty);
        assert_eq!(sha256_hex(b"abc"), abc);
        let mut pieces = Sha256Hex::new();
        for piece in [&b"a"[..], b"", b"bc"] {
            pieces.update(piece);
        }
        assert_eq!(pieces.finish(), abc);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let big: Vec<u8> = (0..600_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &big).unwrap();
        assert_eq!(sha256_of_file(&File::open(&path).unwrap()).unwrap(), sha256_hex(&big));
    }
}
