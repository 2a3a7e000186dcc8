#!/bin/bash
# t_websearch.sh - the built-in web_search plugin through nginx + the
# responder + the mock Gemini server, against a fake SearXNG endpoint
# (tests/mock/search_mock.py on 127.0.0.1):
#
#  - configured under plugins.config.web_search it is exposed: listed by
#    GET /_jay/actions as read-only, declared to the model as
#    action_web_search_search, its instruction in the system prompt;
#  - the model's call runs it without an approval card (auto-approved):
#    the endpoint receives the query with format=json, the configured
#    safesearch and region, and the API key header; the results (capped
#    at maxResults, non-http urls dropped) reach the model's next request;
#  - the endpoint down: the model reads a clean error, the chat goes on,
#    and the key is in no answer and no log;
#  - a config the schema refuses is reported by `check` with its line.
source "$(dirname "${BASH_SOURCE[0]}")/chat_lib.sh"
source "$HTTP_DIR/webmock_lib.sh"

KEY="search-key-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
export KEY

start_search_mock
start_mock
start_stack --mock --limits "{$CHAT_LIMITS}" \
    --yaml "plugins: {config: {web_search: {endpoint: '$SEARCH_URL/search', maxResults: 3, safesearch: 2, region: de-CH, headers: {X-Api-Key: '$KEY'}}}}" \
    --yaml "outbound: {allow: [127.0.0.1]}"

req GET /_jay/actions
assert_py "listed as a read-only action" <<'EOF2'
status ==> 200
[a['sideEffects'] for a in r['actions'] if a['name'] == 'web_search.search'] ==> [False]
its schema :: [a for a in r['actions'] if a['name'] == 'web_search.search'][0]['inputSchema']['required'] ==> ['query']
EOF2

mock_reset
chat_send "[[mock:server-call tool=action_web_search_search args='{\"query\":\"gemini agent\"}']] look it up"
save_res chat
search_mock_save last /__last
assert_py "the model's call runs it, unasked" <<'EOF2'
status ==> 200
no approval card :: r.get('type') != 'approval-required' ==> True
ran :: [(c['name'], c['ok']) for c in r['serverCalls']] ==> [('web_search.search', True)]
two Gemini calls :: len(reqs) ==> 2
declared :: 'action_web_search_search' in [d['name'] for t in reqs[0]['body']['tools'] for d in t.get('functionDeclarations', [])] ==> True
instructed :: 'WEB-SEARCH:' in reqs[0]['body']['systemInstruction']['parts'][0]['text'] ==> True
the results reach the model :: [x['title'] for x in fresp(reqs[1])[0]['response']['result']['results']] ==> ['Result 1 for gemini agent', 'Result 5 for gemini agent', 'Result 6 for gemini agent']
each a title, url and snippet :: sorted(fresp(reqs[1])[0]['response']['result']['results'][0]) ==> ['snippet', 'title', 'url']
no javascript: url :: 'javascript:' in json.dumps(reqs[1]['body']['contents']) ==> False
the answer carries them :: 'Result 1 for gemini agent' in r['message'] ==> True
EOF2
assert_py "the endpoint got the query and the settings" <<'EOF2'
S['last']['path'] ==> '/search'
S['last']['params'] ==> {'q': 'gemini agent', 'format': 'json', 'safesearch': '2', 'language': 'de-CH', 'pageno': '1'}
the key header :: S['last']['headers']['x-api-key'] == E['KEY'] ==> True
EOF2
stop_stack

# The endpoint down: a clean error the model reads; the chat answers
CLOSED=$(free_port)
start_stack --mock --limits "{$CHAT_LIMITS}" \
    --yaml "plugins: {config: {web_search: {endpoint: 'http://127.0.0.1:$CLOSED/search', headers: {X-Api-Key: '$KEY'}}}}" \
    --yaml "outbound: {allow: [127.0.0.1]}"
mock_reset
chat_send "[[mock:server-call tool=action_web_search_search args='{\"query\":\"anything\"}']] look it up"
assert_py "endpoint down: the tool's error, not a failed chat" <<'EOF2'
status ==> 200
not ok :: [(c['name'], c['ok']) for c in r['serverCalls']] ==> [('web_search.search', False)]
the model reads why :: 'web search failed: could not connect' in json.dumps(fresp(reqs[-1])) ==> True
no key in it :: E['KEY'] in json.dumps(reqs[-1]['body']) ==> False
no key in the answer :: E['KEY'] in body ==> False
EOF2
stop_stack
assert_file_lacks "$GA_LOG" "$KEY" "the key is in no log"
assert_file_lacks "$RES_ALL" "$KEY" "the key is in no answer"

# A config the schema refuses: `check` names it with its line
new_stack_dir
write_gemini_yaml "$ST_DIR/.gemini.yaml" test-key "$MOCK_URL" '' ''
write_config "$GA_CONF" '{maxBodyBytes: 4096}' '' \
    "plugins:
  config:
    web_search:
      endpoint: '$SEARCH_URL/search'
      maxResults: 50"
ga_run check --config "$GA_CONF"
if [ "$rc" -ne 0 ] && grep -qE "agent.yaml:[0-9]+.*plugins.config.web_search: /maxResults" <<<"$err$out"; then
    ok "check: maxResults 50 refused at its line"
else
    not_ok "check: maxResults 50 refused at its line" "rc=$rc: $(tr '\n' ' ' <<<"$err$out" | cut -c1-600)"
fi

stop_mock
stop_search_mock
finish
