"""`ikigai-tools mcp` driven by the official MCP Python SDK, in both of its
modes: `legacy` (the initialize handshake) and `auto` (probes the stateless
revision's `server/discover` first, falls back to initialize).

Run through tests/mcp/run.sh, which sets IKIGAI_TOOLS_BIN to the binary.
"""

import base64
import hashlib
import json
import os
import re
import struct
import subprocess
import tempfile
import time
import zlib

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.types import ListRootsResult, Root

BIN = os.environ.get("IKIGAI_TOOLS_BIN", "ikigai-tools")
MODES = ["legacy", "auto"]
TOOLS = ["bash", "file_read", "file_write", "file_edit", "glob", "grep"]
# The full profile's own tools (docs/TOOLS.md, "Jobs", "apply_patch", "web_fetch", "web_search"; docs/CONFINEMENT.md).
JOB_TOOLS = ["job_output", "job_kill", "job_list", "job_write", "list_allowed_directories", "apply_patch", "web_fetch", "web_search"]
HANDSHAKE_REVISIONS = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

# ping is deprecated by the stateless revision; the legacy tests still use it.
pytestmark = pytest.mark.filterwarnings("ignore:ping is removed")


def server(env=None, cwd=None, args=()):
    """`ikigai-tools mcp ARGS`: without --root or --unconfined, every call
    is refused unless the client names roots."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    full_env.pop("IKIGAI_TOOLS_ROOTS", None)
    return StdioServerParameters(command=BIN, args=["mcp", *args], env=full_env, cwd=cwd)


def session(mode, env=None, cwd=None, args=()):
    """A client of a server serving the whole machine, on purpose."""
    return Client(server(env, cwd, ["--unconfined", *args]), mode=mode, read_timeout_seconds=30)


def run(coroutine_fn, *args):
    return anyio.run(coroutine_fn, *args)


def command_line(tool, args, env=None, cwd=None):
    """The command line's answer for the same call (ikigai dialect), in the
    profile the server serves by default: full."""
    full_env = dict(os.environ)
    full_env["IKIGAI_TOOLS_PROFILE"] = "full"
    full_env.update(env or {})
    done = subprocess.run(
        [BIN, tool], input=json.dumps(args).encode(), capture_output=True, env=full_env, cwd=cwd, check=True
    )
    return json.loads(done.stdout)


def text_of(result):
    assert len(result.content) == 1
    assert result.content[0].type == "text"
    return result.content[0].text


def pid_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


async def wait_gone(pid, within=5.0):
    # Async: the client writes notifications/cancelled from its event loop.
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        await anyio.sleep(0.05)
    return False


@pytest.fixture
def work():
    with tempfile.TemporaryDirectory(prefix="ikigai-mcp-test") as d:
        yield d


# --- 1. lifecycle ----------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_connects_and_names_itself(mode):
    async def go():
        async with session(mode) as c:
            if mode == "legacy":
                assert c.protocol_version in HANDSHAKE_REVISIONS
                assert c.server_info.name == "ikigai-tools"
                await c.send_ping()
            else:
                # auto: the server answers server/discover, so the client
                # adopts the stateless revision.
                assert c.protocol_version == "2026-07-28"
            assert c.server_capabilities.tools is not None

    run(go)


# --- 2. tools/list ---------------------------------------------------------


def schema_of(name, profile):
    env = dict(os.environ, IKIGAI_TOOLS_PROFILE=profile)
    done = subprocess.run([BIN, name, "--schema"], capture_output=True, check=True, env=env)
    return json.loads(done.stdout)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("profile", ["full", "seed"])
def test_lists_the_six_tools_with_schemas_titles_and_hints(mode, profile):
    """The full profile by default; `--profile seed` lists exactly the seed schemas."""
    args = () if profile == "full" else ("--profile", "seed")

    async def go():
        async with session(mode, args=args) as c:
            return (await c.list_tools()).tools

    tools = {t.name: t for t in run(go)}
    assert sorted(tools) == sorted(TOOLS + (JOB_TOOLS if profile == "full" else []))
    for name, tool in tools.items():
        schema = schema_of(name, profile)
        assert tool.description == schema["description"]
        assert tool.input_schema == schema["parameters"]
        assert tool.title
        read_only = name in ("file_read", "glob", "grep", "job_output", "job_list", "list_allowed_directories",
                             "web_fetch", "web_search")
        assert tool.annotations.read_only_hint is read_only
        if not read_only:
            assert tool.annotations.destructive_hint is True
        # What job_write types, the job's command runs, as bash's does; the
        # web tools read the web. MCP's default for an unsaid openWorldHint
        # is true.
        if name in ("bash", "job_write", "web_fetch", "web_search"):
            assert tool.annotations.open_world_hint in (None, True)
        else:
            assert tool.annotations.open_world_hint is False


# --- 3. tools/call: the command line's answer --------------------------------


def calls_for(work):
    """One call per tool, run in `work`, in an order where each finds what it needs."""
    return [
        ("file_write", {"file_path": f"{work}/a.txt", "content": 'one "quoted"\ntwo\tthree\n'}),
        ("file_read", {"file_path": f"{work}/a.txt"}),
        ("file_read", {"file_path": f"{work}/a.txt", "offset": 2, "limit": 1}),
        ("file_edit", {"file_path": f"{work}/a.txt", "old_string": "two", "new_string": "2"}),
        ("glob", {"pattern": "*.txt", "path": work}),
        ("grep", {"pattern": "quoted", "path": work}),
        ("bash", {"command": "printf 'x\\ny\\n'; exit 3"}),
    ]


@pytest.mark.parametrize("mode", MODES)
def test_calls_answer_as_the_command_line_does(mode, work):
    # The same calls in two fresh directories: one through the server, one
    # through the command line.
    with tempfile.TemporaryDirectory(prefix="ikigai-mcp-cli") as cli_work:

        async def go():
            async with session(mode) as c:
                return [await c.call_tool(name, args) for name, args in calls_for(work)]

        results = run(go)
        expected = [command_line(name, args) for name, args in calls_for(cli_work)]
    for result, answer in zip(results, expected):
        answer = json.loads(json.dumps(answer).replace(cli_work, work))
        assert result.structured_content == answer
        assert result.is_error is False
        assert text_of(result).startswith(answer["output"])
    # The text is the output itself, then the other fields.
    assert text_of(results[1]).startswith('one "quoted"\ntwo\tthree\n\ntotal_lines: 2\nsha256: ')
    assert text_of(results[-1]) == "x\ny\nexit_code: 3"
    assert "\nbytes: 23" in text_of(results[0])


@pytest.mark.parametrize("mode", MODES)
def test_a_large_answer_is_text_alone_within_the_declared_size(mode):
    # docs/MCP.md, "Answers sized for the hosts": the limit is declared on
    # every tool; past 4 KiB structured_content is left out, so the output
    # travels once, and the text carries every field.
    command = "echo HEAD; head -c 1000000 /dev/zero | tr '\\0' x; echo; echo TAIL"

    async def go():
        async with session(mode) as c:
            tools = (await c.list_tools()).tools
            return tools, await c.call_tool("bash", {"command": command})

    tools, result = run(go)
    assert {tool.name: tool.meta for tool in tools} == {
        tool.name: {"anthropic/maxResultSizeChars": 24000} for tool in tools
    }
    assert result.is_error is False
    assert result.structured_content is None
    text = text_of(result)
    assert len(text) <= 24000
    # One line of a million x: cut inside it, and said so (docs/SPEC.md, "Output limit").
    cut = r"\[\.\.\. (\d+) bytes omitted \(cut inside line 2\), not kept: run the command again [^\n]* \.\.\.\]"
    head, omitted, tail = re.fullmatch(r"HEAD\n(x+)\n" + cut + r"\n(x+)\nTAIL\nexit_code: 0", text).groups()
    assert len(head) + int(omitted) + len(tail) == 1_000_000


def png(width, height):
    """A PNG of red pixels, as an encoder writes it."""

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


@pytest.mark.parametrize("mode", MODES)
def test_an_image_comes_back_as_image_content(mode, work):
    # file_read in the full profile: the image beside the text, its base64
    # only there (never in structured_content).
    image = png(3, 2)
    path = os.path.join(work, "red.dat")
    with open(path, "wb") as f:
        f.write(image)

    async def go():
        async with session(mode) as c:
            return await c.call_tool("file_read", {"file_path": path})

    result = run(go)
    described = f"Image: PNG, 3x2, {len(image)} bytes"
    sha256 = hashlib.sha256(image).hexdigest()
    assert result.is_error is False
    assert [c.type for c in result.content] == ["text", "image"]
    assert result.content[0].text == f"{described}\nsha256: {sha256}"
    assert result.content[1].mime_type == "image/png"
    assert base64.b64decode(result.content[1].data) == image
    assert result.structured_content == {"output": described, "sha256": sha256}


@pytest.mark.parametrize("mode", MODES)
def test_an_error_envelope_is_is_error_with_code_and_message(mode, work):
    async def go():
        async with session(mode) as c:
            return await c.call_tool("file_read", {"file_path": f"{work}/missing"})

    result = run(go)
    answer = command_line("file_read", {"file_path": f"{work}/missing"})
    assert result.is_error is True
    assert result.structured_content == answer
    assert text_of(result) == f"{answer['error_code']}: {answer['error']}"
    assert text_of(result).startswith("FILE_NOT_FOUND: ")


@pytest.mark.parametrize("mode", MODES)
def test_bad_arguments_are_answered_as_the_tool_answers_them(mode):
    async def go():
        async with session(mode) as c:
            return [
                await c.call_tool("file_read", {}),
                await c.call_tool("file_read", {"file_path": "/etc/hostname", "offset": "x"}),
            ]

    missing, wrong_type = run(go)
    assert missing.is_error and text_of(missing) == "INVALID_ARG: missing required parameter: file_path"
    assert wrong_type.structured_content == command_line("file_read", {"file_path": "/etc/hostname", "offset": "x"})


@pytest.mark.parametrize("mode", MODES)
def test_an_unknown_tool_is_a_json_rpc_invalid_params_error(mode):
    async def go():
        async with session(mode) as c:
            with pytest.raises(MCPError) as err:
                await c.call_tool("cat", {})
            # The session goes on.
            assert len((await c.list_tools()).tools) == len(TOOLS + JOB_TOOLS)
            return err.value

    error = run(go)
    assert error.error.code == -32602
    assert "cat" in error.error.message


@pytest.mark.parametrize("mode", MODES)
def test_the_output_limit_applies_as_on_the_command_line(mode):
    env = {"IKIGAI_TOOLS_MAX_OUTPUT": "2000"}
    args = {"command": "seq 1 100000"}

    async def go():
        async with session(mode, env) as c:
            return await c.call_tool("bash", args)

    result = run(go)
    answer = command_line("bash", args, env)
    assert result.structured_content == answer
    assert " bytes omitted (lines " in text_of(result)


# --- 4. isolation ------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
# (Rust's runtime survives a SIGSEGV sent by kill: its handler only acts on
# real faults. SIGQUIT dumps core as a real crash does.)
@pytest.mark.parametrize("signal", ["KILL", "ABRT", "QUIT"])
def test_a_tool_process_that_dies_takes_only_its_call(mode, signal):
    # $PPID of the shell is the tool process (the child), not the server.
    async def go():
        async with session(mode) as c:
            async with anyio.create_task_group() as tg:
                slow = {}

                async def bystander():
                    slow["result"] = await c.call_tool("bash", {"command": "sleep 0.5; echo alive"})

                tg.start_soon(bystander)
                died = await c.call_tool("bash", {"command": f"kill -{signal} $PPID"})
            after = await c.call_tool("bash", {"command": "echo still here"})
            if mode == "legacy":
                await c.send_ping()
            return died, slow["result"], after

    died, bystander, after = run(go)
    assert died.is_error is True
    assert text_of(died).startswith("TOOL_CRASHED: the bash process was killed by signal")
    assert f"SIG{signal}" in text_of(died)
    assert bystander.structured_content == {"output": "alive", "exit_code": 0}
    assert after.structured_content == {"output": "still here", "exit_code": 0}


# --- 5. concurrency, cancellation, progress ----------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_four_one_second_sleeps_take_about_one_second(mode):
    async def go():
        async with session(mode) as c:
            await c.list_tools()
            results = []
            started = time.monotonic()
            async with anyio.create_task_group() as tg:
                for _ in range(4):

                    async def one():
                        results.append(await c.call_tool("bash", {"command": "sleep 1; echo ok"}))

                    tg.start_soon(one)
            return time.monotonic() - started, results

    elapsed, results = run(go)
    assert [r.structured_content for r in results] == [{"output": "ok", "exit_code": 0}] * 4
    assert elapsed < 2.5, f"four concurrent sleeps took {elapsed:.2f} s"


@pytest.mark.parametrize("mode", MODES)
def test_cancelling_a_call_kills_its_command(mode, work):
    pidfile = f"{work}/pids"
    command = f"sleep 30 & echo $! > {pidfile}; echo $$ >> {pidfile}; wait"

    async def go():
        async with session(mode) as c:
            with anyio.move_on_after(1.0):
                await c.call_tool("bash", {"command": command})
                raise AssertionError("the call ended by itself")
            pids = [int(p) for p in open(pidfile).read().split()]
            gone = [await wait_gone(pid) for pid in pids]
            # The server goes on.
            after = await c.call_tool("bash", {"command": "echo next"})
            return pids, gone, after

    pids, gone, after = run(go)
    assert len(pids) == 2
    assert all(gone), f"still running after cancel: {pids}"
    assert after.structured_content == {"output": "next", "exit_code": 0}


@pytest.mark.parametrize("mode", MODES)
def test_a_long_bash_call_reports_progress(mode):
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, message))

    async def go():
        async with session(mode) as c:
            return await c.call_tool("bash", {"command": "sleep 2.5; echo done"}, progress_callback=on_progress)

    result = run(go)
    assert result.structured_content == {"output": "done", "exit_code": 0}
    assert len(seen) >= 2, seen
    assert [p for p, _ in seen] == sorted(p for p, _ in seen)
    assert seen[0][1].startswith("running for")


@pytest.mark.parametrize("mode", MODES)
def test_the_mcp_jobs_flow(mode, work):
    """Docs' MCP flow (README, "Long commands"): a command run in the
    background answers its job_id at once; job_output waits (with progress)
    for the rest and the exit code; the session's jobs end with it."""
    seen = []

    async def on_progress(progress, total, message):
        seen.append(progress)

    pidfile = f"{work}/pids"
    state = {"IKIGAI_TOOLS_STATE_DIR": f"{work}/state"}

    async def go():
        async with session(mode, env=state) as c:
            first = await c.call_tool(
                "bash", {"command": "echo start; sleep 2.5; echo done", "run_in_background": True}
            )
            job = first.structured_content
            rest = ""
            while True:
                read = await c.call_tool(
                    "job_output", {"job_id": job["job_id"], "wait": 10}, progress_callback=on_progress
                )
                rest += read.structured_content["output"]
                if not read.structured_content["running"]:
                    break
            # A job left running when the session ends.
            await c.call_tool(
                "bash",
                {"command": f"sleep 300 & echo $! > {pidfile}; echo $$ >> {pidfile}; wait", "run_in_background": True},
            )
            listed = (await c.call_tool("job_list", {})).structured_content
            return job, rest, read.structured_content, listed

    job, rest, last, listed = run(go)
    assert job["running"] is True and job["output"].startswith("start\n"), job
    assert rest == "done\n"
    assert last == {"output": last["output"], "running": False, "exit_code": 0}
    assert seen, "no progress while job_output waited"
    assert [row["state"] for row in listed["jobs"]] == ["running"], listed
    pids = [int(p) for p in open(pidfile).read().split()]
    assert len(pids) == 2
    assert run(lambda: wait_gone_all(pids)), f"the session ended, its job runs on: {pids}"


@pytest.mark.parametrize("mode", MODES)
def test_the_mcp_flow_talks_to_a_repl_on_a_tty(mode, work):
    """docs/TOOLS.md, "Talking to a job": `python3 -i` started with tty,
    job_write `1+1` and Enter, job_output reads `2`."""
    state = {"IKIGAI_TOOLS_STATE_DIR": f"{work}/state"}

    async def read_until(c, job_id, wanted, shown=""):
        deadline = time.monotonic() + 20
        while wanted not in shown:
            assert time.monotonic() < deadline, shown
            read = await c.call_tool("job_output", {"job_id": job_id, "wait": 2})
            shown += read.structured_content["output"]
        return shown

    async def go():
        async with session(mode, env=state) as c:
            first = (await c.call_tool("bash", {"command": "python3 -i -q", "tty": True})).structured_content
            job_id = first["job_id"]
            await read_until(c, job_id, ">>> ", first["output"])
            wrote = (await c.call_tool("job_write", {"job_id": job_id, "input": "1+1\n"})).structured_content
            shown = await read_until(c, job_id, "2\n>>> ")
            killed = (await c.call_tool("job_kill", {"job_id": job_id})).structured_content
            return first, wrote, shown, killed

    first, wrote, shown, killed = run(go)
    assert first["running"] is True, first
    assert wrote == {"written": 4, "running": True}
    assert shown == "1+1\n2\n>>> "
    assert killed["running"] is False, killed


async def wait_gone_all(pids):
    return all([await wait_gone(pid) for pid in pids])


# --- 6. roots: the client's roots confine the session ----------------------


@pytest.fixture
def confined_dirs():
    """`root/` (offered as the client's root), `outside/` beside it, and
    `tmp/` as the server's TMPDIR (confined bash may write there, and the
    system's /tmp, which holds `outside/`, is then not granted)."""
    with tempfile.TemporaryDirectory(prefix="ikigai-mcp-roots") as base:
        dirs = {name: os.path.join(base, name) for name in ("root", "outside", "tmp")}
        for d in dirs.values():
            os.mkdir(d)
        yield dirs


def offering(*paths):
    async def list_roots(context):
        return ListRootsResult(roots=[Root(uri=f"file://{p}") for p in paths])

    return list_roots


def write_both(dirs):
    inside, outside = f"{dirs['root']}/f", f"{dirs['outside']}/f"
    return {"command": f"echo in > '{inside}'; echo out > '{outside}'; true"}


@pytest.mark.parametrize("mode", MODES)
def test_client_roots_confine_bash(mode, confined_dirs):
    dirs = confined_dirs

    async def go():
        params = server(env={"TMPDIR": dirs["tmp"]})
        async with Client(params, mode=mode, read_timeout_seconds=30, list_roots_callback=offering(dirs["root"])) as c:
            return await c.call_tool("bash", write_both(dirs))

    result = run(go)
    assert result.is_error is False, text_of(result)
    assert open(f"{dirs['root']}/f").read() == "in\n"
    assert not os.path.exists(f"{dirs['outside']}/f"), "bash wrote outside the client's root"


@pytest.mark.parametrize("mode", MODES)
def test_client_roots_confine_the_file_tools(mode, confined_dirs):
    dirs = confined_dirs
    secret = f"{dirs['outside']}/secret.txt"
    with open(secret, "w") as f:
        f.write("outside secret\n")

    async def go():
        params = server(env={"TMPDIR": dirs["tmp"]})
        async with Client(params, mode=mode, read_timeout_seconds=30, list_roots_callback=offering(dirs["root"])) as c:
            read = await c.call_tool("file_read", {"file_path": secret})
            write = await c.call_tool("file_write", {"file_path": f"{dirs['outside']}/new.txt", "content": "x"})
            inside = await c.call_tool("file_write", {"file_path": f"{dirs['root']}/new.txt", "content": "x"})
            return read, write, inside

    read, write, inside = run(go)
    real_root = os.path.realpath(dirs["root"])
    assert read.is_error is True, text_of(read)
    assert read.structured_content == {
        "error": f"Permission denied: {secret} is outside the allowed roots ({real_root}); the MCP client's roots set them",
        "error_code": "PERMISSION_DENIED",
    }
    assert "outside secret" not in text_of(read)
    assert write.is_error is True and write.structured_content["error_code"] == "PERMISSION_DENIED"
    assert not os.path.exists(f"{dirs['outside']}/new.txt"), "file_write wrote outside the client's root"
    assert inside.is_error is False, text_of(inside)
    assert open(f"{dirs['root']}/new.txt").read() == "x"


@pytest.mark.parametrize("mode", MODES)
def test_unconfined_without_roots_bash_writes_anywhere(mode, confined_dirs):
    dirs = confined_dirs

    async def go():
        params = server(env={"TMPDIR": dirs["tmp"]}, args=["--unconfined"])
        async with Client(params, mode=mode, read_timeout_seconds=30) as c:
            return await c.call_tool("bash", write_both(dirs))

    result = run(go)
    assert result.is_error is False, text_of(result)
    assert open(f"{dirs['outside']}/f").read() == "out\n"


NO_ROOTS = (
    "Permission denied: the MCP server was started without --root and the client names no roots, so no "
    "call runs: start it as `ikigai-tools mcp --root DIR` to confine the tools to DIR, or as "
    "`ikigai-tools mcp --unconfined` to serve the whole machine on purpose"
)


@pytest.mark.parametrize("mode", MODES)
def test_without_root_or_unconfined_every_call_is_refused(mode, confined_dirs):
    # A break found by attack: the server was unconfined unless told otherwise.
    dirs = confined_dirs

    async def go():
        async with Client(server(env={"TMPDIR": dirs["tmp"]}), mode=mode, read_timeout_seconds=30) as c:
            return await c.call_tool("bash", write_both(dirs))

    result = run(go)
    assert result.is_error is True, text_of(result)
    assert result.structured_content == {"error": NO_ROOTS, "error_code": "PERMISSION_DENIED"}
    assert not os.path.exists(f"{dirs['outside']}/f"), "a call ran without roots"


@pytest.mark.parametrize("mode", MODES)
def test_an_empty_roots_list_without_root_refuses_every_call_saying_to_pass_root(mode):
    async def go():
        async with Client(server(), mode=mode, read_timeout_seconds=30, list_roots_callback=offering()) as c:
            return await c.call_tool("bash", {"command": "echo hi"})

    result = run(go)
    assert result.is_error is True
    assert result.structured_content["error_code"] == "PERMISSION_DENIED"
    assert "list of roots is empty" in result.structured_content["error"]
    assert "ikigai-tools mcp --root DIR" in result.structured_content["error"]
    assert "ikigai-tools mcp --unconfined" in result.structured_content["error"]


@pytest.mark.parametrize("mode", MODES)
def test_an_empty_roots_list_keeps_the_root_in_force(mode, confined_dirs):
    # MCP Inspector and the Go SDK's default client send [].
    dirs = confined_dirs
    params = server(env={"TMPDIR": dirs["tmp"]})
    params.args += ["--root", dirs["root"]]

    async def go():
        async with Client(params, mode=mode, read_timeout_seconds=30, list_roots_callback=offering()) as c:
            return await c.call_tool("bash", write_both(dirs))

    result = run(go)
    assert result.is_error is False, text_of(result)
    assert open(f"{dirs['root']}/f").read() == "in\n"
    assert not os.path.exists(f"{dirs['outside']}/f"), "bash wrote outside the --root directory"


@pytest.mark.parametrize("mode", ["legacy"])
def test_a_roots_list_error_refuses_every_call(mode, confined_dirs):
    # A break found by attack: an error answer fell back to the --root roots, and
    # without --root to no confinement at all. Legacy only: on the stateless
    # revision the roots travel with the call, and a failing callback fails
    # the call in the client before it reaches the server.
    dirs = confined_dirs
    secret = f"{dirs['outside']}/secret.txt"
    with open(secret, "w") as f:
        f.write("SECRET")

    async def failing(context):
        raise RuntimeError("no roots here")

    async def go():
        async with Client(server(env={"TMPDIR": dirs["tmp"]}), mode=mode, read_timeout_seconds=30, list_roots_callback=failing) as c:
            return [await c.call_tool("file_read", {"file_path": secret}), await c.call_tool("bash", write_both(dirs))]

    for result in run(go):
        assert result.is_error is True, text_of(result)
        assert result.structured_content["error_code"] == "PERMISSION_DENIED"
        assert "SECRET" not in text_of(result)
    assert not os.path.exists(f"{dirs['outside']}/f"), "bash wrote outside while roots/list failed"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.filterwarnings("ignore:The roots capability is deprecated")
def test_a_changed_roots_list_is_followed(mode, confined_dirs):
    # legacy: the client says roots/list_changed and the server asks again;
    # auto (stateless): the roots are asked for every call anyway.
    dirs = confined_dirs
    offered = [dirs["root"]]

    async def list_roots(context):
        return ListRootsResult(roots=[Root(uri=f"file://{p}") for p in offered])

    def write(name):
        paths = [f"{d}/{name}" for d in (dirs["root"], dirs["outside"])]
        return {"command": "; ".join(f"echo x > '{p}'" for p in paths) + "; true"}

    async def go():
        params = server(env={"TMPDIR": dirs["tmp"]})
        async with Client(params, mode=mode, read_timeout_seconds=30, list_roots_callback=list_roots) as c:
            await c.call_tool("bash", write("first"))
            offered[0] = dirs["outside"]
            if mode == "legacy":
                await c.send_roots_list_changed()
            await c.call_tool("bash", write("second"))

    run(go)
    made = {name: sorted(os.listdir(dirs[name])) for name in ("root", "outside")}
    assert made == {"root": ["first"], "outside": ["second"]}


# --- Over HTTP (mcp --listen) ----------------------------------------------


@pytest.fixture
def http_server(tmp_path):
    """`ikigai-tools mcp --listen 0 --root DIR`: its URL and its root; stopped
    with SIGTERM afterwards, which must end it with status 0."""
    root = tmp_path / "root"
    root.mkdir()
    env = dict(os.environ)
    env.pop("IKIGAI_TOOLS_MCP_TOKEN", None)
    proc = subprocess.Popen(
        [BIN, "mcp", "--listen", "0", "--root", str(root)], stderr=subprocess.PIPE, env=env
    )
    first = proc.stderr.readline().decode()
    prefix = "ikigai-tools mcp: listening on "
    assert first.startswith(prefix), first
    yield first[len(prefix) :].strip(), root
    proc.terminate()
    assert proc.wait(timeout=15) == 0
    proc.stderr.close()


@pytest.mark.parametrize("mode", MODES)
def test_over_http_lists_and_calls_the_tools_confined_to_root(mode, http_server):
    url, root = http_server

    async def go():
        async with Client(url, mode=mode, read_timeout_seconds=30) as c:
            if mode == "auto":
                # The stateless revision over HTTP, served by the same service.
                assert c.protocol_version == "2026-07-28"
            names = [t.name for t in (await c.list_tools()).tools]
            assert names == TOOLS + JOB_TOOLS
            inside = await c.call_tool("bash", {"command": f"echo hi > {root}/in.txt && cat {root}/in.txt"})
            assert not inside.is_error, text_of(inside)
            assert inside.structured_content == {"output": "hi", "exit_code": 0}
            outside = await c.call_tool("file_write", {"file_path": "/tmp/ikigai-http-outside.txt", "content": "x"})
            assert outside.is_error
            assert outside.structured_content["error_code"] == "PERMISSION_DENIED"

    run(go)


@pytest.mark.parametrize("mode", MODES)
def test_over_http_a_job_outlives_its_request(mode, tmp_path):
    """A job runs on after the request that started it and is listed. In
    a session (legacy) it is the session's, and ends when the client ends
    the session (DELETE); without one (auto: the stateless revision, a
    server per request) the sessionless requests share their jobs, which
    end when the server stops."""
    root = tmp_path / "root"
    root.mkdir()
    env = dict(os.environ)
    env.pop("IKIGAI_TOOLS_MCP_TOKEN", None)
    env["IKIGAI_TOOLS_STATE_DIR"] = str(tmp_path / "state")
    proc = subprocess.Popen([BIN, "mcp", "--listen", "0", "--root", str(root)], stderr=subprocess.PIPE, env=env)
    try:
        url = proc.stderr.readline().decode().split("listening on ")[1].strip()
        pidfile = root / "pid"

        async def go():
            async with Client(url, mode=mode, read_timeout_seconds=30) as c:
                started = await c.call_tool(
                    "bash", {"command": f"sleep 300 & echo $! > {pidfile}; wait", "run_in_background": True}
                )
                assert started.structured_content["running"] is True, started.structured_content
                listed = (await c.call_tool("job_list", {})).structured_content
                pid = int(pidfile.read_text())
                return listed, pid, pid_alive(pid)

        listed, pid, alive = run(go)
        assert [row["state"] for row in listed["jobs"]] == ["running"], listed
        assert alive
        if mode == "legacy":
            assert run(lambda: wait_gone(pid)), f"the session ended, its job runs on: {pid}"
        else:
            assert pid_alive(pid)
    finally:
        proc.terminate()
        assert proc.wait(timeout=15) == 0
        proc.stderr.close()
    assert run(lambda: wait_gone(pid)), f"the server stopped, its job runs on: {pid}"


def listening(args, env=None):
    """`ikigai-tools mcp --listen 0 ARGS` started: the process and its URL."""
    full_env = dict(os.environ)
    full_env.pop("IKIGAI_TOOLS_MCP_TOKEN", None)
    full_env.pop("IKIGAI_TOOLS_ROOTS", None)
    full_env.update(env or {})
    proc = subprocess.Popen([BIN, "mcp", "--listen", "0", *args], stderr=subprocess.PIPE, env=full_env)
    first = proc.stderr.readline().decode()
    prefix = "ikigai-tools mcp: listening on "
    assert first.startswith(prefix), first
    return proc, first[len(prefix) :].strip()


def stopped(proc):
    proc.terminate()
    assert proc.wait(timeout=15) == 0
    proc.stderr.close()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("start", [[], ["--unconfined"]])
def test_over_http_a_roots_client_is_confined_by_its_roots(mode, start, confined_dirs):
    # A break found by attack: over HTTP the SDK's default mode (auto: the
    # stateless revision) declares its roots in each request's _meta, and
    # the call ran at once, unconfined, never asked for them.
    dirs = confined_dirs
    proc, url = listening(start, env={"TMPDIR": dirs["tmp"]})
    try:
        asked = []

        async def list_roots(context):
            asked.append(True)
            return ListRootsResult(roots=[Root(uri=f"file://{dirs['root']}")])

        async def go():
            async with Client(url, mode=mode, read_timeout_seconds=30, list_roots_callback=list_roots) as c:
                return await c.call_tool("bash", write_both(dirs))

        result = run(go)
    finally:
        stopped(proc)
    assert asked, "the client was never asked for its roots"
    assert result.is_error is False, text_of(result)
    assert open(f"{dirs['root']}/f").read() == "in\n"
    assert not os.path.exists(f"{dirs['outside']}/f"), "bash wrote outside the client's root"


@pytest.mark.parametrize("mode", MODES)
def test_over_http_without_root_or_unconfined_every_call_is_refused(mode, confined_dirs):
    dirs = confined_dirs
    proc, url = listening([], env={"TMPDIR": dirs["tmp"]})
    try:

        async def go():
            async with Client(url, mode=mode, read_timeout_seconds=30) as c:
                return await c.call_tool("bash", write_both(dirs))

        result = run(go)
    finally:
        stopped(proc)
    assert result.structured_content == {"error": NO_ROOTS, "error_code": "PERMISSION_DENIED"}
    assert not os.path.exists(f"{dirs['outside']}/f"), "a call ran without roots"


@pytest.mark.parametrize("mode", MODES)
def test_over_http_client_roots_outside_the_root_ceiling_are_refused(mode, confined_dirs):
    # A break found by attack: a client's roots replaced --root.
    dirs = confined_dirs
    proc, url = listening(["--root", dirs["root"]], env={"TMPDIR": dirs["tmp"]})
    try:

        async def go():
            async with Client(url, mode=mode, read_timeout_seconds=30, list_roots_callback=offering(dirs["outside"])) as c:
                return await c.call_tool("bash", write_both(dirs))

        result = run(go)
    finally:
        stopped(proc)
    assert result.is_error is True, text_of(result)
    assert result.structured_content["error_code"] == "PERMISSION_DENIED"
    assert "are not within the directories the server was started with (--root " in result.structured_content["error"]
    assert not os.path.exists(f"{dirs['outside']}/f"), "bash wrote outside the --root ceiling"


# --- the web tools over MCP ---------------------------------------------------


@pytest.fixture
def web_server():
    """A local server: an HTML page, and a SearXNG instance's JSON API."""
    import http.server
    import threading

    page = (b"<html><head><title>Local page</title></head><body><nav>menu</nav>"
            b"<main><h1>Hello</h1><p>Some <b>bold</b> text.</p></main></body></html>")
    results = {"results": [
        {"title": "Rust <b>book</b>", "url": "https://doc.rust-lang.org/book/", "content": "The Rust &amp; book"},
        {"title": "Blocked", "url": "https://spam.example/x", "content": "no"},
    ]}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path.startswith("/search?"):
                body, kind = json.dumps(results).encode(), "application/json"
            else:
                body, kind = page, "text/html; charset=utf-8"
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.mark.parametrize("mode", MODES)
def test_web_fetch_and_web_search_over_mcp_answer_as_the_command_line(mode, web_server):
    """One install: an MCP host fetches a page and searches (a SearXNG of the
    user's own); loopback is reached only because the setting names it, and
    without the setting the same fetch is refused."""
    env = {
        "IKIGAI_TOOLS_FETCH_ALLOW": "127.0.0.1",
        "IKIGAI_TOOLS_SEARCH_PROVIDER": "searxng",
        "IKIGAI_TOOLS_SEARCH_URL": web_server,
    }
    fetch = {"url": f"{web_server}/page"}
    search = {"query": "rust book", "blocked_domains": ["spam.example"]}

    async def go(env):
        async with session(mode, env=env) as c:
            return await c.call_tool("web_fetch", fetch), await c.call_tool("web_search", search)

    fetched, searched = run(go, env)
    assert fetched.is_error is False
    assert fetched.structured_content == {
        "output": "# Hello\n\nSome **bold** text.",
        "url": f"{web_server}/page",
        "title": "Local page",
        "content_type": "text/html",
        "total_lines": 3,
    }
    assert fetched.structured_content == command_line("web_fetch", fetch, env)
    assert text_of(fetched).startswith("# Hello\n\nSome **bold** text.\n")
    assert searched.is_error is False
    answer = searched.structured_content
    assert answer == command_line("web_search", search, env)
    assert answer["results"] == [
        {"title": "Rust book", "url": "https://doc.rust-lang.org/book/", "snippet": "The Rust & book"}
    ]
    assert answer["filtered"] == 1

    refused, _ = run(go, {})
    assert refused.is_error is True
    assert refused.structured_content["error_code"] == "PERMISSION_DENIED"
    assert text_of(refused).startswith("PERMISSION_DENIED: Refused to connect to 127.0.0.1: a loopback address")
