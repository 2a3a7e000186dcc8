#!/bin/bash
# t_remote_user_apache.sh - Apache's sign-in for the run API (docs/http-api.md
# "Identity"): conf/apache-cgi.conf as shipped, run by a
# private Apache (a temp ServerRoot, a free loopback port, stopped by PID)
# with the binary as its CGI program and agent.yaml saying
# auth.remoteUser: {variable: REMOTE_USER, server: apache}.
#
# 1. As shipped (no sign-in): `Authorization: Basic victim:x` sets no
#    REMOTE_USER, so it signs nobody in; nor does a `Remote-User` header.
# 2. With the <Location>'s Include of conf/apache-signin.conf uncommented
#    (the file as shipped, its password file's path replaced) and an
#    htpasswd file written here: the right password signs that user in
#    (the run's thread is theirs in the store); no header, a wrong
#    password or a forged header gets Apache's 401; /_jay/actions stays
#    open.
# Only the paths of the shipped files are replaced; the main httpd.conf
# around them (modules, port, logs) is this test's.
source "$(dirname "${BASH_SOURCE[0]}")/runapi_lib.sh"
source "$HTTP_DIR/../deploy/apache_lib.sh"
if ! apache_have cgi authn_file; then
    skip "$T_NAME" "no apache2 (scripts/install-deps.sh installs it)"
    finish
fi

HTPASSWD=$AP_DIR/agent.htpasswd
stop_apache() { apache_stop; }

# start_apache SIGNIN: the shipped conf/apache-cgi.conf, paths replaced,
# in apache_lib.sh's main config; SIGNIN=1 uncomments its Include of the
# shipped conf/apache-signin.conf.
start_apache() {
    local signin=$1
    mkdir -p "$AP_DIR"
    for want in 'DocumentRoot /srv/gemini-agent/www' \
        'ScriptAlias /cgi-bin/gemini-agent /srv/gemini-agent/build/gemini-agent' \
        '    SetEnv GEMINI_AGENT_CONFIG /srv/gemini-agent/conf/agent.yaml' \
        '    # Include /etc/apache2/gemini-agent-signin.conf'; do
        grep -qxF -- "$want" "$REPO/conf/apache-cgi.conf" ||
            bail "conf/apache-cgi.conf lacks the line '$want'"
    done
    grep -qF 'AuthUserFile /etc/apache2/agent.htpasswd' "$REPO/conf/apache-signin.conf" ||
        bail "conf/apache-signin.conf lacks its AuthUserFile line"
    sed -e "s|/etc/apache2/agent.htpasswd|$HTPASSWD|" "$REPO/conf/apache-signin.conf" \
        >"$AP_DIR/gemini-agent-signin.conf"
    sed -e "s|/srv/gemini-agent/www|$REPO/www|" \
        -e "s|/srv/gemini-agent/build/gemini-agent|$GA_BIN|" \
        -e "s|/srv/gemini-agent/conf/agent.yaml|$GA_CONF|" \
        "$REPO/conf/apache-cgi.conf" >"$AP_DIR/site.conf"
    if [ "$signin" = 1 ]; then
        sed -i "s|^    # Include /etc/apache2/gemini-agent-signin.conf\$|    Include $AP_DIR/gemini-agent-signin.conf|" \
            "$AP_DIR/site.conf"
    fi
    # Root starts Apache; its children run as www-data (apache_lib.sh)
    # and run the program, which reads the site's files: give them those.
    if [ "$(id -u)" -eq 0 ]; then
        chmod 711 "$T_TMP"
        chown -R www-data:www-data "$ST_DIR" "$AP_DIR"
    fi
    apache_start "$AP_DIR/site.conf" cgi authn_file
    BASE_URL=$AP_URL
}

start_mock
new_stack_dir
write_gemini_yaml "$ST_DIR/.gemini.yaml" test-key-not-a-real-key "$MOCK_URL"
write_secret "$ST_DIR/session.key" || bail "cannot write the secret"
write_config "$GA_CONF" "$RUN_LIMITS" '' \
    "auth: {secretFile: '$ST_DIR/session.key', remoteUser: {variable: REMOTE_USER, server: apache}}"
ga_run check --config "$GA_CONF"
check "check accepts the Apache form (exit 0)" test "$rc" -eq 0
mkdir -p "$AP_DIR"
{
    printf 'alice:%s\n' "$(openssl passwd -apr1 alice-pw)"
    printf 'bob:%s\n' "$(openssl passwd -apr1 bob-pw)"
} >"$HTPASSWD"

# 401 from the program: no identity at all
assert_no_identity() {
    if [ "$RES_STATUS" = 401 ] && grep -qF "sign in first" "$RES_BODY"; then
        ok "$1"
    else
        not_ok "$1" "status $RES_STATUS; body: $(body_excerpt)"
    fi
}

# --- 1. as shipped: nothing sets REMOTE_USER ----------------------------------
start_apache 0
req GET /_jay/actions
assert_status 200 "apache CGI: the public chat route answers"
req GET /api/agent/threads '' -u victim:x
assert_no_identity "as shipped: Basic victim:x is nobody"
req POST "$RUN" '{"prompt":"hi"}' -u victim:x -H 'Remote-User: victim'
assert_no_identity "as shipped: Basic victim:x and a Remote-User header cannot run"

# --- 2. Apache signs users in ---------------------------------------------------
start_apache 1
req POST "$RUN" '{"prompt":"hi"}' -u alice:alice-pw
assert_status 200 "signed in by Apache: alice's run is answered"
THREAD=$(json_get 'j["threadId"]')
check "... and its thread is alice's in the store" \
    test "$(sql 'SELECT user_id AS user FROM threads WHERE id = ?' "$THREAD")" = '[{"user": "alice"}]'
req GET /api/agent/threads '' -u alice:alice-pw
assert_json '[t["id"] for t in j["threads"]]' "[\"$THREAD\"]" "alice lists her thread"
req GET /api/agent/threads '' -u bob:bob-pw -H 'Remote-User: alice'
assert_json 'j["threads"]' '[]' "bob with a forged Remote-User header is bob"
req GET /api/agent/threads
assert_status 401 "no Authorization: Apache's 401"
req GET /api/agent/threads '' -u alice:wrong
assert_status 401 "a wrong password: 401"
req GET /api/agent/threads '' -H 'Remote-User: alice'
assert_status 401 "a forged Remote-User header alone: 401"
req GET /_jay/actions
assert_status 200 "the public chat route asks no password"
stop_apache

finish
