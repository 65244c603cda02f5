#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sourced by the `sim` tests and tools/bench/sa_paths.sh: starts an ibsim
# fabric and OpenSM under umad2sim in a private directory, and stops them.
#
#   sim_require                  exit 77 (skip) if a package is missing, or 1
#                                with QPCONNECT_LAB_REQUIRED=1 / CI=true
#                                (skip_or_fail, tools/lab/skip_or_fail.sh)
#   sim_start FABRIC [opensm args...]   ibsim + OpenSM on Hca1; waits for
#                                MASTER (bounded by SIM_MASTER_TIMEOUT, 30 s)
#   sim_start_fabric FABRIC      ibsim only (no subnet manager)
#   sim_run HOST cmd...          runs cmd attached to HOST (SIM_HOST) via
#                                LD_PRELOAD=libumad2sim.so
#   sim_lid HOST                 the LID OpenSM gave HOST's port 1
#   sim_stop                     kills every process it started (also on EXIT)
#
# Parallel runs do not collide: ibsim and umad2sim meet on abstract unix
# sockets named after IBSIM_SOCKNAME (set per run here), umad2sim writes its
# simulated sysfs into ./sys-<pid> of the current directory (a per-run temp
# directory here), and OpenSM's cache and log go there too.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/../../tools/lab/skip_or_fail.sh"

SIM_UMAD2SIM=${SIM_UMAD2SIM:-/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so}
SIM_MASTER_TIMEOUT=${SIM_MASTER_TIMEOUT:-30}
SIM_PIDS=()
SIM_DIR=""

sim_log() { echo "sim: $*" >&2; }

sim_require() {
  local missing=()
  command -v ibsim >/dev/null || missing+=(ibsim-utils)
  [[ -f "$SIM_UMAD2SIM" ]] || missing+=(libumad2sim0)
  command -v opensm >/dev/null || missing+=(opensm)
  command -v saquery >/dev/null || missing+=(infiniband-diags)
  command -v python3 >/dev/null || missing+=(python3)
  if [[ ${#missing[@]} -gt 0 ]]; then
    skip_or_fail "sim: missing ${missing[*]} (tools/dev/deps.sh installs them)" >&2
  fi
}

sim_stop() {
  local p
  for p in "${SIM_PIDS[@]}"; do kill -CONT "$p" 2>/dev/null; kill "$p" 2>/dev/null; done
  for p in "${SIM_PIDS[@]}"; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  SIM_PIDS=()
  if [[ -n "$SIM_DIR" && -z "${SIM_KEEP:-}" ]]; then rm -rf "$SIM_DIR"; fi
}

sim_start_fabric() {
  local fabric=$1
  SIM_DIR=$(mktemp -d "${TMPDIR:-/tmp}/qpc-sim.XXXXXX")
  export IBSIM_SOCKNAME="qpc-sim-$$-${RANDOM}"
  trap sim_stop EXIT
  trap 'exit 143' INT TERM
  (cd "$SIM_DIR" && exec ibsim -s -n "$fabric" >"$SIM_DIR/ibsim.log" 2>&1) &
  SIM_PIDS+=($!)
  local i
  for i in $(seq 1 50); do
    grep -q "Network simulator ready" "$SIM_DIR/ibsim.log" 2>/dev/null && return 0
    kill -0 "${SIM_PIDS[0]}" 2>/dev/null || break
    sleep 0.1
  done
  sim_log "ibsim did not start:"; cat "$SIM_DIR/ibsim.log" >&2
  return 1
}

sim_run() {
  local host=$1
  shift
  (cd "$SIM_DIR" && SIM_HOST=$host LD_PRELOAD=$SIM_UMAD2SIM "$@")
}

# sim_start_opensm [opensm args...]: OpenSM attached to Hca1, in the background.
sim_start_opensm() {
  (cd "$SIM_DIR" && SIM_HOST=Hca1 LD_PRELOAD=$SIM_UMAD2SIM OSM_TMP_DIR=$SIM_DIR \
     OSM_CACHE_DIR=$SIM_DIR exec opensm -f "$SIM_DIR/osm.log" "$@" >"$SIM_DIR/opensm.out" 2>&1) &
  SIM_OPENSM_PID=$!
  SIM_PIDS+=("$SIM_OPENSM_PID")
  local deadline=$((SECONDS + SIM_MASTER_TIMEOUT))
  while ((SECONDS < deadline)); do
    if grep -q "Entering MASTER state" "$SIM_DIR/opensm.out" 2>/dev/null; then
      # MASTER comes before the first sweep's LIDs are programmed everywhere;
      # wait until Hca1's port reads ACTIVE with an SM LID.
      local j
      for j in $(seq 1 50); do
        [[ "$(sim_lid Hca1 2>/dev/null)" =~ ^[1-9][0-9]*$ ]] && return 0
        sleep 0.1
      done
    fi
    kill -0 "$SIM_OPENSM_PID" 2>/dev/null || break
    sleep 0.2
  done
  sim_log "OpenSM did not reach MASTER in ${SIM_MASTER_TIMEOUT} s:"
  cat "$SIM_DIR/opensm.out" >&2
  tail -n 20 "$SIM_DIR/osm.log" >&2 2>/dev/null
  return 1
}

sim_start() {
  local fabric=$1
  shift
  sim_start_fabric "$fabric" || return 1
  sim_start_opensm "$@"
}

# The LID of HOST's port 1, as HOST's own (simulated) port reports it.
sim_lid() {
  sim_run "$1" timeout 10 ibstat ibsim0 1 2>/dev/null | sed -n 's/^Base lid: *//p'
}
