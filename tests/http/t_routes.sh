#!/bin/bash
# t_routes.sh - every route and error status of the actions API, through nginx
# (with nginx/gemini-agent.conf) to `gemini-agent serve`.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_binary
[ -r "$CATALOG" ] || bail "$CATALOG is missing"

# --- facts from the catalog (adapt if the demo data changes) ---------------
SLUG=$(catalog '"usb-c-hub" if any(p["slug"] == "usb-c-hub" for p in P) else P[0]["slug"]')
PID=$(catalog "[p['_id'] for p in P if p['slug'] == '$SLUG'][0]")
PNAME=$(catalog "[p['name'] for p in P if p['slug'] == '$SLUG'][0]")
CAT=$(catalog '"Keyboards" if any(p["category"] == "Keyboards" for p in P) else P[0]["category"]')
[ -n "$PID" ] && [ -n "$CAT" ] || bail "cannot read slug/_id/category from $CATALOG"
Q=$(printf '%s' "$CAT" | tr 'A-Z' 'a-z')
QUP=$(printf '%s' "$CAT" | tr 'a-z' 'A-Z')
# Ids of the products whose name or category contains Q (case-insensitive).
WANT_IDS=$(catalog "sorted(p['_id'] for p in P if '$Q' in p['name'].lower() or '$Q' in p['category'].lower())")
WANT_N=$(catalog "len([p for p in P if '$Q' in p['name'].lower() or '$Q' in p['category'].lower()])")
echo "# catalog: slug=$SLUG _id=$PID category=$CAT ($WANT_N matches for '$Q')"

# addReview has side effects: over the direct route it needs a signed-in
# user the policy lets act (http.directActions: authenticated; the default,
# readOnly, refuses it to everyone: check_dispatch tests that).
DIRECT_YAML="http: {directActions: authenticated}"
# owner_token: OWNER (autonomous in this stack's store) signs in.
owner_token() {
    "$GA_BIN" users set-trust owner autonomous --config "$GA_CONF" >/dev/null ||
        bail "cannot set the owner's trust level"
    AUTHZ="Authorization: Bearer $("$GA_BIN" auth issue --user owner --config "$GA_CONF")"
}
start_stack --auth --yaml "$DIRECT_YAML"
owner_token
REVIEWS=$ST_DIR/var/shop-reviews.jsonl
if "$NGINX_BIN" -t -q -c "$NGX_DIR/nginx.conf" -p "$NGX_DIR/" -e "$NGX_DIR/error.log" >"$T_TMP/nginx-t.out" 2>&1; then
    ok "nginx -t accepts nginx/gemini-agent.conf"
else
    not_ok "nginx -t accepts nginx/gemini-agent.conf" "$(tr '\n' ' ' <"$T_TMP/nginx-t.out")"
fi
SEARCH=/_jay/actions/shop.searchProducts
REVIEW=/_jay/actions/shop.addReview

# --- GET /_jay/actions ------------------------------------------------------
req GET /_jay/actions
assert_status 200
assert_json_headers
assert_true 'isinstance(j, dict) and isinstance(j.get("actions"), list)' "list: {\"actions\": [...]}"
for a in shop.searchProducts shop.getProductBySlug shop.addReview; do
    assert_true "'$a' in [x.get('name') for x in j['actions']]" "list: has $a"
done
assert_json '[x["sideEffects"] for x in j["actions"] if x["name"] == "shop.addReview"]' '[true]' \
    "list: shop.addReview has sideEffects true"
assert_json '[x["sideEffects"] for x in j["actions"] if x["name"] == "shop.searchProducts"]' '[false]' \
    "list: shop.searchProducts has sideEffects false"
assert_true 'all(isinstance(x.get("description"), str) and x["description"] != "" and isinstance(x.get("inputSchema"), dict) and x["inputSchema"].get("type") == "object" and isinstance(x.get("outputSchema"), dict) and isinstance(x.get("sideEffects"), bool) for x in j["actions"])' \
    "list: every action has description, inputSchema (object), outputSchema, sideEffects"
assert_true 'len(set(x["name"] for x in j["actions"])) == len(j["actions"])' "list: names are unique"

# The chat protocol's two actions are listed with their schemas, like the
# others (actions/geminiAgent); the chat routes serve them.
assert_py "list: the chat protocol's actions" <<'EOF'
(A := {x['name']: x for x in r['actions']}) != {}
'geminiAgent.sendMessage' in A and 'geminiAgent.submitToolResults' in A
sendMessage takes a message :: A['geminiAgent.sendMessage']['inputSchema']['required'] ==> ['message']
sendMessage's input is strict :: A['geminiAgent.sendMessage']['inputSchema']['additionalProperties'] ==> False
sorted(A['geminiAgent.sendMessage']['inputSchema']['properties']) ==> ['conversation', 'history', 'message', 'pageState', 'signatures', 'toolDefinitions']
sorted(A['geminiAgent.submitToolResults']['inputSchema']['properties']) ==> ['answer', 'approval', 'conversation', 'history', 'pageState', 'results', 'signatures', 'toolDefinitions']
A['geminiAgent.submitToolResults']['inputSchema']['required'] ==> ['history']
results, approval or answer :: A['geminiAgent.submitToolResults']['inputSchema']['anyOf'] ==> [{'required': ['results']}, {'required': ['approval']}, {'required': ['answer']}]
the answer's shape :: sorted(A['geminiAgent.sendMessage']['outputSchema']['properties']) ==> ['approval', 'calls', 'conversation', 'history', 'historyTruncated', 'message', 'model', 'question', 'serverCalls', 'signatures', 'stopReason', 'truncated', 'type', 'usage']
one answer shape for both :: A['geminiAgent.sendMessage']['outputSchema'] ==> A['geminiAgent.submitToolResults']['outputSchema']
A['geminiAgent.sendMessage']['outputSchema']['properties']['type']['enum'] ==> ['response', 'tool-calls', 'blocked', 'approval-required', 'question']
EOF

# ... and POST on them still reaches the chat routes: the chat's own
# decoding answers (the action runner would say schema_violation, 422).
req POST /_jay/actions/geminiAgent.sendMessage '{"message":""}'
assert_error 400 bad_request "POST geminiAgent.sendMessage, empty message: the chat route answers"
assert_json 'j["error"]["message"]' "message must not be empty" "POST geminiAgent.sendMessage: the chat's own message"
req POST /_jay/actions/geminiAgent.submitToolResults '{"results":5,"history":[]}'
assert_error 400 bad_request "POST geminiAgent.submitToolResults, results not a list: the chat route answers"
assert_json 'j["error"]["message"]' "results must be an array" "POST geminiAgent.submitToolResults: the chat's own message"
req GET /_jay/actions

# Exactly the plugin.yaml entries with an `action:` (.jay-action) file are
# listed; plain-string entries are callable but never listed.
cp "$RES_BODY" "$T_TMP/list.json"
if "$PY" -c 'import yaml' 2>/dev/null; then
    "$PY" - "$REPO/actions" >"$T_TMP/plugins.txt" <<'PY'
import glob, os, sys, yaml
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*", "plugin.yaml"))):
    doc = yaml.safe_load(open(f)) or {}
    for e in doc.get("actions") or []:
        if isinstance(e, str):
            print("plain %s.%s" % (doc["name"], e))
        elif isinstance(e, dict) and e.get("action"):
            print("exposed %s.%s" % (doc["name"], e["name"]))
PY
    exposed=$(awk '$1 == "exposed" { printf "%s\"%s\"", (n++ ? "," : ""), $2 }' "$T_TMP/plugins.txt")
    plain=$(awk '$1 == "plain" { printf "%s\"%s\"", (n++ ? "," : ""), $2 }' "$T_TMP/plugins.txt")
    assert_json "sorted(x['name'] for x in j['actions']) == sorted([$exposed])" true \
        "list: exactly the actions with a .jay-action file ([$exposed])"
    if [ -n "$plain" ]; then
        assert_json "[x['name'] for x in j['actions'] if x['name'] in [$plain]]" '[]' \
            "list: no plain-string entries ([$plain])"
    else
        skip "list: no plain-string entries" "no plain-string entry in any plugin.yaml"
    fi
else
    skip "list: matches plugin.yaml" "python3-yaml not installed"
fi

req GET '/_jay/actions?x=1&y=2'
assert_status 200 "GET /_jay/actions?query: the query string is ignored (200)"
assert_true '"actions" in j' "GET /_jay/actions?query: lists actions"

# --- GET /_jay/actions/geminiAgent.status -------------------------------------
# What the page may say before the first message: a key is configured (the
# stack's test key), and the model (write_gemini_yaml's default).
STATUS=/_jay/actions/geminiAgent.status
req GET "$STATUS"
assert_status 200
assert_json_headers
assert_json 'j' '{"model":"gemini-2.5-flash","ready":true}' "status: ready, with the configured model"
assert_body_lacks "$ST_DIR" "status: names no path"
assert_body_lacks "test-key-not-a-real-key" "status: carries no key"

# --- shop.searchProducts ----------------------------------------------------
req POST "$SEARCH" "{\"query\":\"$QUP\"}"
assert_status 200 "search '$QUP': status 200"
assert_json_headers "search '$QUP'"
assert_json "j['total']" "$WANT_N" "search '$QUP': total is the number of matches ($WANT_N)"
if [ "$WANT_N" -le 10 ]; then
    assert_json 'sorted(p["_id"] for p in j["products"])' "$WANT_IDS" \
        "search '$QUP': case-insensitive match over name and category"
else
    assert_true 'len(j["products"]) == 10' "search '$QUP': default limit 10"
fi
assert_true 'all(set(["_id","slug","name","price","category","stock"]) <= set(p) for p in j["products"])' \
    "search: products carry _id, slug, name, price, category, stock"
cp "$RES_BODY" "$T_TMP/search.json"
if "$PY" - "$T_TMP/search.json" "$CATALOG" <<'PY'; then
import json, sys
got = json.load(open(sys.argv[1]))["products"]
cat = json.load(open(sys.argv[2]))
cat = {p["_id"]: p for p in (cat if isinstance(cat, list) else cat["products"])}
keys = ["_id", "slug", "name", "price", "category", "stock"]
sys.exit(0 if all(all(p[k] == cat[p["_id"]][k] for k in keys) for p in got) else 1)
PY
    ok "search: product fields match the catalog"
else
    not_ok "search: product fields match the catalog" "$(head -c 300 "$T_TMP/search.json")"
fi

req POST "$SEARCH" "{\"query\":\"$Q\"}"
assert_json 'sorted(p["_id"] for p in j["products"])[:10]' "$(catalog "sorted(p['_id'] for p in P if '$Q' in p['name'].lower() or '$Q' in p['category'].lower())[:10]")" \
    "search '$Q' (lower case): same products"

if [ "$WANT_N" -ge 2 ]; then
    req POST "$SEARCH" "{\"query\":\"$Q\",\"limit\":1}"
    assert_status 200 "search limit 1: status 200"
    assert_json 'len(j["products"])' 1 "search limit 1: one product"
    assert_json 'j["total"]' "$WANT_N" "search limit 1: total still counts every match ($WANT_N)"
else
    skip "search limit 1" "fewer than 2 matches for '$Q'"
fi

req POST "$SEARCH" '{"query":"zz-no-such-product-zz"}'
assert_status 200 "search no match: status 200"
assert_json 'j' '{"products":[],"total":0}' "search no match: empty list, total 0"

# --- shop.getProductBySlug --------------------------------------------------
req POST /_jay/actions/shop.getProductBySlug "{\"slug\":\"$SLUG\"}"
assert_status 200 "getProductBySlug $SLUG: status 200"
assert_json_headers "getProductBySlug $SLUG"
assert_json 'j["product"]["_id"]' "$PID" "getProductBySlug $SLUG: _id $PID"
assert_json 'j["product"]["slug"]' "$SLUG" "getProductBySlug $SLUG: slug"
assert_json 'j["product"]["name"]' "$PNAME" "getProductBySlug $SLUG: name"

req POST /_jay/actions/shop.getProductBySlug '{"slug":"no-such-slug"}'
assert_error 404 not_found "getProductBySlug unknown slug"

# --- shop.addReview ---------------------------------------------------------
before=$(count_lines "$REVIEWS")
TEXT='Très bien — works with my laptop ✓'
req POST "$REVIEW" "{\"productId\":\"$PID\",\"rating\":5,\"text\":\"$TEXT\"}" -H "$AUTHZ"
assert_status 200 "addReview: status 200"
assert_json_headers "addReview"
assert_json 'j["ok"]' true "addReview: ok true"
assert_json 'j["review"]["productId"]' "$PID" "addReview: review.productId"
assert_json 'j["review"]["rating"]' 5 "addReview: review.rating"
assert_json 'j["review"]["text"]' "$TEXT" "addReview: review.text (UTF-8 intact)"
after=$(count_lines "$REVIEWS")
if [ "$after" -eq $((before + 1)) ]; then
    ok "addReview: $REVIEWS gained exactly one line"
else
    not_ok "addReview: reviews file gained exactly one line" "$before -> $after lines"
fi
if [ -s "$REVIEWS" ]; then
    tail -n 1 "$REVIEWS" >"$T_TMP/last-review.json"
    got=$(pyjson '[j["productId"], j["rating"], j["text"]]' "$T_TMP/last-review.json")
    want=$("$PY" -c 'import json,sys; print(json.dumps([sys.argv[1], 5, sys.argv[2]], sort_keys=True, separators=(",", ":")))' "$PID" "$TEXT")
    if [ "$got" = "$want" ]; then ok "addReview: the new line is the review as JSON"; else not_ok "addReview: the new line is the review as JSON" "got $got"; fi
else
    not_ok "addReview: the new line is the review as JSON" "no reviews file"
fi

# Without an identity, or as a user who must approve side effects first
# (supervised, the default): refused, nothing written.
before=$(count_lines "$REVIEWS")
req POST "$REVIEW" "{\"productId\":\"$PID\",\"rating\":5,\"text\":\"anonymous\"}"
assert_error 401 unauthorized "addReview without an identity"
req POST "$REVIEW" "{\"productId\":\"$PID\",\"rating\":5,\"text\":\"stranger\"}" \
    -H "Authorization: Bearer $("$GA_BIN" auth issue --user stranger --config "$GA_CONF")"
assert_error 403 forbidden "addReview as a supervised user"
assert_body_contains "approval" "addReview as a supervised user: the 403 says it needs approval"
after=$(count_lines "$REVIEWS")
if [ "$after" -eq "$before" ]; then ok "refused addReview requests appended nothing"; else not_ok "refused addReview requests appended nothing" "$before -> $after lines"; fi

# Rejected reviews append nothing.
before=$(count_lines "$REVIEWS")
req POST "$REVIEW" "{\"productId\":\"$PID\",\"rating\":6,\"text\":\"x\"}" -H "$AUTHZ"
assert_status 422 "addReview rating 6: status 422"
req POST "$REVIEW" '{"productId":"no-such-product","rating":4,"text":"x"}' -H "$AUTHZ"
assert_error 404 not_found "addReview unknown productId"
req POST "$REVIEW" "{\"productId\":\"$PID\",\"rating\":4,\"text\":\"x\"" -H "$AUTHZ"
assert_status 400 "addReview malformed JSON: status 400"
REQ_CT=text/plain req POST "$REVIEW" "{\"productId\":\"$PID\",\"rating\":4,\"text\":\"x\"}" -H "$AUTHZ"
assert_status 415 "addReview text/plain: status 415"
after=$(count_lines "$REVIEWS")
if [ "$after" -eq "$before" ]; then
    ok "rejected addReview requests appended nothing"
else
    not_ok "rejected addReview requests appended nothing" "$before -> $after lines"
fi

# A symlink in place of the reviews file: nothing is written through it.
mv "$REVIEWS" "$T_TMP/reviews.saved"
printf 'precious\n' >"$T_TMP/elsewhere"
ln -s "$T_TMP/elsewhere" "$REVIEWS"
req POST "$REVIEW" "{\"productId\":\"$PID\",\"rating\":4,\"text\":\"x\"}" -H "$AUTHZ"
assert_status 500 "addReview through a symlinked reviews file: refused (500)"
if [ "$(cat "$T_TMP/elsewhere")" = precious ]; then ok "addReview: the symlink's target is untouched"; else not_ok "addReview: the symlink's target is untouched" "$(head -c 200 "$T_TMP/elsewhere")"; fi
rm -f "$REVIEWS"
mv "$T_TMP/reviews.saved" "$REVIEWS"

# --- 404 --------------------------------------------------------------------
req POST /_jay/actions/shop.nope '{}'
assert_error 404 unknown_action "POST /_jay/actions/shop.nope"
req POST /_jay/actions/nope.x '{}'
assert_error 404 unknown_action "POST /_jay/actions/nope.x"
req GET /api/agent/nope
assert_error 404 not_found "GET /api/agent/nope"
req GET /_jay/actionsfoo
assert_error 404 not_found "GET /_jay/actionsfoo"
# nginx passes only /_jay/actions and /api/agent/ on; other routes straight
# to the socket:
fcgi_req GET /_jay/nothing
assert_error 404 not_found "FastCGI GET /_jay/nothing"

# --- 405 --------------------------------------------------------------------
req GET "$SEARCH"
assert_error 405 method_not_allowed "GET $SEARCH"
assert_header Allow POST "GET $SEARCH: Allow: POST"
req PUT "$SEARCH" '{"query":"a"}'
assert_error 405 method_not_allowed "PUT $SEARCH"
assert_header Allow POST "PUT $SEARCH: Allow: POST"
req POST /_jay/actions '{}'
assert_error 405 method_not_allowed "POST /_jay/actions"
assert_header Allow GET "POST /_jay/actions: Allow: GET"
req DELETE /_jay/actions
assert_error 405 method_not_allowed "DELETE /_jay/actions"
assert_header Allow GET "DELETE /_jay/actions: Allow: GET"
# The status path is the status route's, whatever the method: never an
# action called geminiAgent.status.
req POST "$STATUS" '{}'
assert_error 405 method_not_allowed "POST $STATUS"
assert_header Allow GET "POST $STATUS: Allow: GET"

# --- 415 --------------------------------------------------------------------
REQ_CT=text/plain req POST "$SEARCH" '{"query":"a"}'
assert_error 415 unsupported_media_type "Content-Type text/plain"
REQ_CT=none req POST "$SEARCH" '{"query":"a"}'
assert_error 415 unsupported_media_type "no Content-Type"
REQ_CT=application/jsonp req POST "$SEARCH" '{"query":"a"}'
assert_error 415 unsupported_media_type "Content-Type application/jsonp"
REQ_CT='application/json; charset=utf-8' req POST "$SEARCH" '{"query":"a"}'
assert_status 200 "Content-Type 'application/json; charset=utf-8' accepted"
REQ_CT='Application/JSON' req POST "$SEARCH" '{"query":"a"}'
assert_status 200 "Content-Type 'Application/JSON' accepted"

# --- 413 --------------------------------------------------------------------
# pad_query FILE SIZE: {"query":"a"} padded with spaces to exactly SIZE bytes.
pad_query() {
    "$PY" -c 'import sys; n = int(sys.argv[2]); open(sys.argv[1], "w").write("{\"query\":\"a\"" + " " * (n - 13) + "}")' "$1" "$2"
}
pad_query "$T_TMP/b4096" 4096
pad_query "$T_TMP/b4097" 4097
pad_query "$T_TMP/b5000" 5000
req POST "$SEARCH" "@$T_TMP/b5000"
assert_error 413 payload_too_large "responder: 5000-byte body over maxBodyBytes 4096"
req POST "$SEARCH" "@$T_TMP/b4097"
assert_error 413 payload_too_large "responder: 4097-byte body"
req POST "$SEARCH" "@$T_TMP/b4096"
assert_status 200 "responder: body of exactly maxBodyBytes (4096) accepted"
head -c 2097152 /dev/zero | tr '\0' ' ' >"$T_TMP/big"
req POST "$SEARCH" "@$T_TMP/big"
assert_error 413 payload_too_large "nginx: 2 MB body over client_max_body_size"

# --- 400 invalid_json -------------------------------------------------------
# bad_json LABEL [WANT_LINE]: POST $T_TMP/bad to searchProducts.
bad_json() {
    local label="invalid_json: $1"
    req POST "$SEARCH" "@$T_TMP/bad"
    assert_error 400 invalid_json "$label"
    assert_true 're.search(r"line [0-9]+, column [0-9]+", j["error"]["message"]) is not None' \
        "$label: message says line and column"
    if [ -n "${2:-}" ]; then
        assert_true "re.search(r'line $2, column [0-9]+', j['error']['message']) is not None" \
            "$label: message says line $2"
    fi
}
printf '%s' '{"query": }' >"$T_TMP/bad"
bad_json "malformed"
printf '{\n  "query": "a",\n  "limit": 1,\n}' >"$T_TMP/bad"
bad_json "trailing comma, '}' on line 4" 4
printf '%s' '{"query":"a"} x' >"$T_TMP/bad"
bad_json "trailing garbage"
printf '%s' '{"query":"a","query":"b"}' >"$T_TMP/bad"
bad_json "duplicate keys"
printf '{"query":"\xff"}' >"$T_TMP/bad"
bad_json "invalid UTF-8 byte 0xff"
printf '{"query":"\xc0\xaf"}' >"$T_TMP/bad"
bad_json "overlong UTF-8"
printf '{"query":"\xed\xa0\x80"}' >"$T_TMP/bad"
bad_json "UTF-8 encoded surrogate"
printf '%s' '{"query":"\ud800"}' >"$T_TMP/bad"
bad_json "lone surrogate \\ud800"
printf '%s' '{"query":"\udc00x"}' >"$T_TMP/bad"
bad_json "lone low surrogate \\udc00"
printf '%s' '{"query":"a\u0000b"}' >"$T_TMP/bad"
bad_json "\\u0000 in a string"
# Depth: the top-level object is level 1; 32 levels are allowed.
nest() { # N: {"query":"x","deep": N-1 nested arrays }
    "$PY" -c 'import sys; n = int(sys.argv[1]) - 1; sys.stdout.write("{\"query\":\"x\",\"deep\":" + "[" * n + "]" * n + "}")' "$1"
}
nest 33 >"$T_TMP/bad"
bad_json "nesting 33 deep"
nest 2000 >"$T_TMP/bad" # about 4000 bytes, under maxBodyBytes
bad_json "nesting 2000 deep"
nest 32 >"$T_TMP/ok32"
req POST "$SEARCH" "@$T_TMP/ok32"
assert_json 'j["error"]["code"]' schema_violation "nesting 32 deep parses (then fails the schema, not the parser)"

# --- 422 schema_violation ---------------------------------------------------
before=$(count_lines "$REVIEWS")
# schema_err ACTION BODY PATH|- RULE LABEL
schema_err() {
    req POST "/_jay/actions/$1" "$2" -H "$AUTHZ"
    assert_error 422 schema_violation "$5"
    assert_json 'j["error"].get("rule")' "$4" "$5: rule $4"
    if [ "$3" = - ]; then
        assert_true 'isinstance(j["error"].get("path"), str)' "$5: has a path"
    else
        assert_json 'j["error"].get("path")' "$3" "$5: path $3"
    fi
}
schema_err shop.searchProducts '{"query":5}' /query type "search query 5"
schema_err shop.searchProducts '{}' - required "search without query"
schema_err shop.searchProducts '{"query":"a","bogus":1}' - additionalProperties "search extra property"
schema_err shop.searchProducts '{"query":"a","limit":"ten"}' /limit type "search limit 'ten'"
schema_err shop.searchProducts '[]' - type "search body is an array"
schema_err shop.addReview "{\"productId\":\"$PID\",\"rating\":6,\"text\":\"x\"}" /rating maximum "addReview rating 6"
schema_err shop.addReview "{\"productId\":\"$PID\",\"rating\":0,\"text\":\"x\"}" /rating minimum "addReview rating 0"
schema_err shop.addReview "{\"productId\":\"$PID\",\"rating\":4.5,\"text\":\"x\"}" /rating type "addReview rating 4.5"
schema_err shop.addReview "{\"productId\":\"$PID\",\"rating\":\"5\",\"text\":\"x\"}" /rating type "addReview rating \"5\""
schema_err shop.addReview "{\"productId\":\"$PID\",\"rating\":5}" - required "addReview without text"
after=$(count_lines "$REVIEWS")
if [ "$after" -eq "$before" ]; then
    ok "schema violations appended no review"
else
    not_ok "schema violations appended no review" "$before -> $after lines"
fi

# --- static files -----------------------------------------------------------
if [ -f "$REPO/www/index.html" ]; then
    req GET /
    assert_status 200 "static: GET / serves www/index.html"
    if cmp -s "$RES_BODY" "$REPO/www/index.html"; then
        ok "static: body is www/index.html"
    else
        not_ok "static: body is www/index.html" "differs"
    fi
    case $(header_get Content-Type) in
    text/html*) ok "static: Content-Type text/html" ;;
    *) not_ok "static: Content-Type text/html" "got '$(header_get Content-Type)'" ;;
    esac
else
    skip "static: GET /" "www/index.html does not exist yet"
fi

# --- the status without a key -------------------------------------------------
stop_stack
start_stack --api-key '' --model offline-demo
req GET "$STATUS"
assert_status 200 "status without a key: 200"
assert_json_headers "status without a key"
assert_json 'j' '{"model":"offline-demo","ready":false}' "status without a key: not ready, the model named"
stop_stack
start_stack --api-key '<your-gemini-api-key>'
req GET "$STATUS"
assert_json 'j["ready"]' false "status with the template's placeholder key: not ready"

# --- 500 action_failed ------------------------------------------------------
# dataDir under a regular file: the review cannot be stored. The answer is a
# plain 500 passed through nginx, naming no path and no system error.
stop_stack
touch "$T_TMP/not-a-dir"
start_stack --data-dir "$T_TMP/not-a-dir/var" --auth --yaml "$DIRECT_YAML" \
    --yaml "store: 'sqlite:$T_TMP/store2.db'"
owner_token
req POST "$REVIEW" "{\"productId\":\"$PID\",\"rating\":5,\"text\":\"x\"}" -H "$AUTHZ"
assert_error 500 action_failed "addReview with an unwritable dataDir"
assert_body_lacks "$T_TMP" "action_failed: body does not contain the temp path"
assert_body_lacks "not-a-dir" "action_failed: body does not contain the dataDir"
assert_body_lacks "shop-reviews" "action_failed: body does not name the reviews file"
assert_body_lacks "Not a directory" "action_failed: body does not contain strerror text"
req POST "$SEARCH" '{"query":"a"}'
assert_status 200 "other actions still work with an unwritable dataDir"

finish
