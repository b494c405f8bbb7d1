#!/usr/bin/env bash
# Builds the OCI image (container/build.sh) and drives `ikigai-tools mcp
# --listen` inside it with the official MCP Python SDK over HTTP with a
# token: tests/container/test_container.py, run as a platform would run it
# (README, "Many workspaces"): --read-only --cap-drop=all --user 65534, a
# writable workspace volume, the token from a file.
#
#   tests/container/run.sh [BINARY] [pytest args...]
#
# BINARY: a static ikigai-tools to put in the image (default: the one
# ./install.sh builds). Where this machine cannot run a container, it says
# why on one line starting "tests/container: skipped:" and exits 0. The
# virtual environment is tests/mcp's (the same pins, MCP_VENV=DIR moves it).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${MCP_VENV:-$root/target/mcp-venv}"
mapfile -t pins <"$root/tests/mcp/pins.txt"
image="localhost/ikigai-tools:test"

skip() {
    echo "tests/container: skipped: $*"
    exit 0
}

binary="${1:-}"
shift || true
command -v podman >/dev/null 2>&1 || skip "podman is not installed (apt-get install podman runc)"
# The test makes the volume and the token file the container's user owns.
[ "$(id -u)" -eq 0 ] || skip "run as root: the workspace and the token file are chowned to 65534 (rootless podman is not tried)"

build_args=(--tag "$image")
[ -n "$binary" ] && build_args+=(--binary "$binary")
"$root/container/build.sh" "${build_args[@]}"

# podman asks by default for more open files and processes than a process
# without CAP_SYS_RESOURCE may set (a VM's or a nested container's root):
# ask for this shell's own hard limit of files and a few processes.
run_args=(--read-only --cap-drop=all --user 65534
    --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096)
# crun refuses hybrid cgroups (v1 with a v2 hierarchy beside it); runc runs
# there. The first runtime that starts the image is used; where none does,
# the last one's error says why.
runtime=""
why=""
tried=""
for candidate in crun runc; do
    command -v "$candidate" >/dev/null 2>&1 || continue
    tried="$candidate"
    if why="$(podman run --rm --runtime "$candidate" "${run_args[@]}" \
        --entrypoint /usr/bin/ikigai-tools "$image" --list 2>&1 >/dev/null)"; then
        runtime="$candidate"
        break
    fi
done
if [ -z "$runtime" ]; then
    [ -n "$why" ] || skip "neither crun nor runc is installed (apt-get install runc)"
    # The error's last line is podman's own: "Error: ...".
    skip "podman cannot run a container here ($tried): ${why##*$'\n'}"
fi
echo "tests/container: running the image with $runtime"

. "$root/tests/pinned_venv.sh"
VENV_VAR=MCP_VENV pinned_venv tests/container "$venv" "${pins[@]}"

IKIGAI_CONTAINER_IMAGE="$image" IKIGAI_CONTAINER_RUN="--runtime $runtime ${run_args[*]}" \
    exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$here/test_container.py" "$@"
