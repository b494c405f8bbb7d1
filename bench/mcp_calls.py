#!/usr/bin/env python3
"""N file_read calls of one small file, made two ways, for bench/run.sh:

  mcp_calls.py mcp BINARY N FILE   one `BINARY mcp` session, N tools/call
  mcp_calls.py cli TOOL N FILE     N runs of TOOL (fork + exec), JSON on stdin
  mcp_calls.py versus BINARY REFERENCE N ROUNDS DIR
                                   side by side, for bench/mcp_calls.sh: one
                                   session of each server (REFERENCE: the
                                   command line of the reference server,
                                   serving DIR), N reads of DIR/small.txt and
                                   N listings of DIR, interleaved, ROUNDS
                                   times; prints each side's time and ratios

Both sides are driven from this one Python process, plain JSON-RPC lines on
the MCP side (no SDK), so that the difference is the server's own cost.
Exits non-zero if an answer is not the file's contents.
"""

import json
import os
import subprocess
import sys


def mcp(binary, n, path, expected):
    # Unconfined, as the `cli` side it is compared with runs (without
    # --root or --unconfined the server refuses every call).
    server = subprocess.Popen([binary, "mcp", "--unconfined"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
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


class Server:
    """One MCP session over stdio, past the handshake."""

    def __init__(self, argv, cwd):
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, cwd=cwd)
        self.id = 0
        hello = {"protocolVersion": "2025-06-18", "capabilities": {},
                 "clientInfo": {"name": "bench", "version": "0"}}
        self.request("initialize", hello)
        self.process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def request(self, method, params):
        self.id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()
        while True:
            answer = json.loads(self.process.stdout.readline())
            if answer.get("id") == self.id:
                return answer

    def call(self, name, arguments):
        answer = self.request("tools/call", {"name": name, "arguments": arguments})
        result = answer.get("result") or sys.exit(f"{name}: {answer}")
        if result.get("isError"):
            sys.exit(f"{name}: {result}")
        return result["content"][0]["text"]

    def cpu_seconds(self):
        """CPU time so far of the server and every process under it (the
        spawner, and the calls it reaped), from /proc: the wall clock moves
        with the load of a shared machine, the CPU a call takes much less."""
        return sum(process_cpu(pid) for pid in [self.process.pid] + descendants(self.process.pid))

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def process_cpu(pid):
    """utime + stime + cutime + cstime (the children it reaped) of `pid`."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # Fields 14 to 17 of proc(5), counted after the name (field 2) from 3.
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def descendants(pid):
    """The living processes under `pid` (its spawner; a call being reaped)."""
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as f:
                children = [int(c) for c in f.read().split()]
        except OSError:
            continue
        for child in children:
            found += [child] + descendants(child)
    return found


def versus(binary, reference, n, rounds, directory):
    import shlex
    import time
    small = os.path.join(directory, "small.txt")
    with open(small, encoding="utf-8") as f:
        expected = f.read()
    ours = Server([binary, "mcp", "--root", directory], directory)
    theirs = Server(shlex.split(reference) + [directory], directory)
    # What each side is asked: a small read, a directory listing.
    work = {
        "read": (("file_read", {"file_path": small}), ("read_text_file", {"path": small})),
        "list": (("glob", {"pattern": "*", "path": directory}),
                 ("list_directory", {"path": directory})),
    }
    # Warm both (the first calls fault in code and fill caches).
    for (our_call, their_call) in work.values():
        ours.call(*our_call)
        theirs.call(*their_call)
    times = {(what, side): [] for what in work for side in ("ours", "theirs")}
    cpu = {(what, side): 0.0 for what in work for side in ("ours", "theirs")}
    for _ in range(rounds):
        for what, (our_call, their_call) in work.items():
            for side, server, call in (("ours", ours, our_call), ("theirs", theirs, their_call)):
                cpu_before = server.cpu_seconds()
                started = time.perf_counter()
                for _ in range(n):
                    text = server.call(*call)
                elapsed = time.perf_counter() - started
                cpu[(what, side)] += server.cpu_seconds() - cpu_before
                if what == "read" and expected not in text:
                    sys.exit(f"{side}: unexpected read {text!r}")
                times[(what, side)].append(elapsed)
    ours.close()
    theirs.close()
    print(f"{n} calls a round, {rounds} rounds, interleaved; ms per round (min / median / max)")
    for what in work:
        row = []
        for side in ("ours", "theirs"):
            t = sorted(times[(what, side)])
            row.append(f"{side} {t[0]*1e3:.0f} / {t[len(t)//2]*1e3:.0f} / {t[-1]*1e3:.0f}")
        ratios = sorted(a / b for a, b in zip(times[(what, "ours")], times[(what, "theirs")]))
        print(f"{what}: {'; '.join(row)}; ratio ours/theirs by round: median "
              f"{ratios[len(ratios)//2]:.2f} (min {ratios[0]:.2f}, max {ratios[-1]:.2f})")
    calls = n * rounds
    for what in work:
        ours_cpu, theirs_cpu = cpu[(what, "ours")], cpu[(what, "theirs")]
        print(f"{what} CPU a call (server and its processes): ours {ours_cpu/calls*1e3:.3f} ms; "
              f"theirs {theirs_cpu/calls*1e3:.3f} ms; ratio {ours_cpu/max(theirs_cpu, 1e-9):.2f}")


def main():
    if sys.argv[1] == "versus":
        binary, reference, n, rounds, directory = sys.argv[2:7]
        versus(binary, reference, int(n), int(rounds), directory)
        return
    how, program, n, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    with open(path, encoding="utf-8") as f:
        expected = f.read()
    {"mcp": mcp, "cli": cli}[how](program, n, path, expected)


if __name__ == "__main__":
    main()
