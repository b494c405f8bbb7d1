//! `IKIGAI_TOOLS_CONFINE=outer`, "the container is the boundary"
//! (docs/CONFINEMENT.md, "Where a layer is missing"): with a layer taken
//! away by a seccomp filter of the test's (`common::layers`), a confined
//! bash call is refused without the setting, and with it runs under the
//! layers that remain, each shown still in force; the file tools stay
//! confined by openat2 either way.
//!
//! The fixture: `work/` is the root, `outside/` and `tmp/` (`TMPDIR`)
//! beside it, all of them the tool user's, so that only the sandbox
//! stands in the way.

use crate::common;
use common::layers::{every_layer_here, Without};
use common::*;

use std::io::Write;
use std::path::PathBuf;
use std::process::Stdio;

use serde_json::{json, Value};

struct Fixture {
    env: Env,
    outside: PathBuf,
    tmp: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let env = Env::new();
        let (outside, tmp) = (env.beside("outside"), env.beside("tmp"));
        give_to_tool_user(&[&env.work(), &outside, &tmp]);
        Fixture { env, outside, tmp }
    }

    /// A call of `tool` confined to `work/` under `without`, with
    /// `IKIGAI_TOOLS_CONFINE=outer` when `outer`.
    fn call(&self, tool: &str, without: Without, outer: bool, args: &Value) -> Value {
        let mut command = without.command(&self.env.link(tool));
        command
            .current_dir(self.env.work())
            .env("IKIGAI_TOOLS_ROOTS", self.env.work())
            .env("TMPDIR", &self.tmp)
            .env_remove("IKIGAI_TOOLS_CONFINE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if outer {
            command.env("IKIGAI_TOOLS_CONFINE", "outer");
        }
        let mut child = command.spawn().expect("spawn the tool");
        child.stdin.take().expect("stdin").write_all(args.to_string().as_bytes()).expect("write");
        let out = child.wait_with_output().expect("tool output");
        assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).expect("one JSON answer")
    }

    fn bash(&self, without: Without, outer: bool, command: &str) -> Value {
        self.call("bash", without, outer, &json!({ "command": command }))
    }

    fn outside(&self, name: &str) -> PathBuf {
        self.outside.join(name)
    }
}

const NO_LANDLOCK: Without = Without { landlock: true, user_namespaces: false };
const NO_USER_NAMESPACES: Without = Without { landlock: false, user_namespaces: true };
const NEITHER: Without = Without { landlock: true, user_namespaces: true };

/// The sandbox's note after a write it stopped (docs/CONFINEMENT.md, "What
/// a confined call is told").
fn write_note(f: &Fixture) -> String {
    format!(
        "[ikigai-tools sandbox: writes are allowed only beneath {} and $TMPDIR \
         (IKIGAI_TOOLS_ROOTS sets them)]",
        f.env.work().display()
    )
}

#[test]
fn without_landlock_confined_bash_is_refused_naming_what_is_missing_unless_outer() {
    let f = Fixture::new();
    if !every_layer_here(&f.env) {
        return;
    }
    let refused = json!({
        "error": "Permission denied: confinement is on but the kernel has no Landlock (not built \
                  in, or not in the lsm= boot list), but confining bash needs ABI 3 (Linux 6.2); \
                  refusing to run unconfined",
        "error_code": "PERMISSION_DENIED"
    });
    assert_eq!(f.bash(NO_LANDLOCK, false, "echo ran"), refused);
    // Another value is not the setting: still failing closed.
    let mut other = NO_LANDLOCK.command(&f.env.link("bash"));
    other
        .current_dir(f.env.work())
        .env("IKIGAI_TOOLS_ROOTS", f.env.work())
        .env("TMPDIR", &f.tmp)
        .env("IKIGAI_TOOLS_CONFINE", "yes")
        .arg(json!({"command": "echo ran"}).to_string());
    let out = other.output().expect("run bash");
    assert_eq!(serde_json::from_slice::<Value>(&out.stdout).expect("json"), refused);
    assert_eq!(f.bash(NO_LANDLOCK, true, "echo ran"), json!({"output": "ran", "exit_code": 0}));
}

#[test]
fn with_outer_and_no_landlock_the_namespace_still_keeps_the_outside_read_only() {
    let f = Fixture::new();
    if !every_layer_here(&f.env) {
        return;
    }
    let target = f.outside("written.txt");
    let command = format!("echo in > inside.txt && echo out > {}", target.display());
    let v = f.bash(NO_LANDLOCK, true, &command);
    assert_eq!(
        v,
        json!({
            "output": format!(
                "sh: 1: cannot create {}: Read-only file system\n{}",
                target.display(),
                write_note(&f)
            ),
            "exit_code": 2
        })
    );
    assert!(!target.exists(), "written outside the roots");
    assert_eq!(f.env.read("inside.txt"), b"in\n");
}

#[test]
fn without_user_namespaces_landlock_still_refuses_writes_outside_with_outer_or_not() {
    let f = Fixture::new();
    if !every_layer_here(&f.env) {
        return;
    }
    let target = f.outside("written.txt");
    let command = format!("echo out > {}", target.display());
    for outer in [false, true] {
        let v = f.bash(NO_USER_NAMESPACES, outer, &command);
        assert_eq!(
            v,
            json!({
                "output": format!(
                    "sh: 1: cannot create {}: Permission denied\n{}",
                    target.display(),
                    write_note(&f)
                ),
                "exit_code": 2
            }),
            "outer: {outer}"
        );
        assert!(!target.exists(), "written outside the roots (outer: {outer})");
    }
}

#[test]
fn with_outer_and_only_seccomp_left_sockets_stay_refused_and_the_container_bounds_writes() {
    let f = Fixture::new();
    if !every_layer_here(&f.env) {
        return;
    }
    let socket =
        "perl -MSocket -e 'socket(my $s, PF_INET, SOCK_STREAM, 0) or die \"socket: $!\\n\"; \
                  print \"made\\n\"'";
    assert_eq!(
        f.bash(NEITHER, true, socket),
        json!({
            "output": "socket: Permission denied\n[ikigai-tools sandbox: network is off \
                       (IKIGAI_TOOLS_NETWORK=on allows it)]",
            "exit_code": 13
        })
    );
    // What doctor says of this case ("it may write wherever the user may"):
    // only the container bounds a write now.
    let target = f.outside("written.txt");
    let v = f.bash(NEITHER, true, &format!("echo out > {}", target.display()));
    assert_eq!(v, json!({"output": "", "exit_code": 0}));
    assert_eq!(std::fs::read(&target).expect("written"), b"out\n");
}

#[test]
fn file_read_stays_confined_by_openat2_with_outer_and_layers_taken_away() {
    let f = Fixture::new();
    if !every_layer_here(&f.env) {
        return;
    }
    let secret = f.outside("secret.txt");
    std::fs::write(&secret, "secret\n").expect("write");
    for (without, outer) in [(NEITHER, false), (NEITHER, true)] {
        let v = f.call("file_read", without, outer, &json!({"file_path": secret}));
        assert_eq!(
            v,
            json!({
                "error": format!(
                    "Permission denied: {} is outside the allowed roots ({}); \
                     IKIGAI_TOOLS_ROOTS sets them",
                    secret.display(),
                    f.env.work().display()
                ),
                "error_code": "PERMISSION_DENIED"
            }),
            "outer: {outer}"
        );
    }
}

/// A bash call through `ikigai-tools mcp --root work/` under `without`,
/// the server started with `vars`: the call's structured answer.
fn bash_over_mcp(f: &Fixture, without: Without, vars: &[(&str, &str)], command: &str) -> Value {
    use std::io::{BufRead, BufReader};
    let mut server = without.command(&f.env.link("ikigai-tools"));
    server
        .arg("mcp")
        .arg("--root")
        .arg(f.env.work())
        .current_dir(f.env.work())
        .env("TMPDIR", &f.tmp)
        .env_remove("IKIGAI_TOOLS_CONFINE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in vars {
        server.env(k, v);
    }
    let mut child = server.spawn().expect("start mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": common::mcp::initialize_params("2025-06-18")}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "bash", "arguments": {"command": command}}}),
    ];
    for request in requests {
        writeln!(stdin, "{request}").expect("write a request");
    }
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let answer = loop {
        let line = lines.next().expect("an answer to the call").expect("read");
        let v: Value = serde_json::from_str(&line).expect("JSON");
        if v["id"] == 2 {
            break v["result"]["structuredContent"].clone();
        }
    };
    drop(stdin);
    let _ = child.wait();
    answer
}

#[test]
fn the_mcp_server_passes_outer_to_its_calls_and_fails_closed_without_it() {
    let f = Fixture::new();
    if !every_layer_here(&f.env) {
        return;
    }
    let refused = bash_over_mcp(&f, NO_LANDLOCK, &[], "echo ran");
    assert_eq!(refused["error_code"], "PERMISSION_DENIED", "{refused}");
    assert!(refused["error"].as_str().unwrap_or_default().contains("no Landlock"), "{refused}");
    let ran = bash_over_mcp(&f, NO_LANDLOCK, &[("IKIGAI_TOOLS_CONFINE", "outer")], "echo ran");
    assert_eq!(ran, json!({"output": "ran", "exit_code": 0}));
}
