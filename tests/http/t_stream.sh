#!/bin/bash
# t_stream.sh - streamed chat answers (Accept: application/x-ndjson) through
# nginx (the real site snippet) + the responder + the mock Gemini server:
#   a. lines reach the client as they are written (timestamped on arrival),
#      NDJSON headers, no Content-Length, X-Accel-Buffering kept by nginx,
#      never gzipped (gzip is on for everything else here), every line a
#      JSON object, the deltas are the result's message, the last line the
#      result;
#   b. without the Accept header: the one JSON answer, as before;
#   c. the result line equals the JSON answer to the same conversation, for
#      text, page calls, a server chain, parallel and mixed calls, text with
#      a call, signatures (submitToolResults streamed too), once normalised
#      (tests/http/conf/stream_reader.py normal(): serverCalls[].ms, and a
#      signed text's signature, which the stream sends on a part of its own);
#   d. a visitor who hangs up after the first delta: the Gemini connection
#      is closed within 1 s (the mock's /__mock/connections), and the
#      worker's only thread serves the next request;
#   e. heartbeats while Gemini is silent (limits.streamHeartbeatMs);
#   f. errors: before anything was streamed, the ordinary JSON error with
#      its status; after a delta, an error line last and no result; a
#      stream cut short is never a shortened result;
#   g. the same stream from the binary as a plain CGI program.
source "$(dirname "${BASH_SOURCE[0]}")/chat_lib.sh"

READER=$HTTP_DIR/conf/stream_reader.py

# chat_body FILE MESSAGE: a sendMessage body (no history, $TOOLS, $PAGE).
chat_body() {
    printf '{"message":%s,"history":[],"toolDefinitions":%s,"pageState":%s}' \
        "$(json_str "$2")" "$TOOLS" "$PAGE" >"$1"
}

# stream_post PATH BODY_FILE NAME [CURL_ARGS...]: POST through nginx with
# Accept: application/x-ndjson, read with curl -N, each line timestamped
# as it arrives (stream_reader.py lines). RES_BODY is the reader's summary
# (kept as S[NAME]), RES_HDRS the headers, RES_STATUS the status; the
# result object of the last line is kept as S[NAME_result] (null if none).
stream_post() {
    local path=$1 body=$2 name=$3
    shift 3
    mkdir -p "$SAVED_DIR"
    : >"$RES_HDRS"
    RES_DESC="stream POST $path"
    curl -sS -N --max-time "${REQ_TIMEOUT:-30}" -D "$RES_HDRS" -o - -X POST \
        -H 'Content-Type: application/json' -H 'Accept: application/x-ndjson' "$@" \
        --data-binary "@$body" "$BASE_URL$path" 2>"$T_TMP/curl.err" |
        "$PY" "$READER" lines --head "$RES_HDRS" --out "$RES_BODY" \
            --result "$SAVED_DIR/${name}_result.json"
    cp "$RES_BODY" "$SAVED_DIR/$name.json"
    RES_STATUS=$(pyjson 'j["status"]' "$RES_BODY")
    cat "$RES_HDRS" "$RES_BODY" >>"$RES_ALL" 2>/dev/null
}

# ---------------------------------------------------------------------------
# One worker, so one Gemini connection at a time; gzip switched on for every
# type in nginx's http block, as a site may well have it: the chat location's
# `gzip off` must keep the stream uncompressed (and so unbuffered).
start_mock
start_stack --mock --workers 1 --limits "{$CHAT_LIMITS}"
sed -i 's|^    include /etc/nginx/mime.types;|&\n    gzip on; gzip_min_length 1; gzip_types application/json application/x-ndjson;|' \
    "$NGX_DIR/nginx.conf"
grep -q 'gzip_types application/json application/x-ndjson;' "$NGX_DIR/nginx.conf" ||
    bail "cannot switch gzip on in $NGX_DIR/nginx.conf"
kill -HUP "$NGX_PID"
gz_on() {
    [ "$(curl -s -o /dev/null -D - -H 'Accept-Encoding: gzip' "$BASE_URL/" |
        tr -d '\r' | awk -F': ' 'tolower($1) == "content-encoding" {print $2}')" = gzip ]
}
wait_until 5000 gz_on || bail "nginx did not take the gzip settings"
ok "setup: nginx compresses answers outside the chat routes (GET / is gzipped)"

# ---------------------------------------------------------------------------
# a. NDJSON through the real nginx, as it happens

mock_reset
chat_body "$T_TMP/a.json" "[[mock:text chunks=3 gap=700]] hello"
stream_post "$SEND" "$T_TMP/a.json" sa -H 'Accept-Encoding: gzip, deflate, br'
assert_py "stream through nginx" <<'EOF'
status ==> 200
hdr('Content-Type') ==> 'application/x-ndjson; charset=utf-8'
no Content-Length :: hdr('Content-Length') ==> None
nginx keeps X-Accel-Buffering to itself :: hdr('X-Accel-Buffering') ==> None
not compressed, although the client takes gzip :: hdr('Content-Encoding') ==> None
hdr('Cache-Control') ==> 'no-store'
every line is a JSON object :: [l['raw'][:80] for l in r['lines'] if not isinstance(l['obj'], dict)] ==> []
the body ends with a newline :: r['tail'] ==> ''
(objs := [l['obj'] for l in r['lines']])[-1]['type'] ==> 'result'
one result line, the last :: [o['type'] for o in objs].count('result') ==> 1
the first line says thinking :: objs[0] ==> {'type': 'status', 'status': 'thinking'}
(deltas := [l for l in r['lines'] if l['obj']['type'] == 'delta']) != []
three chunks, three deltas :: len(deltas) ==> 3
the deltas are the message :: ''.join(d['obj']['delta'] for d in deltas) ==> objs[-1]['result']['message']
objs[-1]['result']['message'] ==> 'Hello from the mock.'
objs[-1]['result']['type'] ==> 'response'
the first delta arrives >= 1 s before the end (ms) :: min(1000, round(r['end_ms'] - deltas[0]['ms'])) ==> 1000
the deltas arrive 0.7 s apart (ms, at least 500) :: [min(500, round(b['ms'] - a['ms'])) for a, b in zip(deltas, deltas[1:])] ==> [500, 500]
(us := [o for o in objs if o['type'] == 'usage']) != []
the last usage line is the result's usage :: us[-1]['usage'] ==> objs[-1]['result']['usage']
the usage line names the model :: us[-1]['model'] ==> objs[-1]['result'].get('model')
Gemini was asked for a stream :: [q['path'].endswith(':streamGenerateContent') and q['query'].get('alt') == 'sse' for q in reqs] ==> [True]
EOF

# b. The same request without the Accept header: one JSON object, as before.
mock_reset
req POST "$SEND" "@$T_TMP/a.json"
save_res b_json
assert_json_headers "without Accept: application/x-ndjson"
assert_py "without Accept: application/x-ndjson" <<'EOF'
status ==> 200
one JSON object :: isinstance(r, dict) and body.strip().count('\n') == 0
r['type'] ==> 'response'
r['message'] ==> 'Hello from the mock.'
Gemini was asked for one answer :: [q['path'].endswith(':generateContent') for q in reqs] ==> [True]
each mints its conversation key :: r['conversation'] != S['sa_result']['conversation'] ==> True
the same answer as the stream's result :: {**r, 'conversation': 0} ==> {**S['sa_result'], 'conversation': 0}
EOF

# ---------------------------------------------------------------------------
# c. The result line is the JSON answer. Each conversation runs twice from a
#    reset mock (so ids and signatures repeat): as JSON, then streamed, each
#    step answering every page call, until a text answer.

# converse MODE MESSAGE PREFIX: MODE json or stream; S[PREFIX1], S[PREFIX2]...
# hold the answers (stream: S[PREFIXn_result] the result, S[PREFIXn] the
# lines); sets CONV_STEPS.
converse() {
    local mode=$1 msg=$2 pre=$3 path=$SEND i=1 ans
    chat_body "$T_TMP/conv.json" "$msg"
    while :; do
        if [ "$mode" = json ]; then
            req POST "$path" "@$T_TMP/conv.json"
            save_res "$pre$i"
            ans=$SAVED_DIR/$pre$i.json
        else
            stream_post "$path" "$T_TMP/conv.json" "$pre$i"
            ans=$SAVED_DIR/$pre${i}_result.json
        fi
        CONV_STEPS=$i
        [ "$(pyjson 'j["type"]' "$ans" 2>/dev/null)" = tool-calls ] && [ "$i" -lt 4 ] || break
        MJ_BODY=$ans make_json "$T_TMP/conv.json" \
            "{'results': $RESULTS_IN_ORDER, 'history': r['history'], 'signatures': r.get('signatures'), 'toolDefinitions': json.loads(E['TOOLS']), 'pageState': json.loads(E['PAGE2'])}"
        path=$SUBMIT
        i=$((i + 1))
    done
}

for scen in text page-call server-chain parallel mixed text-and-call signatures; do
    mock_reset
    converse json "[[mock:$scen]] do it" "cj_${scen}_"
    json_steps=$CONV_STEPS
    mock_reset
    converse stream "[[mock:$scen]] do it" "cs_${scen}_"
    check "$scen: as many steps streamed as in JSON ($CONV_STEPS, $json_steps)" [ "$CONV_STEPS" = "$json_steps" ]
    for i in $(seq "$json_steps"); do
        if diff=$("$PY" "$READER" same "$SAVED_DIR/cj_${scen}_$i.json" "$SAVED_DIR/cs_${scen}_${i}_result.json"); then
            ok "$scen step $i: the result line is the JSON answer (normalised)"
        else
            not_ok "$scen step $i: the result line is the JSON answer (normalised)" "$diff"
        fi
        export STEP="cs_${scen}_$i"
        RES_BODY=$SAVED_DIR/$STEP.json assert_py "$scen step $i, the lines" <<'EOF'
r['status'] ==> 200
every line is a JSON object :: [l['raw'][:80] for l in r['lines'] if not isinstance(l['obj'], dict)] ==> []
(objs := [l['obj'] for l in r['lines']])[-1]['type'] ==> 'result'
(res := objs[-1]['result']) == S[E['STEP'] + '_result']
the deltas are the message :: ''.join(o['delta'] for o in objs if o['type'] == 'delta') ==> res.get('message', '')
a server call: tool-call and tool-result lines :: [(o['name'], o['side']) for o in objs if o['type'] == 'tool-call' and o['side'] == 'server'] ==> [(s['name'], 'server') for s in res['serverCalls']]
[(o['name'], o['ok'], o['ms']) for o in objs if o['type'] == 'tool-result'] ==> [(s['name'], s['ok'], s['ms']) for s in res['serverCalls']]
a status line before each server call :: [o.get('tool') for o in objs if o['type'] == 'status' and o['status'] == 'tool' and not o.get('heartbeat')] ==> [s['name'] for s in res['serverCalls']]
page calls: tool-call lines with their ids :: [(o['name'], o.get('id'), o['args']) for o in objs if o['type'] == 'tool-call' and o['side'] == 'page'] ==> [(c['name'], c['id'], c['args']) for c in res.get('calls', [])]
waiting when calls go to the page :: any(o['type'] == 'status' and o['status'] == 'waiting' for o in objs) ==> (res['type'] == 'tool-calls')
thinking before each Gemini call :: len([o for o in objs if o['type'] == 'status' and o['status'] == 'thinking' and not o.get('heartbeat')]) ==> res['usage']['geminiCalls']
EOF
    done
done

# ---------------------------------------------------------------------------
# d. The visitor hangs up after the first delta (the upstream holds its
#    stream open after its first event): the responder's Gemini connection
#    is closed within 1 s, and the worker's only thread is free at once.

stop_stack
start_stack --mock --workers 1 --threads 1 --queue 0 --limits "{$CHAT_LIMITS}"
mock_reset
chat_body "$T_TMP/d.json" "[[mock:stall ms=60000]] hello"
"$PY" "$READER" hangup --url "$BASE_URL$SEND" --body "$T_TMP/d.json" --out "$T_TMP/d.out"
export D_OUT=$T_TMP/d.out
RES_BODY=$T_TMP/d.out assert_py "hang-up after the first delta" <<'EOF'
r['status'] ==> 200
the client read a delta :: [o['type'] for o in r['lines']][-1] ==> 'delta'
len(reqs) ==> 1
the stall was streamed :: (reqs[0]['scenario'], reqs[0]['stream']) ==> ('stall', True)
EOF
stall_conn=$(curl -s "$MOCK_URL/__mock/requests" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)[0]["conn"])')
closed_after() {
    curl -s "$MOCK_URL/__mock/connections" >"$T_TMP/conns.json" &&
        "$PY" - "$T_TMP/conns.json" "$stall_conn" "$T_TMP/d.out" 2>/dev/null <<'PY'
import json, sys
conns = {c["conn"]: c for c in json.load(open(sys.argv[1]))}
c = conns.get(int(sys.argv[2]))
if c is None or c["closed_ms"] is None:
    sys.exit(1)
print("%.0f" % (c["closed_ms"] - json.load(open(sys.argv[3]))["close_ms"]))
PY
}
wait_until 3000 closed_after >/dev/null
after=$(closed_after)
check "hang-up: the Gemini connection closed within 1 s of the visitor's (${after:-never} ms)" \
    eval '[ -n "$after" ] && [ "$after" -lt 1000 ] && [ "$after" -gt -50 ]'
sleep 0.3
chat_body "$T_TMP/d2.json" "[[mock:text]] still there?"
stream_post "$SEND" "$T_TMP/d2.json" d2
assert_py "hang-up: the next request, on the worker's only thread" <<'EOF'
status ==> 200
[l['obj']['type'] for l in r['lines']][-1] ==> 'result'
r['lines'][-1]['obj']['result']['message'] ==> 'Hello from the mock.'
EOF
assert_file_lacks "$GA_LOG" "error:" "hang-up: no error logged for it"

# ---------------------------------------------------------------------------
# f. Errors (on the stack of d: the default heartbeat, 15 s, is not due
#    during the retries, so nothing is streamed before the failure)

# Every attempt fails before anything was streamed: the ordinary JSON error.
mock_reset
chat_body "$T_TMP/f1.json" "[[mock:error]] hello"
REQ_TIMEOUT=60 req POST "$SEND" "@$T_TMP/f1.json" -H 'Accept: application/x-ndjson'
assert_error 503 upstream_unavailable "Gemini 500 on every attempt, streamed"
assert_py "Gemini 500 on every attempt, streamed" <<'EOF'
retried: 3 attempts :: len(reqs) ==> 3
EOF

# An error in the middle of Gemini's stream, after text went out.
mock_reset
chat_body "$T_TMP/f2.json" "[[mock:midstream-error]] hello"
stream_post "$SEND" "$T_TMP/f2.json" sf2
assert_py "mid-stream error" <<'EOF'
status ==> 200
every line is a JSON object :: [l['raw'][:80] for l in r['lines'] if not isinstance(l['obj'], dict)] ==> []
(types := [l['obj']['type'] for l in r['lines']])[-1] ==> 'error'
a delta went out before it :: 'delta' in types
no result line at all :: 'result' in types ==> False
(e := r['lines'][-1]['obj']['error'])['code'] in ('upstream_unavailable', 'upstream_bad_response')
isinstance(e.get('message'), str) and e['message'] != ''
EOF

# A stream that ends without a finishReason: an error, or a retried whole
# answer, never a shortened result.
mock_reset
chat_body "$T_TMP/f3.json" "[[mock:truncated]] hello"
REQ_TIMEOUT=60 stream_post "$SEND" "$T_TMP/f3.json" sf3
assert_py "stream cut short" <<'EOF'
status in (200, 502, 503, 504)
(objs := [l['obj'] for l in r['lines']] if status == 200 else [json.loads(''.join(l['raw'] for l in r['lines']) + r['tail'])]) != []
a 5xx is the JSON error envelope :: status == 200 or objs[0]['error']['code'] in ('upstream_unavailable', 'upstream_bad_response')
a stream ends with an error line or the whole answer :: status != 200 or objs[-1]['type'] == 'error' or (objs[-1]['type'] == 'result' and objs[-1]['result']['message'] == 'This reply is cut in half by the mock.')
no shortened result anywhere :: [o['result'].get('message') for o in objs if isinstance(o, dict) and o.get('type') == 'result'] in ([], ['This reply is cut in half by the mock.'])
EOF
echo "# stream cut short: status $RES_STATUS, last line: $(pyjson "j['lines'][-1]['raw'][:200] if j['lines'] else None" "$RES_BODY")"

# ---------------------------------------------------------------------------
# e. Heartbeats: Gemini silent for 5 s, limits.streamHeartbeatMs 1000 (the
#    smallest: the wait on Gemini is checked about once a second).

stop_stack
start_stack --mock --workers 1 --limits "{$CHAT_LIMITS, streamHeartbeatMs: 1000}"
mock_reset
chat_body "$T_TMP/e.json" "[[mock:slow ms=5000]] hello"
stream_post "$SEND" "$T_TMP/e.json" se
assert_py "heartbeat" <<'EOF'
status ==> 200
(objs := [l['obj'] for l in r['lines']])[-1]['type'] ==> 'result'
(first := [o['type'] for o in objs].index('delta')) > 0
(beats := [o for o in objs[:first] if o.get('heartbeat') is True]) != []
at least 3 heartbeats before the first delta :: min(3, len(beats)) ==> 3
each a status line :: [(o['type'], o['status']) for o in beats] ==> [('status', 'thinking')] * len(beats)
objs[-1]['result']['message'] ==> 'Hello from the mock.'
EOF
export BEATS=$(pyjson "[l['ms'] for l in j['lines'] if l['obj'].get('heartbeat')]" "$RES_BODY")
echo "# heartbeat lines arrived at (ms): $BEATS"

# ---------------------------------------------------------------------------
# g. The same stream from the binary as a plain CGI program (its output read
#    as it comes, through a pipe).

mock_reset
chat_body "$T_TMP/g.json" "[[mock:text chunks=3 gap=700]] hello"
mapfile -d '' -t envv < <(ga_env)
timeout -k 1 20 "${envv[@]}" GATEWAY_INTERFACE=CGI/1.1 "GEMINI_AGENT_CONFIG=$GA_CONF" \
    REQUEST_METHOD=POST CONTENT_TYPE=application/json "CONTENT_LENGTH=$(wc -c <"$T_TMP/g.json")" \
    "REQUEST_URI=$SEND" HTTP_ACCEPT=application/x-ndjson SERVER_PROTOCOL=HTTP/1.1 \
    "$GA_BIN" <"$T_TMP/g.json" 2>"$T_TMP/cgi.stderr" |
    "$PY" "$READER" lines --cgi --out "$T_TMP/g.out" --result "$SAVED_DIR/sg_result.json"
RES_BODY=$T_TMP/g.out
assert_py "CGI stream" <<'EOF'
r['status'] ==> 200
r['headers'].get('content-type') ==> 'application/x-ndjson; charset=utf-8'
no Content-Length :: r['headers'].get('content-length') ==> None
every line is a JSON object :: [l['raw'][:80] for l in r['lines'] if not isinstance(l['obj'], dict)] ==> []
(objs := [l['obj'] for l in r['lines']])[-1]['type'] ==> 'result'
(deltas := [l for l in r['lines'] if l['obj']['type'] == 'delta']) != []
''.join(d['obj']['delta'] for d in deltas) ==> objs[-1]['result']['message']
objs[-1]['result']['message'] ==> 'Hello from the mock.'
written as it happens: the first delta >= 1 s before the end (ms) :: min(1000, round(r['end_ms'] - deltas[0]['ms'])) ==> 1000
EOF

finish
