#!/bin/bash
# The browser tests: tests/e2e/*.test.mjs with `node --test`, each file
# starting its own mock + responder + private nginx (stack.mjs) and driving
# Debian's chromium through playwright-core. Screenshots go to
# tests/e2e/screenshots/ (E2E_UPDATE_DOCS=1 also refreshes the README's
# docs/screenshots/compact.png and expanded.png).
#
#   tests/e2e/run.sh [FILE...]          default: every tests/e2e/*.test.mjs
#
# Prints node --test's report and its summary ("# pass N", "# fail N", ...);
# exits non-zero when a test failed. Needs build/gemini-agent (make),
# /usr/bin/chromium and nginx (scripts/install-deps.sh), and the npm
# packages (scripts/setup-www.sh, run here when they are missing).
set -u
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
cd "$repo" || exit 1

fail() {
    echo "not ok - browser tests: $*"
    echo "# pass 0"
    echo "# fail 1"
    exit 1
}

[ -x build/gemini-agent ] || fail "build/gemini-agent is missing: run make"
[ -x "${E2E_CHROMIUM:-/usr/bin/chromium}" ] ||
    fail "${E2E_CHROMIUM:-/usr/bin/chromium} is missing: run scripts/install-deps.sh (Debian's chromium)"
command -v node >/dev/null 2>&1 || fail "node is missing: run scripts/install-deps.sh"
if [ ! -d node_modules/playwright-core ] || [ ! -f www/vendor/dompurify.js ] ||
   [ ! -f www/vendor/marked.js ]; then
    scripts/setup-www.sh || fail "scripts/setup-www.sh failed"
fi

if [ $# -gt 0 ]; then files=("$@"); else files=(tests/e2e/*.test.mjs); fi
tap=$(mktemp "${TMPDIR:-/tmp}/ga-e2e-tap.XXXXXX")
trap 'rm -f "$tap"' EXIT

# The readable report on stdout, the TAP stream in a file for the summary.
node --test \
    --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$tap" \
    "${files[@]}"
rc=$?

echo
echo "browser tests (node --test):"
summary=$(grep -E '^# (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) ' "$tap")
if [ -z "$summary" ]; then
    echo "not ok - browser tests: node --test printed no summary (exit $rc)"
    echo "# pass 0"
    echo "# fail 1"
    exit 1
fi
printf '%s\n' "$summary"
exit "$rc"
