#!/bin/bash
# `make soak`: does a worker's memory stay flat over many chat requests?
#
# The chat route (geminiAgent.sendMessage, the typical signed body of
# make-request.py) is POSTed through a private nginx (the real site
# snippet, no rate limits) to `serve` with SOAK_WORKERS workers, against
# fastmock.c answering at once on loopback, SOAK_CONC requests at a time
# (post-count.c: exact counts, a connection per request). After every
# SOAK_STEP requests one table row: each worker's VmRSS (/proc/PID/status)
# as the last request is answered ("busy"), then after SOAK_IDLE_MS with
# nothing sent its VmRSS ("idle", past the worker's WORKER_IDLE_TRIM_MS),
# the anonymous memory of its smaps_rollup, and how many of its threads
# have served. The verdict compares each worker's idle RSS at the end with
# its idle RSS after SOAK_WARM requests (warm-up: threads, malloc arenas
# and caches touched for the first time): growth past SOAK_BOUND_KB in any
# worker is a creep, and the script exits 1. A request not answered 2xx,
# or a worker replaced during the run, fails it too.
#
#   SOAK_REQUESTS (default 100000), SOAK_STEP (5000), SOAK_WARM (20000),
#   SOAK_BOUND_KB (512), SOAK_IDLE_MS (1500), SOAK_CONC (4), SOAK_WORKERS
#   (2), SOAK_FLAGS (more options for serve, e.g. "--threads 2 --queue 1"),
#   SOAK_SIZE (typical; or small, large), GA_BIN (default
#   build/gemini-agent), SOAK_ENV (variables for the responder, e.g.
#   "MALLOC_ARENA_MAX=1"), SOAK_WRAP (a command the responder runs under,
#   e.g. "valgrind --tool=massif --massif-out-file=/tmp/massif.%p": the
#   workers are forked, so they stay under massif; heaptrack records only
#   the master), SOAK_LOG (a file for the responder's log, e.g. with
#   SOAK_ENV=GEMINI_AGENT_LOG=debug), SOAK_OUT (a file for the table as
#   tab-separated values).
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd -P)
total=${SOAK_REQUESTS:-100000} step=${SOAK_STEP:-5000} warm=${SOAK_WARM:-20000}
bound=${SOAK_BOUND_KB:-512} conc=${SOAK_CONC:-4} workers=${SOAK_WORKERS:-2}
size=${SOAK_SIZE:-typical} bin=${GA_BIN:-$repo/build/gemini-agent}
idle_ms=${SOAK_IDLE_MS:-1500}
for v in "$total" "$step" "$warm" "$bound" "$conc" "$workers" "$idle_ms"; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "soak: '$v' is not a positive number" >&2; exit 2; }
done
[ "$warm" -le "$total" ] || { echo "soak: SOAK_WARM ($warm) is past SOAK_REQUESTS ($total)" >&2; exit 2; }
for c in nginx cc python3 curl; do
    command -v "$c" >/dev/null || { echo "soak: $c is missing (make deps)" >&2; exit 2; }
done
[ -x "$bin" ] || { echo "soak: $bin is missing (make)" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ga-soak.XXXXXX")
pids=() master=""
cleanup() {
    # our own processes, by PID: the responder (its workers follow it; under
    # SOAK_WRAP its master is not $master but the pid file's), nginx, the mock
    local m
    m=$(sed -n 1p "$tmp/ga.pid" 2>/dev/null || true)
    [ -z "$m" ] || kill "$m" 2>/dev/null || true
    [ -z "$master" ] || kill "$master" 2>/dev/null || true
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

log=${SOAK_LOG:-$tmp/ga.log}
cc -O2 -o "$tmp/fastmock" "$repo/tests/bench/fastmock.c" -lpthread
cc -O2 -o "$tmp/post-count" "$repo/tests/bench/post-count.c" -lpthread
"$tmp/fastmock" "$tmp/mock.port" 0 0 & pids+=($!)
for _ in $(seq 50); do [ -s "$tmp/mock.port" ] && break; sleep 0.05; done
[ -s "$tmp/mock.port" ] || { echo "soak: fastmock did not start" >&2; exit 1; }

# The site secret signs the body's history, as a browser's would carry it.
head -c 32 /dev/urandom > "$tmp/site.key" && chmod 600 "$tmp/site.key"
printf 'actions: []\nauth: {secretFile: %s}\n' "$tmp/site.key" > "$tmp/sign.yaml"
python3 "$repo/tests/bench/make-request.py" "$size" |
    "$bin" auth sign-history --config "$tmp/sign.yaml" > "$tmp/body.json"
cat > "$tmp/agent.yaml" <<EOC
gemini: $tmp/gemini.yaml
actions: [$repo/actions]
dataDir: $tmp/var
auth: {secretFile: $tmp/site.key}
EOC
printf 'apiKey: soak-key\nbaseUrl: http://127.0.0.1:%s\n' "$(cat "$tmp/mock.port")" > "$tmp/gemini.yaml"
chmod 600 "$tmp/gemini.yaml"

# The responder, under SOAK_ENV and SOAK_WRAP (both word-split on purpose).
# shellcheck disable=SC2086
env GEMINI_AGENT_LOG=warn ${SOAK_ENV:-} ${SOAK_WRAP:-} "$bin" serve --config "$tmp/agent.yaml" \
    --socket "$tmp/ga.sock" --workers "$workers" ${SOAK_FLAGS:-} --pid-file "$tmp/ga.pid" 2> "$log" &
master=$!
workers_now() { sed -n 2p "$tmp/ga.pid" 2>/dev/null | cut -d: -f2; }
for _ in $(seq 600); do
    [ -S "$tmp/ga.sock" ] && [ "$(wc -w <<<"$(workers_now)")" = "$workers" ] && break
    kill -0 "$master" 2>/dev/null || break
    sleep 0.1
done
[ "$(wc -w <<<"$(workers_now)")" = "$workers" ] ||
    { echo "soak: serve did not start:" >&2; tail -5 "$log" >&2; exit 1; }
read -r -a wpids <<<"$(workers_now)"

# nginx: the site snippet with no rate or connection limits and no logs
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$repo/scripts/render-nginx-conf.sh" "$tmp/nginx" "$port" "$tmp/ga.sock" "$repo/www" 1000000r/s
sed -i -e 's/access_log .*/access_log off;/' "$tmp/nginx/nginx.conf"
sed -i -e '/limit_req /d' -e '/limit_conn /d' "$tmp/nginx/site.conf"
nginx -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx/" -e "$tmp/nginx/error.log" & pids+=($!)
url=http://127.0.0.1:$port/_jay/actions/geminiAgent.sendMessage
for _ in $(seq 50); do
    code=$(curl -s -o "$tmp/one.json" -w '%{http_code}' -H 'Content-Type: application/json' \
        --data-binary @"$tmp/body.json" "$url" || true)
    [ "$code" = 200 ] && break
    sleep 0.1
done
[ "$code" = 200 ] || { echo "soak: the chat request failed ($code): $(head -c 300 "$tmp/one.json")" >&2; exit 1; }

# rss PID: "VmRSS Anonymous THREADS": KB, and how many of its threads have
# served (run for over 1 ms: one that only started and waited runs for
# microseconds). A thread's first requests can touch a malloc arena no
# thread had used yet, so RSS steps up with this count until the worker's
# arenas are all in use.
rss() {
    local v a t
    v=$(awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0)
    a=$(awk '/^Anonymous:/ {print $2}' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0)
    t=$(cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '$1 > 1000000 {n++} END {print n + 0}')
    echo "${v:-0} ${a:-0} $t"
}

echo "soak: $total chat requests ($size body, $(wc -c < "$tmp/body.json") bytes), $conc at a time," \
    "$workers workers${SOAK_FLAGS:+ ($SOAK_FLAGS)}${SOAK_ENV:+, $SOAK_ENV}${SOAK_WRAP:+, under ${SOAK_WRAP%% *}}"
echo "KB per worker (wN): RSS as the last request of a step is answered, then RSS and anonymous memory" \
    "(smaps_rollup) after ${idle_ms} ms idle; thr: its threads that have served"
head=$(printf '%9s %6s' requests "s")
for i in "${!wpids[@]}"; do head="$head $(printf ' %9s %9s %9s %3s' "w$((i + 1))_busy" idle anon thr)"; done
echo "$head"
declare -A busy_warm busy_end idle_warm idle_end
row() {
    local line i r a t
    line=$(printf '%9d %6d' "$1" "$SECONDS")
    for i in "${!wpids[@]}"; do
        read -r r _ <<<"$(rss "${wpids[$i]}")"
        [ "$1" = "$warm" ] && busy_warm[$i]=$r
        busy_end[$i]=$r
        line="$line $(printf ' %9d' "$r")"
    done
    sleep "$(awk -v m="$idle_ms" 'BEGIN { print m / 1000 }')"
    for i in "${!wpids[@]}"; do
        read -r r a t <<<"$(rss "${wpids[$i]}")"
        [ "$1" = "$warm" ] && idle_warm[$i]=$r
        idle_end[$i]=$r
        # this worker's three columns go after its busy one
        line=$(awk -v i="$i" -v add="$(printf '%9d %9d %3d' "$r" "$a" "$t")" '{
            n = 0; out = ""
            for (f = 1; f <= NF; f++) {
                out = out (f > 1 ? " " : "") $f
                if (f >= 3 && f == 3 + i * 4) out = out " " add
            }
            print out }' <<<"$line")
    done
    # aligned for the eye, tab-separated for SOAK_OUT
    awk '{ printf "%9s %6s", $1, $2; for (f = 3; f <= NF; f += 4)
           printf "  %9s %9s %9s %3s", $f, $(f+1), $(f+2), $(f+3); print "" }' <<<"$line"
    [ -z "${SOAK_OUT:-}" ] || tr -s ' ' '\t' <<<"$line" >> "$SOAK_OUT"
}
[ -z "${SOAK_OUT:-}" ] || printf '%s\n' "$head" | tr -s ' ' '\t' | sed 's/^\t//' > "$SOAK_OUT"
SECONDS=0
done_n=0 bad=0
row 0
while [ "$done_n" -lt "$total" ]; do
    n=$step
    [ $((done_n + n)) -gt "$total" ] && n=$((total - done_n))
    # warm-up boundary: a row exactly there
    [ "$done_n" -lt "$warm" ] && [ $((done_n + n)) -gt "$warm" ] && n=$((warm - done_n))
    "$tmp/post-count" "$url" "$tmp/body.json" "$n" "$conc" > "$tmp/pc" 2>&1 || true
    read -r w1 _ w3 w4 < "$tmp/pc" || true
    [ "${w1:-}" = ok ] && [ "${w3:-}" = failed ] ||
        { echo "soak: post-count failed: $(head -c 300 "$tmp/pc")" >&2; exit 1; }
    bad=$((bad + w4))
    done_n=$((done_n + n))
    row "$done_n"
done

verdict=flat
now=$(workers_now)
for i in "${!wpids[@]}"; do
    g=$((idle_end[$i] - idle_warm[$i]))
    echo "worker $((i + 1)) (pid ${wpids[$i]}), from $warm to $total requests: idle RSS" \
        "${idle_warm[$i]} -> ${idle_end[$i]} KB ($g KB), busy RSS ${busy_warm[$i]} -> ${busy_end[$i]} KB" \
        "($((busy_end[$i] - busy_warm[$i])) KB)"
    [ "$g" -gt "$bound" ] && verdict=creep
    case " $now " in *" ${wpids[$i]} "*) ;; *) verdict="worker replaced" ;; esac
done
[ "$bad" -gt 0 ] && verdict="$bad requests not answered 2xx"
echo "verdict: $verdict (bound: $bound KB of idle RSS growth per worker after $warm requests)"
[ "$verdict" = flat ]
