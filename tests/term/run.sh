#!/bin/bash
# tests/term/run.sh - the terminal client (`gemini-agent chat`) end to end:
# the binary against the mock Gemini (tests/mock/gemini_mock.py) on
# 127.0.0.1, its stream-json compared byte for byte with the golden
# transcripts in tests/term/golden/ after normalising what changes from
# run to run (uuids and session ids, durations, the temporary folder).
#
#   tests/term/run.sh            every test
#   GA_BIN=build-asan/gemini-agent tests/term/run.sh   another binary
#   UPDATE_GOLDEN=1 tests/term/run.sh   rewrite the golden files (review
#                                       the diff before committing)
#
# Prints "ok - NAME" / "not ok - NAME" per assertion, then
# "N passed, N failed"; exits 1 when anything failed.
set -u

TERM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
. "$TERM_DIR/lib.sh"

# --- print mode, stream-json ----------------------------------------------
reset_files
scenario text
chat -p "hi" --output-format stream-json --verbose >"$TMP/out" 2>"$TMP/err"
check "plain text: exit 0" [ $? -eq 0 ]
golden text "$TMP/out"
check "plain text: the session id is a uuid everywhere" jsonq "$TMP/out" \
    'len({m["session_id"] for m in msgs}) == 1 and len(msgs[0]["session_id"]) == 36'

reset_files
scenario server-steps 'calls=[["Read",{"file_path":"a.txt"}]]'
chat -p "read a.txt" --output-format stream-json --verbose >"$TMP/out" 2>"$TMP/err"
check "tool round trip: exit 0" [ $? -eq 0 ]
golden read "$TMP/out"

reset_files
scenario server-steps 'calls=[["Bash",{"command":"echo hi > made.txt"}]]'
chat -p "run it" --output-format stream-json --verbose >"$TMP/out" 2>"$TMP/err"
check "denial in default mode: exit 0" [ $? -eq 0 ]
golden deny "$TMP/out"
check "denial in default mode: the command did not run" [ ! -e "$WORK/made.txt" ]

reset_files
scenario error status=429
chat -p "hi" --output-format stream-json --verbose >"$TMP/out" 2>"$TMP/err"
check "quota error: exit 1" [ $? -eq 1 ]
golden error "$TMP/out"

# --- --add-dir: the file tools reach a folder beside the cwd --------------
mkdir -p "$TMP/extra" "$TMP/private"
printf 'beside\n' >"$TMP/extra/b.txt"
printf 'secret\n' >"$TMP/private/s.txt"
reset_files
scenario server-steps "calls=[[\"Read\",{\"file_path\":\"$TMP/extra/b.txt\"}],[\"Read\",{\"file_path\":\"$TMP/private/s.txt\"}]]"
chat -p "read both" --add-dir "$TMP/extra" --add-dir= --output-format stream-json --verbose >"$TMP/out" 2>"$TMP/err"
check "--add-dir: exit 0" [ $? -eq 0 ]
check "--add-dir: a file in the added folder is read, one outside is refused" jsonq "$TMP/out" '(
(lambda r: len(r) == 2 and not r[0]["is_error"] and "beside" in r[0]["content"]
 and r[1]["is_error"] and "secret" not in r[1]["content"])(
 [m["message"]["content"][0] for m in msgs if m["type"] == "user"]))'

# --- the other output formats ---------------------------------------------
scenario text
out=$(chat -p "hi" 2>"$TMP/err")
check "text output: exit 0" [ $? -eq 0 ]
check "text output: the answer only" [ "$out" = "Hello from the mock." ]
out=$(echo "hi from stdin" | (cd "$WORK" && "$BIN" chat -p 2>"$TMP/err"))
check "text output: the prompt from stdin" [ "$out" = "Hello from the mock." ]

chat -p "hi" --output-format json >"$TMP/out" 2>"$TMP/err"
check "json output: exit 0" [ $? -eq 0 ]
golden json "$TMP/out"

chat -p "hi" --output-format json --model gemini-2.5-pro --session-id my-session >"$TMP/out" 2>"$TMP/err"
check "json output on gemini-2.5-pro: the session id given, the price table's cost" jsonq "$TMP/out" '
(lambda r: r["session_id"] == "my-session" and r["total_cost_usd"] > 0 and
 abs(r["total_cost_usd"] - (r["usage"]["input_tokens"] * 1.25 + r["usage"]["output_tokens"] * 10.0) / 1e6) < 1e-12 and
 r["modelUsage"]["gemini-2.5-pro"]["costUSD"] == r["total_cost_usd"])(msgs[0])'

scenario error status=503
chat -p "hi" --output-format json >"$TMP/out" 2>"$TMP/err"
check "json output, Gemini down: exit 1" [ $? -eq 1 ]
check "json output, Gemini down: only the error result, with errors" jsonq "$TMP/out" \
    'len(msgs) == 1 and msgs[0]["is_error"] and msgs[0]["subtype"] == "error_during_execution" and msgs[0]["errors"][0].startswith("API Error: upstream_unavailable")'
out=$(chat -p "hi" 2>"$TMP/err")
check "text output, Gemini down: exit 1, nothing on stdout, the error on stderr" \
    bash -c '[ $1 -eq 1 ] && [ -z "$2" ] && grep -q "API Error: upstream_unavailable" "$3"' _ $? "$out" "$TMP/err"
scenario text

# --- flags ------------------------------------------------------------------
chat -p hi --output-format xml >"$TMP/out" 2>"$TMP/err"
check "bad --output-format: exit 2" [ $? -eq 2 ]
check "bad --output-format: says why" grep -q "text, json or stream-json" "$TMP/err"
check "bad --output-format: nothing on stdout" [ ! -s "$TMP/out" ]
chat -p hi --max-turns=zero >/dev/null 2>"$TMP/err"
check "bad --max-turns: exit 2" [ $? -eq 2 ]
chat -p hi --permission-mode auto >/dev/null 2>"$TMP/err"
check "bad --permission-mode: exit 2" [ $? -eq 2 ]
chat -p hi --resume abc --continue >/dev/null 2>"$TMP/err"
check "--resume with --continue: exit 2" [ $? -eq 2 ]
chat -p hi --input-format stream-json --output-format stream-json >/dev/null 2>"$TMP/err"
check "stream-json input with a PROMPT: exit 2" [ $? -eq 2 ]
chat -p hi --allowedTools 'Bash(git:*' >"$TMP/out" 2>"$TMP/err"
check "unreadable tool rule: exit 2" [ $? -eq 2 ]
out=$(chat --setting-sources= --betas x,y --strict-mcp-config --model=gemini-3.8-flash -p "hi" 2>"$TMP/err")
check "Claude Code flags ignored: the prompt still runs" [ "$out" = "Hello from the mock." ]
check "Claude Code flags ignored: noted on stderr" grep -q "ignoring --betas" "$TMP/err"

out=$("$BIN" chat -v)
check "-v: exit 0" [ $? -eq 0 ]
check "-v: a version the Python SDK accepts (>= 2.0.0)" "$PY" -c '
import re, sys
m = re.search(r"([0-9]+)\.([0-9]+)\.([0-9]+)", sys.argv[1])
sys.exit(0 if m and tuple(map(int, m.groups())) >= (2, 0, 0) else 1)' "$out"
check "--version = -v" [ "$("$BIN" chat --version)" = "$out" ]

# --- auth ---------------------------------------------------------------------
(cd "$WORK" && env -u GEMINI_API_KEY "$BIN" chat -p hi --output-format stream-json --verbose) >"$TMP/out" 2>"$TMP/err"
check "no key: exit 1" [ $? -eq 1 ]
check "no key: one system error message, no session" jsonq "$TMP/out" \
    'len(msgs) == 1 and msgs[0]["type"] == "system" and msgs[0]["subtype"] == "error" and "GEMINI_API_KEY" in msgs[0]["error"]'
GEMINI_API_KEY=bad-key chat -p hi --output-format stream-json --verbose >"$TMP/out" 2>"$TMP/err"
check "key refused: exit 1" [ $? -eq 1 ]
check "key refused: a system error message and an error result" jsonq "$TMP/out" \
    'any(m["type"] == "system" and m["subtype"] == "error" for m in msgs) and msgs[-1]["type"] == "result" and msgs[-1]["is_error"]'
check "key refused: the message names the credential's source, not a site's key" jsonq "$TMP/out" \
    '[m["error"] for m in msgs if m.get("subtype") == "error"] == ["API Error: upstream_auth: Gemini refused the credential (GEMINI_API_KEY); check it"] and msgs[-1]["errors"] == [[m["error"] for m in msgs if m.get("subtype") == "error"][0]]'

# --- a configuration: its key file and its plugins ----------------------------
mkdir -p "$TMP/conf"
printf 'actions: []\ndataDir: %s/var\nplugins:\n  dirs: []\n  expose: [todo]\n  config:\n    file_edit: {root: /no/such/folder}\n' "$TMP" >"$TMP/conf/agent.yaml"
printf 'apiKey: test-key\n' >"$TMP/conf/.gemini.yaml"
chmod 600 "$TMP/conf/.gemini.yaml"
reset_files
scenario server-steps 'calls=[["Read",{"file_path":"a.txt"}]]'
(cd "$WORK" && env -u GEMINI_API_KEY GEMINI_AGENT_CONFIG="$TMP/conf/agent.yaml" "$BIN" chat -p "read" --output-format stream-json --verbose) >"$TMP/out" 2>"$TMP/err"
check "configuration: exit 0 with the key of its .gemini.yaml" [ $? -eq 0 ]
check "configuration: its plugins' tools are declared beside the terminal's, the key's source said" jsonq "$TMP/out" \
    '{"Read", "Bash", "plan"} <= set(msgs[0]["tools"]) and msgs[0]["apiKeySource"] == "apiKeyHelper"'
check "configuration: file_edit stays rooted at the working folder" jsonq "$TMP/out" \
    'msgs[2]["message"]["content"][0]["is_error"] is False and msgs[2]["tool_use_result"]["file"]["content"] == "hello\nworld\n"'

# --- permission modes and rules ------------------------------------------------
reset_files
scenario server-steps 'calls=[["Write",{"file_path":"b.txt","content":"new\n"}]]'
chat -p "write" --output-format stream-json --verbose --permission-mode acceptEdits >"$TMP/out" 2>"$TMP/err"
check "acceptEdits: a file edit runs" [ "$(cat "$WORK/b.txt" 2>/dev/null)" = "new" ]
check "acceptEdits: no denial" jsonq "$TMP/out" 'msgs[-1]["permission_denials"] == []'

reset_files
scenario server-steps 'calls=[["Write",{"file_path":"b.txt","content":"new\n"}]]'
chat -p "write" --output-format stream-json --verbose --permission-mode plan >"$TMP/out" 2>"$TMP/err"
check "plan: a file edit does not run" [ ! -e "$WORK/b.txt" ]
check "plan: denied, in permission_denials" jsonq "$TMP/out" \
    'msgs[-1]["permission_denials"][0]["tool_name"] == "Write" and msgs[-1]["permission_denials"][0]["tool_input"] == {"file_path": "b.txt", "content": "new\n"}'

reset_files
scenario server-steps 'calls=[["Bash",{"command":"echo hi > made.txt"}]]'
chat -p "run" --output-format stream-json --verbose --permission-mode acceptEdits >"$TMP/out" 2>"$TMP/err"
check "acceptEdits: a shell command is still denied without a prompt channel" [ ! -e "$WORK/made.txt" ]
chat -p "run" --output-format stream-json --verbose --allowedTools 'Read Bash(echo:*)' >"$TMP/out" 2>"$TMP/err"
check "--allowedTools run(echo:*): the command runs" [ -e "$WORK/made.txt" ]
rm -f "$WORK/made.txt"
chat -p "run" --output-format stream-json --verbose --permission-mode bypassPermissions --disallowedTools 'Bash(echo hi:*)' >"$TMP/out" 2>"$TMP/err"
check "--disallowedTools wins over bypassPermissions" [ ! -e "$WORK/made.txt" ]
chat -p "run" --output-format stream-json --verbose --permission-mode=bypassPermissions >"$TMP/out" 2>"$TMP/err"
check "bypassPermissions: the command runs" [ -e "$WORK/made.txt" ]
rm -f "$WORK/made.txt"
chat -p "run" --output-format stream-json --verbose --permission-mode dontAsk >"$TMP/out" 2>"$TMP/err"
check "dontAsk: denied" jsonq "$TMP/out" 'len(msgs[-1]["permission_denials"]) == 1'

scenario server-steps 'calls=[["Read",{"file_path":"a.txt"}]]'
chat -p "read" --output-format stream-json --verbose --disallowedTools Read >"$TMP/out" 2>"$TMP/err"
check "--disallowedTools Read: a read-only tool denied too, the rule named" jsonq "$TMP/out" '(
[m for m in msgs if m["type"] == "user"][0]["message"]["content"][0] == {"type": "tool_result", "tool_use_id": "toolu_1",
  "content": "Permission to use Read denied: --disallowedTools forbids this call.", "is_error": True}
and len(msgs[-1]["permission_denials"]) == 1)'
check "--disallowedTools Read: the advisory permission_denied message" jsonq "$TMP/out" '(
[{k: m[k] for k in ("tool_name", "tool_use_id", "decision_reason_type", "decision_reason")} for m in msgs if m.get("subtype") == "permission_denied"]
== [{"tool_name": "Read", "tool_use_id": "toolu_1", "decision_reason_type": "rule", "decision_reason": "--disallowedTools"}])'

# --- errors of a tool call -------------------------------------------------------
scenario server-steps 'calls=[["Read",{"file":"a.txt"}]]'
chat -p "read" --output-format stream-json --verbose >"$TMP/out" 2>"$TMP/err"
check "schema mismatch: tool_result is_error, the details on stderr only" jsonq "$TMP/out" \
    'msgs[2]["message"]["content"][0]["is_error"] is True and msgs[2]["message"]["content"][0]["content"].startswith("InputValidationError: Read")'
check "schema mismatch: stderr says which rule" grep -q "Read: schema_violation" "$TMP/err"
scenario server-steps 'calls=[["no_such_tool",{}]]'
chat -p "x" --output-format stream-json --verbose >"$TMP/out" 2>"$TMP/err"
check "unknown tool: tool_result is_error" jsonq "$TMP/out" \
    'msgs[2]["message"]["content"][0] == {"type": "tool_result", "tool_use_id": "toolu_1", "content": "Error: No such tool available: no_such_tool", "is_error": True}'

# --- max turns, partial messages ---------------------------------------------------
scenario server-steps 'calls=[["Read",{"file_path":"a.txt"}]]'
chat -p "read" --output-format stream-json --verbose --max-turns 1 >"$TMP/out" 2>"$TMP/err"
check "--max-turns 1: exit 1" [ $? -eq 1 ]
check "--max-turns 1: error_max_turns with errors" jsonq "$TMP/out" \
    'msgs[-1]["subtype"] == "error_max_turns" and msgs[-1]["is_error"] and msgs[-1]["num_turns"] == 1 and len(msgs[-1]["errors"]) == 1'
scenario text
chat -p "hi" --output-format stream-json --verbose --include-partial-messages >"$TMP/out" 2>"$TMP/err"
golden partial "$TMP/out"
reset_files
scenario text-and-call tool=Read 'args={"file_path":"a.txt"}'
chat -p "check" --output-format stream-json --verbose --include-partial-messages >"$TMP/out" 2>"$TMP/err"
check "partial messages, text then a call: the message ends with tool_use after its blocks, the next with end_turn" jsonq "$TMP/out" '(
[(m["type"], m["event"]["type"] if m["type"] == "stream_event" else m["message"]["content"][0]["type"] if m["type"] in ("assistant", "user") else m.get("subtype"),
  m["event"]["delta"]["stop_reason"] if m["type"] == "stream_event" and m["event"]["type"] == "message_delta" else None)
 for m in msgs if m["type"] != "stream_event" or m["event"]["type"] in ("content_block_stop", "message_delta", "message_stop")] == [
 ("system", "init", None),
 ("stream_event", "content_block_stop", None), ("assistant", "text", None), ("assistant", "tool_use", None),
 ("stream_event", "message_delta", "tool_use"), ("stream_event", "message_stop", None), ("user", "tool_result", None),
 ("stream_event", "content_block_stop", None), ("assistant", "text", None),
 ("stream_event", "message_delta", "end_turn"), ("stream_event", "message_stop", None), ("result", "success", None)])'
scenario text

# --- stream-json input: the Agent SDK's conversation -------------------------------
scenario text
"$PY" "$TERM_DIR/driver.py" --prompt "hi" --prompt "again" -- \
    "$BIN" chat --output-format stream-json --verbose --input-format stream-json --cwd "$WORK" >"$TMP/out" 2>"$TMP/err"
check "stream-json input: exit 0 when stdin closes" [ $? -eq 0 ]
golden stream-input "$TMP/out"

reset_files
scenario server-steps 'calls=[["Bash",{"command":"echo hi > made.txt"}]]'
"$PY" "$TERM_DIR/driver.py" --prompt "run" --allow -- \
    "$BIN" chat --output-format stream-json --verbose --input-format stream-json --permission-prompt-tool=stdio --cwd "$WORK" >"$TMP/out" 2>"$TMP/err"
check "can_use_tool allow: exit 0" [ $? -eq 0 ]
check "can_use_tool allow: the command ran" [ -e "$WORK/made.txt" ]
golden can-use-tool "$TMP/out"

reset_files
"$PY" "$TERM_DIR/driver.py" --prompt "run" --deny "not now" -- \
    "$BIN" chat --output-format stream-json --verbose --input-format stream-json --permission-prompt-tool=stdio --cwd "$WORK" >"$TMP/out" 2>"$TMP/err"
check "can_use_tool deny: the command did not run" [ ! -e "$WORK/made.txt" ]
check "can_use_tool deny: tool_result is the message, in permission_denials" jsonq "$TMP/out" \
    'any(m["type"] == "user" and m["message"]["content"][0]["content"] == "not now" and m["message"]["content"][0]["is_error"] for m in msgs) and len(msgs[-1]["permission_denials"]) == 1'

reset_files
# the second prompt is the conversation's first user text once the
# interrupted one is taken back: [[mock:text]] then picks the scenario
"$PY" "$TERM_DIR/driver.py" --prompt "run" --prompt "[[mock:text]] hi" --interrupt -- \
    "$BIN" chat --output-format stream-json --verbose --input-format stream-json --permission-prompt-tool=stdio --cwd "$WORK" >"$TMP/out" 2>"$TMP/err"
check "interrupt while asking: exit 0 when stdin closes" [ $? -eq 0 ]
check "interrupt while asking: the prompt ends with an error result, the next one runs" jsonq "$TMP/out" '(
[m for m in msgs if m["type"] == "control_response"][1]["response"] == {"subtype": "success", "request_id": "int_1", "response": {"still_queued": []}}
and (lambda r: r[0]["subtype"] == "error_during_execution" and r[0]["errors"] == ["interrupted by the user"] and len(r[0]["permission_denials"]) == 1 and r[0]["num_turns"] == 1 and not r[1]["is_error"])([m for m in msgs if m["type"] == "result"]))'
check "interrupt while asking: the call's tool_result says so" jsonq "$TMP/out" \
    'any(m["type"] == "user" and m["message"]["content"][0] == {"type": "tool_result", "tool_use_id": "toolu_1", "content": "interrupted by the user", "is_error": True} for m in msgs)'
check "interrupt while asking: the command did not run" [ ! -e "$WORK/made.txt" ]

scenario text
"$PY" "$TERM_DIR/driver.py" --prompt "hi" --control '{"subtype":"set_permission_mode","mode":"plan"}' \
    --control '{"subtype":"rewind_files"}' --control '{"subtype":"initialize"}' -- \
    "$BIN" chat --output-format stream-json --verbose --input-format stream-json --cwd "$WORK" >"$TMP/out" 2>"$TMP/err"
check "control requests: set_permission_mode answered, unknown and repeated ones are errors" jsonq "$TMP/out" '(
[m["response"] for m in msgs if m["type"] == "control_response"][1:] == [
 {"subtype": "success", "request_id": "ctl_0", "response": {"mode": "plan"}},
 {"subtype": "error", "request_id": "ctl_1", "error": "Unsupported control request subtype: rewind_files"},
 {"subtype": "error", "request_id": "ctl_2", "error": "Already initialized"}]
and [m for m in msgs if m.get("subtype") == "init"][0]["permissionMode"] == "plan")'

# "always allow" from the host: the request's suggestions sent back as
# updatedPermissions; the session's rules and mode grow
reset_files
scenario server-steps 'calls=[["Bash",{"command":"echo one > 1.txt"}],["Bash",{"command":"echo two > 2.txt"}],["Write",{"file_path":"w1.txt","content":"a"}],["Write",{"file_path":"w2.txt","content":"b"}]]'
"$PY" "$TERM_DIR/driver.py" --prompt "go" --prompt "and?" --always -- \
    "$BIN" chat --output-format stream-json --verbose --input-format stream-json --permission-prompt-tool=stdio --cwd "$WORK" >"$TMP/out" 2>"$TMP/err"
check "updatedPermissions: every call ran" bash -c 'cd "$1" && [ -s 1.txt ] && [ -s 2.txt ] && [ -s w1.txt ] && [ -s w2.txt ]' _ "$WORK"
check "updatedPermissions: asked once per kind, with Claude Code's suggestions" jsonq "$TMP/out" '(
[(m["request"]["tool_name"], m["request"]["permission_suggestions"]) for m in msgs if m["type"] == "control_request"] == [
 ("Bash", [{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "echo:*"}], "behavior": "allow", "destination": "session"}]),
 ("Write", [{"type": "setMode", "mode": "acceptEdits", "destination": "session"}])])'
check "updatedPermissions: setMode acceptEdits holds for the next prompt" jsonq "$TMP/out" \
    '[m["permissionMode"] for m in msgs if m.get("subtype") == "init"] == ["default", "acceptEdits"]'

scenario text
printf '%s\n' 'not json' '{"type":"keep_alive"}' \
    '{"type":"user","session_id":"","message":{"role":"user","content":"plain string"},"parent_tool_use_id":null}' |
    (cd "$WORK" && "$BIN" chat --output-format stream-json --verbose --input-format stream-json) >"$TMP/out" 2>"$TMP/err"
check "stream-json input: a bad line is skipped, a string content runs" jsonq "$TMP/out" \
    'msgs[-1]["type"] == "result" and msgs[-1]["result"] == "Hello from the mock."'
check "stream-json input: the bad line noted on stderr" grep -q "error parsing streaming input line" "$TMP/err"

summary
