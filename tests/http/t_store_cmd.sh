#!/bin/bash
# t_store_cmd.sh - the run API's store from the command line: `store
# migrate` makes the schema in an empty file and is idempotent, `users
# set-trust` sets a user's trust level (and refuses a level that is none),
# and a store written by a newer gemini-agent is refused by `store
# migrate` and by `serve`, at once and by name.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_binary
new_stack_dir
write_gemini_yaml "$ST_DIR/.gemini.yaml" test-key-not-a-real-key
write_config "$GA_CONF"
DB=$ST_DIR/var/agent.db

# sql QUERY: one value from the store, read-only.
sql() {
    "$PY" -c 'import sqlite3, sys
c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
r = c.execute(sys.argv[2]).fetchone()
print("" if r is None else r[0])' "$DB" "$1"
}

# --- migrate an empty store ---------------------------------------------------
[ ! -e "$DB" ] && ok "no store before" || not_ok "no store before" "$DB exists"
ga_run store migrate --config "$GA_CONF"
[ "$rc" -eq 0 ] && ok "store migrate: exit 0" || not_ok "store migrate: exit 0" "rc $rc: $err"
[ "$out" = "sqlite:$DB: schema 3" ] && ok "store migrate: says the schema" || not_ok "store migrate: says the schema" "$out"
[ "$(sql 'pragma user_version')" = 3 ] && ok "the file is at schema 3" || not_ok "the file is at schema 3" "$(sql 'pragma user_version')"
for t in users threads messages runs actions approvals audit memories budget tickets chats; do
    n=$(sql "select count(*) from sqlite_master where type = 'table' and name = '$t'")
    [ "$n" = 1 ] && ok "table $t exists" || not_ok "table $t exists" "$n"
done
mode=$(stat -c %a "$DB")
[ "$mode" = 600 ] && ok "the store file is private (0600)" || not_ok "the store file is private (0600)" "$mode"
ga_run store migrate --config "$GA_CONF"
[ "$rc" -eq 0 ] && [ "$(sql 'pragma user_version')" = 3 ] && ok "store migrate again: nothing to do" || not_ok "store migrate again: nothing to do" "rc $rc: $err"

# --- users set-trust ---------------------------------------------------------------
ga_run users set-trust ann delegated --config "$GA_CONF"
[ "$rc" -eq 0 ] && [ "$out" = "ann: delegated" ] && ok "set-trust: done" || not_ok "set-trust: done" "rc $rc: $out $err"
[ "$(sql "select trust from users where id = 'ann'")" = delegated ] && ok "set-trust: stored" || not_ok "set-trust: stored" "$(sql "select trust from users where id = 'ann'")"
ga_run users --config "$GA_CONF" set-trust ann autonomous
[ "$rc" -eq 0 ] && [ "$(sql "select trust from users where id = 'ann'")" = autonomous ] && ok "set-trust: --config first, changed" || not_ok "set-trust: --config first, changed" "rc $rc: $err"
ga_run users set-trust ann boss --config "$GA_CONF"
[ "$rc" -eq 2 ] && [[ $err == *"supervised, delegated or autonomous"* ]] && ok "set-trust: an unknown level is a usage error" || not_ok "set-trust: an unknown level is a usage error" "rc $rc: $err"
[ "$(sql "select trust from users where id = 'ann'")" = autonomous ] && ok "set-trust: the refused level changed nothing" || not_ok "set-trust: the refused level changed nothing" "$(sql "select trust from users where id = 'ann'")"

# --- a newer program's store ---------------------------------------------------------
"$PY" -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("pragma user_version = 99"); c.commit()' "$DB"
ga_run store migrate --config "$GA_CONF"
[ "$rc" -eq 1 ] && [[ $err == *"newer gemini-agent (schema 99, this one knows 3)"* ]] && ok "store migrate: refuses a newer schema" || not_ok "store migrate: refuses a newer schema" "rc $rc: $err"
[ "$(sql 'pragma user_version')" = 99 ] && ok "store migrate: the newer store is left alone" || not_ok "store migrate: the newer store is left alone" "$(sql 'pragma user_version')"
t0=$(now_ms)
ga_run serve --config "$GA_CONF" --socket "$ST_DIR/refused.sock" --workers 1
[ "$rc" -ne 0 ] && [[ $err == *"cannot start: the store was written by a newer gemini-agent"* ]] && ok "serve: refuses a newer store" || not_ok "serve: refuses a newer store" "rc $rc: $err"
[ $(($(now_ms) - t0)) -lt 3000 ] && ok "serve: refuses at once" || not_ok "serve: refuses at once" "$(($(now_ms) - t0)) ms"
[ ! -S "$ST_DIR/refused.sock" ] && ok "serve: no socket left" || not_ok "serve: no socket left" "socket exists"

# --- setup takes --config like every command ---------------------------------------
mkdir -p "$T_TMP/site"
printf 'actions: []\nauth: {secretFile: keys/secret}\n' >"$T_TMP/site/agent.yaml"
ga_run setup --config "$T_TMP/site/agent.yaml"
[ "$rc" -eq 0 ] && [ -f "$T_TMP/site/.gemini.yaml" ] && ok "setup --config: .gemini.yaml beside the config" || not_ok "setup --config: .gemini.yaml beside the config" "rc $rc: $err"
[ "$(stat -c %a "$T_TMP/site/keys/secret" 2>/dev/null)" = 600 ] && ok "setup --config: the secret its auth.secretFile names" || not_ok "setup --config: the secret its auth.secretFile names" "$(ls -la "$T_TMP/site" "$T_TMP/site/keys" 2>&1)"
ga_run setup --config "$T_TMP/site/agent.yaml" --config-dir "$T_TMP/site"
[ "$rc" -eq 2 ] && ok "setup: --config and --config-dir together is a usage error" || not_ok "setup: --config and --config-dir together is a usage error" "rc $rc"

finish
