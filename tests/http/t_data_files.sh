#!/bin/bash
# t_data_files.sh - what the program accepts as its data files:
# the Gemini settings file holding the API key, the session secret
# (auth.secretFile), the run API's SQLite store (dataDir/agent.db), the
# .so plugins and their folders, and the terminal client's sessions.db
# and its folder - each replaced by a symlink to a file others can write,
# a symlink to /etc/passwd, a dangling symlink, a folder, a FIFO, a file
# another user owns (the test runs as root to chown; those cases are
# skipped otherwise), a group- or world-writable file or folder. Each is
# refused with a message naming the file and the fix, or handled safely
# (a settings file that cannot be read is a site without a key; a refused
# sessions.db a chat that is answered but not saved) - never a hang at
# start, never a key, secret, store or plugin others control.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_binary
new_stack_dir
write_gemini_yaml "$ST_DIR/.gemini.yaml" test-key-not-a-real-key
write_config "$GA_CONF"
G=$ST_DIR/.gemini.yaml
S=$ST_DIR/site.key
DB=$ST_DIR/var/agent.db
cp "$G" "$T_TMP/g.orig"
cp "$S" "$T_TMP/s.orig"
ROOT=0
[ "$(id -u)" = 0 ] && ROOT=1

restore() {
    rm -rf "$G" "$S" "$DB" "$DB-wal" "$DB-shm"
    cp "$T_TMP/g.orig" "$G"
    cp "$T_TMP/s.orig" "$S"
    chmod 600 "$G" "$S"
}

# try_serve: start serve on the stack for up to 8 s. SERVE is "refused"
# (it exited non-zero), "serving" (up, its pid file written) or "hung"
# (neither: still starting after 8 s); its stderr in $T_TMP/serve.err.
try_serve() {
    local -a envv
    local pid
    rm -f "$GA_PIDFILE" "$ST_DIR/x.sock"
    mapfile -d '' -t envv < <(ga_env)
    "${envv[@]}" "$GA_BIN" serve --config "$GA_CONF" --socket "$ST_DIR/x.sock" \
        --workers 1 --threads 2 --pid-file "$GA_PIDFILE" >/dev/null 2>"$T_TMP/serve.err" </dev/null &
    pid=$!
    if wait_until 8000 eval "! proc_alive $pid || [ -s '$GA_PIDFILE' ]"; then
        if proc_alive "$pid"; then SERVE=serving; else SERVE=refused; fi
    else
        SERVE=hung
    fi
    stop_pid "$pid" 3000
    wait "$pid" 2>/dev/null
}

# refused LABEL PATTERN...: serve refused to start, its stderr matching
# every PATTERN (grep -E).
refused() {
    local label=$1 p
    shift
    try_serve
    if [ "$SERVE" != refused ]; then
        not_ok "$label: refused" "serve is $SERVE; stderr: $(tail -c 300 "$T_TMP/serve.err" | tr '\n' ' ')"
        return
    fi
    for p in "$@"; do
        if ! grep -Eq -- "$p" "$T_TMP/serve.err"; then
            not_ok "$label: refused" "no '$p' in: $(tail -c 400 "$T_TMP/serve.err" | tr '\n' ' ')"
            return
        fi
    done
    ok "$label: refused, saying why"
}

# keyless LABEL PATTERN: serve starts without a key (the file is not read),
# its log saying PATTERN; nothing of the file is in the log.
keyless() {
    try_serve
    if [ "$SERVE" = serving ] && grep -Eq -- "$2" "$T_TMP/serve.err" &&
        grep -q "no Gemini API key" "$T_TMP/serve.err" && ! grep -q "root:" "$T_TMP/serve.err"; then
        ok "$1: serves without a key, saying why"
    else
        not_ok "$1: serves without a key, saying why" "serve is $SERVE; stderr: $(tail -c 400 "$T_TMP/serve.err" | tr '\n' ' ')"
    fi
}

try_serve
[ "$SERVE" = serving ] || bail "the stack does not serve to begin with: $(tail -c 300 "$T_TMP/serve.err")"

# --- the Gemini settings file (the API key) --------------------------------------
cp "$T_TMP/g.orig" "$T_TMP/g.ww"; chmod 666 "$T_TMP/g.ww"
rm "$G"; ln -s "$T_TMP/g.ww" "$G"
refused "key file: a symlink to a 0666 file" "holds the Gemini API key" "mode 666" "chmod 600"; restore
rm "$G"; ln -s /etc/passwd "$G"
keyless "key file: a symlink to /etc/passwd (not YAML: no key in it)" "must be a mapping"; restore
chmod 620 "$G"
refused "key file: group-writable (0620)" "mode 620" "chmod 600"; restore
rm "$G"; ln -s "$T_TMP/nothing" "$G"
keyless "key file: a dangling symlink" "does not exist"; restore
rm "$G"; mkdir -m 700 "$G"
keyless "key file: a folder" "cannot read file: Is a directory"; restore
rm "$G"; mkfifo -m 600 "$G"
keyless "key file: a FIFO (no hang)" "cannot read file: not a regular file"; restore
if [ "$ROOT" = 1 ]; then
    chown nobody "$G"
    refused "key file: 0600 but owned by another user" "belongs to user [0-9]+" "chown"; restore
    cp "$T_TMP/g.orig" "$T_TMP/g.nobody"; chmod 600 "$T_TMP/g.nobody"; chown nobody "$T_TMP/g.nobody"
    rm "$G"; ln -s "$T_TMP/g.nobody" "$G"
    refused "key file: a symlink to another user's 0600 file" "belongs to user [0-9]+"; restore
else
    skip "key file: owned by another user" "needs root to chown"
fi

# --- the session secret ----------------------------------------------------------
cp "$T_TMP/s.orig" "$T_TMP/s.ww"; chmod 666 "$T_TMP/s.ww"
rm "$S"; ln -s "$T_TMP/s.ww" "$S"
refused "secret: a symlink to a 0666 file" "session secret .* is open to group or others \(mode 666\)" "chmod 600"; restore
rm "$S"; ln -s /etc/passwd "$S"
refused "secret: a symlink to /etc/passwd" "open to group or others \(mode 644\)"; restore
chmod 640 "$S"
refused "secret: group-readable (0640)" "mode 640"; restore
rm "$S"; ln -s "$T_TMP/nothing" "$S"
refused "secret: a dangling symlink" "does not exist"; restore
rm "$S"; mkdir -m 700 "$S"
refused "secret: a folder" "is not a regular file"; restore
rm "$S"; mkfifo -m 600 "$S"
refused "secret: a FIFO (no hang)" "is not a regular file"; restore
if [ "$ROOT" = 1 ]; then
    chown nobody "$S"
    refused "secret: 0600 but owned by another user" "belongs to user [0-9]+" "chown"; restore
else
    skip "secret: owned by another user" "needs root to chown"
fi

# --- the run API's store ---------------------------------------------------------
# serve starts (the chat needs no store) and says the store is not usable;
# the file the symlink points at is left as it was.
store_refused() {
    local label=$1 want=$2
    try_serve
    if [ "$SERVE" = serving ] && grep -q "store .*agent.db is not usable" "$T_TMP/serve.err" &&
        grep -Eq -- "$want" "$T_TMP/serve.err"; then
        ok "$label: not used, saying why"
    else
        not_ok "$label: not used, saying why" "serve is $SERVE; stderr: $(tail -c 400 "$T_TMP/serve.err" | tr '\n' ' ')"
    fi
}
try_serve # makes the store
[ -f "$DB" ] || bail "serve made no store at $DB"
cp "$DB" "$T_TMP/db.orig"
restore_db() { rm -rf "$DB" "$DB-wal" "$DB-shm"; cp "$T_TMP/db.orig" "$DB"; chmod 600 "$DB"; }
restore_db
chmod 666 "$DB"
store_refused "store: world-writable (0666)" "group or others can write it \(mode 666\): run chmod 600"; restore_db
chmod 620 "$DB"
store_refused "store: group-writable (0620)" "mode 620"; restore_db
cp "$T_TMP/db.orig" "$T_TMP/db.ww"; chmod 666 "$T_TMP/db.ww"
rm "$DB"; ln -s "$T_TMP/db.ww" "$DB"
store_refused "store: a symlink to a 0666 file" "mode 666"
if cmp -s "$T_TMP/db.ww" "$T_TMP/db.orig"; then ok "store: the symlink's target is untouched"; else not_ok "store: the symlink's target is untouched" "it changed"; fi
restore_db
rm "$DB"; ln -s "$T_TMP/nowhere.db" "$DB"
store_refused "store: a dangling symlink" "symlink to nothing"
if [ ! -e "$T_TMP/nowhere.db" ]; then ok "store: nothing created where the dangling symlink points"; else not_ok "store: nothing created where the dangling symlink points" "$T_TMP/nowhere.db exists"; fi
restore_db
cp -p /etc/passwd "$T_TMP/passwd.before"
rm "$DB"; ln -s /etc/passwd "$DB"
store_refused "store: a symlink to /etc/passwd" "mode 644|not a database"
if cmp -s /etc/passwd "$T_TMP/passwd.before"; then ok "store: /etc/passwd untouched"; else not_ok "store: /etc/passwd untouched" "it changed"; fi
restore_db
rm "$DB"; mkdir -m 700 "$DB"
store_refused "store: a folder" "not a regular file"; restore_db
VARMODE=$(stat -c %a "$ST_DIR/var")
chmod 777 "$ST_DIR/var"
store_refused "store: dataDir 0777" "others can write its folder \(mode 0777\)"
chmod 1777 "$ST_DIR/var"
store_refused "store: dataDir 1777 (sticky, as /tmp)" "others can write its folder \(mode 1777\)"
chmod "$VARMODE" "$ST_DIR/var"
if [ "$ROOT" = 1 ]; then
    chown nobody "$DB"
    store_refused "store: 0600 but owned by another user" "belongs to user [0-9]+: run chown"; restore_db
else
    skip "store: owned by another user" "needs root to chown"
fi
try_serve
if [ "$SERVE" = serving ] && ! grep -q "is not usable" "$T_TMP/serve.err"; then
    ok "the restored files serve with a usable store"
else
    not_ok "the restored files serve with a usable store" "$(tail -c 300 "$T_TMP/serve.err" | tr '\n' ' ')"
fi

# --- .so plugins and their folders ---------------------------------------------------
# `check` lists a plugin it loads ("plugin hello (PATH)") and names one it
# leaves out, with the reason; anyone who can write the file or a folder
# it is in could run code in the server.
PLUG=$T_TMP/plug
mkdir -p "$PLUG" "$T_TMP/elsewhere"
make -s -C "$REPO/tests/plugins" OUT="$T_TMP/built" >"$T_TMP/plugins.build" 2>&1 ||
    bail "cannot build the test plugins: $(tail -c 400 "$T_TMP/plugins.build" | tr '\n' ' ')"
cp "$T_TMP/built/hello.so" "$T_TMP/hello.orig"
chmod 755 "$PLUG" "$T_TMP/elsewhere"
write_config "$GA_CONF" '{maxBodyBytes: 4096}' "$ST_DIR/var" "plugins: {dirs: ['$PLUG'], expose: all}"
restore_plug() {
    chmod 755 "$PLUG" "$T_TMP/elsewhere"
    rm -rf "$PLUG/hello.so" "$T_TMP/elsewhere"/*
    cp "$T_TMP/hello.orig" "$PLUG/hello.so"
    chmod 755 "$PLUG/hello.so"
}
# plug_loaded LABEL: check loads hello; plug_out LABEL PATTERN: check
# leaves it out, saying PATTERN.
plug_loaded() {
    ga_run check --config "$GA_CONF"
    if grep -qF "plugin hello ($PLUG/hello.so)" <<<"$out"; then ok "$1: loaded"; else
        not_ok "$1: loaded" "check said: $(printf '%s %s' "$out" "$err" | grep -i plugin | head -n 3 | tr '\n' '|')"
    fi
}
plug_out() {
    ga_run check --config "$GA_CONF"
    if ! grep -qF "plugin hello (" <<<"$out" && grep -Eq -- "$PLUG/hello.so: plugin left out: .*$2" <<<"$out$err"; then
        ok "$1: left out, saying why"
    else
        not_ok "$1: left out, saying why" "check said: $(printf '%s %s' "$out" "$err" | grep -i "plugin" | head -n 3 | tr '\n' '|')"
    fi
}
restore_plug
plug_loaded "plugin: hello.so 0755 in a 0755 folder"
chmod 666 "$PLUG/hello.so"
plug_out "plugin: a world-writable hello.so" "group or others can write it \(mode 666\)"; restore_plug
if [ "$ROOT" = 1 ]; then
    # root's group is its user-private one (named as the user): a umask
    # of 002 leaves that group writable, which lets no one else in
    chmod 775 "$PLUG/hello.so"
    plug_loaded "plugin: 0775, group root:root (the owner's private group)"
    chgrp daemon "$PLUG/hello.so"
    plug_out "plugin: 0775 with the daemon group" "mode 775"; restore_plug
    chmod 775 "$PLUG"; chgrp daemon "$PLUG"
    plug_out "plugin: its folder 0775 with the daemon group" "can write its folder \\(mode 0775\\)"
    chgrp root "$PLUG"; restore_plug
else
    skip "plugin: group-writable with another group" "needs root to chgrp"
fi
chmod 777 "$PLUG"
plug_out "plugin: a world-writable plugins folder" "can write its folder \(mode 0777\)"; restore_plug
chmod 1777 "$PLUG"
plug_out "plugin: a sticky world-writable plugins folder (as /tmp)" "can write its folder \(mode 1777\)"; restore_plug
cp "$T_TMP/hello.orig" "$T_TMP/elsewhere/hello.so"; chmod 666 "$T_TMP/elsewhere/hello.so"
rm "$PLUG/hello.so"; ln -s "$T_TMP/elsewhere/hello.so" "$PLUG/hello.so"
plug_out "plugin: a symlink to a world-writable file" "mode 666"; restore_plug
cp "$T_TMP/hello.orig" "$T_TMP/elsewhere/hello.so"; chmod 755 "$T_TMP/elsewhere/hello.so"; chmod 777 "$T_TMP/elsewhere"
rm "$PLUG/hello.so"; ln -s "$T_TMP/elsewhere/hello.so" "$PLUG/hello.so"
plug_out "plugin: a symlink into a world-writable folder" "can write its folder \(mode 0777\)"; restore_plug
cp "$T_TMP/hello.orig" "$T_TMP/elsewhere/hello.so"; chmod 755 "$T_TMP/elsewhere/hello.so"
rm "$PLUG/hello.so"; ln -s "$T_TMP/elsewhere/hello.so" "$PLUG/hello.so"
plug_loaded "plugin: a symlink to a 0755 file in a 0755 folder"; restore_plug
rm "$PLUG/hello.so"; mkdir "$PLUG/hello.so"
plug_out "plugin: a folder named hello.so" "it is not a regular file"; restore_plug
rm "$PLUG/hello.so"; ln -s "$T_TMP/elsewhere/none.so" "$PLUG/hello.so"
plug_out "plugin: a dangling symlink" "cannot load it"; restore_plug
if [ "$ROOT" = 1 ]; then
    chown nobody "$PLUG/hello.so"
    plug_loaded "plugin: 0755, owned by another user (the deployer; not refused)"; restore_plug
fi

# --- the terminal client's sessions.db and its folder ---------------------------------
# A refused store is no refused chat: the answer comes, and stderr says the
# session will not be saved, and why.
start_mock
STATE=$T_TMP/state
SDIR=$STATE/gemini-agent
GA_EXTRA_ENV=("GEMINI_BASE_URL=$MOCK_URL" GEMINI_API_KEY=test-key-not-a-real-key
    "XDG_STATE_HOME=$STATE" "GEMINI_AGENT_CONFIG=$T_TMP/no-agent.yaml")
mkdir -p "$T_TMP/work"
chat_hi() { pushd "$T_TMP/work" >/dev/null && ga_run chat -p hi; popd >/dev/null; }
# chat_unsaved LABEL PATTERN: answered, not saved, stderr saying PATTERN.
chat_unsaved() {
    chat_hi
    if [ "$rc" -eq 0 ] && grep -q "Hello from the mock" <<<"$out" &&
        grep -q "will not be saved" <<<"$err" && grep -Eq -- "$2" <<<"$err"; then
        ok "$1: answered, not saved, saying why"
    else
        not_ok "$1: answered, not saved, saying why" "rc $rc; out: ${out:0:100}; err: ${err:0:300}"
    fi
}
chat_hi
if [ "$rc" -eq 0 ] && [ -f "$SDIR/sessions.db" ] && [ -z "$err" ]; then
    ok "chat: saves its session in a 0700 folder, 0600 file"
else
    not_ok "chat: saves its session" "rc $rc; err: ${err:0:300}"
fi
[ "$(stat -c %a "$SDIR")" = 700 ] && [ "$(stat -c %a "$SDIR/sessions.db")" = 600 ] &&
    ok "chat: the folder is 0700, sessions.db 0600" ||
    not_ok "chat: the folder is 0700, sessions.db 0600" "$(stat -c '%a %n' "$SDIR" "$SDIR/sessions.db" | tr '\n' ' ')"
chmod 666 "$SDIR/sessions.db"
chat_unsaved "sessions.db 0666" "group or others can write it \(mode 666\)"
chmod 600 "$SDIR/sessions.db"; chmod 777 "$SDIR"
chat_unsaved "the sessions' folder 0777" "sessions' folder .* is open to group or others \(mode 0777\): run chmod 700"
chmod 700 "$SDIR"
mv "$SDIR/sessions.db" "$T_TMP/sessions.db"; chmod 666 "$T_TMP/sessions.db"
ln -s "$T_TMP/sessions.db" "$SDIR/sessions.db"
chat_unsaved "sessions.db a symlink to a 0666 file" "mode 666"
rm "$SDIR/sessions.db"; ln -s "$T_TMP/nowhere.db" "$SDIR/sessions.db"
chat_unsaved "sessions.db a dangling symlink" "symlink to nothing"
[ ! -e "$T_TMP/nowhere.db" ] && ok "sessions.db: nothing made where the dangling symlink points" ||
    not_ok "sessions.db: nothing made where the dangling symlink points" "it exists"
rm "$SDIR/sessions.db"; ln -s /etc/passwd "$SDIR/sessions.db"
cp -p /etc/passwd "$T_TMP/passwd.before2"
chat_unsaved "sessions.db a symlink to /etc/passwd" "mode 644|not a database"
cmp -s /etc/passwd "$T_TMP/passwd.before2" && ok "sessions.db: /etc/passwd untouched" ||
    not_ok "sessions.db: /etc/passwd untouched" "it changed"
rm "$SDIR/sessions.db"
if [ "$ROOT" = 1 ]; then
    mv "$T_TMP/sessions.db" "$SDIR/sessions.db"; chmod 600 "$SDIR/sessions.db"; chown nobody "$SDIR/sessions.db"
    chat_unsaved "sessions.db owned by another user" "belongs to user [0-9]+"
fi

finish
