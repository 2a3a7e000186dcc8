#!/bin/bash
# t_budget.sh - the budget (docs/configuration.md "Budget") through nginx +
# the responder + the mock Gemini server: exhaustion by client address
# (the third request is 429 with Retry-After and never reaches Gemini, a
# stream too), X-Forwarded-For believed only from a trusted proxy, by user
# (the run API) and by the site's tokens a day; settle with the real usage
# (thoughts included), seen in GET /_jay/status; the loop's gate refusing
# a step mid-request (its stream ends with the error line); the bound on
# the bytes a request sends upstream; fail closed when the store cannot
# be opened or is busy; the status route off by default, forbidden to
# other addresses. A canary API key must be in no answer and no log.
source "$(dirname "${BASH_SOURCE[0]}")/chat_lib.sh"

STATUS=/_jay/status
# Small bodies: a short message, no page tools, no page state. Gemini (the
# mock) reports 500 thinking tokens and 70 of tool-use prompt.
BODY_TEXT='{"message":"[[mock:text thoughts=500 tooluse=70]] hello","history":[]}'

# fresh_minute: the requests-per-minute checks need their few requests in
# one fixed minute: past second 40 of this one, wait for the next.
fresh_minute() {
    local s=$(($(date +%s) % 60))
    [ "$s" -le 40 ] || sleep $((61 - s))
}

# not_near_midnight: the tokens-a-day checks need one UTC day.
not_near_midnight() {
    local s=$(($(date +%s) % 86400))
    [ "$s" -le $((86400 - 30)) ] || sleep $((86400 - s + 1))
}

# assert_retry_after MIN MAX [LABEL]: one Retry-After header, an integer
# of seconds in MIN..MAX.
assert_retry_after() {
    local min=$1 max=$2 label=${3:-"$RES_DESC: Retry-After in $1..$2"} got
    got=$(header_get Retry-After)
    if [[ $got =~ ^[0-9]+$ ]] && [ "$got" -ge "$min" ] && [ "$got" -le "$max" ]; then
        ok "$label"
    else
        not_ok "$label" "got '$got'"
    fi
}

# send [CURL_ARGS...]: sendMessage with BODY_TEXT.
send() {
    req POST "$SEND" "$BODY_TEXT" "$@"
}

# stream_send BODY [CURL_ARGS...]: the same, asking for NDJSON; the raw
# answer in RES_BODY.
stream_send() {
    local body=$1
    shift
    req POST "$SEND" "$body" -H 'Accept: application/x-ndjson' "$@"
}

start_mock

# ---------------------------------------------------------------------------
# 1. By client address: two requests a minute. The status route for
#    127.0.0.1 only.

start_stack --mock --workers 2 --api-key "$CANARY" \
    --limits "{$CHAT_LIMITS, maxOutputTokens: 1000}" \
    --yaml "budget: {perIp: {requestsPerMinute: 2}}
http: {status: {allow: [127.0.0.1]}}"

# check says what it is configured with
ga_run check --config "$GA_CONF"
for want in "budget.perIp: 2 requests a minute, unlimited tokens" \
    "budget.perUser: unlimited requests, unlimited tokens" \
    "budget.site: unlimited requests, unlimited tokens" \
    "budget.trustForwardedFor: none (the client is REMOTE_ADDR)" \
    "limits: maxOutputTokens 1000, maxLoopSteps 8, maxCallsPerTurn 16, maxUpstreamBytes 4194304" \
    "http.status: GET /_jay/status, from http.status.allow"; do
    if grep -qxF -- "$want" <<<"$out"; then ok "check prints '$want'"; else not_ok "check prints '$want'" "$out"; fi
done

fresh_minute
not_near_midnight
mock_reset
send
assert_status 200 "by address: the first request is answered"
save_res ip1
send -H 'X-Forwarded-For: 198.51.100.7'
assert_status 200 "by address: the second too"
save_res ip2
send -H 'X-Forwarded-For: 198.51.100.8'
assert_error 429 budget_exhausted "by address: the third in the minute"
assert_retry_after 1 60
assert_body_contains "your address made its 2 requests"
assert_calls 2 "by address: the refused request never reached Gemini"
# a header the client writes changes nothing: no proxy is trusted
send -H 'X-Forwarded-For: 203.0.113.99'
assert_error 429 budget_exhausted "by address: another X-Forwarded-For is still the same client"
# a stream refused before it starts is the plain 429, not a 200 stream
stream_send "$BODY_TEXT"
assert_error 429 budget_exhausted "by address: a stream is refused with the status"
assert_retry_after 1 60 "by address: ... and its Retry-After"
assert_calls 2 "by address: still two upstream calls"

# settled: the counters hold what Gemini reported (thoughts and tool-use
# prompt included), not what was reserved
req GET "$STATUS"
assert_status 200 "status: answered to 127.0.0.1"
assert_json_headers "status"
assert_py "status after two requests" <<'EOF'
sorted(r) ==> ['budget', 'limits', 'workers']
r['budget']['perIp'] ==> {'requestsPerMinute': 2, 'tokensPerDay': None}
unlimited is null :: r['budget']['perUser'] ==> {'requestsPerMinute': None, 'tokensPerDay': None}
r['budget']['site'] ==> {'requestsPerMinute': None, 'tokensPerDay': None}
refused requests are not counted :: r['budget']['used']['site']['requests'] ==> 2
(u1 := S['ip1']['usage'])['thoughtsTokens'] ==> 500
(u2 := S['ip2']['usage'])['thoughtsTokens'] ==> 500
settled with the real usage, thoughts and tool-use prompt included :: r['budget']['used']['site']['tokens'] ==> sum(u['promptTokens'] + u['candidatesTokens'] + u['thoughtsTokens'] + 70 for u in (u1, u2))
... which is Gemini's total :: r['budget']['used']['site']['tokens'] ==> u1['totalTokens'] + u2['totalTokens']
the top counters, most tokens first :: [(t['scope'], t['requests'], t['tokens']) for t in r['budget']['used']['top']] ==> [('ip:127.0.0.1', 2, r['budget']['used']['site']['tokens']), ('site', 2, r['budget']['used']['site']['tokens'])]
r['limits'] ==> {'maxOutputTokens': 1000, 'maxLoopSteps': 8, 'maxCallsPerTurn': 16, 'maxUpstreamBytes': 4194304, 'maxBodyBytes': 1048576}
two workers of 128 threads :: r['workers']['total'] ==> 256
this request is one of the busy ones :: 1 <= r['workers']['busy'] <= 256
no key, no path :: [k for k in ('key', '/', 'sqlite') if k in json.dumps(r)] ==> []
EOF
# the status route is not for other addresses (straight over FastCGI,
# where the client address is ours to choose)
fcgi_req GET "$STATUS" '' REMOTE_ADDR=192.0.2.50
assert_error 403 forbidden "status: another address is refused"
fcgi_req GET "$STATUS" '' REMOTE_ADDR=192.0.2.50 HTTP_X_FORWARDED_FOR=127.0.0.1
assert_error 403 forbidden "status: ... whatever X-Forwarded-For it sends"
# over FastCGI another address is another client, with a budget of its own
mock_reset
fcgi_req POST "$SEND" "$BODY_TEXT" REMOTE_ADDR=192.0.2.50 HTTP_X_FORWARDED_FOR=127.0.0.1
assert_status 200 "by address: another REMOTE_ADDR has its own budget"
assert_calls 1 "by address: ... and reaches Gemini"
stop_stack

# ---------------------------------------------------------------------------
# 2. X-Forwarded-For, from a trusted proxy only. Here curl plays the proxy
#    in front of nginx: REMOTE_ADDR is 127.0.0.1, which the config trusts.

start_stack --mock --workers 1 --api-key "$CANARY" --limits "{$CHAT_LIMITS}" \
    --yaml "budget: {perIp: {requestsPerMinute: 2}, trustForwardedFor: [127.0.0.1]}
http: {status: {allow: [127.0.0.1, 192.0.2.60]}}"
fresh_minute
mock_reset
send -H 'X-Forwarded-For: 198.51.100.1'
assert_status 200 "trusted proxy: client 198.51.100.1, first request"
send -H 'X-Forwarded-For: 198.51.100.1'
assert_status 200 "trusted proxy: client 198.51.100.1, second request"
send -H 'X-Forwarded-For: 198.51.100.1'
assert_error 429 budget_exhausted "trusted proxy: client 198.51.100.1, third request"
send -H 'X-Forwarded-For: 203.0.113.5, 198.51.100.1'
assert_error 429 budget_exhausted "trusted proxy: an address the client put in front changes nothing"
send -H 'X-Forwarded-For: 198.51.100.2'
assert_status 200 "trusted proxy: another client has a budget of its own"
send -H 'X-Forwarded-For: 198.51.100.2, 127.0.0.1'
assert_status 200 "trusted proxy: a trusted hop on the right is skipped"
assert_calls 4 "trusted proxy: the refused requests never reached Gemini"
# the status sees the clients, and refuses a client that is not listed
send -H 'X-Forwarded-For: 198.51.100.3'
req GET "$STATUS" '' -H 'X-Forwarded-For: 198.51.100.9'
assert_error 403 forbidden "status: a client behind the trusted proxy that is not listed"
req GET "$STATUS" '' -H 'X-Forwarded-For: 192.0.2.60'
assert_status 200 "status: a listed client behind the trusted proxy"
assert_py "status: the clients counted" <<'EOF'
(top := {t['scope']: t['requests'] for t in r['budget']['used']['top']})['ip:198.51.100.1'] ==> 2
top['ip:198.51.100.2'] ==> 2
top['ip:198.51.100.3'] ==> 1
the proxy itself is nobody's budget :: 'ip:127.0.0.1' in top ==> False
top['site'] ==> 5
EOF
# a REMOTE_ADDR that is not trusted: its X-Forwarded-For is ignored
fcgi_req POST "$SEND" "$BODY_TEXT" REMOTE_ADDR=192.0.2.77 HTTP_X_FORWARDED_FOR=198.51.100.1
assert_status 200 "untrusted REMOTE_ADDR: counted as itself, not as the header's 198.51.100.1"
req GET "$STATUS" '' -H 'X-Forwarded-For: 192.0.2.60'
assert_py "status: the untrusted sender counted as itself" <<'EOF'
(top := {t['scope']: t['requests'] for t in r['budget']['used']['top']})['ip:192.0.2.77'] ==> 1
top['ip:198.51.100.1'] ==> 2
EOF
stop_stack

# ---------------------------------------------------------------------------
# 3. By user: the run API, two runs a minute per user (and a generous
#    per-address ceiling, counted too).

start_stack --mock --workers 1 --api-key "$CANARY" --auth --limits "{$CHAT_LIMITS}" \
    --yaml "budget: {perUser: {requestsPerMinute: 2}, perIp: {requestsPerMinute: 100}}
http: {status: {allow: [127.0.0.1]}}"
ga_run auth issue --user ann --config "$GA_CONF"
ANN=$out
ga_run auth issue --user bob --config "$GA_CONF"
BOB=$out
[ -n "$ANN" ] && [ -n "$BOB" ] || bail "auth issue failed: $err"
fresh_minute
mock_reset
for i in 1 2; do
    req POST /api/agent/run "{\"prompt\":\"[[mock:text]] run $i\"}" -H "Authorization: Bearer $ANN"
    assert_status 200 "by user: ann's run $i"
done
req POST /api/agent/run '{"prompt":"[[mock:text]] run 3"}' -H "Authorization: Bearer $ANN"
assert_error 429 budget_exhausted "by user: ann's third run in the minute"
assert_retry_after 1 60
assert_body_contains "your account made its 2 requests"
req POST /api/agent/run/stream '{"prompt":"[[mock:text]] run 4"}' -H "Authorization: Bearer $ANN"
assert_error 429 budget_exhausted "by user: ... and her streamed run"
assert_calls 2 "by user: the refused runs never reached Gemini"
req GET /api/agent/threads '' -H "Authorization: Bearer $ANN"
assert_json 'len(j["threads"])' 2 "by user: a refused run leaves nothing in the store"
req POST /api/agent/run '{"prompt":"[[mock:text]] bob here"}' -H "Authorization: Bearer $BOB"
assert_status 200 "by user: bob has a budget of his own"
assert_calls 3 "by user: bob's run reached Gemini"
req GET "$STATUS"
assert_py "status: users and the address counted" <<'EOF'
(top := {t['scope']: t['requests'] for t in r['budget']['used']['top']})['user:ann'] ==> 2
top['user:bob'] ==> 1
top['ip:127.0.0.1'] ==> 3
r['budget']['perUser'] ==> {'requestsPerMinute': 2, 'tokensPerDay': None}
EOF
stop_stack

# ---------------------------------------------------------------------------
# 4. The site's tokens a day. Each answer thinks 4000 tokens; the day has
#    6000, and a request reserves its bytes / 4 + maxOutputTokens (1000):
#    the first passes and settles at its real use (over 4000), so the
#    second's reservation no longer fits.

start_stack --mock --workers 1 --api-key "$CANARY" \
    --limits "{$CHAT_LIMITS, maxOutputTokens: 1000}" \
    --yaml "budget: {site: {tokensPerDay: 6000}}
http: {status: {allow: [127.0.0.1]}}"
not_near_midnight
mock_reset
req POST "$SEND" '{"message":"[[mock:text thoughts=4000]] think hard","history":[]}'
assert_status 200 "site tokens: the first request"
save_res site1
req GET "$STATUS"
assert_py "site tokens: settled with the real usage" <<'EOF'
(u := S['site1']['usage'])['thoughtsTokens'] ==> 4000
r['budget']['used']['site']['tokens'] ==> u['promptTokens'] + u['candidatesTokens'] + u['thoughtsTokens']
r['budget']['site'] ==> {'requestsPerMinute': None, 'tokensPerDay': 6000}
EOF
req POST "$SEND" '{"message":"[[mock:text]] and again","history":[]}'
assert_error 429 budget_exhausted "site tokens: the next request does not fit the day"
assert_body_contains "this site used its 6000 tokens"
export MIDNIGHT_S=$((86400 - $(date +%s) % 86400))
assert_retry_after $((MIDNIGHT_S - 5)) $((MIDNIGHT_S + 5)) "site tokens: Retry-After is the UTC midnight"
assert_calls 1 "site tokens: the refused request never reached Gemini"
stop_stack

# ---------------------------------------------------------------------------
# 5. The loop's gate: the budget sees every step. The mock's `loop` calls a
#    server action forever, each step thinking 1000 tokens; the day's 8000
#    tokens run out after a few steps, before maxLoopSteps (8).

start_stack --mock --workers 1 --api-key "$CANARY" \
    --limits "{$CHAT_LIMITS, maxOutputTokens: 1000}" \
    --yaml "budget: {perIp: {tokensPerDay: 8000}}
http: {status: {allow: [127.0.0.1]}}"
not_near_midnight
mock_reset
stream_send '{"message":"[[mock:loop thoughts=1000]] search forever","history":[]}'
assert_status 200 "gate: the stream starts (the first steps fit)"
"$PY" - "$RES_BODY" >"$T_TMP/gate.json" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
print(json.dumps({"lines": lines}))
PY
mkdir -p "$SAVED_DIR"
cp "$T_TMP/gate.json" "$SAVED_DIR/gate.json"
req GET "$STATUS"
assert_py "gate: a step refused mid-request" <<'EOF'
(ls := S['gate']['lines'])[-1]['type'] ==> 'error'
the stream ends with the budget's error line :: ls[-1]['error']['code'] ==> 'budget_exhausted'
... with when to come back :: 0 < ls[-1]['error']['retryAfter'] <= 86400
(usages := [l['usage'] for l in ls if l['type'] == 'usage']) != []
one usage line per Gemini call :: len(usages) ==> len(reqs)
some steps ran, and it stopped before maxLoopSteps :: 2 <= len(reqs) < 8
every step thought :: usages[-1]['thoughtsTokens'] ==> 1000 * len(reqs)
what the steps used is settled :: r['budget']['used']['site']['tokens'] ==> usages[-1]['promptTokens'] + usages[-1]['candidatesTokens'] + usages[-1]['thoughtsTokens']
... within the day's tokens :: r['budget']['used']['site']['tokens'] <= 8000
EOF
# the same without a stream: the plain 429 once the day is spent
mock_reset
req POST "$SEND" '{"message":"[[mock:loop thoughts=1000]] again","history":[]}'
assert_error 429 budget_exhausted "gate: the next request is refused outright"
assert_calls 0 "gate: ... and never reaches Gemini"
stop_stack

# ---------------------------------------------------------------------------
# 6. The bytes a request sends upstream: 300000 in all. A page state of
#    100 KB goes with every step of the looping scenario: two steps fit,
#    the third is not sent.

start_stack --mock --workers 1 --api-key "$CANARY" \
    --limits "{$CHAT_LIMITS, maxUpstreamBytes: 300000}"
"$PY" -c 'import json; print(json.dumps({"message": "[[mock:loop]] search forever", "history": [], "pageState": {"blob": "x" * 100000}}))' >"$T_TMP/big.json"
mock_reset
req POST "$SEND" "@$T_TMP/big.json"
assert_error 413 upstream_too_large "upstream bytes: the step past maxUpstreamBytes"
assert_body_contains "limits.maxUpstreamBytes"
assert_calls 2 "upstream bytes: two steps were sent, the third was not"
assert_py "upstream bytes: what was sent stays within the bound" <<'EOF'
sum(q['raw_len'] for q in reqs) <= 300000
every step carried the page state :: [q['raw_len'] > 100000 for q in reqs] ==> [True, True]
EOF
stop_stack

# ---------------------------------------------------------------------------
# 7. Fail closed: a store that cannot be opened, then one that is busy.
#    No answer from Gemini without a budget that can be checked. The
#    status route is off here (not configured): 404.

start_stack --mock --workers 1 --api-key "$CANARY" --limits "{$CHAT_LIMITS}" \
    --yaml "store: 'sqlite:$T_TMP/no/such/dir/agent.db'
budget: {site: {requestsPerMinute: 100}}"
mock_reset
send
assert_error 503 budget_unavailable "fail closed: the store cannot be opened"
stream_send "$BODY_TEXT"
assert_error 503 budget_unavailable "fail closed: ... a stream neither"
assert_calls 0 "fail closed: nothing reached Gemini"
req GET "$STATUS"
assert_error 404 not_found "status: off unless http.status names addresses"
stop_stack

start_stack --mock --workers 1 --api-key "$CANARY" --limits "{$CHAT_LIMITS}" \
    --yaml "budget: {site: {requestsPerMinute: 100}}"
mock_reset
send
assert_status 200 "busy store: answered while the store is free"
# another program holds the store's write lock for 12 s: the reservation
# waits its 5 s (STORE_BUSY_MS) and gives up
"$PY" - "$ST_DIR/var/agent.db" "$T_TMP/locked" <<'PY' &
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN IMMEDIATE")
open(sys.argv[2], "w").close()
time.sleep(12)
c.execute("ROLLBACK")
PY
T_BG_PIDS+=($!)
wait_until 5000 test -e "$T_TMP/locked" || bail "the lock was not taken"
mock_reset
REQ_TIMEOUT=25 send
assert_error 503 budget_unavailable "fail closed: the store is busy"
assert_calls 0 "fail closed: ... and nothing reached Gemini"
wait "${T_BG_PIDS[-1]}" 2>/dev/null
send
assert_status 200 "busy store: answered again once it is free"
stop_stack

# ---------------------------------------------------------------------------
# No budget configured: no store is made for it, and nothing is counted.

start_stack --mock --workers 1 --api-key "$CANARY" --limits "{$CHAT_LIMITS}" \
    --data-dir "$T_TMP/nobudget-var"
rm -f "$T_TMP/nobudget-var/agent.db"*
mock_reset
send
assert_status 200 "no budget: answered"
check "no budget: the chat never opened the store" test ! -e "$T_TMP/nobudget-var/agent.db"
stop_stack

canary_checks
finish
