# tests/deploy/apache_checks.sh - shared by t_apache_cgi.sh,
# t_apache_fcgid.sh and t_apache_proxy_fcgi.sh: a site owned by a user of
# its own (not www-data), the mock Gemini server, and the same four checks
# through whichever Apache mode the test set up:
#   chat     sendMessage answered by the mock;
#   stream   the NDJSON answer arrives line by line: its first lines come
#            >= 1 s before the mock's delayed remainder (3 chunks, 0.7 s
#            apart);
#   run API  a run with `Authorization: Bearer <token from auth issue>`
#            (so Apache passed the header on), 401 without;
#   approval a run whose model calls shop.addReview waits for approval;
#            approve_once resumes it and the review is written.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/apache_checks.sh"
#   ap_site_init RECIPE [MODULE...]  (root only: skips the test otherwise)
#   ... the recipe's blocks, apache_start ...
#   ap_checks "LABEL"
#
# shellcheck shell=bash disable=SC2034  # the variables are for the tests
DEPLOY_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
source "$DEPLOY_DIR/../http/runapi_lib.sh"
source "$DEPLOY_DIR/apache_lib.sh"

READER=$HTTP_DIR/conf/stream_reader.py
RECIPE=$DEPLOY_DIR/recipe.py
SEND=/_jay/actions/geminiAgent.sendMessage
# the page the chat pretends to be: no tools, a small state
TOOLS='[]'
PAGE='{"cart":{"items":[]}}'
SITE_USER=
SITE=

# ap_cleanup: the test's user and group go with it (then lib.sh's cleanup).
ap_cleanup() {
    local rc=$?
    apache_stop
    if [ -n "$SITE_USER" ]; then
        [ -z "${AP_SERVE_PID:-}" ] || stop_pid "$AP_SERVE_PID" 5000
        userdel "$SITE_USER" 2>/dev/null
        getent group "$SITE_USER" >/dev/null && groupdel "$SITE_USER" 2>/dev/null
    fi
    (exit "$rc")
    t_cleanup
}

# recipe_block FILE NAME: the named block of docs/deploy/FILE, or bail.
recipe_block() {
    "$PY" "$RECIPE" "$REPO/docs/deploy/$1" "$2" 2>"$T_TMP/recipe.err" ||
        bail "docs/deploy/$1 has no block '$2': $(cat "$T_TMP/recipe.err")"
}

# ap_site_init RECIPE: SITE_USER (a system user made here, removed on exit)
# owns SITE=$T_TMP/owner/site, made by the recipe's `setup` block run as
# written as that user (`gemini-agent` on the PATH is GA_BIN, so the
# snippets setup renders name it), with the mock's key. The tests' one
# addition, as that user: the demo shop's plugin folder in agent.yaml's
# actions: (a side-effect action, for the approval) and the mock's URL as
# .gemini.yaml's baseUrl. GA_CONF is the site's agent.yaml.
ap_site_init() {
    local recipe=$1 owner
    shift
    [ "$(id -u)" -eq 0 ] ||
        { skip "$T_NAME" "needs root (a user of its own, chgrp www-data)"; finish; }
    apache_have "$@" ||
        { skip "$T_NAME" "no apache2 with mod_${*// / mod_} (scripts/install-deps.sh)"; finish; }
    getent group www-data >/dev/null || bail "no www-data group"
    SITE_USER=gaap$$
    trap ap_cleanup EXIT
    useradd --system --no-create-home --shell /usr/sbin/nologin --user-group \
        "$SITE_USER" || bail "cannot add the user $SITE_USER"
    chmod 711 "$T_TMP"
    ap_sanitizer_logs_open
    # the owner's folder, which Apache's user may pass through (the
    # recipe: "enter the folders above $SITE")
    owner=$T_TMP/owner
    install -d -o "$SITE_USER" -g "$SITE_USER" -m 0711 "$owner"
    SITE=$owner/site
    GA_CONF=$SITE/agent.yaml
    STORE_DB=$SITE/var/agent.db
    REVIEWS_FILE=$SITE/var/shop-reviews.jsonl
    # `gemini-agent` on the PATH, as after `make install`
    mkdir -p "$T_TMP/bin"
    ln -s "$GA_BIN" "$T_TMP/bin/gemini-agent"
    chmod 755 "$T_TMP/bin"
    PATH=$T_TMP/bin:$PATH
    start_mock
    AP_KEY=test-key-not-a-real-key
    ap_run_block "$recipe" setup "$SITE_USER"
    check "setup: the snippets name the binary under test" \
        grep -qF "$(readlink -f "$GA_BIN")" "$SITE/server/apache-cgi.conf"
    check "setup: the key is in .gemini.yaml, which stays 0600" \
        test "$(grep -c "^apiKey: '$AP_KEY'\$" "$SITE/.gemini.yaml") $(stat -c %a "$SITE/.gemini.yaml")" = "1 600"
    setpriv --reuid="$SITE_USER" --regid="$SITE_USER" --init-groups sed -i \
        -e "s|^actions: \[actions\]|actions: [actions, '$REPO/actions']|" "$GA_CONF" ||
        bail "cannot add the shop to $GA_CONF"
    setpriv --reuid="$SITE_USER" --regid="$SITE_USER" --init-groups sed -i \
        -e "s|^baseUrl: .*|baseUrl: '$MOCK_URL'|" "$SITE/.gemini.yaml" ||
        bail "cannot add the mock's URL to $SITE/.gemini.yaml"
    if ! grep -qF "actions: [actions, '$REPO/actions']" "$GA_CONF" ||
        ! grep -qxF "baseUrl: '$MOCK_URL'" "$SITE/.gemini.yaml"; then
        bail "setup's agent.yaml or .gemini.yaml is not as the test expects"
    fi
}

# token_for USER (replaces runapi_lib.sh's): a token by `auth issue` run as
# AP_RUN_AS, the user the program runs as (the secret is that user's own).
token_for() {
    local key="$ST_N/$1"
    if [ -z "${TOKENS[$key]:-}" ]; then
        TOKENS[$key]=$(setpriv --reuid="$AP_RUN_AS" --regid="$AP_RUN_AS" --init-groups \
            env -i PATH="$PATH" "$GA_BIN" auth issue --user "$1" \
            --config "$GA_CONF" 2>"$T_TMP/issue.err") ||
            bail "auth issue --user $1 as $AP_RUN_AS failed: $(cat "$T_TMP/issue.err")"
    fi
    TOKEN=${TOKENS[$key]}
}
AP_RUN_AS=www-data

# ap_sanitizer_logs_open: under ASan with log_path=DIR/name (scripts/test.sh
# under_asan), the program runs as www-data or the site's user: let them
# write their reports into DIR (sticky, as /tmp), or they would be lost.
ap_sanitizer_logs_open() {
    local o d
    for o in "${ASAN_OPTIONS:-}" "${UBSAN_OPTIONS:-}"; do
        [[ $o =~ (^|:)log_path=([^:]+) ]] || continue
        d=$(dirname "${BASH_REMATCH[2]}")
        [ -d "$d" ] && chmod 1733 "$d"
    done
}

# ap_run_block FILE NAME [USER]: run the recipe's block as written, with
# SITE, SITE_USER and KEY (AP_KEY, the mock's) set, as root or as USER.
ap_run_block() {
    local code
    code=$(recipe_block "$1" "$2")
    if [ -n "${3:-}" ]; then
        (cd / && setpriv --reuid="$3" --regid="$3" --init-groups \
            env SITE="$SITE" SITE_USER="$SITE_USER" KEY="${AP_KEY:-}" bash -euc "$code")
    else
        SITE=$SITE SITE_USER=$SITE_USER KEY=${AP_KEY:-} bash -euc "$code"
    fi >"$T_TMP/block.out" 2>&1 ||
        bail "docs/deploy/$1 block '$2' failed: $(tail -c 400 "$T_TMP/block.out")"
    ok "docs/deploy/$1: block '$2' runs as written${3:+ (as $3)}"
}

# ap_www_data_checks: after apache-cgi.md's `permissions`, the program's
# user (www-data) reads the site and writes var/; nobody else reads it.
ap_www_data_checks() {
    as_www() { setpriv --reuid=www-data --regid=www-data --init-groups "$@"; }
    check "permissions: www-data reads agent.yaml and the key" \
        as_www cat "$GA_CONF" "$SITE/.gemini.yaml" >/dev/null
    check "permissions: www-data cannot change agent.yaml" \
        bash -c '! setpriv --reuid=www-data --regid=www-data --init-groups test -w "$1"' _ "$GA_CONF"
    check "permissions: the secret is www-data's, 0600" \
        test "$(stat -c '%U %a' "$SITE/.session-secret")" = "www-data 600"
    check "permissions: nobody else reads the key" \
        bash -c '! setpriv --reuid=nobody --regid=nogroup --clear-groups cat "$1" 2>/dev/null' _ "$SITE/.gemini.yaml"
    as_www env -i PATH="$PATH" ${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} \
        ${UBSAN_OPTIONS:+UBSAN_OPTIONS=$UBSAN_OPTIONS} \
        gemini-agent check --config "$GA_CONF" >"$T_TMP/check.out" 2>&1
    # a key file shared with www-data's group is how the CGI and mod_fcgid
    # read it: check run as www-data says so in a note, not a problem
    check "permissions: check as www-data says ok ($(grep -v '^note: ' "$T_TMP/check.out" | head -n 3 | tr '\n' ' ' | head -c 300))" \
        test "$(tail -n 1 "$T_TMP/check.out")" = ok
    check "permissions: ... and notes the key shared with its group" \
        grep -q 'is shared with your group' "$T_TMP/check.out"
}

# ap_snippet NAME: the site's server/NAME as setup rendered it, checked to
# hold no placeholder path; apache_start Includes it unchanged.
ap_snippet() {
    local f=$SITE/server/$1
    [ -f "$f" ] || bail "setup wrote no $f"
    if grep -nE '/srv/gemini-agent/|/run/gemini-agent/' "$f" >"$T_TMP/left.txt"; then
        bail "$f: a placeholder path left: $(head -1 "$T_TMP/left.txt")"
    fi
    AP_SNIPPET=$f
}

# stream_post PATH BODY_FILE NAME: POST with Accept: application/x-ndjson,
# each line timestamped as it arrives (stream_reader.py); RES_BODY is the
# reader's summary, kept as S[NAME].
stream_post() {
    mkdir -p "$SAVED_DIR"
    : >"$RES_HDRS"
    RES_DESC="stream POST $1"
    curl -sS -N --max-time 30 -D "$RES_HDRS" -o - -X POST \
        -H 'Content-Type: application/json' -H 'Accept: application/x-ndjson' \
        --data-binary "@$2" "$BASE_URL$1" 2>"$T_TMP/curl.err" |
        "$PY" "$READER" lines --head "$RES_HDRS" --out "$RES_BODY"
    cp "$RES_BODY" "$SAVED_DIR/$3.json"
    RES_STATUS=$(pyjson 'j["status"]' "$RES_BODY")
}

# chat_body FILE MESSAGE: a sendMessage body.
chat_body() {
    printf '{"message":"%s","history":[],"toolDefinitions":%s,"pageState":%s}' \
        "$2" "$TOOLS" "$PAGE" >"$1"
}

# ap_checks LABEL: the four checks against BASE_URL=AP_URL.
ap_checks() {
    local l=$1 appr
    BASE_URL=$AP_URL
    req GET /_jay/actions
    assert_status 200 "$l: GET /_jay/actions (the action list)"
    mock_reset
    chat_body "$T_TMP/chat.json" "hello"
    req POST "$SEND" "@$T_TMP/chat.json"
    assert_py "$l: chat" <<'EOF'
status ==> 200
r['type'] ==> 'response'
r['message'] ==> 'Hello from the mock.'
len(reqs) ==> 1
EOF

    mock_reset
    chat_body "$T_TMP/stream.json" "[[mock:text chunks=3 gap=700]] hello"
    stream_post "$SEND" "$T_TMP/stream.json" stream
    assert_py "$l: stream" <<'EOF'
status ==> 200
hdr('Content-Type') ==> 'application/x-ndjson; charset=utf-8'
(objs := [l['obj'] for l in r['lines']])[-1]['type'] ==> 'result'
objs[-1]['result']['message'] ==> 'Hello from the mock.'
(deltas := [l for l in r['lines'] if l['obj']['type'] == 'delta']) != []
three chunks, three deltas :: len(deltas) ==> 3
the first line arrives >= 1 s before the end (ms) :: min(1000, round(r['end_ms'] - r['lines'][0]['ms'])) ==> 1000
the first delta arrives >= 1 s before the end (ms) :: min(1000, round(r['end_ms'] - deltas[0]['ms'])) ==> 1000
the deltas arrive apart (ms, at least 300) :: [min(300, round(b['ms'] - a['ms'])) for a, b in zip(deltas, deltas[1:])] ==> [300, 300]
EOF

    mock_reset
    run_as ann "hi"
    assert_py "$l: run API with a Bearer token" <<'EOF'
status ==> 200
r['ok'] ==> True
r['status'] ==> 'completed'
r['summary'] ==> 'Hello from the mock.'
EOF
    req POST "$RUN" '{"prompt":"hi"}'
    assert_status 401 "$l: run API without a token: 401"

    mock_reset
    run_as ann "$(review_marker '{"productId":"p004","rating":5,"text":"Via Apache"}') review it"
    save_res sup
    assert_py "$l: approval required" <<'EOF'
status ==> 200
r['status'] ==> 'awaiting_confirmation'
r['mode'] ==> 'approval_required'
r['approval']['tool'] ==> 'shop.addReview'
EOF
    check "$l: no review before the approval" test "$(count_lines "$REVIEWS_FILE")" = 0
    appr=$(pyjson 'j["approval"]["id"]' "$SAVED_DIR/sup.json")
    export APPR=$appr
    api ann GET '/api/agent/approvals?status=pending'
    assert_py "$l: the approval is listed (a route with a query string)" <<'EOF'
status ==> 200
[a['status'] for a in r['approvals'] if a['id'] == E['APPR']] ==> ['pending']
EOF
    api ann POST "/api/agent/approvals/$appr" '{"decision":"approve_once"}'
    assert_py "$l: approve_once resumes the run" <<'EOF'
status ==> 200
r['status'] ==> 'completed'
r['runId'] ==> S['sup']['runId']
r['output']['review']['text'] ==> 'Via Apache'
EOF
    check "$l: the review is written" test "$(count_lines "$REVIEWS_FILE")" = 1
}
