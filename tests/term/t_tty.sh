#!/bin/bash
# tests/term/t_tty.sh - `gemini-agent chat` for a person at a terminal: the
# binary on a pseudo-terminal (tests/term/ptydrive.py, Python's pty module)
# against the mock Gemini on 127.0.0.1: the REPL, the answer streamed, the
# tool lines, the permission question (y, n, always), /exit and Ctrl-D,
# -p on a terminal, colours and NO_COLOR. Assertions read the output with
# its ANSI codes stripped.
#
#   tests/term/t_tty.sh
#   GA_BIN=build-asan/gemini-agent tests/term/t_tty.sh
#
# Prints "ok - NAME" / "not ok - NAME" per assertion, then
# "N passed, N failed"; exits 1 when anything failed.
set -u

TERM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
. "$TERM_DIR/lib.sh"
unset NO_COLOR
export TERM=xterm
# a failed check shows what the terminal showed
check() { local name=$1; shift; if "$@"; then ok "$name"; else nok "$name" "$(cat "$TMP/out" 2>/dev/null)"; fi; }
mockreset() { mockctl reset >/dev/null; }
# a command a failed test left running
cleanup_more() { [ -s "$WORK/pg.txt" ] && kill -KILL -- "-$(cat "$WORK/pg.txt")" 2>/dev/null; }

# pty STEP... -- ARGS...: `gemini-agent chat ARGS` on a pseudo-terminal in
# $WORK, driven by the steps (ptydrive.py); output in $TMP/out
# (stripped) and $TMP/raw; sets rc.
pty() {
    local steps=()
    while [ "$1" != -- ]; do steps+=("$1"); shift; done
    shift
    (cd "$WORK" && "$PY" "$TERM_DIR/ptydrive.py" --timeout 20 --out "$TMP/out" --raw "$TMP/raw" \
        "${steps[@]}" -- "$BIN" chat "$@") 2>"$TMP/drive.err"
    rc=$?
    [ $rc -eq 124 ] && sed 's/^/#   /' "$TMP/drive.err"
}

has() { grep -qF -- "$1" "$TMP/out"; }
count() { grep -cF -- "$1" "$TMP/out"; }
# py EXPR: EXPR over the mock's recorded requests (reqs) holds
mockq() {
    "$PY" "$MOCK/mockctl.py" requests --port-file "$TMP/mock.port" >"$TMP/reqs.json" &&
        "$PY" -c 'import json, sys; reqs = json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' \
            "$TMP/reqs.json" "$1"
}

# --- a prompt, the answer streamed, /exit -----------------------------------
reset_files
scenario text
mockreset
pty 'expect=> ' 'send=hi\n' 'expect=Hello from the mock\.' 'expect=> ' 'send=/exit\n' --
check "REPL: /exit ends it with 0" [ "$rc" -eq 0 ]
check "REPL: the answer shown after the prompt" grep -qx 'Hello from the mock\.' "$TMP/out"
check "REPL: the answer was streamed (streamGenerateContent)" mockq \
    'len(reqs) == 1 and reqs[0]["stream"] and reqs[0]["path"].endswith(":streamGenerateContent")'
check "REPL: no JSON on the terminal" bash -c '! grep -q "\"type\"" "$1"' _ "$TMP/out"
check "REPL: colours on a terminal" grep -q $'\033\\[' "$TMP/raw"

# --- the conversation goes on across prompts; Ctrl-D ends it -----------------
mockreset
pty 'expect=> ' 'send=hi\n' 'expect=Hello from the mock\.' 'expect=> ' 'send=again\n' \
    'expect=Hello from the mock\.' 'expect=> ' eof --
check "REPL: Ctrl-D ends it with 0" [ "$rc" -eq 0 ]
check "REPL: two answers" [ "$(count 'Hello from the mock.')" -eq 2 ]
check "REPL: the second prompt carries the first exchange" mockq \
    '[len(r["body"]["contents"]) for r in reqs] == [1, 3] and reqs[1]["body"]["contents"][0]["parts"][0]["text"] == "hi"'

# --- a PROMPT argument runs first, then the REPL -------------------------------
pty 'expect=Hello from the mock\.' 'expect=> ' eof -- "say hi"
check "PROMPT without -p: exit 0" [ "$rc" -eq 0 ]
check "PROMPT without -p: answered, then the REPL's prompt" \
    bash -c 'sed -n "/Hello from the mock/,\$p" "$1" | grep -q "^> "' _ "$TMP/out"

# --- NO_COLOR -------------------------------------------------------------------
NO_COLOR=1 pty 'expect=> ' 'send=hi\n' 'expect=Hello' 'expect=> ' eof --
check "NO_COLOR: no escape codes at all" bash -c '! grep -q $'"'"'\033'"'"' "$1"' _ "$TMP/raw"

# --- permission: y ---------------------------------------------------------------
reset_files
scenario server-steps 'calls=[["Bash",{"command":"echo hi > made.txt"}]]'
pty 'expect=> ' 'send=run it\n' 'expect=\[a\]lways: ' 'send=y\n' 'expect=Done' 'expect=> ' eof --
check "ask y: exit 0" [ "$rc" -eq 0 ]
check "ask y: the call's line" has "● Bash(echo hi > made.txt)"
check "ask y: the question" has "Allow Bash(echo hi > made.txt)? [y]es, [n]o, [a]lways: "
check "ask y: the file was made" [ "$(cat "$WORK/made.txt" 2>/dev/null)" = hi ]
check "ask y: the result's line" has "  ⎿  "

# --- permission: a bad answer, then n ------------------------------------------------
reset_files
pty 'expect=> ' 'send=run it\n' 'expect=\[a\]lways: ' 'send=perhaps\n' 'expect=Please answer y, n or a\.' \
    'expect=\[a\]lways: ' 'send=n\n' 'expect=Done' 'expect=> ' eof --
check "ask n: exit 0" [ "$rc" -eq 0 ]
check "ask n: a bad answer asks again" [ "$(count 'Allow Bash(')" -eq 2 ]
check "ask n: the file was not made" [ ! -e "$WORK/made.txt" ]
check "ask n: the denial shown as the call's result" has "  ⎿  The user denied this call of Bash"
check "ask n: the model was told" mockq \
    '"denied this call of Bash" in json.dumps(reqs[-1]["body"]["contents"][-1])'

# --- permission: the input ends at the question (no) ----------------------------------
reset_files
pty 'expect=> ' 'send=run it\n' 'expect=\[a\]lways: ' eof 'expect=Done' 'expect=> ' eof --
check "ask, Ctrl-D: no, and the REPL ends with 0 at the next Ctrl-D" [ "$rc" -eq 0 ]
check "ask, Ctrl-D: the file was not made" [ ! -e "$WORK/made.txt" ]

# --- permission: always ------------------------------------------------------------------
reset_files
scenario server-steps 'calls=[["Bash",{"command":"echo hi > made.txt"}],["Bash",{"command":"echo two > two.txt"}]]'
pty 'expect=> ' 'send=run both\n' 'expect=\[a\]lways: ' 'send=a\n' 'expect=Done' 'expect=> ' \
    'send=again\n' 'expect=Done' 'expect=> ' eof --
check "ask a: exit 0" [ "$rc" -eq 0 ]
check "ask a: asked once for four calls over two prompts" [ "$(count 'Allow Bash(')" -eq 1 ]
check "ask a: four call lines" [ "$(count '● Bash(')" -eq 4 ]
check "ask a: every command ran" bash -c '[ -e "$1/made.txt" ] && [ -e "$1/two.txt" ]' _ "$WORK"
check "ask a: no denial told to the model" mockq '"denied" not in json.dumps(reqs[-1]["body"]["contents"])'

# --- a read-only tool is not asked; its result line -------------------------------------------
reset_files
scenario server-steps 'calls=[["Read",{"file_path":"a.txt"}]]'
pty 'expect=> ' 'send=read\n' 'expect=Done' 'expect=> ' eof --
check "Read: not asked" [ "$(count 'Allow ')" -eq 0 ]
check "Read: the call and its result in a line each" \
    bash -c 'grep -qx "● Read(a.txt)" "$1" && grep -qx "  ⎿  Read 3 lines" "$1"' _ "$TMP/out"

# --- an error of Gemini is shown, the REPL goes on ---------------------------------------------------
scenario error status=429
pty 'expect=> ' 'send=hi\n' 'expect=API Error' 'expect=> ' eof --
check "Gemini error: shown, and the REPL goes on to exit 0" [ "$rc" -eq 0 ]
check "Gemini error: the error's line" has "✗ API Error: "

# --- the key refused: the session cannot go on --------------------------------------------------------
scenario text
GEMINI_API_KEY=bad-key pty 'expect=> ' 'send=hi\n' 'expect=API Error' --
check "key refused: exit 1 without another prompt" [ "$rc" -eq 1 ]
check "key refused: the error shown once" [ "$(count 'API Error')" -eq 1 ]

# --- /exit with spaces around it --------------------------------------------------------------------
pty 'expect=> ' 'send=  /exit  \n' --
check "' /exit ': exit 0" [ "$rc" -eq 0 ]

# --- -p on a terminal: one shot, rendered for a person, never asks -----------------------------------
scenario text
pty 'expect=Hello from the mock\.' -- -p hi
check "-p on a terminal: exit 0" [ "$rc" -eq 0 ]
check "-p on a terminal: the answer only, no REPL prompt" bash -c '[ "$(tr -d "\r" <"$1")" = "Hello from the mock." ]' _ "$TMP/out"
reset_files
scenario server-steps 'calls=[["Bash",{"command":"echo hi > made.txt"}]]'
pty 'expect=Done' -- -p "run it"
check "-p on a terminal: exit 0 after a denial" [ "$rc" -eq 0 ]
check "-p on a terminal: not asked, the denial shown" \
    bash -c '! grep -q "Allow " "$1" && grep -q "⎿  Permission to use Bash denied" "$1"' _ "$TMP/out"
check "-p on a terminal: the file was not made" [ ! -e "$WORK/made.txt" ]

# --- the session's id at the end, and --resume with it --------------------------------
scenario text
mockreset
pty 'expect=> ' 'send=remember this\n' 'expect=Hello from the mock\.' 'expect=> ' 'send=/exit\n' --
id=$(grep -o 'gemini-agent chat --resume [0-9a-f-]*' "$TMP/out" | awk '{print $4}')
check "at the end: how to resume this session" [ ${#id} -eq 36 ]
mockreset
pty 'expect=> ' 'send=and now\n' 'expect=Hello from the mock\.' 'expect=> ' eof -- --resume "$id"
check "--resume in the REPL: exit 0" [ "$rc" -eq 0 ]
check "--resume in the REPL: Gemini got the earlier exchange" \
    mockq '[c["parts"][0]["text"] for c in reqs[-1]["body"]["contents"]][::2] == ["remember this", "and now"]'

# --- Ctrl-C ---------------------------------------------------------------------------
# at the prompt: the line typed is dropped, the REPL asks again
scenario text
mockreset
pty 'expect=> ' 'send=never sent' intr 'expect=> ' 'send=/exit\n' --
check "Ctrl-C at the prompt: the REPL goes on, exit 0 at /exit" [ "$rc" -eq 0 ]
check "Ctrl-C at the prompt: the line never reached Gemini" mockq 'len(reqs) == 0'
# during a slow answer: the transfer is dropped, the prompt ends, the REPL goes on
scenario text delay=10000
start=$(date +%s)
pty 'expect=> ' 'send=slow\n' 'expect=slow' intr 'expect=interrupted by the user' 'expect=> ' 'send=/exit\n' --
check "Ctrl-C during an answer: exit 0 at /exit" [ "$rc" -eq 0 ]
check "Ctrl-C during an answer: over in seconds, not the answer's 10" [ $(($(date +%s) - start)) -lt 8 ]
check "Ctrl-C during an answer: no answer shown" [ "$(count 'Hello from the mock')" -eq 0 ]
# during a long command: its process group is killed
reset_files
scenario server-steps 'calls=[["Bash",{"command":"echo $$ > pg.txt; sleep 30"}]]'
start=$(date +%s)
pty 'expect=> ' 'send=run it\n' 'expect=\[a\]lways: ' 'send=y\n' sleep=0.7 intr \
    'expect=interrupted by the user' 'expect=> ' eof --
check "Ctrl-C during a command: exit 0 at Ctrl-D" [ "$rc" -eq 0 ]
check "Ctrl-C during a command: over in seconds, not 30" [ $(($(date +%s) - start)) -lt 10 ]
check "Ctrl-C during a command: the command started" [ -s "$WORK/pg.txt" ]
check "Ctrl-C during a command: its process group is gone" \
    bash -c 'for _ in $(seq 20); do ps -o pid= -g "$1" >/dev/null 2>&1 || exit 0; sleep 0.1; done; exit 1' _ "$(cat "$WORK/pg.txt" 2>/dev/null || echo 1)"
check "Ctrl-C during a command: Claude Code's aborted text" has "Command was aborted before completion"
# at the permission question: no, and the prompt ends
reset_files
pty 'expect=> ' 'send=run it\n' 'expect=\[a\]lways: ' intr 'expect=interrupted by the user' 'expect=> ' eof --
check "Ctrl-C at the question: exit 0 at Ctrl-D" [ "$rc" -eq 0 ]
check "Ctrl-C at the question: the command did not run" [ ! -e "$WORK/pg.txt" ]

# --- stdout a terminal, the output format json: JSON as before -----------------------------------------
scenario text
pty 'expect=\}' -- -p hi --output-format json
check "--output-format json on a terminal: the result object" grep -q '"type":"result"' "$TMP/out"

# --- stdin a terminal, stdout not: no REPL, no prompt is a usage error ------------------------------------
(cd "$WORK" && "$PY" "$TERM_DIR/ptydrive.py" --timeout 20 --out "$TMP/out" -- \
    /bin/sh -c 'exec "$1" chat >"$2"' _ "$BIN" "$TMP/stdout") 2>"$TMP/drive.err"
rc=$?
check "stdin a terminal, stdout a file, no PROMPT: exit 2" [ "$rc" -eq 2 ]
check "stdin a terminal, stdout a file, no PROMPT: says why" has "interactive mode needs a terminal on stdout"
check "stdin a terminal, stdout a file, no PROMPT: nothing on stdout" [ ! -s "$TMP/stdout" ]
scenario text
(cd "$WORK" && "$PY" "$TERM_DIR/ptydrive.py" --timeout 20 --out "$TMP/out" -- \
    /bin/sh -c 'exec "$1" chat hi >"$2"' _ "$BIN" "$TMP/stdout") 2>"$TMP/drive.err"
rc=$?
check "stdout a file, a PROMPT: one shot, the answer only" \
    bash -c '[ "$1" -eq 0 ] && [ "$(cat "$2")" = "Hello from the mock." ]' _ "$rc" "$TMP/stdout"

summary
