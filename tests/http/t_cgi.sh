#!/bin/bash
# t_cgi.sh - the binary as a plain CGI program: no arguments,
# GATEWAY_INTERFACE=CGI/1.1, config from GEMINI_AGENT_CONFIG, body on stdin.
# Also the CONTENT_LENGTH checks nginx would never let through.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_binary
new_stack_dir
write_gemini_yaml "$ST_DIR/.gemini.yaml" test-key-not-a-real-key
write_config "$GA_CONF"
SEARCH=/_jay/actions/shop.searchProducts

# assert_cgi_exit LABEL: the CGI run exited 0 (it answered).
assert_cgi_exit() {
    if [ "$CGI_RC" -eq 0 ]; then ok "$1: exit status 0"; else not_ok "$1: exit status 0" "exit $CGI_RC; stderr: $(head -c 300 "$CGI_STDERR")"; fi
}

printf '%s' '{"query":"a"}' >"$T_TMP/q.json" # 13 bytes

# --- success ----------------------------------------------------------------
cgi_run REQUEST_METHOD=POST CONTENT_TYPE=application/json CONTENT_LENGTH=13 \
    "REQUEST_URI=$SEARCH" <"$T_TMP/q.json"
assert_cgi_exit "CGI search"
assert_status 200 "CGI search: status 200"
assert_header Status "200 OK" "CGI search: 'Status: 200 OK' header"
assert_json_headers "CGI search"
assert_true 'isinstance(j.get("products"), list) and isinstance(j.get("total"), int)' "CGI search: products and total"

# --- how the route is found ---------------------------------------------------
cgi_run REQUEST_METHOD=GET DOCUMENT_URI=/_jay/actions REQUEST_URI=/somewhere/else </dev/null
assert_status 200 "CGI: DOCUMENT_URI wins over REQUEST_URI"
assert_true '"actions" in j' "CGI: DOCUMENT_URI /_jay/actions lists actions"
cgi_run REQUEST_METHOD=GET 'REQUEST_URI=/_jay/actions?x=1' </dev/null
assert_status 200 "CGI: REQUEST_URI without its query string"
cgi_run REQUEST_METHOD=POST CONTENT_TYPE=application/json CONTENT_LENGTH=13 \
    SCRIPT_NAME=/_jay/actions PATH_INFO=/shop.searchProducts <"$T_TMP/q.json"
assert_status 200 "CGI: SCRIPT_NAME + PATH_INFO"
assert_true 'isinstance(j.get("products"), list)' "CGI: SCRIPT_NAME + PATH_INFO ran searchProducts"
cgi_run REQUEST_METHOD=GET REQUEST_URI=/_jay/nothing </dev/null
assert_error 404 not_found "CGI GET /_jay/nothing"
assert_cgi_exit "CGI GET /_jay/nothing"

# --- CONTENT_LENGTH garbage -------------------------------------------------------
for cl in 12abc -1 99999999999999999999999 0x10; do
    CGI_TIMEOUT=5 cgi_run REQUEST_METHOD=POST CONTENT_TYPE=application/json \
        "CONTENT_LENGTH=$cl" "REQUEST_URI=$SEARCH" <"$T_TMP/q.json"
    assert_error 400 bad_content_length "CGI CONTENT_LENGTH=$cl"
    assert_fast 2000 "CGI CONTENT_LENGTH=$cl: answered within 2 s"
    assert_cgi_exit "CGI CONTENT_LENGTH=$cl"
done

# --- fewer body bytes than CONTENT_LENGTH -------------------------------------------
printf '%s' '{"query":1}' | head -c 10 >"$T_TMP/ten"
CGI_TIMEOUT=5 cgi_run REQUEST_METHOD=POST CONTENT_TYPE=application/json \
    CONTENT_LENGTH=100 "REQUEST_URI=$SEARCH" <"$T_TMP/ten"
assert_error 400 incomplete_body "CGI CONTENT_LENGTH=100 with a 10-byte body"
assert_fast 2000 "CGI short body: answered within 2 s (no hang)"
assert_cgi_exit "CGI short body"

# --- 413 decided from CONTENT_LENGTH alone --------------------------------------------
# stdin is a FIFO that we hold open and never write: a responder that tried
# to read the body first would hang until the timeout.
mkfifo "$T_TMP/fifo"
exec {WFD}<>"$T_TMP/fifo"
CGI_TIMEOUT=5 cgi_run REQUEST_METHOD=POST CONTENT_TYPE=application/json \
    CONTENT_LENGTH=5000 "REQUEST_URI=$SEARCH" <"$T_TMP/fifo"
exec {WFD}>&-
assert_error 413 payload_too_large "CGI CONTENT_LENGTH=5000 (over maxBodyBytes 4096), body never sent"
assert_fast 2000 "CGI 413: answered within 2 s without reading the body"
assert_cgi_exit "CGI 413"

# --- a config that cannot be loaded: a JSON 500 that names no file --------------------
GOOD_CONF=$GA_CONF
GA_CONF=$T_TMP/broken-agent.yaml
printf 'limits: {maxBodyBytes: lots}\n' >"$GA_CONF"
cgi_run REQUEST_METHOD=GET DOCUMENT_URI=/_jay/actions </dev/null
assert_error 500 config_error "CGI with a broken config"
assert_body_lacks "broken-agent.yaml" "CGI broken config: the answer names no file"
if grep -q "broken-agent.yaml:1: 'limits.maxBodyBytes' must be an integer" "$CGI_STDERR"; then
    ok "CGI broken config: the log names the file, line and key"
else
    not_ok "CGI broken config: the log names the problem" "$(head -c 300 "$CGI_STDERR")"
fi
GA_CONF=$GOOD_CONF

# --- no arguments, not under a web server -----------------------------------------------
mapfile -d '' -t envv < <(ga_env)
timeout -k 1 5 "${envv[@]}" "$GA_BIN" >"$T_TMP/noargs.out" 2>&1 </dev/null
rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ]; then
    ok "no arguments without GATEWAY_INTERFACE: exits non-zero ($rc)"
else
    not_ok "no arguments without GATEWAY_INTERFACE: exits non-zero" "exit $rc"
fi
if grep -qi usage "$T_TMP/noargs.out"; then
    ok "no arguments without GATEWAY_INTERFACE: prints usage"
else
    not_ok "no arguments without GATEWAY_INTERFACE: prints usage" "output: $(head -c 200 "$T_TMP/noargs.out")"
fi

finish
