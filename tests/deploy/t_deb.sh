#!/bin/bash
# t_deb.sh - the Debian package, as docs/deploy/debian-package.md installs
# it (its named blocks, run as written): make deb, dpkg -i, the unit
# verified offline (no systemd as PID 1 here), the unit's own ExecStart
# line run as the package's user in the folder RuntimeDirectory would make,
# against the mock Gemini (key and URL in the installed .gemini.yaml), a
# chat through a private nginx running the package's nginx site with its
# workers as www-data, then dpkg --purge and nothing of it left.
#
# Root only (it installs a system package); the exit trap purges the
# package even when a check fails, so a second run starts clean.
# shellcheck shell=bash
source "$(dirname "${BASH_SOURCE[0]}")/../http/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/nginx_lib.sh"

RECIPE=$REPO/docs/deploy/debian-package.md
UNIT=/usr/lib/systemd/system/gemini-agent.service
PKG=gemini-agent

if [ "$(id -u)" -ne 0 ]; then
    skip "$T_NAME" "needs root (dpkg -i)"
    finish
fi
for tool in dpkg-deb dpkg-shlibdeps systemd-analyze setpriv adduser nginx curl; do
    command -v "$tool" >/dev/null || { skip "$T_NAME" "$tool is not installed"; finish; }
done

# recipe NAME: the recipe's block NAME, run by bash -e in the checkout.
recipe() {
    local body
    body=$("$PY" "$REPO/tests/deploy/recipe.py" "$RECIPE" "$1") || bail "recipe block '$1' is missing"
    (cd "$REPO" && bash -e -c "$body") >"$T_TMP/recipe-$1.out" 2>"$T_TMP/recipe-$1.err"
}

purge_quietly() {
    dpkg --purge "$PKG" >/dev/null 2>&1
    rm -rf /run/gemini-agent
}

# The package goes whatever happens; then lib.sh's own cleanup.
deb_cleanup() {
    local rc=$?
    stop_responder
    stop_nginx
    dpkg-query -W "$PKG" >/dev/null 2>&1 && purge_quietly
    (exit "$rc")
    t_cleanup
}
trap deb_cleanup EXIT

# A package left by a run that was killed (installed, or removed with its
# conffiles kept): start from nothing.
if dpkg-query -W "$PKG" >/dev/null 2>&1; then
    echo "# $T_NAME: purging a $PKG package left installed"
    purge_quietly
fi

# unit_key KEY: the installed unit's value of KEY (the last one).
unit_key() { sed -n "s/^$1=//p" "$UNIT" | tail -n 1; }

# same NAME GOT WANT: ok when GOT is WANT.
same() {
    if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got '$2', want '$3'"; fi
}

# succeeds NAME COMMAND...: ok when COMMAND succeeds (quietly); fails: when it fails.
succeeds() { if "${@:2}" >/dev/null 2>&1; then ok "$1"; else not_ok "$1" "failed: ${*:2}"; fi; }
fails() { if "${@:2}" >/dev/null 2>&1; then not_ok "$1" "succeeded: ${*:2}"; else ok "$1"; fi; }

# ---------------------------------------------------------------------------
# 1. Build and install

if recipe build; then ok "recipe build: make deb"; else
    bail "make deb failed: $(tail -c 600 "$T_TMP/recipe-build.err" | tr '\n' ' ')"
fi
DEB=$(find "$REPO/build-deb" -maxdepth 1 -name 'gemini-agent_*.deb' | head -n 1)
[ -f "$DEB" ] || bail "make deb made no build-deb/gemini-agent_*.deb"
depends=$(dpkg-deb -f "$DEB" Depends)
case $depends in
*libcurl*libfcgi*libjansson*libsqlite3*libssl*libyaml*adduser*) ok "Depends from the linked libraries: $depends" ;;
*) not_ok "Depends from the linked libraries" "$depends" ;;
esac
# the Makefile's VERSION (make print-version where it exists)
version=$(make -s -C "$REPO" --no-print-directory print-version 2>/dev/null ||
          sed -n 's/^VERSION *?*= *//p' "$REPO/Makefile" | head -n 1)
same "Version is the Makefile's" "$(dpkg-deb -f "$DEB" Version)" "${version:-(none)}"
if command -v lintian >/dev/null; then
    if lintian --no-tag-display-limit "$DEB" >"$T_TMP/lintian.out" 2>&1 ||
        ! grep -q '^E:' "$T_TMP/lintian.out"; then
        ok "lintian: no errors"
    else
        not_ok "lintian: no errors" "$(grep '^E:' "$T_TMP/lintian.out" | head -5 | tr '\n' ' ')"
    fi
else
    skip "lintian" "not installed"
fi

if recipe install; then ok "recipe install: dpkg -i"; else
    bail "dpkg -i failed: $(tail -c 600 "$T_TMP/recipe-install.err" | tr '\n' ' ')"
fi
# shellcheck disable=SC2016 # ${Status} is dpkg-query's
same "package installed" "$(dpkg-query -W -f='${Status}' "$PKG" 2>&1)" "install ok installed"
succeeds "user gemini-agent" getent passwd gemini-agent
succeeds "group gemini-agent" getent group gemini-agent
same "key file: gemini-agent's, 0600" "$(stat -c '%U:%G %a' /etc/gemini-agent/.gemini.yaml)" \
    "gemini-agent:gemini-agent 600"
same "session secret: 32 bytes, gemini-agent's, 0600" \
    "$(stat -c '%U:%G %a %s' /var/lib/gemini-agent/session-secret)" "gemini-agent:gemini-agent 600 32"
same "/var/lib/gemini-agent: gemini-agent's, 0700" "$(stat -c '%U %a' /var/lib/gemini-agent)" \
    "gemini-agent 700"
# shellcheck disable=SC2016
conffiles=$(dpkg-query -W -f='${Conffiles}' "$PKG")
for f in /etc/gemini-agent/agent.yaml /etc/gemini-agent/nginx.conf /etc/logrotate.d/gemini-agent; do
    case $conffiles in *" $f "*) ok "conffile $f" ;; *) not_ok "conffile $f" "not in: $conffiles" ;; esac
done
fails "nginx site: the package's paths, no /srv/gemini-agent placeholder" \
    grep -q /srv/gemini-agent /etc/gemini-agent/nginx.conf

# ---------------------------------------------------------------------------
# 2. The unit

[ -f "$UNIT" ] || bail "no unit at $UNIT"
if systemd-analyze verify "$UNIT" >"$T_TMP/verify.out" 2>&1 && [ ! -s "$T_TMP/verify.out" ]; then
    ok "systemd-analyze verify: clean"
else
    not_ok "systemd-analyze verify" "$(head -c 600 "$T_TMP/verify.out" | tr '\n' ' ')"
fi
for want in NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes \
            StateDirectory=gemini-agent RuntimeDirectory=gemini-agent Restart=on-failure \
            'ExecStart=/usr/bin/gemini-agent serve --config /etc/gemini-agent/agent.yaml --socket /run/gemini-agent/gemini-agent.sock'; do
    succeeds "unit: $want" grep -qxF "$want" "$UNIT"
done
exposure=$(systemd-analyze security --offline=true "$UNIT" 2>/dev/null |
           sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
if [ -n "$exposure" ] && awk -v e="$exposure" 'BEGIN { exit !(e <= 2.0) }'; then
    ok "systemd-analyze security: exposure $exposure (<= 2.0)"
else
    not_ok "systemd-analyze security: exposure <= 2.0" "got '${exposure:-nothing}'"
fi

# ---------------------------------------------------------------------------
# 3. The key, then the unit's ExecStart as its user

start_mock
CANARY="canary-DEB-KEY-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
block=$("$PY" "$REPO/tests/deploy/recipe.py" "$RECIPE" key) || bail "recipe block 'key' is missing"
"$PY" "$REPO/tests/deploy/recipe.py" "$RECIPE" your-key >/dev/null || bail "recipe block 'your-key' is missing"
if (KEY=$CANARY bash -e -c "$block"); then ok "recipe key"; else not_ok "recipe key" "failed"; fi
succeeds "key in .gemini.yaml" grep -qxF "apiKey: '$CANARY'" /etc/gemini-agent/.gemini.yaml
same "key file still gemini-agent's, 0600, after the recipe" \
    "$(stat -c '%U:%G %a' /etc/gemini-agent/.gemini.yaml)" "gemini-agent:gemini-agent 600"
# Installed again (an upgrade does the same): the key and the secret stay.
secret_sum=$(md5sum </var/lib/gemini-agent/session-secret)
if dpkg -i "$DEB" >"$T_TMP/reinstall.out" 2>&1; then ok "dpkg -i again"; else
    not_ok "dpkg -i again" "$(tail -c 300 "$T_TMP/reinstall.out" | tr '\n' ' ')"
fi
succeeds "dpkg -i again: the key kept" grep -qxF "apiKey: '$CANARY'" /etc/gemini-agent/.gemini.yaml
same "dpkg -i again: the session secret kept" "$(md5sum </var/lib/gemini-agent/session-secret)" \
    "$secret_sum"
# The test's own change: Gemini is the mock.
sed -i "s|^baseUrl: .*|baseUrl: $MOCK_URL|" /etc/gemini-agent/.gemini.yaml

read -ra execstart <<<"$(unit_key ExecStart)"
GA_BIN=${execstart[0]}
# log.file where agent.yaml's comment and the logrotate file put it, when
# the binary has log settings (those that print --version have).
LOGFILE=
if "$GA_BIN" --version >/dev/null 2>&1; then
    LOGFILE=/var/log/gemini-agent/gemini-agent.log
    sed -i -e 's/^# log: /log: /' -e 's|^#   file: /var/log/gemini-agent/|  file: /var/log/gemini-agent/|' \
        /etc/gemini-agent/agent.yaml
    succeeds "agent.yaml: log.file uncommented" grep -qxF "  file: $LOGFILE  # /etc/logrotate.d/gemini-agent rotates it" \
        /etc/gemini-agent/agent.yaml
fi

# /run/<RuntimeDirectory> as systemd makes it: the unit's user and group,
# RuntimeDirectoryMode; then ExecStartPre ('+': as root), then ExecStart
# as the user, with the unit's UMask, in / and a clean environment.
user=$(unit_key User) group=$(unit_key Group)
rundir=/run/$(unit_key RuntimeDirectory)
rm -rf "$rundir"
install -d -o "$user" -g "$group" -m "$(unit_key RuntimeDirectoryMode)" "$rundir"
# shellcheck disable=SC2086 # the unit's command lines, split as systemd does (no quotes in them)
while IFS= read -r pre; do
    case $pre in
    +*) ${pre#+} || not_ok "ExecStartPre $pre" "failed" ;;
    *) setpriv --reuid="$user" --regid="$group" --init-groups $pre || not_ok "ExecStartPre $pre" "failed" ;;
    esac
done < <(sed -n 's/^ExecStartPre=//p' "$UNIT")
GA_LOG=$T_TMP/service.log
(cd / && umask "$(unit_key UMask)" &&
    exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin setpriv --reuid="$user" --regid="$group" \
        --init-groups --no-new-privs -- "${execstart[@]}") >"$GA_LOG" 2>&1 </dev/null &
GA_PID=$!
remember_pids "$GA_PID"
GA_PIDFILE=
sock=$(printf '%s\n' "${execstart[@]}" | grep -A1 -x -- --socket | tail -n 1)
if wait_until 5000 test -S "$sock"; then ok "ExecStart: serving on $sock"; else
    bail "ExecStart did not serve: $(tail -c 600 "$GA_LOG" | tr '\n' ' ')"
fi
# its workers too, for the cleanup (ExecStart has no --pid-file)
wait_until 3000 pgrep -P "$GA_PID" >/dev/null
remember_pids $(pgrep -P "$GA_PID")
same "runs as gemini-agent" "$(stat -c '%U' "/proc/$GA_PID")" gemini-agent
same "socket: gemini-agent:www-data 0660" "$(stat -c '%U:%G %a' "$sock")" "gemini-agent:www-data 660"
same "$rundir: group www-data, 2750 (others cannot enter)" "$(stat -c '%G %a' "$rundir")" "www-data 2750"
if grep -q 'error' "$GA_LOG" ${LOGFILE:+"$LOGFILE"}; then
    not_ok "no error at start" "$(grep -h error "$GA_LOG" ${LOGFILE:+"$LOGFILE"} | head -3 | tr '\n' ' ')"
else
    ok "no error at start"
fi

# ---------------------------------------------------------------------------
# 4. A chat through nginx with the package's site, its workers www-data

chmod 711 "$T_TMP"   # www-data passes through, reads nothing
NGX_USER=www-data site_nginx_start /etc/gemini-agent/nginx.conf

req GET /
assert_status 200 "a page from /usr/share/gemini-agent/www"
req GET /agent/index.js
assert_status 200 "the widget's script"

site=$("$PY" "$REPO/tests/deploy/recipe.py" "$RECIPE" site) || bail "recipe block 'site' is missing"
[[ $site == SITE=* ]] || not_ok "recipe site sets SITE" "$site"
block=$("$PY" "$REPO/tests/deploy/recipe.py" "$RECIPE" first-answer) || bail "recipe block 'first-answer' is missing"
(SITE=$BASE_URL bash -e -c "$block") >"$RES_BODY" 2>"$T_TMP/first.err"
if "$PY" -c '
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r.get("type") == "response" and r.get("message") == "Hello from the mock." else 1)
' "$RES_BODY" 2>/dev/null; then
    ok "recipe first-answer: the mock's answer through nginx"
else
    not_ok "recipe first-answer" "$(body_excerpt) $(tail -c 300 "$NGX_DIR/error.log" | tr '\n' ' ')"
fi
keys=$(curl -sS "$MOCK_URL/__mock/requests" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
recs = d if isinstance(d, list) else d.get("requests", [])
print(" ".join(sorted({r.get("headers", {}).get("x-goog-api-key", "") for r in recs})))')
same "Gemini got the key from the installed .gemini.yaml" "$keys" "$CANARY"
fails "the key in no log" grep -qF "$CANARY" "$GA_LOG" "$NGX_DIR/error.log" "$NGX_DIR/access.log"

# ---------------------------------------------------------------------------
# 5. logrotate's turn: the file moved, then what its postrotate sends
#    (SIGUSR1 to the unit's main process): a new file takes the lines.

if [ -n "$LOGFILE" ]; then
    rotate=/etc/logrotate.d/gemini-agent
    glob=$(sed -n 's/^\(\/[^ ]*\) {$/\1/p' "$rotate")
    # shellcheck disable=SC2254 # the glob is logrotate's
    case $LOGFILE in $glob) ok "logrotate rotates $LOGFILE ($glob)" ;; *) not_ok "logrotate rotates $LOGFILE" "its files: '$glob'" ;; esac
    succeeds "logrotate postrotate: SIGUSR1 to the main process" \
        grep -qF 'systemctl kill --kill-whom=main --signal=USR1 gemini-agent.service' "$rotate"
    succeeds "log.file written" test -s "$LOGFILE"
    mv "$LOGFILE" "$LOGFILE.1"
    kill -USR1 "$GA_PID"
    if wait_until 3000 test -s "$LOGFILE"; then ok "after SIGUSR1 a new $LOGFILE"; else
        not_ok "after SIGUSR1 a new $LOGFILE" "none; stderr: $(tail -c 300 "$GA_LOG" | tr '\n' ' ')"
    fi
    fails "the key in no log file" grep -qF "$CANARY" "$LOGFILE" "$LOGFILE.1"
    succeeds "the service still serves after SIGUSR1" test -S "$sock"
    succeeds "the service still runs after SIGUSR1" proc_alive "$GA_PID"
else
    skip "log.file and SIGUSR1" "$GA_BIN has no log settings (no --version)"
fi

# ---------------------------------------------------------------------------
# 6. Purge: nothing left

stop_nginx
stop_pid "$GA_PID" 5000
fails "SIGTERM stops the service" proc_alive "$GA_PID"
wait "$GA_PID" 2>/dev/null
GA_PID=
kill_leftover_workers
# What the service and the site owner would have made meanwhile.
systemctl enable gemini-agent.service >/dev/null 2>&1
install -o gemini-agent -g gemini-agent -m 0640 /dev/null /var/log/gemini-agent/gemini-agent.log
dpkg-query -L "$PKG" >"$T_TMP/files" 2>/dev/null
if recipe purge; then ok "recipe purge: dpkg --purge"; else
    not_ok "recipe purge" "$(tail -c 600 "$T_TMP/recipe-purge.err" | tr '\n' ' ')"
fi
fails "package gone" dpkg-query -W "$PKG"
left=()
while IFS= read -r f; do
    # Folders the package shares with others (/usr/bin, /etc/logrotate.d ...)
    # stay; its own files and folders do not.
    [ -d "$f" ] && [[ $f != *gemini-agent* ]] && continue
    if [ -e "$f" ] || [ -L "$f" ]; then left+=("$f"); fi
done <"$T_TMP/files"
for f in /etc/gemini-agent /var/lib/gemini-agent /var/log/gemini-agent /run/gemini-agent \
         /etc/systemd/system/multi-user.target.wants/gemini-agent.service; do
    if [ -e "$f" ] || [ -L "$f" ]; then left+=("$f"); fi
done
same "purge leaves no file or folder" "${left[*]}" ""
fails "user gone" getent passwd gemini-agent
fails "group gone" getent group gemini-agent

finish
