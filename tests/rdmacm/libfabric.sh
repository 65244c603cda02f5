#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# libfabric's verbs provider (Debian 12's libfabric1 1.17.0; the programs are
# libfabric-bin's fi_pingpong and fi_info, Debian has no fabtests package) natively and
# through the library (issue 39 item 3).
#
# Pingpong modes (rdmacm_common.sh: native_fails, mgmt, rxe_native, rxe_lib):
# FI_EP_MSG over the verbs provider, data checked (-c),
#   server  env FI_LOG_LEVEL=info FI_LOG_PROV=verbs [FI_VERBS_IFACE=mgmt]
#           fi_pingpong -p verbs -e msg -d DEV0 -I 50 -S 4096 -c
#   client  env [FI_VERBS_IFACE=mgmt] fi_pingpong -p verbs -e msg -I 50 -S 4096 -c SERVER_ADDR
# TCP port 47592 is fi_pingpong's own control channel (it carries the
# server's endpoint name). On the management network FI_VERBS_IFACE=mgmt has
# the provider probe mgmt0 and mgmt1 only, so DEV0's address, where the
# server listens, is 10.77.0.1 (the device map's); on rxe's addresses it
# is unset (DEV0's first address is QPC_IP0). Success: both exit 0, each
# prints its result row, 4k bytes, 50 sent, =50 acknowledged; the server's
# provider says it listens on SERVER_ADDR; through the library, the log
# has at most one line per address no device serves and none for a loopback
# address (probes_quiet).
#
# Probe modes (this script's own):
#   probe_native  natively, the kernel CM in place, the management network
#                 up (and taken down at the end, for the next case of the
#                 boot): cm_ports binds each probe address twice (PROBES:
#                 127.0.0.1, ::1, 10.77.0.2, the link-local addresses of mgmt0
#                 and mgmt1 with their scope) and listens on the first; its
#                 output must be PROBE_EXPECTED (loopback bound, the others
#                 ENODEV: rdma_cm's answers, measured here)
#   probe_lib     the management network, the kernel CM removed, through
#                 qp-cm: the same cm_ports run with a map naming 10.77.0.1
#                 only must print the same; fi_info -p verbs -t FI_EP_MSG
#                 with the map of both (FI_VERBS_IFACE=mgmt) must list rxe0
#                 at 10.77.0.1 and rxe1 at 10.77.0.2; both logs quiet
#                 (probes_quiet)
#
# Usage: libfabric.sh MODE --cm-events PATH --cm-ports PATH [--qp-cm PATH]
#        [--libdir DIR] [--via wrapper|libpath]
set -uo pipefail
PROG_BIN=fi_pingpong
ITER=50
SIZE=4096
SIZE_TEXT=4k # fi_pingpong's spelling of SIZE in its result row
CM_PORTS=
args=()
while (($#)); do
  if [[ $1 == --cm-ports ]]; then
    CM_PORTS=${2:-}
    shift 2 || break
  else
    args+=("$1")
    shift
  fi
done
set -- "${args[@]}"
. "$(dirname "$0")/rdmacm_common.sh"

PAIR_ADDR= # the server address of the last prog_pair
prog_pair() {
  PAIR_ADDR=$2
  local senv=(env FI_LOG_LEVEL=info FI_LOG_PROV=verbs) cenv=(env)
  if [[ $2 == "$MGMT_IP0" ]]; then
    senv+=(FI_VERBS_IFACE=mgmt)
    cenv+=(FI_VERBS_IFACE=mgmt)
  fi
  # 60 s per program: the pair takes about 5 s in the emulated guest
  # (a provider probe per interface address, 50 round trips); the bound only
  # stops a hung pair (a lost connection event) from holding the boot.
  run_pair "$1" "$2" 47592 60 -- "${senv[@]}" fi_pingpong -p verbs -e msg -d "$QPC_DEV0" \
    -I "$ITER" -S "$SIZE" -c -- "${cenv[@]}" fi_pingpong -p verbs -e msg -I "$ITER" -S "$SIZE" -c "$2"
}

# The result row: SIZE_TEXT, ITER sent, =ITER acknowledged.
result_row() { grep -E "^$SIZE_TEXT +$ITER +=$ITER " "$1"; }

prog_ok() {
  local ok=0 f
  ((S_RC == 0 && C_RC == 0)) || { echo "   fi_pingpong exit: server $S_RC, client $C_RC (want 0, 0)"; ok=1; }
  for f in "$WORK/$1.server" "$WORK/$1.client"; do
    if result_row "$f" >/dev/null; then
      echo "   ${f##*/}: $(result_row "$f")"
    else
      echo "   ${f##*/}: no result row '$SIZE_TEXT $ITER =$ITER'"
      ok=1
    fi
  done
  local listen
  listen=$(grep -m1 'listening on: ' "$WORK/$1.server")
  case $listen in
    *"//$PAIR_ADDR:"*) echo "   server: ${listen##*<info> }" ;;
    *)
      echo "   the server's provider did not listen on $PAIR_ADDR: '${listen:-no listening line}'"
      ok=1
      ;;
  esac
  if [[ $LAUNCH != native ]]; then
    probes_quiet "$WORK/$1.server.qpcm.log" || ok=1
    probes_quiet "$WORK/$1.client.qpcm.log" || ok=1
  fi
  return $ok
}
prog_digest() {
  result_row "$WORK/$1.server" | awk '{print $1, $2, $3, $4}'
  result_row "$WORK/$1.client" | awk '{print $1, $2, $3, $4}'
}
prog_failed() {
  ((C_RC != 0 && C_RC != 124)) || return 1
  echo "   server (exit $S_RC): $(grep -m2 -E 'fi_getinfo|error' "$WORK/$1.server" | tr '\n' ' ')"
  echo "   client (exit $C_RC): $(head -n 2 "$WORK/$1.client" | tr '\n' ' ')"
  ((S_RC != 0))
}

# probes_quiet LOG: at most one line per address an rdma_bind_addr refused,
# none for a loopback address (bound, as natively). 0 if so.
probes_quiet() {
  [[ -e $1 ]] || return 0
  local ok=0 counts
  counts=$(grep -oE 'rdma_bind_addr: [^ ]+ is ' "$1" | sort | uniq -c)
  if [[ -n $counts ]]; then
    echo "   ${1##*/}: refused binds, lines per address:"
    sed 's/^/     /' <<<"$counts"
  fi
  if awk '$1 > 1 { bad = 1 } END { exit !bad }' <<<"$counts"; then
    echo "   ${1##*/}: more than one line for an address"
    ok=1
  fi
  if grep -E 'rdma_bind_addr: (127\.|::1 )' "$1"; then
    echo "   ${1##*/}: a loopback bind was refused"
    ok=1
  fi
  return $ok
}

# The probe addresses: loopback of both families, an IPv4 address on a netdev
# with no RDMA device, the link-local addresses of both management netdevs.
link_local() { ip -6 -o addr show dev "$1" scope link | awk '{print $4}' | cut -d/ -f1; }
probe_steps() {
  local a steps=()
  for a in 127.0.0.1 "[::1]" "$MGMT_IP1" "[$(link_local mgmt0)%mgmt0]" "[$(link_local mgmt1)%mgmt1]"; do
    steps+=("bind:$a:0" "bind:$a:0")
  done
  echo "${steps[@]}" listen:1
}
PROBE_EXPECTED="step 1 bind: ok
step 2 bind: ok
step 3 bind: ok
step 4 bind: ok
step 5 bind: ENODEV
step 6 bind: ENODEV
step 7 bind: ENODEV
step 8 bind: ENODEV
step 9 bind: ENODEV
step 10 bind: ENODEV
step 11 listen 1: ok"

# run_probes TAG PREFIX...: cm_ports over the probe steps; bad if its output
# is not PROBE_EXPECTED.
run_probes() {
  local tag=$1 out
  shift
  local steps
  read -ra steps <<<"$(probe_steps)"
  note "$tag: $* $CM_PORTS ${steps[*]}"
  # 30 s: a dozen binds take well under a second; the bound stops a hang.
  out=$(timeout -k 3 30 "$@" "$CM_PORTS" "${steps[@]}" 2>&1)
  echo "   exit $?"
  if [[ $out == "$PROBE_EXPECTED" ]]; then
    echo "ok: $tag: loopback bound, the other probes ENODEV, as rdma_cm answers"
  else
    bad "$tag: cm_ports printed (want the loopback binds ok, the rest ENODEV):"
    diff <(echo "$PROBE_EXPECTED") <(echo "$out")
  fi
}

# fi_info's MSG domains as "DOMAIN ADDRESS" lines, from its -v output.
msg_domains() {
  awk '/src_addr: /{a=$2} /^        name: /{ if (a != "") print $2, a; a="" }' "$1"
}

probe_main() {
  [[ -x $CM_PORTS ]] || die "--cm-ports: '$CM_PORTS' is not an executable"
  local t0
  t0=$(now)
  mgmt_net_up || die "management network"
  case $MODE in
    probe_native)
      run_probes "natively" env
      # 60 s: fi_info probes every interface address, a few seconds here.
      timeout -k 3 60 fi_info -p verbs -t FI_EP_MSG -v >"$WORK/fi_info" 2>&1
      echo "   fi_info exit $?; MSG domains natively:"
      msg_domains "$WORK/fi_info" | sort -u | sed 's/^/   | /'
      msg_domains "$WORK/fi_info" | grep -qx "$QPC_DEV0 fi_sockaddr_in://$QPC_IP0:0" ||
        bad "natively, fi_info lists no $QPC_DEV0 at $QPC_IP0"
      # The next case of the boot finds the guest as it was.
      ip link del mgmt0 || bad "ip link del mgmt0"
      ;;
    probe_lib)
      need_library
      kernel_cm_off || die "kernel CM"
      run_probes "through qp-cm, 10.77.0.1 mapped" "$QP_CM" --devices "$MGMT_IP0=$QPC_DEV0:1" \
        --log "$WORK/probe.qpcm.log" --
      probes_quiet "$WORK/probe.qpcm.log" || bad "the probes' log is not quiet"
      echo "   $(grep -c 'rdma_bind_addr' "$WORK/probe.qpcm.log") log lines for 10 binds of 5 addresses"
      local map="$MGMT_IP0=$QPC_DEV0:1,$MGMT_IP1=$QPC_DEV1:1" rc=0
      note "fi_info: $QP_CM --devices $map -- env FI_VERBS_IFACE=mgmt fi_info -p verbs -t FI_EP_MSG -v"
      # 60 s: as natively, a few seconds here.
      timeout -k 3 60 "$QP_CM" --devices "$map" --log "$WORK/fi_info.qpcm.log" -- \
        env FI_VERBS_IFACE=mgmt fi_info -p verbs -t FI_EP_MSG -v >"$WORK/fi_info" 2>&1 || rc=$?
      echo "   fi_info exit $rc; MSG domains through qp-cm:"
      msg_domains "$WORK/fi_info" | sort -u | sed 's/^/   | /'
      ((rc == 0)) || bad "fi_info exit $rc: $(tail -n 3 "$WORK/fi_info")"
      local want
      for want in "$QPC_DEV0 fi_sockaddr_in://$MGMT_IP0:0" "$QPC_DEV1 fi_sockaddr_in://$MGMT_IP1:0"; do
        msg_domains "$WORK/fi_info" | grep -qx "$want" || bad "fi_info does not list '$want'"
      done
      probes_quiet "$WORK/fi_info.qpcm.log" || bad "fi_info's log is not quiet"
      ;;
  esac
  mode_end "$t0"
}

case ${1:-} in
  probe_native | probe_lib)
    MODE=$1
    shift
    rdmacm_options "$@"
    probe_main
    ;;
  *) rdmacm_main "$@" ;;
esac
