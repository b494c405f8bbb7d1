#!/usr/bin/env bash
# `ikigai-tools mcp --listen` through chuk's mcp-cli (PyPI mcp-cli, pinned),
# a client nobody here wrote, run as a script runs it: `mcp-cli tools`
# against a server with a token must list the fourteen tools of the full
# profile, each by name.
#
#   tests/mcp_cli/run.sh [BINARY]
#
# BINARY defaults to target/debug/ikigai-tools (built if missing). The
# virtual environment lives in target/mcpcli-venv (MCP_CLI_VENV=DIR puts it
# elsewhere): about 600 MB, some 4 minutes to make the first time.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${MCP_CLI_VENV:-$root/target/mcpcli-venv}"
pins=("mcp-cli==0.20.1")

binary="${1:-$root/target/debug/ikigai-tools}"
if [ ! -x "$binary" ]; then
    (cd "$root" && cargo build --quiet)
fi

. "$root/tests/pinned_venv.sh"
VENV_VAR=MCP_CLI_VENV pinned_venv tests/mcp_cli "$venv" "${pins[@]}"

work="$(mktemp -d)"
server=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/root" "$work/home"
(umask 077; head -c 24 /dev/urandom | base64 >"$work/token")
. "$root/tests/listening_server.sh"
start_listening tests/mcp_cli "$binary" "$work/server.log" --token-file "$work/token" --root "$work/root"
printf '{"mcpServers": {"ikigai": {"url": "%s", "headers": {"Authorization": "Bearer %s"}}}}\n' \
    "$url" "$(cat "$work/token")" >"$work/server_config.json"

# mcp-cli keeps its settings in $HOME/.mcp-cli: a fresh one, not the user's.
listed="$(cd "$work" && HOME="$work/home" COLUMNS=200 timeout 120 "$venv/bin/mcp-cli" tools \
    --config-file server_config.json --server ikigai --quiet </dev/null 2>&1)" || {
    echo "tests/mcp_cli: mcp-cli tools failed:" >&2; echo "$listed" >&2; exit 1; }
want="bash file_read file_write file_edit glob grep job_output job_kill job_list job_write list_allowed_directories apply_patch web_fetch web_search"
got="$(sed -n 's/^│ ikigai *│ \([a-z_]*\) .*/\1/p' <<<"$listed" | tr '\n' ' ' | sed 's/ $//')"
passed=0
failed=0
if [ "$got" = "$want" ]; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "tests/mcp_cli: mcp-cli tools listed: $got (wanted: $want)" >&2
fi
if grep -q "Total tools available: 14" <<<"$listed"; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "tests/mcp_cli: no \"Total tools available: 14\" in:" >&2; echo "$listed" >&2
fi
echo "tests/mcp_cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
