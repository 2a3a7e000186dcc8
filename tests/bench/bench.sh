#!/bin/bash
# `make bench`: what a chat request costs the responder, through nginx,
# against a zero-latency upstream (fastmock.c):
#
#   - worker CPU per request for a small, a typical and a large sendMessage
#     body (make-request.py), for gemini-agent and for the floor of our
#     deployment model (floor.c: libfcgi + libcurl, reading the body and
#     passing it on, no JSON), and their ratio;
#   - requests/s and latency of the typical body, and each gemini-agent
#     worker's peak RSS.
#
# Every figure is the median of BENCH_RUNS runs of BENCH_SECONDS each.
#
#   BENCH_SECONDS (default 5), BENCH_CONNECTIONS (default 4),
#   BENCH_WORKERS (default 2), BENCH_RUNS (default 3),
#   BENCH_SIZES (default "small typical large")
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd -P)
secs=${BENCH_SECONDS:-5} conns=${BENCH_CONNECTIONS:-4}
workers=${BENCH_WORKERS:-2} runs=${BENCH_RUNS:-3}
sizes=${BENCH_SIZES:-small typical large}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ga-bench.XXXXXX")
pids=()
workers_of() { sed -n 2p "$1" 2>/dev/null | cut -d: -f2; }
cleanup() {
    for w in $(workers_of "$tmp/floor.pid"); do kill "$w" 2>/dev/null || true; done
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

command -v wrk >/dev/null || { echo "bench: wrk is missing (make deps)" >&2; exit 1; }
cc -O2 -o "$tmp/fastmock" "$repo/tests/bench/fastmock.c" -lpthread
cc -O2 -o "$tmp/floor" "$repo/tests/bench/floor.c" -lfcgi -lcurl
for s in $sizes; do python3 "$repo/tests/bench/make-request.py" "$s" > "$tmp/body.$s.json"; done

"$tmp/fastmock" "$tmp/mock.port" & pids+=($!)
for _ in $(seq 50); do [ -s "$tmp/mock.port" ] && break; sleep 0.05; done
upstream=http://127.0.0.1:$(cat "$tmp/mock.port")

# gemini-agent, as `serve` runs it
cat > "$tmp/agent.yaml" <<EOC
gemini: $tmp/gemini.yaml
actions: [$repo/actions]
dataDir: $tmp/var
EOC
printf "apiKey: bench-key\nbaseUrl: %s\n" "$upstream" > "$tmp/gemini.yaml"
chmod 600 "$tmp/gemini.yaml" # serve refuses a key file others can read
GEMINI_AGENT_LOG=warn "$repo/build/gemini-agent" serve --config "$tmp/agent.yaml" \
    --socket "$tmp/ga.sock" --workers "$workers" --pid-file "$tmp/ga.pid" 2>"$tmp/ga.log" &
pids+=($!)
# the floor, as many workers
"$tmp/floor" "$tmp/floor.sock" "$upstream/v1beta/models/gemini-3.8-flash:generateContent" \
    "$workers" "$tmp/floor.pid" & pids+=($!)
for _ in $(seq 50); do [ -S "$tmp/ga.sock" ] && [ -S "$tmp/floor.sock" ] && break; sleep 0.05; done

# one private nginx in front of each
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
declare -A url
for who in ga floor; do
    port=$(free_port)
    "$repo/scripts/render-nginx-conf.sh" "$tmp/nginx-$who" "$port" "$tmp/$who.sock" "$repo/www" 1000000r/s
    # no logs, and no rate limit: its millisecond buckets refuse bursts
    # that a load generator makes, whatever the rate
    sed -i 's/^error_log .*/error_log '"${tmp//\//\\/}"'\/nginx-'"$who"'\/error.log warn;/; s/access_log .*/access_log off;/' \
        "$tmp/nginx-$who/nginx.conf"
    sed -i '/limit_req /d' "$tmp/nginx-$who/site.conf"
    nginx -c "$tmp/nginx-$who/nginx.conf" -p "$tmp/nginx-$who/" -e "$tmp/nginx-$who/error.log" & pids+=($!)
    url[$who]=http://127.0.0.1:$port/_jay/actions/geminiAgent.sendMessage
done
sleep 0.3

# One request by hand for each: the bench is meaningless if it fails.
for who in ga floor; do
    code=$(curl -s -o "$tmp/one.json" -w '%{http_code}' -H 'Content-Type: application/json' \
        --data-binary @"$tmp/body.typical.json" "${url[$who]}")
    [ "$code" = 200 ] || { echo "bench: the $who request failed ($code): $(head -c 300 "$tmp/one.json")" >&2; exit 1; }
done
# What Gemini's implicit cache served, as the answer's usage reports it
# (the zero-latency upstream reports a fixed share, like Gemini would).
curl -s -o "$tmp/one.json" -H 'Content-Type: application/json' --data-binary @"$tmp/body.typical.json" "${url[ga]}"
python3 - "$tmp/one.json" <<'PY'
import json, sys
u = json.load(open(sys.argv[1])).get("usage", {})
p, c = u.get("promptTokens", 0), u.get("cachedTokens", 0)
if c:
    print("cached tokens: %d of %d prompt tokens (%.1f%%)" % (c, p, 100.0 * c / p if p else 0))
PY
echo "$workers workers each, $conns connections, ${secs}s x $runs runs; medians"

to_ms() { # wrk prints 1.23ms / 456.78us / 1.02s
    awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n += 0; else if (v ~ /s$/) n *= 1000; printf "%.3f", n }'
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# utime + stime of a responder's workers, in clock ticks (fields 14 and 15)
ticks() {
    local t=0
    for w in $(workers_of "$1"); do t=$((t + $(sed 's/.*) //' "/proc/$w/stat" | awk '{print $12 + $13}'))); done
    echo "$t"
}
hz=$(getconf CLK_TCK)

# measure WHO SIZE: sets cpu (µs per request), rps, p50, p99 (medians)
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
[ -n "${typical:-}" ] && echo "typical body through gemini-agent: $typical"
rss=""
for w in $(workers_of "$tmp/ga.pid"); do rss="$rss $(awk '/VmHWM/ {print $2}' "/proc/$w/status") KB"; done
echo "peak RSS per gemini-agent worker:$rss"
