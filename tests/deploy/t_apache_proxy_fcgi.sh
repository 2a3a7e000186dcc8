#!/bin/bash
# t_apache_proxy_fcgi.sh - docs/deploy/apache-proxy-fcgi.md: the site made
# by the recipe's `setup` block as written, run as a user of its own
# (apache_checks.sh ap_site_init); its `socket-dir` block as written (as
# root); `gemini-agent serve` started by its `serve` block as written, as
# the site's user (not www-data), on the unix socket in the site's run/;
# the server/apache-proxy-fcgi.conf setup rendered, Included unchanged,
# under mpm_event. Then apache_checks.sh's chat, stream, run API and
# approval through Apache.
# Under ASan: GA_BIN=build-asan/gemini-agent.
# shellcheck disable=SC2016,SC2034  # AP_*, GA_PIDFILE: read by apache_checks.sh and the libs
source "$(dirname "${BASH_SOURCE[0]}")/apache_checks.sh"

AP_MPM=event
AP_SERVE_PID=
ap_site_init apache-proxy-fcgi.md proxy proxy_fcgi
AP_RUN_AS=$SITE_USER
AP_SOCK=$SITE/run/gemini-agent.sock

ap_run_block apache-proxy-fcgi.md socket-dir
check "socket-dir: run/ is the site user's, group www-data, 2750" \
    test "$(stat -c '%U:%G %a' "$SITE/run")" = "$SITE_USER:www-data 2750"
check "the key and the secret stay the site user's alone, 0600" \
    test "$(stat -c '%U %a' "$SITE/.gemini.yaml" "$SITE/.session-secret" | sort -u)" = "$SITE_USER 600"

code=$(recipe_block apache-proxy-fcgi.md serve)
(cd / && setpriv --reuid="$SITE_USER" --regid="$SITE_USER" --init-groups \
    env -i PATH="$PATH" HOME="$SITE" SITE="$SITE" \
    ${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} ${UBSAN_OPTIONS:+UBSAN_OPTIONS=$UBSAN_OPTIONS} \
    bash -euc "$code") >"$T_TMP/serve.out" 2>&1 </dev/null &
T_BG_PIDS+=("$!")
GA_PIDFILE=$SITE/run/gemini-agent.pid
wait_until 10000 eval '[ -S "$AP_SOCK" ] && read_pidfile' ||
    bail "serve did not start: $(tail -c 600 "$T_TMP/serve.out")"
AP_SERVE_PID=$PF_MASTER
ok "docs/deploy/apache-proxy-fcgi.md: block 'serve' runs as written"
check "serve runs as the site's user" test "$(stat -c %U "/proc/$AP_SERVE_PID")" = "$SITE_USER"
check "the socket: group www-data, mode 0660" \
    test "$(stat -c '%G %a' "$AP_SOCK")" = "www-data 660"

ap_snippet apache-proxy-fcgi.conf
check "the snippet passes to the site's socket" grep -qF "unix:$AP_SOCK|" "$AP_SNIPPET"
apache_start "$AP_SNIPPET" proxy proxy_fcgi
ap_checks "proxy_fcgi"
apache_stop
stop_pid "$AP_SERVE_PID" 5000
finish
