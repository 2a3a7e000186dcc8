#!/bin/bash
# t_references.sh - the built-in references plugin through nginx + the
# responder + the mock Gemini server, with a file source beside
# agent.yaml (a relative path) and a URL source served by
# tests/mock/search_mock.py on 127.0.0.1:
#
#  - its tool is listed read-only and runs over POST /_jay/actions; a name
#    it does not have is refused by the schema (the enum of the names);
#  - the model is told what it may read (names and descriptions, sorted);
#  - the widget chat with @faq in the message: the mock Gemini receives
#    the file's content in the user turn, and the history keeps it; a
#    message without a known @name goes as it is;
#  - the model calls action_references_get (unasked: auto-approved): the
#    URL's content is in its next request, fetched once and then cached;
#  - a missing file: reported with the source's name, the rest serves.
source "$(dirname "${BASH_SOURCE[0]}")/chat_lib.sh"
source "$HTTP_DIR/webmock_lib.sh"

start_search_mock
start_mock

FAQ='Shipping takes 3 days; returns are free within 30 days.'
export FAQ
new_stack_dir
write_gemini_yaml "$ST_DIR/.gemini.yaml" test-key "$MOCK_URL"
write_config "$GA_CONF" "{$CHAT_LIMITS}" '' \
    "plugins:
  config:
    references:
      sources:
        faq: {file: docs/faq.md, description: Shipping and returns}
        api: {url: '$SEARCH_URL/doc/api', description: The API notes}
outbound: {allow: [127.0.0.1]}"
mkdir -p "$ST_DIR/docs"
printf '%s\n' "$FAQ" >"$ST_DIR/docs/faq.md"
start_stack --keep-dir

req GET /_jay/actions
assert_py "listed as a read-only action" <<'EOF2'
status ==> 200
[a['sideEffects'] for a in r['actions'] if a['name'] == 'references.get'] ==> [False]
the names as its enum :: [a for a in r['actions'] if a['name'] == 'references.get'][0]['inputSchema']['properties']['name']['enum'] ==> ['api', 'faq']
EOF2
req POST /_jay/actions/references.get '{"name":"faq"}'
assert_py "run over POST /_jay/actions/references.get" <<'EOF2'
status ==> 200
json.dumps(r).count(E['FAQ']) ==> 1
EOF2
req POST /_jay/actions/references.get '{"name":"nope"}'
assert_error 422 schema_violation "a name it does not have is refused by the schema"

# @faq in the widget's message
mock_reset
chat_send "What does @faq say about shipping?"
assert_py "@faq: the file's content reaches the model" <<'EOF2'
status ==> 200
reqs[0]['body']['contents'][-1]['parts'][0]['text'] == 'What does @faq say about shipping?\n\n[reference faq]\n' + E['FAQ'] + '\n\n[/reference faq]' ==> True
the history keeps it :: E['FAQ'] in r['history'][0]['parts'][0]['text'] ==> True
told what it may read :: 'action_references_get' in reqs[0]['body']['systemInstruction']['parts'][0]['text'] ==> True
names and descriptions, sorted :: ' api - The API notes; faq - Shipping and returns.' in reqs[0]['body']['systemInstruction']['parts'][0]['text'] ==> True
EOF2
mock_reset
chat_send "Mail me at bob@faq.example or @nobody"
assert_py "no known @name: the message goes as it is" <<'EOF2'
status ==> 200
reqs[0]['body']['contents'][-1] ==> {'role': 'user', 'parts': [{'text': 'Mail me at bob@faq.example or @nobody'}]}
EOF2

# The model asks for the URL source
search_mock_save before /__count
mock_reset
chat_send "[[mock:server-call tool=action_references_get args='{\"name\":\"api\"}']] read the api notes"
assert_py "the model's call: the URL's content in its next request" <<'EOF2'
status ==> 200
no approval card :: r.get('type') != 'approval-required' ==> True
ran :: [(c['name'], c['ok']) for c in r['serverCalls']] ==> [('references.get', True)]
fresp(reqs[1])[0]['response']['result'] ==> {'name': 'api', 'content': "Document api: the mock's text for api.\n"}
EOF2
# A worker fetched it once; another call on the same worker is served
# from its cache, so at most one fetch per worker (2 workers)
for _ in 1 2 3 4; do req POST /_jay/actions/references.get '{"name":"api"}'; done
search_mock_save after /__count
assert_py "fetched lazily and cached per process" <<'EOF2'
status ==> 200
at most one fetch per worker :: 1 <= S['after'].get('/doc/api', 0) - S['before'].get('/doc/api', 0) <= 2 ==> True
EOF2
stop_stack

# A missing file: named, left out, the server serves
start_stack --mock --limits "{$CHAT_LIMITS}" \
    --yaml "plugins: {config: {references: {sources: {manual: {file: no/such.md}}}}}"
assert_log_has "source 'manual': cannot read" "a missing file is reported with the source's name"
req GET /_jay/actions
assert_py "the plugin is left out, the rest serves" <<'EOF2'
status ==> 200
[a['name'] for a in r['actions'] if a['name'].startswith('references')] ==> []
'shop.searchProducts' in [a['name'] for a in r['actions']] ==> True
EOF2
stop_stack

stop_mock
stop_search_mock
finish
