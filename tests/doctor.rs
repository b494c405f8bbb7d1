//! `ikigai-tools doctor` (docs/CONFINEMENT.md, "What doctor reports"): each
//! layer taken away by a seccomp filter of the test's (`common::layers`),
//! as a container takes it, is reported missing with the errno and the
//! reason, and so is what a confined call then does; the MCP server says
//! the same at its start.

use crate::common;
use common::layers::{every_layer_here, Without};
use common::*;

use std::process::{Output, Stdio};

use serde_json::{json, Value};

/// `ikigai-tools doctor ARGS` under `without`.
fn doctor(env: &Env, without: Without, args: &[&str]) -> Output {
    without
        .command(&env.link("ikigai-tools"))
        .arg("doctor")
        .args(args)
        .current_dir(env.work())
        .stdin(Stdio::null())
        .output()
        .expect("run doctor")
}

fn doctor_json(env: &Env, without: Without) -> (Value, Option<i32>) {
    let out = doctor(env, without, &["--json"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    (v, out.status.code())
}

fn layer<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["layers"]
        .as_array()
        .and_then(|layers| layers.iter().find(|l| l["name"] == name))
        .unwrap_or_else(|| panic!("no layer {name}: {report}"))
}

/// Every leaf but the layers' names replaced by its type: the shape a
/// machine reads, whatever this kernel gives.
fn shape(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let kept = k == "name" && v.is_string();
                    (k.clone(), if kept { v.clone() } else { shape(v) })
                })
                .collect(),
        ),
        Value::Array(items) if items.iter().all(Value::is_string) => json!("[string…]"),
        Value::Array(items) => Value::Array(items.iter().map(shape).collect()),
        Value::Bool(_) => json!("bool"),
        Value::String(_) => json!("string"),
        other => other.clone(),
    }
}

#[test]
fn doctor_json_has_one_entry_per_layer_and_a_verdict_per_kind_of_call() {
    let env = Env::new();
    let (report, _) = doctor_json(&env, Without::default());
    snap!("doctor_json_shape", shape(&report));
}

#[test]
fn doctor_exits_0_when_every_layer_is_there() {
    let env = Env::new();
    if !every_layer_here(&env) {
        return;
    }
    let (report, code) = doctor_json(&env, Without::default());
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["bash"]["layers"], json!(["landlock", "seccomp", "namespaces"]));
}

#[test]
fn doctor_reports_landlock_hidden_by_a_filter_and_bash_refused_without_outer() {
    let env = Env::new();
    if !every_layer_here(&env) {
        return;
    }
    let (report, code) = doctor_json(&env, Without { landlock: true, ..Without::default() });
    assert_eq!(code, Some(4), "a confined call is refused: {report}");
    assert_eq!(
        layer(&report, "landlock"),
        &json!({
            "name": "landlock",
            "available": false,
            "detail": "ENOSYS: not in the kernel, or hidden by a seccomp filter of the container \
                       (gVisor has none)"
        })
    );
    assert_eq!(layer(&report, "landlock_tcp")["detail"], "needs Landlock ABI 4 (Linux 6.7)");
    assert_eq!(layer(&report, "landlock_scopes")["detail"], "needs Landlock ABI 6 (Linux 6.12)");
    assert_eq!(
        report["bash"],
        json!({
            "runs": false,
            "layers": [],
            "detail": "refused: the kernel has no Landlock (not built in, or not in the lsm= boot \
                       list), but confining bash needs ABI 3 (Linux 6.2)"
        })
    );
    assert_eq!(
        report["bash_outer"],
        json!({
            "runs": true,
            "layers": ["seccomp", "namespaces"],
            "detail": "runs under seccomp and its own namespaces; without Landlock: signals and \
                       abstract sockets not scoped"
        })
    );
    assert_eq!(report["file_tools"]["runs"], true);
}

#[test]
fn doctor_reports_user_namespaces_refused_by_a_filter_and_bash_running_without_them() {
    let env = Env::new();
    if !every_layer_here(&env) {
        return;
    }
    let (report, code) = doctor_json(&env, Without { user_namespaces: true, ..Without::default() });
    assert_eq!(code, Some(3), "a layer is missing, every confined call runs: {report}");
    assert_eq!(
        layer(&report, "user_namespace")["detail"],
        "EPERM: a seccomp filter of the container refused unshare"
    );
    assert_eq!(
        layer(&report, "mount_namespace")["detail"],
        "made inside a user namespace, which is missing"
    );
    let runs = json!({
        "runs": true,
        "layers": ["landlock", "seccomp"],
        "detail": format!(
            "runs under Landlock ABI {} and seccomp; without namespaces: metadata outside the \
             roots unprotected, System V IPC refused",
            layer(&report, "landlock")["detail"].as_str().unwrap_or_default().trim_start_matches("ABI ")
        )
    });
    assert_eq!(report["bash"], runs);
    assert_eq!(report["bash_outer"], runs);
}

#[test]
fn doctor_text_names_each_missing_layer_and_what_bash_does_in_each_mode() {
    let env = Env::new();
    if !every_layer_here(&env) {
        return;
    }
    let without = Without { landlock: true, user_namespaces: true };
    let out = doctor(&env, without, &[]);
    assert_eq!(out.status.code(), Some(4));
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace(kernel.trim(), "KERNEL");
    assert_eq!(
        text,
        "Confinement on Linux KERNEL (what allowed roots get here):\n\
         \x20 openat2 RESOLVE_BENEATH  yes RESOLVE_BENEATH works\n\
         \x20 Landlock                 no  ENOSYS: not in the kernel, or hidden by a seccomp filter of the container (gVisor has none)\n\
         \x20 Landlock TCP rules       no  needs Landlock ABI 4 (Linux 6.7)\n\
         \x20 Landlock scopes          no  needs Landlock ABI 6 (Linux 6.12)\n\
         \x20 seccomp                  yes filters can be added (the container has one)\n\
         \x20 user namespaces          no  EPERM: a seccomp filter of the container refused unshare\n\
         \x20 mount namespaces         no  made inside a user namespace, which is missing\n\
         A confined call:\n\
         \x20 file tools: confined by openat2 (RESOLVE_BENEATH)\n\
         \x20 bash (in force): refused: the kernel has no Landlock (not built in, or not in the lsm= boot list), but confining bash needs ABI 3 (Linux 6.2)\n\
         \x20 bash with IKIGAI_TOOLS_CONFINE=outer: runs under seccomp; without Landlock: it may write wherever the user may\n"
    );
    // With the setting in force, the same facts, and the exit says calls run.
    let mut outer = without.command(&env.link("ikigai-tools"));
    outer.args(["doctor"]).env("IKIGAI_TOOLS_CONFINE", "outer").stdin(Stdio::null());
    let out = outer.output().expect("run doctor");
    assert_eq!(out.status.code(), Some(3));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("  bash with IKIGAI_TOOLS_CONFINE=outer (in force): runs under seccomp;"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// `ikigai-tools mcp` at start, under `without`: its stderr, and the
/// `instructions` of its answer to `initialize`.
fn mcp_start(env: &Env, without: Without, vars: &[(&str, &str)]) -> (String, String) {
    let mut command = without.command(&env.link("ikigai-tools"));
    command.arg("mcp").arg("--root").arg(env.work()).current_dir(env.work());
    for (k, v) in vars {
        command.env(k, v);
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mcp");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": common::mcp::initialize_params("2025-06-18")});
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        writeln!(stdin, "{init}").expect("write initialize");
    }
    let out = child.wait_with_output().expect("mcp output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let answer: Value = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["id"] == 1)
        .unwrap_or_else(|| panic!("no initialize answer: {stdout}"));
    let instructions = answer["result"]["instructions"].as_str().unwrap_or_default().to_owned();
    (String::from_utf8_lossy(&out.stderr).into_owned(), instructions)
}

#[test]
fn mcp_says_each_missing_layer_on_stderr_at_start_and_in_its_instructions() {
    let env = Env::new();
    if !every_layer_here(&env) {
        return;
    }
    let (stderr, instructions) =
        mcp_start(&env, Without { user_namespaces: true, ..Without::default() }, &[]);
    let abi = {
        let (report, _) = doctor_json(&env, Without::default());
        layer(&report, "landlock")["detail"].as_str().unwrap_or_default().to_owned()
    };
    assert_eq!(
        stderr,
        format!(
            "ikigai-tools mcp: confinement: no user namespaces (EPERM: a seccomp filter of the \
             container refused unshare)\n\
             ikigai-tools mcp: confinement: no mount namespaces (made inside a user namespace, \
             which is missing)\n\
             ikigai-tools mcp: confinement: bash runs under Landlock {abi} and seccomp; without \
             namespaces: metadata outside the roots unprotected, System V IPC refused\n"
        )
    );
    assert!(
        instructions
            .ends_with(&format!(" Here confined bash runs under Landlock {abi} and seccomp.")),
        "{instructions}"
    );
    // Nothing taken away: nothing said, the instructions as they were.
    let (stderr, instructions) = mcp_start(&env, Without::default(), &[]);
    assert_eq!(stderr, "");
    assert!(
        instructions.ends_with("list_allowed_directories lists those in force."),
        "{instructions}"
    );
}

#[test]
fn mcp_instructions_say_bash_is_refused_where_landlock_is_missing_without_outer() {
    let env = Env::new();
    if !every_layer_here(&env) {
        return;
    }
    let without = Without { landlock: true, ..Without::default() };
    let (_, refused) = mcp_start(&env, without, &[]);
    assert!(
        refused.ends_with(
            " Here confined bash is refused: the kernel has no Landlock (not built in, or not in \
             the lsm= boot list), but confining bash needs ABI 3 (Linux 6.2)."
        ),
        "{refused}"
    );
    let (stderr, outer) = mcp_start(&env, without, &[("IKIGAI_TOOLS_CONFINE", "outer")]);
    assert!(
        outer.ends_with(" Here confined bash runs under seccomp and its own namespaces."),
        "{outer}"
    );
    assert!(
        stderr.ends_with(
            "ikigai-tools mcp: confinement: bash (IKIGAI_TOOLS_CONFINE=outer) runs under seccomp \
             and its own namespaces; without Landlock: signals and abstract sockets not scoped\n"
        ),
        "{stderr}"
    );
}

/// Regression: the confinement lines came first on stderr, before the line
/// that says where `mcp --listen` listens, which scripts and clients read
/// as the first line (tests/conformance/run.sh, the Python SDK's tests): on
/// a machine missing a layer, none of them found the port.
#[test]
fn mcp_listen_says_where_it_listens_first_then_the_missing_layers() {
    use std::io::{BufRead, BufReader};
    let env = Env::new();
    if !every_layer_here(&env) {
        return;
    }
    let without = Without { user_namespaces: true, ..Without::default() };
    let mut child = without
        .command(&env.link("ikigai-tools"))
        .args(["mcp", "--listen", "0", "--root"])
        .arg(env.work())
        .current_dir(env.work())
        .env_remove("IKIGAI_TOOLS_MCP_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mcp --listen");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let mut first = Vec::new();
    for _ in 0..4 {
        first.push(lines.next().and_then(Result::ok).unwrap_or_default());
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(first[0].starts_with("ikigai-tools mcp: listening on http://127.0.0.1:"), "{first:?}");
    assert_eq!(
        first[1..3],
        [
            "ikigai-tools mcp: confinement: no user namespaces (EPERM: a seccomp filter of the \
             container refused unshare)",
            "ikigai-tools mcp: confinement: no mount namespaces (made inside a user namespace, \
             which is missing)",
        ],
        "{first:?}"
    );
    assert!(
        first[3].starts_with("ikigai-tools mcp: confinement: bash runs under Landlock"),
        "{first:?}"
    );
}
