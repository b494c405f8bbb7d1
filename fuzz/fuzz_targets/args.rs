//! The argument parser under libFuzzer: any bytes, as stdin or `$1` would
//! bring them, must give arguments or an INVALID_JSON error, and every
//! typed accessor an answer or an INVALID_ARG error; never a panic.
#![no_main]

use ikigai_tools::Args;
use libfuzzer_sys::fuzz_target;

const NAMES: [&str; 11] = [
    "command", "file_path", "offset", "limit", "content", "old_string", "new_string",
    "replace_all", "pattern", "path", "glob",
];

fuzz_target!(|data: &[u8]| {
    let Ok(args) = Args::parse(data) else { return };
    for name in NAMES {
        let _ = args.required_str(name);
        let _ = args.required_path(name);
        let _ = args.optional_path(name);
        let _ = args.optional_int(name);
        let _ = args.optional_bool(name);
    }
});
