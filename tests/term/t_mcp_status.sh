#!/bin/bash
# tests/term/t_mcp_status.sh - the terminal client with one good and two
# hostile MCP servers (tests/mcp/hostile.py over stdio): the one that
# exits right after initialize and the one that never answers it are
# left out and reported "failed" in init's mcp_servers and mcp_status,
# the good one "connected", its tools offered, the prompt answered (issue
# 24: a failing server no longer keeps the plugin from loading). With
# tests/term/lib.sh's set-up (the binary against the mock Gemini on
# 127.0.0.1, stopped by PID).
#
#   tests/term/t_mcp_status.sh
#   GA_BIN=build-asan/gemini-agent tests/term/t_mcp_status.sh
#
# Prints "ok - NAME" / "not ok - NAME", then "N passed, N failed".
set -u

TERM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
. "$TERM_DIR/lib.sh"
check() { local name=$1; shift; if "$@"; then ok "$name"; else nok "$name" "$(head -c 2000 "$TMP/out"; tail -c 1000 "$TMP/err")"; fi; }

HOSTILE=$REPO/tests/mcp/hostile.py
CONF=$TMP/conf
mkdir -p "$CONF"
cat >"$CONF/mcp.json" <<EOF
{"mcpServers": {
  "good": {"command": "$PY", "args": ["$HOSTILE", "good"]},
  "quits": {"command": "$PY", "args": ["$HOSTILE", "exit-after-init"]},
  "mute": {"command": "$PY", "args": ["$HOSTILE", "slow-init"]}
}}
EOF
cat >"$CONF/agent.yaml" <<EOF
actions: []
dataDir: $CONF/var
plugins:
  dirs: []
  expose: [mcp]
  config:
    mcp: {configFile: mcp.json, timeoutMs: 2000}
EOF

scenario text
start=$(date +%s%N)
printf '%s\n' '{"type":"control_request","request_id":"mcp_1","request":{"subtype":"mcp_status"}}' \
    '{"type":"user","session_id":"","message":{"role":"user","content":"hi"},"parent_tool_use_id":null}' |
    (cd "$WORK" && GEMINI_AGENT_CONFIG=$CONF/agent.yaml "$BIN" chat --output-format stream-json \
        --verbose --input-format stream-json) >"$TMP/out" 2>"$TMP/err"
rc=$?
took=$((($(date +%s%N) - start) / 1000000))
check "chat with failing MCP servers: exit 0" [ "$rc" -eq 0 ]
WANT='[{"name": "good", "status": "connected"}, {"name": "quits", "status": "failed"}, {"name": "mute", "status": "failed"}]'
check "mcp_status and init's mcp_servers: the good one connected, the others failed" jsonq "$TMP/out" "(
msgs[0]['response']['response']['mcpServers'] == $WANT
and msgs[1]['subtype'] == 'init' and msgs[1]['mcp_servers'] == $WANT)"
check "the good one's tools offered, not the others'; the prompt answered" jsonq "$TMP/out" '(
"good_echo" in msgs[1]["tools"] and not [t for t in msgs[1]["tools"] if t.startswith(("quits_", "mute_"))]
and msgs[-1]["result"] == "Hello from the mock.")'
check "the start waited one timeout, not more ($took ms)" [ "$took" -lt 10000 ]
check "stderr says why each was left out" grep -qF "server 'quits' is gone" "$TMP/err"
check "... and the mute one" grep -qF "server 'mute' did not answer in time; its tools are left out" "$TMP/err"

summary
