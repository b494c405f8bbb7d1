#!/usr/bin/env python3
"""N file_read calls of one small file, made two ways, for bench/run.sh:

  mcp_calls.py mcp BINARY N FILE   one `BINARY mcp` session, N tools/call
  mcp_calls.py cli TOOL N FILE     N runs of TOOL (fork + exec), JSON on stdin

Both sides are driven from this one Python process, plain JSON-RPC lines on
the MCP side (no SDK), so that the difference is the server's own cost.
Exits non-zero if an answer is not the file's contents.
"""

import json
import subprocess
import sys


def mcp(binary, n, path, expected):
    server = subprocess.Popen([binary, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    send = server.stdin
    recv = server.stdout

    def request(id_, method, params):
        send.write(json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}).encode() + b"\n")
        send.flush()
        return json.loads(recv.readline())

    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
    request(0, "initialize", hello)
    send.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    for i in range(1, n + 1):
        answer = request(i, "tools/call", {"name": "file_read", "arguments": {"file_path": path}})
        if answer["result"]["structuredContent"]["output"] != expected:
            sys.exit(f"mcp call {i}: unexpected answer {answer}")
    send.close()
    server.wait()


def cli(tool, n, path, expected):
    args = json.dumps({"file_path": path}).encode()
    for i in range(n):
        done = subprocess.run([tool], input=args, stdout=subprocess.PIPE, check=True)
        if json.loads(done.stdout)["output"] != expected:
            sys.exit(f"cli call {i}: unexpected answer {done.stdout!r}")


def main():
    how, program, n, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    with open(path, encoding="utf-8") as f:
        expected = f.read()
    {"mcp": mcp, "cli": cli}[how](program, n, path, expected)


if __name__ == "__main__":
    main()
