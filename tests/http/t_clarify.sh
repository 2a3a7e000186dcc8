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
#  - POST /_jay/actions/clarification.ask: nobody to ask there, a 400.
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
bad_answer "{'size': 'S', 'note': 5}" "a number for text" "'note' must be a string"
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

stop_stack
stop_mock
finish
