#!/usr/bin/env bash
# The official MCP conformance suite (npm @modelcontextprotocol/conformance,
# pinned; it drives HTTP servers only) against `ikigai-tools mcp --listen 0`
# with a temporary root. Every scenario for what the server claims must pass
# (server-initialize, ping, tools-list, the SSE streams, DNS rebinding); the
# others are listed in expected-failures.yml, and one of them passing fails
# the run too, so the list stays true.
#
#   tests/conformance/run.sh [BINARY]     (default target/debug/ikigai-tools)
#
# 0.1.14 and later import fs.globSync, which Node 22 has and Node 20 lacks;
# 0.1.13 runs on both.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
binary="${1:-$root/target/debug/ikigai-tools}"
version=0.1.13

suite="$root/target/conformance"
if [ ! -x "$suite/node_modules/.bin/conformance" ] \
    || ! grep -q "\"version\": \"$version\"" "$suite/node_modules/@modelcontextprotocol/conformance/package.json"; then
    mkdir -p "$suite"
    echo '{"private": true}' >"$suite/package.json"
    (cd "$suite" && npm install --silent --no-audit --no-fund "@modelcontextprotocol/conformance@$version")
fi

work="$(mktemp -d)"
server=""
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/root"
. "$root/tests/listening_server.sh"
start_listening conformance "$binary" "$work/server.log" --root "$work/root"
status=0
(cd "$suite" && timeout 600 node_modules/.bin/conformance server --url "$url" \
    --expected-failures "$here/expected-failures.yml" -o "$work/results") >"$work/suite.log" 2>&1 \
    || status=$?
sed -n '/=== SUMMARY ===/,$p' "$work/suite.log"
kill -TERM "$server"
server_status=0
wait "$server" || server_status=$?
server=""
if [ "$status" -ne 0 ]; then
    echo "conformance: the suite failed (exit $status); the whole log:" >&2
    cat "$work/suite.log" >&2
    exit 1
fi
if [ "$server_status" -ne 0 ]; then
    echo "conformance: the server exited $server_status on SIGTERM:" >&2
    tail -n 20 "$work/server.log" >&2
    exit 1
fi
echo "conformance: every claimed scenario passed; the server stopped cleanly"
