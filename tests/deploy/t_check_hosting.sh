#!/bin/bash
# t_check_hosting.sh - `gemini-agent check` on a shared host: a session
# secret others can read, files the web server's user (--web-user, or
# www-data where it exists) can or cannot read, a dataDir nobody can write,
# and check run as the web server's user itself (no suEXEC). The user
# `nobody` plays the web server's user; no user is created.
source "$(dirname "${BASH_SOURCE[0]}")/../http/lib.sh"

require_binary
[ "$(id -u)" -eq 0 ] || { skip "check on a shared host: needs root (runuser, chown)"; finish; }
getent passwd nobody >/dev/null || { skip "no user nobody"; finish; }
NOGROUP=$(id -gn nobody)
RUNUSER=$(command -v runuser) || { skip "no runuser"; finish; }

# a site folder the user nobody can open (T_TMP is root's alone)
SITE=$(mktemp -d /tmp/ga-chkhost.XXXXXX)
# shellcheck disable=SC2154  # rc is set inside the trap
trap 'rc=$?; rm -rf "$SITE"; (exit $rc); t_cleanup' EXIT
chmod 755 "$SITE"
mkdir "$SITE/var"
cp "$GA_BIN" "$SITE/gemini-agent"
chmod 755 "$SITE/gemini-agent"
cat >"$SITE/agent.yaml" <<'YAML'
gemini: .gemini.yaml
actions: []
dataDir: var
auth:
  secretFile: .session-secret
YAML
write_gemini_yaml "$SITE/.gemini.yaml" test-key-not-a-real-key
write_secret "$SITE/.session-secret"

# modes OWNER:GROUP:MODE for config, key, secret, var
modes() {
    local f spec
    for f in agent.yaml .gemini.yaml .session-secret var; do
        spec=$1
        shift
        chown "${spec%:*}" "$SITE/$f"
        chmod "${spec##*:}" "$SITE/$f"
    done
}
# run_check [runuser -u USER --] [check options...]: output in $OUT
OUT=$T_TMP/check.out
run_check() {
    env -i PATH=/usr/bin:/bin "$@" >"$OUT" 2>&1
    CHECK_RC=$?
}
has() { if grep -qF -- "$2" "$OUT"; then ok "$1"; else not_ok "$1" "no '$2' in: $(head -c 1500 "$OUT")"; fi; }
lacks() { if grep -qF -- "$2" "$OUT"; then not_ok "$1" "'$2' in: $(grep -F -- "$2" "$OUT" | head -3)"; else ok "$1"; fi; }

CHECK=("$SITE/gemini-agent" check --config "$SITE/agent.yaml")

# --- a session secret others can read ---------------------------------------------
modes root:root:600 root:root:600 root:root:644 root:root:700
run_check "${CHECK[@]}"
has "secret mode 644: a problem (the config refuses it)" \
    "the session secret '$SITE/.session-secret' is open to group or others (mode 644): run chmod 600"
modes root:root:600 root:root:600 root:root:600 root:root:700
run_check "${CHECK[@]}"
lacks "secret mode 600: no such problem" "is open to group or others"

# --- --web-user: the CGI runs as that user (no suEXEC) ------------------------------
run_check "${CHECK[@]}" --web-user nobody
has "--web-user nobody, secret 600 root's: nobody cannot read it" \
    ".session-secret: nobody (--web-user) cannot read it, so a CGI run as nobody answers 500"
has "--web-user nobody: the advice is suEXEC" "Ask your host for suEXEC"
has "--web-user nobody, config 600 root's: a CGI answers config_error" \
    "agent.yaml: nobody (--web-user) cannot read it: a CGI run as nobody answers 500 config_error"
has "--web-user nobody, dataDir 700 root's: not writable by nobody" \
    "dataDir is not writable by nobody (--web-user)"
if [ "$CHECK_RC" -ne 0 ]; then ok "--web-user nobody with unreadable files: check fails"; else not_ok "--web-user nobody: check fails" "exit 0"; fi

# (the config refuses a session secret that is not the reader's own, 0600:
# only a CGI run as its owner reads it; a key file others can read is
# allowed with allowReadableKeyFile)
modes "root:$NOGROUP:640" "root:$NOGROUP:640" root:root:600 "root:$NOGROUP:770"
printf 'allowReadableKeyFile: true\n' >>"$SITE/agent.yaml"
run_check "${CHECK[@]}" --web-user nobody
lacks "--web-user nobody, config in its group: readable" "agent.yaml: nobody (--web-user) cannot"
lacks "--web-user nobody, dataDir group-writable: writable" "not writable by nobody"
has "--web-user nobody can read the key: the same note" \
    ".gemini.yaml: holds the API key and nobody, the web server's user, can read it"

sed -i '/allowReadableKeyFile/d' "$SITE/agent.yaml"

# --- check run as the web server's user itself --------------------------------------
modes nobody:root:600 nobody:root:600 nobody:root:600 nobody:root:700
run_check "$RUNUSER" -u nobody -- "${CHECK[@]}" --web-user nobody
has "run as nobody (--web-user nobody): you run as the web server's user" \
    "you run as nobody, the web server's user: without suEXEC, every site on this host whose programs run as nobody can read the API key and the session secret"
lacks "run as nobody, its own files: nothing unreadable" "cannot read it"
modes nobody:root:600 nobody:root:600 nobody:root:600 root:root:755
run_check "$RUNUSER" -u nobody -- "${CHECK[@]}"
has "dataDir root's 755, check as nobody: not writable by you" "dataDir is not writable by you (uid $(id -u nobody))"

# --- no --web-user: www-data where it exists, notes only -----------------------------
if getent passwd www-data >/dev/null; then
    modes root:root:600 root:www-data:640 root:root:600 root:root:700
    printf 'allowReadableKeyFile: true\n' >>"$SITE/agent.yaml"
    run_check "${CHECK[@]}"
    has "no --web-user: www-data can read the key: the note" \
        ".gemini.yaml: holds the API key and www-data, the web server's user, can read it: so can every site on this host whose programs run as www-data"
    sed -i '/allowReadableKeyFile/d' "$SITE/agent.yaml"
    modes root:root:600 root:root:600 root:root:600 root:root:700
    run_check "${CHECK[@]}"
    lacks "no --web-user, files root's alone: www-data is not blamed (suEXEC may run it)" "www-data"
else
    skip "no www-data user"
fi

# --- a user that does not exist -----------------------------------------------------
run_check "${CHECK[@]}" --web-user no-such-user-ga
check "--web-user no-such-user: exit 2" test "$CHECK_RC" -eq 2
has "--web-user no-such-user: says so" "there is no user 'no-such-user-ga' (--web-user)"

finish
