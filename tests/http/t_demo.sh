#!/bin/bash
# t_demo.sh - scripts/demo.sh (`make demo`) around its start: a taken port
# stops it at once, naming the port and how to pick another; an nginx that
# cannot start stops it too; either way no "ready" banner, no temp folder
# and no process is left. Offline (no key), the demo's responder reports
# the model "offline-demo" before any answer. Never reaches the network:
# DEMO_NO_SETUP=1 skips installing and building, and without a key the
# demo talks to the offline demo model (the mock).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DEMO_BIN=$REPO/build/gemini-agent # what demo.sh runs
[ -x "$DEMO_BIN" ] || { skip "demo" "$DEMO_BIN is missing (run make)"; finish; }
command -v "$NGINX_BIN" >/dev/null || { skip "demo" "no nginx"; finish; }

# The demo's temp folders go here, so leftovers are this test's alone.
DT=$T_TMP/demo-tmp
mkdir -p "$DT"
BANNER='gemini-agent demo: http://'

# run_demo PORT [NAME=VALUE...]: scripts/demo.sh in the foreground, bounded,
# with no key anywhere and no setup; sets rc, out, err, took (ms).
run_demo() {
    local port=$1 t0
    shift
    t0=$(now_ms)
    env -i "PATH=${DEMO_PATH:-$PATH}" "HOME=$T_TMP" "TMPDIR=$DT" "DEMO_PORT=$port" \
        DEMO_NO_SETUP=1 "GEMINI_CONFIG=$T_TMP/no-such-gemini.yaml" "$@" \
        timeout -k 2 60 sh "$REPO/scripts/demo.sh" >"$T_TMP/demo.out" 2>"$T_TMP/demo.err" </dev/null
    rc=$?
    took=$(($(now_ms) - t0))
    out=$(cat "$T_TMP/demo.out")
    err=$(cat "$T_TMP/demo.err")
}

# Processes whose command line mentions the demo's temp folder: the mock,
# the responder and its workers, nginx all do.
demo_procs() {
    local p found=''
    for p in /proc/[0-9]*; do
        if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF -- "$DT/"; then
            found="$found ${p#/proc/}"
        fi
    done
    echo "$found"
}

# assert_left_nothing LABEL
assert_left_nothing() {
    local left procs
    left=$(find "$DT" -mindepth 1 -maxdepth 1 -name 'gemini-agent-demo.*' | head -n 3)
    if [ -z "$left" ]; then ok "$1: no temp folder left"; else not_ok "$1: no temp folder left" "$left"; fi
    sleep 0.2
    procs=$(demo_procs)
    if [ -z "$procs" ]; then
        ok "$1: no process left"
    else
        not_ok "$1: no process left" "$(for p in $procs; do tr '\0' ' ' <"/proc/$p/cmdline"; echo; done | head -c 400)"
        for p in $procs; do kill -KILL "$p" 2>/dev/null; done
    fi
}

# --- a taken port: stops at once ------------------------------------------------
PORT=$(free_port) || bail "no free port"
"$PY" - "$PORT" "$T_TMP/holder.ready" <<'PY' &
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)
open(sys.argv[2], "w").write("ready")
time.sleep(300)
PY
HOLDER=$!
T_BG_PIDS+=("$HOLDER")
wait_until 5000 test -s "$T_TMP/holder.ready" || bail "cannot occupy port $PORT"

run_demo "$PORT"
check "port taken: demo.sh fails (exit $rc)" bash -c '[ "$1" -ne 0 ] && [ "$1" -ne 124 ]' _ "$rc"
check "port taken: ... at once ($took ms)" test "$took" -lt 3000
check "port taken: the message names 127.0.0.1:$PORT" grep -qF "127.0.0.1:$PORT is already in use" <<<"$err"
check "port taken: ... and how to pick another" grep -qF "DEMO_PORT=$((PORT + 1)) make demo" <<<"$err"
check "port taken: no ready banner" bash -c '! grep -qF "$1" <<<"$2$3"' _ "$BANNER" "$out" "$err"
assert_left_nothing "port taken"
kill "$HOLDER" 2>/dev/null
wait "$HOLDER" 2>/dev/null

# --- nginx cannot start (a stand-in that fails as nginx does on a taken
# port): stops after the mock and the responder started, cleans them up --
mkdir -p "$T_TMP/fakebin"
cat >"$T_TMP/fakebin/nginx" <<'SH'
#!/bin/sh
echo "nginx: [emerg] bind() to 127.0.0.1 failed (98: Address already in use)" >&2
exit 1
SH
chmod +x "$T_TMP/fakebin/nginx"
PORT=$(free_port) || bail "no free port"
DEMO_PATH="$T_TMP/fakebin:$PATH" run_demo "$PORT"
check "nginx fails: demo.sh fails (exit $rc)" bash -c '[ "$1" -ne 0 ] && [ "$1" -ne 124 ]' _ "$rc"
check "nginx fails: the message names 127.0.0.1:$PORT" grep -qF "nginx could not start on 127.0.0.1:$PORT" <<<"$err"
check "nginx fails: ... and how to pick another" grep -qF "DEMO_PORT=$((PORT + 1)) make demo" <<<"$err"
check "nginx fails: no ready banner" bash -c '! grep -qF "$1" <<<"$2$3"' _ "$BANNER" "$out" "$err"
check "nginx fails: the responder had started (offline)" bash -c '! grep -q "did not start\|exited" <<<"$1"' _ "$err"
assert_left_nothing "nginx fails"

# --- offline: the banner, and the model is "offline-demo" from the start ------
PORT=$(free_port) || bail "no free port"
env -i "PATH=$PATH" "HOME=$T_TMP" "TMPDIR=$DT" "DEMO_PORT=$PORT" DEMO_NO_SETUP=1 \
    "GEMINI_CONFIG=$T_TMP/no-such-gemini.yaml" \
    timeout -k 2 120 sh "$REPO/scripts/demo.sh" >"$T_TMP/demo.out" 2>"$T_TMP/demo.err" </dev/null &
DEMO=$!
T_BG_PIDS+=("$DEMO")
if wait_until 20000 grep -qF "$BANNER" "$T_TMP/demo.out"; then
    ok "offline demo: the ready banner"
else
    not_ok "offline demo: the ready banner" "stdout: $(head -c 300 "$T_TMP/demo.out"); stderr: $(head -c 300 "$T_TMP/demo.err")"
fi
check "offline demo: the banner says the offline demo model" grep -q "OFFLINE DEMO MODEL" "$T_TMP/demo.out"
BASE_URL=http://127.0.0.1:$PORT
req GET /_jay/actions/geminiAgent.status
assert_status 200 "offline demo: GET geminiAgent.status"
assert_json 'j' '{"model":"offline-demo","ready":true}' "offline demo: ready, model offline-demo"
run_dir=$(find "$DT" -mindepth 1 -maxdepth 1 -name 'gemini-agent-demo.*' | head -n 1)
check "offline demo: its Gemini settings file is the owner's alone" \
    bash -c '[ "$(stat -c %a "$1/gemini.yaml")" = 600 ]' _ "$run_dir"
# The assistant page and its demo sign-in (docs/assistant-page.md).
check "offline demo: the banner names the assistant page" \
    grep -qF "http://127.0.0.1:$PORT/assistant/" "$T_TMP/demo.out"
req GET /assistant/
assert_status 200 "offline demo: GET /assistant/"
check "offline demo: ... the assistant page" grep -q 'Sign in as the demo user' "$RES_BODY"
check "offline demo: the cart page links it" grep -q 'href="/assistant/"' "$REPO/www/index.html"
req GET /assistant/demo-session.json
assert_status 200 "offline demo: GET /assistant/demo-session.json"
DEMO_USER=$(pyjson 'j["user"]' "$RES_BODY")
DEMO_TOKEN=$(pyjson 'j["token"]' "$RES_BODY")
check "offline demo: the session is the demo user's ($DEMO_USER)" test "$DEMO_USER" = demo
check "offline demo: ... never cached" bash -c 'grep -qi "^cache-control: no-store" "$1"' _ "$RES_HDRS"
check "offline demo: the session secret is the owner's alone" \
    bash -c '[ "$(stat -c %a "$1/session-secret")" = 600 ]' _ "$run_dir"
req GET /api/agent/threads '' -H "Authorization: Bearer $DEMO_TOKEN"
assert_status 200 "offline demo: the demo token signs run API requests in"
req GET /api/agent/threads
assert_status 401 "offline demo: ... and without it, 401"
# timeout(1) passes SIGTERM on to the script, which stops everything.
kill -TERM "$DEMO"
wait "$DEMO"
rc=$?
check "offline demo: SIGTERM stops it (exit $rc)" test "$rc" -eq 0
check "offline demo: ... saying so" grep -qx "demo stopped" "$T_TMP/demo.out"
assert_left_nothing "offline demo stopped"

finish
