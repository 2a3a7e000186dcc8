#!/bin/bash
# t_remote_user.sh - the web server's sign-in (auth.remoteUser, docs/http-api.md
# "Identity").
#
# 1. `check` and `serve` refuse the unsafe forms with a message saying
#    what to write: the old trustRemoteUser: true, REMOTE_USER behind
#    nginx, a variable a client sets (HTTP_*).
# 2. The red team's attack through the shipped nginx snippet as it is
#    (no sign-in): `Authorization: Basic victim:x`, which fastcgi_params
#    passes as REMOTE_USER, signs nobody in; nor does a `GA-Remote-User`
#    header.
# 3. The safe nginx form for real: the snippet with its include of
#    nginx/gemini-agent-signin.conf uncommented (the file as shipped, its
#    password file's path replaced) and an htpasswd file written here. The
#    right password signs that user in (the run's thread is theirs in the
#    store); no header, a wrong password or a forged GA-Remote-User header
#    gets nginx's 401, and the responder sees nothing.
source "$(dirname "${BASH_SOURCE[0]}")/runapi_lib.sh"

SAFE_AUTH='remoteUser: {variable: GA_REMOTE_USER, server: nginx}'

# site_yaml FILE AUTH_MEMBERS: an agent.yaml with a session secret and the
# given members of auth:.
site_yaml() {
    write_secret "$ST_DIR/session.key" || bail "cannot write the secret"
    GA_SECRET=$ST_DIR/session.key
    write_config "$1" "$RUN_LIMITS" '' "auth: {secretFile: '$GA_SECRET', $2}"
}

# --- 1. check and serve refuse the unsafe forms -----------------------------

# refused NAME AUTH_MEMBERS WORDS: check exits 1 naming the problem, serve
# exits non-zero at once with it in its log, and neither starts anything.
refused() {
    local name=$1 members=$2 words=$3 sock
    new_stack_dir
    write_gemini_yaml "$ST_DIR/.gemini.yaml" test-key-not-a-real-key
    site_yaml "$GA_CONF" "$members"
    ga_run check --config "$GA_CONF"
    if [ "$rc" -eq 1 ] && grep -qF -- "$words" <<<"$out" &&
        grep -qF "problems found" <<<"$out"; then
        ok "check refuses $name (exit 1)"
    else
        not_ok "check refuses $name (exit 1)" "rc $rc; out: $(head -c 600 <<<"$out")"
    fi
    sock=$ST_DIR/ga.sock
    local -a envv
    mapfile -d '' -t envv < <(ga_env)
    timeout 10 "${envv[@]}" "$GA_BIN" serve --config "$GA_CONF" --socket "$sock" \
        --workers 1 >"$ST_DIR/serve.out" 2>"$ST_DIR/serve.err" </dev/null
    rc=$?
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -qF -- "$words" "$ST_DIR/serve.err" &&
        grep -qF "cannot start" "$ST_DIR/serve.err" && [ ! -S "$sock" ]; then
        ok "serve refuses $name (exit $rc, no socket)"
    else
        not_ok "serve refuses $name" "rc $rc; stderr: $(head -c 600 "$ST_DIR/serve.err")"
    fi
}

refused "trustRemoteUser: true" "trustRemoteUser: true" \
    "'auth.trustRemoteUser: true' is refused: behind nginx, REMOTE_USER is the name in any client's 'Authorization: Basic' header"
check "... and says what to write instead" \
    grep -qF "write auth: {remoteUser: {variable: GA_REMOTE_USER, server: nginx}}" "$ST_DIR/serve.err"
refused "REMOTE_USER behind nginx" "remoteUser: {variable: REMOTE_USER, server: nginx}" \
    "REMOTE_USER behind nginx is what nginx's fastcgi_params fills from ANY client's 'Authorization: Basic' header"
refused "HTTP_X_REMOTE_USER (a client's header)" \
    "remoteUser: {variable: HTTP_X_REMOTE_USER, server: nginx}" \
    "HTTP_X_REMOTE_USER behind nginx is set from the client's own headers"
refused "a server it does not know" "remoteUser: {variable: GA_REMOTE_USER, server: caddy}" \
    "the server, nginx or apache (not 'caddy')"

# --- 2. the attack through the shipped snippet ------------------------------

start_mock
new_stack_dir
write_gemini_yaml "$ST_DIR/.gemini.yaml" test-key-not-a-real-key "$MOCK_URL"
site_yaml "$GA_CONF" "$SAFE_AUTH"
ga_run check --config "$GA_CONF"
check "check accepts the safe nginx form (exit 0)" test "$rc" -eq 0
start_stack --keep-dir --mock

assert_no_identity() {
    local label=$1
    if [ "$RES_STATUS" = 401 ] && [ "$(json_get 'j["error"]["code"]')" = unauthorized ] &&
        grep -qF "sign in first" "$RES_BODY"; then
        ok "$label"
    else
        not_ok "$label" "status $RES_STATUS; body: $(body_excerpt)"
    fi
}

req GET /api/agent/threads '' -u victim:x
assert_no_identity "shipped snippet: Basic victim:x is nobody (GET threads 401)"
req POST "$RUN" '{"prompt":"hi"}' -u victim:x
assert_no_identity "shipped snippet: Basic victim:x cannot run (POST run 401)"
req GET /api/agent/threads '' -H 'GA-Remote-User: victim'
assert_no_identity "shipped snippet: a GA-Remote-User header is nobody"
req GET /api/agent/threads '' -u victim:x -H 'GA-Remote-User: victim' -H 'Remote-User: victim'
assert_no_identity "shipped snippet: all three at once are nobody"
check "nothing ran for victim" test "$(sql 'SELECT count(*) AS n FROM threads')" = '[{"n": 0}]'

# --- 3. the safe nginx form for real -----------------------------------------

HTPASSWD=$T_TMP/agent.htpasswd
{
    printf 'alice:%s\n' "$(openssl passwd -apr1 alice-pw)"
    printf 'bob:%s\n' "$(openssl passwd -apr1 bob-pw)"
} >"$HTPASSWD"

# The shipped include, its password file's path replaced, and the
# snippet's commented include lines uncommented (each must be there).
signin_edit() {
    local dir=$1 n
    mkdir -p "$dir/snippets"
    grep -qF 'auth_basic_user_file /etc/nginx/agent.htpasswd;' "$REPO/nginx/gemini-agent-signin.conf" || return 1
    sed "s|/etc/nginx/agent.htpasswd|$HTPASSWD|" "$REPO/nginx/gemini-agent-signin.conf" \
        >"$dir/snippets/gemini-agent-signin.conf"
    n=$(grep -c '^        # include snippets/gemini-agent-signin.conf;$' "$dir/site.conf")
    [ "$n" -eq 2 ] || return 1
    sed -i 's|^        # include snippets/gemini-agent-signin.conf;$|        include snippets/gemini-agent-signin.conf;|' \
        "$dir/site.conf"
}
stop_nginx
GA_NGINX_EDIT=signin_edit
start_nginx 0

req POST "$RUN" '{"prompt":"hi"}' -u alice:alice-pw
assert_status 200 "signed in by nginx: alice's run is answered"
THREAD=$(json_get 'j["threadId"]')
check "... and its thread is alice's in the store" \
    test "$(sql 'SELECT user_id AS user FROM threads WHERE id = ?' "$THREAD")" = '[{"user": "alice"}]'
req GET /api/agent/threads '' -u alice:alice-pw
assert_json '[t["id"] for t in j["threads"]]' "[\"$THREAD\"]" "alice lists her thread"
req GET /api/agent/threads '' -u bob:bob-pw
assert_json 'j["threads"]' '[]' "bob, signed in, sees none of alice's threads"
req GET "/api/agent/threads/$THREAD" '' -u bob:bob-pw
assert_status 404 "bob cannot read alice's thread"

# nginx's own 401: the responder never sees these requests
req GET /api/agent/threads
assert_status 401 "no Authorization: nginx's 401"
req GET /api/agent/threads '' -u alice:wrong
assert_status 401 "a wrong password: 401"
req GET /api/agent/threads '' -H 'GA-Remote-User: alice'
assert_status 401 "a forged GA-Remote-User header alone: 401"
req GET /api/agent/threads '' -u victim:x -H 'GA-Remote-User: alice'
assert_status 401 "an unknown Basic user with a forged header: 401"
req POST "$RUN_STREAM" '{"prompt":"hi"}' -u bob:bob-pw -H 'GA-Remote-User: alice'
assert_status 200 "the stream location signs in too (bob)"
check "... as bob, whatever the forged header says" \
    test "$(sql "SELECT count(*) AS n FROM threads WHERE user_id = 'bob'")" = '[{"n": 1}]'
check "alice still has exactly her one thread" \
    test "$(sql "SELECT count(*) AS n FROM threads WHERE user_id = 'alice'")" = '[{"n": 1}]'
req GET /_jay/actions
assert_status 200 "the public chat routes ask no password"

finish
