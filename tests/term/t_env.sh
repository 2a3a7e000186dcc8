#!/bin/bash
# tests/term/t_env.sh - Bash in `gemini-agent chat` gets no Gemini or
# Google credential (core/credenv.h): the red team's
# `echo $GEMINI_API_KEY` printed the key, which went to Gemini in the tool
# result and into the saved session. Here Bash runs `env` with the key and
# the other credential variables set: the tool result, what the mock
# Gemini received and every file of the session store hold none of them;
# a variable named in GEMINI_AGENT_PASS_ENV is passed on.
#
#   tests/term/t_env.sh     GA_BIN=build-asan/gemini-agent: another binary
#
# Prints "ok - NAME" / "not ok - NAME", then "N passed, N failed".
set -u

TERM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
. "$TERM_DIR/lib.sh"

# The key the client itself uses (the mock takes any), and the others.
export GEMINI_API_KEY=canary-gemini-key-24
export GOOGLE_API_KEY=canary-google-key-24
export GOOGLE_APPLICATION_CREDENTIALS=/canary/adc-24.json
export GOOGLE_OAUTH_ACCESS_TOKEN=canary-oauth-token-24
export CLOUDSDK_CONFIG=/canary/gcloud-24
export GA_TERM_PLAIN=plain-24
unset GEMINI_AGENT_PASS_ENV
CANARIES='canary-gemini-key-24 canary-google-key-24 /canary/adc-24.json canary-oauth-token-24 /canary/gcloud-24'

# lacks_all FILE...: none of the canaries in any FILE.
lacks_all() {
    local c
    for c in $CANARIES; do
        if grep -qaF -- "$c" "$@"; then
            echo "# found $c in: $(grep -laF -- "$c" "$@" | tr '\n' ' ')"
            return 1
        fi
    done
}

# The tool result of the first Bash call (its text), into $TMP/result.
bash_result() {
    "$PY" - "$TMP/out" >"$TMP/result" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    m = json.loads(l)
    if m.get("type") == "user" and isinstance(m["message"]["content"], list):
        for b in m["message"]["content"]:
            if b.get("type") == "tool_result":
                print(b["content"])
                sys.exit(0)
sys.exit(1)
PY
}

reset_files
mockctl reset >/dev/null
scenario server-steps 'calls=[["Bash",{"command":"env"}]]'
chat -p "show the environment" --output-format stream-json --verbose \
    --permission-mode bypassPermissions >"$TMP/out" 2>"$TMP/err"
check "Bash env: exit 0" [ $? -eq 0 ]
check "Bash env: a tool result came back" bash_result
check "... it is env's output (PATH and a plain variable)" \
    grep -q '^GA_TERM_PLAIN=plain-24$' "$TMP/result"
check "... with no credential in it" lacks_all "$TMP/result"
check "... nor any of their names" bash -c '! grep -qE "^(GEMINI_API_KEY|GOOGLE_API_KEY|GOOGLE_APPLICATION_CREDENTIALS|GOOGLE_OAUTH_ACCESS_TOKEN|CLOUDSDK_CONFIG)=" "$1"' _ "$TMP/result"
check "stdout and stderr hold none" lacks_all "$TMP/out" "$TMP/err"
# what went to Gemini: the request bodies (the key itself rides in the
# x-goog-api-key header, as it should)
mockctl requests | "$PY" -c 'import json, sys
print(json.dumps([r["body"] for r in json.load(sys.stdin)]))' >"$TMP/bodies.json"
check "the mock recorded the tool result going to Gemini" grep -qF 'GA_TERM_PLAIN=plain-24' "$TMP/bodies.json"
check "... and no credential in what Gemini received" lacks_all "$TMP/bodies.json"
check "the session store exists" test -n "$(find "$XDG_STATE_HOME" -type f 2>/dev/null | head -n 1)"
check "no file under the session store holds a credential" \
    lacks_all $(find "$XDG_STATE_HOME" -type f)

# Passed on by name
reset_files
scenario server-steps 'calls=[["Bash",{"command":"env"}]]'
GEMINI_AGENT_PASS_ENV='GOOGLE_APPLICATION_CREDENTIALS CLOUDSDK_CONFIG' \
    chat -p "show the environment" --output-format stream-json --verbose \
    --permission-mode bypassPermissions >"$TMP/out" 2>"$TMP/err"
check "GEMINI_AGENT_PASS_ENV: exit 0" [ $? -eq 0 ]
check "GEMINI_AGENT_PASS_ENV: a tool result came back" bash_result
check "... the variables it names are passed on" bash -c \
    'grep -qx "GOOGLE_APPLICATION_CREDENTIALS=/canary/adc-24.json" "$1" && grep -qx "CLOUDSDK_CONFIG=/canary/gcloud-24" "$1"' _ "$TMP/result"
check "... the key is not" bash -c '! grep -qF canary-gemini-key-24 "$1" && ! grep -qF canary-google-key-24 "$1"' _ "$TMP/result"

summary
