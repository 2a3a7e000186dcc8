#!/bin/bash
# check-layers.sh - which folder of src/ may include which.
#
#   scripts/check-layers.sh [ROOT]     ROOT: the tree to check (default: this
#                                      repository)
#
# The rules (docs/internals/layers.md explains them):
#   - a file in src/<layer>/ may include "<layer>/x.h", "<lower>/x.h" for a
#     layer below its own in the table below, and "gemini-agent/x.h";
#     layers on one line of the table are siblings and never include each
#     other;
#   - src/main.c is the top: it may include any layer;
#   - actions/*/ (plugins) and include/gemini-agent/ (their interface) may
#     include only "gemini-agent/..." and "core/...";
#   - every quoted include names its folder ("core/arena.h", never
#     "arena.h"), and that folder exists under src/ or include/;
#   - every file under src/ other than main.c sits in a layer folder.
# Only `#include "..."` lines are read; <...> includes are system headers.
#
# Prints one line per violation, `file:line: includes "X" (why)`, then a
# one-line summary; exits 1 when there is any violation, 2 on bad usage.
# While src/ has no folders yet (the flat tree) it prints a note and
# exits 0.
set -u

# Top to bottom. A layer may include the layers on the lines below its own.
LAYERS='
cmd
proc
http term
agent
plugins
registry gemini store
core
'

root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)}
if [ $# -gt 1 ] || [ ! -d "$root/src" ]; then
    echo "usage: $0 [ROOT]   (ROOT must hold src/)" >&2
    exit 2
fi
cd "$root" || exit 2

# The folders an include may name: those under src/ and include/.
folders=""
layered=0
for d in src/*/ include/*/; do
    [ -d "$d" ] || continue
    d=${d%/}
    folders="$folders ${d#*/}"
    case $d in src/*) layered=1 ;; esac
done
if [ $layered -eq 0 ]; then
    echo "check-layers: note: src/ has no layer folders yet (flat tree): nothing to check"
    exit 0
fi

# Every header by folder, to suggest the folder of a bare include.
headers=$(find src include -mindepth 2 -name '*.h' -type f 2>/dev/null |
          sed 's|^[^/]*/||' | sort | tr '\n' ' ')

files=$(find src \( -name '*.c' -o -name '*.h' \) -type f 2>/dev/null
        for f in actions/*/*.c actions/*/*.h include/gemini-agent/*.h; do
            [ -f "$f" ] && echo "$f"
        done)
files=$(sort <<<"$files")
nfiles=$(grep -c . <<<"$files")

# shellcheck disable=SC2086
awk -v layers="$LAYERS" -v folders="$folders" -v headers="$headers" \
    -v nfiles="$nfiles" '
BEGIN {
    n = split(layers, rows, "\n")
    r = 0
    for (i = n; i >= 1; i--) {           # bottom row = rank 1
        if (rows[i] ~ /^[ \t]*$/)
            continue
        r++
        m = split(rows[i], names, " ")
        for (j = 1; j <= m; j++)
            rank[names[j]] = r
    }
    split(folders, f, " ")
    for (i in f)
        exists[f[i]] = 1
    m = split(headers, h, " ")
    for (i = 1; i <= m; i++) {
        base = h[i]
        sub(/^.*\//, "", base)
        if (base in home)
            home[base] = home[base] "\" or \"" h[i]
        else
            home[base] = h[i]
    }
    bad = 0
    includes = 0
}

function report(msg) {
    print msg
    bad++
}

FNR == 1 {
    kind = "layer"
    layer = ""
    path = FILENAME
    if (path == "src/main.c") {
        layer = "main"
    } else if (path ~ /^src\/[^\/]+$/) {
        report(path ": is not in a layer folder (move it to src/<layer>/)")
        kind = "none"
    } else if (path ~ /^src\//) {
        split(path, seg, "/")
        layer = seg[2]
        if (!(layer in rank)) {
            report(path ": src/" layer "/ is not a layer (add it to the " \
                   "table in scripts/check-layers.sh)")
            kind = "none"
        }
    } else if (path ~ /^actions\//) {
        kind = "plugin"
        layer = "actions"
    } else {
        kind = "plugin"
        layer = "gemini-agent"
    }
}

/^[ \t]*#[ \t]*include[ \t]*"/ {
    includes++
    target = $0
    sub(/^[^"]*"/, "", target)
    sub(/".*$/, "", target)
    where = FILENAME ":" FNR ": includes \"" target "\""
    if (target !~ /\//) {
        if (target in home)
            report(where " (name its folder: \"" home[target] "\")")
        else
            report(where " (name its folder)")
        next
    }
    dir = target
    sub(/\/.*$/, "", dir)
    if (dir == "." || dir == ".." || dir == "") {
        report(where " (no relative paths: name the folder from src/)")
        next
    }
    if (!(dir in exists)) {
        report(where " (there is no folder " dir "/ under src/ or include/)")
        next
    }
    if (kind == "none" || dir == layer || dir == "gemini-agent")
        next
    if (kind == "plugin") {
        if (dir != "core")
            report(where " (" layer " may not include layer " dir \
                   ": only gemini-agent/ and core/)")
        next
    }
    if (layer == "main")
        next
    if (!(dir in rank)) {
        report(where " (layer " layer " may not include " dir \
               "/: it is not a layer)")
        next
    }
    if (rank[dir] == rank[layer])
        report(where " (layer " layer " may not include layer " dir \
               ": they are siblings)")
    else if (rank[dir] > rank[layer])
        report(where " (layer " layer " may not include layer " dir \
               ": it is above)")
}

END {
    printf "check-layers: %d files, %d includes: ", nfiles, includes
    if (bad == 0)
        print "ok"
    else
        printf "%d violation%s\n", bad, bad == 1 ? "" : "s"
    exit (bad > 0)
}
' $files </dev/null
