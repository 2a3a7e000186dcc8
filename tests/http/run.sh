#!/bin/bash
# tests/http/run.sh - run the HTTP tests (tests/http/t_*.sh) against nginx +
# the responder (build/gemini-agent), from any working directory.
#
#   tests/http/run.sh              every test
#   tests/http/run.sh t_cgi.sh ... the named tests only
#
# Prints every test's ok / not ok lines, then the summary line
# "N passed, N failed" (assertions). A test script that exits non-zero
# without reporting a failed assertion counts as one failure. Exits 1 if
# anything failed. Each test is bounded by T_TIMEOUT seconds (default 300).
# T_DIR names another folder of t_*.sh tests (tests/deploy/run.sh does).
set -u

HTTP_DIR=$(cd "${T_DIR:-$(dirname "${BASH_SOURCE[0]}")}" && pwd -P)
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
T_TIMEOUT=${T_TIMEOUT:-300}

tests=()
if [ $# -gt 0 ]; then
    for t in "$@"; do
        t=$(basename "$t")
        [ -f "$HTTP_DIR/$t" ] || { echo "run.sh: no such test: $t" >&2; exit 2; }
        tests+=("$HTTP_DIR/$t")
    done
else
    for t in "$HTTP_DIR"/t_*.sh; do
        [ -f "$t" ] && tests+=("$t")
    done
fi

if [ ! -x "$REPO/build/gemini-agent" ] && [ -z "${GA_BIN:-}" ]; then
    echo "run.sh: $REPO/build/gemini-agent is missing - run make first" >&2
fi

passed=0
failed=0
skipped=0
failed_tests=()
out=$(mktemp "${TMPDIR:-/tmp}/ga-http-run.XXXXXX") || exit 2
trap 'rm -f "$out"' EXIT

for t in "${tests[@]}"; do
    name=$(basename "$t" .sh)
    echo "# --- $name"
    t0=$SECONDS
    timeout -k 10 "$T_TIMEOUT" bash "$t" 2>&1 | tee "$out"
    rc=${PIPESTATUS[0]}
    echo "# $name took $((SECONDS - t0)) s"
    p=$(grep -c '^ok - ' "$out")
    s=$(grep -c '^ok - .*# SKIP' "$out")
    f=$(grep -c '^not ok - ' "$out")
    passed=$((passed + p - s))
    skipped=$((skipped + s))
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "not ok - $name: timed out after ${T_TIMEOUT}s"
        f=$((f + 1))
    elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "not ok - $name: exited with status $rc"
        f=1
    fi
    failed=$((failed + f))
    [ "$f" -gt 0 ] && failed_tests+=("$name")
done

echo
[ "$skipped" -gt 0 ] && echo "# $skipped skipped"
[ "${#failed_tests[@]}" -gt 0 ] && echo "# failing: ${failed_tests[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
