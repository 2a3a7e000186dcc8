#!/bin/bash
# tests/term/t_vertex.sh - `gemini-agent chat` with Google credentials
# (docs/credentials.md, "In gemini-agent chat"): the API keys against the
# Gemini API, and OAuth tokens against Vertex AI's path on the mock
# Gemini (tests/mock/gemini_mock.py, tests/mock/README.md "Vertex AI"):
#
#   a. a service-account key generated here (openssl), its RS256 JWT
#      traded at tests/mock/token_mock.py, which verifies the signature;
#   b. an authorized_user file (gcloud's ADC file) refreshed there;
#   c. a fake `gcloud` script;
#   d. a 401 once: a new token, the call tried again; a 401 twice: an
#      authentication error;
#   e. init.apiKeySource for each source, --vertex with only a key
#      refused, a missing project said;
#
# and, after every run, that no token, key or secret is in stdout or
# stderr (the stream-json lines included).
#
#   tests/term/t_vertex.sh     GA_BIN=build-asan/gemini-agent: another binary
#
# Prints "ok - NAME" / "not ok - NAME", then "N passed, N failed".
set -u

TERM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
. "$TERM_DIR/lib.sh"
command -v openssl >/dev/null || { echo "t_vertex.sh: openssl is missing" >&2; exit 2; }
mkdir -p "$TMP/home" "$TMP/nogcloud" "$TMP/adc" "$TMP/bin" "$TMP/emptybin"
TOKEN_PID=
cleanup_more() { [ -n "$TOKEN_PID" ] && kill -TERM "$TOKEN_PID" 2>/dev/null && wait "$TOKEN_PID" 2>/dev/null; }

# a test key: the token mock gets its public half and verifies every JWT
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$TMP/sa.pem" 2>/dev/null ||
    { echo "not ok - openssl could not make a key"; exit 1; }
MODULUS=$(openssl rsa -in "$TMP/sa.pem" -noout -modulus 2>/dev/null | sed 's/^Modulus=//')
KID=test-key-id-0123
ISS=chat-test@p.iam.gserviceaccount.com
printf '{"n": "%s", "e": 65537, "kid": "%s", "iss": "%s"}\n' "$MODULUS" "$KID" "$ISS" >"$TMP/pub.json"
"$PY" "$MOCK/token_mock.py" --port 0 --port-file "$TMP/token.port" --key-file "$TMP/pub.json" 2>"$TMP/token.log" &
TOKEN_PID=$!
for _ in $(seq 100); do [ -s "$TMP/token.port" ] && break; sleep 0.05; done
[ -s "$TMP/token.port" ] || { echo "not ok - the token mock did not start"; exit 1; }
TOKEN_URL="http://127.0.0.1:$(cat "$TMP/token.port")/token"

"$PY" - "$TMP/sa.pem" "$KID" "$ISS" "$TOKEN_URL" >"$TMP/sa.json" <<'PYEOF'
import json, sys
pem, kid, iss, url = sys.argv[1:]
print(json.dumps({"type": "service_account", "project_id": "sa-proj",
                  "private_key_id": kid, "private_key": open(pem).read(),
                  "client_email": iss, "client_id": "1234", "token_uri": url}))
PYEOF
AU_SECRET=au-client-secret-5f1c
AU_REFRESH=au-refresh-token-9d2e
printf '{"type": "authorized_user", "client_id": "cid-1.apps", "client_secret": "%s", "refresh_token": "%s"}\n' \
    "$AU_SECRET" "$AU_REFRESH" >"$TMP/adc/application_default_credentials.json"
GC_TOKEN=ya29.gcloud-token-7b3a
cat >"$TMP/bin/gcloud" <<EOF
#!/bin/sh
[ "\$1 \$2" = "auth print-access-token" ] || exit 2
echo "$GC_TOKEN"
EOF
chmod +x "$TMP/bin/gcloud"
API_KEY=gemini-key-for-test-41c7

export HOME=$TMP/home
unset GEMINI_API_KEY GOOGLE_API_KEY GOOGLE_APPLICATION_CREDENTIALS CLOUDSDK_CONFIG \
      GOOGLE_CLOUD_PROJECT GOOGLE_CLOUD_LOCATION GOOGLE_GENAI_USE_VERTEXAI \
      GEMINI_AGENT_GCLOUD GEMINI_AGENT_TEST_TOKEN_URL GEMINI_AGENT_LOG \
      XDG_STATE_HOME # the saved sessions under HOME: searched for tokens too

requests() { "$PY" "$MOCK/mockctl.py" requests --port-file "$TMP/mock.port" >"$TMP/req.json"; }

# chat ENV... -- ARGS: one prompt in stream-json, in a clean environment
# (no gcloud in PATH: the machine's own must not be found).
chat() {
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    mockctl reset >/dev/null
    (cd "$WORK" && env PATH="$TMP/emptybin" CLOUDSDK_CONFIG="$TMP/nogcloud" "${envs[@]}" \
        "$BIN" chat -p "hi" --output-format stream-json --verbose "$@" >"$TMP/out" 2>"$TMP/err")
    rc=$?
    requests
}

# pyq FILE PYEXPR: msgs (the stream-json lines of FILE), reqs (the mock's
# recorded requests) and err (stderr) in scope.
pyq() {
    "$PY" - "$TMP/out" "$TMP/req.json" "$TMP/err" "$1" <<'PYEOF'
import json, sys
msgs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
reqs = json.load(open(sys.argv[2]))
err = open(sys.argv[3]).read()
init = [m for m in msgs if m.get("type") == "system" and m.get("subtype") == "init"]
res = [m for m in msgs if m.get("type") == "result"]
sys.exit(0 if eval(sys.argv[4]) else 1)
PYEOF
}

# No secret in what the client wrote: the tokens the token mock issues,
# the gcloud token, the key, the file's secrets, the private key.
no_secret() {
    ! grep -qE "sa-token-|au-token-|$GC_TOKEN|$API_KEY|$AU_SECRET|$AU_REFRESH|PRIVATE KEY|MII" \
        "$TMP/out" "$TMP/err"
}

VPATH='/v1/projects/%s/locations/%s/publishers/google/models/gemini-3.8-flash:generateContent'
vpath() { printf "$VPATH" "$1" "$2"; }

# --- (a) a service-account key ----------------------------------------------
scenario text
chat GOOGLE_APPLICATION_CREDENTIALS="$TMP/sa.json" --
check "service account: exit 0" [ $rc -eq 0 ]
check "service account: apiKeySource" pyq 'init[0]["apiKeySource"] == "service_account"'
check "service account: Vertex path with the key's project, location global" \
    pyq "[r['path'] for r in reqs] == ['$(vpath sa-proj global)']"
check "service account: the token the JWT was traded for, as Bearer" \
    pyq 'reqs[0]["headers"].get("authorization", "").startswith("Bearer sa-token-") and "x-goog-api-key" not in reqs[0]["headers"]'
check "service account: the answer" pyq 'res[0]["is_error"] is False and res[0]["result"] == "Hello from the mock."'
check "service account: no secret in the output" no_secret

chat GOOGLE_APPLICATION_CREDENTIALS="$TMP/sa.json" GOOGLE_CLOUD_PROJECT=env-proj \
     GOOGLE_CLOUD_LOCATION=europe-west4 --
check "service account: GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION" \
    pyq "[r['path'] for r in reqs] == ['$(vpath env-proj europe-west4)']"

chat GOOGLE_APPLICATION_CREDENTIALS="$TMP/sa.json" GOOGLE_CLOUD_PROJECT=env-proj -- \
     --project flag-proj --location us-central1
check "service account: --project and --location win" \
    pyq "[r['path'] for r in reqs] == ['$(vpath flag-proj us-central1)']"

chat GOOGLE_APPLICATION_CREDENTIALS="$TMP/sa.json" GEMINI_API_KEY=$API_KEY -- --vertex
check "--vertex with a key set: exit 0" [ $rc -eq 0 ]
check "--vertex with a key set: the key is skipped, OAuth used" \
    pyq 'init[0]["apiKeySource"] == "service_account" and reqs[0]["headers"]["authorization"].startswith("Bearer ")'
check "--vertex with a key set: no secret in the output" no_secret

chat GOOGLE_APPLICATION_CREDENTIALS="$TMP/sa.json" GEMINI_API_KEY=$API_KEY GOOGLE_GENAI_USE_VERTEXAI=true --
check "GOOGLE_GENAI_USE_VERTEXAI=true: as --vertex" \
    pyq 'init[0]["apiKeySource"] == "service_account" and reqs[0]["vertex"]'

# a key the token mock does not know: its answer (invalid_grant, with a
# description that echoes the assertion) must stop the session, unquoted
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$TMP/other.pem" 2>/dev/null
"$PY" - "$TMP/sa.json" "$TMP/other.pem" >"$TMP/sa-other.json" <<'PYEOF'
import json, sys
k = json.load(open(sys.argv[1]))
k["private_key"] = open(sys.argv[2]).read()
print(json.dumps(k))
PYEOF
chat GOOGLE_APPLICATION_CREDENTIALS="$TMP/sa-other.json" --
check "service account refused: exit 1" [ $rc -eq 1 ]
check "service account refused: a system error naming invalid_grant, nothing sent to Gemini" \
    pyq 'msgs[0]["subtype"] == "error" and "invalid_grant" in msgs[0]["error"] and reqs == [] and not init'
check "service account refused: no assertion or secret in the output" \
    eval '! grep -qE "eyJ|assertion=" "$TMP/out" "$TMP/err" && no_secret'

# --- (b) an authorized_user file (gcloud's ADC file) --------------------------
chat CLOUDSDK_CONFIG="$TMP/adc" GEMINI_AGENT_TEST_TOKEN_URL="$TOKEN_URL" GOOGLE_CLOUD_PROJECT=au-proj --
check "authorized_user: exit 0" [ $rc -eq 0 ]
check "authorized_user: apiKeySource" pyq 'init[0]["apiKeySource"] == "authorized_user"'
check "authorized_user: refreshed token as Bearer on the project's path" \
    pyq "reqs[0]['path'] == '$(vpath au-proj global)' and reqs[0]['headers']['authorization'].startswith('Bearer au-token-')"
check "authorized_user: no secret in the output" no_secret

chat CLOUDSDK_CONFIG="$TMP/adc" GEMINI_AGENT_TEST_TOKEN_URL="$TOKEN_URL" --
check "authorized_user without a project: exit 1" [ $rc -eq 1 ]
check "authorized_user without a project: a system error naming GOOGLE_CLOUD_PROJECT, nothing sent" \
    pyq 'msgs[0]["subtype"] == "error" and "GOOGLE_CLOUD_PROJECT" in msgs[0]["error"] and reqs == []'

# --- (c) gcloud ----------------------------------------------------------------
chat GEMINI_AGENT_GCLOUD="$TMP/bin/gcloud" GOOGLE_CLOUD_PROJECT=gc-proj --
check "gcloud: exit 0" [ $rc -eq 0 ]
check "gcloud: apiKeySource" pyq 'init[0]["apiKeySource"] == "gcloud"'
check "gcloud: its token as Bearer" \
    pyq "reqs[0]['headers']['authorization'] == 'Bearer $GC_TOKEN' and reqs[0]['path'] == '$(vpath gc-proj global)'"
check "gcloud: no secret in the output" no_secret

chat PATH="$TMP/bin" GOOGLE_CLOUD_PROJECT=gc-proj --
check "gcloud found in PATH" pyq 'init[0]["apiKeySource"] == "gcloud"'

# --- (d) a 401 -------------------------------------------------------------------
scenario retry-then-ok status=401 times=1
chat GOOGLE_APPLICATION_CREDENTIALS="$TMP/sa.json" --
check "401 once: exit 0" [ $rc -eq 0 ]
check "401 once: two calls, the second with a new token" \
    pyq '[r["status"] for r in reqs] == [401, 200] and reqs[0]["headers"]["authorization"] != reqs[1]["headers"]["authorization"] and reqs[1]["headers"]["authorization"].startswith("Bearer sa-token-")'
check "401 once: the answer" pyq 'res[0]["is_error"] is False'
check "401 once: no secret in the output" no_secret

scenario error status=401
chat GOOGLE_APPLICATION_CREDENTIALS="$TMP/sa.json" --
check "401 twice: exit 1" [ $rc -eq 1 ]
check "401 twice: refreshed once only (two calls)" pyq 'len(reqs) == 2'
check "401 twice: a system error, an error result" \
    pyq 'any(m.get("subtype") == "error" for m in msgs) and res and res[0]["is_error"]'
check "401 twice: no secret in the output" no_secret

chat GEMINI_AGENT_GCLOUD="$TMP/bin/gcloud" GOOGLE_CLOUD_PROJECT=gc-proj --
check "401 with gcloud: gcloud asked again, still refused: two calls" pyq 'len(reqs) == 2'
scenario text

# --- (e) API keys, and what is refused -----------------------------------------
chat GEMINI_API_KEY=$API_KEY GOOGLE_APPLICATION_CREDENTIALS="$TMP/sa.json" --
check "GEMINI_API_KEY: first in the order" \
    pyq 'init[0]["apiKeySource"] == "GEMINI_API_KEY" and reqs[0]["path"].startswith("/v1beta/models/") and "authorization" not in reqs[0]["headers"]'
check "GEMINI_API_KEY: sent as x-goog-api-key" pyq "reqs[0]['headers']['x-goog-api-key'] == '$API_KEY'"
check "GEMINI_API_KEY: no secret in the output" no_secret

chat GOOGLE_API_KEY=$API_KEY --
check "GOOGLE_API_KEY: apiKeySource" pyq 'init[0]["apiKeySource"] == "GOOGLE_API_KEY"'

chat GEMINI_API_KEY=$API_KEY -- --vertex
check "--vertex with only a key: exit 1" [ $rc -eq 1 ]
check "--vertex with only a key: refused, express mode named, nothing sent" \
    pyq 'msgs[0]["subtype"] == "error" and "express mode" in msgs[0]["error"] and reqs == []'
check "--vertex with only a key: no secret in the output" no_secret

chat --
check "no credential: exit 1" [ $rc -eq 1 ]
check "no credential: a system error saying what to set" \
    pyq 'msgs[0]["subtype"] == "error" and "GEMINI_API_KEY" in msgs[0]["error"] and reqs == []'

chat GOOGLE_APPLICATION_CREDENTIALS="$TMP/sa.json" -- --location 'Bad/Loc'
check "a bad location: exit 1, said, nothing sent" \
    pyq 'msgs[0]["subtype"] == "error" and "location" in msgs[0]["error"] and reqs == []'

chat GOOGLE_APPLICATION_CREDENTIALS="$TMP/sa.json" GOOGLE_CLOUD_PROJECT=p -- --output-format text
check "text output over Vertex AI: exit 0" [ $rc -eq 0 ]
check "text output over Vertex AI: the answer" grep -qx "Hello from the mock." "$TMP/out"

scenario text
chat GOOGLE_APPLICATION_CREDENTIALS="$TMP/sa.json" -- --include-partial-messages
check "streamed over Vertex AI: the streaming path" \
    pyq "reqs[0]['path'] == '$(vpath sa-proj global | sed 's/:generateContent/:streamGenerateContent/')' and reqs[0]['query'] == {'alt': 'sse'} and res[0]['is_error'] is False"
check "streamed over Vertex AI: no secret in the output" no_secret

# nothing written to disk holds a token: the working folder (the tools'
# data folder is in it) and HOME
check "no token in any file the client wrote" \
    eval '! grep -rqE "sa-token-|au-token-|$GC_TOKEN" "$WORK" "$HOME"'

summary
