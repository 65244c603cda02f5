#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The provider cache (issue 15, verbs/provider_cache.h), against the lab's
# real libibverbs and its 17 provider libraries:
#  1. cold (an empty cache file): the client's libibverbs initialises every
#     provider (LD_DEBUG=files), the pair connects, and the cache then names
#     the provider that served the client's device;
#  2. warm (the same file): the client initialises exactly one provider, the
#     one in the cache, and says so ("provider" in --json; and -v without
#     --json);
#  3. a hostile entry (a library outside libibverbs' provider directory,
#     named like a provider): not loaded, reported, the pair connects and the
#     cache is corrected;
#  4. a stale entry (another provider than the device's): libibverbs falls
#     back to loading them all, the pair connects, the cache is corrected;
#  5. QPC_PROVIDER_CACHE=off: no file is read or written;
# and no QP is left after any case.
#
# Usage: provider_cache_lab.sh QP_CONNECT
set -uo pipefail
bin=$1
: "${QPC_DEV0:?not in the lab: QPC_DEV0 unset}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
port=21800
. "$(dirname "$0")/lab_qps.sh"
# pair CASE CACHE [OUTPUT]: a server (its own cache: off) and a client using
# CACHE, the client under LD_DEBUG=files; its stderr in $work/CASE.err, its
# stdout (OUTPUT: --json, the default, or -v) in $work/CASE.json, its provider
# initialisations counted in $work/CASE.n.
pair() {
  local case=$1 cache=$2 output=${3:---json} sp crc src
  port=$((port + 1))
  QPC_PROVIDER_CACHE=off "$bin" -d "$QPC_DEV0" -p "$port" --timeout 20 --no-verify \
    >"$work/$case.srv" 2>&1 &
  sp=$!
  sleep 0.5
  QPC_PROVIDER_CACHE=$cache LD_DEBUG=files LD_DEBUG_OUTPUT="$work/$case.ld" \
    "$bin" -d "$QPC_DEV1" -p "$port" --timeout 20 --no-verify "$output" "$QPC_IP0" \
    >"$work/$case.json" 2>"$work/$case.err"
  crc=$?
  wait "$sp"
  src=$?
  cat "$work/$case.err"
  [[ $crc -eq 0 && $src -eq 0 ]] || { echo "FAIL ($case): client $crc, server $src"; cat "$work/$case.srv"; fail=1; }
  cat "$work/$case.ld".* 2>/dev/null | grep "calling init: .*/libibverbs/lib" | sed 's/.*calling init: //' \
    >"$work/$case.inits"
  wc -l <"$work/$case.inits" >"$work/$case.n"
  echo "($case: $(cat "$work/$case.n") provider(s) initialised)"
  check_no_qps "$case"
}
json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

cache=$work/cache/providers
echo "--- 1: cold"
pair cold "$cache"
cold=$(cat "$work/cold.n")
(( cold > 1 )) || { echo "FAIL (1): only $cold provider(s) initialised without a cache"; fail=1; }
lib=$(json "$work/cold.json" 'd["provider"]["library"]')
[[ $(json "$work/cold.json" 'd["provider"]["preloaded"]') == False ]] ||
  { echo "FAIL (1): preloaded without a cache"; fail=1; }
grep -qx "$QPC_DEV1 $lib" "$cache" || { echo "FAIL (1): the cache does not name $lib:"; cat "$cache"; fail=1; }
[[ $(stat -c %a "$work/cache") == 700 ]] || { echo "FAIL (1): cache directory mode $(stat -c %a "$work/cache")"; fail=1; }

echo "--- 2: warm"
pair warm "$cache"
[[ $(cat "$work/warm.n") -eq 1 ]] || { echo "FAIL (2): $(cat "$work/warm.n") providers initialised, want 1"; fail=1; }
grep -q "$lib" "$work/warm.inits" || { echo "FAIL (2): $lib was not the one initialised"; fail=1; }
[[ $(json "$work/warm.json" 'd["provider"]["preloaded"]') == True ]] ||
  { echo "FAIL (2): provider.preloaded is not true"; fail=1; }
pair warm-v "$cache" -v
grep -q "provider library $lib (from the provider cache: loaded before the device list)" \
  "$work/warm-v.err" "$work/warm-v.json" ||
  { echo "FAIL (2): -v does not say the provider came from the cache"; fail=1; }

echo "--- 3: hostile entry"
mkdir -p "$work/evil"
cp "$lib" "$work/evil/libevil-rdmav34.so"
printf '%s %s\n' "$QPC_DEV1" "$work/evil/libevil-rdmav34.so" >"$cache"
pair hostile "$cache"
grep -q "libevil" "$work/hostile.inits" && { echo "FAIL (3): the hostile library was loaded"; fail=1; }
[[ $(json "$work/hostile.json" 'd["provider"]["cache_refused"]') == "['$work/evil/libevil-rdmav34.so']" ]] ||
  { echo "FAIL (3): the refused entry is not reported"; fail=1; }
grep -qx "$QPC_DEV1 $lib" "$cache" || { echo "FAIL (3): the cache was not corrected:"; cat "$cache"; fail=1; }

echo "--- 4: stale entry"
other=$(ls "$(dirname "$lib")"/lib*-rdmav*.so | grep -v "$(basename "$lib")" | head -1)
printf '%s %s\n' "$QPC_DEV1" "$other" >"$cache"
pair stale "$cache"
(( $(cat "$work/stale.n") > 1 )) || { echo "FAIL (4): libibverbs did not fall back to every provider"; fail=1; }
[[ $(json "$work/stale.json" 'd["provider"]["preloaded"]') == False ]] ||
  { echo "FAIL (4): preloaded with a stale entry"; fail=1; }
grep -qx "$QPC_DEV1 $lib" "$cache" || { echo "FAIL (4): the cache was not corrected:"; cat "$cache"; fail=1; }

echo "--- 5: off"
rm -f "$cache"
pair off off
[[ -e $cache ]] && { echo "FAIL (5): a cache file was written with QPC_PROVIDER_CACHE=off"; fail=1; }
(( $(cat "$work/off.n") > 1 )) || { echo "FAIL (5): providers preloaded with the cache off"; fail=1; }

[[ $fail -eq 0 ]] && echo "provider cache lab: all cases passed"
exit $fail
