#!/bin/bash
# t_auth_cmd.sh - identity from the command line: `setup` makes the session
# secret (mode 0600, never replaced), `auth issue` prints tokens in the
# documented format (checked here with Python's hmac, independently of the
# program), and `serve` refuses to start with a session secret that is
# missing, short or open to others - at once, with a message naming the
# file - and keeps the old site when a SIGHUP brings such a secret.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_binary

# verify_token TOKEN SECRET_FILE USER NOW TTL: the token is
# v1.<b64url user>.<expiry>.<b64url HMAC-SHA256(secret, head)>, for USER,
# expiring TTL seconds after NOW (give or take 5 s). Prints what is wrong.
verify_token() {
    "$PY" - "$@" <<'PY'
import base64, hmac, re, sys
tok, path, user, now, ttl = sys.argv[1:6]
b = lambda x: base64.urlsafe_b64encode(x).rstrip(b"=").decode()
m = re.fullmatch(r"v1\.([A-Za-z0-9_-]+)\.([1-9][0-9]*)\.([A-Za-z0-9_-]{43})", tok)
if not m:
    sys.exit("not the v1 shape: %r" % tok)
secret = open(path, "rb").read()
head = tok.rsplit(".", 1)[0]
want = b(hmac.new(secret, head.encode(), "sha256").digest())
if not hmac.compare_digest(want, m.group(3)):
    sys.exit("signature differs")
pad = "=" * (-len(m.group(1)) % 4)
got = base64.urlsafe_b64decode(m.group(1) + pad).decode()
if got != user:
    sys.exit("user %r, not %r" % (got, user))
if b(got.encode()) != m.group(1):
    sys.exit("user part not canonical")
exp = int(m.group(2))
if abs(exp - (int(now) + int(ttl))) > 5:
    sys.exit("expiry %d, not about %d + %s" % (exp, int(now), ttl))
PY
}

# --- setup makes the secret ---------------------------------------------------
D=$T_TMP/site/conf
ga_run setup --config-dir "$D"
check "setup: exit 0" test "$rc" -eq 0
check "setup writes .session-secret beside the config" test -f "$D/.session-secret"
check "... mode 0600" test "$(stat -c %a "$D/.session-secret")" = 600
check "... of 32 bytes" test "$(stat -c %s "$D/.session-secret")" -eq 32
check "... and says how to turn tokens on" grep -q "secretFile: .session-secret" <<<"$out"
before=$(od -An -tx1 "$D/.session-secret" | tr -d ' \n')
ga_run setup --config-dir "$D"
check "setup again: exit 1 (.gemini.yaml exists)" test "$rc" -eq 1
check "... the secret is kept, byte for byte" \
    test "$(od -An -tx1 "$D/.session-secret" | tr -d ' \n')" = "$before"
check "... and it says so" grep -q "kept $D/.session-secret" <<<"$out"
check "the secret never appears in setup's output" \
    bash -c '! grep -qi "$1" <<<"$2$3"' _ "$before" "$out" "$err"

# auth.secretFile names another place: setup makes it there (and its folder).
D2=$T_TMP/site2
mkdir -p "$D2"
printf 'actions: []\nauth:\n  secretFile: keys/session.key\n' >"$D2/agent.yaml"
ga_run setup --config-dir "$D2"
check "setup follows auth.secretFile (keys/session.key, folder made)" \
    bash -c '[ "$1" -eq 0 ] && [ "$(stat -c %a "$2")" = 600 ] && [ "$(stat -c %s "$2")" -eq 32 ]' \
    _ "$rc" "$D2/keys/session.key"
chmod 644 "$D2/keys/session.key"
rm -f "$D2/.gemini.yaml"
ga_run setup --config-dir "$D2"
check "setup keeps an exposed secret but fails, naming chmod 600" \
    bash -c '[ "$1" -eq 1 ] && grep -q "chmod 600 $3" <<<"$2"' _ "$rc" "$err" "$D2/keys/session.key"

# --- auth issue ---------------------------------------------------------------
new_stack_dir
write_gemini_yaml "$ST_DIR/.gemini.yaml" test-key-not-a-real-key
write_config "$GA_CONF" '' '' $'auth:\n  secretFile: session.key'
cp "$D/.session-secret" "$ST_DIR/session.key"
chmod 600 "$ST_DIR/session.key"

now=$(date +%s)
ga_run auth issue --user alice --config "$GA_CONF"
check "auth issue: exit 0, nothing on stderr" bash -c '[ "$1" -eq 0 ] && [ -z "$2" ]' _ "$rc" "$err"
check "... one line on stdout" test "$(printf '%s\n' "$out" | wc -l)" -eq 1
why=$(verify_token "$out" "$ST_DIR/session.key" alice "$now" 604800 2>&1)
if [ -z "$why" ]; then
    ok "... a v1 token for alice, signed with the secret, valid 7 days"
else
    not_ok "... a v1 token for alice" "$why"
fi
tok_alice=$out

ga_run auth --config "$GA_CONF" issue --ttl 60 --user 'Zoë Ω'
why=$(verify_token "$out" "$ST_DIR/session.key" 'Zoë Ω' "$(date +%s)" 60 2>&1)
if [ "$rc" -eq 0 ] && [ -z "$why" ]; then
    ok "--config and --ttl before the subcommand; a UTF-8 name; 60 s"
else
    not_ok "--config before the subcommand, --ttl 60" "exit $rc; $why; $err"
fi
ga_run auth issue --user bob --config "$GA_CONF"
check "another user, another token" bash -c '[ "$1" -eq 0 ] && [ "$2" != "$3" ]' _ "$rc" "$out" "$tok_alice"
check "... for bob" test -z "$(verify_token "$out" "$ST_DIR/session.key" bob "$now" 604800 2>&1)"
ga_run auth issue --user alice --ttl 7776000 --config "$GA_CONF"
why=$(verify_token "$out" "$ST_DIR/session.key" alice "$now" 7776000 2>&1)
check "--ttl 7776000 (90 days, the most) is taken" test "$rc" -eq 0 -a -z "$why"

# setup, then a line in agent.yaml, then tokens: the documented path, with
# the default config (conf/agent.yaml of the working folder).
printf 'actions: []\nauth:\n  secretFile: .session-secret\n' >"$D/agent.yaml"
out=$(cd "$T_TMP/site" && env -i PATH="$PATH" "$GA_BIN" auth issue --user carol 2>&1)
rc=$?
why=$(verify_token "$out" "$D/.session-secret" carol "$now" 604800 2>&1)
check "without --config: conf/agent.yaml, signed with the secret setup made" \
    test "$rc" -eq 0 -a -z "$why"

# Wrong command lines: exit 2, the usage, nothing on stdout.
for args in "issue --config $GA_CONF" "issue --user alice --ttl 0 --config $GA_CONF" \
    "issue --user alice --ttl 7776001 --config $GA_CONF" "issue --user alice --ttl 1h --config $GA_CONF" \
    "--user alice --config $GA_CONF" "revoke --user alice --config $GA_CONF" \
    "issue --user alice --socket x --config $GA_CONF"; do
    # shellcheck disable=SC2086
    ga_run auth $args
    if [ "$rc" -eq 2 ] && [ -z "$out" ] &&
        grep -qxF "usage: gemini-agent auth issue --user NAME [--ttl SECONDS] [--config FILE] | sign-history [--config FILE] < BODY.json" <<<"$err"; then
        ok "auth $args: exit 2 with the usage"
    else
        not_ok "auth $args: exit 2 with the usage" "exit $rc; stdout '$out'; stderr $(tr '\n' '|' <<<"$err")"
    fi
done
ga_run auth issue --user $'a\tb' --config "$GA_CONF"
check "a user name with a control character: exit 2" \
    bash -c '[ "$1" -eq 2 ] && [ -z "$2" ] && grep -q "control characters" <<<"$3"' _ "$rc" "$out" "$err"
ga_run auth issue --user "$(printf 'n%.0s' {1..129})" --config "$GA_CONF"
check "a user name of 129 bytes: exit 2" test "$rc" -eq 2
ga_run auth issue --help
check "auth issue --help: the usage on stdout, exit 0" \
    bash -c '[ "$1" -eq 0 ] && grep -q "^usage: gemini-agent auth issue --user NAME" <<<"$2"' _ "$rc" "$out"

# The config names no secret, or one that cannot be used: exit 1, why.
printf 'actions: []\n' >"$ST_DIR/nosecret.yaml"
ga_run auth issue --user alice --config "$ST_DIR/nosecret.yaml"
check "no auth.secretFile: exit 1, nothing on stdout, says to set secretFile" \
    bash -c '[ "$1" -eq 1 ] && [ -z "$2" ] && grep -q "names no session secret" <<<"$3" && grep -q "secretFile: .session-secret" <<<"$3"' \
    _ "$rc" "$out" "$err"
printf 'actions: []\nauth: {secretFile: missing.key}\n' >"$ST_DIR/missing.yaml"
ga_run auth issue --user alice --config "$ST_DIR/missing.yaml"
check "a missing secret file: exit 1, naming it" \
    bash -c '[ "$1" -eq 1 ] && [ -z "$2" ] && grep -qF "$4/missing.key'"'"' does not exist" <<<"$3"' \
    _ "$rc" "$out" "$err" "$ST_DIR"
chmod 640 "$ST_DIR/session.key"
ga_run auth issue --user alice --config "$GA_CONF"
check "a group-readable secret: exit 1, chmod 600" \
    bash -c '[ "$1" -eq 1 ] && [ -z "$2" ] && grep -qF "chmod 600 $4/session.key" <<<"$3"' \
    _ "$rc" "$out" "$err" "$ST_DIR"
chmod 600 "$ST_DIR/session.key"
printf 'actions: []\nauth: {secretFile: 1}\nauth2: x\n' >"$ST_DIR/broken.yaml"
ga_run auth issue --user alice --config "$ST_DIR/broken.yaml"
check "a broken config: exit 1, its problems" \
    bash -c '[ "$1" -eq 1 ] && grep -q "unknown key '"'"'auth2'"'"'" <<<"$2"' _ "$rc" "$err"

# --- serve refuses a secret it cannot use --------------------------------------

# serve_refused LABEL WORD...: serve on $GA_CONF must exit non-zero within
# 5 s, binding nothing, with every WORD in its log. Started in the
# background like the harness's stacks; stopped by PID if it runs.
serve_refused() {
    local label=$1 pid rc=0 word missing=''
    shift
    local -a envv
    mapfile -d '' -t envv < <(ga_env)
    "${envv[@]}" "$GA_BIN" serve --config "$GA_CONF" --socket "$GA_SOCK" \
        --workers 1 --pid-file "$GA_PIDFILE" >"$GA_OUT" 2>"$GA_LOG" </dev/null &
    pid=$!
    T_BG_PIDS+=("$pid")
    remember_pids "$pid"
    if ! wait_until 5000 eval "! proc_alive $pid"; then
        stop_pid "$pid" 2000
        wait "$pid" 2>/dev/null
        kill_leftover_workers
        not_ok "$label: serve refuses to start" "it is still running after 5 s; log: $(tail -c 300 "$GA_LOG" | tr '\n' '|')"
        return
    fi
    wait "$pid"
    rc=$?
    for word in "$@"; do
        grep -qF -- "$word" "$GA_LOG" || missing="$missing '$word'"
    done
    if [ "$rc" -ne 0 ] && [ ! -e "$GA_SOCK" ] && [ -z "$missing" ]; then
        ok "$label: serve refuses to start at once (exit $rc), saying why"
    else
        not_ok "$label: serve refuses to start" "exit $rc; socket $([ -e "$GA_SOCK" ] && echo made || echo absent); missing$missing; log: $(tr '\n' '|' <"$GA_LOG" | head -c 500)"
    fi
}

for mode in 640 604 644 660 620; do
    chmod "$mode" "$ST_DIR/session.key"
    serve_refused "secret mode $mode" "$ST_DIR/session.key" "open to group or others (mode $mode)" \
        "chmod 600 $ST_DIR/session.key" "cannot start"
done
chmod 600 "$ST_DIR/session.key"
assert_file_lacks "$GA_LOG" "$before" "the secret's bytes are not in serve's log"

head -c 31 /dev/urandom >"$ST_DIR/short.key"
chmod 600 "$ST_DIR/short.key"
sed -i 's/secretFile: session.key/secretFile: short.key/' "$GA_CONF"
serve_refused "a secret of 31 bytes" "$ST_DIR/short.key" "is 31 bytes" "at least 32"
sed -i 's/secretFile: short.key/secretFile: gone.key/' "$GA_CONF"
serve_refused "a missing secret" "$ST_DIR/gone.key' does not exist" "gemini-agent setup"

# check says the same, as a problem.
ga_run check --config "$GA_CONF"
check "check: a missing secret is a problem (exit 1), naming it" \
    bash -c '[ "$1" -eq 1 ] && grep -qF "auth.secretFile: the session secret '"'"'$3/gone.key'"'"' does not exist" <<<"$2"' \
    _ "$rc" "$out" "$ST_DIR"

# A sound secret: serve starts and answers.
sed -i 's/secretFile: gone.key/secretFile: session.key/' "$GA_CONF"
start_stack --keep-dir --workers 1
req GET /_jay/actions
assert_status 200 "secret mode 600: serve starts and answers"

# SIGHUP while the secret is open to others: the reload fails, the old
# site stays.
read_pidfile
old_workers=$PF_WORKERS
chmod 644 "$ST_DIR/session.key"
kill -HUP "$GA_PID"
if wait_until 5000 grep -q "config reload failed; keeping the old configuration" "$GA_LOG"; then
    ok "SIGHUP with a mode 644 secret: the reload fails"
else
    not_ok "SIGHUP with a mode 644 secret: the reload fails" "log: $(tail -c 400 "$GA_LOG" | tr '\n' '|')"
fi
check "... the log names the file and chmod 600" grep -qF "chmod 600 $ST_DIR/session.key" "$GA_LOG"
read_pidfile
check "... the old workers go on" test "$PF_WORKERS" = "$old_workers"
req GET /_jay/actions
assert_status 200 "... and the old site still answers"
chmod 600 "$ST_DIR/session.key"
stop_stack

finish
