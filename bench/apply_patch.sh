#!/usr/bin/env bash
# apply_patch against file_edit for the same change: a patch of 100 hunks
# over 20 files, in one apply-patch call, against the same 100 edits as
# file_edit calls, one call a file (its `edits`) and one call an edit. All
# three in ONE hyperfine run, so that the load of the machine weighs on each
# alike. Prints the machine, the sizes and a Markdown table of medians and
# ratios (apply_patch / file_edit) with the target: apply_patch no slower
# than the same edits as file_edit calls (<= 1.0).
#
#   apt-get install -y hyperfine
#   bench/apply_patch.sh                        # builds ours with ./install.sh
#   BENCH_BINARY=target/release/ikigai-tools bench/apply_patch.sh
#
# The files are generated: 20 C-like files of 400 lines, each changed in 5
# places (one line replaced, three lines of context before and after in the
# patch, as OpenAI's apply_patch format asks; file_edit gets the changed line,
# which is unique, as a model sends it). Each side is a generated sh script
# of its calls, the arguments on each tool's stdin (the ikigai dialect), so
# that every side pays one shell and each call its start-up; the files are
# restored before every run (hyperfine --prepare). The three results are
# compared once before timing: the bench stops if they differ.
#
# Settings (environment):
#   BENCH_BINARY=PATH    our binary (default: built by ./install.sh)
#   BENCH_FILES=N        files in the patch (default 20)
#   BENCH_HUNKS=N        hunks a file (default 5)
#   BENCH_LINES=N        lines a file (default 400)
#   BENCH_RUNS=N         runs per command (default 20)
#   BENCH_WARMUP=N       warm-up runs per command (default 3)
#   BENCH_TMP=DIR        where the files go (default: a new dir in /tmp)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
files="${BENCH_FILES:-20}"
hunks="${BENCH_HUNKS:-5}"
lines="${BENCH_LINES:-400}"
runs="${BENCH_RUNS:-20}"
warmup="${BENCH_WARMUP:-3}"

say() { printf '%s\n' "$*" >&2; }
have() { command -v "$1" >/dev/null 2>&1; }

have hyperfine || { say "bench: hyperfine is needed: apt-get install -y hyperfine"; exit 1; }
if [ $((lines / hunks)) -lt 8 ]; then
    say "bench: BENCH_LINES must be at least 8 a hunk (BENCH_HUNKS=$hunks)"
    exit 1
fi

tmp="${BENCH_TMP:-}"
if [ -z "$tmp" ]; then
    tmp="$(mktemp -d /tmp/ikigai-bench-patch.XXXXXX)"
    cleanup() { rm -rf "$tmp"; }
else
    mkdir -p "$tmp"
    tmp="$(cd "$tmp" && pwd)"
    cleanup() { rm -rf "${tmp:?}/prefix" "${tmp:?}/data" "${tmp:?}/results"; }
fi
trap cleanup EXIT
mkdir -p "$tmp/data" "$tmp/results"
data="$tmp/data"

# --- the tools, installed as a host installs the full profile ----------------
if [ -n "${BENCH_BINARY:-}" ]; then
    "$root/install.sh" --prefix "$tmp/prefix" --binary "$BENCH_BINARY" --profile full >/dev/null
else
    say "bench: building and installing ikigai-tools (./install.sh --profile full)"
    "$root/install.sh" --prefix "$tmp/prefix" --profile full >/dev/null
fi
tools="$tmp/prefix/libexec/ikigai"
binary="$tmp/prefix/bin/ikigai-tools"
[ -x "$tools/apply-patch" ] || { say "bench: $tools/apply-patch is missing"; exit 1; }

# --- the files and the three ways of changing them ----------------------------
# Line I of file F: unique lines, with the braces and blank lines of code.
pristine="$data/pristine"
mkdir -p "$pristine"
for f in $(seq 1 "$files"); do
    awk -v f="$f" -v n="$lines" 'BEGIN {
        for (i = 1; i <= n; i++) {
            if (i % 10 == 0) print "}"
            else if (i % 10 == 1) print ""
            else if (i % 10 == 2) printf "static int fn_%d_%d(int x) {\n", f, i
            else printf "    int value_%d_%d = x * %d;\n", f, i, i
        }
    }' > "$pristine/file$f.c"
done

# The changed lines: hunk H of a file at line 5 + H * (lines / hunks), a
# `value` line, each with three lines of context on both sides.
step=$((lines / hunks))
changed_lines() { for h in $(seq 0 $((hunks - 1))); do echo $((5 + h * step)); done; }

# json_lines: stdin's lines as one JSON string's content (no quote or
# backslash occurs in the files).
json_lines() { awk '{printf "%s\\n", $0}'; }

patch="$data/patch.txt"
{
    echo "*** Begin Patch"
    for f in $(seq 1 "$files"); do
        echo "*** Update File: file$f.c"
        for at in $(changed_lines); do
            echo "@@"
            sed -n "$((at - 3)),$((at - 1))p" "$pristine/file$f.c" | sed 's/^/ /'
            sed -n "${at}p" "$pristine/file$f.c" | sed 's/^/-/'
            sed -n "${at}p" "$pristine/file$f.c" | sed 's/;$/ + 1;/; s/^/+/'
            sed -n "$((at + 1)),$((at + 3))p" "$pristine/file$f.c" | sed 's/^/ /'
        done
    done
    echo "*** End Patch"
} > "$patch"
args="$data/args"
mkdir -p "$args"
printf '{"input":"%s"}' "$(json_lines < "$patch")" > "$args/patch.json"

# file_edit: one call a file with its edits, and one call an edit.
by_file="$data/by_file.sh"
by_edit="$data/by_edit.sh"
echo "set -e" > "$by_file"
echo "set -e" > "$by_edit"
for f in $(seq 1 "$files"); do
    edits=()
    for at in $(changed_lines); do
        old="$(sed -n "${at}p" "$pristine/file$f.c")"
        new="${old%;} + 1;"
        edit="{\"old_string\":\"$old\",\"new_string\":\"$new\"}"
        edits+=("$edit")
        printf '{"file_path":"file%s.c",%s\n' "$f" "${edit#\{}" > "$args/edit_${f}_$at.json"
        echo "$tools/file-edit < $args/edit_${f}_$at.json > /dev/null" >> "$by_edit"
    done
    joined="$(IFS=,; echo "${edits[*]}")"
    printf '{"file_path":"file%s.c","edits":[%s]}' "$f" "$joined" > "$args/file_$f.json"
    echo "$tools/file-edit < $args/file_$f.json > /dev/null" >> "$by_file"
done
by_patch="$data/by_patch.sh"
printf 'set -e\n%s < %s > /dev/null\n' "$tools/apply-patch" "$args/patch.json" > "$by_patch"

# Restored in place: the timed commands run inside $work.
work="$data/work"
mkdir -p "$work"
restore="cp -f $pristine/file*.c $work/"

# --- the three agree ----------------------------------------------------------
for way in by_patch by_file by_edit; do
    eval "$restore"
    (cd "$work" && IKIGAI_TOOLS_PROFILE=full sh "$data/$way.sh") ||
        { say "bench: $way.sh failed"; exit 1; }
    cp -r "$work" "$data/result_$way"
done
for way in by_file by_edit; do
    diff -r "$data/result_by_patch" "$data/result_$way" >/dev/null ||
        { say "bench: apply_patch and $way leave different files"; exit 1; }
done
diff -r "$pristine" "$data/result_by_patch" >/dev/null &&
    { say "bench: the patch changed nothing"; exit 1; }

# --- what runs where -----------------------------------------------------------
cpu="$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //' || true)"
fs_type="$(df -PT "$tmp" 2>/dev/null | awk 'NR == 2 {print $2}' || echo '?')"
total=$((files * hunks))
echo "## apply_patch against file_edit"
echo
echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- Machine: $(nproc) cores, ${cpu:-unknown CPU}, Linux $(uname -r), $fs_type file system"
echo "- Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- ikigai-tools $("$binary" --version 2>/dev/null | awk '{print $2}'), $(hyperfine --version)"
echo "- Sizes: $files files of $lines lines, $hunks hunks a file ($total in all), patch $(wc -c < "$patch") bytes"
echo "- Command: bench/apply_patch.sh, $runs runs and $warmup warm-up runs per command"
echo

# --- measuring -----------------------------------------------------------------
say "bench: timing (hyperfine, $runs runs each)"
(
    cd "$work"
    IKIGAI_TOOLS_PROFILE=full hyperfine -N --output=pipe --style=none -w "$warmup" --runs "$runs" \
        --prepare "sh -c '$restore'" --export-csv "$tmp/results/patch.csv" \
        -n patch "sh $by_patch" -n by-file "sh $by_file" -n by-edit "sh $by_edit" >/dev/null
)
median() { awk -F, -v name="$1" 'NR > 1 && $1 == name {print $(NF - 4)}' "$tmp/results/patch.csv"; }
ms() { awk -v s="$1" 'BEGIN { printf "%.1f ms", s * 1000 }'; }
a="$(median patch)"
echo "Medians of hyperfine runs (-N; each side a sh script of its calls); ratio = apply_patch / file_edit."
echo
echo "| $total hunks over $files files | Time | apply_patch / this | Target |"
echo "|---|---:|---:|---|"
echo "| one apply_patch call | $(ms "$a") | — | — |"
for side in "by-file:$files file_edit calls, one a file (\`edits\`)" "by-edit:$total file_edit calls, one an edit"; do
    name="${side%%:*}"
    b="$(median "$name")"
    ratio="$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", a / b}')"
    verdict="$(awk -v r="$ratio" 'BEGIN {print (r <= 1.0) ? "≤ 1.0 ✓" : "≤ 1.0 ✗"}')"
    echo "| ${side#*:} | $(ms "$b") | **$ratio** | $verdict |"
done
echo
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
