#!/bin/bash
# tests/term/t_sdk.sh - the terminal client's stream-json input where the
# Agent SDK test (tests/sdk) found it wanting: an interrupt that is
# already waiting on stdin when a prompt starts (the SDK writes lines
# whenever it likes) stops the prompt before its tool call runs; the
# mcp_status control request (the SDK's mcpServerStatus()). Beside
# tests/term/run.sh, with its mock set-up (the binary against the mock
# Gemini on 127.0.0.1, stopped by PID).
#
#   tests/term/t_sdk.sh
#   GA_BIN=build-asan/gemini-agent tests/term/t_sdk.sh
#
# Prints "ok - NAME" / "not ok - NAME", then "N passed, N failed".
set -u

TERM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO=$(cd "$TERM_DIR/../.." && pwd -P)
BIN=${GA_BIN:-$REPO/build/gemini-agent}
case $BIN in /*) ;; *) BIN=$REPO/$BIN ;; esac
PY=${PY:-/usr/bin/python3}
MOCK=$REPO/tests/mock

[ -x "$BIN" ] || { echo "t_sdk.sh: $BIN is missing - run make first" >&2; exit 2; }

TMP=$(mktemp -d /tmp/ga-term-sdk.XXXXXX) || exit 2
WORK=$TMP/work
mkdir -p "$WORK"
MOCK_PID=
cleanup() {
    [ -n "$MOCK_PID" ] && kill -TERM "$MOCK_PID" 2>/dev/null && wait "$MOCK_PID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT

passed=0
failed=0
ok() { echo "ok - $1"; passed=$((passed + 1)); }
nok() { echo "not ok - $1"; failed=$((failed + 1)); [ $# -gt 1 ] && printf '%s\n' "$2" | sed 's/^/#   /'; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else nok "$name" "$(head -c 2000 "$TMP/out")"; fi; }

"$PY" "$MOCK/gemini_mock.py" --port 0 --port-file "$TMP/mock.port" --quiet 2>"$TMP/mock.log" &
MOCK_PID=$!
"$PY" "$MOCK/mockctl.py" wait --port-file "$TMP/mock.port" >/dev/null || { echo "not ok - the mock did not start"; exit 1; }
export GEMINI_BASE_URL="http://127.0.0.1:$(cat "$TMP/mock.port")"
export GEMINI_API_KEY=test-key
unset GOOGLE_API_KEY GEMINI_AGENT_LOG
export GEMINI_AGENT_CONFIG=$TMP/no-such-agent.yaml

scenario() { "$PY" "$MOCK/mockctl.py" scenario "$@" --port-file "$TMP/mock.port" >/dev/null; }

jsonq() {
    "$PY" - "$@" <<'PYEOF'
import json, sys
msgs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sys.exit(0 if eval(sys.argv[2], {"msgs": msgs, "json": json}) else 1)
PYEOF
}

# The prompt and the interrupt in one write, so both are read before the
# prompt starts: the interrupt is found waiting (while the Gemini call is
# in flight, or before the tool call at the latest), not after the prompt.
scenario server-steps 'calls=[["Bash",{"command":"echo hi > made.txt"}]]'
printf '%s\n' \
    '{"type":"user","session_id":"","message":{"role":"user","content":"run it"},"parent_tool_use_id":null}' \
    '{"type":"control_request","request_id":"int_1","request":{"subtype":"interrupt"}}' |
    (cd "$WORK" && "$BIN" chat --output-format stream-json --verbose --input-format stream-json \
        --permission-mode bypassPermissions) >"$TMP/out" 2>"$TMP/err"
check "interrupt waiting with the prompt: exit 0" [ $? -eq 0 ]
check "interrupt waiting with the prompt: the command did not run" [ ! -e "$WORK/made.txt" ]
check "interrupt waiting with the prompt: answered, and the prompt ends interrupted" jsonq "$TMP/out" '(
[m["response"] for m in msgs if m["type"] == "control_response"] == [{"subtype": "success", "request_id": "int_1", "response": {"still_queued": []}}]
and msgs[-1]["type"] == "result" and msgs[-1]["errors"] == ["interrupted by the user"])'

# mcp_status (the SDK's mcpServerStatus()): the mcp plugin's servers, as
# init's mcp_servers; none without a configuration that exposes it
scenario text
printf '%s\n' '{"type":"control_request","request_id":"mcp_1","request":{"subtype":"mcp_status"}}' \
    '{"type":"user","session_id":"","message":{"role":"user","content":"hi"},"parent_tool_use_id":null}' |
    (cd "$WORK" && "$BIN" chat --output-format stream-json --verbose --input-format stream-json) >"$TMP/out" 2>"$TMP/err"
check "mcp_status: answered with the servers, none here; init's mcp_servers the same" jsonq "$TMP/out" '(
msgs[0] == {"type": "control_response", "response": {"subtype": "success", "request_id": "mcp_1", "response": {"mcpServers": []}}}
and msgs[1]["subtype"] == "init" and msgs[1]["mcp_servers"] == [] and msgs[-1]["result"] == "Hello from the mock.")'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
