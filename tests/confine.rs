//! Confinement (CONTRACT §8) through the real binary: with
//! `IKIGAI_TOOLS_ROOTS` set, bash runs under Landlock. Each security case is
//! paired with the same command run unconfined, which must reach outside:
//! so every case can fail, and would with the protection off.
//!
//! The fixture: `work/` is the root, `outside/` beside it is not, and
//! `TMPDIR` is `tmp/` beside them (the system's `/tmp` is then not granted,
//! so that `outside/`, which lies under it, really is outside).

use crate::common;
use common::*;

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

struct Confined {
    env: Env,
    outside: PathBuf,
    tmp: PathBuf,
}

impl Confined {
    fn new() -> Confined {
        let env = Env::new();
        let base = env.work().parent().expect("env root").to_path_buf();
        let (outside, tmp) = (base.join("outside"), base.join("tmp"));
        for dir in [&outside, &tmp] {
            fs::create_dir(dir).expect("mkdir");
        }
        Confined { env, outside, tmp }
    }

    /// bash with `command`, confined to `work/` unless `roots` is None.
    fn bash(&self, command: &str, roots: Option<&Path>, extra: &[(&str, &str)]) -> Value {
        let mut call = self.env.cmd("bash").env("TMPDIR", &self.tmp);
        if let Some(roots) = roots {
            call = call.env("IKIGAI_TOOLS_ROOTS", roots);
        }
        for (key, value) in extra {
            call = call.env(key, value);
        }
        let ran = call.stdin(json!({ "command": command }).to_string()).run();
        assert_eq!(ran.code, Some(0), "stderr: {}", ran.stderr);
        ran.json()
    }

    fn confined(&self, command: &str) -> Value {
        self.bash(command, Some(&self.env.work()), &[])
    }

    fn unconfined(&self, command: &str) -> Value {
        self.bash(command, None, &[])
    }
}

fn output(v: &Value) -> &str {
    v["output"].as_str().unwrap_or_else(|| panic!("an answer with output: {v}"))
}

#[test]
fn bash_cannot_write_outside_the_roots() {
    let c = Confined::new();
    let target = c.outside.join("escaped.txt");
    let command = format!("echo escaped > {0}; echo $?; ls {0} 2>/dev/null", target.display());
    let v = c.confined(&command);
    assert!(output(&v).contains("Permission denied"), "{v}");
    assert!(!target.exists(), "a confined command wrote outside the roots");
    // The same command unconfined does write: the case can fail.
    let v = c.unconfined(&command);
    assert_eq!(v["exit_code"], 0, "{v}");
    assert_eq!(fs::read_to_string(&target).expect("written unconfined"), "escaped\n");
}

#[test]
fn bash_cannot_remove_rename_or_truncate_outside_the_roots() {
    let c = Confined::new();
    let kept = c.outside.join("kept.txt");
    fs::write(&kept, "keep me\n").expect("write");
    for command in [
        format!("rm -f {}", kept.display()),
        format!("mv {} {}", kept.display(), c.env.path("stolen.txt").display()),
        format!(": > {}", kept.display()),
        format!("mkdir {}", c.outside.join("newdir").display()),
    ] {
        let v = c.confined(&command);
        assert_ne!(v["exit_code"], 0, "{command}: {v}");
        assert_eq!(fs::read_to_string(&kept).expect("still there"), "keep me\n", "{command}");
    }
    assert!(!c.outside.join("newdir").exists());
    // Reading outside stays allowed (the threat model: bash may read).
    let v = c.confined(&format!("cat {}", kept.display()));
    assert_eq!(v, json!({"output": "keep me", "exit_code": 0}));
}

#[test]
fn bash_writes_inside_the_roots_the_temporary_directory_and_dev_null() {
    let c = Confined::new();
    let v = c.confined(
        "echo in > inside.txt && echo tmp > \"$TMPDIR/t.txt\" && echo null > /dev/null && echo ok",
    );
    assert_eq!(v, json!({"output": "ok", "exit_code": 0}));
    assert_eq!(c.env.read("inside.txt"), b"in\n");
    assert_eq!(fs::read(c.tmp.join("t.txt")).expect("tmp file"), b"tmp\n");
}

#[test]
fn bash_runs_with_no_new_privileges() {
    let c = Confined::new();
    let command = "grep NoNewPrivs /proc/self/status";
    assert_eq!(c.confined(command), json!({"output": "NoNewPrivs:\t1", "exit_code": 0}));
    assert_eq!(c.unconfined(command), json!({"output": "NoNewPrivs:\t0", "exit_code": 0}));
}

/// A command that opens a TCP connection to `127.0.0.1:port` and says how
/// it went: perl (in every Debian base system, as perl-base) rather than
/// python3 or bash's `/dev/tcp`, which are not everywhere. `die` exits with
/// the errno: 13 for EACCES, which is what Landlock answers.
fn connect_command(port: u16) -> String {
    format!(
        "perl -MSocket -e 'socket(my $s, PF_INET, SOCK_STREAM, 0) or die \"socket: $!\\n\"; \
         connect($s, pack_sockaddr_in({port}, inet_aton(\"127.0.0.1\"))) or die \"connect: $!\\n\"; \
         print \"connected\\n\"'"
    )
}

#[test]
fn bash_cannot_open_tcp_connections_unless_the_network_is_on() {
    if !Path::new("/usr/bin/perl").exists() {
        eprintln!("skipped: bash_cannot_open_tcp_connections…: needs /usr/bin/perl for the probe");
        return;
    }
    let c = Confined::new();
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("address").port();
    let command = connect_command(port);
    let v = c.confined(&command);
    assert_eq!(v, json!({"output": "connect: Permission denied", "exit_code": 13}));
    let roots = c.env.work();
    let open = c.bash(&command, Some(&roots), &[("IKIGAI_TOOLS_NETWORK", "on")]);
    assert_eq!(open, json!({"output": "connected", "exit_code": 0}));
    assert_eq!(c.unconfined(&command), json!({"output": "connected", "exit_code": 0}));
}

#[test]
fn a_command_cannot_lift_its_own_confinement() {
    let c = Confined::new();
    let target = c.outside.join("lifted.txt");
    // The tool again, from inside, with the outside as its root: Landlock
    // rulesets only ever narrow.
    let inner = json!({ "command": format!("echo lifted > {}", target.display()) }).to_string();
    let command = format!(
        "IKIGAI_TOOLS_ROOTS={} {} '{}'",
        c.outside.display(),
        c.env.link("bash").display(),
        inner
    );
    let v = c.confined(&command);
    assert!(output(&v).contains("Permission denied"), "{v}");
    assert!(!target.exists(), "the inner call escaped");
    // Without the outer confinement the inner call writes: the case can fail.
    c.unconfined(&command);
    assert!(target.exists());
}

#[test]
fn bash_starts_in_the_working_directory_inside_a_root_else_the_first_root() {
    let c = Confined::new();
    let sub = c.env.mkdir("sub");
    let roots = c.env.work();
    let ran = c
        .env
        .cmd("bash")
        .current_dir(&sub)
        .env("IKIGAI_TOOLS_ROOTS", &roots)
        .stdin(r#"{"command":"pwd"}"#)
        .run();
    let real = |p: &Path| fs::canonicalize(p).expect("canonical").display().to_string();
    assert_eq!(ran.json(), json!({"output": real(&sub), "exit_code": 0}));
    let ran = c
        .env
        .cmd("bash")
        .current_dir(&c.outside)
        .env("IKIGAI_TOOLS_ROOTS", &roots)
        .stdin(r#"{"command":"pwd"}"#)
        .run();
    assert_eq!(ran.json(), json!({"output": real(&roots), "exit_code": 0}));
}

#[test]
fn roots_that_cannot_confine_are_refused_never_run_unconfined() {
    let c = Confined::new();
    let marker = c.outside.join("ran.txt");
    let command = format!("echo ran > {}", marker.display());
    for (roots, message) in [
        (
            "".to_owned(),
            "Permission denied: IKIGAI_TOOLS_ROOTS is set but names no directory; refusing to run unconfined",
        ),
        (
            c.outside.join("missing").display().to_string(),
            "Permission denied: allowed root",
        ),
    ] {
        let v = c.bash(&command, Some(Path::new(&roots)), &[]);
        assert_eq!(v["error_code"], "PERMISSION_DENIED", "{v}");
        assert!(v["error"].as_str().is_some_and(|e| e.starts_with(message)), "{v}");
        assert!(!marker.exists(), "the command ran");
    }
}
