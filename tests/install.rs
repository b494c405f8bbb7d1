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

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh")
}

/// `sh install.sh ARGS` with `envs` added: exit status, stdout, stderr.
fn run_script(args: &[&str], envs: &[(&str, &Path)]) -> (i32, String, String) {
    let mut cmd = Command::new("sh");
    cmd.arg(script()).args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn install(args: &[&str], envs: &[(&str, &Path)]) -> (i32, String) {
    let bin = binary();
    let mut all = vec!["--binary", bin.to_str().unwrap()];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = run_script(&all, envs);
    assert_eq!(stderr, "", "install.sh wrote to stderr");
    (code, stdout)
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
    let changed: Vec<_> = out
        .lines()
        .filter(|l| !["unchanged ", "done;", "note: "].iter().any(|p| l.starts_with(p)))
        .collect();
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

/// Issue 15: `--uninstall` left `PREFIX/libexec/ikigai` behind. It goes,
/// once empty; `PREFIX/libexec` and `PREFIX/bin`, which may be anybody's
/// (`~/.local/bin`), stay. A second uninstall finds nothing and says so.
#[test]
fn uninstall_removes_its_directory_and_nothing_that_is_not_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("p");
    let ps = p.to_str().unwrap();
    install(&["--prefix", ps, "--tool-suffix"], &[]);
    let (code, out) = install(&["--prefix", ps, "--uninstall"], &[]);
    assert_eq!(code, 0);
    assert!(out.contains(&format!("removed {ps}/libexec/ikigai\n")), "{out}");
    assert_eq!(listing(&p), [("bin".to_string(), None), ("libexec".to_string(), None)]);
    assert_eq!(listing(&p.join("bin")), []);
    assert_eq!(listing(&p.join("libexec")), []);
    let (code, out) = install(&["--prefix", ps, "--uninstall"], &[]);
    assert_eq!(code, 0);
    assert_eq!(out, format!("nothing of ikigai-tools was found in {ps}; nothing was removed\n"));
    // Somebody else's file keeps the directory.
    install(&["--prefix", ps], &[]);
    fs::write(p.join("libexec/ikigai/weather"), "#!/bin/sh\n").unwrap();
    install(&["--prefix", ps, "--uninstall"], &[]);
    assert_eq!(listing(&p.join("libexec/ikigai")), [("weather".to_string(), None)]);
}

/// Issue 15: `--uninstall` without `--shellclaw` left the shellclaw links
/// dangling. The install records the directories it filled.
#[test]
fn uninstall_finds_the_shellclaw_directories_the_install_filled() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("p");
    let (sc, sc2) = (tmp.path().join("sc"), tmp.path().join("sc2"));
    let ps = p.to_str().unwrap();
    for dir in [&sc, &sc2, &sc] {
        install(&["--prefix", ps, "--shellclaw", dir.to_str().unwrap()], &[]);
    }
    let record = fs::read_to_string(p.join("libexec/ikigai/.shellclaw-dirs")).unwrap();
    let real = |d: &Path| d.canonicalize().unwrap().to_str().unwrap().to_owned();
    assert_eq!(record, format!("{}\n{}\n", real(&sc), real(&sc2)), "each directory once");
    fs::write(sc.join("weather"), "#!/bin/sh\n").unwrap();
    let (code, out) = install(&["--prefix", ps, "--uninstall"], &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(listing(&sc), [("weather".to_string(), None)]);
    assert_eq!(listing(&sc2), []);
    assert!(!p.join("libexec/ikigai").exists());
}

/// Issue 15: links in a shellclaw directory that point at the binary in
/// another spelling, or dangle towards it (an earlier uninstall removed
/// it), or towards the links of `libexec/ikigai`, are removed with
/// `--shellclaw DIR`; links to anything else stay, dangling or not.
#[test]
fn uninstall_removes_shellclaw_links_that_point_or_dangle_towards_the_binary() {
    use std::os::unix::fs::symlink;
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("p");
    let sc = tmp.path().join("sc");
    let (ps, scs) = (p.to_str().unwrap(), sc.to_str().unwrap());
    install(&["--prefix", ps, "--shellclaw", scs], &[]);
    symlink(p.join("bin/ikigai-tools"), sc.join("absolute")).unwrap();
    symlink(p.join("libexec/ikigai/bash"), sc.join("through_libexec")).unwrap();
    symlink("/elsewhere/bin/ikigai-tools", sc.join("theirs")).unwrap();
    symlink("nowhere", sc.join("dangling_elsewhere")).unwrap();
    // An uninstall of an install that recorded nothing: the binary and the
    // libexec links go, the shellclaw links are left dangling.
    fs::remove_file(p.join("libexec/ikigai/.shellclaw-dirs")).unwrap();
    install(&["--prefix", ps, "--uninstall"], &[]);
    assert!(fs::metadata(sc.join("bash")).is_err(), "dangling");
    let (code, out) = install(&["--prefix", ps, "--shellclaw", scs, "--uninstall"], &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        listing(&sc),
        [
            ("dangling_elsewhere".to_string(), Some(PathBuf::from("nowhere"))),
            ("theirs".to_string(), Some(PathBuf::from("/elsewhere/bin/ikigai-tools"))),
        ]
    );
    assert_eq!(out.lines().last(), Some(&*format!("ikigai-tools uninstalled from {ps}")));
}

/// Issue 15: `--prefix` without a value was a raw shell error. Every
/// option that takes a value says so in one line, exit status 2, whether
/// the value is missing, empty or another option.
#[test]
fn an_option_without_its_value_is_a_one_line_usage_error() {
    for (option, takes) in [
        ("--prefix", "a directory: --prefix DIR"),
        ("--destdir", "a directory: --destdir DIR"),
        ("--binary", "a path: --binary PATH"),
        ("--shellclaw", "a directory: --shellclaw DIR"),
    ] {
        let empty = format!("{option}=");
        for (args, told) in [
            (vec![option], format!("{option} needs {takes}")),
            (vec![&*empty], format!("{option} needs {takes}")),
            (vec![option, ""], format!("{option} needs {takes}")),
            (
                vec![option, "--uninstall"],
                format!("{option} needs {takes}, not the option '--uninstall'"),
            ),
        ] {
            let (code, out, err) = run_script(&args, &[]);
            assert_eq!(
                (code, out.as_str(), err),
                (2, "", format!("install.sh: {told} (see --help)\n")),
                "{args:?}"
            );
        }
    }
    let (code, out, err) = run_script(&["--prefix", "relative"], &[]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(err, "install.sh: --prefix must be an absolute path, got 'relative' (see --help)\n");
}

/// Issue 15: "done" was printed by a run that then exited 1. A run that
/// could not make a link says what went wrong on stderr and is not done.
#[test]
fn done_is_said_only_when_everything_was_done() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("p");
    fs::create_dir_all(p.join("libexec/ikigai")).unwrap();
    fs::write(p.join("libexec/ikigai/grep"), "someone's grep").unwrap();
    let bin = binary();
    let args = ["--binary", bin.to_str().unwrap(), "--prefix", p.to_str().unwrap()];
    let (code, out, err) = run_script(&args, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(!out.contains("done"), "{out}");
    let grep = p.join("libexec/ikigai/grep");
    assert_eq!(
        err,
        format!(
            "install.sh: {} exists and is not a symlink; leaving it alone\n\
             install.sh: not done: some links could not be made (see above)\n",
            grep.display()
        )
    );
    assert_eq!(fs::read(&grep).unwrap(), b"someone's grep");
}

/// Issue 15: nothing said that `PREFIX/bin` was not on `PATH`. When it is
/// not, the last line says how to add it; not when it is, nor when staging
/// for a package.
#[test]
fn a_bin_directory_not_on_path_is_pointed_out() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("p");
    let bin = p.join("bin");
    let note = format!(
        "note: {} is not on your PATH; to run ikigai-tools by name, add it: \
         export PATH=\"{}:$PATH\"",
        bin.display(),
        bin.display()
    );
    let ps = p.to_str().unwrap();
    let (code, out) = install(&["--prefix", ps], &[("PATH", Path::new("/usr/bin:/bin"))]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().last(), Some(&*note));
    for path in
        [format!("/usr/bin:{}:/bin", bin.display()), format!("{}/:/usr/bin:/bin", bin.display())]
    {
        let (code, out) = install(&["--prefix", ps], &[("PATH", Path::new(&path))]);
        assert_eq!(code, 0);
        assert!(out.lines().last().unwrap().starts_with("done; "), "{path}: {out}");
    }
    let stage = tmp.path().join("stage");
    let (code, out) = install(
        &["--prefix", "/opt/x", "--destdir", stage.to_str().unwrap()],
        &[("PATH", Path::new("/usr/bin:/bin"))],
    );
    assert_eq!(code, 0);
    assert!(!out.contains("note: "), "{out}");
}

/// Issue 15: the build was silent for minutes (`cargo --quiet`). It says
/// beforehand that it takes minutes, then lets cargo's progress through;
/// a build that fails ends the run, not done. (A cargo and a rustc of the
/// test's own stand in for the real ones.)
#[test]
fn the_build_says_it_takes_minutes_and_shows_cargos_progress() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let fake = tmp.path().join("fake-bin");
    fs::create_dir(&fake).unwrap();
    for (name, body) in [
        ("rustc", "echo 'host: x86_64-unknown-linux-gnu'"),
        ("cargo", "echo \"   Compiling ikigai-tools (cargo $*)\" >&2; exit 101"),
    ] {
        let path = fake.join(name);
        fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!("{}:/usr/bin:/bin", fake.display());
    let p = tmp.path().join("p");
    for (extra, built) in [
        (None, "cargo build --release, statically linked; the first build takes about 3 minutes"),
        (Some("--dynamic"), "cargo build --release; the first build takes about 3 minutes"),
    ] {
        let mut args = vec!["--prefix", p.to_str().unwrap()];
        args.extend(extra);
        let (code, out, err) = run_script(&args, &[("PATH", Path::new(&path))]);
        assert_eq!(code, 101, "{out}{err}");
        assert_eq!(out, format!("building ikigai-tools ({built})\n"));
        assert!(
            err.starts_with("   Compiling ikigai-tools (cargo build --release --locked"),
            "{err}"
        );
        assert!(!err.contains("--quiet"), "{err}");
        assert!(!p.exists());
    }
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

/// `--profile full`: the links lead to `bin/ikigai-tools-full`, the same
/// file as `bin/ikigai-tools` under the name that makes the full profile
/// its default, so a host needs no setting; the shellclaw links too. Back
/// to `--profile seed`, the links lead to `ikigai-tools` again and the
/// full name goes; `--uninstall` removes both names.
#[test]
fn profile_full_links_lead_to_the_full_name_and_back() {
    use ikigai_tools::profile::Profile;
    use std::os::unix::fs::MetadataExt;
    let tmp = tempfile::tempdir().unwrap();
    let (p, sc) = (tmp.path().join("p"), tmp.path().join("sc"));
    let (ps, scs) = (p.to_str().unwrap(), sc.to_str().unwrap());
    let libexec = p.join("libexec/ikigai");
    let schema_of = |link: &Path| {
        let out = Command::new(link).arg("--schema").env_remove("IKIGAI_TOOLS_PROFILE").output();
        String::from_utf8(out.unwrap().stdout).unwrap()
    };

    let (code, out) = install(&["--prefix", ps, "--profile", "full", "--shellclaw", scs], &[]);
    assert_eq!(code, 0, "{out}");
    let (plain, full) = (p.join("bin/ikigai-tools"), p.join("bin/ikigai-tools-full"));
    let (a, b) = (fs::metadata(&plain).unwrap(), fs::metadata(&full).unwrap());
    assert_eq!((a.dev(), a.ino()), (b.dev(), b.ino()), "one file, two names");
    let mut expected = relative_links(&plain_names(), "../../bin/ikigai-tools-full");
    expected.insert(0, (".shellclaw-dirs".to_owned(), None));
    assert_eq!(listing(&libexec), expected);
    for tool in &ikigai_tools::tools::TOOLS {
        assert_eq!(schema_of(&libexec.join(tool.command)), tool.schema(Profile::Full));
        assert_eq!(schema_of(&sc.join(tool.name)), tool.schema(Profile::Full));
    }
    // Twice changes nothing.
    let (_, again) = install(&["--prefix", ps, "--profile", "full", "--shellclaw", scs], &[]);
    assert!(again.contains(&format!("unchanged {}", full.display())), "{again}");

    let (code, out) = install(&["--prefix", ps, "--shellclaw", scs], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(!full.exists(), "{out}");
    let mut expected = relative_links(&plain_names(), "../../bin/ikigai-tools");
    expected.insert(0, (".shellclaw-dirs".to_owned(), None));
    assert_eq!(listing(&libexec), expected);
    for tool in &ikigai_tools::tools::TOOLS {
        assert_eq!(schema_of(&libexec.join(tool.command)), tool.schema(Profile::Seed));
    }

    install(&["--prefix", ps, "--profile=full"], &[]);
    let (code, _) = install(&["--prefix", ps, "--shellclaw", scs, "--uninstall"], &[]);
    assert_eq!(code, 0);
    assert_eq!(listing(&p.join("bin")), vec![]);
    assert!(!libexec.exists());
    assert_eq!(listing(&sc), vec![]);
}

#[test]
fn a_profile_that_does_not_exist_is_a_one_line_usage_error() {
    let (code, stdout, stderr) = run_script(&["--profile", "all"], &[]);
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert_eq!(stderr, "install.sh: --profile is seed or full, not 'all' (see --help)\n");
    let (code, _, stderr) = run_script(&["--profile"], &[]);
    assert_eq!(code, 2);
    assert_eq!(stderr, "install.sh: --profile needs a profile: --profile seed|full (see --help)\n");
}
