#!/usr/bin/env bash
# Per-call cost of `ikigai-tools mcp` against the reference filesystem server
# (@modelcontextprotocol/server-filesystem, npm, pinned below), side by side
# in one run: one session each, N small file reads and N directory listings
# a round, interleaved, several rounds; prints both times and the ratios,
# in wall time and in CPU time (the server and every process under it).
#
#   bench/mcp_calls.sh [BINARY] [N] [ROUNDS]
#
# BINARY defaults to target/release/ikigai-tools (build it first:
# `cargo build --release`). Needs node and npm; the reference server is
# installed into $BENCH_DIR (default: a directory under target/).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
binary="$(realpath "${1:-$repo/target/release/ikigai-tools}")"
n="${2:-200}"
rounds="${3:-5}"
version="2026.8.31"
bench_dir="${BENCH_DIR:-$repo/target/bench-mcp}"
reference="$bench_dir/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"

if [ ! -f "$reference" ] || ! grep -q "\"version\": \"$version\"" \
    "$bench_dir/node_modules/@modelcontextprotocol/server-filesystem/package.json"; then
    mkdir -p "$bench_dir"
    npm install --no-audit --no-fund --silent --prefix "$bench_dir" \
        "@modelcontextprotocol/server-filesystem@$version" >&2
fi

data="$(mktemp -d)"
trap 'rm -rf "$data"' EXIT
printf 'a small file\nof three\nlines\n' > "$data/small.txt"
for i in $(seq 1 20); do printf '%s\n' "$i" > "$data/file$i.txt"; done
mkdir "$data/sub"

echo "ours: $binary ($(stat -c %s "$binary") bytes); theirs: server-filesystem $version, node $(node --version)"
python3 "$here/mcp_calls.py" versus "$binary" "node $reference" "$n" "$rounds" "$data"
