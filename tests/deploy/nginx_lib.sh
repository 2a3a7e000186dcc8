# tests/deploy/nginx_lib.sh - a private nginx around a site snippet as a
# site owner has it (`gemini-agent setup`'s DIR/server/gemini-agent.conf,
# or a recipe's): only its listen line is changed, to a free loopback
# port; the main config around it keeps every path (pid, logs, temp
# files) in the test's temp folder. Never touches /etc/nginx.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/nginx_lib.sh"   (after lib.sh)
#   site_nginx_start SNIPPET [PORT]
#       sets NGX_PID, NGX_DIR, NGX_PORT, BASE_URL (lib.sh's req then goes
#       through it). With PORT, the snippet already listens there (a
#       recipe moved it) and is included as it is.
#   NGX_USER   the workers' user (default: root when root, so that they
#              may open a root responder's 0660 socket)
#   stop_nginx (lib.sh) stops it; lib.sh's exit trap does too.
#
# shellcheck shell=bash

site_nginx_start() {
    local snippet=$1 user_line=''
    NGX_DIR=$T_TMP/site-nginx
    mkdir -p "$NGX_DIR/tmp"
    # the snippet's `include fastcgi_params;` is relative to the config
    cp /etc/nginx/fastcgi_params "$NGX_DIR/fastcgi_params"
    if [ $# -ge 2 ]; then
        NGX_PORT=$2
        printf 'include %s;\n' "$snippet" >"$NGX_DIR/site.conf"
    else
        grep -q '^    listen 127.0.0.1:8080;$' "$snippet" ||
            bail "$snippet has no 'listen 127.0.0.1:8080;' line to move"
        NGX_PORT=$(free_port) || bail "no free port"
        sed "s|^    listen 127.0.0.1:8080;$|    listen 127.0.0.1:$NGX_PORT;|" \
            "$snippet" >"$NGX_DIR/site.conf"
    fi
    BASE_URL=http://127.0.0.1:$NGX_PORT
    if [ -n "${NGX_USER:-}" ]; then
        user_line="user $NGX_USER;"
    elif [ "$(id -u)" -eq 0 ]; then
        user_line='user root;'
    fi
    cat >"$NGX_DIR/nginx.conf" <<EOC
$user_line
worker_processes 1;
daemon off;
pid $NGX_DIR/nginx.pid;
error_log $NGX_DIR/error.log info;
events { worker_connections 256; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log $NGX_DIR/access.log;
    client_body_temp_path $NGX_DIR/tmp/body;
    fastcgi_temp_path $NGX_DIR/tmp/fastcgi;
    proxy_temp_path $NGX_DIR/tmp/proxy;
    uwsgi_temp_path $NGX_DIR/tmp/uwsgi;
    scgi_temp_path $NGX_DIR/tmp/scgi;
    include $NGX_DIR/site.conf;
}
EOC
    "$NGINX_BIN" -c "$NGX_DIR/nginx.conf" -p "$NGX_DIR/" -e "$NGX_DIR/error.log" \
        >"$NGX_DIR/stdout" 2>&1 </dev/null &
    NGX_PID=$!
    if ! wait_until 5000 eval 'curl -s -o /dev/null --max-time 1 "$BASE_URL/" && [ -s "$NGX_DIR/nginx.pid" ]'; then
        bail "nginx did not start: $(tail -c 600 "$NGX_DIR/error.log" "$NGX_DIR/stdout" 2>/dev/null | tr '\n' ' ')"
    fi
}
