#!/usr/bin/env bash
# The markdown differential (tests/web/differential.py): web_fetch against
# the markdownify and html2text Python packages on the saved pages of
# tests/fixtures/web/, served on 127.0.0.1. Prints the differences and ends
# with `N passed, N failed`.
#
#   tests/web/run.sh [BINARY] [--report FILE]
#
# BINARY defaults to target/debug/ikigai-tools (built if missing). The
# virtual environment lives in target/web-venv (ignored by git) and is made
# on the first run with the pinned versions below (WEB_VENV=DIR puts it
# elsewhere).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${WEB_VENV:-$root/target/web-venv}"
pins=("markdownify==1.2.3" "html2text==2025.4.15")

binary="${1:-$root/target/debug/ikigai-tools}"
shift || true
if [ ! -x "$binary" ]; then
    (cd "$root" && cargo build --quiet)
fi
binary="$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"
if ! IKIGAI_TOOLS_PROFILE=full "$binary" --list | grep -q -x web-fetch; then
    echo "tests/web: $binary has no web_fetch" >&2
    exit 1
fi

. "$root/tests/pinned_venv.sh"
VENV_VAR=WEB_VENV pinned_venv tests/web "$venv" "${pins[@]}"

exec "$venv/bin/python" "$here/differential.py" "$binary" "$@"
