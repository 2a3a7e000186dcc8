#!/bin/bash
# t_apache_fcgid.sh - docs/deploy/apache-cgi.md, mod_fcgid: the site made
# by the recipe's `setup` block as written, run as a user of its own, its
# `permissions` block as written (as root), and the server/apache-fcgid.conf
# setup rendered, Included unchanged, under mpm_event; Apache starts the
# program with the listening socket as its stdin, and it serves FastCGI on
# it; the program runs as www-data. Then apache_checks.sh's chat, stream,
# run API and approval, and: the requests were served by one long-lived process (not a CGI per
# request).
# Under ASan: GA_BIN=build-asan/gemini-agent.
# shellcheck disable=SC2016,SC2034  # AP_*, GA_PIDFILE: read by apache_checks.sh and the libs
source "$(dirname "${BASH_SOURCE[0]}")/apache_checks.sh"

AP_MPM=event
ap_site_init apache-cgi.md fcgid
ap_run_block apache-cgi.md permissions
ap_www_data_checks
ap_snippet apache-fcgid.conf
mkdir -p "$AP_DIR/fcgid"
# this test's own Apache: mod_fcgid's runtime files in its ServerRoot, and
# the sanitizer's settings for the program (mod_fcgid passes Apache's
# environment on to none of it)
AP_EXTRA="FcgidIPCDir $AP_DIR/fcgid
FcgidProcessTableFile $AP_DIR/fcgid/shm
${ASAN_OPTIONS:+FcgidInitialEnv ASAN_OPTIONS $ASAN_OPTIONS}
${UBSAN_OPTIONS:+FcgidInitialEnv UBSAN_OPTIONS $UBSAN_OPTIONS}"
chown www-data "$AP_DIR/fcgid"
apache_start "$AP_SNIPPET" fcgid
ap_checks "fcgid"

# one program (a master and its worker) served every request: Apache's
# descendants running the binary (not another test's, by ancestry)
descendants() {
    ps -e -o pid=,ppid=,args= | awk -v root="$1" -v bin="$GA_BIN" '
        { pp[$1] = $2; a = $0; sub(/^ *[0-9]+ +[0-9]+ +/, "", a); args[$1] = a }
        END { for (p in pp) { q = p; while (q in pp && q != root && q > 1) q = pp[q]
              if (q == root && args[p] == bin) print p } }'
}
pids=$(descendants "$AP_PID" | tr '\n' ' ')
check "fcgid: the program keeps running between requests (PIDs $pids)" test -n "$pids"
apache_stop
gone() {
    local p
    for p in $pids; do proc_alive "$p" && return 1; done
    return 0
}
check "fcgid: Apache's stop ends the program" wait_until 5000 gone
finish
