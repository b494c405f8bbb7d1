#!/usr/bin/env bash
# Drives `ikigai-tools mcp` with the official MCP TypeScript SDK's default
# stdio client: tests/mcp/ts/test_mcp.mjs (plain node, ESM, node:test).
#
#   tests/mcp/ts/run.sh [BINARY] [node --test args...]
#
# BINARY defaults to target/debug/ikigai-tools (built if missing). The SDK,
# pinned by package.json and package-lock.json, is installed with `npm ci`
# into target/mcp-ts (ignored by git; MCP_TS_DIR=DIR puts it elsewhere, e.g.
# for another user) on the first run, and again when the lock changes. The
# test runs from there, where node finds the SDK.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
dir="${MCP_TS_DIR:-$root/target/mcp-ts}"

binary="${1:-$root/target/debug/ikigai-tools}"
shift || true
if [ ! -x "$binary" ]; then
    (cd "$root" && cargo build --quiet)
fi
binary="$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"

if [ -e "$dir" ] && [ ! -w "$dir" ]; then
    echo "tests/mcp/ts: $dir is not usable by $(id -un); set MCP_TS_DIR to a directory of yours" >&2
    exit 1
fi
mkdir -p "$dir"
if ! cmp -s "$here/package-lock.json" "$dir/package-lock.json" || [ ! -d "$dir/node_modules" ]; then
    echo "tests/mcp/ts: npm ci in $dir" >&2
    cp "$here/package.json" "$here/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
fi
cp "$here/test_mcp.mjs" "$dir/"

cd "$dir"
IKIGAI_TOOLS_BIN="$binary" exec node --test "$@" test_mcp.mjs
