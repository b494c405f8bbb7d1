//! Talking to a job (docs/TOOLS.md, "Talking to a job"; issue 26): bash's
//! `tty`, stdin kept open for a job, and job_write, as ikigai uses them
//! (`ikigai-tools call --timeout 30`, its limit). Each test has a state
//! directory of its own.

use crate::common::procs::assert_gone_within;
use crate::common::*;
use crate::jobs::pids_in;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Long enough for anything here on a loaded machine.
const PATIENCE: Duration = Duration::from_secs(20);

/// A test's world: the fixture tree and a state directory the tools make.
struct Talk {
    env: Env,
    state: PathBuf,
}

impl Talk {
    fn new() -> Talk {
        let env = Env::new();
        let state = env.beside("talk-state").join("state");
        for tool in ["job_write", "ikigai-tools"] {
            env.link(tool);
        }
        Talk { env, state }
    }

    /// `ikigai-tools call --timeout 30 TOOL ARGS` in the full profile as
    /// `agent`; the tool's answer (the host's `result`).
    fn call_as(&self, agent: &str, tool: &str, args: Value) -> Value {
        self.call_with(&[("IKIGAI_AGENT_ID", agent)], tool, args)
    }

    /// As [`Talk::call`], with `vars` on top.
    fn call_with(&self, vars: &[(&str, &str)], tool: &str, args: Value) -> Value {
        let mut call = self
            .env
            .cmd("ikigai-tools")
            .env("IKIGAI_TOOLS_PROFILE", "full")
            .env("IKIGAI_TOOLS_STATE_DIR", &self.state)
            .env("IKIGAI_AGENT_ID", "tests");
        for (k, v) in vars {
            call = call.env(k, v);
        }
        let ran = call
            .arg("call")
            .arg("--timeout")
            .arg("30")
            .arg(tool)
            .arg(args.to_string())
            .timeout(PATIENCE * 3)
            .run();
        assert_eq!(ran.code, Some(0), "{tool} {args}: {}", ran.stderr);
        let answer = ran.json();
        assert_eq!(answer["tool_success"], true, "{answer}");
        answer["result"].clone()
    }

    fn call(&self, tool: &str, args: Value) -> Value {
        self.call_as("tests", tool, args)
    }

    /// bash with `args`; the job's id.
    fn start(&self, args: Value) -> (String, Value) {
        let first = self.call("bash", args);
        let id = first["job_id"].as_str().unwrap_or_else(|| panic!("no job_id: {first}"));
        (id.to_owned(), first)
    }

    fn write(&self, id: &str, input: &str) -> Value {
        self.call("job_write", json!({"job_id": id, "input": input}))
    }

    /// job_output until what was read since this call contains `wanted`
    /// or the job ended; all of it, and the last answer.
    fn read_until(&self, id: &str, wanted: &str) -> (String, Value) {
        self.read_on(id, String::new(), wanted)
    }

    /// As [`Talk::read_until`], `output` read already.
    fn read_on(&self, id: &str, mut output: String, wanted: &str) -> (String, Value) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if output.contains(wanted) {
                return (output, json!({"running": true}));
            }
            let answer = self.call("job_output", json!({"job_id": id, "wait": 2}));
            output.push_str(answer["output"].as_str().unwrap_or_else(|| panic!("{answer}")));
            if output.contains(wanted) || answer["running"] == false {
                return (output, answer);
            }
            assert!(Instant::now() < deadline, "no {wanted:?} in {output:?}");
        }
    }

    /// The directory of job `id`, in whichever namespace it is.
    fn job_dir(&self, id: &str) -> PathBuf {
        let dirs: Vec<PathBuf> = std::fs::read_dir(&self.state)
            .unwrap()
            .map(|ns| ns.unwrap().path().join(id))
            .filter(|dir| dir.exists())
            .collect();
        assert_eq!(dirs.len(), 1, "{dirs:?}");
        dirs[0].clone()
    }

    /// job_output until the job has ended.
    fn read_to_end(&self, id: &str) -> (String, Value) {
        self.read_until(id, "\u{0}never printed")
    }
}

/// The note a `tty` job's first answer ends with.
fn tty_note(id: &str) -> String {
    format!(
        "\n[running as job {id} on a terminal: job_write with this job_id types input (\\n for \
         Enter, \\u0003 for Ctrl-C), job_output reads what it shows next; job_kill stops it]"
    )
}

/// The bytes a job_write answer says were taken, all of them: no note. A
/// command that ends on what was written may have ended by the answer
/// (`"running":false` and its `exit_code`).
fn taken(answer: &Value) -> u64 {
    let mut rest = answer.as_object().unwrap_or_else(|| panic!("{answer}")).clone();
    let written = rest.remove("written").and_then(|n| n.as_u64());
    let running = rest.remove("running");
    let ended = running == Some(json!(false)) && rest.remove("exit_code").is_some();
    assert!(running == Some(json!(true)) || ended, "{answer}");
    assert!(rest.is_empty(), "{answer}");
    written.unwrap_or_else(|| panic!("{answer}"))
}

fn installed(program: &str) -> bool {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn talk_a_repl_on_a_tty_answers_what_is_written_to_it() {
    if !installed("python3") {
        println!("skipped: no python3 here");
        return;
    }
    let talk = Talk::new();
    let (id, first) = talk.start(json!({"command": "python3 -i -q", "tty": true}));
    let so_far = first["output"].as_str().unwrap().replace(&tty_note(&id), "");
    talk.read_on(&id, so_far, ">>> ");
    assert_eq!(taken(&talk.write(&id, "1+1\n")), 4);
    let (output, _) = talk.read_until(&id, "2\n>>> ");
    // The terminal echoes what was typed, then the REPL answers.
    assert_eq!(output, "1+1\n2\n>>> ");
    talk.call("job_kill", json!({"job_id": id}));
}

#[test]
fn talk_a_tty_prompt_is_answered_and_the_answer_not_echoed() {
    let talk = Talk::new();
    let command = "printf 'Password: '; stty -echo; read pw; stty echo; echo; echo \"got $pw\"";
    let (id, first) = talk.start(json!({"command": command, "tty": true}));
    let so_far = first["output"].as_str().unwrap().replace(&tty_note(&id), "");
    // The prompt, in the first answer unless the machine was too busy.
    assert_eq!(talk.read_on(&id, so_far, "Password: ").0, "Password: ");
    assert_eq!(taken(&talk.write(&id, "secret\n")), 7);
    let (output, last) = talk.read_to_end(&id);
    assert_eq!((output.as_str(), &last["exit_code"]), ("\ngot secret\n", &json!(0)));
}

#[test]
fn talk_a_first_tty_answer_snapshot() {
    let talk = Talk::new();
    let (id, first) = talk.start(json!({"command": "printf 'ready> '; read x", "tty": true}));
    let shown: Value = serde_json::from_str(&first.to_string().replace(&id, "ID")).unwrap();
    snap!("tty_first_answer", shown);
    talk.call("job_kill", json!({"job_id": id}));
}

#[test]
fn talk_less_on_a_tty_is_quit_with_q() {
    if !installed("less") {
        println!("skipped: less is not installed (.ci/run installs it)");
        return;
    }
    let talk = Talk::new();
    let (id, first) = talk.start(json!({"command": "seq 100 | less", "tty": true}));
    let so_far = first["output"].as_str().unwrap().replace(&tty_note(&id), "");
    let (shown, _) = talk.read_on(&id, so_far, "23\n");
    assert!(shown.contains("1\n2\n3\n"), "a page of it: {shown:?}");
    assert!(!shown.contains("\u{1b}"), "no escapes: {shown:?}");
    assert_eq!(taken(&talk.write(&id, "q")), 1);
    let (_, last) = talk.read_to_end(&id);
    assert_eq!(last["exit_code"], 0, "{last}");
}

#[test]
fn talk_vi_on_a_tty_is_quit_with_colon_q() {
    if !installed("vi") {
        println!("skipped: vi is not installed");
        return;
    }
    let talk = Talk::new();
    let file = talk.env.path("notes.txt");
    let command = format!("vi {}", file.display());
    let (id, _) = talk.start(json!({"command": command, "tty": true}));
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(taken(&talk.write(&id, "ihello\u{1b}:wq\n")), 11);
    let (_, last) = talk.read_to_end(&id);
    assert_eq!(last["exit_code"], 0, "{last}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "hello\n");
}

#[test]
fn talk_ctrl_c_written_to_a_tty_interrupts_its_command() {
    let talk = Talk::new();
    let (id, _) = talk.start(json!({"command": "sleep 100", "tty": true}));
    assert_eq!(taken(&talk.write(&id, "\u{3}")), 1);
    let (output, last) = talk.read_to_end(&id);
    assert_eq!((output.as_str(), &last["exit_code"]), ("^C", &json!(130)));
}

#[test]
fn talk_tty_escapes_are_removed_from_what_a_command_prints() {
    let talk = Talk::new();
    let answer =
        talk.call("bash", json!({"command": "printf '\\033[31mred\\033[0m'", "tty": true}));
    assert_eq!(answer, json!({"output": "red", "exit_code": 0}));
}

#[test]
fn talk_a_tty_command_has_a_terminal_of_80_by_24_and_term_xterm() {
    let talk = Talk::new();
    let answer =
        talk.call("bash", json!({"command": "stty size; echo $TERM; tty -s", "tty": true}));
    assert_eq!(answer, json!({"output": "24 80\nxterm", "exit_code": 0}));
}

#[test]
fn talk_close_stdin_makes_cat_end() {
    let talk = Talk::new();
    let (id, _) =
        talk.start(json!({"command": "cat; echo end; sleep 30", "run_in_background": true}));
    let wrote = talk.call("job_write", json!({"job_id": id, "input": "hi\n", "close_stdin": true}));
    assert_eq!(wrote, json!({"written": 3, "running": true, "stdin_closed": true}));
    talk.read_until(&id, "hi\nend\n");
    // Closed, it takes no more.
    let again = talk.write(&id, "more");
    assert_eq!(
        again,
        json!({"error": format!("job {id} does not read input: its stdin was \
            closed (close_stdin)"), "error_code": "INVALID_ARG"})
    );
    talk.call("job_kill", json!({"job_id": id}));
}

#[test]
fn talk_a_foreground_job_that_yielded_reads_no_input() {
    let talk = Talk::new();
    // ikigai-tools call's own yield is 20 s: a shorter one through the link.
    let ran = talk
        .env
        .cmd("ikigai-tools")
        .env("IKIGAI_TOOLS_PROFILE", "full")
        .env("IKIGAI_TOOLS_STATE_DIR", &talk.state)
        .env("IKIGAI_AGENT_ID", "tests")
        .env("IKIGAI_TOOLS_YIELD", "1")
        .arg("call")
        .arg("--timeout")
        .arg("30")
        .arg("bash")
        .arg(json!({"command": "sleep 30"}).to_string())
        .run();
    let id = ran.json()["result"]["job_id"].as_str().unwrap().to_owned();
    assert_eq!(
        talk.write(&id, "x"),
        json!({"error": format!("job {id} does not read input: start it with \
            run_in_background or tty"), "error_code": "INVALID_ARG"})
    );
    talk.call("job_kill", json!({"job_id": id}));
}

#[test]
fn talk_an_ended_job_reads_no_input() {
    let talk = Talk::new();
    let (id, _) = talk.start(json!({"command": "exit 3", "run_in_background": true}));
    // Ended (its first answer may have come before), not read yet.
    let deadline = Instant::now() + PATIENCE;
    while talk.call("job_list", json!({}))["jobs"][0]["state"] == "running" {
        assert!(Instant::now() < deadline, "still running");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        talk.write(&id, "x"),
        json!({"error": format!("job {id} has ended (exit_code 3): nothing \
            reads its input; job_output reads what it printed"), "error_code": "INVALID_ARG"})
    );
}

#[test]
fn talk_a_write_to_another_agents_job_is_job_not_found() {
    let talk = Talk::new();
    let (id, _) = talk.start(json!({"command": "cat", "run_in_background": true}));
    let theirs = talk.call_as("another", "job_write", json!({"job_id": id, "input": "x"}));
    assert_eq!(
        theirs,
        json!({"error": format!("Job not found: {id} (no such job of this agent or session: it \
            ended and was read, expired, or never was; job_list shows the jobs)"),
            "error_code": "JOB_NOT_FOUND"})
    );
    talk.call("job_kill", json!({"job_id": id}));
}

#[test]
fn talk_a_huge_write_to_a_job_that_does_not_read_returns_within_its_bound() {
    let talk = Talk::new();
    let (id, _) = talk.start(json!({"command": "sleep 60", "run_in_background": true}));
    let size = 4 * 1024 * 1024;
    let args = json!({"job_id": id, "input": "x".repeat(size)}).to_string();
    let started = Instant::now();
    let ran = talk
        .env
        .cmd("job_write")
        .env("IKIGAI_TOOLS_PROFILE", "full")
        .env("IKIGAI_TOOLS_STATE_DIR", &talk.state)
        .env("IKIGAI_AGENT_ID", "tests")
        .stdin(args)
        .run();
    let took = started.elapsed();
    let answer = ran.json();
    // The bound is 2 s; the command would never read (sleep 60): anything
    // well under a minute shows the call did not wait for it.
    assert!(took < Duration::from_secs(20), "{took:?}: {answer}");
    let written = answer["written"].as_u64().unwrap_or_else(|| panic!("{answer}"));
    assert!(written > 0 && written < size as u64, "{answer}");
    let note = format!(
        "the command took {written} of {size} bytes and is not reading: job_output shows what \
         it waits for; job_write the rest later"
    );
    assert_eq!(answer, json!({"written": written, "running": true, "note": note}));
    talk.call("job_kill", json!({"job_id": id}));
}

#[test]
fn talk_a_tty_job_killed_leaves_no_process() {
    let talk = Talk::new();
    let file = talk.env.path("pids");
    let f = file.display();
    let command = format!("sleep 300 & echo $! >> {f}; echo $$ >> {f}; cat");
    let (id, _) = talk.start(json!({"command": command, "tty": true}));
    let pids = pids_in(&file, 2);
    let killed = talk.call("job_kill", json!({"job_id": id}));
    assert_eq!(killed, json!({"job_id": id, "running": false, "exit_code": 143}));
    assert_gone_within(&pids, PATIENCE);
}

/// The FIFO job_write writes through is out of a confined command's reach:
/// it lies in the state directory, which Landlock lets it read, never
/// open for writing, so it cannot type into another job.
#[test]
fn talk_a_confined_command_cannot_write_to_a_jobs_input() {
    let talk = Talk::new();
    let (id, _) = talk.start(json!({"command": "cat; sleep 30", "run_in_background": true}));
    let fifo = talk.job_dir(&id).join("input");
    let tmp = talk.env.beside("tmp");
    let work = talk.env.work();
    let vars = [("IKIGAI_TOOLS_ROOTS", work.to_str().unwrap()), ("TMPDIR", tmp.to_str().unwrap())];
    let forged = format!("printf 'd\\001\\000X' > {}", fifo.display());
    let answer = talk.call_with(&vars, "bash", json!({"command": forged}));
    assert_eq!(answer["exit_code"], 2, "{answer}");
    let wrote = talk.call("job_write", json!({"job_id": id, "input": "ok\n", "close_stdin": true}));
    assert_eq!(wrote, json!({"written": 3, "running": true, "stdin_closed": true}));
    let (output, _) = talk.read_until(&id, "ok\n");
    assert_eq!(output, "ok\n", "only what job_write wrote");
    talk.call("job_kill", json!({"job_id": id}));
}

/// A tty job's supervisor SIGKILLed: its guardian kills the command's
/// group as for any job, and the job then reads no input.
#[test]
fn talk_a_tty_jobs_supervisor_killed_outright_takes_its_command() {
    let talk = Talk::new();
    let file = talk.env.path("pids");
    let f = file.display();
    let command = format!("sleep 300 & echo $! >> {f}; echo $$ >> {f}; cat");
    let (id, _) = talk.start(json!({"command": command, "tty": true}));
    let pids = pids_in(&file, 2);
    let pid = std::fs::read_to_string(talk.job_dir(&id).join("pid")).unwrap();
    let supervisor = nix::unistd::Pid::from_raw(pid.trim().parse().unwrap());
    nix::sys::signal::kill(supervisor, nix::sys::signal::Signal::SIGKILL).unwrap();
    assert_gone_within(&pids, PATIENCE);
    assert_eq!(
        talk.write(&id, "x"),
        json!({"error": format!("job {id} has ended (exit_code 137): nothing reads its input; \
            job_output reads what it printed"), "error_code": "INVALID_ARG"})
    );
}
