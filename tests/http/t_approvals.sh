#!/bin/bash
# t_approvals.sh - the run API's policy step, approvals and audit trail
# (docs/http-api.md) through nginx + the responder + the mock
# Gemini server: each trust level (supervised, delegated with the site's
# allow rules, autonomous), the kill switch (policy.sideEffects and
# AGENT_SIDE_EFFECTS_ENABLED), invalid arguments failing fast, approve_once
# / reject / approve_and_always_allow resuming the run to its answer, 20
# concurrent approvals executing once, an expired approval, a streamed
# decision, and the audit rows (append only) in the SQLite store.
#
# The side effect is the shop's addReview (a line in <dataDir>/
# shop-reviews.jsonl); the mock calls it when the prompt says
# [[mock:page-call tool=action_shop_addReview args='...']] and then answers
# `Done: <the function responses>`. Every stack shares one dataDir, so the
# audit trail of the whole test is in one store.
source "$(dirname "${BASH_SOURCE[0]}")/runapi_lib.sh"

VAR=$T_TMP/var
mkdir -p "$VAR"
export REVIEWS_FILE=$VAR/shop-reviews.jsonl STORE_DB=$VAR/agent.db

# review RUN_AS_USER TEXT [PRODUCT [RATING]]: a run whose model adds a review.
review() {
    run_as "$1" "$(review_marker "{\"productId\":\"${3:-p004}\",\"rating\":${4:-5},\"text\":\"$2\"}") please review it"
}

# reviews_with TEXT: how many reviews hold exactly TEXT.
reviews_with() {
    [ -e "$REVIEWS_FILE" ] || { echo 0; return; }
    "$PY" -c 'import json,sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["text"] == sys.argv[2]))' \
        "$REVIEWS_FILE" "$1"
}

# run_state RUN_ID [USER]: GET the run (as ann unless USER is given).
run_state() {
    api "${2:-ann}" GET "/api/agent/runs/$1"
}

start_mock
start_stack --mock --auth --limits "$RUN_LIMITS" --data-dir "$VAR" --rate 100000r/s --burst 40 \
    --yaml "policy:
  allow:
    - {action: shop.addReview, arg: productId, pattern: 'p01*'}"
# the store is made on first use; the trust levels are written while the
# responder is stopped (see set_trust)
api ann GET /api/agent/threads
assert_status 200 "the store is made"
stop_stack
set_trust otto autonomous
set_trust dana delegated
set_trust dave delegated
start_stack --keep-dir --mock --data-dir "$VAR" --rate 100000r/s --burst 40

# ---------------------------------------------------------------------------
# Policy: each trust level

# supervised (ann, the default): the side effect waits for approval
mock_reset
before=$(reviews_count)
review ann "Supervised"
save_res sup
SUP_RUN=$(json_get 'j["runId"]')
export SUP_RUN
assert_json_headers "supervised run"
assert_py "supervised: approval_required" <<'EOF'
status ==> 200
the contract's keys, with tool, toolArgs and approval :: sorted(r) ==> sorted(E['ANSWER_KEYS'].split() + ['tool', 'toolArgs', 'approval'])
r['ok'] ==> True
r['status'] ==> 'awaiting_confirmation'
r['mode'] ==> 'approval_required'
r['tool'] ==> 'shop.addReview'
r['toolArgs'] ==> {'productId': 'p004', 'rating': 5, 'text': 'Supervised'}
the action's id :: isinstance(r['actionId'], str) and len(r['actionId']) >= 8
approval is {id, tool, reason, preview} :: sorted(r['approval']) ==> ['id', 'preview', 'reason', 'tool']
isinstance(r['approval']['id'], str) and len(r['approval']['id']) >= 8
r['approval']['id'] not in (r['runId'], r['actionId'])
r['approval']['tool'] ==> 'shop.addReview'
a reason in words :: isinstance(r['approval']['reason'], str) and len(r['approval']['reason']) > 10
the preview shows the tool and its arguments :: [w for w in ('addReview', 'p004', 'Supervised') if w not in r['approval']['preview']] ==> []
isinstance(r['summary'], str) and r['summary'] != ''
Gemini was asked once: the run stops for the user :: len(reqs) ==> 1
r['usage']['geminiCalls'] ==> 1
EOF
check "supervised: no review written" test "$(reviews_count)" = "$before"
run_state "$SUP_RUN"
assert_py "supervised: the run and its action wait" <<'EOF'
status ==> 200
r['status'] ==> 'awaiting_confirmation'
the run's reply stays planned while it waits :: [(a['tool'], a['status']) for a in r['actions'][:1]] ==> [('reply', 'planned')]
[(a['id'], a['tool'], a['status']) for a in r['actions'][1:]] ==> [(S['sup']['actionId'], 'shop.addReview', 'awaiting_confirmation')]
r['actions'][1:][0]['args'] ==> {'productId': 'p004', 'rating': 5, 'text': 'Supervised'}
EOF
api ann GET '/api/agent/approvals?status=pending'
assert_py "supervised: the approval is pending" <<'EOF'
[(a['runId'], a['actionId'], a['status']) for a in r['approvals'] if a['id'] == S['sup']['approval']['id']] ==> [(S['sup']['runId'], S['sup']['actionId'], 'pending')]
EOF

# autonomous (otto): it runs at once
mock_reset
before=$(reviews_count)
review otto "Autonomous"
save_res auto
AUTO_RUN=$(json_get 'j["runId"]')
export AUTO_RUN
assert_py "autonomous: runs at once" <<'EOF'
status ==> 200
sorted(r) ==> sorted(E['ANSWER_KEYS'].split() + ['tool', 'toolArgs', 'output'])
r['status'] ==> 'completed'
r['mode'] ==> 'tool_call'
r['tool'] ==> 'shop.addReview'
r['toolArgs'] ==> {'productId': 'p004', 'rating': 5, 'text': 'Autonomous'}
the action's output :: (r['output']['ok'], r['output']['review']['text'], r['output']['review']['productId']) ==> (True, 'Autonomous', 'p004')
the model's second step is the summary :: r['summary'].startswith('Done: ') and '"Autonomous"' in r['summary']
the result went back as a functionResponse :: fresp(reqs[1]) ==> [{'name': 'action_shop_addReview', 'id': fcalls(reqs[1]['body']['contents'][-2])[0]['id'], 'response': {'result': r['output']}}]
the instruction names the trust level :: 'Trust level: autonomous' in reqs[0]['body']['systemInstruction']['parts'][0]['text']
EOF
check "autonomous: one review written" test "$(reviews_with Autonomous)" = 1
run_state "$AUTO_RUN" otto
assert_py "autonomous: run and action completed" <<'EOF'
r['status'] ==> 'completed'
[a['status'] for a in r['actions'][1:]] ==> ['completed']
r['actions'][1:][0]['output'] ==> S['auto']['output']
EOF

# delegated (dana) with the site's rule {shop.addReview, productId, p01*}
mock_reset
review dana "Delegated match" p012
save_res del_match
DEL_MATCH_RUN=$(json_get 'j["runId"]')
export DEL_MATCH_RUN
assert_py "delegated, the site's rule matches: runs" <<'EOF'
status ==> 200
r['status'] ==> 'completed'
r['mode'] ==> 'tool_call'
r['output']['review']['productId'] ==> 'p012'
'approval' in r ==> False
'Trust level: delegated' in reqs[0]['body']['systemInstruction']['parts'][0]['text']
EOF
check "delegated, rule matches: the review is written" test "$(reviews_with 'Delegated match')" = 1
mock_reset
review dana "Delegated no match" p004
save_res del_nomatch
DEL_NOMATCH_RUN=$(json_get 'j["runId"]')
export DEL_NOMATCH_RUN
assert_py "delegated, no rule matches: approval" <<'EOF'
status ==> 200
r['status'] ==> 'awaiting_confirmation'
r['mode'] ==> 'approval_required'
r['approval']['tool'] ==> 'shop.addReview'
r['approval']['reason'] != S['sup']['approval']['reason']
len(reqs) ==> 1
EOF
check "delegated, no rule matches: nothing written" test "$(reviews_with 'Delegated no match')" = 0

# an action without side effects runs for a supervised user, unaudited
mock_reset
run_as ann "$(call_marker action_shop_searchProducts '{"query":"hub"}') find"
save_res search
SEARCH_RUN=$(json_get 'j["runId"]')
export SEARCH_RUN
assert_py "supervised, no side effects: runs" <<'EOF'
r['status'] ==> 'completed'
r['mode'] ==> 'tool_call'
r['tool'] ==> 'shop.searchProducts'
EOF

# ---------------------------------------------------------------------------
# Invalid arguments of a side-effect action fail fast

mock_reset
before=$(reviews_count)
review otto "x" p004 9
save_res invalid
INVALID_RUN=$(json_get 'j["runId"]')
export INVALID_RUN
assert_py "invalid arguments: failed fast, the model told" <<'EOF'
status ==> 200
the run goes on to the model's answer :: r['status'] ==> 'completed'
len(reqs) ==> 2
(fr := fresp(reqs[1])) != []
the model got an error :: [f['name'] for f in fr] ==> ['action_shop_addReview']
sorted(fr[0]['response']) ==> ['error']
it says invalid arguments :: 'invalid arguments' in fr[0]['response']['error']
it names the argument :: 'rating' in fr[0]['response']['error']
the answer quotes it :: 'invalid arguments' in r['summary']
EOF
check "invalid arguments: nothing written (even for an autonomous user)" test "$(reviews_count)" = "$before"
run_state "$INVALID_RUN" otto
assert_py "invalid arguments: the action is failed with the error" <<'EOF'
[a['status'] for a in r['actions'][1:]] ==> ['failed']
'invalid arguments' in r['actions'][1:][0]['error'] and 'rating' in r['actions'][1:][0]['error']
EOF

# ---------------------------------------------------------------------------
# Approvals

# approve_once: the action runs, the run resumes to the model's answer
SUP_APPR=$(pyjson 'j["approval"]["id"]' "$SAVED_DIR/sup.json")
mock_reset
api ann POST "/api/agent/approvals/$SUP_APPR" '{"decision":"approve_once"}'
save_res approved
assert_json_headers "approve_once"
assert_py "approve_once: the resumed run's answer" <<'EOF'
status ==> 200
sorted(r) ==> sorted(E['ANSWER_KEYS'].split() + ['tool', 'toolArgs', 'output'])
the same run :: (r['runId'], r['threadId'], r['actionId']) ==> (S['sup']['runId'], S['sup']['threadId'], S['sup']['actionId'])
r['status'] ==> 'completed'
r['mode'] ==> 'tool_call'
r['tool'] ==> 'shop.addReview'
r['output']['review']['text'] ==> 'Supervised'
the summary is the mock's second step :: r['summary'] ==> 'Done: ' + json.dumps({'result': r['output']}, separators=(',', ':'))
Gemini resumed once :: len(reqs) ==> 1
the conversation resumed: prompt, the call, its response :: [c['role'] for c in reqs[0]['body']['contents']] ==> ['user', 'model', 'user']
fcalls(reqs[0]['body']['contents'][1])[0]['args'] ==> {'productId': 'p004', 'rating': 5, 'text': 'Supervised'}
the result as a functionResponse :: fresp(reqs[0])[0]['response'] ==> {'result': r['output']}
the response answers the call's id :: fresp(reqs[0])[0].get('id') ==> fcalls(reqs[0]['body']['contents'][1])[0].get('id')
EOF
check "approve_once: the review is written" test "$(reviews_with Supervised)" = 1
run_state "$SUP_RUN"
assert_py "approve_once: run and action completed" <<'EOF'
r['status'] ==> 'completed'
[a['status'] for a in r['actions'][1:]] ==> ['completed']
the reply completed after the approval :: [(a['tool'], a['status']) for a in r['actions'][:1]] ==> [('reply', 'completed')]
r['answer'] ==> S['approved']
EOF
api ann GET "/api/agent/threads/$(pyjson 'j["threadId"]' "$SAVED_DIR/sup.json")"
assert_py "approve_once: the answer is the thread's assistant message" <<'EOF'
[m['role'] for m in r['messages']] ==> ['user', 'assistant']
r['messages'][1]['text'] ==> S['approved']['summary']
EOF
api ann GET '/api/agent/approvals?status=pending'
assert_py "approve_once: no longer pending" <<'EOF'
[a for a in r['approvals'] if a['id'] == S['sup']['approval']['id']] ==> []
EOF
mock_reset
api ann POST "/api/agent/approvals/$SUP_APPR" '{"decision":"approve_once"}'
assert_error 409 conflict "approve_once again"
api ann POST "/api/agent/approvals/$SUP_APPR" '{"decision":"reject"}'
assert_error 409 conflict "reject after approval"
assert_py "a decided approval runs nothing" <<'EOF'
len(reqs) ==> 0
EOF
check "... and writes nothing" test "$(reviews_with Supervised)" = 1
api ann POST "/api/agent/approvals/$SUP_APPR" '{"decision":"maybe"}'
assert_error 400 bad_request "an unknown decision"
api ann POST "/api/agent/approvals/$SUP_APPR" '{}'
assert_error 400 bad_request "no decision"

# reject: the action is rejected, the model hears the user declined
mock_reset
review ann "Rejected"
save_res rej
REJ_RUN=$(json_get 'j["runId"]')
export REJ_RUN
REJ_APPR=$(json_get 'j["approval"]["id"]')
mock_reset
api ann POST "/api/agent/approvals/$REJ_APPR" '{"decision":"reject","feedback":"not now"}'
save_res rejected
assert_py "reject: the resumed run's answer" <<'EOF'
status ==> 200
(r['runId'], r['threadId']) ==> (S['rej']['runId'], S['rej']['threadId'])
r['status'] ==> 'completed'
'output' in r ==> False
len(reqs) ==> 1
(fr := fresp(reqs[0])) != []
the model is told the user declined :: 'declined' in fr[0]['response'].get('error', '')
... with the feedback :: 'not now' in fr[0]['response']['error']
the answer says declined :: 'declined' in r['summary']
EOF
check "reject: nothing written" test "$(reviews_with Rejected)" = 0
run_state "$REJ_RUN"
assert_py "reject: the action is rejected, the run completed" <<'EOF'
r['status'] ==> 'completed'
[a['status'] for a in r['actions'][1:]] ==> ['rejected']
'declined' in r['actions'][1:][0]['error']
EOF

# approve_and_always_allow (dave, delegated): his rule is added, and the
# same run again needs no approval
mock_reset
review dave "Always"
save_res always1
ALWAYS_RUN=$(json_get 'j["runId"]')
export ALWAYS_RUN
ALWAYS_APPR=$(json_get 'j["approval"]["id"]')
assert_json 'j["status"]' awaiting_confirmation "delegated dave: p004 needs approval first"
api dave POST "/api/agent/approvals/$ALWAYS_APPR" '{"decision":"approve_and_always_allow"}'
assert_py "approve_and_always_allow: the resumed answer" <<'EOF'
status ==> 200
r['status'] ==> 'completed'
r['mode'] ==> 'tool_call'
r['output']['review']['text'] ==> 'Always'
EOF
save_sql dave "SELECT trust, allow FROM users WHERE id = 'dave'"
assert_py "approve_and_always_allow: dave's rule" <<'EOF'
len(S['dave']) ==> 1
S['dave'][0]['trust'] ==> 'delegated'
the rule allows the action :: json.loads(S['dave'][0]['allow']) ==> [{'action': 'shop.addReview'}]
EOF
mock_reset
review dave "Always"
assert_py "approve_and_always_allow: the same run again runs at once" <<'EOF'
status ==> 200
r['status'] ==> 'completed'
r['mode'] ==> 'tool_call'
'approval' in r ==> False
len(reqs) ==> 2
EOF
check "approve_and_always_allow: two reviews written" test "$(reviews_with Always)" = 2
mock_reset
review dana "Not dave" p004
assert_json 'j["status"]' awaiting_confirmation "dave's rule is his: dana still needs approval"

# 20 concurrent approvals of one action: one executes, 19 get 409
mock_reset
review ann "Twenty"
save_res twenty
TWENTY_RUN=$(json_get 'j["runId"]')
export TWENTY_RUN
TWENTY_APPR=$(json_get 'j["approval"]["id"]')
token_for ann
mock_reset
mkdir -p "$T_TMP/twenty"
args=()
for i in $(seq 1 20); do
    args+=(-o "$T_TMP/twenty/$i.body" "$BASE_URL/api/agent/approvals/$TWENTY_APPR")
done
curl -sS --parallel --parallel-immediate --parallel-max 20 --max-time 20 \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    -d '{"decision":"approve_once"}' -w '%{http_code}\n' "${args[@]}" \
    >"$T_TMP/twenty/codes" 2>"$T_TMP/twenty/err"
codes=$(sort "$T_TMP/twenty/codes" | uniq -c | awk '{printf "%s×%s ", $1, $2}')
echo "# 20 concurrent approvals: $codes"
check "20 concurrent approvals: exactly one 200" test "$(grep -c '^200$' "$T_TMP/twenty/codes")" = 1
check "... and 19 × 409" test "$(grep -c '^409$' "$T_TMP/twenty/codes")" = 19
check "... the 409s are conflict envelopes" test "$(grep -l '"code":"conflict"' "$T_TMP"/twenty/*.body | wc -l)" = 19
check "... the 200 is the completed run" test "$(grep -l '"status":"completed"' "$T_TMP"/twenty/*.body | wc -l)" = 1
check "... exactly one review written" test "$(reviews_with Twenty)" = 1
assert_py "20 concurrent approvals: Gemini resumed once" <<'EOF'
len(reqs) ==> 1
EOF

# a streamed decision: NDJSON, ending in the result
mock_reset
review ann "Streamed decision"
SD_RUN=$(json_get 'j["runId"]')
export SD_RUN
SD_APPR=$(json_get 'j["approval"]["id"]')
mock_reset
api ann POST "/api/agent/approvals/$SD_APPR" '{"decision":"approve_once"}' -H 'Accept: application/x-ndjson'
assert_py "a streamed decision" <<'EOF'
status ==> 200
hdr('content-type') ==> 'application/x-ndjson; charset=utf-8'
(lines := [json.loads(l) for l in body.split('\n') if l]) != []
the first line is a status line with the thread (seed §4): the approved action runs :: lines[0] ==> {'type': 'status', 'status': 'executing', 'tool': 'shop.addReview', 'threadId': lines[-1]['result']['threadId']}
then the model plans again :: [l for l in lines if l['type'] == 'status' and l['status'] == 'planning'] != []
the last line is the result :: lines[-1]['type'] ==> 'result'
no error line :: [l for l in lines if l['type'] == 'error'] ==> []
(res := lines[-1]['result']) != None
res['runId'] ==> E['SD_RUN']
res['status'] ==> 'completed'
res['mode'] ==> 'tool_call'
res['output']['review']['text'] ==> 'Streamed decision'
the deltas make the summary :: ''.join(l['delta'] for l in lines if l['type'] == 'delta') ==> res['summary']
Gemini was streamed :: [q['path'].endswith(':streamGenerateContent') for q in reqs] ==> [True]
EOF
check "a streamed decision: the review is written" test "$(reviews_with 'Streamed decision')" = 1

# another user cannot decide ann's approval
mock_reset
review ann "Not yours"
NY_APPR=$(json_get 'j["approval"]["id"]')
api dave POST "/api/agent/approvals/$NY_APPR" '{"decision":"approve_once"}'
assert_error 404 not_found "dave decides ann's approval"
api ann POST "/api/agent/approvals/AAAAAAAAAAAAAAAAAAAAAA" '{"decision":"approve_once"}'
assert_error 404 not_found "an approval that does not exist"
check "... nothing written" test "$(reviews_with 'Not yours')" = 0

stop_stack

# ---------------------------------------------------------------------------
# The kill switch: policy.sideEffects: false, then the environment

for how in config env; do
    if [ "$how" = config ]; then
        start_stack --mock --auth --limits "$RUN_LIMITS" --data-dir "$VAR" --yaml "policy: {sideEffects: false}"
    else
        start_stack --mock --auth --limits "$RUN_LIMITS" --data-dir "$VAR" --env AGENT_SIDE_EFFECTS_ENABLED=false
    fi
    mock_reset
    before=$(reviews_count)
    review otto "Killed $how"
    save_res "killed_$how"
    KILL_RUN=$(json_get 'j["runId"]')
    echo "$KILL_RUN" >>"$T_TMP/killed_runs"
    assert_py "kill switch ($how): denied for an autonomous user" <<'EOF'
status ==> 200
r['status'] ==> 'completed'
'approval' in r ==> False
len(reqs) ==> 2
(fr := fresp(reqs[1])) != []
the model is told :: [f['name'] for f in fr] ==> ['action_shop_addReview']
... that it was denied, and why :: 'denied' in fr[0]['response'].get('error', '') and 'switched off' in fr[0]['response']['error']
the answer quotes the denial :: 'denied' in r['summary']
EOF
    check "kill switch ($how): nothing written" test "$(reviews_count)" = "$before"
    run_state "$KILL_RUN" otto
    assert_py "kill switch ($how): the action is rejected" <<'EOF'
r['status'] ==> 'completed'
[a['status'] for a in r['actions'][1:]] ==> ['rejected']
'denied' in r['actions'][1:][0]['error']
EOF
    mock_reset
    run_as ann "$(call_marker action_shop_searchProducts '{"query":"hub"}') find"
    assert_py "kill switch ($how): actions without side effects still run" <<'EOF'
r['status'] ==> 'completed'
r['tool'] ==> 'shop.searchProducts'
'products' in r['output']
EOF
    stop_stack
done

# ---------------------------------------------------------------------------
# An approval past policy.approvalTtlMs cannot be decided

start_stack --mock --auth --limits "$RUN_LIMITS" --data-dir "$VAR" --yaml "policy: {approvalTtlMs: 1000}"
mock_reset
review ann "Too late"
LATE_RUN=$(json_get 'j["runId"]')
export LATE_RUN
LATE_APPR=$(json_get 'j["approval"]["id"]')
assert_json 'j["status"]' awaiting_confirmation "a 1 s approval"
api ann GET '/api/agent/approvals?status=pending'
assert_py "within its second it is pending" <<'EOF'
[a['id'] for a in r['approvals'] if a['runId'] == E['LATE_RUN']] != []
[a['expiresAt'] - a['createdAt'] for a in r['approvals'] if a['runId'] == E['LATE_RUN']] ==> [1000]
EOF
sleep 1.2
mock_reset
api ann POST "/api/agent/approvals/$LATE_APPR" '{"decision":"approve_once"}'
assert_error 409 conflict "deciding an expired approval"
assert_json 'j["error"]["message"]' "approval $LATE_APPR has expired" "... it says expired"
api ann GET '/api/agent/approvals?status=pending'
assert_py "an expired approval is not pending" <<'EOF'
[a for a in r['approvals'] if a['runId'] == E['LATE_RUN']] ==> []
nothing was resumed :: len(reqs) ==> 0
EOF
check "an expired approval: nothing written" test "$(reviews_with 'Too late')" = 0
stop_stack

# ---------------------------------------------------------------------------
# The audit trail

KILL_RUNS=$(tr '\n' ' ' <"$T_TMP/killed_runs")
export KILL_RUNS
save_sql audit "SELECT * FROM audit ORDER BY id"
assert_py "audit rows" <<'EOF'
(A := S['audit']) != None
(ev := lambda run: [a['event'] for a in A if a['run_id'] == run]) and True
(rows := lambda run: [a for a in A if a['run_id'] == run]) and True
every row has user, run, action, tool and a 64-hex args hash :: [a['id'] for a in A if not (a['user_id'] and a['run_id'] and a['action_id'] and a['tool'] == 'shop.addReview' and re.fullmatch('[0-9a-f]{64}', a['args_hash'] or ''))] ==> []
every row has its time :: [a['id'] for a in A if not (isinstance(a['at'], int) and a['at'] > 0)] ==> []
approve_once: requested, approved, executed :: ev(S['sup']['runId']) ==> ['approval_requested', 'approved', 'executed']
... for ann, for the action :: sorted({(a['user_id'], a['action_id']) for a in rows(S['sup']['runId'])}) ==> [('ann', S['sup']['actionId'])]
... one args hash for the one action :: len({a['args_hash'] for a in rows(S['sup']['runId'])}) ==> 1
executed's outcome :: rows(S['sup']['runId'])[2]['outcome'] ==> 'ok'
reject: requested, rejected :: ev(S['rej']['runId']) ==> ['approval_requested', 'rejected']
autonomous: executed only :: ev(S['auto']['runId']) ==> ['executed']
... by otto :: [a['user_id'] for a in rows(S['auto']['runId'])] ==> ['otto']
delegated with a matching rule: executed only :: ev(E['DEL_MATCH_RUN']) ==> ['executed']
delegated without: requested :: ev(E['DEL_NOMATCH_RUN']) ==> ['approval_requested']
always allow, then again :: ev(S['always1']['runId']) ==> ['approval_requested', 'approved', 'executed']
20 concurrent approvals: one approved, one executed :: ev(S['twenty']['runId']) ==> ['approval_requested', 'approved', 'executed']
invalid arguments: failed :: ev(E['INVALID_RUN']) ==> ['failed']
... its outcome says why :: 'invalid arguments' in rows(E['INVALID_RUN'])[0]['outcome']
the kill switch: policy_denied, each time :: [ev(k) for k in E['KILL_RUNS'].split()] ==> [['policy_denied'], ['policy_denied']]
... its outcome says why :: [('switched off' in rows(k)[0]['outcome']) for k in E['KILL_RUNS'].split()] ==> [True, True]
an expired approval: only requested :: ev(E['LATE_RUN']) ==> ['approval_requested']
an action without side effects is not audited :: ev(E['SEARCH_RUN']) ==> []
other arguments, another hash :: rows(S['sup']['runId'])[0]['args_hash'] != rows(S['rej']['runId'])[0]['args_hash']
the same arguments, the same hash :: rows(S['always1']['runId'])[0]['args_hash'] ==> [a for a in A if a['event'] == 'executed' and a['run_id'] not in (S['always1']['runId'],) and a['user_id'] == 'dave'][0]['args_hash']
EOF

# append only: a raw UPDATE or DELETE fails, and changes nothing
"$PY" - "$STORE_DB" >"$T_TMP/tamper.out" 2>&1 <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=10)
before = c.execute("SELECT * FROM audit ORDER BY id").fetchall()
for q in ("UPDATE audit SET outcome = 'tampered'",
          "UPDATE audit SET event = 'approved' WHERE id = (SELECT max(id) FROM audit WHERE event = 'rejected')",
          "DELETE FROM audit", "DELETE FROM audit WHERE id = (SELECT max(id) FROM audit)"):
    try:
        with c:
            c.execute(q)
        print("ACCEPTED:", q)
    except sqlite3.DatabaseError as e:
        print("refused:", q, "-", e)
after = c.execute("SELECT * FROM audit ORDER BY id").fetchall()
print("unchanged" if before == after and len(after) > 0 else "CHANGED")
PY
sed 's/^/# /' "$T_TMP/tamper.out"
check "audit: UPDATE and DELETE are refused" bash -c '! grep -q ACCEPTED "$1" && [ "$(grep -c "^refused:.*append only" "$1")" = 4 ]' _ "$T_TMP/tamper.out"
check "audit: the rows are unchanged" grep -qx unchanged "$T_TMP/tamper.out"

finish
