#!/usr/bin/env bash
# The full profile's grep and glob side by side with ripgrep and fd, and the
# seed grep path against a baseline build (main's), all in ONE hyperfine run
# so that the load of the machine weighs on every command alike. Prints the
# machine, the versions, the answers' sizes and a Markdown table of medians
# and ratios (ours / theirs) with the targets: full grep <= 0.8x rg, full
# glob <= 0.8x fd, seed grep and glob no slower than the baseline (<= 1.05x:
# the noise of a shared machine).
#
#   apt-get install -y hyperfine ripgrep fd-find
#   bench/full.sh                                   # builds ours with ./install.sh
#   BENCH_BASELINE=/path/to/main/ikigai-tools bench/full.sh   # adds the seed rows
#
# The repository searched is generated in a temporary directory: a copy of
# BENCH_TREE (default /usr/include, about 8,000 files) as src/, a `.git`
# directory (a repository, for .gitignore) and a .gitignore naming build/,
# and build/ holding a second copy (hard links) that rg, fd and our full
# profile skip. The tools are installed with ./install.sh (the full profile
# through --profile full, as a host installs it) and called as a host calls
# them: their links with the JSON arguments in $1, run by hyperfine without
# a shell (-N). rg and fd run with their defaults (parallel, unsorted); our
# answers are sorted.
#
# Settings (environment):
#   BENCH_TREE=DIR       the tree copied into the repository (default /usr/include)
#   BENCH_BINARY=PATH    our binary (default: built by ./install.sh)
#   BENCH_BASELINE=PATH  the binary the seed path is compared with (main's
#                        build); without it the seed rows are skipped
#   BENCH_RUNS=N         runs per command (default 20)
#   BENCH_WARMUP=N       warm-up runs per command (default 3)
#   BENCH_PATTERN=RE     the pattern (default 'static int')
#   BENCH_TMP=DIR        where the repository goes (default: a new dir in /tmp)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
tree="${BENCH_TREE:-/usr/include}"
runs="${BENCH_RUNS:-20}"
warmup="${BENCH_WARMUP:-3}"
pattern="${BENCH_PATTERN:-static int}"

say() { printf '%s\n' "$*" >&2; }
have() { command -v "$1" >/dev/null 2>&1; }

have hyperfine || { say "bench: hyperfine is needed: apt-get install -y hyperfine"; exit 1; }
have rg || { say "bench: rg is needed: apt-get install -y ripgrep"; exit 1; }
fd=""
if have fdfind; then fd=fdfind; elif have fd; then fd=fd; else
    say "bench: fd not installed (apt-get install -y fd-find): the glob rows are skipped"
fi
[ -d "$tree" ] || { say "bench: $tree is not a directory (BENCH_TREE)"; exit 1; }

tmp="${BENCH_TMP:-}"
if [ -z "$tmp" ]; then
    tmp="$(mktemp -d /tmp/ikigai-bench-full.XXXXXX)"
    cleanup() { rm -rf "$tmp"; }
else
    mkdir -p "$tmp"
    tmp="$(cd "$tmp" && pwd)"
    cleanup() { rm -rf "${tmp:?}/seed" "${tmp:?}/full" "${tmp:?}/base" "${tmp:?}/repo" "${tmp:?}/results"; }
fi
trap cleanup EXIT
mkdir -p "$tmp/results"

# --- the tools ---------------------------------------------------------------
if [ -z "${BENCH_BINARY:-}" ]; then
    say "bench: building ikigai-tools (./install.sh)"
    "$root/install.sh" --prefix "$tmp/seed" >/dev/null
    BENCH_BINARY="$tmp/seed/bin/ikigai-tools"
else
    "$root/install.sh" --prefix "$tmp/seed" --binary "$BENCH_BINARY" >/dev/null
fi
"$root/install.sh" --prefix "$tmp/full" --binary "$BENCH_BINARY" --profile full >/dev/null
seed_tools="$tmp/seed/libexec/ikigai"
full_tools="$tmp/full/libexec/ikigai"
base_tools=""
if [ -n "${BENCH_BASELINE:-}" ]; then
    "$root/install.sh" --prefix "$tmp/base" --binary "$BENCH_BASELINE" >/dev/null
    base_tools="$tmp/base/libexec/ikigai"
else
    say "bench: no BENCH_BASELINE: the seed-path rows are skipped"
fi

# --- the repository ------------------------------------------------------------
repo="$tmp/repo"
say "bench: copying $tree into $repo/src, and build/ (ignored) beside it"
mkdir -p "$repo/.git"
cp -r "$tree" "$repo/src"
cp -al "$repo/src" "$repo/build"
printf 'build/\n*.o\n' > "$repo/.gitignore"
files="$(find "$repo/src" -type f | wc -l)"
ignored="$(find "$repo/build" -type f | wc -l)"
size="$(du -sm "$repo/src" | cut -f1)"

version() { if have "$1"; then "$@" 2>/dev/null | head -n1; else echo "not installed"; fi; }
cpu="$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //' || true)"
echo "## Full profile benchmark run"
echo
echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- Machine: $(nproc) cores, ${cpu:-unknown CPU}, Linux $(uname -r)"
echo "- Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- ikigai-tools $("$BENCH_BINARY" --version 2>/dev/null | awk '{print $2}'), $(version rg --version), $(version "${fd:-fd}" --version), $(version hyperfine --version)"
echo "- Repository: $files files ($size MB) from $tree in src/, $ignored more in build/ (ignored by .gitignore)"
echo "- Pattern: \`$pattern\`; $runs runs each after $warmup warm-up runs, all in one hyperfine run"
echo "- Command: bench/full.sh$( [ -n "${BENCH_BASELINE:-}" ] && printf ' (BENCH_BASELINE: main at its build)')"
echo

q() { printf "'%s'" "$1"; } # single-quotes a word for hyperfine's -N parser
j() { printf '{"pattern":"%s","path":"%s"%s}' "$pattern" "$repo" "${1:-}"; }

# name, command, and the pairs to compare: name:peer:target:label
names=()
cmds=()
add() { names+=("$1"); cmds+=("$2"); }
pairs=()

add full-content "$full_tools/grep $(q "$(j)")"
add rg-content "rg -n $(q "$pattern") $repo"
pairs+=("full-content:rg-content:0.8:grep content|\`rg -n\`")
add full-context "$full_tools/grep $(q "$(j ',"context":2')")"
add rg-context "rg -n -C 2 $(q "$pattern") $repo"
pairs+=("full-context:rg-context:0.8:grep \`context: 2\`|\`rg -n -C 2\`")
add full-files "$full_tools/grep $(q "$(j ',"output_mode":"files_with_matches"')")"
add rg-files "rg -l $(q "$pattern") $repo"
pairs+=("full-files:rg-files:0.8:grep files_with_matches|\`rg -l\`")
add full-count "$full_tools/grep $(q "$(j ',"output_mode":"count"')")"
add rg-count "rg -c $(q "$pattern") $repo"
pairs+=("full-count:rg-count:0.8:grep count|\`rg -c\`")
add full-icase "$full_tools/grep $(q "$(j ',"case_insensitive":true')")"
add rg-icase "rg -n -i $(q "$pattern") $repo"
pairs+=("full-icase:rg-icase:0.8:grep case_insensitive|\`rg -n -i\`")
add rg-sorted "rg -n --sort path $(q "$pattern") $repo"
pairs+=("full-content:rg-sorted:-:grep content|\`rg -n --sort path\` (one thread)")
if [ -n "$fd" ]; then
    add full-glob "$full_tools/glob $(q "{\"pattern\":\"**/*.h\",\"path\":\"$repo\"}")"
    add fd-glob "$fd --glob '*.h' $repo"
    pairs+=("full-glob:fd-glob:0.8:glob \`**/*.h\`|\`fd --glob '*.h'\`")
fi
seed_grep="$(q "{\"pattern\":\"$pattern\",\"path\":\"$repo/src\",\"glob\":\"**/*.h\"}")"
seed_glob="$(q "{\"pattern\":\"**/*.h\",\"path\":\"$repo/src\"}")"
if [ -n "$base_tools" ]; then
    add seed-grep "$seed_tools/grep $seed_grep"
    add base-grep "$base_tools/grep $seed_grep"
    pairs+=("seed-grep:base-grep:1.05:seed grep \`**/*.h\` in src/|the baseline's seed grep")
    add seed-glob "$seed_tools/glob $seed_glob"
    add base-glob "$base_tools/glob $seed_glob"
    pairs+=("seed-glob:base-glob:1.05:seed glob \`**/*.h\` in src/|the baseline's seed glob")
fi

# What each command answers (so that a fast wrong answer shows): the size
# of its output, and our `count`.
echo "| Command | Output bytes | Our \`count\` / \`files_searched\` |"
echo "|---|---:|---|"
for i in "${!names[@]}"; do
    eval "set -- ${cmds[$i]}"
    out="$("$@" 2>/dev/null || true)"
    extra=""
    case "${names[$i]}" in
        full-*|seed-*|base-*)
            extra="$(printf '%s' "$out" | python3 -c 'import json,sys
a=json.load(sys.stdin); print(a.get("count"), "/", a.get("files_searched", "-"), "(cut)" if a.get("truncated") or "next_offset" in a else "")' 2>/dev/null || echo '?')" ;;
    esac
    echo "| ${names[$i]} | ${#out} | $extra |"
done
echo

args=()
for i in "${!names[@]}"; do args+=(-n "${names[$i]}" "${cmds[$i]}"); done
say "bench: hyperfine, ${#names[@]} commands"
hyperfine -N -i --output=pipe --style=none -w "$warmup" --runs "$runs" \
    --export-csv "$tmp/results/full.csv" "${args[@]}" >/dev/null

median() { awk -F, -v name="$1" 'NR > 1 && $1 == name {print $4}' "$tmp/results/full.csv"; }
# cpu NAME: mean user + system time, steadier than wall time on a shared machine.
cpu() { awk -F, -v name="$1" 'NR > 1 && $1 == name {print $5 + $6}' "$tmp/results/full.csv"; }
ms() { awk -v s="$1" 'BEGIN { t = s * 1000; if (t >= 100) printf "%.0f ms", t; else if (t >= 10) printf "%.1f ms", t; else printf "%.2f ms", t }'; }

echo "Medians of one hyperfine run (-N, output to a pipe); ratio = ours / theirs (the target is"
echo "on it); CPU = mean user + system time of each, ours / theirs."
echo
echo "| Benchmark | ikigai-tools | Compared with | Its time | Ratio | Target | CPU ours / theirs |"
echo "|---|---:|---|---:|---:|---|---|"
for p in "${pairs[@]}"; do
    IFS=: read -r ours peer target labels <<<"$p"
    label="${labels%%|*}"
    peer_label="${labels#*|}"
    a="$(median "$ours")"
    b="$(median "$peer")"
    ratio="$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", a / b}')"
    if [ "$target" = "-" ]; then
        verdict="—"
    elif awk -v r="$ratio" -v t="$target" 'BEGIN {exit !(r <= t)}'; then
        verdict="≤ $target ✓"
    else
        verdict="≤ $target ✗"
    fi
    ca="$(cpu "$ours")"
    cb="$(cpu "$peer")"
    cratio="$(awk -v a="$ca" -v b="$cb" 'BEGIN {printf "%.2f", a / b}')"
    echo "| $label | $(ms "$a") | $peer_label | $(ms "$b") | **$ratio** | $verdict | $(ms "$ca") / $(ms "$cb") = $cratio |"
done
echo
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
