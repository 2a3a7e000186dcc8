#!/bin/bash
# tests/term/t_sdk.sh - the terminal client's stream-json input where the
# Agent SDK test (tests/sdk) found it wanting: an interrupt that is
# already waiting on stdin when a prompt starts (the SDK writes lines
# whenever it likes) stops the prompt before its tool call runs; the
# mcp_status control request (the SDK's mcpServerStatus()). With
# tests/term/lib.sh's set-up (the binary against the mock Gemini on
# 127.0.0.1, stopped by PID).
#
#   tests/term/t_sdk.sh
#   GA_BIN=build-asan/gemini-agent tests/term/t_sdk.sh
#
# Prints "ok - NAME" / "not ok - NAME", then "N passed, N failed".
set -u

TERM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
. "$TERM_DIR/lib.sh"
# a failed check shows the output
check() { local name=$1; shift; if "$@"; then ok "$name"; else nok "$name" "$(head -c 2000 "$TMP/out")"; fi; }


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

summary
