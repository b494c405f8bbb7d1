//! Timed runs against /bin/sh: stdin written or held, both streams
//! captured within the limit, a missing program, a death by signal.

use super::*;

fn sh(script: &str, input: Input, timeout: Duration) -> TimedRun {
    TimedRun {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), script.into()],
        input,
        timeout,
        capture_limit: Some(1024),
    }
}

#[test]
fn stdin_is_written_then_closed_and_both_streams_are_captured() {
    let done =
        run(sh("cat; echo oops >&2; exit 3", Input::Bytes(b"hi".to_vec()), Duration::from_secs(5)));
    assert!(matches!(done.status, Status::Exited(3)), "{:?}", done.status);
    assert_eq!(done.stdout.bytes, b"hi");
    assert_eq!(done.stderr.bytes, b"oops\n");
}

#[test]
fn held_stdin_never_ends() {
    let start = Instant::now();
    let done = run(sh("cat", Input::HeldOpen, Duration::from_millis(300)));
    assert!(matches!(done.status, Status::TimedOut), "{:?}", done.status);
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn input_larger_than_a_pipe_is_written_whole() {
    let input = vec![b'x'; 1 << 20];
    let done = run(TimedRun {
        capture_limit: None,
        ..sh("wc -c", Input::Bytes(input), Duration::from_secs(10))
    });
    assert_eq!(done.stdout.text().trim(), "1048576");
}

#[test]
fn output_past_the_limit_keeps_head_and_tail() {
    let done = run(sh("head -c 5000 /dev/zero | tr '\\0' a", Input::Null, Duration::from_secs(5)));
    assert_eq!(done.stdout.omitted, 5000 - 1024);
}

#[test]
fn a_missing_program_is_not_started() {
    let done = run(TimedRun {
        program: "/nonexistent/tool".into(),
        ..sh("", Input::Null, Duration::from_secs(1))
    });
    assert!(matches!(done.status, Status::NotStarted(_)));
}

#[test]
fn a_signal_is_reported_as_such() {
    let done = run(sh("kill -SEGV $$", Input::Null, Duration::from_secs(5)));
    assert!(matches!(done.status, Status::Signaled(11)), "{:?}", done.status);
}
