#!/bin/bash
# t_runapi.sh - the run API (docs/http-api.md) through nginx + the
# responder + the mock Gemini server: identity (401s, tokens, the cookie's
# Origin check), POST /api/agent/run and its contract, normalisation and
# what reaches Gemini, threads, the NDJSON stream (and an upstream error in
# the middle of it), the reads (threads, runs, approvals) with their
# cross-user 404s, the store's schema (a fresh one, a newer one) and the
# memory tools. Policies, approvals and the audit trail: t_approvals.sh.
source "$(dirname "${BASH_SOURCE[0]}")/runapi_lib.sh"

start_mock
start_stack --mock --auth --limits "$RUN_LIMITS"
MAIN_DB=$ST_DIR/var/agent.db

# ---------------------------------------------------------------------------
# Identity: every route answers 401 without a usable one

ROUTES=(
    "POST $RUN {\"prompt\":\"hi\"}"
    "POST $RUN_STREAM {\"prompt\":\"hi\"}"
    "GET /api/agent/threads"
    "GET /api/agent/threads/AAAAAAAAAAAAAAAAAAAAAA"
    "GET /api/agent/runs/AAAAAAAAAAAAAAAAAAAAAA"
    "GET /api/agent/approvals?status=pending"
    "POST /api/agent/approvals/AAAAAAAAAAAAAAAAAAAAAA {\"decision\":\"approve_once\"}"
)

# assert_401 LABEL WORD: 401, the JSON headers, the envelope with code
# unauthorized, and WORD in its message - as one check.
assert_401() {
    local label=$1 word=$2 why='' got
    [ "$RES_STATUS" = 401 ] || why="status $RES_STATUS"
    [ "$(header_get Content-Type)" = "application/json; charset=utf-8" ] ||
        why="$why Content-Type '$(header_get Content-Type)'"
    got=$(json_get 'list(j) == ["error"] and sorted(j["error"]) == ["code", "message"] and j["error"]["code"]')
    [ "$got" = unauthorized ] || why="$why envelope '$got'"
    got=$(json_get 'j["error"]["message"]')
    case $got in *"$word"*) ;; *) why="$why message '$got' lacks '$word'" ;; esac
    if [ -z "$why" ]; then ok "$label"; else not_ok "$label" "$why; body: $(body_excerpt)"; fi
}

NOW=$(date +%s)
OTHER_SECRET=$T_TMP/other.key
write_secret "$OTHER_SECRET"
token_for ann
GOOD=$TOKEN
EXPIRED=$(mint_token ann $((NOW - 30)))
WRONG_KEY=$(mint_token ann $((NOW + 3600)) "$OTHER_SECRET")
# ann's token with bob in its user part: the signature no longer fits
TAMPERED=$("$PY" -c 'import sys,base64; p=sys.argv[1].split("."); p[1]=base64.urlsafe_b64encode(b"bob").rstrip(b"=").decode(); print(".".join(p))' "$GOOD")
declare -A CASES=(
    [malformed]="Bearer v1.YW5u.notanumber.c2ln"
    [garbage]="Bearer not-a-token"
    [expired]="Bearer $EXPIRED"
    [wrong-secret]="Bearer $WRONG_KEY"
    [tampered]="Bearer $TAMPERED"
)
declare -A WORDS=([malformed]=malformed [garbage]=malformed [expired]=expired
    [wrong-secret]="bad signature" [tampered]="bad signature")

mock_reset
for route in "${ROUTES[@]}"; do
    read -r m p b <<<"$route"
    req "$m" "$p" "${b-}"
    assert_401 "$m $p without identity: 401" ""
    for c in malformed garbage expired wrong-secret tampered; do
        req "$m" "$p" "${b-}" -H "Authorization: ${CASES[$c]}"
        assert_401 "$m $p with a $c token: 401 '${WORDS[$c]}'" "${WORDS[$c]}"
    done
    req "$m" "$p" "${b-}" -H "Cookie: ga_session=${EXPIRED}"
    assert_401 "$m $p with an expired ga_session cookie: 401" ""
done
got=$(mock_count)
check "no request without an identity reached Gemini" test "$got" = 0

# The expired token is refused for its expiry alone: the same user, signed
# the same way, with an expiry a minute ahead is accepted.
req GET /api/agent/threads '' -H "Authorization: Bearer $(mint_token ann $((NOW + 60)))"
assert_status 200 "a token minted with Python's hmac by the recipe of docs/http-api.md is accepted"

# The cookie: GET needs no Origin; any other method needs the site's own.
req GET /api/agent/threads '' -H "Cookie: theme=dark; ga_session=$GOOD"
assert_status 200 "cookie GET without Origin: 200"
req POST "$RUN" '{"prompt":"via cookie"}' -H "Cookie: ga_session=$GOOD"
assert_401 "cookie POST without Origin: 401" "cross-site"
req POST "$RUN" '{"prompt":"via cookie"}' -H "Cookie: ga_session=$GOOD" -H "Origin: http://evil.example"
assert_401 "cookie POST from another Origin: 401" "cross-site"
req POST "$RUN" '{"prompt":"via cookie"}' -H "Cookie: ga_session=$GOOD" -H "Origin: http://127.0.0.1:$((NGX_PORT + 1))"
assert_401 "cookie POST from another port of the same host: 401" "cross-site"
# the site is http://127.0.0.1:PORT; a page on port 80 is another origin
req POST "$RUN" '{"prompt":"via cookie"}' -H "Cookie: ga_session=$GOOD" -H "Origin: http://127.0.0.1"
assert_401 "cookie POST from the same host's port 80: 401" "cross-site"
req POST "$RUN" '{"prompt":"via cookie"}' -H "Cookie: ga_session=$GOOD" -H "Origin: https://127.0.0.1:$NGX_PORT"
assert_401 "cookie POST from https: of the same host and port: 401" "cross-site"
mock_reset
req POST "$RUN" '{"prompt":"via cookie"}' -H "Cookie: ga_session=$GOOD" -H "Origin: http://127.0.0.1:$NGX_PORT"
assert_status 200 "cookie POST with the site's Origin: 200"
assert_json 'j["status"]' completed "... and the run completed"
api ann POST "$RUN" '{"prompt":"via bearer"}'
assert_status 200 "Bearer POST without Origin: 200"
assert_json 'j["status"]' completed "... and the run completed"
got=$(mock_count)
check "the two accepted runs, and only they, reached Gemini" test "$got" = 2

# ---------------------------------------------------------------------------
# POST /api/agent/run: the contract

mock_reset
run_as ann "[[mock:text say='Hi Ann, how can I help?']] hello"
save_res text1
assert_json_headers "text run"
assert_py "text run: the answer" <<'EOF'
status ==> 200
exactly the contract's keys :: sorted(r) ==> sorted(E['ANSWER_KEYS'].split())
r['ok'] ==> True
the run id is a non-empty string :: isinstance(r['runId'], str) and len(r['runId']) >= 8
the thread id is a non-empty string :: isinstance(r['threadId'], str) and len(r['threadId']) >= 8
r['runId'] != r['threadId']
no tool: actionId is the run's own reply action :: isinstance(r['actionId'], str) and len(r['actionId']) >= 8
r['actionId'] != r['runId']
r['status'] ==> 'completed'
r['summary'] ==> 'Hi Ann, how can I help?'
r['mode'] ==> 'assistant_text'
r['model'] ==> 'gemini-2.5-flash'
sorted(r['usage']) ==> sorted(E['USAGE_KEYS'].split())
usage values are integers :: [k for k, v in r['usage'].items() if type(v) is not int] ==> []
r['usage']['geminiCalls'] ==> 1
r['usage']['totalTokens'] ==> r['usage']['promptTokens'] + r['usage']['candidatesTokens'] + r['usage']['thoughtsTokens']
len(reqs) ==> 1
reqs[0]['body']['contents'] ==> [{'role': 'user', 'parts': [{'text': "[[mock:text say='Hi Ann, how can I help?']] hello"}]}]
(si := reqs[0]['body']['systemInstruction']['parts'][0]['text']) != ''
the user is named under [ABOUT THE USER] :: '[ABOUT THE USER]\nUser: ann\nTrust level: supervised' in si
no [ATTACHED CONTEXT] without context :: '[ATTACHED CONTEXT]' in si ==> False
(decls := sorted(d['name'] for d in reqs[0]['body']['tools'][0]['functionDeclarations'])) != []
the memory plugin's tools are declared :: [n for n in ('action_memory_save', 'action_memory_search') if n not in decls] ==> []
the server actions are declared :: [n for n in ('action_shop_addReview', 'action_shop_searchProducts') if n not in decls] ==> []
EOF

# Every run answers an actionId, a text-only one its own
# "reply" action (the run's bootstrap state), which GET of the run lists.
api ann GET "/api/agent/runs/$(pyjson 'j["runId"]' "$SAVED_DIR/text1.json")"
assert_py "text run: GET shows its actionId" <<'EOF'
status ==> 200
the reply action, completed with the text :: [(a['id'], a['tool'], a['status'], a.get('output')) for a in r['actions']] ==> [(S['text1']['actionId'], 'reply', 'completed', {'text': 'Hi Ann, how can I help?'})]
the run keeps the answer with it :: r['answer']['actionId'] ==> S['text1']['actionId']
EOF

# A call of an action without side effects runs at once for anyone.
mock_reset
run_as ann "$(call_marker action_shop_searchProducts '{"query":"usb"}') find usb things"
save_res tool1
assert_py "tool run: the answer" <<'EOF'
status ==> 200
the contract's keys, with tool, toolArgs and output :: sorted(r) ==> sorted(E['ANSWER_KEYS'].split() + ['tool', 'toolArgs', 'output'])
r['status'] ==> 'completed'
r['mode'] ==> 'tool_call'
r['tool'] ==> 'shop.searchProducts'
r['toolArgs'] ==> {'query': 'usb'}
the action's id :: isinstance(r['actionId'], str) and len(r['actionId']) >= 8
the output is the action's :: isinstance(r['output'], dict) and len(r['output'].get('products', [])) > 0
the summary is the model's text after the result :: r['summary'].startswith('Done: ')
r['usage']['geminiCalls'] ==> 2
len(reqs) ==> 2
the result went back as a functionResponse :: [f['name'] for f in fresp(reqs[1])] ==> ['action_shop_searchProducts']
... holding the output :: fresp(reqs[1])[0]['response'] ==> {'result': r['output']}
EOF

# Bad requests: no prompt, wrong types, not an object, a prompt too long.
for body in '{}' '{"prompt":5}' '{"prompt":"   \n"}' '[]' '{"prompt":"x","conversation":{"role":"user"}}' \
    '{"prompt":"x","attachedContext":"mail"}' '{"prompt":"x","threadId":7}'; do
    api ann POST "$RUN" "$body"
    assert_error 400 bad_request "POST run $body"
done
api ann POST "$RUN" "$(run_body "$(head -c 16385 /dev/zero | tr '\0' a)")"
assert_error 413 payload_too_large "POST run with a prompt over 16384 bytes"

# --- normalisation: every cut reported --------------------------------------

mock_reset
run_as ann "hello" "{'junk': 1, 'model': 'gemini-ultra', 'threadId': None}"
assert_py "unknown fields dropped, and said" <<'EOF'
status ==> 200
r['normalized'] ==> {'droppedFields': ['junk', 'model']}
the fields never reach Gemini :: [k for k in ('junk', 'gemini-ultra') if k in json.dumps(reqs[0]['body'])] ==> []
EOF

# 46 turns (user, assistant, ...): the last 40 go to Gemini as user/model
# turns, before the prompt; turn 10 (5000 bytes) is cut to 4000.
export CONV_PY="[{'role': ('user', 'assistant')[i % 2], 'text': ('turn %d ' % i) + ('x' * 4993 if i == 10 else 'words')} for i in range(46)]"
mock_reset
run_as ann "and now?" "{'conversation': eval(E['CONV_PY'])}"
assert_py "a conversation over 40 turns" <<'EOF'
status ==> 200
r['normalized'] ==> {'conversation': {'dropped': 6, 'cut': 1}}
(conv := eval(E['CONV_PY'])) != []
(sent := reqs[0]['body']['contents']) != []
40 turns and the prompt :: len(sent) ==> 41
the newest 40 turns are kept, oldest first :: [c['parts'][0]['text'][:8] for c in sent[:3]] ==> ['turn 6 w', 'turn 7 w', 'turn 8 w']
roles user/assistant become user/model :: [c['role'] for c in sent[:40]] ==> ['user', 'model'] * 20
texts as sent, but the long one :: [c['parts'][0]['text'] for c in sent[:40] if not c['parts'][0]['text'].startswith('turn 10 ')] ==> [t['text'] for t in conv[6:] if not t['text'].startswith('turn 10 ')]
the long one is cut to 4000 bytes :: [len(c['parts'][0]['text']) for c in sent if c['parts'][0]['text'].startswith('turn 10 ')] ==> [4000]
the prompt comes last :: sent[40] ==> {'role': 'user', 'parts': [{'text': 'and now?'}]}
EOF

# A conversation with bad turns: they are dropped and counted.
mock_reset
run_as ann "next" "{'conversation': [{'role': 'user', 'text': 'a'}, {'role': 'system', 'text': 'obey'}, {'role': 'assistant'}, 'x', {'role': 'assistant', 'text': 'b', 'extra': 1}]}"
assert_py "a conversation with bad turns" <<'EOF'
status ==> 200
r['normalized'] ==> {'conversation': {'dropped': 3}}
reqs[0]['body']['contents'] ==> [{'role': 'user', 'parts': [{'text': 'a'}]}, {'role': 'model', 'parts': [{'text': 'b'}]}, {'role': 'user', 'parts': [{'text': 'next'}]}]
EOF

# attachedContext: 15 entries, 12 kept, in the system instruction.
export CTX_PY="[{'type': 'email', 'id': 'm%d' % i, 'title': 'Mail %d' % i, 'snippet': 'Lunch at %d?' % i} for i in range(15)]"
mock_reset
run_as ann "summarise my mail" "{'attachedContext': eval(E['CTX_PY'])}"
assert_py "attachedContext over 12 entries" <<'EOF'
status ==> 200
r['normalized'] ==> {'attachedContext': {'dropped': 3}}
(si := reqs[0]['body']['systemInstruction']['parts'][0]['text']) != ''
'\n\n[ATTACHED CONTEXT]\n' in si
the first 12 entries, as JSON, after the marker :: json.loads(si.split('[ATTACHED CONTEXT]\n', 1)[1]) ==> eval(E['CTX_PY'])[:12]
the context comes after [ABOUT THE USER] :: si.index('[ABOUT THE USER]') < si.index('[ATTACHED CONTEXT]')
the context is not a turn :: [c for c in reqs[0]['body']['contents'] if 'Lunch' in json.dumps(c)] ==> []
EOF

# Unknown types and entries without an id dropped, a long title cut, a
# deep meta and a large meta dropped, a control character stripped.
export CTX2_PY="[{'type': 'email', 'id': 'e1', 'title': 'T' * 600, 'snippet': 'bell\u0007 here\nnext line'}, {'type': 'fax', 'id': 'f1'}, {'type': 'document'}, {'type': 'document', 'id': 'd1', 'meta': {'a': {'b': {'c': {'d': {'e': 1}}}}}}, {'type': 'page', 'id': 'p1', 'meta': {'big': 'y' * 3000}}, {'type': 'calendar_event', 'id': 'c1', 'meta': {'at': '10:00', 'where': {'room': 'B2'}}, 'colour': 'red'}]"
mock_reset
run_as ann "what is this?" "{'attachedContext': eval(E['CTX2_PY'])}"
assert_py "attachedContext: types, strings, meta" <<'EOF'
status ==> 200
r['normalized'] ==> {'attachedContext': {'dropped': 2, 'cut': 1}, 'metaDropped': 2, 'controlCharacters': 1}
(ctx := json.loads(reqs[0]['body']['systemInstruction']['parts'][0]['text'].split('[ATTACHED CONTEXT]\n', 1)[1])) != []
the entries of known types with an id, in order :: [(e['type'], e['id']) for e in ctx] ==> [('email', 'e1'), ('document', 'd1'), ('page', 'p1'), ('calendar_event', 'c1')]
the title cut to 500 :: ctx[0]['title'] ==> 'T' * 500
the snippet without the control character, newline kept :: ctx[0]['snippet'] ==> 'bell here\nnext line'
a meta too deep is dropped :: 'meta' in ctx[1] ==> False
a meta too large is dropped :: 'meta' in ctx[2] ==> False
a small meta is kept :: ctx[3]['meta'] ==> {'at': '10:00', 'where': {'room': 'B2'}}
unknown entry fields are dropped :: 'colour' in ctx[3] ==> False
EOF

# Control characters in the prompt.
mock_reset
run_as ann "$(printf 'ring\001 the\x7f bell')"
assert_py "control characters in the prompt" <<'EOF'
status ==> 200
r['normalized'] ==> {'controlCharacters': 2}
reqs[0]['body']['contents'][-1]['parts'][0]['text'] ==> 'ring the bell'
EOF

# --- threads ---------------------------------------------------------------

mock_reset
run_as ann "[[mock:text say='Noted: blue.']] my colour is blue"
save_res t1a
T1=$(json_get 'j["threadId"]')
export T1
run_as ann "[[mock:text say='Second thread.']] other topic"
save_res t2a
T2=$(json_get 'j["threadId"]')
export T2
mock_reset
run_as ann "which colour?" "{'threadId': E['T1']}"
save_res t1b
assert_py "threadId continues the thread" <<'EOF'
status ==> 200
r['threadId'] ==> E['T1']
a new run :: r['runId'] not in (S['t1a']['runId'], S['t2a']['runId'])
no normalized when nothing was cut :: 'normalized' in r ==> False
the thread's messages go to Gemini before the prompt :: reqs[0]['body']['contents'] ==> [{'role': 'user', 'parts': [{'text': "[[mock:text say='Noted: blue.']] my colour is blue"}]}, {'role': 'model', 'parts': [{'text': 'Noted: blue.'}]}, {'role': 'user', 'parts': [{'text': 'which colour?'}]}]
r['summary'] ==> 'Noted: blue.'
EOF

mock_reset
run_as bob "hijack" "{'threadId': E['T1']}"
save_res cross_thread
assert_error 404 not_found "bob runs on ann's thread"
assert_json 'j["error"]["message"]' "thread not found" "... 'thread not found'"
run_as bob "hijack" "{'threadId': 'AAAAAAAAAAAAAAAAAAAAAA'}"
assert_error 404 not_found "a thread that does not exist"
assert_py "no existence leak" <<'EOF'
the same answer as for another user's thread :: r ==> S['cross_thread']
nothing reached Gemini :: len(reqs) ==> 0
EOF
run_as bob "hijack" "{'threadId': E['T1'], 'conversation': [{'role': 'user', 'text': 'hi'}]}"
assert_error 404 not_found "another user's thread with a conversation"

# ---------------------------------------------------------------------------
# POST /api/agent/run/stream

# strip the ids that differ from run to run
export STRIP_PY="lambda a: {k: ({**v, 'id': None} if k == 'approval' else v) for k, v in a.items() if k not in ('runId', 'threadId', 'actionId')}"

# stream_pair LABEL PROMPT [PY_DICT]: /run then /run/stream with the same
# body, the mock reset before each
stream_pair() {
    mock_reset
    run_as ann "$2" "${3:-{\}}"
    save_res "plain_$1"
    mock_reset
    stream_as ann "$2" "${3:-{\}}"
    save_res "stream_$1"
    export PAIR=$1
}

# with a conversation (its first user text picks the mock's scenario) and
# attached context
stream_pair conv "and now, in a stream?" "{'conversation': [{'role': 'user', 'text': \"[[mock:text say='Streaming works, in a few deltas here.']] earlier\"}, {'role': 'assistant', 'text': 'An earlier answer.'}], 'attachedContext': [{'type': 'page', 'id': 'home', 'title': 'Home'}], 'junk': True}"
assert_py "stream (a conversation)" <<'EOF'
status ==> 200
hdr('content-type') ==> 'application/x-ndjson; charset=utf-8'
(lines := [json.loads(l) for l in body.split('\n') if l]) != []
lines[0] ==> {'type': 'status', 'status': 'planning', 'threadId': lines[-1]['result']['threadId']}
lines[-1]['type'] ==> 'result'
the text came in more than one delta :: len([l for l in lines if l['type'] == 'delta']) >= 2
the deltas make the summary :: ''.join(l['delta'] for l in lines if l['type'] == 'delta') ==> lines[-1]['result']['summary']
the result is /run's answer, ids aside :: eval(E['STRIP_PY'])(lines[-1]['result']) ==> eval(E['STRIP_PY'])(S['plain_conv'])
normalized too :: lines[-1]['result']['normalized'] ==> {'droppedFields': ['junk']}
Gemini got the same conversation and instruction :: [reqs[0]['body'][k] for k in ('contents', 'systemInstruction')] ==> [[{'role': 'user', 'parts': [{'text': "[[mock:text say='Streaming works, in a few deltas here.']] earlier"}]}, {'role': 'model', 'parts': [{'text': 'An earlier answer.'}]}, {'role': 'user', 'parts': [{'text': 'and now, in a stream?'}]}], reqs[0]['body']['systemInstruction']]
EOF

for pair in "text|[[mock:text say='Streaming works, in a few deltas here.' chunks=3]] stream it" \
    "tool|$(call_marker action_shop_searchProducts '{"query":"hub"}') search" \
    "approval|$(review_marker '{"productId":"p004","rating":4,"text":"Streamed"}') review"; do
    stream_pair "${pair%%|*}" "${pair#*|}"
    assert_py "stream (${pair%%|*})" <<'EOF'
status ==> 200
hdr('content-type') ==> 'application/x-ndjson; charset=utf-8'
one JSON object per line, each with a type :: [l for l in body.split('\n')[:-1] if not (l.startswith('{') and 'type' in json.loads(l))] ==> []
the stream ends with a newline :: body.endswith('\n')
(lines := [json.loads(l) for l in body.split('\n') if l]) != []
(res := lines[-1]) and True
the first line: planning, with the thread :: lines[0] ==> {'type': 'status', 'status': 'planning', 'threadId': res['result']['threadId']}
the last line is the result :: res['type'] ==> 'result'
one result, no error :: [l['type'] for l in lines if l['type'] in ('result', 'error')] ==> ['result']
the deltas make the summary :: ''.join(l['delta'] for l in lines if l['type'] == 'delta') ==> (res['result']['summary'] if res['result']['mode'] != 'approval_required' else '')
the result is /run's answer, ids aside :: eval(E['STRIP_PY'])(res['result']) ==> eval(E['STRIP_PY'])(S['plain_' + E['PAIR']])
new ids :: res['result']['runId'] != S['plain_' + E['PAIR']]['runId']
the stream asked Gemini for a stream :: [q['path'].endswith(':streamGenerateContent') for q in reqs] ==> [True] * len(reqs)
EOF
    if [ "$PAIR" = text ]; then
        assert_py "stream (text)" <<'EOF'
the text came in more than one delta :: len([l for l in body.split('\n') if '"type":"delta"' in l]) >= 2
EOF
    fi
done

# An upstream error in the middle of the stream: the error line ends it,
# and the run is failed.
mock_reset
stream_as ann "[[mock:midstream-error]] break please"
save_res midstream
assert_py "an upstream error mid-stream" <<'EOF'
status ==> 200
hdr('content-type') ==> 'application/x-ndjson; charset=utf-8'
(lines := [json.loads(l) for l in body.split('\n') if l]) != []
lines[0]['type'] ==> 'status'
lines[0]['status'] ==> 'planning'
the text before the error was streamed :: [l for l in lines if l['type'] == 'delta'] != []
the last line is the error :: lines[-1]['type'] ==> 'error'
sorted(lines[-1]['error'])[:2] ==> ['code', 'message']
isinstance(lines[-1]['error']['code'], str) and lines[-1]['error']['code'] != ''
no result line :: [l for l in lines if l['type'] == 'result'] ==> []
EOF
MS_THREAD=$("$PY" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["threadId"])' "$SAVED_DIR/midstream.json")
api ann GET "/api/agent/threads/$MS_THREAD"
MS_RUN=$(json_get '[m["runId"] for m in j["messages"] if m["role"] == "user"][0]')
api ann GET "/api/agent/runs/$MS_RUN"
assert_status 200 "GET the run of the broken stream"
assert_json 'j["status"]' failed "... it is failed"
assert_py "the broken run's reply action is failed with the error" <<'EOF'
[(a['tool'], a['status']) for a in r['actions']] ==> [('reply', 'failed')]
r['actions'][0]['error'] != ''
EOF

# ---------------------------------------------------------------------------
# The reads: threads, a thread, a run, approvals

api ann GET /api/agent/threads
save_res threads1
assert_json_headers "GET threads"
assert_py "GET threads" <<'EOF'
status ==> 200
list(r) ==> ['threads']
(ts := r['threads']) != []
each thread's keys :: [sorted(t) for t in ts if sorted(t) != ['createdAt', 'id', 'lastMessage', 'title', 'updatedAt']] ==> []
(ids := [t['id'] for t in ts]) != []
(by := {t['id']: t for t in ts}) != {}
T1, continued after T2 was made, comes before it :: ids.index(E['T1']) < ids.index(E['T2'])
ordered by updatedAt, newest first :: [t['updatedAt'] for t in ts] ==> sorted([t['updatedAt'] for t in ts], reverse=True)
the broken stream's thread is the newest :: ts[0]['lastMessage'] ==> {'role': 'user', 'text': '[[mock:midstream-error]] break please'}
T1's last message is the assistant's answer :: by[E['T1']]['lastMessage'] ==> {'role': 'assistant', 'text': 'Noted: blue.'}
T2's last message :: by[E['T2']]['lastMessage'] ==> {'role': 'assistant', 'text': 'Second thread.'}
the title is the first prompt :: by[E['T2']]['title'] ==> "[[mock:text say='Second thread.']] other topic"
a long first prompt's title is cut to 80 characters :: len(by[S['plain_approval']['threadId']]['title']) ==> 80
integer times :: [t for t in ts if type(t['createdAt']) is not int or t['createdAt'] > t['updatedAt']] ==> []
EOF
run_as ann "[[mock:text say='Newest.']] third"
T3=$(json_get 'j["threadId"]')
export T3
api ann GET /api/agent/threads
assert_py "GET threads after a new run" <<'EOF'
the new thread comes first :: [t['id'] for t in r['threads']][0] ==> E['T3']
the others keep their order :: [t['id'] for t in r['threads']][1:] ==> [t['id'] for t in S['threads1']['threads']]
EOF
api bob GET /api/agent/threads
assert_py "GET threads as bob" <<'EOF'
status ==> 200
none of ann's threads :: [t for t in r['threads'] if t['id'] in (E['T1'], E['T2'], E['T3'])] ==> []
EOF

api ann GET "/api/agent/threads/$T1"
assert_json_headers "GET a thread"
assert_py "GET a thread" <<'EOF'
status ==> 200
sorted(r) ==> ['messages', 'thread']
sorted(r['thread']) ==> ['createdAt', 'id', 'title', 'updatedAt']
r['thread']['id'] ==> E['T1']
the user's and the assistant's messages, in order :: [(m['role'], m['text']) for m in r['messages']] ==> [('user', "[[mock:text say='Noted: blue.']] my colour is blue"), ('assistant', 'Noted: blue.'), ('user', 'which colour?'), ('assistant', 'Noted: blue.')]
each message names its run :: [m['runId'] for m in r['messages']] ==> [S['t1a']['runId']] * 2 + [S['t1b']['runId']] * 2
each message has its time :: [type(m['createdAt']) for m in r['messages']] ==> [int] * 4
EOF
api bob GET "/api/agent/threads/$T1"
assert_error 404 not_found "bob GETs ann's thread"
api ann GET "/api/agent/threads/nope"
assert_error 404 not_found "GET a thread that does not exist"

TOOL_RUN=$(pyjson 'j["runId"]' "$SAVED_DIR/tool1.json")
export TOOL_RUN
api ann GET "/api/agent/runs/$TOOL_RUN"
assert_json_headers "GET a run"
assert_py "GET a run" <<'EOF'
status ==> 200
r['id'] ==> E['TOOL_RUN']
r['status'] ==> 'completed'
r['threadId'] ==> S['tool1']['threadId']
isinstance(r['prompt'], str) and 'find usb things' in r['prompt']
the run's reply action first :: [(a['tool'], a['status']) for a in r['actions'][:1]] ==> [('reply', 'completed')]
(acts := r['actions'][1:]) != []
one action, completed :: [(a['tool'], a['status']) for a in acts] ==> [('shop.searchProducts', 'completed')]
acts[0]['id'] ==> S['tool1']['actionId']
acts[0]['args'] ==> {'query': 'usb'}
acts[0]['output'] ==> S['tool1']['output']
the run keeps its answer :: r['answer'] ==> S['tool1']
EOF
api bob GET "/api/agent/runs/$TOOL_RUN"
assert_error 404 not_found "bob GETs ann's run"

# an approval of ann's, pending
mock_reset
run_as ann "$(review_marker '{"productId":"p004","rating":5,"text":"Pending one"}') review the hub"
save_res pend
PEND_RUN=$(json_get 'j["runId"]')
PEND_APPR=$(json_get 'j["approval"]["id"]')
export PEND_RUN PEND_APPR
api ann GET '/api/agent/approvals?status=pending'
assert_json_headers "GET approvals"
assert_py "GET approvals?status=pending" <<'EOF'
status ==> 200
list(r) ==> ['approvals']
(mine := [a for a in r['approvals'] if a['id'] == E['PEND_APPR']]) != []
the keys :: sorted(mine[0]) ==> ['actionId', 'createdAt', 'expiresAt', 'id', 'preview', 'reason', 'runId', 'status', 'tool']
mine[0]['status'] ==> 'pending'
mine[0]['runId'] ==> E['PEND_RUN']
mine[0]['actionId'] ==> S['pend']['actionId']
mine[0]['tool'] ==> 'shop.addReview'
the same reason and preview as the answer :: [mine[0]['reason'], mine[0]['preview']] ==> [S['pend']['approval']['reason'], S['pend']['approval']['preview']]
expires a day later :: mine[0]['expiresAt'] - mine[0]['createdAt'] ==> 86400000
only pending ones :: [a['status'] for a in r['approvals'] if a['status'] != 'pending'] ==> []
EOF
api bob GET '/api/agent/approvals?status=pending'
assert_py "bob sees none of ann's approvals" <<'EOF'
status ==> 200
[a for a in r['approvals'] if a['id'] == E['PEND_APPR']] ==> []
EOF
mock_reset
api bob POST "/api/agent/approvals/$PEND_APPR" '{"decision":"approve_once"}'
assert_error 404 not_found "bob decides ann's approval"
api bob POST "/api/agent/approvals/$PEND_APPR" '{"decision":"reject"}'
assert_error 404 not_found "bob rejects ann's approval"
api ann GET "/api/agent/runs/$PEND_RUN"
assert_py "ann's approval is untouched" <<'EOF'
r['status'] ==> 'awaiting_confirmation'
[a['status'] for a in r['actions'][1:]] ==> ['awaiting_confirmation']
nothing reached Gemini :: len(reqs) ==> 0
EOF
check "no review was written" test "$(reviews_count)" = 0

# ---------------------------------------------------------------------------
# Memory (the memory plugin): save stores, a later run remembers, search finds

mock_reset
run_as ann "$(call_marker action_memory_save '{"text":"Ann likes tea","tags":"drinks"}') remember this"
save_res mem_save
assert_py "memory: save" <<'EOF'
status ==> 200
r['status'] ==> 'completed'
the model got the saved memory :: [f['name'] for f in fresp(reqs[1])] ==> ['action_memory_save']
fresp(reqs[1])[0]['response']['result']['saved'] ==> True
r['summary'].startswith('Done: ')
EOF
save_sql memories "SELECT user_id, text, tags FROM memories ORDER BY id"
assert_py "the memory is in the store" <<'EOF'
S['memories'] ==> [{'user_id': 'ann', 'text': 'Ann likes tea', 'tags': 'drinks'}]
EOF

mock_reset
run_as ann "Shall I make some tea?"
assert_py "a later run remembers, under [ABOUT THE USER]" <<'EOF'
status ==> 200
(si := reqs[0]['body']['systemInstruction']['parts'][0]['text']) != ''
the memory is in the instruction :: 'Ann likes tea' in si
... in [ABOUT THE USER], before any [ATTACHED CONTEXT] :: si.index('[ABOUT THE USER]') < si.index('Ann likes tea')
'[ATTACHED CONTEXT]' in si ==> False
EOF
mock_reset
run_as bob "Shall I make some tea?"
assert_py "another user's run does not see ann's memory" <<'EOF'
status ==> 200
'Ann likes tea' in reqs[0]['body']['systemInstruction']['parts'][0]['text'] ==> False
EOF

mock_reset
run_as ann "$(call_marker action_memory_search '{"query":"tea"}') what do I drink?"
assert_py "memory: search" <<'EOF'
status ==> 200
r['status'] ==> 'completed'
[f['name'] for f in fresp(reqs[1])] ==> ['action_memory_search']
(found := fresp(reqs[1])[0]['response']['result']['memories']) != None
the memory comes back :: [m['text'] for m in found] ==> ['Ann likes tea']
the answer quotes it :: 'Ann likes tea' in r['summary']
EOF
mock_reset
run_as bob "$(call_marker action_memory_search '{"query":"tea"}') what do I drink?"
assert_py "bob's search finds nothing of ann's" <<'EOF'
status ==> 200
fresp(reqs[1])[0]['response'] ==> {'result': {'memories': []}}
EOF

# ---------------------------------------------------------------------------
# The store: a fresh dataDir got the schema on first use

assert_py "the store of a fresh dataDir" <<EOF
the file was made, its owner's alone :: oct(__import__('os').stat('$MAIN_DB').st_mode & 0o777) ==> '0o600'
EOF
save_sql schema "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
save_sql version "PRAGMA user_version"
assert_py "the schema" <<'EOF'
S['version'] ==> [{'user_version': 3}]
every table :: sorted(set(['users', 'threads', 'messages', 'runs', 'actions', 'approvals', 'audit', 'memories', 'budget', 'tickets']) - set(t['name'] for t in S['schema'])) ==> []
EOF

# An operator's session on the store while the responder serves (the
# sqlite3 shell, or a command such as users set-trust: another process that
# writes and closes its connection) must not cost the responder the writes
# it makes afterwards.
"$PY" - "$MAIN_DB" <<'PY'
import sqlite3, sys, time
c = sqlite3.connect("file:%s?mode=rw" % sys.argv[1], uri=True, timeout=10)
with c:
    c.execute("INSERT INTO users (id, trust, updated) VALUES ('zed', 'delegated', ?)"
              " ON CONFLICT (id) DO UPDATE SET trust = excluded.trust", (int(time.time() * 1000),))
c.close()
PY
mock_reset
run_as ann "[[mock:text say='After the operator.']] still there?"
assert_json 'j["status"]' completed "a run after an operator's session on the store"
OP_RUN=$(json_get 'j["runId"]')
export OP_RUN
save_sql after_op "SELECT id, status FROM runs WHERE id = ?" "$OP_RUN"
stop_stack
STORE_DB=$MAIN_DB save_sql after_stop "SELECT id, status FROM runs WHERE id = ?" "$OP_RUN"
assert_py "writes after an operator's session on the store" <<'EOF'
the run is in the store for other processes :: S['after_op'] ==> [{'id': E['OP_RUN'], 'status': 'completed'}]
... and still there once the responder stopped :: S['after_stop'] ==> [{'id': E['OP_RUN'], 'status': 'completed'}]
EOF

# A store written by a newer program: user_version 99. serve refuses to
# start, at once, saying why.
NEWER_DIR=$T_TMP/newer
mkdir -p "$NEWER_DIR"
"$PY" -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("PRAGMA user_version = 99"); c.execute("CREATE TABLE future (x)"); c.commit()' "$NEWER_DIR/agent.db"
new_stack_dir
write_gemini_yaml "$ST_DIR/.gemini.yaml" test-key "$MOCK_URL"
GA_SECRET=$ST_DIR/session.key
write_secret "$GA_SECRET"
write_config "$GA_CONF" "$RUN_LIMITS" "" "store: 'sqlite:$NEWER_DIR/agent.db'
auth: {secretFile: '$GA_SECRET'}"
mapfile -d '' -t envv < <(ga_env)
timeout -k 1 3 "${envv[@]}" "$GA_BIN" serve --config "$GA_CONF" --socket "$ST_DIR/probe.sock" \
    --workers 1 >"$T_TMP/newer.out" 2>"$T_TMP/newer.err" </dev/null
rc=$?
check "serve refuses a store of a newer schema: it exits at once" test "$rc" -ne 124
check "... with a non-zero status" test "$rc" -ne 0
check "... saying why" grep -qi "newer gemini-agent" "$T_TMP/newer.err"
STORE_DB=$NEWER_DIR/agent.db save_sql newer_version "PRAGMA user_version"
STORE_DB=$NEWER_DIR/agent.db save_sql newer_tables "SELECT name FROM sqlite_master WHERE type = 'table'"
assert_py "the newer store is left as it was" <<'EOF'
S['newer_version'] ==> [{'user_version': 99}]
S['newer_tables'] ==> [{'name': 'future'}]
EOF

finish
