#!/bin/bash
# t_mcp.sh - the built-in mcp plugin through nginx + the responder + the
# mock Gemini server, against a real MCP server:
# @modelcontextprotocol/server-everything (package.json's devDependencies;
# scripts/setup-www.sh installs it when missing).
#
#  - over stdio: agent.yaml exposes mcp with a .mcp.json that names the
#    server as a command; `check` lists the plugin and its tools; GET
#    /_jay/actions lists mcp.everything_echo with the server's schema and
#    its readOnlyHint as no side effects; the model is declared
#    action_mcp_everything_echo, calls it, and the server's answer reaches
#    the model's next request; the worker's server child is stopped with
#    the stack (no process left behind);
#  - over Streamable HTTP: the same server started as an HTTP server on a
#    free loopback port (stopped by PID), named by url with an extra
#    header; the same call, the same answer; and after the server is
#    restarted (its sessions gone), the next call reconnects.
source "$(dirname "${BASH_SOURCE[0]}")/chat_lib.sh"

EVERY=$REPO/node_modules/@modelcontextprotocol/server-everything/dist/index.js
command -v node >/dev/null || bail "node is missing (scripts/install-deps.sh)"
if [ ! -f "$EVERY" ]; then
    "$REPO/scripts/setup-www.sh" >"$T_TMP/setup-www.log" 2>&1 ||
        bail "cannot install the npm packages: $(tail -c 400 "$T_TMP/setup-www.log" | tr '\n' ' ')"
fi
[ -f "$EVERY" ] || bail "$EVERY is missing after scripts/setup-www.sh"

# The node processes running server-everything whose parent is one of
# the PIDs given.
servers_of() {
    local p pp
    for p in $(pgrep -f -- "$EVERY" 2>/dev/null); do
        pp=$(proc_ppid "$p") || continue
        case " $* " in *" $pp "*) echo "$p" ;; esac
    done
}

# Through the chat: the model calls echo with MESSAGE; checks that the
# tool was declared and the server's answer went back to the model.
chat_echo() {
    local label=$1 msg=$2
    mock_reset
    chat_send "[[mock:server-call tool=action_mcp_everything_echo args='{\"message\":\"$msg\"}']] echo it"
    export ECHO_MSG=$msg
    assert_py "$label" <<'EOF'
status ==> 200
ran :: [(c['name'], c['ok']) for c in r['serverCalls']] ==> [('mcp.everything_echo', True)]
two Gemini calls :: len(reqs) ==> 2
declared to the model :: 'action_mcp_everything_echo' in [d['name'] for t in reqs[0]['body']['tools'] for d in t.get('functionDeclarations', [])] ==> True
with the server's schema :: [d for t in reqs[0]['body']['tools'] for d in t.get('functionDeclarations', []) if d['name'] == 'action_mcp_everything_echo'][0]['parametersJsonSchema']['required'] ==> ['message']
the server's answer went back to the model :: ('Echo: ' + E['ECHO_MSG']) in json.dumps(reqs[1]['body']['contents'][-1]) ==> True
as a result, not an error :: '"isError": false' in json.dumps(reqs[1]['body']['contents'][-1]) ==> True
EOF
}

start_mock

# ---------------------------------------------------------------------------
# stdio

cat >"$T_TMP/stdio.json" <<EOF
{"mcpServers": {"everything": {"command": "node", "args": ["$EVERY", "stdio"]}}}
EOF
start_stack --mock --limits "{$CHAT_LIMITS}" \
    --yaml "plugins: {expose: [mcp], config: {mcp: {configFile: '$T_TMP/stdio.json'}}}"

ga_run check --config "$GA_CONF"
ntools=$(sed -nE 's/^plugin mcp \(built-in\): ([0-9]+) tools.*/\1/p' <<<"$out")
if [ "$rc" -eq 0 ] && [ "${ntools:-0}" -ge 10 ]; then
    ok "check lists the mcp plugin and its tools ($ntools)"
else
    not_ok "check lists the mcp plugin and its tools" "rc=$rc: $(tr '\n' ' ' <<<"$out$err" | cut -c1-600)"
fi

req GET /_jay/actions
assert_py "GET /_jay/actions lists the server's tools" <<'EOF'
status ==> 200
echo :: [a['name'] for a in r['actions'] if a['name'] == 'mcp.everything_echo'] ==> ['mcp.everything_echo']
its description :: [a for a in r['actions'] if a['name'] == 'mcp.everything_echo'][0]['description'] ==> 'Echoes back the input string'
its schema :: [a for a in r['actions'] if a['name'] == 'mcp.everything_echo'][0]['inputSchema']['required'] ==> ['message']
readOnlyHint: no side effects :: [a for a in r['actions'] if a['name'] == 'mcp.everything_echo'][0]['sideEffects'] ==> False
no readOnlyHint: side effects :: [a for a in r['actions'] if a['name'] == 'mcp.everything_toggle-simulated-logging'][0]['sideEffects'] ==> True
get-sum too :: 'mcp.everything_get-sum' in [a['name'] for a in r['actions']] ==> True
EOF

# The loading process keeps no server: only the workers start theirs.
read_pidfile
if [ -z "$(servers_of "$PF_MASTER")" ]; then
    ok "the loading process keeps no server running"
else
    not_ok "the loading process keeps no server running" "children: $(servers_of "$PF_MASTER")"
fi

chat_echo "stdio: the model's call reaches the server and its answer the model" "hello over stdio"

req POST /_jay/actions/mcp.everything_get-sum '{"a":2,"b":40}'
assert_py "POST /_jay/actions runs a server's tool" <<'EOF'
status ==> 200
the sum :: '42' in json.dumps(r) ==> True
EOF

read_pidfile
children=$(servers_of $PF_WORKERS)
if [ -n "$children" ]; then
    ok "a worker runs its own server ($(wc -w <<<"$children"))"
else
    not_ok "a worker runs its own server" "none found under workers $PF_WORKERS"
fi
stop_stack
gone() {
    local p
    for p in $children; do proc_alive "$p" && return 1; done
    return 0
}
if wait_until 5000 gone; then
    ok "the servers end with the stack"
else
    not_ok "the servers end with the stack" "still running: $children"
fi

# ---------------------------------------------------------------------------
# Streamable HTTP

HTTP_PORT=
HTTP_PID=
start_http_server() {
    HTTP_PORT=$(free_port) || bail "no free port"
    PORT=$HTTP_PORT node --require "$HTTP_DIR/conf/mcp_loopback.cjs" "$EVERY" streamableHttp \
        >>"$T_TMP/mcp-http.log" 2>&1 </dev/null &
    HTTP_PID=$!
    T_BG_PIDS+=("$HTTP_PID")
    wait_until 10000 curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$HTTP_PORT/" ||
        bail "the MCP HTTP server did not start: $(tail -c 400 "$T_TMP/mcp-http.log" | tr '\n' ' ')"
}
stop_http_server() {
    stop_pid "$HTTP_PID" 3000
    wait "$HTTP_PID" 2>/dev/null
}

start_http_server
if ss -ltn 2>/dev/null | grep -qE "(0\.0\.0\.0|\*|\[::\]):$HTTP_PORT "; then
    not_ok "the MCP HTTP server listens on the loopback only" "$(ss -ltn | grep ":$HTTP_PORT ")"
else
    ok "the MCP HTTP server listens on the loopback only"
fi
cat >"$T_TMP/http.json" <<EOF
{"mcpServers": {"everything": {"url": "http://127.0.0.1:$HTTP_PORT/mcp",
                               "headers": {"X-Test-Header": "from-mcp-json"}}}}
EOF
# one worker: the session it opens is surely the one the restart loses
start_stack --workers 1 --mock --limits "{$CHAT_LIMITS}" \
    --yaml "plugins: {expose: [mcp], config: {mcp: {configFile: '$T_TMP/http.json'}}}" \
    --yaml "outbound: {allow: [127.0.0.1]}"

ga_run check --config "$GA_CONF"
if [ "$rc" -eq 0 ] && grep -qE '^plugin mcp \(built-in\): [0-9]{2,} tools' <<<"$out"; then
    ok "check lists the HTTP server's tools"
else
    not_ok "check lists the HTTP server's tools" "rc=$rc: $(tr '\n' ' ' <<<"$out$err" | cut -c1-600)"
fi

chat_echo "HTTP: the model's call reaches the server and its answer the model" "hello over HTTP"

# The server restarts on the same port: the session the workers hold is
# unknown to it (404), so the next call opens a new one and is answered.
stop_http_server
PORT=$HTTP_PORT node --require "$HTTP_DIR/conf/mcp_loopback.cjs" "$EVERY" streamableHttp \
    >>"$T_TMP/mcp-http.log" 2>&1 </dev/null &
HTTP_PID=$!
T_BG_PIDS+=("$HTTP_PID")
wait_until 10000 curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$HTTP_PORT/" ||
    bail "the MCP HTTP server did not restart"
for i in 1 2; do
    chat_echo "HTTP: after a server restart the call reconnects ($i)" "again $i"
done
if grep -qF "mcp: server 'everything' ended the session" "$GA_LOG"; then
    ok "the lost session is logged, then a new one opened"
else
    not_ok "the lost session is logged" "$(grep -a mcp "$GA_LOG" | tail -c 400 | tr '\n' ' ')"
fi
stop_stack
stop_http_server
stop_mock

finish
