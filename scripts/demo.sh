#!/bin/sh
# `make demo`: install what is missing, build, and run the responder behind
# a private nginx on 127.0.0.1:${DEMO_PORT:-8080} in the foreground until
# Ctrl-C, then stop everything this script started.
#
# The model: with a Gemini API key (conf/.gemini.yaml, or GEMINI_API_KEY /
# GOOGLE_API_KEY in the environment) the responder talks to Gemini
# (GEMINI_BASE_URL overrides the endpoint). Without one it talks to the
# offline demo model: tests/mock/gemini_mock.py --demo on 127.0.0.1, which
# answers the demo cart page's common requests (add, remove, change a
# quantity, search) with real-format replies. Its Gemini settings then name
# the model "offline-demo", so the server reports it before the first
# answer (GET /_jay/actions/geminiAgent.status) and the widget can say so.
#
# A taken port (or an nginx that cannot start for any other reason) stops
# the demo at once with a message naming the port and how to pick another;
# nothing it started is left running and its temp folder is removed.
#
# Environment: DEMO_PORT (default 8080); GEMINI_CONFIG (the Gemini settings
# file, default conf/.gemini.yaml); DEMO_NO_SETUP=1 skips installing,
# building and setting up www/ (for tests: build/gemini-agent must exist).
#
# The assistant page (/assistant/, the run API): the demo makes a session
# secret in its temp folder (auth.secretFile, by `gemini-agent setup`),
# mints a token for the user "demo" (`gemini-agent auth issue`) and nginx
# serves it as /assistant/demo-session.json to 127.0.0.1 alone, which is
# what the page's "Sign in as the demo user" reads. Demo only: a real site
# signs users in with its own login and mints tokens server-side (docs/http-api.md
# "Identity"). A new secret each start ends the old sessions; the threads
# stay (the store is in var/).
#
# Nothing is installed system-wide beyond Debian packages; nginx runs from
# a temp folder, not as the system service. Server-side state (reviews, the
# run API's store var/agent.db) goes to var/ in the checkout.
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd -P)
port=${DEMO_PORT:-8080}
cd "$repo"

case $port in
'' | *[!0-9]*) port=0 ;;
esac
if [ "$port" -lt 1 ] || [ "$port" -gt 65535 ]; then
    echo "make demo: DEMO_PORT must be a port number (1-65535), not '${DEMO_PORT:-}'" >&2
    exit 2
fi
# The port to suggest instead.
alt=$((port + 1))
[ "$alt" -le 65535 ] || alt=8081

# The system Python: a pyenv shim can add a noticeable delay to every start.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3 || echo python3)

# Can nginx bind 127.0.0.1:$port? Binding as nginx does (SO_REUSEADDR)
# fails exactly when something else holds the port. Unknown (no Python
# yet, before install-deps) counts as free: nginx will tell.
port_taken() {
    "$PY" -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(0)
sys.exit(1)' "$port" 2>/dev/null
}

say_pick_another() {
    echo "  Pick another port: DEMO_PORT=$alt make demo" >&2
}

# Before anything is installed, built or started.
if port_taken; then
    echo "make demo: 127.0.0.1:$port is already in use by another program." >&2
    say_pick_another
    exit 1
fi

if [ "${DEMO_NO_SETUP:-}" != 1 ]; then
    "$repo/scripts/install-deps.sh"
    make -s
    "$repo/scripts/setup-www.sh"
fi

run="" master="" ngx="" mock=""
# Ctrl-C reaches every process of the terminal's foreground group (nginx,
# the responder and the mock stop on SIGINT too); this stops whatever is
# left. `set +e`: a `wait` for a process killed by a signal returns >128,
# which must not end the cleanup half-way. A second Ctrl-C or SIGTERM
# (a group signal arrives once per process of the group) must not end it
# either: they are ignored from here on.
stop() {
    [ -n "$1" ] || return 0
    kill "$1" 2>/dev/null
    wait "$1" 2>/dev/null
}
cleanup() {
    set +e
    trap '' INT TERM
    trap - EXIT
    stop "$ngx"; stop "$master"; stop "$mock"
    if [ -n "$run" ]; then
        rm -rf "$run"
        echo "demo stopped"
    fi
}
trap cleanup EXIT
trap 'exit 0' INT TERM

run=$(mktemp -d "${TMPDIR:-/tmp}/gemini-agent-demo.XXXXXX")
sock=$run/gemini-agent.sock
cfg=$run/agent.yaml
# The demo config: the checkout's defaults, with paths made absolute, and
# the session secret that signs the demo user's token.
# write_cfg GEMINI_SETTINGS_FILE
write_cfg() {
    cat > "$cfg" <<EOC
gemini: $1
actions: [$repo/actions]
dataDir: $repo/var
auth:
  secretFile: $run/session-secret
EOC
}
gemini=${GEMINI_CONFIG:-$repo/conf/.gemini.yaml}
write_cfg "$gemini"
mkdir -p "$repo/var"
# The secret (32 random bytes, mode 0600), as a site makes it. setup also
# writes a template .gemini.yaml into the temp folder, which nothing reads.
"$repo/build/gemini-agent" setup --config-dir "$run" >/dev/null ||
    { echo "make demo: could not create the session secret" >&2; exit 1; }
# The demo user's token, for the assistant page (a day is plenty).
token=$("$repo/build/gemini-agent" auth issue --user demo --ttl 86400 --config "$cfg") ||
    { echo "make demo: could not issue the demo user's session token" >&2; exit 1; }
expires=${token#v1.*.}
expires=${expires%%.*}
(umask 077 && printf '{"user":"demo","token":"%s","expiresAt":%s}\n' "$token" "$expires" \
    > "$run/demo-session.json")

# Is there a key? `check` reads the config the way `serve` will (file,
# environment, placeholders) and names where the key comes from - never
# the key itself.
check_out=$("$repo/build/gemini-agent" check --config "$cfg" 2>/dev/null || true)
key_note=$(printf '%s\n' "$check_out" | grep '^note: the API key comes from' || true)
# A placeholder in GEMINI_API_KEY is reported as a problem (but `check`
# still names the variable): that is no key either.
if printf '%s\n' "$check_out" | grep -qE 'is a placeholder|no Gemini API key'; then
    key_note=""
fi
if [ -n "$key_note" ]; then
    model_line="Gemini (${key_note#note: }; GEMINI_BASE_URL overrides the endpoint)"
    "$repo/build/gemini-agent" serve --config "$cfg" --socket "$sock" \
        --pid-file "$run/gemini-agent.pid" &
    master=$!
else
    "$PY" "$repo/tests/mock/gemini_mock.py" --demo --host 127.0.0.1 --port 0 \
        --port-file "$run/mock.port" --quiet 2>"$run/mock.log" &
    mock=$!
    "$PY" "$repo/tests/mock/mockctl.py" wait --timeout 10 --port-file "$run/mock.port" \
        >/dev/null 2>&1 || { cat "$run/mock.log" >&2; echo "the offline demo model did not start" >&2; exit 1; }
    mock_url="http://127.0.0.1:$(cat "$run/mock.port")"
    model_line="the OFFLINE DEMO MODEL (no Gemini API key configured; it understands a
    few requests: remove the hub, add a desk lamp for 19.99, set the keyboard
    quantity to 3, search for usb; on the assistant page: review the USB-C hub 5
    stars: great). For Gemini, put your key in
    conf/.gemini.yaml (gemini-agent setup --config-dir conf) or set GEMINI_API_KEY."
    # The demo's own Gemini settings: the model named "offline-demo" (the
    # demo model serves any name), its address, and a stand-in key (it
    # accepts any), in a file only this user can read, as serve demands.
    (umask 077 && cat > "$run/gemini.yaml" <<EOG
apiKey: offline-demo-not-a-key
model: offline-demo
baseUrl: $mock_url
EOG
)
    write_cfg "$run/gemini.yaml"
    # The environment must not point this responder anywhere else.
    env -u GEMINI_API_KEY -u GOOGLE_API_KEY GEMINI_BASE_URL="$mock_url" \
        "$repo/build/gemini-agent" serve --config "$cfg" --socket "$sock" \
        --pid-file "$run/gemini-agent.pid" &
    master=$!
fi
i=0
while [ ! -S "$sock" ]; do
    i=$((i + 1))
    [ $i -gt 50 ] && { echo "the responder did not start" >&2; exit 1; }
    kill -0 "$master" 2>/dev/null || { echo "the responder exited" >&2; exit 1; }
    sleep 0.1
done
"$repo/scripts/render-nginx-conf.sh" "$run/nginx" "$port" "$sock" "$repo/www" "" \
    "$run/demo-session.json"
# Once more: the port may have been taken while the demo was starting.
if port_taken; then
    echo "make demo: 127.0.0.1:$port is already in use by another program." >&2
    say_pick_another
    exit 1
fi
nginx -c "$run/nginx/nginx.conf" -p "$run/nginx/" -e "$run/nginx/error.log" &
ngx=$!
# Ready when it answers on the port; gone means it could not start.
i=0
until curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$port/"; do
    if ! kill -0 "$ngx" 2>/dev/null; then
        echo "make demo: nginx could not start on 127.0.0.1:$port:" >&2
        tail -n 5 "$run/nginx/error.log" 2>/dev/null | sed 's/^/    /' >&2
        echo "  If another program uses port $port:" >&2
        say_pick_another
        exit 1
    fi
    i=$((i + 1))
    if [ $i -gt 50 ]; then
        echo "make demo: nginx did not answer on 127.0.0.1:$port within 5 s" >&2
        say_pick_another
        exit 1
    fi
    sleep 0.1
done
cat <<EOM

  gemini-agent demo: http://127.0.0.1:$port/
    assistant (run API, signed in as the demo user "demo"): http://127.0.0.1:$port/assistant/
    model: $model_line
    GET  http://127.0.0.1:$port/_jay/actions
    POST http://127.0.0.1:$port/_jay/actions/shop.searchProducts  {"query":"usb"}

  Ctrl-C stops it.
EOM
wait "$master"
