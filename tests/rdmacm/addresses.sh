#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Addresses as hosts have them (issue 39), natively on rxe and then through
# qp-cm on the management network, every case in one boot. Each case runs
# our cm_events (or cm_ports) natively on rxe's netdevs with the kernel CM
# (CTest lab_rdmacm_addr_CASE_native), then, once the kernel CM is removed,
# through `qp-cm --devices` on the management netdevs
# (lab_rdmacm_addr_CASE_mgmt), and asserts each. Each run is framed with
# `qpc-case: begin/end NAME` lines for tools/lab/lab-group (the fixture test
# lab_rdmacm_addr_group, docs/lab.md "Groups"); a case also fails if it
# leaves a QP behind.
#
#   v6any_v4       server on the IPv6 wildcard `::` port 0 (the port it got
#                  read from its stderr), IPv4 client: connects; the new id's
#                  addresses are AF_INET (as rdma_cm's), the listener's `::`
#   v6any_v4_fixed the same on a fixed port
#   v6any_v6       server on `::`, IPv6 global client: connects
#   v4any          server on 0.0.0.0 port 0, IPv4 client: connects
#   afonly         server on `::` with AFONLY: the IPv4 client is refused,
#                  the server sees no event. Natively REJECTED status 28
#                  (the port is listened on, so the request reaches rdma_cm,
#                  which finds no listener for IPv4 and rejects it as its
#                  consumer), not 8 (nobody listening); through qp-cm the
#                  same event and status as natively in this boot
#   ipv6           an IPv6 global pair (rxe: fd99::1/64, fd99::2/64 on
#                  veth0/veth1; management: fd77::1/64, fd77::2/64)
#   link_local     a link-local pair with scope ids (server fe80::..%veth0,
#                  client bound to fe80::..%veth1 reaching fe80::..%veth1)
#   second_addr    a second address per netdev in the same subnet (x.x.x.11
#                  and .12) as the pair's addresses
#   ports          cm_ports: REUSEADDR and AFONLY's port rules, wildcards of
#                  either family, an IPv4 wildcard taking the port of a
#                  listening AF-only IPv6 wildcard (the same results natively
#                  and through qp-cm, listed in the case)
#   linger         a server on a fixed port, a client, the server gone, and a
#                  new server at once on the same port (the library's TCP
#                  connections linger in TIME_WAIT): both pairs connect
#
# Through qp-cm the device map spells the addresses as a program would not
# (FD77:0::1, ::ffff:10.77.0.11, fe80::..%mgmt0): any spelling names an
# address. Every run prints its command lines, statuses and time; at the
# end a table of the cases (native, qp-cm) and no QP may be left.
#
# Usage: addresses.sh [CASE,...] --cm-events PATH --cm-ports PATH --qp-cm PATH [--libdir DIR]
# One case alone, in a boot of its own:
#   tools/lab/lab-run -- tests/rdmacm/addresses.sh CASE --cm-events ... (ctest -N -V -R lab_rdmacm_addr_group)
set -uo pipefail
CASES=v6any_v4,v6any_v4_fixed,v6any_v6,v4any,afonly,ipv6,link_local,second_addr,ports,linger
if [[ ${1:-} != --* && -n ${1:-} ]]; then CASES=$1; shift; fi
CM_PORTS=
args=()
while (($#)); do
  case $1 in
    --cm-ports) CM_PORTS=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
. "$(dirname "$0")/rdmacm_common.sh"
rdmacm_options "${args[@]}"
[[ -x $CM_EVENTS ]] || die "--cm-events: '$CM_EVENTS' is not an executable"
[[ -x $CM_PORTS ]] || die "--cm-ports: '$CM_PORTS' is not an executable"
# shellcheck disable=SC2034 # read by need_library and run_pair (rdmacm_common.sh)
VIA=wrapper READY_LINE="server: listening"
need_library
IFS=, read -ra CASE_LIST <<<"$CASES"
declare -A RESULT

# ---- the addresses of each side ----

ll_of() { ip -6 -o addr show scope link dev "$1" | awk '{sub("/.*", "", $4); print $4; exit}'; }
wait_no_tentative() {
  local i
  for ((i = 0; i < 50; i++)); do
    [[ -z $(ip -6 addr show tentative) ]] && return 0
    sleep 0.1
  done
}

# rxe: IPv6 global addresses and a second IPv4 address per netdev, routed
# as the lab routes its IPv4 pair (tools/lab/guest-setup-rxe: the `local`
# rule behind per-output-device tables, permanent neighbours), so that RoCE
# between two addresses of one kernel crosses the veth pair.
rxe_addresses() {
  local mac0 mac1
  mac0=$(cat "/sys/class/net/$QPC_NETDEV0/address") mac1=$(cat "/sys/class/net/$QPC_NETDEV1/address")
  ip -6 -batch - <<EOF2 || return 1
addr add fd99::1/64 dev $QPC_NETDEV0 nodad
addr add fd99::2/64 dev $QPC_NETDEV1 nodad
rule add pref 1000 lookup local
rule del pref 0 lookup local
route add fd99::2 dev $QPC_NETDEV0 src fd99::1 table 100
route add fd99::1 dev $QPC_NETDEV1 src fd99::2 table 101
rule add pref 100 oif $QPC_NETDEV0 lookup 100
rule add pref 101 oif $QPC_NETDEV1 lookup 101
rule add pref 102 iif lo from fd99::1 to fd99::2 lookup 100
rule add pref 103 iif lo from fd99::2 to fd99::1 lookup 101
neigh add fd99::2 lladdr $mac1 dev $QPC_NETDEV0 nud permanent
neigh add fd99::1 lladdr $mac0 dev $QPC_NETDEV1 nud permanent
EOF2
  ip -batch - <<EOF2 || return 1
addr add 10.99.0.11/24 dev $QPC_NETDEV0
addr add 10.99.0.12/24 dev $QPC_NETDEV1
route add 10.99.0.12 dev $QPC_NETDEV0 src 10.99.0.11 table 100
route add 10.99.0.11 dev $QPC_NETDEV1 src 10.99.0.12 table 101
rule add pref 104 iif lo from 10.99.0.11 to 10.99.0.12 lookup 100
rule add pref 105 iif lo from 10.99.0.12 to 10.99.0.11 lookup 101
neigh add 10.99.0.12 lladdr $mac1 dev $QPC_NETDEV0 nud permanent
neigh add 10.99.0.11 lladdr $mac0 dev $QPC_NETDEV1 nud permanent
EOF2
  . "$RDMACM_DIR/../lab/link_local_neighbours.sh"
  link_local_neighbours || return 1
  wait_no_tentative
}

# mgmt: the management network's IPv6 and second addresses (no RDMA device,
# nothing to route: TCP between local addresses goes through lo).
mgmt_addresses() {
  ip -batch - <<EOF2 || return 1
addr add fd77::1/64 dev mgmt0 nodad
addr add fd77::2/64 dev mgmt1 nodad
addr add 10.77.0.11/24 dev mgmt0
addr add 10.77.0.12/24 dev mgmt1
EOF2
  wait_no_tentative
}

# side SIDE: the addresses of the cases on rxe (native) or mgmt (qp-cm).
side() {
  if [[ $1 == native ]]; then
    S4=$QPC_IP0 C4=$QPC_IP1 S6=fd99::1 C6=fd99::2 S4B=10.99.0.11 C4B=10.99.0.12
    N0=$QPC_NETDEV0 N1=$QPC_NETDEV1
  else
    S4=$MGMT_IP0 C4=$MGMT_IP1 S6=fd77::1 C6=fd77::2 S4B=10.77.0.11 C4B=10.77.0.12
    N0=mgmt0 N1=mgmt1
  fi
  LL0=$(ll_of "$N0") LL1=$(ll_of "$N1")
}

# ---- the cases ----

PORT=7230
next_port() { PORT=$((PORT + 1)); }

# The port a server of TAG printed ("# server: port N"), after it listened.
port_of() { sed -n 's/^# server: port \([0-9]*\)$/\1/p' "$WORK/$1.server" | head -n 1; }

# pair_port0 TAG SERVER_ADDR SERVER_ARGS -- CLIENT_ARGS: a server on port 0,
# then the client to the port it printed.
pair_port0() {
  local tag=$1 sa=$2 spre t0 port i
  shift 2
  local sargs=() cargs=()
  while [[ $1 != -- ]]; do sargs+=("$1"); shift; done
  shift
  cargs=("$@")
  prefix "$WORK/$tag.server.qpcm.log"
  spre=("${PRE[@]}")
  note "$tag ($LAUNCH): server: ${spre[*]}${spre:+ }$CM_EVENTS -s -b $sa -p 0 ${sargs[*]}"
  t0=$(now)
  timeout -k 3 30 "${spre[@]}" "$CM_EVENTS" -s -b "$sa" -p 0 -t 15 "${sargs[@]}" >"$WORK/$tag.server" 2>&1 &
  local spid=$!
  PIDS+=("$spid")
  port=
  for ((i = 0; i < 300; i++)); do
    has_ready_line "$WORK/$tag.server" && { port=$(port_of "$tag"); break; }
    kill -0 "$spid" 2>/dev/null || break
    sleep 0.1
  done
  S_RC=-1 C_RC=-1
  if [[ -z $port || $port == 0 ]]; then
    echo "   the server did not say its port (${port:-none})"
  else
    echo "   server listening on port $port after $(since "$t0") s"
    prefix "$WORK/$tag.client.qpcm.log"
    note "$tag ($LAUNCH): client: ${PRE[*]}${PRE:+ }$CM_EVENTS -c -p $port ${cargs[*]}"
    timeout -k 3 30 "${PRE[@]}" "$CM_EVENTS" -c -p "$port" -t 15 "${cargs[@]}" >"$WORK/$tag.client" 2>&1
    C_RC=$?
  fi
  S_RC=0
  wait "$spid" || S_RC=$?
  echo "   server exit $S_RC, client exit $C_RC, pair took $(since "$t0") s"
}

# pair_fixed TAG SERVER_ADDR SERVER_ARGS -- CLIENT_ARGS (a fixed port)
pair_fixed() {
  local tag=$1 sa=$2
  shift 2
  local sargs=() cargs=()
  while [[ $1 != -- ]]; do sargs+=("$1"); shift; done
  shift
  cargs=("$@")
  next_port
  run_pair "$tag" "$sa" "$PORT" 30 -- "$CM_EVENTS" -s -b "$sa" -p "$PORT" -t 15 "${sargs[@]}" \
    -- "$CM_EVENTS" -c -p "$PORT" -t 15 "${cargs[@]}"
}

# expect_connected TAG: both exited 0 and printed ESTABLISHED.
expect_connected() {
  local ok=0
  ((S_RC == 0 && C_RC == 0)) || { echo "   FAIL: $1: server exit $S_RC, client exit $C_RC (want 0, 0)"; ok=1; }
  grep -q '^client: event RDMA_CM_EVENT_ESTABLISHED' "$WORK/$1.client" 2>/dev/null ||
    { echo "   FAIL: $1: the client saw no ESTABLISHED"; ok=1; }
  ((ok == 0)) || show_run "$1"
  return $ok
}

# expect_line TAG FILE(server|client) REGEX
expect_line() {
  grep -Eq "$3" "$WORK/$1.$2" && return 0
  echo "   FAIL: $1: the $2 printed no line /$3/"
  show_run "$1"
  return 1
}

# One case on one side (native or lib); 0 when it holds.
run_case() {
  local c=$1 sidename=$2 tag="$2.$1"
  case $c in
    v6any_v4)
      pair_port0 "$tag" :: -A -- -b "$C4" -a "$S4" -A
      expect_connected "$tag" &&
        expect_line "$tag" server "^# server: request id local AF_INET $S4 peer AF_INET $C4; listener AF_INET6 ::\$" &&
        expect_line "$tag" client "^# client: connected id local AF_INET $C4 peer AF_INET $S4\$"
      ;;
    v6any_v4_fixed)
      pair_fixed "$tag" :: -A -- -b "$C4" -a "$S4"
      expect_connected "$tag" &&
        expect_line "$tag" server "^# server: request id local AF_INET $S4 peer AF_INET $C4; listener AF_INET6 ::\$"
      ;;
    v6any_v6)
      pair_port0 "$tag" :: -A -- -b "$C6" -a "$S6"
      expect_connected "$tag" &&
        expect_line "$tag" server "^# server: request id local AF_INET6 $S6 peer AF_INET6 $C6; listener AF_INET6 ::\$"
      ;;
    v4any)
      pair_port0 "$tag" 0.0.0.0 -A -- -b "$C4" -a "$S4"
      expect_connected "$tag" &&
        expect_line "$tag" server "^# server: request id local AF_INET $S4 peer AF_INET $C4; listener AF_INET 0.0.0.0\$"
      ;;
    afonly)
      # Refused as natively: the client's event and status, the server none.
      pair_fixed "$tag" :: -O afonly -t 4 -- -b "$C4" -a "$S4" -t 8
      local ev
      ev=$(grep -Eo '^client: event RDMA_CM_EVENT_[A-Z_]+ status -?[0-9]+' "$WORK/$tag.client" | tail -n 1)
      echo "   ${ev:-client: no event} (exit $C_RC)"
      AFONLY_EVENT[$sidename]=$ev
      if ((C_RC != 3)) || [[ -z $ev ]] || grep -q '^server: event' "$WORK/$tag.server"; then
        echo "   FAIL: $tag: want the client refused (exit 3, an event) and no event on the server"
        show_run "$tag"
        return 1
      fi
      if [[ $sidename == native && $ev != "client: event RDMA_CM_EVENT_REJECTED status 28" ]]; then
        echo "   FAIL: $tag: natively '$ev', not REJECTED status 28 (the header's premise)"
        return 1
      fi
      if [[ $sidename == lib && $ev != "${AFONLY_EVENT[native]:-}" ]]; then
        echo "   FAIL: $tag: through qp-cm '$ev', natively '${AFONLY_EVENT[native]:-}'"
        return 1
      fi
      ;;
    ipv6)
      pair_fixed "$tag" "$S6" -A -- -b "$C6" -a "$S6" -A
      expect_connected "$tag" &&
        expect_line "$tag" server "^# server: request id local AF_INET6 $S6 peer AF_INET6 $C6; listener AF_INET6 $S6\$"
      ;;
    link_local)
      pair_fixed "$tag" "$LL0%$N0" -A -- -b "$LL1%$N1" -a "$LL0%$N1"
      expect_connected "$tag" &&
        expect_line "$tag" server "^# server: request id local AF_INET6 $LL0(%[a-z0-9]+)? peer AF_INET6 $LL1(%[a-z0-9]+)?; listener AF_INET6 $LL0%$N0\$"
      ;;
    second_addr)
      pair_fixed "$tag" "$S4B" -A -- -b "$C4B" -a "$S4B"
      expect_connected "$tag" &&
        expect_line "$tag" server "^# server: request id local AF_INET $S4B peer AF_INET $C4B; listener AF_INET $S4B\$"
      ;;
    ports)
      # cm_ports' steps (its header): the same results natively and through
      # qp-cm, and the results rdma_cm's rules give.
      local p=$((PORT + 100))
      PORT=$((PORT + 10))
      local steps=("bind:0.0.0.0:$p" "bind:[::]:$p" "obind:[::]:$p" listen:1 listen:3
        "bind:$S4:$((p + 1))" "bind:$S4:$((p + 1))"
        "rbind:$S4:$((p + 2))" "rbind:$S4:$((p + 2))" listen:8 destroy:9 listen:8 "rbind:$S4:$((p + 2))"
        "bind:[::]:$((p + 3))" "bind:$S4:$((p + 3))" "dbind:[::]:$((p + 4))" "bind:0.0.0.0:$((p + 4))"
        "obind:[::]:$((p + 5))" listen:18 "bind:0.0.0.0:$((p + 5))" listen:20)
      prefix "$WORK/$tag.qpcm.log"
      note "$tag ($LAUNCH): ${PRE[*]}${PRE:+ }$CM_PORTS ${steps[*]}"
      timeout -k 3 30 "${PRE[@]}" "$CM_PORTS" "${steps[@]}" >"$WORK/$tag.out" 2>&1
      local rc=$?
      sed 's/^/   | /' "$WORK/$tag.out"
      cat >"$WORK/ports.want" <<EOF2
step 1 bind: ok
step 2 bind: EADDRNOTAVAIL
step 3 bind: ok
step 4 listen 1: ok
step 5 listen 3: ok
step 6 bind: ok
step 7 bind: EADDRINUSE
step 8 bind: ok
step 9 bind: ok
step 10 listen 8: EADDRINUSE
step 11 destroy 9: ok
step 12 listen 8: ok
step 13 bind: EADDRINUSE
step 14 bind: ok
step 15 bind: EADDRNOTAVAIL
step 16 bind: ok
step 17 bind: EADDRNOTAVAIL
step 18 bind: ok
step 19 listen 18: ok
step 20 bind: ok
step 21 listen 20: ok
EOF2
      if ((rc != 0)) || ! diff -u "$WORK/ports.want" "$WORK/$tag.out"; then
        echo "   FAIL: $tag: cm_ports exit $rc, its results differ from rdma_cm's rules (-) above (+)"
        return 1
      fi
      ;;
    linger)
      next_port
      local first second
      run_pair "$tag.1" "$S4" "$PORT" 30 -- "$CM_EVENTS" -s -b "$S4" -p "$PORT" -t 15 \
        -- "$CM_EVENTS" -c -b "$C4" -a "$S4" -p "$PORT" -t 15
      first="$S_RC $C_RC"
      run_pair "$tag.2" "$S4" "$PORT" 30 -- "$CM_EVENTS" -s -b "$S4" -p "$PORT" -t 15 \
        -- "$CM_EVENTS" -c -b "$C4" -a "$S4" -p "$PORT" -t 15
      second="$S_RC $C_RC"
      local tw
      tw=$(awk -v p="$(printf ':%04X' "$PORT")" '$4 == "06" && index($2, p) {n++} END {print n + 0}' /proc/net/tcp)
      echo "   first pair $first, second $second; TIME_WAIT sockets on port $PORT now: $tw"
      if [[ $first != "0 0" || $second != "0 0" ]]; then
        echo "   FAIL: $tag: both pairs must connect on port $PORT"
        show_run "$tag.1"
        show_run "$tag.2"
        return 1
      fi
      ;;
    *) die "unknown case $c" ;;
  esac
}
declare -A AFONLY_EVENT

# no_new_qps N: 0 when no more QPs exist than the N before the case (its
# programs have exited: each pair waits for both sides).
no_new_qps() {
  local n
  n=$(qps_left)
  ((n <= $1)) && return 0
  echo "   FAIL: $((n - $1)) QP(s) left by the case"
  rdma resource show qp
  return 1
}

t_all=$(now)
note "setup: rxe's IPv6 and second addresses, the management network"
rxe_addresses || die "rxe addresses"
mgmt_net_up || die "management network"
mgmt_addresses || die "management addresses"

# Natively first (the kernel CM), then through qp-cm without it. Each case
# framed for tools/lab/lab-group under its CTest name
# (lab_rdmacm_addr_CASE_native, lab_rdmacm_addr_CASE_mgmt): in one boot, each
# case's test reports its own output and status (docs/lab.md, "Groups").
for sidename in native lib; do
  side "$sidename"
  if [[ $sidename == native ]]; then
    LAUNCH=native MAP=
    ctname=native
  else
    kernel_cm_off || die "kernel CM"
    LAUNCH=wrapper
    ctname=mgmt
    # Spellings a program would not use: the map still names each address.
    MAP="10.77.0.1=$QPC_DEV0:1,::ffff:10.77.0.2=$QPC_DEV1:1,FD77:0::1=$QPC_DEV0:1,[fd77:0:0::2]=$QPC_DEV1:1"
    MAP+=",$LL0%$N0=$QPC_DEV0:1,$LL1%$N1=$QPC_DEV1:1,::FFFF:10.77.0.11=$QPC_DEV0:1,10.77.0.12=$QPC_DEV1:1"
  fi
  echo "== $sidename: server $S4 / $S6 / $LL0%$N0, client $C4 / $C6 / $LL1%$N1${MAP:+; map $MAP}"
  for c in "${CASE_LIST[@]}"; do
    t0=$(now)
    echo "qpc-case: begin lab_rdmacm_addr_${c}_$ctname"
    q0=$(qps_left)
    if run_case "$c" "$sidename" && no_new_qps "$q0"; then RESULT[$c.$sidename]="ok ($(since "$t0") s)" st=0; else
      RESULT[$c.$sidename]=FAIL st=1
      fail=1
    fi
    echo "-- $c $sidename: ${RESULT[$c.$sidename]}"
    echo "qpc-case: end lab_rdmacm_addr_${c}_$ctname $st"
  done
done

for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
sleep 0.3
check_no_qps "end of the address cases"
echo
printf '%-16s %-16s %-16s\n' case "native (rxe)" "qp-cm (mgmt)"
for c in "${CASE_LIST[@]}"; do
  printf '%-16s %-16s %-16s\n' "$c" "${RESULT[$c.native]:-}" "${RESULT[$c.lib]:-}"
done
echo "total $(since "$t_all") s"
((fail == 0)) && echo PASS || echo FAIL
exit "$fail"
