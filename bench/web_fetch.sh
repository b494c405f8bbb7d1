#!/usr/bin/env bash
# web_fetch against the MCP reference fetch server (`mcp-server-fetch` from
# PyPI) on the same 5 MB HTML page, served on 127.0.0.1: wall time and peak
# RSS side by side, as ratios (ours / theirs) from one run.
#
#   bench/web_fetch.sh                 # builds ours: cargo build --release
#   BENCH_BINARY=PATH bench/web_fetch.sh
#
# Three measurements, all in this one run:
# - over MCP, one stdio session of each server driven from one Python
#   process (bench/web_fetch.py), the calls interleaved: the first call with
#   the server's start (`cold`), then the median of BENCH_RUNS calls, and the
#   session's peak RSS (wait4: the largest of the server and what it waited
#   for; ours runs each call in a child of its spawner, which the server
#   does not wait for, so its figure is the server's alone and a call's peak
#   is the link's, below);
# - ours as an ikigai host calls it: the `web-fetch` link, JSON on stdin, one
#   process a call, under /usr/bin/time (median wall time, largest RSS).
# Both convert the whole page and answer its first part: ours its default
# `limit` of lines, theirs its default `max_length` of 5,000 characters.
# The reference server runs with --ignore-robots-txt (the page has none) and
# --allow-private-ips (the page is on 127.0.0.1); ours with
# IKIGAI_TOOLS_FETCH_ALLOW=127.0.0.1.
#
# Settings (environment):
#   BENCH_BINARY=PATH   our binary (default: target/release/ikigai-tools)
#   BENCH_MB=N          the page's size in MB (default 5)
#   BENCH_RUNS=N        timed calls a side after the first (default 1: the
#                       reference server takes minutes a call on this page)
#   FETCH_VENV=DIR      the reference server's venv (default target/fetch-venv)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
mb="${BENCH_MB:-5}"
runs="${BENCH_RUNS:-1}"
venv="${FETCH_VENV:-$root/target/fetch-venv}"
pin="mcp-server-fetch==2026.10.24"

say() { printf '%s\n' "$*" >&2; }
[ -x /usr/bin/time ] || { say "bench: /usr/bin/time is needed: apt-get install -y time"; exit 1; }

binary="${BENCH_BINARY:-}"
if [ -z "$binary" ]; then
    say "bench: cargo build --release"
    (cd "$root" && cargo build --release --quiet)
    binary="$root/target/release/ikigai-tools"
fi
binary="$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"

. "$root/tests/pinned_venv.sh"
VENV_VAR=FETCH_VENV pinned_venv bench "$venv" "$pin"

tmp="$(mktemp -d /tmp/ikigai-bench-web.XXXXXX)"
server_pid=""
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

# --- the page: an article's parts (headings, paragraphs with links and
# emphasis, lists, a table, a code block) repeated to BENCH_MB MB, inside the
# chrome of a real site (nav, sidebar, footer, scripts).
python3 - "$tmp/page.html" "$mb" <<'EOF'
import sys
path, mb = sys.argv[1], int(sys.argv[2])
head = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>The bench page</title><style>body{margin:auto}</style>
<script>window.analytics=[];</script></head><body>
<header><nav><a href="/">Home</a> <a href="/docs/">Docs</a> <a href="/blog/">Blog</a></nav></header>
<aside class="sidebar"><ul><li><a href="#s1">Section 1</a></li><li><a href="#s2">Section 2</a></li></ul></aside>
<main><article>
"""
tail = "</article></main><footer><p>&copy; 2026 Bench</p></footer></body></html>\n"
section = """<h2 id="s{i}">Section {i}: bounded reads</h2>
<p>Paragraph {i} says that a <em>client</em> decides how many bytes it keeps, and links to
<a href="https://example.org/notes/{i}">note {i}</a> and <a href="/local/{i}">a local page</a>.
The server decides how many it sends; <strong>trust the bytes you counted</strong>.</p>
<ul><li>Item one of {i}</li><li>Item two of {i}, with <code>code</code></li><li>Item three</li></ul>
<table><thead><tr><th>Limit</th><th>Default</th></tr></thead>
<tbody><tr><td>Body {i}</td><td>10 MB</td></tr><tr><td>Time</td><td>25 s</td></tr></tbody></table>
<pre><code>fn section_{i}(cap: usize) -&gt; usize {{
    cap.min({i})
}}</code></pre>
"""
with open(path, "w") as out:
    out.write(head)
    size, i = len(head), 0
    while size < mb * 1_000_000 - len(tail):
        i += 1
        part = section.format(i=i)
        out.write(part)
        size += len(part)
    out.write(tail)
EOF
page_bytes="$(wc -c < "$tmp/page.html")"

# --- the local server ---------------------------------------------------------
python3 -m http.server --bind 127.0.0.1 --directory "$tmp" 0 > "$tmp/server.log" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 1 100); do
    port="$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$tmp/server.log" | head -1)"
    [ -n "$port" ] && break
    sleep 0.05
done
[ -n "$port" ] || { say "bench: the page server did not start: $(cat "$tmp/server.log")"; exit 1; }
url="http://127.0.0.1:$port/page.html"

export IKIGAI_TOOLS_FETCH_ALLOW=127.0.0.1
mkdir -p "$tmp/bin"
ln -s "$binary" "$tmp/bin/web-fetch"
args="{\"url\":\"$url\"}"
first="$(IKIGAI_TOOLS_PROFILE=full "$tmp/bin/web-fetch" "$args")"
case "$first" in
    *'"error'*) say "bench: web_fetch answered: ${first:0:400}"; exit 1 ;;
esac

# --- over MCP, side by side ----------------------------------------------------
say "bench: one MCP session each, $runs calls after the first, interleaved"
ours_argv="[\"$binary\", \"mcp\", \"--unconfined\"]"
theirs_argv="[\"$venv/bin/mcp-server-fetch\", \"--ignore-robots-txt\", \"--allow-private-ips\"]"
mcp="$("$venv/bin/python" "$here/web_fetch.py" "$url" "$runs" "$ours_argv" "$theirs_argv")"

# --- ours through the link, a process a call ---------------------------------
say "bench: web-fetch through its link, $runs runs"
for _ in $(seq 1 "$runs"); do
    IKIGAI_TOOLS_PROFILE=full /usr/bin/time -f '%e %M' -a -o "$tmp/time.txt" \
        "$tmp/bin/web-fetch" "$args" > /dev/null
done
cli_ms="$(awk '{print $1 * 1000}' "$tmp/time.txt" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')"
cli_kb="$(awk '$2 > m {m = $2} END {print m}' "$tmp/time.txt")"

# --- the table -------------------------------------------------------------------
cpu="$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //' || true)"
echo "## web_fetch against mcp-server-fetch"
echo
echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- Machine: $(nproc) cores, ${cpu:-unknown CPU}, Linux $(uname -r)"
echo "- ikigai-tools $("$binary" --version 2>/dev/null | awk '{print $2}') ($binary); $pin"
echo "- The page: $page_bytes bytes of HTML on 127.0.0.1; $runs timed calls a side"
echo
MCP="$mcp" CLI_MS="$cli_ms" CLI_KB="$cli_kb" python3 - <<'EOF'
import json, os
m = json.loads(os.environ["MCP"])
o, t = m["ours"], m["theirs"]
cli_ms, cli_kb = float(os.environ["CLI_MS"]), int(os.environ["CLI_KB"])
def r(a, b):
    if not b:
        return "—"
    return f"{a / b:.3f}" if a / b < 0.01 else f"{a / b:.2f}"
print("| 5 MB page | web_fetch | mcp-server-fetch | Ratio |")
print("|---|---:|---:|---:|")
print(f"| a call over MCP (median) | {o['call_ms']:.0f} ms | {t['call_ms']:.0f} ms | **{r(o['call_ms'], t['call_ms'])}** |")
print(f"| start + handshake + first call | {o['cold_ms']:.0f} ms | {t['cold_ms']:.0f} ms | {r(o['cold_ms'], t['cold_ms'])} |")
print(f"| peak RSS: ours the call's process (the link's), theirs the server | {cli_kb / 1024:.1f} MiB | {t['peak_rss_kb'] / 1024:.1f} MiB | **{r(cli_kb, t['peak_rss_kb'])}** |")
print(f"| peak RSS of the server process | {o['peak_rss_kb'] / 1024:.1f} MiB | {t['peak_rss_kb'] / 1024:.1f} MiB | {r(o['peak_rss_kb'], t['peak_rss_kb'])} |")
print(f"| the `web-fetch` link, a process a call (median; peak RSS) | {cli_ms:.0f} ms; {cli_kb / 1024:.1f} MiB | — | {r(cli_ms, t['call_ms'])}; {r(cli_kb, t['peak_rss_kb'])} |")
print(f"| the answer (JSON-RPC bytes) | {o['answer_bytes']} | {t['answer_bytes']} | — |")
EOF
