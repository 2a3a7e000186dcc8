#!/bin/bash
# tests/term/t_interrupt.sh - `gemini-agent chat` stops when told to:
# an interrupt control request during a long Bash command (its process
# group killed) and during a slow Gemini answer (the transfer dropped);
# two calls of one answer; a stream that breaks off, retried once. The
# transcripts are compared with golden files as tests/term/run.sh does
# (tests/term/lib.sh).
#
#   tests/term/t_interrupt.sh
#   GA_BIN=build-asan/gemini-agent tests/term/t_interrupt.sh
#   UPDATE_GOLDEN=1 tests/term/t_interrupt.sh   (review the diff)
set -u

TERM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
. "$TERM_DIR/lib.sh"
# a command a failed test left running
cleanup_more() { [ -s "$WORK/pg.txt" ] && kill -KILL -- "-$(cat "$WORK/pg.txt")" 2>/dev/null; }

# The seconds the driver saw from its interrupt to the result, at most $2.
interrupt_within() {
    "$PY" -c '
import re, sys
m = re.search(r"driver: interrupt->result ([0-9.]+)", open(sys.argv[1]).read())
sys.exit(0 if m and float(m.group(1)) <= float(sys.argv[2]) else 1)' "$1" "$2"
}

# Is process group $1 gone (zombies waiting for init included), within 2 s?
group_gone() {
    for _ in $(seq 20); do
        ps -o pid= -g "$1" >/dev/null 2>&1 || return 0
        sleep 0.1
    done
    return 1
}

serve() {
    "$PY" "$TERM_DIR/driver.py" "$@" -- \
        "$BIN" chat --output-format stream-json --verbose --input-format stream-json \
        --permission-prompt-tool=stdio --cwd "$WORK"
}

# --- interrupt during a long Bash command ---------------------------------------
reset_files
scenario server-steps 'calls=[["Bash",{"command":"echo $$ > pg.txt; sleep 30"}]]'
start=$(date +%s.%N)
# the second prompt is the conversation's first user text once the
# interrupted one is taken back: [[mock:text]] then picks the scenario
serve --prompt "run" --prompt "[[mock:text]] hi" --allow --interrupt-on tool_use --interrupt-after 400 \
    >"$TMP/out" 2>"$TMP/err"
rc=$?
elapsed=$("$PY" -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$start" "$(date +%s.%N)")
check "interrupted Bash: exit 0 when stdin closes" [ $rc -eq 0 ]
check "interrupted Bash: the session was over in seconds, not 30" "$PY" -c "import sys; sys.exit(0 if float(sys.argv[1]) < 10 else 1)" "$elapsed"
check "interrupted Bash: the result came within 2 s of the interrupt" interrupt_within "$TMP/err" 2
check "interrupted Bash: the command started" [ -s "$WORK/pg.txt" ]
check "interrupted Bash: its process group is gone" group_gone "$(cat "$WORK/pg.txt" 2>/dev/null || echo 1)"
check "interrupted Bash: the tool_result is Claude Code's error, the result interrupted" jsonq "$TMP/out" '(
any(m["type"] == "user" and m["message"]["content"][0] == {"type": "tool_result", "tool_use_id": "toolu_1", "content": "<error>Command was aborted before completion</error>", "is_error": True} for m in msgs)
and (lambda r: r[0]["subtype"] == "error_during_execution" and r[0]["errors"] == ["interrupted by the user"] and not r[1]["is_error"])([m for m in msgs if m["type"] == "result"]))'
golden interrupt-bash "$TMP/out"

# --- interrupt during the first of two calls: the second is answered too ---------
reset_files
scenario parallel tool=Bash 'args=[{"command":"echo $$ > pg.txt; sleep 30"},{"command":"echo 2 > second.txt"}]'
serve --prompt "run" --allow --interrupt-on tool_use --interrupt-after 400 >"$TMP/out" 2>"$TMP/err"
check "interrupted first of two calls: exit 0" [ $? -eq 0 ]
check "interrupted first of two calls: both announced, both answered, the second not run" jsonq "$TMP/out" '(
[(b["type"], b.get("id") or b.get("tool_use_id"), b.get("content")) for m in msgs if m["type"] in ("assistant", "user") for b in m["message"]["content"] if b["type"] != "text"]
== [("tool_use", "toolu_1", None), ("tool_use", "toolu_2", None),
    ("tool_result", "toolu_1", "<error>Command was aborted before completion</error>"),
    ("tool_result", "toolu_2", "interrupted by the user")]
and msgs[-1]["errors"] == ["interrupted by the user"])'
check "interrupted first of two calls: its process group is gone" group_gone "$(cat "$WORK/pg.txt" 2>/dev/null || echo 1)"
check "interrupted first of two calls: the second command did not run" [ ! -e "$WORK/second.txt" ]

# --- interrupt during a slow Gemini answer ---------------------------------------
reset_files
mockctl reset >/dev/null
scenario text delay=10000
serve --prompt "hi" --prompt "[[mock:text]] again" --interrupt-after 300 >"$TMP/out" 2>"$TMP/err"
check "interrupted answer: exit 0 when stdin closes" [ $? -eq 0 ]
check "interrupted answer: the result came within 2 s of the interrupt" interrupt_within "$TMP/err" 2
# (mockctl's own connections are there too, each a few milliseconds long,
# and the one asking, still open)
check "interrupted answer: the connection to Gemini was closed long before its answer" "$PY" -c '
import json, sys
c = json.loads(sys.argv[1])
life = [x["closed_ms"] - x["opened_ms"] for x in c if x["closed_ms"] is not None]
sys.exit(0 if len(life) >= len(c) - 1 and 200 < max(life) < 3000 else 1)' \
    "$(mockctl connections --compact)"
check "interrupted answer: an error result, then the next prompt runs" jsonq "$TMP/out" '(
(lambda r: len(r) == 2 and r[0]["errors"] == ["interrupted by the user"] and r[0]["num_turns"] == 0 and r[1]["result"] == "Hello from the mock.")([m for m in msgs if m["type"] == "result"]))'
check "interrupted answer: duration_api_ms counts the dropped call" jsonq "$TMP/out" \
    '[m for m in msgs if m["type"] == "result"][0]["duration_api_ms"] >= 200'
golden interrupt-answer "$TMP/out"

# --- two calls in one answer ---------------------------------------------------------
reset_files
printf 'two\n' >"$WORK/b.txt"
scenario parallel tool=Read 'args=[{"file_path":"a.txt"},{"file_path":"b.txt"}]'
serve --prompt "read both" >"$TMP/out" 2>"$TMP/err"
check "parallel calls: exit 0" [ $? -eq 0 ]
# as Claude Code writes them: the message's blocks first, then the results
check "parallel calls: both tool_use, then both tool_result, in order" jsonq "$TMP/out" '(
[(b["type"], b.get("id") or b.get("tool_use_id")) for m in msgs if m["type"] in ("assistant", "user") for b in m["message"]["content"] if b["type"] != "text"]
== [("tool_use", "toolu_1"), ("tool_use", "toolu_2"), ("tool_result", "toolu_1"), ("tool_result", "toolu_2")]
and [m["message"]["content"][0]["content"][:10] for m in msgs if m["type"] == "user"] == ["     1\u2192hel", "     1\u2192two"])'
golden parallel "$TMP/out"

# --- a stream that breaks off -------------------------------------------------------
reset_files
mockctl reset >/dev/null
scenario truncated times=1
(cd "$WORK" && "$BIN" chat -p "hi" --output-format stream-json --verbose) >"$TMP/out" 2>"$TMP/err"
check "broken answer retried: exit 0" [ $? -eq 0 ]
check "broken answer retried: Gemini asked twice" [ "$(mockctl count)" = 2 ]
check "broken answer retried: api_retry, then the answer" jsonq "$TMP/out" '(
[m.get("subtype") or m["type"] for m in msgs] == ["init", "api_retry", "assistant", "success"]
and msgs[1]["attempt"] == 1 and msgs[1]["max_retries"] == 1 and msgs[-1]["result"] == "Hello from the mock.")'
golden retry-ok "$TMP/out"

mockctl reset >/dev/null
scenario truncated times=1
(cd "$WORK" && "$BIN" chat -p "hi" --output-format stream-json --verbose --include-partial-messages) >"$TMP/out" 2>"$TMP/err"
check "broken stream retried (partial messages): exit 0, its text block closed, no assistant message of it" jsonq "$TMP/out" '(
(lambda i: [m["event"]["type"] for m in msgs[:i] if m["type"] == "stream_event"][-1] == "message_stop"
 and not any(m["type"] == "assistant" for m in msgs[:i]))([m.get("subtype") for m in msgs].index("api_retry"))
and msgs[-1]["result"] == "Hello from the mock." and not msgs[-1]["is_error"])'

mockctl reset >/dev/null
scenario truncated
(cd "$WORK" && "$BIN" chat -p "hi" --output-format stream-json --verbose) >"$TMP/out" 2>"$TMP/err"
check "broken twice: exit 1" [ $? -eq 1 ]
check "broken twice: Gemini asked twice, not more" [ "$(mockctl count)" = 2 ]
check "broken twice: one api_retry, then an error result" jsonq "$TMP/out" '(
[m.get("subtype") or m["type"] for m in msgs] == ["init", "api_retry", "assistant", "error_during_execution"]
and msgs[-1]["is_error"] and msgs[-1]["errors"][0].startswith("API Error: "))'
golden retry-fail "$TMP/out"

summary
