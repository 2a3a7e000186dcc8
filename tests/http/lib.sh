# tests/http/lib.sh - shared harness for the HTTP tests (sourced by t_*.sh).
#
# A test sources this file, calls start_stack (responder + a private nginx
# using nginx/gemini-agent.conf), makes requests with req, and checks them
# with the assert_* helpers, which print TAP-like lines:
#     ok - <name>
#     not ok - <name>: <why>
# finish prints the test's tally and exits non-zero if anything failed.
# Everything lives in one temp dir, removed on exit unless KEEP_TMP=1; every
# process the test started is stopped on exit, even on failure.
#
# Environment:
#   GA_BIN       the binary under test (default <repo>/build/gemini-agent)
#   KEEP_TMP=1   keep the temp dir (its path is printed)
#   T_VERBOSE=1  print the response body of failed assertions in full
#   GA_PYTHON    the Python 3 to use (default /usr/bin/python3, else python3)
#   GA_NGINX_SNIPPET  test another site snippet than nginx/gemini-agent.conf
#   NGINX_BIN    the nginx binary (default: nginx from PATH)
#   GA_NGINX_EDIT a function start_nginx calls with the nginx folder after
#                rendering site.conf, before nginx starts
# The mock Gemini server (tests/mock) is started with start_mock and pointed
# at with `start_stack --mock`; assert_py checks many things in one Python.
# Needs bash 5 (EPOCHREALTIME), curl, nginx, python3.
#
# shellcheck shell=bash

set -u

HTTP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO=$(cd "$HTTP_DIR/../.." && pwd -P)
GA_BIN=${GA_BIN:-$REPO/build/gemini-agent}
SNIPPET=${GA_NGINX_SNIPPET:-$REPO/nginx/gemini-agent.conf}
FCGI_CLIENT=$HTTP_DIR/conf/fcgi_client.py
CATALOG=$REPO/actions/shop/products.json
NGINX_BIN=${NGINX_BIN:-$(command -v nginx || echo /usr/sbin/nginx)}
# Python for JSON queries and helpers: the system one if present (a pyenv
# shim can add half a second to every call).
if [ -n "${GA_PYTHON:-}" ]; then
    PY=$GA_PYTHON
elif [ -x /usr/bin/python3 ]; then
    PY=/usr/bin/python3
else
    PY=$(command -v python3)
fi

T_NAME=$(basename "$0" .sh)
T_PASS=0
T_FAIL=0
T_SKIP=0

T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/ga-http-$T_NAME.XXXXXX") || {
    echo "not ok - $T_NAME: cannot create a temp dir"
    exit 1
}
RES_BODY=$T_TMP/res.body
RES_HDRS=$T_TMP/res.headers
RES_STATUS=000
RES_DESC=
RES_MS=0
RES_ALL=$T_TMP/all-responses # every header block and body, appended
: >"$RES_ALL"

# Processes this test started (beyond the current stack): killed on exit.
T_BG_PIDS=()
# Every responder PID (masters and workers) seen by this test.
GA_SEEN_PIDS=()

# ---------------------------------------------------------------------------
# Reporting

ok() {
    T_PASS=$((T_PASS + 1))
    printf 'ok - %s\n' "$1"
}

not_ok() {
    T_FAIL=$((T_FAIL + 1))
    printf 'not ok - %s: %s\n' "$1" "$2"
}

skip() {
    T_SKIP=$((T_SKIP + 1))
    printf 'ok - %s # SKIP %s\n' "$1" "$2"
}

# check NAME COMMAND...: ok if COMMAND succeeds.
check() {
    local name=$1
    shift
    if "$@"; then ok "$name"; else not_ok "$name" "command failed: $*"; fi
}

# bail REASON: fail and stop this test (the EXIT trap cleans up).
bail() {
    not_ok "$T_NAME" "$1"
    finish
}

# finish: print the tally, exit 1 if anything failed.
finish() {
    echo "# $T_NAME: $T_PASS passed, $T_FAIL failed, $T_SKIP skipped"
    [ "$T_FAIL" -eq 0 ] && exit 0
    exit 1
}

# A short excerpt of the last response body, for failure messages.
body_excerpt() {
    local n=300
    [ -n "${T_VERBOSE:-}" ] && n=100000
    if [ -s "$RES_BODY" ]; then
        head -c "$n" "$RES_BODY" | tr -d '\000' | tr '\n' ' '
    else
        printf '(empty body)'
    fi
}

# ---------------------------------------------------------------------------
# Time and processes

now_ms() {
    local t=${EPOCHREALTIME//[.,]/}
    echo $((t / 1000))
}

# wait_until TIMEOUT_MS COMMAND...: poll every 20 ms; 0 once COMMAND succeeds.
wait_until() {
    local limit=$1 start
    shift
    start=$(now_ms)
    while :; do
        "$@" && return 0
        [ $(($(now_ms) - start)) -ge "$limit" ] && return 1
        sleep 0.02
    done
}

# proc_alive PID: the process exists and is not a zombie.
proc_alive() {
    local pid=$1 stat
    [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
    stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [ "${stat%% *}" != Z ]
}

proc_ppid() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    set -- $stat
    echo "$2"
}

# is_ga_proc PID: alive and running our binary (guards against PID reuse).
is_ga_proc() {
    proc_alive "$1" || return 1
    tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$(basename "$GA_BIN")"
}

# stop_pid PID [GRACE_MS]: SIGTERM, wait, then SIGKILL.
stop_pid() {
    local pid=$1 grace=${2:-5000}
    proc_alive "$pid" || return 0
    kill -TERM "$pid" 2>/dev/null
    wait_until "$grace" eval "! proc_alive $pid" && return 0
    kill -KILL "$pid" 2>/dev/null
    wait_until 2000 eval "! proc_alive $pid"
}

free_port() {
    "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ---------------------------------------------------------------------------
# The responder's pid file:  line 1 the master PID, line 2 "workers: PID ..."

PF_MASTER=
PF_WORKERS=

# read_pidfile [FILE]: sets PF_MASTER and PF_WORKERS; 1 if missing/malformed.
read_pidfile() {
    local f=${1:-$GA_PIDFILE} l1='' l2='' re1='^[0-9]+$' re2='^workers:( [0-9]+)+$'
    PF_MASTER='' PF_WORKERS=''
    [ -r "$f" ] || return 1
    { IFS= read -r l1 && { IFS= read -r l2 || [ -n "$l2" ]; }; } <"$f" || return 1
    [[ $l1 =~ $re1 ]] || return 1
    [[ $l2 =~ $re2 ]] || return 1
    PF_MASTER=$l1
    PF_WORKERS=${l2#workers: }
    remember_pids "$PF_MASTER" $PF_WORKERS
    return 0
}

remember_pids() {
    local p
    for p in "$@"; do
        case " ${GA_SEEN_PIDS[*]-} " in *" $p "*) ;; *) GA_SEEN_PIDS+=("$p") ;; esac
    done
}

# pidfile_workers_count_is N: the pid file is well formed and lists N workers.
pidfile_workers_count_is() {
    local want=$1 n
    read_pidfile || return 1
    n=$(wc -w <<<"$PF_WORKERS")
    [ "$n" -eq "$want" ]
}

# stack_ready N: socket present (unless on TCP) and N workers listed.
stack_ready() {
    { [ -n "$GA_LISTEN" ] || [ -S "$GA_SOCK" ]; } && pidfile_workers_count_is "$1"
}

# ---------------------------------------------------------------------------
# Fixtures

# write_gemini_yaml FILE API_KEY [BASE_URL [MODEL [SYSTEM_PROMPT]]]
# BASE_URL defaults to port 9 of the loopback, where nothing listens, so
# tests never reach the network; the other two to gemini-2.5-flash and ''.
# Values are written single-quoted: they must not hold a single quote.
write_gemini_yaml() {
    local base=${3:-http://127.0.0.1:9} model=${4:-gemini-2.5-flash} sp=${5:-}
    cat >"$1" <<EOF
apiKey: '$2'
model: $model
systemPrompt: '$sp'
baseUrl: '$base'
EOF
    chmod 600 "$1"
}

# write_config FILE [LIMITS_YAML [DATA_DIR [EXTRA_YAML]]]: an agent.yaml
# with absolute paths into the current stack dir and the repo's actions
# folder; EXTRA_YAML (top-level keys: policy, store, auth ...) is appended
# as it is.
write_config() {
    local file=$1 limits=${2:-'{maxBodyBytes: 4096}'} data=${3:-$ST_DIR/var} extra=${4:-}
    cat >"$file" <<EOF
gemini: '$ST_DIR/.gemini.yaml'
actions: ['$REPO/actions']
dataDir: '$data'
limits: $limits
EOF
    [ -z "$extra" ] || printf '%s\n' "$extra" >>"$file"
    # The site secret signs the chat's history (history.verify: strict,
    # the default, needs one; start_stack --auth names it for tokens too):
    # every config has one unless its YAML says `auth:` itself.
    if ! grep -q '^auth:' "$file"; then
        write_secret "$(dirname "$file")/site.key" || bail "cannot write the site secret"
        printf "auth: {secretFile: '%s'}\n" "$(dirname "$file")/site.key" >>"$file"
    fi
}

# write_secret FILE: a session secret (32 random bytes, mode 0600).
write_secret() {
    head -c 32 /dev/urandom >"$1" && chmod 600 "$1"
}

# pyjson EXPR FILE: evaluate a Python expression with `j` bound to FILE's
# JSON (strict: valid UTF-8, no duplicate keys). Prints strings raw, booleans
# as true/false, None as null, anything else as compact sorted JSON.
pyjson() {
    "$PY" - "$1" "$2" <<'PY'
import json, re, sys
expr, path = sys.argv[1], sys.argv[2]
def no_dups(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate key in %r" % keys)
    return dict(pairs)
try:
    with open(path, "rb") as f:
        j = json.loads(f.read().decode("utf-8"), object_pairs_hook=no_dups)
except Exception as e:
    print("<not JSON: %s>" % e)
    sys.exit(2)
try:
    v = eval(expr, {"j": j, "re": re, "json": json})
except Exception as e:
    print("<%s: %s>" % (type(e).__name__, e))
    sys.exit(3)
if isinstance(v, bool):
    print("true" if v else "false")
elif isinstance(v, str):
    print(v)
elif v is None:
    print("null")
else:
    print(json.dumps(v, sort_keys=True, separators=(",", ":")))
PY
}

# catalog EXPR: evaluate EXPR over actions/shop/products.json, with P bound
# to its list of products (the file may be a list or {"products": [...]}).
catalog() {
    pyjson "(lambda P: ($1))(j if isinstance(j, list) else j['products'])" "$CATALOG"
}

# ---------------------------------------------------------------------------
# The stack: responder (serve) + nginx with the real site snippet

ST_N=0
ST_DIR=
GA_SECRET=
GA_PID=
GA_CONF=
GA_SOCK=
GA_LISTEN=
GA_PIDFILE=
GA_LOG=
GA_OUT=
NGX_PID=
NGX_DIR=
NGX_PORT=
BASE_URL=

require_binary() {
    [ -x "$GA_BIN" ] || bail "$GA_BIN is missing (run make)"
}

# ga_env: the environment the responder runs with (nothing inherited but
# PATH, plus sanitizer settings when present, plus GA_EXTRA_ENV entries).
ga_env() {
    local e=(env -i "PATH=$PATH" "HOME=$ST_DIR" "TMPDIR=${TMPDIR:-/tmp}")
    [ -n "${ASAN_OPTIONS:-}" ] && e+=("ASAN_OPTIONS=$ASAN_OPTIONS")
    [ -n "${UBSAN_OPTIONS:-}" ] && e+=("UBSAN_OPTIONS=$UBSAN_OPTIONS")
    [ -n "${TSAN_OPTIONS:-}" ] && e+=("TSAN_OPTIONS=$TSAN_OPTIONS")
    printf '%s\0' "${e[@]}" "${GA_EXTRA_ENV[@]+"${GA_EXTRA_ENV[@]}"}"
}
GA_EXTRA_ENV=()

# ga_run ARGS...: one command of the binary, in ga_env's environment; sets
# rc, out (its stdout) and err (its stderr).
ga_run() {
    local -a envv
    mapfile -d '' -t envv < <(ga_env)
    out=$("${envv[@]}" "$GA_BIN" "$@" 2>"$T_TMP/ga.err")
    rc=$?
    err=$(cat "$T_TMP/ga.err")
}

# new_stack_dir: a fresh ST_DIR with config, gemini settings and var/.
new_stack_dir() {
    ST_N=$((ST_N + 1))
    ST_DIR=$T_TMP/stack$ST_N
    mkdir -p "$ST_DIR/var"
    GA_CONF=$ST_DIR/agent.yaml
    GA_SOCK=$ST_DIR/ga.sock
    GA_LISTEN=
    GA_PIDFILE=$ST_DIR/ga.pid
    GA_LOG=$ST_DIR/ga.stderr
    GA_OUT=$ST_DIR/ga.stdout
}

# start_stack [--workers N] [--limits YAML] [--api-key KEY] [--data-dir DIR]
#             [--listen] [--no-nginx] [--real-rate] [--keep-dir]
#             [--base-url URL] [--mock] [--model NAME] [--system-prompt TEXT]
#             [--env NAME=VALUE]... [--threads N] [--queue N]
#             [--yaml EXTRA_YAML] [--auth] [--rate RATE] [--burst N]
# Starts `serve` on a unix socket in a new stack dir and nginx in front of it.
# --real-rate keeps the snippet's rate limit; otherwise it is raised to
# 1000r/s so that tests making many quick requests are not throttled
# (--rate RATE, e.g. 100000r/s; --burst N replaces the snippet's burst=10,
# for many requests at the same instant).
# --listen serves FastCGI on 127.0.0.1:<free port> (GA_LISTEN) instead of
# the unix socket, and points nginx there.
# --keep-dir reuses ST_DIR (its agent.yaml and .gemini.yaml) as prepared by
# the caller after new_stack_dir.
# --base-url puts baseUrl in the generated .gemini.yaml; --mock is
# --base-url $MOCK_URL (start_mock first). --model and --system-prompt set
# those keys. --env adds a variable to the responder's environment (e.g.
# GEMINI_BASE_URL=..., AGENT_MAX_LOOP_STEPS=2), on top of GA_EXTRA_ENV.
# --threads and --queue are passed to serve. --yaml appends top-level keys
# to agent.yaml (policy, store ...). --auth writes a session secret
# ($ST_DIR/session.key, GA_SECRET) and names it in agent.yaml's auth
# section, so that tokens (`auth issue`, issue_token) are accepted.
start_stack() {
    local workers=2 limits='{maxBodyBytes: 4096}' key=test-key-not-a-real-key
    local nginx=1 real_rate=0 keep=0 data='' listen=0 base='' model='' sp=''
    local extra='' auth=0 rate='' burst=''
    local -a more_env=() pool=()
    while [ $# -gt 0 ]; do
        case $1 in
        --workers) workers=$2; shift ;;
        --threads | --queue) pool+=("$1" "$2"); shift ;;
        --limits) limits=$2; shift ;;
        --api-key) key=$2; shift ;;
        --base-url) base=$2; shift ;;
        --mock)
            [ -n "$MOCK_URL" ] || bail "start_stack --mock: no mock running (start_mock)"
            base=$MOCK_URL ;;
        --model) model=$2; shift ;;
        --system-prompt) sp=$2; shift ;;
        --env) more_env+=("$2"); shift ;;
        --data-dir) data=$2; shift ;;
        --listen) listen=1 ;;
        --no-nginx) nginx=0 ;;
        --real-rate) real_rate=1 ;;
        --keep-dir) keep=1 ;;
        --yaml) extra=${extra:+$extra$'\n'}$2; shift ;;
        --auth) auth=1 ;;
        --rate) rate=$2; shift ;;
        --burst) burst=$2; shift ;;
        *) bail "start_stack: unknown option $1" ;;
        esac
        shift
    done
    require_binary
    if [ "$keep" -eq 0 ]; then
        new_stack_dir
        write_gemini_yaml "$ST_DIR/.gemini.yaml" "$key" "$base" "$model" "$sp"
        if [ "$auth" -eq 1 ]; then
            GA_SECRET=$ST_DIR/session.key
            write_secret "$GA_SECRET" || bail "cannot write the session secret"
            extra=${extra:+$extra$'\n'}"auth: {secretFile: '$GA_SECRET'}"
        fi
        write_config "$GA_CONF" "$limits" "$data" "$extra"
    fi

    local -a envv bind=(--socket "$GA_SOCK")
    if [ "$listen" -eq 1 ]; then
        GA_LISTEN=127.0.0.1:$(free_port) || bail "no free port"
        bind=(--listen "$GA_LISTEN")
    fi
    mapfile -d '' -t envv < <(ga_env)
    envv+=("${more_env[@]+"${more_env[@]}"}")
    "${envv[@]}" "$GA_BIN" serve --config "$GA_CONF" "${bind[@]}" \
        --workers "$workers" "${pool[@]+"${pool[@]}"}" --pid-file "$GA_PIDFILE" \
        >"$GA_OUT" 2>"$GA_LOG" </dev/null &
    GA_PID=$!
    remember_pids "$GA_PID"
    if ! wait_until 5000 stack_ready "$workers"; then
        local why="responder did not come up within 5 s (socket $( [ -S "$GA_SOCK" ] && echo present || echo missing ))"
        proc_alive "$GA_PID" || why="responder exited at startup"
        why="$why; stderr: $(tail -c 600 "$GA_LOG" | tr '\n' ' ')"
        bail "$why"
    fi
    [ "$nginx" -eq 1 ] && start_nginx "$real_rate" "$rate" "$burst"
    return 0
}

# start_nginx REAL_RATE [RATE [BURST]]: a private nginx (temp prefix, free port) around the
# real nginx/gemini-agent.conf, rendered by scripts/render-nginx-conf.sh (the
# same script `make demo` uses) and pointed at this stack.
start_nginx() {
    local real_rate=${1:-0} rate=${2:-1000r/s} burst=${3:-}
    [ "$real_rate" = 1 ] && rate=
    NGX_DIR=$ST_DIR/nginx
    NGX_PORT=$(free_port) || bail "no free port"
    BASE_URL=http://127.0.0.1:$NGX_PORT
    "$REPO/scripts/render-nginx-conf.sh" "$NGX_DIR" "$NGX_PORT" "${GA_LISTEN:-$GA_SOCK}" \
        "$REPO/www" $rate || bail "cannot render the nginx config from $SNIPPET"
    if [ -n "$burst" ]; then
        grep -q 'burst=10 ' "$NGX_DIR/site.conf" || bail "the snippet has no burst=10 to replace"
        sed -i "s/burst=10 /burst=$burst /" "$NGX_DIR/site.conf"
    fi
    # a test's own change to the rendered site (e.g. an include uncommented)
    if [ -n "${GA_NGINX_EDIT:-}" ]; then
        "$GA_NGINX_EDIT" "$NGX_DIR" || bail "GA_NGINX_EDIT ($GA_NGINX_EDIT) failed"
    fi
    "$NGINX_BIN" -c "$NGX_DIR/nginx.conf" -p "$NGX_DIR/" -e "$NGX_DIR/error.log" \
        >"$NGX_DIR/stdout" 2>&1 </dev/null &
    NGX_PID=$!
    if ! wait_until 5000 eval 'curl -s -o /dev/null --max-time 1 "$BASE_URL/" && [ -s "$NGX_DIR/nginx.pid" ]'; then
        bail "nginx did not start: $(tail -c 600 "$NGX_DIR/error.log" 2>/dev/null | tr '\n' ' ')"
    fi
}

stop_nginx() {
    [ -n "$NGX_PID" ] || return 0
    stop_pid "$NGX_PID" 5000
    wait "$NGX_PID" 2>/dev/null
    NGX_PID=
}

# stop_responder: SIGTERM the master; SIGKILL it and any of its workers left.
stop_responder() {
    [ -n "$GA_PID" ] || return 0
    read_pidfile >/dev/null 2>&1
    stop_pid "$GA_PID" 5000
    wait "$GA_PID" 2>/dev/null
    kill_leftover_workers
    GA_PID=
}

kill_leftover_workers() {
    local p
    for p in "${GA_SEEN_PIDS[@]+"${GA_SEEN_PIDS[@]}"}"; do
        if is_ga_proc "$p"; then kill -KILL "$p" 2>/dev/null; fi
    done
}

stop_stack() {
    stop_nginx
    stop_responder
}

t_cleanup() {
    local rc=$? p
    trap - EXIT INT TERM
    stop_stack
    kill_leftover_workers
    stop_mock
    for p in "${T_BG_PIDS[@]+"${T_BG_PIDS[@]}"}"; do
        kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    if [ "${KEEP_TMP:-0}" = 1 ]; then
        echo "# $T_NAME: temp dir kept: $T_TMP"
    else
        rm -rf "$T_TMP"
    fi
    exit "$rc"
}
trap t_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------------------
# Requests

# req METHOD PATH [BODY [CURL_ARGS...]]
# Sends a request through nginx. BODY: '' for none, '@FILE' for a file's
# bytes, anything else is sent literally. A body goes with
# "Content-Type: $REQ_CT" (default application/json; REQ_CT=none sends no
# Content-Type at all). Sets RES_STATUS ("000" if curl failed), RES_MS, and
# writes $RES_HDRS and $RES_BODY.
req() {
    local method=$1 path=$2 body=${3-} ct=${REQ_CT-application/json} t0
    shift 2
    [ $# -gt 0 ] && shift
    local -a args=(-sS -o "$RES_BODY" -D "$RES_HDRS" -w '%{http_code}'
        --max-time "${REQ_TIMEOUT:-10}" -X "$method")
    if [ -n "$body" ]; then
        if [[ $body == @* ]]; then
            args+=(--data-binary "$body")
        else
            printf '%s' "$body" >"$T_TMP/req.body"
            args+=(--data-binary "@$T_TMP/req.body")
        fi
        if [ "$ct" = none ]; then args+=(-H 'Content-Type:'); else args+=(-H "Content-Type: $ct"); fi
    fi
    RES_DESC="$method $path"
    : >"$RES_BODY"
    : >"$RES_HDRS"
    t0=$(now_ms)
    RES_STATUS=$(curl "${args[@]}" "$@" "$BASE_URL$path" 2>"$T_TMP/curl.err")
    RES_MS=$(($(now_ms) - t0))
    [ -n "$RES_STATUS" ] || RES_STATUS=000
    cat "$RES_HDRS" "$RES_BODY" >>"$RES_ALL" 2>/dev/null
    printf '\n' >>"$RES_ALL"
}

# fcgi_req [--split N --delay S --ready-file F] METHOD URI [BODY] [NAME=VALUE...]
# Sends a request straight to the responder's socket over FastCGI with the
# params nginx would send (CONTENT_LENGTH = body length unless overridden by
# a CONTENT_LENGTH=... argument; CONTENT_TYPE application/json and
# REMOTE_ADDR 127.0.0.1 unless overridden). BODY as for req. Sets the same
# RES_* as req.
fcgi_req() {
    local -a extra=()
    while [ $# -gt 0 ]; do
        case $1 in
        --split | --delay | --ready-file) extra+=("$1" "$2"); shift 2 ;;
        *) break ;;
        esac
    done
    local method=$1 uri=$2 body=${3-} bodyfile=$T_TMP/fcgi.body t0
    shift 2
    [ $# -gt 0 ] && shift
    if [[ $body == @* ]]; then cp "${body#@}" "$bodyfile"; else printf '%s' "$body" >"$bodyfile"; fi
    local len
    len=$(wc -c <"$bodyfile")
    local -a params=(--param "GATEWAY_INTERFACE=CGI/1.1" --param "REQUEST_METHOD=$method"
        --param "REQUEST_URI=$uri" --param "DOCUMENT_URI=${uri%%\?*}"
        --param "SCRIPT_NAME=${uri%%\?*}" --param "SERVER_PROTOCOL=HTTP/1.1")
    local have_len=0 have_ct=0 have_addr=0 kv
    for kv in "$@"; do
        case $kv in
        CONTENT_LENGTH=*) have_len=1 ;;
        CONTENT_TYPE=*) have_ct=1 ;;
        REMOTE_ADDR=*) have_addr=1 ;;
        esac
        params+=(--param "$kv")
    done
    # a REMOTE_ADDR=... argument replaces the default (nginx's client)
    [ "$have_addr" -eq 1 ] || params+=(--param "REMOTE_ADDR=127.0.0.1")
    if [ "$have_len" -eq 0 ] && [ "$len" -gt 0 ]; then params+=(--param "CONTENT_LENGTH=$len"); fi
    if [ "$have_ct" -eq 0 ] && [ "$len" -gt 0 ]; then params+=(--param "CONTENT_TYPE=application/json"); fi
    RES_DESC="FastCGI $method $uri"
    t0=$(now_ms)
    RES_STATUS=$(timeout 20 "$PY" "$FCGI_CLIENT" --socket "$GA_SOCK" "${params[@]}" \
        --body-file "$bodyfile" --timeout "${REQ_TIMEOUT:-10}" "${extra[@]+"${extra[@]}"}" \
        --headers-out "$RES_HDRS" --body-out "$RES_BODY" 2>"$T_TMP/fcgi.err")
    FCGI_RC=$?
    RES_MS=$(($(now_ms) - t0))
    [ -n "$RES_STATUS" ] || RES_STATUS=000
    cat "$RES_HDRS" "$RES_BODY" >>"$RES_ALL" 2>/dev/null
}

# cgi_run [NAME=VALUE...] < BODY: runs the binary in CGI mode (no arguments,
# GATEWAY_INTERFACE=CGI/1.1, config from GEMINI_AGENT_CONFIG=$GA_CONF) with
# only the given variables in the environment, stdin as given, bounded by
# CGI_TIMEOUT seconds (default 10). Sets RES_* like req, plus CGI_RC (exit
# code; 124 = killed by the timeout) and CGI_STDERR (file).
CGI_RC=0
CGI_STDERR=$T_TMP/cgi.stderr
cgi_run() {
    local -a envv
    local t0 out=$T_TMP/cgi.out
    mapfile -d '' -t envv < <(ga_env)
    RES_DESC="CGI $*"
    t0=$(now_ms)
    timeout -k 1 "${CGI_TIMEOUT:-10}" "${envv[@]}" GATEWAY_INTERFACE=CGI/1.1 \
        "GEMINI_AGENT_CONFIG=$GA_CONF" "$@" "$GA_BIN" >"$out" 2>"$CGI_STDERR"
    CGI_RC=$?
    RES_MS=$(($(now_ms) - t0))
    split_cgi_output "$out"
}

# split_cgi_output FILE: CGI output -> $RES_HDRS (as "HTTP/1.1 <status>" plus
# the CGI headers), $RES_BODY, RES_STATUS (from Status:, "000" if absent).
split_cgi_output() {
    RES_STATUS=$("$PY" - "$1" "$RES_HDRS" "$RES_BODY" <<'PY'
import sys
src, hdrs, body = sys.argv[1:]
out = open(src, "rb").read()
crlf, lf = out.find(b"\r\n\r\n"), out.find(b"\n\n")
if crlf >= 0 and (lf < 0 or crlf <= lf):
    head, rest = out[:crlf], out[crlf + 4:]
elif lf >= 0:
    head, rest = out[:lf], out[lf + 2:]
else:
    head, rest = out, b""
lines = [l.rstrip(b"\r") for l in head.split(b"\n") if l.strip()]
status = "000"
for l in lines:
    n, _, v = l.partition(b":")
    if n.strip().lower() == b"status":
        status = v.strip().split(b" ")[0].decode("ascii", "replace")
with open(hdrs, "wb") as f:
    f.write(b"HTTP/1.1 " + status.encode() + b"\r\n" + b"".join(l + b"\r\n" for l in lines) + b"\r\n")
open(body, "wb").write(rest)
print(status)
PY
)
    [ -n "$RES_STATUS" ] || RES_STATUS=000
    cat "$RES_HDRS" "$RES_BODY" >>"$RES_ALL" 2>/dev/null
}

# ---------------------------------------------------------------------------
# Assertions on the last response. LABEL defaults to "<METHOD PATH>: ...".

# header_get NAME: the values of header NAME in the last header block (one
# per line; several lines if the header is repeated).
header_get() {
    local n
    n=$(printf '%s' "$1" | tr 'A-Z' 'a-z')
    awk -v n="$n" '
        { sub(/\r$/, "") }
        /^HTTP\// { out = ""; cnt = 0; next }
        {
            i = index($0, ":"); if (i == 0) next
            k = tolower(substr($0, 1, i - 1)); v = substr($0, i + 1)
            sub(/^[ \t]+/, "", v); sub(/[ \t]+$/, "", v)
            if (k == n) { out = (cnt++ ? out "\n" : "") v }
        }
        END { if (cnt) print out }' "$RES_HDRS"
}

assert_status() {
    local want=$1 label=${2:-"$RES_DESC: status $1"}
    if [ "$RES_STATUS" = "$want" ]; then
        ok "$label"
    else
        not_ok "$label" "got status $RES_STATUS; body: $(body_excerpt)"
    fi
}

# assert_header NAME VALUE [LABEL]: present exactly once, with exactly VALUE.
assert_header() {
    local name=$1 want=$2 label=${3:-"$RES_DESC: header $1: $2"} got
    got=$(header_get "$name")
    if [ "$got" = "$want" ]; then
        ok "$label"
    elif [ -z "$got" ]; then
        not_ok "$label" "header $name missing"
    else
        not_ok "$label" "got '$(printf '%s' "$got" | tr '\n' '|')'"
    fi
}

assert_header_absent() {
    local name=$1 label=${2:-"$RES_DESC: no header $1"} got
    got=$(header_get "$name")
    if [ -z "$got" ]; then ok "$label"; else not_ok "$label" "got '$got'"; fi
}

# assert_json_headers [LABEL]: the three headers every JSON answer carries.
assert_json_headers() {
    local label=${1:-"$RES_DESC"} bad='' got
    got=$(header_get Content-Type)
    [ "$got" = "application/json; charset=utf-8" ] || bad="$bad Content-Type='$got'"
    got=$(header_get X-Content-Type-Options)
    [ "$got" = nosniff ] || bad="$bad X-Content-Type-Options='$got'"
    got=$(header_get Cache-Control)
    [ "$got" = no-store ] || bad="$bad Cache-Control='$got'"
    if [ -z "$bad" ]; then
        ok "$label: JSON headers"
    else
        not_ok "$label: JSON headers" "$(printf '%s' "$bad" | tr '\n' '|')"
    fi
}

# json_get EXPR: evaluate EXPR on the last body (see pyjson).
json_get() {
    pyjson "$1" "$RES_BODY"
}

# assert_json EXPR WANT [LABEL]
assert_json() {
    local expr=$1 want=$2 label=${3:-"$RES_DESC: $1 == $2"} got
    got=$(json_get "$expr")
    if [ "$got" = "$want" ]; then
        ok "$label"
    else
        not_ok "$label" "got '$got'; body: $(body_excerpt)"
    fi
}

# assert_true EXPR [LABEL]
assert_true() {
    assert_json "$1" true "${2:-"$RES_DESC: $1"}"
}

# assert_error STATUS CODE [LABEL]: status, JSON headers, and a body of
# exactly {"error":{"code":CODE,"message":"<non-empty>", ...}}.
assert_error() {
    local status=$1 code=$2 label=${3:-"$RES_DESC"} got
    assert_status "$status" "$label: status $status"
    assert_json_headers "$label"
    got=$(json_get 'list(j.keys()) == ["error"] and isinstance(j["error"], dict) and isinstance(j["error"].get("message"), str) and j["error"]["message"] != "" and j["error"].get("code")')
    if [ "$got" = "$code" ]; then
        ok "$label: error envelope, code $code"
    else
        not_ok "$label: error envelope, code $code" "got '$got'; body: $(body_excerpt)"
    fi
}

assert_body_contains() {
    local s=$1 label=${2:-"$RES_DESC: body contains '$1'"}
    if grep -qF -- "$s" "$RES_BODY"; then ok "$label"; else not_ok "$label" "body: $(body_excerpt)"; fi
}

assert_body_lacks() {
    local s=$1 label=${2:-"$RES_DESC: body lacks '$1'"}
    if grep -qF -- "$s" "$RES_BODY"; then not_ok "$label" "body: $(body_excerpt)"; else ok "$label"; fi
}

# assert_file_lacks FILE STRING LABEL
assert_file_lacks() {
    local f=$1 s=$2 label=$3
    if [ ! -e "$f" ]; then
        ok "$label (file absent)"
    elif grep -qaF -- "$s" "$f"; then
        not_ok "$label" "found in $f: $(grep -aF -- "$s" "$f" | head -n 2 | cut -c1-200 | tr '\n' '|')"
    else
        ok "$label"
    fi
}

# assert_fast MAX_MS [LABEL]: the last request took at most MAX_MS.
assert_fast() {
    local max=$1 label=${2:-"$RES_DESC: answered within $1 ms"}
    if [ "$RES_MS" -le "$max" ]; then ok "$label"; else not_ok "$label" "took $RES_MS ms"; fi
}

# count_lines FILE: number of lines (0 if the file is missing).
count_lines() {
    if [ -e "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi
}

# ---------------------------------------------------------------------------
# The mock Gemini server (tests/mock/gemini_mock.py, see its README.md)

MOCK_DIR=$REPO/tests/mock
MOCK_PID=
MOCK_PORT=
MOCK_URL=
MOCK_PORT_FILE=
MOCK_LOG=
MOCK_RECORDS=$T_TMP/mock-records # what the mock recorded, kept before each reset
MOCK_N_RESETS=0

# start_mock [MOCK_ARGS...]: the mock on 127.0.0.1, port chosen by the
# kernel (--port 0 --port-file), stderr in $MOCK_LOG. Sets MOCK_PORT,
# MOCK_URL, MOCK_PORT_FILE. Extra arguments go to gemini_mock.py (e.g.
# --scenario 'page-call' or --seed 7). Stopped by stop_mock or on exit.
start_mock() {
    [ -z "$MOCK_PID" ] || stop_mock
    MOCK_PORT_FILE=$T_TMP/mock.port
    MOCK_LOG=$T_TMP/mock.stderr
    mkdir -p "$MOCK_RECORDS"
    rm -f "$MOCK_PORT_FILE"
    "$PY" "$MOCK_DIR/gemini_mock.py" --host 127.0.0.1 --port 0 \
        --port-file "$MOCK_PORT_FILE" "$@" >>"$T_TMP/mock.stdout" 2>>"$MOCK_LOG" </dev/null &
    MOCK_PID=$!
    if ! "$PY" "$MOCK_DIR/mockctl.py" wait --timeout 10 --port-file "$MOCK_PORT_FILE" >/dev/null 2>&1; then
        bail "the mock Gemini server did not start: $(tail -c 600 "$MOCK_LOG" 2>/dev/null | tr '\n' ' ')"
    fi
    MOCK_PORT=$(cat "$MOCK_PORT_FILE")
    MOCK_URL=http://127.0.0.1:$MOCK_PORT
}

# stop_mock: SIGTERM (the mock exits within ~0.2 s, even with a stalled
# request open), SIGKILL if it does not.
stop_mock() {
    [ -n "$MOCK_PID" ] || return 0
    stop_pid "$MOCK_PID" 3000
    wait "$MOCK_PID" 2>/dev/null
    MOCK_PID=
}

# mock_ctl COMMAND [ARGS...]: tests/mock/mockctl.py against the running mock.
mock_ctl() {
    "$PY" "$MOCK_DIR/mockctl.py" "$@" --port-file "$MOCK_PORT_FILE"
}

# mock_save_records: append what the mock recorded so far to
# $MOCK_RECORDS (one file per call), for checks over the whole test.
mock_save_records() {
    [ -n "$MOCK_URL" ] || return 0
    MOCK_N_RESETS=$((MOCK_N_RESETS + 1))
    curl -sS --max-time 10 -o "$MOCK_RECORDS/$(printf '%04d' "$MOCK_N_RESETS").json" \
        "$MOCK_URL/__mock/requests" || not_ok "mock records" "cannot read the mock's records"
}

# mock_reset: keep the records (mock_save_records), then clear them and the
# mock's counters (POST /__mock/reset). The default scenario is kept.
mock_reset() {
    mock_save_records
    curl -sS --max-time 10 -o /dev/null -X POST "$MOCK_URL/__mock/reset" ||
        not_ok "mock reset" "cannot reset the mock"
}

# mock_count: how many API requests the mock recorded since its reset.
mock_count() {
    # Each record has one "seq" member; a string in a body holding the same
    # text would be escaped (\"seq\"), so it is not counted.
    curl -sS --max-time 10 "$MOCK_URL/__mock/requests" | grep -o '"seq": ' | wc -l | tr -d ' '
}

# ---------------------------------------------------------------------------
# Many checks in one Python (tests/http/conf/pycheck.py)

SAVED_DIR=$T_TMP/saved

# save_res NAME: keep the last response body as S[NAME] for assert_py.
save_res() {
    mkdir -p "$SAVED_DIR"
    cp "$RES_BODY" "$SAVED_DIR/$1.json"
}

# assert_py GROUP <<'EOF' ... EOF: one check per line of standard input, on
# the last response, the mock's records and the saved bodies (the syntax
# and the names bound are in pycheck.py). Prints and counts ok / not ok.
assert_py() {
    local group=$1 line checks=$T_TMP/checks.txt out=$T_TMP/checks.out n=0
    cat >"$checks"
    "$PY" "$HTTP_DIR/conf/pycheck.py" check --group "$group" --checks "$checks" \
        --body "$RES_BODY" --headers "$RES_HDRS" --status "$RES_STATUS" \
        --mock "${MOCK_URL:-}" --saved "$SAVED_DIR" >"$out" 2>&1
    local rc=$?
    while IFS= read -r line; do
        case $line in
        'ok - '*) T_PASS=$((T_PASS + 1)); n=$((n + 1)); printf '%s\n' "$line" ;;
        'not ok - '*) T_FAIL=$((T_FAIL + 1)); n=$((n + 1)); printf '%s\n' "$line" ;;
        *) printf '# %s\n' "$line" ;;
        esac
    done <"$out"
    if [ "$rc" -ne 0 ] || [ "$n" -eq 0 ]; then
        not_ok "$group" "pycheck.py failed (exit $rc) or ran no check"
    fi
}

# make_json FILE EXPR: write the value of the Python EXPR (names as in
# assert_py: r is the last response, or the file $MJ_BODY when set; S the
# saved bodies) to FILE as JSON.
make_json() {
    "$PY" "$HTTP_DIR/conf/pycheck.py" make --out "$1" --expr "$2" \
        --body "${MJ_BODY:-$RES_BODY}" --headers "$RES_HDRS" --status "$RES_STATUS" \
        --mock "${MOCK_URL:-}" --saved "$SAVED_DIR" 2>"$T_TMP/make_json.err" ||
        bail "make_json: cannot build a body: $(tail -c 400 "$T_TMP/make_json.err" | tr '\n' ' ')"
}
