# SPDX-License-Identifier: MIT
# write_bw_pairs.sh: sourced by tools/bench/inspect.sh and busy_pairs.sh.
# Sets `w` (a scratch directory) and `procs` (pids), and a trap that kills
# those and removes `w` on exit; in the lab, one ib_write_bw -q N on each
# device, connected, traffic running:
#
#   start_write_bw_pairs N DURATION [PERFTEST_ARGS...]
#       Starts the server on QPC_DEV0 and the client on QPC_DEV1 (-t 16, -D
#       DURATION, the extra arguments on both), output in $w/server.out and
#       $w/client.out, their pids appended to the caller's `procs` array and
#       the client's in `client`; returns once the tracker lists 2N RC QPs
#       past RTR (`k`, `start`: the client's start in seconds), or exits 1
#       naming how many connected.
w=$(mktemp -d)
procs=()
cleanup() {
  for p in "${procs[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$w"
}
trap cleanup EXIT

start_write_bw_pairs() {
  local n=$1 duration=$2 l i
  shift 2
  # -t 16: perftest sizes one CQ for all QPs (tx depth x QPs); rxe caps a CQ's size.
  ib_write_bw -d "$QPC_DEV0" -x "$QPC_GID0" -q "$n" -t 16 -D "$duration" "$@" >"$w/server.out" 2>&1 &
  procs+=($!)
  # The server sets up its QPs first; wait (bounded) until it listens.
  for ((l = 0; l < 600; l++)); do
    grep -q ":4853 " /proc/net/tcp 2>/dev/null && break
    sleep 0.2
  done
  start=$(date +%s)
  ib_write_bw -d "$QPC_DEV1" -x "$QPC_GID1" -q "$n" -t 16 -D "$duration" "$@" "$QPC_IP0" \
    >"$w/client.out" 2>&1 &
  client=$!
  procs+=($client)
  for ((i = 0; ; i++)); do
    k=$(rdma resource show qp | grep -c "type RC state RT" || true)
    ((k >= 2 * n)) && return 0
    if ((i >= 600)) || ! kill -0 "$client" 2>/dev/null; then
      echo "only $k of $((2 * n)) QPs connected" >&2
      tail -n 15 "$w"/*.out >&2
      exit 1
    fi
    sleep 1
  done
}
