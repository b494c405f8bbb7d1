#!/usr/bin/env bash
# Drives `ikigai-tools mcp` with the official MCP Python SDK (both its
# `legacy` and `auto` modes): tests/mcp/test_mcp.py.
#
#   tests/mcp/run.sh [BINARY] [pytest args...]
#
# BINARY defaults to target/debug/ikigai-tools (built if missing). The
# virtual environment lives in target/mcp-venv (ignored by git) and is made
# on the first run with the pinned versions below (MCP_VENV=DIR puts it
# elsewhere, e.g. for another user).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${MCP_VENV:-$root/target/mcp-venv}"
# The MCP Python SDK and pytest, pinned (tests/container/run.sh shares them).
mapfile -t pins <"$here/pins.txt"

binary="${1:-$root/target/debug/ikigai-tools}"
shift || true
if [ ! -x "$binary" ]; then
    (cd "$root" && cargo build --quiet)
fi
binary="$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"

. "$root/tests/pinned_venv.sh"
VENV_VAR=MCP_VENV pinned_venv tests/mcp "$venv" "${pins[@]}"

IKIGAI_TOOLS_BIN="$binary" exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$here/test_mcp.py" "$@"
