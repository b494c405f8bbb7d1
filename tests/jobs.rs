//! Jobs (docs/TOOLS.md, "Jobs"; issue 18): bash commands that outlive the
//! call, as hosts use them: through `ikigai-tools call --timeout 30`
//! (ikigai's limit) with a small `IKIGAI_TOOLS_YIELD`, and through the MCP
//! server. Each test has a state directory of its own.

use crate::common;
use crate::common::mcp::{unconfined, Session};
use common::fuzz::{random_seed, Rng};
use common::procs::{assert_gone_within, is_gone};
use common::*;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Long enough for anything here on a loaded machine.
const PATIENCE: Duration = Duration::from_secs(20);

/// A test's world: the fixture tree and a state directory (not made yet:
/// the tools make it, mode 0700).
struct Jobs {
    env: Env,
    state: PathBuf,
}

impl Jobs {
    fn new() -> Jobs {
        let env = Env::new();
        let state = env.beside("jobs-parent").join("state");
        // The links made once, before any test calls from several threads
        // (`Env::link` makes a missing one, not atomically).
        for tool in ["bash", "job_output", "job_kill", "job_list", "ikigai-tools"] {
            env.link(tool);
        }
        Jobs { env, state }
    }

    /// A call of `tool` in the full profile with this state directory and
    /// a yield of 1 s, `vars` on top.
    fn cmd(&self, tool: &str, vars: &[(&str, &str)]) -> Call {
        let mut call = self
            .env
            .cmd(tool)
            .env("IKIGAI_TOOLS_PROFILE", "full")
            .env("IKIGAI_TOOLS_STATE_DIR", &self.state)
            .env("IKIGAI_TOOLS_YIELD", "1")
            .timeout(PATIENCE * 3);
        for (k, v) in vars {
            call = call.env(k, v);
        }
        call
    }

    fn call_with(&self, tool: &str, args: Value, vars: &[(&str, &str)]) -> Value {
        let ran = self.cmd(tool, vars).stdin(args.to_string()).run();
        assert_eq!(ran.code, Some(0), "{tool} {args}: {}", ran.stderr);
        ran.json()
    }

    fn call(&self, tool: &str, args: Value) -> Value {
        self.call_with(tool, args, &[])
    }

    /// job_output with `wait` until the job has ended; everything it
    /// printed after what was read already, and the last answer.
    fn read_to_end(&self, id: &str, vars: &[(&str, &str)]) -> (String, Value) {
        let deadline = Instant::now() + PATIENCE;
        let mut output = String::new();
        loop {
            let answer = self.call_with("job_output", json!({"job_id": id, "wait": 5}), vars);
            output.push_str(answer["output"].as_str().unwrap_or_else(|| panic!("{answer}")));
            if answer["running"] == false {
                return (output, answer);
            }
            assert!(Instant::now() < deadline, "still running: {answer}");
        }
    }

    /// The job directories of the default namespace.
    fn job_dirs(&self) -> Vec<PathBuf> {
        match std::fs::read_dir(self.state.join("default")) {
            Ok(dir) => dir.map(|e| e.unwrap().path()).collect(),
            Err(_) => vec![],
        }
    }
}

fn id_of(answer: &Value) -> String {
    let id = answer["job_id"].as_str().unwrap_or_else(|| panic!("no job_id: {answer}"));
    assert_eq!(id.len(), 32, "{id}");
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()), "{id}");
    id.to_owned()
}

/// The note a job's first answer ends with.
fn note(id: &str) -> String {
    format!(
        "\n[running as job {id}: job_output with this job_id reads what it prints next and its \
         exit_code; job_kill stops it]"
    )
}

/// What a job's first answer printed, without the note if it has one
/// (a background job may have ended by its first answer).
fn output_so_far(answer: &Value) -> String {
    let id = id_of(answer);
    let output = answer["output"].as_str().unwrap_or_else(|| panic!("{answer}"));
    output.strip_suffix(&note(&id)).unwrap_or(output).to_owned()
}

/// What a job's first answer printed, without the note.
fn first_output(answer: &Value) -> String {
    let id = id_of(answer);
    let output = answer["output"].as_str().unwrap_or_else(|| panic!("{answer}"));
    output.strip_suffix(&note(&id)).unwrap_or_else(|| panic!("no note: {answer}")).to_owned()
}

/// The pids written to `file` (one a line), once `count` are there.
pub(crate) fn pids_in(file: &Path, count: usize) -> Vec<i32> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let pids: Vec<i32> = std::fs::read_to_string(file)
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        if pids.len() >= count {
            return pids;
        }
        assert!(Instant::now() < deadline, "{} has {pids:?}", file.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A command that writes its shell's pid and a background sleep's to
/// `file`, then runs `rest`.
fn with_pids(file: &Path, rest: &str) -> String {
    let f = file.display();
    format!("sleep 300 & echo $! >> {f}; echo $$ >> {f}; {rest}")
}

/// The ikigai flow through `ikigai-tools call --timeout 30`, the host's
/// limit: a command still running at the yield answers what it printed and
/// a job_id; job_output then gives the rest, `done`, and exit_code 0.
fn ikigai_flow(jobs: &Jobs, command: &str, vars: &[(&str, &str)]) {
    let args = json!({"command": command}).to_string();
    let ran = jobs
        .cmd("ikigai-tools", vars)
        .arg("call")
        .arg("--timeout")
        .arg("30")
        .arg("bash")
        .arg(&args)
        .run();
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let answer = ran.json();
    assert_eq!(answer["tool_success"], true, "{answer}");
    let first = &answer["result"];
    let id = id_of(first);
    let so_far = first_output(first);
    let expected =
        json!({"output": format!("{so_far}{}", note(&id)), "job_id": id, "running": true});
    assert_eq!(first, &expected);
    // `start`, unless the machine was too busy to print it within the yield.
    assert!(so_far == "start\n" || so_far.is_empty(), "{first}");
    // job_output, as the host calls it.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut rest = String::new();
    let last = loop {
        let args = json!({"job_id": id, "wait": 15}).to_string();
        let ran = jobs
            .cmd("ikigai-tools", vars)
            .arg("call")
            .arg("--timeout")
            .arg("30")
            .arg("job_output")
            .arg(&args)
            .run();
        let answer = ran.json();
        assert_eq!(answer["tool_success"], true, "{answer}");
        let result = answer["result"].clone();
        rest.push_str(result["output"].as_str().unwrap());
        if result["running"] == false {
            break result;
        }
        assert!(Instant::now() < deadline, "{result}");
    };
    assert_eq!(so_far + &rest, "start\ndone\n");
    assert_eq!(last["exit_code"], 0, "{last}");
    assert!(jobs.job_dirs().is_empty(), "read to its end, the job is removed");
}

#[test]
fn jobs_the_ikigai_flow_through_call_with_a_small_yield() {
    let jobs = Jobs::new();
    ikigai_flow(&jobs, "echo start; sleep 2; echo done", &[]);
}

/// The issue's own flow: `sleep 40; echo done` under ikigai's 30 s kill,
/// the default yield of 20 s.
#[test]
#[ignore = "takes 40 s: the real ikigai flow"]
fn jobs_the_ikigai_flow_with_the_real_limits() {
    let jobs = Jobs::new();
    ikigai_flow(&jobs, "echo start; sleep 40; echo done", &[("IKIGAI_TOOLS_YIELD", "20")]);
}

#[test]
fn jobs_a_command_that_ends_within_the_yield_answers_as_always_and_leaves_nothing() {
    let jobs = Jobs::new();
    assert_eq!(
        jobs.call("bash", json!({"command": "echo hi; echo oops >&2; exit 3"})),
        json!({"output": "hi\noops", "exit_code": 3})
    );
    assert!(jobs.job_dirs().is_empty());
    assert_eq!(jobs.call("job_list", json!({})), json!({"jobs": []}));
}

#[test]
fn jobs_run_in_background_answers_at_once_with_the_first_output() {
    let jobs = Jobs::new();
    let first = jobs.call(
        "bash",
        json!({"command": "echo first; sleep 1; echo second", "run_in_background": true}),
    );
    let id = id_of(&first);
    let so_far = first_output(&first);
    let expected =
        json!({"output": format!("{so_far}{}", note(&id)), "job_id": id, "running": true});
    assert_eq!(first, expected);
    // The first line, unless the machine is too busy to print it in 200 ms.
    assert!(so_far == "first\n" || so_far.is_empty(), "{first}");
    let (rest, last) = jobs.read_to_end(&id, &[]);
    assert_eq!(so_far + &rest, "first\nsecond\n");
    assert_eq!(last, json!({"output": last["output"], "running": false, "exit_code": 0}));
    // Read to its end: gone.
    let gone = jobs.call("job_output", json!({"job_id": id}));
    assert_eq!(gone["error_code"], "JOB_NOT_FOUND", "{gone}");
    assert!(jobs.job_dirs().is_empty());
}

#[test]
fn jobs_timeout_stops_the_whole_group_and_says_timed_out() {
    let jobs = Jobs::new();
    let pids = jobs.env.path("pids");
    for background in [false, true] {
        let _ = std::fs::remove_file(&pids);
        let command = with_pids(&pids, "echo a; sleep 300");
        // The yield after the timeout: the call waits for the end.
        let answer = jobs.call_with(
            "bash",
            json!({"command": command, "timeout": 2, "run_in_background": background}),
            &[("IKIGAI_TOOLS_YIELD", "20")],
        );
        let last = if background {
            let id = id_of(&answer);
            jobs.read_to_end(&id, &[]).1
        } else {
            answer.clone()
        };
        assert_eq!(last["exit_code"], 143, "{last}");
        assert_eq!(last["timed_out"], true, "{last}");
        if !background {
            assert_eq!(answer, json!({"output": "a", "exit_code": 143, "timed_out": true}));
        }
        assert_gone_within(&pids_in(&pids, 2), PATIENCE);
    }
}

#[test]
fn jobs_workdir_is_where_the_command_starts() {
    let jobs = Jobs::new();
    let sub = jobs.env.mkdir("sub/dir");
    for yield_after in ["1", "0"] {
        let vars = [("IKIGAI_TOOLS_YIELD", yield_after)];
        let answer = jobs.call_with("bash", json!({"command": "pwd", "workdir": "sub/dir"}), &vars);
        assert_eq!(answer, json!({"output": sub.display().to_string(), "exit_code": 0}));
        let missing = jobs.call_with("bash", json!({"command": "pwd", "workdir": "nope"}), &vars);
        assert_eq!(
            missing,
            json!({"error": format!("File not found: nope{}", jobs.env.looked_for("nope")),
                   "error_code": "FILE_NOT_FOUND"})
        );
    }
}

/// job_list's row of the job `id`, its age left out (it grows), once
/// `done` says it is the one awaited (a bounded wait).
fn listed_row(jobs: &Jobs, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let listed = jobs.call("job_list", json!({}));
        let rows = listed["jobs"].as_array().unwrap_or_else(|| panic!("{listed}"));
        let mut row = rows.iter().find(|r| r["job_id"] == id).cloned().unwrap_or(Value::Null);
        if done(&row) {
            assert!(row["age"].as_u64().is_some_and(|a| a < 60), "{row}");
            row.as_object_mut().unwrap().remove("age");
            return row;
        }
        assert!(Instant::now() < deadline, "{listed}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Issue 25: a job that ended was listed until read (up to its time to
/// live) with nothing saying why. job_list shows it ended as soon as it
/// has, how (`exit_code`, `timed_out` as job_output says them), and the
/// bytes job_output has not answered yet.
#[test]
fn jobs_job_list_shows_an_ended_job_with_its_exit_code_and_what_is_unread() {
    let jobs = Jobs::new();
    let command = "sleep 1; printf 'a\\nb\\n'; exit 3";
    let first = jobs.call("bash", json!({"command": command, "run_in_background": true}));
    let id = id_of(&first);
    let ended = listed_row(&jobs, &id, |row| row["state"] != "running");
    assert_eq!(
        ended,
        json!({"job_id": id, "command": command, "state": "exited", "bytes": 4, "unread": 4,
               "exit_code": 3})
    );
    let read = jobs.call("job_output", json!({"job_id": id}));
    assert_eq!(read, json!({"output": "a\nb\n", "running": false, "exit_code": 3}));
    assert_eq!(jobs.call("job_list", json!({})), json!({"jobs": []}), "read to its end: gone");

    // Running: so; stopped at its timeout: as job_output says it.
    let command = "echo up; sleep 300";
    let first =
        jobs.call("bash", json!({"command": command, "run_in_background": true, "timeout": 2}));
    let id = id_of(&first);
    // What the first answer gave is read already.
    let given = first_output(&first).len() as u64;
    let running = listed_row(&jobs, &id, |row| row["state"] == "running");
    assert_eq!(running["unread"], json!(running["bytes"].as_u64().unwrap() - given), "{running}");
    let ended = listed_row(&jobs, &id, |row| row["state"] != "running");
    let unread = 3 - given;
    assert_eq!(
        ended,
        json!({"job_id": id, "command": command, "state": "timed_out", "bytes": 3,
               "unread": unread, "exit_code": 143, "timed_out": true})
    );
}

/// Issue 25: a job's supervisor, forked from the tool that started it,
/// showed in ps as that tool (`bash`). It shows as the job it runs, by the
/// id job_list gives.
#[test]
fn jobs_a_jobs_supervisor_shows_as_its_job_in_ps() {
    let jobs = Jobs::new();
    let first = jobs.call("bash", json!({"command": "sleep 300", "run_in_background": true}));
    let id = id_of(&first);
    let pid_file = jobs.state.join("default").join(&id).join("pid");
    let pid = pids_in(&pid_file, 1)[0];
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let shown = String::from_utf8_lossy(&cmdline).trim_end_matches('\0').replace('\0', " ");
    assert_eq!(shown, format!("ikigai-tools job {}: sleep 300", &id[..8]));
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap();
    assert_eq!(comm, "ikigai-job\n");
    jobs.call("job_kill", json!({"job_id": id}));
}

#[test]
fn jobs_job_kill_leaves_no_process_and_job_list_shows_it_ended() {
    let jobs = Jobs::new();
    let pids = jobs.env.path("pids");
    let command = with_pids(&pids, "echo up; sleep 300");
    let first = jobs.call("bash", json!({"command": command, "run_in_background": true}));
    let id = id_of(&first);
    let pids = pids_in(&pids, 2);
    let listed = jobs.call("job_list", json!({}));
    let row = &listed["jobs"][0];
    assert_eq!(
        (&row["job_id"], &row["command"], &row["state"], &row["bytes"]),
        (&json!(id), &json!(command), &json!("running"), &json!(3)),
        "{listed}"
    );
    assert!(row["age"].as_u64().unwrap() < 60);
    let killed = jobs.call("job_kill", json!({"job_id": id}));
    assert_eq!(killed, json!({"job_id": id, "running": false, "exit_code": 143}));
    for pid in &pids {
        assert!(is_gone(*pid), "{pid} survived job_kill");
    }
    let listed = jobs.call("job_list", json!({}));
    assert_eq!(listed["jobs"][0]["state"], "killed", "{listed}");
    assert_eq!(listed["jobs"][0]["exit_code"], 143, "{listed}");
    // Killed again: the same answer.
    assert_eq!(jobs.call("job_kill", json!({"job_id": id})), killed);
    let read = jobs.call("job_output", json!({"job_id": id}));
    assert_eq!(read, json!({"output": "", "running": false, "exit_code": 143}));
    assert_eq!(jobs.call("job_list", json!({})), json!({"jobs": []}));
    assert!(jobs.job_dirs().is_empty(), "nothing left behind");
}

#[test]
fn jobs_of_two_agents_are_isolated() {
    let jobs = Jobs::new();
    let a = [("IKIGAI_AGENT_ID", "agent-a")];
    let b = [("IKIGAI_AGENT_ID", "agent-b")];
    let first =
        jobs.call_with("bash", json!({"command": "sleep 300", "run_in_background": true}), &a);
    let id = id_of(&first);
    assert_eq!(jobs.call_with("job_list", json!({}), &b), json!({"jobs": []}));
    assert_eq!(jobs.call("job_list", json!({})), json!({"jobs": []}), "nor the default namespace");
    let not_found = json!({
        "error": format!("Job not found: {id} (no such job of this agent or session: it ended and was read, expired, or never was; job_list shows the jobs)"),
        "error_code": "JOB_NOT_FOUND"
    });
    assert_eq!(jobs.call_with("job_output", json!({"job_id": id}), &b), not_found);
    assert_eq!(jobs.call_with("job_kill", json!({"job_id": id}), &b), not_found);
    let listed = jobs.call_with("job_list", json!({}), &a);
    assert_eq!(listed["jobs"][0]["state"], "running", "{listed}");
    assert_eq!(jobs.call_with("job_kill", json!({"job_id": id}), &a)["exit_code"], 143);
    // Ids that are not ids are never looked up.
    for bad in ["../default", "", "x", &id.to_uppercase()] {
        let answer = jobs.call_with("job_output", json!({"job_id": bad}), &a);
        assert_eq!(answer["error_code"], "JOB_NOT_FOUND", "{bad}: {answer}");
    }
}

#[test]
fn jobs_a_state_directory_someone_else_could_use_is_refused() {
    let jobs = Jobs::new();
    std::fs::create_dir_all(&jobs.state).unwrap();
    std::fs::set_permissions(&jobs.state, std::fs::Permissions::from_mode(0o755)).unwrap();
    let refused = jobs.call("job_list", json!({}));
    assert_eq!(refused["error_code"], "PERMISSION_DENIED", "{refused}");
    let expected = format!(
        "Permission denied: job state directory {} is open to other users (mode 755; 700 is \
         needed); refusing to use it",
        jobs.state.display()
    );
    assert_eq!(refused["error"], expected, "{refused}");
    // Never repaired: still 0755.
    let mode = std::fs::metadata(&jobs.state).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755);
    // A link to a directory is not one.
    let link = jobs.state.with_file_name("link");
    std::os::unix::fs::symlink(&jobs.state, &link).unwrap();
    let ran = jobs
        .cmd("job_list", &[("IKIGAI_TOOLS_STATE_DIR", link.to_str().unwrap())])
        .stdin("{}")
        .run();
    assert_eq!(ran.json()["error_code"], "PERMISSION_DENIED", "{}", ran.stdout_text());
    // The user's own, 0700: taken.
    std::fs::set_permissions(&jobs.state, std::fs::Permissions::from_mode(0o700)).unwrap();
    assert_eq!(jobs.call("job_list", json!({})), json!({"jobs": []}));
}

/// Another user (as root: nobody) can neither use the state directory nor
/// see a job in it.
#[test]
fn jobs_another_user_is_refused() {
    if !is_root() {
        return skipped("needs root to run a call as another user");
    }
    let jobs = Jobs::new();
    let first = jobs.call("bash", json!({"command": "sleep 300", "run_in_background": true}));
    let id = id_of(&first);
    // The parent is traversable by nobody; the state directory is not.
    std::fs::set_permissions(jobs.state.parent().unwrap(), std::fs::Permissions::from_mode(0o777))
        .unwrap();
    for (tool, args) in [
        ("job_list", json!({})),
        ("job_output", json!({"job_id": id})),
        ("job_kill", json!({"job_id": id})),
    ] {
        let ran = jobs.cmd(tool, &[]).as_nobody().stdin(args.to_string()).run();
        let answer = ran.json();
        assert_eq!(answer["error_code"], "PERMISSION_DENIED", "{tool}: {answer}");
    }
    // nobody's own state directory holds none of root's jobs.
    let theirs = jobs.env.beside("nobody");
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o777)).unwrap();
    let theirs = theirs.join("state");
    let ran = jobs
        .cmd("job_output", &[("IKIGAI_TOOLS_STATE_DIR", theirs.to_str().unwrap())])
        .as_nobody()
        .stdin(json!({"job_id": id}).to_string())
        .run();
    assert_eq!(ran.json()["error_code"], "JOB_NOT_FOUND", "{}", ran.stdout_text());
    assert_eq!(jobs.call("job_kill", json!({"job_id": id}))["exit_code"], 143);
}

#[test]
fn jobs_a_hundred_at_once() {
    let jobs = Jobs::new();
    let started: Vec<String> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let jobs = &jobs;
                scope.spawn(move || {
                    (0..25)
                        .map(|i| {
                            let n = t * 25 + i;
                            let command = format!("sleep 2; echo job {n}");
                            let first = jobs.call(
                                "bash",
                                json!({"command": command, "run_in_background": true}),
                            );
                            id_of(&first)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        threads.into_iter().flat_map(|t| t.join().unwrap()).collect()
    });
    assert_eq!(started.len(), 100);
    let listed = jobs.call("job_list", json!({}));
    assert_eq!(listed["jobs"].as_array().unwrap().len(), 100, "{listed}");
    let mut seen: Vec<String> = std::thread::scope(|scope| {
        let threads: Vec<_> = started
            .chunks(25)
            .map(|ids| {
                let jobs = &jobs;
                scope.spawn(move || {
                    ids.iter()
                        .map(|id| {
                            let (output, last) = jobs.read_to_end(id, &[]);
                            assert_eq!(last["exit_code"], 0, "{last}");
                            output
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        threads.into_iter().flat_map(|t| t.join().unwrap()).collect()
    });
    seen.sort();
    let mut expected: Vec<String> = (0..100).map(|n| format!("job {n}\n")).collect();
    expected.sort();
    assert_eq!(seen, expected);
    assert!(jobs.job_dirs().is_empty());
}

/// Bytes used by the files under `dir`.
fn disk_use(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let meta = entry.metadata().unwrap();
        total += if meta.is_dir() { disk_use(&entry.path()) } else { meta.blocks() * 512 };
    }
    total
}

/// A field of /proc/PID/status, in kB.
fn status_kb(pid: i32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A job printing `bytes` bytes: the disk its state takes and the memory
/// of its supervisor stay bounded (by twice the output limit kept, and a
/// buffer); the figures are printed.
fn bounded_job(bytes: u64) {
    let jobs = Jobs::new();
    let vars = [("IKIGAI_TOOLS_MAX_OUTPUT", "65536")];
    // The job prints once its first answer is in: on a loaded machine it
    // could otherwise end before that answer, which then (rightly) reads
    // as ended, without the note this test reads the job's id from.
    let gate = jobs.env.path("go");
    let command = format!(
        "while [ ! -e {} ]; do sleep 0.01; done; \
         yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c {bytes}; echo; echo end",
        gate.display()
    );
    let first =
        jobs.call_with("bash", json!({"command": command, "run_in_background": true}), &vars);
    let id = id_of(&first);
    assert_eq!(first_output(&first), "", "nothing printed before the gate opened");
    std::fs::write(&gate, "").unwrap();
    let dir = jobs.state.join("default").join(&id);
    let supervisor: i32 = std::fs::read_to_string(dir.join("pid")).unwrap().trim().parse().unwrap();
    let (mut disk, mut rss) = (0, 0);
    let began = Instant::now();
    while !is_gone(supervisor) {
        disk = disk.max(disk_use(&jobs.state));
        rss = rss.max(status_kb(supervisor, "VmHWM:").unwrap_or(0));
        assert!(began.elapsed() < Duration::from_secs(300), "the job never ended");
        std::thread::sleep(Duration::from_millis(50));
    }
    let printed: u64 = std::fs::read(dir.join("count"))
        .map(|b| u64::from_le_bytes(b[..8].try_into().unwrap()))
        .unwrap();
    println!(
        "a job printing {printed} bytes in {:.1} s: state on disk at most {} KiB, supervisor's peak RSS {} KiB",
        began.elapsed().as_secs_f64(),
        disk / 1024,
        rss
    );
    assert_eq!(printed, bytes + 5);
    // Head and tail of 64 KiB each, and the small files.
    assert!(disk <= 160 * 1024, "{disk} bytes on disk");
    assert!(rss < 16 * 1024, "{rss} KiB resident");
    let so_far = first_output(&first);
    assert!(first["output"].as_str().unwrap().len() <= 65536);
    let (output, last) = jobs.read_to_end(&id, &vars);
    assert_eq!(last["exit_code"], 0);
    let whole = so_far + &output;
    assert!(whole.starts_with("0123456789abcdefghijklmnopqrstuvwxyz\n"), "{}", &whole[..100]);
    // Its lines are named when one read saw the job's count hold still
    // (the read that skips the dropped middle); else the bytes alone.
    let marker = regex::Regex::new(
        r"\[\.\.\. \d+ bytes omitted( \(lines \d+-\d+\))?, not kept: run the command again",
    )
    .unwrap();
    assert!(marker.is_match(&whole), "{whole}");
    assert!(output.len() <= 65536, "{}", output.len());
    assert!(output.ends_with("\nend\n"), "{}", &output[output.len() - 100..]);
}

#[test]
fn jobs_a_job_printing_200_mb_keeps_disk_and_memory_bounded() {
    bounded_job(200 * 1000 * 1000);
}

#[test]
#[ignore = "prints 1 GB"]
fn jobs_a_job_printing_1_gb_keeps_disk_and_memory_bounded() {
    bounded_job(1000 * 1000 * 1000);
}

/// SIGKILL of the tool that starts a job, at random moments (a fixed,
/// printed random seed; `IKIGAI_FUZZ_SEED` replays one): no process of any
/// job is left that job_list does not show, every job shown can be killed, and
/// once they are, nothing survives and nothing is left behind.
#[test]
fn jobs_sigkill_of_the_starter_at_random_moments() {
    let random_seed = random_seed();
    println!("random seed {random_seed}");
    let jobs = Jobs::new();
    let mut rng = Rng::new(random_seed);
    let pidfile = jobs.env.path("pids");
    let mut starters = vec![];
    for round in 0..12 {
        let background = rng.one_in(2);
        let command = with_pids(&pidfile, &format!("echo round {round}; sleep 300"));
        let mut running = std::process::Command::new(jobs.env.link("bash"))
            .current_dir(jobs.env.work())
            .env("IKIGAI_TOOLS_PROFILE", "full")
            .env("IKIGAI_TOOLS_STATE_DIR", &jobs.state)
            .env("IKIGAI_TOOLS_YIELD", "0.3")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        use std::io::Write;
        let args = json!({"command": command, "run_in_background": background}).to_string();
        running.stdin.take().unwrap().write_all(args.as_bytes()).unwrap();
        std::thread::sleep(Duration::from_micros(rng.below(600_000)));
        let _ = running.kill();
        let _ = running.wait();
        starters.push(running.id());
    }
    // Every job the state shows is stopped through job_kill; the others
    // were stopped by their supervisor when the starter went away first.
    std::thread::sleep(Duration::from_millis(300));
    let listed = jobs.call("job_list", json!({}));
    for row in listed["jobs"].as_array().unwrap() {
        let id = row["job_id"].as_str().unwrap();
        let killed = jobs.call("job_kill", json!({"job_id": id}));
        assert_eq!(killed["running"], false, "{killed}");
        let read = jobs.call("job_output", json!({"job_id": id}));
        assert_eq!(read["running"], false, "{read}");
    }
    let pids: Vec<i32> = std::fs::read_to_string(&pidfile)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect();
    println!(
        "{} jobs listed, {} processes started",
        listed["jobs"].as_array().unwrap().len(),
        pids.len()
    );
    assert_gone_within(&pids, PATIENCE);
    // Nothing left behind once the supervisors that were cleaning up are
    // done and a call has swept what a starter killed while making a job
    // left half made.
    let deadline = Instant::now() + PATIENCE;
    while !jobs.job_dirs().is_empty() {
        assert!(Instant::now() < deadline, "left behind: {:?}", jobs.job_dirs());
        std::thread::sleep(Duration::from_millis(50));
        jobs.call("job_list", json!({}));
    }
}

#[test]
fn jobs_the_seed_profile_has_no_jobs() {
    let env = Env::new();
    let ran = env.run("job-list", "{}");
    assert_eq!(ran.code, Some(2), "{}", ran.stderr);
    // The new parameters are refused (ignored before Reshape III).
    let answer =
        env.call("bash", json!({"command": "echo hi", "run_in_background": true, "timeout": 0}));
    assert_eq!(answer, full_only("run_in_background", "bash"));
    assert_eq!(
        env.call("bash", json!({"command": "echo hi"})),
        json!({"output": "hi", "exit_code": 0})
    );
}

/// The job tools' parameters (their typed requests) are refused with the
/// same messages as ever, before any job or state directory is looked at.
#[test]
fn jobs_the_job_tools_refuse_bad_parameters_with_their_messages() {
    let jobs = Jobs::new();
    let invalid = |message: &str| json!({"error": message, "error_code": "INVALID_ARG"});
    let id = "0".repeat(32);
    for (tool, args, message) in [
        ("job_output", json!({}), "missing required parameter: job_id"),
        ("job_output", json!({"job_id": 7}), "parameter job_id must be a string"),
        (
            "job_output",
            json!({"job_id": id, "wait": -1}),
            "parameter wait must be a number of seconds, 0 or more",
        ),
        ("job_output", json!({"job_id": id, "wait": "5"}), "parameter wait must be an integer"),
        ("job_kill", json!({}), "missing required parameter: job_id"),
        ("job_kill", json!({"job_id": null}), "missing required parameter: job_id"),
        ("job_kill", json!({"job_id": ["x"]}), "parameter job_id must be a string"),
    ] {
        assert_eq!(jobs.call(tool, args.clone()), invalid(message), "{tool} {args}");
    }
    assert!(!jobs.state.exists(), "no state directory made for a refused call");
}

/// An MCP session: a `job_output` wait sends progress; its cancellation
/// stops the wait and not the job; the session's jobs end when it does.
#[test]
fn jobs_over_mcp_wait_with_progress_cancel_and_end_with_the_session() {
    let env = Env::new();
    let mut session = Session::initialized_with(&env, &unconfined(), json!({}));
    let pidfile = env.path("pids");
    let command = with_pids(&pidfile, "echo up; sleep 3; echo later; sleep 300");
    let first = session.call(2, "bash", json!({"command": command, "run_in_background": true}));
    let first = &first["result"]["structuredContent"];
    let id = id_of(first);
    assert_eq!(first["running"], true, "{first}");
    let pids = pids_in(&pidfile, 2);
    // Waits that see progress, until the line printed 3 s in.
    let mut output = first_output(first);
    let mut progress = false;
    let mut request = 3;
    while !output.contains("later") {
        let arguments = json!({"job_id": id, "wait": 30});
        let meta = json!({"progressToken": request});
        let params = json!({"name": "job_output", "arguments": arguments, "_meta": meta});
        session.send(request, "tools/call", params);
        let (answer, before) = session.response_within(request, PATIENCE);
        let result = &answer["result"]["structuredContent"];
        assert_eq!(result["running"], true, "{answer}");
        output.push_str(result["output"].as_str().unwrap());
        progress |= before.iter().any(|m| {
            m["method"] == "notifications/progress" && m["params"]["progressToken"] == request
        });
        request += 1;
        assert!(request < 10, "{output}");
    }
    assert_eq!(output, "up\nlater\n");
    assert!(progress, "no progress while waiting");
    // A wait cancelled: the job runs on.
    session.send(
        20,
        "tools/call",
        json!({"name": "job_output", "arguments": {"job_id": id, "wait": 30}}),
    );
    std::thread::sleep(Duration::from_millis(500));
    session.send_line(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 20, "reason": "test"}})
            .to_string(),
    );
    let listed = session.call(21, "job_list", json!({}));
    let rows = &listed["result"]["structuredContent"]["jobs"];
    assert_eq!(rows[0]["state"], "running", "{listed}");
    assert!(pids.iter().all(|&p| !is_gone(p)), "the cancelled wait stopped the job");
    // The session ends: its jobs with it.
    session.end();
    assert_gone_within(&pids, PATIENCE);
}

/// A job keeps the confinement of the call that started it: confined to
/// `work/`, it writes neither outside the roots when it runs past the
/// yield nor in the background; inside, it does.
#[test]
fn jobs_keep_the_confinement_of_their_call() {
    let jobs = Jobs::new();
    let outside = jobs.env.beside("outside");
    let tmp = jobs.env.beside("tmp");
    let work = jobs.env.work();
    let vars = [("IKIGAI_TOOLS_ROOTS", work.to_str().unwrap()), ("TMPDIR", tmp.to_str().unwrap())];
    for background in [false, true] {
        let target = outside.join(format!("escaped-{background}"));
        let inside = work.join(format!("inside-{background}"));
        let command = format!(
            "sleep 1.5; echo x > {}; echo y > {}; echo finished",
            target.display(),
            inside.display()
        );
        let first = jobs.call_with(
            "bash",
            json!({"command": command, "run_in_background": background}),
            &vars,
        );
        let id = id_of(&first);
        let (output, last) = jobs.read_to_end(&id, &vars);
        assert!(
            output.contains("Read-only file system") || output.contains("Permission denied"),
            "{output}"
        );
        assert!(output.ends_with("finished\n"), "{output}");
        assert_eq!(last["exit_code"], 0, "{last}");
        assert!(!target.exists(), "a confined job wrote outside the roots");
        assert_eq!(std::fs::read_to_string(&inside).unwrap(), "y\n");
    }
}

/// `IKIGAI_TOOLS_JOB_TTL`: a running job nobody reads is ended and removed
/// by its supervisor; an ended one by the next call that looks.
#[test]
fn jobs_nobody_reads_end_after_their_time_to_live() {
    let jobs = Jobs::new();
    let ttl = [("IKIGAI_TOOLS_JOB_TTL", "1")];
    let pids = jobs.env.path("pids");
    let command = with_pids(&pids, "sleep 300");
    let running =
        jobs.call_with("bash", json!({"command": command, "run_in_background": true}), &ttl);
    id_of(&running);
    let ended =
        jobs.call_with("bash", json!({"command": "echo hi", "run_in_background": true}), &ttl);
    let ended_id = id_of(&ended);
    assert_gone_within(&pids_in(&pids, 2), PATIENCE);
    let deadline = Instant::now() + PATIENCE;
    loop {
        let listed = jobs.call_with("job_list", json!({}), &ttl);
        if listed == json!({"jobs": []}) {
            break;
        }
        assert!(Instant::now() < deadline, "{listed}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let gone = jobs.call_with("job_output", json!({"job_id": ended_id}), &ttl);
    assert_eq!(gone["error_code"], "JOB_NOT_FOUND", "{gone}");
    assert!(jobs.job_dirs().is_empty());
}

/// SIGKILL of a job's supervisor: its guardian kills the command's group,
/// and the job reads as ended by SIGKILL (never one nobody can stop, never
/// one without an exit status).
#[test]
fn jobs_a_supervisor_killed_outright_takes_its_command_and_reads_as_killed() {
    let jobs = Jobs::new();
    let pids = jobs.env.path("pids");
    let command = with_pids(&pids, "echo up; sleep 300");
    let first = jobs.call("bash", json!({"command": command, "run_in_background": true}));
    let id = id_of(&first);
    let pids = pids_in(&pids, 2);
    let dir = jobs.state.join("default").join(&id);
    let supervisor: i32 = std::fs::read_to_string(dir.join("pid")).unwrap().trim().parse().unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(supervisor),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    assert_gone_within(&pids, PATIENCE);
    let listed = jobs.call("job_list", json!({}));
    assert_eq!(listed["jobs"][0]["state"], "killed", "{listed}");
    let read = jobs.call("job_output", json!({"job_id": id}));
    assert_eq!(read, json!({"output": "", "running": false, "exit_code": 137}));
    assert!(jobs.job_dirs().is_empty());
}

/// What a command leaves running in the background does not hold up the
/// answer (as without jobs: `sleep 60 & echo done`), and stays running.
#[test]
fn jobs_a_background_process_of_a_command_does_not_hold_the_answer() {
    let jobs = Jobs::new();
    let pids = jobs.env.path("pids");
    let f = pids.display();
    let command = format!("sleep 300 & echo $! > {f}; echo done");
    let answer =
        jobs.call_with("bash", json!({"command": command}), &[("IKIGAI_TOOLS_YIELD", "20")]);
    assert_eq!(answer, json!({"output": "done", "exit_code": 0}));
    let pids = pids_in(&pids, 1);
    assert!(!is_gone(pids[0]));
    assert!(jobs.job_dirs().is_empty());
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pids[0]), nix::sys::signal::Signal::SIGKILL)
        .unwrap();
}

/// A job whose state someone removed can no longer be read or stopped:
/// its supervisor stops it.
#[test]
fn jobs_a_job_whose_state_is_removed_is_stopped() {
    let jobs = Jobs::new();
    let pids = jobs.env.path("pids");
    let first = jobs
        .call("bash", json!({"command": with_pids(&pids, "sleep 300"), "run_in_background": true}));
    let id = id_of(&first);
    let pids = pids_in(&pids, 2);
    std::fs::remove_dir_all(jobs.state.join("default").join(&id)).unwrap();
    assert_gone_within(&pids, PATIENCE);
}

/// Every answer of a job stays within the output limit, as every answer
/// does: bash's when it yields, job_output's, job_list's (the jobs that fit,
/// and how many more).
#[test]
fn jobs_answers_stay_within_the_output_limit() {
    let jobs = Jobs::new();
    let limit = [("IKIGAI_TOOLS_MAX_OUTPUT", "1024")];
    let command = "seq 1 2000; sleep 1.5; seq 1 5000";
    let ran = jobs.cmd("bash", &limit).stdin(json!({"command": command}).to_string()).run();
    assert!(ran.stdout.len() <= 1024, "{}", ran.stdout.len());
    let first = ran.json();
    let id = id_of(&first);
    let output = first["output"].as_str().unwrap();
    assert!(output.contains(" bytes omitted (lines "), "{first}");
    assert!(output.contains("), not kept: run the command again"), "{first}");
    assert!(first["output"].as_str().unwrap().ends_with(&note(&id)), "{first}");
    let deadline = Instant::now() + PATIENCE;
    let mut last_output = String::new();
    loop {
        let ran = jobs
            .cmd("job_output", &limit)
            .stdin(json!({"job_id": id, "wait": 5}).to_string())
            .run();
        assert!(ran.stdout.len() <= 1024, "{}", ran.stdout.len());
        let answer = ran.json();
        let output = answer["output"].as_str().unwrap();
        if !output.is_empty() {
            last_output = output.to_owned();
        }
        if answer["running"] == false {
            assert!(last_output.ends_with("4999\n5000\n"), "{last_output}");
            break;
        }
        assert!(Instant::now() < deadline, "{answer}");
    }
    for _ in 0..12 {
        jobs.call("bash", json!({"command": "sleep 300", "run_in_background": true}));
    }
    let ran = jobs.cmd("job_list", &limit).stdin("{}").run();
    assert!(ran.stdout.len() <= 1024, "{}", ran.stdout.len());
    let listed = ran.json();
    let shown = listed["jobs"].as_array().unwrap().len();
    assert!(shown > 0 && shown < 12, "{listed}");
    assert_eq!(listed["more"], 12 - shown as i64, "{listed}");
    for row in jobs.call("job_list", json!({}))["jobs"].as_array().unwrap() {
        jobs.call("job_kill", json!({"job_id": row["job_id"]}));
    }
}

/// The default state directory in the temporary directory was
/// `ikigai-tools-UID`, the very name of a confined command's private
/// temporary directory, which it may write: a confined command of one agent
/// could then plant files in another agent's jobs (or forge their status).
/// The state directory has a name of its own, which confined commands
/// cannot write.
#[test]
fn jobs_a_confined_command_cannot_touch_the_default_state_directory() {
    let env = Env::new();
    let tmp = env.beside("tmp");
    let work = env.work();
    let call = |tool: &str, agent: &str, roots: Option<&Path>, args: Value| -> Value {
        let mut cmd = env
            .cmd(tool)
            .env("IKIGAI_TOOLS_PROFILE", "full")
            .env("IKIGAI_TOOLS_YIELD", "1")
            .env("IKIGAI_AGENT_ID", agent)
            .env("TMPDIR", &tmp)
            .env("XDG_RUNTIME_DIR", "")
            .timeout(PATIENCE * 3);
        if let Some(roots) = roots {
            cmd = cmd.env("IKIGAI_TOOLS_ROOTS", roots);
        }
        let ran = cmd.stdin(args.to_string()).run();
        assert_eq!(ran.code, Some(0), "{tool} {args}: {}", ran.stderr);
        ran.json()
    };
    // Agent B's job, unconfined, in the default state directory.
    let job = call("bash", "b", None, json!({"command": "sleep 30", "run_in_background": true}));
    let id = id_of(&job);
    let job_dir = find_dir(&tmp, &id).expect("the job's directory beneath TMPDIR");
    // Agent A's confined command tries every directory beneath the
    // temporary directory it can see.
    let attack = format!(
        "find {} -type d 2>/dev/null | while read -r d; do touch \"$d/planted\" 2>/dev/null; done; echo tried",
        tmp.display()
    );
    let answer = call("bash", "a", Some(&work), json!({"command": attack}));
    assert_eq!(answer["output"], "tried", "{answer}");
    assert!(
        !job_dir.join("planted").exists(),
        "a confined command wrote into {}",
        job_dir.display()
    );
    assert!(!job_dir.parent().unwrap().join("planted").exists(), "the namespace was written");
    let killed = call("job_kill", "b", None, json!({"job_id": id}));
    assert!(killed.get("error").is_none(), "{killed}");
}

/// The directory named `name` beneath `dir`, at any depth.
fn find_dir(dir: &Path, name: &str) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() && !path.is_symlink() {
            if entry.file_name() == name {
                return Some(path);
            }
            if let Some(found) = find_dir(&path, name) {
                return Some(found);
            }
        }
    }
    None
}

// ---------------------------------------------------------------------------
// Jobs the sandbox cannot forge (breaks found by attack).

/// Makes a job directory by hand in the namespace directory `ns`, as
/// whoever can write the state directory could: its `pid` file names
/// `pid`, and its lock is held by the returned file (by this test
/// process, not by `pid`). Its id.
fn forge_job(ns: &Path, pid: u32) -> (String, nix::fcntl::Flock<std::fs::File>) {
    use std::os::unix::fs::DirBuilderExt;
    let id = format!("{:032x}", u128::from(pid) << 64 | 0xf0f0);
    let dir = ns.join(&id);
    std::fs::DirBuilder::new().mode(0o700).create(&dir).unwrap();
    let meta = json!({"command": "sleep 300", "started": 1, "keep": 65536});
    std::fs::write(dir.join("meta"), meta.to_string()).unwrap();
    for name in ["head", "ring", "count", "cursor"] {
        std::fs::write(dir.join(name), "").unwrap();
    }
    std::fs::write(dir.join("pid"), pid.to_string()).unwrap();
    let lock = std::fs::File::create(dir.join("lock")).unwrap();
    let held = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive).unwrap();
    (id, held)
}

/// A process of the test's own, outside every sandbox: what a forged job
/// names. Whether it still runs (it is reaped if not).
fn still_runs(child: &mut std::process::Child) -> bool {
    child.try_wait().unwrap().is_none()
}

/// A break found by attack: a job directory forged where the tools keep jobs, naming a
/// process outside (here one the test started) and with its lock held, is
/// never signalled: neither by `job_kill` nor when the MCP session whose
/// namespace holds it ends. Only a process proven the job's supervisor is.
#[test]
fn jobs_a_forged_job_naming_an_outside_pid_is_never_signalled() {
    let jobs = Jobs::new();
    let mut outside = std::process::Command::new("sleep").arg("300").spawn().unwrap();
    // The namespace exists once a job tool has looked.
    assert_eq!(jobs.call("job_list", json!({})), json!({"jobs": []}));
    let (id, _lock) = forge_job(&jobs.state.join("default"), outside.id());
    let listed = jobs.call("job_list", json!({}));
    assert_eq!(listed["jobs"][0]["state"], "running", "{listed}");
    let answer = jobs.call("job_kill", json!({"job_id": id}));
    assert!(still_runs(&mut outside), "job_kill signalled the outside process: {answer}");
    assert_eq!(answer, json!({"job_id": id, "running": true}));

    // The same in an MCP session's namespace, ended with the session.
    let env = &jobs.env;
    let state = jobs.state.to_str().unwrap();
    let mut session =
        Session::start_with_vars(env, &unconfined(), &[("IKIGAI_TOOLS_STATE_DIR", state)]);
    session.request(1, "initialize", crate::common::mcp::initialize_params("2025-06-18"));
    session
        .send_line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
    let pidfile = env.path("pids");
    let command = with_pids(&pidfile, "sleep 300");
    let real = session.call(2, "bash", json!({"command": command, "run_in_background": true}));
    let real_id = id_of(&real["result"]["structuredContent"]);
    let real_pids = pids_in(&pidfile, 2);
    let ns = find_dir(&jobs.state, &real_id).unwrap().parent().unwrap().to_path_buf();
    let (_, _lock) = forge_job(&ns, outside.id());
    session.end();
    assert_gone_within(&real_pids, PATIENCE);
    assert!(still_runs(&mut outside), "the session's end signalled the outside process");
    let _ = outside.kill();
    let _ = outside.wait();
}

/// A break found by attack: a state directory a confined command of the call may write —
/// beneath one of its roots (named, or the default in a `TMPDIR` that is a
/// root), or beneath the sandbox's private temporary directory — is refused
/// for every job tool and for bash calls that would make a job, naming the
/// directory, the root and what to set.
#[test]
fn jobs_a_state_dir_beneath_a_root_is_refused() {
    let jobs = Jobs::new();
    let work = jobs.env.work();
    let work_real = work.canonicalize().unwrap();
    let state = work.join("state");
    let roots = [("IKIGAI_TOOLS_ROOTS", work.to_str().unwrap())];
    let refusal = |dir: &Path, place: &str| {
        json!({
            "error": format!(
                "Permission denied: job state directory {} {place}, where a confined command may \
                 write (and forge or change jobs); set IKIGAI_TOOLS_STATE_DIR (or XDG_RUNTIME_DIR) \
                 to a directory outside the allowed roots and the sandbox's temporary directory",
                dir.display()
            ),
            "error_code": "PERMISSION_DENIED"
        })
    };
    let beneath_work =
        refusal(&state, &format!("lies beneath allowed root {}", work_real.display()));
    let vars = [roots[0], ("IKIGAI_TOOLS_STATE_DIR", state.to_str().unwrap())];
    for (tool, args) in [
        ("bash", json!({"command": "echo hi", "run_in_background": true})),
        ("bash", json!({"command": "echo hi"})),
        ("job_list", json!({})),
        ("job_output", json!({"job_id": "0".repeat(32)})),
        ("job_kill", json!({"job_id": "0".repeat(32)})),
    ] {
        assert_eq!(jobs.call_with(tool, args.clone(), &vars), beneath_work, "{tool} {args}");
    }
    // Without a yield a confined bash call makes no job: it runs.
    let answer = jobs.call_with(
        "bash",
        json!({"command": "echo hi"}),
        &[vars[0], vars[1], ("IKIGAI_TOOLS_YIELD", "0")],
    );
    assert_eq!(answer, json!({"output": "hi", "exit_code": 0}));

    // The default, in a TMPDIR that is a root, with no runtime directory.
    let tmp = jobs.env.beside("tmp");
    let tmp_real = tmp.canonicalize().unwrap();
    let both = format!("{}:{}", work.display(), tmp.display());
    let vars = [
        ("IKIGAI_TOOLS_ROOTS", both.as_str()),
        ("IKIGAI_TOOLS_STATE_DIR", ""),
        ("XDG_RUNTIME_DIR", ""),
        ("TMPDIR", tmp.to_str().unwrap()),
    ];
    let uid = nix::unistd::Uid::effective();
    let default = tmp.join(format!("ikigai-tools-jobs-{uid}"));
    let beneath_tmp =
        refusal(&default, &format!("lies beneath allowed root {}", tmp_real.display()));
    let answer =
        jobs.call_with("bash", json!({"command": "echo hi", "run_in_background": true}), &vars);
    assert_eq!(answer, beneath_tmp);
    assert_eq!(jobs.call_with("job_list", json!({}), &vars), beneath_tmp);

    // Beneath the private temporary directory: refused, confined or not.
    let private = tmp.join(format!("ikigai-tools-{uid}"));
    let inside = private.join("state");
    let vars =
        [("IKIGAI_TOOLS_STATE_DIR", inside.to_str().unwrap()), ("TMPDIR", tmp.to_str().unwrap())];
    let answer = jobs.call_with(
        "bash",
        json!({"command": "echo made"}),
        &[vars[0], vars[1], ("IKIGAI_TOOLS_YIELD", "0"), roots[0]],
    );
    assert_eq!(answer, json!({"output": "made", "exit_code": 0}), "the private directory made");
    let beneath_private = refusal(
        &inside,
        &format!("lies beneath the sandbox's temporary directory {}", private.display()),
    );
    assert_eq!(jobs.call_with("job_list", json!({}), &vars), beneath_private);
    assert_eq!(
        jobs.call_with("bash", json!({"command": "echo hi", "run_in_background": true}), &vars),
        beneath_private
    );

    // Outside them all (the test's own state directory): jobs work.
    let answer =
        jobs.call_with("bash", json!({"command": "echo hi", "run_in_background": true}), &roots);
    let (output, _) = jobs.read_to_end(&id_of(&answer), &roots);
    assert_eq!(output_so_far(&answer) + &output, "hi\n");
}

/// A break found by attack: with `TMPDIR` set empty, Rust's temporary directory is "",
/// and the default state directory was made relative: in the working
/// directory, beneath a root. Never relative: an empty or relative
/// `TMPDIR` or `XDG_RUNTIME_DIR` counts as unset, and a relative
/// `IKIGAI_TOOLS_STATE_DIR` is refused.
#[test]
fn jobs_an_empty_tmpdir_never_makes_a_relative_state_dir() {
    let jobs = Jobs::new();
    let work = jobs.env.work();
    for (tmpdir, runtime) in [("", ""), ("relative", "run")] {
        let vars = [
            ("IKIGAI_TOOLS_ROOTS", work.to_str().unwrap()),
            ("IKIGAI_TOOLS_STATE_DIR", ""),
            ("XDG_RUNTIME_DIR", runtime),
            ("TMPDIR", tmpdir),
            ("IKIGAI_AGENT_ID", "an-empty-tmpdir-test"),
        ];
        let answer =
            jobs.call_with("bash", json!({"command": "echo hi", "run_in_background": true}), &vars);
        let id = id_of(&answer);
        let made: Vec<_> =
            std::fs::read_dir(&work).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(made.is_empty(), "made in the working directory: {made:?}");
        let uid = nix::unistd::Uid::effective();
        let under_tmp = std::fs::read_dir("/tmp")
            .unwrap()
            .flatten()
            .filter(|e| {
                e.file_name().to_string_lossy().starts_with(&format!("ikigai-tools-jobs-{uid}"))
            })
            .any(|e| find_dir(&e.path(), &id).is_some());
        assert!(under_tmp, "job {id} not under /tmp");
        let (output, _) = jobs.read_to_end(&id, &vars);
        assert_eq!(output_so_far(&answer) + &output, "hi\n");
    }
    let answer = jobs.call_with("job_list", json!({}), &[("IKIGAI_TOOLS_STATE_DIR", "state")]);
    assert_eq!(
        answer,
        json!({
            "error": "Permission denied: job state directory state: IKIGAI_TOOLS_STATE_DIR must be \
                      an absolute path (a relative one names another directory in each working \
                      directory); set it to one",
            "error_code": "PERMISSION_DENIED"
        })
    );
    assert!(!work.join("state").exists());
}

/// A break found by attack: another user who makes `ikigai-tools-UID` or
/// `ikigai-tools-jobs-UID` first in a shared temporary directory stopped
/// every confined and every full-profile bash call of the user (refused as
/// not the user's, rightly). Someone else's directory is still never used,
/// but the user gets one of their own beside it, found again by later calls.
#[test]
fn jobs_a_squatted_private_dir_name_does_not_stop_bash() {
    if !is_root() {
        return skipped("needs root to make directories another user owns");
    }
    let env = Env::new();
    for tool in ["bash", "job_output"] {
        env.link(tool);
    }
    let tmp = env.beside("tmp");
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777)).unwrap();
    // Root squats nobody's names.
    for name in ["ikigai-tools-65534", "ikigai-tools-jobs-65534"] {
        std::fs::create_dir(tmp.join(name)).unwrap();
        std::fs::set_permissions(tmp.join(name), std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let run = |tool: &str, args: Value, vars: &[(&str, &str)]| -> Value {
        let mut call = env
            .cmd(tool)
            .as_nobody()
            .env("TMPDIR", &tmp)
            .env("XDG_RUNTIME_DIR", "")
            .env("IKIGAI_TOOLS_STATE_DIR", "");
        for (k, v) in vars {
            call = call.env(k, v);
        }
        let ran = call.stdin(args.to_string()).run();
        assert_eq!(ran.code, Some(0), "{}", ran.stderr);
        ran.json()
    };
    let work = env.work();
    let confined = [("IKIGAI_TOOLS_ROOTS", work.to_str().unwrap())];
    let first = run("bash", json!({"command": "echo \"$TMPDIR\""}), &confined);
    let own = first["output"].as_str().unwrap_or_else(|| panic!("{first}")).to_owned();
    let prefix = format!("{}/ikigai-tools-65534.", tmp.display());
    assert!(own.starts_with(&prefix), "{first}");
    let again = run("bash", json!({"command": "echo \"$TMPDIR\""}), &confined);
    assert_eq!(again, json!({"output": own, "exit_code": 0}), "found again");
    // The full profile's job path, unconfined, with its default state
    // directory in the same place.
    let full = [("IKIGAI_TOOLS_PROFILE", "full"), ("IKIGAI_TOOLS_YIELD", "1")];
    let answer = run("bash", json!({"command": "echo hi"}), &full);
    assert_eq!(answer, json!({"output": "hi", "exit_code": 0}));
    let answer = run("bash", json!({"command": "sleep 1.5; echo later"}), &full);
    let id = id_of(&answer);
    let mut output = output_so_far(&answer);
    let last = loop {
        let read = run("job_output", json!({"job_id": id, "wait": 10}), &full);
        output.push_str(read["output"].as_str().unwrap_or_else(|| panic!("{read}")));
        if read["running"] == false {
            break read;
        }
    };
    assert_eq!((output.as_str(), &last["exit_code"]), ("later\n", &json!(0)), "{last}");
    let owned_by_nobody = |name: &str| {
        std::fs::read_dir(&tmp).unwrap().flatten().any(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with(name) && n.len() == name.len() + 6 && {
                use std::os::unix::fs::MetadataExt;
                e.metadata().unwrap().uid() == 65534
            }
        })
    };
    assert!(owned_by_nobody("ikigai-tools-jobs-65534."));
    // The squatter's directories: untouched, unused.
    for name in ["ikigai-tools-65534", "ikigai-tools-jobs-65534"] {
        assert_eq!(std::fs::read_dir(tmp.join(name)).unwrap().count(), 0, "{name}");
    }
}

/// A break found by attack: `timeout: 9223372036854775807` overflowed the
/// supervisor's deadline: it panicked, and the call answered exit_code 137
/// with the output lost. Any timeout past a year counts as a year.
#[test]
fn jobs_a_huge_timeout_answers_instead_of_panicking() {
    let jobs = Jobs::new();
    for timeout in [json!(i64::MAX), json!(u64::MAX), json!(1e300), json!(31_536_001)] {
        // Still running when the supervisor first looks at its deadline.
        let answer =
            jobs.call("bash", json!({"command": "sleep 0.3; echo hi", "timeout": timeout}));
        assert_eq!(answer, json!({"output": "hi", "exit_code": 0}), "timeout {timeout}");
    }
    let answer = jobs.call("bash", json!({"command": "echo hi", "timeout": 0.5}));
    assert_eq!(
        answer,
        json!({"error": "parameter timeout must be an integer", "error_code": "INVALID_ARG"})
    );
    // In the background too, where the deadline is watched for longer.
    let answer = jobs.call(
        "bash",
        json!({"command": "sleep 1; echo late", "timeout": i64::MAX, "run_in_background": true}),
    );
    let (output, last) = jobs.read_to_end(&id_of(&answer), &[]);
    assert_eq!(
        (output_so_far(&answer) + &output, &last["exit_code"]),
        ("late\n".to_owned(), &json!(0))
    );
}

/// A break found by attack: a 30 MB background command left a 30 MB `meta` in the
/// state directory for the time to live. A job keeps the first 4 KiB of
/// its command (job_list shows 200 bytes).
#[test]
fn jobs_a_huge_background_command_keeps_a_bounded_meta() {
    let jobs = Jobs::new();
    // Larger than the kernel passes as one argument: it fails to start, as
    // the 30 MB one did, and its job stays until read.
    let command = format!("echo {}", "x".repeat(1 << 20));
    let answer = jobs.call("bash", json!({"command": command, "run_in_background": true}));
    let id = id_of(&answer);
    let meta = std::fs::metadata(jobs.state.join("default").join(&id).join("meta")).unwrap().len();
    assert!(meta <= 4096 + 64, "meta is {meta} bytes");
    let listed = jobs.call("job_list", json!({}));
    assert_eq!(listed["jobs"][0]["command"], format!("{}…", &command[..200]), "{listed}");
    let (_, last) = jobs.read_to_end(&id, &[]);
    assert_eq!(last["exit_code"], 127, "{last}");
}
