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
# A venv copied or moved from elsewhere (a target/ copied with a checkout)
# is made anew: its scripts still name the old directory's python.

pinned_venv() {
    local who="$1" venv="$2"
    shift 2
    if ! "$venv/bin/python" -c '' 2>/dev/null || ! venv_is_here "$venv"; then
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

# Whether the venv's scripts run this directory's python: pip's first line
# names it as `python3 -m venv` was given it.
venv_is_here() {
    local first
    first="$(head -n 1 "$1/bin/pip" 2>/dev/null)" || return 1
    [[ "$first" == "#!$(cd "$1" && pwd)/bin/python"* || "$first" == "#!$(cd "$1" && pwd -P)/bin/python"* ]]
}
