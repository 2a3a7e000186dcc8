#!/bin/bash
# The README's test command (`make test`), and what .ci/run runs:
# install what the tests need, then build and run every test.
#
#   1. Debian packages (scripts/install-deps.sh; apt-get only when missing)
#   2. build with gcc (-Werror) and with clang (-Werror)
#   3. unit suites (Check)
#   4. unit suites again under AddressSanitizer + UBSan (zero reports)
#   5. HTTP tests: curl through a private nginx to the responder
#
# Ends with one line "N passed, N failed" over all of them; exits 1 when
# anything failed.
set -u
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$repo"

passed=0
failed=0
log=$(mktemp "${TMPDIR:-/tmp}/ga-test.XXXXXX")
trap 'rm -f "$log"' EXIT

step() { printf '\n=== %s\n' "$*"; }

# A step that is not a test runner counts as one test.
run_step() {
    local name=$1
    shift
    if "$@"; then
        passed=$((passed + 1))
    else
        echo "not ok - $name"
        failed=$((failed + 1))
    fi
}

# Check prints "NN%: Checks: N, Failures: F, Errors: E".
count_check() {
    local line checks fails errs
    line=$(grep -E '^[0-9]+%: Checks: ' "$log" | tail -1)
    if [ -z "$line" ]; then
        echo "not ok - $1: no Check summary"
        failed=$((failed + 1))
        return
    fi
    checks=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$line")
    fails=$(sed -E 's/.*Failures: ([0-9]+).*/\1/' <<<"$line")
    errs=$(sed -E 's/.*Errors: ([0-9]+).*/\1/' <<<"$line")
    passed=$((passed + checks - fails - errs))
    failed=$((failed + fails + errs))
}

step "dependencies"
run_step "install-deps" scripts/install-deps.sh

step "build (gcc)"
run_step "build with gcc" make -s all
step "build (clang)"
run_step "build with clang" make -s CC=clang BUILD=build-clang all

step "unit tests"
make -s check 2>&1 | tee "$log"
count_check "unit tests"
step "unit tests under ASan/UBSan"
make -s check-asan 2>&1 | tee "$log"
count_check "unit tests (asan)"
if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$log"; then
    echo "not ok - sanitizer reports in the unit tests"
    failed=$((failed + 1))
fi

step "HTTP tests"
tests/http/run.sh 2>&1 | tee "$log"
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
if [ -n "$line" ]; then
    passed=$((passed + $(cut -d' ' -f1 <<<"$line")))
    failed=$((failed + $(cut -d' ' -f3 <<<"$line")))
else
    echo "not ok - HTTP tests: no summary"
    failed=$((failed + 1))
fi

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
