# tests/term/lib.sh - what the terminal client's test files share: the
# binary ($GA_BIN, else build/gemini-agent), a temporary folder ($TMP, its
# working folder $WORK, removed at exit), the mock Gemini on 127.0.0.1
# (stopped by PID at exit), the environment chat reads (a fake key, no
# agent.yaml, the saved sessions under $TMP/state), and the assertions:
# check NAME CMD..., golden NAME FILE, jsonq FILE PYEXPR.
#
# Source it after `set -u`, with TERM_DIR set to tests/term:
#   TERM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
#   . "$TERM_DIR/lib.sh"
# and end with `summary`.
REPO=$(cd "$TERM_DIR/../.." && pwd -P)
BIN=${GA_BIN:-$REPO/build/gemini-agent}
case $BIN in /*) ;; *) BIN=$REPO/$BIN ;; esac
PY=${PY:-/usr/bin/python3}
MOCK=$REPO/tests/mock
GOLDEN=$TERM_DIR/golden

[ -x "$BIN" ] || { echo "run.sh: $BIN is missing - run make first" >&2; exit 2; }

# A fixed-length folder under /tmp: the prompt (and so the mock's token
# counts) carries the working folder's path.
TMP=$(mktemp -d /tmp/ga-term.XXXXXX) || exit 2
WORK=$TMP/work
mkdir -p "$WORK"
MOCK_PID=
# A test file may define cleanup_more (e.g. to kill what a failed test
# left running); it runs before the folder goes.
cleanup() {
    [ -n "$MOCK_PID" ] && kill -TERM "$MOCK_PID" 2>/dev/null && wait "$MOCK_PID" 2>/dev/null
    declare -F cleanup_more >/dev/null && cleanup_more
    rm -rf "$TMP"
}
trap cleanup EXIT

passed=0
failed=0
ok() { echo "ok - $1"; passed=$((passed + 1)); }
nok() { echo "not ok - $1"; failed=$((failed + 1)); [ $# -gt 1 ] && printf '%s\n' "$2" | sed 's/^/#   /'; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else nok "$name"; fi; }

"$PY" "$MOCK/gemini_mock.py" --port 0 --port-file "$TMP/mock.port" --quiet 2>"$TMP/mock.log" &
MOCK_PID=$!
"$PY" "$MOCK/mockctl.py" wait --port-file "$TMP/mock.port" >/dev/null || { echo "not ok - the mock did not start"; exit 1; }
export GEMINI_BASE_URL="http://127.0.0.1:$(cat "$TMP/mock.port")"
export GEMINI_API_KEY=test-key
unset GOOGLE_API_KEY GEMINI_AGENT_LOG GEMINI_AGENT_SESSIONS
export GEMINI_AGENT_CONFIG=$TMP/no-such-agent.yaml
# the saved sessions (term/keep.h): never the real ~/.local/state
export XDG_STATE_HOME=$TMP/state

mockctl() { "$PY" "$MOCK/mockctl.py" "$@" --port-file "$TMP/mock.port"; }
scenario() { mockctl scenario "$@" >/dev/null; }
reset_files() { rm -rf "$WORK" && mkdir -p "$WORK" && printf 'hello\nworld\n' >"$WORK/a.txt"; }

# Normalise a transcript: uuids (session ids are uuids too), durations,
# the working folder.
normalise() {
    sed -E -e 's/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/<uuid>/g' \
           -e 's/"duration(_api)?_ms":[0-9]+/"duration\1_ms":0/g' \
           -e "s|$WORK|<cwd>|g"
}

# golden NAME FILE: FILE normalised must equal golden/NAME.jsonl
golden() {
    local name=$1 file=$2
    normalise <"$file" >"$TMP/$name.norm"
    if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
        cp "$TMP/$name.norm" "$GOLDEN/$name.jsonl"
    fi
    if cmp -s "$TMP/$name.norm" "$GOLDEN/$name.jsonl"; then
        ok "golden $name"
    else
        nok "golden $name" "$(diff "$GOLDEN/$name.jsonl" "$TMP/$name.norm" | head -20)"
    fi
}

# jq-less JSON checks: jsonq FILE LINE-FILTER PYEXPR (m is each message).
jsonq() {
    "$PY" - "$@" <<'PYEOF'
import json, sys
msgs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sys.exit(0 if eval(sys.argv[2], {"msgs": msgs, "json": json}) else 1)
PYEOF
}

chat() { (cd "$WORK" && "$BIN" chat "$@"); }

summary() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}
