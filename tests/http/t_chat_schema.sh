#!/bin/bash
# t_chat_schema.sh - the chat routes' own .jay-action files
# (actions/geminiAgent/) describe the route as it is, through nginx + the
# responder + the mock Gemini server.
#
# The test drives the route to every kind of answer (response, with
# truncated, stopReason and historyTruncated; tool-calls; blocked;
# approval-required; question; a streamed result), sending every request
# member there is (history, signatures, conversation, results, approval,
# answer, toolDefinitions, pageState). Then, with the schemas as
# GET /_jay/actions lists them to clients and tests/http/conf/jsubset.py's
# reading of the schema subset:
#
#  - every request sent validates against its route's inputSchema, and
#    every member that schema has was in a request the route took;
#  - every answer validates against the outputSchema, has no member the
#    schema lacks, and every member and answer type the schema has was in
#    some answer;
#  - a member the schema lacks is refused (400 bad_request, the same
#    envelope as any bad body); what the schema refuses and the route's own
#    decoding would take is refused by the schema (check_dispatch.c
#    compares the route's member lists and answer types with the files).
source "$(dirname "${BASH_SOURCE[0]}")/chat_lib.sh"

VAR=$T_TMP/var
mkdir -p "$VAR"

start_mock
start_stack --mock --api-key "$CANARY" --data-dir "$VAR" \
    --limits "{$CHAT_LIMITS, maxLoopSteps: 3, maxHistoryTurns: 6}" \
    --yaml "plugins: {expose: [shop, clarification]}"

req GET /_jay/actions
assert_status 200 "the actions are listed"
save_res listing

# The questions the mock's model asks (as t_clarify.sh does).
export Q='{"questions":[{"id":"size","text":"Which size?","kind":"single","options":["S","M","L"],"default":"M"},{"id":"extras","text":"Any extras?","kind":"multiple","options":["gift wrap","card"],"required":false}]}'
ASK="[[mock:server-call tool=action_clarification_ask args='$Q']]"

ANSWERS=()

# exchange NAME ROUTE EXPR [SAVED] [CURL_ARGS...]: POST the body the Python
# EXPR builds (r: the answer saved as SAVED, if any); the request is kept
# as S['req-NAME'], the answer as S[NAME] and named in $ANSWERS.
exchange() {
    local name=$1 route=$2 expr=$3 saved=${4:-}
    shift 4
    MJ_BODY=${saved:+$SAVED_DIR/$saved.json} make_json "$SAVED_DIR/req-$name.json" "$expr"
    req POST "$route" "@$SAVED_DIR/req-$name.json" "$@"
    assert_status 200 "$name: answered"
    save_res "$name"
    ANSWERS+=("$name:$([ "$route" = "$SEND" ] && echo send || echo submit)")
}

# a sendMessage body: MSG (an environment variable's name), continuing the
# conversation of r when CONT is set
send_expr() {
    local more=""
    [ -n "${2:-}" ] && more=", 'history': r['history'], 'signatures': r['signatures'], 'conversation': r['conversation']"
    printf "{'message': E['%s']%s, 'toolDefinitions': json.loads(E['TOOLS']), 'pageState': json.loads(E['PAGE'])}" "$1" "$more"
}
# the members a submitToolResults body continues the conversation of r with
CONT="'history': r['history'], 'signatures': r['signatures'], 'conversation': r['conversation'], 'toolDefinitions': json.loads(E['TOOLS']), 'pageState': json.loads(E['PAGE2'])"

export M_TEXT="[[mock:text]] hello" M_PAGE="[[mock:page-call]] remove the hub" \
    M_REVIEW="[[mock:server-call]] review the hub" M_ASK="$ASK which shirt" \
    M_BLOCKED="[[mock:blocked]] something" M_CUT="[[mock:max-tokens]] a long story" \
    M_LOOP="[[mock:loop]] search forever" M_MORE="[[mock:text]] and then?"

mock_reset
# (the mock plays the scenario of a conversation's first message)
exchange text "$SEND" "$(send_expr M_TEXT)" ""
exchange more "$SEND" "$(send_expr M_MORE cont)" text
exchange more2 "$SEND" "$(send_expr M_MORE cont)" more
exchange trimmed "$SEND" "$(send_expr M_MORE cont)" more2
exchange page "$SEND" "$(send_expr M_PAGE)" ""
exchange results "$SUBMIT" "{'results': $RESULTS_IN_ORDER, $CONT}" page
exchange review "$SEND" "$(send_expr M_REVIEW)" ""
exchange approve "$SUBMIT" "{'approval': {'id': r['approval']['id'], 'ticket': r['approval']['ticket'], 'decision': 'approve'}, 'results': [], $CONT}" review
exchange ask "$SEND" "$(send_expr M_ASK)" ""
exchange answer "$SUBMIT" "{'answer': {'id': r['question']['id'], 'answers': {'size': 'L', 'extras': ['card']}}, $CONT}" ask
exchange blocked "$SEND" "$(send_expr M_BLOCKED)" ""
exchange cut "$SEND" "$(send_expr M_CUT)" ""
exchange steps "$SEND" "$(send_expr M_LOOP)" ""
exchange streamed "$SEND" "$(send_expr M_TEXT)" "" -H 'Accept: application/x-ndjson'
# the streamed answer is its last line's result
"$PY" -c 'import json,sys; p=sys.argv[1]; last=[l for l in open(p) if l.strip()][-1]; json.dump(json.loads(last)["result"], open(p,"w"))' \
    "$SAVED_DIR/streamed.json"

export EXCHANGES="${ANSWERS[*]}"
assert_py "the requests and the answers are the schemas'" <<'EOF'
both chat actions listed :: sorted(__import__('chatschema').schemas(S)) ==> ['geminiAgent.sendMessage', 'geminiAgent.submitToolResults']
one answer schema for both :: len({json.dumps(a['outputSchema'], sort_keys=True) for a in __import__('chatschema').schemas(S).values()}) ==> 1
every request validates against its inputSchema :: __import__('chatschema').request_problems(S, E) ==> {}
every member of the inputSchemas was in a request the route took :: __import__('chatschema').request_members_unused(S, E) ==> {}
every answer validates against the outputSchema :: __import__('chatschema').answer_problems(S, E) ==> {}
no answer has a member the schema lacks :: __import__('chatschema').answer_extra_members(S, E) ==> {}
every member of the outputSchema was in an answer :: __import__('chatschema').answer_members_unseen(S, E) ==> []
every answer type of the outputSchema was answered :: __import__('chatschema').answer_types_unseen(S, E) ==> []
the kinds as meant :: [S[n]['type'] for n in ['text', 'page', 'results', 'review', 'ask', 'blocked', 'streamed']] ==> ['response', 'tool-calls', 'response', 'approval-required', 'question', 'blocked', 'response']
and their marks :: [S['cut'].get('truncated'), S['steps'].get('stopReason'), S['trimmed'].get('historyTruncated')] ==> [True, 'max_steps', True]
the approval and the answer were taken :: [S['approve']['type'], S['answer']['type'], [c['name'] for c in S['approve']['serverCalls']]] ==> ['response', 'response', ['shop.addReview']]
EOF

# A member the schema lacks: refused as any bad body is.
req POST "$SEND" '{"message":"hi","colour":"red"}'
assert_error 400 bad_request "sendMessage with a member the schema lacks"
assert_body_contains "unknown member 'colour'" "sendMessage with a member the schema lacks: named"
req POST "$SUBMIT" '{"approval":{"id":"c1","ticket":"t1.x","decision":"approve","why":1},"history":[]}'
assert_error 400 bad_request "an approval with a member the schema lacks"
# What the schema refuses and the route's own decoding would take.
req POST "$SEND" '{"message":"hi","signatures":[5]}'
assert_error 400 bad_request "a signature that is no string"
assert_body_contains "the request body: /signatures/0" "a signature that is no string: the member named"

canary_checks
finish
