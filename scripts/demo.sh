#!/bin/sh
# `make demo`: install what is missing, build, and run the responder behind
# a private nginx on 127.0.0.1:${DEMO_PORT:-8080} in the foreground until
# Ctrl-C, then stop everything this script started.
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

master=""; ngx=""
cleanup() {
    trap - EXIT INT TERM
    [ -n "$ngx" ] && kill "$ngx" 2>/dev/null && wait "$ngx" 2>/dev/null
    [ -n "$master" ] && kill "$master" 2>/dev/null && wait "$master" 2>/dev/null
    rm -rf "$run"
    echo "demo stopped"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

"$repo/build/gemini-agent" serve --config "$cfg" --socket "$sock" \
    --pid-file "$run/gemini-agent.pid" &
master=$!
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
    GET  http://127.0.0.1:$port/_jay/actions
    POST http://127.0.0.1:$port/_jay/actions/shop.searchProducts  {"query":"usb"}

  Ctrl-C stops it.
EOM
wait "$master"
