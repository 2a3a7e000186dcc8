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
# quantity, search) with real-format replies, and reports itself as
# "offline-demo" so the widget can say so.
#
# Nothing is installed system-wide beyond Debian packages; nginx runs from
# a temp folder, not as the system service. Server-side state (reviews)
# goes to var/ in the checkout.
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd -P)
port=${DEMO_PORT:-8080}
cd "$repo"

"$repo/scripts/install-deps.sh"
make -s
"$repo/scripts/setup-www.sh"

# The system Python: a pyenv shim can add a noticeable delay to every start.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)

run=$(mktemp -d "${TMPDIR:-/tmp}/gemini-agent-demo.XXXXXX")
sock=$run/gemini-agent.sock
cfg=$run/agent.yaml
# The demo config: the checkout's defaults, with paths made absolute.
gemini=${GEMINI_CONFIG:-$repo/conf/.gemini.yaml}
cat > "$cfg" <<EOC
gemini: $gemini
actions: [$repo/actions]
dataDir: $repo/var
EOC

master=""; ngx=""; mock=""
# Ctrl-C reaches every process of the terminal's foreground group (nginx,
# the responder and the mock stop on SIGINT too); this stops whatever is
# left. `set +e`: a `wait` for a process killed by a signal returns >128,
# which must not end the cleanup half-way.
stop() {
    [ -n "$1" ] || return 0
    kill "$1" 2>/dev/null
    wait "$1" 2>/dev/null
}
cleanup() {
    set +e
    trap - EXIT INT TERM
    stop "$ngx"; stop "$master"; stop "$mock"
    rm -rf "$run"
    echo "demo stopped"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

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
    model_line="the OFFLINE DEMO MODEL (no Gemini API key configured; it understands a
    few requests: remove the hub, add a desk lamp for 19.99, set the keyboard
    quantity to 3, search for usb). For Gemini, put your key in
    conf/.gemini.yaml (gemini-agent setup --config-dir conf) or set GEMINI_API_KEY."
    # The key below is a stand-in: the local demo model accepts any value.
    GEMINI_BASE_URL="http://127.0.0.1:$(cat "$run/mock.port")" \
    GEMINI_API_KEY=offline-demo-not-a-key \
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
"$repo/scripts/render-nginx-conf.sh" "$run/nginx" "$port" "$sock" "$repo/www"
nginx -c "$run/nginx/nginx.conf" -p "$run/nginx/" -e "$run/nginx/error.log" &
ngx=$!
sleep 0.3
kill -0 "$ngx" 2>/dev/null || { cat "$run/nginx/error.log" >&2; exit 1; }
cat <<EOM

  gemini-agent demo: http://127.0.0.1:$port/
    model: $model_line
    GET  http://127.0.0.1:$port/_jay/actions
    POST http://127.0.0.1:$port/_jay/actions/shop.searchProducts  {"query":"usb"}

  Ctrl-C stops it.
EOM
wait "$master"
