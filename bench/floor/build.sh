#!/bin/sh
# Builds the floors of `TOOL --schema` into OUT, programs that write grep's
# schema and do nothing else:
#   OUT/rust-floor  `fn main` writing an include_bytes! of the schema, built
#                   as install.sh builds ikigai-tools (on glibc Linux static-pie,
#                   -C target-feature=+crt-static; the same release profile):
#                   the floor for a Rust binary with ASLR
#   OUT/c-floor     the same in C, `cc -O2 -static`: the floor of any binary
# A floor that cannot be built is left out, with the reason on stderr.
#
#   bench/floor/build.sh OUT
set -eu

out="${1:?usage: bench/floor/build.sh OUT}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
schema="$root/src/tools/grep.schema.json"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

if command -v cargo >/dev/null 2>&1; then
    host="$(rustc -vV 2>/dev/null | sed -n 's/^host: //p')"
    flags=""
    target=""
    case "$host" in
        *-linux-gnu*) flags="-C target-feature=+crt-static"; target="$host" ;;
    esac
    (cd "$here" && RUSTFLAGS="${RUSTFLAGS:-} $flags" \
        cargo build --release --locked --quiet ${target:+--target "$target"} --target-dir "$out/target")
    cp "$out/target/${target:+$target/}release/schema-floor" "$out/rust-floor"
else
    echo "bench/floor: no Rust floor: cargo not found" >&2
fi

if ! command -v cc >/dev/null 2>&1; then
    echo "bench/floor: no C floor: cc not found" >&2
elif ! cc -O2 -static -DSCHEMA="\"$schema\"" -o "$out/c-floor" "$here/floor.c" 2>"$out/cc.log"; then
    echo "bench/floor: no C floor: cc -static failed (static libc missing? apt-get install libc6-dev): $(head -n1 "$out/cc.log")" >&2
    rm -f "$out/c-floor"
fi
