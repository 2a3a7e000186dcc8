#!/bin/bash
# `make bench`: what a chat request costs the responder, through nginx.
#
# cpu   against a zero-latency upstream (fastmock.c):
#       - worker CPU per request for a small, a typical and a large
#         sendMessage body (make-request.py), for gemini-agent and for the
#         floor of our deployment model (floor.c: libfcgi + libcurl, reading
#         the body and passing it on, no JSON), and their ratio;
#       - requests/s and latency of the typical body, and each gemini-agent
#         worker's peak RSS.
#       Every figure is the median of BENCH_RUNS runs of BENCH_SECONDS each.
# conc  against an upstream that answers after BENCH_UPSTREAM_MS: for each
#       number of concurrent chats in BENCH_CONC_LEVELS, requests/s, p50 and
#       p99 latency, errors (non-2xx answers and socket errors), requests
#       stuck (still unanswered at the end after twice the upstream delay,
#       from nginx's 499s) and the responder's peak total RSS (master +
#       workers), with `serve`
#       BENCH_CONC_FLAGS; then 200 chats against `serve` with no options.
#       Medians of BENCH_RUNS runs of BENCH_CONC_SECONDS each, a fresh
#       responder for every run. The connections' first requests are spread
#       over BENCH_CONC_RAMP_MS: 1000 requests leaving in the same
#       millisecond cost nginx alone, straight to the mock, half a second on
#       2 cores, which is the load generator's doing, not concurrency. (Keep
#       the ramp under 2 s: wrk counts a connection that has not sent its
#       first request at its first timeout check as a timeout.)
# stream  streamed chat answers (Accept: application/x-ndjson):
#       - worker CPU per request, requests/s and latency for the
#         BENCH_STREAM_SIZE body answered as plain JSON and as a stream,
#         as the cpu part measures them (wrk, post.lua with BENCH_ACCEPT),
#         against fastmock with no delay (its stream's first event at once);
#       - the latency of one chunk from the upstream to the client: fastmock
#         sends its first SSE event BENCH_STREAM_FIRST_MS after the request,
#         stamped with CLOCK_MONOTONIC; stream-client.c opens BENCH_STREAMS
#         streams through nginx, BENCH_STREAM_PARALLEL at a time, and at
#         the first delta line of each takes the clock minus that stamp:
#         median and p99 over the streams, and errors (non-200, no result
#         line last); then the same client straight to fastmock, no
#         responder, no nginx: the floor of the measurement.
#       Medians of BENCH_RUNS runs. A responder that does not stream yet
#       (it ignores the Accept header) is reported as such.
#
#   BENCH_PARTS (default "cpu conc stream"), BENCH_RUNS (default 3)
#   cpu:  BENCH_SECONDS (default 5), BENCH_CONNECTIONS (default 4),
#         BENCH_WORKERS (default 2), BENCH_SIZES (default "small typical large")
#   conc: BENCH_CONC_LEVELS (default "10 100 1000"), BENCH_CONC_SECONDS
#         (default 12), BENCH_CONC_FLAGS (default "--workers 2 --threads 512";
#         options this build's `serve` lacks are dropped, with a note),
#         BENCH_CONC_SIZE (default typical), BENCH_UPSTREAM_MS (default 2000),
#         BENCH_CONC_RAMP_MS (default 1000; 0: all connections at once)
#   stream: BENCH_STREAM_SIZE (default typical), BENCH_STREAMS (default 1000),
#         BENCH_STREAM_PARALLEL (default 16), BENCH_STREAM_FIRST_MS (default
#         50); BENCH_SECONDS, BENCH_CONNECTIONS and BENCH_WORKERS as for cpu
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd -P)
parts=${BENCH_PARTS:-cpu conc stream} runs=${BENCH_RUNS:-3}
secs=${BENCH_SECONDS:-5} conns=${BENCH_CONNECTIONS:-4}
workers=${BENCH_WORKERS:-2} sizes=${BENCH_SIZES:-small typical large}
levels=${BENCH_CONC_LEVELS:-10 100 1000} csecs=${BENCH_CONC_SECONDS:-12}
cflags=${BENCH_CONC_FLAGS---workers 2 --threads 512}
csize=${BENCH_CONC_SIZE:-typical} delay=${BENCH_UPSTREAM_MS:-2000}
ramp=${BENCH_CONC_RAMP_MS:-1000}
ssize=${BENCH_STREAM_SIZE:-typical} streams=${BENCH_STREAMS:-1000}
spar=${BENCH_STREAM_PARALLEL:-16} sfirst=${BENCH_STREAM_FIRST_MS:-50}
defaults_conns=200
for p in $parts; do
    case $p in cpu | conc | stream) ;; *) echo "bench: BENCH_PARTS: unknown part '$p' (cpu, conc, stream)" >&2; exit 2 ;; esac
done
has_part() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }

# Every connection of the concurrency table holds a socket in wrk and two in
# nginx (client, responder); the responder and the mock hold one or two
# each. The limit is per process, but ask for 3 a connection to be safe.
nofile=1024
if has_part conc; then
    max=$defaults_conns
    for l in $levels; do [ "$l" -gt "$max" ] && max=$l; done
    need=$((3 * max + 256))
    hard=$(ulimit -Hn)
    want=65536
    [ "$hard" != unlimited ] && [ "$hard" -lt "$want" ] && want=$hard
    [ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge "$want" ] || ulimit -n "$want"
    nofile=$(ulimit -n)
    if [ "$nofile" != unlimited ] && [ "$nofile" -lt "$need" ]; then
        echo "bench: $max concurrent connections need about $need open files a process;" \
             "the hard limit is $hard (raise it: ulimit -Hn, or LimitNOFILE= / limits.conf)," \
             "or lower BENCH_CONC_LEVELS" >&2
        exit 1
    fi
    [ "$nofile" = unlimited ] && nofile=65536
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ga-bench.XXXXXX")
pids=() conc_master="" sampler=""
workers_of() { sed -n 2p "$1" 2>/dev/null | cut -d: -f2; }
cleanup() {
    # under set -e: a failed kill must not end the cleanup half-way
    [ -z "$sampler" ] || kill "$sampler" 2>/dev/null || true
    [ -z "$conc_master" ] || conc_stop
    for w in $(workers_of "$tmp/floor.pid"); do kill "$w" 2>/dev/null || true; done
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

command -v wrk >/dev/null || { echo "bench: wrk is missing (make deps)" >&2; exit 1; }
[ -x "$repo/build/gemini-agent" ] || { echo "bench: build/gemini-agent is missing (make)" >&2; exit 1; }
cc -O2 -o "$tmp/fastmock" "$repo/tests/bench/fastmock.c" -lpthread
has_part cpu && cc -O2 -o "$tmp/floor" "$repo/tests/bench/floor.c" -lfcgi -lcurl
has_part stream && cc -O2 -o "$tmp/stream-client" "$repo/tests/bench/stream-client.c" -lpthread
all_sizes=""
has_part cpu && all_sizes=$sizes
has_part conc && all_sizes="$all_sizes $csize"
has_part stream && all_sizes="$all_sizes $ssize"
for s in $all_sizes; do
    [ -s "$tmp/body.$s.json" ] || python3 "$repo/tests/bench/make-request.py" "$s" > "$tmp/body.$s.json"
done

# start_mock NAME DELAY_MS [STREAM_FIRST_MS]: a fastmock; sets upstream
start_mock() {
    "$tmp/fastmock" "$tmp/$1.port" "$2" "${3:-$sfirst}" & pids+=($!)
    for _ in $(seq 50); do [ -s "$tmp/$1.port" ] && break; sleep 0.05; done
    upstream=http://127.0.0.1:$(cat "$tmp/$1.port")
}

# agent_config NAME UPSTREAM: $tmp/NAME.yaml for `serve --config`
agent_config() {
    cat > "$tmp/$1.yaml" <<EOC
gemini: $tmp/$1-gemini.yaml
actions: [$repo/actions]
dataDir: $tmp/var
EOC
    printf "apiKey: bench-key\nbaseUrl: %s\n" "$2" > "$tmp/$1-gemini.yaml"
    chmod 600 "$tmp/$1-gemini.yaml" # serve refuses a key file others can read
}

# start_nginx WHO SOCKET: a private nginx in front of a responder; sets url[WHO]
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
declare -A url
start_nginx() {
    local who=$1 port conf wc=8192
    port=$(free_port)
    conf=$tmp/nginx-$who
    "$repo/scripts/render-nginx-conf.sh" "$conf" "$port" "$2" "$repo/www" 1000000r/s
    # No logs, no rate limit (its millisecond buckets refuse bursts that a
    # load generator makes, whatever the rate) and no cap on requests per
    # address (wrk's 1000 connections all come from 127.0.0.1). Room for
    # thousands of connections: worker_connections counts both sides of
    # each, the file limit must cover them, and a burst of connects must fit
    # the backlog.
    [ "$nofile" -lt "$wc" ] && wc=$nofile
    sed -i -e 's/^error_log .*/error_log '"${conf//\//\\/}"'\/error.log warn;/' \
        -e 's/access_log .*/access_log off;/' \
        -e 's/^worker_rlimit_nofile [0-9]*;/worker_rlimit_nofile '"$nofile"';/' \
        -e 's/worker_connections [0-9]*;/worker_connections '"$wc"';/' "$conf/nginx.conf"
    sed -i -e '/limit_req /d' -e '/limit_conn /d' \
        -e 's/listen 127.0.0.1:'"$port"';/listen 127.0.0.1:'"$port"' backlog=4096;/' \
        "$conf/site.conf"
    grep -q "worker_connections $wc;" "$conf/nginx.conf" && grep -q "worker_rlimit_nofile $nofile;" "$conf/nginx.conf" &&
        grep -q "backlog=4096;" "$conf/site.conf" && ! grep -q "limit_conn gemini" "$conf/site.conf" ||
        { echo "bench: the rendered nginx config changed; update start_nginx" >&2; exit 1; }
    # The concurrency table's nginx logs one line per request still waiting
    # when wrk stops and closes its connections (nginx's 499): wrk counts
    # neither them nor their latency.
    [ "$who" = conc ] && sed -i 's|^ *access_log off;|    map $status $bench_open { 499 1; default 0; }\n    log_format bench_open "$status $request_time";\n    access_log '"$conf"'/open.log bench_open if=$bench_open;|' \
        "$conf/nginx.conf"
    nginx -c "$conf/nginx.conf" -p "$conf/" -e "$conf/error.log" & pids+=($!)
    url[$who]=http://127.0.0.1:$port/_jay/actions/geminiAgent.sendMessage
}

# check WHO SIZE: one request by hand; the bench is meaningless if it fails
check() {
    local code
    code=$(curl -s -o "$tmp/one.json" -w '%{http_code}' -H 'Content-Type: application/json' \
        --data-binary @"$tmp/body.$2.json" "${url[$1]}")
    [ "$code" = 200 ] || { echo "bench: the $1 request failed ($code): $(head -c 300 "$tmp/one.json")" >&2; exit 1; }
}

to_ms() { # wrk prints 1.23ms / 456.78us / 1.02s / 1.02m
    awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n += 0;
        else if (v ~ /s$/) n *= 1000; else if (v ~ /m$/) n *= 60000; printf "%.3f", n }'
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# --- cpu: CPU per request against a zero-latency upstream ----------------------

# utime + stime of a responder's workers, in clock ticks (fields 14 and 15)
hz=$(getconf CLK_TCK)
ticks() {
    local t=0
    for w in $(workers_of "$1"); do t=$((t + $(sed 's/.*) //' "/proc/$w/stat" | awk '{print $12 + $13}'))); done
    echo "$t"
}

# measure WHO SIZE: sets cpu (µs per request), rps, p50, p99 (medians);
# BENCH_ACCEPT in the environment goes to post.lua
measure() {
    local who=$1 size=$2 r t0 t1 n c=() q=() a=() b=()
    export BENCH_BODY=$tmp/body.$size.json
    for r in $(seq "$runs"); do
        t0=$(ticks "$tmp/$who.pid")
        wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$repo/tests/bench/post.lua" "${url[$who]}" > "$tmp/wrk"
        t1=$(ticks "$tmp/$who.pid")
        if grep -q 'Non-2xx' "$tmp/wrk"; then
            echo "bench: $who $size run $r had failed requests:" >&2; cat "$tmp/wrk" >&2; exit 1
        fi
        n=$(awk '/requests in/ {print $1}' "$tmp/wrk")
        c+=("$(awk -v d=$((t1 - t0)) -v hz="$hz" -v n="$n" 'BEGIN { printf "%.0f", d * 1e6 / hz / n }')")
        q+=("$(awk '/Requests\/sec/ {print $2}' "$tmp/wrk")")
        a+=("$(to_ms "$(awk '$1=="50%" {print $2}' "$tmp/wrk")")")
        b+=("$(to_ms "$(awk '$1=="99%" {print $2}' "$tmp/wrk")")")
    done
    cpu=$(median "${c[@]}") rps=$(median "${q[@]}") p50=$(median "${a[@]}") p99=$(median "${b[@]}")
}

cpu_part() {
    local size bytes fcpu frps typical="" rss w who
    start_mock mock 0
    # gemini-agent, as `serve` runs it
    agent_config agent "$upstream"
    GEMINI_AGENT_LOG=warn "$repo/build/gemini-agent" serve --config "$tmp/agent.yaml" \
        --socket "$tmp/ga.sock" --workers "$workers" --pid-file "$tmp/ga.pid" 2>"$tmp/ga.log" &
    pids+=($!)
    # the floor, as many workers
    "$tmp/floor" "$tmp/floor.sock" "$upstream/v1beta/models/gemini-3.8-flash:generateContent" \
        "$workers" "$tmp/floor.pid" & pids+=($!)
    for _ in $(seq 50); do [ -S "$tmp/ga.sock" ] && [ -S "$tmp/floor.sock" ] && break; sleep 0.05; done
    start_nginx ga "$tmp/ga.sock"
    start_nginx floor "$tmp/floor.sock"
    sleep 0.3
    # ga last: one.json keeps its answer; the typical body unless not asked for
    local first=typical
    [[ " $sizes " == *" typical "* ]] || first=${sizes%% *}
    for who in floor ga; do check "$who" "$first"; done
    # What Gemini's implicit cache served, as the answer's usage reports it
    # (the zero-latency upstream reports a fixed share, like Gemini would).
    python3 - "$tmp/one.json" <<'PY'
import json, sys
u = json.load(open(sys.argv[1])).get("usage", {})
p, c = u.get("promptTokens", 0), u.get("cachedTokens", 0)
if c:
    print("cached tokens: %d of %d prompt tokens (%.1f%%)" % (c, p, 100.0 * c / p if p else 0))
PY
    echo "$workers workers each, $conns connections, ${secs}s x $runs runs; medians"

    printf '%-8s %9s | %14s %12s | %12s %9s | %s\n' size body "floor µs/req" "floor req/s" \
        "agent µs/req" "req/s" "ratio, agent µs per KB"
    for size in $sizes; do
        bytes=$(wc -c < "$tmp/body.$size.json")
        measure floor "$size"; fcpu=$cpu frps=$rps
        measure ga "$size"
        [ "$size" = typical ] && typical="p50 $p50 ms, p99 $p99 ms, $rps req/s"
        awk -v s="$size" -v by="$bytes" -v f="$fcpu" -v fr="$frps" -v g="$cpu" -v gr="$rps" 'BEGIN {
            printf "%-8s %7.1fKB | %14d %12.1f | %12d %9.1f | %.1fx, %.1f µs/KB\n",
                s, by / 1024, f, fr, g, gr, g / (f ? f : 1), g / (by / 1024) }'
    done
    [ -n "$typical" ] && echo "typical body through gemini-agent: $typical"
    rss=""
    for w in $(workers_of "$tmp/ga.pid"); do rss="$rss $(awk '/VmHWM/ {print $2}' "/proc/$w/status") KB"; done
    echo "peak RSS per gemini-agent worker:$rss"
}

# --- conc: concurrent chats against a slow upstream ----------------------------

# serve_flags: BENCH_CONC_FLAGS less the options this build's serve lacks;
# sets flags (an array), dropped (what was left out) and lacks (its names)
serve_flags() {
    local help opt
    help=$("$repo/build/gemini-agent" serve --help 2>&1 || true)
    flags=() dropped="" lacks=""
    set -- $cflags
    while [ $# -gt 0 ]; do
        opt=${1%%=*}
        if [[ $1 == --* ]] && ! grep -qw -- "$opt" <<<"$help"; then
            dropped="$dropped $1" lacks="$lacks $opt"
            [[ $1 != *=* ]] && [ $# -gt 1 ] && [[ $2 != --* ]] && { dropped="$dropped $2"; shift; }
        else
            flags+=("$1")
        fi
        shift
    done
}

# conc_start [SERVE OPTIONS]: a fresh responder on $tmp/conc.sock
conc_start() {
    rm -f "$tmp/conc.sock" "$tmp/conc.pid"
    GEMINI_AGENT_LOG=warn "$repo/build/gemini-agent" serve --config "$tmp/conc.yaml" \
        --socket "$tmp/conc.sock" --pid-file "$tmp/conc.pid" "$@" 2>>"$tmp/conc.log" &
    conc_master=$!
    for _ in $(seq 100); do
        [ -S "$tmp/conc.sock" ] && [ -n "$(workers_of "$tmp/conc.pid")" ] && return 0
        kill -0 "$conc_master" 2>/dev/null || break
        sleep 0.05
    done
    echo "bench: gemini-agent serve $* did not start:" >&2; tail -5 "$tmp/conc.log" >&2; exit 1
}

# conc_stop: SIGTERM (it finishes the requests in flight); if it has not
# stopped after the upstream delay and 5 s more, SIGKILL, and say so in
# stop_note. (The stop time is not what the table measures; waiting out a
# queue of accepted-later requests would only make the bench slow.)
conc_stop() {
    local ws i
    ws=$(workers_of "$tmp/conc.pid")
    kill "$conc_master" 2>/dev/null || true
    for i in $(seq $((delay / 100 + 50))); do kill -0 "$conc_master" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$conc_master" 2>/dev/null; then
        stop_note="not stopped $((delay / 1000 + 5)) s after SIGTERM, killed"
        for w in $ws; do kill -9 "$w" 2>/dev/null || true; done
        kill -9 "$conc_master" 2>/dev/null || true
    fi
    wait "$conc_master" 2>/dev/null || true
    conc_master=""
}

# rss_sampler PIDFILE OUT: every 200 ms, the sum of VmRSS over the master
# (line 1) and the workers (line 2); the peak, in KB, goes to OUT
rss_sampler() {
    local peak=0 sum p k v
    while :; do
        sum=0
        for p in $(sed -n -e 1p -e '2s/^[^:]*://p' "$1" 2>/dev/null); do
            { while read -r k v _; do
                [ "$k" = VmRSS: ] && { sum=$((sum + v)); break; }
            done < "/proc/$p/status"; } 2>/dev/null || true
        done
        [ "$sum" -gt "$peak" ] && { peak=$sum; echo "$peak" > "$2"; }
        sleep 0.2
    done
}

# conc_row LABEL CONNS [SERVE OPTIONS]: one table row, BENCH_RUNS runs
conc_row() {
    local label=$1 c=$2 r t n e o q=() a=() b=() m=() k=() x=() y=() why="" miss="" killed=0
    shift 2
    export BENCH_BODY=$tmp/body.$csize.json
    : > "$tmp/nginx-conc/error.log"
    for r in $(seq "$runs"); do
        conc_start "$@"
        [ "$r" = 1 ] && check conc "$csize"
        : > "$tmp/nginx-conc/open.log"
        echo 0 > "$tmp/rss"
        rss_sampler "$tmp/conc.pid" "$tmp/rss" & sampler=$!
        t=2; [ "$c" -lt 2 ] && t=1
        BENCH_RAMP_MS=$ramp BENCH_CONNS_PER_THREAD=$((c / t)) wrk -t"$t" -c"$c" -d"${csecs}s" --timeout "${timeout}s" --latency \
            -s "$repo/tests/bench/post.lua" "${url[conc]}" > "$tmp/wrk" 2>&1 || true
        kill "$sampler" 2>/dev/null || true; wait "$sampler" 2>/dev/null || true; sampler=""
        stop_note=""
        conc_stop
        [ -n "$stop_note" ] && killed=$((killed + 1))
        grep -q 'requests in' "$tmp/wrk" || { echo "bench: wrk failed:" >&2; cat "$tmp/wrk" >&2; exit 1; }
        n=$(awk '/requests in/ {print $1}' "$tmp/wrk")
        e=$(awk '/Non-2xx/ {s += $NF} /Socket errors/ {gsub(",", ""); s += $4 + $6 + $8 + $10} END {print s + 0}' "$tmp/wrk")
        q+=("$(awk '/Requests\/sec/ {print $2}' "$tmp/wrk")")
        a+=("$(to_ms "$(awk '$1=="50%" {print $2}' "$tmp/wrk")")")
        b+=("$(to_ms "$(awk '$1=="99%" {print $2}' "$tmp/wrk")")")
        # nginx logs a 499 when it sees wrk's connection close; the responder
        # has stopped by now, so every one is in
        o=$(awk -v d="$delay" '$1 == 499 && $2 * 1000 > 2 * d { s++ } END { print s + 0 }' "$tmp/nginx-conc/open.log")
        m+=("$(cat "$tmp/rss")") k+=("$n") x+=("$e") y+=("$o")
        cat "$tmp/wrk" >> "$tmp/wrk.all"
    done
    rps=$(median "${q[@]}") p50=$(median "${a[@]}") p99=$(median "${b[@]}")
    rss=$(median "${m[@]}") n=$(median "${k[@]}") e=$(median "${x[@]}") o=$(median "${y[@]}")
    # what nginx saw, over all the runs
    why=$(awk '/Resource temporarily unavailable/ {b++} /upstream timed out/ {t++}
        /Connection refused/ {r++} /worker_connections are not enough/ {w++}
        /Too many open files/ {f++}
        END { if (b) printf " %d responder-backlog-full (EAGAIN),", b;
              if (t) printf " %d upstream-timeout,", t; if (r) printf " %d refused,", r;
              if (w) printf " %d nginx-worker_connections,", w; if (f) printf " %d nginx-EMFILE,", f }' \
        "$tmp/nginx-conc/error.log")
    [ "$e" -gt 0 ] && miss="$miss errors"
    [ "$o" -gt 0 ] && miss="$miss stuck"
    awk -v p="$p99" -v d="$delay" 'BEGIN { exit !(p > d + 100) }' && miss="$miss p99"
    [ "$rss" -gt $((300 * 1024)) ] && miss="$miss RSS"
    [ "$n" -eq 0 ] && miss="$miss no-answers"
    printf '%-15s %8.1f %7.0f %7.0f %8d %8d %6d %7.1f  %s\n' "$label" "$rps" "$p50" "$p99" "$n" "$e" "$o" \
        "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" "${miss:- ok}"
    [ -n "$why" ] && echo "                nginx error.log, $runs runs:${why%,}"
    [ "$killed" -gt 0 ] && echo "                responder $stop_note ($killed of $runs runs)"
    return 0
}

conc_part() {
    local l shown
    start_mock slowmock "$delay"
    agent_config conc "$upstream"
    start_nginx conc "$tmp/conc.sock"
    sleep 0.3
    timeout=$((delay / 1000 + 8))
    serve_flags
    [ "$csecs" -lt $((timeout + 2)) ] &&
        echo "note: runs of ${csecs}s are shorter than wrk's --timeout ${timeout}s + 2 s: requests left unanswered are not counted as errors"
    shown=${flags[*]:-}
    [ -n "$dropped" ] && echo "note: this build's 'gemini-agent serve' lacks$lacks; running without:$dropped"
    echo
    echo "concurrent chats: upstream answers after ${delay} ms; $csize body" \
        "($(awk -v b="$(wc -c < "$tmp/body.$csize.json")" 'BEGIN { printf "%.1f", b / 1024 }') KB);" \
        "${csecs}s x $runs runs, a fresh responder each, first requests spread over ${ramp} ms; medians"
    echo "target: 0 errors, p99 <= $((delay + 100)) ms, responder RSS <= 300 MB. errors: non-2xx" \
        "and socket errors (wrk --timeout ${timeout}s); stuck: still unanswered when the run ended," \
        "after over $((2 * delay)) ms (wrk counts neither)"
    printf '%-15s %8s %7s %7s %8s %8s %6s %7s  %s\n' chats "req/s" "p50 ms" "p99 ms" answers errors stuck "RSS MB" target
    echo "serve ${shown:-(no options)}:"
    for l in $levels; do conc_row "$l" "$l" "${flags[@]}"; done
    echo "serve (no options):"
    conc_row "$defaults_conns (defaults)" "$defaults_conns"
}

# --- stream: streamed answers ----------------------------------------------------

# start_agent NAME: `serve` with $tmp/NAME.yaml on $tmp/NAME.sock, BENCH_WORKERS workers
start_agent() {
    GEMINI_AGENT_LOG=warn "$repo/build/gemini-agent" serve --config "$tmp/$1.yaml" \
        --socket "$tmp/$1.sock" --workers "$workers" --pid-file "$tmp/$1.pid" 2>"$tmp/$1.log" &
    pids+=($!)
    for _ in $(seq 100); do
        [ -S "$tmp/$1.sock" ] && [ -n "$(workers_of "$tmp/$1.pid")" ] && return 0
        sleep 0.05
    done
    echo "bench: gemini-agent serve ($1) did not start:" >&2; tail -5 "$tmp/$1.log" >&2; exit 1
}

# check_stream WHO SIZE: one streamed request by hand; sets streaming to
# yes (an NDJSON stream ending in a result line) or no (plain JSON: this
# responder does not stream); anything else stops the bench
check_stream() {
    local code
    code=$(curl -s -o "$tmp/one.ndjson" -D "$tmp/one.head" -w '%{http_code}' \
        -H 'Content-Type: application/json' -H 'Accept: application/x-ndjson' \
        --data-binary @"$tmp/body.$2.json" "${url[$1]}")
    [ "$code" = 200 ] || { echo "bench: the $1 stream failed ($code): $(head -c 300 "$tmp/one.ndjson")" >&2; exit 1; }
    streaming=$(python3 - "$tmp/one.head" "$tmp/one.ndjson" <<'PY'
import json, sys
head = open(sys.argv[1], encoding="latin-1").read().lower()
body = open(sys.argv[2], "rb").read().decode("utf-8")
if "content-type: application/json" in head:
    json.loads(body)
    print("no")
elif "content-type: application/x-ndjson" in head:
    lines = [json.loads(l) for l in body.splitlines() if l.strip()]
    print("yes" if lines and lines[-1].get("type") == "result" else "bad: last line %r" % lines[-1:])
else:
    print("bad: no NDJSON or JSON content type")
PY
) || streaming="bad: not JSON"
    case $streaming in yes | no) ;; *)
        echo "bench: the $1 stream is broken ($streaming): $(head -c 300 "$tmp/one.ndjson")" >&2; exit 1 ;;
    esac
}

# stream_runs TARGET URL [raw-sse]: BENCH_RUNS runs of stream-client; sets
# smed, sp99 (µs, medians of the runs), serr (errors, all runs), snot (runs
# without a single stream), skinds (what the errors were)
stream_runs() {
    local r rc m p e k q=() b=()
    serr=0 snot=0 skinds=""
    for r in $(seq "$runs"); do
        rc=0
        "$tmp/stream-client" "$2" "$tmp/body.$ssize.json" "$streams" "$spar" ${3:-} > "$tmp/sc.out" || rc=$?
        [ "$rc" -le 3 ] && [ -s "$tmp/sc.out" ] ||
            { echo "bench: stream-client failed ($rc) against the $1" >&2; cat "$tmp/sc.out" >&2; exit 1; }
        [ "$rc" = 3 ] && { snot=$((snot + 1)); continue; }
        read -r m p e k < <(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
f = lambda v: "-" if v is None else "%.0f" % v
print(f(j["median_us"]), f(j["p99_us"]), j["errors"] + j["not_streamed"],
      ", ".join("%s: %d" % kv for kv in j["error_kinds"].items()) or "-")' "$tmp/sc.out")
        [ "$m" != - ] && q+=("$m") && b+=("$p")
        serr=$((serr + e))
        [ "$k" != - ] && skinds="$skinds${skinds:+; }run $r: $k"
    done
    smed=- sp99=-
    [ ${#q[@]} -gt 0 ] && smed=$(median "${q[@]}") sp99=$(median "${b[@]}")
    return 0
}

stream_part() {
    local bytes a
    bytes=$(wc -c < "$tmp/body.$ssize.json")
    # CPU: a zero-latency upstream, its stream's first event at once
    start_mock smock 0 0
    agent_config st "$upstream"
    start_agent st
    start_nginx st "$tmp/st.sock"
    sleep 0.3
    check st "$ssize"
    check_stream st "$ssize"
    echo
    echo "streamed answers: $ssize body ($(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1024 }') KB)," \
        "$workers workers, $conns connections, ${secs}s x $runs runs; medians"
    [ "$streaming" = no ] &&
        echo "note: no NDJSON stream (responder does not stream): it ignores the Accept header, both rows are plain JSON"
    # warm the fresh workers up first (their arenas and caches), in both modes,
    # so that the first row does not pay for it
    for a in '' application/x-ndjson; do
        BENCH_BODY=$tmp/body.$ssize.json BENCH_ACCEPT=$a wrk -t2 -c"$conns" -d1s \
            -s "$repo/tests/bench/post.lua" "${url[st]}" > /dev/null
    done
    printf '%-22s %12s %9s %8s %8s\n' "answer" "agent µs/req" "req/s" "p50 ms" "p99 ms"
    BENCH_ACCEPT='' measure st "$ssize"
    printf '%-22s %12d %9.1f %8.2f %8.2f\n' "JSON" "$cpu" "$rps" "$p50" "$p99"
    BENCH_ACCEPT=application/x-ndjson measure st "$ssize"
    printf '%-22s %12d %9.1f %8.2f %8.2f\n' "NDJSON stream" "$cpu" "$rps" "$p50" "$p99"

    # latency: the first event BENCH_STREAM_FIRST_MS after the request
    start_mock slmock 0 "$sfirst"
    agent_config sl "$upstream"
    start_agent sl
    start_nginx sl "$tmp/sl.sock"
    sleep 0.3
    echo "first delta line, from fastmock's write to the client's read: $streams streams" \
        "x $runs runs, $spar at a time, the first event ${sfirst} ms after each request"
    stream_runs "responder through nginx" "${url[sl]}"
    if [ "$snot" = "$runs" ]; then
        echo "  through nginx + gemini-agent: no NDJSON stream (responder does not stream)"
    else
        printf '  through nginx + gemini-agent: median %s µs, p99 %s µs, errors %d of %d streams%s\n' \
            "$smed" "$sp99" "$serr" $((streams * runs)) "${skinds:+ ($skinds)}"
        [ "$snot" -gt 0 ] && echo "  ($snot of $runs runs got no stream at all)"
    fi
    stream_runs "mock alone" "$upstream/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse" raw-sse
    printf '  floor, the same client straight to fastmock: median %s µs, p99 %s µs, errors %d\n' \
        "$smed" "$sp99" "$serr"
}

for p in $parts; do
    "${p}_part"
done
