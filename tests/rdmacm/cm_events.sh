#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Our cm_events (cm_events.c) prints every rdma_cm event with its parameters,
# host-independent; the sequence must be the same natively and through the
# library, and equal to cm_events.expected (recorded natively on rxe in the
# lab). Five scenarios, each server `cm_events -s -b SERVER_ADDR -p PORT ...`,
# client `cm_events -c -b CLIENT_ADDR -a SERVER_ADDR -p PORT ...`:
#   rc           RC (RDMA_PS_TCP): private data both ways, conn_param values,
#                one message each way, client disconnects (DISCONNECTED both)
#   ud           UD (RDMA_PS_UDP): private data both ways, Q_Key, a global AH,
#                one datagram each way
#   reject       the server rejects with private data: REJECTED status 28
#   nolisten     RC, nobody listens: REJECTED status 8
#   ud_nolisten  UD, nobody listens: UNREACHABLE status 1
# Usage and modes: rdmacm_common.sh.
set -uo pipefail
. "$(dirname "$0")/rdmacm_common.sh"
EXPECTED=$RDMACM_DIR/cm_events.expected
READY_LINE="server: listening" # cm_events says when it listens

SCENARIOS=(rc ud reject nolisten ud_nolisten)
# Natively without the kernel CM every scenario fails the same way, at
# rdma_create_event_channel: two are enough to show it.
[[ ${1:-} == native_fails ]] && SCENARIOS=(rc ud)
prog_pair() {
  local tag=$1 sa=$2 ca=$3 sc port=7200 s c
  : >"$WORK/$tag.rcs"
  for sc in "${SCENARIOS[@]}"; do
    port=$((port + 1))
    s=("$CM_EVENTS" -s -b "$sa" -p "$port" -t 15)
    c=("$CM_EVENTS" -c -b "$ca" -a "$sa" -p "$port" -t 15)
    case $sc in
      rc) s+=(-d "server says hello"); c+=(-d "client says hello") ;;
      ud) s+=(-u -d "ud server"); c+=(-u -d "ud client") ;;
      reject) s+=(-r -d "go away"); c+=(-d "let me in") ;;
      nolisten) s=(); c+=(-d "anyone there") ;;
      ud_nolisten) s=(); c+=(-u -d "anyone there") ;;
    esac
    run_pair "$tag.$sc" "$sa" "$port" 30 -- "${s[@]}" -- "${c[@]}"
    echo "$sc $S_RC $C_RC" >>"$WORK/$tag.rcs"
  done
}
prog_digest() {
  local sc f s c
  while read -r sc s c; do
    echo "[$sc]"
    for f in server client; do
      [[ -e $WORK/$1.$sc.$f ]] && grep -E '^(server|client): ' "$WORK/$1.$sc.$f"
    done
    echo "exit: server $s, client $c"
  done <"$WORK/$1.rcs"
}
# A scenario that ran into the lab's timeout (124) or its own (exit 2).
native_timed_out() { awk '$2 == 124 || $3 == 124 || $2 == 2 || $3 == 2 {f = 1} END {exit !f}' "$WORK/native.rcs"; }
prog_ok() {
  if prog_digest "$1" | diff -u "$EXPECTED" - >"$WORK/$1.expected.diff"; then
    return 0
  fi
  echo "   the events differ from cm_events.expected (-) in this run (+):"
  sed 's/^/   /' "$WORK/$1.expected.diff"
  return 1
}
prog_failed() {
  local sc s c ok=0
  while read -r sc s c; do
    if ((c == 0 || c == 124)) || ! grep -q 'rdma_create_event_channel failed' "$WORK/$1.$sc.client"; then
      echo "   $sc: client exit $c: $(head -n 3 "$WORK/$1.$sc.client" | tr '\n' ' ')"
      ok=1
    fi
  done <"$WORK/$1.rcs"
  return $ok
}
rdmacm_main "$@"
