# tests/deploy/apache_lib.sh - a private Apache for the deployment tests:
# Debian's apache2 binary and modules, a ServerRoot in the test's temp
# folder, one free loopback port, stopped by PID (on exit too).
#
#   source "$(dirname "${BASH_SOURCE[0]}")/apache_lib.sh"   (after lib.sh)
#   apache_start SITE_CONF [MODULE...]
#       SITE_CONF: a file Included at the end of the main config (the
#       recipe's own configuration, paths replaced by the test).
#       MODULE: extra module names (cgid, fcgid, proxy_fcgi, suexec,
#       userdir, ...) besides the base set below. Sets AP_PORT, AP_URL,
#       AP_DIR (ServerRoot: logs/error.log, logs/access.log) and AP_PID.
#   apache_stop
#   AP_USER_LINES  "User x\nGroup y" lines; default www-data when root
#                  (Apache's children may not run as root)
#   AP_EXTRA       more main-config lines, placed before the Include
#   AP_MPM         the MPM: prefork (default), event (Debian's default,
#                  with mod_cgid for CGI) or worker
#
# shellcheck shell=bash

APACHE_BIN=${APACHE_BIN:-/usr/sbin/apache2}
AP_MODS=/usr/lib/apache2/modules
AP_PID=
AP_DIR=$T_TMP/apache
AP_EXTRA=${AP_EXTRA:-}
AP_MPM=${AP_MPM:-prefork}

# apache_have [MODULE...]: apache2 and those modules are installed.
apache_have() {
    [ -x "$APACHE_BIN" ] || return 1
    local m
    for m in "mpm_$AP_MPM" "$@"; do
        [ -f "$AP_MODS/mod_$m.so" ] || return 1
    done
}

apache_stop() {
    [ -n "$AP_PID" ] || return 0
    stop_pid "$AP_PID" 5000
    wait "$AP_PID" 2>/dev/null
    AP_PID=
}

apache_start() {
    local site=$1 m user_lines mods=''
    shift
    apache_stop
    AP_PORT=$(free_port) || bail "no free port"
    AP_URL=http://127.0.0.1:$AP_PORT
    mkdir -p "$AP_DIR/logs"
    for m in authz_core authz_host authz_user authn_core auth_basic alias dir \
        mime rewrite env setenvif headers "$@"; do
        mods+="LoadModule ${m}_module $AP_MODS/mod_$m.so"$'\n'
    done
    user_lines=${AP_USER_LINES:-}
    if [ -z "$user_lines" ] && [ "$(id -u)" -eq 0 ]; then
        user_lines=$'User www-data\nGroup www-data'
    fi
    cat >"$AP_DIR/httpd.conf" <<CONF
ServerRoot "$AP_DIR"
ServerName 127.0.0.1
Listen 127.0.0.1:$AP_PORT
PidFile "$AP_DIR/httpd.pid"
DefaultRuntimeDir "$AP_DIR"
ErrorLog "$AP_DIR/logs/error.log"
LogLevel warn
LogFormat "%h %l %u %t \"%r\" %>s %b" common
CustomLog "$AP_DIR/logs/access.log" common
TypesConfig /etc/mime.types
$user_lines
LoadModule mpm_${AP_MPM}_module $AP_MODS/mod_mpm_$AP_MPM.so
$mods
StartServers 2
# the sanitizer's settings reach the program under ASan
PassEnv PATH ${ASAN_OPTIONS:+ASAN_OPTIONS} ${UBSAN_OPTIONS:+UBSAN_OPTIONS}
$AP_EXTRA
Include "$site"
CONF
    # a session of its own: the MPM's shutdown signals its whole process
    # group, which would otherwise be this test's
    setsid env -i PATH="$PATH" ${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} \
        ${UBSAN_OPTIONS:+UBSAN_OPTIONS=$UBSAN_OPTIONS} \
        "$APACHE_BIN" -f "$AP_DIR/httpd.conf" -DFOREGROUND \
        >"$AP_DIR/stdout" 2>&1 </dev/null &
    AP_PID=$!
    T_BG_PIDS+=("$AP_PID")
    if ! wait_until 5000 eval 'curl -s -o /dev/null --max-time 1 "$AP_URL/"'; then
        bail "apache did not start: $(tail -c 600 "$AP_DIR/stdout" "$AP_DIR/logs/error.log" 2>/dev/null | tr '\n' ' ')"
    fi
}
