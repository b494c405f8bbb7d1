//! A process's command line as `ps` shows it (docs/TOOLS.md, "bash"): a
//! process forked without an exec (an MCP call's, a job's supervisor)
//! keeps its parent's command line, so every MCP call showed as
//! `ikigai-tools mcp …` and a job's supervisor as the `bash` tool that
//! started it. `ps aux` and `ps -ef` read `/proc/PID/cmdline`, which is the
//! process's own memory between `arg_start` and `arg_end` (fields 48 and 49
//! of `/proc/self/stat`): the strings `argv` pointed to at exec. Written
//! over in place, as setproctitle(3) does, never past `arg_end`, they show
//! the title instead. The kernel answers the whole area, so what follows
//! the title is zeros (read as the end of the arguments).

use std::ops::Range;

/// Writes the first of `titles` that fits over this process's argument
/// strings (the last one cut, if none does), and names the process (its
/// `comm`, 15 bytes: `ps -e`, `top`) `comm`. Does nothing where `/proc`
/// does not say where the arguments are.
pub fn set(titles: &[&str], comm: &str) {
    name(comm);
    if let Some(area) = ArgumentArea::find() {
        area.write(titles);
    }
}

/// Names the process (its `comm`, 15 bytes: `ps -e`, `top`) `comm`.
pub fn name(comm: &str) {
    if let Ok(name) = std::ffi::CString::new(comm) {
        let _ = nix::sys::prctl::set_name(&name);
    }
}

/// Where this process's argument strings are. Found once by a process
/// that forks many (the MCP spawner), it holds in each child, which has
/// the same address space: finding it reads two files of /proc, which was
/// a tenth of a small MCP call's time (docs/PERFORMANCE.md, "MCP calls
/// against the reference server").
#[derive(Clone, Debug)]
pub struct ArgumentArea(Range<usize>);

impl ArgumentArea {
    /// The area, when /proc says it and the range lies in one writable
    /// mapping.
    pub fn find() -> Option<ArgumentArea> {
        argument_area().map(ArgumentArea)
    }

    /// Writes the first of `titles` that fits over the argument strings
    /// (the last one cut, if none does).
    pub fn write(&self, titles: &[&str]) {
        let area = &self.0;
        let Some(room) = area.len().checked_sub(1).filter(|&room| room > 0) else { return };
        let title = choose(titles, room);
        let start = area.start as *mut u8;
        // SAFETY: `area` is this process's argument strings, as the kernel
        // placed them at exec (only PR_SET_MM, which nothing here calls,
        // moves it), and it lies within one writable mapping of this
        // process (checked in `argument_area`, in this process or in the
        // one it was forked from, whose address space it copies). No Rust
        // value owns or borrows that memory: the standard library keeps
        // only the raw `argv` pointers and copies the strings when asked
        // (`std::env::args_os`), and the C library's pointers into it
        // (`argv`, `program_invocation_name`) still find a terminating
        // zero inside it, as the last byte is left zero. The callers have
        // one thread (a forked child), so nothing reads it while it is
        // written.
        unsafe {
            std::ptr::write_bytes(start, 0, area.len());
            std::ptr::copy_nonoverlapping(title.as_ptr(), start, title.len());
        }
    }
}

/// The first title at most `room` bytes long; else the last, cut to `room`
/// between characters.
fn choose<'a>(titles: &[&'a str], room: usize) -> &'a [u8] {
    if let Some(title) = titles.iter().find(|t| t.len() <= room) {
        return title.as_bytes();
    }
    let last = titles.last().copied().unwrap_or("");
    // The end of the last character that fits.
    let end = last.char_indices().map(|(i, c)| i + c.len_utf8()).take_while(|&end| end <= room);
    &last.as_bytes()[..end.last().unwrap_or(0)]
}

/// Where this process's argument strings are, when /proc says it and the
/// range lies in one writable mapping.
fn argument_area() -> Option<Range<usize>> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let area = parse_area(&stat)?;
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().any(|line| writable_mapping_holds(line, &area)).then_some(area)
}

/// `arg_start..arg_end` from the text of `/proc/PID/stat`: fields 48 and
/// 49, counted after the command name's closing parenthesis (the name may
/// hold spaces and parentheses itself).
fn parse_area(stat: &str) -> Option<Range<usize>> {
    let (_, after_name) = stat.rsplit_once(')')?;
    // The fields after the name start at the third.
    let mut fields = after_name.split_whitespace().skip(48 - 3);
    let start = fields.next()?.parse().ok()?;
    let end = fields.next()?.parse().ok()?;
    (start < end).then_some(start..end)
}

/// Whether a line of `/proc/PID/maps` (`START-END PERMS …`, hex) is a
/// writable mapping holding the whole of `area`.
fn writable_mapping_holds(line: &str, area: &Range<usize>) -> bool {
    let mut parts = line.split_whitespace();
    let (Some(range), Some(perms)) = (parts.next(), parts.next()) else { return false };
    let Some((from, to)) = range.split_once('-') else { return false };
    let (Ok(from), Ok(to)) = (usize::from_str_radix(from, 16), usize::from_str_radix(to, 16))
    else {
        return false;
    };
    perms.as_bytes().get(1) == Some(&b'w') && from <= area.start && area.end <= to
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_title_that_fits_is_chosen_else_the_last_cut() {
        let titles = ["ikigai-tools mcp: file_read", "mcp: file_read"];
        assert_eq!(choose(&titles, 40), b"ikigai-tools mcp: file_read");
        assert_eq!(choose(&titles, 16), b"mcp: file_read");
        assert_eq!(choose(&titles, 6), b"mcp: f");
        assert_eq!(choose(&["é"], 1), b"", "cut between characters");
    }

    #[test]
    fn the_argument_area_is_read_after_the_command_name() {
        // A name with a space and a parenthesis; fields 3 to 47 as 0.
        let mut stat = String::from("12 (a b) c) S");
        for _ in 4..48 {
            stat.push_str(" 0");
        }
        stat.push_str(" 4096 4200 4200 4300 0\n");
        assert_eq!(parse_area(&stat), Some(4096..4200));
        assert_eq!(parse_area("12 (x) S 1"), None);
        let area = 4096..4200;
        assert!(writable_mapping_holds("1000-2000 rw-p 00000000 00:00 0 [stack]", &area));
        assert!(!writable_mapping_holds("1000-2000 r--p 00000000 00:00 0", &area));
        assert!(!writable_mapping_holds("1000-1050 rw-p 00000000 00:00 0", &area));
    }

    #[test]
    fn this_process_has_an_argument_area() {
        let area = argument_area().expect("the test binary's arguments");
        let cmdline = std::fs::read("/proc/self/cmdline").unwrap();
        assert_eq!(area.len(), cmdline.len());
    }
}
