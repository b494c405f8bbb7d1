//! `TOOL --schema` answered at the binary's entry point, before the C
//! runtime starts (docs/PERFORMANCE.md, "Start-up against the floor").
//!
//! A host runs every tool with `--schema` at every start. In the static-pie
//! binary install.sh builds, glibc's start-up first applies the binary's
//! 10,853 relocations, which write to every one of the 52 pages of
//! `.data.rel.ro` and `.got`, a copy-on-write page fault each: more than
//! half of the page faults of a `--schema` run, for nothing the answer
//! needs. install.sh links with `--entry=ikigai_tools_start` (x86-64 only),
//! so that the kernel starts the process in `ikigai_tools_start`: when the
//! run is a link called with `--schema` or `--describe` alone and the
//! link's name is a tool's, the schema is written with raw system calls and
//! the process exits; anything else jumps to glibc's `_start` with the stack
//! and registers as the kernel left them, and runs as it always did. A
//! build without that linker flag (`cargo build`, the tests) never runs this
//! code: `cli::dispatch` answers the same calls after the runtime started.
//!
//! The code here runs before relocation, without thread-local storage, and
//! with glibc's IFUNCs (`memcmp`, `memcpy`, `strlen`) not yet resolved. So
//! it reads no pointer stored in the binary (no `static` holding a `&str`,
//! no table of slices: each schema is an `include_bytes!` reached by a
//! RIP-relative address), calls no function (no libc, no panics: no
//! indexing, only iterators and `split_at` on checked lengths) and
//! allocates nothing. bench/startup.sh checks the machine code of
//! `schema_before_libc` for calls and jumps out of it, and its answers byte
//! for byte against `ikigai-tools TOOL --schema` for every tool and
//! spelling.
//!
//! It answers only where it answers as `cli::dispatch` would (the unit
//! tests below hold it to `tools::find` for every spelling); in any doubt
//! it leaves the run to the normal path.

/// The schema a link named `name` (its file name: no `/`) answers with
/// `--schema` in the full profile (`full`) or the seed's, when it is a
/// tool's: the name up to its first `.`, `-` read as `_`, without one
/// `_tool` suffix, is a tool's schema name (`tools::normalize_name`). `None`
/// for anything else, including the names the normal path would refuse
/// (empty, starting with `.`).
#[inline(always)]
fn schema_for(name: &[u8], full: bool) -> Option<&'static [u8]> {
    // Path::file_stem and normalize_name agree with "up to the first dot"
    // only for a name that does not start with one.
    if name.first().is_none_or(|&b| b == b'.') {
        return None;
    }
    let stem_len = name.iter().position(|&b| b == b'.').unwrap_or(name.len());
    let (stem, _) = name.split_at(stem_len);
    let stem = match stem.len().checked_sub(SUFFIX.len()) {
        Some(n) if n > 0 && same(stem.split_at(n).1, SUFFIX) => stem.split_at(n).0,
        _ => stem,
    };
    // One `if` per tool, unrolled: a table of (name, schema) slices would be
    // pointers stored in the binary, relocated by the runtime this skips.
    macro_rules! tools {
        ($($tool:literal),* $(,)?) => {
            $(
                if same(stem, $tool.as_bytes()) {
                    return Some(if full {
                        include_bytes!(concat!("tools/", $tool, ".full.schema.json"))
                    } else {
                        include_bytes!(concat!("tools/", $tool, ".schema.json"))
                    });
                }
            )*
        };
    }
    tools!("bash", "file_read", "file_write", "file_edit", "glob", "grep");
    // The full profile's own tools (they have no seed schema).
    macro_rules! full_only {
        ($($tool:literal),* $(,)?) => {
            $(
                if full && same(stem, $tool.as_bytes()) {
                    return Some(include_bytes!(concat!("tools/", $tool, ".full.schema.json")));
                }
            )*
        };
    }
    full_only!("job_output", "job_kill", "job_list", "job_write", "list_allowed_directories");
    full_only!("apply_patch", "web_fetch", "web_search");
    None
}

const SUFFIX: &[u8] = b"_tool";

/// What `crate::profile` reads, as bytes: the variable's `NAME=`, its two
/// values, and the executable name whose default is the full profile.
const PROFILE_ASSIGNMENT: &[u8] = b"IKIGAI_TOOLS_PROFILE=";
const FULL: &[u8] = b"full";
const SEED: &[u8] = b"seed";
const FULL_BINARY: &[u8] = b"ikigai-tools-full";

/// What `IKIGAI_TOOLS_PROFILE` says, as `Profile::from_env` reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setting {
    Full,
    Seed,
    /// Not set, or empty: the executable decides.
    Unset,
    /// Names no profile: the normal path refuses it (`Profile::check_env`),
    /// so this path must not answer.
    Neither,
}

/// What `IKIGAI_TOOLS_PROFILE` says in the environment `envp`
/// (NULL-terminated), its value compared in any case. The first assignment
/// counts, as `getenv`'s.
///
/// # Safety
/// `envp` points at a NULL-terminated array of NUL-terminated strings.
#[inline(always)]
unsafe fn profile_in(envp: *const *const u8) -> Setting {
    // SAFETY: the array ends with NULL and each entry with NUL (the
    // caller's promise); `after_prefix` and `is_word_in_any_case` stop at
    // the first byte that differs, the NUL included.
    unsafe {
        let mut entry = envp;
        while !(*entry).is_null() {
            if let Some(value) = after_prefix(*entry, PROFILE_ASSIGNMENT) {
                return if *value == 0 {
                    Setting::Unset
                } else if is_word_in_any_case(value, FULL) {
                    Setting::Full
                } else if is_word_in_any_case(value, SEED) {
                    Setting::Seed
                } else {
                    Setting::Neither
                };
            }
            entry = entry.add(1);
        }
        Setting::Unset
    }
}

/// Whether the NUL-terminated `s` is the lowercase `word` in any case.
///
/// # Safety
/// `s` points at a NUL-terminated string.
#[inline(always)]
unsafe fn is_word_in_any_case(s: *const u8, word: &[u8]) -> bool {
    // SAFETY: as `is_flag`: the walk stops at the first byte that differs,
    // the terminating NUL included (it lowers to itself, and no letter of
    // `word` is NUL).
    unsafe {
        let mut p = s;
        for &w in word {
            if (*p).to_ascii_lowercase() != w {
                return false;
            }
            p = p.add(1);
        }
        *p == 0
    }
}

/// What follows `prefix` in the NUL-terminated `s`, if `s` starts with it.
///
/// # Safety
/// `s` points at a NUL-terminated string.
#[inline(always)]
unsafe fn after_prefix(s: *const u8, prefix: &[u8]) -> Option<*const u8> {
    // SAFETY: as `is_flag`: the walk stops at the first byte that differs,
    // the terminating NUL included.
    unsafe {
        let mut p = s;
        for &b in prefix {
            if *p != b {
                return None;
            }
            p = p.add(1);
        }
        Some(p)
    }
}

/// Whether `name` is `tool` with `-` read as `_`, compared a byte at a time
/// (a slice comparison may become a call to glibc's `bcmp`).
#[inline(always)]
fn same(name: &[u8], tool: &[u8]) -> bool {
    name.len() == tool.len()
        && name.iter().zip(tool).all(|(&n, &t)| n == t || (n == b'-' && t == b'_'))
}

/// Whether the NUL-terminated `arg` is `flag`.
///
/// # Safety
/// `arg` points at a NUL-terminated string.
#[inline(always)]
unsafe fn is_flag(arg: *const u8, flag: &[u8]) -> bool {
    // SAFETY: `arg` is NUL-terminated (the caller's promise), and the walk
    // stops at the first byte that differs from `flag`, the NUL included,
    // so it never reads past the terminator.
    unsafe {
        let mut p = arg;
        for &f in flag {
            if *p != f {
                return false;
            }
            p = p.add(1);
        }
        *p == 0
    }
}

/// The file name of the NUL-terminated `path`: what follows its last `/`.
///
/// # Safety
/// `path` points at a NUL-terminated string that outlives the result.
#[inline(always)]
unsafe fn file_name<'a>(path: *const u8) -> &'a [u8] {
    // SAFETY: `path` is NUL-terminated and outlives the result (the
    // caller's promise): the walk stops at the NUL, and the slice lies
    // between `start` and it, within the string.
    unsafe {
        let mut start = path;
        let mut p = path;
        while *p != 0 {
            if *p == b'/' {
                start = p.add(1);
            }
            p = p.add(1);
        }
        core::slice::from_raw_parts(start, p.offset_from(start) as usize)
    }
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod x86_64 {
    use core::arch::{asm, naked_asm};

    extern "C" {
        /// glibc's entry point (rcrt1.o), which starts the C runtime and
        /// Rust's `main`.
        fn _start() -> !;
    }

    /// The entry point install.sh links the binary with. The kernel leaves
    /// `argc` at the stack pointer, then `argv`, and in `rdx` a function
    /// for `atexit` (none for a static binary): both are handed on to
    /// `_start` as they came.
    #[unsafe(naked)]
    #[no_mangle]
    pub extern "C" fn ikigai_tools_start() -> ! {
        naked_asm!(
            "mov rdi, rsp",
            "push rdx",
            // 16-byte alignment at the call, as at the entry.
            "sub rsp, 8",
            "call {fast}",
            "add rsp, 8",
            "pop rdx",
            "jmp {start}",
            fast = sym schema_before_libc,
            start = sym _start,
        )
    }

    /// Writes the schema and exits when the run is `LINK --schema` (or
    /// `--describe`) and the link's name is a tool's; returns otherwise.
    ///
    /// # Safety
    /// `sp` is the stack pointer at the process's entry.
    #[no_mangle]
    #[inline(never)]
    unsafe extern "C" fn schema_before_libc(sp: *const usize) {
        // SAFETY: at the process's entry the kernel leaves `argc` at `sp`
        // and `argc` pointers to NUL-terminated strings after it (System V
        // ABI, x86-64): with `argc` 2, `argv[0]` and `argv[1]` are both
        // there, and live for the whole process.
        // After argv's NULL comes the environment, NULL-terminated too.
        let (argv0, argv1, envp) = unsafe {
            let argv = sp.add(1) as *const *const u8;
            if *sp != 2 {
                return;
            }
            (*argv, *argv.add(1), argv.add(3))
        };
        // SAFETY: both are NUL-terminated strings of the process (above).
        let (schema_flag, name) = unsafe {
            (
                super::is_flag(argv1, b"--schema") || super::is_flag(argv1, b"--describe"),
                super::file_name(argv0),
            )
        };
        if !schema_flag {
            return;
        }
        // SAFETY: `envp` is the process's environment (above).
        let full = match unsafe { super::profile_in(envp) } {
            super::Setting::Full => true,
            super::Setting::Seed => false,
            super::Setting::Unset => match executable_is_full() {
                Some(full) => full,
                None => return,
            },
            super::Setting::Neither => return,
        };
        let Some(schema) = super::schema_for(name, full) else {
            return;
        };
        // As Rust's runtime does: a reader that went away is an EPIPE to
        // ignore, not a SIGPIPE that kills.
        let ignore: [usize; 4] = [1 /* SIG_IGN */, 0, 0, 0];
        // SAFETY: rt_sigaction reads the 4-word `ignore` (handler SIG_IGN,
        // no flags, no restorer, an empty mask of 8 bytes) and writes
        // nothing (no old action asked for).
        unsafe {
            syscall4(
                13, /* rt_sigaction */
                13, /* SIGPIPE */
                ignore.as_ptr() as usize,
                0,
                8,
            )
        };
        let mut rest = schema;
        while !rest.is_empty() {
            // SAFETY: write reads `rest`, a live slice of the schema.
            let n = unsafe {
                syscall4(1 /* write */, 1, rest.as_ptr() as usize, rest.len(), 0)
            };
            if n == -4 {
                continue; // EINTR
            }
            if n <= 0 || n as usize > rest.len() {
                break; // as `print`: an error writing stdout is not ours to tell
            }
            rest = rest.split_at(n as usize).1;
        }
        // SAFETY: exit_group ends the process; it reads no memory.
        unsafe {
            syscall4(231 /* exit_group */, 0, 0, 0, 0)
        };
    }

    /// Whether this executable is `ikigai-tools-full` (`Profile::from_env`'s
    /// default): `None` when its name is too long to tell here.
    #[inline(always)]
    fn executable_is_full() -> Option<bool> {
        const EXE: &[u8] = b"/proc/self/exe\0";
        let mut buf = core::mem::MaybeUninit::<[u8; 512]>::uninit();
        // SAFETY: readlink reads the NUL-terminated EXE and writes at most
        // 512 bytes into `buf`, which holds them.
        let n = unsafe {
            syscall4(
                89, /* readlink */
                EXE.as_ptr() as usize,
                buf.as_mut_ptr() as usize,
                512,
                0,
            )
        };
        if n < 0 {
            return Some(false); // as Profile::from_env: unreadable is seed
        }
        if n as usize >= 512 {
            return None; // perhaps cut: the normal path reads it whole
        }
        // SAFETY: readlink wrote the first `n` bytes of `buf`.
        let path = unsafe { core::slice::from_raw_parts(buf.as_ptr() as *const u8, n as usize) };
        // The file name, compared from its end: iterators only, no
        // indexing that could panic.
        let name_len = path.iter().rev().take_while(|&&b| b != b'/').count();
        let full = super::FULL_BINARY;
        Some(
            name_len == full.len() && path.iter().rev().zip(full.iter().rev()).all(|(a, b)| a == b),
        )
    }

    #[inline(always)]
    unsafe fn syscall4(nr: usize, a: usize, b: usize, c: usize, d: usize) -> isize {
        let ret: isize;
        // SAFETY: the `syscall` instruction with the kernel's registers:
        // it clobbers rcx and r11 (declared) and touches no stack; what the
        // call does with memory is the caller's to make sound.
        unsafe {
            asm!(
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") a,
            in("rsi") b,
            in("rdx") c,
            in("r10") d,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
            );
        }
        ret
    }
}

#[cfg(test)]
mod tests {
    use super::schema_for;
    use ikigai_tools::profile::Profile;
    use ikigai_tools::tools;

    /// The fast path reads the variable as `Profile::parse` does, and a
    /// value that names no profile is `Neither`, on which it does not
    /// answer: the normal path refuses it (Reshape III: `Full` meant seed,
    /// `ful` answered a seed schema).
    #[test]
    fn the_profile_variable_as_the_normal_path() {
        use super::{profile_in, Setting};
        use std::ffi::CString;
        let setting = |entries: &[&str]| {
            let owned: Vec<CString> = entries.iter().map(|e| CString::new(*e).unwrap()).collect();
            let mut envp: Vec<*const u8> = owned.iter().map(|e| e.as_ptr().cast()).collect();
            envp.push(std::ptr::null());
            // SAFETY: `envp` is NULL-terminated, each entry a live C string.
            unsafe { profile_in(envp.as_ptr()) }
        };
        for (value, expected) in [
            ("full", Setting::Full),
            ("Full", Setting::Full),
            ("FULL", Setting::Full),
            ("seed", Setting::Seed),
            ("sEEd", Setting::Seed),
            ("", Setting::Unset),
            ("ful", Setting::Neither),
            ("fulll", Setting::Neither),
            ("full ", Setting::Neither),
        ] {
            let entry = format!("IKIGAI_TOOLS_PROFILE={value}");
            assert_eq!(
                setting(&["A=1", &entry, "IKIGAI_TOOLS_PROFILE=seed"]),
                expected,
                "{value:?}"
            );
            let normal = match Profile::parse(value) {
                Some(Profile::Full) => Setting::Full,
                Some(Profile::Seed) => Setting::Seed,
                None if value.is_empty() => Setting::Unset,
                None => Setting::Neither,
            };
            assert_eq!(normal, expected, "{value:?}");
        }
        assert_eq!(setting(&["IKIGAI_TOOLS_PROFILEX=full"]), Setting::Unset);
    }

    /// What the normal path answers for a link of this file name.
    fn normal(name: &str, profile: Profile) -> Option<&'static [u8]> {
        let stem = std::path::Path::new(name).file_stem()?.to_string_lossy().into_owned();
        tools::find_in(&stem, profile).map(|t| t.schema(profile).as_bytes())
    }

    #[test]
    fn every_tool_every_spelling_as_the_normal_path() {
        let mut names = vec![];
        for t in tools::of(Profile::Full) {
            for base in [t.name, t.command] {
                for suffix in ["", "_tool", "-tool", "_tool_tool", "tool", "_Tool", "_too"] {
                    for ext in ["", ".sh", ".py.txt", ".", ".-tool"] {
                        names.push(format!("{base}{suffix}{ext}"));
                    }
                }
                names.push(format!(".{base}"));
                names.push(format!("{base} "));
                names.push(base.to_uppercase());
                names.push(format!("{base}\u{e9}"));
            }
        }
        names.extend(
            [
                "",
                ".",
                "..",
                "_tool",
                "-tool",
                "-tool.sh",
                "ikigai-tools",
                "ikigai_tools",
                "file",
                "file_",
                "grepp",
            ]
            .map(String::from),
        );
        for name in &names {
            // The fast path may leave a run to the normal path, never answer
            // differently.
            for profile in [Profile::Seed, Profile::Full] {
                let fast = schema_for(name.as_bytes(), profile.is_full());
                assert!(fast.is_none() || fast == normal(name, profile), "{name:?}");
            }
        }
        // And it answers every spelling a host uses.
        for t in tools::of(Profile::Full) {
            for name in [
                t.name.to_owned(),
                t.command.to_owned(),
                format!("{}-tool", t.command),
                format!("{}_tool", t.name),
                format!("{}.sh", t.command),
            ] {
                for profile in [Profile::Seed, Profile::Full] {
                    let fast = schema_for(name.as_bytes(), profile.is_full());
                    let normal =
                        tools::find_in(t.name, profile).map(|t| t.schema(profile).as_bytes());
                    assert_eq!(fast, normal, "{name}: a new tool goes in tools!");
                }
            }
        }
    }

    /// The file name of `argv[0]` as the normal path takes it
    /// (`Path::file_stem`), wherever the fast path answers.
    #[test]
    fn file_name_as_the_normal_path() {
        for path in [
            "grep",
            "/grep",
            "a/b/grep",
            "a//grep",
            "./grep",
            "grep/",
            "grep/.",
            "a/grep/..",
            "/",
            "a/.grep",
            "a/grep.sh",
            "a.b/grep",
            "a/file-read-tool.py",
            "x/../file_read",
        ] {
            let c = std::ffi::CString::new(path).unwrap();
            // SAFETY: `c` is a NUL-terminated string that outlives `name`.
            let name = unsafe { super::file_name(c.as_ptr().cast()) };
            let fast = schema_for(name, false);
            assert!(fast.is_none() || fast == normal(path, Profile::Seed), "{path:?}");
        }
        let c = std::ffi::CString::new("a/b/file-read-tool.sh").unwrap();
        // SAFETY: `c` is a NUL-terminated string that outlives the slice.
        let name = unsafe { super::file_name(c.as_ptr().cast()) };
        assert_eq!(name, b"file-read-tool.sh");
    }
}
