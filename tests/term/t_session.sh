#!/bin/bash
# tests/term/t_session.sh - the terminal client's saved sessions and
# compaction (term/keep.h, term/compact.h): --session-id,
# --resume, --continue, --fork-session, --no-session-persistence, the
# history carried whole (thought signatures the mock checks), the store's
# file modes, automatic compaction configured in .gemini.yaml, /compact.
#
#   tests/term/t_session.sh     (GA_BIN=... for another binary;
#                                UPDATE_GOLDEN=1 rewrites golden/resume.jsonl)
set -u

TERM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
. "$TERM_DIR/lib.sh"

DB=$XDG_STATE_HOME/gemini-agent/sessions.db
sql() { "$PY" -c 'import sqlite3, sys; print("\n".join("|".join(str(c) for c in r) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])))' "$DB" "$1"; }
# The bodies the mock received since the last reset: a JSON array.
requests() { curl -s "$GEMINI_BASE_URL/__mock/requests" >"$TMP/req.json"; }
reqq() { "$PY" - "$TMP/req.json" "$1" <<'PYEOF'
import json, sys
reqs = [r for r in json.load(open(sys.argv[1])) if r["body"] is not None]
sys.exit(0 if eval(sys.argv[2], {"reqs": reqs, "json": json}) else 1)
PYEOF
}
mock_reset() { curl -s -X POST "$GEMINI_BASE_URL/__mock/reset" >/dev/null; }

# --- a new session is saved; --resume carries it on ------------------------
reset_files
scenario server-steps 'calls=[["Read",{"file_path":"a.txt"}]]'
chat -p "read a.txt" --session-id first --output-format stream-json --verbose >"$TMP/out" 2>"$TMP/err"
check "new session: exit 0" [ $? -eq 0 ]
check "new session: the id given everywhere" jsonq "$TMP/out" 'all(m["session_id"] == "first" for m in msgs)'
check "new session: saved, with its folder and model" \
    [ "$(sql "select id, cwd, model from chats")" = "first|$WORK|gemini-3.8-flash" ]
check "the store's folder is 0700 and its file 0600" \
    [ "$(stat -c %a "$XDG_STATE_HOME/gemini-agent") $(stat -c %a "$DB")" = "700 600" ]
check "saved: the history whole (user, call, response, answer) and the usage" \
    "$PY" -c '
import json, sqlite3, sys
c, u = sqlite3.connect(sys.argv[1]).execute("select contents, usage from chats").fetchone()
c, u = json.loads(c), json.loads(u)
sys.exit(0 if [x["role"] for x in c] == ["user", "model", "user", "model"]
         and "functionCall" in c[1]["parts"][-1] and "thoughtSignature" in c[1]["parts"][-1]
         and u["tokens"]["promptTokens"] > 0 and u["contextTokens"] > 0 else 1)' "$DB"

mock_reset
scenario text
chat -p "and now?" --resume first --output-format stream-json --verbose >"$TMP/out" 2>"$TMP/err"
check "--resume: exit 0" [ $? -eq 0 ]
golden resume "$TMP/out"
check "--resume: same session id" jsonq "$TMP/out" 'all(m["session_id"] == "first" for m in msgs)'
requests
check "--resume: Gemini gets the earlier turns, signatures and all, then the new prompt" reqq '(
len(reqs) == 1 and [c["role"] for c in reqs[0]["body"]["contents"]] == ["user", "model", "user", "model", "user"]
and "thoughtSignature" in reqs[0]["body"]["contents"][1]["parts"][-1]
and reqs[0]["body"]["contents"][-1]["parts"] == [{"text": "and now?"}])'
check "--resume: the saved history grew by the exchange" \
    [ "$(sql "select json_array_length(contents) from chats where id = 'first'")" = 6 ]

# from another folder, without --cwd: the session's own folder
mkdir -p "$TMP/elsewhere"
(cd "$TMP/elsewhere" && "$BIN" chat -p "where?" --resume first --output-format stream-json --verbose) >"$TMP/out" 2>"$TMP/err"
check "--resume from another folder: works in the session's folder" jsonq "$TMP/out" \
    "msgs[0]['cwd'] == '$WORK' and msgs[-1]['subtype'] == 'success'"

# --- errors ---------------------------------------------------------------
chat -p "x" --resume no-such --output-format stream-json --verbose >"$TMP/out" 2>"$TMP/err"
check "--resume of an unknown id: exit 1" [ $? -eq 1 ]
check "--resume of an unknown id: one system error, as Claude Code words it" jsonq "$TMP/out" \
    'len(msgs) == 1 and msgs[0]["subtype"] == "error" and msgs[0]["error"] == "No conversation found with session ID: no-such"'
chat -p "x" --session-id first >/dev/null 2>"$TMP/err"
check "--session-id already saved: exit 1" [ $? -eq 1 ]
check "--session-id already saved: said so" grep -q "Session ID first is already in use" "$TMP/err"
chat -p "x" --session-id "has space" >/dev/null 2>"$TMP/err"
check "--session-id with a space: exit 2" [ $? -eq 2 ]
chat -p "x" --resume first --session-id other >/dev/null 2>"$TMP/err"
check "--session-id with --resume, no --fork-session: exit 2" [ $? -eq 2 ]
(cd "$TMP/elsewhere" && "$BIN" chat -p "x" --continue) >/dev/null 2>"$TMP/err"
check "--continue where no session was: exit 1" [ $? -eq 1 ]
check "--continue where no session was: said so" grep -q "No conversation found to continue" "$TMP/err"

# a prompt that fails leaves the saved session as it was
before=$(sql "select json_array_length(contents) from chats where id = 'first'")
scenario error status=429
chat -p "quota" --resume first >/dev/null 2>"$TMP/err"
check "a failed prompt: exit 1" [ $? -eq 1 ]
check "a failed prompt: the saved history unchanged" \
    [ "$(sql "select json_array_length(contents) from chats where id = 'first'")" = "$before" ]
scenario text

# --- --continue, --fork-session, --no-session-persistence -----------------
sleep 0.01
chat -p "second session" --session-id second >/dev/null 2>"$TMP/err"
mock_reset
chat -p "go on" --continue --output-format json >"$TMP/out" 2>"$TMP/err"
check "--continue: the folder's newest session" jsonq "$TMP/out" 'msgs[0]["session_id"] == "second"'
requests
check "--continue: its history sent" reqq '[c["parts"][0].get("text") for c in reqs[0]["body"]["contents"] if c["role"] == "user"] == ["second session", "go on"]'

chat -p "branch" --resume first --fork-session --session-id fork1 --output-format json >"$TMP/out" 2>"$TMP/err"
check "--fork-session: the new id" jsonq "$TMP/out" 'msgs[0]["session_id"] == "fork1"'
check "--fork-session: the original untouched, the fork one exchange longer" \
    [ "$(sql "select id, json_array_length(contents) from chats where id in ('first', 'fork1') order by id")" = "first|$before
fork1|$((before + 2))" ]

chat -p "ephemeral" --session-id gone --no-session-persistence >/dev/null 2>"$TMP/err"
check "--no-session-persistence: exit 0" [ $? -eq 0 ]
check "--no-session-persistence: nothing saved" [ "$(sql "select count(*) from chats where id = 'gone'")" = 0 ]
n=$(sql "select json_array_length(contents) from chats where id = 'first'")
chat -p "peek" --resume first --no-session-persistence >/dev/null 2>"$TMP/err"
check "--resume with --no-session-persistence: runs, saves nothing" \
    [ $? -eq 0 ] && [ "$(sql "select json_array_length(contents) from chats where id = 'first'")" = "$n" ]

# --- stream-json input: every prompt of the process in one session --------
"$PY" "$TERM_DIR/driver.py" --prompt "one" --prompt "two" -- \
    "$BIN" chat --output-format stream-json --verbose --input-format stream-json --cwd "$WORK" --session-id streamed >"$TMP/out" 2>"$TMP/err"
check "stream-json input: both prompts saved in one session" \
    [ "$(sql "select json_array_length(contents) from chats where id = 'streamed'")" = 4 ]

# --- compaction -----------------------------------------------------------
# A window so small that the mock's first answer fills it past 50%.
mkdir -p "$TMP/conf"
printf 'actions: []\ndataDir: %s/var\n' "$TMP" >"$TMP/conf/agent.yaml"
printf 'apiKey: test-key\ncompaction:\n  contextWindow: 1000\n  atPercent: 50\n  keepTurns: 1\n' >"$TMP/conf/.gemini.yaml"
chmod 600 "$TMP/conf/.gemini.yaml"
compacting() { (cd "$WORK" && GEMINI_AGENT_CONFIG="$TMP/conf/agent.yaml" "$BIN" chat "$@"); }
compacting -p "first question" --session-id small >/dev/null 2>"$TMP/err"
compacting -p "second question" --resume small >/dev/null 2>"$TMP/err"
mock_reset
compacting -p "third question" --resume small --output-format stream-json --verbose >"$TMP/out" 2>"$TMP/err"
check "auto compaction: exit 0" [ $? -eq 0 ]
check "auto compaction: a compact_boundary after init, before the answer" jsonq "$TMP/out" '(
msgs[1]["type"] == "system" and msgs[1]["subtype"] == "compact_boundary"
and msgs[1]["compact_metadata"]["trigger"] == "auto" and msgs[1]["compact_metadata"]["pre_tokens"] >= 500
and msgs[-1]["subtype"] == "success")'
requests
check "auto compaction: the summary asked for the older turns, tools off" reqq '(
len(reqs) == 2 and reqs[0]["body"]["toolConfig"] == {"functionCallingConfig": {"mode": "NONE"}}
and [c["parts"][0]["text"] for c in reqs[0]["body"]["contents"] if c["role"] == "user"][:1] == ["first question"]
and reqs[0]["body"]["contents"][-1]["parts"][0]["text"].startswith("Summarise the conversation"))'
check "auto compaction: the answer sent the summary, the kept turn and the prompt" reqq '(
[c["role"] for c in reqs[1]["body"]["contents"]] == ["user", "model", "user", "model", "user"]
and reqs[1]["body"]["contents"][0]["parts"][0]["text"].startswith("This session continues an earlier conversation")
and reqs[1]["body"]["contents"][2]["parts"][0]["text"] == "second question"
and reqs[1]["body"]["contents"][4]["parts"][0]["text"] == "third question")'
check "auto compaction: one turn of the model's" jsonq "$TMP/out" 'msgs[-1]["num_turns"] == 1'

chat -p "/compact" --resume first --output-format stream-json --verbose >"$TMP/out" 2>"$TMP/err"
check "/compact: exit 0" [ $? -eq 0 ]
check "/compact: a manual compact_boundary and a result" jsonq "$TMP/out" '(
[m.get("subtype") for m in msgs] == ["init", "compact_boundary", "success"]
and msgs[1]["compact_metadata"]["trigger"] == "manual" and msgs[2]["result"] == "Compacted the conversation.")'
check "/compact: the result counts the summary call's tokens" jsonq "$TMP/out" \
    'msgs[2]["num_turns"] == 0 and msgs[2]["usage"]["input_tokens"] > msgs[1]["compact_metadata"]["pre_tokens"] / 2 and msgs[2]["usage"]["output_tokens"] > 0'
check "/compact: the saved history is the summary pair" \
    [ "$(sql "select json_array_length(contents) from chats where id = 'first'")" = 2 ]

summary
