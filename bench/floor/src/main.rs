//! `grep --schema` and nothing else: std's start-up, one write, exit.

use std::io::Write;

fn main() {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(include_bytes!("../../../src/tools/grep.schema.json"));
    let _ = out.flush();
}
