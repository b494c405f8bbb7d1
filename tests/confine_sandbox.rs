//! The bash sandbox against the command inside it (docs/CONFINEMENT.md):
//! each break found by attacking it is a test named after what it guards,
//! the confined command is the attacker, and the tool runs as `nobody` when the
//! tests run as root (`Call::as_nobody`), as a normal user would run it.
//! Each is paired with the same attack unconfined (or from a second tool),
//! which does get through, so that every case can fail.
//!
//! The fixture (`common::Env`): `work/` is the root, `outside/` beside it
//! is not, and `TMPDIR` is `tmp/` beside them; all of it belongs to the
//! user the tool runs as, so that only the sandbox stands in the way.

use crate::common;
use common::procs::is_gone;
use common::*;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The uid the tool runs as: nobody under root, else the test's own.
fn tool_uid() -> u32 {
    if is_root() {
        65534
    } else {
        nix::unistd::Uid::effective().as_raw()
    }
}

struct Sandboxed {
    env: Env,
    outside: PathBuf,
    tmp: PathBuf,
}

impl Sandboxed {
    fn new() -> Sandboxed {
        let env = Env::new();
        let (outside, tmp) = (env.beside("outside"), env.beside("tmp"));
        give_to_tool_user(&[&env.work(), &outside, &tmp]);
        Sandboxed { env, outside, tmp }
    }

    /// A call of `tool` as nobody with `TMPDIR=tmp/`, confined to `roots`
    /// when given.
    fn call(&self, tool: &str, args: &Value, roots: Option<&Path>) -> Value {
        let mut call = self.env.cmd(tool).env("TMPDIR", &self.tmp).as_nobody();
        if let Some(roots) = roots {
            call = call.env("IKIGAI_TOOLS_ROOTS", roots);
        }
        let ran = call.stdin(args.to_string()).run();
        assert_eq!(ran.code, Some(0), "stderr: {}", ran.stderr);
        ran.json()
    }

    fn confined(&self, command: &str) -> Value {
        self.call("bash", &json!({ "command": command }), Some(&self.env.work()))
    }

    fn unconfined(&self, command: &str) -> Value {
        self.call("bash", &json!({ "command": command }), None)
    }

    /// Whether the kernel lets the tool's user make a user and mount
    /// namespace (`unshare -Urm`), asked apart from the tool: where it
    /// does, the tool must use one.
    fn kernel_allows_namespace(&self) -> bool {
        let mut c = if is_root() {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--", "unshare"]);
            c
        } else {
            Command::new("unshare")
        };
        c.args(["-Urm", "true"]).stderr(Stdio::null());
        c.status().is_ok_and(|s| s.success())
    }
}

fn output(v: &Value) -> &str {
    v["output"].as_str().unwrap_or_else(|| panic!("an answer with output: {v}"))
}

fn has(program: &str) -> bool {
    ["/usr/bin", "/bin", "/usr/sbin", "/sbin"].iter().any(|d| Path::new(d).join(program).exists())
}

// ---------------------------------------------------------------------------
// MPTCP walked past "no TCP".

/// perl: a socket of `domain, type, protocol` connected to 127.0.0.1:port.
fn connect_with(protocol: &str, port: u16) -> String {
    format!(
        "perl -MSocket -e 'socket(my $s, PF_INET, SOCK_STREAM, {protocol}) or die \"socket: $!\\n\"; \
         connect($s, pack_sockaddr_in({port}, inet_aton(\"127.0.0.1\"))) or die \"connect: $!\\n\"; \
         print \"connected\\n\"'"
    )
}

/// Guards a break found by attacking the bash sandbox: with the network off a
/// command still connected, over MPTCP (which is not `IPPROTO_TCP`) or UDP.
#[test]
fn mptcp_and_udp_sockets_are_refused_unless_the_network_is_on() {
    if !has("perl") {
        skipped("needs perl for the probe");
        return;
    }
    let s = Sandboxed::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("address").port();
    // IPPROTO_MPTCP is 262; against a plain TCP listener it falls back to
    // TCP and connects.
    let mptcp = connect_with("262", port);
    // The answer ends with the sandbox's note (docs/CONFINEMENT.md, "What a
    // confined call is told").
    let refused = json!({
        "output": "socket: Permission denied\n[ikigai-tools sandbox: network is off \
                   (IKIGAI_TOOLS_NETWORK=on allows it)]",
        "exit_code": 13
    });
    let v = s.confined(&mptcp);
    assert_eq!(v, refused);
    let udp = "perl -MSocket -e 'socket(my $s, PF_INET, SOCK_DGRAM, 0) or die \"socket: $!\\n\"; \
               print \"made\\n\"'";
    assert_eq!(s.confined(udp), refused);
    // Unix sockets stay: a pipe-like socketpair is what many programs use.
    let unix =
        "perl -MSocket -e 'socketpair(my $a, my $b, AF_UNIX, SOCK_STREAM, 0) or die \"$!\\n\"; \
                print \"paired\\n\"'";
    assert_eq!(s.confined(unix), json!({"output": "paired", "exit_code": 0}));
    // Unconfined, and confined with the network on, MPTCP connects: the
    // case can fail (the probe is real, the kernel has MPTCP).
    let open = s.unconfined(&mptcp);
    if open["output"] != "connected" {
        skipped(&format!(
            "this kernel makes no MPTCP socket ({open}); only the refusal is checked"
        ));
        return;
    }
    let ran = s
        .env
        .cmd("bash")
        .env("TMPDIR", &s.tmp)
        .env("IKIGAI_TOOLS_ROOTS", s.env.work())
        .env("IKIGAI_TOOLS_NETWORK", "on")
        .as_nobody()
        .stdin(json!({ "command": connect_with("262", port) }).to_string())
        .run();
    assert_eq!(ran.json(), json!({"output": "connected", "exit_code": 0}));
}

// ---------------------------------------------------------------------------
// Metadata outside the roots.

/// Guards a break found by attacking the bash sandbox: a command changed the
/// modes, times, owner and attributes of files outside the roots, which
/// Landlock does not cover.
#[test]
fn metadata_outside_the_roots_cannot_change() {
    let s = Sandboxed::new();
    if !s.kernel_allows_namespace() {
        skipped(
            "the kernel gives no user namespace here (`unshare -Urm` fails): metadata outside \
             the roots is not protected (docs/CONFINEMENT.md, \"What it does not protect\")",
        );
        return;
    }
    let file = s.outside.join("f.txt");
    fs::write(&file, "outside\n").expect("write");
    let dir = s.outside.join("d");
    fs::create_dir(&dir).expect("mkdir");
    // An attack below takes every permission from `d`: given back whatever
    // happens, so that the tree can be removed.
    let _dir_mode = ModeGuard::keep(&dir);
    if is_root() {
        let _ = Command::new("chown").args(["-R", "65534:65534"]).arg(&s.outside).status();
    }
    fs::set_permissions(&file, fs::Permissions::from_mode(0o600)).expect("chmod");
    let before = (fs::metadata(&file).expect("stat"), fs::metadata(&dir).expect("stat"));
    let mut attacks = vec![
        format!("chmod 666 {}", file.display()),
        format!("chmod 000 {}", dir.display()),
        format!("touch -d 2001-01-01 {}", file.display()),
        format!("chown {0}:{0} {1}", tool_uid(), file.display()),
    ];
    for (program, attack) in [
        ("chattr", format!("chattr +d {}", file.display())),
        ("setfattr", format!("setfattr -n user.x -v 1 {}", file.display())),
        ("setfacl", format!("setfacl -m u:{}:rwx {}", tool_uid(), file.display())),
    ] {
        if has(program) {
            attacks.push(attack);
        } else {
            skipped(&format!("{program} is not installed: that attack is not tried (apt-get install attr acl e2fsprogs)"));
        }
    }
    for attack in &attacks {
        let v = s.confined(&format!("{attack} && echo changed"));
        assert_ne!(v["exit_code"], 0, "{attack}: {v}");
        assert!(output(&v).contains("Read-only file system"), "{attack}: {v}");
    }
    let after = (fs::metadata(&file).expect("stat"), fs::metadata(&dir).expect("stat"));
    assert_eq!(before.0.mode(), after.0.mode(), "mode changed");
    assert_eq!(before.1.mode(), after.1.mode(), "directory mode changed");
    assert_eq!(before.0.mtime(), after.0.mtime(), "times changed");
    assert_eq!(before.0.ctime(), after.0.ctime(), "something changed the inode");
    // Inside the roots and in $TMPDIR metadata changes as usual; devices
    // are written on a read-only mount all the same.
    let v = s.confined(
        "touch in && chmod 600 in && touch -d 2001-01-01 in && echo t > \"$TMPDIR/t\" \
         && chmod 600 \"$TMPDIR/t\" && echo x > /dev/null && echo ok",
    );
    assert_eq!(v, json!({"output": "ok", "exit_code": 0}));
    // /dev/tty: no controlling terminal, as unconfined (not EROFS).
    let tty = "echo x > /dev/tty";
    let confined_tty = s.confined(tty);
    assert!(output(&confined_tty).contains("No such device or address"), "{confined_tty}");
    // Unconfined, every attack works: the case can fail.
    for attack in &attacks {
        let v = s.unconfined(attack);
        assert_eq!(v["exit_code"], 0, "unconfined {attack}: {v}");
    }
    assert_ne!(fs::metadata(&file).expect("stat").mode(), before.0.mode());
}

/// Guards the same break for a command run as root: a kept capability let it
/// clear the read-only flag of the outside (`mount_setattr`).
#[test]
fn a_command_run_as_root_keeps_no_capability_to_undo_the_read_only_outside() {
    if !is_root() {
        skipped("the tool runs as root only when the tests do");
        return;
    }
    let s = Sandboxed::new();
    if !s.kernel_allows_namespace() {
        skipped("the kernel gives no user namespace here (`unshare -Urm` fails)");
        return;
    }
    let file = s.outside.join("f.txt");
    fs::write(&file, "outside\n").expect("write");
    fs::set_permissions(&file, fs::Permissions::from_mode(0o600)).expect("chmod");
    // As root (not nobody): uid 0 maps to 0 in the namespace.
    let run = |command: &str| {
        let ran = s
            .env
            .cmd("bash")
            .env("TMPDIR", &s.tmp)
            .env("IKIGAI_TOOLS_ROOTS", s.env.work())
            .stdin(json!({ "command": command }).to_string())
            .run();
        ran.json()
    };
    // mount_setattr(2), which no Landlock rule covers, clearing the
    // read-only flag of `/` (442 on x86-64 and arm64 alike): with the
    // capabilities the namespace's root would keep, it succeeds.
    let v = run(&format!(
        "perl -e '$p = \"/\"; $a = pack(\"QQQQ\", 0, 1, 0, 0); \
         print syscall(442, -100, $p, 0, $a, 32) == 0 ? \"cleared\\n\" : \"refused: $!\\n\"'; \
         chmod 666 {}",
        file.display()
    ));
    assert!(output(&v).starts_with("refused: Operation not permitted"), "{v}");
    assert_eq!(fs::metadata(&file).expect("stat").mode() & 0o777, 0o600, "{v}");
    assert_eq!(
        run("grep -E '^Cap(Eff|Prm|Bnd|Amb)' /proc/self/status | cut -f2 | sort -u"),
        json!({"output": "0000000000000000", "exit_code": 0})
    );
    // A namespace of its own: its copies of the mounts are locked, and
    // /proc is read-only, so no map can be written.
    let v = run(&format!(
        "unshare -Urm sh -c 'mount -o remount,rw / ; chmod 666 {0}'; chmod 666 {0}",
        file.display()
    ));
    assert_ne!(v["exit_code"], 0, "{v}");
    assert_eq!(fs::metadata(&file).expect("stat").mode() & 0o777, 0o600, "{v}");
}

// ---------------------------------------------------------------------------
// Leaked descriptors.

/// The tool started by a host shell that left `outside/log` open on
/// descriptor 3 (`exec 3>>log`, not close-on-exec); its answer.
fn with_descriptor_3(s: &Sandboxed, command: &str, confined: bool) -> Value {
    let log = s.outside.join("log");
    let mut host = if is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--", "/bin/sh"]);
        c
    } else {
        Command::new("/bin/sh")
    };
    host.arg("-c")
        .arg("exec 3>>\"$LOG\"; exec \"$TOOL\" \"$ARGS\"")
        .env("LOG", &log)
        .env("TOOL", s.env.link("bash"))
        .env("ARGS", json!({ "command": command }).to_string())
        .env("TMPDIR", &s.tmp)
        .current_dir(s.env.work())
        .stdin(Stdio::null());
    if confined {
        host.env("IKIGAI_TOOLS_ROOTS", s.env.work());
    } else {
        host.env_remove("IKIGAI_TOOLS_ROOTS");
    }
    let out = host.output().expect("run the host shell");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON answer")
}

/// Guards a break found by attacking the bash sandbox: a descriptor on a file
/// outside, left open by the host, let the command write there, where Landlock
/// never looks.
#[test]
fn only_stdin_stdout_and_stderr_reach_the_command() {
    let s = Sandboxed::new();
    let log = s.outside.join("log");
    for confined in [true, false] {
        let v = with_descriptor_3(&s, "echo leaked >&3", confined);
        assert!(output(&v).contains("Bad file descriptor"), "confined {confined}: {v}");
        // The shell's own descriptors: 0, 1, 2 (and ls's directory).
        let v = with_descriptor_3(&s, "ls /proc/self/fd | sort -n | tr '\\n' ' '", confined);
        assert_eq!(v, json!({"output": "0 1 2 3 ", "exit_code": 0}), "confined {confined}");
    }
    assert_eq!(fs::read(&log).expect("the log"), b"", "the command wrote through descriptor 3");
}

// ---------------------------------------------------------------------------
// Abstract sockets, signals, the guardian.

fn scoped() -> bool {
    // SAFETY: with a null attribute, size 0 and the VERSION flag the call
    // only returns a number.
    let abi = unsafe {
        libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, 1u32)
    };
    abi >= 6
}

/// Guards a break found by attacking the bash sandbox: a command signalled
/// processes of the same user outside the sandbox, and connected to abstract
/// Unix sockets made outside.
#[test]
fn signals_and_abstract_sockets_outside_the_sandbox_are_refused() {
    if !scoped() {
        skipped("Landlock ABI 6 is missing: signals and abstract sockets stay open (README)");
        return;
    }
    use std::os::linux::net::SocketAddrExt;
    let s = Sandboxed::new();
    // A process of the same user, outside the sandbox.
    let mut other = if is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--", "sleep", "60"]);
        c
    } else {
        let mut c = Command::new("sleep");
        c.arg("60");
        c
    };
    let mut other = other.spawn().expect("sleep");
    let signal = format!("kill -0 {0} && echo signalled", other.id());
    let v = s.confined(&signal);
    assert!(output(&v).contains("Operation not permitted"), "{v}");
    assert_eq!(s.unconfined(&signal), json!({"output": "signalled", "exit_code": 0}));
    let _ = other.kill();
    let _ = other.wait();
    if !has("perl") {
        skipped("needs perl for the abstract socket probe");
        return;
    }
    let name = format!("ikigai-tools-test-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).expect("name");
    let _listener = std::os::unix::net::UnixListener::bind_addr(&addr).expect("bind abstract");
    let connect = format!(
        "perl -MSocket -e 'socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die \"socket: $!\\n\"; \
         connect($s, pack_sockaddr_un(\"\\0{name}\")) or die \"connect: $!\\n\"; print \"connected\\n\"'"
    );
    let v = s.confined(&connect);
    assert_eq!(v, json!({"output": "connect: Operation not permitted", "exit_code": 1}));
    assert_eq!(s.unconfined(&connect), json!({"output": "connected", "exit_code": 0}));
}

/// The bash tool (as a host starts it) running a command that kills its
/// guardian, then leaves `sleep 60` in the background and waits; the tool
/// is SIGKILLed once the sleep's pid is written. The sleep's pid and
/// whether it outlived the tool by a second.
fn guardian_attack(s: &Sandboxed, confined: bool) -> (i32, bool) {
    let pidfile = s.env.path("bg.pid");
    let _ = fs::remove_file(&pidfile);
    // The guardian is the tool's other child: not this shell.
    let command = "for p in /proc/[0-9]*; do \
           [ \"$(awk '/^PPid:/{print $2}' $p/status 2>/dev/null)\" = \"$PPID\" ] && \
           [ \"${p#/proc/}\" != \"$$\" ] && kill -9 \"${p#/proc/}\"; \
         done; sleep 60 & echo $! > bg.pid.tmp; mv bg.pid.tmp bg.pid; wait";
    let mut tool = if is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]).arg(s.env.link("bash"));
        c
    } else {
        Command::new(s.env.link("bash"))
    };
    tool.arg(json!({ "command": command }).to_string())
        .env("TMPDIR", &s.tmp)
        .current_dir(s.env.work())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if confined {
        tool.env("IKIGAI_TOOLS_ROOTS", s.env.work());
    }
    let mut tool = tool.spawn().expect("the tool");
    let start = Instant::now();
    let pid = loop {
        if let Some(pid) = fs::read_to_string(&pidfile).ok().and_then(|t| t.trim().parse().ok()) {
            break pid;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "the command never started sleep");
        std::thread::sleep(Duration::from_millis(10));
    };
    // The setpriv wrapper execs the tool: this pid is the tool's.
    let _ = tool.kill();
    let _ = tool.wait();
    let start = Instant::now();
    while !is_gone(pid) && start.elapsed() < Duration::from_secs(1) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let survived = !is_gone(pid);
    if survived {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    (pid, survived)
}

/// Guards a break found by attacking the bash sandbox: a command killed the
/// tool's guardian, so that what it left running outlived a SIGKILL of the
/// tool.
#[test]
fn a_confined_command_cannot_kill_its_guardian_and_outlive_the_tool() {
    if !scoped() {
        skipped("Landlock ABI 6 is missing: a command can signal its guardian (README)");
        return;
    }
    let s = Sandboxed::new();
    let (pid, survived) = guardian_attack(&s, true);
    assert!(!survived, "sleep {pid} outlived a SIGKILL of the confined tool");
    // Unconfined the guardian can be killed, and the sleep survives: the
    // attack is real (docs/CONFINEMENT.md, "What it does not protect").
    let (pid, survived) = guardian_attack(&s, false);
    assert!(survived, "unconfined, sleep {pid} should have outlived the tool");
}

// ---------------------------------------------------------------------------
// The command moved the walls (the bash part; tests/confine_roots.rs has
// the rest).

/// Guards a break found by attacking the bash sandbox, "the command moves the
/// walls": a root directly in the temporary directory was renamed away and
/// replaced by a link to `/`, and later calls wrote outside through it.
#[test]
fn a_command_cannot_replace_a_root_under_the_temporary_directory_with_a_link() {
    let s = Sandboxed::new();
    // The root lies directly in the temporary directory, as a `mktemp -d`
    // workspace does.
    let root = s.tmp.join("proj");
    fs::create_dir(&root).expect("mkdir");
    if is_root() {
        let _ = Command::new("chown").args(["65534:65534"]).arg(&root).status();
    }
    let attack = format!("mv {0} {0}.old && ln -s / {0} && echo moved", root.display());
    let bash = |command: &str| s.call("bash", &json!({ "command": command }), Some(&root));
    let v = bash(&attack);
    assert_ne!(v["exit_code"], 0, "{v}");
    assert!(root.is_dir() && !root.is_symlink(), "the root was replaced: {v}");
    // The next calls are still confined to the root.
    let target = s.outside.join("escaped.txt");
    let write = s.call(
        "file_write",
        &json!({ "file_path": target.display().to_string(), "content": "escaped\n" }),
        Some(&root),
    );
    assert_eq!(write["error_code"], "PERMISSION_DENIED", "{write}");
    let v = bash(&format!("echo escaped > {}", target.display()));
    assert_ne!(v["exit_code"], 0, "{v}");
    assert!(!target.exists(), "a confined call wrote outside");
    // The same attack unconfined moves the root: the case can fail.
    let v = s.unconfined(&attack);
    assert_eq!(v, json!({"output": "moved", "exit_code": 0}));
    assert!(root.is_symlink());
}

#[test]
fn a_root_inside_the_private_temporary_directory_is_refused() {
    let s = Sandboxed::new();
    // Made by a first call, then named as a root.
    s.confined("true");
    let private = s.tmp.join(format!("ikigai-tools-{}", tool_uid()));
    let root = private.join("proj");
    let v = s.confined(&format!("mkdir {}", root.display()));
    assert_eq!(v["exit_code"], 0, "{v}");
    let v = s.call("bash", &json!({ "command": "echo hi" }), Some(&root));
    assert_eq!(v["error_code"], "PERMISSION_DENIED", "{v}");
    let e = v["error"].as_str().expect("error");
    // Refused as the roots are opened (a root reached through a place a
    // command may write), before bash's own check of the same.
    let expected = format!(
        "Permission denied: allowed root {} is reached through the sandbox's temporary \
         directory {}",
        root.display(),
        private.display()
    );
    assert!(e.starts_with(&expected), "{e}");
}

#[test]
fn a_private_temporary_directory_open_to_others_is_refused() {
    let s = Sandboxed::new();
    let private = s.tmp.join(format!("ikigai-tools-{}", tool_uid()));
    fs::create_dir(&private).expect("mkdir");
    if is_root() {
        let _ = Command::new("chown").args(["65534:65534"]).arg(&private).status();
    }
    fs::set_permissions(&private, fs::Permissions::from_mode(0o777)).expect("chmod");
    let v = s.confined("echo hi");
    assert_eq!(v["error_code"], "PERMISSION_DENIED", "{v}");
    let e = v["error"].as_str().expect("error");
    assert!(e.contains("is open to other users (mode 777"), "{e}");
    // A link the user planted at its name is refused too (another user's
    // is passed over for a directory of the user's own: tests/jobs.rs).
    fs::remove_dir(&private).expect("rmdir");
    std::os::unix::fs::symlink(&s.outside, &private).expect("symlink");
    if is_root() {
        std::os::unix::fs::lchown(&private, Some(65534), Some(65534)).expect("lchown");
    }
    let v = s.confined("echo hi");
    assert_eq!(v["error_code"], "PERMISSION_DENIED", "{v}");
}

/// The same attack where the kernel gives no namespace: the tool run by a
/// confined command (whose /proc is read-only, so no map can be written)
/// falls back to Landlock and seccomp, and only the private temporary
/// directory keeps the root in place. The outer call's root is the whole
/// fixture, so the inner sandbox is the only wall.
#[test]
fn without_a_namespace_a_command_cannot_replace_a_root_under_the_temporary_directory() {
    let s = Sandboxed::new();
    let root = s.tmp.join("proj");
    fs::create_dir(&root).expect("mkdir");
    if is_root() {
        let _ = Command::new("chown").args(["65534:65534"]).arg(&root).status();
    }
    let target = s.outside.join("escaped.txt");
    let inner = |tool: &str, args: Value| {
        format!(
            "IKIGAI_TOOLS_ROOTS={} TMPDIR={} {} '{}' 2>/dev/null; echo",
            root.display(),
            s.tmp.display(),
            s.env.link(tool).display(),
            args
        )
    };
    let script = [
        inner("bash", json!({ "command": "readlink /proc/self/ns/user" })),
        "readlink /proc/self/ns/user".to_owned(),
        inner(
            "bash",
            json!({ "command": format!("mv {0} {0}.old && ln -s / {0} && echo moved", root.display()) }),
        ),
        inner(
            "file_write",
            json!({ "file_path": target.display().to_string(), "content": "escaped\n" }),
        ),
        inner("bash", json!({ "command": format!("echo escaped > {}", target.display()) })),
    ]
    .join("; ");
    let base = s.env.work().parent().expect("base").to_path_buf();
    let v = s.call("bash", &json!({ "command": script }), Some(&base));
    let lines: Vec<&str> = output(&v).lines().collect();
    assert_eq!(lines.len(), 5, "{v}");
    let answer = |i: usize| -> Value { serde_json::from_str(lines[i]).expect("an inner answer") };
    // No namespace of its own: the fallback is what is tried here.
    assert_eq!(answer(0)["output"], lines[1], "{v}");
    assert_ne!(answer(2)["exit_code"], 0, "{v}");
    assert!(root.is_dir() && !root.is_symlink(), "the root was replaced: {v}");
    assert_eq!(answer(3)["error_code"], "PERMISSION_DENIED", "{v}");
    assert_ne!(answer(4)["exit_code"], 0, "{v}");
    assert!(!target.exists(), "a confined call wrote outside");
}

// ---------------------------------------------------------------------------
// Found on the way: a command that can make user namespaces can use up the
// user's count from a background process, and the next call, finding none
// left, would run without its read-only namespace.

#[test]
fn a_confined_command_cannot_make_a_user_namespace_to_starve_the_next_call() {
    if !has("unshare") {
        skipped("needs unshare (util-linux)");
        return;
    }
    let s = Sandboxed::new();
    let attack = "unshare -U true && echo made";
    for network in ["off", "on"] {
        let ran = s
            .env
            .cmd("bash")
            .env("TMPDIR", &s.tmp)
            .env("IKIGAI_TOOLS_ROOTS", s.env.work())
            .env("IKIGAI_TOOLS_NETWORK", network)
            .as_nobody()
            .stdin(json!({ "command": attack }).to_string())
            .run();
        let v = ran.json();
        assert_ne!(v["exit_code"], 0, "network {network}: {v}");
        assert!(output(&v).contains("Permission denied"), "network {network}: {v}");
    }
    // Threads and child processes are made as usual (clone3 answers
    // ENOSYS, and libc falls back to clone).
    let v =
        s.confined("sh -c 'echo child' & wait; perl -e 'fork or exit; wait; print \"forked\\n\"'");
    assert_eq!(v, json!({"output": "child\nforked", "exit_code": 0}));
    if !s.kernel_allows_namespace() {
        skipped("the kernel gives no user namespace here: the unconfined twin is not run");
        return;
    }
    assert_eq!(s.unconfined(attack), json!({"output": "made", "exit_code": 0}));
}

// ---------------------------------------------------------------------------
// A break found by the later attack on the sandbox: System V IPC (and
// POSIX message queues) crossed it.

/// System V IPC as any process of the user can use it (perl has the calls
/// built in): `perl ipc.pl OP KIND KEY [ID]`, KIND `shm`, `msg` or `sem`.
/// `create` makes the object (a segment holding "outside", an empty queue,
/// a semaphore at 0) and prints its id; `attack` writes "written" into
/// the segment, posts a message or raises the semaphore, by the id the
/// outside was given, then looks the object up by its key; `look` prints
/// what the object holds (taking the message, if any); `remove` removes
/// it. Linux's values: IPC_CREAT 01000, IPC_NOWAIT 04000, IPC_RMID 0,
/// GETVAL 12.
const IPC_PL: &str = r#"
my ($op, $kind, $key, $id) = @ARGV;
my ($CREAT, $NOWAIT, $GETVAL) = (01000, 04000, 12);
if ($op eq "create") {
    my $new = $kind eq "shm" ? shmget($key, 64, $CREAT | 0600)
            : $kind eq "msg" ? msgget($key, $CREAT | 0600)
            : semget($key, 1, $CREAT | 0600);
    defined $new or die "create: $!\n";
    $kind ne "shm" or shmwrite($new, "outside", 0, 7) or die "shmwrite: $!\n";
    print "$new\n";
} elsif ($op eq "attack") {
    my $done = $kind eq "shm" ? shmwrite($id, "written", 0, 7)
             : $kind eq "msg" ? msgsnd($id, pack("l! a*", 1, "written"), $NOWAIT)
             : semop($id, pack("s!3", 0, 1, 0));
    print $done ? "by id: done\n" : "by id: $!\n";
    my $found = $kind eq "shm" ? shmget($key, 0, 0)
              : $kind eq "msg" ? msgget($key, 0)
              : semget($key, 0, 0);
    print defined $found ? "by key: found\n" : "by key: $!\n";
} elsif ($op eq "look") {
    if ($kind eq "shm") {
        my $b;
        shmread($id, $b, 0, 7) or die "shmread: $!\n";
        print "$b\n";
    } elsif ($kind eq "msg") {
        my $m;
        print msgrcv($id, $m, 64, 0, $NOWAIT)
            ? "message: " . substr($m, length(pack("l!", 0))) . "\n" : "no message\n";
    } else {
        my $v = semctl($id, 0, $GETVAL, 0);
        defined $v or die "semctl: $!\n";
        print "value ", $v + 0, "\n";
    }
} elsif ($op eq "remove") {
    $kind eq "shm" ? shmctl($id, 0, 0) : $kind eq "msg" ? msgctl($id, 0, 0) : semctl($id, 0, 0, 0);
}
"#;

/// POSIX message queues through the C library (python3's ctypes: the
/// standard library has no binding): `python3 mq.py OP NAME`. `create`
/// makes queue NAME holding the message "outside"; `attack` opens it by
/// name and takes a message; `steal PATH` takes one through the queue's
/// file in a mounted mqueue file system (opened read-only, which is all
/// `mq_receive` needs); `look` prints what is left and removes the queue.
const MQ_PY: &str = r#"
import ctypes, os, sys
rt = ctypes.CDLL("librt.so.1", use_errno=True)
op, name = sys.argv[1], sys.argv[2].encode()
buf = ctypes.create_string_buffer(64)
def failed(what):
    print(what + ": " + os.strerror(ctypes.get_errno()))
    sys.exit(0)
def take(q, how):
    if rt.mq_receive(q, buf, 64, None) < 0:
        failed(how + ": mq_receive")
    print(how + ": took " + buf.value.decode())
class Attr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long),
                ("msgsize", ctypes.c_long), ("curmsgs", ctypes.c_long),
                ("reserved", ctypes.c_long * 4)]
if op == "create":
    attr = Attr(0, 4, 64, 0)
    q = rt.mq_open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600, ctypes.byref(attr))
    if q < 0:
        failed("mq_open")
    if rt.mq_send(q, b"outside", 7, 0) < 0:
        failed("mq_send")
    print("created")
elif op == "attack":
    q = rt.mq_open(name, os.O_RDWR | os.O_NONBLOCK)
    if q < 0:
        failed("by name: mq_open")
    take(q, "by name")
elif op == "steal":
    try:
        q = os.open(sys.argv[2], os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        print("through the file: open: " + e.strerror)
        sys.exit(0)
    take(q, "through the file")
elif op == "look":
    q = rt.mq_open(name, os.O_RDONLY | os.O_NONBLOCK)
    if q < 0:
        failed("mq_open")
    if rt.mq_receive(q, buf, 64, None) < 0:
        print("no message")
    else:
        print("message: " + buf.value.decode())
    rt.mq_unlink(name)
"#;

/// A key for this test process's System V object `n` (0 to 7).
fn ipc_key(n: i32) -> i32 {
    assert!((0..8).contains(&n), "{n}");
    0x1000_0000 | ((std::process::id() as i32 & 0x00ff_ffff) << 3) | n
}

/// A System V object made for a test, removed when dropped (after a panic
/// too): the kernel keeps them until removed.
struct IpcObject {
    kind: &'static str,
    id: i32,
}

impl Drop for IpcObject {
    fn drop(&mut self) {
        // SAFETY: IPC_RMID with a null buffer, which it does not read.
        unsafe {
            match self.kind {
                "shm" => libc::shmctl(self.id, libc::IPC_RMID, std::ptr::null_mut()),
                "msg" => libc::msgctl(self.id, libc::IPC_RMID, std::ptr::null_mut()),
                _ => libc::semctl(self.id, 0, libc::IPC_RMID),
            }
        };
    }
}

/// The case of the three System V kinds: an unconfined process of the
/// tool's user makes the object; a confined command tries to change it by
/// id and by key and must fail; the outside finds it untouched; the same
/// attack unconfined gets through.
fn sysv_case(kind: &'static str, n: i32, untouched: &str, changed: &str) {
    if !has("perl") {
        skipped("needs perl for System V IPC");
        return;
    }
    let s = Sandboxed::new();
    let script = s.env.write("ipc.pl", IPC_PL);
    let perl =
        |op: &str, id: &str| format!("perl {} {op} {kind} {} {id}", script.display(), ipc_key(n));
    let created = s.unconfined(&perl("create", ""));
    let id: i32 = output(&created).parse().unwrap_or_else(|_| panic!("an id: {created}"));
    let _object = IpcObject { kind, id };
    let attack = perl("attack", &id.to_string());
    let look = perl("look", &id.to_string());
    // In its own IPC namespace the command finds neither the id nor the
    // key; without a namespace the filter refuses the calls.
    let expected = if s.kernel_allows_namespace() {
        "by id: Invalid argument\nby key: No such file or directory"
    } else {
        "by id: Permission denied\nby key: Permission denied"
    };
    assert_eq!(s.confined(&attack), json!({"output": expected, "exit_code": 0}));
    assert_eq!(s.unconfined(&look), json!({"output": untouched, "exit_code": 0}));
    // Unconfined the attack gets through: the case can fail.
    assert_eq!(
        s.unconfined(&attack),
        json!({"output": "by id: done\nby key: found", "exit_code": 0})
    );
    assert_eq!(s.unconfined(&look), json!({"output": changed, "exit_code": 0}));
}

#[test]
fn a_confined_command_cannot_write_an_outside_shared_memory_segment() {
    sysv_case("shm", 0, "outside", "written");
}

#[test]
fn a_confined_command_cannot_post_to_an_outside_message_queue() {
    sysv_case("msg", 1, "no message", "message: written");
}

#[test]
fn a_confined_command_cannot_operate_an_outside_semaphore() {
    sysv_case("sem", 2, "value 0", "value 1");
}

/// POSIX message queues: by name, Landlock already refuses opening one (the
/// queues' file system is not beneath `/`); but where the host mounted an
/// mqueue file system (`/dev/mqueue`), each queue is also a file there,
/// which a confined command may open for reading like any other file, and
/// `mq_receive` on that takes the message. The filter refuses every
/// message-queue call.
#[test]
fn a_confined_command_cannot_take_a_message_from_an_outside_posix_message_queue() {
    if !has("python3") {
        skipped("needs python3 (ctypes) for POSIX message queues");
        return;
    }
    let s = Sandboxed::new();
    let script = s.env.write("mq.py", MQ_PY);
    let name = format!("/ikigai-tools-test-{}", std::process::id());
    let mq = |op: &str| format!("python3 {} {op} {name}", script.display());
    let refused = json!({"output": "by name: mq_open: Permission denied", "exit_code": 0});
    assert_eq!(s.unconfined(&mq("create")), json!({"output": "created", "exit_code": 0}));
    assert_eq!(s.confined(&mq("attack")), refused);
    assert_eq!(s.unconfined(&mq("look")), json!({"output": "message: outside", "exit_code": 0}));
    // Unconfined the attack gets through: the case can fail.
    assert_eq!(s.unconfined(&mq("create")), json!({"output": "created", "exit_code": 0}));
    assert_eq!(
        s.unconfined(&mq("attack")),
        json!({"output": "by name: took outside", "exit_code": 0})
    );
    assert_eq!(s.unconfined(&mq("look")), json!({"output": "no message", "exit_code": 0}));

    // Through a mounted mqueue file system: mounted here in a mount
    // namespace of the test's own (as root), which the tool then runs in.
    if !is_root() || !has("unshare") {
        skipped(
            "mounting an mqueue file system needs root and unshare: only queues by name are tried",
        );
        return;
    }
    let mount = s.outside.join("mqueue");
    fs::create_dir(&mount).expect("mkdir");
    let file = mount.join(&name[1..]);
    let run = |confined: bool| -> Vec<String> {
        let tool = format!(
            "{}env TMPDIR={} {} {} '{}'",
            "setpriv --reuid=65534 --regid=65534 --clear-groups -- ",
            s.tmp.display(),
            if confined {
                format!("IKIGAI_TOOLS_ROOTS={}", s.env.work().display())
            } else {
                String::new()
            },
            s.env.link("bash").display(),
            json!({ "command": format!("python3 {} steal {}", script.display(), file.display()) }),
        );
        let nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups --";
        let script = format!(
            "PATH=/usr/bin:/bin:/usr/sbin:/sbin; mount -t mqueue none {mount} || exit 1; {nobody} {mq_create}; {tool}; echo; {nobody} {mq_look}",
            mount = mount.display(),
            mq_create = mq("create"),
            mq_look = mq("look"),
        );
        let out = Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh", "-c", &script])
            .current_dir(s.env.work())
            .output()
            .expect("unshare");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect()
    };
    let lines = run(true);
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0], "created");
    let v: Value = serde_json::from_str(&lines[1]).expect("the tool's answer");
    let refused = "through the file: mq_receive: Permission denied";
    assert_eq!(v, json!({"output": refused, "exit_code": 0}));
    assert_eq!(lines[2], "message: outside");
    // Unconfined it takes the message: the case can fail.
    let lines = run(false);
    let v: Value = serde_json::from_str(&lines[1]).expect("the tool's answer");
    assert_eq!(v, json!({"output": "through the file: took outside", "exit_code": 0}));
    assert_eq!(lines[2], "no message");
}

/// Where the kernel gives no namespace, the seccomp filter is what keeps
/// the command from the IPC of the user's other processes. Forced as
/// `without_a_namespace_a_command_cannot_replace_…` does: a tool run by a confined command
/// gets no user namespace and falls back to Landlock and seccomp alone. The
/// command around it (confined itself, in its own IPC namespace) is the
/// outside here: it makes the objects, the inner command attacks them.
#[test]
fn without_a_namespace_a_confined_command_cannot_reach_the_ipc_of_the_command_around_it() {
    if !has("perl") {
        skipped("needs perl for System V IPC");
        return;
    }
    let s = Sandboxed::new();
    if !s.kernel_allows_namespace() {
        skipped(
            "the kernel gives no user namespace here: every call runs without one, which the \
             cases above try",
        );
        return;
    }
    let ipc = s.env.write("ipc.pl", IPC_PL);
    let inner_root = s.env.mkdir("inner");
    let inner = |command: String| {
        format!(
            "IKIGAI_TOOLS_ROOTS={} {} '{}'; echo",
            inner_root.display(),
            s.env.link("bash").display(),
            json!({ "command": format!("readlink /proc/self/ns/ipc; {command}") })
        )
    };
    let mut script = Vec::new();
    for (n, kind) in ["shm", "msg", "sem"].into_iter().enumerate() {
        let perl =
            |op: &str| format!("perl {} {op} {kind} {} $ID", ipc.display(), ipc_key(3 + n as i32));
        // The id reaches the inner command through the environment.
        script.push(format!("export ID=$({})", perl("create")));
        script.push(inner(perl("attack")));
        script.push(perl("look"));
        // Gone with the namespace anyway; removed for a run without one.
        script.push(perl("remove"));
    }
    script.push("readlink /proc/self/ns/ipc".to_owned());
    let script = script.join("\n");
    let v = s.confined(&script);
    let lines: Vec<&str> = output(&v).lines().collect();
    assert_eq!(lines.len(), 7, "{v}");
    let ns = lines[6];
    let inner_answer =
        |i: usize| -> Value { serde_json::from_str(lines[i]).expect("an inner answer") };
    for (i, untouched) in [(0, "outside"), (2, "no message"), (4, "value 0")] {
        // No IPC namespace of its own: the command around it is reachable
        // but for the filter.
        let expected = format!("{ns}\nby id: Permission denied\nby key: Permission denied");
        assert_eq!(inner_answer(i), json!({"output": expected, "exit_code": 0}), "{v}");
        assert_eq!(lines[i + 1], untouched, "{v}");
    }
}

/// What the namespaces must not take away: pipes, devices, socket pairs,
/// a Unix socket in the file system beneath the root and an abstract one
/// between the command's own processes, and System V IPC of its own.
#[test]
fn a_confined_command_keeps_pipes_devices_its_own_sockets_and_its_own_ipc() {
    if !has("perl") {
        skipped("needs perl for the probe");
        return;
    }
    let s = Sandboxed::new();
    if !s.kernel_allows_namespace() {
        skipped("the kernel gives no user namespace here: System V IPC is refused without one");
        return;
    }
    let script = s.env.write(
        "own.pl",
        r#"
use Socket;
$| = 1;
pipe(my $r, my $w) or die "pipe: $!\n";
print $w "piped\n";
close $w;
print scalar <$r>;
open(my $null, ">", "/dev/null") or die "/dev/null: $!\n";
print $null "x";
close $null or die "/dev/null: $!\n";
print "written to /dev/null\n";
socketpair(my $a, my $b, AF_UNIX, SOCK_STREAM, 0) or die "socketpair: $!\n";
print "paired\n";
for my $addr ("sock", "\0ikigai-tools-own-$$") {
    socket(my $l, AF_UNIX, SOCK_STREAM, 0) or die "socket: $!\n";
    bind($l, pack_sockaddr_un($addr)) or die "bind: $!\n";
    listen($l, 1) or die "listen: $!\n";
    my $pid = fork // die "fork: $!\n";
    if (!$pid) {
        socket(my $c, AF_UNIX, SOCK_STREAM, 0) or die "socket: $!\n";
        connect($c, pack_sockaddr_un($addr)) or die "connect: $!\n";
        print $c "hello\n";
        exit 0;
    }
    accept(my $conn, $l) or die "accept: $!\n";
    my $line = <$conn>;
    waitpid($pid, 0);
    print(($addr eq "sock" ? "path" : "abstract") . " socket: $line");
}
my $id = shmget(0, 64, 01000 | 0600) // die "shmget: $!\n";
shmwrite($id, "own", 0, 3) or die "shmwrite: $!\n";
my $got;
shmread($id, $got, 0, 3) or die "shmread: $!\n";
shmctl($id, 0, 0);
print "shared memory: $got\n";
"#,
    );
    let v = s.confined(&format!("perl {}", script.display()));
    assert_eq!(
        v,
        json!({
            "output": "piped\nwritten to /dev/null\npaired\npath socket: hello\n\
                       abstract socket: hello\nshared memory: own",
            "exit_code": 0
        })
    );
}
