#!/bin/bash
# t_setup.sh - a site of one's own from an installed binary: `make install
# PREFIX=...` from the checkout (rebuilt with that prefix, no demo
# handlers), then, with the INSTALLED binary, `setup DIR` in an empty
# folder: every file and its mode, nothing overwritten on a second run,
# `check` ok but for the key, and with the mock's key and URL, `serve`
# behind nginx running the snippet setup rendered into DIR/server/
# answers a chat. Also `make install DESTDIR=...` and setup's refusals.
source "$(dirname "${BASH_SOURCE[0]}")/../http/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/nginx_lib.sh"

P=$T_TMP/prefix
BIN=$P/bin/gemini-agent
SHARE=$P/share/gemini-agent

# --- make install ------------------------------------------------------------
nice make -s -C "$REPO" install PREFIX="$P" >"$T_TMP/install.log" 2>&1 ||
    bail "make install failed: $(tail -c 800 "$T_TMP/install.log" | tr '\n' ' ')"
check "install: the binary" test -x "$BIN"
for f in www/agent/index.js www/agent/chat.js www/vendor/marked.js \
    www/vendor/dompurify.js www/assistant/index.html conf/gemini.yaml.template \
    conf/site-agent.yaml.template conf/site-index.html conf/example-plugin/greet.c \
    nginx/gemini-agent.conf conf/apache-cgi.conf actions/geminiAgent/plugin.yaml \
    examples/shop/plugin.yaml; do
    check "install: share/gemini-agent/$f" test -f "$SHARE/$f"
done
check "install: the public headers" test -f "$P/include/gemini-agent/plugin.h"
check "install: the system plugin folder" test -d "$P/lib/gemini-agent/plugins"
check "install: not the demo page, nor the shop among the actions" \
    test ! -e "$SHARE/www/index.html" -a ! -e "$SHARE/actions/shop" -a ! -e "$SHARE/www/cart.jay-contract"
check "install: no key nor secret of the checkout" \
    test ! -e "$SHARE/conf/.gemini.yaml" -a ! -e "$SHARE/conf/.session-secret"
if [ -f "$REPO/conf/gemini-agent.service" ]; then
    check "install: the systemd unit" test -f "$P/lib/systemd/system/gemini-agent.service"
else
    check "install: no systemd unit to install yet" test ! -e "$P/lib/systemd"
fi
check "install: the prefix's plugin folder is compiled in" \
    grep -qaF "$P/lib/gemini-agent/plugins" "$BIN"
check "install: the prefix's share folder is compiled in" grep -qaF "$SHARE" "$BIN"
check "install: not the checkout's build" bash -c '! cmp -s "$1" "$2"' _ "$BIN" "$REPO/build/gemini-agent"

# --- setup DIR, with the installed binary, in an empty folder ---------------
SITE=$T_TMP/sites/mysite # its parent does not exist either
mkdir -p "$T_TMP/elsewhere"
out=$(cd "$T_TMP/elsewhere" && umask 077 && "$BIN" setup "$SITE" 2>"$T_TMP/setup.err"); rc=$?
printf '%s\n' "$out" >"$T_TMP/setup.out"
check "setup DIR: exit 0 (stderr: $(head -c 300 "$T_TMP/setup.err"))" test "$rc" -eq 0
check "setup DIR: nothing on stderr" test ! -s "$T_TMP/setup.err"
mode() { stat -c %a "$SITE/$1" 2>/dev/null || echo missing; }
want_mode() {
    local got
    got=$(mode "$1")
    if [ "$got" = "$2" ]; then ok "setup DIR: $1 mode $2"; else not_ok "setup DIR: $1 mode $2" "got $got"; fi
}
# (the umask was 077: the modes are setup's own)
want_mode . 711
want_mode agent.yaml 640
want_mode .gemini.yaml 600
want_mode .session-secret 600
want_mode actions 750
want_mode actions/_example 750
want_mode actions/_example/plugin.yaml.example 640
want_mode var 700
want_mode run 711
want_mode www 755
want_mode www/index.html 644
want_mode www/agent 755
want_mode www/agent/index.js 644
want_mode www/vendor/marked.js 644
want_mode server/gemini-agent.conf 644
want_mode server/apache-cgi.conf 644
check "setup DIR: the session secret is 32 bytes" test "$(stat -c %s "$SITE/.session-secret")" -eq 32
check "setup DIR: .gemini.yaml is the built-in template" \
    cmp -s "$REPO/conf/gemini.yaml.template" "$SITE/.gemini.yaml"
check "setup DIR: agent.yaml is the site template" \
    cmp -s "$REPO/conf/site-agent.yaml.template" "$SITE/agent.yaml"
check "setup DIR: the widget's files are the installed ones" \
    diff -r "$SHARE/www/agent" "$SITE/www/agent"
check "setup DIR: the example plugin is not a plugin (no plugin.yaml)" \
    test ! -e "$SITE/actions/_example/plugin.yaml"
check "setup DIR: index.html embeds the widget" \
    grep -q '<script type="module" src="agent/index.js"></script>' "$SITE/www/index.html"
# The rendered snippets: the shipped ones with this site's paths.
for s in nginx/gemini-agent.conf conf/apache-cgi.conf; do
    r=$SITE/server/$(basename "$s")
    check "setup DIR: $s rendered: the placeholders gone" \
        bash -c '! grep -qE "/srv/gemini-agent|/run/gemini-agent/" "$1"' _ "$r"
    check "setup DIR: $s rendered: otherwise the shipped text" \
        bash -c 'diff <(sed 1d "$1" | sed -e "s|$2/www|/srv/gemini-agent/www|g" \
            -e "s|$2/agent.yaml|/srv/gemini-agent/conf/agent.yaml|g" \
            -e "s|$2/run/gemini-agent.sock|/run/gemini-agent/gemini-agent.sock|g" \
            -e "s|$3|/srv/gemini-agent/build/gemini-agent|g") "$4"' _ "$r" "$SITE" "$BIN" "$SHARE/$s"
done
check "setup DIR: nginx's root is the site's www/" grep -qF "root $SITE/www;" "$SITE/server/gemini-agent.conf"
check "setup DIR: nginx passes to the site's socket" \
    grep -qF "fastcgi_pass unix:$SITE/run/gemini-agent.sock;" "$SITE/server/gemini-agent.conf"
check "setup DIR: Apache runs the installed binary" \
    grep -qF "ScriptAlias /cgi-bin/gemini-agent $BIN" "$SITE/server/apache-cgi.conf"
check "setup DIR: Apache's CGI reads the site's agent.yaml" \
    grep -qF "SetEnv GEMINI_AGENT_CONFIG $SITE/agent.yaml" "$SITE/server/apache-cgi.conf"
# Its last lines: what to run next, with the real paths.
check "setup DIR: says where the key goes" grep -qF "put your Gemini API key in apiKey in $SITE/.gemini.yaml" "$T_TMP/setup.out"
check "setup DIR: says the check command" grep -qxF "       $BIN check --config $SITE/agent.yaml" "$T_TMP/setup.out"
check "setup DIR: says the serve command" \
    grep -qxF "       $BIN serve --config $SITE/agent.yaml --socket $SITE/run/gemini-agent.sock" "$T_TMP/setup.out"
check "setup DIR: says which snippet to install" grep -qF "copy $SITE/server/gemini-agent.conf to /etc/nginx/sites-enabled/" "$T_TMP/setup.out"
check "setup DIR: the secret never appears in its output" \
    bash -c '! grep -qaF "$(head -c 32 "$1" | tr -d "\0\n")" "$2"' _ "$SITE/.session-secret" "$T_TMP/setup.out"

# --- a second run keeps everything -------------------------------------------
echo '# the owner edited this' >>"$SITE/agent.yaml"
echo 'owner page' >"$SITE/www/index.html"
sum() { (cd "$SITE" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
before=$(sum)
out=$("$BIN" setup "$SITE" 2>&1); rc=$?
check "setup again: exit 0" test "$rc" -eq 0
check "setup again: every file as it was" test "$before" = "$(sum)"
check "setup again: wrote nothing" bash -c '! grep -q "^wrote\|^made" <<<"$1"' _ "$out"
check "setup again: says what it kept" bash -c 'grep -qxF "kept $2/agent.yaml" <<<"$1" &&
    grep -qF "kept $2/.session-secret" <<<"$1"' _ "$out" "$SITE"
check "setup again: the modes as they were" test "$(mode agent.yaml)$(mode .)" = 640711
sed -i '$d' "$SITE/agent.yaml"

# --- check: ok but for the key --------------------------------------------------
"$BIN" check --config "$SITE/agent.yaml" >"$T_TMP/check.out" 2>"$T_TMP/check.err"; rc=$?
check "check: exit 1 while the key is the placeholder" test "$rc" -eq 1
want="$SITE/.gemini.yaml:7: no Gemini API key: apiKey is still the placeholder; run \`gemini-agent setup\` and put your key in apiKey, or set GEMINI_API_KEY"
# the problems come first, then the summary from "<config>: N actions"
check "check: the one problem is the key (got: $(head -n 3 "$T_TMP/check.out" | tr '\n' '|'))" \
    bash -c 'diff <(printf "%s\n" "$1") <(sed -n "/^${3//\//\\/}\/agent.yaml: /q;p" "$2")' \
    _ "$want" "$T_TMP/check.out" "$SITE"
check "check: its last line says so" test "$(tail -n 1 "$T_TMP/check.out")" = "problems found"
check "check: nothing on stderr" test ! -s "$T_TMP/check.err"
check "check: no demo handler is compiled in" bash -c '! grep -q shop "$1" "$2"' _ "$T_TMP/check.out" "$T_TMP/check.err"

start_mock
write_gemini_yaml "$SITE/.gemini.yaml" test-key-not-a-real-key "$MOCK_URL"
"$BIN" check --config "$SITE/agent.yaml" >"$T_TMP/check.out" 2>"$T_TMP/check.err"; rc=$?
check "check with a key: exit 0 (stderr: $(head -c 300 "$T_TMP/check.err" | tr '\n' ' '))" test "$rc" -eq 0
check "check with a key: nothing on stderr" test ! -s "$T_TMP/check.err"
check "check with a key: no problem before the summary (notes aside)" \
    bash -c '[ "$(grep -v "^note: " "$1" | head -n 1)" = "$2/agent.yaml: 2 actions (2 exposed to the model), model gemini-2.5-flash" ]' \
    _ "$T_TMP/check.out" "$SITE"
check "check with a key: ok" test "$(tail -n 1 "$T_TMP/check.out")" = ok

# --- serve behind nginx, with the snippet setup rendered ---------------------
GA_PIDFILE=$T_TMP/serve.pid
env -i PATH="$PATH" HOME="$T_TMP" "$BIN" serve --config "$SITE/agent.yaml" \
    --socket "$SITE/run/gemini-agent.sock" --workers 1 --pid-file "$GA_PIDFILE" \
    >"$T_TMP/serve.out" 2>"$T_TMP/serve.err" </dev/null &
GA_PID=$!
GA_BIN=$BIN # lib.sh's cleanup finds the workers by this name
GA_SOCK=$SITE/run/gemini-agent.sock
remember_pids "$GA_PID"
wait_until 5000 stack_ready 1 ||
    bail "serve did not come up: $(tail -c 600 "$T_TMP/serve.err" | tr '\n' ' ')"
site_nginx_start "$SITE/server/gemini-agent.conf"

req GET /
assert_status 200 "GET /: the site's page"
assert_body_contains 'owner page' "GET /: from the site's www/"
req GET /agent/index.js
assert_status 200 "GET /agent/index.js: the widget"
req GET /vendor/marked.js
assert_status 200 "GET /vendor/marked.js"
req GET /_jay/actions
assert_status 200 "GET /_jay/actions: through the rendered snippet"
assert_json "[a['name'] for a in j['actions']] if isinstance(j, dict) else j" "[]" \
    "GET /_jay/actions: no demo actions in a new site"
req POST /_jay/actions/geminiAgent.sendMessage \
    '{"message":"[[mock:text say=\"Hello from your own site.\"]] hi","history":[]}'
assert_status 200 "a chat through nginx: 200"
assert_json "j.get('type')" response "a chat: an answer"
assert_json "j.get('message')" "Hello from your own site." "a chat: the mock's text"

# --- the example plugin, made a plugin as its README says ---------------------
stop_stack
readme=$SITE/actions/_example/README.md
# its four command lines (indented by 4), PREFIX replaced by the prefix
sed -n 's/^    \(cd actions\|cp -R _example greet\|mv plugin.yaml.example\|cc \)/\1/p' "$readme" |
    sed "s|PREFIX/include|$P/include|" >"$T_TMP/example.sh"
check "example: its README gives the four commands" test "$(wc -l <"$T_TMP/example.sh")" -eq 4
(cd "$SITE" && bash -e "$T_TMP/example.sh") >"$T_TMP/example.out" 2>&1
check "example: they run ($(head -c 300 "$T_TMP/example.out" | tr '\n' ' '))" test $? -eq 0
out=$("$BIN" actions list --config "$SITE/agent.yaml" 2>&1)
check "example: greet.hello is listed" grep -q '^greet.hello  ' <<<"$out"
"$BIN" check --config "$SITE/agent.yaml" >"$T_TMP/check.out" 2>&1
check "example: check ok ($(grep -v '^note: ' "$T_TMP/check.out" | head -n 2 | tr '\n' ' '))" \
    test "$(tail -n 1 "$T_TMP/check.out")" = ok
check "example: the original stays unloaded" test ! -e "$SITE/actions/_example/plugin.yaml"

# --- setup in the current folder (no DIR) -----------------------------------------
mkdir -p "$T_TMP/here"
(cd "$T_TMP/here" && "$BIN" setup >/dev/null 2>&1); rc=$?
check "setup without DIR: the site is the current folder" \
    test "$rc" -eq 0 -a -f "$T_TMP/here/agent.yaml" -a -f "$T_TMP/here/server/gemini-agent.conf"
check "setup without DIR: the current folder keeps its mode" \
    test "$(stat -c %a "$T_TMP/here")" = "$(stat -c %a "$T_TMP/elsewhere")"

# --- refusals --------------------------------------------------------------------------
out=$("$BIN" setup "$T_TMP/bad;dir" 2>&1); rc=$?
check "setup DIR with a ';': refused, exit 1" bash -c '[ "$1" -eq 1 ] && grep -q "misread" <<<"$2"' _ "$rc" "$out"
check "... and wrote no file there" test -z "$(ls -A "$T_TMP/bad;dir" 2>/dev/null)"
out=$("$BIN" setup "$T_TMP/x" --config-dir "$T_TMP/y" 2>&1); rc=$?
check "setup DIR --config-dir: one or the other, exit 2" \
    bash -c '[ "$1" -eq 2 ] && grep -q "not two" <<<"$2"' _ "$rc" "$out"
check "... and made nothing" test ! -e "$T_TMP/x" -a ! -e "$T_TMP/y"
touch "$T_TMP/afile"
out=$("$BIN" setup "$T_TMP/afile" 2>&1); rc=$?
check "setup on a file: exit 1, said" bash -c '[ "$1" -eq 1 ] && grep -q "afile" <<<"$2"' _ "$rc" "$out"

# --- make install DESTDIR=... --------------------------------------------------------
D=$T_TMP/dest
nice make -s -C "$REPO" install PREFIX=/opt/ga DESTDIR="$D" >"$T_TMP/install2.log" 2>&1 ||
    bail "make install DESTDIR failed: $(tail -c 800 "$T_TMP/install2.log" | tr '\n' ' ')"
check "DESTDIR: the binary under it" test -x "$D/opt/ga/bin/gemini-agent"
check "DESTDIR: the widget under it" test -f "$D/opt/ga/share/gemini-agent/www/agent/index.js"
check "DESTDIR: the prefix compiled in, not DESTDIR" \
    bash -c 'grep -qaF /opt/ga/share/gemini-agent "$1" && ! grep -qaF "$2" "$1"' _ "$D/opt/ga/bin/gemini-agent" "$D"
check "DESTDIR: nothing outside it" test ! -e /opt/ga

finish
