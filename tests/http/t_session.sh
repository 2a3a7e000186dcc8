#!/bin/bash
# t_session.sh - GET /api/agent/session (docs/http-api.md "The run API"):
# the one run API route that answers 200 without an identity, so a page
# can ask "am I signed in?" on every load without a 401 in the browser's
# console (the assistant page does). Signed in: {signedIn: true, user};
# signed out, or a token that is refused: {signedIn: false, reason} with
# the words the other routes' 401 would have had. The other routes still
# answer 401 (t_runapi.sh).
source "$(dirname "${BASH_SOURCE[0]}")/runapi_lib.sh"

start_mock
start_stack --mock --auth --limits "$RUN_LIMITS"
SESSION=/api/agent/session
NOW=$(date +%s)

# assert_session LABEL SIGNED_IN WORD: 200, JSON, exactly the keys the
# answer has, signedIn as given, and WORD in the user or the reason.
assert_session() {
    local label=$1 want=$2 word=$3 why='' got keys
    [ "$RES_STATUS" = 200 ] || why="status $RES_STATUS"
    [ "$(header_get Content-Type)" = "application/json; charset=utf-8" ] ||
        why="$why Content-Type '$(header_get Content-Type)'"
    if [ "$want" = true ]; then keys='signedIn user'; else keys='reason signedIn'; fi
    got=$(json_get '" ".join(sorted(j))')
    [ "$got" = "$keys" ] || why="$why keys '$got', not '$keys'"
    got=$(json_get 'str(j["signedIn"]).lower()')
    [ "$got" = "$want" ] || why="$why signedIn $got"
    got=$(json_get 'j.get("user") or j.get("reason")')
    case $got in *"$word"*) ;; *) why="$why '$got' lacks '$word'" ;; esac
    if [ -z "$why" ]; then ok "$label"; else not_ok "$label" "$why; body: $(body_excerpt)"; fi
}

req GET $SESSION
assert_session "no identity: 200, signed out, and why" false "sign in first"
req GET $SESSION '' -H "Cookie: ga_session=$(mint_token ann $((NOW - 30)))"
assert_session "an expired ga_session cookie: signed out (expired)" false expired
req GET $SESSION '' -H "Authorization: Bearer not-a-token"
assert_session "a malformed token: signed out (malformed)" false malformed

token_for ann
req GET $SESSION '' -H "Authorization: Bearer $TOKEN"
assert_session "ann's Bearer token: signed in as ann" true ann
req GET $SESSION '' -H "Cookie: ga_session=$(mint_token bob $((NOW + 600)))"
assert_session "bob's ga_session cookie: signed in as bob" true bob
check "the token is not in the answer" bash -c '! grep -q -- "$1" <<<"$2"' _ "$TOKEN" "$RES_BODY"

# The other routes keep their 401; this one is GET only.
req GET /api/agent/threads
assert_status 401 "GET /api/agent/threads without an identity: still 401"
req POST $SESSION '{}'
assert_status 405 "POST $SESSION: 405"
check "nothing reached Gemini" test "$(mock_count)" = 0

finish
