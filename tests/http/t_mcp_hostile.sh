#!/bin/bash
# t_mcp_hostile.sh - the built-in mcp plugin against a hostile MCP server
# (tests/mcp/hostile.py) through nginx + the responder + the mock Gemini
# server: the server path of check_mcp_hostile.c.
#
#  - one .mcp.json names well-behaved and hostile servers, over stdio and
#    over Streamable HTTP (hostile.py --http on a free loopback port,
#    stopped by PID; the url's path is the mode): the ones that fail at
#    load are left out and logged, the others serve (`check` and GET
#    /_jay/actions);
#  - the model calls the tools of servers that answer 50 MB, an error of
#    1 MB, late, a request of their own, structuredContent too deep and
#    deep enough: each is an error or a bounded answer the model reads,
#    the request ends well before the action watchdog, and the next
#    request works; a 16-deep answer kept in the history does not stop
#    the conversation;
#  - a server that writes to stderr without end does not fill the log,
#    and the log names what went wrong without the servers' bytes.
source "$(dirname "${BASH_SOURCE[0]}")/chat_lib.sh"

HOSTILE=$REPO/tests/mcp/hostile.py

start_mock

PORTFILE=$T_TMP/hostile.port
"$PY" "$HOSTILE" --http "$PORTFILE" >>"$T_TMP/hostile.log" 2>&1 </dev/null &
HOSTILE_PID=$!
T_BG_PIDS+=("$HOSTILE_PID")
wait_until 10000 test -s "$PORTFILE" || bail "hostile.py --http did not start"
HP=$(cat "$PORTFILE")
U=http://127.0.0.1:$HP

cat >"$T_TMP/mcp.json" <<EOF
{"mcpServers": {
  "good":   {"command": "$PY", "args": ["$HOSTILE", "good"]},
  "noisy":  {"command": "$PY", "args": ["$HOSTILE", "stderr-flood"]},
  "hgood":  {"url": "$U/good"},
  "garble": {"url": "$U/not-json"},
  "quit":   {"url": "$U/exit-after-init"},
  "names":  {"url": "$U/bad-names,bad-schemas"},
  "huge":   {"url": "$U/huge-result"},
  "herr":   {"url": "$U/huge-error"},
  "late":   {"url": "$U/late-call", "timeout": 2500},
  "asks":   {"url": "$U/asks-client", "timeout": 2500},
  "deep":   {"url": "$U/deep-result"},
  "nested": {"url": "$U/nested-result"}
}}
EOF
start_stack --workers 1 --mock --limits "{$CHAT_LIMITS}" \
    --yaml "plugins: {expose: [mcp], config: {mcp: {configFile: '$T_TMP/mcp.json', timeoutMs: 8000}}}" \
    --yaml "outbound: {allow: [127.0.0.1]}"

ga_run check --config "$GA_CONF"
if [ "$rc" -eq 0 ] && grep -qE '^plugin mcp \(built-in\): [0-9]+ tools' <<<"$out" &&
    grep -qF "server 'garble' sent no answer to request 1" <<<"$out$err" &&
    grep -qF "server 'quit' ended the session (HTTP 404); its tools are left out" <<<"$out$err"; then
    ok "check loads the plugin, the failing servers named and left out"
else
    not_ok "check loads the plugin, the failing servers named and left out" "rc=$rc: $(tr '\n' ' ' <<<"$out$err" | cut -c1-800)"
fi

req GET /_jay/actions
assert_py "GET /_jay/actions: the good servers' tools, not the failing ones'" <<'EOF'
status ==> 200
stdio :: 'mcp.good_echo' in [a['name'] for a in r['actions']] ==> True
http :: 'mcp.hgood_echo' in [a['name'] for a in r['actions']] ==> True
not a garbling server's :: [a['name'] for a in r['actions'] if a['name'].startswith('mcp.garble_')] ==> []
not one gone after initialize :: [a['name'] for a in r['actions'] if a['name'].startswith('mcp.quit_')] ==> []
a lying server's names, made safe :: sorted(a['name'] for a in r['actions'] if a['name'].startswith('mcp.names_') and 'esc' in a['name']) ==> ['mcp.names_esc___31mred_']
its schemas too deep or with $ref, any object :: [a['inputSchema'] for a in r['actions'] if a['name'] in ('mcp.names_schema-mid', 'mcp.names_schema-deep', 'mcp.names_schema-refs')] ==> [{'type': 'object'}] * 3
EOF

# call TOOL ARGS: the model calls action_mcp_TOOL with ARGS (JSON).
call() {
    mock_reset
    chat_send "[[mock:server-call tool=action_mcp_$1 args='$2']] call it"
}

call good_echo '{"text":"over stdio"}'
assert_py "a good server's tool answers" <<'EOF'
status ==> 200
ran :: [(c['name'], c['ok']) for c in r['serverCalls']] ==> [('mcp.good_echo', True)]
the answer went to the model :: 'echo: over stdio' in json.dumps(reqs[1]['body']['contents'][-1]) ==> True
EOF

# A hostile call: an error the model reads, bounded, and fast.
hostile_call() {
    local tool=$1 want=$2 t0 t1
    t0=$(now_ms)
    call "$tool" '{}'
    t1=$(now_ms)
    export WANT=$want
    assert_py "$tool: an error the model reads" <<'EOF'
status ==> 200
failed :: [(c['name'], c['ok']) for c in r['serverCalls']] ==> [('mcp.' + r['serverCalls'][0]['name'][4:], False)]
the model was told :: E['WANT'] in json.dumps(reqs[1]['body']['contents'][-1]) ==> True
bounded :: len(json.dumps(reqs[1]['body']['contents'][-1])) < 2048 ==> True
EOF
    if [ $((t1 - t0)) -lt 8000 ]; then
        ok "$tool: answered in $((t1 - t0)) ms, before the action watchdog"
    else
        not_ok "$tool: answered before the action watchdog" "$((t1 - t0)) ms"
    fi
}

# The worker's peak memory (VmHWM, KiB) before and after the hostile calls.
peak_kb() {
    read_pidfile
    sed -nE 's/^VmHWM:[[:space:]]+([0-9]+) kB/\1/p' "/proc/${PF_WORKERS%% *}/status"
}
PEAK0=$(peak_kb)

hostile_call huge_act "server 'huge' sent an answer over 4194304 bytes"
hostile_call herr_act "server 'herr': ????????"
hostile_call late_act "server 'late' is unreachable: Operation timed out"
hostile_call asks_act "server 'asks' is unreachable: Operation timed out"

call deep_act '{}'
assert_py "structuredContent too deep: its text is the answer" <<'EOF'
status ==> 200
ran :: [c['ok'] for c in r['serverCalls']] ==> [True]
the text :: 'flat text' in json.dumps(reqs[1]['body']['contents'][-1]) ==> True
not the deep one :: '"leaf"' in json.dumps(reqs[1]['body']['contents'][-1]) ==> False
EOF

call nested_act '{}'
assert_py "structuredContent 16 deep is the answer" <<'EOF'
status ==> 200
ran :: [c['ok'] for c in r['serverCalls']] ==> [True]
the structure :: '"leaf": true' in json.dumps(reqs[1]['body']['contents'][-1]) ==> True
EOF
mock_reset
chat_next "and now?"
assert_py "the conversation with the 16-deep answer in its history goes on" <<'EOF'
status ==> 200
answered :: r['type'] ==> 'response'
the 16-deep answer was sent back to the model :: '"leaf": true' in json.dumps(reqs[0]['body']['contents']) ==> True
EOF

call noisy_echo '{"text":"through the noise"}'
assert_py "a server writing to stderr without end still answers" <<'EOF'
status ==> 200
ran :: [(c['name'], c['ok']) for c in r['serverCalls']] ==> [('mcp.noisy_echo', True)]
the answer :: 'echo: through the noise' in json.dumps(reqs[1]['body']['contents'][-1]) ==> True
EOF

call hgood_echo '{"text":"still here"}'
assert_py "after all that, the HTTP server's tool answers" <<'EOF'
status ==> 200
ran :: [(c['name'], c['ok']) for c in r['serverCalls']] ==> [('mcp.hgood_echo', True)]
EOF

PEAK1=$(peak_kb)
if [ -n "$PEAK0" ] && [ -n "$PEAK1" ] && [ $((PEAK1 - PEAK0)) -lt 32768 ]; then
    ok "the worker's peak memory grew by $((PEAK1 - PEAK0)) KiB through the hostile calls (a 50 MB answer among them)"
else
    not_ok "the worker's peak memory stays bounded" "VmHWM ${PEAK0:-?} -> ${PEAK1:-?} KiB"
fi

read_pidfile
if proc_alive "$PF_MASTER" && [ -n "$PF_WORKERS" ]; then
    ok "the responder is up"
else
    not_ok "the responder is up" "master $PF_MASTER, workers '$PF_WORKERS'"
fi
size=$(stat -c %s "$GA_LOG")
if [ "$size" -lt 262144 ]; then
    ok "the log stays small with a server writing to stderr without end ($size bytes)"
else
    not_ok "the log stays small" "$size bytes"
fi
check "the log relays the noisy server's stderr, cleaned" \
    grep -qF "mcp: server 'noisy' (stderr): hostile: a line of stderr that never ends ?[31m?" "$GA_LOG"
check "the log says when it drops the rest" \
    grep -qF "mcp: server 'noisy' writes more than 50 lines a minute to its stderr" "$GA_LOG"
if grep -qF "mcp: server 'garble' sent no answer to request 1 (of what it sent, 1 messages were not JSON" "$GA_LOG" &&
    grep -qF "mcp: server 'quit' ended the session (HTTP 404); its tools are left out" "$GA_LOG"; then
    ok "the log names the failing servers"
else
    not_ok "the log names the failing servers" "$(grep -a "mcp:" "$GA_LOG" | grep -v stderr | head -c 800 | tr '\n' '|')"
fi
assert_file_lacks "$GA_LOG" $'\x1b' "no escape byte of a server in the log"
assert_file_lacks "$GA_LOG" "this is not JSON" "no server's garbage in the log"
assert_file_lacks "$GA_LOG" "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee" "no server's huge error in the log"

stop_stack
stop_pid "$HOSTILE_PID" 3000
wait "$HOSTILE_PID" 2>/dev/null
stop_mock

finish
