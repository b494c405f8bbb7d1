#!/usr/bin/env bash
# Builds the ikigai-tools OCI image from container/Containerfile with podman
# (else buildah), from nothing but this machine's files: the static binary
# that ./install.sh builds and, unless --no-shell, the static busybox of
# Debian's busybox-static package as /bin/sh.
#
#   container/build.sh [--tag NAME] [--binary PATH] [--no-shell]
#
# --tag      the image's name (default: localhost/ikigai-tools:latest)
# --binary   put this static binary in the image instead of building one
# --no-shell leave busybox out: the bash tool then cannot run
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
tag="localhost/ikigai-tools:latest"
binary=""
shell=1
while [ $# -gt 0 ]; do
    case "$1" in
        --tag) tag="${2:?--tag needs a name}"; shift 2 ;;
        --binary) binary="${2:?--binary needs a path}"; shift 2 ;;
        --no-shell) shell=0; shift ;;
        *) echo "container/build.sh: unknown option $1 (see the comment at its top)" >&2; exit 2 ;;
    esac
done

if command -v podman >/dev/null 2>&1; then builder=(podman build)
elif command -v buildah >/dev/null 2>&1; then builder=(buildah bud)
else
    echo "container/build.sh: neither podman nor buildah is installed (apt-get install podman)" >&2
    exit 1
fi

context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
rootfs="$context/rootfs"
mkdir -p "$rootfs/etc" "$rootfs/tmp" "$context/workspace"
chmod 1777 "$rootfs/tmp"

# The binary and its links, as ./install.sh lays them under a prefix.
install_args=(--prefix /usr --destdir "$rootfs")
[ -n "$binary" ] && install_args+=(--binary "$binary")
"$root/install.sh" "${install_args[@]}" >/dev/null
# A scratch image has no libc nor loader: every program in it is static.
# (Without `file`, trust install.sh, which links statically on glibc.)
must_be_static() {
    command -v file >/dev/null 2>&1 || return 0
    file -b -L "$1" | grep -q 'static' && return 0
    echo "container/build.sh: $1 is not statically linked: a scratch image has no libc ($2)" >&2
    exit 1
}
must_be_static "${binary:-$rootfs/usr/bin/ikigai-tools}" "build it with ./install.sh, without --dynamic"

if [ "$shell" -eq 1 ]; then
    busybox="$(command -v busybox || true)"
    if [ -z "$busybox" ] || ! "$busybox" --list >/dev/null 2>&1; then
        echo "container/build.sh: no busybox for /bin/sh (apt-get install busybox-static, or --no-shell)" >&2
        exit 1
    fi
    must_be_static "$busybox" "apt-get install busybox-static"
    mkdir -p "$rootfs/bin"
    cp "$busybox" "$rootfs/bin/busybox"
    for applet in $("$busybox" --list); do
        [ "$applet" = busybox ] || ln -sf busybox "$rootfs/bin/$applet"
    done
fi

printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/tmp:/bin/sh\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$rootfs/etc/group"

build_args=()
[ "$shell" -eq 1 ] || build_args+=(--build-arg LICENSES=MIT)
"${builder[@]}" --quiet "${build_args[@]}" -f "$here/Containerfile" -t "$tag" "$context"
echo "container/build.sh: built $tag" >&2
