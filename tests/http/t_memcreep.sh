#!/bin/bash
# t_memcreep.sh - a worker's memory stays flat over chat requests,
# a short form of `make soak` (tests/bench/soak.sh): 10,000 chat
# requests through nginx to one worker of 2 threads (so every thread and
# malloc arena it will use is warm after the first 2,500), 2 at a time,
# against fastmock.c on loopback. The worker's RSS once idle may grow by
# no more than 512 KB from request 2,500 to 10,000: a leak of 70 bytes a
# request fails it. And an idle worker gives malloc's free memory back: it
# logs its malloc_trim and its idle RSS is below its RSS as the last
# request was answered.
# Under ASan (its allocator keeps freed memory in quarantine, so RSS says
# nothing) only 600 requests, for the answers and the trim.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_binary
asan=0
grep -q __asan_init "$GA_BIN" 2>/dev/null && asan=1
total=10000 warm=2500 step=2500
[ "$asan" = 1 ] && total=600 warm=300 step=300

rc=0
SOAK_REQUESTS=$total SOAK_WARM=$warm SOAK_STEP=$step SOAK_BOUND_KB=512 SOAK_WORKERS=1 \
    SOAK_CONC=2 SOAK_FLAGS="--threads 2 --queue 1" SOAK_ENV=GEMINI_AGENT_LOG=debug \
    SOAK_LOG=$T_TMP/ga.log SOAK_OUT=$T_TMP/table.tsv GA_BIN=$GA_BIN \
    "$REPO/tests/bench/soak.sh" >"$T_TMP/soak.out" 2>&1 || rc=$?
sed 's/^/# /' "$T_TMP/soak.out"
verdict=$(sed -n 's/^verdict: //p' "$T_TMP/soak.out")
rows=$(($(wc -l <"$T_TMP/table.tsv" 2>/dev/null || echo 0) - 1))

if [ "$rows" -eq $((total / step + 1)) ]; then
    ok "soak: $total chat requests, a row every $step"
else
    not_ok "soak: $total chat requests, a row every $step" "exit $rc, $rows rows: $(tail -c 300 "$T_TMP/soak.out")"
fi
case $verdict in
*"not answered 2xx"* | "worker replaced"* | "")
    not_ok "every chat request answered 2xx by the same worker" "verdict '${verdict:-none}'" ;;
*) ok "every chat request answered 2xx by the same worker" ;;
esac
if [ "$asan" = 1 ]; then
    skip "idle RSS grows by 512 KB at most from $warm to $total requests" "ASan's quarantine keeps freed memory"
elif [ "$rc" = 0 ] && [[ $verdict == flat* ]]; then
    ok "idle RSS grows by 512 KB at most from $warm to $total requests ($(grep -o 'idle RSS [0-9]* -> [0-9]* KB ([-0-9]* KB)' "$T_TMP/soak.out"))"
else
    not_ok "idle RSS grows by 512 KB at most from $warm to $total requests" "$(grep -E '^worker|^verdict' "$T_TMP/soak.out" | tr '\n' ' ')"
fi

# Every pause of the soak (one per row, each longer than the worker's
# WORKER_IDLE_TRIM_MS) finds the worker idle: it trims.
trims=$(grep -c 'debug: idle: malloc_trim' "$T_TMP/ga.log" 2>/dev/null || true)
if [ "${trims:-0}" -ge $((total / step)) ]; then
    ok "an idle worker trims malloc ($trims times in $((total / step + 1)) pauses)"
else
    not_ok "an idle worker trims malloc (once a pause)" "${trims:-0} trims logged"
fi
# The last row: RSS as the last request was answered, then idle.
read -r _ _ busy idle _ < <(tail -n 1 "$T_TMP/table.tsv" 2>/dev/null) || true
if [ "$asan" = 1 ]; then
    skip "idle RSS below busy RSS" "ASan's allocator"
elif [ -n "${idle:-}" ] && [ "$idle" -lt "$busy" ]; then
    ok "idle RSS below busy RSS (${busy} -> ${idle} KB)"
else
    not_ok "idle RSS below busy RSS" "busy ${busy:-?} KB, idle ${idle:-?} KB"
fi
finish
