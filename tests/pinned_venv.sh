# Sourced by the scripts that run Python packages (tests/mcp/run.sh,
# tests/web/run.sh, bench/web_fetch.sh): one way to make a virtual
# environment under target/ holding exactly the pinned versions.
#
#   pinned_venv WHO DIR PIN...
#
# Makes DIR with `python3 -m venv` unless it runs, and installs the PINs
# (`name==version`) unless `pip freeze` lists every one. WHO names the
# caller in messages. A DIR another user made is refused, saying which
# variable puts it elsewhere (the callers name it in their own message).

pinned_venv() {
    local who="$1" venv="$2"
    shift 2
    if ! "$venv/bin/python" -c '' 2>/dev/null; then
        if [ -e "$venv" ] && [ ! -w "$venv" ]; then
            echo "$who: $venv is not usable by $(id -un); set ${VENV_VAR:-the venv variable} to a directory of yours" >&2
            return 1
        fi
        echo "$who: creating $venv" >&2
        python3 -m venv --clear "$venv"
    fi
    local frozen pin missing=0
    frozen="$("$venv/bin/pip" freeze 2>/dev/null || true)"
    for pin in "$@"; do
        grep -q -x -F -e "$pin" <<<"$frozen" || missing=1
    done
    if [ "$missing" -eq 1 ]; then
        "$venv/bin/pip" install --quiet --disable-pip-version-check "$@"
    fi
}
