# tests/http/webmock_lib.sh - tests/mock/search_mock.py (a fake SearXNG
# search endpoint and document server) for t_websearch.sh and
# t_references.sh. Not a test itself; source it after lib.sh.
#
# shellcheck shell=bash disable=SC2034  # the variables are for the tests

SEARCH_PID=
SEARCH_URL=

# start_search_mock: on 127.0.0.1, a free port the kernel picks; sets
# SEARCH_PID and SEARCH_URL. Stopped by stop_search_mock, or on exit.
start_search_mock() {
    local pf=$T_TMP/search.port i
    rm -f "$pf"
    "$PY" "$REPO/tests/mock/search_mock.py" --host 127.0.0.1 --port 0 \
        --port-file "$pf" >>"$T_TMP/search.stdout" 2>>"$T_TMP/search.stderr" </dev/null &
    SEARCH_PID=$!
    T_BG_PIDS+=("$SEARCH_PID")
    for i in $(seq 100); do
        [ -s "$pf" ] && break
        sleep 0.05
    done
    [ -s "$pf" ] || bail "search_mock.py did not start: $(tail -c 400 "$T_TMP/search.stderr" | tr '\n' ' ')"
    SEARCH_URL=http://127.0.0.1:$(cat "$pf")
}

stop_search_mock() {
    [ -n "$SEARCH_PID" ] || return 0
    stop_pid "$SEARCH_PID" 3000
    wait "$SEARCH_PID" 2>/dev/null
    SEARCH_PID=
}

# search_mock_save NAME PATH: GET PATH of the search mock (/__last,
# /__count) and keep its JSON as S[NAME] for assert_py.
search_mock_save() {
    mkdir -p "$SAVED_DIR"
    curl -sS --max-time 10 -o "$SAVED_DIR/$1.json" "$SEARCH_URL$2" ||
        not_ok "search mock $2" "cannot read it"
}
