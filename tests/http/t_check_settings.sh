#!/bin/bash
# t_check_settings.sh - `gemini-agent check --settings` (docs/configuration.md):
# every key of agent.yaml and .gemini.yaml with the value in force and what
# it is, after check's usual report, which is unchanged; never the key. No
# server is started.
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_binary

T=$T_TMP
ga() { env -u GEMINI_API_KEY -u GOOGLE_API_KEY "$GA_BIN" "$@"; }

mkdir -p "$T/site/conf" "$T/site/actions"
head -c 32 /dev/urandom >"$T/site/conf/site.key" && chmod 600 "$T/site/conf/site.key"
cat >"$T/site/conf/agent.yaml" <<'YAML'
limits:
  maxBodyBytes: 4096
budget: {perIp: {requestsPerMinute: 5}}
auth: {secretFile: site.key}
YAML
printf "apiKey: 'AIza-test-key-for-settings'\ncompaction: {atPercent: 90}\n" \
    >"$T/site/conf/.gemini.yaml"
chmod 600 "$T/site/conf/.gemini.yaml"

plain=$(ga check --config "$T/site/conf/agent.yaml" 2>&1)
out=$(ga check --config "$T/site/conf/agent.yaml" --settings 2>&1); rc=$?
check "check --settings passes a sound configuration" test "$rc" -eq 0
check "... its report is check's own, line for line, then the settings" \
    test "$(grep -v '^settings of \|^  ' <<<"$out")" = "$plain"
check "... and still ends in ok" test "$(tail -n 1 <<<"$out")" = ok
check "... names agent.yaml's settings" \
    grep -qx "settings of $T/site/conf/agent.yaml:" <<<"$out"
check "... a value set: limits.maxBodyBytes 4096" \
    grep -q '^  limits.maxBodyBytes: 4096 - ' <<<"$out"
check "... a value derived: maxUpstreamBytes 4 x 4096" \
    grep -q '^  limits.maxUpstreamBytes: 16384 - ' <<<"$out"
check "... a nested one: budget.perIp.requestsPerMinute 5" \
    grep -q '^  budget.perIp.requestsPerMinute: 5 - ' <<<"$out"
check "... a default: policy.ticketTtlMs" \
    grep -q '^  policy.ticketTtlMs: 600000 - ' <<<"$out"
check "... .gemini.yaml's compaction" \
    grep -q '^  compaction.atPercent: 90 - ' <<<"$out"
check "... where the key came from" \
    grep -q '^  apiKey: set in the file - ' <<<"$out"
check "... never the key" \
    bash -c '! grep -q AIza-test-key-for-settings <<<"$1"' _ "$out"
out=$(GEMINI_API_KEY=AIza-env-key "$GA_BIN" check \
      --config "$T/site/conf/agent.yaml" --settings 2>&1)
check "... nor a key from the environment, only its name" bash -c \
    '! grep -q AIza-env-key <<<"$1" && grep -q "^  apiKey: from GEMINI_API_KEY" <<<"$1"' _ "$out"
without=$(ga check --config "$T/site/conf/agent.yaml" 2>&1)
check "without --settings, no setting is listed" \
    bash -c '! grep -q "^settings of " <<<"$1"' _ "$without"

finish
