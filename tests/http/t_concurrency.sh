#!/bin/bash
# t_concurrency.sh - many chats at once (docs/internals/concurrency.md):
# a worker's threads serve slow chats side by side; past its threads and
# its queue the answer is a fast 503 with Retry-After; a queued request is
# served when a thread frees up; a visitor who hangs up frees the thread at
# once (the Gemini call is dropped); a request is cut at requestTimeoutMs;
# a worker that hangs (SIGSTOP) is killed and replaced by the master's
# watchdog, and its visitor hears within seconds, not nginx's 300 s.
source "$(dirname "${BASH_SOURCE[0]}")/chat_lib.sh"

start_mock

# burst N MESSAGE [TIMEOUT_S]: N sendMessage requests at once through nginx;
# prints one line per request, "STATUS MS RETRY-AFTER CODE", in send order.
burst() {
    "$PY" - "$BASE_URL$SEND" "$1" "$2" "${3:-20}" <<'PY'
import json, sys, threading, time, urllib.request, urllib.error
url, n, msg, timeout = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
body = json.dumps({"message": msg, "history": []}).encode()
out = [None] * n
def one(i):
    t0 = time.monotonic()
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            st, hdr, b = r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        st, hdr, b = e.code, e.headers, e.read()
    except Exception as e:
        st, hdr, b = "ERR", {}, repr(e).encode()
    ms = int((time.monotonic() - t0) * 1000)
    try:
        code = json.loads(b).get("error", {}).get("code", "-")
    except Exception:
        code = "-"
    out[i] = "%s %d %s %s" % (st, ms, hdr.get("Retry-After") or "-", code)
ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
for t in ts:
    t.start()
    time.sleep(0.02)  # in this order at the socket
for t in ts:
    t.join()
print("\n".join(out))
PY
}

# ============================================================================
# 1. One worker of 8 threads: 8 chats that each wait 1 s on Gemini are
#    answered together, in about 1 s, not one after another (8 s).
start_stack --workers 1 --threads 8 --mock --limits "{$CHAT_LIMITS}"
burst 8 "[[mock:slow ms=1000]] hi" >"$T_TMP/par.out"
n200=$(grep -c '^200 ' "$T_TMP/par.out")
slowest=$(awk '{print $2}' "$T_TMP/par.out" | sort -n | tail -1)
check "8 slow chats on 8 threads: all 200 ($n200)" [ "$n200" = 8 ]
check "8 slow chats on 8 threads: side by side, the slowest in ${slowest} ms (< 2500)" \
    [ "${slowest:-99999}" -lt 2500 ]
stop_stack

# ============================================================================
# 2. One thread, no queue: a second chat while the first waits on Gemini is
#    told at once to come back (503 overloaded, Retry-After), and the first
#    is answered as usual.
start_stack --workers 1 --threads 1 --queue 0 --mock --limits "{$CHAT_LIMITS}"
burst 2 "[[mock:slow ms=1500]] hi" >"$T_TMP/over.out"
read -r st1 ms1 _ _ < <(sed -n 1p "$T_TMP/over.out")
read -r st2 ms2 ra2 code2 < <(sed -n 2p "$T_TMP/over.out")
check "full worker: the first chat is answered 200 ($st1)" [ "$st1" = 200 ]
check "full worker: the second gets 503 ($st2)" [ "$st2" = 503 ]
check "full worker: code overloaded ($code2)" [ "$code2" = overloaded ]
check "full worker: Retry-After given ($ra2)" [ "$ra2" != - ]
check "full worker: the 503 is fast (${ms2} ms < 500)" [ "${ms2:-99999}" -lt 500 ]
check "full worker: the refusal is logged" grep -q "overloaded: 1 request answered 503" "$GA_LOG"
stop_stack

# ============================================================================
# 3. One thread, a queue of 1: the second waits for the thread and is
#    served; a third finds the queue full and gets the 503.
start_stack --workers 1 --threads 1 --queue 1 --mock --limits "{$CHAT_LIMITS}"
burst 3 "[[mock:slow ms=1000]] hi" >"$T_TMP/queue.out"
read -r qs1 _ _ _ < <(sed -n 1p "$T_TMP/queue.out")
read -r qs2 qms2 _ _ < <(sed -n 2p "$T_TMP/queue.out")
read -r qs3 qms3 _ qcode3 < <(sed -n 3p "$T_TMP/queue.out")
check "queue: first 200 ($qs1)" [ "$qs1" = 200 ]
check "queue: second waited and got 200 ($qs2)" [ "$qs2" = 200 ]
check "queue: second answered after the first (${qms2} ms >= 1500)" [ "${qms2:-0}" -ge 1500 ]
check "queue: third 503 overloaded at once ($qs3 $qcode3, ${qms3} ms)" \
    eval "[ '$qs3' = 503 ] && [ '$qcode3' = overloaded ] && [ ${qms3:-99999} -lt 500 ]"

# ============================================================================
# 4. A visitor who hangs up frees the thread: the Gemini call (10 s) is
#    dropped, so with one thread and no queue the next chat, 1.5 s later,
#    is served - it would get a 503 if the thread still waited.
stop_stack
start_stack --workers 1 --threads 1 --queue 0 --mock --limits "{$CHAT_LIMITS}"
curl -s -o /dev/null --max-time 0.5 -H 'Content-Type: application/json' \
    --data-binary '{"message":"[[mock:slow ms=10000]] hi","history":[]}' "$BASE_URL$SEND"
sleep 1.5
chat_send "[[mock:text]] still there?" '[]' '[]' '{}'
check "hang-up: the next chat is served ($RES_STATUS)" [ "$RES_STATUS" = 200 ]
check "hang-up: the dropped call is logged" grep -q "the visitor hung up; call dropped" "$GA_LOG"
assert_file_lacks "$GA_LOG" "error:" "hang-up: no error logged for it"
stop_stack

# ============================================================================
# 5. requestTimeoutMs bounds the whole request: Gemini's 10 s answer is
#    cut at 1.5 s with upstream_timeout.
start_stack --workers 1 --threads 2 --mock --limits "{maxBodyBytes: 1048576, requestTimeoutMs: 1500}"
chat_send "[[mock:slow ms=10000]] hi" '[]' '[]' '{}'
check "requestTimeoutMs: 504 ($RES_STATUS)" [ "$RES_STATUS" = 504 ]
assert_elapsed 1200 4000 "requestTimeoutMs: cut at about 1.5 s"

# ============================================================================
# 6. A worker that hangs (SIGSTOP) with a chat in flight is killed and
#    replaced once the request is past requestTimeoutMs + 5 s; the visitor
#    gets nginx's 502 then, and the next chat is served by the new worker.
read_pidfile
old=$PF_WORKERS
( sleep 0.5; kill -STOP $old ) &
stopper=$!
t0=$(now_ms)
chat_send "[[mock:slow ms=3000]] hi" '[]' '[]' '{}'
wait "$stopper"
took=$(( $(now_ms) - t0 ))
check "hung worker: its visitor hears within 10 s ($RES_STATUS after $took ms)" \
    eval "[ $took -lt 10000 ] && [ '$RES_STATUS' = 502 ]"
check "hung worker: the master says why" grep -q "worker $old is hung: a request has run for" "$GA_LOG"
wait_until 3000 eval 'read_pidfile && [ -n "$PF_WORKERS" ] && [ "$PF_WORKERS" != "$old" ]'
check "hung worker: replaced ($old -> $PF_WORKERS)" [ "$PF_WORKERS" != "$old" ]
check "hung worker: the old one is gone" eval '! proc_alive '"$old"
chat_send "[[mock:text]] hello again" '[]' '[]' '{}'
check "hung worker: the next chat is served ($RES_STATUS)" [ "$RES_STATUS" = 200 ]
stop_stack

finish
