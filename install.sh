#!/bin/sh
# Installs ikigai-tools: PREFIX/bin/ikigai-tools and relative symlinks to it in
# PREFIX/libexec/ikigai/, one per tool, which is where ikigai looks for tools.
# Run with --help for the options. Idempotent: running it twice changes nothing.
set -eu

usage() {
    cat <<'USAGE'
Usage: ./install.sh [OPTIONS]

Builds ikigai-tools in release mode (cargo; about 3 minutes the first time) and installs
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
  --profile NAME     the tools' profile: seed (the default: exactly the six seed
                     schemas ikigai hosts know) or full (more parameters, more
                     fields in the answers): the links then lead to
                     PREFIX/bin/ikigai-tools-full, a hard link of the binary
                     whose name makes full its default, with no setting in the host
  --tool-suffix      name the links <tool>-tool (file-read-tool), as current ikigai
                     releases scan for, instead of <tool>
  --shellclaw DIR    also fill the shellclaw tools directory DIR with links named by
                     schema name (bash, file_read, ...)
  --uninstall        remove what an install made: the binary, its links in
                     PREFIX/libexec/ikigai (then the directory, if empty) and in
                     the shellclaw directories it filled (recorded; or --shellclaw DIR)
  -h, --help         this text
USAGE
}

# A mistake on the command line: one line on stderr, exit status 2.
usage_error() {
    echo "install.sh: $* (see --help)" >&2
    exit 2
}

# What option $1 takes, for its usage error.
takes() {
    case "$1" in
        --binary) echo "a path: $1 PATH" ;;
        --profile) echo "a profile: $1 seed|full" ;;
        *) echo "a directory: $1 DIR" ;;
    esac
}

# Sets option $1 to the value $2.
set_option() {
    case "$1" in
        --prefix) prefix="$2" ;;
        --destdir) destdir="$2" ;;
        --binary) binary="$2" ;;
        --shellclaw) shellclaw="$2" ;;
        --profile) profile="$2" ;;
    esac
}

prefix=""
destdir="${DESTDIR:-}"
binary=""
dynamic=0
suffix=""
shellclaw=""
profile="seed"
uninstall=0

while [ $# -gt 0 ]; do
    case "$1" in
        --prefix|--destdir|--binary|--shellclaw|--profile)
            # The value is the next argument: not missing, not empty, not
            # the next option.
            [ $# -ge 2 ] && [ -n "$2" ] || usage_error "$1 needs $(takes "$1")"
            case "$2" in
                -*) usage_error "$1 needs $(takes "$1"), not the option '$2'" ;;
            esac
            set_option "$1" "$2"
            shift 2 ;;
        --prefix=*|--destdir=*|--binary=*|--shellclaw=*|--profile=*)
            option="${1%%=*}"
            [ -n "${1#*=}" ] || usage_error "$option needs $(takes "$option")"
            set_option "$option" "${1#*=}"
            shift ;;
        --dynamic) dynamic=1; shift ;;
        --tool-suffix) suffix="-tool"; shift ;;
        --uninstall) uninstall=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage_error "unknown option '$1'" ;;
    esac
done

case "$profile" in
    seed|full) ;;
    *) usage_error "--profile is seed or full, not '$profile'" ;;
esac
if [ -z "$prefix" ]; then
    if [ -n "${PREFIX:-}" ]; then
        prefix="$PREFIX"
    elif [ -n "${HOME:-}" ]; then
        prefix="$HOME/.local"
    else
        usage_error "HOME is not set, so there is no default prefix: give --prefix DIR"
    fi
fi
case "$prefix" in
    /*) ;;
    *) usage_error "--prefix must be an absolute path, got '$prefix'" ;;
esac

root="$destdir$prefix"
bindir="$root/bin"
libexec="$root/libexec/ikigai"
target="$bindir/ikigai-tools"
# The full profile's name for the same binary (a hard link): a binary run
# under this name serves the full profile by default.
full_target="$bindir/ikigai-tools-full"
# Where the links lead: the binary, under the name of the profile asked for.
if [ "$profile" = full ]; then link_target="$full_target"; else link_target="$target"; fi
# The shellclaw directories an install filled, one a line, for --uninstall
# (hidden: hosts skip hidden files; not executable: never taken for a tool).
record="$libexec/.shellclaw-dirs"

say() { printf '%s\n' "$*"; }

# What a link to $2 (default: $link_target) says, made in the directory of LINK $1.
link_text() { realpath -m --relative-to="$(dirname "$1")" "${2:-$link_target}"; }

# Whether LINK is one of ours: a symbolic link to this install's binary,
# whether the binary is still there or not (a link left dangling by an
# earlier uninstall), spelt as install.sh spells it or otherwise (an
# absolute link, a path through other directories); or a dangling link into
# PREFIX/libexec/ikigai (a link to one of the links removed).
is_ours() {
    [ -L "$1" ] || return 1
    for binary_name in "$target" "$full_target"; do
        [ "$(readlink "$1")" = "$(link_text "$1" "$binary_name")" ] && return 0
        [ "$(realpath -m -- "$1")" = "$(realpath -m -- "$binary_name")" ] && return 0
    done
    resolved="$(realpath -m -- "$1")"
    case "$resolved" in
        "$(realpath -m -- "$libexec")"/*) [ ! -e "$1" ] ;;
        *) return 1 ;;
    esac
}

# Removes a symlink only if it is one of ours, so that an uninstall never
# deletes somebody else's tool.
removed=0
remove_our_link() {
    if is_ours "$1"; then
        rm -f "$1"
        say "removed $1"
        removed=$((removed + 1))
    fi
}

# Removes our links in directory $1.
remove_our_links_in() {
    for link in "$1"/*; do remove_our_link "$link"; done
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
    # Every link to the binary, whatever tools the installed version had:
    # in the shellclaw directories first (the given one, and those the
    # installs recorded), whose links may lead through those of libexec.
    [ -z "$shellclaw" ] || remove_our_links_in "$shellclaw"
    if [ -f "$record" ]; then
        while IFS= read -r dir; do
            [ -z "$dir" ] || remove_our_links_in "$dir"
        done <"$record"
        rm -f "$record"
    fi
    remove_our_links_in "$libexec"
    for binary_name in "$full_target" "$target"; do
        if [ -f "$binary_name" ]; then
            rm -f "$binary_name"
            say "removed $binary_name"
            removed=$((removed + 1))
        fi
    done
    # Our directory, if nothing else is left in it; PREFIX/bin and
    # PREFIX/libexec may be anybody's, and stay.
    if [ -d "$libexec" ] && rmdir "$libexec" 2>/dev/null; then
        say "removed $libexec"
        removed=$((removed + 1))
    fi
    if [ "$removed" -eq 0 ]; then
        say "nothing of ikigai-tools was found in $root; nothing was removed"
    else
        say "ikigai-tools uninstalled from $root"
    fi
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
                say "building ikigai-tools (cargo build --release, statically linked; \
the first build takes about 3 minutes)"
                # cargo's progress goes to stderr, as it comes.
                (cd "$here" && RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static $entry" \
                    cargo build --release --locked --target "$host")
                binary="$here/target/$host/release/ikigai-tools"
            fi ;;
    esac
    if [ -z "$binary" ]; then
        say "building ikigai-tools (cargo build --release; the first build takes about 3 minutes)"
        (cd "$here" && cargo build --release --locked)
        binary="$here/target/release/ikigai-tools"
    fi
fi
[ -x "$binary" ] || { echo "install.sh: $binary is not an executable" >&2; exit 1; }
# The tools' command names (file-read), from the binary itself; shellclaw
# finds a tool by its schema name (file_read).
tools="$(IKIGAI_TOOLS_PROFILE="$profile" "$binary" --list)" ||
    { echo "install.sh: $binary --list failed" >&2; exit 1; }
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
if [ "$profile" = full ]; then
    # The same file under the full profile's name: a hard link, made beside
    # and renamed over, so that it is never missing nor half there; a copy
    # where the file system has no hard links.
    if [ -f "$full_target" ] && [ "$full_target" -ef "$target" ]; then
        say "unchanged $full_target"
    else
        tmp="$bindir/.ikigai-tools-full.install.$$"
        ln -f "$target" "$tmp" 2>/dev/null || cp "$target" "$tmp"
        mv -f "$tmp" "$full_target"
        say "installed $full_target (the full profile)"
    fi
fi

status=0
# The full profile's own tools (job-output, job-kill, job-list): a seed
# install removes the links a full one made for them.
all_tools="$(IKIGAI_TOOLS_PROFILE=full "$binary" --list)" || all_tools="$tools"
for t in $all_tools; do
    case " $(printf '%s ' $tools)" in
        *" $t "*) ;;
        *)
            remove_our_link "$libexec/$t"
            remove_our_link "$libexec/$t-tool"
            [ -z "$shellclaw" ] || remove_our_link "$shellclaw/$(printf '%s' "$t" | tr - _)"
            ;;
    esac
done
for t in $tools; do
    # One naming style at a time: drop our links of the other style.
    if [ -n "$suffix" ]; then remove_our_link "$libexec/$t"; else remove_our_link "$libexec/$t-tool"; fi
    make_link "$libexec/$t$suffix" || status=1
done
if [ -n "$shellclaw" ]; then
    mkdir -p "$shellclaw"
    for t in $shellclaw_tools; do make_link "$shellclaw/$t" || status=1; done
    # Recorded, so that --uninstall finds these links without --shellclaw.
    dir="$(realpath -m -- "$shellclaw")"
    if ! { [ -f "$record" ] && grep -qxF -- "$dir" "$record"; }; then
        printf '%s\n' "$dir" >>"$record"
    fi
fi

if [ "$status" -ne 0 ]; then
    echo "install.sh: not done: some links could not be made (see above)" >&2
    exit "$status"
fi
if [ "$profile" = seed ] && [ -f "$full_target" ]; then
    # Back to the seed profile: the links lead to ikigai-tools again, and
    # the full profile's name goes.
    rm -f "$full_target"
    say "removed $full_target"
fi
say "done; try: echo '{\"command\":\"echo hello\"}' | $libexec/bash$suffix"
# The suite by name (ikigai-tools mcp, ikigai-tools catalog) needs
# PREFIX/bin on PATH; not said when staging for a package (DESTDIR).
if [ -z "$destdir" ]; then
    case ":${PATH:-}:" in
        *":$bindir:"* | *":$bindir/:"*) ;;
        *) say "note: $bindir is not on your PATH; to run ikigai-tools by name, add it:" \
               "export PATH=\"$bindir:\$PATH\"" ;;
    esac
fi
