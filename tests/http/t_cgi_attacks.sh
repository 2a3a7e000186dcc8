#!/bin/bash
# t_cgi_attacks.sh - the malformed-request set of t_routes.sh, t_cgi.sh and
# t_chat_errors.sh (bad methods, bad, absent and huge CONTENT_LENGTH,
# bodies shorter or longer than announced, bad JSON, huge headers, bad
# paths and traversal, bad query strings, wrong content types, a chunked
# body, Gemini failing) against the binary as a plain CGI program:
# exec'd per request with the CGI environment a web server sets and
# the body on stdin, as t_cgi.sh runs it. Each is answered with its status
# and the JSON error envelope, the process exits 0 within 2 s (no crash,
# no hang), and stderr holds no sanitizer report. A stdin shorter than
# CONTENT_LENGTH and held open is cut by BOUND_CGI_READ_MS (10 s).
source "$(dirname "${BASH_SOURCE[0]}")/chat_lib.sh"

require_binary
start_mock
new_stack_dir
write_gemini_yaml "$ST_DIR/.gemini.yaml" "$CANARY" "$MOCK_URL"
write_config "$GA_CONF" '{maxBodyBytes: 4096}' "$ST_DIR/var" "history: {verify: off}"
SEARCH=/_jay/actions/shop.searchProducts
STATUS=/_jay/actions/geminiAgent.status

# cgi_case STATUS CODE LABEL BODY|@FILE|- [NAME=VALUE...]: one CGI run
# (CONTENT_TYPE application/json and CONTENT_LENGTH the body's unless
# given; '-' for no body), then the status, the JSON envelope (CODE, or
# '' for an answer that is not an error), a clean exit within 2 s, and no
# sanitizer report.
cgi_case() {
    local want=$1 code=$2 label=$3 body=$4 bf=$T_TMP/cgi.body kv have_len=0 have_ct=0
    shift 4
    local -a envs=()
    if [ "$body" = - ]; then : >"$bf"; elif [[ $body == @* ]]; then cp "${body#@}" "$bf"; else printf '%s' "$body" >"$bf"; fi
    for kv in "$@"; do
        case $kv in CONTENT_LENGTH=*) have_len=1 ;; CONTENT_TYPE=*) have_ct=1 ;; esac
        envs+=("$kv")
    done
    if [ "$body" != - ]; then
        [ "$have_len" -eq 1 ] || envs+=("CONTENT_LENGTH=$(wc -c <"$bf")")
        [ "$have_ct" -eq 1 ] || envs+=("CONTENT_TYPE=application/json")
    fi
    CGI_TIMEOUT=${CASE_TIMEOUT:-5} cgi_run REMOTE_ADDR=127.0.0.1 SERVER_PROTOCOL=HTTP/1.1 \
        "${envs[@]}" <"$bf"
    if [ -n "$code" ]; then
        assert_error "$want" "$code" "CGI $label"
    else
        assert_status "$want" "CGI $label: status $want"
        assert_json_headers "CGI $label"
    fi
    if [ "$CGI_RC" -eq 0 ]; then ok "CGI $label: exit 0"; else not_ok "CGI $label: exit 0" "exit $CGI_RC; stderr: $(head -c 300 "$CGI_STDERR")"; fi
    assert_fast "${CASE_MAX_MS:-2000}" "CGI $label: within ${CASE_MAX_MS:-2000} ms"
    if grep -Eq 'Sanitizer|runtime error' "$CGI_STDERR"; then
        not_ok "CGI $label: no sanitizer report" "$(grep -E 'Sanitizer|runtime error' "$CGI_STDERR" | head -n 2 | tr '\n' '|')"
    fi
    assert_body_lacks "$CANARY" "CGI $label: no key in the answer"
}

Q='{"query":"a"}'

# --- the control: a good request ------------------------------------------------
cgi_case 200 '' "POST search" "$Q" REQUEST_METHOD=POST "REQUEST_URI=$SEARCH"

# --- methods ----------------------------------------------------------------------
cgi_case 405 method_not_allowed "GET $SEARCH" - REQUEST_METHOD=GET "REQUEST_URI=$SEARCH"
assert_header Allow POST "CGI GET $SEARCH: Allow: POST"
cgi_case 405 method_not_allowed "PUT $SEARCH" "$Q" REQUEST_METHOD=PUT "REQUEST_URI=$SEARCH"
cgi_case 405 method_not_allowed "POST /_jay/actions" '{}' REQUEST_METHOD=POST REQUEST_URI=/_jay/actions
cgi_case 405 method_not_allowed "DELETE /_jay/actions" - REQUEST_METHOD=DELETE REQUEST_URI=/_jay/actions
cgi_case 405 method_not_allowed "POST $STATUS" '{}' REQUEST_METHOD=POST "REQUEST_URI=$STATUS"
cgi_case 405 method_not_allowed "method FROB" "$Q" REQUEST_METHOD=FROB "REQUEST_URI=$SEARCH"
cgi_case 405 method_not_allowed "lowercase method post" "$Q" REQUEST_METHOD=post "REQUEST_URI=$SEARCH"
cgi_case 405 method_not_allowed "empty REQUEST_METHOD" "$Q" REQUEST_METHOD= "REQUEST_URI=$SEARCH"
cgi_case 405 method_not_allowed "no REQUEST_METHOD" "$Q" "REQUEST_URI=$SEARCH"

# --- CONTENT_LENGTH ------------------------------------------------------------------
for cl in 12abc -1 99999999999999999999999 0x10 ' 13' '1e3' '+13'; do
    cgi_case 400 bad_content_length "CONTENT_LENGTH='$cl'" "$Q" REQUEST_METHOD=POST \
        "REQUEST_URI=$SEARCH" "CONTENT_LENGTH=$cl"
done
cgi_case 413 payload_too_large "CONTENT_LENGTH=18446744073709551615" "$Q" REQUEST_METHOD=POST \
    "REQUEST_URI=$SEARCH" CONTENT_LENGTH=18446744073709551615
cgi_case 413 payload_too_large "CONTENT_LENGTH=4097, 13 bytes sent" "$Q" REQUEST_METHOD=POST \
    "REQUEST_URI=$SEARCH" CONTENT_LENGTH=4097
# absent: no body, so no JSON at all
cgi_case 400 invalid_json "no CONTENT_LENGTH (the body unread)" "$Q" REQUEST_METHOD=POST \
    "REQUEST_URI=$SEARCH" CONTENT_LENGTH=
cgi_case 400 incomplete_body "CONTENT_LENGTH=100, 13 bytes then EOF" "$Q" REQUEST_METHOD=POST \
    "REQUEST_URI=$SEARCH" CONTENT_LENGTH=100
# more bytes than announced: only CONTENT_LENGTH of them are the body
cgi_case 200 '' "CONTENT_LENGTH=13, 30 bytes sent" "$Q garbage-after-body" REQUEST_METHOD=POST \
    "REQUEST_URI=$SEARCH" CONTENT_LENGTH=13
cgi_case 400 invalid_json "CONTENT_LENGTH=5 cuts the JSON" "$Q" REQUEST_METHOD=POST \
    "REQUEST_URI=$SEARCH" CONTENT_LENGTH=5

# a chunked body (a web server must de-chunk for CGI; one that does not
# passes no CONTENT_LENGTH): the chunk framing is no JSON
printf 'd\r\n{"query":"a"}\r\n0\r\n\r\n' >"$T_TMP/chunked"
cgi_case 400 invalid_json "chunked body, no CONTENT_LENGTH" "@$T_TMP/chunked" REQUEST_METHOD=POST \
    "REQUEST_URI=$SEARCH" HTTP_TRANSFER_ENCODING=chunked CONTENT_LENGTH=
cgi_case 400 invalid_json "chunked framing as the body" "@$T_TMP/chunked" REQUEST_METHOD=POST \
    "REQUEST_URI=$SEARCH" HTTP_TRANSFER_ENCODING=chunked

# --- a stdin shorter than CONTENT_LENGTH and never closed --------------------------
mkfifo "$T_TMP/fifo"
exec {WFD}<>"$T_TMP/fifo"
printf '%s' '{"query":' >&"$WFD"
CGI_TIMEOUT=20 cgi_run REQUEST_METHOD=POST CONTENT_TYPE=application/json CONTENT_LENGTH=100 \
    "REQUEST_URI=$SEARCH" <"$T_TMP/fifo"
exec {WFD}>&-
assert_error 400 incomplete_body "CGI stdin held open after 9 of 100 bytes"
if [ "$RES_MS" -ge 9000 ] && [ "$RES_MS" -le 14000 ]; then
    ok "CGI stdin held open: cut after BOUND_CGI_READ_MS (${RES_MS} ms)"
else
    not_ok "CGI stdin held open: cut after BOUND_CGI_READ_MS" "took $RES_MS ms (exit $CGI_RC)"
fi

# --- content types ----------------------------------------------------------------
cgi_case 415 unsupported_media_type "CONTENT_TYPE text/plain" "$Q" REQUEST_METHOD=POST \
    "REQUEST_URI=$SEARCH" CONTENT_TYPE=text/plain
cgi_case 415 unsupported_media_type "no CONTENT_TYPE" "$Q" REQUEST_METHOD=POST \
    "REQUEST_URI=$SEARCH" CONTENT_TYPE=
cgi_case 415 unsupported_media_type "CONTENT_TYPE application/jsonp" "$Q" REQUEST_METHOD=POST \
    "REQUEST_URI=$SEARCH" CONTENT_TYPE=application/jsonp
cgi_case 415 unsupported_media_type "CONTENT_TYPE multipart/form-data" "$Q" REQUEST_METHOD=POST \
    "REQUEST_URI=$SEARCH" 'CONTENT_TYPE=multipart/form-data; boundary=x'
cgi_case 200 '' "CONTENT_TYPE 'Application/JSON; charset=utf-8'" "$Q" REQUEST_METHOD=POST \
    "REQUEST_URI=$SEARCH" 'CONTENT_TYPE=Application/JSON; charset=utf-8'

# --- bad JSON -------------------------------------------------------------------------
bad_json() {
    cgi_case 400 invalid_json "invalid_json: $1" "@$T_TMP/bad" REQUEST_METHOD=POST "REQUEST_URI=$SEARCH"
}
printf '%s' '{"query": }' >"$T_TMP/bad"; bad_json "malformed"
printf '%s' '{"query":"a"} x' >"$T_TMP/bad"; bad_json "trailing garbage"
printf '%s' '{"query":"a","query":"b"}' >"$T_TMP/bad"; bad_json "duplicate keys"
printf '{"query":"\xff"}' >"$T_TMP/bad"; bad_json "invalid UTF-8"
printf '{"query":"\xc0\xaf"}' >"$T_TMP/bad"; bad_json "overlong UTF-8"
printf '%s' '{"query":"\ud800"}' >"$T_TMP/bad"; bad_json "lone surrogate"
printf '%s' '{"query":"a\u0000b"}' >"$T_TMP/bad"; bad_json "\\u0000"
printf '\0\0\0\0' >"$T_TMP/bad"; bad_json "NUL bytes"
: >"$T_TMP/bad"; bad_json "empty body"
"$PY" -c 'import sys; n = 1999; sys.stdout.write("{\"query\":\"x\",\"deep\":" + "[" * n + "]" * n + "}")' >"$T_TMP/bad"
bad_json "nesting 2000 deep"
cgi_case 422 schema_violation "schema: query a number" '{"query":5}' REQUEST_METHOD=POST "REQUEST_URI=$SEARCH"
cgi_case 422 schema_violation "schema: a JSON array" '[1,2]' REQUEST_METHOD=POST "REQUEST_URI=$SEARCH"

# --- huge headers -----------------------------------------------------------------------
# (execve caps one variable at 128 KB: a web server passes no more)
big=$(head -c 120000 /dev/zero | tr '\0' a)
cgi_case 200 '' "a 120 KB header" "$Q" REQUEST_METHOD=POST "REQUEST_URI=$SEARCH" "HTTP_X_BIG=$big"
cgi_case 200 '' "a 120 KB cookie and a 120 KB user agent" "$Q" REQUEST_METHOD=POST \
    "REQUEST_URI=$SEARCH" "HTTP_COOKIE=$big" "HTTP_USER_AGENT=$big"
cgi_case 200 '' "a 120 KB Authorization" "$Q" REQUEST_METHOD=POST \
    "REQUEST_URI=$SEARCH" "HTTP_AUTHORIZATION=Bearer $big"
cgi_case 404 not_found "a 120 KB REQUEST_URI" - REQUEST_METHOD=GET "REQUEST_URI=/_jay/$big"
unset big

# --- paths, traversal, query strings ---------------------------------------------
cgi_case 404 unknown_action "shop.nope" '{}' REQUEST_METHOD=POST REQUEST_URI=/_jay/actions/shop.nope
cgi_case 404 not_found "/_jay/nothing" - REQUEST_METHOD=GET REQUEST_URI=/_jay/nothing
cgi_case 404 not_found "/_jay/actionsfoo" - REQUEST_METHOD=GET REQUEST_URI=/_jay/actionsfoo
for p in '/_jay/actions/../../etc/passwd' '/_jay/actions/shop.searchProducts/../../../etc/passwd' \
    '/_jay/actions/..%2f..%2fetc%2fpasswd' '/_jay/actions/%2e%2e/%2e%2e/etc/passwd' \
    '/_jay/actions/shop/../shop.searchProducts' '/_jay/actions//shop.searchProducts' \
    '/_jay/actions/shop.searchProducts%00.json' '/_jay/actions/\shop.searchProducts'; do
    CGI_TIMEOUT=5 cgi_run REMOTE_ADDR=127.0.0.1 REQUEST_METHOD=POST CONTENT_TYPE=application/json \
        CONTENT_LENGTH=13 "REQUEST_URI=$p" <<<"$Q"
    assert_true '"error" in j and j["error"]["code"] in ("not_found", "unknown_action")' \
        "CGI traversal $p: not_found or unknown_action"
    case $RES_STATUS in 404) ok "CGI traversal $p: 404" ;; *) not_ok "CGI traversal $p: 404" "got $RES_STATUS" ;; esac
    assert_body_lacks "root:" "CGI traversal $p: no /etc/passwd"
done
cgi_case 404 not_found "DOCUMENT_URI traversal" - REQUEST_METHOD=GET DOCUMENT_URI=/_jay/../etc/passwd
cgi_case 200 '' "a garbage query string" - REQUEST_METHOD=GET 'REQUEST_URI=/_jay/actions?%zz&&=&a=%00%ff' \
    'QUERY_STRING=%zz&&=&a=%00%ff'
cgi_case 200 '' "a 100 KB query string" - REQUEST_METHOD=GET \
    "REQUEST_URI=/_jay/actions?$(head -c 100000 /dev/zero | tr '\0' q)"
cgi_case 404 not_found "no REQUEST_URI, DOCUMENT_URI or SCRIPT_NAME" - REQUEST_METHOD=GET

# --- the chat route: bad bodies, and Gemini failing ---------------------------------
SEND=/_jay/actions/geminiAgent.sendMessage
cgi_case 400 bad_request "sendMessage without message" '{"history":[]}' REQUEST_METHOD=POST "REQUEST_URI=$SEND"
cgi_case 400 invalid_history "sendMessage history not a list" '{"message":"hi","history":5}' REQUEST_METHOD=POST "REQUEST_URI=$SEND"
cgi_case 400 invalid_json "sendMessage cut short" '{"message":"hi","hist' REQUEST_METHOD=POST "REQUEST_URI=$SEND"
cgi_case 502 upstream_auth "sendMessage, Gemini 403" '{"message":"[[mock:error status=403]] hi","history":[]}' \
    REQUEST_METHOD=POST "REQUEST_URI=$SEND"
CASE_MAX_MS=8000 cgi_case 503 upstream_unavailable "sendMessage, Gemini 503 three times" \
    '{"message":"[[mock:error status=503]] hi","history":[]}' REQUEST_METHOD=POST "REQUEST_URI=$SEND"
cgi_case 200 '' "sendMessage answered" '{"message":"hello","history":[]}' REQUEST_METHOD=POST "REQUEST_URI=$SEND"
assert_json 'j["type"]' response "CGI sendMessage answered: a response"

finish
