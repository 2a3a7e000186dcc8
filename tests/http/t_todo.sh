#!/bin/bash
# t_todo.sh - the built-in todo plugin (docs/plugins/todo.md) through
# nginx + the responder + the mock Gemini server, and who/where reaching a
# plugin (registry/action.h's action_who):
#
#  - the widget chat: the answer carries a conversation key (agent/
#    convkey.h); the model's todo calls keep a plan under it, so a second
#    turn of the same conversation sees the plan the first one made, and
#    another conversation does not; a forged key is refused; the plan is
#    one file under dataDir/todo;
#  - a direct POST /_jay/actions/todo.show has no conversation: a clear 400;
#  - the run API: a run's todo calls keep the plan of its thread, a later
#    run of the thread changes it, GET /api/agent/threads/:id/todo shows it
#    to the owner only (404 for another user, as the thread itself).
source "$(dirname "${BASH_SOURCE[0]}")/runapi_lib.sh"

SEND=/_jay/actions/geminiAgent.sendMessage
export TOOLS='[]' PAGE='{}'

start_mock
start_stack --mock --auth --limits "$RUN_LIMITS" --yaml "plugins: {expose: [todo]}"

# chat BODY_EXPR SCENARIO [K=V...]: sendMessage with the body the Python
# EXPR gives (r: the last answer), the mock's default scenario set first
# (the responder sends the mock no header of ours).
chat() {
    make_json "$T_TMP/chat.json" "$1"
    shift
    mock_ctl scenario "$@" >/dev/null || bail "cannot set the mock's scenario $*"
    req POST "$SEND" "@$T_TMP/chat.json"
}

PLAN_THEN_DONE=(server-steps 'calls=[["action_todo_plan",{"steps":["pack","ship"]}],["action_todo_complete",{"id":1}]]')
SHOW=(server-call tool=action_todo_show 'args={}')

# ---------------------------------------------------------------------------
# The widget chat

req GET /_jay/actions
assert_py "the todo tools are registered, without side effects" <<'EOF'
status ==> 200
sorted(a['name'] for a in r['actions'] if a['name'].startswith('todo.')) ==> ['todo.add', 'todo.complete', 'todo.plan', 'todo.show', 'todo.update']
[a['sideEffects'] for a in r['actions'] if a['name'].startswith('todo.')] ==> [False] * 5
EOF

mock_reset
chat "{'message': 'make a plan', 'history': []}" "${PLAN_THEN_DONE[@]}"
save_res A1
assert_py "chat turn 1: the model plans and completes a step" <<'EOF'
status ==> 200
the calls ran, no approval :: [c['name'] for c in r['serverCalls']] ==> ['todo.plan', 'todo.complete']
both ok :: [c['ok'] for c in r['serverCalls']] ==> [True, True]
a conversation key :: r['conversation'].startswith('c1.') ==> True
the plan as the model read it :: [p['functionResponse']['response'] for t in r['history'] for p in t['parts'] if 'functionResponse' in p][-1] ==> {'result': {'todo': {'steps': [{'id': 1, 'title': 'pack', 'status': 'done'}, {'id': 2, 'title': 'ship', 'status': 'pending'}]}}}
declared to the model :: 'action_todo_plan' in [d['name'] for t in reqs[0]['body']['tools'] for d in t.get('functionDeclarations', [])] ==> True
its instructions in the prompt :: 'action_todo_plan' in reqs[0]['body']['systemInstruction']['parts'][0]['text'] ==> True
EOF

n=$(find "$ST_DIR/var/todo" -name '*.json' 2>/dev/null | wc -l)
check "the plan is one file under dataDir/todo" test "$n" = 1

mock_reset
chat "{'message': 'how far are we?', 'history': r['history'], 'signatures': r['signatures'], 'conversation': r['conversation']}" "${SHOW[@]}"
assert_py "chat turn 2 of the same conversation sees the plan" <<'EOF'
status ==> 200
[c['name'] for c in r['serverCalls']] ==> ['todo.show']
the same key :: r['conversation'] ==> S['A1']['conversation']
the plan of turn 1 :: 'Done: {"result":{"todo":{"steps":[{"id":1,"title":"pack","status":"done"},{"id":2,"title":"ship","status":"pending"}]}}}' in r['message'] ==> True
EOF

mock_reset
chat "{'message': 'make a plan', 'history': []}" "${SHOW[@]}"
assert_py "another conversation has no plan" <<'EOF'
status ==> 200
a key of its own :: r['conversation'] != S['A1']['conversation'] ==> True
an empty plan :: 'Done: {"result":{"todo":{"steps":[]}}}' in r['message'] ==> True
EOF

# a key the server did not give (A's id with its MAC cut off; another id
# under A's MAC) is refused before Gemini is asked
mock_reset
MJ_BODY=$SAVED_DIR/A1.json chat "{'message': 'hi', 'history': [], 'conversation': r['conversation'].rsplit('.', 1)[0]}" "${SHOW[@]}"
assert_error 400 bad_request "a conversation key without its MAC"
MJ_BODY=$SAVED_DIR/A1.json chat "{'message': 'hi', 'history': [], 'conversation': 'c1.' + '0' * 32 + '.' + r['conversation'].rsplit('.', 1)[1]}" "${SHOW[@]}"
assert_error 400 bad_request "another id under a real MAC"
check "no forged key reached Gemini" test "$(mock_count)" = 0
mock_ctl scenario --clear >/dev/null

req POST /_jay/actions/todo.show '{}'
assert_error 400 bad_request "a direct call has no conversation"
assert_body_contains "conversation" "... and says so"

# ---------------------------------------------------------------------------
# The run API: the thread is the conversation

# the scenario is the mock's default: a marker in the first prompt would
# hold for every later run of the thread
mock_reset
mock_ctl scenario server-call tool=action_todo_plan 'args={"steps":["draft","review"]}' >/dev/null
run_as ann "plan it"
save_res R1
assert_py "a run plans in its thread" <<'EOF'
status ==> 200
r['status'] ==> 'completed'
'draft' in r['summary'] ==> True
EOF
TID=$(json_get 'j["threadId"]')

api ann GET "/api/agent/threads/$TID/todo"
assert_py "GET threads/:id/todo: the owner sees the plan" <<'EOF'
status ==> 200
r ==> {'todo': {'steps': [{'id': 1, 'title': 'draft', 'status': 'pending'}, {'id': 2, 'title': 'review', 'status': 'pending'}]}}
EOF

mock_ctl scenario server-call tool=action_todo_complete 'args={"id":2}' >/dev/null
run_as ann "done" "{'threadId': '$TID'}"
assert_status 200 "a later run of the thread"
api ann GET "/api/agent/threads/$TID/todo"
assert_py "... changed the same plan" <<'EOF'
status ==> 200
[s['status'] for s in r['todo']['steps']] ==> ['pending', 'done']
EOF

api bob GET "/api/agent/threads/$TID/todo"
assert_error 404 not_found "another user's thread: 404"
api ann GET "/api/agent/threads/AAAAAAAAAAAAAAAAAAAAAA/todo"
assert_error 404 not_found "no such thread: 404"
api ann GET "/api/agent/threads/$TID/other"
assert_error 404 not_found "no other route below a thread"
req GET "/api/agent/threads/$TID/todo"
assert_status 401 "without an identity: 401"

# a new run (a new thread) starts with no plan
mock_ctl scenario server-call tool=action_todo_show 'args={}' >/dev/null
run_as ann "show"
assert_py "a new thread has no plan" <<'EOF'
status ==> 200
'"steps":[]' in r['summary'] ==> True
EOF

# ---------------------------------------------------------------------------
# Without the plugin exposed, the route says so

mock_ctl scenario --clear >/dev/null
stop_stack
start_stack --mock --auth --limits "$RUN_LIMITS"
run_as ann "hello"
TID=$(json_get 'j["threadId"]')
api ann GET "/api/agent/threads/$TID/todo"
assert_error 404 not_found "no todo plugin: 404"

finish
