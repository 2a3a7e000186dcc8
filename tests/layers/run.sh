#!/bin/bash
# tests/layers/run.sh - self-test of scripts/check-layers.sh.
#
# Builds a small layered tree in a temp folder whose every include is
# allowed, checks that it passes, then adds one bad include (or a stray
# file) at a time and checks the exit status and the exact message.
# Ends with "N passed, N failed"; exits 1 when anything failed.
set -u
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
check=$repo/scripts/check-layers.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-layers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $1"; }

# put FILE LINE... : write a file of the fake tree, one line per argument.
put() {
    local f=$1
    shift
    mkdir -p "$(dirname "$f")"
    printf '%s\n' "$@" > "$f"
}

# The good tree: one file per layer, each including what it may.
good_tree() {
    rm -rf "$tmp/t"
    mkdir -p "$tmp/t"
    cd "$tmp/t" || exit 1
    put src/main.c '#include "core/common.h"' '#include "cmd/serve.h"' \
        '#include "proc/worker.h"' '#include "agent/loop.h"' \
        '#include <stdio.h>'
    put src/cmd/serve.h '#include "core/common.h"'
    put src/cmd/serve.c '#include "core/common.h"' '#include "cmd/serve.h"' \
        '#include "proc/serve.h"' '#include "http/site.h"'
    put src/proc/serve.h '#include "core/common.h"'
    put src/proc/worker.h '#include "core/common.h"'
    put src/proc/worker.c '#include "core/common.h"' \
        '#include "proc/worker.h"' '#include "http/dispatch.h"' \
        '#  include "gemini/client.h"' '#include <fcgiapp.h>'
    put src/http/site.h '#include "core/common.h"'
    put src/http/dispatch.h '#include "core/common.h"'
    put src/http/dispatch.c '#include "core/common.h"' \
        '#include "http/dispatch.h"' '#include "agent/loop.h"' \
        '#include "registry/action.h"' '#include "gemini-agent/handler.h"'
    put src/agent/loop.h '#include "core/common.h"'
    put src/agent/loop.c '#include "core/common.h"' '#include "agent/loop.h"' \
        '#include "gemini/client.h"' '#include "registry/plugin.h"' \
        '/* #include "http/reply.h" in a comment is not an include */'
    put src/registry/action.h '#include "core/common.h"'
    put src/registry/plugin.h '#include "core/common.h"'
    put src/registry/plugin.c '#include "core/common.h"' \
        '#include "registry/plugin.h"' '#include "gemini-agent/handler.h"'
    put src/gemini/client.h '#include "core/common.h"'
    put src/gemini/client.c '#include "core/common.h"' \
        '#include "gemini/client.h"' '#include <curl/curl.h>'
    put src/core/common.h '#include <stdbool.h>'
    put src/core/arena.c '#include "core/common.h"' '#include "core/arena.h"'
    put src/core/arena.h '#include "core/common.h"'
    put include/gemini-agent/handler.h '#include "core/common.h"'
    put actions/shop/shop.c '#include "core/common.h"' \
        '#include "gemini-agent/handler.h"' '#include <jansson.h>'
}

# run: the check over the fake tree; sets $out and $rc.
run() {
    out=$("$check" "$tmp/t" 2>&1)
    rc=$?
}

# expect NAME RC LINE...: the exit status is RC and every LINE is a whole
# line of the output.
expect() {
    local name=$1 want=$2 line
    shift 2
    if [ "$rc" != "$want" ]; then
        not_ok "$name: exit $rc, want $want"
        printf '%s\n' "$out" | sed 's/^/#   /'
        return
    fi
    for line in "$@"; do
        if ! grep -qxF -- "$line" <<<"$out"; then
            not_ok "$name: no line '$line'"
            printf '%s\n' "$out" | sed 's/^/#   /'
            return
        fi
    done
    ok "$name"
}

# bad NAME FILE INCLUDE MESSAGE: the good tree plus one include in FILE
# (appended, so at the line after FILE's last), which must be the one
# violation reported, with MESSAGE as its reason.
bad() {
    local name=$1 file=$2 inc=$3 why=$4 n
    good_tree
    mkdir -p "$(dirname "$file")"
    echo "#include \"$inc\"" >> "$file"
    n=$(wc -l < "$file")
    run
    expect "$name" 1 "$file:$n: includes \"$inc\" ($why)" \
        "$(summary 1)"
}

summary() {
    local files includes
    files=$(find src actions include -type f | wc -l)
    includes=$(find src actions include -type f -exec cat {} + |
               grep -c '^[[:space:]]*#[[:space:]]*include[[:space:]]*"')
    if [ "$1" -eq 0 ]; then
        echo "check-layers: $files files, $includes includes: ok"
    elif [ "$1" -eq 1 ]; then
        echo "check-layers: $files files, $includes includes: 1 violation"
    else
        echo "check-layers: $files files, $includes includes: $1 violations"
    fi
}

# --- a sound tree passes -------------------------------------------------

good_tree
run
expect "a tree that keeps the arrows passes" 0 "$(summary 0)"
if grep -qv '^check-layers:' <<<"$out"; then
    not_ok "a sound tree prints only the summary: $out"
else
    ok "a sound tree prints only the summary"
fi

# --- each kind of bad include --------------------------------------------

bad "core may not include http (upward)" src/core/arena.c "http/dispatch.h" \
    "layer core may not include layer http: it is above"
bad "agent may not include http (upward)" src/agent/loop.c "http/site.h" \
    "layer agent may not include layer http: it is above"
bad "proc may not include cmd (upward)" src/proc/worker.c "cmd/serve.h" \
    "layer proc may not include layer cmd: it is above"
bad "a header is checked too" src/agent/loop.h "http/dispatch.h" \
    "layer agent may not include layer http: it is above"
bad "registry may not include gemini (siblings)" src/registry/plugin.c \
    "gemini/client.h" "layer registry may not include layer gemini: they are siblings"
bad "gemini may not include registry (siblings)" src/gemini/client.c \
    "registry/plugin.h" "layer gemini may not include layer registry: they are siblings"
bad "a bare include is refused, its folder named" src/http/dispatch.c \
    "arena.h" 'name its folder: "core/arena.h"'
bad "a bare include is refused in main.c too" src/main.c "common.h" \
    'name its folder: "core/common.h"'
bad "a bare include of a header that is nowhere" src/agent/loop.c \
    "nosuch.h" "name its folder"
bad "an include of a folder that does not exist" src/agent/loop.c \
    "store/store.h" "there is no folder store/ under src/ or include/"
bad "a relative include is refused" src/http/dispatch.c "../core/arena.h" \
    "no relative paths: name the folder from src/"
bad "a plugin may not include http" actions/shop/shop.c "http/site.h" \
    "actions may not include layer http: only gemini-agent/ and core/"
bad "a plugin may not include registry" actions/shop/shop.c \
    "registry/plugin.h" "actions may not include layer registry: only gemini-agent/ and core/"
bad "a plugin may not include a bare header" actions/shop/shop.c "handler.h" \
    'name its folder: "gemini-agent/handler.h"'
bad "the public header may not include registry" \
    include/gemini-agent/handler.h "registry/plugin.h" \
    "gemini-agent may not include layer registry: only gemini-agent/ and core/"

# Two headers of that name: both are named.
good_tree
put src/http/plugin.h '#include "core/common.h"'
echo '#include "plugin.h"' >> src/agent/loop.c
n=$(wc -l < src/agent/loop.c)
run
expect "a bare include that two folders could mean" 1 \
    "src/agent/loop.c:$n: includes \"plugin.h\" (name its folder: \"http/plugin.h\" or \"registry/plugin.h\")"

# A folder under include/ that is not a layer.
good_tree
put include/extra/x.h '/* not a layer */'
echo '#include "extra/x.h"' >> src/http/dispatch.c
n=$(wc -l < src/http/dispatch.c)
run
expect "a folder that is not a layer" 1 \
    "src/http/dispatch.c:$n: includes \"extra/x.h\" (layer http may not include extra/: it is not a layer)"

# --- files out of place ----------------------------------------------------

good_tree
put src/stray.c '#include "core/common.h"'
run
expect "a file beside main.c is out of place" 1 \
    "src/stray.c: is not in a layer folder (move it to src/<layer>/)" \
    "$(summary 1)"

good_tree
put src/misc/x.c '#include "core/common.h"' '#include "http/site.h"'
run
expect "a folder that is not in the table" 1 \
    "src/misc/x.c: src/misc/ is not a layer (add it to the table in scripts/check-layers.sh)" \
    "$(summary 1)"

# --- several at once, all reported -------------------------------------------

good_tree
echo '#include "http/site.h"' >> src/core/arena.c
echo '#include "arena.h"' >> src/gemini/client.c
echo '#include "registry/action.h"' >> src/gemini/client.c
run
expect "every violation is reported, and counted" 1 \
    'src/core/arena.c:3: includes "http/site.h" (layer core may not include layer http: it is above)' \
    'src/gemini/client.c:4: includes "arena.h" (name its folder: "core/arena.h")' \
    'src/gemini/client.c:5: includes "registry/action.h" (layer gemini may not include layer registry: they are siblings)' \
    "$(summary 3)"

# --- the flat tree, usage ------------------------------------------------------

rm -rf "$tmp/t"
mkdir -p "$tmp/t/src" "$tmp/t/include"
put "$tmp/t/src/arena.c" '#include "common.h"' '#include "arena.h"'
put "$tmp/t/include/arena.h" '#include "common.h"'
run
expect "a flat tree passes with a note" 0 \
    "check-layers: note: src/ has no layer folders yet (flat tree): nothing to check"

out=$("$check" "$tmp/nowhere" 2>&1)
rc=$?
expect "a root without src/ is a usage error" 2

out=$(cd "$repo" && "$check" 2>&1)
rc=$?
expect "the repository itself passes" 0

# --- fast --------------------------------------------------------------------

good_tree
for i in $(seq 1 300); do
    put "src/http/gen$i.c" '#include "core/common.h"' '#include "http/site.h"' \
        '#include "agent/loop.h"' '#include "registry/action.h"' \
        '#include "gemini-agent/handler.h"' '#include <string.h>'
done
start=$(date +%s%N)
run
ms=$(( ($(date +%s%N) - start) / 1000000 ))
if [ "$rc" -eq 0 ] && [ "$ms" -lt 1000 ]; then
    ok "300 more files checked in $ms ms"
else
    not_ok "300 more files: exit $rc in $ms ms"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
