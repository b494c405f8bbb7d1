"""The OCI image (container/Containerfile) as a platform runs it: one
container per workspace, started with the flags tests/container/run.sh
passes (--read-only --cap-drop=all --user 65534 ...), a writable workspace
volume and the token from a file, driven over streamable HTTP by the
official MCP Python SDK (README, "Many workspaces")."""

import contextlib
import json
import os
import secrets
import shlex
import subprocess
import time
import urllib.error
import urllib.request

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

IMAGE = os.environ["IKIGAI_CONTAINER_IMAGE"]
RUN_ARGS = shlex.split(os.environ["IKIGAI_CONTAINER_RUN"])
MODES = ["legacy", "auto"]
# The full profile's tools, in the server's order (tests/mcp/test_mcp.py).
TOOLS = ["bash", "file_read", "file_write", "file_edit", "glob", "grep"]
TOOLS += ["job_output", "job_kill", "job_list", "job_write", "list_allowed_directories", "apply_patch"]
TOOLS += ["web_fetch", "web_search"]
NOBODY = 65534
TOKEN_IN_CONTAINER = "/run/secrets/ikigai-token"


def get(url, headers=None):
    """The status and body of a GET."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


def wait_ready(base, container, within=30.0):
    """Polls /readyz until it answers 200; the container's log on failure."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if get(f"{base}/readyz")[0] == 200:
                return
        except (urllib.error.URLError, ConnectionError):
            pass
        time.sleep(0.2)
    logs = subprocess.run(["podman", "logs", container], capture_output=True, text=True).stderr
    pytest.fail(f"/readyz did not answer 200 within {within} s; the container's log:\n{logs}")


@contextlib.contextmanager
def container(workspace, token_args):
    """A container of the image serving `workspace`, with `token_args`
    (podman's options, then the server's): its base URL once /readyz
    answers. Stopped afterwards with SIGTERM, which must end the server
    with status 0."""
    podman_args, server_args = token_args
    name = f"ikigai-tools-test-{os.getpid()}-{secrets.token_hex(4)}"
    started = subprocess.run(
        ["podman", "run", "-d", "--name", name, *RUN_ARGS, "-p", "127.0.0.1::8000",
         "-v", f"{workspace}:/workspace", *podman_args, IMAGE, *server_args],
        capture_output=True, text=True,
    )
    assert started.returncode == 0, started.stderr
    try:
        port = subprocess.run(["podman", "port", name, "8000"], capture_output=True, text=True, check=True)
        base = "http://" + port.stdout.split()[0]
        wait_ready(base, name)
        yield base
        stopped = subprocess.run(["podman", "stop", "-t", "10", name], capture_output=True, text=True)
        assert stopped.returncode == 0, stopped.stderr
        status = subprocess.run(["podman", "inspect", name, "--format", "{{.State.ExitCode}}"],
                                capture_output=True, text=True, check=True)
        assert status.stdout.strip() == "0", "SIGTERM must end the server with status 0"
    finally:
        subprocess.run(["podman", "rm", "-f", name], capture_output=True)


def new_workspace(tmp_path_factory):
    """A directory the container's user owns, for its /workspace."""
    workspace = tmp_path_factory.mktemp("container") / "workspace"
    workspace.mkdir()
    os.chown(workspace, NOBODY, NOBODY)
    return workspace


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One container serving a fresh workspace, the token from a file: its
    base URL, the token and the workspace on this side of the volume."""
    workspace = new_workspace(tmp_path_factory)
    token = secrets.token_urlsafe(32)
    token_file = workspace.parent / "token"
    token_file.write_text(token + "\n")
    os.chmod(token_file, 0o600)
    os.chown(token_file, NOBODY, NOBODY)
    token_args = (["-v", f"{token_file}:{TOKEN_IN_CONTAINER}:ro"], ["--token-file", TOKEN_IN_CONTAINER])
    with container(workspace, token_args) as base:
        yield base, token, workspace


def client(base, token, mode):
    """The SDK's client of the container's /mcp, sending the token."""
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return http, Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode, read_timeout_seconds=30)


def calls(base, token, mode, *wanted):
    """The structured answers (with is_error) of the calls `wanted`, each a
    (tool, arguments) pair, made in one session."""

    async def go():
        http, c = client(base, token, mode)
        async with http, c:
            answers = []
            for tool, arguments in wanted:
                result = await c.call_tool(tool, arguments)
                answers.append((result.is_error, result.structured_content))
            return answers

    return anyio.run(go)


def test_healthz_and_readyz_answer_without_the_token(served):
    base, _, _ = served
    assert get(f"{base}/healthz") == (200, "ok\n")
    assert get(f"{base}/readyz") == (200, "ready\n")


def test_mcp_without_the_token_is_refused(served):
    base, _, _ = served
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "test", "version": "0"}}}
    request = urllib.request.Request(
        f"{base}/mcp", data=json.dumps(initialize).encode(), method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 401
    assert refused.value.read().decode() == "Unauthorized: a bearer token is required"


@pytest.mark.parametrize("mode", MODES)
def test_lists_the_tools_with_the_token(mode, served):
    base, token, _ = served

    async def go():
        http, c = client(base, token, mode)
        async with http, c:
            return [t.name for t in (await c.list_tools()).tools]

    assert anyio.run(go) == TOOLS


@pytest.mark.parametrize("mode", MODES)
def test_file_write_and_file_read_in_the_workspace_volume(mode, served):
    base, token, workspace = served
    name = f"written-{mode}.txt"
    digest = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
    answers = calls(base, token, mode,
                    ("file_write", {"file_path": f"/workspace/{name}", "content": "hello\n"}),
                    ("file_read", {"file_path": f"/workspace/{name}"}))
    assert answers == [
        (False, {"output": f"Wrote 6 bytes to {name}", "bytes": 6, "sha256": digest}),
        (False, {"output": "hello\n", "total_lines": 1, "sha256": digest}),
    ]
    # On the volume, as the container's user.
    written = workspace / name
    assert (written.read_text(), written.stat().st_uid) == ("hello\n", NOBODY)


@pytest.mark.parametrize("mode", MODES)
def test_a_write_outside_the_workspace_is_refused(mode, served):
    base, token, _ = served
    answers = calls(base, token, mode, ("file_write", {"file_path": "/tmp/outside.txt", "content": "x"}))
    assert answers == [(True, {
        "error": "Permission denied: /tmp/outside.txt is outside the allowed roots (/workspace); "
                 "the MCP server's --root sets them",
        "error_code": "PERMISSION_DENIED",
    })]


def test_bash_runs_as_nobody_confined_to_the_workspace(served):
    """The image's /bin/sh (busybox) runs the command as the container's
    user; it writes the workspace and nothing else: /tmp, writable by the
    server for its job state, is not the command's."""
    base, token, workspace = served
    command = "id -u; echo x > /workspace/from-bash; cat /workspace/from-bash; echo y > /tmp/from-bash"
    answers = calls(base, token, "legacy", ("bash", {"command": command}))
    assert answers == [(False, {
        "output": f"{NOBODY}\nx\nsh: can't create /tmp/from-bash: Read-only file system\n"
                  "[ikigai-tools sandbox: writes are allowed only beneath /workspace and $TMPDIR "
                  "(the MCP server's --root sets them)]",
        "exit_code": 1,
    })]
    assert (workspace / "from-bash").read_text() == "x\n"


def test_a_token_from_the_environment_never_reaches_a_command(tmp_path_factory):
    """The token as Kubernetes gives it (deploy/kubernetes: a Secret in
    IKIGAI_TOOLS_MCP_TOKEN): it admits the client, and no command sees it,
    in its environment or in the server's."""
    token = secrets.token_urlsafe(32)
    workspace = new_workspace(tmp_path_factory)
    with container(workspace, (["-e", f"IKIGAI_TOOLS_MCP_TOKEN={token}"], [])) as base:
        command = "env | grep -c IKIGAI_TOOLS_MCP_TOKEN; cat /proc/1/environ /proc/self/environ 2>&1"
        [(is_error, answer)] = calls(base, token, "legacy", ("bash", {"command": command}))
    assert not is_error, answer
    assert answer["output"].split("\n")[0] == "0"
    assert token not in answer["output"]
