#!/bin/bash
# t_terminal_only.sh - the built-in plugins for the terminal client only
# (cli and file_edit: GEMINI_AGENT_TERMINAL_ONLY) are never exposed on the
# web routes, through nginx + the responder + the mock Gemini server:
#
#  - a site that names them (plugins.expose: [cli, file_edit]) still
#    starts and serves; the serve log and `gemini-agent check` say, for
#    each, that it is for the terminal client only;
#  - GET /_jay/actions lists none of their tools, POST to one is an
#    unknown action, and the model is not offered them;
#  - `expose: all` with their plugins.config (which exposes a configured
#    built-in) still never exposes them, and the directory the cli config
#    names stays untouched.
source "$(dirname "${BASH_SOURCE[0]}")/chat_lib.sh"

assert_log() {
    if grep -qaF -- "$1" "$GA_LOG"; then ok "$2"; else
        not_ok "$2" "not in the serve log: $1 (log: $(tail -c 400 "$GA_LOG" | tr '\n' ' '))"
    fi
}

# assert_none_listed NAME: GET /_jay/actions lists no cli.* / file_edit.*
assert_none_listed() {
    req GET /_jay/actions
    assert_py "$1" <<'EOF'
status ==> 200
none of theirs :: [a['name'] for a in r['actions'] if a['name'].split('.')[0] in ('cli', 'file_edit')] ==> []
the shop is still there :: 'shop.searchProducts' in [a['name'] for a in r['actions']] ==> True
EOF
}

WORK=$T_TMP/work
mkdir -p "$WORK"

start_mock
start_stack --mock --limits "{$CHAT_LIMITS}" \
    --yaml "plugins: {expose: [shop, cli, file_edit], config: {cli: {root: '$WORK'}, file_edit: {root: '$WORK'}}}"
ok "the server starts with cli and file_edit named in plugins.expose"

for p in cli file_edit; do
    assert_log "plugin '$p' is for the terminal client only" \
        "log: $p is refused on the web, and named"
done

ga_run check --config "$GA_CONF"
for p in cli file_edit; do
    if grep -qF "plugin '$p' is for the terminal client only" <<<"$err$out"; then
        ok "check says $p is for the terminal client only"
    else
        not_ok "check says $p is for the terminal client only" \
            "rc=$rc: $(tr '\n' ' ' <<<"$err$out" | cut -c1-600)"
    fi
done

assert_none_listed "GET /_jay/actions lists none of their tools"

req POST /_jay/actions/cli.Bash '{"command":"touch pwned"}'
assert_error 404 unknown_action "POST /_jay/actions/cli.Bash is an unknown action"
req POST /_jay/actions/file_edit.Write "{\"file_path\":\"$WORK/pwned\",\"content\":\"x\"}"
assert_error 404 unknown_action "POST /_jay/actions/file_edit.Write is an unknown action"

# The model is not offered them, and a call it makes anyway runs nothing
mock_reset
chat_send "[[mock:server-call tool=action_cli_Bash args='{\"command\":\"touch pwned\"}']] go"
assert_py "the model is offered none of their tools" <<'EOF'
status ==> 200
the model was asked :: len(reqs) >= 1 ==> True
declared :: [d['name'] for q in reqs for t in q['body'].get('tools', []) for d in t.get('functionDeclarations', []) if d['name'].startswith(('action_cli', 'action_file_edit'))] ==> []
not in the instructions :: any('Bash runs a shell command' in q['body']['systemInstruction']['parts'][0]['text'] or 'The file tools (Read' in q['body']['systemInstruction']['parts'][0]['text'] or 'file_edit' in q['body']['systemInstruction']['parts'][0]['text'] for q in reqs) ==> False
EOF

stop_stack

# expose: all exposes a configured built-in - but never these
start_stack --mock --limits "{$CHAT_LIMITS}" \
    --yaml "plugins: {expose: all, config: {cli: {root: '$WORK', timeoutMs: 1000}, file_edit: {root: '$WORK'}}}"
ok "the server starts with expose: all and their config"
assert_none_listed "expose: all with their config: none of their tools listed"
req POST /_jay/actions/cli.Bash '{"command":"touch pwned"}'
assert_error 404 unknown_action "expose: all: cli.Bash is still an unknown action"

if [ -z "$(ls -A "$WORK")" ]; then
    ok "nothing ran in the folder their config names"
else
    not_ok "nothing ran in the folder their config names" "$(ls -A "$WORK" | tr '\n' ' ')"
fi

finish
