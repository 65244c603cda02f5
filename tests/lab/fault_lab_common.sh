# SPDX-License-Identifier: MIT
# Sourced by the fault lab scripts (gid_fault_lab.sh, path_fault_lab.sh):
# their arguments, and run_pair. Usage, from a script named NAME.sh:
#   source "$(dirname "$0")/fault_lab_common.sh" "$@"
# sets bin (QP_CONNECT), scenario (SCENARIO) and pair (qp_connect_pair.sh),
# and exits when not in the lab.
set -uo pipefail
lab_name=$(basename "$0" .sh)
bin=${1:?usage: $lab_name.sh QP_CONNECT SCENARIO}
scenario=${2:?usage: $lab_name.sh QP_CONNECT SCENARIO}
: "${QPC_DEV1:?not in the lab: QPC_DEV1 unset}"
pair=$(dirname "$0")/../integration/qp_connect_pair.sh

# run_pair LIMIT_SECONDS PAIR_ARGS...: qp_connect_pair.sh over tcp, timed
# from the server's start to both reports; fails beyond the limit. The
# scenarios give both sides --timeout 20 and a limit of 15 s: not a speed
# claim (the guest is emulated, its host may be loaded), it says the fault
# was named (or the pair connected) on its own, not by a side that waited
# for its 20 s deadline.
run_pair() {
  local limit=$1
  shift
  local t0 rc ms
  t0=$(date +%s%N)
  "$pair" "$bin" tcp "$@"
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  echo "$lab_name: $scenario: the pair reported after ${ms} ms (limit ${limit} s)"
  if ((ms > limit * 1000)); then
    echo "FAIL: reported after ${ms} ms, more than ${limit} s"
    rc=1
  fi
  return $rc
}
