//! file_write: the answer, crash-safe replacement, what is kept of the
//! target (mode, owner, links) and every error code (CONTRACT §4, seed 000).

use crate::common;
use common::*;

use std::fs;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

fn write(env: &Env, path: &str, content: &str) -> Value {
    env.call("file-write", json!({"file_path": path, "content": content}))
}

fn write_as_nobody(env: &Env, path: &str, content: &str) -> Value {
    let args = json!({"file_path": path, "content": content}).to_string();
    env.cmd("file-write").stdin(args).as_nobody().run().json()
}

fn wrote(bytes: usize, name: &str) -> Value {
    json!({"output": format!("Wrote {bytes} bytes to {name}"), "bytes": bytes})
}

fn error(message: &str, code: &str) -> Value {
    json!({"error": message, "error_code": code})
}

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().mode() & 0o7777
}

fn inode(p: &Path) -> u64 {
    fs::metadata(p).unwrap().ino()
}

fn chmod(p: &Path, mode: u32) {
    fs::set_permissions(p, fs::Permissions::from_mode(mode)).unwrap();
}

/// No temporary file (`.NAME.ikigai-tmp-XXXXXX`) is left in `dir`.
fn assert_no_temp_files(dir: &Path) {
    let left: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".ikigai-tmp-"))
        .collect();
    assert!(left.is_empty(), "temporary files left behind: {left:?}");
}

/// Runs file-write through `sh` so that the shell can set a umask or a
/// resource limit first.
fn write_via_shell(env: &Env, setup: &str, args: &Value) -> (Value, Option<i32>) {
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("{setup}; exec \"$0\""))
        .arg(env.link("file-write"))
        .current_dir(env.work())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(args.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (serde_json::from_slice(&out.stdout).unwrap(), out.status.code())
}

#[test]
fn writes_a_new_file_and_names_it_by_its_basename() {
    let env = Env::new();
    assert_eq!(write(&env, "test.txt", "Hello, world!\n"), wrote(14, "test.txt"));
    assert_eq!(env.read("test.txt"), b"Hello, world!\n");
    env.mkdir("sub/dir");
    assert_eq!(write(&env, "sub/dir/deep.txt", "x"), wrote(1, "deep.txt"));
    let abs = env.path("abs.txt");
    assert_eq!(write(&env, abs.to_str().unwrap(), "y"), wrote(1, "abs.txt"));
    assert_eq!(env.read("abs.txt"), b"y");
    assert_no_temp_files(&env.work());
}

#[test]
fn empty_content_makes_an_empty_file() {
    let env = Env::new();
    env.write("full.txt", "something");
    assert_eq!(write(&env, "empty.txt", ""), wrote(0, "empty.txt"));
    assert_eq!(write(&env, "full.txt", ""), wrote(0, "full.txt"));
    assert_eq!(env.read("empty.txt"), b"");
    assert_eq!(env.read("full.txt"), b"");
}

#[test]
fn bytes_is_the_utf8_length_and_controls_are_written_as_is() {
    let env = Env::new();
    assert_eq!(write(&env, "u.txt", "héllo ✓\u{0}\r\n"), wrote(13, "u.txt"));
    assert_eq!(env.read("u.txt"), "héllo ✓\u{0}\r\n".as_bytes());
}

#[test]
fn overwriting_a_longer_file_leaves_nothing_of_it() {
    let env = Env::new();
    env.write("f.txt", "a much longer old content\n");
    assert_eq!(write(&env, "f.txt", "new\n"), wrote(4, "f.txt"));
    assert_eq!(env.read("f.txt"), b"new\n");
    assert_no_temp_files(&env.work());
}

#[test]
fn a_normal_write_replaces_the_file_by_rename() {
    let env = Env::new();
    let p = env.write("f.txt", "old");
    let before = inode(&p);
    write(&env, "f.txt", "new");
    // A new inode: the content was written elsewhere and renamed over.
    assert_ne!(inode(&p), before);
    assert_eq!(env.read("f.txt"), b"new");
}

#[test]
fn a_new_file_gets_0666_less_the_umask() {
    let env = Env::new();
    let args = json!({"file_path": "new.txt", "content": "x"});
    let (v, code) = write_via_shell(&env, "umask 027", &args);
    assert_eq!((v, code), (wrote(1, "new.txt"), Some(0)));
    assert_eq!(mode(&env.path("new.txt")), 0o640);
    let args = json!({"file_path": "open.txt", "content": "x"});
    write_via_shell(&env, "umask 000", &args);
    assert_eq!(mode(&env.path("open.txt")), 0o666);
}

#[test]
fn the_mode_of_an_existing_file_is_kept() {
    let env = Env::new();
    let script = env.write("run.sh", "#!/bin/sh\n");
    chmod(&script, 0o751);
    let setuid = env.write("setuid", "x");
    chmod(&setuid, 0o4755);
    // Runs under umask 077: an existing file's mode is not the umask's.
    let (v, _) = write_via_shell(
        &env,
        "umask 077",
        &json!({"file_path": "run.sh", "content": "#!/bin/sh\necho\n"}),
    );
    assert_eq!(v, wrote(15, "run.sh"));
    write(&env, "setuid", "y");
    assert_eq!(mode(&script), 0o751);
    assert_eq!(mode(&setuid), 0o4755);
}

#[test]
fn owner_and_group_are_kept() {
    if !is_root() {
        return; // Giving a file to another user takes root.
    }
    let env = Env::new();
    let p = env.write("theirs.txt", "old");
    std::os::unix::fs::chown(&p, Some(65534), Some(65534)).unwrap();
    assert_eq!(write(&env, "theirs.txt", "new"), wrote(3, "theirs.txt"));
    let meta = fs::metadata(&p).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (65534, 65534));
    assert_eq!(env.read("theirs.txt"), b"new");
}

#[test]
fn someone_elses_writable_file_is_written_in_place_and_stays_theirs() {
    let env = Env::new();
    let dir = env.mkdir("shared");
    chmod(&dir, 0o777);
    let p = env.write("shared/root.txt", "old");
    chmod(&p, 0o666);
    let before = inode(&p);
    assert_eq!(write_as_nobody(&env, "shared/root.txt", "new"), wrote(3, "root.txt"));
    assert_eq!(env.read("shared/root.txt"), b"new");
    let meta = fs::metadata(&p).unwrap();
    assert_eq!((meta.ino(), meta.uid(), meta.mode() & 0o777), (before, 0, 0o666));
    assert_no_temp_files(&dir);
}

#[test]
fn a_symlink_stays_a_link_and_its_target_is_written() {
    let env = Env::new();
    env.write("real.txt", "old");
    env.mkdir("sub");
    // A chain of relative links: two -> sub/one -> ../real.txt
    std::os::unix::fs::symlink("../real.txt", env.path("sub/one")).unwrap();
    std::os::unix::fs::symlink("sub/one", env.path("two")).unwrap();
    assert_eq!(write(&env, "two", "via the chain"), wrote(13, "two"));
    assert_eq!(env.read("real.txt"), b"via the chain");
    assert_eq!(fs::read_link(env.path("two")).unwrap(), Path::new("sub/one"));
    assert_eq!(fs::read_link(env.path("sub/one")).unwrap(), Path::new("../real.txt"));
    // An absolute link too.
    std::os::unix::fs::symlink(env.path("real.txt"), env.path("abs")).unwrap();
    write(&env, "abs", "via abs");
    assert_eq!(env.read("real.txt"), b"via abs");
    assert!(fs::symlink_metadata(env.path("abs")).unwrap().file_type().is_symlink());
    assert_no_temp_files(&env.work());
    assert_no_temp_files(&env.path("sub"));
}

#[test]
fn a_dangling_symlink_gets_its_target_created() {
    let env = Env::new();
    std::os::unix::fs::symlink("target.txt", env.path("link")).unwrap();
    assert_eq!(write(&env, "link", "made"), wrote(4, "link"));
    assert_eq!(env.read("target.txt"), b"made");
    assert!(fs::symlink_metadata(env.path("link")).unwrap().file_type().is_symlink());
}

#[test]
fn hard_links_are_kept_by_writing_in_place() {
    let env = Env::new();
    let a = env.write("a.txt", "old content");
    fs::hard_link(&a, env.path("b.txt")).unwrap();
    let before = inode(&a);
    assert_eq!(write(&env, "a.txt", "new"), wrote(3, "a.txt"));
    assert_eq!(env.read("b.txt"), b"new");
    let meta = fs::metadata(&a).unwrap();
    assert_eq!((meta.ino(), meta.nlink()), (before, 2));
    assert_no_temp_files(&env.work());
}

#[test]
fn dev_null_stays_a_device() {
    let env = Env::new();
    assert_eq!(write(&env, "/dev/null", "discarded"), wrote(9, "null"));
    assert!(fs::metadata("/dev/null").unwrap().file_type().is_char_device());
}

#[test]
fn a_read_only_directory_holding_a_writable_file_is_written_in_place() {
    let env = Env::new();
    let dir = env.mkdir("locked");
    let p = env.write("locked/open.txt", "old");
    std::os::unix::fs::chown(&p, Some(65534), Some(65534)).ok();
    chmod(&p, 0o644);
    chmod(&dir, 0o755);
    let before = inode(&p);
    let v = write_as_nobody(&env, "locked/open.txt", "new content");
    assert_eq!(v, wrote(11, "open.txt"));
    assert_eq!(env.read("locked/open.txt"), b"new content");
    assert_eq!(inode(&p), before);
    assert_no_temp_files(&dir);
}

#[test]
fn a_file_nobody_may_write_is_permission_denied_and_untouched() {
    let env = Env::new();
    let dir = env.mkdir("open");
    chmod(&dir, 0o777);
    let none = env.write("open/none.txt", "keep");
    chmod(&none, 0o000);
    let read_only = env.write("open/ro.txt", "keep");
    chmod(&read_only, 0o444);
    // Its own read-only file: the owner would be kept, yet it is not writable.
    let own = env.write("open/own_ro.txt", "keep");
    std::os::unix::fs::chown(&own, Some(65534), Some(65534)).ok();
    chmod(&own, 0o444);
    for name in ["none.txt", "ro.txt", "own_ro.txt"] {
        let path = format!("open/{name}");
        // The directory is writable: a rename could replace the file, but
        // must not, since the file itself may not be written.
        assert_eq!(
            write_as_nobody(&env, &path, "new"),
            error(&format!("Permission denied: {path}"), "PERMISSION_DENIED")
        );
        assert_eq!(env.read(&path), b"keep");
    }
    assert_no_temp_files(&dir);
}

#[test]
fn a_new_file_in_a_read_only_directory_is_permission_denied() {
    let env = Env::new();
    env.mkdir("closed");
    assert_eq!(
        write_as_nobody(&env, "closed/new.txt", "x"),
        error("Permission denied: closed/new.txt", "PERMISSION_DENIED")
    );
    assert!(!env.path("closed/new.txt").exists());
}

#[test]
fn a_missing_parent_directory_is_open_failed() {
    let env = Env::new();
    assert_eq!(
        write(&env, "nonexistent/dir/file.txt", "x"),
        error("Cannot open file: nonexistent/dir/file.txt", "OPEN_FAILED")
    );
    assert!(!env.path("nonexistent").exists());
}

#[test]
fn a_directory_or_a_path_through_a_file_is_open_failed() {
    let env = Env::new();
    env.mkdir("dir");
    env.write("plain.txt", "keep");
    for path in ["dir", "dir/", "new/", "plain.txt/inner"] {
        assert_eq!(
            write(&env, path, "x"),
            error(&format!("Cannot open file: {path}"), "OPEN_FAILED")
        );
    }
    assert!(env.path("dir").is_dir());
    assert!(!env.path("new").exists());
    assert_eq!(env.read("plain.txt"), b"keep");
}

#[test]
fn a_full_device_is_no_space() {
    let env = Env::new();
    assert_eq!(
        write(&env, "/dev/full", "hello"),
        error("No space left on device: /dev/full", "NO_SPACE")
    );
}

#[test]
fn a_failed_write_removes_its_temp_file_and_leaves_the_target_untouched() {
    let env = Env::new();
    env.write("big.txt", "old content\n");
    // A file size limit of 1 KiB (512-byte blocks in dash, 1024 in bash):
    // the write comes up short, then fails with EFBIG.
    let content = "x".repeat(100_000);
    let args = json!({"file_path": "big.txt", "content": content});
    let (v, code) = write_via_shell(&env, "ulimit -f 2", &args);
    assert_eq!((v, code), (error("Failed to write file: big.txt", "WRITE_FAILED"), Some(0)));
    assert_eq!(env.read("big.txt"), b"old content\n");
    assert_no_temp_files(&env.work());
}

#[test]
fn missing_or_mistyped_arguments_are_invalid_arg() {
    let env = Env::new();
    assert_eq!(
        env.call("file-write", json!({"content": "x"})),
        error("missing required parameter: file_path", "INVALID_ARG")
    );
    assert_eq!(
        env.call("file-write", json!({"file_path": "a.txt"})),
        error("missing required parameter: content", "INVALID_ARG")
    );
    assert_eq!(
        env.call("file-write", json!({"file_path": "a.txt", "content": 5})),
        error("parameter content must be a string", "INVALID_ARG")
    );
    assert!(!env.path("a.txt").exists());
}

#[test]
fn shellclaw_dialect_error_exits_1_with_the_message_on_stderr() {
    let env = Env::new();
    let ran = env.run_arg("file_write", r#"{"file_path":"no/such/dir.txt","content":"x"}"#);
    assert_eq!(ran.code, Some(1));
    assert_eq!(ran.stderr, "Cannot open file: no/such/dir.txt\n");
    assert_eq!(ran.json(), error("Cannot open file: no/such/dir.txt", "OPEN_FAILED"));
    let ran = env.run_arg("file_write", r#"{"file_path":"ok.txt","content":"ok"}"#);
    assert_eq!((ran.code, ran.stderr.as_str()), (Some(0), ""));
    assert_eq!(ran.json(), wrote(2, "ok.txt"));
}

#[test]
fn snapshots() {
    let env = Env::new();
    snap!("answer", write(&env, "test.txt", "Hello, world!\n"));
    snap!("error_open_failed", write(&env, "nonexistent/dir/file.txt", "x"));
}
