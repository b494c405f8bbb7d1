#!/usr/bin/env bash
# ikigai-tools side by side with the best tools of their kind: ripgrep and
# GNU grep, find (and fd), wc, cat, cp, and the shell. Prints the machine,
# the versions and a Markdown table of medians, ratios (ours/theirs) and
# peak memory, ready to paste into the README.
#
#   apt-get install -y hyperfine ripgrep time    # time: for peak memory
#   bench/run.sh                                 # about five minutes
#   BENCH_QUICK=1 bench/run.sh                   # small files, a minute
#
# A peer that is not installed is skipped with the reason printed. The tools
# are installed with ./install.sh into a temporary prefix and called as a
# host calls them: through their links in libexec/ikigai, with the JSON
# arguments in $1 (the shellclaw dialect), so that hyperfine runs ours and
# the peers alike, without a shell (-N).
#
# Settings (environment):
#   BENCH_QUICK=1        small sizes and few runs, to try the script
#   BENCH_TREE=DIR       the source tree to search (default /usr/include)
#   BENCH_BIG_MB=N       the file read in a range and edited (default 500)
#   BENCH_WHOLE_MB=N     the file read whole and printed by bash (default 100)
#   BENCH_FLAT_FILES=N   files in the flat directory (default 10000)
#   BENCH_RUNS=N         runs per command (default: hyperfine's, >= 10)
#   BENCH_WARMUP=N       warm-up runs for the small benchmarks (default 3)
#   BENCH_TMP=DIR        where generated files go (default: a new dir in /tmp)
#   BENCH_BINARY=PATH    benchmark this binary instead of building one
#   BENCH_MCP_CALLS=N    file_read calls per MCP session (default 200, quick 50)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"

quick="${BENCH_QUICK:-0}"
if [ "$quick" = 1 ]; then
    big_mb="${BENCH_BIG_MB:-20}"
    whole_mb="${BENCH_WHOLE_MB:-10}"
    flat_files="${BENCH_FLAT_FILES:-1000}"
    runs="${BENCH_RUNS:-5}"
    mcp_calls="${BENCH_MCP_CALLS:-50}"
else
    big_mb="${BENCH_BIG_MB:-500}"
    whole_mb="${BENCH_WHOLE_MB:-100}"
    flat_files="${BENCH_FLAT_FILES:-10000}"
    runs="${BENCH_RUNS:-}"
    mcp_calls="${BENCH_MCP_CALLS:-200}"
fi
tree="${BENCH_TREE:-/usr/include}"
warmup="${BENCH_WARMUP:-3}"
flat_lines=100

say() { printf '%s\n' "$*" >&2; }
have() { command -v "$1" >/dev/null 2>&1; }

command -v hyperfine >/dev/null 2>&1 || {
    say "bench: hyperfine is needed: apt-get install -y hyperfine"
    exit 1
}
timer=""
if [ -x /usr/bin/time ]; then
    timer=/usr/bin/time
else
    say "bench: /usr/bin/time not installed (apt-get install -y time): no peak memory column"
fi

tmp="${BENCH_TMP:-}"
if [ -z "$tmp" ]; then
    tmp="$(mktemp -d /tmp/ikigai-bench.XXXXXX)"
    cleanup() { rm -rf "$tmp"; }
else
    mkdir -p "$tmp"
    tmp="$(cd "$tmp" && pwd)"
    cleanup() { rm -rf "${tmp:?}/prefix" "${tmp:?}/data" "${tmp:?}/results" "${tmp:?}/floor"; }
fi
trap cleanup EXIT
mkdir -p "$tmp/data" "$tmp/results"
data="$tmp/data"

# --- the tools, installed as a user would --------------------------------
if [ -n "${BENCH_BINARY:-}" ]; then
    "$root/install.sh" --prefix "$tmp/prefix" --binary "$BENCH_BINARY" >/dev/null
else
    say "bench: building and installing ikigai-tools (./install.sh)"
    "$root/install.sh" --prefix "$tmp/prefix" >/dev/null
fi
tools="$tmp/prefix/libexec/ikigai"
binary="$tmp/prefix/bin/ikigai-tools"

# --- what runs where -------------------------------------------------------
cpu="$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //' || true)"
mem="$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo 2>/dev/null || true)"
fs_type="$(df -PT "$tmp" 2>/dev/null | awk 'NR == 2 {print $2}' || echo '?')"
version() { if have "$1"; then "$@" 2>/dev/null | head -n1; else echo "not installed"; fi; }
linkage="$(file -b "$binary" 2>/dev/null | grep -o 'static-pie linked\|statically linked\|dynamically linked' || echo '?')"

echo "## Benchmark run"
echo
echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- Machine: $(nproc) cores, ${cpu:-unknown CPU}, $mem RAM, Linux $(uname -r), $fs_type file system for the generated files"
echo "- Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- ikigai-tools $("$binary" --version 2>/dev/null | awk '{print $2}') ($linkage), $(version hyperfine --version),"
echo "  $(version rg --version), $(version grep --version), $(version find --version),"
echo "  $(version wc --version | sed 's/wc (GNU coreutils)/coreutils/'), $(version fdfind --version)"
echo "- Locale: LANG=${LANG:-} LC_ALL=${LC_ALL:-}"
echo "- Sizes: tree $tree, big file $big_mb MB, whole-read file $whole_mb MB, flat directory $flat_files files"
echo "- Command: $( [ "$quick" = 1 ] && printf 'BENCH_QUICK=1 ')bench/run.sh"
echo

# --- generated files -------------------------------------------------------
need_mb=$((3 * big_mb + whole_mb + 2 * whole_mb + 200))
free_mb="$(df -Pm "$tmp" | awk 'NR == 2 {print $4}')"
big_ok=1
whole_ok=1
if [ "$free_mb" -lt "$need_mb" ]; then
    say "bench: $free_mb MB free in $tmp, $need_mb MB wanted: the $big_mb MB file is skipped"
    echo "- Skipped: the $big_mb MB file ($free_mb MB free in $tmp, $need_mb MB needed)"
    big_ok=0
    if [ "$free_mb" -lt $((3 * whole_mb + 100)) ]; then
        whole_ok=0
        echo "- Skipped: the $whole_mb MB file too"
    fi
fi

tree_ok=1
if [ ! -d "$tree" ] || [ -z "$(find "$tree" -name '*.h' -type f -print -quit 2>/dev/null)" ]; then
    say "bench: no *.h files under $tree: the tree benchmarks are skipped"
    echo "- Skipped: the tree benchmarks (no *.h files under $tree)"
    tree_ok=0
fi

# Text to fill files with: the C headers of the tree (realistic lines,
# tabs, quotes and backslashes for the JSON escaper), or a line of C.
source_text="$data/source.txt"
if [ "$tree_ok" = 1 ]; then
    find "$tree" -name '*.h' -type f -print0 | xargs -0 cat > "$source_text"
fi
if [ ! -s "$source_text" ]; then
    yes 'static int bench_line(int x) { return x + 1; } /* "filler" \ text */' \
        | head -c 10000000 > "$source_text" || true
fi

# fill FILE BYTES: FILE gets BYTES bytes of source text.
fill() {
    local reps=$(( $2 / $(stat -c %s "$source_text") + 1 ))
    { for _ in $(seq "$reps"); do cat "$source_text"; done; } | head -c "$2" > "$1" || true
}

marker="IKIGAI_BENCH_MARK_"
whole="$data/whole.txt"
big="$data/big.txt"
flat="$data/flat"
if [ "$whole_ok" = 1 ]; then
    say "bench: generating $whole_mb MB and a flat directory of $flat_files files in $data"
    fill "$whole" $((whole_mb * 1000000))
    mkdir -p "$flat"
    head -n $((flat_files * flat_lines)) "$whole" \
        | split -l "$flat_lines" -a 6 -d --additional-suffix=.c - "$flat/f"
fi
if [ "$big_ok" = 1 ]; then
    say "bench: generating the $big_mb MB file"
    half=$((big_mb * 500000))
    fill "$data/half.txt" "$half"
    { cat "$data/half.txt"; printf '\n%sA\n' "$marker"; cat "$data/half.txt"; } > "$big"
    rm -f "$data/half.txt"
    # The byte that turns MARK_A into MARK_B and back.
    mark_at=$(( $(grep -bo "${marker}A" "$big" | cut -d: -f1) + ${#marker} ))
    printf A > "$data/A"
    big_lines="$(wc -l < "$big")"
    range_offset=$((big_lines * 9 / 10))
fi

# --- measuring -------------------------------------------------------------
runs_opt=()
if [ -n "$runs" ]; then runs_opt=(--runs "$runs"); fi

# bench GROUP WARMUP [hyperfine options --] NAME CMD [NAME CMD ...]
# Runs hyperfine on the commands (named NAME in the results) and one more
# run of each under /usr/bin/time for its peak memory.
bench() {
    local group="$1" warm="$2"
    shift 2
    local extra=()
    if [ "${1:-}" = "--opts" ]; then
        shift
        while [ "$1" != "--" ]; do extra+=("$1"); shift; done
        shift
    fi
    local args=() names=() cmds=()
    while [ $# -gt 0 ]; do
        names+=("$1")
        cmds+=("$2")
        args+=(-n "$1" "$2")
        shift 2
    done
    say "bench: $group"
    hyperfine -N -i --output=pipe --style=none -w "$warm" "${runs_opt[@]}" "${extra[@]}" \
        --export-csv "$tmp/results/$group.csv" "${args[@]}" >/dev/null
    if [ -n "$timer" ]; then
        local i
        for i in "${!cmds[@]}"; do
            local prepare=""
            if [ "${#extra[@]}" -gt 0 ] && [ "${extra[0]}" = "--prepare" ]; then prepare="${extra[1]}"; fi
            if [ -n "$prepare" ]; then eval "$prepare"; fi
            eval "set -- ${cmds[$i]}"
            "$timer" -f %M -o "$tmp/results/$group.${names[$i]}.mem" "$@" 2>/dev/null | cat >/dev/null || true
        done
    fi
}

# median GROUP NAME: the median in seconds.
median() {
    awk -F, -v name="$2" 'NR > 1 && $1 == name {print $(NF - 4)}' "$tmp/results/$1.csv"
}
# peak GROUP NAME: peak resident memory in MiB, or "—". (time writes a line
# about a non-zero exit status first: the figure is on the last line.)
peak() {
    local f="$tmp/results/$1.$2.mem"
    if [ -s "$f" ]; then tail -n1 "$f" | awk '{printf "%.1f", $1 / 1024}'; else printf '—'; fi
}
ms() { awk -v s="$1" 'BEGIN {
    t = s * 1000
    if (t >= 100) printf "%.0f ms", t; else if (t >= 10) printf "%.1f ms", t; else printf "%.2f ms", t }'; }

rows=()
# row LABEL GROUP OURS PEER_LABEL PEER TARGET
row() {
    local label="$1" group="$2" ours="$3" peer_label="$4" peer="$5" target="$6"
    local a b ratio verdict
    a="$(median "$group" "$ours")"
    b="$(median "$group" "$peer")"
    if [ -z "$a" ] || [ -z "$b" ]; then return; fi
    ratio="$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", a / b}')"
    if [ "$target" = "-" ]; then
        verdict="—"
    elif awk -v r="$ratio" -v t="$target" 'BEGIN {exit !(r <= t)}'; then
        verdict="≤ $target ✓"
    else
        verdict="≤ $target ✗"
    fi
    # A `|` inside a cell, even in code, would end it.
    label="${label//|/\\|}"
    peer_label="${peer_label//|/\\|}"
    rows+=("| $label | $(ms "$a") | $peer_label | $(ms "$b") | **$ratio** | $verdict | $(peak "$group" "$ours") | $(peak "$group" "$peer") |")
}
skip() { say "bench: skipped $1: $2"; rows+=("| ${1//|/\\|} | — | $3 | — | — | skipped: $2 | — | — |"); }

q() { printf "'%s'" "$1"; }   # single-quotes a word for hyperfine's -N parser

# grep, recursive, three patterns
if [ "$tree_ok" = 1 ]; then
    for pattern in 'static int' '(foo|bar)_[a-z]+' 'ZZQX_NOWHERE_RARE'; do
        group="grep-$(echo "$pattern" | tr -c 'a-zA-Z0-9' '_')"
        cmds=(ours "$tools/grep $(q "{\"pattern\":\"$pattern\",\"path\":\"$tree\",\"glob\":\"**/*.h\"}")")
        if have rg; then cmds+=(rg "rg -n $(q "$pattern") -g '*.h' $tree"); fi
        cmds+=(gnu-grep "grep -rnE --include=*.h $(q "$pattern") $tree")
        bench "$group" "$warmup" "${cmds[@]}"
        if have rg; then
            row "grep \`$pattern\` in \`$tree/**/*.h\`" "$group" ours "\`rg -n -g '*.h'\`" rg 1.0
        else
            skip "grep \`$pattern\` (vs ripgrep)" "ripgrep not installed" "rg"
        fi
        row "grep \`$pattern\` in \`$tree/**/*.h\`" "$group" ours "\`grep -rnE --include='*.h'\`" gnu-grep 0.5
    done
fi

# grep over one flat directory
if [ "$whole_ok" = 1 ]; then
    cmds=(ours "$tools/grep $(q "{\"pattern\":\"static int\",\"path\":\"$flat\"}")")
    if have rg; then cmds+=(rg "rg -n 'static int' $flat"); fi
    cmds+=(gnu-grep "grep -rnE 'static int' $flat")
    bench grep-flat "$warmup" "${cmds[@]}"
    label="grep \`static int\`, flat directory of $flat_files files"
    if have rg; then row "$label" grep-flat ours "\`rg -n\`" rg 1.0; else skip "$label (vs ripgrep)" "ripgrep not installed" "rg"; fi
    row "$label" grep-flat ours "\`grep -rnE\`" gnu-grep 0.5
fi

# glob
if [ "$tree_ok" = 1 ]; then
    cmds=(ours "$tools/glob $(q "{\"pattern\":\"**/*.h\",\"path\":\"$tree\"}")" find "find $tree -name '*.h'")
    if have fdfind; then
        cmds+=(fd "fdfind -u -g '*.h' $tree")
    elif have fd; then
        cmds+=(fd "fd -u -g '*.h' $tree")
    else
        say "bench: fd not installed (apt-get install -y fd-find): no fd row (it has no target)"
    fi
    bench glob "$warmup" "${cmds[@]}"
    row "glob \`**/*.h\` in \`$tree\`" glob ours "\`find -name '*.h'\`" find 1.0
    if have fdfind || have fd; then
        row "glob \`**/*.h\` in \`$tree\`" glob ours "\`fd -u -g '*.h'\`" fd -
    fi
fi

# start-up, against /bin/true and the floors (bench/floor/build.sh, which
# says why a floor is missing): programs that write the same schema and
# nothing else, a static-pie Rust one built as install.sh builds ours and a
# static C one. One hyperfine run for all; bench/startup.sh has the details.
say "bench: building the start-up floors (bench/floor/build.sh)"
"$here/floor/build.sh" "$tmp/floor" || say "bench: bench/floor/build.sh failed"
cmds=(ours "$tools/grep --schema" true "/bin/true")
for floor in rust-floor c-floor; do
    if [ -x "$tmp/floor/$floor" ]; then cmds+=("$floor" "$tmp/floor/$floor"); fi
done
bench schema 20 "${cmds[@]}"
row "\`grep --schema\` (start-up)" schema ours "\`/bin/true\`" true 1.1
if [ -x "$tmp/floor/rust-floor" ]; then
    row "\`grep --schema\` (start-up)" schema ours "a static-pie Rust program writing the schema" rust-floor 1.05
else
    skip "\`grep --schema\` (vs the Rust floor)" "bench/floor/build.sh built no Rust floor" "Rust floor"
fi
if [ -x "$tmp/floor/c-floor" ]; then
    row "\`grep --schema\` (start-up)" schema ours "a static C program writing the schema" c-floor -
else
    skip "\`grep --schema\` (vs the C floor)" "bench/floor/build.sh built no C floor" "C floor"
fi

# file_read
if [ "$big_ok" = 1 ]; then
    bench read-range 1 \
        ours "$tools/file-read $(q "{\"file_path\":\"$big\",\"offset\":$range_offset,\"limit\":100}")" \
        wc "wc -l $big"
    row "file_read 100 lines from line $range_offset of $big_mb MB" read-range ours "\`wc -l\`" wc 1.5
fi
if [ "$whole_ok" = 1 ]; then
    IKIGAI_TOOLS_MAX_OUTPUT=0 bench read-whole 2 \
        ours "$tools/file-read $(q "{\"file_path\":\"$whole\"}")" cat "cat $whole"
    row "file_read whole $whole_mb MB (no output limit)" read-whole ours "\`cat\`" cat -
fi

# MCP: small file_read calls over one `ikigai-tools mcp` session against as
# many runs of the tool (fork + exec), both driven by bench/mcp_calls.py.
if have python3; then
    small="$data/small.txt"
    printf 'a small file\n' > "$small"
    bench mcp-read 1 \
        ours "python3 $here/mcp_calls.py mcp $binary $mcp_calls $small" \
        cli "python3 $here/mcp_calls.py cli $tools/file-read $mcp_calls $small"
    row "$mcp_calls small file_read calls through \`ikigai-tools mcp\` (one session)" mcp-read ours \
        "$mcp_calls runs of \`file-read\` (fork + exec)" cli 1.5
else
    skip "file_read through \`ikigai-tools mcp\`" "python3 not installed" "fork + exec"
fi

# Confinement: the same calls with and without allowed roots. Both sides go
# through `env`, so that the only difference is IKIGAI_TOOLS_ROOTS.
small="$data/small.txt"
printf 'a small file\n' > "$small"
read_args="$(q "{\"file_path\":\"$small\"}")"
bench confined-read 20 \
    ours "env IKIGAI_TOOLS_ROOTS=$data $tools/file-read $read_args" \
    open "env IKIGAI_BENCH=1 $tools/file-read $read_args"
row "file_read of a small file, confined to its directory" confined-read ours "the same unconfined" open 1.2
bash_args="$(q '{"command":"echo hi > /dev/null"}')"
bench confined-bash 20 \
    ours "env IKIGAI_TOOLS_ROOTS=$data $tools/bash $bash_args" \
    open "env IKIGAI_BENCH=1 $tools/bash $bash_args"
row "bash \`echo hi\`, confined (namespace, Landlock, seccomp)" confined-bash ours "the same unconfined" open 1.3
if [ "$tree_ok" = 1 ]; then
    grep_args="$(q "{\"pattern\":\"static int\",\"path\":\"$tree\",\"glob\":\"**/*.h\"}")"
    bench confined-grep "$warmup" \
        ours "env IKIGAI_TOOLS_ROOTS=$tree $tools/grep $grep_args" \
        open "env IKIGAI_BENCH=1 $tools/grep $grep_args"
    row "grep \`static int\` in \`$tree/**/*.h\`, confined to \`$tree\`" confined-grep ours "the same unconfined" open 1.2
fi

# file_edit: each run turns MARK_A into MARK_B; --prepare turns it back.
if [ "$big_ok" = 1 ]; then
    restore="dd if=$data/A of=$big bs=1 seek=$mark_at conv=notrunc status=none"
    cp "$big" "$data/copy.txt"
    bench edit 1 --opts --prepare "$restore" -- \
        ours "$tools/file-edit $(q "{\"file_path\":\"$big\",\"old_string\":\"${marker}A\",\"new_string\":\"${marker}B\"}")" \
        cp "cp $big $data/copy.txt" \
        dd-fsync "dd if=$big of=$data/copy.txt bs=4M conv=fsync status=none"
    row "file_edit one unique string in $big_mb MB" edit ours "\`cp\`" cp 2.0
    row "file_edit one unique string in $big_mb MB" edit ours "\`dd conv=fsync\` (copy + fsync)" dd-fsync -
    rm -f "$data/copy.txt"
fi

# bash
if [ "$whole_ok" = 1 ]; then
    IKIGAI_TOOLS_MAX_OUTPUT=0 bench bash-all 2 \
        ours "$tools/bash $(q "{\"command\":\"cat $whole\"}")" \
        bare "sh -c $(q "cat $whole >/dev/null")"
    row "bash \`cat\` $whole_mb MB, all captured (no output limit)" bash-all ours "\`sh -c 'cat … >/dev/null'\`" bare 2.0
    bench bash-limit 2 \
        ours "$tools/bash $(q "{\"command\":\"cat $whole\"}")" \
        bare "sh -c $(q "cat $whole >/dev/null")"
    row "bash \`cat\` $whole_mb MB, default 16 MiB output limit" bash-limit ours "\`sh -c 'cat … >/dev/null'\`" bare 2.0
fi

echo "Medians of hyperfine runs (-N, output to a pipe); ratio = ours / theirs; peak memory from one run each under /usr/bin/time."
echo
echo "| Benchmark | ikigai-tools | Compared with | Its time | Ratio | Target | Peak MiB (ours) | Peak MiB (theirs) |"
echo "|---|---:|---|---:|---:|---|---:|---:|"
printf '%s\n' "${rows[@]}"
echo
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
