#!/bin/bash
# t_plugins.sh - a plugin built outside the tree, as a
# shared object against include/gemini-agent/plugin.h alone
# (tests/plugins/Makefile gives only -I<repo>/include), loaded from
# agent.yaml's plugins.dirs into the one registry, through nginx + the
# responder + the mock Gemini server:
#
#  - hello.so's tool is listed by GET /_jay/actions, runs over
#    POST /_jay/actions/hello.greet with its plugins.config (greeting), and
#    its arguments are validated against its schema before it runs;
#  - the model sees it: declared as action_hello_greet, the plugin's system
#    instructions in the system instruction; the model's call runs it and
#    the answer carries its result;
#  - broken plugins (nosym.so: no factory symbol; badabi.so: plugin ABI
#    999; hello with a configuration its initialize() refuses) are named in
#    the serve log and by `check` with their path and the reason, left out,
#    and the server serves all the same; baddecl.so's malformed tools are
#    reported and left out, its well-declared one kept;
#  - its prompt enrichment: a message with @hello reaches the model (and
#    the history) as hello rewrote it;
#  - its user command is listed by GET /_jay/commands and runs over
#    POST /_jay/commands/greeting without the model; its command with side
#    effects (forget) only as http.directActions lets such actions run;
#  - a tool that declares sideEffects waits for the visitor's approval in
#    the chat, as any action with side effects does;
#  - unexposed by a config change + SIGHUP: gone from the listing, the
#    declarations and the instruction, the server still serving;
#  - plugins.expose: a list without hello leaves its tool out everywhere;
#  - a deny entry of plugins.config.permission beats hello's auto-approved
#    greet.
source "$(dirname "${BASH_SOURCE[0]}")/chat_lib.sh"

PLUG=$T_TMP/plugins
make -s -C "$REPO/tests/plugins" OUT="$PLUG" >"$T_TMP/plugins.build" 2>&1 ||
    bail "cannot build the test plugins: $(tail -c 600 "$T_TMP/plugins.build" | tr '\n' ' ')"
for f in hello nosym badabi baddecl; do
    [ -f "$PLUG/$f.so" ] || bail "tests/plugins built no $f.so"
done
ok "the plugins build against include/ alone"

# The build really has only the public header: one that includes a
# project header beside it fails.
printf '#include <gemini-agent/plugin.h>\n#include "core/common.h"\n' >"$T_TMP/bad_include.c"
if ${CC:-cc} -std=c11 -fPIC -shared -I"$REPO/include" -o "$T_TMP/bad_include.so" \
    "$T_TMP/bad_include.c" 2>/dev/null; then
    not_ok "a plugin cannot reach project headers" "core/common.h was found with -I include only"
else
    ok "a plugin cannot reach project headers"
fi

start_mock
start_stack --mock --limits "{$CHAT_LIMITS}" \
    --yaml "plugins: {dirs: ['$PLUG'], expose: all, config: {hello: {greeting: Howdy}}}"

# ---------------------------------------------------------------------------
# The broken ones: reported with path and reason, left out; the server serves

assert_log() {
    if grep -qaF -- "$1" "$GA_LOG"; then ok "$2"; else
        not_ok "$2" "not in the serve log: $1 (log: $(tail -c 400 "$GA_LOG" | tr '\n' ' '))"
    fi
}
assert_log "$PLUG/nosym.so: plugin left out: it has no 'gemini_agent_plugin_create' symbol" \
    "log: nosym.so, missing factory, named with its path"
assert_log "$PLUG/badabi.so: plugin left out: built for plugin ABI 999" \
    "log: badabi.so, wrong ABI, named with its path"
assert_log "$PLUG/baddecl.so: plugin 'baddecl': tool 'noschema' must have" \
    "log: baddecl.so, a tool without an object schema"
assert_log "$PLUG/baddecl.so: tool 'badschema': parameters" \
    "log: baddecl.so, a tool whose schema the subset refuses"

ga_run check --config "$GA_CONF"
if [ "$rc" -ne 0 ] && grep -qF "$PLUG/nosym.so: plugin left out" <<<"$err$out" &&
    grep -qF "$PLUG/badabi.so: plugin left out: built for plugin ABI 999" <<<"$err$out"; then
    ok "check names both broken plugins and fails"
else
    not_ok "check names both broken plugins and fails" "rc=$rc: $(tr '\n' ' ' <<<"$err$out" | cut -c1-600)"
fi
if grep -qF "plugin hello ($PLUG/hello.so): 2 tools, 2 user commands, system instructions" <<<"$out"; then
    ok "check says what hello brought"
else
    not_ok "check says what hello brought" "$(tr '\n' ' ' <<<"$out" | cut -c1-600)"
fi

# ---------------------------------------------------------------------------
# The registry: listed, run directly, arguments validated

req GET /_jay/actions
assert_py "listed beside the .jay-action ones" <<'EOF'
status ==> 200
hello :: [a for a in r['actions'] if a['name'] == 'hello.greet'][0]['description'] ==> 'Greet someone by name'
its schema :: [a for a in r['actions'] if a['name'] == 'hello.greet'][0]['inputSchema']['required'] ==> ['who']
read-only :: [a for a in r['actions'] if a['name'] == 'hello.greet'][0]['sideEffects'] ==> False
the shop is still there :: 'shop.searchProducts' in [a['name'] for a in r['actions']] ==> True
the broken ones are not :: [a['name'] for a in r['actions'] if a['name'].startswith(('nosym', 'badabi'))] ==> []
baddecl's fine tool only :: [a['name'] for a in r['actions'] if a['name'].startswith('baddecl')] ==> ['baddecl.fine']
EOF

req POST /_jay/actions/hello.greet '{"who":"Ann"}'
assert_py "run over POST /_jay/actions/hello.greet" <<'EOF'
status ==> 200
the plugin's answer, with its config :: json.dumps(r).count('Howdy, Ann!') ==> 1
EOF

req POST /_jay/actions/hello.greet '{"who":5}'
assert_error 422 schema_violation "a wrong type is refused by the schema before the plugin runs"
req POST /_jay/actions/hello.greet '{"who":"Ann","extra":1}'
assert_error 422 schema_violation "additionalProperties: false holds"

# ---------------------------------------------------------------------------
# The model: declared, instructed, called

mock_reset
chat_send "[[mock:server-call tool=action_hello_greet args='{\"who\":\"Bob\"}']] hello there"
assert_py "the model's call runs the plugin" <<'EOF'
status ==> 200
the answer carries its result :: 'Howdy, Bob!' in r['message'] ==> True
two Gemini calls :: len(reqs) ==> 2
declared to the model :: 'action_hello_greet' in [d['name'] for t in reqs[0]['body']['tools'] for d in t.get('functionDeclarations', [])] ==> True
with its description :: [d for t in reqs[0]['body']['tools'] for d in t.get('functionDeclarations', []) if d['name'] == 'action_hello_greet'][0]['description'] ==> 'Greet someone by name'
its instructions in the prompt :: 'HELLO-PLUGIN: when the visitor says hello' in reqs[0]['body']['systemInstruction']['parts'][0]['text'] ==> True
the result went back to the model :: 'Howdy, Bob!' in json.dumps(reqs[1]['body']['contents'][-1]) ==> True
EOF

# User commands, without the model
mock_reset
req GET /_jay/commands
assert_py "GET /_jay/commands lists hello's command" <<'EOF'
status ==> 200
r ==> {'commands': [{'name': 'forget', 'description': 'Forget what hello knows (a side effect)', 'shareWithModel': False, 'sideEffects': True}, {'name': 'greeting', 'description': 'Say the configured greeting', 'shareWithModel': True, 'sideEffects': False}]}
EOF
req POST /_jay/commands/forget '{}'
assert_error 403 forbidden "a command with side effects is not for anyone who can reach the URL"
req POST /_jay/commands/greeting '{"args":"at noon"}'
assert_py "POST /_jay/commands/greeting runs it" <<'EOF'
status ==> 200
r ==> {'command': 'greeting', 'output': 'Howdy (at noon)', 'shareWithModel': True}
no Gemini call :: len(reqs) ==> 0
EOF
req POST /_jay/commands/nope '{}'
assert_error 404 unknown_action "an unknown command"
req POST /_jay/commands/greeting '{"args":5}'
assert_error 400 bad_request "args must be a string"

# The memory plugin (exposed by default: the site hands it the run API's
# store) needs a signed-in user: never declared to the widget, not in the
# public catalog, refused over the direct route
mock_reset
chat_send "what do you remember about me?"
assert_py "memory: not declared to the widget" <<'EOF'
status ==> 200
'action_memory_' in json.dumps(reqs[0]['body'].get('tools', [])) ==> False
'action_hello_greet' in json.dumps(reqs[0]['body'].get('tools', [])) ==> True
EOF
req GET /_jay/actions
assert_py "memory: not in the public catalog" <<'EOF'
status ==> 200
[a['name'] for a in r['actions'] if a['name'].startswith('memory.')] ==> []
EOF
req POST /_jay/actions/memory.search '{"query":"tea"}'
assert_py "memory: refused without a signed-in user" <<'EOF'
status ==> 400
r['error']['code'] ==> 'bad_request'
r['error']['message'] ==> 'memory is only for a signed-in user'
EOF

# Prompt enrichment: hello tags a message that says @hello; the tagged
# text is what Gemini reads and what the history keeps; others pass as
# they are
mock_reset
chat_send "@hello what is new"
assert_py "enrichment: the user turn Gemini reads is hello's" <<'EOF2'
status ==> 200
reqs[0]['body']['contents'][-1] ==> {'role': 'user', 'parts': [{'text': '@hello what is new [hello was here]'}]}
the history keeps it :: r['history'][0] ==> {'role': 'user', 'parts': [{'text': '@hello what is new [hello was here]'}]}
EOF2
mock_reset
chat_send "just what is new"
assert_py "enrichment: a prompt hello does not subscribe to goes as it is" <<'EOF2'
status ==> 200
reqs[0]['body']['contents'][-1] ==> {'role': 'user', 'parts': [{'text': 'just what is new'}]}
EOF2

mock_reset
chat_send "[[mock:server-call tool=action_hello_wave args='{}']] wave at me"
assert_py "sideEffects: the chat asks the visitor first" <<'EOF'
status ==> 200
r['type'] ==> 'approval-required'
r['approval']['tool'] ==> 'hello.wave'
nothing ran :: r['serverCalls'] ==> []
EOF

# SIGHUP re-exposes exactly what changed: hello.log has a line for each
# initialize() and shutdown() of hello (in dataDir)
HLOG=$ST_DIR/var/hello.log
reloads() { grep -c 'configuration reloaded' "$GA_LOG"; }
sighup() {
    local before
    before=$(reloads)
    kill -HUP "$GA_PID"
    wait_until 5000 eval '[ "$(reloads)" -gt "$before" ]' ||
        bail "the responder did not reload: $(tail -c 400 "$GA_LOG")"
}
[ -f "$HLOG" ] || bail "hello wrote no $HLOG"
lines=$(wc -l <"$HLOG")
sighup
req POST /_jay/actions/hello.greet '{"who":"Ann"}'
assert_py "SIGHUP with nothing changed: hello keeps its instance" <<EOF
status ==> 200
r ==> {'greeting': 'Howdy, Ann!'}
no initialize, no shutdown :: open('$HLOG').read().splitlines()[$lines:] ==> []
EOF
sed -i 's/greeting: Howdy/greeting: Hiya/' "$GA_CONF"
sighup
req POST /_jay/actions/hello.greet '{"who":"Ann"}'
assert_py "SIGHUP with a new config: hello is started with it, then the old one stops" <<EOF
status ==> 200
r ==> {'greeting': 'Hiya, Ann!'}
open('$HLOG').read().splitlines()[$lines:] ==> ['init Hiya', 'shutdown Howdy']
EOF
lines=$(wc -l <"$HLOG")

# Unexposed by a config change and SIGHUP
sed -i 's/expose: all/expose: [shop]/' "$GA_CONF"
grep -q 'expose: \[shop\]' "$GA_CONF" || bail "cannot edit $GA_CONF"
kill -HUP "$GA_PID"
hello_gone() {
    req GET /_jay/actions
    [ "$RES_STATUS" = 200 ] && ! grep -q '"hello\.' "$RES_BODY"
}
if wait_until 5000 hello_gone; then ok "SIGHUP: hello is no longer listed"; else
    not_ok "SIGHUP: hello is no longer listed" "$(body_excerpt)"
fi
req POST /_jay/actions/hello.greet '{"who":"Ann"}'
assert_error 404 unknown_action "SIGHUP: hello.greet cannot be run"
req GET /_jay/commands
assert_py "SIGHUP: no commands" <<'EOF'
status ==> 200
r ==> {'commands': []}
EOF
mock_reset
chat_send "hello again"
assert_py "SIGHUP: not declared, not instructed, still serving" <<'EOF'
status ==> 200
'action_hello_greet' in json.dumps(reqs[0]['body'].get('tools', [])) ==> False
'HELLO-PLUGIN' in reqs[0]['body']['systemInstruction']['parts'][0]['text'] ==> False
the shop's tools are still declared :: 'action_shop_searchProducts' in json.dumps(reqs[0]['body'].get('tools', [])) ==> True
EOF
assert_py "SIGHUP unexposing hello shuts its instance down" <<EOF
open('$HLOG').read().splitlines()[$lines:] ==> ['shutdown Hiya']
EOF
stop_stack

# ---------------------------------------------------------------------------
# plugins.expose: a list without hello; an expose name nobody has

start_stack --mock --limits "{$CHAT_LIMITS}" \
    --yaml "plugins: {dirs: ['$PLUG'], expose: [nothere]}"
assert_log "plugins.expose names 'nothere'" "log: an expose name no plugin has"
req GET /_jay/actions
assert_py "unexposed: not listed" <<'EOF'
status ==> 200
[a['name'] for a in r['actions'] if a['name'].startswith('hello')] ==> []
a plugin.yaml plugin is unexposed alike :: [a['name'] for a in r['actions'] if a['name'].startswith('shop')] ==> []
the chat protocol's own plugin stays :: 'geminiAgent.sendMessage' in [a['name'] for a in r['actions']] ==> True
EOF
req POST /_jay/actions/shop.searchProducts '{"query":"mug"}'
assert_error 404 unknown_action "unexposed: shop's actions cannot be run"
ga_run check --config "$GA_CONF"
if grep -qx "plugins exposed: geminiAgent" <<<"$out" &&
    grep -qE "^plugins available, not exposed: .*hello" <<<"$out" &&
    grep -qE "^plugins available, not exposed: .*shop" <<<"$out"; then
    ok "check lists the exposed and the available plugins"
else
    not_ok "check lists the exposed and the available plugins" "$(tr '\n' ' ' <<<"$out" | cut -c1-600)"
fi
req POST /_jay/actions/hello.greet '{"who":"Ann"}'
assert_error 404 unknown_action "unexposed: cannot be run"
mock_reset
chat_send "hello"
assert_py "unexposed: not declared, not instructed" <<'EOF'
status ==> 200
'action_hello_greet' in json.dumps(reqs[0]['body'].get('tools', [])) ==> False
'HELLO-PLUGIN' in reqs[0]['body']['systemInstruction']['parts'][0]['text'] ==> False
EOF
stop_stack

# ---------------------------------------------------------------------------
# initialize() refuses its configuration: reported, left out, still serving

start_stack --mock --limits "{$CHAT_LIMITS}" \
    --yaml "plugins: {dirs: ['$PLUG'], config: {hello: {greeting: fail}}}"
assert_log "$PLUG/hello.so: plugin left out: 'hello' failed to initialise: greeting 'fail' asked me to fail" \
    "log: a failing initialize(), with the plugin's reason"
req GET /_jay/actions
assert_py "a failed initialize leaves the plugin out, the rest serve" <<'EOF'
status ==> 200
[a['name'] for a in r['actions'] if a['name'].startswith('hello')] ==> []
'shop.searchProducts' in [a['name'] for a in r['actions']] ==> True
EOF
stop_stack

# ---------------------------------------------------------------------------
# The permission policy beats a tool the plugin auto-approves

start_stack --mock --limits "{$CHAT_LIMITS}" \
    --yaml "plugins: {dirs: ['$PLUG'], config: {permission: {deny: [hello.greet]}}}"
mock_reset
chat_send "[[mock:server-call tool=action_hello_greet args='{\"who\":\"Bob\"}']] hello there"
assert_py "auto-approved, but denied: not run, the model reads why" <<'EOF'
status ==> 200
not run :: [(c['name'], c['ok']) for c in r['serverCalls']] ==> [('hello.greet', False)]
'permission policy denies' in reqs[-1]['body']['contents'][2]['parts'][0]['functionResponse']['response']['error'] ==> True
the greeting never ran :: 'Hello, Bob' in json.dumps(reqs[-1]['body']['contents']) ==> False
EOF
stop_stack
stop_mock

finish
