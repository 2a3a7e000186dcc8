#!/bin/bash
# t_key_file.sh - serve refuses a Gemini settings file that holds the API
# key and that group or others can read or write, at start and on SIGHUP
# (the old site stays), unless agent.yaml says allowReadableKeyFile: true
# (then it serves, with a warning naming the file). A key from the
# environment is not guarded. `check` reports the same refusal.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_binary
rnd=$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
KEY="AIzaKeyFileCanary${rnd}"

# serve_refused LABEL: serve on $GA_CONF must exit non-zero at once, naming
# the key file and chmod 600, binding nothing.
serve_refused() {
    local label=$1 rc out=$ST_DIR/refused.log
    local -a envv
    mapfile -d '' -t envv < <(ga_env)
    timeout -k 1 10 "${envv[@]}" "$GA_BIN" serve --config "$GA_CONF" \
        --socket "$GA_SOCK" --workers 1 >/dev/null 2>"$out" </dev/null
    rc=$?
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ ! -e "$GA_SOCK" ] &&
        grep -qF "$ST_DIR/.gemini.yaml holds the Gemini API key" "$out" &&
        grep -qF "chmod 600 $ST_DIR/.gemini.yaml" "$out" &&
        grep -qF "allowReadableKeyFile" "$out"; then
        ok "$label: serve refuses to start, naming the file and chmod 600"
    else
        not_ok "$label: serve refuses to start" "exit $rc; socket $([ -e "$GA_SOCK" ] && echo made || echo absent); log: $(tr '\n' '|' <"$out" | head -c 400)"
    fi
    assert_file_lacks "$out" "$KEY" "$label: the key is not in the log"
}

# --- refused at start --------------------------------------------------------
for mode in 644 640 620 604 602; do
    new_stack_dir
    write_config "$GA_CONF"
    write_gemini_yaml "$ST_DIR/.gemini.yaml" "$KEY"
    chmod "$mode" "$ST_DIR/.gemini.yaml"
    serve_refused "key file mode $mode"
done

# check says the same, as a problem (exit 1).
out=$(env -u GEMINI_API_KEY -u GOOGLE_API_KEY "$GA_BIN" check --config "$GA_CONF" 2>&1); rc=$?
check "check: a key file others can read or write is a problem (exit 1)" test "$rc" -eq 1
check "... naming the file, serve's refusal and chmod 600" \
    grep -q "^$ST_DIR/.gemini.yaml: holds the API key .*serve refuses to start: run chmod 600" <<<"$out"

# Private files start: 600 and 400.
for mode in 600 400; do
    new_stack_dir
    write_config "$GA_CONF"
    write_gemini_yaml "$ST_DIR/.gemini.yaml" "$KEY"
    chmod "$mode" "$ST_DIR/.gemini.yaml"
    start_stack --keep-dir --workers 1
    req GET /_jay/actions
    assert_status 200 "key file mode $mode: serve starts"
    stop_stack
done

# --- allowReadableKeyFile: true serves, loudly --------------------------------
new_stack_dir
write_config "$GA_CONF"
echo "allowReadableKeyFile: true" >>"$GA_CONF"
write_gemini_yaml "$ST_DIR/.gemini.yaml" "$KEY"
chmod 644 "$ST_DIR/.gemini.yaml"
start_stack --keep-dir --workers 1
req GET /_jay/actions
assert_status 200 "allowReadableKeyFile: true: serve starts with a mode 644 key file"
if grep -q "warn: WARNING: $ST_DIR/.gemini.yaml holds the Gemini API key .*serving anyway because allowReadableKeyFile is true.*chmod 600" "$GA_LOG"; then
    ok "allowReadableKeyFile: true: a warning names the file and chmod 600"
else
    not_ok "allowReadableKeyFile: true: a warning" "log: $(tr '\n' '|' <"$GA_LOG" | head -c 400)"
fi
stop_stack
out=$(env -u GEMINI_API_KEY -u GOOGLE_API_KEY "$GA_BIN" check --config "$GA_CONF" 2>&1); rc=$?
check "check with allowReadableKeyFile: true passes" test "$rc" -eq 0
check "... and still mentions chmod 600" grep -q "^note: .*can be read by other users; run chmod 600" <<<"$out"

# --- a key from the environment is not guarded --------------------------------
new_stack_dir
write_config "$GA_CONF"
write_gemini_yaml "$ST_DIR/.gemini.yaml" '<your-gemini-api-key>'
chmod 644 "$ST_DIR/.gemini.yaml"
GA_EXTRA_ENV=("GEMINI_API_KEY=$KEY")
start_stack --keep-dir --workers 1
req GET /_jay/actions
assert_status 200 "key from GEMINI_API_KEY, mode 644 settings file: serve starts"
stop_stack
GA_EXTRA_ENV=()

# --- SIGHUP: the same rule; the old site stays ---------------------------------
new_stack_dir
write_config "$GA_CONF"
write_gemini_yaml "$ST_DIR/.gemini.yaml" "$KEY"
start_stack --keep-dir --workers 2
read_pidfile
before=$PF_WORKERS
chmod 644 "$ST_DIR/.gemini.yaml"
kill -HUP "$GA_PID"
if wait_until 5000 grep -q "config reload refused; keeping the old configuration" "$GA_LOG"; then
    ok "SIGHUP with a mode 644 key file: the reload is refused"
else
    not_ok "SIGHUP with a mode 644 key file: the reload is refused" "log: $(tail -c 400 "$GA_LOG" | tr '\n' '|')"
fi
check "... the log names the file and chmod 600" grep -qF "run chmod 600 $ST_DIR/.gemini.yaml" "$GA_LOG"
sleep 0.3
read_pidfile
check "... the old workers go on (no new generation)" test "$PF_WORKERS" = "$before"
req GET /_jay/actions
assert_status 200 "... and the old site still answers"
chmod 600 "$ST_DIR/.gemini.yaml"
kill -HUP "$GA_PID"
if wait_until 5000 eval 'read_pidfile && [ "$PF_WORKERS" != "$before" ] && grep -q "configuration reloaded" "$GA_LOG"'; then
    ok "SIGHUP after chmod 600: a new generation starts"
else
    not_ok "SIGHUP after chmod 600: a new generation starts" "workers '$PF_WORKERS' (were '$before'); log: $(tail -c 300 "$GA_LOG" | tr '\n' '|')"
fi
req GET /_jay/actions
assert_status 200 "... and answers"
stop_stack
assert_file_lacks "$GA_LOG" "$KEY" "SIGHUP: the key is not in the log"

finish
