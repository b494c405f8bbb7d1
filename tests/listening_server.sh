# Sourced by the scripts that drive `ikigai-tools mcp --listen` from outside
# (tests/conformance/run.sh, tests/mcp_cli/run.sh): one way to start it and
# learn where it listens.
#
#   start_listening WHO BINARY LOG [ARG...]
#
# Starts `BINARY mcp --listen 0 ARG...` in the background, its stderr in LOG,
# and sets `server` (its pid) and `url` (the first stderr line says where it
# listens: docs/MCP.md). A server that ends, or does not say so within
# 10 s, is an error, its log shown; WHO names the caller in the message.

start_listening() {
    local who="$1" binary="$2" log="$3"
    shift 3
    "$binary" mcp --listen 0 "$@" 2>"$log" &
    server=$!
    url=""
    for _ in $(seq 100); do
        url="$(head -n 1 "$log" | sed -n 's/^ikigai-tools mcp: listening on \(http:[^ ]*\)$/\1/p')"
        [ -n "$url" ] && return 0
        kill -0 "$server" 2>/dev/null || break # it ended: no need to wait
        sleep 0.1
    done
    echo "$who: the server did not say where it listens:" >&2
    cat "$log" >&2
    return 1
}
