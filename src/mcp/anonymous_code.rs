//! The spawner's code and read-only data, copied once into anonymous
//! memory at the same addresses, so that each call's process starts with
//! them mapped (docs/PERFORMANCE.md, "MCP calls against the reference
//! server").
//!
//! A fork copies the page-table entries of anonymous memory but not those
//! of a file's pages never written: the child of a process whose code is
//! the binary's file faults that code in again, one fault for every 64 KiB
//! it runs, 30 to 40 for a small call, about 5 µs each on a virtual
//! machine. Copied into anonymous memory (in 2 MiB pages where the kernel
//! gives them), the code comes mapped with the fork, in a few entries. The
//! pages are shared, never written: the memory is paid once, by the
//! spawner (8 MiB of the binary's 11 MiB of read-only segments, the part
//! copied, below), and shows in each call's resident size.
//!
//! Only the whole huge pages of each mapping are copied. Its ends, which
//! begin or end inside a huge page, would be small pages: about 1,000 of
//! them in all, each a page-table entry that every fork copies and every
//! call's exit clears again. Left the file's, they cost a call only the
//! faults of the few it runs (docs/PERFORMANCE.md).

use std::io;
use std::ops::Range;

/// The size of a huge page on x86-64 and arm64 (4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;

/// Copies every read-only mapping of this binary's file into anonymous
/// memory at its address, with its protection. Only in a process with one
/// thread (the spawner, before it forks any call): another thread would
/// run code while it is moved. What fails leaves that mapping as it was.
pub fn copy_code_to_anonymous_memory() -> io::Result<()> {
    let maps = std::fs::read_to_string("/proc/self/maps")?;
    let here = copy_code_to_anonymous_memory as *const () as usize;
    let Some(file) = maps.lines().filter_map(Mapping::parse).find(|m| m.range.contains(&here))
    else {
        return Err(io::Error::other("this code is in no mapping of /proc/self/maps"));
    };
    for mapping in maps.lines().filter_map(Mapping::parse) {
        if mapping.file == file.file && mapping.readable && !mapping.writable {
            if let Some(whole) = whole_huge_pages(&mapping.range) {
                copy(&Mapping { range: whole, ..mapping })?;
            }
        }
    }
    Ok(())
}

/// The part of `range` made of whole huge pages, if any.
fn whole_huge_pages(range: &Range<usize>) -> Option<Range<usize>> {
    let start = range.start.checked_next_multiple_of(HUGE_PAGE)?;
    let end = range.end - range.end % HUGE_PAGE;
    (start < end).then_some(start..end)
}

/// One line of /proc/self/maps: `START-END PERMS OFFSET DEV INODE PATH`.
#[derive(Debug, PartialEq)]
struct Mapping<'a> {
    range: Range<usize>,
    readable: bool,
    writable: bool,
    executable: bool,
    /// The device and inode: the same file whatever its path.
    file: (&'a str, &'a str),
}

impl<'a> Mapping<'a> {
    fn parse(line: &'a str) -> Option<Mapping<'a>> {
        let mut fields = line.split_whitespace();
        let (range, perms) = (fields.next()?, fields.next()?.as_bytes());
        let (_offset, device, inode) = (fields.next()?, fields.next()?, fields.next()?);
        if inode == "0" {
            return None;
        }
        let (start, end) = range.split_once('-')?;
        let start = usize::from_str_radix(start, 16).ok()?;
        let end = usize::from_str_radix(end, 16).ok()?;
        Some(Mapping {
            range: start..end,
            readable: perms.first() == Some(&b'r'),
            writable: perms.get(1) == Some(&b'w'),
            executable: perms.get(2) == Some(&b'x'),
            file: (device, inode),
        })
    }
}

/// Moves a copy of `mapping` over it: anonymous memory placed at the same
/// offset within a huge page, so that the huge pages it is made of stay
/// whole when moved.
fn copy(mapping: &Mapping<'_>) -> io::Result<()> {
    let start = mapping.range.start;
    let len = mapping.range.len();
    // SAFETY: a new private anonymous mapping, placed by the kernel; no
    // Rust value refers to it.
    let area = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len + HUGE_PAGE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if area == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let area = area as usize;
    let new = area + (start % HUGE_PAGE + HUGE_PAGE - area % HUGE_PAGE) % HUGE_PAGE;
    let moved = fill_and_move(mapping, new);
    // What is left of the area: all of it when the move failed, else the
    // parts before and after the copy (the copy itself moved away).
    let leftovers = match moved {
        Ok(()) => vec![(area, new - area), (new + len, area + len + HUGE_PAGE - (new + len))],
        Err(_) => vec![(area, len + HUGE_PAGE)],
    };
    for (at, size) in leftovers {
        if size > 0 {
            // SAFETY: a part of the area mapped above that nothing refers
            // to: the copy moved out of it, or failed.
            unsafe { libc::munmap(at as *mut libc::c_void, size) };
        }
    }
    moved
}

/// Copies `mapping` to `new` (inside the area), gives it the mapping's
/// protection and moves it over the mapping.
fn fill_and_move(mapping: &Mapping<'_>, new: usize) -> io::Result<()> {
    let start = mapping.range.start;
    let len = mapping.range.len();
    let target = new as *mut libc::c_void;
    // SAFETY: `new..new + len` lies inside the area this module mapped
    // read-write; `start..start + len` is readable (its permissions say
    // so) and stays mapped while copied (one thread). Huge pages are a
    // hint: where the kernel has none, the copy is made of small pages.
    unsafe {
        libc::madvise(target, len, libc::MADV_HUGEPAGE);
        std::ptr::copy_nonoverlapping(start as *const u8, new as *mut u8, len);
    }
    let mut prot = libc::PROT_READ;
    if mapping.executable {
        prot |= libc::PROT_EXEC;
    }
    // SAFETY: the copy lies inside the area mapped above.
    if unsafe { libc::mprotect(target, len, prot) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the copy holds the same bytes as the mapping it replaces, with
    // the same protection, so the code running (this one included, on the
    // return from mremap) and every pointer into the read-only data find
    // what they found before; the process has one thread.
    let moved =
        unsafe { libc::mremap(target, len, len, libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED, start) };
    if moved == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_of_proc_maps_is_a_mapping_of_a_file_or_none() {
        let line = "7fa169b25000-7fa16a2f7000 r-xp 00324000 fe:00 10013517   /usr/bin/ikigai-tools";
        assert_eq!(
            Mapping::parse(line),
            Some(Mapping {
                range: 0x7fa1_69b2_5000..0x7fa1_6a2f_7000,
                readable: true,
                writable: false,
                executable: true,
                file: ("fe:00", "10013517"),
            })
        );
        assert_eq!(Mapping::parse("55556f613000-55556f64e000 rw-p 00000000 00:00 0  [heap]"), None);
    }

    #[test]
    fn only_the_whole_huge_pages_of_a_mapping_are_copied() {
        let mib = 1 << 20;
        assert_eq!(whole_huge_pages(&(0x1000..7 * mib + 0x2000)), Some(2 * mib..6 * mib));
        assert_eq!(whole_huge_pages(&(2 * mib..4 * mib)), Some(2 * mib..4 * mib));
        assert_eq!(whole_huge_pages(&(0x1000..3 * mib)), None);
        assert_eq!(whole_huge_pages(&(usize::MAX - 0xfff..usize::MAX)), None);
    }
}
