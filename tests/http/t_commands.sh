#!/bin/bash
# t_commands.sh - the site owner's commands: setup, check, actions list |
# show | types, agent-kit. No server is started; everything runs in the
# test's temp dir against copies of the repo's conf/ and actions/.
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_binary

T=$T_TMP
ga() { env -u GEMINI_API_KEY -u GOOGLE_API_KEY "$GA_BIN" "$@"; }

# --- setup -----------------------------------------------------------------
# From a folder outside the checkout, with no template beside it: the text
# is built into the binary (conf/gemini.yaml.template, byte for byte).
mkdir -p "$T/elsewhere"
out=$(cd "$T/elsewhere" && ga setup --config-dir "$T/new/deep/conf" 2>&1); rc=$?
check "setup succeeds from any folder" test "$rc" -eq 0
check "setup writes .gemini.yaml" test -f "$T/new/deep/conf/.gemini.yaml"
mode=$(stat -c %a "$T/new/deep/conf/.gemini.yaml")
check "setup file mode is 0600 (got $mode)" test "$mode" = 600
check "setup writes the built-in template (conf/gemini.yaml.template)" \
    cmp -s "$REPO/conf/gemini.yaml.template" "$T/new/deep/conf/.gemini.yaml"
check "setup makes the folder and its parents, mode 0700" bash -c '
    for d in "$1/new" "$1/new/deep" "$1/new/deep/conf"; do
        [ "$(stat -c %a "$d")" = 700 ] || exit 1
    done' _ "$T"
check "setup says what to edit next" grep -q "apiKey" <<<"$out"
echo "apiKey: 'edited-by-owner'" >"$T/new/deep/conf/.gemini.yaml"
out=$(ga setup --config-dir "$T/new/deep/conf" 2>&1); rc=$?
check "setup refuses to overwrite (exit 1)" test "$rc" -eq 1
check "setup explains the refusal" grep -q "already exists" <<<"$out"
check "setup left the edited file alone" grep -q edited-by-owner "$T/new/deep/conf/.gemini.yaml"
# An existing folder keeps its mode.
mkdir -p "$T/existing" && chmod 755 "$T/existing"
ga setup --config-dir "$T/existing" >/dev/null 2>&1
check "setup into an existing folder leaves its mode alone" \
    bash -c '[ "$(stat -c %a "$1")" = 755 ] && [ -f "$1/.gemini.yaml" ]' _ "$T/existing"
# A file where the folder should be.
touch "$T/a-file"
out=$(ga setup --config-dir "$T/a-file/conf" 2>&1); rc=$?
check "setup under a file fails and names it" \
    bash -c '[ "$1" -eq 1 ] && grep -q "a-file" <<<"$2"' _ "$rc" "$out"
# No option and no DIR: a whole site in the current folder (t_setup.sh in
# tests/deploy tests it through), whatever $GEMINI_AGENT_CONFIG says.
out=$(cd "$T/elsewhere" && GEMINI_AGENT_CONFIG="$T/site-b/agent.yaml" ga setup 2>&1); rc=$?
check "setup without DIR or --config-dir makes a site in the current folder" \
    bash -c '[ "$1" -eq 0 ] && [ -f "$2/agent.yaml" ] && [ ! -e "$3/site-b" ] &&
             [ "$(stat -c %a "$2/.gemini.yaml")" = 600 ] &&
             cmp -s "$4/conf/gemini.yaml.template" "$2/.gemini.yaml"' _ "$rc" "$T/elsewhere" "$T" "$REPO"

# --- check: a clean configuration -------------------------------------------
mkdir -p "$T/site/conf" "$T/site/actions"
cp -r "$REPO/actions/shop" "$T/site/actions/"
# the site secret a site serving the chat needs (history.verify: strict)
head -c 32 /dev/urandom >"$T/site/conf/site.key" && chmod 600 "$T/site/conf/site.key"
cp "$T/site/conf/site.key" "$T/site.key"
cat >"$T/site/conf/agent.yaml" <<'EOF'
limits:
  maxBodyBytes: 4096
auth: {secretFile: site.key}
EOF
printf "apiKey: 'AIza-test-key-for-check'\n" >"$T/site/conf/.gemini.yaml"
chmod 600 "$T/site/conf/.gemini.yaml"
out=$(ga check --config "$T/site/conf/agent.yaml" 2>&1); rc=$?
check "check passes a sound configuration" test "$rc" -eq 0
check "check says ok" grep -qx "ok" <<<"$out"
check "check never prints the key" bash -c '! grep -q AIza-test-key-for-check <<<"$1"' _ "$out"

# --- check: a plugin.yaml written for jay-stack -----------------------------
# Its global, contracts and setup keys are accepted: one note each, with
# file and line, no problem, exit 0.
mkdir -p "$T/jay/conf" "$T/jay/actions"
cp -r "$REPO/tests/unit/data/plugins/jay-stack/shop" "$T/jay/actions/"
cp "$T/site.key" "$T/jay/conf/site.key"
echo 'auth: {secretFile: site.key}' >"$T/jay/conf/agent.yaml"
printf "apiKey: 'AIza-test-key-for-check'\n" >"$T/jay/conf/.gemini.yaml"
chmod 600 "$T/jay/conf/.gemini.yaml"
out=$(ga check --config "$T/jay/conf/agent.yaml" 2>&1); rc=$?
check "check passes a jay-stack plugin.yaml (exit 0)" test "$rc" -eq 0
check "... and says ok" grep -qx "ok" <<<"$out"
for kl in global:4 contracts:5 setup:10; do
    check "... with a note for '${kl%:*}' at its line" \
        grep -q "^note: .*/shop/plugin.yaml:${kl#*:}: '${kl%:*}' is a jay-stack key" <<<"$out"
done
check "... and no unknown key" bash -c '! grep -qi "unknown key" <<<"$1"' _ "$out"
check "... its actions load (and the memory plugin's two)" grep -q "6 actions (3 exposed" <<<"$out"

# --- check: every problem on its own line, file:line: message ---------------
cat >"$T/site/conf/agent.yaml" <<'EOF'
limits:
  maxBodyBytes: lots
  colour: blue
EOF
out=$(ga check --config "$T/site/conf/agent.yaml" 2>&1); rc=$?
check "check fails a bad agent.yaml (exit 1)" test "$rc" -eq 1
check "wrong type named with file:line and key" \
    grep -q "agent.yaml:2: 'limits.maxBodyBytes' must be an integer" <<<"$out"
check "unknown key named with file:line" grep -q "agent.yaml:3: unknown key 'colour'" <<<"$out"
echo 'limits: {maxLoopSteps: 99}' >"$T/site/conf/agent.yaml"
out=$(ga check --config "$T/site/conf/agent.yaml" 2>&1)
check "out-of-range value is named" grep -q "agent.yaml:1: 'limits.maxLoopSteps' is 99" <<<"$out"
printf 'base: &b {a: 1}\nlimits: *b\n' >"$T/site/conf/agent.yaml"
out=$(ga check --config "$T/site/conf/agent.yaml" 2>&1)
check "aliases are refused" grep -qi "anchor\|alias" <<<"$out"
python3 -c "print('a:' + ' [' * 100000)" >"$T/site/conf/agent.yaml"
start=$(now_ms)
out=$(ga check --config "$T/site/conf/agent.yaml" 2>&1); rc=$?
took=$(($(now_ms) - start))
check "a 100 000-deep document is refused" test "$rc" -eq 1
check "... in well under a second (${took} ms)" test "$took" -lt 500
echo 'auth: {secretFile: site.key}' >"$T/site/conf/agent.yaml"

# A broken plugin next to a good one: reported with file and line, and the
# good one still loads.
mkdir -p "$T/site/actions/broken"
cat >"$T/site/actions/broken/plugin.yaml" <<'EOF'
name: broken
actions:
  - name: doThing
    action: ./do-thing.jay-action
EOF
cat >"$T/site/actions/broken/do-thing.jay-action" <<'EOF'
name: doThing
description: Does a thing.
inputSchema:
  type: object
  properties:
    x:
      oneOf: [{type: string}]
EOF
out=$(ga check --config "$T/site/conf/agent.yaml" 2>&1); rc=$?
check "check fails on a broken plugin" test "$rc" -eq 1
check "unsupported keyword reported at its line" \
    grep -q "do-thing.jay-action:7: inputSchema/properties/x/oneOf: unsupported keyword 'oneOf'" <<<"$out"
check "a .jay-action without a handler is reported" \
    grep -q "plugin.yaml:3: no handler is compiled in for 'broken.doThing'" <<<"$out"
check "the good plugin still loads" grep -q "6 actions (5 exposed" <<<"$out"
rm -rf "$T/site/actions/broken"

# A compiled-in handler that no entry names.
sed -i '/listCategories/d' "$T/site/actions/shop/plugin.yaml"
out=$(ga check --config "$T/site/conf/agent.yaml" 2>&1); rc=$?
check "a handler without an entry fails check" test "$rc" -eq 1
check "... and is named" grep -q "handler 'shop.listCategories' is compiled in but no plugin.yaml entry names it" <<<"$out"
cp "$REPO/actions/shop/plugin.yaml" "$T/site/actions/shop/plugin.yaml"

# --- check: the API key -----------------------------------------------------
cp "$REPO/conf/gemini.yaml.template" "$T/site/conf/.gemini.yaml"
out=$(ga check --config "$T/site/conf/agent.yaml" 2>&1); rc=$?
check "a placeholder key fails check" test "$rc" -eq 1
check "... and says so" grep -q "placeholder" <<<"$out"
out=$(GEMINI_API_KEY=env-canary-424242 "$GA_BIN" check --config "$T/site/conf/agent.yaml" 2>&1); rc=$?
check "a key from GEMINI_API_KEY passes" test "$rc" -eq 0
check "... with a note naming GEMINI_API_KEY" grep -q "note: the API key comes from GEMINI_API_KEY" <<<"$out"
check "... and without printing it" bash -c '! grep -q env-canary-424242 <<<"$1"' _ "$out"
out=$(env -u GEMINI_API_KEY GOOGLE_API_KEY=google-canary-99 "$GA_BIN" check --config "$T/site/conf/agent.yaml" 2>&1)
check "GOOGLE_API_KEY is noted too" grep -q "comes from GOOGLE_API_KEY" <<<"$out"
rm -f "$T/site/conf/.gemini.yaml"
out=$(ga check --config "$T/site/conf/agent.yaml" 2>&1); rc=$?
check "a missing .gemini.yaml fails check and points at setup" \
    bash -c '[ "$1" -eq 1 ] && grep -q "gemini-agent setup" <<<"$2"' _ "$rc" "$out"
printf "apiKey: ''\n" >"$T/site/conf/.gemini.yaml"
out=$(ga check --config "$T/site/conf/agent.yaml" 2>&1); rc=$?
check "an empty key fails check" bash -c '[ "$1" -eq 1 ] && grep -q "empty" <<<"$2"' _ "$rc" "$out"
printf "apiKey: 'AIza-test-key-for-check'\n" >"$T/site/conf/.gemini.yaml"
chmod 600 "$T/site/conf/.gemini.yaml"

# --- actions list / show ----------------------------------------------------
CFG=$T/site/conf/agent.yaml
out=$(ga actions list --config "$CFG" 2>&1)
check "list names every action" bash -c 'for a in searchProducts getProductBySlug addReview listCategories; do grep -q "shop.$a" <<<"$1" || exit 1; done' _ "$out"
check "list marks HTTP-only entries" grep -q "shop.listCategories.*http only" <<<"$out"
check "list marks side effects" grep -q "shop.addReview.*side effects" <<<"$out"
ga actions show shop.searchProducts --config "$CFG" >"$T/show.json" 2>&1
check "show prints the action as JSON with its schema" python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
assert a["name"] == "shop.searchProducts"
assert a["functionName"] == "action_shop_searchProducts"
assert a["inputSchema"]["required"] == ["query"]
assert a["sideEffects"] is False' "$T/show.json"
ga actions show shop.nope --config "$CFG" >/dev/null 2>&1
check "show of an unknown action fails" test $? -eq 1

# --- actions types ----------------------------------------------------------
ga actions types --out "$T/types" --config "$CFG" >/dev/null 2>&1
check "types writes a .d.ts per exposed action" test "$(ls "$T/types" | wc -l)" -eq 3
D=$T/types/search-products.jay-action.d.ts
check "types: Input interface" grep -q "export interface SearchProductsInput" "$D"
check "types: Output interface" grep -q "export interface SearchProductsOutput" "$D"
check "types: required property" grep -qE "^ +query: string;" "$D"
check "types: optional property" grep -qE "^ +limit\?: number;" "$D"
check "types: nested array of objects" grep -q "products:" "$D"
check "types: no file for HTTP-only entries" bash -c '! ls "$1" | grep -qi categor' _ "$T/types"
ga actions types --config "$CFG" >/dev/null 2>&1
check "types without --out writes next to the .jay-action" \
    test -f "$T/site/actions/shop/add-review.jay-action.d.ts"
check "types: integer bounds become number" grep -qE "rating: number;" "$T/site/actions/shop/add-review.jay-action.d.ts"

# The real actions folder: the chat protocol's two actions get their types
# too (actions/geminiAgent), next to the shop's.
REAL=$T/real/conf/agent.yaml
mkdir -p "$T/real/conf"
printf "actions: ['%s/actions']\ndataDir: '%s/real/var'\n" "$REPO" "$T" >"$REAL"
out=$(ga actions types --out "$T/real-types" --config "$REAL" 2>&1); rc=$?
check "types on the real actions folder succeeds" test "$rc" -eq 0
check "... one file per listed action (5)" test "$(ls "$T/real-types" | wc -l)" -eq 5
for i in SendMessageInput SendMessageOutput SubmitToolResultsInput SubmitToolResultsOutput; do
    check "types: export interface $i" grep -rq "^export interface $i {" "$T/real-types"
done
check "types: the answer's type is a union of its kinds" \
    grep -q 'type: "response" | "tool-calls" | "blocked" | "approval-required" | "question";' "$T/real-types/send-message.jay-action.d.ts"
out=$(ga actions list --config "$REAL" 2>&1)
check "list marks the chat protocol's actions as the chat route's" \
    bash -c 'grep -q "^geminiAgent.sendMessage  *\[chat route\]" <<<"$1" && grep -q "^geminiAgent.submitToolResults  *\[chat route\]" <<<"$1"' _ "$out"
ga actions show geminiAgent.sendMessage --config "$REAL" >"$T/show-chat.json" 2>&1
check "show: a chat route's action, listed, not exposed, no function name" python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
assert a["route"] == "chat" and a["listed"] is True and a["exposed"] is False
assert "functionName" not in a
assert a["inputSchema"]["required"] == ["message"]' "$T/show-chat.json"
ga agent-kit --out "$T/real-kit" --config "$REAL" >/dev/null 2>&1
check "agent-kit lists the chat protocol's actions with route: chat, no functionName" python3 -c '
import sys
text = open(sys.argv[1]).read()
items = text.split("\n  - ")[1:]
chat = [i for i in items if i.startswith("name: geminiAgent.")]
assert len(chat) == 2, chat
assert all("route: chat" in i and "functionName" not in i for i in chat)
assert all("functionName: action_shop_" in i for i in items if i.startswith("name: shop."))' "$T/real-kit/actions-index.yaml"

# --- agent-kit ---------------------------------------------------------------
ga agent-kit --out "$T/kit" --config "$CFG" >/dev/null 2>&1
K=$T/kit/actions-index.yaml
check "agent-kit writes actions-index.yaml" test -s "$K"
check "agent-kit lists every exposed action" bash -c 'for a in searchProducts getProductBySlug addReview; do grep -q "name: shop.$a" "$1" || exit 1; done' _ "$K"
check "agent-kit leaves out HTTP-only entries" bash -c '! grep -q listCategories "$1"' _ "$K"
check "agent-kit records schemas and source files" bash -c 'grep -q "inputSchema:" "$1" && grep -q "source: .*search-products.jay-action" "$1"' _ "$K"
# The index must be YAML our own strict loader accepts. Feed it to `check`
# as if it were agent.yaml: the loader parses the whole document before
# looking at keys, so the only complaints must be about the shape of
# `actions` (a list of mappings, where agent.yaml wants folder names).
cp "$K" "$T/kit/as-config.yaml"
out=$(ga check --config "$T/kit/as-config.yaml" 2>&1)
check "agent-kit output parses as YAML" \
    bash -c 'grep -q "as-config.yaml:[0-9]*: .actions. must be" <<<"$1" && ! grep -v "actions. must be\|^problems found" <<<"$1" | grep -q .' _ "$out"

# --- command lines: each command takes only its own options ----------------
# run_ga ARGS...: run the binary; sets rc, and out / err to what it wrote on
# stdout / stderr. It runs in $T/cwd and is bounded, so a serve that wrongly
# accepted its command line neither binds in the checkout nor hangs the test.
mkdir -p "$T/cwd"
run_ga() {
    (cd "$T/cwd" && timeout -k 2 10 env -u GEMINI_API_KEY -u GOOGLE_API_KEY \
        "$GA_BIN" "$@") >"$T/ga.out" 2>"$T/ga.err"
    rc=$?
    out=$(cat "$T/ga.out")
    err=$(cat "$T/ga.err")
}

# usage_error LABEL STDERR_TEXT USAGE_LINE ARGS...: ga ARGS exits 2 and
# writes nothing on stdout; stderr holds STDERR_TEXT and, on its own line,
# USAGE_LINE (the command's usage), but not the whole command list.
usage_error() {
    local label=$1 text=$2 usage=$3
    shift 3
    run_ga "$@"
    if [ "$rc" -eq 2 ] && [ -z "$out" ] && grep -qF -- "$text" <<<"$err" &&
        grep -qxF -- "$usage" <<<"$err" && ! grep -q "COMMAND" <<<"$err"; then
        ok "$label"
    else
        not_ok "$label" "exit $rc; stderr: $(head -c 300 <<<"$err" | tr '\n' '|'); stdout: $(head -c 100 <<<"$out")"
    fi
}

U_SERVE='usage: gemini-agent serve [--config FILE] (--socket PATH | --listen HOST:PORT)'
U_SETUP='usage: gemini-agent setup [DIR | --config-dir DIR | --config FILE]'
U_CHECK='usage: gemini-agent check [--config FILE] [--web-user NAME]'
U_ACTIONS='usage: gemini-agent actions list|show NAME|types [--out DIR] [--config FILE]'
U_ACTIONS_LIST='usage: gemini-agent actions list [--config FILE]'
U_ACTIONS_SHOW='usage: gemini-agent actions show NAME [--config FILE]'
U_ACTIONS_TYPES='usage: gemini-agent actions types [--out DIR] [--config FILE]'
U_KIT='usage: gemini-agent agent-kit --out DIR [--config FILE]'

usage_error "check --workers 3: unknown option, check's usage, exit 2" \
    "gemini-agent check: unknown option '--workers'" "$U_CHECK" \
    check --workers 3 --config "$CFG"
usage_error "check --config without a value" \
    "gemini-agent check: --config needs a value" "$U_CHECK" check --config
usage_error "check with a stray word" \
    "gemini-agent check: unexpected argument 'extra'" "$U_CHECK" \
    check extra --config "$CFG"
usage_error "check --socket (a serve option)" \
    "gemini-agent check: unknown option '--socket'" "$U_CHECK" \
    check --socket "$T/s" --config "$CFG"

# Would setup take --listen, it would write a .gemini.yaml here.
mkdir -p "$T/guard"
usage_error "setup --listen x: unknown option, setup's usage" \
    "gemini-agent setup: unknown option '--listen'" "$U_SETUP" \
    setup --config-dir "$T/guard" --listen x
check "... and setup wrote nothing" test ! -e "$T/guard/.gemini.yaml"
usage_error "setup --config and --config-dir: one or the other" \
    "gemini-agent setup: give --config-dir or --config, not both" "$U_SETUP" \
    setup --config-dir "$T/guard" --config "$CFG"
check "... and setup wrote nothing" test ! -e "$T/guard/.gemini.yaml"

usage_error "actions list --workers 2: unknown option, the usage of actions list" \
    "gemini-agent actions list: unknown option '--workers'" "$U_ACTIONS_LIST" \
    actions list --workers 2 --config "$CFG"
usage_error "actions list --out DIR: --out is an option of types only" \
    "gemini-agent actions list: unknown option '--out'" "$U_ACTIONS_LIST" \
    actions list --out "$T/types2" --config "$CFG"
check "... and nothing was written" test ! -e "$T/types2"
usage_error "actions without a subcommand" \
    "gemini-agent actions: use list, show NAME or types [--out DIR]" "$U_ACTIONS" \
    actions --config "$CFG"
usage_error "actions with an unknown subcommand" \
    "gemini-agent actions: use list, show NAME or types [--out DIR]" "$U_ACTIONS" \
    actions frob --config "$CFG"
usage_error "actions show without a NAME" \
    "gemini-agent actions show: needs the NAME of an action" "$U_ACTIONS_SHOW" \
    actions show --config "$CFG"
usage_error "actions show with two NAMEs" \
    "gemini-agent actions show: unexpected argument 'shop.addReview'" "$U_ACTIONS_SHOW" \
    actions show shop.searchProducts shop.addReview --config "$CFG"
run_ga actions --config "$CFG" show shop.searchProducts
check "actions: options may come before the subcommand" \
    bash -c '[ "$1" -eq 0 ] && grep -q "\"name\": \"shop.searchProducts\"" <<<"$2"' _ "$rc" "$out"

usage_error "agent-kit without --out" \
    "gemini-agent agent-kit: needs --out DIR" "$U_KIT" agent-kit --config "$CFG"
usage_error "agent-kit --pid-file (a serve option)" \
    "gemini-agent agent-kit: unknown option '--pid-file'" "$U_KIT" \
    agent-kit --out "$T/kit2" --pid-file "$T/p" --config "$CFG"
check "... and nothing was written" test ! -e "$T/kit2"

usage_error "serve without --socket/--listen" \
    "gemini-agent serve: give exactly one of --socket PATH or --listen HOST:PORT" \
    "$U_SERVE" serve --config "$CFG"
usage_error "serve with both --socket and --listen" \
    "gemini-agent serve: give exactly one of --socket PATH or --listen HOST:PORT" \
    "$U_SERVE" serve --socket "$T/s" --listen 127.0.0.1:1 --config "$CFG"
usage_error "serve --socket followed by another option" \
    "gemini-agent serve: --socket needs a value" \
    "$U_SERVE" serve --socket --listen 127.0.0.1:1 --config "$CFG"
usage_error "serve --workers 0" "gemini-agent serve: --workers must be 1..64, not '0'" \
    "$U_SERVE" serve --workers 0 --socket "$T/s" --config "$CFG"
usage_error "serve --workers 65" "gemini-agent serve: --workers must be 1..64, not '65'" \
    "$U_SERVE" serve --workers 65 --socket "$T/s" --config "$CFG"
usage_error "serve --workers 2x" "gemini-agent serve: --workers must be 1..64, not '2x'" \
    "$U_SERVE" serve --workers 2x --socket "$T/s" --config "$CFG"
usage_error "serve --out (an agent-kit option)" \
    "gemini-agent serve: unknown option '--out'" \
    "$U_SERVE" serve --out "$T/x" --socket "$T/s" --config "$CFG"
check "... and serve made no socket" test ! -e "$T/s"

# --help after a command: its usage on stdout, exit 0.
for c in serve setup check actions agent-kit; do
    run_ga "$c" --help --config "$CFG"
    if [ "$rc" -eq 0 ] && [ -z "$err" ] &&
        grep -q "^usage: gemini-agent $c " <<<"$out" && ! grep -q COMMAND <<<"$out"; then
        ok "$c --help: its own usage on stdout, exit 0"
    else
        not_ok "$c --help" "exit $rc; stdout: $(head -c 200 <<<"$out" | tr '\n' '|'); stderr: $(head -c 200 <<<"$err")"
    fi
    # The command list is made from the same text: each one's options appear
    # there too.
    first=$(head -n 1 <<<"$out" | tr -s ' ')
    first=${first#"usage: gemini-agent $c "}
    if ga --help | tr -s ' ' | grep -F -- " $c $first" | grep -q "^ $c "; then
        ok "gemini-agent --help lists $c with the same options"
    else
        not_ok "gemini-agent --help lists $c" "'$c $first' missing"
    fi
done
run_ga check -h
check "check -h is --help" bash -c '[ "$1" -eq 0 ] && [ "$2" = "$3" ]' _ "$rc" "$out" "$U_CHECK"

# --help and -h after a subcommand: that subcommand's usage on stdout, exit
# 0, without loading any configuration (none exists here).
for want in "list:$U_ACTIONS_LIST" "show:$U_ACTIONS_SHOW" "types:$U_ACTIONS_TYPES"; do
    sub=${want%%:*}
    usage=${want#*:}
    for h in --help -h; do
        for args in "actions $sub $h" "actions $sub $h --config $T/none.yaml" "actions $sub x $h"; do
            # shellcheck disable=SC2086  # words on purpose
            run_ga $args
            if [ "$rc" -eq 0 ] && [ -z "$err" ] && [ "$out" = "$usage" ]; then
                ok "$args: the usage of actions $sub on stdout, exit 0"
            else
                not_ok "$args" "exit $rc; stdout: $(head -c 200 <<<"$out" | tr '\n' '|'); stderr: $(head -c 200 <<<"$err")"
            fi
        done
    done
done

# The whole command list.
run_ga --help
check "--help: the command list on stdout, exit 0" \
    bash -c '[ "$1" -eq 0 ] && grep -q "^usage: gemini-agent COMMAND" <<<"$2" && grep -q "^  agent-kit " <<<"$2"' _ "$rc" "$out"
run_ga frobnicate
check "unknown command: exit 2, named, then the command list on stderr" \
    bash -c '[ "$1" -eq 2 ] && grep -qx "gemini-agent: unknown command '\''frobnicate'\''" <<<"$2" && grep -q "^  serve " <<<"$2"' _ "$rc" "$err"
run_ga --workers 3 check
check "an option before the command is an unknown command" \
    bash -c '[ "$1" -eq 2 ] && grep -q "unknown command '\''--workers'\''" <<<"$2"' _ "$rc" "$err"
env -u GATEWAY_INTERFACE -u GEMINI_API_KEY -u GOOGLE_API_KEY "$GA_BIN" >"$T/ga.out" 2>"$T/ga.err"
rc=$?
check "no command (and not CGI): the command list on stderr, exit 2" \
    bash -c '[ "$1" -eq 2 ] && [ ! -s "$2" ] && grep -q "^usage: gemini-agent COMMAND" "$3"' _ "$rc" "$T/ga.out" "$T/ga.err"

# --- serve without --workers starts DEFAULT_WORKERS (src/proc/bounds.h) -----
DEF=$(awk '$1 == "#define" && $2 == "DEFAULT_WORKERS" {print $3}' "$REPO/src/proc/bounds.h")
GA_PIDFILE=$T/default.pid
# Not through ga(): $! must be the master itself, for stop_responder.
env -u GEMINI_API_KEY -u GOOGLE_API_KEY "$GA_BIN" serve --config "$CFG" \
    --socket "$T/default.sock" --pid-file "$GA_PIDFILE" >/dev/null 2>"$T/default.log" &
GA_PID=$!
T_BG_PIDS+=("$GA_PID")
if wait_until 10000 pidfile_workers_count_is "$DEF"; then
    ok "serve without --workers runs DEFAULT_WORKERS ($DEF) workers"
else
    not_ok "serve without --workers runs DEFAULT_WORKERS ($DEF)" \
        "pid file '$(tr '\n' '|' <"$GA_PIDFILE" 2>/dev/null)'; log: $(tail -c 300 "$T/default.log" | tr '\n' '|')"
fi
check "... the pid file's master is the process started" test "$PF_MASTER" = "$GA_PID"
master=$GA_PID
stop_responder # SIGTERM; clears GA_PID
check "... and it stops on SIGTERM" bash -c '! kill -0 "$1" 2>/dev/null' _ "$master"

finish
