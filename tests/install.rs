//! install.sh (README, "install.sh"): into a temporary prefix, then a tool called
//! through the installed links. The binary under test is given with
//! --binary so the test does not rebuild in release mode (.ci/run runs the
//! building path once).

use crate::common;
use common::*;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The command names of the tools (`file-read`), from the binary's table.
fn links() -> impl Iterator<Item = &'static str> {
    ikigai_tools::tools::TOOLS.iter().map(|t| t.command)
}

fn install(args: &[&str], envs: &[(&str, &Path)]) -> (i32, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh");
    let mut cmd = Command::new("sh");
    cmd.arg(script).arg("--binary").arg(binary()).args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr, "", "install.sh wrote to stderr");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

fn listing(dir: &Path) -> Vec<(String, Option<PathBuf>)> {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), fs::read_link(e.path()).ok())
        })
        .collect();
    entries.sort();
    entries
}

fn relative_links(names: &[String], target: &str) -> Vec<(String, Option<PathBuf>)> {
    let mut v: Vec<_> = names.iter().map(|n| (n.clone(), Some(PathBuf::from(target)))).collect();
    v.sort();
    v
}

fn plain_names() -> Vec<String> {
    links().map(str::to_owned).collect()
}

#[test]
fn installs_binary_and_relative_links_then_a_tool_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = tmp.path().join("prefix");
    let (code, out) = install(&["--prefix", prefix.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(fs::read(prefix.join("bin/ikigai-tools")).unwrap(), fs::read(binary()).unwrap());
    let libexec = prefix.join("libexec/ikigai");
    assert_eq!(listing(&libexec), relative_links(&plain_names(), "../../bin/ikigai-tools"));

    let out =
        Command::new(libexec.join("bash")).arg(r#"{"command":"echo installed"}"#).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), r#"{"output":"installed","exit_code":0}"#);
    let schema = Command::new(libexec.join("file-read")).arg("--schema").output().unwrap();
    assert!(String::from_utf8_lossy(&schema.stdout).contains("\"name\": \"file_read\""));
}

#[test]
fn second_run_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = tmp.path().join("p");
    let p = prefix.to_str().unwrap();
    install(&["--prefix", p], &[]);
    let before = listing(&prefix.join("libexec/ikigai"));
    let (code, out) = install(&["--prefix", p], &[]);
    assert_eq!(code, 0);
    assert_eq!(before, listing(&prefix.join("libexec/ikigai")));
    let changed: Vec<_> =
        out.lines().filter(|l| !l.starts_with("unchanged ") && !l.starts_with("done;")).collect();
    assert!(changed.is_empty(), "second run changed: {changed:?}");
}

#[test]
fn prefix_from_environment_and_destdir_staging() {
    let tmp = tempfile::tempdir().unwrap();
    let stage = tmp.path().join("stage");
    let (code, _) = install(&[], &[("PREFIX", Path::new("/usr/local")), ("DESTDIR", &stage)]);
    assert_eq!(code, 0);
    let libexec = stage.join("usr/local/libexec/ikigai");
    assert_eq!(listing(&libexec), relative_links(&plain_names(), "../../bin/ikigai-tools"));
    let out = Command::new(libexec.join("glob")).arg("--schema").output().unwrap();
    assert!(out.status.success());
}

#[test]
fn tool_suffix_names_replace_the_plain_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("p");
    install(&["--prefix", p.to_str().unwrap()], &[]);
    let (code, _) = install(&["--prefix", p.to_str().unwrap(), "--tool-suffix"], &[]);
    assert_eq!(code, 0);
    let names: Vec<String> = links().map(|s| format!("{s}-tool")).collect();
    assert_eq!(
        listing(&p.join("libexec/ikigai")),
        relative_links(&names, "../../bin/ikigai-tools")
    );
    let out =
        Command::new(p.join("libexec/ikigai/file-read-tool")).arg("--schema").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"name\": \"file_read\""));
}

#[test]
fn shellclaw_directory_gets_schema_names() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("p");
    let tools = tmp.path().join("shellclaw/tools");
    let (code, _) =
        install(&["--prefix", p.to_str().unwrap(), "--shellclaw", tools.to_str().unwrap()], &[]);
    assert_eq!(code, 0);
    let names: Vec<String> = ikigai_tools::tools::TOOLS.iter().map(|t| t.name.to_owned()).collect();
    assert_eq!(listing(&tools), relative_links(&names, "../../p/bin/ikigai-tools"));
    let out = Command::new(tools.join("file_write")).arg("--describe").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"name\": \"file_write\""));
}

#[test]
fn uninstall_removes_only_what_install_made() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("p");
    let sc = tmp.path().join("sc");
    let (ps, scs) = (p.to_str().unwrap(), sc.to_str().unwrap());
    install(&["--prefix", ps, "--shellclaw", scs], &[]);
    fs::write(sc.join("weather"), "#!/bin/sh\n").unwrap();
    fs::write(p.join("bin/other"), "keep").unwrap();
    let (code, _) = install(&["--prefix", ps, "--shellclaw", scs, "--uninstall"], &[]);
    assert_eq!(code, 0);
    assert!(!p.join("libexec/ikigai").exists());
    assert_eq!(listing(&p.join("bin")), vec![("other".to_string(), None)]);
    assert_eq!(listing(&sc), vec![("weather".to_string(), None)]);
}

#[test]
fn uninstall_removes_every_link_to_the_binary_even_of_a_tool_it_no_longer_has() {
    // An older version's tool, linked by the install that made it.
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("p");
    let ps = p.to_str().unwrap();
    install(&["--prefix", ps], &[]);
    std::os::unix::fs::symlink("../../bin/ikigai-tools", p.join("libexec/ikigai/old-tool"))
        .unwrap();
    std::os::unix::fs::symlink("/elsewhere/bin/ikigai-tools", p.join("libexec/ikigai/theirs"))
        .unwrap();
    let (code, _) = install(&["--prefix", ps, "--uninstall"], &[]);
    assert_eq!(code, 0);
    assert_eq!(
        listing(&p.join("libexec/ikigai")),
        vec![("theirs".to_string(), Some(PathBuf::from("/elsewhere/bin/ikigai-tools")))]
    );
}

#[test]
fn unknown_option_is_refused() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh");
    let out = Command::new("sh").arg(script).arg("--frobnicate").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "install.sh: unknown option '--frobnicate' (see --help)\n"
    );
}
