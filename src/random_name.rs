//! Names no one can guess: a prefix and random letters and digits, for
//! the crash-safe writer's temporary files (`fs::temp_file`) and the
//! private directories (`private_dir`). Below both, so that neither
//! imports the other's module.

use std::ffi::OsString;
use std::hash::Hasher;
use std::os::unix::ffi::OsStringExt;

/// The random characters that end the name.
pub(crate) const RANDOM_LEN: usize = 6;
/// The characters of the random part.
const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// `prefix` and RANDOM_LEN random letters and digits. The hasher of a
/// `RandomState` is seeded from the system's randomness; fed a counter it
/// gives a new value each call.
pub(crate) fn with_random(prefix: &[u8], random: &mut impl Hasher) -> OsString {
    let mut out = prefix.to_vec();
    random.write_u8(0);
    let mut bits = random.finish();
    for _ in 0..RANDOM_LEN {
        out.push(ALPHABET[(bits % ALPHABET.len() as u64) as usize]);
        bits /= ALPHABET.len() as u64;
    }
    OsString::from_vec(out)
}
