#!/bin/bash
# t_modelbounds.sh - what the model sends is bounded where it
# arrives, through nginx + the responder + the mock Gemini server. A call
# whose arguments nest 40 deep (a page tool's, a server action's) is not
# handed to the page nor run: the model reads an error saying why, the
# history keeps the call with {} for its arguments, signed as usual, and
# the visitor's next message with that history is answered (200), where
# it used to be refused with "nesting deeper than 32" for ever. A text
# answer longer than the conversation has room for (a quarter of
# maxBodyBytes) is cut, and the conversation goes on. Huge usage counts
# from Gemini are reported saturated, never wrapped.
source "$(dirname "${BASH_SOURCE[0]}")/chat_lib.sh"

VAR=$T_TMP/var
mkdir -p "$VAR"
start_mock
# history.verify on (the default): the refused call's turn must be signed
start_stack --mock --workers 1 --api-key "$CANARY" --data-dir "$VAR" \
    --limits "{$CHAT_LIMITS}" --rate 100000r/s --burst 100

# 40 levels of {"a": ...} around a 1
DEEP=1
for _ in $(seq 1 40); do DEEP="{\"a\":$DEEP}"; done
export DEEP
# depth(v): brackets of a JSON value, itself included (a Python expression)
DEPTH="(lambda v: (lambda f: f(f, v))(lambda f, x: 1 + max([f(f, y) for y in (x.values() if isinstance(x, dict) else x)] + [0]) if isinstance(x, (dict, list)) else 0))"

# ---------------------------------------------------------------------------
# a page tool's call 40 deep: answered with an error, never handed back

mock_reset
chat_send "[[mock:page-call tool=click-remove-btn args='$DEEP']] remove the hub"
save_res deep1
assert_py "page call 40 deep" <<EOF
status ==> 200
r['type'] ==> 'response'
not handed to the page :: has(r, 'calls') ==> False
the model was asked again :: len(reqs) ==> 2
the model read why :: 'nest deeper than' in json.dumps(fresp(reqs[1])[0]['response']) ==> True
the answer quotes the error :: r['message'].startswith('Done: {"error"') ==> True
the call is kept with {} :: fcalls(r['history'][1])[0]['args'] ==> {}
its name and id kept :: (fcalls(r['history'][1])[0]['name'], fresp(reqs[1])[0]['id'] == fcalls(r['history'][1])[0]['id']) ==> ('click-remove-btn', True)
its signature kept :: len(sigs(r['history'][1:2])) ==> 1
no value as deep in the history :: $DEPTH(r['history']) + 1 <= 32 ==> True
nothing 40 deep sent back to Gemini :: $DEPTH(reqs[1]['body']['contents']) + 1 <= 32 ==> True
every turn signed or the visitor's :: len(r['signatures']) == len(r['history']) ==> True
EOF

mock_reset
chat_next "go on" deep1
assert_py "the conversation goes on" <<'EOF'
status ==> 200
r['type'] ==> 'response'
the mock's scenario again: refused, then answered :: r['message'].startswith('Done: {"error"') ==> True
Gemini read the whole history :: len(reqs[0]['body']['contents']) ==> 5
the history grew :: len(r['history']) ==> 8
EOF

# ---------------------------------------------------------------------------
# a server action's call 40 deep: not run, no approval asked

mock_reset
chat_send "[[mock:server-call tool=action_shop_searchProducts args='$DEEP']] search"
save_res deep2
assert_py "server call 40 deep" <<EOF
status ==> 200
r['type'] ==> 'response'
not run :: r['serverCalls'] ==> []
no approval :: has(r, 'approval') ==> False
the model read why :: 'nest deeper than' in json.dumps(fresp(reqs[1])[0]['response']) ==> True
no value as deep in the history :: $DEPTH(r['history']) + 1 <= 32 ==> True
EOF
mock_reset
chat_next "and now" deep2
assert_py "server call 40 deep: the conversation goes on" <<'EOF'
status ==> 200
r['type'] ==> 'response'
r['message'].startswith('Done: ') ==> True
EOF

# at the bound: 26 levels of arguments are kept as they came, and go back
ARGS26=1
for _ in $(seq 1 26); do ARGS26="{\"a\":$ARGS26}"; done
mock_reset
chat_send "[[mock:page-call tool=toggle-dark-mode args='$ARGS26']] at the bound"
save_res edge
assert_py "arguments 26 deep" <<EOF
status ==> 200
r['type'] ==> 'tool-calls'
handed to the page whole :: $DEPTH(r['calls'][0]['args']) ==> 26
the history at the request bound :: $DEPTH(r['history']) + 1 ==> 32
EOF
mock_reset
chat_submit "[{'callId': c['id'], 'result': 'ok', 'isError': False} for c in r['calls']]" edge
assert_py "arguments 26 deep: results accepted" <<'EOF'
status ==> 200
r['type'] ==> 'response'
EOF

# a page result 30 deep (it came inside the request's 32 levels, but the
# history holds it deeper): the model reads that it is not kept, and the
# next request is taken
mock_reset
chat_send "[[mock:page-call tool=toggle-dark-mode]] dark please"
save_res pr
mock_reset
chat_submit "[{'callId': c['id'], 'result': json.dumps(json.loads('{\"a\":' * 30 + '1' + '}' * 30)), 'isError': False} for c in r['calls']]" pr
save_res pr2
assert_py "a page result 30 deep" <<EOF
status ==> 200
r['type'] ==> 'response'
the model read why :: 'nests deeper than' in json.dumps(fresp(reqs[0])[0]['response']) ==> True
no value as deep in the history :: $DEPTH(r['history']) + 1 <= 32 ==> True
EOF
mock_reset
chat_next "next" pr2
assert_py "a page result 30 deep: the conversation goes on" <<'EOF'
status ==> 200
EOF

# ---------------------------------------------------------------------------
# streamed: the same bounds, and the streamed history goes on as JSON

chat_body() {
    printf '{"message":%s,"history":[],"toolDefinitions":%s,"pageState":%s}' \
        "$(json_str "$2")" "$TOOLS" "$PAGE" >"$1"
}
mock_reset
chat_body "$T_TMP/s.json" "[[mock:page-call tool=click-remove-btn args='$DEEP']] streamed"
req POST "$SEND" "@$T_TMP/s.json" -H 'Accept: application/x-ndjson'
# the result line, as the JSON answer it carries
save_json sdeep "$("$PY" -c 'import json,sys; print(json.dumps(json.loads(open(sys.argv[1]).read().splitlines()[-1])["result"]))' "$RES_BODY")"
assert_py "streamed page call 40 deep" <<EOF
status ==> 200
(res := json.loads(body.splitlines()[-1])['result'])['type'] ==> 'response'
the model read why :: 'nest deeper than' in json.dumps(fresp(reqs[1])[0]['response']) ==> True
no value as deep in the history :: $DEPTH(res['history']) + 1 <= 32 ==> True
EOF
mock_reset
chat_next "go on" sdeep
assert_py "streamed: the conversation goes on" <<'EOF'
status ==> 200
r['type'] ==> 'response'
EOF

# ---------------------------------------------------------------------------
# huge counts from Gemini: taken as they are up to LONG_MAX, never wrapped
# negative; a count past int64 (the mock's total of these) is a clear
# error, plain and streamed

mock_reset
chat_send "[[mock:text thoughts=9223372036854770000]] count"
assert_py "huge counts" <<'EOF'
status ==> 200
r['usage']['thoughtsTokens'] ==> 9223372036854770000
no count is negative :: [k for k, v in r['usage'].items() if v < 0] ==> []
the total as Gemini said, below LONG_MAX :: 9223372036854770000 < r['usage']['totalTokens'] <= 9223372036854775807 ==> True
EOF
mock_reset
chat_body "$T_TMP/h.json" "[[mock:text thoughts=9223372036854770000]] count"
req POST "$SEND" "@$T_TMP/h.json" -H 'Accept: application/x-ndjson'
assert_py "huge counts, streamed" <<'EOF'
status ==> 200
(u := json.loads(body.splitlines()[-1])['result']['usage'])['thoughtsTokens'] ==> 9223372036854770000
no count is negative :: [k for k, v in u.items() if v < 0] ==> []
EOF
mock_reset
chat_send "[[mock:text thoughts=9223372036854770000 tooluse=9000]] count"
assert_error 502 upstream_bad_response "a count past int64"
mock_reset
chat_body "$T_TMP/h.json" "[[mock:text thoughts=9223372036854770000 tooluse=9000]] count"
req POST "$SEND" "@$T_TMP/h.json" -H 'Accept: application/x-ndjson'
assert_error 503 upstream_unavailable "a count past int64, streamed"

# ---------------------------------------------------------------------------
# a text longer than a quarter of maxBodyBytes: cut, and the next request fits

stop_stack
start_stack --mock --workers 1 --api-key "$CANARY" --data-dir "$VAR" \
    --limits "{maxBodyBytes: 16384}" --rate 100000r/s --burst 100
LONG=$(head -c 9000 /dev/zero | tr '\0' 'x')
mock_reset
chat_send "[[mock:text say=$LONG]] talk" '[]' '[]' '{}'
save_res long1
assert_py "a long answer" <<'EOF'
status ==> 200
r['type'] ==> 'response'
cut at a quarter of 16384 :: 3900 < len(r['message'].encode()) <= 4096 ==> True
marked as cut :: r['message'].endswith('\u2026') ==> True
the history keeps the cut text :: r['history'][1]['parts'][0]['text'] == r['message'] ==> True
EOF
export TOOLS='[]' PAGE2='{}'
mock_reset
chat_next "more" long1
assert_py "a long answer: the conversation goes on" <<'EOF'
status ==> 200
r['type'] ==> 'response'
cut again :: r['message'].endswith('\u2026') ==> True
EOF

canary_checks
finish
