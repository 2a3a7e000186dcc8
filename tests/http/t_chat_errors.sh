#!/bin/bash
# t_chat_errors.sh - the chat routes when Gemini fails or answers oddly,
# through nginx + the responder + the mock Gemini server: retries (429 then
# success, 503 three times, honouring RetryInfo and Retry-After, never past
# the deadline), the error mapping (upstream_auth / _rejected /
# _rate_limited / _unavailable / _timeout / _bad_response), timeouts,
# dropped connections, malformed function calls, blocked and truncated
# answers. Each check counts the requests the mock received. Visitors get
# our own messages: Gemini's text and the settings file go to the log
# only, and an upstream's Retry-After is clamped to 60 s. The canary key
# must appear nowhere but in x-goog-api-key.
source "$(dirname "${BASH_SOURCE[0]}")/chat_lib.sh"

start_mock
# Stack A: a deadline long enough for every retry (2 back-offs of 1 s); one
# worker, so the connection state before each request is known.
# hand-written histories (history.verify: off; t_seal.sh tests the default)
start_stack --mock --workers 1 --api-key "$CANARY" --yaml "history: {verify: off}" --limits "{$CHAT_LIMITS, geminiTimeoutMs: 20000}"

# err_case SCENARIO STATUS CODE CALLS LABEL: sendMessage with the scenario,
# then the status, the error envelope and the number of upstream calls.
err_case() {
    mock_reset
    chat_send "[[mock:$1]] hello"
    assert_error "$2" "$3" "$5"
    assert_calls "$4" "$5: $4 upstream call(s)"
    assert_body_lacks "$CANARY" "$5: the key is not in the message"
    assert_visitor_message "$5"
}

# ---------------------------------------------------------------------------
# 9. 429, then success: one retry, after the RetryInfo delay (1 s)

mock_reset
chat_send "[[mock:retry-then-ok status=429 times=1]] hello"
assert_py "429 then success" <<'EOF'
status ==> 200
r['type'] ==> 'response'
r['message'] ==> 'Hello from the mock.'
exactly 2 upstream calls :: len(reqs) ==> 2
the same request again :: reqs[1]['body'] ==> reqs[0]['body']
[q['status'] for q in reqs] ==> [429, 200]
EOF
assert_elapsed 950 5000 "429 then success: waited the RetryInfo delay (1 s)"

# An array-wrapped (Vertex-style) 429 without RetryInfo but with
# Retry-After: 2 is retried after 2 s, not after the 0.5 s back-off.
mock_reset
chat_send "[[mock:retry-then-ok times=1 fixture=e429-resource-exhausted-vertex-style header=1 retry=2s]] hello"
assert_status 200 "array-wrapped 429 with Retry-After: 2, then success"
assert_calls 2 "array-wrapped 429 with Retry-After: 2, then success: 2 upstream calls"
assert_elapsed 1900 6000 "array-wrapped 429 with Retry-After: 2, then success: waited 2 s"

# ---------------------------------------------------------------------------
# 10. 503 three times: two retries, then upstream_unavailable

err_case "error status=503" 503 upstream_unavailable 3 "503 three times"
assert_body_contains "3 attempts" "503 three times: the message says how often it tried"
assert_body_lacks "high demand" "503 three times: Gemini's message is not passed on"
assert_log_has "experiencing high demand" "503 three times: Gemini's message is in the log"

# ---------------------------------------------------------------------------
# 11. Refusals: 401/403 upstream_auth, 429 rate limited, 400 rejected, 404

err_case "error status=403" 502 upstream_auth 1 "403"
assert_py "403: the message" <<'EOF'
says the site owner must check the key :: 'site owner' in r['error']['message'] and 'key' in r['error']['message'].lower()
names no settings file :: '.gemini.yaml' not in r['error']['message']
E['CANARY'] not in body
EOF
assert_body_lacks "unregistered callers" "403: Gemini's message is not passed on"
assert_log_has "unregistered callers" "403: Gemini's message is in the log"
assert_log_has "check apiKey in $ST_DIR/.gemini.yaml or GEMINI_API_KEY" \
    "403: the log names the settings file"
err_case "error status=401" 502 upstream_auth 1 "401"
# The array-wrapped 400 of an invalid key (ErrorInfo API_KEY_INVALID).
err_case "error fixture=e400-api-key-invalid.array-wrapped" 502 upstream_auth 1 "array-wrapped 400 API_KEY_INVALID"

# 429 every time: two retries after RetryInfo's 1 s, then 503 with Retry-After.
err_case "error status=429" 503 upstream_rate_limited 3 "429 forever"
assert_py "429 forever" <<'EOF'
a Retry-After header in whole seconds :: re.fullmatch(r'[1-9][0-9]*', hdr('Retry-After') or '') is not None
EOF
assert_elapsed 1900 8000 "429 forever: waited RetryInfo's 1 s before each retry"
# A retryDelay that cannot fit in the deadline (30 s > 20 s): no retry,
# and the client is told to come back in 30 s.
err_case "error status=429 retry=30s" 503 upstream_rate_limited 1 "429 with retryDelay 30s"
assert_header Retry-After 30 "429 with retryDelay 30s: Retry-After: 30"
assert_fast 1500 "429 with retryDelay 30s: answered at once"
assert_body_lacks "exceeded your current quota" "429: Gemini's message is not passed on"
assert_log_has "exceeded your current quota" "429: Gemini's message is in the log"
# A broken or hostile upstream asking for 99999 s, in RetryInfo or in
# Retry-After: the visitor is told 60 s (GEMINI_RETRY_HINT_MAX_MS), and
# as 60 s do not fit in the 20 s deadline, nothing is retried.
err_case "error status=429 retry=99999s" 503 upstream_rate_limited 1 "429 with retryDelay 99999s"
assert_header Retry-After 60 "429 with retryDelay 99999s: clamped to Retry-After: 60"
assert_body_contains "try again in 60 s" "429 with retryDelay 99999s: the message says 60 s"
assert_fast 1500 "429 with retryDelay 99999s: answered at once"
err_case "error fixture=e429-resource-exhausted-vertex-style header=1 retry=99999s" \
    503 upstream_rate_limited 1 "429 with Retry-After: 99999"
assert_header Retry-After 60 "429 with Retry-After: 99999: clamped to Retry-After: 60"
assert_fast 1500 "429 with Retry-After: 99999: answered at once"
assert_log_has "asked to wait 99999 s; waiting at most 60 s" "429 asking for 99999 s: the log says so"

err_case "error status=400" 502 upstream_rejected 1 "400"
assert_body_contains "HTTP 400" "400: our message names the status"
assert_body_lacks "Invalid JSON payload received" "400: Gemini's message is not passed on"
assert_log_has "Invalid JSON payload received" "400: Gemini's message is in the log"
err_case "error status=404" 502 upstream_rejected 1 "404"
assert_body_contains "gemini-2.5-flash" "404: the message names the model"
assert_body_lacks "is not found for API version" "404: Gemini's message is not passed on"
assert_log_has "set model in $ST_DIR/.gemini.yaml" "404: the log names the settings file"

# ---------------------------------------------------------------------------
# 12. Bad bodies and broken connections

err_case "html status=200" 502 upstream_bad_response 1 "HTML page with 200"
# A 502 from Google's front end (HTML) is a gateway error: retried, then
# reported as unavailable (docs/internals/gemini-wire.md §11: 502 is retried).
err_case "html" 503 upstream_unavailable 3 "HTML page with 502"
err_case "truncated" 502 upstream_bad_response 1 "truncated JSON"
err_case "no-candidates" 502 upstream_bad_response 1 "no candidates"
# A dropped connection (no answer at all) is retried, at most twice, then
# reported as unavailable. Sent on a warm keep-alive connection, as the
# first attempt usually is.
mock_reset
chat_send "[[mock:text]] warm up the connection"
err_case "drop" 503 upstream_unavailable 3 "connection dropped"
assert_body_contains "3 attempts" "connection dropped: the message says how often it tried"
assert_py "connection dropped: what the mock saw" <<'EOF'
at most 3 POSTs reach Gemini (2 retries) :: [q['status'] for q in reqs] ==> [0, 0, 0]
EOF

# ---------------------------------------------------------------------------
# 13. MALFORMED_FUNCTION_CALL: retried once, then a clear error

mock_reset
chat_send "[[mock:malformed times=1]] hello"
assert_py "malformed once" <<'EOF'
status ==> 200
r['type'] ==> 'response'
r['message'] ==> 'Hello from the mock.'
exactly 2 upstream calls :: len(reqs) ==> 2
r['usage']['geminiCalls'] ==> 2
the malformed turn is not in history :: [t['role'] for t in r['history']] ==> ['user', 'model']
the retry sent the same contents :: reqs[1]['body']['contents'] ==> reqs[0]['body']['contents']
EOF
# A malformed turn that carries a call: the call is not run or handed out.
mock_reset
chat_send "[[mock:malformed times=1 withcall=1]] hello"
assert_py "malformed once, with a call in it" <<'EOF'
status ==> 200
r['type'] ==> 'response'
has(r, 'calls') ==> False
len(reqs) ==> 2
[t['role'] for t in r['history']] ==> ['user', 'model']
EOF
mock_reset
chat_send "[[mock:unexpected-tool-call times=1]] hello"
assert_py "UNEXPECTED_TOOL_CALL once" <<'EOF'
status ==> 200
r['type'] ==> 'response'
len(reqs) ==> 2
EOF
err_case "malformed times=5" 502 upstream_bad_response 2 "malformed every time"
assert_body_contains "invalid function call" "malformed every time: a clear message"

# ---------------------------------------------------------------------------
# 14. Blocked prompts, safety stops, truncated answers

SENT='[{"role":"user","parts":[{"text":"[[mock:blocked]] hi"}]},{"role":"model","parts":[{"text":"Hello!"}]}]'
save_json sentb "$SENT"
mock_reset
chat_send "Say something terrible" "$SENT"
assert_py "blocked prompt" <<'EOF'
status ==> 200
r['type'] ==> 'blocked'
a readable message :: isinstance(r['message'], str) and len(r['message']) > 20 and 'SAFETY' in r['message']
the blocked message is not in history :: r['history'] ==> S['sentb']
has(r, 'calls') ==> False
len(reqs) ==> 1
EOF
for sc in safety recitation; do
    mock_reset
    chat_send "[[mock:$sc]] Recite the lyrics"
    assert_py "finishReason $sc" <<'EOF'
status ==> 200
r['type'] ==> 'blocked'
isinstance(r['message'], str) and len(r['message']) > 20
the blocked message is not in history :: r['history'] ==> []
len(reqs) ==> 1
EOF
done

mock_reset
chat_send "[[mock:max-tokens]] Why is the sky blue?"
assert_py "MAX_TOKENS" <<'EOF'
status ==> 200
r['type'] ==> 'response'
r['truncated'] ==> True
the text so far :: r['message'] ==> 'The sky is blue because of Rayleigh scattering: sunlight is made of all colours, and the short blue wavelengths are scattered by the molecules of the'
[t['role'] for t in r['history']] ==> ['user', 'model']
EOF

# Thought-only and empty answers: handled, and never sent back as empty
# parts (the mock refuses those): the conversation goes on.
for sc in thought-only empty-parts "empty-parts form=empty"; do
    export SC=$sc
    mock_reset
    chat_send "[[mock:$sc]] Think about it"
    save_res odd
    assert_py "answer $sc" <<'EOF'
status ==> 200
r['type'] ==> 'response'
isinstance(r['message'], str) and r['message'] != ''
no empty parts in history :: all(t['parts'] and all(p not in ({}, {'text': ''}) for p in t['parts']) for t in r['history'])
EOF
    chat_next "Go on"
    assert_py "answer $sc, then another message" <<'EOF'
status ==> 200
r['type'] ==> 'response'
len(reqs) ==> 2
reqs[1]['body']['contents'][:len(S['odd']['history'])] ==> S['odd']['history']
EOF
done

# ---------------------------------------------------------------------------
# 12. Timeouts: stack B with geminiTimeoutMs 2000

stop_stack
start_stack --mock --workers 1 --api-key "$CANARY" --limits "{$CHAT_LIMITS, geminiTimeoutMs: 2000}"

err_case "slow ms=5000" 504 upstream_timeout 1 "slow reply (5 s, deadline 2 s)"
assert_elapsed 1500 4000 "slow reply: answered in about 2 s"
err_case "stall ms=5000" 504 upstream_timeout 1 "stalled reply (deadline 2 s)"
assert_elapsed 1500 4000 "stalled reply: answered in about 2 s"
# Retries stay inside the deadline: 429 with a 1 s delay fits one retry.
err_case "error status=429 retry=1s" 503 upstream_rate_limited 2 "429 forever, deadline 2 s"
assert_elapsed 900 2600 "429 forever, deadline 2 s: never past the deadline"
# After all that, the worker still answers.
mock_reset
chat_send "[[mock:text]] still there?"
assert_status 200 "after the timeouts: a normal answer"

# ---------------------------------------------------------------------------
# 11. A model Gemini does not know (a retired one): the message names it.

stop_stack
start_stack --mock --workers 1 --api-key "$CANARY" --model gemini-2.0-flash --limits "{$CHAT_LIMITS}"
err_case "text" 502 upstream_rejected 1 "unknown model gemini-2.0-flash"
assert_body_contains "gemini-2.0-flash" "unknown model: the message names it"
assert_py "unknown model: the request" <<'EOF'
reqs[0]['path'] ==> '/v1beta/models/gemini-2.0-flash:generateContent'
reqs[0]['status'] ==> 404
EOF

canary_checks
finish
