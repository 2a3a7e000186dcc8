#!/bin/bash
# t_shared_hosting.sh - docs/deploy/shared-hosting.md as written, on Apache
# with suEXEC (Debian's apache2-suexec-pristine) and no SetEnv anywhere:
# (a) a user's ~/public_html/agent (mod_userdir), (b) a subfolder of a site
# under /var/www with SuexecUserGroup. AllowOverride is what the recipe
# says a host must allow, no more. The recipe's blocks run as the user, a
# real one (useradd), removed on exit with its home and the /var/www site.
# SH_DEBUG=1 prints Apache's and suEXEC's logs at the end.
source "$(dirname "${BASH_SOURCE[0]}")/../http/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/apache_lib.sh"

RECIPE=$REPO/docs/deploy/shared-hosting.md
require_binary
[ "$(id -u)" -eq 0 ] || { skip "shared hosting: needs root (useradd, suEXEC)"; finish; }
apache_have cgi suexec userdir || { skip "shared hosting: apache2, suexec or userdir missing"; finish; }
[ -u "$(readlink -f /usr/lib/apache2/suexec)" ] || { skip "shared hosting: suexec is not setuid"; finish; }

SH_USER=gash$$$(od -An -N2 -tx1 /dev/urandom | tr -d ' \n')
SH_HOME=$(mktemp -d /tmp/ga-shhome.XXXXXX)
SH_WWW=/var/www/ga-shared-$SH_USER
sh_cleanup() {
    apache_stop
    userdel "$SH_USER" 2>/dev/null
    getent group "$SH_USER" >/dev/null && groupdel "$SH_USER" 2>/dev/null
    rm -rf "$SH_HOME" "$SH_WWW"
}
# shellcheck disable=SC2154  # rc is set inside the trap
trap 'rc=$?; sh_cleanup; (exit $rc); t_cleanup' EXIT

useradd -U -M -d "$SH_HOME" -s /bin/bash "$SH_USER" || bail "useradd failed"
chown "$SH_USER:$SH_USER" "$SH_HOME"
chmod 711 "$SH_HOME"
mkdir -p "$SH_WWW/html/shop"
chown -R "$SH_USER:$SH_USER" "$SH_WWW/html"
chmod 755 "$SH_WWW" "$SH_WWW/html"

# What the user uploaded: a checkout's files the recipe names (DIST).
DIST=$SH_HOME/gemini-agent
mkdir -p "$DIST/build" "$DIST/www" "$DIST/conf" "$SH_HOME/public_html"
cp "$GA_BIN" "$DIST/build/gemini-agent"
cp -r "$REPO/www/agent" "$REPO/www/vendor" "$DIST/www/"
cp "$REPO/conf/htaccess" "$DIST/conf/htaccess"
cp "$REPO/conf/hosting-agent.yaml" "$DIST/conf/hosting-agent.yaml"
chown -R "$SH_USER:$SH_USER" "$SH_HOME"
chmod 755 "$SH_HOME/public_html"

start_mock
KEY=test-key-not-a-real-key

# as_user SITE BLOCK...: the recipe's blocks, as the user, the vars block
# with the test's values (SITE, DIST, KEY) in place of the owner's.
as_user() {
    local site=$1 b script
    shift
    script="SITE='$site'; DIST='$DIST'; KEY='$KEY'; set -e"$'\n'
    for b in "$@"; do
        script+=$("$PY" "$REPO/tests/deploy/recipe.py" "$RECIPE" "$b") || bail "recipe block $b"
        script+=$'\n'
    done
    (cd "$SH_HOME" && runuser -u "$SH_USER" -- env -i PATH=/usr/bin:/bin HOME="$SH_HOME" bash -c "$script")
}

# the recipe's vars block is the owner's: check it only names what we set
vars=$("$PY" "$REPO/tests/deploy/recipe.py" "$RECIPE" vars | sed 's/=.*//' | tr '\n' ' ')
check "the recipe's values are SITE, DIST and KEY" test "$vars" = "SITE DIST KEY "

SITE_A=$SH_HOME/public_html/agent
SITE_B=$SH_WWW/html/shop
for site in "$SITE_A" "$SITE_B"; do
    as_user "$site" install key >"$T_TMP/install.out" 2>&1 ||
        bail "the install block failed: $(tail -c 400 "$T_TMP/install.out")"
    # the test's one addition: Gemini is the loopback mock
    printf "baseUrl: '%s'\n" "$MOCK_URL" >>"$site/.gemini.yaml"
    as_user "$site" chmod >"$T_TMP/chmod.out" 2>&1 || bail "the chmod block failed: $(cat "$T_TMP/chmod.out")"
    if as_user "$site" check >"$T_TMP/check.out" 2>&1; then
        ok "check as the user: ok ($site)"
    else
        not_ok "check as the user: ok ($site)" "$(tail -c 600 "$T_TMP/check.out")"
    fi
done

cat >"$T_TMP/site.conf" <<CONF
# (b) the site under /var/www, its CGI programs run as its owner
DocumentRoot "$SH_WWW/html"
SuexecUserGroup $SH_USER $SH_USER
# (a) ~user, as Debian's userdir.conf, with CGI allowed
UserDir public_html
UserDir disabled root
<Directory "$SH_HOME/public_html">
    AllowOverride FileInfo AuthConfig Limit Indexes Options=ExecCGI,Indexes,MultiViews
    Options MultiViews Indexes SymLinksIfOwnerMatch IncludesNoExec
    Require all granted
</Directory>
<Directory "$SH_WWW/html">
    AllowOverride FileInfo AuthConfig Limit Indexes Options=ExecCGI,Indexes,MultiViews
    Options SymLinksIfOwnerMatch
    Require all granted
</Directory>
CONF
apache_start "$T_TMP/site.conf" cgi suexec userdir
if grep -q "suEXEC mechanism enabled" "$AP_DIR/logs/error.log" "$AP_DIR/stdout" 2>/dev/null; then
    ok "apache: suEXEC is on"
else
    not_ok "apache: suEXEC is on" "$(tail -c 400 "$AP_DIR/logs/error.log")"
fi

BASE_URL=$AP_URL # req's target (lib.sh)
export BASE_URL
CHAT='{"message":"hello","history":[],"toolDefinitions":[],"pageState":{}}'
for prefix in "/~$SH_USER/agent" /shop; do
    case $prefix in /shop) site=$SITE_B ;; *) site=$SITE_A ;; esac
    req GET "$prefix/_jay/actions"
    assert_status 200 "$prefix: GET _jay/actions under the prefix"
    req POST "$prefix/_jay/actions/geminiAgent.sendMessage" "$CHAT"
    assert_status 200 "$prefix: a chat"
    assert_true 'isinstance(j.get("history"), list) and len(j["history"]) >= 2' "$prefix: the chat answered with a history"
    assert_true 'bool(j.get("signatures"))' "$prefix: the answer is signed (auth.secretFile read by the user's CGI)"
    req POST "$prefix/_jay/actions/geminiAgent.sendMessage" "$CHAT" -H 'Accept: application/x-ndjson'
    assert_status 200 "$prefix: a stream"
    check "$prefix: the stream is NDJSON" grep -qi '^content-type: application/x-ndjson' "$RES_HDRS"
    token=$(runuser -u "$SH_USER" -- "$site/gemini-agent.cgi" auth issue --user "$SH_USER" --config "$site/agent.yaml" 2>"$T_TMP/issue.err") ||
        not_ok "$prefix: auth issue as the user" "$(cat "$T_TMP/issue.err")"
    req POST "$prefix/api/agent/run" '{"prompt":"hello"}' -H "Authorization: Bearer $token"
    assert_status 200 "$prefix: the run API with a Bearer token"
    assert_json 'j["status"]' completed "$prefix: the run completed"
    req POST "$prefix/api/agent/run" '{"prompt":"hello"}'
    assert_status 401 "$prefix: the run API without a token: 401"
    req GET "$prefix/agent/chat.js"
    assert_status 200 "$prefix: the widget's files are served under the prefix"
    for f in agent.yaml .gemini.yaml .session-secret var/; do
        req GET "$prefix/$f"
        assert_status 403 "$prefix: $f is not served"
    done
    req GET "$prefix/../_jay/actions" --path-as-is
    check "$prefix: a .. path reaches no route" test "$RES_STATUS" != 200
    # the secret is the user's alone, and the program ran as the user
    check "$prefix: .session-secret is 0600 and the user's" \
        test "$(stat -c '%a %U' "$site/.session-secret")" = "600 $SH_USER"
    check "$prefix: the web server's user cannot read it" \
        sh -c "! runuser -u www-data -- cat '$site/.session-secret' >/dev/null 2>&1"
    check "$prefix: the data the CGI wrote is the user's" \
        test -z "$(find "$site/var" ! -user "$SH_USER" | head -1)"
    check "$prefix: the CGI wrote its data (the store)" test -n "$(find "$site/var" -type f | head -1)"
done
check "no SetEnv anywhere" sh -c "! grep -Eqi '^[[:space:]]*SetEnv[[:space:]]' '$T_TMP/site.conf' '$SITE_A/.htaccess'"

[ -z "${SH_DEBUG:-}" ] || { cat "$AP_DIR/logs/error.log"; tail -5 /var/log/apache2/suexec.log; cat "$T_TMP/check.out"; }
finish
