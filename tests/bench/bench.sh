#!/bin/bash
# `make bench`: requests/s and latency of a typical chat request through
# nginx + the responder, against a zero-latency upstream (fastmock.c), and
# the peak RSS of each worker. Three runs; medians reported.
#
#   BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 4),
#   BENCH_WORKERS (default 2), BENCH_RUNS (default 3)
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd -P)
secs=${BENCH_SECONDS:-10} conns=${BENCH_CONNECTIONS:-4}
workers=${BENCH_WORKERS:-2} runs=${BENCH_RUNS:-3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ga-bench.XXXXXX")
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

command -v wrk >/dev/null || { echo "bench: wrk is missing (make deps)" >&2; exit 1; }
cc -O2 -o "$tmp/fastmock" "$repo/tests/bench/fastmock.c" -lpthread
python3 "$repo/tests/bench/make-request.py" > "$tmp/body.json"

"$tmp/fastmock" "$tmp/mock.port" & pids+=($!)
for _ in $(seq 50); do [ -s "$tmp/mock.port" ] && break; sleep 0.05; done
cat > "$tmp/agent.yaml" <<EOC
gemini: $tmp/gemini.yaml
actions: [$repo/actions]
dataDir: $tmp/var
EOC
printf "apiKey: bench-key\nbaseUrl: http://127.0.0.1:%s\n" "$(cat "$tmp/mock.port")" > "$tmp/gemini.yaml"
chmod 600 "$tmp/gemini.yaml" # serve refuses a key file others can read
GEMINI_AGENT_LOG=warn "$repo/build/gemini-agent" serve --config "$tmp/agent.yaml" \
    --socket "$tmp/ga.sock" --workers "$workers" --pid-file "$tmp/ga.pid" 2>"$tmp/ga.log" &
pids+=($!)
for _ in $(seq 50); do [ -S "$tmp/ga.sock" ] && break; sleep 0.05; done
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$repo/scripts/render-nginx-conf.sh" "$tmp/nginx" "$port" "$tmp/ga.sock" "$repo/www" 1000000r/s
sed -i 's/^error_log .*/error_log '"${tmp//\//\\/}"'\/nginx\/error.log warn;/; s/access_log .*/access_log off;/' "$tmp/nginx/nginx.conf"
nginx -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx/" -e "$tmp/nginx/error.log" & pids+=($!)
sleep 0.3

url=http://127.0.0.1:$port/_jay/actions/geminiAgent.sendMessage
# One request by hand: the bench is meaningless if it does not succeed.
code=$(curl -s -o "$tmp/one.json" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary @"$tmp/body.json" "$url")
[ "$code" = 200 ] || { echo "bench: the request failed ($code): $(head -c 300 "$tmp/one.json")" >&2; exit 1; }
echo "request: $(wc -c < "$tmp/body.json") bytes (20 turns, 30 tools, 20 KB page state); $workers workers, $conns connections, ${secs}s x $runs runs"
# What Gemini's implicit cache served, as the answer's usage reports it
# (the zero-latency upstream reports a fixed share, like Gemini would).
python3 - "$tmp/one.json" <<'PY'
import json, sys
u = json.load(open(sys.argv[1])).get("usage", {})
p, c = u.get("promptTokens", 0), u.get("cachedTokens", 0)
if c:
    print("cached tokens: %d of %d prompt tokens (%.1f%%)" % (c, p, 100.0 * c / p if p else 0))
PY

export BENCH_BODY=$tmp/body.json
to_ms() { # wrk prints 1.23ms / 456.78us / 1.02s
    awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n += 0; else if (v ~ /s$/) n *= 1000; printf "%.3f", n }'
}
rps=() p50=() p99=()
for r in $(seq "$runs"); do
    wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$repo/tests/bench/post.lua" "$url" > "$tmp/wrk.$r"
    if grep -q 'Non-2xx' "$tmp/wrk.$r"; then
        echo "bench: run $r had failed requests:" >&2; cat "$tmp/wrk.$r" >&2; exit 1
    fi
    rps+=("$(awk '/Requests\/sec/ {print $2}' "$tmp/wrk.$r")")
    p50+=("$(to_ms "$(awk '$1=="50%" {print $2}' "$tmp/wrk.$r")")")
    p99+=("$(to_ms "$(awk '$1=="99%" {print $2}' "$tmp/wrk.$r")")")
    echo "run $r: ${rps[-1]} req/s, p50 ${p50[-1]} ms, p99 ${p99[-1]} ms"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
rss="" ticks=0
for w in $(sed -n 2p "$tmp/ga.pid" | cut -d: -f2); do
    rss="$rss $(awk '/VmHWM/ {print $2}' "/proc/$w/status") KB"
    # utime + stime (fields 14 and 15, after the command name)
    ticks=$((ticks + $(sed 's/.*) //' "/proc/$w/stat" | awk '{print $12 + $13}')))
done
total=$(( $(cat "$tmp"/wrk.* | awk '/requests in/ {n += $1} END {print n}') + 1 ))
hz=$(getconf CLK_TCK)
kb=$(( $(wc -c < "$tmp/body.json") / 1024 ))
echo "median of $runs: $(median "${rps[@]}") req/s, p50 $(median "${p50[@]}") ms, p99 $(median "${p99[@]}") ms"
echo "peak RSS per worker:$rss"
awk -v t="$ticks" -v hz="$hz" -v n="$total" -v kb="$kb" 'BEGIN {
    ms = t * 1000 / hz / n
    printf "worker CPU per request: %.3f ms (%.4f ms per KB of request), over %d requests\n", ms, ms / kb, n }'
