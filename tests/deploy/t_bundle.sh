#!/bin/bash
# t_bundle.sh - the portable bundle (docs/deploy/portable-bundle.md) in a
# root that has glibc and nothing else of ours.
#
# The recipe's blocks run as written: `make bundle` in the checkout, the
# tarball unpacked into SITE, setup, key, chmod, check (SITE and KEY are
# the values the recipe leaves to the site owner). Unpacked, the bundle is
# docs/deploy/shared-hosting.md's folder: gemini-agent.cgi, agent.yaml
# beside it (conf/hosting-agent.yaml), conf/htaccess as .htaccess.
# SITE is a folder of a bare root in T_TMP holding only:
#   - glibc's libraries, copied from the host's folder of libc.so.6 to the
#     same paths (the loader at its PT_INTERP path), matching
#     `scripts/make-bundle.sh --glibc`, the one list of them;
#   - /proc, mounted in a private mount and PID namespace: the loader finds
#     $ORIGIN through /proc/self/exe, and every real host has /proc;
#   - /dev/null and /dev/urandom, the host's bound onto empty files in that
#     mount namespace (the program spawns helpers with stdin on /dev/null,
#     SQLite seeds its randomness from /dev/urandom); nothing to remove.
# No /etc, no /usr, no shell. The mock Gemini server listens on the host's
# 127.0.0.1 (the root shares the network namespace).
#
# In the root: the program's version (or its help when it has no
# --version), LD_DEBUG=libs proof that every library comes from the
# bundle's lib/ or glibc's set, `check`, and one chat through the CGI
# against the mock, the CGI finding agent.yaml beside itself. The negative
# control: build/gemini-agent (linked without the run path) in the same
# root cannot start.
# Then the same folder under a private Apache (tests/deploy/apache_lib.sh)
# as a subfolder of its document root, through the bundle's .htaccess
# alone: the widget is served, the settings, key, secret and state are
# not, and a chat goes through the CGI.
#
# Needs root (mount namespaces, bind mounts); skipped otherwise.
# shellcheck disable=SC1091
source "$(dirname "${BASH_SOURCE[0]}")/../http/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/apache_lib.sh"

RECIPE=$REPO/docs/deploy/portable-bundle.md
RECIPE_PY=$REPO/tests/deploy/recipe.py
BAREROOT=$T_TMP/root

[ "$(id -u)" -eq 0 ] || { skip "$T_NAME" "needs root (mount namespaces)"; finish; }
unshare --mount --pid --fork true 2>/dev/null ||
    { skip "$T_NAME" "no mount and PID namespaces here"; finish; }

# recipe_run NAME [VAR=VALUE...]: the recipe's block NAME in bash -e, with
# the variables given, from the current folder; its output in $T_TMP/NAME.log.
# The site owner's values are SITE and KEY (the recipe's block 'vars').
recipe_run() {
    local name=$1 script
    shift
    script=$("$PY" "$RECIPE_PY" "$RECIPE" "$name") || return 1
    env "$@" bash -euc "$script" >"$T_TMP/$name.log" 2>&1
}

# in_root [VAR=VALUE...] -- PROGRAM ARGS...: PROGRAM (a path inside the
# root) run in the bare root, in /site, with only the variables given;
# stdin as given. Sets RR_RC; stdout in $RR_OUT, stderr in $RR_ERR.
RR_OUT=$T_TMP/root.out
RR_ERR=$T_TMP/root.err
RR_RC=0
in_root() {
    local -a vars=()
    while [ "$1" != -- ]; do vars+=("$1"); shift; done
    shift
    # The bind mounts and /proc exist in the child's mount namespace only.
    # shellcheck disable=SC2016  # the inner bash expands them
    timeout -k 1 20 unshare --mount --pid --fork --mount-proc="$BAREROOT/proc" \
        bash -c 'r=$1; shift
                 mount --bind /dev/null "$r/dev/null" &&
                 mount --bind /dev/urandom "$r/dev/urandom" &&
                 exec env -i "$@"' _ "$BAREROOT" "${vars[@]}" \
        unshare --root="$BAREROOT" --wd=/site "$@" >"$RR_OUT" 2>"$RR_ERR"
    RR_RC=$?
}

# --- build, unpack, set up: the recipe as written -----------------------------
cd "$REPO" || bail "no checkout at $REPO"
recipe_run build || bail "make bundle failed: $(tail -c 800 "$T_TMP/build.log")"
ok "recipe 'build': make bundle"
mapfile -t tgz < <(ls build/gemini-agent-bundle-*.tar.gz 2>/dev/null)
[ ${#tgz[@]} -eq 1 ] || bail "want one build/gemini-agent-bundle-*.tar.gz, found ${#tgz[@]}"
check "the bundle's name says its version and architecture" \
    grep -qE '^build/gemini-agent-bundle-[0-9]+\.[0-9]+\.[0-9]+-[a-z0-9_]+\.tar\.gz$' <<<"${tgz[0]}"

# The bare root: glibc's files, at the host's paths.
mkdir -p "$BAREROOT/proc" "$BAREROOT/dev" "$BAREROOT/site" || bail "cannot make the root"
: >"$BAREROOT/dev/null"
: >"$BAREROOT/dev/urandom"
libc=$(ldd build-bundle/gemini-agent | awk '$1 == "libc.so.6" { print $3 }')
interp=$(readelf -l build-bundle/gemini-agent | sed -n 's/.*interpreter: \(.*\)\]$/\1/p')
if [ -z "$libc" ] || [ -z "$interp" ]; then
    bail "cannot find the host's libc.so.6 and loader"
fi
libdir=$(dirname "$(readlink -f "$libc")")
mkdir -p "$BAREROOT$(dirname "$libc")" "$BAREROOT$(dirname "$interp")"
cp -L "$interp" "$BAREROOT$interp" || bail "cannot copy the loader"
GLIBC_IN_ROOT=()
while IFS= read -r pat; do
    for f in "$libdir"/$pat; do
        [ -e "$f" ] || continue
        cp -L "$f" "$BAREROOT$(dirname "$libc")/" || bail "cannot copy $f"
        GLIBC_IN_ROOT+=("$(dirname "$libc")/$(basename "$f")")
    done
done < <(scripts/make-bundle.sh --glibc)
GLIBC_IN_ROOT+=("$interp")
printf '%s\n' "${GLIBC_IN_ROOT[@]}" >"$T_TMP/glibc-in-root"

# The upload: the tarball alone in a folder, unpacked from there.
mkdir -p "$T_TMP/upload" || bail "cannot make $T_TMP/upload"
cp "${tgz[0]}" "$T_TMP/upload/" || bail "cannot copy the tarball"
# SITE and KEY, the recipe's values for the site owner: this root's folder
# and a key the mock takes.
owner_vars=$("$PY" "$RECIPE_PY" "$RECIPE" vars | sed 's/=.*//' | tr '\n' ' ')
check "the recipe's values are SITE and KEY" test "$owner_vars" = "SITE KEY "
SITE=$BAREROOT/site
KEY=bundle-key-not-a-real-key
(cd "$T_TMP/upload" && recipe_run unpack "SITE=$SITE") ||
    bail "recipe 'unpack' failed: $(tail -c 600 "$T_TMP/unpack.log")"
ok "recipe 'unpack'"
for f in gemini-agent.cgi README .htaccess agent.yaml agent/index.js vendor/marked.js \
    vendor/dompurify.js; do
    check "the bundle holds $f" test -s "$SITE/$f"
done
check "the bundle holds var/, mode 0700" test "$(stat -c %a "$SITE/var" 2>&1)" = 700
check "the bundle's agent.yaml is conf/hosting-agent.yaml" \
    cmp "$SITE/agent.yaml" "$REPO/conf/hosting-agent.yaml"
check "the bundle's .htaccess is conf/htaccess" cmp "$SITE/.htaccess" "$REPO/conf/htaccess"
extra=$(find "$SITE" -mindepth 1 -maxdepth 1 -printf '%f\n' |
    grep -vxE 'gemini-agent\.cgi|lib|agent|vendor|agent\.yaml|var|\.htaccess|README')
check "the bundle holds nothing else (no key, no secret: ${extra:-none})" test -z "$extra"
nlib=$(find "$SITE/lib" -name '*.so*' | wc -l)
check "lib/ holds the libraries ($nlib)" test "$nlib" -ge 6
for l in libjansson.so.4 libcurl.so.4 libyaml-0.so.2 libsqlite3.so.0 libcrypto.so.3 libfcgi.so.0; do
    check "lib/ holds $l" test -f "$SITE/lib/$l"
done
glibc_bundled=$(find "$SITE/lib" -regextype posix-extended \
    -regex '.*/(libc|libm|libpthread|libdl|librt|libresolv|libnss_.*|ld-linux.*)\.so.*')
if [ -z "$glibc_bundled" ]; then
    ok "lib/ holds no glibc library"
else
    not_ok "lib/ holds no glibc library" "$(tr '\n' ' ' <<<"$glibc_bundled")"
fi
if grep -rlF "$REPO" "$SITE" >"$T_TMP/repo-paths"; then
    not_ok "no file of the bundle names the checkout ($REPO)" "$(tr '\n' ' ' <"$T_TMP/repo-paths")"
else
    ok "no file of the bundle names the checkout ($REPO)"
fi

# setup under a umask that would let others read: the modes are setup's.
(umask 022 && recipe_run setup "SITE=$SITE") ||
    bail "recipe 'setup' failed: $(tail -c 600 "$T_TMP/setup.log")"
ok "recipe 'setup'"
check "setup wrote .session-secret (as agent.yaml names it), mode 0600" \
    test "$(stat -c %a "$SITE/.session-secret" 2>&1)" = 600
check "setup wrote .gemini.yaml, mode 0600" test "$(stat -c %a "$SITE/.gemini.yaml" 2>&1)" = 600
recipe_run key "SITE=$SITE" "KEY=$KEY" || bail "recipe 'key' failed: $(tail -c 600 "$T_TMP/key.log")"
check "recipe 'key': the key is in .gemini.yaml" grep -qF "apiKey: '$KEY'" "$SITE/.gemini.yaml"
recipe_run chmod "SITE=$SITE" || bail "recipe 'chmod' failed: $(tail -c 600 "$T_TMP/chmod.log")"
check "recipe 'chmod': the key file is 0600" test "$(stat -c %a "$SITE/.gemini.yaml")" = 600
check "recipe 'chmod': agent.yaml is 0600" test "$(stat -c %a "$SITE/agent.yaml")" = 600

# The test's one addition: Gemini is the loopback mock.
start_mock
printf "baseUrl: '%s'\n" "$MOCK_URL" >>"$SITE/.gemini.yaml"
if recipe_run check "SITE=$SITE"; then
    ok "recipe 'check' (on this host)"
else
    not_ok "recipe 'check' (on this host)" "$(tail -c 600 "$T_TMP/check.log")"
fi

# --- the bare root -------------------------------------------------------------
# The negative control first: the root is bare if the program built
# without the bundle's run path cannot start in it.
mkdir -p "$BAREROOT/control"
cp "$REPO/build/gemini-agent" "$BAREROOT/control/gemini-agent" 2>/dev/null ||
    { make -s all >/dev/null && cp "$REPO/build/gemini-agent" "$BAREROOT/control/gemini-agent"; } ||
    bail "cannot build build/gemini-agent for the control"
in_root -- /control/gemini-agent help
if [ "$RR_RC" -ne 0 ] && grep -q 'error while loading shared libraries' "$RR_ERR"; then
    ok "control: build/gemini-agent cannot start in the bare root ($(head -c 120 "$RR_ERR"))"
else
    not_ok "control: build/gemini-agent cannot start in the bare root" "exit $RR_RC: $(head -c 300 "$RR_ERR")"
fi
rm -rf "$BAREROOT/control"

# The program's version, or its usage where there is no --version yet.
if "$SITE/gemini-agent.cgi" --version >/dev/null 2>&1; then ARGS=(--version); else ARGS=(help); fi
in_root -- /site/gemini-agent.cgi "${ARGS[@]}"
if [ "$RR_RC" -eq 0 ] && [ -s "$RR_OUT" ]; then
    ok "in the bare root: gemini-agent.cgi ${ARGS[*]} ($(head -n 1 "$RR_OUT"))"
else
    not_ok "in the bare root: gemini-agent.cgi ${ARGS[*]}" "exit $RR_RC: $(head -c 300 "$RR_ERR")"
fi

# Where every library came from, by the loader's own account.
in_root LD_DEBUG=libs -- /site/gemini-agent.cgi "${ARGS[@]}"
[ "$RR_RC" -eq 0 ] || not_ok "LD_DEBUG=libs run" "exit $RR_RC"
sed -n 's/.*calling init: //p' "$RR_ERR" | sort -u >"$T_TMP/inits"
(cd "$SITE/lib" && ls -- *.so*) | sed 's|^|/site/lib/|' | sort >"$T_TMP/bundled"
stray=$(grep -vxF -f "$T_TMP/glibc-in-root" "$T_TMP/inits" | grep -v '^/site/lib/')
if [ -s "$T_TMP/inits" ] && [ -z "$stray" ]; then
    ok "every library loaded is the bundle's or glibc's ($(wc -l <"$T_TMP/inits") in all)"
else
    not_ok "every library loaded is the bundle's or glibc's" "others: ${stray:-(the loader reported none)}"
fi
missing=$(grep '^/site/lib/' "$T_TMP/inits" | comm -13 - "$T_TMP/bundled")
extra=$(grep '^/site/lib/' "$T_TMP/inits" | comm -23 - "$T_TMP/bundled")
if [ -z "$missing$extra" ]; then
    ok "every library in lib/ was loaded from lib/ (each found the others through \$ORIGIN/lib)"
else
    not_ok "every library in lib/ was loaded from lib/" "not loaded: $missing; unknown: $extra"
fi

# DT_RPATH, not RUNPATH (the Makefile's bundle block): a host's
# LD_LIBRARY_PATH cannot put another library in front of the bundle's.
mkdir -p "$BAREROOT/other" && : >"$BAREROOT/other/libjansson.so.4"
in_root LD_LIBRARY_PATH=/other -- /site/gemini-agent.cgi "${ARGS[@]}"
if [ "$RR_RC" -eq 0 ]; then
    ok "LD_LIBRARY_PATH naming a broken libjansson.so.4 does not reach the program"
else
    not_ok "LD_LIBRARY_PATH naming a broken libjansson.so.4 does not reach the program" \
        "exit $RR_RC: $(head -c 300 "$RR_ERR")"
fi
rm -rf "$BAREROOT/other"

in_root -- /site/gemini-agent.cgi check --config /site/agent.yaml
if [ "$RR_RC" -eq 0 ]; then
    ok "in the bare root: gemini-agent.cgi check"
else
    not_ok "in the bare root: gemini-agent.cgi check" "exit $RR_RC: $(head -c 400 "$RR_OUT" "$RR_ERR" | tr '\n' ' ')"
fi

# --- one chat through the CGI ---------------------------------------------------
# As Apache starts it after the .htaccess's rewrite: in its own folder, no
# GEMINI_AGENT_CONFIG (the program finds agent.yaml beside
# SCRIPT_FILENAME), REQUEST_URI the route asked for.
printf '%s' '{"message":"[[mock:text say=\"Hello from the bundle.\"]] hi","history":[],"toolDefinitions":[],"pageState":{}}' \
    >"$T_TMP/chat.json"
len=$(stat -c %s "$T_TMP/chat.json")
in_root GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=POST CONTENT_TYPE=application/json \
    "CONTENT_LENGTH=$len" REQUEST_URI=/_jay/actions/geminiAgent.sendMessage \
    SCRIPT_NAME=/gemini-agent.cgi SCRIPT_FILENAME=/site/gemini-agent.cgi REMOTE_ADDR=127.0.0.1 \
    SERVER_PROTOCOL=HTTP/1.1 -- /site/gemini-agent.cgi <"$T_TMP/chat.json"
[ "$RR_RC" -eq 0 ] || not_ok "the CGI exits 0" "exit $RR_RC: $(head -c 400 "$RR_ERR")"
split_cgi_output "$RR_OUT"
assert_py "a chat through the bundle's CGI" <<'EOF'
status ==> 200
r['type'] ==> 'response'
r['message'] ==> 'Hello from the bundle.'
r['usage']['geminiCalls'] ==> 1
len(reqs) ==> 1
reqs[0]['path'] ==> '/v1beta/models/gemini-2.5-flash:generateContent'
EOF

# The recipe's "When it does not start": a host without Debian's CA file
# (this root has no /etc) answers every chat over HTTPS with a 502, and the
# log names the file. A plain listener that closes each connection is
# enough: libcurl reads the CA file before the handshake.
"$PY" -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept(); c.close()' >"$T_TMP/tls.port" &
T_BG_PIDS+=($!)
wait_until 5000 test -s "$T_TMP/tls.port" || bail "no listener for the CA check"
cp "$SITE/.gemini.yaml" "$T_TMP/gemini.yaml.mock"
write_gemini_yaml "$SITE/.gemini.yaml" "bundle-key-not-a-real-key" \
    "https://127.0.0.1:$(cat "$T_TMP/tls.port")"
# tls_chat: the chat, as the CGI in the root, to that listener
tls_chat() {
    in_root GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=POST CONTENT_TYPE=application/json \
        "CONTENT_LENGTH=$len" REQUEST_URI=/_jay/actions/geminiAgent.sendMessage \
        SCRIPT_FILENAME=/site/gemini-agent.cgi REMOTE_ADDR=127.0.0.1 -- /site/gemini-agent.cgi <"$T_TMP/chat.json"
    split_cgi_output "$RR_OUT"
}
tls_chat
assert_status 502 "no CA file on the host: the chat answers 502"
check "no CA file on the host: the log names /etc/ssl/certs/ca-certificates.crt" \
    grep -q 'certificate file: /etc/ssl/certs/ca-certificates.crt' "$RR_ERR"
# The same root with its CA file where the Red Hat family keeps it
# (gemini/cabundle.c): libcurl's own path is still missing, so the file
# found is that one; the handshake then fails against the listener.
mkdir -p "$BAREROOT/etc/pki/tls/certs" || bail "cannot make /etc/pki"
cp /etc/ssl/certs/ca-certificates.crt "$BAREROOT/etc/pki/tls/certs/ca-bundle.crt" ||
    bail "no CA file on this machine to copy"
tls_chat
assert_status 502 "a Red Hat style CA file: the chat still answers 502 (no TLS server)"
if grep -q 'certificate file' "$RR_ERR"; then
    not_ok "a Red Hat style CA file is found" "$(grep 'certificate file' "$RR_ERR" | head -c 300)"
else
    ok "a Red Hat style CA file is found: no CA error ($(grep -o 'cannot talk to Gemini[^"]*' "$RR_ERR" | head -1 | head -c 120))"
fi
rm -rf "${BAREROOT:?}/etc"
cp "$T_TMP/gemini.yaml.mock" "$SITE/.gemini.yaml"

# --- the same bundle under Apache, through its .htaccess -------------------------
# As a shared host serves it: the bundle's folder is a subfolder of the
# document root (/shop/: the routes work under any URL), AllowOverride
# what shared-hosting.md asks a host for, CGI through mod_cgi. The copy
# belongs to the user Apache's children run as (www-data), as a suEXEC
# site belongs to the user its CGI runs as. The host compresses what it
# serves (SetOutputFilter DEFLATE), as some do: the .htaccess keeps a
# streamed answer uncompressed.
if apache_have cgi deflate; then
    HT=$T_TMP/htdocs
    { mkdir -p "$HT" && cp -a "$SITE" "$HT/shop" && chown -R www-data:www-data "$HT" &&
        chmod 0711 "$T_TMP"; } || bail "cannot copy the site for Apache"
    cat >"$T_TMP/bundle-site.conf" <<CONF
DocumentRoot "$HT"
<Directory "$HT">
    AllowOverride FileInfo AuthConfig Options=ExecCGI
    Require all granted
    SetOutputFilter DEFLATE
</Directory>
CONF
    apache_start "$T_TMP/bundle-site.conf" cgi deflate
    # shellcheck disable=SC2034  # lib.sh's req sends there
    BASE_URL=$AP_URL
    req GET /shop/agent/index.js ""
    assert_status 200 "Apache: the widget is served (/shop/agent/index.js)"
    for p in /shop/agent.yaml /shop/.gemini.yaml /shop/.session-secret /shop/var/ \
        /shop/var/x /shop/README /shop/.htaccess; do
        req GET "$p" ""
        assert_status 403 "Apache: $p is not served"
    done
    req POST /shop/_jay/actions/geminiAgent.sendMessage "@$T_TMP/chat.json"
    assert_py "a chat through Apache and the bundle's .htaccess" <<'EOF'
status ==> 200
r['message'] ==> 'Hello from the bundle.'
EOF
    req GET /shop/agent/index.js "" -H 'Accept-Encoding: gzip'
    check "Apache: this host compresses the widget (the control)" \
        grep -qi '^content-encoding: gzip' "$RES_HDRS"
    req POST /shop/_jay/actions/geminiAgent.sendMessage "@$T_TMP/chat.json" \
        -H 'Accept: application/x-ndjson' -H 'Accept-Encoding: gzip'
    assert_status 200 "Apache: a streamed chat"
    check "Apache: the stream is NDJSON" grep -qi '^content-type: application/x-ndjson' "$RES_HDRS"
    check "Apache: the stream is not compressed (.htaccess: no-gzip)" \
        sh -c "! grep -qi '^content-encoding' '$RES_HDRS'"
    apache_stop
else
    skip "Apache with the bundle's .htaccess" "apache2 with mod_cgi and mod_deflate is not installed"
fi

finish
