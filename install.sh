#!/bin/sh
# Installs ikigai-tools: PREFIX/bin/ikigai-tools and relative symlinks to it in
# PREFIX/libexec/ikigai/, one per tool, which is where ikigai looks for tools.
# Run with --help for the options. Idempotent: running it twice changes nothing.
set -eu

usage() {
    cat <<'USAGE'
Usage: ./install.sh [OPTIONS]

Builds ikigai-tools in release mode (cargo) and installs
  PREFIX/bin/ikigai-tools
  PREFIX/libexec/ikigai/<tool>  (relative symlinks, one per tool: bash, file-read, ...;
                                 the binary's `ikigai-tools --list` names them)

Options:
  --prefix DIR       where to install (default: $PREFIX, else $HOME/.local)
  --destdir DIR      stage the install under DIR (default: $DESTDIR), for packagers
  --binary PATH      install this binary instead of building one
  --dynamic          link the binary dynamically to glibc (by default it is
                     linked statically on glibc Linux: a tool starts in half
                     the time, and hosts start every tool at every start-up)
  --tool-suffix      name the links <tool>-tool (file-read-tool), as current ikigai
                     releases scan for, instead of <tool>
  --shellclaw DIR    also fill the shellclaw tools directory DIR with links named by
                     schema name (bash, file_read, ...)
  --uninstall        remove what an install made (with --shellclaw DIR, there too)
  -h, --help         this text
USAGE
}

prefix="${PREFIX:-${HOME:?HOME is not set; give --prefix}/.local}"
destdir="${DESTDIR:-}"
binary=""
dynamic=0
suffix=""
shellclaw=""
uninstall=0

while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
        --prefix=*) prefix="${1#*=}"; shift ;;
        --destdir) destdir="${2:?--destdir needs a directory}"; shift 2 ;;
        --destdir=*) destdir="${1#*=}"; shift ;;
        --binary) binary="${2:?--binary needs a path}"; shift 2 ;;
        --binary=*) binary="${1#*=}"; shift ;;
        --dynamic) dynamic=1; shift ;;
        --tool-suffix) suffix="-tool"; shift ;;
        --shellclaw) shellclaw="${2:?--shellclaw needs a directory}"; shift 2 ;;
        --shellclaw=*) shellclaw="${1#*=}"; shift ;;
        --uninstall) uninstall=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done

case "$prefix" in
    /*) ;;
    *) echo "install.sh: --prefix must be an absolute path, got '$prefix'" >&2; exit 2 ;;
esac

root="$destdir$prefix"
bindir="$root/bin"
libexec="$root/libexec/ikigai"
target="$bindir/ikigai-tools"

say() { printf '%s\n' "$*"; }

# What a link to $target says, made in the directory of LINK.
link_text() { realpath -m --relative-to="$(dirname "$1")" "$target"; }

# Removes a symlink only if it is one of ours (it points at this install's
# binary), so that an uninstall never deletes somebody else's tool.
remove_our_link() {
    if [ -L "$1" ] && [ "$(readlink "$1")" = "$(link_text "$1")" ]; then
        rm -f "$1"
        say "removed $1"
    fi
}

# Makes LINK a relative symlink to $target, unless it already is one.
make_link() {
    link="$1"
    if [ -e "$link" ] && [ ! -L "$link" ]; then
        echo "install.sh: $link exists and is not a symlink; leaving it alone" >&2
        return 1
    fi
    rel="$(link_text "$link")"
    if [ -L "$link" ] && [ "$(readlink "$link")" = "$rel" ]; then
        say "unchanged $link -> $rel"
        return 0
    fi
    ln -sfn "$rel" "$link"
    say "linked $link -> $rel"
}

if [ "$uninstall" -eq 1 ]; then
    # Every link to the binary, whatever tools the installed version had.
    for link in "$libexec"/* ${shellclaw:+"$shellclaw"/*}; do remove_our_link "$link"; done
    if [ -f "$target" ]; then rm -f "$target"; say "removed $target"; fi
    rmdir "$libexec" 2>/dev/null && say "removed $libexec" || true
    say "ikigai-tools uninstalled from $root"
    exit 0
fi

if [ -z "$binary" ]; then
    here="$(cd "$(dirname "$0")" && pwd)"
    command -v cargo >/dev/null 2>&1 || {
        echo "install.sh: cargo not found; install Rust (https://rustup.rs) or pass --binary" >&2
        exit 1
    }
    host="$(rustc -vV 2>/dev/null | sed -n 's/^host: //p')"
    case "$host" in
        *-linux-gnu*)
            if [ "$dynamic" -eq 0 ]; then
                # Static glibc: no dynamic loader at start-up. The target is
                # named so that RUSTFLAGS reach the binary, not the build
                # scripts and proc-macros, which must stay dynamic. On
                # x86-64 the entry point answers `TOOL --schema` before
                # glibc relocates the binary (src/entry.rs).
                entry=""
                case "$host" in
                    x86_64-*) entry="-C link-arg=-Wl,--entry=ikigai_tools_start,--defsym=ikigai_tools_start_is_defined=ikigai_tools_start" ;;
                esac
                say "building ikigai-tools (cargo build --release, statically linked)"
                (cd "$here" && RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static $entry" \
                    cargo build --release --locked --quiet --target "$host")
                binary="$here/target/$host/release/ikigai-tools"
            fi ;;
    esac
    if [ -z "$binary" ]; then
        say "building ikigai-tools (cargo build --release)"
        (cd "$here" && cargo build --release --locked --quiet)
        binary="$here/target/release/ikigai-tools"
    fi
fi
[ -x "$binary" ] || { echo "install.sh: $binary is not an executable" >&2; exit 1; }
# The tools' command names (file-read), from the binary itself; shellclaw
# finds a tool by its schema name (file_read).
tools="$("$binary" --list)" || { echo "install.sh: $binary --list failed" >&2; exit 1; }
shellclaw_tools="$(printf '%s\n' "$tools" | tr - _)"

mkdir -p "$bindir" "$libexec"
if [ -f "$target" ] && cmp -s "$binary" "$target"; then
    say "unchanged $target"
else
    # Copy then rename, so that a running tool never sees a half-written binary.
    tmp="$bindir/.ikigai-tools.install.$$"
    cp "$binary" "$tmp"
    chmod 0755 "$tmp"
    mv -f "$tmp" "$target"
    say "installed $target"
fi

status=0
for t in $tools; do
    # One naming style at a time: drop our links of the other style.
    if [ -n "$suffix" ]; then remove_our_link "$libexec/$t"; else remove_our_link "$libexec/$t-tool"; fi
    make_link "$libexec/$t$suffix" || status=1
done
if [ -n "$shellclaw" ]; then
    mkdir -p "$shellclaw"
    for t in $shellclaw_tools; do make_link "$shellclaw/$t" || status=1; done
fi

say "done; try: echo '{\"command\":\"echo hello\"}' | $libexec/bash$suffix"
exit "$status"
