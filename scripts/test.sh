#!/bin/bash
# The README's test command (`make test`), and what .ci/run runs:
# install what the tests need, then build and run every test.
#
#   1. Debian packages (scripts/install-deps.sh; apt-get only when missing),
#      then the npm packages (scripts/setup-www.sh; npm ci only when the
#      lock changed)
#   2. build with gcc (-Werror) and with clang (-Werror)
#   2b. the layer check (scripts/check-layers.sh) and its self-test
#   3. unit suites (Check)
#   4. unit suites again under AddressSanitizer + UBSan (zero reports)
#   4b. the fuzzers (make fuzz), FUZZ_SECONDS (default 30) seconds in all:
#      jscan and jsonout against jansson, then the SSE parser fed split
#      against fed whole (SSE_FUZZ_SECONDS of them, default 10)
#   5. HTTP tests: curl through a private nginx to the responder
#   6. the chat, stream, routes, CGI, run API, budget and plugins HTTP tests again,
#      against the ASan/UBSan responder, with zero sanitizer reports
#   6b. the terminal client (`gemini-agent chat`, tests/term: run.sh, then
#      every t_*.sh: sessions, interrupt, credentials and Vertex AI, t_tty.sh
#      on a pseudo-terminal, t_sdk.sh) against the mock Gemini, then
#      again with the ASan/UBSan binary
#   6c. the terminal client driven through the real Claude Agent SDK
#      (tests/sdk, node --test), then again with the ASan/UBSan binary
#   7. the mock Gemini server's self-test (python3 -m unittest)
#   8. the browser code's unit tests (node --test tests/js, jsdom)
#   9. browser tests: the demo page in Debian's chromium (playwright-core)
#      against nginx + responder + the mock Gemini server (tests/e2e)
#  10. deployment tests (tests/deploy): an installed binary in an empty
#      folder, the .deb, Apache's modes, shared hosting under suEXEC,
#      the portable bundle in a bare root, each docs/deploy recipe as written
# Two lanes run at once: 5 then 6b-9, and 6 then 10.
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

# npm packages (package-lock.json): jsdom and playwright-core for the
# browser tests, www/vendor for the page, and the MCP server the mcp
# plugin's unit and HTTP tests run (@modelcontextprotocol/server-everything),
# so before any test step. Idempotent: npm ci only when the lock changed.
step "npm packages"
run_step "setup-www" scripts/setup-www.sh

step "build (gcc)"
run_step "build with gcc" make -s all
step "build (clang)"
run_step "build with clang" make -s CC=clang BUILD=build-clang all

# A runner that ends with "N passed, N failed" (tests/http, tests/layers).
count_plain() {
    local name=$1 line
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
    if [ -n "$line" ]; then
        passed=$((passed + $(cut -d' ' -f1 <<<"$line")))
        failed=$((failed + $(cut -d' ' -f3 <<<"$line")))
    else
        echo "not ok - $name: no summary"
        failed=$((failed + 1))
    fi
}

step "layer check"
# The rule itself (also the first thing `make check` does), then the
# check's own self-test over trees that break it on purpose.
run_step "the layer check" scripts/check-layers.sh
tests/layers/run.sh 2>&1 | tee "$log"
count_plain "layer check self-test"

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

step "differential fuzzer"
# Any input on which jscan or jsonout and jansson differ, or on which the
# SSE parser's events depend on how the stream was split, or a sanitizer
# report, stops libFuzzer with an error: one test for both fuzzers.
run_step "fuzz jscan and jsonout against jansson" \
    make -s fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-30}"

# node --test prints "# pass N" and "# fail N"; a non-zero exit without
# a failing test (a file that crashed) counts as one failure.
count_node() {
    local name=$1 rc p f
    shift
    "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    p=$(grep -E '^# pass [0-9]+$' "$log" | tail -1 | cut -d' ' -f3)
    f=$(grep -E '^# fail [0-9]+$' "$log" | tail -1 | cut -d' ' -f3)
    if [ -z "$p" ] || [ -z "$f" ]; then
        echo "not ok - $name: no summary"
        failed=$((failed + 1))
        return
    fi
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "not ok - $name: exited with status $rc"
        failed=$((failed + 1))
    fi
}

# under_asan WHAT CMD...: CMD (a command or a function) with GA_BIN the
# ASan/UBSan build and the sanitizers' logs in a fresh folder; any report
# they write fails the step, named WHAT.
under_asan() {
    local what=$1 logs
    shift
    if ! make -s asan; then
        echo "not ok - the ASan/UBSan build failed"
        failed=$((failed + 1))
        return
    fi
    logs=$(mktemp -d "${TMPDIR:-/tmp}/ga-asan.XXXXXX")
    ASAN_OPTIONS=log_path=$logs/asan:detect_leaks=1 \
    UBSAN_OPTIONS=log_path=$logs/ubsan:print_stacktrace=1 \
    GA_BIN=$repo/build-asan/gemini-agent "$@"
    if [ -n "$(ls -A "$logs")" ]; then
        echo "not ok - sanitizer reports from $what:"
        cat "$logs"/*
        failed=$((failed + 1))
    fi
    rm -rf "$logs"
}

# The ASan/UBSan responder, built once here: both lanes below run it.
step "ASan/UBSan build"
run_step "the ASan/UBSan build" make -s asan

# The request path end to end (chat loop, Gemini client, CGI, the run API
# and its store, the budget, the threads of a worker) under the sanitizers.
http_asan() {
    tests/http/run.sh t_chat.sh t_chat_errors.sh t_stream.sh t_routes.sh t_cgi.sh t_concurrency.sh t_workers.sh \
        t_runapi.sh t_approvals.sh t_budget.sh t_seal.sh t_plugins.sh t_permission.sh t_mcp.sh t_clarify.sh \
        t_terminal_only.sh t_websearch.sh t_references.sh t_todo.sh \
        t_outbound.sh t_chat_schema.sh t_remote_user.sh t_remote_user_apache.sh \
        t_fastcgi_abuse.sh t_cgi_attacks.sh t_data_files.sh t_mcp_hostile.sh t_modelbounds.sh t_modelbounds_run.sh \
        t_memcreep.sh t_cors.sh t_accesslog.sh t_version.sh t_session.sh t_check_settings.sh 2>&1 | tee "$log"
    count_plain "HTTP tests (asan)"
}

# Every file of the terminal client's suite: run.sh, then t_*.sh.
term_suite() {
    local f
    for f in tests/term/run.sh tests/term/t_*.sh; do
        "$f" 2>&1 | tee "$log"
        count_plain "terminal client: ${f##*/}$1"
    done
}

# Lane 1: the HTTP tests, then the terminal client, the Agent SDK, the
# mock's self-test and the browser code and browsers.
lane_http() {
    step "HTTP tests"
    tests/http/run.sh 2>&1 | tee "$log"
    count_plain "HTTP tests"
    lane_clients
}

# The clients of lane 1: the terminal client, the Agent SDK, the mock's
# self-test, the browser code and the browsers.
lane_clients() {
    step "terminal client tests"
    term_suite ""
    step "terminal client tests against the ASan/UBSan binary"
    under_asan "the terminal client" term_suite " (asan)"

    step "Agent SDK test"
    # tests/sdk: @anthropic-ai/claude-agent-sdk's query() spawning
    # `gemini-agent chat` against the mock Gemini (a few seconds)
    count_node "Agent SDK test" node --test tests/sdk/
    step "Agent SDK test against the ASan/UBSan binary"
    under_asan "the terminal client under the Agent SDK" \
        count_node "Agent SDK test (asan)" node --test tests/sdk/

    step "mock Gemini server self-test"
    # unittest prints "Ran N tests" and "OK" or "FAILED (failures=F, errors=E)"
    python3 -m unittest tests/mock/test_mock.py 2>&1 | tee "$log"
    ran=$(sed -nE 's/^Ran ([0-9]+) tests? .*/\1/p' "$log" | tail -1)
    bad=$(sed -nE 's/^FAILED \((.*)\)$/\1/p' "$log" | grep -oE '[0-9]+' |
          awk '{ n += $1 } END { print n + 0 }')
    if [ -z "$ran" ]; then
        echo "not ok - mock self-test: no summary"
        failed=$((failed + 1))
    else
        passed=$((passed + ran - ${bad:-0}))
        failed=$((failed + ${bad:-0}))
    fi

    step "browser code unit tests"
    count_node "browser unit tests" node --test tests/js/

    step "browser tests"
    count_node "browser tests" tests/e2e/run.sh
}

# Lane 2: the HTTP tests against the ASan/UBSan responder, then the
# deployments (tests/deploy) and the documentation's links. The lanes
# take about as long as each other.
lane_rest() {
    step "HTTP tests against the ASan/UBSan responder"
    under_asan "the responder" http_asan

    step "deployment tests"
    tests/deploy/run.sh 2>&1 | tee "$log"
    count_plain "deployment tests"
    # Apache's three modes run the program itself (the .deb and the bundle
    # are release builds): again with the ASan/UBSan binary
    step "deployment tests against the ASan/UBSan binary"
    under_asan "the program under Apache" deploy_asan

    step "documentation links"
    T_DIR=tests/docs tests/http/run.sh 2>&1 | tee "$log"
    count_plain "documentation links"
}

deploy_asan() {
    tests/deploy/run.sh t_apache_cgi.sh t_apache_fcgid.sh t_apache_proxy_fcgi.sh 2>&1 | tee "$log"
    count_plain "deployment tests (asan)"
}

# The two lanes share nothing but the machine (every server is on a free
# loopback port in a temp folder of its own), so they run at once; each
# keeps its own output and counts, printed whole in order when both end.
lanes=$(mktemp -d "${TMPDIR:-/tmp}/ga-lanes.XXXXXX")
trap 'rm -f "$log"; rm -rf "$lanes"' EXIT
step "two lanes at once (their output follows when both end; meanwhile: tail -f $lanes/*.out)"
run_lane() {
    local name=$1
    (
        passed=0 failed=0
        log=$lanes/$name.log
        "lane_$name"
        echo "$passed $failed" >"$lanes/$name.count"
    ) >"$lanes/$name.out" 2>&1
}
run_lane http &
lane_http_pid=$!
run_lane rest &
lane_rest_pid=$!
wait "$lane_http_pid" "$lane_rest_pid"
for name in http rest; do
    cat "$lanes/$name.out"
    if [ -f "$lanes/$name.count" ]; then
        read -r p f <"$lanes/$name.count"
        passed=$((passed + p))
        failed=$((failed + f))
    else
        echo "not ok - lane $name: ended without its counts"
        failed=$((failed + 1))
    fi
done
rm -rf "$lanes"

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
