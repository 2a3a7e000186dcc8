# tests/http/runapi_lib.sh - shared by t_runapi.sh and t_approvals.sh: the
# run API (/api/agent/*, docs/http-api.md "Identity") through nginx + the
# responder + the mock Gemini server. Not a test itself.
#
# Users are named by their session tokens (`gemini-agent auth issue`, one
# per user and stack, kept); trust levels are written to the store
# (`gemini-agent users set-trust` when the binary has it, else the users
# table through Python's sqlite3). The store is read with Python's sqlite3,
# read-only.
#
# shellcheck shell=bash disable=SC2034  # the variables are for the tests that source it
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_binary

# Run API bodies (long conversations) are larger than lib.sh's 4 KiB.
RUN_LIMITS='{maxBodyBytes: 1048576}'
RUN=/api/agent/run
RUN_STREAM=/api/agent/run/stream

# The answer's keys (seed §3, plus usage), and the optional ones.
export ANSWER_KEYS='ok runId actionId threadId status summary mode model usage'
export USAGE_KEYS='cachedTokens candidatesTokens geminiCalls promptTokens thoughtsTokens totalTokens'

# --- identity -------------------------------------------------------------

declare -A TOKENS=()
TOKEN=

# token_for USER: TOKEN = a session token for USER on the current stack
# (made once by `auth issue`, then reused).
token_for() {
    local key="$ST_N/$1"
    if [ -z "${TOKENS[$key]:-}" ]; then
        TOKENS[$key]=$(env -i PATH="$PATH" "$GA_BIN" auth issue --user "$1" \
            --config "$GA_CONF" 2>"$T_TMP/issue.err") ||
            bail "auth issue --user $1 failed: $(cat "$T_TMP/issue.err")"
    fi
    TOKEN=${TOKENS[$key]}
}

# api USER METHOD PATH [BODY [CURL_ARGS...]]: req with USER's Bearer token.
api() {
    local user=$1 method=$2 path=$3 body=${4-}
    shift 3
    [ $# -gt 0 ] && shift
    token_for "$user"
    req "$method" "$path" "$body" -H "Authorization: Bearer $TOKEN" "$@"
}

# mint_token USER EXPIRY [SECRET_FILE]: a token made as docs/http-api.md ("Identity") says
# (Python's hmac, not the program), for tests of expiry and signatures.
mint_token() {
    "$PY" - "$1" "$2" "${3:-$GA_SECRET}" <<'PY'
import base64, hmac, sys
user, exp, path = sys.argv[1:4]
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=")
secret = open(path, "rb").read()
head = b"v1." + b64(user.encode()) + b"." + exp.encode()
print((head + b"." + b64(hmac.new(secret, head, "sha256").digest())).decode())
PY
}

# --- bodies ---------------------------------------------------------------

# run_body PROMPT [PY_DICT]: $T_TMP/run.json = {"prompt": PROMPT} updated
# with the Python dict PY_DICT (names: E the environment, json). Prints the
# path as @FILE for req.
run_body() {
    "$PY" - "$1" "${2:-{\}}" "$T_TMP/run.json" <<'PY' || bail "run_body: cannot build the body"
import json, os, sys
prompt, extra, out = sys.argv[1:4]
d = {"prompt": prompt}
d.update(eval(extra, {"E": os.environ, "json": json}))
open(out, "w", encoding="utf-8").write(json.dumps(d, ensure_ascii=False))
PY
    printf '@%s' "$T_TMP/run.json"
}

# run_as USER PROMPT [PY_DICT]: POST /api/agent/run.
run_as() {
    local body
    body=$(run_body "$2" "${3:-{\}}")
    api "$1" POST "$RUN" "$body"
}

# stream_as USER PROMPT [PY_DICT]: POST /api/agent/run/stream.
stream_as() {
    local body
    body=$(run_body "$2" "${3:-{\}}")
    api "$1" POST "$RUN_STREAM" "$body"
}

# call_marker TOOL ARGS_JSON: the mock marker that makes the model call
# TOOL with ARGS (no single quote in ARGS), then answer `Done: <responses>`.
call_marker() {
    printf "[[mock:page-call tool=%s args='%s']]" "$1" "$2"
}

# review_marker ARGS_JSON: a call of shop.addReview (a side effect).
review_marker() {
    call_marker action_shop_addReview "$1"
}

# --- the store ------------------------------------------------------------

store_db() {
    printf '%s' "${STORE_DB:-$ST_DIR/var/agent.db}"
}

# sql QUERY [PARAM...]: the rows of QUERY (read-only) as a JSON list of
# objects, on stdout.
sql() {
    "$PY" - "$(store_db)" "$@" <<'PY'
import json, sqlite3, sys
db, q, params = sys.argv[1], sys.argv[2], sys.argv[3:]
c = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=10)
c.row_factory = sqlite3.Row
print(json.dumps([dict(r) for r in c.execute(q, params)]))
PY
}

# save_sql NAME QUERY [PARAM...]: the rows as S[NAME] for assert_py.
save_sql() {
    local name=$1
    shift
    mkdir -p "$SAVED_DIR"
    sql "$@" >"$SAVED_DIR/$name.json" 2>"$T_TMP/sql.err" ||
        printf 'null' >"$SAVED_DIR/$name.json"
}

# save_json NAME JSON: keep JSON as S[NAME] for assert_py.
save_json() {
    mkdir -p "$SAVED_DIR"
    printf '%s' "$2" >"$SAVED_DIR/$1.json"
}

# set_trust USER LEVEL: the user's trust level, by the operators' command
# when this build has it, else in the users table with Python's sqlite3.
# Call it while no responder runs (stop_stack first), on a store that
# exists: another process that writes the store and closes it while the
# responder serves takes the WAL away from the responder's connections (a
# server bug, checked in t_runapi.sh), and the responder's later writes are
# lost.
HAVE_SET_TRUST=
set_trust() {
    local -a envv
    [ -e "$(store_db)" ] || bail "set_trust: no store at $(store_db) yet"
    if [ -z "$HAVE_SET_TRUST" ]; then
        HAVE_SET_TRUST=no
        "$GA_BIN" users set-trust --help >/dev/null 2>&1 && HAVE_SET_TRUST=yes
        echo "# trust levels set with $([ "$HAVE_SET_TRUST" = yes ] && echo "gemini-agent users set-trust" || echo "Python's sqlite3 (no users set-trust command)")"
    fi
    if [ "$HAVE_SET_TRUST" = yes ]; then
        mapfile -d '' -t envv < <(ga_env)
        "${envv[@]}" "$GA_BIN" users set-trust "$1" "$2" --config "$GA_CONF" \
            >"$T_TMP/trust.out" 2>&1 ||
            bail "users set-trust $1 $2: $(cat "$T_TMP/trust.out")"
        return 0
    fi
    "$PY" - "$(store_db)" "$1" "$2" <<'PY' || bail "set_trust: cannot write the users table"
import sqlite3, sys, time
db, user, trust = sys.argv[1:4]
c = sqlite3.connect("file:%s?mode=rw" % db, uri=True, timeout=10)
with c:
    c.execute("INSERT INTO users (id, trust, updated) VALUES (?, ?, ?)"
              " ON CONFLICT (id) DO UPDATE SET trust = excluded.trust,"
              " updated = excluded.updated", (user, trust, int(time.time() * 1000)))
c.close()
PY
}

# reviews_count: lines in the shop's reviews file of the current stack.
reviews_count() {
    count_lines "${REVIEWS_FILE:-$ST_DIR/var/shop-reviews.jsonl}"
}
