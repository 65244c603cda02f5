#!/bin/sh
# SPDX-License-Identifier: MIT
# fleet_small (ctest, label unit): fleet_gen's 20 x 50 job through
# qp-validate, checked by fleet_check.py; with and without destinations.
# Usage: fleet_unit.sh FLEET_GEN QP_VALIDATE FLEET_CHECK
set -eu
gen=$1 validate=$2 check=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run() {  # run NAME [fleet_gen options] -- [fleet_check options]
  name=$1
  shift
  gen_opts=""
  while [ "$1" != "--" ]; do gen_opts="$gen_opts $1"; shift; done
  shift
  mkdir "$work/$name"
  # shellcheck disable=SC2086
  "$gen" --hosts 20 --qps 50 --out "$work/$name" $gen_opts
  status=0
  "$validate" --json "$work/$name"/node-*.json > "$work/$name.json" || status=$?
  if [ "$status" -ne 1 ]; then
    echo "fleet_small: $name: qp-validate exited $status, expected 1 (faults planted)"
    exit 1
  fi
  python3 "$check" "$@" "$work/$name/truth.json" "$work/$name.json"
}

run dest --
run nodest --no-dest --
echo "fleet_small: both fleets checked"
