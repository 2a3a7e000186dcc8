#!/bin/bash
# t_clarify.sh - the built-in plugin `clarification` and the "ask the user"
# channel (plugin.h's GEMINI_AGENT_ASK_USER), through nginx + the responder
# + the mock Gemini server:
#
#  - the chat: the model's call of action_clarification_ask ends the turn
#    with a "question" answer (the questions normalised: required defaults
#    to true); submitToolResults' `answer` is checked against the questions
#    of the model's call (kind, options, required; unknown ids, wrong id) -
#    each bad answer a 400 that reaches no model - and a good one goes to
#    the model as the call's result {"answers": {...}}; an answered question
#    cannot be answered again; a new message answers it "not answered";
#    a question the rules refuse is the model's to fix (it reads why);
#  - a question with page calls of the same turn: both in one answer, the
#    results and the answer in one submit;
#  - POST /_jay/actions/clarification.ask: nobody to ask there, a 400;
#  - the run API: a run whose model asks waits (awaiting_confirmation,
#    mode input_required, the question in the answer, in GET of the run and
#    in its events stream, with status awaiting_input); POST
#    /api/agent/answers/{run} checks the answers (400s, no Gemini call),
#    only the run's owner may answer (another user: 404), the answer goes to
#    the model as the call's result and the run completes; answering twice
#    is 409, also when two answers race.
source "$(dirname "${BASH_SOURCE[0]}")/chat_lib.sh"

start_mock
start_stack --mock --auth --limits "{$CHAT_LIMITS}" \
    --yaml "plugins: {expose: [clarification]}"

# The questions the mock's model asks (server-call's args=).
export Q='{"questions":[{"id":"size","text":"Which size?","kind":"single","options":["S","M","L"],"default":"M"},{"id":"extras","text":"Any extras?","kind":"multiple","options":["gift wrap","card"],"required":false},{"id":"note","text":"A note for us?","kind":"text","required":false}]}'
ASK="[[mock:server-call tool=action_clarification_ask args='$Q']]"

# chat_answer ANSWERS_EXPR [ID_EXPR] [SAVED]: submitToolResults with
# `answer` {id, answers} for the last answer's question (or the answer
# saved as SAVED), its history and signatures.
chat_answer() {
    MJ_BODY=${3:+$SAVED_DIR/$3.json} make_json "$T_TMP/answer.json" \
        "{'answer': {'id': ${2:-r['question']['id']}, 'answers': $1}, 'history': r['history'], 'signatures': r.get('signatures'), 'toolDefinitions': json.loads(E['TOOLS']), 'pageState': json.loads(E['PAGE2'])}"
    req POST "$SUBMIT" "@$T_TMP/answer.json"
}

req POST /_jay/actions/clarification.ask "$Q"
assert_error 400 bad_request "the action route cannot ask anyone"

# ---------------------------------------------------------------------------
# The chat: the question, bad answers, the answer

mock_reset
chat_send "$ASK which shirt"
save_res asked
assert_py "the model asks: a question answer" <<'EOF'
status ==> 200
r['type'] ==> 'question'
r['question']['tool'] ==> 'clarification.ask'
the call id :: r['question']['id'] ==> r['history'][-1]['parts'][0]['functionCall'].get('id', 'call_1_0')
normalised: required defaults to true :: r['question']['questions'][0] ==> {'id': 'size', 'text': 'Which size?', 'kind': 'single', 'required': True, 'options': ['S', 'M', 'L'], 'default': 'M'}
the optional ones :: [q['required'] for q in r['question']['questions']] ==> [True, False, False]
no page calls :: r['calls'] ==> []
the ask ran on the server :: [c['name'] for c in r['serverCalls']] ==> ['clarification.ask']
the call stays unanswered in the history :: r['history'][-1]['role'] ==> 'model'
signed :: len(r['signatures']) > 0
one Gemini call :: len(reqs) ==> 1
declared :: 'action_clarification_ask' in json.dumps(reqs[0]['body']['tools']) ==> True
instructed :: 'Ask only when the answer really changes what you do' in reqs[0]['body']['systemInstruction']['parts'][0]['text'] ==> True
EOF

bad_answer() { # EXPR LABEL WORDS [ID_EXPR]
    mock_reset
    chat_answer "$1" "${4:-}" asked
    assert_error 400 bad_request "a bad answer: $2"
    assert_body_contains "$3" "a bad answer: $2: says why"
    assert_calls 0 "a bad answer: $2: no Gemini call"
}
bad_answer "{'extras': ['card']}" "a required question left out" "'size' is required"
bad_answer "{'size': 'XL'}" "not one of the options" "'size' must be one of its options"
bad_answer "{'size': ['S']}" "an array for a single choice" "'size' must be one of its options"
bad_answer "{'size': 'S', 'extras': 'card'}" "a string for a multiple choice" "'extras' must be an array"
bad_answer "{'size': 'S', 'extras': ['card', 'card']}" "a choice twice" "names 'card' twice"
bad_answer "{'size': 'S', 'extras': ['bow']}" "a choice not offered" "is not one of its options"
# refused by submit-tool-results.jay-action before the questions are read
bad_answer "{'size': 'S', 'note': 5}" "a number for text" "/answer/answers/note: expected string or array"
bad_answer "{'size': 'S', 'colour': 'red'}" "an unknown question id" "'colour' is no question of this call"
bad_answer "{'size': 'S'}" "the wrong call id" "the answer names no question waiting" "'call_9_9'"
bad_answer "[]" "answers not an object" "answer must be {id, answers"

mock_reset
chat_answer "{'size': 'L', 'extras': [], 'note': 'thanks'}" "" asked
save_res answered
assert_py "a good answer: the model reads it as the call's result" <<'EOF'
status ==> 200
r['type'] ==> 'response'
one Gemini call :: len(reqs) ==> 1
the result the model read :: reqs[0]['body']['contents'][-1]['parts'][0]['functionResponse']['response'] ==> {'result': {'answers': {'size': 'L', 'note': 'thanks'}}}
the model's answer quotes it :: r['message'] ==> 'Done: {"result":{"answers":{"size":"L","note":"thanks"}}}'
the history keeps it :: r['history'][-2]['parts'][0]['functionResponse']['response']['result'] ==> {'answers': {'size': 'L', 'note': 'thanks'}}
EOF

mock_reset
chat_answer "{'size': 'L'}" "" asked
mock_reset
MJ_BODY=$SAVED_DIR/answered.json make_json "$T_TMP/again.json" \
    "{'answer': {'id': S['asked']['question']['id'], 'answers': {'size': 'S'}}, 'history': r['history'], 'signatures': r.get('signatures'), 'toolDefinitions': json.loads(E['TOOLS']), 'pageState': json.loads(E['PAGE2'])}"
req POST "$SUBMIT" "@$T_TMP/again.json"
assert_error 400 bad_request "answered already: a second answer is refused"
assert_calls 0 "answered already: no Gemini call"

# A new message instead of an answer: the model reads "not answered"
mock_reset
MJ_BODY=$SAVED_DIR/asked.json make_json "$T_TMP/moved.json" \
    "{'message': 'never mind, show me hats', 'history': r['history'], 'signatures': r.get('signatures'), 'toolDefinitions': json.loads(E['TOOLS']), 'pageState': json.loads(E['PAGE2'])}"
req POST "$SEND" "@$T_TMP/moved.json"
assert_py "a new message instead: the question is answered 'not answered'" <<'EOF'
status ==> 200
reqs[0]['body']['contents'][-2]['parts'][0]['functionResponse']['response'] ==> {'error': 'not answered: the user sent a new message instead'}
the new message follows :: reqs[0]['body']['contents'][-1]['parts'][0]['text'] ==> 'never mind, show me hats'
EOF

# A question the rules refuse: the model reads why, nobody is asked
mock_reset
chat_send "[[mock:server-call tool=action_clarification_ask args='{\"questions\":[{\"id\":\"a\",\"text\":\"Pick\",\"kind\":\"single\"}]}']] pick"
assert_py "a choice without options: the model reads why" <<'EOF'
status ==> 200
r['type'] ==> 'response'
'questions[0]: a single or multiple choice needs 1 to 12 options' in r['message'] ==> True
EOF
mock_reset
chat_send "[[mock:server-call tool=action_clarification_ask args='{\"questions\":[{\"id\":\"a\",\"text\":\"Pick\",\"kind\":\"single\",\"options\":[\"x\"],\"default\":\"y\"},{\"id\":\"a\",\"text\":\"Again\",\"kind\":\"text\"}]}']] pick"
assert_py "a default not among the options: the model reads why" <<'EOF'
status ==> 200
'questions[0].default: one of the options' in r['message'] ==> True
EOF
mock_reset
chat_send "[[mock:server-call tool=action_clarification_ask args='{\"questions\":[{\"id\":\"a\",\"text\":\"Pick\",\"kind\":\"text\"},{\"id\":\"a\",\"text\":\"Again\",\"kind\":\"text\"}]}']] pick"
assert_py "two questions with one id: the model reads why" <<'EOF'
status ==> 200
"questions[1].id: 'a' is the id of an earlier question too" in r['message'] ==> True
EOF

# ---------------------------------------------------------------------------
# The run API: the run waits for the user's answer

declare -A TOKENS=()
# api USER METHOD PATH [BODY [CURL_ARGS...]]: req with USER's Bearer token.
api() {
    local user=$1 method=$2 path=$3 body=${4-} key
    shift 3
    [ $# -gt 0 ] && shift
    key="$ST_N/$user"
    if [ -z "${TOKENS[$key]:-}" ]; then
        TOKENS[$key]=$(env -i PATH="$PATH" "$GA_BIN" auth issue --user "$user" \
            --config "$GA_CONF" 2>"$T_TMP/issue.err") ||
            bail "auth issue --user $user failed: $(cat "$T_TMP/issue.err")"
    fi
    req "$method" "$path" "$body" -H "Authorization: Bearer ${TOKENS[$key]}" "$@"
}
# run_prompt USER PROMPT [PATH]: POST /api/agent/run (or PATH) with PROMPT.
run_prompt() {
    export RUN_PROMPT=$2
    make_json "$T_TMP/run.json" "{'prompt': E['RUN_PROMPT']}"
    api "$1" POST "${3:-/api/agent/run}" "@$T_TMP/run.json"
}
# give_answer USER RUN ANSWERS_EXPR: POST /api/agent/answers/RUN.
give_answer() {
    make_json "$T_TMP/give.json" "{'answers': $3}"
    api "$1" POST "/api/agent/answers/$2" "@$T_TMP/give.json"
}

mock_reset
run_prompt ann "$ASK which shirt"
save_res run_asked
RUN_ID=$(json_get 'j["runId"]')
export RUN_ID
assert_py "run API: the run waits for the answer" <<'EOF'
status ==> 200
r['status'] ==> 'awaiting_confirmation'
r['mode'] ==> 'input_required'
r['tool'] ==> 'clarification.ask'
the question is the action's :: r['question']['id'] ==> r['actionId']
r['question']['tool'] ==> 'clarification.ask'
normalised :: r['question']['questions'][0] ==> {'id': 'size', 'text': 'Which size?', 'kind': 'single', 'required': True, 'options': ['S', 'M', 'L'], 'default': 'M'}
no approval :: 'approval' in r ==> False
r['summary'] ==> 'This needs your answer before it goes on.'
one Gemini call :: len(reqs) ==> 1
EOF
api ann GET "/api/agent/runs/$RUN_ID"
assert_py "run API: GET of the waiting run shows the question" <<'EOF'
status ==> 200
r['status'] ==> 'awaiting_confirmation'
[(a['tool'], a['status']) for a in r['actions'][1:]] ==> [('clarification.ask', 'awaiting_confirmation')]
the action keeps the question :: r['actions'][1:][0]['output']['questions'] ==> S['run_asked']['question']['questions']
the answer has it :: r['answer']['question'] ==> S['run_asked']['question']
EOF

mock_reset
give_answer bob "$RUN_ID" "{'size': 'L'}"
assert_error 404 not_found "run API: another user cannot answer"
run_bad() { # EXPR LABEL WORDS
    mock_reset
    give_answer ann "$RUN_ID" "$1"
    assert_error 400 bad_request "run API: a bad answer: $2"
    assert_body_contains "$3" "run API: a bad answer: $2: says why"
    assert_calls 0 "run API: a bad answer: $2: no Gemini call"
}
run_bad "{}" "a required question left out" "'size' is required"
run_bad "{'size': 'XXL'}" "not one of the options" "'size' must be one of its options"
run_bad "{'size': 'S', 'extras': ['bow']}" "a choice not offered" "is not one of its options"
run_bad "{'size': 'S', 'who': 'me'}" "an unknown id" "'who' is no question of this call"
mock_reset
api ann POST "/api/agent/answers/$RUN_ID" '{"answers": [1]}'
assert_error 400 bad_request "run API: answers must be an object"
api ann POST "/api/agent/answers/$RUN_ID" '{"size": "L"}'
assert_error 400 bad_request "run API: the body must be {answers}"
api ann GET "/api/agent/runs/$RUN_ID"
assert_py "run API: after the bad answers it still waits" <<'EOF'
r['status'] ==> 'awaiting_confirmation'
r['actions'][1:][0]['status'] ==> 'awaiting_confirmation'
EOF

mock_reset
give_answer ann "$RUN_ID" "{'size': 'L', 'extras': ['card'], 'note': ''}"
assert_py "run API: the answer resumes the run; the model reads it" <<'EOF'
status ==> 200
r['status'] ==> 'completed'
r['runId'] ==> E['RUN_ID']
one Gemini call :: len(reqs) ==> 1
the result the model read :: reqs[0]['body']['contents'][-1]['parts'][0]['functionResponse']['response'] ==> {'result': {'answers': {'size': 'L', 'extras': ['card']}}}
r['summary'] ==> 'Done: {"result":{"answers":{"size":"L","extras":["card"]}}}'
EOF
mock_reset
give_answer ann "$RUN_ID" "{'size': 'S'}"
assert_error 409 conflict "run API: answering twice"
assert_calls 0 "run API: answering twice: no Gemini call"
api ann GET "/api/agent/runs/$RUN_ID"
assert_py "run API: GET of the answered run" <<'EOF'
r['status'] ==> 'completed'
[(a['tool'], a['status']) for a in r['actions'][1:]] ==> [('clarification.ask', 'completed')]
the action's output is the answer :: r['actions'][1:][0]['output'] ==> {'answers': {'size': 'L', 'extras': ['card']}}
EOF
api ann POST "/api/agent/answers/nosuchrun" '{"answers": {}}'
assert_error 404 not_found "run API: no such run"

# Two answers at once: exactly one resumes the run
mock_reset
run_prompt ann "$ASK which shirt again"
RACE_RUN=$(json_get 'j["runId"]')
make_json "$T_TMP/race.json" "{'answers': {'size': 'M'}}"
race_one() {
    curl -s -o "$T_TMP/race.$1" -w '%{http_code}' -X POST \
        -H "Authorization: Bearer ${TOKENS[$ST_N/ann]}" -H 'Content-Type: application/json' \
        --data-binary "@$T_TMP/race.json" "$BASE_URL/api/agent/answers/$RACE_RUN" >"$T_TMP/race.code.$1"
}
race_one 1 &
p1=$!
race_one 2 &
p2=$!
wait "$p1" "$p2"
codes=$(printf '%s\n%s\n' "$(cat "$T_TMP/race.code.1")" "$(cat "$T_TMP/race.code.2")" | sort | tr '\n' ' ')
check "run API: two answers at once: one 200, one 409 ($codes)" test "$codes" = "200 409 "

# The events stream: awaiting_input, and the question in the result
mock_reset
run_prompt ann "$ASK which shirt, streamed" /api/agent/run/stream
save_res stream_asked
assert_py "run API stream: the run waits for input" <<'EOF'
status ==> 200
(lines := [json.loads(l) for l in body.split('\n') if l]) != []
the waiting status :: [l['status'] for l in lines if l['type'] == 'status'][-1] ==> 'awaiting_input'
the result has the question :: lines[-1]['result']['question']['tool'] ==> 'clarification.ask'
lines[-1]['result']['mode'] ==> 'input_required'
EOF
STREAM_RUN=$("$PY" -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().split("\n")[-1])["result"]["runId"])' "$RES_BODY")
mock_reset
make_json "$T_TMP/give.json" "{'answers': {'size': 'S'}}"
api ann POST "/api/agent/answers/$STREAM_RUN" "@$T_TMP/give.json" -H 'Accept: application/x-ndjson'
assert_py "run API stream: the answer, streamed" <<'EOF'
status ==> 200
(lines := [json.loads(l) for l in body.split('\n') if l]) != []
lines[-1]['type'] ==> 'result'
lines[-1]['result']['status'] ==> 'completed'
EOF

stop_stack
stop_mock
finish
