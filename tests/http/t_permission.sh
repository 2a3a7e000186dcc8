#!/bin/bash
# t_permission.sh - the permission engine wired into the faces
# (plugins.config.permission in agent.yaml, docs/http-api.md "Permission policy")
# through nginx + the responder + the mock Gemini server:
#
#  - the chat: a deny entry by name keeps the shop's addReview from running
#    (the model reads why, nothing is written); a deny entry beats a
#    read-only action too; an argument allow entry (productId p00*) runs
#    addReview for p004 without asking and asks for p123 (a denied call
#    is in serverCalls with ok: false, as a switched-off one is); a signature glob
#    denies one call of an otherwise allowed tool; a policy that denies
#    since the card was shown refuses the approval (SIGHUP), nothing runs;
#  - `check` prints the policy's default and list sizes, and names a
#    broken policy with agent.yaml's path and line (and serve refuses it);
#  - the run API: a deny entry beats an autonomous user's trust, and an
#    allow entry acts as a site allow rule for a delegated user; its
#    prompt goes through the plugins' enrichment (the out-of-tree hello).
source "$(dirname "${BASH_SOURCE[0]}")/runapi_lib.sh"

VAR=$T_TMP/var
mkdir -p "$VAR"
export REVIEWS_FILE=$VAR/shop-reviews.jsonl STORE_DB=$VAR/agent.db
SEND=/_jay/actions/geminiAgent.sendMessage
SUBMIT=/_jay/actions/geminiAgent.submitToolResults

# chat MESSAGE: sendMessage with an empty page and history.
chat() {
    "$PY" -c 'import json, sys; print(json.dumps({"message": sys.argv[1], "history": [], "toolDefinitions": [], "pageState": {}}))' \
        "$1" >"$T_TMP/chat.json" || bail "chat: cannot build the body"
    req POST "$SEND" "@$T_TMP/chat.json"
}

# review_call PRODUCT RATING: the mock marker of a chat whose model adds a
# review of PRODUCT.
review_call() {
    printf "[[mock:server-call tool=action_shop_addReview args='{\"productId\":\"%s\",\"rating\":%s,\"text\":\"t\"}']] review it" "$1" "$2"
}

# assert_reviews N LABEL
assert_reviews() {
    local got
    got=$(reviews_count)
    if [ "$got" = "$1" ]; then ok "$2"; else not_ok "$2" "$got review line(s), want $1"; fi
}

start_mock

# ---------------------------------------------------------------------------
# The chat: deny by name, also a read-only action

start_stack --mock --workers 1 --data-dir "$VAR" --limits "$RUN_LIMITS" --rate 100000r/s --burst 100 \
    --yaml "plugins: {config: {permission: {default: ask, deny: [shop.addReview, shop.searchProducts]}}}"
mock_reset
chat "$(review_call p004 5)"
assert_py "deny by name: addReview is not run, the model reads why" <<'EOF'
status ==> 200
r['type'] ==> 'response'
not run, reported so :: [(c['name'], c['ok']) for c in r['serverCalls']] ==> [('shop.addReview', False)]
the model was told :: 'permission policy denies' in reqs[-1]['body']['contents'][2]['parts'][0]['functionResponse']['response']['error'] ==> True
... and which entry :: 'deny entry' in reqs[-1]['body']['contents'][2]['parts'][0]['functionResponse']['response']['error'] ==> True
two Gemini calls :: len(reqs) ==> 2
EOF
assert_reviews 0 "deny by name: no review"
mock_reset
chat "[[mock:server-call tool=action_shop_searchProducts args='{\"query\":\"hub\"}']] find a hub"
assert_py "deny by name: a read-only action is denied too" <<'EOF'
status ==> 200
not run, reported so :: [(c['name'], c['ok']) for c in r['serverCalls']] ==> [('shop.searchProducts', False)]
'permission policy denies' in reqs[-1]['body']['contents'][2]['parts'][0]['functionResponse']['response']['error'] ==> True
EOF

ga_run check --config "$GA_CONF"
check "check: the policy's default and list sizes" \
    bash -c '[ "$1" -eq 0 ] && grep -qF "plugins.config.permission: default ask, 0 allow entries, 2 deny entries" <<<"$2"' _ "$rc" "$out"
stop_stack

# ---------------------------------------------------------------------------
# The chat: an argument allow entry, a signature deny glob

start_stack --mock --workers 1 --data-dir "$VAR" --limits "$RUN_LIMITS" --rate 100000r/s --burst 100 \
    --yaml "plugins:
  config:
    permission:
      default: ask
      allow: [{tool: shop.addReview, arg: productId, pattern: 'p00*'}]
      deny: [{signature: 'shop.addReview(*rating=1,*)'}]"
mock_reset
chat "$(review_call p004 5)"
assert_py "allow p00*: p004 runs without asking" <<'EOF'
status ==> 200
r['type'] ==> 'response'
ran at once :: [(c['name'], c['ok']) for c in r['serverCalls']] ==> [('shop.addReview', True)]
EOF
assert_reviews 1 "allow p00*: the review is written"
mock_reset
chat "$(review_call p123 5)"
save_res ask
assert_py "allow p00*: p123 asks the visitor" <<'EOF'
status ==> 200
r['type'] ==> 'approval-required'
r['approval']['tool'] ==> 'shop.addReview'
r['approval']['args']['productId'] ==> 'p123'
nothing ran :: r['serverCalls'] ==> []
EOF
mock_reset
chat "$(review_call p004 1)"
assert_py "a signature deny glob beats the allow entry" <<'EOF'
status ==> 200
r['type'] ==> 'response'
not run, reported so :: [(c['name'], c['ok']) for c in r['serverCalls']] ==> [('shop.addReview', False)]
'permission policy denies' in reqs[-1]['body']['contents'][2]['parts'][0]['functionResponse']['response']['error'] ==> True
EOF
assert_reviews 1 "the denied calls wrote nothing"

# The policy changes while the card waits: the approval is refused
sed -i 's/deny: \[{signature/deny: [shop.addReview, {signature/' "$GA_CONF"
grep -q 'deny: \[shop.addReview, ' "$GA_CONF" || bail "cannot edit $GA_CONF"
kill -HUP "$GA_PID"
reloaded() { [ "$(grep -c 'configuration reloaded' "$GA_LOG")" -ge 1 ]; }
wait_until 5000 reloaded || bail "the responder did not reload: $(tail -c 400 "$GA_LOG")"
mock_reset
MJ_BODY=$SAVED_DIR/ask.json make_json "$T_TMP/x.json" "{'approval': {'id': r['approval']['id'], 'ticket': r['approval']['ticket'], 'decision': 'approve'}, 'history': r['history'], 'signatures': r['signatures'], 'toolDefinitions': [], 'pageState': {}}"
req POST "$SUBMIT" "@$T_TMP/x.json"
assert_py "denied since the card: the approval is refused to the model" <<'EOF'
status ==> 200
r['type'] ==> 'response'
nothing ran :: r['serverCalls'] ==> []
the model read the denial :: 'permission policy denies' in json.dumps(reqs[0]['body']['contents'][2]) ==> True
EOF
assert_reviews 1 "denied since the card: no review"
stop_stack

# ---------------------------------------------------------------------------
# check and serve refuse a broken policy, at its line

new_stack_dir
printf 'actions: []\nplugins:\n  config:\n    permission:\n      deny: [{arg: email}]\n' >"$T_TMP/badperm.yaml"
ga_run check --config "$T_TMP/badperm.yaml"
check "check: a broken policy is a problem at its file:line" \
    bash -c '[ "$1" -eq 1 ] && grep -qF "$3:5: plugins.config.permission: deny[0]" <<<"$2"' _ "$rc" "$out$err" "$T_TMP/badperm.yaml"

# ---------------------------------------------------------------------------
# The run API: deny beats trust; allow entries are site allow rules

PLUG=$T_TMP/plugins
make -s -C "$REPO/tests/plugins" OUT="$PLUG" >"$T_TMP/plugins.build" 2>&1 ||
    bail "cannot build the test plugins: $(tail -c 600 "$T_TMP/plugins.build" | tr '\n' ' ')"
start_stack --mock --auth --limits "$RUN_LIMITS" --data-dir "$VAR" --rate 100000r/s --burst 40 \
    --yaml "plugins: {dirs: ['$PLUG'], expose: [hello, shop], config: {permission: {deny: [{tool: shop.addReview, arg: text, pattern: '*spam*'}], allow: [{tool: shop.addReview, arg: productId, pattern: 'p00*'}]}}}"
api ann GET /api/agent/threads
assert_status 200 "the store is made"
stop_stack
set_trust otto autonomous
set_trust dana delegated
start_stack --keep-dir --mock --data-dir "$VAR" --rate 100000r/s --burst 40

before=$(reviews_count)
mock_reset
run_as otto "$(review_marker '{"productId":"p004","rating":5,"text":"buy spam now"}') please review it"
assert_py "run API: a deny entry beats an autonomous user" <<'EOF'
status ==> 200
r['status'] ==> 'completed'
the model read the denial :: 'deny entry' in json.dumps(reqs[-1]['body']['contents'])
EOF
check "run API: the denied call wrote nothing" test "$(reviews_count)" = "$before"
mock_reset
run_as otto "$(review_marker '{"productId":"p012","rating":5,"text":"fine"}') please review it"
assert_py "run API: the autonomous user's other calls run" <<'EOF'
status ==> 200
r['status'] ==> 'completed'
EOF
check "run API: ... and write" test "$(reviews_count)" = "$((before + 1))"
mock_reset
run_as dana "$(review_marker '{"productId":"p004","rating":5,"text":"fine"}') please review it"
assert_py "run API: an allow entry runs a delegated user's call" <<'EOF'
status ==> 200
r['status'] ==> 'completed'
EOF
mock_reset
run_as dana "$(review_marker '{"productId":"p012","rating":5,"text":"fine"}') please review it"
assert_py "run API: ... and the others wait for approval" <<'EOF'
status ==> 200
r['status'] ==> 'awaiting_confirmation'
EOF
check "run API: two reviews written" test "$(reviews_count)" = "$((before + 2))"

# The run API's prompt goes through the plugins' enrichment (hello's)
mock_reset
run_as ann "@hello what is new"
assert_py "run API: the prompt Gemini reads is enriched" <<'EOF'
status ==> 200
reqs[0]['body']['contents'][-1]['parts'][0]['text'] ==> '@hello what is new [hello was here]'
EOF
stop_stack
stop_mock

finish
