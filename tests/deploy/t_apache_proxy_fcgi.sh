#!/bin/bash
# t_apache_proxy_fcgi.sh - docs/deploy/apache-proxy-fcgi.md:
# conf/apache-proxy-fcgi.conf as shipped (paths replaced) under mpm_event,
# in front of `gemini-agent serve` started by the recipe's `serve` block as
# written, run as the site's own user (not www-data) on a unix socket in a
# folder made by the recipe's `socket-dir` block (as root). Then
# apache_checks.sh's chat, stream, run API and approval through Apache.
# Under ASan: GA_BIN=build-asan/gemini-agent.
# shellcheck disable=SC2016,SC2034  # AP_*, GA_PIDFILE: read by apache_checks.sh and the libs
source "$(dirname "${BASH_SOURCE[0]}")/apache_checks.sh"

AP_MPM=event
AP_SERVE_PID=
ap_site_init proxy proxy_fcgi
AP_RUN_AS=$SITE_USER
RUN_DIR=$T_TMP/sockdir
AP_SOCK=$RUN_DIR/gemini-agent.sock
export RUN_DIR
# `gemini-agent` on the PATH, as after `make install`
mkdir -p "$T_TMP/bin"
ln -s "$GA_BIN" "$T_TMP/bin/gemini-agent"
chmod 755 "$T_TMP/bin"

ap_run_block apache-proxy-fcgi.md socket-dir
check "socket-dir: the folder is the site user's, group www-data" \
    test "$(stat -c '%U:%G' "$RUN_DIR")" = "$SITE_USER:www-data"

code=$(recipe_block apache-proxy-fcgi.md serve)
setpriv --reuid="$SITE_USER" --regid="$SITE_USER" --init-groups \
    env -i PATH="$T_TMP/bin:$PATH" HOME="$SITE" SITE="$SITE" RUN_DIR="$RUN_DIR" \
    ${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} ${UBSAN_OPTIONS:+UBSAN_OPTIONS=$UBSAN_OPTIONS} \
    bash -euc "$code" >"$T_TMP/serve.out" 2>&1 </dev/null &
T_BG_PIDS+=("$!")
GA_PIDFILE=$RUN_DIR/gemini-agent.pid
wait_until 10000 eval '[ -S "$AP_SOCK" ] && read_pidfile' ||
    bail "serve did not start: $(tail -c 600 "$T_TMP/serve.out")"
AP_SERVE_PID=$PF_MASTER
ok "docs/deploy/apache-proxy-fcgi.md: block 'serve' runs as written"
check "serve runs as the site's user" test "$(stat -c %U "/proc/$AP_SERVE_PID")" = "$SITE_USER"
check "the socket: group www-data, mode 0660" \
    test "$(stat -c '%G %a' "$AP_SOCK")" = "www-data 660"

mkdir -p "$AP_DIR"
ap_render apache-proxy-fcgi.conf "$AP_DIR/site.conf"
apache_start "$AP_DIR/site.conf" proxy proxy_fcgi
ap_checks "proxy_fcgi"
apache_stop
stop_pid "$AP_SERVE_PID" 5000
finish
