#!/bin/bash
# t_workers.sh - `serve` as a process manager: pid file, respawn of killed
# workers, SIGHUP reload (bad config kept out, good config taken), worker
# recycling (maxRequestsPerWorker), SIGTERM finishing a request in flight,
# SIGINT, and nginx's JSON 502 once the responder is gone.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_binary
SEARCH=/_jay/actions/shop.searchProducts
# Measuring "within 1 s" from a shell adds a little overhead of its own.
SLACK_MS=${SLACK_MS:-200}

# pid_in PID LIST: PID is one of the space-separated LIST.
pid_in() {
    case " $2 " in *" $1 "*) return 0 ;; esac
    return 1
}

# workers_replaced N OLD...: the pid file lists N workers, none of them OLD.
workers_replaced() {
    local n=$1 p
    shift
    pidfile_workers_count_is "$n" || return 1
    for p in "$@"; do pid_in "$p" "$PF_WORKERS" && return 1; done
    return 0
}

# all_gone PID...: none of them is alive.
all_gone() {
    local p
    for p in "$@"; do proc_alive "$p" && return 1; done
    return 0
}

# all_alive PID...: every one is alive.
all_alive() {
    local p
    for p in "$@"; do proc_alive "$p" || return 1; done
    return 0
}

# log_has_workers_line MASTER LIST: the master logged exactly this worker set.
log_has_workers_line() {
    grep -qF "gemini-agent[$1]: info: workers: $2" "$GA_LOG"
}

# distinct_logged_workers MASTER: how many different worker PIDs the master
# has logged in its "workers:" lines.
distinct_logged_workers() {
    grep -F "gemini-agent[$1]: info: workers:" "$GA_LOG" |
        sed 's/.*info: workers://' | tr ' ' '\n' | grep -E '^[0-9]+$' | sort -u | wc -l
}

# body_of_size FILE SIZE: {"query":"a"} padded with spaces to exactly SIZE bytes.
body_of_size() {
    "$PY" -c 'import sys; n = int(sys.argv[2]); open(sys.argv[1], "w").write("{\"query\":\"a\"" + " " * (n - 13) + "}")' "$1" "$2"
}
body_of_size "$T_TMP/b50" 50
body_of_size "$T_TMP/b200" 200
body_of_size "$T_TMP/b5000" 5000

# ============================================================================
# 1. Start-up: pid file, socket, log
start_stack --workers 2
if read_pidfile; then
    ok "pid file: 'MASTER' then 'workers: PID PID'"
else
    not_ok "pid file: 'MASTER' then 'workers: PID PID'" "$(head -c 200 "$GA_PIDFILE" | tr '\n' '|')"
fi
if [ "$PF_MASTER" = "$GA_PID" ]; then ok "pid file: line 1 is the master PID"; else not_ok "pid file: line 1 is the master PID" "got '$PF_MASTER', master is $GA_PID"; fi
set -- $PF_WORKERS
W1=${1:-} W2=${2:-}
if [ $# -eq 2 ] && [ "$W1" != "$W2" ] && proc_alive "$W1" && proc_alive "$W2"; then
    ok "pid file: two live workers ($PF_WORKERS)"
else
    not_ok "pid file: two live workers" "workers '$PF_WORKERS'"
fi
if [ "$(proc_ppid "$W1")" = "$GA_PID" ] && [ "$(proc_ppid "$W2")" = "$GA_PID" ]; then
    ok "workers are children of the master"
else
    not_ok "workers are children of the master" "ppids $(proc_ppid "$W1") $(proc_ppid "$W2")"
fi
mode=$(stat -c %a "$GA_SOCK" 2>/dev/null)
if [ "$mode" = 660 ]; then ok "socket mode 0660"; else not_ok "socket mode 0660" "mode $mode"; fi
if wait_until 1000 log_has_workers_line "$GA_PID" "$PF_WORKERS"; then
    ok "log: 'gemini-agent[$GA_PID]: info: workers: $PF_WORKERS'"
else
    not_ok "log: 'gemini-agent[MASTER]: info: workers: ...'" "log: $(tail -c 400 "$GA_LOG" | tr '\n' '|')"
fi
req GET /_jay/actions
assert_status 200 "serving with 2 workers"

# ============================================================================
# 2. A killed worker is replaced within 1 s
inode=$(stat -c %i "$GA_PIDFILE")
kill -KILL "$W1"
t0=$(now_ms)
if wait_until 3000 workers_replaced 2 "$W1"; then
    dt=$(($(now_ms) - t0))
    if [ "$dt" -le $((1000 + SLACK_MS)) ]; then
        ok "kill -9 worker: pid file lists a new worker after $dt ms"
    else
        not_ok "kill -9 worker: pid file lists a new worker within 1 s" "took $dt ms"
    fi
else
    not_ok "kill -9 worker: pid file lists a new worker within 1 s" "not within 3 s: '$(tr '\n' '|' <"$GA_PIDFILE")'"
fi
if pid_in "$W2" "$PF_WORKERS"; then ok "kill -9 worker: the other worker kept"; else not_ok "kill -9 worker: the other worker kept" "workers '$PF_WORKERS'"; fi
NEWW=$PF_WORKERS
if [ "$(stat -c %i "$GA_PIDFILE")" != "$inode" ]; then
    ok "kill -9 worker: pid file replaced by rename (new inode)"
else
    not_ok "kill -9 worker: pid file replaced by rename (new inode)" "same inode $inode: rewritten in place"
fi
if [ ! -e "/proc/$W1" ]; then ok "kill -9 worker: the dead worker was reaped (no zombie)"; else not_ok "kill -9 worker: the dead worker was reaped" "/proc/$W1 still exists"; fi
req GET /_jay/actions
assert_status 200 "kill -9 worker: a request succeeds"
if wait_until 1000 log_has_workers_line "$GA_PID" "$NEWW"; then
    ok "log: the new worker set is logged"
else
    not_ok "log: the new worker set is logged" "no 'workers: $NEWW' line"
fi
fails=0
for i in 1 2 3 4 5 6 7 8 9 10; do
    req GET /_jay/actions
    [ "$RES_STATUS" = 200 ] || fails=$((fails + 1))
done
if [ "$fails" -eq 0 ]; then ok "10 more requests succeed"; else not_ok "10 more requests succeed" "$fails failed"; fi

# ============================================================================
# 3. SIGHUP with a broken config: logged, old config kept
read_pidfile
OLDW=$PF_WORKERS
cp "$GA_CONF" "$ST_DIR/agent.yaml.good"
log_off=$(stat -c %s "$GA_LOG")
write_config "$GA_CONF" '{maxBodyBytes: "lots"}'
kill -HUP "$GA_PID"
# new_log_mentions_problem: the log, since the HUP, names the bad key or the
# file and line.
new_log_mentions_problem() {
    tail -c +$((log_off + 1)) "$GA_LOG" | grep -qE 'maxBodyBytes|agent\.yaml:[0-9]+'
}
if wait_until 3000 new_log_mentions_problem; then
    ok "SIGHUP bad config: the log names the problem"
else
    not_ok "SIGHUP bad config: the log names the problem" "new log: $(tail -c +$((log_off + 1)) "$GA_LOG" | head -c 400 | tr '\n' '|')"
fi
sleep 0.5
if proc_alive "$GA_PID"; then ok "SIGHUP bad config: master still running"; else not_ok "SIGHUP bad config: master still running" "master $GA_PID is gone"; fi
if pidfile_workers_count_is 2 && all_alive $PF_WORKERS; then
    ok "SIGHUP bad config: two live workers listed"
else
    not_ok "SIGHUP bad config: two live workers listed" "workers '$PF_WORKERS'"
fi
req GET /_jay/actions
assert_status 200 "SIGHUP bad config: requests still succeed"
req POST "$SEARCH" "@$T_TMP/b200"
assert_status 200 "SIGHUP bad config: a 200-byte body is still accepted"
req POST "$SEARCH" "@$T_TMP/b5000"
assert_error 413 payload_too_large "SIGHUP bad config: old maxBodyBytes (4096) still applies"

# ============================================================================
# 4. SIGHUP with a good, changed config: new workers, new limit
read_pidfile
OLDW=$PF_WORKERS
write_config "$GA_CONF" '{maxBodyBytes: 100}'
kill -HUP "$GA_PID"
t0=$(now_ms)
if wait_until 3000 workers_replaced 2 $OLDW; then
    ok "SIGHUP good config: workers replaced after $(($(now_ms) - t0)) ms ($OLDW -> $PF_WORKERS)"
else
    not_ok "SIGHUP good config: workers replaced" "pid file: '$(tr '\n' '|' <"$GA_PIDFILE")', old '$OLDW'"
fi
if wait_until 3000 all_gone $OLDW; then ok "SIGHUP good config: old workers exited"; else not_ok "SIGHUP good config: old workers exited" "still alive among $OLDW"; fi
if [ "$PF_MASTER" = "$GA_PID" ] && proc_alive "$GA_PID"; then ok "SIGHUP good config: same master"; else not_ok "SIGHUP good config: same master" "pid file master '$PF_MASTER'"; fi
req POST "$SEARCH" "@$T_TMP/b200"
assert_error 413 payload_too_large "SIGHUP good config: maxBodyBytes 100 now applies (200-byte body)"
req POST "$SEARCH" "@$T_TMP/b50"
assert_status 200 "SIGHUP good config: a 50-byte body is accepted"

# Reloads under load drop nothing: 4 clients send requests for 3 s while
# the master reloads 5 times; every request must get its 200.
"$PY" - "$BASE_URL/_jay/actions/shop.searchProducts" >"$T_TMP/load.out" 2>&1 <<'PY' &
import sys, threading, time, urllib.request
url, stop, counts = sys.argv[1], time.time() + 3.0, {"ok": 0, "bad": []}
lock = threading.Lock()
def client():
    while time.time() < stop:
        req = urllib.request.Request(url, data=b'{"query":"usb"}',
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                code = r.status
        except urllib.error.HTTPError as e:
            code = e.code
        except Exception as e:
            code = repr(e)
        with lock:
            if code == 200:
                counts["ok"] += 1
            else:
                counts["bad"].append(code)
        time.sleep(0.01)  # stay under the test nginx's 1000 r/s limit
threads = [threading.Thread(target=client) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
print(counts["ok"], len(counts["bad"]), counts["bad"][:5])
PY
LOAD_PID=$!
for _ in 1 2 3 4 5; do sleep 0.5; kill -HUP "$GA_PID"; done
wait "$LOAD_PID"
read -r n_ok n_bad rest <"$T_TMP/load.out"
if [ "${n_bad:-x}" = 0 ] && [ "${n_ok:-0}" -gt 50 ]; then
    ok "5 reloads under load: all $n_ok requests answered 200"
else
    not_ok "5 reloads under load: no request dropped" "$(cat "$T_TMP/load.out")"
fi
if proc_alive "$GA_PID" && read_pidfile && [ "$(wc -w <<<"$PF_WORKERS")" -eq 2 ]; then
    ok "5 reloads under load: master alive with 2 workers"
else
    not_ok "5 reloads under load: master alive with 2 workers" "pid file '$(tr '\n' '|' <"$GA_PIDFILE")'"
fi
stop_stack

# ============================================================================
# 5. maxRequestsPerWorker: 3, one worker: recycled, no request lost
start_stack --workers 1 --limits '{maxBodyBytes: 4096, maxRequestsPerWorker: 3}'
read_pidfile
W0=$PF_WORKERS
fails=0
for i in 1 2 3 4 5 6 7; do
    REQ_TIMEOUT=5 req GET /_jay/actions
    [ "$RES_STATUS" = 200 ] || { fails=$((fails + 1)); echo "# request $i: status $RES_STATUS"; }
done
if [ "$fails" -eq 0 ]; then ok "maxRequestsPerWorker 3: all 7 requests succeed"; else not_ok "maxRequestsPerWorker 3: all 7 requests succeed" "$fails failed"; fi
if wait_until 1500 workers_replaced 1 "$W0"; then
    ok "maxRequestsPerWorker 3: the worker was replaced ($W0 -> $PF_WORKERS)"
else
    not_ok "maxRequestsPerWorker 3: the worker was replaced" "still '$(tr '\n' '|' <"$GA_PIDFILE")'"
fi
n=$(distinct_logged_workers "$GA_PID")
if [ "$n" -ge 3 ]; then
    ok "maxRequestsPerWorker 3: 7 requests were served by at least 3 workers ($n logged)"
else
    not_ok "maxRequestsPerWorker 3: 7 requests were served by at least 3 workers" "$n worker PIDs logged"
fi
stop_stack

# ============================================================================
# 6. --workers 1: kill the only worker, a request succeeds within 1 s
start_stack --workers 1
read_pidfile
W0=$PF_WORKERS
kill -KILL "$W0"
t0=$(now_ms)
status=000
while [ $(($(now_ms) - t0)) -lt 5000 ]; do
    REQ_TIMEOUT=3 req GET /_jay/actions
    status=$RES_STATUS
    [ "$status" = 200 ] && break
    sleep 0.05
done
dt=$(($(now_ms) - t0))
if [ "$status" = 200 ] && [ "$dt" -le $((1000 + SLACK_MS)) ]; then
    ok "--workers 1, kill -9 the worker: a request succeeds after $dt ms"
else
    not_ok "--workers 1, kill -9 the worker: a request succeeds within 1 s" "status $status after $dt ms"
fi
stop_stack

# ============================================================================
# 7. SIGTERM: a request in flight completes; master and workers exit; files
#    other than the socket and pid file stay; nginx then answers 502 as JSON.
start_stack --workers 2
read_pidfile
ALLW=$PF_WORKERS
(cd "$ST_DIR" && find . -path ./nginx -prune -o -print | sort) >"$T_TMP/files.before"
printf '%s' '{"query":"a"}' >"$T_TMP/slow.json"
rm -f "$T_TMP/ready"
(
    fcgi_req --split 5 --delay 2 --ready-file "$T_TMP/ready" POST "$SEARCH" "@$T_TMP/slow.json"
    echo "$RES_STATUS $FCGI_RC $RES_MS" >"$T_TMP/slow.result"
    cp "$RES_BODY" "$T_TMP/slow.body"
) &
SLOW=$!
T_BG_PIDS+=("$SLOW")
if ! wait_until 5000 test -e "$T_TMP/ready"; then
    not_ok "SIGTERM in flight: slow client started" "no ready file"
fi
sleep 0.3 # the worker has accepted the request and waits for the body
kill -TERM "$GA_PID"
t0=$(now_ms)
wait_until 10000 eval '! proc_alive "$SLOW"'
read -r s_status s_rc s_ms <"$T_TMP/slow.result" 2>/dev/null || s_status=none
if [ "$s_status" = 200 ] && [ "$s_rc" = 0 ]; then
    ok "SIGTERM in flight: the slow request completed with 200 (${s_ms} ms)"
else
    not_ok "SIGTERM in flight: the slow request completed with 200" "status '$s_status', client exit '${s_rc:-}', stderr: $(head -c 200 "$T_TMP/fcgi.err" 2>/dev/null)"
fi
if pyjson 'isinstance(j["products"], list)' "$T_TMP/slow.body" 2>/dev/null | grep -qx true; then
    ok "SIGTERM in flight: its body is the search result"
else
    not_ok "SIGTERM in flight: its body is the search result" "$(head -c 200 "$T_TMP/slow.body" 2>/dev/null)"
fi
if wait_until 5000 all_gone "$GA_PID" $ALLW; then
    ok "SIGTERM: master and workers exited after $(($(now_ms) - t0)) ms"
else
    not_ok "SIGTERM: master and workers exited within 5 s" "alive: $(for p in "$GA_PID" $ALLW; do proc_alive "$p" && printf '%s ' "$p"; done)"
fi
wait "$GA_PID"
rc=$?
if [ "$rc" -eq 0 ]; then ok "SIGTERM: master exit status 0"; else not_ok "SIGTERM: master exit status 0" "exit $rc"; fi
GA_PID=
(cd "$ST_DIR" && find . -path ./nginx -prune -o -print | sort) >"$T_TMP/files.after"
gone=$(comm -23 "$T_TMP/files.before" "$T_TMP/files.after" | grep -vxE '\./ga\.(sock|pid)' | tr '\n' ' ')
if [ -z "$gone" ]; then
    ok "SIGTERM: nothing but the socket / pid file removed"
else
    not_ok "SIGTERM: nothing but the socket / pid file removed" "removed: $gone"
fi
echo "# after SIGTERM: socket $( [ -e "$GA_SOCK" ] && echo kept || echo removed ), pid file $( [ -e "$GA_PIDFILE" ] && echo kept || echo removed )"
req GET /_jay/actions
assert_error 502 responder_unavailable "nginx with the responder stopped"
stop_stack

# ============================================================================
# 8. --listen 127.0.0.1:PORT: FastCGI over TCP, nginx pointed there
start_stack --workers 1 --listen
req GET /_jay/actions
assert_status 200 "--listen $GA_LISTEN: served through nginx"
req POST "$SEARCH" "@$T_TMP/b50"
assert_status 200 "--listen: POST searchProducts"
stop_stack

# ============================================================================
# 9. SIGINT stops it too
start_stack --workers 2 --no-nginx
read_pidfile
ALLW=$PF_WORKERS
kill -INT "$GA_PID"
if wait_until 5000 all_gone "$GA_PID" $ALLW; then
    ok "SIGINT: master and workers exited"
else
    not_ok "SIGINT: master and workers exited within 5 s" "still alive"
fi
stop_stack

finish
