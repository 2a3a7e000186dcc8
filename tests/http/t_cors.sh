#!/bin/bash
# t_cors.sh - cross-origin calls (src/http/cors.h) through
# nginx + the responder + the mock Gemini server, with http.cors listing
# one origin:
#   a. a preflight (OPTIONS + Access-Control-Request-Method) on the routes:
#      204 with the origin, methods, headers, max age and Vary; from an
#      origin not listed (or none): 403 origin_not_allowed, no CORS headers;
#      on a path no route serves: the 404, as without CORS;
#   b. a chat (sendMessage), an error envelope (400, 405) and streams
#      (sendMessage and /api/agent/run/stream) carry the origin and Vary;
#   c. the run API with a Bearer token from the listed origin works; the
#      session cookie from another origin is still refused (auth.c);
#   d. an origin not listed (or spelled differently) is answered as today,
#      without CORS headers; no answer ever has `*` or Allow-Credentials;
#   e. nginx (its map $http_origin $gemini_agent_cors listing the same
#      origins): its own error answers (413 here, 502 with the responder
#      stopped) and the widget's files (/agent/, /vendor/) carry the origin
#      and Vary for a listed origin, nothing for another;
#   f. without http.cors, and the snippet's map as shipped (empty), nothing
#      changes: OPTIONS is the 405 it was; nginx adds no header.
source "$(dirname "${BASH_SOURCE[0]}")/runapi_lib.sh"

SEND=/_jay/actions/geminiAgent.sendMessage
ALLOWED=https://www.example.org
OTHER=https://evil.example
CORS_YAML="http: {cors: {allowOrigins: ['$ALLOWED', 'http://127.0.0.1:8081']}}"
CHAT='{"message":"hello","history":[],"toolDefinitions":[],"pageState":{}}'

# assert_cors LABEL: the answer allows $ALLOWED, varies on Origin, and
# never allows credentials.
assert_cors() {
    assert_header Access-Control-Allow-Origin "$ALLOWED" "$1: Access-Control-Allow-Origin"
    assert_header Vary Origin "$1: Vary: Origin"
    assert_header_absent Access-Control-Allow-Credentials "$1: no Allow-Credentials"
}

# assert_no_cors LABEL: no CORS header at all.
assert_no_cors() {
    local h bad=''
    for h in Access-Control-Allow-Origin Access-Control-Allow-Methods \
        Access-Control-Allow-Headers Access-Control-Max-Age \
        Access-Control-Allow-Credentials; do
        [ -z "$(header_get "$h")" ] || bad="$bad $h"
    done
    if [ -z "$bad" ]; then ok "$1: no CORS headers"; else not_ok "$1: no CORS headers" "got$bad"; fi
}

# preflight PATH ORIGIN [CURL_ARGS...]: the browser's OPTIONS before a POST.
preflight() {
    local path=$1 origin=$2
    shift 2
    req OPTIONS "$path" '' -H "Origin: $origin" \
        -H 'Access-Control-Request-Method: POST' \
        -H 'Access-Control-Request-Headers: authorization, content-type' "$@"
}

# list_origins DIR: the rendered snippet's map lists the same origins as
# http.cors, one line each, as docs/deploy/static-site-host.md says.
list_origins() {
    grep -q '^map \$http_origin \$gemini_agent_cors {$' "$1/site.conf" || return 1
    sed -i "/^map \$http_origin \$gemini_agent_cors {\$/a\\
    \"$ALLOWED\" \$http_origin;\\
    \"http://127.0.0.1:8081\" \$http_origin;" "$1/site.conf"
}

start_mock
GA_NGINX_EDIT=list_origins
start_stack --mock --auth --limits "$RUN_LIMITS" --yaml "$CORS_YAML"
token_for ann

# ---------------------------------------------------------------------------
# a. preflights

for p in "$SEND" /_jay/actions /_jay/actions/shop.searchProducts \
    /_jay/commands "$RUN" "$RUN_STREAM" /api/agent/threads \
    /api/agent/threads/AAAAAAAAAAAAAAAAAAAAAA/todo /api/agent/approvals/AAAA; do
    preflight "$p" "$ALLOWED"
    assert_status 204 "preflight $p from the listed origin: 204"
    assert_cors "preflight $p"
    assert_header Access-Control-Allow-Methods "GET, POST" "preflight $p: methods"
    assert_header Access-Control-Allow-Headers "Content-Type, Authorization, Accept" \
        "preflight $p: headers"
    assert_header Access-Control-Max-Age 600 "preflight $p: max age"
    check "preflight $p: no body" test ! -s "$RES_BODY"
done

preflight "$SEND" "$OTHER"
assert_error 403 origin_not_allowed "preflight from an origin not listed"
assert_body_contains http.cors.allowOrigins "the refusal names http.cors.allowOrigins"
assert_no_cors "preflight from an origin not listed"
req OPTIONS "$RUN" '' -H 'Access-Control-Request-Method: POST'
assert_error 403 origin_not_allowed "preflight without Origin"
assert_no_cors "preflight without Origin"
preflight "$RUN" "https://WWW.example.org"
assert_error 403 origin_not_allowed "preflight from the origin in upper case"
preflight "$RUN" "$ALLOWED/"
assert_error 403 origin_not_allowed "preflight from the origin with a '/'"
preflight /api/agent/nothing "$ALLOWED"
assert_error 404 not_found "preflight on a path no route serves"
assert_cors "the 404 to a preflight from the listed origin"
# an OPTIONS that is no preflight: the 405 it always was
req OPTIONS "$SEND" '' -H "Origin: $ALLOWED"
assert_error 405 method_not_allowed "OPTIONS without Access-Control-Request-Method"
assert_cors "OPTIONS without Access-Control-Request-Method (405)"

# ---------------------------------------------------------------------------
# b. chat, error envelopes, streams from the listed origin

mock_reset
req POST "$SEND" "$CHAT" -H "Origin: $ALLOWED"
assert_status 200 "sendMessage from the listed origin: 200"
assert_json 'j["type"]' response "sendMessage from the listed origin: a response"
assert_cors "sendMessage"

req POST "$SEND" '{"message":' -H "Origin: $ALLOWED"
assert_error 400 invalid_json "bad JSON from the listed origin"
assert_cors "the 400 envelope"
req GET "$SEND" '' -H "Origin: $ALLOWED"
assert_error 405 method_not_allowed "GET sendMessage from the listed origin"
assert_header Allow POST "the 405 keeps its Allow"
assert_cors "the 405 envelope"
req POST "$RUN" '{"prompt":"hi"}' -H "Origin: $ALLOWED"
assert_error 401 unauthorized "the run API without identity from the listed origin"
assert_cors "the 401 envelope"

mock_reset
req POST "$SEND" "$CHAT" -H "Origin: $ALLOWED" -H 'Accept: application/x-ndjson'
assert_status 200 "streamed sendMessage from the listed origin: 200"
assert_header Content-Type "application/x-ndjson; charset=utf-8" "streamed sendMessage: NDJSON"
assert_body_contains '"type":"result"' "streamed sendMessage: a result line"
assert_cors "streamed sendMessage"

mock_reset
api ann POST "$RUN_STREAM" '{"prompt":"stream it"}' -H "Origin: $ALLOWED"
assert_status 200 "run/stream with Bearer from the listed origin: 200"
assert_header Content-Type "application/x-ndjson; charset=utf-8" "run/stream: NDJSON"
assert_cors "run/stream"

# ---------------------------------------------------------------------------
# c. the run API: Bearer from the listed origin; the cookie stays same-site

mock_reset
api ann POST "$RUN" '{"prompt":"from a static site"}' -H "Origin: $ALLOWED"
assert_status 200 "run with Bearer from the listed origin: 200"
assert_json 'j["ok"]' true "run with Bearer from the listed origin: ok"
assert_cors "run with Bearer"
api ann GET /api/agent/threads '' -H "Origin: $ALLOWED"
assert_status 200 "threads with Bearer from the listed origin: 200"
assert_cors "threads with Bearer"

mock_reset
req POST "$RUN" '{"prompt":"via cookie"}' -H "Cookie: ga_session=$TOKEN" -H "Origin: $ALLOWED"
assert_error 401 unauthorized "cookie POST from the listed origin: still 401"
assert_body_contains cross-site "cookie POST from the listed origin: cross-site"
req POST "$RUN" '{"prompt":"via cookie"}' -H "Cookie: ga_session=$TOKEN" -H "Origin: $OTHER"
assert_error 401 unauthorized "cookie POST from another origin: 401"
assert_body_contains cross-site "cookie POST from another origin: cross-site"
assert_no_cors "cookie POST from another origin"
got=$(mock_count)
check "no cookie run reached Gemini" test "$got" = 0

# ---------------------------------------------------------------------------
# d. an origin not listed: answered as today, without CORS headers

mock_reset
req POST "$SEND" "$CHAT" -H "Origin: $OTHER"
assert_status 200 "sendMessage from an origin not listed: 200 as before"
assert_no_cors "sendMessage from an origin not listed"
assert_header_absent Vary "sendMessage from an origin not listed: no Vary"
api ann POST "$RUN" '{"prompt":"elsewhere"}' -H "Origin: $OTHER"
assert_status 200 "run with Bearer from an origin not listed: 200 as before"
assert_no_cors "run from an origin not listed"
req GET /_jay/actions '' -H "Origin: http://127.0.0.1:8082"
assert_status 200 "GET /_jay/actions from another port: 200"
assert_no_cors "GET /_jay/actions from another port"
req GET /_jay/actions '' -H "Origin: http://127.0.0.1:8081"
assert_status 200 "GET /_jay/actions from the second listed origin: 200"
assert_header Access-Control-Allow-Origin "http://127.0.0.1:8081" "the second origin is echoed"
req GET /_jay/actions
assert_status 200 "GET /_jay/actions without Origin: 200"
assert_no_cors "GET /_jay/actions without Origin"
grep -qi '^access-control-allow-origin: \*' "$RES_ALL" &&
    not_ok "no answer allowed '*'" "$(grep -i '^access-control-allow-origin: \*' "$RES_ALL" | head -1)" ||
    ok "no answer allowed '*'"

# ---------------------------------------------------------------------------
# e. nginx's own answers: its errors and the widget's files

head -c 1100000 /dev/zero | tr '\0' ' ' >"$T_TMP/big"
req POST "$SEND" "@$T_TMP/big" -H "Origin: $ALLOWED"
assert_error 413 payload_too_large "nginx's 413 to the listed origin"
assert_cors "nginx's 413"
req POST "$SEND" "@$T_TMP/big" -H "Origin: $OTHER"
assert_error 413 payload_too_large "nginx's 413 to an origin not listed"
assert_no_cors "nginx's 413 to an origin not listed"
assert_header_absent Vary "nginx's 413 to an origin not listed: no Vary"
req POST "$SEND" "@$T_TMP/big" -H "Origin: http://127.0.0.1:8081"
assert_header Access-Control-Allow-Origin "http://127.0.0.1:8081" "nginx's 413: the second origin is echoed"
req POST "$SEND" "@$T_TMP/big" -H "Origin: https://www.example.org.evil.example"
assert_no_cors "nginx's 413 to a longer origin"

for f in /agent/index.js /agent/chat.css /vendor/marked.js; do
    req GET "$f" '' -H "Origin: $ALLOWED"
    assert_status 200 "GET $f from the listed origin: 200"
    assert_cors "GET $f"
    req GET "$f" '' -H "Origin: $OTHER"
    assert_status 200 "GET $f from an origin not listed: 200"
    assert_no_cors "GET $f from an origin not listed"
    req GET "$f"
    assert_no_cors "GET $f without Origin"
done
req GET /agent/index.js
assert_header Content-Type "application/javascript" "the widget is still served as JavaScript"
req GET /agent/nothing.js '' -H "Origin: $ALLOWED"
assert_status 404 "a missing file under /agent/: 404"
req GET /index.html '' -H "Origin: $ALLOWED"
assert_status 200 "the site's pages: 200"
assert_no_cors "the site's pages are not opened to other origins"

stop_responder
req POST "$SEND" "$CHAT" -H "Origin: $ALLOWED"
assert_error 502 responder_unavailable "nginx's 502 (responder stopped) to the listed origin"
assert_cors "nginx's 502"
req GET "/_jay/actions/geminiAgent.status" '' -H "Origin: $OTHER"
assert_error 502 responder_unavailable "nginx's 502 to an origin not listed"
assert_no_cors "nginx's 502 to an origin not listed"

# ---------------------------------------------------------------------------
# f. without http.cors and with the snippet's map as shipped: nothing changes

stop_stack
unset GA_NGINX_EDIT
start_stack --mock --auth --limits "$RUN_LIMITS"
preflight "$SEND" "$ALLOWED"
assert_error 405 method_not_allowed "without http.cors: a preflight is the 405"
assert_header Allow POST "without http.cors: the 405 says POST"
assert_no_cors "without http.cors: the preflight"
mock_reset
req POST "$SEND" "$CHAT" -H "Origin: $ALLOWED"
assert_status 200 "without http.cors: sendMessage with an Origin: 200"
assert_no_cors "without http.cors: sendMessage"
req POST "$SEND" "@$T_TMP/big" -H "Origin: $ALLOWED"
assert_error 413 payload_too_large "the shipped map: nginx's 413"
assert_no_cors "the shipped map: nginx's 413"
assert_header_absent Vary "the shipped map: no Vary on nginx's 413"
req GET /agent/index.js '' -H "Origin: $ALLOWED"
assert_status 200 "the shipped map: GET /agent/index.js"
assert_no_cors "the shipped map: GET /agent/index.js"
assert_header_absent Vary "the shipped map: no Vary on /agent/index.js"

finish
