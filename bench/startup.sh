#!/usr/bin/env bash
# `grep --schema`, the call a host makes for every tool at every start,
# against its floors (bench/floor/build.sh): a minimal static-pie Rust
# program and a static C program that write the same bytes, and /bin/true.
# Checks first that every tool answers `--schema` and `--describe` under
# every spelling of its name exactly as `ikigai-tools TOOL --schema` does
# (the entry point answers the first before the C runtime starts,
# src/entry.rs; the second goes through clap), then prints the page faults
# of each program and one hyperfine run of all of them, as ratios.
#
#   apt-get install -y hyperfine time linux-perf   # perf: optional
#   bench/startup.sh
#
# Settings (environment):
#   BENCH_RUNS=N        runs per command (default 2000)
#   BENCH_BINARY=PATH   install this binary instead of building one
#   BENCH_TMP=DIR       where the install and the floors go (default: a new dir)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
runs="${BENCH_RUNS:-2000}"

say() { printf '%s\n' "$*" >&2; }
have() { command -v "$1" >/dev/null 2>&1; }
have hyperfine || { say "bench: hyperfine is needed: apt-get install -y hyperfine"; exit 1; }

tmp="${BENCH_TMP:-}"
if [ -z "$tmp" ]; then
    tmp="$(mktemp -d /tmp/ikigai-startup.XXXXXX)"
    trap 'rm -rf "$tmp"' EXIT
fi
mkdir -p "$tmp"
tmp="$(cd "$tmp" && pwd)"

if [ -n "${BENCH_BINARY:-}" ]; then
    "$root/install.sh" --prefix "$tmp/prefix" --binary "$BENCH_BINARY" >/dev/null
else
    say "bench: building and installing ikigai-tools (./install.sh)"
    "$root/install.sh" --prefix "$tmp/prefix" >/dev/null
fi
binary="$tmp/prefix/bin/ikigai-tools"
tools="$tmp/prefix/libexec/ikigai"
say "bench: building the floors (bench/floor/build.sh)"
"$here/floor/build.sh" "$tmp/floor"

# --- the answers, byte for byte --------------------------------------------
links="$tmp/spellings"
mkdir -p "$links"
checked=0
for command in $("$binary" --list); do
    name="$(printf '%s' "$command" | tr - _)"
    "$binary" "$command" --schema > "$tmp/expected"
    for spelling in "$command" "$name" "$command-tool" "${name}_tool" "$command.sh" "$command-tool.py"; do
        ln -sfn "$binary" "$links/$spelling"
        for flag in --schema --describe; do
            if ! "$links/$spelling" "$flag" | cmp -s - "$tmp/expected"; then
                say "bench: $spelling $flag differs from ikigai-tools $command --schema"
                exit 1
            fi
            checked=$((checked + 1))
        done
    done
done
say "bench: $checked answers identical to the normal path's"

# The code that runs before relocation must call nothing (no libc, no
# panics): its machine code holds no call and no jump out of itself.
if have objdump && have nm && nm "$binary" 2>/dev/null | grep ' schema_before_libc$' >/dev/null; then
    code="$(objdump -d --no-show-raw-insn --disassemble=schema_before_libc "$binary" \
        | sed -n '/<schema_before_libc>:/,/^$/p')"
    if printf '%s\n' "$code" | grep -E '\s(call|j[a-z]+)\s' | grep -v '<schema_before_libc[+>]' >&2; then
        say "bench: schema_before_libc calls out of itself (above): it runs before relocation"
        exit 1
    fi
    say "bench: schema_before_libc calls nothing"
else
    say "bench: no schema_before_libc in the binary (not linked with its entry point, src/entry.rs): not checked"
fi

# --- measuring ---------------------------------------------------------------
names=(ours)
cmds=("$tools/grep --schema")
for floor in rust-floor c-floor; do
    if [ -x "$tmp/floor/$floor" ]; then names+=("$floor"); cmds+=("$tmp/floor/$floor"); fi
done
names+=(true)
cmds+=(/bin/true)

# Page faults: perf's count (faults taken by the program, from its exec)
# where perf runs, and getrusage's (which also counts pages populated by
# madvise and the faults of the fork before the exec).
perf_ok=0
if have perf && perf stat -x, -e page-faults true >/dev/null 2>&1; then perf_ok=1; fi
echo "## \`grep --schema\` against its floors"
echo
echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, Linux $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- ikigai-tools: $(file -b "$binary" 2>/dev/null | grep -o 'static-pie linked\|statically linked\|dynamically linked' || echo '?'), $(stat -c %s "$binary") bytes"
echo
echo "| Program | Page faults (perf) | Page faults (rusage) |"
echo "|---|---:|---:|"
for i in "${!names[@]}"; do
    # shellcheck disable=SC2086 # the commands are words
    set -- ${cmds[$i]}
    pf="—"
    if [ "$perf_ok" = 1 ]; then
        pf="$(perf stat -x, -e page-faults -r 100 "$@" 2>&1 >/dev/null | tail -n1 | cut -d, -f1)"
    fi
    ru="—"
    if [ -x /usr/bin/time ]; then ru="$(/usr/bin/time -f %R "$@" 2>&1 >/dev/null | tail -n1)"; fi
    echo "| ${names[$i]} | $pf | $ru |"
done
echo

args=()
for i in "${!names[@]}"; do args+=(-n "${names[$i]}" "${cmds[$i]}"); done
say "bench: hyperfine, $runs runs each"
hyperfine -N -i --output=pipe --style=none -w 100 --runs "$runs" \
    --export-csv "$tmp/startup.csv" "${args[@]}" >/dev/null 2>"$tmp/hyperfine.log" \
    || { cat "$tmp/hyperfine.log" >&2; exit 1; }
median() { awk -F, -v name="$1" 'NR > 1 && $1 == name {print $(NF - 4)}' "$tmp/startup.csv"; }
ours="$(median ours)"
echo "Medians of one hyperfine run ($runs runs each, -N, output to a pipe); ratio = ours / it;"
echo "the target is ≤ 1.05 against rust-floor."
echo
echo "| Program | Median | \`grep --schema\` / it |"
echo "|---|---:|---:|"
for name in "${names[@]}"; do
    m="$(median "$name")"
    awk -v n="$name" -v m="$m" -v o="$ours" 'BEGIN { printf "| %s | %.0f µs | **%.2f** |\n", n, m * 1e6, o / m }'
done
echo
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
