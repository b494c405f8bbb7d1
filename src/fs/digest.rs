//! The version of a file's content a model can name: its sha256, in
//! lowercase hex (docs/TOOLS.md, "Versions"). file_read answers it (full
//! profile); file_edit and file_write compare `expected_sha256` with it.

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
    }
}
