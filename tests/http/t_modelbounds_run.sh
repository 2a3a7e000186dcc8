#!/bin/bash
# t_modelbounds_run.sh - the model-bounds case on the run API: a server action's
# call whose arguments nest 40 deep is not run; the model reads why, the
# run answers, and the thread goes on. t_modelbounds.sh covers the chat.
source "$(dirname "${BASH_SOURCE[0]}")/runapi_lib.sh"

start_mock
start_stack --mock --auth --limits "$RUN_LIMITS"

DEEP=1
for _ in $(seq 1 40); do DEEP="{\"a\":$DEEP}"; done

mock_reset
run_as ann "[[mock:server-call tool=action_shop_searchProducts args='$DEEP']] search"
save_res run1
T1=$(json_get 'j["threadId"]')
export T1
assert_py "run: a call 40 deep" <<'EOF'
status ==> 200
the model was asked again :: len(reqs) ==> 2
the model read why :: 'nest deeper than' in json.dumps(fresp(reqs[1])[0]['response']) ==> True
it kept {} for the arguments :: fcalls(reqs[1]['body']['contents'][1])[0]['args'] ==> {}
the answer quotes the error :: r['summary'].startswith('Done: {"error"') ==> True
EOF
api ann GET "/api/agent/runs/$(json_get 'j["runId"]')"
assert_py "run: its record" <<'EOF'
status ==> 200
EOF

mock_reset
run_as ann "and again" "{'threadId': E['T1']}"
assert_py "run: the thread goes on" <<'EOF'
status ==> 200
r['threadId'] ==> E['T1']
EOF

finish
