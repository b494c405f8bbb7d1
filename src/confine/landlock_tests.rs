//! The sandbox bash runs in, applied as bash applies it (a `pre_exec` hook
//! of `/bin/sh -c`), or in a forked child for what the shell cannot do
//! (a TCP connect, stacking a second ruleset).

use std::fs;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::*;

/// `t/root` (the root), `t/tmp` (the sandbox's private temporary
/// directory, made mode 700 by `prepare_with_tmp`), `t/outside`.
struct Fixture {
    _tmp: tempfile::TempDir,
    t: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path().canonicalize().unwrap();
        for dir in ["root", "outside"] {
            fs::create_dir(t.join(dir)).unwrap();
        }
        fs::write(t.join("outside/keep.txt"), "untouched").unwrap();
        // Readable and writable by the unprivileged user too (the tests also
        // run as one).
        for dir in ["", "root", "outside"] {
            let _ = Command::new("chmod").arg("0777").arg(t.join(dir)).status();
        }
        Fixture { _tmp: tmp, t }
    }

    fn sandbox(&self, roots: &[&str], network: bool) -> Rules {
        let roots = Roots::from_paths_in(roots.iter().map(|r| self.t.join(r)), None).unwrap();
        Rules::prepare_with_tmp(&roots, network, &self.t.join("tmp")).unwrap()
    }

    /// Runs `script` confined to `t/root` as bash would; (exit code, output).
    fn sh(&self, script: &str) -> (i32, String) {
        self.sh_in(Some(self.sandbox(&["root"], false)), script)
    }

    /// `sh` in `sandbox`, or unconfined with `None`.
    fn sh_in(&self, mut sandbox: Option<Rules>, script: &str) -> (i32, String) {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(script)
            .current_dir(&self.t)
            .env("T", &self.t)
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .stdout(Stdio::piped());
        // SAFETY: restrict_in_child makes two system calls and allocates
        // nothing.
        unsafe {
            cmd.pre_exec(move || match sandbox.as_mut() {
                Some(sandbox) => sandbox.restrict_in_child(),
                None => Ok(()),
            });
        }
        let out = cmd.output().unwrap();
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        (out.status.code().unwrap_or(-1), text)
    }
}

#[test]
fn writes_outside_the_roots_are_refused_by_the_kernel() {
    let f = Fixture::new();
    for (what, script) in [
        ("a new file outside", "echo x > \"$T/outside/new.txt\""),
        ("overwriting outside", "echo x > \"$T/outside/keep.txt\""),
        ("truncating outside", "truncate -s 0 \"$T/outside/keep.txt\""),
        ("removing outside", "rm -f \"$T/outside/keep.txt\""),
        ("moving out of the root", "echo x > \"$T/root/m\" && mv \"$T/root/m\" \"$T/outside/m\""),
        ("a directory outside", "mkdir \"$T/outside/d\""),
        ("a link outside", "ln -s /etc/passwd \"$T/outside/l\""),
    ] {
        let (code, out) = f.sh(script);
        assert_ne!(code, 0, "{what}: {out}");
        assert!(out.contains("Permission denied"), "{what}: {out}");
    }
    assert_eq!(fs::read_to_string(f.t.join("outside/keep.txt")).unwrap(), "untouched");
    let names: Vec<_> =
        fs::read_dir(f.t.join("outside")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["keep.txt"]);
    // Unconfined, the same commands do write outside: the refusals above
    // are the sandbox's, not the file system's.
    let (code, out) =
        f.sh_in(None, "echo x > \"$T/outside/new.txt\" && rm \"$T/outside/keep.txt\"");
    assert_eq!((code, out.as_str()), (0, ""));
    assert!(f.t.join("outside/new.txt").exists() && !f.t.join("outside/keep.txt").exists());
}

/// As root, `mknod` of a block device inside the root would reach the raw
/// disk; it is refused while a FIFO there is fine.
#[test]
fn device_nodes_cannot_be_made_even_inside_the_roots() {
    if !rustix::process::geteuid().is_root() {
        // Straight to stderr, past the harness's capture: a skip is never silent.
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"device_nodes_cannot_be_made_even_inside_the_roots: skipped: only root may make device nodes, so only root can show the refusal\n",
        );
        return;
    }
    let f = Fixture::new();
    let (code, out) = f.sh("mknod \"$T/root/disk\" b 8 0");
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("Permission denied"), "{out}");
    assert_eq!(f.sh("mkfifo \"$T/root/fifo\"").0, 0);
    // Unconfined, root makes it: the refusal is the sandbox's.
    assert_eq!(f.sh_in(None, "mknod \"$T/outside/disk\" b 8 0").0, 0);
}

#[test]
fn writes_inside_the_roots_the_temporary_directory_and_dev_null_work() {
    let f = Fixture::new();
    let script = "set -e
        echo in > \"$T/root/a.txt\"; mkdir \"$T/root/d\"; mv \"$T/root/a.txt\" \"$T/root/d/b.txt\"
        echo tmp > \"$T/tmp/t.txt\"
        echo gone > /dev/null; head -c 4 /dev/zero > /dev/null
        cat \"$T/outside/keep.txt\"; echo
        grep NoNewPrivs /proc/self/status";
    let (code, out) = f.sh(script);
    assert_eq!((code, out.as_str()), (0, "untouched\nNoNewPrivs:\t1\n"));
    assert_eq!(fs::read_to_string(f.t.join("root/d/b.txt")).unwrap(), "in\n");
    assert_eq!(fs::read_to_string(f.t.join("tmp/t.txt")).unwrap(), "tmp\n");
}

/// Runs `body` in a forked child after applying `sandboxes` in order; its
/// exit code. The child only makes system calls.
fn in_child(sandboxes: Vec<Rules>, body: impl Fn() -> i32) -> i32 {
    // SAFETY: the child applies the rulesets and runs `body` (system calls
    // only), then _exits without returning into the test harness.
    match unsafe { libc::fork() } {
        -1 => panic!("fork: {}", std::io::Error::last_os_error()),
        0 => {
            for mut sandbox in sandboxes {
                if sandbox.restrict_in_child().is_err() {
                    // SAFETY: ends the forked child at once.
                    unsafe { libc::_exit(100) };
                }
            }
            let code = body();
            // SAFETY: ends the forked child at once.
            unsafe { libc::_exit(code) }
        }
        pid => {
            let mut status = 0;
            // SAFETY: waiting for our own child.
            assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
            assert!(libc::WIFEXITED(status), "child status {status}");
            libc::WEXITSTATUS(status)
        }
    }
}

/// connect(2) to 127.0.0.1:`port`: 0 when it connects, else the errno.
fn tcp_connect(port: u16) -> i32 {
    // SAFETY: plain socket calls on a local address structure.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return *libc::__errno_location();
        }
        let addr = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr { s_addr: u32::from_be_bytes([127, 0, 0, 1]).to_be() },
            sin_zero: [0; 8],
        };
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let ok = libc::connect(fd, (&addr as *const libc::sockaddr_in).cast(), len);
        let code = if ok == 0 { 0 } else { *libc::__errno_location() };
        libc::close(fd);
        code
    }
}

/// bind(2) to 127.0.0.1, any port: 0 when bound, else the errno.
fn tcp_bind() -> i32 {
    // SAFETY: as tcp_connect.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        let addr = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: 0,
            sin_addr: libc::in_addr { s_addr: u32::from_be_bytes([127, 0, 0, 1]).to_be() },
            sin_zero: [0; 8],
        };
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let ok = libc::bind(fd, (&addr as *const libc::sockaddr_in).cast(), len);
        let code = if ok == 0 { 0 } else { *libc::__errno_location() };
        libc::close(fd);
        code
    }
}

#[test]
fn tcp_is_refused_unless_the_network_is_on() {
    let f = Fixture::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Unconfined, the connection works: the refusal below is the sandbox.
    assert_eq!(in_child(vec![], || tcp_connect(port)), 0);
    assert_eq!(in_child(vec![f.sandbox(&["root"], false)], || tcp_connect(port)), libc::EACCES);
    assert_eq!(in_child(vec![f.sandbox(&["root"], false)], tcp_bind), libc::EACCES);
    assert_eq!(in_child(vec![f.sandbox(&["root"], true)], || tcp_connect(port)), 0);
    assert_eq!(in_child(vec![f.sandbox(&["root"], true)], tcp_bind), 0);
}

/// write(2) of a new file at `path` (NUL-terminated): 0 or the errno.
fn create(path: &Path) -> i32 {
    use std::os::unix::ffi::OsStrExt;
    let mut bytes = [0u8; 512];
    let raw = path.as_os_str().as_bytes();
    bytes[..raw.len()].copy_from_slice(raw);
    // SAFETY: a NUL-terminated path in a local buffer.
    unsafe {
        let fd = libc::open(
            bytes.as_ptr().cast(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC,
            0o644,
        );
        if fd < 0 {
            return *libc::__errno_location();
        }
        libc::close(fd);
        0
    }
}

/// A command that starts `ikigai-tools` again with other roots only adds a
/// ruleset: both apply, so it can write nowhere new.
#[test]
fn a_second_sandbox_with_other_roots_cannot_widen_the_first() {
    let f = Fixture::new();
    let outside = f.t.join("outside/from_nested.txt");
    let inside = f.t.join("root/from_nested.txt");
    let first = f.sandbox(&["root"], false);
    let second = f.sandbox(&["outside"], false);
    let target = outside.clone();
    assert_eq!(in_child(vec![first, second], move || create(&target)), libc::EACCES);
    let (first, second) = (f.sandbox(&["root"], false), f.sandbox(&["outside"], false));
    // Nor inside the first root any more: the second forbids it.
    let target = inside.clone();
    assert_eq!(in_child(vec![first, second], move || create(&target)), libc::EACCES);
    assert!(!outside.exists() && !inside.exists());
    // Unconfined, the same write works (so the refusals are the sandboxes').
    let target = outside.clone();
    assert_eq!(in_child(vec![], move || create(&target)), 0);
}

#[test]
fn the_sandbox_names_what_it_lets_commands_write() {
    let f = Fixture::new();
    let sandbox = f.sandbox(&["root"], false);
    let writable: Vec<&Path> = sandbox.writable().iter().map(PathBuf::as_path).collect();
    assert_eq!(&writable[..2], [f.t.join("root").as_path(), f.t.join("tmp").as_path()]);
    assert!(writable.contains(&Path::new("/dev/null")));
}

/// What the sandbox costs a bash call: building the ruleset in the parent,
/// and `/bin/sh -c true` started and waited for, unconfined and confined.
/// It asserts what it measures, never how long it took: the confined shell
/// runs and cannot write outside its root, the unconfined one can.
/// `cargo test --lib confine::landlock::tests::cost -- --ignored --nocapture`
#[test]
#[ignore = "measurement: prints what the sandbox costs a bash call"]
fn cost_of_a_confined_shell() {
    let f = Fixture::new();
    let write_outside = "echo x > \"$T/outside/new.txt\"";
    let (code, out) = f.sh(write_outside);
    assert_ne!(code, 0, "the measured sandbox let a write outside through: {out}");
    assert!(!f.t.join("outside/new.txt").exists());
    assert_eq!(f.sh_in(None, write_outside).0, 0, "unconfined, the write goes through");
    const N: u32 = 300;
    let start = std::time::Instant::now();
    for _ in 0..N {
        drop(f.sandbox(&["root"], false));
    }
    let prepare = start.elapsed().as_micros() as f64 / f64::from(N);
    let (mut plain, mut confined) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let start = std::time::Instant::now();
        for _ in 0..N / 5 {
            assert_eq!(f.sh_in(None, "true").0, 0);
        }
        plain.push(start.elapsed().as_micros() as f64 / f64::from(N / 5));
        let start = std::time::Instant::now();
        for _ in 0..N / 5 {
            assert_eq!(f.sh("true").0, 0);
        }
        confined.push(start.elapsed().as_micros() as f64 / f64::from(N / 5));
    }
    plain.sort_by(f64::total_cmp);
    confined.sort_by(f64::total_cmp);
    let (plain, confined) = (plain[2], confined[2]);
    eprintln!(
        "sh -c true: unconfined {plain:.0} µs, confined {confined:.0} µs ({:.2}x), \
         of which building the ruleset {prepare:.0} µs",
        confined / plain
    );
}

/// `IKIGAI_TOOLS_CONFINE=outer` on a kernel of ABI 3 with the network shut:
/// the file rules without TCP rules (the seccomp filter refuses sockets),
/// still in force; on a kernel with less, no ruleset, and the command runs.
#[test]
fn under_outer_abi_3_keeps_its_file_rules_and_less_runs_without_a_ruleset() {
    let f = Fixture::new();
    let roots = Roots::from_paths_in([f.t.join("root")], None).unwrap();
    let tmp = f.t.join("tmp");
    let write_outside = "echo x > \"$T/outside/new.txt\"";
    let abi3 = Rules::prepare_in(&roots, false, 3, &tmp, temp::open_private(&tmp).unwrap());
    let (code, out) = f.sh_in(Some(abi3.unwrap()), write_outside);
    assert_eq!((code, out.contains("Permission denied")), (2, true), "{out}");
    assert!(!f.t.join("outside/new.txt").exists());
    let none = Rules::prepare_in(&roots, false, 0, &tmp, temp::open_private(&tmp).unwrap());
    let none = none.unwrap();
    assert!(none.writable().is_empty());
    assert_eq!(f.sh_in(Some(none), write_outside), (0, String::new()));
}
