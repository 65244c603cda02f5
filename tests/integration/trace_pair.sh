#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Lab test of qp-trace and qp-validate's trace mode (issue 10, docs/trace.md):
# a stock program pair runs unmodified on QPC_DEV0 (server) and QPC_DEV1
# (client), first untraced, then each side under qp-trace; the traced run must
# end with the same exit statuses as the untraced one, leave one trace per
# process and no complaint from the preload, and `qp-validate` on the two
# traces must exit as the scenario expects and name what it expects.
#
# Usage: trace_pair.sh TOOLS_BIN_DIR SCENARIO
#   rc_mtu_mismatch  ibv_rc_pingpong -m 512 / -m 1024 (-s 256 fits both): exit 1, mtu-mismatch
#   rc_clean         ibv_rc_pingpong -m 1024 on both sides: exit 0
#   uc               ibv_uc_pingpong: exit 0
#   ud               ibv_ud_pingpong -s 512: exit 0, paired by address handles
#   write_bw         perftest's ib_write_bw -x GID: exit 0
#   rping            rdma_cm's rping (librdmacm modifies the QPs): exit 0
#   rc_bad_gid       ibv_rc_pingpong server -g 7 (no such GID): its INIT->RTR fails;
#                    exit 1, the failure and sgid-index-not-in-table named
# Exits 0 when every check passes; 77 when a stock program is not installed.
set -uo pipefail

bin=$1 scenario=$2
qt=$bin/qp-trace/qp-trace
qv=$bin/qp-validate/qp-validate
: "${QPC_DEV0:?not in the lab: QPC_DEV0 unset}"
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
port=18515
limit=60  # seconds per program: a hung stock program must not hang the test

pp=(-p "$port" -i "${QPC_PORT:-1}")
want_validate=0
greps=()
ready=tcp
case $scenario in
  rc_mtu_mismatch)
    server=(ibv_rc_pingpong -d "$QPC_DEV0" -g "$QPC_GID0" "${pp[@]}" -n 20 -s 256 -m 512)
    client=(ibv_rc_pingpong -d "$QPC_DEV1" -g "$QPC_GID1" "${pp[@]}" -n 20 -s 256 -m 1024 "$QPC_IP0")
    want_validate=1
    greps=("mtu-mismatch +path_mtu" "local path_mtu is 1024 but the remote path_mtu is 512|local path_mtu is 512 but the remote path_mtu is 1024")
    ;;
  rc_clean)
    server=(ibv_rc_pingpong -d "$QPC_DEV0" -g "$QPC_GID0" "${pp[@]}" -n 20 -m 1024)
    client=(ibv_rc_pingpong -d "$QPC_DEV1" -g "$QPC_GID1" "${pp[@]}" -n 20 -m 1024 "$QPC_IP0")
    greps=("pair 1 \(mutual qpn \+ gid\)" "1 pair, 0 QPs without a peer; 0 errors")
    ;;
  uc)
    server=(ibv_uc_pingpong -d "$QPC_DEV0" -g "$QPC_GID0" "${pp[@]}" -n 20)
    client=(ibv_uc_pingpong -d "$QPC_DEV1" -g "$QPC_GID1" "${pp[@]}" -n 20 "$QPC_IP0")
    greps=("UC QP" "1 pair, 0 QPs without a peer; 0 errors")
    ;;
  ud)
    server=(ibv_ud_pingpong -d "$QPC_DEV0" -g "$QPC_GID0" "${pp[@]}" -n 20 -s 512)
    client=(ibv_ud_pingpong -d "$QPC_DEV1" -g "$QPC_GID1" "${pp[@]}" -n 20 -s 512 "$QPC_IP0")
    greps=("pair 1 \(ud address handles \+ gid\)" "1 pair, 0 QPs without a peer; 0 errors")
    ;;
  write_bw)
    server=(ib_write_bw -d "$QPC_DEV0" -x "$QPC_GID0" -p "$port" -n 20 -s 4096)
    client=(ib_write_bw -d "$QPC_DEV1" -x "$QPC_GID1" -p "$port" -n 20 -s 4096 "$QPC_IP0")
    greps=("ib_write_bw pid" "1 pair, 0 QPs without a peer; 0 errors")
    ;;
  rping)
    server=(rping -s -a "$QPC_IP0" -C 5)
    client=(rping -c -a "$QPC_IP0" -I "$QPC_IP1" -C 5)
    ready=cm
    greps=("rping pid" "1 pair, 0 QPs without a peer; 0 errors")
    ;;
  rc_bad_gid)
    server=(ibv_rc_pingpong -d "$QPC_DEV0" -g 7 "${pp[@]}" -n 20)
    client=(ibv_rc_pingpong -d "$QPC_DEV1" -g "$QPC_GID1" "${pp[@]}" -n 20 "$QPC_IP0")
    want_validate=1
    greps=("INIT->RTR FAILED: errno [0-9]+" "likely cause: sgid-index-not-in-table"
           "error +sgid-index-not-in-table +sgid_index")
    ;;
  *)
    echo "trace_pair: unknown scenario $scenario" >&2
    exit 2
    ;;
esac
source "$(dirname "${BASH_SOURCE[0]}")/../../tools/lab/skip_or_fail.sh"
for p in "${server[0]}" "${client[0]}"; do
  command -v "$p" >/dev/null || skip_or_fail "$p is not installed (tools/dev/deps.sh)"
done

# Waits (bounded) until the server listens, or returns 1 if it exits first.
wait_ready() {
  local pid=$1 hex i
  hex=$(printf ':%04X [0-9A-F:]* 0A ' "$port")
  for ((i = 0; i < 300; i++)); do
    if [[ $ready == tcp ]]; then
      grep -Eqs "$hex" /proc/net/tcp /proc/net/tcp6 && return 0
    else
      rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN .*src-addr $QPC_IP0:7174" &&
        return 0
    fi
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# run plain|traced: the pair, with their statuses in s_rc and c_rc.
run() {
  local mode=$1 s_pre=() c_pre=() spid
  if [[ $mode == traced ]]; then
    s_pre=("$qt" -o "$w/server.%p.json" --)
    c_pre=("$qt" -o "$w/client.%p.json" --)
  fi
  timeout "$limit" "${s_pre[@]}" "${server[@]}" >"$w/$mode-server.out" 2>&1 &
  spid=$!
  wait_ready "$spid" || echo "trace_pair: the $mode server is not listening"
  timeout "$limit" "${c_pre[@]}" "${client[@]}" >"$w/$mode-client.out" 2>&1
  c_rc=$?
  wait "$spid"
  s_rc=$?
  echo "--- $mode: server exit $s_rc, client exit $c_rc"
}

# run_measured plain|traced: run, again (at most twice more) where perftest
# could not sample its own CPU clock (perftest_clock.sh); said.
source "$(dirname "${BASH_SOURCE[0]}")/perftest_clock.sh"
run_measured() {
  local try why
  for try in 1 2 3; do
    rm -f "$w"/server.*.json "$w"/client.*.json
    run "$1"
    why=$(perftest_unmeasured "$w/$1-server.out" "$w/$1-client.out") || return 0
    echo "trace_pair: perftest could not measure its CPU clock in the $1 run ($why): run $try of 3"
  done
}

run_measured plain
plain_s=$s_rc plain_c=$c_rc
run_measured traced
ok=0
check() { echo "FAIL: $*"; ok=1; }
[[ $plain_s -ne 124 && $plain_c -ne 124 ]] || check "the untraced programs timed out"
[[ $s_rc -eq $plain_s ]] || check "traced server exited $s_rc, untraced $plain_s"
[[ $c_rc -eq $plain_c ]] || check "traced client exited $c_rc, untraced $plain_c"
for side in server client; do
  if grep -q "^qp-trace:" "$w/traced-$side.out"; then check "the preload complained ($side)"; fi
done
traces=("$w"/server.*.json "$w"/client.*.json)
[[ ${#traces[@]} -eq 2 && -s ${traces[0]} && -s ${traces[1]} ]] ||
  check "want one trace per process, have: $(ls "$w")"

"$qv" "${traces[@]}" >"$w/validate.out" 2>&1
v_rc=$?
"$qv" --json "${traces[@]}" >"$w/validate.json" 2>&1
j_rc=$?
echo "--- qp-validate ${traces[*]##*/}: exit $v_rc"
cat "$w/validate.out"
[[ $v_rc -eq $want_validate ]] || check "qp-validate exited $v_rc, want $want_validate"
[[ $j_rc -eq $v_rc ]] || check "qp-validate --json exited $j_rc, text $v_rc"
grep -q "\"exit_code\": $want_validate" "$w/validate.json" || check "--json lacks exit_code $want_validate"
for re in "${greps[@]}"; do
  grep -Eq "$re" "$w/validate.out" || check "qp-validate output lacks /$re/"
done
if [[ $ok -ne 0 ]]; then
  for f in "$w"/*.out "${traces[@]}"; do
    echo "--- $f"
    cat "$f"
  done
fi
exit $ok
