//! file_write: the answer, crash-safe replacement, what is kept of the
//! target (mode, owner, links) and every error code (docs/TOOLS.md, docs/SPEC.md).

use crate::common;
use common::*;

use std::fs;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
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
        skipped("giving a file to another user, which this test needs, takes root");
        return;
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
    if !is_root() {
        skipped("a file of another user's, which this test needs, takes root to make");
        return;
    }
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
    // Root gives the file to nobody, who runs the tool; a normal user runs
    // it as itself, on its own file: either way the file is the writer's,
    // the directory is not writable to it.
    std::os::unix::fs::chown(&p, Some(65534), Some(65534)).ok();
    chmod(&p, 0o644);
    let read_only = ModeGuard::set(&dir, 0o555);
    let before = inode(&p);
    let v = write_as_nobody(&env, "locked/open.txt", "new content");
    drop(read_only);
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
            error(
                &format!("Permission denied: {path}{}", env.resolved_to(&path)),
                "PERMISSION_DENIED"
            )
        );
        // Readable again, for a test that does not run as root.
        chmod(&env.path(&path), 0o644);
        assert_eq!(env.read(&path), b"keep");
    }
    assert_no_temp_files(&dir);
}

#[test]
fn a_new_file_in_a_read_only_directory_is_permission_denied() {
    let env = Env::new();
    let dir = env.mkdir("closed");
    // Not writable to nobody (under root) nor to its owner (otherwise).
    let read_only = ModeGuard::set(&dir, 0o555);
    let v = write_as_nobody(&env, "closed/new.txt", "x");
    drop(read_only);
    let denied = format!("Permission denied: closed/new.txt{}", env.resolved_to("closed/new.txt"));
    assert_eq!(v, error(&denied, "PERMISSION_DENIED"));
    assert!(!env.path("closed/new.txt").exists());
}

#[test]
fn a_missing_parent_directory_is_open_failed() {
    let env = Env::new();
    assert_eq!(
        write(&env, "nonexistent/dir/file.txt", "x"),
        error(
            &format!(
                "Cannot open file: nonexistent/dir/file.txt (the directory nonexistent/dir does \
                 not exist; looked for {})",
                env.real_path("nonexistent/dir/file.txt")
            ),
            "OPEN_FAILED"
        )
    );
    assert!(!env.path("nonexistent").exists());
    // A link that leads into a directory that does not exist: not the
    // path's own parent, which is there.
    std::os::unix::fs::symlink("gone/file.txt", env.path("link")).unwrap();
    assert_eq!(
        write(&env, "link", "x"),
        error(
            "Cannot open file: link (the directory it would be in does not exist)",
            "OPEN_FAILED"
        )
    );
}

#[test]
fn a_directory_or_a_path_through_a_file_is_open_failed() {
    let env = Env::new();
    env.mkdir("dir");
    env.write("plain.txt", "keep");
    for (path, why) in [
        ("dir", "it is a directory"),
        ("dir/", "a path ending in '/' names a directory, not a file"),
        ("new/", "a path ending in '/' names a directory, not a file"),
        (".", "it is a directory"),
        ("plain.txt/inner", "a part of the path is not a directory"),
    ] {
        assert_eq!(
            write(&env, path, "x"),
            error(&format!("Cannot open file: {path} ({why})"), "OPEN_FAILED")
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
    let why = "it would pass the largest file size allowed (ulimit -f, or the file system's)";
    let message = format!("Failed to write file: big.txt ({why})");
    assert_eq!((v, code), (error(&message, "WRITE_FAILED"), Some(0)));
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
    let message = format!(
        "Cannot open file: no/such/dir.txt (the directory no/such does not exist; looked for {})",
        env.real_path("no/such/dir.txt")
    );
    assert_eq!(ran.stderr, format!("{message}\n"));
    assert_eq!(ran.json(), error(&message, "OPEN_FAILED"));
    let ran = env.run_arg("file_write", r#"{"file_path":"ok.txt","content":"ok"}"#);
    assert_eq!((ran.code, ran.stderr.as_str()), (Some(0), ""));
    assert_eq!(ran.json(), wrote(2, "ok.txt"));
}

#[test]
fn snapshots() {
    let env = Env::new();
    snap!("answer", write(&env, "test.txt", "Hello, world!\n"));
    snap!("error_open_failed", env.redacted(write(&env, "nonexistent/dir/file.txt", "x")));
}

// ---- Regression tests, issue 8 ----

/// An access ACL in the kernel's extended-attribute form: version 2, then
/// (tag, permissions, id) entries sorted by tag.
fn acl(entries: &[(u16, u16, u32)]) -> Vec<u8> {
    let mut out = 2u32.to_le_bytes().to_vec();
    for &(tag, perm, id) in entries {
        out.extend_from_slice(&tag.to_le_bytes());
        out.extend_from_slice(&perm.to_le_bytes());
        out.extend_from_slice(&id.to_le_bytes());
    }
    out
}

const USER_OBJ: u16 = 0x01;
const USER: u16 = 0x02;
const GROUP_OBJ: u16 = 0x04;
const MASK: u16 = 0x10;
const OTHER: u16 = 0x20;
const NO_ID: u32 = u32::MAX;
const ACCESS_ACL: &str = "system.posix_acl_access";
const DEFAULT_ACL: &str = "system.posix_acl_default";

/// `chmod 640 f; setfacl -m u:nobody:rw f`: the group may read, nobody may
/// read and write, so the mask is rw- and `ls` shows 0660.
fn nobody_may_write_acl() -> Vec<u8> {
    acl(&[
        (USER_OBJ, 6, NO_ID),
        (USER, 6, 65534),
        (GROUP_OBJ, 4, NO_ID),
        (MASK, 6, NO_ID),
        (OTHER, 0, NO_ID),
    ])
}

fn set_xattr(p: &Path, name: &str, value: &[u8]) -> std::io::Result<()> {
    rustix::fs::setxattr(p, name, value, rustix::fs::XattrFlags::empty()).map_err(Into::into)
}

/// The value of an extended attribute, None when there is none.
fn get_xattr(p: &Path, name: &str) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; 4096];
    let len = rustix::fs::getxattr(p, name, &mut buf[..]).ok()?;
    buf.truncate(len);
    Some(buf)
}

#[test]
fn an_acl_and_user_attributes_survive_a_write_and_an_edit() {
    let env = Env::new();
    let p = env.write("shared.txt", "old text\n");
    chmod(&p, 0o640);
    if let Err(e) = set_xattr(&p, ACCESS_ACL, &nobody_may_write_acl())
        .and_then(|()| set_xattr(&p, "user.origin", b"kept"))
    {
        skipped(&format!("this file system takes no ACL or user attribute ({e})"));
        return;
    }
    let before = (mode(&p), get_xattr(&p, ACCESS_ACL));
    assert_eq!(before, (0o660, Some(nobody_may_write_acl())));
    assert_eq!(write(&env, "shared.txt", "new text\n"), wrote(9, "shared.txt"));
    assert_eq!((mode(&p), get_xattr(&p, ACCESS_ACL)), before, "mode and ACL after file_write");
    assert_eq!(get_xattr(&p, "user.origin").as_deref(), Some(&b"kept"[..]));
    let args = json!({"file_path": "shared.txt", "old_string": "new", "new_string": "edited"});
    assert_eq!(
        env.call("file-edit", args),
        json!({"output": "Replaced 1 occurrence in shared.txt", "replacements": 1})
    );
    assert_eq!((mode(&p), get_xattr(&p, ACCESS_ACL)), before, "mode and ACL after file_edit");
    assert_eq!(get_xattr(&p, "user.origin").as_deref(), Some(&b"kept"[..]));
    assert_eq!(env.read("shared.txt"), b"edited text\n");
    assert_no_temp_files(&env.work());
}

#[test]
fn a_file_without_an_acl_gets_none_from_its_directorys_default_acl() {
    let env = Env::new();
    let dir = env.mkdir("inherit");
    let p = env.write("inherit/plain.txt", "old");
    chmod(&p, 0o644);
    // New files here would grant nobody read and write.
    let default = acl(&[
        (USER_OBJ, 7, NO_ID),
        (USER, 6, 65534),
        (GROUP_OBJ, 5, NO_ID),
        (MASK, 7, NO_ID),
        (OTHER, 5, NO_ID),
    ]);
    if let Err(e) = set_xattr(&dir, DEFAULT_ACL, &default) {
        skipped(&format!("this file system takes no ACL ({e})"));
        return;
    }
    assert_eq!(write(&env, "inherit/plain.txt", "new"), wrote(3, "plain.txt"));
    // Still no ACL: nobody may not write it, and may read it only as
    // "other", as before.
    assert_eq!((mode(&p), get_xattr(&p, ACCESS_ACL)), (0o644, None));
    assert_eq!(env.read("inherit/plain.txt"), b"new");
}

#[test]
fn attributes_that_cannot_be_read_make_the_write_go_in_place() {
    let env = Env::new();
    let dir = env.mkdir("open");
    chmod(&dir, 0o777);
    let p = env.write("open/drop.txt", "old");
    if let Err(e) = set_xattr(&p, "user.origin", b"kept") {
        skipped(&format!("this file system takes no user attribute ({e})"));
        return;
    }
    // Its writer's own file, which it may write but not read: nor may it
    // read the attribute, so a new file could not be given it.
    std::os::unix::fs::chown(&p, Some(65534), Some(65534)).ok();
    chmod(&p, 0o200);
    let before = inode(&p);
    assert_eq!(write_as_nobody(&env, "open/drop.txt", "new"), wrote(3, "drop.txt"));
    assert_eq!(inode(&p), before);
    chmod(&p, 0o600);
    assert_eq!(get_xattr(&p, "user.origin").as_deref(), Some(&b"kept"[..]));
    assert_eq!(env.read("open/drop.txt"), b"new");
    assert_no_temp_files(&dir);
}

#[test]
fn setuid_and_setgid_bits_survive_a_write_by_the_files_own_owner() {
    // The owner is not root: root runs the tools as nobody, on nobody's
    // files (root's own writes never cleared the bits).
    let env = Env::new();
    let dir = env.mkdir("mine");
    let p = env.write("mine/tool", "#!/bin/sh\n");
    common::procs::chown_tree_to_nobody(&dir);
    chmod(&p, 0o6755);
    let before = inode(&p);
    assert_eq!(write_as_nobody(&env, "mine/tool", "#!/bin/sh\necho\n"), wrote(15, "tool"));
    assert_eq!(mode(&p), 0o6755);
    assert_ne!(inode(&p), before, "replaced by rename, not written in place");
    let args = json!({"file_path": "mine/tool", "old_string": "echo", "new_string": "true"});
    let ran = env.cmd("file-edit").stdin(args.to_string()).as_nobody().run();
    assert_eq!(ran.json(), json!({"output": "Replaced 1 occurrence in tool", "replacements": 1}));
    assert_eq!(mode(&p), 0o6755);
    assert_eq!(env.read("mine/tool"), b"#!/bin/sh\ntrue\n");
}

#[test]
fn a_fifo_or_socket_target_is_refused_at_once_even_with_a_reader() {
    let env = Env::new();
    let fifo = env.path("pipe");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    // A reader that holds the FIFO open and never reads: more than the
    // pipe holds would wait for it forever.
    let _reader =
        fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(&fifo).unwrap();
    let _socket = std::os::unix::net::UnixListener::bind(env.path("sock")).unwrap();
    let content = "x".repeat(1 << 20);
    for name in ["pipe", "sock"] {
        let ran = env
            .cmd("file-write")
            .stdin(json!({"file_path": name, "content": content}).to_string())
            .timeout(std::time::Duration::from_secs(10))
            .run();
        let why = if name == "pipe" { "a FIFO (named pipe)" } else { "a socket" };
        assert_eq!(
            ran.json(),
            error(&format!("Cannot open file: {name} ({why}, not a regular file)"), "OPEN_FAILED")
        );
    }
    assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
    // Character devices are still written in place.
    assert_eq!(write(&env, "/dev/null", "x"), wrote(1, "null"));
}

#[test]
fn a_write_waits_for_the_lock_an_edit_holds_and_then_lands() {
    let env = Env::new();
    let p = env.write("f.txt", "old");
    // An edit (or another program) holds the lock.
    let holder =
        nix::fcntl::Flock::lock(fs::File::open(&p).unwrap(), nix::fcntl::FlockArg::LockExclusive)
            .unwrap();
    let mut child = Command::new(env.link("file-write"))
        .current_dir(env.work())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let args = json!({"file_path": "f.txt", "content": "new"});
    child.stdin.take().unwrap().write_all(args.to_string().as_bytes()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(!common::procs::has_exited(&child), "file_write went ahead while the file was locked");
    assert_eq!(env.read("f.txt"), b"old");
    drop(holder);
    let out = child.wait_with_output().unwrap();
    assert_eq!(serde_json::from_slice::<Value>(&out.stdout).unwrap(), wrote(3, "f.txt"));
    assert_eq!(env.read("f.txt"), b"new");
}

#[test]
fn a_write_gives_up_on_a_lock_held_past_the_wait_and_changes_nothing() {
    let env = Env::new();
    let p = env.write("f.txt", "old");
    let _holder =
        nix::fcntl::Flock::lock(fs::File::open(&p).unwrap(), nix::fcntl::FlockArg::LockExclusive)
            .unwrap();
    let ran = env
        .cmd("file-write")
        .env("IKIGAI_TOOLS_LOCK_WAIT", "0.3")
        .stdin(json!({"file_path": "f.txt", "content": "new"}).to_string())
        .run();
    assert_eq!(
        ran.json(),
        error(
            "Failed to write file: f.txt (another edit kept it locked; nothing was changed, try again)",
            "WRITE_FAILED"
        )
    );
    assert_eq!(env.read("f.txt"), b"old");
}

/// Clears the append-only flag of a directory when dropped, so that the
/// test's directory can be removed.
struct AppendOnly(fs::File);

impl AppendOnly {
    fn set(dir: &Path) -> std::io::Result<AppendOnly> {
        let d = fs::File::open(dir)?;
        let flags = rustix::fs::ioctl_getflags(&d)?;
        rustix::fs::ioctl_setflags(&d, flags | rustix::fs::IFlags::APPEND)?;
        Ok(AppendOnly(d))
    }
}

impl Drop for AppendOnly {
    fn drop(&mut self) {
        if let Ok(flags) = rustix::fs::ioctl_getflags(&self.0) {
            let _ = rustix::fs::ioctl_setflags(&self.0, flags - rustix::fs::IFlags::APPEND);
        }
    }
}

#[test]
fn an_append_only_directory_gets_no_temporary_file_and_new_files_work() {
    if !is_root() {
        skipped("making a directory append-only (chattr +a) takes root");
        return;
    }
    let env = Env::new();
    let dir = env.mkdir("log");
    env.write("log/old.txt", "old\n");
    let _flag = match AppendOnly::set(&dir) {
        Ok(flag) => flag,
        Err(e) => {
            skipped(&format!("this file system has no append-only directories ({e})"));
            return;
        }
    };
    assert_eq!(write(&env, "log/old.txt", "rewritten\n"), wrote(10, "old.txt"));
    let args =
        json!({"file_path": "log/old.txt", "old_string": "rewritten", "new_string": "edited"});
    assert_eq!(
        env.call("file-edit", args),
        json!({"output": "Replaced 1 occurrence in old.txt", "replacements": 1})
    );
    // `echo > new.txt` works here; so does file_write.
    assert_eq!(write(&env, "log/new.txt", "fresh\n"), wrote(6, "new.txt"));
    assert_eq!(common::procs::names_in(&dir), ["new.txt", "old.txt"]);
    assert_eq!(env.read("log/old.txt"), b"edited\n");
    assert_eq!(env.read("log/new.txt"), b"fresh\n");
}
