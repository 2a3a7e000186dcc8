#!/bin/bash
# t_accesslog.sh - the log (docs/logging.md) through nginx + the responder +
# the mock Gemini server: one access line per request (a chat, a stream,
# a 404, a 413, the run API) with its id, method, route, status, time,
# Gemini calls and tokens; the id is the answer's X-Request-Id (nginx's
# $request_id when the snippet passes it, else one of ours); no key, token,
# cookie, query or message text in the log (canaries); log.format: json
# lines that parse; log.file and SIGUSR1 after a `mv` of the file: new
# lines in the new file, none lost or split while requests were in flight.
source "$(dirname "${BASH_SOURCE[0]}")/chat_lib.sh"

MSG_CANARY="msg-CANARY-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
Q_CANARY="query-CANARY-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
COOKIE_CANARY="cookie-CANARY-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
export MSG_CANARY

# The nginx line docs/logging.md gives, after each include of fastcgi_params.
add_request_id() {
    sed -i 's|include fastcgi_params;|& fastcgi_param REQUEST_ID $request_id;|' "$1/site.conf"
}

# access_line ID: the text access line of request ID (empty: none).
access_line() {
    grep -a " access id=$1 " "$GA_LOG"
}

# assert_access LABEL FIELDS...: the last answer's X-Request-Id names
# exactly one access line, which holds every FIELD (e.g. status=200), and
# a whole number of ms.
assert_access() {
    local label=$1 id line f why=''
    shift
    id=$(header_get X-Request-Id)
    [ -n "$id" ] || { not_ok "$label" "no X-Request-Id in the answer"; return; }
    wait_until 3000 eval '[ "$(access_line "$id" | wc -l)" -ge 1 ]'
    line=$(access_line "$id")
    [ "$(printf '%s\n' "$line" | grep -c .)" = 1 ] || why="$(printf '%s\n' "$line" | grep -c .) lines for id $id"
    for f in "$@"; do
        case " $line " in *" $f "*) ;; *) why="$why; no '$f'" ;; esac
    done
    [[ $line =~ \ ms=[0-9]+\  ]] || why="$why; no ms=N"
    [[ $line =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z\ gemini-agent\[[0-9]+\]:\ info:\ access\  ]] ||
        why="$why; the head is not 'TIME gemini-agent[PID]: info: access'"
    if [ -z "$why" ]; then ok "$label"; else not_ok "$label" "${why#; }: $line"; fi
    LAST_LINE=$line
}

# tokens_positive: the last access line counted tokens both ways.
tokens_positive() {
    [[ $LAST_LINE =~ tokens_in=([0-9]+)\ tokens_out=([0-9]+) ]] &&
        [ "${BASH_REMATCH[1]}" -gt 0 ] && [ "${BASH_REMATCH[2]}" -gt 0 ]
}

start_mock
GA_NGINX_EDIT=add_request_id
start_stack --mock --auth --api-key "$CANARY" --limits '{maxBodyBytes: 65536}'
unset GA_NGINX_EDIT
SENT=0 # requests the responder answered, for the count at the end

# ---------------------------------------------------------------------------
# 1. A chat: its line, with nginx's request id

req POST "$SEND" "{\"message\":\"[[mock:text say=\\\"Hello there.\\\"]] $MSG_CANARY\",\"history\":[]}" \
    -H "Cookie: session=$COOKIE_CANARY"
SENT=$((SENT + 1))
assert_status 200 "chat: 200"
check "chat: X-Request-Id is nginx's \$request_id (32 hex)" \
    eval '[[ $(header_get X-Request-Id) =~ ^[0-9a-f]{32}$ ]]'
assert_access "chat: one access line with its fields" method=POST \
    route=/_jay/actions/geminiAgent.sendMessage status=200 gemini_calls=1
check "chat: tokens in and out counted" tokens_positive

# 2. The same as a stream
: >"$RES_HDRS"
printf '{"message":"[[mock:text say=\\"Streamed.\\"]] %s","history":[]}' \
    "$MSG_CANARY" >"$T_TMP/stream.json"
curl -sS -N -D "$RES_HDRS" -o "$T_TMP/stream.out" -X POST -H 'Content-Type: application/json' \
    -H 'Accept: application/x-ndjson' --data-binary "@$T_TMP/stream.json" "$BASE_URL$SEND"
SENT=$((SENT + 1))
check "stream: an NDJSON answer" grep -q '"type":"done"\|"type":"response"' "$T_TMP/stream.out"
assert_access "stream: one access line" method=POST \
    route=/_jay/actions/geminiAgent.sendMessage status=200 gemini_calls=1
check "stream: tokens counted" tokens_positive

# 3. Errors: a 404 (its path, never the query) and a 413
req GET "/api/agent/nope?key=$Q_CANARY"
SENT=$((SENT + 1))
assert_status 404 "404: status"
assert_access "404: one access line, the path without its query" method=GET \
    route=/api/agent/nope status=404 gemini_calls=0 tokens_in=0 tokens_out=0

head -c 70000 /dev/zero | tr '\0' 'a' | sed 's/^/{"message":"/; s/$/"}/' >"$T_TMP/big.json"
req POST "$SEND" "@$T_TMP/big.json"
SENT=$((SENT + 1))
assert_status 413 "413: status"
assert_access "413: one access line" method=POST \
    route=/_jay/actions/geminiAgent.sendMessage status=413 gemini_calls=0

# 4. The run API with a Bearer token; a read names the route, not the id
TOKEN=$(env -i PATH="$PATH" "$GA_BIN" auth issue --user ann --config "$GA_CONF" 2>"$T_TMP/issue.err") ||
    bail "auth issue failed: $(cat "$T_TMP/issue.err")"
printf '{"prompt":"[[mock:text say=\\"Done.\\"]] %s"}' "$MSG_CANARY" >"$T_TMP/run.json"
req POST /api/agent/run "@$T_TMP/run.json" -H "Authorization: Bearer $TOKEN"
SENT=$((SENT + 1))
assert_status 200 "run API: 200"
RUN_ID=$(json_get 'j["runId"]')
assert_access "run API: one access line" method=POST route=/api/agent/run \
    status=200 gemini_calls=1
check "run API: tokens counted" tokens_positive
req GET "/api/agent/runs/$RUN_ID" '' -H "Authorization: Bearer $TOKEN"
SENT=$((SENT + 1))
assert_status 200 "run API read: 200"
assert_access "run API read: the route's pattern, not the run's id" method=GET \
    'route=/api/agent/runs/*' status=200 gemini_calls=0

# 5. Nothing secret, nothing said
assert_file_lacks "$GA_LOG" "$CANARY" "log: no API key"
assert_file_lacks "$GA_LOG" "$MSG_CANARY" "log: no message text"
assert_file_lacks "$GA_LOG" "$Q_CANARY" "log: no query string"
assert_file_lacks "$GA_LOG" "$COOKIE_CANARY" "log: no cookie"
assert_file_lacks "$GA_LOG" "${TOKEN##*.}" "log: no token (its signature)"
assert_file_lacks "$GA_LOG" "Bearer" "log: no Authorization"
n=$(grep -ac ': info: access id=' "$GA_LOG")
check "one access line per request ($SENT)" [ "$n" = "$SENT" ]

# A web server's id that is not one is replaced (it is echoed in a header)
fcgi_req GET /_jay/actions '' 'REQUEST_ID=a b"c'
check "a bad REQUEST_ID: a fresh id instead" \
    eval '[[ $(header_get X-Request-Id) =~ ^[0-9a-f]{32}$ ]]'
fcgi_req GET /_jay/actions '' 'REQUEST_ID=' 'UNIQUE_ID=ZbC9@fX-1a'
check "Apache's UNIQUE_ID is taken" [ "$(header_get X-Request-Id)" = 'ZbC9@fX-1a' ]
stop_stack

# ---------------------------------------------------------------------------
# 6. log.format: json, log.file, and SIGUSR1 after logrotate's mv

start_stack --mock --api-key "$CANARY" --limits "{$CHAT_LIMITS}" \
    --yaml 'log: {format: json, file: agent.log}'
LOGF=$ST_DIR/agent.log

chat_send "[[mock:text say=\"Hi.\"]] $MSG_CANARY"
assert_status 200 "json: chat 200"
JID=$(header_get X-Request-Id)
check "json: our own id when nginx passes none (32 hex)" eval '[[ $JID =~ ^[0-9a-f]{32}$ ]]'
req GET /api/agent/nothing
wait_until 3000 eval '[ "$(grep -c "\"msg\":\"access\"" "$LOGF" 2>/dev/null)" -ge 2 ]'
export JID
check "json: every line of the file is one object with time, level, pid, msg; the access lines have every field" \
    "$PY" - "$LOGF" <<'PY'
import json, os, re, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
assert lines[-1] == "", "no newline at the end"
acc = []
for l in lines[:-1]:
    o = json.loads(l)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o["time"]), o
    assert o["level"] in ("error", "warn", "info", "debug") and isinstance(o["pid"], int), o
    assert isinstance(o["msg"], str), o
    if o["msg"] == "access":
        acc.append(o)
chat = [o for o in acc if o["id"] == os.environ["JID"]]
assert len(chat) == 1, acc
c = chat[0]
assert (c["method"], c["route"], c["status"], c["gemini_calls"]) == ("POST", "/_jay/actions/geminiAgent.sendMessage", 200, 1), c
assert c["tokens_in"] > 0 and c["tokens_out"] > 0 and isinstance(c["ms"], int), c
assert [(o["route"], o["status"]) for o in acc if o["method"] == "GET"] == [("/api/agent/nothing", 404)], acc
PY
check "json: once the file is open, nothing goes to stderr" \
    eval '! grep -q "store .*: schema\|serving on\|: access \|\"access\"" "$GA_LOG"'
assert_file_lacks "$LOGF" "$MSG_CANARY" "json: no message text"
assert_file_lacks "$LOGF" "$CANARY" "json: no API key"

# docs/logging.md's logrotate stanza, as logrotate runs it: the file is
# renamed (no copytruncate), then the postrotate lines run with sh - with
# this stack's log file and pid file for the stanza's paths.
rotate_as_logrotate() {
    local conf post
    conf=$("$PY" "$REPO/tests/deploy/recipe.py" "$REPO/docs/logging.md" logrotate) ||
        bail "docs/logging.md has no logrotate block"
    case $conf in *copytruncate*) not_ok "logrotate: renames" "the stanza says copytruncate" ;; esac
    post=$(sed -n '/^ *postrotate$/,/^ *endscript$/p' <<<"$conf" | sed '1d;$d')
    [ -n "$post" ] || bail "the logrotate block has no postrotate lines"
    post=${post//\/run\/gemini-agent\/gemini-agent.pid/$GA_PIDFILE}
    mv "$LOGF" "$LOGF.1"
    sh -c "$post" || not_ok "logrotate: postrotate" "exit $?"
}

# Requests in flight while the file is moved and SIGUSR1 sent; then more.
before=$(grep -c '"msg":"access"' "$LOGF")
burst() { # N: N requests, 4 at a time, each must answer 200
    seq "$1" | xargs -P 4 -I{} curl -s -o /dev/null -w '%{http_code}\n' "$BASE_URL/_jay/actions" >>"$T_TMP/burst.codes"
}
: >"$T_TMP/burst.codes"
burst 120 &
BURST=$!
sleep 0.2
rotate_as_logrotate
wait "$BURST"
check "rotation: the master reopened the file" \
    wait_until 3000 grep -q 'SIGUSR1: the log file is open again' "$LOGF"
sleep 0.6 # every worker's main thread takes the signal within WATCH_TICK_MS
old=$(grep -c '"msg":"access"' "$LOGF.1")
burst 20
wait_until 3000 eval '[ $(cat "$LOGF" "$LOGF.1" | grep -c "\"msg\":\"access\"") -ge $((before + 140)) ]'
total=$(cat "$LOGF" "$LOGF.1" | grep -c '"msg":"access"')
check "rotation: every request answered 200" [ "$(grep -c '^200$' "$T_TMP/burst.codes")" = 140 ]
check "rotation: no access line lost ($((before + 140)))" [ "$total" = "$((before + 140))" ]
check "rotation: after the reopen, lines go to the new file only" \
    [ "$(grep -c '"msg":"access"' "$LOGF.1")" = "$old" ]
check "rotation: the new file has the last 20 (at least)" \
    [ "$(grep -c '"msg":"access"' "$LOGF")" -ge 20 ]
check "rotation: no line split - both files are whole JSON lines" \
    "$PY" -c 'import json,sys
for f in sys.argv[1:]:
    for l in open(f, encoding="utf-8").read().split("\n")[:-1]: json.loads(l)' "$LOGF" "$LOGF.1"

# A reload (SIGHUP) applies a changed log: section to the new workers
sed -i 's/^log: {format: json, file: agent.log}$/log: {format: text, file: agent.log}/' "$GA_CONF"
grep -q 'format: text' "$GA_CONF" || bail "cannot edit log: in $GA_CONF"
kill -HUP "$GA_PID"
check "SIGHUP: the reload is logged as text" \
    wait_until 5000 grep -q ' gemini-agent\[[0-9]*\]: info: configuration reloaded$' "$LOGF"
req GET /api/agent/after-reload
check "SIGHUP: the new workers write text access lines" \
    wait_until 3000 grep -q ': info: access id=[0-9a-f]* method=GET route=/api/agent/after-reload status=404 ' "$LOGF"

canary_checks
finish
