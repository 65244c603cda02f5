#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A real session's dumps judged offline: both sides run qp-connect --dump,
# then qp-validate on the two dumps must find no error (exit 0), and on a dump
# pair whose MTUs were forced apart must exit 1 naming path_mtu.
set -uo pipefail
bin_dir=$1
: "${QPC_DEV0:?not in the lab: QPC_DEV0 unset}"
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
qc=$bin_dir/qp-connect/qp-connect
qv=$bin_dir/qp-validate/qp-validate
run_pair() {  # extra-server-args extra-client-args (quoted strings)
  $qc -d "$QPC_DEV0" --timeout 20 -n 10 --dump "$w/a.json" $1 >"$w/s.out" 2>&1 &
  local s=$!
  sleep 0.2
  $qc -d "$QPC_DEV1" --timeout 20 -n 10 --dump "$w/b.json" $2 "$QPC_IP0" >"$w/c.out" 2>&1
  local c=$?
  wait $s
  echo "server $? client $c"
}
run_pair "" ""
$qv "$w/a.json" "$w/b.json"; rc=$?
[[ $rc -eq 0 ]] || { echo "FAIL: qp-validate on a clean session's dumps exited $rc"; exit 1; }
run_pair "-m 1024 --no-validate --no-verify" "-m 512 --no-validate --no-verify"
$qv "$w/a.json" "$w/b.json" >"$w/v.out"; rc=$?
cat "$w/v.out"
[[ $rc -eq 1 ]] || { echo "FAIL: qp-validate on MTU-mismatched dumps exited $rc, want 1"; exit 1; }
grep -q "path_mtu" "$w/v.out" || { echo "FAIL: path_mtu not named"; exit 1; }
echo ok
