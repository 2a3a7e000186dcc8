#!/bin/bash
# t_fastcgi_abuse.sh - `serve` against a FastCGI client that speaks the
# protocol badly: no nginx in front, tests/http/fcgi_abuse.py
# on the TCP port. Records out of order, unknown types and versions, huge
# and lying params, a stdin that never ends, connections closed or reset
# mid-record, a client that never reads, ABORT_REQUEST, multiplexed ids,
# FCGI_GET_VALUES, padding tricks, roles other than RESPONDER. After each
# (and while a held connection is still open): a well-formed request is
# answered 200 within 2 s and no request thread stays busy. Over the whole
# run: the same worker throughout (no crash, no watchdog kill) and a log
# free of crashes and sanitizer reports.
#
# One worker of two threads (three with the spare) makes a stuck thread
# show at once. A held connection is cut by the responder's read timeout
# (BOUND_FCGI_READ_MS, 10 s): the client waits up to HOLD s for it.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_binary
HOLD=${FCGI_ABUSE_HOLD:-14}

# The mock Gemini answers the chat of never-reads, whose 6 MB message
# needs the large body limits.
start_mock
start_stack --listen --no-nginx --workers 1 --threads 2 --queue 0 --mock \
    --limits '{maxBodyBytes: 8388608, maxUpstreamBytes: 16777216}' \
    --yaml "http: {status: {allow: [127.0.0.1]}}
history: {verify: off}"
read_pidfile || bail "no pid file"
WORKERS_BEFORE=$PF_WORKERS

# run_abuse SCENARIO...: fcgi_abuse.py's ok / not ok lines, counted here.
run_abuse() {
    local line out=$T_TMP/abuse.out
    timeout -k 5 600 "$PY" "$HTTP_DIR/fcgi_abuse.py" --addr "$GA_LISTEN" \
        --hold "$HOLD" "$@" >"$out" 2>&1
    local rc=$?
    while IFS= read -r line; do
        case $line in
        'ok - '*) T_PASS=$((T_PASS + 1)); printf '%s\n' "$line" ;;
        'not ok - '*) T_FAIL=$((T_FAIL + 1)); printf '%s\n' "$line" ;;
        *) printf '# %s\n' "${line#\# }" ;;
        esac
    done <"$out"
    [ "$rc" -eq 0 ] || not_ok "fcgi_abuse.py" "exited $rc"
}

if [ $# -gt 0 ]; then run_abuse "$@"; else run_abuse; fi

# --- the responder survived it all, with the same worker ---------------------
if proc_alive "$GA_PID"; then ok "the master is up"; else not_ok "the master is up" "it exited"; fi
read_pidfile
if [ "$PF_WORKERS" = "$WORKERS_BEFORE" ]; then
    ok "the same worker throughout (none crashed or was killed)"
else
    not_ok "the same worker throughout" "workers were '$WORKERS_BEFORE', now '$PF_WORKERS'"
fi
if grep -Eq 'AddressSanitizer|runtime error|LeakSanitizer|killed by signal|exited with|hung|Segmentation|Assertion' "$GA_LOG"; then
    not_ok "the log shows no crash, hang or sanitizer report" \
        "$(grep -E 'AddressSanitizer|runtime error|LeakSanitizer|killed by signal|exited with|hung|Segmentation|Assertion' "$GA_LOG" | head -n 3 | cut -c1-200 | tr '\n' '|')"
else
    ok "the log shows no crash, hang or sanitizer report"
fi
stop_responder
if grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error' "$GA_LOG"; then
    not_ok "no sanitizer report at exit" "$(grep -E 'Sanitizer|runtime error' "$GA_LOG" | head -n 2 | tr '\n' '|')"
else
    ok "no sanitizer report at exit"
fi

finish
