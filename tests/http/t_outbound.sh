#!/bin/bash
# t_outbound.sh - the outbound policy (src/plugins/outbound.h) end to end
# through nginx + the responder + the mock Gemini server: the red team's
# SSRF, where a reference URL the owner configured answers 302 to an
# internal service on loopback and a visitor types @api.
#
# 127.0.0.2 plays the public docs host (outbound.allow: [127.0.0.2/32]),
# a tests/mock/search_mock.py there; 127.0.0.1 plays the internal
# metadata service, another search_mock whose /doc/NAME pages are the
# internal answers (Linux routes all of 127.0.0.0/8 to lo).
#
#  - @api, whose URL redirects to the internal service: the internal
#    service is never reached, its text is nowhere (not in what Gemini
#    receives, not in the answer, not in the returned history); the
#    prompt says why the reference was not read ("the address of
#    127.0.0.1 is not allowed"), and the log names the address and
#    outbound.allow;
#  - a chain allowed -> allowed -> refused: the same;
#  - 169.254.169.254 (the cloud metadata address): refused at once;
#  - the model's own call of references.get on @api: the tool's error,
#    with the same sentence;
#  - a source on the allowed host: read as before; IPv6: a source on ::1
#    (allowed) is read, one at [::ffff:127.0.0.1] is refused as 127.0.0.1;
#  - `check` shows outbound.allow;
#  - web_search whose endpoint is on the internal address: refused too.
source "$(dirname "${BASH_SOURCE[0]}")/chat_lib.sh"
source "$HTTP_DIR/webmock_lib.sh"

# the internal service: 127.0.0.1 (SEARCH_URL)
start_search_mock
INTERNAL=$SEARCH_URL

# another search_mock.py on HOST: its port in $MOCK2_PORT, its PID last
# in T_BG_PIDS (stopped by PID below)
start_mock2() {
    local pf=$T_TMP/$2.port
    "$PY" "$REPO/tests/mock/search_mock.py" --host "$1" --port 0 \
        --port-file "$pf" >>"$T_TMP/$2.stdout" 2>>"$T_TMP/$2.stderr" </dev/null &
    T_BG_PIDS+=("$!")
    for _ in $(seq 100); do
        [ -s "$pf" ] && break
        sleep 0.05
    done
    [ -s "$pf" ] || bail "search_mock.py on $1 did not start"
    MOCK2_PORT=$(cat "$pf")
}

# the docs host: 127.0.0.2; an IPv6 one: ::1
start_mock2 127.0.0.2 docs
DOCS_PID=${T_BG_PIDS[-1]}
DOCS=http://127.0.0.2:$MOCK2_PORT
start_mock2 ::1 v6
V6_PID=${T_BG_PIDS[-1]}
V6=http://[::1]:$MOCK2_PORT
MAPPED=http://[::ffff:127.0.0.1]:${INTERNAL##*:}

# URL-encode $1 as a query value
enc() { "$PY" -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }

SECRET_PATH=/doc/latest-meta-data-iam-credentials
SECRET_TEXT="Document latest-meta-data-iam-credentials"
export SECRET_TEXT
HOP2="$DOCS/to?url=$(enc "$INTERNAL$SECRET_PATH")"
API="$DOCS/to?url=$(enc "$INTERNAL$SECRET_PATH")"
CHAIN="$DOCS/to?url=$(enc "$HOP2")"

start_mock
new_stack_dir
write_gemini_yaml "$ST_DIR/.gemini.yaml" test-key "$MOCK_URL"
write_config "$GA_CONF" "{$CHAT_LIMITS}" '' \
    "plugins:
  config:
    references:
      sources:
        api: {url: '$API', description: The API notes}
        chain: {url: '$CHAIN'}
        meta: {url: 'http://169.254.169.254/latest/meta-data/'}
        notes: {url: '$DOCS/doc/notes'}
        v6: {url: '$V6/doc/v6'}
        mapped: {url: '$MAPPED/doc/mapped'}
      timeoutMs: 5000
    web_search: {endpoint: '$INTERNAL/search'}
outbound: {allow: [127.0.0.2/32, '::1']}"
start_stack --keep-dir

ga_run check --config "$GA_CONF"
if grep -qxF "outbound.allow: 127.0.0.2 ::1 (and the public Internet)" <<<"$out"; then
    ok "check shows outbound.allow"
else
    not_ok "check shows outbound.allow" "rc=$rc: $(tr '\n' ' ' <<<"$out$err" | cut -c1-600)"
fi

search_mock_save before /__count

# The red team's case: @api
mock_reset
chat_send "What does @api say?"
assert_py "@api redirected to loopback: refused, the visitor told why" <<'EOF2'
status ==> 200
the internal text is not in what Gemini got :: E['SECRET_TEXT'] in json.dumps(reqs) ==> False
nor in the answer :: E['SECRET_TEXT'] in json.dumps(r) ==> False
the prompt says why :: '[reference api not read: could not be fetched: the address of 127.0.0.1 is not allowed]' in reqs[0]['body']['contents'][-1]['parts'][0]['text'] ==> True
the returned history too :: 'the address of 127.0.0.1 is not allowed' in r['history'][0]['parts'][0]['text'] ==> True
no URL in it :: 'latest-meta-data' in json.dumps(r) ==> False
EOF2
assert_log_has "its address 127.0.0.1 is loopback; list it in agent.yaml's outbound.allow" \
    "the log names the address and outbound.allow"

# allowed -> allowed -> refused
mock_reset
chat_send "And @chain?"
assert_py "a chain of redirects: its last hop refused" <<'EOF2'
status ==> 200
E['SECRET_TEXT'] in json.dumps(reqs) ==> False
'[reference chain not read: could not be fetched: the address of 127.0.0.1 is not allowed]' in reqs[0]['body']['contents'][-1]['parts'][0]['text'] ==> True
EOF2

# the cloud metadata address: refused before any connection, so at once
t0=$(date +%s%N)
mock_reset
chat_send "And @meta?"
t1=$(date +%s%N)
assert_py "169.254.169.254 refused" <<'EOF2'
status ==> 200
'[reference meta not read: could not be fetched: the address of 169.254.169.254 is not allowed]' in reqs[0]['body']['contents'][-1]['parts'][0]['text'] ==> True
EOF2
if [ $(((t1 - t0) / 1000000)) -lt 3000 ]; then
    ok "169.254.169.254: no connection tried (answered in $(((t1 - t0) / 1000000)) ms)"
else
    not_ok "169.254.169.254: no connection tried" "took $(((t1 - t0) / 1000000)) ms"
fi

# the model asks for it with the tool
mock_reset
chat_send "[[mock:server-call tool=action_references_get args='{\"name\":\"api\"}']] read the api notes"
assert_py "the model's call: the tool's error, the same sentence" <<'EOF2'
status ==> 200
ran :: [(c['name'], c['ok']) for c in r['serverCalls']] ==> [('references.get', False)]
the model reads why :: "reference 'api' could not be fetched: the address of 127.0.0.1 is not allowed" in json.dumps(fresp(reqs[1])) ==> True
E['SECRET_TEXT'] in json.dumps(reqs) ==> False
E['SECRET_TEXT'] in json.dumps(r) ==> False
EOF2

# the allowed host still serves
mock_reset
chat_send "What do the @notes say?"
assert_py "a source on the allowed host is read" <<'EOF2'
status ==> 200
"[reference notes]\nDocument notes: the mock's text for notes." in reqs[0]['body']['contents'][-1]['parts'][0]['text'] ==> True
EOF2

# IPv6: ::1 allowed and read; the mapped form of 127.0.0.1 is 127.0.0.1
mock_reset
chat_send "Compare @v6 and @mapped"
assert_py "IPv6: ::1 allowed, ::ffff:127.0.0.1 refused as 127.0.0.1" <<'EOF2'
status ==> 200
"[reference v6]\nDocument v6: the mock's text for v6." in reqs[0]['body']['contents'][-1]['parts'][0]['text'] ==> True
'[reference mapped not read: could not be fetched: the address of [::ffff:127.0.0.1] is not allowed]' in reqs[0]['body']['contents'][-1]['parts'][0]['text'] ==> True
EOF2
assert_log_has "fetch from [::ffff:127.0.0.1] was refused: its address 127.0.0.1 is loopback" \
    "the mapped form is logged as the IPv4 address"

# web_search pointed at the internal address
mock_reset
chat_send "[[mock:server-call tool=action_web_search_search args='{\"query\":\"x\"}']] look it up"
assert_py "web_search: an endpoint on a refused address" <<'EOF2'
status ==> 200
ran :: [(c['name'], c['ok']) for c in r['serverCalls']] ==> [('web_search.search', False)]
"web search failed: the address of 127.0.0.1 is not allowed" in json.dumps(fresp(reqs[1])) ==> True
EOF2

search_mock_save after /__count
assert_py "the internal service was never reached" <<'EOF2'
S['after'].get('/doc/latest-meta-data-iam-credentials', 0) ==> 0
S['after'].get('/doc/mapped', 0) ==> 0
S['after'].get('/search', 0) - S['before'].get('/search', 0) ==> 0
EOF2
stop_stack

for pid in "$DOCS_PID" "$V6_PID"; do
    stop_pid "$pid" 3000
    wait "$pid" 2>/dev/null
done
stop_mock
stop_search_mock
finish
