#!/bin/bash
# t_vps_nginx.sh - docs/deploy/vps-nginx.md as written: its named blocks
# run in order in one shell, with only its `settings` block replaced (the
# test's prefix, site folder, user, unit file, nginx folder and address).
# Then what the recipe leaves to systemd and the system's nginx, the test
# does the same way: the unit's ExecStart runs as the unit's User and
# Group, and a private nginx, its workers www-data, includes the enabled
# site. A chat must come back through it, and the permissions setup chose
# must be the ones nginx and the responder need: www-data reads the pages
# and opens the socket, and not the key.
#
# Runs as root (it adds a system user, with a unique name, removed on
# exit); skipped otherwise.
source "$(dirname "${BASH_SOURCE[0]}")/../http/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/nginx_lib.sh"

RECIPE=$REPO/docs/deploy/vps-nginx.md
if [ "$(id -u)" -ne 0 ] || ! command -v runuser >/dev/null || ! getent group www-data >/dev/null; then
    skip "vps-nginx recipe" "needs root, runuser and the www-data group"
    finish
fi

# The recipe's own values, in the test's temp folder. www-data and the
# site's user must pass through it to reach the site.
chmod 0711 "$T_TMP"
SITE_USER=ga-vps-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
PORT=$(free_port) || bail "no free port"
cat >"$T_TMP/settings.sh" <<EOF
PREFIX=$T_TMP/prefix
SITE=$T_TMP/srv/mysite
SITE_USER=$SITE_USER
UNIT=$T_TMP/systemd/gemini-agent-mysite.service
NGINX_SITES=$T_TMP/sites-enabled
LISTEN=127.0.0.1:$PORT
EOF
mkdir -p "$T_TMP/srv" "$T_TMP/systemd" "$T_TMP/sites-enabled"
source "$T_TMP/settings.sh"
# On exit: the user's processes stopped (by PID), then the user removed,
# then lib.sh's cleanup.
remove_user() {
    stop_stack
    kill_leftover_workers
    userdel "$SITE_USER" >/dev/null 2>&1 || echo "# cannot remove the user $SITE_USER"
}
trap 'rc_=$?; remove_user; (exit "$rc_"); t_cleanup' EXIT

# run_block NAME: the recipe's block NAME, after the test's settings, in
# bash -e from the checkout; its output in $T_TMP/NAME.out. Sets rc.
run_block() {
    local body
    body=$("$PY" "$REPO/tests/deploy/recipe.py" "$RECIPE" "$1") ||
        bail "the recipe has no block '$1'"
    (cd "$REPO" && bash -e -c "$(cat "$T_TMP/settings.sh")"$'\n'"$body") \
        >"$T_TMP/$1.out" 2>&1 </dev/null
    rc=$?
    # its output, when it failed, as comments
    [ "$rc" -eq 0 ] || sed 's/^/# /' "$T_TMP/$1.out" | tail -n 15
}

run_block install
check "install: exit 0" test "$rc" -eq 0
check "install: the binary" test -x "$PREFIX/bin/gemini-agent"

run_block site
check "site: exit 0" test "$rc" -eq 0
check "site: the user exists, in www-data" \
    bash -c '[ "$(id -gn "$1")" = www-data ]' _ "$SITE_USER"
owner() { stat -c '%U:%G %a' "$SITE/$1"; }
check "site: the folder is the user's, group www-data, 0750" test "$(owner .)" = "$SITE_USER:www-data 750"
check "site: the key file is the user's alone" test "$(owner .gemini.yaml)" = "$SITE_USER:www-data 600"
check "site: the secret is the user's alone" test "$(owner .session-secret)" = "$SITE_USER:www-data 600"
check "site: agent.yaml, 0640" test "$(owner agent.yaml)" = "$SITE_USER:www-data 640"
check "site: www-data reads the pages" \
    bash -c 'runuser -u www-data -- cat "$1/www/index.html" "$1/www/agent/index.js" >/dev/null' _ "$SITE"
check "site: www-data cannot read the key" bash -c '! runuser -u www-data -- cat "$1/.gemini.yaml" 2>/dev/null' _ "$SITE"
check "site: another user cannot enter the site" bash -c '! runuser -u nobody -- ls "$1" >/dev/null 2>&1' _ "$SITE"

run_block check
check "check before the key: exit 1, the key named" \
    bash -c '[ "$1" -eq 1 ] && grep -q "no Gemini API key" "$2"' _ "$rc" "$T_TMP/check.out"
# "Put your Gemini API key in apiKey": the mock's, as the site's user.
start_mock
write_gemini_yaml "$T_TMP/gemini.yaml" test-key-not-a-real-key "$MOCK_URL"
runuser -u "$SITE_USER" -- tee "$SITE/.gemini.yaml" <"$T_TMP/gemini.yaml" >/dev/null ||
    bail "cannot put the key in $SITE/.gemini.yaml"
run_block check
check "the key file stays the user's alone" test "$(owner .gemini.yaml)" = "$SITE_USER:www-data 600"
check "check with the key: exit 0, ok" \
    bash -c '[ "$1" -eq 0 ] && [ "$(tail -n 1 "$2")" = ok ]' _ "$rc" "$T_TMP/check.out"

run_block unit
check "unit: exit 0" test "$rc" -eq 0
if command -v systemd-analyze >/dev/null; then
    systemd-analyze verify "$UNIT" >"$T_TMP/verify.out" 2>&1
    check "unit: systemd-analyze verify ($(head -c 300 "$T_TMP/verify.out" | tr '\n' ' '))" test $? -eq 0
fi
# What systemd would run: ExecStart, as User and Group.
exec_start=$(sed -n 's/^ExecStart=//p' "$UNIT")
u=$(sed -n 's/^User=//p' "$UNIT") g=$(sed -n 's/^Group=//p' "$UNIT")
check "unit: runs as the site's user and www-data" test "$u:$g" = "$SITE_USER:www-data"
GA_PIDFILE=$SITE/run/serve.pid # the user writes it
# shellcheck disable=SC2086  # ExecStart's words, as systemd splits them
env -i PATH="$PATH" setpriv --reuid="$u" --regid="$g" --init-groups $exec_start \
    --workers 1 --pid-file "$GA_PIDFILE" >"$T_TMP/serve.out" 2>"$T_TMP/serve.err" </dev/null &
GA_PID=$!
GA_BIN=$PREFIX/bin/gemini-agent
GA_SOCK=$SITE/run/gemini-agent.sock
remember_pids "$GA_PID"
wait_until 5000 stack_ready 1 ||
    bail "the unit's ExecStart did not come up: $(tail -c 600 "$T_TMP/serve.err" | tr '\n' ' ')"
check "the socket: the user's, group www-data, 0660" \
    test "$(stat -c '%U:%G %a' "$GA_SOCK")" = "$SITE_USER:www-data 660"

run_block nginx
check "nginx: exit 0" test "$rc" -eq 0
enabled=$NGINX_SITES/mysite.conf
check "nginx: the site is enabled" test -L "$enabled"
check "nginx: it listens on LISTEN" grep -qxF "    listen $LISTEN;" "$enabled"
NGX_USER=www-data site_nginx_start "$enabled" "$PORT"

req GET /
assert_status 200 "GET /: the page setup wrote"
assert_body_contains 'data-gemini-chat' "GET /: it holds the widget"
req GET /agent/chat.js
assert_status 200 "GET /agent/chat.js"
req POST /_jay/actions/geminiAgent.sendMessage \
    '{"message":"[[mock:text say=\"Served from the VPS recipe.\"]] hi","history":[]}'
assert_status 200 "a chat through nginx (workers www-data) and the socket"
assert_json "j.get('message')" "Served from the VPS recipe." "a chat: the mock's answer"

finish
