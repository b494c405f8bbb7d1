#!/usr/bin/env python3
"""web_fetch against the MCP reference fetch server, for bench/web_fetch.sh:

  web_fetch.py URL RUNS OURS_ARGV_JSON THEIRS_ARGV_JSON

Each side is one stdio MCP session (plain JSON-RPC lines from this one
process, no SDK, so that the difference is the servers' own cost): started,
initialized, then RUNS calls that fetch URL and convert it, the two sides
interleaved call by call so that the machine's load weighs on both alike.
The first call of a session is timed with the server's start
(`cold`: start, handshake, one call); the others alone (`call`). When a
session ends its peak RSS is read from wait4: the largest of the server and
the processes it waited for (ours forks one a call).

Prints one JSON object a side: {"cold_ms", "call_ms" (median), "peak_rss_kb",
"answer_bytes"}. Exits non-zero if a call answers an error or no text.
"""

import json
import os
import statistics
import subprocess
import sys
import time

HELLO = {"protocolVersion": "2025-06-18", "capabilities": {},
         "clientInfo": {"name": "bench", "version": "0"}}


class Session:
    def __init__(self, name, argv, tool, arguments):
        self.name, self.tool, self.arguments = name, tool, arguments
        self.started = time.perf_counter()
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 0
        self.request("initialize", HELLO)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.times = []
        self.cold = None
        self.answer_bytes = 0
        # The first call now, so that `cold` counts this server's start only.
        self.call()

    def send(self, message):
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.process.stdout.readline()
            if not line:
                sys.exit(f"{self.name}: the server closed its output")
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                return reply

    def call(self):
        start = time.perf_counter()
        reply = self.request("tools/call", {"name": self.tool, "arguments": self.arguments})
        end = time.perf_counter()
        result = reply.get("result") or {}
        text = "".join(c.get("text", "") for c in result.get("content", []))
        if result.get("isError") or not text or "error" in reply:
            sys.exit(f"{self.name}: the call failed: {json.dumps(reply)[:400]}")
        self.answer_bytes = len(line_bytes(reply))
        if self.cold is None:
            self.cold = end - self.started
        else:
            self.times.append(end - start)

    def close(self):
        self.process.stdin.close()
        _, _, usage = os.wait4(self.process.pid, 0)
        return {
            "cold_ms": round(self.cold * 1000, 1),
            "call_ms": round(statistics.median(self.times) * 1000, 1) if self.times else None,
            "peak_rss_kb": usage.ru_maxrss,
            "answer_bytes": self.answer_bytes,
        }


def line_bytes(reply):
    return json.dumps(reply).encode()


def main():
    url, runs, ours_argv, theirs_argv = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    ours = Session("web_fetch", json.loads(ours_argv), "web_fetch", {"url": url})
    theirs = Session("mcp-server-fetch", json.loads(theirs_argv), "fetch", {"url": url})
    for _ in range(runs):
        ours.call()
        theirs.call()
    print(json.dumps({"ours": ours.close(), "theirs": theirs.close()}))


if __name__ == "__main__":
    main()
