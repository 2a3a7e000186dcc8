#!/bin/bash
# t_ratelimit.sh - nginx's limit_req (5r/s, burst 10, nodelay) from the real
# snippet: rapid requests get 429 in the JSON error format; after a pause the
# client is served again; static files are not limited.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_binary
start_stack --real-rate

# burst N [PATH...]: N back-to-back GET /_jay/actions, then GET each PATH,
# all from one curl process (one keep-alive connection, so the burst takes
# milliseconds, not N process starts). Answer i, headers included, goes to
# $T_TMP/burst_<i>. Sets N200, N429, NOTHER (over the N API requests),
# FIRST429 (file of the first 429 answer) and EXTRA_CODES (the statuses of
# the PATHs).
burst() {
    local n=$1 code i=0 p
    shift
    N200=0 N429=0 NOTHER=0 FIRST429='' EXTRA_CODES=''
    rm -f "$T_TMP"/burst_*
    {
        for ((i = 1; i <= n; i++)); do
            printf 'url = "%s/_jay/actions"\noutput = "%s/burst_%d"\n' "$BASE_URL" "$T_TMP" "$i"
        done
        for p in "$@"; do
            i=$((i + 1))
            printf 'url = "%s%s"\noutput = "%s/burst_%d"\n' "$BASE_URL" "$p" "$T_TMP" "$i"
        done
    } >"$T_TMP/burst.curlrc"
    curl -s -i --max-time 20 -w '%{http_code}\n' -K "$T_TMP/burst.curlrc" \
        >"$T_TMP/burst.codes" 2>/dev/null
    i=0
    while read -r code; do
        i=$((i + 1))
        if [ "$i" -gt "$n" ]; then
            EXTRA_CODES="$EXTRA_CODES $code"
            continue
        fi
        case $code in
        200) N200=$((N200 + 1)) ;;
        429)
            N429=$((N429 + 1))
            [ -n "$FIRST429" ] || FIRST429=$T_TMP/burst_$i
            ;;
        *) NOTHER=$((NOTHER + 1)) ;;
        esac
    done <"$T_TMP/burst.codes"
    NOTHER=$((n - N200 - N429))
    EXTRA_CODES=${EXTRA_CODES# }
}

t0=$(now_ms)
burst 40 / /_jay/actions
echo "# 40 requests in $(($(now_ms) - t0)) ms: $N200 x 200, $N429 x 429, $NOTHER other"
if [ "$N429" -gt 0 ]; then ok "40 rapid requests: some are refused with 429 ($N429)"; else not_ok "40 rapid requests: some are refused with 429" "none refused ($N200 x 200)"; fi
if [ "$N200" -ge 10 ]; then ok "40 rapid requests: the burst (10) is served ($N200 x 200)"; else not_ok "40 rapid requests: the burst (10) is served" "only $N200 x 200"; fi
if [ "$NOTHER" -eq 0 ]; then ok "40 rapid requests: only 200 and 429"; else not_ok "40 rapid requests: only 200 and 429" "$NOTHER other statuses"; fi

# The refusal is JSON.
if [ -n "$FIRST429" ]; then
    "$PY" - "$FIRST429" "$RES_HDRS" "$RES_BODY" <<'PY'
import sys
raw = open(sys.argv[1], "rb").read()
head, _, body = raw.partition(b"\r\n\r\n")
open(sys.argv[2], "wb").write(head + b"\r\n\r\n")
open(sys.argv[3], "wb").write(body)
PY
    RES_STATUS=429
    RES_DESC="429 answer"
    assert_error 429 rate_limited "429 answer"
fi

# Static files are outside the limit, even while the API is throttled: the
# two requests after the burst were / (static) and /_jay/actions again.
set -- $EXTRA_CODES
if [ "${1:-}" != 429 ] && [ "${1:-000}" != 000 ] && [ "${2:-}" = 429 ]; then
    ok "static GET / right after the burst is not rate limited (status $1; the API still is: $2)"
else
    not_ok "static GET / right after the burst is not rate limited" "statuses after the burst: '$EXTRA_CODES' (want non-429 for /, 429 for /_jay/actions)"
fi

# 5r/s refills the burst of 10 in 2 s.
sleep 2.5
burst 5
if [ "$N200" -eq 5 ]; then
    ok "after 2.5 s: requests succeed again"
else
    not_ok "after 2.5 s: requests succeed again" "$N200 x 200, $N429 x 429, $NOTHER other"
fi

finish
